/*
 * Folded ("collapsed") stacks: one line per stack, `frame;frame;…;frame COUNT`, root first — the
 * input of FlameGraph's flamegraph.pl and inferno, and what `tracekit collapse` writes.
 *
 * Our own lines start with a thread frame `NAME tid=TID`: it becomes the thread (pid unknown), so
 * folded → model → folded is the identity for our output (`tracekit collapse` writes what it
 * read, byte for byte). Lines without it (FlameGraph's, inferno's) go to one unnamed thread and
 * the profile is marked so that `collapse` does not invent a thread frame for them. Frames are
 * kept verbatim, module annotations included (`func_[k]` kernel, `_[j]` JIT, `_[i]` inlined —
 * the last also flags the frame as inlined); a frame that is exactly `0x` + lowercase hex (how we
 * write an unsymbolicated frame) becomes an address. COUNT is a whole number in the unit of
 * whoever wrote the file, which the format does not say: the profile's unit is "samples" and each
 * line adds COUNT to both weight and sample count. The identity has two limits, both from what the
 * format cannot say: names holding ';' or a line break (the writer replaces them), and the order of
 * threads of equal weight when several pids are involved (written in pid order; read back, the pids
 * are made up).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/lines.h"
#include "tracekit/read.h"
#include "util/mem.h"

/* "NAME tid=123" → name length and tid. */
static int thread_frame(const char *s, size_t n, size_t *name_len, uint64_t *tid)
{
	size_t j = n;
	while (j > 0 && s[j - 1] >= '0' && s[j - 1] <= '9')
		j--;
	if (j == n || n - j > 20 || j < 5 || memcmp(s + j - 5, " tid=", 5) != 0)
		return 0;
	uint64_t v = 0;
	for (size_t i = j; i < n; i++) {
		uint64_t d = (uint64_t)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	*tid = v;
	*name_len = j - 5;
	return 1;
}

/* Only the exact text tk_frame_label would print for an address, so labels survive unchanged. */
static int canonical_hex(const char *s, size_t n, uint64_t *addr)
{
	if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x' || (s[2] == '0' && n > 3))
		return 0;
	uint64_t v = 0;
	for (size_t i = 2; i < n; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else
			return 0;
	}
	*addr = v;
	return 1;
}

/* The count at the end of a line: " 123". Returns the stack's length, or 0 if there is none. */
static size_t split_count(const char *s, size_t n, uint64_t *count)
{
	size_t j = n;
	while (j > 0 && s[j - 1] >= '0' && s[j - 1] <= '9')
		j--;
	if (j == n || j < 2 || s[j - 1] != ' ' || n - j > 19)
		return 0;
	*count = strtoull(s + j, NULL, 10);
	size_t e = j - 1;
	while (e > 0 && s[e - 1] == ' ')
		e--;
	return e;
}

/* Threads are told apart by (name, tid), as the lines tell them apart; the model keys threads by
 * (pid, tid) and the pid is unknown, so a second name with the same tid gets pid -2, -3 … */
typedef struct tkey {
	tk_str name;
	uint64_t tid;
	tk_thread_id t;
} tkey;

typedef struct tmap {
	tkey *k;
	size_t n, cap, last;
} tmap;

static tk_thread_id thread_for(tmap *m, tk_profile *p, tk_str name, uint64_t tid)
{
	if (m->n && m->k[m->last].name == name && m->k[m->last].tid == tid)
		return m->k[m->last].t;
	int64_t pid = -1;
	for (size_t i = 0; i < m->n; i++) {
		if (m->k[i].tid != tid)
			continue;
		if (m->k[i].name == name) {
			m->last = i;
			return m->k[i].t;
		}
		int64_t used = tk_thread_get(p, m->k[i].t)->pid;
		if (used <= pid)
			pid = used - 1;
	}
	TK_GROW(m->k, m->cap, m->n + 1);
	m->k[m->n] = (tkey){name, tid, tk_thread_get_or_add(p, pid, tid, name, 0)};
	m->last = m->n;
	return m->k[m->n++].t;
}

static int folded_sniff(const unsigned char *head, size_t n)
{
	size_t at = 0, good = 0;
	while (at < n) {
		const char *s;
		size_t len = tk_head_line(head, n, at, &s);
		int complete = at + len < n;
		if (!complete && n >= TK_INPUT_HEAD) {
			/* cut by the head's end; a first line longer than the head (deep stacks) must at least
			 * look like frames */
			if (!good && at == 0 && s[0] != ' ' && s[0] != '\t' && s[0] != '<' && memchr(s, ';', len) &&
			    !memchr(s, 0, len))
				good = 1;
			break;
		}
		at += len + 1;
		if (len && s[len - 1] == '\r')
			len--;
		if (!len)
			continue;
		uint64_t c;
		if (s[0] == ' ' || s[0] == '\t' || s[0] == '<' || !split_count(s, len, &c) || memchr(s, 0, len))
			return 0;
		good++;
	}
	return good > 0;
}

static int folded_read(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	const char *name = tk_input_name(in);
	tk_lines l;
	tk_lines_init(&l, in, o);
	tk_profile_set_unit(p, TK_UNIT_SAMPLES);
	int have_anon = 0, have_threads = 0;
	tmap tm = {0};
	struct {
		char *s; /* the previous line's stack text */
		size_t n, cap, first, nf, capend, capst;
		size_t *end;     /* where its frame k ends */
		tk_stack_id *st; /* its stack after frame k */
	} pv = {0};
	tk_thread_id anon = 0;
	uint64_t lines = 0;
	const char *s;
	size_t n;
	int rc;
	while ((rc = tk_lines_next(&l, &s, &n, err)) > 0) {
		if (!n)
			continue;
		uint64_t count;
		size_t len = split_count(s, n, &count);
		if (!len) {
			rc = tk_error_set(
			    err, "%s:%llu: expected `frame;frame;… COUNT` (a whole number after the last space)", name,
			    (unsigned long long)l.lineno);
			break;
		}
		lines++;
		size_t pos = 0;
		tk_thread_id t;
		const char *semi = memchr(s, ';', len);
		size_t flen = semi ? (size_t)(semi - s) : len, nl;
		uint64_t tid;
		if (thread_frame(s, flen, &nl, &tid)) {
			t = thread_for(&tm, p, nl ? tk_intern(p, s, nl) : 0, tid);
			have_threads = 1;
			pos = semi ? flen + 1 : len;
		} else {
			if (!have_anon) {
				anon = tk_thread_get_or_add(p, -1, 0, 0, 0);
				have_anon = 1;
			}
			t = anon;
		}
		tk_stack_id st = 0;
		size_t start = pos;
		/* Folded files are sorted, so a line mostly repeats the previous one's first frames: reuse
		 * their stacks instead of interning them again (same text, same thread, same stack). */
		size_t nf = 0;
		if (pv.n && pv.first == pos) {
			size_t c = 0, m = len < pv.n ? len : pv.n;
			while (c < m && s[c] == pv.s[c])
				c++;
			if (c >= pos)
				while (nf < pv.nf && (pv.end[nf] < c || (pv.end[nf] == len && pv.end[nf] <= c)))
					nf++;
			if (nf) {
				st = pv.st[nf - 1];
				pos = pv.end[nf - 1] + 1;
				if (pos == len) { /* the reused frames end in a trailing ';' */
					rc = tk_error_set(err, "%s:%llu: empty frame at column %zu", name,
					                  (unsigned long long)l.lineno, pos + 1);
					break;
				}
			}
		}
		while (pos < len) {
			const char *f = s + pos;
			const char *e = memchr(f, ';', len - pos);
			size_t fl = e ? (size_t)(e - f) : len - pos;
			if (!fl) {
				rc = tk_error_set(err, "%s:%llu: empty frame at column %zu", name,
				                  (unsigned long long)l.lineno, pos + 1);
				break;
			}
			tk_frame fr = {0};
			if (!canonical_hex(f, fl, &fr.addr))
				fr.name = tk_intern(p, f, fl);
			if (fl > 4 && memcmp(f + fl - 4, "_[i]", 4) == 0)
				fr.flags |= TK_FRAME_INLINED;
			st = tk_stack_push(p, st, tk_frame_add(p, &fr));
			TK_GROW(pv.end, pv.capend, nf + 1);
			TK_GROW(pv.st, pv.capst, nf + 1);
			pv.end[nf] = pos + fl;
			pv.st[nf++] = st;
			pos += fl + 1;
			if (e && pos == len) { /* a trailing ';' */
				rc = tk_error_set(err, "%s:%llu: empty frame at column %zu", name,
				                  (unsigned long long)l.lineno, pos + 1);
				break;
			}
		}
		if (rc < 0)
			break;
		tk_sample_add_n(p, t, st, count, count);
		TK_GROW(pv.s, pv.cap, len);
		memcpy(pv.s, s, len);
		pv.n = len;
		pv.nf = nf;
		pv.first = start;
	}
	tk_lines_free(&l);
	free(tm.k);
	free(pv.s);
	free(pv.end);
	free(pv.st);
	if (rc < 0)
		return -1;
	if (!lines)
		return tk_error_set(err, "%s: no folded stacks", name);
	tk_profile_set_meta(p, "format", "folded");
	/* FlameGraph's and inferno's lines name no thread: writing one would change every line */
	if (!have_threads)
		tk_profile_set_meta(p, "folded-threads", "none");
	return 0;
}

const tk_reader tk_reader_folded = {"folded", folded_sniff, folded_read};
