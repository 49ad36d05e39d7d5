#include "util/text.h"
#include "util/mem.h"

#include <stdint.h>
#include <string.h>

int32_t tk_utf8_next(const char *str, size_t *len)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned c = s[0], n, lo = 0x80, hi = 0xbf;
	*len = 1;
	if (c < 0x80)
		return (int32_t)c;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf; /* overlong; surrogates */
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf; /* overlong; > U+10FFFF */
	else
		return -1; /* a continuation byte, an overlong lead (C0, C1) or a lead beyond U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return -1;
	uint32_t cp = c & (0x7f >> n);
	for (unsigned i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*len = i; /* the maximal subpart: one U+FFFD for the whole cut sequence */
			return -1;
		}
		cp = cp << 6 | (s[i] & 0x3f);
	}
	*len = n;
	return (int32_t)cp;
}

/* Length of the printable UTF-8 character at s (1 for printable ASCII), 0 if it must be escaped. */
static size_t clean_char(const unsigned char *s)
{
	size_t n;
	int32_t cp = tk_utf8_next((const char *)s, &n);
	if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
		return 0; /* not UTF-8, C0 and C1 controls, DEL */
	return n;
}

int tk_text_is_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t n = clean_char(p);
		if (!n)
			return 0;
		p += n;
	}
	return 1;
}

/* Length of the valid UTF-8 character at s (controls included), 0 for a byte that starts none. */
static size_t utf8_char(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0;
	size_t n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90) ||
	    (c == 0xed && s[1] >= 0xa0))
		return 0;
	return n;
}

size_t tk_utf8_repair(char *out, const char *s)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_char(p);
		if (n) {
			memcpy(out + o, p, n);
			o += n, p += n;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3); /* U+FFFD */
			o += 3, p++;
		}
	}
	out[o] = 0;
	return o;
}

size_t tk_text_escape(const char *s, char *out, size_t cap, int newline_space)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;
	while (*p) {
		size_t n = clean_char(p);
		char esc[5];
		const char *piece = (const char *)p;
		size_t plen = n;
		if (!n) {
			if (newline_space && (*p == '\n' || *p == '\r' || *p == '\t')) {
				esc[0] = ' ';
				plen = 1;
			} else {
				esc[0] = '\\', esc[1] = 'x', esc[2] = hex[*p >> 4], esc[3] = hex[*p & 15];
				plen = 4;
			}
			piece = esc;
			n = 1;
		}
		if (o + plen + 1 > cap)
			break;
		memcpy(out + o, piece, plen);
		o += plen;
		p += n;
	}
	out[o] = 0;
	return o;
}

void tk_text_fput(FILE *f, const char *s)
{
	if (tk_text_is_clean(s)) {
		fputs(s, f);
		return;
	}
	char buf[1024];
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		/* escape in slices: a slice never ends inside a character (clean_char reads ahead) */
		size_t take = 0;
		while (p[take] && take < 200) {
			size_t n = clean_char(p + take);
			take += n ? n : 1;
		}
		char slice[208];
		memcpy(slice, p, take);
		slice[take] = 0;
		tk_text_escape(slice, buf, sizeof buf, 0);
		fputs(buf, f);
		p += take;
	}
}

/* The JSON for the character at *s, written to out (at most 6 bytes); *s moves past it. */
static size_t json_char(const unsigned char **s, char *out)
{
	static const char hex[] = "0123456789abcdef";
	unsigned c = **s;
	if (c >= 0x80) {
		size_t n;
		int32_t cp = tk_utf8_next((const char *)*s, &n);
		const unsigned char *from = *s;
		*s += n;
		if (cp >= 0) {
			memcpy(out, from, n);
			return n;
		}
		memcpy(out, "\xef\xbf\xbd", 3); /* U+FFFD for each maximal ill-formed subpart */
		return 3;
	}
	(*s)++;
	switch (c) {
	case '"': memcpy(out, "\\\"", 2); return 2;
	case '\\': memcpy(out, "\\\\", 2); return 2;
	case '\n': memcpy(out, "\\n", 2); return 2;
	case '\t': memcpy(out, "\\t", 2); return 2;
	case '\r': memcpy(out, "\\r", 2); return 2;
	}
	if (c < 0x20) {
		memcpy(out, "\\u00", 4);
		out[4] = hex[c >> 4];
		out[5] = hex[c & 15];
		return 6;
	}
	out[0] = (char)c;
	return 1;
}

int tk_utf8_valid(const char *s)
{
	for (size_t n; *s; s += n)
		if (tk_utf8_next(s, &n) < 0)
			return 0;
	return 1;
}

char *tk_utf8_dup(const char *s)
{
	char *out = tk_xmalloc(3 * strlen(s) + 1), *o = out;
	for (size_t n; *s; s += n) {
		if (tk_utf8_next(s, &n) < 0)
			memcpy(o, "\xef\xbf\xbd", 3), o += 3;
		else
			memcpy(o, s, n), o += n;
	}
	*o = 0;
	return out;
}

size_t tk_json_quote(char *out, const char *s)
{
	size_t o = 0;
	out[o++] = '"';
	for (const unsigned char *c = (const unsigned char *)s; *c;)
		o += json_char(&c, out + o);
	out[o++] = '"';
	out[o] = 0;
	return o;
}

void tk_json_fput(FILE *f, const char *s)
{
	/* in pieces, so a long name needs no allocation */
	char buf[512];
	size_t o = 0;
	buf[o++] = '"';
	for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c;) {
		if (o > sizeof buf - 8) {
			fwrite(buf, 1, o, f);
			o = 0;
		}
		o += json_char(&c, buf + o);
	}
	buf[o++] = '"';
	fwrite(buf, 1, o, f);
}

size_t tk_xml_fput(FILE *f, const char *s, size_t maxchars)
{
	size_t used = 0;
	for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c && used < maxchars; used++) {
		size_t n;
		int32_t cp = tk_utf8_next((const char *)c, &n);
		switch (cp) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			/* not UTF-8, and what XML 1.0 forbids (controls but tab, U+FFFE, U+FFFF): U+FFFD */
			if (cp < 0 || (cp < 0x20 && cp != '\t') || cp == 0xfffe || cp == 0xffff)
				fputs("\xef\xbf\xbd", f);
			else
				fwrite(c, 1, n, f);
		}
		c += n;
	}
	return used;
}

const char *tk_text_shown(const char *s)
{
	static _Thread_local char bufs[8][4096];
	static _Thread_local unsigned next;
	if (!s || tk_text_is_clean(s))
		return s;
	char *b = bufs[next++ % 8];
	tk_text_escape(s, b, sizeof bufs[0], 0);
	return b;
}

size_t tk_fmt_u64(char *out, uint64_t v)
{
	char t[20];
	size_t i = sizeof t;
	do
		t[--i] = (char)('0' + v % 10);
	while (v /= 10);
	memcpy(out, t + i, sizeof t - i);
	return sizeof t - i;
}

size_t tk_fmt_hex(char *out, uint64_t v)
{
	char t[16];
	size_t i = sizeof t;
	do
		t[--i] = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	out[0] = '0', out[1] = 'x';
	memcpy(out + 2, t + i, sizeof t - i);
	return 2 + sizeof t - i;
}
