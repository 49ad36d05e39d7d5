/*
 * sighost — a program whose signal handling a preloaded monitor must not disturb.
 *
 *   sighost sigwait   blocks SIGUSR1 and SIGTERM in main (after the monitor's constructor ran),
 *                     sends itself SIGUSR1 and SIGTERM (process-directed) and takes them with
 *                     sigwait, as daemons with a signal-handling thread do. A monitor thread that
 *                     left them unblocked would get them instead (the default action kills the
 *                     process).
 *   sighost masked S  two threads block every signal and spin for S seconds (and, under a monitor,
 *                     until its session holds a CPU record: a loaded machine may take longer), then look for
 *                     pending signals: one sent to a thread that blocks it stays queued and is
 *                     taken by the program's next sigwait/signalfd as if it were its own.
 *   sighost fork S    spins S seconds (the monitor opens its descriptors), then forks: the child
 *                     must not hold the monitor's descriptors (the Records file, the parent's
 *                     /proc task directory and per-thread files), as prefork servers' workers would
 *                     for hours.
 * Exits 0 when the program saw only its own signals (or descriptors).
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static _Atomic int foreign;

/* Under a monitor (TK_MONITOR_DIR set): whether its session already holds a CPU high-load record. */
static int record_written(void)
{
	const char *dir = getenv("TK_MONITOR_DIR");
	if (!dir || !*dir)
		return 1;
	char path[4096], line[256];
	snprintf(path, sizeof path, "%s/records", dir);
	FILE *f = fopen(path, "r");
	int found = 0;
	while (f && !found && fgets(line, sizeof line, f))
		found = strncmp(line, "cpu-highload,", 13) == 0;
	if (f)
		fclose(f);
	return found;
}

/* Whether one of this process's threads is named tk-monitor-* (the preloaded monitor is up). */
static int monitor_threads_up(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int up = 0;
	while (d && !up && (e = readdir(d))) {
		char path[300], name[64] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (f) {
			up = fgets(name, sizeof name, f) && strncmp(name, "tk-monitor", 10) == 0;
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return up;
}

__attribute__((noinline)) static void *masked_spin(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	volatile double x = 1;
	double until = now() + seconds, next_look = 0;
	int recorded = 0;
	while (now() < until || !recorded) {
		for (int i = 0; i < 100000; i++)
			x = x * 1.0000001 + 0.5;
		if (!recorded && now() >= next_look) {
			recorded = record_written();
			next_look = now() + 0.1;
		}
	}
	sigset_t pending;
	sigpending(&pending); /* this thread's and the process's */
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&pending, s)) {
			fprintf(stderr, "sighost: signal %d (%s) is pending for a thread that blocks everything\n", s,
			        strsignal(s));
			foreign = 1;
		}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "sigwait") == 0) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigaddset(&set, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		/* until the monitor's threads are up (named tk-monitor-*), as long as that takes; without a
		 * monitor (no TK_MONITOR_DIR) at once */
		const char *dir = getenv("TK_MONITOR_DIR");
		while (dir && *dir && !monitor_threads_up())
			usleep(10000);
		for (int round = 0; round < 20; round++) {
			int want = round % 2 ? SIGTERM : SIGUSR1, got = 0;
			kill(getpid(), want);
			if (sigwait(&set, &got) != 0 || got != want) {
				fprintf(stderr, "sighost: sigwait gave %d, expected %d\n", got, want);
				return 1;
			}
		}
		printf("sighost: 20 process-directed signals taken by sigwait\n");
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "masked") == 0) {
		seconds = atof(argv[2]);
		pthread_t t[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, masked_spin, NULL);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		printf("sighost: %s\n", foreign ? "FOREIGN signals pending" : "no foreign signal");
		return foreign;
	}
	if (argc >= 3 && strcmp(argv[1], "fork") == 0) {
		seconds = atof(argv[2]);
		volatile double x = 1;
		double until = now() + seconds;
		while (now() < until)
			for (int i = 0; i < 100000; i++)
				x = x * 1.0000001 + 0.5;
		pid_t pid = fork();
		if (pid == 0) {
			int bad = 0;
			DIR *d = opendir("/proc/self/fd");
			struct dirent *e;
			char path[64], target[4096];
			while (d && (e = readdir(d))) {
				int fd = atoi(e->d_name);
				if (fd <= 2 || fd == dirfd(d))
					continue;
				snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
				ssize_t n = readlink(path, target, sizeof target - 1);
				target[n > 0 ? n : 0] = 0;
				/* only the monitor's: descriptors inherited from whoever started us are not */
				char parent_proc[64];
				snprintf(parent_proc, sizeof parent_proc, "/proc/%d/", (int)getppid());
				const char *session = getenv("TK_MONITOR_DIR");
				if (strncmp(target, parent_proc, strlen(parent_proc)) == 0 ||
				    (session && *session && strstr(target, session)) || strstr(target, "perf_event")) {
					fprintf(stderr, "sighost: the child holds descriptor %d: %s\n", fd, target);
					bad = 1;
				}
			}
			if (d)
				closedir(d);
			_exit(bad);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		printf("sighost: the child %s\n",
		       WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "holds no descriptor of ours" : "HOLDS descriptors");
		return !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	fprintf(stderr, "usage: sighost sigwait | masked SECONDS | fork SECONDS\n");
	return 2;
}
