/* tracekit report — one stored report of a fleet store: its metadata and its stacks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "tracekit/stats.h"
#include "tracekit/store.h"
#include "util/text.h"

TK_COMMAND(report, "one report of a fleet store: its keys, numbers and stacks (folded, or JSON)")

static const char usage[] =
    "usage: tracekit report [--db URL] [--folded|--json] ID...\n"
    "\n"
    "Prints each report ID (64 hex digits, as `tracekit top-hangs` lists examples) of a fleet store:\n"
    "its kind, keys (app, version, build, device, os, session), record key, start, duration, average\n"
    "CPU, samples, thread and stack signature, then its stacks as folded lines (what `tracekit collapse\n"
    "--event N` wrote for its record when it was ingested; reports stored before stacks were kept have\n"
    "none). Exits 1 when the store has no such report.\n"
    "\n"
    "options:\n"
    "  --db URL   sqlite:PATH (default sqlite:tracekit.db, or $TRACEKIT_DB) or clickhouse://HOST:PORT/DB\n"
    "  --folded   the stacks alone (for `tracekit flame -`, `tracekit tree -` …)\n"
    "  --json     one object per line: id, kind, the keys, rkey, time, duration, avg_cpu, samples,\n"
    "             thread, signature, folded\n";

static void put_num(double v)
{
	char buf[32];
	fputs(tk_stats_fmt_double(v, buf), stdout);
}

static int print_one(tk_store *s, const char *db, const char *id, int folded, int json);

int cmd_report(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv))
		return fputs(usage, stdout), 0;
	const char *env = getenv("TRACEKIT_DB");
	const char *db = env && *env ? env : "sqlite:tracekit.db";
	const char **ids = calloc((size_t)argc, sizeof *ids);
	size_t nids = 0;
	int folded = 0, json = 0;
	for (int i = 1; i < argc;) {
		const char *v;
		int r;
		if (strcmp(argv[i], "--folded") == 0) {
			folded = 1, i++;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = 1, i++;
		} else if ((r = tk_cli_opt("report", argc, argv, &i, "--db", NULL, &v)) != 0) {
			if (r < 0)
				return free(ids), 2;
			db = v;
		} else if (argv[i][0] == '-') {
			free(ids);
			return tk_cli_usage("report", "unknown option '%s'", tk_cli_shown(argv[i]));
		} else {
			ids[nids++] = argv[i++];
		}
	}
	int rc = 0;
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
