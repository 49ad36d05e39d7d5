#!/bin/bash
# A session directory reused by two runs (the same -o twice, a restarted service), ingested after
# each run: the first run's report must keep its id (the second ingest finds it already stored) and
# each run is its own session — the key that run's own upload bundles get. Before, every record of
# the directory took the latest run's launch time and pid, so the first run's report was stored
# again under the second run's session.
. "$TK_ROOT/tests/lib.sh"
B="$TK_ROOT/$BUILD"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
S=$TMP/session
DB=sqlite:$TMP/s.db
run() {
	check "run $1 into the same session" "$TK" monitor -q -o "$S" --cpu-threshold 5 --cpu-interval 100 \
		--cpu-high-interval 100 --cpu-duration 800 -- "$B/examples/monitor/busy" 1.5
}
run 1
check "ingest after run 1" "$TK" ingest -q --db "$DB" "$S"
run 2
"$TK" ingest --db "$DB" "$S" >"$TMP/out" 2>&1
# (each run also leaves its foreground time, a report of its own: see the hang rate in docs/store.md)
check_eq "ingest after run 2: run 1's reports already stored, run 2's new" \
	"tracekit: 4 reports from 1 input: 2 new, 2 already stored ($DB)" "$(cat "$TMP/out")"
check_eq "each run's foreground time is in that run's session" \
	"$("$TK" stats --db "$DB" --metric cpu.duration --by session --json | python3 -c '
import json, sys
print(" ".join(json.loads(l)["session"] for l in sys.stdin))')" \
	"$("$TK" stats --db "$DB" --metric hang.rate --by session --json | python3 -c '
import json, sys
print(" ".join(json.loads(l)["session"] for l in sys.stdin))')"
check_eq "two sessions, one report each" "1 1" \
	"$("$TK" stats --db "$DB" --metric cpu.duration --by session --json | python3 -c '
import json, sys
print(" ".join(str(json.loads(l)["count"]) for l in sys.stdin))')"
# the same directory ingested at once into a fresh store gives the same two ids
check "ingest of both runs at once" "$TK" ingest -q --db "sqlite:$TMP/t.db" "$S"
check_eq "same ids either way" \
	"$(sqlite3 "$TMP/s.db" 'select hex(id) from reports order by 1')" \
	"$(sqlite3 "$TMP/t.db" 'select hex(id) from reports order by 1')"
