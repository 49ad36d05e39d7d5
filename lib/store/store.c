/* The store front: URL → backend, query options, metrics and the summary every backend reproduces. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "tracekit/stats.h"
#include "util/hidx.h"
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

void tk_store_limit_memory(tk_store *s)
{
	if (s->b->limit_memory)
		s->b->limit_memory(s->h);
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

int tk_store_sync_later(tk_store *s, tk_error *err)
{
	return s->b->sync_later ? s->b->sync_later(s->h, err) : 1;
}

int tk_store_sync(tk_store *s, tk_error *err)
{
	return s->b->sync ? s->b->sync(s->h, err) : 0;
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
	if (q->signature && tk_store_metric_find(q->metric)->profile)
		return tk_error_set(err, "--signature selects reports; %s is a metric of profiles", q->metric);
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

/* q with the kind a top list counts (hangs: NULL, exactly top-hangs), or -1 with err. */
static int kind_query(const char *kind, const tk_store_query *q, tk_store_query *k, tk_error *err)
{
	if (!kind || !tk_store_kinds_sql(kind))
		return tk_error_set(err, "unknown kind '%s' (one of %s)", kind ? kind : "",
		                    tk_store_diagnostic_kinds());
	*k = *q;
	k->kind = strcmp(kind, "hang") == 0 ? NULL : kind;
	return 0;
}

int tk_store_top_diagnostics(tk_store *s, const char *kind, const tk_store_query *q, size_t limit, tk_store_hang **out,
                             size_t *n, tk_error *err)
{
	tk_store_query k;
	return kind_query(kind, q, &k, err) ? -1 : tk_store_top_hangs(s, &k, limit, out, n, err);
}

/* The lowest and highest of "\n"-joined versions. */
static void version_range(const char *list, char **first, char **last)
{
	char *copy = tk_xstrdup(list), *lo = NULL, *hi = NULL;
	for (char *v = strtok(copy, "\n"); v; v = strtok(NULL, "\n")) {
		if (!lo || tk_store_version_cmp(v, lo) < 0)
			lo = v;
		if (!hi || tk_store_version_cmp(v, hi) > 0)
			hi = v;
	}
	*first = tk_xstrdup(lo ? lo : "");
	*last = tk_xstrdup(hi ? hi : "");
	free(copy);
}

/* Each signature's first and last version over the same reports (q) its counts are of. */
static int first_last(tk_store *s, const tk_store_query *q, tk_store_hang *h, size_t n, tk_error *err)
{
	if (!n)
		return 0;
	char **sigs = tk_xmalloc(n * sizeof *sigs), **vers = tk_xcalloc(n, sizeof *vers);
	for (size_t i = 0; i < n; i++)
		sigs[i] = h[i].signature;
	int rc = s->b->sig_versions(s->h, q, tk_store_kinds_sql(q->kind), sigs, n, vers, err);
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			version_range(vers[i], &h[i].first_version, &h[i].last_version);
		free(vers[i]);
	}
	free(sigs);
	free(vers);
	if (rc) {
		for (size_t i = 0; i < n; i++) {
			free(h[i].first_version);
			free(h[i].last_version);
			h[i].first_version = h[i].last_version = NULL;
		}
	}
	return rc;
}

int tk_store_sig_first_last(tk_store *s, const tk_store_query *q, const char *kind, char *const *sigs, size_t n,
                            char **first, char **last, tk_error *err)
{
	const char *kinds = tk_store_kinds_sql(strcmp(kind, "hang") == 0 ? NULL : kind);
	if (!kinds)
		return tk_error_set(err, "unknown kind '%s' (one of %s)", kind, tk_store_diagnostic_kinds());
	char **vers = tk_xcalloc(n + 1, sizeof *vers);
	int rc = n ? s->b->sig_versions(s->h, q, kinds, sigs, n, vers, err) : 0;
	for (size_t i = 0; i < n; i++) {
		first[i] = last[i] = NULL;
		if (!rc && vers[i] && vers[i][0])
			version_range(vers[i], &first[i], &last[i]);
		free(vers[i]);
	}
	free(vers);
	return rc;
}

void tk_store_ingested(tk_store *s, size_t added)
{
	tk_error ignored;
	if (s->b->ingested)
		s->b->ingested(s->h, added, &ignored);
}

int tk_store_view_begin(tk_store *s, tk_error *err)
{
	return s->b->view_begin ? s->b->view_begin(s->h, err) : 0;
}

int tk_store_view_end(tk_store *s, tk_error *err)
{
	return s->b->view_end ? s->b->view_end(s->h, err) : 0;
}

int tk_store_changes(tk_store *s, uint64_t *token, tk_error *err)
{
	return s->b->changes ? s->b->changes(s->h, token, err) : 1;
}

int tk_store_top_hangs(tk_store *s, const tk_store_query *q, size_t limit, tk_store_hang **out, size_t *n,
                       tk_error *err)
{
	if (q->kind && !tk_store_kinds_sql(q->kind))
		return tk_error_set(err, "unknown kind '%s' (one of %s)", q->kind, tk_store_diagnostic_kinds());
	*out = NULL;
	*n = 0;
	if (s->b->top_hangs(s->h, q, limit, out, n, err))
		return -1;
	return first_last(s, q, *out, *n, err);
}

int tk_store_top_counts(tk_store *s, const char *kind, const tk_store_query *q, size_t limit, tk_store_hang **out,
                        size_t *n, tk_error *err)
{
	*out = NULL;
	*n = 0;
	tk_store_query k;
	if (kind_query(kind, q, &k, err))
		return -1;
	if (s->b->top_counts)
		return s->b->top_counts(s->h, &k, limit, out, n, err);
	if (s->b->top_hangs(s->h, &k, limit, out, n, err))
		return -1;
	for (size_t i = 0; i < *n; i++) /* the same answer whichever backend gives it */
		(*out)[i].sessions = 0, (*out)[i].p50 = (*out)[i].p95 = 0;
	return 0;
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
		free(h[i].first_version);
		free(h[i].last_version);
	}
	free(h);
}

/* ---- query options ---- */

int tk_store_query_by(tk_store_query *q, const char *spec, tk_error *err)
{
	char *copy = tk_xstrdup(spec);
	for (char *item = strtok(copy, ","); item; item = strtok(NULL, ",")) {
		int k = tk_store_key_index(item);
		if (k < 0 && (strcmp(item, "day") == 0 || strcmp(item, "hour") == 0)) {
			int b = item[0] == 'd' ? TK_STORE_BY_DAY : TK_STORE_BY_HOUR, dup = 0;
			for (size_t i = 0; i < q->nby; i++)
				dup |= q->by[i] == TK_STORE_BY_DAY || q->by[i] == TK_STORE_BY_HOUR;
			if (dup) {
				tk_error_set(err, "--by %s: one time bucket at most (day or hour)", spec);
				free(copy);
				return -1;
			}
			if (q->nby < TK_STORE_NKEYS)
				q->by[q->nby++] = b;
			continue;
		}
		if (k < 0) {
			tk_error_set(err,
			             "--by %s: '%s' is not one of app, version (or app.version), build, device, os, "
			             "session, day, hour",
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
		/* a comma starts the next KEY=VALUE only when a '=' follows before the next comma: a value
		 * may hold commas where none does (device=iPhone12,1) */
		next = strchr(item, ',');
		while (next) {
			char *eqn = strchr(next + 1, '='), *cn = strchr(next + 1, ',');
			if (eqn && (!cn || eqn < cn))
				break;
			next = cn;
		}
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

/* A UTC date "YYYY-MM-DD" or "YYYY-MM-DDTHH[:MM[:SS]]" as Unix seconds; 0 when spec is not one. */
static int utc_date(const char *spec, double *out)
{
	int y, mo, d, h = 0, mi = 0, se = 0, len = 0;
	if (sscanf(spec, "%4d-%2d-%2d%n", &y, &mo, &d, &len) != 3 || len != 10)
		return 0;
	const char *p = spec + len;
	if (*p == 'T') {
		int k = 0;
		if (sscanf(p, "T%2d%n", &h, &k) != 1 || k != 3)
			return 0;
		p += k;
		if (*p == ':' && (sscanf(p, ":%2d%n", &mi, &k) != 1 || k != 3 || !(p += k)))
			return 0;
		if (*p == ':' && (sscanf(p, ":%2d%n", &se, &k) != 1 || k != 3 || !(p += k)))
			return 0;
	}
	if (*p || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59 || h < 0 || mi < 0 ||
	    se < 0)
		return 0;
	/* days from the civil date (proleptic Gregorian), no time zone involved */
	int yy = y - (mo <= 2), era = yy / 400, yoe = yy - era * 400;
	int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1, doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	double days = (double)era * 146097 + doe - 719468;
	*out = days * 86400 + h * 3600 + mi * 60 + se;
	return 1;
}

/* --since / --until: a duration back from now, Unix seconds, or a UTC date. */
static int query_time(const char *opt, const char *spec, double now, double *out, tk_error *err)
{
	char *end;
	double v = strtod(spec, &end);
	double mult = 0;
	if (utc_date(spec, out))
		return 0;
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
			*out = v; /* Unix seconds */
			return 0;
		}
	}
	if (!mult)
		return tk_error_set(
		    err, "%s %s: expected a duration (7d, 12h, 30m, 90s), Unix seconds or a UTC date (2026-11-20)", opt,
		    spec);
	*out = now - v * mult;
	return 0;
}

int tk_store_query_since(tk_store_query *q, const char *spec, double now, tk_error *err)
{
	return query_time("--since", spec, now, &q->since, err);
}

int tk_store_query_until(tk_store_query *q, const char *spec, double now, tk_error *err)
{
	return query_time("--until", spec, now, &q->until, err);
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

/* ---- time buckets, versions ---- */

const char *tk_store_by_name(int by)
{
	if (by == TK_STORE_BY_DAY)
		return "day";
	if (by == TK_STORE_BY_HOUR)
		return "hour";
	return by >= 0 && by < TK_STORE_NKEYS ? tk_store_key_names[by] : "";
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int tk_store_version_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (is_digit(*a) && is_digit(*b)) {
			while (*a == '0' && is_digit(a[1]))
				a++;
			while (*b == '0' && is_digit(b[1]))
				b++;
			size_t la = 0, lb = 0;
			while (is_digit(a[la]))
				la++;
			while (is_digit(b[lb]))
				lb++;
			if (la != lb)
				return la < lb ? -1 : 1;
			int c = memcmp(a, b, la);
			if (c)
				return c < 0 ? -1 : 1;
			a += la, b += lb;
		} else {
			if (*a != *b)
				return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
			a++, b++;
		}
	}
	return *a ? 1 : *b ? -1 : 0;
}

/* ---- one report, one signature ---- */

static int is_hex_id(const char *id)
{
	size_t n = strspn(id, "0123456789abcdef");
	return n == 64 && !id[n];
}

int tk_store_report_get(tk_store *s, const char *id, tk_store_report *out, tk_error *err)
{
	memset(out, 0, sizeof *out);
	if (!is_hex_id(id))
		return tk_error_set(err, "report id '%.80s': expected 64 lowercase hex digits (as top-hangs shows)",
		                    id);
	int rc = s->b->report_get(s->h, id, out, err);
	if (rc == 0 && out->folded) { /* stored prefix-coded (stacks.c) */
		char *text = tk_store_stacks_text(out->folded);
		free(out->folded);
		out->folded = text;
	}
	return rc;
}

void tk_store_report_free(tk_store_report *r)
{
	free(r->kind);
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		free(r->keys[k]);
	free(r->rkey);
	free(r->thread);
	free(r->signature);
	free(r->folded);
	memset(r, 0, sizeof *r);
}

/* The query of a signature's reports: q's filters, kind and signature. */
static int sig_query(const char *kind, const char *signature, const tk_store_query *q, tk_store_query *out,
                     const char **kinds, tk_error *err)
{
	if (!kind || !(*kinds = tk_store_kinds_sql(kind)))
		return tk_error_set(err, "unknown kind '%s' (one of %s)", kind ? kind : "",
		                    tk_store_diagnostic_kinds());
	if (!signature)
		return tk_error_set(err, "no signature given");
	*out = q ? *q : (tk_store_query){0};
	out->kind = strcmp(kind, "hang") == 0 ? NULL : kind;
	out->signature = signature;
	return 0;
}

int tk_store_signature_folded(tk_store *s, const char *kind, const char *signature, const tk_store_query *q,
                              size_t max_reports, char **folded, size_t *n, tk_error *err)
{
	*folded = NULL;
	*n = 0;
	tk_store_query sq;
	const char *kinds;
	if (sig_query(kind, signature, q, &sq, &kinds, err))
		return -1;
	char **texts = NULL;
	uint64_t *times = NULL;
	size_t nt = 0;
	int rc = s->b->sig_stacks(s->h, &sq, kinds, max_reports, &texts, &times, &nt, err);
	for (size_t i = 0; !rc && i < nt; i++) { /* stored prefix-coded (stacks.c) */
		char *text = tk_store_stacks_text(texts[i]);
		free(texts[i]);
		texts[i] = text;
	}
	if (!rc) {
		*folded = tk_store_folded_merge((const char *const *)texts, times, nt);
		*n = strlen(*folded);
	}
	for (size_t i = 0; i < nt; i++)
		free(texts[i]);
	free(texts);
	free(times);
	return rc;
}

static int count_by_value(const void *a, const void *b)
{
	const tk_store_tally *x = a, *y = b;
	return strcmp(x->value, y->value);
}

static int count_by_version(const void *a, const void *b)
{
	const tk_store_tally *x = a, *y = b;
	return tk_store_version_cmp(x->value, y->value);
}

static int count_most_first(const void *a, const void *b)
{
	const tk_store_tally *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->value, y->value);
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int tally_eq(const void *ctx, uint32_t idx, const void *key)
{
	return strcmp(((const tk_store_tally *)ctx)[idx].value, key) == 0;
}

/* Distinct values of the rows' field at offset off, with counts (sorted by value): counted in a
 * hash (a signature's rows are many, its versions, devices and sessions far fewer), then sorted. */
static tk_store_tally *tally(const tk_store_sigrow *r, size_t n, size_t off, size_t *nout)
{
	tk_store_tally *c = tk_xmalloc((n ? n : 1) * sizeof *c);
	tk_hidx idx = {0};
	size_t m = 0;
	const char *prev = NULL;
	uint32_t at = UINT32_MAX;
	for (size_t i = 0; i < n; i++) {
		const char *v = *(char *const *)((const char *)&r[i] + off);
		if (!prev || strcmp(prev, v) != 0) { /* rows of one value often come together */
			uint64_t h = tk_hash_bytes(v, strlen(v), 0);
			at = tk_hidx_find(&idx, h, tally_eq, c, v);
			if (at == UINT32_MAX) {
				c[m] = (tk_store_tally){(char *)v, 0};
				at = (uint32_t)m++;
				tk_hidx_insert(&idx, h, at);
			}
			prev = v;
		}
		c[at].count++;
	}
	tk_hidx_free(&idx);
	qsort(c, m, sizeof *c, count_by_value);
	for (size_t i = 0; i < m; i++)
		c[i].value = tk_xstrdup(c[i].value);
	*nout = m;
	return c;
}

/* What tk_store_signature_detail makes of the tallies (by value) and the sorted durations: versions
 * in release order with the first and last, devices most first, the summary. */
static void detail_finish(tk_store_signature_info *out)
{
	qsort(out->versions, out->nversions, sizeof *out->versions, count_by_version);
	if (out->nversions) {
		out->first_version = tk_xstrdup(out->versions[0].value);
		out->last_version = tk_xstrdup(out->versions[out->nversions - 1].value);
	}
	qsort(out->devices, out->ndevices, sizeof *out->devices, count_most_first);
	if (out->count)
		tk_store_summarise(out->durations, out->count, &out->summary);
	snprintf(out->summary.unit, sizeof out->summary.unit, "s");
}

int tk_store_signature_detail(tk_store *s, const char *kind, const char *signature, const tk_store_query *q,
                              size_t max_examples, tk_store_signature_info *out, tk_error *err)
{
	memset(out, 0, sizeof *out);
	tk_store_query sq;
	const char *kinds;
	if (sig_query(kind, signature, q, &sq, &kinds, err))
		return -1;
	if (s->b->sig_detail) { /* from the backend's summaries, where they cover q */
		int k = s->b->sig_detail(s->h, &sq, kinds, max_examples, out, err);
		if (k < 0) {
			tk_store_signature_info_free(out);
			return -1;
		}
		if (k == 0) {
			detail_finish(out);
			return 0;
		}
		tk_store_signature_info_free(out);
	}
	tk_store_sigrow *r = NULL;
	size_t n = 0;
	int rc = s->b->sig_rows(s->h, &sq, kinds, &r, &n, err);
	if (!rc) {
		out->count = n;
		out->versions = tally(r, n, offsetof(tk_store_sigrow, version), &out->nversions);
		out->devices = tally(r, n, offsetof(tk_store_sigrow, device), &out->ndevices);
		size_t ns;
		tk_store_tally *sessions = tally(r, n, offsetof(tk_store_sigrow, session), &ns);
		out->sessions = ns;
		for (size_t i = 0; i < ns; i++)
			free(sessions[i].value);
		free(sessions);
		out->durations = tk_xmalloc((n ? n : 1) * sizeof *out->durations);
		for (size_t i = 0; i < n; i++)
			out->durations[i] = r[i].duration;
		size_t u = 1; /* mostly in order already (SQLite reads them from reports_sig) */
		while (u < n && !(out->durations[u] < out->durations[u - 1]))
			u++;
		if (u < n)
			qsort(out->durations, n, sizeof *out->durations, dbl_cmp);
		detail_finish(out);
		out->nexamples = n < max_examples ? n : max_examples;
		out->examples = tk_xmalloc((out->nexamples ? out->nexamples : 1) * sizeof *out->examples);
		/* the nexamples smallest ids, ascending: kept sorted while the rows go by (rows come in
		 * any order; a signature has many, the page shows ten) */
		size_t k = out->nexamples, have = 0;
		char **ids = tk_xmalloc((k ? k : 1) * sizeof *ids);
		for (size_t i = 0; k && i < n; i++) {
			if (have == k && strcmp(r[i].id, ids[k - 1]) >= 0)
				continue;
			size_t j = have < k ? have++ : k - 1;
			while (j > 0 && strcmp(ids[j - 1], r[i].id) > 0) {
				ids[j] = ids[j - 1];
				j--;
			}
			ids[j] = r[i].id;
		}
		for (size_t i = 0; i < out->nexamples; i++)
			out->examples[i] = tk_xstrdup(ids[i]);
		free(ids);
	}
	for (size_t i = 0; i < n; i++) {
		free(r[i].id);
		free(r[i].version);
		free(r[i].device);
		free(r[i].session);
	}
	free(r);
	if (rc)
		tk_store_signature_info_free(out);
	return rc;
}

typedef struct sigdur_acc {
	tk_store_sigdur *out;
	size_t *cap;
} sigdur_acc;

static int sigdur_row(void *ctx, size_t i, double v, uint64_t count)
{
	sigdur_acc *a = ctx;
	tk_store_sigdur *d = &a->out[i];
	if (count > SIZE_MAX / 2 - d->count)
		return -1;
	TK_GROW(d->durations, a->cap[i], d->count + (size_t)count);
	for (uint64_t k = 0; k < count; k++)
		d->durations[d->count++] = v;
	return 0;
}

/* sigs_values_bulk's rows: nv values ascending, malloc'd, ours (a signature's first taken as they are) */
static int sigdur_rows(void *ctx, size_t i, double *v, size_t nv)
{
	sigdur_acc *a = ctx;
	tk_store_sigdur *d = &a->out[i];
	if (nv && !d->durations) {
		d->durations = v, d->count = a->cap[i] = nv;
		return 0;
	}
	int rc = nv > SIZE_MAX / 2 / sizeof *v - d->count ? -1 : 0;
	if (nv && !rc) {
		TK_GROW(d->durations, a->cap[i], d->count + nv);
		memcpy(d->durations + d->count, v, nv * sizeof *v);
		d->count += nv;
	}
	free(v);
	return rc;
}

int tk_store_signatures_durations(tk_store *s, const char *kind, const tk_store_query *q, char *const *sigs, size_t n,
                                  tk_store_sigdur *out, tk_error *err)
{
	memset(out, 0, n * sizeof *out);
	tk_store_query sq;
	const char *kinds;
	if (!n)
		return 0;
	if (sig_query(kind, sigs[0], q, &sq, &kinds, err))
		return -1;
	int rc = 0;
	if (s->b->sigs_values) {
		sq.signature = NULL;
		size_t *cap = tk_xcalloc(n, sizeof *cap);
		sigdur_acc a = {out, cap};
		rc = s->b->sigs_values_bulk ? s->b->sigs_values_bulk(s->h, &sq, kinds, sigs, n, sigdur_rows, &a, err)
		                            : 1;
		if (rc == 1)
			rc = s->b->sigs_values(s->h, &sq, kinds, sigs, n, sigdur_row, &a, err);
		free(cap);
	} else { /* the existing per-signature call, once each */
		for (size_t i = 0; i < n && !rc; i++) {
			tk_store_sigrow *r = NULL;
			size_t nr = 0;
			sq.signature = sigs[i];
			rc = s->b->sig_rows(s->h, &sq, kinds, &r, &nr, err);
			if (!rc) {
				out[i].durations = tk_xmalloc((nr ? nr : 1) * sizeof *out[i].durations);
				out[i].count = nr;
			}
			for (size_t k = 0; k < nr; k++) {
				if (!rc)
					out[i].durations[k] = r[k].duration;
				free(r[k].id), free(r[k].version), free(r[k].device), free(r[k].session);
			}
			free(r);
		}
	}
	for (size_t i = 0; i < n && !rc; i++) {
		tk_store_sigdur *d = &out[i];
		if (!d->durations)
			d->durations = tk_xmalloc(sizeof *d->durations);
		size_t u = 1;
		while (u < d->count && !(d->durations[u] < d->durations[u - 1]))
			u++;
		if (u < d->count)
			qsort(d->durations, d->count, sizeof *d->durations, dbl_cmp);
		if (d->count)
			tk_store_summarise(d->durations, d->count, &d->summary);
		snprintf(d->summary.unit, sizeof d->summary.unit, "s");
	}
	if (rc) {
		tk_store_sigdurs_free(out, n);
		memset(out, 0, n * sizeof *out);
	}
	return rc;
}

void tk_store_sigdurs_free(tk_store_sigdur *d, size_t n)
{
	for (size_t i = 0; d && i < n; i++)
		free(d[i].durations);
}

void tk_store_signature_info_free(tk_store_signature_info *i)
{
	free(i->first_version);
	free(i->last_version);
	for (size_t k = 0; k < i->nversions; k++)
		free(i->versions[k].value);
	free(i->versions);
	for (size_t k = 0; k < i->ndevices; k++)
		free(i->devices[k].value);
	free(i->devices);
	free(i->durations);
	for (size_t k = 0; k < i->nexamples; k++)
		free(i->examples[k]);
	free(i->examples);
	memset(i, 0, sizeof *i);
}

/* ---- a metric's distribution ---- */

static int dist_cmp(const void *a, const void *b)
{
	const tk_store_dist *x = a, *y = b;
	return tk_store_version_cmp(x->keys[0] ? x->keys[0] : "", y->keys[0] ? y->keys[0] : "");
}

/* The groups being collected: one per version (or one), values appended. */
typedef struct dist_acc {
	tk_store_dist *d;
	size_t n, cap, *vcap, ccap;
	int by_version;
	double lo, hi;
} dist_acc;

/* The group of version's values (made where there is none yet). */
static size_t dist_group(dist_acc *a, const char *version)
{
	const char *key = a->by_version ? version : NULL;
	size_t g = a->n ? a->n - 1 : 0; /* rows come by version: the last group first */
	if (a->n && key && strcmp(a->d[g].keys[0], key) != 0)
		for (g = 0; g < a->n && strcmp(a->d[g].keys[0], key) != 0; g++)
			;
	if (g == a->n) {
		TK_GROW(a->d, a->cap, a->n + 1);
		TK_GROW(a->vcap, a->ccap, a->n + 1);
		memset(&a->d[a->n], 0, sizeof a->d[a->n]);
		a->vcap[a->n] = 0;
		if (key)
			a->d[a->n].keys[0] = tk_xstrdup(key);
		a->n++;
	}
	return g;
}

static int dist_row(void *ctx, const char *version, double v)
{
	dist_acc *a = ctx;
	size_t g = dist_group(a, version);
	TK_GROW(a->d[g].values, a->vcap[g], a->d[g].n + 1);
	a->d[g].values[a->d[g].n++] = v;
	a->lo = v < a->lo ? v : a->lo;
	a->hi = v > a->hi ? v : a->hi;
	return 0;
}

/* values_bulk's rows: n values ascending, malloc'd, ours (a group's first taken as they are) */
static int dist_rows(void *ctx, const char *version, double *v, size_t n)
{
	dist_acc *a = ctx;
	if (!n) {
		free(v);
		return 0;
	}
	size_t g = dist_group(a, version);
	a->lo = v[0] < a->lo ? v[0] : a->lo;
	a->hi = v[n - 1] > a->hi ? v[n - 1] : a->hi;
	if (!a->d[g].values) {
		a->d[g].values = v, a->d[g].n = a->vcap[g] = n;
		return 0;
	}
	int rc = n > SIZE_MAX / 2 / sizeof *v - a->d[g].n ? -1 : 0;
	if (!rc) {
		TK_GROW(a->d[g].values, a->vcap[g], a->d[g].n + n);
		memcpy(a->d[g].values + a->d[g].n, v, n * sizeof *v);
		a->d[g].n += n;
	}
	free(v);
	return rc;
}

int tk_store_distribution(tk_store *s, const tk_store_query *q, size_t nbins, tk_store_dist **out, size_t *n,
                          double **edges, tk_error *err)
{
	*out = NULL, *n = 0, *edges = NULL;
	const tk_store_metric *m = q->metric ? tk_store_metric_find(q->metric) : NULL;
	if (!m || m->profile || strcmp(m->column, "duration") != 0 || strcmp(m->name, "hang.rate") == 0)
		return tk_error_set(err, "a histogram is drawn of hang.duration or cpu.duration, not %s",
		                    q->metric ? q->metric : "(none)");
	if (q->nby > 1 || (q->nby == 1 && q->by[0] != TK_STORE_VERSION))
		return tk_error_set(err, "a histogram is split by version or not at all"), -1;
	if (nbins < 1 || nbins > 1000)
		return tk_error_set(err, "a histogram has 1 to 1000 bins"), -1;
	dist_acc a = {.by_version = q->nby == 1, .lo = INFINITY, .hi = -INFINITY};
	int rc =
	    s->b->values_bulk ? s->b->values_bulk(s->h, q, m->kinds, m->column, a.by_version, dist_rows, &a, err) : 1;
	if (rc == 1 && s->b->values) {
		rc = s->b->values(s->h, q, m->kinds, m->column, a.by_version, dist_row, &a, err);
	} else if (rc == 1) { /* every row of the reports (sig_rows), then grouped */
		tk_store_sigrow *r = NULL;
		size_t nr = 0;
		rc = s->b->sig_rows(s->h, q, m->kinds, &r, &nr, err);
		for (size_t i = 0; i < nr; i++) {
			if (!rc)
				dist_row(&a, r[i].version, r[i].duration);
			free(r[i].id), free(r[i].version), free(r[i].device), free(r[i].session);
		}
		free(r);
	}
	free(a.vcap);
	tk_store_dist *d = a.d;
	size_t nd = a.n;
	if (rc) {
		tk_store_dists_free(d, nd, NULL);
		return -1;
	}
	double lo = a.lo, hi = a.hi;
	if (nd > 1)
		qsort(d, nd, sizeof *d, dist_cmp);
	double *e = tk_xmalloc((nbins + 1) * sizeof *e);
	int lg = nd && lo > 0 && hi / lo >= 10;
	if (nd && !(hi > lo)) /* one value: a bin of width 1 around it */
		lo -= 0.5, hi += 0.5;
	for (size_t i = 0; i <= nbins; i++)
		e[i] = !nd  ? 0
		       : lg ? lo * pow(hi / lo, (double)i / (double)nbins)
		            : lo + (hi - lo) * (double)i / (double)nbins;
	if (nd)
		e[0] = lo, e[nbins] = hi; /* exactly, so no value falls outside */
	for (size_t g = 0; g < nd; g++) {
		tk_store_dist *x = &d[g];
		if (!s->b->values) /* the backend's rows come sorted */
			qsort(x->values, x->n, sizeof *x->values, dbl_cmp);
		x->min = x->values[0], x->max = x->values[x->n - 1];
		x->p5 = tk_quantile7(x->values, x->n, 5, 100);
		x->p25 = tk_quantile7(x->values, x->n, 25, 100);
		x->p50 = tk_quantile7(x->values, x->n, 50, 100);
		x->p75 = tk_quantile7(x->values, x->n, 75, 100);
		x->p95 = tk_quantile7(x->values, x->n, 95, 100);
		x->counts = tk_xcalloc(nbins, sizeof *x->counts);
		size_t b = 0;
		for (size_t i = 0; i < x->n; i++) { /* values ascending: the bin only moves up */
			while (b + 1 < nbins && x->values[i] >= e[b + 1])
				b++;
			x->counts[b]++;
		}
	}
	*out = d, *n = nd, *edges = e;
	return 0;
}

void tk_store_dists_free(tk_store_dist *d, size_t n, double *edges)
{
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			free(d[i].keys[k]);
		free(d[i].values);
		free(d[i].counts);
	}
	free(d);
	free(edges);
}

/* ---- overview ---- */

static int keys_cmp(char *const *a, char *const *b, size_t nby)
{
	for (size_t i = 0; i < nby; i++) {
		int c = strcmp(a[i], b[i]);
		if (c)
			return c;
	}
	return 0;
}

int tk_store_overview_get(tk_store *s, const tk_store_query *q, tk_store_overview **out, size_t *n, tk_error *err)
{
	*out = NULL;
	*n = 0;
	tk_store_overview *rows = NULL;
	size_t nr = 0;
	if (s->b->overview(s->h, q, &rows, &nr, err)) {
		tk_store_overview_free(rows, nr);
		return -1;
	}
	/* the rows come sorted by keys: per (group, kind) first, then per group with its sessions */
	size_t split = 0;
	while (split < nr && rows[split].kinds)
		split++;
	size_t cap = 0;
	for (size_t i = 0; i < split; i++) { /* sorted by keys: a group's kinds are adjacent */
		tk_store_overview *r = &rows[i];
		if (!*n || keys_cmp((*out)[*n - 1].keys, r->keys, q->nby) != 0) {
			TK_GROW(*out, cap, *n + 1);
			tk_store_overview *g = &(*out)[(*n)++];
			memset(g, 0, sizeof *g);
			for (size_t k = 0; k < q->nby; k++)
				g->keys[k] = tk_xstrdup(r->keys[k]);
		}
		tk_store_overview *g = &(*out)[*n - 1];
		g->kinds = tk_xrealloc(g->kinds, (g->nkinds + 1) * sizeof *g->kinds);
		g->kinds[g->nkinds++] = (tk_store_tally){tk_xstrdup(r->kinds[0].value), r->kinds[0].count};
		g->reports += r->kinds[0].count;
	}
	size_t j = 0; /* the sessions rows: the same groups in the same order */
	for (size_t i = split; i < nr; i++) {
		while (j < *n && keys_cmp((*out)[j].keys, rows[i].keys, q->nby) < 0)
			j++;
		if (j < *n && keys_cmp((*out)[j].keys, rows[i].keys, q->nby) == 0)
			(*out)[j].sessions = rows[i].sessions;
	}
	tk_store_overview_free(rows, nr);
	return 0;
}

void tk_store_overview_free(tk_store_overview *o, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			free(o[i].keys[k]);
		for (size_t k = 0; k < o[i].nkinds; k++)
			free(o[i].kinds[k].value);
		free(o[i].kinds);
	}
	free(o);
}
