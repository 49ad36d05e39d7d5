#!/bin/bash
# SQLite schema 11's per-signature summaries (lib/store/sqlite.c: sig_groups, sig_values, sig_keys,
# sig_upto) and per-hour values (hour_runs), summed from the reports past sig_upto when a query first
# reads them. Checked against the
# reports themselves: after ingests with queries between them (each query catches up with what the
# ingest before it added), the tables equal the reports' own aggregate (their definition, in SQL); a
# schema-9 store that migrates holds the same rows, as does a compacted one; and every answer read
# from them equals the same answer computed from the reports (a --since before every report selects
# the same reports but is not a filter the summaries hold, so they are read): a signature's detail
# and merged stacks, top lists under a version or an app, percentiles by hour, and the dashboard's
# compare and signature pages (the compare page's version and range sides, whose ranges cut days).
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
SRV_PID=
trap '[ -n "$SRV_PID" ] && { kill $SRV_PID; wait $SRV_PID; } 2>/dev/null; rm -rf "$TMP"' EXIT
tk_fork_start
G="$TMP/gen"
"$STOREGEN" "$G" 20 20 11 --cpu 2 --foreground --versions 3 --days 3 >/dev/null || notok "storegen"
NEW="$TMP/new.db" OLD="$TMP/old.db"
"$TK" ingest -q --db "sqlite:$NEW" "$G"/s000000[0-4]
"$TK" top-hangs --db "sqlite:$NEW" --where version=5.1 >/dev/null # sums what is stored so far
"$TK" ingest -q --db "sqlite:$NEW" "$G"
"$TK" ingest -q --db "sqlite:$NEW" "$G"/s000000[2-4] # stored already: adds nothing
SIG=$("$TK" top-hangs --db "sqlite:$NEW" --json --limit 1 | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["signature"])')
# a query that reads the summaries, so they are current before the tables are compared
"$TK" top-hangs --db "sqlite:$NEW" --signature "$SIG" --detail >/dev/null
check_eq "sqlite: schema 12" "12" "$(sqlite3 "$NEW" "PRAGMA user_version")"
check_eq "sig_upto is the last report's rowid" "$(sqlite3 "$NEW" "SELECT max(rowid) FROM reports")" "$(sqlite3 "$NEW" "SELECT upto FROM sig_upto")"
SUM="SELECT 'g', sid, kind, app, version, NULL, NULL, n FROM sig_groups
UNION ALL SELECT 'v', sid, kind, app, version, NULL, value, n FROM sig_values
UNION ALL SELECT 'k', sid, kind, app, version, what, quote(key), n FROM sig_keys ORDER BY 1, 2, 3, 4, 5, 6, 7"
DEF="WITH r AS (SELECT * FROM reports WHERE duration IS NOT NULL AND sid IS NOT NULL)
SELECT 'g', sid, kind, app, version, NULL, NULL, count(*) FROM r GROUP BY sid, kind, app, version
UNION ALL SELECT 'v', sid, kind, app, version, NULL, duration, count(*) FROM r GROUP BY sid, kind, app, version, duration
UNION ALL SELECT 'k', sid, kind, app, version, 0, quote(device), count(*) FROM r GROUP BY sid, kind, app, version, device
UNION ALL SELECT 'k', sid, kind, app, version, 1, quote(session), count(*) FROM r GROUP BY sid, kind, app, version, session
UNION ALL SELECT 'k', sid, kind, app, version, 2, quote(stack), count(*) FROM r WHERE stack IS NOT NULL GROUP BY sid, kind, app, version, stack
UNION ALL SELECT 'k', sid, kind, app, version, 3, quote(id), 1 FROM (SELECT *, row_number() OVER (PARTITION BY sid, kind, app, version ORDER BY id) AS o FROM r) WHERE o <= 16
ORDER BY 1, 2, 3, 4, 5, 6, 7"
check_eq "the summaries caught up between ingests equal the reports' aggregate" "$(sqlite3 "$NEW" "$DEF")" "$(sqlite3 "$NEW" "$SUM")"
# hour_runs: per (column, kind, app, version, day) the values of each hour with their counts, sorted
hours_check() { # DB: hour_runs decoded equals the reports' own counts per (column, kind, app, version, hour, value)
	python3 - "$1" <<'PY'
import sqlite3, struct, sys
c = sqlite3.connect(sys.argv[1])
got = {}
for col, kind, app, ver, day, runs in c.execute("SELECT col, kind, app, version, day, runs FROM hour_runs"):
    e = [struct.unpack("<BdI", runs[i:i + 13]) for i in range(0, len(runs), 13)]
    assert len(runs) % 13 == 0 and e == sorted(e) and all(0 <= h < 24 and n > 0 for h, v, n in e), (day, e[:5])
    for h, v, n in e:
        k = (col, kind, app, ver, day * 24 + h, v)
        assert k not in got, k
        got[k] = n
b = "(CAST(time AS INTEGER) - (CAST(time AS INTEGER) < 0) * 3599) / 3600"
want = {r[:6]: r[6] for r in c.execute(
    f"SELECT 0, kind, app, version, {b}, duration, count(*) FROM reports WHERE duration IS NOT NULL GROUP BY 1, 2, 3, 4, 5, 6 "
    f"UNION ALL SELECT 1, kind, app, version, {b}, avg_cpu, count(*) FROM reports WHERE avg_cpu IS NOT NULL GROUP BY 1, 2, 3, 4, 5, 6")}
assert want and got == want, (len(got), len(want), sorted(set(got.items()) ^ set(want.items()))[:5])
PY
}
check "hour_runs caught up between ingests equals the reports' counts per hour" hours_check "$NEW"
check "the fleet has several signatures, versions, kinds, and more than 16 reports in a group" test \
	"$(sqlite3 "$NEW" "SELECT (SELECT count(DISTINCT sid) > 5 AND count(DISTINCT version) = 3 AND count(DISTINCT kind) > 1 FROM reports) AND (SELECT max(n) > 16 FROM sig_groups)")" = 1

# a store at schema 9 (made from an 11 one: its tables dropped) migrates, then takes the rest
"$TK" ingest -q --db "sqlite:$OLD" "$G"/s000000[0-5]
sqlite3 "$OLD" "DROP TABLE sig_groups; DROP TABLE sig_values; DROP TABLE sig_keys; DROP TABLE sig_upto; PRAGMA user_version = 9;"
"$TK" ingest -q --db "sqlite:$OLD" "$G"
"$TK" top-hangs --db "sqlite:$OLD" --where version=5.1 >/dev/null
check_eq "sqlite: schema 9 migrates to 12" "12" "$(sqlite3 "$OLD" "PRAGMA user_version")"
check_eq "the migrated summaries plus later ingests equal the reports' aggregate" "$(sqlite3 "$OLD" "$DEF")" "$(sqlite3 "$OLD" "$SUM")"
check "the migrated hour_runs plus later ingests equals the reports' counts per hour" hours_check "$OLD"
"$TK" store compact --db "sqlite:$OLD" >/dev/null
check_eq "after compact (rowids renumbered) the summaries are summed again" "$(sqlite3 "$OLD" "$DEF")" "$(sqlite3 "$OLD" "$SUM")"
check "after compact hour_runs equals the reports' counts per hour" hours_check "$OLD"
check_eq "after compact sig_upto is the last report's rowid" "$(sqlite3 "$OLD" "SELECT max(rowid) FROM reports")" "$(sqlite3 "$OLD" "SELECT upto FROM sig_upto")"

# answers from the summaries equal the same answers from the reports (--since 86400: every report)
sig_queries "sqlite:$NEW"
QS+=("top-hangs|--json" "top-hangs|--json|--where|version=5.0" "top-hangs|--json|--limit|3|--where|app=Atlas"
	"top-hangs|--json|--where|app=Atlas,version=5.2" "top-diagnostics|--kind|cpu|--json|--where|version=5.1"
	"top-hangs|--signature|${SIGS[0]}|--detail|--json|--examples|40" "stats|--metric|cpu.average|--by|app,hour|--json")
same_answers "sqlite:$NEW" "sqlite:$OLD" "${QS[@]}"

# the dashboard's compare (two versions; two date ranges cutting days) and signature pages: their
# tables the same with and without a since= before every report
serve_dashboard "sqlite:$NEW"
tables() { curl -s -f "$BASE$1" | python3 -c 'import re,sys; t=re.findall(r"<table id=.*?</table>", re.sub(r" href=\"[^\"]*\"", "", sys.stdin.read()), re.S); print("\n".join(t) if t else "NO TABLE")'; }
T0=$(sqlite3 "$NEW" "SELECT CAST(min(time) AS INTEGER) + 30000, CAST(min(time) AS INTEGER) + 120000 FROM reports" | tr '|' ' ')
read -r C1 C2 <<<"$T0"
SIGQ=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "${SIGS[1]}")
for u in "/compare?a=5.0&b=5.1" "/compare?a=5.2&b=5.0&app=Atlas" "/compare?a_since=$C1&a_until=$C2&b_since=$C2" \
	"/signature?kind=hang&sig=$SIGQ" "/signature?kind=hang&sig=$SIGQ&version=5.2" "/stacks?version=5.1"; do
	want=$(tables "$u&since=86400") got=$(tables "$u")
	check "the page $u has its tables" test "$got" != "NO TABLE"
	check_eq "the page $u reads the same from the summaries" "$want" "$got"
done
kill $SRV_PID && wait $SRV_PID 2>/dev/null
SRV_PID=
if grep -q "Sanitizer\|runtime error" "$TMP/serve.log"; then notok "serve ran clean" "$(grep -m3 "Sanitizer\|runtime error" "$TMP/serve.log")"; fi
