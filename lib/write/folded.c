/*
 * Folded stacks ("collapsed" format of FlameGraph / inferno). See include/tracekit/write.h.
 *
 * Stacks are first merged into a label-keyed call tree (per thread, or one for all threads), so
 * two stacks that differ only in call-site addresses, or that contain the same label from two
 * binaries, come out as one line. The tree is then walked depth first with siblings in byte order
 * of their labels, building each line's text incrementally: memory is the tree plus one line.
 */
#include <stdlib.h>
#include <string.h>

#include "tracekit/write.h"
#include "util/mem.h"
#include "util/text.h"
#include "write/wutil.h"

typedef struct linebuf {
	char *s;
	size_t n, cap;
} linebuf;

/* Append a frame, replacing the two characters the format reserves. Every frame is stored with
 * the ';' before it, the first one's dropped when the line is written, so an empty label (folded
 * `;b`, `a;;b`) keeps its place. */
static void append_frame(linebuf *b, const char *label)
{
	size_t len = strlen(label);
	TK_GROW(b->s, b->cap, b->n + len + 2);
	b->s[b->n++] = ';';
	for (size_t i = 0; i < len; i++) {
		char c = label[i];
		b->s[b->n++] = c == ';' ? ':' : (c == '\n' || c == '\r') ? ' ' : c;
	}
	b->s[b->n] = 0;
}

static void emit(FILE *out, linebuf *b, uint64_t w, unsigned d)
{
	if (!w)
		return;
	/* the line and its count in one write: " COUNT\n" after the text (the next frame overwrites it) */
	TK_GROW(b->s, b->cap, b->n + 40);
	size_t n = b->n;
	b->s[n++] = ' ';
	if (d) { /* weights with decimals (folded `1.5` counts) are written back exactly */
		char num[32];
		tk_wu_decimal(num, sizeof num, w, d);
		size_t l = strlen(num);
		TK_GROW(b->s, b->cap, n + l + 2);
		memcpy(b->s + n, num, l);
		n += l;
	} else
		n += tk_fmt_u64(b->s + n, w);
	b->s[n++] = '\n';
	if (b->n > 1)
		fwrite(b->s + 1, 1, n - 1, out);
	else
		fwrite(b->s + b->n, 1, n - b->n, out);
}

typedef struct walk_item {
	tk_cnode_id node;
	size_t len; /* line length before this node's frame */
} walk_item;

typedef struct label_item {
	tk_cnode_id id;
	const char *label; /* NULL when the label is the hex text in buf (items move while sorting) */
	char buf[32];
} label_item;

static const char *item_label(const label_item *x)
{
	return x->label ? x->label : x->buf;
}

static int label_cmp(const void *a, const void *b)
{
	const label_item *x = a, *y = b;
	int c = strcmp(item_label(x), item_label(y));
	return c ? c : (x->id < y->id ? -1 : x->id > y->id);
}

int tk_write_folded(FILE *out, const tk_profile *p, const tk_folded_options *o, tk_error *err)
{
	tk_calltree_options co;
	tk_calltree_options_init(&co);
	/* Folded input without thread frames (FlameGraph's, inferno's) is written back without them. */
	const char *ft = tk_profile_meta(p, "folded-threads");
	co.group = (o && o->no_thread) || (ft && strcmp(ft, "none") == 0) ? TK_GROUP_ALL : TK_GROUP_THREAD;
	co.label_only = 1;
	unsigned dec = tk_profile_weight_decimals(p);
	tk_calltree *t = tk_calltree_build(p, &co, err);
	if (!t)
		return -1;
	linebuf line = {0};
	walk_item *stack = NULL;
	size_t nstack = 0, capstack = 0;
	label_item *kids = NULL;
	size_t capkids = 0;
	for (size_t g = 0; g < tk_calltree_group_count(t); g++) {
		const tk_calltree_group *grp = tk_calltree_group_get(t, g);
		const tk_cnode *root = tk_calltree_node(t, grp->root);
		line.n = 0;
		TK_GROW(line.s, line.cap, 1);
		line.s[0] = 0;
		if (co.group == TK_GROUP_THREAD) {
			/* an unnamed thread is "(unnamed)" here as in every writer; the reader maps it back */
			const char *name = grp->name ? tk_string(p, grp->name) : "(unnamed)";
			char *frame = tk_xmalloc(strlen(name) + 32);
			sprintf(frame, "%s tid=%llu", name, (unsigned long long)grp->tid);
			append_frame(&line, frame);
			free(frame);
			emit(out, &line, root->self, dec);
		} else if (root->self) {
			append_frame(&line, "(no stack)");
			emit(out, &line, root->self, dec);
			line.n = 0;
		}
		TK_GROW(stack, capstack, nstack + 1);
		stack[nstack++] = (walk_item){grp->root, line.n};
		while (nstack) {
			walk_item it = stack[--nstack];
			const tk_cnode *n = tk_calltree_node(t, it.node);
			line.n = it.len;
			if (!(n->flags & TK_CNODE_ROOT)) {
				char buf[32];
				append_frame(&line, tk_cnode_label(t, n, buf));
				emit(out, &line, n->self, dec);
			}
			/* Push children in reverse byte order of labels so they pop in order. */
			size_t m = 0;
			TK_GROW(kids, capkids, n->nchildren ? n->nchildren : 1);
			for (tk_cnode_id c = n->first_child; c != TK_CNODE_NONE;
			     c = tk_calltree_node(t, c)->next_sibling) {
				kids[m].id = c;
				kids[m].label = tk_cnode_label(t, tk_calltree_node(t, c), kids[m].buf);
				if (kids[m].label == kids[m].buf)
					kids[m].label = NULL;
				m++;
			}
			if (m > 1)
				qsort(kids, m, sizeof *kids, label_cmp);
			TK_GROW(stack, capstack, nstack + m);
			for (size_t i = m; i-- > 0;)
				stack[nstack++] = (walk_item){kids[i].id, line.n};
		}
	}
	free(line.s);
	free(stack);
	free(kids);
	tk_calltree_free(t);
	return tk_wu_finish(out, "folded stacks", err);
}
