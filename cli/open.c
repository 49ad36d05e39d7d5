/*
 * tracekit open — show a trace in the Firefox Profiler (the samply way).
 *
 * The profile is converted (lib/write/gecko.c) into an unnamed temporary file and served by
 * libmicrohttpd on 127.0.0.1 only, under a path holding 128 random bits, so other local users and
 * web pages cannot guess it. profiler.firefox.com fetches it through its /from-url/ route and asks
 * /symbolicate/v5 on the same prefix for frames that have an image but no name; those are answered
 * from tracekit's symbol cache and the --symbols paths (tk_symbolicate_v5). Nothing else is served (404), nothing is
 * written. The server runs until SIGINT or SIGTERM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "convert.h"
#include "tracekit/symbol.h"
#include "tracekit/write.h"

TK_COMMAND(open, "serve a trace to the Firefox Profiler on 127.0.0.1, with symbolication")

extern char **environ;

enum { OPT_PORT = 1, OPT_NO_BROWSER, OPT_VERBOSE, OPT_SAVE };

static const tk_cli_option options[] = {
    TK_OPT_SECTION("open options"),
    TK_OPT_VALUE(OPT_PORT, "--port", NULL, "N", "listen on port N of 127.0.0.1 (default 0: a free port)"),
    TK_OPT_FLAG(OPT_NO_BROWSER, "--no-browser", NULL, "only print the link"),
    TK_OPT_FLAG(OPT_VERBOSE, "--verbose", "-v", "log each request (method, path, status, sizes, time) on stderr"),
    TK_OPT_VALUE(OPT_SAVE, "--save", NULL, "PATH", "write the profile to PATH and exit (same as -o; no server)"),
    TK_OPT_INCLUDE(tk_analysis_options),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_open = {
    .name = "open",
    .usage = "tracekit open [options] FILE",
    .about = "Converts FILE for the Firefox Profiler (the processed format with per-sample weights, see\n"
             "tracekit convert --to gecko), serves it on 127.0.0.1 under a random path, prints the\n"
             "https://profiler.firefox.com/from-url/... link and opens it in a browser when one is available.\n"
             "The server also answers the profiler's symbolication requests (/symbolicate/v5) from the\n"
             "symbol cache and the --symbols paths, so frames exported without names get them. Stop it\n"
             "with Ctrl-C.\n",
    .options = options,
};

typedef struct open_args {
	tk_analysis a;
	uint32_t port;
	int no_browser, verbose;
} open_args;

static int open_option(void *ctx, const tk_cli_option *o, const char *val, const char *spelling)
{
	open_args *t = ctx;
	switch (o->id) {
	case OPT_NO_BROWSER: t->no_browser = 1; return 0;
	case OPT_VERBOSE: t->verbose = 1; return 0;
	case OPT_PORT:
		if (tk_cli_uint("open", "--port", val, &t->port) < 0)
			return -1;
		if (t->port > 65535)
			return tk_cli_fail("open: --port %u: expected 0 to 65535", t->port), -1;
		return 0;
	case OPT_SAVE: t->a.output = val; return 0;
	}
	return tk_analysis_handle(&t->a, o, val, spelling);
}

typedef struct server {
	char token[33];
	int profile_fd; /* unnamed: nothing of it stays on disk, whatever ends the process */
	off_t profile_size;
	tk_symbolicator *sym;
	int verbose;
} server;

typedef struct post_buf {
	char *data;
	size_t len, cap;
	int too_big;
	struct timespec t0;
} post_buf;

/* ---- HTTP ---- */

static void cors(struct MHD_Response *r)
{
	/* The profile's path is the secret; the profiler runs on another origin and must read it. Its
	 * symbolication fetch sets User-Agent (receive-profile.ts: "FirefoxProfiler/1.0 (+origin)"), which
	 * is not a CORS-safelisted header, so Firefox preflights it; the other names cover a JSON POST. */
	MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
	MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS");
	MHD_add_response_header(r, "Access-Control-Allow-Headers",
	                        "Content-Type, User-Agent, Accept, Accept-Language, Content-Language, Cache-Control");
	MHD_add_response_header(r, "Access-Control-Max-Age", "600");
	MHD_add_response_header(r, "Cache-Control", "no-store");
}

/* --verbose: one line per request on stderr, so a user sees symbolication happen. The path is shown
 * without the token (the secret stays off screens and logs). */
static void logreq(const server *s, struct MHD_Connection *c, const char *method, const char *url, unsigned status,
                   size_t in, size_t out, const struct timespec *t0)
{
	if (!s->verbose)
		return;
	size_t tl = strlen(s->token);
	const char *shown = url[0] == '/' && strncmp(url + 1, s->token, tl) == 0 ? url + 1 + tl : url;
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = t0 ? (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6 : 0;
	char from[600] = "";
	if (origin)
		snprintf(from, sizeof from, " from %s", tk_cli_shown(origin));
	fprintf(stderr, "tracekit: open: %s %s%s -> %u (%zu bytes in, %zu out, %.1f ms)%s\n", tk_cli_shown(method),
	        shown == url ? "" : "/TOKEN", tk_cli_shown(shown), status, in, out, ms, from);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, const char *text, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	cors(r);
	if (type)
		MHD_add_response_header(r, "Content-Type", type);
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(const server *s, struct MHD_Connection *c, const char *method, const char *url,
                                  unsigned status, const char *text, size_t in, const struct timespec *t0)
{
	logreq(s, c, method, url, status, in, strlen(text), t0);
	return reply(c, status, status == 204 ? NULL : "text/plain; charset=utf-8", text, strlen(text));
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	server *s = cls;
	size_t tl = strlen(s->token);
	const char *rest = url[0] == '/' && strncmp(url + 1, s->token, tl) == 0 ? url + 1 + tl : NULL;
	int is_profile = rest && strcmp(rest, "/profile.json") == 0;
	int is_sym = rest && strcmp(rest, "/symbolicate/v5") == 0;
	int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	int post = strcmp(method, "POST") == 0;

	if (is_sym && post) {
		post_buf *b = *con_cls;
		if (!b) { /* first call: headers only */
			*con_cls = b = calloc(1, sizeof *b);
			if (b)
				clock_gettime(CLOCK_MONOTONIC, &b->t0);
			return b ? MHD_YES : MHD_NO;
		}
		if (*upload_size) {
			/* bounded as it arrives: past the library's limit the rest is only counted */
			if (b->too_big || b->len + *upload_size > TK_SYMBOLICATE_V5_MAX_REQUEST) {
				b->too_big = 1;
				free(b->data);
				b->data = NULL;
				b->cap = 0;
				b->len += *upload_size;
			} else {
				if (b->len + *upload_size > b->cap) {
					size_t cap = b->cap ? b->cap : 65536;
					while (cap < b->len + *upload_size)
						cap *= 2;
					char *d = realloc(b->data, cap);
					if (!d)
						return MHD_NO;
					b->data = d, b->cap = cap;
				}
				memcpy(b->data + b->len, upload, *upload_size);
				b->len += *upload_size;
			}
			*upload_size = 0;
			return MHD_YES;
		}
		char *resp = NULL;
		size_t rn = 0;
		tk_error err = {{0}};
		int rc = b->too_big ? tk_error_set(&err, "symbolication request of more than %u bytes: the limit",
		                                   TK_SYMBOLICATE_V5_MAX_REQUEST),
		    1               : tk_symbolicate_v5(s->sym, b->data ? b->data : "", b->len, NULL, &resp, &rn, &err);
		if (rc != 0) {
			char msg[sizeof err.msg + 2];
			snprintf(msg, sizeof msg, "%s\n", err.msg);
			return reply_text(s, c, method, url, rc > 0 ? 413 : 400, msg, b->len, &b->t0);
		}
		logreq(s, c, method, url, 200, b->len, rn, &b->t0);
		enum MHD_Result ret = reply(c, 200, "application/json", resp, rn);
		free(resp);
		return ret;
	}
	if (*upload_size) /* a body we do not want: drop it */
		return *upload_size = 0, MHD_YES;
	if (is_sym && strcmp(method, "OPTIONS") == 0) /* CORS preflight for the symbolication POST */
		return reply_text(s, c, method, url, 204, "", 0, NULL);
	if (is_profile && get) {
		int fd = dup(s->profile_fd);
		if (fd < 0)
			return reply_text(s, c, method, url, 500, "profile unavailable\n", 0, NULL);
		struct MHD_Response *r = MHD_create_response_from_fd_at_offset64((uint64_t)s->profile_size, fd, 0);
		if (!r) {
			close(fd);
			return MHD_NO;
		}
		cors(r);
		MHD_add_response_header(r, "Content-Type", "application/json");
		logreq(s, c, method, url, 200, 0, (size_t)s->profile_size, NULL);
		enum MHD_Result ret = MHD_queue_response(c, 200, r);
		MHD_destroy_response(r);
		return ret;
	}
	return reply_text(s, c, method, url, 404, "not found\n", 0, NULL);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	post_buf *b = *con_cls;
	if (b) {
		free(b->data);
		free(b);
		*con_cls = NULL;
	}
}

/* RFC 3986 unreserved characters stay, everything else is %XX. */
static void urlencode(const char *in, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)in; *p && o + 4 < cap; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~", *p))
			out[o++] = (char)*p;
		else {
			out[o++] = '%';
			out[o++] = hex[*p >> 4];
			out[o++] = hex[*p & 15];
		}
	}
	out[o] = 0;
}

static void open_browser(const char *url)
{
	if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY"))
		return;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	char *argv[] = {"xdg-open", (char *)url, NULL};
	pid_t pid;
	if (posix_spawnp(&pid, "xdg-open", &fa, NULL, argv, environ) != 0)
		tk_cli_warn("open: could not start xdg-open; open the link above yourself");
	posix_spawn_file_actions_destroy(&fa);
}

/* A file with no name in dir (O_TMPFILE; else created in a private directory and unlinked with it at
 * once): the profile lives only as long as the open descriptor, so a crash, a kill or an error path
 * leaves nothing behind. */
static int unnamed_file(const char *dir, tk_error *err)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	char d[3072], path[3100];
	snprintf(d, sizeof d, "%s/tracekit-open-XXXXXX", dir);
	if (!mkdtemp(d)) /* mode 0700: the file is private to this user */
		return tk_error_set(err, "cannot create a temporary directory in %s: %s", dir, strerror(errno));
	snprintf(path, sizeof path, "%s/profile.json", d);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int e = errno;
	unlink(path);
	rmdir(d);
	if (fd < 0)
		return tk_error_set(err, "%s: %s", path, strerror(e));
	return fd;
}

static int write_profile(const tk_profile *p, const char *input, FILE *f, tk_error *err)
{
	tk_convert_options o;
	tk_convert_options_init(&o);
	const char *slash = strrchr(input, '/');
	o.title = slash ? slash + 1 : input;
	o.input = input;
	return tk_write_gecko(f, p, &o, err);
}

int cmd_open(int argc, char **argv)
{
	open_args t = {0};
	tk_analysis_init(&t.a, "open");
	t.a.keep_samples = 1; /* samples in time order: the Stack Chart shows the real sequence */
	int rc = tk_cli_parse(&tk_cli_command_open, argc, argv, 1, open_option, &t, NULL);
	tk_analysis a = t.a;
	uint32_t port = t.port;
	int no_browser = t.no_browser, verbose = t.verbose;
	if (!tk_analysis_ready(&a, &rc))
		goto out;

	/* Bind first: a taken port should fail before a long conversion. */
	int lfd = -1;
	if (!a.output) {
		lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int one = 1;
		struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
		    bind(lfd, (struct sockaddr *)&sin, sizeof sin) < 0 || listen(lfd, 64) < 0) {
			int e = errno;
			if (e == EADDRINUSE)
				tk_cli_fail(
				    "open: 127.0.0.1:%u is already in use (choose another --port, or 0 for a free one)",
				    port);
			else
				tk_cli_fail("open: cannot listen on 127.0.0.1:%u: %s", port, strerror(e));
			if (lfd >= 0)
				close(lfd);
			goto out;
		}
		socklen_t sl = sizeof sin;
		getsockname(lfd, (struct sockaddr *)&sin, &sl);
		port = ntohs(sin.sin_port);
	}

	tk_profile *p = tk_analysis_load(&a);
	if (!p) {
		if (lfd >= 0)
			close(lfd);
		goto out;
	}
	tk_error err = {{0}};
	if (a.output) { /* --save: the file only */
		if (tk_analysis_open_output(&a)) {
			int w = write_profile(p, a.input, a.out, &err);
			if (w < 0)
				tk_cli_fail("open: %s", err.msg);
			rc = tk_analysis_close_output(&a, w < 0);
		}
		tk_profile_free(p);
		goto out;
	}

	server s = {0};
	unsigned char rnd[16];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
		tk_cli_fail("open: getrandom: %s", strerror(errno));
		tk_profile_free(p);
		close(lfd);
		goto out;
	}
	for (int i = 0; i < 16; i++)
		snprintf(s.token + 2 * i, 3, "%02x", rnd[i]);
	const char *tmpdir = getenv("TMPDIR");
	s.profile_fd = unnamed_file(tmpdir && *tmpdir ? tmpdir : "/tmp", &err);
	FILE *f = s.profile_fd >= 0 ? fdopen(dup(s.profile_fd), "w") : NULL;
	int w = f                  ? write_profile(p, a.input, f, &err)
	        : s.profile_fd < 0 ? -1
	                           : tk_error_set(&err, "open: %s", strerror(errno));
	if (f && fclose(f) != 0 && w == 0)
		w = tk_error_set(&err, "temporary profile: %s", strerror(errno));
	tk_profile_free(p);
	struct stat st;
	if (w < 0 || fstat(s.profile_fd, &st) < 0) {
		tk_cli_fail("open: %s", err.msg);
		if (s.profile_fd >= 0)
			close(s.profile_fd);
		close(lfd);
		goto out;
	}
	s.profile_size = st.st_size;
	s.verbose = verbose;
	s.sym = tk_symbolicator_new(NULL);
	for (size_t i = 0; i < a.nsymbols; i++)
		if (tk_symbolicator_add_path(s.sym, a.symbol_paths[i], &err) < 0)
			tk_cli_warn("open: %s", err.msg); /* already checked by the load; keep serving */

	/* SIGINT/SIGTERM are waited for here, never delivered to the server's thread. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, handler, &s,
	                                        MHD_OPTION_LISTEN_SOCKET, lfd, MHD_OPTION_NOTIFY_COMPLETED, completed,
	                                        NULL, MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_END);
	if (!d) {
		tk_cli_fail("open: cannot start the HTTP server on 127.0.0.1:%u", port);
		close(lfd);
	} else {
		char base[256], profile_url[300], enc_p[1024], enc_s[1024];
		snprintf(base, sizeof base, "http://127.0.0.1:%u/%s", port, s.token);
		snprintf(profile_url, sizeof profile_url, "%s/profile.json", base);
		urlencode(profile_url, enc_p, sizeof enc_p);
		urlencode(base, enc_s, sizeof enc_s);
		char link[2600];
		snprintf(link, sizeof link, "https://profiler.firefox.com/from-url/%s/?symbolServer=%s", enc_p, enc_s);
		fprintf(stderr, "tracekit: serving %s (%.1f MB) on %s (Ctrl-C to stop)\n", a.input,
		        (double)s.profile_size / 1e6, profile_url);
		printf("%s\n", link);
		fflush(stdout);
		if (!no_browser)
			open_browser(link);
		int sig = 0;
		sigwait(&sigs, &sig);
		MHD_stop_daemon(d); /* closes the listening socket too */
		fprintf(stderr, "tracekit: open: stopped\n");
		rc = 0;
	}
	tk_symbolicator_free(s.sym);
	close(s.profile_fd);
out:
	tk_analysis_free(&a);
	return rc;
}
