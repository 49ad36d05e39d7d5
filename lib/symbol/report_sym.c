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
	uint64_t addr;  /* f->addr */
	uint32_t image; /* f->image */
	int leaf;       /* the PC of its thread: looked up as is */
} fref;

/* by image, then by address: neighbouring lookups share the cache's blocks */
static int fref_lt(const fref *x, const fref *y)
{
	return x->image != y->image ? x->image < y->image : x->addr < y->addr;
}

/* Sort v[0..n) (tmp: n more): a merge sort with the comparison inline (qsort's call per comparison
 * was a tenth of a batch's symbolication); short runs by insertion. */
static void sort_refs(fref *v, fref *tmp, size_t n)
{
	if (n <= 16) {
		for (size_t i = 1; i < n; i++) {
			fref x = v[i];
			size_t j = i;
			for (; j > 0 && fref_lt(&x, &v[j - 1]); j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
		return;
	}
	size_t h = n / 2;
	sort_refs(v, tmp, h);
	sort_refs(v + h, tmp, n - h);
	size_t a = 0, b = h, k = 0;
	while (a < h && b < n)
		tmp[k++] = fref_lt(&v[b], &v[a]) ? v[b++] : v[a++];
	while (a < h)
		tmp[k++] = v[a++];
	while (b < n)
		tmp[k++] = v[b++];
	memcpy(v, tmp, n * sizeof *v);
}

/* ---- image handles by (UUID, arch), kept across reports ---- */
typedef struct memo {
	char *key; /* "UUID/arch" */
	tk_symbol_image *im;
	char *why; /* im NULL: why */
} memo;

struct tk_apple_report_symbols {
	tk_symbolicator *s;
	memo *slot; /* open addressing, power-of-two size */
	size_t cap, n;
};

tk_apple_report_symbols *tk_apple_report_symbols_new(tk_symbolicator *s)
{
	tk_apple_report_symbols *rs = tk_xcalloc(1, sizeof *rs);
	rs->s = s;
	rs->cap = 64;
	rs->slot = tk_xcalloc(rs->cap, sizeof *rs->slot);
	return rs;
}

void tk_apple_report_symbols_free(tk_apple_report_symbols *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->cap; i++) {
		free(rs->slot[i].key);
		free(rs->slot[i].why);
	}
	free(rs->slot);
	free(rs);
}

static uint64_t fnv(const char *k)
{
	uint64_t h = 1469598103934665603ull;
	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 1099511628211ull;
	return h;
}

static memo *memo_find(tk_apple_report_symbols *rs, const char *key)
{
	size_t m = rs->cap - 1, i = fnv(key) & m;
	while (rs->slot[i].key && strcmp(rs->slot[i].key, key))
		i = (i + 1) & m;
	return &rs->slot[i];
}

static memo *image_for(tk_apple_report_symbols *rs, const tk_apple_report_image *im)
{
	char key[128];
	snprintf(key, sizeof key, "%s/%s", im->uuid, im->arch ? im->arch : "");
	memo *e = memo_find(rs, key);
	if (e->key)
		return e;
	if (2 * (rs->n + 1) > rs->cap) { /* grow and rehash */
		memo *old = rs->slot;
		size_t oc = rs->cap;
		rs->cap *= 2;
		rs->slot = tk_xcalloc(rs->cap, sizeof *rs->slot);
		for (size_t i = 0; i < oc; i++)
			if (old[i].key)
				*memo_find(rs, old[i].key) = old[i];
		free(old);
		e = memo_find(rs, key);
	}
	tk_error err;
	e->key = tk_xstrdup(key);
	e->im = tk_symbolicator_image(rs->s, im->uuid, NULL, im->arch, &err);
	if (!e->im && im->arch) /* the report's arch may name the slice differently (arm64 / arm64e) */
		e->im = tk_symbolicator_image(rs->s, im->uuid, NULL, NULL, &err);
	if (!e->im)
		e->why = tk_xstrdup(err.msg);
	rs->n++;
	return e;
}

static char *base_dup(const char *path)
{
	if (!path)
		return NULL;
	const char *b = strrchr(path, '/');
	return tk_xstrdup(b ? b + 1 : path);
}

int tk_apple_report_symbolicate(tk_apple_report *r, tk_apple_report_symbols *rs, tk_apple_report_sym_stats *st,
                                tk_error *err)
{
	(void)err;
	tk_apple_report_sym_stats local = {0};
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	size_t n = r->leb ? r->leb->nframes : 0;
	for (size_t i = 0; i < r->nthreads; i++)
		n += r->threads[i].nframes;
	fref *refs = tk_xmalloc((n ? 2 * n : 1) * sizeof *refs); /* the second half: the sort's scratch */
	size_t k = 0;
	for (size_t i = 0; i <= r->nthreads; i++) {
		tk_apple_report_thread *t = i < r->nthreads ? &r->threads[i] : r->leb;
		if (!t)
			break;
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
			refs[k].addr = f->addr;
			refs[k].image = f->image;
			refs[k].leaf = leaf;
			k++;
		}
	}
	sort_refs(refs, refs + k, k);
	st->frames = k;
	for (size_t a = 0; a < k;) {
		size_t b = a;
		while (b < k && refs[b].f->image == refs[a].f->image)
			b++;
		tk_apple_report_image *im = &r->images[refs[a].f->image - 1];
		const memo *mm = image_for(rs, im);
		tk_symbol_image *si = mm->im;
		if (!si) {
			im->symbols = -1;
			free(im->why);
			im->why = tk_xstrdup(mm->why);
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
			f->sym_off =
			    res.symtab_only ? tk_symbol_image_file_addr(si, im->base, f->addr) - res.symbol_start : 0;
			st->resolved++;
		}
		a = b;
	}
	free(refs);
	return 0;
}
