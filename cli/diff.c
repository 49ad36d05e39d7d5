/* tracekit diff — what changed between two sets of runs, function by function, with significance. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "tracekit/stats.h"
#include "tracekit/symbol.h"

TK_COMMAND(diff, "compare runs A and B per function: change, Mann-Whitney p, bootstrap interval")

enum {
	OPT_SEP = 1,
	OPT_SIDE,
	OPT_JSON,
	OPT_LIMIT,
	OPT_SVG,
	OPT_FAIL_IF_SLOWER,
	OPT_FAIL_MIN_SHARE,
	OPT_KEEP_GOING,
	OPT_OUTPUT
};

static const tk_cli_option options[] = {
    TK_OPT_SECTION("options"),
    TK_OPT_OPERAND(
        OPT_SIDE, "A… -- B…",
        "the runs of each side (files or session directories); without --, two operands are A and B, and one is a "
        "differential folded file"),
    TK_OPT_FLAG(OPT_SEP, "--", NULL, "ends side A: the operands after it are side B"),
    TK_OPT_FLAG(OPT_JSON, "--json", NULL,
                "{\"functions\": [{\"name\", \"self_a\", \"self_b\", \"total_a\", \"total_b\", \"p\"}, …]}: absolute "
                "weights summed over each side, p null with one run a side"),
    TK_OPT_VALUE(OPT_LIMIT, "--limit", NULL, "N", "rows to show (default 30 for text, all for JSON; 0 = all)"),
    TK_OPT_VALUE(OPT_SVG, "--svg", NULL, "FILE",
                 "differential flame graph: B's call tree, red where a path's share grew, blue where it shrank"),
    TK_OPT_VALUE(
        OPT_FAIL_IF_SLOWER, "--fail-if-slower", NULL, "PCT",
        "exit 3 when the total weight per run, or a function's total weight per run, grew by more than PCT % with "
        "p < 0.05 (with one run a side there is no p: the change alone decides). Functions under --fail-min-share "
        "are ignored."),
    TK_OPT_VALUE(OPT_FAIL_MIN_SHARE, "--fail-min-share", NULL, "PCT",
                 "ignore functions whose total share is below PCT % on both sides (default 1)"),
    TK_OPT_FLAG(OPT_KEEP_GOING, "--keep-going", NULL, "skip inputs that cannot be read (reported on stderr)"),
    TK_OPT_VALUE(OPT_OUTPUT, "--output", "-o", "FILE", "write there instead of standard output"),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_diff = {
    .name = "diff",
    .usage = "tracekit diff [options] A… -- B…\n"
             "tracekit diff [options] A B\n"
             "tracekit diff [options] DIFF   (differential folded stacks, `STACK BEFORE AFTER`: A is the\n"
             "                                first count, B the second, as difffolded.pl wrote them)",
    .about = "Per function (symbol + binary), self and total weight on each side (absolute, summed over\n"
             "the side's runs, and as a share of the side's weight), and the change in mean weight per run,\n"
             "sorted by the size of the self change. With several runs a side: the two-sided Mann-Whitney U\n"
             "p-value of the per-run self weights (exact for small samples without ties, otherwise the normal\n"
             "approximation with tie correction) and a 95 % bootstrap interval of the change (fixed seed).\n",
    .options = options,
    .column = 23,
};

typedef struct side {
	tk_fntable *ft;
	tk_profile *merged; /* only for --svg */
} side;

static double scale_for(const char *unit, const char **shown)
{
	if (strcmp(unit, "ns") == 0) {
		*shown = "ms";
		return 1e-6;
	}
	*shown = unit;
	return 1;
}

static void write_text(FILE *out, const tk_diff *d, size_t limit)
{
	const char *u;
	double sc = scale_for(d->unit, &u);
	char p[32];
	double ma = d->weight_a / d->runs_a, mb = d->weight_b / d->runs_b;
	fprintf(out, "A: %zu run%s, %.2f %s per run; B: %zu run%s, %.2f %s per run; total %+.2f %s (%+.2f%%)",
	        d->runs_a, d->runs_a == 1 ? "" : "s", ma * sc, u, d->runs_b, d->runs_b == 1 ? "" : "s", mb * sc, u,
	        (mb - ma) * sc, u, ma > 0 ? 100 * (mb - ma) / ma : 0.0);
	if (isfinite(d->p_weight))
		fprintf(out, ", p = %.3g", d->p_weight);
	fputc('\n', out);
	int sig = d->runs_a > 1 && d->runs_b > 1;
	fprintf(out, "%s per run, shares of each side's weight; sorted by |self change|\n", u);
	fprintf(out, "  %10s %7s %10s %7s %10s %8s  %10s %10s %10s", "Self A", "%", "Self B", "%", "ΔSelf", "Δ%",
	        "Total A", "Total B", "ΔTotal");
	if (sig)
		fprintf(out, " %8s  %-23s", "p", "95% CI of ΔSelf");
	fputs("  Function\n", out);
	size_t n = limit && limit < d->n ? limit : d->n;
	for (size_t i = 0; i < n; i++) {
		const tk_diff_row *r = &d->rows[i];
		double sa = r->self_a / d->runs_a, sb = r->self_b / d->runs_b;
		double ta = r->total_a / d->runs_a, tb = r->total_b / d->runs_b;
		char pct[16];
		if (sa > 0)
			snprintf(pct, sizeof pct, "%+.1f%%", 100 * (sb - sa) / sa);
		else
			snprintf(pct, sizeof pct, "%s", sb > 0 ? "new" : "0");
		fprintf(out, "  %10.2f %6.2f%% %10.2f %6.2f%% %+10.2f %8s  %10.2f %10.2f %+10.2f", sa * sc,
		        d->weight_a > 0 ? 100 * r->self_a / d->weight_a : 0, sb * sc,
		        d->weight_b > 0 ? 100 * r->self_b / d->weight_b : 0, (sb - sa) * sc, pct, ta * sc, tb * sc,
		        (tb - ta) * sc);
		if (sig) {
			char ci[48];
			snprintf(p, sizeof p, "%.3g", r->p);
			snprintf(ci, sizeof ci, "[%+.2f, %+.2f]", r->ci_lo * sc, r->ci_hi * sc);
			fprintf(out, " %8s  %-23s", p, ci);
		}
		fprintf(out, "  %s%s%s%s\n", r->name, *r->binary ? "  [" : "", r->binary, *r->binary ? "]" : "");
	}
	if (n < d->n)
		fprintf(out, "  … %zu more (--limit 0 for all)\n", d->n - n);
}

/* The --fail-if-slower gate: returns 1 (and prints what) when something got slower. */
static int gate(const tk_diff *d, double pct, double min_share)
{
	int sig = d->runs_a > 1 && d->runs_b > 1, slower = 0;
	double ma = d->weight_a / d->runs_a, mb = d->weight_b / d->runs_b;
	if (ma > 0 && 100 * (mb - ma) / ma > pct && (!sig || d->p_weight < 0.05)) {
		tk_cli_warn("diff: the total got slower by %.2f%% (> %g%%)%s", 100 * (mb - ma) / ma, pct,
		            sig ? "" : " (one run a side: no p-value)");
		slower = 1;
	}
	for (size_t i = 0; i < d->n; i++) {
		const tk_diff_row *r = &d->rows[i];
		double ta = r->total_a / d->runs_a, tb = r->total_b / d->runs_b;
		double sha = d->weight_a > 0 ? 100 * r->total_a / d->weight_a : 0;
		double shb = d->weight_b > 0 ? 100 * r->total_b / d->weight_b : 0;
		if (sha < min_share && shb < min_share)
			continue;
		int grew = ta > 0 ? 100 * (tb - ta) / ta > pct : tb > 0;
		if (grew && (!sig || r->p_total < 0.05)) {
			if (ta > 0)
				tk_cli_warn("diff: %s got slower by %.2f%% (> %g%%)%s", r->name, 100 * (tb - ta) / ta,
				            pct, sig ? "" : " (one run a side: no p-value)");
			else
				tk_cli_warn("diff: %s is new in B (%.2f%% of its weight)", r->name, shb);
			slower = 1;
		}
	}
	return slower;
}

static int read_side(const char **paths, size_t n, side *s, int want_merged, int keep_going, const char *label,
                     unsigned run)
{
	s->ft = tk_fntable_new();
	if (want_merged)
		s->merged = tk_profile_new();
	struct timespec t0, last = {0, 0}, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int drawn = 0;
	for (size_t i = 0; i < n; i++) {
		tk_error err = {{0}};
		tk_profile *p = tk_profile_new();
		tk_read_options ro;
		tk_read_options_init(&ro);
		ro.run = run;
		ro.warn = tk_cli_read_warn;
		ro.warn_ctx = (void *)"diff";
		int r = tk_read_path(p, paths[i], &ro, &err);
		if (r == 0)
			r = tk_elf_name_session(&p, NULL, &err);
		if (r == 0)
			r = tk_fntable_add(s->ft, p, paths[i], &err) < 0 ? -1 : 0;
		if (r == 0 && want_merged)
			r = tk_profile_merge(s->merged, p, &err);
		tk_profile_free(p);
		if (drawn)
			fputs("\r\033[K", stderr), drawn = 0;
		if (r < 0) {
			if (!keep_going)
				return tk_cli_fail("diff: %s", err.msg);
			tk_cli_warn("diff: skipped: %s", err.msg);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (n > 1 && isatty(2) &&
		    (now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000 > 200) {
			double el = (now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9;
			fprintf(stderr, "\r%s: %zu / %zu inputs (%.0f/s)", label, i + 1, n,
			        el > 0 ? (i + 1) / el : 0.0);
			drawn = 1, last = now;
		}
	}
	if (drawn)
		fputs("\r\033[K", stderr);
	if (tk_fntable_nprofiles(s->ft) == 0)
		return tk_cli_fail("diff: side %s has no readable profile", label);
	return 0;
}

typedef struct diff_args {
	const char **a, **b;
	size_t na, nb;
	int json, keep_going, have_limit, seen_sep;
	uint32_t limit;
	double fail_pct, min_share;
	const char *svg, *output;
} diff_args;

static int diff_option(void *ctx, const tk_cli_option *o, const char *val, const char *spelling)
{
	diff_args *d = ctx;
	switch (o->id) {
	case OPT_SEP:
		if (d->seen_sep)
			return tk_cli_fail("diff: '--' given twice"), -1;
		d->seen_sep = 1;
		return 0;
	case OPT_JSON: d->json = 1; return 0;
	case OPT_KEEP_GOING: d->keep_going = 1; return 0;
	case OPT_LIMIT: d->have_limit = 1; return tk_cli_uint("diff", "--limit", val, &d->limit);
	case OPT_FAIL_IF_SLOWER: return tk_cli_percent("diff", "--fail-if-slower", val, &d->fail_pct);
	case OPT_FAIL_MIN_SHARE: return tk_cli_percent("diff", "--fail-min-share", val, &d->min_share);
	case OPT_SVG: d->svg = val; return 0;
	case OPT_OUTPUT: d->output = val; return 0;
	}
	if (d->seen_sep) /* OPT_SIDE */
		d->b[d->nb++] = val;
	else
		d->a[d->na++] = val;
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	diff_args args = {.a = calloc((size_t)argc, sizeof(char *)),
	                  .b = calloc((size_t)argc, sizeof(char *)),
	                  .limit = 30,
	                  .fail_pct = NAN,
	                  .min_share = 1};
	side A = {0}, B = {0};
	tk_diff *d = NULL;
	int rc = tk_cli_parse(&tk_cli_command_diff, argc, argv, 1, diff_option, &args, NULL);
	const char **a = args.a, **b = args.b;
	size_t na = args.na, nb = args.nb;
	int json = args.json, keep_going = args.keep_going, have_limit = args.have_limit, seen_sep = args.seen_sep;
	uint32_t limit = args.limit;
	double fail_pct = args.fail_pct, min_share = args.min_share;
	const char *svg = args.svg, *output = args.output;
	if (rc) {
		rc = rc < 0 ? 0 : rc;
		goto out;
	}
	rc = 2; /* a usage error until the arguments are checked */
	unsigned run_a = 0, run_b = 0;
	if (!seen_sep && na == 2)
		b[nb++] = a[--na];
	else if (!seen_sep && na == 1) /* one differential folded file: its two counts are the two runs */
		b[nb++] = a[0], run_a = 1, run_b = 2;
	if (na == 0 || nb == 0) {
		tk_cli_fail("diff: expected A… -- B… (or A B with one run a side); see tracekit diff --help");
		goto out;
	}
	rc = 1;
	if (json && !have_limit)
		limit = 0;
	if (read_side(a, na, &A, svg != NULL, keep_going, "A", run_a) ||
	    read_side(b, nb, &B, svg != NULL, keep_going, "B", run_b))
		goto out;
	tk_error err = {{0}};
	d = tk_diff_build(A.ft, B.ft, &err);
	if (!d) {
		tk_cli_fail("%s", err.msg);
		goto out;
	}
	if (svg) {
		tk_outfile of;
		if (tk_outfile_open(&of, svg, &err) < 0) {
			tk_cli_fail("diff: %s", err.msg);
			goto out;
		}
		if (tk_write_diff_flamegraph(of.f, A.merged, B.merged, "Differential flame graph (B vs A)", &err) < 0) {
			tk_outfile_abort(&of);
			tk_cli_fail("diff: %s: %s", svg, err.msg);
			goto out;
		}
		if (tk_outfile_commit(&of, &err) < 0) {
			tk_cli_fail("diff: %s", err.msg);
			goto out;
		}
	}
	tk_outfile of;
	if (tk_outfile_open(&of, output, &err) < 0) {
		tk_cli_fail("diff: %s", err.msg);
		goto out;
	}
	int w = 0;
	if (json)
		w = tk_diff_write_json(of.f, d, limit, &err);
	else
		write_text(of.f, d, limit);
	if (w < 0) {
		tk_outfile_abort(&of);
		tk_cli_fail("diff: %s", err.msg);
		goto out;
	}
	if (tk_outfile_commit(&of, &err) < 0) {
		tk_cli_fail("diff: %s", err.msg);
		goto out;
	}
	rc = isfinite(fail_pct) && gate(d, fail_pct, min_share) ? 3 : 0;
out:
	tk_diff_free(d);
	tk_fntable_free(A.ft), tk_fntable_free(B.ft);
	tk_profile_free(A.merged), tk_profile_free(B.merged);
	free(a), free(b);
	return rc;
}
