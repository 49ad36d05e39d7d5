/*
 * Differential libFuzzer target: the fast tokenizer against libxml2 (the reference) on the same
 * bytes. Both must fail, or both must succeed with identical events (adjacent text pieces
 * joined). Inputs the fast tokenizer refuses as "unsupported" by design (DOCTYPE, non-UTF-8
 * encodings, non-ASCII names; see xml.h) are skipped. Feeding is split at a fuzzer-chosen point
 * so that tokens crossing chunk boundaries are exercised.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/xml.h"

typedef struct rec {
	char *s;
	size_t n, cap;
	int in_text;
} rec;

static void put(rec *r, const void *p, size_t n)
{
	if (r->n + n > r->cap) {
		r->cap = (r->n + n) * 2 + 64;
		r->s = realloc(r->s, r->cap);
	}
	memcpy(r->s + r->n, p, n);
	r->n += n;
}

static void put_len(rec *r, char tag, const char *s, size_t n)
{
	put(r, &tag, 1);
	put(r, &n, sizeof n);
	put(r, s, n);
}

static int on_start(void *c, const char *n, size_t l, const tk_xml_attr *a, size_t na)
{
	rec *r = c;
	r->in_text = 0;
	put_len(r, 'S', n, l);
	for (size_t i = 0; i < na; i++) {
		put_len(r, 'A', a[i].name, a[i].name_len);
		put_len(r, 'V', a[i].value, a[i].value_len);
	}
	return 0;
}

static int on_text(void *c, const char *s, size_t n)
{
	rec *r = c;
	/* text may arrive in pieces: record it as one run */
	if (!r->in_text) {
		put(r, "T", 1);
		r->in_text = 1;
	}
	put(r, s, n);
	return 0;
}

static int on_end(void *c, const char *n, size_t l)
{
	rec *r = c;
	r->in_text = 0;
	put_len(r, 'E', n, l);
	return 0;
}

static const tk_xml_events ev = {on_start, on_text, on_end};

static int run(tk_xml_kind kind, const uint8_t *d, size_t n, size_t split, rec *r, tk_xml_status *st)
{
	tk_error err;
	tk_xml *x = tk_xml_new(kind, &ev, r, "diff.xml", 1);
	int rc = tk_xml_feed(x, (const char *)d, split, 0, &err);
	if (rc == 0)
		rc = tk_xml_feed(x, (const char *)d + split, n - split, 1, &err);
	*st = tk_xml_status_of(x);
	tk_xml_free(x);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t split = data[0] % (size);
	data++;
	size--;
	if (split > size)
		split = size;
	rec a = {0}, b = {0};
	tk_xml_status sa, sb;
	int ra = run(TK_XML_FAST, data, size, split, &a, &sa);
	int rb = run(TK_XML_LIBXML2, data, size, split, &b, &sb);
	if (sa == TK_XML_UNSUPPORTED || sb == TK_XML_UNSUPPORTED)
		goto out;
	if ((ra < 0) != (rb < 0)) {
		fprintf(stderr, "fast %s, libxml2 %s\n", ra < 0 ? "failed" : "succeeded",
		        rb < 0 ? "failed" : "succeeded");
		abort();
	}
	if (ra == 0 && (a.n != b.n || memcmp(a.s, b.s, a.n) != 0)) {
		fprintf(stderr, "events differ\n");
		abort();
	}
out:
	free(a.s);
	free(b.s);
	return 0;
}
