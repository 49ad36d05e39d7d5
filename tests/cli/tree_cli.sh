#!/bin/bash
# tree / top / collapse on the real xctrace fixtures, checked against independent oracles:
# inferno's folded output, JMH's per-row CSV, and thread totals recomputed from the XML (tree_oracle.py).
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
X="$FIX/xctrace"
O="python3 $TK_ROOT/tests/cli/tree_oracle.py"
REC="$X/time-profile_xcode26.4.1_tagged-backtrace_recursion_macos-arm64.xml"
MT="$X/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml"

for c in tree top collapse; do
	check "$c --help" "$TK" $c --help
	check_eq "$c --help documents the transforms" 1 "$("$TK" $c --help | grep -c -- '--hide-system')"
done

# collapse --no-thread vs inferno-collapse-xctrace (rows of 1 ms = 1000000 ns)
for n in time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust time-profile_xcode14.3plus_frames-without-binary_macos-arm64_rust; do
	"$TK" collapse --no-thread "$X/$n.xml" >"$TMP/$n.folded"
	check "collapse vs inferno: $n" $O folded-vs-inferno "$TMP/$n.folded" "$X/oracles/$n.inferno.folded" 1000000
done

# tree JSON: invariants at every node and per-thread totals recomputed from the XML rows
for f in "$X"/*.xml; do
	n=$(basename "$f" .xml)
	case $n in toc_* | *intervals* | *hang* | *hitches* | time-sample* | virtual-memory*) continue ;; esac
	"$TK" tree --json "$f" >"$TMP/t.json"
	check "tree --json totals: $n" $O tree-json "$TMP/t.json" "$f"
done
"$TK" tree --json --invert "$MT" >"$TMP/inv.json"
check "tree --json --invert totals" $O tree-json "$TMP/inv.json" "$MT"
"$TK" tree --json --min-percent 5 --max-depth 3 "$MT" >"$TMP/pr.json"
check "tree --json pruned totals" $O tree-json "$TMP/pr.json" "$MT"
check_eq "pruned tree: nothing deeper than max-depth + 1" 4 "$(python3 -c '
import json,sys
d=json.load(open(sys.argv[1])); m=0
st=[(r,1) for g in d["threads"] for r in g["root"]]
while st:
    n,k=st.pop(); m=max(m,k); st+=[(c,k+1) for c in n["children"]]
print(m)' "$TMP/pr.json")"

# top: self per leaf symbol and the total vs JMH's per-row oracle
for n in counters-profile_xcode26.4.1_pmc-events_sentinel-stack_macos-arm64 cpu-profile_xcode26.4.1_tagged-backtrace_cycle-weight_unsymbolicated_macos-arm64 time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented time-profile_xcode26.4.1_tagged-backtrace_recursion_macos-arm64; do
	"$TK" top --json "$X/$n.xml" >"$TMP/top.json"
	check "top vs JMH: $n" $O top-vs-jmh "$TMP/top.json" "$X/oracles/$n.jmh-leaf.csv"
done
# the pre-14.3 export has no symbols in its frames (JMH takes them from fmt): compare the total only
P=time-profile_pre-xcode14.3_text-addresses-fragments_macos-arm64_reindented
"$TK" top --json "$X/$P.xml" >"$TMP/top.json"
check "top vs JMH total: $P" $O top-vs-jmh "$TMP/top.json" "$X/oracles/$P.jmh-leaf.csv" - - total

# time range: the same oracle restricted to 650 ms <= t < 700 ms, in two spellings
"$TK" top --json --time-from 650ms --time-to 0.7s "$REC" >"$TMP/top.json"
check "top --time-from/--time-to vs JMH" $O top-vs-jmh "$TMP/top.json" "$X/oracles/$(basename "$REC" .xml).jmh-leaf.csv" 650000000 700000000
"$TK" top --json --time-from 00:00.650 --time-to 700000us "$REC" >"$TMP/top2.json"
check_same_file "MM:SS.mmm and us spellings agree" "$TMP/top.json" "$TMP/top2.json"

check_eq "empty time range warns" 1 "$("$TK" top --time-from 00:01.5 "$REC" 2>&1 >/dev/null | grep -c 'no samples in the requested time range')"

# transforms on the recursion fixture (start → main → a → b → c, plus a deep dyld recursion);
# expected folded stacks worked out by hand from `tracekit tree`
"$TK" collapse --no-thread --hide-system "$REC" >"$TMP/hs"
printf '(no stack) 1000000\nmain;a;b 1000000\nmain;a;b;c 83000000\n' >"$TMP/want"
check_same_file "collapse --hide-system" "$TMP/want" "$TMP/hs"
"$TK" collapse --no-thread --focus b "$REC" >"$TMP/fo"
printf 'b 1000000\nb;c 83000000\n' >"$TMP/want"
check_same_file "collapse --focus b" "$TMP/want" "$TMP/fo"
"$TK" collapse --no-thread --focus 'a.out`b' --merge c "$REC" >"$TMP/fo"
printf 'b 84000000\n' >"$TMP/want"
check_same_file "collapse --focus a.out\`b --merge c" "$TMP/want" "$TMP/fo"
"$TK" collapse --no-thread --focus 'dyld`b' "$REC" >"$TMP/fo" 2>"$TMP/err"
check_eq "focus on another binary's b keeps nothing" "0" "$(wc -c <"$TMP/fo")"
check_eq "... and warns" 1 "$(grep -c 'no samples are left' "$TMP/err")"
"$TK" collapse --no-thread --exclude c --merge-binary dyld "$REC" >"$TMP/ex"
printf '(no stack) 1000000\nmain;a;b 1000000\n' >"$TMP/want"
check_same_file "collapse --exclude c --merge-binary dyld" "$TMP/want" "$TMP/ex"
"$TK" collapse --flatten-recursion "$REC" >"$TMP/fl"
check_eq "flatten: no frame directly repeated" 0 "$(grep -cE '(^|;)([^;]+);\2(;| [0-9]+$)' "$TMP/fl")"
check_eq "flatten: unflattened input does repeat frames" 1 "$("$TK" collapse "$REC" | grep -cE '(^|;)([^;]+);\2(;| [0-9]+$)')"
check_eq "flatten keeps the total" 85000000 "$(awk '{s+=$NF} END {print s}' "$TMP/fl")"
check_eq "collapse: thread frame first" "Main Thread tid=20860147;start;main;a;b 1000000" "$(grep ';b 1000000$' "$TMP/fl")"

NB="$X/time-profile_xcode14.3plus_frames-without-binary_macos-arm64_rust.xml"
"$TK" collapse --no-thread --hide-unsymbolicated "$NB" >"$TMP/hu"
check_eq "--hide-unsymbolicated: no hex frame left" 0 "$(grep -c '0x' "$TMP/hu")"
check_eq "--hide-unsymbolicated: the 2-frame hex stack becomes (no stack)" "(no stack) 1000000" "$(head -1 "$TMP/hu")"
check_eq "--hide-unsymbolicated keeps the total" 9716000000 "$(awk '{s+=$NF} END {printf "%.0f", s}' "$TMP/hu")"

# grouping and thread/process filters on the 10-thread export
check_eq "--by all: one group" 1 "$("$TK" tree --json --by all "$MT" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["threads"]))')"
check_eq "--by process: total of all threads" 105000000 "$("$TK" tree --json --by process "$MT" | python3 -c 'import json,sys; print(sum(g["total"] for g in json.load(sys.stdin)["threads"]))')"
tid=$("$TK" tree --json "$MT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["threads"][0]["tid"])')
check_eq "--thread TID keeps that thread" "$tid" "$("$TK" tree --json --thread "$tid" "$MT" | python3 -c 'import json,sys; print(" ".join(str(g["tid"]) for g in json.load(sys.stdin)["threads"]))')"
check_eq "--process java keeps everything" 105000000 "$("$TK" top --json --process java "$MT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')"

# text output, top options, output file, gzip and standard input
check_eq "tree text header" "Thread Main Thread (tid 20860147), process a.out (pid 34963): 85.00 ms, 85 samples" "$("$TK" tree "$REC" | head -1)"
check_eq "tree --max-depth 2 text" "         84.00   98.8%          84.00  │  └─ (other)" "$("$TK" tree --max-depth 2 "$REC" | sed -n 5p)"
check_eq "top --limit 3 --sort total: header, 3 rows, a \"more\" line" 6 "$("$TK" top --limit 3 --sort total "$REC" | wc -l)"
check_eq "top text: c is the hottest" "c  [a.out]" "$("$TK" top "$REC" | sed -n 3p | sed 's/.*%  *[0-9]*  //')"
"$TK" collapse -o "$TMP/out.folded" "$REC"
"$TK" collapse "$REC" >"$TMP/stdout.folded"
check_same_file "-o writes the same as standard output" "$TMP/stdout.folded" "$TMP/out.folded"
gzip -c "$REC" >"$TMP/rec.xml.gz"
"$TK" collapse - <"$TMP/rec.xml.gz" >"$TMP/stdin.folded"
check_same_file "gzip'd standard input" "$TMP/stdout.folded" "$TMP/stdin.folded"

# errors: one line, exit 1, no crash
check_fails "missing file" "$TK" tree "$TMP/nope.xml"
check_eq "missing file: one line" 1 "$("$TK" tree "$TMP/nope.xml" 2>&1 | wc -l)"
check_fails "no input" "$TK" collapse
check_fails "unknown option" "$TK" top --frobnicate "$REC"
check_fails "bad --by" "$TK" tree --by core "$REC"
check_fails "bad --min-percent" "$TK" tree --min-percent 101 "$REC"
check_fails "bad --max-depth" "$TK" tree --max-depth -1 "$REC"
check_fails "time without a unit" "$TK" tree --time-from 5 "$REC"
check_fails "time range reversed" "$TK" tree --time-from 2s --time-to 1s "$REC"
check_fails "empty --focus" "$TK" tree --focus '' "$REC"
check_fails "malformed BINARY\`FUNC" "$TK" tree --merge 'dyld`' "$REC"
check_fails "two inputs" "$TK" tree "$REC" "$MT"
check_fails "missing option value" "$TK" tree "$REC" --focus
check_eq "bad option: one line" 1 "$("$TK" tree --by core "$REC" 2>&1 | wc -l)"
printf '<?xml version="1.0"?><trace-query-result><node><schema name="time-profile">' >"$TMP/trunc.xml"
check_fails "truncated XML" "$TK" collapse "$TMP/trunc.xml"
