#!/bin/bash
# `tracekit alert` on a generated fleet (bench/storegen: 10 versions over 14 days on 8 device models,
# one version regressed: as many hangs again on one stack, each 4x as long) in SQLite and ClickHouse:
# it reports exactly the injected regression (the one version breaking a P95 rule and a count rule,
# exit 3), a clean fleet exits 0, values equal an exact type 7 oracle over the generator's truth and
# `stats --db --json` for the same group, `since` counts what the truth says, bad rules give one line
# naming FILE:LINE, stored names reach the terminal escaped. Then a short seeded fuzz of the parser.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
tk_fork_start
G="$TMP/fleet" C="$TMP/clean"
"$STOREGEN" "$G" 120 4 11 --versions 10 --days 14 --devices 8 --regress 5.7 &&
	"$STOREGEN" "$C" 120 4 11 --versions 10 --days 14 --devices 8 || { notok "storegen"; exit 1; }
REG=$(cut -f1 "$G/regression.tsv")
check_eq "the generator says which version it regressed" "5.7" "$REG"
check_eq "a clean fleet has no regression file" "" "$(ls "$C/regression.tsv" 2>/dev/null)"

cat >"$TMP/rules" <<'EOF'
# release gate
p95(hang.duration) > 3 s by version     # Apple's P95, in seconds
count(hang.duration) > 60 by version
EOF

# The oracle: exact type 7 P95 (rational arithmetic, rounded once) and counts per version from the
# generator's truth.tsv, and which versions break each rule.
cat >"$TMP/oracle.py" <<'PY'
import sys
from fractions import Fraction as F
by = {}
for l in open(sys.argv[1]):
    ver, ms, sig = l.rstrip('\n').split('\t')
    by.setdefault(ver, []).append(float(ms) / 1000)
def p95(v):
    v = sorted(v); n = len(v)
    j, d = divmod((n - 1) * 95, 100)
    if j + 1 >= n: return v[-1]
    return float(F(v[j]) + F(d, 100) * (F(v[j + 1]) - F(v[j])))
for ver in sorted(by):
    if p95(by[ver]) > 3: print('2\t%s\t%r' % (ver, p95(by[ver])))
for ver in sorted(by):
    if len(by[ver]) > 60: print('3\t%s\t%r' % (ver, float(len(by[ver]))))
PY
# line, version, value of each breach as the CLI's JSON has it (values as Python reads them back)
cat >"$TMP/fromjson.py" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    print('%d\t%s\t%r' % (o['line'], o['group'].get('version', '(all)'), float(o['value'])))
PY
python3 "$TMP/oracle.py" "$G/truth.tsv" >"$TMP/oracle.tsv"
check_eq "the truth: only the regressed version breaks the P95 rule and the count rule" "2 $REG
3 $REG" "$(cut -f1,2 "$TMP/oracle.tsv" | tr '\t' ' ')"
python3 "$TMP/oracle.py" "$C/truth.tsv" >"$TMP/oracle.clean"
check_eq "the truth: no version of the clean fleet breaks a rule" "" "$(cat "$TMP/oracle.clean")"

start_clickhouse
for DB in "sqlite:$TMP/fleet.db" "$CH_URL/tk_alert"; do
	b=${DB%%:*}
	"$TK" ingest -q --db "$DB" "$G" 2>"$TMP/$b.ingest" || notok "$b: ingest" "$(cat "$TMP/$b.ingest")"
	"$TK" alert --db "$DB" --rules "$TMP/rules" --json >"$TMP/$b.json" 2>"$TMP/$b.err"
	check_eq "$b: alert exits 3 when a group breaks a rule" "3" "$?"
	python3 "$TMP/fromjson.py" "$TMP/$b.json" >"$TMP/$b.breaches"
	check_same_file "$b: alert reports exactly the injected regression, with the oracle's values" \
		"$TMP/oracle.tsv" "$TMP/$b.breaches"
	# the same group's numbers from `stats --db --json` (a separate query path and printer)
	"$TK" stats --db "$DB" --metric hang.duration --where "version=$REG" --json >"$TMP/$b.stats"
	python3 - "$TMP/$b.json" "$TMP/$b.stats" >"$TMP/$b.cmp" <<'PY'
import json, sys
st = json.loads(open(sys.argv[2]).read())
for l in open(sys.argv[1]):
    o = json.loads(l)
    want = st['p95'] if o['stat'] == 'p95' else st['count']
    print('%s %s %s' % (o['stat'], 'same' if o['value'] == want and o['count'] == st['count'] else 'DIFFERENT', o['value']))
PY
	check_eq "$b: values and counts equal stats --db --json for the group" "2" "$(grep -c ' same ' "$TMP/$b.cmp")"
	"$TK" alert --db "$DB" --rules "$TMP/rules" >"$TMP/$b.text"
	check_eq "$b: text: one line per breach, naming the rule's line, the group and the threshold" \
		"$TMP/rules:2: p95(hang.duration) > 3 s by version  version=$REG  $(printf '%.6g' "$(sed -n 1p "$TMP/oracle.tsv" | cut -f3)") s (threshold > 3 s, n=96)
$TMP/rules:3: count(hang.duration) > 60 by version  version=$REG  96 (threshold > 60, n=96)" "$(cat "$TMP/$b.text")"
	"$TK" alert --db "$DB" --rules "$TMP/rules" --where version=5.0 >"$TMP/$b.where"
	check_eq "$b: --where version=5.0: nothing breaks, exit 0" "0:" "$?:$(cat "$TMP/$b.where")"
done
check_same_file "sqlite and clickhouse give the same breaches" "$TMP/sqlite.json" "$TMP/clickhouse.json"
stop_clickhouse

"$TK" ingest -q --db "sqlite:$TMP/clean.db" "$C"
"$TK" alert --db "sqlite:$TMP/clean.db" --rules "$TMP/rules" >"$TMP/clean.out" 2>&1
check_eq "a clean fleet: no output, exit 0" "0:" "$?:$(cat "$TMP/clean.out")"

# since: counts per version of the hangs of the last day before --now, from fleet.tsv
NOW=1796210000
echo "count(hang.duration) > 0 since 1d by version" >"$TMP/since.rules"
"$TK" alert --db "sqlite:$TMP/fleet.db" --rules "$TMP/since.rules" --now $NOW --json >"$TMP/since.json"
python3 - "$G/fleet.tsv" $NOW >"$TMP/since.truth" <<'PY'
import sys
now = float(sys.argv[2]); c = {}
for l in open(sys.argv[1]):
    f = l.split('\t')
    if float(f[4]) >= now - 86400: c[f[1]] = c.get(f[1], 0) + 1
for v in sorted(c): print('1\t%s\t%r' % (v, float(c[v])))
PY
python3 "$TMP/fromjson.py" "$TMP/since.json" >"$TMP/since.got"
check "the truth has hangs in the last day of some versions only" test "$(wc -l <"$TMP/since.truth")" -ge 2 -a "$(wc -l <"$TMP/since.truth")" -lt 10
check_same_file "since 1d counts the hangs of the last day before --now" "$TMP/since.truth" "$TMP/since.got"

# a version name from an upload reaches the terminal escaped and the JSON valid
S="$TMP/evil"; cp -r "$G/s0000007" "$S"
printf '{"app":"Atlas","version":"5.7\\u001b[31m<script>","device":"x","os":"y","session":"evil-1"}' >"$S/meta.json"
"$TK" ingest -q --db "sqlite:$TMP/fleet.db" "$S"
echo "count(hang.duration) > 0 by version" >"$TMP/evil.rules"
"$TK" alert --db "sqlite:$TMP/fleet.db" --rules "$TMP/evil.rules" --where session=evil-1 >"$TMP/evil.text"
check "a stored escape sequence is shown as \\x1b, never raw" grep -qF 'version=5.7\x1b[31m<script>' "$TMP/evil.text"
check "no raw escape byte on the terminal" test "$(tr -cd '\033' <"$TMP/evil.text" | wc -c)" -eq 0
"$TK" alert --db "sqlite:$TMP/fleet.db" --rules "$TMP/evil.rules" --where session=evil-1 --json >"$TMP/evil.json"
check "the JSON keeps the name exactly" python3 -c 'import json,sys; o=json.loads(open(sys.argv[1]).read()); assert o["group"]["version"] == "5.7\x1b[31m<script>", o' "$TMP/evil.json"

# bad rules: one line naming FILE:LINE and the problem, exit 1 (tests/unit/test_alert.c has more)
bad() { # NAME RULE EXPECTED-PART
	printf '# ok so far\np95(hang.duration) > 3 s\n%s\n' "$2" >"$TMP/bad.rules"
	"$TK" alert --db "sqlite:$TMP/fleet.db" --rules "$TMP/bad.rules" >"$TMP/bad.out" 2>"$TMP/bad.err"
	local rc=$?
	if [ $rc -eq 1 ] && [ ! -s "$TMP/bad.out" ] && [ "$(wc -l <"$TMP/bad.err")" -eq 1 ] &&
		grep -qF "tracekit: alert: $TMP/bad.rules:3: $3" "$TMP/bad.err"; then ok "bad rule: $1"
	else notok "bad rule: $1" "rc=$rc $(cat "$TMP/bad.err" "$TMP/bad.out")"; fi
}
bad "a percentile the store does not compute" 'p97(hang.duration) > 2 s' "p97: the store computes the percentiles p50, p90, p95, p99 and p99.9"
bad "an unknown metric" 'p95(hang.length) > 2 s' "unknown metric 'hang.length'"
bad "a unit that is not the metric's" 'p95(hang.duration) > 2 %' "hang.duration is in s, the threshold in '%'"
bad "an unknown key" 'hang.duration > 2 s by colour' "by colour: 'colour' is not one of app, version"
bad "a date for since" 'hang.duration > 2 s since 1795000000' "since 1795000000: a rule takes a duration back from now"
bad "a control byte" $'hang.duration > 2 s\033[2J' "byte 0x1b at column 20: a rule is printable ASCII"
check_fails "no --rules is a usage error" "$TK" alert --db "sqlite:$TMP/fleet.db"
"$TK" alert --db "sqlite:$TMP/fleet.db" >/dev/null 2>&1
check_eq "no --rules exits 2" "2" "$?"
"$TK" alert --db "sqlite:$TMP/fleet.db" --rules "$TMP/rules" --no-such-option >"$TMP/uo" 2>"$TMP/ue"
check_eq "an unknown option: exit 2, one line, nothing on stdout" "2 1 0" "$? $(wc -l <"$TMP/ue") $(wc -c <"$TMP/uo")"
# profile metrics are in the profiles' unit: a threshold in another is an error naming the rule
"$TK" ingest -q --db "sqlite:$TMP/prof.db" "$FIX/xctrace/time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml"
printf '# profiles\nfn.self:main > 2 ms\n' >"$TMP/prof.rules"
"$TK" alert --db "sqlite:$TMP/prof.db" --rules "$TMP/prof.rules" >/dev/null 2>"$TMP/prof.err"
check_eq "a profile threshold in ms against weights in ns: exit 1, FILE:LINE: RULE: the units" \
	"1 tracekit: alert: $TMP/prof.rules:2: fn.self:main > 2 ms: the threshold is in ms, the stored values in ns" "$? $(cat "$TMP/prof.err")"
printf 'profile.weight > 1 ns\n' >"$TMP/prof.rules"
"$TK" alert --db "sqlite:$TMP/prof.db" --rules "$TMP/prof.rules" --json >"$TMP/prof.json"
"$TK" stats --db "sqlite:$TMP/prof.db" --metric profile.weight --json >"$TMP/prof.stats"
check "profile.weight > 1 ns: the mean stats --db gives" python3 -c 'import json,sys; a=json.loads(open(sys.argv[1]).read()); b=json.loads(open(sys.argv[2]).read()); assert a["value"] == b["mean"] and a["unit"] == "ns", (a, b)' "$TMP/prof.json" "$TMP/prof.stats"
printf 'p95(hang.duration) > 500 ms\n' >"$TMP/ms.rules"
"$TK" alert --db "sqlite:$TMP/fleet.db" --rules "$TMP/ms.rules" --json >"$TMP/ms.json"
check "a threshold in ms is compared in seconds" python3 -c 'import json,sys; o=json.loads(open(sys.argv[1]).read()); assert o["threshold"] == 0.5 and o["unit"] == "s", o' "$TMP/ms.json"

F="$TK_ROOT/$BUILD/fuzz_alert"
if [ -x "$F" ]; then
	mkdir -p "$TMP/corpus" && cp "$TK_ROOT"/tests/fuzz/corpus/alert/* "$TMP/corpus/"
	(cd "$TMP" && "$F" -seed=1 -runs=30000 -max_len=2048 "$TMP/corpus" >"$TMP/fuzz.log" 2>&1)
	if [ $? -eq 0 ] && grep -q "^Done 30000 runs" "$TMP/fuzz.log"; then ok "alert rules parser: 30000 fuzz runs, no crash"
	else notok "alert rules parser: 30000 fuzz runs, no crash" "$(grep -E 'ERROR|runtime error|SUMMARY|abort' "$TMP/fuzz.log" | head -5)"; fi
else
	notok "fuzz harness built ($F)"
fi
