/* Alert rules over the fleet store (include/tracekit/alert.h): a small line-oriented parser and an
 * evaluation that asks tk_store_percentiles (the engine computes every number) and compares. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/alert.h"
#include "util/mem.h"

/* ---- tokens of one line ---- */

typedef struct tok {
	const char *s; /* into the line copy */
	size_t n;
} tok;

typedef struct line_ctx {
	const char *name;
	unsigned line;
	tk_error *err;
} line_ctx;

static int fail(const line_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const line_ctx *c, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tk_error_set(c->err, "%s:%u: %s", c->name, c->line, msg);
}

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t';
}

static int is_punct(char ch)
{
	return ch == '(' || ch == ')' || ch == ',' || ch == '<' || ch == '>' || ch == '=' || ch == '!';
}

/* Split s into tokens: words, single ( ) , and the operators (a run of < > = !). Returns the count. */
static size_t tokenize(const char *s, tok *t, size_t max)
{
	size_t n = 0;
	while (*s && n < max) {
		if (is_space(*s)) {
			s++;
			continue;
		}
		const char *b = s;
		if (*s == '(' || *s == ')' || *s == ',')
			s++;
		else if (is_punct(*s))
			while (*s == '<' || *s == '>' || *s == '=' || *s == '!')
				s++;
		else
			while (*s && !is_space(*s) && !is_punct(*s))
				s++;
		t[n++] = (tok){b, (size_t)(s - b)};
	}
	return n;
}

static int tok_is(const tok *t, const char *w)
{
	return t->n == strlen(w) && memcmp(t->s, w, t->n) == 0;
}

/* "p95" → index of 0.95 in tk_store_quantiles, or -1. */
static int quantile_index(const tok *t)
{
	static const char *const names[TK_STORE_NQ] = {"p50", "p90", "p95", "p99", "p99.9"};
	for (int k = 0; k < TK_STORE_NQ; k++)
		if (tok_is(t, names[k]))
			return k;
	return -1;
}

/* A decimal number at the start of t (no hex, inf or nan): its length, or 0. */
static size_t number_len(const tok *t)
{
	size_t i = 0, digits = 0;
	if (i < t->n && (t->s[i] == '+' || t->s[i] == '-'))
		i++;
	while (i < t->n && t->s[i] >= '0' && t->s[i] <= '9')
		i++, digits++;
	if (i < t->n && t->s[i] == '.')
		for (i++; i < t->n && t->s[i] >= '0' && t->s[i] <= '9'; i++)
			digits++;
	if (!digits)
		return 0;
	if (i < t->n && (t->s[i] == 'e' || t->s[i] == 'E')) {
		size_t j = i + 1;
		if (j < t->n && (t->s[j] == '+' || t->s[j] == '-'))
			j++;
		size_t e = j;
		while (j < t->n && t->s[j] >= '0' && t->s[j] <= '9')
			j++;
		if (j > e)
			i = j;
	}
	return i;
}

/* The threshold's unit u against the metric's unit mu: the factor to the metric's unit, or 0. */
static double unit_factor(const char *u, const char *mu)
{
	if (strcmp(u, mu) == 0)
		return 1;
	/* ms for s, ms/h for s/h */
	if (mu[0] == 's' && u[0] == 'm' && strcmp(u + 1, mu) == 0)
		return 1e-3;
	return 0;
}

static int parse_rule(char *text, const line_ctx *c, tk_alert_rule *r)
{
	tok t[64];
	size_t n = tokenize(text, t, sizeof t / sizeof t[0]);
	if (n == sizeof t / sizeof t[0])
		return fail(c, "too many words for one rule");
	size_t i = 0;
	char buf[256];
#define TOKSTR(x) (snprintf(buf, sizeof buf, "%.*s", (int)((x)->n > 200 ? 200 : (x)->n), (x)->s), buf)
	/* STAT(METRIC) or METRIC */
	const tok *metric = &t[0];
	r->quantile = -1;
	r->stat = TK_ALERT_VALUE;
	if (n > 1 && tok_is(&t[1], "(")) {
		const tok *stat = &t[0];
		if ((r->qindex = quantile_index(stat)) >= 0) {
			r->stat = TK_ALERT_QUANTILE;
			r->quantile = tk_store_quantiles[r->qindex];
		} else if (tok_is(stat, "mean")) {
			r->stat = TK_ALERT_VALUE;
		} else if (tok_is(stat, "min")) {
			r->stat = TK_ALERT_MIN;
		} else if (tok_is(stat, "max")) {
			r->stat = TK_ALERT_MAX;
		} else if (tok_is(stat, "count")) {
			r->stat = TK_ALERT_COUNT;
		} else if (stat->n > 1 && stat->s[0] == 'p' &&
		           number_len(&(tok){stat->s + 1, stat->n - 1}) == stat->n - 1) {
			return fail(c, "%s: the store computes the percentiles p50, p90, p95, p99 and p99.9",
			            TOKSTR(stat));
		} else {
			return fail(c, "'%s(' is not a statistic (p50, p90, p95, p99, p99.9, mean, min, max, count)",
			            TOKSTR(stat));
		}
		if (n < 3 || is_punct(t[2].s[0]))
			return fail(c, "%s( needs a metric, as in p95(hang.duration)", TOKSTR(stat));
		metric = &t[2];
		if (n < 4 || !tok_is(&t[3], ")"))
			return fail(c, "%s(%.*s: ')' expected after the metric", TOKSTR(stat),
			            (int)(metric->n > 100 ? 100 : metric->n), metric->s);
		i = 4;
	} else {
		if (is_punct(t[0].s[0]))
			return fail(c, "a rule starts with a metric or STAT(METRIC), not '%s'", TOKSTR(&t[0]));
		i = 1;
	}
	r->metric = tk_xstrndup(metric->s, metric->n);
	const char *mu = tk_store_metric_unit(r->metric);
	if (!mu)
		return fail(c, "unknown metric '%s' (the metrics are those of `tracekit stats --db --help`)",
		            TOKSTR(metric));
	/* the operator */
	if (i >= n)
		return fail(c, "an operator (>, >=, <, <=) and a threshold are missing after '%s'", TOKSTR(metric));
	const tok *op = &t[i++];
	if (tok_is(op, ">"))
		r->op = TK_ALERT_GT;
	else if (tok_is(op, ">="))
		r->op = TK_ALERT_GE;
	else if (tok_is(op, "<"))
		r->op = TK_ALERT_LT;
	else if (tok_is(op, "<="))
		r->op = TK_ALERT_LE;
	else
		return fail(c, "'%s' is not an operator (>, >=, <, <=)", TOKSTR(op));
	/* the threshold and its unit (attached, "2s", or the next word) */
	if (i >= n)
		return fail(c, "a threshold is missing after '%s'", TOKSTR(op));
	const tok *num = &t[i++];
	size_t nl = number_len(num);
	if (!nl)
		return fail(c, "'%s' is not a number", TOKSTR(num));
	char nbuf[64];
	if (nl >= sizeof nbuf)
		return fail(c, "'%s' is too long a number", TOKSTR(num));
	memcpy(nbuf, num->s, nl);
	nbuf[nl] = 0;
	double v = strtod(nbuf, NULL);
	if (!isfinite(v))
		return fail(c, "'%s' is out of range", nbuf);
	tok unit = {num->s + nl, num->n - nl};
	if (!unit.n && i < n && !tok_is(&t[i], "since") && !tok_is(&t[i], "by") && !is_punct(t[i].s[0]))
		unit = t[i++];
	char ubuf[16] = "";
	if (unit.n) {
		if (unit.n >= sizeof ubuf)
			return fail(c, "'%s' is not a unit", TOKSTR(&unit));
		memcpy(ubuf, unit.s, unit.n);
		ubuf[unit.n] = 0;
	}
	if (r->stat == TK_ALERT_COUNT) {
		if (*ubuf)
			return fail(c, "count(%s) is a number of reports: '%s' takes no unit", r->metric, ubuf);
		if (v < 0 || v != floor(v))
			return fail(c, "count(%s): '%s' is not a whole number", r->metric, nbuf);
	} else if (!*mu) {
		snprintf(r->unit, sizeof r->unit, "%s", ubuf); /* profile metrics: checked against the stored unit */
	} else if (*ubuf) {
		double f = unit_factor(ubuf, mu);
		if (!f)
			return fail(c, "%s is in %s, the threshold in '%s'%s", r->metric, mu, ubuf,
			            mu[0] == 's' ? " (write s or ms)" : "");
		v *= f;
		snprintf(r->unit, sizeof r->unit, "%s", mu);
	} else {
		snprintf(r->unit, sizeof r->unit, "%s", mu);
	}
	r->threshold = v;
	/* since DURATION, by KEYS, in either order, each once */
	int have_since = 0, have_by = 0;
	while (i < n) {
		const tok *kw = &t[i++];
		if (tok_is(kw, "since") && !have_since) {
			have_since = 1;
			if (i >= n || is_punct(t[i].s[0]))
				return fail(c, "since needs a duration (1d, 12h, 30m, 90s)");
			const tok *d = &t[i++];
			char dbuf[64];
			if (d->n >= sizeof dbuf)
				return fail(c, "since %s: expected a duration (1d, 12h, 30m, 90s)", TOKSTR(d));
			memcpy(dbuf, d->s, d->n);
			dbuf[d->n] = 0;
			tk_store_query q = {0};
			tk_error e;
			char last = dbuf[d->n - 1];
			if (last >= '0' && last <= '9')
				return fail(
				    c,
				    "since %s: a rule takes a duration back from now (1d, 12h, 30m, 90s), not a date",
				    dbuf);
			if (tk_store_query_since(&q, dbuf, 0, &e))
				return fail(c, "since %s: expected a duration (1d, 12h, 30m, 90s)", dbuf);
			if (!(-q.since > 0) || !isfinite(q.since))
				return fail(c, "since %s: the duration must be more than 0 and finite", dbuf);
			r->since = -q.since;
		} else if (tok_is(kw, "by") && !have_by) {
			have_by = 1;
			/* KEYS: word (, word)* */
			char keys[256] = "";
			size_t kl = 0;
			for (int want_word = 1;; want_word = !want_word) {
				if (i >= n || (want_word ? is_punct(t[i].s[0]) : !tok_is(&t[i], ",")))
					break;
				if (kl + t[i].n + 1 >= sizeof keys)
					return fail(c, "by: too many keys");
				memcpy(keys + kl, t[i].s, t[i].n);
				kl += t[i].n;
				keys[kl] = 0;
				i++;
			}
			if (!kl || keys[kl - 1] == ',')
				return fail(c,
				            "by needs keys: app, version (or app.version), build, device, os, session");
			tk_store_query q = {0};
			tk_error e;
			if (tk_store_query_by(&q, keys, &e))
				return fail(c, "%s", e.msg + (strncmp(e.msg, "--", 2) == 0 ? 2 : 0));
			memcpy(r->by, q.by, sizeof r->by);
			r->nby = q.nby;
		} else if (tok_is(kw, "since") || tok_is(kw, "by")) {
			return fail(c, "'%s' is given twice", TOKSTR(kw));
		} else {
			return fail(c, "unexpected '%s' after the threshold (expected since DURATION or by KEYS)",
			            TOKSTR(kw));
		}
	}
#undef TOKSTR
	return 0;
}

static void rule_free(tk_alert_rule *r)
{
	free(r->text);
	free(r->metric);
}

int tk_alert_rules_parse(const char *text, size_t n, const char *name, tk_alert_rules *out, tk_error *err)
{
	*out = (tk_alert_rules){0};
	size_t cap = 0;
	line_ctx c = {name ? name : "rules", 0, err};
	for (size_t off = 0; off < n;) {
		const char *b = text + off;
		const char *nl = memchr(b, '\n', n - off);
		size_t len = nl ? (size_t)(nl - b) : n - off;
		off += len + (nl ? 1 : 0);
		c.line++;
		/* the comment, then trailing and leading blanks (and a CR of CRLF files) */
		size_t end = 0;
		while (end < len && b[end] != '#')
			end++;
		size_t start = 0;
		while (start < end && (is_space(b[start]) || b[start] == '\r'))
			start++;
		while (end > start && (is_space(b[end - 1]) || b[end - 1] == '\r'))
			end--;
		if (start == end)
			continue;
		for (size_t k = start; k < end; k++) {
			unsigned char ch = (unsigned char)b[k];
			if (ch == '\t')
				continue;
			if (ch < 0x20 || ch >= 0x7f) {
				fail(&c, "byte 0x%02x at column %zu: a rule is printable ASCII", ch, k + 1);
				goto bad;
			}
		}
		if (out->n == cap) {
			cap = cap ? 2 * cap : 8;
			out->v = tk_xrealloc(out->v, cap * sizeof *out->v);
		}
		tk_alert_rule *r = &out->v[out->n++];
		*r = (tk_alert_rule){0};
		r->text = tk_xstrndup(b + start, end - start);
		r->line = c.line;
		char *copy = tk_xstrdup(r->text);
		int rc = parse_rule(copy, &c, r);
		free(copy);
		if (rc)
			goto bad;
	}
	out->name = tk_xstrdup(c.name);
	return 0;
bad:
	tk_alert_rules_free(out);
	return -1;
}

void tk_alert_rules_free(tk_alert_rules *r)
{
	for (size_t i = 0; i < r->n; i++)
		rule_free(&r->v[i]);
	free(r->v);
	free(r->name);
	*r = (tk_alert_rules){0};
}

/* ---- evaluation ---- */

double tk_alert_value(const tk_alert_rule *rule, const tk_store_group *g)
{
	switch (rule->stat) {
	case TK_ALERT_QUANTILE: return g->q[rule->qindex];
	case TK_ALERT_MIN: return g->min;
	case TK_ALERT_MAX: return g->max;
	case TK_ALERT_COUNT: return (double)g->count;
	case TK_ALERT_VALUE: break;
	}
	return g->mean;
}

int tk_alert_breaks(const tk_alert_rule *rule, double v)
{
	switch (rule->op) {
	case TK_ALERT_GT: return v > rule->threshold;
	case TK_ALERT_GE: return v >= rule->threshold;
	case TK_ALERT_LT: return v < rule->threshold;
	case TK_ALERT_LE: return v <= rule->threshold;
	}
	return 0;
}

int tk_alert_eval(tk_store *s, const tk_alert_rules *r, const tk_store_query *filter, double now, tk_alert_breach **out,
                  size_t *n, tk_error *err)
{
	*out = NULL;
	*n = 0;
	size_t cap = 0;
	for (size_t i = 0; i < r->n; i++) {
		const tk_alert_rule *rule = &r->v[i];
		tk_store_query q = {0};
		if (filter) {
			memcpy(q.where, filter->where, sizeof q.where);
			q.since = filter->since;
			q.until = filter->until;
		}
		q.metric = rule->metric;
		memcpy(q.by, rule->by, sizeof q.by);
		q.nby = rule->nby;
		if (rule->since > 0 && now - rule->since > q.since)
			q.since = now - rule->since;
		tk_store_group *g = NULL;
		size_t ng = 0;
		tk_error e;
		if (tk_store_percentiles(s, &q, &g, &ng, &e)) {
			tk_alert_breaches_free(*out, *n);
			*out = NULL;
			*n = 0;
			return tk_error_set(err, "%s:%u: %s: %s", r->name ? r->name : "rules", rule->line, rule->text,
			                    e.msg);
		}
		if (ng && rule->stat != TK_ALERT_COUNT && *rule->unit && strcmp(rule->unit, g[0].unit) != 0) {
			char unit[sizeof g[0].unit];
			snprintf(unit, sizeof unit, "%s", g[0].unit);
			tk_store_groups_free(g, ng);
			tk_alert_breaches_free(*out, *n);
			*out = NULL;
			*n = 0;
			return tk_error_set(err, "%s:%u: %s: the threshold is in %s, the stored values in %s",
			                    r->name ? r->name : "rules", rule->line, rule->text, rule->unit, unit);
		}
		for (size_t k = 0; k < ng; k++) {
			double v = tk_alert_value(rule, &g[k]);
			if (!tk_alert_breaks(rule, v))
				continue;
			if (*n == cap) {
				cap = cap ? 2 * cap : 8;
				*out = tk_xrealloc(*out, cap * sizeof **out);
			}
			tk_alert_breach *b = &(*out)[(*n)++];
			*b = (tk_alert_breach){.rule = i, .value = v, .count = g[k].count};
			for (size_t j = 0; j < rule->nby; j++) {
				b->keys[j] = g[k].keys[j]; /* moved */
				g[k].keys[j] = NULL;
			}
		}
		tk_store_groups_free(g, ng);
	}
	return 0;
}

void tk_alert_breaches_free(tk_alert_breach *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			free(b[i].keys[k]);
	free(b);
}
