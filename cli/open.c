/*
 * tracekit open — show a trace in the Firefox Profiler (the samply way).
 *
 * The profile is converted (lib/write/gecko.c) into a private temporary directory and served by
 * libmicrohttpd on 127.0.0.1 only, under a path holding 128 random bits, so other local users and
 * web pages cannot guess it. profiler.firefox.com fetches it through its /from-url/ route and asks
 * /symbolicate/v5 on the same prefix for frames that have an image but no name; those are answered
 * from tracekit's symbol cache and the --symbols paths. Nothing else is served (404), nothing is
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
#include <unistd.h>

#include "analysis.h"
#include "convert.h"
#include "tracekit/symbol.h"
#include "tracekit/write.h"

TK_COMMAND(open, "serve a trace to the Firefox Profiler on 127.0.0.1, with symbolication")

extern char **environ;

static void usage(void)
{
	printf("usage: tracekit open [options] FILE\n\n"
	       "Converts FILE for the Firefox Profiler (the processed format with per-sample weights, see\n"
	       "tracekit convert --to gecko), serves it on 127.0.0.1 under a random path, prints the\n"
	       "https://profiler.firefox.com/from-url/... link and opens it in a browser when one is available.\n"
	       "The server also answers the profiler's symbolication requests (/symbolicate/v5) from the\n"
	       "symbol cache and the --symbols paths, so frames exported without names get them. Stop it\n"
	       "with Ctrl-C.\n\n"
	       "open options:\n"
	       "  --port N              listen on port N of 127.0.0.1 (default 0: a free port)\n"
	       "  --no-browser          only print the link\n"
	       "  --save PATH           write the profile to PATH and exit (same as -o; no server)\n\n%s",
	       TK_ANALYSIS_HELP);
}

typedef struct server {
	char token[33];
	char profile_path[4096];
	off_t profile_size;
	tk_symbolicator *sym;
} server;

typedef struct post_buf {
	char *data;
	size_t len, cap;
	int too_big;
} post_buf;

enum { MAX_POST = 64 << 20 };

/* ---- /symbolicate/v5 ----
 * Request:  {"jobs":[{"memoryMap":[[debugName, breakpadId], …], "stacks":[[[moduleIndex, offset], …]]}]}
 * Response: {"results":[{"found_modules":{"name/id":true|false}, "stacks":[[{"frame":i,
 *           "module_offset":"0x…", "module":name, "function":…, "function_offset":"0x…", "file":…,
 *           "line":…, "inlines":[{function, file, line} innermost first]}]]}]}
 * The offset is relative to the image's load address (the writer's frame addresses), already
 * adjusted for return addresses, so it is looked up as is. */

/* "4C4C44D755553144A1A5753F1442BA460" -> "4C4C44D7-5555-3144-A1A5-753F1442BA46" */
static int uuid_from_breakpad(const char *id, char out[37])
{
	if (strlen(id) < 32)
		return -1;
	size_t o = 0;
	for (int i = 0; i < 32; i++) {
		char c = id[i];
		if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f')))
			return -1;
		if (i == 8 || i == 12 || i == 16 || i == 20)
			out[o++] = '-';
		out[o++] = c;
	}
	out[o] = 0;
	return 0;
}

/* The symbol cache alone answers too: caches are named <UUID>-<arch>.tksym in the cache directory
 * ($TRACEKIT_CACHE_DIR, else $XDG_CACHE_HOME/tracekit, else ~/.cache/tracekit), so one built
 * earlier (`tracekit symcache build`, or any lookup) serves after its dSYM is gone. */
static int add_cached(server *s, const char *uuid)
{
	const char *env = getenv("TRACEKIT_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char dir[2048];
	if (env && *env)
		snprintf(dir, sizeof dir, "%s", env);
	else if (xdg && *xdg)
		snprintf(dir, sizeof dir, "%s/tracekit", xdg);
	else if (home && *home)
		snprintf(dir, sizeof dir, "%s/.cache/tracekit", home);
	else
		return 0;
	static const char *const archs[] = {"arm64e", "arm64", "x86_64", "arm64_32", "x86_64h"};
	int added = 0;
	for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
		char path[2200];
		snprintf(path, sizeof path, "%s/%s-%s.tksym", dir, uuid, archs[i]);
		tk_error err;
		if (access(path, R_OK) == 0 && tk_symbolicator_add_path(s->sym, path, &err) == 0)
			added = 1;
	}
	return added;
}

typedef struct named {
	const char *name;
	uint64_t off;
	json_int_t module;
	json_t *obj;
} named;

/* by module, name, then offset: the first of each run is the function's lowest address */
static int cmp_named(const void *a, const void *b)
{
	const named *x = a, *y = b;
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->off < y->off ? -1 : x->off > y->off;
}

static json_t *symbolicate_job(server *s, json_t *job)
{
	json_t *mm = json_object_get(job, "memoryMap"), *stacks = json_object_get(job, "stacks");
	if (!json_is_array(mm) || !json_is_array(stacks))
		return NULL;
	size_t nmod = json_array_size(mm);
	tk_symbol_image **ims = calloc(nmod ? nmod : 1, sizeof *ims);
	json_t *found = json_object();
	for (size_t m = 0; m < nmod; m++) {
		json_t *e = json_array_get(mm, m);
		const char *name = json_string_value(json_array_get(e, 0)),
		           *id = json_string_value(json_array_get(e, 1));
		if (!name || !id)
			continue;
		char uuid[37], key[1024];
		tk_error err;
		if (uuid_from_breakpad(id, uuid) == 0) {
			ims[m] = tk_symbolicator_image(s->sym, uuid, NULL, NULL, &err);
			if (!ims[m] && add_cached(s, uuid))
				ims[m] = tk_symbolicator_image(s->sym, uuid, NULL, NULL, &err);
		}
		snprintf(key, sizeof key, "%s/%s", name, id);
		json_object_set_new(found, key, json_boolean(ims[m] != NULL));
	}
	json_t *out_stacks = json_array();
	for (size_t si = 0; si < json_array_size(stacks); si++) {
		json_t *st = json_array_get(stacks, si), *out_st = json_array();
		size_t nf = json_array_size(st), nnamed = 0;
		named *nm = malloc((nf ? nf : 1) * sizeof *nm);
		tk_symbol_result r;
		for (size_t f = 0; f < nf; f++) {
			json_t *fr = json_array_get(st, f);
			json_int_t mi = json_integer_value(json_array_get(fr, 0));
			json_int_t off = json_integer_value(json_array_get(fr, 1));
			char hex[32];
			snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)off);
			json_t *o = json_object();
			json_object_set_new(o, "frame", json_integer((json_int_t)f));
			json_object_set_new(o, "module_offset", json_string(hex));
			int known = mi >= 0 && (size_t)mi < nmod;
			const char *modname =
			    known ? json_string_value(json_array_get(json_array_get(mm, mi), 0)) : NULL;
			json_object_set_new(o, "module", json_string(modname ? modname : ""));
			r.nframes = 0;
			if (known && ims[mi] && off >= 0) {
				tk_symbol_image_lookup(ims[mi], tk_symbol_image_file_addr(ims[mi], 0, (uint64_t)off),
				                       &r);
				if (r.nframes == 1 && !r.frames[0].file && strcmp(r.frames[0].function, "??") == 0)
					r.nframes = 0;
			}
			if (r.nframes) {
				const tk_symbol_frame *outer = &r.frames[r.nframes - 1];
				json_object_set_new(o, "function", json_string(outer->function));
				if (outer->file)
					json_object_set_new(o, "file", json_string(outer->file));
				if (outer->line)
					json_object_set_new(o, "line", json_integer(outer->line));
				if (r.nframes > 1) {
					json_t *inl = json_array();
					for (size_t k = 0; k + 1 < r.nframes; k++) {
						json_t *x = json_object();
						json_object_set_new(x, "function", json_string(r.frames[k].function));
						if (r.frames[k].file)
							json_object_set_new(x, "file", json_string(r.frames[k].file));
						if (r.frames[k].line)
							json_object_set_new(x, "line", json_integer(r.frames[k].line));
						json_array_append_new(inl, x);
					}
					json_object_set_new(o, "inlines", inl);
				}
				/* the name's text stays mapped until the next tk_symbolicator_image call (none here) */
				nm[nnamed++] =
				    (named){json_string_value(json_object_get(o, "function")), (uint64_t)off, mi, o};
			}
			json_array_append_new(out_st, o);
		}
		/* A function's canonical address within this request: its lowest requested address. The
		 * profiler merges frames into one function by (library, address - function_offset), and
		 * the symbol cache keeps line ranges, not function starts. */
		qsort(nm, nnamed, sizeof *nm, cmp_named);
		for (size_t k = 0; k < nnamed;) {
			size_t e = k + 1;
			while (e < nnamed && nm[e].module == nm[k].module && strcmp(nm[e].name, nm[k].name) == 0)
				e++;
			for (size_t q = k; q < e; q++) {
				char hex[32];
				snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)(nm[q].off - nm[k].off));
				json_object_set_new(nm[q].obj, "function_offset", json_string(hex));
			}
			k = e;
		}
		free(nm);
		json_array_append_new(out_stacks, out_st);
	}
	free(ims);
	json_t *result = json_object();
	json_object_set_new(result, "found_modules", found);
	json_object_set_new(result, "stacks", out_stacks);
	return result;
}

static char *symbolicate(server *s, const char *body, size_t len)
{
	json_error_t jerr;
	json_t *req = json_loadb(body, len, 0, &jerr);
	json_t *jobs = req ? json_object_get(req, "jobs") : NULL;
	if (!json_is_array(jobs)) {
		json_decref(req);
		return NULL;
	}
	json_t *results = json_array();
	for (size_t i = 0; i < json_array_size(jobs); i++) {
		json_t *r = symbolicate_job(s, json_array_get(jobs, i));
		if (!r) {
			json_decref(results);
			json_decref(req);
			return NULL;
		}
		json_array_append_new(results, r);
	}
	json_t *resp = json_object();
	json_object_set_new(resp, "results", results);
	char *text = json_dumps(resp, JSON_COMPACT);
	json_decref(resp);
	json_decref(req);
	return text;
}

/* ---- HTTP ---- */

static void cors(struct MHD_Response *r)
{
	/* The profile's path is the secret; the profiler runs on another origin and must read it. */
	MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
	MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, POST, OPTIONS");
	MHD_add_response_header(r, "Access-Control-Allow-Headers", "Content-Type");
	MHD_add_response_header(r, "Cache-Control", "no-store");
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	cors(r);
	if (type)
		MHD_add_response_header(r, "Content-Type", type);
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
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
			*con_cls = calloc(1, sizeof *b);
			return *con_cls ? MHD_YES : MHD_NO;
		}
		if (*upload_size) {
			if (b->len + *upload_size > MAX_POST)
				b->too_big = 1;
			else {
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
		if (b->too_big)
			return reply(c, 413, "text/plain", "request too large\n");
		char *resp = symbolicate(s, b->data ? b->data : "", b->len);
		if (!resp)
			return reply(c, 400, "text/plain", "expected a /symbolicate/v5 JSON request\n");
		enum MHD_Result ret = reply(c, 200, "application/json", resp);
		free(resp);
		return ret;
	}
	if (*upload_size) /* a body we do not want: drop it */
		return *upload_size = 0, MHD_YES;
	if (is_sym && strcmp(method, "OPTIONS") == 0) /* CORS preflight for the JSON POST */
		return reply(c, 204, NULL, "");
	if (is_profile && get) {
		int fd = open(s->profile_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return reply(c, 500, "text/plain", "profile unavailable\n");
		struct MHD_Response *r = MHD_create_response_from_fd((uint64_t)s->profile_size, fd);
		if (!r) {
			close(fd);
			return MHD_NO;
		}
		cors(r);
		MHD_add_response_header(r, "Content-Type", "application/json");
		enum MHD_Result ret = MHD_queue_response(c, 200, r);
		MHD_destroy_response(r);
		return ret;
	}
	return reply(c, 404, "text/plain", "not found\n");
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
	if (tk_cli_wants_help(argc, argv))
		return usage(), 0;
	tk_analysis a;
	tk_analysis_init(&a, "open");
	a.keep_samples = 1; /* samples in time order: the Stack Chart shows the real sequence */
	uint32_t port = 0;
	int no_browser = 0, rc = 2; /* a usage error until the options are checked */
	for (int i = 1; i < argc;) {
		const char *val;
		int r;
		if (strcmp(argv[i], "--no-browser") == 0) {
			no_browser = 1, i++;
		} else if ((r = tk_cli_opt("open", argc, argv, &i, "--port", NULL, &val)) != 0) {
			if (r < 0 || tk_cli_uint("open", "--port", val, &port) < 0)
				goto out;
			if (port > 65535) {
				tk_cli_fail("open: --port %u: expected 0 to 65535", port);
				goto out;
			}
		} else if ((r = tk_cli_opt("open", argc, argv, &i, "--save", NULL, &val)) != 0) {
			if (r < 0)
				goto out;
			a.output = val;
		} else if ((r = tk_analysis_option(&a, argc, argv, &i)) != 0) {
			if (r < 0)
				goto out;
		} else {
			tk_cli_fail("open: unknown option '%s' (see tracekit open --help)", argv[i]);
			goto out;
		}
	}
	if (tk_analysis_check(&a))
		goto out;
	rc = 1;

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
	char dir[3072];
	snprintf(dir, sizeof dir, "%s/tracekit-open-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(dir)) { /* mode 0700: the file is private to this user */
		tk_cli_fail("open: cannot create a temporary directory in %s: %s", tmpdir ? tmpdir : "/tmp",
		            strerror(errno));
		tk_profile_free(p);
		close(lfd);
		goto out;
	}
	snprintf(s.profile_path, sizeof s.profile_path, "%s/profile.json", dir);
	FILE *f = fopen(s.profile_path, "w");
	int w = f ? write_profile(p, a.input, f, &err) : tk_error_set(&err, "%s: %s", s.profile_path, strerror(errno));
	if (f && fclose(f) != 0 && w == 0)
		w = tk_error_set(&err, "%s: %s", s.profile_path, strerror(errno));
	tk_profile_free(p);
	struct stat st;
	if (w < 0 || stat(s.profile_path, &st) < 0) {
		tk_cli_fail("open: %s", err.msg);
		unlink(s.profile_path);
		rmdir(dir);
		close(lfd);
		goto out;
	}
	s.profile_size = st.st_size;
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
	unlink(s.profile_path);
	rmdir(dir);
out:
	tk_analysis_free(&a);
	return rc;
}
