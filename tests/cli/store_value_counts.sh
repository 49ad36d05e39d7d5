#!/bin/bash
# SQLite schema 9's value_counts (lib/store/sqlite.c): the distinct durations and CPU averages per
# (kind, app, version, UTC day) with their counts, kept at ingest and built by the 8 → 9 migration,
# from which the dashboard's sorted values and percentiles by app, version and day are read instead of
# every report. Checked against the reports themselves: the table kept at ingest (several ingests, one
# of them of reports already stored) equals the reports' own aggregate (its definition, in SQL); a
# schema-8 store that migrates (part of the fleet ingested before, the rest after) holds the same
# rows; and every answer read from it equals the same answer computed from the reports (a --since
# before every report selects the same reports but is not one value_counts holds, so it scans them).
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
STOREGEN="$TK_ROOT/$BUILD/storegen"
G="$TMP/gen"
"$STOREGEN" "$G" 14 6 7 --cpu 2 --foreground --versions 3 --days 3 >/dev/null || notok "storegen"
NEW="$TMP/new.db" OLD="$TMP/old.db"
"$TK" ingest -q --db "sqlite:$NEW" "$G"/s000000[0-6]
"$TK" ingest -q --db "sqlite:$NEW" "$G"
"$TK" ingest -q --db "sqlite:$NEW" "$G"/s000000[2-4]
VCQ="SELECT col, kind, app, version, value, day, n FROM value_counts ORDER BY 1, 2, 3, 4, 5, 6"
DEF="SELECT 0, kind, app, version, duration, (CAST(time AS INTEGER) - (CAST(time AS INTEGER) < 0) * 86399) / 86400 AS d, count(*) FROM reports WHERE duration IS NOT NULL GROUP BY 2, 3, 4, 5, 6
UNION ALL SELECT 1, kind, app, version, avg_cpu, (CAST(time AS INTEGER) - (CAST(time AS INTEGER) < 0) * 86399) / 86400 AS d, count(*) FROM reports WHERE avg_cpu IS NOT NULL GROUP BY 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6"
check_eq "sqlite: schema 12" "12" "$(sqlite3 "$NEW" "PRAGMA user_version")"
check "the fleet has hangs, CPU reports and foreground time on several days" test \
	"$(sqlite3 "$NEW" "SELECT count(DISTINCT kind) = 3 AND count(DISTINCT CAST(time AS INTEGER) / 86400) > 2 FROM reports")" = 1
check_eq "value_counts kept at ingest equals the reports' aggregate" "$(sqlite3 "$NEW" "$DEF")" "$(sqlite3 "$NEW" "$VCQ")"
check "value_counts holds fewer rows than the reports with a value, each count ≥ 1" test \
	"$(sqlite3 "$NEW" "SELECT (SELECT count(*) FROM value_counts) < (SELECT count(duration) + count(avg_cpu) FROM reports) AND (SELECT min(n) FROM value_counts) >= 1")" = 1

# a store at schema 8 (made from a schema-9 one: its table dropped) migrates, then takes the rest
"$TK" ingest -q --db "sqlite:$OLD" "$G"/s000000[0-5]
sqlite3 "$OLD" "DROP TABLE value_counts; PRAGMA user_version = 8;"
"$TK" ingest -q --db "sqlite:$OLD" "$G"
check_eq "sqlite: schema 8 migrates to 12" "12" "$(sqlite3 "$OLD" "PRAGMA user_version")"
check_eq "the migrated value_counts plus later ingests equals the one kept at ingest" \
	"$(sqlite3 "$NEW" "$VCQ")" "$(sqlite3 "$OLD" "$VCQ")"

# answers from value_counts equal the same answers from the reports (--since 86400: every report, scanned);
# so do the overview's counts and sessions and the hang rate, grouped in C from sessions_sum (the
# questions asked through tk_batch: one process per store, ~0.2 s of ASan start-up each saved)
QS=("--metric hang.duration --by app,version" "--metric hang.duration --by version" "--metric hang.duration"
	"--metric hang.duration --by day,version" "--metric hang.duration --by version,day" "--metric hang.duration --by day"
	"--metric cpu.duration --by app,version" "--metric cpu.average --by version" "--metric cpu.average --by day,app"
	"--metric hang.duration --by day --where version=5.1" "--metric hang.duration --by app --where app=Atlas,version=5.2"
	"--overview" "--overview --by app,version" "--overview --by version,device" "--overview --by os --where version=5.0"
	"--overview --by session" "--metric hang.rate --by app,version" "--metric hang.rate" "--metric hang.rate --by day"
	"--metric hang.rate --by hour,version" "--metric hang.rate --by device --where version=5.1")
for a in "${QS[@]}"; do
	# shellcheck disable=SC2086 # each question's words
	tk_batch_add "$TMP/want.list" stats --db "sqlite:$NEW" $a --since 86400 --json
	# shellcheck disable=SC2086
	tk_batch_add "$TMP/got.list" stats --db "sqlite:$NEW" $a --json
	# shellcheck disable=SC2086
	tk_batch_add "$TMP/old.list" stats --db "sqlite:$OLD" $a --json
done
for l in want got old; do
	TK_BATCH_MARK=1 "$TK_BATCH" "$TMP/$l.list" 2>/dev/null | awk -v d="$TMP/$l" '/^tk_batch: line [0-9]+: exit/ { n++; print > (d "." n ".rc"); next } { print > (d "." n + 1 ".out") }'
done
for i in "${!QS[@]}"; do
	n=$((i + 1)) a=${QS[$i]}
	check "reports answer $a (not empty)" test -s "$TMP/want.$n.out"
	check_eq "value_counts answers $a as the reports do" "$(cat "$TMP/want.$n.out" 2>/dev/null)" "$(cat "$TMP/got.$n.out" 2>/dev/null || echo MISSING)"
	check_eq "the migrated store answers $a the same" "$(cat "$TMP/want.$n.out" 2>/dev/null)" "$(cat "$TMP/old.$n.out" 2>/dev/null || echo MISSING)"
done
