/* lib/store: option parsing, content ids, bundles (made from a session, decoded back to the same
 * reports), bundle errors, and SQLite put/query on hand-computed values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "store/internal.h"
#include "tracekit/store.h"

static char tmpdir[] = "/tmp/tk-store-test-XXXXXX";

static void write_file(const char *dir, const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* one session: two hangs (1.5 s and 0.25 s), one live hang, a meta.json */
static const char records[] =
    "collection,key,value\n"
    "launch-time,1700000000.000000,1700000000.000000\n"
    "hang,1700000010.000,{\"start\":1700000010.0,\"duration_ms\":1500,\"threshold_ms\":250,\"tid\":7,"
    "\"thread\":\"main\",\"samples\":3,\"live\":false,\"suppressed\":0,\"threads\":[{\"tid\":7,\"name\":\"main\","
    "\"frames\":[\"0x1010\",\"0x1020\"]}]}\n"
    "hang,1700000020.000,{\"start\":1700000020.0,\"duration_ms\":250,\"threshold_ms\":250,\"tid\":7,"
    "\"thread\":\"main\",\"samples\":1,\"live\":false,\"suppressed\":0,\"threads\":[{\"tid\":7,\"name\":\"main\","
    "\"frames\":[\"0x1030\"]}]}\n"
    "hang,1700000030.000,{\"start\":1700000030.0,\"duration_ms\":900,\"threshold_ms\":250,\"tid\":7,"
    "\"thread\":\"main\",\"samples\":1,\"live\":true,\"suppressed\":0,\"threads\":[]}\n";

static void test_options(void **state)
{
	tk_report_meta m = {0};
	char *owned;
	tk_error err;
	assert_int_equal(tk_report_meta_parse(&m, "app=Foo,version=5.2", &owned, &err), 0);
	assert_string_equal(m.keys[TK_STORE_APP], "Foo");
	assert_string_equal(m.keys[TK_STORE_VERSION], "5.2");
	assert_null(m.keys[TK_STORE_OS]);
	free(owned);
	assert_int_equal(tk_report_meta_parse(&m, "colour=red", &owned, &err), -1);
	assert_non_null(strstr(err.msg, "colour"));

	tk_store_query q = {0};
	assert_int_equal(tk_store_query_by(&q, "app.version,device,version", &err), 0);
	assert_int_equal(q.nby, 3); /* app, version, device: app.version brings app; no duplicates */
	assert_int_equal(q.by[0], TK_STORE_APP);
	assert_int_equal(q.by[1], TK_STORE_VERSION);
	assert_int_equal(q.by[2], TK_STORE_DEVICE);
	assert_int_equal(tk_store_query_by(&q, "colour", &err), -1);
	char w[] = "version=5.2,os=iOS 17";
	assert_int_equal(tk_store_query_where(&q, w, &err), 0);
	assert_string_equal(q.where[TK_STORE_VERSION], "5.2");
	assert_string_equal(q.where[TK_STORE_OS], "iOS 17");
	assert_int_equal(tk_store_query_since(&q, "7d", 1000000.0, &err), 0);
	assert_true(q.since == 1000000.0 - 7 * 86400);
	assert_int_equal(tk_store_query_since(&q, "12h", 100000.0, &err), 0);
	assert_true(q.since == 100000.0 - 12 * 3600);
	assert_int_equal(tk_store_query_since(&q, "soon", 0, &err), -1);
	/* a value may hold commas (iPhone model names) where no KEY= follows; a typo still fails */
	tk_store_query qc = {0};
	char wc[] = "device=iPhone12,1,os=iOS 17,1";
	assert_int_equal(tk_store_query_where(&qc, wc, &err), 0);
	assert_string_equal(qc.where[TK_STORE_DEVICE], "iPhone12,1");
	assert_string_equal(qc.where[TK_STORE_OS], "iOS 17,1");
	char wt[] = "app=A,verison=5.2";
	assert_int_equal(tk_store_query_where(&qc, wt, &err), -1);
	/* --since and --until take UTC dates (Unix seconds from Python's datetime with tz=utc) */
	assert_int_equal(tk_store_query_since(&q, "2026-11-20", 0, &err), 0);
	assert_true(q.since == 1795132800.0);
	assert_int_equal(tk_store_query_until(&q, "2024-02-29T13:05:09", 0, &err), 0);
	assert_true(q.until == 1709211909.0);
	assert_int_equal(tk_store_query_until(&q, "1d", 1000000.0, &err), 0);
	assert_true(q.until == 1000000.0 - 86400);
	assert_int_equal(tk_store_query_until(&q, "2026-13-01", 0, &err), -1);
	assert_int_equal(tk_store_query_until(&q, "2026-11-20T25", 0, &err), -1);
}

static void test_reports_and_bundle(void **state)
{
	write_file(tmpdir, "records", records);
	write_file(tmpdir, "meta.json",
	           "{\"app\":\"Atlas\",\"version\":\"5.2\",\"device\":\"iPhone15,3\",\"session\":\"S1\"}");
	tk_report_set a = {0}, b = {0};
	tk_error err;
	tk_report_meta given = {.keys = {[TK_STORE_OS] = "iOS 17.5", [TK_STORE_APP] = "NotThis"}};
	assert_int_equal(tk_reports_from_path(tmpdir, &given, &a, &err), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.live, 1);
	assert_string_equal(a.v[0].keys[TK_STORE_APP], "Atlas");   /* meta.json before --set */
	assert_string_equal(a.v[0].keys[TK_STORE_OS], "iOS 17.5"); /* --set fills what is missing */
	assert_true(a.v[0].duration == 1.5);
	assert_true(a.v[1].duration == 0.25);
	assert_string_equal(a.v[0].signature, "0x1010;0x1020"); /* no images: raw addresses, leaf first */
	assert_int_equal(strlen(a.v[0].id), 64);
	assert_string_not_equal(a.v[0].id, a.v[1].id);

	void *body;
	size_t n;
	assert_int_equal(tk_bundle_make(tmpdir, NULL, &body, &n, &err), 0);
	assert_int_equal(tk_bundle_reports(body, n, 1 << 20, "t", &given, &b, &err), 0);
	assert_int_equal(b.n, 2);
	for (size_t i = 0; i < 2; i++) /* the same reports, so the same ids: resending is harmless */
		assert_string_equal(a.v[i].id, b.v[i].id);
	tk_report_set_free(&b);
	/* truncated: every proper prefix is refused */
	for (size_t cut = 0; cut < n; cut += 7) {
		tk_report_set c = {0};
		assert_int_equal(tk_bundle_reports(body, cut, 1 << 20, "t", NULL, &c, &err), -1);
		tk_report_set_free(&c);
	}
	/* the inflate bound */
	assert_int_equal(tk_bundle_reports(body, n, 100, "t", NULL, &b, &err), -1);
	assert_non_null(strstr(err.msg, "inflates past"));
	free(body);
	tk_report_set_free(&a);
}

static void gz(const char *text, void **out, size_t *n)
{
	uLongf zn = compressBound(strlen(text)) + 64;
	unsigned char *z = malloc(zn);
	z_stream s = {0};
	deflateInit2(&s, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
	s.next_in = (unsigned char *)text;
	s.avail_in = (uInt)strlen(text);
	s.next_out = z;
	s.avail_out = (uInt)zn;
	assert_int_equal(deflate(&s, Z_FINISH), Z_STREAM_END);
	*n = s.total_out;
	deflateEnd(&s);
	*out = z;
}

static void test_bundle_errors(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
	    {"tracekit-bundle 1\nrecords 5\nabc\n", "announced"},
	    {"tracekit-bundle 1\nrecords x\n", "NAME SIZE"},
	    {"tracekit-bundle 1\nsecrets 1\nx\n", "unknown file"},
	    {"tracekit-bundle 1\nmeta.json 2\n{}\n", "no records"},
	    {"tracekit-bundle 1\nrecords 21\ncollection,key,value\n\nrecords 21\ncollection,key,value\n\n", "repeated"},
	    {"tracekit-bundle 1\nrecords 21\ncollection,key,value\n\nmeta.json 2\n[]\n", "not a JSON object"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		void *z;
		size_t n;
		gz(cases[i].text, &z, &n);
		tk_report_set s = {0};
		tk_error err;
		assert_int_equal(tk_bundle_reports(z, n, 1 << 20, "t", NULL, &s, &err), -1);
		if (!strstr(err.msg, cases[i].want))
			fail_msg("case %zu: [%s] lacks [%s]", i, err.msg, cases[i].want);
		tk_report_set_free(&s);
		free(z);
	}
	tk_report_set s = {0};
	tk_error err;
	assert_int_equal(tk_bundle_reports("plain", 5, 1 << 20, "t", NULL, &s, &err), -1);
	assert_non_null(strstr(err.msg, "not gzip"));
}

/* SQLite: put twice (second time nothing new), percentiles by hand: values 1, 2, 3, 4 →
 * p50 = 2.5, p90 = 3.7, mean 2.5 */
static void test_sqlite(void **state)
{
	char url[600];
	snprintf(url, sizeof url, "sqlite:%s/t.db", tmpdir);
	tk_error err;
	tk_store *s = tk_store_open(url, &err);
	assert_non_null(s);
	assert_string_equal(tk_store_backend(s), "sqlite");
	tk_report r[4];
	const char *vers[4] = {"1", "1", "2", "2"};
	char keys[4][16];
	for (int i = 0; i < 4; i++) {
		memset(&r[i], 0, sizeof r[i]);
		r[i].kind = "hang";
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			r[i].keys[k] = "";
		r[i].keys[TK_STORE_VERSION] = vers[i];
		snprintf(keys[i], sizeof keys[i], "%d", i);
		r[i].rkey = keys[i];
		r[i].time = 1000 + i;
		r[i].duration = i + 1;
		r[i].avg_cpu = NAN;
		r[i].thread = "";
		r[i].signature = i < 3 ? "a" : "b";
		/* ids are content hashes, made by the library; any distinct hex will do here */
		snprintf(r[i].id, sizeof r[i].id, "%064d", i);
	}
	size_t added;
	assert_int_equal(tk_store_put(s, r, 4, &added, &err), 0);
	assert_int_equal(added, 4);
	assert_int_equal(tk_store_put(s, r, 4, &added, &err), 0);
	assert_int_equal(added, 0);
	tk_store_query q = {.metric = "hang.duration"};
	tk_store_group *g;
	size_t n;
	assert_int_equal(tk_store_percentiles(s, &q, &g, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(g[0].count, 4);
	assert_true(g[0].mean == 2.5 && g[0].min == 1 && g[0].max == 4);
	assert_true(g[0].q[0] == 2.5);
	assert_true(fabs(g[0].q[1] - 3.7) < 1e-15);
	tk_store_groups_free(g, n);
	assert_int_equal(tk_store_query_by(&q, "version", &err), 0);
	assert_int_equal(tk_store_percentiles(s, &q, &g, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(g[0].keys[0], "1");
	assert_true(g[0].q[0] == 1.5 && g[1].q[0] == 3.5);
	tk_store_groups_free(g, n);
	tk_store_hang *h;
	tk_store_query all = {0};
	assert_int_equal(tk_store_top_hangs(s, &all, 10, &h, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(h[0].signature, "a");
	assert_int_equal(h[0].count, 3);
	assert_true(h[0].p50 == 2);
	assert_string_equal(h[0].example, r[0].id);
	tk_store_hangs_free(h, n);
	q.metric = "fn.self:x"; /* a profile metric: no profiles stored, so no group */
	assert_int_equal(tk_store_percentiles(s, &q, &g, &n, &err), 0);
	assert_int_equal(n, 0);
	tk_store_groups_free(g, n);
	q.metric = "thread.weight:x";
	assert_int_equal(tk_store_percentiles(s, &q, &g, &n, &err), -1);
	tk_store_close(s);
	assert_null(tk_store_open("mysql://x/y", &err));
	assert_null(tk_store_open("clickhouse://", &err));
}

/* The SQLite backend's answers by its several paths (runs merged per grouping, a signature's range of
 * reports_sig under a device filter, a time range's kept rows) against the same numbers computed here
 * from the values put: two apps sharing a version, hangs and ANRs in one group. */
static double q7(const double *x, size_t n, double p)
{
	double h = (double)(n - 1) * p;
	size_t lo = (size_t)h;
	return lo + 1 < n ? x[lo] + (h - (double)lo) * (x[lo + 1] - x[lo]) : x[lo];
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void test_sqlite_paths(void **state)
{
	char url[600];
	snprintf(url, sizeof url, "sqlite:%s/paths.db", tmpdir);
	tk_error err;
	tk_store *s = tk_store_open(url, &err);
	assert_non_null(s);
	enum { N = 240 };
	static tk_report r[N];
	static char rk[N][16], ses[N][16];
	static const char *const apps[] = {"A", "B"}, *const vers[] = {"1.0", "1.1", "1.10"},
	                         *const sigs[] = {"s1", "s2", "s3"}, *const devs[] = {"d1", "d2"};
	uint64_t x = 42;
	for (int i = 0; i < N; i++) {
		memset(&r[i], 0, sizeof r[i]);
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		r[i].kind = i % 5 == 0 ? "anr" : "hang";
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			r[i].keys[k] = "";
		r[i].keys[TK_STORE_APP] = apps[i % 2];
		r[i].keys[TK_STORE_VERSION] = vers[(i / 2) % 3];
		r[i].keys[TK_STORE_DEVICE] = devs[(i / 3) % 2];
		snprintf(ses[i], sizeof ses[i], "s%d", i % 17);
		r[i].keys[TK_STORE_SESSION] = ses[i];
		snprintf(rk[i], sizeof rk[i], "%d", i);
		r[i].rkey = rk[i];
		r[i].time = 1000 + i;
		r[i].duration = (double)(x >> 40) / 1e4 + (i % 7 == 0 ? 0.25 : 0); /* ties too */
		r[i].avg_cpu = NAN;
		r[i].thread = "";
		r[i].signature = sigs[(i / 5) % 3];
		snprintf(r[i].id, sizeof r[i].id, "%064x", (unsigned)(x >> 20));
	}
	size_t added;
	assert_int_equal(tk_store_put(s, r, N, &added, &err), 0);
	assert_int_equal(added, N);
	/* percentiles by version, by app and version, and of all */
	const char *const bys[] = {"version", "app,version", "app"};
	for (int b = 0; b < 3; b++) {
		tk_store_query q = {.metric = "hang.duration"};
		assert_int_equal(tk_store_query_by(&q, bys[b], &err), 0);
		tk_store_group *g;
		size_t n;
		assert_int_equal(tk_store_percentiles(s, &q, &g, &n, &err), 0);
		size_t total = 0;
		for (size_t i = 0; i < n; i++) {
			double v[N];
			size_t nv = 0;
			for (int j = 0; j < N; j++) {
				int in = 1;
				for (size_t k = 0; k < q.nby; k++)
					in &= strcmp(r[j].keys[q.by[k]], g[i].keys[k]) == 0;
				if (in)
					v[nv++] = r[j].duration;
			}
			qsort(v, nv, sizeof *v, dcmp);
			assert_int_equal(g[i].count, nv);
			assert_true(g[i].min == v[0] && g[i].max == v[nv - 1]);
			const double ps[] = {0.5, 0.9, 0.95, 0.99};
			for (int k = 0; k < 4; k++)
				assert_true(fabs(g[i].q[k] - q7(v, nv, ps[k])) < 1e-12);
			if (i)
				assert_true(strcmp(g[i - 1].keys[0], g[i].keys[0]) <= 0);
			total += nv;
		}
		assert_int_equal(total, N);
		tk_store_groups_free(g, n);
	}
	/* a histogram's values by version: every value, ascending */
	tk_store_query dq = {.metric = "hang.duration", .nby = 1, .by = {TK_STORE_VERSION}};
	tk_store_dist *d;
	double *e;
	size_t nd;
	assert_int_equal(tk_store_distribution(s, &dq, 4, &d, &nd, &e, &err), 0);
	assert_int_equal(nd, 3);
	for (size_t i = 0; i < nd; i++)
		for (size_t k = 1; k < d[i].n; k++)
			assert_true(d[i].values[k - 1] <= d[i].values[k]);
	assert_int_equal(d[0].n + d[1].n + d[2].n, N);
	tk_store_dists_free(d, nd, e);
	/* top signatures: unfiltered (the summary), all of time as a range (the kept rows) and a device */
	tk_store_query all = {0}, range = {.since = 1, .until = 1e9}, dev = {0};
	dev.where[TK_STORE_DEVICE] = "d1";
	tk_store_hang *h0, *h1, *h2;
	size_t n0, n1, n2;
	assert_int_equal(tk_store_top_hangs(s, &all, 10, &h0, &n0, &err), 0);
	assert_int_equal(tk_store_top_hangs(s, &range, 10, &h1, &n1, &err), 0);
	assert_int_equal(tk_store_top_hangs(s, &dev, 10, &h2, &n2, &err), 0);
	assert_int_equal(n0, 3);
	assert_int_equal(n1, 3);
	for (size_t i = 0; i < n0; i++) {
		assert_string_equal(h0[i].signature, h1[i].signature);
		assert_int_equal(h0[i].count, h1[i].count);
		assert_int_equal(h0[i].sessions, h1[i].sessions);
		assert_true(h0[i].p50 == h1[i].p50 && h0[i].p95 == h1[i].p95);
		assert_string_equal(h0[i].example, h1[i].example);
		assert_string_equal(h0[i].first_version, "1.0");
		assert_string_equal(h0[i].last_version, "1.10");
		assert_string_equal(h1[i].last_version, "1.10");
	}
	for (size_t i = 0; i < n2; i++) { /* the device's reports of the signature, counted here */
		size_t c = 0;
		double v[N];
		const char *least = NULL;
		for (int j = 0; j < N; j++)
			if (strcmp(r[j].signature, h2[i].signature) == 0 &&
			    strcmp(r[j].keys[TK_STORE_DEVICE], "d1") == 0) {
				v[c++] = r[j].duration;
				if (!least || strcmp(r[j].id, least) < 0)
					least = r[j].id;
			}
		qsort(v, c, sizeof *v, dcmp);
		assert_int_equal(h2[i].count, c);
		assert_true(fabs(h2[i].p50 - q7(v, c, 0.5)) < 1e-12);
		assert_string_equal(h2[i].example, least);
		if (i)
			assert_true(h2[i - 1].count >= h2[i].count);
	}
	/* the counts alone (tk_store_top_counts): the same list, counts and examples, nothing else, for
	 * each of the three; limited to 2: the same first two */
	const tk_store_query *qs[] = {&all, &range, &dev};
	const tk_store_hang *full[] = {h0, h1, h2};
	const size_t nfull[] = {n0, n1, n2};
	for (int k = 0; k < 3; k++)
		for (size_t lim = 2; lim <= 10; lim += 8) {
			tk_store_hang *c;
			size_t nc;
			assert_int_equal(tk_store_top_counts(s, "hang", qs[k], lim, &c, &nc, &err), 0);
			assert_int_equal(nc, nfull[k] < lim ? nfull[k] : lim);
			for (size_t i = 0; i < nc; i++) {
				assert_string_equal(c[i].signature, full[k][i].signature);
				assert_int_equal(c[i].count, full[k][i].count);
				assert_string_equal(c[i].example, full[k][i].example);
				assert_true(c[i].sessions == 0 && c[i].p50 == 0 && c[i].p95 == 0);
				assert_null(c[i].first_version);
				assert_null(c[i].last_version);
			}
			tk_store_hangs_free(c, nc);
		}
	tk_store_hang *none = NULL;
	size_t nnone = 1;
	assert_int_equal(tk_store_top_counts(s, "nope", &all, 10, &none, &nnone, &err), -1);
	assert_true(none == NULL && nnone == 0);
	assert_non_null(strstr(err.msg, "unknown kind 'nope'"));
	/* a signature's rows under a range: the first and the next signature (kept rows) as without one */
	for (size_t i = 0; i < n0; i++) {
		tk_store_signature_info a, b;
		assert_int_equal(tk_store_signature_detail(s, "hang", h0[i].signature, &all, 5, &a, &err), 0);
		assert_int_equal(tk_store_signature_detail(s, "hang", h0[i].signature, &range, 5, &b, &err), 0);
		assert_int_equal(a.count, b.count);
		assert_int_equal(a.sessions, b.sessions);
		assert_true(a.summary.q[2] == b.summary.q[2]);
		assert_string_equal(a.examples[0], b.examples[0]);
		tk_store_signature_info_free(&a);
		tk_store_signature_info_free(&b);
	}
	tk_store_hangs_free(h0, n0);
	tk_store_hangs_free(h1, n1);
	tk_store_hangs_free(h2, n2);
	tk_store_close(s);
}

/* Group commit (tk_store_put_batches): three uploads in one transaction, each with its own counts;
 * a report in two batches is new in the first only; the hang summary counts each report once. */
static void test_batches(void **state)
{
	char url[600];
	snprintf(url, sizeof url, "sqlite:%s/batches.db", tmpdir);
	tk_error err;
	tk_store *s = tk_store_open(url, &err);
	assert_non_null(s);
	tk_report r[5];
	char keys[5][16];
	for (int i = 0; i < 5; i++) {
		memset(&r[i], 0, sizeof r[i]);
		r[i].kind = "hang";
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			r[i].keys[k] = "";
		snprintf(keys[i], sizeof keys[i], "%d", i);
		r[i].rkey = keys[i];
		r[i].time = 2000 + i;
		r[i].duration = 1;
		r[i].avg_cpu = NAN;
		r[i].thread = "";
		r[i].signature = "sig";
		snprintf(r[i].id, sizeof r[i].id, "%064d", 100 + i);
	}
	assert_int_equal(tk_store_put(s, &r[0], 1, NULL, &err), 0); /* r[0] is stored already */
	/* batch 0: r0 r1; batch 1: r1 r2 r3 (r1 also in batch 0); batch 2: nothing; batch 3: r4 */
	tk_store_batch b[4] = {{.v = &r[0], .n = 2}, {.v = &r[1], .n = 3}, {.n = 0}, {.v = &r[4], .n = 1}};
	assert_int_equal(tk_store_put_batches(s, b, 4, &err), 0);
	assert_int_equal(b[0].added, 1);
	assert_int_equal(b[1].added, 2);
	assert_int_equal(b[2].added, 0);
	assert_int_equal(b[3].added, 1);
	uint64_t n;
	assert_int_equal(tk_store_count(s, &n, &err), 0);
	assert_int_equal(n, 5);
	tk_store_hang *h;
	size_t nh;
	tk_store_query all = {0};
	assert_int_equal(tk_store_top_hangs(s, &all, 10, &h, &nh, &err), 0);
	assert_int_equal(nh, 1);
	assert_int_equal(h[0].count, 5);
	tk_store_hangs_free(h, nh);
	/* again: all duplicates */
	assert_int_equal(tk_store_put_batches(s, b, 4, &err), 0);
	assert_int_equal(b[0].added + b[1].added + b[3].added, 0);
	tk_store_close(s);
}

/* The store writes its WAL in large pieces (sqlite_walbuf.c): what a commit stored is in the file
 * when the commit returns. Another connection (SQLite's own VFS, as another process's) reads every
 * row of every commit while the store stays open, and the database checks whole; big rows make
 * commits of many frames, over several of the shim's writes. With tk_store_sync_later (serve's
 * setting) no sync at COMMIT writes the pending frames out: the shim has to. */
static void test_wal_visible(void **state)
{
	char path[600], url[640];
	snprintf(path, sizeof path, "%s/walbuf.db", tmpdir);
	snprintf(url, sizeof url, "sqlite:%s", path);
	tk_error err;
	tk_store *s = tk_store_open(url, &err);
	assert_non_null(s);
	assert_int_equal(tk_store_sync_later(s, &err), 0); /* as serve: no sync in COMMIT to flush the WAL */
	enum { N = 60 };
	static tk_report r[N];
	static char keys[N][32], sigs[N][3000];
	size_t total = 0;
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < N; i++) {
			memset(&r[i], 0, sizeof r[i]);
			r[i].kind = "hang";
			for (int k = 0; k < TK_STORE_NKEYS; k++)
				r[i].keys[k] = "";
			snprintf(keys[i], sizeof keys[i], "%u.%u", (unsigned)round % 10, (unsigned)i % 100);
			r[i].rkey = keys[i];
			r[i].time = 2000 + i;
			r[i].duration = 1 + i;
			r[i].avg_cpu = NAN;
			r[i].thread = "";
			memset(sigs[i], 'a' + (i + round) % 26, sizeof sigs[i] - 1);
			snprintf(sigs[i], 32, "s%u.%u;", (unsigned)round % 10, (unsigned)i % 100);
			sigs[i][strlen(sigs[i])] = 'x';
			r[i].signature = sigs[i];
			snprintf(r[i].id, sizeof r[i].id, "%060u%04u", (unsigned)round % 10, (unsigned)i % 100);
		}
		tk_store_batch b = {.v = r, .n = N};
		assert_int_equal(tk_store_put_batches(s, &b, 1, &err), 0);
		assert_int_equal(b.added, N);
		total += N;
		sqlite3 *db;
		sqlite3_stmt *st;
		assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
		assert_int_equal(
		    sqlite3_prepare_v2(db, "SELECT count(*), sum(length(signature)) FROM reports", -1, &st, NULL),
		    SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int64(st, 0), (sqlite3_int64)total);
		assert_int_equal(sqlite3_column_int64(st, 1), (sqlite3_int64)(total * (sizeof sigs[0] - 1)));
		sqlite3_finalize(st);
		assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
	tk_store_close(s);
}

/* tk_bundle_decode's bounds on an uploaded profile: distinct stacks and decoding time (a deadline
 * already passed stops the first read), each answered as "over a limit" (1), not a bad bundle. */
static void test_bundle_limits(void **state)
{
	char path[600];
	snprintf(path, sizeof path, "%s/three.folded", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("main;a 5\nmain;b 3\nmain;c;d 2\n", f);
	fclose(f);
	void *body;
	size_t n;
	tk_error err;
	assert_int_equal(tk_bundle_make_profile(path, NULL, &body, &n, &err), 0);
	tk_report_set set = {0};
	tk_bundle_limits lim = {.max_inflated = 1 << 20};
	assert_int_equal(tk_bundle_decode(body, n, &lim, "t", NULL, &set, &err), 0);
	assert_int_equal(set.pn, 1);
	assert_true(set.pv[0].weight == 10);
	tk_report_set_free(&set);
	memset(&set, 0, sizeof set);
	lim.max_stacks = 2; /* main, main;a, main;b, main;c, main;c;d: 5 call-tree nodes */
	assert_int_equal(tk_bundle_decode(body, n, &lim, "t", NULL, &set, &err), 1);
	assert_non_null(strstr(err.msg, "more than 2 distinct stacks"));
	tk_report_set_free(&set);
	memset(&set, 0, sizeof set);
	lim.max_stacks = 0;
	lim.max_seconds = 1e-9;
	assert_int_equal(tk_bundle_decode(body, n, &lim, "t", NULL, &set, &err), 1);
	assert_non_null(strstr(err.msg, "--max-seconds"));
	tk_report_set_free(&set);
	memset(&set, 0, sizeof set);
	lim.max_seconds = 0;
	lim.max_inflated = 40; /* the bundle itself inflates past it: over a limit too */
	assert_int_equal(tk_bundle_decode(body, n, &lim, "t", NULL, &set, &err), 1);
	tk_report_set_free(&set);
	free(body);
}

/* Signatures: the first record of a session is signed through a profile (the ELF pass decides then
 * that none of the session's images is a file here); later ones straight from the record. Both must
 * give the hand-computed names: leaf first, system images skipped, image+offset, raw addresses
 * outside every image, at most 5 frames, all frames when none is an app frame. */
static void test_signatures(void **state)
{
	char dir[600];
	snprintf(dir, sizeof dir, "%s/sig", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	write_file(dir, "images.json",
	           "{\"os\":\"iOS 17.2\",\"arch\":\"arm64\",\"pid\":10,\"images\":["
	           "{\"path\":\"/var/nowhere/App.app/App\",\"base\":\"0x100000\",\"build_id\":\"ab\",\"loads\":"
	           "[{\"vaddr\":\"0x0\",\"memsz\":\"0x10000\",\"offset\":\"0x0\",\"flags\":\"r-x\"}]},"
	           "{\"path\":\"/usr/lib/system/libsys.dylib\",\"base\":\"0x200000\",\"build_id\":\"cd\",\"loads\":"
	           "[{\"vaddr\":\"0x0\",\"memsz\":\"0x10000\",\"offset\":\"0x0\",\"flags\":\"r-x\"}]}]}");
	static const char *const stacks[] = {
	    /* an empty first thread; then system leaf, app, unmapped, app */
	    "{\"tid\":1,\"name\":\"a\",\"frames\":[]},"
	    "{\"tid\":2,\"name\":\"b\",\"frames\":[\"0x200010\",\"0x100abc\",\"0x7000\",\"0x10fff0\"]}",
	    NULL, /* the same again: signed without a profile */
	    "{\"tid\":1,\"name\":\"a\",\"frames\":[\"0x200010\",\"0x200020\"]}",
	    "{\"tid\":1,\"name\":\"a\",\"frames\":[\"0x100001\",\"0x100002\",\"0x100003\",\"0x100004\",\"0x200000\","
	    "\"0x100005\",\"0x100006\"]}",
	};
	static const char *const want[] = {"App+0xabc;0x7000;App+0xfff0", "App+0xabc;0x7000;App+0xfff0",
	                                   "libsys.dylib+0x10;libsys.dylib+0x20",
	                                   "App+0x1;App+0x2;App+0x3;App+0x4;App+0x5"};
	char rec[8192] = "collection,key,value\nlaunch-time,1700000000.000000,1700000000.000000\n";
	for (int i = 0; i < 5; i++) { /* the last: a key the fast scanner leaves to jansson */
		size_t len = strlen(rec);
		snprintf(
		    rec + len, sizeof rec - len,
		    "hang,1700000%03d.000,{\"start\":1700000%03d.0,\"duration_ms\":500,\"threshold_ms\":250,\"tid\":1,"
		    "\"thread\":\"a\",\"samples\":1,\"live\":false,\"suppressed\":0,%s\"threads\":[%s]}\n",
		    i, i, i == 4 ? "\"blocked_in\":{\"syscall\":202}," : "", stacks[i % 4] ? stacks[i % 4] : stacks[0]);
	}
	write_file(dir, "records", rec);
	tk_report_set a = {0};
	tk_error err;
	assert_int_equal(tk_reports_from_path(dir, NULL, &a, &err), 0);
	assert_int_equal(a.n, 5);
	for (int i = 0; i < 5; i++)
		assert_string_equal(a.v[i].signature, want[i % 4]);
	tk_report_set_free(&a);
}

/* tk_store_ingest: a tree of sessions found and stored, a bad input said through the callback and
 * counted (skipped with keep_going, stopping the run without), an empty directory warned about, and
 * ingesting again stores nothing new. */
typedef struct said {
	int errors, warnings;
	char last[1024], warning[1024];
} said;

static void on_message(void *ctx, int error, const char *msg)
{
	said *m = ctx;
	if (error) {
		m->errors++;
		snprintf(m->last, sizeof m->last, "%s", msg);
	} else {
		m->warnings++;
		snprintf(m->warning, sizeof m->warning, "%s", msg);
	}
}

static void test_ingest_api(void **state)
{
	(void)state;
	char tree[600], s1[700], s2[700], bad[700], empty[700], url[700];
	snprintf(tree, sizeof tree, "%s/ingest-tree", tmpdir);
	snprintf(s1, sizeof s1, "%s/s1", tree);
	snprintf(s2, sizeof s2, "%s/s2", tree);
	snprintf(empty, sizeof empty, "%s/ingest-empty", tmpdir);
	snprintf(bad, sizeof bad, "%s/ingest-bad.txt", tmpdir);
	assert_int_equal(mkdir(tree, 0755), 0);
	assert_int_equal(mkdir(s1, 0755), 0);
	assert_int_equal(mkdir(s2, 0755), 0);
	assert_int_equal(mkdir(empty, 0755), 0);
	for (int k = 0; k < 2; k++) {
		char rec[2048] = "collection,key,value\n";
		for (int i = 0; i < 2 + k; i++) {
			size_t len = strlen(rec);
			snprintf(
			    rec + len, sizeof rec - len,
			    "hang,17000%d%d000.000,{\"start\":17000%d%d000.0,\"duration_ms\":500,\"threshold_ms\":250,"
			    "\"tid\":1,\"thread\":\"main\",\"samples\":1,\"live\":false,\"suppressed\":0}\n",
			    k, i, k, i);
		}
		write_file(k ? s2 : s1, "records", rec);
	}
	write_file(tmpdir, "ingest-bad.txt", "this is no input any reader takes\n");
	snprintf(url, sizeof url, "sqlite:%s/ingest.db", tmpdir);
	tk_error err;
	tk_store *s = tk_store_open(url, &err);
	assert_non_null(s);
	said m = {0};
	tk_store_ingest_options o = {.keep_going = 1, .message = on_message, .ctx = &m, .jobs = 2};
	tk_store_ingest_result r;
	const char *paths[] = {tree, bad, empty};
	assert_int_equal(tk_store_ingest(s, paths, 3, &o, &r, &err), 0);
	assert_int_equal(r.inputs, 2);
	assert_int_equal(r.reports, 5);
	assert_int_equal(r.added, 5);
	assert_int_equal(r.bad, 1);
	assert_int_equal(m.errors, 1);
	assert_int_equal(m.warnings, 1);
	assert_non_null(strstr(m.warning, "ingest-empty holds no sessions"));
	assert_non_null(strstr(m.last, "ingest-bad.txt"));
	uint64_t n = 0;
	assert_int_equal(tk_store_count(s, &n, &err), 0);
	assert_int_equal(n, 5);
	/* again, without keep_going: the bad input stops the run (the first chunk holds all three) */
	memset(&m, 0, sizeof m);
	o.keep_going = 0;
	assert_int_equal(tk_store_ingest(s, paths, 2, &o, &r, &err), 1);
	assert_int_equal(m.errors, 1);
	assert_non_null(strstr(m.last, "ingest-bad.txt"));
	assert_int_equal(r.reports, 0);
	/* the good inputs alone: nothing new */
	assert_int_equal(tk_store_ingest(s, paths, 1, &o, &r, &err), 0);
	assert_int_equal(r.reports, 5);
	assert_int_equal(r.added, 0);
	tk_store_close(s);
}

/* Report ids hash "%.17g" of the numbers: tk_store_fmt_g17 must give snprintf's bytes for every
 * double, so stores made before it dedupe against new ingests. Oracle: glibc's snprintf. */
static uint64_t g17_state = 0x9e3779b97f4a7c15ull;
static uint64_t g17_rand(void)
{
	g17_state ^= g17_state << 13;
	g17_state ^= g17_state >> 7;
	g17_state ^= g17_state << 17;
	return g17_state;
}

static void g17_check(double v)
{
	char want[64], got[64];
	int wn = snprintf(want, sizeof want, "%.17g", v);
	int gn = tk_store_fmt_g17(v, got);
	if (wn != gn || strcmp(want, got) != 0) {
		uint64_t u;
		memcpy(&u, &v, sizeof u);
		fail_msg("%s (bits %016llx): got '%s'", want, (unsigned long long)u, got);
	}
}

static void test_fmt_g17(void **state)
{
	(void)state;
	static const double fixed[] = {0.0,
	                               -0.0,
	                               1.0,
	                               -1.0,
	                               0.5,
	                               0.1,
	                               0.25,
	                               1e-4,
	                               1e-5,
	                               9.9999e-5,
	                               1e16,
	                               1e17,
	                               1e18,
	                               123.456,
	                               0.859,
	                               99.5,
	                               100.0,
	                               0.0001,
	                               1e-300,
	                               1e300,
	                               4.9e-324,
	                               2.2250738585072014e-308,
	                               1795436782.643,
	                               1700000010.0,
	                               9007199254740993.0};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		g17_check(fixed[i]);
		g17_check(-fixed[i]);
	}
	g17_check(INFINITY);
	g17_check(-INFINITY);
	g17_check(NAN);
	g17_check(-NAN);
	static const uint64_t nans[] = {0x7ff0000000000001ull, 0xfff8000000000001ull, 0x7fffffffffffffffull};
	for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
		double v;
		memcpy(&v, &nans[i], sizeof v);
		g17_check(v);
	}
	/* exact halves at the 17th digit: v = q / 2^(17 - X), q odd (glibc rounds them to even) */
	g17_check(0.500003814697265625);
	for (int x = -4; x <= 15; x++) {
		int k = 16 - x;
		double lo = pow(10, x), hi = pow(10, x + 1), step = floor(ldexp(hi - lo, k + 1) / 4000);
		for (int t = 0; t < 2000; t++) {
			double q = floor(ldexp(lo, k + 1)) + 2 * t * (step + 1) + 1;
			if (fmod(q, 2) == 0)
				q += 1;
			double v = ldexp(q, -(k + 1));
			if (v >= hi || q >= 9007199254740992.0)
				break;
			g17_check(v);
			g17_check(-v);
		}
	}
	for (int k = -6; k <= 18; k++) { /* around every power of ten, where the exponent changes */
		double p = pow(10, k), x = p;
		int j;
		for (j = 0; j < 40; j++, x = nextafter(x, 0))
			g17_check(x);
		for (x = p, j = 0; j < 40; j++, x = nextafter(x, INFINITY))
			g17_check(x);
	}
	for (int i = 0; i < 300000; i++) {
		uint64_t u = g17_rand();
		double d;
		memcpy(&d, &u, sizeof d);
		g17_check(d);                                                           /* any bits */
		g17_check(1.6e9 + (double)(g17_rand() % 400000000000ull) / 1e3);        /* start times, ms */
		g17_check((double)(g17_rand() % 100000000) / 1e3);                      /* durations */
		g17_check((double)(g17_rand() % 1000000) / 1e4);                        /* CPU percentages */
		g17_check(ldexp((double)(g17_rand() >> 11), -(int)(g17_rand() % 120))); /* dyadic, ties */
		g17_check((double)(g17_rand() >> (g17_rand() % 64)));                   /* integers */
	}
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_options),       cmocka_unit_test(test_reports_and_bundle),
	    cmocka_unit_test(test_bundle_errors), cmocka_unit_test(test_sqlite),
	    cmocka_unit_test(test_signatures),    cmocka_unit_test(test_fmt_g17),
	    cmocka_unit_test(test_batches),       cmocka_unit_test(test_bundle_limits),
	    cmocka_unit_test(test_ingest_api),    cmocka_unit_test(test_sqlite_paths),
	    cmocka_unit_test(test_wal_visible),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
