/* The JSON answers of the store's queries, shared by `tracekit stats --db --json`, `tracekit
 * top-hangs --json` and the dashboard's /api/ (so the two can never drift apart). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/stats.h"
#include "tracekit/store.h"
#include "util/text.h"

int tk_store_groups_write_json(FILE *f, const tk_store_query *q, const tk_store_group *g, size_t n, tk_error *err)
{
	for (size_t i = 0; i < n; i++) {
		/* the object `tracekit stats --json` writes, with the group's keys in front */
		tk_summary sum = {
		    .count = g[i].count, .mean = g[i].mean, .wmean = NAN, .min = g[i].min, .max = g[i].max, .exact = 1};
		memcpy(sum.pct, g[i].q, sizeof sum.pct);
		char *obj = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&obj, &len);
		if (!mem)
			return tk_error_set(err, "store: JSON: out of memory"), -1;
		int rc = tk_summary_write_json(mem, q->metric, g[i].unit, &sum, err);
		if (fclose(mem) || rc || !obj || obj[0] != '{') {
			free(obj);
			if (!rc)
				tk_error_set(err, "store: JSON: out of memory");
			return -1;
		}
		fputc('{', f);
		for (size_t k = 0; k < q->nby; k++) {
			tk_json_fput(f, tk_store_by_name(q->by[k]));
			fputs(": ", f);
			tk_json_fput(f, g[i].keys[k]);
			fputs(", ", f);
		}
		if (q->metric && strcmp(q->metric, "hang.rate") == 0 && len >= 2 && obj[len - 2] == '}') {
			/* how many of the sessions' hang time is an estimate from a MetricKit histogram */
			obj[len - 2] = 0;
			fprintf(f, "%s, \"estimated\": %llu}\n", obj + 1, (unsigned long long)g[i].estimated);
		} else
			fputs(obj + 1, f);
		free(obj);
	}
	return ferror(f) ? (tk_error_set(err, "store: JSON: write error"), -1) : 0;
}

static void put_num(FILE *f, double v)
{
	char buf[32];
	fputs(tk_stats_fmt_double(v, buf), f);
}

int tk_store_hangs_write_json(FILE *f, const tk_store_hang *h, size_t n, tk_error *err)
{
	for (size_t i = 0; i < n; i++) {
		fputs("{\"signature\": ", f);
		tk_json_fput(f, h[i].signature);
		fprintf(f, ", \"count\": %llu, \"sessions\": %llu, \"p50\": ", (unsigned long long)h[i].count,
		        (unsigned long long)h[i].sessions);
		put_num(f, h[i].p50);
		fputs(", \"p95\": ", f);
		put_num(f, h[i].p95);
		fputs(", \"example\": ", f);
		tk_json_fput(f, h[i].example);
		fputs(", \"first_version\": ", f);
		tk_json_fput(f, h[i].first_version ? h[i].first_version : "");
		fputs(", \"last_version\": ", f);
		tk_json_fput(f, h[i].last_version ? h[i].last_version : "");
		fputs("}\n", f);
	}
	return ferror(f) ? (tk_error_set(err, "store: JSON: write error"), -1) : 0;
}

int tk_store_dists_write_json(FILE *f, const tk_store_query *q, const tk_store_dist *d, size_t n,
                              const double *edges, size_t nbins, tk_error *err)
{
	const char *unit = q->metric ? tk_store_metric_unit(q->metric) : NULL;
	for (size_t i = 0; i < n; i++) {
		fputc('{', f);
		for (size_t k = 0; k < q->nby; k++) {
			tk_json_fput(f, tk_store_by_name(q->by[k]));
			fputs(": ", f);
			tk_json_fput(f, d[i].keys[k] ? d[i].keys[k] : "");
			fputs(", ", f);
		}
		fputs("\"metric\": ", f);
		tk_json_fput(f, q->metric ? q->metric : "");
		fputs(", \"unit\": ", f);
		tk_json_fput(f, unit ? unit : "");
		fprintf(f, ", \"count\": %zu", d[i].n);
		const char *const names[] = {"min", "p5", "p25", "p50", "p75", "p95", "max"};
		const double v[] = {d[i].min, d[i].p5, d[i].p25, d[i].p50, d[i].p75, d[i].p95, d[i].max};
		for (size_t k = 0; k < 7; k++) {
			fprintf(f, ", \"%s\": ", names[k]);
			put_num(f, v[k]);
		}
		fputs(", \"whiskers\": \"p5-p95\", \"edges\": [", f);
		for (size_t b = 0; b <= nbins; b++) {
			if (b)
				fputs(", ", f);
			put_num(f, edges[b]);
		}
		fputs("], \"counts\": [", f);
		for (size_t b = 0; b < nbins; b++)
			fprintf(f, "%s%llu", b ? ", " : "", (unsigned long long)d[i].counts[b]);
		fputs("]}\n", f);
	}
	return ferror(f) ? (tk_error_set(err, "store: JSON: write error"), -1) : 0;
}
