/* tracekit upload — send session directories to `tracekit serve --ingest`, keeping each until acknowledged. */
#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "tracekit/store.h"

TK_COMMAND(upload, "send monitor sessions to a `tracekit serve --ingest` endpoint, retrying until acknowledged")

enum { OPT_URL = 1, OPT_TOKEN_FILE, OPT_SET, OPT_RETRIES, OPT_RETRY_DELAY, OPT_FORCE, OPT_JOBS, OPT_PACK, OPT_INPUT };

static const tk_cli_option options[] = {
    TK_OPT_SECTION("options"),
    TK_OPT_OPERAND(OPT_INPUT, "DIR|PROFILE",
                   "a session directory, a directory of sessions, or a profile; the options end at the first"),
    TK_OPT_VALUE(OPT_URL, "--url", NULL, "URL", "http://HOST:PORT/v1/reports of `tracekit serve --ingest`"),
    TK_OPT_VALUE(OPT_TOKEN_FILE, "--token-file", NULL, "FILE", "the upload token (its first line)"),
    TK_OPT_VALUE(OPT_SET, "--set", NULL, "K=V,...",
                 "keys for sessions without meta.json (app, version, build, device, os, session)"),
    TK_OPT_VALUE(OPT_RETRIES, "--retries", NULL, "N", "attempts per session (default 8)"),
    TK_OPT_VALUE(OPT_RETRY_DELAY, "--retry-delay", NULL, "MS", "first back-off delay (default 500, doubling up to 30000)"),
    TK_OPT_FLAG(OPT_FORCE, "--force", NULL, "send sessions already marked uploaded too"),
    TK_OPT_VALUE(OPT_JOBS, "--jobs", "-j", "N", "uploads in flight at once (default 8; the server commits them together)"),
    TK_OPT_VALUE(OPT_PACK, "--pack", NULL, "N",
                 "sessions per request (default 32, at most 4 MiB of records; 1: one each as before; a server that "
                 "refuses a pack gets its sessions one by one)"),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_upload = {
    .name = "upload",
    .usage = "tracekit upload --url URL --token-file FILE [options] DIR|PROFILE...",
    .about = "Sends each session directory (records, meta.json, images.json; or a directory of sessions) as a\n"
             "gzip'd bundle to URL (http://HOST:PORT/v1/reports of `tracekit serve --ingest`), up to --pack of\n"
             "them in one request. A session is\n"
             "marked with DIR/uploaded only once the server acknowledged it, which it does after committing;\n"
             "sessions already marked are skipped, so running it again sends only what is left. Connection\n"
             "failures and 5xx answers are retried with exponential back-off; a 4xx is final for that session.\n"
             "A PROFILE (an xctrace export, or any other file `tracekit ingest` stores as a profile report; in a\n"
             "directory tree, files named *.xml and *.xml.gz, Apple reports and MetricKit payloads found by\n"
             "content) is sent too, with --set's keys, and stored exactly\n"
             "as `tracekit ingest --set … PROFILE` stores it; nothing is written beside it (resending is\n"
             "harmless: the server keeps one copy). MetricKit payload files (*.json, *.jsonl, gzip'd too, in a\n"
             "tree) are sent the same way: the server stores their diagnostics and metric payloads.\n",
    .options = options,
    .flags = TK_CLI_STOP | TK_CLI_NO_DASHDASH,
    .column = 21,
};

typedef struct item {
	char *path;
	int profile;
} item;

typedef struct up {
	const char *url;
	tk_upload_options o;
	int force;
	unsigned pack; /* sessions per request */
	size_t sent, profiles, skipped, rejected, failed;
	/* what to send, collected first, then sent by `jobs` threads (the server commits concurrent
	 * uploads together, so several in flight is what makes it fast) */
	item *items;
	size_t nitems, capitems, next;
	off_t *bytes; /* a session's records, for the pack's size */
	pthread_mutex_t mu;
} up;

/* Count an upload's outcome (rc of tk_upload_*: 0 sent, > 0 refused by the server, < 0 not sent);
 * say: print the error (once for a pack's sessions). */
static void tally1(up *U, int rc, const tk_error *err, size_t *sent, int say)
{
	pthread_mutex_lock(&U->mu);
	if (rc == 0)
		(*sent)++;
	else {
		if (say)
			tk_cli_fail("upload: %s", err->msg);
		if (rc > 0)
			U->rejected++;
		else
			U->failed++;
	}
	pthread_mutex_unlock(&U->mu);
}

static void tally(up *U, int rc, const tk_error *err, size_t *sent)
{
	tally1(U, rc, err, sent, 1);
}

static void add_item(up *U, const char *path, int is_profile)
{
	if (U->nitems == U->capitems) {
		U->capitems = U->capitems ? 2 * U->capitems : 64;
		U->items = realloc(U->items, U->capitems * sizeof *U->items);
		U->bytes = realloc(U->bytes, U->capitems * sizeof *U->bytes);
		if (!U->items || !U->bytes)
			abort();
	}
	off_t b = 0; /* the records' size (meta.json and images.json are small) */
	char p[4200];
	struct stat st;
	snprintf(p, sizeof p, "%s/records", path);
	if (!is_profile && stat(p, &st) == 0)
		b = st.st_size;
	U->bytes[U->nitems] = b;
	U->items[U->nitems].path = strdup(path);
	U->items[U->nitems++].profile = is_profile;
}

static void *sender(void *arg)
{
	up *U = arg;
	tk_upload_options o = U->o;
	o.conn = tk_upload_conn_new(); /* this thread's uploads share one kept-alive connection */
	const char **dirs = calloc(U->pack, sizeof *dirs);
	if (!dirs)
		abort();
	for (;;) {
		/* the next item: a profile alone, or up to `pack` sessions in a row (at most 4 MiB of records) */
		pthread_mutex_lock(&U->mu);
		size_t i = U->next, n = 0;
		off_t b = 0;
		while (U->next < U->nitems && !U->items[U->next].profile && n < U->pack &&
		       (n == 0 || b + U->bytes[U->next] <= (off_t)4 << 20)) {
			b += U->bytes[U->next];
			dirs[n++] = U->items[U->next++].path;
		}
		if (!n && U->next < U->nitems)
			U->next++;
		pthread_mutex_unlock(&U->mu);
		if (i >= U->nitems)
			break;
		tk_error err;
		const item *it = &U->items[i];
		if (it->profile) {
			tally(U, tk_upload_profile(U->url, it->path, &o, &err), &err, &U->profiles);
			continue;
		}
		int rc = tk_upload_pack(U->url, dirs, n, &o, &err);
		if (rc == 1 && n > 1) /* a bad session in the pack, or a server older than packs: one by one */
			for (size_t k = 0; k < n; k++)
				tally(U, tk_upload_session(U->url, dirs[k], &o, &err), &err, &U->sent);
		else
			for (size_t k = 0; k < n; k++)
				tally1(U, rc, &err, &U->sent, k == 0);
	}
	free(dirs);
	tk_upload_conn_free(o.conn);
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has(const char *dir, const char *name)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static void one(up *U, const char *dir)
{
	struct stat st;
	if (stat(dir, &st) == 0 && S_ISREG(st.st_mode) && tk_store_is_profile_input(dir)) {
		add_item(U, dir, 1); /* an xctrace export or another profile input, as `tracekit ingest` takes it */
		return;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		tk_cli_fail("upload: %s: not a session directory or a profile (an xctrace export …)", dir);
		U->failed++;
		return;
	}
	if (!has(dir, "records")) {
		DIR *d = opendir(dir);
		char **names = NULL;
		size_t n = 0, cap = 0;
		for (struct dirent *e; d && (e = readdir(d));) {
			if (e->d_name[0] == '.')
				continue;
			if (n == cap)
				names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
			size_t len = strlen(dir) + strlen(e->d_name) + 2;
			names[n] = malloc(len);
			snprintf(names[n++], len, "%s/%s", dir, e->d_name);
		}
		if (d)
			closedir(d);
		qsort(names, n, sizeof *names, cmp_str);
		for (size_t i = 0; i < n; i++) {
			/* inside a tree, as `tracekit ingest` walks it: sessions, exports (.xml, .xml.gz), Apple
			 * reports and MetricKit payloads */
			if (stat(names[i], &st) == 0 &&
			    (S_ISDIR(st.st_mode) || (S_ISREG(st.st_mode) && tk_store_tree_input(names[i]))))
				one(U, names[i]);
			free(names[i]);
		}
		free(names);
		return;
	}
	if (!U->force && has(dir, "uploaded")) {
		U->skipped++;
		return;
	}
	add_item(U, dir, 0);
}

typedef struct upload_args {
	up U;
	uint32_t jobs;
	const char *token_file, *set;
} upload_args;

static int upload_option(void *ctx, const tk_cli_option *o, const char *v, const char *spelling)
{
	upload_args *A = ctx;
	char *end;
	long n;
	switch (o->id) {
	case OPT_JOBS:
		if (tk_cli_uint("upload", "--jobs", v, &A->jobs) < 0)
			return -1;
		if (A->jobs < 1 || A->jobs > 64)
			return tk_cli_usage("upload", "--jobs wants 1 to 64 uploads at once, not '%s'", v), -1;
		return 0;
	case OPT_PACK:
		if (tk_cli_uint("upload", "--pack", v, &A->U.pack) < 0)
			return -1;
		if (A->U.pack < 1 || A->U.pack > 1024)
			return tk_cli_usage("upload", "--pack wants 1 to 1024 sessions per request, not '%s'", v), -1;
		return 0;
	case OPT_FORCE: A->U.force = 1; return 0;
	case OPT_URL: A->U.url = v; return 0;
	case OPT_TOKEN_FILE: A->token_file = v; return 0;
	case OPT_SET: A->set = v; return 0;
	case OPT_RETRIES:
	case OPT_RETRY_DELAY:
		n = strtol(v, &end, 10);
		if (!*v || *end || n < 1 || n > 1000000)
			return tk_cli_usage("upload", "%s wants a positive whole number, not '%s'", o->name, v), -1;
		if (o->id == OPT_RETRIES)
			A->U.o.max_attempts = (unsigned)n;
		else
			A->U.o.first_delay_ms = (unsigned)n;
		return 0;
	}
	return tk_cli_usage("upload", "unknown option '%s'", spelling), -1;
}

int cmd_upload(int argc, char **argv)
{
	upload_args A = {.U = {.pack = 32}, .jobs = 8};
	int first = argc, rc = tk_cli_parse(&tk_cli_command_upload, argc, argv, 1, upload_option, &A, &first);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (first < argc && strcmp(argv[first], "-") == 0) /* never standard input: an option, as before */
		return tk_cli_usage("upload", "unknown option '-'");
	if (first >= argc)
		first = 0;
	up U = A.U;
	uint32_t jobs = A.jobs;
	const char *token_file = A.token_file, *set = A.set;
	if (!U.url || !token_file || !first)
		return tk_cli_usage("upload", "%s is required",
		                    !U.url        ? "--url URL"
		                    : !token_file ? "--token-file FILE"
		                                  : "a session DIR");
	char token[512] = "";
	FILE *f = fopen(token_file, "r");
	if (!f)
		return tk_cli_fail("upload: %s: %m", token_file);
	if (!fgets(token, sizeof token, f))
		token[0] = 0;
	fclose(f);
	token[strcspn(token, "\r\n")] = 0;
	U.o.token = token;
	tk_report_meta meta = {0};
	char *owned = NULL;
	tk_error err;
	if (set && tk_report_meta_parse(&meta, set, &owned, &err))
		return tk_cli_fail("upload: %s", err.msg), 2;
	U.o.meta = set ? &meta : NULL;
	for (int i = first; i < argc; i++)
		one(&U, argv[i]);
	pthread_mutex_init(&U.mu, NULL);
	pthread_t tid[64];
	unsigned started = 0;
	for (unsigned t = 1; t < jobs && t < U.nitems; t++)
		if (pthread_create(&tid[started], NULL, sender, &U) == 0)
			started++;
	sender(&U);
	for (unsigned t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	pthread_mutex_destroy(&U.mu);
	for (size_t i = 0; i < U.nitems; i++)
		free(U.items[i].path);
	free(U.items);
	free(U.bytes);
	free(owned);
	fprintf(stderr, "tracekit: %zu session%s uploaded, %zu already uploaded", U.sent, U.sent == 1 ? "" : "s",
	        U.skipped);
	if (U.profiles)
		fprintf(stderr, ", %zu profile%s uploaded", U.profiles, U.profiles == 1 ? "" : "s");
	fprintf(stderr, ", %zu rejected, %zu not delivered\n", U.rejected, U.failed);
	return U.rejected || U.failed ? 1 : 0;
}
