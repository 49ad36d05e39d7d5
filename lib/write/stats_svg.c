/* Pictures of one metric: histogram, CDF with the percentiles marked, box plots (SVG), and
 * Unicode bars for a terminal. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/stats.h"
#include "util/text.h"

#define W 960
#define ML 150 /* left margin: tick labels and input names */
#define MR 40
#define PW (W - ML - MR)

typedef struct axis {
	double lo, hi;
	int log;
} axis;

static double qf(const tk_stats_group *g, double p)
{
	if (g->sorted)
		return tk_quantile7_p(g->sorted, g->n, p);
	return g->sketch ? tk_sketch_quantile(g->sketch, p) : NAN;
}

static uint64_t gcount(const tk_stats_group *g)
{
	return g->sorted ? g->n : g->sketch ? tk_sketch_count(g->sketch) : 0;
}

/* Number of values < x (sorted) or ≈ ≤ x (sketch). */
static double below(const tk_stats_group *g, double x, int inclusive)
{
	if (g->sorted) {
		size_t lo = 0, hi = g->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (inclusive ? g->sorted[mid] <= x : g->sorted[mid] < x)
				lo = mid + 1;
			else
				hi = mid;
		}
		return (double)lo;
	}
	return g->sketch ? tk_sketch_rank(g->sketch, x) : 0;
}

/* Logarithmic when every value is positive and they span a decade or more (skewed data:
 * durations, weights); ticks then at 1, 2, 5 × 10^k inside the range. */
static axis make_axis(double mn, double mx)
{
	axis a = {mn, mx, 0};
	if (mn > 0 && mx / mn >= 10) {
		a.log = 1;
		a.lo = mn / 1.15;
		a.hi = mx * 1.15;
		return a;
	}
	if (!(mx > mn)) {
		double d = mn == 0 ? 1 : fabs(mn) * 0.1;
		a.lo = mn - d, a.hi = mx + d;
	}
	return a;
}

static double ax_frac(const axis *a, double v)
{
	if (a->log)
		return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	return (v - a->lo) / (a->hi - a->lo);
}

static double ax_inv(const axis *a, double f)
{
	if (a->log)
		return pow(10, log10(a->lo) + f * (log10(a->hi) - log10(a->lo)));
	return a->lo + f * (a->hi - a->lo);
}

static double sx(const axis *a, double v)
{
	double f = ax_frac(a, v);
	if (f < 0)
		f = 0;
	if (f > 1)
		f = 1;
	return ML + f * PW;
}

static void esc(FILE *f, const char *s)
{
	tk_xml_fput(f, s, SIZE_MAX);
}

static const char *num(double v, char *b)
{
	if (v == 0) {
		strcpy(b, "0");
		return b;
	}
	double m = fabs(v);
	if (m >= 1e6 || m < 1e-3)
		snprintf(b, 32, "%.3g", v);
	else
		snprintf(b, 32, "%.4g", v);
	return b;
}

/* Ticks on the value axis at y0 (top of the label row) for a panel spanning [top, bottom]. */
static void x_ticks(FILE *f, const axis *a, double top, double bottom)
{
	char b[32];
	if (a->log) {
		/* 1-2-5 ticks, or only the decades when there are many. */
		int decades = (int)ceil(log10(a->hi)) - (int)floor(log10(a->lo));
		static const double steps125[] = {1, 2, 5}, steps1[] = {1};
		const double *st = decades > 4 ? steps1 : steps125;
		int ns = decades > 4 ? 1 : 3;
		for (int e = (int)floor(log10(a->lo)); e <= (int)ceil(log10(a->hi)); e++)
			for (int k = 0; k < ns; k++) {
				double d = st[k] * pow(10, e);
				if (d < a->lo || d > a->hi)
					continue;
				double x = sx(a, d);
				fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x,
				        top, x, bottom);
				fprintf(f,
				        "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
				        x, bottom + 14, num(d, b));
			}
		return;
	}
	double span = a->hi - a->lo, raw = span / 6, mag = pow(10, floor(log10(raw))), step = mag;
	if (raw / mag > 5)
		step = 10 * mag;
	else if (raw / mag > 2)
		step = 5 * mag;
	else if (raw / mag > 1)
		step = 2 * mag;
	for (double t = ceil(a->lo / step) * step; t <= a->hi + step * 1e-9; t += step) {
		double x = sx(a, t), v = fabs(t) < step * 1e-9 ? 0 : t;
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, top, x, bottom);
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x,
		        bottom + 14, num(v, b));
	}
}

#define BINS 40

int tk_write_stats_svg(FILE *f, const char *metric, const char *unit, const tk_summary *s, const tk_stats_group *all,
                       const tk_stats_group *groups, size_t ngroups, tk_error *err)
{
	char b[32], b2[32];
	axis a = make_axis(s->min, s->max);
	const double HT = 70, HH = 240, CT = HT + HH + 60, CH = 240, BT = CT + CH + 70;
	size_t ng = ngroups > 40 ? 40 : ngroups;
	double BH = 34 * (double)(ng ? ng : 1);
	double H = BT + BH + 50;
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
	        "font-family=\"Verdana, sans-serif\" font-size=\"12\">\n"
	        "<style>.grid{stroke:#e4e4e4;stroke-width:1}.axis{stroke:#444;stroke-width:1}"
	        ".tick{fill:#444;font-size:11px}.bar{fill:#5b8ff9}.cdf{fill:none;stroke:#1f4e9c;stroke-width:2}"
	        ".pct{stroke:#d62728;stroke-width:1;stroke-dasharray:4 3}.pctl{fill:#d62728;font-size:11px}"
	        ".box{fill:#cfe0fd;stroke:#1f4e9c}.med{stroke:#d62728;stroke-width:2}.wh{stroke:#1f4e9c}"
	        ".dot{fill:#d62728}.title{font-size:16px;font-weight:bold}.h{font-size:13px;font-weight:bold}"
	        "</style>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
	        W, H, W, H);
	fputs("<text class=\"title\" x=\"20\" y=\"28\">", f);
	esc(f, metric);
	if (unit && *unit) {
		fputs(" (", f);
		esc(f, unit);
		fputc(')', f);
	}
	fprintf(f, "</text>\n<text x=\"20\" y=\"48\">%llu values, mean %s, percentiles %s%s%s</text>\n",
	        (unsigned long long)s->count, num(s->mean, b), s->exact ? "exact (type 7)" : "from the sketch (within ",
	        s->exact ? "" : "1 %", s->exact ? "" : ")");

	/* Histogram. */
	double edges[BINS + 1], counts[BINS], cmax = 0;
	for (int i = 0; i <= BINS; i++)
		edges[i] = ax_inv(&a, (double)i / BINS);
	for (int i = 0; i < BINS; i++) {
		counts[i] = i == BINS - 1 ? below(all, edges[i + 1], 1) - below(all, edges[i], 0)
		                          : below(all, edges[i + 1], 0) - below(all, edges[i], 0);
		if (counts[i] < 0)
			counts[i] = 0;
		if (counts[i] > cmax)
			cmax = counts[i];
	}
	fprintf(f, "<text class=\"h\" x=\"20\" y=\"%.0f\">Histogram%s</text>\n", HT - 8,
	        a.log ? " (logarithmic value axis)" : "");
	fprintf(f, "<g id=\"histogram\">\n");
	x_ticks(f, &a, HT, HT + HH);
	for (int i = 0; i < BINS; i++) {
		if (counts[i] <= 0)
			continue;
		double x0 = sx(&a, edges[i]), x1 = sx(&a, edges[i + 1]), h = counts[i] / cmax * (HH - 10);
		fprintf(f,
		        "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>[%s, %s): "
		        "%.0f</title></rect>\n",
		        x0 + 0.5, HT + HH - h, x1 - x0 - 1 > 0.5 ? x1 - x0 - 1 : 0.5, h, num(edges[i], b),
		        num(edges[i + 1], b2), counts[i]);
	}
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\"/>\n", ML, HT + HH, ML + PW,
	        HT + HH);
	fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.0f\" text-anchor=\"end\">%.0f</text>\n", ML - 6, HT + 14, cmax);
	fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.0f\" text-anchor=\"end\">0</text>\n</g>\n", ML - 6, HT + HH);

	/* CDF with the percentiles marked. */
	fprintf(f, "<text class=\"h\" x=\"20\" y=\"%.0f\">Cumulative distribution</text>\n<g id=\"cdf\">\n", CT - 8);
	x_ticks(f, &a, CT, CT + CH);
	for (int i = 0; i <= 4; i++) {
		double y = CT + CH - i * CH / 4;
		fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", ML, y, ML + PW, y);
		fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d%%</text>\n", ML - 6, y + 4,
		        25 * i);
	}
	fputs("<polyline class=\"cdf\" points=\"", f);
	for (int i = 0; i <= 400; i++) {
		double p = i / 400.0, v = qf(all, p);
		if (isfinite(v))
			fprintf(f, "%.1f,%.1f ", sx(&a, v), CT + CH - p * CH);
	}
	fputs("\"/>\n", f);
	for (int i = 0; i < TK_SUMMARY_NPCT; i++) {
		double x = sx(&a, s->pct[i]);
		double p = (double)tk_summary_pct_num[i] / tk_summary_pct_den[i];
		fprintf(f, "<line class=\"pct\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, CT, x, CT + CH);
		fprintf(f, "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>", x, CT + CH - p * CH);
		int right = x > ML + PW - 130;
		fprintf(f, "<text class=\"pctl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s %s</text>\n",
		        right ? x - 4 : x + 4, CT + CH - 12 - 14 * (TK_SUMMARY_NPCT - 1 - i), right ? "end" : "start",
		        tk_summary_pct_name[i], num(s->pct[i], b));
	}
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\"/>\n</g>\n", ML, CT + CH, ML + PW,
	        CT + CH);

	/* Box plots. */
	fprintf(f,
	        "<text class=\"h\" x=\"20\" y=\"%.0f\">Box plot%s: box p25–p75, line p50, whiskers p5–p95, dots p99 "
	        "and max</text>\n<g id=\"boxes\">\n",
	        BT - 8, ng > 1 ? " per input" : "");
	x_ticks(f, &a, BT, BT + BH);
	const tk_stats_group *gs = ng ? groups : all;
	for (size_t gi = 0; gi < (ng ? ng : 1); gi++) {
		const tk_stats_group *g = &gs[gi];
		double y = BT + 34 * (double)gi + 6, h = 22, m = y + h / 2;
		if (gcount(g) == 0)
			continue;
		double q[7] = {qf(g, 0.05), qf(g, 0.25), qf(g, 0.5), qf(g, 0.75), qf(g, 0.95), qf(g, 0.99), qf(g, 1)};
		fprintf(f, "<g><title>");
		esc(f, g->name ? g->name : "all");
		fprintf(f, ": n %llu, p50 %s</title>", (unsigned long long)gcount(g), num(q[2], b));
		fprintf(f, "<line class=\"wh\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", sx(&a, q[0]), m,
		        sx(&a, q[1]), m);
		fprintf(f, "<line class=\"wh\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", sx(&a, q[3]), m,
		        sx(&a, q[4]), m);
		fprintf(f, "<rect class=\"box\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\"/>", sx(&a, q[1]),
		        y, sx(&a, q[3]) - sx(&a, q[1]), h);
		fprintf(f, "<line class=\"med\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", sx(&a, q[2]), y,
		        sx(&a, q[2]), y + h);
		fprintf(f, "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>", sx(&a, q[5]), m);
		fprintf(f, "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>", sx(&a, q[6]), m);
		fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", ML - 6, m + 4);
		const char *nm = g->name ? g->name : "all";
		size_t len = strlen(nm);
		if (len > 22)
			fputs("…", f);
		esc(f, len > 22 ? nm + len - 22 : nm);
		fputs("</text></g>\n", f);
	}
	fputs("</g>\n</svg>\n", f);
	if (ferror(f))
		return tk_error_set(err, "writing the SVG: %s", strerror(errno ? errno : EIO));
	return 0;
}

int tk_write_stats_bars(FILE *f, const tk_summary *s, const tk_stats_group *all, unsigned rows, unsigned width,
                        tk_error *err)
{
	static const char *eighth[9] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉", "█"};
	char b[32], b2[32];
	if (rows < 2)
		rows = 2;
	if (rows > 200)
		rows = 200;
	axis a = make_axis(s->min, s->max);
	if (a.log) /* rows are few: start and end at the data, not at whole decades */
		a.lo = s->min, a.hi = s->max;
	double counts[200], cmax = 0, edges[201];
	for (unsigned i = 0; i <= rows; i++)
		edges[i] = ax_inv(&a, (double)i / rows);
	for (unsigned i = 0; i < rows; i++) {
		counts[i] = i == rows - 1 ? below(all, edges[i + 1], 1) - below(all, edges[i], 0)
		                          : below(all, edges[i + 1], 0) - below(all, edges[i], 0);
		if (counts[i] < 0)
			counts[i] = 0;
		if (counts[i] > cmax)
			cmax = counts[i];
	}
	for (unsigned i = 0; i < rows; i++) {
		fprintf(f, "  %10s … %-10s ", num(edges[i], b), num(edges[i + 1], b2));
		unsigned e = cmax > 0 ? (unsigned)llround(counts[i] / cmax * width * 8) : 0;
		if (counts[i] > 0 && e == 0)
			e = 1; /* never hide a non-empty bin */
		for (unsigned k = 0; k < e / 8; k++)
			fputs(eighth[8], f);
		fputs(eighth[e % 8], f);
		fprintf(f, "%*s %.0f\n", (int)(width - (e + 7) / 8), "", counts[i]);
	}
	if (ferror(f))
		return tk_error_set(err, "writing the bars: %s", strerror(errno ? errno : EIO));
	return 0;
}
