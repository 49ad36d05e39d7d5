#!/bin/bash
# Sampling profilers' text: every shape `perf script` prints (with and without -g, without the time
# field, several events in one file, --weight period), simpleperf's text (report-sample and
# report_sample.py, old and new) and DTrace stack aggregations (ustack(), stack()+ustack(), hex
# frames). Truth comes from elsewhere: tests/cli/perf_oracle.py reads the same recording printed with
# every field, or sums the numbers in the file; inferno's own expected output for its fixtures.
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
P="$FIX/perf"
ORACLE="$TK_ROOT/tests/cli/perf_oracle.py"
REF2="$P/perf-script_linux6.1_spin-two-events-all-fields-ns_generated.txt"
REF1="$P/perf-script_linux6.1_spin-no-callchain-all-fields-ns_generated.txt"

# FIELD… of info --json (after the options given), one line. The same FILE and OPTIONS are read
# once: their output is kept in $TMP for the next question about other fields.
info() { # FILE [OPTIONS…] -- FIELD…
	local f=$1; shift
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	local out="$TMP/info.$(printf '%s\0' "$f" "${opts[@]}" | md5sum | cut -c1-32)"
	[ -e "$out" ] || "$TK" info --json "${opts[@]}" "$f" >"$out" 2>&1
	python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except Exception:
    print("not JSON"); sys.exit()
print(" ".join(str(d.get(k)) for k in sys.argv[1:]))' "$@" <"$out"
}
threads_of() { # FILE [OPTIONS…]
	local f=$1; shift
	"$TK" info --json "$@" "$f" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["processes"]:
    for t in p["threads"]:
        print(t["tid"], t["samples"])' | sort -n
}
leaves_of() { # FILE [OPTIONS…]: leaf symbol → samples ([unknown] for address-only frames)
	local f=$1; shift
	"$TK" top --json --limit 0 "$@" "$f" | python3 -c '
import json, sys
agg = {}
for fn in json.load(sys.stdin)["functions"]:
    if fn["self_samples"] if "self_samples" in fn else fn["self"]:
        k = "[unknown]" if fn["name"].startswith("0x") else fn["name"]
        agg[k] = agg.get(k, 0) + (fn["self_samples"] if "self_samples" in fn else fn["self"])
for k in sorted(agg):
    print(k, agg[k])'
}

# ---- the same recording (perf record -g -e task-clock,cpu-clock) in every layout
read -r E1 N1 W1 <<<"$(python3 "$ORACLE" events "$REF2" | sed -n 1p)"
read -r E2 N2 W2 <<<"$(python3 "$ORACLE" events "$REF2" | sed -n 2p)"
[ -n "$E2" ] || notok "the two-event recording has two events" "$(python3 "$ORACLE" events "$REF2")"
for f in "$REF2" "$P"/perf-script_linux6.1_spin-two-events_generated.txt \
	"$P"/perf-script_linux6.1_spin-two-events-no-time_generated.txt "$P"/simpleperf-*.txt; do
	n=$(basename "$f")
	want_format=perf-script
	case $n in simpleperf-report-sample*) want_format=simpleperf-report-sample ;; esac
	check_eq "$n: read as $want_format" "$want_format" "$(info "$f" -- format)"
	check_eq "$n: the first event only ($E1: $N1 samples), never the sum of both" "samples $N1 $N1" \
		"$(info "$f" -- unit samples weight)"
	check_eq "$n: info lists both events with their sample counts" "$E1 ($N1 samples), $E2 ($N2 samples)" \
		"$(info "$f" -- events)"
	check_eq "$n: --event $E2 reads the other one" "$N2 $N2" "$(info "$f" --event "$E2" -- samples weight)"
	check_eq "$n: --weight period sums $E2's periods (ns, as FlameGraph/inferno)" "ns $N2 $W2" \
		"$(info "$f" --event "$E2" --weight period -- unit samples weight)"
	python3 "$ORACLE" threads "$REF2" "$E1" >"$TMP/want"
	threads_of "$f" >"$TMP/got"
	check_same_file "$n: samples per thread" "$TMP/want" "$TMP/got"
	python3 "$ORACLE" leaves "$REF2" "$E2" >"$TMP/want"
	leaves_of "$f" --event "$E2" >"$TMP/got"
	check_same_file "$n: samples per leaf symbol ($E2)" "$TMP/want" "$TMP/got"
done

check_eq "--event $E2:ppp (perf's modifiers) is $E2" "$N2" \
	"$(info "$P/perf-script_linux6.1_spin-two-events_generated.txt" --event "$E2:ppp" -- samples)"

# ---- without -g: one line per sample, the comm right-padded (starts with blanks)
read -r E N W <<<"$(python3 "$ORACLE" events "$REF1")"
check_eq "no -g fixture: the comm is padded with leading blanks" "1" \
	"$(grep -c '^ \+spin ' "$P/perf-script_linux6.1_spin-no-callchain_generated.txt" | awk '{print ($1 > 0)}')"
for f in "$REF1" "$P"/perf-script_linux6.1_spin-no-callchain_generated.txt \
	"$P"/perf-script_linux6.1_spin-no-callchain-no-time_generated.txt; do
	n=$(basename "$f")
	check_eq "$n: every sample ($N), --weight period = Σ period ($W ns)" "$N $N / ns $W" \
		"$(info "$f" -- samples weight) / $(info "$f" --weight period -- unit weight)"
	python3 "$ORACLE" leaves "$REF1" "$E" >"$TMP/want"
	leaves_of "$f" >"$TMP/got"
	check_same_file "$n: samples per leaf symbol" "$TMP/want" "$TMP/got"
done

# ---- without the time field: file order, no time span; a time filter names the cure
f="$P/perf-script_linux6.1_spin-no-callchain-no-time_generated.txt"
check_eq "no time field: no time span in info" "None" "$(info "$f" -- time_first_ns)"
"$TK" tree --time-to 10ms "$f" >/dev/null 2>"$TMP/err"
check_eq "no time field + --time-to: one line naming the line and the cure" \
	"tracekit: $f:1: no time field, so --time-from/--time-to cannot apply: re-run \`perf script -F +time\`" "$(cat "$TMP/err")"
check_eq "with time: --time-to keeps the first 100 ms (oracle: times in the text)" \
	"$(python3 -c '
import re, sys
ts = [float(m.group(1)) for m in re.finditer(r"^\s*\S.* (\d+\.\d+):", open(sys.argv[1]).read(), re.M)]
print(sum(1 for t in ts if t - ts[0] < 0.1))' "$P/perf-script_linux6.1_spin-no-callchain_generated.txt")" \
	"$("$TK" tree --json --time-to 100ms "$P/perf-script_linux6.1_spin-no-callchain_generated.txt" |
		python3 -c 'import json,sys; print(sum(t["samples"] for t in json.load(sys.stdin)["threads"]))')"

# ---- inferno's own no -g fixture against inferno's expected output
f="$P/perf-script_no-callchain_single-line-stacks_inferno.txt"
sed 's/^[^;]*;//' "$P/perf-script_no-callchain_single-line-stacks_inferno.expected.folded" | sort >"$TMP/want"
"$TK" collapse "$f" | sed 's/^[^;]*;//; s/^0x[0-9a-f]* /[unknown] /' | sort >"$TMP/got"
check_same_file "inferno single-line-stacks (cycles:u and cycles are one event): inferno's stacks and counts" "$TMP/want" "$TMP/got"
check_eq "inferno single-line-stacks: comm false" "false" "$("$TK" info --json "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["processes"][0]["threads"][0]["name"])')"

# ---- DTrace: inferno's fixtures against inferno's expected output; ours against the oracle
for base in dtrace-ustack_macos_java-hex-addresses_inferno dtrace-stack-ustack_illumos_crucible_inferno; do
	f="$P/$base.txt"
	check_eq "$base: read as a DTrace aggregation" dtrace-aggregation "$(info "$f" -- format)"
	"$TK" collapse "$f" >"$TMP/ours.folded"
	check_eq "$base: total and Σ count×depth = inferno's expected output" \
		"$(python3 "$ORACLE" folded "$P/$base.expected.folded")" "$(python3 "$ORACLE" folded "$TMP/ours.folded")"
	check_eq "$base: total and Σ count×depth = the text's counts" \
		"$(python3 "$ORACLE" dtrace "$f")" "$(python3 "$ORACLE" folded "$TMP/ours.folded")"
	python3 "$ORACLE" folded-leafmods "$P/$base.expected.folded" >"$TMP/want"
	"$TK" top --json --limit 0 "$f" | python3 -c '
import json, sys
agg = {}
for fn in json.load(sys.stdin)["functions"]:
    if fn["self"]:
        k = fn.get("binary") or "-"
        agg[k] = agg.get(k, 0) + fn["self"]
for k in sorted(agg):
    print(k, agg[k])' >"$TMP/got"
	check_same_file "$base: samples per leaf module = inferno's" "$TMP/want" "$TMP/got"
done
f="$P/dtrace-ustack_from-perf-spin-first-event.txt"
check_eq "dtrace from the recording's $E1 samples: total and Σ depth = the all-fields recording's" \
	"$N1 $(python3 "$ORACLE" depth "$REF2" "$E1")" "$("$TK" collapse "$f" | python3 "$ORACLE" folded /dev/stdin)"

# ---- every analysis command takes --event/--weight
f="$P/perf-script_linux6.1_spin-two-events_generated.txt"
check_eq "stats --event $E2 --weight period: profile.weight = Σ period" "$W2" \
	"$("$TK" stats --json --metric profile.weight --event "$E2" --weight period "$f" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["max"]))')"
for cmd in tree top collapse; do
	check "$cmd --event $E2 --weight period" "$TK" "$cmd" --event "$E2" --weight period "$f"
done
check_eq "collapse --event $E2 --weight period: Σ = Σ period" "$W2" \
	"$("$TK" collapse --event "$E2" --weight period "$f" | awk '{s += $NF} END {print s}')"
check_fails "--weight bogus is a usage error" "$TK" top --weight bogus "$f"

# ---- a file that is clearly one format with one bad line names the line
bad() { # NAME FILE EXPECTED-SUBSTRING [OPTIONS…]
	local n=$1 f=$2 want=$3; shift 3
	"$TK" tree "$@" "$f" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -qF -- "$want" "$TMP/err"; then
		ok "error: $n"
	else
		notok "error: $n" "rc=$rc $(cat "$TMP/err")"
	fi
}
src="$P/perf-script_linux6.1_spin-two-events_generated.txt"
awk 'NR == 40 {print "\tnot a frame at all"; next} {print}' "$src" >"$TMP/bad-frame.txt"
bad "perf: a bad frame line" "$TMP/bad-frame.txt" "bad-frame.txt:40: expected a frame"
awk '!done && NR > 5 && /^$/ {print; print "garbage header without anything"; done = 1; next} {print}' "$src" >"$TMP/bad-header.txt"
ln=$(grep -n '^garbage' "$TMP/bad-header.txt" | cut -d: -f1)
bad "perf: a bad header line" "$TMP/bad-header.txt" "bad-header.txt:$ln: expected a sample header"
sed -E 's/^( *spin +[0-9]+) +[0-9]+ /\1 /' "$P/perf-script_linux6.1_spin-no-callchain-no-time_generated.txt" >"$TMP/noperiod.txt"
bad "perf: no period field and --weight period" "$TMP/noperiod.txt" "noperiod.txt:1: no period field, so --weight period cannot apply: re-run \`perf script -F +period\`" --weight period
bad "perf: --event that is not in the file lists the events" "$src" "no samples of event \`nope\`; the file has $E1 ($N1 samples), $E2 ($N2 samples)" --event nope
head -n 25 "$P/dtrace-ustack_macos_java-hex-addresses_inferno.txt" >"$TMP/trunc.txt"
bad "dtrace: a stack without its count (truncated)" "$TMP/trunc.txt" "trunc.txt:21: the stack starting here has no count after it"
printf '\n  ustack sizes\n           value  ------------- Distribution ------------- count\n               8 |@@@@                                     3\n' >"$TMP/q.txt"
printf '              libc.so.1`_lwp_start\n              libc.so.1`_thrp_setup\n              a.out`main+0x1\n              a.out`f+0x2\n                3\n\n' >"$TMP/qq.txt"
cat "$TMP/qq.txt" "$TMP/q.txt" >"$TMP/quant.txt"
bad "dtrace: a quantize() distribution is named" "$TMP/quant.txt" "quant.txt:9: a DTrace quantize()/lquantize() distribution, not stacks"
awk '/vaddr_in_file/ && ++k == 3 {sub(/: .*/, ": zz")} {print}' "$P/simpleperf-report-sample_from-perf-spin-two-events.txt" >"$TMP/sp.txt"
ln=$(grep -n 'vaddr_in_file: zz' "$TMP/sp.txt" | head -1 | cut -d: -f1)
bad "simpleperf report-sample: a bad address" "$TMP/sp.txt" "sp.txt:$ln: vaddr_in_file: expected a hex address"
