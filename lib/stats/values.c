/* A value set: exact while it fits the memory limit, the sketch past it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/stats.h"

struct tk_values {
	size_t limit;
	double *x, *w; /* w is NULL until the first weighted value */
	size_t n, cap;
	int sorted;
	tk_sketch *sk;
};

tk_values *tk_values_new(size_t limit_bytes)
{
	tk_values *v = calloc(1, sizeof *v);
	if (v)
		v->limit = limit_bytes;
	return v;
}

void tk_values_free(tk_values *v)
{
	if (!v)
		return;
	free(v->x);
	free(v->w);
	tk_sketch_free(v->sk);
	free(v);
}

int tk_values_to_sketch(tk_values *v, tk_error *err)
{
	if (v->sk)
		return 0;
	v->sk = tk_sketch_new();
	if (!v->sk)
		return tk_error_set(err, "values: out of memory");
	for (size_t i = 0; i < v->n; i++)
		if ((v->w ? tk_sketch_add_w(v->sk, v->x[i], v->w[i], 1) : tk_sketch_add(v->sk, v->x[i])) < 0)
			return tk_error_set(err, "values: out of memory");
	free(v->x);
	free(v->w);
	v->x = v->w = NULL;
	v->n = v->cap = 0;
	return 0;
}

/* Bytes per kept value: the value, its weight, and the sort's scratch for the value. */
static size_t per_value(const tk_values *v)
{
	return v->w ? 24 : 16;
}

static int grow(tk_values *v, tk_error *err)
{
	size_t cap = v->cap ? v->cap * 2 : 1024;
	if (v->limit && cap * per_value(v) > v->limit) {
		cap = v->limit / per_value(v);
		if (cap <= v->n)
			return tk_values_to_sketch(v, err);
	}
	double *x = realloc(v->x, cap * sizeof *x);
	if (!x)
		return tk_values_to_sketch(v, err);
	v->x = x;
	if (v->w) {
		double *w = realloc(v->w, cap * sizeof *w);
		if (!w)
			return tk_values_to_sketch(v, err);
		v->w = w;
	}
	v->cap = cap;
	return 0;
}

static int add(tk_values *v, double x, double w, int weighted, tk_error *err)
{
	if (!isfinite(x))
		return tk_error_set(err, "value %g is not a finite number", x);
	if (weighted && !(isfinite(w) && w >= 0))
		return tk_error_set(err, "weight %g is not a finite non-negative number", w);
	if (weighted && !v->w && !v->sk) {
		/* Earlier values were unweighted: they weigh 1. */
		v->w = malloc((v->cap ? v->cap : 1) * sizeof *v->w);
		if (!v->w)
			return tk_values_to_sketch(v, err) < 0 ? -1 : add(v, x, w, weighted, err);
		for (size_t i = 0; i < v->n; i++)
			v->w[i] = 1;
	}
	if (!v->sk && v->n == v->cap && grow(v, err) < 0)
		return -1;
	if (v->sk) {
		int r = weighted ? tk_sketch_add_w(v->sk, x, w, 1) : tk_sketch_add(v->sk, x);
		return r < 0 ? tk_error_set(err, "values: out of memory") : 0;
	}
	v->x[v->n] = x;
	if (v->w)
		v->w[v->n] = weighted ? w : 1;
	v->n++;
	v->sorted = 0;
	return 0;
}

int tk_values_add(tk_values *v, double x, tk_error *err)
{
	return add(v, x, 1, 0, err);
}

int tk_values_add_w(tk_values *v, double x, double w, tk_error *err)
{
	return add(v, x, w, 1, err);
}

uint64_t tk_values_count(const tk_values *v)
{
	return v->sk ? tk_sketch_count(v->sk) : v->n;
}

int tk_values_exact(const tk_values *v)
{
	return v->sk == NULL;
}

int tk_values_merge_sketch(tk_values *v, const tk_sketch *s, tk_error *err)
{
	if (tk_values_to_sketch(v, err) < 0)
		return -1;
	return tk_sketch_merge(v->sk, s, err);
}

/* Sort values and weights together: sort (value, index) keys when weighted. */
static int cmp_pair(const void *a, const void *b)
{
	const double *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

int tk_values_summary(tk_values *v, tk_summary *s, tk_error *err)
{
	if (v->sk) {
		tk_sketch_summary(v->sk, s);
		return 0;
	}
	if (!v->sorted) {
		if (v->w) {
			double *pairs = malloc(v->n * 2 * sizeof *pairs + 1);
			if (!pairs)
				return tk_error_set(err, "values: out of memory sorting %zu values", v->n);
			for (size_t i = 0; i < v->n; i++)
				pairs[2 * i] = v->x[i], pairs[2 * i + 1] = v->w[i];
			qsort(pairs, v->n, 2 * sizeof *pairs, cmp_pair);
			for (size_t i = 0; i < v->n; i++)
				v->x[i] = pairs[2 * i], v->w[i] = pairs[2 * i + 1];
			free(pairs);
		} else if (tk_sort_doubles(v->x, v->n) < 0) {
			return tk_error_set(err, "values: out of memory sorting %zu values", v->n);
		}
		v->sorted = 1;
	}
	tk_summary_sorted(s, v->x, v->w, v->n);
	return 0;
}

const double *tk_values_sorted(const tk_values *v, size_t *n)
{
	*n = v->sk ? 0 : v->n;
	return v->sk ? NULL : v->x;
}

const tk_sketch *tk_values_sketch(const tk_values *v)
{
	return v->sk;
}
