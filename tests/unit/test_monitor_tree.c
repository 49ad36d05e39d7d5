/* Monitor core logic: the proportion tree (merge, order, bound), JSON, back-off, configuration. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "tracekit/monitor.h"

#include "../../monitor/internal.h"

static void add(tkm_tree *t, int times, int n, ...)
{
	uintptr_t f[16];
	va_list ap;
	va_start(ap, n);
	/* given outermost first for readability; the tree takes leaf first */
	for (int i = 0; i < n; i++)
		f[n - 1 - i] = va_arg(ap, uintptr_t);
	va_end(ap);
	for (int k = 0; k < times; k++)
		tkm_tree_add(t, f, n);
}

static char *json(const tkm_tree *t)
{
	tkm_buf b = {0};
	tkm_tree_json(t, &b);
	assert_false(b.oom);
	return b.p;
}

/* MTHawkeye's documented merge picture: main(6) → method1(5) → method2(3), method3(1);
 * main → method3(1) → method4(1). Proportions are count / Σ root counts (6). */
static void test_mthawkeye_merge(void **state)
{
	enum { MAIN = 0x10, M1 = 0x20, M2 = 0x30, M3 = 0x40, M4 = 0x50 };
	tkm_tree t;
	tkm_tree_init(&t, 4096);
	add(&t, 3, 3, MAIN, M1, M2);
	add(&t, 1, 3, MAIN, M1, M3);
	add(&t, 1, 2, MAIN, M1);
	add(&t, 1, 3, MAIN, M3, M4);
	char *j = json(&t);
	assert_string_equal(j, "[{\"frame\":\"0x10\",\"count\":6,\"proportion\":1,\"children\":["
	                       "{\"frame\":\"0x20\",\"count\":5,\"proportion\":0.833333,\"children\":["
	                       "{\"frame\":\"0x30\",\"count\":3,\"proportion\":0.5},{\"frame\":\"0x40\",\"count\":1,"
	                       "\"proportion\":0.166667}]},"
	                       "{\"frame\":\"0x40\",\"count\":1,\"proportion\":0.166667,\"children\":["
	                       "{\"frame\":\"0x50\",\"count\":1,\"proportion\":0.166667}]}]}]");
	assert_int_equal(t.samples, 6);
	assert_false(t.truncated);
	free(j);
	/* reset empties it */
	tkm_tree_reset(&t);
	j = json(&t);
	assert_string_equal(j, "[]");
	free(j);
	tkm_tree_free(&t);
}

/* Several roots keep first-seen order; the proportions of the roots add up to 1. */
static void test_roots_order(void **state)
{
	tkm_tree t;
	tkm_tree_init(&t, 100);
	add(&t, 1, 2, 0xB, 0x1);
	add(&t, 3, 1, 0xA);
	add(&t, 1, 2, 0xB, 0x2);
	char *j = json(&t);
	assert_string_equal(j, "[{\"frame\":\"0xb\",\"count\":2,\"proportion\":0.4,\"children\":["
	                       "{\"frame\":\"0x1\",\"count\":1,\"proportion\":0.2},{\"frame\":\"0x2\",\"count\":1,"
	                       "\"proportion\":0.2}]},{\"frame\":\"0xa\",\"count\":3,\"proportion\":0.6}]");
	free(j);
	tkm_tree_free(&t);
}

/* The bound: a sample needing a node past max_nodes stops at the deepest node it reached. */
static void test_bound(void **state)
{
	tkm_tree t;
	tkm_tree_init(&t, 3);
	add(&t, 1, 3, 0xA, 0xB, 0xC); /* 3 nodes: full */
	add(&t, 1, 3, 0xA, 0xB, 0xD); /* D does not fit: counted in B */
	assert_true(t.truncated);
	add(&t, 1, 3, 0xA, 0xB, 0xC); /* existing path: exact */
	add(&t, 1, 1, 0xE);           /* new root does not fit: lost from the tree, still a sample */
	assert_int_equal(t.n, 3);
	assert_int_equal(t.samples, 4);
	char *j = json(&t);
	assert_string_equal(j,
	                    "[{\"frame\":\"0xa\",\"count\":3,\"proportion\":1,\"children\":[{\"frame\":\"0xb\","
	                    "\"count\":3,\"proportion\":1,\"children\":[{\"frame\":\"0xc\",\"count\":2,\"proportion\":"
	                    "0.666667}]}]}]");
	free(j);
	tkm_tree_free(&t);
}

/* A large tree grows past its first allocation and stays exact. */
static void test_large(void **state)
{
	tkm_tree t;
	tkm_tree_init(&t, 100000);
	uintptr_t f[3];
	for (uintptr_t i = 0; i < 5000; i++) {
		f[2] = 1; /* outermost */
		f[1] = 100 + i % 50;
		f[0] = 10000 + i; /* leaf */
		tkm_tree_add(&t, f, 3);
	}
	assert_int_equal(t.n, 1 + 50 + 5000);
	assert_int_equal(t.v[t.first_root].count, 5000);
	assert_false(t.truncated);
	tkm_tree_free(&t);
}

static void test_json_string(void **state)
{
	tkm_buf b = {0};
	tkm_buf_json_str(&b, "a\"b\\c\n\x01é");
	assert_string_equal(b.p, "\"a\\\"b\\\\c\\u000a\\u0001é\"");
	tkm_buf_printf(&b, "%0300d", 7); /* longer than the printf fast path */
	assert_int_equal(b.n, strlen("\"a\\\"b\\\\c\\u000a\\u0001é\"") + 300);
	tkm_buf_free(&b);
}

/* Bytes that are not UTF-8 (a thread named by prctl with Latin-1 text, a cut multi-byte name, a
 * surrogate, an overlong '/') become U+FFFD (one per maximal subpart); good sequences pass whole. Checked against
 * Python's own decoder: bytes.decode("utf-8", "replace") gives the same text for these inputs. */
static void test_json_string_utf8(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
	    {"caf\xe9", "\"caf\xef\xbf\xbd\""},                                           /* Latin-1 é */
	    {"\xe2\x82", "\"\xef\xbf\xbd\""},                                             /* € cut short: one */
	    {"a\xe2\x82\xac\xf0\x9f\x98\x80", "\"a\xe2\x82\xac\xf0\x9f\x98\x80\""},       /* €, U+1F600 kept */
	    {"\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},                 /* a surrogate */
	    {"\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\""},                                 /* overlong '/' */
	    {"\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""}, /* > U+10FFFF */
	    {"\xff\"", "\"\xef\xbf\xbd\\\"\""},                                           /* then an escape */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tkm_buf b = {0};
		tkm_buf_json_str(&b, cases[i].in);
		assert_string_equal(b.p, cases[i].want);
		tkm_buf_free(&b);
	}
}

static void test_backoff(void **state)
{
	const int yes[] = {1, 2, 3, 5, 8, 13, 21, 34, 55, 89};
	int next = 0;
	for (uint32_t n = 1; n <= 89; n++) {
		bool expect = n == (uint32_t)yes[next];
		assert_int_equal(tkm_backoff_reports(n), expect);
		if (expect)
			next++;
	}
}

static void test_compact(void **state)
{
	const char *in = "collection,key,value\n"
	                 "launch-time,1.5,1.5\n"
	                 "cpu-highload,10.00,{\"live\":true,\"a\":1}\n"
	                 "cpu-highload-stackframe,10.00,[1]\n"
	                 "hang,7.000,{\"live\":true}\n"
	                 "cpu-highload,10.00,{\"live\":true,\"a\":2}\n"
	                 "cpu-highload-stackframe,10.00,[1,2]\n"
	                 "launch-time,2.5,2.5\n"
	                 "\n"
	                 "cpu-highload,10.000,{\"other key\":1}\n"
	                 "hang,7.000,{\"live\":false}\n"
	                 "cpu-highload,10.00,{\"live\":false,\"a\":3}\n"
	                 "cpu-highload-stackframe,10.00,[1,2,3]"; /* last line without its newline */
	tkm_buf out = {0};
	assert_int_equal(tkm_records_compact(in, strlen(in), &out), 0);
	assert_string_equal(out.p, "collection,key,value\n"
	                           "launch-time,1.5,1.5\n"
	                           "launch-time,2.5,2.5\n"
	                           "cpu-highload,10.000,{\"other key\":1}\n"
	                           "hang,7.000,{\"live\":false}\n"
	                           "cpu-highload,10.00,{\"live\":false,\"a\":3}\n"
	                           "cpu-highload-stackframe,10.00,[1,2,3]\n");
	/* idempotent */
	tkm_buf again = {0};
	assert_int_equal(tkm_records_compact(out.p, out.n, &again), 0);
	assert_string_equal(again.p, out.p);
	tkm_buf_free(&out);
	tkm_buf_free(&again);
	/* empty input */
	assert_int_equal(tkm_records_compact("", 0, &out), 0);
	assert_int_equal(out.n, 0);
	tkm_buf_free(&out);
}

static void test_config_default(void **state)
{
	tk_monitor_config c;
	tk_monitor_config_default(&c);
	/* MTHawkeye's defaults */
	assert_int_equal(c.cpu_interval_ms, 1000);
	assert_int_equal(c.cpu_high_interval_ms, 300);
	assert_true(c.cpu_threshold == 80);
	assert_true(c.thread_threshold == 15);
	assert_int_equal(c.cpu_duration_ms, 60000);
	assert_int_equal(c.hang_threshold_ms, 2000);
	assert_int_equal(c.hang_sample_interval_ms, 50);
	assert_int_equal(c.max_nodes, 4096);
	assert_int_equal(c.compact_bytes, 1 << 20);
	assert_null(c.dir);
}

static void test_config_env(void **state)
{
	tk_monitor_config c;
	char err[256];
	tk_monitor_config_default(&c);
	setenv("TK_MONITOR_DIR", "/tmp/x", 1);
	setenv("TK_MONITOR_CPU_INTERVAL_MS", "100", 1);
	setenv("TK_MONITOR_CPU_HIGH_INTERVAL_MS", "50", 1);
	setenv("TK_MONITOR_CPU_THRESHOLD", "150.5", 1);
	setenv("TK_MONITOR_THREAD_THRESHOLD", "5", 1);
	setenv("TK_MONITOR_CPU_DURATION_MS", "2000", 1);
	setenv("TK_MONITOR_MAX_NODES", "10", 1);
	setenv("TK_MONITOR_THREAD_CPU", "schedstat", 1);
	assert_int_equal(tk_monitor_config_from_env(&c, err, sizeof err), 0);
	assert_string_equal(c.dir, "/tmp/x");
	assert_int_equal(c.cpu_interval_ms, 100);
	assert_int_equal(c.cpu_high_interval_ms, 50);
	assert_true(c.cpu_threshold == 150.5);
	assert_true(c.thread_threshold == 5);
	assert_int_equal(c.cpu_duration_ms, 2000);
	assert_int_equal(c.max_nodes, 10);
	assert_int_equal(c.use_schedstat, 1);

	setenv("TK_MONITOR_MAX_NODES", "-3", 1);
	assert_int_equal(tk_monitor_config_from_env(&c, err, sizeof err), -1);
	assert_string_equal(err, "monitor: TK_MONITOR_MAX_NODES=-3: expected an integer from 1 to 100000000");
	setenv("TK_MONITOR_MAX_NODES", "12x", 1);
	assert_int_equal(tk_monitor_config_from_env(&c, err, sizeof err), -1);
	unsetenv("TK_MONITOR_MAX_NODES");
	setenv("TK_MONITOR_THREAD_CPU", "sundial", 1);
	assert_int_equal(tk_monitor_config_from_env(&c, err, sizeof err), -1);
	assert_string_equal(err, "monitor: TK_MONITOR_THREAD_CPU=sundial: expected clock or schedstat");
	const char *vars[] = {
	    "TK_MONITOR_DIR",           "TK_MONITOR_CPU_INTERVAL_MS",  "TK_MONITOR_CPU_HIGH_INTERVAL_MS",
	    "TK_MONITOR_CPU_THRESHOLD", "TK_MONITOR_THREAD_THRESHOLD", "TK_MONITOR_CPU_DURATION_MS",
	    "TK_MONITOR_THREAD_CPU"};
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
		unsetenv(vars[i]);
}

static void test_start_errors(void **state)
{
	tk_monitor_config c;
	char err[256];
	tk_monitor_config_default(&c);
	assert_null(tk_monitor_start(&c, err, sizeof err));
	assert_string_equal(err, "monitor: no sink: set dir (TK_MONITOR_DIR) or a callback");
	c.dir = "/proc/no/such/dir";
	assert_null(tk_monitor_start(&c, err, sizeof err));
	assert_non_null(strstr(err, "/proc/no/such/dir: cannot create the session directory"));
	tk_monitor_stop(NULL);
	tk_monitor_heartbeat(NULL);
	tk_monitor_flush(NULL);
}

/* The run's foreground line in dir/records (the last one wins, as readers take it): seconds and live. */
static double foreground_line(const char *dir, int *live)
{
	char path[512], line[4096];
	snprintf(path, sizeof path, "%s/records", dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	double sec = -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "foreground,", 11) == 0) {
			const char *v = strstr(line, "\"seconds\":");
			assert_non_null(v);
			sec = strtod(v + 10, NULL);
			*live = strstr(line, "\"live\":true") != NULL;
		}
	fclose(f);
	return sec;
}

/* tk_monitor_set_foreground: time in the background is not counted; the whole life counts by
 * default; flush writes the line live, stop final. Waits on the clock, never sleeps a fixed time. */
static void test_foreground(void **state)
{
	char dir[] = "/tmp/tk-fg-XXXXXX";
	assert_non_null(mkdtemp(dir));
	tk_monitor_config c;
	tk_monitor_config_default(&c);
	c.dir = dir;
	c.cpu_enabled = 0;
	char err[256];
	struct timespec t0, t;
	tk_monitor_set_foreground(false); /* launched into the background */
	tk_monitor *m = tk_monitor_start(&c, err, sizeof err);
	assert_non_null(m);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000000L);
	tk_monitor_flush(m);
	int live = 0;
	assert_true(foreground_line(dir, &live) == 0.0);
	assert_true(live);
	tk_monitor_set_foreground(true); /* didBecomeActive */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 30000000L);
	tk_monitor_set_foreground(false); /* willResignActive: what follows is not counted */
	double upto;
	tk_monitor_flush(m);
	upto = foreground_line(dir, &live);
	assert_true(upto >= 0.030);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000000L);
	tk_monitor_stop(m);
	assert_true(foreground_line(dir, &live) == upto); /* the background time after it: not counted */
	assert_false(live);
	tk_monitor_set_foreground(true); /* the default again for the other tests */
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mthawkeye_merge), cmocka_unit_test(test_roots_order),
	    cmocka_unit_test(test_bound),           cmocka_unit_test(test_large),
	    cmocka_unit_test(test_json_string),     cmocka_unit_test(test_json_string_utf8),
	    cmocka_unit_test(test_backoff),         cmocka_unit_test(test_compact),
	    cmocka_unit_test(test_config_default),  cmocka_unit_test(test_config_env),
	    cmocka_unit_test(test_start_errors),    cmocka_unit_test(test_foreground),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
