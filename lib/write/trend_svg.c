/* A time series chart (SVG): a statistic per time bucket, one line per series (e.g. P95 hang
 * duration per day, one line per version), with thresholds drawn across (alert rules). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tracekit/stats.h"
#include "chart.h"

#define W 1000
#define H 380
#define ML 70
#define MR 170 /* the legend */
#define MT 40
#define MB 60
#define PW (W - ML - MR)
#define PH (H - MT - MB)

int tk_write_trend_svg(FILE *f, const tk_trend_chart *c, tk_error *err)
{
	double hi = 0;
	for (size_t s = 0; s < c->nseries; s++)
		for (size_t i = 0; i < c->nx; i++)
			if (isfinite(c->series[s].y[i]) && c->series[s].y[i] > hi)
				hi = c->series[s].y[i];
	for (size_t t = 0; t < c->nthresholds; t++)
		if (isfinite(c->thresholds[t].value) && c->thresholds[t].value > hi)
			hi = c->thresholds[t].value;
	if (hi <= 0)
		hi = 1;
	double step = tk_chart_nice_step(hi, 5);
	hi = ceil(hi / step) * step;
	const double dx = c->nx > 1 ? (double)PW / (double)(c->nx - 1) : 0;
#define X(i) (ML + (c->nx > 1 ? (double)(i)*dx : PW / 2.0))
#define Y(v) (MT + PH - (v) / hi * PH)
	tk_chart_begin(f, W, H, ML, c->title);
	/* value axis */
	tk_chart_grid(f, ML, PW, MT, PH, hi, step, 0);
	fprintf(f, "<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" text-anchor=\"middle\" fill=\"#555\">",
	        MT + PH / 2, MT + PH / 2);
	tk_chart_text(f, c->unit);
	fputs("</text>\n", f);
	/* time axis: at most ~12 labels */
	size_t every = c->nx > 12 ? (c->nx + 11) / 12 : 1;
	for (size_t i = 0; i < c->nx; i++) {
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#adb5bd\"/>", X(i), X(i),
		        MT + PH, MT + PH + 4);
		if (i % every == 0) {
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">", X(i),
			        MT + PH + 18);
			tk_chart_text(f, c->xlabels[i]);
			fputs("</text>\n", f);
		}
	}
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#495057\"/>\n", ML, ML + PW, MT + PH,
	        MT + PH);
	/* thresholds */
	for (size_t t = 0; t < c->nthresholds; t++) {
		double v = c->thresholds[t].value;
		if (!isfinite(v))
			continue;
		fprintf(f,
		        "<g class=\"threshold\"><line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#d6336c\" "
		        "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/><text x=\"%d\" y=\"%.1f\" fill=\"#d6336c\">",
		        ML, ML + PW, Y(v), Y(v), ML + 4, Y(v) - 4);
		tk_chart_text(f, c->thresholds[t].label);
		fputs("</text></g>\n", f);
	}
	/* series: lines through the buckets that have a value, a dot on each */
	for (size_t s = 0; s < c->nseries; s++) {
		const char *col = tk_chart_color(s);
		fprintf(f, "<g class=\"series\"><polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
		        col);
		for (size_t i = 0; i < c->nx; i++)
			if (isfinite(c->series[s].y[i]))
				fprintf(f, "%.1f,%.1f ", X(i), Y(c->series[s].y[i]));
		fputs("\"/>\n", f);
		for (size_t i = 0; i < c->nx; i++)
			if (isfinite(c->series[s].y[i])) {
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>", X(i),
				        Y(c->series[s].y[i]), col);
				tk_chart_text(f, c->series[s].name);
				fputs(" ", f);
				tk_chart_text(f, c->xlabels[i]);
				fprintf(f, ": %.4g</title></circle>", c->series[s].y[i]);
			}
		/* legend */
		fprintf(f,
		        "\n<rect x=\"%d\" y=\"%zu\" width=\"14\" height=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%zu\">",
		        ML + PW + 20, MT + 4 + s * 20, col, ML + PW + 40, MT + 9 + s * 20);
		tk_chart_text(f, c->series[s].name);
		fputs("</text></g>\n", f);
	}
	fputs("</svg>\n", f);
#undef X
#undef Y
	if (ferror(f))
		return tk_error_set(err, "trend chart: write error"), -1;
	return 0;
}
