/* Statistics: type 7 percentiles on hand-computed cases, the sketch's stated bound on 10 M values of
 * several distributions and after merging 100 partial sketches, its text form, Mann-Whitney p-values
 * against published tables. (Random data against an independent type 7 oracle in exact rational
 * arithmetic is tests/cli/stats_cli.sh.) */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tracekit/stats.h"

static void test_quantile_small(void **state)
{
	(void)state;
	double one[] = {42.5};
	for (unsigned q = 0; q <= 1000; q += 37)
		assert_true(tk_quantile7(one, 1, q, 1000) == 42.5);
	/* Two values: Q(q) = 1 + q (h = q). */
	double two[] = {1, 2};
	assert_true(tk_quantile7(two, 2, 50, 100) == 1.5);
	assert_true(tk_quantile7(two, 2, 90, 100) == 1.9);
	assert_true(tk_quantile7(two, 2, 999, 1000) == 1.999);
	assert_true(tk_quantile7(two, 2, 0, 100) == 1);
	assert_true(tk_quantile7(two, 2, 100, 100) == 2);
	double same[1000];
	for (int i = 0; i < 1000; i++)
		same[i] = 0.1;
	tk_summary s;
	tk_summary_sorted(&s, same, NULL, 1000);
	assert_true(s.min == 0.1 && s.max == 0.1);
	for (int i = 0; i < TK_SUMMARY_NPCT; i++)
		assert_true(s.pct[i] == 0.1);
	/* 1..11: h = 10q, so p95 = 10.5, p99 = 10.9, p99.9 = 10.99 (the doubles nearest those decimals). */
	double x[11];
	for (int i = 0; i < 11; i++)
		x[i] = i + 1;
	tk_summary_sorted(&s, x, NULL, 11);
	assert_true(s.pct[0] == 6 && s.pct[1] == 10 && s.pct[2] == 10.5 && s.pct[3] == 10.9 && s.pct[4] == 10.99);
	assert_true(s.mean == 6);
	/* Ties and the JSON form. */
	double t[] = {1, 1, 2, 2, 2, 3};
	tk_summary_sorted(&s, t, NULL, 6);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(tk_summary_write_json(f, "m\"x", "ms", &s, NULL), 0);
	fclose(f);
	assert_string_equal(buf,
	                    "{\"metric\": \"m\\\"x\", \"unit\": \"ms\", \"count\": 6, \"mean\": 1.8333333333333333, "
	                    "\"min\": 1, \"p50\": 2, \"p90\": 2.5, \"p95\": 2.75, \"p99\": 2.95, \"p99.9\": 2.995, "
	                    "\"max\": 3}\n");
	free(buf);
}

static void test_sort(void **state)
{
	(void)state;
	double v[] = {3.5, -0.0, -7, 1e300, -1e-300, 0.0, 2, -7, 5e-324, -INFINITY, INFINITY};
	size_t n = sizeof v / sizeof v[0];
	assert_int_equal(tk_sort_doubles(v, n), 0);
	for (size_t i = 1; i < n; i++)
		assert_true(v[i - 1] <= v[i]);
	assert_true(signbit(v[4]) && !signbit(v[5])); /* -0 before +0 */
}

/* xoshiro-style generator for reproducible data. */
static uint64_t rng_state = 0x1234567;
static double urand(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return ((rng_state >> 11) + 0.5) / 9007199254740992.0;
}
static double nrand(void)
{
	return sqrt(-2 * log(urand())) * cos(2 * M_PI * urand());
}

#define NV 10000000

static const double probes[] = {0, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999, 1};

/* Every probed quantile (and the summary's five) within TK_SKETCH_REL_ERR of the exact one. */
static void check_sketch(const char *what, double *v, size_t n, const tk_sketch *sk)
{
	tk_sort_doubles(v, n);
	double worst = 0;
	for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
		double e = tk_quantile7_p(v, n, probes[i]), a = tk_sketch_quantile(sk, probes[i]);
		double rel = fabs(a - e) / fabs(e);
		if (rel > worst)
			worst = rel;
		if (!(rel <= TK_SKETCH_REL_ERR))
			fail_msg("%s: q %g exact %.17g sketch %.17g (relative error %g)", what, probes[i], e, a, rel);
	}
	tk_summary s;
	tk_sketch_summary(sk, &s);
	assert_int_equal(s.count, n);
	assert_true(s.min == v[0] && s.max == v[n - 1]);
	for (int i = 0; i < TK_SUMMARY_NPCT; i++) {
		double e = tk_quantile7(v, n, tk_summary_pct_num[i], tk_summary_pct_den[i]);
		if (!(fabs(s.pct[i] - e) <= TK_SKETCH_REL_ERR * fabs(e)))
			fail_msg("%s: %s exact %.17g sketch %.17g", what, tk_summary_pct_name[i], e, s.pct[i]);
	}
	printf("# %s: worst relative error %.5f over %zu probes, sketch %zu bytes\n", what, worst,
	       sizeof probes / sizeof probes[0], tk_sketch_memory(sk));
}

static void test_sketch_distributions(void **state)
{
	(void)state;
	double *v = malloc(NV * sizeof *v);
	assert_non_null(v);
	for (int dist = 0; dist < 3; dist++) {
		tk_sketch *sk = tk_sketch_new();
		for (size_t i = 0; i < NV; i++) {
			double x;
			if (dist == 0)
				x = 1 + 999 * urand(); /* uniform [1, 1000) */
			else if (dist == 1)
				x = exp(1 + 2 * nrand()); /* log-normal, spans ~15 decades */
			else
				x = urand() < 0.7 ? 5 + nrand() * 0.5 : 200 + nrand() * 20; /* bimodal */
			if (x <= 0)
				x = 1e-3;
			v[i] = x;
			assert_int_equal(tk_sketch_add(sk, x), 0);
		}
		check_sketch(dist == 0 ? "uniform" : dist == 1 ? "log-normal" : "bimodal", v, NV, sk);
		tk_sketch_free(sk);
	}
	free(v);
}

static void test_sketch_merge_100(void **state)
{
	(void)state;
	double *v = malloc(NV * sizeof *v), *v0 = malloc(NV / 50 * sizeof *v0);
	assert_non_null(v);
	assert_non_null(v0);
	tk_sketch *parts[100], *all = tk_sketch_new(), *merged = tk_sketch_new();
	for (int k = 0; k < 100; k++)
		parts[k] = tk_sketch_new();
	for (size_t i = 0; i < NV; i++) {
		/* Each part sees a different slice of a log-normal, so no part alone looks like the whole. */
		double x = exp(3 + nrand() + (double)(i % 100) / 50);
		v[i] = x;
		tk_sketch_add(parts[i % 100], x);
		if (i < NV / 50)
			v0[i] = x;
		if (i < NV / 50)
			tk_sketch_add(all, x);
	}
	for (int k = 0; k < 100; k++)
		assert_int_equal(tk_sketch_merge(merged, parts[k], NULL), 0);
	check_sketch("100 merged log-normal parts", v, NV, merged);
	/* Merging is exact: merged parts of the first NV/50 values give the same quantiles as one sketch
	 * over them. */
	tk_sketch *m2 = tk_sketch_new();
	for (int k = 0; k < 100; k++) {
		tk_sketch *part = tk_sketch_new();
		for (size_t i = (size_t)k; i < NV / 50; i += 100)
			tk_sketch_add(part, v0[i]);
		assert_int_equal(tk_sketch_merge(m2, part, NULL), 0);
		tk_sketch_free(part);
	}
	for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
		assert_true(tk_sketch_quantile(m2, probes[i]) == tk_sketch_quantile(all, probes[i]));
	tk_sketch_free(m2);
	free(v0);
	for (int k = 0; k < 100; k++)
		tk_sketch_free(parts[k]);
	tk_sketch_free(all);
	tk_sketch_free(merged);
	free(v);
}

static void test_sketch_text(void **state)
{
	(void)state;
	tk_sketch *s = tk_sketch_new();
	for (int i = -500; i <= 1000; i++)
		tk_sketch_add(s, i * 0.37);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(tk_sketch_write(f, s, "cpu.duration", "s", NULL), 0);
	fclose(f);
	f = fmemopen(buf, len, "r");
	char *metric, *unit;
	tk_error err;
	tk_sketch *r = tk_sketch_read(f, "mem", &metric, &unit, &err);
	fclose(f);
	assert_non_null(r);
	assert_string_equal(metric, "cpu.duration");
	assert_string_equal(unit, "s");
	for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
		assert_true(tk_sketch_quantile(r, probes[i]) == tk_sketch_quantile(s, probes[i]));
	tk_summary a, b;
	tk_sketch_summary(s, &a);
	tk_sketch_summary(r, &b);
	assert_true(a.count == b.count && a.mean == b.mean && a.min == b.min && a.max == b.max);
	free(metric), free(unit);
	tk_sketch_free(r);
	/* Damaged forms are errors naming the line. */
	const char *bad[] = {
	    "tracekit-sketch 2\n",
	    "tracekit-sketch 1\nalpha 0.02\ncount 0\nend\n",
	    "tracekit-sketch 1\nalpha 0.0095\ncount 3\nzero 1\npos 5:1\nend\n",
	    "tracekit-sketch 1\nalpha 0.0095\ncount 2\npos 5:1 4:1\nend\n",
	    "tracekit-sketch 1\nalpha 0.0095\ncount 1\npos 5:1\n",
	    "tracekit-sketch 1\nalpha 0.0095\ncount 1\npos 999999:1\nend\n",
	    "tracekit-sketch 1\nalpha 0.0095\ncount 1\nmin 3\nmax 1\npos 5:1\nend\n",
	    "",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		f = fmemopen((void *)bad[i], strlen(bad[i]) ? strlen(bad[i]) : 1, "r");
		err.msg[0] = 0;
		r = tk_sketch_read(f, "bad", NULL, NULL, &err);
		fclose(f);
		if (r)
			fail_msg("damaged sketch %zu accepted", i);
		assert_true(strncmp(err.msg, "bad:", 4) == 0);
	}
	free(buf);
	tk_sketch_free(s);
}

/* a gets U = u against b = {2, 4, …, 2n}: a value 2k + 1 beats exactly k of b. */
static double p_for_u(size_t m, size_t n, size_t u)
{
	double a[64], b[64];
	for (size_t j = 0; j < n; j++)
		b[j] = 2.0 * (j + 1);
	size_t left = u;
	for (size_t i = 0; i < m; i++) {
		size_t k = left < n ? left : n;
		a[i] = 2.0 * k + 1 + 1e-3 * (double)i; /* no ties: the exact test applies */
		left -= k;
	}
	assert_int_equal(left, 0);
	double got;
	double p = tk_mann_whitney(a, m, b, n, &got);
	assert_true(got == (double)u);
	return p;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void test_mann_whitney(void **state)
{
	(void)state;
	/* Mann & Whitney (1947), Table I, P(U ≤ u) for small samples: n1 = n2 = 3: P(U ≤ 0) = 0.050,
	 * P(U ≤ 1) = 0.100; n1 = n2 = 4: P(U ≤ 0) = 0.014, P(U ≤ 1) = 0.029, P(U ≤ 2) = 0.057 (1/20, 2/20,
	 * 1/70, 2/70, 4/70 exactly). Two-sided p is twice the tail. */
	assert_true(fabs(p_for_u(3, 3, 0) - 2.0 / 20) < 1e-12);
	assert_true(fabs(p_for_u(3, 3, 1) - 4.0 / 20) < 1e-12);
	assert_true(fabs(p_for_u(4, 4, 0) - 2.0 / 70) < 1e-12);
	assert_true(fabs(p_for_u(4, 4, 1) - 4.0 / 70) < 1e-12);
	assert_true(fabs(p_for_u(4, 4, 2) - 8.0 / 70) < 1e-12);
	/* Symmetry: U and n1·n2 − U give the same two-sided p. */
	assert_true(p_for_u(4, 4, 16) == p_for_u(4, 4, 0));
	/* Critical values of U for a two-tailed test at α = 0.05 (the table printed in most statistics
	 * texts, e.g. Siegel & Castellan 1988, Table J; Zar, Biostatistical Analysis, Table B.11):
	 * significant when U ≤ the value: (5,5) 2, (6,6) 5, (7,7) 8, (8,8) 13, (9,9) 17, (10,10) 23,
	 * (5,10) 8, (6,8) 8 (the exact test: U one above is not significant). */
	static const size_t crit[][3] = {{5, 5, 2},  {6, 6, 5},    {7, 7, 8},  {8, 8, 13},
	                                 {9, 9, 17}, {10, 10, 23}, {5, 10, 8}, {6, 8, 8}};
	for (size_t i = 0; i < sizeof crit / sizeof crit[0]; i++) {
		double p = p_for_u(crit[i][0], crit[i][1], crit[i][2]),
		       q = p_for_u(crit[i][0], crit[i][1], crit[i][2] + 1);
		if (!(p <= 0.05 && q > 0.05))
			fail_msg("n=(%zu,%zu): p(U=%zu) = %g, p(U=%zu) = %g", crit[i][0], crit[i][1], crit[i][2], p,
			         crit[i][2] + 1, q);
	}
	/* Ties: the normal approximation with tie-corrected variance and continuity correction, by the
	 * textbook formulas (midranks, σ² = n1·n2/12·((N+1) − Σ(t³−t)/(N(N−1))), z = (|U − n1·n2/2| − ½)/σ),
	 * worked separately for these samples (midranks tallied by hand, arithmetic in Python): U = 30,
	 * Σ(t³−t) = 174, σ² = 334.23, z = 2.598190, p = erfc(z/√2) = 0.0093717. */
	double a[] = {1, 2, 2, 3, 3, 3, 4, 5, 5, 6, 7, 8}, b[] = {3, 4, 4, 5, 6, 6, 7, 8, 8, 9, 9, 10, 11};
	double u, p = tk_mann_whitney(a, 12, b, 13, &u);
	assert_true(u == 30);
	assert_true(fabs(p - 0.009371664169231882) < 1e-9);
	/* U against its definition (pairs a > b, ties ½) on samples with many zeros, negatives and ties,
	 * the shape of a diff's per-run weights. */
	for (int trial = 0; trial < 200; trial++) {
		double x[80], y[70];
		size_t nx = 1 + (size_t)(urand() * 79), ny = 1 + (size_t)(urand() * 69);
		for (size_t i = 0; i < nx; i++)
			x[i] = urand() < 0.6 ? 0 : floor(urand() * 7) - 2;
		for (size_t i = 0; i < ny; i++)
			y[i] = urand() < 0.6 ? 0 : floor(urand() * 7) - 2;
		double naive = 0, got;
		for (size_t i = 0; i < nx; i++)
			for (size_t k = 0; k < ny; k++)
				naive += x[i] > y[k] ? 1 : x[i] == y[k] ? 0.5 : 0;
		double pv = tk_mann_whitney(x, nx, y, ny, &got);
		assert_true(got == naive);
		assert_true(pv >= 0 && pv <= 1);
		/* the same samples in ascending order (walked as given, zeros of either sign): the same U, p */
		double sx[80], sy[70], su;
		memcpy(sx, x, nx * sizeof *x);
		memcpy(sy, y, ny * sizeof *y);
		qsort(sx, nx, sizeof *sx, dcmp);
		qsort(sy, ny, sizeof *sy, dcmp);
		for (size_t i = 0; i < nx; i++)
			if (sx[i] == 0 && urand() < 0.5)
				sx[i] = -0.0;
		assert_true(tk_mann_whitney(sx, nx, sy, ny, &su) == pv && su == got);
	}
	/* Identical samples: nothing to tell apart. */
	double c[] = {5, 5, 5, 5};
	assert_true(tk_mann_whitney(c, 4, c, 4, NULL) == 1);
}

static void test_bootstrap(void **state)
{
	(void)state;
	double a[] = {10, 11, 9, 10, 10, 12}, b[] = {20, 21, 19, 20, 22, 20};
	double lo, hi, lo2, hi2;
	tk_bootstrap_mean_diff(a, 6, b, 6, 2000, 0.95, 7, &lo, &hi);
	tk_bootstrap_mean_diff(a, 6, b, 6, 2000, 0.95, 7, &lo2, &hi2);
	assert_true(lo == lo2 && hi == hi2); /* seeded: repeats exactly */
	/* The change in means is 20.333 − 10.333 = 10; any resample's difference lies within the extremes. */
	assert_true(lo <= 10 && hi >= 10 && lo >= 19 - 12 && hi <= 22 - 9);
}

static void test_values_limit(void **state)
{
	(void)state;
	tk_values *v = tk_values_new(64 * 1024); /* 4096 values at 16 bytes each */
	for (int i = 0; i < 4000; i++)
		assert_int_equal(tk_values_add(v, i, NULL), 0);
	assert_true(tk_values_exact(v));
	for (int i = 4000; i < 10000; i++)
		assert_int_equal(tk_values_add(v, i, NULL), 0);
	assert_false(tk_values_exact(v));
	tk_summary s;
	assert_int_equal(tk_values_summary(v, &s, NULL), 0);
	assert_int_equal(s.count, 10000);
	assert_false(s.exact);
	assert_true(s.min == 0 && s.max == 9999 && s.mean == 4999.5);
	assert_true(fabs(s.pct[0] - 4999.5) <= 0.01 * 4999.5);
	tk_error err;
	assert_int_equal(tk_values_add(v, NAN, &err), -1);
	tk_values_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quantile_small),
	    cmocka_unit_test(test_sort),
	    cmocka_unit_test(test_sketch_text),
	    cmocka_unit_test(test_mann_whitney),
	    cmocka_unit_test(test_bootstrap),
	    cmocka_unit_test(test_values_limit),
	    cmocka_unit_test(test_sketch_distributions),
	    cmocka_unit_test(test_sketch_merge_100),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
