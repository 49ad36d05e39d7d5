/*
 * Linux `perf script` text (perf record -g; perf script), the input of FlameGraph's
 * stackcollapse-perf.pl and of the Firefox Profiler's perf importer:
 *
 *   sleep 27215   435.267644:     250000 cpu-clock:ppp:
 *   	ffffffff821ce693 mas_empty_area_rev+0x23 ([kernel.kallsyms])
 *   	           20ca3 mmap64+0x13 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)
 *   	               0 [unknown] ([unknown])
 *   (blank line)
 *
 * The header is `COMM TID|PID/TID [CPU] SECONDS.FRAC: [PERIOD] EVENT:` (COMM may hold spaces, so it
 * is found from the timestamp leftwards); without -g the one frame follows the event on the same
 * line. Frames are `ADDR SYMBOL+0xOFF (DSO)`, leaf first. Each sample counts once (unit
 * "samples"), as FlameGraph, inferno and the Firefox Profiler count them: the period's meaning
 * depends on the event and varies under frequency sampling. Times are kept relative to the first
 * sample, so --time-from/--time-to work. `[unknown]` symbols become address-only frames, the DSO
 * becomes the frame's binary (name = basename, path = as printed). Side-band records
 * (`PERF_RECORD_COMM`, `_MMAP2`, `_FORK` … from --show-*-events) are skipped. The time field (on by
 * default) is required: it is how a header line is told from a frame or a comm with digits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/lines.h"
#include "tracekit/read.h"
#include "util/mem.h"

typedef struct perf {
	tk_profile *p;
	const char *name;
	const tk_read_options *o;
	tk_frame_id *frames;
	size_t nframes, capframes;
	int in_sample, keep;
	tk_thread_id thread;
	uint64_t time, t0;
	int have_t0;
	uint64_t samples, kept;
	char events[256];
} perf;

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
static int frame(perf *x, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && is_hex(s[i]))
		i++;
	if (i == 0 || i > 16 || (i < n && s[i] != ' '))
		return 0;
	tk_frame f = {0};
	f.addr = strtoull(s, NULL, 16);
	while (i < n && s[i] == ' ')
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

static void finish(perf *x)
{
	if (!x->in_sample)
		return;
	x->in_sample = 0;
	if (!x->keep)
		return;
	tk_stack_id st = tk_stack_from_leaf_first(x->p, x->frames, x->nframes);
	tk_sample_add(x->p, x->thread, st, 1, x->time);
	x->kept++;
}

static void note_event(perf *x, const tok *ev)
{
	size_t n = ev->n - 1; /* without the ':' */
	const char *c = memchr(ev->s, ':', n);
	if (c)
		n = (size_t)(c - ev->s); /* "cpu-clock:ppp" → "cpu-clock" */
	size_t have = strlen(x->events);
	for (const char *s = x->events; *s;) { /* already listed? */
		const char *e = strchr(s, ',');
		size_t l = e ? (size_t)(e - s) : strlen(s);
		if (l == n && memcmp(s, ev->s, n) == 0)
			return;
		s += l + (e != NULL);
	}
	if (have + n + 2 < sizeof x->events) {
		if (have)
			x->events[have++] = ',';
		memcpy(x->events + have, ev->s, n);
		x->events[have + n] = 0;
	}
}

static int header(perf *x, const char *s, size_t n, uint64_t line, tk_error *err)
{
	tok t[64];
	size_t k = tokenize(s, n, t, 64);
	int ti = find_time(t, k);
	int64_t pid;
	uint64_t tid;
	int ii = ti > 0 ? find_tid(t, ti, &pid, &tid) : -1;
	if (ii < 0)
		return tk_error_set(err, "%s:%llu: expected a sample header `COMM PID/TID [CPU] SECONDS: EVENT:`",
		                    x->name, (unsigned long long)line);
	/* side-band records (--show-task-events, --show-mmap-events …) are not samples */
	if ((size_t)ti + 1 < k && t[ti + 1].n > 12 && memcmp(t[ti + 1].s, "PERF_RECORD_", 12) == 0)
		return 0;
	size_t comm_len = (size_t)(t[ii - 1].s + t[ii - 1].n - s);
	/* seconds → ns */
	uint64_t ip, frac;
	unsigned fd;
	tk_parse_decimal(t[ti].s, t[ti].n, &ip, &frac, &fd);
	if (ip > UINT64_MAX / 1000000000ull - 1)
		return tk_error_set(err, "%s:%llu: timestamp too large", x->name, (unsigned long long)line);
	uint64_t ns = ip * 1000000000ull + frac;
	if (!x->have_t0) {
		x->t0 = ns;
		x->have_t0 = 1;
	}
	x->time = ns >= x->t0 ? ns - x->t0 : 0;
	x->keep = x->time >= x->o->time_from && x->time < x->o->time_to;
	tk_str comm = tk_intern(x->p, s, comm_len);
	x->thread = tk_thread_get_or_add(x->p, pid, tid, comm, pid >= 0 && (uint64_t)pid == tid ? comm : 0);
	tk_thread_set_name(x->p, x->thread, comm); /* the latest comm (exec renames) */
	x->in_sample = 1;
	x->nframes = 0;
	x->samples++;
	/* [PERIOD] EVENT: then, without -g, the one frame on this line */
	size_t i = (size_t)ti + 1;
	if (i < k && all_digits(t[i].s, t[i].n))
		i++;
	if (i < k && t[i].s[t[i].n - 1] == ':') {
		note_event(x, &t[i]);
		i++;
	}
	if (i < k) {
		const char *rest = t[i].s;
		if (!frame(x, rest, (size_t)(s + n - rest)))
			return tk_error_set(err, "%s:%llu: expected `ADDR SYMBOL (DSO)` after the event", x->name,
			                    (unsigned long long)line);
	}
	return 0;
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
	if (s[0] == ' ' || s[0] == '\t' || memchr(s, '\t', len) || at + len >= n)
		return 0;
	tok t[64];
	size_t k = tokenize(s, len, t, 64);
	int64_t pid;
	uint64_t tid;
	int ti = find_time(t, k);
	if (ti < 0 || find_tid(t, ti, &pid, &tid) < 0)
		return 0;
	/* the next line: a frame, a blank line or the next header */
	const char *s2;
	size_t l2 = tk_head_line(head, n, at + len + 1, &s2);
	if (l2 == 0 || s2[0] == '\r' || s2[0] == '#')
		return 1;
	if (s2[0] == ' ' || s2[0] == '\t') {
		size_t i = 0;
		while (i < l2 && (s2[i] == ' ' || s2[i] == '\t'))
			i++;
		size_t j = i;
		while (j < l2 && is_hex(s2[j]))
			j++;
		return j > i && (j == l2 || s2[j] == ' ');
	}
	tok t2[64];
	size_t k2 = tokenize(s2, l2, t2, 64);
	int t2i = find_time(t2, k2);
	return t2i > 0 && find_tid(t2, t2i, &pid, &tid) >= 0;
}

static int perf_read(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	perf x = {0};
	x.p = p;
	x.o = o;
	x.name = tk_input_name(in);
	tk_profile_set_unit(p, TK_UNIT_SAMPLES);
	tk_lines l;
	tk_lines_init(&l, in, o);
	const char *s;
	size_t n;
	int rc;
	while ((rc = tk_lines_next(&l, &s, &n, err)) > 0) {
		if (!n) {
			finish(&x);
			continue;
		}
		if (s[0] == '#' && !x.in_sample)
			continue;
		if (s[0] == ' ' || s[0] == '\t') {
			size_t i = 0;
			while (i < n && (s[i] == ' ' || s[i] == '\t'))
				i++;
			if (i == n) {
				finish(&x);
				continue;
			}
			if (!x.in_sample) {
				rc = tk_error_set(err, "%s:%llu: a frame outside a sample (no header line before it)",
				                  x.name, (unsigned long long)l.lineno);
				break;
			}
			if (!frame(&x, s + i, n - i)) {
				rc = tk_error_set(err, "%s:%llu: expected a frame `ADDR SYMBOL+0xOFF (DSO)`", x.name,
				                  (unsigned long long)l.lineno);
				break;
			}
			continue;
		}
		finish(&x); /* samples without -g follow each other without blank lines */
		if ((rc = header(&x, s, n, l.lineno, err)) < 0)
			break;
	}
	if (rc == 0)
		finish(&x);
	tk_lines_free(&l);
	free(x.frames);
	if (rc < 0)
		return -1;
	if (!x.samples)
		return tk_error_set(err, "%s: no samples", x.name);
	tk_profile_set_meta(p, "format", "perf-script");
	tk_profile_set_meta(p, "events", x.events[0] ? x.events : "(not printed)");
	char buf[32];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)x.samples);
	tk_profile_set_meta(p, "rows", buf);
	if (x.kept != x.samples) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)x.kept);
		tk_profile_set_meta(p, "rows-in-time-range", buf);
	}
	return 0;
}

const tk_reader tk_reader_perf = {"perf-script", perf_sniff, perf_read};
