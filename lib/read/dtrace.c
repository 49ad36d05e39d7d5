/*
 * DTrace aggregations of stacks, as `dtrace` prints them when it exits:
 *
 *   $ dtrace -x ustackframes=100 -n 'profile-997 /pid == $target/ { @[ustack()] = count(); }' -c ./app -o out.stacks
 *
 *               libsystem_kernel.dylib`__psynch_cvwait+0xa
 *               libsystem_pthread.dylib`_pthread_cond_wait+0x4fa
 *               app`main+0x5f
 *               0x7ff80d3b5366
 *                 17
 *   (blank line)
 *
 * — the input of FlameGraph's stackcollapse.pl and inferno's collapse-dtrace. Each aggregation key
 * is its stack frames, leaf first, one a line, then the aggregated value alone on a line, indented
 * further. Frames are `module`function+0xoffset`, `module`function`, a bare `0xADDR` (no symbol),
 * or anything else a key may hold (`@[execname, ustack()]` prints the name first): a module becomes
 * the frame's binary, a bare address the frame's address, the offset is dropped (as both peers drop
 * it). A key of several stacks (`@[stack(), ustack()]`: kernel, blank line, user) is one stack, the
 * kernel frames leafward of the user ones, as the peers fold it. The value is a count (count(), or
 * sum() of anything): it is the sample count and the weight (unit "samples"). What dtrace prints
 * before the first stack (the `CPU ID FUNCTION:NAME` line and the probe lines a tick or END prints,
 * `dtrace: description … matched N probes` when stderr is kept) is skipped. A quantize()
 * distribution is not a stack aggregation and is refused by name. DTrace records no threads: the
 * profile has one thread, with no name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/internal.h"
#include "read/lines.h"
#include "tracekit/read.h"
#include "util/mem.h"

typedef struct dtr {
	tk_profile *p;
	const char *name;
	tk_frame_id *frames;
	size_t nframes, capframes;
	uint64_t first_frame_line; /* the line of the key's first frame, 0 = none */
	tk_thread_id thread;
	int have_thread;
	uint64_t keys, total;
} dtr;

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static size_t indent(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

static size_t trim_end(const char *s, size_t n)
{
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n;
}

/* "12345" alone (after trimming): the aggregated value. */
static int count_line(const char *s, size_t n, uint64_t *v)
{
	if (!n || n > 20)
		return 0;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return 0;
		uint64_t d = (uint64_t)(s[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return 0;
		x = x * 10 + d;
	}
	*v = x;
	return 1;
}

/* "0x7ff80d3b5366" */
static int hex_addr(const char *s, size_t n, uint64_t *a)
{
	if (n < 3 || n > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return 0;
	uint64_t v = 0;
	for (size_t i = 2; i < n; i++) {
		if (!is_hex(s[i]))
			return 0;
		v = v << 4 | (uint64_t)(is_digit(s[i]) ? s[i] - '0' : (s[i] | 0x20) - 'a' + 10);
	}
	*a = v;
	return 1;
}

/* Without a trailing "+0x1f" (a hex offset); n if there is none. */
static size_t strip_offset(const char *s, size_t n)
{
	for (size_t k = n; k > 0; k--)
		if (s[k - 1] == '+') {
			if (n - k < 3 || s[k] != '0' || s[k + 1] != 'x')
				return n;
			for (size_t m = k + 2; m < n; m++)
				if (!is_hex(s[m]))
					return n;
			return k - 1;
		}
	return n;
}

static void add_frame(dtr *x, const char *s, size_t n)
{
	tk_frame f = {0};
	uint64_t a;
	if (hex_addr(s, n, &a)) {
		f.addr = a;
	} else {
		const char *tick = memchr(s, '`', n);
		const char *fn = s;
		size_t fl = n;
		if (tick && tick > s) {
			tk_binary b = {0};
			b.name = b.path = tk_intern(x->p, s, (size_t)(tick - s));
			f.binary = tk_binary_add(x->p, &b);
			fn = tick + 1;
			fl = (size_t)(s + n - fn);
		}
		fl = strip_offset(fn, fl);
		if (hex_addr(fn, fl, &a))
			f.addr = a; /* module`0x1234: an address inside a module with no symbol */
		else if (fl)
			f.name = tk_intern(x->p, fn, fl);
		else
			f.name = tk_intern(x->p, s, n); /* "`" alone or "+0x10": keep the text */
	}
	if (x->nframes == 0)
		f.flags |= TK_FRAME_LEAF_PC;
	TK_GROW(x->frames, x->capframes, x->nframes + 1);
	x->frames[x->nframes++] = tk_frame_add(x->p, &f);
}

/* A line of a quantize()/lquantize() table: "value  ---- Distribution ---- count". */
static int distribution_header(const char *s, size_t n)
{
	return memmem(s, n, "Distribution", 12) && memmem(s, n, "value", 5) && memmem(s, n, "count", 5);
}

/* The `CPU     ID                    FUNCTION:NAME` line dtrace prints before probe output. */
static int probe_table_header(const char *s, size_t n)
{
	return n >= 3 && memcmp(s, "CPU", 3) == 0 && memmem(s, n, "FUNCTION:NAME", 13);
}

/* A probe line, " 30  76446                       :tick-10ms": CPU, probe id, FUNCTION:NAME. dtrace
 * prints one each time a probe without -q fires (a tick that printa()s the aggregation, END). */
static int probe_line(const char *s, size_t n)
{
	size_t i = 0, field = 0;
	while (i < n) {
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == n)
			break;
		size_t b = i;
		int digits = 1, colon = 0;
		for (; i < n && s[i] != ' ' && s[i] != '\t'; i++) {
			digits &= is_digit(s[i]);
			colon |= s[i] == ':';
		}
		if ((field < 2 && !digits) || (field == 2 && !colon) || field > 2 || i == b)
			return 0;
		field++;
	}
	return field == 3;
}

static int dtrace_message(const char *s, size_t n)
{
	return n >= 8 && memcmp(s, "dtrace: ", 8) == 0;
}

static int dtrace_sniff(const unsigned char *head, size_t n)
{
	size_t at = 0, frames = 0, ticked = 0;
	int in_table = 0;
	const char *s;
	while (at < n) {
		size_t len = tk_head_line(head, n, at, &s);
		int complete = at + len < n;
		at += len + 1;
		if (len && s[len - 1] == '\r')
			len--;
		size_t i = indent(s, len), e = i + trim_end(s + i, len - i);
		if (i == e) {
			in_table = 0;
			continue;
		}
		if (!frames && (probe_table_header(s, len) || dtrace_message(s, len))) {
			in_table = probe_table_header(s, len);
			continue;
		}
		if ((in_table || probe_line(s, len)) && !frames)
			continue; /* " 30  76446   :tick-10ms" */
		if (i == 0)
			return 0; /* everything of an aggregation is indented */
		uint64_t v;
		if (count_line(s + i, e - i, &v))
			return frames > 0 && ticked > 0 && complete;
		if (!complete)
			break;
		if (memchr(s + i, '`', e - i) || hex_addr(s + i, e - i, &v))
			ticked++;
		frames++;
	}
	/* the head ended inside a long first stack: only `module`function lines so far */
	return frames >= 4 && ticked == frames;
}

static int dtrace_read(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	dtr x = {0};
	x.p = p;
	x.name = tk_input_name(in);
	tk_profile_set_unit(p, TK_UNIT_SAMPLES);
	tk_lines l;
	tk_lines_init(&l, in, o);
	const char *s;
	size_t n;
	int rc, in_table = 0;
	while ((rc = tk_lines_next(&l, &s, &n, err)) > 0) {
		size_t i = indent(s, n), e = i + trim_end(s + i, n - i);
		unsigned long long ln = (unsigned long long)l.lineno;
		if (i == e) {
			in_table = 0; /* a blank line inside a key separates its stacks: keep collecting */
			continue;
		}
		/* between keys: the header and probe lines of ticks that printa() (several printouts in one
		 * file add up), and dtrace's own messages when stderr was kept */
		if (!x.nframes && (probe_table_header(s, n) || dtrace_message(s, n))) {
			in_table = probe_table_header(s, n);
			continue;
		}
		if (!x.nframes && (in_table || probe_line(s, n)))
			continue;
		if (distribution_header(s, n)) {
			rc = tk_error_set(err,
			                  "%s:%llu: a DTrace quantize()/lquantize() distribution, not stacks: aggregate "
			                  "stacks with count() (`@[ustack()] = count();`) to read them",
			                  x.name, ln);
			break;
		}
		if (i == 0) {
			rc = tk_error_set(err,
			                  "%s:%llu: expected an indented frame (`module`function+0xoffset`) or count; "
			                  "a DTrace aggregation is printed indented",
			                  x.name, ln);
			break;
		}
		uint64_t v;
		if (count_line(s + i, e - i, &v)) {
			if (!x.have_thread) {
				x.thread = tk_thread_get_or_add(p, -1, 0, 0, 0);
				x.have_thread = 1;
			}
			tk_stack_id st = tk_stack_from_leaf_first(p, x.frames, x.nframes);
			if (v)
				tk_sample_add_n(p, x.thread, st, v, v);
			x.keys++;
			x.total += v;
			x.nframes = 0;
			x.first_frame_line = 0;
			continue;
		}
		if (x.nframes >= 65536) {
			rc = tk_error_set(err, "%s:%llu: a stack of more than 65536 frames (from line %llu)", x.name, ln,
			                  (unsigned long long)x.first_frame_line);
			break;
		}
		if (!x.first_frame_line)
			x.first_frame_line = l.lineno;
		add_frame(&x, s + i, e - i);
	}
	tk_lines_free(&l);
	free(x.frames);
	if (rc < 0)
		return -1;
	if (x.nframes)
		return tk_error_set(err, "%s:%llu: the stack starting here has no count after it (a truncated file?)",
		                    x.name, (unsigned long long)x.first_frame_line);
	if (!x.keys)
		return tk_error_set(err, "%s: no stacks", x.name);
	tk_profile_set_meta(p, "format", "dtrace-aggregation");
	tk_profile_set_meta(p, "folded-threads", "none"); /* no threads: collapse writes no thread frame */
	tk_read_meta_rows(p, x.keys, x.keys);
	tk_profile_set_meta(p, "weight", "the aggregation's values (count(): samples)");
	return 0;
}

const tk_reader tk_reader_dtrace = {"dtrace", dtrace_sniff, dtrace_read};
