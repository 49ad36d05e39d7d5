/*
 * `.ips` reports in JSON (iOS 15+, macOS 12+): a header line (bug_type, app_name, app_version,
 * build_version, bundleID, os_version, incident_id, timestamp …), then the body: procName, pid,
 * modelCode, cpuType, osVersion, exception {type, signal, codes, subtype}, termination, faultingThread,
 * threads[] {id, name, queue, triggered, threadState, frames[] {imageIndex, imageOffset, symbol,
 * symbolLocation, sourceFile, sourceLine}}, usedImages[] {uuid, base, size, arch, name, path}.
 * A frame's address is usedImages[imageIndex].base + imageOffset. Verified kinds: docs/apple-reports.md.
 *
 * Register values in threadState are full 64-bit numbers that jansson refuses ("too big integer");
 * they are turned into marked strings before parsing (see bigint_pass) and read back exactly.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "read/apple_report_int.h"
#include "util/mem.h"

/* Integers of 19 or more digits become the string "\x1e" "BIG:" DIGITS (the writer turns them back
 * into numbers). Strings are skipped with their escapes; nothing else changes. */
#define BIG_MARK                                                                                                       \
	"\x1e"                                                                                                         \
	"BIG:"
static char *bigint_pass(const char *s, size_t n, size_t *out_n)
{
	size_t big = 0;
	int in_str = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"')
			in_str = 1;
		else if ((c >= '0' && c <= '9') || c == '-') {
			size_t j = i + (c == '-');
			size_t d = j;
			while (d < n && s[d] >= '0' && s[d] <= '9')
				d++;
			if (d - j >= 19 && (d >= n || (s[d] != '.' && s[d] != 'e' && s[d] != 'E')))
				big++;
			i = d - 1;
		}
	}
	if (!big)
		return NULL;
	char *o = tk_xmalloc(n + big * 12 + 1);
	size_t k = 0;
	in_str = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (in_str) {
			o[k++] = c;
			if (c == '\\' && i + 1 < n)
				o[k++] = s[++i];
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
			o[k++] = c;
		} else if ((c >= '0' && c <= '9') || c == '-') {
			size_t j = i + (c == '-');
			size_t d = j;
			while (d < n && s[d] >= '0' && s[d] <= '9')
				d++;
			int mark = d - j >= 19 && (d >= n || (s[d] != '.' && s[d] != 'e' && s[d] != 'E'));
			if (mark) {
				memcpy(o + k, "\"\\u001eBIG:", 11); /* JSON strings hold no raw controls */
				k += 11;
			}
			memcpy(o + k, s + i, d - i);
			k += d - i;
			if (mark)
				o[k++] = '"';
			i = d - 1;
		} else
			o[k++] = c;
	}
	o[k] = 0;
	*out_n = k;
	return o;
}

/* A number as the report writes it: a JSON integer, or a marked big one. -1 if neither. */
static int get_u64(json_t *v, uint64_t *out, int *negative)
{
	*negative = 0;
	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);
		*negative = x < 0;
		*out = (uint64_t)x;
		return 0;
	}
	if (json_is_string(v) && !strncmp(json_string_value(v), BIG_MARK, 5)) {
		const char *d = json_string_value(v) + 5;
		*negative = *d == '-';
		char *end;
		*out = *negative ? (uint64_t)strtoll(d, &end, 10) : strtoull(d, &end, 10);
		return *end ? -1 : 0;
	}
	return -1;
}

static char *str_dup(json_t *v)
{
	return json_is_string(v) ? tk_xstrndup(json_string_value(v), json_string_length(v)) : NULL;
}

static void attr(tk_apple_report *r, const char *key, json_t *v)
{
	if (json_is_string(v))
		tk_apple_report_set_attr(r, key, json_string_value(v), json_string_length(v));
	else if (json_is_integer(v)) {
		char b[32];
		snprintf(b, sizeof b, "%lld", (long long)json_integer_value(v));
		tk_apple_report_set_attr(r, key, b, strlen(b));
	}
}

static tk_event_kind kind_of(const char *bug_type, json_t *body)
{
	if (!bug_type)
		return json_object_get(body, "exception") ? TK_EVENT_CRASH : TK_EVENT_HANG;
	if (!strcmp(bug_type, "309") || !strcmp(bug_type, "109") || !strcmp(bug_type, "385"))
		return TK_EVENT_CRASH;
	if (!strcmp(bug_type, "202") || !strcmp(bug_type, "142"))
		return TK_EVENT_CPU_EXCEPTION;
	if (!strcmp(bug_type, "145"))
		return TK_EVENT_DISK_WRITE;
	if (json_object_get(body, "exception") || json_object_get(body, "faultingThread"))
		return TK_EVENT_CRASH;
	return TK_EVENT_HANG;
}

static int frames_of(tk_apple_report *r, json_t *frames, tk_apple_report_thread *t, const char *where, tk_error *err)
{
	size_t k;
	json_t *f;
	json_array_foreach(frames, k, f)
	{
		if (!json_is_object(f))
			return tk_error_set(err, "%s: %s[%zu] is not an object", r->name, where, k);
		tk_apple_report_frame *fr = tk_apple_report_add_frame(t);
		uint64_t idx = 0, off = 0;
		int neg;
		json_t *ji = json_object_get(f, "imageIndex"), *jo = json_object_get(f, "imageOffset");
		if (ji) {
			if (get_u64(ji, &idx, &neg) < 0 || neg)
				return tk_error_set(err, "%s: %s[%zu].imageIndex is not a non-negative integer",
				                    r->name, where, k);
			if (idx >= r->nimages)
				return tk_error_set(err, "%s: %s[%zu].imageIndex %llu is out of range (%zu usedImages)",
				                    r->name, where, k, (unsigned long long)idx, r->nimages);
			fr->image = (uint32_t)idx + 1;
		}
		if (jo) {
			if (get_u64(jo, &off, &neg) < 0 || neg)
				return tk_error_set(err, "%s: %s[%zu].imageOffset is not a non-negative integer",
				                    r->name, where, k);
		}
		fr->addr = (fr->image ? r->images[fr->image - 1].base : 0) + off;
		fr->symbol = str_dup(json_object_get(f, "symbol"));
		json_t *sl = json_object_get(f, "symbolLocation");
		if (sl && get_u64(sl, &fr->symoff, &neg) == 0 && !neg)
			fr->has_symoff = 1;
		fr->file = str_dup(json_object_get(f, "sourceFile"));
		json_t *ln = json_object_get(f, "sourceLine");
		if (json_is_integer(ln) && json_integer_value(ln) > 0 && json_integer_value(ln) < UINT32_MAX)
			fr->line = (uint32_t)json_integer_value(ln);
	}
	return 0;
}

/* ---- the scanner (TK_APPLE_REPORT_TEXT_ONLY) ----
 * Most of an .ips is its frames and images: building them as jansson objects (and freeing them) was
 * most of the time of `symbolicate` on a batch, and so was jansson's lexer on the rest. The scanner
 * walks the body once: it reads threads[].frames[] and usedImages[] into flat arrays (strings point
 * into the body) and builds everything else the writers use as jansson values directly, those two
 * arrays left empty ("[]") in the tree. It takes only what it reads exactly as jansson would:
 * strings of printable ASCII with the one-letter escapes, integers of up to 18 digits (longer ones
 * as bigint_pass marks them), true/false/null, each known key of a frame or image once, image
 * indexes in range, nothing after the body. On anything else (reals, \u escapes, other bytes, any
 * error) it gives up and the whole body goes through jansson, so answers and error messages are the
 * same (the differential check in tests/fuzz/fuzz_apple_report.c holds it to that). */
enum { SV_STR, SV_INT, SV_REAL, SV_LIT };
enum { HF_IDX = 1, HF_OFF = 2, HF_SYMOFF = 4, HF_LINE = 8, HF_SYM = 16, HF_FILE = 32 };
enum { HI_BASE = 1, HI_SIZE = 2, HI_UUID = 4, HI_NAME = 8, HI_PATH = 16, HI_ARCH = 32 };

typedef struct sc_frame {
	uint64_t idx, off, symoff, line;
	const char *sym, *file;
	uint32_t symn, filen;
	unsigned has;
} sc_frame;

typedef struct sc_image {
	uint64_t base, size;
	const char *str[4]; /* uuid, name, path, arch */
	uint32_t len[4];
	unsigned has;
} sc_image;

typedef struct ips_scan {
	const char *s;
	size_t n, p;
	sc_frame *f;
	size_t nf, capf;
	size_t *tstart; /* first frame of each thread; tstart[nt] = nf */
	size_t nt, capt;
	sc_image *im;
	size_t ni, capi;
	int seen_threads, seen_images;
	int big;    /* integers of 19+ digits as bigint_pass marks them (the body); 0: give up (the header) */
	char *sbuf; /* a string with escapes, decoded */
	size_t sbcap;
	json_t *tree; /* the body's tree without frames and images */
} ips_scan;

static void *sc_grow(void *v, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return v;
	/* from a few kB: a report's frames (about 100) without a realloc per doubling */
	size_t c = *cap ? *cap : size < 4096 / 8 ? 4096 / size : 8;
	while (c < need)
		c *= 2;
	*cap = c;
	return tk_xrealloc(v, c * size);
}

static void sc_free(ips_scan *sc)
{
	free(sc->f);
	free(sc->tstart);
	free(sc->im);
	free(sc->sbuf);
	json_decref(sc->tree);
}

/* JSON's blanks */
static const unsigned char sc_blank[256] = {[' '] = 1, ['\n'] = 1, ['\t'] = 1, ['\r'] = 1};

static inline void sc_ws(ips_scan *sc)
{
	const char *s = sc->s;
	size_t p = sc->p, n = sc->n;
	if (p >= n || !sc_blank[(unsigned char)s[p]])
		return;
	do {
		p++;
		/* a pretty-printed report's blanks are a newline and a run of spaces: 8 at a time */
		while (p + 8 <= n) {
			uint64_t w;
			memcpy(&w, s + p, 8);
			w ^= 0x2020202020202020ull; /* spaces to 0 */
			if (w) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
				p += (size_t)__builtin_clzll(w) / 8; /* the first byte not a space */
#else
				p += (size_t)__builtin_ctzll(w) / 8;
#endif
				break;
			}
			p += 8;
		}
	} while (p < n && sc_blank[(unsigned char)s[p]]);
	sc->p = p;
}

/* After a member or element: 1 past the closing bracket close, 0 past a comma, -1 on anything else. */
static inline int sc_next(ips_scan *sc, char close)
{
	sc_ws(sc);
	if (sc->p >= sc->n)
		return -1;
	char c = sc->s[sc->p++];
	return c == close ? 1 : c == ',' ? 0 : -1;
}

static inline int sc_expect(ips_scan *sc, char c)
{
	sc_ws(sc);
	if (sc->p >= sc->n || sc->s[sc->p] != c)
		return -1;
	sc->p++;
	return 0;
}

/* the bytes that end a string's fast run: '"', '\\', controls and bytes above 0x7f */
static const unsigned char sc_stop[256] = {[0 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xff] = 1};

/* A string at p without escapes (a key, or a value the frames and images keep as it is). */
static inline int sc_plain(ips_scan *sc, const char **v, size_t *vn)
{
	const char *s = sc->s;
	size_t p = sc->p, n = sc->n;
	if (p >= n || s[p] != '"')
		return -1;
	size_t a = ++p;
	while (p < n && !sc_stop[(unsigned char)s[p]])
		p++;
	if (p >= n || s[p] != '"')
		return -1;
	*v = s + a;
	*vn = p - a;
	sc->p = p + 1;
	return 0;
}

/* A string at p, its one-letter escapes decoded (into sc->sbuf when it has any). */
static int sc_string(ips_scan *sc, const char **v, size_t *vn)
{
	size_t a = sc->p;
	if (sc_plain(sc, v, vn) == 0)
		return 0;
	sc->p = a;
	const char *s = sc->s;
	size_t p = a + 1, n = sc->n, k = 0;
	for (;;) {
		size_t run = p;
		while (p < n && !sc_stop[(unsigned char)s[p]])
			p++;
		sc->sbuf = sc_grow(sc->sbuf, &sc->sbcap, k + (p - run) + 1, 1);
		memcpy(sc->sbuf + k, s + run, p - run);
		k += p - run;
		if (p >= n)
			return -1;
		if (s[p] == '"')
			break;
		if (s[p] != '\\' || p + 1 >= n)
			return -1; /* a control or a byte above 0x7f: jansson's to judge */
		char c = s[p + 1], d;
		switch (c) {
		case '"': d = '"'; break;
		case '\\': d = '\\'; break;
		case '/': d = '/'; break;
		case 'b': d = '\b'; break;
		case 'f': d = '\f'; break;
		case 'n': d = '\n'; break;
		case 'r': d = '\r'; break;
		case 't': d = '\t'; break;
		default: return -1; /* \u…: jansson's */
		}
		sc->sbuf[k++] = d;
		p += 2;
	}
	*v = sc->sbuf;
	*vn = k;
	sc->p = p + 1;
	return 0;
}

/* A number in JSON's grammar at p: an integer of at most 18 digits (*u, *neg); SV_REAL for a plain
 * real (frames and images only ignore them); -1 for anything else (exponents, 19+ digits). */
static int sc_number(ips_scan *sc, int *type, uint64_t *u, int *neg)
{
	const char *s = sc->s;
	size_t p = sc->p, n = sc->n;
	size_t a = p;
	*neg = s[p] == '-';
	if (*neg)
		p++;
	size_t d = p;
	uint64_t x = 0;
	while (p < n && s[p] >= '0' && s[p] <= '9')
		x = x * 10 + (uint64_t)(s[p++] - '0');
	size_t nd = p - d;
	if (nd == 0 || nd > 18 || (nd > 1 && s[d] == '0'))
		return -1;
	if (p < n && (s[p] == 'e' || s[p] == 'E'))
		return -1;
	if (p < n && s[p] == '.') {
		p++;
		size_t f = p;
		while (p < n && s[p] >= '0' && s[p] <= '9')
			p++;
		if (p == f || p - a > 40 || (p < n && (s[p] == 'e' || s[p] == 'E')))
			return -1;
		*type = SV_REAL;
	} else {
		*type = SV_INT;
		*u = x;
	}
	sc->p = p;
	return 0;
}

/* true, false, null at p: 0, 1, 2; -1 if none */
static int sc_literal(ips_scan *sc)
{
	const char *s = sc->s + sc->p;
	size_t left = sc->n - sc->p;
	if (left >= 4 && !memcmp(s, "true", 4))
		return sc->p += 4, 0;
	if (left >= 5 && !memcmp(s, "false", 5))
		return sc->p += 5, 1;
	if (left >= 4 && !memcmp(s, "null", 4))
		return sc->p += 4, 2;
	return -1;
}

/* A scalar in a frame or image, strictly: *type SV_*; strings without escapes, controls or bytes
 * above 0x7f; numbers as sc_number; true, false, null. */
static inline int sc_scalar(ips_scan *sc, int *type, const char **v, size_t *vn, uint64_t *u, int *neg)
{
	sc_ws(sc);
	if (sc->p >= sc->n)
		return -1;
	char c = sc->s[sc->p];
	if (c == '"') {
		*type = SV_STR;
		return sc_plain(sc, v, vn);
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return sc_number(sc, type, u, neg);
	*type = SV_LIT;
	return sc_literal(sc) < 0 ? -1 : 0;
}

/* Past an object's or array's opening bracket at p; 1 (and past `close` too) when it is empty. */
static int sc_open(ips_scan *sc, char close)
{
	sc->p++;
	sc_ws(sc);
	if (sc->p < sc->n && sc->s[sc->p] == close) {
		sc->p++;
		return 1;
	}
	return 0;
}

/* Any value at p as a jansson value, strictly (see above); NULL to give up. */
static json_t *sc_value(ips_scan *sc, int depth)
{
	sc_ws(sc);
	if (sc->p >= sc->n || depth > 64)
		return NULL;
	const char *s = sc->s;
	char c = s[sc->p];
	if (c == '"') {
		const char *v;
		size_t vn;
		return sc_string(sc, &v, &vn) < 0 ? NULL : json_stringn_nocheck(v, vn);
	}
	if (c == '-' || (c >= '0' && c <= '9')) {
		size_t a = sc->p, d = a + (c == '-'), e = d;
		while (e < sc->n && s[e] >= '0' && s[e] <= '9')
			e++;
		if (e - d >= 19) { /* what bigint_pass turns into a marked string, or jansson's error */
			if (!sc->big || (e < sc->n && (s[e] == '.' || s[e] == 'e' || s[e] == 'E')))
				return NULL;
			char b[64];
			if (e - a > sizeof b - 6)
				return NULL;
			memcpy(b, BIG_MARK, 5);
			memcpy(b + 5, s + a, e - a);
			sc->p = e;
			return json_stringn_nocheck(b, 5 + (e - a));
		}
		int type, neg;
		uint64_t u;
		if (sc_number(sc, &type, &u, &neg) < 0 || type != SV_INT)
			return NULL;
		return json_integer(neg ? -(json_int_t)u : (json_int_t)u);
	}
	if (c == '{') {
		json_t *o = json_object();
		if (sc_open(sc, '}'))
			return o;
		for (;;) {
			const char *k;
			size_t kn;
			json_t *v;
			sc_ws(sc);
			if (sc_plain(sc, &k, &kn) < 0 || sc_expect(sc, ':') < 0 || !(v = sc_value(sc, depth + 1))) {
				json_decref(o);
				return NULL;
			}
			json_object_setn_new_nocheck(o, k, kn, v);
			int end = sc_next(sc, '}');
			if (end < 0) {
				json_decref(o);
				return NULL;
			}
			if (end)
				return o;
		}
	}
	if (c == '[') {
		json_t *a = json_array();
		if (sc_open(sc, ']'))
			return a;
		for (;;) {
			json_t *v = sc_value(sc, depth + 1);
			if (!v) {
				json_decref(a);
				return NULL;
			}
			json_array_append_new(a, v);
			int end = sc_next(sc, ']');
			if (end < 0) {
				json_decref(a);
				return NULL;
			}
			if (end)
				return a;
		}
	}
	switch (sc_literal(sc)) {
	case 0: return json_true();
	case 1: return json_false();
	case 2: return json_null();
	}
	return NULL;
}

/* A key of a frames[] object: "imageIndex" and "imageOffset" (nearly every key there) matched by their
 * bytes, others read by sc_plain (the same k and kn). */
static inline int sc_frame_key(ips_scan *sc, const char **k, size_t *kn)
{
	const char *s = sc->s + sc->p;
	size_t left = sc->n - sc->p;
	if (left >= 14 && s[0] == '"' && !memcmp(s + 1, "image", 5)) {
		if (!memcmp(s + 6, "Index\"", 6)) {
			*k = s + 1, *kn = 10, sc->p += 12;
			return 0;
		}
		if (!memcmp(s + 6, "Offset\"", 7)) {
			*k = s + 1, *kn = 11, sc->p += 13;
			return 0;
		}
	}
	return sc_plain(sc, k, kn);
}

/* A key of known length: k[0..kn) is want. */
#define KEY_IS(k, kn, want) ((kn) == sizeof want - 1 && !memcmp(k, want, sizeof want - 1))

/* One object of a frames[] or usedImages[] array, flat. image: usedImages; else a frame. */
static int sc_flat(ips_scan *sc, int image)
{
	if (sc_expect(sc, '{') < 0)
		return -1;
	sc_frame fr;
	sc_image im;
	if (image)
		memset(&im, 0, sizeof im);
	else
		memset(&fr, 0, sizeof fr);
	sc_ws(sc);
	if (sc->p < sc->n && sc->s[sc->p] == '}')
		sc->p++;
	else
		for (;;) {
			const char *k, *v = NULL;
			size_t kn, vn = 0;
			int type, neg = 0;
			uint64_t u = 0;
			sc_ws(sc);
			if ((image ? sc_plain(sc, &k, &kn) : sc_frame_key(sc, &k, &kn)) < 0 || sc_expect(sc, ':') < 0 ||
			    sc_scalar(sc, &type, &v, &vn, &u, &neg) < 0)
				return -1;
			int nonneg = type == SV_INT && !neg;
			if (image) {
				static const char *const sk[] = {"uuid", "name", "path", "arch"};
				if (KEY_IS(k, kn, "base") || KEY_IS(k, kn, "size")) {
					unsigned bit = k[0] == 'b' ? HI_BASE : HI_SIZE;
					if ((im.has & bit) || !nonneg) /* twice, or an error of the jansson path */
						return -1;
					im.has |= bit;
					*(bit == HI_BASE ? &im.base : &im.size) = u;
				} else if (kn == 4)
					for (unsigned i = 0; i < 4; i++)
						if (!memcmp(k, sk[i], 4)) {
							if (im.has & (HI_UUID << i))
								return -1;
							im.has |= HI_UUID << i;
							if (type == SV_STR)
								im.str[i] = v, im.len[i] = (uint32_t)vn;
						}
			} else if (KEY_IS(k, kn, "imageOffset") || KEY_IS(k, kn, "imageIndex")) {
				unsigned bit = kn == 10 ? HF_IDX : HF_OFF;
				if ((fr.has & bit) || !nonneg)
					return -1;
				fr.has |= bit;
				*(bit == HF_IDX ? &fr.idx : &fr.off) = u;
			} else if (KEY_IS(k, kn, "symbol") || KEY_IS(k, kn, "sourceFile")) {
				unsigned bit = k[0] == 's' && k[1] == 'y' ? HF_SYM : HF_FILE;
				if (fr.has & bit)
					return -1;
				fr.has |= bit;
				if (type == SV_STR) {
					if (bit == HF_SYM)
						fr.sym = v, fr.symn = (uint32_t)vn;
					else
						fr.file = v, fr.filen = (uint32_t)vn;
				}
			} else if (KEY_IS(k, kn, "symbolLocation") || KEY_IS(k, kn, "sourceLine")) {
				unsigned bit = k[1] == 'y' ? HF_SYMOFF : HF_LINE;
				if ((fr.has & bit) || (type == SV_INT && neg))
					return -1;
				fr.has |= bit;
				if (type == SV_INT)
					*(bit == HF_SYMOFF ? &fr.symoff : &fr.line) = u;
				else /* present, not an integer: ignored as the jansson path does */
					fr.has |= bit << 8;
			}
			int end = sc_next(sc, '}');
			if (end < 0)
				return -1;
			if (end)
				break;
		}
	if (image) {
		sc->im = sc_grow(sc->im, &sc->capi, sc->ni + 1, sizeof *sc->im);
		sc->im[sc->ni++] = im;
	} else {
		sc->f = sc_grow(sc->f, &sc->capf, sc->nf + 1, sizeof *sc->f);
		sc->f[sc->nf++] = fr;
	}
	return 0;
}

/* An array of flat objects. */
static int sc_array(ips_scan *sc, int image)
{
	if (sc_expect(sc, '[') < 0)
		return -1;
	sc_ws(sc);
	if (sc->p < sc->n && sc->s[sc->p] == ']') {
		sc->p++;
		return 0;
	}
	for (;;) {
		if (sc_flat(sc, image) < 0)
			return -1;
		int end = sc_next(sc, ']');
		if (end < 0)
			return -1;
		if (end)
			return 0;
	}
}

/* Members of an object at p ('{' next) into o: on_key reads the keys it wants (returns 1 when it
 * did, 0 to have the value built into o, -1 to give up). */
typedef int (*sc_member_fn)(ips_scan *sc, json_t *o, const char *k, size_t kn);
static int sc_members(ips_scan *sc, json_t *o, sc_member_fn on_key)
{
	if (sc_expect(sc, '{') < 0)
		return -1;
	sc_ws(sc);
	if (sc->p < sc->n && sc->s[sc->p] == '}') {
		sc->p++;
		return 0;
	}
	for (;;) {
		const char *k;
		size_t kn;
		sc_ws(sc);
		if (sc_plain(sc, &k, &kn) < 0 || sc_expect(sc, ':') < 0)
			return -1;
		int took = on_key(sc, o, k, kn);
		if (took < 0)
			return -1;
		if (!took) {
			json_t *v = sc_value(sc, 1);
			if (!v)
				return -1;
			json_object_setn_new_nocheck(o, k, kn, v);
		}
		int end = sc_next(sc, '}');
		if (end < 0)
			return -1;
		if (end)
			return 0;
	}
}

static int sc_thread_key(ips_scan *sc, json_t *o, const char *k, size_t kn)
{
	if (!KEY_IS(k, kn, "frames"))
		return 0;
	if (sc->tstart[sc->nt] != SIZE_MAX) /* frames twice */
		return -1;
	sc->tstart[sc->nt] = sc->nf;
	if (sc_array(sc, 0) < 0)
		return -1;
	json_object_setn_new_nocheck(o, k, kn, json_array());
	return 1;
}

static int sc_body_key(ips_scan *sc, json_t *o, const char *k, size_t kn)
{
	if (KEY_IS(k, kn, "usedImages")) {
		if (sc->seen_images++ || sc_array(sc, 1) < 0)
			return -1;
		json_object_setn_new_nocheck(o, k, kn, json_array());
		return 1;
	}
	if (!KEY_IS(k, kn, "threads"))
		return 0;
	if (sc->seen_threads++ || sc_expect(sc, '[') < 0)
		return -1;
	json_t *arr = json_array();
	json_object_setn_new_nocheck(o, k, kn, arr);
	sc_ws(sc);
	if (sc->p < sc->n && sc->s[sc->p] == ']') {
		sc->p++;
		return 1;
	}
	for (;;) {
		sc->tstart = sc_grow(sc->tstart, &sc->capt, sc->nt + 2, sizeof *sc->tstart);
		sc->tstart[sc->nt] = SIZE_MAX;
		sc_ws(sc);
		if (sc->p >= sc->n || sc->s[sc->p] != '{')
			return -1;
		json_t *t = json_object();
		json_array_append_new(arr, t);
		if (sc_members(sc, t, sc_thread_key) < 0)
			return -1;
		if (sc->tstart[sc->nt] == SIZE_MAX)
			sc->tstart[sc->nt] = sc->nf;
		/* frames are in scan order: a thread's are those from its start to the next thread's */
		sc->nt++;
		sc->tstart[sc->nt] = sc->nf;
		int end = sc_next(sc, ']');
		if (end < 0)
			return -1;
		if (end)
			return 1;
	}
}

/* Scan the body; 0 when the scanner took it (sc filled, sc->tree the rest), -1 to leave it to jansson. */
static int scan_body(ips_scan *sc, const char *s, size_t n)
{
	memset(sc, 0, sizeof *sc);
	sc->s = s;
	sc->n = n;
	sc->big = 1;
	sc->tree = json_object();
	if (sc_members(sc, sc->tree, sc_body_key) < 0 || !sc->seen_threads)
		return -1;
	sc_ws(sc);
	if (sc->p != n) /* more after the body: jansson's error */
		return -1;
	for (size_t i = 0; i < sc->nf; i++)
		if ((sc->f[i].has & HF_IDX) && sc->f[i].idx >= sc->ni)
			return -1; /* out of range: the jansson path says so */
	return 0;
}

void *tk_apple_report_json_strict(const char *s, size_t n)
{
	ips_scan sc;
	memset(&sc, 0, sizeof sc);
	sc.s = s;
	sc.n = n;
	sc_ws(&sc);
	if (sc.p >= n || (s[sc.p] != '{' && s[sc.p] != '[')) /* json_loadb's texts: an object or an array */
		return NULL;
	json_t *v = sc_value(&sc, 1);
	if (v) {
		sc_ws(&sc);
		if (sc.p != n) {
			json_decref(v);
			v = NULL;
		}
	}
	free(sc.sbuf);
	return v;
}

static void scan_images(tk_apple_report *r, const ips_scan *sc)
{
	/* all at once, at the capacity tk_apple_report_add_image keeps (the next power of two) */
	if (!r->nimages && sc->ni > 1) {
		size_t cap = 1;
		while (cap < sc->ni)
			cap *= 2;
		r->images = tk_xrealloc(r->images, cap * sizeof *r->images);
	}
	int bulk = !r->nimages && sc->ni > 1;
	for (size_t i = 0; i < sc->ni; i++) {
		const sc_image *s = &sc->im[i];
		tk_apple_report_image *im;
		if (bulk) {
			im = &r->images[r->nimages++];
			memset(im, 0, sizeof *im);
		} else
			im = tk_apple_report_add_image(r);
		im->base = s->base;
		im->size = s->size;
		if (s->str[0]) {
			im->uuid = tk_apple_report_uuid(s->str[0], s->len[0]);
			if (im->uuid && !strcmp(im->uuid, "00000000-0000-0000-0000-000000000000")) {
				free(im->uuid);
				im->uuid = NULL;
			}
		}
		im->name = s->str[1] ? tk_xstrndup(s->str[1], s->len[1]) : NULL;
		im->path = s->str[2] ? tk_xstrndup(s->str[2], s->len[2]) : NULL;
		im->arch = s->str[3] ? tk_xstrndup(s->str[3], s->len[3]) : NULL;
		if (!im->name && im->path) {
			const char *sl = strrchr(im->path, '/');
			im->name = tk_xstrdup(sl ? sl + 1 : im->path);
		}
	}
}

static void scan_frames(tk_apple_report *r, const ips_scan *sc, size_t thread, tk_apple_report_thread *t)
{
	size_t nf = sc->tstart[thread + 1] - sc->tstart[thread];
	/* a thread's frames all at once, at the capacity tk_apple_report_add_frame keeps (the next power of
	 * two): no realloc per doubling */
	int bulk = !t->nframes && nf > 0;
	if (bulk) {
		size_t cap = 1;
		while (cap < nf)
			cap *= 2;
		t->frames = tk_xrealloc(t->frames, cap * sizeof *t->frames);
	}
	for (size_t k = sc->tstart[thread]; k < sc->tstart[thread + 1]; k++) {
		const sc_frame *s = &sc->f[k];
		tk_apple_report_frame *fr;
		if (bulk) {
			fr = &t->frames[t->nframes++];
			memset(fr, 0, sizeof *fr);
			fr->count = 1;
			fr->line_no = SIZE_MAX;
		} else
			fr = tk_apple_report_add_frame(t);
		if (s->has & HF_IDX)
			fr->image = (uint32_t)s->idx + 1;
		fr->addr = (fr->image ? r->images[fr->image - 1].base : 0) + s->off;
		fr->symbol = s->sym ? tk_xstrndup(s->sym, s->symn) : NULL;
		if (s->has & HF_SYMOFF && !(s->has & (HF_SYMOFF << 8))) {
			fr->symoff = s->symoff;
			fr->has_symoff = 1;
		}
		fr->file = s->file ? tk_xstrndup(s->file, s->filen) : NULL;
		if ((s->has & HF_LINE) && !(s->has & (HF_LINE << 8)) && s->line > 0 && s->line < UINT32_MAX)
			fr->line = (uint32_t)s->line;
	}
}

static int parse_body(tk_apple_report *r, json_t *b, const ips_scan *sc, tk_error *err);

/* jansson's tree of the body (text, n bytes), 64-bit integers marked first (bigint_pass) */
static json_t *load_body(const char *text, size_t n, json_error_t *je, size_t *loaded_n)
{
	size_t hn = 0;
	char *big = bigint_pass(text, n, &hn);
	json_t *b = json_loadb(big ? big : text, big ? hn : n, 0, je);
	free(big);
	*loaded_n = big ? hn : n;
	return b;
}

int tk_apple_report_parse_ips(tk_apple_report *r, char *buf, size_t n, size_t body, unsigned flags, tk_error *err)
{
	if (!r->json_header)
		return tk_error_set(err, "%s:1: an .ips report starts with its JSON header line", r->name);
	size_t bn = n - body, ln = 0;
	json_error_t je;
	json_t *b = NULL;
	ips_scan sc;
	memset(&sc, 0, sizeof sc);
	int fast = 0;
	if ((flags & TK_APPLE_REPORT_TEXT_ONLY) && scan_body(&sc, buf + body, bn) == 0) {
		b = sc.tree;
		sc.tree = NULL;
		fast = 1;
	}
	if (!fast) {
		sc_free(&sc);
		memset(&sc, 0, sizeof sc);
		b = load_body(buf + body, bn, &je, &ln);
	}
	if (!b)
		return tk_error_set(err, "%s:%d:%d: the report body (the JSON after the header line) %s: %s", r->name,
		                    je.line + 1, je.column,
		                    je.position >= (int)ln - 1 ? "is cut short" : "is not valid JSON", je.text);
	r->json_body = b;
	r->json_partial = fast;
	int rc = parse_body(r, b, fast ? &sc : NULL, err);
	sc_free(&sc);
	return rc;
}

/* The report from the body's tree; sc: frames and images from the scanner instead. */
static int parse_body(tk_apple_report *r, json_t *b, const ips_scan *sc, tk_error *err)
{
	if (!json_is_object(b))
		return tk_error_set(err, "%s:2: the report body is not a JSON object", r->name);
	r->kind = kind_of(r->bug_type, b);
	r->event_name = tk_xstrdup(r->kind == TK_EVENT_CRASH ? "crash" : tk_event_kind_name(r->kind));

	/* attributes: the header's first (tk_apple_report_header_attrs), completed from the body */
	if (!tk_apple_report_attr(r, "app"))
		attr(r, "app", json_object_get(b, "procName"));
	json_t *bi = json_object_get(b, "bundleInfo");
	if (!tk_apple_report_attr(r, "app.version"))
		attr(r, "app.version", json_object_get(bi, "CFBundleShortVersionString"));
	if (!tk_apple_report_attr(r, "app.build"))
		attr(r, "app.build", json_object_get(bi, "CFBundleVersion"));
	if (!tk_apple_report_attr(r, "bundle"))
		attr(r, "bundle", json_object_get(bi, "CFBundleIdentifier"));
	attr(r, "device", json_object_get(b, "modelCode"));
	json_t *ov = json_object_get(b, "osVersion");
	if (!tk_apple_report_attr(r, "os") && json_is_object(ov)) {
		json_t *train = json_object_get(ov, "train"), *build = json_object_get(ov, "build");
		if (json_is_string(train)) {
			char o[256];
			snprintf(o, sizeof o, "%s%s%s%s", json_string_value(train),
			         json_string_length(build) ? " (" : "",
			         json_string_length(build) ? json_string_value(build) : "",
			         json_string_length(build) ? ")" : "");
			tk_apple_report_set_attr(r, "os", o, strlen(o));
		}
	}
	json_t *ct = json_object_get(b, "cpuType");
	if (json_is_string(ct)) {
		const char *a = tk_apple_report_arch_name(json_string_value(ct), json_string_length(ct));
		if (a)
			tk_apple_report_set_attr(r, "arch", a, strlen(a));
	}
	attr(r, "process", json_object_get(b, "procName"));
	attr(r, "pid", json_object_get(b, "pid"));
	if (!tk_apple_report_attr(r, "incident"))
		attr(r, "incident", json_object_get(b, "incident"));
	json_t *ex = json_object_get(b, "exception");
	if (json_is_object(ex)) {
		attr(r, "exception.type", json_object_get(ex, "type"));
		attr(r, "exception.code", json_object_get(ex, "codes"));
		attr(r, "signal", json_object_get(ex, "signal"));
	}
	json_t *tm = json_object_get(b, "termination");
	if (json_is_object(tm)) {
		json_t *ns = json_object_get(tm, "namespace"), *code = json_object_get(tm, "code"),
		       *ind = json_object_get(tm, "indicator");
		char o[512];
		int l = snprintf(o, sizeof o, "Namespace %s, Code %lld%s%s",
		                 json_is_string(ns) ? json_string_value(ns) : "?",
		                 json_is_integer(code) ? (long long)json_integer_value(code) : 0LL,
		                 json_is_string(ind) ? " " : "", json_is_string(ind) ? json_string_value(ind) : "");
		if (json_is_string(ns) && l > 0)
			tk_apple_report_set_attr(r, "termination.reason", o, strlen(o));
	}
	json_t *ct2 = json_object_get(b, "captureTime");
	if (json_is_string(ct2)) {
		double w = tk_apple_report_parse_time(json_string_value(ct2), json_string_length(ct2));
		if (w == w)
			r->wall = w;
	}

	if (sc)
		scan_images(r, sc);
	json_t *imgs = sc ? NULL : json_object_get(b, "usedImages");
	if (imgs && !json_is_array(imgs))
		return tk_error_set(err, "%s: usedImages is not an array", r->name);
	size_t i;
	json_t *v;
	json_array_foreach(imgs, i, v)
	{
		if (!json_is_object(v))
			return tk_error_set(err, "%s: usedImages[%zu] is not an object", r->name, i);
		tk_apple_report_image *im = tk_apple_report_add_image(r);
		int neg;
		json_t *base = json_object_get(v, "base"), *size = json_object_get(v, "size");
		if ((base && (get_u64(base, &im->base, &neg) < 0 || neg)) ||
		    (size && (get_u64(size, &im->size, &neg) < 0 || neg)))
			return tk_error_set(err, "%s: usedImages[%zu]: base and size must be non-negative integers",
			                    r->name, i);
		json_t *u = json_object_get(v, "uuid");
		if (json_is_string(u)) {
			im->uuid = tk_apple_report_uuid(json_string_value(u), json_string_length(u));
			if (im->uuid && !strcmp(im->uuid, "00000000-0000-0000-0000-000000000000")) {
				free(im->uuid);
				im->uuid = NULL;
			}
		}
		im->name = str_dup(json_object_get(v, "name"));
		im->path = str_dup(json_object_get(v, "path"));
		im->arch = str_dup(json_object_get(v, "arch"));
		if (!im->name && im->path) {
			const char *sl = strrchr(im->path, '/');
			im->name = tk_xstrdup(sl ? sl + 1 : im->path);
		}
	}
	json_t *threads = json_object_get(b, "threads");
	if (threads && !json_is_array(threads))
		return tk_error_set(err, "%s: threads is not an array", r->name);
	json_t *fault = json_object_get(b, "faultingThread");
	json_array_foreach(threads, i, v)
	{
		if (!json_is_object(v))
			return tk_error_set(err, "%s: threads[%zu] is not an object", r->name, i);
		tk_apple_report_thread *t = tk_apple_report_add_thread(r);
		t->json_index = i;
		uint64_t id = i;
		int neg;
		json_t *jid = json_object_get(v, "id");
		if (jid && get_u64(jid, &id, &neg) < 0)
			id = i;
		t->id = id;
		t->name = str_dup(json_object_get(v, "name"));
		t->queue = str_dup(json_object_get(v, "queue"));
		t->crashed = json_is_true(json_object_get(v, "triggered")) ||
		             (json_is_integer(fault) && (size_t)json_integer_value(fault) == i);
		if (sc) {
			scan_frames(r, sc, i, t);
			continue;
		}
		json_t *frames = json_object_get(v, "frames");
		if (frames && !json_is_array(frames))
			return tk_error_set(err, "%s: threads[%zu].frames is not an array", r->name, i);
		char where[48];
		snprintf(where, sizeof where, "threads[%zu].frames", i);
		if (frames_of(r, frames, t, where, err) < 0)
			return -1;
	}
	json_t *leb = json_object_get(b, "lastExceptionBacktrace");
	if (json_is_array(leb)) {
		r->leb = tk_xcalloc(1, sizeof *r->leb);
		if (frames_of(r, leb, r->leb, "lastExceptionBacktrace", err) < 0)
			return -1;
	}
	if (!r->nthreads)
		return tk_error_set(
		    err, "%s: the report has no threads[] with frames (bug_type %s is not one tracekit reads)", r->name,
		    r->bug_type ? r->bug_type : "?");
	return 0;
}

static int sniff(const unsigned char *h, size_t n)
{
	return tk_apple_report_sniff(h, n) == TK_APPLE_IPS;
}

static int read_ips(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	(void)o;
	return tk_apple_report_read_profile(p, in, err);
}

const tk_reader tk_reader_ips = {"ips", sniff, read_ips};
