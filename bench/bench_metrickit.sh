#!/bin/bash
# MetricKit (bench/bench_metrickit.sh): read N generated diagnostic payloads (JSON Lines as servers store
# them; bench/mxgen.py: a hang with 3 per-thread stacks and an aggregated CPU exception each, ~50 KB)
# into one profile, against Python's json module decoding and walking the same trees; symbolicate every
# frame of a payload pointing into a generated dylib against llvm-symbolizer on the same offsets.
# MX_SYM_ONLY=1: the symbolication part alone. TK_OLD=<another build's tracekit> (its bench/mx_symstep
# beside it, or TK_OLD_STEP): ROUNDS (3) more rounds alternating this build, that one and llvm-symbolizer.
set -u
N=10000
[ "${BENCH_QUICK:-0}" = 1 ] && N=1000
out="$BENCH_OUT/metrickit"
mkdir -p "$out"
f="$out/payloads-$N.jsonl"
cpu() { /usr/bin/time -f '%U %S %M' -o "$out/t" "$@" >/dev/null 2>&1; tail -1 "$out/t" | awk '{printf "%.2f %d", $1 + $2, $3 / 1024}'; }
if [ "${MX_SYM_ONLY:-0}" != 1 ]; then
[ -s "$f" ] || python3 bench/mxgen.py lines "$N" 1 >"$f"
mb=$(awk -v b="$(stat -L -c %s "$f")" 'BEGIN {printf "%.1f", b / 1e6}')
read -r tk_s tk_mb < <(cpu "$TK" info "$f")
read -r py_s py_mb < <(cpu python3 bench/mxgen.py peer "$f")
tk_rate=$(awk -v m="$mb" -v s="$tk_s" 'BEGIN {printf "%.0f", m / s}')
py_rate=$(awk -v m="$mb" -v s="$py_s" 'BEGIN {printf "%.0f", m / s}')
echo "read $N payloads ($mb MB): tracekit $tk_s s CPU ($tk_rate MB/s, $tk_mb MB RSS); python json $py_s s CPU ($py_rate MB/s, $py_mb MB RSS)"
printf 'metrickit\tread %s payloads (%s MB JSON Lines) into one profile\t%s MB/s, %s MB RSS\tpython json (decode + walk) %s MB/s, %s MB\t%sx\t>= 150 MB/s: %s\n' \
	"$N" "$mb" "$tk_rate" "$tk_mb" "$py_rate" "$py_mb" "$(awk -v a="$py_s" -v b="$tk_s" 'BEGIN {printf "%.1f", a / b}')" \
	"$([ "$tk_rate" -ge 150 ] && echo met || echo missed)" >>"$BENCH_SUMMARY"

# memory follows distinct content, not payloads: the first N/10 payloads ten times over (N payloads,
# a tenth of the stacks) against the N distinct ones above and the N/10 alone. What stays per payload
# is each diagnostic's own threads and self counts (records/tree answer per diagnostic).
r="$out/repeat-$N.jsonl"
head -n $((N / 10)) "$f" >"$out/first-$((N / 10)).jsonl"
[ -s "$r" ] || for i in 1 2 3 4 5 6 7 8 9 10; do cat "$out/first-$((N / 10)).jsonl"; done >"$r"
read -r rp_s rp_mb < <(cpu "$TK" info "$r")
read -r f1_s f1_mb < <(cpu "$TK" info "$out/first-$((N / 10)).jsonl")
echo "memory: $N payloads of $((N / 10)) distinct: $rp_mb MB RSS ($rp_s s); $N distinct: $tk_mb MB; the $((N / 10)) alone: $f1_mb MB"
printf 'metrickit\tread %s payloads that repeat %s distinct ones 10x (memory follows distinct content)\t%s MB RSS, %s s CPU\t%s distinct payloads: %s MB; the %s alone: %s MB\t-\tRSS by distinct stacks (+ each diagnostic'"'"'s own self counts)\n' \
	"$N" "$((N / 10))" "$rp_mb" "$rp_s" "$N" "$tk_mb" "$((N / 10))" "$f1_mb" >>"$BENCH_SUMMARY"

# ingest: the same N payloads into a fresh SQLite store (every diagnostic a report), against Python's
# json + sqlite3 storing one row per diagnostic with a five-frame signature (bench/mxgen.py ingest-peer)
rm -f "$out/ingest.db"* "$out/peer.db"
read -r is_s is_mb < <(cpu "$TK" ingest -q --db "sqlite:$out/ingest.db" "$f")
read -r ps_s ps_mb < <(cpu python3 bench/mxgen.py ingest-peer "$f" "$out/peer.db")
stored=$(sqlite3 "$out/ingest.db" 'SELECT count(*) FROM reports')
is_rate=$(awk -v n="$N" -v s="$is_s" 'BEGIN {printf "%.0f", n / s}')
ps_rate=$(awk -v n="$N" -v s="$ps_s" 'BEGIN {printf "%.0f", n / s}')
echo "ingest $N payloads ($stored reports): tracekit $is_s s CPU ($is_rate payloads/s, $is_mb MB RSS); python json+sqlite3 $ps_s s CPU ($ps_rate payloads/s, $ps_mb MB)"
printf 'metrickit\tingest %s payloads (%s MB JSON Lines, %s reports) into SQLite\t%s payloads/s, %s MB RSS\tpython json + sqlite3 %s payloads/s, %s MB\t%sx\t>= 2,000 payloads/s: %s\n' \
	"$N" "$mb" "$stored" "$is_rate" "$is_mb" "$ps_rate" "$ps_mb" "$(awk -v a="$ps_s" -v b="$is_s" 'BEGIN {printf "%.1f", a / b}')" \
	"$([ "$is_rate" -ge 2000 ] && echo met || echo missed)" >>"$BENCH_SUMMARY"
# RSS against the input's size: the first N/10 and 3N/10 payloads into fresh stores, beside the N above
# (ingest bounds SQLite's page cache and maps no store: tk_store_limit_memory)
rss=""
for k in $((N / 10)) $((3 * N / 10)); do
	rm -f "$out/ingest-$k.db"*
	head -n "$k" "$f" >"$out/ingest-first-$k.jsonl"
	read -r _ k_mb < <(cpu "$TK" ingest -q --db "sqlite:$out/ingest-$k.db" "$out/ingest-first-$k.jsonl")
	rss="$rss$k: $k_mb MB, "
	rm -f "$out/ingest-$k.db"* "$out/ingest-first-$k.jsonl"
done
echo "ingest RSS by input size: ${rss}$N: $is_mb MB"
printf 'metrickit\tingest RSS by input size (fresh store each)\t%s%s: %s MB\t-\t-\tRSS flat in the input (bounded by one batch of reports + an 8 MiB page cache)\n' \
	"$rss" "$N" "$is_mb" >>"$BENCH_SUMMARY"

fi # MX_SYM_ONLY

# symbolication: 100,000 frames (10,000 with --quick) into a generated dylib: the generator writes two
# diagnostics over one tree of F frames, so F = 50,000 gives 100,000 frames (a 43 MB payload; 100,000
# would pass the reader's 64 MB limit for one payload)
F=50000
[ "${BENCH_QUICK:-0}" = 1 ] && F=5000
g="$out/dylib"
[ -s "$g/layout.tsv" ] || python3 tests/symgen/tksymgen.py build --out "$g" --n 2000 --files 8 --seed 5 --arch arm64 >/dev/null
dwarf=$(ls "$g"/libtks-arm64.dylib.dSYM/Contents/Resources/DWARF/*)
p="$out/sym-$F.json"
[ -s "$p" ] || TK="$TK" python3 tests/cli/metrickit_symbols.py make "$g/layout.tsv" "$dwarf" "$p" "$out/sym-$F.want" --frames "$F" >/dev/null
frames=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); n=0
for k in ("hangDiagnostics","crashDiagnostics"):
    for x in d[k]:
        st=list(x["callStackTree"]["callStacks"][0]["callStackRootFrames"])
        while st:
            f=st.pop(); n+=1; st.extend(f.get("subFrames",()))
print(n)' "$p")
python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
st=list(d["hangDiagnostics"][0]["callStackTree"]["callStacks"][0]["callStackRootFrames"]) + list(d["crashDiagnostics"][0]["callStackTree"]["callStacks"][0]["callStackRootFrames"])
out=[]
while st:
    f=st.pop(); st.extend(f.get("subFrames",()))
    if f["binaryName"] == "libtks-arm64.dylib":
        out.append("0x%x" % ((f["address"] - 0x104A8C000) - (1 if f.get("subFrames") else 0)))
open(sys.argv[2],"w").write("\n".join(out) + "\n")' "$p" "$out/sym-addrs.txt"
export TRACEKIT_CACHE_DIR="$out/cache"
"$TK" symcache build "$g/libtks-arm64.dylib.dSYM" >/dev/null 2>&1
read -r tks tkm < <(cpu "$TK" collapse --symbols "$g/libtks-arm64.dylib.dSYM" "$p")
read -r tkr tkrm < <(cpu "$TK" info "$p")     # reading the payload alone
read -r tkc tkcm < <(cpu "$TK" collapse "$p") # reading + the folded output, no symbols
read -r lls llm < <(cpu sh -c "llvm-symbolizer --inlining --obj='$dwarf' <'$out/sym-addrs.txt'")
# the symbolication step alone, two ways: collapse --symbols minus collapse (which also counts the
# longer, deeper folded output of named frames), and in process (bench/mx_symstep.c: best CPU of 3,
# the derived profile as before and in place as --symbols runs it)
make --no-print-directory -s BUILD="$BUILD" "$BUILD/bench/mx_symstep" >/dev/null
read -r _ derive_s _ take_s _ _ < <("$BUILD/bench/mx_symstep" "$p" "$g/libtks-arm64.dylib.dSYM")
iratio=$(awk -v a="$lls" -v b="$take_s" 'BEGIN {printf "%.1f", a / (b > 0 ? b : 0.001)}')
echo "symbolication step in process: in place $take_s s CPU (derived profile, as before: $derive_s s) = ${iratio}x llvm-symbolizer"
step=$(awk -v a="$tks" -v b="$tkc" 'BEGIN {d = a - b; printf "%.2f", (d > 0.01 ? d : 0.01)}')
echo "symbolicate $frames frames: tracekit $tks s CPU ($tkm MB; reading the $(awk -v b="$(stat -c %s "$p")" 'BEGIN {printf "%.0f", b / 1e6}') MB payload alone $tkr s, collapse without symbols $tkc s, so the symbolication step $step s), llvm-symbolizer $lls s CPU ($llm MB)"
ratio=$(awk -v a="$lls" -v b="$tks" 'BEGIN {printf "%.1f", a / (b > 0 ? b : 0.01)}')
sratio=$(awk -v a="$lls" -v b="$step" 'BEGIN {printf "%.1f", a / b}')
echo "  ratio to llvm-symbolizer: end to end ${ratio}x, the symbolication step alone ${sratio}x"
printf 'metrickit\tsymbolicate %s MetricKit frames (collapse --symbols, cache built)\t%s s CPU, %s MB (reading alone %s s; collapse without symbols %s s; the difference %s s; the step in process %s s, derived as before %s s)\tllvm-symbolizer %s s CPU, %s MB\t%sx end to end, %sx by the difference, %sx the step in process\t>= 20x: %s end to end, %s the step in process\n' \
	"$frames" "$tks" "$tkm" "$tkr" "$tkc" "$step" "$take_s" "$derive_s" "$lls" "$llm" "$ratio" "$sratio" "$iratio" \
	"$(awk -v r="$ratio" 'BEGIN {print (r >= 20 ? "met" : "missed")}')" "$(awk -v r="$iratio" 'BEGIN {print (r >= 20 ? "met" : "missed")}')" >>"$BENCH_SUMMARY"

# alternating rounds against another build (TK_OLD) and llvm-symbolizer: the step in process (best of 3
# each) and collapse --symbols end to end, the ratios to llvm-symbolizer of the same round
if [ -n "${TK_OLD:-}" ]; then
	# TK_OLD_STEP: that build's bench/mx_symstep when it is not beside TK_OLD, or is older than it (a
	# build's `make` does not rebuild bench/: an old one measures an old library)
	old_step="${TK_OLD_STEP:-$(dirname "$TK_OLD")/bench/mx_symstep}"
	[ -x "$old_step" ] && [ "$old_step" -ot "$TK_OLD" ] &&
		echo "warning: $old_step is older than $TK_OLD: its step is an older library's (set TK_OLD_STEP)"
	dsym="$g/libtks-arm64.dylib.dSYM"
	rs=() ro=() re=() reo=() # each round's ratios: the step (this build, TK_OLD), end to end (both)
	for r in $(seq "${ROUNDS:-3}"); do
		read -r _ _ _ n_take _ _ _ n_first _ n_flt < <("$BUILD/bench/mx_symstep" "$p" "$dsym")
		read -r n_e2e _ < <(cpu "$TK" collapse --symbols "$dsym" "$p")
		read -r l_s _ < <(cpu sh -c "llvm-symbolizer --inlining --obj='$dwarf' <'$out/sym-addrs.txt'")
		o_take=- o_first=- o_flt=-
		[ -x "$old_step" ] && read -r _ _ _ o_take _ _ _ o_first _ o_flt < <("$old_step" "$p" "$dsym")
		read -r o_e2e _ < <(cpu "$TK_OLD" collapse --symbols "$dsym" "$p")
		rt() { awk -v a="$l_s" -v b="$1" 'BEGIN {printf (b + 0 > 0 ? "%.1f" : "-"), a / (b + 0 > 0 ? b : 1)}'; }
		echo "round $r: the step in process: this build $n_take s = $(rt "$n_take")x (first round ${n_first:--} s, ${n_flt:--} page faults), TK_OLD $o_take s = $(rt "$o_take")x (first round ${o_first:--} s, ${o_flt:--} page faults); collapse --symbols: this build $n_e2e s = $(rt "$n_e2e")x, TK_OLD $o_e2e s = $(rt "$o_e2e")x; llvm-symbolizer $l_s s"
		printf 'metrickit\tround %s (TK_OLD alternating): symbolicate %s frames, the step in process / collapse --symbols\t%s s (%sx) / %s s (%sx)\tTK_OLD %s s (%sx) / %s s (%sx); llvm-symbolizer %s s\t%sx the step\t>= 20x: %s\n' \
			"$r" "$frames" "$n_take" "$(rt "$n_take")" "$n_e2e" "$(rt "$n_e2e")" "$o_take" "$(rt "$o_take")" "$o_e2e" "$(rt "$o_e2e")" "$l_s" "$(rt "$n_take")" \
			"$(awk -v r="$(rt "$n_take")" 'BEGIN {print (r + 0 >= 20 ? "met (the step)" : "missed")}')" >>"$BENCH_SUMMARY"
		rs+=("$(rt "$n_take")") ro+=("$(rt "$o_take")") re+=("$(rt "$n_e2e")") reo+=("$(rt "$o_e2e")")
	done
	med() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {printf "%s", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
	echo "median of ${#rs[@]} rounds: the step $(med "${rs[@]}")x (TK_OLD $(med "${ro[@]}")x); end to end $(med "${re[@]}")x (TK_OLD $(med "${reo[@]}")x)"
	printf 'metrickit\tmedian of %s rounds (TK_OLD alternating): the step in process / collapse --symbols\t%sx / %sx\tTK_OLD %sx / %sx\t%sx the step\t>= 20x: %s\n' \
		"${#rs[@]}" "$(med "${rs[@]}")" "$(med "${re[@]}")" "$(med "${ro[@]}")" "$(med "${reo[@]}")" "$(med "${rs[@]}")" \
		"$(awk -v r="$(med "${rs[@]}")" 'BEGIN {print (r + 0 >= 20 ? "met (the step)" : "missed")}')" >>"$BENCH_SUMMARY"
fi
