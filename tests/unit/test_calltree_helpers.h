/*
 * Helpers for the call-tree, transform and writer tests: build small profiles from short
 * strings, and print call trees in a compact form that hand-computed expectations can be written in.
 *
 *   frame spec   "name", "bin`name", "/usr/lib/system/libx.dylib`name" (binary named by its base
 *                name, with that path), "0x1f" (unsymbolicated), suffix "@0x10" sets the address
 *   stack spec   frame specs root first, separated by ';' ("" is the empty stack)
 *   tree dump    "name total/self" with children in braces: "main 10/2 {foo 8/8}"
 */
#ifndef TEST_CALLTREE_HELPERS_H
#define TEST_CALLTREE_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/calltree.h"
#include "tracekit/profile.h"

static inline tk_frame_id th_frame(tk_profile *p, const char *spec)
{
	char tmp[256];
	snprintf(tmp, sizeof tmp, "%s", spec);
	tk_frame f = {0};
	char *at = strstr(tmp, "@0x");
	if (at) {
		f.addr = strtoull(at + 3, NULL, 16);
		*at = 0;
	}
	char *name = tmp, *q = strchr(tmp, '`');
	if (q) {
		*q = 0;
		name = q + 1;
		const char *base = strrchr(tmp, '/') ? strrchr(tmp, '/') + 1 : tmp;
		char path[300];
		if (tmp[0] == '/')
			snprintf(path, sizeof path, "%s", tmp);
		else
			snprintf(path, sizeof path, "/Applications/Test.app/%s", tmp);
		tk_binary b = {.name = tk_intern_cstr(p, base), .path = tk_intern_cstr(p, path)};
		f.binary = tk_binary_add(p, &b);
	}
	if (strncmp(name, "0x", 2) == 0 && !at)
		f.addr = strtoull(name + 2, NULL, 16);
	else
		f.name = tk_intern_cstr(p, name);
	return tk_frame_add(p, &f);
}

static inline tk_stack_id th_stack(tk_profile *p, const char *spec)
{
	char tmp[1024];
	snprintf(tmp, sizeof tmp, "%s", spec);
	tk_stack_id s = 0;
	char *save = NULL;
	for (char *tok = strtok_r(tmp, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
		s = tk_stack_push(p, s, th_frame(p, tok));
	return s;
}

static inline tk_thread_id th_thread(tk_profile *p, int64_t pid, uint64_t tid, const char *name, const char *proc)
{
	return tk_thread_get_or_add(p, pid, tid, name ? tk_intern_cstr(p, name) : 0,
	                            proc ? tk_intern_cstr(p, proc) : 0);
}

/* Add n samples of weight w each on the stack. */
static inline void th_add(tk_profile *p, tk_thread_id t, const char *stack, uint64_t w, uint64_t n)
{
	tk_sample_add_n(p, t, th_stack(p, stack), w * n, n);
}

typedef struct th_buf {
	char s[8192];
	size_t n;
} th_buf;

static inline void th_put(th_buf *b, const char *s)
{
	size_t l = strlen(s);
	if (b->n + l < sizeof b->s) {
		memcpy(b->s + b->n, s, l + 1);
		b->n += l;
	}
}

static inline void th_dump_node(const tk_calltree *t, tk_cnode_id id, th_buf *b)
{
	const tk_cnode *n = tk_calltree_node(t, id);
	char buf[32], num[64];
	th_put(b, tk_cnode_label(t, n, buf));
	snprintf(num, sizeof num, " %llu/%llu", (unsigned long long)n->total, (unsigned long long)n->self);
	th_put(b, num);
	if (n->first_child != TK_CNODE_NONE) {
		th_put(b, " {");
		for (tk_cnode_id c = n->first_child; c != TK_CNODE_NONE; c = tk_calltree_node(t, c)->next_sibling) {
			th_dump_node(t, c, b);
			if (tk_calltree_node(t, c)->next_sibling != TK_CNODE_NONE)
				th_put(b, ", ");
		}
		th_put(b, "}");
	}
}

/* "<root total/self>: child, child" for group g. */
static inline const char *th_dump(const tk_calltree *t, size_t g, th_buf *b)
{
	b->n = 0;
	b->s[0] = 0;
	const tk_calltree_group *grp = tk_calltree_group_get(t, g);
	if (!grp)
		return "(no group)";
	const tk_cnode *r = tk_calltree_node(t, grp->root);
	char num[64];
	snprintf(num, sizeof num, "%llu/%llu:", (unsigned long long)r->total, (unsigned long long)r->self);
	th_put(b, num);
	for (tk_cnode_id c = r->first_child; c != TK_CNODE_NONE; c = tk_calltree_node(t, c)->next_sibling) {
		th_put(b, " ");
		th_dump_node(t, c, b);
		if (tk_calltree_node(t, c)->next_sibling != TK_CNODE_NONE)
			th_put(b, ",");
	}
	return b->s;
}

/* total = self + Σ children.total at every reachable node; returns the number of violations. */
static inline int th_check_invariant(const tk_calltree *t)
{
	int bad = 0;
	for (size_t g = 0; g < tk_calltree_group_count(t); g++) {
		tk_cnode_id stack[4096];
		size_t n = 0;
		stack[n++] = tk_calltree_group_get(t, g)->root;
		while (n) {
			const tk_cnode *x = tk_calltree_node(t, stack[--n]);
			uint64_t sum = x->self, samples = 0;
			for (tk_cnode_id c = x->first_child; c != TK_CNODE_NONE;
			     c = tk_calltree_node(t, c)->next_sibling) {
				sum += tk_calltree_node(t, c)->total;
				samples += tk_calltree_node(t, c)->samples;
				if (n < 4096)
					stack[n++] = c;
			}
			if (sum != x->total || samples > x->samples)
				bad++;
		}
	}
	return bad;
}

/* Thread "Main Thread" (pid 10, tid 100): weights of 10 per sample.
 *   start;main;foo      x3  (+1 more on foo at another call-site address)
 *   start;main;bar;baz  x2
 *   start;main          x1
 *   (empty stack)       x1
 * Thread "worker" (pid 10, tid 101), recursion, weight 5: f;f;f;g  f;g  f;f
 * Thread (pid 20, tid 200, process "Other", unnamed): x;y weight 7 */
static inline tk_profile *th_sample_profile(void)
{
	tk_profile *p = tk_profile_new();
	tk_thread_id m = th_thread(p, 10, 100, "Main Thread", "App");
	th_add(p, m, "dyld`start;App`main;App`foo@0x10", 10, 3);
	th_add(p, m, "dyld`start;App`main;App`foo@0x20", 10, 1);
	th_add(p, m, "dyld`start;App`main;App`bar;App`baz", 10, 2);
	th_add(p, m, "dyld`start;App`main", 10, 1);
	th_add(p, m, "", 10, 1);
	tk_thread_id w = th_thread(p, 10, 101, "worker", "App");
	th_add(p, w, "f;f;f;g", 5, 1);
	th_add(p, w, "f;g", 5, 1);
	th_add(p, w, "f;f", 5, 1);
	tk_thread_id o = th_thread(p, 20, 200, NULL, "Other");
	th_add(p, o, "x;y", 7, 1);
	return p;
}

#endif
