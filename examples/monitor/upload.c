/*
 * upload — a program that hangs HANGS times and sends each finished hang record to
 * `tracekit serve --ingest` through the monitor's uploader (tk_monitor_http_upload), keeping it in
 * DIR/outbox until the server acknowledged it.
 *
 *   upload DIR URL TOKEN_FILE [HANGS=3] [HANG_MS=400] [WAIT_S=30] [RETRY_MS=2000] [MAX_QUEUED=0]
 *
 * The event loop (heartbeat mode, threshold 100 ms) blocks HANG_MS in tk_demo_work_a and
 * tk_demo_work_b by turns (different stacks: no back-off between them), then keeps running until
 * every hang is final and the outbox is empty, or WAIT_S seconds have passed. Each upload attempt
 * prints "upload T_MS NAME STATUS acked|retry|rejected REASON". Exit 0 when nothing is left in the
 * outbox, 3 when some bundles are still waiting (they stay for the next run).
 */
#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracekit/monitor.h"

static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

__attribute__((noinline)) void tk_demo_work_a(long ms)
{
	sleep_ms(ms);
}

__attribute__((noinline)) void tk_demo_work_b(long ms)
{
	sleep_ms(ms);
}

static _Atomic int finals;
static double t0;

static void on_event(const tk_monitor_event *ev, void *ctx)
{
	(void)ctx;
	if (ev->kind == TK_MONITOR_HANG && !ev->live)
		atomic_fetch_add(&finals, 1);
}

/* The host's own wrapper around the ready-made uploader: it logs each attempt. An iOS app's
 * callback would POST body with URLSession here and map the status the same way. */
static tk_monitor_upload_result upload(const char *path, const void *body, size_t n, void *ctx)
{
	tk_monitor_upload_result r = tk_monitor_http_upload(path, body, n, ctx);
	char reason[300];
	int status = tk_monitor_http_last(ctx, reason, sizeof reason);
	const char *base = strrchr(path, '/');
	printf("upload %.0f %s %d %s %s\n", mono_ms() - t0, base ? base + 1 : path, status,
	       r == TK_MONITOR_UPLOAD_ACKED   ? "acked"
	       : r == TK_MONITOR_UPLOAD_RETRY ? "retry"
	                                      : "rejected",
	       reason);
	fflush(stdout);
	return r;
}

static int pending(const char *dir)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/outbox", dir);
	DIR *d = opendir(p);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		n += e->d_name[0] != '.' && l > 7 && strcmp(e->d_name + l - 7, ".bundle") == 0;
	}
	if (d)
		closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr,
		        "usage: upload DIR URL TOKEN_FILE [HANGS] [HANG_MS] [WAIT_S] [RETRY_MS] [MAX_QUEUED]\n");
		return 2;
	}
	int hangs = argc > 4 ? atoi(argv[4]) : 3;
	long hang_ms = argc > 5 ? atol(argv[5]) : 400, wait_s = argc > 6 ? atol(argv[6]) : 30;
	char token[256] = "";
	FILE *f = fopen(argv[3], "r");
	if (!f || !fgets(token, sizeof token, f)) {
		fprintf(stderr, "upload: %s: cannot read the token\n", argv[3]);
		return 2;
	}
	fclose(f);
	token[strcspn(token, "\r\n")] = 0;
	char err[512];
	tk_monitor_http *h = tk_monitor_http_new(argv[2], token, err, sizeof err);
	if (!h) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	tk_monitor_config cfg;
	tk_monitor_config_default(&cfg);
	cfg.dir = argv[1];
	cfg.cpu_enabled = 0;
	cfg.hang_enabled = 1;
	cfg.hang_threshold_ms = 100;
	cfg.callback = on_event;
	cfg.upload = upload;
	cfg.upload_ctx = h;
	cfg.upload_retry_ms = argc > 7 ? (uint32_t)atol(argv[7]) : 2000;
	cfg.upload_retry_max_ms = cfg.upload_retry_ms * 8;
	cfg.upload_max_queued_bytes = argc > 8 ? strtoull(argv[8], NULL, 10) : 0;
	t0 = mono_ms();
	tk_monitor *m = tk_monitor_start(&cfg, err, sizeof err);
	if (!m) {
		fprintf(stderr, "%s\n", err);
		tk_monitor_http_free(h);
		return 2;
	}
	for (int i = 0; i < hangs; i++) {
		tk_monitor_heartbeat(m);
		tk_monitor_idle(m);
		sleep_ms(200);
		tk_monitor_heartbeat(m);
		(i % 2 ? tk_demo_work_b : tk_demo_work_a)(hang_ms);
		tk_monitor_heartbeat(m);
	}
	double deadline = mono_ms() + (double)wait_s * 1e3;
	while ((atomic_load(&finals) < hangs || pending(argv[1]) > 0) && mono_ms() < deadline) {
		tk_monitor_heartbeat(m);
		tk_monitor_idle(m);
		sleep_ms(50);
	}
	tk_monitor_stop(m);
	tk_monitor_http_free(h);
	int left = pending(argv[1]);
	printf("hangs %d, pending %d\n", atomic_load(&finals), left);
	return left ? 3 : 0;
}
