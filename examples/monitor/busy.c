/*
 * busy — keeps two threads busy in one known function, tk_demo_busy_spin(), for N seconds.
 *
 * It uses no monitor API: run it under the preloaded library, e.g.
 *   TK_MONITOR_DIR=/tmp/s TK_MONITOR_CPU_INTERVAL_MS=100 TK_MONITOR_CPU_HIGH_INTERVAL_MS=100 \
 *   TK_MONITOR_CPU_DURATION_MS=2000 LD_PRELOAD=build/libtracekit-monitor.so build/examples/monitor/busy 4
 * and the session's CPU record is dominated by tk_demo_busy_spin.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds;

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
	while (now() < until)
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
	if (!(seconds > 0)) {
		fprintf(stderr, "usage: busy [seconds > 0]\n");
		return 2;
	}
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
			fprintf(stderr, "busy: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("busy: %.1f s on 2 threads\n", seconds);
	return 0;
}
