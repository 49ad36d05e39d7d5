/*
 * The fast streaming tokenizer for the XML that xctrace writes (see xml.h for what it accepts).
 *
 * Bytes are appended to one buffer; complete tokens (a tag, a text run, a comment …) are parsed
 * in place and consumed, and the incomplete tail is moved to the front before the next feed. A
 * token is only parsed once it is complete, so attribute values and text can be decoded in place
 * (decoding never lengthens them) and handed out without copies. A token that spans many feeds
 * is not rescanned on every feed: parsing resumes only once the buffer has doubled past it, which
 * keeps huge text runs linear.
 *
 * Well-formedness rules follow XML 1.0 as libxml2 applies them, so that the differential fuzz
 * target can demand identical events from both.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "read/xml.h"
#include "util/mem.h"

/* A tag, comment, processing instruction or CDATA section larger than this is refused: each is
 * buffered whole, and xctrace writes none near this size. Text runs are streamed instead (see
 * parse_text), so only these bound the buffer: memory never grows with the document. */
#define MAX_TOKEN ((size_t)16 << 20)
/* A pending text run is handed out in pieces once it is this long. */
#define TEXT_PIECE ((size_t)64 << 10)

enum { ST_START, ST_PROLOG, ST_CONTENT, ST_EPILOG };
enum { NEED_MORE = 1 };

typedef struct fx {
	const tk_xml_events *ev;
	void *ctx;
	char *name;
	char *buf;
	size_t len, cap, pos;
	size_t retry_at;   /* don't try the pending token again until len reaches this */
	uint64_t base_abs; /* absolute offset of buf[0] */
	/* line accounting: newlines before abs offset counted_abs have been counted */
	uint64_t counted_abs, line, line_start_abs;
	uint64_t tok_abs; /* absolute offset of the current token, for positions */
	int state;
	int seen_bom_check;
	tk_xml_status status;
	/* open element names: concatenated, with offsets */
	char *names;
	size_t names_len, names_cap;
	size_t *name_off;
	size_t depth, name_off_cap;
	tk_xml_attr *attrs;
	size_t capattrs;
	/* attribute value spans during a tag scan: (offset, len, needs decode) */
	struct span {
		size_t name_off, name_len, val_off, val_len;
		int decode;
	} * spans;
	size_t capspans;
} fx;

/* ---- character classes ---- */

enum {
	C_OK = 0, /* ordinary ASCII */
	C_LT,     /* < */
	C_AMP,    /* & */
	C_CR,     /* \r */
	C_WS,     /* \t \n (significant in attribute values) */
	C_BAD,    /* control characters not allowed in XML */
	C_HI,     /* >= 0x80: UTF-8 sequence */
	C_RSQB,   /* ] (for ]]> in text) */
	C_QUOT,   /* " */
	C_APOS,   /* ' */
};

/* The tables are constants built by the preprocessor: nothing is initialised at run time, so any
 * number of tokenizers may run in parallel threads. */
#define CLS(c)                                                                                                         \
	((c) == '\t' || (c) == '\n' ? C_WS                                                                             \
	 : (c) == '\r'              ? C_CR                                                                             \
	 : (c) < 0x20               ? C_BAD                                                                            \
	 : (c) >= 0x80              ? C_HI                                                                             \
	 : (c) == '<'               ? C_LT                                                                             \
	 : (c) == '&'               ? C_AMP                                                                            \
	 : (c) == ']'               ? C_RSQB                                                                           \
	 : (c) == '"'               ? C_QUOT                                                                           \
	 : (c) == '\''              ? C_APOS                                                                           \
	                            : C_OK)
#define NAMESTART(c) (((c) >= 'A' && (c) <= 'Z') || ((c) >= 'a' && (c) <= 'z') || (c) == '_' || (c) == ':')
#define NAMECHAR(c) (NAMESTART(c) || ((c) >= '0' && (c) <= '9') || (c) == '.' || (c) == '-')
#define T4(F, b) F(b), F((b) + 1), F((b) + 2), F((b) + 3)
#define T16(F, b) T4(F, b), T4(F, (b) + 4), T4(F, (b) + 8), T4(F, (b) + 12)
#define T64(F, b) T16(F, b), T16(F, (b) + 16), T16(F, (b) + 32), T16(F, (b) + 48)
#define T256(F) T64(F, 0), T64(F, 64), T64(F, 128), T64(F, 192)

static const unsigned char cls[256] = {T256(CLS)};
static const unsigned char namestart[256] = {T256(NAMESTART)};
static const unsigned char namechar[256] = {T256(NAMECHAR)};

/* Length of the valid UTF-8 sequence at s (s[0] >= 0x80) that is an XML Char, 0 if invalid,
 * -1 if it may be valid but runs past end. */
static int utf8_len(const unsigned char *s, const unsigned char *end)
{
	unsigned c = s[0];
	int n;
	uint32_t cp;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
		cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		cp = c & 0x0F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (int i = 1; i < n; i++) {
		if (s + i >= end)
			return -1;
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0; /* overlong or out of range */
	if ((cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF)
		return 0; /* surrogates and the two non-characters are not XML Chars */
	return n;
}

static int is_xml_char(uint32_t cp)
{
	return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
	       (cp >= 0x10000 && cp <= 0x10FFFF);
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* ---- vector scanning ----
 * Skip bytes that need no attention 16 at a time: printable ASCII other than the few special
 * characters of the context. Control characters and bytes >= 0x80 are signed-less-than 0x20, so
 * one compare catches both. The scalar loops after these handle whatever stopped them. */
#ifdef __SSE2__
#include <emmintrin.h>
static inline size_t skip_plain3(const unsigned char *b, size_t i, size_t end, char c1, char c2, char c3)
{
	const __m128i k1 = _mm_set1_epi8(c1), k2 = _mm_set1_epi8(c2), k3 = _mm_set1_epi8(c3), lo = _mm_set1_epi8(0x20);
	while (i + 16 <= end) {
		__m128i v = _mm_loadu_si128((const __m128i *)(b + i));
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, k1), _mm_cmpeq_epi8(v, k2)),
		                         _mm_or_si128(_mm_cmpeq_epi8(v, k3), _mm_cmplt_epi8(v, lo)));
		int bits = _mm_movemask_epi8(m);
		if (bits)
			return i + (size_t)__builtin_ctz((unsigned)bits);
		i += 16;
	}
	return i;
}
#else
static inline size_t skip_plain3(const unsigned char *b, size_t i, size_t end, char c1, char c2, char c3)
{
	return i;
}
#endif

/* ---- positions and errors ---- */

static void count_lines_to(fx *x, uint64_t abs)
{
	if (abs <= x->counted_abs)
		return;
	const char *p = x->buf + (x->counted_abs - x->base_abs), *end = x->buf + (abs - x->base_abs);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		x->line++;
		x->line_start_abs = x->base_abs + (uint64_t)(nl + 1 - x->buf);
		p = nl + 1;
	}
	x->counted_abs = abs;
}

static void fx_position(void *self, uint64_t *line, uint64_t *col)
{
	fx *x = self;
	uint64_t at = x->tok_abs;
	if (at < x->counted_abs) { /* cannot happen: tokens only move forward */
		*line = x->line;
		*col = 1;
		return;
	}
	if (at > x->base_abs + x->len)
		at = x->base_abs + x->len;
	count_lines_to(x, at);
	*line = x->line;
	*col = at - x->line_start_abs + 1;
}

/* Report an error at buffer offset off. */
static int fail_at(fx *x, tk_error *err, tk_xml_status st, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail_at(fx *x, tk_error *err, tk_xml_status st, size_t off, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	x->tok_abs = x->base_abs + off;
	uint64_t line, col;
	fx_position(x, &line, &col);
	x->status = st;
	return tk_error_set(err, "%s:%llu:%llu: %s", x->name, (unsigned long long)line, (unsigned long long)col, msg);
}

/* ---- lifecycle ---- */

static void *fx_create(const tk_xml_events *ev, void *ctx, const char *name, uint64_t first_line)
{
	fx *x = tk_xcalloc(1, sizeof *x);
	x->ev = ev;
	x->ctx = ctx;
	x->name = tk_xstrdup(name);
	x->line = first_line ? first_line : 1;
	x->state = ST_START;
	return x;
}

static void fx_destroy(void *self)
{
	fx *x = self;
	free(x->name);
	free(x->buf);
	free(x->names);
	free(x->name_off);
	free(x->attrs);
	free(x->spans);
	free(x);
}

static tk_xml_status fx_status(const void *self)
{
	return ((const fx *)self)->status;
}

/* ---- decoding ---- */

/* Decode an entity or character reference starting at s[0] == '&' within [s, end). Writes the
 * replacement to *out (up to 4 bytes), sets *used to the bytes consumed. Returns the output
 * length, 0 on a malformed or unknown reference. The whole reference is known to be in the
 * buffer (the token is complete). */
static size_t decode_ref(const char *s, const char *end, char *out, size_t *used, const char **why)
{
	const char *p = s + 1;
	if (p < end && *p == '#') {
		p++;
		uint32_t cp = 0;
		int hex = 0, digits = 0;
		if (p < end && *p == 'x') {
			hex = 1;
			p++;
		}
		for (; p < end && *p != ';'; p++) {
			int d;
			char c = *p;
			if (c >= '0' && c <= '9')
				d = c - '0';
			else if (hex && c >= 'a' && c <= 'f')
				d = c - 'a' + 10;
			else if (hex && c >= 'A' && c <= 'F')
				d = c - 'A' + 10;
			else {
				*why = "malformed character reference";
				return 0;
			}
			cp = cp * (hex ? 16 : 10) + (uint32_t)d;
			if (cp > 0x10FFFF)
				cp = 0x110000; /* saturate: still invalid */
			digits++;
		}
		if (p >= end || !digits) {
			*why = "malformed character reference";
			return 0;
		}
		if (!is_xml_char(cp)) {
			*why = "character reference to a character not allowed in XML";
			return 0;
		}
		*used = (size_t)(p + 1 - s);
		return put_utf8(out, cp);
	}
	static const struct {
		const char *name;
		char c;
	} ents[] = {{"lt;", '<'}, {"gt;", '>'}, {"amp;", '&'}, {"quot;", '"'}, {"apos;", '\''}};
	for (size_t i = 0; i < 5; i++) {
		size_t l = strlen(ents[i].name);
		if ((size_t)(end - p) >= l && memcmp(p, ents[i].name, l) == 0) {
			out[0] = ents[i].c;
			*used = 1 + l;
			return 1;
		}
	}
	*why = "undefined entity (only &lt; &gt; &amp; &quot; &apos; and character references are allowed)";
	return 0;
}

/* Decode [s, s+n) in place. attr: attribute-value normalisation (whitespace characters become
 * spaces). Returns the new length, or (size_t)-1 with *bad_off set on a bad reference. The bytes
 * were already validated for UTF-8 and control characters by the scanner. */
static size_t decode_inplace(char *s, size_t n, int attr, size_t *bad_off, const char **why)
{
	char *w = s;
	const char *r = s, *end = s + n;
	while (r < end) {
		char c = *r;
		if (c == '&') {
			size_t used;
			char tmp[4];
			size_t k = decode_ref(r, end, tmp, &used, why);
			if (!k) {
				*bad_off = (size_t)(r - s);
				return (size_t)-1;
			}
			memcpy(w, tmp, k);
			w += k;
			r += used;
		} else if (c == '\r') {
			*w++ = attr ? ' ' : '\n';
			r++;
			if (r < end && *r == '\n')
				r++;
		} else if (attr && (c == '\n' || c == '\t')) {
			*w++ = ' ';
			r++;
		} else {
			*w++ = c;
			r++;
		}
	}
	return (size_t)(w - s);
}

/* ---- scanning helpers (return NEED_MORE when the token runs past the buffer) ---- */

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Validate chars in [i, stop) for comments, PIs, CDATA: UTF-8, no control characters. Returns 0,
 * or -1 after reporting. */
static int check_chars(fx *x, size_t i, size_t stop, tk_error *err)
{
	const unsigned char *b = (const unsigned char *)x->buf;
	while (i < stop) {
		unsigned char c = b[i];
		if (c < 0x80) {
			if (cls[c] == C_BAD)
				return fail_at(x, err, TK_XML_MALFORMED, i,
				               "control character 0x%02x not allowed in XML", c);
			i++;
			continue;
		}
		int l = utf8_len(b + i, b + stop);
		if (l <= 0)
			return fail_at(x, err, TK_XML_MALFORMED, i, "invalid UTF-8 or a character not allowed in XML");
		i += (size_t)l;
	}
	return 0;
}

/* Scan a name at i; returns its end, or 0 if none starts there. Sets *hi when a non-ASCII byte
 * follows the name (unsupported). */
static size_t scan_name(const fx *x, size_t i, int *hi)
{
	const unsigned char *b = (const unsigned char *)x->buf;
	*hi = 0;
	if (i >= x->len)
		return 0;
	if (!namestart[b[i]]) {
		*hi = b[i] >= 0x80;
		return 0;
	}
	i++;
	while (namechar[b[i]]) /* buf[len] is a NUL sentinel, which is not a name character */
		i++;
	if (i < x->len && b[i] >= 0x80)
		*hi = 1;
	return i;
}

/* Emit text [s, s+n) (already validated) after decoding. */
static int emit_text(fx *x, size_t off, size_t n, int decode, tk_error *err)
{
	char *s = x->buf + off;
	if (decode) {
		size_t bad;
		const char *why = "";
		size_t m = decode_inplace(s, n, 0, &bad, &why);
		if (m == (size_t)-1)
			return fail_at(x, err, TK_XML_MALFORMED, off + bad, "%s", why);
		n = m;
	}
	if (!n)
		return 0;
	if (x->ev->text(x->ctx, s, n) < 0) {
		x->status = TK_XML_ABORTED;
		return -1;
	}
	return 0;
}

/* A text run continues past the buffer; [pos, i) has been validated. Once it is long, hand out
 * what can be decoded on its own (no reference or CR+LF cut in two) and consume it, so a text run
 * never has to fit in memory. Returns NEED_MORE, or -1. */
static int text_piece(fx *x, size_t i, int decode, tk_error *err)
{
	if (i - x->pos < TEXT_PIECE)
		return NEED_MORE;
	size_t cut = i;
	const char *amp = decode ? memrchr(x->buf + x->pos, '&', cut - x->pos) : NULL;
	if (amp && !memchr(amp, ';', (size_t)(x->buf + cut - amp)))
		cut = (size_t)(amp - x->buf);
	if (cut > x->pos && x->buf[cut - 1] == '\r')
		cut--;
	if (cut - x->pos < TEXT_PIECE / 2) /* a reference that long is malformed: let the full scan say so */
		return i - x->pos > MAX_TOKEN
		           ? fail_at(x, err, TK_XML_MALFORMED, (size_t)(amp - x->buf), "malformed reference")
		           : NEED_MORE;
	x->tok_abs = x->base_abs + x->pos;
	if (emit_text(x, x->pos, cut - x->pos, decode, err) < 0)
		return -1;
	x->pos = cut;
	return NEED_MORE;
}

/* Text in content: [pos, '<'). */
static int parse_text(fx *x, int final, tk_error *err)
{
	const unsigned char *b = (const unsigned char *)x->buf;
	size_t i = x->pos, end = x->len;
	int decode = 0;
	for (;;) {
		/* fast path: plain ASCII */
		i = skip_plain3(b, i, end, '<', '&', ']');
		while (cls[b[i]] == C_OK) /* stops at the NUL sentinel at buf[len] */
			i++;
		if (i >= end) {
			if (final)
				return fail_at(x, err, TK_XML_MALFORMED, i, "unexpected end of document inside <%.*s>",
				               (int)(x->names_len - x->name_off[x->depth - 1]),
				               x->names + x->name_off[x->depth - 1]);
			return text_piece(x, i, decode, err);
		}
		unsigned char c = b[i];
		switch (cls[c]) {
		case C_LT: goto done;
		case C_AMP:
		case C_CR:
			decode = 1;
			i++;
			break;
		case C_WS:
		case C_QUOT:
		case C_APOS: i++; break;
		case C_RSQB:
			if (i + 2 < end) {
				if (b[i + 1] == ']' && b[i + 2] == '>')
					return fail_at(x, err, TK_XML_MALFORMED, i, "']]>' not allowed in text");
			} else if (!final) {
				return text_piece(x, i, decode, err);
			}
			i++;
			break;
		case C_BAD:
			return fail_at(x, err, TK_XML_MALFORMED, i, "control character 0x%02x not allowed in XML", c);
		case C_HI: {
			int l = utf8_len(b + i, b + end);
			if (l < 0 && !final)
				return text_piece(x, i, decode, err);
			if (l <= 0)
				return fail_at(x, err, TK_XML_MALFORMED, i,
				               "invalid UTF-8 or a character not allowed in XML");
			i += (size_t)l;
			break;
		}
		default: i++;
		}
	}
done:
	x->tok_abs = x->base_abs + x->pos;
	if (emit_text(x, x->pos, i - x->pos, decode, err) < 0)
		return -1;
	x->pos = i;
	return 0;
}

static int push_name(fx *x, const char *s, size_t n)
{
	if (x->depth + 1 > x->name_off_cap)
		TK_GROW(x->name_off, x->name_off_cap, x->depth + 1);
	x->name_off[x->depth++] = x->names_len;
	if (x->names_len + n > x->names_cap)
		TK_GROW(x->names, x->names_cap, x->names_len + n);
	memcpy(x->names + x->names_len, s, n);
	x->names_len += n;
	return 0;
}

static int same_name(const fx *x, size_t a, size_t c)
{
	return x->spans[a].name_len == x->spans[c].name_len &&
	       memcmp(x->buf + x->spans[a].name_off, x->buf + x->spans[c].name_off, x->spans[a].name_len) == 0;
}

/* qsort_r's context carries the tokenizer: no global, so parallel tokenizers cannot clash */
static int cmp_span(const void *pa, const void *pb, void *ctx)
{
	const fx *x = ctx;
	const struct span *a = &x->spans[*(const size_t *)pa], *b = &x->spans[*(const size_t *)pb];
	size_t l = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c = memcmp(x->buf + a->name_off, x->buf + b->name_off, l);
	if (c)
		return c;
	return a->name_len < b->name_len ? -1 : a->name_len > b->name_len;
}

static int fail_at(fx *x, tk_error *err, tk_xml_status st, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Duplicate attribute names among many: sort indices by name, compare neighbours. */
static int dup_sorted(fx *x, size_t n, tk_error *err)
{
	size_t *idx = tk_xmalloc(n * sizeof *idx);
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof *idx, cmp_span, x);
	for (size_t i = 1; i < n; i++)
		if (same_name(x, idx[i], idx[i - 1])) {
			size_t a = idx[i] > idx[i - 1] ? idx[i] : idx[i - 1];
			free(idx);
			return fail_at(x, err, TK_XML_MALFORMED, x->spans[a].name_off, "attribute '%.*s' given twice",
			               (int)x->spans[a].name_len, x->buf + x->spans[a].name_off);
		}
	free(idx);
	return 0;
}

/* A start tag at pos ('<' then a name). */
static int parse_start_tag(fx *x, int final, tk_error *err)
{
	const unsigned char *b = (const unsigned char *)x->buf;
	size_t tag = x->pos, end = x->len;
	int hi;
	size_t ne = scan_name(x, tag + 1, &hi);
	if (!ne) {
		if (hi)
			return fail_at(x, err, TK_XML_UNSUPPORTED, tag + 1,
			               "non-ASCII element names are not supported");
		return fail_at(x, err, TK_XML_MALFORMED, tag + 1, "expected an element name after '<'");
	}
	if (hi)
		return fail_at(x, err, TK_XML_UNSUPPORTED, ne, "non-ASCII element names are not supported");
	if (ne >= end)
		goto more;
	size_t i = ne, nattrs = 0;
	int empty = 0;
	for (;;) {
		size_t ws = i;
		while (i < end && is_ws((char)b[i]))
			i++;
		if (i >= end)
			goto more;
		if (b[i] == '>') {
			i++;
			break;
		}
		if (b[i] == '/') {
			if (i + 1 >= end)
				goto more;
			if (b[i + 1] != '>')
				return fail_at(x, err, TK_XML_MALFORMED, i, "expected '/>'");
			empty = 1;
			i += 2;
			break;
		}
		if (i == ws)
			return fail_at(x, err, TK_XML_MALFORMED, i, "expected whitespace, '>' or '/>' in a tag");
		size_t an = i, ae = scan_name(x, i, &hi);
		if (!ae) {
			if (hi)
				return fail_at(x, err, TK_XML_UNSUPPORTED, i,
				               "non-ASCII attribute names are not supported");
			return fail_at(x, err, TK_XML_MALFORMED, i, "expected an attribute name");
		}
		if (hi)
			return fail_at(x, err, TK_XML_UNSUPPORTED, ae, "non-ASCII attribute names are not supported");
		i = ae;
		while (i < end && is_ws((char)b[i]))
			i++;
		if (i >= end)
			goto more;
		if (b[i] != '=')
			return fail_at(x, err, TK_XML_MALFORMED, i, "expected '=' after attribute name");
		i++;
		while (i < end && is_ws((char)b[i]))
			i++;
		if (i >= end)
			goto more;
		unsigned char q = b[i];
		if (q != '"' && q != '\'')
			return fail_at(x, err, TK_XML_MALFORMED, i, "expected a quoted attribute value");
		size_t vs = ++i;
		int decode = 0;
		for (;;) {
			i = skip_plain3(b, i, end, (char)q, '&', '<');
			while (cls[b[i]] == C_OK) /* stops at the NUL sentinel at buf[len] */
				i++;
			if (i >= end)
				goto more;
			unsigned char c = b[i];
			if (c == q)
				break;
			switch (cls[c]) {
			case C_LT: return fail_at(x, err, TK_XML_MALFORMED, i, "'<' not allowed in an attribute value");
			case C_AMP:
			case C_CR:
			case C_WS:
				decode = 1;
				i++;
				break;
			case C_BAD:
				return fail_at(x, err, TK_XML_MALFORMED, i,
				               "control character 0x%02x not allowed in XML", c);
			case C_HI: {
				int l = utf8_len(b + i, b + end);
				if (l < 0)
					goto more;
				if (l == 0)
					return fail_at(x, err, TK_XML_MALFORMED, i,
					               "invalid UTF-8 or a character not allowed in XML");
				i += (size_t)l;
				break;
			}
			default: i++;
			}
		}
		if (nattrs >= TK_XML_MAX_ATTRS)
			return fail_at(x, err, TK_XML_UNSUPPORTED, tag, "more than %d attributes in one tag",
			               TK_XML_MAX_ATTRS);
		if (nattrs + 1 > x->capspans)
			TK_GROW(x->spans, x->capspans, nattrs + 1);
		x->spans[nattrs++] = (struct span){an, ae - an, vs, i - vs, decode};
		i++; /* closing quote */
	}
	/* The tag is complete: check duplicates, decode, emit. */
	x->tok_abs = x->base_abs + tag;
	if (nattrs <= 16) {
		for (size_t a = 1; a < nattrs; a++)
			for (size_t c = 0; c < a; c++)
				if (same_name(x, a, c))
					return fail_at(x, err, TK_XML_MALFORMED, x->spans[a].name_off,
					               "attribute '%.*s' given twice", (int)x->spans[a].name_len,
					               x->buf + x->spans[a].name_off);
	} else if (dup_sorted(x, nattrs, err) < 0) { /* many attributes: O(n log n), not O(n²) */
		return -1;
	}
	if (nattrs + 1 > x->capattrs)
		TK_GROW(x->attrs, x->capattrs, nattrs + 1);
	for (size_t a = 0; a < nattrs; a++) {
		struct span *s = &x->spans[a];
		size_t vl = s->val_len;
		if (s->decode) {
			size_t bad;
			const char *why = "";
			vl = decode_inplace(x->buf + s->val_off, s->val_len, 1, &bad, &why);
			if (vl == (size_t)-1)
				return fail_at(x, err, TK_XML_MALFORMED, s->val_off + bad, "%s", why);
		}
		x->attrs[a] = (tk_xml_attr){x->buf + s->name_off, x->buf + s->val_off, s->name_len, vl};
	}
	if (x->state == ST_EPILOG)
		return fail_at(x, err, TK_XML_MALFORMED, tag, "extra content after the root element");
	const char *nm = x->buf + tag + 1;
	size_t nl = ne - tag - 1;
	x->state = ST_CONTENT;
	if (x->ev->start(x->ctx, nm, nl, x->attrs, nattrs) < 0) {
		x->status = TK_XML_ABORTED;
		return -1;
	}
	if (empty) {
		if (x->ev->end(x->ctx, nm, nl) < 0) {
			x->status = TK_XML_ABORTED;
			return -1;
		}
		if (x->depth == 0)
			x->state = ST_EPILOG;
	} else {
		push_name(x, nm, nl);
	}
	x->pos = i;
	return 0;
more:
	if (final)
		return fail_at(x, err, TK_XML_MALFORMED, tag, "unexpected end of document inside a tag");
	if (end - tag > MAX_TOKEN)
		return fail_at(x, err, TK_XML_UNSUPPORTED, tag, "tag longer than %zu bytes", MAX_TOKEN);
	return NEED_MORE;
}

static int parse_end_tag(fx *x, int final, tk_error *err)
{
	const unsigned char *b = (const unsigned char *)x->buf;
	size_t tag = x->pos, end = x->len;
	int hi;
	size_t ne = scan_name(x, tag + 2, &hi);
	if (!ne) {
		if (tag + 2 >= end && !final)
			return NEED_MORE;
		if (hi)
			return fail_at(x, err, TK_XML_UNSUPPORTED, tag + 2,
			               "non-ASCII element names are not supported");
		return fail_at(x, err, TK_XML_MALFORMED, tag + 2, "expected an element name after '</'");
	}
	if (hi)
		return fail_at(x, err, TK_XML_UNSUPPORTED, ne, "non-ASCII element names are not supported");
	size_t i = ne;
	while (i < end && is_ws((char)b[i]))
		i++;
	if (i >= end) {
		if (final)
			return fail_at(x, err, TK_XML_MALFORMED, tag, "unexpected end of document inside a tag");
		if (end - tag > MAX_TOKEN)
			return fail_at(x, err, TK_XML_UNSUPPORTED, tag, "tag longer than %zu bytes", MAX_TOKEN);
		return NEED_MORE;
	}
	if (b[i] != '>')
		return fail_at(x, err, TK_XML_MALFORMED, i, "expected '>' to close the end tag");
	x->tok_abs = x->base_abs + tag;
	const char *nm = x->buf + tag + 2;
	size_t nl = ne - tag - 2;
	if (x->depth == 0)
		return fail_at(x, err, TK_XML_MALFORMED, tag, "end tag </%.*s> without a start tag", (int)nl, nm);
	size_t off = x->name_off[x->depth - 1], ol = x->names_len - off;
	if (ol != nl || memcmp(x->names + off, nm, nl) != 0)
		return fail_at(x, err, TK_XML_MALFORMED, tag, "end tag </%.*s> does not match <%.*s>", (int)nl, nm,
		               (int)ol, x->names + off);
	x->depth--;
	x->names_len = off;
	if (x->ev->end(x->ctx, nm, nl) < 0) {
		x->status = TK_XML_ABORTED;
		return -1;
	}
	if (x->depth == 0)
		x->state = ST_EPILOG;
	x->pos = i + 1;
	return 0;
}

/* Find the terminator `term` at or after from; returns its offset or (size_t)-1. */
static size_t find(const fx *x, size_t from, const char *term)
{
	size_t tl = strlen(term);
	if (x->len < from + tl)
		return (size_t)-1;
	const char *h = memmem(x->buf + from, x->len - from, term, tl);
	return h ? (size_t)(h - x->buf) : (size_t)-1;
}

static int parse_comment(fx *x, int final, tk_error *err)
{
	size_t s = x->pos + 4;
	/* "--" may not occur inside a comment, so the first "--" must be the end "-->" */
	size_t dd = find(x, s, "--");
	if (dd == (size_t)-1 || dd + 2 >= x->len) {
		if (final)
			return fail_at(x, err, TK_XML_MALFORMED, x->pos, "unterminated comment");
		if (x->len - x->pos > MAX_TOKEN)
			return fail_at(x, err, TK_XML_UNSUPPORTED, x->pos, "comment longer than %zu bytes", MAX_TOKEN);
		return NEED_MORE;
	}
	if (x->buf[dd + 2] != '>')
		return fail_at(x, err, TK_XML_MALFORMED, dd, "'--' not allowed inside a comment");
	if (check_chars(x, s, dd, err) < 0)
		return -1;
	x->pos = dd + 3;
	return 0;
}

static int parse_cdata(fx *x, int final, tk_error *err)
{
	size_t s = x->pos + 9;
	size_t e = find(x, s, "]]>");
	if (e == (size_t)-1) {
		if (final)
			return fail_at(x, err, TK_XML_MALFORMED, x->pos, "unterminated CDATA section");
		if (x->len - x->pos > MAX_TOKEN)
			return fail_at(x, err, TK_XML_UNSUPPORTED, x->pos, "CDATA section longer than %zu bytes",
			               MAX_TOKEN);
		return NEED_MORE;
	}
	if (x->state != ST_CONTENT)
		return fail_at(x, err, TK_XML_MALFORMED, x->pos, "CDATA section outside the root element");
	if (check_chars(x, s, e, err) < 0)
		return -1;
	x->tok_abs = x->base_abs + x->pos;
	/* CDATA content is literal: only line ends are normalised */
	int cr = memchr(x->buf + s, '\r', e - s) != NULL;
	size_t n = e - s;
	if (cr) {
		char *w = x->buf + s;
		const char *r = w, *stop = x->buf + e;
		while (r < stop) {
			if (*r == '\r') {
				*w++ = '\n';
				r++;
				if (r < stop && *r == '\n')
					r++;
			} else {
				*w++ = *r++;
			}
		}
		n = (size_t)(w - (x->buf + s));
	}
	if (n && x->ev->text(x->ctx, x->buf + s, n) < 0) {
		x->status = TK_XML_ABORTED;
		return -1;
	}
	x->pos = e + 3;
	return 0;
}

static int ieq3(const char *s, const char *lower)
{
	for (int i = 0; i < 3; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != lower[i])
			return 0;
	}
	return 1;
}

/* <?xml version="1.0" encoding="UTF-8" standalone="yes"?> at the very start. */
static int parse_xml_decl(fx *x, size_t e, tk_error *err)
{
	const char *b = x->buf;
	size_t i = x->pos + 5;
	static const char *const names[] = {"version", "encoding", "standalone"};
	int seen = 0, next = 0;
	for (;;) {
		size_t ws = i;
		while (i < e && is_ws(b[i]))
			i++;
		if (i >= e)
			break;
		if (i == ws)
			return fail_at(x, err, TK_XML_MALFORMED, i, "malformed XML declaration");
		int which = -1;
		for (int k = next; k < 3; k++) {
			size_t l = strlen(names[k]);
			if (e - i >= l && memcmp(b + i, names[k], l) == 0 &&
			    (i + l >= e || !namechar[(unsigned char)b[i + l]])) {
				which = k;
				i += l;
				break;
			}
		}
		if (which < 0 || (which > 0 && !(seen & 1)))
			return fail_at(x, err, TK_XML_MALFORMED, i, "malformed XML declaration");
		while (i < e && is_ws(b[i]))
			i++;
		if (i >= e || b[i] != '=')
			return fail_at(x, err, TK_XML_MALFORMED, i, "malformed XML declaration");
		i++;
		while (i < e && is_ws(b[i]))
			i++;
		if (i >= e || (b[i] != '"' && b[i] != '\''))
			return fail_at(x, err, TK_XML_MALFORMED, i, "malformed XML declaration");
		char q = b[i++];
		size_t vs = i;
		while (i < e && b[i] != q)
			i++;
		if (i >= e)
			return fail_at(x, err, TK_XML_MALFORMED, vs, "malformed XML declaration");
		const char *v = b + vs;
		size_t vl = i - vs;
		i++;
		if (which == 0) {
			/* "1." then digits; libxml2 accepts any 1.x (with a warning) and nothing else */
			int okv = vl >= 2 && v[0] == '1' && v[1] == '.';
			for (size_t k = 2; okv && k < vl; k++)
				okv = v[k] >= '0' && v[k] <= '9';
			if (!okv)
				return fail_at(x, err, TK_XML_MALFORMED, vs, "malformed XML version");
		} else if (which == 1) {
			if (!(vl == 5 && strncasecmp(v, "utf-8", 5) == 0) &&
			    !(vl == 4 && strncasecmp(v, "utf8", 4) == 0))
				return fail_at(x, err, TK_XML_UNSUPPORTED, vs,
				               "encoding '%.*s' is not supported (only UTF-8)",
				               (int)(vl > 40 ? 40 : vl), v);
		} else {
			if (!(vl == 3 && memcmp(v, "yes", 3) == 0) && !(vl == 2 && memcmp(v, "no", 2) == 0))
				return fail_at(x, err, TK_XML_MALFORMED, vs, "standalone must be 'yes' or 'no'");
		}
		seen |= 1 << which;
		next = which + 1;
	}
	if (!(seen & 1))
		return fail_at(x, err, TK_XML_MALFORMED, x->pos, "XML declaration without a version");
	return 0;
}

/* <?target ...?> */
static int parse_pi(fx *x, int final, tk_error *err)
{
	size_t e = find(x, x->pos + 2, "?>");
	if (e == (size_t)-1) {
		if (final)
			return fail_at(x, err, TK_XML_MALFORMED, x->pos, "unterminated processing instruction");
		if (x->len - x->pos > MAX_TOKEN)
			return fail_at(x, err, TK_XML_UNSUPPORTED, x->pos,
			               "processing instruction longer than %zu bytes", MAX_TOKEN);
		return NEED_MORE;
	}
	int hi;
	size_t ne = scan_name(x, x->pos + 2, &hi);
	if (!ne || ne > e) {
		if (hi)
			return fail_at(x, err, TK_XML_UNSUPPORTED, x->pos + 2, "non-ASCII names are not supported");
		return fail_at(x, err, TK_XML_MALFORMED, x->pos + 2, "expected a processing-instruction target");
	}
	if (hi)
		return fail_at(x, err, TK_XML_UNSUPPORTED, ne, "non-ASCII names are not supported");
	size_t tl = ne - x->pos - 2;
	const char *t = x->buf + x->pos + 2;
	if (tl == 3 && ieq3(t, "xml")) {
		if (memcmp(t, "xml", 3) == 0 && x->state == ST_START &&
		    x->base_abs + x->pos == (uint64_t)x->seen_bom_check) {
			if (ne < e && !is_ws(x->buf[ne]))
				return fail_at(x, err, TK_XML_MALFORMED, ne, "malformed XML declaration");
			if (check_chars(x, ne, e, err) < 0)
				return -1;
			if (parse_xml_decl(x, e, err) < 0)
				return -1;
			x->state = ST_PROLOG;
			x->pos = e + 2;
			return 0;
		}
		return fail_at(x, err, TK_XML_MALFORMED, x->pos,
		               "XML declaration allowed only at the start of the document");
	}
	if (ne < e && !is_ws(x->buf[ne]))
		return fail_at(x, err, TK_XML_MALFORMED, ne, "malformed processing instruction");
	if (check_chars(x, ne, e, err) < 0)
		return -1;
	if (x->state == ST_START)
		x->state = ST_PROLOG;
	x->pos = e + 2;
	return 0;
}

/* Dispatch on the token at pos. Returns 0 (consumed one), NEED_MORE, or -1. */
static int parse_one(fx *x, int final, tk_error *err)
{
	const char *b = x->buf;
	size_t i = x->pos, avail = x->len - i;
	x->tok_abs = x->base_abs + i;
	if (b[i] != '<') {
		if (x->state == ST_CONTENT)
			return parse_text(x, final, err);
		/* outside the root only whitespace may appear */
		while (i < x->len && is_ws(b[i]))
			i++;
		if (i > x->pos) {
			if (x->state == ST_START)
				x->state = ST_PROLOG;
			x->pos = i;
			return 0;
		}
		if (x->state == ST_EPILOG)
			return fail_at(x, err, TK_XML_MALFORMED, i, "extra content after the root element");
		return fail_at(x, err, TK_XML_MALFORMED, i, "text before the root element (expected '<')");
	}
	if (avail < 2)
		goto more;
	switch (b[i + 1]) {
	case '/':
		if (x->state != ST_CONTENT)
			return fail_at(x, err, TK_XML_MALFORMED, i, "end tag without a start tag");
		return parse_end_tag(x, final, err);
	case '?': return parse_pi(x, final, err);
	case '!':
		if (avail < 4)
			goto more;
		if (b[i + 2] == '-' && b[i + 3] == '-') {
			int rc = parse_comment(x, final, err);
			if (rc == 0 && x->state == ST_START)
				x->state = ST_PROLOG;
			return rc;
		}
		if (avail < 9)
			goto more;
		if (memcmp(b + i, "<![CDATA[", 9) == 0)
			return parse_cdata(x, final, err);
		if (memcmp(b + i, "<!DOCTYPE", 9) == 0)
			return fail_at(x, err, TK_XML_UNSUPPORTED, i, "a DOCTYPE is not supported");
		return fail_at(x, err, TK_XML_MALFORMED, i, "malformed markup after '<!'");
	default: return parse_start_tag(x, final, err);
	}
more:
	if (final)
		return fail_at(x, err, TK_XML_MALFORMED, i, "unexpected end of document");
	return NEED_MORE;
}

static int fx_feed(void *self, const char *data, size_t n, int final, tk_error *err)
{
	fx *x = self;
	if (x->status != TK_XML_OK) {
		if (x->status == TK_XML_ABORTED)
			return -1;
		return tk_error_set(err, "%s: parsing already failed", x->name);
	}
	if (n) {
		if (x->len + n + 1 > x->cap) {
			size_t c = x->cap ? x->cap : 65536;
			while (c < x->len + n + 1)
				c *= 2;
			x->buf = tk_xrealloc(x->buf, c);
			x->cap = c;
		}
		memcpy(x->buf + x->len, data, n);
		x->len += n;
	}
	if (x->buf)
		x->buf[x->len] = 0; /* sentinel for the scanning loops */
	if (x->base_abs == 0 && x->state == ST_START && x->pos == 0) {
		/* A UTF-8 byte order mark is skipped; other encodings' marks are refused. */
		if (x->len < 3 && !final)
			return 0;
		const unsigned char *u = (const unsigned char *)x->buf;
		if (x->len >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF) {
			x->pos = 3;
			x->seen_bom_check = 3;
		} else if (x->len >= 2 && ((u[0] == 0xFE && u[1] == 0xFF) || (u[0] == 0xFF && u[1] == 0xFE))) {
			return fail_at(x, err, TK_XML_UNSUPPORTED, 0, "UTF-16 input is not supported (only UTF-8)");
		} else if (x->len >= 1 && u[0] == 0) {
			return fail_at(x, err, TK_XML_UNSUPPORTED, 0,
			               "NUL byte at the start: UTF-16/32 input is not supported");
		}
	}
	if (x->len >= x->retry_at || final) {
		while (x->pos < x->len) {
			int rc = parse_one(x, final, err);
			if (rc < 0)
				return -1;
			if (rc == NEED_MORE) {
				/* resume when the pending token has had the chance to double */
				size_t pending = x->len - x->pos;
				x->retry_at = x->len + (pending > 65536 ? pending : 0);
				break;
			}
		}
	}
	if (final) {
		x->tok_abs = x->base_abs + x->len;
		if (x->depth > 0)
			return fail_at(x, err, TK_XML_MALFORMED, x->len,
			               "unexpected end of document: <%.*s> is not closed (truncated file?)",
			               (int)(x->names_len - x->name_off[x->depth - 1]),
			               x->names + x->name_off[x->depth - 1]);
		if (x->state != ST_EPILOG)
			return fail_at(x, err, TK_XML_MALFORMED, x->len,
			               x->base_abs + x->len == 0 ? "empty document" : "no root element");
		return 0;
	}
	/* move the unparsed tail to the front */
	if (x->pos > 0) {
		count_lines_to(x, x->base_abs + x->pos);
		memmove(x->buf, x->buf + x->pos, x->len - x->pos);
		x->base_abs += x->pos;
		x->len -= x->pos;
		if (x->retry_at >= x->pos)
			x->retry_at -= x->pos;
		else
			x->retry_at = 0;
		x->pos = 0;
	}
	return 0;
}

const tk_xml_impl tk_xml_fast_impl = {fx_create, fx_destroy, fx_feed, fx_position, fx_status};
