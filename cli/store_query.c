/* Queries answered by a fleet store: `tracekit top-hangs` and `tracekit stats --db` (the stats
 * command hands its arguments here when it sees --db). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "tracekit/stats.h"
#include "tracekit/store.h"
#include "util/text.h"

TK_COMMAND(top_hangs, "the stacks behind most hangs in a fleet store: count, sessions, P50/P95 duration")
TK_COMMAND(top_diagnostics, "the stacks behind most events of a kind (hang, cpu, disk, crash, launch) in a fleet store")

enum {
	OPT_DB = 1,
	OPT_WHERE,
	OPT_SINCE,
	OPT_LIMIT,
	OPT_JSON,
	OPT_KIND,
	OPT_SIGNATURE,
	OPT_FOLDED,
	OPT_MAX_REPORTS,
	OPT_DETAIL,
	OPT_EXAMPLES,
	OPT_METRIC,
	OPT_BY,
	OPT_OVERVIEW,
	OPT_STRAY,
	OPT_UNTIL,
	OPT_HISTOGRAM,
};

#define DB_HELP "sqlite:PATH (default sqlite:tracekit.db, or $TRACEKIT_DB) or clickhouse://HOST:PORT/DB"

/* --signature and what it enables (top-hangs, top-diagnostics). */
static const tk_cli_option signature_options[] = {
    TK_OPT_VALUE(OPT_SIGNATURE, "--signature", NULL, "SIG", "only the reports with this stack signature; with it:"),
    TK_OPT_FLAG(OPT_FOLDED, "--folded", NULL,
                "the signature's aggregated flame graph: every stack of its reports merged (folded lines in "
                "byte order, counts summed), for `tracekit flame -`"),
    TK_OPT_VALUE(OPT_MAX_REPORTS, "--max-reports", NULL, "N", "--folded over the first N of its reports by id only"),
    TK_OPT_FLAG(OPT_DETAIL, "--detail", NULL,
                "count, sessions, first/last version, reports per version and per device, the duration "
                "summary and every duration, example report ids (text, or --json)"),
    TK_OPT_VALUE(OPT_EXAMPLES, "--examples", NULL, "N", "--detail lists N example ids (default 5)"),
    TK_OPT_OPERAND(OPT_STRAY, "ARG", NULL), /* none taken: refused as an unknown option, as before */
    TK_OPT_END,
};

static const tk_cli_option top_options[] = {
    TK_OPT_SECTION("options"),
    TK_OPT_VALUE(OPT_DB, "--db", NULL, "URL", DB_HELP),
    TK_OPT_VALUE(OPT_WHERE, "--where", NULL, "K=V,...",
                 "only reports whose keys match (app, version, build, device, os, session)"),
    TK_OPT_VALUE(OPT_SINCE, "--since", NULL, "D",
                 "only hangs that started in the last D (7d, 12h, 30m) or after Unix seconds or UTC date D (2026-11-20)"),
    TK_OPT_VALUE(OPT_UNTIL, "--until", NULL, "D",
                 "only reports that started before D (as --since takes it): with --since, "
                 "a date range"),
    TK_OPT_VALUE(OPT_LIMIT, "--limit", NULL, "N", "at most N signatures (default 10)"),
    TK_OPT_FLAG(OPT_JSON, "--json", NULL,
                "one JSON object per signature (with first_version, last_version: the lowest and highest "
                "version among its reports, versions compared as numbers)"),
    TK_OPT_INCLUDE(signature_options),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_top_hangs = {
    .name = "top-hangs",
    .usage = "tracekit top-hangs [options]",
    .about = "Groups the hangs in a fleet store (see `tracekit ingest`) by stack signature — the first five\n"
             "app frames of the blocked thread at detection, leaf first, symbol names where the ingesting\n"
             "machine could name them, otherwise image+offset — and lists the most frequent: hang count,\n"
             "sessions affected, P50 and P95 duration (exact, type 7) and the id of one example report.\n",
    .options = top_options,
    .flags = TK_CLI_NO_DASHDASH,
    .column = 19,
};

static const tk_cli_option diag_options[] = {
    TK_OPT_SECTION("options"),
    TK_OPT_VALUE(OPT_KIND, "--kind", NULL, "KIND",
                 "hang (hangs, ANRs), cpu (CPU high-load and CPU-limit exceptions), cpu-highload, cpu-exception, "
                 "disk (disk-write limits), crash, launch, marker"),
    TK_OPT_VALUE(OPT_DB, "--db", NULL, "URL", DB_HELP),
    TK_OPT_VALUE(OPT_WHERE, "--where", NULL, "K=V,...",
                 "only reports whose keys match (app, version, build, device, os, session)"),
    TK_OPT_VALUE(OPT_SINCE, "--since", NULL, "D",
                 "only events that started in the last D (7d, 12h, 30m) or after Unix seconds or UTC date D (2026-11-20)"),
    TK_OPT_VALUE(OPT_UNTIL, "--until", NULL, "D",
                 "only reports that started before D (as --since takes it): with --since, "
                 "a date range"),
    TK_OPT_VALUE(OPT_LIMIT, "--limit", NULL, "N", "at most N signatures (default 10)"),
    TK_OPT_FLAG(OPT_JSON, "--json", NULL, "one JSON object per signature (with first_version, last_version)"),
    TK_OPT_INCLUDE(signature_options),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_top_diagnostics = {
    .name = "top-diagnostics",
    .usage = "tracekit top-diagnostics --kind KIND [options]",
    .about =
        "Groups the reports of one kind of event in a fleet store (see `tracekit ingest`: every event of an\n"
        "ingested input is a report, whichever reader read it) by stack signature — the first five app\n"
        "frames, leaf first — and lists the most frequent: count, sessions affected, P50 and P95 duration\n"
        "(exact, type 7) and the id of one example report. `--kind hang` answers what `tracekit top-hangs` "
        "does.\n",
    .options = diag_options,
    .flags = TK_CLI_NO_DASHDASH,
    .column = 19,
};

static const tk_cli_option stats_db_options[] = {
    TK_OPT_SECTION("options"),
    TK_OPT_VALUE(OPT_DB, "--db", NULL, "URL", "sqlite:PATH or clickhouse://HOST:PORT/DB"),
    TK_OPT_VALUE(OPT_METRIC, "--metric", NULL, "M",
                 "hang.duration (default; hangs and ANRs, s), cpu.duration (s), cpu.average (%); hang.rate (s/h: "
                 "Apple's hang rate, s of hangs >= 250 ms per hour of foreground time, per session; mean = the "
                 "pooled rate; docs/store.md) of profile inputs (xctrace exports): profile.weight, fn.self:NAME, "
                 "fn.total:NAME (in the profiles' unit; a function absent from a profile weighs 0 there)"),
    TK_OPT_VALUE(OPT_BY, "--by", NULL, "KEYS",
                 "group by app, version, app.version (= app and version), build, device, os, session, and one "
                 "time bucket: day (\"2026-11-20\") or hour (\"2026-11-20T13\"), the UTC day or hour a report "
                 "started; comma-separated (day,version)"),
    TK_OPT_VALUE(OPT_SIGNATURE, "--signature", NULL, "SIG",
                 "only the reports with this stack signature (as top-hangs shows it)"),
    TK_OPT_FLAG(OPT_OVERVIEW, "--overview", NULL,
                "instead of a metric: per group, the distinct sessions that sent reports and the reports per kind "
                "({keys…, \"sessions\", \"reports\", \"kinds\": {…}})"),
    TK_OPT_VALUE(OPT_WHERE, "--where", NULL, "K=V,...", "only reports whose keys match"),
    TK_OPT_VALUE(OPT_SINCE, "--since", NULL, "D",
                 "only reports that started in the last D (7d, 12h, 30m, 90s) or after Unix seconds or UTC date D (2026-11-20)"),
    TK_OPT_VALUE(OPT_UNTIL, "--until", NULL, "D",
                 "only reports that started before D (as --since takes it): with --since, "
                 "a date range"),
    TK_OPT_VALUE(OPT_HISTOGRAM, "--histogram", NULL, "N",
                 "instead of the summary: hang.duration or cpu.duration's histogram in N bins (the same edges for "
                 "every group; --by version or none) and its box plot (P5, P25, P50, P75, P95; exact)"),
    TK_OPT_FLAG(OPT_JSON, "--json", NULL,
                "one object per group: the group's keys, then `tracekit stats --json`'s fields"),
    TK_OPT_OPERAND(OPT_STRAY, "ARG", NULL),
    TK_OPT_END,
};

/* `tracekit stats --db URL …` (cli/main.c hands stats here when it sees --db; `--help` there prints
 * this, and stats's own help points to it). */
static const tk_cli_command tk_cli_stats_db_command = {
    .name = "stats",
    .usage = "tracekit stats --db URL [--metric M] [--by KEYS] [--where K=V,...] [--since D] [--until D] [--histogram N] [--json]",
    .about = "The summary of `tracekit stats` (count, mean, min, P50, P90, P95, P99, P99.9, max; exact type 7)\n"
             "over the reports in a fleet store (see `tracekit ingest`), computed in the database engine, one\n"
             "row or JSON object per group. The numbers equal `tracekit stats` on the same inputs.\n",
    .options = stats_db_options,
    .flags = TK_CLI_NO_DASHDASH,
    .column = 20,
};

typedef struct qopts {
	const char *db;
	tk_store_query q;
	int json;
	size_t limit;
	char *where;
	int folded, detail, overview;
	size_t max_reports, examples, histogram;
	const char *name;
} qopts;

static int query_option(void *ctx, const tk_cli_option *opt, const char *v, const char *spelling)
{
	qopts *o = ctx;
	const char *name = o->name;
	tk_error err;
	char *end;
	long n;
	switch (opt->id) {
	case OPT_JSON: o->json = 1; return 0;
	case OPT_FOLDED: o->folded = 1; return 0;
	case OPT_DETAIL: o->detail = 1; return 0;
	case OPT_OVERVIEW: o->overview = 1; return 0;
	case OPT_DB: o->db = v; return 0;
	case OPT_KIND: o->q.kind = v; return 0;
	case OPT_METRIC: o->q.metric = v; return 0;
	case OPT_SIGNATURE: o->q.signature = v; return 0;
	case OPT_BY:
		if (tk_store_query_by(&o->q, v, &err))
			return tk_cli_fail("%s: %s", name, err.msg), -1;
		return 0;
	case OPT_WHERE:
		free(o->where);
		o->where = strdup(v);
		if (tk_store_query_where(&o->q, o->where, &err))
			return tk_cli_fail("%s: %s", name, err.msg), -1;
		return 0;
	case OPT_SINCE:
		if (tk_store_query_since(&o->q, v, (double)time(NULL), &err))
			return tk_cli_fail("%s: %s", name, err.msg), -1;
		return 0;
	case OPT_UNTIL:
		if (tk_store_query_until(&o->q, v, (double)time(NULL), &err))
			return tk_cli_fail("%s: %s", name, err.msg), -1;
		return 0;
	case OPT_HISTOGRAM:
		n = strtol(v, &end, 10);
		if (*end || n < 1 || n > 1000)
			return tk_cli_fail("%s: --histogram wants a whole number of bins from 1 to 1000, not '%s'", name, v),
			       -1;
		o->histogram = (size_t)n;
		return 0;
	case OPT_MAX_REPORTS:
	case OPT_EXAMPLES:
		n = strtol(v, &end, 10);
		if (*end || n < 0 || n > 100000000)
			return tk_cli_fail("%s: %s wants a whole number from 0 to 100000000, not '%s'", name,
			                   opt->name, v),
			       -1;
		*(opt->id == OPT_MAX_REPORTS ? &o->max_reports : &o->examples) = (size_t)n;
		return 0;
	case OPT_LIMIT:
		n = strtol(v, &end, 10);
		if (*end || n < 1 || n > 1000000)
			return tk_cli_fail("%s: --limit wants a whole number from 1 to 1000000, not '%s'", name, v), -1;
		o->limit = (size_t)n;
		return 0;
	}
	return tk_cli_usage(name, "unknown option '%s'", spelling), -1;
}

/* The options of one of the commands into o. Returns 0, -1 (the help was printed), 2 (usage) or 1. */
static int parse(int argc, char **argv, qopts *o, const tk_cli_command *c)
{
	const char *db = getenv("TRACEKIT_DB");
	o->db = db && *db ? db : "sqlite:tracekit.db";
	o->limit = 10;
	o->examples = 5;
	o->name = c->name;
	return tk_cli_parse(c, argc, argv, 1, query_option, o, NULL);
}

static void put_num(double v)
{
	char buf[32];
	fputs(tk_stats_fmt_double(v, buf), stdout);
}

static void json_key(const char *k)
{
	tk_json_fput(stdout, k);
	fputs(": ", stdout);
}

static void put_tallies(const char *name, const tk_store_tally *t, size_t n, int json)
{
	if (json) {
		printf(", ");
		json_key(name);
		putchar('{');
		for (size_t i = 0; i < n; i++) {
			if (i)
				fputs(", ", stdout);
			json_key(t[i].value);
			printf("%llu", (unsigned long long)t[i].count);
		}
		putchar('}');
		return;
	}
	printf("%s:\n", name);
	for (size_t i = 0; i < n; i++)
		printf("  %-24s %llu\n", tk_cli_shown(t[i].value), (unsigned long long)t[i].count);
}

/* --signature SIG with --folded (its merged stacks) or --detail. */
static int signature_page(qopts *o, const char *kind, const char *name)
{
	tk_error err;
	tk_store *s = tk_store_open(o->db, &err);
	int rc = 0;
	if (!s) {
		rc = 1;
	} else if (o->folded) {
		char *f = NULL;
		size_t n = 0;
		if (tk_store_signature_folded(s, kind, o->q.signature, &o->q, o->max_reports, &f, &n, &err))
			rc = 1;
		else
			fwrite(f, 1, n, stdout);
		free(f);
	} else {
		tk_store_signature_info in;
		if (tk_store_signature_detail(s, kind, o->q.signature, &o->q, o->examples, &in, &err)) {
			rc = 1;
		} else if (o->json) {
			fputs("{\"signature\": ", stdout);
			tk_json_fput(stdout, o->q.signature);
			printf(", \"kind\": ");
			tk_json_fput(stdout, kind);
			printf(", \"count\": %llu, \"sessions\": %llu, \"first_version\": ",
			       (unsigned long long)in.count, (unsigned long long)in.sessions);
			tk_json_fput(stdout, in.first_version ? in.first_version : "");
			fputs(", \"last_version\": ", stdout);
			tk_json_fput(stdout, in.last_version ? in.last_version : "");
			put_tallies("versions", in.versions, in.nversions, 1);
			put_tallies("devices", in.devices, in.ndevices, 1);
			fputs(", \"duration\": {\"count\": ", stdout);
			printf("%llu, \"mean\": ", (unsigned long long)in.summary.count);
			put_num(in.count ? in.summary.mean : NAN);
			fputs(", \"min\": ", stdout);
			put_num(in.count ? in.summary.min : NAN);
			static const char *const qn[TK_STORE_NQ] = {"p50", "p90", "p95", "p99", "p99.9"};
			for (int k = 0; k < TK_STORE_NQ; k++) {
				printf(", \"%s\": ", qn[k]);
				put_num(in.count ? in.summary.q[k] : NAN);
			}
			fputs(", \"max\": ", stdout);
			put_num(in.count ? in.summary.max : NAN);
			fputs(", \"unit\": \"s\", \"values\": [", stdout);
			for (size_t i = 0; i < in.count; i++) {
				if (i)
					fputs(", ", stdout);
				put_num(in.durations[i]);
			}
			fputs("]}, \"examples\": [", stdout);
			for (size_t i = 0; i < in.nexamples; i++) {
				if (i)
					fputs(", ", stdout);
				tk_json_fput(stdout, in.examples[i]);
			}
			fputs("]}\n", stdout);
		} else {
			printf("signature:  %s\nkind:       %s\nreports:    %llu\nsessions:   %llu\nversions:   %s .. "
			       "%s\n",
			       tk_cli_shown(o->q.signature), tk_cli_shown(kind), (unsigned long long)in.count,
			       (unsigned long long)in.sessions, tk_cli_shown(in.first_version ? in.first_version : ""),
			       tk_cli_shown(in.last_version ? in.last_version : ""));
			if (in.count)
				printf("duration:   P50 %.3f s, P90 %.3f s, P95 %.3f s, P99 %.3f s, max %.3f s\n",
				       in.summary.q[0], in.summary.q[1], in.summary.q[2], in.summary.q[3],
				       in.summary.max);
			put_tallies("per version", in.versions, in.nversions, 0);
			put_tallies("per device", in.devices, in.ndevices, 0);
			printf("examples:\n");
			for (size_t i = 0; i < in.nexamples; i++)
				printf("  %s\n", tk_cli_shown(in.examples[i]));
		}
		if (!rc)
			tk_store_signature_info_free(&in);
	}
	tk_store_close(s);
	free(o->where);
	return rc ? tk_cli_fail("%s: %s", name, err.msg) : 0;
}

/* top-hangs, and top-diagnostics --kind K (the same answer for K = hang). */
static int top(int argc, char **argv, const char *name)
{
	int diag = strcmp(name, "top-diagnostics") == 0;
	qopts o = {0};
	int rc = parse(argc, argv, &o, diag ? &tk_cli_command_top_diagnostics : &tk_cli_command_top_hangs);
	if (rc < 0)
		return 0;
	if (!rc && diag && !o.q.kind)
		rc = tk_cli_usage(name, "--kind is required (%s)", tk_store_diagnostic_kinds());
	if (!rc && (o.folded || o.detail) && !o.q.signature)
		rc = tk_cli_usage(name, "--folded and --detail need --signature SIG");
	if (rc) {
		free(o.where);
		return rc;
	}
	tk_error err;
	const char *kind = o.q.kind;
	o.q.kind = NULL;
	if (o.folded || o.detail)
		return signature_page(&o, kind ? kind : "hang", name);
	tk_store *s = tk_store_open(o.db, &err);
	tk_store_hang *h = NULL;
	size_t n = 0;
	if (!s || (diag ? tk_store_top_diagnostics(s, kind, &o.q, o.limit, &h, &n, &err)
	                : tk_store_top_hangs(s, &o.q, o.limit, &h, &n, &err))) {
		tk_store_close(s);
		free(o.where);
		return tk_cli_fail("%s: %s", name, err.msg);
	}
	if (o.json) {
		if (tk_store_hangs_write_json(stdout, h, n, &err))
			tk_cli_fail("%s: %s", name, err.msg);
	} else {
		printf("%8s %9s %9s %9s  %-16s  %s\n", diag ? "count" : "hangs", "sessions", "P50 s", "P95 s", "example",
		       "stack (leaf first)");
		for (size_t i = 0; i < n; i++)
			printf("%8llu %9llu %9.3f %9.3f  %-16.16s  %s\n", (unsigned long long)h[i].count,
			       (unsigned long long)h[i].sessions, h[i].p50, h[i].p95, tk_cli_shown(h[i].example),
			       *h[i].signature ? tk_cli_shown(h[i].signature) : "(no stack)");
	}
	tk_store_hangs_free(h, n);
	tk_store_close(s);
	free(o.where);
	return 0;
}

int cmd_top_hangs(int argc, char **argv)
{
	return top(argc, argv, "top-hangs");
}

int cmd_top_diagnostics(int argc, char **argv)
{
	return top(argc, argv, "top-diagnostics");
}

/* stats --db --overview: sessions and reports per kind, per group. */
static int overview(qopts *o)
{
	tk_error err;
	tk_store *s = tk_store_open(o->db, &err);
	tk_store_overview *g = NULL;
	size_t n = 0;
	if (!s || tk_store_overview_get(s, &o->q, &g, &n, &err)) {
		tk_store_close(s);
		free(o->where);
		return tk_cli_fail("stats: %s", err.msg);
	}
	for (size_t i = 0; i < n; i++) {
		if (o->json)
			putchar('{');
		for (size_t k = 0; k < o->q.nby; k++) {
			if (o->json) {
				json_key(tk_store_by_name(o->q.by[k]));
				tk_json_fput(stdout, g[i].keys[k]);
				fputs(", ", stdout);
			} else {
				printf("%s=%s ", tk_store_by_name(o->q.by[k]), tk_cli_shown(g[i].keys[k]));
			}
		}
		if (o->json) {
			printf("\"sessions\": %llu, \"reports\": %llu", (unsigned long long)g[i].sessions,
			       (unsigned long long)g[i].reports);
			put_tallies("kinds", g[i].kinds, g[i].nkinds, 1);
			fputs("}\n", stdout);
		} else {
			printf("sessions=%llu reports=%llu", (unsigned long long)g[i].sessions,
			       (unsigned long long)g[i].reports);
			for (size_t k = 0; k < g[i].nkinds; k++)
				printf(" %s=%llu", tk_cli_shown(g[i].kinds[k].value),
				       (unsigned long long)g[i].kinds[k].count);
			putchar('\n');
		}
	}
	tk_store_overview_free(g, n);
	tk_store_close(s);
	free(o->where);
	return 0;
}

/* stats --db --histogram N: the histogram and box plot per group (tk_store_distribution). */
static int histogram(qopts *o)
{
	tk_error err;
	tk_store *s = tk_store_open(o->db, &err);
	tk_store_dist *d = NULL;
	double *edges = NULL;
	size_t n = 0;
	if (!s || tk_store_distribution(s, &o->q, o->histogram, &d, &n, &edges, &err)) {
		tk_store_close(s);
		free(o->where);
		return tk_cli_fail("stats: %s", err.msg);
	}
	int rc = 0;
	if (o->json) {
		if (tk_store_dists_write_json(stdout, &o->q, d, n, edges, o->histogram, &err))
			rc = tk_cli_fail("stats: %s", err.msg);
	} else {
		const char *unit = tk_store_metric_unit(o->q.metric);
		for (size_t i = 0; i < n; i++) {
			if (o->q.nby)
				printf("version %s: ", tk_cli_shown(d[i].keys[0]));
			printf("%zu values; box P25 %.4f, P50 %.4f, P75 %.4f %s; whiskers P5 %.4f .. P95 %.4f %s\n", d[i].n,
			       d[i].p25, d[i].p50, d[i].p75, unit, d[i].p5, d[i].p95, unit);
			for (size_t b = 0; b < o->histogram; b++)
				printf("  [%12.4f, %12.4f%s %llu\n", edges[b], edges[b + 1], b + 1 == o->histogram ? "]" : ")",
				       (unsigned long long)d[i].counts[b]);
		}
	}
	tk_store_dists_free(d, n, edges);
	tk_store_close(s);
	free(o->where);
	return rc;
}

int tk_cli_stats_db(int argc, char **argv)
{
	qopts o = {0};
	int rc = parse(argc, argv, &o, &tk_cli_stats_db_command);
	if (rc < 0)
		return 0;
	if (rc) {
		free(o.where);
		return rc;
	}
	if (o.overview)
		return overview(&o);
	if (!o.q.metric)
		o.q.metric = "hang.duration";
	if (o.histogram)
		return histogram(&o);
	tk_error err;
	tk_store *s = tk_store_open(o.db, &err);
	tk_store_group *g = NULL;
	size_t n = 0;
	if (!s || tk_store_percentiles(s, &o.q, &g, &n, &err)) {
		tk_store_close(s);
		free(o.where);
		return tk_cli_fail("stats: %s", err.msg);
	}
	rc = 0;
	if (o.json) {
		if (tk_store_groups_write_json(stdout, &o.q, g, n, &err))
			rc = tk_cli_fail("stats: %s", err.msg);
	} else {
		int rate = strcmp(o.q.metric, "hang.rate") == 0;
		if (rate)
			printf("hang.rate (s of hangs >= 250 ms per foreground hour): count = sessions (devices), "
			       "mean = pooled rate, percentiles across sessions\n");
		for (size_t k = 0; k < o.q.nby; k++)
			printf("%-14s ", tk_store_by_name(o.q.by[k]));
		printf("%9s %12s %12s %12s %12s %12s %12s %12s %12s\n", rate ? "sessions" : "count",
		       rate ? "pooled" : "mean", "min", "P50", "P90", "P95", "P99", "P99.9", "max");
		for (size_t i = 0; i < n; i++) {
			for (size_t k = 0; k < o.q.nby; k++)
				printf("%-14s ", tk_cli_shown(g[i].keys[k]));
			printf("%9llu", (unsigned long long)g[i].count);
			double v[8] = {g[i].mean, g[i].min,  g[i].q[0], g[i].q[1],
			               g[i].q[2], g[i].q[3], g[i].q[4], g[i].max};
			for (int k = 0; k < 8; k++)
				printf(" %12.4f", v[k]);
			if (strcmp(o.q.metric, "hang.rate") == 0 && g[i].estimated)
				printf("  (estimated: %llu of %llu from histograms)",
				       (unsigned long long)g[i].estimated, (unsigned long long)g[i].count);
			putchar('\n');
		}
	}
	tk_store_groups_free(g, n);
	tk_store_close(s);
	free(o.where);
	return rc;
}
