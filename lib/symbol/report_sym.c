/*
 * Symbolicating a tk_apple_report (tracekit/apple_report.h): every frame of an image with a UUID is looked up
 * in that image's dSYM (or binary) through the symbolicator and its caches. Frames are grouped by
 * image so each image is opened once per report (the symbolicator keeps at most max_open mapped,
 * and the answers' strings are copied before the next image is asked for).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/apple_report.h"
#include "tracekit/symbol.h"
#include "util/mem.h"

typedef struct fref {
	tk_apple_report_frame *f;
	const tk_symbol_image *key; /* the image's handle: one order across the reports of a batch */
	uint64_t addr;              /* the file address looked up (the caller-frame rule applied) */
	uint32_t rep;               /* index of the frame's report in the batch */
} fref;

/* by image, then by address: neighbouring lookups share the cache's blocks (and, across the reports of
 * a batch, each image's cache is walked once in address order instead of at random) */
static int fref_lt(const fref *x, const fref *y)
{
	return x->key != y->key ? (uintptr_t)x->key < (uintptr_t)y->key : x->addr < y->addr;
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

/* ---- the report's sym_pool: the names of its frames, in chunks freed with the report (a malloc and
 * a free per name were a fifth of a batch's instructions) ---- */
typedef struct pool_chunk {
	void *next; /* first: tk_apple_report_free walks this */
	size_t used, cap;
	max_align_t data[];
} pool_chunk;

static void *pool_alloc(tk_apple_report *r, size_t n)
{
	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	pool_chunk *c = r->sym_pool;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > 8192 ? n : 8192;
		pool_chunk *nc = tk_xmalloc(sizeof *nc + cap);
		nc->next = c;
		nc->used = 0;
		nc->cap = cap;
		r->sym_pool = c = nc;
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

static char *pool_strdup(tk_apple_report *r, const char *s, size_t n)
{
	char *d = pool_alloc(r, n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

static char *base_dup(tk_apple_report *r, const char *path)
{
	if (!path)
		return NULL;
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return pool_strdup(r, b, strlen(b));
}

/* nr reports at once (stv: nr stats, or NULL): the lookups of all of them sorted by image and address, so
 * each image's cache is walked once in order and a repeated address is looked up once; the answers are
 * those of one report at a time. Used one report at a time: 64 together measured slower on 10,000
 * reports (BENCHMARKS.md, the heap of 64 reports costing more than the sorted lookups saved). */
static int symbolicate_batch(tk_apple_report *const *rv, size_t nr, tk_apple_report_symbols *rs,
                             tk_apple_report_sym_stats *stv, tk_error *err)
{
	(void)err;
	size_t n = 0;
	for (size_t ri = 0; ri < nr; ri++) {
		tk_apple_report *r = rv[ri];
		n += r->leb ? r->leb->nframes : 0;
		for (size_t i = 0; i < r->nthreads; i++)
			n += r->threads[i].nframes;
		if (stv)
			memset(&stv[ri], 0, sizeof stv[ri]);
	}
	fref *refs = tk_xmalloc((n ? 2 * n : 1) * sizeof *refs); /* the second half: the sort's scratch */
	size_t k = 0;
	for (size_t ri = 0; ri < nr; ri++) {
		tk_apple_report *r = rv[ri];
		tk_apple_report_sym_stats local = {0}, *st = stv ? &stv[ri] : &local;
		/* each image with frames asked of the symbolicator once (the handles are kept across reports),
		 * in image order; only those are named missing */
		const tk_symbol_image **h = tk_xcalloc(r->nimages ? r->nimages : 1, sizeof *h);
		for (size_t i = 0; i <= r->nthreads; i++) {
			tk_apple_report_thread *t = i < r->nthreads ? &r->threads[i] : r->leb;
			for (size_t j = 0; t && j < t->nframes; j++)
				if (t->frames[j].image && t->frames[j].image <= r->nimages && !t->frames[j].kernel)
					h[t->frames[j].image - 1] = (const tk_symbol_image *)1; /* used */
		}
		for (size_t mi = 0; mi < r->nimages; mi++) {
			tk_apple_report_image *im = &r->images[mi];
			if (!h[mi] || !im->uuid) {
				h[mi] = NULL;
				continue;
			}
			const memo *mm = image_for(rs, im);
			h[mi] = mm->im;
			if (mm->im) {
				im->symbols = 1;
			} else {
				im->symbols = -1;
				free(im->why);
				im->why = tk_xstrdup(mm->why);
			}
		}
		for (size_t i = 0; i <= r->nthreads; i++) {
			tk_apple_report_thread *t = i < r->nthreads ? &r->threads[i] : r->leb;
			if (!t)
				break;
			for (size_t j = 0; j < t->nframes; j++) {
				tk_apple_report_frame *f = &t->frames[j];
				if (!f->image || !r->images[f->image - 1].uuid || f->kernel)
					continue;
				st->frames++;
				tk_apple_report_image *im = &r->images[f->image - 1];
				const tk_symbol_image *si = h[f->image - 1];
				if (!si) {
					st->unresolved++;
					continue;
				}
				int leaf;
				if (r->format == TK_APPLE_SPINDUMP) /* a tree: a frame without children is a PC */
					leaf = j + 1 == t->nframes || t->frames[j + 1].depth <= f->depth;
				else
					leaf = j == 0;
				uint64_t addr = leaf || !f->addr ? f->addr : f->addr - 1;
				refs[k].f = f;
				refs[k].key = si;
				refs[k].addr = tk_symbol_image_file_addr(si, im->base, addr);
				refs[k].rep = (uint32_t)ri;
				k++;
			}
		}
		free(h);
	}
	sort_refs(refs, refs + k, k);
	tk_symbol_result res;
	size_t m = 0;
	for (size_t c = 0; c < k; c++) {
		tk_apple_report_frame *f = refs[c].f;
		tk_apple_report *r = rv[refs[c].rep];
		tk_apple_report_sym_stats local = {0}, *st = stv ? &stv[refs[c].rep] : &local;
		tk_symbol_image *si = (tk_symbol_image *)refs[c].key;
		const tk_apple_report_image *im = &r->images[f->image - 1];
		/* the same address as the one before: its answer, still mapped (real stacks repeat frames) */
		if (!c || refs[c].key != refs[c - 1].key || refs[c].addr != refs[c - 1].addr) {
			m = tk_symbol_image_lookup(si, refs[c].addr, &res);
			if (m == 1 && !res.frames[0].file && !strcmp(res.frames[0].function, "??"))
				m = 0;
		}
		if (!m) {
			st->unresolved++;
			continue;
		}
		/* a frame named before keeps its old names in the pool until the report is freed */
		f->sym = pool_alloc(r, m * sizeof *f->sym);
		f->nsym = m;
		for (size_t q = 0; q < m; q++) {
			const char *fn = res.frames[q].function;
			f->sym[q].function = pool_strdup(r, fn, strlen(fn));
			f->sym[q].file = base_dup(r, res.frames[q].file);
			f->sym[q].line = res.frames[q].line;
			f->sym[q].inlined = q + 1 < m;
		}
		f->sym_symtab = res.symtab_only;
		f->sym_off = res.symtab_only ? tk_symbol_image_file_addr(si, im->base, f->addr) - res.symbol_start : 0;
		st->resolved++;
	}
	free(refs);
	return 0;
}

int tk_apple_report_symbolicate(tk_apple_report *r, tk_apple_report_symbols *rs, tk_apple_report_sym_stats *st,
                                tk_error *err)
{
	return symbolicate_batch(&r, 1, rs, st, err);
}
