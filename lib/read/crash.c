/*
 * Text crash reports: the legacy `.crash` (iOS ≤ 14, PLCrashReporter, KSCrash) and the text form
 * macOS and Xcode write from an `.ips` ("translated" reports), optionally after an ips header line:
 *
 *   Incident Identifier: …            header "Key: value" lines
 *   Exception Type:  EXC_CRASH (SIGABRT)
 *   Thread 0 name:  Dispatch queue: com.apple.main-thread      (macOS: "Thread 0::  Dispatch queue: …")
 *   Thread 0 Crashed:
 *   0   libsystem_kernel.dylib        	0x00000001c1a2a1a4 0x1c1a25000 + 20900     unsymbolicated
 *   1   MyApp                         	       0x100ec5b3c main + 160 (main.m:31)  named
 *   Thread 0 crashed with ARM Thread State (64-bit):   …
 *   Binary Images:
 *          0x100ec4000 -        0x100ec7fff MyApp arm64  <ab9b94f96cdf3b8eb140fae3cb13d327> /path/MyApp
 *
 * Every line is kept (tk_apple_report.lines) so the writer can give the report back with only the frame
 * lines changed. Frames find their image by address range, else by name.
 */
#include <stdlib.h>
#include <string.h>

#include "read/apple_report_int.h"
#include "util/mem.h"

static int is_arch(const char *s, size_t n)
{
	static const char *const a[] = {"arm64",  "arm64e",   "x86_64", "x86_64h", "armv7",  "armv7s",
	                                "armv7k", "arm64_32", "i386",   "armv6",   "arm64v8"};
	for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
		if (strlen(a[i]) == n && !memcmp(a[i], s, n))
			return 1;
	return 0;
}

/* "       0x19cc3e000 -        0x19cc76feb libsystem_kernel.dylib (*) <b889…> /usr/lib/…" */
static int image_line(tk_apple_report *r, const char *s, size_t n)
{
	tk_apple_image_text t;
	if (!tk_apple_report_image_text(s, n, &t))
		return 0;
	const char *nm = t.name;
	size_t nl = t.name_len, sp = nl;
	tk_apple_report_image *im = tk_apple_report_add_image(r);
	im->base = t.lo;
	im->size = t.hi > t.lo ? t.hi - t.lo + 1 : 0;
	while (sp && nm[sp - 1] != ' ')
		sp--;
	if (sp && is_arch(nm + sp, nl - sp)) { /* crash reports name the arch after the version */
		im->arch = tk_xstrndup(nm + sp, nl - sp);
		nl = tk_apple_report_trim(nm, sp);
	}
	im->name = tk_xstrndup(nm, nl);
	im->uuid = tk_apple_report_uuid(t.uuid, t.uuid_len);
	if (t.path_len)
		im->path = tk_xstrndup(t.path, t.path_len);
	return 1;
}

/* "N   Binary<pad>\t0xADDR rest": 1 and the frame filled, 0 if the line is not a frame. */
static int frame_line(tk_apple_report_thread *t, const char *s, size_t n, size_t line_no)
{
	size_t i = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	if (!i || i >= n || (s[i] != ' ' && s[i] != '\t'))
		return 0;
	/* the address: the first " 0x" / "\t0x" token after the binary name */
	size_t a = i;
	for (; a + 2 < n; a++)
		if ((s[a] == ' ' || s[a] == '\t') && s[a + 1] == '0' && s[a + 2] == 'x')
			break;
	if (a + 2 >= n)
		return 0;
	uint64_t addr;
	size_t used;
	if (tk_apple_report_hex(s + a + 1, n - a - 1, &addr, &used) < 0)
		return 0;
	tk_apple_report_frame *f = tk_apple_report_add_frame(t);
	f->addr = addr;
	f->line_no = line_no;
	const char *rest = s + a + 1 + used;
	size_t rl = (size_t)(s + n - rest);
	while (rl && *rest == ' ')
		rest++, rl--;
	rl = tk_apple_report_trim(rest, rl);
	f->sym_at = (size_t)(rest - s);
	f->sym_end = f->sym_at + rl;
	if (tk_apple_report_starts(rest, rl, "0x")) /* "0xBASE + OFF": unsymbolicated */
		return 1;
	/* "symbol + N (file:line)", "symbol (in Bin) (file:line)", "symbol + N" */
	size_t end = rl;
	if (end && rest[end - 1] == ')') {
		size_t k = end - 1;
		while (k && rest[k] != '(')
			k--;
		const char *colon = memchr(rest + k, ':', end - k);
		if (k && colon && rest[k - 1] == ' ' && !tk_apple_report_starts(rest + k, end - k, "(in ")) {
			f->file = tk_xstrndup(rest + k + 1, (size_t)(colon - rest - k - 1));
			f->line = (uint32_t)strtoul(colon + 1, NULL, 10);
			end = tk_apple_report_trim(rest, k - 1);
		}
	}
	const char *in = NULL;
	for (size_t k = 0; k + 5 <= end; k++)
		if (!memcmp(rest + k, " (in ", 5))
			in = rest + k;
	if (in && rest[end - 1] == ')') {
		f->symbol = tk_xstrndup(rest, (size_t)(in - rest));
		return 1;
	}
	const char *plus = NULL;
	for (size_t k = 0; k + 3 <= end; k++)
		if (!memcmp(rest + k, " + ", 3))
			plus = rest + k;
	if (plus) {
		char *e;
		unsigned long long off = strtoull(plus + 3, &e, 10);
		if (e == rest + end) {
			f->symoff = off;
			f->has_symoff = 1;
			end = (size_t)(plus - rest);
		}
	}
	f->symbol = tk_xstrndup(rest, end);
	return 1;
}

static void header_field(tk_apple_report *r, const char *s, size_t n)
{
	size_t vl;
	const char *v;
	if ((v = tk_apple_report_field(s, n, "Incident Identifier", &vl)))
		tk_apple_report_set_attr(r, "incident", v, vl);
	else if ((v = tk_apple_report_field(s, n, "Hardware Model", &vl)))
		tk_apple_report_set_attr(r, "device", v, vl);
	else if ((v = tk_apple_report_field(s, n, "Process", &vl))) {
		const char *br = NULL;
		for (size_t k = 0; k + 1 < vl; k++)
			if (v[k] == ' ' && v[k + 1] == '[')
				br = v + k;
		tk_apple_report_set_attr(r, "process", v, br ? (size_t)(br - v) : vl);
		if (br)
			tk_apple_report_set_attr(r, "pid", br + 2, strspn(br + 2, "0123456789"));
		if (!tk_apple_report_attr(r, "app"))
			tk_apple_report_set_attr(r, "app", v, br ? (size_t)(br - v) : vl);
	} else if ((v = tk_apple_report_field(s, n, "Identifier", &vl))) {
		if (!tk_apple_report_attr(r, "bundle"))
			tk_apple_report_set_attr(r, "bundle", v, vl);
	} else if ((v = tk_apple_report_field(s, n, "Version", &vl))) {
		/* "1.4.2 (142)": short version, then the build */
		const char *p = memchr(v, '(', vl);
		if (p && v[vl - 1] == ')') {
			if (!tk_apple_report_attr(r, "app.version"))
				tk_apple_report_set_attr(r, "app.version", v, (size_t)(p - v));
			if (!tk_apple_report_attr(r, "app.build"))
				tk_apple_report_set_attr(r, "app.build", p + 1, (size_t)(v + vl - 1 - p - 1));
		}
	} else if ((v = tk_apple_report_field(s, n, "Code Type", &vl))) {
		const char *a = tk_apple_report_arch_name(v, vl);
		if (a)
			tk_apple_report_set_attr(r, "arch", a, strlen(a));
	} else if ((v = tk_apple_report_field(s, n, "OS Version", &vl))) {
		if (!tk_apple_report_attr(r, "os"))
			tk_apple_report_set_attr(r, "os", v, vl);
	} else if ((v = tk_apple_report_field(s, n, "Exception Type", &vl))) {
		const char *p = memchr(v, '(', vl);
		tk_apple_report_set_attr(r, "exception.type", v, p ? tk_apple_report_trim(v, (size_t)(p - v)) : vl);
		if (p && v[vl - 1] == ')')
			tk_apple_report_set_attr(r, "signal", p + 1, (size_t)(v + vl - 1 - p - 1));
	} else if ((v = tk_apple_report_field(s, n, "Exception Codes", &vl))) {
		if (tk_apple_report_starts(v, vl, "0x"))
			tk_apple_report_set_attr(r, "exception.code", v, vl);
	} else if ((v = tk_apple_report_field(s, n, "Termination Reason", &vl)))
		tk_apple_report_set_attr(r, "termination.reason", v, vl);
	else if ((v = tk_apple_report_field(s, n, "Date/Time", &vl))) {
		double w = tk_apple_report_parse_time(v, vl);
		if (w == w && r->wall != r->wall)
			r->wall = w;
	}
}

int tk_apple_report_parse_crash(tk_apple_report *r, const char *buf, size_t n, size_t body, tk_error *err)
{
	tk_apple_report_split_lines(r, buf, n);
	r->kind = TK_EVENT_CRASH;
	r->event_name = tk_xstrdup("crash");
	size_t first = 0; /* the first line of the body */
	for (size_t k = 0; k < body && k < n; k++)
		first += buf[k] == '\n';
	enum { HEADER, THREAD, STATE, IMAGES, OTHER } where = HEADER;
	tk_apple_report_thread *t = NULL;
	long crashed = -1;
	/* thread names come before the thread's frames ("Thread 3 name:" then "Thread 3:") */
	char *pending_name = NULL;
	long pending_for = -1;
	for (size_t ln = first; ln < r->nlines; ln++) {
		const char *s = r->lines[ln];
		size_t sn = strlen(s);
		if (!sn) {
			if (where == THREAD)
				where = OTHER;
			continue;
		}
		if (tk_apple_report_starts(s, sn, "Binary Images:")) {
			where = IMAGES;
			continue;
		}
		if (where == IMAGES) {
			if (image_line(r, s, sn))
				continue;
			where = OTHER;
		}
		size_t vl;
		const char *v;
		if ((v = tk_apple_report_field(s, sn, "Triggered by Thread", &vl)) ||
		    (v = tk_apple_report_field(s, sn, "Crashed Thread", &vl))) {
			crashed = strtol(v, NULL, 10);
			continue;
		}
		if (tk_apple_report_starts(s, sn, "Thread ") && s[7] >= '0' && s[7] <= '9') {
			char *e;
			long num = strtol(s + 7, &e, 10);
			const char *rest = e;
			if (tk_apple_report_starts(rest, strlen(rest), " name:") ||
			    tk_apple_report_starts(rest, strlen(rest), "::") ||
			    tk_apple_report_starts(rest, strlen(rest), " Crashed::")) {
				/* "Thread 0 name:  Dispatch queue: x" / macOS "Thread 0::  Dispatch queue: x" */
				const char *nm = strchr(rest, ':');
				nm = nm[1] == ':' ? nm + 2 : nm + 1;
				while (*nm == ' ')
					nm++;
				free(pending_name);
				pending_name = *nm ? tk_xstrdup(nm) : NULL;
				pending_for = num;
				if (tk_apple_report_starts(rest, strlen(rest), " name:"))
					continue;
			} else if (!(!strcmp(rest, ":") || !strcmp(rest, " Crashed:"))) {
				if (strstr(rest, "Thread State") || strstr(rest, "thread state"))
					where = STATE;
				continue;
			}
			t = tk_apple_report_add_thread(r);
			t->id = (uint64_t)num;
			t->crashed = strstr(rest, "Crashed") != NULL || num == crashed;
			if (pending_name && pending_for == num) {
				const char *q = pending_name;
				if (tk_apple_report_starts(q, strlen(q), "Dispatch queue:")) {
					q += 15;
					while (*q == ' ')
						q++;
					t->queue = tk_xstrdup(q);
				} else
					t->name = tk_xstrdup(q);
			}
			free(pending_name);
			pending_name = NULL;
			where = THREAD;
			continue;
		}
		if (tk_apple_report_starts(s, sn, "Last Exception Backtrace:")) {
			t = NULL;
			where = OTHER;
			continue;
		}
		if (where == THREAD && t) {
			if (!frame_line(t, s, sn, ln))
				where = OTHER;
			continue;
		}
		if (where == HEADER)
			header_field(r, s, sn);
	}
	free(pending_name);
	if (crashed >= 0)
		for (size_t i = 0; i < r->nthreads; i++)
			if (r->threads[i].id == (uint64_t)crashed)
				r->threads[i].crashed = 1;
	if (!r->nthreads)
		return tk_error_set(
		    err, "%s: no \"Thread N:\" section with frames: not a crash report tracekit can read", r->name);
	/* frames → images: by address range */
	for (size_t i = 0; i < r->nthreads; i++)
		for (size_t k = 0; k < r->threads[i].nframes; k++) {
			tk_apple_report_frame *f = &r->threads[i].frames[k];
			for (size_t m = 0; m < r->nimages; m++) {
				const tk_apple_report_image *im = &r->images[m];
				if (f->addr >= im->base &&
				    (im->size ? f->addr - im->base < im->size : f->addr == im->base)) {
					f->image = (uint32_t)m + 1;
					break;
				}
			}
		}
	if (!tk_apple_report_attr(r, "arch"))
		for (size_t m = 0; m < r->nimages; m++)
			if (r->images[m].arch) {
				tk_apple_report_set_attr(r, "arch", r->images[m].arch, strlen(r->images[m].arch));
				break;
			}
	for (size_t m = 0; m < r->nimages; m++)
		if (!r->images[m].arch && tk_apple_report_attr(r, "arch"))
			r->images[m].arch = tk_xstrdup(tk_apple_report_attr(r, "arch"));
	return 0;
}

static int sniff(const unsigned char *h, size_t n)
{
	return tk_apple_report_sniff(h, n) == TK_APPLE_CRASH;
}

static int read_crash(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	(void)o;
	return tk_apple_report_read_profile(p, in, err);
}

const tk_reader tk_reader_crash = {"crash", sniff, read_crash};
