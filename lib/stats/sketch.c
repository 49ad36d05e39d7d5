/* The mergeable log-bucket quantile sketch (see tracekit/stats.h for its guarantee and text form). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/stats.h"

/* Counters for consecutive bucket indexes [lo, lo + n). */
typedef struct store {
	int32_t lo;
	size_t n;
	uint64_t *c;
} store;

struct tk_sketch {
	double gamma, inv_log_gamma;
	store pos, neg;
	uint64_t zero, count;
	long double sum, wsum, wvsum;
	int weighted;
	double min, max;
};

tk_sketch *tk_sketch_new(void)
{
	tk_sketch *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->gamma = (1 + TK_SKETCH_ALPHA) / (1 - TK_SKETCH_ALPHA);
	s->inv_log_gamma = 1 / log(s->gamma);
	s->min = INFINITY;
	s->max = -INFINITY;
	return s;
}

void tk_sketch_free(tk_sketch *s)
{
	if (!s)
		return;
	free(s->pos.c);
	free(s->neg.c);
	free(s);
}

/* Bucket of v > 0: the i with γ^(i−1) < v ≤ γ^i. Subnormals and huge values stay in range:
 * |i| ≤ ~38,000 for α = 0.95 %. */
static inline int32_t bucket(const tk_sketch *s, double v)
{
	return (int32_t)ceil(log(v) * s->inv_log_gamma);
}

static double rep(const tk_sketch *s, int32_t i)
{
	return 2 * pow(s->gamma, i) / (s->gamma + 1);
}

static int store_grow(store *st, int32_t i)
{
	if (st->n == 0) {
		size_t cap = 64;
		st->c = calloc(cap, sizeof *st->c);
		if (!st->c)
			return -1;
		st->lo = i - 32;
		st->n = cap;
		return 0;
	}
	int32_t lo = st->lo, hi = st->lo + (int32_t)st->n - 1;
	if (i >= lo && i <= hi)
		return 0;
	int32_t nlo = i < lo ? i : lo, nhi = i > hi ? i : hi;
	size_t need = (size_t)(nhi - nlo + 1), cap = st->n;
	while (cap < need)
		cap *= 2;
	/* Put the slack on the side that grew. */
	int32_t newlo = i < lo ? nhi - (int32_t)cap + 1 : nlo;
	uint64_t *c = calloc(cap, sizeof *c);
	if (!c)
		return -1;
	memcpy(c + (lo - newlo), st->c, st->n * sizeof *c);
	free(st->c);
	st->c = c;
	st->lo = newlo;
	st->n = cap;
	return 0;
}

static int store_add(store *st, int32_t i, uint64_t n)
{
	if (st->n == 0 || i < st->lo || i >= st->lo + (int32_t)st->n)
		if (store_grow(st, i) < 0)
			return -1;
	st->c[i - st->lo] += n;
	return 0;
}

int tk_sketch_add_w(tk_sketch *s, double x, double w, uint64_t n)
{
	if (!isfinite(x) || !isfinite(w) || n == 0)
		return n == 0 ? 0 : -1;
	int r = 0;
	if (x > 0)
		r = store_add(&s->pos, bucket(s, x), n);
	else if (x < 0)
		r = store_add(&s->neg, bucket(s, -x), n);
	else
		s->zero += n;
	if (r < 0)
		return -1;
	s->weighted = 1;
	s->count += n;
	s->sum += (long double)x * n;
	s->wsum += (long double)w * n;
	s->wvsum += (long double)w * x * n;
	if (x < s->min)
		s->min = x;
	if (x > s->max)
		s->max = x;
	return 0;
}

int tk_sketch_add(tk_sketch *s, double x)
{
	if (!isfinite(x))
		return -1;
	/* The hot path of 10 M values: no weights to keep. */
	int r = 0;
	if (x > 0)
		r = store_add(&s->pos, bucket(s, x), 1);
	else if (x < 0)
		r = store_add(&s->neg, bucket(s, -x), 1);
	else
		s->zero++;
	if (r < 0)
		return -1;
	s->count++;
	s->sum += x;
	s->wsum += 1;
	s->wvsum += x;
	if (x < s->min)
		s->min = x;
	if (x > s->max)
		s->max = x;
	return 0;
}

static int store_merge(store *into, const store *from)
{
	for (size_t k = 0; k < from->n; k++)
		if (from->c[k] && store_add(into, from->lo + (int32_t)k, from->c[k]) < 0)
			return -1;
	return 0;
}

int tk_sketch_merge(tk_sketch *into, const tk_sketch *from, tk_error *err)
{
	if (store_merge(&into->pos, &from->pos) < 0 || store_merge(&into->neg, &from->neg) < 0)
		return tk_error_set(err, "merging sketches: out of memory");
	into->zero += from->zero;
	into->count += from->count;
	into->sum += from->sum;
	into->wsum += from->wsum;
	into->wvsum += from->wvsum;
	into->weighted |= from->weighted;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
	return 0;
}

uint64_t tk_sketch_count(const tk_sketch *s)
{
	return s->count;
}

/* The estimate of the order statistic of rank r (0-based): negatives from the most negative
 * bucket, then zeros, then positives; clamped to [min, max], which only brings it closer. */
static double at_rank(const tk_sketch *s, uint64_t r)
{
	uint64_t acc = 0;
	double v = s->max;
	int found = 0;
	for (size_t k = s->neg.n; k-- > 0 && !found;)
		if ((acc += s->neg.c[k]) > r)
			v = -rep(s, s->neg.lo + (int32_t)k), found = 1;
	if (!found && (acc += s->zero) > r)
		v = 0, found = 1;
	for (size_t k = 0; k < s->pos.n && !found; k++)
		if ((acc += s->pos.c[k]) > r)
			v = rep(s, s->pos.lo + (int32_t)k), found = 1;
	if (v < s->min)
		v = s->min;
	if (v > s->max)
		v = s->max;
	return v;
}

static double interp(const tk_sketch *s, uint64_t j, long double t)
{
	if (j + 1 >= s->count)
		return s->max;
	double a = at_rank(s, j);
	if (t == 0)
		return a;
	double b = at_rank(s, j + 1);
	return (double)(a + t * ((long double)b - a));
}

double tk_sketch_quantile(const tk_sketch *s, double q)
{
	if (s->count == 0 || !(q >= 0))
		return NAN;
	if (q >= 1)
		return s->max;
	long double h = (long double)(s->count - 1) * q;
	uint64_t j = (uint64_t)floorl(h);
	return interp(s, j, h - j);
}

double tk_sketch_quantile_frac(const tk_sketch *s, uint64_t num, uint64_t den)
{
	if (s->count == 0 || den == 0)
		return NAN;
	if (num >= den)
		return s->max;
	unsigned __int128 prod = (unsigned __int128)(s->count - 1) * num;
	return interp(s, (uint64_t)(prod / den), (long double)(uint64_t)(prod % den) / den);
}

void tk_sketch_summary(const tk_sketch *s, tk_summary *out)
{
	memset(out, 0, sizeof *out);
	out->count = s->count;
	out->exact = 0;
	out->rel_err = TK_SKETCH_REL_ERR;
	out->wmean = NAN;
	if (s->count == 0) {
		out->mean = out->min = out->max = NAN;
		for (int i = 0; i < TK_SUMMARY_NPCT; i++)
			out->pct[i] = NAN;
		return;
	}
	out->mean = (double)(s->sum / s->count);
	if (s->weighted && s->wsum > 0)
		out->wmean = (double)(s->wvsum / s->wsum);
	out->min = s->min;
	out->max = s->max;
	for (int i = 0; i < TK_SUMMARY_NPCT; i++)
		out->pct[i] = tk_sketch_quantile_frac(s, tk_summary_pct_num[i], tk_summary_pct_den[i]);
}

double tk_sketch_rank(const tk_sketch *s, double x)
{
	if (s->count == 0)
		return 0;
	if (x >= s->max)
		return (double)s->count;
	if (x < s->min)
		return 0;
	double acc = 0;
	for (size_t k = s->neg.n; k-- > 0;)
		if (s->neg.c[k] && -rep(s, s->neg.lo + (int32_t)k) <= x)
			acc += s->neg.c[k];
	if (x >= 0)
		acc += s->zero;
	for (size_t k = 0; k < s->pos.n; k++)
		if (s->pos.c[k] && rep(s, s->pos.lo + (int32_t)k) <= x)
			acc += s->pos.c[k];
	return acc;
}

size_t tk_sketch_memory(const tk_sketch *s)
{
	return sizeof *s + (s->pos.n + s->neg.n) * sizeof(uint64_t);
}

/* ---- text form ---- */

static void write_store(FILE *f, const char *name, const store *st)
{
	fputs(name, f);
	for (size_t k = 0; k < st->n; k++)
		if (st->c[k])
			fprintf(f, " %" PRId32 ":%" PRIu64, st->lo + (int32_t)k, st->c[k]);
	fputc('\n', f);
}

int tk_sketch_write(FILE *f, const tk_sketch *s, const char *metric, const char *unit, tk_error *err)
{
	char b[32];
	fprintf(f, "tracekit-sketch 1\nalpha %s\n", tk_stats_fmt_double(TK_SKETCH_ALPHA, b));
	if (metric)
		fprintf(f, "metric %s\n", metric);
	if (unit)
		fprintf(f, "unit %s\n", unit);
	fprintf(f, "count %" PRIu64 "\n", s->count);
	/* Sums keep their long double precision, so a merged mean matches a one-pass one. */
	fprintf(f, "sum %.21Lg\nwsum %.21Lg\nwvsum %.21Lg\n", s->sum, s->wsum, s->wvsum);
	fprintf(f, "weighted %d\n", s->weighted);
	fprintf(f, "min %s\n", tk_stats_fmt_double(s->min, b));
	fprintf(f, "max %s\n", tk_stats_fmt_double(s->max, b));
	fprintf(f, "zero %" PRIu64 "\n", s->zero);
	write_store(f, "pos", &s->pos);
	write_store(f, "neg", &s->neg);
	fputs("end\n", f);
	if (ferror(f))
		return tk_error_set(err, "writing the sketch: %s", strerror(errno ? errno : EIO));
	return 0;
}

static int parse_ldouble(const char *v, long double *out)
{
	char *end;
	errno = 0;
	*out = strtold(v, &end);
	return (end == v || *end || errno == ERANGE || !isfinite(*out)) ? -1 : 0;
}

static int parse_double(const char *v, double *out)
{
	if (strcmp(v, "null") == 0) {
		*out = NAN;
		return 0;
	}
	char *end;
	errno = 0;
	*out = strtod(v, &end);
	return (end == v || *end || errno == ERANGE) ? -1 : 0;
}

static int parse_u64(const char *v, uint64_t *out)
{
	if (*v < '0' || *v > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (*end || errno)
		return -1;
	*out = x;
	return 0;
}

static int parse_store(tk_sketch *s, store *st, char *v, uint64_t *total)
{
	char *save = NULL;
	int32_t last = INT32_MIN;
	for (char *tok = strtok_r(v, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *colon = strchr(tok, ':'), *end;
		if (!colon)
			return -1;
		*colon = 0;
		errno = 0;
		long i = strtol(tok, &end, 10);
		uint64_t c;
		/* Indexes of doubles' range only: |i| ≤ 1453 / ln γ. */
		if (end == tok || *end || errno || i < -80000 || i > 80000 || (int32_t)i <= last ||
		    parse_u64(colon + 1, &c) < 0 || c == 0)
			return -1;
		last = (int32_t)i;
		if (store_add(st, (int32_t)i, c) < 0)
			return -1;
		if (*total + c < *total)
			return -1;
		*total += c;
	}
	(void)s;
	return 0;
}

tk_sketch *tk_sketch_read(FILE *f, const char *name, char **metric, char **unit, tk_error *err)
{
	if (metric)
		*metric = NULL;
	if (unit)
		*unit = NULL;
	tk_sketch *s = tk_sketch_new();
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;
	uint64_t total = 0, count = 0;
	int seen = 0, ended = 0, have_count = 0;
	const char *problem = NULL;
	if (!s) {
		tk_error_set(err, "%s: out of memory", name);
		return NULL;
	}
	while (!ended && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = 0;
		char *sp = strchr(line, ' ');
		char *key = line, *val = sp ? sp + 1 : line + len;
		if (sp)
			*sp = 0;
		double d;
		if (lineno == 1) {
			if (strcmp(key, "tracekit-sketch") != 0 || strcmp(val, "1") != 0) {
				problem = "not a tracekit sketch (expected \"tracekit-sketch 1\")";
				break;
			}
			seen = 1;
		} else if (strcmp(key, "alpha") == 0) {
			if (parse_double(val, &d) < 0 || d != TK_SKETCH_ALPHA) {
				problem =
				    "the sketch has another alpha than this tracekit's (0.0095): they cannot merge";
				break;
			}
		} else if (strcmp(key, "metric") == 0 || strcmp(key, "unit") == 0) {
			char **dst = key[0] == 'm' ? metric : unit;
			if (dst) {
				free(*dst);
				*dst = strdup(val);
			}
		} else if (strcmp(key, "count") == 0) {
			if (parse_u64(val, &count) < 0) {
				problem = "bad count";
				break;
			}
			have_count = 1;
		} else if (strcmp(key, "sum") == 0 || strcmp(key, "wsum") == 0 || strcmp(key, "wvsum") == 0) {
			long double ld;
			if (parse_ldouble(val, &ld) < 0) {
				problem = "bad sum";
				break;
			}
			*(key[0] == 's' ? &s->sum : key[1] == 's' ? &s->wsum : &s->wvsum) = ld;
		} else if (strcmp(key, "min") == 0 || strcmp(key, "max") == 0) {
			if (parse_double(val, &d) < 0) {
				problem = "bad number";
				break;
			}
			if (key[1] == 'i')
				s->min = isnan(d) ? INFINITY : d;
			else
				s->max = isnan(d) ? -INFINITY : d;
		} else if (strcmp(key, "weighted") == 0) {
			if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0) {
				problem = "weighted must be 0 or 1";
				break;
			}
			s->weighted = val[0] == '1';
		} else if (strcmp(key, "zero") == 0) {
			if (parse_u64(val, &s->zero) < 0) {
				problem = "bad zero count";
				break;
			}
			total += s->zero;
		} else if (strcmp(key, "pos") == 0 || strcmp(key, "neg") == 0) {
			store *st = key[0] == 'p' ? &s->pos : &s->neg;
			if (st->n || parse_store(s, st, val, &total) < 0) {
				problem = "bad bucket list (expected INDEX:COUNT pairs, ascending, once)";
				break;
			}
		} else if (strcmp(key, "end") == 0) {
			ended = 1;
		} else {
			problem = "unknown line";
			break;
		}
	}
	free(line);
	if (!problem && !seen)
		problem = "empty input";
	if (!problem && !ended)
		problem = "truncated (no \"end\" line)";
	if (!problem && (!have_count || count != total))
		problem = "the count does not equal the buckets' total";
	if (!problem && count && !(s->min <= s->max))
		problem = "min is above max";
	if (problem) {
		tk_error_set(err, "%s:%u: %s", name, lineno, problem);
		tk_sketch_free(s);
		if (metric)
			free(*metric), *metric = NULL;
		if (unit)
			free(*unit), *unit = NULL;
		return NULL;
	}
	s->count = count;
	return s;
}
