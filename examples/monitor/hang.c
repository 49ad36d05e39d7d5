/*
 * hang — an event loop (poll on an eventfd, a task queue) that once blocks in a known function,
 * tk_demo_blocking_work(), for BLOCK_MS, watched by the hang detector.
 *
 *   hang DIR [heartbeat|ping] [THRESHOLD_MS=2000] [BLOCK_MS=3000]
 *
 * heartbeat: the loop calls tk_monitor_heartbeat() at each iteration and tk_monitor_idle() before
 * it waits; ping: the monitor posts pings through hang_post, which queues them as loop tasks.
 * Writes the session to DIR and prints one line per final hang event.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "tracekit/monitor.h"

typedef struct task {
	void (*fn)(void *);
	void *arg;
	struct task *next;
} task;

static struct {
	pthread_mutex_t lock;
	task *head, **tail;
	int efd;
} loop = {.lock = PTHREAD_MUTEX_INITIALIZER, .tail = &loop.head};

/* hang_post: may be called from any thread; queues fn and wakes the loop. */
static void post(void (*fn)(void *), void *arg, void *ctx)
{
	(void)ctx;
	task *t = malloc(sizeof *t);
	if (!t)
		return;
	*t = (task){fn, arg, NULL};
	pthread_mutex_lock(&loop.lock);
	*loop.tail = t;
	loop.tail = &t->next;
	pthread_mutex_unlock(&loop.lock);
	uint64_t one = 1;
	if (write(loop.efd, &one, sizeof one) < 0) {
		/* the counter cannot overflow here; nothing else to do */
	}
}

static void run_tasks(void)
{
	pthread_mutex_lock(&loop.lock);
	task *t = loop.head;
	loop.head = NULL;
	loop.tail = &loop.head;
	pthread_mutex_unlock(&loop.lock);
	while (t) {
		task *next = t->next;
		t->fn(t->arg);
		free(t);
		t = next;
	}
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The function the hang report must point at: blocks the loop for ms milliseconds, robustly
 * (an absolute-deadline sleep that resumes after EINTR, as careful code does). */
__attribute__((noinline)) void tk_demo_blocking_work(long ms)
{
	struct timespec dl;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &dl, NULL) == EINTR)
		;
}

static void on_event(const tk_monitor_event *ev, void *ctx)
{
	(void)ctx;
	if (ev->kind == TK_MONITOR_HANG && !ev->live)
		printf("hang: tid %lld blocked %.0f ms, %u samples\n", (long long)ev->tid, ev->duration_s * 1000,
		       ev->samples);
	fflush(stdout);
}

static long block_ms;
static int blocked_once;

static double block_measured;

static void block_task(void *arg)
{
	(void)arg;
	double t = mono();
	tk_demo_blocking_work(block_ms);
	block_measured = mono() - t;
	blocked_once = 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: hang DIR [heartbeat|ping] [THRESHOLD_MS] [BLOCK_MS]\n");
		return 2;
	}
	int ping = argc > 2 && strcmp(argv[2], "ping") == 0;
	if (argc > 2 && !ping && strcmp(argv[2], "heartbeat") != 0) {
		fprintf(stderr, "hang: mode must be heartbeat or ping, not %s\n", argv[2]);
		return 2;
	}
	long threshold = argc > 3 ? atol(argv[3]) : 2000;
	block_ms = argc > 4 ? atol(argv[4]) : 3000;
	if (threshold <= 0 || block_ms <= 0) {
		fprintf(stderr, "hang: THRESHOLD_MS and BLOCK_MS must be positive\n");
		return 2;
	}
	loop.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (loop.efd < 0) {
		perror("hang: eventfd");
		return 1;
	}

	tk_monitor_config cfg;
	tk_monitor_config_default(&cfg);
	cfg.dir = argv[1];
	cfg.callback = on_event;
	cfg.cpu_enabled = 0;
	cfg.hang_enabled = 1;
	cfg.hang_threshold_ms = (uint32_t)threshold;
	if (ping)
		cfg.hang_post = post;
	char err[512];
	tk_monitor *m = tk_monitor_start(&cfg, err, sizeof err);
	if (!m) {
		fprintf(stderr, "hang: %s\n", err);
		return 1;
	}
	tk_monitor_watch_this_thread(m);

	double t0 = mono(), blocked_at = 0;
	while (!blocked_once || mono() < blocked_at + 1.0) {
		if (!ping)
			tk_monitor_idle(m);
		struct pollfd p = {.fd = loop.efd, .events = POLLIN};
		int r = poll(&p, 1, 20);
		if (!ping)
			tk_monitor_heartbeat(m);
		if (r > 0) {
			uint64_t v;
			if (read(loop.efd, &v, sizeof v) < 0 && errno != EAGAIN)
				break;
		}
		if (!blocked_at && mono() > t0 + 0.5) {
			blocked_at = mono() + (double)block_ms / 1000.0;
			post(block_task, NULL, NULL);
		}
		run_tasks();
	}
	tk_monitor_stop(m);
	close(loop.efd);
	printf("measured block: %.0f ms\n", block_measured * 1000);
	return 0;
}
