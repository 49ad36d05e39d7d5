/*
 * Folded ("collapsed") stacks: one line per stack, `frame;frame;…;frame COUNT`, root first — the
 * input of FlameGraph's flamegraph.pl and inferno, and what `tracekit collapse` writes.
 *
 * Our own lines start with a thread frame `NAME tid=TID`: it becomes the thread (pid unknown;
 * "(unnamed)" is a thread without a name), so folded → model → folded is the identity for our
 * output. Lines without it (FlameGraph's, inferno's) go to one unnamed thread and the profile is
 * marked so that `collapse` does not invent a thread frame for them. Frames are the ';'-separated
 * fields, kept verbatim (blanks included; an empty field is an empty frame, TK_FRAME_EMPTY), module
 * annotations too (`func_[k]` kernel, `_[j]` JIT, `_[i]` inlined — the last also flags the frame as
 * inlined); a frame that is exactly `0x` + lowercase hex (how we write an unsymbolicated frame)
 * becomes an address.
 *
 * COUNT follows the last blanks (space or tab): digits with an optional fraction (`12`, `1.5`,
 * `31.0`, `6.`), as flamegraph.pl takes it, in the unit of whoever wrote the file (the format does
 * not say): the profile's unit is "samples". Decimals stay exact: weights are integers in 10^-D of
 * the count, D the most decimals seen so far (meta "weight-decimals"; a line with more rescales the
 * profile, tk_profile_scale_weights); a whole count adds that many samples, a decimal one adds one.
 * A file whose first stack line ends in two counts is differential (`STACK BEFORE AFTER`,
 * difffolded.pl and inferno-diff-folded): tk_read_options.run picks the count (2 by default, as
 * flamegraph.pl draws), and every line must then have two. Lines starting "# " are comments;
 * "# key: value" (Austin's header and trailer) become meta "header.KEY". A line that fits no rule
 * is an error naming it, or with keep_going is skipped, counted ("skipped-lines") and warned about
 * once. UTF-16 with a byte-order mark is decoded by the line reader.
 *
 * Round-trip limits, all from what the format cannot say: names holding ';' or a line break (the
 * writer replaces them), names ending in blanks or in a blank and a number (read as separator and
 * count), a first frame starting "# ", and the order of threads of equal weight when several pids
 * are involved (written in pid order; read back, the pids are made up).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/lines.h"
#include "tracekit/read.h"
#include "util/hidx.h"
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

/* A count: digits, then optionally '.' and digits ("31", "1.5", "31.0", "6."), as flamegraph.pl and
 * inferno take it. The fraction's trailing zeros are dropped, so "31.0" is the whole number 31. */
typedef struct fcount {
	uint64_t ip, frac; /* frac: the fraction's digits as a number, fd of them */
	unsigned fd;
} fcount;

/* 0 ok; -1 not a count; -2 a count we cannot keep exactly (more than 9 decimals or 2^64). */
static int parse_count(const char *s, size_t n, fcount *c)
{
	size_t i = 0;
	uint64_t v = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9') {
		uint64_t d = (uint64_t)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -2;
		v = v * 10 + d;
		i++;
	}
	if (i == 0)
		return -1;
	c->ip = v;
	c->frac = 0;
	c->fd = 0;
	if (i == n)
		return 0;
	if (s[i] != '.')
		return -1;
	size_t f = ++i;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i != n)
		return -1;
	size_t e = n;
	while (e > f && s[e - 1] == '0')
		e--;
	if (e - f > 9)
		return -2;
	for (size_t k = f; k < e; k++)
		c->frac = c->frac * 10 + (uint64_t)(s[k] - '0');
	c->fd = (unsigned)(e - f);
	return 0;
}

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The counts at the end of a line: `STACK COUNT` or `STACK COUNT COUNT` (differential). Returns the
 * number of counts found (1 or 2; *two is the second only if the token before the last is a count
 * after a blank), with *stack_len the stack text's length without the blanks before the counts; 0
 * when the line does not end in a count after a blank, -2 when it ends in one we cannot keep. */
static int split_counts(const char *s, size_t n, fcount *first, fcount *second, size_t *stack_len)
{
	size_t j = n;
	while (j > 0 && !blank(s[j - 1]))
		j--;
	if (j == 0 || j == n)
		return 0;
	int rc = parse_count(s + j, n - j, second);
	if (rc < 0)
		return rc == -2 ? -2 : 0;
	size_t e = j;
	while (e > 0 && blank(s[e - 1]))
		e--;
	*stack_len = e;
	size_t i = e;
	while (i > 0 && !blank(s[i - 1]))
		i--;
	if (i > 0 && i < e && parse_count(s + i, e - i, first) == 0) {
		size_t e2 = i;
		while (e2 > 0 && blank(s[e2 - 1]))
			e2--;
		*stack_len = e2;
		return 2;
	}
	*first = *second;
	return 1;
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

/* "# key: value" (Austin's header and trailer) → meta "header.KEY"; other '#' lines are comments. */
static void comment_line(tk_profile *p, const char *s, size_t n)
{
	size_t i = 1;
	while (i < n && blank(s[i]))
		i++;
	size_t k = i;
	while (k < n && (s[k] == '_' || s[k] == '-' || (s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z') ||
	                 (s[k] >= '0' && s[k] <= '9')))
		k++;
	if (k == i || k >= n || s[k] != ':' || k - i > 40)
		return;
	size_t v = k + 1;
	while (v < n && blank(s[v]))
		v++;
	size_t e = n;
	while (e > v && blank(s[e - 1]))
		e--;
	char key[64], *val = tk_xmalloc(e - v + 1);
	snprintf(key, sizeof key, "header.%.*s", (int)(k - i), s + i);
	memcpy(val, s + v, e - v);
	val[e - v] = 0;
	tk_profile_set_meta(p, key, val);
	free(val);
}

static int folded_sniff(const unsigned char *head, size_t n)
{
	size_t at = 0, good = 0, bad = 0;
	while (at < n) {
		const char *s;
		size_t len = tk_head_line(head, n, at, &s);
		int complete = at + len < n;
		if (!complete && n >= TK_INPUT_HEAD) {
			/* cut by the head's end; a first line longer than the head (deep stacks) must at least
			 * look like frames */
			if (!good && !bad && at == 0 && s[0] != ' ' && s[0] != '\t' && s[0] != '<' &&
			    memchr(s, ';', len) && !memchr(s, 0, len))
				good = 1;
			break;
		}
		at += len + 1;
		if (len && s[len - 1] == '\r')
			len--;
		if (!len || (s[0] == '#' && (len == 1 || blank(s[1]))))
			continue;
		if (memchr(s, 0, len))
			return 0;
		fcount a, b;
		size_t sl;
		if (s[0] == ' ' || s[0] == '\t' || s[0] == '<' || split_counts(s, len, &a, &b, &sl) == 0)
			bad++;
		else
			good++;
	}
	/* a folded file with a bad line or two is still folded: the reader names the line */
	return good > 0 && bad <= good;
}

/* Whole lines seen before → their (thread, stack): real folded files repeat a bounded set of stacks
 * (every run of a collapse tool, files concatenated), and one hash of the line then replaces
 * interning each of its frames (from its third sighting: see seen_before). The texts are kept to compare (a hash alone
 * could merge two stacks); past LCACHE_TEXT bytes no more lines are added, so an input of all-distinct stacks costs at
 * most that much memory beyond the model. */
#define LCACHE_TEXT (64u << 20)

typedef struct lentry {
	size_t off;
	uint32_t len;
	tk_thread_id t;
	tk_stack_id st;
} lentry;

typedef struct lcache {
	tk_hidx idx;
	lentry *e;
	size_t n, cap;
	char *text;
	size_t tn, tcap;
	/* hashes of lines seen once: a line's text is kept only when it comes a second time, so an
	 * input of distinct stacks pays a hash per line, not a copy */
	tk_hidx seen_idx;
	uint64_t *seen;
	size_t nseen, capseen;
} lcache;

static int seen_eq(const void *ctx, uint32_t i, const void *key)
{
	return ((const lcache *)ctx)->seen[i] == *(const uint64_t *)key;
}

/* Non-zero when h was seen before (then the line is worth keeping); records it otherwise. */
static int seen_before(lcache *c, uint64_t h)
{
	if (tk_hidx_find(&c->seen_idx, h, seen_eq, c, &h) != UINT32_MAX)
		return 1;
	if (c->nseen < (1u << 24)) {
		TK_GROW(c->seen, c->capseen, c->nseen + 1);
		c->seen[c->nseen] = h;
		tk_hidx_insert(&c->seen_idx, h, (uint32_t)c->nseen++);
	}
	return 0;
}

typedef struct lkey {
	const char *s;
	size_t n;
} lkey;

static int lentry_eq(const void *ctx, uint32_t i, const void *key)
{
	const lcache *c = ctx;
	const lkey *k = key;
	return c->e[i].len == k->n && memcmp(c->text + c->e[i].off, k->s, k->n) == 0;
}

static void lcache_add(lcache *c, uint64_t h, const char *s, size_t n, tk_thread_id t, tk_stack_id st)
{
	if (c->tn + n > LCACHE_TEXT || n > UINT32_MAX || c->n >= UINT32_MAX - 1)
		return;
	TK_GROW(c->text, c->tcap, c->tn + n + 1);
	memcpy(c->text + c->tn, s, n);
	TK_GROW(c->e, c->cap, c->n + 1);
	c->e[c->n] = (lentry){c->tn, (uint32_t)n, t, st};
	c->tn += n;
	tk_hidx_insert(&c->idx, h, (uint32_t)c->n++);
}

typedef struct fread_state {
	tk_profile *p;
	const char *name;
	const tk_read_options *o;
	unsigned decimals; /* the file's scale so far: weights are in 10^-decimals */
	int counts;        /* 1 or 2 counts a line (0 until the first stack line) */
	uint64_t counts_line;
	uint64_t skipped;
	char first_skip[256];
} fread_state;

static const uint64_t pow10_[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};

/* A line that fits no rule: an error, or with keep_going skipped and counted. Returns -1 to stop. */
static int bad_line(fread_state *f, uint64_t lineno, tk_error *err, const char *why)
{
	if (!f->o->keep_going)
		return tk_error_set(err, "%s:%llu: %s", f->name, (unsigned long long)lineno, why);
	if (!f->skipped++)
		snprintf(f->first_skip, sizeof f->first_skip, "line %llu: %s", (unsigned long long)lineno, why);
	return 0;
}

/* The value of c at the file's scale, raising the scale (and every weight already read) when c has
 * more decimals. Returns 0, or -1 with err. */
static int scaled(fread_state *f, const fcount *c, unsigned need, uint64_t lineno, uint64_t *v, tk_error *err)
{
	if (need > f->decimals) {
		if (tk_profile_scale_weights(f->p, pow10_[need - f->decimals]) < 0)
			return tk_error_set(err,
			                    "%s:%llu: the weights cannot be kept exactly with %u decimals (over 2^64)",
			                    f->name, (unsigned long long)lineno, need);
		f->decimals = need;
	}
	uint64_t m = pow10_[f->decimals], fr = c->frac * pow10_[f->decimals - c->fd];
	if (c->ip > (UINT64_MAX - fr) / m)
		return tk_error_set(err, "%s:%llu: the count is too large to keep exactly with %u decimals (over 2^64)",
		                    f->name, (unsigned long long)lineno, f->decimals);
	*v = c->ip * m + fr;
	return 0;
}

static int folded_read(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	fread_state f = {0};
	f.p = p;
	f.o = o;
	f.name = tk_input_name(in);
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
	lcache lc = {0};
	uint64_t lines = 0;
	const char *s;
	size_t n;
	int rc;
	char why[160];
	while ((rc = tk_lines_next(&l, &s, &n, err)) > 0) {
		size_t b = 0;
		while (b < n && blank(s[b]))
			b++;
		if (b == n)
			continue;
		if (s[0] == '#' && (n == 1 || blank(s[1]))) { /* "# …": a comment ("#frame;…" is a stack) */
			comment_line(p, s, n);
			continue;
		}
		fcount c1, c2;
		size_t len;
		int k = split_counts(s, n, &c1, &c2, &len);
		if (k <= 0) {
			if ((rc = bad_line(&f, l.lineno, err,
			                   k == -2
			                       ? "a count with more than 9 decimals or above 2^64 - 1"
			                       : "expected `frame;frame;… COUNT` (a count such as 12 or 1.5 after the "
			                         "last blank)")) < 0)
				break;
			continue;
		}
		if (!f.counts) {
			f.counts = k;
			f.counts_line = l.lineno;
			if (k == 1 && o->run) {
				rc = tk_error_set(err,
				                  "%s: --run %u: not a differential file (`STACK BEFORE AFTER`): line "
				                  "%llu has one count",
				                  f.name, o->run, (unsigned long long)l.lineno);
				break;
			}
		} else if (k != f.counts) {
			snprintf(why, sizeof why, "%s, but line %llu has %s",
			         k == 2 ? "two counts (`STACK BEFORE AFTER`)" : "one count",
			         (unsigned long long)f.counts_line,
			         f.counts == 2 ? "two (a differential file)" : "one");
			if ((rc = bad_line(&f, l.lineno, err, why)) < 0)
				break;
			continue;
		}
		const fcount *c = k == 2 && o->run == 1 ? &c1 : &c2;
		uint64_t count = 0;
		if ((rc = scaled(&f, c, c1.fd > c2.fd ? c1.fd : c2.fd, l.lineno, &count, err)) < 0)
			break;
		lines++;
		uint64_t h = tk_hash_bytes(s, len, 0);
		lkey key = {s, len};
		uint32_t hit = tk_hidx_find(&lc.idx, h, lentry_eq, &lc, &key);
		if (hit != UINT32_MAX) {
			if (count)
				tk_sample_add_n(p, lc.e[hit].t, lc.e[hit].st, count, c->fd ? 1 : c->ip);
			pv.n = 0; /* the previous line's frames are not known: no prefix to reuse */
			continue;
		}
		size_t pos = 0;
		tk_thread_id t;
		int more = 1; /* frames are the ';'-separated fields, empty ones included (`a;;b`, ` 5`) */
		const char *semi = memchr(s, ';', len);
		size_t flen = semi ? (size_t)(semi - s) : len, nl;
		uint64_t tid;
		if (thread_frame(s, flen, &nl, &tid)) {
			/* "(unnamed)" is how the writers name a thread without a name */
			int unnamed = nl == 9 && memcmp(s, "(unnamed)", 9) == 0;
			t = thread_for(&tm, p, nl && !unnamed ? tk_intern(p, s, nl) : 0, tid);
			have_threads = 1;
			pos = semi ? flen + 1 : len;
			more = semi != NULL;
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
			size_t cm = 0, m = len < pv.n ? len : pv.n;
			while (cm < m && s[cm] == pv.s[cm])
				cm++;
			if (cm >= pos)
				while (nf < pv.nf && (pv.end[nf] < cm || (pv.end[nf] == len && pv.end[nf] <= cm)))
					nf++;
			if (nf) {
				st = pv.st[nf - 1];
				pos = pv.end[nf - 1] + 1;
				more = pv.end[nf - 1] < len;
			}
		}
		while (more) {
			const char *fr0 = s + pos;
			const char *e = memchr(fr0, ';', len - pos);
			size_t fl = e ? (size_t)(e - fr0) : len - pos;
			tk_frame fr = {0};
			if (!fl)
				fr.flags = TK_FRAME_EMPTY;
			else if (!canonical_hex(fr0, fl, &fr.addr))
				fr.name = tk_intern(p, fr0, fl);
			if (fl > 4 && memcmp(fr0 + fl - 4, "_[i]", 4) == 0)
				fr.flags |= TK_FRAME_INLINED;
			st = tk_stack_push(p, st, tk_frame_add(p, &fr));
			TK_GROW(pv.end, pv.capend, nf + 1);
			TK_GROW(pv.st, pv.capst, nf + 1);
			pv.end[nf] = pos + fl;
			pv.st[nf++] = st;
			pos += fl + 1;
			more = e != NULL;
		}
		if (count)
			tk_sample_add_n(p, t, st, count, c->fd ? 1 : c->ip);
		if (seen_before(&lc, h))
			lcache_add(&lc, h, s, len, t, st);
		TK_GROW(pv.s, pv.cap, len);
		if (len) /* an empty stack ("  2") has nothing to keep, and pv.s may still be NULL */
			memcpy(pv.s, s, len);
		pv.n = len;
		pv.nf = nf;
		pv.first = start;
	}
	tk_lines_free(&l);
	tk_hidx_free(&lc.idx);
	tk_hidx_free(&lc.seen_idx);
	free(lc.seen);
	free(lc.e);
	free(lc.text);
	free(tm.k);
	free(pv.s);
	free(pv.end);
	free(pv.st);
	if (rc < 0)
		return -1;
	if (!lines)
		return tk_error_set(err, "%s: no folded stacks%s%s", f.name,
		                    f.skipped ? ": every line was skipped, the first: " : "",
		                    f.skipped ? f.first_skip : "");
	tk_profile_set_meta(p, "format", f.counts == 2 ? "folded (differential)" : "folded");
	/* FlameGraph's and inferno's lines name no thread: writing one would change every line */
	if (!have_threads)
		tk_profile_set_meta(p, "folded-threads", "none");
	char buf[320];
	if (f.decimals) {
		snprintf(buf, sizeof buf, "%u", f.decimals);
		tk_profile_set_meta(p, "weight-decimals", buf);
	}
	if (f.counts == 2) {
		snprintf(buf, sizeof buf, "run %u of 2 (%s; --run %u for the other)", o->run == 1 ? 1 : 2,
		         o->run == 1 ? "the first count, before" : "the second count, after", o->run == 1 ? 2 : 1);
		tk_profile_set_meta(p, "differential", buf);
	}
	if (f.skipped) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)f.skipped);
		tk_profile_set_meta(p, "skipped-lines", buf);
		if (o->warn) {
			snprintf(buf, sizeof buf,
			         "%s: skipped %llu line%s that fit no rule (--keep-going); the first, %s", f.name,
			         (unsigned long long)f.skipped, f.skipped == 1 ? "" : "s", f.first_skip);
			o->warn(o->warn_ctx, buf);
		}
	}
	return 0;
}

const tk_reader tk_reader_folded = {"folded", folded_sniff, folded_read};
