/* lib/store internals: the backend interface (one backend per file) and what they share. */
#ifndef TK_STORE_INTERNAL_H
#define TK_STORE_INTERNAL_H

#include "tracekit/store.h"

/* One report of a signature (tk_store_signature_detail's input). */
typedef struct tk_store_sigrow {
	char *id, *version, *device, *session;
	double duration;
} tk_store_sigrow;

/* A backend opens its URL (the part after "scheme:") and answers the store calls. */
typedef struct tk_store_ops {
	const char *name;
	void *(*open)(const char *rest, tk_error *err);
	void (*close)(void *h);
	int (*put)(void *h, const tk_report *v, size_t n, size_t *added, tk_error *err);
	int (*percentiles)(void *h, const tk_store_query *q, tk_store_group **out, size_t *n, tk_error *err);
	int (*top_hangs)(void *h, const tk_store_query *q, size_t limit, tk_store_hang **out, size_t *n, tk_error *err);
	int (*count)(void *h, uint64_t *n, tk_error *err);
	/* optional: top_hangs' signatures, counts and examples alone (tk_store_top_counts; else store.c
	 * takes them from top_hangs) */
	int (*top_counts)(void *h, const tk_store_query *q, size_t limit, tk_store_hang **out, size_t *n,
	                  tk_error *err);
	int (*put_profiles)(void *h, const tk_profile_report *v, size_t n, size_t *added, tk_error *err);
	int (*compact)(void *h, tk_store_compact_result *r, tk_error *err);
	/* optional: tk_store_put_batches in one transaction (else one put per batch) */
	int (*put_batches)(void *h, tk_store_batch *b, size_t n, tk_error *err);
	/* stacks and signatures (store.c finishes the answers): tk_store_report_get (0, 1 = none, -1) */
	int (*report_get)(void *h, const char *id, tk_store_report *out, tk_error *err);
	/* the distinct stacks of the reports q selects (kinds, q->signature; duration recorded), the
	 * first max_reports by id (0 = all), each with how many of them hold it */
	int (*sig_stacks)(void *h, const tk_store_query *q, const char *kinds, size_t max_reports, char ***folded,
	                  uint64_t **times, size_t *n, tk_error *err);
	/* the same reports' rows, in any order */
	int (*sig_rows)(void *h, const tk_store_query *q, const char *kinds, tk_store_sigrow **rows, size_t *n,
	                tk_error *err);
	/* the distinct versions of each signature's reports ("\n"-joined, malloc'd, into versions[i]) */
	int (*sig_versions)(void *h, const tk_store_query *q, const char *kinds, char *const *sigs, size_t n,
	                    char **versions, tk_error *err);
	/* tk_store_overview_get: one row per (group, kind) with its reports in kinds[0] (nkinds = 1),
	 * then store.c merges; sessions per group come from a row with kinds = NULL */
	int (*overview)(void *h, const tk_store_query *q, tk_store_overview **out, size_t *n, tk_error *err);
	/* optional: a token that changes whenever the stored data may have (the dashboard's cache) */
	int (*changes)(void *h, uint64_t *token, tk_error *err);
	/* optional: tk_store_distribution's rows, (version, col) of the reports of kinds q selects (col
	 * recorded), ordered by value ("" for every version unless by_version; then by version, then
	 * value); else store.c takes them from sig_rows */
	int (*values)(void *h, const tk_store_query *q, const char *kinds, const char *col, int by_version,
	              int (*row)(void *ctx, const char *version, double v), void *ctx, tk_error *err);
	/* optional, before values: the same values a group at a time, rows(ctx, version, v, n) with
	 * v[0..n) ascending and malloc'd, the callee's to keep or free (a date range's durations already
	 * in memory: handed over, neither copied nor called back one a value); 1 when the backend has no
	 * such answer for q (store.c calls values), -1 with err */
	int (*values_bulk)(void *h, const tk_store_query *q, const char *kinds, const char *col, int by_version,
	                   int (*rows)(void *ctx, const char *version, double *v, size_t n), void *ctx, tk_error *err);
	/* optional: the durations of the reports of each of n signatures among those q selects (kinds;
	 * q->signature unset), in one query across them: row(ctx, i, value, count) per distinct value of
	 * sigs[i] (count reports of it), in any order; else tk_store_signatures_durations calls sig_rows
	 * once per signature */
	int (*sigs_values)(void *h, const tk_store_query *q, const char *kinds, char *const *sigs, size_t n,
	                   int (*row)(void *ctx, size_t i, double v, uint64_t count), void *ctx, tk_error *err);
	/* optional, before sigs_values: the same values a signature at a time, rows(ctx, i, v, nv) with
	 * v[0..nv) ascending and malloc'd, the callee's to keep or free; 1 when the backend has no such
	 * answer for q (store.c calls sigs_values), -1 with err */
	int (*sigs_values_bulk)(void *h, const tk_store_query *q, const char *kinds, char *const *sigs, size_t n,
	                        int (*rows)(void *ctx, size_t i, double *v, size_t nv), void *ctx, tk_error *err);
	/* optional: tk_store_signature_detail from summaries, without the rows: count, sessions, versions
	 * and devices tallied (each sorted by value, strcmp), every duration ascending, the nexamples =
	 * min(count, max_examples) least ids ascending; the rest is left for store.c. 1 when the backend
	 * cannot answer q so (store.c reads sig_rows), -1 with err */
	int (*sig_detail)(void *h, const tk_store_query *q, const char *kinds, size_t max_examples,
	                  tk_store_signature_info *out, tk_error *err);
	/* optional: tk_store_view_begin and tk_store_view_end (else 0: every answer stands alone) */
	int (*view_begin)(void *h, tk_error *err);
	int (*view_end)(void *h, tk_error *err);
	/* optional: after tk_store_ingest stored added new reports (ClickHouse: merge the summaries'
	 * parts when the ingest was a bulk load); best effort, its failure only said in err */
	int (*ingested)(void *h, size_t added, tk_error *err);
	/* optional: tk_store_limit_memory (a bulk writer's small cache) */
	void (*limit_memory)(void *h);
	/* optional: tk_store_sync_later and tk_store_sync (else puts are durable as they return) */
	int (*sync_later)(void *h, tk_error *err);
	int (*sync)(void *h, tk_error *err);
} tk_store_ops;

extern const tk_store_ops tk_store_sqlite;
/* The name of the VFS the SQLite store opens its files with (sqlite_walbuf.c: the WAL's frames
 * written in large pieces), NULL when it could not be registered (then the default VFS). */
const char *tk_sqlite_walbuf_vfs(void);
/* Installs SQLite's allocator with the page caches on huge pages (sqlite_mem.c), if SQLite has not
 * started yet in this process (tk_sqlite_walbuf_vfs calls it first). */
void tk_sqlite_mem_init(void);
extern const tk_store_ops tk_store_clickhouse;

/* After tk_store_ingest stored added new reports: the backend's ingested, if it has one. Best
 * effort: the reports are stored; what it does only speeds up later queries. */
void tk_store_ingested(tk_store *s, size_t added);

/* For the dashboard: each of the n signatures' first and last version (malloc'd; NULL when it has
 * no report) among the reports of q of kind (as tk_store_top_diagnostics names it), in one pass of
 * the backend's sig_versions instead of a top list of every signature. */
int tk_store_sig_first_last(tk_store *s, const tk_store_query *q, const char *kind, char *const *sigs, size_t n,
                            char **first, char **last, tk_error *err);
/* The durations of each of n signatures' reports of kind among q's (the compare page: one backend
 * query for all of them where it has sigs_values): out[i] = the sorted values, count and summary
 * (q[] as tk_store_signature_detail makes them; the rest zero), for tk_store_sigdurs_free. */
typedef struct tk_store_sigdur {
	double *durations;
	size_t count;
	tk_store_group summary;
} tk_store_sigdur;
int tk_store_signatures_durations(tk_store *s, const char *kind, const tk_store_query *q, char *const *sigs, size_t n,
                                  tk_store_sigdur *out, tk_error *err);
void tk_store_sigdurs_free(tk_store_sigdur *d, size_t n);
/* The backend's change token (ops.changes): 0, 1 when the backend has none, or -1 with err. */
int tk_store_changes(tk_store *s, uint64_t *token, tk_error *err);

void tk_report_set_id(tk_report *r);
/* curl_global_init once per process, from whichever thread needs curl first (curl_once.c). */
int tk_store_curl_init(void);
/* snprintf(out, 32, "%.17g", v), the same bytes, faster for the numbers reports hold. */
int tk_store_fmt_g17(double v, char *out);
/* A copy of str owned by the set. */
const char *tk_report_set_keep(tk_report_set *s, const char *str);
/* tk_reports_from_path for a Records file or session directory. */
int tk_reports_from_records_path(const char *path, const tk_report_meta *given, tk_report_set *out, tk_error *err);
/* Every event of *p (read through the reader registry, context threads included) as a report:
 * frames named first (ELF files listed by the reader, then given->name_frames for MTHawkeye
 * sessions; may replace *p), keys from mkeys (meta.json; NULL or "" = unknown), then given, then
 * the event's attributes. Appends to out. Returns 0 or -1 with err. */
int tk_store_event_reports(tk_profile **p, char *const mkeys[TK_STORE_NKEYS], const tk_report_meta *given,
                           tk_report_set *out, tk_error *err);

/* A profile uploaded in a bundle: its bytes (profile), profile.json and the optional meta.json
 * (inputs.c, so bundle.c's framing stays free of the readers for anyone who only needs Records). */
typedef struct tk_bundle_bounds {
	size_t max_inflated, max_stacks;
	double deadline; /* CLOCK_MONOTONIC seconds; 0 = none */
	int over;        /* set when a bound stopped the decoding */
} tk_bundle_bounds;
double tk_store_now(void); /* CLOCK_MONOTONIC, seconds */
int tk_profile_from_bundle(const void *data, size_t n, const char *pjson, size_t pn, const char *meta, size_t mn,
                           const char *name, tk_bundle_bounds *b, const tk_report_meta *given, tk_report_set *out,
                           tk_error *err);

/* A metric: the record kinds it reads (an SQL list) and the column holding its value. */
typedef struct tk_store_metric {
	const char *name, *kinds, *column, *unit;
	int profile; /* 0: reports; 1: profile.weight; 2: fn.self:; 3: fn.total: (arg after the colon) */
} tk_store_metric;
/* A profile metric's function: fn_name/fn_binary (binary NULL = any, first in tk_fntable order). */
typedef struct tk_store_fnsel {
	char *name, *binary;
} tk_store_fnsel;
void tk_store_fnsel_parse(const char *metric, tk_store_fnsel *f);
void tk_store_fnsel_free(tk_store_fnsel *f);
/* Profiles of a query must share one unit, as `tracekit stats` requires of its inputs. */
int tk_store_unit_check(tk_store_group *g, size_t n, const char *umin, const char *umax, tk_error *err);
#define TK_STORE_HANG_KINDS "('hang', 'anr')"
/* hang.rate: the kinds it reads — foreground time (MetricKit metric payloads, the monitor's
 * sessions), a metric payload's estimated hang time, and hangs with exact durations — and the
 * smallest hang it counts (Apple's 250 ms). Both backends sum durations per session in whole
 * microseconds (TK_STORE_RATE_US: x·10^6 + 0.5 truncated), so their sums are exact and equal. */
#define TK_STORE_RATE_KINDS "('foreground', 'hang-time', 'hang', 'anr')"
#define TK_STORE_RATE_MIN_HANG 0.25
int tk_store_is_hang_rate(const tk_store_query *q);
/* The stored kinds (an SQL list) of a top-diagnostics kind (tk_store_query.kind; NULL = hangs:
 * TK_STORE_HANG_KINDS itself), or NULL if unknown. */
const char *tk_store_kinds_sql(const char *kind);
const tk_store_metric *tk_store_metric_find(const char *name);

/* Type 7 between two neighbouring order statistics a ≤ b at fraction delta/den of the way, exactly
 * as tk_quantile7 interpolates (backends that find the order statistics in the engine finish here). */
double tk_store_lerp(double a, double b, uint64_t delta, uint64_t den);
/* Summary of sorted values as tk_store_percentiles reports it (count, mean, min, max, q). */
void tk_store_summarise(const double *sorted, size_t n, tk_store_group *g);

/* ---- stacks (stacks.c) ---- */
/* The folded stacks of event e of p as stored (tk_report.stacks: prefix-coded), malloc'd ("" when it
 * owns no stack). */
char *tk_store_event_folded(const tk_profile *p, tk_event_id e);
/* Stored stacks (prefix-coded, or folded text as stored before) as folded text, malloc'd. */
char *tk_store_stacks_text(const char *stored);
/* The lowercase hex of the first `bytes` bytes of data's SHA-256 (hex holds 2 * bytes + 1); the digest
 * fetched once and a context kept per thread. */
void tk_store_sha256_hex(const void *data, size_t n, char *hex, int bytes);
/* The stacks table's key of a stored text: hex of the first 16 bytes of its SHA-256. */
void tk_store_stacks_hash(const char *folded, char hex[33]);
/* Folded texts merged: every line's stack once, in byte order, with the sum of its counts over the
 * texts, text i counted times[i] times (times may be NULL: once each). Malformed lines are skipped.
 * malloc'd. */
char *tk_store_folded_merge(const char *const *folded, const uint64_t *times, size_t n);

/* Schema version both backends create and migrate to. */
#define TK_STORE_SCHEMA_VERSION 2

#endif
