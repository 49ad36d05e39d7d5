/*
 * tracekit/stats.h — statistics across many reports and runs: exact percentiles, a mergeable
 * quantile sketch, the one-line summary and its JSON form, and the tests `tracekit diff` uses.
 *
 * Percentiles (exact)
 *   Type 7 of Hyndman & Fan (1996), the default of numpy and R: for n sorted values x[0..n-1] and a
 *   probability q, h = (n - 1)·q, j = ⌊h⌋, and Q(q) = x[j] + (h − j)·(x[j+1] − x[j]) (x[n-1] when
 *   j = n − 1). Probabilities are given as exact fractions num/den (p99.9 is 999/1000), so h is
 *   computed in integers and never rounded; the interpolation is done in 113-bit arithmetic where the
 *   compiler has it (__float128), so the result is the type 7 value correctly rounded to a double in
 *   all but astronomically rare cases (one rounding of a 113-bit intermediate).
 *
 * The summary
 *   count, mean, weighted mean (when weights were given), min, p50, p90, p95, p99, p99.9, max, and
 *   whether the percentiles are exact or from the sketch. Means are compensated (Neumaier) sums in
 *   long double, so they do not depend on the order the values came in beyond the last bit.
 *
 * JSON (tk_summary_write_json) writes exactly one object, keys in this order:
 *   {"metric": M, "unit": U, "count": N, "mean": x, "min": x, "p50": x, "p90": x, "p95": x,
 *    "p99": x, "p99.9": x, "max": x}
 *   numbers are the shortest decimal that reads back as the same double (%.15g, %.16g or %.17g,
 *   the first that round-trips); a value that does not exist (count 0) or is not finite is null.
 *   `tracekit stats --json` and the fleet store (`tracekit stats --db URL`) both print through it.
 *
 * The sketch (DDSketch-style, Masson, Rim & Lee, VLDB 2019)
 *   Values are counted in logarithmic buckets: bucket i holds (γ^(i−1), γ^i] with γ = (1+α)/(1−α)
 *   and is represented by 2γ^i/(γ+1), which is within α of every value in it. Negative values have
 *   a mirrored store, zeros a counter. α = TK_SKETCH_ALPHA (0.95 %), so every quantile the sketch
 *   reports is within TK_SKETCH_REL_ERR (1 %) of the exact type 7 value, relative to that value:
 *   tk_sketch_quantile estimates the two order statistics type 7 interpolates between and
 *   interpolates their estimates, which keeps the bound. Memory: buckets span at most the doubles'
 *   exponent range, ≤ 2 × 75,000 counters (~1.2 MB) whatever the count; typical data needs a few
 *   thousand. count, sum, weighted sums, min and max are kept exactly.
 *   Sketches with the same α merge exactly (bucket counts add), in any order and across machines
 *   through the text form (tk_sketch_write / tk_sketch_read):
 *       tracekit-sketch 1
 *       alpha 0.0095
 *       metric cpu.duration        (optional lines: metric, unit)
 *       unit s
 *       count N
 *       sum S                      (S: the long double sum, %.21Lg, so merged means keep every bit)
 *       wsum S
 *       wvsum S
 *                                  (X below: shortest round-trip decimal of a double, as in the JSON)
 *       weighted 0|1
 *       min X
 *       max X
 *       zero N
 *       pos I:C I:C …              (bucket index:count, ascending index; may be empty)
 *       neg I:C …
 *       end
 */
#ifndef TRACEKIT_STATS_H
#define TRACEKIT_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracekit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- exact percentiles ---- */

/* Type 7 quantile num/den (0 ≤ num ≤ den, den > 0) of n ≥ 1 values sorted ascending. */
double tk_quantile7(const double *sorted, size_t n, uint64_t num, uint64_t den);
/* The same for a probability given as a double (h = (n−1)·q computed in long double). */
double tk_quantile7_p(const double *sorted, size_t n, double q);
/* Sort n doubles ascending (LSD radix sort, NaN-free input; −0 sorts before +0). Returns 0, or -1
 * when out of memory. */
int tk_sort_doubles(double *v, size_t n);

/* ---- the summary ---- */

/* The percentiles every summary reports, as fractions (p50 = 50/100 … p99.9 = 999/1000). */
enum { TK_SUMMARY_NPCT = 5 };
extern const uint64_t tk_summary_pct_num[TK_SUMMARY_NPCT], tk_summary_pct_den[TK_SUMMARY_NPCT];
extern const char *const tk_summary_pct_name[TK_SUMMARY_NPCT]; /* "p50" … "p99.9" */

typedef struct tk_summary {
	uint64_t count;
	double mean;
	double wmean; /* Σ w·x / Σ w; NAN when no weights were given */
	double min, max;
	double pct[TK_SUMMARY_NPCT]; /* p50, p90, p95, p99, p99.9 */
	int exact;                   /* 1: exact type 7; 0: from the sketch (within rel_err) */
	double rel_err;              /* 0 when exact, else TK_SKETCH_REL_ERR */
} tk_summary;

/* Summary of n values sorted ascending, with weights w (parallel to sorted; may be NULL). */
void tk_summary_sorted(tk_summary *s, const double *sorted, const double *w, size_t n);

/* Write the JSON object (see above) and a newline. Returns 0, or -1 with err on a write error. */
int tk_summary_write_json(FILE *f, const char *metric, const char *unit, const tk_summary *s, tk_error *err);
/* Format a double as the JSON form uses it (shortest round-trip, or "null"); buf ≥ 32 bytes. */
const char *tk_stats_fmt_double(double x, char buf[32]);

/* ---- value sets: exact while they fit, the sketch past a limit ---- */

typedef struct tk_values tk_values;

/* A value set that keeps values exactly until they would take more than limit_bytes (16 bytes per
 * value: the value and the sort's scratch; 24 with weights), then moves to a sketch.
 * limit_bytes 0 means no limit. */
tk_values *tk_values_new(size_t limit_bytes);
void tk_values_free(tk_values *v);
/* Add a value (finite; -1 with err otherwise or when out of memory). */
int tk_values_add(tk_values *v, double x, tk_error *err);
/* Add a weighted value (w ≥ 0, finite): the summary then has a weighted mean. */
int tk_values_add_w(tk_values *v, double x, double w, tk_error *err);
uint64_t tk_values_count(const tk_values *v);
int tk_values_exact(const tk_values *v); /* still exact? */
/* Force the sketch now (e.g. to write --sketch-out), moving every value kept so far into it. */
int tk_values_to_sketch(tk_values *v, tk_error *err);
/* Merge a sketch in (forces the sketch form). */
struct tk_sketch;
int tk_values_merge_sketch(tk_values *v, const struct tk_sketch *s, tk_error *err);
/* Summarize (sorts the kept values in place). Returns 0, or -1 with err. */
int tk_values_summary(tk_values *v, tk_summary *s, tk_error *err);
/* The kept values, sorted ascending after tk_values_summary (NULL once in sketch form). */
const double *tk_values_sorted(const tk_values *v, size_t *n);
/* The sketch (NULL while exact). */
const struct tk_sketch *tk_values_sketch(const tk_values *v);

/* Read a file of numbers (one per line; blank lines and lines starting with # skipped; gzip'd is
 * fine; "-" is standard input) into v. progress (may be NULL) is called now and then with the bytes
 * read so far and the total. Returns the number of values read, or -1 with err naming the file, the
 * line and the text that is not a finite number. */
int64_t tk_values_read(tk_values *v, const char *path, void (*progress)(void *, uint64_t, uint64_t), void *ctx,
                       tk_error *err);
/* The same over an open stream (read.h), e.g. bytes in memory. */
struct tk_input;
int64_t tk_values_read_input(tk_values *v, struct tk_input *in, void (*progress)(void *, uint64_t, uint64_t), void *ctx,
                             tk_error *err);

/* ---- the mergeable sketch ---- */

#define TK_SKETCH_ALPHA 0.0095 /* bucket half-width: the representative's relative error */
#define TK_SKETCH_REL_ERR 0.01 /* the stated bound on every quantile, relative to the exact value */

typedef struct tk_sketch tk_sketch;

tk_sketch *tk_sketch_new(void);
void tk_sketch_free(tk_sketch *s);
/* Add a finite value, n times, with weight w per copy (w = 1 and weighted stays 0 for tk_sketch_add). */
int tk_sketch_add(tk_sketch *s, double x);
int tk_sketch_add_w(tk_sketch *s, double x, double w, uint64_t n);
/* into += from. Returns 0, or -1 with err when out of memory. */
int tk_sketch_merge(tk_sketch *into, const tk_sketch *from, tk_error *err);
uint64_t tk_sketch_count(const tk_sketch *s);
/* Type 7 quantile estimate (within TK_SKETCH_REL_ERR of the exact value); NAN when empty. */
double tk_sketch_quantile(const tk_sketch *s, double q);
double tk_sketch_quantile_frac(const tk_sketch *s, uint64_t num, uint64_t den);
/* The summary (exact = 0; count, mean, weighted mean, min and max exact). */
void tk_sketch_summary(const tk_sketch *s, tk_summary *out);
/* Estimated number of values ≤ x (for CDFs and histograms drawn from a sketch). */
double tk_sketch_rank(const tk_sketch *s, double x);
/* Approximate heap bytes. */
size_t tk_sketch_memory(const tk_sketch *s);

/* Text form (see above); metric and unit may be NULL. */
int tk_sketch_write(FILE *f, const tk_sketch *s, const char *metric, const char *unit, tk_error *err);
/* Read one sketch; name is used in errors. metric/unit (may be NULL) get malloc'd copies or NULL.
 * Returns NULL with err (one line: name:line: problem) on malformed input or another α. */
tk_sketch *tk_sketch_read(FILE *f, const char *name, char **metric, char **unit, tk_error *err);

/* ---- functions across profiles (`tracekit stats --functions`, `tracekit diff`) ---- */

/* A table of functions (symbol + binary, as tk_top tells them apart) over a list of profiles: each
 * profile's weight and, per function, its self and total weight in that profile (tk_top: total
 * counted once per sample). A function absent from a profile weighs 0 there. */
typedef struct tk_fntable tk_fntable;

tk_fntable *tk_fntable_new(void);
void tk_fntable_free(tk_fntable *t);
/* Add one profile (tk_top_build over all its threads). name labels it (a path). Returns its index,
 * or -1 with err. Profiles of different units may not be mixed (err). */
struct tk_profile;
int tk_fntable_add(tk_fntable *t, const struct tk_profile *p, const char *name, tk_error *err);
size_t tk_fntable_nprofiles(const tk_fntable *t);
size_t tk_fntable_nfunctions(const tk_fntable *t);
const char *tk_fntable_unit(const tk_fntable *t); /* "ns", … ; "" before any profile */
const char *tk_fntable_profile_name(const tk_fntable *t, size_t k);
double tk_fntable_profile_weight(const tk_fntable *t, size_t k);
const char *tk_fntable_name(const tk_fntable *t, size_t f);   /* the symbol (or 0x… address) */
const char *tk_fntable_binary(const tk_fntable *t, size_t f); /* "" when none */
/* Index of the function called name (symbol, or BINARY`SYMBOL); -1 if absent. */
ptrdiff_t tk_fntable_find(const tk_fntable *t, const char *name);
/* Index of the function (name, binary) exactly; -1 if absent. */
ptrdiff_t tk_fntable_find_exact(const tk_fntable *t, const char *name, const char *binary);
/* Self (total = 0) or total (total = 1) weight of function f in every profile, out[nprofiles]. */
void tk_fntable_values(const tk_fntable *t, size_t f, int total, double *out);
/* The profiles where f has weight, ascending by profile (the others weigh 0): sparse access for
 * tables where most functions appear in few profiles. */
typedef struct tk_fn_cell {
	uint32_t profile;
	double self, total;
} tk_fn_cell;
const tk_fn_cell *tk_fntable_cells(const tk_fntable *t, size_t f, size_t *n);
/* Σ over profiles of self or total weight of f. */
double tk_fntable_sum(const tk_fntable *t, size_t f, int total);

/* Type 7 quantile num/den of n values of which the first n − k are 0 and the rest are nz[0..k)
 * (ascending, > 0): the share of a function in the inputs, most of which lack it. */
double tk_quantile7_sparse(const double *nz, size_t k, size_t n, uint64_t num, uint64_t den);

/* A function's spread across the profiles of a tk_fntable, in percent of each input's weight. */
typedef struct tk_fn_spread_row {
	size_t function;     /* index in the tk_fntable */
	double self[4];      /* P50, P95, P99 and max of its self share */
	double total[4];     /* the same of its total share */
	double worst_share;  /* its self weight in the heaviest 5 % of inputs, % of their weight */
	double all_share;    /* its self weight in all inputs, % of all their weight */
} tk_fn_spread_row;

typedef struct tk_fn_spread {
	tk_fn_spread_row *rows;  /* every function, by self P50, P95, P99, max descending (ties: index) */
	tk_fn_spread_row *worst; /* the same rows by worst_share descending (ties: index) */
	size_t n;
	double threshold; /* the heaviest 5 %: inputs weighing at least this (type 7 P95 of the weights) */
	size_t nworst;    /* how many inputs that is */
} tk_fn_spread;

/* Compute the spread of every function of ft. Returns 0 (or -1 with err). */
int tk_fn_spread_build(const tk_fntable *ft, tk_fn_spread *out, tk_error *err);
void tk_fn_spread_free(tk_fn_spread *s);

/* ---- pictures ---- */

/* One group of values for the box plot (e.g. one input): sorted values, or a sketch. */
typedef struct tk_stats_group {
	const char *name;
	const double *sorted; /* ascending, n values; NULL when sketch is given */
	size_t n;
	const tk_sketch *sketch;
} tk_stats_group;

/* A self-contained SVG (no scripts, fonts or links) of one metric: a histogram, the CDF with p50 …
 * p99.9 marked, and a box plot per group (box p25–p75, line at p50, whiskers p5–p95, dots p99 and
 * max). all is the whole set (sorted values or a sketch). The value axis is logarithmic when every
 * value is positive and max/min ≥ 100. Returns 0, or -1 with err on a write error. */
int tk_write_stats_svg(FILE *f, const char *metric, const char *unit, const tk_summary *s, const tk_stats_group *all,
                       const tk_stats_group *groups, size_t ngroups, tk_error *err);

/* A time series chart: one line per series over nx time buckets (labels xlabels, e.g. days), each
 * series' y[i] its value in bucket i (NAN: none there), thresholds as dashed lines across (alert
 * rules). A self-contained SVG (no scripts, fonts or links); every label XML-escaped. */
typedef struct tk_trend_series {
	const char *name;
	const double *y; /* nx values */
} tk_trend_series;
typedef struct tk_trend_threshold {
	const char *label;
	double value;
} tk_trend_threshold;
typedef struct tk_trend_chart {
	const char *title, *unit;
	const char *const *xlabels;
	size_t nx;
	const tk_trend_series *series;
	size_t nseries;
	const tk_trend_threshold *thresholds;
	size_t nthresholds;
} tk_trend_chart;
int tk_write_trend_svg(FILE *f, const tk_trend_chart *c, tk_error *err);

/* A distribution chart: one histogram per series over the same bins (grouped bars, counts), and
 * below it on the same value axis a box plot per series (box P25-P75, line at P50, whiskers P5-P95,
 * dots at min and max), the whisker rule written on the chart. Bins are drawn equally wide: edges
 * (nbins + 1, ascending) evenly spaced, or evenly on a logarithmic scale (log = 1). A self-contained
 * SVG (no scripts, fonts or links); every label XML-escaped. (lib/write/dist_svg.c) */
typedef struct tk_dist_series {
	const char *name;
	const uint64_t *counts; /* nbins */
	uint64_t n;
	double min, p5, p25, p50, p75, p95, max;
} tk_dist_series;
typedef struct tk_dist_chart {
	const char *title, *unit;
	const double *edges;
	size_t nbins;
	int log;
	const tk_dist_series *series;
	size_t nseries;
} tk_dist_chart;
int tk_write_dist_svg(FILE *f, const tk_dist_chart *c, tk_error *err);

/* The same figure's histogram as Unicode bars for a terminal: rows bins (≥ 2), bars up to width
 * cells (▏…█ eighths), each row "  [lo, hi)  bar  count". */
int tk_write_stats_bars(FILE *f, const tk_summary *s, const tk_stats_group *all, unsigned rows, unsigned width,
                        tk_error *err);

/* ---- comparing two sets of runs (`tracekit diff`) ---- */

/* One function of a diff. Weights are absolute, in the profiles' unit, summed over each side's runs;
 * shares are of the side's summed weight. With several runs a side, p is the two-sided Mann-Whitney
 * p-value of the per-run self weights (p_total: of the per-run total weights) and [ci_lo, ci_hi]
 * the 95 % bootstrap interval of the change in mean self weight per run (for the first 100 rows, the
 * ones people read: it costs 2,000 resamples each); otherwise they are NAN. */
typedef struct tk_diff_row {
	const char *name, *binary;
	double self_a, self_b, total_a, total_b;
	double change;       /* mean self per run: B − A (the sort key, by magnitude) */
	double total_change; /* mean total per run: B − A */
	double p, p_total, ci_lo, ci_hi;
} tk_diff_row;

typedef struct tk_diff {
	tk_diff_row *rows; /* sorted by |change| descending, then name */
	size_t n;
	size_t runs_a, runs_b;
	double weight_a, weight_b; /* Σ of each side's profile weights */
	double p_weight;           /* Mann-Whitney over the runs' total weights (NAN with one run a side) */
	const char *unit;
} tk_diff;

/* Compare the functions of a (before) and b (after); both tables must stay alive while the diff is
 * used. The bootstrap uses a fixed seed, so a diff repeats exactly. Returns NULL with err (units
 * differ, an empty side, out of memory). */
tk_diff *tk_diff_build(const tk_fntable *a, const tk_fntable *b, tk_error *err);
void tk_diff_free(tk_diff *d);
/* {"functions": [{"name": S, "self_a": x, "self_b": x, "total_a": x, "total_b": x, "p": x|null}, …]}
 * in the diff's order; limit 0 = every row. */
int tk_diff_write_json(FILE *f, const tk_diff *d, size_t limit, tk_error *err);

/* Add every sample of src to dst (frames, binaries and strings re-interned; threads kept apart by
 * (pid, tid)), so several runs become one profile, e.g. for a differential flame graph. Units must
 * match (or dst be empty). Returns 0, or -1 with err. */
int tk_profile_merge(struct tk_profile *dst, const struct tk_profile *src, tk_error *err);

/* A differential flame graph: B's call tree (threads merged), each frame coloured by the change of
 * its total share from A to B (the same call path in A): red where it grew, blue where it shrank,
 * the intensity by the change's size relative to the largest; the tooltip gives A's and B's weight
 * and share. Uses the SVG flame graph writer (tk_write_flamegraph). Returns 0, or -1 with err. */
int tk_write_diff_flamegraph(FILE *f, const struct tk_profile *a, const struct tk_profile *b, const char *title,
                             tk_error *err);

/* ---- tests for comparing runs ---- */

/* Two-sided Mann-Whitney U test of samples a (na) and b (nb). Exact (the permutation distribution
 * of U, counted by dynamic programming) when there are no ties and na·nb ≤ 10,000 … in practice
 * when both na, nb ≤ 50; otherwise the normal approximation with tie correction and continuity
 * correction. Returns the p-value (1 when either side is empty); *u_out (may be NULL) gets U of a
 * (the number of pairs where a > b, ties counting 1/2). */
double tk_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u_out);
/* Free the calling thread's cached null distribution (the exact test keeps its last one per thread):
 * for threads that end, e.g. a server's per-connection threads. */
void tk_mann_whitney_release(void);

/* Percentile bootstrap interval of mean(b) − mean(a): reps resamples of each side (with a fixed
 * seed, so runs repeat), the (1−conf)/2 and (1+conf)/2 type 7 quantiles of the differences. */
void tk_bootstrap_mean_diff(const double *a, size_t na, const double *b, size_t nb, unsigned reps, double conf,
                            uint64_t seed, double *lo, double *hi);

#ifdef __cplusplus
}
#endif
#endif
