/* Reports from Records files and session directories: one per finished record, with its keys,
 * numbers, stack signature and content hash. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/internal.h"
#include "tracekit/metrickit.h"
#include "tracekit/read.h"
#include "tracekit/symbol.h"
#include "util/mem.h"

const char *const tk_store_key_names[TK_STORE_NKEYS] = {"app", "version", "build", "device", "os", "session"};

int tk_store_key_index(const char *name)
{
	if (strcmp(name, "app.version") == 0)
		return TK_STORE_VERSION;
	for (int i = 0; i < TK_STORE_NKEYS; i++)
		if (strcmp(name, tk_store_key_names[i]) == 0)
			return i;
	return -1;
}

/* Strings of a report set live in one list of blocks, freed together: each block holds many strings
 * (a report keeps ~11 of them, one malloc each before), a long one gets a block of its own. Blocks
 * start at 1 KB and double up to 16 KB, so a set of a few reports stays small. */
typedef struct block {
	struct block *next;
	size_t used, cap;
	char data[];
} block;

#define KEEP_BLOCK 16384

const char *tk_report_set_keep(tk_report_set *s, const char *str)
{
	size_t n = strlen(str) + 1;
	block *b = s->arena;
	if (!b || b->cap - b->used < n) {
		size_t grown = b && b->cap < KEEP_BLOCK ? b->cap * 2 : b ? KEEP_BLOCK : 1024;
		size_t cap = n > KEEP_BLOCK / 4 ? n : n > grown ? KEEP_BLOCK : grown;
		block *nb = tk_xmalloc(sizeof *nb + cap);
		nb->used = 0;
		nb->cap = cap;
		if (b && cap == n) { /* a long string: its own block, behind the one being filled */
			nb->next = b->next;
			b->next = nb;
		} else {
			nb->next = b;
			s->arena = nb;
		}
		b = nb;
	}
	char *out = b->data + b->used;
	memcpy(out, str, n);
	b->used += n;
	return out;
}

void tk_report_set_free(tk_report_set *s)
{
	for (block *b = s->arena, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	free(s->v);
	for (size_t i = 0; i < s->pn; i++)
		free(s->pv[i].fns);
	free(s->pv);
	memset(s, 0, sizeof *s);
}

int tk_report_meta_parse(tk_report_meta *meta, const char *spec, char **owned, tk_error *err)
{
	*owned = tk_xstrdup(spec);
	for (char *item = *owned, *next; item && *item; item = next) {
		next = strchr(item, ',');
		if (next)
			*next++ = 0;
		char *eq = strchr(item, '=');
		int k = eq ? (*eq = 0, tk_store_key_index(item)) : -1;
		if (k < 0) {
			tk_error_set(
			    err,
			    "--set: '%s' is not KEY=VALUE with KEY one of app, version, build, device, os, session",
			    item);
			free(*owned);
			*owned = NULL;
			return -1;
		}
		meta->keys[k] = eq + 1;
	}
	return 0;
}

/* ---- stack signatures ---- */

/* System code is not where a hang's cause is told apart: skip it in signatures. */
static int system_binary(const char *path)
{
	static const char *const prefix[] = {"/lib/",         "/lib64/",     "/usr/lib/",  "/usr/lib64/", "/System/",
	                                     "/usr/libexec/", "/Developer/", "linux-vdso", "[vdso]"};
	if (path[0] != '/' && path[0] != 'l' && path[0] != '[') /* what every prefix starts with */
		return 0;
	for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
		if (strncmp(path, prefix[i], strlen(prefix[i])) == 0)
			return 1;
	return 0;
}

/* Appends to a name of at most n - 1 bytes, cutting as snprintf(buf, n, …) would: frame names go
 * into signatures, so the bytes must stay what the snprintf of earlier versions made (5 calls a
 * report cost ~5 k instructions in vfprintf). */
typedef struct namebuf {
	char *buf;
	size_t len, n;
} namebuf;

static void nb_put(namebuf *b, const char *s, size_t len)
{
	if (b->len + len > b->n - 1)
		len = b->n - 1 - b->len;
	memcpy(b->buf + b->len, s, len);
	b->len += len;
}

static void nb_hex(namebuf *b, uint64_t v) /* as %llx: lowercase, no leading zeros */
{
	char d[16];
	int i = 16;
	do
		d[--i] = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	nb_put(b, d + i, (size_t)(16 - i));
}

/* A frame as a signature sees it, from a profile or straight from a record's snapshot. */
typedef struct sigframe {
	const char *name;  /* its symbol, or NULL */
	const char *image; /* its binary's name (NULL: no binary) */
	const char *path;  /* and path */
	uint64_t load_addr, addr;
	int synthetic;
	int apple; /* a MetricKit frame in an Apple image (apple_image): skipped as system frames are */
	int ret;   /* a return address (MetricKit's non-leaf frames): signed by its call site, addr − 1, as
	            * the monitor's and MTHawkeye's records store it, so the same site matches across both */
} sigframe;

/* A frame's name in a signature: the symbol, else image+offset (the same on every device, unlike
 * the slid address), else the raw address. Returns its length (at most n - 1). */
static size_t frame_name(const sigframe *f, char *buf, size_t n)
{
	namebuf nb = {buf, 0, n};
	if (f->name) {
		nb_put(&nb, f->name, strlen(f->name));
	} else if (f->image && f->addr >= f->load_addr) {
		nb_put(&nb, f->image, strlen(f->image));
		nb_put(&nb, "+0x", 3);
		nb_hex(&nb, f->addr - f->load_addr - (f->ret && f->addr > f->load_addr));
	} else {
		nb_put(&nb, "0x", 2);
		nb_hex(&nb, f->addr);
	}
	buf[nb.len] = 0;
	return nb.len;
}

/* The first TK_STORE_SIGNATURE_FRAMES app frames of a stack given leaf first, leaf first; all
 * frames when none is an app frame; into out (SIG_MAX bytes: the caller's, not a malloc a report). */
enum { SIG_MAX = 2048 };
static char *signature_build(const sigframe *fr, size_t depth, char *out)
{
	size_t len = 0;
	out[0] = 0;
	const char *seen = NULL; /* the last path asked about (frames of one image share it) */
	int seen_system = 0;
	for (int pass = 0; pass < 2 && len == 0; pass++) {
		int taken = 0;
		for (size_t i = 0; i < depth && taken < TK_STORE_SIGNATURE_FRAMES; i++) {
			const sigframe *f = &fr[i];
			if (f->synthetic)
				continue;
			if (pass == 0 && f->image && f->path != seen) {
				seen = f->path;
				seen_system = system_binary(f->path);
			}
			if (pass == 0 && f->image && (seen_system || f->apple))
				continue;
			char name[512];
			size_t nl = frame_name(f, name, sizeof name);
			if (len + nl + 2 >= SIG_MAX)
				break;
			if (len)
				out[len++] = ';';
			memcpy(out + len, name, nl + 1);
			len += nl;
			taken++;
		}
	}
	return out;
}

/* MetricKit names images, not paths: an Apple image is a .dylib or lib… (the system and Swift
 * runtime libraries, dyld) or one of the frameworks hang stacks pass through. An app's own
 * frameworks are app frames, as the monitor's images outside the system directories are. */
static int apple_image(const char *name)
{
	static const char *const fw[] = {"UIKitCore",
	                                 "UIKit",
	                                 "CoreFoundation",
	                                 "Foundation",
	                                 "GraphicsServices",
	                                 "QuartzCore",
	                                 "SwiftUI",
	                                 "SwiftUICore",
	                                 "CoreGraphics",
	                                 "FrontBoardServices",
	                                 "BaseBoard",
	                                 "AppKit",
	                                 "CFNetwork",
	                                 "WebKit",
	                                 "JavaScriptCore",
	                                 "Combine",
	                                 "CoreData",
	                                 "CoreText",
	                                 "ImageIO",
	                                 "Metal",
	                                 "dyld",
	                                 "AttributeGraph",
	                                 "RunningBoardServices"};
	size_t n = strlen(name);
	if (strncmp(name, "lib", 3) == 0 || (n > 6 && strcmp(name + n - 6, ".dylib") == 0))
		return 1;
	for (size_t i = 0; i < sizeof fw / sizeof fw[0]; i++)
		if (strcmp(name, fw[i]) == 0)
			return 1;
	return 0;
}

/* The signature of a profile's stack. */
static char *signature_of(const tk_profile *p, tk_stack_id stack, char *out)
{
	tk_frame_id fr[256];
	size_t depth = tk_stack_frames(p, stack, fr, 256);
	if (depth > 256)
		depth = 256;
	sigframe sf[256];
	const char *format = tk_profile_meta(p, "format");
	int mx = format && strcmp(format, "metrickit") == 0;
	for (size_t i = 0; i < depth; i++) { /* fr is root first */
		const tk_frame *f = tk_frame_get(p, fr[depth - 1 - i]);
		const tk_binary *b = tk_binary_get(p, f->binary);
		const char *fname = f->name ? tk_string(p, f->name) : NULL;
		if (mx && fname && b) {
			/* the reader's label of an unnamed frame ("Atlas + 0x1b5d74"): signed as image+offset */
			const char *bn = tk_string(p, b->name);
			size_t bl = strlen(bn);
			if (strncmp(fname, bn, bl) == 0 && strncmp(fname + bl, " + 0x", 5) == 0)
				fname = NULL;
		}
		sf[i] = (sigframe){.name = fname,
		                   .image = b ? tk_string(p, b->name) : NULL,
		                   .path = b ? tk_string(p, b->path) : NULL,
		                   .load_addr = b ? b->load_addr : 0,
		                   .addr = f->addr,
		                   .synthetic = (f->flags & TK_FRAME_SYNTHETIC) != 0,
		                   .apple = mx && b && apple_image(tk_string(p, b->name)),
		                   .ret = mx && !(f->flags & TK_FRAME_LEAF_PC)};
	}
	return signature_build(sf, depth, out);
}

/* The heaviest stack of thread t (ties: the first seen). */
static tk_stack_id heaviest(const tk_profile *p, tk_thread_id t)
{
	size_t n;
	const tk_stack_weight *w = tk_thread_stacks(p, t, &n);
	tk_stack_id best = 0;
	uint64_t bw = 0;
	for (size_t i = 0; i < n; i++)
		if (w[i].stack && (w[i].weight > bw || !best)) {
			best = w[i].stack;
			bw = w[i].weight;
		}
	return best;
}

/* The stack that signs event e: a hang's snapshot (its context threads, the first with a stack),
 * else the heaviest path of the stacks it owns (its tree), in out (SIG_MAX bytes). NULL if it has none. */
static char *event_signature(const tk_profile *p, tk_event_id e, char *out)
{
	const tk_event *ev = tk_event_get(p, e);
	size_t nt = tk_thread_count(p);
	for (size_t t = 0; t < nt; t++) {
		const tk_thread *th = tk_thread_get(p, (tk_thread_id)t);
		if (th->event != e || th->role != TK_ROLE_CONTEXT)
			continue;
		tk_stack_id s = heaviest(p, (tk_thread_id)t);
		if (s)
			return signature_of(p, s, out);
	}
	double tree = tk_event_num(p, e, "tree"); /* Records: a tree was recorded (NAN: not said) */
	if (tree == 0 || ev->thread >= nt)
		return NULL;
	tk_stack_id s = heaviest(p, ev->thread);
	return s ? signature_of(p, s, out) : NULL;
}

/* Names a profile's frames before signatures are taken: the images its reader listed that are
 * files of this machine (a Linux session), then the caller's namer (dSYMs) for MTHawkeye sessions,
 * whose frames carry their image's UUID. Once per input, for all its events. */
static int name_frames(tk_profile **p, const tk_report_meta *given, tk_error *err)
{
	if (tk_elf_name_listed(p, NULL, err) < 0)
		return -1;
	const char *format = tk_profile_meta(*p, "format");
	if (given && given->name_frames && format && strcmp(format, "mthawkeye") == 0)
		return given->name_frames(given->name_frames_ctx, p, err);
	return 0;
}

/* ---- content hash ---- */

/* printf("%.17g", v) for the doubles reports carry (1e-4 <= |v| < 1e17, zero), without printf
 * (~4.5 k instructions a number in glibc): v = m * 2^e exactly, so v * 10^(16 - X) is an exact
 * 128-bit integer over a power of two, rounded to nearest, ties to even (exact halves occur, e.g.
 * 0.500003814697265625), as glibc's exact conversion rounds in the default mode; X is the exponent
 * after rounding, as %g defines it. Any other value goes to snprintf. test_store_api compares the
 * two on 1.8 M doubles and every exact half of a sweep (3.2 M halves and 32 M random doubles more
 * once, by hand: no difference). out holds 32 bytes. */
int tk_store_fmt_g17(double v, char *out)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	int bexp = (int)(bits >> 52 & 0x7ff);
	uint64_t m = bits & ((1ull << 52) - 1);
	char *o = out;
	if (bexp == 0 && m == 0) {
		if (bits >> 63)
			*o++ = '-';
		*o++ = '0';
		*o = 0;
		return (int)(o - out);
	}
	if (bexp == 0x7ff) { /* as glibc prints them: a report without a CPU average hashes "nan" */
		memcpy(o, bits >> 63 ? "-" : "", bits >> 63 ? 1 : 0);
		o += bits >> 63;
		memcpy(o, m ? "nan" : "inf", 4);
		return (int)(o - out) + 3;
	}
	double a = fabs(v);
	if (bexp == 0 || !(a >= 1e-4) || !(a < 1e17))
		return snprintf(out, 32, "%.17g", v);
	static const uint64_t p10[20] = {1ull,
	                                 10ull,
	                                 100ull,
	                                 1000ull,
	                                 10000ull,
	                                 100000ull,
	                                 1000000ull,
	                                 10000000ull,
	                                 100000000ull,
	                                 1000000000ull,
	                                 10000000000ull,
	                                 100000000000ull,
	                                 1000000000000ull,
	                                 10000000000000ull,
	                                 100000000000000ull,
	                                 1000000000000000ull,
	                                 10000000000000000ull,
	                                 100000000000000000ull,
	                                 1000000000000000000ull,
	                                 10000000000000000000ull};
	m |= 1ull << 52;
	int e = bexp - 1075; /* a = m * 2^e */
	int X = 0;           /* an estimate of the decimal exponent, corrected below */
	if (a >= 1)
		while (X < 16 && a >= (double)p10[X + 1])
			X++;
	else
		while (X > -4 && a < 1.0 / (double)p10[-X])
			X--;
	uint64_t q = 0;
	for (int tries = 0;; tries++) {
		if (X < -4 || X > 16 || tries > 3)
			return snprintf(out, 32, "%.17g", v);
		int k = 16 - X;                                                    /* 0 … 20 */
		unsigned __int128 n = (unsigned __int128)m * p10[k < 19 ? k : 19]; /* < 2^120 */
		if (k == 20)                                                       /* 10^20 does not fit 64 bits */
			n *= 10;
		if (e >= 0) {
			if (e > 12) /* a < 1e17 < 2^57 and m >= 2^52: never, kept for safety */
				return snprintf(out, 32, "%.17g", v);
			n <<= e;
			if (n >> 64)
				return snprintf(out, 32, "%.17g", v);
			q = (uint64_t)n;
		} else {
			int sh = -e; /* a >= 1e-4 and m < 2^53: sh <= 66 */
			if (sh > 120)
				return snprintf(out, 32, "%.17g", v);
			unsigned __int128 one = 1, rem = n & ((one << sh) - 1), half = one << (sh - 1);
			unsigned __int128 qq = n >> sh;
			if (rem > half || (rem == half && (qq & 1)))
				qq++;
			if (qq >> 64)
				return snprintf(out, 32, "%.17g", v);
			q = (uint64_t)qq;
		}
		if (q >= p10[17])
			X++;
		else if (q < p10[16])
			X--;
		else
			break;
	}
	char d[17];
	for (int i = 17; i-- > 0; q /= 10)
		d[i] = (char)('0' + q % 10);
	int last = 16; /* the last significant digit */
	while (last > 0 && d[last] == '0')
		last--;
	if (v < 0)
		*o++ = '-';
	if (X >= 0) {
		memcpy(o, d, (size_t)X + 1);
		o += X + 1;
		if (last > X) {
			*o++ = '.';
			memcpy(o, d + X + 1, (size_t)(last - X));
			o += last - X;
		}
	} else {
		*o++ = '0';
		*o++ = '.';
		for (int i = -1; i > X; i--)
			*o++ = '0';
		memcpy(o, d, (size_t)last + 1);
		o += last + 1;
	}
	*o = 0;
	return (int)(o - out);
}

static char *put_field(char *o, const char *s, size_t len)
{
	memcpy(o, s, len);
	o[len] = 0; /* a separator that no field holds */
	return o + len + 1;
}

/* The hashed text: each field and a NUL; the numbers as "%.17g|%.17g|%.17g|%llu". Stored ids are
 * hashes of exactly these bytes, so the text never changes. */
void tk_report_set_id(tk_report *r)
{
	const char *f[TK_STORE_NKEYS + 4] = {r->kind};
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		f[1 + k] = r->keys[k];
	f[TK_STORE_NKEYS + 1] = r->rkey;
	f[TK_STORE_NKEYS + 2] = r->thread;
	f[TK_STORE_NKEYS + 3] = r->signature;
	size_t fl[TK_STORE_NKEYS + 4], total = 3 * 32 + 24 + 1; /* and the numbers */
	for (int i = 0; i < TK_STORE_NKEYS + 4; i++)
		total += (fl[i] = strlen(f[i])) + 1;
	char stack[4096];
	char *b = total <= sizeof stack ? stack : tk_xmalloc(total), *o = b;
	for (int i = 0; i < TK_STORE_NKEYS + 2; i++) /* kind, keys, record key */
		o = put_field(o, f[i], fl[i]);
	o += tk_store_fmt_g17(r->time, o);
	*o++ = '|';
	o += tk_store_fmt_g17(r->duration, o);
	*o++ = '|';
	o += tk_store_fmt_g17(r->avg_cpu, o);
	*o++ = '|';
	char dd[24];
	int i = 24;
	unsigned long long s = (unsigned long long)r->samples;
	do
		dd[--i] = (char)('0' + s % 10);
	while (s /= 10);
	o = put_field(o, dd + i, (size_t)(24 - i));
	o = put_field(o, f[TK_STORE_NKEYS + 2], fl[TK_STORE_NKEYS + 2]);
	o = put_field(o, f[TK_STORE_NKEYS + 3], fl[TK_STORE_NKEYS + 3]);
	tk_store_sha256_hex(b, (size_t)(o - b), r->id, 32);
	if (b != stack)
		free(b);
}

/* ---- meta.json ---- */

static int meta_from_json(const void *data, size_t n, const char *name, char *keys[TK_STORE_NKEYS], tk_error *err)
{
	json_error_t je;
	json_t *root = json_loadb(data, n, 0, &je);
	if (!root || !json_is_object(root)) {
		json_decref(root);
		return tk_error_set(err, "%s:%d:%d: meta.json is not a JSON object%s%s", name, je.line, je.column,
		                    root ? "" : ": ", root ? "" : je.text);
	}
	for (int k = 0; k < TK_STORE_NKEYS; k++) {
		json_t *v = json_object_get(root, tk_store_key_names[k]);
		if (v && !json_is_string(v)) {
			json_decref(root);
			return tk_error_set(err, "%s: meta.json: \"%s\" is not a string", name, tk_store_key_names[k]);
		}
		if (v)
			keys[k] = tk_xstrdup(json_string_value(v));
	}
	json_decref(root);
	return 0;
}

/* ---- events → reports ---- */

/* An event's string attribute, else its number as the reader wrote it (integers without a
 * fraction), else NULL; buf holds the number. */
static const char *attr_text(const tk_profile *p, tk_event_id e, const char *key, char *buf, size_t n)
{
	const char *s = tk_event_str(p, e, key);
	if (s)
		return s;
	double v = tk_event_num(p, e, key);
	if (v != v)
		return NULL;
	if (v == (double)(long long)v)
		snprintf(buf, n, "%lld", (long long)v);
	else
		snprintf(buf, n, "%.17g", v);
	return buf;
}

static int streq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The kind a report is stored under: a Records record keeps the name it always had (hang,
 * cpu-highload, anr); any other event its kind's name (crash, disk-write, launch …). */
static const char *stored_kind(const tk_profile *p, const tk_event *ev)
{
	const char *name = tk_string(p, ev->name);
	if (strcmp(name, "hang") == 0 || strcmp(name, "cpu-highload") == 0 || strcmp(name, "anr") == 0)
		return name;
	if (ev->kind == TK_EVENT_MARKER && strcmp(name, "foreground") == 0) /* the monitor's foreground time */
		return name;
	return tk_event_kind_name(ev->kind);
}

/* ---- hang rate inputs (docs/store.md "Hang rate") ---- */

/* A MetricKit metric payload (the reader's "metrics" event) with its foreground time. */
static int is_metric_payload(const tk_profile *p, tk_event_id e, const tk_event *ev)
{
	return ev->kind == TK_EVENT_MARKER && strcmp(tk_string(p, ev->name), "metrics") == 0 &&
	       isfinite(tk_event_num(p, e, "foreground.time"));
}

/* A metric payload's own session when none is given: one payload is one device's day, and MetricKit
 * names no device, so the payload stands for its device: a hash of everything the reader kept of it
 * (the same payload always hashes the same, two devices' payloads differ in their numbers). */
static void metric_payload_session(const tk_profile *p, tk_event_id e, const tk_event *ev, char out[17])
{
	size_t cap = 256, len = 0;
	char *b = tk_xmalloc(cap);
	size_t na = tk_event_attr_count(p, e);
	for (size_t i = 0; i <= na; i++) {
		char item[96];
		const char *k = "wall", *str = NULL;
		double num = ev->wall;
		if (i < na) {
			tk_event_attr a = tk_event_attr_at(p, e, i);
			k = a.key, str = a.str, num = a.num;
		}
		if (!str) {
			snprintf(item, sizeof item, "%.17g", num);
			str = item;
		}
		size_t need = strlen(k) + strlen(str) + 2;
		TK_GROW(b, cap, len + need + 1);
		len += (size_t)snprintf(b + len, cap - len, "%s=%s", k, str) + 1; /* NUL-separated */
	}
	tk_store_sha256_hex(b, len, out, 8);
	free(b);
}

/* The hang-time report of a metric payload: the seconds of hangs of at least 250 ms its
 * histogrammedAppHangTime implies (tk_mx_histogram_sum_above: bucket midpoints, the part of a
 * bucket straddling 250 ms spread evenly), an estimate; samples = the hangs counted (rounded).
 * Returns 0 when the payload has no hang histogram in time units. */
static int metric_payload_hang_time(const tk_profile *p, tk_event_id e, double *seconds, uint64_t *hangs)
{
	const char *h = tk_event_str(p, e, "histogram.app.hang.time");
	tk_mx_bucket *b = NULL;
	size_t n = 0;
	tk_mx_kind kind;
	if (!h || tk_mx_histogram_parse(h, &b, &n, &kind) || kind != TK_MX_TIME) {
		free(b);
		return 0;
	}
	const uint64_t min = 250000000; /* ns */
	*seconds = tk_mx_histogram_sum_above(b, n, min) / 1e9;
	double c = 0;
	for (size_t i = 0; i < n; i++)
		if (b[i].end >= min && b[i].count)
			c += b[i].start >= min || b[i].end == b[i].start
			         ? (double)b[i].count
			         : (double)b[i].count * (double)(b[i].end - min) / (double)(b[i].end - b[i].start);
	*hangs = (uint64_t)llround(c);
	free(b);
	return 1;
}

/* Every event of p becomes a report: its kind, the keys (meta.json, then given, then the event's
 * own app/os/… attributes), the session (given, or a hash of its run: launch time, pid, process),
 * start, duration, average CPU, samples, thread and stack signature. Live events are counted, not
 * stored. */
int tk_store_event_reports(tk_profile **pp, char *const mkeys[TK_STORE_NKEYS], const tk_report_meta *given,
                           tk_report_set *out, tk_error *err)
{
	if (tk_event_count(*pp) && name_frames(pp, given, err) < 0)
		return -1;
	const tk_profile *p = *pp;
	const char *keys[TK_STORE_NKEYS];
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		keys[k] = mkeys[k] && *mkeys[k] ? mkeys[k] : given && given->keys[k] ? given->keys[k] : "";
	/* the event's own facts fill what is still unknown (attribute names of profile.h) */
	static const char *const attr_of[TK_STORE_NKEYS][2] = {
	    {"app", "process"}, {"app.version", NULL}, {"app.build", NULL}, {"device", NULL}, {"os", NULL}, {"session", NULL}};
	const char *last_lt = NULL, *last_pid = NULL;
	char last_pidbuf[32] = "";
	int have_session = 0;
	char session[40] = "";
	const char *kept_session = NULL;
	for (tk_event_id e = 1; e <= tk_event_count(p); e++) {
		const tk_event *ev = tk_event_get(p, e);
		if (ev->flags & TK_EVENT_LIVE) {
			out->live++;
			continue;
		}
		const char *kept[TK_STORE_NKEYS];
		int derive_session = 0;
		for (int k = 0; k < TK_STORE_NKEYS; k++) {
			const char *v = keys[k];
			for (int a = 0; a < 2 && !*v && attr_of[k][a]; a++)
				if (tk_event_str(p, e, attr_of[k][a]))
					v = tk_event_str(p, e, attr_of[k][a]);
			derive_session |= k == TK_STORE_SESSION && !*v;
			kept[k] = k == TK_STORE_SESSION && !*v ? NULL : tk_report_set_keep(out, v);
		}
		const int metrics = is_metric_payload(p, e, ev);
		if (derive_session && metrics) {
			char msess[17];
			metric_payload_session(p, e, ev, msess);
			kept[TK_STORE_SESSION] = tk_report_set_keep(out, msess);
			derive_session = 0;
		}
		if (derive_session) {
			/* A session recorded without an id: the same run always hashes to the same one — each
			 * event its own run's (launch time, pid), so a directory reused by several runs gives
			 * each run's reports the key that run's own upload bundles get. */
			char pidbuf[32], sbuf[32];
			const char *lt = tk_event_str(p, e, "launch.time");
			const char *run_pid = attr_text(p, e, "run.pid", pidbuf, sizeof pidbuf);
			if (!have_session || !streq(lt, last_lt) || !streq(run_pid, last_pid)) {
				const char *lts = lt ? lt : tk_event_str(p, e, "session.launch.time");
				const char *pid = run_pid ? run_pid : attr_text(p, e, "pid", sbuf, sizeof sbuf);
				const char *proc = tk_event_str(p, e, "process");
				char buf[512];
				snprintf(buf, sizeof buf, "%s|%s|%s", lts ? lts : "", pid ? pid : "", proc ? proc : "");
				tk_store_sha256_hex(buf, strlen(buf), session, 8);
				kept_session = tk_report_set_keep(out, session);
				have_session = 1;
				last_lt = lt;
				if (run_pid) {
					snprintf(last_pidbuf, sizeof last_pidbuf, "%s", run_pid);
					last_pid = last_pidbuf;
				} else
					last_pid = NULL;
			}
			kept[TK_STORE_SESSION] = kept_session;
		}
		char sigbuf[SIG_MAX];
		const char *sig = event_signature(p, e, sigbuf);
		TK_GROW(out->v, out->cap, out->n + 1);
		tk_report *rep = &out->v[out->n++];
		memset(rep, 0, sizeof *rep);
		rep->kind = tk_report_set_keep(out, stored_kind(p, ev));
		memcpy(rep->keys, kept, sizeof kept);
		rep->rkey = tk_report_set_keep(out, tk_string(p, ev->key));
		rep->time = ev->wall;
		double d = tk_event_num(p, e, "duration"); /* seconds as the input wrote them */
		rep->duration = d == d ? d : ev->duration == UINT64_MAX ? NAN : (double)ev->duration / 1e9;
		rep->avg_cpu = tk_event_num(p, e, "cpu.average");
		double ns = tk_event_num(p, e, "samples");
		rep->samples = ns == ns && ns >= 0 ? (uint64_t)ns : ev->samples;
		const char *th = tk_event_str(p, e, "thread");
		rep->thread = tk_report_set_keep(out, th ? th : "");
		rep->signature = tk_report_set_keep(out, sig ? sig : "");
		char *folded = tk_store_event_folded(p, e);
		rep->stacks = tk_report_set_keep(out, folded);
		free(folded);
		if (rep->stacks && *rep->stacks) { /* the stacks table's key, hashed here, not by the committer */
			char hex[33];
			tk_store_stacks_hash(rep->stacks, hex);
			for (int b = 0; b < 16; b++) {
				int hi = hex[2 * b] <= '9' ? hex[2 * b] - '0' : hex[2 * b] - 'a' + 10;
				int lo = hex[2 * b + 1] <= '9' ? hex[2 * b + 1] - '0' : hex[2 * b + 1] - 'a' + 10;
				rep->stacks_hash[b] = (unsigned char)(hi << 4 | lo);
			}
			rep->stacks_hashed = rep->stacks;
		}
		if (metrics) { /* foreground time (and the hang histogram's estimate) for the hang rate */
			rep->kind = tk_report_set_keep(out, "foreground");
			rep->duration = tk_event_num(p, e, "foreground.time");
			rep->samples = 0;
		}
		tk_report_set_id(rep);
		double hs;
		uint64_t hn;
		if (metrics && metric_payload_hang_time(p, e, &hs, &hn)) {
			TK_GROW(out->v, out->cap, out->n + 1);
			tk_report *h = &out->v[out->n++];
			*h = out->v[out->n - 2];
			h->kind = tk_report_set_keep(out, "hang-time");
			h->duration = hs;
			h->samples = hn;
			tk_report_set_id(h);
		}
	}
	return 0;
}

static void free_keys(char *keys[TK_STORE_NKEYS])
{
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		free(keys[k]);
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, len = 0;
	for (;;) {
		TK_GROW(buf, cap, len + 65536);
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	fclose(f);
	*n = len;
	return buf;
}

/* Read an input's events through the reader registry: the Records reader for a Records file or
 * session (its parse errors named, whatever the sniffers say), each hang's snapshot as context. */
static void read_options(tk_read_options *ro, const char *images)
{
	tk_read_options_init(ro);
	ro->event_context = 1;
	ro->images = images;
	ro->fallback = &tk_reader_records;
}

int tk_reports_from_records_path(const char *path, const tk_report_meta *given, tk_report_set *out, tk_error *err)
{
	tk_read_options ro;
	read_options(&ro, NULL);
	tk_profile *p = tk_profile_new();
	if (tk_read_path(p, path, &ro, err) < 0) {
		tk_profile_free(p);
		return -1;
	}
	char *keys[TK_STORE_NKEYS] = {0};
	struct stat st;
	int rc = 0;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		char mp[4096];
		snprintf(mp, sizeof mp, "%s/meta.json", path);
		size_t n;
		char *m = slurp(mp, &n);
		if (m)
			rc = meta_from_json(m, n, mp, keys, err);
		free(m);
	}
	if (!rc)
		rc = tk_store_event_reports(&p, keys, given, out, err);
	free_keys(keys);
	tk_profile_free(p);
	return rc;
}

int tk_reports_from_bytes(const void *records, size_t n, const void *meta_json, size_t meta_n, const void *images_json,
                          size_t images_n, const char *name, const tk_report_meta *given, tk_report_set *out,
                          tk_error *err)
{
	char *keys[TK_STORE_NKEYS] = {0};
	if (meta_json && meta_from_json(meta_json, meta_n, name, keys, err))
		return free_keys(keys), -1;
	/* the records alone, as bytes (no session directory beside them), read by the Records reader
	 * whatever their first line looks like; images.json from memory, named after the upload */
	char iname[512];
	snprintf(iname, sizeof iname, "%s: images.json", name);
	tk_read_options ro;
	read_options(&ro, images_json ? iname : NULL);
	ro.images_data = images_json;
	ro.images_len = images_n;
	tk_profile *p = tk_profile_new();
	tk_input *in = tk_input_open_mem(records, n, name, err);
	int rc = in ? tk_reader_records.read(p, in, &ro, err) : -1;
	tk_input_close(in);
	if (!rc)
		rc = tk_store_event_reports(&p, keys, given, out, err);
	free_keys(keys);
	tk_profile_free(p);
	return rc;
}
