/*
 * xml.h — the small event interface the xctrace and toc readers are written against, so the
 * tokenizer behind it can be swapped.
 *
 * Two tokenizers implement it:
 *   TK_XML_FAST     (default) a specialised streaming tokenizer for the XML xctrace emits
 *                   (xml_fast.c). It checks well-formedness (matching tags, attribute syntax,
 *                   duplicate attributes, one root, no stray text), validates UTF-8 and XML
 *                   character ranges, normalises line ends and attribute whitespace, and decodes
 *                   the predefined entities and numeric character references. It refuses, as
 *                   "unsupported", what xctrace never writes: a DOCTYPE (and so custom entities),
 *                   encodings other than UTF-8, and non-ASCII element or attribute names.
 *   TK_XML_LIBXML2  libxml2's push parser in SAX1 mode (xml_libxml2.c), the reference. The
 *                   differential fuzz target (tests/fuzz/fuzz_xml_diff.c) requires both to produce
 *                   identical events or both to fail.
 *
 * Measured with `make read-speed FILE=…` on 200 MB exports from bench's xcgen (CPU time, shared
 * 2-core machine): tokenizer alone fast 750–1000 MB/s, libxml2 230–280 MB/s; XML → model with
 * the xctrace reader 300–370 MB/s (fast) against 145–210 MB/s (libxml2).
 *
 * Events: start (name + attributes, values decoded), text (possibly in several pieces: the
 * consumer concatenates), end. Comments, processing instructions and the XML declaration
 * produce no events; CDATA sections arrive as text. Whitespace between elements is reported as
 * text like any other character data. A callback returns 0 to go on or -1 to stop: the
 * tokenizer then returns -1 from tk_xml_feed without touching the caller's error.
 */
#ifndef TK_READ_XML_H
#define TK_READ_XML_H

#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>

#include "tracekit/error.h"

typedef struct tk_xml_attr {
	const char *name, *value; /* not NUL-terminated */
	size_t name_len, value_len;
} tk_xml_attr;

typedef struct tk_xml_events {
	int (*start)(void *ctx, const char *name, size_t name_len, const tk_xml_attr *attrs, size_t nattrs);
	int (*text)(void *ctx, const char *s, size_t n);
	int (*end)(void *ctx, const char *name, size_t name_len);
} tk_xml_events;

typedef enum tk_xml_kind {
	TK_XML_FAST = 0,
	TK_XML_LIBXML2 = 1,
} tk_xml_kind;

typedef enum tk_xml_status {
	TK_XML_OK = 0,
	TK_XML_MALFORMED,   /* not well-formed XML */
	TK_XML_UNSUPPORTED, /* well-formed perhaps, but outside what the fast tokenizer accepts */
	TK_XML_ABORTED,     /* a callback returned -1 */
} tk_xml_status;

typedef struct tk_xml tk_xml;

/* name is used in error messages; first_line is the line number of the first byte fed (1 unless
 * the caller skipped lines of diagnostics before the document). */
tk_xml *tk_xml_new(tk_xml_kind kind, const tk_xml_events *ev, void *ctx, const char *name, uint64_t first_line);
void tk_xml_free(tk_xml *x);
/* Feed the next bytes; final = 1 on the last call (n may be 0). Returns 0, or -1 with err set to
 * "NAME:LINE:COL: problem" (unless a callback aborted). After -1, feeding again is an error. */
int tk_xml_feed(tk_xml *x, const char *data, size_t n, int final, tk_error *err);
/* Where the current event starts (1-based line and column; the column counts bytes). */
void tk_xml_position(tk_xml *x, uint64_t *line, uint64_t *col);
/* A reader's own error at the current event: "NAME:LINE:COL: message", with control characters
 * of quoted input blanked so the error stays one line. x may be NULL (then 0:0). Returns -1. */
int tk_xml_fail(tk_xml *x, const char *name, tk_error *err, const char *fmt, va_list ap);
tk_xml_status tk_xml_status_of(const tk_xml *x);
const char *tk_xml_kind_name(tk_xml_kind k); /* "fast", "libxml2" */

/* Both tokenizers refuse a tag with more attributes than this (xctrace writes a handful): libxml2
 * checks duplicate attributes pairwise, which is quadratic in their number. */
#define TK_XML_MAX_ATTRS 4096

/* ---- internal: the two implementations (xml.c dispatches) ---- */
typedef struct tk_xml_impl {
	void *(*create)(const tk_xml_events *ev, void *ctx, const char *name, uint64_t first_line);
	void (*destroy)(void *self);
	int (*feed)(void *self, const char *data, size_t n, int final, tk_error *err);
	void (*position)(void *self, uint64_t *line, uint64_t *col);
	tk_xml_status (*status)(const void *self);
} tk_xml_impl;
extern const tk_xml_impl tk_xml_fast_impl, tk_xml_libxml2_impl;
#endif
