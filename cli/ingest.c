/* tracekit ingest — store the reports of sessions, Apple reports and profiles in a fleet store
 * (tk_store_ingest does the work; this file wires options). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "tracekit/store.h"
#include "tracekit/symbol.h"

TK_COMMAND(ingest, "store hang and CPU records from many sessions in a fleet store (SQLite, ClickHouse)")

enum { OPT_DB = 1, OPT_SET, OPT_SYMBOLS, OPT_BATCH, OPT_JOBS, OPT_KEEP_GOING, OPT_QUIET, OPT_INPUT };

static const tk_cli_option options[] = {
    TK_OPT_SECTION("options"),
    TK_OPT_OPERAND(OPT_INPUT, "INPUT",
                   "a Records file, a session directory, a directory of such (searched recursively), an export, "
                   "an Apple report or MetricKit payloads; the options end at the first INPUT (or --)"),
    TK_OPT_VALUE(OPT_DB, "--db", NULL, "URL",
                 "sqlite:PATH (default sqlite:tracekit.db, or $TRACEKIT_DB) or clickhouse://HOST:PORT/DB"),
    TK_OPT_VALUE(OPT_SET, "--set", NULL, "K=V,...", "fill keys the inputs lack: app, version, build, device, os, session"),
    TK_OPT_LIST(OPT_SYMBOLS, "--symbols", NULL, "PATH",
                "dSYMs (a directory, .dSYM, .app or file; repeat for several) that name Apple reports' frames (as "
                "`tracekit symbolicate` does) and MTHawkeye frames by image UUID, so signatures carry function "
                "names, not addresses"),
    TK_OPT_VALUE(OPT_BATCH, "--batch", NULL, "N",
                 "reports per transaction (default: all the reports of 2048 inputs in one transaction or INSERT; "
                 "smaller batches cost SQLite a WAL write of every index page they touch, and ClickHouse merges)"),
    TK_OPT_VALUE(OPT_JOBS, "--jobs", NULL, "N", "inputs parsed in parallel (default: the number of CPUs)"),
    TK_OPT_FLAG(OPT_KEEP_GOING, "--keep-going", NULL,
                "report a bad input and go on with the others (exit status 1 at the end)"),
    TK_OPT_FLAG(OPT_QUIET, "--quiet", "-q", "no summary line"),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_ingest = {
    .name = "ingest",
    .usage = "tracekit ingest [options] INPUT...",
    .about = "Stores every finished hang and CPU high-load record of the INPUTs (Records files, session\n"
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
             "(`tracekit top-diagnostics --kind crash|hang|cpu`); the incident id makes them idempotent.\n",
    .options = options,
    .footer = "example: tracekit ingest --db sqlite:fleet.db reports/\n"
              "         tracekit stats --db sqlite:fleet.db --metric hang.duration --by version --json\n",
    .flags = TK_CLI_STOP,
    .column = 20,
};

typedef struct ingest_args {
	const char *db, *set, *symbols[64];
	size_t nsym;
	tk_store_ingest_options o;
	int quiet;
} ingest_args;

static int ingest_option(void *ctx, const tk_cli_option *opt, const char *v, const char *spelling)
{
	ingest_args *A = ctx;
	char *end = NULL;
	long n = opt->id == OPT_JOBS || opt->id == OPT_BATCH ? strtol(v, &end, 10) : 0;
	switch (opt->id) {
	case OPT_DB: A->db = v; return 0;
	case OPT_SET: A->set = v; return 0;
	case OPT_KEEP_GOING: A->o.keep_going = 1; return 0;
	case OPT_QUIET: A->quiet = 1; return 0;
	case OPT_SYMBOLS:
		if (A->nsym == sizeof A->symbols / sizeof A->symbols[0])
			return tk_cli_usage("ingest", "at most 64 --symbols paths"), -1;
		A->symbols[A->nsym++] = v;
		return 0;
	case OPT_JOBS:
		if (!*v || *end || n < 1 || n > 64)
			return tk_cli_usage("ingest", "--jobs wants a whole number from 1 to 64, not '%s'", v), -1;
		A->o.jobs = (unsigned)n;
		return 0;
	case OPT_BATCH:
		if (!*v || *end || n < 1 || n > 10000000)
			return tk_cli_usage("ingest", "--batch wants a whole number from 1 to 10000000, not '%s'", v), -1;
		A->o.batch = (size_t)n;
		return 0;
	}
	return tk_cli_usage("ingest", "unknown option '%s'", spelling), -1;
}

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
	const char *env = getenv("TRACEKIT_DB");
	ingest_args A = {.db = env && *env ? env : "sqlite:tracekit.db", .o = {.message = message, .progress = progress}};
	int first = 0, rc = tk_cli_parse(&tk_cli_command_ingest, argc, argv, 1, ingest_option, &A, &first);
	if (rc)
		return rc < 0 ? 0 : rc;
	const char *db = A.db, *set = A.set, *const *symbols = A.symbols;
	size_t nsym = A.nsym;
	tk_store_ingest_options o = A.o;
	int quiet = A.quiet;
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
	tk_store_limit_memory(s); /* RSS flat in the input, not growing with the store */
	tk_store_ingest_result g;
	rc = tk_store_ingest(s, (const char *const *)argv + first, (size_t)(argc - first), &o, &g, &err);
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
