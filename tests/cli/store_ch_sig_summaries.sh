#!/bin/bash
# ClickHouse schema 7's per-signature and per-hour summaries (lib/store/clickhouse.c "Schema 7":
# sum_sig_durations, sum_sig_keys, sum_sig_ids, sum_hour_durations, kept by materialized views at every INSERT
# into reports, filled from the stored reports by the migration and by `store compact`). Checked
# against the reports themselves: after ingests in several batches (and one that adds nothing) the
# tables hold exactly the reports' own aggregate, written here independently in SQL (stacks' hashes
# from report_stacks, not from the reports' new column); a schema-6 store (schema 7's tables and
# column dropped) migrates, takes more reports and holds the same; a compacted one too; and every
# answer read from them equals the same answer computed from the reports (a --since before every
# report selects the same reports but is not a filter the summaries hold, so the reports are read):
# a signature's detail, merged stacks, percentiles by hour, and the dashboard's signature page, its
# flame graph and stats.svg and the trends by hour. A summary that disagrees with the reports'
# totals (a row added by hand) is not read.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
SRV_PID=
start_clickhouse
trap '[ -n "$SRV_PID" ] && { kill $SRV_PID; wait $SRV_PID; } 2>/dev/null; stop_clickhouse; rm -rf "$TMP"' EXIT
tk_fork_start
chq() { curl -s --data-binary "$1" "$CH_HTTP"; }
G="$TMP/gen"
"$STOREGEN" "$G" 20 20 11 --cpu 2 --foreground --versions 3 --days 3 >/dev/null || notok "storegen"
NEW="$CH_URL/tknew" OLD="$CH_URL/tkold"
"$TK" ingest -q --batch 50 --db "$NEW" "$G"/s000000[0-4]
"$TK" top-hangs --db "$NEW" --where version=5.1 >/dev/null
"$TK" ingest -q --batch 120 --db "$NEW" "$G"
"$TK" ingest -q --db "$NEW" "$G"/s000000[2-4] # stored already: adds nothing
check_eq "clickhouse: schema 8" "8" "$(chq "SELECT max(version) FROM tknew.tracekit_schema")"

# the tables (grouped again: parts not merged yet) and their definition from the reports
SUM="SELECT * FROM (SELECT 'k' AS t, signature AS sig, what AS w, key AS k, kind, app, version, sum(n) AS n FROM DB.sum_sig_keys GROUP BY signature, what, key, kind, app, version
UNION ALL SELECT 'i', signature, 0, id, kind, app, version, count() FROM DB.sum_sig_ids GROUP BY signature, id, kind, app, version
UNION ALL SELECT 'd', signature, 0, toString(arraySort(groupArrayMerge(v))), kind, app, version, countMerge(ns) FROM DB.sum_sig_durations GROUP BY signature, kind, app, version
UNION ALL SELECT 'h', '', 0, toString(arraySort(groupArrayMerge(v))), kind, app, version, toUInt64(hour) FROM DB.sum_hour_durations GROUP BY kind, app, version, hour
) ORDER BY t, sig, w, k, kind, app, version, n FORMAT TabSeparated"
DEF="SELECT * FROM (SELECT 'k' AS t, signature AS sig, toUInt8(0) AS w, device AS k, kind, app, version, count() AS n FROM DB.reports WHERE isNotNull(duration) GROUP BY signature, device, kind, app, version
UNION ALL SELECT 'k', signature, toUInt8(2), s, kind, app, version, count() FROM (SELECT signature, kind, app, version, id FROM DB.reports WHERE isNotNull(duration)) ANY LEFT JOIN (SELECT id, any(stack) AS s FROM DB.report_stacks GROUP BY id) USING (id) GROUP BY signature, s, kind, app, version
UNION ALL SELECT 'i', signature, 0, id, kind, app, version, count() FROM DB.reports WHERE isNotNull(duration) GROUP BY signature, id, kind, app, version
UNION ALL SELECT 'd', signature, 0, toString(arraySort(groupArray(assumeNotNull(duration)))), kind, app, version, count() FROM DB.reports WHERE isNotNull(duration) GROUP BY signature, kind, app, version
UNION ALL SELECT 'h', '', 0, toString(arraySort(groupArray(assumeNotNull(duration)))), kind, app, version, toUInt64(toUInt32(toStartOfHour(ts, 'UTC')) / 3600) AS h FROM DB.reports WHERE isNotNull(duration) GROUP BY kind, app, version, h
) ORDER BY t, sig, w, k, kind, app, version, n FORMAT TabSeparated"
same_as_reports() { # DB NAME: the summaries of database DB equal their definition from its reports
	chq "${DEF//DB./$1.}" >"$TMP/def.$1" && chq "${SUM//DB./$1.}" >"$TMP/sum.$1"
	check "$2: the fleet has summaries (stacks, several versions and kinds)" python3 - "$TMP/def.$1" <<'PY'
import sys
rows = [l.split("\t") for l in open(sys.argv[1])]
assert len(rows) > 100 and {r[0] for r in rows} == {"k", "i", "d", "h"}, len(rows)
assert len({r[6] for r in rows}) == 3 and len({r[4] for r in rows}) > 1 and any(r[2] == "2" and len(r[3]) == 32 for r in rows)
PY
	check_same_file "$2: the summaries equal the reports' aggregate" "$TMP/def.$1" "$TMP/sum.$1"
}
same_as_reports tknew "ingested in batches"

# a schema-6 store: schema 7's views, tables and column dropped; it migrates, then takes the rest
"$TK" ingest -q --db "$OLD" "$G"/s000000[0-5]
for t in sum_sig_durations_mv sum_sig_keys_mv sum_sig_ids_mv sum_hour_durations_mv sum_sig_durations sum_sig_keys sum_sig_ids \
	sum_hour_durations tracekit_schema; do
	chq "DROP TABLE tkold.$t"
done
chq "ALTER TABLE tkold.reports DROP COLUMN stack"
chq "CREATE TABLE tkold.tracekit_schema (version UInt32) ENGINE = TinyLog"
chq "INSERT INTO tkold.tracekit_schema VALUES (1), (2), (3), (4), (5), (6)"
"$TK" ingest -q --db "$OLD" "$G"
check_eq "clickhouse: schema 6 migrates to 8" "8" "$(chq "SELECT max(version) FROM tkold.tracekit_schema")"
same_as_reports tkold "migrated from schema 6, then ingested"
"$TK" store compact --db "$OLD" >/dev/null
same_as_reports tkold "compacted"

# answers from the summaries equal the same answers from the reports (--since 86400: every report)
sig_queries "$NEW"
QS+=("top-hangs|--signature|${SIGS[0]}|--detail|--json|--examples|400" "stats|--metric|cpu.duration|--by|app,hour|--json")
same_answers "$NEW" "$OLD" "${QS[@]}"

# the dashboard's pages: the same bytes with and without a since= before every report
serve_dashboard "$NEW"
SIGQ=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "${SIGS[1]}")
# a page's body without its forms and the links that carry its own query (since= differs)
body() { curl -s -f "$BASE$1" | sed -e '/<form /d' -e 's/ href="[^"]*"//g' -e 's/ src="[^"]*"//g'; }
for u in "/signature?kind=hang&sig=$SIGQ" "/signature?kind=hang&sig=$SIGQ&version=5.2" "/flame.svg?kind=hang&sig=$SIGQ" \
	"/stats.svg?kind=hang&sig=$SIGQ&app=Atlas" "/trends?bucket=hour&stat=p99" "/trend.svg?bucket=hour&stat=p50&version=5.0"; do
	body "$u&since=86400" >"$TMP/page.want"
	body "$u" >"$TMP/page.got"
	check "the page $u is drawn" test -s "$TMP/page.got"
	check_same_file "the page $u reads the same from the summaries" "$TMP/page.want" "$TMP/page.got"
done
kill $SRV_PID && wait $SRV_PID 2>/dev/null
SRV_PID=
if grep -q "Sanitizer\|runtime error" "$TMP/serve.log"; then notok "serve ran clean" "$(grep -m3 "Sanitizer\|runtime error" "$TMP/serve.log")"; fi

# the summaries answer where they hold the query: a report of the top signature's moved to device
# tk-moved in sum_sig_keys (the total unchanged: a count of 2^64-1 is -1 in UInt64 sums) shows on its
# detail; 7 more reports of a stack of the second signature's (stacks are not in the totals checked)
# show in its merged stacks
read -r dev app ver < <(chq "SELECT key, app, version FROM tknew.sum_sig_keys WHERE signature = '${SIGS[0]}' AND what = 0 AND kind = 'hang' ORDER BY key LIMIT 1 FORMAT TabSeparated")
chq "INSERT INTO tknew.sum_sig_keys VALUES ('${SIGS[0]}', 0, 'tk-moved', 'hang', '$app', '$ver', 1), ('${SIGS[0]}', 0, '$dev', 'hang', '$app', '$ver', 18446744073709551615)"
check "a signature's devices read sum_sig_keys" grep -q '"tk-moved"' <("$TK" top-hangs --db "$NEW" --signature "${SIGS[0]}" --detail --json)
h=$(chq "SELECT key FROM tknew.sum_sig_keys WHERE signature = '${SIGS[1]}' AND what = 2 AND key != '' ORDER BY n DESC, key LIMIT 1")
chq "INSERT INTO tknew.sum_sig_keys SELECT signature, what, key, kind, app, version, 7 FROM tknew.sum_sig_keys WHERE signature = '${SIGS[1]}' AND what = 2 AND key = '$h' LIMIT 1"
"$TK" top-hangs --db "$NEW" --signature "${SIGS[1]}" --folded >"$TMP/moved.got"
"$TK" top-hangs --db "$NEW" --signature "${SIGS[1]}" --folded --since 86400 >"$TMP/moved.want"
check "a signature's merged stacks read sum_sig_keys (7 more of one stack: heavier)" python3 - "$TMP/moved.want" "$TMP/moved.got" <<'PY'
import sys
w = [sum(int(l.rsplit(" ", 1)[1]) for l in open(f)) for f in sys.argv[1:]]
assert w[1] > w[0] > 0, w
PY

# a summary off from the reports (a device row added by hand) is not read: the answer stays the reports'
"$TK" top-hangs --db "$NEW" --signature "${SIGS[0]}" --detail --json --since 86400 >"$TMP/drift.want"
chq "INSERT INTO tknew.sum_sig_keys VALUES ('$(printf %s "${SIGS[0]}" | sed "s/'/\\\\'/g")', 0, 'no such device', 'hang', 'Atlas', '5.1', 3)"
"$TK" top-hangs --db "$NEW" --signature "${SIGS[0]}" --detail --json >"$TMP/drift.got"
check "the drifted summary shows in its table" test "$(chq "SELECT count() FROM tknew.sum_sig_keys WHERE key = 'no such device'")" = 1
check_same_file "a summary whose totals differ from the reports' is not read" "$TMP/drift.want" "$TMP/drift.got"
