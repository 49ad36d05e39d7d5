/*
 * Symbolicating a tk_apple_report (tracekit/apple_report.h): every frame of an image with a UUID is looked up
 * in that image's dSYM (or binary) through the symbolicator and its caches. Each image is asked for
 * once per batch (handles kept by (UUID, arch)) and each address looked up once per batch (answers
 * kept by (image, file address), bounded; the answers' strings are copied at once, before the next
 * image is asked for, since the symbolicator keeps at most max_open mapped).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/apple_report.h"
#include "symbol/symint.h"
#include "tracekit/symbol.h"
#include "util/mem.h"

/* ---- image handles by (UUID, arch), kept across reports ---- */
typedef struct memo {
	char *key; /* "UUID/arch" */
	tk_symbol_image *im;
	char *why; /* im NULL: why */
} memo;

/* ---- answers by (image handle, file address), kept across reports ----
 * A fleet's reports repeat their stacks (the same crash signatures, the same idle threads, the same
 * root frames: bench/mkreports_bench.py says how much), so the answer of each address is kept in the
 * form a frame takes it: m names, their strings packed after them. Bounded: past ANS_MAX_BYTES of
 * answers or ANS_MAX entries the memo starts again empty (RSS bounded by the symbol caches plus this). */
typedef struct ans_name {
	uint32_t fn, file; /* offsets into the answer's strings; file UINT32_MAX: none */
	uint32_t line;
} ans_name;

typedef struct ans {
	uint32_t m, bytes; /* names; bytes of strings */
	int symtab;
	uint64_t symbol_start;
	ans_name q[]; /* then the strings */
} ans;

typedef struct ans_slot {
	const tk_symbol_image *key; /* NULL: empty */
	uint64_t addr;
	ans *a;
} ans_slot;

typedef struct ans_chunk {
	struct ans_chunk *next;
	size_t used, cap;
	max_align_t data[];
} ans_chunk;

enum { ANS_MAX = 1 << 17, ANS_WINDOW = 1 << 15, ANS_SKIP = 16 };
#define ANS_MAX_BYTES ((size_t)16 << 20)

struct tk_apple_report_symbols {
	tk_symbolicator *s;
	memo *slot; /* open addressing, power-of-two size */
	size_t cap, n;
	ans_slot *aslot; /* open addressing, power-of-two size */
	size_t acap, an, abytes;
	ans_chunk *achunk, *acur; /* all chunks in order; the one being filled */
	/* kept only while it pays: per window of lookups, the memo's hits; under one in 8, the memo is
	 * left alone for ANS_SKIP windows (uniformly random addresses: probes and copies for nothing) */
	size_t probes, hits, skip;
	void *scratch;
	size_t scratch_cap;
	/* whole stacks (below): slots, entries in chunks, and each report's keys of its frames */
	struct stk_slot *sslot;
	size_t scap, sn, sbytes;
	ans_chunk *schunk, *scur;
	struct fkey *kbuf;
	const struct ans **abuf;
	size_t kcap, acap2;
	/* the frames to be looked up (no answer kept), fetched together first (tk_symbol_images_warm) */
	const tk_symbol_image **wim;
	uint64_t *waddr;
	unsigned sgen; /* stk_reset's count (ans_reset's too): stacks of an older one are gone */
};

tk_apple_report_symbols *tk_apple_report_symbols_new(tk_symbolicator *s)
{
	tk_apple_report_symbols *rs = tk_xcalloc(1, sizeof *rs);
	rs->s = s;
	rs->cap = 64;
	rs->slot = tk_xcalloc(rs->cap, sizeof *rs->slot);
	return rs;
}

void tk_apple_report_symbols_free(tk_apple_report_symbols *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->cap; i++) {
		free(rs->slot[i].key);
		free(rs->slot[i].why);
	}
	free(rs->slot);
	for (ans_chunk *c = rs->achunk, *nx; c; c = nx) {
		nx = c->next;
		free(c);
	}
	free(rs->aslot);
	free(rs->scratch);
	for (ans_chunk *c = rs->schunk, *nx; c; c = nx) {
		nx = c->next;
		free(c);
	}
	free(rs->sslot);
	free(rs->kbuf);
	free(rs->abuf);
	free(rs->wim);
	free(rs->waddr);
	free(rs);
}

/* The memo's big pieces (its slots, its answers' chunks past the first 2 MB) come from tk_xmalloc_big:
 * 2 MB-aligned and advised into huge pages. Filled 4 kB page by page they cost a page fault each (two for
 * the slots, read then written), 7,000 a 10,000-report batch, and a TLB miss per answer looked up. */
enum { MEMO_HUGE = 2 << 20 }; /* a huge page */
static void *memo_alloc(size_t size, int zero)
{
	void *p = tk_xmalloc_big(size);
	if (zero)
		memset(p, 0, size);
	return p;
}

static uint64_t fnv(const char *k)
{
	uint64_t h = 1469598103934665603ull;
	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 1099511628211ull;
	return h;
}

static memo *memo_find(tk_apple_report_symbols *rs, const char *key)
{
	size_t m = rs->cap - 1, i = fnv(key) & m;
	while (rs->slot[i].key && strcmp(rs->slot[i].key, key))
		i = (i + 1) & m;
	return &rs->slot[i];
}

static memo *image_for(tk_apple_report_symbols *rs, const tk_apple_report_image *im)
{
	/* "UUID/ARCH" (as snprintf "%s/%s" into 128 bytes made it: cut at 127) */
	char key[128];
	size_t ul = strlen(im->uuid), al = im->arch ? strlen(im->arch) : 0, k = ul < 127 ? ul : 127;
	memcpy(key, im->uuid, k);
	if (k < 127)
		key[k++] = '/';
	if (al > 127 - k)
		al = 127 - k;
	memcpy(key + k, im->arch ? im->arch : "", al);
	key[k + al] = 0;
	memo *e = memo_find(rs, key);
	if (e->key)
		return e;
	if (2 * (rs->n + 1) > rs->cap) { /* grow and rehash */
		memo *old = rs->slot;
		size_t oc = rs->cap;
		rs->cap *= 2;
		rs->slot = tk_xcalloc(rs->cap, sizeof *rs->slot);
		for (size_t i = 0; i < oc; i++)
			if (old[i].key)
				*memo_find(rs, old[i].key) = old[i];
		free(old);
		e = memo_find(rs, key);
	}
	tk_error err;
	e->key = tk_xstrdup(key);
	e->im = tk_symbolicator_image(rs->s, im->uuid, NULL, im->arch, &err);
	if (!e->im && im->arch) /* the report's arch may name the slice differently (arm64 / arm64e) */
		e->im = tk_symbolicator_image(rs->s, im->uuid, NULL, NULL, &err);
	if (!e->im)
		e->why = tk_xstrdup(err.msg);
	rs->n++;
	return e;
}

/* ---- the report's sym_pool: the names of its frames, in chunks freed with the report (a malloc and
 * a free per name were a fifth of a batch's instructions) ---- */
typedef struct pool_chunk {
	void *next; /* first: tk_apple_report_free walks this */
	size_t used, cap;
	max_align_t data[];
} pool_chunk;

static void *pool_alloc(tk_apple_report *r, size_t n)
{
	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	pool_chunk *c = r->sym_pool;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > 8192 ? n : 8192;
		pool_chunk *nc = tk_xmalloc(sizeof *nc + cap);
		nc->next = c;
		nc->used = 0;
		nc->cap = cap;
		r->sym_pool = c = nc;
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

static void stk_reset(tk_apple_report_symbols *rs);

/* A chunk of the list first with need bytes free, from *cur on (then *cur). Past max bytes of chunks,
 * reset empties the memo and its chunks are used again; else a chunk is added: 64 kB, then (2 MB of
 * chunks on) huge pages' worth. */
static ans_chunk *chunk_for(tk_apple_report_symbols *rs, ans_chunk **first, ans_chunk **cur, size_t *bytes,
                            size_t max, size_t need, void (*reset)(tk_apple_report_symbols *))
{
	ans_chunk *c = *cur;
	while (c && c->cap - c->used < need)
		c = c->next;
	if (!c && *bytes > max) { /* full: start again in the same chunks */
		reset(rs);
		for (c = *cur; c && c->cap - c->used < need;)
			c = c->next;
	}
	if (!c) {
		size_t cap = *bytes >= MEMO_HUGE ? MEMO_HUGE - sizeof *c : 1 << 16;
		if (cap < need)
			cap = need;
		c = memo_alloc(sizeof *c + cap, 0);
		c->next = NULL;
		c->used = 0;
		c->cap = cap;
		ans_chunk **tail = first;
		while (*tail)
			tail = &(*tail)->next;
		*tail = c;
		*bytes += cap;
	}
	*cur = c;
	return c;
}

/* the memo emptied; its chunks kept for the answers to come (no new pages after the first fill) */
static void ans_reset(tk_apple_report_symbols *rs)
{
	stk_reset(rs); /* the stacks point at answers */
	for (ans_chunk *c = rs->achunk; c; c = c->next)
		c->used = 0;
	rs->acur = rs->achunk;
	if (rs->aslot)
		memset(rs->aslot, 0, rs->acap * sizeof *rs->aslot);
	rs->an = 0;
}

static inline size_t ans_hash(const tk_symbol_image *key, uint64_t addr)
{
	uint64_t h = (addr ^ ((uint64_t)(uintptr_t)key << 7)) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 24);
}

static ans_slot *ans_find(tk_apple_report_symbols *rs, const tk_symbol_image *key, uint64_t addr)
{
	size_t m = rs->acap - 1, i = ans_hash(key, addr) & m;
	while (rs->aslot[i].key && (rs->aslot[i].key != key || rs->aslot[i].addr != addr))
		i = (i + 1) & m;
	return &rs->aslot[i];
}

/* the answer of res (m names), kept under (key, addr) if keep, else in rs's scratch (valid until the
 * next answer) */
static const ans *ans_put(tk_apple_report_symbols *rs, const tk_symbol_image *key, uint64_t addr,
                          const tk_symbol_result *res, size_t m, int keep)
{
	if (keep && rs->an + 1 > ANS_MAX)
		ans_reset(rs);
	if (keep && 2 * (rs->an + 1) > rs->acap) { /* grow and rehash */
		ans_slot *old = rs->aslot;
		size_t oc = rs->acap;
		rs->acap = oc ? 2 * oc : 4096;
		rs->aslot = memo_alloc(rs->acap * sizeof *rs->aslot, 1);
		for (size_t i = 0; i < oc; i++)
			if (old[i].key)
				*ans_find(rs, old[i].key, old[i].addr) = old[i];
		free(old);
	}
	size_t fl[TK_SYMBOL_MAX_FRAMES], bl[TK_SYMBOL_MAX_FRAMES], bytes = 0;
	const char *base[TK_SYMBOL_MAX_FRAMES];
	for (size_t q = 0; q < m; q++) {
		fl[q] = strlen(res->frames[q].function);
		base[q] = NULL;
		bl[q] = 0;
		if (res->frames[q].file) {
			const char *b = strrchr(res->frames[q].file, '/');
			base[q] = b ? b + 1 : res->frames[q].file;
			bl[q] = strlen(base[q]) + 1;
		}
		bytes += fl[q] + 1 + bl[q];
	}
	size_t need = sizeof(ans) + m * sizeof(ans_name) + bytes;
	need = (need + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	ans *a;
	if (!keep) {
		if (rs->scratch_cap < need) {
			free(rs->scratch);
			rs->scratch_cap = need > 4096 ? need : 4096;
			rs->scratch = tk_xmalloc(rs->scratch_cap);
		}
		a = rs->scratch;
		goto fill;
	}
	ans_chunk *c = chunk_for(rs, &rs->achunk, &rs->acur, &rs->abytes, ANS_MAX_BYTES, need, ans_reset);
	a = (ans *)((char *)c->data + c->used);
	c->used += need;
fill:
	a->m = (uint32_t)m;
	a->bytes = (uint32_t)bytes;
	a->symtab = res->symtab_only;
	a->symbol_start = res->symbol_start;
	char *str = (char *)(a->q + m);
	uint32_t o = 0;
	for (size_t q = 0; q < m; q++) {
		memcpy(str + o, res->frames[q].function, fl[q] + 1);
		a->q[q].fn = o;
		o += (uint32_t)fl[q] + 1;
		a->q[q].file = UINT32_MAX;
		if (base[q]) {
			memcpy(str + o, base[q], bl[q]);
			a->q[q].file = o;
			o += (uint32_t)bl[q];
		}
		a->q[q].line = res->frames[q].line;
	}
	if (!keep)
		return a;
	ans_slot *e = ans_find(rs, key, addr);
	e->key = key;
	e->addr = addr;
	e->a = a;
	rs->an++;
	return a;
}

/* ---- whole stacks, kept across reports ----
 * A fleet's reports repeat whole threads (a crash signature's stack, the same idle threads), and one
 * probe of the answers per frame is a miss per frame (the memo is larger than the caches). A thread
 * whose frames are all in images with symbols is keyed by its frames' (image handle, file address);
 * a stack met before gives every frame's answer at once. Entries point at answers, so they go when
 * the answers do (ans_reset); bounded on their own too (STK_MAX, STK_MAX_BYTES). */
typedef struct fkey {
	const tk_symbol_image *key;
	uint64_t addr;
} fkey;

typedef struct stk {
	uint64_t hash;
	size_t n;
	/* then n fkeys, then n answers */
} stk;

typedef struct stk_slot {
	uint64_t hash;
	const stk *e; /* NULL: empty */
} stk_slot;

enum { STK_MAX = 1 << 16 };
#define STK_MAX_BYTES ((size_t)8 << 20)

static void stk_reset(tk_apple_report_symbols *rs)
{
	rs->sgen++;
	for (ans_chunk *c = rs->schunk; c; c = c->next)
		c->used = 0;
	rs->scur = rs->schunk;
	if (rs->sslot)
		memset(rs->sslot, 0, rs->scap * sizeof *rs->sslot);
	rs->sn = 0;
}

static uint64_t stk_hash(const fkey *k, size_t n)
{
	uint64_t x = 0x9E3779B97F4A7C15ull ^ n;
	for (size_t i = 0; i < n; i++) {
		x = (x ^ (uint64_t)(uintptr_t)k[i].key) * 0xff51afd7ed558ccdull;
		x = (x ^ k[i].addr) * 0xc4ceb9fe1a85ec53ull;
		x ^= x >> 29;
	}
	return x ? x : 1;
}

static inline const fkey *stk_keys(const stk *e)
{
	return (const fkey *)(e + 1);
}

static inline const ans *const *stk_answers(const stk *e)
{
	return (const ans *const *)(stk_keys(e) + e->n);
}

static stk_slot *stk_find(tk_apple_report_symbols *rs, uint64_t hash, const fkey *k, size_t n)
{
	size_t m = rs->scap - 1, i = (size_t)(hash >> 20) & m;
	for (;; i = (i + 1) & m) {
		const stk *e = rs->sslot[i].e;
		if (!e || (rs->sslot[i].hash == hash && e->n == n && !memcmp(stk_keys(e), k, n * sizeof *k)))
			return &rs->sslot[i];
	}
}

/* the stack k[0..n) answered by a[0..n), kept */
static void stk_put(tk_apple_report_symbols *rs, uint64_t hash, const fkey *k, const ans *const *a, size_t n)
{
	if (rs->sn + 1 > STK_MAX)
		stk_reset(rs);
	if (2 * (rs->sn + 1) > rs->scap) { /* grow and rehash */
		stk_slot *old = rs->sslot;
		size_t oc = rs->scap;
		rs->scap = oc ? 2 * oc : 1024;
		rs->sslot = memo_alloc(rs->scap * sizeof *rs->sslot, 1);
		for (size_t i = 0; i < oc; i++)
			if (old[i].e) {
				size_t m = rs->scap - 1, j = (size_t)(old[i].hash >> 20) & m;
				while (rs->sslot[j].e)
					j = (j + 1) & m;
				rs->sslot[j] = old[i];
			}
		free(old);
	}
	size_t need = sizeof(stk) + n * (sizeof *k + sizeof *a);
	need = (need + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	ans_chunk *c = chunk_for(rs, &rs->schunk, &rs->scur, &rs->sbytes, STK_MAX_BYTES, need, stk_reset);
	stk *e = (stk *)((char *)c->data + c->used);
	c->used += need;
	e->hash = hash;
	e->n = n;
	memcpy((fkey *)(e + 1), k, n * sizeof *k);
	memcpy((const ans **)((fkey *)(e + 1) + n), a, n * sizeof *a);
	stk_slot *sl = stk_find(rs, hash, k, n);
	sl->hash = hash;
	sl->e = e;
	rs->sn++;
}

/* One report (st: its stats, or NULL). Each image with frames is asked of the symbolicator once
 * (rs keeps the handles across reports), then every frame is answered from the memo of answers or
 * looked up and kept there. */
static int symbolicate_one(tk_apple_report *r, tk_apple_report_symbols *rs, tk_apple_report_sym_stats *stp,
                           tk_error *err)
{
	(void)err;
	tk_apple_report_sym_stats local, *st = stp ? stp : &local;
	memset(st, 0, sizeof *st);
	/* each image with frames asked of the symbolicator once (the handles are kept across reports),
	 * in image order; only those are named missing */
	const tk_symbol_image **h = tk_xcalloc(r->nimages ? r->nimages : 1, sizeof *h);
	for (size_t i = 0; i <= r->nthreads; i++) {
		tk_apple_report_thread *t = i < r->nthreads ? &r->threads[i] : r->leb;
		for (size_t j = 0; t && j < t->nframes; j++)
			if (t->frames[j].image && t->frames[j].image <= r->nimages && !t->frames[j].kernel)
				h[t->frames[j].image - 1] = (const tk_symbol_image *)1; /* used */
	}
	for (size_t mi = 0; mi < r->nimages; mi++) {
		tk_apple_report_image *im = &r->images[mi];
		if (!h[mi] || !im->uuid) {
			h[mi] = NULL;
			continue;
		}
		const memo *mm = image_for(rs, im);
		h[mi] = mm->im;
		if (mm->im) {
			im->symbols = 1;
		} else {
			im->symbols = -1;
			free(im->why);
			im->why = tk_xstrdup(mm->why);
		}
	}
	/* every frame's key (image handle, file address; handle NULL: not looked up), then each thread's
	 * stack looked for in the stacks met before (stacks: not for spindump trees, nor while the memo is
	 * left alone) */
	size_t nt = r->nthreads + (r->leb ? 1 : 0), total = 0;
	for (size_t i = 0; i < nt; i++)
		total += (i < r->nthreads ? &r->threads[i] : r->leb)->nframes;
	if (rs->kcap < total) {
		free(rs->kbuf);
		free(rs->abuf);
		free(rs->wim);
		free(rs->waddr);
		rs->kcap = total;
		rs->kbuf = tk_xmalloc(total * sizeof *rs->kbuf);
		rs->abuf = tk_xmalloc(total * sizeof *rs->abuf);
		rs->wim = tk_xmalloc(total * sizeof *rs->wim);
		rs->waddr = tk_xmalloc(total * sizeof *rs->waddr);
	}
	uint64_t *hash = tk_xcalloc(nt ? 2 * nt : 1, sizeof *hash);
	const stk **hit = (const stk **)(hash + nt);
	int stacks = !rs->skip && r->format != TK_APPLE_SPINDUMP;
	for (size_t i = 0, fo = 0; i < nt; i++) {
		const tk_apple_report_thread *t = i < r->nthreads ? &r->threads[i] : r->leb;
		int whole = stacks && t->nframes > 0;
		for (size_t j = 0; j < t->nframes; j++) {
			const tk_apple_report_frame *f = &t->frames[j];
			fkey *k = &rs->kbuf[fo + j];
			k->key = NULL;
			k->addr = 0;
			if (!f->image || f->image > r->nimages || f->kernel || !h[f->image - 1]) {
				whole = 0;
				continue;
			}
			int leaf;
			if (r->format == TK_APPLE_SPINDUMP) /* a tree: a frame without children is a PC */
				leaf = j + 1 == t->nframes || t->frames[j + 1].depth <= f->depth;
			else
				leaf = j == 0;
			uint64_t addr = leaf || !f->addr ? f->addr : f->addr - 1;
			k->key = h[f->image - 1];
			k->addr = tk_symbol_image_file_addr(k->key, r->images[f->image - 1].base, addr);
		}
		if (whole) {
			hash[i] = stk_hash(&rs->kbuf[fo], t->nframes);
			if (rs->scap)
				__builtin_prefetch(&rs->sslot[(size_t)(hash[i] >> 20) & (rs->scap - 1)]);
		}
		fo += t->nframes;
	}
	unsigned sgen = rs->sgen;
	if (rs->scap)
		for (size_t i = 0, fo = 0; i < nt; i++) {
			size_t n = (i < r->nthreads ? &r->threads[i] : r->leb)->nframes;
			if (hash[i]) {
				hit[i] = stk_find(rs, hash[i], &rs->kbuf[fo], n)->e;
				if (hit[i])
					__builtin_prefetch(stk_answers(hit[i]));
			}
			fo += n;
		}
	/* the memo's slots, then the answers in them (those of the stacks found, for their threads),
	 * fetched for every frame before the first is used: the memo is larger than the caches, and 100
	 * misses in flight cost about what one does; the frames with no answer kept are looked up below,
	 * their lookups' steps fetched together first */
	size_t nw = 0;
	if (!rs->skip && rs->acap)
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0, fo = 0; i < nt; i++) {
				size_t n = (i < r->nthreads ? &r->threads[i] : r->leb)->nframes;
				for (size_t j = 0; j < n; j++) {
					const fkey *k = &rs->kbuf[fo + j];
					if (hit[i]) { /* its answers */
						if (pass == 1)
							__builtin_prefetch(stk_answers(hit[i])[j]);
						continue;
					}
					if (!k->key)
						continue;
					if (pass == 0) {
						__builtin_prefetch(&rs->aslot[ans_hash(k->key, k->addr) & (rs->acap - 1)]);
					} else {
						const ans_slot *e = ans_find(rs, k->key, k->addr);
						if (e->key)
							__builtin_prefetch(e->a);
						else {
							rs->wim[nw] = k->key;
							rs->waddr[nw++] = k->addr;
						}
					}
				}
				fo += n;
			}
	else /* no answers kept (yet, or while the memo is left alone): every frame not in a stack met before */
		for (size_t i = 0, fo = 0; i < nt; i++) {
			size_t n = (i < r->nthreads ? &r->threads[i] : r->leb)->nframes;
			for (size_t j = 0; j < n && !hit[i]; j++)
				if (rs->kbuf[fo + j].key) {
					rs->wim[nw] = rs->kbuf[fo + j].key;
					rs->waddr[nw++] = rs->kbuf[fo + j].addr;
				}
			fo += n;
		}
	tk_symbol_images_warm(rs->wim, rs->waddr, nw);
	tk_symbol_result res;
	for (size_t i = 0, fo = 0; i < nt; fo += (i < r->nthreads ? &r->threads[i] : r->leb)->nframes, i++) {
		tk_apple_report_thread *t = i < r->nthreads ? &r->threads[i] : r->leb;
		/* a stack met before (still there: no reset since it was found) */
		const ans *const *known = hit[i] && rs->sgen == sgen ? stk_answers(hit[i]) : NULL;
		int put = hash[i] && !known; /* kept as a stack when every answer is kept */
		unsigned gen = rs->sgen;
		for (size_t j = 0; j < t->nframes; j++) {
			tk_apple_report_frame *f = &t->frames[j];
			if (!f->image || !r->images[f->image - 1].uuid || f->kernel)
				continue;
			st->frames++;
			const tk_apple_report_image *im = &r->images[f->image - 1];
			tk_symbol_image *si = (tk_symbol_image *)h[f->image - 1];
			if (!si) {
				st->unresolved++;
				continue;
			}
			uint64_t fa = rs->kbuf[fo + j].addr;
			const ans *a = NULL;
			int keep = rs->skip == 0;
			if (keep) {
				if (known)
					a = known[j], rs->hits++;
				else if (rs->acap) {
					const ans_slot *e = ans_find(rs, si, fa);
					if (e->key)
						a = e->a, rs->hits++;
				}
				if (++rs->probes == ANS_WINDOW) {
					if (rs->hits < ANS_WINDOW / 8)
						rs->skip = ANS_SKIP * ANS_WINDOW;
					rs->probes = rs->hits = 0;
				}
			} else {
				if (known)
					a = known[j];
				rs->skip--;
			}
			if (!a) {
				size_t m = tk_symbol_image_lookup(si, fa, &res);
				if (m == 1 && !res.frames[0].file && !strcmp(res.frames[0].function, "??"))
					m = 0;
				a = ans_put(rs, si, fa, &res, m, keep);
			}
			if (put) {
				if (keep)
					rs->abuf[j] = a;
				else
					put = 0;
			}
			if (!a->m) {
				st->unresolved++;
				continue;
			}
			/* the names and their strings in one piece of the pool (a frame named before keeps its
			 * old names in the pool until the report is freed) */
			size_t m = a->m;
			tk_apple_report_sym *sym = pool_alloc(r, m * sizeof *sym + a->bytes);
			char *str = (char *)(sym + m);
			memcpy(str, a->q + m, a->bytes);
			for (size_t q = 0; q < m; q++) {
				sym[q].function = str + a->q[q].fn;
				sym[q].file = a->q[q].file == UINT32_MAX ? NULL : str + a->q[q].file;
				sym[q].line = a->q[q].line;
				sym[q].inlined = q + 1 < m;
			}
			f->sym = sym;
			f->nsym = m;
			f->sym_symtab = a->symtab;
			f->sym_off = a->symtab ? tk_symbol_image_file_addr(si, im->base, f->addr) - a->symbol_start : 0;
			st->resolved++;
		}
		/* the answers are all in the memo (none reset since): the stack is kept */
		if (put && rs->sgen == gen)
			stk_put(rs, hash[i], &rs->kbuf[fo], rs->abuf, t->nframes);
	}
	free(hash);
	free(h);
	return 0;
}

int tk_apple_report_symbolicate(tk_apple_report *r, tk_apple_report_symbols *rs, tk_apple_report_sym_stats *st,
                                tk_error *err)
{
	return symbolicate_one(r, rs, st, err);
}
