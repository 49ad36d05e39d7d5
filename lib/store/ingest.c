/* The one ingest entry point (tk_store_ingest): inputs found in trees, read → named → summarised on
 * several threads a chunk at a time, each chunk stored while the next is parsed; and the namer that
 * names Apple reports' and MTHawkeye records' frames from dSYMs on the way (tk_store_namer), which
 * `tracekit ingest`, `serve --ingest` and anything else reading reports into the store share. Apart
 * from inputs.c so the upload-bundle fuzzer links without the symbolicator. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/internal.h"
#include "tracekit/apple_report.h"
#include "tracekit/metrickit.h"
#include "tracekit/read.h"
#include "tracekit/symbol.h"
#include "util/mem.h"

/* ---- naming frames from dSYMs ---- */

struct tk_store_namer {
	tk_symbolicator *s;
	tk_apple_report_symbols *rs; /* image handles kept across reports */
	pthread_mutex_t mu;          /* a symbolicator is not thread-safe: one naming at a time */
};

tk_store_namer *tk_store_namer_new(tk_symbolicator *s)
{
	tk_store_namer *n = tk_xcalloc(1, sizeof *n);
	n->s = s;
	n->rs = tk_apple_report_symbols_new(s);
	pthread_mutex_init(&n->mu, NULL);
	return n;
}

void tk_store_namer_free(tk_store_namer *n)
{
	if (!n)
		return;
	tk_apple_report_symbols_free(n->rs);
	pthread_mutex_destroy(&n->mu);
	free(n);
}

/* MTHawkeye frames by image UUID (every address is already a call site, as MTHawkeye stores them). */
static int name_mthawkeye(void *ctx, tk_profile **p, tk_error *err)
{
	tk_store_namer *n = ctx;
	tk_symbolicate_options so;
	tk_symbolicate_options_init(&so);
	so.adjust = TK_ADJUST_NONE;
	pthread_mutex_lock(&n->mu);
	tk_profile *q = tk_symbolicate_profile(*p, n->s, &so, err);
	pthread_mutex_unlock(&n->mu);
	if (!q)
		return -1;
	tk_profile_free(*p);
	*p = q;
	return 0;
}

/* A frame resolved to an inline chain (innermost first) becomes one frame per name, as the
 * symbolicated text writes them on lines of their own: leaf-first lists (crash reports) get the
 * chain in place; spindump trees (root first, with depths) get it outermost first, each deeper
 * frame of the subtree pushed down by what its ancestors gained. */
static void frame_named(tk_apple_report_frame *o, const tk_apple_report_frame *f, const tk_apple_report_sym *s)
{
	memset(o, 0, sizeof *o);
	o->image = f->image;
	o->addr = f->addr;
	o->symbol = tk_xstrdup(s->function);
	o->file = s->file ? tk_xstrdup(s->file) : NULL;
	o->line = s->line;
	o->count = f->count;
	o->depth = f->depth;
	o->kernel = f->kernel;
	o->line_no = SIZE_MAX;
}

static void expand_thread(tk_apple_report_thread *t, int tree)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nframes; i++)
		n += t->frames[i].nsym ? t->frames[i].nsym : 1;
	if (n == t->nframes && n) { /* no inlining: rename in place */
		int any = 0;
		for (size_t i = 0; i < t->nframes; i++)
			any |= t->frames[i].nsym != 0;
		if (!any)
			return;
	}
	tk_apple_report_frame *v = tk_xcalloc(n ? n : 1, sizeof *v);
	uint64_t *gain = tree ? tk_xcalloc(t->nframes + 2, sizeof *gain) : NULL; /* by original depth */
	size_t k = 0;
	uint32_t prev = 0;
	for (size_t i = 0; i < t->nframes; i++) {
		tk_apple_report_frame *f = &t->frames[i];
		size_t m = f->nsym;
		uint64_t mine = 0;
		uint32_t d = f->depth;
		if (tree) { /* depths as the profile builder reads them: 1 … one deeper than the last */
			if (d < 1)
				d = 1;
			if (d > prev + 1)
				d = prev + 1;
			prev = d;
			mine = gain[d - 1];
			gain[d] = mine + (m ? m - 1 : 0);
		}
		if (!m) {
			v[k] = *f;
			f->symbol = NULL, f->file = NULL, f->sym = NULL, f->nsym = 0; /* moved */
			if (tree)
				v[k].depth = (uint32_t)(d + mine);
			k++;
			continue;
		}
		for (size_t q = 0; q < m; q++) {
			/* leaf-first: innermost first as resolved; root-first trees: outermost first */
			const tk_apple_report_sym *s = &f->sym[tree ? m - 1 - q : q];
			frame_named(&v[k], f, s);
			if (tree)
				v[k].depth = (uint32_t)(d + mine + q);
			k++;
		}
	}
	for (size_t i = 0; i < t->nframes; i++) {
		tk_apple_report_frame *f = &t->frames[i];
		free(f->symbol);
		free(f->file);
		/* f->sym is in the report's sym_pool, freed with the report */
	}
	free(t->frames);
	free(gain);
	t->frames = v;
	t->nframes = k;
}

/* An Apple report read, named by the symbolication `tracekit symbolicate` does (report_sym.c: the
 * caller-frame rule, Swift names as atos prints them), into p. */
static int read_report_named(void *ctx, tk_input *in, tk_profile *p, tk_error *err)
{
	tk_store_namer *n = ctx;
	/* a profile needs no JSON tree of the frames: the .ips scanner reads them */
	tk_apple_report *r = tk_apple_report_read_ex(in, TK_APPLE_REPORT_TEXT_ONLY, err);
	if (!r)
		return -1;
	pthread_mutex_lock(&n->mu);
	int rc = tk_apple_report_symbolicate(r, n->rs, NULL, err);
	pthread_mutex_unlock(&n->mu);
	if (!rc)
		for (size_t i = 0; i < r->nthreads; i++)
			expand_thread(&r->threads[i], r->format == TK_APPLE_SPINDUMP);
	if (!rc)
		rc = tk_apple_report_to_profile(r, p, err);
	tk_apple_report_free(r);
	return rc;
}

void tk_store_namer_meta(tk_store_namer *n, tk_report_meta *meta)
{
	meta->name_frames = name_mthawkeye;
	meta->name_frames_ctx = n;
	meta->read_report = read_report_named;
	meta->read_report_ctx = n;
}

/* ---- finding inputs ---- */

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

int tk_store_tree_input(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t bl = strlen(base);
	if (strcmp(base, "records") == 0 || (bl > 4 && strcmp(base + bl - 4, ".xml") == 0) ||
	    (bl > 7 && strcmp(base + bl - 7, ".xml.gz") == 0))
		return 1;
	/* by content: Apple's reports and MetricKit payloads, whatever they are called */
	tk_error err;
	tk_input *in = tk_input_open(path, &err);
	if (!in)
		return 0;
	size_t n;
	const unsigned char *head = tk_input_head(in, &n);
	int yes = tk_apple_report_sniff(head, n) != 0 || tk_reader_metrickit.sniff(head, n);
	tk_input_close(in);
	return yes;
}

typedef struct ingest {
	tk_store *s;
	const tk_store_ingest_options *o;
	tk_report_meta meta;
	size_t batch;
	unsigned jobs;
	char **paths; /* inputs found, in order */
	size_t npaths, cap;
	tk_store_ingest_result *r;
	struct timespec t0;
	pthread_mutex_t mu; /* the store and r's counts: the store thread's and the readers' flushes */
} ingest;

static void say(const ingest *g, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(const ingest *g, int error, const char *fmt, ...)
{
	if (!g->o->message)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	g->o->message(g->o->ctx, error, msg);
}

static void add_path(ingest *g, const char *path)
{
	TK_GROW(g->paths, g->cap, g->npaths + 1);
	g->paths[g->npaths++] = tk_xstrdup(path);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collect the inputs under path: a session or a file is one; a directory of sessions is walked in
 * name order, so runs are repeatable. */
static int find(ingest *g, const char *path, int top)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		g->r->bad++;
		say(g, 1, "%s: %s", path, strerror(errno));
		return g->o->keep_going ? 0 : 1;
	}
	if (!S_ISDIR(st.st_mode) || is_session(path)) {
		add_path(g, path);
		return 0;
	}
	DIR *d = opendir(path);
	if (!d) {
		g->r->bad++;
		say(g, 1, "%s: %s", path, strerror(errno));
		return g->o->keep_going ? 0 : 1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		TK_GROW(names, cap, n + 1);
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		names[n] = tk_xmalloc(len);
		snprintf(names[n++], len, "%s/%s", path, e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	size_t before = g->npaths;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat s2;
		/* inside a tree: sessions, Records files named "records", exports (.xml, .xml.gz), and
		 * Apple's reports and MetricKit payloads (by content) */
		if (!rc && stat(names[i], &s2) == 0 &&
		    (S_ISDIR(s2.st_mode) || (S_ISREG(s2.st_mode) && tk_store_tree_input(names[i]))))
			rc = find(g, names[i], 0);
		free(names[i]);
	}
	free(names);
	if (top && !rc && g->npaths == before)
		say(g, 0, "%s holds no sessions, Records files, exports, Apple reports or MetricKit payloads", path);
	return rc;
}

/* ---- parse a chunk while the previous one is stored ---- */

static double elapsed(const ingest *g)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - g->t0.tv_sec) + (double)(now.tv_nsec - g->t0.tv_nsec) / 1e9;
}

/* inputs: how many were parsed when this chunk was (the parse thread owns r->inputs) */
static int put(ingest *g, const tk_report *v, size_t n, size_t inputs, tk_error *err)
{
	for (size_t at = 0; at < n; at += g->batch) {
		size_t k = n - at < g->batch ? n - at : g->batch, added;
		if (tk_store_put(g->s, v + at, k, &added, err))
			return -1;
		g->r->reports += k;
		g->r->added += added;
	}
	if (g->o->progress)
		g->o->progress(g->o->ctx, inputs, g->r->reports, elapsed(g));
	return 0;
}

/* The reports a JSON Lines file hands over while it is read (tk_report_meta.flush), stored at once. */
static int flush_set(void *ctx, const tk_report_set *set, tk_error *err)
{
	ingest *g = ctx;
	pthread_mutex_lock(&g->mu);
	int rc = put(g, set->v, set->n, g->r->inputs, err);
	pthread_mutex_unlock(&g->mu);
	return rc;
}

/* A parsed chunk of inputs, waiting to be stored. */
typedef struct chunk {
	ingest *g;
	tk_report_set *sets;
	size_t nsets;
	tk_report *all;
	tk_profile_report *profs;
	size_t total, nprof, inputs;
	int fail; /* 1: a bad input (already said); -1: the store failed (err) */
	tk_error err;
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
	chunk *c = tk_xcalloc(1, sizeof *c);
	tk_report_set *sets = tk_xcalloc(n, sizeof *sets);
	int *rc = tk_xcalloc(n, sizeof *rc);
	tk_error *errs = tk_xcalloc(n, sizeof *errs);
	c->g = g;
	c->sets = sets;
	c->nsets = n;
	tk_reports_from_paths((const char *const *)g->paths + from, n, &g->meta, g->jobs, sets, rc, errs);
	size_t cap = 0, pcap = 0;
	for (size_t i = 0; i < n && !c->fail; i++) {
		if (rc[i]) {
			g->r->bad++;
			say(g, 1, "%s", errs[i].msg);
			if (!g->o->keep_going)
				c->fail = 1;
			continue;
		}
		g->r->inputs++;
		g->r->live += sets[i].live;
		if (c->total + sets[i].n > cap) {
			cap = (c->total + sets[i].n) * 2;
			c->all = tk_xrealloc(c->all, cap * sizeof *c->all);
		}
		if (sets[i].n)
			memcpy(c->all + c->total, sets[i].v, sets[i].n * sizeof *c->all);
		c->total += sets[i].n;
		if (c->nprof + sets[i].pn > pcap) {
			pcap = (c->nprof + sets[i].pn) * 2;
			c->profs = tk_xrealloc(c->profs, pcap * sizeof *c->profs);
		}
		if (sets[i].pn)
			memcpy(c->profs + c->nprof, sets[i].pv, sets[i].pn * sizeof *c->profs);
		c->nprof += sets[i].pn;
	}
	free(rc), free(errs);
	c->inputs = g->r->inputs;
	return c;
}

/* Store a parsed chunk in batches (on the store thread while the next chunk is parsed). */
static void *store_chunk(void *arg)
{
	chunk *c = arg;
	ingest *g = c->g;
	pthread_mutex_lock(&g->mu);
	if (!c->fail && put(g, c->all, c->total, c->inputs, &c->err))
		c->fail = -1;
	if (!c->fail && c->nprof) {
		size_t added;
		if (tk_store_put_profiles(g->s, c->profs, c->nprof, &added, &c->err))
			c->fail = -1;
		g->r->profiles += c->nprof;
		g->r->padded += added;
	}
	pthread_mutex_unlock(&g->mu);
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
 * handle is used by one thread at a time (the join orders them). Returns 0, 1 (a bad input, said)
 * or -1 with err (the store failed). */
static int run_chunks(ingest *g, tk_error *err)
{
	chunk *prev = NULL;
	pthread_t tid;
	int fail = 0;
	const size_t per = TK_INGEST_CHUNK;
#define TK_CHUNK_DONE(c)                                                                                               \
	do {                                                                                                           \
		if ((c)->fail < 0 && fail >= 0) {                                                                      \
			*err = (c)->err;                                                                               \
			fail = -1;                                                                                     \
		} else if ((c)->fail && !fail)                                                                         \
			fail = 1;                                                                                      \
		chunk_free(c);                                                                                         \
	} while (0)
	for (size_t at = 0; at < g->npaths && !fail; at += per) {
		chunk *c = parse_chunk(g, at, g->npaths - at < per ? g->npaths - at : per);
		if (prev) {
			pthread_join(tid, NULL);
			TK_CHUNK_DONE(prev);
			prev = NULL;
		}
		if (fail || c->fail) {
			if (!fail)
				fail = 1;
			chunk_free(c);
			break;
		}
		if (pthread_create(&tid, NULL, store_chunk, c) != 0) {
			store_chunk(c);
			TK_CHUNK_DONE(c);
			continue;
		}
		prev = c;
	}
	if (prev) {
		pthread_join(tid, NULL);
		TK_CHUNK_DONE(prev);
	}
#undef TK_CHUNK_DONE
	return fail;
}

int tk_store_ingest(tk_store *s, const char *const *paths, size_t n, const tk_store_ingest_options *o,
                    tk_store_ingest_result *r, tk_error *err)
{
	static const tk_store_ingest_options none = {0};
	tk_store_ingest_result local;
	if (!o)
		o = &none;
	if (!r)
		r = &local;
	memset(r, 0, sizeof *r);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ingest g = {.s = s, .o = o, .r = r, .jobs = o->jobs ? o->jobs : ncpu > 0 ? (unsigned)ncpu : 1};
	if (o->meta)
		g.meta = *o->meta;
	/* JSON Lines files store their reports a few thousand at a time while they are read */
	g.meta.flush = flush_set;
	g.meta.flush_ctx = &g;
	pthread_mutex_init(&g.mu, NULL);
	tk_store_namer *namer = NULL;
	if (o->symbols) {
		namer = tk_store_namer_new(o->symbols);
		tk_store_namer_meta(namer, &g.meta);
	}
	/* measured on 1 M reports: ClickHouse spent 18 s of server CPU merging them in 5 000s, 3 s in
	 * 100 000s; SQLite 76.9 s wall, 18.5 s sys in 5 000s, 31.8 s wall, 7.2 s sys in chunks (25 600
	 * reports), because every random id/index page a batch touches is written to the WAL again */
	g.batch = o->batch ? o->batch : 10000000;
	clock_gettime(CLOCK_MONOTONIC, &g.t0);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = find(&g, paths[i], 1);
	if (!rc)
		rc = run_chunks(&g, err);
	if (!rc && r->added)
		tk_store_ingested(s, r->added);
	for (size_t i = 0; i < g.npaths; i++)
		free(g.paths[i]);
	free(g.paths);
	tk_store_namer_free(namer);
	pthread_mutex_destroy(&g.mu);
	return rc;
}
