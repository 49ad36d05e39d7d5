/*
 * Profile → profile transforms. See include/tracekit/transform.h for the semantics.
 *
 * How: the kept threads' (stack, weight) cells are copied into a fresh profile, then each stack
 * transform rewrites every cell's stack in turn. Every transform here is a function of (rewritten
 * parent, frame), so rewriting is memoised per stack id and costs O(distinct stacks) per transform,
 * whatever the number of samples. Intermediate stacks stay in the output's prefix tree; that costs
 * at most one extra node per distinct stack per transform.
 */
#include <stdlib.h>
#include <string.h>

#include "tracekit/transform.h"
#include "model/derive.h"
#include "util/mem.h"

#define UNSET UINT32_MAX
#define DROP (UINT32_MAX - 1)
#define NOTFOUND (UINT32_MAX - 2) /* focus: the function is not on the path yet */

typedef struct cell {
	tk_thread_id thread; /* input thread */
	tk_stack_id stack;   /* in the output profile */
	uint64_t weight, samples;
} cell;

/* ---- matching ---- */

typedef struct pattern {
	const char *bin; /* NULL: any binary */
	size_t binlen;
	const char *label;
} pattern;

static pattern parse_pattern(const char *s)
{
	pattern pt = {NULL, 0, s};
	const char *q = strchr(s, '`');
	if (q) {
		pt.bin = s;
		pt.binlen = (size_t)(q - s);
		pt.label = q + 1;
	}
	return pt;
}

static const char *binary_name(const tk_profile *p, tk_binary_id b)
{
	const tk_binary *bin = tk_binary_get(p, b);
	return bin ? tk_string(p, bin->name) : NULL;
}

static int match_pattern(const tk_profile *p, tk_frame_id f, const pattern *pt)
{
	char buf[32];
	const tk_frame *fr = tk_frame_get(p, f);
	if (!fr || strcmp(tk_frame_label(p, f, buf), pt->label) != 0)
		return 0;
	if (!pt->bin)
		return 1;
	const char *bn = binary_name(p, fr->binary);
	return bn && strlen(bn) == pt->binlen && memcmp(bn, pt->bin, pt->binlen) == 0;
}

int tk_frame_matches(const tk_profile *p, tk_frame_id f, const char *pattern_text)
{
	pattern pt = parse_pattern(pattern_text);
	return match_pattern(p, f, &pt);
}

static int has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int tk_binary_is_system(const tk_profile *p, tk_binary_id b)
{
	const tk_binary *bin = tk_binary_get(p, b);
	if (!bin)
		return 0;
	const char *path = tk_string(p, bin->path), *name = tk_string(p, bin->name);
	static const char *const dirs[] = {"/System/",   "/usr/lib/",       "/usr/libexec/",
	                                   "/usr/sbin/", "/usr/bin/",       "/sbin/",
	                                   "/bin/",      "/Library/Apple/", "/private/preboot/Cryptexes/",
	                                   "/Developer/"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (has_prefix(path, dirs[i]))
			return 1;
	/* The kernel has no file path in exports ("kernel", "kernel.release.t6000"). */
	if (strcmp(path, "kernel") == 0 || strcmp(name, "kernel") == 0 || has_prefix(name, "kernel."))
		return 1;
	if (*path)
		return 0;
	return strcmp(name, "dyld") == 0 || has_prefix(name, "libsystem_") || has_prefix(name, "libdispatch") ||
	       has_prefix(name, "libobjc") || has_prefix(name, "libdyld");
}

/* Function identity: label text + binary name (see transform.h). */
static int same_function(const tk_profile *p, tk_frame_id a, tk_frame_id b)
{
	if (a == b)
		return 1;
	const tk_frame *fa = tk_frame_get(p, a), *fb = tk_frame_get(p, b);
	if (!fa || !fb)
		return 0;
	const tk_binary *ba = tk_binary_get(p, fa->binary), *bb = tk_binary_get(p, fb->binary);
	if ((ba ? ba->name : 0) != (bb ? bb->name : 0))
		return 0;
	if (fa->name && fb->name)
		return fa->name == fb->name; /* interned: equal text, equal id */
	char bufa[32], bufb[32];
	return strcmp(tk_frame_label(p, a, bufa), tk_frame_label(p, b, bufb)) == 0;
}

/* No symbol, or a symbol that is just "0x" + hex digits (how xctrace names unsymbolicated frames). */
static int is_unsymbolicated(const tk_profile *p, tk_frame_id f)
{
	const tk_frame *fr = tk_frame_get(p, f);
	if (!fr || !fr->name)
		return 1;
	const char *s = tk_string(p, fr->name);
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2])
		return 0;
	for (s += 2; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
			return 0;
	return 1;
}

/* ---- copying into the output profile ---- */

typedef struct copier {
	tk_derive d; /* strings, binaries, frames (model/derive.h) */
	const tk_profile *in;
	tk_profile *out;
	tk_stack_id *stacks; /* input stack → output stack (UNSET = not yet) */
	tk_stack_id *path;   /* scratch */
	size_t cappath;
} copier;

static tk_frame_id copy_frame(copier *c, tk_frame_id f)
{
	return tk_derive_frame(&c->d, f);
}

static tk_stack_id copy_stack(copier *c, tk_stack_id s)
{
	size_t n = 0;
	tk_stack_id cur = s;
	while (cur && c->stacks[cur] == UNSET) {
		TK_GROW(c->path, c->cappath, n + 1);
		c->path[n++] = cur;
		cur = tk_stack_get(c->in, cur)->parent;
	}
	tk_stack_id mapped = cur ? c->stacks[cur] : 0;
	while (n--) {
		tk_stack_id id = c->path[n];
		mapped = tk_stack_push(c->out, mapped, copy_frame(c, tk_stack_get(c->in, id)->frame));
		c->stacks[id] = mapped;
	}
	return mapped;
}

/* ---- stack transforms ---- */

typedef struct stage {
	tk_profile *p;
	tk_transform_kind kind;
	const char *raw; /* the pattern as given */
	pattern pt;
	int8_t *match;  /* per frame: -1 unknown, 0, 1 */
	int8_t *sysbin; /* per binary, for TK_TX_MERGE_SYSTEM */
	uint32_t *memo; /* per stack at stage start */
	size_t nmemo;
	tk_stack_id *path;
	size_t cappath;
} stage;

static int frame_hit(stage *st, tk_frame_id f)
{
	if (st->match[f] >= 0)
		return st->match[f];
	int hit;
	if (st->kind == TK_TX_MERGE_UNSYMBOLICATED) {
		hit = is_unsymbolicated(st->p, f);
	} else if (st->kind == TK_TX_MERGE_SYSTEM) {
		tk_binary_id b = tk_frame_get(st->p, f)->binary;
		if (st->sysbin[b] < 0)
			st->sysbin[b] = (int8_t)tk_binary_is_system(st->p, b);
		hit = st->sysbin[b];
	} else if (st->kind == TK_TX_MERGE_BINARY) {
		/* By name, or by full path when the pattern is one (two binaries may share a name). */
		const tk_binary *b = tk_binary_get(st->p, tk_frame_get(st->p, f)->binary);
		const char *want = st->raw;
		hit = b && strcmp(tk_string(st->p, want[0] == '/' ? b->path : b->name), want) == 0;
	} else {
		hit = match_pattern(st->p, f, &st->pt);
	}
	return st->match[f] = (int8_t)hit;
}

/* The rewritten stack for (rewritten parent r, frame f). */
static uint32_t step(stage *st, uint32_t r, tk_frame_id f)
{
	switch (st->kind) {
	case TK_TX_FOCUS:
		if (r != NOTFOUND)
			return tk_stack_push(st->p, r, f);
		return frame_hit(st, f) ? tk_stack_push(st->p, 0, f) : NOTFOUND;
	case TK_TX_EXCLUDE: return r == DROP || frame_hit(st, f) ? DROP : tk_stack_push(st->p, r, f);
	case TK_TX_MERGE:
	case TK_TX_MERGE_BINARY:
	case TK_TX_MERGE_SYSTEM:
	case TK_TX_MERGE_UNSYMBOLICATED: return frame_hit(st, f) ? r : tk_stack_push(st->p, r, f);
	case TK_TX_FLATTEN_RECURSION:
		if (r && same_function(st->p, tk_stack_get(st->p, r)->frame, f))
			return r;
		return tk_stack_push(st->p, r, f);
	default: return DROP;
	}
}

static uint32_t rewrite(stage *st, tk_stack_id s)
{
	if (!s)
		return st->kind == TK_TX_FOCUS ? NOTFOUND : 0;
	size_t n = 0;
	tk_stack_id cur = s;
	while (cur && st->memo[cur] == UNSET) {
		TK_GROW(st->path, st->cappath, n + 1);
		st->path[n++] = cur;
		cur = tk_stack_get(st->p, cur)->parent;
	}
	uint32_t r = cur ? st->memo[cur] : (st->kind == TK_TX_FOCUS ? NOTFOUND : 0);
	while (n--) {
		tk_stack_id id = st->path[n];
		/* Once dropped, every extension is dropped too: no need to push anything. */
		r = r == DROP ? DROP : step(st, r, tk_stack_get(st->p, id)->frame);
		st->memo[id] = r;
	}
	return r;
}

/* ss: the per-sample list's stacks (DROP for a dropped sample), rewritten with the same memo. */
static size_t run_stage(tk_profile *out, const tk_transform_spec *spec, cell *cells, size_t n, uint32_t *ss, size_t nss)
{
	stage st = {.p = out, .kind = spec->kind};
	st.raw = spec->pattern ? spec->pattern : "";
	st.pt = parse_pattern(st.raw);
	size_t nframes = tk_frame_count(out) + 1, nbins = tk_binary_count(out) + 1;
	st.match = tk_xmalloc(nframes);
	memset(st.match, -1, nframes);
	st.sysbin = tk_xmalloc(nbins);
	memset(st.sysbin, -1, nbins);
	st.sysbin[0] = 0;
	st.nmemo = tk_stack_count(out) + 1;
	st.memo = tk_xmalloc(st.nmemo * sizeof *st.memo);
	memset(st.memo, 0xff, st.nmemo * sizeof *st.memo);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t r = rewrite(&st, cells[i].stack);
		if (r == DROP || r == NOTFOUND)
			continue;
		cells[i].stack = r;
		cells[kept++] = cells[i];
	}
	for (size_t i = 0; i < nss; i++) {
		if (ss[i] == DROP)
			continue;
		uint32_t r = rewrite(&st, ss[i]);
		ss[i] = r == NOTFOUND ? DROP : r;
	}
	free(st.match);
	free(st.sysbin);
	free(st.memo);
	free(st.path);
	return kept;
}

/* ---- thread filters ---- */

static int parse_u64(const char *s, uint64_t *v)
{
	int base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return 0;
	uint64_t x = 0;
	for (; *s; s++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return 0;
		if (x > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return 0;
		x = x * (uint64_t)base + (uint64_t)d;
	}
	*v = x;
	return 1;
}

static int thread_matches(const tk_profile *p, const tk_thread *t, const tk_transform_spec *spec)
{
	uint64_t v;
	if (spec->kind == TK_TX_THREAD)
		return (parse_u64(spec->pattern, &v) && t->tid == v) ||
		       strcmp(tk_string(p, t->name), spec->pattern) == 0;
	return (parse_u64(spec->pattern, &v) && t->pid >= 0 && (uint64_t)t->pid == v) ||
	       strcmp(tk_string(p, t->process), spec->pattern) == 0;
}

static int thread_kept(const tk_profile *p, const tk_thread *t, const tk_transform_spec *specs, size_t n)
{
	int any_thread = 0, hit_thread = 0, any_process = 0, hit_process = 0;
	for (size_t i = 0; i < n; i++) {
		if (specs[i].kind == TK_TX_THREAD) {
			any_thread = 1;
			hit_thread |= thread_matches(p, t, &specs[i]);
		} else if (specs[i].kind == TK_TX_PROCESS) {
			any_process = 1;
			hit_process |= thread_matches(p, t, &specs[i]);
		}
	}
	return (!any_thread || hit_thread) && (!any_process || hit_process);
}

/* ---- driver ---- */

tk_profile *tk_transform(const tk_profile *in, const tk_transform_spec *specs, size_t n, tk_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const tk_transform_spec *s = &specs[i];
		if (s->kind > TK_TX_MERGE_UNSYMBOLICATED) {
			tk_error_set(err, "transform %zu: unknown kind %d", i + 1, (int)s->kind);
			return NULL;
		}
		int needs = s->kind != TK_TX_MERGE_SYSTEM && s->kind != TK_TX_FLATTEN_RECURSION &&
		            s->kind != TK_TX_MERGE_UNSYMBOLICATED;
		if (needs && (!s->pattern || !*s->pattern)) {
			tk_error_set(err, "transform %zu: empty pattern", i + 1);
			return NULL;
		}
		if (needs && (s->kind == TK_TX_FOCUS || s->kind == TK_TX_EXCLUDE || s->kind == TK_TX_MERGE)) {
			pattern pt = parse_pattern(s->pattern);
			if (!*pt.label || (pt.bin && !pt.binlen)) {
				tk_error_set(err, "transform %zu: '%s' is not BINARY`FUNCTION or FUNCTION", i + 1,
				             s->pattern);
				return NULL;
			}
		}
	}

	copier c = {.in = in};
	tk_profile *out = c.out = tk_derive_begin(&c.d, in);
	c.stacks = tk_xmalloc((tk_stack_count(in) + 1) * sizeof *c.stacks);
	memset(c.stacks, 0xff, (tk_stack_count(in) + 1) * sizeof *c.stacks);

	cell *cells = NULL;
	size_t ncells = 0, capcells = 0;
	size_t nthreads = tk_thread_count(in);
	for (tk_thread_id t = 0; t < nthreads; t++) {
		if (!thread_kept(in, tk_thread_get(in, t), specs, n))
			continue;
		size_t ns;
		const tk_stack_weight *sw = tk_thread_stacks(in, t, &ns);
		TK_GROW(cells, capcells, ncells + ns);
		for (size_t i = 0; i < ns; i++)
			cells[ncells++] = (cell){t, copy_stack(&c, sw[i].stack), sw[i].weight, sw[i].samples};
	}
	/* The per-sample list, when the input has one, follows the same stack rewrites. */
	size_t nsl = tk_profile_sample_count(in);
	uint32_t *ss = NULL;
	tk_profile_keep_samples(out, tk_profile_keeps_samples(in));
	tk_sample smp;
	if (nsl) {
		uint8_t *kept = tk_xcalloc(nthreads + 1, 1);
		for (tk_thread_id t = 0; t < nthreads; t++)
			kept[t] = (uint8_t)thread_kept(in, tk_thread_get(in, t), specs, n);
		ss = tk_xmalloc(nsl * sizeof *ss);
		tk_sample_iter *it = tk_sample_iter_new(in, TK_ALL_THREADS);
		for (size_t i = 0; i < nsl && tk_sample_iter_next(it, &smp); i++)
			ss[i] = smp.thread < nthreads && kept[smp.thread] ? copy_stack(&c, smp.stack) : DROP;
		tk_sample_iter_free(it);
		free(kept);
	}
	free(c.stacks);
	free(c.path);

	for (size_t i = 0; i < n; i++)
		if (specs[i].kind != TK_TX_THREAD && specs[i].kind != TK_TX_PROCESS)
			ncells = run_stage(out, &specs[i], cells, ncells, ss, nsl);

	/* Cells are still grouped by thread, in input order, so output threads keep that order. */
	tk_thread_id cur_in = UINT32_MAX, cur_out = 0;
	tk_thread_id *tmap = tk_xmalloc((nthreads + 1) * sizeof *tmap);
	for (size_t t = 0; t <= nthreads; t++)
		tmap[t] = TK_NO_THREAD; /* left out (until a cell of it is kept) */
	for (size_t i = 0; i < ncells; i++) {
		if (cells[i].thread != cur_in) {
			cur_in = cells[i].thread;
			const tk_thread *th = tk_thread_get(in, cur_in);
			cur_out = tk_derive_thread(&c.d, cur_in);
			tmap[cur_in] = cur_out;
			if (th->t_min <= th->t_max) {
				tk_thread_note_time(out, cur_out, th->t_min);
				tk_thread_note_time(out, cur_out, th->t_max);
			}
		}
		tk_sample_add_n(out, cur_out, cells[i].stack, cells[i].weight, cells[i].samples);
	}
	/* A kept sample's (thread, stack) cell is kept too, so its thread exists in out. */
	if (nsl) {
		tk_sample_iter *it = tk_sample_iter_new(in, TK_ALL_THREADS);
		for (size_t i = 0; i < nsl && tk_sample_iter_next(it, &smp); i++)
			if (ss[i] != DROP)
				tk_sample_list_append(out, &(tk_sample){smp.time, smp.weight, tmap[smp.thread], ss[i]});
		tk_sample_iter_free(it);
	}
	/* events stay, each on its thread when that thread is kept */
	tk_derive_events(&c.d, tmap);
	free(tmap);
	free(ss);
	free(cells);
	tk_derive_end(&c.d);
	return out;
}
