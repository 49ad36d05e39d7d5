#!/bin/bash
# tracekit stats and tracekit diff end to end. Oracles: exact rational type 7 percentiles
# (tests/cli/stats_oracle.py, cross-checked with python's statistics.quantiles(method='inclusive')),
# Records with hand-chosen durations, generated profiles whose function weights the generator knows
# (tests/cli/mkprofile.py writes them and their truth).
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
OR="python3 $TK_ROOT/tests/cli/stats_oracle.py"
MK="python3 $TK_ROOT/tests/cli/mkprofile.py"

# ---- exact percentiles against the type 7 definition ----
python3 - "$TMP" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(8)
sets = {
    "ties": [str(r.randint(0, 20)) for _ in range(1001)],
    "decimals": ["%.3f" % r.lognormvariate(0, 2) for _ in range(5000)],
    "negative": ["%.6g" % r.gauss(0, 1e3) for _ in range(777)],
    "one": ["3.25"],
    "two": ["1", "2"],
    "equal": ["0.1"] * 500,
    "big": ["%.17g" % r.uniform(-1e300, 1e300) for _ in range(100)],
    "tiny": ["%.17g" % (r.random() * 1e-300) for _ in range(100)],
}
for k, v in sets.items():
    with open(f"{d}/{k}.txt", "w") as f:
        f.write("# a comment line\n\n" + "\n".join(v) + "\n")
EOF
for s in ties decimals negative one two equal big tiny; do
	$OR summary "$TMP/$s.txt" value ms >"$TMP/$s.exp"
	"$TK" stats --values --unit ms --json "$TMP/$s.txt" >"$TMP/$s.got" 2>"$TMP/$s.err"
	check "stats --json equals the type 7 definition exactly: $s" $OR compare "$TMP/$s.exp" "$TMP/$s.got"
done
check_eq "JSON keys in the issue's order" \
	'{"metric": "value", "unit": "ms", "count": 2, "mean": 1.5, "min": 1, "p50": 1.5, "p90": 1.9, "p95": 1.95, "p99": 1.99, "p99.9": 1.999, "max": 2}' \
	"$(cat "$TMP/two.got")"
gzip -c "$TMP/ties.txt" >"$TMP/ties.txt.gz"
check "gzip'd and standard-input numbers give the same summary" bash -c \
	"'$TK' stats --values --unit ms --json '$TMP/ties.txt.gz' | cmp -s - '$TMP/ties.got' &&
	 '$TK' stats --values --unit ms --json - <'$TMP/ties.txt' | cmp -s - '$TMP/ties.got'"
cat "$TMP/ties.txt" "$TMP/decimals.txt" >"$TMP/both.txt"
$OR summary "$TMP/both.txt" value "" >"$TMP/both.exp"
"$TK" stats --values --json "$TMP/ties.txt" "$TMP/decimals.txt" >"$TMP/both.got"
check "several inputs pool their values" $OR compare "$TMP/both.exp" "$TMP/both.got"
"$TK" stats --values --csv "$TMP/two.txt" >"$TMP/two.csv"
check_eq "--csv: header and one row" "metric,unit,count,mean,weighted_mean,min,p50,p90,p95,p99,p99.9,max,method|value,,2,1.5,,1,1.5,1.9,1.95,1.99,1.999,2,exact" \
	"$(paste -sd'|' "$TMP/two.csv")"
"$TK" stats --values "$TMP/decimals.txt" >"$TMP/dec.txt"
check "text output names the method and draws bars" bash -c "grep -q 'exact percentiles (type 7)' '$TMP/dec.txt' && grep -q '█' '$TMP/dec.txt'"

# ---- past the memory limit: the sketch, within 1 % ----
python3 -c "
import random
r = random.Random(3)
for k in range(3):
    with open('$TMP/part%d.txt' % k, 'w') as f:
        f.write('\n'.join('%.6g' % r.lognormvariate(2 + k, 1.5) for _ in range(40000)) + '\n')"
cat "$TMP"/part*.txt >"$TMP/parts.txt"
$OR summary "$TMP/parts.txt" value "" >"$TMP/parts.exp"
"$TK" stats --values --memory-limit 1 --json "$TMP/parts.txt" >"$TMP/parts.sk" 2>"$TMP/parts.err"
check "--memory-limit 1: percentiles within 1 % of exact" $OR within "$TMP/parts.exp" "$TMP/parts.sk" 0.01
check "--memory-limit 1: stderr says the sketch was used" grep -q "from the sketch" "$TMP/parts.err"
"$TK" stats --values --memory-limit 1 "$TMP/parts.txt" >"$TMP/parts.text"
check "text output says the sketch was used" grep -q "percentiles from the sketch (within 1 % of exact)" "$TMP/parts.text"
for k in 0 1 2; do "$TK" stats --values --sketch-out "$TMP/p$k.sketch" "$TMP/part$k.txt" >/dev/null; done
"$TK" stats --json --sketch-in "$TMP/p0.sketch" --sketch-in "$TMP/p1.sketch" --sketch-in "$TMP/p2.sketch" >"$TMP/merged.json"
check "three sketches merged (--sketch-in): within 1 % of exact over all values" $OR within "$TMP/parts.exp" "$TMP/merged.json" 0.01
"$TK" stats --values --sketch --json "$TMP/parts.txt" >"$TMP/onepass.json"
check "merged sketches equal one sketch over everything (the mean to the last bit)" $OR compare "$TMP/onepass.json" "$TMP/merged.json"
"$TK" stats --values --json --sketch-in "$TMP/p2.sketch" "$TMP/part0.txt" "$TMP/part1.txt" >"$TMP/mixed.json"
check "values and a sketch mix" $OR compare "$TMP/onepass.json" "$TMP/mixed.json"
sed 's/^count .*/count 5/' "$TMP/p0.sketch" >"$TMP/bad.sketch"
check_fails "a damaged sketch is an error" "$TK" stats --sketch-in "$TMP/bad.sketch"
"$TK" stats --sketch-in "$TMP/bad.sketch" 2>"$TMP/bad.err"
check "its error names the file and line" grep -q "bad.sketch:[0-9]*: the count does not equal" "$TMP/bad.err"

# ---- bad inputs ----
printf '1\n2\nthree\n' >"$TMP/bad.txt"
"$TK" stats --values "$TMP/bad.txt" >/dev/null 2>"$TMP/err"
check_eq "a bad number stops the run with file:line" "tracekit: stats: $TMP/bad.txt:3: 'three' is not a finite number" "$(cat "$TMP/err")"
printf 'nan\n' >"$TMP/nan.txt"
check_fails "nan is refused" "$TK" stats --values "$TMP/nan.txt"
check_fails "a missing input is an error" "$TK" stats --values "$TMP/nope.txt" "$TMP/two.txt"
"$TK" stats --values --keep-going --json "$TMP/nope.txt" "$TMP/two.txt" >"$TMP/kg.json" 2>"$TMP/kg.err"
check "--keep-going skips it and says so" bash -c "cmp -s '$TMP/kg.json' '$TMP/two.got' || diff <(sed 's/\"unit\": \"\"/\"unit\": \"ms\"/' '$TMP/kg.json') '$TMP/two.got'"
check "--keep-going names the skipped input" grep -q "skipped: .*nope.txt" "$TMP/kg.err"
check_fails "unknown metric" "$TK" stats --metric cpu.bogus "$TMP/two.txt"
check_fails "--json with --csv" "$TK" stats --values --json --csv "$TMP/two.txt"

# ---- CPU and hang records ----
{ echo "collection,key,value"
  i=0; for d in 61.5 64.5 69.5 76.5 85.5 96.5 109.5; do i=$((i + 1))
	echo "cpu-highload,70000000$i.00,{\"start\":\"70000000$i.00\",\"lasting\":\"$d\",\"average\":\"$((80 + i * 7))\"}"
  done; } >"$TMP/records"
printf '%s\n' 61.5 64.5 69.5 76.5 85.5 96.5 109.5 >"$TMP/dur.txt"
$OR summary "$TMP/dur.txt" cpu.duration s >"$TMP/dur.exp"
"$TK" stats --json "$TMP/records" >"$TMP/dur.got"
check "cpu.duration (the default for Records) per record" $OR compare "$TMP/dur.exp" "$TMP/dur.got"
"$TK" stats --metric cpu.average --csv "$TMP/records" >"$TMP/avg.csv"
# weighted mean by duration: Σ avg·dur / Σ dur, computed here independently
want=$(python3 -c "
d=[61.5,64.5,69.5,76.5,85.5,96.5,109.5]; a=[80+7*i for i in range(1,8)]
print(repr(sum(x*y for x,y in zip(a,d))/sum(d)))")
got=$(tail -1 "$TMP/avg.csv" | cut -d, -f5)
check "cpu.average weighted mean by duration" python3 -c "import sys; a,b=float('$want'),float('$got'); sys.exit(abs(a-b) > 1e-12*a)"
{ echo "collection,key,value"
  echo 'hang,1764000001.000,{"thread":"main","tid":1,"start":1764000001.0,"duration_ms":2500,"samples":0}'
  echo 'hang,1764000005.000,{"thread":"main","tid":1,"start":1764000005.0,"duration_ms":750,"samples":0}'; } >"$TMP/hangs"
check_eq "hang.duration per hang (count, mean, min, max in s)" '2|1.625|0.75|2.5' \
	"$("$TK" stats --metric hang.duration --csv "$TMP/hangs" | tail -1 | cut -d, -f3,4,6,12 | tr , '|')"

# ---- per-profile metrics on generated exports ----
$MK "$TMP/g1.xml" --seed 1 --rows 1500
$MK "$TMP/g2.xml" --seed 2 --rows 2500
$MK "$TMP/g3.xml" --seed 3 --rows 1000 --inject hash_table_insert:400:decode_json
check_eq "profile.weight per input (ns)" '3|1400000000|1500000000|2500000000' \
	"$("$TK" stats --csv "$TMP"/g[123].xml | tail -1 | cut -d, -f3,6,7,12 | tr , '|')"
# fn.self:NAME = the generator's self rows of NAME × 1 ms
self_rows() { awk -v f="$2" '$1 == f { print $2 }' "$1.truth"; }
s1=$(self_rows "$TMP/g1.xml" hash_table_insert); s2=$(self_rows "$TMP/g2.xml" hash_table_insert); s3=$(self_rows "$TMP/g3.xml" hash_table_insert)
printf '%s\n' $((s1 * 1000000)) $((s2 * 1000000)) $((s3 * 1000000)) >"$TMP/fn.txt"
$OR summary "$TMP/fn.txt" fn.self:hash_table_insert ns >"$TMP/fn.exp"
"$TK" stats --metric fn.self:hash_table_insert --json "$TMP"/g[123].xml >"$TMP/fn.got"
check "fn.self:NAME per input equals the generator's truth" $OR compare "$TMP/fn.exp" "$TMP/fn.got"
python3 -c "print(100*$s1/1500); print(100*$s2/2500); print(100*$s3/1400)" >"$TMP/share.txt"
$OR summary "$TMP/share.txt" fn.self:hash_table_insert % >"$TMP/share.exp"
"$TK" stats --metric fn.self:hash_table_insert --share --json "$TMP"/g[123].xml >"$TMP/share.got"
check "--share: % of each input's weight" $OR compare "$TMP/share.exp" "$TMP/share.got"
check_eq "thread.weight:NAME per input" "2500000000" \
	"$("$TK" stats --metric 'thread.weight:Main Thread' --csv "$TMP"/g[123].xml | tail -1 | cut -d, -f12)"
check_eq "a function absent from an input counts 0 there" '3|0|0' \
	"$("$TK" stats --metric fn.self:no_such_function --csv "$TMP"/g[123].xml | tail -1 | cut -d, -f3,6,12 | tr , '|')"

# ---- function spread ----
"$TK" stats --functions --json --limit 0 "$TMP"/g[123].xml >"$TMP/spread.json"
check "--functions: self p50/max of every function equal the truth's shares" python3 - "$TMP" <<'EOF'
import json, sys
from fractions import Fraction
d = sys.argv[1]
sp = json.load(open(f"{d}/spread.json"))
tot = {"g1": 1500, "g2": 2500, "g3": 1400}
truth = {}
for g in tot:
    for line in open(f"{d}/{g}.xml.truth"):
        name, rows = line.split()
        truth.setdefault(name, {})[g] = int(rows)
assert sp["profiles"] == 3 and sp["unit"] == "ns", sp
fns = {f["name"]: f for f in sp["functions"]}
for name, per in truth.items():
    shares = sorted(Fraction(100 * per.get(g, 0), tot[g]) for g in tot)
    assert abs(fns[name]["self_p50"] - float(shares[1])) < 1e-9, (name, fns[name], shares)
    assert abs(fns[name]["self_max"] - float(shares[2])) < 1e-9, (name, fns[name], shares)
# the heaviest input (g2) is the worst 5 %
assert sp["worst"]["profiles"] == [f"{d}/g2.xml"], sp["worst"]
EOF

# ---- diff ----
"$TK" diff --json "$TMP/g1.xml" "$TMP/g1.xml" >"$TMP/same.json"
check "diff X X: zero change everywhere, p null" python3 -c "
import json; d = json.load(open('$TMP/same.json'))['functions']
assert len(d) == 20, len(d)
assert all(f['self_a'] == f['self_b'] and f['total_a'] == f['total_b'] and f['p'] is None for f in d)
assert list(d[0].keys()) == ['name', 'self_a', 'self_b', 'total_a', 'total_b', 'p']"
"$TK" diff "$TMP/g1.xml" "$TMP/g1.xml" >"$TMP/same.txt"
check "diff X X text: every change is zero" bash -c "awk 'NR > 3 && /^ / && \$5 != \"+0.00\" { bad = 1 } END { exit bad }' '$TMP/same.txt'"
$MK "$TMP/b1.xml" --seed 1 --rows 1500 --inject sqlite_step:123:btree_search
"$TK" diff --json "$TMP/g1.xml" "$TMP/b1.xml" >"$TMP/inj.json"
check "an injected change is found first with the exact change (123 ms of self)" python3 -c "
import json; d = json.load(open('$TMP/inj.json'))['functions']
f = d[0]
assert f['name'] == 'sqlite_step', f
assert f['self_b'] - f['self_a'] == 123000000, f
assert f['total_b'] - f['total_a'] == 123000000, f
assert all(g['self_a'] == g['self_b'] for g in d[1:]), d[1]"
"$TK" diff "$TMP/g1.xml" "$TMP/b1.xml" --fail-if-slower 5 >/dev/null 2>"$TMP/gate.err"
check_eq "--fail-if-slower 5 exits 3 when a function grew more" 3 $?
check "and names it" grep -q "sqlite_step got slower" "$TMP/gate.err"
"$TK" diff "$TMP/g1.xml" "$TMP/g1.xml" --fail-if-slower 5 >/dev/null 2>&1
check_eq "--fail-if-slower exits 0 when nothing changed" 0 $?
# several runs a side: exact Mann-Whitney p = 2/C(10,5) when every B run is above every A run
for s in 1 2 3 4 5; do
	$MK "$TMP/ra$s.xml" --seed $s --noise 3
	$MK "$TMP/rb$s.xml" --seed $((s + 10)) --noise 3 --inject hash_table_insert:300:decode_json
done
"$TK" diff --json "$TMP"/ra?.xml -- "$TMP"/rb?.xml >"$TMP/runs.json"
check "5 runs a side: the injected function first, p = 2/252 (exact)" python3 -c "
import json; d = json.load(open('$TMP/runs.json'))['functions']
assert d[0]['name'] == 'hash_table_insert', d[0]
assert abs(d[0]['p'] - 2/252) < 1e-12, d[0]"
"$TK" diff "$TMP"/ra?.xml -- "$TMP"/rb?.xml --limit 3 >"$TMP/runs.txt"
check "text with several runs shows p and the bootstrap interval" bash -c "grep -q '95% CI' '$TMP/runs.txt' && grep -q '0.00794' '$TMP/runs.txt'"
"$TK" diff "$TMP"/ra?.xml -- "$TMP"/rb?.xml --fail-if-slower 50 >/dev/null 2>&1
rc50=$?
"$TK" diff "$TMP"/ra?.xml -- "$TMP"/ra?.xml --fail-if-slower 1 >/dev/null 2>&1
check_eq "--fail-if-slower: 3 for a significant growth, 0 for A vs A" "3 0" "$rc50 $?"
"$TK" diff "$TMP"/ra?.xml -- "$TMP"/rb?.xml --svg "$TMP/diff.svg" >/dev/null
check "--svg: a well-formed differential flame graph" python3 -c "
import xml.etree.ElementTree as ET; r = ET.parse('$TMP/diff.svg').getroot(); assert r.tag.endswith('svg')"
check "the grown path is red, others not" python3 -c "
import re; s = open('$TMP/diff.svg').read()
assert re.search(r'hash_table_insert', s)
fills = re.findall(r'fill=\"#([0-9a-f]{6})\"', s)
assert any(f.startswith('ff') and f[2:4] == f[4:6] and f != 'ffffff' for f in fills), fills[:20]"
check_fails "diff with an unreadable side fails" "$TK" diff "$TMP/g1.xml" "$TMP/nope.xml"
check_fails "diff with one input fails" "$TK" diff "$TMP/g1.xml"

# ---- SVG of a metric ----
"$TK" stats --values --svg "$TMP/dec.svg" "$TMP"/part[012].txt >/dev/null
check "stats --svg: well-formed, self-contained, percentiles marked" python3 -c "
import xml.etree.ElementTree as ET
t = ET.parse('$TMP/dec.svg'); s = open('$TMP/dec.svg').read()
assert 'href' not in s and '<script' not in s
texts = [e.text or '' for e in t.iter('{http://www.w3.org/2000/svg}text')]
for p in ('p50', 'p90', 'p95', 'p99', 'p99.9'):
    assert any(x.startswith(p + ' ') for x in texts), p
assert any('logarithmic' in x for x in texts)  # decimals span decades
assert sum(1 for x in texts if x.endswith('.txt') and 'part' in x) == 3  # a box per input"
