/* Neumaier-compensated sum in long double: the one way tracekit sums values for a mean, shared by
 * tk_summary_sorted (quantile.c) and the stores' summaries built from per-value counts (sqlite.c,
 * clickhouse.c), which must give the same bits. The sum is s + c. */
#ifndef TK_STATS_KSUM_H
#define TK_STATS_KSUM_H

#include <math.h>

typedef struct tk_ksum {
	long double s, c;
} tk_ksum;

static inline void tk_ksum_add(tk_ksum *k, long double x)
{
	long double t = k->s + x;
	if (fabsl(k->s) >= fabsl(x))
		k->c += (k->s - t) + x;
	else
		k->c += (x - t) + k->s;
	k->s = t;
}

#endif
