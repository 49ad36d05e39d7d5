/* Exact type 7 percentiles, the radix sort behind them, the summary and its JSON form. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/ksum.h"
#include "tracekit/stats.h"
#include "util/text.h"

#if defined(__SIZEOF_FLOAT128__) && !defined(__clang__)
typedef __float128 wide;
#else
typedef long double wide;
#endif

const uint64_t tk_summary_pct_num[TK_SUMMARY_NPCT] = {50, 90, 95, 99, 999};
const uint64_t tk_summary_pct_den[TK_SUMMARY_NPCT] = {100, 100, 100, 100, 1000};
const char *const tk_summary_pct_name[TK_SUMMARY_NPCT] = {"p50", "p90", "p95", "p99", "p99.9"};

/* x[j] + t·(x[j+1] − x[j]) with t = num/den, in wide arithmetic: the difference of two doubles and
 * the product are exact or nearly so in 113 bits, so the final rounding to double is the only one
 * that matters. */
static double lerp_frac(double lo, double hi, uint64_t num, uint64_t den)
{
	if (num == 0 || lo == hi)
		return lo;
	wide d = (wide)hi - (wide)lo;
	wide r = (wide)lo + d * (wide)num / (wide)den;
	return (double)r;
}

double tk_quantile7(const double *x, size_t n, uint64_t num, uint64_t den)
{
	if (n == 0 || den == 0)
		return NAN;
	if (num >= den)
		return x[n - 1];
	/* h = (n−1)·num/den = j + delta/den, exactly (128-bit product: no overflow for any n). */
	unsigned __int128 prod = (unsigned __int128)(n - 1) * num;
	size_t j = (size_t)(prod / den);
	uint64_t delta = (uint64_t)(prod % den);
	if (j + 1 >= n)
		return x[n - 1];
	return lerp_frac(x[j], x[j + 1], delta, den);
}

double tk_quantile7_p(const double *x, size_t n, double q)
{
	if (n == 0 || !(q >= 0))
		return NAN;
	if (q >= 1)
		return x[n - 1];
	long double h = (long double)(n - 1) * q;
	size_t j = (size_t)floorl(h);
	if (j + 1 >= n)
		return x[n - 1];
	long double t = h - j;
	if (t == 0 || x[j] == x[j + 1])
		return x[j];
	return (double)((long double)x[j] + t * ((long double)x[j + 1] - x[j]));
}

/* Order-preserving map of a double's bits to an unsigned key. */
static inline uint64_t d2key(uint64_t b)
{
	return (b >> 63) ? ~b : b | (1ull << 63);
}
static inline uint64_t key2d(uint64_t k)
{
	return (k >> 63) ? k & ~(1ull << 63) : ~k;
}

static int cmp_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int tk_sort_doubles(double *v, size_t n)
{
	if (n < 2)
		return 0;
	if (n < 65536) {
		/* The radix sort's 2 MB of counters cost more than a comparison sort below this size. */
		uint64_t *k = (uint64_t *)v;
		for (size_t i = 0; i < n; i++) {
			uint64_t b;
			memcpy(&b, &v[i], 8);
			k[i] = d2key(b);
		}
		qsort(k, n, sizeof *k, cmp_key);
		for (size_t i = 0; i < n; i++) {
			uint64_t b = key2d(k[i]);
			memcpy(&v[i], &b, 8);
		}
		return 0;
	}
	uint64_t *a = (uint64_t *)v, *tmp = malloc(n * sizeof *tmp);
	size_t *cnt = calloc(4 * 65536, sizeof *cnt);
	if (!tmp || !cnt) {
		free(tmp), free(cnt);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t k;
		memcpy(&k, &v[i], 8);
		k = d2key(k);
		a[i] = k;
		for (int p = 0; p < 4; p++)
			cnt[p * 65536 + ((k >> (16 * p)) & 0xffff)]++;
	}
	uint64_t *src = a, *dst = tmp;
	for (int p = 0; p < 4; p++) {
		size_t *c = cnt + p * 65536;
		/* A digit every key shares needs no pass. */
		if (c[(src[0] >> (16 * p)) & 0xffff] == n)
			continue;
		size_t sum = 0;
		for (size_t d = 0; d < 65536; d++) {
			size_t t = c[d];
			c[d] = sum;
			sum += t;
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t k = src[i];
			dst[c[(k >> (16 * p)) & 0xffff]++] = k;
		}
		uint64_t *t = src;
		src = dst, dst = t;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t k = key2d(src[i]);
		memcpy(&v[i], &k, 8);
	}
	free(tmp), free(cnt);
	return 0;
}

void tk_summary_sorted(tk_summary *s, const double *x, const double *w, size_t n)
{
	memset(s, 0, sizeof *s);
	s->count = n;
	s->exact = 1;
	s->wmean = NAN;
	if (n == 0) {
		s->mean = s->min = s->max = NAN;
		for (int i = 0; i < TK_SUMMARY_NPCT; i++)
			s->pct[i] = NAN;
		return;
	}
	tk_ksum sum = {0, 0}, ws = {0, 0}, wvs = {0, 0};
	for (size_t i = 0; i < n; i++) {
		tk_ksum_add(&sum, x[i]);
		if (w) {
			tk_ksum_add(&ws, w[i]);
			tk_ksum_add(&wvs, (long double)w[i] * x[i]);
		}
	}
	s->mean = (double)((sum.s + sum.c) / n);
	if (w && ws.s + ws.c > 0)
		s->wmean = (double)((wvs.s + wvs.c) / (ws.s + ws.c));
	s->min = x[0];
	s->max = x[n - 1];
	for (int i = 0; i < TK_SUMMARY_NPCT; i++)
		s->pct[i] = tk_quantile7(x, n, tk_summary_pct_num[i], tk_summary_pct_den[i]);
}

const char *tk_stats_fmt_double(double x, char buf[32])
{
	if (!isfinite(x)) {
		strcpy(buf, "null");
		return buf;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, 32, "%.*g", prec, x);
		if (prec == 17 || strtod(buf, NULL) == x)
			break;
	}
	return buf;
}

int tk_summary_write_json(FILE *f, const char *metric, const char *unit, const tk_summary *s, tk_error *err)
{
	char b[32];
	fputs("{\"metric\": ", f);
	tk_json_fput(f, metric);
	fputs(", \"unit\": ", f);
	tk_json_fput(f, unit);
	fprintf(f, ", \"count\": %llu", (unsigned long long)s->count);
	fprintf(f, ", \"mean\": %s", tk_stats_fmt_double(s->count ? s->mean : NAN, b));
	fprintf(f, ", \"min\": %s", tk_stats_fmt_double(s->count ? s->min : NAN, b));
	for (int i = 0; i < TK_SUMMARY_NPCT; i++)
		fprintf(f, ", \"%s\": %s", tk_summary_pct_name[i], tk_stats_fmt_double(s->count ? s->pct[i] : NAN, b));
	fprintf(f, ", \"max\": %s}\n", tk_stats_fmt_double(s->count ? s->max : NAN, b));
	if (ferror(f))
		return tk_error_set(err, "writing the summary: %s", strerror(errno ? errno : EIO));
	return 0;
}
