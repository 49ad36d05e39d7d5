/* Tests for comparing runs: Mann-Whitney U and a bootstrap interval of the change in means. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/stats.h"

typedef struct ranked {
	double x;
	int side; /* 0 = a, 1 = b */
} ranked;

static int cmp_ranked(const void *p, const void *q)
{
	const ranked *a = p, *b = q;
	return (a->x > b->x) - (a->x < b->x);
}

/* P(U ≤ u) under the null for sizes (m, n) without ties: the number of arrangements with U = k
 * satisfies f(m, n, k) = f(m−1, n, k−n) + f(m, n−1, k) (the largest value belongs to a or to b);
 * counted here in doubles, one n-row at a time. Returns the lower tail probability. */
static double exact_cdf(size_t m, size_t n, double u)
{
	size_t umax = m * n;
	/* f[i][k] for the current n, i = 0..m: (m+1) × (umax+1) doubles. */
	double *cur = calloc((m + 1) * (umax + 1), sizeof *cur), *prev = calloc((m + 1) * (umax + 1), sizeof *prev);
	if (!cur || !prev) {
		free(cur), free(prev);
		return NAN;
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
	double total = 0, below = 0;
	for (size_t k = 0; k <= umax; k++) {
		total += F(prev, m, k);
		if ((double)k <= u + 1e-9)
			below += F(prev, m, k);
	}
#undef F
	free(cur), free(prev);
	return below / total;
}

double tk_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u_out)
{
	if (u_out)
		*u_out = NAN;
	if (na == 0 || nb == 0)
		return 1;
	size_t n = na + nb;
	ranked *r = malloc(n * sizeof *r);
	if (!r)
		return NAN;
	for (size_t i = 0; i < na; i++)
		r[i] = (ranked){a[i], 0};
	for (size_t i = 0; i < nb; i++)
		r[na + i] = (ranked){b[i], 1};
	qsort(r, n, sizeof *r, cmp_ranked);
	/* Midranks; Σ(t³ − t) over tie groups for the variance correction. */
	double ra = 0, ties = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && r[j].x == r[i].x)
			j++;
		double mid = (i + 1 + j) / 2.0, t = (double)(j - i);
		for (size_t k = i; k < j; k++)
			if (r[k].side == 0)
				ra += mid;
		ties += t * t * t - t;
		i = j;
	}
	free(r);
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
