/*
 * Call tree as JSON; the schema is documented in docs/json-tree.md. Weights are integers in the
 * profile's unit (never rounded), so consumers can check total = self + Σ children.total exactly.
 * Nodes are written with an explicit stack (deep recursion must not exhaust the C stack).
 */
#include <stdlib.h>

#include "tracekit/write.h"
#include "util/mem.h"
#include "write/wutil.h"

typedef struct item {
	tk_cnode_id node;
	int close; /* 1: write the node's closing brackets */
} item;

static void open_node(FILE *out, const tk_calltree *t, const tk_cnode *n)
{
	char buf[32];
	fputs("{\"name\":", out);
	tk_wu_json_string(out, tk_cnode_label(t, n, buf));
	const char *bin = tk_cnode_binary(t, n);
	if (*bin) {
		fputs(",\"binary\":", out);
		tk_wu_json_string(out, bin);
	}
	if (n->flags & TK_CNODE_OTHER)
		fputs(",\"other\":true", out);
	if (n->flags & TK_CNODE_INLINED)
		fputs(",\"inlined\":true", out);
	fprintf(out, ",\"total\":%llu,\"self\":%llu,\"samples\":%llu,\"children\":[", (unsigned long long)n->total,
	        (unsigned long long)n->self, (unsigned long long)n->samples);
}

static const char *grouping_name(tk_group_by g)
{
	return g == TK_GROUP_THREAD ? "thread" : g == TK_GROUP_PROCESS ? "process" : "all";
}

int tk_write_tree_json(FILE *out, const tk_calltree *t, tk_error *err)
{
	const tk_profile *p = tk_calltree_profile(t);
	fprintf(out, "{\"unit\":\"%s\",", tk_unit_name(tk_profile_unit(p)));
	if (tk_profile_weight_decimals(p)) /* weights count 10^-D of the unit (folded `1.5` counts) */
		fprintf(out, "\"weight_decimals\":%u,", tk_profile_weight_decimals(p));
	fprintf(out, "\"by\":\"%s\",\"inverted\":%s,\"threads\":[", grouping_name(tk_calltree_grouping(t)),
	        tk_calltree_inverted(t) ? "true" : "false");
	item *stack = NULL;
	size_t n = 0, cap = 0;
	for (size_t g = 0; g < tk_calltree_group_count(t); g++) {
		const tk_calltree_group *grp = tk_calltree_group_get(t, g);
		const tk_cnode *root = tk_calltree_node(t, grp->root);
		if (g)
			putc(',', out);
		putc('{', out);
		if (grp->pid >= 0)
			fprintf(out, "\"pid\":%lld", (long long)grp->pid);
		else
			fputs("\"pid\":null", out);
		if (tk_calltree_grouping(t) == TK_GROUP_THREAD)
			fprintf(out, ",\"tid\":%llu", (unsigned long long)grp->tid);
		else
			fputs(",\"tid\":null", out);
		fputs(",\"name\":", out);
		if (grp->name)
			tk_wu_json_string(out, tk_string(p, grp->name));
		else
			fputs("null", out);
		fputs(",\"process\":", out);
		if (grp->process)
			tk_wu_json_string(out, tk_string(p, grp->process));
		else
			fputs("null", out);
		fprintf(out, ",\"threads\":%u,\"total\":%llu,\"self\":%llu,\"samples\":%llu,\"root\":[", grp->threads,
		        (unsigned long long)root->total, (unsigned long long)root->self,
		        (unsigned long long)root->samples);
		/* Push the root's children in reverse; each node pushes its closer, then its children. */
		size_t base = n;
		for (tk_cnode_id c = root->first_child; c != TK_CNODE_NONE; c = tk_calltree_node(t, c)->next_sibling) {
			TK_GROW(stack, cap, n + 1);
			stack[n++] = (item){c, 0};
		}
		for (size_t i = base, j = n ? n - 1 : 0; i < j; i++, j--) {
			item tmp = stack[i];
			stack[i] = stack[j];
			stack[j] = tmp;
		}
		while (n) {
			item it = stack[--n];
			const tk_cnode *node = tk_calltree_node(t, it.node);
			if (it.close) {
				fputs("]}", out);
				continue;
			}
			if (tk_calltree_node(t, node->parent)->first_child != it.node)
				putc(',', out);
			open_node(out, t, node);
			size_t m = 0;
			for (tk_cnode_id c = node->first_child; c != TK_CNODE_NONE;
			     c = tk_calltree_node(t, c)->next_sibling)
				m++;
			TK_GROW(stack, cap, n + m + 1);
			stack[n++] = (item){it.node, 1};
			size_t i = 0;
			for (tk_cnode_id c = node->first_child; c != TK_CNODE_NONE;
			     c = tk_calltree_node(t, c)->next_sibling)
				stack[n + m - 1 - i++] = (item){c, 0};
			n += m;
		}
		fputs("]}", out);
	}
	fputs("]}\n", out);
	free(stack);
	return tk_wu_finish(out, "call tree JSON", err);
}
