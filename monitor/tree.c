/* Proportion tree and string buffer of the monitor core (see internal.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void tkm_buf_put(tkm_buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (b->n + n + 1 > cap)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

void tkm_buf_puts(tkm_buf *b, const char *s)
{
	tkm_buf_put(b, s, strlen(s));
}

void tkm_buf_printf(tkm_buf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof small) {
		tkm_buf_put(b, small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		b->oom = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	tkm_buf_put(b, big, (size_t)n);
	free(big);
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong forms, no surrogates, at
 * most U+10FFFF), or 0 when the bytes there are not one; then *bad = the bytes one U+FFFD replaces:
 * the maximal subpart (a lead byte and the continuation bytes that fit it so far, else one byte),
 * the practice the Unicode standard recommends and Python's decoder follows. p is NUL-terminated. */
static size_t utf8_len(const unsigned char *p, size_t *bad)
{
	unsigned c = p[0];
	*bad = 1;
	if (c < 0x80)
		return 1;
	size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!n)
		return 0;
	/* the second byte's range depends on the first (Table 3-7 of the Unicode standard) */
	unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80, hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
	for (size_t i = 1; i < n; i++, lo = 0x80, hi = 0xbf)
		if (p[i] < lo || p[i] > hi) {
			*bad = i;
			return 0;
		}
	return n;
}

/* Thread names and symbols are bytes from the process: a byte that does not start a well-formed
 * UTF-8 sequence is written as U+FFFD, so the record is always valid UTF-8 (and JSON). */
void tkm_buf_json_str(tkm_buf *b, const char *s)
{
	tkm_buf_put(b, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t bad, n = utf8_len(p, &bad);
		if (*p == '"' || *p == '\\') {
			char e[2] = {'\\', (char)*p};
			tkm_buf_put(b, e, 2);
		} else if (*p < 0x20 || *p == 0x7f) {
			tkm_buf_printf(b, "\\u%04x", *p);
		} else if (!n) {
			tkm_buf_put(b, "\xef\xbf\xbd", 3); /* U+FFFD for the bad bytes; go on after them */
			n = bad;
		} else {
			tkm_buf_put(b, (const char *)p, n);
		}
		p += n;
	}
	tkm_buf_put(b, "\"", 1);
}

void tkm_buf_free(tkm_buf *b)
{
	free(b->p);
	*b = (tkm_buf){0};
}

void tkm_tree_init(tkm_tree *t, uint32_t max_nodes)
{
	*t = (tkm_tree){.max_nodes = max_nodes ? max_nodes : 1, .first_root = -1};
}

void tkm_tree_reset(tkm_tree *t)
{
	t->n = 0;
	t->first_root = -1;
	t->samples = 0;
	t->truncated = false;
}

void tkm_tree_free(tkm_tree *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
	t->first_root = -1;
}

static int32_t new_node(tkm_tree *t, uintptr_t frame)
{
	if (t->n >= t->max_nodes)
		return -1;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		if (cap > t->max_nodes)
			cap = t->max_nodes;
		tkm_node *v = realloc(t->v, cap * sizeof *v);
		if (!v)
			return -1;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n] = (tkm_node){.frame = frame, .count = 0, .child = -1, .next = -1};
	return (int32_t)t->n++;
}

void tkm_tree_add(tkm_tree *t, const uintptr_t *frames, int n)
{
	t->samples++;
	int32_t *link = &t->first_root; /* where a new sibling would be linked */
	for (int i = n - 1; i >= 0; i--) {
		int32_t at = *link, last = -1;
		while (at >= 0 && t->v[at].frame != frames[i]) {
			last = at;
			at = t->v[at].next;
		}
		if (at < 0) {
			at = new_node(t, frames[i]);
			if (at < 0) {
				t->truncated = true;
				return;
			}
			if (last >= 0)
				t->v[last].next = at;
			else
				*link = at;
		}
		t->v[at].count++;
		link = &t->v[at].child;
	}
}

static void node_json(const tkm_tree *t, int32_t i, double total, tkm_buf *b)
{
	const tkm_node *nd = &t->v[i];
	tkm_buf_printf(b, "{\"frame\":\"0x%llx\",\"count\":%u,\"proportion\":%.6g", (unsigned long long)nd->frame,
	               nd->count, total > 0 ? nd->count / total : 0.0);
	if (nd->child >= 0) {
		tkm_buf_puts(b, ",\"children\":[");
		for (int32_t c = nd->child; c >= 0; c = t->v[c].next) {
			node_json(t, c, total, b);
			if (t->v[c].next >= 0)
				tkm_buf_put(b, ",", 1);
		}
		tkm_buf_put(b, "]", 1);
	}
	tkm_buf_put(b, "}", 1);
}

void tkm_tree_json(const tkm_tree *t, tkm_buf *b)
{
	double total = 0;
	for (int32_t r = t->first_root; r >= 0; r = t->v[r].next)
		total += t->v[r].count;
	tkm_buf_put(b, "[", 1);
	for (int32_t r = t->first_root; r >= 0; r = t->v[r].next) {
		node_json(t, r, total, b);
		if (t->v[r].next >= 0)
			tkm_buf_put(b, ",", 1);
	}
	tkm_buf_put(b, "]", 1);
}

bool tkm_backoff_reports(uint32_t n)
{
	uint32_t a = 1, b = 2;
	while (a < n) {
		uint32_t c = a + b;
		a = b;
		b = c;
	}
	return a == n;
}
