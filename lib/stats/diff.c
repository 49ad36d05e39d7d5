/* Comparing two sets of runs function by function. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/stats.h"
#include "util/text.h"

#define BOOTSTRAP_REPS 2000
#define BOOTSTRAP_SEED 0x7472616365ull /* "trace": any fixed value; fixed so a diff repeats */

static int cmp_row(const void *p, const void *q)
{
	const tk_diff_row *a = p, *b = q;
	double x = fabs(a->change), y = fabs(b->change);
	if (x != y)
		return x < y ? 1 : -1;
	double tx = fabs(a->total_change), ty = fabs(b->total_change);
	if (tx != ty)
		return tx < ty ? 1 : -1;
	int c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->binary, b->binary);
}

static void fill(tk_diff_row *r, const tk_fntable *a, ptrdiff_t fa, const tk_fntable *b, ptrdiff_t fb, double *va,
                 double *vb)
{
	size_t na = tk_fntable_nprofiles(a), nb = tk_fntable_nprofiles(b);
	r->name = fa >= 0 ? tk_fntable_name(a, (size_t)fa) : tk_fntable_name(b, (size_t)fb);
	r->binary = fa >= 0 ? tk_fntable_binary(a, (size_t)fa) : tk_fntable_binary(b, (size_t)fb);
	r->self_a = fa >= 0 ? tk_fntable_sum(a, (size_t)fa, 0) : 0;
	r->total_a = fa >= 0 ? tk_fntable_sum(a, (size_t)fa, 1) : 0;
	r->self_b = fb >= 0 ? tk_fntable_sum(b, (size_t)fb, 0) : 0;
	r->total_b = fb >= 0 ? tk_fntable_sum(b, (size_t)fb, 1) : 0;
	r->change = r->self_b / nb - r->self_a / na;
	r->total_change = r->total_b / nb - r->total_a / na;
	r->p = r->p_total = r->ci_lo = r->ci_hi = NAN;
	if (na < 2 || nb < 2)
		return;
	for (int tot = 0; tot < 2; tot++) {
		if (fa >= 0)
			tk_fntable_values(a, (size_t)fa, tot, va);
		else
			memset(va, 0, na * sizeof *va);
		if (fb >= 0)
			tk_fntable_values(b, (size_t)fb, tot, vb);
		else
			memset(vb, 0, nb * sizeof *vb);
		double p = tk_mann_whitney(va, na, vb, nb, NULL);
		if (tot)
			r->p_total = p;
		else
			r->p = p;
	}
}

/* The bootstrap costs reps × (na + nb) draws per function, so it is done for the rows people read:
 * the first CI_ROWS by |change|. */
#define CI_ROWS 100

static void interval(tk_diff_row *r, const tk_fntable *a, const tk_fntable *b, double *va, double *vb)
{
	size_t na = tk_fntable_nprofiles(a), nb = tk_fntable_nprofiles(b);
	ptrdiff_t fa = tk_fntable_find_exact(a, r->name, r->binary), fb = tk_fntable_find_exact(b, r->name, r->binary);
	if (fa >= 0)
		tk_fntable_values(a, (size_t)fa, 0, va);
	else
		memset(va, 0, na * sizeof *va);
	if (fb >= 0)
		tk_fntable_values(b, (size_t)fb, 0, vb);
	else
		memset(vb, 0, nb * sizeof *vb);
	tk_bootstrap_mean_diff(va, na, vb, nb, BOOTSTRAP_REPS, 0.95, BOOTSTRAP_SEED, &r->ci_lo, &r->ci_hi);
}

tk_diff *tk_diff_build(const tk_fntable *a, const tk_fntable *b, tk_error *err)
{
	size_t na = tk_fntable_nprofiles(a), nb = tk_fntable_nprofiles(b);
	if (na == 0 || nb == 0) {
		tk_error_set(err, "diff: side %s has no profile", na == 0 ? "A" : "B");
		return NULL;
	}
	if (strcmp(tk_fntable_unit(a), tk_fntable_unit(b)) != 0) {
		tk_error_set(err, "diff: A is in %s but B in %s", tk_fntable_unit(a), tk_fntable_unit(b));
		return NULL;
	}
	size_t fa = tk_fntable_nfunctions(a), fb = tk_fntable_nfunctions(b);
	tk_diff *d = calloc(1, sizeof *d);
	double *va = malloc(na * sizeof *va), *vb = malloc(nb * sizeof *vb);
	if (d)
		d->rows = calloc(fa + fb + 1, sizeof *d->rows);
	if (!d || !d->rows || !va || !vb) {
		free(va), free(vb);
		tk_diff_free(d);
		tk_error_set(err, "diff: out of memory");
		return NULL;
	}
	d->runs_a = na, d->runs_b = nb;
	d->unit = tk_fntable_unit(a);
	for (size_t k = 0; k < na; k++)
		d->weight_a += (va[k] = tk_fntable_profile_weight(a, k));
	for (size_t k = 0; k < nb; k++)
		d->weight_b += (vb[k] = tk_fntable_profile_weight(b, k));
	d->p_weight = na >= 2 && nb >= 2 ? tk_mann_whitney(va, na, vb, nb, NULL) : NAN;
	for (size_t f = 0; f < fa; f++)
		fill(&d->rows[d->n++], a, (ptrdiff_t)f, b,
		     tk_fntable_find_exact(b, tk_fntable_name(a, f), tk_fntable_binary(a, f)), va, vb);
	for (size_t f = 0; f < fb; f++)
		if (tk_fntable_find_exact(a, tk_fntable_name(b, f), tk_fntable_binary(b, f)) < 0)
			fill(&d->rows[d->n++], a, -1, b, (ptrdiff_t)f, va, vb);
	qsort(d->rows, d->n, sizeof *d->rows, cmp_row);
	if (na >= 2 && nb >= 2)
		for (size_t i = 0; i < d->n && i < CI_ROWS; i++)
			interval(&d->rows[i], a, b, va, vb);
	free(va), free(vb);
	return d;
}

void tk_diff_free(tk_diff *d)
{
	if (!d)
		return;
	free(d->rows);
	free(d);
}

int tk_diff_write_json(FILE *f, const tk_diff *d, size_t limit, tk_error *err)
{
	char b[32];
	size_t n = limit && limit < d->n ? limit : d->n;
	fputs("{\"functions\": [", f);
	for (size_t i = 0; i < n; i++) {
		const tk_diff_row *r = &d->rows[i];
		fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
		tk_json_fput(f, r->name);
		fprintf(f, ", \"self_a\": %s", tk_stats_fmt_double(r->self_a, b));
		fprintf(f, ", \"self_b\": %s", tk_stats_fmt_double(r->self_b, b));
		fprintf(f, ", \"total_a\": %s", tk_stats_fmt_double(r->total_a, b));
		fprintf(f, ", \"total_b\": %s", tk_stats_fmt_double(r->total_b, b));
		fprintf(f, ", \"p\": %s}", tk_stats_fmt_double(r->p, b));
	}
	fputs(n ? "\n]}\n" : "]}\n", f);
	if (ferror(f))
		return tk_error_set(err, "writing the diff: write error");
	return 0;
}
