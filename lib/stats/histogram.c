/*
 * MetricKit histograms as the reader keeps them (tracekit/metrickit.h): the attribute text, and the
 * estimates one can honestly make from buckets (percentiles interpolated within a bucket, the total
 * time of the samples above a bound).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/metrickit.h"
#include "util/mem.h"

static const char *const unit_names[] = {"", "count", "ns", "bytes", "ratio"};

char *tk_mx_histogram_format(const tk_mx_bucket *b, size_t n, tk_mx_kind kind)
{
	size_t cap = 16 + n * 64;
	char *s = tk_xmalloc(cap);
	size_t o =
	    (size_t)snprintf(s, cap, "%s", kind >= TK_MX_COUNT && kind <= TK_MX_RATIO ? unit_names[kind] : "count");
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(s + o, cap - o, ";%llu,%llu,%llu", (unsigned long long)b[i].start,
		                      (unsigned long long)b[i].end, (unsigned long long)b[i].count);
	return s;
}

static int num(const char **p, char stop, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (*s != stop)
		return -1;
	*p = stop ? s + 1 : s;
	*out = v;
	return 0;
}

int tk_mx_histogram_parse(const char *s, tk_mx_bucket **out, size_t *n, tk_mx_kind *kind)
{
	*out = NULL;
	*n = 0;
	const char *semi = strchr(s, ';');
	size_t ul = semi ? (size_t)(semi - s) : strlen(s);
	int k = 0;
	for (int i = TK_MX_COUNT; i <= TK_MX_RATIO; i++)
		if (strlen(unit_names[i]) == ul && memcmp(s, unit_names[i], ul) == 0)
			k = i;
	if (!k)
		return -1;
	*kind = (tk_mx_kind)k;
	tk_mx_bucket *b = NULL;
	size_t nb = 0, cb = 0;
	const char *p = semi;
	while (p) {
		p++;
		TK_GROW(b, cb, nb + 1);
		tk_mx_bucket *x = &b[nb];
		const char *next = strchr(p, ';');
		if (num(&p, ',', &x->start) < 0 || num(&p, ',', &x->end) < 0 ||
		    num(&p, next ? ';' : '\0', &x->count) < 0 || x->end < x->start) {
			free(b);
			return -1;
		}
		nb++;
		p = next;
	}
	*out = b;
	*n = nb;
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const tk_mx_bucket *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start ? 1 : x->end < y->end ? -1 : x->end > y->end;
}

double tk_mx_histogram_quantile(const tk_mx_bucket *b, size_t n, double q)
{
	tk_mx_bucket *s = tk_xmalloc((n ? n : 1) * sizeof *s);
	memcpy(s, b, n * sizeof *s);
	qsort(s, n, sizeof *s, by_start);
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += (double)s[i].count;
	double r = NAN;
	if (total > 0) {
		double rank = q * total, before = 0;
		for (size_t i = 0; i < n; i++) {
			if (!s[i].count)
				continue;
			double c = (double)s[i].count;
			if (before + c >= rank || i == n - 1) {
				double f = (rank - before) / c;
				if (f < 0)
					f = 0;
				if (f > 1)
					f = 1;
				r = (double)s[i].start + ((double)s[i].end - (double)s[i].start) * f;
				break;
			}
			before += c;
		}
	}
	free(s);
	return r;
}

double tk_mx_histogram_sum_above(const tk_mx_bucket *b, size_t n, uint64_t min)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		double s = (double)b[i].start, e = (double)b[i].end, c = (double)b[i].count;
		if (b[i].end < min || !b[i].count)
			continue;
		if (b[i].start >= min || e == s) {
			sum += c * (s + e) / 2;
			continue;
		}
		/* the bucket straddles min: its samples taken as spread evenly over [start, end] */
		double part = (e - (double)min) / (e - s);
		sum += c * part * ((double)min + e) / 2;
	}
	return sum;
}
