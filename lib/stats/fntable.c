/* Functions across profiles: per profile weights and per function self/total, for spreads and diffs. */
#include <stdlib.h>
#include <string.h>

#include "tracekit/calltree.h"
#include "tracekit/stats.h"
#include "util/hidx.h"
#include "util/mem.h"

typedef tk_fn_cell cell;

typedef struct fn {
	char *name, *binary;
	cell *cells; /* ascending profile; absent = 0 */
	size_t n, cap;
	double sum_self, sum_total;
} fn;

struct tk_fntable {
	fn *fns;
	size_t nfns, capfns;
	char **pnames;
	double *pweights;
	size_t np, capp;
	tk_hidx idx;
	char unit[16];
};

tk_fntable *tk_fntable_new(void)
{
	return tk_xcalloc(1, sizeof(tk_fntable));
}

void tk_fntable_free(tk_fntable *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nfns; i++) {
		free(t->fns[i].name);
		free(t->fns[i].binary);
		free(t->fns[i].cells);
	}
	for (size_t k = 0; k < t->np; k++)
		free(t->pnames[k]);
	free(t->fns);
	free(t->pnames);
	free(t->pweights);
	tk_hidx_free(&t->idx);
	free(t);
}

typedef struct key {
	const char *name, *binary;
} key;

static int eq(const void *ctx, uint32_t i, const void *k)
{
	const tk_fntable *t = ctx;
	const key *kk = k;
	return strcmp(t->fns[i].name, kk->name) == 0 && strcmp(t->fns[i].binary, kk->binary) == 0;
}

static uint64_t hash(const char *name, const char *binary)
{
	return tk_hash_bytes(name, strlen(name), tk_hash_bytes(binary, strlen(binary), 0x5eed));
}

static size_t intern_fn(tk_fntable *t, const char *name, const char *binary)
{
	key k = {name, binary};
	uint64_t h = hash(name, binary);
	uint32_t i = tk_hidx_find(&t->idx, h, eq, t, &k);
	if (i != UINT32_MAX)
		return i;
	tk_grow((void **)&t->fns, &t->capfns, t->nfns + 1, sizeof *t->fns);
	fn *f = &t->fns[t->nfns];
	memset(f, 0, sizeof *f);
	f->name = tk_xstrdup(name);
	f->binary = tk_xstrdup(binary);
	tk_hidx_insert(&t->idx, h, (uint32_t)t->nfns);
	return t->nfns++;
}

int tk_fntable_add(tk_fntable *t, const tk_profile *p, const char *name, tk_error *err)
{
	const char *unit = tk_unit_name(tk_profile_unit(p));
	if (t->np && strcmp(unit, t->unit) != 0)
		return tk_error_set(err, "%s: weights in %s, but the profiles before it are in %s", name, unit,
		                    t->unit);
	tk_top *top = tk_top_build(p, TK_TOP_BY_SELF, err);
	if (!top)
		return -1;
	snprintf(t->unit, sizeof t->unit, "%s", unit);
	/* weights with decimals (folded `1.5` counts) are stored ×10^D: compare them in the unit itself */
	double sc = 1;
	for (unsigned d = tk_profile_weight_decimals(p); d; d--)
		sc /= 10;
	tk_grow((void **)&t->pnames, &t->capp, t->np + 1, sizeof *t->pnames);
	t->pweights = tk_xrealloc(t->pweights, t->capp * sizeof *t->pweights);
	uint32_t k = (uint32_t)t->np++;
	t->pnames[k] = tk_xstrdup(name);
	t->pweights[k] = (double)top->weight * sc;
	for (size_t i = 0; i < top->n; i++) {
		char buf[32];
		const tk_frame *fr = tk_frame_get(p, top->entries[i].frame);
		const tk_binary *b = tk_binary_get(p, fr->binary);
		size_t fi = intern_fn(t, tk_frame_label(p, top->entries[i].frame, buf), b ? tk_string(p, b->name) : "");
		fn *f = &t->fns[fi];
		/* The same symbol+binary may come from several frames (addresses): add them up. */
		if (f->n && f->cells[f->n - 1].profile == k) {
			f->cells[f->n - 1].self += (double)top->entries[i].self * sc;
			f->cells[f->n - 1].total += (double)top->entries[i].total * sc;
		} else {
			tk_grow((void **)&f->cells, &f->cap, f->n + 1, sizeof *f->cells);
			f->cells[f->n++] =
			    (cell){k, (double)top->entries[i].self * sc, (double)top->entries[i].total * sc};
		}
		f->sum_self += (double)top->entries[i].self * sc;
		f->sum_total += (double)top->entries[i].total * sc;
	}
	tk_top_free(top);
	return (int)k;
}

size_t tk_fntable_nprofiles(const tk_fntable *t)
{
	return t->np;
}
size_t tk_fntable_nfunctions(const tk_fntable *t)
{
	return t->nfns;
}
const char *tk_fntable_unit(const tk_fntable *t)
{
	return t->unit;
}
const char *tk_fntable_profile_name(const tk_fntable *t, size_t k)
{
	return t->pnames[k];
}
double tk_fntable_profile_weight(const tk_fntable *t, size_t k)
{
	return t->pweights[k];
}
const char *tk_fntable_name(const tk_fntable *t, size_t f)
{
	return t->fns[f].name;
}
const char *tk_fntable_binary(const tk_fntable *t, size_t f)
{
	return t->fns[f].binary;
}

ptrdiff_t tk_fntable_find(const tk_fntable *t, const char *name)
{
	const char *tick = strchr(name, '`');
	if (tick) {
		char *bin = tk_xstrndup(name, (size_t)(tick - name));
		key k = {tick + 1, bin};
		uint32_t i = tk_hidx_find(&t->idx, hash(k.name, bin), eq, t, &k);
		free(bin);
		return i == UINT32_MAX ? -1 : (ptrdiff_t)i;
	}
	for (size_t i = 0; i < t->nfns; i++)
		if (strcmp(t->fns[i].name, name) == 0)
			return (ptrdiff_t)i;
	return -1;
}

ptrdiff_t tk_fntable_find_exact(const tk_fntable *t, const char *name, const char *binary)
{
	key k = {name, binary};
	uint32_t i = tk_hidx_find(&t->idx, hash(name, binary), eq, t, &k);
	return i == UINT32_MAX ? -1 : (ptrdiff_t)i;
}

void tk_fntable_values(const tk_fntable *t, size_t f, int total, double *out)
{
	for (size_t k = 0; k < t->np; k++)
		out[k] = 0;
	const fn *x = &t->fns[f];
	for (size_t i = 0; i < x->n; i++)
		out[x->cells[i].profile] = total ? x->cells[i].total : x->cells[i].self;
}

const tk_fn_cell *tk_fntable_cells(const tk_fntable *t, size_t f, size_t *n)
{
	*n = t->fns[f].n;
	return t->fns[f].cells;
}

double tk_fntable_sum(const tk_fntable *t, size_t f, int total)
{
	return total ? t->fns[f].sum_total : t->fns[f].sum_self;
}
