#!/bin/bash
# SQLite schema 12's per-signature summaries by UTC day and hour (lib/store/sqlite.c: sig_days, sess_no),
# which answer date ranges (--since/--until, the dashboard's compare of two date ranges) with only the
# partial hours at a range's ends read from reports. Checked against the reports themselves: after
# ingests with queries between them (each query catches up with what the ingest before it added; the
# last ingest brings a session that spans midnight), sig_days decoded equals the reports' own counts
# per (signature, kind, app, version, day, hour): counts, values, sessions, least ids; a schema-11 store
# migrates to the reports' rows, as does a compacted one; and every date-range answer equals the same
# answer from the reports (a copy of the store whose summaries are marked unusable, sig_upto.hbad,
# so its queries read reports as before): top lists, percentiles, histograms, the compare page.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
SRV_PID=
trap '[ -n "$SRV_PID" ] && { kill $SRV_PID; wait $SRV_PID; } 2>/dev/null; rm -rf "$TMP"' EXIT
tk_fork_start
G="$TMP/gen"
"$STOREGEN" "$G" 20 20 11 --cpu 2 --foreground --versions 3 --days 3 >/dev/null || notok "storegen"
# one more session, ingested last: the reports of s0000001 (whose hangs span a UTC midnight) under
# another session name, so new reports on both sides of midnight arrive after the summaries caught up
L="$TMP/late/s-midnight"
mkdir -p "$TMP/late" && cp -r "$G/s0000001" "$L" && sed -i 's/"session":"[^"]*"/"session":"late-midnight"/' "$L/meta.json"
NEW="$TMP/new.db" OLD="$TMP/old.db" REF="$TMP/ref.db"
"$TK" ingest -q --db "sqlite:$NEW" "$G"/s000000[2-9]
"$TK" top-hangs --db "sqlite:$NEW" --since 86400 --until 4000000000 >/dev/null # sums what is stored so far
"$TK" ingest -q --db "sqlite:$NEW" "$G"
"$TK" stats --db "sqlite:$NEW" --metric hang.duration --since 86400 >/dev/null
"$TK" ingest -q --db "sqlite:$NEW" "$L"
"$TK" top-hangs --db "sqlite:$NEW" --since 86400 --json >/dev/null
check_eq "sqlite: schema 12" "12" "$(sqlite3 "$NEW" "PRAGMA user_version")"
check_eq "sig_upto is the last report's rowid" "$(sqlite3 "$NEW" "SELECT max(rowid) FROM reports")" "$(sqlite3 "$NEW" "SELECT upto FROM sig_upto")"
M=$(sqlite3 "$NEW" "SELECT (CAST(max(time) AS INTEGER) / 86400) * 86400 FROM reports WHERE session = 'late-midnight'")
check_eq "the late session has hangs on both sides of midnight $M" "1 1" \
	"$(sqlite3 "$NEW" "SELECT min(time) < $M, max(time) >= $M FROM reports WHERE session = 'late-midnight' AND kind = 'hang'" | tr '|' ' ')"

days_check() { # DB: sig_days decoded equals the reports' own counts per (sid, kind, app, version, day, hour)
	python3 - "$1" <<'PY'
import sqlite3, struct, sys
c = sqlite3.connect(sys.argv[1])
names = dict(c.execute("SELECT no, session FROM sess_no"))
assert len(set(names.values())) == len(names)
got = {}
for sid, kind, app, ver, day, n, hn, ex, sess, runs in c.execute("SELECT sid, kind, app, version, day, n, hn, ex, sess, runs FROM sig_days"):
    k = (sid, kind, app, ver, day)
    r = [struct.unpack("<BdI", runs[i:i + 13]) for i in range(0, len(runs), 13)]
    s = [struct.unpack("<II", sess[i:i + 8]) for i in range(0, len(sess), 8)]
    e = [(ex[i], ex[i + 1:i + 33]) for i in range(0, len(ex), 33)]
    assert len(runs) % 13 == 0 and r == sorted(r) and all(0 <= h < 24 and m > 0 for h, v, m in r), k
    assert len(sess) % 8 == 0 and s == sorted(s) and len({x for x, _ in s}) == len(s), k
    assert len(ex) % 33 == 0 and [h for h, _ in e] == sorted({h for h, _ in e}), k
    assert n == sum(m for _, _, m in r), k
    assert len(hn) == 96 and list(struct.unpack("<24I", hn)) == [sum(m for h, _, m in r if h == x) for x in range(24)], k
    got[k] = (sorted(r), sorted((names[x], m) for x, m in s), e)
b = "(CAST(time AS INTEGER) - (CAST(time AS INTEGER) < 0) * 3599) / 3600"
want = {}
rows = c.execute(f"SELECT sid, kind, app, version, {b}, duration, session, id FROM reports WHERE duration IS NOT NULL AND sid IS NOT NULL")
acc = {}
for sid, kind, app, ver, hr, v, ses, rid in rows:
    k = (sid, kind, app, ver, hr // 24)
    a = acc.setdefault(k, ({}, {}, {}))
    h = hr % 24
    a[0][(h, v)] = a[0].get((h, v), 0) + 1
    a[1][ses] = a[1].get(ses, 0) | 1 << h
    if h not in a[2] or rid < a[2][h]:
        a[2][h] = rid
for k, (vals, ses, least) in acc.items():
    want[k] = (sorted((h, v, m) for (h, v), m in vals.items()), sorted(ses.items()), sorted(least.items()))
assert want and got == want, (len(got), len(want), sorted(set(got) ^ set(want))[:5],
                              [k for k in got if k in want and got[k] != want[k]][:3])
PY
}
check "sig_days caught up between ingests equals the reports' counts per day and hour" days_check "$NEW"
check "the midnight session is in sig_days on both days" test "$(python3 - "$NEW" "$M" <<'PY'
import sqlite3, struct, sys
c = sqlite3.connect(sys.argv[1]); m = int(sys.argv[2]) // 86400
no, = c.execute("SELECT no FROM sess_no WHERE session = 'late-midnight'").fetchone()
days = set()
for day, sess in c.execute("SELECT day, sess FROM sig_days WHERE kind = 'hang'"):
    if any(struct.unpack("<I", sess[i:i + 4])[0] == no for i in range(0, len(sess), 8)):
        days.add(day)
print(int({m - 1, m} <= days))
PY
)" = 1

# a store at schema 11 (made from a 12 one: its tables dropped) migrates, then takes the rest
"$TK" ingest -q --db "sqlite:$OLD" "$G"/s000000[0-5]
"$TK" top-hangs --db "sqlite:$OLD" --where version=5.1 >/dev/null
sqlite3 "$OLD" "DROP TABLE sig_days; DROP TABLE sess_no; PRAGMA user_version = 11;"
"$TK" ingest -q --db "sqlite:$OLD" "$G" "$L"
"$TK" top-hangs --db "sqlite:$OLD" --since 86400 >/dev/null
check_eq "sqlite: schema 11 migrates to 12" "12" "$(sqlite3 "$OLD" "PRAGMA user_version")"
check "the migrated sig_days plus later ingests equals the reports' counts" days_check "$OLD"
"$TK" store compact --db "sqlite:$OLD" >/dev/null
check "after compact (rowids renumbered) sig_days is summed again" days_check "$OLD"

# the same store with its summaries marked unusable: every date range read from reports, as before
cp "$NEW" "$REF"
sqlite3 "$REF" "UPDATE sig_upto SET hbad = 1"
# ranges: cutting hours and the midnight, a whole day, within one hour, open at either end, the
# midnight itself as an end, and before every report
RANGES=("$((M - 5400))|$((M + 1234))" "$((M - 86400))|$((M))" "$((M + 600))|$((M + 1800))" "$((M + 3700))|"
	"|$((M - 100))" "86400|$((M + 7))" "$M|$((M + 86400 * 2 + 1))" "1000000000|1000003600")
QS=()
for r in "${RANGES[@]}"; do
	IFS='|' read -r s u <<<"$r"
	t=()
	[ -n "$s" ] && t+=(--since "$s")
	[ -n "$u" ] && t+=(--until "$u")
	t=$(IFS='|'; echo "${t[*]}")
	QS+=("top-hangs|--json|--limit|30|$t" "top-hangs|--json|--where|version=5.1|$t" "top-hangs|--json|--limit|3|--where|app=Atlas|$t"
		"top-diagnostics|--kind|cpu|--json|$t" "stats|--metric|hang.duration|--json|$t"
		"stats|--metric|cpu.duration|--by|version|--json|$t" "stats|--metric|cpu.average|--by|app,version|--json|$t"
		"stats|--metric|hang.duration|--where|version=5.2|--json|$t")
done
for a in "${QS[@]}"; do
	IFS='|' read -r -a w <<<"$a"
	tk_batch_add "$TMP/want.list" "${w[@]}" --db "sqlite:$REF"
	tk_batch_add "$TMP/got.list" "${w[@]}" --db "sqlite:$NEW"
done
for l in want got; do
	TK_BATCH_MARK=1 "$TK_BATCH" "$TMP/$l.list" 2>/dev/null | awk -v d="$TMP/$l" '/^tk_batch: line [0-9]+: exit/ { n++; print > (d "." n ".rc"); next } { print > (d "." n + 1 ".out") }'
done
nonempty=0 empties=
for i in "${!QS[@]}"; do
	n=$((i + 1)) a=${QS[$i]//|/ }
	if [ -s "$TMP/want.$n.out" ]; then nonempty=$((nonempty + 1)); else empties+="$a; "; fi
	check_eq "the day summaries answer $a as the reports do" "$(cat "$TMP/want.$n.out" 2>/dev/null)" "$(cat "$TMP/got.$n.out" 2>/dev/null)"
done
check "most range answers are not empty ($nonempty of ${#QS[@]}; empty: $empties)" test "$nonempty" -gt $((${#QS[@]} * 2 / 3))

# the dashboard's compare of two date ranges (and its stacks page under a range): the same bytes
PORT=$(free_port) PORT2=$(free_port)
: >"$TMP/serve.log"
"$TK" serve --ui --db "sqlite:$NEW" --listen "127.0.0.1:$PORT" 2>>"$TMP/serve.log" &
SRV_PID=$!
"$TK" serve --ui --db "sqlite:$REF" --listen "127.0.0.1:$PORT2" 2>>"$TMP/serve.log" &
SRV_PID="$SRV_PID $!"
while [ "$(grep -c "serving the dashboard" "$TMP/serve.log")" -lt 2 ]; do
	for p in $SRV_PID; do kill -0 "$p" 2>/dev/null || { notok "serve started"; exit 1; }; done
	sleep 0.05
done
for u in "/compare?a_since=$((M - 5400))&a_until=$((M + 1234))&b_since=$((M + 1234))" \
	"/compare?a_since=$((M - 86400))&a_until=$M&b_since=$M&b_until=$((M + 86400))&version=5.1" \
	"/compare?a_since=$((M + 600))&a_until=$((M + 1800))&b_since=1000000000&b_until=1000003600" \
	"/compare?a_until=$((M - 100))&b_since=$((M + 3700))&app=Atlas" "/stacks?since=$((M - 5400))&until=$((M + 1234))" \
	"/api/top?since=$((M - 5400))&until=$((M + 1234))&limit=30"; do
	curl -s -f -o "$TMP/got.body" "http://127.0.0.1:$PORT$u"
	curl -s -f -o "$TMP/want.body" "http://127.0.0.1:$PORT2$u"
	check "the page $u is not empty" test -s "$TMP/want.body"
	check "the page $u reads the same from the day summaries" cmp -s "$TMP/want.body" "$TMP/got.body"
done
kill $SRV_PID && wait $SRV_PID 2>/dev/null
SRV_PID=
if grep -q "Sanitizer\|runtime error" "$TMP/serve.log"; then notok "serve ran clean" "$(grep -m3 "Sanitizer\|runtime error" "$TMP/serve.log")"; fi
