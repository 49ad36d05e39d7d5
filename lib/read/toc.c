/*
 * The `xctrace export --toc` reader: a streaming pass that keeps only the run summaries and the
 * table list (see include/tracekit/toc.h). `<environment>` and process arguments are skipped on
 * purpose: they can carry secrets.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/internal.h"
#include "read/xml.h"
#include "tracekit/toc.h"
#include "util/mem.h"

#define MAX_DEPTH 256

typedef struct tr {
	tk_toc *toc;
	tk_error *err;
	const char *name;
	tk_xml *x;
	/* element path: the last few names matter */
	char **path;
	size_t depth, cappath;
	int skip_depth; /* inside <environment> when > 0 */
	char *text;
	size_t ntext, captext;
	int root_seen;
	size_t capruns, captables, capprocs;
} tr;

static int fail(tr *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(tr *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = tk_xml_fail(t->x, t->name, t->err, fmt, ap);
	va_end(ap);
	return rc;
}

static int is(const char *s, size_t l, const char *lit)
{
	return strlen(lit) == l && memcmp(s, lit, l) == 0;
}

/* path[depth - k] equals lit (k = 1 is the current element) */
static int at(const tr *t, size_t k, const char *lit)
{
	return t->depth >= k && strcmp(t->path[t->depth - k], lit) == 0;
}

static char *dupv(const tk_xml_attr *a)
{
	return tk_xstrndup(a->value, a->value_len);
}

/* Repeated elements (two <device>s …) replace earlier values instead of leaking them. */
static void setv(char **slot, const tk_xml_attr *a)
{
	free(*slot);
	*slot = dupv(a);
}

static const tk_xml_attr *attr(const tk_xml_attr *a, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (is(a[i].name, a[i].name_len, name))
			return &a[i];
	return NULL;
}

static int64_t to_pid(const tk_xml_attr *a)
{
	if (!a || !a->value_len || a->value_len > 18)
		return -1;
	char buf[24];
	memcpy(buf, a->value, a->value_len);
	buf[a->value_len] = 0;
	char *end;
	long long v = strtoll(buf, &end, 10);
	return *end ? -1 : (int64_t)v;
}

static tk_toc_run *cur_run(tr *t)
{
	return t->toc->nruns ? &t->toc->runs[t->toc->nruns - 1] : NULL;
}

static void set_process(tk_toc_process *p, const tk_xml_attr *a, size_t n, int target)
{
	const tk_xml_attr *v;
	p->pid = to_pid(attr(a, n, "pid"));
	if ((v = attr(a, n, "name")))
		setv(&p->name, v);
	if ((v = attr(a, n, "path")))
		setv(&p->path, v);
	if (target && (v = attr(a, n, "type")))
		setv(&p->type, v);
}

static int on_start(void *ctx, const char *name, size_t nl, const tk_xml_attr *a, size_t na)
{
	tr *t = ctx;
	if (t->depth >= MAX_DEPTH)
		return fail(t, "elements nested deeper than %d", MAX_DEPTH);
	if (!t->root_seen) {
		t->root_seen = 1;
		if (!is(name, nl, "trace-toc"))
			return fail(t, "not a table of contents: the root element is <%.*s>, not <trace-toc>",
			            (int)(nl > 60 ? 60 : nl), name);
	}
	TK_GROW(t->path, t->cappath, t->depth + 1);
	t->path[t->depth++] = tk_xstrndup(name, nl);
	t->ntext = 0;
	if (t->skip_depth || is(name, nl, "environment")) {
		t->skip_depth++;
		return 0;
	}
	tk_toc *toc = t->toc;
	tk_toc_run *r = cur_run(t);
	if (at(t, 1, "run") && at(t, 2, "trace-toc")) {
		TK_GROW(toc->runs, t->capruns, toc->nruns + 1);
		r = &toc->runs[toc->nruns++];
		memset(r, 0, sizeof *r);
		r->duration = -1;
		r->target.pid = -1;
		t->captables = t->capprocs = 0;
		const tk_xml_attr *n = attr(a, na, "number");
		r->number = n ? (int)to_pid(n) : (int)toc->nruns;
		return 0;
	}
	if (!r)
		return 0;
	if (at(t, 1, "device") && at(t, 2, "target")) {
		const tk_xml_attr *v;
		if ((v = attr(a, na, "name")))
			setv(&r->device_name, v);
		if ((v = attr(a, na, "model")))
			setv(&r->device_model, v);
		if ((v = attr(a, na, "platform")))
			setv(&r->device_platform, v);
		if ((v = attr(a, na, "os-version")))
			setv(&r->device_os, v);
		if ((v = attr(a, na, "uuid")))
			setv(&r->device_uuid, v);
	} else if (at(t, 1, "process") && at(t, 2, "target")) {
		set_process(&r->target, a, na, 1);
	} else if (at(t, 1, "process") && at(t, 2, "processes")) {
		TK_GROW(r->processes, t->capprocs, r->nprocesses + 1);
		tk_toc_process *p = &r->processes[r->nprocesses++];
		memset(p, 0, sizeof *p);
		set_process(p, a, na, 0);
	} else if (at(t, 1, "table") && at(t, 2, "data")) {
		TK_GROW(r->tables, t->captables, r->ntables + 1);
		tk_toc_table *tb = &r->tables[r->ntables++];
		memset(tb, 0, sizeof *tb);
		tb->attrs = tk_xcalloc(na ? na : 1, sizeof *tb->attrs);
		for (size_t i = 0; i < na; i++) {
			tb->attrs[i].name = tk_xstrndup(a[i].name, a[i].name_len);
			tb->attrs[i].value = dupv(&a[i]);
			if (is(a[i].name, a[i].name_len, "schema") && !tb->schema)
				tb->schema = tb->attrs[i].value;
		}
		tb->nattrs = na;
	}
	return 0;
}

static int on_text(void *ctx, const char *s, size_t n)
{
	tr *t = ctx;
	if (t->skip_depth || !at(t, 2, "summary"))
		return 0;
	if (t->ntext + n > (1 << 20)) /* summary values are dates and names: bound what one may hold */
		return fail(t, "<%s>: text longer than %d bytes", t->path[t->depth - 1], 1 << 20);
	TK_GROW(t->text, t->captext, t->ntext + n + 1);
	memcpy(t->text + t->ntext, s, n);
	t->ntext += n;
	t->text[t->ntext] = 0;
	return 0;
}

static int on_end(void *ctx, const char *name, size_t nl)
{
	tr *t = ctx;
	tk_toc_run *r = cur_run(t);
	if (!t->skip_depth && r && at(t, 2, "summary") && at(t, 3, "info")) {
		const char *e = t->path[t->depth - 1];
		char **slot = NULL;
		if (strcmp(e, "start-date") == 0)
			slot = &r->start_date;
		else if (strcmp(e, "end-date") == 0)
			slot = &r->end_date;
		else if (strcmp(e, "end-reason") == 0)
			slot = &r->end_reason;
		else if (strcmp(e, "template-name") == 0)
			slot = &r->template_name;
		else if (strcmp(e, "instruments-version") == 0)
			slot = &r->instruments_version;
		else if (strcmp(e, "duration") == 0) {
			char *end;
			double d = t->ntext ? strtod(t->text, &end) : -1;
			if (!t->ntext || *end || d < 0)
				return fail(t, "<duration>: expected seconds, found \"%.*s\"",
				            (int)(t->ntext > 40 ? 40 : t->ntext), t->ntext ? t->text : "");
			r->duration = d;
		}
		if (slot && !*slot)
			*slot = tk_xstrndup(t->ntext ? t->text : "", t->ntext);
	}
	if (t->skip_depth)
		t->skip_depth--;
	t->ntext = 0;
	free(t->path[--t->depth]);
	return 0;
}

static const tk_xml_events toc_events = {on_start, on_text, on_end};

void tk_toc_free(tk_toc *toc)
{
	if (!toc)
		return;
	for (size_t i = 0; i < toc->nruns; i++) {
		tk_toc_run *r = &toc->runs[i];
		free(r->device_name);
		free(r->device_model);
		free(r->device_platform);
		free(r->device_os);
		free(r->device_uuid);
		free(r->target.name);
		free(r->target.path);
		free(r->target.type);
		free(r->start_date);
		free(r->end_date);
		free(r->end_reason);
		free(r->template_name);
		free(r->instruments_version);
		for (size_t k = 0; k < r->nprocesses; k++) {
			free(r->processes[k].name);
			free(r->processes[k].path);
			free(r->processes[k].type);
		}
		free(r->processes);
		for (size_t k = 0; k < r->ntables; k++) {
			for (size_t a = 0; a < r->tables[k].nattrs; a++) {
				free(r->tables[k].attrs[a].name);
				free(r->tables[k].attrs[a].value);
			}
			free(r->tables[k].attrs);
		}
		free(r->tables);
	}
	free(toc->runs);
	free(toc);
}

tk_toc *tk_toc_read(tk_input *in, tk_error *err)
{
	tr t;
	memset(&t, 0, sizeof t);
	t.toc = tk_xcalloc(1, sizeof *t.toc);
	t.err = err;
	t.name = tk_input_name(in);
	char *buf = NULL;
	size_t len = 0, start = 0;
	uint64_t lines = 0;
	int ok = 0;
	if (tk_xctrace_skip_preamble(in, &buf, &len, &start, &lines, err) < 0)
		goto out;
	t.x = tk_xml_new(TK_XML_FAST, &toc_events, &t, t.name, 1 + lines);
	if (tk_xml_feed(t.x, buf + start, len - start, 0, err) < 0)
		goto out;
	buf = tk_xrealloc(buf, 65536);
	for (;;) {
		ptrdiff_t got = tk_input_read(in, buf, 65536, err);
		if (got < 0)
			goto out;
		if (tk_xml_feed(t.x, buf, (size_t)got, got == 0, err) < 0)
			goto out;
		if (got == 0)
			break;
	}
	ok = 1;
out:
	free(buf);
	tk_xml_free(t.x);
	while (t.depth)
		free(t.path[--t.depth]);
	free(t.path);
	free(t.text);
	if (!ok) {
		tk_toc_free(t.toc);
		return NULL;
	}
	return t.toc;
}

tk_toc *tk_toc_read_path(const char *path, tk_error *err)
{
	tk_input *in = tk_input_open(path, err);
	if (!in)
		return NULL;
	tk_toc *toc = tk_toc_read(in, err);
	tk_input_close(in);
	return toc;
}
