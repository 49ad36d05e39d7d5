/* sqlite:PATH — the embedded backend. One file, WAL, one transaction per batch, the schema
 * version in PRAGMA user_version with migrations, and percentiles from a registered aggregate. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stats/ksum.h"
#include "store/internal.h"
#include "tracekit/stats.h"
#include "util/hidx.h"
#include "util/mem.h"

/* Signatures this connection has seen, with their row in hang_sigs: most reports repeat a
 * signature, so its id costs a hash lookup, not a query. delta: hangs this batch adds to it. */
typedef struct sig {
	char *text;
	sqlite3_int64 sid;
	sqlite3_int64 delta;
} sig;

typedef struct sq {
	sqlite3 *db;
	sqlite3_stmt *ins, *pins, *fins, *sig_find, *sig_add, *sig_bump;
	char *path;
	sig *sigs; /* the cache; cleared when it grows past SIG_CACHE or a batch rolls back */
	size_t nsigs, sigcap;
	tk_hidx sigidx;
	/* stacks.hash values known stored (no INSERT OR IGNORE for them); cleared past SIG_CACHE and
	 * when a transaction rolls back */
	struct stkh *stk;
	size_t nstk, stkcap;
	tk_hidx stkidx;
	uint32_t *touched; /* cache entries with a delta in this batch */
	size_t ntouched, touchcap;
	sqlite3_stmt *stacks_insert_stmt; /* INSERT OR IGNORE INTO stacks (prepared on first use) */
	struct qcache *qc;                /* percentile answers kept (sq_percentiles) */
	struct vcache *vc;                /* sorted values kept (vruns_get) */
	struct sigcache *sc;              /* per-signature sums kept (sigc_get) */
	struct tcache *tc;                /* rows of a filter by signature (sig_rows_kept) */
	struct rvcache *rv;               /* a date range's top signatures' values (range_top) */
	struct sacc *sa;                  /* this transaction's additions to sessions_sum (sess_add) */
	size_t nsa, sacap;
	tk_hidx saidx;
	sqlite3_stmt *sa_up;
	struct vacc *va; /* this transaction's additions to value_counts (vc_add) */
	size_t nva, vacap;
	tk_hidx vaidx;
	sqlite3_stmt *va_up;
	uint64_t serial; /* this connection among the process's (sq_changes) */
	sqlite3 *sdb;    /* the scans' own connection (scan_db), or NULL */
	int no_sdb;      /* none can be opened (an in-memory store …): scans use db */
	uint64_t ss_token; /* the change token the signature summaries were last found current at */
	int ss_ok;         /* (sigsum_ready) */
	char *wal;         /* sq_sync_later: the WAL file sq_sync makes durable, else NULL */
	ino_t wal_ino;     /* sq_sync: the WAL whose directory entry was made durable (0: none yet) */
} sq;

#define SIG_CACHE 200000

typedef struct stkh {
	unsigned char h[16];
} stkh;

/* A (session, kind) row of sessions_sum, what the open transaction adds to it; the strings are the
 * batch's own (valid until sq_put_batches returns, when they are flushed). */
typedef struct sacc {
	const char *keys[TK_STORE_NKEYS], *kind;
	sqlite3_int64 n, nd, dus, lus;
	double t0; /* NAN: none with a duration */
} sacc;

/* Migration i brings the schema from version i to i + 1. Never edit one that has shipped: add. */
static const char *const migrations[] = {
    /* 0 → 1 */
    "CREATE TABLE reports ("
    " id BLOB NOT NULL, kind TEXT NOT NULL," /* the SHA-256, 32 bytes: half the hex in row and index */
    " app TEXT NOT NULL, version TEXT NOT NULL, build TEXT NOT NULL, device TEXT NOT NULL, os TEXT NOT NULL,"
    " session TEXT NOT NULL, time REAL NOT NULL, duration REAL, avg_cpu REAL, samples INTEGER NOT NULL,"
    " thread TEXT NOT NULL, signature TEXT NOT NULL, rkey TEXT NOT NULL, ingested REAL NOT NULL);"
    "CREATE UNIQUE INDEX reports_id ON reports(id);"
    "CREATE INDEX reports_kind_time ON reports(kind, time);"
    /* a covering index for the grouped percentile query (P99 by version reads no table rows);
     * top hangs scan the table instead: an index on signatures cost 35 % of the insert time */
    "CREATE INDEX reports_version ON reports(kind, version, duration);",
    /* 1 → 2: profile reports (xctrace exports …): one row per profile, one per function in it */
    "CREATE TABLE profiles ("
    " id BLOB NOT NULL, app TEXT NOT NULL, version TEXT NOT NULL, build TEXT NOT NULL, device TEXT NOT NULL,"
    " os TEXT NOT NULL, session TEXT NOT NULL, time REAL NOT NULL, unit TEXT NOT NULL, weight REAL NOT NULL,"
    " threads INTEGER NOT NULL, source TEXT NOT NULL, ingested REAL NOT NULL);"
    "CREATE UNIQUE INDEX profiles_id ON profiles(id);"
    "CREATE TABLE functions (profile BLOB NOT NULL, ord INTEGER NOT NULL, name TEXT NOT NULL,"
    " binary TEXT NOT NULL, self REAL NOT NULL, total REAL NOT NULL);"
    /* fn.self:NAME looks a name up per profile: (name, profile, ord) answers from the index */
    "CREATE INDEX functions_name ON functions(name, profile, ord);",
    /* 2 → 3: top hangs from a maintained summary. Each distinct signature is one row of hang_sigs
     * with the number of hangs (kinds hang and anr, with a duration) stored under it; a report
     * points at its signature's row (an integer: an index on it costs far less per insert than
     * one on the signature text), so the top signatures' rows are found by index. */
    "CREATE TABLE hang_sigs (sid INTEGER PRIMARY KEY, signature TEXT NOT NULL UNIQUE, n INTEGER NOT NULL);"
    "INSERT INTO hang_sigs (signature, n) SELECT signature,"
    " sum(kind IN ('hang', 'anr') AND duration IS NOT NULL) FROM reports GROUP BY signature;"
    "ALTER TABLE reports ADD COLUMN sid INTEGER;"
    "UPDATE reports SET sid = (SELECT h.sid FROM hang_sigs h WHERE h.signature = reports.signature);"
    "CREATE INDEX reports_sid ON reports(sid);",
    /* 3 → 4: each report's stacks (folded text), stored once per distinct text under the first 16
     * bytes of its SHA-256; a report points at its text from report_stacks (reports stored before
     * this version have none). */
    "CREATE TABLE stacks (hash BLOB PRIMARY KEY, folded TEXT NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE report_stacks (report BLOB PRIMARY KEY, stack BLOB NOT NULL) WITHOUT ROWID;",
    /* 4 → 5: covering indexes for the dashboard's groupings (issue 19), each read in its order
     * without touching the table: per session (hang.rate's inner GROUP BY of the six keys), per
     * (app, version) of a kind (the overview's percentiles), and per signature with what the top
     * hangs, first/last versions and a signature's rows read (it replaces reports_sid). */
    "CREATE INDEX IF NOT EXISTS reports_session ON reports(app, version, build, device, os, session, kind, duration, "
    "time);"
    "CREATE INDEX IF NOT EXISTS reports_app_version ON reports(kind, app, version, duration);"
    "CREATE INDEX IF NOT EXISTS reports_sig ON reports(sid, kind, duration, version, device, session, id);"
    "DROP INDEX IF EXISTS reports_sid;",
    /* 5 → 6: a per-session summary maintained at ingest (sess_put): one row per (session's six keys,
     * kind) with its reports (n), those with a duration (nd), the first of those's time (t0), and
     * their durations summed in whole microseconds as hang.rate sums them (TK_STORE_RATE_US): all of
     * them (dus) and those of at least 250 ms (lus). The overview's counts and sessions and the hang
     * rate read these ~thousands of rows instead of every report; reports_session goes (what it
     * served now reads the summary; hang.rate under --since or a signature reads reports_kind_time or
     * reports_sig). Sums of existing rows as exact integers up to 2^53 µs (285 years) per row. */
    "DROP TABLE IF EXISTS sessions_sum;" /* rebuilt whole from reports */
    "CREATE TABLE sessions_sum (app TEXT NOT NULL, version TEXT NOT NULL, build TEXT NOT NULL,"
    " device TEXT NOT NULL, os TEXT NOT NULL, session TEXT NOT NULL, kind TEXT NOT NULL, n INTEGER NOT NULL,"
    " nd INTEGER NOT NULL, t0 REAL, dus INTEGER NOT NULL, lus INTEGER NOT NULL,"
    " PRIMARY KEY (app, version, build, device, os, session, kind)) WITHOUT ROWID;"
    "INSERT INTO sessions_sum SELECT app, version, build, device, os, session, kind, count(*), count(duration),"
    " min(CASE WHEN duration IS NOT NULL THEN time END),"
    " CAST(total(CAST(duration * 1000000.0 + 0.5 AS INTEGER)) AS INTEGER),"
    " CAST(total(CASE WHEN duration >= 0.25 THEN CAST(duration * 1000000.0 + 0.5 AS INTEGER) END) AS INTEGER)"
    " FROM reports GROUP BY app, version, build, device, os, session, kind;"
    "DROP INDEX IF EXISTS reports_session;"
    /* and the percentiles' index: reports_app_version with what the other groupings and filters
     * read (a day or hour bucket, build, device, OS; cpu.average), so any grouping of report
     * values reads the index alone, in duration order within (kind, app, version) */
    "DROP INDEX IF EXISTS reports_app_version;"
    "CREATE INDEX IF NOT EXISTS reports_values ON reports(kind, app, version, duration, time, build, device, os, "
    "avg_cpu);",
    /* 6 → 7: stacks as an ordinary rowid table with its hash unique, instead of WITHOUT ROWID keyed by
     * the hash: a text of a few kB then goes to the end of the table, and only the small (hash, rowid)
     * entry lands at a random place; keyed by a random hash, each insert moved kB-sized rows around
     * the B-tree (MetricKit ingest: ~4 kB a diagnostic, measured 2.9 s → 0.75 s of CPU for 20,000
     * texts in the sqlite3 shell). Lookups by hash are unchanged. */
    "CREATE TABLE stacks_v7 (hash BLOB NOT NULL UNIQUE, folded TEXT NOT NULL);"
    "INSERT INTO stacks_v7 (hash, folded) SELECT hash, folded FROM stacks;"
    "DROP TABLE stacks;"
    "ALTER TABLE stacks_v7 RENAME TO stacks;",
    /* 7 → 8: a report names its stacks in its own row (stack: the stacks.hash of its text, NULL where
     * none is stored) instead of a report_stacks row keyed by the report's random id: one random
     * B-tree insert fewer per report at ingest (40 000 reports: ~0.2 s of CPU), and a report's text
     * is found from the row already read. */
    "ALTER TABLE reports ADD COLUMN stack BLOB;"
    "UPDATE reports SET stack = rs.stack FROM report_stacks rs WHERE rs.report = reports.id;"
    "DROP TABLE report_stacks;",
    /* 8 → 9: value_counts, maintained at ingest (vc_add): how many reports of a (kind, app, version,
     * UTC day) hold each distinct value of a column (col 0 duration, 1 avg_cpu; day as by_group
     * numbers it). A million hangs hold a few thousand distinct durations, so the sorted values of a
     * metric per (app, version), and its percentiles per day, are read from ~10^5 rows instead of a
     * scan of every report: the same values in the same order (each repeated n times), so the same
     * numbers, exact. In key order a (col, kind, app, version)'s values come ascending. Its upserts
     * cost ~5 µs a report at ingest (store_put, batches of 50 k); reports_version (kind, version,
     * duration) goes, which cost about as much: what it served (a metric's values by version) now
     * reads value_counts, or reports_values with the apps listed (a version without an app). */
    "DROP TABLE IF EXISTS value_counts;" /* rebuilt whole from reports */
    "DROP INDEX IF EXISTS reports_version;"
    "CREATE TABLE value_counts (col INTEGER NOT NULL, kind TEXT NOT NULL, app TEXT NOT NULL,"
    " version TEXT NOT NULL, value REAL NOT NULL, day INTEGER NOT NULL, n INTEGER NOT NULL,"
    " PRIMARY KEY (col, kind, app, version, value, day)) WITHOUT ROWID;"
    "INSERT INTO value_counts SELECT 0, kind, app, version, duration,"
    " (CAST(time AS INTEGER) - (CAST(time AS INTEGER) < 0) * 86399) / 86400 AS d, count(*) FROM reports"
    " WHERE duration IS NOT NULL GROUP BY kind, app, version, duration, d;"
    "INSERT INTO value_counts SELECT 1, kind, app, version, avg_cpu,"
    " (CAST(time AS INTEGER) - (CAST(time AS INTEGER) < 0) * 86399) / 86400 AS d, count(*) FROM reports"
    " WHERE avg_cpu IS NOT NULL GROUP BY kind, app, version, avg_cpu, d;",
    /* 9 → 10: nothing here (a step of another branch's may take this number) */
    "",
    /* 10 → 11: per-signature summaries, migrate_10_11 (a step of its own: it sums the reports in C) */
    "",
    /* 11 → 12: per-signature summaries by UTC day and hour for date ranges, migrate_11_12 (its own step) */
    "",
};

static int migrate_10_11(sq *s, tk_error *err);
static int migrate_11_12(sq *s, tk_error *err);
/* Steps run after a migration's SQL, by the version they start from. */
static int (*const migration_steps[])(sq *s, tk_error *err) = {[10] = migrate_10_11, [11] = migrate_11_12};

static int fail(sq *s, tk_error *err, const char *what)
{
	return tk_error_set(err, "sqlite:%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

/* fail, for an error on connection db (scan_db's) */
static int fail_on(sq *s, sqlite3 *db, tk_error *err, const char *what)
{
	return tk_error_set(err, "sqlite:%s: %s: %s", s->path, what, sqlite3_errmsg(db));
}

/* ---- the summary aggregate: tk_summary(x) → blob of count, mean, min, max, q[5] ---- */

typedef struct agg {
	double *v;
	size_t n, cap;
} agg;

static void agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	agg *a = sqlite3_aggregate_context(ctx, sizeof *a);
	if (!a || sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	TK_GROW(a->v, a->cap, a->n + 1);
	a->v[a->n++] = sqlite3_value_double(argv[0]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void agg_final(sqlite3_context *ctx)
{
	agg *a = sqlite3_aggregate_context(ctx, 0);
	if (!a || !a->n) {
		sqlite3_result_null(ctx);
		if (a)
			free(a->v);
		return;
	}
	qsort(a->v, a->n, sizeof *a->v, cmp_double);
	tk_store_group g;
	tk_store_summarise(a->v, a->n, &g);
	double out[4 + TK_STORE_NQ] = {(double)g.count, g.mean, g.min, g.max};
	memcpy(out + 4, g.q, sizeof g.q);
	free(a->v);
	sqlite3_result_blob(ctx, out, sizeof out, SQLITE_TRANSIENT);
}

static void unpack(const void *blob, tk_store_group *g)
{
	double v[4 + TK_STORE_NQ];
	memcpy(v, blob, sizeof v);
	g->count = (uint64_t)v[0];
	g->mean = v[1];
	g->min = v[2];
	g->max = v[3];
	memcpy(g->q, v + 4, sizeof g->q);
}

/* ---- percentile answers kept per connection: the dashboard's pages and pictures ask the same
 * grouped query again (a page, then its picture; the alert rules on every page). Keyed by the query
 * and the store's change token (sq_changes): an answer is only reused over the same data. */

#define QCACHE_N 16
typedef struct qcache {
	char *key[QCACHE_N];
	uint64_t token[QCACHE_N], used[QCACHE_N], clock;
	tk_store_group *g[QCACHE_N];
	size_t n[QCACHE_N], nby[QCACHE_N];
} qcache;

static tk_store_group *groups_copy(const tk_store_group *g, size_t n, size_t nby)
{
	tk_store_group *c = tk_xmalloc((n ? n : 1) * sizeof *c);
	for (size_t i = 0; i < n; i++) {
		c[i] = g[i];
		for (size_t k = 0; k < TK_STORE_NKEYS; k++)
			c[i].keys[k] = k < nby && g[i].keys[k] ? tk_xstrdup(g[i].keys[k]) : NULL;
	}
	return c;
}

static void qcache_free(sq *s)
{
	if (!s->qc)
		return;
	for (size_t i = 0; i < QCACHE_N; i++) {
		free(s->qc->key[i]);
		tk_store_groups_free(s->qc->g[i], s->qc->n[i]);
	}
	free(s->qc);
	s->qc = NULL;
}

/* The query as text: every field sq_percentiles reads. */
static char *query_key(const tk_store_query *q)
{
	char *k = sqlite3_mprintf("%s|%d", q->metric ? q->metric : "", (int)q->nby);
	for (size_t i = 0; i < q->nby; i++) {
		char *n = sqlite3_mprintf("%s|%d", k, q->by[i]);
		sqlite3_free(k);
		k = n;
	}
	for (int i = 0; i < TK_STORE_NKEYS; i++) {
		char *n = q->where[i] ? sqlite3_mprintf("%s|w%d=%Q", k, i, q->where[i]) : sqlite3_mprintf("%s|-", k);
		sqlite3_free(k);
		k = n;
	}
	char *n = sqlite3_mprintf("%s|%.17g|%Q|%Q|%.17g", k, q->since, q->signature, q->kind, q->until);
	sqlite3_free(k);
	char *out = tk_xstrdup(n);
	sqlite3_free(n);
	return out;
}

/* ---- open / schema ---- */

static void vcache_free(sq *s);
static void sigcache_free(sq *s);
static void tcache_free(sq *s);
static void rvcache_free(sq *s);

static void sq_limit_memory(void *h)
{
	/* a bulk writer re-reads few pages: 8 MiB and no mapping keep RSS flat as the store grows */
	sqlite3_exec(((sq *)h)->db, "PRAGMA cache_size=-8192; PRAGMA mmap_size=0", NULL, NULL, NULL);
}

static void sq_close(void *h)
{
	sq *s = h;
	if (!s)
		return;
	sqlite3_finalize(s->ins);
	sqlite3_finalize(s->pins);
	sqlite3_finalize(s->fins);
	sqlite3_finalize(s->sig_find);
	sqlite3_finalize(s->sig_add);
	sqlite3_finalize(s->sig_bump);
	sqlite3_finalize(s->stacks_insert_stmt);
	free(s->stk);
	tk_hidx_free(&s->stkidx);
	sqlite3_finalize(s->sa_up);
	free(s->sa);
	tk_hidx_free(&s->saidx);
	sqlite3_finalize(s->va_up);
	free(s->va);
	tk_hidx_free(&s->vaidx);
	qcache_free(s);
	vcache_free(s);
	sigcache_free(s);
	tcache_free(s);
	rvcache_free(s);
	for (size_t i = 0; i < s->nsigs; i++)
		free(s->sigs[i].text);
	free(s->sigs);
	free(s->touched);
	tk_hidx_free(&s->sigidx);
	sqlite3_close(s->sdb);
	sqlite3_close(s->db);
	free(s->path);
	free(s->wal);
	free(s);
}

static int exec(sq *s, const char *sql, tk_error *err)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	tk_error_set(err, "sqlite:%s: %s", s->path, msg ? msg : sqlite3_errmsg(s->db));
	sqlite3_free(msg);
	return -1;
}

static int migrate(sq *s, tk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "reading the schema version");
	int have = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	int want = (int)(sizeof migrations / sizeof migrations[0]);
	if (have > want)
		return tk_error_set(err, "sqlite:%s: schema version %d is newer than this tracekit's (%d)", s->path,
		                    have, want);
	if (have == want)
		return 0;
	/* BEGIN IMMEDIATE: two ingesters opening a new file at once do not both migrate */
	if (exec(s, "BEGIN IMMEDIATE", err))
		return -1;
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "reading the schema version");
	have = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	for (int v = have; v < want; v++) {
		char pragma[64];
		snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", v + 1);
		if (exec(s, migrations[v], err) ||
		    (v < (int)(sizeof migration_steps / sizeof *migration_steps) && migration_steps[v] &&
		     migration_steps[v](s, err)) ||
		    exec(s, pragma, err)) {
			exec(s, "ROLLBACK", NULL);
			return -1;
		}
	}
	return exec(s, "COMMIT", err);
}

static void *sq_open(const char *path, tk_error *err)
{
	sq *s = tk_xcalloc(1, sizeof *s);
	static _Atomic uint64_t serials;
	s->serial = ++serials;
	s->path = tk_xstrdup(path);
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	                    tk_sqlite_walbuf_vfs()) != SQLITE_OK) {
		fail(s, err, "cannot open");
		sq_close(s);
		return NULL;
	}
	sqlite3_busy_timeout(s->db, 10000);
	/* WAL + synchronous=NORMAL keeps every committed batch across a process crash (the WAL is
	 * written before COMMIT returns); FULL also survives power loss, at a cost per batch. */
	/* mmap and a 256 MiB page cache: a batch's index pages stay in memory, and scans avoid a read
	 * call per page */
	/* a checkpoint every 16384 WAL pages (64 MiB), not SQLite's 1000: a commit of random-keyed index
	 * entries rewrites most index pages, and checkpointing after every fourth commit copied the same
	 * pages again each time (bench_upload's 40 k reports in 18 commits: 81.7 k -> 62.4 k page writes,
	 * 26.5 k -> 7.2 k reads, ingest CPU -15 %; the committer of `serve` is what bounds its rate) */
	/* Two processes opening a new file at once: switching it to WAL takes a lock that SQLite does
	 * not wait for with the busy timeout, so one of them gets SQLITE_BUSY ("database is locked",
	 * seen with two concurrent ingests): wait and try again, as the busy timeout would. */
	int rc;
	for (int attempt = 0;; attempt++) {
		rc = exec(s,
		          "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-262144; "
		          "PRAGMA mmap_size=4294967296; PRAGMA temp_store=MEMORY; PRAGMA wal_autocheckpoint=16384",
		          err) ||
		     migrate(s, err);
		int busy =
		    (sqlite3_errcode(s->db) & 0xff) == SQLITE_BUSY || (sqlite3_errcode(s->db) & 0xff) == SQLITE_LOCKED;
		if (!rc || !busy || attempt == 100)
			break;
		sqlite3_sleep(100);
	}
	if (rc) {
		sq_close(s);
		return NULL;
	}
	sqlite3_create_function(s->db, "tk_summary", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, NULL, agg_step,
	                        agg_final);
	if (sqlite3_prepare_v2(s->db,
	                       "INSERT OR IGNORE INTO reports (id, kind, app, version, build, device, os, session, "
	                       "time, duration, avg_cpu, samples, thread, signature, rkey, sid, stack, ingested) "
	                       "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,julianday('now'))",
	                       -1, &s->ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(
	        s->db,
	        "INSERT OR IGNORE INTO profiles (id, app, version, build, device, os, session, time, "
	        "unit, weight, threads, source, ingested) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,julianday('now'))",
	        -1, &s->pins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db,
	                       "INSERT INTO functions (profile, ord, name, binary, self, total) VALUES (?,?,?,?,?,?)",
	                       -1, &s->fins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "SELECT sid FROM hang_sigs WHERE signature = ?", -1, &s->sig_find, NULL) !=
	        SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO hang_sigs (signature, n) VALUES (?, 0)", -1, &s->sig_add, NULL) !=
	        SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "UPDATE hang_sigs SET n = n + ? WHERE sid = ?", -1, &s->sig_bump, NULL) !=
	        SQLITE_OK) {
		fail(s, err, "preparing the insert");
		sq_close(s);
		return NULL;
	}
	return s;
}

static void agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
static void agg_final(sqlite3_context *ctx);

/* The connection that reads indexes in order (the grouped percentiles, a signature's rows, the
 * session summary): a second one to the same file that reads its pages with read() into a small page
 * cache, where db maps the whole file for the writers. A freshly opened store touches each page of
 * the index it scans for the first time; through the 4 GiB mmap every first touch is a page fault,
 * and on a virtual machine those cost more than the scan itself (measured on the 1 M fleet, CPU of a
 * first full scan: reports_values 610 → 180 ms, reports_sig with its sessions and ids 900 → 290 ms);
 * read() into a few recycled MiB costs a copy per page. It sees what db has committed (WAL); while db
 * holds an open transaction, or for a store with no file (":memory:"), the scans run on db itself. */
static sqlite3 *scan_db(sq *s)
{
	if (!sqlite3_get_autocommit(s->db))
		return s->db;
	if (s->sdb || s->no_sdb)
		return s->sdb ? s->sdb : s->db;
	s->no_sdb = 1;
	const char *file = sqlite3_db_filename(s->db, "main");
	sqlite3 *db = NULL;
	if (!file || !*file ||
	    sqlite3_open_v2(file, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA mmap_size=0; PRAGMA cache_size=-2048; PRAGMA temp_store=MEMORY", NULL, NULL,
	                 NULL) != SQLITE_OK ||
	    sqlite3_create_function(db, "tk_summary", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, NULL, agg_step,
	                            agg_final) != SQLITE_OK) {
		sqlite3_close(db);
		return s->db;
	}
	sqlite3_busy_timeout(db, 10000);
	s->sdb = db;
	s->no_sdb = 0;
	return db;
}

/* Whether reports_sig holds every column q filters on (kind, version, device, session; a signature
 * by its row): a signature's rows are then read from the index alone, in order, on scan_db. With a
 * time, app, build or OS filter each row is looked up in the table, at random: that stays on db,
 * whose mapped pages serve random reads better than scan_db's small cache. */
static int sig_covered(const tk_store_query *q)
{
	return !(q->since > 0) && !(q->until > 0) && !q->where[TK_STORE_APP] && !q->where[TK_STORE_BUILD] &&
	       !q->where[TK_STORE_OS];
}

static void bind_num(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static unsigned nibble(char c)
{
	return c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 0;
}

static void sig_cache_clear(sq *s)
{
	for (size_t i = 0; i < s->nsigs; i++)
		free(s->sigs[i].text);
	s->nsigs = 0;
	s->ntouched = 0;
	tk_hidx_free(&s->sigidx);
	memset(&s->sigidx, 0, sizeof s->sigidx);
}

static int sig_eq(const void *ctx, uint32_t idx, const void *key)
{
	return strcmp(((const sq *)ctx)->sigs[idx].text, key) == 0;
}

/* The cache entry of a signature, its hang_sigs row found or made inside the current
 * transaction; UINT32_MAX on a database error. */
static uint32_t sig_get(sq *s, const char *text)
{
	uint64_t hash = tk_hash_bytes(text, strlen(text), 0);
	uint32_t at = tk_hidx_find(&s->sigidx, hash, sig_eq, s, text);
	if (at != UINT32_MAX)
		return at;
	sqlite3_int64 sid = -1;
	sqlite3_reset(s->sig_find);
	sqlite3_bind_text(s->sig_find, 1, text, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s->sig_find);
	if (rc == SQLITE_ROW)
		sid = sqlite3_column_int64(s->sig_find, 0);
	sqlite3_reset(s->sig_find);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return UINT32_MAX;
	if (sid < 0) {
		sqlite3_reset(s->sig_add);
		sqlite3_bind_text(s->sig_add, 1, text, -1, SQLITE_STATIC);
		rc = sqlite3_step(s->sig_add);
		sqlite3_reset(s->sig_add);
		if (rc != SQLITE_DONE)
			return UINT32_MAX;
		sid = sqlite3_last_insert_rowid(s->db);
	}
	TK_GROW(s->sigs, s->sigcap, s->nsigs + 1);
	s->sigs[s->nsigs] = (sig){tk_xstrdup(text), sid, 0};
	tk_hidx_insert(&s->sigidx, hash, (uint32_t)s->nsigs);
	return (uint32_t)s->nsigs++;
}

/* The batch's hang counts go to hang_sigs before COMMIT (one UPDATE per signature touched). */
static int sig_flush(sq *s)
{
	for (size_t i = 0; i < s->ntouched; i++) {
		sig *g = &s->sigs[s->touched[i]];
		sqlite3_reset(s->sig_bump);
		sqlite3_bind_int64(s->sig_bump, 1, g->delta);
		sqlite3_bind_int64(s->sig_bump, 2, g->sid);
		int rc = sqlite3_step(s->sig_bump);
		sqlite3_reset(s->sig_bump);
		if (rc != SQLITE_DONE)
			return -1;
		g->delta = 0;
	}
	s->ntouched = 0;
	return 0;
}

/* ---- sessions_sum upkeep (migration 5 → 6) ---- */

static uint64_t sacc_hash(const tk_report *r)
{
	uint64_t h = tk_hash_bytes(r->kind, strlen(r->kind), 0);
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		h = tk_hash_bytes(r->keys[k], strlen(r->keys[k]), h);
	return h;
}

static int sacc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const sacc *a = &((const sq *)ctx)->sa[idx];
	const tk_report *r = key;
	if (strcmp(a->kind, r->kind))
		return 0;
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		if (strcmp(a->keys[k], r->keys[k]))
			return 0;
	return 1;
}

/* SQLite's CAST(d * 1000000.0 + 0.5 AS INTEGER): truncated, saturated at the int64 range. */
static sqlite3_int64 rate_us(double d)
{
	double y = d * 1000000.0 + 0.5;
	if (y >= 9223372036854775807.0)
		return INT64_MAX;
	if (y <= -9223372036854775808.0)
		return INT64_MIN;
	return (sqlite3_int64)y;
}

static sqlite3_int64 sat_add(sqlite3_int64 a, sqlite3_int64 b)
{
	sqlite3_int64 c;
	if (__builtin_add_overflow(a, b, &c))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return c;
}

/* A new report counted in its (session, kind) row. */
static void sess_add(sq *s, const tk_report *r)
{
	uint64_t h = sacc_hash(r);
	uint32_t at = tk_hidx_find(&s->saidx, h, sacc_eq, s, r);
	if (at == UINT32_MAX) {
		TK_GROW(s->sa, s->sacap, s->nsa + 1);
		sacc *a = &s->sa[s->nsa];
		memset(a, 0, sizeof *a);
		memcpy(a->keys, r->keys, sizeof a->keys);
		a->kind = r->kind;
		a->t0 = NAN;
		at = (uint32_t)s->nsa++;
		tk_hidx_insert(&s->saidx, h, at);
	}
	sacc *a = &s->sa[at];
	a->n++;
	if (isfinite(r->duration)) { /* what bind_num stores as a duration */
		sqlite3_int64 us = rate_us(r->duration);
		a->nd++;
		if (isnan(a->t0) || r->time < a->t0)
			a->t0 = r->time;
		a->dus = sat_add(a->dus, us);
		if (r->duration >= TK_STORE_RATE_MIN_HANG)
			a->lus = sat_add(a->lus, us);
	}
}

static void sess_clear(sq *s)
{
	s->nsa = 0;
	tk_hidx_free(&s->saidx);
	memset(&s->saidx, 0, sizeof s->saidx);
}

/* The transaction's rows into sessions_sum (one upsert per (session, kind) touched), before COMMIT. */
static int sess_flush(sq *s)
{
	if (!s->sa_up && sqlite3_prepare_v2(
	                     s->db,
	                     "INSERT INTO sessions_sum (app, version, build, device, os, session, kind, n, nd, t0, "
	                     "dus, lus) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (app, version, build, device, os, "
	                     "session, kind) DO UPDATE SET n = n + excluded.n, nd = nd + excluded.nd, t0 = CASE WHEN "
	                     "t0 IS NULL OR excluded.t0 < t0 THEN excluded.t0 ELSE t0 END, dus = dus + excluded.dus, "
	                     "lus = lus + excluded.lus",
	                     -1, &s->sa_up, NULL) != SQLITE_OK)
		return -1;
	for (size_t i = 0; i < s->nsa; i++) {
		const sacc *a = &s->sa[i];
		sqlite3_stmt *st = s->sa_up;
		sqlite3_reset(st);
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			sqlite3_bind_text(st, 1 + k, a->keys[k], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, a->kind, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 8, a->n);
		sqlite3_bind_int64(st, 9, a->nd);
		if (isnan(a->t0))
			sqlite3_bind_null(st, 10);
		else
			sqlite3_bind_double(st, 10, a->t0);
		sqlite3_bind_int64(st, 11, a->dus);
		sqlite3_bind_int64(st, 12, a->lus);
		int rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			return -1;
	}
	sqlite3_clear_bindings(s->sa_up);
	sess_clear(s);
	return 0;
}

/* ---- value_counts upkeep (migration 8 → 9) ---- */

/* A (col, kind, app, version, value, day) row of value_counts, what the open transaction adds to it;
 * the strings are the batch's own, as sacc's. */
typedef struct vacc {
	const char *kind, *app, *version;
	double value, dayr; /* dayr: the day when SQL's arithmetic gives a real (a time near -2^63) */
	sqlite3_int64 day, n;
	int col, real;
} vacc;

/* The day of a time as by_group numbers it in SQL: CAST(time AS INTEGER) (truncated, saturated),
 * less 86399 when negative (that subtraction done in doubles where the integer one overflows, as
 * SQLite does), divided by 86400. */
static void vc_day(double t, vacc *a)
{
	sqlite3_int64 x = t <= -9223372036854775808.0  ? INT64_MIN
	                  : t >= 9223372036854775807.0 ? INT64_MAX
	                                               : (sqlite3_int64)t;
	a->real = 0;
	if (x < 0 && x < INT64_MIN + 86399) {
		a->real = 1;
		a->dayr = ((double)x - 86399.0) / 86400.0;
		return;
	}
	if (x < 0)
		x -= 86399;
	a->day = x / 86400;
}

static int vacc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const vacc *a = &((const sq *)ctx)->va[idx], *b = key;
	return a->col == b->col && a->real == b->real && memcmp(&a->value, &b->value, sizeof a->value) == 0 &&
	       (a->real ? memcmp(&a->dayr, &b->dayr, sizeof a->dayr) == 0 : a->day == b->day) &&
	       strcmp(a->version, b->version) == 0 && strcmp(a->app, b->app) == 0 && strcmp(a->kind, b->kind) == 0;
}

/* A new report's duration and CPU average (what bind_num stores: finite values) counted. */
static void vc_add(sq *s, const tk_report *r)
{
	double v[2] = {r->duration, r->avg_cpu};
	for (int col = 0; col < 2; col++) {
		if (!isfinite(v[col]))
			continue;
		vacc k = {.kind = r->kind,
		          .app = r->keys[TK_STORE_APP],
		          .version = r->keys[TK_STORE_VERSION],
		          .value = v[col] == 0 ? 0.0 : v[col], /* -0 as SQLite stores it */
		          .col = col};
		vc_day(r->time, &k);
		uint64_t h = tk_hash_bytes(&k.value, sizeof k.value, (uint64_t)k.day * 31 + (uint64_t)col);
		h = tk_hash_bytes(k.version, strlen(k.version), h);
		uint32_t at = tk_hidx_find(&s->vaidx, h, vacc_eq, s, &k);
		if (at == UINT32_MAX) {
			TK_GROW(s->va, s->vacap, s->nva + 1);
			s->va[s->nva] = k;
			at = (uint32_t)s->nva++;
			tk_hidx_insert(&s->vaidx, h, at);
		}
		s->va[at].n++;
	}
}

static void vc_clear(sq *s)
{
	s->nva = 0;
	tk_hidx_free(&s->vaidx);
	memset(&s->vaidx, 0, sizeof s->vaidx);
}

/* The transaction's rows into value_counts (one upsert per distinct row touched), before COMMIT. */
static int vc_flush(sq *s)
{
	if (!s->va_up && sqlite3_prepare_v2(
	                     s->db,
	                     "INSERT INTO value_counts (col, kind, app, version, value, day, n) VALUES (?,?,?,?,?,?,?)"
	                     " ON CONFLICT (col, kind, app, version, value, day) DO UPDATE SET n = n + excluded.n",
	                     -1, &s->va_up, NULL) != SQLITE_OK)
		return -1;
	sqlite3_stmt *st = s->va_up;
	for (size_t i = 0; i < s->nva; i++) {
		const vacc *a = &s->va[i];
		sqlite3_reset(st);
		sqlite3_bind_int(st, 1, a->col);
		sqlite3_bind_text(st, 2, a->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, a->app, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, a->version, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 5, a->value);
		if (a->real)
			sqlite3_bind_double(st, 6, a->dayr);
		else
			sqlite3_bind_int64(st, 6, a->day);
		sqlite3_bind_int64(st, 7, a->n);
		int rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			return -1;
	}
	sqlite3_clear_bindings(st);
	vc_clear(s);
	return 0;
}

static int is_hang_kind(const char *kind)
{
	return strcmp(kind, "hang") == 0 || strcmp(kind, "anr") == 0;
}

static void stk_clear(sq *s)
{
	s->nstk = 0;
	tk_hidx_free(&s->stkidx);
	memset(&s->stkidx, 0, sizeof s->stkidx);
}

static int stk_eq(const void *ctx, uint32_t idx, const void *key)
{
	return memcmp(((const sq *)ctx)->stk[idx].h, key, 16) == 0;
}

/* The stacks.hash of a folded text: the first 16 bytes of its SHA-256. */
static void stack_hash(const char *folded, unsigned char hash[16])
{
	char hex[33];
	tk_store_stacks_hash(folded, hex);
	for (int b = 0; b < 16; b++)
		hash[b] = (unsigned char)(nibble(hex[2 * b]) << 4 | nibble(hex[2 * b + 1]));
}

/* A new report's stacks text, stored once under its hash (the report's row names the hash). Most
 * reports repeat a text this connection has stored or seen already: those cost a hash lookup. */
static int stacks_put(sq *s, const unsigned char hash[16], const char *folded, tk_error *err)
{
	uint64_t h;
	memcpy(&h, hash, sizeof h);
	if (tk_hidx_find(&s->stkidx, h, stk_eq, s, hash) != UINT32_MAX)
		return 0;
	if (!s->stacks_insert_stmt &&
	    sqlite3_prepare_v2(s->db, "INSERT OR IGNORE INTO stacks (hash, folded) VALUES (?, ?)", -1,
	                       &s->stacks_insert_stmt, NULL) != SQLITE_OK)
		return fail(s, err, "preparing the stacks insert");
	sqlite3_reset(s->stacks_insert_stmt);
	sqlite3_bind_blob(s->stacks_insert_stmt, 1, hash, 16, SQLITE_STATIC);
	sqlite3_bind_text(s->stacks_insert_stmt, 2, folded, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s->stacks_insert_stmt);
	sqlite3_reset(s->stacks_insert_stmt);
	sqlite3_clear_bindings(s->stacks_insert_stmt);
	if (rc != SQLITE_DONE)
		return fail(s, err, "insert (stacks)");
	TK_GROW(s->stk, s->stkcap, s->nstk + 1);
	memcpy(s->stk[s->nstk].h, hash, 16);
	tk_hidx_insert(&s->stkidx, h, (uint32_t)s->nstk++);
	return 0;
}

/* A text parameter of a row, unless the one bound for the row before is the same text: that binding
 * stays (the batch's strings live until its rows are stored; binding a text costs SQLite more than
 * comparing it). *was: the text bound, NULL for none yet. */
static void bind_key(sqlite3_stmt *st, int col, const char *text, const char **was)
{
	if (text && *was && strcmp(text, *was) == 0)
		return;
	sqlite3_bind_text(st, col, text, -1, SQLITE_STATIC);
	*was = text;
}

/* The rows of one batch inside an open transaction; on failure the caller rolls back. */
static int put_rows(sq *s, const tk_report *v, size_t n, size_t *added, tk_error *err)
{
	size_t add = 0;
	const char *was[1 + TK_STORE_NKEYS] = {0}; /* bound: the kind and keys (a session's rows repeat them) */
	unsigned char id[32];                      /* bound as it is, each row's in turn */
	for (size_t i = 0; i < n; i++) {
		const tk_report *r = &v[i];
		uint32_t g = sig_get(s, r->signature);
		if (g == UINT32_MAX) {
			fail(s, err, "signature summary");
			sqlite3_clear_bindings(s->ins);
			return -1;
		}
		sqlite3_stmt *st = s->ins;
		sqlite3_reset(st);
		for (int b = 0; b < 32; b++)
			id[b] = (unsigned char)(nibble(r->id[2 * b]) << 4 | nibble(r->id[2 * b + 1]));
		sqlite3_bind_blob(st, 1, id, sizeof id, SQLITE_STATIC);
		bind_key(st, 2, r->kind, &was[0]);
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			bind_key(st, 3 + k, r->keys[k], &was[1 + k]);
		sqlite3_bind_double(st, 9, r->time);
		bind_num(st, 10, r->duration);
		bind_num(st, 11, r->avg_cpu);
		sqlite3_bind_int64(st, 12, (sqlite3_int64)r->samples);
		sqlite3_bind_text(st, 13, r->thread, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 14, r->signature, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 15, r->rkey, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 16, s->sigs[g].sid);
		unsigned char stack[16];
		int has_stack = r->stacks && *r->stacks;
		if (has_stack) {
			if (r->stacks_hashed == r->stacks) /* hashed where it was read (reports.c) */
				memcpy(stack, r->stacks_hash, sizeof stack);
			else
				stack_hash(r->stacks, stack);
			sqlite3_bind_blob(st, 17, stack, sizeof stack, SQLITE_STATIC);
		} else
			sqlite3_bind_null(st, 17);
		if (sqlite3_step(st) != SQLITE_DONE) {
			fail(s, err, "insert");
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			return -1;
		}
		int fresh = sqlite3_changes(s->db) == 1;
		if (fresh && has_stack && stacks_put(s, stack, r->stacks, err)) {
			sqlite3_clear_bindings(st);
			return -1;
		}
		add += (size_t)fresh;
		if (fresh) {
			sess_add(s, r);
			vc_add(s, r);
		}
		if (fresh && isfinite(r->duration) && is_hang_kind(r->kind)) {
			if (!s->sigs[g].delta) {
				TK_GROW(s->touched, s->touchcap, s->ntouched + 1);
				s->touched[s->ntouched++] = g;
			}
			s->sigs[g].delta++;
		}
	}
	sqlite3_reset(s->ins);
	sqlite3_clear_bindings(s->ins);
	*added = add;
	return 0;
}

static int sq_put_batches(void *h, tk_store_batch *b, size_t n, tk_error *err);

/* One batch: the batched path with a single upload (one transaction either way). */
static int sq_put(void *h, const tk_report *v, size_t n, size_t *added, tk_error *err)
{
	tk_store_batch b = {.v = v, .n = n};
	if (sq_put_batches(h, &b, 1, err) < 0)
		return -1;
	*added = b.added;
	return 0;
}

static void hex_id(const char *hex, unsigned char id[32])
{
	for (int b = 0; b < 32; b++)
		id[b] = (unsigned char)(nibble(hex[2 * b]) << 4 | nibble(hex[2 * b + 1]));
}

/* The profiles of one batch inside an open transaction; on failure the caller rolls back. */
static int put_prows(sq *s, const tk_profile_report *v, size_t n, size_t *added, tk_error *err)
{
	size_t add = 0;
	for (size_t i = 0; i < n; i++) {
		const tk_profile_report *r = &v[i];
		unsigned char id[32];
		hex_id(r->id, id);
		sqlite3_stmt *st = s->pins;
		sqlite3_reset(st);
		sqlite3_bind_blob(st, 1, id, sizeof id, SQLITE_TRANSIENT);
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			sqlite3_bind_text(st, 2 + k, r->keys[k], -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 8, r->time);
		sqlite3_bind_text(st, 9, r->unit, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 10, r->weight);
		sqlite3_bind_int64(st, 11, (sqlite3_int64)r->threads);
		sqlite3_bind_text(st, 12, r->source, -1, SQLITE_STATIC);
		int ok = sqlite3_step(st) == SQLITE_DONE;
		int fresh = ok && sqlite3_changes(s->db) == 1;
		for (size_t f = 0; ok && fresh && f < r->nfns; f++) {
			sqlite3_stmt *fs = s->fins;
			sqlite3_reset(fs);
			sqlite3_bind_blob(fs, 1, id, sizeof id, SQLITE_TRANSIENT);
			sqlite3_bind_int64(fs, 2, (sqlite3_int64)f);
			sqlite3_bind_text(fs, 3, r->fns[f].name, -1, SQLITE_STATIC);
			sqlite3_bind_text(fs, 4, r->fns[f].binary, -1, SQLITE_STATIC);
			sqlite3_bind_double(fs, 5, r->fns[f].self);
			sqlite3_bind_double(fs, 6, r->fns[f].total);
			ok = sqlite3_step(fs) == SQLITE_DONE;
		}
		if (!ok) {
			fail(s, err, "insert");
			sqlite3_reset(s->pins);
			sqlite3_reset(s->fins);
			return -1;
		}
		add += (size_t)fresh;
	}
	sqlite3_reset(s->pins);
	sqlite3_clear_bindings(s->pins);
	sqlite3_reset(s->fins);
	sqlite3_clear_bindings(s->fins);
	*added = add;
	return 0;
}

static int sq_put_profiles(void *h, const tk_profile_report *v, size_t n, size_t *added, tk_error *err)
{
	sq *s = h;
	if (exec(s, "BEGIN IMMEDIATE", err))
		return -1;
	size_t add = 0;
	if (put_prows(s, v, n, &add, err)) {
		exec(s, "ROLLBACK", NULL);
		return -1;
	}
	if (exec(s, "COMMIT", err)) {
		exec(s, "ROLLBACK", NULL);
		return -1;
	}
	*added = add;
	return 0;
}

/* Several uploads in one transaction: one COMMIT (one fsync with synchronous=FULL) for all of them,
 * each batch's new rows counted apart. All or nothing. */
static int sq_put_batches(void *h, tk_store_batch *b, size_t n, tk_error *err)
{
	sq *s = h;
	if (exec(s, "BEGIN IMMEDIATE", err))
		return -1;
	if (s->nsigs > SIG_CACHE)
		sig_cache_clear(s);
	if (s->nstk > SIG_CACHE)
		stk_clear(s);
	for (size_t i = 0; i < n; i++) {
		b[i].added = b[i].padded = 0;
		if ((b[i].n && put_rows(s, b[i].v, b[i].n, &b[i].added, err)) ||
		    (b[i].pn && put_prows(s, b[i].pv, b[i].pn, &b[i].padded, err))) {
			exec(s, "ROLLBACK", NULL);
			sig_cache_clear(s);
			stk_clear(s);
			sess_clear(s);
			vc_clear(s);
			return -1;
		}
	}
	if (sig_flush(s) || sess_flush(s) || vc_flush(s)) {
		fail(s, err, "signature and session summaries");
		exec(s, "ROLLBACK", NULL);
		sig_cache_clear(s);
		stk_clear(s);
		sess_clear(s);
		vc_clear(s);
		return -1;
	}
	if (exec(s, "COMMIT", err)) {
		exec(s, "ROLLBACK", NULL);
		sig_cache_clear(s);
		stk_clear(s);
		return -1;
	}
	return 0;
}

/* Commits durable later (serve's group commit: the next group is stored while the last one's fsync
 * runs). In WAL mode with synchronous=NORMAL a COMMIT writes its frames to the WAL without an fsync;
 * SQLite still fsyncs the WAL before a checkpoint copies frames into the file, and the file after.
 * sq_sync then makes every COMMIT that returned before it durable: an fdatasync of the WAL file
 * through a descriptor of our own (fsync works on the file, whatever descriptor wrote; SQLite takes
 * no lock on the WAL file, so opening and closing it here releases none of its locks), and of its
 * directory the first time (a new WAL's name, as SQLite syncs it on its own first sync). */
static int sq_sync_later(void *h, tk_error *err)
{
	sq *s = h;
	const char *main = sqlite3_db_filename(s->db, "main");
	const char *wal = main && *main ? sqlite3_filename_wal(main) : NULL;
	sqlite3_stmt *st;
	int is_wal = 0;
	if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode", -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "journal mode");
	if (sqlite3_step(st) == SQLITE_ROW)
		is_wal = sqlite3_column_text(st, 0) && strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;
	sqlite3_finalize(st);
	if (!is_wal || !wal || !*wal)
		return 1; /* a memory store, or no WAL: each COMMIT stays durable as it returns */
	if (exec(s, "PRAGMA synchronous=NORMAL", err))
		return -1;
	free(s->wal);
	s->wal = tk_xstrdup(wal);
	return 0;
}

static int sync_path(const char *path, int data_only)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = data_only ? fdatasync(fd) : fsync(fd);
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

static int sq_sync(void *h, tk_error *err)
{
	sq *s = h;
	if (!s->wal)
		return 0;
	int fd = open(s->wal, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) /* no WAL: every commit was checkpointed into the file */
		return sync_path(s->path, 1) ? tk_error_set(err, "sqlite:%s: cannot sync: %m", s->path) : 0;
	if (fd < 0)
		return tk_error_set(err, "sqlite:%s: cannot sync: %m", s->wal);
	struct stat st;
	int rc = fstat(fd, &st) || fdatasync(fd);
	int e = errno;
	close(fd);
	errno = e;
	if (rc)
		return tk_error_set(err, "sqlite:%s: cannot sync: %m", s->wal);
	if (st.st_ino != s->wal_ino) { /* its name, once per WAL file */
		char *dir = tk_xstrdup(s->wal), *slash = strrchr(dir, '/');
		if (slash)
			slash[slash == dir] = 0;
		rc = sync_path(slash ? dir : ".", 0);
		free(dir);
		if (rc && errno != EINVAL) /* a directory that cannot be synced (some file systems): nothing to do */
			return tk_error_set(err, "sqlite:%s: cannot sync its directory: %m", s->wal);
		s->wal_ino = st.st_ino;
	}
	return 0;
}

/* The rows a metric reads: the reports table, or for a profile metric one row per profile with its
 * value (the function's weight, 0 where the profile lacks it, as tk_fntable has it). sqlite3_free it. */
static char *source_sql(const tk_store_metric *m, const char *metric)
{
	if (!m->profile)
		return sqlite3_mprintf("reports");
	if (m->profile == 1)
		return sqlite3_mprintf(
		    "(SELECT 'profile' AS kind, app, version, build, device, os, session, time, unit, "
		    "weight AS value FROM profiles)");
	tk_store_fnsel f;
	tk_store_fnsel_parse(metric, &f);
	char *bin = f.binary ? sqlite3_mprintf(" AND f.binary = %Q", f.binary) : sqlite3_mprintf("%s", "");
	char *sql = sqlite3_mprintf(
	    "(SELECT 'profile' AS kind, app, version, build, device, os, session, time, unit, "
	    "coalesce((SELECT f.%s FROM functions f WHERE f.name = %Q AND f.profile = p.id%s ORDER BY f.ord LIMIT 1), "
	    "0.0) AS value FROM profiles p)",
	    m->profile == 2 ? "self" : "total", f.name, bin);
	sqlite3_free(bin);
	tk_store_fnsel_free(&f);
	return sql;
}

/* WHERE for a query: kind, filters, since; parameters bound in this order by bind_where. */
static void where_sql(const tk_store_query *q, const char *kinds, const char *col, char *buf, size_t n)
{
	size_t len = (size_t)snprintf(buf, n, " WHERE kind IN %s", kinds);
	if (col)
		len += (size_t)snprintf(buf + len, n - len, " AND %s IS NOT NULL", col);
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		if (q->where[k])
			len += (size_t)snprintf(buf + len, n - len, " AND %s = ?", tk_store_key_names[k]);
	if (q->since > 0)
		len += (size_t)snprintf(buf + len, n - len, " AND time >= ?");
	if (q->until > 0)
		len += (size_t)snprintf(buf + len, n - len, " AND time < ?");
	if (q->signature) /* by the signature's row: reports_sig finds its reports */
		snprintf(buf + len, n - len, " AND sid = (SELECT sid FROM hang_sigs WHERE signature = ?)");
}

static void bind_where(sqlite3_stmt *st, const tk_store_query *q)
{
	int i = 1;
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		if (q->where[k])
			sqlite3_bind_text(st, i++, q->where[k], -1, SQLITE_STATIC);
	if (q->since > 0)
		sqlite3_bind_double(st, i++, q->since);
	if (q->until > 0)
		sqlite3_bind_double(st, i++, q->until);
	if (q->signature)
		sqlite3_bind_text(st, i, q->signature, -1, SQLITE_STATIC);
}

/* Prepare sql (from sqlite3_mprintf: freed here) and bind q's filter values (where_sql's
 * placeholders) to it; NULL after setting err, naming what. */
static sqlite3_stmt *prepare_where_on(sq *s, sqlite3 *db, char *sql, const tk_store_query *q, const char *what,
                                      tk_error *err)
{
	sqlite3_stmt *st;
	int prc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (prc != SQLITE_OK) {
		fail_on(s, db, err, what);
		return NULL;
	}
	bind_where(st, q);
	return st;
}

static sqlite3_stmt *prepare_where(sq *s, char *sql, const tk_store_query *q, const char *what, tk_error *err)
{
	return prepare_where_on(s, s->db, sql, q, what, err);
}

/* A by entry as a column of the select list: a key, or a time bucket named day or hour of the
 * column `time` (a report's start, or a session's first report's, t0) in UTC; CAST truncates, so a
 * time never rounds up into the next bucket. */
static void by_sql(int by, const char *time, char *buf, size_t n)
{
	if (by == TK_STORE_BY_DAY)
		snprintf(buf, n, "strftime('%%Y-%%m-%%d', CAST(%s AS INTEGER), 'unixepoch') AS day", time);
	else if (by == TK_STORE_BY_HOUR)
		snprintf(buf, n, "strftime('%%Y-%%m-%%dT%%H', CAST(%s AS INTEGER), 'unixepoch') AS hour", time);
	else
		snprintf(buf, n, "%s", tk_store_by_name(by));
}

/* What to GROUP BY for a by entry: its name, or for a time bucket the bucket's number (the same
 * groups as its text, strftime run once per group instead of once per row). */
static void by_group(int by, char *buf, size_t n)
{
	if (by == TK_STORE_BY_DAY || by == TK_STORE_BY_HOUR) {
		int w = by == TK_STORE_BY_DAY ? 86400 : 3600;
		snprintf(buf, n, "(CAST(time AS INTEGER) - (CAST(time AS INTEGER) < 0) * %d) / %d", w - 1, w);
	} else {
		snprintf(buf, n, "%s", tk_store_by_name(by));
	}
}

/* The select list and the names (GROUP BY, ORDER BY) of q->by. */
static void by_lists(const tk_store_query *q, const char *time, char *sel, size_t sn, char *names, size_t nn)
{
	size_t sl = 0, nl = 0;
	sel[0] = names[0] = 0;
	for (size_t i = 0; i < q->nby; i++) {
		char one[128];
		by_sql(q->by[i], time, one, sizeof one);
		sl += (size_t)snprintf(sel + sl, sn - sl, "%s%s", i ? ", " : "", one);
		nl += (size_t)snprintf(names + nl, nn - nl, "%s%s", i ? ", " : "", tk_store_by_name(q->by[i]));
	}
}

/* hang.rate (docs/store.md "Hang rate"): per session (all six keys), hang µs and foreground µs;
 * its rate = hang s per foreground h; the group's percentiles of those rates, its mean the pooled
 * rate Σ hang / Σ foreground. A session with a metric payload's hang histogram takes its hang time
 * from there (an estimate, counted in estimated), any other from its hangs of at least 250 ms. */
/* A group key: bytes and their length. */
typedef struct pkey {
	const char *p;
	size_t n;
} pkey;

/* hang.rate from sessions_sum grouped in C (the SQL below does the same in two GROUP BYs and a sort):
 * its rows of a session come together in key order; each session's sums are finished when the next
 * begins, its rate (hs · 3600 / fg, as SQL computes it in doubles) put in its group, and each group
 * summarised as tk_summary does (sorted, tk_store_summarise). 1 (nothing written): let SQL answer, where
 * C would differ from it: an integer sum past int64 (SQL's error), a time whose bucket SQL names NULL. */
/* A group of the grouping scans below (hang rate, percentiles): its key (each by entry's text
 * NUL-terminated, or a time bucket's number as 8 bytes), its values, and for the hang rate its sums. */
typedef struct pgroup {
	char *key;
	size_t klen;
	double *v;
	size_t n, cap;
	char *keys[TK_STORE_NKEYS];
	sqlite3_int64 hs, fg, est;
} pgroup;

typedef struct pscan {
	pgroup *g;
	size_t n, cap;
	tk_hidx idx;
	size_t nby;
} pscan;

static int pgroup_eq(const void *ctx, uint32_t idx, const void *key)
{
	const pgroup *g = &((const pscan *)ctx)->g[idx];
	const pkey *k = key;
	return g->klen == k->n && memcmp(g->key, k->p, k->n) == 0;
}

static int pgroup_cmp(const void *a, const void *b, void *nby)
{
	const pgroup *x = a, *y = b;
	for (size_t i = 0; i < *(size_t *)nby; i++) {
		int c = strcmp(x->keys[i], y->keys[i]);
		if (c)
			return c;
	}
	return 0;
}

/* A value (times over) into the group of key (klen kl); *last: the group of the value before. Its group. */
static uint32_t pscan_put(pscan *ps, uint32_t *last, const char *key, size_t kl, double v, sqlite3_int64 times)
{
	uint32_t at = *last;
	if (at == UINT32_MAX || ps->g[at].klen != kl || memcmp(ps->g[at].key, key, kl) != 0) {
		uint64_t h = tk_hash_bytes(key, kl, 0);
		pkey k = {key, kl};
		at = tk_hidx_find(&ps->idx, h, pgroup_eq, ps, &k);
		if (at == UINT32_MAX) {
			TK_GROW(ps->g, ps->cap, ps->n + 1);
			pgroup *g = &ps->g[ps->n];
			memset(g, 0, sizeof *g);
			g->key = tk_xmalloc(kl ? kl : 1);
			memcpy(g->key, key, kl);
			g->klen = kl;
			at = (uint32_t)ps->n++;
			tk_hidx_insert(&ps->idx, h, at);
		}
		*last = at;
	}
	pgroup *g = &ps->g[at];
	if (times < 1)
		return at;
	TK_GROW(g->v, g->cap, g->n + (size_t)times);
	for (sqlite3_int64 t = 0; t < times; t++)
		g->v[g->n++] = v;
	return at;
}

/* The groups' key texts (a bucket named by strftime on its first second, as by_sql names it, on db),
 * then the groups in the order ORDER BY keys gives; 0, or -1 where a bucket has no name (a time SQL
 * names NULL: the hang rate then lets SQL group them; the percentiles name it "" unless null_ok is 0)
 * or on an error. */
static int pscan_label(sqlite3 *db, const tk_store_query *q, pscan *ps, int null_ok)
{
	sqlite3_stmt *lab = NULL;
	int ok = 1;
	for (size_t gi = 0; ok && gi < ps->n; gi++) {
		pgroup *g = &ps->g[gi];
		const char *p = g->key;
		for (size_t i = 0; ok && i < q->nby; i++) {
			if (q->by[i] == TK_STORE_BY_DAY || q->by[i] == TK_STORE_BY_HOUR) {
				sqlite3_int64 b;
				memcpy(&b, p, sizeof b);
				p += sizeof b;
				char one[160];
				by_sql(q->by[i], "?1", one, sizeof one);
				char *ls = sqlite3_mprintf("SELECT %s", one);
				sqlite3_finalize(lab);
				lab = NULL;
				ok = sqlite3_prepare_v2(db, ls, -1, &lab, NULL) == SQLITE_OK;
				sqlite3_free(ls);
				if (!ok)
					break;
				sqlite3_bind_int64(lab, 1, b * (q->by[i] == TK_STORE_BY_DAY ? 86400 : 3600));
				ok = sqlite3_step(lab) == SQLITE_ROW;
				const char *t = ok ? (const char *)sqlite3_column_text(lab, 0) : NULL;
				ok = ok && (t || null_ok);
				g->keys[i] = tk_xstrdup(t ? t : "");
			} else {
				g->keys[i] = tk_xstrdup(p);
				p += strlen(p) + 1;
			}
		}
	}
	sqlite3_finalize(lab);
	if (ok && ps->n)
		qsort_r(ps->g, ps->n, sizeof *ps->g, pgroup_cmp, &ps->nby);
	return ok ? 0 : -1;
}

static void pscan_free(pscan *ps)
{
	for (size_t gi = 0; gi < ps->n; gi++) {
		for (size_t i = 0; i < TK_STORE_NKEYS; i++)
			free(ps->g[gi].keys[i]);
		free(ps->g[gi].key);
		free(ps->g[gi].v);
	}
	free(ps->g);
	tk_hidx_free(&ps->idx);
}

/* One session's sums, as the inner SELECT has them. */
typedef struct rsess {
	char *keys[TK_STORE_NKEYS];
	double t0;
	sqlite3_int64 fg, hsn, hs_ht, hs_lus;
	int any, over;
} rsess;

/* by_group's bucket of a time (CAST, less w − 1 when negative, divided): -1 where SQL's integer
 * arithmetic would overflow into doubles */
static int rate_bucket(double t, int w, sqlite3_int64 *b)
{
	sqlite3_int64 x = t <= -9223372036854775808.0  ? INT64_MIN
	                  : t >= 9223372036854775807.0 ? INT64_MAX
	                                               : (sqlite3_int64)t;
	if (x < 0 && x < INT64_MIN + (w - 1))
		return -1;
	*b = (x - (x < 0) * (sqlite3_int64)(w - 1)) / w;
	return 0;
}

static int rate_finish(pscan *r, const tk_store_query *q, rsess *ss, char **key, size_t *kcap)
{
	if (!ss->any || ss->over)
		return ss->over ? -1 : 0;
	if (!(ss->fg > 0))
		return 0;
	sqlite3_int64 hs = ss->hsn > 0 ? ss->hs_ht : ss->hs_lus;
	size_t kl = 0;
	for (size_t i = 0; i < q->nby; i++) {
		if (q->by[i] == TK_STORE_BY_DAY || q->by[i] == TK_STORE_BY_HOUR) {
			sqlite3_int64 b;
			if (rate_bucket(ss->t0, q->by[i] == TK_STORE_BY_DAY ? 86400 : 3600, &b))
				return -1;
			TK_GROW(*key, *kcap, kl + sizeof b);
			memcpy(*key + kl, &b, sizeof b);
			kl += sizeof b;
		} else {
			const char *t = ss->keys[q->by[i]];
			size_t tl = strlen(t);
			TK_GROW(*key, *kcap, kl + tl + 1);
			memcpy(*key + kl, t, tl + 1);
			kl += tl + 1;
		}
	}
	uint32_t last = UINT32_MAX, at = pscan_put(r, &last, *key, kl, (double)hs * 3600.0 / (double)ss->fg, 1);
	pgroup *g = &r->g[at]; /* after the call: it may move the groups */
	if (__builtin_add_overflow(g->hs, hs, &g->hs) || __builtin_add_overflow(g->fg, ss->fg, &g->fg))
		return -1;
	g->est += ss->hsn > 0;
	return 0;
}

static int hang_rate_from_sum(sq *s, const tk_store_query *q, tk_store_group **out, size_t *n, tk_error *err)
{
	char where[512];
	where_sql(q, TK_STORE_RATE_KINDS, NULL, where, sizeof where);
	char *sql = sqlite3_mprintf("SELECT app, version, build, device, os, session, kind, nd, t0, dus, lus FROM "
	                            "sessions_sum%s AND nd > 0 ORDER BY app, version, build, device, os, session",
	                            where);
	sqlite3 *db = scan_db(s);
	sqlite3_stmt *st = prepare_where_on(s, db, sql, q, "hang-rate query", err);
	if (!st)
		return -1;
	pscan r = {.nby = q->nby};
	rsess ss = {0};
	char *key = NULL;
	size_t kcap = 0;
	TK_GROW(key, kcap, 16);
	int rc, bad = 0;
	while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k[TK_STORE_NKEYS];
		for (int i = 0; i < TK_STORE_NKEYS; i++) {
			k[i] = (const char *)sqlite3_column_text(st, i);
			k[i] = k[i] ? k[i] : "";
		}
		int same = ss.any;
		for (int i = TK_STORE_NKEYS - 1; same && i >= 0; i--)
			same = strcmp(ss.keys[i], k[i]) == 0;
		if (!same) {
			bad = rate_finish(&r, q, &ss, &key, &kcap) != 0;
			for (int i = 0; i < TK_STORE_NKEYS; i++)
				free(ss.keys[i]);
			memset(&ss, 0, sizeof ss);
			for (int i = 0; i < TK_STORE_NKEYS; i++)
				ss.keys[i] = tk_xstrdup(k[i]);
			ss.any = 1;
			ss.t0 = NAN;
		}
		const char *kind = (const char *)sqlite3_column_text(st, 6);
		kind = kind ? kind : "";
		sqlite3_int64 nd = sqlite3_column_int64(st, 7), dus = sqlite3_column_int64(st, 9),
		              lus = sqlite3_column_int64(st, 10);
		if (sqlite3_column_type(st, 8) != SQLITE_NULL) {
			double t = sqlite3_column_double(st, 8);
			if (isnan(ss.t0) || t < ss.t0)
				ss.t0 = t;
		}
		if (strcmp(kind, "foreground") == 0)
			ss.over |= __builtin_add_overflow(ss.fg, dus, &ss.fg);
		if (strcmp(kind, "hang-time") == 0) {
			ss.over |= __builtin_add_overflow(ss.hsn, nd, &ss.hsn);
			ss.over |= __builtin_add_overflow(ss.hs_ht, dus, &ss.hs_ht);
		}
		if (is_hang_kind(kind))
			ss.over |= __builtin_add_overflow(ss.hs_lus, lus, &ss.hs_lus);
	}
	if (!bad && rc == SQLITE_DONE)
		bad = rate_finish(&r, q, &ss, &key, &kcap) != 0;
	for (int i = 0; i < TK_STORE_NKEYS; i++)
		free(ss.keys[i]);
	sqlite3_finalize(st);
	free(key);
	int ok = !bad && rc == SQLITE_DONE && pscan_label(db, q, &r, 0) == 0;
	if (ok && r.n) {
		*out = tk_xcalloc(r.n, sizeof **out);
		for (size_t gi = 0; gi < r.n; gi++) {
			pgroup *g = &r.g[gi];
			tk_store_group *o = &(*out)[(*n)++];
			qsort(g->v, g->n, sizeof *g->v, cmp_double);
			tk_store_summarise(g->v, g->n, o);
			o->count = (uint64_t)(double)o->count;
			o->mean = (double)g->hs * 3600.0 / (double)g->fg;
			o->estimated = (uint64_t)g->est;
			memcpy(o->keys, g->keys, sizeof o->keys);
			memset(g->keys, 0, sizeof g->keys);
		}
	}
	pscan_free(&r);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return fail_on(s, db, err, "hang-rate query");
	return ok ? 0 : 1;
}

#define SQ_US(x) "CAST(" x " * 1000000.0 + 0.5 AS INTEGER)"
static int sq_hang_rate(sq *s, const tk_store_query *q, tk_store_group **out, size_t *n, tk_error *err)
{
	/* a day or hour bucket holds the sessions that started in it (their first report's time, t0) */
	char sel[512], keys[256], where[512];
	by_lists(q, "t0", sel, sizeof sel, keys, sizeof keys);
	char *sql;
	if (!(q->since > 0) && !(q->until > 0) && !q->signature) {
		int c = hang_rate_from_sum(s, q, out, n, err);
		if (c <= 0)
			return c;
	}
	if (!(q->since > 0) && !(q->until > 0) && !q->signature) {
		/* from sessions_sum: the same sessions (those with a report of these kinds with a
		 * duration), the same integer sums and first time, per (session, kind) row */
		where_sql(q, TK_STORE_RATE_KINDS, NULL, where, sizeof where);
		sql = sqlite3_mprintf(
		    "SELECT %s%stk_summary(hs * 3600.0 / fg), sum(hs), sum(fg), sum(est) FROM ("
		    "SELECT app, version, build, device, os, session, min(t0) AS t0,"
		    " sum(CASE WHEN kind = 'foreground' THEN dus ELSE 0 END) AS fg,"
		    " sum(CASE WHEN kind = 'hang-time' THEN nd ELSE 0 END) > 0 AS est,"
		    " CASE WHEN sum(CASE WHEN kind = 'hang-time' THEN nd ELSE 0 END) > 0"
		    " THEN sum(CASE WHEN kind = 'hang-time' THEN dus ELSE 0 END)"
		    " ELSE sum(CASE WHEN kind IN " TK_STORE_HANG_KINDS " THEN lus ELSE 0 END) END AS hs"
		    " FROM sessions_sum%s AND nd > 0 GROUP BY app, version, build, device, os, session)"
		    " WHERE fg > 0%s%s%s%s",
		    sel, q->nby ? ", " : "", where, q->nby ? " GROUP BY " : "", keys, q->nby ? " ORDER BY " : "", keys);
	} else {
		where_sql(q, TK_STORE_RATE_KINDS, "duration", where, sizeof where);
		sql = sqlite3_mprintf("SELECT %s%stk_summary(hs * 3600.0 / fg), sum(hs), sum(fg), sum(est) FROM ("
		                      "SELECT app, version, build, device, os, session, min(time) AS t0,"
		                      " sum(CASE WHEN kind = 'foreground' THEN " SQ_US(
		                          "duration") " ELSE 0 END) AS fg,"
		                                      " sum(kind = 'hang-time') > 0 AS est,"
		                                      " CASE WHEN sum(kind = 'hang-time') > 0"
		                                      " THEN sum(CASE WHEN kind = 'hang-time' THEN " SQ_US(
		                                          "duration") " ELSE 0 END)"
		                                                      " ELSE sum(CASE WHEN kind IN " TK_STORE_HANG_KINDS
		                                                      " AND duration >= %.17g THEN " SQ_US(
		                                                          "duration") " ELSE 0 END) END AS hs"
		                                                                      " FROM reports%s%s GROUP BY app, "
		                                                                      "version, build, device, os, "
		                                                                      "session) WHERE fg > 0%s%s%s%s",
		                      sel, q->nby ? ", " : "", TK_STORE_RATE_MIN_HANG,
		                      /* a time or signature filter is narrower by its own index */
		                      "", where, q->nby ? " GROUP BY " : "", keys, q->nby ? " ORDER BY " : "", keys);
	}
	sqlite3 *db = scan_db(s);
	sqlite3_stmt *st = prepare_where_on(s, db, sql, q, "hang-rate query", err);
	if (!st)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int c = (int)q->nby;
		const void *blob = sqlite3_column_blob(st, c);
		if (!blob || sqlite3_column_bytes(st, c) != (int)((4 + TK_STORE_NQ) * sizeof(double)))
			continue; /* no session at all */
		TK_GROW(*out, cap, *n + 1);
		tk_store_group *g = &(*out)[(*n)++];
		memset(g, 0, sizeof *g);
		for (size_t i = 0; i < q->nby; i++)
			g->keys[i] = tk_xstrdup((const char *)sqlite3_column_text(st, (int)i));
		unpack(blob, g);
		g->mean = (double)sqlite3_column_int64(st, c + 1) * 3600.0 / (double)sqlite3_column_int64(st, c + 2);
		g->estimated = (uint64_t)sqlite3_column_int64(st, c + 3);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		tk_store_groups_free(*out, *n);
		*out = NULL;
		*n = 0;
		return fail_on(s, db, err, "hang-rate query");
	}
	return 0;
}

static int sq_changes(void *h, uint64_t *token, tk_error *err);
static int sq_percentiles_run(sq *s, const tk_store_query *q, tk_store_group **out, size_t *n, tk_error *err);
static int vc_fit(const tk_store_query *q, const char *kinds, const char *col, char *where, size_t n);

static int sq_percentiles(void *h, const tk_store_query *q, tk_store_group **out, size_t *n, tk_error *err)
{
	sq *s = h;
	uint64_t token;
	if (sq_changes(s, &token, err))
		return -1;
	char *key = query_key(q);
	if (!s->qc)
		s->qc = tk_xcalloc(1, sizeof *s->qc);
	qcache *c = s->qc;
	size_t slot = 0;
	for (size_t i = 0; i < QCACHE_N; i++) {
		if (c->key[i] && c->token[i] == token && strcmp(c->key[i], key) == 0) {
			free(key);
			c->used[i] = ++c->clock;
			*out = groups_copy(c->g[i], c->n[i], c->nby[i]);
			*n = c->n[i];
			return 0;
		}
		if (!c->key[i] || c->token[i] != token || c->used[i] < c->used[slot])
			slot = i;
		if (!c->key[slot])
			break;
	}
	if (sq_percentiles_run(s, q, out, n, err)) {
		free(key);
		return -1;
	}
	free(c->key[slot]);
	tk_store_groups_free(c->g[slot], c->n[slot]);
	c->key[slot] = key;
	c->token[slot] = token;
	c->used[slot] = ++c->clock;
	c->g[slot] = groups_copy(*out, *n, q->nby);
	c->n[slot] = *n;
	c->nby[slot] = q->nby;
	return 0;
}

/* An entry of hour_runs' runs (migration 10 → 11): a value of reports of an hour of its day (0-23)
 * and how many, packed little-endian in HRUN_BYTES: the hour, the double's bits, the count (u32). */
typedef struct hrun {
	int h;
	double v;
	uint32_t n;
} hrun;
#define HRUN_BYTES 13

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		p[k] = (unsigned char)(v >> (8 * k));
}

static void hrun_get(const unsigned char *p, size_t i, hrun *r)
{
	p += i * HRUN_BYTES;
	uint64_t b = 0;
	for (int k = 7; k >= 0; k--)
		b = b << 8 | p[1 + k];
	r->h = p[0];
	memcpy(&r->v, &b, sizeof b);
	r->n = le32(p + 9);
}

static void hrun_put(unsigned char *p, size_t i, const hrun *r)
{
	p += i * HRUN_BYTES;
	uint64_t b;
	memcpy(&b, &r->v, sizeof b);
	p[0] = (unsigned char)r->h;
	for (int k = 0; k < 8; k++)
		p[1 + k] = (unsigned char)(b >> (8 * k));
	put32(p + 9, r->n);
}

static int hour_runs_ready(sq *s);

/* Percentiles of a report metric grouped in C: the selected rows streamed in whatever order their
 * index gives (no ORDER BY, so no sort of a million rows in a temporary b-tree, as GROUP BY over
 * kind IN (…) needs), each appended to its group's values (consecutive rows mostly share a group:
 * one memcmp), then each group's values sorted (most come sorted from reports_values: checked,
 * not sorted again) and summarised by tk_store_summarise, as tk_summary's final step does: the same
 * numbers. Groups come out in the order ORDER BY keys gives (byte order of each key in turn); a day or
 * hour bucket is grouped by its number and named as by_sql names it, once per group. */
static int sq_percentiles_scan(sq *s, const tk_store_query *q, const tk_store_metric *m, tk_store_group **out,
                               size_t *n, tk_error *err)
{
	char sel[1024] = "", where[512];
	size_t sl = 0;
	/* value_counts holds a day's values: a grouping of app, version and day under its filters */
	int sum = vc_fit(q, m->kinds, m->column, where, sizeof where);
	for (size_t i = 0; i < q->nby; i++)
		sum &= q->by[i] == TK_STORE_APP || q->by[i] == TK_STORE_VERSION || q->by[i] == TK_STORE_BY_DAY;
	for (size_t i = 0; i < q->nby; i++) {
		char one[160];
		if (sum && q->by[i] == TK_STORE_BY_DAY)
			snprintf(one, sizeof one, "day");
		else if (q->by[i] == TK_STORE_BY_DAY || q->by[i] == TK_STORE_BY_HOUR)
			by_group(q->by[i], one, sizeof one);
		else
			snprintf(one, sizeof one, "%s", tk_store_by_name(q->by[i]));
		sl += (size_t)snprintf(sel + sl, sizeof sel - sl, "%s, ", one);
	}
	/* hour_runs holds an hour's values: a grouping of app, version and hour under value_counts' filters */
	int hour = !sum && q->nby > 0 && vc_fit(q, m->kinds, m->column, where, sizeof where);
	for (size_t i = 0; hour && i < q->nby; i++)
		hour = q->by[i] == TK_STORE_APP || q->by[i] == TK_STORE_VERSION || q->by[i] == TK_STORE_BY_HOUR;
	hour = hour && hour_runs_ready(s);
	if (!sum && !hour) {
		where_sql(q, m->kinds, m->column, where, sizeof where);
		/* a version without an app: every app named (sessions_sum has each report's), so the index is
		 * searched per (kind, app, version) instead of read whole; the same rows */
		if (q->where[TK_STORE_VERSION] && !q->where[TK_STORE_APP] && !q->signature)
			snprintf(where + strlen(where), sizeof where - strlen(where),
			         " AND app IN (SELECT DISTINCT app FROM "
			         "sessions_sum)");
	}
	/* reports_values covers every column read here; a signature's reports are fewer by reports_sig */
	char *sql = hour  ? sqlite3_mprintf("SELECT app, version, day, runs FROM hour_runs%s", where)
	            : sum ? sqlite3_mprintf("SELECT %svalue, n FROM value_counts%s", sel, where)
	                  : sqlite3_mprintf("SELECT %s%s, 1 FROM reports%s%s", sel, m->column,
	                                    q->signature ? "" : " INDEXED BY reports_values", where);
	sqlite3 *db = scan_db(s);
	sqlite3_stmt *st = prepare_where_on(s, db, sql, q, "percentile query", err);
	if (!st)
		return -1;
	pscan ps = {.nby = q->nby};
	char *key = NULL;
	size_t kcap = 0;
	TK_GROW(key, kcap, 16); /* never NULL, even for the empty key of no grouping */
	uint32_t last = UINT32_MAX;
	int rc;
	while (hour && (rc = sqlite3_step(st)) == SQLITE_ROW) { /* hour_runs: (app, version, day, runs) */
		const char *kt[2] = {(const char *)sqlite3_column_text(st, 0),
		                     (const char *)sqlite3_column_text(st, 1)};
		size_t ktl[2] = {(size_t)sqlite3_column_bytes(st, 0), (size_t)sqlite3_column_bytes(st, 1)};
		sqlite3_int64 day = sqlite3_column_int64(st, 2);
		const unsigned char *e = sqlite3_column_blob(st, 3);
		size_t ne = (size_t)sqlite3_column_bytes(st, 3) / HRUN_BYTES;
		for (size_t j = 0; e && j < ne; j++) {
			hrun r;
			hrun_get(e, j, &r);
			sqlite3_int64 b = day * 24 + r.h;
			size_t kl = 0;
			for (size_t i = 0; i < q->nby; i++) {
				if (q->by[i] == TK_STORE_BY_HOUR) {
					TK_GROW(key, kcap, kl + sizeof b);
					memcpy(key + kl, &b, sizeof b);
					kl += sizeof b;
				} else {
					int c = q->by[i] == TK_STORE_APP ? 0 : 1;
					TK_GROW(key, kcap, kl + ktl[c] + 1);
					memcpy(key + kl, kt[c] ? kt[c] : "", ktl[c]);
					key[kl + ktl[c]] = 0;
					kl += ktl[c] + 1;
				}
			}
			pscan_put(&ps, &last, key, kl, r.v, (sqlite3_int64)r.n);
		}
	}
	while (!hour && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t kl = 0;
		for (size_t i = 0; i < q->nby; i++) {
			if (q->by[i] == TK_STORE_BY_DAY || q->by[i] == TK_STORE_BY_HOUR) {
				sqlite3_int64 b = sqlite3_column_int64(st, (int)i);
				TK_GROW(key, kcap, kl + sizeof b);
				memcpy(key + kl, &b, sizeof b);
				kl += sizeof b;
			} else {
				const char *t = (const char *)sqlite3_column_text(st, (int)i);
				size_t tl = (size_t)sqlite3_column_bytes(st, (int)i);
				TK_GROW(key, kcap, kl + tl + 1);
				memcpy(key + kl, t ? t : "", tl);
				key[kl + tl] = 0;
				kl += tl + 1;
			}
		}
		pscan_put(&ps, &last, key, kl, sqlite3_column_double(st, (int)q->nby),
		          sqlite3_column_int64(st, (int)q->nby + 1));
	}
	sqlite3_finalize(st);
	free(key);
	int ok = rc == SQLITE_DONE && pscan_label(db, q, &ps, 1) == 0;
	if (ok && ps.n) { /* none: no group at all (*out stays NULL, as for no rows before) */
		*out = tk_xcalloc(ps.n, sizeof **out);
		for (size_t gi = 0; gi < ps.n; gi++) {
			pgroup *g = &ps.g[gi];
			size_t i = 1;
			while (i < g->n && !(g->v[i] < g->v[i - 1]))
				i++;
			if (i < g->n)
				qsort(g->v, g->n, sizeof *g->v, cmp_double);
			tk_store_group *o = &(*out)[gi];
			tk_store_summarise(g->v, g->n, o);
			memcpy(o->keys, g->keys, sizeof o->keys);
			memset(g->keys, 0, sizeof g->keys);
		}
		*n = ps.n;
	}
	pscan_free(&ps);
	return ok ? 0 : fail_on(s, db, err, "percentile query");
}

/* value_counts' col for a report column it counts, or -1. */
static int vc_col(const char *col)
{
	return strcmp(col, "duration") == 0 ? 0 : strcmp(col, "avg_cpu") == 0 ? 1 : -1;
}

/* Whether value_counts answers q's filters on col: app and version alone, no time range or signature.
 * Then the WHERE for it (bind_where binds the same parameters). */
static int vc_fit(const tk_store_query *q, const char *kinds, const char *col, char *where, size_t n)
{
	if (vc_col(col) < 0 || q->since > 0 || q->until > 0 || q->signature)
		return 0;
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		if (q->where[k] && k != TK_STORE_APP && k != TK_STORE_VERSION)
			return 0;
	size_t len = (size_t)snprintf(where, n, " WHERE col = %d AND kind IN %s", vc_col(col), kinds);
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		if (q->where[k])
			len += (size_t)snprintf(where + len, n - len, " AND %s = ?", tk_store_key_names[k]);
	/* a version without an app: every app named, so the key is searched per (kind, app, version) */
	if (q->where[TK_STORE_VERSION] && !q->where[TK_STORE_APP])
		snprintf(where + len, n - len, " AND app IN (SELECT DISTINCT app FROM sessions_sum)");
	return 1;
}

/* ---- sorted values per (app, version), kept per connection ----
 * The dashboard asks one metric's values under one filter several ways: the overview by app and
 * version, its alert rule by version, the pages' version lists, a histogram's rows, a comparison's
 * percentiles and Mann-Whitney values of one version. Each was a scan of its own. Instead one scan of
 * reports_values per (metric column, kinds, filters) keeps each (app, version)'s values sorted (they
 * come sorted from the index within a kind), and every grouping of app and version is answered by
 * merging them: the same values in the same order, so the same numbers. Kept while the change token
 * (sq_changes) is the same. */

/* A distinct value and how many reports hold it. */
typedef struct vw {
	double v;
	uint64_t n;
} vw;

typedef struct vrun {
	char *app, *version;
	vw *v; /* ascending, each value once */
	size_t n, cap;
} vrun;

/* The slot of a small answer cache (the sorted values below, a filter's rows by signature) that holds
 * key for the store's state token (*hit = 1), else the one to fill: the first empty, one kept for an
 * older state, or the least recently used. */
static size_t cache_slot(char *const *keys, const uint64_t *tokens, const uint64_t *used, size_t n, const char *key,
                         uint64_t token, int *hit)
{
	size_t slot = 0;
	for (size_t i = 0; i < n; i++) {
		if (keys[i] && tokens[i] == token && strcmp(keys[i], key) == 0)
			return *hit = 1, i;
		if (keys[slot] && (!keys[i] || tokens[i] != token || used[i] < used[slot]))
			slot = i;
	}
	return *hit = 0, slot;
}

#define VCACHE_N 4
typedef struct vcache {
	char *key[VCACHE_N];
	uint64_t token[VCACHE_N], used[VCACHE_N], clock;
	vrun *r[VCACHE_N];
	size_t n[VCACHE_N];
} vcache;

static void vruns_free(vrun *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].app);
		free(r[i].version);
		free(r[i].v);
	}
	free(r);
}

static void vcache_free(sq *s)
{
	if (!s->vc)
		return;
	for (size_t i = 0; i < VCACHE_N; i++) {
		free(s->vc->key[i]);
		vruns_free(s->vc->r[i], s->vc->n[i]);
	}
	free(s->vc);
	s->vc = NULL;
}

/* A query the runs answer: a report metric of durations or CPU grouped by nothing, app or version
 * (either order), under any filter but a signature. */
static int vruns_fit(const tk_store_query *q, const tk_store_metric *m)
{
	if (m->profile || q->signature || tk_store_is_hang_rate(q))
		return 0;
	for (size_t i = 0; i < q->nby; i++)
		if (q->by[i] != TK_STORE_APP && q->by[i] != TK_STORE_VERSION)
			return 0;
	return 1;
}

static int vrun_eq(const void *ctx, uint32_t idx, const void *key)
{
	const vrun *r = &((const vrun *)ctx)[idx];
	const char *const *k = key;
	return strcmp(r->app, k[0]) == 0 && strcmp(r->version, k[1]) == 0;
}

static int vrun_cmp(const void *a, const void *b)
{
	const vrun *x = a, *y = b;
	int c = strcmp(x->app, y->app);
	return c ? c : strcmp(x->version, y->version);
}

static int vw_cmp(const void *a, const void *b)
{
	double x = ((const vw *)a)->v, y = ((const vw *)b)->v;
	return (x > y) - (x < y);
}

static int range_vruns(sq *s, const tk_store_query *q, const char *kinds, const char *col, vrun **out, size_t *nout,
                       tk_error *err);

/* The runs of the reports q selects (its filters; not its grouping) of kinds with col recorded,
 * sorted by (app, version), each run's values ascending; owned by the cache. */
static int vruns_get(sq *s, const tk_store_query *q, const char *kinds, const char *col, const vrun **out, size_t *nout,
                     tk_error *err)
{
	uint64_t token;
	if (sq_changes(s, &token, err))
		return -1;
	tk_store_query kq = *q; /* the key: the filters, kinds and column */
	kq.metric = col, kq.kind = kinds, kq.nby = 0;
	char *key = query_key(&kq);
	if (!s->vc)
		s->vc = tk_xcalloc(1, sizeof *s->vc);
	vcache *c = s->vc;
	int hit;
	size_t slot = cache_slot(c->key, c->token, c->used, VCACHE_N, key, token, &hit);
	if (hit) {
		free(key);
		c->used[slot] = ++c->clock;
		*out = c->r[slot], *nout = c->n[slot];
		return 0;
	}
	/* a date range: from hour_runs and the partial hours' reports */
	vrun *rr = NULL;
	size_t nrr = 0;
	int ranged = range_vruns(s, q, kinds, col, &rr, &nrr, err);
	if (ranged < 0) {
		free(key);
		return -1;
	}
	if (ranged == 0) {
		free(c->key[slot]);
		vruns_free(c->r[slot], c->n[slot]);
		c->key[slot] = key;
		c->token[slot] = token;
		c->used[slot] = ++c->clock;
		c->r[slot] = rr;
		c->n[slot] = nrr;
		*out = rr, *nout = nrr;
		return 0;
	}
	char where[512];
	/* from value_counts where it holds the filters: each value n times, in the same order */
	int sum = vc_fit(q, kinds, col, where, sizeof where);
	if (!sum) {
		where_sql(q, kinds, col, where, sizeof where);
		/* a version without an app: every app named (sessions_sum has each report's), so the index is
		 * searched per (kind, app, version) instead of read whole; the same rows */
		if (q->where[TK_STORE_VERSION] && !q->where[TK_STORE_APP])
			snprintf(where + strlen(where), sizeof where - strlen(where),
			         " AND app IN (SELECT DISTINCT app FROM sessions_sum)");
	}
	char *sql =
	    sum ? sqlite3_mprintf("SELECT app, version, value, n FROM value_counts%s", where)
	        : sqlite3_mprintf("SELECT app, version, %s, 1 FROM reports INDEXED BY reports_values%s", col, where);
	sqlite3 *db = scan_db(s);
	sqlite3_stmt *st = prepare_where_on(s, db, sql, q, "percentile query", err);
	if (!st) {
		free(key);
		return -1;
	}
	vrun *r = NULL;
	size_t n = 0, cap = 0;
	tk_hidx idx = {0};
	uint32_t last = UINT32_MAX;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k[2] = {(const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1)};
		k[0] = k[0] ? k[0] : "", k[1] = k[1] ? k[1] : "";
		if (last == UINT32_MAX || !vrun_eq(r, last, k)) { /* rows of a run come together */
			size_t la = strlen(k[0]), lv = strlen(k[1]);
			uint64_t h = tk_hash_bytes(k[1], lv, tk_hash_bytes(k[0], la + 1, 0));
			last = tk_hidx_find(&idx, h, vrun_eq, r, k);
			if (last == UINT32_MAX) {
				TK_GROW(r, cap, n + 1);
				r[n] = (vrun){.app = tk_xstrdup(k[0]), .version = tk_xstrdup(k[1])};
				last = (uint32_t)n++;
				tk_hidx_insert(&idx, h, last);
			}
		}
		vrun *w = &r[last];
		sqlite3_int64 times = sqlite3_column_int64(st, 3);
		double v = sqlite3_column_double(st, 2);
		if (times < 1)
			continue;
		if (w->n && w->v[w->n - 1].v == v) {
			w->v[w->n - 1].n += (uint64_t)times;
		} else {
			TK_GROW(w->v, w->cap, w->n + 1);
			w->v[w->n++] = (vw){v, (uint64_t)times};
		}
	}
	sqlite3_finalize(st);
	tk_hidx_free(&idx);
	if (rc != SQLITE_DONE) {
		vruns_free(r, n);
		free(key);
		return fail_on(s, db, err, "percentile query");
	}
	if (n > 1)
		qsort(r, n, sizeof *r, vrun_cmp);
	for (size_t i = 0; i < n; i++) { /* sorted unless two kinds met in the run, or col is not duration */
		size_t u = 1;
		while (u < r[i].n && r[i].v[u - 1].v < r[i].v[u].v)
			u++;
		if (u < r[i].n) { /* sorted, and equal values made one */
			qsort(r[i].v, r[i].n, sizeof *r[i].v, vw_cmp);
			size_t o = 0;
			for (size_t k = 1; k < r[i].n; k++) {
				if (r[i].v[k].v == r[i].v[o].v)
					r[i].v[o].n += r[i].v[k].n;
				else
					r[i].v[++o] = r[i].v[k];
			}
			r[i].n = o + 1;
		}
	}
	free(c->key[slot]);
	vruns_free(c->r[slot], c->n[slot]);
	c->key[slot] = key;
	c->token[slot] = token;
	c->used[slot] = ++c->clock;
	c->r[slot] = r;
	c->n[slot] = n;
	*out = r, *nout = n;
	return 0;
}

/* The key of run r for a grouping: key i is app or version as by[i] says. */
static const char *vrun_key(const vrun *r, int by)
{
	return by == TK_STORE_APP ? r->app : r->version;
}

typedef struct vgroup_ctx {
	const vrun *r;
	const int *by;
	size_t nby;
} vgroup_ctx;

static int vorder_cmp(const void *a, const void *b, void *ctx)
{
	const vgroup_ctx *g = ctx;
	const vrun *x = &g->r[*(const uint32_t *)a], *y = &g->r[*(const uint32_t *)b];
	for (size_t i = 0; i < g->nby; i++) {
		int c = strcmp(vrun_key(x, g->by[i]), vrun_key(y, g->by[i]));
		if (c)
			return c;
	}
	return 0;
}

/* The runs grouped by by[0..nby) (APP or VERSION): calls each(ctx, first run of the group, its
 * values merged ascending (a value may come twice, from two runs), how many) per group, in the order
 * of the keys' bytes. */
static int vruns_groups(const vrun *r, size_t n, const int *by, size_t nby,
                        int (*each)(void *ctx, const vrun *first, const vw *v, size_t nv), void *ctx)
{
	if (!n)
		return 0;
	uint32_t *ord = tk_xmalloc(n * sizeof *ord);
	for (size_t i = 0; i < n; i++)
		ord[i] = (uint32_t)i;
	vgroup_ctx g = {r, by, nby};
	qsort_r(ord, n, sizeof *ord, vorder_cmp, &g);
	vw *a = NULL, *b = NULL;
	size_t acap = 0, bcap = 0, *cut = tk_xmalloc((n + 1) * sizeof *cut);
	int rc = 0;
	for (size_t i = 0; i < n && !rc;) {
		size_t j = i + 1;
		while (j < n && vorder_cmp(&ord[i], &ord[j], &g) == 0)
			j++;
		if (j - i == 1) {
			rc = each(ctx, &r[ord[i]], r[ord[i]].v, r[ord[i]].n);
			i = j;
			continue;
		}
		/* several runs: concatenated, then merged pairwise until one is left */
		size_t total = 0, m = 0;
		for (size_t k = i; k < j; k++)
			total += r[ord[k]].n;
		TK_GROW(a, acap, total + 1);
		TK_GROW(b, bcap, total + 1);
		cut[0] = 0;
		for (size_t k = i; k < j; k++) {
			memcpy(a + cut[m], r[ord[k]].v, r[ord[k]].n * sizeof *a);
			cut[m + 1] = cut[m] + r[ord[k]].n;
			m++;
		}
		while (m > 1) {
			size_t nm = 0;
			for (size_t k = 0; k < m; k += 2) {
				size_t lo = cut[k], mid = cut[k + 1], hi = k + 2 <= m ? cut[k + 2] : mid, x = lo,
				       y = mid, o = lo;
				while (x < mid && y < hi)
					b[o++] = a[y].v < a[x].v ? a[y++] : a[x++];
				while (x < mid)
					b[o++] = a[x++];
				while (y < hi)
					b[o++] = a[y++];
				cut[nm++] = lo;
			}
			cut[nm] = total;
			m = nm;
			vw *t = a;
			a = b, b = t;
			size_t tc = acap;
			acap = bcap, bcap = tc;
		}
		rc = each(ctx, &r[ord[i]], a, total);
		i = j;
	}
	free(a);
	free(b);
	free(cut);
	free(ord);
	return rc;
}

typedef struct vpct_ctx {
	const tk_store_query *q;
	tk_store_group *g;
	size_t n;
} vpct_ctx;

/* tk_store_summarise of the values v holds (each v[i].v v[i].n times, ascending), the same numbers
 * without the values laid out: the mean summed as tk_summary_sorted sums (compensated, in long
 * double, value by value in order), each percentile from the two order statistics type 7 reads,
 * interpolated by tk_store_lerp (tk_quantile7's own step). */
/* The value of rank i (from 0) of v. */
static double vw_at(const vw *v, size_t nv, uint64_t i)
{
	for (size_t k = 0; k < nv; k++) {
		if (i < v[k].n)
			return v[k].v;
		i -= v[k].n;
	}
	return nv ? v[nv - 1].v : NAN;
}

static void vw_summarise(const vw *v, size_t nv, tk_store_group *o)
{
	uint64_t n = 0;
	for (size_t i = 0; i < nv; i++)
		n += v[i].n;
	if (!n) {
		tk_store_summarise(NULL, 0, o);
		return;
	}
	tk_ksum sum = {0, 0};
	for (size_t i = 0; i < nv; i++)
		for (uint64_t k = 0; k < v[i].n; k++)
			tk_ksum_add(&sum, v[i].v);
	o->count = n;
	o->mean = (double)((sum.s + sum.c) / n);
	o->min = v[0].v;
	o->max = v[nv - 1].v;
	for (int q = 0; q < TK_STORE_NQ; q++) {
		uint64_t num = tk_summary_pct_num[q], den = tk_summary_pct_den[q];
		if (num >= den) {
			o->q[q] = o->max;
			continue;
		}
		unsigned __int128 prod = (unsigned __int128)(n - 1) * num;
		uint64_t j = (uint64_t)(prod / den), delta = (uint64_t)(prod % den);
		o->q[q] = j + 1 >= n ? o->max : tk_store_lerp(vw_at(v, nv, j), vw_at(v, nv, j + 1), delta, den);
	}
}

static int vpct_each(void *ctx, const vrun *first, const vw *v, size_t nv)
{
	vpct_ctx *c = ctx;
	tk_store_group *o = &c->g[c->n++];
	vw_summarise(v, nv, o);
	for (size_t i = 0; i < c->q->nby; i++)
		o->keys[i] = tk_xstrdup(vrun_key(first, c->q->by[i]));
	return 0;
}

/* Percentiles of q (vruns_fit) from the runs. */
static int vruns_percentiles(sq *s, const tk_store_query *q, const tk_store_metric *m, tk_store_group **out, size_t *n,
                             tk_error *err)
{
	const vrun *r;
	size_t nr;
	if (vruns_get(s, q, m->kinds, m->column, &r, &nr, err))
		return -1;
	if (!nr)
		return 0; /* no group at all (*out stays NULL) */
	vpct_ctx c = {q, tk_xcalloc(nr, sizeof *c.g), 0};
	vruns_groups(r, nr, q->by, q->nby, vpct_each, &c);
	*out = c.g, *n = c.n;
	return 0;
}

typedef struct vval_ctx {
	int by_version;
	int (*row)(void *ctx, const char *version, double v);
	void *ctx;
} vval_ctx;

static int vval_each(void *ctx, const vrun *first, const vw *v, size_t nv)
{
	vval_ctx *c = ctx;
	for (size_t i = 0; i < nv; i++)
		for (uint64_t k = 0; k < v[i].n; k++)
			if (c->row(c->ctx, c->by_version ? first->version : "", v[i].v))
				return -1;
	return 0;
}

static int sq_percentiles_run(sq *s, const tk_store_query *q, tk_store_group **out, size_t *n, tk_error *err)
{
	if (tk_store_is_hang_rate(q))
		return sq_hang_rate(s, q, out, n, err);
	const tk_store_metric *m = tk_store_metric_find(q->metric);
	if (!m->profile)
		return vruns_fit(q, m) ? vruns_percentiles(s, q, m, out, n, err)
		                       : sq_percentiles_scan(s, q, m, out, n, err);
	char keys[256] = "", sel[1024], where[512];
	by_lists(q, "time", sel, sizeof sel, keys, sizeof keys);
	where_sql(q, m->kinds, m->column, where, sizeof where);
	char *src = source_sql(m, q->metric);
	char groups[512] = "";
	for (size_t i = 0, gl = 0; i < q->nby; i++) {
		char one[128];
		by_group(q->by[i], one, sizeof one);
		gl += (size_t)snprintf(groups + gl, sizeof groups - gl, "%s%s", i ? ", " : "", one);
	}
	char *sql = sqlite3_mprintf("SELECT %s%stk_summary(%s)%s FROM %s%s%s%s%s%s", sel, q->nby ? ", " : "", m->column,
	                            m->profile ? ", min(unit), max(unit)" : "", src, where, q->nby ? " GROUP BY " : "",
	                            groups, q->nby ? " ORDER BY " : "", keys);
	sqlite3_free(src);
	sqlite3_stmt *st = prepare_where(s, sql, q, "percentile query", err);
	if (!st)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const void *blob = sqlite3_column_blob(st, (int)q->nby);
		if (!blob || sqlite3_column_bytes(st, (int)q->nby) != (int)((4 + TK_STORE_NQ) * sizeof(double)))
			continue; /* no rows at all (an aggregate without GROUP BY still answers once) */
		TK_GROW(*out, cap, *n + 1);
		tk_store_group *g = &(*out)[(*n)++];
		memset(g, 0, sizeof *g);
		for (size_t i = 0; i < q->nby; i++)
			g->keys[i] = tk_xstrdup((const char *)sqlite3_column_text(st, (int)i));
		unpack(blob, g);
		if (m->profile &&
		    tk_store_unit_check(*out, *n - 1, (const char *)sqlite3_column_text(st, (int)q->nby + 1),
		                        (const char *)sqlite3_column_text(st, (int)q->nby + 2), err)) {
			sqlite3_finalize(st);
			tk_store_groups_free(*out, *n);
			*out = NULL;
			*n = 0;
			return -1;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		tk_store_groups_free(*out, *n);
		*out = NULL;
		*n = 0;
		return fail(s, err, "percentile query");
	}
	return 0;
}

static int str_eq(const void *ctx, uint32_t idx, const void *key)
{
	return strcmp(((char *const *)ctx)[idx], key) == 0;
}

/* One signature's rows (session, duration, id) → its sessions, P50/P95 and example, and how many
 * rows into *rows (unless NULL); SQLITE_DONE. */
static int sig_sum(sqlite3_stmt *st, tk_store_hang *x, uint64_t *rows, char **versions)
{
	char **ses = NULL, **vers = NULL;
	size_t nses = 0, scap = 0, nd = 0, dcap = 0, nvers = 0, vcap = 0;
	double *d = NULL;
	tk_hidx idx = {0};
	unsigned char least[64];
	int nleast = -1, rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		if (!t)
			t = "";
		uint64_t h = tk_hash_bytes(t, strlen(t), 0);
		if (tk_hidx_find(&idx, h, str_eq, ses, t) == UINT32_MAX) {
			TK_GROW(ses, scap, nses + 1);
			ses[nses] = tk_xstrdup(t);
			tk_hidx_insert(&idx, h, (uint32_t)nses++);
		}
		TK_GROW(d, dcap, nd + 1);
		d[nd++] = sqlite3_column_double(st, 1);
		if (versions) { /* column 3: its distinct versions (a handful: compared in turn) */
			const char *v = (const char *)sqlite3_column_text(st, 3);
			v = v ? v : "";
			size_t k = 0;
			while (k < nvers && strcmp(vers[k], v) != 0)
				k++;
			if (k == nvers) {
				TK_GROW(vers, vcap, nvers + 1);
				vers[nvers++] = tk_xstrdup(v);
			}
		}
		const void *id = sqlite3_column_blob(st, 2);
		int il = sqlite3_column_bytes(st, 2);
		if (id && il <= (int)sizeof least) {
			int c = nleast < 0 ? -1 : memcmp(id, least, (size_t)(il < nleast ? il : nleast));
			if (nleast < 0 || c < 0 || (c == 0 && il < nleast)) {
				memcpy(least, id, (size_t)il);
				nleast = il;
			}
		}
	}
	size_t u = 1;
	while (u < nd && !(d[u] < d[u - 1]))
		u++;
	if (u < nd)
		qsort(d, nd, sizeof *d, cmp_double);
	if (nd) {
		tk_store_group g;
		tk_store_summarise(d, nd, &g);
		x->p50 = g.q[0];
		x->p95 = g.q[2];
	}
	x->sessions = nses;
	if (rows)
		*rows = nd;
	if (versions) { /* "\n"-joined, as sq_sig_versions gives them */
		size_t len = 0;
		for (size_t k = 0; k < nvers; k++)
			len += strlen(vers[k]) + 1;
		char *o = tk_xmalloc(len + 1), *p = o;
		for (size_t k = 0; k < nvers; k++) {
			size_t l = strlen(vers[k]);
			memcpy(p, vers[k], l);
			p[l] = '\n';
			p += l + 1;
			free(vers[k]);
		}
		*p = 0;
		*versions = o;
	}
	free(vers);
	char hex[2 * sizeof least + 1] = "";
	for (int b = 0; b < nleast; b++)
		snprintf(hex + 2 * b, 3, "%02x", least[b]);
	x->example = tk_xstrdup(hex);
	for (size_t i = 0; i < nses; i++)
		free(ses[i]);
	free(ses);
	free(d);
	tk_hidx_free(&idx);
	return rc;
}

/* ---- each signature's sums kept per connection ----
 * The top stacks page, its flame graph, /api/top and the first and last versions of each signature
 * read the same signatures' rows under the same filter: the first to read them keeps what they sum to
 * (count, sessions, P50/P95, least id, distinct versions) per signature, keyed by the filter and the
 * kinds, while the change token (sq_changes) is the same. */
typedef struct sigent {
	tk_store_hang x; /* signature, example owned */
	char *versions;  /* "\n"-joined */
} sigent;

#define SIGC_N 4
typedef struct sigcache {
	char *key[SIGC_N];
	uint64_t token[SIGC_N], used[SIGC_N], clock;
	sigent *e[SIGC_N];
	size_t n[SIGC_N], cap[SIGC_N];
} sigcache;

static void sigents_free(sigent *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].x.signature);
		free(e[i].x.example);
		free(e[i].versions);
	}
	free(e);
}

static void sigcache_free(sq *s)
{
	if (!s->sc)
		return;
	for (size_t i = 0; i < SIGC_N; i++) {
		free(s->sc->key[i]);
		sigents_free(s->sc->e[i], s->sc->n[i]);
	}
	free(s->sc);
	s->sc = NULL;
}

/* The slot of q's filters and kinds: -1 when none is kept (create: a slot made empty for them, or -1
 * on an error reading the change token). */
static int sigc_get(sq *s, const tk_store_query *q, const char *kinds, int create)
{
	uint64_t token;
	tk_error e;
	if (sq_changes(s, &token, &e))
		return -1;
	tk_store_query kq = *q;
	kq.metric = NULL, kq.kind = kinds, kq.nby = 0, kq.signature = NULL;
	char *key = query_key(&kq);
	if (!s->sc)
		s->sc = tk_xcalloc(1, sizeof *s->sc);
	sigcache *c = s->sc;
	size_t slot = 0;
	for (size_t i = 0; i < SIGC_N; i++) {
		if (c->key[i] && c->token[i] == token && strcmp(c->key[i], key) == 0) {
			free(key);
			c->used[i] = ++c->clock;
			return (int)i;
		}
		if (!c->key[i] || c->token[i] != token || c->used[i] < c->used[slot])
			slot = i;
		if (!c->key[slot])
			break;
	}
	if (!create) {
		free(key);
		return -1;
	}
	free(c->key[slot]);
	sigents_free(c->e[slot], c->n[slot]);
	c->key[slot] = key;
	c->token[slot] = token;
	c->used[slot] = ++c->clock;
	c->e[slot] = NULL;
	c->n[slot] = c->cap[slot] = 0;
	return (int)slot;
}

static const sigent *sigc_find(sq *s, int slot, const char *signature)
{
	for (size_t i = 0; slot >= 0 && i < s->sc->n[slot]; i++)
		if (strcmp(s->sc->e[slot][i].x.signature, signature) == 0)
			return &s->sc->e[slot][i];
	return NULL;
}

static void sigc_put(sq *s, int slot, const tk_store_hang *x, char *versions)
{
	if (slot < 0) {
		free(versions);
		return;
	}
	sigcache *c = s->sc;
	TK_GROW(c->e[slot], c->cap[slot], c->n[slot] + 1);
	sigent *e = &c->e[slot][c->n[slot]++];
	e->x = *x;
	e->x.signature = tk_xstrdup(x->signature);
	e->x.example = tk_xstrdup(x->example ? x->example : "");
	e->versions = versions;
}

/* A top list's next entry from row st (column 1 the signature, 2 its count), appended to *out: NULL
 * when the signature's sums were kept (sigc_find) and are filled in already, else the entry to sum. */
static tk_store_hang *top_entry(sq *s, int slot, sqlite3_stmt *st, tk_store_hang **out, size_t *n, size_t *cap)
{
	TK_GROW(*out, *cap, *n + 1);
	tk_store_hang *x = &(*out)[(*n)++];
	memset(x, 0, sizeof *x);
	const char *text = (const char *)sqlite3_column_text(st, 1);
	x->signature = tk_xstrdup(text ? text : "");
	x->count = (uint64_t)sqlite3_column_int64(st, 2);
	x->p50 = x->p95 = NAN;
	const sigent *e = sigc_find(s, slot, x->signature);
	if (!e)
		return x;
	x->sessions = e->x.sessions, x->p50 = e->x.p50, x->p95 = e->x.p95;
	x->example = tk_xstrdup(e->x.example);
	return NULL;
}

/* Unfiltered top hangs from the summary: the top signatures by their maintained count, then each
 * one's rows by index for sessions, P50/P95 and the example (what the scan below computes for them:
 * the same counts, order and values). */
static int top_from_summary(sq *s, const tk_store_query *q, size_t limit, tk_store_hang **out, size_t *n, tk_error *err)
{
	sqlite3_stmt *top, *one;
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT sid, signature, n FROM hang_sigs WHERE n > 0 ORDER BY n DESC, signature LIMIT ?",
	                       -1, &top, NULL) != SQLITE_OK)
		return fail(s, err, "top-hangs query");
	/* each signature's rows from reports_sig, summed up here: distinct sessions in a hash, not a
	 * temporary b-tree per signature; durations come in order (checked); the least id by memcmp,
	 * as min() orders blobs */
	sqlite3 *db = scan_db(s);
	if (sqlite3_prepare_v2(
	        db,
	        "SELECT session, duration, id, version FROM reports INDEXED BY reports_sig WHERE sid = ? AND "
	        "kind IN " TK_STORE_HANG_KINDS " AND duration IS NOT NULL",
	        -1, &one, NULL) != SQLITE_OK) {
		sqlite3_finalize(top);
		return fail_on(s, db, err, "top-hangs query");
	}
	sqlite3_bind_int64(top, 1, (sqlite3_int64)(limit < INT64_MAX ? limit : INT64_MAX));
	size_t cap = 0;
	int rc, slot = sigc_get(s, q, TK_STORE_HANG_KINDS, 1);
	while ((rc = sqlite3_step(top)) == SQLITE_ROW) {
		tk_store_hang *x = top_entry(s, slot, top, out, n, &cap);
		if (!x)
			continue;
		sqlite3_reset(one);
		sqlite3_bind_int64(one, 1, sqlite3_column_int64(top, 0));
		char *vers = NULL;
		if ((rc = sig_sum(one, x, NULL, &vers)) != SQLITE_DONE)
			break;
		sigc_put(s, slot, x, vers);
	}
	sqlite3_finalize(top);
	sqlite3_finalize(one);
	if (rc != SQLITE_DONE) {
		tk_store_hangs_free(*out, *n);
		*out = NULL;
		*n = 0;
		return fail(s, err, "top-hangs query");
	}
	return 0;
}

static char *col_dup(sqlite3_stmt *st, int i);

static int hang_most_first(const void *a, const void *b)
{
	const tk_store_hang *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->signature, y->signature);
}

/* Top signatures under a filter reports_sig holds (a kind, version, device, session): each
 * signature's rows of those kinds read from its own range of reports_sig (the filters checked in the
 * index, no table row read; a kind's few rows are not looked for among all the table's), summed by
 * sig_sum, then ordered by count and signature and cut at limit as the GROUP BY below orders them:
 * the same counts, sessions, P50/P95 and least id. */
static int top_by_sig(sq *s, const tk_store_query *q, const char *kinds, size_t limit, tk_store_hang **out, size_t *n,
                      tk_error *err)
{
	sqlite3 *db = scan_db(s);
	sqlite3_stmt *sigs, *one;
	if (sqlite3_prepare_v2(db, "SELECT sid, signature FROM hang_sigs", -1, &sigs, NULL) != SQLITE_OK)
		return fail_on(s, db, err, "top-hangs query");
	char where[512];
	where_sql(q, kinds, "duration", where, sizeof where);
	char *sql = sqlite3_mprintf(
	    "SELECT session, duration, id, version FROM reports INDEXED BY reports_sig%s AND sid = ?", where);
	if (!(one = prepare_where_on(s, db, sql, q, "top-hangs query", err))) {
		sqlite3_finalize(sigs);
		return -1;
	}
	int last = sqlite3_bind_parameter_count(one);
	size_t cap = 0;
	int rc, slot = sigc_get(s, q, kinds, 1);
	while ((rc = sqlite3_step(sigs)) == SQLITE_ROW) {
		tk_store_hang x = {.p50 = NAN, .p95 = NAN};
		const sigent *e = sigc_find(s, slot, (const char *)sqlite3_column_text(sigs, 1));
		if (e) {
			if (!e->x.count)
				continue;
			x = e->x;
			x.signature = tk_xstrdup(e->x.signature);
			x.example = tk_xstrdup(e->x.example);
			TK_GROW(*out, cap, *n + 1);
			(*out)[(*n)++] = x;
			continue;
		}
		sqlite3_reset(one);
		sqlite3_bind_int64(one, last, sqlite3_column_int64(sigs, 0));
		char *vers = NULL;
		if ((rc = sig_sum(one, &x, &x.count, &vers)) != SQLITE_DONE) {
			free(x.example);
			free(vers);
			break;
		}
		x.signature = col_dup(sigs, 1);
		sigc_put(s, slot, &x, vers);
		if (!x.count) {
			free(x.signature);
			free(x.example);
			continue;
		}
		TK_GROW(*out, cap, *n + 1);
		(*out)[(*n)++] = x;
	}
	sqlite3_finalize(sigs);
	sqlite3_finalize(one);
	if (rc != SQLITE_DONE) {
		tk_store_hangs_free(*out, *n);
		*out = NULL;
		*n = 0;
		return fail_on(s, db, err, "top-hangs query");
	}
	if (*n > 1)
		qsort(*out, *n, sizeof **out, hang_most_first);
	for (size_t i = limit; i < *n; i++) {
		free((*out)[i].signature);
		free((*out)[i].example);
	}
	if (*n > limit)
		*n = limit;
	return 0;
}

/* Whether q's time range (none: 0) holds a quarter of all reports or more, its reports of kinds
 * counted in reports_kind_time alone. */
static int big_share(sq *s, const tk_store_query *q, const char *kinds)
{
	if (!(q->since > 0) && !(q->until > 0))
		return 0;
	tk_store_query tq = {.since = q->since, .until = q->until};
	char tw[512];
	where_sql(&tq, kinds, NULL, tw, sizeof tw);
	tk_error e;
	sqlite3_stmt *c =
	    prepare_where_on(s, scan_db(s),
	                     sqlite3_mprintf("SELECT (SELECT count(*) FROM reports INDEXED BY "
	                                     "reports_kind_time%s) * 4 >= (SELECT sum(n) FROM sessions_sum)",
	                                     tw),
	                     &tq, "top-hangs query", &e);
	if (!c)
		return 0;
	int big = sqlite3_step(c) == SQLITE_ROW && sqlite3_column_int(c, 0);
	sqlite3_finalize(c);
	return big;
}

typedef struct trow trow;
static int trows_get(sq *s, const tk_store_query *q, const char *kinds, int now, const trow **vout, size_t *nvout,
                     tk_error *err);
static int top_from_rows(sq *s, const tk_store_query *q, const char *kinds, size_t limit, tk_store_hang **out,
                         size_t *n, tk_error *err);

/* ---- per-signature summaries (migration 10 → 11), kept up by catch-up ----
 * A signature's page, its flame graph and durations, the compare page's top lists and durations read
 * a signature's every report (the top one of the 1 M fleet: 204 k). These tables hold what they sum,
 * per (signature's sid, kind, app, version), over the reports with a duration:
 *   sig_groups: how many;  sig_values: how many hold each distinct duration;
 *   sig_keys: how many per device (what 0), per session (1), per stacks hash (2), and the SIGSUM_EX
 *             least ids (3, n = 1: a page's examples);
 *   sig_upto: the reports' rowid up to which they are summed.
 * Nothing is added at ingest: a query that reads them first sums the reports past sig_upto (rowid >
 * upto: new reports only ever get a larger rowid) into them, in one write transaction (sigsum_ready;
 * where it cannot — a store open read-only, a transaction of its own open — the reports are read as
 * before). A compaction (VACUUM may renumber rowids) sums them again from nothing. */
#define SIGSUM_EX 16

typedef struct sgrp {
	sqlite3_int64 sid, n;
	char *kind, *app, *version;
	unsigned char ex[SIGSUM_EX][64]; /* the least ids, ascending (memcmp, then length) */
	int exlen[SIGSUM_EX], nex;
} sgrp;

/* a (group, what, key) row to add: what -1 a duration (v), else sig_keys' what with key bytes */
typedef struct sitem {
	uint32_t g;
	int what, klen, text;
	double v;
	char *key;
	sqlite3_int64 n;
} sitem;

/* an hour_runs row to add to: (col, kind, app, version, day); and an entry of it */
typedef struct hgrp {
	int col;
	sqlite3_int64 day;
	char *kind, *app, *version;
} hgrp;

typedef struct hitem {
	uint32_t g;
	hrun r;
} hitem;

typedef struct sigacc {
	sgrp *g;
	size_t ng, gcap;
	tk_hidx gidx;
	sitem *it;
	size_t ni, icap;
	tk_hidx iidx;
	hgrp *hg;
	size_t nhg, hgcap;
	tk_hidx hgidx;
	hitem *hi;
	size_t nhi, hicap;
	tk_hidx hiidx;
	int hbad; /* a time whose hour SQL's integer arithmetic does not give, or a count past 2^32 */
	int parts;       /* what is summed: SIGACC_SUMS (schema 11's tables), SIGACC_DAYS (sig_days), or both */
	struct dgrp *dg; /* sig_days' rows to add to, their (hour, value) counts, (row, session) hours */
	size_t ndg, dgcap;
	tk_hidx dgidx;
	hitem *di;
	size_t ndi, dicap;
	tk_hidx diidx;
	struct dses *ds;
	size_t nds, dscap;
	tk_hidx dsidx;
	char **sn; /* the sessions met, each once (sess_no numbers them when written) */
	size_t nsn, sncap;
	tk_hidx snidx;
} sigacc;
enum { SIGACC_SUMS = 1, SIGACC_DAYS = 2 };

static int hgrp_eq(const void *ctx, uint32_t idx, const void *key)
{
	const hgrp *a = &((const sigacc *)ctx)->hg[idx], *b = key;
	return a->col == b->col && a->day == b->day && strcmp(a->version, b->version) == 0 &&
	       strcmp(a->app, b->app) == 0 && strcmp(a->kind, b->kind) == 0;
}

static int hitem_eq(const void *ctx, uint32_t idx, const void *key)
{
	const hitem *a = &((const hitem *)ctx)[idx], *b = key;
	return a->g == b->g && a->r.h == b->r.h && a->r.v == b->r.v;
}

/* One more report of value v in hour h of group g, counted in *items (indexed by idx); *bad set past
 * 2^32 of one. */
static void hitem_count(hitem **items, size_t *n, size_t *cap, tk_hidx *idx, uint32_t g, int h, double v, int *bad)
{
	hitem it = {g, {h, v == 0 ? 0.0 : v, 0}};
	uint64_t hh = tk_hash_bytes(&it.r.v, sizeof it.r.v, (uint64_t)g * 24 + (uint64_t)h);
	uint32_t at = tk_hidx_find(idx, hh, hitem_eq, *items, &it);
	if (at == UINT32_MAX) {
		TK_GROW(*items, *cap, *n + 1);
		(*items)[*n] = it;
		at = (uint32_t)(*n)++;
		tk_hidx_insert(idx, hh, at);
	}
	if ((*items)[at].r.n == UINT32_MAX)
		*bad = 1;
	else
		(*items)[at].r.n++;
}

/* A report's value of col counted in its hour's runs. */
static void sigacc_hour(sigacc *a, int col, const char *kind, const char *app, const char *version, double t, double v)
{
	sqlite3_int64 b;
	if (rate_bucket(t, 3600, &b)) {
		a->hbad = 1;
		return;
	}
	hgrp k = {col, b / 24 - (b % 24 < 0), (char *)kind, (char *)app, (char *)version};
	uint64_t h = tk_hash_bytes(
	    version, strlen(version),
	    tk_hash_bytes(app, strlen(app), tk_hash_bytes(kind, strlen(kind), (uint64_t)k.day * 2 + (uint64_t)col)));
	uint32_t g = tk_hidx_find(&a->hgidx, h, hgrp_eq, a, &k);
	if (g == UINT32_MAX) {
		TK_GROW(a->hg, a->hgcap, a->nhg + 1);
		a->hg[a->nhg] = (hgrp){col, k.day, tk_xstrdup(kind), tk_xstrdup(app), tk_xstrdup(version)};
		g = (uint32_t)a->nhg++;
		tk_hidx_insert(&a->hgidx, h, g);
	}
	hitem_count(&a->hi, &a->nhi, &a->hicap, &a->hiidx, g, (int)(b - k.day * 24), v, &a->hbad);
}

typedef struct sgkey {
	sqlite3_int64 sid;
	const char *kind, *app, *version;
} sgkey;

static int sgrp_eq(const void *ctx, uint32_t idx, const void *key)
{
	const sgrp *g = &((const sigacc *)ctx)->g[idx];
	const sgkey *k = key;
	return g->sid == k->sid && strcmp(g->version, k->version) == 0 && strcmp(g->app, k->app) == 0 &&
	       strcmp(g->kind, k->kind) == 0;
}

static int sitem_eq(const void *ctx, uint32_t idx, const void *key)
{
	const sitem *a = &((const sigacc *)ctx)->it[idx], *b = key;
	if (a->g != b->g || a->what != b->what)
		return 0;
	if (a->what < 0)
		return memcmp(&a->v, &b->v, sizeof a->v) == 0;
	return a->klen == b->klen && a->text == b->text && memcmp(a->key, b->key, (size_t)a->klen) == 0;
}

static void sigacc_item(sigacc *a, uint32_t g, int what, double v, const void *key, int klen, int text)
{
	sitem k = {.g = g, .what = what, .klen = klen, .text = text, .v = v, .key = (char *)key};
	uint64_t h = what < 0 ? tk_hash_bytes(&v, sizeof v, g)
	                      : tk_hash_bytes(key, (size_t)klen, (uint64_t)g * 4 + (uint64_t)what);
	uint32_t at = tk_hidx_find(&a->iidx, h, sitem_eq, a, &k);
	if (at == UINT32_MAX) {
		TK_GROW(a->it, a->icap, a->ni + 1);
		if (what >= 0) {
			k.key = tk_xmalloc((size_t)klen + 1);
			memcpy(k.key, key, (size_t)klen);
			k.key[klen] = 0;
		}
		a->it[a->ni] = k;
		at = (uint32_t)a->ni++;
		tk_hidx_insert(&a->iidx, h, at);
	}
	a->it[at].n++;
}

static int id_cmp(const unsigned char *a, int al, const unsigned char *b, int bl)
{
	int c = memcmp(a, b, (size_t)(al < bl ? al : bl));
	return c ? c : al - bl;
}

static void sigacc_day(sigacc *a, sqlite3_stmt *st);

/* One report counted: its duration and CPU average in their hours' runs; with a duration and a
 * signature, in its signature's sums. */
static void sigacc_row(sigacc *a, sqlite3_stmt *st)
{
	if (a->parts & SIGACC_DAYS)
		sigacc_day(a, st);
	if (!(a->parts & SIGACC_SUMS))
		return;
	sgkey k = {sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
	           (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3)};
	k.kind = k.kind ? k.kind : "", k.app = k.app ? k.app : "", k.version = k.version ? k.version : "";
	for (int col = 0; col < 2; col++)
		if (sqlite3_column_type(st, col ? 9 : 4) != SQLITE_NULL)
			sigacc_hour(a, col, k.kind, k.app, k.version, sqlite3_column_double(st, 10),
			            sqlite3_column_double(st, col ? 9 : 4));
	if (sqlite3_column_type(st, 4) == SQLITE_NULL || sqlite3_column_type(st, 0) == SQLITE_NULL)
		return;
	uint64_t h =
	    tk_hash_bytes(k.version, strlen(k.version),
	                  tk_hash_bytes(k.app, strlen(k.app), tk_hash_bytes(k.kind, strlen(k.kind), (uint64_t)k.sid)));
	uint32_t g = tk_hidx_find(&a->gidx, h, sgrp_eq, a, &k);
	if (g == UINT32_MAX) {
		TK_GROW(a->g, a->gcap, a->ng + 1);
		sgrp *n = &a->g[a->ng];
		memset(n, 0, sizeof *n);
		n->sid = k.sid, n->kind = tk_xstrdup(k.kind), n->app = tk_xstrdup(k.app),
		n->version = tk_xstrdup(k.version);
		g = (uint32_t)a->ng++;
		tk_hidx_insert(&a->gidx, h, g);
	}
	a->g[g].n++;
	sigacc_item(a, g, -1, sqlite3_column_double(st, 4), NULL, 0, 0);
	for (int w = 0; w < 3; w++) { /* device, session (text), stack (a blob) */
		int c = 5 + w;
		if (sqlite3_column_type(st, c) == SQLITE_NULL)
			continue;
		int text = sqlite3_column_type(st, c) == SQLITE_TEXT;
		const void *p = text ? (const void *)sqlite3_column_text(st, c) : sqlite3_column_blob(st, c);
		sigacc_item(a, g, w, 0, p ? p : "", sqlite3_column_bytes(st, c), text);
	}
	const unsigned char *id = sqlite3_column_blob(st, 8);
	int il = sqlite3_column_bytes(st, 8);
	sgrp *gr = &a->g[g];
	if (!id || il > 64 ||
	    (gr->nex == SIGSUM_EX && id_cmp(id, il, gr->ex[SIGSUM_EX - 1], gr->exlen[SIGSUM_EX - 1]) >= 0))
		return;
	int j = gr->nex < SIGSUM_EX ? gr->nex++ : SIGSUM_EX - 1;
	while (j > 0 && id_cmp(gr->ex[j - 1], gr->exlen[j - 1], id, il) > 0) {
		memcpy(gr->ex[j], gr->ex[j - 1], (size_t)gr->exlen[j - 1]);
		gr->exlen[j] = gr->exlen[j - 1];
		j--;
	}
	memcpy(gr->ex[j], id, (size_t)il);
	gr->exlen[j] = il;
}

static void sigdays_free(sigacc *a);

static void sigacc_free(sigacc *a)
{
	sigdays_free(a);
	for (size_t i = 0; i < a->ng; i++)
		free(a->g[i].kind), free(a->g[i].app), free(a->g[i].version);
	for (size_t i = 0; i < a->ni; i++)
		free(a->it[i].key);
	for (size_t i = 0; i < a->nhg; i++)
		free(a->hg[i].kind), free(a->hg[i].app), free(a->hg[i].version);
	free(a->g);
	free(a->it);
	free(a->hg);
	free(a->hi);
	tk_hidx_free(&a->gidx);
	tk_hidx_free(&a->iidx);
	tk_hidx_free(&a->hgidx);
	tk_hidx_free(&a->hiidx);
}

static int hrun_cmp(const hrun *a, const hrun *b)
{
	if (a->h != b->h)
		return a->h - b->h;
	return (a->v > b->v) - (a->v < b->v);
}

static int hitem_cmp(const void *x, const void *y)
{
	const hitem *a = x, *b = y;
	if (a->g != b->g)
		return a->g < b->g ? -1 : 1;
	return hrun_cmp(&a->r, &b->r);
}

/* Packed entries old[0..nold) and add[0..nadd) (both sorted by hour and value) merged into out in
 * that order, equal ones summed (*bad set past 2^32); how many written. */
static size_t hruns_merge(const unsigned char *old, size_t nold, const hitem *add, size_t nadd, unsigned char *out,
                          int *bad)
{
	size_t x = 0, y = 0, no = 0;
	while (x < nold || y < nadd) {
		hrun r;
		if (x < nold)
			hrun_get(old, x, &r);
		int c = x == nold ? 1 : y == nadd ? -1 : hrun_cmp(&r, &add[y].r);
		if (c > 0) {
			r = add[y++].r;
		} else if (c == 0) {
			if (r.n > UINT32_MAX - add[y].r.n)
				*bad = 1;
			r.n += add[y++].r.n;
			x++;
		} else {
			x++;
		}
		hrun_put(out, no++, &r);
	}
	return no;
}

/* The hours' runs of a into hour_runs, each row's entries merged with those it holds (sorted by hour
 * and value, equal ones summed), inside the open transaction. */
static int hours_write(sq *s, sigacc *a)
{
	if (a->nhi > 1)
		qsort(a->hi, a->nhi, sizeof *a->hi, hitem_cmp);
	sqlite3_stmt *get = NULL, *put = NULL;
	int ok =
	    sqlite3_prepare_v2(s->db,
	                       "SELECT runs FROM hour_runs WHERE col = ?1 AND kind = ?2 AND app = ?3 AND version = ?4 "
	                       "AND day = ?5",
	                       -1, &get, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(s->db,
	                       "INSERT OR REPLACE INTO hour_runs (col, kind, app, version, day, runs) VALUES (?1, ?2, "
	                       "?3, ?4, ?5, ?6)",
	                       -1, &put, NULL) == SQLITE_OK;
	unsigned char *out = NULL;
	size_t ocap = 0;
	for (size_t i = 0; ok && i < a->nhi;) {
		size_t j = i;
		while (j < a->nhi && a->hi[j].g == a->hi[i].g)
			j++;
		const hgrp *g = &a->hg[a->hi[i].g];
		sqlite3_stmt *st[2] = {get, put};
		for (int k = 0; k < 2; k++) {
			sqlite3_reset(st[k]);
			sqlite3_bind_int(st[k], 1, g->col);
			sqlite3_bind_text(st[k], 2, g->kind, -1, SQLITE_STATIC);
			sqlite3_bind_text(st[k], 3, g->app, -1, SQLITE_STATIC);
			sqlite3_bind_text(st[k], 4, g->version, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st[k], 5, g->day);
		}
		int rc = sqlite3_step(get);
		const unsigned char *old = rc == SQLITE_ROW ? sqlite3_column_blob(get, 0) : NULL;
		size_t nold = old ? (size_t)sqlite3_column_bytes(get, 0) / HRUN_BYTES : 0, no = 0;
		ok = rc == SQLITE_ROW || rc == SQLITE_DONE;
		TK_GROW(out, ocap, (nold + (j - i)) * HRUN_BYTES + 1);
		if (ok)
			no = hruns_merge(old, nold, a->hi + i, j - i, out, &a->hbad);
		if (ok) {
			sqlite3_bind_blob(put, 6, out, (int)(no * HRUN_BYTES), SQLITE_STATIC);
			ok = sqlite3_step(put) == SQLITE_DONE;
		}
		sqlite3_reset(get);
		i = j;
	}
	free(out);
	sqlite3_finalize(get);
	sqlite3_finalize(put);
	return ok ? 0 : -1;
}

static void bind_group(sqlite3_stmt *st, const sgrp *g)
{
	sqlite3_bind_int64(st, 1, g->sid);
	sqlite3_bind_text(st, 2, g->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, g->app, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, g->version, -1, SQLITE_STATIC);
}

/* The sums of a into the tables, inside the open transaction. */
static int sigacc_write(sq *s, const sigacc *a)
{
	static const char *const sql[4] = {
	    "INSERT INTO sig_groups (sid, kind, app, version, n) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (sid, kind, "
	    "app, version) DO UPDATE SET n = n + excluded.n",
	    "INSERT INTO sig_values (sid, kind, app, version, value, n) VALUES (?1, ?2, ?3, ?4, ?6, ?5) ON CONFLICT "
	    "(sid, kind, app, version, value) DO UPDATE SET n = n + excluded.n",
	    "INSERT INTO sig_keys (sid, kind, app, version, what, key, n) VALUES (?1, ?2, ?3, ?4, ?6, ?7, ?5) ON "
	    "CONFLICT (sid, kind, app, version, what, key) DO UPDATE SET n = n + excluded.n",
	    /* each group's SIGSUM_EX least ids stay */
	    "DELETE FROM sig_keys WHERE sid = ?1 AND kind = ?2 AND app = ?3 AND version = ?4 AND what = 3 AND key > "
	    "(SELECT key FROM sig_keys WHERE sid = ?1 AND kind = ?2 AND app = ?3 AND version = ?4 AND what = 3 "
	    "ORDER BY key LIMIT 1 OFFSET 15)"}; /* SIGSUM_EX - 1 */
	_Static_assert(SIGSUM_EX == 16, "the OFFSET above");
	sqlite3_stmt *st[4] = {0};
	int ok = 1;
	for (int i = 0; i < 4 && ok; i++)
		ok = sqlite3_prepare_v2(s->db, sql[i], -1, &st[i], NULL) == SQLITE_OK;
	for (size_t i = 0; ok && i < a->ng; i++) {
		const sgrp *g = &a->g[i];
		sqlite3_reset(st[0]);
		bind_group(st[0], g);
		sqlite3_bind_int64(st[0], 5, g->n);
		ok = sqlite3_step(st[0]) == SQLITE_DONE;
		for (int e = 0; ok && e < g->nex; e++) {
			sqlite3_reset(st[2]);
			bind_group(st[2], g);
			sqlite3_bind_int64(st[2], 5, 1);
			sqlite3_bind_int(st[2], 6, 3);
			sqlite3_bind_blob(st[2], 7, g->ex[e], g->exlen[e], SQLITE_STATIC);
			ok = sqlite3_step(st[2]) == SQLITE_DONE;
		}
		if (ok && g->nex) {
			sqlite3_reset(st[3]);
			bind_group(st[3], g);
			ok = sqlite3_step(st[3]) == SQLITE_DONE;
		}
	}
	for (size_t i = 0; ok && i < a->ni; i++) {
		const sitem *t = &a->it[i];
		sqlite3_stmt *u = st[t->what < 0 ? 1 : 2];
		sqlite3_reset(u);
		bind_group(u, &a->g[t->g]);
		sqlite3_bind_int64(u, 5, t->n);
		if (t->what < 0) {
			sqlite3_bind_double(u, 6, t->v);
		} else {
			sqlite3_bind_int(u, 6, t->what);
			if (t->text)
				sqlite3_bind_text(u, 7, t->key, t->klen, SQLITE_STATIC);
			else
				sqlite3_bind_blob(u, 7, t->key, t->klen, SQLITE_STATIC);
		}
		ok = sqlite3_step(u) == SQLITE_DONE;
	}
	for (int i = 0; i < 4; i++)
		sqlite3_finalize(st[i]);
	return ok ? 0 : -1;
}

/* One integer from a one-row query on db (*v = 0 for NULL); 0 or -1. */
static int int_of(sqlite3 *db, const char *sql, sqlite3_int64 *v)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	int rc = sqlite3_step(st);
	*v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

static int sigdays_write(sq *s, sigacc *a);

/* The reports of rowids (from, to] summed into the tables parts names, inside the caller's open write
 * transaction; *hbad set when one holds what hour_runs or sig_days cannot. */
static int sigsum_scan(sq *s, sqlite3_int64 from, sqlite3_int64 to, int parts, int *hbad, tk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT sid, kind, app, version, duration, device, session, stack, id, avg_cpu, time "
	                       "FROM reports WHERE rowid > ?1 AND rowid <= ?2",
	                       -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "signature summaries");
	sqlite3_bind_int64(st, 1, from);
	sqlite3_bind_int64(st, 2, to);
	sigacc a = {.parts = parts};
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		sigacc_row(&a, st);
	sqlite3_finalize(st);
	int bad = rc != SQLITE_DONE || ((parts & SIGACC_SUMS) && (sigacc_write(s, &a) || hours_write(s, &a))) ||
	          ((parts & SIGACC_DAYS) && sigdays_write(s, &a));
	*hbad = a.hbad;
	sigacc_free(&a);
	return bad ? fail(s, err, "signature summaries") : 0;
}

/* The reports past sig_upto summed into the tables (parts), inside the caller's open write
 * transaction: at most chunk rowids of them (0: all), so a writer waiting for the lock waits for one
 * chunk only. */
static int sigsum_add(sq *s, sqlite3_int64 chunk, int parts, tk_error *err)
{
	sqlite3_int64 upto, top;
	if (int_of(s->db, "SELECT upto FROM sig_upto", &upto) || int_of(s->db, "SELECT max(rowid) FROM reports", &top))
		return fail(s, err, "signature summaries");
	if (top <= upto)
		return 0;
	if (chunk > 0 && top - upto > chunk)
		top = upto + chunk;
	int hbad;
	if (sigsum_scan(s, upto, top, parts, &hbad, err))
		return -1;
	char up[96];
	snprintf(up, sizeof up, "UPDATE sig_upto SET upto = %lld%s", (long long)top, hbad ? ", hbad = 1" : "");
	return exec(s, up, err);
}

/* 10 → 11: the tables, summed from every stored report. */
static int migrate_10_11(sq *s, tk_error *err)
{
	return exec(
	           s,
	           "DROP TABLE IF EXISTS sig_groups; DROP TABLE IF EXISTS sig_values; DROP TABLE IF EXISTS sig_keys;"
	           "DROP TABLE IF EXISTS sig_upto;"
	           "CREATE TABLE sig_groups (sid INTEGER NOT NULL, kind TEXT NOT NULL, app TEXT NOT NULL, version TEXT "
	           "NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (sid, kind, app, version)) WITHOUT ROWID;"
	           "CREATE TABLE sig_values (sid INTEGER NOT NULL, kind TEXT NOT NULL, app TEXT NOT NULL, version TEXT "
	           "NOT NULL, value REAL NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (sid, kind, app, version, value)) "
	           "WITHOUT ROWID;"
	           "CREATE TABLE sig_keys (sid INTEGER NOT NULL, kind TEXT NOT NULL, app TEXT NOT NULL, version TEXT "
	           "NOT NULL, what INTEGER NOT NULL, key NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (sid, kind, app, "
	           "version, what, key)) WITHOUT ROWID;"
	           "DROP TABLE IF EXISTS hour_runs;"
	           "CREATE TABLE hour_runs (col INTEGER NOT NULL, kind TEXT NOT NULL, app TEXT NOT NULL, version TEXT "
	           "NOT NULL, day INTEGER NOT NULL, runs BLOB NOT NULL, UNIQUE (col, kind, app, version, day));"
	           "CREATE TABLE sig_upto (upto INTEGER NOT NULL, hbad INTEGER NOT NULL); INSERT INTO sig_upto VALUES "
	           "(0, 0);",
	           err) ||
	       sigsum_add(s, 0, SIGACC_SUMS, err);
}

/* Whether the summaries are current for this connection's next query (caught up first when
 * reports were added): 1, or 0 where they cannot be (the caller reads the reports). */
static int sigsum_ready(sq *s)
{
	uint64_t token;
	tk_error e;
	if (!sqlite3_get_autocommit(s->db) || sq_changes(s, &token, &e))
		return 0;
	if (s->ss_ok && s->ss_token == token)
		return 1;
	sqlite3_int64 upto, top;
	if (int_of(s->db, "SELECT upto FROM sig_upto", &upto) || int_of(s->db, "SELECT max(rowid) FROM reports", &top))
		return 0;
	while (top > upto) { /* 65536 rowids a transaction: an ingest in between waits for one of them */
		if (exec(s, "BEGIN IMMEDIATE", &e))
			return 0;
		if (sigsum_add(s, 65536, SIGACC_SUMS | SIGACC_DAYS, &e) || exec(s, "COMMIT", &e)) {
			exec(s, "ROLLBACK", NULL);
			return 0;
		}
		if (int_of(s->db, "SELECT upto FROM sig_upto", &upto) ||
		    int_of(s->db, "SELECT max(rowid) FROM reports", &top) || sq_changes(s, &token, &e))
			return 0;
	}
	s->ss_ok = 1, s->ss_token = token;
	return 1;
}

/* Whether hour_runs is current and holds every report's hour (sigsum_ready). */
static int hour_runs_ready(sq *s)
{
	sqlite3_int64 bad;
	return sigsum_ready(s) && int_of(s->db, "SELECT hbad FROM sig_upto", &bad) == 0 && !bad;
}

/* Whether the summaries hold q's filters: app and version alone, no time range. */
static int sigsum_fit(const tk_store_query *q)
{
	return !(q->since > 0) && !(q->until > 0) && !q->where[TK_STORE_BUILD] && !q->where[TK_STORE_DEVICE] &&
	       !q->where[TK_STORE_OS] && !q->where[TK_STORE_SESSION];
}

/* The sid of a signature: 0 with it, 1 when none is stored, -1 with err. */
static int sid_of(sq *s, const char *signature, sqlite3_int64 *sid, tk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT sid FROM hang_sigs WHERE signature = ?", -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "signature query");
	sqlite3_bind_text(st, 1, signature, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	*sid = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail(s, err, "signature query");
	return rc == SQLITE_ROW ? 0 : 1;
}

/* ---- per-signature summaries by day and hour, for date ranges (migration 11 → 12) ----
 * A date range (since, until) is no filter the tables above hold, so a comparison of two date
 * ranges read every report of each (its top lists, their durations, the distinct sessions per
 * signature, which do not add up across days). sig_days holds per (sid, kind, app, version, UTC day)
 * what those sum from the reports with a duration, each part by hour of the day, so any run of whole
 * hours is read from it and only the partial hours at a range's ends from reports:
 *   n: how many reports;  hn: how many of each hour (24 little-endian u32);
 *   ex: the least id of each hour, (hour, 32-byte id) entries;
 *   sess: (session number, mask of the hours holding it) entries, 8 bytes, sorted by number (sess_no
 *         numbers each session text once);  runs: their (hour, value, count) entries (hrun, sorted by
 *         hour, value). The blobs in that order, the largest last: reading one reads through those
 *         before it (their overflow pages). The blobs are read on scan_db (one read() per page, which
 *         costs less than a first fault on a mapped page), the partial hours' reports on db.
 * They are kept by the same catch-up as the tables above (sigsum_ready; their rows up to sig_upto), and
 * a time whose hour cannot be told sets sig_upto.hbad, as for hour_runs: then ranges read reports. */
typedef struct dgrp {
	sqlite3_int64 sid, day, n;
	char *kind, *app, *version;
	uint32_t exmask; /* the hours ex holds */
	unsigned char ex[24][32];
} dgrp;

typedef struct dses {
	uint32_t g, s; /* the row (dg) and the session (sn) */
	uint32_t mask;
	sqlite3_int64 no;
} dses;

#define DSES_BYTES 8
#define DEX_BYTES 33

static int dgrp_eq(const void *ctx, uint32_t idx, const void *key)
{
	const dgrp *a = &((const sigacc *)ctx)->dg[idx], *b = key;
	return a->sid == b->sid && a->day == b->day && strcmp(a->version, b->version) == 0 &&
	       strcmp(a->app, b->app) == 0 && strcmp(a->kind, b->kind) == 0;
}

static int dses_eq(const void *ctx, uint32_t idx, const void *key)
{
	const dses *a = &((const sigacc *)ctx)->ds[idx], *b = key;
	return a->g == b->g && a->s == b->s;
}

static int sn_eq(const void *ctx, uint32_t idx, const void *key)
{
	return strcmp(((const sigacc *)ctx)->sn[idx], key) == 0;
}

static void sigacc_day(sigacc *a, sqlite3_stmt *st)
{
	if (sqlite3_column_type(st, 4) == SQLITE_NULL || sqlite3_column_type(st, 0) == SQLITE_NULL)
		return;
	sqlite3_int64 b;
	const void *id = sqlite3_column_blob(st, 8);
	if (rate_bucket(sqlite3_column_double(st, 10), 3600, &b) || !id || sqlite3_column_bytes(st, 8) != 32) {
		a->hbad = 1;
		return;
	}
	dgrp k = {.sid = sqlite3_column_int64(st, 0), .day = b / 24 - (b % 24 < 0)};
	const char *kind = (const char *)sqlite3_column_text(st, 1), *app = (const char *)sqlite3_column_text(st, 2),
	           *version = (const char *)sqlite3_column_text(st, 3);
	k.kind = (char *)(kind ? kind : ""), k.app = (char *)(app ? app : ""),
	k.version = (char *)(version ? version : "");
	int hour = (int)(b - k.day * 24);
	uint64_t h = tk_hash_bytes(
	    k.version, strlen(k.version),
	    tk_hash_bytes(k.app, strlen(k.app),
	                  tk_hash_bytes(k.kind, strlen(k.kind), (uint64_t)k.sid * 131 + (uint64_t)k.day)));
	uint32_t g = tk_hidx_find(&a->dgidx, h, dgrp_eq, a, &k);
	if (g == UINT32_MAX) {
		TK_GROW(a->dg, a->dgcap, a->ndg + 1);
		dgrp *n = &a->dg[a->ndg];
		memset(n, 0, sizeof *n);
		n->sid = k.sid, n->day = k.day, n->kind = tk_xstrdup(k.kind), n->app = tk_xstrdup(k.app),
		n->version = tk_xstrdup(k.version);
		g = (uint32_t)a->ndg++;
		tk_hidx_insert(&a->dgidx, h, g);
	}
	dgrp *gr = &a->dg[g];
	gr->n++;
	if (!(gr->exmask >> hour & 1) || memcmp(id, gr->ex[hour], 32) < 0) {
		memcpy(gr->ex[hour], id, 32);
		gr->exmask |= 1u << hour;
	}
	hitem_count(&a->di, &a->ndi, &a->dicap, &a->diidx, g, hour, sqlite3_column_double(st, 4), &a->hbad);
	const char *t = (const char *)sqlite3_column_text(st, 6);
	t = t ? t : "";
	uint64_t th = tk_hash_bytes(t, strlen(t), 0);
	uint32_t si = tk_hidx_find(&a->snidx, th, sn_eq, a, t);
	if (si == UINT32_MAX) {
		TK_GROW(a->sn, a->sncap, a->nsn + 1);
		a->sn[a->nsn] = tk_xstrdup(t);
		si = (uint32_t)a->nsn++;
		tk_hidx_insert(&a->snidx, th, si);
	}
	dses d = {g, si, 0, 0};
	uint64_t dh = tk_hash_u64((uint64_t)g << 32 | si);
	uint32_t di = tk_hidx_find(&a->dsidx, dh, dses_eq, a, &d);
	if (di == UINT32_MAX) {
		TK_GROW(a->ds, a->dscap, a->nds + 1);
		a->ds[a->nds] = d;
		di = (uint32_t)a->nds++;
		tk_hidx_insert(&a->dsidx, dh, di);
	}
	a->ds[di].mask |= 1u << hour;
}

static void sigdays_free(sigacc *a)
{
	for (size_t i = 0; i < a->ndg; i++)
		free(a->dg[i].kind), free(a->dg[i].app), free(a->dg[i].version);
	for (size_t i = 0; i < a->nsn; i++)
		free(a->sn[i]);
	free(a->dg);
	free(a->di);
	free(a->ds);
	free(a->sn);
	tk_hidx_free(&a->dgidx);
	tk_hidx_free(&a->diidx);
	tk_hidx_free(&a->dsidx);
	tk_hidx_free(&a->snidx);
}

static int dses_cmp(const void *x, const void *y)
{
	const dses *a = x, *b = y;
	if (a->g != b->g)
		return a->g < b->g ? -1 : 1;
	return (a->no > b->no) - (a->no < b->no);
}

/* a's rows into sig_days (each merged with the row it has), its sessions numbered in sess_no, inside
 * the open transaction. */
static int sigdays_write(sq *s, sigacc *a)
{
	sqlite3_stmt *ins = NULL, *num = NULL, *get = NULL, *put = NULL;
	int ok =
	    sqlite3_prepare_v2(s->db, "INSERT OR IGNORE INTO sess_no (session) VALUES (?1)", -1, &ins, NULL) ==
	        SQLITE_OK &&
	    sqlite3_prepare_v2(s->db, "SELECT no FROM sess_no WHERE session = ?1", -1, &num, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(
	        s->db,
	        "SELECT n, ex, sess, runs, hn FROM sig_days WHERE sid = ?1 AND kind = ?2 AND app = ?3 AND "
	        "version = ?4 AND day = ?5",
	        -1, &get, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(s->db,
	                       "INSERT OR REPLACE INTO sig_days (sid, kind, app, version, day, n, ex, sess, runs, hn) "
	                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	                       -1, &put, NULL) == SQLITE_OK;
	sqlite3_int64 *no = tk_xcalloc(a->nsn + 1, sizeof *no);
	for (size_t i = 0; ok && i < a->nsn; i++) {
		sqlite3_reset(ins);
		sqlite3_reset(num);
		sqlite3_bind_text(ins, 1, a->sn[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(num, 1, a->sn[i], -1, SQLITE_STATIC);
		ok = sqlite3_step(ins) == SQLITE_DONE && sqlite3_step(num) == SQLITE_ROW;
		if (ok && (no[i] = sqlite3_column_int64(num, 0)) > UINT32_MAX)
			a->hbad = 1;
	}
	for (size_t i = 0; i < a->nds; i++)
		a->ds[i].no = no[a->ds[i].s];
	free(no);
	if (a->ndi > 1)
		qsort(a->di, a->ndi, sizeof *a->di, hitem_cmp);
	if (a->nds > 1)
		qsort(a->ds, a->nds, sizeof *a->ds, dses_cmp);
	unsigned char *runs = NULL, *sess = NULL, ex[24 * DEX_BYTES];
	size_t rcap = 0, scap = 0, ii = 0, si = 0;
	for (uint32_t g = 0; ok && g < a->ndg; g++) {
		const dgrp *gr = &a->dg[g];
		sqlite3_stmt *st[2] = {get, put};
		for (int k = 0; k < 2; k++) {
			sqlite3_reset(st[k]);
			sqlite3_bind_int64(st[k], 1, gr->sid);
			sqlite3_bind_text(st[k], 2, gr->kind, -1, SQLITE_STATIC);
			sqlite3_bind_text(st[k], 3, gr->app, -1, SQLITE_STATIC);
			sqlite3_bind_text(st[k], 4, gr->version, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st[k], 5, gr->day);
		}
		int rc = sqlite3_step(get);
		ok = rc == SQLITE_ROW || rc == SQLITE_DONE;
		int old = rc == SQLITE_ROW;
		const unsigned char *orun = old ? sqlite3_column_blob(get, 3) : NULL,
		                    *oses = old ? sqlite3_column_blob(get, 2) : NULL,
		                    *oex = old ? sqlite3_column_blob(get, 1) : NULL;
		size_t nor = orun ? (size_t)sqlite3_column_bytes(get, 3) / HRUN_BYTES : 0,
		       nos = oses ? (size_t)sqlite3_column_bytes(get, 2) / DSES_BYTES : 0,
		       noe = oex ? (size_t)sqlite3_column_bytes(get, 1) / DEX_BYTES : 0;
		sqlite3_int64 n = gr->n + (old ? sqlite3_column_int64(get, 0) : 0);
		size_t ie = ii, se = si;
		while (ie < a->ndi && a->di[ie].g == g)
			ie++;
		while (se < a->nds && a->ds[se].g == g)
			se++;
		/* the runs, merged in (hour, value) order; the counts per hour */
		uint32_t hn[24] = {0};
		const unsigned char *ohn = old ? sqlite3_column_blob(get, 4) : NULL;
		for (int hr = 0; ohn && hr < 24 && sqlite3_column_bytes(get, 4) == 24 * 4; hr++)
			hn[hr] = le32(ohn + 4 * hr);
		for (size_t k = ii; k < ie; k++) {
			if (hn[a->di[k].r.h] > UINT32_MAX - a->di[k].r.n)
				a->hbad = 1;
			hn[a->di[k].r.h] += a->di[k].r.n;
		}
		unsigned char hnb[24 * 4];
		for (int hr = 0; hr < 24; hr++)
			put32(hnb + 4 * hr, hn[hr]);
		TK_GROW(runs, rcap, (nor + (ie - ii)) * HRUN_BYTES + 1);
		size_t nr = ok ? hruns_merge(orun, nor, a->di + ii, ie - ii, runs, &a->hbad) : 0;
		/* the sessions, merged by number */
		TK_GROW(sess, scap, (nos + (se - si)) * DSES_BYTES + 1);
		size_t ns = 0, x = 0, y = si;
		while (ok && (x < nos || y < se)) {
			uint32_t on = x < nos ? le32(oses + x * DSES_BYTES) : 0, m;
			sqlite3_int64 nn;
			if (x < nos && (y == se || on < a->ds[y].no)) {
				nn = on, m = le32(oses + x++ * DSES_BYTES + 4);
			} else if (x < nos && on == a->ds[y].no) {
				nn = on, m = le32(oses + x++ * DSES_BYTES + 4) | a->ds[y++].mask;
			} else {
				nn = a->ds[y].no, m = a->ds[y++].mask;
			}
			put32(sess + ns * DSES_BYTES, (uint32_t)nn);
			put32(sess + ns * DSES_BYTES + 4, m);
			ns++;
		}
		/* each hour's least id */
		unsigned char least[24][32];
		uint32_t have = gr->exmask;
		memcpy(least, gr->ex, sizeof least);
		for (size_t e = 0; e < noe; e++) {
			const unsigned char *p = oex + e * DEX_BYTES;
			int hr = p[0] < 24 ? p[0] : 23;
			if (!(have >> hr & 1) || memcmp(p + 1, least[hr], 32) < 0) {
				memcpy(least[hr], p + 1, 32);
				have |= 1u << hr;
			}
		}
		size_t ne = 0;
		for (int hr = 0; hr < 24; hr++)
			if (have >> hr & 1) {
				ex[ne * DEX_BYTES] = (unsigned char)hr;
				memcpy(ex + ne * DEX_BYTES + 1, least[hr], 32);
				ne++;
			}
		if (ok) {
			sqlite3_bind_int64(put, 6, n);
			sqlite3_bind_blob(put, 7, ex, (int)(ne * DEX_BYTES), SQLITE_STATIC);
			sqlite3_bind_blob(put, 8, sess, (int)(ns * DSES_BYTES), SQLITE_STATIC);
			sqlite3_bind_blob(put, 9, runs, (int)(nr * HRUN_BYTES), SQLITE_STATIC);
			sqlite3_bind_blob(put, 10, hnb, (int)sizeof hnb, SQLITE_STATIC);
			ok = sqlite3_step(put) == SQLITE_DONE;
		}
		sqlite3_reset(get);
		ii = ie, si = se;
	}
	free(runs);
	free(sess);
	sqlite3_finalize(ins);
	sqlite3_finalize(num);
	sqlite3_finalize(get);
	sqlite3_finalize(put);
	return ok ? 0 : -1;
}

/* 11 → 12: sig_days and sess_no, summed from the reports the tables above hold (up to sig_upto; the
 * catch-up adds the rest to both). */
static int migrate_11_12(sq *s, tk_error *err)
{
	sqlite3_int64 upto;
	if (exec(s,
	         "DROP TABLE IF EXISTS sig_days; DROP TABLE IF EXISTS sess_no;"
	         "CREATE TABLE sess_no (no INTEGER PRIMARY KEY, session TEXT NOT NULL UNIQUE);"
	         "CREATE TABLE sig_days (sid INTEGER NOT NULL, kind TEXT NOT NULL, app TEXT NOT NULL, version TEXT NOT "
	         "NULL, day INTEGER NOT NULL, n INTEGER NOT NULL, hn BLOB NOT NULL, ex BLOB NOT NULL,"
	         " sess BLOB NOT NULL, runs BLOB NOT NULL, UNIQUE (sid, kind, app, version, day));",
	         err))
		return -1;
	if (int_of(s->db, "SELECT upto FROM sig_upto", &upto))
		return fail(s, err, "signature summaries");
	int hbad = 0;
	if (upto > 0 && sigsum_scan(s, 0, upto, SIGACC_DAYS, &hbad, err))
		return -1;
	return hbad ? exec(s, "UPDATE sig_upto SET hbad = 1", err) : 0;
}

/* A date range split for the summaries: the whole hours [hs, he) they answer (open ends as ±2^40),
 * and the parts before and after read from reports (times in [lo, hi) whose hour is not whole). */
typedef struct hspan {
	sqlite3_int64 hs, he, d0, d1; /* whole hours; the days holding them */
	int np;
	double lo[2], hi[2]; /* the parts read from reports; 0 = that end open */
	sqlite3 *bdb;        /* the connection the blobs are read on (hspan_begin) */
} hspan;

#define HSPAN_OPEN ((sqlite3_int64)1 << 40)

static sqlite3_int64 floor_div(sqlite3_int64 a, sqlite3_int64 b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* Whether the day summaries answer q (a time range under app and version filters at most, no
 * signature): 1 with sp filled. */
static int hspan_of(const tk_store_query *q, hspan *sp)
{
	if (!(q->since > 0) && !(q->until > 0))
		return 0;
	if (q->since > 1e12 || q->until > 1e12)
		return 0;
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		if (q->where[k] && k != TK_STORE_APP && k != TK_STORE_VERSION)
			return 0;
	memset(sp, 0, sizeof *sp);
	sp->hs = -HSPAN_OPEN, sp->he = HSPAN_OPEN;
	if (q->since > 0) { /* the first hour starting at or after since */
		sp->hs = (sqlite3_int64)(q->since / 3600);
		while ((double)sp->hs * 3600 < q->since)
			sp->hs++;
		while ((double)(sp->hs - 1) * 3600 >= q->since)
			sp->hs--;
	}
	if (q->until > 0) { /* the last hour starting at or before until: hours before it end by until */
		sp->he = (sqlite3_int64)(q->until / 3600);
		while ((double)sp->he * 3600 > q->until)
			sp->he--;
		while ((double)(sp->he + 1) * 3600 <= q->until)
			sp->he++;
	}
	if (sp->hs >= sp->he) { /* no whole hour: all of it from reports */
		sp->hs = sp->he = 0;
		sp->np = 1, sp->lo[0] = q->since > 0 ? q->since : 0, sp->hi[0] = q->until > 0 ? q->until : 0;
		return 1;
	}
	sp->d0 = floor_div(sp->hs, 24), sp->d1 = floor_div(sp->he - 1, 24);
	/* a margin of a second each way: the hour of a report is checked (hspan_whole) */
	if (q->since > 0)
		sp->lo[sp->np] = q->since, sp->hi[sp->np++] = (double)sp->hs * 3600 + 1;
	if (q->until > 0)
		sp->lo[sp->np] = (double)sp->he * 3600 - 1, sp->hi[sp->np++] = q->until;
	return 1;
}

/* Whether a report at time t is among the whole hours (so not to be read again from reports). */
static int hspan_whole(const hspan *sp, double t)
{
	sqlite3_int64 b;
	return sp->hs < sp->he && !rate_bucket(t, 3600, &b) && b >= sp->hs && b < sp->he;
}

/* The mask of day's hours within the whole hours. */
static uint32_t hspan_mask(const hspan *sp, sqlite3_int64 day)
{
	sqlite3_int64 lo = sp->hs - day * 24, hi = sp->he - day * 24;
	lo = lo < 0 ? 0 : lo, hi = hi > 24 ? 24 : hi;
	if (lo >= hi)
		return 0;
	return (uint32_t)(((uint64_t)1 << hi) - ((uint64_t)1 << lo));
}

#define HOURS_ALL 0xffffffu

/* A statement over the parts of sp read from reports: "SELECT cols FROM reports INDEXED BY
 * reports_kind_time ... WHERE kind IN kinds AND col IS NOT NULL AND time >= ?1 AND time < ?2 [AND app =
 * ?3] [AND version = ?4]" (extra joins after reports), bound for part i by hspan_bind. */
static sqlite3_stmt *hspan_stmt(sq *s, const char *cols, const char *join, const tk_store_query *q, const char *kinds,
                                const char *col, tk_error *err)
{
	char *sql =
	    sqlite3_mprintf("SELECT %s FROM reports r INDEXED BY reports_kind_time%s WHERE r.kind IN %s AND r.%s IS "
	                    "NOT NULL AND r.time >= ?1 AND r.time < ?2%s%s",
	                    cols, join, kinds, col, q->where[TK_STORE_APP] ? " AND r.app = ?3" : "",
	                    q->where[TK_STORE_VERSION] ? " AND r.version = ?4" : "");
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		fail(s, err, "date range query");
		return NULL;
	}
	if (q->where[TK_STORE_APP])
		sqlite3_bind_text(st, 3, q->where[TK_STORE_APP], -1, SQLITE_STATIC);
	if (q->where[TK_STORE_VERSION])
		sqlite3_bind_text(st, 4, q->where[TK_STORE_VERSION], -1, SQLITE_STATIC);
	return st;
}

static void hspan_bind(sqlite3_stmt *st, const hspan *sp, int i)
{
	sqlite3_reset(st);
	sqlite3_bind_double(st, 1, sp->lo[i] > 0 ? sp->lo[i] : -1e300);
	sqlite3_bind_double(st, 2, sp->hi[i] > 0 ? sp->hi[i] : 1e300);
}

/* Read transactions on db and on sp->bdb (scan_db) in which the summaries hold every report (their
 * catch-up reached the last rowid) and both see the same reports: 0 in them, 1 when not (none left
 * open: the caller reads reports). */
static int hspan_begin(sq *s, hspan *sp)
{
	if (!hour_runs_ready(s))
		return 1;
	sp->bdb = scan_db(s);
	sqlite3_int64 upto, top, bad, upto2 = 0, top2 = 0;
	int two = sp->bdb != s->db;
	if (sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return 1;
	if (two && sqlite3_exec(sp->bdb, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
		return 1;
	}
	if (int_of(s->db, "SELECT upto FROM sig_upto", &upto) ||
	    int_of(s->db, "SELECT max(rowid) FROM reports", &top) || int_of(s->db, "SELECT hbad FROM sig_upto", &bad) ||
	    upto < top || bad ||
	    (two && (int_of(sp->bdb, "SELECT upto FROM sig_upto", &upto2) ||
	             int_of(sp->bdb, "SELECT max(rowid) FROM reports", &top2) || upto2 != upto || top2 != top))) {
		sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
		if (two)
			sqlite3_exec(sp->bdb, "COMMIT", NULL, NULL, NULL);
		return 1;
	}
	return 0;
}

static void hspan_end(sq *s, const hspan *sp)
{
	sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (sp->bdb != s->db)
		sqlite3_exec(sp->bdb, "COMMIT", NULL, NULL, NULL);
}

/* (value, count) pairs summed per value (hashed), then sorted. */
typedef struct vsum {
	vw *v;
	size_t n, cap;
	tk_hidx idx;
} vsum;

static int vsum_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const vw *)ctx)[idx].v == *(const double *)key;
}

static void vsum_add(vsum *a, double v, uint64_t n)
{
	double k = v == 0 ? 0.0 : v;
	uint64_t h = tk_hash_bytes(&k, sizeof k, 0);
	uint32_t at = tk_hidx_find(&a->idx, h, vsum_eq, a->v, &k);
	if (at == UINT32_MAX) {
		TK_GROW(a->v, a->cap, a->n + 1);
		a->v[a->n] = (vw){v, 0};
		at = (uint32_t)a->n++;
		tk_hidx_insert(&a->idx, h, at);
	}
	a->v[at].n += n;
}

/* the values ascending (the index dropped) */
static void vsum_sort(vsum *a)
{
	tk_hidx_free(&a->idx);
	memset(&a->idx, 0, sizeof a->idx);
	if (a->n > 1)
		qsort(a->v, a->n, sizeof *a->v, vw_cmp);
}

/* A report of a range's partial hours, of the kinds and filters asked. */
typedef struct prow {
	sqlite3_int64 sid, no;
	char *version;
	double v;
	unsigned char id[32];
} prow;

static void prows_free(prow *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i].version);
	free(p);
}

/* The reports of sp's partial hours: 0, or 1 when one has what the summaries cannot stand for (no
 * signature, an unnumbered session, an id not 32 bytes: the caller reads reports), -1 with err. */
static int prows_get(sq *s, const hspan *sp, const tk_store_query *q, const char *kinds, prow **out, size_t *nout,
                     tk_error *err)
{
	*out = NULL, *nout = 0;
	if (!sp->np)
		return 0;
	sqlite3_stmt *st = hspan_stmt(s, "r.sid, x.no, r.version, r.duration, r.id, r.time",
	                              " LEFT JOIN sess_no x ON x.session = r.session", q, kinds, "duration", err);
	if (!st)
		return -1;
	prow *p = NULL;
	size_t n = 0, cap = 0;
	int rc = SQLITE_DONE, odd = 0;
	for (int i = 0; i < sp->np && rc == SQLITE_DONE && !odd; i++) {
		hspan_bind(st, sp, i);
		while (!odd && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (hspan_whole(sp, sqlite3_column_double(st, 5)))
				continue;
			if (sqlite3_column_type(st, 0) == SQLITE_NULL || sqlite3_column_type(st, 1) == SQLITE_NULL ||
			    sqlite3_column_bytes(st, 4) != 32) {
				odd = 1;
				break;
			}
			TK_GROW(p, cap, n + 1);
			p[n].sid = sqlite3_column_int64(st, 0), p[n].no = sqlite3_column_int64(st, 1);
			p[n].version = col_dup(st, 2), p[n].v = sqlite3_column_double(st, 3);
			memcpy(p[n].id, sqlite3_column_blob(st, 4), 32);
			n++;
		}
	}
	sqlite3_finalize(st);
	if (odd || (rc != SQLITE_DONE && rc != SQLITE_ROW)) {
		prows_free(p, n);
		return odd ? 1 : fail(s, err, "date range query");
	}
	*out = p, *nout = n;
	return 0;
}

/* What a signature sums to over a range: its values, distinct sessions, least id, versions. */
typedef struct rsig {
	sqlite3_int64 sid;
	uint64_t count, sessions;
	vsum v;
	unsigned char least[32];
	int has_least;
	char **vers;
	size_t nvers;
} rsig;

static void rsig_free(rsig *r)
{
	free(r->v.v);
	tk_hidx_free(&r->v.idx);
	for (size_t i = 0; i < r->nvers; i++)
		free(r->vers[i]);
	free(r->vers);
}

static void rsig_version(rsig *r, const char *v)
{
	for (size_t i = 0; i < r->nvers; i++)
		if (strcmp(r->vers[i], v) == 0)
			return;
	r->vers = tk_xrealloc(r->vers, (r->nvers + 1) * sizeof *r->vers);
	r->vers[r->nvers++] = tk_xstrdup(v);
}

static void rsig_id(rsig *r, const unsigned char *id)
{
	if (!r->has_least || memcmp(id, r->least, 32) < 0) {
		memcpy(r->least, id, 32);
		r->has_least = 1;
	}
}

enum { RS_VALUES = 1, RS_SESSIONS = 2, RS_LEAST = 4, RS_VERSIONS = 8 };

/* Signature r->sid summed over sp (what says which parts) from sig_days and the partial rows p. seen:
 * a bit per session number (cleared again here), nseen its bits. */
static int rsig_sum(sq *s, const hspan *sp, const tk_store_query *q, const char *kinds, const prow *p, size_t np,
                    int what, rsig *r, unsigned char **seen, size_t *nseen, tk_error *err)
{
	char *sql = sqlite3_mprintf(
	    "SELECT day, version, %s, %s, %s FROM sig_days WHERE sid = ?1 AND kind IN %s AND day >= "
	    "?5 AND day <= ?6%s%s",
	    what & RS_VALUES ? "runs" : "NULL", what & RS_SESSIONS ? "sess" : "NULL",
	    what & (RS_LEAST | RS_VERSIONS) ? "ex" : "NULL", kinds, q->where[TK_STORE_APP] ? " AND app = ?3" : "",
	    q->where[TK_STORE_VERSION] ? " AND version = ?4" : "");
	sqlite3_stmt *st;
	int prc = sqlite3_prepare_v2(sp->bdb, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (prc != SQLITE_OK)
		return fail_on(s, sp->bdb, err, "date range query");
	sqlite3_bind_int64(st, 1, r->sid);
	if (q->where[TK_STORE_APP])
		sqlite3_bind_text(st, 3, q->where[TK_STORE_APP], -1, SQLITE_STATIC);
	if (q->where[TK_STORE_VERSION])
		sqlite3_bind_text(st, 4, q->where[TK_STORE_VERSION], -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, sp->hs < sp->he ? sp->d0 : 1);
	sqlite3_bind_int64(st, 6, sp->hs < sp->he ? sp->d1 : 0);
	uint32_t *set = NULL; /* the session numbers set in seen */
	size_t nset = 0, setcap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t m = hspan_mask(sp, sqlite3_column_int64(st, 0));
		if (!m)
			continue;
		if (what & RS_VALUES) {
			const unsigned char *e = sqlite3_column_blob(st, 2);
			size_t ne = (size_t)sqlite3_column_bytes(st, 2) / HRUN_BYTES;
			for (size_t j = 0; e && j < ne; j++) {
				hrun h;
				hrun_get(e, j, &h);
				if (m >> h.h & 1) {
					vsum_add(&r->v, h.v, h.n);
					r->count += h.n;
				}
			}
		}
		if (what & RS_SESSIONS) {
			const unsigned char *e = sqlite3_column_blob(st, 3);
			size_t ne = (size_t)sqlite3_column_bytes(st, 3) / DSES_BYTES;
			for (size_t j = 0; e && j < ne; j++) {
				const unsigned char *x = e + j * DSES_BYTES;
				if (!(le32(x + 4) & m))
					continue;
				uint32_t no = le32(x);
				if (no >= *nseen) {
					size_t grow = (size_t)no + 1 + (size_t)no / 2;
					*seen = tk_xrealloc(*seen, (grow + 7) / 8);
					memset(*seen + (*nseen + 7) / 8, 0, (grow + 7) / 8 - (*nseen + 7) / 8);
					*nseen = (grow + 7) / 8 * 8;
				}
				if ((*seen)[no / 8] >> (no % 8) & 1)
					continue;
				(*seen)[no / 8] |= (unsigned char)(1u << (no % 8));
				TK_GROW(set, setcap, nset + 1);
				set[nset++] = no;
			}
		}
		if (what & (RS_LEAST | RS_VERSIONS)) {
			const unsigned char *e = sqlite3_column_blob(st, 4);
			size_t ne = (size_t)sqlite3_column_bytes(st, 4) / DEX_BYTES, any = 0;
			for (size_t j = 0; e && j < ne; j++)
				if (e[j * DEX_BYTES] < 24 && (m >> e[j * DEX_BYTES] & 1)) {
					any = 1;
					rsig_id(r, e + j * DEX_BYTES + 1);
				}
			if (any && (what & RS_VERSIONS)) {
				const char *v = (const char *)sqlite3_column_text(st, 1);
				rsig_version(r, v ? v : "");
			}
		}
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < np; i++) {
		if (p[i].sid != r->sid)
			continue;
		if (what & RS_VALUES) {
			vsum_add(&r->v, p[i].v, 1);
			r->count++;
		}
		if (what & RS_SESSIONS) {
			uint64_t no = (uint64_t)p[i].no;
			if (no >= UINT32_MAX)
				continue;
			if (no >= *nseen) {
				size_t grow = (size_t)no + 1 + (size_t)no / 2;
				*seen = tk_xrealloc(*seen, (grow + 7) / 8);
				memset(*seen + (*nseen + 7) / 8, 0, (grow + 7) / 8 - (*nseen + 7) / 8);
				*nseen = (grow + 7) / 8 * 8;
			}
			if (!((*seen)[no / 8] >> (no % 8) & 1)) {
				(*seen)[no / 8] |= (unsigned char)(1u << (no % 8));
				TK_GROW(set, setcap, nset + 1);
				set[nset++] = (uint32_t)no;
			}
		}
		if (what & RS_LEAST)
			rsig_id(r, p[i].id);
		if (what & RS_VERSIONS)
			rsig_version(r, p[i].version);
	}
	r->sessions = nset;
	for (size_t i = 0; i < nset; i++)
		(*seen)[set[i] / 8] &= (unsigned char)~(1u << (set[i] % 8));
	free(set);
	if (what & RS_VALUES)
		vsum_sort(&r->v);
	return rc == SQLITE_DONE ? 0 : fail_on(s, sp->bdb, err, "date range query");
}

typedef struct rcount {
	sqlite3_int64 sid;
	uint64_t n;
	char *sig;
} rcount;

static int rcount_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const rcount *)ctx)[idx].sid == *(const sqlite3_int64 *)key;
}

static void rcount_add(rcount **c, size_t *n, size_t *cap, tk_hidx *idx, sqlite3_int64 sid, uint64_t k)
{
	uint64_t h = tk_hash_u64((uint64_t)sid);
	uint32_t at = tk_hidx_find(idx, h, rcount_eq, *c, &sid);
	if (at == UINT32_MAX) {
		TK_GROW(*c, *cap, *n + 1);
		(*c)[*n] = (rcount){sid, 0, NULL};
		at = (uint32_t)(*n)++;
		tk_hidx_insert(idx, h, at);
	}
	(*c)[at].n += k;
}

static int rcount_most_first(const void *a, const void *b)
{
	const rcount *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->sig, y->sig);
}

static char *hex_of(const char *p, int len);

/* The values range_top summed for its signatures, kept for the durations the compare page asks of
 * the same range next (range_sigs_values): per side of a comparison, while the change token is the
 * same. */
#define RVCACHE_N 2
typedef struct rvcache {
	char *key[RVCACHE_N];
	uint64_t token[RVCACHE_N], used[RVCACHE_N], clock;
	rsig *r[RVCACHE_N];
	size_t n[RVCACHE_N];
} rvcache;

static void rvslot_free(rvcache *c, size_t i)
{
	for (size_t k = 0; k < c->n[i]; k++)
		rsig_free(&c->r[i][k]);
	free(c->r[i]);
	free(c->key[i]);
	c->r[i] = NULL, c->key[i] = NULL, c->n[i] = 0;
}

static void rvcache_free(sq *s)
{
	if (!s->rv)
		return;
	for (size_t i = 0; i < RVCACHE_N; i++)
		rvslot_free(s->rv, i);
	free(s->rv);
	s->rv = NULL;
}

/* The key of q's range and filters with kinds, and the store's token: 0, or -1 (nothing kept). */
static int rv_key(sq *s, const tk_store_query *q, const char *kinds, char **key, uint64_t *token)
{
	tk_error e;
	if (sq_changes(s, token, &e))
		return -1;
	tk_store_query kq = *q;
	kq.metric = NULL, kq.kind = kinds, kq.nby = 0, kq.signature = NULL;
	*key = query_key(&kq);
	return 0;
}

/* The kept values of sid for q (NULL when not kept). */
static const rsig *rv_find(sq *s, const tk_store_query *q, const char *kinds, sqlite3_int64 sid)
{
	char *key;
	uint64_t token;
	if (!s->rv || rv_key(s, q, kinds, &key, &token))
		return NULL;
	const rsig *found = NULL;
	for (size_t i = 0; i < RVCACHE_N && !found; i++)
		if (s->rv->key[i] && s->rv->token[i] == token && strcmp(s->rv->key[i], key) == 0)
			for (size_t k = 0; k < s->rv->n[i]; k++)
				if (s->rv->r[i][k].sid == sid) {
					found = &s->rv->r[i][k];
					s->rv->used[i] = ++s->rv->clock;
					break;
				}
	free(key);
	return found;
}

/* Keep r[0..n) (taken) for q. */
static void rv_put(sq *s, const tk_store_query *q, const char *kinds, rsig *r, size_t n)
{
	char *key;
	uint64_t token;
	if (rv_key(s, q, kinds, &key, &token)) {
		for (size_t k = 0; k < n; k++)
			rsig_free(&r[k]);
		free(r);
		return;
	}
	if (!s->rv)
		s->rv = tk_xcalloc(1, sizeof *s->rv);
	rvcache *c = s->rv;
	size_t slot = 0;
	for (size_t i = 1; i < RVCACHE_N; i++)
		if (!c->key[i] || (c->key[slot] && c->used[i] < c->used[slot]))
			slot = i;
	if (!c->key[0])
		slot = 0;
	rvslot_free(c, slot);
	c->key[slot] = key, c->token[slot] = token, c->used[slot] = ++c->clock;
	c->r[slot] = r, c->n[slot] = n;
}

/* Top signatures of a date range from sig_days and the partial hours' reports: each signature's count
 * (whole days from n, the end days by hour from runs), the first limit by count and signature, each
 * summed by rsig_sum: what sq_top_hangs' scan of the range's reports gives. 1 where the summaries do
 * not answer q. */
static int range_top(sq *s, const tk_store_query *q, const char *kinds, size_t limit, tk_store_hang **out, size_t *n,
                     tk_error *err)
{
	hspan sp;
	if (q->signature || !hspan_of(q, &sp) || hspan_begin(s, &sp))
		return 1;
	prow *p = NULL;
	size_t np = 0;
	int k = prows_get(s, &sp, q, kinds, &p, &np, err);
	if (k) {
		hspan_end(s, &sp);
		return k;
	}
	rcount *c = NULL;
	size_t nc = 0, ccap = 0;
	tk_hidx cidx = {0};
	int rc = SQLITE_DONE;
	if (sp.hs < sp.he) {
		char *sql =
		    sqlite3_mprintf("SELECT sid, day, n, CASE WHEN day <= ?5 OR day >= ?6 THEN hn END FROM sig_days "
		                    "WHERE kind IN %s AND day >= ?5 AND day <= ?6%s%s",
		                    kinds, q->where[TK_STORE_APP] ? " AND app = ?3" : "",
		                    q->where[TK_STORE_VERSION] ? " AND version = ?4" : "");
		sqlite3_stmt *st;
		rc = sqlite3_prepare_v2(sp.bdb, sql, -1, &st, NULL) == SQLITE_OK ? SQLITE_DONE : SQLITE_ERROR;
		sqlite3_free(sql);
		if (rc == SQLITE_DONE) {
			if (q->where[TK_STORE_APP])
				sqlite3_bind_text(st, 3, q->where[TK_STORE_APP], -1, SQLITE_STATIC);
			if (q->where[TK_STORE_VERSION])
				sqlite3_bind_text(st, 4, q->where[TK_STORE_VERSION], -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 5, sp.d0);
			sqlite3_bind_int64(st, 6, sp.d1);
			while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
				uint32_t m = hspan_mask(&sp, sqlite3_column_int64(st, 1));
				uint64_t cnt = 0;
				if (m == HOURS_ALL) {
					cnt = (uint64_t)sqlite3_column_int64(st, 2);
				} else if (m && sqlite3_column_bytes(st, 3) == 24 * 4) {
					const unsigned char *e = sqlite3_column_blob(st, 3);
					for (int hr = 0; hr < 24; hr++)
						if (m >> hr & 1)
							cnt += le32(e + 4 * hr);
				}
				if (cnt)
					rcount_add(&c, &nc, &ccap, &cidx, sqlite3_column_int64(st, 0), cnt);
			}
			sqlite3_finalize(st);
		}
	}
	for (size_t i = 0; i < np; i++)
		rcount_add(&c, &nc, &ccap, &cidx, p[i].sid, 1);
	tk_hidx_free(&cidx);
	sqlite3_stmt *name = NULL;
	if (rc == SQLITE_DONE &&
	    sqlite3_prepare_v2(s->db, "SELECT signature FROM hang_sigs WHERE sid = ?", -1, &name, NULL) != SQLITE_OK)
		rc = SQLITE_ERROR;
	for (size_t i = 0; i < nc && rc == SQLITE_DONE; i++) {
		sqlite3_reset(name);
		sqlite3_bind_int64(name, 1, c[i].sid);
		if (sqlite3_step(name) != SQLITE_ROW)
			rc = SQLITE_ERROR;
		else
			c[i].sig = col_dup(name, 0);
	}
	sqlite3_finalize(name);
	if (rc == SQLITE_DONE && nc > 1)
		qsort(c, nc, sizeof *c, rcount_most_first);
	unsigned char *seen = NULL;
	size_t nseen = 0, cap = 0, nkept = 0;
	rsig *kept = tk_xcalloc((nc < limit ? nc : limit) + 1, sizeof *kept);
	for (size_t i = 0; i < nc && i < limit && rc == SQLITE_DONE; i++) {
		rsig r = {.sid = c[i].sid};
		if (rsig_sum(s, &sp, q, kinds, p, np, RS_VALUES | RS_SESSIONS | RS_LEAST, &r, &seen, &nseen, err)) {
			rsig_free(&r);
			rc = -1;
			break;
		}
		tk_store_group g;
		vw_summarise(r.v.v, r.v.n, &g);
		TK_GROW(*out, cap, *n + 1);
		(*out)[(*n)++] =
		    (tk_store_hang){.signature = tk_xstrdup(c[i].sig),
		                    .count = r.count,
		                    .sessions = r.sessions,
		                    .p50 = r.count ? g.q[0] : NAN,
		                    .p95 = r.count ? g.q[2] : NAN,
		                    .example = r.has_least ? hex_of((const char *)r.least, 32) : tk_xstrdup("")};
		if (r.count != c[i].n)
			rc = SQLITE_ERROR; /* the two counts must agree */
		kept[nkept++] = r;
	}
	free(seen);
	if (rc == SQLITE_DONE) {
		rv_put(s, q, kinds, kept, nkept);
	} else {
		for (size_t x = 0; x < nkept; x++)
			rsig_free(&kept[x]);
		free(kept);
	}
	for (size_t i = 0; i < nc; i++)
		free(c[i].sig);
	free(c);
	prows_free(p, np);
	hspan_end(s, &sp);
	if (rc != SQLITE_DONE) {
		tk_store_hangs_free(*out, *n);
		*out = NULL;
		*n = 0;
		return rc < 0 ? -1 : fail(s, err, "date range query");
	}
	return 0;
}

/* sigs_values over a date range: each signature's values from sig_days and the partial hours, each
 * distinct value once, ascending. 1 where the summaries do not answer q. */
static int range_sigs_values(sq *s, const tk_store_query *q, const char *kinds, char *const *sigs, size_t n,
                             int (*row)(void *ctx, size_t i, double v, uint64_t count), void *ctx, tk_error *err)
{
	hspan sp;
	if (q->signature || !hspan_of(q, &sp) || hspan_begin(s, &sp))
		return 1;
	prow *p = NULL;
	size_t np = 0;
	int k = prows_get(s, &sp, q, kinds, &p, &np, err), rc = 0;
	for (size_t i = 0; i < n && !k && !rc; i++) {
		rsig r = {0};
		int f = sid_of(s, sigs[i], &r.sid, err);
		const rsig *kept = f ? NULL : rv_find(s, q, kinds, r.sid);
		if (kept) { /* range_top summed it just now */
			for (size_t j = 0; !rc && j < kept->v.n; j++)
				if (row(ctx, i, kept->v.v[j].v, kept->v.v[j].n))
					rc = tk_error_set(err, "signatures' durations: out of memory");
			continue;
		}
		if (f)
			rc = f < 0 ? -1 : 0;
		else if (rsig_sum(s, &sp, q, kinds, p, np, RS_VALUES, &r, NULL, NULL, err))
			rc = -1;
		for (size_t j = 0; !f && !rc && j < r.v.n; j++)
			if (row(ctx, i, r.v.v[j].v, r.v.v[j].n))
				rc = tk_error_set(err, "signatures' durations: out of memory");
		rsig_free(&r);
	}
	prows_free(p, np);
	hspan_end(s, &sp);
	return k ? k : rc;
}

/* sig_versions over a date range: each signature's distinct versions in the range ("\n"-joined, in
 * no particular order: 1, for the caller to read them as before, when two of them are equal to
 * tk_store_version_cmp, whose first and last would then depend on the order). */
static int range_versions(sq *s, const tk_store_query *q, const char *kinds, char *const *sigs, size_t n,
                          char **versions, tk_error *err)
{
	hspan sp;
	if (q->signature || !hspan_of(q, &sp) || hspan_begin(s, &sp))
		return 1;
	prow *p = NULL;
	size_t np = 0;
	int k = prows_get(s, &sp, q, kinds, &p, &np, err), rc = 0;
	for (size_t i = 0; i < n && !k && !rc; i++) {
		rsig r = {0};
		int f = sid_of(s, sigs[i], &r.sid, err);
		if (f < 0 || (!f && rsig_sum(s, &sp, q, kinds, p, np, RS_VERSIONS, &r, NULL, NULL, err)))
			rc = -1;
		size_t len = 0;
		for (size_t a = 0; a < r.nvers; a++) {
			len += strlen(r.vers[a]) + 1;
			for (size_t b = a + 1; b < r.nvers; b++)
				if (tk_store_version_cmp(r.vers[a], r.vers[b]) == 0)
					rc = 1;
		}
		char *o = tk_xmalloc(len + 1), *w = o;
		for (size_t a = 0; a < r.nvers; a++)
			w += sprintf(w, "%s\n", r.vers[a]);
		*w = 0;
		versions[i] = o;
		rsig_free(&r);
	}
	prows_free(p, np);
	hspan_end(s, &sp);
	if (k || rc)
		for (size_t i = 0; i < n; i++)
			free(versions[i]), versions[i] = NULL;
	return k ? k : rc;
}

/* The runs of vruns_get over a date range (q's other filters app and version at most) from hour_runs'
 * whole hours and the partial hours' reports: each (app, version)'s values, each once with its count,
 * ascending; sorted by (app, version). 1 where the summaries do not answer q. */
static int range_vruns(sq *s, const tk_store_query *q, const char *kinds, const char *col, vrun **out, size_t *nout,
                       tk_error *err)
{
	hspan sp;
	if (q->signature || vc_col(col) < 0 || !hspan_of(q, &sp) || hspan_begin(s, &sp))
		return 1;
	vrun *r = NULL;
	vsum *acc = NULL;
	size_t n = 0, cap = 0, acap = 0;
	tk_hidx idx = {0};
	sqlite3_stmt *st[2] = {NULL, NULL};
	int rc = SQLITE_DONE;
	if (sp.hs < sp.he) {
		char *sql =
		    sqlite3_mprintf("SELECT app, version, day, runs FROM hour_runs WHERE col = %d AND kind IN %s AND "
		                    "day >= ?5 AND day <= ?6%s%s",
		                    vc_col(col), kinds, q->where[TK_STORE_APP] ? " AND app = ?3" : "",
		                    q->where[TK_STORE_VERSION] ? " AND version = ?4" : "");
		if (sqlite3_prepare_v2(sp.bdb, sql, -1, &st[0], NULL) != SQLITE_OK)
			rc = SQLITE_ERROR;
		sqlite3_free(sql);
		if (st[0]) {
			if (q->where[TK_STORE_APP])
				sqlite3_bind_text(st[0], 3, q->where[TK_STORE_APP], -1, SQLITE_STATIC);
			if (q->where[TK_STORE_VERSION])
				sqlite3_bind_text(st[0], 4, q->where[TK_STORE_VERSION], -1, SQLITE_STATIC);
			sqlite3_bind_int64(st[0], 5, sp.d0);
			sqlite3_bind_int64(st[0], 6, sp.d1);
		}
	}
	char cols[64];
	snprintf(cols, sizeof cols, "r.app, r.version, r.time, r.%s", col);
	if (rc == SQLITE_DONE && sp.np && !(st[1] = hspan_stmt(s, cols, "", q, kinds, col, err))) {
		sqlite3_finalize(st[0]);
		hspan_end(s, &sp);
		return -1;
	}
	for (int w = 0; w < 2 && rc == SQLITE_DONE; w++) {
		for (int part = 0; st[w] && part < (w ? sp.np : 1) && rc == SQLITE_DONE; part++) {
			if (w)
				hspan_bind(st[w], &sp, part);
			while ((rc = sqlite3_step(st[w])) == SQLITE_ROW) {
				const char *k[2] = {(const char *)sqlite3_column_text(st[w], 0),
				                    (const char *)sqlite3_column_text(st[w], 1)};
				k[0] = k[0] ? k[0] : "", k[1] = k[1] ? k[1] : "";
				uint32_t m = 0;
				if (w ? hspan_whole(&sp, sqlite3_column_double(st[w], 2))
				      : !(m = hspan_mask(&sp, sqlite3_column_int64(st[w], 2))))
					continue;
				uint64_t h =
				    tk_hash_bytes(k[1], strlen(k[1]), tk_hash_bytes(k[0], strlen(k[0]) + 1, 0));
				uint32_t at = tk_hidx_find(&idx, h, vrun_eq, r, k);
				if (at == UINT32_MAX) {
					TK_GROW(r, cap, n + 1);
					TK_GROW(acc, acap, n + 1);
					r[n] = (vrun){.app = tk_xstrdup(k[0]), .version = tk_xstrdup(k[1])};
					memset(&acc[n], 0, sizeof acc[n]);
					at = (uint32_t)n++;
					tk_hidx_insert(&idx, h, at);
				}
				if (w) {
					vsum_add(&acc[at], sqlite3_column_double(st[w], 3), 1);
					continue;
				}
				const unsigned char *e = sqlite3_column_blob(st[w], 3);
				size_t ne = (size_t)sqlite3_column_bytes(st[w], 3) / HRUN_BYTES;
				for (size_t j = 0; e && j < ne; j++) {
					hrun x;
					hrun_get(e, j, &x);
					if (m >> x.h & 1)
						vsum_add(&acc[at], x.v, x.n);
				}
			}
		}
	}
	sqlite3_finalize(st[0]);
	sqlite3_finalize(st[1]);
	tk_hidx_free(&idx);
	hspan_end(s, &sp);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		vsum_sort(&acc[i]);
		r[i].v = acc[i].v, r[i].n = acc[i].n, r[i].cap = acc[i].cap;
		if (!r[i].n) { /* a day's row with none of its hours in range: no run, as no report */
			free(r[i].app), free(r[i].version), free(r[i].v);
			continue;
		}
		r[kept++] = r[i];
	}
	n = kept;
	free(acc);
	if (rc != SQLITE_DONE) {
		vruns_free(r, n);
		return fail(s, err, "date range query");
	}
	if (n > 1)
		qsort(r, n, sizeof *r, vrun_cmp);
	*out = r, *nout = n;
	return 0;
}

/* A statement on a summary table of q's groups of signature sid: "SELECT cols FROM table WHERE sid = ?1
 * AND kind IN kinds [AND app = ?2] [AND version = ?3] extra". */
static sqlite3_stmt *sigsum_stmt(sq *s, const char *cols, const char *table, const tk_store_query *q, const char *kinds,
                                 sqlite3_int64 sid, const char *extra, tk_error *err)
{
	/* the groups there are named, so the key is searched per group (a version's rows, a what's rows)
	 * instead of read through all of the signature's */
	const char *groups = q->where[TK_STORE_VERSION] ? (q->where[TK_STORE_APP] ? ""
	                                                                          : " AND app IN (SELECT app FROM "
	                                                                            "sig_groups WHERE sid = ?1 AND "
	                                                                            "version = ?3)")
	                     : !*extra                  ? ""
	                     : q->where[TK_STORE_APP]
	                         ? " AND version IN (SELECT version FROM sig_groups WHERE sid = ?1 "
	                           "AND app = ?2)"
	                         : " AND (app, version) IN (SELECT app, version FROM sig_groups WHERE "
	                           "sid = ?1)";
	char *sql = sqlite3_mprintf("SELECT %s FROM %s WHERE sid = ?1 AND kind IN %s%s%s%s%s", cols, table, kinds,
	                            q->where[TK_STORE_APP] ? " AND app = ?2" : "",
	                            q->where[TK_STORE_VERSION] ? " AND version = ?3" : "", groups, extra);
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		fail(s, err, "signature summary query");
		return NULL;
	}
	sqlite3_bind_int64(st, 1, sid);
	if (q->where[TK_STORE_APP])
		sqlite3_bind_text(st, 2, q->where[TK_STORE_APP], -1, SQLITE_STATIC);
	if (q->where[TK_STORE_VERSION])
		sqlite3_bind_text(st, 3, q->where[TK_STORE_VERSION], -1, SQLITE_STATIC);
	return st;
}

/* A signature's durations from sig_values: each distinct value once with its count, ascending; its
 * versions with their counts (by name), and "\n"-joined in the order reports_sig meets them (by the
 * least (kind, duration) of each, then name: what sig_sum lists). */
typedef struct sigvals {
	vw *v;
	size_t nv;
	uint64_t count;
	tk_store_tally *vers;
	size_t nvers;
	char *order;
} sigvals;

typedef struct vfirst {
	char *version, *kind;
	double v;
	uint64_t n;
} vfirst;

static int vfirst_by_name(const void *a, const void *b)
{
	return strcmp(((const vfirst *)a)->version, ((const vfirst *)b)->version);
}

static int vfirst_by_index(const void *a, const void *b)
{
	const vfirst *x = a, *y = b;
	int c = strcmp(x->kind, y->kind);
	if (c)
		return c;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return strcmp(x->version, y->version);
}

static void sigvals_free(sigvals *o)
{
	free(o->v);
	for (size_t i = 0; i < o->nvers; i++)
		free(o->vers[i].value);
	free(o->vers);
	free(o->order);
	memset(o, 0, sizeof *o);
}

static int sigsum_values(sq *s, const tk_store_query *q, const char *kinds, sqlite3_int64 sid, sigvals *o,
                         tk_error *err)
{
	memset(o, 0, sizeof *o);
	sqlite3_stmt *st = sigsum_stmt(s, "kind, version, value, n", "sig_values", q, kinds, sid, "", err);
	if (!st)
		return -1;
	size_t cap = 0, fcap = 0, nf = 0;
	vfirst *f = NULL;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(st, 0),
		           *ver = (const char *)sqlite3_column_text(st, 1);
		kind = kind ? kind : "", ver = ver ? ver : "";
		double v = sqlite3_column_double(st, 2);
		sqlite3_int64 n = sqlite3_column_int64(st, 3);
		if (n < 1)
			continue;
		TK_GROW(o->v, cap, o->nv + 1);
		o->v[o->nv++] = (vw){v, (uint64_t)n};
		o->count += (uint64_t)n;
		size_t k = 0; /* a handful of versions: compared in turn */
		while (k < nf && strcmp(f[k].version, ver) != 0)
			k++;
		if (k == nf) {
			TK_GROW(f, fcap, nf + 1);
			f[nf++] = (vfirst){tk_xstrdup(ver), tk_xstrdup(kind), v, 0};
		} else if (vfirst_by_index(&(vfirst){f[k].version, (char *)kind, v, 0}, &f[k]) < 0) {
			free(f[k].kind);
			f[k].kind = tk_xstrdup(kind), f[k].v = v;
		}
		f[k].n += (uint64_t)n;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE) {
		if (o->nv > 1) { /* the groups' runs merged: sorted, equal values made one */
			qsort(o->v, o->nv, sizeof *o->v, vw_cmp);
			size_t w = 0;
			for (size_t i = 1; i < o->nv; i++) {
				if (o->v[i].v == o->v[w].v)
					o->v[w].n += o->v[i].n;
				else
					o->v[++w] = o->v[i];
			}
			o->nv = w + 1;
		}
		qsort(f, nf, sizeof *f, vfirst_by_index);
		size_t len = 0;
		for (size_t i = 0; i < nf; i++)
			len += strlen(f[i].version) + 1;
		char *p = o->order = tk_xmalloc(len + 1);
		for (size_t i = 0; i < nf; i++) {
			size_t l = strlen(f[i].version);
			memcpy(p, f[i].version, l);
			p[l] = '\n';
			p += l + 1;
		}
		*p = 0;
		qsort(f, nf, sizeof *f, vfirst_by_name);
		o->vers = tk_xmalloc((nf ? nf : 1) * sizeof *o->vers);
		for (size_t i = 0; i < nf; i++)
			o->vers[i] = (tk_store_tally){f[i].version, f[i].n};
		o->nvers = nf;
	} else {
		for (size_t i = 0; i < nf; i++)
			free(f[i].version);
	}
	for (size_t i = 0; i < nf; i++)
		free(f[i].kind);
	free(f);
	if (rc != SQLITE_DONE) {
		sigvals_free(o);
		return fail(s, err, "signature summary query");
	}
	return 0;
}

typedef struct keytally {
	char *key;
	int len;
	uint64_t n;
} keytally;

static int keytally_eq(const void *ctx, uint32_t idx, const void *key)
{
	const keytally *t = &((const keytally *)ctx)[idx], *k = key;
	return t->len == k->len && memcmp(t->key, k->key, (size_t)t->len) == 0;
}

static int keytally_cmp(const void *a, const void *b)
{
	const keytally *x = a, *y = b;
	int c = memcmp(x->key, y->key, (size_t)(x->len < y->len ? x->len : y->len));
	return c ? c : x->len - y->len;
}

/* sig_keys' rows of one what for q's groups of sid: each distinct key once with its summed count,
 * sorted by bytes (as strcmp orders texts, memcmp ids). */
static int sigsum_keys(sq *s, const tk_store_query *q, const char *kinds, sqlite3_int64 sid, int what, keytally **out,
                       size_t *nout, tk_error *err)
{
	char extra[32];
	snprintf(extra, sizeof extra, " AND what = %d", what);
	*out = NULL, *nout = 0;
	sqlite3_stmt *st = sigsum_stmt(s, "key, n", "sig_keys", q, kinds, sid, extra, err);
	if (!st)
		return -1;
	keytally *t = NULL;
	size_t nt = 0, cap = 0;
	tk_hidx idx = {0};
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const void *p = sqlite3_column_blob(st, 0);
		keytally k = {(char *)(p ? p : ""), sqlite3_column_bytes(st, 0), 0};
		uint64_t h = tk_hash_bytes(k.key, (size_t)k.len, 0);
		uint32_t at = tk_hidx_find(&idx, h, keytally_eq, t, &k);
		if (at == UINT32_MAX) {
			TK_GROW(t, cap, nt + 1);
			t[nt].key = tk_xmalloc((size_t)k.len + 1);
			memcpy(t[nt].key, k.key, (size_t)k.len);
			t[nt].key[k.len] = 0;
			t[nt].len = k.len, t[nt].n = 0;
			at = (uint32_t)nt++;
			tk_hidx_insert(&idx, h, at);
		}
		t[at].n += (uint64_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	tk_hidx_free(&idx);
	if (rc != SQLITE_DONE) {
		for (size_t i = 0; i < nt; i++)
			free(t[i].key);
		free(t);
		return fail(s, err, "signature summary query");
	}
	if (nt > 1)
		qsort(t, nt, sizeof *t, keytally_cmp);
	*out = t, *nout = nt;
	return 0;
}

static void keytally_free(keytally *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(t[i].key);
	free(t);
}

static char *hex_of(const char *p, int len)
{
	char *h = tk_xmalloc(2 * (size_t)len + 1);
	for (int b = 0; b < len; b++)
		snprintf(h + 2 * b, 3, "%02x", (unsigned char)p[b]);
	h[2 * len] = 0;
	return h;
}

/* A top list's entry of signature sid from the summaries (what sig_sum sums from its rows): sessions,
 * P50/P95, the least id, the versions in reports_sig's order; and how many reports into *rows. */
static int sigsum_hang(sq *s, const tk_store_query *q, const char *kinds, sqlite3_int64 sid, tk_store_hang *x,
                       uint64_t *rows, char **versions, tk_error *err)
{
	sigvals v;
	keytally *ses = NULL, *ex = NULL;
	size_t nses = 0, nex = 0;
	if (sigsum_values(s, q, kinds, sid, &v, err))
		return -1;
	if (sigsum_keys(s, q, kinds, sid, 1, &ses, &nses, err) || sigsum_keys(s, q, kinds, sid, 3, &ex, &nex, err)) {
		keytally_free(ses, nses);
		sigvals_free(&v);
		return -1;
	}
	if (v.count) {
		tk_store_group g;
		vw_summarise(v.v, v.nv, &g);
		x->p50 = g.q[0];
		x->p95 = g.q[2];
	}
	x->sessions = nses;
	if (rows)
		*rows = v.count;
	x->example = nex ? hex_of(ex[0].key, ex[0].len) : tk_xstrdup("");
	if (versions)
		*versions = v.order, v.order = NULL;
	keytally_free(ses, nses);
	keytally_free(ex, nex);
	sigvals_free(&v);
	return 0;
}

/* tk_store_ops.sig_detail from the summaries (q's filters app and version at most, examples within
 * SIGSUM_EX). */
static int sq_sig_detail(void *h, const tk_store_query *q, const char *kinds, size_t max_examples,
                         tk_store_signature_info *out, tk_error *err)
{
	sq *s = h;
	if (!q->signature || max_examples > SIGSUM_EX || !sigsum_fit(q) || !sigsum_ready(s))
		return 1;
	sqlite3_int64 sid;
	int k = sid_of(s, q->signature, &sid, err);
	if (k < 0)
		return -1;
	sigvals v = {0};
	keytally *dev = NULL, *ses = NULL, *ex = NULL;
	size_t ndev = 0, nses = 0, nex = 0;
	if (k == 0 &&
	    (sigsum_values(s, q, kinds, sid, &v, err) || sigsum_keys(s, q, kinds, sid, 0, &dev, &ndev, err) ||
	     sigsum_keys(s, q, kinds, sid, 1, &ses, &nses, err) || sigsum_keys(s, q, kinds, sid, 3, &ex, &nex, err))) {
		sigvals_free(&v);
		keytally_free(dev, ndev);
		keytally_free(ses, nses);
		return -1;
	}
	out->count = v.count;
	out->sessions = nses;
	out->versions = v.vers ? v.vers : tk_xmalloc(sizeof *out->versions);
	out->nversions = v.nvers;
	v.vers = NULL, v.nvers = 0;
	out->devices = tk_xmalloc((ndev ? ndev : 1) * sizeof *out->devices);
	for (size_t i = 0; i < ndev; i++)
		out->devices[i] = (tk_store_tally){dev[i].key, dev[i].n};
	out->ndevices = ndev;
	free(dev);
	out->durations = tk_xmalloc((v.count ? v.count : 1) * sizeof *out->durations);
	size_t at = 0;
	for (size_t i = 0; i < v.nv; i++)
		for (uint64_t r = 0; r < v.v[i].n; r++)
			out->durations[at++] = v.v[i].v;
	out->nexamples = nex < max_examples ? nex : max_examples;
	out->examples = tk_xmalloc((out->nexamples ? out->nexamples : 1) * sizeof *out->examples);
	for (size_t i = 0; i < out->nexamples; i++)
		out->examples[i] = hex_of(ex[i].key, ex[i].len);
	keytally_free(ses, nses);
	keytally_free(ex, nex);
	sigvals_free(&v);
	return 0;
}

/* tk_store_ops.sigs_values: each signature's (duration, count) lines from sig_values where the
 * summaries hold q, else its rows (sq_sig_rows) one by one. */
static int sq_sig_rows(void *h, const tk_store_query *q, const char *kinds, tk_store_sigrow **rows, size_t *n,
                       tk_error *err);
static int sq_sigs_values(void *h, const tk_store_query *q, const char *kinds, char *const *sigs, size_t n,
                          int (*row)(void *ctx, size_t i, double v, uint64_t count), void *ctx, tk_error *err)
{
	sq *s = h;
	int sum = sigsum_fit(q) && sigsum_ready(s);
	if (!sum && (q->since > 0 || q->until > 0)) { /* a date range: from the summaries by day and hour */
		int k = range_sigs_values(s, q, kinds, sigs, n, row, ctx, err);
		if (k <= 0)
			return k;
	}
	for (size_t i = 0; i < n; i++) {
		tk_store_query one = *q;
		one.signature = sigs[i];
		if (sum) {
			sqlite3_int64 sid;
			int k = sid_of(s, sigs[i], &sid, err);
			if (k < 0)
				return -1;
			if (k)
				continue;
			sqlite3_stmt *st = sigsum_stmt(s, "value, n", "sig_values", &one, kinds, sid, "", err);
			if (!st)
				return -1;
			int rc, bad = 0;
			while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW)
				bad = row(ctx, i, sqlite3_column_double(st, 0),
				          (uint64_t)sqlite3_column_int64(st, 1)) != 0;
			sqlite3_finalize(st);
			if (bad)
				return tk_error_set(err, "signatures' durations: out of memory"), -1;
			if (rc != SQLITE_DONE)
				return fail(s, err, "signature summary query");
			continue;
		}
		tk_store_sigrow *r = NULL;
		size_t nr = 0;
		int rc = sq_sig_rows(s, &one, kinds, &r, &nr, err);
		for (size_t k = 0; k < nr; k++) {
			if (!rc && row(ctx, i, r[k].duration, 1))
				rc = tk_error_set(err, "signatures' durations: out of memory");
			free(r[k].id), free(r[k].version), free(r[k].device), free(r[k].session);
		}
		free(r);
		if (rc)
			return -1;
	}
	return 0;
}

static int stack_text(sqlite3_stmt *st, const void *hash, int len, uint64_t count, char ***folded, uint64_t **times,
                      size_t *n, size_t cap[2]);

/* A signature's merged stacks from sig_keys (every report's, max_reports 0): 1 where the summaries do
 * not hold q. */
static int sigsum_stacks(sq *s, const tk_store_query *q, const char *kinds, char ***folded, uint64_t **times, size_t *n,
                         tk_error *err)
{
	if (!q->signature || !sigsum_fit(q) || !sigsum_ready(s))
		return 1;
	sqlite3_int64 sid;
	int k = sid_of(s, q->signature, &sid, err);
	if (k)
		return k < 0 ? -1 : 0;
	keytally *t;
	size_t nt;
	if (sigsum_keys(s, q, kinds, sid, 2, &t, &nt, err))
		return -1;
	sqlite3_stmt *st = NULL;
	if (nt && sqlite3_prepare_v2(s->db, "SELECT folded FROM stacks WHERE hash = ?", -1, &st, NULL) != SQLITE_OK) {
		keytally_free(t, nt);
		return fail(s, err, "signature stacks query");
	}
	size_t cap[2] = {0, 0};
	int rc = SQLITE_DONE;
	for (size_t i = 0; i < nt && rc == SQLITE_DONE; i++)
		rc = stack_text(st, t[i].key, t[i].len, t[i].n, folded, times, n, cap);
	sqlite3_finalize(st);
	keytally_free(t, nt);
	return rc == SQLITE_DONE ? 0 : fail(s, err, "signature stacks query");
}

/* Top signatures of q (filters sigsum_fit holds) from the summaries: each signature's count under q
 * from sig_groups, the first limit by count and signature (as hang_most_first orders), each summed by
 * sigsum_hang. 1 where the summaries do not hold q. */
static int top_from_sigsum(sq *s, const tk_store_query *q, const char *kinds, size_t limit, tk_store_hang **out,
                           size_t *n, tk_error *err)
{
	if (q->signature || !sigsum_fit(q) || !sigsum_ready(s))
		return 1;
	char *sql = sqlite3_mprintf(
	    "SELECT g.sid, h.signature, sum(g.n) AS c FROM sig_groups g JOIN hang_sigs h ON h.sid = g.sid WHERE g.kind "
	    "IN %s%s%s GROUP BY g.sid HAVING c > 0 ORDER BY c DESC, h.signature LIMIT ?4",
	    kinds, q->where[TK_STORE_APP] ? " AND g.app = ?2" : "",
	    q->where[TK_STORE_VERSION] ? " AND g.version = ?3" : "");
	sqlite3_stmt *st;
	int prc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (prc != SQLITE_OK)
		return fail(s, err, "top-hangs query");
	if (q->where[TK_STORE_APP])
		sqlite3_bind_text(st, 2, q->where[TK_STORE_APP], -1, SQLITE_STATIC);
	if (q->where[TK_STORE_VERSION])
		sqlite3_bind_text(st, 3, q->where[TK_STORE_VERSION], -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)(limit < INT64_MAX ? limit : INT64_MAX));
	size_t cap = 0;
	int rc, slot = sigc_get(s, q, kinds, 1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		tk_store_hang *x = top_entry(s, slot, st, out, n, &cap);
		if (!x)
			continue;
		char *vers = NULL;
		if (sigsum_hang(s, q, kinds, sqlite3_column_int64(st, 0), x, NULL, &vers, err)) {
			rc = -1;
			break;
		}
		sigc_put(s, slot, x, vers);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		tk_store_hangs_free(*out, *n);
		*out = NULL;
		*n = 0;
		return rc < 0 ? -1 : fail(s, err, "top-hangs query");
	}
	return 0;
}

static int sq_top_hangs(void *h, const tk_store_query *q, size_t limit, tk_store_hang **out, size_t *n, tk_error *err)
{
	sq *s = h;
	int filtered = q->since > 0 || q->until > 0 || q->kind || q->signature; /* the summary table counts hangs */
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		filtered |= q->where[k] != NULL;
	if (!q->signature && sigsum_fit(q)) { /* from the per-signature summaries */
		int k = top_from_sigsum(s, q, tk_store_kinds_sql(q->kind), limit, out, n, err);
		if (k <= 0)
			return k;
	}
	if (!filtered)
		return top_from_summary(s, q, limit, out, n, err);
	if (q->since > 0 || q->until > 0) { /* a date range: from the summaries by day and hour */
		int k = range_top(s, q, tk_store_kinds_sql(q->kind), limit, out, n, err);
		if (k <= 0)
			return k;
	}
	if (!(q->since > 0) && !(q->until > 0) && !q->signature && !q->where[TK_STORE_APP] &&
	    !q->where[TK_STORE_BUILD] && !q->where[TK_STORE_OS])
		return top_by_sig(s, q, tk_store_kinds_sql(q->kind), limit, out, n, err);
	char where[512], sql[2048];
	where_sql(q, tk_store_kinds_sql(q->kind), "duration", where, sizeof where);
	/* a time range holding a large share of the reports (a quarter or more, counted in
	 * reports_kind_time alone): the table read in order on scan_db, not looked up at random row by
	 * row through reports_kind_time (the last 7 days of the 1 M fleet, 960 k hangs: 9.9 s of CPU) */
	sqlite3 *db = s->db;
	if (!q->signature && big_share(s, q, tk_store_kinds_sql(q->kind))) {
		{ /* the filter's rows, kept by signature (its versions read them next) */
			int k = top_from_rows(s, q, tk_store_kinds_sql(q->kind), limit, out, n, err);
			if (k <= 0)
				return k;
			db = scan_db(s);
		}
	}
	snprintf(sql, sizeof sql,
	         "SELECT signature, count(*) AS c, count(DISTINCT session), tk_summary(duration), lower(hex(min(id))) "
	         "FROM reports%s%s GROUP BY signature ORDER BY c DESC, signature LIMIT %zu",
	         db == s->db ? "" : " NOT INDEXED", where, limit);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail_on(s, db, err, "top-hangs query");
	bind_where(st, q);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		TK_GROW(*out, cap, *n + 1);
		tk_store_hang *x = &(*out)[(*n)++];
		memset(x, 0, sizeof *x);
		x->signature = tk_xstrdup((const char *)sqlite3_column_text(st, 0));
		x->count = (uint64_t)sqlite3_column_int64(st, 1);
		x->sessions = (uint64_t)sqlite3_column_int64(st, 2);
		x->p50 = x->p95 = NAN;
		const void *blob = sqlite3_column_blob(st, 3);
		if (blob && sqlite3_column_bytes(st, 3) == (int)((4 + TK_STORE_NQ) * sizeof(double))) {
			tk_store_group g;
			unpack(blob, &g);
			x->p50 = g.q[0];
			x->p95 = g.q[2];
		}
		x->example = tk_xstrdup((const char *)sqlite3_column_text(st, 4));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		tk_store_hangs_free(*out, *n);
		*out = NULL;
		*n = 0;
		return fail_on(s, db, err, "top-hangs query");
	}
	return 0;
}

static int sq_count(void *h, uint64_t *n, tk_error *err)
{
	sq *s = h;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM reports", -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "count");
	*n = sqlite3_step(st) == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return 0;
}

static int64_t db_bytes(sq *s)
{
	sqlite3_stmt *st;
	int64_t n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size", -1, &st,
	                       NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* SQLite keeps each report once by its unique index: compacting is the engine's own upkeep. */
static int sq_compact(void *h, tk_store_compact_result *r, tk_error *err)
{
	sq *s = h;
	r->bytes_before = db_bytes(s);
	if (sqlite3_exec(s->db, "ANALYZE; VACUUM; PRAGMA wal_checkpoint(TRUNCATE);", NULL, NULL, NULL) != SQLITE_OK)
		return fail(s, err, "compact");
	/* VACUUM may have renumbered the reports' rowids: the signature summaries summed again */
	if (exec(s, "BEGIN IMMEDIATE", err))
		return -1;
	if (migrate_10_11(s, err) || migrate_11_12(s, err) || exec(s, "COMMIT", err)) {
		exec(s, "ROLLBACK", NULL);
		return -1;
	}
	r->bytes_after = db_bytes(s);
	return 0;
}

/* ---- stacks, signatures, overview ---- */

static char *col_dup(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	return tk_xstrdup(t ? t : "");
}

static double col_num(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static int sq_report_get(void *h, const char *id, tk_store_report *out, tk_error *err)
{
	sq *s = h;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT kind, app, version, build, device, os, session, rkey, thread, signature, time, "
	                       "duration, avg_cpu, samples, (SELECT st.folded FROM stacks st WHERE st.hash = "
	                       "reports.stack) FROM reports WHERE id = ?",
	                       -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "report query");
	unsigned char bid[32];
	hex_id(id, bid);
	sqlite3_bind_blob(st, 1, bid, sizeof bid, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		snprintf(out->id, sizeof out->id, "%s", id);
		out->kind = col_dup(st, 0);
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			out->keys[k] = col_dup(st, 1 + k);
		out->rkey = col_dup(st, 7);
		out->thread = col_dup(st, 8);
		out->signature = col_dup(st, 9);
		out->time = col_num(st, 10);
		out->duration = col_num(st, 11);
		out->avg_cpu = col_num(st, 12);
		out->samples = (uint64_t)sqlite3_column_int64(st, 13);
		out->folded = col_dup(st, 14);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? 1 : fail(s, err, "report query");
}

/* A distinct stack of sig_stacks_ids: its key in stacks, and how many of the reports hold it. */
typedef struct stk_tally {
	unsigned char hash[32];
	int len;
	uint64_t n;
} stk_tally;

typedef struct stk_key {
	const void *p;
	int len;
} stk_key;

static int tally_eq(const void *ctx, uint32_t idx, const void *key)
{
	const stk_tally *t = &((const stk_tally *)ctx)[idx];
	const stk_key *k = key;
	return t->len == k->len && memcmp(t->hash, k->p, (size_t)k->len) == 0;
}

static int stk_cmp(const void *a, const void *b)
{
	const stk_tally *x = a, *y = b;
	int c = memcmp(x->hash, y->hash, (size_t)(x->len < y->len ? x->len : y->len));
	return c ? c : x->len - y->len;
}

/* a report of sig_stacks_ids: its id (the order max_reports keeps) and its row */
typedef struct rep_ref {
	unsigned char id[32];
	sqlite3_int64 row;
} rep_ref;

static int ref_id_cmp(const void *a, const void *b)
{
	return memcmp(((const rep_ref *)a)->id, ((const rep_ref *)b)->id, 32);
}

static int ref_row_cmp(const void *a, const void *b)
{
	sqlite3_int64 x = ((const rep_ref *)a)->row, y = ((const rep_ref *)b)->row;
	return (x > y) - (x < y);
}

/* A distinct stack's text (st: SELECT folded FROM stacks WHERE hash = ?) appended to folded with
 * how many reports hold it (cap: the two arrays' capacities); one missing from stacks is left out, as
 * a join leaves it. SQLITE_DONE or the error. */
static int stack_text(sqlite3_stmt *st, const void *hash, int len, uint64_t count, char ***folded, uint64_t **times,
                      size_t *n, size_t cap[2])
{
	sqlite3_reset(st);
	sqlite3_bind_blob(st, 1, hash, len, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return rc;
	TK_GROW(*folded, cap[0], *n + 1);
	TK_GROW(*times, cap[1], *n + 1);
	(*folded)[*n] = col_dup(st, 0);
	(*times)[(*n)++] = count;
	return SQLITE_DONE;
}

/* sq_sig_stacks by the reports' rows: the ids and rowids read from an index (a signature's from
 * reports_sig), the first max_reports by id kept, then sorted by rowid and each row's stack read in
 * the table's own order — a sequential read of the table when the rows are many (an eighth of all
 * reports or more), else each looked up in order — instead of one random lookup per report (the top
 * signature of the 1 M fleet, 204 k reports: 1.7 s of CPU before, mostly page faults). The same
 * reports, stacks and counts, in the stacks' key order. 1 when an id is not 32 bytes (the query
 * below answers). */
static int sig_stacks_ids(sq *s, const tk_store_query *q, const char *where, size_t max_reports, char ***folded,
                          uint64_t **times, size_t *n, tk_error *err)
{
	sqlite3 *db = sig_covered(q) ? scan_db(s) : s->db, *sdb = scan_db(s);
	sqlite3_stmt *st = prepare_where_on(s, db, sqlite3_mprintf("SELECT id, rowid FROM reports%s", where), q,
	                                    "signature stacks query", err);
	if (!st)
		return -1;
	rep_ref *ids = NULL;
	size_t nid = 0, icap = 0;
	int rc, odd = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(st, 0) != 32 || !sqlite3_column_blob(st, 0)) {
			odd = 1;
			break;
		}
		TK_GROW(ids, icap, nid + 1);
		memcpy(ids[nid].id, sqlite3_column_blob(st, 0), 32);
		ids[nid++].row = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (odd || rc != SQLITE_DONE) {
		free(ids);
		return odd ? 1 : fail_on(s, db, err, "signature stacks query");
	}
	if (max_reports && nid > max_reports) {
		qsort(ids, nid, sizeof *ids, ref_id_cmp);
		nid = max_reports;
	}
	if (nid > 1)
		qsort(ids, nid, sizeof *ids, ref_row_cmp);
	/* all reports, from the session summary: the merge reads every row of the table between the two */
	sqlite3_int64 all = 0;
	if (nid && sqlite3_prepare_v2(sdb, "SELECT sum(n) FROM sessions_sum", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			all = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	int merge = (sqlite3_int64)nid * 8 >= all;
	stk_tally *t = NULL;
	size_t nt = 0, tcap = 0;
	tk_hidx idx = {0};
	rc = SQLITE_DONE;
	if (nid &&
	    sqlite3_prepare_v2(sdb,
	                       merge ? "SELECT rowid, stack FROM reports WHERE rowid >= ?1 AND rowid <= ?2"
	                             : "SELECT rowid, stack FROM reports WHERE rowid = ?1",
	                       -1, &st, NULL) != SQLITE_OK) {
		free(ids);
		return fail_on(s, sdb, err, "signature stacks query");
	}
	size_t at = 0;
	if (nid && merge) {
		sqlite3_bind_int64(st, 1, ids[0].row);
		sqlite3_bind_int64(st, 2, ids[nid - 1].row);
	}
	while (at < nid) {
		if (!merge) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, ids[at].row);
		}
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE && !merge) { /* the row went away since the index was read */
			at++;
			continue;
		}
		if (rc != SQLITE_ROW)
			break;
		sqlite3_int64 row = sqlite3_column_int64(st, 0);
		const void *stk = sqlite3_column_blob(st, 1);
		int sl = sqlite3_column_bytes(st, 1);
		if (merge) { /* both in rowid order: step the reports up to this row */
			while (at < nid && ids[at].row < row)
				at++;
			if (at == nid || ids[at].row != row)
				continue;
		}
		at++;
		if (!stk || sl > 32)
			continue;
		stk_key k = {stk, sl};
		uint64_t hh = tk_hash_bytes(stk, (size_t)sl, 0);
		uint32_t w = tk_hidx_find(&idx, hh, tally_eq, t, &k);
		if (w == UINT32_MAX) {
			TK_GROW(t, tcap, nt + 1);
			memset(&t[nt], 0, sizeof t[nt]);
			memcpy(t[nt].hash, stk, (size_t)sl);
			t[nt].len = sl;
			w = (uint32_t)nt++;
			tk_hidx_insert(&idx, hh, w);
		}
		t[w].n++;
	}
	if (rc == SQLITE_ROW) /* every id found before the rows' end */
		rc = SQLITE_DONE;
	if (nid)
		sqlite3_finalize(st);
	tk_hidx_free(&idx);
	free(ids);
	if (rc != SQLITE_DONE) {
		free(t);
		return fail_on(s, sdb, err, "signature stacks query");
	}
	if (nt > 1)
		qsort(t, nt, sizeof *t, stk_cmp);
	/* each distinct stack's text (a stack missing from stacks is left out, as the join leaves it) */
	if (nt && sqlite3_prepare_v2(s->db, "SELECT folded FROM stacks WHERE hash = ?", -1, &st, NULL) != SQLITE_OK) {
		free(t);
		return fail(s, err, "signature stacks query");
	}
	size_t cap[2] = {0, 0};
	for (size_t i = 0; i < nt && rc == SQLITE_DONE; i++)
		rc = stack_text(st, t[i].hash, t[i].len, t[i].n, folded, times, n, cap);
	if (nt)
		sqlite3_finalize(st);
	free(t);
	return rc == SQLITE_DONE ? 0 : fail(s, err, "signature stacks query");
}

static int sq_sig_stacks(void *h, const tk_store_query *q, const char *kinds, size_t max_reports, char ***folded,
                         uint64_t **times, size_t *n, tk_error *err)
{
	sq *s = h;
	if (!max_reports) { /* every report's: from the per-signature summaries */
		int k = sigsum_stacks(s, q, kinds, folded, times, n, err);
		if (k <= 0)
			return k;
	}
	char where[1024], limit[48] = "";
	where_sql(q, kinds, "duration", where, sizeof where);
	int by_ids = sig_stacks_ids(s, q, where, max_reports, folded, times, n, err);
	if (by_ids <= 0)
		return by_ids;
	if (max_reports)
		snprintf(limit, sizeof limit, " ORDER BY id LIMIT %zu", max_reports);
	char *sql = sqlite3_mprintf("SELECT st.folded, count(*) FROM (SELECT stack FROM reports%s%s) r JOIN stacks st "
	                            "ON st.hash = r.stack GROUP BY r.stack ORDER BY r.stack",
	                            where, limit);
	sqlite3_stmt *st = prepare_where(s, sql, q, "signature stacks query", err);
	if (!st)
		return -1;
	size_t cap = 0, tcap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		TK_GROW(*folded, cap, *n + 1);
		TK_GROW(*times, tcap, *n + 1);
		(*folded)[*n] = col_dup(st, 0);
		(*times)[(*n)++] = (uint64_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : fail(s, err, "signature stacks query");
}

/* ---- a filter's rows by signature ----
 * A comparison of two date ranges asks for the rows of ten or twenty signatures under each range;
 * reports_sig has no time, so each signature's rows were looked up in the table one by one, at
 * random, for all of its reports in any time (28 s of CPU on the 1 M fleet). The second signature
 * asked under the same filter (one the index does not hold: sig_covered) reads every row of the
 * filter once instead, by kind and time, and keeps them by signature while the store is unchanged;
 * that signature and the next are answered from them: the same rows. */
struct trow {
	sqlite3_int64 sid;
	tk_store_sigrow r;
};

#define TCACHE_N 2
typedef struct tcache {
	char *key[TCACHE_N]; /* the filters asked lately: both sides of a comparison (rows of a large
	                      * range take ~200 B each: a 1 M-report range ~200 MB, so two at most) */
	uint64_t token[TCACHE_N], used[TCACHE_N], clock;
	int kept[TCACHE_N]; /* rows read (on its second signature) */
	trow *v[TCACHE_N];
	size_t n[TCACHE_N];
} tcache;

static void trows_free(trow *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].r.id);
		free(v[i].r.version);
		free(v[i].r.device);
		free(v[i].r.session);
	}
	free(v);
}

static void tcache_free(sq *s)
{
	if (!s->tc)
		return;
	for (size_t i = 0; i < TCACHE_N; i++) {
		free(s->tc->key[i]);
		trows_free(s->tc->v[i], s->tc->n[i]);
	}
	free(s->tc);
	s->tc = NULL;
}

static int trow_cmp(const void *a, const void *b)
{
	const trow *x = a, *y = b;
	return (x->sid > y->sid) - (x->sid < y->sid);
}

/* The kept rows of q's filter (not its signature) and kinds, by sid: 0 with them in *v, *nv; 1 when
 * they are not kept and this is the first signature asked of them (unless now: then they are read);
 * -1 on an error. */
static int trows_get(sq *s, const tk_store_query *q, const char *kinds, int now, const trow **vout, size_t *nvout,
                     tk_error *err)
{
	uint64_t token;
	if (sq_changes(s, &token, err))
		return -1;
	tk_store_query kq = *q;
	kq.metric = NULL, kq.kind = kinds, kq.nby = 0, kq.signature = NULL;
	char *key = query_key(&kq);
	if (!s->tc)
		s->tc = tk_xcalloc(1, sizeof *s->tc);
	tcache *c = s->tc;
	int hit;
	size_t slot = cache_slot(c->key, c->token, c->used, TCACHE_N, key, token, &hit), at = hit ? slot : TCACHE_N;
	if (at == TCACHE_N) { /* the first signature of this filter: the caller reads its own rows */
		free(c->key[slot]);
		trows_free(c->v[slot], c->n[slot]);
		c->key[slot] = key, c->token[slot] = token, c->used[slot] = ++c->clock;
		c->kept[slot] = 0, c->v[slot] = NULL, c->n[slot] = 0;
		if (!now)
			return 1;
		at = slot;
	} else {
		free(key);
	}
	c->used[at] = ++c->clock;
	if (!c->kept[at]) {
		char where[1024];
		where_sql(&kq, kinds, "duration", where, sizeof where);
		/* a time range holding a large share of the table: the table read in order on scan_db (one
		 * read per page beats a random lookup per row); else by whatever index the filter has */
		int big = big_share(s, &kq, kinds);
		sqlite3 *db = big ? scan_db(s) : s->db;
		sqlite3_stmt *st = prepare_where_on(
		    s, db,
		    sqlite3_mprintf("SELECT sid, lower(hex(id)), version, device, session, duration FROM reports%s%s",
		                    big ? " NOT INDEXED" : "", where),
		    &kq, "signature query", err);
		if (!st)
			return -1;
		trow *v = NULL;
		size_t nv = 0, cap = 0;
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			TK_GROW(v, cap, nv + 1);
			v[nv++] =
			    (trow){sqlite3_column_int64(st, 0),
			           {col_dup(st, 1), col_dup(st, 2), col_dup(st, 3), col_dup(st, 4), col_num(st, 5)}};
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE) {
			trows_free(v, nv);
			return fail_on(s, db, err, "signature query");
		}
		if (nv > 1)
			qsort(v, nv, sizeof *v, trow_cmp);
		c->kept[at] = 1, c->v[at] = v, c->n[at] = nv;
	}
	*vout = c->v[at], *nvout = c->n[at];
	return 0;
}

/* The kept rows of signature sig among v[0..nv): *lo, *hi; 1 when there is no such signature. */
static int trows_of(sq *s, const trow *v, size_t nv, const char *signature, size_t *first, size_t *end, tk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT sid FROM hang_sigs WHERE signature = ?", -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "signature query");
	sqlite3_bind_text(st, 1, signature, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_int64 sid = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail(s, err, "signature query");
	if (rc == SQLITE_DONE)
		return 1;
	size_t lo = 0, hi = nv; /* the first row of sid */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].sid < sid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	while (lo < nv && v[lo].sid == sid)
		lo++;
	*end = lo;
	return 0;
}

/* 0 with the rows of q (a signature under a filter sig_covered refuses) from the kept ones, 1 when
 * they are not kept (the caller reads them), -1 on an error. */
static int sig_rows_kept(sq *s, const tk_store_query *q, const char *kinds, tk_store_sigrow **rows, size_t *n,
                         tk_error *err)
{
	const trow *v;
	size_t nv, lo, hi;
	int k = trows_get(s, q, kinds, 0, &v, &nv, err);
	if (k)
		return k;
	k = trows_of(s, v, nv, q->signature, &lo, &hi, err);
	if (k)
		return k < 0 ? -1 : 0; /* no such signature: no rows */
	size_t cap = 0;
	for (size_t i = lo; i < hi; i++) {
		TK_GROW(*rows, cap, *n + 1);
		const tk_store_sigrow *r = &v[i].r;
		(*rows)[(*n)++] = (tk_store_sigrow){tk_xstrdup(r->id), tk_xstrdup(r->version), tk_xstrdup(r->device),
		                                    tk_xstrdup(r->session), r->duration};
	}
	return 0;
}

/* The top signatures of a filter from its kept rows (trows_get), summed per signature as the GROUP BY
 * of sq_top_hangs sums them: count, distinct sessions, P50/P95 of the sorted durations, the least id
 * (lowercase hex of ids of one length orders as the ids do). 1 when a row has no signature row. */
static int top_from_rows(sq *s, const tk_store_query *q, const char *kinds, size_t limit, tk_store_hang **out,
                         size_t *n, tk_error *err)
{
	const trow *v;
	size_t nv;
	if (trows_get(s, q, kinds, 1, &v, &nv, err))
		return -1;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT signature FROM hang_sigs WHERE sid = ?", -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "top-hangs query");
	size_t cap = 0, dcap = 0, scap = 0;
	double *d = NULL;
	const char **ses = NULL;
	int rc = 0;
	for (size_t i = 0; i < nv && !rc;) {
		size_t j = i, nd = 0, nses = 0;
		tk_hidx idx = {0};
		const char *least = NULL;
		for (; j < nv && v[j].sid == v[i].sid; j++) {
			const tk_store_sigrow *r = &v[j].r;
			TK_GROW(d, dcap, nd + 1);
			d[nd++] = r->duration;
			uint64_t hh = tk_hash_bytes(r->session, strlen(r->session), 0);
			if (tk_hidx_find(&idx, hh, str_eq, ses, r->session) == UINT32_MAX) {
				TK_GROW(ses, scap, nses + 1);
				ses[nses] = r->session;
				tk_hidx_insert(&idx, hh, (uint32_t)nses++);
			}
			if (least && strlen(r->id) != strlen(least))
				rc = 1; /* ids of several lengths: the query orders them */
			else if (!least || strcmp(r->id, least) < 0)
				least = r->id;
		}
		tk_hidx_free(&idx);
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, v[i].sid);
		if (!rc && sqlite3_step(st) != SQLITE_ROW)
			rc = 1;
		if (rc)
			break;
		qsort(d, nd, sizeof *d, cmp_double);
		tk_store_group g;
		tk_store_summarise(d, nd, &g);
		TK_GROW(*out, cap, *n + 1);
		(*out)[(*n)++] = (tk_store_hang){.signature = col_dup(st, 0),
		                                 .count = nd,
		                                 .sessions = nses,
		                                 .p50 = g.q[0],
		                                 .p95 = g.q[2],
		                                 .example = tk_xstrdup(least)};
		i = j;
	}
	sqlite3_finalize(st);
	free(d);
	free(ses);
	if (rc) {
		tk_store_hangs_free(*out, *n);
		*out = NULL;
		*n = 0;
		return 1;
	}
	if (*n > 1)
		qsort(*out, *n, sizeof **out, hang_most_first);
	for (size_t i = limit; i < *n; i++) {
		free((*out)[i].signature);
		free((*out)[i].example);
	}
	if (*n > limit)
		*n = limit;
	return 0;
}

static int sq_sig_rows(void *h, const tk_store_query *q, const char *kinds, tk_store_sigrow **rows, size_t *n,
                       tk_error *err)
{
	sq *s = h;
	if (q->signature && !sig_covered(q)) {
		int k = sig_rows_kept(s, q, kinds, rows, n, err);
		if (k <= 0)
			return k;
	}
	char where[1024];
	where_sql(q, kinds, "duration", where, sizeof where);
	char *sql = sqlite3_mprintf("SELECT lower(hex(id)), version, device, session, duration FROM reports%s", where);
	sqlite3 *db = sig_covered(q) ? scan_db(s) : s->db;
	sqlite3_stmt *st = prepare_where_on(s, db, sql, q, "signature query", err);
	if (!st)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		TK_GROW(*rows, cap, *n + 1);
		(*rows)[(*n)++] =
		    (tk_store_sigrow){col_dup(st, 0), col_dup(st, 1), col_dup(st, 2), col_dup(st, 3), col_num(st, 4)};
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : fail_on(s, db, err, "signature query");
}

/* tk_store_distribution's rows (tk_store_ops.values). */
static int sq_values(void *h, const tk_store_query *q, const char *kinds, const char *col, int by_version,
                     int (*row)(void *ctx, const char *version, double v), void *ctx, tk_error *err)
{
	sq *s = h;
	if (!q->signature) { /* from the runs, merged per version or all (the same rows, in that order) */
		const vrun *r;
		size_t nr;
		if (vruns_get(s, q, kinds, col, &r, &nr, err))
			return -1;
		const int by = TK_STORE_VERSION;
		vval_ctx c = {by_version, row, ctx};
		if (vruns_groups(r, nr, &by, by_version ? 1 : 0, vval_each, &c))
			return tk_error_set(err, "values query: out of memory"), -1;
		return 0;
	}
	char where[1024];
	where_sql(q, kinds, col, where, sizeof where);
	char *sql = sqlite3_mprintf("SELECT %s, %s FROM reports%s ORDER BY %s%s", by_version ? "version" : "''", col,
	                            where, by_version ? "version, " : "", col);
	sqlite3_stmt *st = prepare_where(s, sql, q, "values query", err);
	if (!st)
		return -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_text(st, 0);
		if (row(ctx, v ? (const char *)v : "", sqlite3_column_double(st, 1))) {
			sqlite3_finalize(st);
			return tk_error_set(err, "values query: out of memory"), -1;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : fail(s, err, "values query");
}

static int sq_sig_versions(void *h, const tk_store_query *q, const char *kinds, char *const *sigs, size_t n,
                           char **versions, tk_error *err)
{
	sq *s = h;
	int slot = sigc_get(s, q, kinds, 0); /* the top list just read them */
	const trow *tv = NULL;               /* or a filter the index does not hold: its rows kept */
	size_t ntv = 0;
	int sum = sigsum_fit(q) && sigsum_ready(s); /* or the per-signature summaries */
	if (!sum && slot < 0 && (q->since > 0 || q->until > 0)) { /* or those by day and hour */
		int k = range_versions(s, q, kinds, sigs, n, versions, err);
		if (k <= 0)
			return k;
	}
	if (!sum && !q->signature && !sig_covered(q) && n > 1 && trows_get(s, q, kinds, 1, &tv, &ntv, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const sigent *e = q->signature ? NULL : sigc_find(s, slot, sigs[i]);
		if (e) {
			versions[i] = tk_xstrdup(e->versions);
			continue;
		}
		if (sum) { /* from the per-signature summaries, in the order reports_sig has them */
			sqlite3_int64 sid;
			sigvals v;
			int k = sid_of(s, sigs[i], &sid, err);
			if (k < 0 || (k == 0 && sigsum_values(s, q, kinds, sid, &v, err)))
				return -1;
			versions[i] = k ? tk_xstrdup("") : v.order;
			if (!k)
				v.order = NULL, sigvals_free(&v);
			continue;
		}
		size_t lo, hi;
		int k = tv ? trows_of(s, tv, ntv, sigs[i], &lo, &hi, err) : 2;
		if (k < 0)
			return -1;
		if (k < 2) { /* its distinct versions among the kept rows */
			char *v = tk_xstrdup("");
			size_t len = 0;
			for (size_t r = lo; k == 0 && r < hi; r++) {
				const char *t = tv[r].r.version;
				size_t tl = strlen(t), p = 0;
				while (p < len && !(strncmp(v + p, t, tl) == 0 && v[p + tl] == '\n'))
					p += strcspn(v + p, "\n") + 1;
				if (p < len)
					continue;
				v = tk_xrealloc(v, len + tl + 2);
				memcpy(v + len, t, tl);
				len += tl;
				v[len++] = '\n';
				v[len] = 0;
			}
			versions[i] = v;
			continue;
		}
		tk_store_query one = *q;
		one.signature = sigs[i];
		char where[1024];
		where_sql(&one, kinds, "duration", where, sizeof where);
		char *sql = sqlite3_mprintf("SELECT DISTINCT version FROM reports%s", where);
		sqlite3 *db = sig_covered(q) ? scan_db(s) : s->db;
		sqlite3_stmt *st = prepare_where_on(s, db, sql, &one, "versions query", err);
		if (!st)
			return -1;
		size_t len = 0, cap = 0;
		char *v = NULL;
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *t = (const char *)sqlite3_column_text(st, 0);
			size_t tl = t ? strlen(t) : 0;
			TK_GROW(v, cap, len + tl + 2);
			memcpy(v + len, t ? t : "", tl);
			len += tl;
			v[len++] = '\n';
			v[len] = 0;
		}
		sqlite3_finalize(st);
		versions[i] = v ? v : tk_xstrdup("");
		if (rc != SQLITE_DONE)
			return fail_on(s, db, err, "versions query");
	}
	return 0;
}

/* sq_overview from sessions_sum, grouped in C: one read of its rows (in key order, no sort) for both
 * the reports per (group, kind) and the distinct sessions per group, which GROUP BY … ORDER BY did in
 * two statements with a sort of every row each. The same rows out, in the same order: groups by
 * their keys' bytes, a group's kinds by name, then each group with its sessions. */
typedef struct ovkind {
	char *kind;
	uint64_t n;
} ovkind;

typedef struct ovgroup {
	char *key; /* the by values, each NUL-terminated */
	size_t klen;
	char *keys[TK_STORE_NKEYS];
	ovkind *k;
	size_t nk, kcap;
	uint64_t sessions;
} ovgroup;

typedef struct ovscan {
	ovgroup *g;
	size_t n, cap;
	tk_hidx idx;
	/* the distinct (group, session) pairs seen */
	struct ovsess {
		uint32_t g;
		char *session;
	} * s;
	size_t ns, scap;
	tk_hidx sidx;
	size_t nby;
} ovscan;

static int ovgroup_eq(const void *ctx, uint32_t idx, const void *key)
{
	const ovgroup *g = &((const ovscan *)ctx)->g[idx];
	const pkey *k = key;
	return g->klen == k->n && memcmp(g->key, k->p, k->n) == 0;
}

typedef struct ovskey {
	uint32_t g;
	const char *session;
} ovskey;

static int ovsess_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct ovsess *e = &((const ovscan *)ctx)->s[idx];
	const ovskey *k = key;
	return e->g == k->g && strcmp(e->session, k->session) == 0;
}

static int ovgroup_cmp(const void *a, const void *b, void *nby)
{
	const ovgroup *x = a, *y = b;
	for (size_t i = 0; i < *(size_t *)nby; i++) {
		int c = strcmp(x->keys[i], y->keys[i]);
		if (c)
			return c;
	}
	return 0;
}

static int ovkind_cmp(const void *a, const void *b)
{
	return strcmp(((const ovkind *)a)->kind, ((const ovkind *)b)->kind);
}

static int overview_from_sum(sq *s, const tk_store_query *q, tk_store_overview **out, size_t *n, tk_error *err)
{
	char sel[512] = "", where[1024];
	size_t sl = 0;
	for (size_t i = 0; i < q->nby; i++)
		sl += (size_t)snprintf(sel + sl, sizeof sel - sl, "%s, ", tk_store_by_name(q->by[i]));
	where_sql(q, "(kind)", NULL, where, sizeof where);
	char *sql = sqlite3_mprintf("SELECT %skind, session, n FROM sessions_sum%s", sel, where);
	sqlite3 *db = scan_db(s);
	sqlite3_stmt *st = prepare_where_on(s, db, sql, q, "overview query", err);
	if (!st)
		return -1;
	ovscan o = {.nby = q->nby};
	char *key = NULL;
	size_t kcap = 0;
	TK_GROW(key, kcap, 16);
	uint32_t last = UINT32_MAX, lastk = UINT32_MAX;
	int rc;
	int c = (int)q->nby;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t kl = 0;
		for (int i = 0; i < c; i++) {
			const char *t = (const char *)sqlite3_column_text(st, i);
			size_t tl = t ? strlen(t) : 0;
			TK_GROW(key, kcap, kl + tl + 1);
			memcpy(key + kl, t ? t : "", tl);
			key[kl + tl] = 0;
			kl += tl + 1;
		}
		uint32_t at = last;
		if (at == UINT32_MAX || o.g[at].klen != kl || memcmp(o.g[at].key, key, kl) != 0) {
			uint64_t h = tk_hash_bytes(key, kl, 0);
			pkey k = {key, kl};
			at = tk_hidx_find(&o.idx, h, ovgroup_eq, &o, &k);
			if (at == UINT32_MAX) {
				TK_GROW(o.g, o.cap, o.n + 1);
				ovgroup *g = &o.g[o.n];
				memset(g, 0, sizeof *g);
				g->key = tk_xmalloc(kl ? kl : 1);
				memcpy(g->key, key, kl);
				g->klen = kl;
				const char *p = g->key;
				for (size_t i = 0; i < q->nby; i++) {
					g->keys[i] = tk_xstrdup(p);
					p += strlen(p) + 1;
				}
				at = (uint32_t)o.n++;
				tk_hidx_insert(&o.idx, h, at);
			}
			last = at;
			lastk = UINT32_MAX;
		}
		ovgroup *g = &o.g[at];
		const char *kind = (const char *)sqlite3_column_text(st, c);
		const char *session = (const char *)sqlite3_column_text(st, c + 1);
		kind = kind ? kind : "", session = session ? session : "";
		uint32_t ki = lastk;
		if (ki == UINT32_MAX || strcmp(g->k[ki].kind, kind) != 0) {
			for (ki = 0; ki < g->nk && strcmp(g->k[ki].kind, kind) != 0; ki++)
				;
			if (ki == g->nk) {
				TK_GROW(g->k, g->kcap, g->nk + 1);
				g->k[g->nk++] = (ovkind){tk_xstrdup(kind), 0};
			}
			lastk = ki;
		}
		g->k[ki].n += (uint64_t)sqlite3_column_int64(st, c + 2);
		ovskey sk = {at, session};
		uint64_t h = tk_hash_bytes(session, strlen(session), at);
		if (tk_hidx_find(&o.sidx, h, ovsess_eq, &o, &sk) == UINT32_MAX) {
			TK_GROW(o.s, o.scap, o.ns + 1);
			o.s[o.ns].g = at;
			o.s[o.ns].session = tk_xstrdup(session);
			tk_hidx_insert(&o.sidx, h, (uint32_t)o.ns++);
			g->sessions++;
		}
	}
	sqlite3_finalize(st);
	free(key);
	tk_hidx_free(&o.idx);
	tk_hidx_free(&o.sidx);
	for (size_t i = 0; i < o.ns; i++)
		free(o.s[i].session);
	free(o.s);
	if (rc == SQLITE_DONE && o.n) {
		qsort_r(o.g, o.n, sizeof *o.g, ovgroup_cmp, &o.nby);
		size_t cap = 0;
		for (int pass = 0; pass < 2; pass++)
			for (size_t gi = 0; gi < o.n; gi++) {
				ovgroup *g = &o.g[gi];
				if (!pass)
					qsort(g->k, g->nk, sizeof *g->k, ovkind_cmp);
				for (size_t ki = 0; ki < (pass ? 1 : g->nk); ki++) {
					TK_GROW(*out, cap, *n + 1);
					tk_store_overview *r = &(*out)[(*n)++];
					memset(r, 0, sizeof *r);
					for (size_t i = 0; i < q->nby; i++)
						r->keys[i] = tk_xstrdup(g->keys[i]);
					if (pass) {
						r->sessions = g->sessions;
					} else {
						r->kinds = tk_xcalloc(1, sizeof *r->kinds);
						r->nkinds = 1;
						r->kinds[0].value = tk_xstrdup(g->k[ki].kind);
						r->kinds[0].count = g->k[ki].n;
					}
				}
			}
	}
	for (size_t gi = 0; gi < o.n; gi++) {
		for (size_t i = 0; i < q->nby; i++)
			free(o.g[gi].keys[i]);
		for (size_t ki = 0; ki < o.g[gi].nk; ki++)
			free(o.g[gi].k[ki].kind);
		free(o.g[gi].k);
		free(o.g[gi].key);
	}
	free(o.g);
	return rc == SQLITE_DONE ? 0 : fail_on(s, db, err, "overview query");
}

/* Reports per (group, kind), then distinct sessions per group (kinds NULL). */
static int sq_overview(void *h, const tk_store_query *q, tk_store_overview **out, size_t *n, tk_error *err)
{
	sq *s = h;
	char keys[256], sel[1024], where[1024];
	by_lists(q, "time", sel, sizeof sel, keys, sizeof keys);
	where_sql(q, "(kind)", NULL, where, sizeof where);
	/* sessions_sum has every report counted under its session's keys and kind: without a time
	 * (--since, a day or hour bucket) or signature, it gives the same counts and sessions */
	int sum = !(q->since > 0) && !(q->until > 0) && !q->signature;
	for (size_t i = 0; i < q->nby; i++)
		sum &= q->by[i] != TK_STORE_BY_DAY && q->by[i] != TK_STORE_BY_HOUR;
	if (sum)
		return overview_from_sum(s, q, out, n, err);
	size_t cap = 0;
	for (int pass = 0; pass < 2; pass++) {
		char *sql =
		    sqlite3_mprintf("SELECT %s%s%s FROM %s%s GROUP BY %s%s ORDER BY %s%s", sel, q->nby ? ", " : "",
		                    pass  ? "count(DISTINCT session)"
		                    : sum ? "kind, sum(n)"
		                          : "kind, count(*)",
		                    sum ? "sessions_sum" : "reports", where, keys,
		                    pass     ? (q->nby ? "" : "NULL")
		                    : q->nby ? ", kind"
		                             : "kind",
		                    keys,
		                    pass     ? (q->nby ? "" : "NULL")
		                    : q->nby ? ", kind"
		                             : "kind");
		sqlite3 *db = scan_db(s);
		sqlite3_stmt *st = prepare_where_on(s, db, sql, q, "overview query", err);
		if (!st)
			return -1;
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			TK_GROW(*out, cap, *n + 1);
			tk_store_overview *o = &(*out)[(*n)++];
			memset(o, 0, sizeof *o);
			for (size_t i = 0; i < q->nby; i++)
				o->keys[i] = col_dup(st, (int)i);
			int c = (int)q->nby;
			if (pass) {
				o->sessions = (uint64_t)sqlite3_column_int64(st, c);
			} else {
				o->kinds = tk_xcalloc(1, sizeof *o->kinds);
				o->nkinds = 1;
				o->kinds[0].value = col_dup(st, c);
				o->kinds[0].count = (uint64_t)sqlite3_column_int64(st, c + 1);
			}
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return fail_on(s, db, err, "overview query");
	}
	return 0;
}

/* Changes by any connection (data_version) and by this one (total_changes) on this connection:
 * equal tokens, equal data. */
static int sq_changes(void *h, uint64_t *token, tk_error *err)
{
	sq *s = h;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "PRAGMA data_version", -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "data_version");
	int rc = sqlite3_step(st);
	uint64_t dv = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return fail(s, err, "data_version");
	/* the connection too: another store opened later at the same address is not this one */
	*token = s->serial << 48 ^ dv << 32 ^ (uint64_t)sqlite3_total_changes64(s->db);
	return 0;
}

const tk_store_ops tk_store_sqlite = {
    .name = "sqlite",
    .open = sq_open,
    .close = sq_close,
    .put = sq_put,
    .percentiles = sq_percentiles,
    .top_hangs = sq_top_hangs,
    .count = sq_count,
    .put_profiles = sq_put_profiles,
    .compact = sq_compact,
    .put_batches = sq_put_batches,
    .report_get = sq_report_get,
    .sig_stacks = sq_sig_stacks,
    .sig_rows = sq_sig_rows,
    .values = sq_values,
    .sig_versions = sq_sig_versions,
    .overview = sq_overview,
    .changes = sq_changes,
    .limit_memory = sq_limit_memory,
    .sig_detail = sq_sig_detail,
    .sigs_values = sq_sigs_values,
    .sync_later = sq_sync_later,
    .sync = sq_sync,
};
