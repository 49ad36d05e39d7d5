/* Long text runs are handed out in pieces by the fast tokenizer (memory stays bounded); the
 * pieces, concatenated, must equal what libxml2 (the reference) reports, whatever the feed sizes
 * and wherever entity references, CR LF pairs and UTF-8 sequences fall against piece borders. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "read/xml.h"

typedef struct acc {
	char *s;
	size_t n, cap, pieces, max_piece;
} acc;

static int on_start(void *c, const char *n, size_t nl, const tk_xml_attr *a, size_t na)
{
	return 0;
}
static int on_end(void *c, const char *n, size_t nl)
{
	return 0;
}
static int on_text(void *c, const char *s, size_t n)
{
	acc *a = c;
	if (a->n + n > a->cap) {
		a->cap = (a->n + n) * 2;
		a->s = realloc(a->s, a->cap);
	}
	memcpy(a->s + a->n, s, n);
	a->n += n;
	a->pieces++;
	if (n > a->max_piece)
		a->max_piece = n;
	return 0;
}
static const tk_xml_events ev = {on_start, on_text, on_end};

static void parse(tk_xml_kind k, const char *doc, size_t n, size_t feed, acc *a)
{
	memset(a, 0, sizeof *a);
	tk_xml *x = tk_xml_new(k, &ev, a, "doc", 1);
	tk_error err;
	for (size_t i = 0; i < n; i += feed) {
		size_t m = n - i < feed ? n - i : feed;
		assert_int_equal(tk_xml_feed(x, doc + i, m, 0, &err), 0);
	}
	assert_int_equal(tk_xml_feed(x, NULL, 0, 1, &err), 0);
	tk_xml_free(x);
}

static void long_text_in_pieces(void **state)
{
	/* 3 MB of text: plain runs with entities, character references, CR LF and 2-4 byte UTF-8 */
	static const char *const bits[] = {"abc", "&amp;", "&#x1F600;", "\r\n", "\r",   "é",
	                                   "€",   "𝄞",     "&lt;&gt;",  " ",    "&#65;"};
	size_t cap = 4 << 20, n = 0;
	char *doc = malloc(cap);
	n += (size_t)sprintf(doc, "<?xml version=\"1.0\"?><r>");
	unsigned seed = 12345;
	while (n < (3 << 20)) {
		seed = seed * 1103515245 + 12345;
		const char *b = bits[(seed >> 16) % (sizeof bits / sizeof bits[0])];
		size_t l = strlen(b);
		memcpy(doc + n, b, l);
		n += l;
	}
	n += (size_t)sprintf(doc + n, "</r>");
	acc ref, fast;
	parse(TK_XML_LIBXML2, doc, n, 1 << 16, &ref);
	static const size_t feeds[] = {1 << 18, 65537, 4093};
	for (size_t f = 0; f < sizeof feeds / sizeof feeds[0]; f++) {
		parse(TK_XML_FAST, doc, n, feeds[f], &fast);
		assert_int_equal(fast.n, ref.n);
		assert_memory_equal(fast.s, ref.s, ref.n);
		assert_true(fast.pieces > 1);             /* handed out as it streams */
		assert_true(fast.max_piece < (1u << 20)); /* never the whole run at once */
		free(fast.s);
	}
	free(ref.s);
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(long_text_in_pieces)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
