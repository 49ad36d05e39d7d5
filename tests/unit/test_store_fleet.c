/* The fleet dashboard's store helpers that the CLI tests reach only partly: release order of
 * versions, the merging of folded stacks (decimal counts, repeated texts, malformed lines), and the
 * --by time buckets' parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store/internal.h"
#include "tracekit/store.h"

static void test_version_cmp(void **state)
{
	(void)state;
	/* each before the next */
	static const char *const order[] = {"", "1", "1.0", "1.0.1", "1.2", "1.10", "5.9", "5.9b", "5.10", "10.0", "a"};
	size_t n = sizeof order / sizeof order[0];
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			int c = tk_store_version_cmp(order[i], order[j]);
			assert_int_equal(c < 0 ? -1 : c > 0, i < j ? -1 : i > j);
		}
	assert_int_equal(tk_store_version_cmp("5.01", "5.1"), 0); /* numbers, not their spelling */
	assert_true(tk_store_version_cmp("5.1", "5.1.0") < 0);
}

/* Stored stacks (stacks.c) back as folded text: prefix-coded lines ("K REST COUNT": K frames of the
 * previous line, then REST) written out in full; folded text stored before passes as it is. */
static void test_stacks_text(void **state)
{
	(void)state;
	const char *coded = "@prefix-coded\n"
	                    "0 (no stack) 3\n"
	                    "0 main;UIKit + 0x10 2\n"
	                    "2 run loop;a b 1.5\n" /* frames with spaces */
	                    "3  4\n"               /* an empty frame under them */
	                    "1 other 5\n"
	                    "9 deeper 1\n" /* more than the previous line has: all of it */
	                    "x bad line\n"
	                    "2 trailing 7";
	char *t = tk_store_stacks_text(coded);
	assert_string_equal(t, "(no stack) 3\n"
	                       "main;UIKit + 0x10 2\n"
	                       "main;UIKit + 0x10;run loop;a b 1.5\n"
	                       "main;UIKit + 0x10;run loop; 4\n"
	                       "main;other 5\n"
	                       "main;other;deeper 1\n"
	                       "main;other;trailing 7\n");
	free(t);
	t = tk_store_stacks_text("a;b 2\na;b;c 1\n");
	assert_string_equal(t, "a;b 2\na;b;c 1\n");
	free(t);
	t = tk_store_stacks_text("");
	assert_string_equal(t, "");
	free(t);
	t = tk_store_stacks_text("@prefix-coded\n");
	assert_string_equal(t, "");
	free(t);
}

static void test_folded_merge(void **state)
{
	(void)state;
	const char *a = "b;c 2\na 1\n", *b = "a 0.5\nb;c 3\nno count here\n\nb 7", *none = "";
	const char *texts[] = {a, b, none};
	uint64_t times[] = {2, 1, 5};
	char *m = tk_store_folded_merge(texts, times, 3);
	/* byte order of the stacks; a counted twice: 2·1 + 0.5 */
	assert_string_equal(m, "a 2.5\nb 7\nb;c 7\n");
	free(m);
	m = tk_store_folded_merge(texts, NULL, 1);
	assert_string_equal(m, "a 1\nb;c 2\n");
	free(m);
	m = tk_store_folded_merge(NULL, NULL, 0);
	assert_string_equal(m, "");
	free(m);
}

static void test_by_buckets(void **state)
{
	(void)state;
	tk_store_query q = {0};
	tk_error err;
	assert_int_equal(tk_store_query_by(&q, "day,app.version", &err), 0);
	assert_int_equal(q.nby, 3);
	assert_string_equal(tk_store_by_name(q.by[0]), "day");
	assert_string_equal(tk_store_by_name(q.by[1]), "app");
	assert_string_equal(tk_store_by_name(q.by[2]), "version");
	assert_int_equal(tk_store_query_by(&q, "hour", &err), -1); /* one time bucket at most */
	tk_store_query h = {0};
	assert_int_equal(tk_store_query_by(&h, "hour", &err), 0);
	assert_string_equal(tk_store_by_name(h.by[0]), "hour");
	assert_int_equal(tk_store_query_by(&h, "week", &err), -1);
}

static void test_report_id_checked(void **state)
{
	(void)state;
	char path[] = "/tmp/tk-fleet-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	tk_error err;
	char url[64];
	snprintf(url, sizeof url, "sqlite:%s", path);
	tk_store *s = tk_store_open(url, &err);
	assert_non_null(s);
	tk_store_report r;
	assert_int_equal(tk_store_report_get(s, "ABC", &r, &err), -1);
	assert_int_equal(
	    tk_store_report_get(s, "00000000000000000000000000000000000000000000000000000000000000001", &r, &err),
	    -1); /* 65 digits */
	assert_int_equal(
	    tk_store_report_get(s, "0000000000000000000000000000000000000000000000000000000000000000", &r, &err), 1);
	char *f = NULL;
	size_t n = 1;
	assert_int_equal(tk_store_signature_folded(s, "nope", "x", NULL, 0, &f, &n, &err), -1);
	assert_int_equal(tk_store_signature_folded(s, "hang", "x", NULL, 0, &f, &n, &err), 0);
	assert_string_equal(f, "");
	assert_int_equal(n, 0);
	free(f);
	tk_store_signature_info in;
	assert_int_equal(tk_store_signature_detail(s, "hang", "x", NULL, 3, &in, &err), 0);
	assert_int_equal(in.count, 0);
	assert_null(in.first_version);
	tk_store_signature_info_free(&in);
	tk_store_close(s);
	close(fd);
	unlink(path);
	char wal[80];
	snprintf(wal, sizeof wal, "%s-wal", path);
	unlink(wal);
	snprintf(wal, sizeof wal, "%s-shm", path);
	unlink(wal);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_version_cmp),
	    cmocka_unit_test(test_folded_merge),
	    cmocka_unit_test(test_stacks_text),
	    cmocka_unit_test(test_by_buckets),
	    cmocka_unit_test(test_report_id_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
