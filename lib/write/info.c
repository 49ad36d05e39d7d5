/*
 * A profile's summary (`tracekit info`): metadata, time span, and every process and thread with
 * its samples and weight, heaviest first. Text for people, JSON for scripts.
 */
#include <inttypes.h>
#include <string.h>
#include <stdlib.h>

#include "tracekit/write.h"
#include "util/mem.h"
#include "util/text.h"
#include "write/wutil.h"

typedef struct pgroup {
	int64_t pid;
	tk_str name;
	uint64_t weight, samples;
	tk_thread_id *threads;
	size_t nthreads;
} pgroup;

typedef struct summary {
	pgroup *g;
	size_t ng;
	uint64_t tmin, tmax;
} summary;

/* qsort_r's context: the profile whose threads are sorted */
static int by_thread_weight(const void *a, const void *b, void *ctx)
{
	const tk_profile *p = ctx;
	const tk_thread *x = tk_thread_get(p, *(const tk_thread_id *)a),
	                *y = tk_thread_get(p, *(const tk_thread_id *)b);
	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return 0;
}

static int by_group_weight(const void *a, const void *b)
{
	const pgroup *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Threads grouped by process (pid and name), both heaviest first. Groups are made in the order
 * their first thread comes (so ties sort as before) through a hash of (pid, name): a fleet of
 * MetricKit payloads has tens of thousands of processes, and a scan of the groups per thread
 * (with a thread array of every group sized for all threads) was quadratic in time and memory. */
static void summarize(const tk_profile *p, summary *s)
{
	size_t nt = tk_thread_count(p);
	s->g = tk_xcalloc(nt ? nt : 1, sizeof *s->g);
	s->ng = 0;
	s->tmin = UINT64_MAX, s->tmax = 0;
	size_t cap = 16;
	while (cap < 2 * nt)
		cap <<= 1;
	size_t *slot = tk_xcalloc(cap, sizeof *slot); /* group index + 1, 0 = empty */
	size_t *gof = tk_xmalloc((nt ? nt : 1) * sizeof *gof);
	for (tk_thread_id t = 0; t < nt; t++) {
		const tk_thread *th = tk_thread_get(p, t);
		if (th->t_min <= th->t_max) {
			if (th->t_min < s->tmin)
				s->tmin = th->t_min;
			if (th->t_max > s->tmax)
				s->tmax = th->t_max;
		}
		uint64_t h =
		    (uint64_t)th->pid * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)th->process * 0xc2b2ae3d27d4eb4fULL);
		h ^= h >> 29;
		size_t i = (size_t)h & (cap - 1);
		while (slot[i] && !(s->g[slot[i] - 1].pid == th->pid && s->g[slot[i] - 1].name == th->process))
			i = (i + 1) & (cap - 1);
		if (!slot[i]) {
			s->g[s->ng].pid = th->pid;
			s->g[s->ng].name = th->process;
			slot[i] = ++s->ng;
		}
		size_t k = slot[i] - 1;
		gof[t] = k;
		s->g[k].weight += th->weight;
		s->g[k].samples += th->samples;
		s->g[k].nthreads++;
	}
	free(slot);
	for (size_t k = 0; k < s->ng; k++) {
		s->g[k].threads = tk_xmalloc(s->g[k].nthreads * sizeof *s->g[k].threads);
		s->g[k].nthreads = 0;
	}
	for (tk_thread_id t = 0; t < nt; t++) {
		pgroup *g = &s->g[gof[t]];
		g->threads[g->nthreads++] = t;
	}
	free(gof);
	for (size_t k = 0; k < s->ng; k++)
		qsort_r(s->g[k].threads, s->g[k].nthreads, sizeof *s->g[k].threads, by_thread_weight, (void *)p);
	qsort(s->g, s->ng, sizeof *s->g, by_group_weight);
}

static void summary_free(summary *s)
{
	for (size_t k = 0; k < s->ng; k++)
		free(s->g[k].threads);
	free(s->g);
}

int tk_write_info_json(FILE *out, const tk_profile *p, const char *file, tk_error *err)
{
	summary s;
	summarize(p, &s);
	tk_unit u = tk_profile_unit(p);
	fprintf(out, "{\n  \"file\": ");
	tk_json_fput(out, file);
	fprintf(out, ",\n  \"kind\": \"table\",\n  \"unit\": \"%s\"", tk_unit_name(u));
	for (size_t i = 0; i < tk_profile_meta_count(p); i++) {
		const char *k, *v;
		tk_profile_meta_at(p, i, &k, &v);
		fprintf(out, ",\n  ");
		tk_json_fput(out, k);
		fprintf(out, ": ");
		tk_json_fput(out, v);
	}
	fprintf(out, ",\n  \"samples\": %" PRIu64 ",\n  \"weight\": %" PRIu64, tk_profile_samples(p),
	        tk_profile_weight(p));
	if (s.tmin <= s.tmax)
		fprintf(out, ",\n  \"time_first_ns\": %" PRIu64 ",\n  \"time_last_ns\": %" PRIu64, s.tmin, s.tmax);
	fprintf(out, ",\n  \"processes\": [");
	for (size_t k = 0; k < s.ng; k++) {
		const pgroup *g = &s.g[k];
		fprintf(out, "%s\n    {\"pid\": %" PRId64 ", \"name\": ", k ? "," : "", g->pid);
		tk_json_fput(out, tk_string(p, g->name));
		fprintf(out, ", \"samples\": %" PRIu64 ", \"weight\": %" PRIu64 ", \"threads\": [", g->samples,
		        g->weight);
		for (size_t i = 0; i < g->nthreads; i++) {
			const tk_thread *th = tk_thread_get(p, g->threads[i]);
			fprintf(out, "%s\n      {\"tid\": %" PRIu64 ", \"name\": ", i ? "," : "", th->tid);
			tk_json_fput(out, tk_string(p, th->name));
			fprintf(out, ", \"samples\": %" PRIu64 ", \"weight\": %" PRIu64 "}", th->samples, th->weight);
		}
		fprintf(out, "\n    ]}");
	}
	fprintf(out, "\n  ]\n}\n");
	summary_free(&s);
	return tk_wu_finish(out, "info JSON", err);
}

/* weight column: ms for time, the unit's own count otherwise (exact decimals when it has them) */
static void weight_cell(FILE *out, tk_unit u, unsigned d, uint64_t w)
{
	char num[32];
	if (d) {
		tk_wu_decimal(num, sizeof num, w, d);
		fprintf(out, " %9s", num);
	} else if (u == TK_UNIT_NS)
		fprintf(out, " %9.1f", w / 1e6);
	else
		fprintf(out, " %9" PRIu64, w);
}

int tk_write_info_text(FILE *out, const tk_profile *p, const char *file, tk_error *err)
{
	/* what a reader may have set, in the order people read it (unit after schema) */
	static const char *const meta_keys[] = {
	    "schema", "stack-encoding", "xcode-form",         "symbolicated",   "run",          "table",
	    "xpath",  "rows",           "rows-in-time-range", "skipped-tables", "kdebug-images",
	    /* sampling profilers' text (perf script, simpleperf, DTrace) */
	    "events", "event", "weight", "time", "rows-read"};
	summary s;
	summarize(p, &s);
	tk_unit u = tk_profile_unit(p);
	uint64_t total = tk_profile_weight(p);
	fprintf(out, "file           ");
	tk_text_fput(out, file);
	fputc('\n', out);
	for (size_t i = 0; i < sizeof meta_keys / sizeof meta_keys[0]; i++) {
		const char *v = tk_profile_meta(p, meta_keys[i]);
		if (v) {
			fprintf(out, "%-14s ", meta_keys[i]);
			tk_text_fput(out, v);
			fputc('\n', out);
		}
		if (i == 0)
			fprintf(out, "%-14s %s\n", "unit", tk_unit_name(u));
	}
	/* text inputs: what kind of file it was and how it was read; a header's `# key: value` lines */
	static const char *const text_keys[] = {"format", "differential", "weight-decimals", "skipped-lines",
	                                        "truncated"};
	for (size_t i = 0; i < sizeof text_keys / sizeof text_keys[0]; i++) {
		const char *v = tk_profile_meta(p, text_keys[i]);
		if (v && !(i == 0 && tk_profile_meta(p, "schema"))) {
			fprintf(out, "%-14s ", text_keys[i]);
			tk_text_fput(out, v);
			fputc('\n', out);
		}
	}
	for (size_t i = 0; i < tk_profile_meta_count(p); i++) {
		const char *k, *v;
		tk_profile_meta_at(p, i, &k, &v);
		if (strncmp(k, "header.", 7) == 0) {
			fprintf(out, "%-14s ", k + 7);
			tk_text_fput(out, v);
			fputc('\n', out);
		}
	}
	if (s.tmin <= s.tmax)
		fprintf(out, "time span      %.3f s to %.3f s (%.3f s)\n", s.tmin / 1e9, s.tmax / 1e9,
		        (s.tmax - s.tmin) / 1e9);
	if (u == TK_UNIT_NS)
		fprintf(out, "samples        %" PRIu64 "\nweight         %.3f ms\n", tk_profile_samples(p),
		        total / 1e6);
	else {
		char num[32];
		tk_wu_decimal(num, sizeof num, total, tk_profile_weight_decimals(p));
		fprintf(out, "samples        %" PRIu64 "\nweight         %s %s\n", tk_profile_samples(p), num,
		        tk_unit_name(u));
	}
	fprintf(out, "\n%10s %7s %9s  %s\n", "samples", "weight%", u == TK_UNIT_NS ? "ms" : tk_unit_name(u),
	        "process / thread");
	for (size_t k = 0; k < s.ng; k++) {
		const pgroup *g = &s.g[k];
		fprintf(out, "%10" PRIu64 " %6.1f%%", g->samples, total ? 100.0 * g->weight / total : 0);
		weight_cell(out, u, tk_profile_weight_decimals(p), g->weight);
		fputs("  ", out);
		tk_text_fput(out, g->name ? tk_string(p, g->name) : "(unknown process)");
		fprintf(out, " (%" PRId64 ")\n", g->pid);
		for (size_t i = 0; i < g->nthreads; i++) {
			const tk_thread *th = tk_thread_get(p, g->threads[i]);
			fprintf(out, "%10" PRIu64 " %6.1f%%", th->samples, total ? 100.0 * th->weight / total : 0);
			weight_cell(out, u, tk_profile_weight_decimals(p), th->weight);
			fputs("    ", out);
			tk_text_fput(out, th->name ? tk_string(p, th->name) : "(unnamed)");
			/* the tid in decimal, as tree, collapse and every other writer print it */
			fprintf(out, " (tid %" PRIu64 ")\n", th->tid);
		}
	}
	summary_free(&s);
	return tk_wu_finish(out, "info", err);
}
