/* The fleet dashboard (tracekit/dashboard.h): pages, pictures and the JSON API over a store.
 *
 * Each request builds its answer in memory (open_memstream). Stored strings reach the output only
 * through esc() (HTML text and attributes: tk_xml_fput), url() (query arguments in links) or
 * tk_json_fput (JSON); pictures are the library's SVG writers, which escape their own text. */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "tracekit/calltree.h"
#include "tracekit/dashboard.h"
#include "tracekit/read.h"
#include "tracekit/stats.h"
#include "tracekit/write.h"
#include "store/internal.h"
#include "util/mem.h"
#include "util/text.h"

extern const char tk_dashboard_css[], tk_dashboard_js[], tk_dashboard_icon[];

/* No inline script or style anywhere: the page's own files only. */
static const char csp_html[] = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
/* The SVG writers style their pictures with an inline <style>; their scripts never run here. */
static const char csp_svg[] = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; script-src 'none'; "
                              "frame-ancestors 'self'";
static const char csp_none[] = "default-src 'none'; frame-ancestors 'none'";

/* The filters every page takes (tk_store key names) and the page arguments links keep. */
static const int filter_keys[] = {TK_STORE_APP, TK_STORE_VERSION, TK_STORE_BUILD, TK_STORE_DEVICE, TK_STORE_OS};
#define NFILTERS (sizeof filter_keys / sizeof filter_keys[0])
/* The kinds the pages list (tk_store_top_diagnostics) and the metric each one's durations are. */
static const char *const kinds[] = {"hang", "cpu", "disk", "crash", "launch"};
/* The best/worst marks compare versions with at least this many hangs. */
#define TK_DASH_MIN_HANGS 10
#define TK_DASH_MIN_HANGS_S "10"

typedef struct req {
	tk_store *s;
	const tk_dashboard_options *o;
	tk_dashboard_arg_fn arg;
	void *actx;
	FILE *f;
	tk_store_query q; /* the filters (where, since, until) */
	const char *since, *until;
	tk_error err;
	/* the arguments the answer read, by name (its cache key with the path) */
	const char *seen[32];
	size_t nseen;
	int uncachable; /* read more arguments than seen holds */
} req;

/* An argument as given (NULL when absent, maybe empty), noted in r->seen. */
static const char *arg_raw(req *r, const char *name)
{
	const char *v = r->arg ? r->arg(r->actx, name) : NULL;
	size_t i = 0;
	while (i < r->nseen && strcmp(r->seen[i], name) != 0)
		i++;
	if (i == r->nseen) {
		if (r->nseen < sizeof r->seen / sizeof r->seen[0])
			r->seen[r->nseen++] = name;
		else
			r->uncachable = 1;
	}
	return v;
}

/* An argument, NULL when absent or empty. */
static const char *arg(req *r, const char *name)
{
	const char *v = arg_raw(r, name);
	return v && *v ? v : NULL;
}

static void esc(FILE *f, const char *s)
{
	tk_xml_fput(f, s ? s : "", SIZE_MAX);
}

/* A query argument's value: everything but unreserved characters percent-encoded (then safe in an
 * HTML attribute too). */
static void url(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
		if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.' || *p == '~')
			fputc(*p, f);
		else
			fprintf(f, "%%%02X", *p);
}

/* The filters as query arguments ("&app=…&since=…"), for links that keep the view's state. */
static void filters_qs(req *r, FILE *f)
{
	for (size_t i = 0; i < NFILTERS; i++)
		if (r->q.where[filter_keys[i]]) {
			fprintf(f, "&amp;%s=", tk_store_key_names[filter_keys[i]]);
			url(f, r->q.where[filter_keys[i]]);
		}
	if (r->since) {
		fputs("&amp;since=", f);
		url(f, r->since);
	}
	if (r->until) {
		fputs("&amp;until=", f);
		url(f, r->until);
	}
}

/* The filters as hidden fields of a form that picks something else (skip: a key the form sets
 * itself, or -1), so submitting it keeps the view's filters. */
static void filters_hidden(req *r, FILE *f, int skip)
{
	for (size_t i = 0; i < NFILTERS; i++)
		if (filter_keys[i] != skip && r->q.where[filter_keys[i]]) {
			fprintf(f, "<input type=\"hidden\" name=\"%s\" value=\"", tk_store_key_names[filter_keys[i]]);
			esc(f, r->q.where[filter_keys[i]]);
			fputs("\">", f);
		}
	const char *const tn[] = {"since", "until"}, *tv[] = {r->since, r->until};
	for (int i = 0; i < 2; i++)
		if (tv[i]) {
			fprintf(f, "<input type=\"hidden\" name=\"%s\" value=\"", tn[i]);
			esc(f, tv[i]);
			fputs("\">", f);
		}
}

static void num(FILE *f, double v, const char *unit)
{
	if (isnan(v))
		fputs("—", f);
	else
		fprintf(f, "%.3f%s%s", v, unit && *unit ? " " : "", unit ? unit : "");
}

/* A table cell whose number a test (or a person copying it) can read exactly: data-v holds every
 * bit (the JSON form), the text is rounded for people. */
static void cell(FILE *f, const char *key, double v, const char *unit)
{
	char buf[32];
	fprintf(f, "<td class=\"num\" data-k=\"%s\" data-v=\"%s\">", key, tk_stats_fmt_double(v, buf));
	num(f, v, unit);
	fputs("</td>", f);
}

static void cell_count(FILE *f, const char *key, uint64_t n)
{
	fprintf(f, "<td class=\"num\" data-k=\"%s\" data-v=\"%llu\">%llu</td>", key, (unsigned long long)n,
	        (unsigned long long)n);
}

static int vercmp_p(const void *a, const void *b)
{
	return tk_store_version_cmp(*(char *const *)a, *(char *const *)b);
}

/* ---- page frame ---- */

static const char *const nav[][2] = {{"/", "Overview"},       {"/trends", "Trends"},     {"/stacks", "Top stacks"},
                                     {"/compare", "Compare"}, {"/rules", "Alert rules"}, {"/api/", "API"}};

static void page_begin(req *r, const char *title, const char *path, const char *const *keep, size_t nkeep)
{
	FILE *f = r->f;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta name=\"viewport\" content=\"width=device-width\"><title>",
	      f);
	esc(f, title);
	fputs(" — tracekit</title><link rel=\"icon\" href=\"/static/icon.svg\"><link rel=\"stylesheet\" "
	      "href=\"/static/dashboard.css\">"
	      "<script src=\"/static/dashboard.js\" defer></script></head><body>\n<header><span "
	      "class=\"brand\">tracekit</span><nav>",
	      f);
	for (size_t i = 0; i < sizeof nav / sizeof nav[0]; i++) {
		fprintf(f, "<a href=\"%s?", nav[i][0]);
		filters_qs(r, f);
		fprintf(f, "\"%s>%s</a>", strcmp(path, nav[i][0]) == 0 ? " class=\"on\"" : "", nav[i][1]);
	}
	fputs("</nav></header>\n<form class=\"filters\" method=\"get\" action=\"", f);
	esc(f, path);
	fputs("\">", f);
	for (size_t i = 0; i < NFILTERS; i++) {
		const char *k = tk_store_key_names[filter_keys[i]];
		fprintf(f, "<label>%s <input name=\"%s\" value=\"", k, k);
		esc(f, r->q.where[filter_keys[i]]);
		fputs("\" placeholder=\"all\"></label>", f);
	}
	fputs("<label>since <input name=\"since\" value=\"", f);
	esc(f, r->since);
	fputs("\" placeholder=\"7d or YYYY-MM-DD\" title=\"reports from this date (UTC) or this long ago; empty: from "
	      "the first report\"></label><label>until <input name=\"until\" value=\"",
	      f);
	esc(f, r->until);
	fputs("\" placeholder=\"1d or YYYY-MM-DD\" title=\"reports before this date (UTC) or this long ago; empty: up "
	      "to now\"></label>",
	      f);
	for (size_t i = 0; i < nkeep; i++)
		if (arg(r, keep[i])) {
			fprintf(f, "<input type=\"hidden\" name=\"%s\" value=\"", keep[i]);
			esc(f, arg(r, keep[i]));
			fputs("\">", f);
		}
	fputs("<button type=\"submit\">Apply</button><a class=\"clear\" href=\"", f);
	esc(f, path);
	fputs("\">clear</a></form>\n<main>\n<h1>", f);
	esc(f, title);
	fputs("</h1>\n", f);
}

static void page_end(req *r)
{
	fputs("</main>\n<footer>tracekit fleet dashboard · read-only · <a href=\"/api/\">JSON "
	      "API</a></footer>\n</body></html>\n",
	      r->f);
}

/* A stack signature as people read it: its frames, leaf first, one per line. */
static void signature_html(FILE *f, const char *sig)
{
	if (!sig || !*sig) {
		fputs("<span class=\"none\">(no stack)</span>", f);
		return;
	}
	fputs("<span class=\"sig\">", f);
	const char *p = sig;
	for (int first = 1;; first = 0) {
		const char *e = strchr(p, ';');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char *frame = strndup(p, n);
		fprintf(f, "<span class=\"%s\">", first ? "leaf" : "fr");
		esc(f, frame);
		fputs("</span>", f);
		free(frame);
		if (!e)
			break;
		p = e + 1;
	}
	fputs("</span>", f);
}

/* ---- queries ---- */

static int percentiles(req *r, const char *metric, const int *by, size_t nby, tk_store_group **g, size_t *n)
{
	tk_store_query q = r->q;
	q.metric = metric;
	q.nby = nby;
	for (size_t i = 0; i < nby; i++)
		q.by[i] = by[i];
	return tk_store_percentiles(r->s, &q, g, n, &r->err);
}

static int top(req *r, const char *kind, const tk_store_query *q, size_t limit, tk_store_hang **h, size_t *n)
{
	if (strcmp(kind, "hang") == 0)
		return tk_store_top_hangs(r->s, q, limit, h, n, &r->err);
	return tk_store_top_diagnostics(r->s, kind, q, limit, h, n, &r->err);
}

static const char *kind_arg(req *r)
{
	const char *k = arg(r, "kind");
	for (size_t i = 0; k && i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(k, kinds[i]) == 0)
			return kinds[i];
	return k ? NULL : "hang";
}

/* The distinct values of key among the reports of the filters (hangs and CPU periods), sorted
 * naturally; *n of them, each malloc'd. */
static char **values_of(req *r, int key, size_t *n)
{
	*n = 0;
	char **v = NULL;
	size_t cap = 0;
	static const char *const metrics[] = {"hang.duration", "cpu.duration"};
	for (size_t m = 0; m < 2; m++) {
		tk_store_group *g = NULL;
		size_t ng = 0;
		if (percentiles(r, metrics[m], &key, 1, &g, &ng))
			continue;
		for (size_t i = 0; i < ng; i++) {
			size_t j = 0;
			while (j < *n && strcmp(v[j], g[i].keys[0]) != 0)
				j++;
			if (j < *n)
				continue;
			if (*n == cap)
				v = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof *v);
			v[(*n)++] = strdup(g[i].keys[0]);
		}
		tk_store_groups_free(g, ng);
	}
	if (*n)
		qsort(v, *n, sizeof *v, vercmp_p);
	return v;
}

static void free_values(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static unsigned fail(req *r, tk_dashboard_response *out, unsigned status, const char *msg);

/* ---- Overview ---- */

typedef struct row {
	const char *app, *version;
	tk_store_group *hang, *cpu, *rate;
	tk_store_overview *ov;
	int mark; /* 1 best, -1 worst */
} row;

static row *row_of(row **rows, size_t *n, size_t *cap, const char *app, const char *version)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*rows)[i].app, app) == 0 && strcmp((*rows)[i].version, version) == 0)
			return &(*rows)[i];
	if (*n == *cap)
		*rows = realloc(*rows, (*cap = *cap ? *cap * 2 : 16) * sizeof **rows);
	row *w = &(*rows)[(*n)++];
	memset(w, 0, sizeof *w);
	w->app = app, w->version = version;
	return w;
}

static int row_cmp(const void *a, const void *b)
{
	const row *x = a, *y = b;
	int c = strcmp(x->app, y->app);
	return c ? c : tk_store_version_cmp(x->version, y->version);
}

/* Reports of the stored kinds that make a dashboard kind (tk_store_top_diagnostics' groups). */
static uint64_t kind_count(const tk_store_overview *o, const char *kind)
{
	static const char *const stored[][3] = {{"hang", "anr", NULL},
	                                        {"cpu-highload", "cpu-exception", NULL},
	                                        {"disk", "disk-write", NULL},
	                                        {"crash", NULL, NULL},
	                                        {"launch", NULL, NULL}};
	size_t k = 0;
	while (k < sizeof kinds / sizeof kinds[0] && strcmp(kinds[k], kind) != 0)
		k++;
	uint64_t n = 0;
	for (size_t i = 0; o && k < sizeof kinds / sizeof kinds[0] && i < o->nkinds; i++)
		for (int j = 0; j < 3 && stored[k][j]; j++)
			if (strcmp(o->kinds[i].value, stored[k][j]) == 0)
				n += o->kinds[i].count;
	return n;
}

/* The alert rules' breaches under the page's filters, as a table (nothing when no rules). */
static int breaches(req *r, int only_summary)
{
	FILE *f = r->f;
	const tk_alert_rules *ru = r->o ? r->o->rules : NULL;
	if (!ru || !ru->n)
		return 0;
	tk_alert_breach *b = NULL;
	size_t n = 0;
	if (tk_alert_eval(r->s, ru, &r->q, r->o->now, &b, &n, &r->err))
		return -1;
	fprintf(f,
	        "<h2>Alerts</h2>\n<p class=\"lead\">%zu rule%s, <span class=\"tag %s\" id=\"breach-count\" "
	        "data-v=\"%zu\">%zu "
	        "breach%s</span> under these filters.</p>\n",
	        ru->n, ru->n == 1 ? "" : "s", n ? "bad" : "good", n, n, n == 1 ? "" : "es");
	if (only_summary) {
		fputs("<p><a href=\"/rules?", f);
		filters_qs(r, f);
		fputs("\">The rules and their breaches</a></p>\n", f);
	}
	if (n && !only_summary) {
		fputs("<table id=\"breaches\"><thead><tr><th>rule</th><th>group</th><th>value</th><th>reports</th></tr>"
		      "</thead><tbody>\n",
		      f);
		for (size_t i = 0; i < n; i++) {
			const tk_alert_rule *rule = &ru->v[b[i].rule];
			fputs("<tr><td><code>", f);
			esc(f, rule->text);
			fputs("</code></td><td class=\"group\">", f);
			for (size_t k = 0; k < rule->nby; k++) {
				fprintf(f, "%s<span class=\"key\">%s</span>=", k ? ", " : "",
				        tk_store_by_name(rule->by[k]));
				esc(f, b[i].keys[k]);
			}
			if (!rule->nby)
				fputs("all", f);
			fputs("</td>", f);
			cell(f, "value", b[i].value, "");
			cell_count(f, "count", b[i].count);
			fputs("</tr>\n", f);
		}
		fputs("</tbody></table>\n", f);
	}
	tk_alert_breaches_free(b, n);
	return 0;
}

static int overview(req *r)
{
	FILE *f = r->f;
	const int av[] = {TK_STORE_APP, TK_STORE_VERSION};
	tk_store_group *gh = NULL, *gc = NULL, *gr = NULL;
	tk_store_overview *go = NULL;
	size_t nh = 0, nc = 0, nr = 0, no = 0;
	row *rows = NULL;
	size_t n = 0, cap = 0;
	int rc = -1;
	tk_store_query qo = r->q;
	qo.nby = 2, qo.by[0] = TK_STORE_APP, qo.by[1] = TK_STORE_VERSION;
	if (percentiles(r, "hang.duration", av, 2, &gh, &nh) || percentiles(r, "cpu.duration", av, 2, &gc, &nc) ||
	    percentiles(r, "hang.rate", av, 2, &gr, &nr) || tk_store_overview_get(r->s, &qo, &go, &no, &r->err))
		goto out;
	for (size_t i = 0; i < no; i++)
		row_of(&rows, &n, &cap, go[i].keys[0], go[i].keys[1])->ov = &go[i];
	for (size_t i = 0; i < nh; i++)
		row_of(&rows, &n, &cap, gh[i].keys[0], gh[i].keys[1])->hang = &gh[i];
	for (size_t i = 0; i < nc; i++)
		row_of(&rows, &n, &cap, gc[i].keys[0], gc[i].keys[1])->cpu = &gc[i];
	for (size_t i = 0; i < nr; i++)
		row_of(&rows, &n, &cap, gr[i].keys[0], gr[i].keys[1])->rate = &gr[i];
	if (n)
		qsort(rows, n, sizeof *rows, row_cmp);
	/* best and worst version of each app with two or more of at least TK_DASH_MIN_HANGS hangs:
	 * lowest and highest P95 hang duration (a version with a handful of hangs proves nothing) */
	for (size_t i = 0; i < n;) {
		size_t j = i, best = SIZE_MAX, worst = SIZE_MAX;
		for (; j < n && strcmp(rows[j].app, rows[i].app) == 0; j++) {
			if (!rows[j].hang || rows[j].hang->count < TK_DASH_MIN_HANGS)
				continue;
			if (best == SIZE_MAX || rows[j].hang->q[2] < rows[best].hang->q[2])
				best = j;
			if (worst == SIZE_MAX || rows[j].hang->q[2] > rows[worst].hang->q[2])
				worst = j;
		}
		if (best != SIZE_MAX && best != worst)
			rows[best].mark = 1, rows[worst].mark = -1;
		i = j;
	}
	fputs("<p class=\"lead\">Per app and version: sessions that sent reports, Apple's hang rate (seconds of "
	      "hangs of 250 ms or more per hour in the foreground, pooled over the sessions), exact hang-duration "
	      "percentiles, CPU high-load periods and other diagnostics. The best and worst version (lowest and "
	      "highest P95 hang duration, of versions with " TK_DASH_MIN_HANGS_S " hangs or more) are marked.</p>\n",
	      f);
	if (breaches(r, 1))
		goto out;
	if (!n) {
		fputs("<p class=\"empty\">No reports match these filters.</p>\n", f);
		rc = 0;
		goto out;
	}
	fputs("<table id=\"overview\"><thead><tr><th>app</th><th>version</th><th>sessions</th><th>hang rate</th>"
	      "<th>hangs</th><th>P50</th><th>P90</th><th>P95</th><th>P99</th><th>CPU high-load</th><th>CPU P50</th>"
	      "<th>CPU P95</th><th>disk</th><th>crash</th><th>launch</th><th></th></tr></thead><tbody>\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		row *w = &rows[i];
		fputs("<tr data-app=\"", f);
		esc(f, w->app);
		fputs("\" data-version=\"", f);
		esc(f, w->version);
		fprintf(f, "\"%s><td>", w->mark > 0 ? " class=\"best\"" : w->mark < 0 ? " class=\"worst\"" : "");
		esc(f, w->app);
		fputs("</td><td><a href=\"/stacks?kind=hang&amp;app=", f);
		url(f, w->app);
		fputs("&amp;version=", f);
		url(f, w->version);
		{ /* the other filters stay */
			tk_store_query keep = r->q;
			r->q.where[TK_STORE_APP] = r->q.where[TK_STORE_VERSION] = NULL;
			filters_qs(r, f);
			r->q = keep;
		}
		fputs("\">", f);
		esc(f, w->version);
		fputs("</a></td>", f);
		cell_count(f, "sessions", w->ov ? w->ov->sessions : 0);
		cell(f, "rate", w->rate ? w->rate->mean : NAN, "s/h");
		cell_count(f, "hangs", w->hang ? w->hang->count : 0);
		static const char *const pk[] = {"p50", "p90", "p95", "p99"};
		for (int k = 0; k < 4; k++)
			cell(f, pk[k], w->hang ? w->hang->q[k] : NAN, "s");
		cell_count(f, "cpu", w->cpu ? w->cpu->count : 0);
		cell(f, "cpu_p50", w->cpu ? w->cpu->q[0] : NAN, "s");
		cell(f, "cpu_p95", w->cpu ? w->cpu->q[2] : NAN, "s");
		for (size_t k = 2; k < sizeof kinds / sizeof kinds[0]; k++)
			cell_count(f, kinds[k], kind_count(w->ov, kinds[k]));
		fprintf(f, "<td class=\"mark\">%s</td></tr>\n",
		        w->mark > 0   ? "<span class=\"tag good\">best</span>"
		        : w->mark < 0 ? "<span class=\"tag bad\">worst</span>"
		                      : "");
	}
	fputs("</tbody></table>\n", f);
	rc = 0;
out:
	free(rows);
	tk_store_groups_free(gh, nh);
	tk_store_groups_free(gc, nc);
	tk_store_groups_free(gr, nr);
	tk_store_overview_free(go, no);
	return rc;
}

/* ---- Top stacks ---- */

/* For each of the n signatures, the first and last version it was seen in, in any version at any
 * time under the other filters (so a version filter still shows what is new in that version). */
static int first_last(req *r, const char *kind, const tk_store_hang *h, size_t n, char **first, char **last)
{
	tk_store_query q = r->q;
	q.where[TK_STORE_VERSION] = NULL;
	q.since = 0, q.until = 0;
	char **sigs = calloc(n + 1, sizeof *sigs);
	for (size_t i = 0; i < n; i++)
		sigs[i] = h[i].signature;
	int rc = tk_store_sig_first_last(r->s, &q, kind, sigs, n, first, last, &r->err);
	free(sigs);
	return rc;
}

static void kind_tabs(req *r, const char *path, const char *kind)
{
	FILE *f = r->f;
	fputs("<p class=\"tabs\">", f);
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		fprintf(f, "<a href=\"%s?kind=%s", path, kinds[i]);
		filters_qs(r, f);
		fprintf(f, "\"%s>%s</a>", strcmp(kind, kinds[i]) == 0 ? " class=\"on\"" : "", kinds[i]);
	}
	fputs("</p>\n", f);
}

static int stacks(req *r)
{
	FILE *f = r->f;
	const char *kind = kind_arg(r);
	if (!kind)
		return tk_error_set(&r->err, "kind: expected hang, cpu, disk, crash or launch"), -2;
	size_t limit = 50, nv = 0;
	tk_store_hang *h = NULL;
	size_t n = 0;
	char **vers = NULL;
	char **first = NULL, **last = NULL;
	int rc = -1;
	if (top(r, kind, &r->q, limit, &h, &n))
		goto out;
	{
		tk_store_query keep = r->q;
		r->q.where[TK_STORE_VERSION] = NULL;
		r->q.since = 0, r->q.until = 0;
		vers = values_of(r, TK_STORE_VERSION, &nv);
		r->q = keep;
	}
	first = calloc(n + 1, sizeof *first), last = calloc(n + 1, sizeof *last);
	if (first_last(r, kind, h, n, first, last))
		goto out;
	kind_tabs(r, "/stacks", kind);
	fprintf(f,
	        "<p class=\"lead\">The stack signatures behind most %s reports (first five app frames, leaf first): "
	        "count, sessions, exact P50/P95 duration, the first and last version each was seen in. "
	        "<span class=\"tag bad\">new in X</span> marks a signature no earlier version had.</p>\n",
	        kind);
	if (!n) {
		fputs("<p class=\"empty\">No reports match these filters.</p>\n", f);
		rc = 0;
		goto out;
	}
	fputs("<figure class=\"flame\"><img alt=\"flame graph of the top stacks\" src=\"/flame.svg?kind=", f);
	fputs(kind, f);
	filters_qs(r, f);
	fputs("\"><figcaption>All top signatures merged (width: reports).</figcaption></figure>\n", f);
	fputs("<table id=\"stacks\"><thead><tr><th>#</th><th>stack (leaf first)</th><th>count</th><th>sessions</th>"
	      "<th>P50</th><th>P95</th><th>first</th><th>last</th><th></th></tr></thead><tbody>\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		fputs("<tr data-signature=\"", f);
		esc(f, h[i].signature);
		fprintf(f, "\"><td>%zu</td><td><a class=\"siglink\" href=\"/signature?kind=%s&amp;sig=", i + 1, kind);
		url(f, h[i].signature);
		filters_qs(r, f);
		fputs("\">", f);
		signature_html(f, h[i].signature);
		fputs("</a></td>", f);
		cell_count(f, "count", h[i].count);
		cell_count(f, "sessions", h[i].sessions);
		cell(f, "p50", h[i].p50, "s");
		cell(f, "p95", h[i].p95, "s");
		fputs("<td data-k=\"first\">", f);
		esc(f, first[i]);
		fputs("</td><td data-k=\"last\">", f);
		esc(f, last[i]);
		fputs("</td><td class=\"mark\">", f);
		if (first[i] && nv && tk_store_version_cmp(first[i], vers[0]) > 0) {
			fputs("<span class=\"tag bad new\">new in ", f);
			esc(f, first[i]);
			fputs("</span>", f);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	rc = 0;
out:
	for (size_t i = 0; first && last && i < n; i++)
		free(first[i]), free(last[i]);
	free(first);
	free(last);
	free_values(vers, nv);
	tk_store_hangs_free(h, n);
	return rc;
}

/* ---- a signature ---- */

static void tally_table(FILE *f, const char *id, const char *what, const tk_store_tally *t, size_t n)
{
	fprintf(f, "<table class=\"split\" id=\"%s\"><thead><tr><th>%s</th><th>reports</th></tr></thead><tbody>\n", id,
	        what);
	for (size_t i = 0; i < n; i++) {
		fputs("<tr><td>", f);
		esc(f, t[i].value);
		fputs("</td>", f);
		cell_count(f, "count", t[i].count);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

/* "/PATH?kind=K&sig=SIG&filters" */
static void sig_href(req *r, const char *path, const char *kind, const char *sig)
{
	fprintf(r->f, "%s?kind=%s&amp;sig=", path, kind);
	url(r->f, sig);
	filters_qs(r, r->f);
}

static int signature(req *r)
{
	FILE *f = r->f;
	const char *kind = kind_arg(r), *sig = arg_raw(r, "sig");
	if (!kind || !sig)
		return tk_error_set(&r->err, "a signature page wants kind= and sig="), -2;
	tk_store_signature_info in;
	if (tk_store_signature_detail(r->s, kind, sig, &r->q, 10, &in, &r->err))
		return -1;
	fputs("<p class=\"lead\">", f);
	signature_html(f, sig);
	fputs("</p>\n", f);
	if (!in.count) {
		fputs("<p class=\"empty\">No reports of this signature match these filters.</p>\n", f);
		tk_store_signature_info_free(&in);
		return 0;
	}
	fputs("<table id=\"summary\"><thead><tr><th>kind</th><th>count</th><th>sessions</th><th>P50</th><th>P90</th>"
	      "<th>P95</th><th>P99</th><th>first version</th><th>last version</th></tr></thead><tbody><tr>",
	      f);
	fprintf(f, "<td>%s</td>", kind);
	cell_count(f, "count", in.count);
	cell_count(f, "sessions", in.sessions);
	static const char *const pk[] = {"p50", "p90", "p95", "p99"};
	for (int k = 0; k < 4; k++)
		cell(f, pk[k], in.summary.q[k], "s");
	fputs("<td data-k=\"first\">", f);
	esc(f, in.first_version);
	fputs("</td><td data-k=\"last\">", f);
	esc(f, in.last_version);
	fputs("</td></tr></tbody></table>\n", f);
	fputs("<figure class=\"flame\"><img id=\"sigflame\" alt=\"aggregated flame graph of the signature\" src=\"", f);
	sig_href(r, "/flame.svg", kind, sig);
	fputs("\"><figcaption>Every stack of its reports merged (width: samples). <a id=\"openflame\" href=\"", f);
	sig_href(r, "/flame.svg", kind, sig);
	fputs("\">Open the interactive flame graph</a> (zoom, search). Download: <a class=\"download\" href=\"", f);
	sig_href(r, "/profile.speedscope.json", kind, sig);
	fputs("\">speedscope</a> · <a class=\"download\" href=\"", f);
	sig_href(r, "/profile.json", kind, sig);
	fputs("\">Firefox Profiler</a></figcaption></figure>\n", f);
	fputs("<h2>Duration</h2>\n<figure class=\"stats\"><img id=\"sigstats\" alt=\"histogram and box plot of the "
	      "durations\" src=\"",
	      f);
	sig_href(r, "/stats.svg", kind, sig);
	fputs("\"></figure>\n<div class=\"cols\"><div><h2>Versions</h2>\n", f);
	tally_table(f, "by-version", "version", in.versions, in.nversions);
	fputs("</div><div><h2>Devices</h2>\n", f);
	tally_table(f, "by-device", "device", in.devices, in.ndevices);
	fputs("</div><div><h2>Example reports</h2>\n<ul id=\"examples\">", f);
	for (size_t i = 0; i < in.nexamples; i++) {
		fputs("<li><a class=\"report\" href=\"/report?id=", f);
		url(f, in.examples[i]);
		fputs("\"><code>", f);
		esc(f, in.examples[i]);
		fputs("</code></a></li>", f);
	}
	fputs("</ul></div></div>\n", f);
	tk_store_signature_info_free(&in);
	return 0;
}

/* ---- a report ---- */

static tk_profile *folded_profile(req *r, const char *text, size_t len);

static void meta_row(FILE *f, const char *k, const char *v)
{
	fprintf(f, "<tr><th>%s</th><td data-k=\"%s\">", k, k);
	esc(f, v);
	fputs("</td></tr>\n", f);
}

static int report(req *r)
{
	FILE *f = r->f;
	const char *id = arg(r, "id");
	if (!id)
		return tk_error_set(&r->err, "a report page wants id="), -2;
	tk_store_report rep;
	int g = tk_store_report_get(r->s, id, &rep, &r->err);
	if (g < 0)
		return -2;
	if (g > 0)
		return tk_error_set(&r->err, "no such report"), -3;
	fputs("<table id=\"meta\" class=\"meta\"><tbody>\n", f);
	meta_row(f, "id", rep.id);
	meta_row(f, "kind", rep.kind);
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		meta_row(f, tk_store_key_names[k], rep.keys[k]);
	char buf[64];
	time_t t = (time_t)rep.time;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
	meta_row(f, "time", buf);
	fputs("<tr><th>duration</th>", f);
	cell(f, "duration", rep.duration, "s");
	fputs("</tr>\n<tr><th>CPU average</th>", f);
	cell(f, "avg_cpu", rep.avg_cpu, "%");
	fputs("</tr>\n", f);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)rep.samples);
	meta_row(f, "samples", buf);
	meta_row(f, "thread", rep.thread);
	meta_row(f, "record", rep.rkey);
	fputs("<tr><th>signature</th><td>", f);
	signature_html(f, rep.signature);
	fputs("</td></tr>\n</tbody></table>\n", f);
	if (!*rep.folded) {
		fputs("<p class=\"empty\">This report has no stacks stored.</p>\n", f);
		tk_store_report_free(&rep);
		return 0;
	}
	fputs("<p class=\"downloads\">Download: <a class=\"download\" href=\"/report.speedscope.json?id=", f);
	url(f, rep.id);
	fputs("\">speedscope</a> · <a class=\"download\" href=\"/report.profile.json?id=", f);
	url(f, rep.id);
	fputs("\">Firefox Profiler</a> · <a href=\"/report.svg?id=", f);
	url(f, rep.id);
	fputs("\">flame graph</a></p>\n<h2>Call tree</h2>\n<pre id=\"tree\">", f);
	/* the tree as `tracekit tree` prints it, made HTML text */
	tk_profile *p = NULL;
	tk_calltree *tr = NULL;
	char *text = NULL;
	size_t tn = 0;
	int rc = -1;
	if ((p = folded_profile(r, rep.folded, strlen(rep.folded)))) {
		tk_calltree_options co;
		tk_calltree_options_init(&co);
		co.group = TK_GROUP_ALL;
		if ((tr = tk_calltree_build(p, &co, &r->err))) {
			FILE *m = open_memstream(&text, &tn);
			rc = tk_write_tree_text(m, tr, &r->err);
			fclose(m);
		}
	}
	for (char *line = text, *nl; !rc && line && *line; line = nl ? nl + 1 : NULL) {
		if ((nl = strchr(line, '\n')))
			*nl = 0;
		esc(f, line); /* line by line: the escaper makes every control character, \n too, U+FFFD */
		fputc('\n', f);
	}
	fputs("</pre>\n", f);
	free(text);
	tk_calltree_free(tr);
	tk_profile_free(p);
	tk_store_report_free(&rep);
	return rc;
}

/* ---- pictures and downloads of merged signatures ---- */

/* Folded text as a profile (the folded reader). NULL with r->err. */
static tk_profile *folded_profile(req *r, const char *text, size_t len)
{
	tk_profile *p = tk_profile_new();
	if (!len)
		return p; /* nothing: an empty profile draws an empty graph */
	tk_read_options ro;
	tk_read_options_init(&ro);
	ro.keep_going = 1;
	tk_input *in = tk_input_open_mem(text, len, "stacks", &r->err);
	if (!in || tk_reader_folded.read(p, in, &ro, &r->err)) {
		tk_input_close(in);
		tk_profile_free(p);
		return NULL;
	}
	tk_input_close(in);
	return p;
}

/* With sig: the signature's aggregated stacks (every report's stacks merged, tk_store_signature_folded).
 * Without: the top signatures of kind themselves, each one stack root first weighing its report
 * count. NULL with r->err on failure. */
static tk_profile *sig_profile(req *r, const char *kind, const char *sig, const tk_store_query *q)
{
	char *text = NULL;
	size_t len = 0;
	if (sig) {
		if (tk_store_signature_folded(r->s, kind, sig, q, 0, &text, &len, &r->err))
			return NULL;
		tk_profile *p = folded_profile(r, text, len);
		free(text);
		return p;
	}
	tk_store_hang *h = NULL;
	size_t n = 0;
	if (top(r, kind, q, 200, &h, &n))
		return NULL;
	FILE *m = open_memstream(&text, &len);
	for (size_t i = 0; i < n; i++) {
		/* leaf first, ';'-joined → root first; frames hold no ';' (it separates them) */
		const char *s = *h[i].signature ? h[i].signature : "(no stack)";
		size_t sl = strlen(s), end = sl;
		int firstf = 1;
		for (size_t k = sl + 1; k-- > 0;)
			if (k == 0 || s[k - 1] == ';') {
				if (!firstf)
					fputc(';', m);
				for (size_t c = k; c < end; c++)
					fputc(s[c] == '\n' || s[c] == '\r' ? ' ' : s[c], m);
				firstf = 0;
				end = k ? k - 1 : 0;
			}
		fprintf(m, " %llu\n", (unsigned long long)h[i].count);
	}
	fclose(m);
	tk_store_hangs_free(h, n);
	tk_profile *p = folded_profile(r, text, len);
	free(text);
	return p;
}

/* Fleet stacks name unsymbolicated frames IMAGE+0xOFFSET with no binary, which the flame graph
 * would draw grey: colour them as it colours binaries, system images (lib*, *.dylib) cool and the
 * app's warm, the shade from the name so a frame keeps its colour across pictures. */
static uint32_t fleet_color(void *ctx, const tk_calltree *t, const tk_cnode *n)
{
	(void)ctx;
	if (!n->frame)
		return TK_FLAME_DEFAULT_COLOR;
	char buf[32];
	const char *name = tk_frame_label(tk_calltree_profile(t), n->frame, buf);
	uint32_t h = 2166136261u;
	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	const char *plus = strstr(name, "+0x");
	size_t img = plus ? (size_t)(plus - name) : strlen(name);
	int sys = strncmp(name, "lib", 3) == 0 || (img >= 6 && memcmp(name + img - 6, ".dylib", 6) == 0);
	unsigned v = h % 55;
	if (sys) /* blues */
		return (uint32_t)((80 + v) << 16 | (150 + v) << 8 | 220);
	return (uint32_t)(230 << 16 | (90 + v * 2) << 8 | (40 + v / 2)); /* oranges */
}

/* A profile drawn or downloaded by one of the writers (svg, speedscope, gecko). */
static int write_profile(req *r, tk_profile *p, const char *which, const char *title, const char *file,
                         tk_dashboard_response *out)
{
	tk_convert_options co;
	tk_convert_options_init(&co);
	co.merge_threads = 1;
	co.title = title;
	if (strcmp(which, "svg") == 0) {
		tk_calltree_options to;
		tk_calltree_options_init(&to);
		to.group = TK_GROUP_ALL;
		tk_calltree *t = tk_calltree_build(p, &to, &r->err);
		tk_flame_options fo;
		tk_flame_options_init(&fo);
		fo.title = title;
		fo.color = fleet_color;
		int rc = t ? tk_write_flamegraph(r->f, t, &fo, &r->err) : -1;
		tk_calltree_free(t);
		out->type = "image/svg+xml", out->csp = csp_svg;
		return rc;
	}
	const tk_writer *w = tk_writer_find(which);
	int rc = w ? w->write(r->f, p, &co, &r->err) : -1;
	out->type = "application/json";
	snprintf(out->csp_buf, sizeof out->csp_buf, "attachment; filename=\"%s.%s\"", file,
	         strcmp(which, "gecko") == 0 ? "profile.json" : "speedscope.json");
	out->disposition = out->csp_buf;
	return rc;
}

static int report_picture(req *r, const char *which, tk_dashboard_response *out)
{
	const char *id = arg(r, "id");
	if (!id)
		return tk_error_set(&r->err, "wants id="), -2;
	tk_store_report rep;
	int g = tk_store_report_get(r->s, id, &rep, &r->err);
	if (g)
		return g < 0 ? -2 : (tk_error_set(&r->err, "no such report"), -3);
	tk_profile *p = folded_profile(r, rep.folded, strlen(rep.folded));
	char title[160];
	snprintf(title, sizeof title, "%s report %.12s", rep.kind, rep.id);
	int rc = p ? write_profile(r, p, which, title, "report", out) : -1;
	tk_profile_free(p);
	tk_store_report_free(&rep);
	return rc;
}

/* The durations of a signature's reports: histogram, CDF and box plot (tk_write_stats_svg). */
static int stats_picture(req *r, tk_dashboard_response *out)
{
	const char *kind = kind_arg(r), *sig = arg_raw(r, "sig");
	if (!kind || !sig)
		return tk_error_set(&r->err, "wants kind= and sig="), -2;
	tk_store_signature_info in;
	if (tk_store_signature_detail(r->s, kind, sig, &r->q, 0, &in, &r->err))
		return -1;
	tk_summary sum = {.count = in.summary.count,
	                  .mean = in.summary.mean,
	                  .wmean = NAN,
	                  .min = in.summary.min,
	                  .max = in.summary.max,
	                  .exact = 1};
	memcpy(sum.pct, in.summary.q, sizeof sum.pct);
	tk_stats_group all = {.name = "all", .sorted = in.durations, .n = in.count};
	int rc = tk_write_stats_svg(r->f, "duration", "s", &sum, &all, &all, in.count ? 1 : 0, &r->err);
	tk_store_signature_info_free(&in);
	out->type = "image/svg+xml", out->csp = csp_svg;
	return rc;
}

static int picture(req *r, const char *which, tk_dashboard_response *out)
{
	const char *kind = kind_arg(r), *sig = arg_raw(r, "sig");
	if (!kind)
		return tk_error_set(&r->err, "kind: expected hang, cpu, disk, crash or launch"), -2;
	tk_profile *p = sig_profile(r, kind, sig, &r->q);
	if (!p)
		return -1;
	char title[128];
	snprintf(title, sizeof title, sig ? "%s signature: its stacks merged" : "top %s signatures (width: reports)",
	         kind);
	int rc = write_profile(r, p, which, title, "signature", out);
	tk_profile_free(p);
	return rc;
}

/* ---- Trends ---- */

/* bins= : the histogram's bins (default 20). */
static int bins_arg(req *r, size_t *nb)
{
	*nb = 20;
	const char *v = arg(r, "bins");
	if (!v)
		return 0;
	char *end;
	long k = strtol(v, &end, 10);
	if (*end || k < 1 || k > 200)
		return tk_error_set(&r->err, "bins: a whole number from 1 to 200"), -2;
	*nb = (size_t)k;
	return 0;
}

/* The distribution of a duration metric under the filters, per version (tk_store_distribution). */
static int dist_load(req *r, const char *metric, size_t nbins, tk_store_dist **d, size_t *n, double **edges)
{
	tk_store_query q = r->q;
	q.metric = metric;
	q.nby = 1, q.by[0] = TK_STORE_VERSION;
	return tk_store_distribution(r->s, &q, nbins, d, n, edges, &r->err);
}

static int is_duration(const char *metric)
{
	return metric && (strcmp(metric, "hang.duration") == 0 || strcmp(metric, "cpu.duration") == 0);
}

/* /dist.svg?metric=M&bins=N&filters: histogram and box plots per version (tk_write_dist_svg). */
static int dist_picture(req *r, tk_dashboard_response *out)
{
	const char *metric = arg(r, "metric") ? arg(r, "metric") : "hang.duration";
	size_t nb;
	if (!is_duration(metric))
		return tk_error_set(&r->err, "metric: hang.duration or cpu.duration"), -2;
	if (bins_arg(r, &nb))
		return -2;
	tk_store_dist *d = NULL;
	double *e = NULL;
	size_t n = 0;
	if (dist_load(r, metric, nb, &d, &n, &e))
		return -1;
	tk_dist_series *se = calloc(n + 1, sizeof *se);
	int lg = n && e[0] > 0 && e[nb] / e[0] >= 10;
	for (size_t i = 0; i < n; i++)
		se[i] = (tk_dist_series){.name = d[i].keys[0],
		                         .counts = d[i].counts,
		                         .n = d[i].n,
		                         .min = d[i].min,
		                         .p5 = d[i].p5,
		                         .p25 = d[i].p25,
		                         .p50 = d[i].p50,
		                         .p75 = d[i].p75,
		                         .p95 = d[i].p95,
		                         .max = d[i].max};
	char title[128];
	snprintf(title, sizeof title, "%s: histogram and box plot by version", metric);
	tk_dist_chart c = {.title = title,
	                   .unit = tk_store_metric_unit(metric),
	                   .edges = e,
	                   .nbins = nb,
	                   .log = lg,
	                   .series = se,
	                   .nseries = n};
	int rc = tk_write_dist_svg(r->f, &c, &r->err);
	free(se);
	tk_store_dists_free(d, n, e);
	out->type = "image/svg+xml", out->csp = csp_svg;
	return rc;
}

/* The trends page's distribution of the selected range: the picture, the box plot's numbers and the
 * histogram's counts as tables. */
static int dist_section(req *r, const char *metric)
{
	FILE *f = r->f;
	size_t nb;
	if (bins_arg(r, &nb))
		return -2;
	fputs("<h2>Distribution of the selected range</h2>\n", f);
	if (!is_duration(metric)) {
		fputs("<p class=\"note\">The histogram and box plot are drawn for hang.duration and cpu.duration (one "
		      "value per report).</p>\n",
		      f);
		return 0;
	}
	tk_store_dist *d = NULL;
	double *e = NULL;
	size_t n = 0;
	if (dist_load(r, metric, nb, &d, &n, &e))
		return -1;
	fprintf(f,
	        "<p class=\"lead\">Every %s value under the filters and time range above (since, until), per "
	        "version: a histogram in %zu bins and a box plot (box P25 to P75, bar at the median, whiskers P5 to "
	        "P95, dots at min and max; exact).</p>\n",
	        metric, nb);
	fprintf(f,
	        "<figure class=\"trend\"><img id=\"distchart\" alt=\"histogram and box plot\" "
	        "src=\"/dist.svg?metric=%s&amp;bins=%zu",
	        metric, nb);
	filters_qs(r, f);
	fputs("\"></figure>\n<table "
	      "id=\"dist\"><thead><tr><th>version</th><th>count</th><th>min</th><th>P5</th><th>P25</th>"
	      "<th>P50</th><th>P75</th><th>P95</th><th>max</th></tr></thead><tbody>\n",
	      f);
	const char *unit = tk_store_metric_unit(metric);
	for (size_t i = 0; i < n; i++) {
		fputs("<tr data-version=\"", f);
		esc(f, d[i].keys[0]);
		fputs("\"><td>", f);
		esc(f, d[i].keys[0]);
		fputs("</td>", f);
		cell_count(f, "count", d[i].n);
		const char *const k[] = {"min", "p5", "p25", "p50", "p75", "p95", "max"};
		const double v[] = {d[i].min, d[i].p5, d[i].p25, d[i].p50, d[i].p75, d[i].p95, d[i].max};
		for (int j = 0; j < 7; j++)
			cell(f, k[j], v[j], unit);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n<details><summary>The histogram's counts</summary><table "
	      "id=\"hist\"><thead><tr><th>from</th>"
	      "<th>to</th>",
	      f);
	for (size_t i = 0; i < n; i++) {
		fputs("<th>", f);
		esc(f, d[i].keys[0]);
		fputs("</th>", f);
	}
	fputs("</tr></thead><tbody>\n", f);
	for (size_t b = 0; n && b < nb; b++) {
		fprintf(f, "<tr data-bin=\"%zu\">", b);
		cell(f, "from", e[b], unit);
		cell(f, "to", e[b + 1], unit);
		for (size_t i = 0; i < n; i++) {
			fputs("<td class=\"num\" data-version=\"", f);
			esc(f, d[i].keys[0]);
			fprintf(f, "\" data-v=\"%llu\">%llu</td>", (unsigned long long)d[i].counts[b],
			        (unsigned long long)d[i].counts[b]);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></details>\n", f);
	tk_store_dists_free(d, n, e);
	return 0;
}

static const char *const trend_metrics[] = {"hang.duration", "cpu.duration", "hang.rate", "cpu.average"};
static const char *const trend_stats[] = {"p50", "p90", "p95", "p99", "mean", "count"};

typedef struct trend {
	const char *metric, *stat, *bucket;
	int qi; /* index into q[], -1 mean, -2 count */
	tk_store_group *g;
	size_t ng;
	char **x, **v; /* buckets, versions */
	size_t nx, nv;
	double *y; /* nv × nx */
} trend;

static const char *pick(const char *v, const char *const *opts, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		if (strcmp(v, opts[i]) == 0)
			return opts[i];
	return v ? NULL : opts[0];
}

static size_t index_of(char ***list, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*list)[i], s) == 0)
			return i;
	*list = realloc(*list, (*n + 1) * sizeof **list);
	(*list)[*n] = strdup(s);
	return (*n)++;
}

static void trend_free(trend *t)
{
	tk_store_groups_free(t->g, t->ng);
	free_values(t->x, t->nx);
	free_values(t->v, t->nv);
	free(t->y);
}

static int trend_load(req *r, trend *t)
{
	memset(t, 0, sizeof *t);
	static const char *const buckets[] = {"day", "hour"};
	t->metric = pick(arg(r, "metric"), trend_metrics, 4);
	t->stat = pick(arg(r, "stat"), trend_stats, 6);
	t->bucket = pick(arg(r, "bucket"), buckets, 2);
	if (!t->metric || !t->stat || !t->bucket)
		return tk_error_set(&r->err, "metric=, stat= or bucket= is not one the trends page draws"), -2;
	t->qi = strcmp(t->stat, "mean") == 0 ? -1 : strcmp(t->stat, "count") == 0 ? -2 : (int)(t->stat[2] - '0');
	if (t->qi >= 0)
		t->qi = strcmp(t->stat, "p50") == 0   ? 0
		        : strcmp(t->stat, "p90") == 0 ? 1
		        : strcmp(t->stat, "p95") == 0 ? 2
		                                      : 3;
	const int by[] = {t->bucket[0] == 'd' ? TK_STORE_BY_DAY : TK_STORE_BY_HOUR, TK_STORE_VERSION};
	if (percentiles(r, t->metric, by, 2, &t->g, &t->ng))
		return -1;
	for (size_t i = 0; i < t->ng; i++) {
		index_of(&t->x, &t->nx, t->g[i].keys[0]);
		index_of(&t->v, &t->nv, t->g[i].keys[1]);
	}
	if (t->nv > 1)
		qsort(t->v, t->nv, sizeof *t->v, vercmp_p);
	/* buckets sort as text in time order ("2026-11-20", "2026-11-20T13") */
	for (size_t i = 1; i < t->nx; i++)
		for (size_t j = i; j > 0 && strcmp(t->x[j - 1], t->x[j]) > 0; j--) {
			char *tmp = t->x[j];
			t->x[j] = t->x[j - 1], t->x[j - 1] = tmp;
		}
	t->y = malloc((t->nv * t->nx + 1) * sizeof *t->y);
	for (size_t i = 0; i < t->nv * t->nx; i++)
		t->y[i] = NAN;
	for (size_t i = 0; i < t->ng; i++) {
		size_t xi = index_of(&t->x, &t->nx, t->g[i].keys[0]), vi = index_of(&t->v, &t->nv, t->g[i].keys[1]);
		t->y[vi * t->nx + xi] = t->qi >= 0    ? t->g[i].q[t->qi]
		                        : t->qi == -1 ? t->g[i].mean
		                                      : (double)t->g[i].count;
	}
	return 0;
}

/* The rules on this metric and statistic: their thresholds are drawn. */
static int rule_matches(const tk_alert_rule *ru, const trend *t)
{
	if (strcmp(ru->metric, t->metric) != 0)
		return 0;
	if (t->qi >= 0)
		return ru->stat == TK_ALERT_QUANTILE && ru->qindex == t->qi;
	return t->qi == -1 ? ru->stat == TK_ALERT_VALUE : ru->stat == TK_ALERT_COUNT;
}

static int trend_picture(req *r, tk_dashboard_response *out)
{
	trend t;
	int rc = trend_load(r, &t);
	if (rc) {
		trend_free(&t);
		return rc;
	}
	tk_trend_series *se = calloc(t.nv + 1, sizeof *se);
	for (size_t i = 0; i < t.nv; i++)
		se[i].name = t.v[i], se[i].y = t.y + i * t.nx;
	const tk_alert_rules *ru = r->o ? r->o->rules : NULL;
	tk_trend_threshold *th = calloc((ru ? ru->n : 0) + 1, sizeof *th);
	size_t nth = 0;
	for (size_t i = 0; ru && i < ru->n; i++)
		if (rule_matches(&ru->v[i], &t))
			th[nth].label = ru->v[i].text, th[nth++].value = ru->v[i].threshold;
	char title[128];
	snprintf(title, sizeof title, "%s(%s) per %s, by version", t.stat, t.metric, t.bucket);
	const char *unit = t.qi == -2 ? "reports" : tk_store_metric_unit(t.metric);
	tk_trend_chart c = {.title = title,
	                    .unit = unit,
	                    .xlabels = (const char *const *)t.x,
	                    .nx = t.nx,
	                    .series = se,
	                    .nseries = t.nv,
	                    .thresholds = th,
	                    .nthresholds = nth};
	rc = tk_write_trend_svg(r->f, &c, &r->err);
	free(se);
	free(th);
	trend_free(&t);
	out->type = "image/svg+xml", out->csp = csp_svg;
	return rc;
}

static void select_of(FILE *f, const char *name, const char *cur, const char *const *opts, size_t n)
{
	fprintf(f, "<label>%s <select name=\"%s\">", name, name);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "<option%s>%s</option>", cur && strcmp(cur, opts[i]) == 0 ? " selected" : "", opts[i]);
	fputs("</select></label>", f);
}

static int trends(req *r)
{
	FILE *f = r->f;
	trend t;
	int rc = trend_load(r, &t);
	if (rc) {
		trend_free(&t);
		return rc;
	}
	static const char *const buckets[] = {"day", "hour"};
	fputs("<form class=\"pick\" method=\"get\" action=\"/trends\">", f);
	select_of(f, "metric", t.metric, trend_metrics, 4);
	select_of(f, "stat", t.stat, trend_stats, 6);
	select_of(f, "bucket", t.bucket, buckets, 2);
	if (arg(r, "bins")) {
		fputs("<input type=\"hidden\" name=\"bins\" value=\"", f);
		esc(f, arg(r, "bins"));
		fputs("\">", f);
	}
	filters_hidden(r, f, -1);
	fputs("<button type=\"submit\">Draw</button></form>\n", f);
	fprintf(f,
	        "<p class=\"lead\">%s of %s per UTC %s, one line per version; dashed lines are the alert rules' "
	        "thresholds on this statistic.</p>\n",
	        t.stat, t.metric, t.bucket);
	if (!t.ng) {
		fputs("<p class=\"empty\">No reports match these filters.</p>\n", f);
		trend_free(&t);
		return 0;
	}
	fprintf(f,
	        "<figure class=\"trend\"><img id=\"trendchart\" alt=\"trend chart\" "
	        "src=\"/trend.svg?metric=%s&amp;stat=%s&amp;bucket=%s",
	        t.metric, t.stat, t.bucket);
	filters_qs(r, f);
	fputs("\"></figure>\n", f);
	fputs("<table id=\"trend\"><thead><tr><th>", f);
	fputs(t.bucket, f);
	fputs("</th>", f);
	for (size_t v = 0; v < t.nv; v++) {
		fputs("<th>", f);
		esc(f, t.v[v]);
		fputs("</th>", f);
	}
	fputs("</tr></thead><tbody>\n", f);
	const char *unit = t.qi == -2 ? "" : tk_store_metric_unit(t.metric);
	for (size_t x = 0; x < t.nx; x++) {
		fputs("<tr data-bucket=\"", f);
		esc(f, t.x[x]);
		fputs("\"><td>", f);
		esc(f, t.x[x]);
		fputs("</td>", f);
		for (size_t v = 0; v < t.nv; v++) {
			char buf[32];
			double y = t.y[v * t.nx + x];
			fputs("<td class=\"num\" data-version=\"", f);
			esc(f, t.v[v]);
			fprintf(f, "\" data-v=\"%s\">", tk_stats_fmt_double(y, buf));
			if (t.qi == -2 && !isnan(y))
				fprintf(f, "%.0f", y);
			else
				num(f, y, unit);
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	rc = dist_section(r, t.metric);
	trend_free(&t);
	return rc ? rc : breaches(r, 0);
}

/* ---- Compare ---- */

static const tk_store_hang *find_sig(const tk_store_hang *h, size_t n, const char *sig)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(h[i].signature, sig) == 0)
			return &h[i];
	return NULL;
}

/* The two sides of a comparison: two versions (a=, b=) or two date ranges (a_since=, a_until=,
 * b_since=, b_until=: each as since= and until= take them, a missing end open), each under the
 * page's other filters; a side's range takes the place of the page's since and until. */
typedef struct sides {
	int range;           /* 0 versions, 1 date ranges */
	const char *v[2];    /* the versions */
	const char *t[2][2]; /* [side][since, until] as given */
	tk_store_query q[2];
	char label[2][96];
} sides;

/* 0 with both sides, 1 when they are not chosen yet, -2 with r->err on a bad argument. */
static int sides_of(req *r, sides *x)
{
	memset(x, 0, sizeof *x);
	static const char *const names[2][2] = {{"a_since", "a_until"}, {"b_since", "b_until"}};
	for (int side = 0; side < 2; side++)
		for (int k = 0; k < 2; k++)
			if ((x->t[side][k] = arg(r, names[side][k])))
				x->range = 1;
	x->v[0] = arg(r, "a"), x->v[1] = arg(r, "b");
	for (int side = 0; side < 2; side++) {
		x->q[side] = r->q;
		if (x->range) {
			x->q[side].since = x->q[side].until = 0;
			if (x->t[side][0] &&
			    tk_store_query_since(&x->q[side], x->t[side][0], r->o ? r->o->now : 0, &r->err))
				return -2;
			if (x->t[side][1] &&
			    tk_store_query_until(&x->q[side], x->t[side][1], r->o ? r->o->now : 0, &r->err))
				return -2;
			snprintf(x->label[side], sizeof x->label[side], "%.40s to %.40s",
			         x->t[side][0] ? x->t[side][0] : "the start", x->t[side][1] ? x->t[side][1] : "now");
		} else {
			if (!x->v[side])
				return 1;
			x->q[side].where[TK_STORE_VERSION] = x->v[side];
			snprintf(x->label[side], sizeof x->label[side], "%s", x->v[side]);
		}
	}
	return x->range && !x->t[0][0] && !x->t[0][1] && !x->t[1][0] && !x->t[1][1] ? 1 : 0;
}

/* The sides as query arguments ("&a=…&b=…" or the ranges), for the pictures' links. */
static void sides_qs(FILE *f, const sides *x)
{
	static const char *const names[2][2] = {{"a_since", "a_until"}, {"b_since", "b_until"}};
	for (int side = 0; side < 2; side++) {
		if (!x->range) {
			fprintf(f, "&amp;%s=", side ? "b" : "a");
			url(f, x->v[side]);
			continue;
		}
		for (int k = 0; k < 2; k++)
			if (x->t[side][k]) {
				fprintf(f, "&amp;%s=", names[side][k]);
				url(f, x->t[side][k]);
			}
	}
}

/* The hang signatures most frequent on either side: their counts, P95 on each, and whether their
 * durations differ (two-sided Mann-Whitney p-value of the two sides' durations, lib/stats/tests.c). */
static int compare_stacks(req *r, const sides *x)
{
	FILE *f = r->f;
	const tk_store_query *q = x->q;
	tk_store_hang *h[2] = {0};
	size_t n[2] = {0};
	/* counts alone: the durations below give each side's P95, and sessions are not shown */
	if (tk_store_top_counts(r->s, "hang", &q[0], 10, &h[0], &n[0], &r->err) ||
	    tk_store_top_counts(r->s, "hang", &q[1], 10, &h[1], &n[1], &r->err)) {
		tk_store_hangs_free(h[0], n[0]);
		return -1;
	}
	fputs("<h2>Hang stacks on either side</h2>\n<table id=\"compare-stacks\"><thead><tr><th>stack (leaf first)"
	      "</th><th>count A</th><th>count B</th><th>P95 A</th><th>P95 B</th><th>Mann-Whitney p</th></tr></thead>"
	      "<tbody>\n",
	      f);
	/* the signatures listed, in order: each side's top, B's without those A lists; their durations
	 * on each side in one store call per side */
	char **sigs = tk_xmalloc((n[0] + n[1] + 1) * sizeof *sigs);
	size_t ns = 0;
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < n[side]; i++)
			if (side == 0 || !find_sig(h[0], n[0], h[side][i].signature))
				sigs[ns++] = h[side][i].signature;
	tk_store_sigdur *in[2] = {tk_xcalloc(ns + 1, sizeof *in[0]), tk_xcalloc(ns + 1, sizeof *in[1])};
	int rc = tk_store_signatures_durations(r->s, "hang", &q[0], sigs, ns, in[0], &r->err);
	if (!rc && (rc = tk_store_signatures_durations(r->s, "hang", &q[1], sigs, ns, in[1], &r->err)) != 0)
		tk_store_sigdurs_free(in[0], ns);
	for (size_t i = 0; i < ns && !rc; i++) {
		const char *sig = sigs[i];
		tk_store_sigdur *a = &in[0][i], *b = &in[1][i];
		double p = tk_mann_whitney(a->durations, a->count, b->durations, b->count, NULL);
		fputs("<tr data-signature=\"", f);
		esc(f, sig);
		fputs("\"><td>", f);
		signature_html(f, sig);
		fputs("</td>", f);
		cell_count(f, "count_a", a->count);
		cell_count(f, "count_b", b->count);
		cell(f, "p95_a", a->count ? a->summary.q[2] : NAN, "s");
		cell(f, "p95_b", b->count ? b->summary.q[2] : NAN, "s");
		char buf[32];
		int both = a->count && b->count;
		fprintf(f, "<td class=\"num%s\" data-k=\"p\" data-v=\"%s\">", both && p < 0.05 ? " worse" : "",
		        tk_stats_fmt_double(both ? p : NAN, buf));
		if (both)
			fprintf(f, "%.3g", p);
		else
			fputs("—", f);
		fputs("</td></tr>\n", f);
	}
	if (!rc) {
		tk_store_sigdurs_free(in[0], ns);
		tk_store_sigdurs_free(in[1], ns);
	}
	free(in[0]);
	free(in[1]);
	free(sigs);
	fputs("</tbody></table>\n<p class=\"note\">p: the two-sided Mann-Whitney test of the signature's durations "
	      "on one side against the other (below 0.05: they differ).</p>\n",
	      f);
	tk_store_hangs_free(h[0], n[0]);
	tk_store_hangs_free(h[1], n[1]);
	return rc;
}

/* The form that picks two versions, or two date ranges. */
static void compare_forms(req *r, const sides *x)
{
	FILE *f = r->f;
	size_t nv = 0;
	char **v = values_of(r, TK_STORE_VERSION, &nv);
	fputs("<form class=\"pick\" id=\"pick-versions\" method=\"get\" action=\"/compare\">", f);
	for (int side = 0; side < 2; side++) {
		fprintf(f, "<label>%s <select name=\"%s\">", side ? "against" : "version", side ? "b" : "a");
		/* none chosen yet (or two ranges compared): the newest version against the one before it,
		 * the question asked after a release */
		const char *cur = x->range || !x->v[side] ? (nv > 1 ? v[nv - 2 + side] : NULL) : x->v[side];
		for (size_t i = 0; i < nv; i++) {
			fputs("<option value=\"", f);
			esc(f, v[i]);
			fprintf(f, "\"%s>", cur && strcmp(cur, v[i]) == 0 ? " selected" : "");
			esc(f, v[i]);
			fputs("</option>", f);
		}
		fputs("</select></label>", f);
	}
	filters_hidden(r, f, TK_STORE_VERSION);
	fputs("<button type=\"submit\">Compare versions</button></form>\n", f);
	free_values(v, nv);
	/* date ranges: the page's since/until give way to each side's */
	fputs("<form class=\"pick\" id=\"pick-ranges\" method=\"get\" action=\"/compare\">", f);
	static const char *const names[2][2] = {{"a_since", "a_until"}, {"b_since", "b_until"}};
	for (int side = 0; side < 2; side++)
		for (int k = 0; k < 2; k++) {
			fprintf(f, "<label>%s %s <input name=\"%s\" size=\"11\" value=\"", side ? "B" : "A",
			        k ? "until" : "from", names[side][k]);
			esc(f, x->range ? x->t[side][k] : NULL);
			fputs("\" placeholder=\"", f);
			fputs(k ? "now" : "the start", f);
			fputs("\"></label>", f);
		}
	for (size_t i = 0; i < NFILTERS; i++)
		if (r->q.where[filter_keys[i]]) {
			fprintf(f, "<input type=\"hidden\" name=\"%s\" value=\"", tk_store_key_names[filter_keys[i]]);
			esc(f, r->q.where[filter_keys[i]]);
			fputs("\">", f);
		}
	fputs("<button type=\"submit\">Compare date ranges</button> <a id=\"last-week\" "
	      "href=\"/compare?a_since=14d&amp;a_until=7d&amp;b_since=7d",
	      f);
	{
		tk_store_query keep = r->q;
		const char *ks = r->since, *ku = r->until;
		r->since = r->until = NULL;
		filters_qs(r, f);
		r->q = keep, r->since = ks, r->until = ku;
	}
	fputs("\">the last 7 days against the 7 before</a></form>\n", f);
}

static int compare(req *r)
{
	FILE *f = r->f;
	sides x;
	int ch = sides_of(r, &x);
	if (ch < 0)
		return ch;
	compare_forms(r, &x);
	if (ch) {
		fputs("<p class=\"empty\">Pick two versions or two date ranges.</p>\n", f);
		return 0;
	}
	fprintf(f, "<p class=\"lead\" id=\"sides\" data-mode=\"%s\">A: <strong class=\"side\">",
	        x.range ? "range" : "version");
	esc(f, x.label[0]);
	fputs("</strong> against B: <strong class=\"side\">", f);
	esc(f, x.label[1]);
	fputs("</strong>. p: the two-sided Mann-Whitney test of all of A's values against B's.</p>\n", f);
	static const char *const metrics[] = {"hang.duration", "cpu.duration"};
	static const char *const pk[] = {"P50", "P90", "P95", "P99"};
	fputs("<table id=\"compare\"><thead><tr><th>metric</th><th>percentile</th><th>", f);
	esc(f, x.label[0]);
	fputs("</th><th>", f);
	esc(f, x.label[1]);
	fputs("</th><th>change</th></tr></thead><tbody>\n", f);
	for (size_t m = 0; m < 2; m++) {
		tk_store_group *g[2] = {0};
		size_t ng[2] = {0};
		for (int side = 0; side < 2; side++) {
			tk_store_query q = x.q[side];
			q.metric = metrics[m];
			if (tk_store_percentiles(r->s, &q, &g[side], &ng[side], &r->err)) {
				tk_store_groups_free(g[0], ng[0]);
				return -1;
			}
		}
		/* every value of each side: the Mann-Whitney test of the whole metric */
		tk_store_dist *d[2] = {0};
		size_t nd[2] = {0};
		double *e[2] = {0};
		int rc = 0;
		for (int side = 0; side < 2 && !rc; side++) {
			tk_store_query q = x.q[side];
			q.metric = metrics[m];
			rc = tk_store_distribution(r->s, &q, 1, &d[side], &nd[side], &e[side], &r->err);
		}
		if (!rc) {
			fprintf(f, "<tr><td>%s</td><td>count</td>", metrics[m]);
			cell_count(f, "a", ng[0] ? g[0]->count : 0);
			cell_count(f, "b", ng[1] ? g[1]->count : 0);
			char buf[32];
			int both = nd[0] && nd[1];
			double p = both ? tk_mann_whitney(d[0]->values, d[0]->n, d[1]->values, d[1]->n, NULL) : NAN;
			fprintf(f, "<td class=\"num%s\" data-k=\"p\" data-v=\"%s\">", both && p < 0.05 ? " worse" : "",
			        tk_stats_fmt_double(p, buf));
			if (both)
				fprintf(f, "p = %.3g", p);
			else
				fputs("—", f);
			fputs("</td></tr>\n", f);
		}
		for (int side = 0; side < 2; side++)
			tk_store_dists_free(d[side], nd[side], e[side]);
		for (int k = 0; k < 4 && !rc; k++) {
			double a = ng[0] ? g[0]->q[k] : NAN, b = ng[1] ? g[1]->q[k] : NAN;
			fprintf(f, "<tr><td>%s</td><td>%s</td>", metrics[m], pk[k]);
			cell(f, "a", a, "s");
			cell(f, "b", b, "s");
			double dl = (b - a) / a * 100;
			fprintf(f, "<td class=\"num %s\">", isnan(dl) || isinf(dl) ? "" : dl > 0 ? "worse" : "better");
			if (isnan(dl) || isinf(dl))
				fputs("—", f);
			else
				fprintf(f, "%+.1f %%", dl);
			fputs("</td></tr>\n", f);
		}
		tk_store_groups_free(g[0], ng[0]);
		tk_store_groups_free(g[1], ng[1]);
		if (rc)
			return -1;
	}
	fputs("</tbody></table>\n", f);
	int rc = compare_stacks(r, &x);
	tk_mann_whitney_release(); /* this connection's thread ends after the answer */
	if (rc)
		return -1;
	fputs("<h2>Hang stacks: what grew</h2>\n<figure class=\"flame\"><img id=\"diffflame\" alt=\"differential flame "
	      "graph\" "
	      "src=\"/diff.svg?",
	      f);
	sides_qs(f, &x);
	filters_qs(r, f);
	fputs(
	    "\"><figcaption>B's hang stacks, red where they grew against A (share of reports).</figcaption></figure>\n",
	    f);
	return 0;
}

static int diff_picture(req *r, tk_dashboard_response *out)
{
	sides x;
	int ch = sides_of(r, &x);
	if (ch)
		return ch < 0
		           ? ch
		           : (tk_error_set(&r->err, "diff.svg wants a= and b= (two versions) or two date ranges"), -2);
	tk_profile *pa = sig_profile(r, "hang", NULL, &x.q[0]), *pb = pa ? sig_profile(r, "hang", NULL, &x.q[1]) : NULL;
	int rc = -1;
	if (pa && pb)
		rc = tk_write_diff_flamegraph(r->f, pa, pb, "hang stacks: B against A", &r->err);
	tk_profile_free(pa);
	tk_profile_free(pb);
	out->type = "image/svg+xml", out->csp = csp_svg;
	return rc;
}

/* ---- alert rules ---- */

static int rules_page(req *r)
{
	FILE *f = r->f;
	const tk_alert_rules *ru = r->o ? r->o->rules : NULL;
	if (!ru || !ru->n) {
		fputs("<p class=\"empty\">No rules (serve --ui --rules FILE shows them here).</p>\n", f);
		return 0;
	}
	fputs("<table id=\"rules\"><thead><tr><th>line</th><th>rule</th></tr></thead><tbody>\n", f);
	for (size_t i = 0; i < ru->n; i++) {
		fprintf(f, "<tr><td>%u</td><td><code>", ru->v[i].line);
		esc(f, ru->v[i].text);
		fputs("</code></td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	return breaches(r, 0);
}

/* ---- the JSON API ---- */

static int api(req *r, const char *path, tk_dashboard_response *out)
{
	FILE *f = r->f;
	out->type = "application/x-ndjson; charset=utf-8";
	if (strcmp(path, "/api/stats") == 0) {
		tk_store_query q = r->q;
		q.metric = arg(r, "metric") ? arg(r, "metric") : "hang.duration";
		if (arg(r, "by") && tk_store_query_by(&q, arg(r, "by"), &r->err))
			return -2;
		tk_store_group *g = NULL;
		size_t n = 0;
		if (tk_store_percentiles(r->s, &q, &g, &n, &r->err))
			return -2;
		int rc = tk_store_groups_write_json(f, &q, g, n, &r->err);
		tk_store_groups_free(g, n);
		return rc;
	}
	if (strcmp(path, "/api/top") == 0) {
		const char *kind = arg(r, "kind") ? arg(r, "kind") : "hang";
		size_t limit = 10;
		if (arg(r, "limit")) {
			char *end;
			long v = strtol(arg(r, "limit"), &end, 10);
			if (*end || v < 1 || v > 100000)
				return tk_error_set(&r->err, "limit: a whole number from 1 to 100000"), -2;
			limit = (size_t)v;
		}
		tk_store_hang *h = NULL;
		size_t n = 0;
		if (top(r, kind, &r->q, limit, &h, &n))
			return -2;
		int rc = tk_store_hangs_write_json(f, h, n, &r->err);
		tk_store_hangs_free(h, n);
		return rc;
	}
	if (strcmp(path, "/api/dist") == 0) {
		tk_store_query q = r->q;
		q.metric = arg(r, "metric") ? arg(r, "metric") : "hang.duration";
		if (arg(r, "by") && tk_store_query_by(&q, arg(r, "by"), &r->err))
			return -2;
		size_t nb;
		if (bins_arg(r, &nb))
			return -2;
		tk_store_dist *d = NULL;
		double *e = NULL;
		size_t n = 0;
		if (tk_store_distribution(r->s, &q, nb, &d, &n, &e, &r->err))
			return -2;
		int rc = tk_store_dists_write_json(f, &q, d, n, e, nb, &r->err);
		tk_store_dists_free(d, n, e);
		return rc;
	}
	if (strcmp(path, "/api/") == 0 || strcmp(path, "/api") == 0) {
		out->type = "application/json";
		fputs(
		    "{\"endpoints\": [\"/api/stats\", \"/api/top\", \"/api/dist\"], \"docs\": \"docs/dashboard.md\"}\n",
		    f);
		return 0;
	}
	return tk_error_set(&r->err, "no such API endpoint (see /api/)"), -3;
}

/* ---- dispatch ---- */

static unsigned fail(req *r, tk_dashboard_response *out, unsigned status, const char *msg)
{
	free(out->body);
	char *body = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&body, &n);
	/* text/plain with nosniff: the message (which may quote stored text) is never markup */
	fprintf(m, "%s\n", msg);
	fclose(m);
	out->status = status;
	out->type = "text/plain; charset=utf-8";
	out->csp = csp_none;
	out->disposition = NULL;
	out->body = body, out->n = n;
	(void)r;
	return status;
}

/* An SVG flame graph opened by itself: its one script (the writer's own zoom and search, a fixed
 * text) may run, by its hash, and nothing else: names in the picture can never become script. */
static void svg_csp(tk_dashboard_response *out)
{
	const char *b = out->body, *end = out->body + out->n;
	static const char open[] = "<script type=\"text/ecmascript\"><![CDATA[", close[] = "]]></script>";
	const size_t on = sizeof open - 1, cn = sizeof close - 1;
	const char *s = memmem(b, out->n, open, on);
	const char *e = s ? memmem(s + on, (size_t)(end - s - on), close, cn) : NULL;
	if (!e)
		return;
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256((const unsigned char *)s + on, (size_t)(e - s - on), md);
	char b64[64];
	EVP_EncodeBlock((unsigned char *)b64, md, sizeof md);
	snprintf(out->csp_buf, sizeof out->csp_buf,
	         "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; script-src 'sha256-%s'; "
	         "frame-ancestors 'self'",
	         b64);
	out->csp = out->csp_buf;
}

/* ---- the answer cache ----
 * A page or picture costs whole-store queries; the same one again while the store is unchanged
 * (its change token, tk_store_changes) is answered from here: keyed by the store, the rules, the
 * path and every argument the answer read (names and values, absent ones too). Answers with
 * a time relative to the present (since=7d, until=, a_since= …) are not kept. */
#define CACHE_N 64
#define CACHE_MAX_BODY (4u << 20)
typedef struct centry {
	const tk_store *s;
	const tk_dashboard_options *o;
	uint64_t token, used;
	char *path;
	char **names, **vals; /* as given; vals[i] NULL: the argument was absent */
	size_t nargs;
	tk_dashboard_response resp;
} centry;
static centry cache[CACHE_N];
static uint64_t cache_clock;
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;

static void centry_free(centry *e)
{
	for (size_t i = 0; i < e->nargs; i++)
		free(e->names[i]), free(e->vals[i]);
	free(e->names);
	free(e->vals);
	free(e->path);
	free(e->resp.body);
	memset(e, 0, sizeof *e);
}

static void resp_copy(tk_dashboard_response *to, const tk_dashboard_response *from)
{
	*to = *from;
	to->body = malloc(from->n + 1);
	if (!to->body) {
		to->n = 0;
		return;
	}
	memcpy(to->body, from->body, from->n);
	to->body[from->n] = 0;
	if (from->csp == from->csp_buf)
		to->csp = to->csp_buf;
}

static const char *arg_of(tk_dashboard_arg_fn argf, void *actx, const char *name)
{
	return argf ? argf(actx, name) : NULL;
}

static int cache_get(tk_store *s, const tk_dashboard_options *o, uint64_t token, const char *path,
                     tk_dashboard_arg_fn argf, void *actx, tk_dashboard_response *out)
{
	int hit = 0;
	pthread_mutex_lock(&cache_mu);
	for (size_t i = 0; i < CACHE_N && !hit; i++) {
		centry *e = &cache[i];
		if (!e->path || e->s != s || e->o != o || e->token != token || strcmp(e->path, path) != 0)
			continue;
		size_t k = 0;
		for (; k < e->nargs; k++) {
			const char *v = arg_of(argf, actx, e->names[k]);
			if (!v != !e->vals[k] || (v && strcmp(v, e->vals[k]) != 0))
				break;
		}
		if (k < e->nargs)
			continue;
		resp_copy(out, &e->resp);
		hit = out->body != NULL;
		e->used = ++cache_clock;
	}
	pthread_mutex_unlock(&cache_mu);
	return hit;
}

static void cache_put(const req *r, uint64_t token, const char *path, const tk_dashboard_response *resp)
{
	if (r->uncachable || resp->n > CACHE_MAX_BODY || !resp->body)
		return;
	pthread_mutex_lock(&cache_mu);
	centry *e = &cache[0];
	for (size_t i = 0; i < CACHE_N; i++) { /* a free slot, one of an older state, or the least used */
		if (!cache[i].path || cache[i].s != r->s || cache[i].token != token) {
			e = &cache[i];
			break;
		}
		if (cache[i].used < e->used)
			e = &cache[i];
	}
	centry_free(e);
	e->s = r->s;
	e->o = r->o;
	e->token = token;
	e->used = ++cache_clock;
	e->path = strdup(path);
	e->names = calloc(r->nseen + 1, sizeof *e->names);
	e->vals = calloc(r->nseen + 1, sizeof *e->vals);
	resp_copy(&e->resp, resp);
	int ok = e->path && e->names && e->vals && e->resp.body;
	for (size_t i = 0; ok && i < r->nseen; i++) {
		const char *v = arg_of(r->arg, r->actx, r->seen[i]);
		e->names[i] = strdup(r->seen[i]);
		e->vals[i] = v ? strdup(v) : NULL;
		e->nargs = i + 1;
		ok = e->names[i] && (!v || e->vals[i]);
	}
	if (!ok)
		centry_free(e);
	pthread_mutex_unlock(&cache_mu);
}

static unsigned dashboard_get(tk_store *s, const tk_dashboard_options *o, const char *path, tk_dashboard_arg_fn argf,
                              void *actx, tk_dashboard_response *out, req *rq);

unsigned tk_dashboard_get(tk_store *s, const tk_dashboard_options *o, const char *path, tk_dashboard_arg_fn argf,
                          void *actx, tk_dashboard_response *out)
{
	uint64_t token = 0;
	tk_error err = {0};
	/* a time relative to the present (7d) moves with it: such answers are not kept; dates and Unix
	 * seconds are fixed */
	static const char *const times[] = {"since", "until", "a_since", "a_until", "b_since", "b_until"};
	int keep = 1;
	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
		const char *v = arg_of(argf, actx, times[i]);
		size_t n = v ? strlen(v) : 0;
		if (n && strchr("dhms", v[n - 1]))
			keep = 0;
	}
	keep = keep && tk_store_changes(s, &token, &err) == 0;
	if (keep && cache_get(s, o, token, path, argf, actx, out))
		return out->status;
	req r = {0};
	/* the page's dozen answers as one view of the store (its ingest state read once at each end,
	 * not around every answer); an ingest that raced the view: the page again, each answer
	 * checked on its own */
	int is_static = strncmp(path, "/static/", 8) == 0, view = !is_static && tk_store_view_begin(s, &err) == 0;
	unsigned status = dashboard_get(s, o, path, argf, actx, out, &r);
	if (view && tk_store_view_end(s, &err) != 0) {
		tk_dashboard_response_free(out);
		r = (req){0};
		status = dashboard_get(s, o, path, argf, actx, out, &r);
	}
	if (keep && status == 200 && !is_static)
		cache_put(&r, token, path, out);
	return status;
}

static unsigned dashboard_get(tk_store *s, const tk_dashboard_options *o, const char *path, tk_dashboard_arg_fn argf,
                              void *actx, tk_dashboard_response *out, req *rq)
{
	memset(out, 0, sizeof *out);
	out->status = 200;
	out->type = "text/html; charset=utf-8";
	out->csp = csp_html;
	static const char *const statics[][2] = {{"/static/dashboard.css", "text/css; charset=utf-8"},
	                                         {"/static/dashboard.js", "text/javascript; charset=utf-8"},
	                                         {"/static/icon.svg", "image/svg+xml"},
	                                         {"/favicon.ico", "image/svg+xml"}};
	size_t si = 0;
	while (si < 4 && strcmp(path, statics[si][0]) != 0)
		si++;
	if (si < 4) {
		const char *t = si == 0 ? tk_dashboard_css : si == 1 ? tk_dashboard_js : tk_dashboard_icon;
		out->type = statics[si][1];
		out->csp = csp_none;
		out->n = strlen(t);
		out->body = malloc(out->n + 1);
		memcpy(out->body, t, out->n + 1);
		return 200;
	}
	req *rp = rq, r0 = {0};
	if (!rp)
		rp = &r0;
	*rp = (req){.s = s, .o = o, .arg = argf, .actx = actx};
#define r (*rp)
	/* the filters */
	for (size_t i = 0; i < NFILTERS; i++)
		r.q.where[filter_keys[i]] = arg(&r, tk_store_key_names[filter_keys[i]]);
	r.since = arg(&r, "since");
	if (r.since && tk_store_query_since(&r.q, r.since, o ? o->now : 0, &r.err))
		return fail(&r, out, 400, r.err.msg);
	r.until = arg(&r, "until");
	if (r.until && tk_store_query_until(&r.q, r.until, o ? o->now : 0, &r.err))
		return fail(&r, out, 400, r.err.msg);
	r.f = open_memstream(&out->body, &out->n);
	if (!r.f)
		return fail(&r, out, 500, "out of memory");
	int rc;
	static const char *const keep_kind[] = {"kind"}, *const keep_sig[] = {"kind", "sig"},
	                         *const keep_cmp[] = {"a", "b", "a_since", "a_until", "b_since", "b_until"},
	                         *const keep_trend[] = {"metric", "stat", "bucket", "bins"};
	if (strncmp(path, "/api", 4) == 0) {
		rc = api(&r, path, out);
	} else if (strcmp(path, "/") == 0) {
		page_begin(&r, "Overview", "/", NULL, 0);
		rc = overview(&r);
		page_end(&r);
	} else if (strcmp(path, "/stacks") == 0) {
		page_begin(&r, "Top stacks", "/stacks", keep_kind, 1);
		rc = stacks(&r);
		page_end(&r);
	} else if (strcmp(path, "/signature") == 0) {
		page_begin(&r, "Signature", "/signature", keep_sig, 2);
		rc = signature(&r);
		page_end(&r);
	} else if (strcmp(path, "/report") == 0) {
		page_begin(&r, "Report", "/report", NULL, 0);
		rc = report(&r);
		page_end(&r);
	} else if (strcmp(path, "/report.svg") == 0) {
		rc = report_picture(&r, "svg", out);
	} else if (strcmp(path, "/report.speedscope.json") == 0) {
		rc = report_picture(&r, "speedscope", out);
	} else if (strcmp(path, "/report.profile.json") == 0) {
		rc = report_picture(&r, "gecko", out);
	} else if (strcmp(path, "/stats.svg") == 0) {
		rc = stats_picture(&r, out);
	} else if (strcmp(path, "/trends") == 0) {
		page_begin(&r, "Trends", "/trends", keep_trend, 4);
		rc = trends(&r);
		page_end(&r);
	} else if (strcmp(path, "/trend.svg") == 0) {
		rc = trend_picture(&r, out);
	} else if (strcmp(path, "/dist.svg") == 0) {
		rc = dist_picture(&r, out);
	} else if (strcmp(path, "/compare") == 0) {
		page_begin(&r, "Compare", "/compare", keep_cmp, 6);
		rc = compare(&r);
		page_end(&r);
	} else if (strcmp(path, "/rules") == 0) {
		page_begin(&r, "Alert rules", "/rules", NULL, 0);
		rc = rules_page(&r);
		page_end(&r);
	} else if (strcmp(path, "/flame.svg") == 0) {
		rc = picture(&r, "svg", out);
	} else if (strcmp(path, "/profile.speedscope.json") == 0) {
		rc = picture(&r, "speedscope", out);
	} else if (strcmp(path, "/profile.json") == 0) {
		rc = picture(&r, "gecko", out);
	} else if (strcmp(path, "/diff.svg") == 0) {
		rc = diff_picture(&r, out);
	} else {
		rc = -3;
		tk_error_set(&r.err, "no such page");
	}
	if (fclose(r.f) && !rc)
		rc = -1, tk_error_set(&r.err, "out of memory");
	if (rc)
		return fail(&r, out, rc == -3 ? 404 : rc == -2 ? 400 : 500, r.err.msg);
	if (out->csp == csp_svg)
		svg_csp(out);
	return out->status;
#undef r
}

void tk_dashboard_response_free(tk_dashboard_response *r)
{
	free(r->body);
	r->body = NULL;
	r->n = 0;
}
