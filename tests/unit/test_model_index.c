/* The model's indexes against a naive oracle: stack pushes (children kept as lists, hashed past 8
 * children), per-thread cells (scanned up to 16, mapped beyond) and tk_thread_add_cells, which must
 * equal the same tk_sample_add_n calls one by one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/cells.h"
#include "tracekit/profile.h"

static uint64_t rnd_state = 88172645463325252ULL;
static uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state % n);
}

/* Oracle: every (parent, frame) pushed so far with the id it got, searched linearly. */
typedef struct pushed {
	tk_stack_id parent, id;
	tk_frame_id frame;
} pushed;

static tk_stack_id oracle_find(const pushed *o, size_t n, tk_stack_id parent, tk_frame_id frame)
{
	for (size_t i = 0; i < n; i++)
		if (o[i].parent == parent && o[i].frame == frame)
			return o[i].id;
	return 0;
}

static void test_stack_push(void **state)
{
	tk_profile *p = tk_profile_new();
	enum { NF = 40, N = 6000 };
	tk_frame_id fr[NF];
	for (int i = 0; i < NF; i++) {
		tk_frame f = {.addr = 0x1000 + (uint64_t)i * 4};
		fr[i] = tk_frame_add(p, &f);
	}
	pushed *o = calloc(N, sizeof *o);
	size_t no = 0;
	/* parents with 1, 7, 8, 9, 10 and NF children (around the list/index switch), then random
	 * pushes below random existing stacks, half of them repeats */
	tk_stack_id parents[6];
	for (int k = 0; k < 6; k++)
		parents[k] = tk_stack_push(p, 0, fr[k]);
	for (int k = 0; k < 6; k++) {
		o[no++] = (pushed){0, parents[k], fr[k]};
	}
	const int nkids[6] = {1, 7, 8, 9, 10, NF};
	for (int round = 0; round < 3; round++)
		for (int k = 0; k < 6; k++)
			for (int c = 0; c < nkids[k]; c++) {
				tk_stack_id want = oracle_find(o, no, parents[k], fr[c]);
				tk_stack_id got = tk_stack_push(p, parents[k], fr[c]);
				if (want)
					assert_int_equal(got, want);
				else {
					assert_int_equal(got, tk_stack_count(p)); /* a new id is the next one */
					o[no++] = (pushed){parents[k], got, fr[c]};
				}
			}
	while (no < N) {
		tk_stack_id parent = rnd(4) == 0 ? 0 : o[rnd((uint32_t)no)].id;
		tk_frame_id f = fr[rnd(rnd(2) ? NF : 3)];
		tk_stack_id want = oracle_find(o, no, parent, f);
		tk_stack_id got = tk_stack_push(p, parent, f);
		if (want)
			assert_int_equal(got, want);
		else {
			assert_int_equal(got, tk_stack_count(p));
			o[no++] = (pushed){parent, got, f};
		}
	}
	assert_int_equal(tk_stack_count(p), no);
	for (size_t i = 0; i < no; i++) { /* every node as pushed, depth = parent's + 1 */
		const tk_stack_node *s = tk_stack_get(p, o[i].id);
		assert_int_equal(s->parent, o[i].parent);
		assert_int_equal(s->frame, o[i].frame);
		assert_int_equal(s->depth, o[i].parent ? tk_stack_depth(p, o[i].parent) + 1 : 1);
		assert_int_equal(tk_stack_push(p, o[i].parent, o[i].frame), o[i].id);
	}
	assert_int_equal(tk_stack_count(p), no);
	assert_int_equal(tk_stack_push(p, (tk_stack_id)no + 5, fr[0]), 0); /* not a stack: the empty one */
	free(o);
	tk_profile_free(p);
}

/* The same (stack, weight, samples) list into a thread of two profiles: one by one, and at once. */
static void same_threads(tk_profile *a, tk_profile *b, tk_thread_id t)
{
	size_t na, nb;
	const tk_stack_weight *ca = tk_thread_stacks(a, t, &na), *cb = tk_thread_stacks(b, t, &nb);
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		assert_int_equal(ca[i].stack, cb[i].stack);
		assert_int_equal(ca[i].weight, cb[i].weight);
		assert_int_equal(ca[i].samples, cb[i].samples);
	}
	assert_int_equal(tk_thread_get(a, t)->weight, tk_thread_get(b, t)->weight);
	assert_int_equal(tk_thread_get(a, t)->samples, tk_thread_get(b, t)->samples);
}

static void test_add_cells(void **state)
{
	const size_t sizes[] = {0, 1, 16, 17, 40, 300, 5000};
	for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
		size_t n = sizes[si];
		tk_profile *a = tk_profile_new(), *b = tk_profile_new();
		tk_event ev = {.kind = TK_EVENT_HANG, .start = UINT64_MAX, .duration = UINT64_MAX};
		tk_event ev2 = ev;
		tk_event_id ea = tk_event_add(a, &ev), eb = tk_event_add(b, &ev2);
		tk_thread_id ta = tk_thread_get_or_add(a, 1, 2, 0, 0), tb = tk_thread_get_or_add(b, 1, 2, 0, 0);
		tk_thread_set_event(a, ta, ea, TK_ROLE_OWNED);
		tk_thread_set_event(b, tb, eb, TK_ROLE_OWNED);
		tk_stack_weight *c = calloc(n + 1, sizeof *c);
		for (size_t i = 0; i < n; i++) /* stacks repeat (a quarter), weights vary, one near 2^64 */
			c[i] = (tk_stack_weight){rnd(4) ? (tk_stack_id)(i + 1) : rnd((uint32_t)i + 1), 1 + rnd(1000),
			                         1 + rnd(3)};
		if (n > 100)
			c[n / 2].weight = UINT64_MAX - 10; /* the total would wrap: skipped in both */
		for (size_t i = 0; i < n; i++)
			tk_sample_add_n(a, ta, c[i].stack, c[i].weight, c[i].samples);
		tk_thread_add_cells(b, tb, c, n);
		same_threads(a, b, ta);
		assert_int_equal(tk_event_get(a, ea)->weight, tk_event_get(b, eb)->weight);
		assert_int_equal(tk_event_get(a, ea)->samples, tk_event_get(b, eb)->samples);
		assert_int_equal(tk_profile_weight(a), tk_profile_weight(b));
		/* later samples into the same thread (b has no map yet: it builds one), and a second fresh
		 * thread (the scratch table must be clean again) */
		for (size_t i = 0; i < n + 20; i++) {
			tk_stack_id s = rnd((uint32_t)(n + 40));
			tk_sample_add_n(a, ta, s, 7, 1);
			tk_sample_add_n(b, tb, s, 7, 1);
		}
		same_threads(a, b, ta);
		tk_thread_id ua = tk_thread_get_or_add(a, 1, 3, 0, 0), ub = tk_thread_get_or_add(b, 1, 3, 0, 0);
		for (size_t i = 0; i < n; i++)
			tk_sample_add_n(a, ua, c[n - 1 - i].stack, 3, 3);
		tk_stack_weight *d = calloc(n + 1, sizeof *d);
		for (size_t i = 0; i < n; i++)
			d[i] = (tk_stack_weight){c[n - 1 - i].stack, 3, 3};
		tk_thread_add_cells(b, ub, d, n);
		same_threads(a, b, ua);
		free(d);
		free(c);
		tk_profile_free(a);
		tk_profile_free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stack_push),
	    cmocka_unit_test(test_add_cells),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
