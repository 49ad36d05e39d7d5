/*
 * spindump text: macOS hang reports (`.spin`, `.hang`), full spindumps, and the microstackshot
 * reports iOS and macOS write for resource limits (cpu usage, wakeups, disk writes: `.ips` whose body
 * is this text after the JSON header line).
 *
 *   Date/Time:        2023-05-24 13:29:15.759 -0700        report header ("Key: value")
 *   Command:          MyApp                                 the process the report is about
 *   Event:            hang | cpu usage | wakeups | disk writes
 *   Duration:         7.23s
 *   Heaviest stack for the target process:                  derived: skipped
 *   Process:          accessoryd [176]                      one section per process …
 *   Powerstats for:   aggregated [417]                      … (microstackshots: no thread rows)
 *     Thread 0x8b6    DispatchQueue "com.apple.main-thread"(1)    8 samples (1-8)    priority 31 (base 31)
 *     8  ??? (dyld + 99536) [0x102c504d0]                   COUNT frame; depth = indentation
 *       8  main + 20 (MyApp + 1234) [0x…]                   named frames: "symbol + off"
 *        *8  ??? [0xfffffff0071a86d4]                       '*': kernel frame
 *     Binary Images:
 *            0x1027f4000 -     ???  accessoryd  <BDBDD550-…>  /System/…/accessoryd
 *
 * Counts are inclusive: a frame's self count (count − Σ children) is that many samples on its path.
 * Frames find their image by name among the process's Binary Images (which come after the stacks),
 * else by address. Every line is kept for the writer.
 */
#include <stdlib.h>
#include <string.h>

#include "read/apple_report_int.h"
#include "util/mem.h"

typedef struct open_frame {
	size_t col;
	uint32_t depth;
} open_frame;

/* Binary image line, as in crash reports but with "???" ends and no arch. */
static int image_line(tk_apple_report *r, const char *s, size_t n)
{
	tk_apple_image_text t;
	if (!tk_apple_report_image_text(s, n, &t))
		return 0;
	tk_apple_report_image *im = tk_apple_report_add_image(r);
	im->base = t.lo;
	im->size = t.hi > t.lo ? t.hi - t.lo + 1 : 0;
	im->name = tk_xstrndup(t.name, t.name_len);
	im->uuid = tk_apple_report_uuid(t.uuid, t.uuid_len);
	if (t.path_len)
		im->path = tk_xstrndup(t.path, t.path_len);
	/* the name column may be a bundle id and version ("com.apple.Safari 17.0 (…)"); frames say the
	 * file's name ("(Safari + 123)"), which the path ends with */
	if (im->path && im->path[0] == '/') {
		const char *b = strrchr(im->path, '/') + 1;
		if (*b) {
			free(im->name);
			im->name = tk_xstrdup(b);
		}
	}
	return 1;
}

/* Frame text after the count: "sym + off (lib + off) [0xaddr] …" */
static void frame_text(tk_apple_report_frame *f, const char *s, size_t n, char **lib, uint64_t *liboff, size_t at)
{
	*lib = NULL;
	*liboff = 0;
	const char *br = NULL;
	for (size_t k = 0; k + 3 < n; k++)
		if (s[k] == '[' && s[k + 1] == '0' && s[k + 2] == 'x')
			br = s + k;
	size_t end = n;
	if (br) {
		size_t used;
		if (tk_apple_report_hex(br + 1, (size_t)(s + n - br - 1), &f->addr, &used) < 0)
			f->addr = 0;
		end = tk_apple_report_trim(s, (size_t)(br - s));
	}
	/* the last "(lib + off)" before the address */
	if (end && s[end - 1] == ')') {
		size_t k = end - 1;
		while (k && s[k] != '(')
			k--;
		const char *pl = NULL;
		for (size_t j = k; j + 3 < end; j++)
			if (!memcmp(s + j, " + ", 3))
				pl = s + j;
		if (s[k] == '(' && pl) {
			*lib = tk_xstrndup(s + k + 1, (size_t)(pl - s - k - 1));
			*liboff = strtoull(pl + 3, NULL, 10);
			end = tk_apple_report_trim(s, k);
		}
	}
	f->sym_at = at;
	f->sym_end = at + end;
	if (end >= 3 && !memcmp(s, "???", 3))
		return;
	const char *plus = NULL;
	for (size_t j = 0; j + 3 <= end; j++)
		if (!memcmp(s + j, " + ", 3))
			plus = s + j;
	if (plus) {
		char *e;
		unsigned long long off = strtoull(plus + 3, &e, 10);
		if (e == s + end) {
			f->symoff = off;
			f->has_symoff = 1;
			end = (size_t)(plus - s);
		}
	}
	if (end)
		f->symbol = tk_xstrndup(s, end);
}

static tk_event_kind kind_of(const char *ev, size_t n)
{
	if (tk_apple_report_starts(ev, n, "hang"))
		return TK_EVENT_HANG;
	if (tk_apple_report_starts(ev, n, "cpu usage") || tk_apple_report_starts(ev, n, "wakeups"))
		return TK_EVENT_CPU_EXCEPTION;
	if (tk_apple_report_starts(ev, n, "disk writes"))
		return TK_EVENT_DISK_WRITE;
	return TK_EVENT_MARKER;
}

static void proc_name(const char *v, size_t vl, char **name, int64_t *pid)
{
	const char *br = NULL;
	for (size_t k = 0; k + 1 < vl; k++)
		if (v[k] == ' ' && v[k + 1] == '[' && !br)
			br = v + k;
	*name = tk_xstrndup(v, br ? (size_t)(br - v) : vl);
	*pid = br ? strtoll(br + 2, NULL, 10) : -1;
}

int tk_apple_report_parse_spindump(tk_apple_report *r, const char *buf, size_t n, size_t body, tk_error *err)
{
	tk_apple_report_split_lines(r, buf, n);
	size_t first = 0;
	for (size_t k = 0; k < body && k < n; k++)
		first += buf[k] == '\n';
	r->kind = TK_EVENT_HANG;
	char **libs = NULL; /* per frame (thread-major order), the "(lib + off)" name */
	uint64_t *liboffs = NULL;
	size_t nlibs = 0, caplibs = 0;
	enum { HEADER, HEAVIEST, PROC, IMAGES } where = HEADER;
	tk_apple_report_thread *t = NULL;
	open_frame *open = NULL;
	size_t nopen = 0, capopen = 0;
	char *command = NULL;
	int64_t target_pid = -1;
	int have_event = 0;
	for (size_t ln = first; ln < r->nlines; ln++) {
		const char *s = r->lines[ln];
		size_t sn = tk_apple_report_trim(s, strlen(s));
		size_t ind = 0;
		while (ind < sn && s[ind] == ' ')
			ind++;
		const char *b = s + ind;
		size_t bn = sn - ind;
		size_t vl;
		const char *v;
		if (!bn) {
			if (where == HEAVIEST)
				where = HEADER;
			continue;
		}
		if ((v = tk_apple_report_field(b, bn, "Process", &vl)) ||
		    (v = tk_apple_report_field(b, bn, "Powerstats for", &vl))) {
			tk_apple_report_process *p = tk_apple_report_add_process(r);
			proc_name(v, vl, &p->name, &p->pid);
			where = PROC;
			t = NULL;
			nopen = 0;
			continue;
		}
		if (tk_apple_report_starts(b, bn, "Binary Images:")) {
			where = IMAGES;
			if (!r->nprocesses)
				tk_apple_report_add_process(r); /* a report with one global list */
			continue;
		}
		if (where == IMAGES) {
			if (image_line(r, s, sn)) {
				r->processes[r->nprocesses - 1].nimages++;
				continue;
			}
			where = HEADER;
		}
		if (tk_apple_report_starts(b, bn, "Heaviest stack for the target process:")) {
			where = HEAVIEST;
			continue;
		}
		if (where == HEAVIEST)
			continue;
		if (where == HEADER && ind == 0) {
			if ((v = tk_apple_report_field(b, bn, "Command", &vl))) {
				free(command);
				command = tk_xstrndup(v, vl);
				tk_apple_report_set_attr(r, "process", v, vl);
				if (!tk_apple_report_attr(r, "app"))
					tk_apple_report_set_attr(r, "app", v, vl);
			} else if ((v = tk_apple_report_field(b, bn, "PID", &vl))) {
				target_pid = strtoll(v, NULL, 10);
				tk_apple_report_set_attr(r, "pid", v, vl);
			} else if ((v = tk_apple_report_field(b, bn, "Event", &vl))) {
				r->kind = kind_of(v, vl);
				free(r->event_name);
				r->event_name = tk_xstrndup(v, vl);
				have_event = 1;
			} else if ((v = tk_apple_report_field(b, bn, "Duration", &vl))) {
				r->duration = strtod(v, NULL);
			} else if ((v = tk_apple_report_field(b, bn, "Identifier", &vl))) {
				if (!tk_apple_report_attr(r, "bundle"))
					tk_apple_report_set_attr(r, "bundle", v, vl);
			} else if ((v = tk_apple_report_field(b, bn, "Version", &vl))) {
				const char *p = memchr(v, '(', vl);
				if (p && v[vl - 1] == ')') {
					if (!tk_apple_report_attr(r, "app.version"))
						tk_apple_report_set_attr(r, "app.version", v,
						                         tk_apple_report_trim(v, (size_t)(p - v)));
					if (!tk_apple_report_attr(r, "app.build"))
						tk_apple_report_set_attr(r, "app.build", p + 1,
						                         (size_t)(v + vl - 1 - p - 1));
				}
			} else if ((v = tk_apple_report_field(b, bn, "OS Version", &vl))) {
				if (!tk_apple_report_attr(r, "os"))
					tk_apple_report_set_attr(r, "os", v, vl);
			} else if ((v = tk_apple_report_field(b, bn, "Hardware model", &vl)))
				tk_apple_report_set_attr(r, "device", v, vl);
			else if ((v = tk_apple_report_field(b, bn, "Incident Identifier", &vl))) {
				if (!tk_apple_report_attr(r, "incident"))
					tk_apple_report_set_attr(r, "incident", v, vl);
			} else if ((v = tk_apple_report_field(b, bn, "Architecture", &vl))) {
				if (!tk_apple_report_attr(r, "arch"))
					tk_apple_report_set_attr(r, "arch", v, vl);
			} else if ((v = tk_apple_report_field(b, bn, "Date/Time", &vl))) {
				double w = tk_apple_report_parse_time(v, vl);
				if (w == w && r->wall != r->wall)
					r->wall = w;
			}
			continue;
		}
		if (where != PROC)
			continue;
		if (tk_apple_report_starts(b, bn, "Thread 0x")) {
			t = tk_apple_report_add_thread(r);
			uint64_t tid = 0;
			size_t used;
			tk_apple_report_hex(b + 7, bn - 7, &tid, &used);
			t->id = tid;
			const char *q = strstr(b, "DispatchQueue \"");
			if (q) {
				const char *e = strchr(q + 15, '"');
				if (e)
					t->queue = tk_xstrndup(q + 15, (size_t)(e - q - 15));
			}
			const char *nm = strstr(b, "Thread name \"");
			if (nm) {
				const char *e = strchr(nm + 13, '"');
				if (e)
					t->name = tk_xstrndup(nm + 13, (size_t)(e - nm - 13));
			}
			nopen = 0;
			continue;
		}
		/* a frame: [*]COUNT  text */
		size_t i = 0;
		int kernel = 0;
		if (b[0] == '*')
			kernel = 1, i = 1;
		size_t d0 = i;
		uint64_t count = 0;
		while (i < bn && b[i] >= '0' && b[i] <= '9' && i - d0 < 19)
			count = count * 10 + (uint64_t)(b[i++] - '0');
		if (i == d0 || i >= bn || b[i] != ' ')
			continue; /* process header lines ("UUID:", "Footprint:", …) */
		while (i < bn && b[i] == ' ')
			i++;
		if (!t) { /* microstackshot: the process's stacks without thread rows */
			t = tk_apple_report_add_thread(r);
			t->name = tk_xstrdup("(all threads)");
			nopen = 0;
		}
		while (nopen && open[nopen - 1].col >= ind)
			nopen--;
		TK_GROW(open, capopen, nopen + 1);
		open[nopen].col = ind;
		open[nopen].depth = (uint32_t)nopen + 1;
		nopen++;
		tk_apple_report_frame *f = tk_apple_report_add_frame(t);
		f->count = count;
		f->depth = (uint32_t)nopen;
		f->kernel = kernel;
		f->line_no = ln;
		TK_GROW(libs, caplibs, nlibs + 1);
		liboffs = tk_xrealloc(liboffs, caplibs * sizeof *liboffs);
		frame_text(f, b + i, bn - i, &libs[nlibs], &liboffs[nlibs], ind + i);
		nlibs++;
	}
	free(open);
	if (!have_event && r->bug_type)
		r->kind = !strcmp(r->bug_type, "202")   ? TK_EVENT_CPU_EXCEPTION
		          : !strcmp(r->bug_type, "145") ? TK_EVENT_DISK_WRITE
		                                        : TK_EVENT_HANG;
	if (!r->event_name)
		r->event_name = tk_xstrdup(tk_event_kind_name(r->kind));
	/* frames → images: by name among the process's images, else by address */
	size_t fi = 0;
	for (size_t ti = 0; ti < r->nthreads; ti++) {
		tk_apple_report_thread *th = &r->threads[ti];
		const tk_apple_report_process *p = th->process < r->nprocesses ? &r->processes[th->process] : NULL;
		for (size_t k = 0; k < th->nframes; k++, fi++) {
			tk_apple_report_frame *f = &th->frames[k];
			const char *lib = libs[fi];
			for (int pass = 0; pass < 2 && !f->image; pass++) {
				size_t lo = pass == 0 && p ? p->first_image : 0;
				size_t hi = pass == 0 && p ? p->first_image + p->nimages : r->nimages;
				for (size_t m = lo; m < hi && m < r->nimages; m++) {
					const tk_apple_report_image *im = &r->images[m];
					if (lib ? (im->name && !strcmp(im->name, lib))
					        : (f->addr >= im->base && im->size && f->addr - im->base < im->size)) {
						f->image = (uint32_t)m + 1;
						break;
					}
				}
			}
			if (f->image && !f->addr && lib)
				f->addr = r->images[f->image - 1].base + liboffs[fi];
			free(libs[fi]);
		}
	}
	free(libs);
	free(liboffs);
	for (size_t pi = 0; pi < r->nprocesses; pi++)
		if ((command && r->processes[pi].name && !strcmp(r->processes[pi].name, command) &&
		     (target_pid < 0 || r->processes[pi].pid == target_pid)) ||
		    (target_pid >= 0 && r->processes[pi].pid == target_pid)) {
			r->target_process = pi;
			break;
		}
	free(command);
	if (!r->nthreads)
		return tk_error_set(
		    err, "%s: no sampled stacks (no \"Process:\" or \"Powerstats for:\" section with frames)", r->name);
	for (size_t m = 0; m < r->nimages; m++)
		if (!r->images[m].arch && tk_apple_report_attr(r, "arch"))
			r->images[m].arch = tk_xstrdup(tk_apple_report_attr(r, "arch"));
	return 0;
}

static int sniff(const unsigned char *h, size_t n)
{
	return tk_apple_report_sniff(h, n) == TK_APPLE_SPINDUMP;
}

static int read_spindump(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	(void)o;
	return tk_apple_report_read_profile(p, in, err);
}

const tk_reader tk_reader_spindump = {"spindump", sniff, read_spindump};
