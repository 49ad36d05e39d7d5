/* The Firefox Profiler writer on hand-built profiles: every number below is computed by hand from the
 * profile the test builds (the profiler's own reading of real fixtures is tests/cli/gecko_profiler.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "tracekit/write.h"

typedef struct fixture {
	tk_profile *p;
	tk_thread_id main, worker, other;
	tk_stack_id s_main, s_foo, s_leaf;
} fixture;

/* pid 10: "Main Thread" (tid 100) and "worker" (tid 101); pid 9: "x" (tid 7).
 * app binary at 0x100000000 (arm64, UUID 4C4C44D7-5555-3144-A1A5-753F1442BA46), system libc. */
static void build(fixture *f, int keep)
{
	tk_profile *p = f->p = tk_profile_new();
	if (keep)
		tk_profile_keep_samples(p, 1);
	tk_profile_set_unit(p, TK_UNIT_NS);
	tk_binary app = {tk_intern_cstr(p, "App"), tk_intern_cstr(p, "/private/var/containers/App.app/App"),
	                 tk_intern_cstr(p, "4C4C44D7-5555-3144-A1A5-753F1442BA46"), tk_intern_cstr(p, "arm64"),
	                 0x100000000ULL};
	tk_binary libc = {tk_intern_cstr(p, "libsystem_c.dylib"),
	                  tk_intern_cstr(p, "/usr/lib/system/libsystem_c.dylib"), 0, tk_intern_cstr(p, "arm64e"),
	                  0x180000000ULL};
	tk_binary_id ba = tk_binary_add(p, &app), bl = tk_binary_add(p, &libc);
	tk_frame fmain = {0x100001005, tk_intern_cstr(p, "main"), ba, tk_intern_cstr(p, "main.c"), 12, 0};
	tk_frame ffoo = {0x100002009, 0, ba, 0, 0, TK_FRAME_LEAF_PC}; /* unsymbolicated leaf */
	tk_frame fleaf = {0x180000101, tk_intern_cstr(p, "memcpy"), bl, 0, 0, TK_FRAME_LEAF_PC};
	tk_frame_id a = tk_frame_add(p, &fmain), b = tk_frame_add(p, &ffoo), c = tk_frame_add(p, &fleaf);
	f->s_main = tk_stack_push(p, 0, a);
	f->s_foo = tk_stack_push(p, f->s_main, b);
	f->s_leaf = tk_stack_push(p, f->s_main, c);
	f->worker = tk_thread_get_or_add(p, 10, 101, tk_intern_cstr(p, "worker"), tk_intern_cstr(p, "App"));
	f->main = tk_thread_get_or_add(p, 10, 100, tk_intern_cstr(p, "Main Thread"), tk_intern_cstr(p, "App"));
	f->other = tk_thread_get_or_add(p, 9, 7, tk_intern_cstr(p, "x"), tk_intern_cstr(p, "daemon"));
	/* main: out of time order on purpose; a sentinel (empty stack) sample */
	tk_sample_add(p, f->main, f->s_foo, 1130000, 30000000);
	tk_sample_add(p, f->main, f->s_leaf, 2000000, 10000000);
	tk_sample_add(p, f->main, 0, 500000, 20000000);
	tk_sample_add(p, f->main, f->s_foo, 1000000, 40000001);
	tk_sample_add(p, f->worker, f->s_main, 1000000, 5000000);
	tk_sample_add(p, f->other, f->s_leaf, 3000000, 7000000);
}

static json_t *write_json(const tk_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	tk_convert_options o;
	tk_convert_options_init(&o);
	o.title = "t.xml";
	tk_error err;
	assert_int_equal(tk_write_gecko(out, p, &o, &err), 0);
	fclose(out);
	json_error_t je;
	json_t *j = json_loadb(buf, len, 0, &je);
	if (!j)
		fail_msg("not JSON: %s at %d", je.text, je.position);
	free(buf);
	return j;
}

static char *dump(json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
}

#define ASSERT_JSON(expected, value)                                                                                   \
	do {                                                                                                           \
		char *s_ = dump(value);                                                                                \
		assert_string_equal(s_, expected);                                                                     \
		free(s_);                                                                                              \
	} while (0)

static json_t *thread_named(json_t *j, const char *name)
{
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(j, "threads"), i,
	                   t) if (strcmp(json_string_value(json_object_get(t, "name")), name) == 0) return t;
	fail_msg("no thread %s", name);
	return NULL;
}

static void test_samples_in_time_order_with_weights(void **state)
{
	fixture f;
	build(&f, 1);
	json_t *j = write_json(f.p);
	json_t *m = thread_named(j, "Main Thread"), *s = json_object_get(m, "samples");
	/* stacks are the model's ids - 1, the empty stack the extra "(no stack)" row after them (3);
	 * times and weights in exact decimal milliseconds */
	ASSERT_JSON("[2,3,1,1]", json_object_get(s, "stack"));
	ASSERT_JSON("[10,20,30,40.000001]", json_object_get(s, "time"));
	ASSERT_JSON("[2,0.5,1.13,1]", json_object_get(s, "weight"));
	ASSERT_JSON("\"tracing-ms\"", json_object_get(s, "weightType"));
	ASSERT_JSON("4", json_object_get(s, "length"));
	/* the CPU each sample stands for, in ns (meta.sampleUnits) */
	ASSERT_JSON("[2000000,500000,1130000,1000000]", json_object_get(s, "threadCPUDelta"));
	ASSERT_JSON("\"ns\"",
	            json_object_get(json_object_get(json_object_get(j, "meta"), "sampleUnits"), "threadCPUDelta"));
	ASSERT_JSON("\"10\"", json_object_get(m, "pid"));
	ASSERT_JSON("100", json_object_get(m, "tid"));
	ASSERT_JSON("true", json_object_get(m, "isMainThread"));
	ASSERT_JSON("\"App\"", json_object_get(m, "processName"));
	/* threads by pid, the main thread first in its process */
	json_t *th = json_object_get(j, "threads");
	ASSERT_JSON("\"x\"", json_object_get(json_array_get(th, 0), "name"));
	ASSERT_JSON("\"Main Thread\"", json_object_get(json_array_get(th, 1), "name"));
	ASSERT_JSON("\"worker\"", json_object_get(json_array_get(th, 2), "name"));
	json_decref(j);
	tk_profile_free(f.p);
}

static void test_shared_tables(void **state)
{
	fixture f;
	build(&f, 1);
	json_t *j = write_json(f.p);
	json_t *sh = json_object_get(j, "shared");
	json_t *st = json_object_get(sh, "stackTable"), *ft = json_object_get(sh, "frameTable"),
	       *fn = json_object_get(sh, "funcTable"), *S = json_object_get(sh, "stringArray");
	/* the model's stacks, then "(no stack)" (a root: frame 3, function 3, category Other) */
	ASSERT_JSON("[0,1,2,3]", json_object_get(st, "frame"));
	ASSERT_JSON("[null,0,0,null]", json_object_get(st, "prefix"));
	/* main: return address 0x100001005 - 1 - load; the unsymbolicated arm64 leaf 0x100002009 & ~3;
	 * memcpy's arm64e leaf 0x180000101 & ~3 - 0x180000000 */
	ASSERT_JSON("[4100,8200,256,-1]", json_object_get(ft, "address"));
	ASSERT_JSON("[12,null,null,null]", json_object_get(ft, "line"));
	ASSERT_JSON("[1,1,2,0]", json_object_get(ft, "category")); /* App, App, System, Other */
	ASSERT_JSON("[0,1,2,3]", json_object_get(ft, "func"));
	ASSERT_JSON("[0,0,0,0]", json_object_get(ft, "inlineDepth"));
	ASSERT_JSON("\"(no stack)\"",
	            json_array_get(S, json_integer_value(json_array_get(json_object_get(fn, "name"), 3))));
	/* function names through the string table; the unsymbolicated one is its hex address */
	json_t *names = json_object_get(fn, "name");
	ASSERT_JSON("\"main\"", json_array_get(S, json_integer_value(json_array_get(names, 0))));
	ASSERT_JSON("\"0x100002009\"", json_array_get(S, json_integer_value(json_array_get(names, 1))));
	ASSERT_JSON("[0,0,1,-1]", json_object_get(fn, "resource"));
	json_t *src = json_object_get(fn, "source");
	ASSERT_JSON("null", json_array_get(src, 1));
	json_int_t file = json_integer_value(json_array_get(src, 0));
	json_t *files = json_object_get(json_object_get(sh, "sources"), "filename");
	ASSERT_JSON("\"main.c\"", json_array_get(S, json_integer_value(json_array_get(files, file))));
	/* libs: UUID as the Breakpad debug id; a binary without UUID gets an empty one */
	json_t *lib0 = json_array_get(json_object_get(j, "libs"), 0),
	       *lib1 = json_array_get(json_object_get(j, "libs"), 1);
	ASSERT_JSON("\"4C4C44D755553144A1A5753F1442BA460\"", json_object_get(lib0, "breakpadId"));
	ASSERT_JSON("\"/private/var/containers/App.app/App\"", json_object_get(lib0, "path"));
	ASSERT_JSON("\"\"", json_object_get(lib1, "breakpadId"));
	/* an image frame without a name: the profiler must ask a symbol server */
	ASSERT_JSON("false", json_object_get(json_object_get(j, "meta"), "symbolicated"));
	ASSERT_JSON("60", json_object_get(json_object_get(j, "meta"), "preprocessedProfileVersion"));
	json_decref(j);
	tk_profile_free(f.p);
}

static void test_cells_without_sample_list(void **state)
{
	fixture f;
	build(&f, 0);
	json_t *j = write_json(f.p);
	json_t *s = json_object_get(thread_named(j, "Main Thread"), "samples");
	/* one sample per distinct stack in first-seen order, laid end to end from the first time (10 ms) */
	ASSERT_JSON("[1,2,3]", json_object_get(s, "stack"));
	ASSERT_JSON("[2.13,2,0.5]", json_object_get(s, "weight"));
	ASSERT_JSON("[10,12.13,14.13]", json_object_get(s, "time"));
	json_decref(j);
	tk_profile_free(f.p);
}

/* An inline chain (what --symbols makes of one address): the outer frame at depth 0, the frames
 * inlined into it at 1 and 2, all at the outer frame's address and sharing one nativeSymbol. */
static void test_inline_chain(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_profile_keep_samples(p, 1);
	tk_binary app = {tk_intern_cstr(p, "App"), tk_intern_cstr(p, "/App"),
	                 tk_intern_cstr(p, "4C4C44D7-5555-3144-A1A5-753F1442BA46"), tk_intern_cstr(p, "x86_64"),
	                 0x100000000ULL};
	tk_binary_id ba = tk_binary_add(p, &app);
	tk_frame caller = {0x100000101, tk_intern_cstr(p, "main"), ba, 0, 0, 0};
	tk_frame outer = {0x100002001, tk_intern_cstr(p, "f"), ba, 0, 0, 0};
	tk_frame in1 = {0x100002001, tk_intern_cstr(p, "g"), ba, 0, 0, TK_FRAME_INLINED};
	tk_frame in2 = {0x100002001, tk_intern_cstr(p, "h"), ba, 0, 0, TK_FRAME_INLINED | TK_FRAME_LEAF_PC};
	tk_stack_id s = tk_stack_push(p, 0, tk_frame_add(p, &caller));
	s = tk_stack_push(p, s, tk_frame_add(p, &outer));
	s = tk_stack_push(p, s, tk_frame_add(p, &in1));
	s = tk_stack_push(p, s, tk_frame_add(p, &in2));
	tk_thread_id t = tk_thread_get_or_add(p, 1, 1, tk_intern_cstr(p, "main"), tk_intern_cstr(p, "App"));
	tk_sample_add(p, t, s, 1000000, 1000000);
	json_t *j = write_json(p);
	json_t *sh = json_object_get(j, "shared"), *ft = json_object_get(sh, "frameTable");
	ASSERT_JSON("[0,0,1,2]", json_object_get(ft, "inlineDepth"));
	ASSERT_JSON("[null,0,0,0]", json_object_get(ft, "nativeSymbol"));
	ASSERT_JSON("[256,8192,8192,8192]", json_object_get(ft, "address"));
	json_t *ns = json_object_get(sh, "nativeSymbols");
	ASSERT_JSON("1", json_object_get(ns, "length"));
	ASSERT_JSON("[8192]", json_object_get(ns, "address"));
	ASSERT_JSON("[0]", json_object_get(ns, "libIndex"));
	ASSERT_JSON("\"f\"", json_array_get(json_object_get(sh, "stringArray"),
	                                    json_integer_value(json_array_get(json_object_get(ns, "name"), 0))));
	json_decref(j);
	tk_profile_free(p);
}

static void test_write_error_is_reported(void **state)
{
	fixture f;
	build(&f, 1);
	FILE *out = fopen("/dev/full", "w");
	if (!out)
		skip();
	tk_convert_options o;
	tk_convert_options_init(&o);
	tk_error err = {{0}};
	assert_int_equal(tk_write_gecko(out, f.p, &o, &err), -1);
	assert_non_null(strstr(err.msg, "gecko"));
	fclose(out);
	tk_profile_free(f.p);
}

static void test_format_table(void **state)
{
	assert_ptr_equal(tk_writer_find("gecko")->write, tk_write_gecko);
	assert_string_equal(tk_writer_for_path("out/run.gecko.json")->name, "gecko");
	assert_string_equal(tk_writer_for_path("run.fxprof.json")->name, "gecko");
	assert_string_equal(tk_writer_for_path("run.json")->name, "json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_samples_in_time_order_with_weights),
	    cmocka_unit_test(test_shared_tables),
	    cmocka_unit_test(test_cells_without_sample_list),
	    cmocka_unit_test(test_inline_chain),
	    cmocka_unit_test(test_write_error_is_reported),
	    cmocka_unit_test(test_format_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
