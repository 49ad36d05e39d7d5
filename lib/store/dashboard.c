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

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "tracekit/dashboard.h"
#include "tracekit/read.h"
#include "tracekit/stats.h"
#include "tracekit/write.h"
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

typedef struct req {
	tk_store *s;
	const tk_dashboard_options *o;
	tk_dashboard_arg_fn arg;
	void *actx;
	FILE *f;
	tk_store_query q; /* the filters (where, since) */
	const char *since;
	tk_error err;
} req;

static const char *arg(req *r, const char *name)
{
	const char *v = r->arg ? r->arg(r->actx, name) : NULL;
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

/* Versions in natural order: digit runs compare as numbers ("5.10" after "5.9"). */
static int vercmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			char *ea, *eb;
			unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
			if (x != y)
				return x < y ? -1 : 1;
			a = ea, b = eb;
		} else {
			if (*a != *b)
				return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
			a++, b++;
		}
	}
	return *a ? 1 : *b ? -1 : 0;
}

static int vercmp_p(const void *a, const void *b)
{
	return vercmp(*(char *const *)a, *(char *const *)b);
}

/* ---- page frame ---- */

static const char *const nav[][2] = {
    {"/", "Overview"}, {"/stacks", "Top stacks"}, {"/compare", "Compare"}, {"/rules", "Alert rules"}, {"/api/", "API"}};

static void page_begin(req *r, const char *title, const char *path, const char *const *keep, size_t nkeep)
{
	FILE *f = r->f;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta name=\"viewport\" content=\"width=device-width\"><title>",
	      f);
	esc(f, title);
	fputs(" — tracekit</title><link rel=\"icon\" href=\"/static/icon.svg\"><link rel=\"stylesheet\" href=\"/static/dashboard.css\">"
	      "<script src=\"/static/dashboard.js\" defer></script></head><body>\n<header><span class=\"brand\">tracekit</span><nav>",
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
	fputs("\" placeholder=\"all time (7d, 12h)\"></label>", f);
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
	fputs("</main>\n<footer>tracekit fleet dashboard · read-only · <a href=\"/api/\">JSON API</a></footer>\n</body></html>\n",
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
	uint64_t sessions, diag[sizeof kinds / sizeof kinds[0]];
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
	return c ? c : vercmp(x->version, y->version);
}

static int overview(req *r)
{
	FILE *f = r->f;
	const int av[] = {TK_STORE_APP, TK_STORE_VERSION}, avs[] = {TK_STORE_APP, TK_STORE_VERSION, TK_STORE_SESSION};
	tk_store_group *gh = NULL, *gc = NULL, *gr = NULL, *gs = NULL;
	size_t nh = 0, nc = 0, nr = 0, ns = 0;
	row *rows = NULL;
	size_t n = 0, cap = 0;
	int rc = -1, have_rate = tk_store_metric_unit("hang.rate") != NULL;
	if (percentiles(r, "hang.duration", av, 2, &gh, &nh) || percentiles(r, "cpu.duration", av, 2, &gc, &nc) ||
	    percentiles(r, "hang.duration", avs, 3, &gs, &ns) || (have_rate && percentiles(r, "hang.rate", av, 2, &gr, &nr)))
		goto out;
	for (size_t i = 0; i < nh; i++)
		row_of(&rows, &n, &cap, gh[i].keys[0], gh[i].keys[1])->hang = &gh[i];
	for (size_t i = 0; i < nc; i++)
		row_of(&rows, &n, &cap, gc[i].keys[0], gc[i].keys[1])->cpu = &gc[i];
	for (size_t i = 0; i < nr; i++)
		row_of(&rows, &n, &cap, gr[i].keys[0], gr[i].keys[1])->rate = &gr[i];
	for (size_t i = 0; i < ns; i++)
		row_of(&rows, &n, &cap, gs[i].keys[0], gs[i].keys[1])->sessions++;
	if (n)
		qsort(rows, n, sizeof *rows, row_cmp);
	/* diagnostics by kind: hangs and CPU periods are counted above; the other kinds here */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 2; k < sizeof kinds / sizeof kinds[0]; k++) {
			tk_store_query q = r->q;
			q.where[TK_STORE_APP] = rows[i].app;
			q.where[TK_STORE_VERSION] = rows[i].version;
			tk_store_hang *h = NULL;
			size_t nhh = 0;
			if (top(r, kinds[k], &q, 1000000, &h, &nhh))
				goto out;
			for (size_t j = 0; j < nhh; j++)
				rows[i].diag[k] += h[j].count;
			tk_store_hangs_free(h, nhh);
		}
	/* best and worst version of each app with two or more: lowest and highest P95 hang duration */
	for (size_t i = 0; i < n;) {
		size_t j = i, best = SIZE_MAX, worst = SIZE_MAX;
		for (; j < n && strcmp(rows[j].app, rows[i].app) == 0; j++) {
			if (!rows[j].hang)
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
	fputs("<p class=\"lead\">Per app and version: sessions with hangs, Apple's hang rate (seconds of hangs per "
	      "hour in the foreground), exact hang-duration percentiles, CPU high-load periods and other "
	      "diagnostics. The best and worst version (lowest and highest P95 hang duration) are marked.</p>\n",
	      f);
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
		if (r->since) {
			fputs("&amp;since=", f);
			url(f, r->since);
		}
		fputs("\">", f);
		esc(f, w->version);
		fputs("</a></td>", f);
		cell_count(f, "sessions", w->sessions);
		if (w->rate)
			cell(f, "rate", w->rate->mean, "s/h");
		else
			cell(f, "rate", NAN, "");
		cell_count(f, "hangs", w->hang ? w->hang->count : 0);
		static const char *const pk[] = {"p50", "p90", "p95", "p99"};
		for (int k = 0; k < 4; k++)
			cell(f, pk[k], w->hang ? w->hang->q[k] : NAN, "s");
		cell_count(f, "cpu", w->cpu ? w->cpu->count : 0);
		cell(f, "cpu_p50", w->cpu ? w->cpu->q[0] : NAN, "s");
		cell(f, "cpu_p95", w->cpu ? w->cpu->q[2] : NAN, "s");
		for (size_t k = 2; k < sizeof kinds / sizeof kinds[0]; k++)
			cell_count(f, kinds[k], w->diag[k]);
		fprintf(f, "<td class=\"mark\">%s</td></tr>\n",
		        w->mark > 0 ? "<span class=\"tag good\">best</span>"
		                    : w->mark < 0 ? "<span class=\"tag bad\">worst</span>" : "");
	}
	fputs("</tbody></table>\n", f);
	if (!have_rate)
		fputs("<p class=\"note\">Hang rate needs the store's hang.rate metric (MetricKit foreground time); "
		      "shown as — until this store has it.</p>\n",
		      f);
	rc = 0;
out:
	free(rows);
	tk_store_groups_free(gh, nh);
	tk_store_groups_free(gc, nc);
	tk_store_groups_free(gr, nr);
	tk_store_groups_free(gs, ns);
	return rc;
}

/* ---- Top stacks ---- */

/* For each of the n signatures, the first and last version (index into vers) it was seen in. */
static int first_last(req *r, const char *kind, const tk_store_hang *h, size_t n, char **vers, size_t nv, size_t *first,
                      size_t *last)
{
	for (size_t i = 0; i < n; i++)
		first[i] = last[i] = SIZE_MAX;
	for (size_t v = 0; v < nv; v++) {
		tk_store_query q = r->q;
		q.where[TK_STORE_VERSION] = vers[v];
		q.since = 0; /* first seen: in any version, at any time */
		tk_store_hang *hv = NULL;
		size_t nhv = 0;
		if (top(r, kind, &q, 1000000, &hv, &nhv))
			return -1;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < nhv; j++)
				if (strcmp(h[i].signature, hv[j].signature) == 0) {
					if (first[i] == SIZE_MAX)
						first[i] = v;
					last[i] = v;
					break;
				}
		tk_store_hangs_free(hv, nhv);
	}
	return 0;
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
	size_t limit = 50;
	tk_store_hang *h = NULL;
	size_t n = 0, nv = 0;
	char **vers = NULL;
	size_t *first = NULL, *last = NULL;
	int rc = -1;
	if (top(r, kind, &r->q, limit, &h, &n))
		goto out;
	/* every version of the other filters, so a version filter still shows what is new in it */
	{
		tk_store_query keep = r->q;
		r->q.where[TK_STORE_VERSION] = NULL;
		r->q.since = 0;
		vers = values_of(r, TK_STORE_VERSION, &nv);
		r->q = keep;
	}
	first = calloc(n + 1, sizeof *first), last = calloc(n + 1, sizeof *last);
	if (first_last(r, kind, h, n, vers, nv, first, last))
		goto out;
	kind_tabs(r, "/stacks", kind);
	fprintf(f, "<p class=\"lead\">The stack signatures behind most %s reports (first five app frames, leaf first): "
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
		esc(f, first[i] < nv ? vers[first[i]] : "");
		fputs("</td><td data-k=\"last\">", f);
		esc(f, last[i] < nv ? vers[last[i]] : "");
		fputs("</td><td class=\"mark\">", f);
		if (first[i] < nv && first[i] > 0) {
			fputs("<span class=\"tag bad new\">new in ", f);
			esc(f, vers[first[i]]);
			fputs("</span>", f);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	rc = 0;
out:
	free(first);
	free(last);
	free_values(vers, nv);
	tk_store_hangs_free(h, n);
	return rc;
}

/* ---- a signature ---- */

static const tk_store_hang *find_sig(const tk_store_hang *h, size_t n, const char *sig)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(h[i].signature, sig) == 0)
			return &h[i];
	return NULL;
}

/* The signature's count and durations split by one key (version or device). */
static int split_table(req *r, const char *kind, const char *sig, int key)
{
	FILE *f = r->f;
	size_t nv = 0;
	char **v = values_of(r, key, &nv);
	fprintf(f, "<table class=\"split\" id=\"by-%s\"><thead><tr><th>%s</th><th>count</th><th>sessions</th><th>P50</th>"
	           "<th>P95</th></tr></thead><tbody>\n",
	        tk_store_key_names[key], tk_store_key_names[key]);
	int rc = 0;
	for (size_t i = 0; i < nv && !rc; i++) {
		tk_store_query q = r->q;
		q.where[key] = v[i];
		tk_store_hang *h = NULL;
		size_t n = 0;
		if (top(r, kind, &q, 1000000, &h, &n)) {
			rc = -1;
			break;
		}
		const tk_store_hang *s = find_sig(h, n, sig);
		if (s) {
			fputs("<tr><td>", f);
			esc(f, v[i]);
			fputs("</td>", f);
			cell_count(f, "count", s->count);
			cell_count(f, "sessions", s->sessions);
			cell(f, "p50", s->p50, "s");
			cell(f, "p95", s->p95, "s");
			fputs("</tr>\n", f);
		}
		tk_store_hangs_free(h, n);
	}
	fputs("</tbody></table>\n", f);
	free_values(v, nv);
	return rc;
}

static int signature(req *r)
{
	FILE *f = r->f;
	const char *kind = kind_arg(r), *sig = r->arg ? r->arg(r->actx, "sig") : NULL;
	if (!kind || !sig)
		return tk_error_set(&r->err, "a signature page wants kind= and sig="), -2;
	tk_store_hang *h = NULL;
	size_t n = 0;
	if (top(r, kind, &r->q, 1000000, &h, &n))
		return -1;
	const tk_store_hang *s = find_sig(h, n, sig);
	fputs("<p class=\"lead\">", f);
	signature_html(f, sig);
	fputs("</p>\n", f);
	if (!s) {
		fputs("<p class=\"empty\">No reports of this signature match these filters.</p>\n", f);
		tk_store_hangs_free(h, n);
		return 0;
	}
	fputs("<table id=\"summary\"><thead><tr><th>kind</th><th>count</th><th>sessions</th><th>P50</th><th>P95</th>"
	      "<th>example report</th></tr></thead><tbody><tr>",
	      f);
	fprintf(f, "<td>%s</td>", kind);
	cell_count(f, "count", s->count);
	cell_count(f, "sessions", s->sessions);
	cell(f, "p50", s->p50, "s");
	cell(f, "p95", s->p95, "s");
	fputs("<td><code class=\"example\">", f);
	esc(f, s->example);
	fputs("</code></td></tr></tbody></table>\n", f);
	/* the pictures and downloads of the signature's merged stacks */
	static const char *const what[][2] = {{"flame.svg", ""}, {"profile.speedscope.json", "speedscope"},
	                                      {"profile.json", "Firefox Profiler"}};
	fputs("<figure class=\"flame\"><img id=\"sigflame\" alt=\"flame graph of the signature\" src=\"/flame.svg?kind=", f);
	fputs(kind, f);
	fputs("&amp;sig=", f);
	url(f, sig);
	filters_qs(r, f);
	fputs("\"><figcaption>Its stacks merged (width: reports). <a id=\"openflame\" href=\"/flame.svg?kind=", f);
	fputs(kind, f);
	fputs("&amp;sig=", f);
	url(f, sig);
	filters_qs(r, f);
	fputs("\">Open the interactive flame graph</a> (zoom, search). Download: ", f);
	for (int i = 1; i < 3; i++) {
		fprintf(f, "%s<a class=\"download\" href=\"/%s?kind=%s&amp;sig=", i > 1 ? " · " : "", what[i][0], kind);
		url(f, sig);
		filters_qs(r, f);
		fprintf(f, "\">%s</a>", what[i][1]);
	}
	fputs("</figcaption></figure>\n<h2>By version</h2>\n", f);
	int rc = split_table(r, kind, sig, TK_STORE_VERSION);
	if (!rc) {
		fputs("<h2>By device</h2>\n", f);
		rc = split_table(r, kind, sig, TK_STORE_DEVICE);
	}
	tk_store_hangs_free(h, n);
	return rc;
}

/* ---- pictures and downloads of merged signatures ---- */

/* The signatures of kind (only sig when given) as a profile: each signature one stack, root first,
 * weighing its report count. NULL with r->err on failure. */
static tk_profile *sig_profile(req *r, const char *kind, const char *sig, const tk_store_query *q)
{
	tk_store_hang *h = NULL;
	size_t n = 0;
	if (top(r, kind, q, sig ? 1000000 : 200, &h, &n))
		return NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	for (size_t i = 0; i < n; i++) {
		if (sig && strcmp(h[i].signature, sig) != 0)
			continue;
		/* leaf first, ';'-joined → root first; frames hold no ';' (it separates them) */
		const char *s = *h[i].signature ? h[i].signature : "(no stack)";
		size_t sl = strlen(s);
		size_t end = sl;
		int firstf = 1;
		for (size_t k = sl + 1; k-- > 0;)
			if (k == 0 || s[k - 1] == ';') {
				if (!firstf)
					fputc(';', m);
				/* folded stacks' separators: keep frames one token (no ';' and no line breaks) */
				for (size_t c = k; c < end; c++)
					fputc(s[c] == '\n' || s[c] == '\r' ? ' ' : s[c], m);
				firstf = 0;
				end = k ? k - 1 : 0;
			}
		fprintf(m, " %llu\n", (unsigned long long)h[i].count);
	}
	fclose(m);
	tk_store_hangs_free(h, n);
	tk_profile *p = tk_profile_new();
	tk_read_options ro;
	tk_read_options_init(&ro);
	ro.keep_going = 1;
	tk_input *in = len ? tk_input_open_mem(text, len, "signatures", &r->err) : NULL;
	if (!len) {
		/* nothing: an empty profile draws an empty graph */
		free(text);
		return p;
	}
	if (!in || tk_reader_folded.read(p, in, &ro, &r->err)) {
		tk_input_close(in);
		tk_profile_free(p);
		free(text);
		return NULL;
	}
	tk_input_close(in);
	free(text);
	return p;
}

static int picture(req *r, const char *which, tk_dashboard_response *out)
{
	const char *kind = kind_arg(r), *sig = r->arg ? r->arg(r->actx, "sig") : NULL;
	if (!kind)
		return tk_error_set(&r->err, "kind: expected hang, cpu, disk, crash or launch"), -2;
	tk_profile *p = sig_profile(r, kind, sig, &r->q);
	if (!p)
		return -1;
	tk_convert_options co;
	tk_convert_options_init(&co);
	co.merge_threads = 1;
	char title[128];
	snprintf(title, sizeof title, "%s stacks%s (width: reports)", kind, sig ? ": one signature" : "");
	co.title = title;
	const tk_writer *w = tk_writer_find(which);
	int rc = w ? w->write(r->f, p, &co, &r->err) : -1;
	tk_profile_free(p);
	if (strcmp(which, "svg") == 0)
		out->type = "image/svg+xml", out->csp = csp_svg;
	else
		out->type = "application/json",
		out->disposition = strcmp(which, "gecko") == 0 ? "attachment; filename=\"signature.profile.json\""
		                                               : "attachment; filename=\"signature.speedscope.json\"";
	return rc;
}

/* ---- Compare ---- */

static int compare(req *r)
{
	FILE *f = r->f;
	const char *a = arg(r, "a"), *b = arg(r, "b");
	size_t nv = 0;
	char **v = values_of(r, TK_STORE_VERSION, &nv);
	fputs("<form class=\"pick\" method=\"get\" action=\"/compare\">", f);
	for (int side = 0; side < 2; side++) {
		fprintf(f, "<label>%s <select name=\"%s\">", side ? "against" : "version", side ? "b" : "a");
		const char *cur = side ? b : a;
		for (size_t i = 0; i < nv; i++) {
			fputs("<option value=\"", f);
			esc(f, v[i]);
			fprintf(f, "\"%s>", cur && strcmp(cur, v[i]) == 0 ? " selected" : "");
			esc(f, v[i]);
			fputs("</option>", f);
		}
		fputs("</select></label>", f);
	}
	for (size_t i = 0; i < NFILTERS; i++)
		if (filter_keys[i] != TK_STORE_VERSION && r->q.where[filter_keys[i]]) {
			fprintf(f, "<input type=\"hidden\" name=\"%s\" value=\"", tk_store_key_names[filter_keys[i]]);
			esc(f, r->q.where[filter_keys[i]]);
			fputs("\">", f);
		}
	fputs("<button type=\"submit\">Compare</button></form>\n", f);
	free_values(v, nv);
	if (!a || !b) {
		fputs("<p class=\"empty\">Pick two versions.</p>\n", f);
		return 0;
	}
	static const char *const metrics[] = {"hang.duration", "cpu.duration"};
	static const char *const pk[] = {"P50", "P90", "P95", "P99"};
	fputs("<table id=\"compare\"><thead><tr><th>metric</th><th>percentile</th><th>", f);
	esc(f, a);
	fputs("</th><th>", f);
	esc(f, b);
	fputs("</th><th>change</th></tr></thead><tbody>\n", f);
	for (size_t m = 0; m < 2; m++) {
		tk_store_group *g[2] = {0};
		size_t ng[2] = {0};
		for (int side = 0; side < 2; side++) {
			tk_store_query q = r->q;
			q.metric = metrics[m];
			q.where[TK_STORE_VERSION] = side ? b : a;
			if (tk_store_percentiles(r->s, &q, &g[side], &ng[side], &r->err)) {
				tk_store_groups_free(g[0], ng[0]);
				return -1;
			}
		}
		for (int k = 0; k < 4; k++) {
			double x = ng[0] ? g[0]->q[k] : NAN, y = ng[1] ? g[1]->q[k] : NAN;
			fprintf(f, "<tr><td>%s</td><td>%s</td>", metrics[m], pk[k]);
			cell(f, "a", x, "s");
			cell(f, "b", y, "s");
			double d = (y - x) / x * 100;
			fprintf(f, "<td class=\"num %s\">", isnan(d) || isinf(d) ? "" : d > 0 ? "worse" : "better");
			if (isnan(d) || isinf(d))
				fputs("—", f);
			else
				fprintf(f, "%+.1f %%", d);
			fputs("</td></tr>\n", f);
		}
		tk_store_groups_free(g[0], ng[0]);
		tk_store_groups_free(g[1], ng[1]);
	}
	fputs("</tbody></table>\n<p class=\"note\">The Mann-Whitney p-value needs each report's duration from the "
	      "store (not available yet); the deltas are of exact percentiles.</p>\n",
	      f);
	fputs("<h2>Hang stacks: what grew</h2>\n<figure class=\"flame\"><img alt=\"differential flame graph\" "
	      "src=\"/diff.svg?a=",
	      f);
	url(f, a);
	fputs("&amp;b=", f);
	url(f, b);
	filters_qs(r, f);
	fputs("\"><figcaption>The second version's hang stacks, red where they grew against the first "
	      "(share of reports).</figcaption></figure>\n",
	      f);
	return 0;
}

static int diff_picture(req *r, tk_dashboard_response *out)
{
	const char *a = arg(r, "a"), *b = arg(r, "b");
	if (!a || !b)
		return tk_error_set(&r->err, "diff.svg wants a= and b= (two versions)"), -2;
	tk_store_query qa = r->q, qb = r->q;
	qa.where[TK_STORE_VERSION] = a, qb.where[TK_STORE_VERSION] = b;
	tk_profile *pa = sig_profile(r, "hang", NULL, &qa), *pb = pa ? sig_profile(r, "hang", NULL, &qb) : NULL;
	int rc = -1;
	if (pa && pb)
		rc = tk_write_diff_flamegraph(r->f, pa, pb, "hang stacks: second version against the first", &r->err);
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
	return 0;
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
	if (strcmp(path, "/api/") == 0 || strcmp(path, "/api") == 0) {
		out->type = "application/json";
		fputs("{\"endpoints\": [\"/api/stats\", \"/api/top\"], \"docs\": \"docs/dashboard.md\"}\n", f);
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

unsigned tk_dashboard_get(tk_store *s, const tk_dashboard_options *o, const char *path, tk_dashboard_arg_fn argf,
                          void *actx, tk_dashboard_response *out)
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
	req r = {.s = s, .o = o, .arg = argf, .actx = actx};
	/* the filters */
	for (size_t i = 0; i < NFILTERS; i++)
		r.q.where[filter_keys[i]] = arg(&r, tk_store_key_names[filter_keys[i]]);
	r.since = arg(&r, "since");
	if (r.since && tk_store_query_since(&r.q, r.since, o ? o->now : 0, &r.err))
		return fail(&r, out, 400, r.err.msg);
	r.f = open_memstream(&out->body, &out->n);
	if (!r.f)
		return fail(&r, out, 500, "out of memory");
	int rc;
	static const char *const keep_kind[] = {"kind"}, *const keep_sig[] = {"kind", "sig"},
	                         *const keep_cmp[] = {"a", "b"};
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
	} else if (strcmp(path, "/compare") == 0) {
		page_begin(&r, "Compare", "/compare", keep_cmp, 2);
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
}

void tk_dashboard_response_free(tk_dashboard_response *r)
{
	free(r->body);
	r->body = NULL;
	r->n = 0;
}
