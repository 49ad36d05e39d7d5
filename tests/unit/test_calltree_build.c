/* Call trees and top functions against hand-computed results on small profiles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_calltree_helpers.h"
#include "tracekit/write.h"

static tk_calltree *build(tk_profile *p, tk_group_by g, int invert)
{
	tk_calltree_options o;
	tk_calltree_options_init(&o);
	o.group = g;
	o.invert = invert;
	tk_error err;
	tk_calltree *t = tk_calltree_build(p, &o, &err);
	assert_non_null(t);
	assert_int_equal(th_check_invariant(t), 0);
	return t;
}

static void test_top_down_per_thread(void **state)
{
	tk_profile *p = th_sample_profile();
	tk_calltree *t = build(p, TK_GROUP_THREAD, 0);
	th_buf b;
	assert_int_equal(tk_calltree_group_count(t), 3);
	/* groups by total: 80, 15, 7; call sites of foo merge into one node; the sentinel is root self */
	assert_string_equal(th_dump(t, 0, &b), "80/10: start 70/0 {main 70/10 {foo 40/40, bar 20/0 {baz 20/20}}}");
	assert_string_equal(th_dump(t, 1, &b), "15/0: f 15/0 {f 10/5 {f 5/0 {g 5/5}}, g 5/5}");
	assert_string_equal(th_dump(t, 2, &b), "7/0: x 7/0 {y 7/7}");
	const tk_calltree_group *g0 = tk_calltree_group_get(t, 0);
	assert_int_equal(g0->tid, 100);
	assert_int_equal(g0->pid, 10);
	assert_string_equal(tk_string(p, g0->name), "Main Thread");
	assert_int_equal(tk_calltree_node(t, g0->root)->samples, 8);
	/* the root's first child carries its binary */
	const tk_cnode *start = tk_calltree_node(t, tk_calltree_node(t, g0->root)->first_child);
	assert_string_equal(tk_cnode_binary(t, start), "dyld");
	assert_int_equal(start->depth, 1);
	assert_int_equal(start->samples, 7);
	tk_calltree_free(t);
	tk_profile_free(p);
}

static void test_grouping(void **state)
{
	tk_profile *p = th_sample_profile();
	th_buf b;
	tk_calltree *t = build(p, TK_GROUP_PROCESS, 0);
	assert_int_equal(tk_calltree_group_count(t), 2);
	assert_string_equal(th_dump(t, 0, &b), "95/10: start 70/0 {main 70/10 {foo 40/40, bar 20/0 {baz 20/20}}}, "
	                                       "f 15/0 {f 10/5 {f 5/0 {g 5/5}}, g 5/5}");
	assert_int_equal(tk_calltree_group_get(t, 0)->threads, 2);
	assert_string_equal(tk_string(p, tk_calltree_group_get(t, 0)->process), "App");
	assert_int_equal(tk_calltree_group_get(t, 1)->pid, 20);
	tk_calltree_free(t);

	t = build(p, TK_GROUP_ALL, 0);
	assert_int_equal(tk_calltree_group_count(t), 1);
	assert_int_equal(tk_calltree_node(t, tk_calltree_group_get(t, 0)->root)->total, 102);
	assert_int_equal(tk_calltree_group_get(t, 0)->threads, 3);
	assert_int_equal(tk_calltree_group_get(t, 0)->pid, -1);
	tk_calltree_free(t);
	tk_profile_free(p);
}

static void test_inverted(void **state)
{
	tk_profile *p = th_sample_profile();
	th_buf b;
	tk_calltree *t = build(p, TK_GROUP_THREAD, 1);
	/* roots are leaf functions with their self weight; children are callers */
	assert_string_equal(th_dump(t, 0, &b),
	                    "80/10: foo 40/0 {main 40/0 {start 40/40}}, baz 20/0 {bar 20/0 {main 20/0 {start 20/20}}}, "
	                    "main 10/0 {start 10/10}");
	assert_string_equal(th_dump(t, 1, &b), "15/0: g 10/0 {f 10/5 {f 5/0 {f 5/5}}}, f 5/0 {f 5/5}");
	tk_calltree_free(t);
	tk_profile_free(p);
}

static void test_sort_ties_by_name(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_thread_id t0 = th_thread(p, 1, 1, "t", "p");
	th_add(p, t0, "r;b", 5, 1);
	th_add(p, t0, "r;0xff", 5, 1);
	th_add(p, t0, "r;a", 5, 1);
	th_add(p, t0, "r;B`a", 5, 1); /* same label, other binary: another function */
	th_add(p, t0, "r;c", 6, 1);
	tk_calltree *t = build(p, TK_GROUP_THREAD, 0);
	th_buf b;
	/* total desc, then label byte order, then binary name ("" < "B") */
	assert_string_equal(th_dump(t, 0, &b), "26/0: r 26/0 {c 6/6, 0xff 5/5, a 5/5, a 5/5, b 5/5}");
	const tk_cnode *r = tk_calltree_node(t, tk_calltree_node(t, tk_calltree_group_get(t, 0)->root)->first_child);
	const tk_cnode *a1 =
	    tk_calltree_node(t, tk_calltree_node(t, tk_calltree_node(t, r->first_child)->next_sibling)->next_sibling);
	assert_string_equal(tk_cnode_binary(t, a1), "");
	assert_string_equal(tk_cnode_binary(t, tk_calltree_node(t, a1->next_sibling)), "B");
	tk_calltree_free(t);

	/* identity by label alone merges the two "a" */
	tk_calltree_options o;
	tk_calltree_options_init(&o);
	o.label_only = 1;
	t = tk_calltree_build(p, &o, NULL);
	assert_string_equal(th_dump(t, 0, &b), "26/0: r 26/0 {a 10/10, c 6/6, 0xff 5/5, b 5/5}");
	tk_calltree_free(t);
	tk_profile_free(p);
}

static void test_hex_label_identity(void **state)
{
	/* A frame named "0x1f00" and an unnamed frame at 0x1f00 print the same label: one function. */
	tk_profile *p = tk_profile_new();
	tk_thread_id t0 = th_thread(p, 1, 1, "t", "p");
	tk_frame named = {.addr = 0x1f01, .name = tk_intern_cstr(p, "0x1f00")};
	tk_frame unnamed = {.addr = 0x1f00};
	tk_frame_id a = tk_frame_add(p, &named), u = tk_frame_add(p, &unnamed);
	tk_sample_add_n(p, t0, tk_stack_push(p, 0, a), 3, 1);
	tk_sample_add_n(p, t0, tk_stack_push(p, 0, u), 4, 1);
	tk_calltree *t = build(p, TK_GROUP_THREAD, 0);
	th_buf b;
	assert_string_equal(th_dump(t, 0, &b), "7/0: 0x1f00 7/7");
	tk_calltree_free(t);
	tk_profile_free(p);
}

static void test_prune(void **state)
{
	tk_profile *p = th_sample_profile();
	th_buf b;
	tk_error err;
	tk_calltree *t = build(p, TK_GROUP_THREAD, 0);
	/* 30% of 80 = 24: bar (20) and its subtree fold into "(other)" */
	assert_int_equal(tk_calltree_prune(t, 30, 0, &err), 0);
	assert_int_equal(th_check_invariant(t), 0);
	assert_string_equal(th_dump(t, 0, &b), "80/10: start 70/0 {main 70/10 {foo 40/40, (other) 20/20}}");
	/* in the 15-weight worker thread the threshold is 4.5: nothing is hidden */
	assert_string_equal(th_dump(t, 1, &b), "15/0: f 15/0 {f 10/5 {f 5/0 {g 5/5}}, g 5/5}");
	tk_calltree_free(t);

	t = build(p, TK_GROUP_THREAD, 0);
	assert_int_equal(tk_calltree_prune(t, 0, 2, &err), 0);
	assert_int_equal(th_check_invariant(t), 0);
	assert_string_equal(th_dump(t, 0, &b), "80/10: start 70/0 {main 70/10 {(other) 60/60}}");
	assert_string_equal(th_dump(t, 1, &b), "15/0: f 15/0 {f 10/5 {(other) 5/5}, g 5/5}");
	tk_calltree_free(t);

	/* both at once, and a threshold that hides every child of the root */
	t = build(p, TK_GROUP_THREAD, 0);
	assert_int_equal(tk_calltree_prune(t, 95, 1, &err), 0);
	assert_int_equal(th_check_invariant(t), 0);
	assert_string_equal(th_dump(t, 0, &b), "80/10: (other) 70/70");
	tk_calltree_free(t);

	t = build(p, TK_GROUP_THREAD, 0);
	assert_int_equal(tk_calltree_prune(t, -1, 0, &err), -1);
	assert_non_null(strstr(err.msg, "percentage"));
	tk_calltree_free(t);
	tk_profile_free(p);
}

static void test_top_recursion(void **state)
{
	tk_profile *p = th_sample_profile();
	tk_error err;
	tk_top *top = tk_top_build(p, TK_TOP_BY_SELF, &err);
	assert_non_null(top);
	assert_int_equal(top->weight, 102);
	assert_int_equal(top->samples, 12);
	/* by self: foo 40, baz 20, main 10, g 10 (ties by total then name), y 7, f 5, ... */
	char buf[32];
	const char *expect[] = {"foo", "baz", "main", "g", "y", "f"};
	uint64_t self[] = {40, 20, 10, 10, 7, 5}, total[] = {40, 20, 70, 10, 7, 15};
	for (size_t i = 0; i < 6; i++) {
		assert_string_equal(tk_frame_label(p, top->entries[i].frame, buf), expect[i]);
		assert_int_equal(top->entries[i].self, self[i]);
		assert_int_equal(top->entries[i].total, total[i]);
	}
	/* f recurses three deep in one sample but counts once: 3 samples, 15 total, never above 100% */
	assert_int_equal(top->entries[5].samples, 3);
	assert_int_equal(top->entries[5].self_samples, 1);
	for (size_t i = 0; i < top->n; i++)
		assert_true(top->entries[i].total <= top->weight);
	tk_top_free(top);

	top = tk_top_build(p, TK_TOP_BY_TOTAL, &err);
	assert_string_equal(tk_frame_label(p, top->entries[0].frame, buf), "main");  /* 70, self 10 */
	assert_string_equal(tk_frame_label(p, top->entries[1].frame, buf), "start"); /* 70, self 0 */
	assert_string_equal(tk_frame_label(p, top->entries[2].frame, buf), "foo");
	tk_top_free(top);
	tk_profile_free(p);
}

static void test_deep_recursion(void **state)
{
	/* 20,000 frames deep: building, pruning and the invariant must not recurse on the C stack */
	tk_profile *p = tk_profile_new();
	tk_thread_id t0 = th_thread(p, 1, 1, "t", "p");
	tk_frame_id f = th_frame(p, "rec");
	tk_stack_id s = 0;
	for (int i = 0; i < 20000; i++)
		s = tk_stack_push(p, s, f);
	tk_sample_add_n(p, t0, s, 1, 1);
	tk_calltree *t = build(p, TK_GROUP_THREAD, 0);
	assert_int_equal(tk_calltree_node_count(t), 20001);
	assert_int_equal(tk_calltree_prune(t, 50, 100, NULL), 0);
	tk_top *top = tk_top_build(p, TK_TOP_BY_TOTAL, NULL);
	assert_int_equal(top->n, 1);
	assert_int_equal(top->entries[0].total, 1);
	tk_top_free(top);
	tk_calltree_free(t);
	tk_profile_free(p);
}

static void test_empty_profile(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_calltree *t = build(p, TK_GROUP_THREAD, 0);
	assert_int_equal(tk_calltree_group_count(t), 0);
	tk_calltree_free(t);
	tk_top *top = tk_top_build(p, TK_TOP_BY_SELF, NULL);
	assert_int_equal(top->n, 0);
	tk_top_free(top);
	tk_profile_free(p);
}

/* Inlined calls (from symbolication) are marked on their node, unless an out-of-line call of the
 * same function merged into it: main;foo(inlined);bar twice, main;foo;baz once (foo out of line)
 * on one thread; main;qux(inlined) on another. */
static void test_inlined_marker(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_frame fm = {.addr = 0x10, .name = tk_intern_cstr(p, "main")};
	tk_frame ffi = {.addr = 0x20, .name = tk_intern_cstr(p, "foo"), .flags = TK_FRAME_INLINED};
	tk_frame ff = {.addr = 0x30, .name = tk_intern_cstr(p, "foo")};
	tk_frame fb = {.addr = 0x40, .name = tk_intern_cstr(p, "bar")};
	tk_frame fz = {.addr = 0x50, .name = tk_intern_cstr(p, "baz")};
	tk_frame fq = {.addr = 0x60, .name = tk_intern_cstr(p, "qux"), .flags = TK_FRAME_INLINED};
	tk_frame_id m = tk_frame_add(p, &fm), fi = tk_frame_add(p, &ffi), f = tk_frame_add(p, &ff);
	tk_frame_id b = tk_frame_add(p, &fb), z = tk_frame_add(p, &fz), q = tk_frame_add(p, &fq);
	tk_thread_id t1 = tk_thread_get_or_add(p, 1, 1, tk_intern_cstr(p, "one"), 0);
	tk_thread_id t2 = tk_thread_get_or_add(p, 1, 2, tk_intern_cstr(p, "two"), 0);
	tk_stack_id s_in = tk_stack_push(p, tk_stack_push(p, tk_stack_push(p, 0, m), fi), b);
	tk_stack_id s_out = tk_stack_push(p, tk_stack_push(p, tk_stack_push(p, 0, m), f), z);
	tk_stack_id s_q = tk_stack_push(p, tk_stack_push(p, 0, m), q);
	tk_sample_add_n(p, t1, s_in, 2, 2);
	tk_sample_add_n(p, t1, s_out, 1, 1);
	tk_sample_add_n(p, t2, s_q, 1, 1);
	tk_calltree *t = build(p, TK_GROUP_THREAD, 0);
	th_buf buf;
	assert_string_equal(th_dump(t, 0, &buf), "3/0: main 3/0 {foo 3/0 {bar 2/2, baz 1/1}}");
	const tk_calltree_group *g0 = tk_calltree_group_get(t, 0), *g1 = tk_calltree_group_get(t, 1);
	const tk_cnode *main0 = tk_calltree_node(t, tk_calltree_node(t, g0->root)->first_child);
	const tk_cnode *foo = tk_calltree_node(t, main0->first_child);
	assert_false(main0->flags & TK_CNODE_INLINED);
	assert_false(foo->flags & TK_CNODE_INLINED); /* mixed: one out-of-line call merged in */
	const tk_cnode *main1 = tk_calltree_node(t, tk_calltree_node(t, g1->root)->first_child);
	const tk_cnode *qux = tk_calltree_node(t, main1->first_child);
	assert_true(qux->flags & TK_CNODE_INLINED);
	/* the writers say so */
	char *text = NULL, *json = NULL;
	size_t tl = 0, jl = 0;
	FILE *o = open_memstream(&text, &tl);
	tk_error err;
	assert_int_equal(tk_write_tree_text(o, t, &err), 0);
	fclose(o);
	o = open_memstream(&json, &jl);
	assert_int_equal(tk_write_tree_json(o, t, &err), 0);
	fclose(o);
	assert_non_null(strstr(text, "qux  (inlined)\n"));
	assert_null(strstr(text, "foo  (inlined)"));
	assert_non_null(strstr(json, "{\"name\":\"qux\",\"inlined\":true,"));
	assert_null(strstr(json, "{\"name\":\"foo\",\"inlined\""));
	free(text);
	free(json);
	tk_calltree_free(t);
	tk_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_top_down_per_thread),
	    cmocka_unit_test(test_grouping),
	    cmocka_unit_test(test_inverted),
	    cmocka_unit_test(test_sort_ties_by_name),
	    cmocka_unit_test(test_hex_label_identity),
	    cmocka_unit_test(test_prune),
	    cmocka_unit_test(test_top_recursion),
	    cmocka_unit_test(test_deep_recursion),
	    cmocka_unit_test(test_empty_profile),
	    cmocka_unit_test(test_inlined_marker),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
