/* tracekit ingest — store the reports of Records files and session directories in a fleet store. */
#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "tracekit/store.h"
#include "tracekit/symbol.h"

TK_COMMAND(ingest, "store hang and CPU records from many sessions in a fleet store (SQLite, ClickHouse)")

static const char usage[] =
    "usage: tracekit ingest [options] INPUT...\n"
    "\n"
    "Stores every finished hang and CPU high-load record of the INPUTs (Records files, session\n"
    "directories of `tracekit monitor` or MTHawkeye, or directories holding such sessions, searched\n"
    "recursively) as one report each, with app, version, build, device, OS and session taken from\n"
    "each session's meta.json, the records themselves, then --set. A report's id is the SHA-256 of\n"
    "its content: ingesting the same input twice stores it once. Each batch is one transaction.\n"
    "Any other input the readers take (xctrace exports: .xml and .xml.gz in a tree) is stored as one\n"
    "profile report: its weight, unit, threads and every function's self and total weight, for\n"
    "`tracekit stats --db URL --metric profile.weight|fn.self:NAME|fn.total:NAME`; keys from --set.\n"
    "MetricKit payloads (a file of one, a JSON array or JSON Lines; .json/.jsonl in a tree) store each\n"
    "diagnostic as a report, and each metric payload's foreground time and hang-time histogram for\n"
    "`tracekit stats --db URL --metric hang.rate` (Apple's hang rate, docs/store.md).\n"
    "\n"
    "options:\n"
    "  --db URL          sqlite:PATH (default sqlite:tracekit.db, or $TRACEKIT_DB) or\n"
    "                    clickhouse://HOST:PORT/DB\n"
    "  --set K=V,...     fill keys the inputs lack: app, version, build, device, os, session\n"
    "  --symbols PATH    dSYMs (a directory, .dSYM, .app or file; repeat for several) that name\n"
    "                    MTHawkeye frames by image UUID, so hang signatures carry function names\n"
    "  --batch N         reports per transaction (default: all the reports of 2048 inputs in one\n"
    "                    transaction or INSERT; smaller batches cost SQLite a WAL write of every\n"
    "                    index page they touch, and ClickHouse merges)\n"
    "  --jobs N          inputs parsed in parallel (default: the number of CPUs)\n"
    "  --keep-going      report a bad input and go on with the others (exit status 1 at the end)\n"
    "  -q, --quiet       no summary line\n"
    "\n"
    "example: tracekit ingest --db sqlite:fleet.db reports/\n"
    "         tracekit stats --db sqlite:fleet.db --metric hang.duration --by version --json\n";

typedef struct ingest {
	tk_store *s;
	const tk_report_meta *meta;
	size_t batch;
	unsigned jobs;
	char **paths; /* inputs found, in order */
	size_t npaths, cap;
	size_t inputs, reports, added, live, bad, profiles, padded;
	int keep_going;
	struct timespec t0;
} ingest;

/* inputs: how many were parsed when this chunk was (the parse thread owns g->inputs) */
static int put(ingest *g, const tk_report *v, size_t n, size_t inputs)
{
	for (size_t at = 0; at < n; at += g->batch) {
		size_t k = n - at < g->batch ? n - at : g->batch, added;
		tk_error err;
		if (tk_store_put(g->s, v + at, k, &added, &err))
			return tk_cli_fail("ingest: %s", err.msg);
		g->reports += k;
		g->added += added;
	}
	if (isatty(2)) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		double dt = (double)(now.tv_sec - g->t0.tv_sec) + (double)(now.tv_nsec - g->t0.tv_nsec) / 1e9;
		fprintf(stderr, "\r%zu inputs, %zu reports (%.0f/s)   ", inputs, g->reports,
		        dt > 0 ? (double)g->reports / dt : 0);
	}
	return 0;
}

/* A parsed chunk of inputs, waiting to be stored. */
typedef struct chunk {
	ingest *g;
	tk_report_set *sets;
	size_t nsets;
	tk_report *all;
	tk_profile_report *profs;
	size_t total, nprof, inputs;
	int fail;
} chunk;

static void chunk_free(chunk *c)
{
	free(c->all);
	free(c->profs);
	for (size_t i = 0; i < c->nsets; i++)
		tk_report_set_free(&c->sets[i]);
	free(c->sets);
	free(c);
}

/* Parse a chunk of inputs on all jobs; their reports in input order. */
static chunk *parse_chunk(ingest *g, size_t from, size_t n)
{
	chunk *c = calloc(1, sizeof *c);
	tk_report_set *sets = calloc(n, sizeof *sets);
	int *rc = calloc(n, sizeof *rc);
	tk_error *errs = calloc(n, sizeof *errs);
	if (!c || !sets || !rc || !errs)
		abort();
	c->g = g;
	c->sets = sets;
	c->nsets = n;
	tk_reports_from_paths((const char *const *)g->paths + from, n, g->meta, g->jobs, sets, rc, errs);
	size_t cap = 0, pcap = 0;
	for (size_t i = 0; i < n && !c->fail; i++) {
		if (rc[i]) {
			g->bad++;
			tk_cli_fail("ingest: %s", errs[i].msg);
			if (!g->keep_going)
				c->fail = 1;
			continue;
		}
		g->inputs++;
		g->live += sets[i].live;
		if (c->total + sets[i].n > cap) {
			cap = (c->total + sets[i].n) * 2;
			c->all = realloc(c->all, cap * sizeof *c->all);
			if (!c->all)
				abort();
		}
		if (sets[i].n)
			memcpy(c->all + c->total, sets[i].v, sets[i].n * sizeof *c->all);
		c->total += sets[i].n;
		if (c->nprof + sets[i].pn > pcap) {
			pcap = (c->nprof + sets[i].pn) * 2;
			c->profs = realloc(c->profs, pcap * sizeof *c->profs);
			if (!c->profs)
				abort();
		}
		if (sets[i].pn)
			memcpy(c->profs + c->nprof, sets[i].pv, sets[i].pn * sizeof *c->profs);
		c->nprof += sets[i].pn;
	}
	free(rc), free(errs);
	c->inputs = g->inputs;
	return c;
}

/* Store a parsed chunk in batches (on the store thread while the next chunk is parsed). */
static void *store_chunk(void *arg)
{
	chunk *c = arg;
	ingest *g = c->g;
	if (!c->fail)
		c->fail = put(g, c->all, c->total, c->inputs);
	if (!c->fail && c->nprof) {
		size_t added;
		tk_error err;
		if (tk_store_put_profiles(g->s, c->profs, c->nprof, &added, &err))
			c->fail = tk_cli_fail("ingest: %s", err.msg);
		g->profiles += c->nprof;
		g->padded += added;
	}
	return NULL;
}

/* Inputs parsed, then stored in one transaction or INSERT, at a time. Measured on 1 M generated
 * reports (20 000 sessions, load ~4.7): 512 → 2048 inputs cut ClickHouse's server CPU from 13.7 s
 * to 6.1 s (each batch's id checks read the id column once; fewer, larger batches read it fewer
 * times) and SQLite's wall time from 29.7 s to 20.9 s, for 216 MB instead of 85 MB of client RSS
 * on ClickHouse (two chunks live at once: one parsed, one stored). */
#define TK_INGEST_CHUNK 2048

/* Parse chunk k + 1 while chunk k is being stored: on two cores the store's share of the time
 * (SQLite's B-tree work, or the ClickHouse round trips) no longer adds to parsing's. The store
 * handle is used by one thread at a time (the join orders them). */
static int run_chunks(ingest *g)
{
	chunk *prev = NULL;
	pthread_t tid;
	int fail = 0;
	const size_t per = TK_INGEST_CHUNK;
	for (size_t at = 0; at < g->npaths && !fail; at += per) {
		chunk *c = parse_chunk(g, at, g->npaths - at < per ? g->npaths - at : per);
		if (prev) {
			pthread_join(tid, NULL);
			fail = prev->fail;
			chunk_free(prev);
			prev = NULL;
		}
		if (fail || c->fail) {
			fail = 1;
			chunk_free(c);
			break;
		}
		if (pthread_create(&tid, NULL, store_chunk, c) != 0) {
			store_chunk(c);
			fail = c->fail;
			chunk_free(c);
			continue;
		}
		prev = c;
	}
	if (prev) {
		pthread_join(tid, NULL);
		fail |= prev->fail;
		chunk_free(prev);
	}
	return fail;
}

static int is_session(const char *dir)
{
	static const char *const names[] = {"records", "records.mtlog", "records.mmap2"};
	char p[4096];
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		if (access(p, F_OK) == 0)
			return 1;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_path(ingest *g, const char *path)
{
	if (g->npaths == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 256;
		g->paths = realloc(g->paths, g->cap * sizeof *g->paths);
		if (!g->paths)
			abort();
	}
	g->paths[g->npaths++] = strdup(path);
}

/* Collect the inputs under path: a session or Records file is one; a directory of sessions is
 * walked in name order, so runs are repeatable. */
static int find(ingest *g, const char *path, int top)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		g->bad++;
		tk_cli_fail("ingest: %s: %m", path);
		return g->keep_going ? 0 : 1;
	}
	if (!S_ISDIR(st.st_mode) || is_session(path)) {
		add_path(g, path);
		return 0;
	}
	DIR *d = opendir(path);
	if (!d) {
		g->bad++;
		tk_cli_fail("ingest: %s: %m", path);
		return g->keep_going ? 0 : 1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap)
			names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		names[n] = malloc(len);
		snprintf(names[n++], len, "%s/%s", path, e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, cmp_str);
	size_t before = g->npaths;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat s2;
		/* inside a tree, only sessions, Records files named "records" and exports (.xml, .xml.gz)
		 * are inputs */
		const char *base = strrchr(names[i], '/') + 1;
		size_t bl = strlen(base);
		int xml =
		    (bl > 4 && strcmp(base + bl - 4, ".xml") == 0) || (bl > 7 && strcmp(base + bl - 7, ".xml.gz") == 0);
		/* MetricKit payloads as an app or server saves them: .json, .jsonl (gzip'd too) */
		static const char *const mx_ext[] = {".json", ".jsonl", ".json.gz", ".jsonl.gz"};
		for (size_t k = 0; k < sizeof mx_ext / sizeof mx_ext[0]; k++) {
			size_t el = strlen(mx_ext[k]);
			xml |= bl > el && strcmp(base + bl - el, mx_ext[k]) == 0 && strcmp(base, "meta.json") != 0 &&
			       strcmp(base, "images.json") != 0 && strncmp(base, "images-", 7) != 0;
		}
		if (!rc && stat(names[i], &s2) == 0 && (S_ISDIR(s2.st_mode) || strcmp(base, "records") == 0 || xml))
			rc = find(g, names[i], 0);
		free(names[i]);
	}
	free(names);
	if (top && !rc && g->npaths == before)
		tk_cli_warn("ingest: %s holds no sessions, Records files, exports or MetricKit payloads", path);
	return rc;
}

/* --symbols: MTHawkeye frames named from dSYMs by image UUID (every address is already a call
 * site, as MTHawkeye stores them). */
static int name_from_dsyms(void *ctx, tk_profile **p, tk_error *err)
{
	tk_symbolicate_options so;
	tk_symbolicate_options_init(&so);
	so.adjust = TK_ADJUST_NONE;
	tk_profile *q = tk_symbolicate_profile(*p, ctx, &so, err);
	if (!q)
		return -1;
	tk_profile_free(*p);
	*p = q;
	return 0;
}

int cmd_ingest(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return 0;
	}
	const char *db = getenv("TRACEKIT_DB");
	if (!db || !*db)
		db = "sqlite:tracekit.db";
	const char *set = NULL, *symbols[64];
	size_t nsym = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ingest g = {.batch = 0, .jobs = ncpu > 0 ? (unsigned)ncpu : 1};
	int quiet = 0, first = 0;
	static const char *const with_value[] = {"--db", "--set", "--symbols", "--jobs", "--batch"};
	for (int i = 1; i < argc;) {
		const char *a = argv[i], *v = NULL;
		if (strcmp(a, "--") == 0) {
			first = i + 1;
			break;
		}
		if (a[0] != '-' || strcmp(a, "-") == 0) {
			first = i;
			break;
		}
		int r = 0;
		size_t k = 0;
		for (; k < sizeof with_value / sizeof with_value[0]; k++)
			if ((r = tk_cli_opt("ingest", argc, argv, &i, with_value[k], NULL, &v)) != 0)
				break;
		if (r < 0)
			return 2;
		if (r == 0) {
			if (strcmp(a, "--keep-going") == 0)
				g.keep_going = 1;
			else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
				quiet = 1;
			else
				return tk_cli_usage("ingest", "unknown option '%s'", a);
			i++;
			continue;
		}
		char *end;
		long n = k >= 3 ? strtol(v, &end, 10) : 0;
		switch (k) {
		case 0: db = v; break;
		case 1: set = v; break;
		case 2:
			if (nsym == sizeof symbols / sizeof symbols[0])
				return tk_cli_usage("ingest", "at most 64 --symbols paths");
			symbols[nsym++] = v;
			break;
		case 3:
			if (!*v || *end || n < 1 || n > 64)
				return tk_cli_usage("ingest", "--jobs wants a whole number from 1 to 64, not '%s'", v);
			g.jobs = (unsigned)n;
			break;
		default:
			if (!*v || *end || n < 1 || n > 10000000)
				return tk_cli_usage("ingest",
				                    "--batch wants a whole number from 1 to 10000000, not '%s'", v);
			g.batch = (size_t)n;
		}
	}
	if (!first || first >= argc)
		return tk_cli_usage("ingest", "no input given");
	tk_report_meta meta = {0};
	char *owned = NULL;
	tk_error err;
	if (set && tk_report_meta_parse(&meta, set, &owned, &err))
		return tk_cli_fail("ingest: %s", err.msg), 2;
	g.meta = &meta;
	tk_symbolicator *sym = NULL;
	for (size_t k = 0; k < nsym; k++) {
		if (!sym) {
			sym = tk_symbolicator_new(NULL);
			meta.name_frames = name_from_dsyms;
			meta.name_frames_ctx = sym;
		}
		if (tk_symbolicator_add_path(sym, symbols[k], &err) < 0) {
			tk_symbolicator_free(sym);
			free(owned);
			return tk_cli_fail("ingest: --symbols %s: %s", symbols[k], err.msg);
		}
	}
	g.s = tk_store_open(db, &err);
	if (!g.s) {
		tk_symbolicator_free(sym);
		free(owned);
		return tk_cli_fail("ingest: %s", err.msg);
	}
	/* measured on 1 M reports: ClickHouse spent 18 s of server CPU merging them in 5 000s, 3 s in
	 * 100 000s; SQLite 76.9 s wall, 18.5 s sys in 5 000s, 31.8 s wall, 7.2 s sys in chunks (25 600
	 * reports), because every random id/index page a batch touches is written to the WAL again */
	if (!g.batch)
		g.batch = 10000000;
	clock_gettime(CLOCK_MONOTONIC, &g.t0);
	int rc = 0;
	for (int i = first; i < argc && !rc; i++)
		rc = find(&g, argv[i], 1);
	if (!rc)
		rc = run_chunks(&g);
	for (size_t i = 0; i < g.npaths; i++)
		free(g.paths[i]);
	free(g.paths);
	if (isatty(2))
		fputc('\n', stderr);
	if (!rc && !quiet) {
		fprintf(stderr, "tracekit: %zu report%s from %zu input%s: %zu new, %zu already stored", g.reports,
		        g.reports == 1 ? "" : "s", g.inputs, g.inputs == 1 ? "" : "s", g.added, g.reports - g.added);
		if (g.live)
			fprintf(stderr, ", %zu still live (not stored until finished)", g.live);
		if (g.profiles)
			fprintf(stderr, "; %zu profile%s: %zu new, %zu already stored", g.profiles,
			        g.profiles == 1 ? "" : "s", g.padded, g.profiles - g.padded);
		fprintf(stderr, " (%s)\n", db);
	}
	tk_store_close(g.s);
	tk_symbolicator_free(sym);
	free(owned);
	if (!rc && g.bad)
		rc = 1;
	return rc;
}
