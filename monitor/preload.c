/*
 * LD_PRELOAD entry point: with TK_MONITOR_DIR set, build/libtracekit-monitor.so starts the CPU trace
 * in any dynamically linked program (settings from TK_MONITOR_*, see include/tracekit/monitor.h)
 * and persists the living record when the program exits normally.
 *
 * One process records into a session directory: the first one claims it by creating `owner`
 * (containing its pid). A child that inherits the environment does not record unless the owner
 * has exited or it is the owner after an exec (same pid). To monitor children, give each its own
 * TK_MONITOR_DIR.
 *
 * This is the only part of the library that writes to stderr: a preloaded library has no caller to
 * return an error to, and silently not monitoring would be worse than one line.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracekit/monitor.h"

static tk_monitor *preloaded;
#if defined(__linux__)
static tk_monitor_http *preload_http;

/* TK_MONITOR_UPLOAD_URL and TK_MONITOR_UPLOAD_TOKEN_FILE: finished records go to that `tracekit
 * serve --ingest` as they finish (DIR/outbox until acknowledged; what a run leaves, the next sends). */
static int preload_upload(tk_monitor_config *cfg, char *err, size_t errlen)
{
	const char *url = getenv("TK_MONITOR_UPLOAD_URL"), *tf = getenv("TK_MONITOR_UPLOAD_TOKEN_FILE");
	if (!url || !*url)
		return 0;
	if (!tf || !*tf)
		return snprintf(err, errlen, "monitor: TK_MONITOR_UPLOAD_URL needs TK_MONITOR_UPLOAD_TOKEN_FILE"), -1;
	char token[512];
	int fd = open(tf, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd >= 0 ? read(fd, token, sizeof token - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (r <= 0)
		return snprintf(err, errlen, "monitor: TK_MONITOR_UPLOAD_TOKEN_FILE=%s: cannot read the token", tf), -1;
	token[r] = 0;
	token[strcspn(token, "\r\n")] = 0;
	if (!(preload_http = tk_monitor_http_new(url, token, err, errlen)))
		return -1;
	cfg->upload = tk_monitor_http_upload;
	cfg->upload_ctx = preload_http;
	return 0;
}
#endif

tk_monitor *tk_monitor_preloaded(void)
{
	return preloaded;
}

/* Returns 1 when this process may record into dir. */
static int claim(const char *dir)
{
	char path[4096], buf[32];
	if (snprintf(path, sizeof path, "%s/owner", dir) >= (int)sizeof path)
		return 0;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return 1; /* let tk_monitor_start report the problem */
	for (int attempt = 0; attempt < 2; attempt++) {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0) {
			int n = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
			ssize_t w = write(fd, buf, (size_t)n);
			close(fd);
			return w == n;
		}
		if (errno != EEXIST)
			return 1;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 0;
		ssize_t r = read(fd, buf, sizeof buf - 1);
		close(fd);
		buf[r > 0 ? r : 0] = 0;
		long pid = strtol(buf, NULL, 10);
		if (pid == (long)getpid())
			return 1; /* we exec'd: same process, new image */
		if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
			return 0; /* the owner lives */
		unlink(path);     /* stale owner: take over */
	}
	return 0;
}

__attribute__((constructor)) static void tk_monitor_preload_start(void)
{
	const char *dir = getenv("TK_MONITOR_DIR");
	if (!dir || !*dir)
		return;
	if (!claim(dir))
		return;
	tk_monitor_config cfg;
	char err[512];
	tk_monitor_config_default(&cfg);
	int rc = tk_monitor_config_from_env(&cfg, err, sizeof err);
#if defined(__linux__)
	if (rc == 0)
		rc = preload_upload(&cfg, err, sizeof err);
#endif
	if (rc == 0)
		preloaded = tk_monitor_start(&cfg, err, sizeof err);
	if (!preloaded)
		fprintf(stderr, "tracekit-monitor: not monitoring: %s\n", err);
}

__attribute__((destructor)) static void tk_monitor_preload_stop(void)
{
	tk_monitor *m = preloaded;
	preloaded = NULL;
	tk_monitor_stop(m);
#if defined(__linux__)
	tk_monitor_http_free(preload_http);
	preload_http = NULL;
#endif
}
