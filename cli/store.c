/* tracekit store compact — the upkeep of a fleet store (lib/store: tk_store_compact). */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "tracekit/store.h"

TK_COMMAND(store, "maintain a fleet store: `store compact` (ClickHouse: each report once, faster queries)")

static const char usage[] =
    "usage: tracekit store compact [--db URL]\n"
    "\n"
    "ClickHouse: removes the extra copies of reports that ingesters racing on the same new reports\n"
    "left (each report is kept once, reports ingested meanwhile are kept), merges the tables' parts\n"
    "and prunes tracekit_ingests, so grouped queries stop reading every report through a\n"
    "deduplicating subquery (see docs/store.md). SQLite (which never stores a report twice):\n"
    "ANALYZE, VACUUM and a WAL checkpoint. Says what it did on one line.\n"
    "\n"
    "options:\n"
    "  --db URL   sqlite:PATH (default sqlite:tracekit.db, or $TRACEKIT_DB) or clickhouse://HOST:PORT/DB\n";

int cmd_store(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc < 2)
		return tk_cli_usage("store", "which action? (tracekit store compact)");
	if (strcmp(argv[1], "compact") != 0)
		return tk_cli_usage("store", "unknown action '%s' (tracekit store compact)", tk_cli_shown(argv[1]));
	const char *env = getenv("TRACEKIT_DB"), *db = env && *env ? env : "sqlite:tracekit.db";
	for (int i = 2; i < argc;) {
		const char *v = NULL;
		int r = tk_cli_opt("store", argc, argv, &i, "--db", NULL, &v);
		if (r < 0)
			return 2;
		if (r == 0)
			return tk_cli_usage("store", "unknown option '%s'", tk_cli_shown(argv[i]));
		db = v;
	}
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
