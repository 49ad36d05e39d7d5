/*
 * Call tree as text, laid out like Instruments' Call Tree: for each group a header, then
 *
 *     Total ms      %    Self ms  Symbol
 *      9.00  100.0%       0.00  start  [dyld]
 *      9.00  100.0%       1.00  ├─ main  [a.out]
 *
 * Rows are indented with tree guides; weight shown in ms for nanosecond profiles and as raw counts
 * otherwise. Samples with an empty stack appear as a last "(no stack)" row so the rows add up.
 * The walk uses an explicit stack: recursion thousands of frames deep must not exhaust ours.
 */
#include <stdlib.h>
#include <string.h>

#include "tracekit/write.h"
#include "util/mem.h"
#include "util/text.h"
#include "write/wutil.h"

/* Guides stop growing below this many levels (deeper rows show their depth instead): a stack
 * 100,000 frames deep would otherwise write gigabytes of indentation. */
#define MAX_GUIDE_LEVELS 64

typedef struct item {
	tk_cnode_id node;
	size_t prefix; /* guide prefix length for this node's children */
} item;

static void header(FILE *out, const tk_calltree *t, const tk_calltree_group *g)
{
	const tk_profile *p = tk_calltree_profile(t);
	const tk_cnode *root = tk_calltree_node(t, g->root);
	tk_unit u = tk_profile_unit(p);
	char w[32];
	tk_wu_weight(w, sizeof w, u, tk_profile_weight_decimals(p), root->total);
	const char *proc = g->process ? tk_string(p, g->process) : "(unknown process)";
	switch (tk_calltree_grouping(t)) {
	case TK_GROUP_THREAD:
		fputs("Thread ", out);
		tk_text_fput(out, g->name ? tk_string(p, g->name) : "(unnamed)");
		{
			const char *kind = tk_profile_meta(p, "thread-tid");
			fprintf(out, " (%s %llu), process ", kind && strcmp(kind, "record") == 0 ? "record" : "tid",
			        (unsigned long long)g->tid);
		}
		tk_text_fput(out, proc);
		break;
	case TK_GROUP_PROCESS:
		fputs("Process ", out);
		tk_text_fput(out, proc);
		break;
	case TK_GROUP_ALL: fprintf(out, "All threads"); break;
	}
	if (tk_calltree_grouping(t) != TK_GROUP_ALL && g->pid >= 0)
		fprintf(out, " (pid %lld)", (long long)g->pid);
	if (tk_calltree_grouping(t) != TK_GROUP_THREAD)
		fprintf(out, ", %u thread%s", g->threads, g->threads == 1 ? "" : "s");
	if (u == TK_UNIT_SAMPLES && root->total == root->samples) /* the weight is the count: say it once */
		fprintf(out, ": %llu sample%s", (unsigned long long)root->samples, root->samples == 1 ? "" : "s");
	else
		fprintf(out, ": %s %s, %llu sample%s", w, tk_wu_display_unit(u), (unsigned long long)root->samples,
		        root->samples == 1 ? "" : "s");
	fprintf(out, "%s\n", tk_calltree_inverted(t) ? " (inverted: callers below each function)" : "");
	const char *du = tk_wu_display_unit(u);
	char tot[32], self[32];
	snprintf(tot, sizeof tot, "Total %s", du);
	snprintf(self, sizeof self, "Self %s", du);
	fprintf(out, "%14s %7s %14s  %s\n", tot, "%", self, "Symbol");
}

static void row(FILE *out, tk_unit u, unsigned d, uint64_t gtotal, const tk_cnode *n, const char *prefix, size_t plen,
                const char *label, const char *binary)
{
	char tot[32], self[32];
	tk_wu_weight(tot, sizeof tot, u, d, n->total);
	tk_wu_weight(self, sizeof self, u, d, n->self);
	fprintf(out, "%14s %6.1f%% %14s  ", tot, tk_wu_percent(n->total, gtotal), self);
	fwrite(prefix, 1, plen, out);
	if (n->depth > MAX_GUIDE_LEVELS + 1)
		fprintf(out, "[depth %u] ", n->depth);
	tk_text_fput(out, label);
	if (*binary) {
		fputs("  [", out);
		tk_text_fput(out, binary);
		putc(']', out);
	}
	if (n->flags & TK_CNODE_INLINED)
		fputs("  (inlined)", out);
	putc('\n', out);
}

int tk_write_tree_text(FILE *out, const tk_calltree *t, tk_error *err)
{
	static const char tee[] = "\u251c\u2500 ", elbow[] = "\u2514\u2500 ", pipe[] = "\u2502  ", blank[] = "   ";
	const tk_profile *p = tk_calltree_profile(t);
	tk_unit u = tk_profile_unit(p);
	item *stack = NULL;
	size_t n = 0, cap = 0;
	char *prefix = NULL;
	size_t capprefix = 0;
	for (size_t g = 0; g < tk_calltree_group_count(t); g++) {
		const tk_calltree_group *grp = tk_calltree_group_get(t, g);
		const tk_cnode *root = tk_calltree_node(t, grp->root);
		if (g)
			putc('\n', out);
		header(out, t, grp);
		TK_GROW(stack, cap, n + 1);
		stack[n++] = (item){grp->root, 0};
		while (n) {
			item it = stack[--n];
			const tk_cnode *node = tk_calltree_node(t, it.node);
			size_t child_prefix = it.prefix;
			if (!(node->flags & TK_CNODE_ROOT)) {
				int last = node->next_sibling == TK_CNODE_NONE;
				/* The prefix holds the ancestors' guides; depth-1 rows have none. */
				TK_GROW(prefix, capprefix, it.prefix + sizeof tee + 1);
				size_t plen = it.prefix;
				if (node->depth > 1) {
					memcpy(prefix + plen, last ? elbow : tee, sizeof tee - 1);
					plen += sizeof tee - 1;
				}
				char buf[32];
				row(out, u, tk_profile_weight_decimals(p), root->total, node, prefix, plen,
				    tk_cnode_label(t, node, buf), tk_cnode_binary(t, node));
				if (node->depth > 1 && node->depth <= MAX_GUIDE_LEVELS) {
					const char *cont = last ? blank : pipe;
					size_t clen = strlen(cont);
					memcpy(prefix + it.prefix, cont, clen);
					child_prefix = it.prefix + clen;
				}
			}
			size_t m = 0, i = 0;
			for (tk_cnode_id c = node->first_child; c != TK_CNODE_NONE;
			     c = tk_calltree_node(t, c)->next_sibling)
				m++;
			TK_GROW(stack, cap, n + m);
			/* Pushed in reverse so they pop in sorted order. */
			for (tk_cnode_id c = node->first_child; c != TK_CNODE_NONE;
			     c = tk_calltree_node(t, c)->next_sibling)
				stack[n + m - 1 - i++] = (item){c, child_prefix};
			n += m;
		}
		if (root->self) {
			tk_cnode none = *root;
			none.total = root->self;
			row(out, u, tk_profile_weight_decimals(p), root->total, &none, "", 0, "(no stack)", "");
		}
	}
	free(stack);
	free(prefix);
	return tk_wu_finish(out, "call tree", err);
}
