/*
 * Crash reports as text, the form Apple's tools print (tracekit/apple_report.h, docs/apple-reports.md):
 *   - a .crash text is written back line for line, only its frame lines renamed;
 *   - an .ips is laid out the way macOS writes a translated report (checked line by line against a
 *     real pair, tests/fixtures/reports/multithread-test_macos13_lldb.*) and, for iOS reports, with
 *     the iOS header and "Thread N name:" / "Thread N Crashed:" titles Xcode prints.
 * Frames: `N   Binary<pad 30>\t<address right-aligned in 18>` then what names them —
 *   from a dSYM (atos's form)       `function (in Binary) (File.swift:LINE)`, inlined frames first,
 *                                   each on its own line with the same index and address
 *   symbol table only               `function (in Binary) + OFFSET`
 *   as the report named it          `symbol + OFFSET (File:LINE)`
 *   unnamed                         `0xBASE + OFFSET`
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/apple_report.h"
#include "util/mem.h"

static const tk_apple_report_image *image_of(const tk_apple_report *r, const tk_apple_report_frame *f)
{
	return f->image ? &r->images[f->image - 1] : NULL;
}

/* The whole report is assembled in one buffer and written with one fwrite: a report is mostly frame
 * lines, and printf per field (then an fwrite per line, then per stack) was the writer's main cost
 * (bench/bench_reports.sh). Numbers are formatted by hand, with the bytes printf gives. */
typedef struct obuf {
	char *b;
	size_t n, cap;
} obuf;

static void ob_grow(obuf *o, size_t need)
{
	size_t c = o->cap ? o->cap : 32768; /* a 100-frame report is ~17 kB */
	while (c - o->n < need)
		c *= 2;
	o->b = tk_xrealloc(o->b, c);
	o->cap = c;
}

/* room for need more bytes; returns where they go */
static inline char *ob_room(obuf *o, size_t need)
{
	if (__builtin_expect(o->cap - o->n < need, 0))
		ob_grow(o, need);
	return o->b + o->n;
}

static inline void ob_put(obuf *o, const char *s, size_t n)
{
	memcpy(ob_room(o, n), s, n);
	o->n += n;
}

static inline void ob_c(obuf *o, char c)
{
	*ob_room(o, 1) = c;
	o->n++;
}

#define OB_LIT(o, lit) ob_put(o, lit, sizeof lit - 1)

/* printf's %s: a NULL string prints as glibc prints it */
static inline void ob_str(obuf *o, const char *s)
{
	if (!s)
		s = "(null)";
	ob_put(o, s, strlen(s));
}

/* s padded with spaces to width: on the right (%-Ns) or on the left (%Ns) */
static inline void ob_pad(obuf *o, const char *s, size_t n, size_t width, int left)
{
	size_t pad = n < width ? width - n : 0;
	char *w = ob_room(o, n + pad);
	if (!left) {
		memset(w, ' ', pad);
		w += pad;
	}
	memcpy(w, s, n);
	w += n;
	if (left) {
		memset(w, ' ', pad);
		w += pad;
	}
	o->n = (size_t)(w - o->b);
}

static size_t fmt_dec(char *b, uint64_t v)
{
	char t[24], *e = t + sizeof t, *p = e;
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10));
	size_t k = (size_t)(e - p);
	for (size_t i = 0; i < k; i++) /* a few bytes: no call to memcpy */
		b[i] = p[i];
	return k;
}

/* a signed decimal (%lld) */
static size_t fmt_sdec(char *b, long long v)
{
	if (v >= 0)
		return fmt_dec(b, (uint64_t)v);
	b[0] = '-';
	return 1 + fmt_dec(b + 1, -(uint64_t)v);
}

/* lower-case hex digits of v, at least min of them (zero-padded) */
static size_t fmt_xdig(char *b, uint64_t v, int min)
{
	int k = v ? (64 - __builtin_clzll(v) + 3) / 4 : 1;
	if (k < min)
		k = min;
	for (int i = k - 1; i >= 0; i--, v >>= 4)
		b[i] = "0123456789abcdef"[v & 15];
	return (size_t)k;
}

/* "0x" and lower-case hex, as %#" PRIx64 " prints a non-zero value and "0x%" PRIx64 " any */
static size_t fmt_hex(char *b, uint64_t v)
{
	b[0] = '0', b[1] = 'x';
	return 2 + fmt_xdig(b + 2, v, 1);
}

static inline void ob_dec(obuf *o, uint64_t v)
{
	o->n += fmt_dec(ob_room(o, 24), v);
}

static inline void ob_sdec(obuf *o, long long v)
{
	o->n += fmt_sdec(ob_room(o, 24), v);
}

static inline void ob_hex(obuf *o, uint64_t v)
{
	o->n += fmt_hex(ob_room(o, 24), v);
}

/* " (FILE:LINE)" */
static void ob_file_line(obuf *o, const char *file, uint32_t line)
{
	OB_LIT(o, " (");
	ob_str(o, file);
	ob_c(o, ':');
	ob_dec(o, line);
	ob_c(o, ')');
}

/* a name from a dSYM with its file (or none), not the symbol table's "+ OFFSET" form, and no NULL
 * function (which prints as "(null)") */
static inline int s_fast(const tk_apple_report_frame *f, size_t q)
{
	return f->sym[q].function && !(f->sym_symtab && q + 1 == f->nsym);
}

/* What names the frame, after the address. bin: the image's name ("???" without one). */
static void frame_rest(obuf *o, const tk_apple_report *r, const tk_apple_report_frame *f, size_t q, const char *bin,
                       size_t bn)
{
	const tk_apple_report_image *im = image_of(r, f);
	if (f->nsym && s_fast(f, q)) {
		/* "FUNCTION (in BIN) (FILE:LINE)": one reservation, then stores */
		const tk_apple_report_sym *s = &f->sym[q];
		size_t fl = strlen(s->function), il = s->file ? strlen(s->file) : 0;
		char *w = ob_room(o, fl + 5 + bn + 1 + 2 + il + 1 + 24 + 1);
		memcpy(w, s->function, fl);
		w += fl;
		memcpy(w, " (in ", 5);
		w += 5;
		memcpy(w, bin, bn);
		w += bn;
		*w++ = ')';
		if (s->file) {
			memcpy(w, " (", 2);
			w += 2;
			memcpy(w, s->file, il);
			w += il;
			*w++ = ':';
			w += fmt_dec(w, s->line);
			*w++ = ')';
		}
		o->n = (size_t)(w - o->b);
		return;
	}
	if (f->nsym) {
		const tk_apple_report_sym *s = &f->sym[q];
		ob_str(o, s->function);
		OB_LIT(o, " (in ");
		ob_put(o, bin, bn);
		ob_c(o, ')');
		if (f->sym_symtab && q + 1 == f->nsym) {
			OB_LIT(o, " + ");
			ob_dec(o, f->sym_off);
		} else if (s->file)
			ob_file_line(o, s->file, s->line);
		return;
	}
	if (f->symbol) {
		ob_str(o, f->symbol);
		if (f->has_symoff) {
			OB_LIT(o, " + ");
			ob_dec(o, f->symoff);
		}
		if (f->file) {
			const char *b = strrchr(f->file, '/');
			ob_file_line(o, b ? b + 1 : f->file, f->line);
		}
		return;
	}
	if (im) {
		ob_hex(o, im->base);
		OB_LIT(o, " + ");
		ob_dec(o, f->addr - im->base);
	} else
		ob_hex(o, f->addr);
}

/* the name of a frame's image and its length (binl caches the lengths of the report's images) */
static const char *bin_of(const tk_apple_report *r, const tk_apple_report_frame *f, size_t *binl, size_t *bn)
{
	const tk_apple_report_image *im = image_of(r, f);
	if (!im || !im->name) {
		*bn = 3;
		return "???";
	}
	size_t i = f->image - 1;
	if (binl[i] == SIZE_MAX)
		binl[i] = strlen(im->name);
	*bn = binl[i];
	return im->name;
}

static const char spaces[64] = "                                                                ";

static void frame_lines(obuf *o, const tk_apple_report *r, const tk_apple_report_frame *f, size_t idx, size_t *binl)
{
	size_t bn;
	const char *bin = bin_of(r, f, binl, &bn);
	/* "%-4zu%-30s\t%18s ": the same for each of the frame's lines, made once (the pads as fixed
	 * stores of spaces, then the text over them) */
	char pre[24 + 64 + 1 + 24 + 1 + 32], *w = pre;
	if (bn > 64) {
		char num[24], addr[24];
		size_t nn = fmt_dec(num, idx), an = fmt_hex(addr, f->addr);
		size_t n = f->nsym ? f->nsym : 1;
		for (size_t q = 0; q < n; q++) {
			ob_pad(o, num, nn, 4, 1);
			ob_pad(o, bin, bn, 30, 1);
			ob_c(o, '\t');
			ob_pad(o, addr, an, 18, 0);
			ob_c(o, ' ');
			frame_rest(o, r, f, q, bin, bn);
			ob_c(o, '\n');
		}
		return;
	}
	memcpy(w, spaces, 4);
	size_t nn = fmt_dec(w, idx);
	w += nn > 4 ? nn : 4;
	memcpy(w, spaces, 32);
	memcpy(w, bin, bn);
	w += bn > 30 ? bn : 30;
	*w++ = '\t';
	char addr[24];
	size_t an = fmt_hex(addr, f->addr);
	memcpy(w, spaces, 18);
	if (an < 18)
		w += 18 - an;
	memcpy(w, addr, an);
	w += an;
	*w++ = ' ';
	size_t pn = (size_t)(w - pre);
	size_t n = f->nsym ? f->nsym : 1;
	for (size_t q = 0; q < n; q++) {
		ob_put(o, pre, pn);
		frame_rest(o, r, f, q, bin, bn);
		ob_c(o, '\n');
	}
}

static void stack_lines(obuf *o, const tk_apple_report *r, const tk_apple_report_thread *t, size_t *binl)
{
	for (size_t k = 0; k < t->nframes; k++)
		frame_lines(o, r, &t->frames[k], k, binl);
}

/* the buffer to out, and freed; -1 on a write error */
static int ob_write(obuf *o, FILE *out)
{
	int bad = o->n && fwrite(o->b, 1, o->n, out) != o->n;
	free(o->b);
	o->b = NULL;
	o->n = o->cap = 0;
	return bad ? -1 : 0;
}

/* ---- a .crash text: every line as it was, frames renamed ---- */

static int write_crash_text(obuf *o, const tk_apple_report *r)
{
	/* frames by line */
	const tk_apple_report_frame **at = calloc(r->nlines ? r->nlines : 1, sizeof *at);
	if (!at)
		return -1;
	size_t *binl = tk_xmalloc((r->nimages ? r->nimages : 1) * sizeof *binl);
	memset(binl, 0xff, (r->nimages ? r->nimages : 1) * sizeof *binl);
	for (size_t i = 0; i < r->nthreads; i++)
		for (size_t k = 0; k < r->threads[i].nframes; k++) {
			const tk_apple_report_frame *f = &r->threads[i].frames[k];
			if (f->line_no < r->nlines)
				at[f->line_no] = f;
		}
	if (r->json_header) {
		char *h = json_dumps(r->json_header, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (h) {
			ob_str(o, h);
			ob_c(o, '\n');
		}
		free(h);
	}
	size_t first = 0;
	if (r->json_header)
		while (first < r->nlines && r->lines[first][0] != '{')
			first++;
	if (r->json_header && first < r->nlines)
		first++;
	for (size_t ln = first; ln < r->nlines; ln++) {
		const tk_apple_report_frame *f = at[ln];
		const char *s = r->lines[ln];
		if (!f || !f->nsym) {
			ob_str(o, s);
			ob_c(o, '\n');
			continue;
		}
		size_t bn;
		const char *bin = bin_of(r, f, binl, &bn);
		for (size_t q = 0; q < f->nsym; q++) {
			ob_put(o, s, f->sym_at);
			frame_rest(o, r, f, q, bin, bn);
			ob_c(o, '\n');
		}
	}
	free(binl);
	free(at);
	return 0;
}

/* ---- an .ips laid out as text ---- */

static const char *sget(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int iget(json_t *o, const char *k, long long *v)
{
	json_t *x = json_object_get(o, k);
	if (!json_is_integer(x))
		return 0;
	*v = json_integer_value(x);
	return 1;
}

/* A register value: an integer, or a big one the reader kept as a marked string. */
static int reg_val(json_t *x, uint64_t *v)
{
	if (json_is_integer(x)) {
		*v = (uint64_t)json_integer_value(x);
		return 1;
	}
	if (json_is_string(x) && !strncmp(json_string_value(x),
	                                  "\x1e"
	                                  "BIG:",
	                                  5)) {
		*v = strtoull(json_string_value(x) + 5, NULL, 10);
		return 1;
	}
	return 0;
}
static int reg(json_t *state, const char *name, uint64_t *v)
{
	return reg_val(json_object_get(json_object_get(state, name), "value"), v);
}
static int reg_at(json_t *arr, size_t i, uint64_t *v)
{
	return reg_val(json_object_get(json_array_get(arr, i), "value"), v);
}

/* "KEY:" padded to the header width (values start at column 21 in iOS reports, 23 in macOS ones;
 * a key of 63 bytes or more is cut there, as the snprintf into 64 bytes it replaces did) */
static void hdr_key(obuf *o, int width, const char *key)
{
	size_t kn = strlen(key);
	if (kn > 62)
		kn = 62;
	char k[64];
	memcpy(k, key, kn);
	k[kn++] = ':';
	ob_pad(o, k, kn, (size_t)width, 1);
}

/* "KEY:<pad>VALUE\n" */
static void hdr_s(obuf *o, int width, const char *key, const char *v)
{
	hdr_key(o, width, key);
	ob_str(o, v);
	ob_c(o, '\n');
}

/* "KEY:<pad>A (B)\n" */
static void hdr_s2(obuf *o, int width, const char *key, const char *a, const char *b)
{
	hdr_key(o, width, key);
	ob_str(o, a);
	OB_LIT(o, " (");
	ob_str(o, b);
	OB_LIT(o, ")\n");
}

/* "KEY:<pad>N[suffix]\n" */
static void hdr_n(obuf *o, int width, const char *key, long long v, const char *suffix)
{
	hdr_key(o, width, key);
	ob_sdec(o, v);
	ob_str(o, suffix);
	ob_c(o, '\n');
}

/* "%Ns: 0x%0Mx" */
static void reg_put(obuf *o, const char *name, size_t width, uint64_t v, int digits)
{
	ob_pad(o, name, strlen(name), width, 0);
	OB_LIT(o, ": 0x");
	o->n += fmt_xdig(ob_room(o, 24), v, digits);
}

static void thread_state(obuf *o, json_t *st, size_t tnum)
{
	const char *flavor = sget(st, "flavor");
	int arm = flavor && strstr(flavor, "ARM");
	OB_LIT(o, "Thread ");
	ob_dec(o, tnum);
	if (arm)
		OB_LIT(o, " crashed with ARM Thread State (64-bit):\n");
	else
		OB_LIT(o, " crashed with X86 Thread State (64-bit):\n");
	int col = 0;
#define PUT(name, val)                                                                                                 \
	do {                                                                                                           \
		reg_put(o, name, col ? 5 : 6, (uint64_t)(val), 16);                                                    \
		if (++col == 4) {                                                                                      \
			ob_c(o, '\n');                                                                                 \
			col = 0;                                                                                       \
		}                                                                                                      \
	} while (0)
	uint64_t v;
	if (arm) {
		json_t *x = json_object_get(st, "x");
		size_t n = json_array_size(x);
		for (size_t i = 0; i < n; i++) {
			char nm[24];
			nm[0] = 'x';
			nm[1 + fmt_dec(nm + 1, i)] = 0;
			if (reg_at(x, i, &v))
				PUT(nm, v);
		}
		if (reg(st, "fp", &v))
			PUT("fp", v);
		if (reg(st, "lr", &v))
			PUT("lr", v);
		if (col) {
			ob_c(o, '\n');
			col = 0;
		}
		if (reg(st, "sp", &v))
			PUT("sp", v);
		if (reg(st, "pc", &v))
			PUT("pc", v);
		if (reg(st, "cpsr", &v))
			reg_put(o, " cpsr", 0, v, 8), col++;
		if (col) {
			ob_c(o, '\n');
			col = 0;
		}
		if (reg(st, "far", &v))
			PUT("far", v);
		if (reg(st, "esr", &v)) {
			const char *d = sget(json_object_get(st, "esr"), "description");
			reg_put(o, "  esr", 0, v, 8);
			if (d) {
				ob_c(o, ' ');
				ob_str(o, d);
			}
			col++;
		}
		if (col)
			ob_c(o, '\n');
	} else {
		static const char *const x86[] = {"rax", "rbx", "rcx", "rdx", "rdi", "rsi", "rbp", "rsp",    "r8", "r9",
		                                  "r10", "r11", "r12", "r13", "r14", "r15", "rip", "rflags", "cr2"};
		for (size_t i = 0; i < sizeof x86 / sizeof x86[0]; i++)
			if (reg(st, x86[i], &v))
				PUT(x86[i], v);
		if (col)
			ob_c(o, '\n');
	}
#undef PUT
	ob_c(o, '\n');
}

/* s cut to max bytes (the fixed buffers the snprintfs this replaces wrote into) */
static void ob_cut(obuf *o, size_t from, size_t max)
{
	if (o->n - from > max)
		o->n = from + max;
}

/* s appended to t[0..n) up to max bytes; the new length */
static size_t cat_cut(char *t, size_t n, size_t max, const char *s)
{
	size_t l = strlen(s);
	if (l > max - n)
		l = max - n;
	memcpy(t + n, s, l);
	return n + l;
}

/* "KEY:<pad>NAME [PID]\n" (the "NAME [PID]" part cut at 255 bytes) */
static void proc_line(obuf *o, int width, const char *key, const char *name, long long pid)
{
	hdr_key(o, width, key);
	size_t at = o->n;
	ob_str(o, name ? name : "???");
	OB_LIT(o, " [");
	ob_sdec(o, pid);
	ob_c(o, ']');
	ob_cut(o, at, 255);
	ob_c(o, '\n');
}

static int write_ips_text(obuf *o, const tk_apple_report *r)
{
	json_t *h = r->json_header, *b = r->json_body;
	const char *os = sget(h, "os_version");
	int ios = os && (strstr(os, "iPhone OS") || strstr(os, "iOS") || strstr(os, "iPadOS") ||
	                 strstr(os, "watchOS") || strstr(os, "tvOS"));
	long long pid = -1, ppid = -1, v;
	iget(b, "pid", &pid);
	iget(b, "parentPid", &ppid);
	const char *proc = sget(b, "procName");
	json_t *bi = json_object_get(b, "bundleInfo");
	const char *ver = sget(bi, "CFBundleShortVersionString"), *build = sget(bi, "CFBundleVersion");
	const char *ident = sget(bi, "CFBundleIdentifier");
	const char *ct = sget(b, "cpuType");
	json_t *osv = json_object_get(b, "osVersion");
	const char *train = sget(osv, "train"), *osbuild = sget(osv, "build");
	size_t crashed = SIZE_MAX;
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].crashed) {
			crashed = i;
			break;
		}
	size_t *binl = tk_xmalloc((r->nimages ? r->nimages : 1) * sizeof *binl);
	memset(binl, 0xff, (r->nimages ? r->nimages : 1) * sizeof *binl);
	int w = ios ? 21 : 23;
	/* "Version:": "VER (BUILD)", or VER, or "???", cut at 255 bytes */
#define VERSION_LINE()                                                                                                 \
	do {                                                                                                           \
		hdr_key(o, w, "Version");                                                                              \
		size_t at_ = o->n;                                                                                     \
		ob_str(o, ver ? ver : "???");                                                                          \
		if (ver && build) {                                                                                    \
			OB_LIT(o, " (");                                                                               \
			ob_str(o, build);                                                                              \
			ob_c(o, ')');                                                                                  \
		}                                                                                                      \
		ob_cut(o, at_, 255);                                                                                   \
		ob_c(o, '\n');                                                                                         \
	} while (0)
	const char *translated = json_is_true(json_object_get(b, "translated")) ? "Translated" : "Native";
	if (ios) {
		hdr_s(o, w, "Incident Identifier",
		      tk_apple_report_attr(r, "incident") ? tk_apple_report_attr(r, "incident") : "");
		if (sget(b, "crashReporterKey"))
			hdr_s(o, w, "CrashReporter Key", sget(b, "crashReporterKey"));
		if (sget(b, "modelCode"))
			hdr_s(o, w, "Hardware Model", sget(b, "modelCode"));
		proc_line(o, w, "Process", proc, pid);
		hdr_s(o, w, "Path", sget(b, "procPath") ? sget(b, "procPath") : "");
		hdr_s(o, w, "Identifier", ident ? ident : proc ? proc : "");
		VERSION_LINE();
		hdr_s2(o, w, "Code Type", ct ? ct : "???", translated);
		if (sget(b, "procRole"))
			hdr_s(o, w, "Role", sget(b, "procRole"));
		proc_line(o, w, "Parent Process", sget(b, "parentProc"), ppid);
		if (sget(b, "coalitionName") && iget(b, "coalitionID", &v))
			proc_line(o, w, "Coalition", sget(b, "coalitionName"), v);
		ob_c(o, '\n');
		if (sget(b, "captureTime"))
			hdr_s(o, w, "Date/Time", sget(b, "captureTime"));
		if (sget(b, "procLaunch"))
			hdr_s(o, w, "Launch Time", sget(b, "procLaunch"));
		hdr_s2(o, w, "OS Version", train ? train : "", osbuild ? osbuild : "");
		if (sget(osv, "releaseType"))
			hdr_s(o, w, "Release Type", sget(osv, "releaseType"));
		hdr_s(o, w, "Report Version", "104");
		ob_c(o, '\n');
	} else {
		proc_line(o, w, "Process", proc, pid);
		hdr_s(o, w, "Path", sget(b, "procPath") ? sget(b, "procPath") : "");
		hdr_s(o, w, "Identifier", ident ? ident : proc ? proc : "");
		VERSION_LINE();
		hdr_s2(o, w, "Code Type", ct ? ct : "???", translated);
		proc_line(o, w, "Parent Process", sget(b, "parentProc"), ppid);
		if (sget(b, "responsibleProc") && iget(b, "responsiblePid", &v))
			proc_line(o, w, "Responsible", sget(b, "responsibleProc"), v);
		if (iget(b, "userID", &v))
			hdr_n(o, w, "User ID", v, "");
		ob_c(o, '\n');
		if (sget(b, "captureTime"))
			hdr_s(o, w, "Date/Time", sget(b, "captureTime"));
		hdr_s2(o, w, "OS Version", train ? train : "", osbuild ? osbuild : "");
		hdr_s(o, w, "Report Version", "12");
		if (sget(b, "crashReporterKey"))
			hdr_s(o, w, "Anonymous UUID", sget(b, "crashReporterKey"));
		ob_c(o, '\n');
		if (sget(b, "sleepWakeUUID")) {
			hdr_s(o, w, "Sleep/Wake UUID", sget(b, "sleepWakeUUID"));
			ob_c(o, '\n');
		}
		if (iget(b, "uptime", &v)) {
			hdr_n(o, w, "Time Awake Since Boot", v, " seconds");
			if (iget(b, "wakeTime", &v))
				hdr_n(o, w, "Time Since Wake", v, " seconds");
			ob_c(o, '\n');
		}
		if (sget(b, "sip")) {
			OB_LIT(o, "System Integrity Protection: ");
			ob_str(o, sget(b, "sip"));
			OB_LIT(o, "\n\n");
		}
		if (crashed != SIZE_MAX) {
			hdr_n(o, w, "Crashed Thread", (long long)crashed, "");
			ob_c(o, '\n');
		}
	}
#undef VERSION_LINE
	json_t *ex = json_object_get(b, "exception");
	const char *ek = ios ? "Exception Type:  " : "Exception Type:        ";
	const char *ck = ios ? "Exception Codes: " : "Exception Codes:       ";
	if (json_is_object(ex)) {
		ob_str(o, ek);
		ob_str(o, sget(ex, "type") ? sget(ex, "type") : "");
		if (sget(ex, "signal")) {
			OB_LIT(o, " (");
			ob_str(o, sget(ex, "signal"));
			ob_c(o, ')');
		}
		ob_c(o, '\n');
		if (sget(ex, "subtype")) {
			ob_str(o, ck);
			ob_str(o, sget(ex, "subtype"));
			ob_c(o, '\n');
		}
		if (sget(ex, "codes")) {
			ob_str(o, ck);
			ob_str(o, sget(ex, "codes"));
			ob_c(o, '\n');
		}
		if (ios && crashed != SIZE_MAX) {
			OB_LIT(o, "Triggered by Thread:  ");
			ob_dec(o, crashed);
			ob_c(o, '\n');
		}
		ob_c(o, '\n');
	}
	json_t *tm = json_object_get(b, "termination");
	if (json_is_object(tm) && tk_apple_report_attr(r, "termination.reason")) {
		if (ios) {
			OB_LIT(o, "Termination Reason: ");
			ob_str(o, tk_apple_report_attr(r, "termination.reason"));
			ob_c(o, '\n');
		} else
			hdr_s(o, w, "Termination Reason", tk_apple_report_attr(r, "termination.reason"));
		if (!ios && sget(tm, "byProc") && iget(tm, "byPid", &v))
			proc_line(o, w, "Terminating Process", sget(tm, "byProc"), v);
		ob_c(o, '\n');
	}
	if (sget(b, "vmRegionInfo")) {
		OB_LIT(o, "VM Region Info: ");
		ob_str(o, sget(b, "vmRegionInfo"));
		OB_LIT(o, "\n\n");
	}
	if (r->leb) {
		OB_LIT(o, "Last Exception Backtrace:\n");
		stack_lines(o, r, r->leb, binl);
		ob_c(o, '\n');
	}
	for (size_t i = 0; i < r->nthreads; i++) {
		const tk_apple_report_thread *t = &r->threads[i];
		/* the title, cut at 511 bytes as the snprintf into 512 it replaces */
		char title[512];
		size_t tn = 0;
		if (t->name)
			tn = cat_cut(title, tn, sizeof title - 1, t->name);
		if (t->name && t->queue)
			tn = cat_cut(title, tn, sizeof title - 1, "  Dispatch queue: ");
		else if (t->queue)
			tn = cat_cut(title, tn, sizeof title - 1, "Dispatch queue: ");
		if (t->queue)
			tn = cat_cut(title, tn, sizeof title - 1, t->queue);
		if (ios && tn) {
			OB_LIT(o, "Thread ");
			ob_dec(o, i);
			OB_LIT(o, " name:   ");
			ob_put(o, title, tn);
			ob_c(o, '\n');
		}
		OB_LIT(o, "Thread ");
		ob_dec(o, i);
		if (t->crashed)
			OB_LIT(o, " Crashed");
		if (!ios && tn) {
			OB_LIT(o, "::  ");
			ob_put(o, title, tn);
			ob_c(o, '\n');
		} else
			OB_LIT(o, ":\n");
		stack_lines(o, r, t, binl);
		ob_c(o, '\n');
	}
	if (crashed != SIZE_MAX) {
		json_t *jt = json_array_get(json_object_get(b, "threads"), r->threads[crashed].json_index);
		json_t *st = json_object_get(jt, "threadState");
		if (json_is_object(st)) {
			ob_c(o, '\n');
			thread_state(o, st, crashed);
		}
	}
	OB_LIT(o, "Binary Images:\n");
	for (size_t i = 0; i < r->nimages; i++) {
		const tk_apple_report_image *im = &r->images[i];
		char lo[24], hi[24], uuid[40];
		size_t lon = fmt_hex(lo, im->base), hin = fmt_hex(hi, im->base + im->size - 1);
		const char *u = im->uuid ? im->uuid : "00000000-0000-0000-0000-000000000000";
		size_t un = strlen(u);
		if (un > sizeof uuid - 1)
			un = sizeof uuid - 1;
		for (size_t c = 0; c < un; c++)
			uuid[c] = u[c] >= 'A' && u[c] <= 'F' ? (char)(u[c] + 32) : u[c];
		ob_pad(o, lo, lon, 18, 0);
		OB_LIT(o, " - ");
		ob_pad(o, hi, hin, 18, 0);
		ob_c(o, ' ');
		ob_str(o, im->name ? im->name : "???");
		if (ios) {
			ob_c(o, ' ');
			ob_str(o, im->arch ? im->arch : "");
			OB_LIT(o, "  <");
			for (size_t c = 0; c < un; c++)
				if (uuid[c] != '-')
					ob_c(o, uuid[c]);
		} else {
			OB_LIT(o, " (*) <");
			ob_put(o, uuid, un);
		}
		OB_LIT(o, "> ");
		ob_str(o, im->path ? im->path : "???");
		ob_c(o, '\n');
	}
	ob_c(o, '\n');
	json_t *em = json_object_get(b, "extMods");
	if (json_is_object(em)) {
		static const char *const who[][2] = {
		    {"targeted", "Calls made by other processes targeting this process:"},
		    {"caller", "Calls made by this process:"},
		    {"system", "Calls made by all processes on this machine:"}};
		OB_LIT(o, "External Modification Summary:\n");
		for (size_t i = 0; i < 3; i++) {
			json_t *g = json_object_get(em, who[i][0]);
			OB_LIT(o, "  ");
			ob_str(o, who[i][1]);
			ob_c(o, '\n');
			static const char *const k[] = {"task_for_pid", "thread_create", "thread_set_state"};
			for (size_t j = 0; j < 3; j++)
				if (iget(g, k[j], &v)) {
					OB_LIT(o, "    ");
					ob_str(o, k[j]);
					OB_LIT(o, ": ");
					ob_sdec(o, v);
					ob_c(o, '\n');
				}
		}
		ob_c(o, '\n');
	}
	if (sget(b, "vmSummary")) {
		OB_LIT(o, "VM Region Summary:\n");
		ob_str(o, sget(b, "vmSummary"));
		OB_LIT(o, "\n\n");
	}
	free(binl);
	return 0;
}

int tk_apple_report_text_append(const tk_apple_report *r, char **buf, size_t *len, size_t *cap, tk_error *err)
{
	if (r->format != TK_APPLE_IPS && r->format != TK_APPLE_CRASH)
		return tk_error_set(err, "%s: only .ips and .crash reports are appended as text", r->name);
	obuf o = {*buf, *len, *cap};
	int rc = r->format == TK_APPLE_IPS ? write_ips_text(&o, r) : write_crash_text(&o, r);
	*buf = o.b, *len = o.n, *cap = o.cap;
	return rc < 0 ? tk_error_set(err, "out of memory") : 0;
}

int tk_apple_report_write_text(FILE *out, const tk_apple_report *r, tk_error *err)
{
	if (r->format != TK_APPLE_IPS && r->format != TK_APPLE_CRASH) {
		int rc = tk_apple_report_write_spindump(out, r, err);
		if (rc == 0 && (fflush(out) != 0 || ferror(out)))
			return tk_error_set(err, "write error");
		return rc < 0 ? tk_error_set(err, "out of memory") : 0;
	}
	obuf o = {0};
	int rc = r->format == TK_APPLE_IPS ? write_ips_text(&o, r) : write_crash_text(&o, r);
	if (rc < 0) {
		free(o.b);
		return tk_error_set(err, "out of memory");
	}
	if (ob_write(&o, out) < 0 || fflush(out) != 0 || ferror(out))
		return tk_error_set(err, "write error");
	return 0;
}
