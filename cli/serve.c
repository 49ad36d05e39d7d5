/* tracekit serve --ingest — an HTTP endpoint (libmicrohttpd) that devices POST report bundles to. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "tracekit/store.h"

TK_COMMAND(serve, "receive uploaded field reports over HTTP into a fleet store (serve --ingest)")

static const char usage[] =
    "usage: tracekit serve --ingest --token-file FILE [--db URL] [--listen 127.0.0.1:PORT]\n"
    "\n"
    "Accepts POST /v1/reports with a gzip'd bundle (docs/store.md: a session's records, meta.json\n"
    "and images.json, as `tracekit monitor --upload` and `tracekit upload` send them; a gzip'd bare\n"
    "Records file is accepted too; or one profile, an xctrace export or any input `tracekit ingest`\n"
    "stores as a profile report, as `tracekit upload FILE` sends it) and an `Authorization: Bearer\n"
    "TOKEN` header. A bundle is stored in one batch and answered 200 {\"stored\":N,\"duplicates\":M}\n"
    "(a profile: {\"profiles\":N,\"duplicates\":M}) only after the store committed it, so\n"
    "a crash never loses an acknowledged report; resending is harmless (reports are content-hashed).\n"
    "Errors: 400 bad bundle (the reason in the body), 401 bad token, 404/405 wrong path or method,\n"
    "413 body or inflated bundle too large, 503 the store failed (retry later).\n"
    "\n"
    "options:\n"
    "  --db URL            sqlite:PATH (default sqlite:tracekit.db, or $TRACEKIT_DB) or clickhouse://HOST:PORT/DB\n"
    "  --listen ADDR:PORT  address to bind (default 127.0.0.1:8470; port 0 picks a free one)\n"
    "  --token-file FILE   the bearer token (first line of FILE); required\n"
    "  --max-body BYTES    largest compressed body (default 16 MiB); bundles inflate to at most 8×\n"
    "                      that, capped at 256 MiB; an uploaded profile's own gzip to 8× more\n"
    "\n"
    "It prints \"tracekit: serving on http://ADDR:PORT/v1/reports\" on stderr once it accepts uploads,\n"
    "and stops on SIGINT or SIGTERM.\n";

typedef struct server {
	tk_store *store;
	char token[512];
	size_t max_body, max_inflated;
	unsigned long long stored, profiles, requests;
} server;

typedef struct upload {
	char *data;
	size_t n, cap;
	int too_big;
} upload;

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

/* Compare without an early exit, so the time taken says nothing about the token. */
static int token_ok(const char *given, const char *want)
{
	size_t gl = strlen(given), wl = strlen(want);
	unsigned char diff = gl != wl;
	for (size_t i = 0; i < wl; i++)
		diff |= (unsigned char)(i < gl ? given[i] : 0) ^ (unsigned char)want[i];
	return !diff;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *data, size_t *data_n, void **ctx)
{
	server *S = cls;
	upload *u = *ctx;
	if (!u) {
		/* headers only: refuse early what will be refused anyway, before a byte of the body */
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
	S->requests++;
	if (u->too_big)
		return reply(c, 413, "body is over the limit of %zu bytes", S->max_body);
	tk_report_set set = {0};
	tk_error err;
	if (tk_bundle_reports(u->data, u->n, S->max_inflated, "upload", NULL, &set, &err)) {
		tk_report_set_free(&set);
		unsigned status = strstr(err.msg, "inflates past") ? 413 : 400;
		return reply(c, status, "%s", err.msg);
	}
	size_t added = 0;
	if (set.pn) { /* a profile bundle: one profile report, nothing else */
		if (tk_store_put_profiles(S->store, set.pv, set.pn, &added, &err)) {
			tk_report_set_free(&set);
			tk_cli_warn("serve: %s", err.msg);
			return reply(c, 503, "the store failed: %s", err.msg);
		}
		S->profiles += added;
		enum MHD_Result rc = reply(c, 200, "{\"profiles\":%zu,\"duplicates\":%zu}", added, set.pn - added);
		tk_report_set_free(&set);
		return rc;
	}
	if (tk_store_put(S->store, set.v, set.n, &added, &err)) {
		tk_report_set_free(&set);
		tk_cli_warn("serve: %s", err.msg);
		return reply(c, 503, "the store failed: %s", err.msg);
	}
	S->stored += added;
	enum MHD_Result rc =
	    reply(c, 200, "{\"stored\":%zu,\"duplicates\":%zu,\"live\":%zu}", added, set.n - added, set.live);
	tk_report_set_free(&set);
	return rc;
}

static void done(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode why)
{
	upload *u = *ctx;
	if (u) {
		free(u->data);
		free(u);
		*ctx = NULL;
	}
}

int cmd_serve(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return 0;
	}
	const char *db = getenv("TRACEKIT_DB"), *listen = "127.0.0.1:8470", *token_file = NULL;
	if (!db || !*db)
		db = "sqlite:tracekit.db";
	int ingest = 0;
	server S = {.max_body = 16u << 20};
	for (int i = 1; i < argc;) {
		const char *a = argv[i], *v = NULL;
		int r;
		if (strcmp(a, "--ingest") == 0) {
			ingest = 1;
			i++;
		} else if ((r = tk_cli_opt("serve", argc, argv, &i, "--db", NULL, &db)) ||
		           (r = tk_cli_opt("serve", argc, argv, &i, "--listen", NULL, &listen)) ||
		           (r = tk_cli_opt("serve", argc, argv, &i, "--token-file", NULL, &token_file))) {
			if (r < 0)
				return 2;
		} else if ((r = tk_cli_opt("serve", argc, argv, &i, "--max-body", NULL, &v))) {
			if (r < 0)
				return 2;
			char *end;
			unsigned long long n = strtoull(v, &end, 10);
			if (!*v || *end || v[0] == '-' || n < 1024 || n > (1ull << 32))
				return tk_cli_usage("serve", "--max-body wants bytes from 1024 to 4294967296, not '%s'",
				                    v);
			S.max_body = (size_t)n;
		} else {
			return tk_cli_usage("serve", "unknown option '%s'", a);
		}
	}
	if (!ingest)
		return tk_cli_fail("serve: say what to serve: --ingest (the only service so far)"), 2;
	if (!token_file)
		return tk_cli_fail("serve: --token-file FILE is required (uploads must carry its bearer token)"), 2;
	S.max_inflated = S.max_body * 8 < (256u << 20) ? S.max_body * 8 : (256u << 20);
	FILE *tf = fopen(token_file, "r");
	if (!tf)
		return tk_cli_fail("serve: %s: %s", token_file, strerror(errno));
	if (!fgets(S.token, sizeof S.token, tf))
		S.token[0] = 0;
	fclose(tf);
	S.token[strcspn(S.token, "\r\n")] = 0;
	if (strlen(S.token) < 8)
		return tk_cli_fail("serve: %s: the token must be at least 8 characters", token_file);

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

	tk_error err;
	S.store = tk_store_open(db, &err);
	if (!S.store)
		return tk_cli_fail("serve: %s", err.msg);
	/* SIGINT/SIGTERM are waited for below: block them before the server thread exists */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	/* one polling thread: requests are handled one at a time against the one store handle */
	struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL, handle,
	                                        &S, MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_NOTIFY_COMPLETED, done,
	                                        NULL, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
	                                        MHD_OPTION_CONNECTION_LIMIT, (unsigned)256, MHD_OPTION_END);
	if (!d) {
		tk_store_close(S.store);
		return tk_cli_fail("serve: cannot listen on %s: %s", listen, strerror(errno));
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	fprintf(stderr, "tracekit: serving on http://%s:%u/v1/reports (store %s)\n", host,
	        info ? (unsigned)info->port : (unsigned)port, db);
	int sig;
	sigwait(&sigs, &sig);
	MHD_stop_daemon(d);
	tk_store_close(S.store);
	fprintf(stderr, "tracekit: stopped (%s): %llu uploads, %llu reports and %llu profiles stored\n", strsignal(sig),
	        S.requests, S.stored, S.profiles);
	return 0;
}
