/* Writers: folded stacks, tree text, tree JSON and top functions on hand-built profiles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_calltree_helpers.h"
#include "tracekit/write.h"

typedef struct mem {
	char *s;
	size_t n;
	FILE *f;
} mem;

static FILE *mem_open(mem *m)
{
	m->s = NULL;
	m->n = 0;
	m->f = open_memstream(&m->s, &m->n);
	return m->f;
}

static const char *mem_close(mem *m)
{
	fclose(m->f);
	return m->s;
}

static void test_folded(void **state)
{
	tk_profile *p = th_sample_profile();
	mem m;
	tk_error err;
	tk_folded_options o = {0};
	assert_int_equal(tk_write_folded(mem_open(&m), p, &o, &err), 0);
	assert_string_equal(mem_close(&m), "Main Thread tid=100 10\n"
	                                   "Main Thread tid=100;start;main 10\n"
	                                   "Main Thread tid=100;start;main;bar;baz 20\n"
	                                   "Main Thread tid=100;start;main;foo 40\n"
	                                   "worker tid=101;f;f 5\n"
	                                   "worker tid=101;f;f;f;g 5\n"
	                                   "worker tid=101;f;g 5\n"
	                                   "(unnamed) tid=200;x;y 7\n"); /* no name: as every writer says */
	free(m.s);
	o.no_thread = 1;
	assert_int_equal(tk_write_folded(mem_open(&m), p, &o, &err), 0);
	assert_string_equal(mem_close(&m), "(no stack) 10\n"
	                                   "f;f 5\n"
	                                   "f;f;f;g 5\n"
	                                   "f;g 5\n"
	                                   "start;main 10\n"
	                                   "start;main;bar;baz 20\n"
	                                   "start;main;foo 40\n"
	                                   "x;y 7\n");
	free(m.s);
	tk_profile_free(p);
}

static void test_folded_edge_cases(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_thread_id t = th_thread(p, 1, 7, NULL, NULL); /* no name: "(unnamed)", as every writer says */
	tk_frame odd = {.name = tk_intern_cstr(p, "operator;\nweird")};
	tk_frame hex = {.addr = 0xABCDEF};
	tk_stack_id s = tk_stack_push(p, tk_stack_push(p, 0, tk_frame_add(p, &odd)), tk_frame_add(p, &hex));
	tk_sample_add_n(p, t, s, 42, 1);
	tk_sample_add_n(p, t, tk_stack_push(p, 0, th_frame(p, "zero")), 0, 1); /* zero weight: no line */
	mem m;
	tk_folded_options o = {0};
	assert_int_equal(tk_write_folded(mem_open(&m), p, &o, NULL), 0);
	assert_string_equal(mem_close(&m), "(unnamed) tid=7;operator: weird;0xabcdef 42\n");
	free(m.s);
	tk_profile_free(p);
}

static void test_folded_write_error(void **state)
{
	tk_profile *p = th_sample_profile();
	FILE *f = fopen("/dev/full", "w");
	if (!f)
		skip();
	tk_error err = {{0}};
	tk_folded_options o = {0};
	assert_int_equal(tk_write_folded(f, p, &o, &err), -1);
	assert_non_null(strstr(err.msg, "write error"));
	fclose(f);
	tk_profile_free(p);
}

static tk_profile *small_ns_profile(void)
{
	tk_profile *p = tk_profile_new();
	tk_profile_set_unit(p, TK_UNIT_NS);
	tk_thread_id t = th_thread(p, 5, 6, "T", "P\"q");
	th_add(p, t, "bin`a;b", 3000000, 1);
	th_add(p, t, "bin`a", 1000000, 1);
	th_add(p, t, "bin`a;c", 1000000, 1);
	th_add(p, t, "", 2000000, 1);
	return p;
}

static void test_tree_json(void **state)
{
	tk_profile *p = small_ns_profile();
	tk_calltree *t = tk_calltree_build(p, NULL, NULL);
	mem m;
	assert_int_equal(tk_write_tree_json(mem_open(&m), t, NULL), 0);
	assert_string_equal(mem_close(&m),
	                    "{\"unit\":\"ns\",\"by\":\"thread\",\"inverted\":false,\"threads\":[{\"pid\":5,\"tid\":6,"
	                    "\"name\":\"T\",\"process\":\"P\\\"q\",\"threads\":1,\"total\":7000000,\"self\":2000000,"
	                    "\"samples\":4,\"root\":[{\"name\":\"a\",\"binary\":\"bin\",\"total\":5000000,\"self\":"
	                    "1000000,\"samples\":3,\"children\":[{\"name\":\"b\",\"total\":3000000,\"self\":3000000,"
	                    "\"samples\":1,\"children\":[]},{\"name\":\"c\",\"total\":1000000,\"self\":1000000,"
	                    "\"samples\":1,\"children\":[]}]}]}]}\n");
	free(m.s);
	/* pruned: the hidden child becomes an "other" node */
	assert_int_equal(tk_calltree_prune(t, 20, 0, NULL), 0);
	assert_int_equal(tk_write_tree_json(mem_open(&m), t, NULL), 0);
	mem_close(&m);
	assert_non_null(strstr(m.s, "{\"name\":\"(other)\",\"other\":true,\"total\":1000000,\"self\":1000000,"
	                            "\"samples\":1,\"children\":[]}]}]}]}"));
	free(m.s);
	tk_calltree_free(t);

	tk_calltree_options o;
	tk_calltree_options_init(&o);
	o.group = TK_GROUP_ALL;
	o.invert = 1;
	t = tk_calltree_build(p, &o, NULL);
	assert_int_equal(tk_write_tree_json(mem_open(&m), t, NULL), 0);
	mem_close(&m);
	assert_non_null(strstr(m.s, "\"by\":\"all\",\"inverted\":true,\"threads\":[{\"pid\":null,\"tid\":null,"
	                            "\"name\":null,\"process\":null,\"threads\":1,"));
	free(m.s);
	tk_calltree_free(t);
	tk_profile_free(p);
}

static void test_tree_text(void **state)
{
	tk_profile *p = small_ns_profile();
	tk_thread_id t2 = th_thread(p, 5, 9, NULL, "P\"q");
	th_add(p, t2, "r;s;u", 500000, 1);
	th_add(p, t2, "r;v;w", 400000, 1);
	tk_calltree *t = tk_calltree_build(p, NULL, NULL);
	mem m;
	assert_int_equal(tk_write_tree_text(mem_open(&m), t, NULL), 0);
	assert_string_equal(mem_close(&m), "Thread T (tid 6), process P\"q (pid 5): 7.00 ms, 4 samples\n"
	                                   "      Total ms       %        Self ms  Symbol\n"
	                                   "          5.00   71.4%           1.00  a  [bin]\n"
	                                   "          3.00   42.9%           3.00  \u251c\u2500 b\n"
	                                   "          1.00   14.3%           1.00  \u2514\u2500 c\n"
	                                   "          2.00   28.6%           2.00  (no stack)\n"
	                                   "\n"
	                                   "Thread (unnamed) (tid 9), process P\"q (pid 5): 0.90 ms, 2 samples\n"
	                                   "      Total ms       %        Self ms  Symbol\n"
	                                   "          0.90  100.0%           0.00  r\n"
	                                   "          0.50   55.6%           0.00  \u251c\u2500 s\n"
	                                   "          0.50   55.6%           0.50  \u2502  \u2514\u2500 u\n"
	                                   "          0.40   44.4%           0.00  \u2514\u2500 v\n"
	                                   "          0.40   44.4%           0.40     \u2514\u2500 w\n");
	free(m.s);
	tk_calltree_free(t);
	tk_profile_free(p);
}

static void test_top_writers(void **state)
{
	tk_profile *p = small_ns_profile();
	tk_top *top = tk_top_build(p, TK_TOP_BY_SELF, NULL);
	mem m;
	assert_int_equal(tk_write_top_json(mem_open(&m), top, 2, NULL), 0);
	assert_string_equal(mem_close(&m),
	                    "{\"unit\":\"ns\",\"total\":7000000,\"samples\":4,\"count\":3,\"functions\":["
	                    "{\"name\":\"b\",\"self\":3000000,\"total\":3000000,\"self_samples\":1,\"samples\":1},"
	                    "{\"name\":\"a\",\"binary\":\"bin\",\"self\":1000000,\"total\":5000000,\"self_samples\":1,"
	                    "\"samples\":3}]}\n");
	free(m.s);
	assert_int_equal(tk_write_top_text(mem_open(&m), top, 0, NULL), 0);
	assert_string_equal(mem_close(&m), "Top functions: 7.00 ms, 4 samples, 3 functions\n"
	                                   "       Self ms   Self%       Total ms  Total%    Samples  Function\n"
	                                   "          3.00   42.9%           3.00   42.9%          1  b\n"
	                                   "          1.00   14.3%           5.00   71.4%          3  a  [bin]\n"
	                                   "          1.00   14.3%           1.00   14.3%          1  c\n");
	free(m.s);
	tk_top_free(top);
	tk_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_folded),
	    cmocka_unit_test(test_folded_edge_cases),
	    cmocka_unit_test(test_folded_write_error),
	    cmocka_unit_test(test_tree_json),
	    cmocka_unit_test(test_tree_text),
	    cmocka_unit_test(test_top_writers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
