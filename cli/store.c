/* tracekit store compact — the upkeep of a fleet store (lib/store: tk_store_compact). */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "tracekit/store.h"

TK_COMMAND(store, "maintain a fleet store: `store compact` (ClickHouse: each report once, faster queries)")

enum { OPT_DB = 1, OPT_STRAY };

static const tk_cli_option options[] = {
    TK_OPT_SECTION("options"),
    TK_OPT_VALUE(OPT_DB, "--db", NULL, "URL",
                 "sqlite:PATH (default sqlite:tracekit.db, or $TRACEKIT_DB) or clickhouse://HOST:PORT/DB"),
    TK_OPT_OPERAND(OPT_STRAY, "ARG", NULL), /* none taken after the action: refused as an unknown option */
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_store = {
    .name = "store",
    .usage = "tracekit store compact [--db URL]",
    .about = "ClickHouse: removes the extra copies of reports that ingesters racing on the same new reports\n"
             "left (each report is kept once, reports ingested meanwhile are kept), merges the tables' parts\n"
             "and prunes tracekit_ingests, so grouped queries stop reading every report through a\n"
             "deduplicating subquery (see docs/store.md). SQLite (which never stores a report twice):\n"
             "ANALYZE, VACUUM and a WAL checkpoint. Says what it did on one line.\n",
    .options = options,
    .flags = TK_CLI_NO_DASHDASH,
    .column = 13,
};

static int store_option(void *ctx, const tk_cli_option *o, const char *v, const char *spelling)
{
	if (o->id == OPT_DB) {
		*(const char **)ctx = v;
		return 0;
	}
	return tk_cli_usage("store", "unknown option '%s'", tk_cli_shown(spelling)), -1;
}

int cmd_store(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv)) { /* before the action is checked */
		tk_cli_help(&tk_cli_command_store, stdout);
		return 0;
	}
	if (argc < 2)
		return tk_cli_usage("store", "which action? (tracekit store compact)");
	if (strcmp(argv[1], "compact") != 0)
		return tk_cli_usage("store", "unknown action '%s' (tracekit store compact)", tk_cli_shown(argv[1]));
	const char *env = getenv("TRACEKIT_DB"), *db = env && *env ? env : "sqlite:tracekit.db";
	int rc = tk_cli_parse(&tk_cli_command_store, argc, argv, 2, store_option, &db, NULL);
	if (rc)
		return rc < 0 ? 0 : rc;
	tk_error err;
	tk_store *s = tk_store_open(db, &err);
	tk_store_compact_result r;
	if (!s || tk_store_compact(s, &r, &err)) {
		tk_store_close(s);
		return tk_cli_fail("store compact: %s", err.msg);
	}
	if (strcmp(tk_store_backend(s), "sqlite") == 0)
		printf("compacted %s: %.1f MB -> %.1f MB\n", tk_cli_shown(db), r.bytes_before / 1e6,
		       r.bytes_after / 1e6);
	else
		printf("compacted %s: %llu extra report copies removed, %llu ingest batches pruned, %s\n",
		       tk_cli_shown(db), (unsigned long long)r.duplicates, (unsigned long long)r.pruned,
		       r.open ? "some batches are still open: queries still read each report once"
		              : "queries read the table directly");
	tk_store_close(s);
	return 0;
}
