/* A distribution chart (SVG): histograms of several series over the same bins, and their box plots on
 * the same value axis below (tk_write_dist_svg, tracekit/stats.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tracekit/stats.h"
#include "chart.h"

#define W 1000
#define ML 70
#define MR 170 /* the legend */
#define PW (W - ML - MR)
#define MT 44
#define HH 220 /* the histogram's height */
#define GAP 46 /* the value axis' labels between histogram and boxes */
#define ROW 28 /* one box plot */

/* x of value v: within its bin, linearly or logarithmically as the bins are spaced */
static double xof(const tk_dist_chart *c, double v)
{
	const double slot = (double)PW / (double)c->nbins, *e = c->edges;
	if (!(v > e[0]))
		return ML;
	if (!(v < e[c->nbins]))
		return ML + PW;
	size_t b = 0;
	while (b + 1 < c->nbins && v >= e[b + 1])
		b++;
	double w = e[b + 1] - e[b], fr = 0;
	if (w > 0)
		fr = c->log && e[b] > 0 ? log(v / e[b]) / log(e[b + 1] / e[b]) : (v - e[b]) / w;
	return ML + ((double)b + fr) * slot;
}

int tk_write_dist_svg(FILE *f, const tk_dist_chart *c, tk_error *err)
{
	if (!c->nbins || !c->edges)
		return tk_error_set(err, "distribution chart: no bins"), -1;
	const int H = MT + HH + GAP + (int)c->nseries * ROW + 40;
	const double slot = (double)PW / (double)c->nbins;
	uint64_t hi = 0;
	for (size_t s = 0; s < c->nseries; s++)
		for (size_t b = 0; b < c->nbins; b++)
			hi = c->series[s].counts[b] > hi ? c->series[s].counts[b] : hi;
	double step = tk_chart_nice_step(hi ? (double)hi : 1, 4);
	if (step < 1)
		step = 1;
	double top = ceil((hi ? (double)hi : 1) / step) * step;
#define Y(v) (MT + HH - (v) / top * HH)
	tk_chart_begin(f, W, H, ML, c->title);
	/* counts axis */
	tk_chart_grid(f, ML, PW, MT, HH, top, step, 1);
	fprintf(f,
	        "<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" text-anchor=\"middle\" "
	        "fill=\"#555\">reports</text>\n",
	        MT + HH / 2, MT + HH / 2);
	/* bars: in each bin one per series, side by side */
	const double bw = slot * 0.9 / (double)(c->nseries ? c->nseries : 1);
	for (size_t s = 0; s < c->nseries; s++) {
		const char *col = tk_chart_color(s);
		fprintf(f, "<g class=\"hist\" fill=\"%s\">", col);
		for (size_t b = 0; b < c->nbins; b++) {
			uint64_t k = c->series[s].counts[b];
			if (!k)
				continue;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>",
			        ML + b * slot + slot * 0.05 + s * bw, Y((double)k), bw,
			        (double)HH - (Y((double)k) - MT));
			tk_chart_text(f, c->series[s].name);
			fprintf(f, ": %llu in [%.4g, %.4g%s</title></rect>", (unsigned long long)k, c->edges[b],
			        c->edges[b + 1], b + 1 == c->nbins ? "]" : ")");
		}
		fputs("</g>\n", f);
	}
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#495057\"/>\n", ML, ML + PW, MT + HH,
	        MT + HH);
	/* the value axis: a small mark at every bin edge (edges are wherever the data put them, e.g.
	 * 0.427), labels at round values placed by xof so they read like a ruler */
	for (size_t b = 0; b <= c->nbins; b++) {
		double x = ML + b * slot;
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#adb5bd\"/>", x, x, MT + HH,
		        MT + HH + 4);
	}
	const double lo = c->edges[0], up = c->edges[c->nbins];
	double ticks[64];
	size_t nt = 0;
	if (c->log && lo > 0 && up / lo >= 10) {
		/* 1, 2, 5 per decade; only 1 per decade when there are many decades */
		static const double m125[] = {1, 2, 5};
		const int many = up / lo > 1e4;
		for (double d = pow(10, floor(log10(lo))); d <= up && nt < 64; d *= 10)
			for (size_t i = 0; i < (many ? 1u : 3u) && nt < 64; i++)
				if (d * m125[i] >= lo && d * m125[i] <= up)
					ticks[nt++] = d * m125[i];
	} else if (up > lo) {
		double vstep = tk_chart_nice_step(up - lo, 8);
		for (double v = ceil(lo / vstep) * vstep; v <= up + vstep * 1e-9 && nt < 64; v += vstep)
			ticks[nt++] = fabs(v) < vstep * 1e-9 ? 0 : v;
	} else
		ticks[nt++] = lo;
	for (size_t i = 0; i < nt; i++) {
		double x = xof(c, ticks[i]);
		fprintf(f,
		        "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#495057\"/>"
		        "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%.6g</text>\n",
		        x, x, MT + HH, MT + HH + 6, x, MT + HH + 17, ticks[i]);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">", ML + PW / 2, MT + HH + 34);
	tk_chart_text(f, c->unit);
	fputs(c->log ? " (logarithmic)</text>\n" : "</text>\n", f);
	/* box plots */
	const int by0 = MT + HH + GAP;
	for (size_t s = 0; s < c->nseries; s++) {
		const tk_dist_series *d = &c->series[s];
		const char *col = tk_chart_color(s);
		double y = by0 + (double)s * ROW + ROW / 2.0;
		if (!d->n)
			continue;
		fprintf(f, "<g class=\"box\" stroke=\"%s\"><title>", col);
		tk_chart_text(f, d->name);
		fprintf(f, ": %llu values, P5 %.4g, P25 %.4g, P50 %.4g, P75 %.4g, P95 %.4g, min %.4g, max %.4g</title>",
		        (unsigned long long)d->n, d->p5, d->p25, d->p50, d->p75, d->p95, d->min, d->max);
		double x5 = xof(c, d->p5), x25 = xof(c, d->p25), x50 = xof(c, d->p50), x75 = xof(c, d->p75),
		       x95 = xof(c, d->p95);
		fprintf(
		    f,
		    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
		    "y2=\"%.1f\"/>",
		    x5, x25, y, y, x75, x95, y, y);
		fprintf(
		    f,
		    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
		    "y2=\"%.1f\"/>",
		    x5, x5, y - 6, y + 6, x95, x95, y - 6, y + 6);
		fprintf(f,
		        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"16\" fill=\"%s\" fill-opacity=\"0.25\"/>",
		        x25, y - 8, x75 - x25 > 1 ? x75 - x25 : 1, col);
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke-width=\"2.5\"/>", x50, x50,
		        y - 8, y + 8);
		fprintf(
		    f,
		    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" "
		    "fill=\"%s\"/>",
		    xof(c, d->min), y, col, xof(c, d->max), y, col);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" stroke=\"none\" fill=\"#333\">", ML + PW + 20, y + 4);
		tk_chart_text(f, d->name);
		fputs("</text></g>\n", f);
	}
	fprintf(f,
	        "<text x=\"%d\" y=\"%d\" fill=\"#555\">box: P25 to P75, bar: P50 (median), whiskers: P5 to P95, dots: "
	        "min and max</text>\n",
	        ML, H - 12);
	/* legend */
	for (size_t s = 0; s < c->nseries; s++) {
		fprintf(f, "<rect x=\"%d\" y=\"%zu\" width=\"14\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%zu\">",
		        ML + PW + 20, (size_t)MT + s * 20, tk_chart_color(s), ML + PW + 40, (size_t)MT + 9 + s * 20);
		tk_chart_text(f, c->series[s].name);
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
#undef Y
	if (ferror(f))
		return tk_error_set(err, "distribution chart: write error"), -1;
	return 0;
}
