/* The compact per-sample list (tk_profile_keep_samples): what goes in comes back exactly, in arrival
 * order overall and per thread, for every time, weight and stack value the model can hold, and a row
 * of an Instruments-like export costs a few bytes, not a tk_sample. The truth is a plain array of the
 * records appended, kept by the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tracekit/profile.h"
#include "tracekit/write.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Values at the edges of each field's encoding, and random ones. */
static uint64_t pick_u64(void)
{
	static const uint64_t edge[] = {0,
	                                1,
	                                127,
	                                128,
	                                16383,
	                                16384,
	                                1000000,
	                                UINT32_MAX,
	                                (uint64_t)INT64_MAX,
	                                (uint64_t)INT64_MAX + 1,
	                                UINT64_MAX - 1,
	                                UINT64_MAX};
	uint64_t r = next_rand();
	if (r % 4 == 0)
		return edge[(r >> 8) % (sizeof edge / sizeof edge[0])];
	return next_rand() >> (r % 64);
}

static void assert_same(const tk_sample *a, const tk_sample *b, size_t i)
{
	if (a->time != b->time || a->weight != b->weight || a->thread != b->thread || a->stack != b->stack)
		fail_msg("row %zu: got (%llu, %llu, %u, %u), want (%llu, %llu, %u, %u)", i, (unsigned long long)a->time,
		         (unsigned long long)a->weight, a->thread, a->stack, (unsigned long long)b->time,
		         (unsigned long long)b->weight, b->thread, b->stack);
}

static void test_round_trip(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_profile_keep_samples(p, 1);
	enum { NT = 5, N = 200000 };
	tk_thread_id th[NT];
	for (int t = 0; t < NT; t++)
		th[t] = tk_thread_get_or_add(p, 1, (uint64_t)t + 10, 0, 0);
	tk_sample *want = malloc(N * sizeof *want);
	size_t per[NT] = {0};
	int unknown = 0;
	for (size_t i = 0; i < N; i++) {
		tk_sample s;
		s.thread = th[next_rand() % NT];
		/* thread 0 stays in time order; the others get every kind of value */
		if (s.thread == th[0])
			s.time = per[0] * 1000000 + (next_rand() % 3 == 0 ? 0 : next_rand() % 999);
		else
			s.time = pick_u64();
		if (s.time == UINT64_MAX)
			unknown = 1;
		s.weight = next_rand() % 3 ? 1000000 : pick_u64();
		s.stack = next_rand() % 5 ? (tk_stack_id)(next_rand() % 30000) : (tk_stack_id)pick_u64();
		tk_sample_list_append(p, &s);
		want[i] = s;
		per[s.thread]++;
	}
	assert_int_equal(tk_profile_sample_count(p), N);
	assert_int_equal(tk_profile_sample_times_known(p), !unknown);
	assert_true(tk_thread_samples_in_order(p, th[0]));
	assert_false(tk_thread_samples_in_order(p, th[1]));

	tk_sample s;
	tk_sample_iter *it = tk_sample_iter_new(p, TK_ALL_THREADS);
	size_t i = 0;
	while (tk_sample_iter_next(it, &s)) {
		assert_true(i < N);
		assert_same(&s, &want[i], i);
		i++;
	}
	tk_sample_iter_free(it);
	assert_int_equal(i, N);

	for (int t = 0; t < NT; t++) {
		assert_int_equal(tk_thread_sample_count(p, th[t]), per[t]);
		it = tk_sample_iter_new(p, th[t]);
		size_t j = 0;
		for (i = 0; i < N; i++) {
			if (want[i].thread != th[t])
				continue;
			assert_true(tk_sample_iter_next(it, &s));
			assert_same(&s, &want[i], i);
			j++;
		}
		assert_false(tk_sample_iter_next(it, &s));
		tk_sample_iter_free(it);
		assert_int_equal(j, per[t]);
	}

	size_t n = 0;
	const tk_sample *flat = tk_profile_sample_list(p, &n);
	assert_int_equal(n, N);
	for (i = 0; i < N; i++)
		assert_same(&flat[i], &want[i], i);
	/* appending after the array was unpacked: the next call sees the new row */
	tk_sample extra = {5, 6, th[2], 7};
	tk_sample_list_append(p, &extra);
	flat = tk_profile_sample_list(p, &n);
	assert_int_equal(n, N + 1);
	assert_same(&flat[N], &extra, N);
	/* a thread that does not exist is not listed */
	tk_sample bad = {1, 1, 99, 1};
	tk_sample_list_append(p, &bad);
	assert_int_equal(tk_profile_sample_count(p), N + 1);
	tk_profile_keep_samples(p, 0);
	assert_int_equal(tk_profile_sample_count(p), 0);
	assert_null(tk_profile_sample_list(p, &n));
	tk_profile_free(p);
	free(want);
}

/* 1 M rows the way an xctrace export gives them (8 threads in turn, 1 ms apart per thread, weight
 * 1 ms, a few thousand stacks): the list must cost under 8 bytes a row. */
static void test_bytes_per_row(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_profile *q = tk_profile_new();
	tk_profile_keep_samples(p, 1);
	tk_thread_id th[8];
	tk_frame f = {0x1000, tk_intern_cstr(p, "f"), 0, 0, 0, 0};
	tk_frame_id fid = tk_frame_add(p, &f);
	tk_stack_id stacks[4000];
	stacks[0] = tk_stack_push(p, 0, fid);
	for (int i = 1; i < 4000; i++)
		stacks[i] = tk_stack_push(p, stacks[(i - 1) / 2], fid);
	for (int t = 0; t < 8; t++) {
		th[t] = tk_thread_get_or_add(p, 1, (uint64_t)t + 1, 0, 0);
		tk_thread_get_or_add(q, 1, (uint64_t)t + 1, 0, 0);
	}
	size_t before = tk_profile_memory(p);
	enum { N = 1000000 };
	for (size_t i = 0; i < N; i++)
		tk_sample_add(p, th[i % 8], stacks[next_rand() % 4000], 1000000, (i / 8) * 1000000 + i % 8 * 1000);
	size_t grown = tk_profile_memory(p) - before;
	/* the aggregates alone, for the same rows */
	size_t qbefore = tk_profile_memory(q);
	for (size_t i = 0; i < N; i++)
		tk_sample_add(q, th[i % 8], (tk_stack_id)(i % 4000 + 1), 1000000, 0);
	size_t agg = tk_profile_memory(q) - qbefore;
	double per_row = (double)(grown - agg) / N;
	print_message("sample list: %.2f bytes per row\n", per_row);
	assert_true(per_row < 8.0);
	for (int t = 0; t < 8; t++)
		assert_true(tk_thread_samples_in_order(p, th[t]));
	tk_profile_free(p);
	tk_profile_free(q);
}

/* The gecko writer sorts a thread whose rows went back in time; rows of equal time keep their
 * arrival order (hand-computed: stacks 2, 1, 3 at 1 ms, 1, 1, 2 ms). */
static void test_gecko_ties_keep_arrival_order(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_profile_keep_samples(p, 1);
	tk_profile_set_unit(p, TK_UNIT_NS);
	tk_frame f = {0, tk_intern_cstr(p, "f"), 0, 0, 0, 0};
	tk_frame_id fid = tk_frame_add(p, &f);
	tk_stack_id s1 = tk_stack_push(p, 0, fid), s2 = tk_stack_push(p, s1, fid), s3 = tk_stack_push(p, s2, fid);
	tk_thread_id t = tk_thread_get_or_add(p, 1, 1, tk_intern_cstr(p, "T"), 0);
	tk_sample_add(p, t, s1, 10, 2000000);
	tk_sample_add(p, t, s2, 20, 1000000);
	tk_sample_add(p, t, s1, 30, 1000000);
	tk_sample_add(p, t, s3, 40, 1000000);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	tk_error err;
	assert_int_equal(tk_write_gecko(out, p, NULL, &err), 0);
	fclose(out);
	if (!strstr(buf, "\"stack\":[1,0,2,0],\"time\":[1,1,1,2],\"weight\":[0.00002,0.00003,0.00004,0.00001]"))
		fail_msg("samples not in (time, arrival) order: %.*s", (int)(len > 4000 ? 4000 : len), buf);
	free(buf);
	tk_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_bytes_per_row),
	    cmocka_unit_test(test_gecko_ties_keep_arrival_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
