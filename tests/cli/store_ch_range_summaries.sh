#!/bin/bash
# ClickHouse schema 8's summaries by signature and hour for date ranges (lib/store/clickhouse.c
# "Schema 8": sum_sig_hours, sum_sig_hour_sess, kept by materialized views at every INSERT into
# reports, filled by the migration and by `store compact`): a range's whole hours are read from them
# and from sum_hour_durations, its partial hours at both ends from reports. Every answer over a date
# range — percentiles (whole, by version, by app and version, filtered), top hangs and diagnostics
# (counts, sessions, P50/P95, examples, first and last versions) and the dashboard's comparison of
# two date ranges — equals the same answer read from the reports alone (an ingest batch left open
# makes every query read each report once from reports), for ranges cut inside hours at both ends,
# ending on whole hours, open at one end, within one hour, before and after every report; on a store
# ingested in batches and on one migrated from schema 7 then compacted. A summary that is wrong
# (one session moved, the totals kept) shows in the answers.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
SRV_PID=
start_clickhouse
trap '[ -n "$SRV_PID" ] && { kill $SRV_PID; wait $SRV_PID; } 2>/dev/null; stop_clickhouse; rm -rf "$TMP"' EXIT
chq() { curl -s --data-binary "$1" "$CH_HTTP"; }
G="$TMP/gen"
"$STOREGEN" "$G" 20 20 11 --cpu 2 --foreground --versions 3 --days 3 >/dev/null || notok "storegen"
NEW="$CH_URL/tknew" OLD="$CH_URL/tkold"
"$TK" ingest -q --batch 60 --db "$NEW" "$G"/s000000[0-4]
"$TK" ingest -q --batch 150 --db "$NEW" "$G"
check_eq "clickhouse: schema 8" "8" "$(chq "SELECT max(version) FROM tknew.tracekit_schema")"
# a schema-7 store: schema 8's views and tables dropped; it migrates, takes the rest, is compacted
"$TK" ingest -q --db "$OLD" "$G"/s000000[0-5]
for t in sum_sig_hours_mv sum_sig_hour_sess_mv sum_sig_hours sum_sig_hour_sess tracekit_schema; do chq "DROP TABLE tkold.$t"; done
chq "CREATE TABLE tkold.tracekit_schema (version UInt32) ENGINE = TinyLog"
chq "INSERT INTO tkold.tracekit_schema VALUES (1), (2), (3), (4), (5), (6), (7)"
"$TK" ingest -q --db "$OLD" "$G"
check_eq "clickhouse: schema 7 migrates to 8" "8" "$(chq "SELECT max(version) FROM tkold.tracekit_schema")"
"$TK" store compact --db "$OLD" >/dev/null
check_eq "the migrated store holds every report's hours" "$(chq "SELECT count() FROM tknew.reports WHERE isNotNull(duration)")" \
	"$(chq "SELECT countMerge(ns) FROM tkold.sum_sig_hours")"

# the ranges, in Unix seconds, cut next to stored reports (the fleet's sessions last about two hours:
# a range's ends fall where reports are): ra, rb, rz reports' times, rz one in the first ten minutes
# of its hour; cut inside hours at both ends, on whole hours, a whole hour's first second in or out,
# open at either end, inside one hour, before and after every report
read -r t0 t1 < <(chq "SELECT toUInt32(min(ts)), toUInt32(max(ts)) FROM tknew.reports WHERE ts > 0 FORMAT TabSeparated")
check "the fleet spans several days" test $((t1 - t0)) -gt 100000
at() { chq "SELECT toUInt32(ts) FROM tknew.reports WHERE kind = 'hang' $2 ORDER BY ts LIMIT 1 OFFSET $1"; }
N=$(chq "SELECT count() FROM tknew.reports WHERE kind = 'hang'")
ra=$(at $((N / 4))) rb=$(at $((N * 3 / 5))) rz=$(at 5 "AND toUInt32(ts) % 3600 < 600 AND toUInt32(ts) > $ra")
check "reports to cut next to ($ra $rb $rz)" test -n "$rz" -a "$ra" -lt "$rz" -a "$rz" -lt "$rb"
hz=$((rz - rz % 3600)) ha=$((ra - ra % 3600)) hb=$((rb - rb % 3600))
RANGES=("$((ra - 1)).5 $((rb + 1)).25" "$ha $hb" "$((hz - 1)) $((rb + 2))" "$hz $((hb + 3600))" "$((ra - 7)) -"
	"- $((rb + 3)).5" "$((rz - 60)) $((rz + 60))" "1000 $((t0 - 10))" "$((t1 + 10)) -" "$((t0 + 100)).5 $((t1 - 100))")
QS=()
for r in "${RANGES[@]}"; do
	read -r s u <<<"$r"
	T=()
	[ "$s" != - ] && T+=(--since "$s")
	[ "$u" != - ] && T+=(--until "$u")
	TJ=$(IFS='|'; echo "${T[*]}")
	QS+=("stats|--metric|hang.duration|--json|$TJ" "stats|--metric|cpu.duration|--by|version|--json|$TJ"
		"stats|--metric|hang.duration|--by|app,version|--where|app=Atlas|--json|$TJ"
		"top-hangs|--json|--limit|6|$TJ" "top-hangs|--json|--limit|3|--where|version=5.1|$TJ"
		"top-diagnostics|--kind|cpu|--json|$TJ")
done
answers() { # DB OUT: every query of QS on DB, one file each
	local a w
	rm -f "$TMP/q.list"
	for a in "${QS[@]}"; do
		IFS='|' read -r -a w <<<"$a"
		tk_batch_add "$TMP/q.list" "${w[@]}" --db "$1"
	done
	TK_BATCH_MARK=1 "$TK_BATCH" "$TMP/q.list" 2>/dev/null | awk -v d="$2" '/^tk_batch: line [0-9]+: exit/ { n++; next } { print > (d "." n + 1) }'
}
# a batch announced and not closed: every query reads each report once from reports; closed, a new
# token each time (a token's state is its highest)
NOPEN=0
# (announced a minute ago: a batch open over 30 s counts as failed at once, where a younger one would
# be waited for by every query first)
open_batch() { NOPEN=$((NOPEN + 1)); chq "INSERT INTO $1.tracekit_ingests VALUES ('tk-test-open-$NOPEN', 0, now() - 60)"; }
close_batch() { chq "INSERT INTO $1.tracekit_ingests VALUES ('tk-test-open-$NOPEN', 1, now())"; }
ALLQS=("${QS[@]}")
for db in tknew tkold; do
	[ $db = tkold ] && QS=("${ALLQS[@]:0:18}") # the migrated store: its first three ranges
	open_batch $db
	answers "$CH_URL/$db" "$TMP/want.$db"
	close_batch $db
	answers "$CH_URL/$db" "$TMP/got.$db"
	nonempty=0
	for i in "${!QS[@]}"; do
		n=$((i + 1))
		[ -s "$TMP/want.$db.$n" ] && nonempty=$((nonempty + 1))
		check_eq "$db: ${QS[$i]//|/ } answers as the reports do" "$(cat "$TMP/want.$db.$n" 2>/dev/null || echo NONE)" "$(cat "$TMP/got.$db.$n" 2>/dev/null || echo NONE)"
	done
	check "$db: most range answers hold reports ($nonempty of ${#QS[@]})" test "$nonempty" -gt $(( ${#QS[@]} * 2 / 3 ))
done
check "a range's top hangs count sessions" grep -q '"sessions": [1-9]' "$TMP/got.tknew.4"

# the dashboard's comparison of two date ranges: the same bytes from the summaries and the reports
serve_dashboard "$NEW"
s1=$((ra - 1)) u1=$((rb + 1))
U="/compare?a_since=$((ra - 7200)).5&a_until=$s1&b_since=$s1&b_until=$u1"
open_batch tknew
curl -s -f "$BASE$U" >"$TMP/page.want"
close_batch tknew
curl -s -f "$BASE$U" >"$TMP/page.got"
check "the comparison lists hang stacks" grep -q 'data-signature=' "$TMP/page.want"
check_same_file "the comparison of two date ranges reads the same from the summaries" "$TMP/page.want" "$TMP/page.got"
kill $SRV_PID && wait $SRV_PID 2>/dev/null
SRV_PID=
if grep -q "Sanitizer\|runtime error" "$TMP/serve.log"; then notok "serve ran clean" "$(grep -m3 "Sanitizer\|runtime error" "$TMP/serve.log")"; fi

# a wrong summary shows: one report's session moved to a session of its own in sum_sig_hour_sess
# (the totals kept: a count of 2^64-1 is -1 in UInt64 sums) makes its signature's sessions one more
read -r k sig hr app ver < <(chq "SELECT kind, signature, hour, app, version FROM tknew.sum_sig_hour_sess WHERE kind = 'hang' AND n > 1 AND hour * 3600 > $((s1 + 3600)) AND hour * 3600 < $((u1 - 3600)) ORDER BY n DESC, signature LIMIT 1 FORMAT TabSeparated")
chq "INSERT INTO tknew.sum_sig_hour_sess SELECT kind, signature, hour, sh, app, version, 18446744073709551615 FROM tknew.sum_sig_hour_sess WHERE kind = 'hang' AND n > 1 AND hour = $hr AND app = '$app' AND version = '$ver' ORDER BY n DESC, signature LIMIT 1"
chq "INSERT INTO tknew.sum_sig_hour_sess SELECT kind, signature, hour, sipHash128('tk-moved'), app, version, 1 FROM tknew.sum_sig_hour_sess WHERE kind = 'hang' AND n > 1 AND hour = $hr AND app = '$app' AND version = '$ver' ORDER BY n DESC, signature LIMIT 1"
"$TK" top-hangs --db "$NEW" --json --limit 24 --since "$s1" --until "$u1" >"$TMP/moved.got"
open_batch tknew
"$TK" top-hangs --db "$NEW" --json --limit 24 --since "$s1" --until "$u1" >"$TMP/moved.want"
close_batch tknew
check "a moved session in sum_sig_hour_sess shows in a range's sessions" python3 - "$TMP/moved.want" "$TMP/moved.got" <<'PY'
import json, sys
w, g = ([json.loads(l) for l in open(f)] for f in sys.argv[1:])
assert [x["signature"] for x in w] == [x["signature"] for x in g]
d = [(b["sessions"] - a["sessions"]) for a, b in zip(w, g)]
assert sorted(d) == [0] * (len(d) - 1) + [1], d
PY

# a dashboard page's answers as one view (tk_store_view_begin/end: the ingest state read at its two
# ends only) on this server: a quiet view stands, a raced one says so, one begun with a batch open
# reads each report once (tests/unit/test_store_view.c, which skips itself without a server)
TK_TEST_CH_URL="$CH_URL/tkview" CMOCKA_MESSAGE_OUTPUT=stdout "$TK_ROOT/${BUILD:-build}/tests/test_store_view" >"$TMP/view.out" 2>&1
check_eq "store views on ClickHouse: the unit test passes" 0 $?
check "store views on ClickHouse: the server's test ran, not skipped" grep -q '^\[       OK \] test_view_clickhouse' "$TMP/view.out"

# a bulk load (at least half the store new) leaves the summaries merged, one part each (ch_ingested:
# the first queries after it read one row a key); a smaller ingest leaves merging to the server.
# The server's own merges are stopped meanwhile, so what is merged is what the ingest merged.
chq "SYSTEM STOP MERGES"
"$TK" ingest -q --batch 40 --db "$CH_URL/tkbulk" "$G"/s00000{00..11}
sumparts() { chq "SELECT max(c) FROM (SELECT table, count() AS c FROM system.parts WHERE database = 'tkbulk' AND active AND table LIKE 'sum\\_%' GROUP BY table)"; }
check "the bulk load was inserted in several batches (reports in several parts)" test "$(chq "SELECT count() FROM system.parts WHERE database = 'tkbulk' AND active AND table = 'reports'")" -gt 3
check_eq "after a bulk load: every summary in one part" 1 "$(sumparts)"
"$TK" ingest -q --batch 40 --db "$CH_URL/tkbulk" "$G"/s00000{12..13}
check "after a smaller ingest (2 sessions into 12): the summaries left to the server's merges" test "$(sumparts)" -gt 1
"$TK" ingest -q --batch 40 --db "$CH_URL/tkbulk" "$G"
chq "SYSTEM START MERGES"
"$TK" top-hangs --db "$CH_URL/tkbulk" --json --limit 30 >"$TMP/bulk.top"
"$TK" top-hangs --db "$NEW" --json --limit 30 >"$TMP/new.top"
check_same_file "the bulk-loaded store answers as the one ingested in batches" "$TMP/new.top" "$TMP/bulk.top"
