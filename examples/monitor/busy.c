/*
 * busy — keeps two threads busy in one known function, tk_demo_busy_spin(), for N seconds.
 *
 * It uses no monitor API: run it under the preloaded library, e.g.
 *   TK_MONITOR_DIR=/tmp/s TK_MONITOR_CPU_INTERVAL_MS=100 TK_MONITOR_CPU_HIGH_INTERVAL_MS=100 \
 *   TK_MONITOR_CPU_DURATION_MS=2000 LD_PRELOAD=build/libtracekit-monitor.so build/examples/monitor/busy 4
 * and the session's CPU record is dominated by tk_demo_busy_spin.
 *
 *   busy [SECONDS] [masked]
 *
 * masked: the workers block every signal, as liblzma's do; a signal-based sampler cannot take their
 * stacks (the record says so in "unsampled").
 *
 * SIGUSR1 ends the run early and normally (exit status 0, the monitor writes its final records), so a
 * test can run it "until the record it waits for is on disk" instead of for a guessed time.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

static double seconds;
static int masked;
static volatile sig_atomic_t stop_early;

static void on_usr1(int sig)
{
	(void)sig;
	stop_early = 1;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The function the CPU record must point at. noinline keeps it a frame of its own. */
__attribute__((noinline)) double tk_demo_busy_spin(double until)
{
	volatile double x = 1.0;
	while (now() < until && !stop_early)
		for (int i = 0; i < 100000; i++)
			x = x * 1.0000001 + 0.5;
	return x;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	tk_demo_busy_spin(now() + seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	seconds = argc > 1 ? atof(argv[1]) : 5.0;
	masked = argc > 2 && strcmp(argv[2], "masked") == 0;
	if (!(seconds > 0) || (argc > 2 && !masked)) {
		fprintf(stderr, "usage: busy [seconds > 0] [masked]\n");
		return 2;
	}
	struct sigaction sa = {.sa_handler = on_usr1};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	/* Masked workers are born with every signal blocked (a thread inherits its creator's mask):
	 * blocking them from inside the worker left a moment, long on a loaded machine, in which a
	 * sampler's signal could still land. */
	sigset_t all, old;
	sigfillset(&all);
	if (masked)
		pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
			fprintf(stderr, "busy: pthread_create failed\n");
			return 1;
		}
	if (masked)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("busy: %.1f s on 2 threads\n", seconds);
	return 0;
}
