/* lib/store/alert.c: what a rules file parses to (statistic, operator, threshold in the metric's unit,
 * since, by, lines), errors naming FILE:LINE, and evaluation on a SQLite store holding hand-made
 * reports whose percentiles are worked out here by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tracekit/alert.h"

static int parse(const char *text, tk_alert_rules *r, tk_error *err)
{
	return tk_alert_rules_parse(text, strlen(text), "rules.txt", r, err);
}

static void test_parse(void **state)
{
	(void)state;
	tk_alert_rules r;
	tk_error err;
	const char *text = "# gate\r\n"
	                   "\n"
	                   "  p95(hang.duration) > 2 s by version   # comment\r\n"
	                   "p99( cpu.duration )>=60000ms since 1d by app.version, device\n"
	                   "count(hang.duration) < 10 by os\n"
	                   "cpu.average <= 150%\n"
	                   "max(hang.duration) > 1.5e1";
	assert_int_equal(parse(text, &r, &err), 0);
	assert_int_equal(r.n, 5);
	assert_string_equal(r.v[0].text, "p95(hang.duration) > 2 s by version");
	assert_int_equal(r.v[0].line, 3);
	assert_string_equal(r.v[0].metric, "hang.duration");
	assert_int_equal(r.v[0].stat, TK_ALERT_QUANTILE);
	assert_true(r.v[0].quantile == 0.95);
	assert_int_equal(r.v[0].op, TK_ALERT_GT);
	assert_true(r.v[0].threshold == 2);
	assert_string_equal(r.v[0].unit, "s");
	assert_true(r.v[0].since == 0);
	assert_int_equal(r.v[0].nby, 1);
	assert_int_equal(r.v[0].by[0], TK_STORE_VERSION);

	assert_int_equal(r.v[1].line, 4);
	assert_true(r.v[1].quantile == 0.99);
	assert_int_equal(r.v[1].op, TK_ALERT_GE);
	assert_true(r.v[1].threshold == 60); /* ms → s */
	assert_true(r.v[1].since == 86400);
	assert_int_equal(r.v[1].nby, 3);
	assert_int_equal(r.v[1].by[0], TK_STORE_APP);
	assert_int_equal(r.v[1].by[1], TK_STORE_VERSION);
	assert_int_equal(r.v[1].by[2], TK_STORE_DEVICE);

	assert_int_equal(r.v[2].stat, TK_ALERT_COUNT);
	assert_int_equal(r.v[2].op, TK_ALERT_LT);
	assert_true(r.v[2].quantile == -1);
	assert_int_equal(r.v[3].stat, TK_ALERT_VALUE);
	assert_string_equal(r.v[3].unit, "%");
	assert_int_equal(r.v[3].op, TK_ALERT_LE);
	assert_int_equal(r.v[4].stat, TK_ALERT_MAX);
	assert_true(r.v[4].threshold == 15);
	tk_alert_rules_free(&r);

	assert_int_equal(parse("", &r, &err), 0);
	assert_int_equal(r.n, 0);
	tk_alert_rules_free(&r);
}

static void test_errors(void **state)
{
	(void)state;
	static const char *const bad[][2] = {
	    {"hang.duration > 2 s\np95(hang.duration) > 2 h",
	     "rules.txt:2: hang.duration is in s, the threshold in 'h'"},
	    {"\n\n\np95(hang.duration) >", "rules.txt:4: a threshold is missing after '>'"},
	    {"p95(hang.duration) > 2 s since 1d since 2d", "rules.txt:1: 'since' is given twice"},
	    {"p95 > 2", "rules.txt:1: unknown metric 'p95'"},
	    {"count(hang.duration) > 1.5", "rules.txt:1: count(hang.duration): '1.5' is not a whole number"},
	    {"p95(hang.duration) > 0x10", "rules.txt:1: hang.duration is in s, the threshold in 'x10'"},
	    {"p95(hang.duration) > 2 s\xc3\xa9", "rules.txt:1: byte 0xc3 at column 25: a rule is printable ASCII"},
	    {"hang.duration == 2", "rules.txt:1: '==' is not an operator (>, >=, <, <=)"},
	    {"hang.duration > two", "rules.txt:1: 'two' is not a number"},
	    {"hang.duration > 2 s since 1w", "rules.txt:1: since 1w: expected a duration (1d, 12h, 30m, 90s)"},
	    {"hang.duration > 2 s please", "rules.txt:1: unexpected 'please' after the threshold"},
	    {"count(hang.duration) > 2 s",
	     "rules.txt:1: count(hang.duration) is a number of reports: 's' takes no unit"},
	    {"p97(hang.duration) > 2",
	     "rules.txt:1: p97: the store computes the percentiles p50, p90, p95, p99 and p99.9"},
	    {"foo(hang.duration) > 2", "rules.txt:1: 'foo(' is not a statistic"},
	    {"p95(hang.duration > 2", "rules.txt:1: p95(hang.duration: ')' expected after the metric"},
	    {"hang.duration > 2 by", "rules.txt:1: by needs keys"},
	    {"hang.duration > 2 by version,", "rules.txt:1: by needs keys"},
	    {"hang.duration > 1e999", "rules.txt:1: '1e999' is out of range"},
	    {"hang.duration > 2 s since 0d", "rules.txt:1: since 0d: the duration must be more than 0"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		tk_alert_rules r = {(void *)1, 1, NULL};
		tk_error err = {{0}};
		assert_int_equal(parse(bad[i][0], &r, &err), -1);
		if (strncmp(err.msg, bad[i][1], strlen(bad[i][1])) != 0)
			fail_msg("rule %zu: got [%s], want [%s…]", i, err.msg, bad[i][1]);
		assert_null(r.v);
		assert_int_equal(r.n, 0);
	}
	/* a NUL byte in the text is not the end of it */
	tk_alert_rules r;
	tk_error err;
	assert_int_equal(tk_alert_rules_parse("hang.duration > 2\0x", 19, "f", &r, &err), -1);
	assert_string_equal(err.msg, "f:1: byte 0x00 at column 18: a rule is printable ASCII");
}

/* Reports of known durations in a SQLite store: version A 1..10 s, version B 1..20 s (type 7 P95 of
 * 1..n is 1 + 0.95 (n - 1): 9.55 and 19.05). */
static void test_eval(void **state)
{
	(void)state;
	char path[] = "/tmp/tk-alert-test-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	char url[64];
	snprintf(url, sizeof url, "sqlite:%s", path);
	tk_error err;
	tk_store *s = tk_store_open(url, &err);
	assert_non_null(s);
	tk_report v[30];
	for (int i = 0; i < 30; i++) {
		int b = i >= 10;
		v[i] = (tk_report){.kind = "hang",
		                   .keys = {"App", b ? "B" : "A", "", "", "", b ? "s2" : "s1"},
		                   .rkey = "",
		                   .time = 1795000000 + i * 3600,
		                   .duration = b ? i - 9 : i + 1,
		                   .avg_cpu = NAN,
		                   .thread = "",
		                   .signature = ""};
		char id[65];
		snprintf(id, sizeof id, "%064d", i);
		memcpy(v[i].id, id, sizeof v[i].id);
	}
	assert_int_equal(tk_store_put(s, v, 30, NULL, &err), 0);
	tk_alert_rules r;
	assert_int_equal(parse("p95(hang.duration) > 9.6 s by version\n"
	                       "p95(hang.duration) >= 9.55 s by version\n"
	                       "count(hang.duration) >= 5 since 5h\n"
	                       "hang.duration < 1 s\n",
	                       &r, &err),
	                 0);
	tk_alert_breach *b;
	size_t n;
	double now = 1795000000 + 29 * 3600 + 1; /* 5 h back: the last 5 reports */
	assert_int_equal(tk_alert_eval(s, &r, NULL, now, &b, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(b[0].rule, 0);
	assert_string_equal(b[0].keys[0], "B");
	assert_true(b[0].value == 19.05);
	assert_int_equal(b[0].count, 20);
	assert_int_equal(b[1].rule, 1);
	assert_string_equal(b[1].keys[0], "A");
	assert_true(b[1].value == 9.55);
	assert_int_equal(b[2].rule, 1);
	assert_string_equal(b[2].keys[0], "B");
	assert_int_equal(b[3].rule, 2);
	assert_null(b[3].keys[0]);
	assert_true(b[3].value == 5); /* the last 5 h: reports 25 … 29 */
	tk_alert_breaches_free(b, n);
	/* --where as the filter */
	tk_store_query f = {.where = {[TK_STORE_VERSION] = "A"}};
	assert_int_equal(tk_alert_eval(s, &r, &f, 0, &b, &n, &err), 0);
	assert_int_equal(n, 2); /* rule 1 for A, rule 2 (since 5h before 0: everything, 10 > 5) */
	assert_int_equal(b[0].rule, 1);
	assert_int_equal(b[1].rule, 2);
	assert_true(b[1].value == 10);
	tk_alert_breaches_free(b, n);
	tk_alert_rules_free(&r);
	tk_store_close(s);
	unlink(path);
	char aux[128];
	snprintf(aux, sizeof aux, "%s-wal", path);
	unlink(aux);
	snprintf(aux, sizeof aux, "%s-shm", path);
	unlink(aux);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_eval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
