/*
 * Android simpleperf's `simpleperf report-sample` text (without --protobuf):
 *
 *   sample:
 *     event_type: cpu-clock
 *     time: 6043203740713
 *     event_count: 1000000
 *     thread_id: 18043
 *     thread_name: RenderThread
 *     vaddr_in_file: 6f7e8
 *     file: /system/lib64/libc.so
 *     symbol: memcpy
 *     callchain:
 *       vaddr_in_file: 2a3b4
 *       file: /system/lib64/libhwui.so
 *       symbol: android::uirenderer::renderthread::RenderThread::threadLoop()
 *
 * (two blanks per level). The first vaddr/file/symbol triple is the sampled frame, the callchain
 * its callers, leaf first. Also printed and skipped: `meta_info:` (its event types),
 * `context_switch:` and `lost_situation:` blocks, `execution_type:` lines. Samples of several
 * event types are never added together: the first type is read, or tk_read_options.event;
 * tk_read_options.weight = period sums event_count as perf's period. Times are ns since boot, kept
 * relative to the first sample. The report names threads, not processes: pid is unknown.
 * report_sample.py's perf-script-like text goes to the perf reader (perf.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/internal.h"
#include "read/lines.h"
#include "tracekit/read.h"
#include "util/mem.h"

#define MAX_EVENTS 32

typedef struct sp {
	tk_profile *p;
	const char *name;
	const tk_read_options *o;
	tk_frame_id *frames;
	size_t nframes, capframes;
	int in_sample;
	/* the sample being read */
	char event[96];
	uint64_t time, count, tid, addr;
	int have_time, have_count, have_tid, have_frame;
	tk_str thread_name, file, symbol;
	/* across samples */
	uint64_t t0, samples, kept;
	int have_t0;
	char events[MAX_EVENTS][96];
	uint64_t event_samples[MAX_EVENTS];
	size_t nevents;
	int chosen;
} sp;

static int key_is(const char *s, size_t n, const char *key, const char **val, size_t *vn)
{
	size_t kl = strlen(key);
	if (n < kl + 1 || memcmp(s, key, kl) != 0 || s[kl] != ':')
		return 0;
	size_t i = kl + 1;
	while (i < n && s[i] == ' ')
		i++;
	*val = s + i;
	*vn = n - i;
	return 1;
}

static int number(const char *s, size_t n, int base, uint64_t *v)
{
	if (!n || n > (base == 16 ? 16u : 20u))
		return 0;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && (c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (unsigned)((c | 0x20) - 'a' + 10);
		else
			return 0;
		if (base == 10 && x > (UINT64_MAX - d) / 10)
			return 0;
		x = x * (uint64_t)base + d;
	}
	*v = x;
	return 1;
}

/* Close the frame being read (vaddr/file/symbol). */
static void close_frame(sp *x)
{
	if (!x->have_frame)
		return;
	tk_frame f = {0};
	f.addr = x->addr;
	const char *sym = tk_string(x->p, x->symbol);
	if (x->symbol && strcmp(sym, "unknown") != 0 && strcmp(sym, "[unknown]") != 0)
		f.name = x->symbol;
	if (x->file) {
		const char *path = tk_string(x->p, x->file);
		const char *base = strrchr(path, '/');
		tk_binary b = {0};
		b.path = x->file;
		b.name = base ? tk_intern_cstr(x->p, base + 1) : x->file;
		f.binary = tk_binary_add(x->p, &b);
	}
	if (x->nframes == 0)
		f.flags |= TK_FRAME_LEAF_PC;
	TK_GROW(x->frames, x->capframes, x->nframes + 1);
	x->frames[x->nframes++] = tk_frame_add(x->p, &f);
	x->have_frame = 0;
	x->addr = 0;
	x->file = x->symbol = 0;
}

static int event_index(sp *x)
{
	for (size_t i = 0; i < x->nevents; i++)
		if (strcmp(x->events[i], x->event) == 0)
			return (int)i;
	if (x->nevents == MAX_EVENTS)
		return -1;
	strcpy(x->events[x->nevents], x->event);
	return (int)x->nevents++;
}

static int finish(sp *x, uint64_t line, tk_error *err)
{
	if (!x->in_sample)
		return 0;
	close_frame(x);
	x->in_sample = 0;
	unsigned long long ln = (unsigned long long)line;
	if (!x->have_tid)
		return tk_error_set(err, "%s:%llu: the sample ending here has no thread_id", x->name, ln);
	x->samples++;
	int e = event_index(x);
	if (e >= 0)
		x->event_samples[e]++;
	if (e < 0 || (x->o->event && strcmp(x->event, x->o->event) != 0))
		return 0;
	if (x->chosen < 0)
		x->chosen = e;
	else if (x->chosen != e)
		return 0; /* another event type: never added to the first one's */
	uint64_t t = UINT64_MAX;
	if (x->have_time) {
		if (!x->have_t0)
			x->t0 = x->time, x->have_t0 = 1;
		t = x->time >= x->t0 ? x->time - x->t0 : 0;
		if (t < x->o->time_from || t >= x->o->time_to)
			return 0;
	}
	uint64_t w = 1;
	if (x->o->weight == TK_READ_WEIGHT_PERIOD) {
		if (!x->have_count)
			return tk_error_set(err, "%s:%llu: the sample ending here has no event_count, so --weight period cannot apply",
			                    x->name, ln);
		w = x->count;
	}
	tk_thread_id th = tk_thread_get_or_add(x->p, -1, x->tid, x->thread_name, 0);
	if (x->thread_name)
		tk_thread_set_name(x->p, th, x->thread_name);
	tk_stack_id st = tk_stack_from_leaf_first(x->p, x->frames, x->nframes);
	tk_sample_add(x->p, th, st, w, t);
	x->kept++;
	return 0;
}

static int simpleperf_sniff(const unsigned char *head, size_t n)
{
	size_t at = 0;
	const char *s;
	for (int lines = 0; at < n && lines < 64; lines++) {
		size_t len = tk_head_line(head, n, at, &s);
		at += len + 1;
		if (len && s[len - 1] == '\r')
			len--;
		if (len == 7 && memcmp(s, "sample:", 7) == 0) {
			size_t l2 = tk_head_line(head, n, at, &s);
			return l2 > 2 && memcmp(s, "  ", 2) == 0 &&
			       (memcmp(s + 2, "event_type:", 11 < l2 - 2 ? 11 : l2 - 2) == 0 ||
			        memcmp(s + 2, "time:", 5 < l2 - 2 ? 5 : l2 - 2) == 0);
		}
		if (len == 10 && memcmp(s, "meta_info:", 10) == 0 && lines == 0)
			continue;
		if (lines == 0 || (len >= 2 && s[0] == ' '))
			continue; /* inside meta_info */
		return 0;
	}
	return 0;
}

static int simpleperf_read(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	sp x = {0};
	x.p = p;
	x.o = o;
	x.name = tk_input_name(in);
	x.chosen = -1;
	tk_lines l;
	tk_lines_init(&l, in, o);
	const char *s, *v;
	size_t n, vn;
	int rc, block = 0; /* 1 = sample, 2 = another block */
	while ((rc = tk_lines_next(&l, &s, &n, err)) > 0) {
		unsigned long long ln = (unsigned long long)l.lineno;
		while (n && s[n - 1] == ' ')
			n--;
		if (!n)
			continue;
		if (s[0] != ' ') {
			if ((rc = finish(&x, l.lineno, err)) < 0)
				break;
			if (n == 7 && memcmp(s, "sample:", 7) == 0) {
				block = 1;
				x.in_sample = 1;
				x.nframes = 0;
				x.have_time = x.have_count = x.have_tid = x.have_frame = 0;
				x.thread_name = x.file = x.symbol = 0;
				x.addr = 0;
				x.event[0] = 0;
			} else if (n > 1 && s[n - 1] == ':' && !memchr(s, ' ', n)) {
				block = 2; /* meta_info:, context_switch:, lost_situation: … */
			} else {
				rc = tk_error_set(err, "%s:%llu: expected `sample:` or another report-sample block name", x.name, ln);
				break;
			}
			continue;
		}
		if (block != 1)
			continue;
		size_t i = 0;
		while (i < n && s[i] == ' ')
			i++;
		const char *k = s + i;
		size_t kn = n - i;
		uint64_t num;
		if (key_is(k, kn, "vaddr_in_file", &v, &vn)) {
			close_frame(&x);
			if (!number(v, vn, 16, &num)) {
				rc = tk_error_set(err, "%s:%llu: vaddr_in_file: expected a hex address", x.name, ln);
				break;
			}
			if (x.nframes >= 65536) {
				rc = tk_error_set(err, "%s:%llu: a call chain of more than 65536 frames", x.name, ln);
				break;
			}
			x.addr = num;
			x.have_frame = 1;
		} else if (key_is(k, kn, "file", &v, &vn)) {
			x.file = vn ? tk_intern(p, v, vn) : 0;
		} else if (key_is(k, kn, "symbol", &v, &vn)) {
			x.symbol = vn ? tk_intern(p, v, vn) : 0;
		} else if (key_is(k, kn, "event_type", &v, &vn)) {
			if (vn >= sizeof x.event)
				vn = sizeof x.event - 1;
			memcpy(x.event, v, vn);
			x.event[vn] = 0;
		} else if (key_is(k, kn, "time", &v, &vn)) {
			if (!number(v, vn, 10, &x.time)) {
				rc = tk_error_set(err, "%s:%llu: time: expected a whole number of ns", x.name, ln);
				break;
			}
			x.have_time = 1;
		} else if (key_is(k, kn, "event_count", &v, &vn)) {
			if (!number(v, vn, 10, &x.count)) {
				rc = tk_error_set(err, "%s:%llu: event_count: expected a whole number", x.name, ln);
				break;
			}
			x.have_count = 1;
		} else if (key_is(k, kn, "thread_id", &v, &vn)) {
			if (!number(v, vn, 10, &x.tid)) {
				rc = tk_error_set(err, "%s:%llu: thread_id: expected a whole number", x.name, ln);
				break;
			}
			x.have_tid = 1;
		} else if (key_is(k, kn, "thread_name", &v, &vn)) {
			x.thread_name = tk_intern(p, v, vn);
		} else if (!memchr(k, ':', kn)) {
			rc = tk_error_set(err, "%s:%llu: expected `key: value` inside a sample", x.name, ln);
			break;
		} /* callchain:, execution_type: and keys of later versions */
	}
	if (rc == 0)
		rc = finish(&x, l.lineno, err);
	tk_lines_free(&l);
	free(x.frames);
	if (rc < 0)
		return -1;
	char list[1024];
	size_t ll = 0;
	list[0] = 0;
	for (size_t e = 0; e < x.nevents && ll < sizeof list; e++) {
		int w = snprintf(list + ll, sizeof list - ll, "%s%s (%llu sample%s)", e ? ", " : "",
		                 x.events[e][0] ? x.events[e] : "(no event_type)", (unsigned long long)x.event_samples[e],
		                 x.event_samples[e] == 1 ? "" : "s");
		if (w < 0)
			break;
		ll += (size_t)w;
	}
	if (o->event && x.chosen < 0)
		return tk_error_set(err, "%s: no samples of event `%s`; the file has %s", x.name, o->event,
		                    x.nevents ? list : "no samples");
	if (!x.samples)
		return tk_error_set(err, "%s: no samples", x.name);
	tk_unit unit = TK_UNIT_SAMPLES;
	if (o->weight == TK_READ_WEIGHT_PERIOD && x.chosen >= 0) {
		const char *ev = x.events[x.chosen];
		unit = strcmp(ev, "cpu-clock") == 0 || strcmp(ev, "task-clock") == 0          ? TK_UNIT_NS
		       : strcmp(ev, "cpu-cycles") == 0 || strcmp(ev, "cycles") == 0 ? TK_UNIT_CYCLES
		                                                                                : TK_UNIT_EVENTS;
	}
	tk_profile_set_unit(p, unit);
	tk_profile_set_meta(p, "format", "simpleperf-report-sample");
	tk_profile_set_meta(p, "events", list);
	if (x.chosen >= 0)
		tk_read_meta_event(p, x.events[x.chosen], x.nevents, o->event);
	tk_profile_set_meta(p, "weight",
	                    o->weight == TK_READ_WEIGHT_PERIOD
	                        ? "period (each sample weighs its event_count)"
	                        : "samples (each sample counts 1; --weight period sums event_count)");
	tk_read_meta_rows(p, x.samples, x.kept);
	return 0;
}

const tk_reader tk_reader_simpleperf = {"simpleperf", simpleperf_sniff, simpleperf_read};
