/* tk_store_view_begin / tk_store_view_end (a dashboard page's answers as one view of the store).
 * On a real ClickHouse server — TK_TEST_CH_URL, a store URL that tests/cli/store_ch_range_summaries.sh
 * gives this program; skipped without one — a view stands when nothing was ingested meanwhile or a
 * batch closed clean; an answer read while a batch is in flight stands when it closes clean, is read
 * again each report once when it closes raced (the reports stored twice meanwhile) or never closes;
 * a view over a batch that never closes says so, and its handle then begins no view for a while; a
 * raced answer's list is freed whole; a view on a raced store reads each report once and stands.
 * On SQLite both calls return 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <pthread.h>
#include <time.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "tracekit/store.h"

static char tmpdir[] = "/tmp/tk-view-test-XXXXXX";

/* n hang reports numbered from first (ids and durations distinct) */
static void put_hangs(tk_store *s, int first, int n)
{
	tk_report r[16];
	char rk[16][16];
	assert_true(n <= 16);
	for (int i = 0; i < n; i++) {
		memset(&r[i], 0, sizeof r[i]);
		r[i].kind = "hang";
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			r[i].keys[k] = "";
		r[i].keys[TK_STORE_APP] = "A";
		r[i].keys[TK_STORE_VERSION] = "1.0";
		r[i].keys[TK_STORE_SESSION] = "s1";
		snprintf(rk[i], sizeof rk[i], "%d", first + i);
		r[i].rkey = rk[i];
		r[i].time = 1700000000 + first + i;
		r[i].duration = 0.25 + (first + i) / 100.0;
		r[i].avg_cpu = NAN;
		r[i].thread = "main";
		r[i].signature = "f;g";
		snprintf(r[i].id, sizeof r[i].id, "%064x", 0x5000 + first + i);
	}
	size_t added;
	tk_error err;
	assert_int_equal(tk_store_put(s, r, (size_t)n, &added, &err), 0);
	assert_int_equal(added, (size_t)n);
}

static uint64_t hangs(tk_store *s)
{
	tk_store_query q = {.metric = "hang.duration"};
	tk_store_group *g;
	size_t n;
	tk_error err;
	assert_int_equal(tk_store_percentiles(s, &q, &g, &n, &err), 0);
	uint64_t c = n ? g[0].count : 0;
	tk_store_groups_free(g, n);
	return c;
}

/* One statement to the server behind a clickhouse://HOST:PORT/DB URL, over its HTTP interface. */
static void ch_sql(const char *url, const char *sql)
{
	char base[256], *db;
	snprintf(base, sizeof base, "http://%s", url + strlen("clickhouse://"));
	db = strrchr(base, '/');
	assert_non_null(db);
	char endpoint[512];
	snprintf(endpoint, sizeof endpoint, "%.*s/?database=%s", (int)(db - base), base, db + 1);
	CURL *c = curl_easy_init();
	assert_non_null(c);
	curl_easy_setopt(c, CURLOPT_URL, endpoint);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, sql);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_cleanup(c);
}

/* A statement sent after a moment, from another thread: a batch closing while an answer waits. */
typedef struct closer {
	const char *url, *sql;
} closer;

static void *close_later(void *arg)
{
	const closer *c = arg;
	nanosleep(&(struct timespec){0, 300000000L}, NULL);
	ch_sql(c->url, c->sql);
	return NULL;
}

static void test_view_clickhouse(void **state)
{
	const char *url = getenv("TK_TEST_CH_URL");
	if (!url || strncmp(url, "clickhouse://", 13) != 0)
		skip();
	tk_error err;
	tk_store *s = tk_store_open(url, &err), *w = tk_store_open(url, &err);
	assert_non_null(s);
	assert_non_null(w);
	put_hangs(w, 0, 10);
	/* nothing ingested in between: the view stands, its answers are the store's */
	assert_int_equal(tk_store_view_begin(s, &err), 0);
	assert_int_equal(hangs(s), 10);
	assert_int_equal(hangs(s), 10);
	assert_int_equal(tk_store_view_end(s, &err), 0);
	/* another handle's batch, opened and closed clean between two answers: nothing was stored twice,
	 * the view stands (its answers are each right as of when they were read) */
	assert_int_equal(tk_store_view_begin(s, &err), 0);
	assert_int_equal(hangs(s), 10);
	put_hangs(w, 10, 5);
	assert_int_equal(hangs(s), 15);
	assert_int_equal(tk_store_view_end(s, &err), 0);
	/* a view ended twice, or never begun: nothing to say */
	assert_int_equal(tk_store_view_end(s, &err), 0);
	/* batches in flight (announced, not closed) while answers are read: the answers are checked once
	 * those have closed. One that closes clean: the answer read meanwhile stands. */
	tk_store *v = tk_store_open(url, &err);
	assert_non_null(v);
	ch_sql(url, "INSERT INTO tracekit_ingests VALUES ('in-flight-clean', 0, now())");
	pthread_t t;
	closer cl = {url, "INSERT INTO tracekit_ingests VALUES ('in-flight-clean', 1, now())"};
	assert_int_equal(pthread_create(&t, NULL, close_later, &cl), 0);
	assert_int_equal(hangs(v), 15);
	assert_int_equal(pthread_join(t, NULL), 0);
	/* one that never closes (its ingester died): after a wait, each report read once; then, for a
	 * while, from the start */
	ch_sql(url, "INSERT INTO tracekit_ingests VALUES ('in-flight-stuck', 0, now())");
	assert_int_equal(hangs(v), 15);
	put_hangs(w, 15, 2);
	assert_int_equal(hangs(v), 17);
	/* a view on another handle while one is open: its answers cannot be vouched for, the view says
	 * so; for a while after that, that handle begins no view (each answer checked on its own). (A
	 * batch announced just now: one open over 30 s counts as failed, and views over it stand.) */
	ch_sql(url, "INSERT INTO tracekit_ingests VALUES ('in-flight-stuck-2', 0, now())");
	assert_int_equal(tk_store_view_begin(s, &err), 0);
	assert_int_equal(hangs(s), 17);
	assert_int_equal(tk_store_view_end(s, &err), 1);
	assert_int_equal(tk_store_view_begin(s, &err), 0);
	assert_int_equal(hangs(s), 17);
	assert_int_equal(tk_store_view_end(s, &err), 0);
	/* one in flight while every hang is stored a second time, closed as raced: the answer read
	 * meanwhile counted them twice, and is read again each report once (another handle: no stuck
	 * batch known to it) */
	tk_store *x = tk_store_open(url, &err);
	assert_non_null(x);
	ch_sql(url, "INSERT INTO tracekit_ingests VALUES ('in-flight-raced', 0, now())");
	ch_sql(url, "INSERT INTO reports SELECT * FROM reports WHERE kind = 'hang'");
	closer cr = {url, "INSERT INTO tracekit_ingests VALUES ('in-flight-raced', 2, now())"};
	assert_int_equal(pthread_create(&t, NULL, close_later, &cr), 0);
	/* asked as a top list with a device filter: the reports' path, whose list was freed with its
	 * versions unset when an answer was read again (serve crashed under a running ingest) */
	tk_store_query dev = {0};
	dev.where[TK_STORE_DEVICE] = "";
	tk_store_hang *h;
	size_t nh;
	assert_int_equal(tk_store_top_hangs(x, &dev, 5, &h, &nh, &err), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(nh, 1);
	assert_int_equal(h[0].count, 17);
	assert_string_equal(h[0].first_version, "1.0");
	tk_store_hangs_free(h, nh);
	assert_int_equal(hangs(x), 17);
	/* raced for good: every answer reads each report once, in a view too, which stands */
	assert_int_equal(tk_store_view_begin(x, &err), 0);
	assert_int_equal(hangs(x), 17);
	put_hangs(w, 20, 2);
	assert_int_equal(hangs(x), 19);
	assert_int_equal(tk_store_view_end(x, &err), 0);
	tk_store_close(x);
	tk_store_close(v);
	tk_store_close(w);
	tk_store_close(s);
}

static void test_view_sqlite(void **state)
{
	char url[600];
	snprintf(url, sizeof url, "sqlite:%s/view.db", tmpdir);
	tk_error err;
	tk_store *s = tk_store_open(url, &err), *w = tk_store_open(url, &err);
	assert_non_null(s);
	assert_non_null(w);
	put_hangs(w, 0, 4);
	assert_int_equal(tk_store_view_begin(s, &err), 0);
	assert_int_equal(hangs(s), 4);
	put_hangs(w, 4, 2);
	assert_int_equal(hangs(s), 6); /* each answer one read transaction */
	assert_int_equal(tk_store_view_end(s, &err), 0);
	tk_store_close(w);
	tk_store_close(s);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_view_sqlite),
	    cmocka_unit_test(test_view_clickhouse),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
