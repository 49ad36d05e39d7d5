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
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/apple_report.h"

static const tk_apple_report_image *image_of(const tk_apple_report *r, const tk_apple_report_frame *f)
{
	return f->image ? &r->images[f->image - 1] : NULL;
}

/* A frame's line is assembled here and written with one fwrite: a report is mostly frame lines, and
 * a printf per field was the writer's main cost (bench/bench_reports.sh). Longer lines are written
 * in pieces, with the same bytes. */
typedef struct line_buf {
	FILE *o;
	size_t n;
	char b[8192];
} line_buf;

static void lb_flush(line_buf *l)
{
	if (l->n)
		fwrite(l->b, 1, l->n, l->o);
	l->n = 0;
}

static inline void lb_put(line_buf *l, const char *s, size_t n)
{
	if (__builtin_expect(l->n + n > sizeof l->b, 0)) {
		lb_flush(l);
		if (n > sizeof l->b) {
			fwrite(s, 1, n, l->o);
			return;
		}
	}
	memcpy(l->b + l->n, s, n);
	l->n += n;
}

/* printf's %s: a NULL string prints as glibc prints it */
static void lb_str(line_buf *l, const char *s)
{
	if (!s)
		s = "(null)";
	lb_put(l, s, strlen(s));
}

/* s padded with spaces to width: on the right (%-Ns) or on the left (%Ns) */
static void lb_pad(line_buf *l, const char *s, size_t n, size_t width, int left)
{
	size_t pad = n < width ? width - n : 0;
	if (l->n + n + pad > sizeof l->b) {
		lb_flush(l);
		if (n + pad > sizeof l->b) { /* a name longer than the buffer: the width is long passed */
			lb_put(l, s, n);
			return;
		}
	}
	char *w = l->b + l->n;
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
	l->n = (size_t)(w - l->b);
}

static size_t fmt_dec(char *b, uint64_t v)
{
	char t[24];
	size_t k = 0;
	do
		t[k++] = (char)('0' + v % 10);
	while ((v /= 10));
	for (size_t i = 0; i < k; i++)
		b[i] = t[k - 1 - i];
	return k;
}

/* "0x" and lower-case hex, as %#" PRIx64 " prints a non-zero value and "0x%" PRIx64 " any */
static size_t fmt_hex(char *b, uint64_t v)
{
	char t[24];
	size_t k = 0;
	do
		t[k++] = "0123456789abcdef"[v & 15];
	while ((v >>= 4));
	b[0] = '0', b[1] = 'x';
	for (size_t i = 0; i < k; i++)
		b[2 + i] = t[k - 1 - i];
	return k + 2;
}

static void lb_dec(line_buf *l, uint64_t v)
{
	char b[24];
	lb_put(l, b, fmt_dec(b, v));
}

static void lb_hex(line_buf *l, uint64_t v)
{
	char b[24];
	lb_put(l, b, fmt_hex(b, v));
}

/* " (FILE:LINE)" */
static void lb_file_line(line_buf *l, const char *file, uint32_t line)
{
	lb_put(l, " (", 2);
	lb_str(l, file);
	lb_put(l, ":", 1);
	lb_dec(l, line);
	lb_put(l, ")", 1);
}

/* What names the frame, after the address. */
static void frame_rest(line_buf *o, const tk_apple_report *r, const tk_apple_report_frame *f, size_t q)
{
	const tk_apple_report_image *im = image_of(r, f);
	const char *bin = im && im->name ? im->name : "???";
	if (f->nsym) {
		const tk_apple_report_sym *s = &f->sym[q];
		lb_str(o, s->function);
		lb_put(o, " (in ", 5);
		lb_str(o, bin);
		lb_put(o, ")", 1);
		if (f->sym_symtab && q + 1 == f->nsym) {
			lb_put(o, " + ", 3);
			lb_dec(o, f->sym_off);
		} else if (s->file)
			lb_file_line(o, s->file, s->line);
		return;
	}
	if (f->symbol) {
		lb_str(o, f->symbol);
		if (f->has_symoff) {
			lb_put(o, " + ", 3);
			lb_dec(o, f->symoff);
		}
		if (f->file) {
			const char *b = strrchr(f->file, '/');
			lb_file_line(o, b ? b + 1 : f->file, f->line);
		}
		return;
	}
	if (im) {
		lb_hex(o, im->base);
		lb_put(o, " + ", 3);
		lb_dec(o, f->addr - im->base);
	} else
		lb_hex(o, f->addr);
}

static void frame_lines(line_buf *lp, const tk_apple_report *r, const tk_apple_report_frame *f, size_t idx)
{
	const tk_apple_report_image *im = image_of(r, f);
	char addr[24], num[24];
	size_t an = fmt_hex(addr, f->addr), nn = fmt_dec(num, idx);
	const char *bin = im && im->name ? im->name : "???";
	size_t bn = strlen(bin);
	size_t n = f->nsym ? f->nsym : 1;
	for (size_t q = 0; q < n; q++) {
		/* "%-4zu%-30s\t%18s " */
		lb_pad(lp, num, nn, 4, 1);
		lb_pad(lp, bin, bn, 30, 1);
		lb_put(lp, "\t", 1);
		lb_pad(lp, addr, an, 18, 0);
		lb_put(lp, " ", 1);
		frame_rest(lp, r, f, q);
		lb_put(lp, "\n", 1);
	}
}

/* A stack's frame lines through one buffer (an fwrite per frame was a sixth of the writer). */
static void stack_lines(FILE *o, const tk_apple_report *r, const tk_apple_report_thread *t)
{
	line_buf l;
	l.o = o, l.n = 0;
	for (size_t k = 0; k < t->nframes; k++)
		frame_lines(&l, r, &t->frames[k], k);
	lb_flush(&l);
}

/* ---- a .crash text: every line as it was, frames renamed ---- */

static int write_crash_text(FILE *o, const tk_apple_report *r)
{
	/* frames by line */
	const tk_apple_report_frame **at = calloc(r->nlines ? r->nlines : 1, sizeof *at);
	if (!at)
		return -1;
	for (size_t i = 0; i < r->nthreads; i++)
		for (size_t k = 0; k < r->threads[i].nframes; k++) {
			const tk_apple_report_frame *f = &r->threads[i].frames[k];
			if (f->line_no < r->nlines)
				at[f->line_no] = f;
		}
	if (r->json_header) {
		char *h = json_dumps(r->json_header, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (h)
			fprintf(o, "%s\n", h);
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
			fputs(s, o);
			fputc('\n', o);
			continue;
		}
		line_buf l;
		l.o = o, l.n = 0;
		for (size_t q = 0; q < f->nsym; q++) {
			lb_put(&l, s, f->sym_at);
			frame_rest(&l, r, f, q);
			lb_put(&l, "\n", 1);
		}
		lb_flush(&l);
	}
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
static int reg(json_t *state, const char *name, uint64_t *v)
{
	json_t *x = json_object_get(json_object_get(state, name), "value");
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
static int reg_at(json_t *arr, size_t i, uint64_t *v)
{
	json_t *x = json_object_get(json_array_get(arr, i), "value");
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

/* Header values start at column 21 in iOS reports, 23 in macOS ones. */
static int hdr_width = 23;
static void hdr(FILE *o, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void hdr(FILE *o, const char *key, const char *fmt, ...)
{
	char k[64];
	snprintf(k, sizeof k, "%s:", key);
	fprintf(o, "%-*s", hdr_width, k);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(o, fmt, ap);
	va_end(ap);
	fputc('\n', o);
}

static void thread_state(FILE *o, json_t *st, size_t tnum)
{
	const char *flavor = sget(st, "flavor");
	int arm = flavor && strstr(flavor, "ARM");
	fprintf(o, "Thread %zu crashed with %s Thread State (64-bit):\n", tnum, arm ? "ARM" : "X86");
	int col = 0;
#define PUT(name, val)                                                                                                 \
	do {                                                                                                           \
		fprintf(o, col ? "%5s: 0x%016" PRIx64 : "%6s: 0x%016" PRIx64, name, (uint64_t)(val));                  \
		if (++col == 4) {                                                                                      \
			fputc('\n', o);                                                                                \
			col = 0;                                                                                       \
		}                                                                                                      \
	} while (0)
	uint64_t v;
	if (arm) {
		json_t *x = json_object_get(st, "x");
		size_t n = json_array_size(x);
		for (size_t i = 0; i < n; i++) {
			char nm[24];
			snprintf(nm, sizeof nm, "x%zu", i);
			if (reg_at(x, i, &v))
				PUT(nm, v);
		}
		if (reg(st, "fp", &v))
			PUT("fp", v);
		if (reg(st, "lr", &v))
			PUT("lr", v);
		if (col) {
			fputc('\n', o);
			col = 0;
		}
		if (reg(st, "sp", &v))
			PUT("sp", v);
		if (reg(st, "pc", &v))
			PUT("pc", v);
		if (reg(st, "cpsr", &v))
			fprintf(o, " cpsr: 0x%08" PRIx64, v), col++;
		if (col) {
			fputc('\n', o);
			col = 0;
		}
		if (reg(st, "far", &v))
			PUT("far", v);
		if (reg(st, "esr", &v)) {
			const char *d = sget(json_object_get(st, "esr"), "description");
			fprintf(o, "  esr: 0x%08" PRIx64 "%s%s", v, d ? " " : "", d ? d : "");
			col++;
		}
		if (col)
			fputc('\n', o);
	} else {
		static const char *const x86[] = {"rax", "rbx", "rcx", "rdx", "rdi", "rsi", "rbp", "rsp",    "r8", "r9",
		                                  "r10", "r11", "r12", "r13", "r14", "r15", "rip", "rflags", "cr2"};
		for (size_t i = 0; i < sizeof x86 / sizeof x86[0]; i++)
			if (reg(st, x86[i], &v))
				PUT(x86[i], v);
		if (col)
			fputc('\n', o);
	}
#undef PUT
	fputc('\n', o);
}

static void proc_line(FILE *o, const char *key, const char *name, long long pid)
{
	char b[256];
	snprintf(b, sizeof b, "%s [%lld]", name ? name : "???", pid);
	hdr(o, key, "%s", b);
}

static int write_ips_text(FILE *o, const tk_apple_report *r)
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
	char version[256];
	if (ver && build)
		snprintf(version, sizeof version, "%s (%s)", ver, build);
	else
		snprintf(version, sizeof version, "%s", ver ? ver : "???");
	const char *ct = sget(b, "cpuType");
	json_t *osv = json_object_get(b, "osVersion");
	const char *train = sget(osv, "train"), *osbuild = sget(osv, "build");
	size_t crashed = SIZE_MAX;
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].crashed) {
			crashed = i;
			break;
		}
	hdr_width = ios ? 21 : 23;
	if (ios) {
		hdr(o, "Incident Identifier", "%s",
		    tk_apple_report_attr(r, "incident") ? tk_apple_report_attr(r, "incident") : "");
		if (sget(b, "crashReporterKey"))
			hdr(o, "CrashReporter Key", "%s", sget(b, "crashReporterKey"));
		if (sget(b, "modelCode"))
			hdr(o, "Hardware Model", "%s", sget(b, "modelCode"));
		proc_line(o, "Process", proc, pid);
		hdr(o, "Path", "%s", sget(b, "procPath") ? sget(b, "procPath") : "");
		hdr(o, "Identifier", "%s", ident ? ident : proc ? proc : "");
		hdr(o, "Version", "%s", version);
		hdr(o, "Code Type", "%s (%s)", ct ? ct : "???",
		    json_is_true(json_object_get(b, "translated")) ? "Translated" : "Native");
		if (sget(b, "procRole"))
			hdr(o, "Role", "%s", sget(b, "procRole"));
		proc_line(o, "Parent Process", sget(b, "parentProc"), ppid);
		if (sget(b, "coalitionName") && iget(b, "coalitionID", &v))
			proc_line(o, "Coalition", sget(b, "coalitionName"), v);
		fputc('\n', o);
		if (sget(b, "captureTime"))
			hdr(o, "Date/Time", "%s", sget(b, "captureTime"));
		if (sget(b, "procLaunch"))
			hdr(o, "Launch Time", "%s", sget(b, "procLaunch"));
		hdr(o, "OS Version", "%s (%s)", train ? train : "", osbuild ? osbuild : "");
		if (sget(osv, "releaseType"))
			hdr(o, "Release Type", "%s", sget(osv, "releaseType"));
		hdr(o, "Report Version", "104");
		fputc('\n', o);
	} else {
		proc_line(o, "Process", proc, pid);
		hdr(o, "Path", "%s", sget(b, "procPath") ? sget(b, "procPath") : "");
		hdr(o, "Identifier", "%s", ident ? ident : proc ? proc : "");
		hdr(o, "Version", "%s", version);
		hdr(o, "Code Type", "%s (%s)", ct ? ct : "???",
		    json_is_true(json_object_get(b, "translated")) ? "Translated" : "Native");
		proc_line(o, "Parent Process", sget(b, "parentProc"), ppid);
		if (sget(b, "responsibleProc") && iget(b, "responsiblePid", &v))
			proc_line(o, "Responsible", sget(b, "responsibleProc"), v);
		if (iget(b, "userID", &v))
			hdr(o, "User ID", "%lld", v);
		fputc('\n', o);
		if (sget(b, "captureTime"))
			hdr(o, "Date/Time", "%s", sget(b, "captureTime"));
		hdr(o, "OS Version", "%s (%s)", train ? train : "", osbuild ? osbuild : "");
		hdr(o, "Report Version", "12");
		if (sget(b, "crashReporterKey"))
			hdr(o, "Anonymous UUID", "%s", sget(b, "crashReporterKey"));
		fputc('\n', o);
		if (sget(b, "sleepWakeUUID")) {
			hdr(o, "Sleep/Wake UUID", "%s", sget(b, "sleepWakeUUID"));
			fputc('\n', o);
		}
		if (iget(b, "uptime", &v)) {
			hdr(o, "Time Awake Since Boot", "%lld seconds", v);
			if (iget(b, "wakeTime", &v))
				hdr(o, "Time Since Wake", "%lld seconds", v);
			fputc('\n', o);
		}
		if (sget(b, "sip")) {
			fprintf(o, "System Integrity Protection: %s\n\n", sget(b, "sip"));
		}
		if (crashed != SIZE_MAX) {
			hdr(o, "Crashed Thread", "%zu", crashed);
			fputc('\n', o);
		}
	}
	json_t *ex = json_object_get(b, "exception");
	const char *ek = ios ? "Exception Type:  " : "Exception Type:        ";
	const char *ck = ios ? "Exception Codes: " : "Exception Codes:       ";
	if (json_is_object(ex)) {
		fprintf(o, "%s%s", ek, sget(ex, "type") ? sget(ex, "type") : "");
		if (sget(ex, "signal"))
			fprintf(o, " (%s)", sget(ex, "signal"));
		fputc('\n', o);
		if (sget(ex, "subtype"))
			fprintf(o, "%s%s\n", ck, sget(ex, "subtype"));
		if (sget(ex, "codes"))
			fprintf(o, "%s%s\n", ck, sget(ex, "codes"));
		if (ios && crashed != SIZE_MAX)
			fprintf(o, "Triggered by Thread:  %zu\n", crashed);
		fputc('\n', o);
	}
	json_t *tm = json_object_get(b, "termination");
	if (json_is_object(tm) && tk_apple_report_attr(r, "termination.reason")) {
		if (ios)
			fprintf(o, "Termination Reason: %s\n", tk_apple_report_attr(r, "termination.reason"));
		else
			hdr(o, "Termination Reason", "%s", tk_apple_report_attr(r, "termination.reason"));
		if (!ios && sget(tm, "byProc") && iget(tm, "byPid", &v))
			proc_line(o, "Terminating Process", sget(tm, "byProc"), v);
		fputc('\n', o);
	}
	if (sget(b, "vmRegionInfo"))
		fprintf(o, "VM Region Info: %s\n\n", sget(b, "vmRegionInfo"));
	if (r->leb) {
		fputs("Last Exception Backtrace:\n", o);
		stack_lines(o, r, r->leb);
		fputc('\n', o);
	}
	for (size_t i = 0; i < r->nthreads; i++) {
		const tk_apple_report_thread *t = &r->threads[i];
		char title[512] = "";
		if (t->name && t->queue)
			snprintf(title, sizeof title, "%s  Dispatch queue: %s", t->name, t->queue);
		else if (t->name)
			snprintf(title, sizeof title, "%s", t->name);
		else if (t->queue)
			snprintf(title, sizeof title, "Dispatch queue: %s", t->queue);
		if (ios) {
			if (*title)
				fprintf(o, "Thread %zu name:   %s\n", i, title);
			fprintf(o, "Thread %zu%s:\n", i, t->crashed ? " Crashed" : "");
		} else if (*title)
			fprintf(o, "Thread %zu%s::  %s\n", i, t->crashed ? " Crashed" : "", title);
		else
			fprintf(o, "Thread %zu%s:\n", i, t->crashed ? " Crashed" : "");
		stack_lines(o, r, t);
		fputc('\n', o);
	}
	if (crashed != SIZE_MAX) {
		json_t *jt = json_array_get(json_object_get(b, "threads"), r->threads[crashed].json_index);
		json_t *st = json_object_get(jt, "threadState");
		if (json_is_object(st)) {
			fputc('\n', o);
			thread_state(o, st, crashed);
		}
	}
	fputs("Binary Images:\n", o);
	for (size_t i = 0; i < r->nimages; i++) {
		const tk_apple_report_image *im = &r->images[i];
		char lo[24], hi[24], uuid[40];
		snprintf(lo, sizeof lo, "0x%" PRIx64, im->base);
		snprintf(hi, sizeof hi, "0x%" PRIx64, im->base + im->size - 1);
		snprintf(uuid, sizeof uuid, "%s", im->uuid ? im->uuid : "00000000-0000-0000-0000-000000000000");
		for (char *c = uuid; *c; c++)
			if (*c >= 'A' && *c <= 'F')
				*c = (char)(*c + 32);
		if (ios) {
			char nd[40];
			size_t k = 0;
			for (const char *c = uuid; *c && k < sizeof nd - 1; c++)
				if (*c != '-')
					nd[k++] = *c;
			nd[k] = 0;
			fprintf(o, "%18s - %18s %s %s  <%s> %s\n", lo, hi, im->name ? im->name : "???",
			        im->arch ? im->arch : "", nd, im->path ? im->path : "???");
		} else
			fprintf(o, "%18s - %18s %s (*) <%s> %s\n", lo, hi, im->name ? im->name : "???", uuid,
			        im->path ? im->path : "???");
	}
	fputc('\n', o);
	json_t *em = json_object_get(b, "extMods");
	if (json_is_object(em)) {
		static const char *const who[][2] = {
		    {"targeted", "Calls made by other processes targeting this process:"},
		    {"caller", "Calls made by this process:"},
		    {"system", "Calls made by all processes on this machine:"}};
		fputs("External Modification Summary:\n", o);
		for (size_t i = 0; i < 3; i++) {
			json_t *g = json_object_get(em, who[i][0]);
			fprintf(o, "  %s\n", who[i][1]);
			static const char *const k[] = {"task_for_pid", "thread_create", "thread_set_state"};
			for (size_t j = 0; j < 3; j++)
				if (iget(g, k[j], &v))
					fprintf(o, "    %s: %lld\n", k[j], v);
		}
		fputc('\n', o);
	}
	if (sget(b, "vmSummary"))
		fprintf(o, "VM Region Summary:\n%s\n\n", sget(b, "vmSummary"));
	return 0;
}

int tk_apple_report_write_text(FILE *out, const tk_apple_report *r, tk_error *err)
{
	int rc = r->format == TK_APPLE_IPS     ? write_ips_text(out, r)
	         : r->format == TK_APPLE_CRASH ? write_crash_text(out, r)
	                                       : tk_apple_report_write_spindump(out, r, err);
	if (rc == 0 && (fflush(out) != 0 || ferror(out)))
		return tk_error_set(err, "write error");
	return rc < 0 ? tk_error_set(err, "out of memory") : 0;
}
