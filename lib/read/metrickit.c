/*
 * MetricKit payloads: MXDiagnosticPayload and MXMetricPayload as `jsonRepresentation()` writes them
 * (docs/metrickit.md describes every field and how it lands in the model).
 *
 * A file holds one payload, a JSON array of payloads, or payloads one after another (JSON Lines, as
 * servers store them); a bare `callStackTree` object (as SDKs keep them) is read as one diagnostic.
 * Each top-level value is cut out of the stream by a quick brace scan and parsed on its own, so
 * memory is bounded by the largest payload (refused past TK_MX_MAX_PAYLOAD), never by the file.
 *
 * Why not jansson here: its DOM parser reads ~28 MB/s of pretty-printed payloads (a hash table per
 * object) and stops at 2048 nesting levels, while each frame of a callStackTree costs two levels (the
 * frame and its subFrames array): a 1,020-frame stack would be refused. The tokenizer below is a
 * strict RFC 8259 reader (UTF-8 checked, escapes decoded, numbers by the grammar) with an explicit
 * stack for frames; tests/fuzz/fuzz_metrickit.c checks that it accepts nothing jansson rejects.
 *
 * Diagnostics become events (tk_event_kind from the array they are in) with the shared attribute
 * names of profile.h; each call stack becomes a thread the event owns (the attributed one
 * TK_ROLE_ATTRIBUTED) holding, for every frame, its self count = sampleCount − Σ subFrames'
 * sampleCount as samples on the frame's root path, so every call-tree total is the payload's own
 * sampleCount. A metric payload becomes one TK_EVENT_MARKER event named "metrics" whose attributes
 * hold its measurements and histograms (format in docs/metrickit.md).
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/mman.h>

#include "tracekit/metrickit.h"
#include "tracekit/read.h"
#include "model/cells.h"
#include "read/internal.h"
#include "util/hidx.h"
#include "util/mem.h"
#include "util/text.h"

#define TK_MX_MAX_PAYLOAD (64u << 20) /* one payload; Apple's are kilobytes to a few megabytes */
#define TK_MX_MAX_DEPTH 65536         /* frames in one stack, as the other readers */

/* ------------------------------------------------------------------ tokenizer */

typedef struct jp {
	const char *s, *p, *end; /* the payload */
	char *scratch;           /* decoded strings with escapes */
	size_t cap;
	const char *err; /* static message, set once */
	const char *err_at;
} jp;

static int jfail(jp *j, const char *at, const char *msg)
{
	if (!j->err) {
		j->err = msg;
		j->err_at = at;
	}
	return -1;
}

static void ws(jp *j)
{
	const char *p = j->p;
	while (p < j->end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) {
		p++;
		/* pretty-printed payloads indent deep trees by many spaces: eight at a time */
		uint64_t w;
		while (j->end - p >= 8 && (memcpy(&w, p, 8), w == 0x2020202020202020ULL))
			p += 8;
	}
	j->p = p;
}

static int peek(jp *j)
{
	ws(j);
	return j->p < j->end ? (unsigned char)*j->p : -1;
}

static int expect(jp *j, char c, const char *msg)
{
	if (peek(j) != (unsigned char)c)
		return jfail(j, j->p, msg);
	j->p++;
	return 0;
}

/* 1 for a byte that ends a plain run in a string: '"', '\\', control characters and non-ASCII. */
#define J16(a) a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a
/* clang-format off */
static const unsigned char jplain[256] = {
    J16(1), J16(1),                                 /* 0x00-0x1f */
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x20-0x2f: '"' */
    J16(0), J16(0),                                 /* 0x30-0x4f */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* 0x50-0x5f: '\\' */
    J16(0), J16(0),                                 /* 0x60-0x7f */
    J16(1), J16(1), J16(1), J16(1), J16(1), J16(1), J16(1), J16(1), /* 0x80-0xff */
};
/* clang-format on */
#undef J16

/* Length of the UTF-8 sequence at p (< end), 0 if invalid (overlong, surrogate, > U+10FFFF). */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	size_t n;
	unsigned min;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, min = 0x10000;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	unsigned v = c & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	return n;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static void put_utf8(char *o, size_t *n, unsigned v)
{
	if (v < 0x80) {
		o[(*n)++] = (char)v;
	} else if (v < 0x800) {
		o[(*n)++] = (char)(0xc0 | v >> 6);
		o[(*n)++] = (char)(0x80 | (v & 0x3f));
	} else if (v < 0x10000) {
		o[(*n)++] = (char)(0xe0 | v >> 12);
		o[(*n)++] = (char)(0x80 | (v >> 6 & 0x3f));
		o[(*n)++] = (char)(0x80 | (v & 0x3f));
	} else {
		o[(*n)++] = (char)(0xf0 | v >> 18);
		o[(*n)++] = (char)(0x80 | (v >> 12 & 0x3f));
		o[(*n)++] = (char)(0x80 | (v >> 6 & 0x3f));
		o[(*n)++] = (char)(0x80 | (v & 0x3f));
	}
}

/* A string at j->p (after whitespace): *s and *n are the text, in the payload when it has no escape,
 * else in the scratch buffer (valid until the next string). A NUL (\u0000) is refused: names and
 * values become C strings. */
static int jstr(jp *j, const char **s, size_t *n)
{
	if (peek(j) != '"')
		return jfail(j, j->p, "expected a string");
	const char *start = ++j->p, *p = start;
	const unsigned char *end = (const unsigned char *)j->end;
	for (;;) {
		/* plain ASCII runs four bytes at a time */
		while (j->end - p >= 4 && !(jplain[(unsigned char)p[0]] | jplain[(unsigned char)p[1]] |
		                            jplain[(unsigned char)p[2]] | jplain[(unsigned char)p[3]]))
			p += 4;
		if (p >= j->end)
			return jfail(j, start - 1, "unterminated string");
		unsigned char c = (unsigned char)*p;
		if (c == '"') {
			*s = start;
			*n = (size_t)(p - start);
			j->p = p + 1;
			return 0;
		}
		if (c == '\\')
			break;
		if (c < 0x20)
			return jfail(j, p, "control character in a string");
		if (c < 0x80) {
			p++;
			continue;
		}
		size_t l = utf8_len((const unsigned char *)p, end);
		if (!l)
			return jfail(j, p, "invalid UTF-8 in a string");
		p += l;
	}
	/* escapes: decode into scratch (never longer than the source) */
	size_t o = (size_t)(p - start);
	if (j->cap < (size_t)(j->end - start) + 1) {
		j->cap = (size_t)(j->end - start) + 1;
		free(j->scratch);
		j->scratch = tk_xmalloc(j->cap);
	}
	memcpy(j->scratch, start, o);
	for (;;) {
		if (p >= j->end)
			return jfail(j, start - 1, "unterminated string");
		unsigned char c = (unsigned char)*p;
		if (c == '"')
			break;
		if (c < 0x20)
			return jfail(j, p, "control character in a string");
		if (c != '\\') {
			size_t l = c < 0x80 ? 1 : utf8_len((const unsigned char *)p, end);
			if (!l)
				return jfail(j, p, "invalid UTF-8 in a string");
			memcpy(j->scratch + o, p, l);
			o += l, p += l;
			continue;
		}
		if (p + 1 >= j->end)
			return jfail(j, p, "unterminated string");
		char e = p[1];
		p += 2;
		switch (e) {
		case '"': j->scratch[o++] = '"'; break;
		case '\\': j->scratch[o++] = '\\'; break;
		case '/': j->scratch[o++] = '/'; break;
		case 'b': j->scratch[o++] = '\b'; break;
		case 'f': j->scratch[o++] = '\f'; break;
		case 'n': j->scratch[o++] = '\n'; break;
		case 'r': j->scratch[o++] = '\r'; break;
		case 't': j->scratch[o++] = '\t'; break;
		case 'u': {
			unsigned v, lo;
			if (j->end - p < 4 || hex4(p, &v) < 0)
				return jfail(j, p - 2, "bad \\u escape");
			p += 4;
			if (v >= 0xd800 && v <= 0xdbff) {
				if (j->end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &lo) < 0 ||
				    lo < 0xdc00 || lo > 0xdfff)
					return jfail(j, p - 6, "unpaired surrogate in a \\u escape");
				p += 6;
				v = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
			} else if (v >= 0xdc00 && v <= 0xdfff)
				return jfail(j, p - 6, "unpaired surrogate in a \\u escape");
			if (v == 0)
				return jfail(j, p - 6, "\\u0000 in a string");
			put_utf8(j->scratch, &o, v);
			break;
		}
		default: return jfail(j, p - 2, "bad escape in a string");
		}
	}
	j->p = p + 1;
	*s = j->scratch;
	*n = o;
	return 0;
}

enum { NUM_UINT = 1, NUM_NEG = 2, NUM_REAL = 4 };

/* A number: its kind (integer that fits in uint64, negative integer, or anything else) and value. */
static int jnum(jp *j, uint64_t *u, double *d, int *kind)
{
	ws(j);
	const char *p = j->p, *st = p;
	int neg = 0, real = 0, big = 0;
	uint64_t v = 0;
	if (p < j->end && *p == '-')
		neg = 1, p++;
	if (p >= j->end || *p < '0' || *p > '9')
		return jfail(j, st, "expected a number");
	if (*p == '0') {
		p++;
	} else {
		for (; p < j->end && *p >= '0' && *p <= '9'; p++) {
			unsigned dg = (unsigned)(*p - '0');
			if (v > (UINT64_MAX - dg) / 10)
				big = 1;
			else
				v = v * 10 + dg;
		}
	}
	if (p < j->end && *p == '.') {
		real = 1, p++;
		if (p >= j->end || *p < '0' || *p > '9')
			return jfail(j, st, "bad number");
		while (p < j->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < j->end && (*p == 'e' || *p == 'E')) {
		real = 1, p++;
		if (p < j->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= j->end || *p < '0' || *p > '9')
			return jfail(j, st, "bad number");
		while (p < j->end && *p >= '0' && *p <= '9')
			p++;
	}
	j->p = p;
	*u = v;
	if (!real && !big && !neg)
		*kind = NUM_UINT;
	else if (!real && !big && neg && v <= (uint64_t)INT64_MAX + 1)
		*kind = NUM_NEG;
	else
		*kind = NUM_REAL;
	if (*kind == NUM_REAL) {
		char buf[64];
		size_t len = (size_t)(p - st);
		if (len >= sizeof buf) {
			char *t = tk_xstrndup(st, len);
			*d = strtod(t, NULL);
			free(t);
		} else {
			memcpy(buf, st, len);
			buf[len] = 0;
			*d = strtod(buf, NULL);
		}
	} else
		*d = neg ? -(double)v : (double)v;
	return 0;
}

static int jlit(jp *j, const char *word, size_t n)
{
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		return jfail(j, j->p, "expected a JSON value");
	j->p += n;
	return 0;
}

/* Skip any value, checking its grammar; iterative, so depth costs one byte a level. */
static int jskip(jp *j)
{
	char *stack = NULL; /* '{' or '[' */
	size_t depth = 0, cap = 0;
	int rc = -1;
	for (;;) {
		int c = peek(j);
		const char *s;
		size_t n;
		uint64_t u;
		double d;
		int k;
		if (c == '{' || c == '[') {
			j->p++;
			TK_GROW(stack, cap, depth + 1);
			stack[depth++] = (char)c;
			int nx = peek(j);
			if (nx == (c == '{' ? '}' : ']')) {
				j->p++;
				depth--;
				goto after_value;
			}
			if (c == '{') {
				if (jstr(j, &s, &n) < 0 || expect(j, ':', "expected ':' after a key") < 0)
					goto out;
			}
			continue;
		}
		if (c == '"') {
			if (jstr(j, &s, &n) < 0)
				goto out;
		} else if (c == 't') {
			if (jlit(j, "true", 4) < 0)
				goto out;
		} else if (c == 'f') {
			if (jlit(j, "false", 5) < 0)
				goto out;
		} else if (c == 'n') {
			if (jlit(j, "null", 4) < 0)
				goto out;
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			if (jnum(j, &u, &d, &k) < 0)
				goto out;
		} else {
			jfail(j, j->p, "expected a JSON value");
			goto out;
		}
	after_value:
		for (;;) {
			if (!depth) {
				rc = 0;
				goto out;
			}
			int nx = peek(j);
			char open = stack[depth - 1];
			if (nx == ',') {
				j->p++;
				if (open == '{' &&
				    (jstr(j, &s, &n) < 0 || expect(j, ':', "expected ':' after a key") < 0))
					goto out;
				break;
			}
			if (nx == (open == '{' ? '}' : ']')) {
				j->p++;
				depth--;
				continue;
			}
			jfail(j, j->p, open == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
			goto out;
		}
	}
out:
	free(stack);
	return rc;
}

/* Object and array iteration: *_begin consumes the opening bracket; *_next returns 1 when another
 * member follows (for objects: the key in *k and *kn, ':' consumed), 0 at the closing bracket. */
static int obj_begin(jp *j)
{
	return expect(j, '{', "expected an object");
}

static int obj_next(jp *j, int *first, const char **k, size_t *kn)
{
	int c = peek(j);
	if (c == '}') {
		j->p++;
		return 0;
	}
	if (!*first) {
		if (c != ',')
			return jfail(j, j->p, "expected ',' or '}'");
		j->p++;
	}
	*first = 0;
	if (jstr(j, k, kn) < 0 || expect(j, ':', "expected ':' after a key") < 0)
		return -1;
	return 1;
}

static int arr_begin(jp *j)
{
	return expect(j, '[', "expected an array");
}

static int arr_next(jp *j, int *first)
{
	int c = peek(j);
	if (c == ']') {
		j->p++;
		return 0;
	}
	if (!*first) {
		if (c != ',')
			return jfail(j, j->p, "expected ',' or ']'");
		j->p++;
	}
	*first = 0;
	return 1;
}

#define KEY(lit) (kn == sizeof lit - 1 && memcmp(k, lit, sizeof lit - 1) == 0)

/* ------------------------------------------------------------------ reader state */

typedef struct mxframe {
	uint32_t parent; /* index + 1 into the stack's frames; 0 for a root frame */
	uint32_t depth;
	uint32_t child; /* index among its parent's subFrames */
	uint32_t nsub;  /* subFrames read */
	tk_str uuid, name;
	uint64_t offset, address, count, subsum;
	uint8_t has_offset, has_address, has_count;
} mxframe;

typedef struct mxstack {
	uint32_t first, n; /* frames [first, first + n) */
	int attributed;    /* threadAttributed: 1, 0, or -1 when absent */
} mxstack;

struct buf;
static uint64_t line_at(const struct buf *b, size_t off);

typedef struct mx {
	tk_profile *p;
	const char *name; /* input name for errors */
	jp j;
	uint64_t line0;       /* newlines before the payload, when lb is NULL */
	const struct buf *lb; /* else the payload starts at byte loff of lb (its line counted on error only) */
	size_t loff;
	const char *path; /* the field being read, for errors (built on error only) */
	char where[320];  /* field path of the value being read */
	tk_error *err;
	int failed;
	uint64_t next_tid;
	size_t npayloads, ndiag, nmetrics;
	/* the diagnostic being read */
	mxframe *fr;
	size_t nfr, capfr;
	mxstack *st;
	size_t nst, capst;
	uint32_t *fstack; /* frame index + 1 per open level */
	size_t capfstack;
	/* frames already made, across payloads: (uuid, name, addr, shown offset, leaf) → frame id; the
	 * same code recurs in every payload, and this skips the label, binary and frame lookups */
	struct fkey {
		tk_str uuid, name;
		uint64_t addr, off;
		uint32_t leaf;
		tk_frame_id id;
	} * fc;
	size_t fc_cap, fc_n;
	/* binaryUUID / binaryName strings as written → interned (normalized) string: the same few
	 * dozen images recur in every frame, and this skips the UUID check, upper-casing and interning */
	struct scache {
		uint8_t len, uuid; /* len 0 = empty slot */
		char raw[62];
		tk_str id;
	} sc[128];
	/* per-image load addresses of one diagnostic: open addressing over uuid strings */
	tk_stack_weight *cells; /* one thread's (stack, self count) */
	size_t capcells;
	tk_str *im_key;
	uint64_t *im_load;
	size_t im_cap;
} mx;

/* "FILE:LINE:COL: FIELD: problem" — the position is the one the tokenizer stopped at, or `at`. */
static int mx_fail_at(mx *m, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int mx_fail_at(mx *m, const char *at, const char *fmt, ...)
{
	if (m->failed)
		return -1;
	m->failed = 1;
	uint64_t line = (m->lb ? line_at(m->lb, m->loff) : m->line0) + 1, col = 1;
	if (at) {
		for (const char *q = m->j.s; q < at && q < m->j.end; q++) {
			if (*q == '\n')
				line++, col = 1;
			else
				col++;
		}
	}
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (at)
		return tk_error_set(m->err, "%s:%llu:%llu: %s", m->name, (unsigned long long)line,
		                    (unsigned long long)col, msg);
	return tk_error_set(m->err, "%s: %s", m->name, msg);
}

/* A tokenizer error, named with the field being read. */
static int mx_jerr(mx *m)
{
	return mx_fail_at(m, m->j.err_at, "%s%s%s", m->where, m->where[0] ? ": " : "",
	                  m->j.err ? m->j.err : "malformed JSON");
}

static void where_set(mx *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void where_set(mx *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->where, sizeof m->where, fmt, ap);
	va_end(ap);
}

/* Shown values are cut and stripped of what a terminal could misread (the CLI escapes the rest). */
static void shown(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 4 < cap; i++)
		out[o++] = (unsigned char)s[i] < 0x20 ? '?' : s[i];
	if (n && o + 4 >= cap && o + 3 < cap)
		memcpy(out + o, "...", 3), o += 3;
	out[o] = 0;
}

/* ------------------------------------------------------------------ measurements */

/* tk_mx_measurement: see stats.h. Decimal digits with ',' grouping (groups of three) and an
 * optional fraction, then a unit; exact to the nanosecond / byte (no floating point). */
int tk_mx_measurement(const char *s, size_t n, tk_mx_value *out)
{
	size_t i = 0;
	while (i < n && s[i] == ' ')
		i++;
	uint64_t whole = 0, frac = 0, scale = 1;
	size_t digits = 0, group = 0;
	int grouped = 0;
	for (; i < n; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9') {
			if (whole > (UINT64_MAX - 9) / 10)
				return -1;
			whole = whole * 10 + (uint64_t)(c - '0');
			digits++, group++;
		} else if (c == ',' && digits && (!grouped || group == 3) && (grouped || group <= 3)) {
			grouped = 1, group = 0;
		} else
			break;
	}
	if (!digits || (grouped && group != 3))
		return -1;
	if (i < n && s[i] == '.' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
			if (scale >= 1000000000000ULL)
				return -1; /* finer than the base unit can hold exactly */
			frac = frac * 10 + (uint64_t)(s[i] - '0');
			scale *= 10;
		}
	}
	while (i < n && s[i] == ' ')
		i++;
	size_t u0 = i, ul = n - i;
	while (ul && (s[u0 + ul - 1] == ' ' || s[u0 + ul - 1] == '.'))
		ul--; /* "20 secs." */
	static const struct {
		const char *unit;
		int kind;
		uint64_t base;
	} units[] = {
	    {"ns", TK_MX_TIME, 1},
	    {"µs", TK_MX_TIME, 1000},
	    {"us", TK_MX_TIME, 1000},
	    {"ms", TK_MX_TIME, 1000000},
	    {"s", TK_MX_TIME, 1000000000ULL},
	    {"sec", TK_MX_TIME, 1000000000ULL},
	    {"secs", TK_MX_TIME, 1000000000ULL},
	    {"second", TK_MX_TIME, 1000000000ULL},
	    {"seconds", TK_MX_TIME, 1000000000ULL},
	    {"min", TK_MX_TIME, 60000000000ULL},
	    {"mins", TK_MX_TIME, 60000000000ULL},
	    {"hr", TK_MX_TIME, 3600000000000ULL},
	    {"hrs", TK_MX_TIME, 3600000000000ULL},
	    {"h", TK_MX_TIME, 3600000000000ULL},
	    {"B", TK_MX_BYTES, 1},
	    {"byte", TK_MX_BYTES, 1},
	    {"bytes", TK_MX_BYTES, 1},
	    {"kB", TK_MX_BYTES, 1000},
	    {"KB", TK_MX_BYTES, 1000},
	    {"MB", TK_MX_BYTES, 1000000},
	    {"GB", TK_MX_BYTES, 1000000000ULL},
	    {"TB", TK_MX_BYTES, 1000000000000ULL},
	    {"KiB", TK_MX_BYTES, 1024},
	    {"MiB", TK_MX_BYTES, 1048576},
	    {"GiB", TK_MX_BYTES, 1073741824ULL},
	    {"ms per s", TK_MX_RATIO, 1000000}, /* scroll hitches: ms of hitches per s of scrolling */
	    {"ms/s", TK_MX_RATIO, 1000000},
	    {"bars", TK_MX_COUNT, 1},
	    {"", TK_MX_COUNT, 1},
	};
	for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
		size_t l = strlen(units[k].unit);
		if (l != ul || memcmp(s + u0, units[k].unit, l) != 0)
			continue;
		uint64_t base = units[k].base;
		if (scale > 1 && base % scale && units[k].kind != TK_MX_RATIO)
			return -1; /* "1.5 ns": finer than the base unit */
		if (whole > UINT64_MAX / base)
			return -1;
		uint64_t v = whole * base, part = scale > 1 ? frac * (base / scale) : 0;
		if (units[k].kind == TK_MX_RATIO && scale > 1) /* ratio kept in parts per 10^9 */
			part = (uint64_t)((double)frac * (double)base / (double)scale);
		if (v + part < v)
			return -1;
		out->kind = units[k].kind;
		out->value = v + part;
		return 0;
	}
	return -1;
}

/* ------------------------------------------------------------------ attributes */

typedef struct keymap {
	const char *apple, *ours;
	int measure; /* expected TK_MX_* kind, 0 for none */
} keymap;

/* diagnosticMetaData (and the same keys found directly in a diagnostic, where SDKs saw them) */
static const keymap meta_keys[] = {
    {"appVersion", "app.version", 0},
    {"appBuildVersion", "app.build", 0},
    {"bundleIdentifier", "bundle", 0},
    {"deviceType", "device", 0},
    {"osVersion", "os", 0},
    {"platformArchitecture", "arch", 0},
    {"regionFormat", "region", 0},
    {"pid", "pid", 0},
    {"isTestFlightApp", "testflight", 0},
    {"lowPowerModeEnabled", "low.power", 0},
    {"exceptionType", "exception.type", 0},
    {"exceptionCode", "exception.code", 0},
    {"signal", "signal", 0},
    {"terminationReason", "termination.reason", 0},
    {"virtualMemoryRegionInfo", "vm.region", 0},
    {"hangDuration", "hang.duration", TK_MX_TIME},
    {"totalCPUTime", "cpu.time", TK_MX_TIME},
    {"totalSampledTime", "sampled.time", TK_MX_TIME},
    {"launchDuration", "launch.duration", TK_MX_TIME},
    {"writesCaused", "disk.writes", TK_MX_BYTES},
};

/* metric payload groups' measurements with a shared name */
static const keymap metric_keys[] = {
    {"cumulativeForegroundTime", "foreground.time", TK_MX_TIME},
    {"cumulativeBackgroundTime", "background.time", TK_MX_TIME},
    {"cumulativeBackgroundAudioTime", "background.audio.time", TK_MX_TIME},
    {"cumulativeBackgroundLocationTime", "background.location.time", TK_MX_TIME},
    {"cumulativeCPUTime", "cpu.time", TK_MX_TIME},
    {"cumulativeGPUTime", "gpu.time", TK_MX_TIME},
    {"peakMemoryUsage", "memory.peak", TK_MX_BYTES},
    {"scrollHitchTimeRatio", "scroll.hitch.ratio", TK_MX_RATIO},
    {"cumulativeLogicalWrites", "disk.writes", TK_MX_BYTES},
};

static const keymap *find_key(const keymap *t, size_t nt, const char *k, size_t kn)
{
	for (size_t i = 0; i < nt; i++)
		if (strlen(t[i].apple) == kn && memcmp(t[i].apple, k, kn) == 0)
			return &t[i];
	return NULL;
}

static const char *kind_word(int kind)
{
	switch (kind) {
	case TK_MX_TIME: return "a duration such as 4 sec, 2.5 sec or 20 ms";
	case TK_MX_BYTES: return "a size such as 2,000 byte or 1,000 MB";
	case TK_MX_RATIO: return "a ratio such as 10 ms per s";
	default: return "a number with a unit";
	}
}

/* Value of a measured key as a double in seconds, bytes or a plain ratio. */
static double measured(const tk_mx_value *v)
{
	switch (v->kind) {
	case TK_MX_TIME: return (double)v->value / 1e9;
	case TK_MX_RATIO: return (double)v->value / 1e9;
	default: return (double)v->value;
	}
}

/* Read one scalar metadata value into event e (key already consumed). Unknown keys are kept as
 * "mx.KEY" when scalar, skipped otherwise. */
static int read_meta_value(mx *m, tk_event_id e, const keymap *t, size_t nt, const char *k, size_t kn,
                           const char *prefix, uint64_t *dur_ns)
{
	char key[200];
	const keymap *km = find_key(t, nt, k, kn);
	if (km)
		snprintf(key, sizeof key, "%s", km->ours);
	else
		snprintf(key, sizeof key, "mx.%s%.*s", prefix, (int)(kn > 150 ? 150 : kn), k);
	jp *j = &m->j;
	int c = peek(j);
	const char *at = j->p;
	if (c == '"') {
		const char *s;
		size_t n;
		if (jstr(j, &s, &n) < 0)
			return mx_jerr(m);
		if (km && km->measure) {
			tk_mx_value v;
			if (tk_mx_measurement(s, n, &v) < 0 || (int)v.kind != km->measure) {
				char sh[60];
				shown(sh, sizeof sh, s, n);
				return mx_fail_at(m, at, "%s: cannot read \"%s\" as %s", m->where, sh,
				                  kind_word(km->measure));
			}
			tk_event_set_num(m->p, e, key, measured(&v));
			if (dur_ns)
				*dur_ns = v.value;
			return 0;
		}
		char *str = tk_xstrndup(s, n);
		tk_event_set_str(m->p, e, key, str);
		free(str);
		return 0;
	}
	if (km && km->measure && c != 'n' && c != '"') /* a bare number has no unit: refused */
		return mx_fail_at(m, at, "%s: expected %s as a string", m->where, kind_word(km->measure));
	if (c == '-' || (c >= '0' && c <= '9')) {
		uint64_t u;
		double d;
		int kind;
		if (jnum(j, &u, &d, &kind) < 0)
			return mx_jerr(m);
		tk_event_set_num(m->p, e, key, d);
		return 0;
	}
	if (c == 't' || c == 'f') {
		if (jlit(j, c == 't' ? "true" : "false", c == 't' ? 4 : 5) < 0)
			return mx_jerr(m);
		tk_event_set_num(m->p, e, key, c == 't');
		return 0;
	}
	return jskip(j) < 0 ? mx_jerr(m) : 0; /* null, objects, arrays: not kept */
}

/* ------------------------------------------------------------------ call stack trees */

static void im_reset(mx *m, size_t need)
{
	size_t cap = 16;
	while (cap < need * 2)
		cap <<= 1;
	if (cap > m->im_cap) {
		free(m->im_key);
		free(m->im_load);
		m->im_key = tk_xmalloc(cap * sizeof *m->im_key);
		m->im_load = tk_xmalloc(cap * sizeof *m->im_load);
		m->im_cap = cap;
	}
	memset(m->im_key, 0, m->im_cap * sizeof *m->im_key);
}

static uint64_t *im_slot(mx *m, tk_str uuid)
{
	size_t mask = m->im_cap - 1, i = (size_t)tk_hash_u64(uuid) & mask;
	while (m->im_key[i] && m->im_key[i] != uuid)
		i = (i + 1) & mask;
	if (!m->im_key[i]) {
		m->im_key[i] = uuid;
		m->im_load[i] = UINT64_MAX;
	}
	return &m->im_load[i];
}

/* The image's load address a frame implies. Two forms exist in real payloads (docs/metrickit.md):
 * offsetIntoBinaryTextSegment is the offset into the image (address − offset = load address, the
 * usual form), or — iOS 14 payloads — the image's load address itself (every frame of an image the
 * same value, ≥ 4 GiB, ≤ address). A text segment is never 4 GiB long, so the test is exact. */
static uint64_t frame_load(const mxframe *f)
{
	if (!f->has_address)
		return 0;
	if (f->has_offset && f->offset >= (1ULL << 32) && f->offset <= f->address)
		return f->offset;
	return f->has_offset && f->offset <= f->address ? f->address - f->offset : 0;
}

static int uuid_ok(const char *s, size_t n)
{
	if (n != 36 && n != 32)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int dash = n == 36 && (i == 8 || i == 13 || i == 18 || i == 23);
		if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return 0;
	}
	return 1;
}

/* Frame path for messages: the diagnostic's field, the stack, then the frame's place. */
static void frame_where(mx *m, const char *base, uint32_t stack_i, uint32_t fi, const char *field)
{
	/* collect indices from the frame up */
	uint32_t idx[4], nidx = 0, depth = m->fr[fi].depth;
	for (uint32_t x = fi + 1; x && nidx < 4; x = m->fr[x - 1].parent)
		idx[nidx++] = m->fr[x - 1].child;
	char tail[160] = "";
	size_t o = 0;
	if (depth <= 4) {
		o += (size_t)snprintf(tail + o, sizeof tail - o, ".callStackRootFrames[%u]", idx[nidx - 1]);
		for (uint32_t i = nidx - 1; i-- > 0;)
			o += (size_t)snprintf(tail + o, sizeof tail - o, ".subFrames[%u]", idx[i]);
	} else {
		o += (size_t)snprintf(tail + o, sizeof tail - o, ".callStackRootFrames[…]");
		for (uint32_t i = nidx; i-- > 0;)
			o += (size_t)snprintf(tail + o, sizeof tail - o, ".subFrames[%u]", idx[i]);
		snprintf(tail + o, sizeof tail - o, " (depth %u)", depth);
	}
	where_set(m, "%s.callStacks[%u]%s%s%s", base, stack_i, tail, field ? "." : "", field ? field : "");
}

static struct scache *scache_slot(mx *m, const char *s, size_t n, int uuid)
{
	uint64_t a = 0, z = 0;
	memcpy(&a, s, n < 8 ? n : 8);
	if (n >= 8)
		memcpy(&z, s + n - 8, 8);
	uint64_t h = (a ^ (z * 0x9e3779b97f4a7c15ULL) ^ n) * 0xff51afd7ed558ccdULL;
	return &m->sc[((h >> 57) ^ (uint64_t)uuid) & 127];
}

/* One frame object's members (the '{' consumed); subFrames opens a nested level. Returns 1 when
 * the caller must descend into subFrames (array opened), 0 when the object ended, -1 on error. */
static int read_frame_members(mx *m, const char *base, uint32_t stack_i, uint32_t fi, int *first)
{
	jp *j = &m->j;
	const char *k;
	size_t kn;
	int r;
	while ((r = obj_next(j, first, &k, &kn)) == 1) {
		mxframe *f = &m->fr[fi];
		const char *at = j->p;
		if (KEY("subFrames")) {
			if (peek(j) == 'n') {
				if (jlit(j, "null", 4) < 0)
					return mx_jerr(m);
				continue;
			}
			if (peek(j) != '[') {
				frame_where(m, base, stack_i, fi, "subFrames");
				return mx_fail_at(m, at, "%s: expected an array of frames", m->where);
			}
			j->p++;
			return 1;
		}
		int which = KEY("sampleCount") ? 1 : KEY("offsetIntoBinaryTextSegment") ? 2 : KEY("address") ? 3 : 0;
		if (which) {
			uint64_t u;
			double d;
			int kind;
			if (peek(j) == 'n') { /* null: as if absent */
				if (jlit(j, "null", 4) < 0)
					return mx_jerr(m);
				continue;
			}
			const char *fld = which == 1   ? "sampleCount"
			                  : which == 2 ? "offsetIntoBinaryTextSegment"
			                               : "address";
			int c0 = peek(j);
			if (c0 == '-' || (c0 >= '0' && c0 <= '9') ? jnum(j, &u, &d, &kind) < 0 || kind != NUM_UINT
			                                          : 1) {
				frame_where(m, base, stack_i, fi, fld);
				if (j->err)
					return mx_jerr(m);
				return mx_fail_at(m, at, "%s: expected a whole number from 0 to 2^64 - 1", m->where);
			}
			if (which == 1)
				f->count = u, f->has_count = 1;
			else if (which == 2)
				f->offset = u, f->has_offset = 1;
			else
				f->address = u, f->has_address = 1;
			continue;
		}
		int su = KEY("binaryUUID"), sn = !su && KEY("binaryName");
		if (su || sn) {
			const char *s;
			size_t n;
			if (peek(j) == 'n') {
				if (jlit(j, "null", 4) < 0)
					return mx_jerr(m);
				continue;
			}
			if (jstr(j, &s, &n) < 0) {
				frame_where(m, base, stack_i, fi, su ? "binaryUUID" : "binaryName");
				return mx_jerr(m);
			}
			struct scache *ce = NULL;
			if (n && n <= sizeof ce->raw) {
				ce = scache_slot(m, s, n, su);
				if (ce->len == n && ce->uuid == su && memcmp(ce->raw, s, n) == 0) {
					*(su ? &f->uuid : &f->name) = ce->id;
					continue;
				}
			}
			if (su) {
				if (!n)
					continue; /* an empty UUID: as if missing */
				if (!uuid_ok(s, n)) {
					char sh[60];
					shown(sh, sizeof sh, s, n);
					frame_where(m, base, stack_i, fi, "binaryUUID");
					return mx_fail_at(m, at, "%s: \"%s\" is not a UUID", m->where, sh);
				}
				char u[37];
				size_t o = 0;
				for (size_t i = 0; i < n; i++) {
					char c = s[i] >= 'a' && s[i] <= 'f' ? (char)(s[i] - 32) : s[i];
					if (n == 32 && (i == 8 || i == 12 || i == 16 || i == 20))
						u[o++] = '-';
					u[o++] = c;
				}
				f->uuid = tk_intern(m->p, u, o);
			} else
				f->name = tk_intern(m->p, s, n);
			if (ce) {
				ce->len = (uint8_t)n;
				ce->uuid = (uint8_t)su;
				memcpy(ce->raw, s, n);
				ce->id = su ? f->uuid : f->name;
			}
			continue;
		}
		if (jskip(j) < 0) { /* unknown members are skipped */
			frame_where(m, base, stack_i, fi, NULL);
			return mx_jerr(m);
		}
	}
	if (r < 0) {
		frame_where(m, base, stack_i, fi, NULL);
		return mx_jerr(m);
	}
	mxframe *f = &m->fr[fi];
	if (!f->has_count) {
		frame_where(m, base, stack_i, fi, "sampleCount");
		return mx_fail_at(m, j->p - 1, "%s: missing (every frame needs its sample count)", m->where);
	}
	return 0;
}

/* callStackRootFrames of one stack (the '[' not yet consumed), iteratively. */
static int read_roots(mx *m, const char *base, uint32_t stack_i)
{
	jp *j = &m->j;
	if (peek(j) != '[') {
		where_set(m, "%s.callStacks[%u].callStackRootFrames", base, stack_i);
		return mx_fail_at(m, j->p, "%s: expected an array of frames", m->where);
	}
	j->p++;
	size_t depth = 0; /* open frames: m->fstack[0 .. depth) */
	int first_arr = 1;
	uint32_t nroots = 0;
	for (;;) {
		/* in an array of frames: at depth 0 the roots, else the subFrames of fstack[depth-1] */
		int r = arr_next(j, &first_arr);
		if (r < 0) {
			if (depth)
				frame_where(m, base, stack_i, m->fstack[depth - 1] - 1, "subFrames");
			else
				where_set(m, "%s.callStacks[%u].callStackRootFrames", base, stack_i);
			return mx_jerr(m);
		}
		uint32_t fi;
		int first_obj = 1;
		if (r == 1) {
			if (depth >= TK_MX_MAX_DEPTH) {
				frame_where(m, base, stack_i, m->fstack[depth - 1] - 1, "subFrames");
				return mx_fail_at(m, j->p, "%s: a stack deeper than %d frames", m->where,
				                  TK_MX_MAX_DEPTH);
			}
			const char *at = j->p;
			if (peek(j) != '{') {
				if (depth)
					frame_where(m, base, stack_i, m->fstack[depth - 1] - 1, "subFrames");
				else
					where_set(m, "%s.callStacks[%u].callStackRootFrames", base, stack_i);
				return mx_fail_at(m, at, "%s: expected a frame object", m->where);
			}
			j->p++;
			TK_GROW_BIG(m->fr, m->capfr, m->nfr + 1);
			fi = (uint32_t)m->nfr++;
			mxframe *f = &m->fr[fi];
			memset(f, 0, sizeof *f);
			if (depth) {
				mxframe *par = &m->fr[m->fstack[depth - 1] - 1];
				f->parent = m->fstack[depth - 1];
				f->child = par->nsub++;
			} else
				f->child = nroots++;
			f->depth = (uint32_t)depth + 1;
			TK_GROW(m->fstack, m->capfstack, depth + 1);
			m->fstack[depth++] = fi + 1;
		} else {
			/* the array closed: back in its frame's members, or done at the roots */
			if (!depth)
				return 0;
			fi = m->fstack[depth - 1] - 1;
			first_obj = 0;
		}
		/* read members of frame fi until it descends or ends */
		for (;;) {
			int d = read_frame_members(m, base, stack_i, fi, &first_obj);
			if (d < 0)
				return -1;
			if (d == 1) {
				first_arr = 1;
				break; /* into its subFrames */
			}
			/* frame fi ended: add it to its parent's sum, pop */
			mxframe *f = &m->fr[fi];
			depth--;
			if (f->parent) {
				mxframe *par = &m->fr[f->parent - 1];
				if (par->subsum + f->count < par->subsum) {
					frame_where(m, base, stack_i, f->parent - 1, "subFrames");
					return mx_fail_at(m, j->p, "%s: sample counts add up past 2^64 - 1", m->where);
				}
				par->subsum += f->count;
			}
			first_arr = 0;
			break; /* back in the enclosing array */
		}
	}
}

/* Turn the frames read for one diagnostic into threads of event e. */
static int build_threads(mx *m, tk_event_id e, const char *base, int per_thread, tk_str arch, int64_t pid,
                         tk_str process, const char *label)
{
	/* per-image load addresses over the whole diagnostic (one process) */
	im_reset(m, m->nfr);
	for (size_t i = 0; i < m->nfr; i++) {
		mxframe *f = &m->fr[i];
		if (!f->uuid || !f->has_address)
			continue;
		uint64_t l = frame_load(f), *slot = im_slot(m, f->uuid);
		if (l < *slot)
			*slot = l;
	}
	/* a payload's tables take huge pages (tk_xmalloc_big): on a virtual machine the first touch of
	 * 4 KB pages was a good part of reading a big payload */
	tk_stack_id *stk = tk_xmalloc_big((m->nfr + 1) * sizeof *stk);
	TK_GROW_BIG(m->cells, m->capcells, m->nfr + 1);
	for (size_t si = 0; si < m->nst; si++) {
		mxstack *cs = &m->st[si];
		char tname[200];
		if (per_thread)
			snprintf(tname, sizeof tname, "%s thread %zu%s", label, si,
			         cs->attributed == 1 ? " (attributed)" : "");
		else if (m->nst > 1)
			snprintf(tname, sizeof tname, "%s all threads %zu", label, si);
		else
			snprintf(tname, sizeof tname, "%s all threads", label);
		tk_thread_id t = tk_thread_get_or_add(m->p, pid, m->next_tid++, tk_intern_cstr(m->p, tname), process);
		tk_thread_role role = per_thread && cs->attributed == 1 ? TK_ROLE_ATTRIBUTED : TK_ROLE_OWNED;
		tk_thread_set_event(m->p, t, e, role);
		if (role == TK_ROLE_ATTRIBUTED || (!per_thread && si == 0))
			tk_event_set_thread(m->p, e, t);
		size_t ncells = 0; /* the thread's self counts, added at once (model/cells.h) */
		for (uint32_t x = cs->first; x < cs->first + cs->n; x++) {
			mxframe *f = &m->fr[x];
			if (f->subsum > f->count) {
				frame_where(m, base, (uint32_t)si, x, "sampleCount");
				tk_thread_add_cells(m->p, t, m->cells, ncells);
				free(stk);
				return mx_fail_at(
				    m, NULL,
				    "%s: %llu is less than its subFrames' total %llu (sampleCount counts every "
				    "sample the frame is in)",
				    m->where, (unsigned long long)f->count, (unsigned long long)f->subsum);
			}
			uint64_t load = 0;
			if (f->uuid && f->has_address) {
				uint64_t *slot = im_slot(m, f->uuid);
				load = *slot == UINT64_MAX ? 0 : *slot;
			}
			tk_frame fr = {0};
			/* shown: the offset as the payload gives it, or address − offset in the iOS 14 form */
			uint64_t off = f->has_offset ? f->offset : f->address - load;
			if (f->has_address) {
				fr.addr = f->address - load; /* slide-free: see below */
				if (f->has_offset && f->offset >= (1ULL << 32) && f->offset <= f->address)
					off = f->address - f->offset;
			} else
				fr.addr = f->has_offset ? f->offset : 0;
			uint32_t leaf = !f->nsub;
			uint64_t h = tk_hash_u64(fr.addr ^ (off << 20) ^ ((uint64_t)f->uuid << 40) ^
			                         ((uint64_t)f->name << 8) ^ leaf);
			if (m->fc_n * 2 >= m->fc_cap) { /* grow (rehash) */
				size_t nc = m->fc_cap ? m->fc_cap * 2 : 4096;
				struct fkey *nt = tk_xmalloc_big(nc * sizeof *nt);
				memset(nt, 0, nc * sizeof *nt);
				for (size_t i = 0; i < m->fc_cap; i++)
					if (m->fc[i].id) {
						struct fkey *k = &m->fc[i];
						size_t j = (size_t)tk_hash_u64(k->addr ^ (k->off << 20) ^
						                               ((uint64_t)k->uuid << 40) ^
						                               ((uint64_t)k->name << 8) ^ k->leaf) &
						           (nc - 1);
						while (nt[j].id)
							j = (j + 1) & (nc - 1);
						nt[j] = *k;
					}
				free(m->fc);
				m->fc = nt;
				m->fc_cap = nc;
			}
			size_t slot = (size_t)h & (m->fc_cap - 1);
			while (m->fc[slot].id &&
			       !(m->fc[slot].addr == fr.addr && m->fc[slot].off == off && m->fc[slot].uuid == f->uuid &&
			         m->fc[slot].name == f->name && m->fc[slot].leaf == leaf))
				slot = (slot + 1) & (m->fc_cap - 1);
			tk_frame_id fid = m->fc[slot].id;
			if (fid)
				goto have_frame;
			if (f->uuid || f->name) {
				/* Frames carry their offset into the image as the address, with load address 0: every
				 * diagnostic has its own ASLR slide, and the same code in two payloads is then one
				 * frame (the model grows with distinct code, not with payloads). Symbolication looks
				 * the offset up in the image as it would address − load. */
				tk_binary b = {f->name, 0, f->uuid, arch, 0};
				fr.binary = tk_binary_add(m->p, &b);
				char nm[320]; /* "%.260s + 0x%llx" */
				const char *bn = tk_string(m->p, f->name ? f->name : f->uuid);
				size_t nl = strnlen(bn, 260);
				memcpy(nm, bn, nl);
				memcpy(nm + nl, " + ", 3);
				nl += 3 + tk_fmt_hex(nm + nl + 3, off);
				fr.name = tk_intern(m->p, nm, nl);
			}
			if (leaf)
				fr.flags |= TK_FRAME_LEAF_PC;
			fid = tk_frame_add(m->p, &fr);
			m->fc[slot] = (struct fkey){f->uuid, f->name, fr.addr, off, leaf, fid};
			m->fc_n++;
		have_frame:
			stk[x] = tk_stack_push(m->p, f->parent ? stk[f->parent - 1] : 0, fid);
			uint64_t self = f->count - f->subsum;
			if (self)
				m->cells[ncells++] = (tk_stack_weight){stk[x], self, self};
		}
		tk_thread_add_cells(m->p, t, m->cells, ncells);
	}
	free(stk);
	return 0;
}

/* callStackTree object (the '{' not yet consumed): fills m->fr / m->st; *per_thread is set. */
static int read_tree(mx *m, const char *base, int *per_thread)
{
	jp *j = &m->j;
	m->nfr = m->nst = 0;
	*per_thread = -1;
	where_set(m, "%s", base);
	if (obj_begin(j) < 0)
		return mx_jerr(m);
	const char *k;
	size_t kn;
	int first = 1, r;
	while ((r = obj_next(j, &first, &k, &kn)) == 1) {
		if (KEY("callStackPerThread")) {
			int c = peek(j);
			if (c == 't' || c == 'f') {
				if (jlit(j, c == 't' ? "true" : "false", c == 't' ? 4 : 5) < 0)
					return mx_jerr(m);
				*per_thread = c == 't';
			} else {
				where_set(m, "%s.callStackPerThread", base);
				if (jskip(j) < 0)
					return mx_jerr(m);
				return mx_fail_at(m, j->p, "%s: expected true or false", m->where);
			}
		} else if (KEY("callStacks")) {
			where_set(m, "%s.callStacks", base);
			if (arr_begin(j) < 0)
				return mx_jerr(m);
			int fa = 1, ra;
			while ((ra = arr_next(j, &fa)) == 1) {
				uint32_t si = (uint32_t)m->nst;
				TK_GROW(m->st, m->capst, m->nst + 1);
				mxstack *cs = &m->st[m->nst++];
				cs->first = (uint32_t)m->nfr;
				cs->n = 0;
				cs->attributed = -1;
				where_set(m, "%s.callStacks[%u]", base, si);
				if (obj_begin(j) < 0)
					return mx_jerr(m);
				int fo = 1, ro;
				while ((ro = obj_next(j, &fo, &k, &kn)) == 1) {
					if (KEY("threadAttributed")) {
						int c = peek(j);
						if (c == 't' || c == 'f') {
							if (jlit(j, c == 't' ? "true" : "false", c == 't' ? 4 : 5) < 0)
								return mx_jerr(m);
							m->st[si].attributed = c == 't';
						} else if (jskip(j) < 0)
							return mx_jerr(m);
					} else if (KEY("callStackRootFrames")) {
						if (read_roots(m, base, si) < 0)
							return -1;
					} else if (jskip(j) < 0)
						return mx_jerr(m);
					where_set(m, "%s.callStacks[%u]", base, si);
				}
				if (ro < 0)
					return mx_jerr(m);
				m->st[si].n = (uint32_t)(m->nfr - m->st[si].first);
				where_set(m, "%s.callStacks", base);
			}
			if (ra < 0)
				return mx_jerr(m);
		} else if (jskip(j) < 0)
			return mx_jerr(m);
		where_set(m, "%s", base);
	}
	if (r < 0)
		return mx_jerr(m);
	if (*per_thread < 0) /* absent: a tree with one stack is one thread either way */
		*per_thread = 1;
	return 0;
}

/* ------------------------------------------------------------------ payloads */

/* "2020-10-12 03:59:00 +0000" (or without the zone, read as UTC) → Unix seconds. */
static int parse_stamp(const char *s, size_t n, double *out)
{
	int Y, M, D, h, mi, sec, len = 0;
	char buf[64];
	if (n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (sscanf(buf, "%4d-%2d-%2d %2d:%2d:%2d%n", &Y, &M, &D, &h, &mi, &sec, &len) != 6)
		return -1;
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || mi > 59 || sec > 60 || Y < 1970 || Y > 9999)
		return -1;
	long zone = 0;
	const char *z = buf + len;
	while (*z == ' ')
		z++;
	if (*z == '+' || *z == '-') {
		int zh, zm;
		if (strlen(z) != 5 || sscanf(z + 1, "%2d%2d", &zh, &zm) != 2)
			return -1;
		zone = (zh * 3600L + zm * 60L) * (*z == '-' ? -1 : 1);
	} else if (*z == 'Z')
		z++;
	else if (*z)
		return -1;
	struct tm tm = {.tm_year = Y - 1900, .tm_mon = M - 1, .tm_mday = D, .tm_hour = h, .tm_min = mi, .tm_sec = sec};
	*out = (double)(timegm(&tm) - zone);
	return 0;
}

/* The model keeps an event's times as given to tk_event_add; a payload's time range may come after
 * its diagnostics (key order is free), so they are filled in once the payload is closed. The event
 * lives in the profile's own (non-const) array. */
static tk_event *event_mut(tk_profile *p, tk_event_id e)
{
	return (tk_event *)(uintptr_t)tk_event_get(p, e);
}

typedef struct payload_info {
	double begin, end;
} payload_info;

static const struct {
	const char *key;
	tk_event_kind kind;
	const char *label;
} diag_arrays[] = {
    {"hangDiagnostics", TK_EVENT_HANG, "hang"},
    {"cpuExceptionDiagnostics", TK_EVENT_CPU_EXCEPTION, "cpu-exception"},
    {"diskWriteExceptionDiagnostics", TK_EVENT_DISK_WRITE, "disk-write"},
    {"crashDiagnostics", TK_EVENT_CRASH, "crash"},
    {"appLaunchDiagnostics", TK_EVENT_LAUNCH, "launch"},
};

/* One diagnostic object: an event with its metadata, owning its call stacks' threads. */
static int read_diagnostic(mx *m, size_t kind_i, size_t idx, const payload_info *pi)
{
	jp *j = &m->j;
	char base[160];
	snprintf(base, sizeof base, "payload %zu: %s[%zu]", m->npayloads, diag_arrays[kind_i].key, idx);
	tk_event ev = {.kind = diag_arrays[kind_i].kind,
	               .name = tk_intern_cstr(m->p, diag_arrays[kind_i].key),
	               .start = UINT64_MAX,
	               .duration = UINT64_MAX,
	               .wall = NAN,
	               .thread = TK_NO_THREAD};
	(void)pi;
	if (ev.kind == TK_EVENT_CRASH)
		ev.duration = 0;
	tk_event_id e = tk_event_add(m->p, &ev);
	m->ndiag++;
	where_set(m, "%s", base);
	if (obj_begin(j) < 0)
		return mx_jerr(m);
	const char *k;
	size_t kn;
	int first = 1, r, have_tree = 0, per_thread = 1;
	uint64_t dur = UINT64_MAX, sampled = UINT64_MAX;
	size_t tree_first = 0;
	char treebase[200];
	snprintf(treebase, sizeof treebase, "%s.callStackTree", base);
	while ((r = obj_next(j, &first, &k, &kn)) == 1) {
		if (KEY("callStackTree")) {
			if (read_tree(m, treebase, &per_thread) < 0)
				return -1;
			have_tree = 1;
			tree_first = 0;
		} else if (KEY("diagnosticMetaData")) {
			where_set(m, "%s.diagnosticMetaData", base);
			if (obj_begin(j) < 0)
				return mx_jerr(m);
			int fm = 1, rm;
			while ((rm = obj_next(j, &fm, &k, &kn)) == 1) {
				where_set(m, "%s.diagnosticMetaData.%.*s", base, (int)(kn > 80 ? 80 : kn), k);
				uint64_t v = UINT64_MAX;
				int isdur = KEY("hangDuration") || KEY("launchDuration");
				int issam = KEY("totalSampledTime");
				if (read_meta_value(m, e, meta_keys, sizeof meta_keys / sizeof meta_keys[0], k, kn, "",
				                    &v) < 0)
					return -1;
				if (isdur && v != UINT64_MAX)
					dur = v;
				if (issam && v != UINT64_MAX)
					sampled = v;
			}
			if (rm < 0)
				return mx_jerr(m);
		} else if (KEY("version")) {
			where_set(m, "%s.version", base);
			if (read_meta_value(m, e, NULL, 0, "version", 7, "", NULL) < 0)
				return -1;
		} else {
			/* keys of the metadata seen directly in the diagnostic are read the same way */
			where_set(m, "%s.%.*s", base, (int)(kn > 80 ? 80 : kn), k);
			const keymap *km = find_key(meta_keys, sizeof meta_keys / sizeof meta_keys[0], k, kn);
			uint64_t v = UINT64_MAX;
			int isdur = KEY("hangDuration") || KEY("launchDuration");
			if (km) {
				if (read_meta_value(m, e, meta_keys, sizeof meta_keys / sizeof meta_keys[0], k, kn, "",
				                    &v) < 0)
					return -1;
				if (isdur && v != UINT64_MAX)
					dur = v;
			} else if (jskip(j) < 0)
				return mx_jerr(m);
		}
		where_set(m, "%s", base);
	}
	if (r < 0)
		return mx_jerr(m);
	(void)tree_first;
	if (ev.kind == TK_EVENT_CPU_EXCEPTION && dur == UINT64_MAX)
		dur = sampled;
	if (dur != UINT64_MAX)
		event_mut(m->p, e)->duration = dur;
	if (have_tree) {
		const char *arch = tk_event_str(m->p, e, "arch");
		const char *bundle = tk_event_str(m->p, e, "bundle");
		double pid = tk_event_num(m->p, e, "pid");
		char label[64];
		snprintf(label, sizeof label, "%s %zu", diag_arrays[kind_i].label, m->ndiag);
		if (build_threads(m, e, treebase, per_thread, arch ? tk_intern_cstr(m->p, arch) : 0,
		                  isnan(pid) ? -1 : (int64_t)pid, bundle ? tk_intern_cstr(m->p, bundle) : 0, label) < 0)
			return -1;
	}
	return 0;
}

/* A bare callStackTree (SDKs keep them so): one diagnostic of unknown kind, a marker. */
static int read_bare_tree(mx *m)
{
	char base[64];
	snprintf(base, sizeof base, "payload %zu: callStackTree", m->npayloads);
	tk_event ev = {.kind = TK_EVENT_MARKER,
	               .name = tk_intern_cstr(m->p, "callStackTree"),
	               .start = UINT64_MAX,
	               .duration = UINT64_MAX,
	               .wall = NAN,
	               .thread = TK_NO_THREAD};
	tk_event_id e = tk_event_add(m->p, &ev);
	m->ndiag++;
	int per_thread;
	if (read_tree(m, base, &per_thread) < 0)
		return -1;
	char label[64];
	snprintf(label, sizeof label, "stacks %zu", m->ndiag);
	return build_threads(m, e, base, per_thread, 0, -1, 0, label);
}

/* "histogrammedAppHangTime" → "app.hang.time" (lower-case words joined by '.'). */
static void dotted(char *out, size_t cap, const char *k, size_t kn)
{
	size_t o = 0;
	for (size_t i = 0; i < kn && o + 2 < cap; i++) {
		char c = k[i];
		if (c >= 'A' && c <= 'Z') {
			if (o && out[o - 1] != '.' && !(i && k[i - 1] >= 'A' && k[i - 1] <= 'Z'))
				out[o++] = '.';
			c = (char)(c + 32);
		}
		out[o++] = c;
	}
	out[o] = 0;
}

/* A histogram object → attribute "histogram.NAME" = "UNIT;start,end,count;…" (see stats.h). */
static int read_histogram(mx *m, tk_event_id e, const char *group, const char *k, size_t kn)
{
	jp *j = &m->j;
	char name[160], key[200];
	const char *nk = k + 12; /* after "histogrammed" */
	size_t nn = kn - 12;
	if (nn > 3 && memcmp(nk + nn - 3, "Key", 3) == 0)
		nn -= 3; /* Apple's sample payload writes histogrammedTimeToFirstDrawKey */
	dotted(name, sizeof name, nk, nn);
	snprintf(key, sizeof key, "histogram.%s", name);
	char base[300];
	snprintf(base, sizeof base, "payload %zu: %s.%.*s", m->npayloads, group, (int)(kn > 80 ? 80 : kn), k);
	where_set(m, "%s", base);
	if (obj_begin(j) < 0)
		return mx_jerr(m);
	tk_mx_bucket *b = NULL;
	size_t nb = 0, cb = 0;
	int unit = -1, first = 1, r;
	const char *kk;
	size_t kkn;
	while ((r = obj_next(j, &first, &kk, &kkn)) == 1) {
		if (kkn == 14 && memcmp(kk, "histogramValue", 14) == 0) {
			where_set(m, "%s.histogramValue", base);
			if (obj_begin(j) < 0)
				goto jerr;
			int fb = 1, rb;
			while ((rb = obj_next(j, &fb, &kk, &kkn)) == 1) {
				char bname[40];
				shown(bname, sizeof bname, kk, kkn);
				where_set(m, "%s.histogramValue.%s", base, bname);
				TK_GROW(b, cb, nb + 1);
				tk_mx_bucket *bk = &b[nb++];
				memset(bk, 0, sizeof *bk);
				int have = 0;
				if (obj_begin(j) < 0)
					goto jerr;
				int fv = 1, rv;
				while ((rv = obj_next(j, &fv, &kk, &kkn)) == 1) {
					int which = kkn == 11 && memcmp(kk, "bucketStart", 11) == 0   ? 1
					            : kkn == 9 && memcmp(kk, "bucketEnd", 9) == 0     ? 2
					            : kkn == 11 && memcmp(kk, "bucketCount", 11) == 0 ? 3
					                                                              : 0;
					const char *at = j->p;
					if (which == 3) {
						uint64_t u;
						double d;
						int kind;
						if (jnum(j, &u, &d, &kind) < 0 || kind != NUM_UINT) {
							where_set(m, "%s.histogramValue.%s.bucketCount", base, bname);
							if (j->err)
								goto jerr;
							free(b);
							return mx_fail_at(m, at, "%s: expected a whole number",
							                  m->where);
						}
						bk->count = u;
						have |= 4;
					} else if (which) {
						const char *s;
						size_t n;
						where_set(m, "%s.histogramValue.%s.%s", base, bname,
						          which == 1 ? "bucketStart" : "bucketEnd");
						tk_mx_value v;
						if (jstr(j, &s, &n) < 0)
							goto jerr;
						if (tk_mx_measurement(s, n, &v) < 0 ||
						    (unit >= 0 && (int)v.kind != unit)) {
							char sh[60];
							shown(sh, sizeof sh, s, n);
							free(b);
							return mx_fail_at(
							    m, at, "%s: cannot read \"%s\" as %s", m->where, sh,
							    unit >= 0 ? kind_word(unit) : "a number with a unit");
						}
						unit = v.kind;
						*(which == 1 ? &bk->start : &bk->end) = v.value;
						have |= which;
					} else if (jskip(j) < 0)
						goto jerr;
				}
				if (rv < 0)
					goto jerr;
				if (have != 7) {
					free(b);
					return mx_fail_at(m, j->p,
					                  "%s: a bucket needs bucketStart, bucketEnd and bucketCount",
					                  m->where);
				}
				if (bk->end < bk->start) {
					free(b);
					return mx_fail_at(m, j->p, "%s: bucketEnd is before bucketStart", m->where);
				}
			}
			if (rb < 0)
				goto jerr;
		} else if (jskip(j) < 0)
			goto jerr;
		where_set(m, "%s", base);
	}
	if (r < 0)
		goto jerr;
	char *txt = tk_mx_histogram_format(b, nb, unit < 0 ? TK_MX_COUNT : unit);
	tk_event_set_str(m->p, e, key, txt);
	free(txt);
	free(b);
	return 0;
jerr:
	free(b);
	return mx_jerr(m);
}

/* MXMetricPayload members after the top-level keys were recognised: groups of measurements. */
static int read_metric_group(mx *m, tk_event_id e, const char *g, size_t gn)
{
	jp *j = &m->j;
	char group[100];
	shown(group, sizeof group, g, gn > 90 ? 90 : gn);
	where_set(m, "payload %zu: %s", m->npayloads, group);
	if (peek(j) != '{')
		return jskip(j) < 0 ? mx_jerr(m) : 0;
	j->p++;
	const char *k;
	size_t kn;
	int first = 1, r;
	while ((r = obj_next(j, &first, &k, &kn)) == 1) {
		if (kn > 12 && memcmp(k, "histogrammed", 12) == 0 && peek(j) == '{') {
			if (read_histogram(m, e, group, k, kn) < 0)
				return -1;
		} else if (peek(j) == '{') { /* MXAverage: {averageValue, standardDeviation, sampleCount} */
			char key[200];
			snprintf(key, sizeof key, "%s.%.*s", group, (int)(kn > 90 ? 90 : kn), k);
			where_set(m, "payload %zu: %s", m->npayloads, key);
			j->p++;
			int fa = 1, ra;
			const char *ak;
			size_t akn;
			while ((ra = obj_next(j, &fa, &ak, &akn)) == 1) {
				if (akn == 12 && memcmp(ak, "averageValue", 12) == 0 && peek(j) == '"') {
					const char *s;
					size_t n;
					if (jstr(j, &s, &n) < 0)
						return mx_jerr(m);
					char full[300], *str = tk_xstrndup(s, n);
					snprintf(full, sizeof full, "mx.%s", key);
					tk_event_set_str(m->p, e, full, str);
					free(str);
				} else if (jskip(j) < 0)
					return mx_jerr(m);
			}
			if (ra < 0)
				return mx_jerr(m);
		} else {
			char prefix[110];
			snprintf(prefix, sizeof prefix, "%s.", group);
			where_set(m, "payload %zu: %s.%.*s", m->npayloads, group, (int)(kn > 90 ? 90 : kn), k);
			if (read_meta_value(m, e, metric_keys, sizeof metric_keys / sizeof metric_keys[0], k, kn,
			                    prefix, NULL) < 0)
				return -1;
		}
		where_set(m, "payload %zu: %s", m->npayloads, group);
	}
	return r < 0 ? mx_jerr(m) : 0;
}

/* A metric payload's metaData object. */
static int read_metric_meta(mx *m, tk_event_id e)
{
	jp *j = &m->j;
	where_set(m, "payload %zu: metaData", m->npayloads);
	if (obj_begin(j) < 0)
		return mx_jerr(m);
	const char *k;
	size_t kn;
	int first = 1, r;
	while ((r = obj_next(j, &first, &k, &kn)) == 1) {
		where_set(m, "payload %zu: metaData.%.*s", m->npayloads, (int)(kn > 80 ? 80 : kn), k);
		if (read_meta_value(m, e, meta_keys, sizeof meta_keys / sizeof meta_keys[0], k, kn, "metaData.", NULL) <
		    0)
			return -1;
	}
	return r < 0 ? mx_jerr(m) : 0;
}

static tk_event_id metric_event(mx *m, tk_event_id *me)
{
	if (!*me) {
		tk_event ev = {.kind = TK_EVENT_MARKER,
		               .name = tk_intern_cstr(m->p, "metrics"),
		               .start = UINT64_MAX,
		               .duration = UINT64_MAX,
		               .wall = NAN,
		               .thread = TK_NO_THREAD};
		*me = tk_event_add(m->p, &ev);
		m->nmetrics++;
	}
	return *me;
}

/* One top-level object: a diagnostic payload, a metric payload or a bare callStackTree. */
static int read_payload(mx *m)
{
	jp *j = &m->j;
	m->npayloads++;
	where_set(m, "payload %zu", m->npayloads);
	const char *start = j->p;
	if (obj_begin(j) < 0)
		return mx_jerr(m);
	const char *k;
	size_t kn;
	int first = 1, r;
	payload_info pi = {NAN, NAN};
	tk_event_id first_event = (tk_event_id)tk_event_count(m->p) + 1, me = 0;
	while ((r = obj_next(j, &first, &k, &kn)) == 1) {
		if (first_event > tk_event_count(m->p) && (KEY("callStacks") || KEY("callStackPerThread"))) {
			j->p = start; /* a bare tree: read as such from the start */
			return read_bare_tree(m);
		}
		size_t di = 0;
		for (; di < sizeof diag_arrays / sizeof diag_arrays[0]; di++)
			if (strlen(diag_arrays[di].key) == kn && memcmp(diag_arrays[di].key, k, kn) == 0)
				break;
		if (di < sizeof diag_arrays / sizeof diag_arrays[0]) {
			where_set(m, "payload %zu: %s", m->npayloads, diag_arrays[di].key);
			if (peek(j) == 'n') {
				if (jlit(j, "null", 4) < 0)
					return mx_jerr(m);
				continue;
			}
			if (arr_begin(j) < 0)
				return mx_jerr(m);
			int fa = 1, ra;
			size_t idx = 0;
			while ((ra = arr_next(j, &fa)) == 1)
				if (read_diagnostic(m, di, idx++, &pi) < 0)
					return -1;
			if (ra < 0)
				return mx_jerr(m);
			continue;
		}
		if (KEY("timeStampBegin") || KEY("timeStampEnd")) {
			int isb = KEY("timeStampBegin");
			const char *s, *at = j->p;
			size_t n;
			where_set(m, "payload %zu: %s", m->npayloads, isb ? "timeStampBegin" : "timeStampEnd");
			if (peek(j) == '"') {
				if (jstr(j, &s, &n) < 0)
					return mx_jerr(m);
				double t;
				if (parse_stamp(s, n, &t) < 0) {
					char sh[60];
					shown(sh, sizeof sh, s, n);
					return mx_fail_at(
					    m, at,
					    "%s: cannot read \"%s\" as a time (expected 2020-10-12 03:59:00 +0000)",
					    m->where, sh);
				}
				*(isb ? &pi.begin : &pi.end) = t;
			} else if (jskip(j) < 0)
				return mx_jerr(m);
			continue;
		}
		if (KEY("metaData")) {
			if (read_metric_meta(m, metric_event(m, &me)) < 0)
				return -1;
			continue;
		}
		if (KEY("appVersion") || KEY("appBuildVersion")) {
			where_set(m, "payload %zu: %.*s", m->npayloads, (int)kn, k);
			if (read_meta_value(m, metric_event(m, &me), meta_keys, sizeof meta_keys / sizeof meta_keys[0],
			                    k, kn, "", NULL) < 0)
				return -1;
			continue;
		}
		if (kn > 7 && memcmp(k + kn - 7, "Metrics", 7) == 0 && peek(j) == '{') {
			if (read_metric_group(m, metric_event(m, &me), k, kn) < 0)
				return -1;
			continue;
		}
		where_set(m, "payload %zu: %.*s", m->npayloads, (int)(kn > 80 ? 80 : kn), k);
		if (jskip(j) < 0) /* unknown keys */
			return mx_jerr(m);
	}
	if (r < 0)
		return mx_jerr(m);
	for (tk_event_id e = first_event; e <= tk_event_count(m->p); e++) {
		tk_event *ev = event_mut(m->p, e);
		ev->wall = pi.begin;
		if (!isnan(pi.begin))
			tk_event_set_num(m->p, e, "payload.begin", pi.begin);
		if (!isnan(pi.end))
			tk_event_set_num(m->p, e, "payload.end", pi.end);
		if (e == me && !isnan(pi.begin) && !isnan(pi.end) && pi.end >= pi.begin && pi.end - pi.begin < 1.8e10)
			ev->duration = (uint64_t)((pi.end - pi.begin) * 1e9);
	}
	return 0;
}

/* ------------------------------------------------------------------ the stream */

static int sniff_metrickit(const unsigned char *head, size_t n)
{
	size_t i = 0;
	if (n >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf)
		i = 3;
	while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
		i++;
	if (i >= n || (head[i] != '{' && head[i] != '['))
		return 0;
	static const char *const keys[] = {"\"callStackTree\"",
	                                   "\"callStacks\"",
	                                   "\"callStackRootFrames\"",
	                                   "\"hangDiagnostics\"",
	                                   "\"crashDiagnostics\"",
	                                   "\"cpuExceptionDiagnostics\"",
	                                   "\"diskWriteExceptionDiagnostics\"",
	                                   "\"appLaunchDiagnostics\"",
	                                   "\"diagnosticMetaData\"",
	                                   "\"applicationTimeMetrics\"",
	                                   "\"applicationLaunchMetrics\"",
	                                   "\"applicationResponsivenessMetrics\"",
	                                   "\"cpuMetrics\"",
	                                   "\"memoryMetrics\""};
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
		if (memmem(head, n, keys[k], strlen(keys[k])))
			return 1;
	return 0;
}

typedef struct buf {
	char *d;
	size_t len, pos, cap;
	uint64_t lines; /* newlines before counted (<= pos): counted only when needed (an error's line) or
	                 * before the text is dropped (fill), not on every payload */
	size_t counted;
	size_t dropped; /* mapped == 2: the file's pages before this offset were given back */
	int eof;
	int mapped; /* 1: d is an anonymous mapping of cap bytes (munmap, never realloc); 2: the file
	             * itself mapped read-only (len bytes, eof set: never written) */
} buf;

/* The buffer for a big plain file that may be one payload: the file itself mapped read-only (no
 * copy, no zeroed pages: copying a 42 MB payload into fresh memory was half of reading it), else one
 * anonymous mapping of the whole file, its pages populated by one system call. Growing a heap
 * buffer page by page cost a page fault per 4 kB (a third of reading a 42 MB payload's CPU on a
 * virtual machine). Files of many payloads keep the heap buffer (memory bounded by the largest
 * payload). */
static void buf_prealloc(tk_input *in, buf *b)
{
	uint64_t total = tk_input_total(in);
	if (b->d || tk_input_is_gzip(in) || total < (8u << 20) || total > TK_MX_MAX_PAYLOAD)
		return;
	size_t n = 0;
	const char *f = tk_input_map(in, &n);
	if (f) {
		b->d = (char *)f; /* read only: fill returns at eof before writing */
		b->len = b->cap = n;
		b->eof = 1;
		b->mapped = 2;
		return;
	}
	size_t cap = (size_t)total + (1u << 16);
	void *d = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (d == MAP_FAILED)
		return;
	b->d = d;
	b->cap = cap;
	b->mapped = 1;
}

static void buf_free(buf *b)
{
	if (b->mapped)
		munmap(b->d, b->cap); /* the file's mapping: cap = len */
	else
		free(b->d);
}

static uint64_t count_lines(const char *p, const char *end);

static int fill(tk_input *in, buf *b, tk_error *err)
{
	if (b->eof)
		return 0;
	if (b->pos > 0 && b->pos >= b->len / 2) {
		b->lines += count_lines(b->d + b->counted, b->d + b->pos);
		b->counted = 0;
		memmove(b->d, b->d + b->pos, b->len - b->pos);
		b->len -= b->pos;
		b->pos = 0;
	}
	if (b->cap - b->len < (1u << 16) && b->mapped) { /* more than the file said: to the heap */
		char *h = tk_xmalloc(b->cap);
		memcpy(h, b->d, b->len);
		munmap(b->d, b->cap);
		b->d = h;
		b->mapped = 0;
	}
	if (b->cap - b->len < (1u << 16))
		TK_GROW(b->d, b->cap, b->len + (1u << 18));
	ptrdiff_t r = tk_input_read(in, b->d + b->len, b->cap - b->len, err);
	if (r < 0)
		return -1;
	if (r == 0)
		b->eof = 1;
	b->len += (size_t)r;
	return r > 0;
}

static uint64_t count_lines(const char *p, const char *end)
{
	uint64_t n = 0;
	while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL)
		n++, p++;
	return n;
}

/* The line (0-based) of byte off (>= pos) of the buffer. */
static uint64_t line_at(const buf *b, size_t off)
{
	return b->lines + count_lines(b->d + b->counted, b->d + off);
}

static void set_pos(buf *b, size_t np)
{
	b->pos = np;
}

/* The end of the value starting at b->d[start] ('{'): one past its closing brace, scanning strings
 * and nesting only (the parser validates). Returns 0 and sets *end, 1 if more input is needed, or
 * -1 at the end of the input. *state keeps the scan's progress between calls. */
typedef struct scan {
	size_t at;
	uint64_t depth;
	int in_str, esc;
} scan;

/* Bytes the scan stops at: in a string '"' and '\\' (1), outside also the brackets (2). Everything
 * else is skipped a byte at a time without branches on the state. */
static const unsigned char scan_stop[256] = {['"'] = 1, ['\\'] = 1, ['{'] = 2, ['}'] = 2, ['['] = 2, [']'] = 2};

static int scan_value(buf *b, size_t start, scan *sc, size_t *end)
{
	if (!sc->at)
		sc->at = start;
	const unsigned char *d = (const unsigned char *)b->d;
	size_t i = sc->at, len = b->len;
	uint64_t depth = sc->depth;
	int in_str = sc->in_str, esc = sc->esc;
	if (esc && i < len) { /* the byte after a backslash that ended the previous buffer */
		esc = 0;
		i++;
	}
	while (i < len) {
		unsigned char c = d[i];
		if (!scan_stop[c]) {
			i++;
			/* pretty-printed payloads indent deep trees by many spaces: eight at a time */
			uint64_t w;
			if (c == ' ')
				while (len - i >= 8 && (memcpy(&w, d + i, 8), w == 0x2020202020202020ULL))
					i += 8;
			continue;
		}
		if (in_str) {
			if (c == '\\') {
				if (i + 1 >= len) {
					esc = 1;
					i++;
					break;
				}
				i += 2;
				continue;
			}
			if (c == '"')
				in_str = 0;
			i++;
			continue;
		}
		if (c == '"') {
			/* a string: its first quote ends it unless a backslash is right before that quote
			 * (then, and at the buffer's end, byte by byte) */
			const unsigned char *q = memchr(d + i + 1, '"', len - i - 1);
			if (q && (q == d + i + 1 || q[-1] != '\\')) {
				i = (size_t)(q - d) + 1;
				continue;
			}
			in_str = 1;
		} else if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth == 0) {
			*end = i + 1;
			return 0;
		}
		i++;
	}
	sc->at = i;
	sc->depth = depth;
	sc->in_str = in_str;
	sc->esc = esc;
	return b->eof ? -1 : 1;
}

static int read_metrickit(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	(void)o;
	mx m = {.p = p, .name = tk_input_name(in), .err = err, .next_tid = 1 + tk_thread_count(p)};
	tk_profile_set_unit(p, TK_UNIT_SAMPLES);
	buf b = {0};
	int rc = 0, in_array = 0, array_done = 0, need_comma = 0;
	size_t nvalues = 0;
	buf_prealloc(in, &b);
	if (fill(in, &b, err) < 0) {
		rc = -1;
		goto out;
	}
	if (b.len >= 3 && (unsigned char)b.d[0] == 0xef && (unsigned char)b.d[1] == 0xbb &&
	    (unsigned char)b.d[2] == 0xbf)
		b.pos = 3;
	for (;;) {
		/* skip whitespace (and the array's punctuation) to the next value */
		for (;;) {
			size_t q = b.pos;
			while (q < b.len && (b.d[q] == ' ' || b.d[q] == '\n' || b.d[q] == '\r' || b.d[q] == '\t'))
				q++;
			set_pos(&b, q);
			if (b.pos < b.len)
				break;
			int f = fill(in, &b, err);
			if (f < 0) {
				rc = -1;
				goto out;
			}
			if (!f)
				break;
		}
		if (b.pos >= b.len) {
			if (in_array && !array_done) {
				m.line0 = line_at(&b, b.pos);
				rc = tk_error_set(err, "%s:%llu: the array of payloads is not closed with ']'", m.name,
				                  (unsigned long long)m.line0 + 1);
			} else if (!nvalues)
				rc = tk_error_set(err, "%s: no MetricKit payload in the input", m.name);
			goto out;
		}
		char c = b.d[b.pos];
		if (array_done) {
			rc = tk_error_set(err, "%s:%llu: text after the array of payloads", m.name,
			                  (unsigned long long)line_at(&b, b.pos) + 1);
			goto out;
		}
		if (!nvalues && !in_array && c == '[') {
			in_array = 1;
			b.pos++;
			continue;
		}
		if (in_array) {
			if (c == ']' && !(need_comma == 0 && nvalues)) {
				b.pos++;
				array_done = 1;
				continue;
			}
			if (need_comma) {
				if (c != ',') {
					rc = tk_error_set(err, "%s:%llu: expected ',' or ']' between payloads", m.name,
					                  (unsigned long long)line_at(&b, b.pos) + 1);
					goto out;
				}
				b.pos++;
				need_comma = 0;
				continue;
			}
		}
		if (c != '{') {
			rc = tk_error_set(err, "%s:%llu: expected a MetricKit payload (a JSON object)", m.name,
			                  (unsigned long long)line_at(&b, b.pos) + 1);
			goto out;
		}
		scan sc = {0};
		size_t end = 0;
		int s;
		if (b.mapped == 2) {
			/* The file is mapped whole (at most TK_MX_MAX_PAYLOAD): the parser finds the payload's end
			 * itself, without a scan of its bytes first (a fifth of reading one 42 MB payload). The
			 * scan runs only if the parse fails, for the error a cut-short payload gets. */
			m.lb = &b, m.loff = b.pos;
			m.j.s = m.j.p = b.d + b.pos;
			m.j.end = b.d + b.len;
			m.j.err = NULL;
			if (read_payload(&m) < 0) {
				if (scan_value(&b, b.pos, &sc, &end) < 0)
					rc = tk_error_set(
					    err, "%s:%llu: payload %zu is cut short (the input ends inside it)", m.name,
					    (unsigned long long)line_at(&b, b.pos) + 1, nvalues + 1);
				else
					rc = -1;
				goto out;
			}
			end = (size_t)(m.j.p - b.d);
			goto parsed;
		}
		while ((s = scan_value(&b, b.pos, &sc, &end)) == 1) {
			if (b.len - b.pos > TK_MX_MAX_PAYLOAD) {
				rc = tk_error_set(
				    err, "%s:%llu: payload %zu is larger than %u MB (MetricKit's are a few MB at most)",
				    m.name, (unsigned long long)line_at(&b, b.pos) + 1, nvalues + 1,
				    TK_MX_MAX_PAYLOAD >> 20);
				goto out;
			}
			size_t before = b.pos;
			int f = fill(in, &b, err);
			if (f < 0) {
				rc = -1;
				goto out;
			}
			sc.at -= before - b.pos; /* the buffer may have moved its start */
		}
		if (s < 0) {
			m.line0 = line_at(&b, b.pos);
			rc = tk_error_set(err, "%s:%llu: payload %zu is cut short (the input ends inside it)", m.name,
			                  (unsigned long long)m.line0 + 1, nvalues + 1);
			goto out;
		}
		if (end - b.pos > TK_MX_MAX_PAYLOAD) {
			rc = tk_error_set(
			    err, "%s:%llu: payload %zu is larger than %u MB (MetricKit's are a few MB at most)", m.name,
			    (unsigned long long)line_at(&b, b.pos) + 1, nvalues + 1, TK_MX_MAX_PAYLOAD >> 20);
			goto out;
		}
		m.lb = &b, m.loff = b.pos;
		m.j.s = m.j.p = b.d + b.pos;
		m.j.end = b.d + end;
		m.j.err = NULL;
		if (read_payload(&m) < 0) {
			rc = -1;
			goto out;
		}
		ws(&m.j);
		if (m.j.p != m.j.end) {
			rc = mx_fail_at(&m, m.j.p, "payload %zu: text after the payload's closing brace", m.npayloads);
			goto out;
		}
	parsed:
		set_pos(&b, end); /* its lines are counted when the buffer moves (or for an error) */
		if (b.mapped == 2 && b.pos - b.dropped >= (4u << 20)) {
			/* many payloads in a mapped file: the pages read are given back, so RSS stays near one
			 * payload as with the heap buffer (nothing before pos is looked at again) */
			size_t to = b.pos & ~(size_t)4095;
			madvise(b.d + b.dropped, to - b.dropped, MADV_DONTNEED);
			b.dropped = to;
		}
		nvalues++;
		need_comma = in_array;
		if (o && o->progress)
			o->progress(o->progress_ctx, tk_input_consumed(in), tk_input_total(in));
	}
out:
	if (rc == 0) {
		char v[32];
		tk_profile_set_meta(p, "format", "metrickit");
		snprintf(v, sizeof v, "%zu", m.npayloads);
		tk_profile_set_meta(p, "payloads", v);
		snprintf(v, sizeof v, "%zu", m.ndiag);
		tk_profile_set_meta(p, "diagnostics", v);
		snprintf(v, sizeof v, "%zu", m.nmetrics);
		tk_profile_set_meta(p, "metric-payloads", v);
	}
	buf_free(&b);
	free(m.j.scratch);
	free(m.fr);
	free(m.st);
	free(m.fstack);
	free(m.im_key);
	free(m.im_load);
	free(m.fc);
	free(m.cells);
	return rc;
}

const tk_reader tk_reader_metrickit = {"metrickit", sniff_metrickit, read_metrickit};
