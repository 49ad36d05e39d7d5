/*
 * tracekit/alert.h — alert rules over the fleet store: thresholds on percentiles and on Apple's hang
 * rate, checked by `tracekit alert` (cron, CI) and drawn by the dashboard (`tracekit serve --ui`).
 *
 * A rules file is text, one rule per line; '#' starts a comment, blank lines are ignored:
 *
 *   hang.rate > 5 s/h by version              the metric's own value per group (for hang.rate: the
 *                                             fleet's rate, seconds of hangs per foreground hour)
 *   p95(hang.duration) > 2 s                  a percentile: p50 p90 p95 p99 p99.9
 *   p99(cpu.duration) > 60 s since 1d by app,version
 *
 * A rule is STAT(METRIC) or METRIC, an operator (> >= < <=), a threshold with an optional unit that
 * must agree with the metric's (s, ms, %, s/h), then optional "since DURATION" (as --since takes) and
 * "by KEYS" (as --by takes) in either order. A group *breaks* a rule when its value compares true.
 *
 * Part of libtracekit-store (it queries a tk_store).
 */
#ifndef TRACEKIT_ALERT_H
#define TRACEKIT_ALERT_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/error.h"
#include "tracekit/store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tk_alert_op { TK_ALERT_GT, TK_ALERT_GE, TK_ALERT_LT, TK_ALERT_LE } tk_alert_op;

typedef struct tk_alert_rule {
	char *text;      /* the rule as written (trimmed), for messages and the dashboard */
	unsigned line;   /* 1-based line in the rules file */
	char *metric;    /* a tk_store_query metric: "hang.rate", "hang.duration", "cpu.duration", … */
	double quantile; /* 0.5, 0.9, 0.95, 0.99, 0.999; or -1 for the metric's own value (the mean,
	                  * or for hang.rate the pooled rate) */
	tk_alert_op op;
	double threshold;       /* in the metric's unit (tk_store_metric_unit) */
	double since;           /* seconds back from now; 0 = all time */
	int by[TK_STORE_NKEYS]; /* grouping, as tk_store_query.by */
	size_t nby;
} tk_alert_rule;

typedef struct tk_alert_rules {
	tk_alert_rule *v;
	size_t n;
} tk_alert_rules;

/* Parse a rules file's text (name is used in errors: "NAME:LINE: …"). Returns 0, or -1 with err
 * naming the line and what is wrong; *out is empty then. */
int tk_alert_rules_parse(const char *text, size_t n, const char *name, tk_alert_rules *out, tk_error *err);
void tk_alert_rules_free(tk_alert_rules *r);

/* One group that breaks one rule. */
typedef struct tk_alert_breach {
	size_t rule;                /* index into the rules */
	char *keys[TK_STORE_NKEYS]; /* the group's values of the rule's by keys, in that order */
	double value;               /* the group's value of the rule's statistic */
	uint64_t count;             /* reports (or, for hang.rate, devices) behind it */
} tk_alert_breach;

/* Evaluate every rule on the store; `filter` (may be NULL) adds where-filters to every rule (the
 * dashboard's filters); now = the present, Unix seconds. Breaches are in rule order, then by keys.
 * Returns 0 or -1 with err. */
int tk_alert_eval(tk_store *s, const tk_alert_rules *r, const tk_store_query *filter, double now,
                  tk_alert_breach **out, size_t *n, tk_error *err);
void tk_alert_breaches_free(tk_alert_breach *b, size_t n);

#ifdef __cplusplus
}
#endif
#endif
