/* Shared pieces of the SVG chart writers (see chart.h). */
#include "chart.h"

#include <math.h>

#include "util/text.h"

double tk_chart_nice_step(double span, int n)
{
	double raw = span / n, p = pow(10, floor(log10(raw))), m = raw / p;
	return (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10) * p;
}

const char *tk_chart_color(size_t i)
{
	static const char *const colors[] = {"#2f6fdb", "#e8590c", "#2b8a3e", "#862e9c",
	                                     "#c2255c", "#1098ad", "#5c940d", "#495057"};
	return colors[i % (sizeof colors / sizeof colors[0])];
}

void tk_chart_text(FILE *f, const char *s)
{
	tk_xml_fput(f, s ? s : "", 60);
}

void tk_chart_begin(FILE *f, int w, int h, int x, const char *title)
{
	fprintf(f,
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	        "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n",
	        w, h, w, h, w, h);
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">", x);
	tk_chart_text(f, title);
	fputs("</text>\n", f);
}

void tk_chart_grid(FILE *f, int x, int w, int y0, int h, double top, double step, int integers)
{
	for (double v = 0; v <= top + step / 2; v += step) {
		double y = y0 + h - v / top * h;
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e9ecef\"/>", x, x + w, y, y);
		fprintf(f,
		        integers ? "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">%.0f</text>\n"
		                 : "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">%g</text>\n",
		        x - 6, y + 4, v);
	}
}
