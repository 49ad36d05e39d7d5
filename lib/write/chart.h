/*
 * What the SVG chart writers (trend_svg.c, dist_svg.c) draw alike: round tick steps, the series'
 * colours, escaped labels and the document's opening with its title. Internal (not installed).
 */
#ifndef TK_WRITE_CHART_H
#define TK_WRITE_CHART_H

#include <stddef.h>
#include <stdio.h>

/* A round step (1, 2 or 5 × 10^k) for about n ticks over span (> 0). */
double tk_chart_nice_step(double span, int n);
/* The colour of series i (a fixed palette, repeated past its end). */
const char *tk_chart_color(size_t i);
/* A label as XML text: escaped, valid UTF-8, at most 60 characters shown (stored names are
 * attacker-controlled: see util/text.h). NULL is the empty label. */
void tk_chart_text(FILE *f, const char *s);
/* The <svg> element of a w × h chart on a white background, and its title in bold at (x, 22). */
void tk_chart_begin(FILE *f, int w, int h, int x, const char *title);

/* The horizontal grid lines and their labels from 0 to top every step, for a plot x .. x + w wide whose
 * value 0 sits at y0 + h and top at y0; integer labels ("%.0f") or shortest ("%g"). */
void tk_chart_grid(FILE *f, int x, int w, int y0, int h, double top, double step, int integers);

#endif
