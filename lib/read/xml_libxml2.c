/*
 * The reference tokenizer: libxml2's push parser in SAX1 mode (no namespace processing, so names
 * and xmlns attributes arrive exactly as written, like the fast tokenizer reports them).
 *
 * A DOCTYPE is refused here too (the internalSubset callback stops the parser) so that both
 * tokenizers agree that custom entities are out of scope.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/parserInternals.h>

#include "read/xml.h"
#include "util/mem.h"

typedef struct lx {
	const tk_xml_events *ev;
	void *ctx;
	char *name;
	xmlParserCtxtPtr p;
	uint64_t first_line;
	tk_xml_status status;
	int doctype;
	tk_xml_attr *attrs;
	size_t capattrs;
	/* attribute counting ahead of libxml2 (see count_attrs) */
	int scan;   /* 0 outside tags, 1 after '<', 2 in a start tag, 3 in a quoted value */
	char quote; /* the quote of the value */
	size_t natts;
} lx;

/* Count the attributes of every start tag in the bytes about to be fed, so that a tag with
 * thousands of them is refused before libxml2's pairwise duplicate check spends minutes on it.
 * Returns 0, or -1 when a tag has more than TK_XML_MAX_ATTRS. */
static int count_attrs(lx *x, const char *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = d[i];
		switch (x->scan) {
		case 0: {
			const char *lt = memchr(d + i, '<', n - i);
			if (!lt)
				return 0;
			i = (size_t)(lt - d);
			x->scan = 1;
			break;
		}
		case 1:
			x->scan = c == '!' || c == '?' || c == '/' || c == '>' ? 0 : 2;
			x->natts = 0;
			break;
		case 2:
			if (c == '"' || c == '\'') {
				x->quote = c;
				x->scan = 3;
			} else if (c == '=') {
				if (++x->natts > TK_XML_MAX_ATTRS)
					return -1;
			} else if (c == '>') {
				x->scan = 0;
			}
			break;
		case 3:
			if (c == x->quote)
				x->scan = 2;
			break;
		}
	}
	return 0;
}

static void lx_stop(lx *x, tk_xml_status st)
{
	if (x->status == TK_XML_OK)
		x->status = st;
	xmlStopParser(x->p);
}

static void on_start(void *ud, const xmlChar *name, const xmlChar **atts)
{
	lx *x = ud;
	if (x->status != TK_XML_OK)
		return;
	size_t n = 0;
	if (atts)
		while (atts[2 * n])
			n++;
	TK_GROW(x->attrs, x->capattrs, n + 1);
	for (size_t i = 0; i < n; i++) {
		const char *an = (const char *)atts[2 * i], *av = (const char *)atts[2 * i + 1];
		if (!av)
			av = "";
		x->attrs[i] = (tk_xml_attr){an, av, strlen(an), strlen(av)};
	}
	if (x->ev->start(x->ctx, (const char *)name, strlen((const char *)name), x->attrs, n) < 0)
		lx_stop(x, TK_XML_ABORTED);
}

static void on_end(void *ud, const xmlChar *name)
{
	lx *x = ud;
	if (x->status != TK_XML_OK)
		return;
	if (x->ev->end(x->ctx, (const char *)name, strlen((const char *)name)) < 0)
		lx_stop(x, TK_XML_ABORTED);
}

static void on_text(void *ud, const xmlChar *s, int len)
{
	lx *x = ud;
	if (x->status != TK_XML_OK || len <= 0)
		return;
	if (x->ev->text(x->ctx, (const char *)s, (size_t)len) < 0)
		lx_stop(x, TK_XML_ABORTED);
}

static void on_subset(void *ud, const xmlChar *name, const xmlChar *eid, const xmlChar *sid)
{
	lx *x = ud;
	x->doctype = 1;
	lx_stop(x, TK_XML_UNSUPPORTED);
}

/* libxml2 prints errors through these by default; errors are read from the context instead. */
static void quiet(void *ctx, const char *msg, ...)
{
}

static void *lx_create(const tk_xml_events *ev, void *ctx, const char *name, uint64_t first_line)
{
	lx *x = tk_xcalloc(1, sizeof *x);
	x->ev = ev;
	x->ctx = ctx;
	x->name = tk_xstrdup(name);
	x->first_line = first_line ? first_line : 1;
	xmlSAXHandler sax;
	memset(&sax, 0, sizeof sax);
	sax.startElement = on_start;
	sax.endElement = on_end;
	sax.characters = on_text;
	sax.ignorableWhitespace = on_text;
	sax.cdataBlock = on_text;
	sax.internalSubset = on_subset;
	sax.warning = quiet;
	sax.error = quiet;
	sax.fatalError = quiet;
	sax.initialized = 1; /* not XML_SAX2_MAGIC: SAX1 callbacks */
	/* Some libxml2 errors (encoding conversion) bypass the SAX handlers and print through the
	 * generic error function; the library never prints, so silence it (libxml2 keeps it per
	 * thread). */
	xmlSetGenericErrorFunc(NULL, quiet);
	/* libxml2 must be initialised once before threads parse (its global state is made lazily) */
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, xmlInitParser);
	x->p = xmlCreatePushParserCtxt(&sax, x, NULL, 0, name);
	if (x->p) {
		/* Large exports have long text runs (text-addresses) and many nodes; NONET keeps the
		 * parser from fetching anything. NOENT makes SAX1 hand out decoded attribute values
		 * ("&amp;" would otherwise arrive as "&#38;"); with DOCTYPEs refused there is no entity
		 * beyond the predefined ones to expand. */
		xmlCtxtUseOptions(x->p, XML_PARSE_HUGE | XML_PARSE_NONET | XML_PARSE_NOENT);
		x->p->linenumbers = 1;
	}
	return x;
}

static void lx_destroy(void *self)
{
	lx *x = self;
	if (x->p) {
		if (x->p->myDoc)
			xmlFreeDoc(x->p->myDoc);
		xmlFreeParserCtxt(x->p);
	}
	free(x->attrs);
	free(x->name);
	free(x);
}

static void lx_position(void *self, uint64_t *line, uint64_t *col)
{
	lx *x = self;
	*line = x->first_line;
	*col = 1;
	if (x->p && x->p->input) {
		*line = x->first_line - 1 + (uint64_t)(x->p->input->line > 0 ? x->p->input->line : 1);
		*col = (uint64_t)(x->p->input->col > 0 ? x->p->input->col : 1);
	}
}

static int lx_feed(void *self, const char *data, size_t n, int final, tk_error *err)
{
	lx *x = self;
	if (!x->p)
		return tk_error_set(err, "%s: cannot create the libxml2 parser", x->name);
	if (x->status != TK_XML_OK) {
		if (x->status == TK_XML_ABORTED)
			return -1;
		return tk_error_set(err, "%s: parsing already failed", x->name);
	}
	if (count_attrs(x, data, n) < 0) {
		uint64_t line, col;
		lx_position(x, &line, &col);
		x->status = TK_XML_UNSUPPORTED;
		return tk_error_set(err, "%s:%llu:%llu: more than %d attributes in one tag", x->name,
		                    (unsigned long long)line, (unsigned long long)col, TK_XML_MAX_ATTRS);
	}
	/* xmlParseChunk takes an int size */
	do {
		size_t k = n > (1u << 30) ? (1u << 30) : n;
		int last = final && k == n;
		int rc = xmlParseChunk(x->p, data, (int)k, last);
		data += k;
		n -= k;
		if (x->status == TK_XML_ABORTED)
			return -1;
		if (x->status == TK_XML_UNSUPPORTED || rc != 0 || !x->p->wellFormed) {
			uint64_t line, col;
			lx_position(x, &line, &col);
			if (x->doctype)
				return tk_error_set(err, "%s:%llu:%llu: a DOCTYPE is not supported", x->name,
				                    (unsigned long long)line, (unsigned long long)col);
			x->status = TK_XML_MALFORMED;
			const xmlError *e = xmlCtxtGetLastError(x->p);
			char msg[256];
			snprintf(msg, sizeof msg, "%s", e && e->message ? e->message : "malformed XML");
			size_t ml = strlen(msg);
			while (ml && (msg[ml - 1] == '\n' || msg[ml - 1] == ' '))
				msg[--ml] = 0;
			for (size_t c = 0; c < ml; c++) /* errors are one line */
				if (msg[c] == '\n' || msg[c] == '\r')
					msg[c] = ' ';
			if (e && e->line > 0) {
				line = x->first_line - 1 + (uint64_t)e->line;
				col = e->int2 > 0 ? (uint64_t)e->int2 : col;
			}
			return tk_error_set(err, "%s:%llu:%llu: %s", x->name, (unsigned long long)line,
			                    (unsigned long long)col, msg);
		}
	} while (n);
	return 0;
}

static tk_xml_status lx_status(const void *self)
{
	return ((const lx *)self)->status;
}

const tk_xml_impl tk_xml_libxml2_impl = {lx_create, lx_destroy, lx_feed, lx_position, lx_status};
