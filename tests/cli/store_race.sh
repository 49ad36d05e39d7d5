#!/bin/bash
# Fleet store under concurrency and its maintained summaries:
# - two `tracekit ingest` of the same inputs at once store (and answer for) every report once, on
#   SQLite and on a real clickhouse-server, where reports inserted twice (what a race on the
#   duplicate check leaves) are still counted once by every query;
# - SQLite's top hangs from the per-signature summary equal the full scan's answer (the same store
#   asked with a filter that keeps every row, which takes the scan) and ClickHouse's, and stay so
#   after re-ingesting and after migrating a schema-2 file;
# - stop_clickhouse does not fail the `set -e` scripts whose EXIT trap runs it (bench_store.sh
#   exited 1 after printing all its results when the server had already stopped).
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
tk_fork_start

# stop_clickhouse in a set -e EXIT trap: server still running (stops on TERM), and already gone
for state in running gone; do
	out=$(TK_ROOT="$TK_ROOT" STATE=$state bash -c 'set -eu; notok() { :; }; . "$TK_ROOT/tests/store_lib.sh"
		sleep 30 & CH_PID=$!
		if [ "$STATE" = gone ]; then kill $CH_PID; wait $CH_PID 2>/dev/null || true; fi
		trap "stop_clickhouse; echo cleaned" EXIT; echo results' 2>&1)
	rc=$?
	check_eq "stop_clickhouse in a set -e EXIT trap, server $state: exit 0, cleanup runs" "0 results cleaned" \
		"$rc $(echo $out)"
done

start_clickhouse
G="$TMP/gen"
"$STOREGEN" "$G" 60 10 5 >/dev/null || { notok "storegen"; exit 1; }
APP=$(sed 's/.*"app":"\([^"]*\)".*/\1/' "$G/s0000000/meta.json")
chq() { curl -s --data-binary "$1" "$CH_HTTP"; }

# answers: stats by version, top hangs (all signatures), count
answers() { # DB OUT
	"$TK" stats --db "$1" --metric hang.duration --by version --json >"$2.stats" &&
		"$TK" top-hangs --db "$1" --limit 1000 --json >"$2.top"
}

for b in sqlite clickhouse; do
	if [ $b = sqlite ]; then ref="sqlite:$TMP/ref.db" race="sqlite:$TMP/race.db"; else ref="$CH_URL/ref" race="$CH_URL/race"; fi
	"$TK" ingest -q --db "$ref" "$G" && answers "$ref" "$TMP/$b.ref" || notok "$b: reference ingest"
	check_eq "$b: the reference store holds every generated hang" "$(wc -l <"$G/truth.tsv")" \
		"$(python3 -c 'import json,sys; print(sum(json.loads(l)["count"] for l in open(sys.argv[1])))' "$TMP/$b.ref.top")"
	# two ingests of the same inputs at once, small batches so they interleave check and insert
	"$TK" ingest --jobs 1 --batch 7 --db "$race" "$G" 2>"$TMP/$b.r1" &
	p1=$!
	"$TK" ingest --jobs 1 --batch 7 --db "$race" "$G" 2>"$TMP/$b.r2" &
	p2=$!
	wait $p1; rc1=$?
	wait $p2; rc2=$?
	check_eq "$b: two concurrent ingests of the same inputs both succeed" "0 0" "$rc1 $rc2"
	answers "$race" "$TMP/$b.race"
	check_same_file "$b: after concurrent ingests, stats equal one ingest's" "$TMP/$b.ref.stats" "$TMP/$b.race.stats"
	check_same_file "$b: after concurrent ingests, top hangs equal one ingest's" "$TMP/$b.ref.top" "$TMP/$b.race.top"
	n1=$(grep -o '[0-9]* new' "$TMP/$b.r1" | cut -d' ' -f1) n2=$(grep -o '[0-9]* new' "$TMP/$b.r2" | cut -d' ' -f1)
	echo "# $b: the two ingests reported $n1 + $n2 new of $(wc -l <"$G/truth.tsv")"
done

# SQLite can say exactly: the racing ingests added every report once between them
new_of() { grep -o '[0-9]* new' "$1" | cut -d' ' -f1; }
check_eq "sqlite: the two concurrent ingests added each report once between them" "$(wc -l <"$G/truth.tsv")" \
	"$(($(new_of "$TMP/sqlite.r1") + 0 + $(new_of "$TMP/sqlite.r2") + 0))"
echo "# clickhouse: race rows stored $(chq "SELECT count() FROM race.reports"), distinct $(chq "SELECT uniqExact(id) FROM race.reports")"

echo "# clickhouse: batches closed as raced: $(chq "SELECT countIf(state = 2) FROM race.tracekit_ingests")"

# What a lost race leaves in ClickHouse, made for certain: every report inserted a second time by an
# ingester that died before closing its batch (its announcement, state 0, stays open: a minute ago,
# so it counts as failed at once; a younger one each query would first wait for).
"$TK" ingest -q --db "$CH_URL/dup" "$G"
"$TK" stats --db "$CH_URL/dup" --metric hang.duration --by version --json >"$TMP/dup.before"
check_same_file "clickhouse: one clean ingest answers as the reference" "$TMP/clickhouse.ref.stats" "$TMP/dup.before"
chq "INSERT INTO dup.tracekit_ingests VALUES ('died', 0, now() - 60)"
chq "INSERT INTO dup.reports SELECT * FROM dup.reports"
check_eq "clickhouse: the dup store holds every row twice" "$((2 * $(wc -l <"$G/truth.tsv")))" "$(chq "SELECT count() FROM dup.reports")"
answers "$CH_URL/dup" "$TMP/dup"
check_same_file "clickhouse: reports stored twice count once in stats" "$TMP/clickhouse.ref.stats" "$TMP/dup.stats"
check_same_file "clickhouse: reports stored twice count once in top hangs" "$TMP/clickhouse.ref.top" "$TMP/dup.top"
"$TK" stats --db "$CH_URL/dup" --metric hang.duration --where "app=$APP" --json >"$TMP/dup.where"
"$TK" stats --db "$CH_URL/ref" --metric hang.duration --where "app=$APP" --json >"$TMP/ref.where"
check_same_file "clickhouse: reports stored twice count once in a filtered query" "$TMP/ref.where" "$TMP/dup.where"
# the dashboard's other reads: histograms, a signature's rows and merged stacks (each read every
# report once only while a batch is open, as here)
SIG1=$(sed -n '1s/^{"signature": "\([^"]*\)".*/\1/p' "$TMP/clickhouse.ref.top")
for d in ref dup; do
	"$TK" stats --db "$CH_URL/$d" --metric hang.duration --by version --histogram 20 --json >"$TMP/$d.hist"
	"$TK" top-hangs --db "$CH_URL/$d" --signature "$SIG1" --detail --json --examples 3 >"$TMP/$d.detail"
	"$TK" top-hangs --db "$CH_URL/$d" --signature "$SIG1" --folded >"$TMP/$d.folded"
done
check_same_file "clickhouse: reports stored twice count once in histograms" "$TMP/ref.hist" "$TMP/dup.hist"
check_same_file "clickhouse: reports stored twice count once in a signature's detail" "$TMP/ref.detail" "$TMP/dup.detail"
check "clickhouse: the signature's merged stacks are not empty" test -s "$TMP/ref.folded"
check_same_file "clickhouse: reports stored twice count once in a signature's merged stacks" "$TMP/ref.folded" \
	"$TMP/dup.folded"
"$TK" ingest --db "$CH_URL/dup" "$G" 2>"$TMP/dup.again"
check "clickhouse: re-ingesting into the dup store adds nothing" grep -q " 0 new, " "$TMP/dup.again"

# SQLite top hangs: the summary path (no filter) against the scan (a filter every row passes)
S="sqlite:$TMP/ref.db"
"$TK" top-hangs --db "$S" --limit 1000 --where "app=$APP" --json >"$TMP/scan.top"
check_same_file "sqlite: top hangs from the summary equal the full scan's" "$TMP/scan.top" "$TMP/sqlite.ref.top"
check_same_file "sqlite: top hangs equal clickhouse's (signature, count, sessions, P50, P95, example)" \
	"$TMP/clickhouse.ref.top" "$TMP/sqlite.ref.top"
"$TK" top-hangs --db "$S" --limit 3 >"$TMP/sum.txt"
"$TK" top-hangs --db "$S" --limit 3 --where "app=$APP" >"$TMP/scan.txt"
check_same_file "sqlite: top hangs text table, summary = scan" "$TMP/scan.txt" "$TMP/sum.txt"
"$TK" ingest -q --db "$S" "$G"
"$TK" top-hangs --db "$S" --limit 1000 --json >"$TMP/again.top"
check_same_file "sqlite: re-ingesting the same inputs leaves the summary as it was" "$TMP/sqlite.ref.top" "$TMP/again.top"
check_eq "sqlite: the summary's counts equal the table's" \
	"$(sqlite3 "$TMP/ref.db" "SELECT count(*) FROM reports WHERE kind IN ('hang','anr') AND duration IS NOT NULL")" \
	"$(sqlite3 "$TMP/ref.db" 'SELECT sum(n) FROM hang_sigs')"
# a store made by schema 2 (no summary) migrates on open and answers the same
cp "$TMP/ref.db" "$TMP/v2.db"
sqlite3 "$TMP/v2.db" 'DROP INDEX reports_sig; DROP INDEX reports_values; DROP TABLE sessions_sum; ALTER TABLE reports DROP COLUMN sid; DROP TABLE hang_sigs; DROP TABLE stacks; ALTER TABLE reports DROP COLUMN stack; PRAGMA user_version = 2'
"$TK" top-hangs --db "sqlite:$TMP/v2.db" --limit 1000 --json >"$TMP/v2.top"
check_same_file "sqlite: schema 2 → 6 migration builds the summary, same top hangs" "$TMP/sqlite.ref.top" "$TMP/v2.top"
check_eq "sqlite: migrated file is schema 12" "12" "$(sqlite3 "$TMP/v2.db" 'PRAGMA user_version')"

# A hang with its thread snapshot but no tree (hang_fast's common shape) and one whose only thread
# could not be captured (jansson's path): both stored, the first signed by its snapshot's frames.
cp "$TK_ROOT/tests/fuzz/corpus/records/hang-no-tree" "$TMP/hnt.records"
check "ingest: hangs without a tree" "$TK" ingest -q --db "sqlite:$TMP/hnt.db" "$TMP/hnt.records"
check_eq "ingest: hangs without a tree keep thread, numbers and signature" \
	"hang|main|1700000010.5|2.5|4|0x10;0x20;0x30 hang|main|1700000020.0|0.3|1|" \
	"$(sqlite3 "$TMP/hnt.db" 'SELECT kind, thread, time, duration, samples, signature FROM reports ORDER BY time' | tr '\n' ' ' | sed 's/ $//')"
