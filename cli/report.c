/* tracekit report — one stored report of a fleet store: its metadata and its stacks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "tracekit/stats.h"
#include "tracekit/store.h"
#include "util/text.h"

TK_COMMAND(report, "one report of a fleet store: its keys, numbers and stacks (folded, or JSON)")

enum { OPT_DB = 1, OPT_FOLDED, OPT_JSON, OPT_ID };

static const tk_cli_option options[] = {
    TK_OPT_SECTION("options"),
    TK_OPT_OPERAND(OPT_ID, "ID", "a report's id: 64 hex digits, as `tracekit top-hangs` lists examples"),
    TK_OPT_VALUE(OPT_DB, "--db", NULL, "URL",
                 "sqlite:PATH (default sqlite:tracekit.db, or $TRACEKIT_DB) or clickhouse://HOST:PORT/DB"),
    TK_OPT_FLAG(OPT_FOLDED, "--folded", NULL, "the stacks alone (for `tracekit flame -`, `tracekit tree -` …)"),
    TK_OPT_FLAG(OPT_JSON, "--json", NULL,
                "one object per line: id, kind, the keys, rkey, time, duration, avg_cpu, samples, thread, "
                "signature, folded"),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_report = {
    .name = "report",
    .usage = "tracekit report [--db URL] [--folded|--json] ID...",
    .about = "Prints each report ID (64 hex digits, as `tracekit top-hangs` lists examples) of a fleet store:\n"
             "its kind, keys (app, version, build, device, os, session), record key, start, duration, average\n"
             "CPU, samples, thread and stack signature, then its stacks as folded lines (what `tracekit collapse\n"
             "--event N` wrote for its record when it was ingested; reports stored before stacks were kept have\n"
             "none). Exits 1 when the store has no such report.\n",
    .options = options,
    .flags = TK_CLI_NO_DASHDASH,
    .column = 13,
};

typedef struct report_args {
	const char *db;
	const char **ids;
	size_t nids;
	int folded, json;
} report_args;

static int report_option(void *ctx, const tk_cli_option *o, const char *v, const char *spelling)
{
	report_args *R = ctx;
	switch (o->id) {
	case OPT_FOLDED: R->folded = 1; return 0;
	case OPT_JSON: R->json = 1; return 0;
	case OPT_DB: R->db = v; return 0;
	case OPT_ID:
		if (v[0] != '-') /* "-" is no id: refused as an option, as it always was */
			return R->ids[R->nids++] = v, 0;
	}
	return tk_cli_usage("report", "unknown option '%s'", tk_cli_shown(spelling)), -1;
}

static void put_num(double v)
{
	char buf[32];
	fputs(tk_stats_fmt_double(v, buf), stdout);
}

static int print_one(tk_store *s, const char *db, const char *id, int folded, int json);

int cmd_report(int argc, char **argv)
{
	const char *env = getenv("TRACEKIT_DB");
	report_args R = {.db = env && *env ? env : "sqlite:tracekit.db", .ids = calloc((size_t)argc, sizeof *R.ids)};
	int rc = tk_cli_parse(&tk_cli_command_report, argc, argv, 1, report_option, &R, NULL);
	const char *db = R.db, **ids = R.ids;
	size_t nids = R.nids;
	int folded = R.folded, json = R.json;
	if (rc)
		return free(ids), rc < 0 ? 0 : rc;
	if (!nids)
		rc = tk_cli_usage("report", "which report? (an id, as top-hangs lists them)");
	else if (folded && json)
		rc = tk_cli_usage("report", "--folded and --json are exclusive");
	tk_error err;
	tk_store *s = rc ? NULL : tk_store_open(db, &err);
	if (!rc && !s)
		rc = tk_cli_fail("report: %s", err.msg);
	for (size_t i = 0; !rc && i < nids; i++)
		rc = print_one(s, db, ids[i], folded, json);
	tk_store_close(s);
	free(ids);
	return rc;
}

/* One report, or 1 after a message. */
static int print_one(tk_store *s, const char *db, const char *id, int folded, int json)
{
	tk_error err;
	tk_store_report r;
	int rc = tk_store_report_get(s, id, &r, &err);
	if (rc < 0)
		return tk_cli_fail("report: %s", err.msg);
	if (rc > 0)
		return tk_cli_fail("report: %s: no such report in %s", tk_cli_shown(id), tk_cli_shown(db));
	if (folded) {
		fputs(r.folded, stdout);
	} else if (json) {
		fputs("{\"id\": ", stdout);
		tk_json_fput(stdout, r.id);
		fputs(", \"kind\": ", stdout);
		tk_json_fput(stdout, r.kind);
		for (int k = 0; k < TK_STORE_NKEYS; k++) {
			printf(", \"%s\": ", tk_store_key_names[k]);
			tk_json_fput(stdout, r.keys[k]);
		}
		fputs(", \"rkey\": ", stdout);
		tk_json_fput(stdout, r.rkey);
		fputs(", \"time\": ", stdout);
		put_num(r.time);
		fputs(", \"duration\": ", stdout);
		put_num(r.duration);
		fputs(", \"avg_cpu\": ", stdout);
		put_num(r.avg_cpu);
		printf(", \"samples\": %llu, \"thread\": ", (unsigned long long)r.samples);
		tk_json_fput(stdout, r.thread);
		fputs(", \"signature\": ", stdout);
		tk_json_fput(stdout, r.signature);
		fputs(", \"folded\": ", stdout);
		tk_json_fput(stdout, r.folded);
		fputs("}\n", stdout);
	} else {
		printf("id:         %s\nkind:       %s\n", r.id, tk_cli_shown(r.kind));
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			printf("%-11s %s\n", tk_store_key_names[k], tk_cli_shown(r.keys[k]));
		printf("record:     %s\ntime:       %.3f\n", tk_cli_shown(r.rkey), r.time);
		if (!isnan(r.duration))
			printf("duration:   %.3f s\n", r.duration);
		if (!isnan(r.avg_cpu))
			printf("cpu:        %.1f %%\n", r.avg_cpu);
		printf("samples:    %llu\nthread:     %s\nsignature:  %s\nstacks:\n", (unsigned long long)r.samples,
		       tk_cli_shown(r.thread), tk_cli_shown(r.signature));
		char *copy = strdup(r.folded);
		for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n"))
			printf("  %s\n", tk_cli_shown(line));
		free(copy);
	}
	tk_store_report_free(&r);
	return 0;
}
