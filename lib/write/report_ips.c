/*
 * An .ips report written back as JSON with the names filled in (tracekit/apple_report.h): the header line
 * as it was, then the body with, in each resolved frame, `symbol` (the outermost function),
 * `sourceFile` / `sourceLine` (its line), `symbolLocation` when the symbol's start is known (symbol
 * table answers), and the inlined functions as frames of their own before it, each with the same
 * imageIndex / imageOffset, its own names and "inline": true. Numbers too big for jansson (register
 * values) go back out as the digits they were.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/apple_report.h"

static void fill(json_t *o, const tk_apple_report_sym *s)
{
	json_object_set_new(o, "symbol", json_string(s->function));
	if (s->file) {
		json_object_set_new(o, "sourceFile", json_string(s->file));
		json_object_set_new(o, "sourceLine", json_integer(s->line));
	} else {
		json_object_del(o, "sourceFile");
		json_object_del(o, "sourceLine");
	}
}

/* Write s, turning "\u001eBIG:DIGITS" strings back into DIGITS. */
static void put_unmarked(FILE *out, const char *s)
{
	/* jansson writes the control as \u001E; the reader's own pass wrote \u001e */
	const char *mark = "\"\\u001EBIG:", *mark2 = "\"\\u001eBIG:";
	size_t ml = strlen(mark);
	for (;;) {
		const char *m = strstr(s, mark), *m2 = strstr(s, mark2);
		if (!m || (m2 && m2 < m))
			m = m2;
		if (!m) {
			fputs(s, out);
			return;
		}
		fwrite(s, 1, (size_t)(m - s), out);
		const char *d = m + ml;
		size_t n = strspn(d, "-0123456789");
		fwrite(d, 1, n, out);
		s = d + n + (d[n] == '"');
	}
}

int tk_apple_report_write_ips(FILE *out, const tk_apple_report *r, tk_error *err)
{
	if (r->format != TK_APPLE_IPS || !r->json_body)
		return tk_error_set(err, "--json is for .ips reports (this one is %s text)",
		                    r->format == TK_APPLE_CRASH ? "crash-report" : "spindump");
	if (r->json_partial)
		return tk_error_set(err, "the report was read for text only (its frames are not in the JSON tree)");
	json_t *b = json_deep_copy(r->json_body);
	if (!b)
		return tk_error_set(err, "out of memory");
	json_t *threads = json_object_get(b, "threads");
	for (size_t i = 0; i <= r->nthreads; i++) {
		const tk_apple_report_thread *t = i < r->nthreads ? &r->threads[i] : r->leb;
		if (!t)
			break;
		json_t *frames = i < r->nthreads ? json_object_get(json_array_get(threads, t->json_index), "frames")
		                                 : json_object_get(b, "lastExceptionBacktrace");
		if (!json_is_array(frames))
			continue;
		json_t *nf = json_array();
		for (size_t k = 0; k < t->nframes && k < json_array_size(frames); k++) {
			const tk_apple_report_frame *f = &t->frames[k];
			json_t *orig = json_array_get(frames, k);
			for (size_t q = 0; q + 1 < f->nsym; q++) {
				json_t *c = json_deep_copy(orig);
				json_object_del(c, "symbolLocation");
				fill(c, &f->sym[q]);
				json_object_set_new(c, "inline", json_true());
				json_array_append_new(nf, c);
			}
			json_t *c = json_deep_copy(orig);
			if (f->nsym) {
				fill(c, &f->sym[f->nsym - 1]);
				if (f->sym_symtab)
					json_object_set_new(c, "symbolLocation", json_integer((json_int_t)f->sym_off));
				else
					json_object_del(c, "symbolLocation");
			}
			json_array_append_new(nf, c);
		}
		if (i < r->nthreads)
			json_object_set_new(json_array_get(threads, t->json_index), "frames", nf);
		else
			json_object_set_new(b, "lastExceptionBacktrace", nf);
	}
	char *h = json_dumps(r->json_header, JSON_COMPACT | JSON_PRESERVE_ORDER);
	char *s = json_dumps(b, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(b);
	if (!h || !s) {
		free(h);
		free(s);
		return tk_error_set(err, "out of memory");
	}
	fprintf(out, "%s\n", h);
	put_unmarked(out, s);
	fputc('\n', out);
	free(h);
	free(s);
	if (fflush(out) != 0 || ferror(out))
		return tk_error_set(err, "write error");
	return 0;
}
