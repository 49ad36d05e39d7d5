/* Records become events of the profile (issue 16), read through the public reader API alone: each
 * record's facts as event fields and attributes, its stacks owned (weights kept by the model), a
 * hang's snapshot as context threads only when asked, and transforms carrying events over. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tracekit/read.h"
#include "tracekit/transform.h"

/* A CPU high-load period (tree 5 = 2 own + 3 in a child) and a hang with a three-thread snapshot
 * and a tree (4 samples), in start order: CFAbsoluteTime 100 is 2001, the hang is 2023. */
static const char doc[] =
    "collection,key,value\n"
    "launch-time,1700000000.5,1700000000.5\n"
    "cpu-highload,100.00,{\"start\":\"100.00\",\"lasting\":\"12.5\",\"average\":\"150.25\"}\n"
    "cpu-highload-stackframe,100.00,[{\"frame\":\"0xa\",\"count\":5,\"children\":[{\"frame\":\"0xb\",\"count\":3}]}]\n"
    "hang,1700000010.000,{\"start\":1700000010,\"duration_ms\":2500,\"tid\":11,\"thread\":\"main\",\"suppressed\":2,"
    "\"threads\":[{\"tid\":11,\"name\":\"main\",\"frames\":[\"0x3\",\"0x2\",\"0x1\"]},"
    "{\"tid\":12,\"name\":\"worker\",\"frames\":[\"0x9\"]},{\"tid\":11,\"name\":\"main\",\"frames\":[\"0x4\"]}]}\n"
    "hang-stackframe,1700000010.000,[{\"frame\":\"0x1\",\"count\":4,\"children\":[{\"frame\":\"0x2\",\"count\":4}]}]\n";

static tk_profile *read_doc(int context)
{
	tk_read_options o;
	tk_read_options_init(&o);
	o.event_context = context;
	tk_error err = {{0}};
	tk_input *in = tk_input_open_mem(doc, strlen(doc), "mem", &err);
	assert_non_null(in);
	tk_profile *p = tk_profile_new();
	if (tk_read_input(p, in, &o, &err) != 0)
		fail_msg("read: %s", err.msg);
	tk_input_close(in);
	return p;
}

static void test_records_are_events(void **state)
{
	(void)state;
	tk_profile *p = read_doc(0);
	assert_int_equal(tk_event_count(p), 2);
	assert_int_equal(tk_thread_count(p), 2); /* no snapshot threads unless asked */
	const tk_event *c = tk_event_get(p, 1), *h = tk_event_get(p, 2);
	assert_int_equal(c->kind, TK_EVENT_CPU_HIGHLOAD);
	assert_string_equal(tk_string(p, c->name), "cpu-highload");
	assert_string_equal(tk_string(p, c->key), "100.00");
	assert_true(fabs(c->wall - (100.0 + 978307200.0)) < 1e-6); /* CFAbsoluteTime → Unix */
	assert_true(c->start == UINT64_MAX);                     /* no profile clock in Records */
	assert_true(c->duration == 12500000000ull);
	assert_true(tk_event_num(p, 1, "duration") == 12.5);
	assert_true(tk_event_num(p, 1, "cpu.average") == 150.25);
	assert_true(tk_event_num(p, 1, "samples") == 5);
	/* the model keeps the weight: the stacks it owns (2 own + 3 of the child) */
	assert_int_equal(c->weight, 5);
	assert_int_equal(c->samples, 5);
	assert_int_equal(tk_thread_get(p, c->thread)->tid, 1);
	assert_int_equal(tk_thread_get(p, c->thread)->role, TK_ROLE_ATTRIBUTED);
	assert_int_equal(h->kind, TK_EVENT_HANG);
	assert_string_equal(tk_string(p, h->name), "hang");
	assert_int_equal(h->weight, 4);
	assert_string_equal(tk_event_str(p, 2, "thread"), "main");
	assert_true(tk_event_num(p, 2, "tid") == 11);
	assert_true(tk_event_num(p, 2, "suppressed") == 2);
	assert_true(tk_event_num(p, 2, "threads") == 3);
	assert_string_equal(tk_event_str(p, 2, "launch.time"), "1700000000.5");
	assert_string_equal(tk_event_str(p, 2, "where"), "mem:6");
	assert_int_equal(h->flags, 0);
	tk_profile_free(p);
}

static void test_hang_context(void **state)
{
	(void)state;
	tk_profile *p = read_doc(1);
	assert_int_equal(tk_event_count(p), 2);
	/* two record threads + the snapshot: tid 11 twice merges (as in a profile of the snapshot alone), 12 */
	assert_int_equal(tk_thread_count(p), 4);
	size_t ctx = 0;
	for (size_t t = 0; t < tk_thread_count(p); t++) {
		const tk_thread *th = tk_thread_get(p, (tk_thread_id)t);
		if (th->role == TK_ROLE_CONTEXT) {
			ctx++;
			assert_int_equal(th->event, 2);
		}
	}
	assert_int_equal(ctx, 2);
	assert_int_equal(tk_event_get(p, 2)->weight, 4); /* context is shown, never counted */
	assert_int_equal(tk_profile_weight(p), 5 + 4 + 3);
	tk_profile_free(p);
}

static void test_transforms_carry_events(void **state)
{
	(void)state;
	tk_profile *p = read_doc(1);
	/* keep the hang's own thread (tid 2) only: both events stay, the CPU one without a thread */
	tk_transform_spec one = {.kind = TK_TX_THREAD, .pattern = "2"};
	tk_error err = {{0}};
	tk_profile *q = tk_transform(p, &one, 1, &err);
	assert_non_null(q);
	assert_int_equal(tk_event_count(q), 2);
	assert_int_equal(tk_event_get(q, 1)->thread, TK_NO_THREAD);
	assert_int_equal(tk_event_get(q, 1)->weight, 0);
	const tk_event *h = tk_event_get(q, 2);
	assert_true(h->thread < tk_thread_count(q));
	assert_int_equal(tk_thread_get(q, h->thread)->tid, 2);
	assert_int_equal(h->weight, 4);
	assert_true(tk_event_num(q, 2, "duration") == 2.5);
	assert_string_equal(tk_string(q, h->key), "1700000010.000");
	tk_profile_free(q);
	/* no thread filter: the snapshot threads stay the hang's context, one per snapshot thread */
	tk_transform_spec merge = {.kind = TK_TX_MERGE_SYSTEM};
	q = tk_transform(p, &merge, 1, &err);
	assert_non_null(q);
	assert_int_equal(tk_thread_count(q), 4);
	size_t ctx = 0;
	for (size_t t = 0; t < tk_thread_count(q); t++)
		ctx += tk_thread_get(q, (tk_thread_id)t)->role == TK_ROLE_CONTEXT;
	assert_int_equal(ctx, 2);
	assert_int_equal(tk_event_get(q, 1)->weight, 5);
	tk_profile_free(q);
	tk_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_records_are_events),
	    cmocka_unit_test(test_hang_context),
	    cmocka_unit_test(test_transforms_carry_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
