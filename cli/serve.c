/* tracekit serve --ingest — an HTTP endpoint (libmicrohttpd) that devices POST report bundles to;
 * --ui — the read-only fleet dashboard (tracekit/dashboard.h) on the same port. */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "tracekit/alert.h"
#include "tracekit/dashboard.h"
#include "tracekit/store.h"
#include "tracekit/symbol.h"
#include "util/mem.h"

TK_COMMAND(serve, "receive uploaded field reports over HTTP into a fleet store (serve --ingest), the dashboard (--ui)")

enum {
	OPT_INGEST = 1,
	OPT_UI,
	OPT_DB,
	OPT_LISTEN,
	OPT_TOKEN_FILE,
	OPT_SYMBOLS,
	OPT_RULES,
	OPT_READ_TOKEN_FILE,
	OPT_MAX_BODY,
	OPT_MAX_STACKS,
	OPT_MAX_SECONDS,
	OPT_WORKERS,
	OPT_HEADER_TIMEOUT,
	OPT_MAX_PER_ADDRESS,
	OPT_VERBOSE,
	OPT_STRAY,
};

static const tk_cli_option options[] = {
    TK_OPT_SECTION("options"),
    TK_OPT_FLAG(OPT_INGEST, "--ingest", NULL, "accept uploads (POST /v1/reports); needs --token-file"),
    TK_OPT_VALUE(OPT_DB, "--db", NULL, "URL",
                 "sqlite:PATH (default sqlite:tracekit.db, or $TRACEKIT_DB) or clickhouse://HOST:PORT/DB"),
    TK_OPT_VALUE(OPT_LISTEN, "--listen", NULL, "ADDR:PORT",
                 "address to bind (default 127.0.0.1:8470; port 0 picks a free one)"),
    TK_OPT_VALUE(OPT_TOKEN_FILE, "--token-file", NULL, "FILE",
                 "the bearer token of uploads (first line of FILE); required with --ingest"),
    TK_OPT_LIST(OPT_SYMBOLS, "--symbols", NULL, "PATH",
                "dSYMs (repeat) naming uploaded Apple reports' frames, as `tracekit ingest --symbols` does, so "
                "their signatures carry function names"),
    TK_OPT_FLAG(OPT_UI, "--ui", NULL, "serve the dashboard (read-only) too, or alone"),
    TK_OPT_VALUE(OPT_RULES, "--rules", NULL, "FILE", "alert rules (docs/alerts.md) the dashboard shows with their breaches"),
    TK_OPT_VALUE(OPT_READ_TOKEN_FILE, "--read-token-file", NULL, "FILE",
                 "the dashboard's read token (first line of FILE); required with --ui unless it listens on "
                 "127.0.0.1"),
    TK_OPT_VALUE(OPT_MAX_BODY, "--max-body", NULL, "BYTES",
                 "largest compressed body (default 16 MiB); bundles inflate to at most 8× that, capped at 256 MiB, "
                 "and an uploaded profile's own gzip to the same"),
    TK_OPT_VALUE(OPT_MAX_STACKS, "--max-stacks", NULL, "N",
                 "distinct stacks an uploaded profile may have (default 200000; ~1.5 KB each)"),
    TK_OPT_VALUE(OPT_MAX_SECONDS, "--max-seconds", NULL, "N",
                 "time to read an uploaded profile (default 60; Records are bounded by size)"),
    TK_OPT_VALUE(OPT_WORKERS, "--workers", NULL, "N", "uploads decoded at once (default: the CPUs, 2 to 8)"),
    TK_OPT_VALUE(OPT_HEADER_TIMEOUT, "--header-timeout", NULL, "N",
                 "seconds a client has to send a request's headers (default 10)"),
    TK_OPT_VALUE(OPT_MAX_PER_ADDRESS, "--max-per-address", NULL, "N",
                 "connections from one IP address (default 16; 0: no limit)"),
    TK_OPT_FLAG(OPT_VERBOSE, "--verbose", "-v", "log each upload (address, size, outcome) on stderr"),
    TK_OPT_OPERAND(OPT_STRAY, "ARG", NULL), /* none taken: refused as an unknown option, as before */
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_serve = {
    .name = "serve",
    .usage = "tracekit serve --ingest --token-file FILE [--db URL] [--listen 127.0.0.1:PORT]\n"
             "tracekit serve --ui [--ingest --token-file FILE] [--db URL] [--listen ADDR:PORT] [--read-token-file "
             "FILE]",
    .about = "--ui serves the fleet dashboard (docs/dashboard.md): read-only pages over the store (overview by\n"
             "version, top stacks with their flame graphs, compare two versions) and a JSON API under /api/,\n"
             "at http://ADDR:PORT/. It needs --read-token-file when it listens on anything but 127.0.0.1: the\n"
             "browser then opens http://ADDR:PORT/?token=TOKEN once (a cookie keeps it), API clients send\n"
             "`Authorization: Bearer TOKEN`. The read token must differ from the ingest token.\n"
             "\n"
             "Accepts POST /v1/reports with a gzip'd bundle (docs/store.md: a session's records, meta.json\n"
             "and images.json, as `tracekit monitor --upload` and `tracekit upload` send them; a gzip'd bare\n"
             "Records file is accepted too; or one profile, an xctrace export or any input `tracekit ingest`\n"
             "stores as a profile report, as `tracekit upload FILE` sends it) and an `Authorization: Bearer\n"
             "TOKEN` header. A bundle is stored in one batch and answered 200 {\"stored\":N,\"duplicates\":M}\n"
             "(a profile: {\"profiles\":N,\"duplicates\":M}) only after the store committed it, so\n"
             "a crash never loses an acknowledged report; resending is harmless (reports are content-hashed).\n"
             "Uploads arriving together are committed together (one transaction, one fsync on SQLite), each\n"
             "answered once its group is committed and durable; they are decoded on several threads meanwhile,\n"
             "and on SQLite the next group is stored while the last one's fsync runs.\n"
             "Errors: 400 bad bundle (the reason in the body), 401 bad token, 404/405 wrong path or method,\n"
             "413 body, inflated bundle, stacks or decoding time over the limits, 503 the store failed (retry "
             "later).\n",
    .options = options,
    .footer = "It prints \"tracekit: serving on http://ADDR:PORT/v1/reports\" on stderr once it accepts uploads,\n"
              "and stops on SIGINT or SIGTERM.\n",
    .flags = TK_CLI_NO_DASHDASH,
};

/* A connection, for the header deadline: Slowloris holds connections open by sending a header line
 * now and then (each byte resets libmicrohttpd's idle timeout), so the headers of every request get a
 * total deadline, enforced by shutting the socket down from the watchdog. */
typedef struct conn {
	struct conn *prev, *next;
	int fd;
	double since;   /* start of the current request's headers */
	int in_request; /* headers complete: the deadline no longer applies */
	int shut;
} conn;

/* An upload waiting for its group commit. */
typedef struct pending {
	tk_store_batch b;
	struct pending *next;
	pthread_cond_t cv; /* signalled when its group committed: only its own request wakes */
	int done, failed;
	char err[512];
} pending;

typedef struct server {
	tk_store *store;
	char token[512];
	size_t max_body, max_inflated, max_stacks;
	double max_seconds, header_timeout;
	int verbose;
	/* the dashboard: its own store handle (reads beside the committer's writes), one query at a time */
	int ui, ingest;
	tk_store *ui_store;
	char read_token[512];
	tk_alert_rules rules; /* --rules: shown with their breaches and thresholds */
	pthread_mutex_t ui_mu;
	pthread_mutex_t mu; /* everything below */
	/* decoding slots: uploads are decoded on several threads at once, at most `slots` at a time */
	pthread_cond_t slot_cv;
	unsigned slots;
	/* the group commit: the committer takes every upload queued while it committed the last group.
	 * Under concurrency (the last group held last_n > 1 uploads, or uploads are being decoded: busy,
	 * received and not yet queued) it waits for as many as the last group held, or for those being
	 * decoded, up to as long as its last commit took (commit_s, 1 to 20 ms), so that the clients'
	 * next uploads share a commit rather than each starting one; when idle an upload is committed
	 * at once. */
	pthread_cond_t queue_cv; /* on CLOCK_MONOTONIC */
	pending *head, *tail;
	unsigned busy, queued, last_n;
	double commit_s;
	int stop;
	/* durability apart (tk_store_sync_later): groups committed but not yet durable wait here for the
	 * syncer, which makes every group committed meanwhile durable with one tk_store_sync and then
	 * answers them, while the committer stores the next group */
	int sync_later, sync_stop;
	pthread_cond_t sync_cv;
	pending *sync_head, *sync_tail;
	unsigned long long stored, profiles, requests, groups, grouped;
	/* connections, for the watchdog */
	conn *conns;
	pthread_cond_t watch_cv;
	/* --symbols: Apple reports' (and MTHawkeye) frames named from dSYMs as they are decoded */
	tk_report_meta meta;
	int named;
} server;

typedef struct upload {
	char *data;
	size_t n, cap;
	int too_big;
	double t0;
} upload;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
{
	char body[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(body, sizeof body - 1, fmt, ap);
	va_end(ap);
	strcat(body, "\n");
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", status == 200 ? "application/json" : "text/plain; charset=utf-8");
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* --verbose: one line per event of a request on stderr (the client's address, what happened). */
static void logline(server *S, struct MHD_Connection *c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void logline(server *S, struct MHD_Connection *c, const char *fmt, ...)
{
	if (!S->verbose)
		return;
	char addr[64] = "?";
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ci->client_addr)->sin_addr, addr, sizeof addr);
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "tracekit: serve: %s: %s\n", addr, tk_cli_shown(msg));
}

/* Compare without an early exit, so the time taken says nothing about the token. */
static int token_ok(const char *given, const char *want)
{
	size_t gl = strlen(given), wl = strlen(want);
	unsigned char diff = gl != wl;
	for (size_t i = 0; i < wl; i++)
		diff |= (unsigned char)(i < gl ? given[i] : 0) ^ (unsigned char)want[i];
	return !diff;
}

static conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code)
{
	server *S = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		conn *k = calloc(1, sizeof *k);
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!k || !ci) {
			free(k);
			return;
		}
		k->fd = ci->connect_fd;
		k->since = now_s();
		pthread_mutex_lock(&S->mu);
		k->next = S->conns;
		if (S->conns)
			S->conns->prev = k;
		S->conns = k;
		pthread_mutex_unlock(&S->mu);
		*socket_ctx = k;
	} else if (*socket_ctx) { /* closed: called before libmicrohttpd closes the socket */
		conn *k = *socket_ctx;
		pthread_mutex_lock(&S->mu);
		if (k->prev)
			k->prev->next = k->next;
		else
			S->conns = k->next;
		if (k->next)
			k->next->prev = k->prev;
		pthread_mutex_unlock(&S->mu);
		free(k);
		*socket_ctx = NULL;
	}
}

/* The watchdog: connections whose request headers are not complete within the deadline are shut
 * down (libmicrohttpd then sees the end of the stream and closes them). */
static void *watchdog(void *arg)
{
	server *S = arg;
	pthread_mutex_lock(&S->mu);
	while (!S->stop) {
		double t = now_s();
		for (conn *k = S->conns; k; k = k->next)
			if (!k->in_request && !k->shut && t - k->since > S->header_timeout) {
				shutdown(k->fd, SHUT_RDWR);
				k->shut = 1;
			}
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += 200 * 1000000L;
		if (until.tv_nsec >= 1000000000L)
			until.tv_sec++, until.tv_nsec -= 1000000000L;
		pthread_cond_timedwait(&S->watch_cv, &S->mu, &until);
	}
	pthread_mutex_unlock(&S->mu);
	return NULL;
}

/* Answer a group's requests (S->mu held): rc 0 stored (and durable), else failed with msg. */
static void answer(server *S, pending *group, int rc, const char *msg)
{
	for (pending *q = group, *next; q; q = next) {
		next = q->next; /* q is its request's: gone once it wakes */
		q->failed = rc != 0;
		if (rc)
			snprintf(q->err, sizeof q->err, "%s", msg);
		else
			S->stored += q->b.added, S->profiles += q->b.padded;
		q->done = 1;
		pthread_cond_signal(&q->cv);
	}
}

/* The syncer (S->sync_later): the groups committed since its last sync made durable by one
 * tk_store_sync (an fdatasync on SQLite), then answered. */
static void *syncer(void *arg)
{
	server *S = arg;
	pthread_mutex_lock(&S->mu);
	for (;;) {
		while (!S->sync_head && !S->sync_stop)
			pthread_cond_wait(&S->sync_cv, &S->mu);
		if (!S->sync_head)
			break;
		pending *groups = S->sync_head;
		S->sync_head = S->sync_tail = NULL;
		pthread_mutex_unlock(&S->mu);
		tk_error err = {{0}};
		int rc = tk_store_sync(S->store, &err);
		if (rc)
			tk_cli_warn("serve: %s", err.msg);
		pthread_mutex_lock(&S->mu);
		answer(S, groups, rc, err.msg);
	}
	pthread_mutex_unlock(&S->mu);
	return NULL;
}

/* The committer: every upload queued while the previous group committed goes into the next one
 * transaction (tk_store_put_batches), then each waiting request is answered;
 * with S->sync_later the syncer answers them once durable, and the committer goes on at once. */
static void *committer(void *arg)
{
	server *S = arg;
	pthread_mutex_lock(&S->mu);
	for (;;) {
		while (!S->head && !S->stop)
			pthread_cond_wait(&S->queue_cv, &S->mu);
		if (!S->head)
			break;
		if ((S->busy || S->queued < S->last_n) && !S->stop) {
			double wait = S->commit_s < 0.001 ? 0.001 : S->commit_s > 0.02 ? 0.02 : S->commit_s;
			struct timespec until;
			clock_gettime(CLOCK_MONOTONIC, &until);
			long long ns = until.tv_nsec + (long long)(wait * 1e9);
			until.tv_sec += (time_t)(ns / 1000000000);
			until.tv_nsec = (long)(ns % 1000000000);
			while ((S->busy || S->queued < S->last_n) && !S->stop &&
			       pthread_cond_timedwait(&S->queue_cv, &S->mu, &until) == 0)
				;
		}
		pending *group = S->head;
		S->head = S->tail = NULL;
		S->last_n = S->queued;
		S->queued = 0;
		pthread_mutex_unlock(&S->mu);
		size_t n = 0;
		for (pending *q = group; q; q = q->next)
			n++;
		tk_store_batch *b = tk_xmalloc(n * sizeof *b);
		size_t i = 0;
		for (pending *q = group; q; q = q->next)
			b[i++] = q->b;
		tk_error err = {{0}};
		double t0 = now_s();
		int rc = tk_store_put_batches(S->store, b, n, &err);
		double took = now_s() - t0;
		if (rc)
			tk_cli_warn("serve: %s", err.msg);
		pthread_mutex_lock(&S->mu);
		i = 0;
		pending *last = group;
		for (pending *q = group; q; q = q->next, i++)
			q->b = b[i], last = q;
		if (S->sync_later && !rc) { /* answered by the syncer once durable */
			if (S->sync_tail)
				S->sync_tail->next = group;
			else
				S->sync_head = group;
			S->sync_tail = last;
			pthread_cond_signal(&S->sync_cv);
		} else
			answer(S, group, rc, err.msg);
		S->commit_s = took;
		S->groups++;
		S->grouped += n;
		if (S->verbose && !rc) {
			size_t nr = 0, np = 0, ar = 0, ap = 0;
			for (size_t k = 0; k < n; k++)
				nr += b[k].n, np += b[k].pn, ar += b[k].added, ap += b[k].padded;
			fprintf(stderr,
			        "tracekit: serve: commit: %zu upload(s) in one transaction, %zu of %zu reports and %zu "
			        "of %zu profiles new\n",
			        n, ar, nr, ap, np);
		}
		free(b);
	}
	pthread_mutex_unlock(&S->mu);
	return NULL;
}

static const char *ui_arg(void *ctx, const char *name)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name);
}

/* The query arguments but token, re-encoded, for the redirect that drops the token from the URL. */
typedef struct qs_buf {
	char s[4096];
	size_t n;
} qs_buf;

static enum MHD_Result qs_add(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	qs_buf *b = cls;
	if (strcmp(key, "token") == 0)
		return MHD_YES;
	const char *parts[2] = {key, value ? value : ""};
	for (int i = 0; i < 2; i++) {
		if (b->n + 4 >= sizeof b->s)
			return MHD_NO;
		char sep = i ? '=' : b->n ? '&' : '?';
		b->s[b->n++] = sep;
		for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++) {
			if (b->n + 4 >= sizeof b->s)
				return MHD_NO;
			if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
			    *p == '_' || *p == '.' || *p == '~')
				b->s[b->n++] = (char)*p;
			else
				b->n += (size_t)snprintf(b->s + b->n, 4, "%%%02X", *p);
		}
	}
	b->s[b->n] = 0;
	return MHD_YES;
}

/* The cookie named name in a Cookie header, copied into out (cap bytes); 0 if absent. */
static int cookie(struct MHD_Connection *c, const char *name, char *out, size_t cap)
{
	const char *v = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, name);
	if (!v || strlen(v) >= cap)
		return 0;
	strcpy(out, v);
	return 1;
}

static void secure_headers(struct MHD_Response *r, const char *csp)
{
	MHD_add_response_header(r, "Content-Security-Policy", csp);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "X-Frame-Options", "SAMEORIGIN");
	MHD_add_response_header(r, "Cache-Control", "no-store");
}

/* A dashboard request: GET only, the read token checked when one is set, answered by the library. */
static enum MHD_Result ui_handle(server *S, struct MHD_Connection *c, const char *url, const char *method)
{
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply(c, 405, "%s not allowed: the dashboard is read-only (GET)", method);
	if (S->read_token[0]) {
		const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
		const char *given = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
		char ck[512];
		int ok = (auth && strncmp(auth, "Bearer ", 7) == 0 && token_ok(auth + 7, S->read_token)) ||
		         (cookie(c, "tk_read", ck, sizeof ck) && token_ok(ck, S->read_token));
		if (!ok && given && token_ok(given, S->read_token)) {
			/* the token in a link: kept in a cookie, and dropped from the URL people will share */
			qs_buf b = {.n = 0};
			MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, qs_add, &b);
			char loc[4200], set[600];
			snprintf(loc, sizeof loc, "%s%s", url, b.s);
			snprintf(set, sizeof set, "tk_read=%s; HttpOnly; SameSite=Strict; Path=/", S->read_token);
			struct MHD_Response *r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
			MHD_add_response_header(r, "Location", loc);
			MHD_add_response_header(r, "Set-Cookie", set);
			secure_headers(r, "default-src 'none'");
			enum MHD_Result rc = MHD_queue_response(c, 303, r);
			MHD_destroy_response(r);
			return rc;
		}
		if (!ok)
			return reply(c, 401, "the dashboard wants its read token: open /?token=TOKEN once, or send "
			                     "Authorization: Bearer TOKEN");
	}
	tk_dashboard_options o = {.now = (double)time(NULL), .rules = &S->rules};
	tk_dashboard_response out;
	pthread_mutex_lock(&S->ui_mu);
	double t0 = now_s();
	tk_dashboard_get(S->ui_store, &o, url, ui_arg, c, &out);
	double t1 = now_s();
	pthread_mutex_unlock(&S->ui_mu);
	logline(S, c, "GET %s: %u, %zu bytes (%.1f ms)", url, out.status, out.n, (t1 - t0) * 1e3);
	struct MHD_Response *r = MHD_create_response_from_buffer(out.n, out.body, MHD_RESPMEM_MUST_FREE);
	out.body = NULL;
	MHD_add_response_header(r, "Content-Type", out.type);
	if (out.disposition)
		MHD_add_response_header(r, "Content-Disposition", out.disposition);
	secure_headers(r, out.csp);
	enum MHD_Result rc = MHD_queue_response(c, out.status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *data, size_t *data_n, void **ctx)
{
	server *S = cls;
	upload *u = *ctx;
	if (!u) {
		/* headers complete: the header deadline is met */
		conn *k = conn_of(c);
		if (k) {
			pthread_mutex_lock(&S->mu);
			k->in_request = 1;
			pthread_mutex_unlock(&S->mu);
		}
		if (S->ui && !(S->ingest && strcmp(url, "/v1/reports") == 0))
			return ui_handle(S, c, url, method);
		/* refuse early what will be refused anyway, before a byte of the body */
		if (strcmp(url, "/v1/reports") != 0)
			return reply(c, 404, "no such endpoint: %s (POST bundles to /v1/reports)", url);
		if (strcmp(method, "POST") != 0)
			return reply(c, 405, "%s not allowed: POST a gzip'd bundle", method);
		const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
		if (!auth || strncmp(auth, "Bearer ", 7) != 0 || !token_ok(auth + 7, S->token))
			return reply(c, 401, "missing or wrong bearer token");
		const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (len && strtoull(len, NULL, 10) > S->max_body)
			return reply(c, 413, "body of %s bytes is over the limit of %zu", len, S->max_body);
		u = calloc(1, sizeof *u);
		if (!u)
			return MHD_NO;
		u->t0 = now_s();
		*ctx = u;
		return MHD_YES;
	}
	if (*data_n) {
		if (!u->too_big && u->n + *data_n > S->max_body) {
			u->too_big = 1; /* chunked bodies have no Content-Length: stop keeping, answer at the end */
			free(u->data);
			u->data = NULL;
		}
		if (!u->too_big) {
			if (u->n + *data_n > u->cap) {
				size_t cap = u->cap ? u->cap : 65536;
				while (cap < u->n + *data_n)
					cap *= 2;
				char *p = realloc(u->data, cap);
				if (!p)
					return MHD_NO;
				u->data = p;
				u->cap = cap;
			}
			memcpy(u->data + u->n, data, *data_n);
			u->n += *data_n;
		}
		*data_n = 0;
		return MHD_YES;
	}
	pthread_mutex_lock(&S->mu);
	S->requests++;
	S->busy += !u->too_big;
	pthread_mutex_unlock(&S->mu);
	if (u->too_big)
		return reply(c, 413, "body is over the limit of %zu bytes", S->max_body);
	logline(S, c, "POST /v1/reports: %zu bytes received, decoding", u->n);
	/* decode on this connection's thread, at most S->slots at once (memory is bounded per upload) */
	pthread_mutex_lock(&S->mu);
	while (!S->slots)
		pthread_cond_wait(&S->slot_cv, &S->mu);
	S->slots--;
	pthread_mutex_unlock(&S->mu);
	tk_report_set set = {0};
	tk_error err;
	tk_bundle_limits lim = {
	    .max_inflated = S->max_inflated, .max_stacks = S->max_stacks, .max_seconds = S->max_seconds};
	/* MetricKit payloads as the app sends them, else a bundle */
	int drc = tk_payload_reports(u->data, u->n, &lim, "upload", S->named ? &S->meta : NULL, &set, &err);
	if (drc == 2)
		drc = tk_bundle_decode(u->data, u->n, &lim, "upload", S->named ? &S->meta : NULL, &set, &err);
	pthread_mutex_lock(&S->mu);
	S->slots++;
	pthread_cond_signal(&S->slot_cv);
	if (drc) {
		S->busy--;
		pthread_cond_signal(&S->queue_cv); /* the committer may be waiting for it */
	}
	pthread_mutex_unlock(&S->mu);
	if (drc) {
		tk_report_set_free(&set);
		logline(S, c, "POST /v1/reports: %d %s", drc > 0 ? 413 : 400, err.msg);
		return reply(c, drc > 0 ? 413 : 400, "%s", err.msg);
	}
	/* into the next group commit; answered once it committed */
	logline(S, c, "POST /v1/reports: %zu report(s), %zu profile(s) decoded, waiting for the group commit", set.n,
	        set.pn);
	pending q = {.b = {.v = set.v, .n = set.n, .pv = set.pv, .pn = set.pn}};
	pthread_cond_init(&q.cv, NULL);
	pthread_mutex_lock(&S->mu);
	if (S->tail)
		S->tail->next = &q;
	else
		S->head = &q;
	S->tail = &q;
	S->queued++;
	S->busy--;
	pthread_cond_signal(&S->queue_cv);
	while (!q.done)
		pthread_cond_wait(&q.cv, &S->mu);
	pthread_mutex_unlock(&S->mu);
	pthread_cond_destroy(&q.cv);
	enum MHD_Result rc;
	if (q.failed) {
		logline(S, c, "POST /v1/reports: 503 %s", q.err);
		rc = reply(c, 503, "the store failed: %s", q.err);
	} else if (set.pn) { /* a profile bundle: one profile report, nothing else */
		logline(S, c, "POST /v1/reports: 200, %zu profile(s) stored (%.1f ms)", q.b.padded,
		        (now_s() - u->t0) * 1e3);
		rc = reply(c, 200, "{\"profiles\":%zu,\"duplicates\":%zu}", q.b.padded, set.pn - q.b.padded);
	} else {
		logline(S, c, "POST /v1/reports: 200, %zu report(s) stored (%.1f ms)", q.b.added,
		        (now_s() - u->t0) * 1e3);
		rc = reply(c, 200, "{\"stored\":%zu,\"duplicates\":%zu,\"live\":%zu}", q.b.added, set.n - q.b.added,
		           set.live);
	}
	tk_report_set_free(&set);
	return rc;
}

static void done(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode why)
{
	server *S = cls;
	upload *u = *ctx;
	if (u) {
		free(u->data);
		free(u);
		*ctx = NULL;
	}
	/* a kept-alive connection's next request has the header deadline again, from now */
	conn *k = conn_of(c);
	if (k) {
		pthread_mutex_lock(&S->mu);
		k->in_request = 0;
		k->since = now_s();
		pthread_mutex_unlock(&S->mu);
	}
}

/* The value of NAME, a whole number of at least min: 0, or -1 after a message. */
static int uint_opt(const char *name, const char *v, uint32_t min, uint32_t *out)
{
	if (tk_cli_uint("serve", name, v, out) < 0)
		return -1;
	if (*out < min)
		return tk_cli_usage("serve", "%s wants a whole number of at least %u, not '%s'", name, min, v), -1;
	return 0;
}

typedef struct serve_args {
	server *S;
	const char *db, *listen, *token_file, *read_token_file, *rules_file, *symbols[64];
	size_t nsym;
	int ingest;
	uint32_t per_address, workers;
} serve_args;

static int serve_option(void *ctx, const tk_cli_option *o, const char *v, const char *spelling)
{
	serve_args *A = ctx;
	server *S = A->S;
	uint32_t num;
	char *end;
	unsigned long long n;
	switch (o->id) {
	case OPT_INGEST: A->ingest = 1; return 0;
	case OPT_UI: S->ui = 1; return 0;
	case OPT_VERBOSE: S->verbose = 1; return 0;
	case OPT_MAX_STACKS: return uint_opt(o->name, v, 1, &num) ? -1 : (S->max_stacks = num, 0);
	case OPT_MAX_SECONDS: return uint_opt(o->name, v, 1, &num) ? -1 : (S->max_seconds = num, 0);
	case OPT_HEADER_TIMEOUT: return uint_opt(o->name, v, 1, &num) ? -1 : (S->header_timeout = num, 0);
	case OPT_MAX_PER_ADDRESS: return uint_opt(o->name, v, 0, &A->per_address);
	case OPT_WORKERS:
		if (uint_opt(o->name, v, 1, &A->workers))
			return -1;
		if (A->workers > 64)
			A->workers = 64;
		return 0;
	case OPT_DB: A->db = v; return 0;
	case OPT_LISTEN: A->listen = v; return 0;
	case OPT_TOKEN_FILE: A->token_file = v; return 0;
	case OPT_READ_TOKEN_FILE: A->read_token_file = v; return 0;
	case OPT_RULES: A->rules_file = v; return 0;
	case OPT_SYMBOLS:
		if (A->nsym == sizeof A->symbols / sizeof A->symbols[0])
			return tk_cli_usage("serve", "at most 64 --symbols paths"), -1;
		A->symbols[A->nsym++] = v;
		return 0;
	case OPT_MAX_BODY:
		n = strtoull(v, &end, 10);
		if (!*v || *end || v[0] == '-' || n < 1024 || n > (1ull << 32))
			return tk_cli_usage("serve", "--max-body wants bytes from 1024 to 4294967296, not '%s'", v), -1;
		S->max_body = (size_t)n;
		return 0;
	}
	return tk_cli_usage("serve", "unknown option '%s'", spelling), -1;
}

/* The first line of path into out: a token of at least 8 characters. 0, or 1 after a message. */
static int read_token(const char *path, char *out, size_t cap, int cookie_safe)
{
	FILE *tf = fopen(path, "r");
	if (!tf)
		return tk_cli_fail("serve: %s: %s", path, strerror(errno)), 1;
	if (!fgets(out, (int)cap, tf))
		out[0] = 0;
	fclose(tf);
	out[strcspn(out, "\r\n")] = 0;
	if (strlen(out) < 8)
		return tk_cli_fail("serve: %s: the token must be at least 8 characters", path), 1;
	for (const char *p = out; cookie_safe && *p; p++)
		if ((unsigned char)*p <= ' ' || *p == ';' || *p == '"' || *p == ',' || *p == '\\' || (unsigned char)*p >= 127)
			return tk_cli_fail("serve: %s: the token must be printable ASCII without spaces, ; , \" or \\", path), 1;
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	const char *env = getenv("TRACEKIT_DB");
	server S = {.max_body = 16u << 20, .max_stacks = 200000, .max_seconds = 60, .header_timeout = 10};
	serve_args A = {.S = &S, .db = env && *env ? env : "sqlite:tracekit.db", .listen = "127.0.0.1:8470",
	                .per_address = 16};
	int prc = tk_cli_parse(&tk_cli_command_serve, argc, argv, 1, serve_option, &A, NULL);
	if (prc)
		return prc < 0 ? 0 : prc;
	const char *db = A.db, *listen = A.listen, *token_file = A.token_file, *read_token_file = A.read_token_file,
	           *rules_file = A.rules_file, *const *symbols = A.symbols;
	int ingest = A.ingest;
	uint32_t per_address = A.per_address, workers = A.workers;
	size_t nsym = A.nsym;
	if (!ingest && !S.ui)
		return tk_cli_fail("serve: say what to serve: --ingest (uploads), --ui (the dashboard) or both"), 2;
	S.ingest = ingest;
	if (ingest && !token_file)
		return tk_cli_fail("serve: --token-file FILE is required (uploads must carry its bearer token)"), 2;
	S.max_inflated = S.max_body * 8 < (256u << 20) ? S.max_body * 8 : (256u << 20);
	if (token_file && read_token(token_file, S.token, sizeof S.token, 0))
		return 1;
	if (read_token_file && read_token(read_token_file, S.read_token, sizeof S.read_token, 1))
		return 1;
	if (rules_file) {
		FILE *rf = fopen(rules_file, "r");
		char buf[65536];
		size_t rn = rf ? fread(buf, 1, sizeof buf, rf) : 0;
		int big = rf && rn == sizeof buf;
		if (rf)
			fclose(rf);
		tk_error rerr;
		if (!rf)
			return tk_cli_fail("serve: %s: %s", rules_file, strerror(errno));
		if (big)
			return tk_cli_fail("serve: %s: a rules file is at most 64 KiB", rules_file);
		if (tk_alert_rules_parse(buf, rn, rules_file, &S.rules, &rerr))
			return tk_cli_fail("serve: %s", rerr.msg), 2;
	}
	if (S.read_token[0] && S.token[0] && strcmp(S.read_token, S.token) == 0)
		return tk_cli_fail("serve: the read token must differ from the ingest token (readers must not upload)"), 2;

	struct sockaddr_in addr = {.sin_family = AF_INET};
	const char *colon = strrchr(listen, ':');
	char host[64];
	if (!colon || (size_t)(colon - listen) >= sizeof host)
		return tk_cli_fail("serve: --listen %s: expected ADDR:PORT, e.g. 127.0.0.1:8470", listen), 2;
	snprintf(host, sizeof host, "%.*s", (int)(colon - listen), listen);
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 0 || port > 65535 || inet_pton(AF_INET, host, &addr.sin_addr) != 1)
		return tk_cli_fail("serve: --listen %s: expected an IPv4 ADDR:PORT, e.g. 127.0.0.1:8470", listen), 2;
	addr.sin_port = htons((uint16_t)port);
	if (S.ui && !S.read_token[0] && strcmp(host, "127.0.0.1") != 0)
		return tk_cli_fail("serve: --ui on %s (not 127.0.0.1) needs --read-token-file FILE: the dashboard shows "
		                   "the fleet's data",
		                   host),
		       2;

	tk_error err;
	tk_symbolicator *sym = nsym ? tk_symbolicator_new(NULL) : NULL;
	for (size_t k = 0; k < nsym; k++)
		if (tk_symbolicator_add_path(sym, symbols[k], &err) < 0) {
			tk_symbolicator_free(sym);
			return tk_cli_fail("serve: --symbols %s: %s", symbols[k], err.msg);
		}
	tk_store_namer *namer = sym ? tk_store_namer_new(sym) : NULL;
	if (namer) {
		tk_store_namer_meta(namer, &S.meta);
		S.named = 1;
	}
	S.store = tk_store_open(db, &err);
	if (!S.store) {
		tk_store_namer_free(namer);
		tk_symbolicator_free(sym);
		return tk_cli_fail("serve: %s", err.msg);
	}
	if (S.ui && !(S.ui_store = tk_store_open(db, &err))) {
		tk_store_close(S.store);
		return tk_cli_fail("serve: %s", err.msg);
	}
	pthread_mutex_init(&S.ui_mu, NULL);
	if (!workers) {
		long nc = sysconf(_SC_NPROCESSORS_ONLN);
		workers = nc < 2 ? 2 : nc > 8 ? 8 : (uint32_t)nc;
	}
	S.slots = workers;
	pthread_mutex_init(&S.mu, NULL);
	pthread_cond_init(&S.slot_cv, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&S.queue_cv, &ca);
	pthread_cond_init(&S.watch_cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&S.sync_cv, NULL);
	if (ingest) {
		int later = tk_store_sync_later(S.store, &err);
		if (later < 0) {
			tk_store_close(S.store);
			tk_store_close(S.ui_store);
			return tk_cli_fail("serve: %s", err.msg);
		}
		S.sync_later = later == 0;
	}
	json_object_seed(0); /* jansson's hash seed is set once, before the decoding threads use it */
	/* SIGINT/SIGTERM are waited for below: block them before any other thread exists */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	pthread_t commit_tid, watch_tid, sync_tid;
	if (S.sync_later && pthread_create(&sync_tid, NULL, syncer, &S) != 0) {
		tk_store_close(S.store);
		tk_store_close(S.ui_store);
		return tk_cli_fail("serve: cannot start the syncer thread");
	}
	if (pthread_create(&commit_tid, NULL, committer, &S) != 0) {
		tk_store_close(S.store);
		return tk_cli_fail("serve: cannot start the committer thread");
	}
	pthread_create(&watch_tid, NULL, watchdog, &S);
	/* A thread per connection: an upload being decoded holds its own thread only (at most `workers`
	 * decode at once), so others are received, decoded and committed meanwhile. Slow clients are
	 * bounded by the per-address limit, the header deadline (watchdog) and the idle timeout. */
	struct MHD_Daemon *d = MHD_start_daemon(
	    MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL, handle, &S,
	    MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_NOTIFY_COMPLETED, done, &S, MHD_OPTION_NOTIFY_CONNECTION,
	    on_connection, &S, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_CONNECTION_LIMIT, (unsigned)512,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)per_address, MHD_OPTION_END);
	int rc = 0;
	if (!d) {
		tk_cli_fail("serve: cannot listen on %s: %s", listen, strerror(errno));
		rc = 1;
	} else {
		const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
		unsigned bound = info ? (unsigned)info->port : (unsigned)port;
		if (ingest)
			fprintf(stderr, "tracekit: serving on http://%s:%u/v1/reports (store %s)\n", host, bound, db);
		if (S.ui)
			fprintf(stderr, "tracekit: serving the dashboard on http://%s:%u/ (store %s)\n", host, bound, db);
		int sig;
		sigwait(&sigs, &sig);
		MHD_stop_daemon(d); /* waits for the connections, whose uploads the committer still commits */
		fprintf(stderr,
		        "tracekit: stopped (%s): %llu uploads, %llu reports and %llu profiles stored (%llu commits)\n",
		        strsignal(sig), S.requests, S.stored, S.profiles, S.groups);
	}
	pthread_mutex_lock(&S.mu);
	S.stop = 1;
	pthread_cond_broadcast(&S.queue_cv);
	pthread_cond_broadcast(&S.watch_cv);
	pthread_mutex_unlock(&S.mu);
	pthread_join(commit_tid, NULL);
	if (S.sync_later) {
		pthread_mutex_lock(&S.mu);
		S.sync_stop = 1;
		pthread_cond_broadcast(&S.sync_cv);
		pthread_mutex_unlock(&S.mu);
		pthread_join(sync_tid, NULL);
	}
	pthread_join(watch_tid, NULL);
	tk_store_close(S.store);
	tk_store_namer_free(namer);
	tk_symbolicator_free(sym);
	tk_store_close(S.ui_store);
	tk_alert_rules_free(&S.rules);
	return rc;
}
