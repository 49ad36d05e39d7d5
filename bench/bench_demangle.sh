#!/bin/bash
# Demangling benchmark (bench/run.sh protocol; see there).
#
#   bench/bench_demangle.sh [--quick]
#
# 1. The Swift demangler on the Swift test vectors (tests/fixtures/swift-demangle/manglings.txt
#    inputs, valid and invalid alike) repeated to 1 M names, straight on the library
#    ($BUILD/demangle_speed), full and simplified forms; target >= 2 M names/s of CPU. No peer
#    exists here: Debian ships no Swift toolchain (swift-demangle) and llvm-cxxfilt 14 leaves Swift
#    names as they are (checked below), so the C++ path is compared instead:
# 2. `tracekit demangle` against GNU c++filt and llvm-cxxfilt on the same 1 M C++ lines (stdin to
#    stdout), to show the one entry point for C++, Rust and Swift costs C++ nothing.
# 3. Symbolication of 1 M addresses, cache present, on two dylibs generated from one seed: C
#    names, and the same code with Swift-mangled symbols (tksymgen --swift-names). Swift names
#    are demangled once into the cache, so the lookups should cost the same.
# Times are CPU seconds (user+sys): the bench machine is shared.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
TK=${TK:-$ROOT/$BUILD/tracekit}
OUT=${BENCH_OUT:-$ROOT/bench/out}/demangle
SUMMARY=${BENCH_SUMMARY:-/dev/null}
COUNT=1000000 N=5000 FILES=5
if [ "${1:-}" = "--quick" ]; then COUNT=200000 N=1000 FILES=2; fi
mkdir -p "$OUT"
make -s -C "$ROOT" "$BUILD/demangle_speed" "$BUILD/tracekit" >&2
T="$OUT/time.txt"
run() { # run CMD…: sets CPU (user+sys) and RSS_MB
	/usr/bin/time -f '%e %U %S %M' -o "$T" "$@"
	read -r _ U S RSS <"$T"
	CPU=$(awk -v u="$U" -v s="$S" 'BEGIN { printf "%.2f", u + s }')
	RSS_MB=$((RSS / 1024))
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.2f", (s > 0 ? n / s / 1e6 : 0) }'; }

echo "## Demangling ($(date -u +%F), $(nproc) CPUs)"
echo
# ---- 1. Swift vectors
sed -n 's/^\([^ ]*\) ---> .*/\1/p' "$ROOT/tests/fixtures/swift-demangle/manglings.txt" >"$OUT/swift-names.txt"
"$ROOT/$BUILD/demangle_speed" "$OUT/swift-names.txt" "$COUNT" >"$OUT/speed.txt"
FULL=$(awk '$1 == "full" {print $7}' "$OUT/speed.txt")
SIMP=$(awk '$1 == "simplified" {print $7}' "$OUT/speed.txt")
FULL_M=$(awk -v r="$FULL" 'BEGIN { printf "%.2f", r / 1e6 }')
SIMP_M=$(awk -v r="$SIMP" 'BEGIN { printf "%.2f", r / 1e6 }')
LLVM_SWIFT=$(echo '$s5MyApp14ViewControllerC11viewDidLoadyyF' | llvm-cxxfilt-14)
echo "| Swift vectors ($(wc -l <"$OUT/swift-names.txt") names) repeated to $COUNT | full form | simplified form |"
echo "|---|---|---|"
echo "| tk_swift_demangle, CPU | $FULL_M M names/s | $SIMP_M M names/s |"
echo "(llvm-cxxfilt-14 on a Swift name prints: $LLVM_SWIFT)"
printf 'demangle\tSwift vectors x %s, full / simplified form\t%s / %s M names/s CPU\tnone here (llvm-cxxfilt leaves Swift mangled)\t-\ttarget >= 2 M names/s\n' \
	"$COUNT" "$FULL_M" "$SIMP_M" >>"$SUMMARY"

# ---- 2. C++ through the CLI, against c++filt and llvm-cxxfilt
awk -v n="$COUNT" 'BEGIN {
	split("Node Cell Queue Layer Glyph Frame Token Cache", w, " ")
	for (i = 0; i < n; i++) {
		a = w[i % 8 + 1]; b = w[int(i / 8) % 8 + 1]; k = i % 97
		if (i % 3 == 0) printf "_ZN5tksyn2u%d%d%s%d4stepEiPKc\n", k % 10, length(a) + length(k ""), a, k
		else if (i % 3 == 1) printf "_ZNK5tksyn2u%d4CellIlE4takeEi\n", k % 10
		else printf "_ZN5tksyn%d%sI%d%sE3runERKSt6vectorIiSaIiEE\n", length(a), a, length(b), b
	}
}' >"$OUT/cxx.txt"
run "$TK" demangle <"$OUT/cxx.txt" >"$OUT/cxx.tk"
TKC=$CPU TKR=$RSS_MB
run c++filt <"$OUT/cxx.txt" >"$OUT/cxx.gnu"
GC=$CPU
run llvm-cxxfilt-14 <"$OUT/cxx.txt" >"$OUT/cxx.llvm"
LC=$CPU
SAME=$(cmp -s "$OUT/cxx.tk" "$OUT/cxx.gnu" && echo "identical output" || echo "OUTPUT DIFFERS")
echo
echo "| $COUNT C++ names, stdin to stdout | tracekit demangle | c++filt (binutils) | llvm-cxxfilt-14 |"
echo "|---|---|---|---|"
echo "| CPU | $TKC s ($(rate "$COUNT" "$TKC") M names/s, $TKR MB) | $GC s | $LC s |"
echo "| vs tracekit | | $(ratio "$GC" "$TKC")× | $(ratio "$LC" "$TKC")× |"
echo "($SAME with c++filt)"
printf 'demangle\t%s C++ names, CLI stdin->stdout\t%s s CPU\tc++filt %s s, llvm-cxxfilt %s s\t%sx / %sx\t%s with c++filt\n' \
	"$COUNT" "$TKC" "$GC" "$LC" "$(ratio "$GC" "$TKC")" "$(ratio "$LC" "$TKC")" "$SAME" >>"$SUMMARY"

# ---- 3. symbolication: C names vs Swift names, cache present
GEN="$ROOT/tests/symgen/tksymgen.py"
for kind in c swift; do
	D="$OUT/$kind-$N"
	if [ ! -f "$D/layout.tsv" ]; then
		echo "bench_demangle: building the $N-function $kind corpus in $D (once)…" >&2
		extra=()
		[ $kind = swift ] && extra=(--swift-names)
		python3 "$GEN" build --out "$D" --n "$N" --files "$FILES" --seed 3 --arch arm64 "${extra[@]}" >"$OUT/gen-$kind.log" 2>&1
	fi
done
ADDRS="$OUT/addrs-$N-$COUNT.txt"
[ -f "$ADDRS" ] || python3 "$GEN" addrs --layout "$OUT/c-$N/layout.tsv" --arch arm64 --count "$COUNT" --seed 1 >"$ADDRS"
for kind in c swift; do
	DSYM="$OUT/$kind-$N/libtks-arm64.dylib.dSYM"
	rm -rf "$OUT/cache-$kind"
	"$TK" symcache build "$DSYM" -o "$OUT/cache-$kind" >/dev/null
	run "$TK" atos -i -o "$DSYM" --cache-dir "$OUT/cache-$kind" -f "$ADDRS" >/dev/null 
	run "$TK" atos -i -o "$DSYM" --cache-dir "$OUT/cache-$kind" -f "$ADDRS" >"$OUT/atos-$kind.out"
	eval "SC_$kind=\$CPU SR_$kind=\$RSS_MB"
done
NSW=$(grep -c '\.\(run()\|update(_:)\|count\.getter\|fetch(id:completion:)\)' "$OUT/atos-swift.out" || true)
echo
echo "| $COUNT addresses, $N functions, atos -i, cache present | C names | Swift names | Swift / C |"
echo "|---|---|---|---|"
echo "| CPU | $SC_c s, $SR_c MB | $SC_swift s, $SR_swift MB | $(ratio "$SC_swift" "$SC_c") |"
echo "($NSW of the $COUNT answers name a demangled Swift function)"
printf 'demangle\t%s addresses, Swift-named vs C-named dylib (cache present)\t%s s CPU\tC names: %s s CPU\t%s\tSwift no costlier than C once cached\n' \
	"$COUNT" "$SC_swift" "$SC_c" "$(ratio "$SC_swift" "$SC_c")" >>"$SUMMARY"
