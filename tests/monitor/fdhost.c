/*
 * fdhost — a program that takes over file descriptor numbers, as daemons and sandboxes do, to check
 * that a preloaded monitor never reads, seeks, writes or closes descriptors that are not its own.
 *
 *   fdhost DIR close|dup2 SECONDS
 *
 * Two threads spin for SECONDS (so the monitor samples them and writes records). After 1 s the main
 * thread either closes every descriptor above 2 and opens 8 files of its own in DIR (close), or
 * dup2()s one file of its own over every descriptor number that is open above 2 (dup2). At the end
 * it checks that its files hold exactly what it wrote, that their offsets did not move and that its
 * descriptors are still open on them; exits 1 naming the first difference.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NFILES 8
static double deadline;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	while (now() < t) {
		double d = t - now();
		struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
		nanosleep(&ts, NULL); /* EINTR: go round */
	}
}

__attribute__((noinline)) static void *spin(void *arg)
{
	(void)arg;
	volatile double x = 1;
	while (now() < deadline)
		for (int i = 0; i < 100000; i++)
			x = x * 1.0000001 + 0.5;
	return NULL;
}

typedef struct file {
	int fd;
	char text[64];
	size_t len;
	struct stat st;
} file;

static int open_file(const char *dir, int i, file *f)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/f%d", dir, i);
	f->fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (f->fd < 0)
		return -1;
	f->len = (size_t)snprintf(f->text, sizeof f->text, "fdhost file %d on descriptor %d\n", i, f->fd);
	if (write(f->fd, f->text, f->len) != (ssize_t)f->len || fstat(f->fd, &f->st) != 0)
		return -1;
	return 0;
}

/* Is fd still open on f's file, with f's offset and contents? Returns NULL or what differs. */
static const char *intact(int fd, const file *f)
{
	struct stat st;
	char buf[4096];
	if (fstat(fd, &st) != 0)
		return "closed";
	if (st.st_dev != f->st.st_dev || st.st_ino != f->st.st_ino)
		return "now another file";
	if (lseek(fd, 0, SEEK_CUR) != (off_t)f->len)
		return "offset moved";
	ssize_t r = pread(fd, buf, sizeof buf, 0);
	if (r != (ssize_t)f->len || memcmp(buf, f->text, f->len) != 0)
		return "contents changed";
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[2], "close") && strcmp(argv[2], "dup2"))) {
		fprintf(stderr, "usage: fdhost DIR close|dup2 SECONDS\n");
		return 2;
	}
	const char *dir = argv[1];
	int dup_mode = strcmp(argv[2], "dup2") == 0;
	double start = now();
	deadline = start + atof(argv[3]);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, spin, NULL);
	sleep_until(start + 1.0);

	file files[NFILES];
	int nfiles = 0, taken[4096], ntaken = 0;
	if (!dup_mode) {
		if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0) {
			struct rlimit rl;
			getrlimit(RLIMIT_NOFILE, &rl);
			for (int fd = 3; fd < (int)rl.rlim_cur; fd++)
				close(fd);
		}
		for (; nfiles < NFILES; nfiles++)
			if (open_file(dir, nfiles, &files[nfiles]) != 0)
				return perror("fdhost: open"), 1;
	} else {
		DIR *d = opendir("/proc/self/fd");
		struct dirent *e;
		while (d && (e = readdir(d)) && ntaken < 4096) {
			int fd = atoi(e->d_name);
			if (fd > 2 && fd != dirfd(d))
				taken[ntaken++] = fd;
		}
		if (d)
			closedir(d);
		if (open_file(dir, 0, &files[0]) != 0)
			return perror("fdhost: open"), 1;
		nfiles = 1;
		for (int i = 0; i < ntaken; i++)
			if (taken[i] != files[0].fd && dup2(files[0].fd, taken[i]) < 0)
				return perror("fdhost: dup2"), 1;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	sleep_until(deadline + 0.5); /* the monitor keeps running: leave it time to use its descriptors */

	int bad = 0;
	for (int i = 0; i < nfiles; i++) {
		const char *why = intact(files[i].fd, &files[i]);
		if (why) {
			fprintf(stderr, "fdhost: descriptor %d (f%d): %s\n", files[i].fd, i, why);
			bad = 1;
		}
	}
	for (int i = 0; i < ntaken; i++) {
		const char *why = intact(taken[i], &files[0]);
		if (why) {
			fprintf(stderr, "fdhost: descriptor %d (dup of f0): %s\n", taken[i], why);
			bad = 1;
		}
	}
	printf("fdhost: %s, %d descriptors checked\n", bad ? "TOUCHED" : "untouched", nfiles + ntaken);
	return bad;
}
