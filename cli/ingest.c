/* tracekit ingest — store the reports of sessions, Apple reports and profiles in a fleet store
 * (tk_store_ingest does the work; this file wires options). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "tracekit/store.h"
#include "tracekit/symbol.h"

TK_COMMAND(ingest, "store hang and CPU records from many sessions in a fleet store (SQLite, ClickHouse)")

static const char usage[] =
    "usage: tracekit ingest [options] INPUT...\n"
    "\n"
    "Stores every finished hang and CPU high-load record of the INPUTs (Records files, session\n"
    "directories of `tracekit monitor` or MTHawkeye, or directories holding such sessions, searched\n"
    "recursively) as one report each, with app, version, build, device, OS and session taken from\n"
    "each session's meta.json, the records themselves, then --set. A report's id is the SHA-256 of\n"
    "its content: ingesting the same input twice stores it once. Each batch is one transaction.\n"
    "Any other input the readers take (xctrace exports: .xml and .xml.gz in a tree) is stored as one\n"
    "profile report: its weight, unit, threads and every function's self and total weight, for\n"
    "`tracekit stats --db URL --metric profile.weight|fn.self:NAME|fn.total:NAME`; keys from --set.\n"
    "MetricKit payloads (a file of one, a JSON array or JSON Lines; .json/.jsonl in a tree) store each\n"
    "diagnostic as a report, and each metric payload's foreground time and hang-time histogram for\n"
    "`tracekit stats --db URL --metric hang.rate` (Apple's hang rate, docs/store.md).\n"
    "Apple's reports (.ips, .crash, spindump) and MetricKit payloads (found by content in a tree) are\n"
    "stored one report per event, signed by the crashed or blocked thread's first app frames\n"
    "(`tracekit top-diagnostics --kind crash|hang|cpu`); the incident id makes them idempotent.\n"
    "\n"
    "options:\n"
    "  --db URL          sqlite:PATH (default sqlite:tracekit.db, or $TRACEKIT_DB) or\n"
    "                    clickhouse://HOST:PORT/DB\n"
    "  --set K=V,...     fill keys the inputs lack: app, version, build, device, os, session\n"
    "  --symbols PATH    dSYMs (a directory, .dSYM, .app or file; repeat for several) that name\n"
    "                    Apple reports' frames (as `tracekit symbolicate` does) and MTHawkeye frames\n"
    "                    by image UUID, so signatures carry function names, not addresses\n"
    "  --batch N         reports per transaction (default: all the reports of 2048 inputs in one\n"
    "                    transaction or INSERT; smaller batches cost SQLite a WAL write of every\n"
    "                    index page they touch, and ClickHouse merges)\n"
    "  --jobs N          inputs parsed in parallel (default: the number of CPUs)\n"
    "  --keep-going      report a bad input and go on with the others (exit status 1 at the end)\n"
    "  -q, --quiet       no summary line\n"
    "\n"
    "example: tracekit ingest --db sqlite:fleet.db reports/\n"
    "         tracekit stats --db sqlite:fleet.db --metric hang.duration --by version --json\n";

/* Progress on a terminal, after each stored batch. */
static void progress(void *ctx, size_t inputs, size_t reports, double seconds)
{
	(void)ctx;
	if (isatty(2))
		fprintf(stderr, "\r%zu inputs, %zu reports (%.0f/s)   ", inputs, reports,
		        seconds > 0 ? (double)reports / seconds : 0);
}

static void message(void *ctx, int error, const char *msg)
{
	(void)ctx;
	if (error)
		tk_cli_fail("ingest: %s", msg);
	else
		tk_cli_warn("ingest: %s", msg);
}

int cmd_ingest(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return 0;
	}
	const char *db = getenv("TRACEKIT_DB");
	if (!db || !*db)
		db = "sqlite:tracekit.db";
	const char *set = NULL, *symbols[64];
	size_t nsym = 0;
	tk_store_ingest_options o = {.message = message, .progress = progress};
	int quiet = 0, first = 0;
	static const char *const with_value[] = {"--db", "--set", "--symbols", "--jobs", "--batch"};
	for (int i = 1; i < argc;) {
		const char *a = argv[i], *v = NULL;
		if (strcmp(a, "--") == 0) {
			first = i + 1;
			break;
		}
		if (a[0] != '-' || strcmp(a, "-") == 0) {
			first = i;
			break;
		}
		int r = 0;
		size_t k = 0;
		for (; k < sizeof with_value / sizeof with_value[0]; k++)
			if ((r = tk_cli_opt("ingest", argc, argv, &i, with_value[k], NULL, &v)) != 0)
				break;
		if (r < 0)
			return 2;
		if (r == 0) {
			if (strcmp(a, "--keep-going") == 0)
				o.keep_going = 1;
			else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
				quiet = 1;
			else
				return tk_cli_usage("ingest", "unknown option '%s'", a);
			i++;
			continue;
		}
		char *end;
		long n = k >= 3 ? strtol(v, &end, 10) : 0;
		switch (k) {
		case 0: db = v; break;
		case 1: set = v; break;
		case 2:
			if (nsym == sizeof symbols / sizeof symbols[0])
				return tk_cli_usage("ingest", "at most 64 --symbols paths");
			symbols[nsym++] = v;
			break;
		case 3:
			if (!*v || *end || n < 1 || n > 64)
				return tk_cli_usage("ingest", "--jobs wants a whole number from 1 to 64, not '%s'", v);
			o.jobs = (unsigned)n;
			break;
		default:
			if (!*v || *end || n < 1 || n > 10000000)
				return tk_cli_usage("ingest",
				                    "--batch wants a whole number from 1 to 10000000, not '%s'", v);
			o.batch = (size_t)n;
		}
	}
	if (!first || first >= argc)
		return tk_cli_usage("ingest", "no input given");
	tk_report_meta meta = {0};
	char *owned = NULL;
	tk_error err;
	if (set && tk_report_meta_parse(&meta, set, &owned, &err))
		return tk_cli_fail("ingest: %s", err.msg), 2;
	o.meta = &meta;
	tk_symbolicator *sym = NULL;
	for (size_t k = 0; k < nsym; k++) {
		if (!sym)
			sym = tk_symbolicator_new(NULL);
		if (tk_symbolicator_add_path(sym, symbols[k], &err) < 0) {
			tk_symbolicator_free(sym);
			free(owned);
			return tk_cli_fail("ingest: --symbols %s: %s", symbols[k], err.msg);
		}
	}
	o.symbols = sym;
	tk_store *s = tk_store_open(db, &err);
	if (!s) {
		tk_symbolicator_free(sym);
		free(owned);
		return tk_cli_fail("ingest: %s", err.msg);
	}
	tk_store_ingest_result g;
	int rc = tk_store_ingest(s, (const char *const *)argv + first, (size_t)(argc - first), &o, &g, &err);
	if (rc < 0)
		tk_cli_fail("ingest: %s", err.msg);
	if (isatty(2))
		fputc('\n', stderr);
	if (!rc && !quiet) {
		fprintf(stderr, "tracekit: %zu report%s from %zu input%s: %zu new, %zu already stored", g.reports,
		        g.reports == 1 ? "" : "s", g.inputs, g.inputs == 1 ? "" : "s", g.added, g.reports - g.added);
		if (g.live)
			fprintf(stderr, ", %zu still live (not stored until finished)", g.live);
		if (g.profiles)
			fprintf(stderr, "; %zu profile%s: %zu new, %zu already stored", g.profiles,
			        g.profiles == 1 ? "" : "s", g.padded, g.profiles - g.padded);
		fprintf(stderr, " (%s)\n", db);
	}
	tk_store_close(s);
	tk_symbolicator_free(sym);
	free(owned);
	if (rc || g.bad)
		rc = 1;
	return rc;
}
