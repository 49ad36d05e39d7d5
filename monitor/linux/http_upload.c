/*
 * tk_monitor_http_upload: the Linux builds' ready-made uploader callback. Plain HTTP/1.1 POST over a
 * socket to `tracekit serve --ingest` — enough for a server on the same machine or behind a TLS
 * proxy; TLS itself belongs to the app's own callback (iOS: URLSession).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "tracekit/monitor.h"

#include "../internal.h"

struct tk_monitor_http {
	char host[256], port[8], path[1024];
	char *token;
	unsigned timeout_ms; /* the whole upload: connect, send, answer */
	int last_status;
	char last_reason[600];
};

tk_monitor_http *tk_monitor_http_new(const char *url, const char *token, char *err, size_t errlen)
{
	char dummy[8];
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof dummy;
	}
	if (!url || strncmp(url, "http://", 7) != 0) {
		snprintf(
		    err, errlen,
		    "monitor: upload URL %s: expected http://HOST:PORT/PATH (TLS belongs to your own upload callback)",
		    url ? url : "(null)");
		return NULL;
	}
	const char *h = url + 7, *slash = strchr(h, '/'), *end = slash ? slash : h + strlen(h);
	const char *colon = memchr(h, ':', (size_t)(end - h));
	tk_monitor_http *u = calloc(1, sizeof *u);
	if (!u)
		return snprintf(err, errlen, "monitor: out of memory"), NULL;
	size_t hl = (size_t)((colon ? colon : end) - h), pl = colon ? (size_t)(end - colon - 1) : 0;
	if (!hl || hl >= sizeof u->host || (colon && (!pl || pl >= sizeof u->port)) ||
	    (slash && strlen(slash) >= sizeof u->path)) {
		free(u);
		snprintf(err, errlen, "monitor: upload URL %s: expected http://HOST:PORT/PATH", url);
		return NULL;
	}
	memcpy(u->host, h, hl);
	if (colon)
		memcpy(u->port, colon + 1, pl);
	else
		strcpy(u->port, "80");
	for (const char *c = u->port; *c; c++)
		if (*c < '0' || *c > '9') {
			free(u);
			snprintf(err, errlen, "monitor: upload URL %s: the port is not a number", url);
			return NULL;
		}
	snprintf(u->path, sizeof u->path, "%s", slash ? slash : "/");
	/* a header line must not be split by the token */
	if (token && (strchr(token, '\r') || strchr(token, '\n'))) {
		free(u);
		snprintf(err, errlen, "monitor: the upload token holds a line break");
		return NULL;
	}
	if (!(u->token = strdup(token ? token : ""))) {
		free(u);
		return snprintf(err, errlen, "monitor: out of memory"), NULL;
	}
	const char *t = getenv("TK_MONITOR_UPLOAD_TIMEOUT_MS");
	char *tend = NULL;
	unsigned long ms = t && *t ? strtoul(t, &tend, 10) : 0;
	u->timeout_ms = tend && !*tend && ms > 0 && ms <= 3600000 ? (unsigned)ms : 30000;
	return u;
}

void tk_monitor_http_set_timeout(tk_monitor_http *u, unsigned ms)
{
	u->timeout_ms = ms ? ms : 30000;
}

void tk_monitor_http_free(tk_monitor_http *u)
{
	if (!u)
		return;
	free(u->token);
	free(u);
}

int tk_monitor_http_last(const tk_monitor_http *u, char *reason, size_t n)
{
	if (reason && n)
		snprintf(reason, n, "%s", u->last_reason);
	return u->last_status;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait for events on fd until the upload's deadline. Returns 1 ready, 0 deadline passed, -1 error. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	for (;;) {
		uint64_t now = now_ms();
		if (now >= deadline)
			return 0;
		struct pollfd p = {.fd = fd, .events = events};
		int pr = poll(&p, 1, (int)(deadline - now < 1000000 ? deadline - now : 1000000));
		if (pr < 0 && errno == EINTR)
			continue; /* the sampling signal */
		if (pr != 0)
			return pr > 0 ? 1 : -1;
	}
}

static int connect_to(tk_monitor_http *u, uint64_t deadline)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int g = getaddrinfo(u->host, u->port, &hints, &res);
	if (g != 0) {
		snprintf(u->last_reason, sizeof u->last_reason, "%s: %s", u->host, gai_strerror(g));
		return -1;
	}
	int fd = -1;
	for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		int s = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
		if (s < 0)
			continue;
		/* moved above half the descriptor limit, like every descriptor of the monitor (fd.c) */
		tkm_fd f;
		if (tkm_fd_adopt(&f, s) != 0)
			continue;
		s = f.fd;
		int rc = connect(s, a->ai_addr, a->ai_addrlen);
		if (rc != 0 && errno == EINPROGRESS) {
			uint64_t cd = now_ms() + 5000;
			int pr = wait_fd(s, POLLOUT, cd < deadline ? cd : deadline);
			int soerr = 0;
			socklen_t sl = sizeof soerr;
			if (pr == 1 && getsockopt(s, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0)
				rc = 0;
			else
				errno = pr == 0 ? ETIMEDOUT : soerr ? soerr : errno;
		}
		if (rc != 0) {
			snprintf(u->last_reason, sizeof u->last_reason, "%s:%s: %s", u->host, u->port, strerror(errno));
			close(s);
			continue;
		}
		fd = s; /* stays non-blocking: every wait is a poll bounded by the upload's deadline */
	}
	freeaddrinfo(res);
	return fd;
}

static int send_all(int fd, const char *p, size_t n, uint64_t deadline)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL); /* a closed peer must not raise SIGPIPE in the app */
		if (w < 0 && errno == EINTR)
			continue; /* the sampling signal */
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int r = wait_fd(fd, POLLOUT, deadline);
			if (r <= 0) {
				if (r == 0)
					errno = ETIMEDOUT;
				return -1;
			}
			continue;
		}
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

tk_monitor_upload_result tk_monitor_http_upload(const char *path, const void *body, size_t n, void *ctx)
{
	tk_monitor_http *u = ctx;
	u->last_status = 0;
	u->last_reason[0] = 0;
	/* one deadline for the whole upload: a server trickling its answer a byte at a time must not
	 * hold the uploader (and the app's exit, which waits for it) for longer */
	uint64_t deadline = now_ms() + u->timeout_ms;
	int fd = connect_to(u, deadline);
	if (fd < 0)
		return TK_MONITOR_UPLOAD_RETRY;
	char *head = NULL;
	size_t hn = strlen(u->host) + strlen(u->path) + strlen(u->token) + 256;
	int ok = (head = malloc(hn)) != NULL;
	if (ok) {
		int k = snprintf(head, hn,
		                 "POST %s HTTP/1.1\r\nHost: %s:%s\r\nAuthorization: Bearer %s\r\n"
		                 "Content-Type: application/x-tracekit-bundle\r\nContent-Length: %zu\r\n"
		                 "Connection: close\r\n\r\n",
		                 u->path, u->host, u->port, u->token, n);
		ok = k > 0 && (size_t)k < hn && send_all(fd, head, (size_t)k, deadline) == 0 &&
		     send_all(fd, body, n, deadline) == 0;
	}
	free(head);
	/* the status line and as much of the answer as fits: the reason is the body's first line (read
	 * even when sending failed: a server refusing from the headers, 401 or 413, may close early) */
	int send_errno = ok ? 0 : errno;
	char resp[1024];
	size_t got = 0;
	int timed_out = 0;
	while (got < sizeof resp - 1) {
		ssize_t r = recv(fd, resp + got, sizeof resp - 1 - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int w = wait_fd(fd, POLLIN, deadline);
			if (w > 0)
				continue;
			timed_out = w == 0;
			break;
		}
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	resp[got] = 0;
	int status = 0;
	if (timed_out && !strstr(resp, "\r\n\r\n")) {
		snprintf(u->last_reason, sizeof u->last_reason, "%s:%s: no complete answer within %u ms", u->host,
		         u->port, u->timeout_ms);
		return TK_MONITOR_UPLOAD_RETRY;
	}
	if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1) {
		if (!u->last_reason[0])
			snprintf(u->last_reason, sizeof u->last_reason, "%s:%s: %s", u->host, u->port,
			         send_errno ? strerror(send_errno) : "no HTTP answer");
		return TK_MONITOR_UPLOAD_RETRY;
	}
	u->last_status = status;
	const char *b = strstr(resp, "\r\n\r\n");
	snprintf(u->last_reason, sizeof u->last_reason, "%.*s", b ? (int)strcspn(b + 4, "\r\n") : 0, b ? b + 4 : "");
	if (status >= 200 && status < 300)
		return TK_MONITOR_UPLOAD_ACKED;
	if (status >= 400 && status < 500 && status != 408 && status != 429)
		return TK_MONITOR_UPLOAD_REJECTED;
	return TK_MONITOR_UPLOAD_RETRY;
}
