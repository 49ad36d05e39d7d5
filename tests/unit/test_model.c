/* Model invariants: interning, dedup by content, prefix-shared stacks, summed weights. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tracekit/profile.h"

static void test_intern(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_str a = tk_intern_cstr(p, "main");
	tk_str b = tk_intern(p, "mainly", 4);
	assert_int_equal(a, b);
	assert_int_equal(tk_intern_cstr(p, ""), 0);
	assert_string_equal(tk_string(p, a), "main");
	/* many strings force index growth and several chunks; all must stay retrievable */
	char buf[64];
	for (int i = 0; i < 50000; i++) {
		snprintf(buf, sizeof buf, "sym_%d_with_some_length_to_fill_chunks", i);
		tk_intern_cstr(p, buf);
	}
	for (int i = 0; i < 50000; i += 997) {
		snprintf(buf, sizeof buf, "sym_%d_with_some_length_to_fill_chunks", i);
		tk_str s = tk_intern_cstr(p, buf);
		assert_string_equal(tk_string(p, s), buf);
	}
	/* a string larger than a chunk */
	size_t big = 600 * 1024;
	char *huge = malloc(big);
	memset(huge, 'x', big);
	tk_str h = tk_intern(p, huge, big);
	assert_int_equal(tk_string_len(p, h), big);
	assert_int_equal(tk_intern(p, huge, big), h);
	assert_string_equal(tk_string(p, a), "main");
	free(huge);
	tk_profile_free(p);
}

static void test_frames_and_stacks(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_binary bin = {.name = tk_intern_cstr(p, "a.out"), .load_addr = 0x1000};
	tk_binary_id b = tk_binary_add(p, &bin);
	assert_int_equal(tk_binary_add(p, &bin), b);
	tk_frame fm = {.addr = 0x1010, .name = tk_intern_cstr(p, "main"), .binary = b};
	tk_frame ff = {.addr = 0x1020, .name = tk_intern_cstr(p, "foo"), .binary = b};
	tk_frame fx = {.addr = 0xABC};
	tk_frame_id m = tk_frame_add(p, &fm), f = tk_frame_add(p, &ff), x = tk_frame_add(p, &fx);
	assert_int_equal(tk_frame_add(p, &fm), m);
	assert_int_not_equal(m, f);
	char buf[32];
	assert_string_equal(tk_frame_label(p, x, buf), "0xabc");
	assert_string_equal(tk_frame_label(p, f, buf), "foo");

	tk_frame_id leaf_first1[] = {f, m};
	tk_frame_id leaf_first2[] = {x, f, m};
	tk_stack_id s1 = tk_stack_from_leaf_first(p, leaf_first1, 2);
	tk_stack_id s2 = tk_stack_from_leaf_first(p, leaf_first2, 3);
	assert_int_equal(tk_stack_count(p), 3); /* main, main;foo, main;foo;0xabc share prefixes */
	assert_int_equal(tk_stack_get(p, s2)->parent, s1);
	tk_frame_id out[8];
	assert_int_equal(tk_stack_frames(p, s2, out, 8), 3);
	assert_int_equal(out[0], m);
	assert_int_equal(out[2], x);

	tk_thread_id t = tk_thread_get_or_add(p, 7, 99, tk_intern_cstr(p, "Main Thread"), 0);
	assert_int_equal(tk_thread_get_or_add(p, 7, 99, 0, 0), t);
	tk_sample_add(p, t, s1, 1000000, 5);
	tk_sample_add(p, t, s1, 1130000, 9);
	tk_sample_add(p, t, 0, 1000000, 7); /* sentinel: empty stack still counts */
	const tk_thread *th = tk_thread_get(p, t);
	assert_int_equal(th->weight, 3130000);
	assert_int_equal(th->samples, 3);
	assert_int_equal(th->t_min, 5);
	assert_int_equal(th->t_max, 9);
	size_t n;
	const tk_stack_weight *cells = tk_thread_stacks(p, t, &n);
	assert_int_equal(n, 2);
	assert_int_equal(cells[0].stack, s1);
	assert_int_equal(cells[0].weight, 2130000);
	assert_string_equal(tk_string(p, th->name), "Main Thread");
	tk_profile_set_meta(p, "schema", "time-profile");
	tk_profile_set_meta(p, "schema", "cpu-profile");
	assert_string_equal(tk_profile_meta(p, "schema"), "cpu-profile");
	assert_int_equal(tk_profile_meta_count(p), 1);
	tk_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_intern),
	    cmocka_unit_test(test_frames_and_stacks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
