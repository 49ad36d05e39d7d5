/*
 * The profile model: interned strings, deduplicated binaries and frames, a prefix tree of stacks,
 * and per-thread maps stack → weight. See include/tracekit/profile.h for the contract.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/profile.h"
#include "model/cells.h"
#include "model/derive.h"
#include "util/hidx.h"
#include "util/mem.h"

/* Strings live in fixed chunks that never move, so tk_string() pointers stay valid. */
#define STR_CHUNK (256 * 1024)

typedef struct strref {
	const char *s;
	uint32_t len;
} strref;

typedef struct tk_tstate {
	tk_thread t;
	tk_stack_weight *cells;
	size_t ncells, capcells;
	/* stack id → cell, open addressing: slot = stack << 32 | (cell + 1), 0 = empty. The key is
	 * the value compared, so a probe is one load and no call: this map is hit on every row. */
	uint64_t *map;
	uint32_t mapmask;
	uint32_t last; /* cell of the previous sample + 1: runs of one stack skip the map */
} tk_tstate;

/* The per-sample list is kept compact, since it is the one part of the model that grows with
 * the rows: byte streams in chunks that never move, one per thread, plus one stream of thread
 * ids in arrival order. A row of a thread is
 *   varint(zigzag(v - v_prev))   v = time + 1, 0 for an unknown time (mod 2^64, so exact)
 *   varint(stack << 1 | w)       w = 1 when the weight differs from the thread's previous one
 *   [varint(weight)]             only when w = 1
 * which is 5-8 bytes for a typical Instruments row (1 ms apart, the same weight), against 24
 * for a tk_sample. */
typedef struct bchunk {
	uint32_t len, cap;
	uint8_t data[];
} bchunk;

typedef struct bstream {
	bchunk **c;
	size_t n, cap;
} bstream;

typedef struct slist {
	bstream s;
	size_t n;
	uint64_t v, w;    /* the previous row's time code and weight */
	int out_of_order; /* a time went back (or was unknown) */
} slist;

enum { ROW_MAX = 32, CHUNK_MIN = 256, CHUNK_MAX = 64 * 1024 };

static void bs_append(bstream *b, const uint8_t *row, size_t len)
{
	bchunk *last = b->n ? b->c[b->n - 1] : NULL;
	if (!last || last->cap - last->len < len) {
		uint32_t cap = last ? last->cap * 2 : CHUNK_MIN;
		if (cap > CHUNK_MAX)
			cap = CHUNK_MAX;
		last = tk_xmalloc(sizeof *last + cap);
		last->len = 0;
		last->cap = cap;
		TK_GROW(b->c, b->cap, b->n + 1);
		b->c[b->n++] = last;
	}
	memcpy(last->data + last->len, row, len);
	last->len += (uint32_t)len;
}

static void bs_free(bstream *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->c[i]);
	free(b->c);
	*b = (bstream){0};
}

static size_t bs_memory(const bstream *b)
{
	size_t m = b->cap * sizeof *b->c;
	for (size_t i = 0; i < b->n; i++)
		m += sizeof *b->c[i] + b->c[i]->cap;
	return m;
}

static size_t put_varint(uint8_t *o, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		o[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	o[n++] = (uint8_t)v;
	return n;
}

/* A stack node with its children as a list: most nodes have one or two children, and a push onto
 * a node is then a look at the node itself (no hash probe, no index entry). Only the children of
 * a parent with more than WIDE children go into stack_index. */
typedef struct snode {
	tk_stack_node n;
	uint32_t child;  /* most recent child, 0 = none */
	uint32_t sib;    /* the parent's previous child, 0 = last */
	uint32_t nchild; /* children */
} snode;

enum { WIDE = 8 };

typedef struct meta_kv {
	char *key, *value;
} meta_kv;

/* An event's attribute: key and string interned in the profile; str 0 marks a number. */
typedef struct event_attr {
	tk_str key, str;
	double num;
} event_attr;

typedef struct event_state {
	tk_event e;
	event_attr *attrs;
	size_t nattrs, capattrs;
} event_state;

struct tk_profile {
	/* strings */
	char **chunks;
	size_t nchunks, capchunks;
	size_t chunk_used;
	strref *strs;
	size_t nstrs, capstrs;
	tk_hidx str_index;
	/* binaries, frames, stacks: slot 0 unused */
	tk_binary *bins;
	size_t nbins, capbins;
	tk_hidx bin_index;
	tk_frame *frames;
	size_t nframes, capframes;
	tk_hidx frame_index;
	snode *stacks;
	size_t nstacks, capstacks;
	tk_hidx stack_index; /* (parent, frame) → stack, for the children of wide parents only */
	/* set by tk_frame_append (a table rebuilt whole, its frames known distinct): the index is
	 * built by the next tk_frame_add */
	int frame_index_stale;
	/* threads */
	tk_tstate *threads;
	size_t nthreads, capthreads;
	tk_hidx thread_index;
	uint64_t *scratch; /* tk_thread_add_cells' table, all zero between calls */
	size_t capscratch;
	tk_unit unit;
	meta_kv *meta;
	size_t nmeta, capmeta;
	/* opt-in per-sample list and the trace's loaded images */
	int keep_samples;
	size_t nsamples;
	bstream order; /* thread of each sample in arrival order (varint) */
	slist *slists; /* per thread: its samples, delta-coded (see below) */
	size_t nslists;
	int unknown_time; /* a sample has time UINT64_MAX */
	tk_sample *flat;  /* tk_profile_sample_list's materialized copy (nflat rows), on demand */
	size_t nflat;
	tk_binary *images;
	size_t nimages, capimages;
	tk_hidx image_index; /* a monitor session may list 100,000 images */
	/* events (slot i holds id i + 1) */
	event_state *events;
	size_t nevents, capevents;
	/* Σ every sample's weight: kept below 2^64 so that no total in the model can wrap */
	uint64_t total_weight;
	int weight_overflow;
};

const char *tk_unit_name(tk_unit u)
{
	switch (u) {
	case TK_UNIT_NS: return "ns";
	case TK_UNIT_CYCLES: return "cycles";
	case TK_UNIT_EVENTS: return "events";
	case TK_UNIT_SAMPLES: return "samples";
	case TK_UNIT_BYTES: return "bytes";
	}
	return "?";
}

tk_profile *tk_profile_new(void)
{
	tk_profile *p = tk_xcalloc(1, sizeof *p);
	tk_intern(p, "", 0); /* string 0 */
	TK_GROW(p->bins, p->capbins, 1);
	memset(&p->bins[0], 0, sizeof p->bins[0]);
	p->nbins = 1;
	TK_GROW(p->frames, p->capframes, 1);
	memset(&p->frames[0], 0, sizeof p->frames[0]);
	p->nframes = 1;
	TK_GROW(p->stacks, p->capstacks, 1);
	memset(&p->stacks[0], 0, sizeof p->stacks[0]);
	p->nstacks = 1;
	return p;
}

void tk_profile_free(tk_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nchunks; i++)
		free(p->chunks[i]);
	free(p->chunks);
	free(p->strs);
	tk_hidx_free(&p->str_index);
	free(p->bins);
	tk_hidx_free(&p->bin_index);
	free(p->frames);
	tk_hidx_free(&p->frame_index);
	free(p->stacks);
	tk_hidx_free(&p->stack_index);
	for (size_t i = 0; i < p->nthreads; i++) {
		free(p->threads[i].cells);
		free(p->threads[i].map);
	}
	free(p->threads);
	tk_hidx_free(&p->thread_index);
	free(p->scratch);
	for (size_t i = 0; i < p->nmeta; i++) {
		free(p->meta[i].key);
		free(p->meta[i].value);
	}
	free(p->meta);
	tk_profile_keep_samples(p, 0);
	free(p->images);
	tk_hidx_free(&p->image_index);
	for (size_t i = 0; i < p->nevents; i++)
		free(p->events[i].attrs);
	free(p->events);
	free(p);
}

/* ---- strings ---- */

typedef struct strkey {
	const char *s;
	size_t len;
} strkey;

static int str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tk_profile *p = ctx;
	const strkey *k = key;
	return p->strs[idx].len == k->len && memcmp(p->strs[idx].s, k->s, k->len) == 0;
}

tk_str tk_intern(tk_profile *p, const char *s, size_t len)
{
	strkey k = {s, len};
	uint64_t h = tk_hash_bytes(s, len, 0);
	uint32_t found = tk_hidx_find(&p->str_index, h, str_eq, p, &k);
	if (found != UINT32_MAX)
		return found;
	char *dst;
	if (len + 1 > STR_CHUNK) { /* a huge string gets a chunk of its own */
		TK_GROW(p->chunks, p->capchunks, p->nchunks + 1);
		dst = tk_xmalloc(len + 1);
		/* insert before the current chunk so the bump pointer keeps working on the last one */
		if (p->nchunks) {
			p->chunks[p->nchunks] = p->chunks[p->nchunks - 1];
			p->chunks[p->nchunks - 1] = dst;
		} else {
			p->chunks[0] = dst;
			p->chunk_used = STR_CHUNK; /* force a fresh chunk next time */
		}
		p->nchunks++;
	} else {
		if (!p->nchunks || p->chunk_used + len + 1 > STR_CHUNK) {
			TK_GROW(p->chunks, p->capchunks, p->nchunks + 1);
			p->chunks[p->nchunks++] = tk_xmalloc(STR_CHUNK);
			p->chunk_used = 0;
		}
		dst = p->chunks[p->nchunks - 1] + p->chunk_used;
		p->chunk_used += len + 1;
	}
	memcpy(dst, s, len);
	dst[len] = 0;
	TK_GROW(p->strs, p->capstrs, p->nstrs + 1);
	p->strs[p->nstrs] = (strref){dst, (uint32_t)len};
	tk_hidx_insert(&p->str_index, h, (uint32_t)p->nstrs);
	return (tk_str)p->nstrs++;
}

tk_str tk_intern_cstr(tk_profile *p, const char *s)
{
	return s ? tk_intern(p, s, strlen(s)) : 0;
}

const char *tk_string(const tk_profile *p, tk_str s)
{
	return s < p->nstrs ? p->strs[s].s : "";
}

size_t tk_string_len(const tk_profile *p, tk_str s)
{
	return s < p->nstrs ? p->strs[s].len : 0;
}

/* ---- binaries ---- */

static uint64_t bin_hash(const tk_binary *b)
{
	return tk_hash_bytes(b, sizeof *b, 1);
}

static int bin_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tk_profile *p = ctx;
	return memcmp(&p->bins[idx], key, sizeof(tk_binary)) == 0;
}

tk_binary_id tk_binary_add(tk_profile *p, const tk_binary *b)
{
	tk_binary k;
	memset(&k, 0, sizeof k); /* padding must not enter the hash */
	k.name = b->name;
	k.path = b->path;
	k.uuid = b->uuid;
	k.arch = b->arch;
	k.load_addr = b->load_addr;
	uint64_t h = bin_hash(&k);
	uint32_t found = tk_hidx_find(&p->bin_index, h, bin_eq, p, &k);
	if (found != UINT32_MAX)
		return found;
	TK_GROW(p->bins, p->capbins, p->nbins + 1);
	p->bins[p->nbins] = k;
	tk_hidx_insert(&p->bin_index, h, (uint32_t)p->nbins);
	return (tk_binary_id)p->nbins++;
}

const tk_binary *tk_binary_get(const tk_profile *p, tk_binary_id id)
{
	return id && id < p->nbins ? &p->bins[id] : NULL;
}

size_t tk_binary_count(const tk_profile *p)
{
	return p->nbins - 1;
}

/* ---- frames ---- */

static int frame_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tk_profile *p = ctx;
	return memcmp(&p->frames[idx], key, sizeof(tk_frame)) == 0;
}

/* A table moved to room for need entries of sz bytes (used of them kept), in memory for a big table
 * filled at once (tk_xmalloc_big: huge pages). */
static void reserve_big(void **t, size_t *cap, size_t used, size_t need, size_t sz)
{
	if (need <= *cap)
		return;
	void *q = tk_xmalloc_big(need * sz);
	if (used)
		memcpy(q, *t, used * sz);
	free(*t);
	*t = q;
	*cap = need;
}

void tk_profile_reserve(tk_profile *p, size_t frames, size_t stacks)
{
	reserve_big((void **)&p->frames, &p->capframes, p->nframes, p->nframes + frames, sizeof *p->frames);
	reserve_big((void **)&p->stacks, &p->capstacks, p->nstacks, p->nstacks + stacks, sizeof *p->stacks);
}

/* The frame as the table keeps it and compares it: its fields, the padding zero. */
static void frame_key(tk_frame *k, const tk_frame *f)
{
	memset(k, 0, sizeof *k);
	k->addr = f->addr;
	k->name = f->name;
	k->binary = f->binary;
	k->file = f->file;
	k->line = f->line;
	k->flags = f->flags;
}

static void frame_index_build(tk_profile *p)
{
	p->frame_index_stale = 0;
	tk_hidx_free(&p->frame_index);
	tk_hidx_reserve(&p->frame_index, p->nframes);
	for (size_t i = 1; i < p->nframes; i++) {
		tk_frame k;
		frame_key(&k, &p->frames[i]);
		tk_hidx_insert(&p->frame_index, tk_hash_bytes(&k, sizeof k, 2), (uint32_t)i);
	}
}

tk_frame_id tk_frame_append(tk_profile *p, const tk_frame *f)
{
	TK_GROW_BIG(p->frames, p->capframes, p->nframes + 1);
	frame_key(&p->frames[p->nframes], f);
	p->frame_index_stale = 1;
	return (tk_frame_id)p->nframes++;
}

tk_frame_id tk_frame_add(tk_profile *p, const tk_frame *f)
{
	if (p->frame_index_stale)
		frame_index_build(p);
	tk_frame k;
	frame_key(&k, f);
	uint64_t h = tk_hash_bytes(&k, sizeof k, 2);
	uint32_t found = tk_hidx_find(&p->frame_index, h, frame_eq, p, &k);
	if (found != UINT32_MAX)
		return found;
	TK_GROW_BIG(p->frames, p->capframes, p->nframes + 1);
	p->frames[p->nframes] = k;
	tk_hidx_insert(&p->frame_index, h, (uint32_t)p->nframes);
	return (tk_frame_id)p->nframes++;
}

const tk_frame *tk_frame_get(const tk_profile *p, tk_frame_id id)
{
	return id && id < p->nframes ? &p->frames[id] : NULL;
}

size_t tk_frame_count(const tk_profile *p)
{
	return p->nframes - 1;
}

const char *tk_frame_label(const tk_profile *p, tk_frame_id id, char buf[32])
{
	const tk_frame *f = tk_frame_get(p, id);
	if (!f)
		return "";
	if (f->name || (f->flags & TK_FRAME_EMPTY))
		return tk_string(p, f->name);
	static const char hex[] = "0123456789abcdef";
	char tmp[17];
	int n = 0;
	uint64_t a = f->addr;
	do {
		tmp[n++] = hex[a & 15];
		a >>= 4;
	} while (a);
	buf[0] = '0';
	buf[1] = 'x';
	for (int i = 0; i < n; i++)
		buf[2 + i] = tmp[n - 1 - i];
	buf[2 + n] = 0;
	return buf;
}

/* ---- stacks ---- */

typedef struct stackkey {
	tk_stack_id parent;
	tk_frame_id frame;
} stackkey;

static int stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tk_profile *p = ctx;
	const stackkey *k = key;
	return p->stacks[idx].n.parent == k->parent && p->stacks[idx].n.frame == k->frame;
}

static uint64_t stack_hash(tk_stack_id parent, tk_frame_id frame)
{
	return tk_hash_u64(((uint64_t)parent << 32) | frame);
}

/* A new child of parent (its links and the wide parents' index kept as tk_stack_push keeps them). */
static tk_stack_id stack_new(tk_profile *p, tk_stack_id parent, tk_frame_id frame)
{
	TK_GROW_BIG(p->stacks, p->capstacks, p->nstacks + 1);
	uint32_t id = (uint32_t)p->nstacks++;
	snode *par = &p->stacks[parent];
	p->stacks[id] = (snode){{parent, frame, parent ? par->n.depth + 1 : 1}, 0, par->child, 0};
	par->child = id;
	if (++par->nchild == WIDE + 1) { /* the parent turns wide: index all its children */
		for (uint32_t c = id; c; c = p->stacks[c].sib)
			tk_hidx_insert(&p->stack_index, stack_hash(parent, p->stacks[c].n.frame), c);
	} else if (par->nchild > WIDE + 1)
		tk_hidx_insert(&p->stack_index, stack_hash(parent, frame), id);
	return id;
}

tk_stack_id tk_stack_append(tk_profile *p, tk_stack_id parent, tk_frame_id frame)
{
	return parent < p->nstacks ? stack_new(p, parent, frame) : 0;
}

tk_stack_id tk_stack_push(tk_profile *p, tk_stack_id parent, tk_frame_id frame)
{
	if (parent >= p->nstacks)
		return 0; /* not a stack of this profile */
	snode *par = &p->stacks[parent];
	if (par->nchild <= WIDE) {
		for (uint32_t c = par->child; c; c = p->stacks[c].sib)
			if (p->stacks[c].n.frame == frame)
				return c;
	} else {
		stackkey k = {parent, frame};
		uint32_t found = tk_hidx_find(&p->stack_index, stack_hash(parent, frame), stack_eq, p, &k);
		if (found != UINT32_MAX)
			return found;
	}
	return stack_new(p, parent, frame);
}

tk_stack_id tk_stack_from_leaf_first(tk_profile *p, const tk_frame_id *frames, size_t n)
{
	tk_stack_id s = 0;
	while (n--)
		s = tk_stack_push(p, s, frames[n]);
	return s;
}

const tk_stack_node *tk_stack_get(const tk_profile *p, tk_stack_id id)
{
	return id && id < p->nstacks ? &p->stacks[id].n : NULL;
}

size_t tk_stack_count(const tk_profile *p)
{
	return p->nstacks - 1;
}

uint32_t tk_stack_depth(const tk_profile *p, tk_stack_id id)
{
	return id && id < p->nstacks ? p->stacks[id].n.depth : 0;
}

size_t tk_stack_frames(const tk_profile *p, tk_stack_id id, tk_frame_id *out, size_t cap)
{
	size_t d = tk_stack_depth(p, id);
	size_t i = d;
	while (id && id < p->nstacks) {
		--i;
		if (i < cap)
			out[i] = p->stacks[id].n.frame;
		id = p->stacks[id].n.parent;
	}
	return d;
}

/* ---- threads and samples ---- */

typedef struct threadkey {
	int64_t pid;
	uint64_t tid;
} threadkey;

static int thread_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tk_profile *p = ctx;
	const threadkey *k = key;
	return p->threads[idx].t.pid == k->pid && p->threads[idx].t.tid == k->tid;
}

tk_thread_id tk_thread_add(tk_profile *p, int64_t pid, uint64_t tid, tk_str name, tk_str process)
{
	TK_GROW(p->threads, p->capthreads, p->nthreads + 1);
	tk_tstate *ts = &p->threads[p->nthreads];
	memset(ts, 0, sizeof *ts);
	ts->t.pid = pid;
	ts->t.tid = tid;
	ts->t.t_min = UINT64_MAX;
	ts->t.t_max = 0;
	ts->t.name = name;
	ts->t.process = process;
	return (tk_thread_id)p->nthreads++;
}

tk_thread_id tk_thread_get_or_add(tk_profile *p, int64_t pid, uint64_t tid, tk_str name, tk_str process)
{
	threadkey k = {pid, tid};
	uint64_t h = tk_hash_u64((uint64_t)pid * 0x9e3779b97f4a7c15ULL ^ tid);
	uint32_t found = tk_hidx_find(&p->thread_index, h, thread_eq, p, &k);
	if (found == UINT32_MAX) {
		TK_GROW(p->threads, p->capthreads, p->nthreads + 1);
		tk_tstate *ts = &p->threads[p->nthreads];
		memset(ts, 0, sizeof *ts);
		ts->t.pid = pid;
		ts->t.tid = tid;
		ts->t.t_min = UINT64_MAX;
		ts->t.t_max = 0;
		tk_hidx_insert(&p->thread_index, h, (uint32_t)p->nthreads);
		found = (uint32_t)p->nthreads++;
	}
	tk_tstate *ts = &p->threads[found];
	if (name)
		ts->t.name = name;
	if (process)
		ts->t.process = process;
	return found;
}

const tk_thread *tk_thread_get(const tk_profile *p, tk_thread_id t)
{
	return t < p->nthreads ? &p->threads[t].t : NULL;
}

size_t tk_thread_count(const tk_profile *p)
{
	return p->nthreads;
}

void tk_thread_set_name(tk_profile *p, tk_thread_id t, tk_str name)
{
	if (t < p->nthreads)
		p->threads[t].t.name = name;
}

static uint32_t cell_slot(const tk_tstate *ts, tk_stack_id stack)
{
	return (uint32_t)tk_hash_u64(stack) & ts->mapmask;
}

/* A thread's stack → cell map exists only once it has more than SCAN cells (until then a look-up
 * scans the cells, which sit in a few cache lines); it is built, or doubled, when the cells would
 * pass half its slots. Most threads of a MetricKit diagnostic or a crash never need one. */
enum { SCAN = 16 };

static void cell_map_grow(tk_tstate *ts)
{
	uint32_t ncap = ts->map ? (ts->mapmask + 1) * 2 : 64;
	while ((ts->ncells + 1) * 2 > ncap)
		ncap *= 2;
	/* the new map first: tk_xcalloc may unwind on OOM (tk_oom_run), and the thread must then still
	 * own a valid map for tk_profile_free */
	uint64_t *map = tk_xcalloc(ncap, sizeof *map);
	free(ts->map);
	ts->map = map;
	ts->mapmask = ncap - 1;
	for (uint32_t c = 0; c < ts->ncells; c++) {
		uint32_t j = cell_slot(ts, ts->cells[c].stack);
		while (ts->map[j])
			j = (j + 1) & ts->mapmask;
		ts->map[j] = (uint64_t)ts->cells[c].stack << 32 | (c + 1);
	}
}

static uint32_t cell_new(tk_tstate *ts, tk_stack_id stack)
{
	TK_GROW_BIG(ts->cells, ts->capcells, ts->ncells + 1);
	ts->cells[ts->ncells] = (tk_stack_weight){stack, 0, 0};
	return (uint32_t)ts->ncells++;
}

/* The cell of stack in thread ts, made if new. */
static uint32_t cell_of(tk_tstate *ts, tk_stack_id stack)
{
	if (!ts->map && ts->ncells <= SCAN) {
		for (uint32_t c = 0; c < ts->ncells; c++)
			if (ts->cells[c].stack == stack)
				return c;
		return cell_new(ts, stack);
	}
	if ((ts->ncells + 1) * 2 > (size_t)(ts->map ? ts->mapmask + 1 : 0))
		cell_map_grow(ts);
	for (uint32_t i = cell_slot(ts, stack);; i = (i + 1) & ts->mapmask) {
		uint64_t slot = ts->map[i];
		if (!slot) { /* a stack new to this thread */
			uint32_t c = cell_new(ts, stack);
			ts->map[i] = (uint64_t)stack << 32 | (c + 1);
			return c;
		}
		if ((tk_stack_id)(slot >> 32) == stack)
			return (uint32_t)slot - 1;
	}
}

static void cell_add(tk_profile *p, tk_tstate *ts, uint32_t c, uint64_t weight, uint64_t n)
{
	ts->last = c + 1;
	ts->cells[c].weight += weight;
	ts->cells[c].samples += n;
	ts->t.weight += weight;
	ts->t.samples += n;
	if (ts->t.event && ts->t.role != TK_ROLE_CONTEXT) {
		tk_event *e = &p->events[ts->t.event - 1].e;
		e->weight += weight;
		e->samples += n;
	}
}

void tk_sample_add_n(tk_profile *p, tk_thread_id t, tk_stack_id stack, uint64_t weight, uint64_t n)
{
	if (t >= p->nthreads)
		return;
	if (p->total_weight + weight < p->total_weight) {
		p->weight_overflow = 1;
		return;
	}
	p->total_weight += weight;
	tk_tstate *ts = &p->threads[t];
	uint32_t c = ts->last - 1;
	if (!ts->last || ts->cells[c].stack != stack)
		c = cell_of(ts, stack);
	cell_add(p, ts, c, weight, n);
}

int tk_profile_take_tree(tk_profile *p, tk_profile *q, const tk_stack_id *map)
{
	if (p->keep_samples || p->nsamples || p->flat)
		return -1;
	/* swap the tables: q frees p's old ones */
	tk_frame *fr = p->frames;
	size_t nf = p->nframes, cf = p->capframes;
	tk_hidx fi = p->frame_index;
	int fs = p->frame_index_stale;
	p->frames = q->frames, p->nframes = q->nframes, p->capframes = q->capframes, p->frame_index = q->frame_index;
	q->frames = fr, q->nframes = nf, q->capframes = cf, q->frame_index = fi;
	p->frame_index_stale = q->frame_index_stale, q->frame_index_stale = fs;
	snode *st = p->stacks;
	size_t ns = p->nstacks, cs = p->capstacks;
	tk_hidx si = p->stack_index;
	p->stacks = q->stacks, p->nstacks = q->nstacks, p->capstacks = q->capstacks, p->stack_index = q->stack_index;
	q->stacks = st, q->nstacks = ns, q->capstacks = cs, q->stack_index = si;
	/* a cell of stack s moves to map[s]: in place, in the same order, when no two cells of a
	 * thread meet (seen marks the new stacks taken; cleared after each thread); the thread's map
	 * is then rebuilt by the next sample added to it (cell_of), if any */
	uint64_t *seen = tk_xcalloc(p->nstacks / 64 + 1, sizeof *seen);
	for (size_t t = 0; t < p->nthreads; t++) {
		tk_tstate *ts = &p->threads[t];
		tk_stack_weight *old = ts->cells;
		size_t n = ts->ncells;
		free(ts->map);
		ts->map = NULL, ts->mapmask = 0, ts->last = 0;
		size_t j = 0, at = 0;
		for (; at < n; at++) {
			if (!old[at].weight && !old[at].samples)
				continue;
			tk_stack_id to = map[old[at].stack];
			if (seen[to / 64] >> (to % 64) & 1)
				break;
			seen[to / 64] |= 1ull << (to % 64);
			j++;
		}
		for (size_t k = 0; k < n; k++)
			if (old[k].weight || old[k].samples)
				seen[map[old[k].stack] / 64] = 0;
		if (at == n) {
			for (size_t k = 0, w = 0; k < n; k++)
				if (old[k].weight || old[k].samples)
					old[w++] = (tk_stack_weight){map[old[k].stack], old[k].weight, old[k].samples};
			ts->ncells = j;
			continue;
		}
		ts->cells = NULL, ts->ncells = ts->capcells = 0;
		if (n > SCAN && n < UINT32_MAX / 4) { /* at most n cells: sized once */
			TK_GROW(ts->cells, ts->capcells, n);
			uint32_t ncap = 64;
			while (ncap < (n + 1) * 2)
				ncap *= 2;
			ts->map = tk_xcalloc(ncap, sizeof *ts->map);
			ts->mapmask = ncap - 1;
		}
		for (size_t i = 0; i < n; i++) {
			if (!old[i].weight && !old[i].samples)
				continue; /* as tk_derive_samples: an empty cell is no sample */
			uint32_t c = cell_of(ts, map[old[i].stack]);
			ts->cells[c].weight += old[i].weight;
			ts->cells[c].samples += old[i].samples;
		}
		free(old);
	}
	free(seen);
	return 0;
}

void tk_thread_add_cells(tk_profile *p, tk_thread_id t, const tk_stack_weight *in, size_t n)
{
	if (t >= p->nthreads)
		return;
	tk_tstate *ts = &p->threads[t];
	if (ts->ncells || ts->map || n <= SCAN || n > UINT32_MAX / 4) {
		for (size_t i = 0; i < n; i++)
			tk_sample_add_n(p, t, in[i].stack, in[i].weight, in[i].samples);
		return;
	}
	/* A fresh thread: the cells sized once, duplicates found with the profile's scratch table
	 * (cleared after), and no map kept (cell_of builds one if samples come later). */
	if (ts->capcells < n) {
		ts->cells = tk_xrealloc(ts->cells, n * sizeof *ts->cells);
		ts->capcells = n;
	}
	size_t cap = 64;
	while (cap < n * 2)
		cap *= 2;
	if (p->capscratch < cap) {
		uint64_t *fresh = tk_xcalloc(cap, sizeof *fresh); /* before the free: see cell_map_grow */
		free(p->scratch);
		p->scratch = fresh;
		p->capscratch = cap;
	}
	uint64_t *map = p->scratch; /* only [0, cap) is used, all zero on entry */
	for (size_t i = 0; i < n; i++) {
		uint64_t w = in[i].weight;
		if (p->total_weight + w < p->total_weight) {
			p->weight_overflow = 1;
			continue;
		}
		p->total_weight += w;
		uint32_t c;
		for (size_t j = (size_t)tk_hash_u64(in[i].stack) & (cap - 1);; j = (j + 1) & (cap - 1)) {
			if (!map[j]) {
				c = cell_new(ts, in[i].stack);
				map[j] = (uint64_t)in[i].stack << 32 | (c + 1);
				break;
			}
			if ((tk_stack_id)(map[j] >> 32) == in[i].stack) {
				c = (uint32_t)map[j] - 1;
				break;
			}
		}
		cell_add(p, ts, c, w, in[i].samples);
	}
	memset(map, 0, cap * sizeof *map);
}

void tk_thread_note_time(tk_profile *p, tk_thread_id t, uint64_t time)
{
	if (t >= p->nthreads || time == UINT64_MAX)
		return;
	tk_thread *th = &p->threads[t].t;
	if (time < th->t_min)
		th->t_min = time;
	if (time > th->t_max)
		th->t_max = time;
}

void tk_sample_add(tk_profile *p, tk_thread_id t, tk_stack_id stack, uint64_t weight, uint64_t time)
{
	if (t >= p->nthreads)
		return;
	tk_sample_add_n(p, t, stack, weight, 1);
	tk_thread_note_time(p, t, time);
	if (p->keep_samples)
		tk_sample_list_append(p, &(tk_sample){time, weight, t, stack});
}

void tk_profile_keep_samples(tk_profile *p, int on)
{
	p->keep_samples = on != 0;
	if (!on) {
		for (size_t i = 0; i < p->nslists; i++)
			bs_free(&p->slists[i].s);
		free(p->slists);
		p->slists = NULL;
		p->nslists = 0;
		bs_free(&p->order);
		free(p->flat);
		p->flat = NULL;
		p->nflat = p->nsamples = 0;
		p->unknown_time = 0;
	}
}

int tk_profile_keeps_samples(const tk_profile *p)
{
	return p->keep_samples;
}

void tk_sample_list_append(tk_profile *p, const tk_sample *s)
{
	if (!p->keep_samples || s->thread >= p->nthreads)
		return;
	if (s->thread >= p->nslists) {
		size_t n = p->nthreads;
		p->slists = tk_xrealloc(p->slists, n * sizeof *p->slists);
		memset(p->slists + p->nslists, 0, (n - p->nslists) * sizeof *p->slists);
		p->nslists = n;
	}
	slist *l = &p->slists[s->thread];
	uint8_t row[ROW_MAX];
	size_t k = 0;
	uint64_t v = s->time + 1; /* UINT64_MAX (unknown) -> 0 */
	uint64_t d = v - l->v;
	k += put_varint(row + k, (d << 1) ^ (uint64_t) - (int64_t)(d >> 63));
	int wd = s->weight != l->w;
	k += put_varint(row + k, (uint64_t)s->stack << 1 | (uint64_t)wd);
	if (wd)
		k += put_varint(row + k, s->weight);
	if (v == 0 || (l->n && v < l->v))
		l->out_of_order = 1;
	if (v == 0)
		p->unknown_time = 1;
	l->v = v;
	l->w = s->weight;
	l->n++;
	bs_append(&l->s, row, k);
	k = put_varint(row, s->thread);
	bs_append(&p->order, row, k);
	p->nsamples++;
}

size_t tk_profile_sample_count(const tk_profile *p)
{
	return p->nsamples;
}

int tk_profile_sample_times_known(const tk_profile *p)
{
	return !p->unknown_time;
}

size_t tk_thread_sample_count(const tk_profile *p, tk_thread_id t)
{
	return t < p->nslists ? p->slists[t].n : 0;
}

int tk_thread_samples_in_order(const tk_profile *p, tk_thread_id t)
{
	return t >= p->nslists || !p->slists[t].out_of_order;
}

/* A read position in one stream. */
typedef struct bcur {
	const bstream *b;
	size_t chunk;
	uint32_t off;
} bcur;

static inline uint64_t cur_varint(bcur *c)
{
	const bchunk *k = c->b->c[c->chunk];
	if (c->off >= k->len) { /* rows never straddle chunks */
		k = c->b->c[++c->chunk];
		c->off = 0;
	}
	const uint8_t *d = k->data + c->off;
	uint64_t v = 0;
	unsigned sh = 0, i = 0;
	for (;; sh += 7) {
		uint8_t b = d[i++];
		v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			break;
	}
	c->off += i;
	return v;
}

typedef struct tcur {
	bcur c;
	size_t left;
	uint64_t v, w;
} tcur;

struct tk_sample_iter {
	const tk_profile *p;
	tk_thread_id thread; /* UINT32_MAX: every thread in arrival order */
	size_t left;
	bcur order;
	tcur *t; /* one per thread (one in all for a single thread) */
};

static void tcur_next(tcur *c, tk_sample *s)
{
	uint64_t z = cur_varint(&c->c);
	c->v += (z >> 1) ^ (uint64_t) - (int64_t)(z & 1);
	uint64_t a = cur_varint(&c->c);
	if (a & 1)
		c->w = cur_varint(&c->c);
	c->left--;
	s->time = c->v - 1;
	s->weight = c->w;
	s->stack = (tk_stack_id)(a >> 1);
}

tk_sample_iter *tk_sample_iter_new(const tk_profile *p, tk_thread_id t)
{
	tk_sample_iter *it = tk_xcalloc(1, sizeof *it);
	it->p = p;
	it->thread = t;
	if (t == TK_ALL_THREADS) {
		it->left = p->nsamples;
		it->order.b = &p->order;
		it->t = tk_xcalloc(p->nslists ? p->nslists : 1, sizeof *it->t);
		for (size_t i = 0; i < p->nslists; i++)
			it->t[i] = (tcur){{&p->slists[i].s, 0, 0}, p->slists[i].n, 0, 0};
	} else {
		it->t = tk_xcalloc(1, sizeof *it->t);
		if (t < p->nslists)
			it->t[0] = (tcur){{&p->slists[t].s, 0, 0}, p->slists[t].n, 0, 0};
		it->left = it->t[0].left;
	}
	return it;
}

int tk_sample_iter_next(tk_sample_iter *it, tk_sample *s)
{
	if (!it->left)
		return 0;
	it->left--;
	if (it->thread == TK_ALL_THREADS) {
		tk_thread_id t = (tk_thread_id)cur_varint(&it->order);
		tcur_next(&it->t[t], s);
		s->thread = t;
	} else {
		tcur_next(&it->t[0], s);
		s->thread = it->thread;
	}
	return 1;
}

void tk_sample_iter_free(tk_sample_iter *it)
{
	if (!it)
		return;
	free(it->t);
	free(it);
}

const tk_sample *tk_profile_sample_list(const tk_profile *p, size_t *n)
{
	*n = p->nsamples;
	if (!p->nsamples)
		return NULL;
	if (p->nflat != p->nsamples) {
		/* The profile is logically unchanged: this is a cache of what the streams hold. */
		tk_profile *q = (tk_profile *)p;
		free(q->flat);
		q->flat = tk_xmalloc(p->nsamples * sizeof *q->flat);
		tk_sample_iter *it = tk_sample_iter_new(p, TK_ALL_THREADS);
		size_t i = 0;
		while (tk_sample_iter_next(it, &q->flat[i]))
			i++;
		tk_sample_iter_free(it);
		q->nflat = p->nsamples;
	}
	return p->flat;
}

static int image_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tk_binary *o = &((const tk_profile *)ctx)->images[idx], *b = key;
	return o->uuid == b->uuid && o->path == b->path && o->name == b->name && o->arch == b->arch &&
	       o->load_addr == b->load_addr;
}

size_t tk_profile_image_add(tk_profile *p, const tk_binary *b)
{
	uint64_t h = tk_hash_u64(((uint64_t)b->uuid << 32 | b->path) ^ tk_hash_u64(b->load_addr) ^
	                         ((uint64_t)b->name << 32 | b->arch) * 0x9e3779b97f4a7c15ULL);
	uint32_t at = tk_hidx_find(&p->image_index, h, image_eq, p, b);
	if (at != UINT32_MAX)
		return at;
	TK_GROW(p->images, p->capimages, p->nimages + 1);
	p->images[p->nimages] = *b;
	tk_hidx_insert(&p->image_index, h, (uint32_t)p->nimages);
	return p->nimages++;
}

const tk_binary *tk_profile_images(const tk_profile *p, size_t *n)
{
	*n = p->nimages;
	return p->images;
}

const tk_stack_weight *tk_thread_stacks(const tk_profile *p, tk_thread_id t, size_t *n)
{
	if (t >= p->nthreads) {
		*n = 0;
		return NULL;
	}
	*n = p->threads[t].ncells;
	return p->threads[t].cells;
}

/* ---- metadata ---- */

void tk_profile_set_unit(tk_profile *p, tk_unit u)
{
	p->unit = u;
}

tk_unit tk_profile_unit(const tk_profile *p)
{
	return p->unit;
}

uint64_t tk_profile_weight(const tk_profile *p)
{
	uint64_t w = 0;
	for (size_t i = 0; i < p->nthreads; i++)
		w += p->threads[i].t.weight;
	return w;
}

int tk_profile_scale_weights(tk_profile *p, uint64_t factor)
{
	if (factor == 1)
		return 0;
	if (factor == 0 || (p->total_weight && p->total_weight > UINT64_MAX / factor))
		return -1; /* every weight is at most the total */
	p->total_weight *= factor;
	for (size_t i = 0; i < p->nthreads; i++) {
		tk_tstate *ts = &p->threads[i];
		ts->t.weight *= factor;
		for (size_t c = 0; c < ts->ncells; c++)
			ts->cells[c].weight *= factor;
	}
	return 0;
}

unsigned tk_profile_weight_decimals(const tk_profile *p)
{
	const char *d = tk_profile_meta(p, "weight-decimals");
	return d && d[0] >= '0' && d[0] <= '9' && !d[1] ? (unsigned)(d[0] - '0') : 0;
}

int tk_profile_weight_overflow(const tk_profile *p)
{
	return p->weight_overflow;
}

uint64_t tk_profile_samples(const tk_profile *p)
{
	uint64_t n = 0;
	for (size_t i = 0; i < p->nthreads; i++)
		n += p->threads[i].t.samples;
	return n;
}

void tk_profile_set_meta(tk_profile *p, const char *key, const char *value)
{
	/* Allocate before anything points at it: an allocation that fails under an out-of-memory guard
	 * (util/mem.h) must leave the profile as it was. */
	char *v = tk_xstrdup(value);
	for (size_t i = 0; i < p->nmeta; i++)
		if (strcmp(p->meta[i].key, key) == 0) {
			free(p->meta[i].value);
			p->meta[i].value = v;
			return;
		}
	char *k = tk_xstrdup(key);
	TK_GROW(p->meta, p->capmeta, p->nmeta + 1);
	p->meta[p->nmeta] = (meta_kv){k, v};
	p->nmeta++;
}

const char *tk_profile_meta(const tk_profile *p, const char *key)
{
	for (size_t i = 0; i < p->nmeta; i++)
		if (strcmp(p->meta[i].key, key) == 0)
			return p->meta[i].value;
	return NULL;
}

size_t tk_profile_meta_count(const tk_profile *p)
{
	return p->nmeta;
}

void tk_profile_meta_at(const tk_profile *p, size_t i, const char **key, const char **value)
{
	*key = i < p->nmeta ? p->meta[i].key : NULL;
	*value = i < p->nmeta ? p->meta[i].value : NULL;
}

/* ---- events ---- */

const char *tk_event_kind_name(tk_event_kind k)
{
	switch (k) {
	case TK_EVENT_MARKER: return "marker";
	case TK_EVENT_CPU_HIGHLOAD: return "cpu-highload";
	case TK_EVENT_HANG: return "hang";
	case TK_EVENT_CRASH: return "crash";
	case TK_EVENT_CPU_EXCEPTION: return "cpu-exception";
	case TK_EVENT_DISK_WRITE: return "disk-write";
	case TK_EVENT_LAUNCH: return "launch";
	case TK_EVENT_KIND_COUNT: break;
	}
	return "?";
}

int tk_event_kind_parse(const char *name, tk_event_kind *out)
{
	for (int k = 0; k < TK_EVENT_KIND_COUNT; k++)
		if (strcmp(name, tk_event_kind_name((tk_event_kind)k)) == 0) {
			*out = (tk_event_kind)k;
			return 0;
		}
	if (strcmp(name, "cpu") == 0) {
		*out = TK_EVENT_CPU_EXCEPTION;
		return 0;
	}
	if (strcmp(name, "disk") == 0) {
		*out = TK_EVENT_DISK_WRITE;
		return 0;
	}
	return -1;
}

static event_state *event_at(const tk_profile *p, tk_event_id e)
{
	return e && e <= p->nevents ? &p->events[e - 1] : NULL;
}

tk_event_id tk_event_add(tk_profile *p, const tk_event *e)
{
	TK_GROW(p->events, p->capevents, p->nevents + 1);
	event_state *es = &p->events[p->nevents];
	memset(es, 0, sizeof *es);
	es->e = *e;
	es->e.weight = 0;
	es->e.samples = 0;
	return (tk_event_id)++p->nevents;
}

const tk_event *tk_event_get(const tk_profile *p, tk_event_id e)
{
	event_state *es = event_at(p, e);
	return es ? &es->e : NULL;
}

size_t tk_event_count(const tk_profile *p)
{
	return p->nevents;
}

void tk_event_set_thread(tk_profile *p, tk_event_id e, tk_thread_id t)
{
	event_state *es = event_at(p, e);
	if (es)
		es->e.thread = t;
}

static int counts_in_event(tk_thread_role r)
{
	return r == TK_ROLE_OWNED || r == TK_ROLE_ATTRIBUTED;
}

void tk_thread_set_event(tk_profile *p, tk_thread_id t, tk_event_id e, tk_thread_role role)
{
	if (t >= p->nthreads || (e && !event_at(p, e)))
		return;
	tk_thread *th = &p->threads[t].t;
	event_state *old = event_at(p, th->event);
	if (old && counts_in_event(th->role)) { /* the samples it has move with it */
		old->e.weight -= th->weight;
		old->e.samples -= th->samples;
	}
	th->event = e;
	th->role = e ? role : TK_ROLE_NONE;
	event_state *now = event_at(p, e);
	if (now && counts_in_event(th->role)) {
		now->e.weight += th->weight;
		now->e.samples += th->samples;
	}
}

static event_attr *attr_slot(tk_profile *p, event_state *es, const char *key)
{
	tk_str k = tk_intern_cstr(p, key);
	for (size_t i = 0; i < es->nattrs; i++)
		if (es->attrs[i].key == k)
			return &es->attrs[i];
	TK_GROW(es->attrs, es->capattrs, es->nattrs + 1);
	es->attrs[es->nattrs] = (event_attr){k, 0, NAN};
	return &es->attrs[es->nattrs++];
}

static const event_attr *attr_find(const tk_profile *p, tk_event_id e, const char *key)
{
	event_state *es = event_at(p, e);
	if (!es)
		return NULL;
	for (size_t i = 0; i < es->nattrs; i++)
		if (strcmp(tk_string(p, es->attrs[i].key), key) == 0)
			return &es->attrs[i];
	return NULL;
}

void tk_event_set_str(tk_profile *p, tk_event_id e, const char *key, const char *value)
{
	event_state *es = event_at(p, e);
	if (!es || !key || !value)
		return;
	/* str 0 (the empty string) marks a number, so an empty value is kept as UINT32_MAX. */
	event_attr *a = attr_slot(p, es, key);
	a->str = value[0] ? tk_intern_cstr(p, value) : UINT32_MAX;
	a->num = NAN;
}

void tk_event_set_num(tk_profile *p, tk_event_id e, const char *key, double value)
{
	event_state *es = event_at(p, e);
	if (!es || !key)
		return;
	event_attr *a = attr_slot(p, es, key);
	a->str = 0;
	a->num = value;
}

static const char *attr_str(const tk_profile *p, const event_attr *a)
{
	return a->str == UINT32_MAX ? "" : a->str ? tk_string(p, a->str) : NULL;
}

const char *tk_event_str(const tk_profile *p, tk_event_id e, const char *key)
{
	const event_attr *a = attr_find(p, e, key);
	return a ? attr_str(p, a) : NULL;
}

double tk_event_num(const tk_profile *p, tk_event_id e, const char *key)
{
	const event_attr *a = attr_find(p, e, key);
	return a && !a->str ? a->num : NAN;
}

size_t tk_event_attr_count(const tk_profile *p, tk_event_id e)
{
	event_state *es = event_at(p, e);
	return es ? es->nattrs : 0;
}

tk_event_attr tk_event_attr_at(const tk_profile *p, tk_event_id e, size_t i)
{
	event_state *es = event_at(p, e);
	if (!es || i >= es->nattrs)
		return (tk_event_attr){NULL, NULL, NAN};
	const event_attr *a = &es->attrs[i];
	return (tk_event_attr){tk_string(p, a->key), attr_str(p, a), a->str ? NAN : a->num};
}

tk_event_id tk_event_copy(tk_profile *dst, const tk_profile *src, tk_event_id e, tk_thread_id t)
{
	const tk_event *se = tk_event_get(src, e);
	if (!se)
		return 0;
	tk_event ne = *se;
	ne.name = tk_intern_cstr(dst, tk_string(src, se->name));
	ne.key = tk_intern_cstr(dst, tk_string(src, se->key));
	ne.thread = t;
	tk_event_id id = tk_event_add(dst, &ne);
	for (size_t i = 0, n = tk_event_attr_count(src, e); i < n; i++) {
		tk_event_attr a = tk_event_attr_at(src, e, i);
		if (a.str)
			tk_event_set_str(dst, id, a.key, a.str);
		else
			tk_event_set_num(dst, id, a.key, a.num);
	}
	return id;
}

size_t tk_profile_memory(const tk_profile *p)
{
	size_t m = sizeof *p + p->nchunks * STR_CHUNK + p->capstrs * sizeof(strref) + tk_hidx_memory(&p->str_index);
	m += p->capbins * sizeof(tk_binary) + tk_hidx_memory(&p->bin_index);
	m += p->capframes * sizeof(tk_frame) + tk_hidx_memory(&p->frame_index);
	m += p->capstacks * sizeof(snode) + tk_hidx_memory(&p->stack_index);
	m += p->capthreads * sizeof(tk_tstate) + tk_hidx_memory(&p->thread_index);
	m += p->capscratch * sizeof *p->scratch;
	for (size_t i = 0; i < p->nthreads; i++)
		m += p->threads[i].capcells * sizeof(tk_stack_weight) +
		     (p->threads[i].map ? (size_t)(p->threads[i].mapmask + 1) * sizeof(uint64_t) : 0);
	m += p->capimages * sizeof(tk_binary);
	m += tk_hidx_memory(&p->image_index);
	m += bs_memory(&p->order) + p->nslists * sizeof *p->slists + p->nflat * sizeof *p->flat;
	for (size_t i = 0; i < p->nslists; i++)
		m += bs_memory(&p->slists[i].s);
	m += p->capevents * sizeof *p->events;
	for (size_t i = 0; i < p->nevents; i++)
		m += p->events[i].capattrs * sizeof(event_attr);
	return m;
}
