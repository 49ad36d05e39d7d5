/* Line reading for the text readers; see lines.h. */
#include <stdlib.h>
#include <string.h>

#include "read/lines.h"
#include "util/mem.h"

#define CHUNK (256 * 1024)

int tk_text_bom(const unsigned char *head, size_t n, size_t *bom_len)
{
	*bom_len = 0;
	if (n >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf)
		return *bom_len = 3, TK_TEXT_UTF8;
	if (n >= 2 && head[0] == 0xff && head[1] == 0xfe)
		return *bom_len = 2, TK_TEXT_UTF16LE;
	if (n >= 2 && head[0] == 0xfe && head[1] == 0xff)
		return *bom_len = 2, TK_TEXT_UTF16BE;
	return TK_TEXT_UTF8;
}

static size_t put_utf8(unsigned char *o, uint32_t c)
{
	if (c < 0x80)
		return o[0] = (unsigned char)c, 1;
	if (c < 0x800)
		return o[0] = (unsigned char)(0xc0 | c >> 6), o[1] = (unsigned char)(0x80 | (c & 63)), 2;
	if (c < 0x10000) {
		o[0] = (unsigned char)(0xe0 | c >> 12);
		o[1] = (unsigned char)(0x80 | (c >> 6 & 63));
		o[2] = (unsigned char)(0x80 | (c & 63));
		return 3;
	}
	o[0] = (unsigned char)(0xf0 | c >> 18);
	o[1] = (unsigned char)(0x80 | (c >> 12 & 63));
	o[2] = (unsigned char)(0x80 | (c >> 6 & 63));
	o[3] = (unsigned char)(0x80 | (c & 63));
	return 4;
}

/* Decode n bytes of UTF-16 (whole code units) into out, which holds at least n * 3 / 2 + 4 bytes.
 * *high carries a high surrogate across calls. Returns the bytes written, or (size_t)-1 on an
 * unpaired surrogate. */
static size_t utf16_decode(const unsigned char *in, size_t n, int enc, uint32_t *high, unsigned char *out)
{
	size_t o = 0;
	for (size_t i = 0; i + 1 < n; i += 2) {
		uint32_t u = enc == TK_TEXT_UTF16LE ? (uint32_t)in[i] | (uint32_t)in[i + 1] << 8
		                                    : (uint32_t)in[i] << 8 | (uint32_t)in[i + 1];
		if (*high) {
			if (u < 0xdc00 || u > 0xdfff)
				return (size_t)-1;
			o += put_utf8(out + o, 0x10000 + ((*high - 0xd800) << 10) + (u - 0xdc00));
			*high = 0;
		} else if (u >= 0xd800 && u <= 0xdbff)
			*high = u;
		else if (u >= 0xdc00 && u <= 0xdfff)
			return (size_t)-1;
		else
			o += put_utf8(out + o, u);
	}
	return o;
}

size_t tk_text_head_utf8(const unsigned char *head, size_t n, int enc, unsigned char *out, size_t cap)
{
	unsigned char tmp[8];
	uint32_t high = 0;
	size_t o = 0;
	for (size_t i = 0; i + 1 < n; i += 2) {
		size_t k = utf16_decode(head + i, 2, enc, &high, tmp);
		if (k == (size_t)-1 || o + k > cap)
			break;
		memcpy(out + o, tmp, k);
		o += k;
	}
	return o;
}

void tk_lines_init(tk_lines *l, tk_input *in, const tk_read_options *o)
{
	memset(l, 0, sizeof *l);
	l->in = in;
	l->o = o;
	l->cap = CHUNK;
	l->buf = tk_xmalloc(l->cap);
	size_t n;
	const unsigned char *head = tk_input_head(in, &n);
	l->enc = tk_text_bom(head, n, &l->skip);
	if (l->enc != TK_TEXT_UTF8)
		l->raw = tk_xmalloc(CHUNK);
}

void tk_lines_free(tk_lines *l)
{
	free(l->buf);
	free(l->raw);
	l->buf = NULL;
	l->raw = NULL;
}

/* Read into buf[len, cap): the bytes as they are, or UTF-16 decoded to UTF-8. Returns the bytes
 * added, 0 at the end, -1 with err. */
static ptrdiff_t fill(tk_lines *l, tk_error *err)
{
	for (;;) {
		if (l->enc == TK_TEXT_UTF8) {
			ptrdiff_t got = tk_input_read(l->in, l->buf + l->len, l->cap - l->len, err);
			if (got <= 0 || !l->skip)
				return got;
			size_t drop = l->skip < (size_t)got ? l->skip : (size_t)got;
			memmove(l->buf + l->len, l->buf + l->len + drop, (size_t)got - drop);
			l->skip -= drop;
			if ((size_t)got > drop)
				return got - (ptrdiff_t)drop;
			continue;
		}
		/* decoded UTF-8 is at most 3/2 of the UTF-16 bytes (+4 for a pair completed from before) */
		size_t room = l->cap - l->len;
		size_t want = room > 16 ? (room - 8) / 3 * 2 : 0;
		if (want > CHUNK - 2)
			want = CHUNK - 2;
		if (want < 2)
			return tk_error_set(err, "%s: internal: no room to decode", tk_input_name(l->in));
		memcpy(l->raw, l->pend, l->npend);
		ptrdiff_t got = tk_input_read(l->in, l->raw + l->npend, want, err);
		if (got < 0)
			return -1;
		size_t have = l->npend + (size_t)got, start = 0;
		if (l->skip) {
			start = l->skip < have ? l->skip : have;
			l->skip -= start;
		}
		if (got == 0) {
			if (have - start || l->high)
				return tk_error_set(err, "%s:%llu: the UTF-16 text ends in the middle of a character",
				                    tk_input_name(l->in), (unsigned long long)l->lineno + 1);
			return 0;
		}
		size_t whole = (have - start) & ~(size_t)1;
		size_t k = utf16_decode(l->raw + start, whole, l->enc, &l->high, (unsigned char *)l->buf + l->len);
		if (k == (size_t)-1)
			return tk_error_set(err, "%s: after line %llu: invalid UTF-16 (an unpaired surrogate)",
			                    tk_input_name(l->in), (unsigned long long)l->lineno);
		l->npend = have - start - whole;
		memcpy(l->pend, l->raw + start + whole, l->npend);
		if (k)
			return (ptrdiff_t)k;
	}
}

int tk_lines_next(tk_lines *l, const char **s, size_t *n, tk_error *err)
{
	for (;;) {
		char *start = l->buf + l->pos;
		char *nl = memchr(start, '\n', l->len - l->pos);
		if (nl || (l->eof && l->pos < l->len)) {
			size_t len = nl ? (size_t)(nl - start) : l->len - l->pos;
			l->pos += len + (nl != NULL);
			l->lineno++;
			if (memchr(start, '\0', len))
				return tk_error_set(err, "%s:%llu: NUL byte: not a text file", tk_input_name(l->in),
				                    (unsigned long long)l->lineno);
			if (len && start[len - 1] == '\r')
				len--;
			*s = start;
			*n = len;
			return 1;
		}
		if (l->eof)
			return 0;
		/* move the partial line to the front, grow if it fills the buffer */
		memmove(l->buf, start, l->len - l->pos);
		l->len -= l->pos;
		l->pos = 0;
		if (l->cap - l->len < 64) {
			l->cap *= 2;
			l->buf = tk_xrealloc(l->buf, l->cap);
		}
		ptrdiff_t got = fill(l, err);
		if (got < 0)
			return -1;
		if (got == 0)
			l->eof = 1;
		l->len += (size_t)got;
		if (l->o && l->o->progress) {
			uint64_t c = tk_input_consumed(l->in);
			if (c - l->progress >= (4u << 20) || got == 0) {
				l->progress = c;
				l->o->progress(l->o->progress_ctx, c, tk_input_total(l->in));
			}
		}
	}
}

size_t tk_head_line(const unsigned char *head, size_t n, size_t at, const char **s)
{
	if (at >= n)
		return 0;
	const char *h = (const char *)head + at;
	const char *nl = memchr(h, '\n', n - at);
	size_t len = nl ? (size_t)(nl - h) : n - at;
	*s = h;
	return len;
}

size_t tk_parse_decimal(const char *s, size_t n, uint64_t *ip, uint64_t *frac9, unsigned *fdigits)
{
	size_t i = 0;
	uint64_t v = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(s[i] - '0');
		i++;
	}
	if (i == 0)
		return 0;
	uint64_t f = 0;
	unsigned d = 0;
	if (i + 1 < n && s[i] == '.' && s[i + 1] >= '0' && s[i + 1] <= '9') {
		i++;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			if (d == 9)
				return 0; /* more precision than a nanosecond of a second: not a weight we know */
			f = f * 10 + (uint64_t)(s[i] - '0');
			d++;
			i++;
		}
	}
	for (unsigned k = d; k < 9; k++)
		f *= 10;
	*ip = v;
	*frac9 = f;
	*fdigits = d;
	return i;
}
