/*
 * tracekit/calltree.h — call trees and top functions built from a profile.
 *
 * A call tree has one group per thread (or per process, or one for everything), and each group a
 * root node: a synthetic node whose total is the group's weight and whose self is the weight of
 * samples with an empty stack (xctrace <sentinel/> backtraces, or stacks emptied by a merge
 * transform). Below it, one node per distinct call path of *functions* (see transform.h for
 * function identity: label + binary name), so two call sites inside one function share a node.
 *
 * Invariants, exact at every node (weights are integers in the profile's unit):
 *     total = self + Σ children.total
 * Top-down: each sample adds its weight to the total of every node on its path and to the self of
 * the leaf node. Recursion gives each occurrence its own node. Inverted (bottom-up, Instruments'
 * "Invert Call Tree"): roots are leaf functions, a root's total is that function's self weight,
 * and the children of a node are its callers.
 *
 * Children are sorted by total (descending), then label, then binary name (byte order), so output
 * is deterministic. Building is linear in the number of distinct stacks (top-down) or in the sum of
 * their depths (inverted), never in the number of samples.
 *
 * Pruning (tk_calltree_prune) hides small or deep subtrees without breaking the invariant: the
 * weight of the hidden children of a node is folded into one synthetic "(other)" child, listed
 * last. So a pruned tree still adds up and still shows how much was hidden, and self keeps its
 * meaning (time spent in the function itself).
 */
#ifndef TRACEKIT_CALLTREE_H
#define TRACEKIT_CALLTREE_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/error.h"
#include "tracekit/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tk_group_by {
	TK_GROUP_THREAD = 0, /* one group per (pid, tid) */
	TK_GROUP_PROCESS,    /* one group per pid, its threads merged */
	TK_GROUP_ALL,        /* a single group */
} tk_group_by;

typedef struct tk_calltree_options {
	tk_group_by group;
	int invert;     /* bottom-up tree */
	int label_only; /* identify functions by label alone, ignoring the binary (folded stacks) */
} tk_calltree_options;

void tk_calltree_options_init(tk_calltree_options *o); /* per thread, top-down, label + binary */

typedef uint32_t tk_cnode_id;
#define TK_CNODE_NONE UINT32_MAX

enum {
	TK_CNODE_ROOT = 1u << 0,  /* the synthetic root of a group */
	TK_CNODE_OTHER = 1u << 1, /* "(other)": children hidden by pruning */
	/* Every frame merged into this node is an inlined call (TK_FRAME_INLINED, from symbolication):
	 * the code ran inside its caller's body, not in a call of its own. */
	TK_CNODE_INLINED = 1u << 2,
};

typedef struct tk_cnode {
	tk_frame_id frame;        /* a frame of the function (the first seen); 0 for root / other */
	tk_cnode_id parent;       /* TK_CNODE_NONE for a group root */
	tk_cnode_id first_child;  /* in sorted order; TK_CNODE_NONE if none */
	tk_cnode_id next_sibling; /* TK_CNODE_NONE if last */
	uint32_t depth;           /* 0 for the root, 1 for its children */
	uint32_t flags;           /* TK_CNODE_* */
	uint64_t total, self;     /* weights in the profile's unit */
	uint64_t samples;         /* samples counted in total */
	uint32_t nchildren;
} tk_cnode;

typedef struct tk_calltree_group {
	int64_t pid;      /* -1 for TK_GROUP_ALL (or unknown) */
	uint64_t tid;     /* 0 unless grouped per thread */
	tk_str name;      /* thread name (per thread), 0 otherwise */
	tk_str process;   /* process name, 0 if unknown or grouped by all */
	uint32_t threads; /* how many threads were merged into this group */
	tk_cnode_id root;
} tk_calltree_group;

typedef struct tk_calltree tk_calltree;

/* Build a tree; the profile must outlive it (nodes refer to its frames and strings). Groups are
 * ordered by total (descending), then pid, then tid. Groups with zero samples are left out. */
tk_calltree *tk_calltree_build(const tk_profile *p, const tk_calltree_options *o, tk_error *err);
void tk_calltree_free(tk_calltree *t);

const tk_profile *tk_calltree_profile(const tk_calltree *t);
int tk_calltree_inverted(const tk_calltree *t);
tk_group_by tk_calltree_grouping(const tk_calltree *t);
size_t tk_calltree_group_count(const tk_calltree *t);
const tk_calltree_group *tk_calltree_group_get(const tk_calltree *t, size_t i);
const tk_cnode *tk_calltree_node(const tk_calltree *t, tk_cnode_id id);
size_t tk_calltree_node_count(const tk_calltree *t);

/* The node's display label ("(other)" for an other node, "" for a root), and its binary name ("" if
 * none). The buffer holds hex labels of unsymbolicated frames. */
const char *tk_cnode_label(const tk_calltree *t, const tk_cnode *n, char buf[32]);
const char *tk_cnode_binary(const tk_calltree *t, const tk_cnode *n);

/* Hide children whose total is below min_percent of their group's total (0 = keep all) and every
 * node deeper than max_depth (0 = no limit; roots' children are depth 1). Hidden siblings are folded
 * into one "(other)" child of their parent, which is listed last; for max_depth that child sits at
 * depth max_depth + 1 and stands for everything below. Totals and selfs of visible nodes do not
 * change. Returns 0, or -1 with err for a negative or non-finite percentage. */
int tk_calltree_prune(tk_calltree *t, double min_percent, uint32_t max_depth, tk_error *err);

/* ---- top functions ---- */

typedef struct tk_top_entry {
	tk_frame_id frame;     /* a frame of the function */
	uint64_t self;         /* weight of samples where it is the leaf */
	uint64_t total;        /* weight of samples where it is on the stack, counted once per sample */
	uint64_t self_samples; /* samples where it is the leaf */
	uint64_t samples;      /* samples where it is on the stack */
} tk_top_entry;

typedef enum tk_top_sort { TK_TOP_BY_SELF = 0, TK_TOP_BY_TOTAL } tk_top_sort;

typedef struct tk_top {
	const tk_profile *profile;
	tk_top_entry *entries;
	size_t n;
	uint64_t weight;  /* Σ weights of all samples (empty stacks included): the 100% base */
	uint64_t samples; /* number of samples */
} tk_top;

/* One entry per function over all threads of p, sorted by self (or total) descending, then the
 * other weight, then label and binary. A function recursing on one stack is counted once in that
 * stack's total, so no total exceeds tk_top.weight. Returns NULL with err on failure. */
tk_top *tk_top_build(const tk_profile *p, tk_top_sort sort, tk_error *err);
void tk_top_free(tk_top *t);

#ifdef __cplusplus
}
#endif
#endif
