/*
 * tracekit/store.h — a fleet store of field reports (hang and CPU high-load records from many
 * devices), with percentiles and top hang stacks answered inside the database engine.
 *
 * A store is named by a URL:
 *
 *   sqlite:PATH                   (the default; a plain PATH means the same) one file, created on first
 *                                 use (WAL journal, schema version in PRAGMA user_version, migrations)
 *   clickhouse://HOST:PORT/DB     a ClickHouse server's HTTP interface; DB is created on first use;
 *                                 MergeTree tables partitioned by day, ordered for the fleet queries
 *
 * Both backends hold the same schema (one row per report, docs/store.md), take the same batches and
 * give the same answers. A *report* is one finished record: a hang or a CPU high-load period, with
 * the app, version, build, device model, OS, session and time it came from.
 *
 * Ingest is idempotent: a report's id is the SHA-256 of its content (the record's lines and the
 * metadata), and a report already stored is skipped. A batch (tk_store_put) is one transaction
 * (SQLite) or one INSERT (ClickHouse): it is stored whole or not at all.
 *
 * Percentiles are exact (type 7 of Hyndman & Fan, linear between closest ranks, numpy's and R's
 * default) and computed in the engine: a registered SQL aggregate on SQLite, sorted arrays and
 * index arithmetic in ClickHouse SQL. They equal `tracekit stats` on the same reports bit for bit.
 */
#ifndef TRACEKIT_STORE_H
#define TRACEKIT_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracekit/error.h"
#include "tracekit/profile.h"
#include "tracekit/read.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The descriptive keys of a report, in this order everywhere (columns, --set, --by, --where). */
enum { TK_STORE_APP, TK_STORE_VERSION, TK_STORE_BUILD, TK_STORE_DEVICE, TK_STORE_OS, TK_STORE_SESSION, TK_STORE_NKEYS };
extern const char *const tk_store_key_names[TK_STORE_NKEYS]; /* "app", "version", "build", "device", "os", "session" */
/* Index of a key name (also "app.version" → TK_STORE_VERSION), or -1. */
int tk_store_key_index(const char *name);

typedef struct tk_report {
	char id[65];                      /* hex SHA-256 of the content (tk_report_set_id) */
	const char *kind;                 /* "hang", "cpu-highload", "anr" */
	const char *keys[TK_STORE_NKEYS]; /* "" when unknown, never NULL */
	const char *rkey;                 /* the record's key in its Records file */
	double time;                      /* start, Unix seconds */
	double duration;                  /* seconds; NAN if not recorded */
	double avg_cpu;                   /* percent of one core; NAN if not recorded */
	uint64_t samples;
	const char *thread;    /* "" if none */
	const char *signature; /* stack signature: first app frames, leaf first, ";"-joined */
	/* The record's stacks as folded text: the lines `tracekit collapse --no-thread --event N` writes
	 * for it ("root;…;leaf WEIGHT\n" each), except that a frame without a symbol is named
	 * IMAGE+0xOFFSET as in signatures (the same code is one frame on every device, whatever the
	 * ASLR slide); "" or NULL when it has none. Not part of the id. Stored once per distinct text
	 * (docs/store.md); tk_store_report_get gives it back. Reports read by the store (tk_reports_*)
	 * carry it prefix-coded (docs/store.md: "@prefix-coded" first), ~10x smaller; folded text
	 * given here is stored as it is. */
	const char *stacks;
	/* The store's own readers (tk_reports_*) fill these on the thread that read the report: the
	 * first 16 bytes of the SHA-256 of stacks (its key in the stacks table), valid only while
	 * stacks_hashed == stacks, so that the thread committing a group does not hash every text.
	 * Leave them zero when filling a report by hand. */
	const char *stacks_hashed;
	unsigned char stacks_hash[16];
} tk_report;

typedef struct tk_report_set tk_report_set;

/* Metadata given by the user or the upload (app=…, version=…): fills the keys the input lacks. */
typedef struct tk_report_meta {
	const char *keys[TK_STORE_NKEYS]; /* NULL = not given */
	/* Optional: names the frames of an MTHawkeye record (loaded into *p, frames tagged with their
	 * image's UUID) before its signature is taken, e.g. with tk_symbolicate_profile and dSYMs;
	 * may replace *p. Returns 0 or -1 with err. tk_reports_from_paths runs on one thread when set
	 * (a symbolicator is not shared between threads). */
	int (*name_frames)(void *ctx, tk_profile **p, tk_error *err);
	void *name_frames_ctx;
	/* Optional: reads an Apple report (.ips, .crash, spindump; tracekit/apple_report.h) from in into
	 * p with its frames named, instead of the registry's reader (tk_store_namer_meta sets both). */
	int (*read_report)(void *ctx, tk_input *in, tk_profile *p, tk_error *err);
	void *read_report_ctx;
	/* Optional: an input of many payloads (MetricKit JSON Lines) hands its reports over every few
	 * thousand instead of adding them all to the caller's set, so memory stays bounded by one
	 * payload: flush stores set's reports (on the reading thread; set is freed after it returns).
	 * Returns 0 or -1 with err (the input fails with it). tk_store_ingest sets it. */
	int (*flush)(void *ctx, const tk_report_set *set, tk_error *err);
	void *flush_ctx;
} tk_report_meta;

/* Names frames from dSYMs while reports are made: Apple reports (.ips, .crash, spindump) by the
 * symbolication `tracekit symbolicate` does (tk_apple_report_symbolicate: the caller-frame rule,
 * inlined functions as frames of their own, Swift as atos prints it), and MTHawkeye records by image
 * UUID, so stack signatures carry function names, not addresses. Frames in images without symbols
 * keep what the input says. Safe to share between threads (one naming at a time); s stays the
 * caller's and must outlive the namer. */
typedef struct tk_symbolicator tk_symbolicator;
typedef struct tk_store_namer tk_store_namer;
tk_store_namer *tk_store_namer_new(tk_symbolicator *s);
void tk_store_namer_free(tk_store_namer *n);
/* Point meta's name_frames and read_report at the namer (for tk_reports_from_path, tk_bundle_decode …). */
void tk_store_namer_meta(tk_store_namer *n, tk_report_meta *meta);

/* Parse "app=Foo,version=5.2" into meta (strings point into a copy owned by *owned; free it).
 * Returns 0 or -1 with err naming the bad item. */
int tk_report_meta_parse(tk_report_meta *meta, const char *spec, char **owned, tk_error *err);

/* ---- reports from inputs ---- */

/* One function of a profile: self and total weight in the profile's unit (tk_top: total counted once
 * per sample), as `tracekit stats --metric fn.self:NAME|fn.total:NAME` reads them (tk_fntable). */
typedef struct tk_store_fn {
	const char *name, *binary; /* the symbol (or 0x… address); "" when no binary */
	double self, total;
} tk_store_fn;

/* A profile report: the summary of one profile input (an xctrace export, or anything the readers of
 * tk_read_path take) — its weight, unit and threads, and every function's self and total weight, in
 * tk_fntable order (fn.self:NAME without a binary picks the first function so named, as stats does). */
typedef struct tk_profile_report {
	char id[65];                      /* hex SHA-256 of the input's bytes and keys */
	const char *keys[TK_STORE_NKEYS]; /* from --set; "" when unknown */
	const char *source;               /* the input's name */
	const char *unit;                 /* tk_unit_name: "ns", "cycles", "events", "samples" … */
	double time;                      /* the input's modification time, Unix seconds (0 if unknown) */
	double weight;                    /* tk_profile_weight */
	uint64_t threads;
	tk_store_fn *fns;
	size_t nfns;
} tk_profile_report;

/* The reports of one input, owning their strings. */
struct tk_report_set {
	tk_report *v;
	size_t n, cap;
	size_t live;           /* records skipped because the writer still had them open */
	void *arena;           /* owned strings */
	tk_profile_report *pv; /* profile inputs' summaries */
	size_t pn, pcap;
};

void tk_report_set_free(tk_report_set *s);

/* Frames that make a hang's stack signature (first N app frames). */
#define TK_STORE_SIGNATURE_FRAMES 5

/* Reports of a Records file or session directory (ours or MTHawkeye's), or, for any other file the
 * readers take (an xctrace export …), one profile report (out->pv). The session's meta.json
 * (if any: {"app":…,"version":…,…}) is read, then `given` fills keys still empty; the session key
 * defaults to a hash of the launch time, pid and process. Appends to out. Returns 0 or -1 with err. */
int tk_reports_from_path(const char *path, const tk_report_meta *given, tk_report_set *out, tk_error *err);

/* tk_reports_from_path over n inputs on `threads` threads (parsing is the cost of ingesting):
 * out[i], rc[i] and errs[i] are input i's reports, result (0/-1) and error. */
void tk_reports_from_paths(const char *const *paths, size_t n, const tk_report_meta *given, unsigned threads,
                           tk_report_set *out, int *rc, tk_error *errs);

/* Is path, met as a file inside a directory tree, an input `tracekit ingest` takes from the tree? A
 * file named "records", an xctrace export (*.xml, *.xml.gz), or by content an Apple report (.ips,
 * .crash, spindump) or a MetricKit payload. (Given by name, any file is an input.) */
int tk_store_tree_input(const char *path);

/* The same from bytes: one Records file, an optional meta.json and images.json (either may be NULL). */
int tk_reports_from_bytes(const void *records, size_t n, const void *meta_json, size_t meta_n, const void *images_json,
                          size_t images_n, const char *name, const tk_report_meta *given, tk_report_set *out,
                          tk_error *err);

/* ---- upload bundles (docs/store.md) ----
 * A bundle is gzip'd text: "tracekit-bundle 1\n", then for each file "NAME SIZE\n" + SIZE bytes +
 * "\n", NAME one of records, meta.json, images.json. A gzip'd bare Records file is accepted too. */
int tk_bundle_make(const char *session_dir, const tk_report_meta *given, void **out, size_t *n, tk_error *err);
/* A pack: n sessions' bundles back to back in one gzip'd body (each from its "tracekit-bundle 1" line
 * on, with its own files), which the server decodes and commits as one upload. */
int tk_bundle_make_pack(const char *const *session_dirs, size_t n, const tk_report_meta *given, void **out,
                        size_t *outn, tk_error *err);
/* A bundle of one profile input (an xctrace export, or any file tk_store_is_profile_input accepts):
 * "profile" (the file, gzip'd here unless it already is), "profile.json" ({"name": path,
 * "mtime_sec", "mtime_nsec", "encoding": "gzip" when gzip'd here, else "none"}) and meta.json from
 * given's keys. The server stores the same profile report `tracekit ingest --set … PATH` stores (same
 * id, keys, time, source, weights), reading the profile streamed from the body. */
int tk_bundle_make_profile(const char *path, const tk_report_meta *given, void **out, size_t *n, tk_error *err);
/* Is path a file `tracekit ingest` stores as a profile report (a readable file, not a Records file)? */
int tk_store_is_profile_input(const char *path);
/* Decode a received body (gzip'd) into reports (out->v) or one profile report (out->pv).
 * max_inflated bounds the decompressed bundle, and separately a profile's own inflated bytes (a
 * profile gzip'd inside the gzip'd bundle inflates at most max_inflated twice, never more).
 * Returns 0, or -1 with err (the message is the reason sent back in the 400 reply). */
int tk_bundle_reports(const void *body, size_t n, size_t max_inflated, const char *name, const tk_report_meta *given,
                      tk_report_set *out, tk_error *err);
/* What one upload may cost a server (tk_bundle_decode): a small body can inflate to much, and a
 * profile of many distinct stacks costs ~1.5 KB of model per stack, so each is bounded. */
typedef struct tk_bundle_limits {
	size_t max_inflated; /* as tk_bundle_reports */
	size_t max_stacks;   /* distinct stacks (call-tree nodes) an uploaded profile may build; 0 = no bound */
	double max_seconds;  /* wall time to decode the body; 0 = no bound */
} tk_bundle_limits;
/* tk_bundle_reports under lim. Returns 0; -1 with err for a bad bundle (HTTP 400); 1 with err when it
 * is over a limit (HTTP 413). */
int tk_bundle_decode(const void *body, size_t n, const tk_bundle_limits *lim, const char *name,
                     const tk_report_meta *given, tk_report_set *out, tk_error *err);

/* MetricKit payloads sent as the app has them (payload.jsonRepresentation(): one payload, a JSON
 * array or JSON Lines; gzip'd or not; docs/metrickit.md): their reports, as `tracekit ingest FILE`
 * stores them (same ids, so either path is idempotent with the other). Returns 0; 2 when the body
 * is not MetricKit (decode it with tk_bundle_decode); -1 with err for bad payloads (HTTP 400); 1
 * with err when over lim's stacks or time (HTTP 413). */
int tk_payload_reports(const void *body, size_t n, const tk_bundle_limits *lim, const char *name,
                       const tk_report_meta *given, tk_report_set *out, tk_error *err);

/* ---- the store ---- */

typedef struct tk_store tk_store;

tk_store *tk_store_open(const char *url, tk_error *err);
void tk_store_close(tk_store *s);
const char *tk_store_backend(const tk_store *s); /* "sqlite" or "clickhouse" */
/* For a bulk writer (tracekit ingest): memory bounded whatever the store's size — SQLite's page cache
 * kept to 8 MiB and the store file not mapped (the defaults, for readers: 256 MiB and mmap). */
void tk_store_limit_memory(tk_store *s);

/* Store a batch atomically; reports already present (same id) are skipped. *added (may be NULL)
 * gets the number newly stored. Returns 0 or -1 with err (nothing of the batch stored). */
int tk_store_put(tk_store *s, const tk_report *v, size_t n, size_t *added, tk_error *err);

/* What to select: a metric, optional grouping and filters. */
typedef struct tk_store_query {
	const char *metric; /* "hang.duration", "hang.rate", "cpu.duration", "cpu.average" (reports); "profile.weight",
	                     * "fn.self:NAME", "fn.total:NAME" (profile reports; NAME may be BINARY`SYMBOL) */
	int by[TK_STORE_NKEYS]; /* key indexes to group by, in order */
	size_t nby;
	const char *where[TK_STORE_NKEYS]; /* key = value filters (NULL = none) */
	double since;                      /* only reports with time >= since (Unix s); 0 = all */
	/* tk_store_top_diagnostics: the event kind counted (tk_store_diagnostic_kinds); NULL = hangs */
	const char *kind;
	/* only reports with this stack signature (tk_report.signature); NULL = any. Report metrics only. */
	const char *signature;
	double until; /* only reports with time < until (Unix s); 0 = no end (with since: a date range) */
} tk_store_query;

/* Time buckets tk_store_query.by takes besides the keys ("--by day,version"): the UTC day a report
 * started, "2026-11-20", or its hour, "2026-11-20T13" (the group key text; they sort in time order). */
enum { TK_STORE_BY_DAY = 64, TK_STORE_BY_HOUR = 65 };
/* The name of a by entry: a key name (tk_store_key_names), "day" or "hour". */
const char *tk_store_by_name(int by);

/* Parse "--by" ("version", "app.version", "device,os", "day,version", "hour") and "--where" ("version=5.2,os=iOS 17")
 * and "--since" ("7d", "12h", "30m", or Unix seconds) into q. now = the present, Unix seconds. */
int tk_store_query_by(tk_store_query *q, const char *spec, tk_error *err);
int tk_store_query_where(tk_store_query *q, char *spec, tk_error *err); /* spec is split in place */
int tk_store_query_since(tk_store_query *q, const char *spec, double now, tk_error *err);
/* "--until": the end of a date range (reports that started before it), as --since takes it, or
 * either as a UTC date "2026-11-20" (its midnight) or "2026-11-20T13[:05[:09]]". */
int tk_store_query_until(tk_store_query *q, const char *spec, double now, tk_error *err);

/* The unit a metric is stored and reported in ("s", "%"), "" for profile metrics (their unit is the
 * profiles': tk_store_group.unit), or NULL for an unknown metric. */
const char *tk_store_metric_unit(const char *metric);

#define TK_STORE_NQ 5
extern const double tk_store_quantiles[TK_STORE_NQ]; /* 0.5, 0.9, 0.95, 0.99, 0.999 */

typedef struct tk_store_group {
	char *keys[TK_STORE_NKEYS]; /* values of q->by[i], in that order */
	uint64_t count;
	double mean, min, max, q[TK_STORE_NQ];
	char unit[24]; /* the metric's unit (for profile metrics, the profiles' unit) */
	/* hang.rate: how many of the count sessions have their hang time estimated from a MetricKit
	 * hang-time histogram (bucket midpoints) rather than summed from exact hang durations */
	uint64_t estimated;
} tk_store_group;

/* One group per distinct by-key tuple (one in all when nby = 0 and there are reports; none when
 * nothing matches), sorted by keys. Free with tk_store_groups_free.
 *
 * metric "hang.rate" is Apple's hang rate (Xcode Organizer's): seconds of hangs of at least 250 ms
 * per hour of foreground time, unit "s/h". It is computed per session — the reports sharing all six
 * keys; for MetricKit one metric payload (one device's day) unless the upload names a session — that
 * has foreground time ("foreground" reports: a metric payload's cumulativeForegroundTime, a monitor
 * session's foreground seconds): rate = hang s / foreground h. A session's hang seconds are its
 * metric payloads' histogrammedAppHangTime estimate ("hang-time" reports: buckets ≥ 250 ms at their
 * midpoints, a straddling bucket's part above 250 ms spread evenly) when it has one, otherwise the
 * sum of its hangs ≥ 250 ms with exact durations (the monitor's hangs, MetricKit hang diagnostics).
 * Durations are summed per session in whole microseconds. The group's count = its sessions with
 * foreground time, q[] = percentiles (type 7) of their rates (P50/P90 across devices), min/max the
 * extreme rates, mean = the pooled rate Σ hang s / Σ foreground h, estimated = the sessions whose
 * hang time came from a histogram. Hangs in sessions without foreground time are not counted. */
int tk_store_percentiles(tk_store *s, const tk_store_query *q, tk_store_group **out, size_t *n, tk_error *err);
void tk_store_groups_free(tk_store_group *g, size_t n);

typedef struct tk_store_hang {
	char *signature;
	uint64_t count, sessions;
	double p50, p95; /* duration, seconds */
	char *example;   /* id of one report */
	/* the lowest and highest version (tk_store_version_cmp) among the signature's selected reports:
	 * a first version that is the newest of the fleet marks a stack new in it (a regression) */
	char *first_version, *last_version;
} tk_store_hang;

/* Hangs grouped by stack signature, most frequent first (ties by signature), at most limit. */
int tk_store_top_hangs(tk_store *s, const tk_store_query *q, size_t limit, tk_store_hang **out, size_t *n,
                       tk_error *err);
void tk_store_hangs_free(tk_store_hang *h, size_t n);

/* Any kind of event report grouped by stack signature, as tk_store_top_hangs does for hangs (whose
 * answers it gives for "hang"): kind is "hang" (hangs and ANRs), "cpu" (CPU high-load periods and
 * CPU-limit exceptions), "cpu-highload", "cpu-exception", "disk" or "disk-write", "crash", "launch",
 * "marker". Reports are stored under their event's kind (tk_event_kind_name; Records keep "hang",
 * "cpu-highload", "anr"), so any reader's events are counted here with no change to the store.
 * p50/p95 are of the duration, seconds. An unknown kind is an error. */
int tk_store_top_diagnostics(tk_store *s, const char *kind, const tk_store_query *q, size_t limit, tk_store_hang **out,
                             size_t *n, tk_error *err);
/* The same top list with only what orders it: signature, count and example, as
 * tk_store_top_diagnostics gives them for the same arguments; sessions, p50 and p95 are 0 and the
 * versions NULL. For a view that shows counts alone (the dashboard's comparison, which gets each
 * side's durations per signature itself): on ClickHouse it is one query where the full list takes
 * four, and it does not read the signatures' session sets. */
int tk_store_top_counts(tk_store *s, const char *kind, const tk_store_query *q, size_t limit, tk_store_hang **out,
                        size_t *n, tk_error *err);
/* The kinds tk_store_top_diagnostics takes, for --help: "hang|cpu|disk|crash|launch|…". */
const char *tk_store_diagnostic_kinds(void);

/* ---- one report, one signature: what a fleet dashboard opens (docs/store.md "Stacks") ---- */

/* Versions in release order: runs of digits compare as numbers ("5.10" after "5.9"), the rest byte
 * by byte. <0, 0, >0 as strcmp. */
int tk_store_version_cmp(const char *a, const char *b);

/* A stored report: its metadata and its stacks. */
typedef struct tk_store_report {
	char id[65];
	char *kind, *keys[TK_STORE_NKEYS], *rkey, *thread, *signature;
	double time, duration, avg_cpu; /* NAN when not recorded */
	uint64_t samples;
	char *folded; /* its stacks as folded text (tk_report.stacks); "" when none were stored */
} tk_store_report;

/* The report with this id (64 hex digits, as top-hangs' example). Returns 0 (out filled; free it
 * with tk_store_report_free), 1 when the store has no such report, -1 with err. */
int tk_store_report_get(tk_store *s, const char *id, tk_store_report *out, tk_error *err);
void tk_store_report_free(tk_store_report *r);

/* A signature's aggregated flame graph: the stacks (tk_report.stacks) of every report of kind (as
 * tk_store_top_diagnostics: "hang", "cpu" …) with this signature that q selects (its where, since;
 * the reports top-hangs counts for it), merged: each distinct stack line once, in byte order, with
 * its counts summed. max_reports > 0 takes only the first max_reports of those reports by id.
 * *folded (malloc'd, "" when none) and *n its length. Returns 0 or -1 with err. */
int tk_store_signature_folded(tk_store *s, const char *kind, const char *signature, const tk_store_query *q,
                              size_t max_reports, char **folded, size_t *n, tk_error *err);

/* A count per value of a key. */
typedef struct tk_store_tally {
	char *value;
	uint64_t count;
} tk_store_tally;

/* What a signature's page shows, over the same reports as tk_store_signature_folded. */
typedef struct tk_store_signature_info {
	uint64_t count, sessions;
	char *first_version, *last_version; /* as tk_store_hang's; NULL when count is 0 */
	tk_store_tally *versions;           /* per version, in tk_store_version_cmp order */
	size_t nversions;
	tk_store_tally *devices; /* per device, most first (ties by name) */
	size_t ndevices;
	double *durations;      /* every report's duration, seconds, ascending (a histogram's input) */
	tk_store_group summary; /* their summary (count, mean, min, max, quantiles; unit "s") */
	char **examples;        /* the first max_examples report ids, ascending */
	size_t nexamples;
} tk_store_signature_info;

int tk_store_signature_detail(tk_store *s, const char *kind, const char *signature, const tk_store_query *q,
                              size_t max_examples, tk_store_signature_info *out, tk_error *err);
void tk_store_signature_info_free(tk_store_signature_info *i);

/* ---- a metric's distribution: histogram and box plot (the dashboard's trends, `stats --db --histogram`) ---- */

/* One group's values of a duration metric and what a box plot draws of them (exact, type 7). */
typedef struct tk_store_dist {
	char *keys[TK_STORE_NKEYS]; /* values of q->by[i] */
	double *values;             /* ascending */
	size_t n;
	double min, p5, p25, p50, p75, p95, max; /* NAN when n = 0 */
	uint64_t *counts;                        /* per histogram bin (nbins) */
} tk_store_dist;

/* The reports' values of q->metric (hang.duration or cpu.duration; the reports tk_store_percentiles
 * counts for it, under q's filters, since and until), one group per version when q->by is "version"
 * (in tk_store_version_cmp order) or one in all (nby = 0; none when nothing matches), counted into
 * nbins bins over the same edges for every group: *edges (nbins + 1, malloc'd) from the least to the
 * greatest value of all groups, spaced evenly, or evenly on a logarithmic scale when every value is
 * positive and the greatest is 10 times the least or more. A bin holds edges[i] <= v < edges[i+1],
 * the last one its upper edge too. Free with tk_store_dists_free. Returns 0 or -1 with err. */
int tk_store_distribution(tk_store *s, const tk_store_query *q, size_t nbins, tk_store_dist **out, size_t *n,
                          double **edges, tk_error *err);
void tk_store_dists_free(tk_store_dist *d, size_t n, double *edges);
/* One JSON object per group: its keys, "metric", "unit", "count", "min", "p5", "p25", "p50", "p75",
 * "p95", "max", "whiskers": "p5-p95", "edges": [...], "counts": [...]. */
int tk_store_dists_write_json(FILE *f, const tk_store_query *q, const tk_store_dist *d, size_t n, const double *edges,
                              size_t nbins, tk_error *err);

/* The fleet overview per group of q->by (keys and time buckets; q->metric and q->kind unused): the
 * distinct sessions that sent any report, and the reports per stored kind. Percentiles per group
 * come from tk_store_percentiles (hang.duration, cpu.duration …) with the same q. */
typedef struct tk_store_overview {
	char *keys[TK_STORE_NKEYS]; /* values of q->by[i] */
	uint64_t sessions, reports;
	tk_store_tally *kinds; /* reports per kind ("hang", "cpu-highload" …), by kind name */
	size_t nkinds;
} tk_store_overview;
/* One row per group, sorted by keys (one in all when nby = 0 and there are reports). */
int tk_store_overview_get(tk_store *s, const tk_store_query *q, tk_store_overview **out, size_t *n, tk_error *err);
void tk_store_overview_free(tk_store_overview *o, size_t n);

/* Store profile reports atomically; those already present (same id) are skipped. */
/* ---- maintenance (`tracekit store compact`, docs/store.md) ---- */
typedef struct tk_store_compact_result {
	uint64_t duplicates; /* ClickHouse: extra copies of reports (what racing ingesters left) removed */
	uint64_t pruned;     /* ClickHouse: ingest batches dropped from tracekit_ingests */
	uint64_t open;       /* ClickHouse: batches still not closed clean afterwards (in flight, or raced
	                      * during the compaction): while > 0 queries read each report once */
	int64_t bytes_before, bytes_after; /* SQLite: the database's size (pages × page size) */
} tk_store_compact_result;
/* ClickHouse: every report stored once (the extra copies racing ingesters left removed, concurrent
 * ingests kept), parts merged, tracekit_ingests pruned to the batches that still matter, so grouped
 * queries no longer pay for reading each report once. SQLite: ANALYZE, VACUUM and a WAL checkpoint.
 * Returns 0 or -1 with err. */
int tk_store_compact(tk_store *s, tk_store_compact_result *r, tk_error *err);

int tk_store_put_profiles(tk_store *s, const tk_profile_report *v, size_t n, size_t *added, tk_error *err);

/* Group commit: several uploads' reports and profiles stored together, each batch's newly stored
 * counts in added / padded. SQLite: one transaction (one fsync) for all, stored whole or not at all;
 * a report in two batches is counted new in the first. ClickHouse: one insert per batch, in order
 * (a failure leaves the earlier batches stored; resending them is harmless). Returns 0 or -1 with err. */
typedef struct tk_store_batch {
	const tk_report *v;
	size_t n;
	const tk_profile_report *pv;
	size_t pn;
	size_t added, padded; /* out: reports and profiles newly stored */
} tk_store_batch;
int tk_store_put_batches(tk_store *s, tk_store_batch *b, size_t n, tk_error *err);
/* Durability apart from the commit, for a group committer that acknowledges what is durable while it
 * stores the next group: after tk_store_sync_later(s), puts return once committed but not yet
 * durable (SQLite: synchronous=NORMAL, the WAL written but not fsync'd, so a crash of the process
 * keeps them and a power loss may not), and tk_store_sync(s) makes every put that returned before
 * it durable (SQLite: one fdatasync of the WAL). tk_store_sync may run on another thread while puts
 * go on, one tk_store_sync at a time. tk_store_sync_later returns 0, 1 when puts stay durable
 * as they return (ClickHouse; SQLite without a WAL file: tk_store_sync does nothing) or -1 with err. */
int tk_store_sync_later(tk_store *s, tk_error *err);
int tk_store_sync(tk_store *s, tk_error *err);

/* ---- ingest: inputs into the store (`tracekit ingest`) ----
 * Every path is an input (a Records file, a session directory of `tracekit monitor` or MTHawkeye, an
 * Apple report, a MetricKit payload, an xctrace export or any file the readers take), or a directory
 * searched recursively in name order for sessions and the files tk_store_tree_input takes. Inputs are
 * read and turned into reports (tk_reports_from_path: read, frames named, signatures, function tables)
 * on `jobs` threads, 2048 at a time, each chunk stored while the next is read; idempotent as
 * tk_store_put. */
typedef struct tk_store_ingest_options {
	const tk_report_meta *meta; /* keys the inputs lack (--set); may be NULL */
	tk_symbolicator *symbols;   /* dSYMs naming Apple reports' and MTHawkeye frames (tk_store_namer); NULL */
	size_t batch;               /* reports per transaction / INSERT; 0 = all of a chunk's */
	unsigned jobs;              /* threads reading inputs; 0 = the CPUs (1 when frames are named) */
	int keep_going;             /* after a bad input, go on with the others */
	/* each bad input (error = 1: counted in bad) or warning (0: a directory holding no input), as
	 * "INPUT: problem"; may be NULL */
	void (*message)(void *ctx, int error, const char *msg);
	/* after each stored batch: inputs read so far, reports stored, seconds since the start; NULL */
	void (*progress)(void *ctx, size_t inputs, size_t reports, double seconds);
	void *ctx;
} tk_store_ingest_options;
typedef struct tk_store_ingest_result {
	size_t inputs;           /* read */
	size_t reports, added;   /* reports stored (new or already there), newly stored */
	size_t live;             /* records skipped because their writer still had them open */
	size_t bad;              /* inputs that could not be read (said through message) */
	size_t profiles, padded; /* profile reports stored, newly stored */
} tk_store_ingest_result;
/* Returns 0 (every input read; r->bad > 0 only with keep_going), 1 (stopped at a bad input) or -1
 * with err (the store failed; batches stored before it stay). r may be NULL. */
int tk_store_ingest(tk_store *s, const char *const *paths, size_t n, const tk_store_ingest_options *o,
                    tk_store_ingest_result *r, tk_error *err);

/* ---- the queries' JSON (`tracekit stats --db --json`, `top-hangs --json`, the dashboard's /api/) ----
 * One object per line. Groups: the group's by-keys (q->by order) then tk_summary_write_json's fields
 * for q->metric. Hangs: {"signature", "count", "sessions", "p50", "p95", "example"}. Every string is
 * JSON-escaped (always valid UTF-8). Return 0 or -1 with err. */
int tk_store_groups_write_json(FILE *f, const tk_store_query *q, const tk_store_group *g, size_t n, tk_error *err);
int tk_store_hangs_write_json(FILE *f, const tk_store_hang *h, size_t n, tk_error *err);

/* Total reports stored (for tests and progress). Returns 0 or -1 with err. */
int tk_store_count(tk_store *s, uint64_t *n, tk_error *err);
/* A group of answers read as one view (a dashboard page: a dozen answers). Between
 * tk_store_view_begin and tk_store_view_end, ClickHouse reads its ingest state (whether a batch
 * opened, failed or closed: racing ingesters may store a report twice until a batch closes clean)
 * once at each end instead of around every answer: ~2.5 ms of server CPU an answer. tk_store_view_end
 * returns 1 when that state changed in between (the answers may count a report twice: ask them
 * again outside a view, where each answer is checked on its own), 0 when they stand, -1 with err.
 * SQLite, whose answers each read one transaction, returns 0. A view is one handle's, not nested. */
int tk_store_view_begin(tk_store *s, tk_error *err);
int tk_store_view_end(tk_store *s, tk_error *err);

/* ---- uploading (the device side of `tracekit serve --ingest`) ----
 * POST a bundle of session_dir to url with the bearer token. Retries on connection failure or 5xx
 * with exponential back-off (first_delay_ms doubling, at most max_delay_ms) until max_attempts;
 * a 4xx is final. On the server's acknowledgement (2xx, after commit) writes session_dir/uploaded.
 * Returns 0 (acknowledged), 1 (rejected: 4xx, err holds the server's reason), -1 (gave up). */
typedef struct tk_upload_conn tk_upload_conn;
typedef struct tk_upload_options {
	const char *token;
	unsigned max_attempts;      /* 0 = 8 */
	unsigned first_delay_ms;    /* 0 = 500 */
	unsigned max_delay_ms;      /* 0 = 30000 */
	const tk_report_meta *meta; /* fills what the session's meta.json lacks; may be NULL */
	tk_upload_conn *conn;       /* optional: one thread's connection kept open between its uploads */
} tk_upload_options;
/* A connection for tk_upload_options.conn (HTTP keep-alive: no new TCP connection per upload). One
 * per thread; free it after the thread's last upload. */
tk_upload_conn *tk_upload_conn_new(void);
void tk_upload_conn_free(tk_upload_conn *conn);
int tk_upload_session(const char *url, const char *session_dir, const tk_upload_options *o, tk_error *err);
/* n sessions in one request (tk_bundle_make_pack), each marked uploaded once the server acknowledged
 * the pack. Same return values; on 1 (a 4xx: one bad session, or a server older than packs) send
 * them one by one with tk_upload_session to find which. */
int tk_upload_pack(const char *url, const char *const *session_dirs, size_t n, const tk_upload_options *o,
                   tk_error *err);
/* Send what the monitor library left in session_dir/outbox (finished records as bundles, which its
 * uploader had not got acknowledged before the program ended), oldest first, one POST each with the
 * retries above: an acknowledged bundle is removed, a rejected one (4xx) moved to outbox/rejected/,
 * and sending stops at the first that cannot be delivered (it stays, as do those after it). When
 * the outbox ends empty and nothing was ever rejected, writes session_dir/uploaded as
 * tk_upload_session does. *sent and *left (may be NULL) get the counts. Returns 0 (outbox empty),
 * 1 (some rejected) or -1 (some left, err says why). */
int tk_upload_outbox(const char *url, const char *session_dir, const tk_upload_options *o, size_t *sent, size_t *left,
                     tk_error *err);
/* The same for one profile input (tk_bundle_make_profile); nothing is written beside the file
 * (resending is harmless: the server stores a profile once). Same return values. */
int tk_upload_profile(const char *url, const char *path, const tk_upload_options *o, tk_error *err);

#ifdef __cplusplus
}
#endif
#endif
