/* clickhouse://HOST:PORT/DB — a ClickHouse server over its HTTP interface (libcurl).
 *
 * One MergeTree table partitioned by day of the report time. Ids are checked against the table
 * before a batch is inserted (sent as an external table, not a literal list; the primary key starts
 * with kind, id, so the check reads index granules, not the table), and the batch goes in as one INSERT. The percentile
 * SQL is the type 7 formula of tk_store_type7 written with ClickHouse's sorted arrays, operation for operation, so the
 * doubles come out bit-identical; they travel back as shortest round-trip text. */
#include <ctype.h>
#include <curl/curl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "stats/ksum.h"
#include "store/internal.h"
#include "tracekit/stats.h"
#include "util/hidx.h"
#include "util/mem.h"

/* state_query's numbers: batches announced, not closed clean (in flight, raced or failed), the
 * active parts' hash and count, sum_sig_sessions' parts, batches raced or failed (closed with 2, or
 * open for over 30 s), the server's clock (Unix s) */
enum { ST_BATCHES, ST_OPEN, ST_PARTS_HASH, ST_PARTS, ST_SIG_SESS_PARTS, ST_BAD, ST_NOW, NSTATE };

typedef struct ch {
	int dedupe;            /* this query reads each report once (LIMIT 1 BY): see reports_sql */
	int sum;               /* this query may read the summaries (sum_ready) */
	int sum_known, sum_ok; /* sum_check's answer for the tables' state sum_token */
	unsigned one_part;     /* summaries held in one active part (ONE_*): each key in one row */
	uint64_t sum_token;
	uint64_t serial;       /* this connection among the process's (ch_changes) */
	struct rcache *rcache; /* date ranges' durations read last (range_values), RCACHE_N of them */
	unsigned rcache_next;
	/* the state (state_query's five numbers) an answer's check after it read, for the next
	 * state_ready within STATE_REUSE_NS (answers_stand) */
	unsigned long long state_v[NSTATE];
	int state_have;
	struct timespec state_at;
	/* in a view (tk_store_view_begin): the state read at its start stands for every check before
	 * and after an answer until its end, which reads it again (ch_view_end) */
	int view;
	unsigned long long view_v[NSTATE];
	/* when a wait for batches in flight last timed out (answers_stand): for STUCK_NS after it a
	 * batch in flight counts as failed */
	int stuck_have;
	struct timespec stuck_at;
	/* when a view last ended raced: views are not begun for VIEW_BACKOFF_NS after it */
	int raced_have;
	struct timespec raced_at;
	CURL *curl;
	char *base; /* http://HOST:PORT/ */
	char *db;
	char *url; /* for messages */
} ch;

typedef struct buf {
	char *p;
	size_t n, cap;
} buf;

static void bput(buf *b, const char *s, size_t n)
{
	TK_GROW(b->p, b->cap, b->n + n + 1);
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void bprintf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	TK_GROW(b->p, b->cap, b->n + (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *ctx)
{
	bput(ctx, data, size * nmemb);
	return size * nmemb;
}

/* POST body to the server; with insert_query the body is data for that INSERT. The answer goes to
 * out (may be NULL). Returns 0, or -1 with err holding the server's first line. */
static int post_ext(ch *c, const char *insert_query, const char *body, size_t n, const buf *ids, buf *out,
                    tk_error *err);
static int post(ch *c, const char *insert_query, const char *body, size_t n, buf *out, tk_error *err)
{
	return post_ext(c, insert_query, body, n, NULL, out, err);
}

/* A consumer of an answer as it arrives (post_sink): takes the bytes not consumed yet (the tail of
 * the previous chunk, then this one) and returns how many it consumed (whole rows), or -1 to stop. */
typedef long (*sink_fn)(const char *data, size_t n, void *ctx);
typedef struct sink {
	CURL *curl;
	sink_fn fn;
	void *ctx;
	buf carry; /* unconsumed bytes, reused: an answer of millions of rows is never held whole */
	buf *err;  /* an error's text (the status is not 200) */
	int failed;
} sink;

static size_t on_sink(char *data, size_t size, size_t nmemb, void *ctx)
{
	sink *s = ctx;
	long status = 0;
	curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200)
		return on_data(data, size, nmemb, s->err);
	bput(&s->carry, data, size * nmemb);
	long used = s->fn(s->carry.p, s->carry.n, s->ctx);
	if (used < 0) {
		s->failed = 1;
		return 0; /* stops the transfer */
	}
	memmove(s->carry.p, s->carry.p + used, s->carry.n - (size_t)used);
	s->carry.n -= (size_t)used;
	return size * nmemb;
}

static int post_core(ch *c, const char *insert_query, const char *body, size_t n, const buf *ids, buf *out, sink *snk,
                     tk_error *err);
static int post_ext(ch *c, const char *insert_query, const char *body, size_t n, const buf *ids, buf *out,
                    tk_error *err)
{
	return post_core(c, insert_query, body, n, ids, out, NULL, err);
}

/* Run sql with its answer going to fn as it arrives; 1 when fn stopped it or left bytes over (an
 * answer cut short), -1 with err when the request failed. */
static int post_sink(ch *c, const char *sql, sink_fn fn, void *ctx, tk_error *err)
{
	sink s = {c->curl, fn, ctx, {0}, NULL, 0};
	int rc = post_core(c, NULL, sql, strlen(sql), NULL, NULL, &s, err);
	if (!rc && (s.failed || s.carry.n))
		rc = 1;
	free(s.carry.p);
	return rc;
}

/* With ids, the request is multipart: the query in the URL and the lines of ids as the external
 * table "ids" (id String), which the server reads as data instead of parsing a literal list. */
static int post_core(ch *c, const char *insert_query, const char *body, size_t n, const buf *ids, buf *out, sink *snk,
                     tk_error *err)
{
	buf url = {0}, resp = {0};
	/* insert_distributed_sync: when DB.reports is a Distributed table over shards, an INSERT returns
	 * only once every shard has its rows, so an acknowledged upload is stored, not queued */
	bprintf(&url, "%s?database=%s&insert_distributed_sync=1", c->base, c->db ? c->db : "default");
	const char *q = ids ? body : insert_query;
	if (q) {
		char *e = curl_easy_escape(c->curl, q, 0);
		bprintf(&url, "&query=%s", e);
		curl_free(e);
	}
	curl_easy_reset(c->curl);
	curl_mime *mime = NULL;
	if (ids) {
		bprintf(&url, "&ids_structure=id%%20String");
		mime = curl_mime_init(c->curl);
		curl_mimepart *part = curl_mime_addpart(mime);
		curl_mime_name(part, "ids");
		curl_mime_filename(part, "ids.tsv");
		curl_mime_data(part, ids->p ? ids->p : "", ids->n);
		curl_easy_setopt(c->curl, CURLOPT_MIMEPOST, mime);
	} else {
		curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
	}
	curl_easy_setopt(c->curl, CURLOPT_URL, url.p);
	if (snk) {
		snk->err = &resp;
		curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_sink);
		curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, snk);
	} else {
		curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &resp);
	}
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, 10L);
	CURLcode rc = curl_easy_perform(c->curl);
	long status = 0;
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	curl_mime_free(mime);
	free(url.p);
	if (rc != CURLE_OK && !(snk && snk->failed && status == 200)) {
		free(resp.p);
		return tk_error_set(err, "%s: %s", c->url, curl_easy_strerror(rc));
	}
	if (status != 200) {
		const char *msg = resp.p ? resp.p : "";
		int len = (int)strcspn(msg, "\n");
		tk_error_set(err, "%s: HTTP %ld: %.*s", c->url, status, len > 400 ? 400 : len, msg);
		free(resp.p);
		return -1;
	}
	if (out)
		*out = resp;
	else
		free(resp.p);
	return 0;
}

static int run(ch *c, const char *sql, buf *out, tk_error *err)
{
	return post(c, NULL, sql, strlen(sql), out, err);
}

/* TabSeparated escaping, both ways. */
static void put_tsv(buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '\t': bput(b, "\\t", 2); break;
		case '\n': bput(b, "\\n", 2); break;
		case '\\': bput(b, "\\\\", 2); break;
		default: bput(b, s, 1);
		}
	}
}

/* Split one TSV line in place into fields (unescaped). Returns the count. */
static size_t split_tsv(char *line, char **field, size_t max)
{
	size_t n = 0;
	char *w = line, *start = line;
	for (char *r = line;; r++) {
		if (*r == '\t' || *r == 0) {
			int end = *r == 0;
			*w++ = 0;
			if (n < max)
				field[n++] = start;
			if (end)
				break;
			start = w;
		} else if (*r == '\\' && r[1]) {
			/* every escape ClickHouse writes (\b \f \r \n \t \0 \' \\) or reads (\a \v \xHH):
			 * a key or signature must come back as it went in */
			static const char from[] = "bfrnt0av", to[] = "\b\f\r\n\t\0\a\v";
			const char *k = strchr(from, *++r);
			if (*r && k) {
				*w++ = to[k - from];
			} else if (*r == 'x' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2])) {
				char hex[3] = {r[1], r[2], 0};
				*w++ = (char)strtol(hex, NULL, 16);
				r += 2;
			} else {
				*w++ = *r;
			}
		} else {
			*w++ = *r;
		}
	}
	return n;
}

/* ---- schema ---- */

/* Summaries. Every INSERT into reports also goes through four materialized views (ClickHouse runs
 * them on the inserted block before the INSERT returns), so they hold exactly the stored rows:
 *  - sum_values: how many reports of each (kind, app, version) have each duration, summed by
 *    SummingMergeTree: a grouped percentile, histogram or mean reads ~77 k rows instead of 1 M;
 *  - sum_sig_values: the same per signature too (top hangs' P50/P95, compare's durations);
 *  - sum_sigs: per (kind, app, version, signature) the uniqExact state of its sessions, the min
 *    state of its ids and a count (top hangs' sessions and example; first/last versions);
 *  - sum_groups: per (kind, app, version) of every report, a count and the uniqExact state of its
 *    sessions (the overview);
 *  - sum_sessions: per session (the six keys) its first ts and the hang rate's integer µs sums
 *    (foreground, hang-time and its count, hangs of at least TK_STORE_RATE_MIN_HANG), as
 *    AggregatingMergeTree states: the hang rate reads one row per session.
 * All are read with sum()/-Merge grouped again, so parts not merged yet still count exactly. They
 * answer only queries they cover (no time range or signature, keys they hold: sum_covers) and only
 * while no ingest batch is open or raced (a report stored twice is in them twice) and their totals
 * equal the reports' (SUM_CHECK; an operator's DROP PARTITION on reports, or a migration run twice at
 * once, makes them differ until `store compact` refills them); other queries read reports as before. */
#define SUM_STR1(x) #x
#define SUM_STR(x) SUM_STR1(x)
#define SUM_US "toInt64(assumeNotNull(duration) * 1000000.0 + 0.5)"
#define SUM_VALUES_SELECT                                                                                              \
	"SELECT kind, app, version, assumeNotNull(duration) AS value, count() AS n FROM reports WHERE "                \
	"isNotNull(duration) GROUP BY kind, app, version, value"
#define SUM_MIN_HANG SUM_STR(TK_STORE_RATE_MIN_HANG)
#define SUM_SESSIONS_SELECT                                                                                            \
	"SELECT app, version, build, device, os, session, minState(ts) AS t0s, "                                       \
	"sumState(if(kind = 'foreground', " SUM_US ", toInt64(0))) AS fgs, "                                           \
	"sumState(if(kind = 'hang-time', " SUM_US ", toInt64(0))) AS hts, "                                            \
	"sumState(toUInt64(kind = 'hang-time')) AS htns, "                                                             \
	"sumState(if(kind IN " TK_STORE_HANG_KINDS " AND assumeNotNull(duration) >= " SUM_MIN_HANG ", " SUM_US         \
	", toInt64(0))) AS hss, countState() AS ns FROM reports WHERE kind IN " TK_STORE_RATE_KINDS                    \
	" AND isNotNull(duration) GROUP BY app, version, build, device, os, session"
#define SUM_SIGS_SELECT                                                                                                \
	"SELECT kind, app, version, signature, uniqExactState(session) AS sess, minState(id) AS ex, "                  \
	"countState() AS ns FROM reports WHERE isNotNull(duration) GROUP BY kind, app, version, signature"
#define SUM_SIG_VALUES_SELECT                                                                                          \
	"SELECT kind, app, version, signature, assumeNotNull(duration) AS value, count() AS n FROM reports WHERE "     \
	"isNotNull(duration) GROUP BY kind, app, version, signature, value"
#define SUM_GROUPS_SELECT                                                                                              \
	"SELECT kind, app, version, countState() AS ns, uniqExactState(session) AS sess, "                             \
	"sumState(toUInt64(isNotNull(duration))) AS nd FROM reports "                                                  \
	"GROUP BY kind, app, version"
#define SUM_SCHEMA                                                                                                     \
	"CREATE TABLE IF NOT EXISTS sum_values (kind String, app String, version String, value Float64, "              \
	"n UInt64) ENGINE = SummingMergeTree(n) ORDER BY (kind, app, version, value);\n"                               \
	"CREATE TABLE IF NOT EXISTS sum_sessions (app String, version String, build String, device String, "           \
	"os String, session String, t0s AggregateFunction(min, DateTime), fgs AggregateFunction(sum, Int64), "         \
	"hts AggregateFunction(sum, Int64), htns AggregateFunction(sum, UInt64), "                                     \
	"hss AggregateFunction(sum, Int64), ns AggregateFunction(count)) ENGINE = AggregatingMergeTree "               \
	"ORDER BY (app, version, build, device, os, session);\n"                                                       \
	"CREATE TABLE IF NOT EXISTS sum_sigs (kind String, app String, version String, signature String, "             \
	"sess AggregateFunction(uniqExact, String), ex AggregateFunction(min, String), ns AggregateFunction(count)) "  \
	"ENGINE = AggregatingMergeTree ORDER BY (kind, app, version, signature);\n"                                    \
	"CREATE TABLE IF NOT EXISTS sum_sig_values (kind String, app String, version String, signature String, "       \
	"value Float64, n UInt64) ENGINE = SummingMergeTree(n) ORDER BY (kind, app, version, signature, value);\n"     \
	"CREATE TABLE IF NOT EXISTS sum_groups (kind String, app String, version String, ns "                          \
	"AggregateFunction(count), "                                                                                   \
	"sess AggregateFunction(uniqExact, String), nd AggregateFunction(sum, UInt64)) "                               \
	"ENGINE = AggregatingMergeTree ORDER BY (kind, app, version);\n"                                               \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_values_mv TO sum_values AS " SUM_VALUES_SELECT ";\n"               \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_groups_mv TO sum_groups AS " SUM_GROUPS_SELECT ";\n"               \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_sigs_mv TO sum_sigs AS " SUM_SIGS_SELECT ";\n"                     \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_sig_values_mv TO sum_sig_values AS " SUM_SIG_VALUES_SELECT ";\n"   \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_sessions_mv TO sum_sessions AS " SUM_SESSIONS_SELECT
#define SUM_FILL                                                                                                       \
	"TRUNCATE TABLE sum_values;\nTRUNCATE TABLE sum_sessions;\nTRUNCATE TABLE sum_sigs;\n"                         \
	"TRUNCATE TABLE sum_sig_values;\nTRUNCATE TABLE sum_groups;\n"                                                 \
	"INSERT INTO sum_groups " SUM_GROUPS_SELECT ";\n"                                                              \
	"INSERT INTO sum_values " SUM_VALUES_SELECT ";\n"                                                              \
	"INSERT INTO sum_sigs " SUM_SIGS_SELECT ";\n"                                                                  \
	"INSERT INTO sum_sig_values " SUM_SIG_VALUES_SELECT ";\n"                                                      \
	"INSERT INTO sum_sessions " SUM_SESSIONS_SELECT
/* Schema 6 (issue 19: every dashboard page ≤ 300 ms on 1 M reports) adds three more:
 *  - sum_day_values: sum_values per UTC day too (trends by day read ~160 k rows for 1 M hangs);
 *  - sum_sig_sessions: one row per (kind, signature, session) in each part, so while the table is
 *    one part a signature's sessions are a count of rows (state_ready): uniqExactMerge of sum_sigs'
 *    session sets cost ~0.4 s of server CPU for 1 M hangs in ~480 k (version, signature, session)
 *    entries;
 *  - sum_vsig_sessions: the same per app and version, for top hangs filtered by them (uniqExact
 *    of one version's rows: a session may be in two apps).
 * Counts (n) are the reports with a duration, so their totals are sum_values'. */
#define SUM_DAY_VALUES_SELECT                                                                                          \
	"SELECT kind, app, version, toDate(ts, 'UTC') AS day, assumeNotNull(duration) AS value, count() AS n FROM "    \
	"reports WHERE isNotNull(duration) GROUP BY kind, app, version, day, value"
#define SUM_SIG_SESSIONS_SELECT                                                                                        \
	"SELECT kind, signature, session, count() AS n FROM reports WHERE isNotNull(duration) GROUP BY kind, "         \
	"signature, session"
#define SUM_VSIG_SESSIONS_SELECT                                                                                       \
	"SELECT kind, app, version, signature, session, count() AS n FROM reports WHERE isNotNull(duration) GROUP BY " \
	"kind, app, version, signature, session"
/* sum_sigs' session sets are read by nothing since (sum_sig_sessions answers), and building them
 * was the costliest of the views at ingest: its view now stores the set of one empty string
 * (the column's type kept, so schema 5's refill still fits the table) */
#define SUM6_SIGS_SELECT                                                                                               \
	"SELECT kind, app, version, signature, uniqExactState('') AS sess, minState(id) AS ex, "                       \
	"countState() AS ns FROM reports WHERE isNotNull(duration) GROUP BY kind, app, version, signature"
#define SUM6_SCHEMA                                                                                                    \
	"CREATE TABLE IF NOT EXISTS sum_day_values (kind String, app String, version String, day Date, value "         \
	"Float64, "                                                                                                    \
	"n UInt64) ENGINE = SummingMergeTree(n) ORDER BY (kind, app, version, day, value);\n"                          \
	"CREATE TABLE IF NOT EXISTS sum_sig_sessions (kind String, signature String, session String, n UInt64) "       \
	"ENGINE = SummingMergeTree(n) ORDER BY (kind, signature, session);\n"                                          \
	"CREATE TABLE IF NOT EXISTS sum_vsig_sessions (kind String, app String, version String, signature String, "    \
	"session String, n UInt64) ENGINE = SummingMergeTree(n) ORDER BY (kind, app, version, signature, session);\n"  \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_day_values_mv TO sum_day_values AS " SUM_DAY_VALUES_SELECT ";\n"   \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_sig_sessions_mv TO sum_sig_sessions AS " SUM_SIG_SESSIONS_SELECT   \
	";\n"                                                                                                          \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_vsig_sessions_mv TO sum_vsig_sessions "                            \
	"AS " SUM_VSIG_SESSIONS_SELECT ";\nDROP TABLE IF EXISTS sum_sigs_mv;\n"                                        \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_sigs_mv TO sum_sigs AS " SUM6_SIGS_SELECT
#define SUM6_FILL                                                                                                      \
	"TRUNCATE TABLE sum_day_values;\nTRUNCATE TABLE sum_sig_sessions;\nTRUNCATE TABLE sum_vsig_sessions;\n"        \
	"TRUNCATE TABLE sum_sigs;\nINSERT INTO sum_sigs " SUM6_SIGS_SELECT ";\n"                                       \
	"INSERT INTO sum_day_values " SUM_DAY_VALUES_SELECT ";\n"                                                      \
	"INSERT INTO sum_sig_sessions " SUM_SIG_SESSIONS_SELECT ";\n"                                                  \
	"INSERT INTO sum_vsig_sessions " SUM_VSIG_SESSIONS_SELECT
/* Schema 7 (issue 19: a signature's page, flame graph and stats.svg, and trends by hour, each
 * ≤ 300 ms on 1 M reports) adds three more, keyed for those pages:
 *  - sum_sig_durations: per (signature, kind, app, version) its durations as a groupArray state and
 *    their count: a signature's durations and its versions' counts are a few rows found by the key's
 *    first column instead of its ~200 k reports;
 *  - sum_sig_keys: per (signature, what, key, kind, app, version) how many reports, for what 0 its
 *    devices, 2 its stacks' hashes (the report's link in report_stacks: reports carry it in their new
 *    column stack, '' without stacks); its sessions are sum_sig_sessions' and sum_vsig_sessions';
 *  - sum_sig_ids: each report's id under its signature (a plain MergeTree: no grouping at ingest),
 *    a page's examples the least, read from the key's range below a bound (ids and sessions in
 *    sum_sig_keys, grouped at every INSERT, doubled the server's CPU for an ingest);
 *  - sum_hour_durations: per (kind, app, version, hour) the same, hour the UTC hour's number since
 *    the epoch (intDiv(ts, 3600)): a trend by hour reads ~2 000 states.
 * The states are read as they are stored (RowBinary: a groupArray state of Float64 is its length,
 * LEB128, and the values' bytes; the engine keeps that format readable, it is what its parts hold),
 * not merged in the engine: on 18.16 groupArrayMerge (or finalizeAggregation) of 1 M durations cost
 * ~100 ms of server CPU, reading the states ~25 ms, sumMap ~1.2 s. The client concatenates a group's
 * rows (parts not merged yet), sorts and summarises them. ns counts them for SUM_CHECK.
 * The refill takes the stacks' hashes from report_stacks (rows stored before this schema have an
 * empty stack column). */
#define SUM_DUR_STATES "countState() AS ns, groupArrayState(assumeNotNull(duration)) AS v"
#define SUM_DUR_COLS "ns AggregateFunction(count), v AggregateFunction(groupArray, Float64)"
#define SUM_HOUR_DUR_SELECT                                                                                            \
	"SELECT kind, app, version, intDiv(toUInt32(ts), 3600) AS hour, " SUM_DUR_STATES " FROM reports WHERE "        \
	"isNotNull(duration) GROUP BY kind, app, version, hour"
#define SUM_SIG_DUR_SELECT                                                                                             \
	"SELECT signature, kind, app, version, " SUM_DUR_STATES " FROM reports WHERE isNotNull(duration) GROUP BY "    \
	"signature, kind, app, version"
#define SUM_SIG_KEYS_SELECT(src)                                                                                       \
	"SELECT signature, tupleElement(k, 1) AS what, tupleElement(k, 2) AS key, kind, app, version, count() AS n "   \
	"FROM " src " ARRAY JOIN [(toUInt8(0), device), (toUInt8(2), stack)] AS k WHERE isNotNull(duration) GROUP BY " \
	"signature, what, key, kind, app, version"
#define SUM_SIG_KEYS_REPORTS SUM_SIG_KEYS_SELECT("reports")
#define SUM_SIG_IDS_SELECT "SELECT signature, id, kind, app, version FROM reports WHERE isNotNull(duration)"
#define SUM7_SCHEMA                                                                                                    \
	"ALTER TABLE reports ADD COLUMN stack String;\n"                                                               \
	"CREATE TABLE IF NOT EXISTS sum_sig_durations (signature String, kind String, app String, version "            \
	"String, " SUM_DUR_COLS ") ENGINE = AggregatingMergeTree ORDER BY (signature, kind, app, version);\n"          \
	"CREATE TABLE IF NOT EXISTS sum_sig_keys (signature String, what UInt8, key String, kind String, app String, " \
	"version String, n UInt64) ENGINE = SummingMergeTree(n) ORDER BY (signature, what, key, kind, app, "           \
	"version);\n"                                                                                                  \
	"CREATE TABLE IF NOT EXISTS sum_sig_ids (signature String, id String, kind String, app String, version "       \
	"String) ENGINE = MergeTree ORDER BY (signature, id);\n"                                                       \
	"CREATE TABLE IF NOT EXISTS sum_hour_durations (kind String, app String, version String, hour "                \
	"UInt32, " SUM_DUR_COLS ") ENGINE = AggregatingMergeTree ORDER BY (kind, app, version, hour);\n"               \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_sig_durations_mv "                                                 \
	"TO sum_sig_durations AS " SUM_SIG_DUR_SELECT ";\n"                                                            \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_sig_keys_mv "                                                      \
	"TO sum_sig_keys AS " SUM_SIG_KEYS_REPORTS ";\n"                                                               \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_sig_ids_mv "                                                       \
	"TO sum_sig_ids AS " SUM_SIG_IDS_SELECT ";\n"                                                                  \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_hour_durations_mv "                                                \
	"TO sum_hour_durations AS " SUM_HOUR_DUR_SELECT
#define SUM7_FILL                                                                                                      \
	"TRUNCATE TABLE sum_sig_durations;\nTRUNCATE TABLE sum_sig_keys;\nTRUNCATE TABLE sum_hour_durations;\n"        \
	"TRUNCATE TABLE sum_sig_ids;\nINSERT INTO sum_sig_ids " SUM_SIG_IDS_SELECT ";\n"                               \
	"INSERT INTO sum_sig_durations " SUM_SIG_DUR_SELECT ";\n"                                                      \
	"INSERT INTO sum_hour_durations " SUM_HOUR_DUR_SELECT ";\n"                                                    \
	"INSERT INTO sum_sig_keys " SUM_SIG_KEYS_SELECT(                                                               \
	    "(SELECT kind, id, app, version, device, session, signature, duration, stack FROM (SELECT kind, id, app, " \
	    "version, device, session, signature, duration FROM reports WHERE isNotNull(duration)) ANY LEFT JOIN "     \
	    "(SELECT id, any(stack) AS stack FROM report_stacks GROUP BY id) USING (id))")
/* Schema 8 (issue 19: the comparison of two date ranges ≤ 300 ms on 1 M reports) adds two more:
 *  - sum_sig_hours: per (kind, signature, UTC hour, app, version) of reports with a duration their
 *    count, the min state of their ids and their durations as a groupArray state (as
 *    sum_sig_durations');
 *  - sum_sig_hour_sess: per (kind, signature, hour, session, app, version) how many, the session as
 *    sipHash128(session), the 16 bytes uniqExact(session) counts distinct values of: a range's
 *    distinct sessions are counted by the client over its rows (uniqExactMerge of per-hour session
 *    sets, or only reading them, cost ~0.2-0.5 s of server CPU for a week of 1 M hangs).
 * A date range (since, until) is no filter the tables above hold; its whole hours are read from
 * these (sum_sig_hours ordered by kind and hour first: a range's rows are a range of the key, the
 * rest is not read; sum_sig_hour_sess by signature first, always asked for a few), its whole days'
 * durations from sum_day_values, only the partial hours at its ends from reports (range_split).
 * hour is intDiv(toUInt32(ts), 3600) as in sum_hour_durations. */
#define SUM_SIG_HOURS_SELECT                                                                                           \
	"SELECT kind, signature, intDiv(toUInt32(ts), 3600) AS hour, app, version, countState() AS ns, "               \
	"minState(id) AS ex, groupArrayState(assumeNotNull(duration)) AS v FROM reports WHERE isNotNull(duration) "    \
	"GROUP BY kind, signature, hour, app, version"
#define SUM_SIG_HOUR_SESS_SELECT                                                                                       \
	"SELECT kind, signature, intDiv(toUInt32(ts), 3600) AS hour, sipHash128(session) AS sh, app, version, "        \
	"count() AS n FROM reports WHERE isNotNull(duration) GROUP BY kind, signature, hour, sh, app, version"
#define SUM8_SCHEMA                                                                                                    \
	"CREATE TABLE IF NOT EXISTS sum_sig_hours (kind String, signature String, hour UInt32, app String, version "   \
	"String, ns AggregateFunction(count), ex AggregateFunction(min, String), v AggregateFunction(groupArray, "     \
	"Float64)) ENGINE = AggregatingMergeTree ORDER BY (kind, hour, signature, app, version);\n"                    \
	"CREATE TABLE IF NOT EXISTS sum_sig_hour_sess (kind String, signature String, hour UInt32, "                   \
	"sh FixedString(16), app String, version String, n UInt64) ENGINE = SummingMergeTree(n) "                      \
	"ORDER BY (kind, signature, hour, sh, app, version);\n"                                                        \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_sig_hours_mv TO sum_sig_hours AS " SUM_SIG_HOURS_SELECT ";\n"      \
	"CREATE MATERIALIZED VIEW IF NOT EXISTS sum_sig_hour_sess_mv TO sum_sig_hour_sess "                            \
	"AS " SUM_SIG_HOUR_SESS_SELECT
#define SUM8_FILL                                                                                                      \
	"TRUNCATE TABLE sum_sig_hours;\nTRUNCATE TABLE sum_sig_hour_sess;\n"                                           \
	"INSERT INTO sum_sig_hours " SUM_SIG_HOURS_SELECT ";\nINSERT INTO sum_sig_hour_sess " SUM_SIG_HOUR_SESS_SELECT
/* 1 when the summaries hold exactly the stored reports (each counted once): sum_groups counts the
 * rows the active parts of reports hold (metadata, nothing read) and those with a duration, which the
 * others count; all small tables. */
#define SUM_CHECK                                                                                                      \
	"SELECT (SELECT sum(rows) FROM system.parts WHERE active AND database = currentDatabase() AND "                \
	"table = 'reports') = (SELECT countMerge(ns) FROM sum_groups) AND "                                            \
	"(SELECT sum(n) FROM sum_values) = (SELECT sumMerge(nd) FROM sum_groups) AND "                                 \
	"(SELECT sum(n) FROM sum_sig_values) = (SELECT sum(n) FROM sum_values) AND "                                   \
	"(SELECT countMerge(ns) FROM sum_sigs) = (SELECT sum(n) FROM sum_values) AND "                                 \
	"(SELECT countMerge(ns) FROM sum_sessions) = (SELECT sumMerge(nd) FROM sum_groups WHERE kind "                 \
	"IN " TK_STORE_RATE_KINDS ") AND "                                                                             \
	"(SELECT sum(n) FROM sum_day_values) = (SELECT sum(n) FROM sum_values) AND "                                   \
	"(SELECT sum(n) FROM sum_sig_sessions) = (SELECT sum(n) FROM sum_values) AND "                                 \
	"(SELECT sum(n) FROM sum_vsig_sessions) = (SELECT sum(n) FROM sum_values) AND "                                \
	"(SELECT sum(n) FROM sum_sig_keys WHERE what = 0) = (SELECT sum(n) FROM sum_values) AND "                      \
	"(SELECT count() FROM sum_sig_ids) = (SELECT sum(n) FROM sum_values) AND "                                     \
	"(SELECT countMerge(ns) FROM sum_sig_durations) = (SELECT sum(n) FROM sum_values) AND "                        \
	"(SELECT countMerge(ns) FROM sum_hour_durations) = (SELECT sum(n) FROM sum_values) AND "                       \
	"(SELECT countMerge(ns) FROM sum_sig_hours) = (SELECT sum(n) FROM sum_values) AND "                            \
	"(SELECT sum(n) FROM sum_sig_hour_sess) = (SELECT sum(n) FROM sum_values)"

static const char *const migrations[] = {
    /* 0 → 1. Partitioned by day (drop old days with ALTER TABLE … DROP PARTITION); ordered by kind
     * then id: every fleet query filters on kind, and the idempotence check looks ids up. */
    "CREATE TABLE IF NOT EXISTS reports ("
    " id String, kind String, app String, version String, build String, device String, os String,"
    " session String, time Float64, ts DateTime, duration Nullable(Float64), avg_cpu Nullable(Float64),"
    " samples UInt64, thread String, signature String, rkey String, ingested DateTime)"
    " ENGINE = MergeTree PARTITION BY toDate(ts) ORDER BY (kind, id)",
    /* 1 → 2: profile reports. Statements of one migration are split at ";\n". Functions are ordered
     * by name: fn.self:NAME reads one name's rows. */
    "CREATE TABLE IF NOT EXISTS profiles ("
    " id String, app String, version String, build String, device String, os String, session String,"
    " time Float64, ts DateTime, unit String, weight Float64, threads UInt64, source String, ingested DateTime)"
    " ENGINE = MergeTree PARTITION BY toDate(ts) ORDER BY id;\n"
    "CREATE TABLE IF NOT EXISTS functions ("
    " id String, ts DateTime, ord UInt32, name String, bin String, fself Float64, ftotal Float64)"
    " ENGINE = MergeTree PARTITION BY toDate(ts) ORDER BY (name, id)",
    /* 2 → 3: each batch of reports is announced (state 0) before its INSERT and closed after it with
     * 1 (its ids are each stored once) or 2 (a racing ingester stored some of them too). Queries
     * read every report once only while some batch is not closed with 1, so the common case pays
     * nothing for it. A store from schema 2 is checked once here. */
    "CREATE TABLE IF NOT EXISTS tracekit_ingests (token String, state UInt8, at DateTime)"
    " ENGINE = MergeTree ORDER BY token;\n"
    "INSERT INTO tracekit_ingests SELECT 'schema-2', if(count() = uniqExact(kind, id), 1, 2), now() FROM reports",
    /* 3 → 4: each report's stacks (folded text), once per distinct text under the hex of the first
     * 16 bytes of its SHA-256 (copies from racing ingesters are identical: read with any()), and
     * each report's link to its text, inserted before the report itself. */
    "CREATE TABLE IF NOT EXISTS stacks (hash String, folded String) ENGINE = ReplacingMergeTree() ORDER BY hash;\n"
    "CREATE TABLE IF NOT EXISTS report_stacks (id String, ts DateTime, stack String)"
    " ENGINE = MergeTree PARTITION BY toDate(ts) ORDER BY id",
    /* 4 → 5: summaries ClickHouse keeps itself at every INSERT into reports (materialized views into
     * summing tables; see "Summaries" above), filled here from the reports already stored (emptied
     * first: a migration run again fills them once). */
    SUM_SCHEMA ";\n" SUM_FILL,
    /* 5 → 6: per-day value counts and per-signature session rows (see "Schema 6" above), filled
     * from the stored reports */
    SUM6_SCHEMA ";\n" SUM6_FILL,
    /* 6 → 7: per-signature durations and keys, per-hour durations (see "Schema 7" above), filled
     * from the stored reports (the ALTER is skipped where reports has the column: a run again) */
    SUM7_SCHEMA ";\n" SUM7_FILL,
    /* 7 → 8: per-signature states by hour for date ranges (see "Schema 8" above), filled from the
     * stored reports */
    SUM8_SCHEMA ";\n" SUM8_FILL,
};

/* Whether sql is "ALTER TABLE T ADD COLUMN C …" and T has C already (18.16 has no ADD COLUMN IF NOT
 * EXISTS; a migration runs again after a failure, or in two processes at once): then it is skipped.
 * Any failure to tell says no (the ALTER runs and reports its own error). */
static int column_added(ch *c, const char *sql)
{
	char table[64], col[64];
	if (sscanf(sql, "ALTER TABLE %63[A-Za-z0-9_] ADD COLUMN %63[A-Za-z0-9_]", table, col) != 2)
		return 0;
	char q[256];
	snprintf(
	    q, sizeof q,
	    "SELECT count() FROM system.columns WHERE database = currentDatabase() AND table = '%s' AND name = '%s'",
	    table, col);
	buf res = {0};
	tk_error e = {0};
	int has = run(c, q, &res, &e) == 0 && res.p && res.p[0] == '1';
	free(res.p);
	return has;
}

/* Run the statements of one migration (the HTTP interface takes one per request). */
static int run_many(ch *c, const char *sqls, tk_error *err)
{
	for (const char *p = sqls; *p;) {
		const char *end = strstr(p, ";\n");
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *one = tk_xstrndup(p, len);
		int rc = column_added(c, one) ? 0 : run(c, one, NULL, err);
		free(one);
		if (rc)
			return -1;
		p += len + (end ? 2 : 0);
	}
	return 0;
}

static void rcache_free(ch *c);
static void ch_close(void *h)
{
	ch *c = h;
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c->base);
	free(c->db);
	free(c->url);
	rcache_free(c);
	free(c);
}

static int migrate(ch *c, tk_error *err)
{
	if (run(c, "CREATE TABLE IF NOT EXISTS tracekit_schema (version UInt32) ENGINE = TinyLog", NULL, err))
		return -1;
	buf out = {0};
	if (run(c, "SELECT max(version) FROM tracekit_schema", &out, err))
		return -1;
	int have = out.p ? atoi(out.p) : 0;
	free(out.p);
	int want = (int)(sizeof migrations / sizeof migrations[0]);
	if (have > want)
		return tk_error_set(err, "%s: schema version %d is newer than this tracekit's (%d)", c->url, have,
		                    want);
	for (int v = have; v < want; v++) {
		char sql[128];
		snprintf(sql, sizeof sql, "INSERT INTO tracekit_schema VALUES (%d)", v + 1);
		if (run_many(c, migrations[v], err) || run(c, sql, NULL, err))
			return -1;
	}
	return 0;
}

static void *ch_open(const char *rest, tk_error *err)
{
	if (tk_store_curl_init() < 0)
		return tk_error_set(err, "clickhouse://%s: cannot start libcurl", rest), NULL;
	ch *c = tk_xcalloc(1, sizeof *c);
	static _Atomic uint64_t serials;
	c->serial = ++serials;
	size_t hl = strcspn(rest, "/");
	const char *db = rest[hl] ? rest + hl + 1 : "";
	buf b = {0};
	bprintf(&b, "clickhouse://%s", rest);
	c->url = b.p;
	/* the host part goes into an http:// URL: a ? or # there would pass settings to the server or
	 * cut tracekit's own parameters, an @ would be taken as a user */
	size_t ok = strspn(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]");
	if (ok < hl) {
		tk_error_set(err,
		             "%s: '%c' is not allowed in the host part '%.*s' (expected clickhouse://HOST:PORT/DB)",
		             c->url, rest[ok], (int)hl, rest);
		ch_close(c);
		return NULL;
	}
	if (!hl || !*db ||
	    strspn(db, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(db)) {
		tk_error_set(err, "%s: expected clickhouse://HOST:PORT/DB with DB made of letters, digits and _",
		             c->url);
		ch_close(c);
		return NULL;
	}
	buf base = {0};
	bprintf(&base, "http://%.*s/", (int)hl, rest);
	c->base = base.p;
	c->curl = curl_easy_init();
	if (!c->curl) {
		tk_error_set(err, "%s: cannot start libcurl", c->url);
		ch_close(c);
		return NULL;
	}
	buf sql = {0};
	bprintf(&sql, "CREATE DATABASE IF NOT EXISTS %s", db);
	int rc = run(c, sql.p, NULL, err);
	free(sql.p);
	c->db = tk_xstrdup(db);
	/* tracekit_schema is a TinyLog table, which takes no concurrent writer: two ingesters creating
	 * the same new store at once can see a transient error (measured: "File not found
	 * …/tracekit_schema/tmp_sizes.json"). Every migration step is idempotent, so try again. */
	for (int attempt = 0; !rc && attempt < 5; attempt++) {
		if (!(rc = migrate(c, err)))
			break;
		if (attempt < 4) {
			rc = 0;
			nanosleep(&(struct timespec){0, 200000000L * (attempt + 1)}, NULL);
		}
	}
	if (rc) {
		ch_close(c);
		return NULL;
	}
	return c;
}

/* ---- put ---- */

static unsigned long long day_ts(double t)
{
	t = isfinite(t) && t > 0 ? t : 0;
	return (unsigned long long)floor(t < 4294967295.0 ? t : 4294967295.0);
}

static int cmp_row_id(const void *a, const void *b, void *id_of)
{
	const char *(*id)(const void *) = (const char *(*)(const void *))id_of;
	return strcmp(id(*(const void *const *)a), id(*(const void *const *)b));
}

/* The rows of a batch to insert into table (reports or profiles): ord holds pointers to the
 * batch's rows; they are sorted by id, repeated ids dropped, and the ids the table already has
 * dropped too, leaving the new rows in ord. Returns how many, or -1 with err. */
static long new_rows(ch *c, const char *table, const void **ord, size_t n, const char *(*id_of)(const void *),
                     tk_error *err)
{
	qsort_r(ord, n, sizeof *ord, cmp_row_id, (void *)id_of);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!m || strcmp(id_of(ord[m - 1]), id_of(ord[i])) != 0)
			ord[m++] = ord[i];
	buf ids = {0};
	for (size_t i = 0; i < m; i++)
		bprintf(&ids, "%s\n", id_of(ord[i])); /* ids are hex: nothing to escape */
	buf have = {0}, check = {0};
	bprintf(&check, "SELECT id FROM %s WHERE id IN ids ORDER BY id FORMAT TabSeparated", table);
	int rc = post_ext(c, NULL, check.p, check.n, &ids, &have, err);
	free(ids.p);
	free(check.p);
	if (rc)
		return -1;
	/* both lists are sorted: a merge finds the new ones */
	const char *h_at = have.p ? have.p : "";
	size_t add = 0;
	for (size_t i = 0; i < m; i++) {
		int cmp = 1;
		while (*h_at && (cmp = strncmp(h_at, id_of(ord[i]), 64)) < 0)
			h_at += strcspn(h_at, "\n") + 1;
		if (!*h_at || cmp != 0)
			ord[add++] = ord[i];
	}
	free(have.p);
	return (long)add;
}

static const char *report_id(const void *r)
{
	return ((const tk_report *)r)->id;
}

static const char *profile_id(const void *r)
{
	return ((const tk_profile_report *)r)->id;
}

/* RowBinary: numbers as their little-endian bytes, strings as a LEB128 length and the bytes. No
 * number formatting (printf's %.17g of three doubles a report was 17 % of the client's instructions
 * with TabSeparated) and no escaping; the server reads it with less work too. */
static void rb_u(buf *b, uint64_t v, int bytes)
{
	char le[8];
	for (int i = 0; i < bytes; i++)
		le[i] = (char)(v >> (8 * i));
	bput(b, le, (size_t)bytes);
}

static void rb_f64(buf *b, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	rb_u(b, bits, 8);
}

static void rb_str(buf *b, const char *s)
{
	size_t n = strlen(s);
	char len[10];
	int k = 0;
	for (size_t v = n;; v >>= 7) {
		len[k++] = (char)((v & 127) | (v >= 128 ? 128 : 0));
		if (v < 128)
			break;
	}
	bput(b, len, (size_t)k);
	bput(b, s, n);
}

/* Nullable(Float64): a null flag byte, then the value when there is one (non-finite is stored as
 * NULL, as the TabSeparated path wrote \N). */
static void rb_num(buf *b, double v)
{
	if (isfinite(v)) {
		bput(b, "\0", 1);
		rb_f64(b, v);
	} else {
		bput(b, "\1", 1);
	}
}

static int cmp_hash_idx(const void *a, const void *b, void *hash)
{
	const char(*h)[33] = hash;
	return strcmp(h[*(const size_t *)a], h[*(const size_t *)b]);
}

/* The new reports' stacks: the texts the table lacks, and every report's link to its text (hash[i]
 * its text's, "" without stacks). */
static int stacks_put(ch *c, const tk_report **ord, size_t n, char (*hash)[33], tk_error *err)
{
	buf hashes = {0}, links = {0}, texts = {0}, have = {0};
	for (size_t i = 0; i < n; i++) {
		if (!hash[i][0])
			continue;
		bprintf(&hashes, "%s\n", hash[i]);
		rb_str(&links, ord[i]->id);
		rb_u(&links, day_ts(ord[i]->time), 4);
		rb_str(&links, hash[i]);
	}
	int rc = 0;
	if (links.n)
		rc = post_ext(c, NULL,
		              "SELECT DISTINCT hash FROM stacks WHERE hash IN ids ORDER BY hash FORMAT TabSeparated", 0,
		              &hashes, &have, err);
	if (!rc && links.n) {
		/* each text once: the hashes sorted, and merged with the sorted ones the table has */
		size_t *idx = tk_xmalloc(n * sizeof *idx), m = 0;
		for (size_t i = 0; i < n; i++)
			if (hash[i][0])
				idx[m++] = i;
		qsort_r(idx, m, sizeof *idx, cmp_hash_idx, hash);
		const char *h_at = have.p ? have.p : "";
		for (size_t k = 0; k < m; k++) {
			const char *x = hash[idx[k]];
			if (k && strcmp(hash[idx[k - 1]], x) == 0)
				continue;
			int cmp = 1;
			while (*h_at && (cmp = strncmp(h_at, x, 32)) < 0)
				h_at += strcspn(h_at, "\n") + 1;
			if (*h_at && cmp == 0)
				continue;
			rb_str(&texts, x);
			rb_str(&texts, ord[idx[k]]->stacks);
		}
		free(idx);
		if (texts.n)
			rc = post(c, "INSERT INTO stacks (hash, folded) FORMAT RowBinary", texts.p, texts.n, NULL, err);
		if (!rc)
			rc = post(c, "INSERT INTO report_stacks (id, ts, stack) FORMAT RowBinary", links.p, links.n,
			          NULL, err);
	}
	free(hashes.p);
	free(links.p);
	free(texts.p);
	free(have.p);
	return rc;
}

static int ch_put(void *h, const tk_report *v, size_t n, size_t *added, tk_error *err)
{
	ch *c = h;
	c->state_have = 0; /* a write of ours: the state is read again */
	const tk_report **ord = tk_xmalloc(n * sizeof *ord);
	for (size_t i = 0; i < n; i++)
		ord[i] = &v[i];
	long add = new_rows(c, "reports", (const void **)ord, n, report_id, err);
	if (add < 0) {
		free(ord);
		return -1;
	}
	buf data = {0};
	uint64_t now = (uint64_t)time(NULL);
	/* each report's stacks' hash: its link in report_stacks, and its row's stack (schema 7) */
	char(*hash)[33] = tk_xcalloc(add ? (size_t)add : 1, sizeof *hash);
	for (long i = 0; i < add; i++)
		if (ord[i]->stacks && *ord[i]->stacks)
			tk_store_stacks_hash(ord[i]->stacks, hash[i]);
	for (long i = 0; i < add; i++) {
		const tk_report *r = ord[i];
		rb_str(&data, r->id);
		rb_str(&data, r->kind);
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			rb_str(&data, r->keys[k]);
		rb_f64(&data, r->time);
		rb_u(&data, day_ts(r->time), 4);
		rb_num(&data, r->duration);
		rb_num(&data, r->avg_cpu);
		rb_u(&data, r->samples, 8);
		rb_str(&data, r->thread);
		rb_str(&data, r->signature);
		rb_str(&data, r->rkey);
		rb_u(&data, now, 4);
		rb_str(&data, hash[i]);
	}
	/* the batch's new ids, to ask afterwards whether another ingester stored any of them too */
	buf ids = {0};
	for (long i = 0; i < add; i++)
		bprintf(&ids, "%s\n", ord[i]->id);
	int rc = add ? stacks_put(c, ord, (size_t)add, hash, err) : 0; /* before the reports that name them */
	free(hash);
	free(ord);
	if (add && !rc) {
		unsigned char rnd[16];
		char token[33], sql[128];
		if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
			for (size_t i = 0; i < sizeof rnd; i++)
				rnd[i] = (unsigned char)(rand() ^ (int)time(NULL) ^ (int)(uintptr_t)&rnd);
		for (int i = 0; i < 16; i++)
			snprintf(token + 2 * i, 3, "%02x", rnd[i]);
		snprintf(sql, sizeof sql, "INSERT INTO tracekit_ingests VALUES ('%s', 0, now())", token);
		rc = run(c, sql, NULL, err);
		if (!rc)
			rc = post(
			    c,
			    "INSERT INTO reports (id, kind, app, version, build, device, os, session, time, ts, "
			    "duration, avg_cpu, samples, thread, signature, rkey, ingested, stack) FORMAT RowBinary",
			    data.p, data.n, NULL, err);
		buf dup = {0};
		if (!rc)
			rc = post_ext(c, NULL,
			              "SELECT count() FROM (SELECT id FROM reports WHERE id IN ids GROUP BY kind, id "
			              "HAVING count() > 1) FORMAT TabSeparated",
			              0, &ids, &dup, err);
		if (!rc) {
			snprintf(sql, sizeof sql, "INSERT INTO tracekit_ingests VALUES ('%s', %d, now())", token,
			         dup.p && strtoull(dup.p, NULL, 10) > 0 ? 2 : 1);
			rc = run(c, sql, NULL, err);
		}
		free(dup.p);
	}
	free(ids.p);
	free(data.p);
	if (rc)
		return -1;
	*added = add;
	return 0;
}

/* Functions go in before their profile rows: a profile is visible only once its functions are
 * stored, and a retry after a failure between the two inserts only repeats function rows, which
 * the queries read with argMin (identical duplicates give the same value). */
static int ch_put_profiles(void *h, const tk_profile_report *v, size_t n, size_t *added, tk_error *err)
{
	ch *c = h;
	c->state_have = 0; /* a write of ours: the state is read again */
	const tk_profile_report **ord = tk_xmalloc(n * sizeof *ord);
	for (size_t i = 0; i < n; i++)
		ord[i] = &v[i];
	long add = new_rows(c, "profiles", (const void **)ord, n, profile_id, err);
	if (add < 0) {
		free(ord);
		return -1;
	}
	buf prof = {0}, fns = {0};
	time_t now = time(NULL);
	for (long i = 0; i < add; i++) {
		const tk_profile_report *r = ord[i];
		unsigned long long ts = day_ts(r->time);
		bprintf(&prof, "%s", r->id);
		for (int k = 0; k < TK_STORE_NKEYS; k++) {
			bput(&prof, "\t", 1);
			put_tsv(&prof, r->keys[k]);
		}
		bprintf(&prof, "\t%.17g\t%llu\t", r->time, ts);
		put_tsv(&prof, r->unit);
		bprintf(&prof, "\t%.17g\t%llu\t", r->weight, (unsigned long long)r->threads);
		put_tsv(&prof, r->source);
		bprintf(&prof, "\t%lld\n", (long long)now);
		for (size_t f = 0; f < r->nfns; f++) {
			bprintf(&fns, "%s\t%llu\t%zu\t", r->id, ts, f);
			put_tsv(&fns, r->fns[f].name);
			bput(&fns, "\t", 1);
			put_tsv(&fns, r->fns[f].binary);
			bprintf(&fns, "\t%.17g\t%.17g\n", r->fns[f].self, r->fns[f].total);
		}
	}
	free(ord);
	int rc = 0;
	if (fns.n)
		rc = post(c, "INSERT INTO functions (id, ts, ord, name, bin, fself, ftotal) FORMAT TabSeparated", fns.p,
		          fns.n, NULL, err);
	if (!rc && add)
		rc = post(c,
		          "INSERT INTO profiles (id, app, version, build, device, os, session, time, ts, unit, weight, "
		          "threads, source, ingested) FORMAT TabSeparated",
		          prof.p, prof.n, NULL, err);
	free(prof.p);
	free(fns.p);
	if (rc)
		return -1;
	*added = add;
	return 0;
}

/* ---- queries ---- */

static void put_quoted(buf *b, const char *s)
{
	bput(b, "'", 1);
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			bput(b, "\\", 1);
		bput(b, s, 1);
	}
	bput(b, "'", 1);
}

static void where_sql(buf *b, const tk_store_query *q, const char *kinds, const char *col)
{
	if (kinds)
		bprintf(b, " WHERE kind IN %s", kinds);
	else
		bprintf(b, " WHERE 1"); /* every kind */
	if (col)
		bprintf(b, " AND isNotNull(%s)", col);
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		if (q->where[k]) {
			bprintf(b, " AND %s = ", tk_store_key_names[k]);
			put_quoted(b, q->where[k]);
		}
	if (q->since > 0)
		bprintf(b, " AND time >= %.17g AND ts >= toDateTime(%lld)", q->since, (long long)floor(q->since));
	if (q->until > 0)
		bprintf(b, " AND time < %.17g AND ts <= toDateTime(%lld)", q->until, (long long)ceil(q->until));
	if (q->signature) {
		bprintf(b, " AND signature = ");
		put_quoted(b, q->signature);
	}
}

/* A by entry in a select list: a key, or a time bucket named day or hour (the UTC day or hour of
 * ts, the report's start rounded down to the second, as SQLite's CAST does). */
static void by_sql(buf *b, int by)
{
	if (by == TK_STORE_BY_DAY)
		bprintf(b, "substring(toString(ts, 'UTC'), 1, 10) AS day");
	else if (by == TK_STORE_BY_HOUR)
		bprintf(b, "replaceOne(substring(toString(ts, 'UTC'), 1, 13), ' ', 'T') AS hour");
	else
		bprintf(b, "%s", tk_store_by_name(by));
}

/* The order statistics type 7 interpolates between, found with integer index arithmetic as
 * tk_quantile7 does (h = (n-1)·num/den = j + delta/den, arrays 1-based): s[j+1], s[min(j+2, n)] and
 * delta. The interpolation itself is finished by tk_store_lerp, so it is tk_quantile7's, bit for bit. */
static void type7_sql(buf *b, uint64_t num, uint64_t den)
{
	bprintf(
	    b,
	    "toString(s[intDiv((n - 1) * %llu, %llu) + 1]), toString(s[least(intDiv((n - 1) * %llu, %llu) + 2, n)]), "
	    "((n - 1) * %llu) %% %llu",
	    (unsigned long long)num, (unsigned long long)den, (unsigned long long)num, (unsigned long long)den,
	    (unsigned long long)num, (unsigned long long)den);
}

/* The same order statistics read from a group's distinct values vs (ascending) and the running
 * count of reports up to each, cs: the 0-based rank r is the value of the first entry whose running
 * count exceeds r. */
static void type7_cum_sql(buf *b, uint64_t num, uint64_t den)
{
	unsigned long long nu = (unsigned long long)num, de = (unsigned long long)den;
	bprintf(b,
	        "toString(vs[arrayFirstIndex(x -> x > intDiv((n - 1) * %llu, %llu), cs)]), "
	        "toString(vs[arrayFirstIndex(x -> x > least(intDiv((n - 1) * %llu, %llu) + 1, n - 1), cs)]), "
	        "((n - 1) * %llu) %% %llu",
	        nu, de, nu, de, nu, de);
}

/* Fields a, b, delta of type7_sql → the quantile. */
static double type7_value(uint64_t n, char **f, uint64_t den)
{
	double a = strtod(f[0], NULL), b = strtod(f[1], NULL);
	return n == 1 ? a : tk_store_lerp(a, b, strtoull(f[2], NULL, 10), den);
}

/* The mean, as tk_summary_sorted makes it: a compensated long double sum divided by n. ClickHouse
 * sums doubles in double, so the engine sums exactly instead: every value's bits split into sign,
 * exponent and two 26/27-bit halves of the significand, the halves summed per (sign, exponent) in
 * integers (exact for up to 2^37 values per group). The client adds those few exact terms. */
static const char *const exact_sum_cols = "bitShiftRight(b, 63) AS neg, bitAnd(bitShiftRight(b, 52), 2047) AS e, "
                                          "bitOr(bitAnd(b, 4503599627370495), if(e > 0, 4503599627370496, 0)) AS m, "
                                          "bitShiftRight(m, 26) AS hi, bitAnd(m, 67108863) AS lo";

/* One group's sumMap of terms, "([neg·2048 + e, …],[hi sum, …],[lo sum, …])" → the mean of n values. */
static double exact_mean(const char *terms, uint64_t n)
{
	tk_ksum sum = {0, 0};
	const char *ks = strchr(terms, '['), *hs = ks ? strchr(ks + 1, '[') : NULL,
	           *ls = hs ? strchr(hs + 1, '[') : NULL;
	if (!ls)
		return NAN;
	ks++, hs++, ls++;
	for (;;) {
		char *end;
		if (*ks == ']' || *hs == ']' || *ls == ']')
			break;
		unsigned long long key = strtoull(ks, &end, 10), neg = key >> 11, e = key & 2047;
		ks = end + (*end == ',');
		unsigned long long hi = strtoull(hs, &end, 10);
		hs = end + (*end == ',');
		unsigned long long lo = strtoull(ls, &end, 10);
		ls = end + (*end == ',');
		int scale = (e ? (int)e : 1) - 1075; /* value = m · 2^(e−1075); subnormals: 2^−1074 */
		long double a = ldexpl((long double)hi, scale + 26), b = ldexpl((long double)lo, scale);
		tk_ksum_add(&sum, neg ? -a : a);
		tk_ksum_add(&sum, neg ? -b : b);
	}
	return (double)((sum.s + sum.c) / n);
}

/* The reports a query reads, each once: two ingesters racing on the same new report can both find
 * it absent and both insert it (ClickHouse has no unique key, and Debian's 18.16 no insert
 * deduplication outside replicated tables), so every query reads one row per (kind, id), filtered
 * first. Measured on 250 k reports: the grouped percentile query 0.07 s → 0.14 s. */
static void reports_sql(buf *b, const ch *c, const tk_store_query *q, const char *kinds, const char *col)
{
	if (!c->dedupe) {
		bprintf(b, "reports");
		return;
	}
	bprintf(b, "(SELECT kind, id, app, version, build, device, os, session, time, ts, duration, avg_cpu, "
	           "signature FROM reports");
	where_sql(b, q, kinds, col);
	bprintf(b, " LIMIT 1 BY kind, id)");
}

/* Batches announced in tracekit_ingests, and how many of them are not closed as clean (in flight,
 * failed, crashed or raced). */
static int ingest_state(ch *c, unsigned long long *batches, unsigned long long *open, tk_error *err)
{
	buf res = {0};
	if (run(c,
	        "SELECT count(), countIf(s != 1) FROM (SELECT token, max(state) AS s FROM tracekit_ingests GROUP "
	        "BY token) FORMAT TabSeparated",
	        &res, err))
		return -1;
	char *end = NULL;
	*batches = res.p ? strtoull(res.p, &end, 10) : 0;
	*open = end ? strtoull(end, NULL, 10) : 1;
	free(res.p);
	return 0;
}

/* The ingest state (ingest_state) and whether the summaries may answer (c->sum), in one request:
 * only when each report is stored once (c->dedupe 0) and their totals equal the reports' (SUM_CHECK,
 * asked again only when the tables' active parts changed). Any failure of the latter says no: the
 * reports answer. Also which summaries are one active part each (c->one_part): every part of them
 * holds each key once (a materialized view's or a refill's rows are grouped by the key, and merges
 * sum equal keys), so one part's rows can be counted as distinct keys and need no grouping again. */
/* Batches that may have stored a report twice for good: closed as raced (2), or announced over 30 s
 * ago and never closed (the ingester died or its INSERT failed: a batch is one INSERT and one check,
 * closed within a second or two; a slower one is only read around, as every open batch was before).
 * A batch in flight (announced, not closed, younger) is not counted: answers read while it runs are
 * checked once it has closed (answers_stand). store compact waits an hour before calling a batch
 * crashed: it deletes what it prunes. */
#define INGEST_TOKENS_SQL "(SELECT token, max(state) AS s, min(at) AS a FROM tracekit_ingests GROUP BY token)"
#define INGEST_BAD_COUNT "countIf(s = 2 OR (s = 0 AND a < now() - 30))"
enum { ONE_SIG_SESSIONS = 1 };
static int state_query(ch *c, unsigned long long v[NSTATE], tk_error *err)
{
	buf sql = {0}, res = {0};
	bprintf(&sql,
	        "SELECT (SELECT count() FROM (SELECT token, max(state) AS s FROM tracekit_ingests GROUP BY "
	        "token)), (SELECT countIf(s != 1) FROM (SELECT token, max(state) AS s FROM tracekit_ingests GROUP "
	        "BY token)), groupBitXor(cityHash64(table, name)), count(), "
	        "countIf(table = 'sum_sig_sessions'), (SELECT " INGEST_BAD_COUNT " FROM " INGEST_TOKENS_SQL "), "
	        "toUInt32(now()) FROM system.parts WHERE "
	        "active AND table IN ('reports', 'sum_values', 'sum_sessions', 'sum_sigs', 'sum_sig_values', "
	        "'sum_groups', 'sum_day_values', 'sum_sig_sessions', 'sum_vsig_sessions', 'sum_sig_durations', "
	        "'sum_sig_keys', 'sum_hour_durations', 'sum_sig_ids', 'sum_sig_hours', 'sum_sig_hour_sess') AND "
	        "database = ");
	put_quoted(&sql, c->db);
	bprintf(&sql, " FORMAT TabSeparated");
	int rc = run(c, sql.p, &res, err);
	free(sql.p);
	if (rc)
		return -1;
	char *at = res.p ? res.p : "";
	for (int i = 0; i < NSTATE; i++)
		v[i] = strtoull(at, &at, 10);
	if (!res.p) /* no answer: as if a batch had failed */
		v[ST_OPEN] = v[ST_BAD] = 1;
	free(res.p);
	return 0;
}

/* Nanoseconds since t (CLOCK_MONOTONIC), or LLONG_MAX when the clock cannot be read. */
static long long elapsed_ns(const struct timespec *t)
{
	struct timespec now;
	if (clock_gettime(CLOCK_MONOTONIC, &now))
		return LLONG_MAX;
	return (now.tv_sec - t->tv_sec) * 1000000000LL + (now.tv_nsec - t->tv_nsec);
}

#define STUCK_NS 60000000000LL
static int stuck_lately(const ch *c)
{
	return c->stuck_have && elapsed_ns(&c->stuck_at) < STUCK_NS;
}

/* An answer's check after it (answers_stand) reads the whole state, kept for the next state_ready
 * if it comes within STATE_REUSE_NS (a page's next query: one state request per answer, not two;
 * each costs the server ~2.4 ms, most of it the request's own). Taking the state a little earlier
 * widens the window its answer's own check after covers, nothing more: a batch raced or failed in
 * between is still raced or failed at that check. */
#define STATE_REUSE_NS 1000000000LL
#define VIEW_BACKOFF_NS 10000000000LL
static int state_ready(ch *c, tk_error *err)
{
	c->sum = 0;
	c->one_part = 0;
	unsigned long long v[NSTATE] = {0, 1, 0, 0, 0, 1, 0};
	if (c->view)
		memcpy(v, c->view_v, sizeof v);
	else if (c->state_have && elapsed_ns(&c->state_at) < STATE_REUSE_NS)
		memcpy(v, c->state_v, sizeof v);
	else if (state_query(c, v, err))
		return -1;
	c->state_have = 0; /* once */
	/* each report read once while a batch is raced or failed (or, after a wait for batches in flight
	 * timed out lately, while any is open); batches merely in flight are waited for after the
	 * answer instead (answers_stand) */
	c->dedupe = v[ST_BAD] > 0 || (v[ST_OPEN] > 0 && stuck_lately(c));
	if (c->dedupe)
		return 0;
	uint64_t token = v[2] ^ tk_hash_u64(v[3]);
	c->one_part = v[4] == 1 ? ONE_SIG_SESSIONS : 0;
	if (!c->sum_known || c->sum_token != token) {
		tk_error e = {0};
		buf res = {0};
		if (run(c, SUM_CHECK, &res, &e))
			return 0;
		c->sum_ok = res.p && res.p[0] == '1';
		c->sum_known = 1;
		c->sum_token = token;
		free(res.p);
	}
	c->sum = c->sum_ok;
	return 0;
}

/* Whether the answers read since state_ready stand (1), may count a report twice and are to be
 * read again each report once (0), or -1 with err. A report is stored twice only by two batches
 * that both stored it, and of two such batches the one whose INSERT came later sees both copies
 * when it closes and closes as raced (2), which stays until store compact removes the copy. So
 * answers read while batches were in flight stand once every batch open at the check has closed
 * and none is raced or failed: the batches announced by the server's clock at the check (whole
 * seconds: a few opened just after it are waited for too) are waited for, up to SETTLE_NS; one
 * still open then counts as failed, and for STUCK_NS after that any batch in flight makes answers
 * read each report once from the start. (The answers were read again whenever a batch opened or
 * closed while they ran: while a fleet uploads, ~10 commits a second, nearly every one, 1-2 s
 * each on 1 M reports: a dashboard page took 12-21 s.) */
#define SETTLE_NS 2000000000LL
static int answers_stand(ch *c, tk_error *err)
{
	if (c->view)
		return 1; /* the view's end checks */
	/* the state read now is kept for the next state_ready within STATE_REUSE_NS */
	c->state_have = 0;
	if (state_query(c, c->state_v, err))
		return -1;
	c->state_have = clock_gettime(CLOCK_MONOTONIC, &c->state_at) == 0;
	const unsigned long long *v = c->state_v;
	if (!v[ST_OPEN])
		return 1;
	if (v[ST_BAD] || stuck_lately(c))
		return 0;
	char sql[512];
	snprintf(sql, sizeof sql,
	         "SELECT countIf(s = 0 AND a <= toDateTime(%llu)), " INGEST_BAD_COUNT " FROM " INGEST_TOKENS_SQL
	         " FORMAT TabSeparated",
	         v[ST_NOW]);
	struct timespec t0;
	if (clock_gettime(CLOCK_MONOTONIC, &t0))
		return 0;
	for (long us = 500;; us = us < 25000 ? us * 2 : 50000) {
		nanosleep(&(struct timespec){0, us * 1000}, NULL);
		buf res = {0};
		if (run(c, sql, &res, err))
			return -1;
		char *end = NULL;
		unsigned long long open = res.p ? strtoull(res.p, &end, 10) : 1,
		                   bad = end ? strtoull(end, NULL, 10) : 1;
		free(res.p);
		if (bad)
			return 0;
		if (!open)
			return 1;
		if (elapsed_ns(&t0) >= SETTLE_NS) {
			c->stuck_have = clock_gettime(CLOCK_MONOTONIC, &c->stuck_at) == 0;
			return 0;
		}
	}
}

/* A view: the state once now, for every answer until ch_view_end, which checks them all as
 * answers_stand checks one (batches in flight then waited for; one raced or failed: the caller asks
 * again). With a batch raced or failed now, every answer reads each report once anyway (c->dedupe):
 * nothing to check at the end. A batch that closed clean in between is no reason to ask again: its
 * rows may be in some answers and not in others, each answer right as of when it was read. */
static int ch_view_begin(void *h, tk_error *err)
{
	ch *c = h;
	c->view = 0;
	/* a view raced lately (ingest is running: batches close every few ms under uploads): no view,
	 * each answer checked on its own, or every page would be computed twice */
	if (c->raced_have && elapsed_ns(&c->raced_at) < VIEW_BACKOFF_NS)
		return 0;
	c->raced_have = 0;
	c->state_have = 0;
	if (state_query(c, c->view_v, err))
		return -1;
	c->view = 1;
	return 0;
}

static int ch_view_end(void *h, tk_error *err)
{
	ch *c = h;
	if (!c->view)
		return 0;
	c->view = 0;
	/* begun with a batch raced or failed: every answer read each report once (state_ready) */
	if (c->view_v[ST_BAD] > 0 || (c->view_v[ST_OPEN] > 0 && stuck_lately(c)))
		return 0;
	int ok = answers_stand(c, err);
	if (ok < 0)
		return -1;
	if (ok)
		return 0;
	c->raced_have = clock_gettime(CLOCK_MONOTONIC, &c->raced_at) == 0;
	return 1;
}

/* Whether q reads only what a summary holds: the metric's own column is duration (or col is), no
 * time range, no signature, and its filters and groups are keys in mask (bits of key indexes). */
static int sum_covers(const tk_store_query *q, const char *col, unsigned mask)
{
	if (!col || strcmp(col, "duration") != 0 || q->since > 0 || q->until > 0 || q->signature)
		return 0;
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		if (q->where[k] && !(mask >> k & 1))
			return 0;
	for (size_t i = 0; i < q->nby; i++)
		if (q->by[i] >= TK_STORE_NKEYS || !(mask >> q->by[i] & 1))
			return 0;
	return 1;
}
#define SUM_VALUES_KEYS (1u << TK_STORE_APP | 1u << TK_STORE_VERSION)

/* Run a query on the plain table when no report can be stored twice, else reading each once. The
 * state is read before and after: a batch started while the plain query ran makes it run again
 * deduplicated, so a row a racing batch inserted meanwhile is never counted twice. */
typedef int (*query_fn)(ch *c, const tk_store_query *q, size_t limit, void *out, size_t *n, tk_error *err);
static int with_dedupe(ch *c, query_fn fn, void (*drop)(void *out, size_t *n), const tk_store_query *q, size_t limit,
                       void *out, size_t *n, tk_error *err)
{
	if (state_ready(c, err))
		return -1;
	int rc = fn(c, q, limit, out, n, err);
	if (rc || c->dedupe)
		return rc;
	int ok = answers_stand(c, err);
	if (ok < 0) {
		drop(out, n);
		return -1;
	}
	if (ok)
		return 0;
	drop(out, n);
	c->dedupe = 1;
	c->sum = 0;
	return fn(c, q, limit, out, n, err);
}

/* The rows a metric reads: reports, or one row per profile with its value (the function's weight, 0
 * where the profile lacks it: a LEFT JOIN fills the default), as tk_fntable has it. */
static void source_sql(buf *b, const ch *c, const tk_store_metric *m, const char *metric, const tk_store_query *q)
{
	if (!m->profile) {
		reports_sql(b, c, q, m->kinds, m->column);
		return;
	}
	bprintf(b,
	        "(SELECT 'profile' AS kind, app, version, build, device, os, session, time, ts, unit, %s AS value "
	        "FROM (SELECT id, app, version, build, device, os, session, time, ts, unit, weight FROM profiles "
	        "LIMIT 1 BY id)",
	        m->profile == 1 ? "weight" : "v");
	if (m->profile >= 2) {
		tk_store_fnsel f;
		tk_store_fnsel_parse(metric, &f);
		bprintf(b, " ANY LEFT JOIN (SELECT id, argMin(%s, ord) AS v FROM functions WHERE name = ",
		        m->profile == 2 ? "fself" : "ftotal");
		put_quoted(b, f.name);
		if (f.binary) {
			bprintf(b, " AND bin = ");
			put_quoted(b, f.binary);
		}
		bprintf(b, " GROUP BY id) USING (id)");
		tk_store_fnsel_free(&f);
	}
	bprintf(b, ")");
}

/* The percentile query over rows (K…, tk_v, tk_c, b): a group's distinct values tk_v with their
 * counts tk_c and b the value's bits; only those are sorted, the order statistics are found on the
 * running counts (type7_cum_sql) and the exact sum's terms are the value's halves times its count. A
 * value in several rows (sum_values' parts not merged yet, other kinds or versions of the group) is
 * in the sorted array several times with its counts: the running counts and the sums are the same.
 * The answer has percentiles_once's columns (without the unit's, which reports do not need). */
static void cum_percentiles_sql(buf *sql, const tk_store_query *q, const char *keys, const buf *rows)
{
	const char *K = q->nby ? keys : "tk_all";
	bprintf(sql, "SELECT %s%sn, toString(total), toString(vs[1]), toString(vs[-1])", q->nby ? keys : "",
	        q->nby ? ", " : "");
	for (int k = 0; k < TK_STORE_NQ; k++) {
		bput(sql, ", ", 2);
		type7_cum_sql(sql, tk_summary_pct_num[k], tk_summary_pct_den[k]);
	}
	bprintf(sql,
	        ", '', '' FROM (SELECT %s, sum(tk_c) AS n, arraySort(groupArray((tk_v, tk_c))) AS t, "
	        "arrayMap(x -> tupleElement(x, 1), t) AS vs, arrayCumSum(arrayMap(x -> tupleElement(x, 2), t)) AS cs, "
	        "sumMap([neg * 2048 + e], [hi * tk_c], [lo * tk_c]) AS total FROM (SELECT %s, tk_v, tk_c, %s FROM %s) "
	        "GROUP BY %s) WHERE n > 0",
	        K, K, exact_sum_cols, rows->p, K);
	if (q->nby)
		bprintf(sql, " ORDER BY %s", keys);
	bprintf(sql, " FORMAT TabSeparated");
}

/* A metric of reports: the rows are first counted per distinct value in each group (hang durations
 * repeat: 1 M hangs hold ~5 000 distinct values). Measured on 1 M hangs by version: ~0.5 s of server
 * CPU (arraySort of every value, sumMap of every row) → ~0.2 s. */
static void report_percentiles_sql(buf *sql, const ch *c, const tk_store_metric *m, const tk_store_query *q,
                                   const char *keys, const char *ksel)
{
	const char *K = q->nby ? keys : "tk_all", *KSEL = q->nby ? ksel : "1 AS tk_all";
	buf rows = {0};
	bprintf(&rows,
	        "(SELECT %s, tk_v, count() AS tk_c, reinterpretAsUInt64(reinterpretAsString(tk_v)) AS b FROM "
	        "(SELECT %s, assumeNotNull(%s) AS tk_v FROM ",
	        K, KSEL, m->column);
	reports_sql(&rows, c, q, m->kinds, m->column);
	where_sql(&rows, q, m->kinds, m->column);
	bprintf(&rows, ") GROUP BY %s, tk_v)", K);
	cum_percentiles_sql(sql, q, keys, &rows);
	free(rows.p);
}

/* The same from sum_values' rows as they are: sorting a value's rows next to each other cost less
 * than grouping them again (~25 vs ~50 ms of server CPU, 1 M hangs by app and version). */
static void sum_percentiles_sql(buf *sql, const tk_store_metric *m, const tk_store_query *q, const char *keys,
                                const char *ksel)
{
	const char *K = q->nby ? keys : "tk_all", *KSEL = q->nby ? ksel : "1 AS tk_all";
	buf rows = {0};
	bprintf(&rows,
	        "(SELECT %s, tk_v, n AS tk_c, reinterpretAsUInt64(reinterpretAsString(tk_v)) AS b FROM "
	        "(SELECT %s, value AS tk_v, n FROM sum_values",
	        K, KSEL);
	where_sql(&rows, q, m->kinds, NULL);
	bprintf(&rows, "))");
	cum_percentiles_sql(sql, q, keys, &rows);
	free(rows.p);
}

/* Percentiles by day (and app, version) from sum_day_values: the engine sends its rows as they are
 * stored (RowBinary, no grouping: a GROUP BY of its ~160 k rows for 1 M hangs cost ~0.1 s of server
 * CPU on 18.16, the grouped arraySort of the reports' values by day ~0.5 s), and the client groups
 * them, sums the counts of a value repeated across parts not merged yet, lays each group's values
 * out in order and summarises them with the stats library (tk_store_summarise): the numbers are
 * `tracekit stats`'s by construction. */
typedef struct bgroup {
	char *key; /* the group's key fields as sent: per by entry a u32 day or a length and bytes */
	size_t klen;
} bgroup;

typedef struct brow {
	uint32_t g; /* its group */
	double v;
	uint64_t n;
} brow;

typedef struct bgroups {
	bgroup *g;
	size_t n, cap;
	tk_hidx idx;
	const tk_store_query *q;
	buf key;
	brow *rows;
	size_t nrows, rcap;
} bgroups;

static int bgroup_eq(const void *ctx, uint32_t i, const void *key)
{
	const bgroups *b = ctx;
	const buf *k = key;
	return b->g[i].klen == k->n && memcmp(b->g[i].key, k->p, k->n) == 0;
}

/* The text of group g's i-th key (a day as by_sql formats it), malloc'd. */
static char *bgroup_key(const bgroup *g, const tk_store_query *q, size_t i)
{
	const unsigned char *p = (const unsigned char *)g->key;
	for (size_t k = 0;; k++) {
		size_t len;
		if (q->by[k] == TK_STORE_BY_DAY) {
			uint32_t d = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
			if (k == i) {
				time_t t = (time_t)d * 86400;
				struct tm tm;
				char out[32];
				gmtime_r(&t, &tm);
				strftime(out, sizeof out, "%Y-%m-%d", &tm);
				return tk_xstrdup(out);
			}
			p += 4;
			continue;
		}
		memcpy(&len, p, sizeof len);
		if (k == i)
			return tk_xstrndup((const char *)p + sizeof len, len);
		p += sizeof len + len;
	}
}

static int cmp_group_keys(const void *a, const void *b, void *nby)
{
	const tk_store_group *x = a, *y = b;
	for (size_t i = 0; i < *(size_t *)nby; i++) {
		int c = strcmp(x->keys[i], y->keys[i]);
		if (c)
			return c;
	}
	return 0;
}

static int cmp_brow(const void *a, const void *b)
{
	const brow *x = a, *y = b;
	if (x->g != y->g)
		return x->g < y->g ? -1 : 1;
	return (x->v > y->v) - (x->v < y->v);
}

/* Read a RowBinary LEB128 length; 0 when the data ends first. */
static int rb_len(const unsigned char **p, const unsigned char *end, size_t *len)
{
	*len = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char b = *(*p)++;
		*len |= (size_t)(b & 127) << shift;
		if (!(b & 128))
			return (size_t)(end - *p) >= *len;
	}
	return 0;
}

/* The whole rows of data (a sink_fn): each one's key fields, value and count, into its group. */
static long bucket_rows(const char *data, size_t n, void *ctx)
{
	bgroups *b = ctx;
	const tk_store_query *q = b->q;
	const unsigned char *row = (const unsigned char *)data, *end = row + n;
	for (;;) {
		const unsigned char *p = row;
		buf *key = &b->key;
		key->n = 0;
		int whole = 1;
		for (size_t i = 0; i < q->nby && whole; i++) {
			size_t len;
			if (q->by[i] == TK_STORE_BY_DAY) {
				if ((whole = end - p >= 4))
					bput(key, (const char *)p, 4), p += 4;
			} else if ((whole = rb_len(&p, end, &len))) {
				bput(key, (const char *)&len, sizeof len);
				bput(key, (const char *)p, len);
				p += len;
			}
		}
		if (!whole || end - p < 16)
			return (long)((const char *)row - data);
		brow r;
		memcpy(&r.v, p, 8); /* little-endian, as the engine writes it (x86-64, arm64) */
		memcpy(&r.n, p + 8, 8);
		row = p + 16;
		uint64_t h = tk_hash_bytes(key->p ? key->p : "", key->n, 0);
		uint32_t gi = tk_hidx_find(&b->idx, h, bgroup_eq, b, key);
		if (gi == UINT32_MAX) {
			TK_GROW(b->g, b->cap, b->n + 1);
			b->g[b->n] = (bgroup){tk_xmalloc(key->n + 1), key->n};
			memcpy(b->g[b->n].key, key->p ? key->p : "", key->n);
			gi = (uint32_t)b->n++;
			tk_hidx_insert(&b->idx, h, gi);
		}
		r.g = gi;
		TK_GROW(b->rows, b->rcap, b->nrows + 1);
		b->rows[b->nrows++] = r;
	}
}

/* Whether sum_day_values (bucket TK_STORE_BY_DAY) or sum_hour_durations (TK_STORE_BY_HOUR) answers q: by
 * that bucket and keys sum_values holds. */
static int sum_bucket_covers(const tk_store_query *q, const char *col, int bucket)
{
	tk_store_query t = *q;
	t.nby = 0;
	for (size_t i = 0; i < q->nby; i++)
		if (q->by[i] != bucket)
			t.by[t.nby++] = q->by[i];
	return t.nby < q->nby && sum_covers(&t, col, SUM_VALUES_KEYS);
}

static int day_percentiles(ch *c, const tk_store_metric *m, const tk_store_query *q, tk_store_group **out, size_t *n,
                           tk_error *err)
{
	buf sql = {0};
	bprintf(&sql, "SELECT ");
	for (size_t i = 0; i < q->nby; i++)
		bprintf(&sql, "%s, ", q->by[i] == TK_STORE_BY_DAY ? "toUInt32(day)" : tk_store_by_name(q->by[i]));
	bprintf(&sql, "value, n FROM sum_day_values");
	where_sql(&sql, q, m->kinds, NULL);
	bprintf(&sql, " FORMAT RowBinary");
	bgroups b = {.q = q};
	int rc = post_sink(c, sql.p, bucket_rows, &b, err);
	free(sql.p);
	free(b.key.p);
	tk_hidx_free(&b.idx);
	if (rc > 0)
		tk_error_set(err, "%s: unexpected answer to the percentile query", c->url);
	*out = rc ? NULL : tk_xcalloc(b.n ? b.n : 1, sizeof **out);
	if (!rc) {
		/* each group's values in order, a value's counts summed, laid out and summarised */
		qsort(b.rows, b.nrows, sizeof *b.rows, cmp_brow);
		size_t nr = 0; /* a (group, value)'s counts added as the engine's sum() adds them (UInt64) */
		for (size_t i = 0; i < b.nrows; i++)
			if (nr && b.rows[nr - 1].g == b.rows[i].g && b.rows[nr - 1].v == b.rows[i].v)
				b.rows[nr - 1].n += b.rows[i].n;
			else
				b.rows[nr++] = b.rows[i];
		double *run = NULL;
		size_t rcap = 0;
		for (size_t i = 0; i < nr && !rc;) {
			uint32_t g = b.rows[i].g;
			size_t nv = 0;
			for (; i < nr && b.rows[i].g == g && !rc; i++) {
				if (b.rows[i].n > ((uint64_t)1 << 36) - nv) { /* 8 bytes each: no such store */
					rc = tk_error_set(err, "%s: sum_day_values counts %llu reports of one value",
					                  c->url, (unsigned long long)b.rows[i].n);
					break;
				}
				TK_GROW(run, rcap, nv + b.rows[i].n);
				for (uint64_t k = 0; k < b.rows[i].n; k++)
					run[nv++] = b.rows[i].v;
			}
			if (!rc)
				tk_store_summarise(run, nv, &(*out)[g]);
		}
		free(run);
	}
	for (size_t i = 0; i < b.n; i++) {
		for (size_t k = 0; *out && k < q->nby; k++)
			(*out)[i].keys[k] = bgroup_key(&b.g[i], q, k);
		free(b.g[i].key);
	}
	free(b.g);
	free(b.rows);
	if (rc) {
		if (*out)
			tk_store_groups_free(*out, b.n);
		*out = NULL;
		return -1;
	}
	*n = b.n;
	size_t nby = q->nby;
	qsort_r(*out, *n, sizeof **out, cmp_group_keys, &nby);
	return 0;
}

/* A RowBinary answer read in order: bad once it ends short. */
typedef struct rbin {
	const unsigned char *p, *end;
	int bad;
} rbin;

static uint64_t rbin_leb(rbin *r)
{
	uint64_t v = 0;
	for (int shift = 0; !r->bad; shift += 7) {
		if (r->p >= r->end || shift > 63) {
			r->bad = 1;
			break;
		}
		unsigned char b = *r->p++;
		v |= (uint64_t)(b & 127) << shift;
		if (!(b & 128))
			return v;
	}
	return 0;
}

/* the next n bytes, or NULL (bad) when fewer are left */
static const unsigned char *rbin_take(rbin *r, uint64_t n)
{
	if (r->bad || (uint64_t)(r->end - r->p) < n) {
		r->bad = 1;
		return NULL;
	}
	const unsigned char *at = r->p;
	r->p += n;
	return at;
}

/* a String, malloc'd */
static char *rbin_str(rbin *r)
{
	uint64_t n = rbin_leb(r);
	const unsigned char *at = rbin_take(r, n);
	return at ? tk_xstrndup((const char *)at, (size_t)n) : NULL;
}

/* A groupArray(Float64) state as stored (see "Schema 7"): its length and the values, appended to
 * *v; -1 (bad) when the answer ends short. */
static int rbin_values(rbin *r, double **v, size_t *nv, size_t *cap)
{
	uint64_t k = rbin_leb(r);
	if (r->bad || k > ((uint64_t)1 << 36) - *nv) /* 8 bytes each: no such store */
		return r->bad = 1, -1;
	const unsigned char *at = rbin_take(r, k * 8);
	if (!at)
		return -1;
	if (!k)
		return 0;
	TK_GROW(*v, *cap, *nv + (size_t)k);
	memcpy(*v + *nv, at, (size_t)k * 8); /* little-endian, as the engine writes it (x86-64, arm64) */
	*nv += (size_t)k;
	return 0;
}

/* A double's bits as an unsigned key in the same order, and back. */
static uint64_t dkey(double v)
{
	uint64_t b;
	memcpy(&b, &v, sizeof b);
	return b >> 63 ? ~b : b | (uint64_t)1 << 63;
}

static double dval(uint64_t k)
{
	uint64_t b = k >> 63 ? k & ~((uint64_t)1 << 63) : ~k;
	double v;
	memcpy(&v, &b, sizeof v);
	return v;
}

/* Sort n keys ascending, tmp holding n more: LSD radix, 8 bits a pass, all eight digits counted in
 * one pass first and a digit every key shares skipped. A trend by hour sorts ~2 000 groups of a few
 * hundred: qsort's calls cost twice the rest of the query; these counters stay in the L1 cache. */
static void radix_keys(uint64_t *k, uint64_t *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t cnt[8][256];
	memset(cnt, 0, sizeof cnt);
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < 8; d++)
			cnt[d][k[i] >> (8 * d) & 255]++;
	uint64_t *src = k, *dst = tmp;
	for (int d = 0; d < 8; d++) {
		size_t *c = cnt[d];
		if (c[k[0] >> (8 * d) & 255] == n)
			continue;
		for (size_t x = 0, sum = 0; x < 256; x++) {
			size_t t = c[x];
			c[x] = sum;
			sum += t;
		}
		for (size_t i = 0; i < n; i++)
			dst[c[src[i] >> (8 * d) & 255]++] = src[i];
		uint64_t *t = src;
		src = dst, dst = t;
	}
	if (src != k)
		memcpy(k, src, n * sizeof *k);
}

/* The groups of a trend by hour as sum_hour_durations' rows arrive (a sink_fn; rows ordered by the
 * group's keys): the last group's values' keys, summarised (hour_done) once the next group starts, so
 * only one group's values are held (touching fresh memory for all 1 M cost more than sorting them). */
typedef struct hour_acc {
	const tk_store_query *q;
	tk_store_group *g;
	size_t n, cap;
	uint64_t *k, *tmp;
	size_t nv, kcap, tcap;
} hour_acc;

/* The last group's values sorted and summarised (tk_store_summarise), as day_percentiles does:
 * `tracekit stats`'s numbers by construction. */
static void hour_done(hour_acc *a)
{
	if (!a->nv)
		return;
	TK_GROW(a->tmp, a->tcap, a->nv);
	radix_keys(a->k, a->tmp, a->nv);
	double *v = (double *)a->k; /* each key becomes its value in place */
	for (size_t j = 0; j < a->nv; j++)
		v[j] = dval(a->k[j]);
	tk_store_summarise(v, a->nv, &a->g[a->n - 1]);
	a->nv = 0;
}

static long hour_rows(const char *data, size_t n, void *ctx)
{
	hour_acc *a = ctx;
	const tk_store_query *q = a->q;
	rbin r = {(const unsigned char *)data, (const unsigned char *)data + n, 0};
	char *k[TK_STORE_NKEYS] = {0};
	for (;;) {
		const unsigned char *row = r.p;
		if (r.p >= r.end)
			return (long)(n);
		int same = a->n > 0;
		for (size_t i = 0; i < q->nby && !r.bad; i++) {
			if (q->by[i] != TK_STORE_BY_HOUR) {
				k[i] = rbin_str(&r);
			} else {
				const unsigned char *h = rbin_take(&r, 4);
				if (!h)
					break;
				time_t t = (time_t)((uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 |
				                    (uint32_t)h[3] << 24) *
				           3600;
				struct tm tm;
				char text[32];
				gmtime_r(&t, &tm);
				strftime(text, sizeof text, "%Y-%m-%dT%H", &tm);
				k[i] = tk_xstrdup(text);
			}
			same = same && k[i] && strcmp(k[i], a->g[a->n - 1].keys[i]) == 0;
		}
		uint64_t len = r.bad ? 0 : rbin_leb(&r);
		const unsigned char *at = r.bad || len > ((uint64_t)1 << 36) ? NULL : rbin_take(&r, len * 8);
		if (!at) { /* the row goes on in the next chunk */
			for (size_t i = 0; i < q->nby; i++)
				free(k[i]), k[i] = NULL;
			return (long)((const char *)row - data);
		}
		if (same) {
			for (size_t i = 0; i < q->nby; i++)
				free(k[i]), k[i] = NULL;
		} else {
			hour_done(a);
			TK_GROW(a->g, a->cap, a->n + 1);
			tk_store_group *g = &a->g[a->n++];
			memset(g, 0, sizeof *g);
			for (size_t i = 0; i < q->nby; i++)
				g->keys[i] = k[i], k[i] = NULL;
		}
		TK_GROW(a->k, a->kcap, a->nv + (size_t)len);
		for (uint64_t i = 0; i < len; i++) {
			double v;
			memcpy(&v, at + 8 * i, 8); /* little-endian, as the engine writes it (x86-64, arm64) */
			a->k[a->nv++] = dkey(v);
		}
	}
}

/* Percentiles by hour (and app, version) from sum_hour_durations: its states as stored, ordered by
 * the group's keys (a group's rows are adjacent: one per part not merged yet) and read as they
 * arrive, each group summarised once whole (hour_done). */
static int hour_percentiles(ch *c, const tk_store_metric *m, const tk_store_query *q, tk_store_group **out, size_t *n,
                            tk_error *err)
{
	buf sql = {0}, keys = {0};
	for (size_t i = 0; i < q->nby; i++)
		bprintf(&keys, "%s%s", i ? ", " : "",
		        q->by[i] == TK_STORE_BY_HOUR ? "hour" : tk_store_by_name(q->by[i]));
	bprintf(&sql, "SELECT %s, v FROM sum_hour_durations", keys.p);
	where_sql(&sql, q, m->kinds, NULL);
	bprintf(&sql, " ORDER BY %s FORMAT RowBinary", keys.p);
	hour_acc a = {.q = q};
	int rc = post_sink(c, sql.p, hour_rows, &a, err);
	free(sql.p);
	free(keys.p);
	if (rc > 0)
		rc = tk_error_set(err, "%s: unexpected answer to the percentile query", c->url);
	if (!rc)
		hour_done(&a);
	for (size_t i = 0; !rc && i < a.n; i++)
		if (!a.g[i].count)
			rc = tk_error_set(err, "%s: unexpected answer to the percentile query", c->url);
	free(a.tmp);
	free(a.k);
	if (rc) {
		tk_store_groups_free(a.g, a.n);
		*out = NULL, *n = 0;
		return -1;
	}
	*out = a.g, *n = a.n;
	size_t nby = q->nby;
	if (a.n > 1)
		qsort_r(*out, *n, sizeof **out, cmp_group_keys, &nby);
	return 0;
}

/* ---- date ranges (schema 8) ----
 * A query with a time range (since, until) under app and version filters at most reads the range's
 * whole UTC hours [hs, he) from the summaries by hour (sum_hour_durations, sum_sig_hours) and only
 * the reports of its partial hours at the ends from reports: every report of an hour in [hs, he)
 * is in the range (ts is time rounded down, so its hour's bounds hold time), and the reports
 * answer for every other one with the range's own filter. Hour 0 (ts 0: a time not finite or not
 * after the epoch) and the hours from the one ts is clamped into (time beyond 2^32 s) on are
 * always read from reports. The states are merged per group as the engine's own aggregates merge
 * them (sessions: uniqExact; examples: min) or read as stored and sorted by the client (durations,
 * as hour_percentiles does): the answers are those of the reports, to the bit. */
#define RANGE_LAST_HOUR 1193046 /* intDiv(4294967295, 3600): the hour of a clamped ts */
typedef int (*row_fn)(char **f, void *ctx);
static int each_row(ch *c, const char *sql, const buf *ext, size_t nf, row_fn fn, void *ctx, const char *what,
                    tk_error *err);

/* Whether the range path answers q on col: summaries ready, a time range, no signature, filters
 * (and the keys by, when by is not NULL) app and version at most. */
static int range_fit(const ch *c, const tk_store_query *q, const char *col)
{
	if (!c->sum || !(q->since > 0 || q->until > 0))
		return 0;
	tk_store_query t = *q;
	t.since = t.until = 0;
	return sum_covers(&t, col, SUM_VALUES_KEYS);
}

/* The whole hours [*hs, *he) of q's range (empty when *hs >= *he). */
static void range_split(const tk_store_query *q, long long *hs, long long *he)
{
	long long s = 1, e = RANGE_LAST_HOUR;
	if (q->since > 0) {
		double h = floor(q->since / 3600);
		s = h < (double)RANGE_LAST_HOUR ? (long long)h : RANGE_LAST_HOUR;
		while (s < RANGE_LAST_HOUR && (double)s * 3600 < q->since)
			s++;
		if (s < 1)
			s = 1;
	}
	if (q->until > 0) {
		double h = floor(q->until / 3600);
		e = h < (double)RANGE_LAST_HOUR ? (long long)h : RANGE_LAST_HOUR;
		while (e > 0 && (double)e * 3600 > q->until)
			e--;
	}
	*hs = s, *he = e;
}

/* " FROM table WHERE …" of the whole hours, and " FROM reports WHERE …" of the partial ones. */
static void range_sum_from(buf *b, const tk_store_query *q, const char *kinds, const char *table, const char *extra)
{
	long long hs, he;
	range_split(q, &hs, &he);
	tk_store_query t = *q;
	t.since = t.until = 0;
	bprintf(b, " FROM %s", table);
	where_sql(b, &t, kinds, NULL);
	bprintf(b, " AND hour >= %lld AND hour < %lld%s", hs, he, extra);
}

static void range_part_from(buf *b, const tk_store_query *q, const char *kinds, const char *extra)
{
	long long hs, he;
	range_split(q, &hs, &he);
	bprintf(b, " FROM reports");
	where_sql(b, q, kinds, "duration");
	bprintf(b, " AND (toUInt32(ts) < %lld OR toUInt32(ts) >= %lld)%s", hs * 3600, he * 3600, extra);
}

/* " AND signature IN (…)" of sigs. */
static void sigs_in(buf *b, char *const *sigs, size_t n)
{
	bprintf(b, " AND signature IN (");
	for (size_t i = 0; i < n; i++) {
		if (i)
			bput(b, ", ", 2);
		put_quoted(b, sigs[i]);
	}
	bprintf(b, ")");
}

/* A range's durations grouped by keys (a list of String columns, "" for one group): each group's
 * keys and its values sorted ascending. */
typedef struct rgroup {
	char *k[TK_STORE_NKEYS];
	double *v;
	size_t n, cap;
} rgroup;

typedef struct racc {
	size_t nk;
	rgroup *g;
	size_t n, cap;
} racc;

static void racc_free(racc *a)
{
	for (size_t i = 0; i < a->n; i++) {
		for (size_t k = 0; k < a->nk; k++)
			free(a->g[i].k[k]);
		free(a->g[i].v);
	}
	free(a->g);
	*a = (racc){0};
}

/* A row's nk String keys into k (each malloc'd; NULL once the row is cut short): 1 if they equal
 * last's, the keys of the group before (NULL for none). */
static int row_keys(rbin *r, size_t nk, char **k, char *const *last)
{
	int same = last != NULL;
	for (size_t i = 0; i < nk && !r->bad; i++) {
		k[i] = rbin_str(r);
		same = same && k[i] && strcmp(k[i], last[i]) == 0;
	}
	return same;
}

/* RowBinary rows (nk Strings, a groupArray(Float64) state), ordered by the keys (a sink_fn): a
 * group's rows (hours, parts, the reports' partial hours) are adjacent and their values appended. */
static long range_rows(const char *data, size_t n, void *ctx)
{
	racc *a = ctx;
	rbin r = {(const unsigned char *)data, (const unsigned char *)data + n, 0};
	for (;;) {
		const unsigned char *row = r.p;
		if (r.p >= r.end)
			return (long)n;
		char *k[TK_STORE_NKEYS] = {0};
		int same = row_keys(&r, a->nk, k, a->n ? a->g[a->n - 1].k : NULL);
		uint64_t len = r.bad ? 0 : rbin_leb(&r);
		const unsigned char *at = r.bad || len > ((uint64_t)1 << 36) ? NULL : rbin_take(&r, len * 8);
		if (!at || !same) {
			if (at) {
				TK_GROW(a->g, a->cap, a->n + 1);
				rgroup *g = &a->g[a->n++];
				memset(g, 0, sizeof *g);
				for (size_t i = 0; i < a->nk; i++)
					g->k[i] = k[i], k[i] = NULL;
			}
		}
		for (size_t i = 0; i < a->nk; i++)
			free(k[i]);
		if (!at) /* the row goes on in the next chunk */
			return (long)((const char *)row - data);
		rgroup *g = &a->g[a->n - 1];
		if (len) {
			TK_GROW(g->v, g->cap, g->n + (size_t)len);
			memcpy(g->v + g->n, at, (size_t)len * 8); /* little-endian, as the engine writes it */
			g->n += (size_t)len;
		}
	}
}

/* sum_day_values' rows of a range's whole days, (keys…, value Float64, n UInt64) ordered by the keys
 * then the value, as they arrive (a sink_fn): per group of keys its (value, count) runs in order. */
typedef struct dgroup {
	char *k[TK_STORE_NKEYS];
	double *v;
	uint64_t *c, total;
	size_t n, cap, ccap;
} dgroup;

typedef struct dacc {
	size_t nk;
	dgroup *g;
	size_t n, cap;
} dacc;

static long day_rows(const char *data, size_t n, void *ctx)
{
	dacc *a = ctx;
	rbin r = {(const unsigned char *)data, (const unsigned char *)data + n, 0};
	for (;;) {
		const unsigned char *row = r.p;
		if (r.p >= r.end)
			return (long)n;
		char *k[TK_STORE_NKEYS] = {0};
		int same = row_keys(&r, a->nk, k, a->n ? a->g[a->n - 1].k : NULL);
		const unsigned char *at = r.bad ? NULL : rbin_take(&r, 16);
		if (at && !same) {
			TK_GROW(a->g, a->cap, a->n + 1);
			dgroup *g = &a->g[a->n++];
			memset(g, 0, sizeof *g);
			for (size_t i = 0; i < a->nk; i++)
				g->k[i] = k[i], k[i] = NULL;
		}
		for (size_t i = 0; i < a->nk; i++)
			free(k[i]);
		if (!at) /* the row goes on in the next chunk */
			return (long)((const char *)row - data);
		dgroup *g = &a->g[a->n - 1];
		double v;
		uint64_t cnt;
		memcpy(&v, at, 8);
		memcpy(&cnt, at + 8, 8);
		if (cnt > ((uint64_t)1 << 36) - g->total) /* 8 bytes each: no such store */
			return -1;
		TK_GROW(g->v, g->cap, g->n + 1);
		TK_GROW(g->c, g->ccap, g->n + 1);
		g->v[g->n] = v, g->c[g->n++] = cnt;
		g->total += cnt;
	}
}

static int cmp_rgroup(const void *x, const void *y, void *nk)
{
	const rgroup *a = x, *b = y;
	for (size_t i = 0; i < *(size_t *)nk; i++) {
		int d = strcmp(a->k[i], b->k[i]);
		if (d)
			return d;
	}
	return 0;
}

/* The durations of q's range grouped by keys (comma-separated, "" for none) from table (a summary
 * by hour with those keys and a state v) and the partial hours' reports, each group sorted. From
 * sum_hour_durations, the range's whole UTC days are read from sum_day_values instead, as (value,
 * count) rows in order (a week of 1 M hangs: ~70 k rows, not ~0.9 M values to send and sort), and
 * merged with the sorted rest. */
static int range_fetch(ch *c, const tk_store_query *q, const char *kinds, const char *keys, size_t nk,
                       const char *table, const char *extra, racc *a, tk_error *err)
{
	buf sql = {0}, hx = {0};
	const char *sep = nk ? ", " : "";
	long long hs, he, ds = 0, de = 0;
	range_split(q, &hs, &he);
	if (strcmp(table, "sum_hour_durations") == 0) {
		ds = (hs + 23) / 24, de = he / 24;
		if (ds < de)
			bprintf(&hx, " AND (hour < %lld OR hour >= %lld)", ds * 24, de * 24);
	}
	bprintf(&sql, "SELECT %s%sv FROM (SELECT %s%sv", keys, sep, keys, sep);
	/* the hours themselves from sum_sig_hours, ordered by hour first: only the range's rows are read
	 * (sum_hour_durations, ordered by app and version first, is read whole: ~1 M values' states) */
	int hours = strcmp(table, "sum_hour_durations") == 0;
	range_sum_from(&sql, q, kinds, hours ? "sum_sig_hours" : table, hx.p ? hx.p : extra);
	free(hx.p);
	bprintf(&sql, " UNION ALL SELECT %s%sgroupArrayState(assumeNotNull(duration)) AS v", keys, sep);
	range_part_from(&sql, q, kinds, extra);
	bprintf(&sql, " GROUP BY %s)%s%s FORMAT RowBinary", nk ? keys : "kind", nk ? " ORDER BY " : "", keys);
	*a = (racc){.nk = nk};
	int rc = post_sink(c, sql.p, range_rows, a, err);
	free(sql.p);
	dacc d = {.nk = nk};
	if (!rc && ds < de) {
		tk_store_query t = *q;
		t.since = t.until = 0;
		sql = (buf){0};
		bprintf(&sql, "SELECT %s%svalue, sum(n) FROM sum_day_values", keys, sep);
		where_sql(&sql, &t, kinds, NULL);
		/* a value's count summed over the days, apps and versions (a week of 1 M hangs: ~5 k rows, not
		 * ~140 k to sort, send and merge) */
		bprintf(&sql,
		        " AND toUInt16(day) >= %lld AND toUInt16(day) < %lld GROUP BY %s%svalue ORDER BY %s%svalue "
		        "FORMAT RowBinary",
		        ds, de, keys, sep, keys, sep);
		rc = post_sink(c, sql.p, day_rows, &d, err);
		free(sql.p);
	}
	if (rc > 0)
		rc = tk_error_set(err, "%s: unexpected answer to the date range query", c->url);
	uint64_t *tmp = NULL;
	size_t tcap = 0;
	for (size_t i = 0; !rc && i < a->n; i++) {
		rgroup *g = &a->g[i];
		uint64_t *k = (uint64_t *)g->v; /* each value becomes its key in place, and back */
		for (size_t j = 0; j < g->n; j++)
			k[j] = dkey(g->v[j]);
		TK_GROW(tmp, tcap, g->n ? g->n : 1);
		radix_keys(k, tmp, g->n);
		for (size_t j = 0; j < g->n; j++)
			g->v[j] = dval(k[j]);
	}
	free(tmp);
	/* each day group merged into the group of its keys (one made where the hours have none) */
	size_t ng = a->n;
	for (size_t i = 0; !rc && i < d.n; i++) {
		dgroup *dg = &d.g[i];
		rgroup *g = NULL;
		for (size_t j = 0; j < ng && !g; j++) {
			size_t x = 0;
			while (x < nk && strcmp(a->g[j].k[x], dg->k[x]) == 0)
				x++;
			if (x == nk)
				g = &a->g[j];
		}
		if (!g) {
			TK_GROW(a->g, a->cap, a->n + 1);
			g = &a->g[a->n++];
			memset(g, 0, sizeof *g);
			for (size_t x = 0; x < nk; x++)
				g->k[x] = dg->k[x], dg->k[x] = NULL;
		}
		size_t n = g->n + (size_t)dg->total, o = 0, h = 0;
		double *m = tk_xmalloc((n ? n : 1) * sizeof *m);
		for (size_t r = 0; r < dg->n; r++) { /* the hours' values below each run, then the run */
			while (h < g->n && g->v[h] < dg->v[r])
				m[o++] = g->v[h++];
			for (uint64_t z = 0; z < dg->c[r]; z++)
				m[o++] = dg->v[r];
		}
		while (h < g->n)
			m[o++] = g->v[h++];
		free(g->v);
		g->v = m, g->n = g->cap = n;
	}
	if (!rc && a->n > ng && nk)
		qsort_r(a->g, a->n, sizeof *a->g, cmp_rgroup, &nk);
	for (size_t i = 0; i < d.n; i++) {
		for (size_t x = 0; x < nk; x++)
			free(d.g[i].k[x]);
		free(d.g[i].v);
		free(d.g[i].c);
	}
	free(d.g);
	if (rc) {
		racc_free(a);
		return -1;
	}
	return 0;
}

/* The durations of a date range are asked twice by a comparison (its percentiles then its
 * histogram; a side's top signatures then their durations): range_values keeps the last RCACHE_N
 * answers per connection, each under its query and the store's state (the summaries' and reports'
 * parts, state_ready's token: any INSERT or merge changes it), with the signatures it was asked
 * for (NULL: every group). */
#define RCACHE_N 4
typedef struct rcache {
	char *key;
	char **asked;
	size_t nasked, cap;
	racc a;
} rcache;

/* An entry emptied (its key NULL: found by no query). */
static void rcache_drop(rcache *e)
{
	free(e->key);
	for (size_t k = 0; k < e->nasked; k++)
		free(e->asked[k]);
	free(e->asked);
	racc_free(&e->a);
	*e = (rcache){0};
}

/* The entry holding a (range_values' answer). */
static rcache *rcache_of(ch *c, const racc *a)
{
	for (size_t i = 0; c->rcache && i < RCACHE_N; i++)
		if (&c->rcache[i].a == a)
			return &c->rcache[i];
	return NULL;
}

static void rcache_free(ch *c)
{
	for (size_t i = 0; c->rcache && i < RCACHE_N; i++)
		rcache_drop(&c->rcache[i]);
	free(c->rcache);
	c->rcache = NULL;
}

static int rcache_asked(const rcache *e, const char *sig)
{
	for (size_t k = 0; k < e->nasked; k++)
		if (strcmp(e->asked[k], sig) == 0)
			return 1;
	return 0;
}

/* range_fetch through the cache: sigs (n of them; NULL: every group) the signatures asked for, of
 * table's signature groups; only those not asked before under the same key are fetched. *a is the
 * cache's own (groups of other signatures too, the caller skips them), valid until the next call. */
static int range_values(ch *c, const tk_store_query *q, const char *kinds, const char *keys, size_t nk,
                        const char *table, char *const *sigs, size_t n, const racc **a, tk_error *err)
{
	buf key = {0};
	bprintf(&key, "%llx %s|%s|", (unsigned long long)c->sum_token, table, keys);
	range_sum_from(&key, q, kinds, table, "");
	range_part_from(&key, q, kinds, "");
	if (!c->rcache)
		c->rcache = tk_xcalloc(RCACHE_N, sizeof *c->rcache);
	rcache *e = NULL;
	for (size_t i = 0; i < RCACHE_N && !e; i++)
		if (c->rcache[i].key && strcmp(c->rcache[i].key, key.p) == 0)
			e = &c->rcache[i];
	if (!e) {
		e = &c->rcache[c->rcache_next++ % RCACHE_N];
		rcache_drop(e);
		e->key = key.p;
		key.p = NULL;
	}
	free(key.p);
	/* the signatures not asked yet, or every group once */
	buf in = {0};
	size_t nmiss = 0;
	for (size_t i = 0; sigs && i < n; i++)
		if (!rcache_asked(e, sigs[i])) {
			bprintf(&in, "%s", nmiss++ ? ", " : " AND signature IN (");
			put_quoted(&in, sigs[i]);
		}
	if (nmiss)
		bprintf(&in, ")");
	int fetch = sigs ? nmiss > 0 : e->nasked == 0 && !e->a.g && !e->a.cap;
	if (fetch) {
		racc got;
		if (range_fetch(c, q, kinds, keys, nk, table, in.p ? in.p : "", &got, err)) {
			free(in.p);
			free(e->key);
			e->key = NULL; /* forgotten: its asked list no longer says what it holds */
			return -1;
		}
		/* appended; a signature's groups stay one (each asked once) */
		for (size_t i = 0; i < got.n; i++) {
			TK_GROW(e->a.g, e->a.cap, e->a.n + 1);
			e->a.g[e->a.n++] = got.g[i];
		}
		e->a.nk = nk;
		free(got.g);
		if (!e->a.cap)
			e->a.cap = 1, e->a.g = tk_xcalloc(1, sizeof *e->a.g); /* fetched, even if empty */
		for (size_t i = 0; sigs && i < n; i++)
			if (!rcache_asked(e, sigs[i])) {
				TK_GROW(e->asked, e->cap, e->nasked + 1);
				e->asked[e->nasked++] = tk_xstrdup(sigs[i]);
			}
	}
	free(in.p);
	*a = &e->a;
	return 0;
}

/* For the calls outside with_dedupe: 1 with *a filled when the range path answers q (range_values
 * of the listed signatures, or of every report) and no ingest batch opened or failed meanwhile, 0
 * when the caller reads the reports (each_row_once), -1 with err. */
static int range_ready(ch *c, const tk_store_query *q, const char *keys, size_t nk, const char *table,
                       const char *kinds, char *const *sigs, size_t n, const racc **a, tk_error *err)
{
	if (state_ready(c, err))
		return -1;
	if (!range_fit(c, q, "duration"))
		return 0;
	if (range_values(c, q, kinds, keys, nk, table, sigs, n, a, err))
		return -1;
	return answers_stand(c, err);
}

/* Percentiles over a date range (by app and version at most), summarised as hour_percentiles does. */
static int range_percentiles(ch *c, const tk_store_metric *m, const tk_store_query *q, tk_store_group **out, size_t *n,
                             tk_error *err)
{
	buf keys = {0};
	for (size_t i = 0; i < q->nby; i++)
		bprintf(&keys, "%s%s", i ? ", " : "", tk_store_by_name(q->by[i]));
	const racc *a;
	int rc = range_values(c, q, m->kinds, keys.p ? keys.p : "", q->nby, "sum_hour_durations", NULL, 0, &a, err);
	free(keys.p);
	if (rc)
		return -1;
	*out = tk_xcalloc(a->n ? a->n : 1, sizeof **out);
	*n = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (!a->g[i].n)
			continue;
		tk_store_group *g = &(*out)[(*n)++];
		for (size_t k = 0; k < q->nby; k++)
			g->keys[k] = tk_xstrdup(a->g[i].k[k]);
		tk_store_summarise(a->g[i].v, a->g[i].n, g);
	}
	return 0;
}

/* Type 7's quantile num/den of n sorted values, as type7_sql and type7_value find it. */
static double sorted_q7(const double *s, uint64_t n, uint64_t num, uint64_t den)
{
	uint64_t j = (n - 1) * num / den, j1 = j + 1 < n ? j + 1 : n - 1;
	return n == 1 ? s[0] : tk_store_lerp(s[j], s[j1], (n - 1) * num % den, den);
}

typedef struct rtop {
	tk_store_hang *h;
	size_t n, cap;
} rtop;

static tk_store_hang *rtop_find(rtop *t, const char *sig)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->h[i].signature, sig) == 0)
			return &t->h[i];
	return NULL;
}

static int rtop_count(char **f, void *ctx)
{
	rtop *t = ctx;
	TK_GROW(t->h, t->cap, t->n + 1);
	tk_store_hang *x = &t->h[t->n++];
	memset(x, 0, sizeof *x);
	x->signature = tk_xstrdup(f[0]);
	x->count = strtoull(f[1], NULL, 10);
	return 0;
}

static int rtop_example(char **f, void *ctx)
{
	int rc = rtop_count(f, ctx);
	rtop *t = ctx;
	t->h[t->n - 1].example = tk_xstrdup(f[2]);
	return rc;
}

/* The distinct sessions of each top signature: rows (its 1-based place in the list UInt32,
 * sipHash128(session) FixedString(16)) as they arrive (a sink_fn), gathered per signature, then
 * each signature's hashes sorted (LSD radix on the low half, 8 bits a pass: a hash set's random
 * probes of ~0.5 M rows cost ~4× more) and the distinct ones counted. */
typedef struct sess_pair {
	uint64_t lo, hi;
} sess_pair;

typedef struct sess_set {
	rtop *t;
	struct sess_list {
		sess_pair *p;
		size_t n, cap;
	} * l;
	int bad;
} sess_set;

static long sess_rows(const char *data, size_t n, void *ctx)
{
	sess_set *s = ctx;
	const unsigned char *p = (const unsigned char *)data, *end = p + n;
	for (; end - p >= 20; p += 20) {
		uint32_t i = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		if (i < 1 || i > s->t->n)
			return s->bad = 1, -1;
		struct sess_list *l = &s->l[i - 1];
		TK_GROW(l->p, l->cap, l->n + 1);
		memcpy(&l->p[l->n].lo, p + 4, 8);
		memcpy(&l->p[l->n].hi, p + 12, 8);
		l->n++;
	}
	return (long)((const char *)p - data); /* a row cut short goes on in the next chunk */
}

/* How many distinct pairs a holds (n of them; tmp holds n more): sorted by lo, then equal los'
 * his compared (a run of equal los is two hashes agreeing on 64 bits: next to never). */
static uint64_t sess_distinct(sess_pair *a, sess_pair *tmp, size_t n)
{
	if (n < 2)
		return n;
	sess_pair *src = a, *dst = tmp;
	for (int d = 0; d < 8; d++) {
		size_t cnt[256] = {0};
		for (size_t i = 0; i < n; i++)
			cnt[src[i].lo >> (8 * d) & 255]++;
		for (size_t x = 0, sum = 0; x < 256; x++) {
			size_t c = cnt[x];
			cnt[x] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[cnt[src[i].lo >> (8 * d) & 255]++] = src[i];
		sess_pair *t = src;
		src = dst, dst = t;
	}
	uint64_t k = 0;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && src[j].lo == src[i].lo;)
			j++;
		for (size_t x = i; x < j; x++) { /* counted once: no earlier equal hi in the run */
			size_t y = i;
			while (y < x && src[y].hi != src[x].hi)
				y++;
			k += y == x;
		}
	}
	return k;
}

/* Top signatures of a date range (top_once's answer): their counts summed per signature from
 * sum_sig_hours' whole hours and the partial hours' reports, then for the top ones only their
 * sessions and least id (the states merged) and their durations (range_values). counts_only stops
 * after the counts and least ids (top_counts_once). */
static int range_top(ch *c, const tk_store_query *q, size_t limit, int counts_only, tk_store_hang **out, size_t *n,
                     tk_error *err)
{
	const char *kinds = tk_store_kinds_sql(q->kind);
	buf sql = {0};
	rtop t = {0};
	bprintf(&sql,
	        "SELECT signature, sum(c) AS n, min(e) FROM (SELECT signature, countMerge(ns) AS c, minMerge(ex) AS e");
	range_sum_from(&sql, q, kinds, "sum_sig_hours", "");
	bprintf(&sql, " GROUP BY signature UNION ALL SELECT signature, count() AS c, min(id) AS e");
	range_part_from(&sql, q, kinds, "");
	bprintf(&sql,
	        " GROUP BY signature) GROUP BY signature ORDER BY n DESC, signature LIMIT %zu FORMAT TabSeparated",
	        limit);
	int rc = each_row(c, sql.p, NULL, 3, rtop_example, &t, "top-hangs", err);
	free(sql.p);
	if (counts_only || rc) {
		if (rc) {
			tk_store_hangs_free(t.h, t.n);
			return -1;
		}
		*out = t.h, *n = t.n;
		return 0;
	}
	char **sigs = tk_xmalloc((t.n ? t.n : 1) * sizeof *sigs);
	for (size_t i = 0; i < t.n; i++)
		sigs[i] = t.h[i].signature;
	buf in = {0}, arr = {0};
	sigs_in(&in, sigs, t.n);
	for (size_t i = 0; i < t.n; i++) {
		bput(&arr, i ? ", " : "[", i ? 2 : 1);
		put_quoted(&arr, sigs[i]);
	}
	bput(&arr, "]", 1);
	if (!rc && t.n) { /* their sessions: the hashes counted distinct here, each row's signature sent
		           * as its 1-based place in the list (not its text: ~40 MB for a week of 1 M hangs) */
		sql = (buf){0};
		bprintf(&sql, "SELECT toUInt32(indexOf(%s, signature)) AS i, sh", arr.p);
		range_sum_from(&sql, q, kinds, "sum_sig_hour_sess", in.p);
		bprintf(&sql, " UNION ALL SELECT toUInt32(indexOf(%s, signature)) AS i, sipHash128(session) AS sh",
		        arr.p);
		range_part_from(&sql, q, kinds, in.p);
		bprintf(&sql, " FORMAT RowBinary");
		sess_set ss = {.t = &t, .l = tk_xcalloc(t.n, sizeof *ss.l)};
		rc = post_sink(c, sql.p, sess_rows, &ss, err);
		free(sql.p);
		if (rc > 0)
			rc = tk_error_set(err, "%s: unexpected answer to the top-hangs query", c->url);
		sess_pair *tmp = NULL;
		size_t tcap = 0;
		for (size_t i = 0; i < t.n; i++) {
			if (!rc) {
				TK_GROW(tmp, tcap, ss.l[i].n + 1);
				t.h[i].sessions = sess_distinct(ss.l[i].p, tmp, ss.l[i].n);
			}
			free(ss.l[i].p);
		}
		free(tmp);
		free(ss.l);
	}
	const racc *a = NULL;
	if (!rc && t.n)
		rc = range_values(c, q, kinds, "signature", 1, "sum_sig_hours", sigs, t.n, &a, err);
	free(in.p);
	free(arr.p);
	free(sigs);
	size_t found = 0;
	for (size_t i = 0; !rc && a && i < a->n; i++) {
		tk_store_hang *x = rtop_find(&t, a->g[i].k[0]);
		if (!x) /* another signature the cache holds */
			continue;
		if (x->count != a->g[i].n || !x->example) {
			rc = tk_error_set(err, "%s: unexpected answer to the top-hangs query", c->url);
			break;
		}
		x->p50 = sorted_q7(a->g[i].v, x->count, 50, 100);
		x->p95 = sorted_q7(a->g[i].v, x->count, 95, 100);
		found++;
	}
	if (!rc && found != t.n)
		rc = tk_error_set(err, "%s: unexpected answer to the top-hangs query", c->url);
	if (rc) {
		tk_store_hangs_free(t.h, t.n);
		return -1;
	}
	*out = t.h, *n = t.n;
	return 0;
}

static int percentiles_once(ch *c, const tk_store_query *q, size_t limit, void *outv, size_t *n, tk_error *err)
{
	(void)limit;
	tk_store_group **out = outv;
	const tk_store_metric *m = tk_store_metric_find(q->metric);
	buf keys = {0}, ksel = {0}, sql = {0}, src = {0}, unit = {0};
	for (size_t i = 0; i < q->nby; i++) {
		bprintf(&keys, "%s%s", i ? ", " : "", tk_store_by_name(q->by[i]));
		bprintf(&ksel, "%s", i ? ", " : "");
		by_sql(&ksel, q->by[i]);
	}
	/* per distinct value while the groups are few and large; by day or hour (thousands of small
	 * groups, where nearly every (group, value) pair is distinct) sorting every value costs less:
	 * measured by hour, 1 M hangs, ~0.43 s of server CPU that way, ~1.1 s by value */
	int buckets = 0;
	for (size_t i = 0; i < q->nby; i++)
		buckets |= q->by[i] == TK_STORE_BY_DAY || q->by[i] == TK_STORE_BY_HOUR;
	if (!m->profile && range_fit(c, q, m->column)) { /* a date range: its whole hours summarised */
		free(keys.p);
		free(ksel.p);
		return range_percentiles(c, m, q, out, n, err);
	}
	if (!m->profile && c->sum && sum_bucket_covers(q, m->column, TK_STORE_BY_DAY)) {
		free(keys.p);
		free(ksel.p);
		return day_percentiles(c, m, q, out, n, err);
	}
	if (!m->profile && c->sum && sum_bucket_covers(q, m->column, TK_STORE_BY_HOUR)) {
		free(keys.p);
		free(ksel.p);
		return hour_percentiles(c, m, q, out, n, err);
	}
	if (!m->profile && c->sum && sum_covers(q, m->column, SUM_VALUES_KEYS)) {
		sum_percentiles_sql(&sql, m, q, keys.p, ksel.p);
	} else if (!m->profile && !buckets) {
		report_percentiles_sql(&sql, c, m, q, keys.p, ksel.p);
	} else {
		source_sql(&src, c, m, q->metric, q);
		if (m->profile)
			bprintf(&unit, "unit");
		else
			put_quoted(&unit, m->unit);
		/* one pass over the (deduplicated) rows per group: the sorted values for the order statistics
		 * and the exact sum's terms (sumMap by sign and exponent); one constant key stands in when there
		 * is no grouping. (It was two passes joined on the keys: with every report read once, each pass
		 * costs a hash of the ids.) */
		const char *K = q->nby ? keys.p : "tk_all", *KSEL = q->nby ? ksel.p : "1 AS tk_all";
		bprintf(&sql, "SELECT %s%sn, toString(total), toString(s[1]), toString(s[n])", q->nby ? keys.p : "",
		        q->nby ? ", " : "");
		for (int k = 0; k < TK_STORE_NQ; k++) {
			bput(&sql, ", ", 2);
			type7_sql(&sql, tk_summary_pct_num[k], tk_summary_pct_den[k]);
		}
		bprintf(
		    &sql,
		    ", umin, umax FROM (SELECT %s, count() AS n, arraySort(groupArray(tk_v)) AS s, min(tk_u) AS umin, "
		    "max(tk_u) AS umax, sumMap([neg * 2048 + e], [hi], [lo]) AS total FROM (SELECT %s, tk_v, tk_u, %s "
		    "FROM (SELECT %s, assumeNotNull(%s) AS tk_v, %s AS tk_u, "
		    "reinterpretAsUInt64(reinterpretAsString(tk_v)) AS b FROM %s",
		    K, K, exact_sum_cols, KSEL, m->column, unit.p, src.p);
		where_sql(&sql, q, m->kinds, m->column);
		bprintf(&sql, ")) GROUP BY %s) WHERE n > 0", K);
		if (q->nby)
			bprintf(&sql, " ORDER BY %s", keys.p);
		bprintf(&sql, " FORMAT TabSeparated");
	}
	buf res = {0};
	int rc = run(c, sql.p, &res, err);
	free(sql.p);
	free(keys.p);
	free(ksel.p);
	free(src.p);
	free(unit.p);
	if (rc)
		return -1;
	size_t cap = 0;
	for (char *line = res.p, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *f[TK_STORE_NKEYS + 6 + 3 * TK_STORE_NQ];
		size_t nf = split_tsv(line, f, sizeof f / sizeof f[0]);
		if (nf != q->nby + 6 + 3 * TK_STORE_NQ) {
			tk_store_groups_free(*out, *n);
			*out = NULL, *n = 0;
			free(res.p);
			return tk_error_set(err, "%s: unexpected answer to the percentile query", c->url);
		}
		TK_GROW(*out, cap, *n + 1);
		tk_store_group *g = &(*out)[(*n)++];
		memset(g, 0, sizeof *g);
		for (size_t i = 0; i < q->nby; i++)
			g->keys[i] = tk_xstrdup(f[i]);
		char **x = f + q->nby;
		g->count = strtoull(x[0], NULL, 10);
		/* as tk_summary_sorted divides its (compensated) sum */
		g->mean = exact_mean(x[1], g->count);
		g->min = strtod(x[2], NULL);
		g->max = strtod(x[3], NULL);
		for (int k = 0; k < TK_STORE_NQ; k++)
			g->q[k] = type7_value(g->count, x + 4 + 3 * k, tk_summary_pct_den[k]);
		if (m->profile &&
		    tk_store_unit_check(*out, *n - 1, x[4 + 3 * TK_STORE_NQ], x[5 + 3 * TK_STORE_NQ], err)) {
			tk_store_groups_free(*out, *n);
			*out = NULL, *n = 0;
			free(res.p);
			return -1;
		}
	}
	free(res.p);
	return 0;
}

static int top_once(ch *c, const tk_store_query *q, size_t limit, void *outv, size_t *n, tk_error *err)
{
	tk_store_hang **out = outv;
	buf sql = {0};
	const char *kinds = tk_store_kinds_sql(q->kind);
	if (range_fit(c, q, "duration")) /* a date range: its whole hours summarised */
		return range_top(c, q, limit, 0, out, n, err);
	if (c->sum && sum_covers(q, "duration", SUM_VALUES_KEYS)) {
		/* the top signatures by their summed counts first (the answer's order), then only for them
		 * sum_sig_values' counts per (signature, value) for the order statistics, sum_sigs' session
		 * sets and smallest ids merged per signature (a fleet's many rare signatures cost nothing) */
		buf top = {0};
		/* sum_sigs counts what sum_sig_values does, in ~100× fewer rows */
		bprintf(&top, " AND signature IN (SELECT signature FROM sum_sigs");
		where_sql(&top, q, kinds, NULL);
		bprintf(&top, " GROUP BY signature ORDER BY countMerge(ns) DESC, signature LIMIT %zu)", limit);
		bprintf(&sql, "SELECT signature, n, sessions, ");
		type7_cum_sql(&sql, 50, 100);
		bput(&sql, ", ", 2);
		type7_cum_sql(&sql, 95, 100);
		/* a value in several rows (versions, parts) sorts next to itself: no grouping again, as in
		 * sum_percentiles_sql (measured on 1 M hangs, ~0.1 s of server CPU for the GROUP BY of
		 * ~220 k rows on 18.16) */
		bprintf(&sql,
		        ", example FROM (SELECT signature, sum(tk_c) AS n, arraySort(groupArray((tk_v, tk_c))) AS t, "
		        "arrayMap(x -> tupleElement(x, 1), t) AS vs, arrayCumSum(arrayMap(x -> tupleElement(x, 2), t)) "
		        "AS cs FROM (SELECT signature, value AS tk_v, n AS tk_c FROM sum_sig_values");
		where_sql(&sql, q, kinds, NULL);
		bprintf(&sql,
		        "%s) GROUP BY signature) ANY INNER JOIN (SELECT signature, sessions, "
		        "example FROM (SELECT signature, minMerge(ex) AS example FROM sum_sigs",
		        top.p);
		where_sql(&sql, q, kinds, NULL);
		/* sessions: without a filter, sum_sig_sessions' rows of the signature, one per (kind,
		 * signature, session) when the table is one part (else their distinct sessions); filtered by
		 * app or version, the distinct sessions of sum_vsig_sessions' rows (a session may be in two
		 * apps). (FINAL cost more than uniqExact on 18.16, and its GROUP BY answered nothing.) */
		int any = 0;
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			any |= q->where[k] != NULL;
		bprintf(&sql, "%s GROUP BY signature) ANY INNER JOIN (SELECT signature, %s AS sessions FROM %s", top.p,
		        !any && (c->one_part & ONE_SIG_SESSIONS) ? "count()" : "uniqExact(session)",
		        any ? "sum_vsig_sessions" : "sum_sig_sessions");
		where_sql(&sql, q, kinds, NULL);
		bprintf(
		    &sql,
		    "%s GROUP BY signature) USING (signature)) USING (signature) ORDER BY n DESC, signature LIMIT %zu "
		    "FORMAT TabSeparated",
		    top.p, limit);
		free(top.p);
		goto ask;
	}
	bprintf(&sql, "SELECT signature, n, sessions, ");
	type7_sql(&sql, 50, 100);
	bput(&sql, ", ", 2);
	type7_sql(&sql, 95, 100);
	bprintf(&sql, ", example FROM (SELECT signature, count() AS n, uniqExact(session) AS sessions, ");
	bprintf(&sql, "arraySort(groupArray(assumeNotNull(duration))) AS s, min(id) AS example FROM ");
	reports_sql(&sql, c, q, tk_store_kinds_sql(q->kind), "duration");
	if (!c->dedupe)
		where_sql(&sql, q, tk_store_kinds_sql(q->kind), "duration");
	bprintf(&sql, " GROUP BY signature) ORDER BY n DESC, signature LIMIT %zu FORMAT TabSeparated", limit);
ask:;
	buf res = {0};
	int rc = run(c, sql.p, &res, err);
	free(sql.p);
	if (rc)
		return -1;
	size_t cap = 0;
	for (char *line = res.p, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *f[10];
		if (split_tsv(line, f, 10) != 10) {
			tk_store_hangs_free(*out, *n);
			*out = NULL, *n = 0;
			free(res.p);
			return tk_error_set(err, "%s: unexpected answer to the top-hangs query", c->url);
		}
		TK_GROW(*out, cap, *n + 1);
		tk_store_hang *x = &(*out)[(*n)++];
		/* zeroed: first_version and last_version are set later (store.c), and a raced answer is
		 * freed before that (with_dedupe's drop) */
		memset(x, 0, sizeof *x);
		x->signature = tk_xstrdup(f[0]);
		x->count = strtoull(f[1], NULL, 10);
		x->sessions = strtoull(f[2], NULL, 10);
		x->p50 = type7_value(x->count, f + 3, 100);
		x->p95 = type7_value(x->count, f + 6, 100);
		x->example = tk_xstrdup(f[9]);
	}
	free(res.p);
	return 0;
}

/* tk_store_top_counts: top_once's list, counts and least ids alone, in one query: from the
 * range path's hours, sum_sigs (what top_once orders by), or the reports. */
static int top_counts_once(ch *c, const tk_store_query *q, size_t limit, void *outv, size_t *n, tk_error *err)
{
	tk_store_hang **out = outv;
	const char *kinds = tk_store_kinds_sql(q->kind);
	if (range_fit(c, q, "duration"))
		return range_top(c, q, limit, 1, out, n, err);
	buf sql = {0};
	if (c->sum && sum_covers(q, "duration", SUM_VALUES_KEYS)) {
		bprintf(&sql, "SELECT signature, countMerge(ns) AS n, minMerge(ex) FROM sum_sigs");
		where_sql(&sql, q, kinds, NULL);
	} else {
		bprintf(&sql, "SELECT signature, count() AS n, min(id) FROM ");
		reports_sql(&sql, c, q, kinds, "duration");
		if (!c->dedupe)
			where_sql(&sql, q, kinds, "duration");
	}
	bprintf(&sql, " GROUP BY signature ORDER BY n DESC, signature LIMIT %zu FORMAT TabSeparated", limit);
	rtop t = {0};
	int rc = each_row(c, sql.p, NULL, 3, rtop_example, &t, "top-hangs", err);
	free(sql.p);
	if (rc) {
		tk_store_hangs_free(t.h, t.n);
		return -1;
	}
	*out = t.h, *n = t.n;
	return 0;
}

/* hang.rate, as sq_hang_rate answers it (store.h, docs/store.md "Hang rate"): per session (all six
 * keys) hang and foreground µs summed in integers (so both engines' sums are exact and equal), the
 * rate hs · 3600 / fg in double, then type 7 over the sorted rates and the pooled rate. */
#define CH_US "toInt64(assumeNotNull(duration) * 1000000.0 + 0.5)"
static int rate_once(ch *c, const tk_store_query *q, size_t limit, void *outv, size_t *n, tk_error *err)
{
	(void)limit;
	tk_store_group **out = outv;
	/* a day or hour bucket holds the sessions that started in it (their first report's ts, t0) */
	buf keys = {0}, sel = {0}, sql = {0};
	for (size_t i = 0; i < q->nby; i++) {
		bprintf(&keys, "%s%s", i ? ", " : "", tk_store_by_name(q->by[i]));
		if (q->by[i] == TK_STORE_BY_DAY)
			bprintf(&sel, "%ssubstring(toString(t0, 'UTC'), 1, 10) AS day", i ? ", " : "");
		else if (q->by[i] == TK_STORE_BY_HOUR)
			bprintf(&sel, "%sreplaceOne(substring(toString(t0, 'UTC'), 1, 13), ' ', 'T') AS hour",
			        i ? ", " : "");
		else
			bprintf(&sel, "%s%s", i ? ", " : "", tk_store_by_name(q->by[i]));
	}
	const char *K = q->nby ? keys.p : "tk_all";
	bprintf(&sql, "SELECT %s%sn, toString(ph), toString(pf), est, toString(s[1]), toString(s[n])",
	        q->nby ? keys.p : "", q->nby ? ", " : "");
	for (int k = 0; k < TK_STORE_NQ; k++) {
		bput(&sql, ", ", 2);
		type7_sql(&sql, tk_summary_pct_num[k], tk_summary_pct_den[k]);
	}
	bprintf(&sql,
	        " FROM (SELECT %s, count() AS n, arraySort(groupArray(rate)) AS s, sum(hs) AS ph, sum(fg) AS pf,"
	        " sum(e) AS est FROM (SELECT app, version, build, device, os, session, 1 AS tk_all, min(ts) AS t0,"
	        " sumIf(" CH_US ", kind = 'foreground') AS fg, countIf(kind = 'hang-time') > 0 AS e,"
	        " if(e, sumIf(" CH_US ", kind = 'hang-time'), sumIf(" CH_US ", kind IN " TK_STORE_HANG_KINDS
	        " AND assumeNotNull(duration) >= %.17g)) AS hs, hs * 3600.0 / fg AS rate FROM ",
	        q->nby ? sel.p : K, TK_STORE_RATE_MIN_HANG);
	/* the same per-session sums from sum_sessions (its keys are the six; t0 its minimum ts) */
	int sum = c->sum && !q->since && !q->until && !q->signature;
	if (sum) {
		sql.n = strstr(sql.p, " FROM (SELECT app, version, build, device, os, session, 1 AS tk_all") - sql.p;
		bprintf(&sql,
		        " FROM (SELECT app, version, build, device, os, session, 1 AS tk_all, minMerge(t0s) AS t0,"
		        " sumMerge(fgs) AS fg, sumMerge(htns) > 0 AS e, if(e, sumMerge(hts), sumMerge(hss)) AS hs,"
		        " hs * 3600.0 / fg AS rate FROM sum_sessions");
		where_sql(&sql, q, NULL, NULL);
	} else {
		reports_sql(&sql, c, q, TK_STORE_RATE_KINDS, "duration");
		if (!c->dedupe)
			where_sql(&sql, q, TK_STORE_RATE_KINDS, "duration");
	}
	bprintf(&sql, " GROUP BY app, version, build, device, os, session HAVING fg > 0) GROUP BY %s)", K);
	if (q->nby)
		bprintf(&sql, " ORDER BY %s", keys.p);
	bprintf(&sql, " FORMAT TabSeparated");
	buf res = {0};
	int rc = run(c, sql.p, &res, err);
	free(sql.p);
	free(keys.p);
	free(sel.p);
	if (rc)
		return -1;
	size_t cap = 0;
	for (char *line = res.p, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *f[TK_STORE_NKEYS + 6 + 3 * TK_STORE_NQ];
		size_t nf = split_tsv(line, f, sizeof f / sizeof f[0]);
		if (nf != q->nby + 6 + 3 * TK_STORE_NQ) {
			tk_store_groups_free(*out, *n);
			*out = NULL, *n = 0;
			free(res.p);
			return tk_error_set(err, "%s: unexpected answer to the hang-rate query", c->url);
		}
		TK_GROW(*out, cap, *n + 1);
		tk_store_group *g = &(*out)[(*n)++];
		memset(g, 0, sizeof *g);
		for (size_t i = 0; i < q->nby; i++)
			g->keys[i] = tk_xstrdup(f[i]);
		char **x = f + q->nby;
		g->count = strtoull(x[0], NULL, 10);
		g->mean = (double)strtoll(x[1], NULL, 10) * 3600.0 / (double)strtoll(x[2], NULL, 10);
		g->estimated = strtoull(x[3], NULL, 10);
		g->min = strtod(x[4], NULL);
		g->max = strtod(x[5], NULL);
		for (int k = 0; k < TK_STORE_NQ; k++)
			g->q[k] = type7_value(g->count, x + 6 + 3 * k, tk_summary_pct_den[k]);
	}
	free(res.p);
	return 0;
}

static void drop_groups(void *out, size_t *n)
{
	tk_store_groups_free(*(tk_store_group **)out, *n);
	*(tk_store_group **)out = NULL;
	*n = 0;
}

static void drop_hangs(void *out, size_t *n)
{
	tk_store_hangs_free(*(tk_store_hang **)out, *n);
	*(tk_store_hang **)out = NULL;
	*n = 0;
}

static int ch_percentiles(void *h, const tk_store_query *q, tk_store_group **out, size_t *n, tk_error *err)
{
	if (tk_store_is_hang_rate(q))
		return with_dedupe(h, rate_once, drop_groups, q, 0, out, n, err);
	return with_dedupe(h, percentiles_once, drop_groups, q, 0, out, n, err);
}

static int ch_top_hangs(void *h, const tk_store_query *q, size_t limit, tk_store_hang **out, size_t *n, tk_error *err)
{
	return with_dedupe(h, top_once, drop_hangs, q, limit, out, n, err);
}

static int ch_top_counts(void *h, const tk_store_query *q, size_t limit, tk_store_hang **out, size_t *n, tk_error *err)
{
	return with_dedupe(h, top_counts_once, drop_hangs, q, limit, out, n, err);
}

static int ch_count(void *h, uint64_t *n, tk_error *err)
{
	buf res = {0};
	if (run(h, "SELECT count() FROM (SELECT kind, id FROM reports LIMIT 1 BY kind, id)", &res, err))
		return -1;
	*n = res.p ? strtoull(res.p, NULL, 10) : 0;
	free(res.p);
	return 0;
}

/* ---- compact ---- */

static int scalar(ch *c, const char *sql, unsigned long long *v, tk_error *err)
{
	buf res = {0};
	if (run(c, sql, &res, err))
		return -1;
	*v = res.p ? strtoull(res.p, NULL, 10) : 0;
	free(res.p);
	return 0;
}

/* Wait until sql (a count) is 0, for at most about a minute. */
static int wait_zero(ch *c, const char *sql, const char *what, tk_error *err)
{
	for (int i = 0;; i++) {
		unsigned long long v;
		if (scalar(c, sql, &v, err))
			return -1;
		if (!v)
			return 0;
		if (i == 600)
			return tk_error_set(err, "%s: %s: still %llu after a minute", c->url, what, v);
		nanosleep(&(struct timespec){0, 100000000L}, NULL);
	}
}

/* Delete from tracekit_ingests the batches closed before t0 (or opened over an hour before it and
 * never closed: crashed). The tokens are picked first and named in the ALTERs: a mutation whose
 * condition reads the table it mutates evaluates it again for each part, so once a batch's
 * "closed" row was deleted from one part, its "opened" row in another looked open and stayed
 * (a later compaction then reported batches still open). At most ~100 kB of names an ALTER. */
static int prune_ingests(ch *c, unsigned long long t0, tk_error *err)
{
	char sql[512];
	snprintf(sql, sizeof sql,
	         "SELECT hex(token) FROM tracekit_ingests GROUP BY token HAVING max(at) < toDateTime(%llu) AND "
	         "(max(state) >= 1 OR max(at) < toDateTime(%llu) - 3600) FORMAT TabSeparated",
	         t0, t0);
	buf res = {0}, alter = {0};
	if (run(c, sql, &res, err))
		return -1;
	int rc = 0;
	for (char *p = res.p, *nl; !rc && p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p) - 1;
		if (!alter.n)
			bprintf(&alter, "ALTER TABLE tracekit_ingests DELETE WHERE token IN (");
		else
			bprintf(&alter, ",");
		bprintf(&alter, "unhex('%.*s')", (int)strspn(p, "0123456789ABCDEF"), p);
		if (alter.n > 100000 || !nl[1]) {
			bprintf(&alter, ")");
			rc = run(c, alter.p, NULL, err);
			alter.n = 0;
		}
	}
	free(res.p);
	free(alter.p);
	return rc;
}

/* Every table's parts merged (OPTIMIZE … FINAL), the summaries' too: parts hold a key once each,
 * so a summary in five parts (a fresh ingest of 1 M reports leaves that, and 18.16 merges no
 * further for a long while) has up to five rows a key to read and sum again at every query.
 * Measured on 1 M reports: the dashboard's pages ~1.5× cheaper (the comparison of two versions
 * 400 → 230 ms of CPU, top stacks 300 → 150) for ~2 s of merging. tracekit_ingests (a few rows a
 * batch, rewritten by prune_ingests' mutation next) is left to the server's own merges. */
static int optimize_all(ch *c, int summaries, tk_error *err)
{
	buf res = {0};
	if (run(c,
	        summaries ? "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine LIKE "
	                    "'%MergeTree' AND name LIKE 'sum\\_%' ORDER BY name FORMAT TabSeparated"
	                  : "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine LIKE "
	                    "'%MergeTree' AND name != 'tracekit_ingests' ORDER BY name FORMAT TabSeparated",
	        &res, err))
		return -1;
	int rc = 0;
	for (char *p = res.p, *nl; !rc && p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len && len < 200 &&
		    strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == len) {
			char sql[256];
			snprintf(sql, sizeof sql, "OPTIMIZE TABLE %.*s FINAL", (int)len, p);
			rc = run(c, sql, NULL, err);
		}
		if (!nl)
			break;
	}
	free(res.p);
	return rc;
}

/* After an ingest that stored added new reports: when they are at least half of the store (a bulk
 * load, into a new store or one doubled), its summaries' parts are merged (optimize_all), so the
 * first queries after it read one row a key. A load of 1 M reports leaves them in about five parts
 * each, which the server merges only as they age (not within the 9 minutes watched); the
 * dashboard's comparison of two date ranges took 270-320 ms on them, ~200 after merging them, which
 * costs ~1.8 s (the load itself 23-36 s). Bounded: at most the summaries of twice what it stored.
 * A smaller ingest (an hourly one into a large store) leaves merging to the server. */
static int ch_ingested(void *h, size_t added, tk_error *err)
{
	ch *c = h;
	unsigned long long stored;
	/* count() of the table, not its parts' rows: `reports` may be a Distributed table over shards
	 * (no parts here), whose count the shards answer from their parts' metadata */
	if (scalar(c, "SELECT count() FROM reports", &stored, err))
		return -1;
	if ((unsigned long long)added * 2 < stored)
		return 0;
	c->state_have = 0;
	return optimize_all(c, 1, err);
}

/* The extra copies of a report (two ingesters that both found it absent) differ in `ingested`, so
 * OPTIMIZE … DEDUPLICATE, which drops only identical rows, leaves them; it also crashes Debian's
 * 18.16 server when it merges several parts (measured: SIGSEGV). So the table is rebuilt with each
 * report once and swapped in by RENAME; a batch that was still inserting into the old table is
 * waited for and its rows copied over, so a concurrent ingest loses nothing. Then the batches
 * closed before the compaction leave tracekit_ingests (a mutation: ALTER … DELETE), and with them
 * the "raced" state that made every query read each report once. */
static int ch_compact(void *h, tk_store_compact_result *r, tk_error *err)
{
	ch *c = h;
	c->state_have = 0; /* a write of ours: the state is read again */
	unsigned long long t0, rows, distinct, before, after;
	if (scalar(c, "SELECT toUInt32(now())", &t0, err) || scalar(c, "SELECT count() FROM reports", &rows, err) ||
	    scalar(c, "SELECT uniqExact(kind, id) FROM reports", &distinct, err) ||
	    scalar(c, "SELECT uniqExact(token) FROM tracekit_ingests", &before, err))
		return -1;
	char sql[1024];
	if (rows > distinct) {
		unsigned long long t1;
		if (run_many(c,
		             "DROP TABLE IF EXISTS tracekit_compact_new;\n"
		             "CREATE TABLE tracekit_compact_new AS reports;\n"
		             "INSERT INTO tracekit_compact_new SELECT * FROM reports LIMIT 1 BY kind, id",
		             err) ||
		    scalar(c, "SELECT toUInt32(now())", &t1, err) ||
		    run_many(c,
		             "DROP TABLE IF EXISTS tracekit_compact_old;\n"
		             "RENAME TABLE reports TO tracekit_compact_old, tracekit_compact_new TO reports",
		             err))
			return -1;
		/* batches opened until the swap may be inserting into the old table: wait for them to close
		 * (open for over an hour: crashed), then copy what they added */
		snprintf(
		    sql, sizeof sql,
		    "SELECT count() FROM (SELECT max(state) AS s, min(at) AS a FROM tracekit_ingests GROUP BY token) "
		    "WHERE s = 0 AND a <= toDateTime(%llu) + 1 AND a > now() - 3600",
		    t1);
		if (wait_zero(c, sql,
		              "ingest batches in flight during the compaction (their rows are kept in "
		              "tracekit_compact_old)",
		              err) ||
		    run_many(c,
		             "INSERT INTO reports SELECT * FROM tracekit_compact_old WHERE (kind, id) NOT IN "
		             "(SELECT kind, id FROM reports) LIMIT 1 BY kind, id;\n"
		             "DROP TABLE tracekit_compact_old",
		             err))
			return -1;
	}
	/* the summaries counted every copy (and the copied late rows again): filled anew from the
	 * reports as they are now, as they are when their totals differ from the reports' (a DROP
	 * PARTITION of old days, say). An ingest racing the refill can leave them off by its batch:
	 * the totals then differ, queries read the reports, and the next compaction refills them. */
	unsigned long long ok = 0;
	if (rows == distinct && scalar(c, SUM_CHECK, &ok, err))
		return -1;
	if (!ok && (run_many(c, SUM_FILL, err) || run_many(c, SUM6_FILL, err) || run_many(c, SUM7_FILL, err) ||
	            run_many(c, SUM8_FILL, err)))
		return -1;
	if (optimize_all(c, 0, err))
		return -1;
	/* every copy stored before t0 is gone: the batches closed before then (and those open for over
	 * an hour before it: crashed) say nothing any more */
	unsigned long long open_batches, ignored, left;
	if (prune_ingests(c, t0, err) ||
	    wait_zero(c,
	              "SELECT count() FROM system.mutations WHERE database = currentDatabase() AND table = "
	              "'tracekit_ingests' AND is_done = 0",
	              "the pruning of tracekit_ingests", err) ||
	    scalar(c, "SELECT uniqExact(token) FROM tracekit_ingests", &after, err) ||
	    scalar(c, "SELECT count() - uniqExact(kind, id) FROM reports", &left, err) ||
	    ingest_state(c, &ignored, &open_batches, err))
		return -1;
	r->duplicates = rows - distinct > left ? rows - distinct - left : 0;
	r->pruned = before > after ? before - after : 0;
	r->open = open_batches;
	return 0;
}

/* ---- stacks, signatures, overview ----
 * The signature queries read every report once (LIMIT 1 BY kind, id) whatever the ingest state:
 * they answer for one signature. The overview reads the whole fleet, so it goes through with_dedupe
 * like the percentiles (reading ids for LIMIT 1 BY cost it ~5× on 1 M reports). */

/* The lines of a TabSeparated answer, each split into exactly nf fields; -1 if one is not. */
typedef int (*row_fn)(char **f, void *ctx);
static int rows_of(ch *c, buf *res, size_t nf, row_fn fn, void *ctx, const char *what, tk_error *err);
static int each_row(ch *c, const char *sql, const buf *ext, size_t nf, row_fn fn, void *ctx, const char *what,
                    tk_error *err)
{
	buf res = {0};
	if (post_ext(c, NULL, sql, strlen(sql), ext, &res, err))
		return -1;
	return rows_of(c, &res, nf, fn, ctx, what, err);
}

/* each_row of a query over the reports that build writes, reading each report once (c->dedupe) only
 * when with_dedupe would: the plain answer is fetched first and handed on only if no batch opened
 * or failed while it ran, else fetched again deduplicated. */
typedef void (*build_fn)(ch *c, buf *sql, const void *arg);
static int each_row_once(ch *c, build_fn build, const void *arg, size_t nf, row_fn fn, void *ctx, const char *what,
                         tk_error *err)
{
	buf sql = {0}, res = {0};
	if (state_ready(c, err))
		return -1;
	build(c, &sql, arg);
	int rc = post_ext(c, NULL, sql.p, sql.n, NULL, &res, err), ok = 1;
	if (!rc && !c->dedupe && (ok = answers_stand(c, err)) < 0)
		rc = -1;
	if (!rc && !ok) {
		free(res.p), free(sql.p);
		res = sql = (buf){0};
		c->dedupe = 1;
		c->sum = 0;
		build(c, &sql, arg);
		rc = post_ext(c, NULL, sql.p, sql.n, NULL, &res, err);
	}
	free(sql.p);
	if (rc) {
		free(res.p);
		return -1;
	}
	return rows_of(c, &res, nf, fn, ctx, what, err);
}

static int rows_of(ch *c, buf *resp, size_t nf, row_fn fn, void *ctx, const char *what, tk_error *err)
{
	buf res = *resp;
	int rc = 0;
	for (char *line = res.p, *next; !rc && line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *f[TK_STORE_NKEYS + 8];
		if (split_tsv(line, f, nf) != nf || fn(f, ctx))
			rc = tk_error_set(err, "%s: unexpected answer to the %s query", c->url, what);
	}
	free(res.p);
	return rc;
}

static double tsv_num(const char *f)
{
	char *end;
	double v = strtod(f, &end);
	return end == f ? NAN : v; /* \N: NULL */
}

static int report_row(char **f, void *ctx)
{
	tk_store_report *r = ctx;
	if (r->kind)
		return 0; /* a racing ingester's copy */
	r->kind = tk_xstrdup(f[0]);
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		r->keys[k] = tk_xstrdup(f[1 + k]);
	r->rkey = tk_xstrdup(f[7]);
	r->thread = tk_xstrdup(f[8]);
	r->signature = tk_xstrdup(f[9]);
	r->time = strtod(f[10], NULL);
	r->duration = tsv_num(f[11]);
	r->avg_cpu = tsv_num(f[12]);
	r->samples = strtoull(f[13], NULL, 10);
	return 0;
}

static int folded_row(char **f, void *ctx)
{
	char **folded = ctx;
	free(*folded);
	*folded = tk_xstrdup(f[0]);
	return 0;
}

static int ch_report_get(void *h, const char *id, tk_store_report *out, tk_error *err)
{
	ch *c = h;
	int rc = 0;
	/* the id is the key's second column (after kind): the index narrows little, so the id is read
	 * first (PREWHERE) and the other columns only for its row; a report with stacks has its day in
	 * report_stacks (ordered by id), which leaves one day's partition (1 M reports: ~300 ms of
	 * server CPU → ~25 ms); one without is looked up in every partition */
	for (int pass = 0; pass < 2 && !rc && !out->kind; pass++) {
		buf sql = {0};
		/* NULL numbers come back as \N (toString of a Nullable) */
		bprintf(
		    &sql,
		    "SELECT kind, app, version, build, device, os, session, rkey, thread, signature, toString(time), "
		    "ifNull(toString(duration), '\\\\N'), ifNull(toString(avg_cpu), '\\\\N'), samples FROM reports "
		    "PREWHERE id = '%s'%s%s%s LIMIT 1 FORMAT TabSeparated",
		    id, pass ? "" : " WHERE ts IN (SELECT ts FROM report_stacks WHERE id = '", pass ? "" : id,
		    pass ? "" : "')");
		rc = each_row(c, sql.p, NULL, 14, report_row, out, "report", err);
		free(sql.p);
	}
	if (rc || !out->kind)
		return rc ? -1 : 1;
	snprintf(out->id, sizeof out->id, "%s", id);
	buf sql = {0};
	bprintf(&sql,
	        "SELECT any(folded) FROM stacks WHERE hash IN (SELECT stack FROM report_stacks WHERE id = '%s') "
	        "GROUP BY hash LIMIT 1 FORMAT TabSeparated",
	        id);
	rc = each_row(c, sql.p, NULL, 1, folded_row, &out->folded, "report stacks", err);
	free(sql.p);
	if (!out->folded)
		out->folded = tk_xstrdup("");
	return rc ? -1 : 0;
}

/* The selected reports: (SELECT cols FROM reports WHERE …), with once each report once (LIMIT 1 BY
 * kind, id). */
static void sel_reports(buf *b, int once, const tk_store_query *q, const char *kinds, const char *cols)
{
	bprintf(b, "(SELECT %s FROM reports", cols);
	tk_store_query rest = *q;
	if (q->signature) {
		/* one signature's rows: its column read first and the others only where it matches
		 * (the top signature of 1 M hangs: ~0.45 s → ~0.3 s of server CPU) */
		bprintf(b, " PREWHERE signature = ");
		put_quoted(b, q->signature);
		rest.signature = NULL;
	}
	where_sql(b, &rest, kinds, "duration");
	bprintf(b, "%s)", once ? " LIMIT 1 BY kind, id" : "");
}

typedef struct stack_acc {
	char ***folded;
	uint64_t **times;
	size_t *n, cap, tcap;
	buf hashes;
} stack_acc;

static int hash_row(char **f, void *ctx)
{
	stack_acc *a = ctx;
	TK_GROW(*a->folded, a->cap, *a->n + 1);
	TK_GROW(*a->times, a->tcap, *a->n + 1);
	(*a->folded)[*a->n] = tk_xstrdup(f[0]); /* the hash, replaced by its text below */
	(*a->times)[(*a->n)++] = strtoull(f[1], NULL, 10);
	bprintf(&a->hashes, "%s\n", f[0]);
	return 0;
}

typedef struct text_acc {
	stack_acc *a;
	size_t at; /* both answers are sorted by hash */
} text_acc;

static int text_row(char **f, void *ctx)
{
	text_acc *t = ctx;
	stack_acc *a = t->a;
	while (t->at < *a->n && strcmp((*a->folded)[t->at], f[0]) < 0)
		t->at++;
	if (t->at < *a->n && strcmp((*a->folded)[t->at], f[0]) == 0) {
		free((*a->folded)[t->at]);
		(*a->folded)[t->at++] = tk_xstrdup(f[1]);
	}
	return 0;
}

/* Whether the signature summaries (schema 7) hold q: one signature, filters app and version at most,
 * no time range. */
static int sig_sum_fit(const tk_store_query *q)
{
	tk_store_query t = *q;
	t.signature = NULL;
	return q->signature && sum_covers(&t, "duration", SUM_VALUES_KEYS);
}

/* "SELECT cols FROM table WHERE kind IN kinds, q's filters and signature extra": the signature first
 * in both tables' keys, so its rows are a range of the index. */
static void sig_sum_sql(buf *sql, const char *cols, const char *table, const tk_store_query *q, const char *kinds,
                        const char *extra)
{
	bprintf(sql, "SELECT %s FROM %s", cols, table);
	where_sql(sql, q, kinds, NULL);
	bprintf(sql, "%s", extra);
}

static void stack_acc_free(stack_acc *a)
{
	for (size_t i = 0; i < *a->n; i++)
		free((*a->folded)[i]);
	free(*a->folded), free(*a->times);
	*a->folded = NULL, *a->times = NULL, *a->n = 0;
	free(a->hashes.p);
	a->hashes = (buf){0};
	a->cap = a->tcap = 0;
}

static int ch_sig_stacks(void *h, const tk_store_query *q, const char *kinds, size_t max_reports, char ***folded,
                         uint64_t **times, size_t *n, tk_error *err)
{
	ch *c = h;
	buf sql = {0};
	stack_acc a = {.folded = folded, .times = times, .n = n};
	int rc = 0;
	if (!max_reports && sig_sum_fit(q)) { /* every report's: sum_sig_keys' stacks (what 2) */
		if (state_ready(c, err))
			return -1;
		if (c->sum) {
			sig_sum_sql(&sql, "key, sum(n)", "sum_sig_keys", q, kinds,
			            " AND what = 2 AND key != '' GROUP BY key ORDER BY key FORMAT TabSeparated");
			rc = each_row(c, sql.p, NULL, 2, hash_row, &a, "signature stacks", err);
			free(sql.p);
			sql = (buf){0};
			int still = rc ? -1 : answers_stand(c, err);
			if (still < 0) {
				stack_acc_free(&a);
				return -1;
			}
			if (still)
				goto texts;
			stack_acc_free(&a);
		}
	}
	/* each report once per text: a racing ingester's copy of a report links the same text (ids name
	 * the content), so counting distinct ids per text is counting reports; it was a grouping by id
	 * first (any(stack)), measured on the top signature of 1 M hangs ~1.95 s → ~0.9 s of server CPU */
	bprintf(&sql, "SELECT stack, uniqExact(id) FROM report_stacks WHERE id IN (SELECT id FROM ");
	/* a set of ids: a report stored twice is in it once, so only a limited list needs LIMIT 1 BY */
	sel_reports(&sql, max_reports > 0, q, kinds, "kind, id");
	if (max_reports)
		bprintf(&sql, " ORDER BY id LIMIT %zu", max_reports);
	bprintf(&sql, ") GROUP BY stack ORDER BY stack FORMAT TabSeparated");
	rc = each_row(c, sql.p, NULL, 2, hash_row, &a, "signature stacks", err);
	free(sql.p);
texts:
	if (!rc && *n) {
		text_acc t = {&a, 0};
		rc = each_row(c,
		              "SELECT hash, any(folded) FROM stacks WHERE hash IN ids GROUP BY hash ORDER BY hash "
		              "FORMAT TabSeparated",
		              &a.hashes, 2, text_row, &t, "signature stacks", err);
		for (size_t i = 0; !rc && i < *n; i++)
			if (strlen((*folded)[i]) == 32 && !strchr((*folded)[i], ' ')) /* a hash without its text */
				rc = tk_error_set(err, "%s: stacks %s are missing", c->url, (*folded)[i]);
	}
	free(a.hashes.p);
	return rc;
}

typedef struct tally_acc {
	tk_store_tally *t;
	size_t n, cap;
} tally_acc;

static int tally_row(char **f, void *ctx)
{
	tally_acc *a = ctx;
	TK_GROW(a->t, a->cap, a->n + 1);
	a->t[a->n++] = (tk_store_tally){tk_xstrdup(f[0]), strtoull(f[1], NULL, 10)};
	return 0;
}

static int tally_cmp(const void *x, const void *y)
{
	return strcmp(((const tk_store_tally *)x)->value, ((const tk_store_tally *)y)->value);
}

static int example_row(char **f, void *ctx)
{
	tk_store_signature_info *o = ctx;
	o->examples[o->nexamples++] = tk_xstrdup(f[0]);
	return 0;
}

/* tk_store_ops.sig_detail from the summaries (sig_sum_fit): the versions' counts and every duration
 * from sum_sig_durations (its states as stored: a version's rows are one per part not merged yet),
 * the devices from sum_sig_keys, and the least ids from sum_sig_ids' range of the signature's ids
 * below a bound where that holds enough (ids are hex digests: the k least of c reports are expected
 * below k/c of the range; the bound is set 16× above that, and the ids asked again without one where
 * fewer came back). */
static int ch_sig_detail(void *h, const tk_store_query *q, const char *kinds, size_t max_examples,
                         tk_store_signature_info *out, tk_error *err)
{
	ch *c = h;
	if (!sig_sum_fit(q))
		return 1;
	if (state_ready(c, err))
		return -1;
	if (!c->sum)
		return 1;
	buf sql = {0}, res = {0};
	sig_sum_sql(&sql, "version, v", "sum_sig_durations", q, kinds, " FORMAT RowBinary");
	int rc = run(c, sql.p, &res, err);
	free(sql.p);
	if (rc)
		return -1;
	rbin r = {(const unsigned char *)res.p, (const unsigned char *)res.p + res.n, 0};
	size_t nv = 0, vcap = 0, tcap = 0;
	while (!r.bad && r.p < r.end) {
		char *ver = rbin_str(&r);
		size_t before = nv;
		if (!ver || rbin_values(&r, &out->durations, &nv, &vcap)) {
			free(ver);
			break;
		}
		size_t i = 0; /* a handful of versions: compared in turn */
		while (i < out->nversions && strcmp(out->versions[i].value, ver) != 0)
			i++;
		if (i == out->nversions) {
			TK_GROW(out->versions, tcap, out->nversions + 1);
			out->versions[out->nversions++] = (tk_store_tally){ver, 0};
		} else {
			free(ver);
		}
		out->versions[i].count += nv - before;
	}
	free(res.p);
	if (r.bad)
		return tk_error_set(err, "%s: unexpected answer to the signature query", c->url);
	out->count = nv;
	if (!out->versions)
		out->versions = tk_xmalloc(sizeof *out->versions);
	qsort(out->versions, out->nversions, sizeof *out->versions, tally_cmp);
	if (!out->durations)
		out->durations = tk_xmalloc(sizeof *out->durations);
	tk_sort_doubles(out->durations, nv);
	tally_acc dev = {0};
	sql = (buf){0};
	sig_sum_sql(&sql, "key, sum(n)", "sum_sig_keys", q, kinds, " AND what = 0 GROUP BY key FORMAT TabSeparated");
	rc = each_row(c, sql.p, NULL, 2, tally_row, &dev, "signature", err);
	free(sql.p);
	out->devices = dev.t ? dev.t : tk_xmalloc(sizeof *out->devices);
	qsort(out->devices, dev.n, sizeof *out->devices, tally_cmp);
	out->ndevices = dev.n;
	/* its sessions: sum_sig_sessions' rows, filtered by app or version sum_vsig_sessions' (a session
	 * may be in two apps), as top hangs count them */
	unsigned long long sessions = 0;
	sql = (buf){0};
	sig_sum_sql(&sql, "uniqExact(session)",
	            q->where[TK_STORE_APP] || q->where[TK_STORE_VERSION] ? "sum_vsig_sessions" : "sum_sig_sessions", q,
	            kinds, " FORMAT TabSeparated");
	if (!rc)
		rc = scalar(c, sql.p, &sessions, err);
	free(sql.p);
	out->sessions = sessions;
	size_t k = out->count < max_examples ? (size_t)out->count : max_examples;
	out->examples = tk_xmalloc((k ? k : 1) * sizeof *out->examples);
	for (int pass = 0; !rc && k && pass < 2 && out->nexamples < k; pass++) {
		/* the share of the ids' range, in 1/2^32 */
		double below = ceil(16.0 * (double)k / (double)out->count * 4294967296.0);
		if (pass == 0 && below > 4294967295.0)
			continue;
		for (size_t i = 0; i < out->nexamples; i++)
			free(out->examples[i]);
		out->nexamples = 0;
		char bound[64] = "";
		if (pass == 0)
			snprintf(bound, sizeof bound, " AND id < '%08llx'", (unsigned long long)below);
		sql = (buf){0};
		sig_sum_sql(&sql, "id", "sum_sig_ids", q, kinds, bound);
		bprintf(&sql, " ORDER BY id LIMIT %zu FORMAT TabSeparated", k);
		rc = each_row(c, sql.p, NULL, 1, example_row, out, "signature", err);
		free(sql.p);
	}
	int still = rc ? -1 : answers_stand(c, err);
	if (still <= 0)
		return still < 0 ? -1 : 1; /* a batch opened meanwhile: the reports answer */
	if (out->nexamples != k)
		return tk_error_set(err, "%s: the signature's examples are missing from sum_sig_ids", c->url);
	return 0;
}

typedef struct rows_acc {
	tk_store_sigrow **rows;
	size_t *n, cap;
} rows_acc;

static int sig_row(char **f, void *ctx)
{
	rows_acc *a = ctx;
	TK_GROW(*a->rows, a->cap, *a->n + 1);
	(*a->rows)[(*a->n)++] = (tk_store_sigrow){tk_xstrdup(f[0]), tk_xstrdup(f[1]), tk_xstrdup(f[2]),
	                                          tk_xstrdup(f[3]), strtod(f[4], NULL)};
	return 0;
}

typedef struct sel_arg {
	const tk_store_query *q;
	const char *kinds;
	int by_version;
} sel_arg;

static void sig_rows_sql(ch *c, buf *sql, const void *arg)
{
	const sel_arg *s = arg;
	bprintf(sql, "SELECT id, version, device, session, toString(assumeNotNull(duration)) FROM ");
	sel_reports(sql, c->dedupe, s->q, s->kinds, "kind, id, version, device, session, duration");
	bprintf(sql, " FORMAT TabSeparated");
}

static int ch_sig_rows(void *h, const tk_store_query *q, const char *kinds, tk_store_sigrow **rows, size_t *n,
                       tk_error *err)
{
	rows_acc a = {rows, n, 0};
	return each_row_once(h, sig_rows_sql, &(sel_arg){q, kinds, 0}, 5, sig_row, &a, "signature", err);
}

/* tk_store_distribution's rows (tk_store_ops.values). */
typedef struct values_acc {
	int (*row)(void *ctx, const char *version, double v);
	void *ctx;
} values_acc;

static int values_row(char **f, void *ctx)
{
	values_acc *a = ctx;
	double v = strtod(f[1], NULL);
	for (unsigned long long k = strtoull(f[2], NULL, 10); k; k--)
		if (a->row(a->ctx, f[0], v))
			return -1;
	return 0;
}

/* Each distinct value once with its count (1 M hangs hold ~5 000 distinct durations: the answer is
 * ~20 k lines, not 1 M; measured ~1.8 s → ~0.2 s of server CPU), in the order of the values. */
static void values_sql(ch *c, buf *sql, const void *arg)
{
	const sel_arg *s = arg;
	if (c->sum && sum_covers(s->q, "duration", SUM_VALUES_KEYS)) { /* sum_values: the counts summed */
		bprintf(sql, "SELECT %s, toString(tk_v), sum(n) FROM (SELECT version, value AS tk_v, n FROM sum_values",
		        s->by_version ? "version" : "''");
		where_sql(sql, s->q, s->kinds, NULL);
		bprintf(sql, ") GROUP BY %stk_v ORDER BY %stk_v FORMAT TabSeparated", s->by_version ? "version, " : "",
		        s->by_version ? "version, " : "");
		return;
	}
	bprintf(sql, "SELECT %s, toString(tk_v), count() FROM (SELECT version, assumeNotNull(duration) AS tk_v FROM ",
	        s->by_version ? "version" : "''");
	sel_reports(sql, c->dedupe, s->q, s->kinds, "kind, id, version, duration");
	bprintf(sql, ") GROUP BY %stk_v ORDER BY %stk_v FORMAT TabSeparated", s->by_version ? "version, " : "",
	        s->by_version ? "version, " : "");
}

/* The cache's entry holding a date range's durations (range_ready), whose arrays the bulk ops hand
 * over: 0 with *e, 1 when q is no date range the summaries answer (the caller reads otherwise), -1
 * with err. */
static int range_entry(ch *c, const tk_store_query *q, const char *keys, size_t nk, const char *table,
                       const char *kinds, char *const *sigs, size_t n, rcache **e, tk_error *err)
{
	tk_store_query t = *q;
	t.since = t.until = 0;
	if (!(q->since > 0 || q->until > 0) || !sum_covers(&t, "duration", SUM_VALUES_KEYS))
		return 1;
	const racc *r;
	int fit = range_ready(c, q, keys, nk, table, kinds, sigs, n, &r, err);
	if (fit <= 0)
		return fit < 0 ? -1 : 1;
	if (!(*e = rcache_of(c, r)))
		return tk_error_set(err, "%s: a date range's values lost", c->url), -1;
	return 0;
}

/* tk_store_ops.values_bulk: a date range's durations (range_values), each group's array handed
 * over and the cache's entry forgotten (the comparison page asks a range's percentiles, then its
 * histogram, then no more: a copy of ~0.9 M values is ~7 MB of fresh pages to fault in). */
static int ch_values_bulk(void *h, const tk_store_query *q, const char *kinds, const char *col, int by_version,
                          int (*rows)(void *ctx, const char *version, double *v, size_t n), void *ctx, tk_error *err)
{
	rcache *e;
	int fit = strcmp(col, "duration") != 0 ? 1
	                                       : range_entry(h, q, by_version ? "version" : "", by_version,
	                                                     "sum_hour_durations", kinds, NULL, 0, &e, err);
	if (fit)
		return fit; /* 1: no date range the summaries answer: ch_values */
	int rc = 0;
	for (size_t g = 0; g < e->a.n && !rc; g++) { /* each group's values in order, as values_sql's ORDER BY */
		double *v = e->a.g[g].v;
		size_t n = e->a.g[g].n;
		e->a.g[g].v = NULL, e->a.g[g].n = e->a.g[g].cap = 0;
		rc = rows(ctx, by_version ? e->a.g[g].k[0] : "", v, n);
	}
	rcache_drop(e);
	return rc ? -1 : 0;
}

static int ch_values(void *h, const tk_store_query *q, const char *kinds, const char *col, int by_version,
                     int (*row)(void *ctx, const char *version, double v), void *ctx, tk_error *err)
{
	if (strcmp(col, "duration") != 0)
		return tk_error_set(err, "values of %s: not stored", col), -1;
	const racc *r;
	int fit =
	    range_ready(h, q, by_version ? "version" : "", by_version, "sum_hour_durations", kinds, NULL, 0, &r, err);
	if (fit < 0)
		return -1;
	if (fit) { /* each group's values in order, as values_sql's ORDER BY */
		int rc = 0;
		for (size_t g = 0; g < r->n && !rc; g++)
			for (size_t i = 0; i < r->g[g].n && !rc; i++)
				rc = row(ctx, by_version ? r->g[g].k[0] : "", r->g[g].v[i]);
		return rc ? -1 : 0;
	}
	values_acc a = {row, ctx};
	return each_row_once(h, values_sql, &(sel_arg){q, kinds, by_version}, 3, values_row, &a, "values", err);
}

/* tk_store_ops.sigs_values: every listed signature's (value, count) lines in one query. */
typedef struct sigs_arg {
	const tk_store_query *q;
	const char *kinds;
	char *const *sigs;
	size_t n;
	int (*row)(void *ctx, size_t i, double v, uint64_t count);
	void *ctx;
} sigs_arg;

static void sigs_values_sql(ch *c, buf *sql, const void *arg)
{
	const sigs_arg *s = arg;
	if (c->sum && sum_covers(s->q, "duration", SUM_VALUES_KEYS)) {
		bprintf(sql, "SELECT signature, toString(value), n FROM sum_sig_values");
		where_sql(sql, s->q, s->kinds, NULL);
		bprintf(sql, " AND signature IN (");
		for (size_t i = 0; i < s->n; i++) {
			if (i)
				bput(sql, ", ", 2);
			put_quoted(sql, s->sigs[i]);
		}
		bprintf(sql, ") FORMAT TabSeparated"); /* a value in several rows: the caller adds the counts */
		return;
	}
	bprintf(sql, "SELECT signature, toString(tk_v), count() FROM (SELECT kind, id, signature, "
	             "assumeNotNull(duration) AS tk_v FROM reports");
	where_sql(sql, s->q, s->kinds, "duration");
	bprintf(sql, " AND signature IN (");
	for (size_t i = 0; i < s->n; i++) {
		if (i)
			bput(sql, ", ", 2);
		put_quoted(sql, s->sigs[i]);
	}
	bprintf(sql, ")%s) GROUP BY signature, tk_v FORMAT TabSeparated", c->dedupe ? " LIMIT 1 BY kind, id" : "");
}

static int sigs_row(char **f, void *ctx)
{
	const sigs_arg *s = ctx;
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->sigs[i], f[0]) == 0)
			return s->row(s->ctx, i, strtod(f[1], NULL), strtoull(f[2], NULL, 10));
	return -1;
}

/* tk_store_ops.sigs_values_bulk: a date range's durations of the listed signatures (range_values),
 * each one's array handed over and the cache's entry forgotten, as ch_values_bulk. */
static int ch_sigs_values_bulk(void *h, const tk_store_query *q, const char *kinds, char *const *sigs, size_t n,
                               int (*rows)(void *ctx, size_t i, double *v, size_t nv), void *ctx, tk_error *err)
{
	rcache *e;
	int fit = !n ? 1 : range_entry(h, q, "signature", 1, "sum_sig_hours", kinds, sigs, n, &e, err);
	if (fit)
		return fit; /* 1: no date range the summaries answer: ch_sigs_values */
	int rc = 0;
	for (size_t g = 0; g < e->a.n && !rc; g++) {
		size_t i = 0;
		while (i < n && strcmp(sigs[i], e->a.g[g].k[0]) != 0)
			i++;
		if (i == n) /* another signature the cache holds */
			continue;
		double *v = e->a.g[g].v;
		size_t nv = e->a.g[g].n;
		e->a.g[g].v = NULL, e->a.g[g].n = e->a.g[g].cap = 0;
		rc = rows(ctx, i, v, nv);
	}
	rcache_drop(e);
	return rc ? -1 : 0;
}

static int ch_sigs_values(void *h, const tk_store_query *q, const char *kinds, char *const *sigs, size_t n,
                          int (*row)(void *ctx, size_t i, double v, uint64_t count), void *ctx, tk_error *err)
{
	if (!n)
		return 0;
	const racc *r;
	int fit = range_ready(h, q, "signature", 1, "sum_sig_hours", kinds, sigs, n, &r, err);
	if (fit < 0)
		return -1;
	if (fit) { /* each listed signature's values in order, a value once with its count */
		int rc = 0;
		for (size_t g = 0; g < r->n && !rc; g++) {
			size_t i = 0;
			while (i < n && strcmp(sigs[i], r->g[g].k[0]) != 0)
				i++;
			if (i == n) /* another signature the cache holds */
				continue;
			const double *v = r->g[g].v;
			for (size_t j = 0, k; j < r->g[g].n && !rc; j = k) {
				for (k = j + 1; k < r->g[g].n && v[k] == v[j];)
					k++;
				rc = row(ctx, i, v[j], k - j);
			}
		}
		return rc ? -1 : 0;
	}
	sigs_arg a = {q, kinds, sigs, n, row, ctx};
	return each_row_once(h, sigs_values_sql, &a, 3, sigs_row, &a, "signatures' durations", err);
}

typedef struct vers_acc {
	char *const *sigs;
	char **versions;
	size_t n;
} vers_acc;

static int vers_row(char **f, void *ctx)
{
	vers_acc *a = ctx;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->sigs[i], f[0]) == 0) {
			size_t len = a->versions[i] ? strlen(a->versions[i]) : 0;
			a->versions[i] = tk_xrealloc(a->versions[i], len + strlen(f[1]) + 2);
			sprintf(a->versions[i] + len, "%s\n", f[1]);
		}
	return 0;
}

static void sig_versions_sql(ch *c, buf *sql, const void *arg)
{
	const sigs_arg *s = arg;
	/* sum_sigs has a row per (kind, app, version, signature) of reports with a duration */
	int sum = c->sum && sum_covers(s->q, "duration", SUM_VALUES_KEYS);
	if (c->sum && range_fit(c, s->q, "duration")) { /* a date range: sum_sig_hours' whole hours */
		buf in = {0};
		sigs_in(&in, s->sigs, s->n);
		bprintf(sql, "SELECT DISTINCT signature, version FROM (SELECT signature, version");
		range_sum_from(sql, s->q, s->kinds, "sum_sig_hours", in.p);
		bprintf(sql, " UNION ALL SELECT signature, version");
		range_part_from(sql, s->q, s->kinds, in.p);
		bprintf(sql, ") FORMAT TabSeparated");
		free(in.p);
		return;
	}
	bprintf(sql, "SELECT DISTINCT signature, version FROM %s", sum ? "sum_sigs" : "reports");
	where_sql(sql, s->q, s->kinds, sum ? NULL : "duration");
	bprintf(sql, " AND signature IN (");
	for (size_t i = 0; i < s->n; i++) {
		if (i)
			bput(sql, ", ", 2);
		put_quoted(sql, s->sigs[i]);
	}
	bprintf(sql, ") FORMAT TabSeparated");
}

static int ch_sig_versions(void *h, const tk_store_query *q, const char *kinds, char *const *sigs, size_t n,
                           char **versions, tk_error *err)
{
	vers_acc a = {sigs, versions, n};
	sigs_arg s = {q, kinds, sigs, n, NULL, NULL};
	int rc = each_row_once(h, sig_versions_sql, &s, 2, vers_row, &a, "versions", err);
	for (size_t i = 0; i < n; i++)
		if (!versions[i])
			versions[i] = tk_xstrdup("");
	return rc;
}

typedef struct ov_acc {
	tk_store_overview **out;
	size_t *n, cap, nby;
	int pass;
} ov_acc;

static int ov_row(char **f, void *ctx)
{
	ov_acc *a = ctx;
	TK_GROW(*a->out, a->cap, *a->n + 1);
	tk_store_overview *o = &(*a->out)[(*a->n)++];
	memset(o, 0, sizeof *o);
	for (size_t i = 0; i < a->nby; i++)
		o->keys[i] = tk_xstrdup(f[i]);
	if (a->pass) {
		o->sessions = strtoull(f[a->nby], NULL, 10);
	} else {
		o->kinds = tk_xcalloc(1, sizeof *o->kinds);
		o->nkinds = 1;
		o->kinds[0] = (tk_store_tally){tk_xstrdup(f[a->nby]), strtoull(f[a->nby + 1], NULL, 10)};
	}
	return 0;
}

static int overview_once(ch *c, const tk_store_query *q, size_t limit, void *outv, size_t *n, tk_error *err)
{
	(void)limit;
	tk_store_overview **out = outv;
	buf keys = {0}, ksel = {0};
	for (size_t i = 0; i < q->nby; i++) {
		bprintf(&keys, "%s, ", tk_store_by_name(q->by[i]));
		by_sql(&ksel, q->by[i]);
		bput(&ksel, ", ", 2);
	}
	ov_acc a = {out, n, 0, q->nby, 0};
	int rc = 0;
	for (int pass = 0; pass < 2 && !rc; pass++) {
		a.pass = pass;
		buf sql = {0};
		if (c->sum && sum_covers(q, "duration", SUM_VALUES_KEYS)) { /* sum_groups' counts and sessions */
			bprintf(&sql, "SELECT %s%s FROM sum_groups", ksel.p ? ksel.p : "",
			        pass ? "uniqExactMerge(sess)" : "kind, countMerge(ns)");
			where_sql(&sql, q, NULL, NULL);
			bprintf(&sql, " GROUP BY %s%s ORDER BY %s%s FORMAT TabSeparated", keys.p ? keys.p : "",
			        pass ? "1" : "kind", keys.p ? keys.p : "", pass ? "1" : "kind");
			rc = each_row(c, sql.p, NULL, q->nby + (pass ? 1 : 2), ov_row, &a, "overview", err);
			free(sql.p);
			continue;
		}
		/* each report once (LIMIT 1 BY kind, id) only while some batch is not closed clean */
		bprintf(&sql, "SELECT %s%s FROM %s", ksel.p ? ksel.p : "",
		        pass ? "uniqExact(session)" : "kind, count()",
		        c->dedupe ? "(SELECT kind, id, app, version, build, device, os, session, ts FROM reports"
		                  : "reports");
		where_sql(&sql, q, NULL, NULL);
		bprintf(&sql, "%s GROUP BY %s%s ORDER BY %s%s FORMAT TabSeparated",
		        c->dedupe ? " LIMIT 1 BY kind, id)" : "", keys.p ? keys.p : "", pass ? "1" : "kind",
		        keys.p ? keys.p : "", pass ? "1" : "kind");
		rc = each_row(c, sql.p, NULL, q->nby + (pass ? 1 : 2), ov_row, &a, "overview", err);
		free(sql.p);
	}
	free(keys.p);
	free(ksel.p);
	return rc;
}

/* A change token (the dashboard's answer cache): every INSERT, merge or mutation of the store's
 * tables makes a new active part with a new name (its block numbers), so a hash over the active
 * parts' names changes whenever the data may have. The connection's serial goes in too, as SQLite's
 * does: another store opened later at the same address is not this one. */
static int ch_changes(void *h, uint64_t *token, tk_error *err)
{
	ch *c = h;
	buf sql = {0}, res = {0};
	bprintf(&sql, "SELECT groupBitXor(cityHash64(table, name)), count(), sum(rows) FROM system.parts WHERE "
	              "active AND database = ");
	put_quoted(&sql, c->db);
	bprintf(&sql, " FORMAT TabSeparated");
	int rc = run(c, sql.p, &res, err);
	free(sql.p);
	if (rc)
		return -1;
	char *end = NULL;
	unsigned long long x = res.p ? strtoull(res.p, &end, 10) : 0, parts = end ? strtoull(end, &end, 10) : 0,
	                   rows = end ? strtoull(end, NULL, 10) : 0;
	free(res.p);
	*token = c->serial << 48 ^ x ^ tk_hash_u64(parts << 40 ^ rows);
	return 0;
}

static void drop_overview(void *out, size_t *n)
{
	tk_store_overview_free(*(tk_store_overview **)out, *n);
	*(tk_store_overview **)out = NULL;
	*n = 0;
}

static int ch_overview(void *h, const tk_store_query *q, tk_store_overview **out, size_t *n, tk_error *err)
{
	return with_dedupe(h, overview_once, drop_overview, q, 0, out, n, err);
}

const tk_store_ops tk_store_clickhouse = {
    .name = "clickhouse",
    .open = ch_open,
    .close = ch_close,
    .put = ch_put,
    .percentiles = ch_percentiles,
    .top_hangs = ch_top_hangs,
    .top_counts = ch_top_counts,
    .view_begin = ch_view_begin,
    .view_end = ch_view_end,
    .ingested = ch_ingested,
    .count = ch_count,
    .put_profiles = ch_put_profiles,
    .compact = ch_compact,
    .report_get = ch_report_get,
    .sig_stacks = ch_sig_stacks,
    .sig_rows = ch_sig_rows,
    .values = ch_values,
    .values_bulk = ch_values_bulk,
    .sigs_values = ch_sigs_values,
    .sigs_values_bulk = ch_sigs_values_bulk,
    .sig_versions = ch_sig_versions,
    .overview = ch_overview,
    .changes = ch_changes,
    .sig_detail = ch_sig_detail,
};
