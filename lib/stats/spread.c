/*
 * Function spread across profiles (`tracekit stats --functions`): for each function, the type 7
 * P50/P95/P99/max of its self and total share of each input's weight, and its self share in the
 * heaviest 5 % of inputs against its share in all of them. The writers (lib/write/spread.c) print it.
 */
#include <stdlib.h>

#include "tracekit/stats.h"
#include "util/mem.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int cmp_row(const void *a, const void *b)
{
	const tk_fn_spread_row *x = a, *y = b;
	for (int i = 0; i < 4; i++)
		if (x->self[i] != y->self[i])
			return x->self[i] < y->self[i] ? 1 : -1;
	return (x->function > y->function) - (x->function < y->function);
}

static int cmp_worst(const void *a, const void *b)
{
	const tk_fn_spread_row *x = a, *y = b;
	if (x->worst_share != y->worst_share)
		return x->worst_share < y->worst_share ? 1 : -1;
	return (x->function > y->function) - (x->function < y->function);
}

/* Type 7 quantile of n values of which the first n − k are 0 and the rest nz[0..k) (ascending, > 0):
 * most functions are absent from most inputs, so only the inputs that have them are stored. */
static double at_sparse(const double *nz, size_t k, size_t n, size_t i)
{
	return i < n - k ? 0 : nz[i - (n - k)];
}

double tk_quantile7_sparse(const double *nz, size_t k, size_t n, uint64_t num, uint64_t den)
{
	if (n == 0)
		return 0;
	if (num >= den)
		return at_sparse(nz, k, n, n - 1);
	unsigned __int128 prod = (unsigned __int128)(n - 1) * num;
	size_t j = (size_t)(prod / den);
	if (j + 1 >= n)
		return at_sparse(nz, k, n, n - 1);
	double two[2] = {at_sparse(nz, k, n, j), at_sparse(nz, k, n, j + 1)};
	return tk_quantile7(two, 2, (uint64_t)(prod % den), den); /* h = delta/den between the two */
}

int tk_fn_spread_build(const tk_fntable *ft, tk_fn_spread *out, tk_error *err)
{
	*out = (tk_fn_spread){0};
	size_t np = tk_fntable_nprofiles(ft), nf = tk_fntable_nfunctions(ft);
	double *vals = tk_xmalloc((np ? np : 1) * sizeof *vals), *pw = tk_xmalloc((np ? np : 1) * sizeof *pw);
	tk_fn_spread_row *rows = tk_xcalloc(nf ? nf : 1, sizeof *rows);
	/* The heaviest 5 %: inputs at or above the type 7 p95 of the inputs' weights (at least one). */
	for (size_t k = 0; k < np; k++)
		vals[k] = tk_fntable_profile_weight(ft, k);
	qsort(vals, np, sizeof *vals, cmp_double);
	double thr = np ? tk_quantile7(vals, np, 95, 100) : 0, wsum_worst = 0, wsum_all = 0;
	size_t nworst = 0;
	for (size_t k = 0; k < np; k++) {
		double w = pw[k] = tk_fntable_profile_weight(ft, k);
		wsum_all += w;
		if (w >= thr)
			wsum_worst += w, nworst++;
	}
	for (size_t f = 0; f < nf; f++) {
		rows[f].function = f;
		size_t nc;
		const tk_fn_cell *c = tk_fntable_cells(ft, f, &nc);
		for (int tot = 0; tot < 2; tot++) {
			double ws = 0;
			size_t nz = 0;
			for (size_t i = 0; i < nc; i++) {
				double w = pw[c[i].profile], v = tot ? c[i].total : c[i].self;
				if (!tot && w >= thr)
					ws += v;
				if (w > 0 && v != 0)
					vals[nz++] = 100 * v / w;
			}
			if (!tot) {
				rows[f].worst_share = wsum_worst > 0 ? 100 * ws / wsum_worst : 0;
				rows[f].all_share = wsum_all > 0 ? 100 * tk_fntable_sum(ft, f, 0) / wsum_all : 0;
			}
			tk_sort_doubles(vals, nz);
			double *q = tot ? rows[f].total : rows[f].self;
			q[0] = tk_quantile7_sparse(vals, nz, np, 50, 100);
			q[1] = tk_quantile7_sparse(vals, nz, np, 95, 100);
			q[2] = tk_quantile7_sparse(vals, nz, np, 99, 100);
			q[3] = tk_quantile7_sparse(vals, nz, np, 1, 1);
		}
	}
	free(vals);
	free(pw);
	qsort(rows, nf, sizeof *rows, cmp_row);
	out->rows = rows;
	out->n = nf;
	out->threshold = thr;
	out->nworst = nworst;
	/* the heaviest inputs' top functions: a second order over the same rows */
	out->worst = tk_xmalloc((nf ? nf : 1) * sizeof *out->worst);
	for (size_t i = 0; i < nf; i++)
		out->worst[i] = rows[i];
	qsort(out->worst, nf, sizeof *out->worst, cmp_worst);
	(void)err;
	return 0;
}

void tk_fn_spread_free(tk_fn_spread *s)
{
	free(s->rows);
	free(s->worst);
	*s = (tk_fn_spread){0};
}
