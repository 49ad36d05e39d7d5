/* Records reader API: record facts, exact tree weights, last line wins, chunked anr, keys, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "read/records.h"

static tk_records *parse(const char *s)
{
	tk_error err = {{0}};
	tk_records *r = tk_records_parse(s, strlen(s), "mem", &err);
	if (!r)
		fail_msg("parse failed: %s", err.msg);
	return r;
}

/* "a;b;c weight" lines of thread t, sorted, joined by '\n'. */
static char *folded(tk_profile *p, tk_thread_id t)
{
	size_t n;
	const tk_stack_weight *c = tk_thread_stacks(p, t, &n);
	char **lines = calloc(n + 1, sizeof *lines);
	size_t total = 1;
	for (size_t i = 0; i < n; i++) {
		tk_frame_id fr[256];
		size_t d = tk_stack_frames(p, c[i].stack, fr, 256);
		char buf[4096] = "", hex[32];
		for (size_t j = 0; j < d; j++) {
			strcat(buf, j ? ";" : "");
			strcat(buf, tk_frame_label(p, fr[j], hex));
		}
		char *line = malloc(strlen(buf) + 32);
		sprintf(line, "%s %llu", buf, (unsigned long long)c[i].weight);
		assert_int_equal(c[i].weight, c[i].samples);
		lines[i] = line;
		total += strlen(line) + 1;
	}
	for (size_t i = 0; i < n; i++) /* sort */
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(lines[j], lines[i]) < 0) {
				char *x = lines[i];
				lines[i] = lines[j];
				lines[j] = x;
			}
	char *out = calloc(total, 1);
	for (size_t i = 0; i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
		free(lines[i]);
	}
	free(lines);
	return out;
}

static void test_cpu_record(void **state)
{
	tk_records *r = parse("collection,key,value\n"
	                      "cpu-highload,575204521.78,{\"start\":\"575204521.78\",\"lasting\":\"3.00 s\","
	                      "\"average\":\"150.50 percent of one core\",\"live\":true}\n"
	                      "cpu-highload-stackframe,575204521.78,[{\"frame\":\"0xa\",\"count\":10,\"proportion\":1,"
	                      "\"children\":[{\"frame\":\"0xb\",\"count\":6,\"children\":[{\"frame\":\"0xc\",\"count\":"
	                      "2}]},{\"frame\":\"0xd\",\"count\":1}]},{\"frame\":\"0xe\",\"count\":5}]\n");
	assert_int_equal(tk_records_count(r), 1);
	const tk_record_info *ri = tk_records_get(r, 0);
	assert_int_equal(ri->kind, TK_RECORD_CPU);
	assert_string_equal(ri->kind_name, "cpu-highload");
	assert_string_equal(ri->key, "575204521.78");
	assert_true(fabs(ri->start - 1553511721.78) < 1e-6);
	assert_true(fabs(ri->duration - 3.0) < 1e-9);
	assert_true(fabs(ri->avg_cpu - 150.5) < 1e-9);
	assert_int_equal(ri->samples, 15);
	assert_int_equal(ri->live, 1);
	assert_int_equal(ri->has_tree, 1);
	assert_string_equal(ri->where, "mem:3");
	tk_profile *p = tk_profile_new();
	tk_error err;
	int64_t t = tk_records_load(r, 0, p, 0, &err);
	assert_true(t >= 0);
	assert_int_equal(tk_profile_unit(p), TK_UNIT_SAMPLES);
	/* own weight = count - children: a 10-6-1=3, b 6-2=4, c 2, d 1, e 5 */
	char *f = folded(p, (tk_thread_id)t);
	assert_string_equal(f, "0xa 3\n0xa;0xb 4\n0xa;0xb;0xc 2\n0xa;0xd 1\n0xe 5\n");
	free(f);
	const tk_thread *th = tk_thread_get(p, (tk_thread_id)t);
	assert_string_equal(tk_string(p, th->name), "cpu-highload 2019-03-25 11:02:01 UTC 3.0 s");
	assert_int_equal(th->tid, 1);
	assert_int_equal(th->weight, 15);
	tk_profile_free(p);
	tk_records_free(r);
}

static void test_last_line_wins_and_order(void **state)
{
	tk_records *r = parse("hang,1700000010.000,{\"start\":1700000010,\"duration_ms\":500,\"tid\":7,\"thread\":"
	                      "\"main\",\"live\":true}\n"
	                      "hang-stackframe,1700000010.000,[{\"frame\":\"0x1\",\"count\":1}]\n"
	                      "cpu-highload,0.50,{\"start\":\"0.50\",\"lasting\":\"1\",\"average\":\"90\"}\n"
	                      "hang,1700000010.000,{\"start\":1700000010,\"duration_ms\":2500,\"tid\":7,\"thread\":"
	                      "\"main\",\"live\":false,\"truncated\":true}\n"
	                      "hang-stackframe,1700000010.000,[{\"frame\":\"0x1\",\"count\":4,\"children\":[{\"frame\":"
	                      "\"0x2\",\"count\":4}]}]\n");
	assert_int_equal(tk_records_count(r), 2);
	/* CFAbsoluteTime 0.5 is 2001: before the 2023 hang */
	assert_int_equal(tk_records_get(r, 0)->kind, TK_RECORD_CPU);
	assert_int_equal(tk_records_get(r, 0)->has_tree, 0);
	const tk_record_info *h = tk_records_get(r, 1);
	assert_int_equal(h->kind, TK_RECORD_HANG);
	assert_true(fabs(h->duration - 2.5) < 1e-9);
	assert_int_equal(h->live, 0);
	assert_int_equal(h->truncated, 1);
	assert_int_equal(h->tid, 7);
	assert_string_equal(h->thread, "main");
	assert_int_equal(h->samples, 4);
	assert_string_equal(h->where, "mem:5");
	tk_profile *p = tk_profile_new();
	tk_error err;
	assert_int_equal(tk_records_load_all(r, p, 0, &err), 0);
	assert_int_equal(tk_thread_count(p), 2);
	char *f = folded(p, 1);
	assert_string_equal(f, "0x1;0x2 4\n");
	free(f);
	assert_string_equal(tk_string(p, tk_thread_get(p, 1)->name), "hang main 2023-11-14 22:13:30 UTC 2.50 s");
	assert_int_equal(tk_thread_get(p, 0)->samples, 0);
	tk_profile_free(p);
	tk_records_free(r);
}

static void test_anr_chunks(void **state)
{
	tk_records *r =
	    parse("anr,100.5_1,{\"duration\":\"900\",\"startFrom\":\"100.5\",\"stacks\":[{\"stackframes\":"
	          "\"0x3,0x2,0x1\",\"capturedCount\":2}]}\n"
	          "anr,100.5_0,{\"duration\":900,\"startFrom\":100.5,\"stacks\":[{\"stackframes\":\"0x4,0x1\","
	          "\"capturedCount\":1},{\"stackframes\":\"0x3,0x2,0x1\",\"capturedCount\":5}]}\n"
	          "anr,200.0_0,{\"duration\":450,\"startFrom\":200,\"stacks\":[]}\n");
	assert_int_equal(tk_records_count(r), 2);
	const tk_record_info *a = tk_records_get(r, 0);
	assert_int_equal(a->kind, TK_RECORD_ANR);
	assert_string_equal(a->key, "100.5");
	assert_int_equal(a->samples, 8);
	assert_true(fabs(a->start - 100.5) < 1e-9 && fabs(a->duration - 0.9) < 1e-9);
	assert_int_equal(tk_records_get(r, 1)->has_tree, 0);
	tk_profile *p = tk_profile_new();
	tk_error err;
	int64_t t = tk_records_load(r, 0, p, 0, &err);
	char *f = folded(p, (tk_thread_id)t);
	assert_string_equal(f, "0x1;0x2;0x3 7\n0x1;0x4 1\n");
	free(f);
	tk_profile_free(p);
	tk_records_free(r);
}

static void test_find(void **state)
{
	tk_records *r = parse("cpu-highload,10.00,{}\ncpu-highload,11.00,{}\ncpu-highload,20.00,{}\n");
	assert_int_equal(tk_records_find(r, "10.00"), 0);
	assert_int_equal(tk_records_find(r, "2"), 2);
	assert_int_equal(tk_records_find(r, "1"), -2);
	assert_int_equal(tk_records_find(r, "3"), -1);
	assert_int_equal(tk_records_find(r, ""), -1);
	tk_records_free(r);
}

static void expect_error(const char *doc, const char *msg)
{
	tk_error err = {{0}};
	tk_records *r = tk_records_parse(doc, strlen(doc), "f", &err);
	assert_null(r);
	assert_string_equal(err.msg, msg);
}

static void test_errors(void **state)
{
	expect_error("cpu-highload-stackframe,1.00,[{\"frame\":\"0x1\",\"count\":1,\"children\":[{\"frame\":\"0x2\","
	             "\"count\":2}]}]\n",
	             "f:1: cpu-highload-stackframe 1.00: counts do not add up: node 0x1 counts 1 samples but its "
	             "children count 2");
	expect_error("a,b\n", "f:1: expected collection,key,value");
	expect_error("cpu,1,2\nhang,1.0,{\"start\":1", "f:2: truncated line (no newline at the end of the file)");
	expect_error("hang,1.0,{\"start\":\"soon\"}\n", "f:1: hang 1.0: \"start\" is not a number");
	expect_error("cpu-highload-stackframe,1.0,[{\"frame\":\"0x1\",\"count\":1.5}]\n",
	             "f:1: cpu-highload-stackframe 1.0: node 0x1 has no count (a whole number >= 0)");
	expect_error("cpu-highload-stackframe,1.0,[{\"frame\":\"0x11112222333344445\",\"count\":1}]\n",
	             "f:1: cpu-highload-stackframe 1.0: node at depth 1 has no hex \"frame\" address");
}

/* An independent oracle: random samples (root-first paths) merged into a proportion tree the way
 * MTHawkeye does it, written as JSON, read back: every distinct path must weigh exactly its
 * number of samples. */
enum { NS = 400, MAXD = 6 };
static int g_paths[NS][MAXD], g_depth[NS];
static char *g_json;
static size_t g_len;

/* Children of the node at prefix pre[0..n): every distinct next frame among samples with that prefix. */
static void emit(int *pre, int n)
{
	int first = 1;
	for (int v = 1; v <= 3; v++) {
		int count = 0;
		for (int s = 0; s < NS; s++) {
			if (g_depth[s] <= n || g_paths[s][n] != v)
				continue;
			int match = 1;
			for (int k = 0; k < n && match; k++)
				match = g_paths[s][k] == pre[k];
			count += match;
		}
		if (!count)
			continue;
		g_len += (size_t)sprintf(g_json + g_len, "%s{\"frame\":\"0x%x\",\"count\":%d,\"children\":[",
		                         first ? "" : ",", (n + 1) * 16 + v, count);
		pre[n] = v;
		emit(pre, n + 1);
		g_len += (size_t)sprintf(g_json + g_len, "]}");
		first = 0;
	}
}

static void test_random_trees_match_samples(void **state)
{
	unsigned seed = 12345;
	g_json = malloc(1 << 20);
	for (int round = 0; round < 20; round++) {
		for (int s = 0; s < NS; s++) {
			seed = seed * 1103515245u + 12345u;
			g_depth[s] = 1 + (int)((seed >> 16) % MAXD);
			for (int d = 0; d < g_depth[s]; d++) {
				seed = seed * 1103515245u + 12345u;
				g_paths[s][d] = 1 + (int)((seed >> 16) % 3);
			}
		}
		int pre[MAXD + 1];
		g_len = (size_t)sprintf(g_json, "cpu-highload-stackframe,%d.00,[", round);
		emit(pre, 0);
		g_len += (size_t)sprintf(g_json + g_len, "]\n");
		tk_error err;
		tk_records *r = tk_records_parse(g_json, g_len, "gen", &err);
		assert_non_null(r);
		assert_int_equal(tk_records_get(r, 0)->samples, NS);
		tk_profile *p = tk_profile_new();
		int64_t t = tk_records_load(r, 0, p, 0, &err);
		assert_true(t >= 0);
		size_t n;
		const tk_stack_weight *c = tk_thread_stacks(p, (tk_thread_id)t, &n);
		uint64_t sum = 0;
		for (size_t i = 0; i < n; i++) {
			tk_frame_id fr[MAXD];
			size_t d = tk_stack_frames(p, c[i].stack, fr, MAXD);
			uint64_t want = 0;
			for (int s = 0; s < NS; s++) {
				int match = g_depth[s] == (int)d;
				for (size_t k = 0; k < d && match; k++)
					match =
					    tk_frame_get(p, fr[k])->addr == (uint64_t)((k + 1) * 16 + g_paths[s][k]);
				want += match;
			}
			assert_int_equal(c[i].weight, want);
			sum += c[i].weight;
		}
		assert_int_equal(sum, NS);
		tk_profile_free(p);
		tk_records_free(r);
	}
	free(g_json);
}

static void test_hang_threads(void **state)
{
	tk_records *r = parse("hang,50.000,{\"start\":50,\"duration_ms\":900,\"tid\":11,\"thread\":\"main\","
	                      "\"threads\":[{\"tid\":11,\"name\":\"main\",\"frames\":[\"0x3\",\"0x2\",\"0x1\"]},"
	                      "{\"tid\":12,\"name\":\"worker\",\"frames\":[\"0x9\"]},"
	                      "{\"tid\":13,\"name\":\"io\",\"error\":\"timeout\"}],\"suppressed\":2}\n");
	assert_int_equal(tk_records_get(r, 0)->nthreads, 3);
	assert_int_equal(tk_records_get(r, 0)->suppressed, 2);
	assert_int_equal(tk_records_get(r, 0)->has_tree, 0);
	tk_profile *p = tk_profile_new();
	tk_error err;
	assert_int_equal(tk_records_load_threads(r, 0, p, 0, &err), 3);
	assert_int_equal(tk_thread_count(p), 3);
	assert_string_equal(tk_string(p, tk_thread_get(p, 2)->name), "io (not captured: timeout)");
	assert_int_equal(tk_thread_get(p, 2)->samples, 1); /* one snapshot, no stack */
	assert_int_equal(tk_thread_get(p, 0)->tid, 11);
	assert_string_equal(tk_string(p, tk_thread_get(p, 1)->name), "worker");
	char *f = folded(p, 0);
	assert_string_equal(f, "0x1;0x2;0x3 1\n"); /* leaf first in the record, root first in the model */
	free(f);
	tk_profile_free(p);
	tk_records_free(r);
	expect_error("hang,1.0,{\"threads\":[{\"tid\":1,\"frames\":[\"pc\"]}]}\n",
	             "f:1: hang 1.0: threads[0].frames[0] is not a hex address");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpu_record),
	    cmocka_unit_test(test_last_line_wins_and_order),
	    cmocka_unit_test(test_anr_chunks),
	    cmocka_unit_test(test_find),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_hang_threads),
	    cmocka_unit_test(test_random_trees_match_samples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
