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
 *   count(hang.duration) >= 100 by version    how many reports
 *
 * A rule is STAT(METRIC) or METRIC, an operator (> >= < <=), a threshold with an optional unit that
 * must agree with the metric's (s, ms, %, s/h), then optional "since DURATION" (as --since takes) and
 * "by KEYS" (as --by takes) in either order. A group *breaks* a rule when its value compares true.
 *
 * STAT is one of the percentiles the store computes (p50 p90 p95 p99 p99.9), mean (the same as the
 * bare METRIC), min, max or count (the group's reports; a count's threshold takes no unit). METRIC is
 * any metric tk_store_percentiles answers (tk_store_metric_unit knows it). A threshold in ms is
 * converted to the metric's seconds (ms/h to s/h); profile metrics' unit is the profiles' own, so
 * their threshold's unit, if any, is checked against the stored one when the rule is evaluated.
 * "since" takes a duration back from the present (1d, 12h, 30m, 90s), not a date, so a rule means
 * the same every time cron runs it. Everything after '#' is a comment; a rule is printable ASCII.
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
/* What of a group a rule compares: its percentile (quantile), its own value (the mean; for hang.rate
 * the pooled rate), min, max, or how many reports it holds. */
typedef enum tk_alert_stat {
	TK_ALERT_VALUE,
	TK_ALERT_QUANTILE,
	TK_ALERT_MIN,
	TK_ALERT_MAX,
	TK_ALERT_COUNT
} tk_alert_stat;

typedef struct tk_alert_rule {
	char *text;         /* the rule as written (trimmed), for messages and the dashboard */
	unsigned line;      /* 1-based line in the rules file */
	char *metric;       /* a tk_store_query metric: "hang.rate", "hang.duration", "cpu.duration", … */
	double quantile;    /* 0.5, 0.9, 0.95, 0.99, 0.999; or -1 for the metric's own value (the mean,
	                     * or for hang.rate the pooled rate) */
	tk_alert_stat stat; /* TK_ALERT_QUANTILE when quantile >= 0 */
	int qindex;         /* TK_ALERT_QUANTILE: index into tk_store_group.q (tk_store_quantiles) */
	tk_alert_op op;
	double threshold;       /* in the metric's unit (tk_store_metric_unit); a count for TK_ALERT_COUNT */
	char unit[16];          /* the threshold's unit as stored ("s", "%", "s/h"; "" for counts and for
	                         * profile metrics given no unit) */
	double since;           /* seconds back from now; 0 = all time */
	int by[TK_STORE_NKEYS]; /* grouping, as tk_store_query.by */
	size_t nby;
} tk_alert_rule;

typedef struct tk_alert_rules {
	tk_alert_rule *v;
	size_t n;
	char *name; /* the name given to tk_alert_rules_parse, for errors */
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
 * dashboard's filters) and its since (the later of it and the rule's wins; its metric, by and kind
 * are not used); now = the present, Unix seconds. Breaches are in rule order, then by keys.
 * Returns 0 or -1 with err ("NAME:LINE: RULE: …", the rule being evaluated). */
int tk_alert_eval(tk_store *s, const tk_alert_rules *r, const tk_store_query *filter, double now, tk_alert_breach **out,
                  size_t *n, tk_error *err);
void tk_alert_breaches_free(tk_alert_breach *b, size_t n);

/* The value a rule compares for one group of tk_store_percentiles (for the dashboard, which has the
 * groups already), and whether it breaks the rule (a NaN value never does). */
double tk_alert_value(const tk_alert_rule *rule, const tk_store_group *g);
int tk_alert_breaks(const tk_alert_rule *rule, double value);

#ifdef __cplusplus
}
#endif
#endif
