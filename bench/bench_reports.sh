#!/bin/bash
# Apple reports: `tracekit symbolicate` over 10,000 .ips crash reports of 100 frames each against
# 50 dSYMs (one 1k-function tksymgen dSYM copied with distinct UUIDs), cold (symbol caches built)
# and warm, side by side with llvm-symbolizer 14 answering the same lookups (every frame's address,
# the caller-frame rule applied) in one process. --quick: 1,000 reports.
# The reports repeat their stacks as a fleet's do (bench/mkreports_bench.py says how and why; the
# input directory is in2-N since 2026-11-26: in-N held uniformly random frames); the line
# "lookups" says how many of them are distinct. llvm-symbolizer gets every lookup, repeats included.
# Times are CPU (user+sys) and wall seconds; RSS is the peak of the process.
# TK_OLD=path/to/old/tracekit: the same warm run with that build too (before/after in one run), and
# its -o - output compared byte for byte with ours.
# The floor of one file per report: the same outputs written by a short Python loop (open, write,
# close into a new directory; and with a temporary renamed into place), CPU of the loop only.
# Also: the warm run into a directory that does not exist yet (no outputs replaced), and the warm run
# with -o - (every report on one stream, no file per report; checked equal to the files concatenated).
# PAIRS=N (default 1): N rounds of that -o - run and llvm-symbolizer side by side (and TK_OLD's -o -
# run too, alternating), each round's ratio and their median; on a shared machine the peer varies as
# much as we do, so a ratio is only worth something against the peer of the same round.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TK=${TK:-$ROOT/build/tracekit}
GEN="$ROOT/tests/symgen/tksymgen.py"
W=${TK_BENCH_REPORTS_DIR:-$ROOT/build/bench-reports}
NR=10000
[ "${1:-}" = "--quick" ] && NR=1000
command -v llvm-symbolizer >/dev/null || { echo "bench_reports: llvm-symbolizer missing (make deps)"; exit 1; }
mkdir -p "$W"
T="$W/time.txt"
run() {
	/usr/bin/time -f '%e %U %S %M' -o "$T" "$@"
	read -r WALL U S RSS <"$T"
	CPU=$(awk -v u="$U" -v s="$S" 'BEGIN { printf "%.2f", u + s }')
	RSS_MB=$((RSS / 1024))
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'; }
MED="$W/medium"
[ -f "$MED/layout.tsv" ] || python3 "$GEN" build --out "$MED" --n 1000 --files 2 --seed 7 --arch arm64 >&2
IN="$W/in2-$NR"
[ -f "$IN/llvm.txt" ] && [ -f "$IN/stats.txt" ] ||
	{ rm -rf "$IN"; python3 "$ROOT/bench/mkreports_bench.py" "$MED" "$IN" 50 "$NR" 100 2>"$W/gen.err" &&
		grep '^mkreports_bench:' "$W/gen.err" >"$IN/stats.txt"; }
# one cache directory per input: the caches record their dSYM's path, size and mtime, so the 1,000- and
# 10,000-report inputs' copies of the dSYMs would rebuild each other's caches
C="$W/cache-$NR"
rm -rf "$C" "$W/out"
run "$TK" symbolicate "$IN/reports" --symbols "$IN/dsyms" --cache-dir "$C" -o "$W/out" 2>"$W/tk.err"
CW=$WALL CC=$CPU CR=$RSS_MB
run "$TK" symbolicate "$IN/reports" --symbols "$IN/dsyms" --cache-dir "$C" -o "$W/out" 2>"$W/tk.err"
WW=$WALL WC=$CPU WR=$RSS_MB WU=$U WS=$S
grep -q "$NR reports, 0 failed; $((NR * 100)) frames resolved, 0 left" "$W/tk.err" ||
	{ echo "bench_reports: unexpected result: $(tail -1 "$W/tk.err")" >&2; exit 1; }
NEW="$W/out-new-$$"
run "$TK" symbolicate "$IN/reports" --symbols "$IN/dsyms" --cache-dir "$C" -o "$NEW" 2>"$W/tk.err"
NW=$WALL NC=$CPU NU=$U NS=$S NR_MB=$RSS_MB
cmp -s "$NEW/r00000.crash" "$W/out/r00000.crash" || { echo "bench_reports: outputs differ" >&2; exit 1; }
rm -rf "$NEW"
run "$TK" symbolicate "$IN/reports" --symbols "$IN/dsyms" --cache-dir "$C" -o - >"$W/stream.txt" 2>"$W/tk.err"
SW=$WALL SC=$CPU SU=$U SS=$S SR=$RSS_MB
(cd "$W/out" && cat $(ls)) | cmp -s - "$W/stream.txt" || { echo "bench_reports: -o - differs from the files" >&2; exit 1; }
if [ -n "${TK_OLD:-}" ]; then
	run "$TK_OLD" symbolicate "$IN/reports" --symbols "$IN/dsyms" --cache-dir "$C" -o - >"$W/old-stream.txt" 2>"$W/old.err"
	XW=$WALL XC=$CPU XU=$U XS=$S XR=$RSS_MB
	cmp -s "$W/old-stream.txt" "$W/stream.txt" || { echo "bench_reports: TK_OLD's outputs differ from ours" >&2; exit 1; }
	rm -f "$W/old-stream.txt"
	run "$TK_OLD" symbolicate "$IN/reports" --symbols "$IN/dsyms" --cache-dir "$C" -o "$W/out" 2>"$W/old.err"
	OW=$WALL OC=$CPU OU=$U OS=$S OR=$RSS_MB
fi
rm -f "$W/stream.txt"
PAIRS=${PAIRS:-1}
R_STREAM="" R_OLD=""
if [ "$PAIRS" -gt 1 ]; then
	for i in $(seq "$PAIRS"); do
		rm -f "$W/stream.txt"
		run "$TK" symbolicate "$IN/reports" --symbols "$IN/dsyms" --cache-dir "$C" -o - >"$W/stream.txt" 2>"$W/tk.err"
		PS=$CPU
		rm -f "$W/stream.txt"
		if [ -n "${TK_OLD:-}" ]; then
			run "$TK_OLD" symbolicate "$IN/reports" --symbols "$IN/dsyms" --cache-dir "$C" -o - >"$W/stream.txt" 2>"$W/old.err"
			PO=$CPU
			rm -f "$W/stream.txt"
		fi
		run llvm-symbolizer --inlining <"$IN/llvm.txt" >"$W/llvm.out"
		R_STREAM="$R_STREAM $(ratio "$CPU" "$PS")"
		echo "round $i: -o - $PS s CPU${TK_OLD:+, TK_OLD $PO s CPU}, llvm-symbolizer $CPU s CPU: $(ratio "$CPU" "$PS")×${TK_OLD:+ (TK_OLD $(ratio "$CPU" "$PO")×)}" >&2
		[ -n "${TK_OLD:-}" ] && R_OLD="$R_OLD $(ratio "$CPU" "$PO")"
	done
fi
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# the kernel's part of one file per report: the same bytes, written by the shortest loop
FLOOR=$(python3 - "$W/out" "$W/floor-$$" <<'PY'
import os, sys
src, dst = sys.argv[1], sys.argv[2]
names = sorted(os.listdir(src))
data = [open(os.path.join(src, n), "rb").read() for n in names]
def cpu():
    t = os.times()
    return t.user + t.system
os.mkdir(dst)
a = cpu()
for n, d in zip(names, data):
    fd = os.open(os.path.join(dst, n), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    os.write(fd, d)
    os.close(fd)
b = cpu()
for n, d in zip(names, data):
    p = os.path.join(dst, n)
    fd = os.open(p + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    os.write(fd, d)
    os.close(fd)
    os.rename(p + ".tmp", p)
c = cpu()
print("%.2f %.2f" % (b - a, c - b))
PY
)
rm -rf "$W/floor-$$"
read -r FLOOR_NEW FLOOR_REPL <<<"$FLOOR"
run llvm-symbolizer --inlining <"$IN/llvm.txt" >"$W/llvm.out"
echo "## Apple reports ($(date -u +%F), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "input: $(sed 's/^mkreports_bench: //' "$IN/stats.txt")"
echo
echo "| step | tracekit symbolicate | llvm-symbolizer | ratio |"
echo "|---|---|---|---|"
echo "| $NR .ips × 100 frames, 50 dSYMs, caches built (cold) | $CW s wall, $CC s CPU, $CR MB | – | – |"
echo "| same, caches present (warm): read, symbolicate, write Apple's text | $WW s wall, $WC s CPU ($WU user + $WS sys), **$WR MB** | $WALL s wall, $CPU s CPU, $RSS_MB MB (the $((NR * 100)) lookups only) | $(ratio "$CPU" "$WC")× CPU, $(ratio "$WALL" "$WW")× wall |"
echo "| same, warm, into a new directory (no output replaced) | $NW s wall, $NC s CPU ($NU user + $NS sys), $NR_MB MB | | $(ratio "$CPU" "$NC")× CPU |"
echo "| same, warm, all reports to one stream (\`-o -\`) | $SW s wall, $SC s CPU ($SU user + $SS sys), $SR MB | | $(ratio "$CPU" "$SC")× CPU |"
echo "| floor of one file per report: a Python loop writing the same outputs (open, write, close) into a new directory / with a temporary renamed over each | $FLOOR_NEW s / $FLOOR_REPL s CPU | | |"
[ -n "${TK_OLD:-}" ] && echo "| warm, \`-o -\`, the build TK_OLD=$TK_OLD (output identical to ours) | $XW s wall, $XC s CPU ($XU user + $XS sys), $XR MB | | $(ratio "$CPU" "$XC")× CPU |"
[ -n "${TK_OLD:-}" ] && echo "| warm, replacing the outputs, the build TK_OLD=$TK_OLD | $OW s wall, $OC s CPU ($OU user + $OS sys), $OR MB | | $(ratio "$CPU" "$OC")× CPU |"
[ -n "$R_STREAM" ] && echo "| $PAIRS rounds of \`-o -\` and llvm-symbolizer side by side (ratio of each round) | |$R_STREAM (median $(echo "$R_STREAM" | median)×) | |"
[ -n "$R_OLD" ] && echo "| the same rounds, TK_OLD's \`-o -\` | |$R_OLD (median $(echo "$R_OLD" | median)×) | |"
printf 'reports\t%s .ips x 100 frames, 50 dSYMs (warm)\t%s s CPU, %s MB\tllvm-symbolizer %s s CPU, %s MB\t%s× CPU\t≥ 20×\n' \
	"$NR" "$WC" "$WR" "$CPU" "$RSS_MB" "$(ratio "$CPU" "$WC")" >>"${BENCH_SUMMARY:-/dev/null}"
printf 'reports\t%s .ips x 100 frames, 50 dSYMs (warm), -o - (one stream)\t%s s CPU, %s MB\tllvm-symbolizer %s s CPU, %s MB\t%s× CPU\t≥ 20×\n' \
	"$NR" "$SC" "$SR" "$CPU" "$RSS_MB" "$(ratio "$CPU" "$SC")" >>"${BENCH_SUMMARY:-/dev/null}"
