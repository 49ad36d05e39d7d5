#!/bin/bash
# tracekit store compact. On a real clickhouse-server, a store holding what racing ingesters leave
# (some reports stored twice, copies differing in `ingested`; their batch closed as raced; a batch
# that crashed open over an hour ago) is compacted while another ingest adds new reports: afterwards
# every report is stored exactly once (new ones included), no batch keeps queries in their
# read-each-report-once mode, tracekit_ingests is pruned, and every answer equals that of a store
# that ingested the same inputs once. On SQLite: the same answers before and after.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
tk_fork_start
start_clickhouse
"$STOREGEN" "$TMP/g1" 40 6 3 >/dev/null && "$STOREGEN" "$TMP/g2" 40 6 4 >/dev/null || { notok "storegen"; exit 1; }
chq() { curl -s --data-binary "$1" "$CH_HTTP"; }
answers() { # DB OUT
	"$TK" stats --db "$1" --metric hang.duration --by version --json >"$2.stats" &&
		"$TK" stats --db "$1" --metric cpu.duration --by app,os --json >>"$2.stats" &&
		"$TK" top-hangs --db "$1" --limit 1000 --json >"$2.top"
}
"$TK" ingest -q --db "$CH_URL/ref" "$TMP/g1" "$TMP/g2" && answers "$CH_URL/ref" "$TMP/ref" || notok "reference"
"$TK" ingest -q --db "$CH_URL/race" "$TMP/g1" || notok "ingest"
# what a race leaves: a third of the reports a second time, a few seconds later; the batch closed
# as raced; and a batch that crashed before closing, two hours ago
chq "INSERT INTO race.reports SELECT id, kind, app, version, build, device, os, session, time, ts, duration, avg_cpu, samples, thread, signature, rkey, ingested + 7, stack FROM race.reports WHERE cityHash64(id) % 3 = 0"
chq "INSERT INTO race.tracekit_ingests VALUES ('raced-by-the-test', 0, now() - 20), ('raced-by-the-test', 2, now() - 10), ('crashed', 0, now() - 7200)"
extra=$(chq "SELECT count() - uniqExact(kind, id) FROM race.reports")
check "the raced store holds extra copies" test "$extra" -gt 0
answers "$CH_URL/race" "$TMP/raced"
# compact while g2 is being ingested in small batches; a batch is pruned only if it closed in a
# second before the compaction's (at is in whole seconds): wait until g1's last one did
until [ "$(chq "SELECT now() > (SELECT max(at) FROM race.tracekit_ingests)")" = 1 ]; do sleep 0.1; done
"$TK" ingest -q --jobs 1 --batch 5 --db "$CH_URL/race" "$TMP/g2" 2>"$TMP/ing.err" &
ING=$!
"$TK" store compact --db "$CH_URL/race" >"$TMP/compact.out" 2>"$TMP/compact.err"
check_eq "store compact: exit 0" 0 $?
wait $ING
check_eq "the concurrent ingest succeeded" 0 $?
check "store compact says how many copies it removed" grep -q "^compacted $CH_URL/race: $extra extra report copies removed" "$TMP/compact.out"
check_eq "every report is stored exactly once (g1 and g2)" \
	"$(chq "SELECT uniqExact(kind, id) FROM ref.reports") 0" \
	"$(chq "SELECT uniqExact(kind, id), count() - uniqExact(kind, id) FROM race.reports" | tr '\t' ' ')"
check_eq "no batch is left raced, crashed or open: queries read the table directly" 0 \
	"$(chq "SELECT countIf(s != 1) FROM (SELECT token, max(state) AS s FROM race.tracekit_ingests GROUP BY token)")"
check_eq "tracekit_ingests pruned: the raced and crashed batches and g1's are gone" 0 \
	"$(chq "SELECT count() FROM race.tracekit_ingests WHERE token IN ('raced-by-the-test', 'crashed', 'schema-2')")"
check_eq "no work table left behind" "" "$(chq "SELECT name FROM system.tables WHERE database = 'race' AND name LIKE 'tracekit_compact%'")"
answers "$CH_URL/race" "$TMP/after"
check_same_file "after compact: stats equal one ingest of the same inputs" "$TMP/ref.stats" "$TMP/after.stats"
check_same_file "after compact: top hangs equal one ingest of the same inputs" "$TMP/ref.top" "$TMP/after.top"
"$TK" store compact --db "$CH_URL/race" >"$TMP/again.out"
check "compacting again: nothing to remove" grep -q ": 0 extra report copies removed, .* queries read the table directly" "$TMP/again.out"
check_eq "after compacting: every table's parts merged, the summaries' too (one part a partition)" "" \
	"$(chq "SELECT DISTINCT table FROM system.parts WHERE database = 'race' AND active AND table != 'tracekit_ingests' GROUP BY table, partition HAVING count() > 1")"
sumcheck() { # DB: 1 when its summaries hold exactly its reports (clickhouse.c's SUM_CHECK)
	chq "SELECT (SELECT sum(n) FROM $1.sum_values) = (SELECT count() FROM $1.reports WHERE isNotNull(duration)) AND (SELECT sum(n) FROM $1.sum_sig_values) = (SELECT sum(n) FROM $1.sum_values) AND (SELECT countMerge(ns) FROM $1.sum_sigs) = (SELECT sum(n) FROM $1.sum_values) AND (SELECT countMerge(ns) FROM $1.sum_groups) = (SELECT count() FROM $1.reports) AND (SELECT countMerge(ns) FROM $1.sum_sessions) = (SELECT count() FROM $1.reports WHERE kind IN ('foreground', 'hang-time', 'hang', 'anr') AND isNotNull(duration)) AND (SELECT sum(n) FROM $1.sum_day_values) = (SELECT sum(n) FROM $1.sum_values) AND (SELECT sum(n) FROM $1.sum_sig_sessions) = (SELECT sum(n) FROM $1.sum_values) AND (SELECT sum(n) FROM $1.sum_vsig_sessions) = (SELECT sum(n) FROM $1.sum_values) AND (SELECT count() FROM $1.sum_sig_sessions FINAL) = (SELECT count() FROM (SELECT DISTINCT kind, signature, session FROM $1.reports WHERE isNotNull(duration)))"
}
check_eq "after compacting again: the summaries hold each report once" 1 "$(sumcheck race)"
answers "$CH_URL/race" "$TMP/again"
check_same_file "with the summaries refilled: stats equal one ingest" "$TMP/ref.stats" "$TMP/again.stats"
check_same_file "with the summaries refilled: top hangs equal one ingest" "$TMP/ref.top" "$TMP/again.top"

# a store from before the summaries (schema 4): opening it makes them and fills them from its reports
for t in sum_values_mv sum_sessions_mv sum_sigs_mv sum_sig_values_mv sum_groups_mv sum_values sum_sessions sum_sigs \
	sum_sig_values sum_groups sum_day_values_mv sum_sig_sessions_mv sum_vsig_sessions_mv sum_day_values sum_sig_sessions \
	sum_vsig_sessions sum_sig_durations_mv sum_sig_keys_mv sum_sig_ids_mv sum_hour_durations_mv sum_sig_durations \
	sum_sig_keys sum_sig_ids sum_hour_durations tracekit_schema; do
	chq "DROP TABLE ref.$t"
done
chq "CREATE TABLE ref.tracekit_schema (version UInt32) ENGINE = TinyLog"
chq "INSERT INTO ref.tracekit_schema VALUES (1), (2), (3), (4)"
answers "$CH_URL/ref" "$TMP/migrated"
check_eq "schema 4 → 8: migrated" 8 "$(chq "SELECT max(version) FROM ref.tracekit_schema")"
check_eq "schema 4 → 8: the summaries hold each report once" 1 "$(sumcheck ref)"
check_same_file "schema 4 → 8: stats unchanged" "$TMP/ref.stats" "$TMP/migrated.stats"
check_same_file "schema 4 → 8: top hangs unchanged" "$TMP/ref.top" "$TMP/migrated.top"
"$TK" ingest -q --db "$CH_URL/ref" "$TMP/g1" "$TMP/g2" && answers "$CH_URL/ref" "$TMP/again2"
check_eq "ingesting the same inputs again adds nothing to the summaries" 1 "$(sumcheck ref)"

# the summaries answer when they cover a query: one hang moved to 1000 s in sum_values (the total
# unchanged: a count of 2^64-1 is -1 in UInt64 sums) shows as that version's maximum
read -r app v val < <(chq "SELECT app, version, toString(value) FROM ref.sum_values WHERE kind = 'hang' ORDER BY value LIMIT 1")
chq "INSERT INTO ref.sum_values VALUES ('hang', '$app', '$v', 1000, 1), ('hang', '$app', '$v', $val, 18446744073709551615)"
check_eq "the percentiles read sum_values" 1000 \
	"$("$TK" stats --db "$CH_URL/ref" --metric hang.duration --by version --where "version=$v" --json | python3 -c 'import json,sys; print("%g" % json.loads(sys.stdin.readline())["max"])')"

# schema 6: percentiles by day read sum_day_values (one hang moved to 1000 s there shows as its
# day's maximum), top hangs' sessions sum_sig_sessions (a session added to the top signature there
# is counted, while the table is in two parts and once it is merged into one)
read -r app v d val < <(chq "SELECT app, version, toString(day), toString(value) FROM ref.sum_day_values WHERE kind = 'hang' ORDER BY value LIMIT 1")
chq "INSERT INTO ref.sum_day_values VALUES ('hang', '$app', '$v', '$d', 1000, 1), ('hang', '$app', '$v', '$d', $val, 18446744073709551615)"
check_eq "percentiles by day read sum_day_values" 1000 \
	"$("$TK" stats --db "$CH_URL/ref" --metric hang.duration --by day,version --json | python3 -c 'import json,sys
print(max("%g" % r["max"] for r in map(json.loads, sys.stdin) if r["day"] == "'"$d"'" and r["version"] == "'"$v"'"))')"
top_sessions() { "$TK" top-hangs --db "$CH_URL/ref" --limit 1 --json | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["sessions"])'; }
s0=$(top_sessions)
read -r sig sess < <(chq "SELECT signature, session FROM ref.sum_sig_sessions WHERE kind = 'hang' AND n >= 2 AND signature = (SELECT signature FROM ref.reports WHERE kind = 'hang' GROUP BY signature ORDER BY count() DESC, signature LIMIT 1) LIMIT 1 FORMAT TabSeparated")
chq "INSERT INTO ref.sum_sig_sessions VALUES ('hang', '$sig', 'tk-extra-session', 1), ('hang', '$sig', '$sess', 18446744073709551615)"
check_eq "top hangs' sessions read sum_sig_sessions (two parts)" "$((s0 + 1))" "$(top_sessions)"
chq "OPTIMIZE TABLE ref.sum_sig_sessions FINAL"
check_eq "sum_sig_sessions merged into one part" 1 "$(chq "SELECT count() FROM system.parts WHERE active AND database = 'ref' AND table = 'sum_sig_sessions'")"
check_eq "top hangs' sessions read sum_sig_sessions (one part: its rows counted)" "$((s0 + 1))" "$(top_sessions)"

# a retention's DROP PARTITION of reports leaves the summaries counting the dropped day: queries
# read the reports instead, and store compact refills the summaries
day=$(chq "SELECT toString(min(toDate(ts))) FROM race.reports")
chq "ALTER TABLE race.reports DROP PARTITION '$day'"
check_eq "after DROP PARTITION: the summaries differ from the reports" 0 "$(sumcheck race)"
answers "$CH_URL/race" "$TMP/dropped"
"$TK" store compact --db "$CH_URL/race" >/dev/null
check_eq "after DROP PARTITION and compact: the summaries hold the reports" 1 "$(sumcheck race)"
answers "$CH_URL/race" "$TMP/dropped2"
check_same_file "after DROP PARTITION: the reports' answers equal the refilled summaries'" "$TMP/dropped.stats" "$TMP/dropped2.stats"
check_same_file "after DROP PARTITION: top hangs too" "$TMP/dropped.top" "$TMP/dropped2.top"
check "after DROP PARTITION: fewer hangs than before" test "$(wc -c <"$TMP/dropped.stats")" -gt 0 -a "$(cmp -s "$TMP/dropped.stats" "$TMP/again.stats"; echo $?)" = 1

# SQLite: the engine's upkeep; the answers do not change
"$TK" ingest -q --db "sqlite:$TMP/s.db" "$TMP/g1" "$TMP/g2"
answers "sqlite:$TMP/s.db" "$TMP/sq.before"
"$TK" store compact --db "sqlite:$TMP/s.db" >"$TMP/sq.out" 2>&1
check_eq "sqlite: store compact: exit 0" 0 $?
check "sqlite: says the sizes" grep -q "^compacted sqlite:$TMP/s.db: [0-9.]* MB -> [0-9.]* MB" "$TMP/sq.out"
answers "sqlite:$TMP/s.db" "$TMP/sq.after"
check_same_file "sqlite: stats unchanged" "$TMP/sq.before.stats" "$TMP/sq.after.stats"
check_same_file "sqlite: top hangs unchanged" "$TMP/sq.before.top" "$TMP/sq.after.top"
check_fails "store with an unknown action: usage error" "$TK" store shrink
