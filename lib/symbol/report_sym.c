/*
 * Symbolicating a tk_apple_report (tracekit/apple_report.h): every frame of an image with a UUID is looked up
 * in that image's dSYM (or binary) through the symbolicator and its caches. Frames are grouped by
 * image so each image is opened once per report (the symbolicator keeps at most max_open mapped,
 * and the answers' strings are copied before the next image is asked for).
 */
#include <stdlib.h>
#include <string.h>

#include "tracekit/apple_report.h"
#include "tracekit/symbol.h"
#include "util/mem.h"

typedef struct fref {
	tk_apple_report_frame *f;
	int leaf; /* the PC of its thread: looked up as is */
} fref;

static int cmp_image(const void *a, const void *b)
{
	const fref *x = a, *y = b;
	return x->f->image < y->f->image ? -1 : x->f->image > y->f->image;
}

static char *base_dup(const char *path)
{
	if (!path)
		return NULL;
	const char *b = strrchr(path, '/');
	return tk_xstrdup(b ? b + 1 : path);
}

int tk_apple_report_symbolicate(tk_apple_report *r, tk_symbolicator *s, tk_apple_report_sym_stats *st, tk_error *err)
{
	(void)err;
	tk_apple_report_sym_stats local = {0};
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	size_t n = 0;
	for (size_t i = 0; i < r->nthreads; i++)
		n += r->threads[i].nframes;
	fref *refs = tk_xmalloc((n ? n : 1) * sizeof *refs);
	size_t k = 0;
	for (size_t i = 0; i < r->nthreads; i++) {
		tk_apple_report_thread *t = &r->threads[i];
		for (size_t j = 0; j < t->nframes; j++) {
			tk_apple_report_frame *f = &t->frames[j];
			if (!f->image || !r->images[f->image - 1].uuid || f->kernel)
				continue;
			int leaf;
			if (r->format == TK_APPLE_SPINDUMP) /* a tree: a frame without children is a PC */
				leaf = j + 1 == t->nframes || t->frames[j + 1].depth <= f->depth;
			else
				leaf = j == 0;
			refs[k].f = f;
			refs[k].leaf = leaf;
			k++;
		}
	}
	qsort(refs, k, sizeof *refs, cmp_image);
	st->frames = k;
	for (size_t a = 0; a < k;) {
		size_t b = a;
		while (b < k && refs[b].f->image == refs[a].f->image)
			b++;
		tk_apple_report_image *im = &r->images[refs[a].f->image - 1];
		tk_error e;
		tk_symbol_image *si = tk_symbolicator_image(s, im->uuid, NULL, im->arch, &e);
		if (!si) {
			im->symbols = -1;
			free(im->why);
			im->why = tk_xstrdup(e.msg);
			st->unresolved += b - a;
			a = b;
			continue;
		}
		im->symbols = 1;
		for (size_t c = a; c < b; c++) {
			tk_apple_report_frame *f = refs[c].f;
			uint64_t addr = refs[c].leaf || !f->addr ? f->addr : f->addr - 1;
			tk_symbol_result res;
			size_t m = tk_symbol_image_lookup(si, tk_symbol_image_file_addr(si, im->base, addr), &res);
			if (m == 1 && !res.frames[0].file && !strcmp(res.frames[0].function, "??"))
				m = 0;
			if (!m) {
				st->unresolved++;
				continue;
			}
			for (size_t q = 0; q < f->nsym; q++) {
				free(f->sym[q].function);
				free(f->sym[q].file);
			}
			free(f->sym);
			f->sym = tk_xcalloc(m, sizeof *f->sym);
			f->nsym = m;
			for (size_t q = 0; q < m; q++) {
				f->sym[q].function = tk_xstrdup(res.frames[q].function);
				f->sym[q].file = base_dup(res.frames[q].file);
				f->sym[q].line = res.frames[q].line;
				f->sym[q].inlined = q + 1 < m;
			}
			f->sym_symtab = res.symtab_only;
			f->sym_off = res.symtab_only ? tk_symbol_image_file_addr(si, im->base, f->addr) - res.symbol_start : 0;
			st->resolved++;
		}
		a = b;
	}
	free(refs);
	return 0;
}
