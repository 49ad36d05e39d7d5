/* tracekit stats — percentiles of a metric across many inputs, and the spread of functions. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "util/mem.h"
#include "util/text.h"
#include "tracekit/calltree.h"
#include "tracekit/metrickit.h"
#include "tracekit/read.h"
#include "tracekit/stats.h"
#include "tracekit/symbol.h"

TK_COMMAND(stats, "percentiles of a metric across many reports and runs; the spread of functions")

enum {
	OPT_VALUES = 1,
	OPT_UNIT,
	OPT_SHARE,
	OPT_JSON,
	OPT_CSV,
	OPT_SVG,
	OPT_BARS,
	OPT_MEMORY_LIMIT,
	OPT_SKETCH,
	OPT_SKETCH_OUT,
	OPT_SKETCH_IN,
	OPT_KEEP_GOING,
	OPT_OUTPUT,
	OPT_METRIC,
	OPT_FUNCTIONS,
	OPT_LIMIT,
	OPT_INPUT,
};

static const tk_cli_option options[] = {
    TK_OPT_SECTION("options"),
    TK_OPT_OPERAND(OPT_INPUT, "INPUT",
                   "an `xctrace export` file, a Records file or session directory, MetricKit JSON, a file of "
                   "numbers (--values), or - for standard input"),
    TK_OPT_VALUE(OPT_METRIC, "--metric", NULL, "M", "the metric (above)"),
    TK_OPT_FLAG(OPT_VALUES, "--values", NULL, "inputs are numbers, one per line (# comments, gzip and - are fine)"),
    TK_OPT_VALUE(OPT_UNIT, "--unit", NULL, "U", "the unit to report for --values (default none)"),
    TK_OPT_FLAG(OPT_SHARE, "--share", NULL,
                "fn.* and thread.weight as % of each input's weight (weighted mean by weight)"),
    TK_OPT_FLAG(OPT_JSON, "--json", NULL,
                "exactly one object: {\"metric\", \"unit\", \"count\", \"mean\", \"min\", \"p50\", \"p90\", "
                "\"p95\", \"p99\", \"p99.9\", \"max\"}"),
    TK_OPT_FLAG(OPT_CSV, "--csv", NULL, "a header line and one row (with weighted_mean and method columns)"),
    TK_OPT_VALUE(OPT_SVG, "--svg", NULL, "FILE", "histogram, CDF with the percentiles marked and box plots per input"),
    TK_OPT_VALUE(OPT_BARS, "--bars", NULL, "N", "histogram rows in the text output (default 12, 0 = none)"),
    TK_OPT_VALUE(OPT_MEMORY_LIMIT, "--memory-limit", NULL, "MB",
                 "keep values exactly up to this much memory (default 1024), then sketch"),
    TK_OPT_FLAG(OPT_SKETCH, "--sketch", NULL, "use the sketch from the start"),
    TK_OPT_VALUE(OPT_SKETCH_OUT, "--sketch-out", NULL, "FILE",
                 "write the sketch of this run (mergeable across machines)"),
    TK_OPT_LIST(OPT_SKETCH_IN, "--sketch-in", NULL, "FILE", "merge a sketch written by --sketch-out; repeat for several"),
    TK_OPT_FLAG(OPT_KEEP_GOING, "--keep-going", NULL,
                "report bad inputs on stderr and skip them (default: stop at the first)"),
    TK_OPT_VALUE(OPT_OUTPUT, "--output", "-o", "FILE", "write there instead of standard output"),
    TK_OPT_INCLUDE(tk_read_event_options),
    TK_OPT_VALUE(TK_READ_RUN, "--run", NULL, "1|2",
                 "differential folded stacks (STACK BEFORE AFTER): the first or second count (default 2)"),
    TK_OPT_SECTION("function spread (--functions)"),
    TK_OPT_FLAG(OPT_FUNCTIONS, "--functions", NULL,
                "every function's self and total share of each input's weight: p50, p95, p99 and max across the "
                "inputs, then the functions that dominate the heaviest 5 % of inputs (by total weight); --json for "
                "the whole table"),
    TK_OPT_VALUE(OPT_LIMIT, "--limit", NULL, "N", "functions to list (default 25; 0 = all)"),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_stats = {
    .name = "stats",
    .usage = "tracekit stats [options] INPUT…\n"
             "tracekit stats --db URL [options]   (a fleet store: tracekit stats --db URL --help)",
    .about =
        "Count, mean, weighted mean, min, p50, p90, p95, p99, p99.9 and max of one metric over every\n"
        "input: `xctrace export` files, Records files and session directories (tracekit monitor,\n"
        "MTHawkeye), or files of plain numbers (--values). Percentiles are exact (type 7, as numpy and\n"
        "R) while the values fit the memory limit, then from a mergeable sketch within 1 %; the output\n"
        "says which.\n\n"
        "metrics (--metric M):\n"
        "  cpu.duration          seconds of each CPU high-load record (Records inputs; the default there)\n"
        "  cpu.average           average CPU % of one core of each high-load record (weighted mean by duration)\n"
        "  hang.duration         seconds of each hang (tracekit's hang, MTHawkeye's anr)\n"
        "  profile.weight        each input's total weight in its unit (the default for exports)\n"
        "  fn.self:NAME          self weight of function NAME in each input (0 where absent)\n"
        "  fn.total:NAME         total weight of function NAME in each input (once per sample)\n"
        "  thread.weight:NAME    weight of the threads named NAME (or with that tid) in each input\n"
        "  MetricKit payloads (docs/metrickit.md): hang.duration (s), cpu.exception_time (s, totalCPUTime),\n"
        "  disk.writes (bytes, writesCaused), launch.duration (s) of each diagnostic; and\n"
        "  histogram.NAME         a metric payload histogram summed over the inputs (histogram.app.hang.time,\n"
        "                        histogram.time.to.first.draw, histogram.application.resume.time …):\n"
        "                        percentiles interpolated within buckets, labelled \"from histogram\"\n"
        "  NAME is a symbol as `tracekit top` shows it, or BINARY`SYMBOL.\n",
    .options = options,
    .flags = TK_CLI_NO_DASHDASH,
};

/* Output through tk_outfile (path NULL = standard output): whole or not at all. */
static FILE *out_open(tk_outfile *of, const char *path, tk_error *err)
{
	return tk_outfile_open(of, path, err) < 0 ? NULL : of->f;
}

static int out_close(tk_outfile *of, int failed, tk_error *err)
{
	if (failed) {
		tk_outfile_abort(of);
		return -1;
	}
	return tk_outfile_commit(of, err);
}

typedef enum metric_kind {
	M_VALUES,
	M_CPU_DURATION,
	M_CPU_AVERAGE,
	M_HANG_DURATION,
	M_PROFILE_WEIGHT,
	M_FN_SELF,
	M_FN_TOTAL,
	M_THREAD_WEIGHT,
	M_EVENT, /* an attribute of each event of a kind (MetricKit diagnostics): event_metrics */
} metric_kind;

/* Per-event metrics of profiles' events (docs/metrickit.md): the attribute, or the duration. */
static const struct {
	const char *metric;
	tk_event_kind kind;
	const char *attr, *unit;
} event_metrics[] = {
    {"hang.duration", TK_EVENT_HANG, "hang.duration", "s"},
    {"cpu.exception_time", TK_EVENT_CPU_EXCEPTION, "cpu.time", "s"},
    {"disk.writes", TK_EVENT_DISK_WRITE, "disk.writes", "bytes"},
    {"launch.duration", TK_EVENT_LAUNCH, "launch.duration", "s"},
};

typedef struct opts {
	const char **inputs;
	size_t ninputs;
	const char **sketch_in;
	size_t nsketch_in;
	const char *metric, *unit, *svg, *sketch_out, *output;
	int values, share, json, csv, sketch, keep_going, functions;
	uint32_t bars, limit, memory_mb;
} opts;

/* Progress on a terminal: inputs done, their rate, for long runs. */
typedef struct progress {
	size_t done, total;
	struct timespec t0, last;
	int drawn;
} progress;

static double secs(struct timespec a, struct timespec b)
{
	return (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
}

static void progress_tick(progress *p)
{
	if (p->total < 2 || !isatty(2))
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (p->done != p->total && secs(p->last, now) < 0.2)
		return;
	p->last = now;
	double el = secs(p->t0, now);
	fprintf(stderr, "\r\033[K%zu / %zu inputs (%.0f/s)", p->done, p->total, el > 0 ? p->done / el : 0.0);
	p->drawn = 1;
}

static void progress_end(progress *p)
{
	if (p->drawn)
		fputs("\r\033[K", stderr);
	p->drawn = 0;
}

static int is_records_input(const char *path)
{
	struct stat st;
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 1;
	tk_error err;
	tk_input *in = tk_input_open(path, &err);
	if (!in)
		return 0;
	size_t n;
	const unsigned char *h = tk_input_head(in, &n);
	const tk_reader *r = tk_reader_find(h, n);
	int rec = r && strcmp(r->name, "records") == 0;
	tk_input_close(in);
	return rec;
}

static int parse_metric(const char *m, metric_kind *k, const char **arg)
{
	static const struct {
		const char *name;
		metric_kind k;
		int arg;
	} tab[] = {{"cpu.duration", M_CPU_DURATION, 0},
	           {"cpu.average", M_CPU_AVERAGE, 0},
	           {"hang.duration", M_HANG_DURATION, 0},
	           {"profile.weight", M_PROFILE_WEIGHT, 0},
	           {"fn.self:", M_FN_SELF, 1},
	           {"fn.total:", M_FN_TOTAL, 1},
	           {"thread.weight:", M_THREAD_WEIGHT, 1},
	           {"value", M_VALUES, 0}};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
		size_t n = strlen(tab[i].name);
		if (tab[i].arg ? strncmp(m, tab[i].name, n) == 0 && m[n] : strcmp(m, tab[i].name) == 0) {
			*k = tab[i].k;
			*arg = tab[i].arg ? m + n : NULL;
			return 0;
		}
	}
	return -1;
}

static int match_thread(const tk_profile *p, const tk_thread *t, const char *name)
{
	if (strcmp(tk_string(p, t->name), name) == 0)
		return 1;
	char *end;
	errno = 0;
	unsigned long long tid = strtoull(name, &end, 0);
	return *name && !*end && !errno && tid == t->tid;
}

/* Values of one input for a per-event metric (its events: Records' cpu-highload and hang records,
 * or any other input's): add them, with their weights. */
static int add_records(tk_values *v, metric_kind k, const char *path, size_t *added, tk_error *err)
{
	tk_profile *p = tk_profile_new();
	if (tk_read_path(p, path, NULL, err) < 0) {
		tk_profile_free(p);
		return -1;
	}
	int rc = 0;
	for (tk_event_id e = 1; e <= tk_event_count(p) && rc == 0; e++) {
		const tk_event *ev = tk_event_get(p, e);
		double dur = tk_event_num(p, e, "duration"); /* seconds as recorded */
		if (dur != dur && ev->duration != UINT64_MAX)
			dur = (double)ev->duration / 1e9;
		double x = NAN, w = 1;
		int weighted = 0;
		if (k == M_CPU_DURATION && ev->kind == TK_EVENT_CPU_HIGHLOAD)
			x = dur;
		else if (k == M_CPU_AVERAGE && ev->kind == TK_EVENT_CPU_HIGHLOAD)
			x = tk_event_num(p, e, "cpu.average"), w = dur, weighted = isfinite(w);
		else if (k == M_HANG_DURATION && ev->kind == TK_EVENT_HANG) {
			double hd = tk_event_num(p, e, "hang.duration");
			x = hd == hd ? hd : dur;
		}
		if (!isfinite(x))
			continue;
		rc = weighted ? tk_values_add_w(v, x, w, err) : tk_values_add(v, x, err);
		(*added)++;
	}
	tk_profile_free(p);
	return rc;
}

/* --event / --weight, for every profile input */
static tk_read_options read_opts;

/* Values of one profile input's events for an event metric (M_EVENT, or hang.duration of a payload). */
static int add_events(tk_values *v, size_t em, const char *path, size_t *added, tk_error *err)
{
	tk_profile *p = tk_profile_new();
	tk_read_options ro;
	tk_read_options_init(&ro);
	int rc = tk_read_path(p, path, &ro, err);
	for (tk_event_id e = 1; rc == 0 && e <= tk_event_count(p); e++) {
		const tk_event *ev = tk_event_get(p, e);
		if (ev->kind != event_metrics[em].kind)
			continue;
		double x = tk_event_num(p, e, event_metrics[em].attr);
		if (!isfinite(x) && ev->duration != UINT64_MAX && strcmp(event_metrics[em].unit, "s") == 0)
			x = (double)ev->duration / 1e9;
		if (!isfinite(x))
			continue;
		rc = tk_values_add(v, x, err);
		(*added)++;
	}
	tk_profile_free(p);
	return rc;
}

/* --metric histogram.NAME: the buckets of every metric payload's NAME histogram, summed by bucket,
 * then percentiles interpolated within buckets (tk_mx_histogram_quantile). */
static int run_histogram(const opts *o)
{
	tk_mx_bucket *all = NULL;
	size_t nall = 0, cap = 0, payloads = 0;
	tk_mx_kind unit = TK_MX_COUNT;
	int rc = 0, have_unit = 0;
	for (size_t i = 0; i < o->ninputs && rc == 0; i++) {
		tk_error err = {{0}};
		tk_profile *p = tk_profile_new();
		tk_read_options ro;
		tk_read_options_init(&ro);
		if (tk_read_path(p, o->inputs[i], &ro, &err) < 0) {
			rc = tk_cli_fail("stats: %s", err.msg);
			tk_profile_free(p);
			break;
		}
		for (tk_event_id e = 1; e <= tk_event_count(p) && rc == 0; e++) {
			const char *h = tk_event_str(p, e, o->metric);
			if (!h)
				continue;
			tk_mx_bucket *b;
			size_t n;
			tk_mx_kind k;
			if (tk_mx_histogram_parse(h, &b, &n, &k) < 0) {
				rc = tk_cli_fail("stats: %s: event %u: %s is not a histogram", o->inputs[i], e, o->metric);
				break;
			}
			if (have_unit && k != unit) {
				free(b);
				rc = tk_cli_fail("stats: %s: %s in another unit than the inputs before it", o->inputs[i], o->metric);
				break;
			}
			unit = k, have_unit = 1, payloads++;
			for (size_t x = 0; x < n; x++) {
				size_t y = 0;
				while (y < nall && (all[y].start != b[x].start || all[y].end != b[x].end))
					y++;
				if (y == nall) {
					if (nall == cap)
						cap = cap ? cap * 2 : 16, all = tk_xrealloc(all, cap * sizeof *all);
					all[nall++] = (tk_mx_bucket){b[x].start, b[x].end, 0};
				}
				all[y].count += b[x].count;
			}
			free(b);
		}
		tk_profile_free(p);
	}
	if (rc == 0 && !payloads)
		rc = tk_cli_fail("stats: no input has a %s histogram (metric payloads name them histogram.app.hang.time, "
		                 "histogram.time.to.first.draw …)",
		                 o->metric);
	if (rc == 0) {
		double scale = unit == TK_MX_TIME ? 1e9 : unit == TK_MX_RATIO ? 1e9 : 1;
		const char *u = unit == TK_MX_TIME ? "s" : unit == TK_MX_BYTES ? "bytes" : "";
		uint64_t count = 0;
		for (size_t i = 0; i < nall; i++)
			count += all[i].count;
		static const double q[] = {0.5, 0.9, 0.95, 0.99, 0.999};
		static const char *const qn[] = {"p50", "p90", "p95", "p99", "p99.9"};
		tk_outfile of;
		tk_error err = {{0}};
		FILE *out = out_open(&of, o->output, &err);
		if (!out)
			rc = tk_cli_fail("stats: %s", err.msg);
		else {
			char b[32];
			if (o->json) {
				fprintf(out, "{\"metric\": ");
				tk_json_fput(out, o->metric);
				fprintf(out, ", \"unit\": \"%s\", \"count\": %llu, \"payloads\": %zu, \"buckets\": %zu", u,
				        (unsigned long long)count, payloads, nall);
				for (size_t i = 0; i < 5; i++)
					fprintf(out, ", \"%s\": %s", qn[i], tk_stats_fmt_double(tk_mx_histogram_quantile(all, nall, q[i]) / scale, b));
				fprintf(out, ", \"method\": \"histogram\"}\n");
			} else {
				fprintf(out, "%s%s%s%s over %zu payload%s: %llu samples in %zu buckets, percentiles from histogram "
				             "(interpolated within buckets)\n",
				        o->metric, *u ? " (" : "", u, *u ? ")" : "", payloads, payloads == 1 ? "" : "s",
				        (unsigned long long)count, nall);
				for (size_t i = 0; i < 5; i++)
					fprintf(out, "  %-14s %.10g\n", qn[i], tk_mx_histogram_quantile(all, nall, q[i]) / scale);
			}
			if (out_close(&of, ferror(out) != 0, &err) < 0)
				rc = tk_cli_fail("stats: %s", err.msg);
		}
	}
	free(all);
	return rc;
}

/* One value per profile input. */
static int add_profile(tk_values *v, metric_kind k, const char *arg, int share, const char *path, char *unit,
                       size_t unitsz, tk_error *err)
{
	tk_profile *p = tk_profile_new();
	tk_read_options ro = read_opts;
	if (tk_read_path(p, path, &ro, err) < 0 || tk_elf_name_session(&p, NULL, err) < 0) {
		tk_profile_free(p);
		return -1;
	}
	const char *u = tk_unit_name(tk_profile_unit(p));
	if (*unit && strcmp(unit, u) != 0 && !(share && k != M_PROFILE_WEIGHT)) {
		tk_profile_free(p);
		return tk_error_set(err, "%s: weights in %s, but the inputs before it are in %s", path, u, unit);
	}
	snprintf(unit, unitsz, "%s", u);
	double total = (double)tk_profile_weight(p), x = 0;
	int rc = 0;
	if (k == M_PROFILE_WEIGHT) {
		x = total;
	} else if (k == M_THREAD_WEIGHT) {
		for (size_t t = 0; t < tk_thread_count(p); t++)
			if (match_thread(p, tk_thread_get(p, (tk_thread_id)t), arg))
				x += (double)tk_thread_get(p, (tk_thread_id)t)->weight;
	} else {
		tk_fntable *ft = tk_fntable_new();
		if (tk_fntable_add(ft, p, path, err) < 0) {
			rc = -1;
		} else {
			ptrdiff_t f = tk_fntable_find(ft, arg);
			if (f >= 0)
				tk_fntable_values(ft, (size_t)f, k == M_FN_TOTAL, &x);
		}
		tk_fntable_free(ft);
	}
	if (rc == 0) {
		if (share && k != M_PROFILE_WEIGHT)
			rc = tk_values_add_w(v, total > 0 ? 100 * x / total : 0, total, err);
		else
			rc = tk_values_add(v, x, err);
	}
	tk_profile_free(p);
	return rc;
}

/* Box-plot groups: one per input that gave its own set of values. */
typedef struct group_set {
	tk_stats_group *g;
	double **own;
	size_t n, cap;
} group_set;

/* Keep a sorted copy of what this input added (while exact, for up to 40 inputs). */
static void add_group(group_set *gs, tk_values *v, uint64_t before, const char *name)
{
	size_t n;
	const double *x = tk_values_sorted(v, &n);
	if (!x || n <= before || gs->n > 20)
		return;
	size_t k = n - (size_t)before;
	double *own = malloc(k * sizeof *own);
	if (!own)
		return;
	memcpy(own, x + before, k * sizeof *own);
	tk_sort_doubles(own, k);
	if (gs->n == gs->cap) {
		gs->cap = gs->cap ? gs->cap * 2 : 8;
		gs->g = realloc(gs->g, gs->cap * sizeof *gs->g);
		gs->own = realloc(gs->own, gs->cap * sizeof *gs->own);
	}
	gs->own[gs->n] = own;
	gs->g[gs->n++] = (tk_stats_group){name, own, k, NULL};
}

/* RFC 4180: quote a field holding a comma, quote or line break (fn.self:operator,(…)). */
static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int emit(const opts *o, FILE *out, const char *metric, const char *unit, tk_values *v, const tk_summary *s,
                group_set *gs, size_t ninputs, tk_error *err)
{
	char b[32];
	size_t nsorted;
	const double *sorted = tk_values_sorted(v, &nsorted);
	tk_stats_group all = {"all", sorted, nsorted, tk_values_sketch(v)};
	if (o->json)
		return tk_summary_write_json(out, metric, unit, s, err);
	if (o->csv) {
		fputs("metric,unit,count,mean,weighted_mean,min,p50,p90,p95,p99,p99.9,max,method\n", out);
		csv_field(out, metric);
		fputc(',', out);
		csv_field(out, unit);
		fprintf(out, ",%llu", (unsigned long long)s->count);
		double cols[] = {s->mean,   s->wmean,  s->min,    s->pct[0], s->pct[1],
		                 s->pct[2], s->pct[3], s->pct[4], s->max};
		for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
			fprintf(out, ",%s", isfinite(cols[i]) && s->count ? tk_stats_fmt_double(cols[i], b) : "");
		fprintf(out, ",%s\n", s->exact ? "exact" : "sketch");
		return ferror(out) ? tk_error_set(err, "write error") : 0;
	}
	fprintf(out, "%s%s%s%s over %zu input%s: %llu value%s, %s\n", metric, *unit ? " (" : "", unit, *unit ? ")" : "",
	        ninputs, ninputs == 1 ? "" : "s", (unsigned long long)s->count, s->count == 1 ? "" : "s",
	        s->exact ? "exact percentiles (type 7)" : "percentiles from the sketch (within 1 % of exact)");
	if (s->count == 0)
		return 0;
	/* Text is for reading: 10 significant digits hide binary noise (613.676, not 613.6759999999999);
	 * --json and --csv carry every bit. */
	fprintf(out, "  %-14s %llu\n", "count", (unsigned long long)s->count);
	fprintf(out, "  %-14s %.10g\n", "mean", s->mean);
	if (isfinite(s->wmean))
		fprintf(out, "  %-14s %.10g\n", "weighted mean", s->wmean);
	fprintf(out, "  %-14s %.10g\n", "min", s->min);
	for (int i = 0; i < TK_SUMMARY_NPCT; i++)
		fprintf(out, "  %-14s %.10g\n", tk_summary_pct_name[i], s->pct[i]);
	fprintf(out, "  %-14s %.10g\n", "max", s->max);
	if (o->bars && s->count > 1 && s->max > s->min) {
		fputs("histogram:\n", out);
		if (tk_write_stats_bars(out, s, &all, o->bars, 40, err) < 0)
			return -1;
	}
	(void)gs;
	return ferror(out) ? tk_error_set(err, "write error") : 0;
}

static int write_svg(const opts *o, const char *metric, const char *unit, tk_values *v, const tk_summary *s,
                     group_set *gs)
{
	size_t nsorted;
	const double *sorted = tk_values_sorted(v, &nsorted);
	tk_stats_group all = {"all", sorted, nsorted, tk_values_sketch(v)};
	tk_outfile of;
	tk_error err = {{0}};
	FILE *f = out_open(&of, o->svg, &err);
	if (!f)
		return tk_cli_fail("stats: %s", err.msg);
	/* A box per input says something when there are a few inputs with enough values each. */
	int per_input = gs->n > 1 && gs->n <= 20;
	for (size_t i = 0; i < gs->n && per_input; i++)
		per_input = gs->g[i].n >= 5;
	int w = tk_write_stats_svg(f, metric, unit, s, &all, per_input ? gs->g : NULL, per_input ? gs->n : 0, &err);
	if (w < 0) {
		out_close(&of, 1, &err);
		return tk_cli_fail("stats: %s: %s", o->svg, err.msg);
	}
	if (out_close(&of, 0, &err) < 0)
		return tk_cli_fail("stats: %s", err.msg);
	return 0;
}

static int stats_option(void *ctx, const tk_cli_option *opt, const char *val, const char *spelling)
{
	opts *o = ctx;
	switch (opt->id) {
	case OPT_KEEP_GOING: o->keep_going = 1; return 0; /* stats' own: skip inputs (not a reader's lines) */
	case OPT_JSON: o->json = 1; return 0;
	case OPT_CSV: o->csv = 1; return 0;
	case OPT_VALUES: o->values = 1; return 0;
	case OPT_SHARE: o->share = 1; return 0;
	case OPT_SKETCH: o->sketch = 1; return 0;
	case OPT_FUNCTIONS: o->functions = 1; return 0;
	case OPT_METRIC: o->metric = val; return 0;
	case OPT_UNIT: o->unit = val; return 0;
	case OPT_SVG: o->svg = val; return 0;
	case OPT_SKETCH_OUT: o->sketch_out = val; return 0;
	case OPT_OUTPUT: o->output = val; return 0;
	case OPT_SKETCH_IN:
		o->sketch_in = realloc(o->sketch_in, (o->nsketch_in + 1) * sizeof *o->sketch_in);
		o->sketch_in[o->nsketch_in++] = val;
		return 0;
	case OPT_BARS: return tk_cli_uint("stats", "--bars", val, &o->bars);
	case OPT_LIMIT: return tk_cli_uint("stats", "--limit", val, &o->limit);
	case OPT_MEMORY_LIMIT: return tk_cli_uint("stats", "--memory-limit", val, &o->memory_mb);
	case OPT_INPUT:
		o->inputs = realloc(o->inputs, (o->ninputs + 1) * sizeof *o->inputs);
		o->inputs[o->ninputs++] = val;
		return 0;
	}
	return tk_cli_read_handle("stats", &read_opts, opt, val, spelling);
}

/* 0, 1 after the help was printed, or -1 after a usage error (printed). */
static int parse_args(int argc, char **argv, opts *o)
{
	tk_read_options_init(&read_opts);
	read_opts.warn = tk_cli_read_warn;
	read_opts.warn_ctx = (void *)"stats";
	int rc = tk_cli_parse(&tk_cli_command_stats, argc, argv, 1, stats_option, o, NULL);
	if (rc)
		return rc < 0 ? 1 : -1;
	if (o->json + o->csv > 1) {
		tk_cli_fail("stats: --json and --csv exclude each other");
		return -1;
	}
	if (o->ninputs == 0 && o->nsketch_in == 0) {
		tk_cli_fail("stats: no input (see tracekit stats --help)");
		return -1;
	}
	return 0;
}

static int run_functions(const opts *o)
{
	tk_fntable *ft = tk_fntable_new();
	progress pr = {0, o->ninputs, {0, 0}, {0, 0}, 0};
	clock_gettime(CLOCK_MONOTONIC, &pr.t0);
	int rc = 0;
	size_t bad = 0;
	for (size_t i = 0; i < o->ninputs && rc == 0; i++) {
		tk_error err = {{0}};
		tk_profile *p = tk_profile_new();
		tk_read_options ro = read_opts;
		if (tk_read_path(p, o->inputs[i], &ro, &err) < 0 || tk_elf_name_session(&p, NULL, &err) < 0 ||
		    tk_fntable_add(ft, p, o->inputs[i], &err) < 0) {
			progress_end(&pr);
			if (o->keep_going)
				tk_cli_warn("stats: skipped: %s", err.msg), bad++;
			else
				rc = tk_cli_fail("stats: %s", err.msg);
		}
		tk_profile_free(p);
		pr.done++;
		progress_tick(&pr);
	}
	progress_end(&pr);
	if (rc == 0 && tk_fntable_nprofiles(ft) == 0)
		rc = tk_cli_fail("stats: no profile could be read");
	if (rc == 0) {
		tk_outfile of;
		tk_error err = {{0}};
		FILE *out = out_open(&of, o->output, &err);
		if (!out)
			rc = tk_cli_fail("stats: %s", err.msg);
		else {
			tk_fn_spread sp;
			if (tk_fn_spread_build(ft, &sp, &err) < 0 ||
			    tk_write_fn_spread(out, ft, &sp, o->limit, o->json, &err) < 0)
				rc = tk_cli_fail("stats: %s", err.msg);
			tk_fn_spread_free(&sp);
			if (out_close(&of, rc != 0, &err) < 0 && rc == 0)
				rc = tk_cli_fail("stats: %s", err.msg);
		}
	}
	if (bad && rc == 0)
		tk_cli_warn("stats: %zu input%s skipped", bad, bad == 1 ? "" : "s");
	tk_fntable_free(ft);
	return rc;
}

int cmd_stats(int argc, char **argv)
{
	opts o = {0};
	o.bars = 12;
	o.limit = 25;
	o.memory_mb = 1024;
	int rc = 1;
	tk_values *v = NULL;
	group_set gs = {0};
	char unit[32] = "";
	const char *metric = NULL;
	char *sk_metric = NULL, *sk_unit = NULL, *metric_buf = NULL;
	int parsed = parse_args(argc, argv, &o);
	if (parsed) {
		rc = parsed > 0 ? 0 : 2; /* the help, or a usage error: one line, exit 2 */
		goto out;
	}
	if (o.functions) {
		rc = run_functions(&o);
		goto out;
	}
	metric_kind kind = M_VALUES;
	const char *arg = NULL;
	size_t em = 0;
	if (o.metric && strncmp(o.metric, "histogram.", 10) == 0 && o.metric[10] && !o.values) {
		rc = run_histogram(&o);
		goto out;
	}
	for (; o.metric && em < sizeof event_metrics / sizeof event_metrics[0]; em++)
		if (strcmp(o.metric, event_metrics[em].metric) == 0 && strcmp(o.metric, "hang.duration") != 0)
			kind = M_EVENT;
	if (kind == M_EVENT) {
		for (em = 0; strcmp(o.metric, event_metrics[em].metric) != 0; em++)
			;
		metric = o.metric;
		snprintf(unit, sizeof unit, "%s", event_metrics[em].unit);
	} else if (o.metric) {
		if (parse_metric(o.metric, &kind, &arg) < 0) {
			tk_cli_fail(
			    "stats: --metric '%s': expected cpu.duration, cpu.average, hang.duration, profile.weight, "
			    "fn.self:NAME, fn.total:NAME, thread.weight:NAME, cpu.exception_time, disk.writes, "
			    "launch.duration or histogram.NAME",
			    o.metric);
			goto out;
		}
		if (o.values && kind != M_VALUES) {
			tk_cli_fail("stats: --values reads plain numbers: --metric does not apply");
			goto out;
		}
		metric = o.metric;
	} else if (o.values) {
		metric = "value";
	} else if (o.ninputs && is_records_input(o.inputs[0])) {
		kind = M_CPU_DURATION, metric = "cpu.duration";
	} else if (o.ninputs) {
		kind = M_PROFILE_WEIGHT, metric = "profile.weight";
	}
	if (kind == M_CPU_DURATION || kind == M_HANG_DURATION)
		strcpy(unit, "s");
	else if (kind == M_CPU_AVERAGE)
		strcpy(unit, "%");
	else if (o.values && o.unit)
		snprintf(unit, sizeof unit, "%s", o.unit);

	v = tk_values_new(o.sketch ? 1 : (size_t)o.memory_mb << 20);
	tk_error err = {{0}};
	if (o.sketch && tk_values_to_sketch(v, &err) < 0) {
		tk_cli_fail("stats: %s", err.msg);
		goto out;
	}
	progress pr = {0, o.ninputs, {0, 0}, {0, 0}, 0};
	clock_gettime(CLOCK_MONOTONIC, &pr.t0);
	size_t bad = 0, used = 0;
	for (size_t i = 0; i < o.ninputs; i++) {
		const char *path = o.inputs[i];
		uint64_t before = tk_values_count(v);
		size_t added = 0;
		int r;
		err.msg[0] = 0;
		if (o.values || kind == M_VALUES)
			r = tk_values_read(v, path, o.ninputs == 1 ? tk_cli_progress : NULL, NULL, &err) < 0 ? -1 : 0;
		else if (kind == M_EVENT)
			r = add_events(v, em, path, &added, &err);
		else if (kind == M_CPU_DURATION || kind == M_CPU_AVERAGE || kind == M_HANG_DURATION)
			r = add_records(v, kind, path, &added, &err);
		else
			r = add_profile(v, kind, arg, o.share, path, unit, sizeof unit, &err);
		if (o.ninputs == 1)
			tk_cli_progress_done();
		if (r < 0) {
			progress_end(&pr);
			if (!o.keep_going || tk_values_count(v) != before) {
				/* A half-added input cannot be taken back: stop even with --keep-going. */
				tk_cli_fail("stats: %s", err.msg);
				goto out;
			}
			tk_cli_warn("stats: skipped: %s", err.msg);
			bad++;
		} else {
			used++;
			add_group(&gs, v, before, path);
		}
		pr.done++;
		progress_tick(&pr);
	}
	progress_end(&pr);
	if (kind == M_PROFILE_WEIGHT ||
	    ((kind == M_FN_SELF || kind == M_FN_TOTAL || kind == M_THREAD_WEIGHT) && !o.share))
		; /* unit set by the inputs */
	else if (o.share)
		strcpy(unit, "%");
	for (size_t i = 0; i < o.nsketch_in; i++) {
		FILE *f = strcmp(o.sketch_in[i], "-") == 0 ? stdin : fopen(o.sketch_in[i], "r");
		if (!f) {
			tk_cli_fail("stats: %s: %s", o.sketch_in[i], strerror(errno));
			goto out;
		}
		free(sk_metric), free(sk_unit);
		tk_sketch *sk = tk_sketch_read(f, o.sketch_in[i], &sk_metric, &sk_unit, &err);
		if (f != stdin)
			fclose(f);
		if (!sk) {
			tk_cli_fail("stats: %s", err.msg);
			goto out;
		}
		if (!metric && sk_metric)
			metric = metric_buf = tk_xstrdup(sk_metric);
		else if (metric && sk_metric && strcmp(metric, sk_metric) != 0)
			tk_cli_warn("stats: %s holds %s, merged into %s", o.sketch_in[i], sk_metric, metric);
		if (!*unit && sk_unit)
			snprintf(unit, sizeof unit, "%s", sk_unit);
		int m = tk_values_merge_sketch(v, sk, &err);
		tk_sketch_free(sk);
		if (m < 0) {
			tk_cli_fail("stats: %s", err.msg);
			goto out;
		}
		used++;
	}
	if (!metric)
		metric = "value";
	if (used == 0) {
		tk_cli_fail("stats: no input could be read");
		goto out;
	}
	tk_summary s;
	if (tk_values_summary(v, &s, &err) < 0) {
		tk_cli_fail("stats: %s", err.msg);
		goto out;
	}
	if (!s.exact && (o.json || o.csv) && !o.sketch && o.nsketch_in == 0)
		tk_cli_warn("stats: more values than --memory-limit holds: percentiles from the sketch (within 1 %%)");
	if (o.sketch_out) {
		if (tk_values_to_sketch(v, &err) < 0) {
			tk_cli_fail("stats: %s", err.msg);
			goto out;
		}
		tk_outfile of;
		FILE *f = out_open(&of, o.sketch_out, &err);
		if (!f) {
			tk_cli_fail("stats: %s", err.msg);
			goto out;
		}
		int w = tk_sketch_write(f, tk_values_sketch(v), metric, unit, &err);
		if (out_close(&of, w < 0, &err) < 0) {
			tk_cli_fail("stats: %s: %s", o.sketch_out, err.msg);
			goto out;
		}
	}
	if (o.svg && write_svg(&o, metric, unit, v, &s, &gs) != 0)
		goto out;
	tk_outfile of;
	FILE *out = out_open(&of, o.output, &err);
	if (!out) {
		tk_cli_fail("stats: %s", err.msg);
		goto out;
	}
	int w = emit(&o, out, metric, unit, v, &s, &gs, used, &err);
	if (out_close(&of, w < 0, &err) < 0) {
		tk_cli_fail("stats: %s", err.msg);
		goto out;
	}
	if (bad)
		tk_cli_warn("stats: %zu input%s skipped", bad, bad == 1 ? "" : "s");
	rc = 0;
out:
	tk_values_free(v);
	for (size_t i = 0; i < gs.n; i++)
		free(gs.own[i]);
	free(gs.g), free(gs.own);
	free(o.inputs), free(o.sketch_in);
	free(sk_metric), free(sk_unit), free(metric_buf);
	return rc;
}
