#!/bin/bash
# Symbolication benchmark: tracekit (symbol cache) side by side with llvm-symbolizer 14 in one run.
#
#   bench/bench_symbol.sh [--quick]
#
# 1. one 20k-function arm64 dSYM (tests/symgen/tksymgen.py; built once into $TK_BENCH_SYMBOL_DIR,
#    default build/bench-symbol, ~5 min of clang on 2 cores): cache build time and size, then
#    1 M random __text addresses through `tracekit atos -i` (cache present) and
#    `llvm-symbolizer --inlining`; a 100 k-address subset is compared frame by frame (oracle.py).
# 2. 800 dSYMs (one 1k-function dSYM copied with distinct UUIDs) × 4 addresses each through one
#    `tracekit atos --search` process (cold: caches built; warm: caches present), against
#    llvm-symbolizer run once per dSYM, plus one llvm-symbolizer process fed 100 of them.
# Times are CPU (user+sys) and wall seconds; RSS is the peak of the process.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TK=${TK:-$ROOT/build/tracekit}
GEN="$ROOT/tests/symgen/tksymgen.py"
W=${TK_BENCH_SYMBOL_DIR:-$ROOT/build/bench-symbol}
N=20000 FILES=20 COUNT=1000000 NMANY=800 NLLVM_ONE=100
if [ "${1:-}" = "--quick" ]; then N=2000 FILES=4 COUNT=100000 NMANY=50 NLLVM_ONE=20; fi
command -v llvm-symbolizer >/dev/null || { echo "bench_symbol: llvm-symbolizer missing (make deps)"; exit 1; }
[ -x "$TK" ] || { echo "bench_symbol: $TK missing (make)"; exit 1; }
mkdir -p "$W"

T="$W/time.txt"
# run CMD…: sets WALL CPU RSS_MB
run() {
	/usr/bin/time -f '%e %U %S %M' -o "$T" "$@"
	read -r WALL U S RSS <"$T"
	CPU=$(awk -v u="$U" -v s="$S" 'BEGIN { printf "%.2f", u + s }')
	RSS_MB=$((RSS / 1024))
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'; }

BIG="$W/big-$N"
if [ ! -f "$BIG/layout.tsv" ]; then
	echo "bench_symbol: building the $N-function corpus in $BIG (once)…" >&2
	python3 "$GEN" build --out "$BIG" --n "$N" --files "$FILES" --seed 1 --arch arm64 >&2
fi
DSYM="$BIG/libtks-arm64.dylib.dSYM"
DWARF="$DSYM/Contents/Resources/DWARF/libtks-arm64.dylib"
ADDRS="$W/addrs-$N-$COUNT.txt"
[ -f "$ADDRS" ] || python3 "$GEN" addrs --layout "$BIG/layout.tsv" --arch arm64 --count "$COUNT" --seed 1 >"$ADDRS"
DSYM_BYTES=$(stat -c %s "$DWARF")

echo "## Symbolication ($(date -u +%F), $(nproc) CPUs, llvm-symbolizer $(llvm-symbolizer --version | sed -n 's/.*LLVM version \([0-9.]*\).*/\1/p' | head -1))"
echo
echo "| step | tracekit | llvm-symbolizer | ratio |"
echo "|---|---|---|---|"
rm -rf "$W/cache"
run "$TK" symcache build "$DSYM" -o "$W/cache" >/dev/null
CACHE_BYTES=$(stat -c %s "$W"/cache/*.tksym)
echo "| cache build, $N functions, dSYM $((DSYM_BYTES / 1000)) kB | $WALL s wall, $CPU s CPU, $RSS_MB MB; cache $((CACHE_BYTES / 1000)) kB = $(awk -v c="$CACHE_BYTES" -v d="$DSYM_BYTES" 'BEGIN { printf "%.1f", 100 * c / d }') % of the dSYM | – | – |"

run "$TK" atos -i -o "$DSYM" --cache-dir "$W/cache" -f "$ADDRS" >"$W/tk.out"
TW=$WALL TC=$CPU TR=$RSS_MB
run llvm-symbolizer --inlining --obj="$DWARF" <"$ADDRS" >"$W/llvm.out"
echo "| $COUNT random addresses, inline chains (cache present) | $TW s wall, $TC s CPU, $TR MB | $WALL s wall, $CPU s CPU, $RSS_MB MB | $(ratio "$CPU" "$TC")× CPU, $(ratio "$WALL" "$TW")× wall |"
sort -R --random-source="$ADDRS" "$ADDRS" | head -100000 >"$W/addrs-100k.txt"
AGREE=$(python3 "$ROOT/tests/symgen/oracle.py" --tk "$TK" --obj "$DWARF" --addrs "$W/addrs-100k.txt" --cache-dir "$W/cache" --show 0 | tail -1)
echo "| agreement on 100 k of them (function chain, file, line) | $AGREE | | |"

# ---- many dSYMs
MED="$W/medium"
if [ ! -f "$MED/layout.tsv" ]; then
	python3 "$GEN" build --out "$MED" --n 1000 --files 2 --seed 7 --arch arm64 >&2
fi
MANY="$W/many-$NMANY"
if [ ! -f "$MANY/lines.txt" ]; then
	rm -rf "$MANY" && mkdir -p "$MANY"
	python3 - "$MED" "$MANY" "$NMANY" <<'PY'
import os, random, shutil, struct, sys
med, many, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
src = os.path.join(med, "libtks-arm64.dylib.dSYM/Contents/Resources/DWARF/libtks-arm64.dylib")
data = bytearray(open(src, "rb").read())
ncmds = struct.unpack_from("<I", data, 16)[0]
p, uoff = 32, None
for _ in range(ncmds):
    cmd, size = struct.unpack_from("<II", data, p)
    if cmd == 0x1B:
        uoff = p + 8
    p += size
lay = open(os.path.join(med, "layout.tsv")).read().splitlines()[1].split("\t")
lo, size = int(lay[4], 16), int(lay[5], 16)
rng = random.Random(5)
lines, objs = [], []
for i in range(n):
    uuid = bytes([0xEE, 0x00, i >> 8, i & 0xFF]) + bytes(data[uoff + 4:uoff + 16])
    data[uoff:uoff + 16] = uuid
    d = os.path.join(many, "mod%03d.dSYM/Contents/Resources/DWARF" % i)
    os.makedirs(d)
    path = os.path.join(d, "mod%03d" % i)
    open(path, "wb").write(data)
    h = uuid.hex().upper()
    u = "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])
    addrs = ["0x%x" % rng.randrange(lo, lo + size) for _ in range(4)]
    lines.append("%s %s\n" % (u, " ".join(addrs)))
    objs += ["%s %s\n" % (path, a) for a in addrs]
open(os.path.join(many, "lines.txt"), "w").write("".join(lines))
open(os.path.join(many, "llvm-lines.txt"), "w").write("".join(objs))
PY
fi
MED_BYTES=$(stat -c %s "$MANY/mod000.dSYM/Contents/Resources/DWARF/mod000")
rm -rf "$W/cache-many"
run "$TK" atos --search "$MANY" --cache-dir "$W/cache-many" -i -f "$MANY/lines.txt" >"$W/many-tk.out"
CW=$WALL CC=$CPU CR=$RSS_MB
run "$TK" atos --search "$MANY" --cache-dir "$W/cache-many" -i -f "$MANY/lines.txt" >"$W/many-tk2.out"
WW=$WALL WC=$CPU WR=$RSS_MB
cmp -s "$W/many-tk.out" "$W/many-tk2.out" || echo "bench_symbol: warning: cold and warm outputs differ" >&2
# llvm-symbolizer, one process per dSYM (it never frees modules, so one process for all would
# need gigabytes: see the single-process row)
run bash -c 'cut -d" " -f1 "$1" | uniq | while read -r obj; do grep "^$obj " "$1" | cut -d" " -f2 | llvm-symbolizer --inlining --obj="$obj" >/dev/null; done' _ "$MANY/llvm-lines.txt"
LW=$WALL LC=$CPU LR=$RSS_MB
head -$((NLLVM_ONE * 4)) "$MANY/llvm-lines.txt" >"$W/llvm-one.txt"
run llvm-symbolizer --inlining <"$W/llvm-one.txt" >/dev/null
echo "| $NMANY dSYMs ($((MED_BYTES / 1000)) kB each) × 4 addresses, one process, caches built (cold) | $CW s wall, $CC s CPU, **$CR MB** | $LW s wall, $LC s CPU, $LR MB (one process per dSYM) | $(ratio "$LW" "$CW")× wall |"
echo "| same, caches present (warm) | $WW s wall, $WC s CPU, **$WR MB** | – | $(ratio "$LW" "$WW")× wall |"
echo "| llvm-symbolizer, one process fed $NLLVM_ONE of the dSYMs | – | $WALL s wall, $CPU s CPU, $RSS_MB MB | – |"
