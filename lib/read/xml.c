/* Dispatch from the tk_xml interface to one of the tokenizers (see xml.h). */
#include <stdio.h>
#include <stdlib.h>

#include "read/xml.h"
#include "util/mem.h"

struct tk_xml {
	const tk_xml_impl *impl;
	void *self;
};

tk_xml *tk_xml_new(tk_xml_kind kind, const tk_xml_events *ev, void *ctx, const char *name, uint64_t first_line)
{
	tk_xml *x = tk_xmalloc(sizeof *x);
	x->impl = kind == TK_XML_LIBXML2 ? &tk_xml_libxml2_impl : &tk_xml_fast_impl;
	x->self = x->impl->create(ev, ctx, name, first_line);
	return x;
}

void tk_xml_free(tk_xml *x)
{
	if (!x)
		return;
	x->impl->destroy(x->self);
	free(x);
}

int tk_xml_feed(tk_xml *x, const char *data, size_t n, int final, tk_error *err)
{
	return x->impl->feed(x->self, data, n, final, err);
}

void tk_xml_position(tk_xml *x, uint64_t *line, uint64_t *col)
{
	x->impl->position(x->self, line, col);
}

int tk_xml_fail(tk_xml *x, const char *name, tk_error *err, const char *fmt, va_list ap)
{
	char msg[400];
	vsnprintf(msg, sizeof msg, fmt, ap);
	for (char *c = msg; *c; c++) /* quoted input must not break the one-line error */
		if ((unsigned char)*c < 0x20)
			*c = ' ';
	uint64_t line = 0, col = 0;
	if (x)
		tk_xml_position(x, &line, &col);
	return tk_error_set(err, "%s:%llu:%llu: %s", name, (unsigned long long)line, (unsigned long long)col, msg);
}

tk_xml_status tk_xml_status_of(const tk_xml *x)
{
	return x->impl->status(x->self);
}

const char *tk_xml_kind_name(tk_xml_kind k)
{
	return k == TK_XML_LIBXML2 ? "libxml2" : "fast";
}
