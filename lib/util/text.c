#include "util/text.h"

#include <string.h>

/* Length of the printable UTF-8 character at s (1 for printable ASCII), 0 if it must be escaped. */
static size_t clean_char(const unsigned char *s)
{
	unsigned c = s[0];
	if (c >= 0x20 && c < 0x7f)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0; /* controls, DEL, continuation bytes, overlong leads, out of range */
	size_t n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (c == 0xc2 && s[1] < 0xa0)
		return 0; /* U+0080..U+009F: C1 controls */
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90) ||
	    (c == 0xed && s[1] >= 0xa0))
		return 0; /* overlong, beyond U+10FFFF, surrogates */
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

size_t tk_json_quote(char *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	out[o++] = '"';
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		switch (*c) {
		case '"': out[o++] = '\\', out[o++] = '"'; break;
		case '\\': out[o++] = '\\', out[o++] = '\\'; break;
		case '\n': out[o++] = '\\', out[o++] = 'n'; break;
		case '\t': out[o++] = '\\', out[o++] = 't'; break;
		case '\r': out[o++] = '\\', out[o++] = 'r'; break;
		default:
			if (*c < 0x20) {
				memcpy(out + o, "\\u00", 4);
				out[o + 4] = hex[*c >> 4];
				out[o + 5] = hex[*c & 15];
				o += 6;
			} else {
				out[o++] = (char)*c;
			}
		}
	}
	out[o++] = '"';
	out[o] = 0;
	return o;
}

void tk_json_fput(FILE *f, const char *s)
{
	/* in slices, so a long name needs no allocation */
	char buf[6 * 256 + 3];
	putc('"', f);
	while (*s) {
		char slice[257];
		size_t n = strnlen(s, 256);
		memcpy(slice, s, n);
		slice[n] = 0;
		size_t k = tk_json_quote(buf, slice);
		fwrite(buf + 1, 1, k - 2, f); /* without this slice's quotes */
		s += n;
	}
	putc('"', f);
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
