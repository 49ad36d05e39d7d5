/* Differential flame graph: B's tree coloured by each call path's change in total share from A. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/calltree.h"
#include "tracekit/stats.h"
#include "tracekit/write.h"
#include "util/hidx.h"
#include "util/mem.h"

typedef struct diffctx {
	const tk_calltree *a, *b;
	tk_cnode_id *match; /* B node → A node on the same path, or TK_CNODE_NONE */
	double wa, wb, maxd;
	const char *unit;
	tk_hidx idx; /* (A parent, label, binary) → A node */
} diffctx;

typedef struct akey {
	tk_cnode_id parent;
	const char *label, *binary;
} akey;

static uint64_t key_hash(tk_cnode_id parent, const char *label, const char *binary)
{
	return tk_hash_bytes(label, strlen(label), tk_hash_bytes(binary, strlen(binary), tk_hash_u64(parent)));
}

static int a_eq(const void *ctx, uint32_t idx, const void *k)
{
	const diffctx *d = ctx;
	const akey *key = k;
	const tk_cnode *n = tk_calltree_node(d->a, idx);
	char buf[32];
	return n->parent == key->parent && strcmp(tk_cnode_label(d->a, n, buf), key->label) == 0 &&
	       strcmp(tk_cnode_binary(d->a, n), key->binary) == 0;
}

static tk_cnode_id node_id(const tk_calltree *t, const tk_cnode *n)
{
	return (tk_cnode_id)(n - tk_calltree_node(t, 0));
}

static double share_delta(const diffctx *d, tk_cnode_id bid)
{
	const tk_cnode *bn = tk_calltree_node(d->b, bid);
	double sb = d->wb > 0 ? bn->total / d->wb : 0, sa = 0;
	if (d->match[bid] != TK_CNODE_NONE && d->wa > 0)
		sa = tk_calltree_node(d->a, d->match[bid])->total / d->wa;
	return sb - sa;
}

static uint32_t color(void *ctx, const tk_calltree *t, const tk_cnode *n)
{
	const diffctx *d = ctx;
	double dl = share_delta(d, node_id(t, n)), k = d->maxd > 0 ? fabs(dl) / d->maxd : 0;
	if (k > 1)
		k = 1;
	/* White for no change, saturating to red (growth) or blue (shrink). */
	unsigned fade = (unsigned)lround(235 - 200 * k);
	if (fabs(dl) < 1e-12)
		return 0xebebeb;
	return dl > 0 ? (0xff0000u | fade << 8 | fade) : (fade << 16 | fade << 8 | 0xffu);
}

static void note(void *ctx, const tk_calltree *t, const tk_cnode *n, char *buf, size_t cap)
{
	const diffctx *d = ctx;
	tk_cnode_id id = node_id(t, n);
	double tb = (double)n->total,
	       ta = d->match[id] != TK_CNODE_NONE ? tk_calltree_node(d->a, d->match[id])->total : 0;
	snprintf(buf, cap, "A %.6g %s (%.2f%%) → B %.6g %s (%.2f%%): %+.2f points", ta, d->unit,
	         d->wa > 0 ? 100 * ta / d->wa : 0, tb, d->unit, d->wb > 0 ? 100 * tb / d->wb : 0,
	         100 * share_delta(d, id));
}

int tk_write_diff_flamegraph(FILE *f, const tk_profile *pa, const tk_profile *pb, const char *title, tk_error *err)
{
	tk_calltree_options co;
	tk_calltree_options_init(&co);
	co.group = TK_GROUP_ALL;
	tk_calltree *a = tk_calltree_build(pa, &co, err), *b = a ? tk_calltree_build(pb, &co, err) : NULL;
	if (!a || !b) {
		tk_calltree_free(a);
		return -1;
	}
	diffctx d = {.a = a, .b = b, .unit = tk_unit_name(tk_profile_unit(pb))};
	d.wa = (double)tk_profile_weight(pa);
	d.wb = (double)tk_profile_weight(pb);
	size_t na = tk_calltree_node_count(a), nb = tk_calltree_node_count(b);
	char buf[32];
	for (size_t i = 0; i < na; i++) {
		const tk_cnode *n = tk_calltree_node(a, (tk_cnode_id)i);
		if (n->parent == TK_CNODE_NONE)
			continue;
		tk_hidx_insert(&d.idx, key_hash(n->parent, tk_cnode_label(a, n, buf), tk_cnode_binary(a, n)),
		               (uint32_t)i);
	}
	d.match = tk_xmalloc((nb ? nb : 1) * sizeof *d.match);
	/* Parents come before children in B's node array? Not guaranteed: resolve recursively by walking
	 * from each group root in pre-order. */
	for (size_t i = 0; i < nb; i++)
		d.match[i] = TK_CNODE_NONE;
	size_t ga = tk_calltree_group_count(a), gb = tk_calltree_group_count(b);
	tk_cnode_id *stack = tk_xmalloc((nb ? nb : 1) * sizeof *stack);
	for (size_t g = 0; g < gb; g++) {
		tk_cnode_id root = tk_calltree_group_get(b, g)->root;
		d.match[root] = ga ? tk_calltree_group_get(a, 0)->root : TK_CNODE_NONE;
		size_t sp = 0;
		stack[sp++] = root;
		while (sp) {
			tk_cnode_id id = stack[--sp];
			const tk_cnode *n = tk_calltree_node(b, id);
			for (tk_cnode_id c = n->first_child; c != TK_CNODE_NONE;
			     c = tk_calltree_node(b, c)->next_sibling) {
				const tk_cnode *cn = tk_calltree_node(b, c);
				if (d.match[id] != TK_CNODE_NONE) {
					akey k = {d.match[id], tk_cnode_label(b, cn, buf), tk_cnode_binary(b, cn)};
					uint32_t m =
					    tk_hidx_find(&d.idx, key_hash(k.parent, k.label, k.binary), a_eq, &d, &k);
					d.match[c] = m == UINT32_MAX ? TK_CNODE_NONE : m;
				}
				stack[sp++] = c;
			}
		}
	}
	free(stack);
	for (size_t i = 0; i < nb; i++) {
		double x = fabs(share_delta(&d, (tk_cnode_id)i));
		if (tk_calltree_node(b, (tk_cnode_id)i)->parent != TK_CNODE_NONE && x > d.maxd)
			d.maxd = x;
	}
	tk_flame_options o;
	tk_flame_options_init(&o);
	o.title = title ? title : "Differential flame graph";
	o.subtitle = "B's call tree; red: larger share than in A, blue: smaller (hover for both)";
	o.color = color;
	o.note = note;
	o.ctx = &d;
	int r = tk_write_flamegraph(f, b, &o, err);
	tk_hidx_free(&d.idx);
	free(d.match);
	tk_calltree_free(a);
	tk_calltree_free(b);
	return r;
}
