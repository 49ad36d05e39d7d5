#!/bin/bash
# Text inputs (Instruments Deep Copy, macOS `sample`, `perf script`, folded stacks): each fixture's
# totals equal the numbers written in its own text, read independently by tests/cli/text_oracle.py;
# folded → model → folded is the identity; gzip and stdin; one-line errors naming FILE:LINE.
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
O="$FIX/other"
ORACLE="$TK_ROOT/tests/cli/text_oracle.py"

unit_of() { "$TK" info --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["unit"])'; }
# "TID WEIGHT" per thread from info --json
threads_of() {
	"$TK" info --json "$1" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
for p in d["processes"]:
    for t in p["threads"]:
        print(t["tid"], t["weight"])' | sort -n
}

# ---- Deep Copy: every node against the text (Σ self cells exactly, top rows within the text's rounding)
for f in "$O"/deep-copy_*.txt; do
	n=$(basename "$f")
	if ! "$TK" tree --json "$f" >"$TMP/t.json" 2>"$TMP/err"; then notok "deep copy $n" "$(cat "$TMP/err")"; continue; fi
	r=$(python3 "$ORACLE" deepcopy "$f" "$TMP/t.json" 2>&1)
	case "$r" in ok*) ok "deep copy $n: $r" ;; *) notok "deep copy $n" "$r" ;; esac
done
check_eq "deep copy units: 16.0 time" ns "$(unit_of "$O/deep-copy_instruments16.0_time-profile_speedscope.txt")"
check_eq "deep copy units: 13.4 cycles" cycles "$(unit_of "$O/deep-copy_instruments13.4_cpu-counters-cycles_speedscope.txt")"
check_eq "deep copy units: 7.3.1 allocations" bytes "$(unit_of "$O/deep-copy_instruments7.3.1_allocations_speedscope.txt")"
# the 13.4 copy's root row is a process: it becomes the process, not a frame
check_eq "deep copy 13.4: process row → pid 40414 example_app" "40414 example_app" \
	"$("$TK" info --json "$O/deep-copy_instruments13.4_cpu-counters-cycles_speedscope.txt" |
		python3 -c 'import json,sys; p=json.load(sys.stdin)["processes"][0]; print(p["pid"], p["name"])')"
# Allocations: the text's top row is 429.93 MB = 450814279.68 bytes; counts are exact
check_eq "deep copy allocations: total bytes and allocation count" "450814280 84671" \
	"$("$TK" info --json "$O/deep-copy_instruments7.3.1_allocations_speedscope.txt" |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["weight"], d["samples"])')"

# ---- sample: thread totals = the call graph's thread counts; self counts = "Sort by top of stack"
for f in "$O"/sample_*; do
	n=$(basename "$f")
	python3 "$ORACLE" sample-threads "$f" | sort -n >"$TMP/want"
	threads_of "$f" >"$TMP/got" 2>&1
	check_same_file "sample $n: every thread's total = its Thread_ row count ($(wc -l <"$TMP/want") threads)" "$TMP/want" "$TMP/got"
done
f="$O/sample_macos10.14_firefox-plugin-container_full.txt.gz"
python3 "$ORACLE" sample-top "$f" | sort >"$TMP/want"
"$TK" top --json --limit 0 "$f" | python3 -c '
import json, sys
for fn in json.load(sys.stdin)["functions"]:
    if fn["self"] >= 5:
        print("%s\t%s\t%d" % (fn["name"], fn.get("binary", ""), fn["self"]))' |
	sort >"$TMP/got"
check_same_file "sample full: self counts = its \"Sort by top of stack\" section ($(wc -l <"$TMP/want") functions)" "$TMP/want" "$TMP/got"
# Binary Images → binaries with path, UUID, load address
"$TK" info --json "$f" >"$TMP/i.json"
check_eq "sample full: Binary Images count" "$(sed -n '/^Binary Images:/,$p' <(zcat "$f") | grep -c ' <[0-9A-F-]*> ')" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["binary-images"])' "$TMP/i.json")"

# ---- perf script: samples per thread and per leaf symbol = the text's sample headers
for f in "$O"/perf-script_*.txt; do
	n=$(basename "$f")
	python3 "$ORACLE" perf-threads "$f" >"$TMP/want"
	threads_of "$f" >"$TMP/got" 2>&1
	check_same_file "perf $n: samples per thread ($(awk '{s+=$2} END {print s}' "$TMP/want") samples)" "$TMP/want" "$TMP/got"
	python3 "$ORACLE" perf-leaves "$f" >"$TMP/want"
	"$TK" top --json --limit 0 "$f" | python3 -c '
import json, sys
agg = {}
for fn in json.load(sys.stdin)["functions"]:
    if fn["self"]:
        k = "[unknown]" if fn["name"].startswith("0x") else fn["name"]
        agg[k] = agg.get(k, 0) + fn["self"]
for k in sorted(agg):
    print(k, agg[k])' >"$TMP/got"
	check_same_file "perf $n: samples per leaf symbol" "$TMP/want" "$TMP/got"
done
check_eq "perf: unit" samples "$(unit_of "$O/perf-script_linux6.1_spin-userspace_generated.txt")"

# ---- folded: ours round-trips byte for byte; FlameGraph/inferno lines too (no thread frame added)
for f in "$FIX"/xctrace/*-profile_*.xml "$FIX"/xctrace/time-sample_*.xml; do
	n=$(basename "$f")
	"$TK" collapse "$f" >"$TMP/a.folded" 2>/dev/null || continue
	"$TK" collapse "$TMP/a.folded" >"$TMP/b.folded" 2>"$TMP/err"
	check_same_file "folded round trip (ours, from $n)" "$TMP/a.folded" "$TMP/b.folded"
done
"$TK" collapse "$FIX/xctrace/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml" >"$TMP/a.folded"
python3 "$ORACLE" folded-threads "$TMP/a.folded" | awk '{print $(NF-1), $NF}' | sort -n >"$TMP/want"
threads_of "$TMP/a.folded" >"$TMP/got"
check_same_file "folded: thread frames become threads with the lines' totals" "$TMP/want" "$TMP/got"
for f in "$FIX"/xctrace/oracles/*.inferno.folded; do
	"$TK" collapse "$f" >"$TMP/b.folded" 2>"$TMP/err"
	check_same_file "folded round trip (inferno's, $(basename "$f"))" "$f" "$TMP/b.folded"
done
# every other text format → folded → model → folded is stable
for f in "$O"/deep-copy_*.txt "$O"/sample_* "$O"/perf-script_*.txt; do
	"$TK" collapse "$f" >"$TMP/a.folded" 2>/dev/null
	"$TK" collapse "$TMP/a.folded" >"$TMP/b.folded"
	check_same_file "folded round trip from $(basename "$f")" "$TMP/a.folded" "$TMP/b.folded"
done

# ---- gzip and stdin read the same
f="$O/deep-copy_instruments16.0_time-profile_speedscope.txt"
"$TK" collapse "$f" >"$TMP/a"
gzip -c "$f" >"$TMP/d.txt.gz"
"$TK" collapse "$TMP/d.txt.gz" >"$TMP/b"
check_same_file "deep copy gzip'd" "$TMP/a" "$TMP/b"
"$TK" collapse - <"$f" >"$TMP/c"
check_same_file "deep copy on stdin" "$TMP/a" "$TMP/c"
f="$O/perf-script_linux6.1_spin-userspace_generated.txt"
"$TK" collapse "$f" >"$TMP/a"
"$TK" collapse - <"$f" >"$TMP/b"
check_same_file "perf script on stdin" "$TMP/a" "$TMP/b"
# time filters apply to perf script (its samples have times)
all=$("$TK" info --json "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
first=$("$TK" tree --json --time-to 100ms "$f" | python3 -c 'import json,sys; print(sum(t["samples"] for t in json.load(sys.stdin)["threads"]))')
want=$(python3 -c '
import re, sys
ts = [float(m.group(1)) for m in re.finditer(r"^\S.* (\d+\.\d+):", open(sys.argv[1]).read(), re.M)]
print(sum(1 for t in ts if t - ts[0] < 0.1))' "$f")
check_eq "perf script --time-to 100ms keeps the samples of the first 100 ms (of $all)" "$want" "$first"

# ---- errors: one line naming FILE:LINE, non-zero exit, no crash
bad() { # NAME CONTENT EXPECTED-SUBSTRING
	printf '%s' "$2" >"$TMP/bad.txt"
	"$TK" tree "$TMP/bad.txt" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -qF "$3" "$TMP/err"; then
		ok "error: $1"
	else
		notok "error: $1" "rc=$rc $(cat "$TMP/err")"
	fi
}
bad "deep copy row too deep" $'Weight\tSelf Weight\tSymbol Names\n1.00 ms  1%\t0 s\tmain\n1.00 ms  1%\t0 s\t   x\n' \
	"bad.txt:3: indented 3 levels below the previous row's"
bad "deep copy unknown unit" $'Weight\tSelf Weight\tSymbol Names\n1.00 furlongs  1%\t0 s\tmain\n' 'bad.txt:2: unknown weight unit "furlongs"'
bad "sample child count above parent" $'Analysis of sampling x (pid 1) every 1 millisecond\nCall graph:\n    2 Thread_9\n    + 3 f  (in x)  [0x1]\n' \
	"bad.txt:4: count 3 is more than the 2 left of its caller's (line 3)"
bad "perf frame outside a sample" $'# header\nsleep 1 1.0: 1 cpu-clock: \n\t1 a (b)\n\n\t2 c (d)\n' "bad.txt:5: a frame outside a sample"
bad "folded non-numeric count in the body" "$(for i in $(seq 700); do echo 'a;b 1'; done; echo 'a;b x')" "bad.txt:701: expected \`frame;frame;… COUNT\`"
