/* Tests for comparing runs: Mann-Whitney U and a bootstrap interval of the change in means. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/stats.h"

/* Sort ascending with zeros taken out first: a diff's per-run weights are mostly zero (a function
 * absent from most runs), so only the rest needs sorting. */
static void sort_sparse(double *x, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (x[i] != 0)
			x[k++] = x[i];
	tk_sort_doubles(x, k);
	size_t p = 0;
	while (p < k && x[p] < 0)
		p++;
	memmove(x + p + (n - k), x + p, (k - p) * sizeof *x);
	for (size_t j = p; j < p + (n - k); j++)
		x[j] = 0;
}

/* The null distribution of U for sizes (m, n) without ties, as cumulative probabilities P(U ≤ k):
 * the number of arrangements with U = k satisfies f(m, n, k) = f(m−1, n, k−n) + f(m, n−1, k) (the
 * largest value belongs to a or to b); counted in doubles, one n-row at a time. A diff asks for the
 * same (m, n) once per function, so the last distribution is kept (per thread). */
static _Thread_local struct {
	size_t m, n;
	double *cdf; /* m·n + 1 entries */
} cache;

static const double *null_cdf(size_t m, size_t n)
{
	if (cache.cdf && cache.m == m && cache.n == n)
		return cache.cdf;
	size_t umax = m * n;
	double *cur = calloc((m + 1) * (umax + 1), sizeof *cur), *prev = calloc((m + 1) * (umax + 1), sizeof *prev);
	double *cdf = malloc((umax + 1) * sizeof *cdf);
	if (!cur || !prev || !cdf) {
		free(cur), free(prev), free(cdf);
		return NULL;
	}
#define F(arr, i, k) arr[(i) * (umax + 1) + (k)]
	/* n = 0: exactly one arrangement, U = 0, for every i. */
	for (size_t i = 0; i <= m; i++)
		F(prev, i, 0) = 1;
	for (size_t nn = 1; nn <= n; nn++) {
		memset(cur, 0, (m + 1) * (umax + 1) * sizeof *cur);
		for (size_t i = 0; i <= m; i++)
			for (size_t k = 0; k <= i * nn; k++) {
				/* The largest is b's: U unchanged. The largest is a's: it beats all nn of b. */
				double v = F(prev, i, k);
				if (i > 0 && k >= nn)
					v += F(cur, i - 1, k - nn);
				F(cur, i, k) = v;
			}
		double *t = prev;
		prev = cur, cur = t;
	}
	double total = 0;
	for (size_t k = 0; k <= umax; k++)
		total += F(prev, m, k);
	double acc = 0;
	for (size_t k = 0; k <= umax; k++)
		cdf[k] = (acc += F(prev, m, k)) / total;
#undef F
	free(cur), free(prev);
	free(cache.cdf);
	cache.m = m, cache.n = n, cache.cdf = cdf;
	return cdf;
}

void tk_mann_whitney_release(void)
{
	free(cache.cdf);
	cache.cdf = NULL;
	cache.m = cache.n = 0;
}

static double exact_cdf(size_t m, size_t n, double u)
{
	const double *cdf = null_cdf(m, n);
	if (!cdf)
		return NAN;
	/* u is a whole number here (no ties); floor guards the representation. */
	double k = floor(u + 1e-9);
	if (k < 0)
		return 0;
	return k >= (double)(m * n) ? 1 : cdf[(size_t)k];
}

/* Whether x[0..n) is in ascending order with no NaN. */
static int ascending(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (isnan(x[i]) || (i && !(x[i - 1] <= x[i])))
			return 0;
	return 1;
}

double tk_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u_out)
{
	if (u_out)
		*u_out = NAN;
	if (na == 0 || nb == 0)
		return 1;
	size_t n = na + nb;
	/* a sample given in ascending order (no NaN) is walked as it is: the walk below only compares
	 * values, so where sort_sparse would put its zeros (and which sign) changes nothing */
	int oa = ascending(a, na), ob = ascending(b, nb);
	double *sa = oa ? NULL : malloc(na * sizeof *sa), *sb = ob ? NULL : malloc(nb * sizeof *sb);
	if ((!oa && !sa) || (!ob && !sb)) {
		free(sa), free(sb);
		return NAN;
	}
	if (!oa) {
		memcpy(sa, a, na * sizeof *sa);
		sort_sparse(sa, na);
	}
	if (!ob) {
		memcpy(sb, b, nb * sizeof *sb);
		sort_sparse(sb, nb);
	}
	const double *xa = oa ? a : sa, *xb = ob ? b : sb;
	/* Walk both sorted samples as one: each group of equal values gets its midrank; Σ(t³ − t) over
	 * the groups corrects the variance for ties. */
	double ra = 0, ties = 0;
	size_t i = 0, j = 0, pos = 0;
	while (i < na || j < nb) {
		double v = i < na && (j >= nb || xa[i] <= xb[j]) ? xa[i] : xb[j];
		size_t ca = 0, cb = 0;
		while (i < na && xa[i] == v)
			i++, ca++;
		while (j < nb && xb[j] == v)
			j++, cb++;
		double t = (double)(ca + cb), mid = (double)pos + (t + 1) / 2;
		ra += (double)ca * mid;
		ties += t * t * t - t;
		pos += ca + cb;
	}
	free(sa), free(sb);
	double u = ra - na * (na + 1) / 2.0; /* pairs where a > b, ties 1/2 */
	if (u_out)
		*u_out = u;
	double mu = na * (double)nb / 2;
	if (ties == 0 && na <= 50 && nb <= 50) {
		/* Two-sided: twice the smaller tail, capped at 1 (U and na·nb − U are symmetric). */
		double lo = exact_cdf(na, nb, u < mu ? u : na * (double)nb - u);
		double p = 2 * lo;
		return p > 1 ? 1 : p;
	}
	double var = na * (double)nb / 12 * ((n + 1) - ties / ((double)n * (n - 1)));
	if (var <= 0)
		return 1; /* every value equal: no evidence of a difference */
	double z = (fabs(u - mu) - 0.5) / sqrt(var);
	if (z < 0)
		z = 0;
	double p = erfc(z / sqrt(2));
	return p > 1 ? 1 : p;
}

/* splitmix64: a small, well-mixed generator; the seed makes the interval repeat run to run. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double resample_mean(const double *x, size_t n, uint64_t *st)
{
	long double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[next(st) % n];
	return (double)(s / n);
}

void tk_bootstrap_mean_diff(const double *a, size_t na, const double *b, size_t nb, unsigned reps, double conf,
                            uint64_t seed, double *lo, double *hi)
{
	*lo = *hi = NAN;
	if (na == 0 || nb == 0 || reps == 0)
		return;
	double *d = malloc(reps * sizeof *d);
	if (!d)
		return;
	uint64_t st = seed;
	for (unsigned i = 0; i < reps; i++)
		d[i] = resample_mean(b, nb, &st) - resample_mean(a, na, &st);
	tk_sort_doubles(d, reps);
	*lo = tk_quantile7_p(d, reps, (1 - conf) / 2);
	*hi = tk_quantile7_p(d, reps, (1 + conf) / 2);
	free(d);
}
