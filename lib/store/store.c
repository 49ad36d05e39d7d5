/* The store front: URL → backend, query options, metrics and the summary every backend reproduces. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "tracekit/stats.h"
#include "util/mem.h"

struct tk_store {
	const tk_store_ops *b;
	void *h;
};

tk_store *tk_store_open(const char *url, tk_error *err)
{
	const tk_store_ops *b = NULL;
	const char *rest = url;
	if (strncmp(url, "sqlite:", 7) == 0) {
		b = &tk_store_sqlite;
		rest = url + 7;
		if (strncmp(rest, "//", 2) == 0) /* sqlite:///abs/path */
			rest += 2;
	} else if (strncmp(url, "clickhouse://", 13) == 0) {
		b = &tk_store_clickhouse;
		rest = url + 13;
	} else if (strstr(url, "://")) {
		tk_error_set(err, "%s: unknown store (expected sqlite:PATH or clickhouse://HOST:PORT/DB)", url);
		return NULL;
	} else {
		b = &tk_store_sqlite; /* a plain path */
	}
	if (!*rest) {
		tk_error_set(err, "%s: the store URL names no %s", url, b == &tk_store_sqlite ? "file" : "server");
		return NULL;
	}
	void *h = b->open(rest, err);
	if (!h)
		return NULL;
	tk_store *s = tk_xcalloc(1, sizeof *s);
	s->b = b;
	s->h = h;
	return s;
}

void tk_store_close(tk_store *s)
{
	if (!s)
		return;
	s->b->close(s->h);
	free(s);
}

const char *tk_store_backend(const tk_store *s)
{
	return s->b->name;
}

int tk_store_put(tk_store *s, const tk_report *v, size_t n, size_t *added, tk_error *err)
{
	size_t dummy;
	if (!added)
		added = &dummy;
	*added = 0;
	if (n == 0)
		return 0;
	return s->b->put(s->h, v, n, added, err);
}

int tk_store_put_profiles(tk_store *s, const tk_profile_report *v, size_t n, size_t *added, tk_error *err)
{
	size_t dummy;
	if (!added)
		added = &dummy;
	*added = 0;
	if (n == 0)
		return 0;
	return s->b->put_profiles(s->h, v, n, added, err);
}

int tk_store_compact(tk_store *s, tk_store_compact_result *r, tk_error *err)
{
	*r = (tk_store_compact_result){0};
	return s->b->compact(s->h, r, err);
}

int tk_store_put_batches(tk_store *s, tk_store_batch *b, size_t n, tk_error *err)
{
	if (n == 0)
		return 0;
	if (s->b->put_batches)
		return s->b->put_batches(s->h, b, n, err);
	for (size_t i = 0; i < n; i++) {
		b[i].added = b[i].padded = 0;
		if (tk_store_put(s, b[i].v, b[i].n, &b[i].added, err) ||
		    tk_store_put_profiles(s, b[i].pv, b[i].pn, &b[i].padded, err))
			return -1;
	}
	return 0;
}

int tk_store_count(tk_store *s, uint64_t *n, tk_error *err)
{
	return s->b->count(s->h, n, err);
}

/* ---- metrics ---- */

static const tk_store_metric metrics[] = {
    /* as `tracekit stats` takes them: MTHawkeye's ANR records are hangs too */
    {"hang.duration", "('hang', 'anr')", "duration", "s", 0},
    {"cpu.duration", "('cpu-highload')", "duration", "s", 0},
    {"cpu.average", "('cpu-highload')", "avg_cpu", "%", 0},
    /* Apple's hang rate: per device (session), hang seconds per hour of foreground time (the backends'
     * own query, not this table's column: docs/store.md "Hang rate") */
    {"hang.rate", TK_STORE_RATE_KINDS, "duration", "s/h", 0},
    /* profile reports: one value per profile, the function's weight 0 where it is absent */
    {"profile.weight", "('profile')", "value", "", 1},
    {"fn.self:", "('profile')", "value", "", 2},
    {"fn.total:", "('profile')", "value", "", 3},
};

const tk_store_metric *tk_store_metric_find(const char *name)
{
	for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++) {
		size_t n = strlen(metrics[i].name);
		if (metrics[i].profile >= 2 ? strncmp(metrics[i].name, name, n) == 0 && name[n]
		                            : strcmp(metrics[i].name, name) == 0)
			return &metrics[i];
	}
	return NULL;
}

void tk_store_fnsel_parse(const char *metric, tk_store_fnsel *f)
{
	const char *arg = strchr(metric, ':') + 1;
	/* as tk_fntable_find: BINARY`SYMBOL names one binary's function, a bare name the first so named */
	const char *tick = strchr(arg, '`');
	f->binary = tick ? tk_xstrndup(arg, (size_t)(tick - arg)) : NULL;
	f->name = tk_xstrdup(tick ? tick + 1 : arg);
}

void tk_store_fnsel_free(tk_store_fnsel *f)
{
	free(f->name);
	free(f->binary);
}

int tk_store_unit_check(tk_store_group *g, size_t n, const char *umin, const char *umax, tk_error *err)
{
	if (strcmp(umin, umax) != 0)
		return tk_error_set(err,
		                    "the selected profiles hold weights in %s and in %s (select one unit with --where)",
		                    umin, umax);
	if (n && strcmp(g[0].unit, umin) != 0)
		return tk_error_set(err,
		                    "the selected profiles hold weights in %s and in %s (select one unit with --where)",
		                    g[0].unit, umin);
	snprintf(g[n].unit, sizeof g[n].unit, "%s", umin);
	return 0;
}

const char *tk_store_metric_unit(const char *metric)
{
	const tk_store_metric *m = tk_store_metric_find(metric);
	return m ? m->unit : NULL;
}

static int check_metric(const tk_store_query *q, tk_error *err)
{
	if (!q->metric || !tk_store_metric_find(q->metric))
		return tk_error_set(
		    err,
		    "--metric %s: the store answers hang.duration, hang.rate, cpu.duration, cpu.average, "
		    "profile.weight, fn.self:NAME and fn.total:NAME",
		    q->metric ? q->metric : "(none)");
	return 0;
}

int tk_store_percentiles(tk_store *s, const tk_store_query *q, tk_store_group **out, size_t *n, tk_error *err)
{
	*out = NULL;
	*n = 0;
	if (check_metric(q, err))
		return -1;
	if (s->b->percentiles(s->h, q, out, n, err))
		return -1;
	const tk_store_metric *m = tk_store_metric_find(q->metric);
	if (!m->profile)
		for (size_t i = 0; i < *n; i++)
			snprintf((*out)[i].unit, sizeof(*out)[i].unit, "%s", m->unit);
	return 0;
}

static const char *const diag_kinds[][2] = {
    {"hang", TK_STORE_HANG_KINDS},
    {"cpu", "('cpu-highload', 'cpu-exception')"},
    {"cpu-highload", "('cpu-highload')"},
    {"cpu-exception", "('cpu-exception')"},
    {"disk", "('disk-write')"},
    {"disk-write", "('disk-write')"},
    {"crash", "('crash')"},
    {"launch", "('launch')"},
    {"marker", "('marker')"},
};

const char *tk_store_kinds_sql(const char *kind)
{
	if (!kind)
		return TK_STORE_HANG_KINDS;
	for (size_t i = 0; i < sizeof diag_kinds / sizeof diag_kinds[0]; i++)
		if (strcmp(kind, diag_kinds[i][0]) == 0)
			return diag_kinds[i][1];
	return NULL;
}

const char *tk_store_diagnostic_kinds(void)
{
	return "hang|cpu|cpu-highload|cpu-exception|disk|disk-write|crash|launch|marker";
}

int tk_store_top_diagnostics(tk_store *s, const char *kind, const tk_store_query *q, size_t limit,
                             tk_store_hang **out, size_t *n, tk_error *err)
{
	if (!kind || !tk_store_kinds_sql(kind))
		return tk_error_set(err, "unknown kind '%s' (one of %s)", kind ? kind : "", tk_store_diagnostic_kinds());
	tk_store_query k = *q;
	k.kind = strcmp(kind, "hang") == 0 ? NULL : kind; /* hangs: exactly top-hangs */
	return tk_store_top_hangs(s, &k, limit, out, n, err);
}

int tk_store_top_hangs(tk_store *s, const tk_store_query *q, size_t limit, tk_store_hang **out, size_t *n,
                       tk_error *err)
{
	if (q->kind && !tk_store_kinds_sql(q->kind))
		return tk_error_set(err, "unknown kind '%s' (one of %s)", q->kind, tk_store_diagnostic_kinds());
	*out = NULL;
	*n = 0;
	return s->b->top_hangs(s->h, q, limit, out, n, err);
}

void tk_store_groups_free(tk_store_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			free(g[i].keys[k]);
	free(g);
}

void tk_store_hangs_free(tk_store_hang *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(h[i].signature);
		free(h[i].example);
	}
	free(h);
}

/* ---- query options ---- */

int tk_store_query_by(tk_store_query *q, const char *spec, tk_error *err)
{
	char *copy = tk_xstrdup(spec);
	for (char *item = strtok(copy, ","); item; item = strtok(NULL, ",")) {
		int k = tk_store_key_index(item);
		if (k < 0) {
			tk_error_set(
			    err,
			    "--by %s: '%s' is not one of app, version (or app.version), build, device, os, session",
			    spec, item);
			free(copy);
			return -1;
		}
		/* app.version groups by app and version: a version means nothing without its app */
		int add[2] = {strcmp(item, "app.version") == 0 ? TK_STORE_APP : -1, k};
		for (int j = 0; j < 2; j++) {
			if (add[j] < 0)
				continue;
			int dup = 0;
			for (size_t i = 0; i < q->nby; i++)
				dup |= q->by[i] == add[j];
			if (!dup && q->nby < TK_STORE_NKEYS)
				q->by[q->nby++] = add[j];
		}
	}
	free(copy);
	return 0;
}

int tk_store_query_where(tk_store_query *q, char *spec, tk_error *err)
{
	for (char *item = spec, *next; item && *item; item = next) {
		next = strchr(item, ',');
		if (next)
			*next++ = 0;
		char *eq = strchr(item, '=');
		int k = eq ? (*eq = 0, tk_store_key_index(item)) : -1;
		if (k < 0)
			return tk_error_set(
			    err,
			    "--where: '%s' is not KEY=VALUE with KEY one of app, version, build, device, os, "
			    "session",
			    item);
		q->where[k] = eq + 1;
	}
	return 0;
}

int tk_store_query_since(tk_store_query *q, const char *spec, double now, tk_error *err)
{
	char *end;
	double v = strtod(spec, &end);
	double mult = 0;
	if (end != spec && v >= 0 && isfinite(v)) {
		if (strcmp(end, "d") == 0)
			mult = 86400;
		else if (strcmp(end, "h") == 0)
			mult = 3600;
		else if (strcmp(end, "m") == 0)
			mult = 60;
		else if (strcmp(end, "s") == 0)
			mult = 1;
		else if (!*end) {
			q->since = v; /* Unix seconds */
			return 0;
		}
	}
	if (!mult)
		return tk_error_set(err, "--since %s: expected a duration (7d, 12h, 30m, 90s) or Unix seconds", spec);
	q->since = now - v * mult;
	return 0;
}

/* ---- the numbers ---- */

const double tk_store_quantiles[TK_STORE_NQ] = {0.5, 0.9, 0.95, 0.99, 0.999};

void tk_store_summarise(const double *x, size_t n, tk_store_group *g)
{
	/* the stats library's own summary: the store's numbers are `tracekit stats`'s by construction */
	tk_summary sum;
	tk_summary_sorted(&sum, x, NULL, n);
	g->count = sum.count;
	g->mean = sum.mean;
	g->min = sum.min;
	g->max = sum.max;
	for (int k = 0; k < TK_STORE_NQ; k++)
		g->q[k] = sum.pct[k];
}

double tk_store_lerp(double a, double b, uint64_t delta, uint64_t den)
{
	/* type 7 on the two order statistics is tk_quantile7's own interpolation step */
	const double x[2] = {a, b};
	return tk_quantile7(x, 2, delta, den);
}

int tk_store_is_hang_rate(const tk_store_query *q)
{
	return q->metric && strcmp(q->metric, "hang.rate") == 0;
}
