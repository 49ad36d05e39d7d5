/* Model invariants: interning, dedup by content, prefix-shared stacks, summed weights. */
#include <math.h>
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

/* Events own the samples of the threads given to them; their weight follows, context threads
 * excepted, whether the samples came before or after the thread was given. */
static void test_events(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_frame_id f = tk_frame_add(p, &(tk_frame){.addr = 0x1000, .name = tk_intern_cstr(p, "work")});
	tk_stack_id s = tk_stack_push(p, 0, f);
	tk_thread_id main_t = tk_thread_get_or_add(p, 1, 1, tk_intern_cstr(p, "main"), 0);
	tk_thread_id other = tk_thread_get_or_add(p, 1, 2, 0, 0);
	tk_thread_id snap = tk_thread_get_or_add(p, 1, 3, 0, 0);
	tk_sample_add_n(p, main_t, s, 7, 7); /* before the thread is given */
	tk_event_id e = tk_event_add(p, &(tk_event){.kind = TK_EVENT_HANG,
	                                            .name = tk_intern_cstr(p, "hang"),
	                                            .key = tk_intern_cstr(p, "k1"),
	                                            .start = 5,
	                                            .duration = 2500000000u,
	                                            .wall = NAN,
	                                            .thread = main_t,
	                                            .weight = 99 /* ignored */});
	assert_int_equal(e, 1);
	assert_int_equal(tk_event_count(p), 1);
	assert_int_equal(tk_event_get(p, e)->weight, 0);
	tk_thread_set_event(p, main_t, e, TK_ROLE_ATTRIBUTED);
	tk_thread_set_event(p, other, e, TK_ROLE_OWNED);
	tk_thread_set_event(p, snap, e, TK_ROLE_CONTEXT);
	tk_sample_add_n(p, other, s, 3, 1);  /* after */
	tk_sample_add_n(p, snap, s, 100, 1); /* context: not counted */
	assert_int_equal(tk_event_get(p, e)->weight, 10);
	assert_int_equal(tk_event_get(p, e)->samples, 8);
	assert_int_equal(tk_thread_get(p, main_t)->event, e);
	assert_int_equal(tk_thread_get(p, main_t)->role, TK_ROLE_ATTRIBUTED);
	tk_thread_set_event(p, other, 0, TK_ROLE_OWNED); /* taken back */
	assert_int_equal(tk_event_get(p, e)->weight, 7);
	assert_int_equal(tk_thread_get(p, other)->role, TK_ROLE_NONE);
	assert_null(tk_event_get(p, 0));
	assert_null(tk_event_get(p, 2));

	tk_event_set_str(p, e, "app.version", "5.3");
	tk_event_set_num(p, e, "cpu.average", 132.5);
	tk_event_set_str(p, e, "device", "");
	tk_event_set_str(p, e, "app.version", "5.4"); /* replaces */
	assert_int_equal(tk_event_attr_count(p, e), 3);
	assert_string_equal(tk_event_str(p, e, "app.version"), "5.4");
	assert_string_equal(tk_event_str(p, e, "device"), "");
	assert_null(tk_event_str(p, e, "cpu.average"));
	assert_true(tk_event_num(p, e, "cpu.average") == 132.5);
	assert_true(isnan(tk_event_num(p, e, "app.version")));
	assert_true(isnan(tk_event_num(p, e, "missing")));
	tk_event_attr a = tk_event_attr_at(p, e, 1);
	assert_string_equal(a.key, "cpu.average");
	assert_null(a.str);

	tk_event_kind k;
	assert_int_equal(tk_event_kind_parse("disk", &k), 0);
	assert_int_equal(k, TK_EVENT_DISK_WRITE);
	for (int i = 0; i < TK_EVENT_KIND_COUNT; i++) {
		assert_int_equal(tk_event_kind_parse(tk_event_kind_name((tk_event_kind)i), &k), 0);
		assert_int_equal(k, i);
	}
	assert_int_equal(tk_event_kind_parse("nope", &k), -1);

	tk_profile *q = tk_profile_new();
	tk_thread_id qt = tk_thread_get_or_add(q, 1, 1, 0, 0);
	tk_event_id qe = tk_event_copy(q, p, e, qt);
	const tk_event *ce = tk_event_get(q, qe);
	assert_int_equal(ce->kind, TK_EVENT_HANG);
	assert_string_equal(tk_string(q, ce->key), "k1");
	assert_int_equal(ce->duration, 2500000000u);
	assert_int_equal(ce->weight, 0);
	assert_string_equal(tk_event_str(q, qe, "app.version"), "5.4");
	assert_string_equal(tk_event_str(q, qe, "device"), "");
	assert_true(tk_event_num(q, qe, "cpu.average") == 132.5);
	tk_profile_free(q);
	tk_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_intern),
	    cmocka_unit_test(test_frames_and_stacks),
	    cmocka_unit_test(test_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
