/*
 * CPU high-load and hang records (`tracekit records`): the list (text or JSON, one row per record
 * with its heaviest leaf), one record's call tree with addresses and image offsets, and a hang's
 * per-thread backtraces. Names are shown with control characters and invalid UTF-8 escaped.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracekit/write.h"
#include "util/mem.h"
#include "util/text.h"
#include "write/wutil.h"

#define SH(s) tk_text_shown(s)

static void fmt_time(double unix_s, int use_utc, char *buf, size_t n)
{
	if (!isfinite(unix_s) || unix_s < 0 || unix_s > 1e11) {
		snprintf(buf, n, "?");
		return;
	}
	time_t t = (time_t)unix_s;
	struct tm tm;
	if (use_utc)
		gmtime_r(&t, &tm);
	else
		localtime_r(&t, &tm);
	size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
	if (use_utc || tm.tm_gmtoff == 0) {
		snprintf(buf + k, n - k, "Z");
	} else {
		long off = tm.tm_gmtoff, a = labs(off);
		snprintf(buf + k, n - k, "%c%02ld:%02ld", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
	}
}

/* The frame with the most samples of its own (the leaf most often sampled), by display name. */
typedef struct top {
	char name[256];
	tk_frame_id frame;
	uint64_t self, total;
} top;

/* The thread's frames (or stacks) in the order its stacks first meet them, each cell's path root
 * first: the order a profile holding this thread alone numbers them in, so ties break the same
 * whatever else the profile holds. order gets them (frames: ids; stacks: ids), rank[id] = 1 + the
 * position (0 = not met). Returns how many. */
static size_t first_met(const tk_profile *p, tk_thread_id t, int stacks, uint32_t *order, uint32_t *rank)
{
	size_t n, k = 0, cap = 0;
	const tk_stack_weight *cells = tk_thread_stacks(p, t, &n);
	uint32_t *path = NULL;
	for (size_t i = 0; i < n; i++) {
		size_t d = 0;
		for (tk_stack_id s = cells[i].stack; s; s = tk_stack_get(p, s)->parent) {
			uint32_t id = stacks ? s : tk_stack_get(p, s)->frame;
			if (stacks && rank[id]) /* every stack above it was met with it */
				break;
			TK_GROW(path, cap, d + 1);
			path[d++] = id;
		}
		for (size_t j = d; j-- > 0;)
			if (!rank[path[j]])
				order[k] = path[j], rank[path[j]] = (uint32_t)++k;
	}
	free(path);
	return k;
}

static void top_frame(const tk_profile *p, tk_thread_id t, top *res)
{
	size_t n;
	memset(res, 0, sizeof *res);
	if (t >= tk_thread_count(p))
		return;
	const tk_stack_weight *cells = tk_thread_stacks(p, t, &n);
	size_t nf = tk_frame_count(p) + 1;
	uint64_t *self = calloc(nf, sizeof *self);
	uint32_t *order = calloc(nf, sizeof *order), *rank = calloc(nf, sizeof *rank);
	if (!self || !order || !rank) {
		free(self), free(order), free(rank);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const tk_stack_node *s = tk_stack_get(p, cells[i].stack);
		if (s)
			self[s->frame] += cells[i].weight;
		res->total += cells[i].weight;
	}
	size_t nmet = first_met(p, t, 0, order, rank);
	/* frames sharing a name (one function sampled at several PCs) count together */
	for (size_t i = 0; i < nmet; i++) {
		size_t f = order[i];
		if (!self[f])
			continue;
		const tk_frame *fr = tk_frame_get(p, (tk_frame_id)f);
		uint64_t sum = self[f];
		if (fr->name)
			for (size_t j = i + 1; j < nmet; j++) {
				size_t g = order[j];
				if (self[g] && tk_frame_get(p, (tk_frame_id)g)->name == fr->name) {
					sum += self[g];
					self[g] = 0;
				}
			}
		if (sum > res->self) {
			res->self = sum;
			res->frame = (tk_frame_id)f;
		}
	}
	if (res->frame) {
		char buf[32];
		const tk_frame *f = tk_frame_get(p, res->frame);
		const tk_binary *b = tk_binary_get(p, f->binary);
		if (!f->name && b) /* unnamed: say which image and where in it */
			snprintf(res->name, sizeof res->name, "%s+0x%llx", tk_string(p, b->name),
			         (unsigned long long)(f->addr - b->load_addr));
		else
			snprintf(res->name, sizeof res->name, "%s", tk_frame_label(p, res->frame, buf));
	}
	free(self);
	free(order);
	free(rank);
}

struct tk_record_list {
	FILE *out;
	int json, utc;
	size_t n;
	json_t *arr;
};

tk_record_list *tk_record_list_begin(FILE *out, size_t n, int json, int use_utc)
{
	tk_record_list *l = tk_xcalloc(1, sizeof *l);
	l->out = out, l->json = json, l->utc = use_utc, l->n = n;
	if (json)
		l->arr = json_array();
	else if (n)
		fprintf(out, "%-13s %-16s %-25s %10s %8s %8s  %-14s %s\n", "kind", "key",
		        use_utc ? "start (UTC)" : "start", "duration", "avg CPU", "samples", "thread",
		        "top frame (self samples)");
	return l;
}

/* The facts of a record, as the reader set them (profile.h's shared attribute names). */
typedef struct record_view {
	const char *kind_name, *key, *thread, *where;
	double start, duration, avg_cpu;
	uint64_t samples, tid, nthreads;
	uint32_t suppressed;
	int live, truncated, hang;
} record_view;

/* An event's number attribute, else dflt. */
static double num_or(const tk_profile *p, tk_event_id e, const char *key, double dflt)
{
	double v = tk_event_num(p, e, key);
	return v == v ? v : dflt;
}

void tk_record_list_add(tk_record_list *l, const tk_profile *p, tk_event_id e)
{
	const tk_event *ev = tk_event_get(p, e);
	if (!ev)
		return;
	top tp;
	top_frame(p, ev->thread, &tp);
	record_view rv = {tk_string(p, ev->name),
	                  tk_string(p, ev->key),
	                  tk_event_str(p, e, "thread") ? tk_event_str(p, e, "thread") : "",
	                  tk_event_str(p, e, "where") ? tk_event_str(p, e, "where") : "",
	                  ev->wall,
	                  num_or(p, e, "duration", ev->duration == UINT64_MAX ? NAN : (double)ev->duration / 1e9),
	                  num_or(p, e, "cpu.average", NAN),
	                  (uint64_t)num_or(p, e, "samples", (double)ev->samples),
	                  (uint64_t)num_or(p, e, "tid", 0),
	                  (uint64_t)num_or(p, e, "threads", 0),
	                  (uint32_t)num_or(p, e, "suppressed", 0),
	                  (ev->flags & TK_EVENT_LIVE) != 0,
	                  (ev->flags & TK_EVENT_TRUNCATED) != 0,
	                  !isnan(tk_event_num(p, e, "suppressed"))};
	const record_view *ri = &rv;
	char when[64], dur[32], cpu[32], thr[64], topbuf[320];
	fmt_time(ri->start, l->json || l->utc, when, sizeof when);
	if (l->json) {
		json_t *o = json_object();
		json_object_set_new(o, "kind", json_string(ri->kind_name));
		json_object_set_new(o, "key", json_string(ri->key));
		json_object_set_new(o, "start", isfinite(ri->start) ? json_real(ri->start) : json_null());
		json_object_set_new(o, "start_utc", json_string(when));
		json_object_set_new(o, "duration_s", isfinite(ri->duration) ? json_real(ri->duration) : json_null());
		json_object_set_new(o, "avg_cpu_percent", isfinite(ri->avg_cpu) ? json_real(ri->avg_cpu) : json_null());
		json_object_set_new(o, "samples", json_integer((json_int_t)ri->samples));
		json_object_set_new(o, "tid", json_integer((json_int_t)ri->tid));
		json_object_set_new(o, "thread", json_string(ri->thread));
		json_object_set_new(o, "live", json_boolean(ri->live));
		json_object_set_new(o, "truncated", json_boolean(ri->truncated));
		if (ri->hang) {
			json_object_set_new(o, "suppressed", json_integer(ri->suppressed));
			json_object_set_new(o, "threads_captured", json_integer((json_int_t)ri->nthreads));
		}
		if (tp.frame) {
			const tk_frame *f = tk_frame_get(p, tp.frame);
			json_t *tf = json_object();
			char addr[32];
			snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)f->addr);
			json_object_set_new(tf, "name", json_string(tp.name));
			json_object_set_new(tf, "addr", json_string(addr));
			if (f->file) {
				json_object_set_new(tf, "file", json_string(tk_string(p, f->file)));
				json_object_set_new(tf, "line", json_integer(f->line));
			}
			json_object_set_new(tf, "self_samples", json_integer((json_int_t)tp.self));
			json_object_set_new(o, "top_frame", tf);
		} else {
			json_object_set_new(o, "top_frame", json_null());
		}
		json_object_set_new(o, "where", json_string(ri->where));
		json_array_append_new(l->arr, o);
	} else {
		snprintf(dur, sizeof dur, isfinite(ri->duration) ? "%.2f s" : "?", ri->duration);
		snprintf(cpu, sizeof cpu, isfinite(ri->avg_cpu) ? "%.1f %%" : "-", ri->avg_cpu);
		if (ri->tid && *ri->thread)
			snprintf(thr, sizeof thr, "%s (%llu)", SH(ri->thread), (unsigned long long)ri->tid);
		else
			snprintf(thr, sizeof thr, "%s", *ri->thread ? SH(ri->thread) : "all");
		if (tp.frame)
			snprintf(topbuf, sizeof topbuf, "%s (%.0f %%)", SH(tp.name),
			         tp.total ? 100.0 * (double)tp.self / (double)tp.total : 0.0);
		else
			snprintf(topbuf, sizeof topbuf, "-");
		fprintf(l->out, "%-13s %-16s %-25s %10s %8s %8llu  %-14s %s%s\n", ri->kind_name, SH(ri->key), when, dur,
		        cpu, (unsigned long long)ri->samples, thr, topbuf,
		        ri->live        ? "  [live]"
		        : ri->truncated ? "  [truncated]"
		                        : "");
	}
}

void tk_record_list_abort(tk_record_list *l)
{
	if (!l)
		return;
	json_decref(l->arr);
	free(l);
}

int tk_record_list_end(tk_record_list *l, tk_error *err)
{
	FILE *out = l->out;
	if (l->json) {
		char *s = json_dumps(l->arr, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		fprintf(out, "%s\n", s ? s : "[]");
		free(s);
	} else if (!l->n) {
		fprintf(out, "no CPU high-load or hang records\n");
	}
	tk_record_list_abort(l);
	return tk_wu_finish(out, "records", err);
}

typedef struct tree {
	FILE *out;
	const tk_profile *p;
	uint64_t *total, *self;
	tk_stack_id **kids;
	size_t *nkids, *capkids;
	uint64_t all;
	double min_percent;
	size_t hidden;
	uint32_t *rank; /* stacks in the order the thread meets them (first_met) */
} tree;

/* qsort_r: children heaviest first, then in stack order (the context is the tree) */
static int by_total(const void *a, const void *b, void *ctx)
{
	const tree *T = ctx;
	tk_stack_id x = *(const tk_stack_id *)a, y = *(const tk_stack_id *)b;
	if (T->total[x] != T->total[y])
		return T->total[x] > T->total[y] ? -1 : 1;
	return T->rank[x] < T->rank[y] ? -1 : T->rank[x] > T->rank[y];
}

static void print_node(tree *T, tk_stack_id s, int depth)
{
	const tk_profile *p = T->p;
	double pct = T->all ? 100.0 * (double)T->total[s] / (double)T->all : 0;
	if (pct < T->min_percent) {
		T->hidden++;
		return;
	}
	const tk_stack_node *n = tk_stack_get(p, s);
	const tk_frame *f = tk_frame_get(p, n->frame);
	char buf[32];
	fprintf(T->out, "%8llu %5.1f%%  %*s%s", (unsigned long long)T->total[s], pct, depth * 2, "",
	        SH(tk_frame_label(p, n->frame, buf)));
	const tk_binary *b = tk_binary_get(p, f->binary);
	if (f->name)
		fprintf(T->out, "  0x%llx", (unsigned long long)f->addr);
	else if (b) /* unnamed: at least say which image and where in it, as atos -l would need */
		fprintf(T->out, "  %s+0x%llx", SH(tk_string(p, b->name)), (unsigned long long)(f->addr - b->load_addr));
	if (f->file)
		fprintf(T->out, "  %s:%u", SH(tk_string(p, f->file)), f->line);
	if (f->flags & TK_FRAME_INLINED)
		fprintf(T->out, "  [inlined]");
	if (T->self[s] && T->nkids[s])
		fprintf(T->out, "  [self %llu]", (unsigned long long)T->self[s]);
	putc('\n', T->out);
	if (T->nkids[s])
		qsort_r(T->kids[s], T->nkids[s], sizeof(tk_stack_id), by_total, T);
	for (size_t i = 0; i < T->nkids[s]; i++)
		print_node(T, T->kids[s][i], depth + 1);
}

static void add_kid(tree *T, tk_stack_id parent, tk_stack_id s)
{
	if (T->capkids[parent] == T->nkids[parent]) {
		T->capkids[parent] = T->capkids[parent] ? 2 * T->capkids[parent] : 4;
		T->kids[parent] = realloc(T->kids[parent], T->capkids[parent] * sizeof(tk_stack_id));
		if (!T->kids[parent])
			abort();
	}
	T->kids[parent][T->nkids[parent]++] = s;
}

int tk_write_record_tree(FILE *out, const tk_profile *p, tk_thread_id t, double min_percent, tk_error *err)
{
	size_t ns = tk_stack_count(p) + 1, n;
	tree T = {out,
	          p,
	          calloc(ns, sizeof(uint64_t)),
	          calloc(ns, sizeof(uint64_t)),
	          calloc(ns, sizeof(tk_stack_id *)),
	          calloc(ns, sizeof(size_t)),
	          calloc(ns, sizeof(size_t)),
	          0,
	          min_percent,
	          0,
	          calloc(ns, sizeof(uint32_t))};
	uint32_t *order = calloc(ns, sizeof(uint32_t));
	if (!T.total || !T.self || !T.kids || !T.nkids || !T.capkids || !T.rank || !order)
		abort();
	first_met(p, t, 1, order, T.rank);
	free(order);
	const tk_stack_weight *cells = tk_thread_stacks(p, t, &n);
	for (size_t i = 0; i < n; i++) {
		T.self[cells[i].stack] += cells[i].weight;
		T.all += cells[i].weight;
		for (tk_stack_id s = cells[i].stack; s; s = tk_stack_get(p, s)->parent)
			T.total[s] += cells[i].weight;
	}
	/* the loader made only this record's stacks, so every stack with weight is in its tree */
	for (tk_stack_id s = 1; s < ns; s++)
		if (T.total[s])
			add_kid(&T, tk_stack_get(p, s)->parent, s);
	fprintf(out, "%s: %llu samples\n", SH(tk_string(p, tk_thread_get(p, t)->name)), (unsigned long long)T.all);
	if (T.nkids[0])
		qsort_r(T.kids[0], T.nkids[0], sizeof(tk_stack_id), by_total, &T);
	for (size_t i = 0; i < T.nkids[0]; i++)
		print_node(&T, T.kids[0][i], 0);
	if (T.hidden)
		fprintf(out, "(%zu subtrees below %g%% hidden; --min-percent 0 shows all)\n", T.hidden, min_percent);
	for (size_t s = 0; s < ns; s++)
		free(T.kids[s]);
	free(T.kids);
	free(T.nkids);
	free(T.capkids);
	free(T.total);
	free(T.self);
	free(T.rank);
	return tk_wu_finish(out, "records tree", err);
}

static int write_threads(FILE *out, const tk_profile *p, tk_event_id e, tk_error *err);

int tk_write_record_threads(FILE *out, const tk_profile *p, tk_error *err)
{
	return write_threads(out, p, 0, err);
}

int tk_write_event_threads(FILE *out, const tk_profile *p, tk_event_id e, tk_error *err)
{
	return write_threads(out, p, e ? e : UINT32_MAX, err);
}

/* Every thread (e = 0) or the context threads of event e. */
static int write_threads(FILE *out, const tk_profile *p, tk_event_id e, tk_error *err)
{
	int first = 1;
	for (size_t t = 0; t < tk_thread_count(p); t++) {
		const tk_thread *th = tk_thread_get(p, (tk_thread_id)t);
		if (e && (th->event != e || th->role != TK_ROLE_CONTEXT))
			continue;
		size_t n;
		const tk_stack_weight *c = tk_thread_stacks(p, (tk_thread_id)t, &n);
		fprintf(out, "%sthread %llu %s\n", first ? "" : "\n", (unsigned long long)th->tid,
		        SH(tk_string(p, th->name)));
		first = 0;
		if (!n)
			continue;
		uint32_t d = tk_stack_depth(p, c[0].stack);
		tk_frame_id *fr = malloc((d ? d : 1) * sizeof *fr);
		if (!fr)
			abort();
		size_t k = tk_stack_frames(p, c[0].stack, fr, d);
		for (size_t j = k, num = 0; j-- > 0; num++) { /* leaf first, as a backtrace reads */
			const tk_frame *f = tk_frame_get(p, fr[j]);
			char buf[32];
			fprintf(out, "  #%-3zu 0x%016llx  %s", num, (unsigned long long)f->addr,
			        SH(f->name ? tk_string(p, f->name) : tk_frame_label(p, fr[j], buf)));
			if (f->file)
				fprintf(out, "  %s:%u", SH(tk_string(p, f->file)), f->line);
			if (f->flags & TK_FRAME_INLINED)
				fprintf(out, "  [inlined]");
			putc('\n', out);
		}
		free(fr);
	}
	return tk_wu_finish(out, "records threads", err);
}
