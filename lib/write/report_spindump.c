/*
 * Spindump text written back with its frames named (tracekit/apple_report.h): every line as the report
 * had it; in a resolved frame's line the `???` (or the device's name) before `(Binary + off)` becomes
 * `function (in Binary) (File:LINE)`, the innermost inlined function first joined by " <- " so the
 * tree keeps one line per sampled frame (its counts and indentation stay exact).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/apple_report.h"

int tk_apple_report_write_spindump(FILE *o, const tk_apple_report *r, tk_error *err)
{
	const tk_apple_report_frame **at = calloc(r->nlines ? r->nlines : 1, sizeof *at);
	if (!at)
		return tk_error_set(err, "out of memory");
	for (size_t i = 0; i < r->nthreads; i++)
		for (size_t k = 0; k < r->threads[i].nframes; k++) {
			const tk_apple_report_frame *f = &r->threads[i].frames[k];
			if (f->line_no < r->nlines)
				at[f->line_no] = f;
		}
	for (size_t ln = 0; ln < r->nlines; ln++) {
		const tk_apple_report_frame *f = at[ln];
		const char *s = r->lines[ln];
		if (!f || !f->nsym) {
			fprintf(o, "%s\n", s);
			continue;
		}
		const char *bin = f->image && r->images[f->image - 1].name ? r->images[f->image - 1].name : "???";
		fwrite(s, 1, f->sym_at, o);
		for (size_t q = 0; q < f->nsym; q++) {
			const tk_apple_report_sym *y = &f->sym[q];
			fprintf(o, "%s%s (in %s)", q ? " <- " : "", y->function, bin);
			if (f->sym_symtab && q + 1 == f->nsym)
				fprintf(o, " + %" PRIu64, f->sym_off);
			else if (y->file)
				fprintf(o, " (%s:%u)", y->file, y->line);
		}
		fprintf(o, "%s\n", s + f->sym_end);
	}
	free(at);
	return 0;
}
