/*
 * Linux `perf script` text (perf record [-g]; perf script), the input of FlameGraph's
 * stackcollapse-perf.pl, inferno and the Firefox Profiler's perf importer:
 *
 *   sleep 27215   435.267644:     250000 cpu-clock:ppp:
 *   	ffffffff821ce693 mas_empty_area_rev+0x23 ([kernel.kallsyms])
 *   	           20ca3 mmap64+0x13 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)
 *   (blank line)
 *
 * Every shape perf prints is read:
 *   - the header `COMM TID|PID/TID [CPU] SECONDS.FRAC: [PERIOD] EVENT:`; COMM may hold blanks, so it is
 *     found from the timestamp leftwards;
 *   - without call chains (no -g) the one frame follows the event on the header line, samples follow
 *     each other without blank lines, and COMM is right-padded to 16 columns (`%16s`), so a short
 *     name starts with blanks;
 *   - without the time field (`-F` without time): the event anchors the header instead, samples keep
 *     their file order and have no time (so --time-from/--time-to are refused, naming the cure);
 *   - several events in one file (`perf record -e a,b`): one event is read, never a sum of several
 *     (the first, as FlameGraph, inferno and speedscope do, or tk_read_options.event); events are
 *     compared without perf's modifiers ("cycles:u" is "cycles"); meta "events" lists them all;
 *   - simpleperf's report_sample.py (`COMM\tPID/TID [CPU] SECONDS: PERIOD EVENT:`, frames
 *     `\t%16x SYMBOL (DSO)`, or in older NDKs `%16x\tSYMBOL (DSO)` with no blank line between
 *     samples), including its `tracing data:` blocks.
 * Frames are `ADDR SYMBOL+0xOFF (DSO)`, leaf first; `[unknown]` symbols become address-only frames,
 * the DSO becomes the frame's binary (name = basename, path = as printed). Each sample counts once
 * (unit "samples") unless tk_read_options.weight asks for the period, which FlameGraph and inferno
 * sum (the unit then follows the event: ns for cpu-clock/task-clock, cycles, else events). Times are
 * kept relative to the first sample. Side-band records (`PERF_RECORD_COMM`, `_MMAP2` … from
 * --show-*-events) are skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/internal.h"
#include "read/lines.h"
#include "tracekit/read.h"
#include "util/hidx.h"
#include "util/mem.h"

#define MAX_EVENTS 32

typedef struct perf_event {
	char name[96]; /* without the trailing ':' and perf's modifiers ("cycles:uppp" → "cycles") */
	uint64_t samples;
} perf_event;

typedef struct perf {
	tk_profile *p;
	const char *name;
	const tk_read_options *o;
	tk_frame_id *frames;
	size_t nframes, capframes;
	int in_sample, keep, tracing_data;
	tk_thread_id thread;
	uint64_t time, t0, weight;
	int have_t0, timed, untimed;
	uint64_t samples, kept;
	perf_event events[MAX_EVENTS];
	size_t nevents, more_events; /* more_events: distinct events past MAX_EVENTS (not listed) */
	int chosen;                  /* index of the event read, -1 until one is seen (or matches --event) */
	/* Frame lines repeat from sample to sample: their text (and whether it is the leaf) maps straight
	 * to the frame, one lookup instead of interning name, DSO, binary and frame. Grows with distinct
	 * frame lines, as the model does. */
	tk_hidx fidx;
	struct fkey {
		size_t off;
		uint32_t len;
		uint32_t leaf;
		tk_frame_id id;
	} *fkeys;
	size_t nfkeys, capfkeys;
	char *ftext;
	size_t nftext, capftext;
} perf;

typedef struct fprobe {
	const char *s;
	size_t n;
	uint32_t leaf;
} fprobe;

static int fkey_eq(const void *ctx, uint32_t idx, const void *key)
{
	const perf *x = ctx;
	const fprobe *k = key;
	const struct fkey *e = &x->fkeys[idx];
	return e->len == k->n && e->leaf == k->leaf && memcmp(x->ftext + e->off, k->s, k->n) == 0;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Tokens are separated by runs of spaces. */
typedef struct tok {
	const char *s;
	size_t n;
} tok;

static size_t tokenize(const char *s, size_t n, tok *t, size_t cap)
{
	size_t k = 0, i = 0;
	while (i < n && k < cap) {
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == n)
			break;
		size_t b = i;
		while (i < n && s[i] != ' ' && s[i] != '\t')
			i++;
		t[k++] = (tok){s + b, i - b};
	}
	return k;
}

/* "435.267644:" */
static int is_time(const tok *t)
{
	size_t i = 0;
	while (i < t->n && is_digit(t->s[i]))
		i++;
	if (i == 0 || i >= t->n || t->s[i] != '.')
		return 0;
	size_t j = ++i;
	while (i < t->n && is_digit(t->s[i]))
		i++;
	return i > j && i + 1 == t->n && t->s[i] == ':';
}

static int all_digits(const char *s, size_t n)
{
	if (!n || n > 19)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return 0;
	return 1;
}

/* "27215" or "27215/27216"; "[002]" is a CPU. */
static int is_tid(const tok *t, int64_t *pid, uint64_t *tid)
{
	const char *sl = memchr(t->s, '/', t->n);
	if (sl) {
		size_t a = (size_t)(sl - t->s);
		if (!all_digits(t->s, a) || !all_digits(sl + 1, t->n - a - 1))
			return 0;
		*pid = strtoll(t->s, NULL, 10);
		*tid = strtoull(sl + 1, NULL, 10);
		return 1;
	}
	if (!all_digits(t->s, t->n))
		return 0;
	*pid = -1;
	*tid = strtoull(t->s, NULL, 10);
	return 1;
}

static int is_cpu(const tok *t)
{
	return t->n >= 3 && t->s[0] == '[' && t->s[t->n - 1] == ']' && all_digits(t->s + 1, t->n - 2);
}

/* Where the timestamp token is, or -1. */
static int find_time(const tok *t, size_t k)
{
	for (size_t i = 1; i < k; i++)
		if (is_time(&t[i]))
			return (int)i;
	return -1;
}

/* The index of the pid/tid token before the timestamp (skipping a [CPU]), or -1. */
static int find_tid(const tok *t, int ti, int64_t *pid, uint64_t *tid)
{
	int i = ti - 1;
	if (i >= 1 && is_cpu(&t[i]))
		i--;
	return i >= 1 && is_tid(&t[i], pid, tid) ? i : -1;
}

/* "ADDR SYMBOL+0xOFF (DSO)" with the leading whitespace removed. 1 = a frame, 0 = not one. */
static int frame_parse(perf *x, const char *s, size_t n);

static int frame(perf *x, const char *s, size_t n)
{
	fprobe k = {s, n, x->nframes == 0};
	uint64_t h = tk_hash_bytes(s, n, k.leaf);
	uint32_t idx = n <= UINT32_MAX ? tk_hidx_find(&x->fidx, h, fkey_eq, x, &k) : UINT32_MAX;
	if (idx != UINT32_MAX) {
		TK_GROW(x->frames, x->capframes, x->nframes + 1);
		x->frames[x->nframes++] = x->fkeys[idx].id;
		return 1;
	}
	if (!frame_parse(x, s, n))
		return 0;
	if (n > UINT32_MAX)
		return 1;
	TK_GROW(x->ftext, x->capftext, x->nftext + n + 1);
	memcpy(x->ftext + x->nftext, s, n);
	TK_GROW(x->fkeys, x->capfkeys, x->nfkeys + 1);
	x->fkeys[x->nfkeys] = (struct fkey){x->nftext, (uint32_t)n, k.leaf, x->frames[x->nframes - 1]};
	x->nftext += n;
	tk_hidx_insert(&x->fidx, h, (uint32_t)x->nfkeys++);
	return 1;
}

static int frame_parse(perf *x, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && is_hex(s[i]))
		i++;
	if (i == 0 || i > 16 || (i < n && s[i] != ' ' && s[i] != '\t'))
		return 0;
	tk_frame f = {0};
	for (size_t k = 0; k < i; k++)
		f.addr = f.addr << 4 | (uint64_t)(is_digit(s[k]) ? s[k] - '0' : (s[k] | 0x20) - 'a' + 10);
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t e = n;
	while (e > i && s[e - 1] == ' ')
		e--;
	const char *dso = NULL;
	size_t dlen = 0;
	if (e > i && s[e - 1] == ')') { /* the DSO in balanced parentheses: "(/tmp/x (deleted))" */
		int depth = 0;
		size_t j = e;
		while (j > i) {
			j--;
			if (s[j] == ')')
				depth++;
			else if (s[j] == '(' && --depth == 0)
				break;
		}
		if (depth == 0 && s[j] == '(' && (j == i || s[j - 1] == ' ')) {
			dso = s + j + 1;
			dlen = e - j - 2;
			e = j;
			while (e > i && s[e - 1] == ' ')
				e--;
		}
	}
	/* strip "+0x23" */
	size_t se = e;
	for (size_t k = e; k > i; k--)
		if (s[k - 1] == '+') {
			size_t m = k + 2;
			int ok = m < e && s[k] == '0' && s[k + 1] == 'x';
			for (; ok && m < e; m++)
				ok = is_hex(s[m]);
			if (ok)
				se = k - 1;
			break;
		}
	/* perf pads nothing inside a symbol, so blanks before "+0x" are not part of the name (and a
	 * name ending in blanks would not survive folded output, whose reader trims before the count) */
	while (se > i && (s[se - 1] == ' ' || s[se - 1] == '\t'))
		se--;
	if (se > i && !(se - i == 9 && memcmp(s + i, "[unknown]", 9) == 0))
		f.name = tk_intern(x->p, s + i, se - i);
	if (dso && dlen && !(dlen == 9 && memcmp(dso, "[unknown]", 9) == 0)) {
		tk_binary b = {0};
		const char *base = dso;
		for (size_t k = 0; k < dlen; k++)
			if (dso[k] == '/')
				base = dso + k + 1;
		b.path = tk_intern(x->p, dso, dlen);
		b.name = tk_intern(x->p, base, (size_t)(dso + dlen - base));
		f.binary = tk_binary_add(x->p, &b);
	}
	if (x->nframes == 0)
		f.flags |= TK_FRAME_LEAF_PC;
	TK_GROW(x->frames, x->capframes, x->nframes + 1);
	x->frames[x->nframes++] = tk_frame_add(x->p, &f);
	return 1;
}


/* What a header line holds. */
typedef struct hdr {
	size_t comm_off, comm_len;
	int64_t pid;
	uint64_t tid;
	int has_time, has_period, sideband;
	uint64_t ns, period;
	tok event;        /* .n == 0: no event field */
	const char *rest; /* the frame on the line (no -g), or NULL */
	size_t rest_n;
} hdr;

static int is_sideband(const tok *t)
{
	return t->n > 12 && memcmp(t->s, "PERF_RECORD_", 12) == 0;
}

/* "cpu-clock:" and such: an event name followed by ':'. */
static int is_event(const tok *t)
{
	if (t->n < 2 || t->s[t->n - 1] != ':' || t->s[0] == ':')
		return 0;
	for (size_t i = 0; i + 1 < t->n; i++) {
		char c = t->s[i];
		if (!(is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || strchr("-_:./,=", c)))
			return 0;
	}
	return 1;
}

/* Recognise a sample header. With the time field (perf's default), the timestamp anchors it:
 * `COMM TID|PID/TID [CPU] SECONDS.FRAC: [PERIOD] EVENT: [FRAME]`. Without it (`-F` without time,
 * older tools), the event does: `COMM TID [CPU] [PERIOD] EVENT: [FRAME]`. COMM may hold blanks and
 * be right-padded with blanks (perf prints it `%16s` when there are no call chains). */
static int parse_header(const char *s, size_t n, hdr *h)
{
	tok t[64];
	size_t k = tokenize(s, n, t, 64);
	memset(h, 0, sizeof *h);
	if (k < 2)
		return 0;
	int ti = find_time(t, k), ii, next;
	if (ti > 0) {
		ii = find_tid(t, ti, &h->pid, &h->tid);
		if (ii < 0)
			return 0;
		h->has_time = 1;
		uint64_t ip, frac;
		unsigned fd;
		tk_parse_decimal(t[ti].s, t[ti].n, &ip, &frac, &fd);
		if (ip > UINT64_MAX / 1000000000ull - 1)
			return 0;
		h->ns = ip * 1000000000ull + frac;
		next = ti + 1;
		if ((size_t)next < k && all_digits(t[next].s, t[next].n)) {
			h->has_period = 1;
			h->period = strtoull(t[next].s, NULL, 10);
			next++;
		}
		if ((size_t)next < k && is_sideband(&t[next])) {
			h->sideband = 1;
			return 1;
		}
		if ((size_t)next < k && is_event(&t[next]))
			h->event = t[next++];
	} else {
		int ei = -1;
		for (size_t i = 2; i < k && ei < 0; i++) {
			if (is_sideband(&t[i]) && is_tid(&t[i - 1], &h->pid, &h->tid)) {
				h->sideband = 1;
				return 1;
			}
			if (is_event(&t[i]))
				ei = (int)i;
		}
		if (ei < 0)
			return 0;
		int j = ei - 1;
		uint64_t period = 0;
		int has_period = 0;
		int64_t pid2;
		uint64_t tid2;
		if (all_digits(t[j].s, t[j].n) && j - 1 >= 1 && (is_cpu(&t[j - 1]) || is_tid(&t[j - 1], &pid2, &tid2))) {
			has_period = 1;
			period = strtoull(t[j].s, NULL, 10);
			j--;
		}
		if (j >= 2 && is_cpu(&t[j]))
			j--;
		if (j < 1 || !is_tid(&t[j], &h->pid, &h->tid))
			return 0;
		ii = j;
		h->has_period = has_period;
		h->period = period;
		h->event = t[ei];
		next = ei + 1;
	}
	h->comm_off = (size_t)(t[0].s - s);
	h->comm_len = (size_t)(t[ii - 1].s + t[ii - 1].n - t[0].s);
	if ((size_t)next < k) {
		h->rest = t[next].s;
		h->rest_n = (size_t)(s + n - h->rest);
	}
	return 1;
}

/* "cpu-clock:ppp:" → "cpu-clock": the trailing ':' and perf's event modifiers go (inferno and
 * FlameGraph compare events the same way), so "cycles:u:" and "cycles:" are one event. */
static size_t event_key(const tok *ev, const char **out)
{
	size_t n = ev->n - 1;
	const char *c = NULL;
	for (size_t i = n; i > 0; i--)
		if (ev->s[i - 1] == ':') {
			c = ev->s + i - 1;
			break;
		}
	if (c && c > ev->s) {
		size_t m = (size_t)(ev->s + n - (c + 1));
		size_t ok = m > 0;
		for (size_t i = 0; i < m && ok; i++)
			ok = strchr("ukhIGHpPSDWeb", c[1 + i]) != NULL;
		if (ok)
			n = (size_t)(c - ev->s);
	}
	*out = ev->s;
	return n;
}

/* The index of the event in the table (added if new; -1 past MAX_EVENTS). */
static int event_index(perf *x, const tok *ev)
{
	const char *k;
	size_t n = event_key(ev, &k);
	if (n >= sizeof x->events[0].name)
		n = sizeof x->events[0].name - 1;
	for (size_t i = 0; i < x->nevents; i++)
		if (strlen(x->events[i].name) == n && memcmp(x->events[i].name, k, n) == 0)
			return (int)i;
	if (x->nevents == MAX_EVENTS) {
		x->more_events = 1;
		return -1;
	}
	memcpy(x->events[x->nevents].name, k, n);
	x->events[x->nevents].name[n] = 0;
	return (int)x->nevents++;
}

static int event_wanted(const perf *x, int e)
{
	if (!x->o->event)
		return 1;
	/* --event cycles:u means cycles, as the file's own names are compared */
	char buf[sizeof x->events[0].name + 1];
	size_t n = strlen(x->o->event);
	if (n + 1 >= sizeof buf)
		return 0;
	memcpy(buf, x->o->event, n);
	buf[n] = ':';
	tok t = {buf, n + 1};
	const char *k;
	size_t kl = event_key(&t, &k);
	return strlen(x->events[e].name) == kl && memcmp(x->events[e].name, k, kl) == 0;
}

static tk_unit period_unit(const char *ev)
{
	if (strcmp(ev, "cpu-clock") == 0 || strcmp(ev, "task-clock") == 0)
		return TK_UNIT_NS;
	if (strcmp(ev, "cycles") == 0 || strcmp(ev, "cpu-cycles") == 0)
		return TK_UNIT_CYCLES;
	return TK_UNIT_EVENTS;
}

static void finish(perf *x)
{
	if (!x->in_sample)
		return;
	x->in_sample = 0;
	if (!x->keep)
		return;
	tk_stack_id st = tk_stack_from_leaf_first(x->p, x->frames, x->nframes);
	tk_sample_add(x->p, x->thread, st, x->weight, x->time);
	x->kept++;
}

static int header(perf *x, const hdr *h, const char *s, uint64_t line, tk_error *err)
{
	if (h->sideband) /* --show-task-events, --show-mmap-events …: not samples */
		return 0;
	unsigned long long ln = (unsigned long long)line;
	int ranged = x->o->time_from || x->o->time_to != UINT64_MAX;
	if (h->has_time) {
		if (!x->have_t0) {
			x->t0 = h->ns;
			x->have_t0 = 1;
		}
		x->time = h->ns >= x->t0 ? h->ns - x->t0 : 0;
		x->timed = 1;
	} else {
		if (ranged)
			return tk_error_set(err,
			                    "%s:%llu: no time field, so --time-from/--time-to cannot apply: re-run "
			                    "`perf script -F +time`",
			                    x->name, ln);
		x->time = UINT64_MAX;
		x->untimed = 1;
	}
	int e = h->event.n ? event_index(x, &h->event) : -1;
	if (e >= 0)
		x->events[e].samples++;
	x->keep = 1;
	if (h->event.n) {
		if (e < 0 || !event_wanted(x, e))
			x->keep = 0;
		else if (x->chosen < 0)
			x->chosen = e;
		else if (x->chosen != e)
			x->keep = 0; /* another event: never added to the first one's */
	} else if (x->o->event) {
		return tk_error_set(err, "%s:%llu: no event field, so --event cannot apply: re-run `perf script -F +event`",
		                    x->name, ln);
	}
	if (x->keep && h->has_time)
		x->keep = x->time >= x->o->time_from && x->time < x->o->time_to;
	x->weight = 1;
	if (x->o->weight == TK_READ_WEIGHT_PERIOD) {
		if (!h->has_period)
			return tk_error_set(err, "%s:%llu: no period field, so --weight period cannot apply: re-run `perf script -F +period`",
			                    x->name, ln);
		x->weight = h->period;
	}
	tk_str comm = tk_intern(x->p, s + h->comm_off, h->comm_len);
	x->thread = tk_thread_get_or_add(x->p, h->pid, h->tid, comm, h->pid >= 0 && (uint64_t)h->pid == h->tid ? comm : 0);
	tk_thread_set_name(x->p, x->thread, comm); /* the latest comm (exec renames) */
	x->in_sample = 1;
	x->tracing_data = 0;
	x->nframes = 0;
	x->samples++;
	if (h->rest && x->keep && !frame(x, h->rest, h->rest_n))
		return tk_error_set(err, "%s:%llu: expected `ADDR SYMBOL (DSO)` after the event", x->name, ln);
	return 0;
}

/* A frame line's text without its indentation: hex digits, then a blank or the end. */
static int frame_shaped(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && is_hex(s[i]))
		i++;
	return i > 0 && i <= 16 && (i == n || s[i] == ' ' || s[i] == '\t');
}

static int perf_sniff(const unsigned char *head, size_t n)
{
	size_t at = 0;
	const char *s;
	size_t len;
	for (;;) { /* skip `perf script --header` comments and blank lines */
		len = tk_head_line(head, n, at, &s);
		if (!len && at >= n)
			return 0;
		if (len && s[0] != '#')
			break;
		at += len + 1;
	}
	if (s[0] == '\t' || at + len >= n)
		return 0;
	hdr h;
	if (!parse_header(s, len, &h))
		return 0;
	/* the next line: a frame, a blank line or the next header */
	const char *s2;
	size_t l2 = tk_head_line(head, n, at + len + 1, &s2);
	if (l2 > 0 && s2[l2 - 1] == '\r')
		l2--;
	if (l2 == 0 || s2[0] == '#')
		return h.has_time || h.rest; /* without a time field, only with a frame to go by */
	size_t i = 0;
	while (i < l2 && (s2[i] == ' ' || s2[i] == '\t'))
		i++;
	hdr h2;
	if (parse_header(s2, l2, &h2))
		return h.has_time || h.rest;
	return i < l2 && (i > 0 || memchr(s2, '\t', l2)) && frame_shaped(s2 + i, l2 - i);
}

static int bad_line(perf *x, const char *s, size_t n, uint64_t line, tk_error *err)
{
	unsigned long long ln = (unsigned long long)line;
	tok t[64];
	size_t k = tokenize(s, n, t, 64);
	if (find_time(t, k) < 0 && !x->samples)
		return tk_error_set(err,
		                    "%s:%llu: cannot find the thread id and event in this sample header (no time field "
		                    "to go by: re-run `perf script -F +time`)",
		                    x->name, ln);
	if (find_time(t, k) < 0)
		return tk_error_set(err,
		                    "%s:%llu: expected a sample header `COMM TID [CPU] [SECONDS:] [PERIOD] EVENT:` or an "
		                    "indented frame `ADDR SYMBOL (DSO)`",
		                    x->name, ln);
	return tk_error_set(err, "%s:%llu: expected a sample header `COMM PID/TID [CPU] SECONDS: [PERIOD] EVENT:` (no thread id before the time)",
	                    x->name, ln);
}

static int perf_read(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	perf x = {0};
	x.p = p;
	x.o = o;
	x.name = tk_input_name(in);
	x.chosen = -1;
	tk_lines l;
	tk_lines_init(&l, in, o);
	const char *s;
	size_t n;
	int rc;
	hdr h;
	while ((rc = tk_lines_next(&l, &s, &n, err)) > 0) {
		if (!n) {
			finish(&x);
			continue;
		}
		if (s[0] == '#' && !x.in_sample)
			continue;
		size_t i = 0;
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == n) {
			finish(&x);
			continue;
		}
		/* Frames are indented (a tab from perf; spaces from some tools; report_sample.py's old
		 * `%16x\t` has no indentation for a 16-digit address). A line indented with a tab is a
		 * frame; anything else is a header if it parses as one. */
		int is_frame = s[0] == '\t' || (x.in_sample && frame_shaped(s + i, n - i) && !parse_header(s, n, &h));
		if (is_frame) {
			if (!x.in_sample) {
				rc = tk_error_set(err, "%s:%llu: a frame outside a sample (no header line before it)", x.name,
				                  (unsigned long long)l.lineno);
				break;
			}
			if (!x.keep)
				continue;
			if (x.tracing_data || (n - i == 13 && memcmp(s + i, "tracing data:", 13) == 0)) {
				x.tracing_data = 1; /* report_sample.py --show_tracing_data: key : value lines */
				continue;
			}
			if (!frame(&x, s + i, n - i)) {
				rc = tk_error_set(err, "%s:%llu: expected a frame `ADDR SYMBOL+0xOFF (DSO)`", x.name,
				                  (unsigned long long)l.lineno);
				break;
			}
			continue;
		}
		finish(&x); /* samples without -g follow each other without blank lines */
		if (!parse_header(s, n, &h)) {
			rc = bad_line(&x, s, n, l.lineno, err);
			break;
		}
		if ((rc = header(&x, &h, s, l.lineno, err)) < 0)
			break;
	}
	if (rc == 0)
		finish(&x);
	tk_lines_free(&l);
	free(x.frames);
	free(x.fkeys);
	free(x.ftext);
	tk_hidx_free(&x.fidx);
	if (rc < 0)
		return -1;
	char list[1024];
	size_t ll = 0;
	list[0] = 0;
	for (size_t e = 0; e < x.nevents && ll + 1 < sizeof list; e++) {
		int w = snprintf(list + ll, sizeof list - ll, "%s%s (%llu sample%s)", e ? ", " : "", x.events[e].name,
		                 (unsigned long long)x.events[e].samples, x.events[e].samples == 1 ? "" : "s");
		if (w < 0)
			break;
		ll += (size_t)w;
	}
	if (ll >= sizeof list)
		ll = sizeof list - 1;
	if (x.more_events)
		snprintf(list + ll, sizeof list - ll, ", …");
	if (o->event && x.chosen < 0)
		return tk_error_set(err, "%s: no samples of event `%s`; the file has %s", x.name, o->event,
		                    x.nevents ? list : "no event names");
	if (!x.samples)
		return tk_error_set(err, "%s: no samples", x.name);
	tk_unit unit = TK_UNIT_SAMPLES;
	if (o->weight == TK_READ_WEIGHT_PERIOD)
		unit = x.chosen >= 0 ? period_unit(x.events[x.chosen].name) : TK_UNIT_EVENTS;
	tk_profile_set_unit(p, unit);
	tk_profile_set_meta(p, "format", "perf-script");
	tk_profile_set_meta(p, "events", x.nevents ? list : "(not printed)");
	if (x.chosen >= 0)
		tk_read_meta_event(p, x.events[x.chosen].name, x.nevents, o->event);
	tk_profile_set_meta(p, "weight",
	                    o->weight == TK_READ_WEIGHT_PERIOD
	                        ? "period (each sample weighs its period, as FlameGraph and inferno sum it)"
	                        : "samples (each sample counts 1; --weight period sums the periods)");
	if (x.untimed)
		tk_profile_set_meta(p, "time", x.timed ? "some samples have no time field" : "no time field (samples in file order)");
	tk_read_meta_rows(p, x.samples, x.kept);
	return 0;
}

const tk_reader tk_reader_perf = {"perf-script", perf_sniff, perf_read};
