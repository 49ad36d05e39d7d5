/*
 * Call trees and top functions. See include/tracekit/calltree.h for the contract.
 *
 * Top-down trees are built per group by mapping each distinct stack id to a node, memoised along
 * the prefix tree, so work is O(distinct stacks) hash look-ups. Weights are added only as self at
 * the mapped node; totals come from one reverse sweep over the nodes (children are always created
 * after their parent), which makes total = self + Σ children exact by construction.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/calltree.h"
#include "util/hidx.h"
#include "util/mem.h"

/* ---- function identity (label + binary name) ---- */

typedef struct func_key {
	const char *label; /* the profile's string, or an owned copy of a hex label */
	size_t len;
	tk_str binary; /* binary name, or 0 (also 0 when identity is by label alone) */
} func_key;

/* Functions are compared by label text, so a frame named "0x1f00" and an unnamed frame at 0x1f00
 * are the same function, as the documented identity (label + binary) says. */
typedef struct func_table {
	const tk_profile *p;
	int label_only;
	uint32_t *of_frame; /* frame → function id + 1 (0 = not computed yet) */
	func_key *keys;     /* function id → key */
	tk_frame_id *frame; /* function id → first frame seen */
	char **owned;       /* hex labels */
	size_t n, cap, nowned, capowned;
	tk_hidx index;
} func_table;

static void functions_init(func_table *ft, const tk_profile *p, int label_only)
{
	memset(ft, 0, sizeof *ft);
	ft->p = p;
	ft->label_only = label_only;
	ft->of_frame = tk_xcalloc(tk_frame_count(p) + 1, sizeof *ft->of_frame);
}

static void functions_free(func_table *ft)
{
	free(ft->of_frame);
	free(ft->keys);
	free(ft->frame);
	for (size_t i = 0; i < ft->nowned; i++)
		free(ft->owned[i]);
	free(ft->owned);
	tk_hidx_free(&ft->index);
}

static int func_eq(const void *ctx, uint32_t idx, const void *key)
{
	const func_table *ft = ctx;
	const func_key *a = &ft->keys[idx], *b = key;
	return a->binary == b->binary && a->len == b->len && memcmp(a->label, b->label, a->len) == 0;
}

static uint32_t function_of(func_table *ft, tk_frame_id f)
{
	if (ft->of_frame[f])
		return ft->of_frame[f] - 1;
	const tk_frame *fr = tk_frame_get(ft->p, f);
	char buf[32];
	func_key k = {tk_frame_label(ft->p, f, buf), 0, 0};
	k.len = strlen(k.label);
	if (!ft->label_only) {
		const tk_binary *b = tk_binary_get(ft->p, fr->binary);
		k.binary = b ? b->name : 0;
	}
	uint64_t h = tk_hash_bytes(k.label, k.len, k.binary);
	uint32_t id = tk_hidx_find(&ft->index, h, func_eq, ft, &k);
	if (id == UINT32_MAX) {
		if (k.label == buf) {
			TK_GROW(ft->owned, ft->capowned, ft->nowned + 1);
			k.label = ft->owned[ft->nowned++] = tk_xstrdup(buf);
		}
		size_t cap = ft->cap;
		TK_GROW(ft->keys, ft->cap, ft->n + 1);
		/* only when keys grew: a realloc per function copies the array each time under ASan */
		if (ft->cap != cap)
			ft->frame = tk_xrealloc(ft->frame, ft->cap * sizeof *ft->frame);
		ft->keys[ft->n] = k;
		ft->frame[ft->n] = f;
		tk_hidx_insert(&ft->index, h, (uint32_t)ft->n);
		id = (uint32_t)ft->n++;
	}
	ft->of_frame[f] = id + 1;
	return id;
}

static const char *frame_binary_name(const tk_profile *p, tk_frame_id f)
{
	const tk_frame *fr = tk_frame_get(p, f);
	const tk_binary *b = fr ? tk_binary_get(p, fr->binary) : NULL;
	return b ? tk_string(p, b->name) : "";
}

/* Byte order of label, then binary name. */
static int frame_name_cmp(const tk_profile *p, tk_frame_id a, tk_frame_id b)
{
	char ba[32], bb[32];
	int c = strcmp(tk_frame_label(p, a, ba), tk_frame_label(p, b, bb));
	return c ? c : strcmp(frame_binary_name(p, a), frame_binary_name(p, b));
}

/* A stable merge sort with a context argument: qsort_r differs between glibc and the BSDs, and
 * file-level "current context" globals would make the library unsafe to use from two threads. */
typedef int (*cmp_ctx)(const void *a, const void *b, const void *ctx);

static void sort_ctx(void *base, size_t n, size_t size, cmp_ctx cmp, const void *ctx)
{
	if (n < 2)
		return;
	char *a = base, *tmp = tk_xmalloc(n * size), *src = a, *dst = tmp;
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi) {
				if (cmp(src + j * size, src + i * size, ctx) < 0)
					memcpy(dst + k++ * size, src + j++ * size, size);
				else
					memcpy(dst + k++ * size, src + i++ * size, size);
			}
			memcpy(dst + k * size, src + i * size, (mid - i) * size);
			k += mid - i;
			memcpy(dst + k * size, src + j * size, (hi - j) * size);
		}
		char *sw = src;
		src = dst;
		dst = sw;
	}
	if (src != a)
		memcpy(a, src, n * size);
	free(tmp);
}

/* ---- the tree ---- */

struct tk_calltree {
	const tk_profile *p;
	tk_calltree_options o;
	tk_cnode *nodes;
	size_t n, cap;
	uint32_t *func; /* node → function id (capacity cap) */
	tk_hidx child_index;
	tk_calltree_group *groups;
	size_t ngroups, capgroups;
	func_table ft;
};

void tk_calltree_options_init(tk_calltree_options *o)
{
	memset(o, 0, sizeof *o);
	o->group = TK_GROUP_THREAD;
}

static tk_cnode_id new_node(tk_calltree *t, tk_cnode_id parent, tk_frame_id frame, uint32_t func, uint32_t flags)
{
	if (t->n + 1 > t->cap) {
		TK_GROW(t->nodes, t->cap, t->n + 1);
		t->func = tk_xrealloc(t->func, t->cap * sizeof *t->func);
	}
	tk_cnode *n = &t->nodes[t->n];
	memset(n, 0, sizeof *n);
	n->frame = frame;
	n->parent = parent;
	n->first_child = n->next_sibling = TK_CNODE_NONE;
	n->depth = parent == TK_CNODE_NONE ? 0 : t->nodes[parent].depth + 1;
	n->flags = flags;
	t->func[t->n] = func;
	return (tk_cnode_id)t->n++;
}

typedef struct child_key {
	tk_cnode_id parent;
	uint32_t func;
} child_key;

static int child_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tk_calltree *t = ctx;
	const child_key *k = key;
	return t->nodes[idx].parent == k->parent && t->func[idx] == k->func;
}

static tk_cnode_id child_of(tk_calltree *t, tk_cnode_id parent, tk_frame_id frame)
{
	child_key k = {parent, function_of(&t->ft, frame)};
	uint64_t h = tk_hash_u64((uint64_t)parent << 32 | k.func);
	uint32_t c = tk_hidx_find(&t->child_index, h, child_eq, t, &k);
	const tk_frame *f = tk_frame_get(t->p, frame);
	int inlined = f && (f->flags & TK_FRAME_INLINED);
	if (c != UINT32_MAX) {
		if (!inlined) /* one out-of-line call merged in: the node is not purely inlined */
			t->nodes[c].flags &= ~(uint32_t)TK_CNODE_INLINED;
		return c;
	}
	c = new_node(t, parent, frame, k.func, inlined ? TK_CNODE_INLINED : 0);
	tk_hidx_insert(&t->child_index, h, c);
	return c;
}

typedef struct builder {
	tk_calltree *t;
	tk_cnode_id *memo; /* stack → node, valid when stamp matches */
	uint32_t *stamp;   /* stack → group serial */
	uint32_t serial;
	tk_stack_id *path; /* scratch */
	size_t cappath;
	uint64_t *self_samples; /* per node, capacity grows with nodes */
	size_t capss;
} builder;

static tk_cnode_id map_top_down(builder *b, tk_cnode_id root, tk_stack_id s)
{
	const tk_profile *p = b->t->p;
	size_t n = 0;
	tk_stack_id cur = s;
	while (cur && b->stamp[cur] != b->serial) {
		TK_GROW(b->path, b->cappath, n + 1);
		b->path[n++] = cur;
		cur = tk_stack_get(p, cur)->parent;
	}
	tk_cnode_id node = cur ? b->memo[cur] : root;
	while (n--) {
		tk_stack_id id = b->path[n];
		node = child_of(b->t, node, tk_stack_get(p, id)->frame);
		b->memo[id] = node;
		b->stamp[id] = b->serial;
	}
	return node;
}

static tk_cnode_id map_inverted(builder *b, tk_cnode_id root, tk_stack_id s)
{
	const tk_profile *p = b->t->p;
	tk_cnode_id node = root;
	for (tk_stack_id cur = s; cur; cur = tk_stack_get(p, cur)->parent)
		node = child_of(b->t, node, tk_stack_get(p, cur)->frame);
	return node;
}

static void add_self(builder *b, tk_cnode_id node, uint64_t w, uint64_t n)
{
	if (b->capss < b->t->cap) {
		size_t old = b->capss;
		b->capss = b->t->cap;
		b->self_samples = tk_xrealloc(b->self_samples, b->capss * sizeof *b->self_samples);
		memset(b->self_samples + old, 0, (b->capss - old) * sizeof *b->self_samples);
	}
	b->t->nodes[node].self += w;
	b->self_samples[node] += n;
}

static void build_group(builder *b, const tk_thread_id *threads, size_t nthreads, tk_calltree_group g)
{
	tk_calltree *t = b->t;
	uint64_t samples = 0;
	for (size_t i = 0; i < nthreads; i++)
		samples += tk_thread_get(t->p, threads[i])->samples;
	if (!samples)
		return;
	b->serial++;
	size_t first = t->n;
	g.root = new_node(t, TK_CNODE_NONE, 0, UINT32_MAX, TK_CNODE_ROOT);
	g.threads = (uint32_t)nthreads;
	for (size_t i = 0; i < nthreads; i++) {
		size_t ns;
		const tk_stack_weight *sw = tk_thread_stacks(t->p, threads[i], &ns);
		for (size_t j = 0; j < ns; j++) {
			tk_cnode_id node =
			    t->o.invert ? map_inverted(b, g.root, sw[j].stack) : map_top_down(b, g.root, sw[j].stack);
			add_self(b, node, sw[j].weight, sw[j].samples);
		}
	}
	add_self(b, g.root, 0, 0); /* make sure self_samples covers every node */
	for (size_t i = t->n; i-- > first;) {
		tk_cnode *n = &t->nodes[i];
		n->total += n->self;
		n->samples += b->self_samples[i];
		if (n->parent != TK_CNODE_NONE) {
			t->nodes[n->parent].total += n->total;
			t->nodes[n->parent].samples += n->samples;
			t->nodes[n->parent].nchildren++;
		}
	}
	TK_GROW(t->groups, t->capgroups, t->ngroups + 1);
	t->groups[t->ngroups++] = g;
}

static int sibling_cmp(const void *a, const void *b, const void *ctx)
{
	const tk_calltree *t = ctx;
	tk_cnode_id x = *(const tk_cnode_id *)a, y = *(const tk_cnode_id *)b;
	const tk_cnode *nx = &t->nodes[x], *ny = &t->nodes[y];
	if (nx->total != ny->total)
		return nx->total > ny->total ? -1 : 1;
	int c = frame_name_cmp(t->p, nx->frame, ny->frame);
	if (c)
		return c;
	return x < y ? -1 : x > y;
}

/* Link every node's children in sorted order. Children are bucketed by parent first (a counting
 * sort on nchildren), so only siblings are ever compared. */
static void link_children(tk_calltree *t)
{
	size_t *start = tk_xcalloc(t->n + 1, sizeof *start);
	for (size_t i = 0; i < t->n; i++)
		start[i + 1] = start[i] + t->nodes[i].nchildren;
	size_t m = start[t->n];
	tk_cnode_id *ids = tk_xmalloc((m ? m : 1) * sizeof *ids);
	size_t *fill = tk_xmalloc((t->n ? t->n : 1) * sizeof *fill);
	memcpy(fill, start, t->n * sizeof *fill);
	for (size_t i = 0; i < t->n; i++)
		if (t->nodes[i].parent != TK_CNODE_NONE)
			ids[fill[t->nodes[i].parent]++] = (tk_cnode_id)i;
	free(fill);
	for (size_t x = 0; x < t->n; x++) {
		size_t lo = start[x], hi = start[x + 1];
		if (hi - lo > 1)
			sort_ctx(ids + lo, hi - lo, sizeof *ids, sibling_cmp, t);
		tk_cnode_id next = TK_CNODE_NONE;
		for (size_t i = hi; i-- > lo;) {
			t->nodes[ids[i]].next_sibling = next;
			next = ids[i];
		}
		t->nodes[x].first_child = next;
	}
	free(start);
	free(ids);
}

typedef struct thread_ref {
	int64_t pid;
	tk_thread_id t;
} thread_ref;

static int by_pid(const void *a, const void *b)
{
	const thread_ref *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

static int group_cmp(const void *a, const void *b, const void *ctx)
{
	const tk_calltree *group_tree = ctx;
	const tk_calltree_group *x = a, *y = b;
	uint64_t tx = group_tree->nodes[x->root].total, ty = group_tree->nodes[y->root].total;
	if (tx != ty)
		return tx > ty ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->root < y->root ? -1 : x->root > y->root;
}

tk_calltree *tk_calltree_build(const tk_profile *p, const tk_calltree_options *o, tk_error *err)
{
	tk_calltree_options def;
	if (!o) {
		tk_calltree_options_init(&def);
		o = &def;
	}
	if (o->group > TK_GROUP_ALL) {
		tk_error_set(err, "call tree: unknown grouping %d", (int)o->group);
		return NULL;
	}
	tk_calltree *t = tk_xcalloc(1, sizeof *t);
	t->p = p;
	t->o = *o;
	functions_init(&t->ft, p, o->label_only);

	builder b = {.t = t};
	size_t nstacks = tk_stack_count(p) + 1;
	b.memo = tk_xmalloc(nstacks * sizeof *b.memo);
	b.stamp = tk_xcalloc(nstacks, sizeof *b.stamp);
	tk_hidx_reserve(&t->child_index, nstacks); /* about a node per stack: no rehashing as it fills */

	size_t nthreads = tk_thread_count(p);
	thread_ref *refs = tk_xmalloc((nthreads ? nthreads : 1) * sizeof *refs);
	tk_thread_id *ids = tk_xmalloc((nthreads ? nthreads : 1) * sizeof *ids);
	for (tk_thread_id i = 0; i < nthreads; i++)
		refs[i] = (thread_ref){tk_thread_get(p, i)->pid, i};
	if (o->group == TK_GROUP_THREAD) {
		for (size_t i = 0; i < nthreads; i++) {
			const tk_thread *th = tk_thread_get(p, refs[i].t);
			build_group(&b, &refs[i].t, 1,
			            (tk_calltree_group){th->pid, th->tid, th->name, th->process, 1, 0});
		}
	} else if (o->group == TK_GROUP_PROCESS) {
		qsort(refs, nthreads, sizeof *refs, by_pid);
		for (size_t i = 0; i < nthreads;) {
			size_t j = i, m = 0;
			tk_str proc = 0;
			for (; j < nthreads && refs[j].pid == refs[i].pid; j++) {
				ids[m++] = refs[j].t;
				if (!proc)
					proc = tk_thread_get(p, refs[j].t)->process;
			}
			build_group(&b, ids, m, (tk_calltree_group){refs[i].pid, 0, 0, proc, 0, 0});
			i = j;
		}
	} else {
		for (size_t i = 0; i < nthreads; i++)
			ids[i] = (tk_thread_id)i;
		build_group(&b, ids, nthreads, (tk_calltree_group){-1, 0, 0, 0, 0, 0});
	}
	free(refs);
	free(ids);
	free(b.memo);
	free(b.stamp);
	free(b.path);
	free(b.self_samples);

	link_children(t);
	sort_ctx(t->groups, t->ngroups, sizeof *t->groups, group_cmp, t);
	/* The lookup index is only needed while building. */
	tk_hidx_free(&t->child_index);
	return t;
}

void tk_calltree_free(tk_calltree *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->func);
	tk_hidx_free(&t->child_index);
	free(t->groups);
	functions_free(&t->ft);
	free(t);
}

const tk_profile *tk_calltree_profile(const tk_calltree *t)
{
	return t->p;
}

int tk_calltree_inverted(const tk_calltree *t)
{
	return t->o.invert;
}

tk_group_by tk_calltree_grouping(const tk_calltree *t)
{
	return t->o.group;
}

size_t tk_calltree_group_count(const tk_calltree *t)
{
	return t->ngroups;
}

const tk_calltree_group *tk_calltree_group_get(const tk_calltree *t, size_t i)
{
	return i < t->ngroups ? &t->groups[i] : NULL;
}

const tk_cnode *tk_calltree_node(const tk_calltree *t, tk_cnode_id id)
{
	return id < t->n ? &t->nodes[id] : NULL;
}

size_t tk_calltree_node_count(const tk_calltree *t)
{
	return t->n;
}

const char *tk_cnode_label(const tk_calltree *t, const tk_cnode *n, char buf[32])
{
	if (n->flags & TK_CNODE_OTHER)
		return "(other)";
	if (n->flags & TK_CNODE_ROOT)
		return "";
	return tk_frame_label(t->p, n->frame, buf);
}

const char *tk_cnode_binary(const tk_calltree *t, const tk_cnode *n)
{
	return n->frame ? frame_binary_name(t->p, n->frame) : "";
}

/* ---- pruning ---- */

int tk_calltree_prune(tk_calltree *t, double min_percent, uint32_t max_depth, tk_error *err)
{
	if (!isfinite(min_percent) || min_percent < 0)
		return tk_error_set(err, "call tree: the minimum percentage must be a number >= 0");
	if (min_percent == 0 && max_depth == 0)
		return 0;
	tk_cnode_id *stack = NULL;
	size_t n = 0, cap = 0;
	for (size_t g = 0; g < t->ngroups; g++) {
		uint64_t gtotal = t->nodes[t->groups[g].root].total;
		TK_GROW(stack, cap, n + 1);
		stack[n++] = t->groups[g].root;
		while (n) {
			tk_cnode_id x = stack[--n];
			int cut_all = max_depth && t->nodes[x].depth >= max_depth;
			/* Children are sorted by total, so the ones below the threshold are a suffix. */
			tk_cnode_id prev = TK_CNODE_NONE, c = t->nodes[x].first_child;
			uint32_t kept = 0;
			while (c != TK_CNODE_NONE &&
			       !(cut_all || (double)t->nodes[c].total * 100.0 < min_percent * (double)gtotal)) {
				TK_GROW(stack, cap, n + 1);
				stack[n++] = c;
				prev = c;
				kept++;
				c = t->nodes[c].next_sibling;
			}
			if (c == TK_CNODE_NONE)
				continue;
			uint64_t w = 0, s = 0;
			for (tk_cnode_id h = c; h != TK_CNODE_NONE; h = t->nodes[h].next_sibling) {
				w += t->nodes[h].total;
				s += t->nodes[h].samples;
			}
			tk_cnode_id o = new_node(t, x, 0, UINT32_MAX, TK_CNODE_OTHER); /* may move t->nodes */
			t->nodes[o].total = t->nodes[o].self = w;
			t->nodes[o].samples = s;
			if (prev == TK_CNODE_NONE)
				t->nodes[x].first_child = o;
			else
				t->nodes[prev].next_sibling = o;
			t->nodes[x].nchildren = kept + 1;
		}
	}
	free(stack);
	return 0;
}

/* ---- top functions ---- */

typedef struct top_ctx {
	const tk_profile *p;
	tk_top_sort sort;
} top_ctx;

static int top_cmp(const void *a, const void *b, const void *ctx)
{
	const tk_top_entry *x = a, *y = b;
	const tk_profile *top_profile = ((const top_ctx *)ctx)->p;
	tk_top_sort top_sort = ((const top_ctx *)ctx)->sort;
	uint64_t kx = top_sort == TK_TOP_BY_SELF ? x->self : x->total;
	uint64_t ky = top_sort == TK_TOP_BY_SELF ? y->self : y->total;
	if (kx != ky)
		return kx > ky ? -1 : 1;
	kx = top_sort == TK_TOP_BY_SELF ? x->total : x->self;
	ky = top_sort == TK_TOP_BY_SELF ? y->total : y->self;
	if (kx != ky)
		return kx > ky ? -1 : 1;
	int c = frame_name_cmp(top_profile, x->frame, y->frame);
	return c ? c : (x->frame < y->frame ? -1 : x->frame > y->frame);
}

tk_top *tk_top_build(const tk_profile *p, tk_top_sort sort, tk_error *err)
{
	if (sort != TK_TOP_BY_SELF && sort != TK_TOP_BY_TOTAL) {
		tk_error_set(err, "top: unknown sort order %d", (int)sort);
		return NULL;
	}
	func_table ft;
	functions_init(&ft, p, 0);
	tk_top_entry *acc = NULL;
	size_t capacc = 0;
	uint64_t *stamp = NULL; /* function → last cell that counted it (serial + 1) */
	uint64_t serial = 0;
	tk_top *top = tk_xcalloc(1, sizeof *top);
	top->profile = p;
	for (tk_thread_id t = 0; t < tk_thread_count(p); t++) {
		size_t ns;
		const tk_stack_weight *sw = tk_thread_stacks(p, t, &ns);
		top->weight += tk_thread_get(p, t)->weight;
		top->samples += tk_thread_get(p, t)->samples;
		for (size_t i = 0; i < ns; i++) {
			serial++;
			int leaf = 1;
			for (tk_stack_id s = sw[i].stack; s; s = tk_stack_get(p, s)->parent) {
				uint32_t f = function_of(&ft, tk_stack_get(p, s)->frame);
				if (f >= capacc) {
					size_t old = capacc;
					TK_GROW(acc, capacc, (size_t)f + 1);
					stamp = tk_xrealloc(stamp, capacc * sizeof *stamp);
					memset(acc + old, 0, (capacc - old) * sizeof *acc);
					memset(stamp + old, 0, (capacc - old) * sizeof *stamp);
				}
				if (leaf) {
					acc[f].self += sw[i].weight;
					acc[f].self_samples += sw[i].samples;
					leaf = 0;
				}
				/* Count a function once per stack, however often it recurses. */
				if (stamp[f] != serial) {
					stamp[f] = serial;
					acc[f].total += sw[i].weight;
					acc[f].samples += sw[i].samples;
				}
			}
		}
	}
	top->n = ft.n;
	top->entries = tk_xmalloc((ft.n ? ft.n : 1) * sizeof *top->entries);
	for (size_t f = 0; f < ft.n; f++) {
		top->entries[f] = acc[f];
		top->entries[f].frame = ft.frame[f];
	}
	free(acc);
	free(stamp);
	functions_free(&ft);
	top_ctx tc = {p, sort};
	sort_ctx(top->entries, top->n, sizeof *top->entries, top_cmp, &tc);
	return top;
}

void tk_top_free(tk_top *t)
{
	if (!t)
		return;
	free(t->entries);
	free(t);
}
