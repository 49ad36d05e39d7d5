#!/bin/bash
# Profile reports in the fleet store, on both backends: `tracekit ingest` of xctrace exports, then
# `tracekit stats --db URL --metric profile.weight|fn.self:NAME|fn.total:NAME [--by …] --json` must
# print exactly what `tracekit stats --metric … --json` prints over the same files (its own
# tk_fntable and summary are the truth), the same from SQLite and ClickHouse; re-ingest stores
# nothing; mixed units are refused as `tracekit stats` refuses them; an existing schema-1 store
# migrates and keeps its reports.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
tk_fork_start
start_clickhouse
F="$TK_ROOT/tests/fixtures/xctrace"
A=("$F/time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml"
	"$F/time-profile_xcode26.4.1_tagged-backtrace_recursion_macos-arm64.xml"
	"$F/time-profile_xcode14.3plus_frames-without-binary_macos-arm64_rust.xml")
B=("$F/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml"
	"$F/time-profile_pre-xcode14.3_text-addresses-fragments_macos-arm64_reindented.xml")
CYC="$F/cpu-profile_xcode26.4.1_tagged-backtrace_cycle-weight_unsymbolicated_macos-arm64.xml"
# a gzip'd copy inside a tree: the walk takes .xml.gz too (its bytes differ: a report of its own)
mkdir -p "$TMP/tree/deep" && gzip -c "${B[1]}" >"$TMP/tree/deep/b2.xml.gz" && cp "${B[0]}" "$TMP/tree/b1.xml"

# Functions to ask about: the top three of each export (names shared by several exports, names in
# one only, so others weigh 0), one BINARY`SYMBOL, and a name no export has (all zeros).
for x in "${A[@]}" "${B[@]}"; do "$TK" top --json "$x"; done | python3 -c '
import json, sys
seen = []
for line in sys.stdin:
    for f in json.loads(line)["functions"][:3]:
        if f["name"] not in seen: seen.append(f["name"])
    b = [f for f in json.loads(line)["functions"] if f.get("binary")]
    if b and len(seen) < 40: seen.append(b[0]["binary"] + "`" + b[0]["name"])
for n in seen: print(n)
print("no_such_function_anywhere")' | awk '!s[$0]++' >"$TMP/names"
check "some function names to ask about" test "$(wc -l <"$TMP/names")" -ge 8

# The truth: `tracekit stats` over the files, overall and per version (A = 1.0, B = 2.0).
# The many `tracekit stats` command lines run in one tk_batch process each (tests/lib.sh); the first
# of each list is also run as its own tracekit process, which must print the same.
direct() { # metric → lines: per version, then overall (the versions labelled by the sed below)
	tk_batch_add "$TMP/direct.list" stats --metric "$1" --json "${A[@]}"
	tk_batch_add "$TMP/direct.list" stats --metric "$1" --json "${B[@]}"
	tk_batch_add "$TMP/direct.list" stats --metric "$1" --json "${A[@]}" "${B[@]}"
}
direct profile.weight
while IFS= read -r n; do direct "fn.self:$n"; direct "fn.total:$n"; done <"$TMP/names"
"$TK_BATCH" "$TMP/direct.list" | sed '1~3s/^{/{"version": "1.0", /; 2~3s/^{/{"version": "2.0", /' >"$TMP/direct.json"
check_eq "tk_batch prints what tracekit prints (stats over the files)" \
	"$("$TK" stats --metric profile.weight --json "${A[@]}" | sed 's/^{/{"version": "1.0", /')" "$(head -1 "$TMP/direct.json")"
check_eq "one line per question" "$(($(wc -l <"$TMP/names") * 6 + 3))" "$(wc -l <"$TMP/direct.json")"

for DB in "sqlite:$TMP/p.db" "$CH_URL/tk_prof"; do
	b=${DB%%:*}
	"$TK" ingest --db "$DB" --set app=Demo,version=1.0 "${A[@]}" 2>"$TMP/$b.i1" &&
		"$TK" ingest --db "$DB" --set app=Demo,version=2.0 "$TMP/tree" 2>"$TMP/$b.i2"
	check "$b: ingest stores each export as a profile report" grep -q "3 profiles: 3 new, 0 already stored" "$TMP/$b.i1"
	check "$b: a tree's .xml and .xml.gz exports are ingested" grep -q "2 profiles: 2 new, 0 already stored" "$TMP/$b.i2"
	"$TK" ingest --db "$DB" --set app=Demo,version=1.0 "${A[@]}" 2>"$TMP/$b.i3"
	check "$b: ingesting the same exports again stores nothing" grep -q "3 profiles: 0 new, 3 already stored" "$TMP/$b.i3"
	q() {
		tk_batch_add "$TMP/$b.list" stats --db "$DB" --metric "$1" --by version --json
		tk_batch_add "$TMP/$b.list" stats --db "$DB" --metric "$1" --json
	}
	q profile.weight
	while IFS= read -r n; do q "fn.self:$n"; q "fn.total:$n"; done <"$TMP/names"
	"$TK_BATCH" "$TMP/$b.list" >"$TMP/$b.json" 2>"$TMP/$b.err"
	check_eq "$b: tk_batch prints what tracekit prints (stats --db)" \
		"$("$TK" stats --db "$DB" --metric profile.weight --by version --json)" "$(head -2 "$TMP/$b.json")"
	check_same_file "$b: profile.weight, fn.self:NAME, fn.total:NAME (by version and overall) equal \`tracekit stats\` on the same files" "$TMP/direct.json" "$TMP/$b.json"
	"$TK" stats --db "$DB" --metric hang.duration --json >"$TMP/$b.hang"
	check_eq "$b: profile reports are not hang reports" "" "$(cat "$TMP/$b.hang")"
	# cycles next to nanoseconds: `tracekit stats` refuses to mix them, so does the store
	"$TK" ingest -q --db "$DB" --set app=Cyc "$CYC"
	check_fails "$b: mixed units are refused" "$TK" stats --db "$DB" --metric profile.weight
	"$TK" stats --db "$DB" --metric profile.weight --by app --json >/dev/null 2>"$TMP/$b.mixed"
	check "$b: the refusal names both units" grep -q "cycles.*ns\|ns.*cycles" "$TMP/$b.mixed"
	"$TK" stats --db "$DB" --metric profile.weight --where app=Cyc --json >"$TMP/$b.cyc"
	"$TK" stats --metric profile.weight --json "$CYC" >"$TMP/direct.cyc"
	check_same_file "$b: --where app=Cyc is the cycles profile alone, unit cycles" "$TMP/direct.cyc" "$TMP/$b.cyc"
	check_fails "$b: an export with no profile table is an error" "$TK" ingest --db "$DB" "$F/hang-risks_xcode27.0_empty-table.xml"
done
check_same_file "both backends give identical profile JSON" "$TMP/sqlite.json" "$TMP/clickhouse.json"
check_eq "SQLite holds each function row once per new profile" \
	"$(sqlite3 "$TMP/p.db" 'SELECT count(*) FROM profiles; SELECT count(DISTINCT profile) FROM functions' | tr '\n' ' ')" "6 6 "

# Migration of a store made by schema 1 (reports only): its reports stay, profiles go in.
G="$TMP/gen"
"$STOREGEN" "$G" 5 2 1 >/dev/null || notok "storegen"
"$TK" ingest -q --db "sqlite:$TMP/old.db" "$G"
sqlite3 "$TMP/old.db" 'DROP TABLE functions; DROP TABLE profiles; DROP TABLE hang_sigs; DROP TABLE stacks; ALTER TABLE reports DROP COLUMN stack; DROP INDEX reports_sig; DROP INDEX reports_values; DROP TABLE sessions_sum; ALTER TABLE reports DROP COLUMN sid; PRAGMA user_version = 1'
before=$(sqlite3 "$TMP/old.db" 'SELECT count(*) FROM reports')
"$TK" ingest -q --db "sqlite:$TMP/old.db" "${A[@]}"
check_eq "sqlite: schema 1 → 12 migration keeps the reports and adds profiles" "$before 12 3" \
	"$(sqlite3 "$TMP/old.db" 'SELECT count(*) FROM reports; PRAGMA user_version; SELECT count(*) FROM profiles' | tr '\n' ' ' | sed 's/ $//')"
chq() { curl -s --data-binary "$1" "$CH_HTTP"; }
"$TK" ingest -q --db "$CH_URL/tk_old" "$G"
chq "DROP TABLE tk_old.functions" && chq "DROP TABLE tk_old.profiles" && chq "DROP TABLE tk_old.tracekit_schema" &&
	chq "CREATE TABLE tk_old.tracekit_schema (version UInt32) ENGINE = TinyLog" && chq "INSERT INTO tk_old.tracekit_schema VALUES (1)"
before=$(chq "SELECT count() FROM tk_old.reports")
"$TK" ingest -q --db "$CH_URL/tk_old" "${A[@]}"
check_eq "clickhouse: schema 1 → 8 migration keeps the reports and adds profiles" "$before 8 3" \
	"$(chq "SELECT count() FROM tk_old.reports") $(chq "SELECT max(version) FROM tk_old.tracekit_schema") $(chq "SELECT count() FROM tk_old.profiles")"
