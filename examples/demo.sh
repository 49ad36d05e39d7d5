#!/bin/sh
# make demo: the main job on a bundled real export — a 10-thread JVM start-up recorded by
# Instruments' Time Profiler (Xcode 14.3+ form, x86_64), from the OpenJDK JMH test suite
# (GPL-2.0 with the Classpath exception; see tests/fixtures/xctrace/SOURCES.md and LICENSES.md).
set -e
cd "$(dirname "$0")/.."
TK=${TK:-build/tracekit}
IN=tests/fixtures/xctrace/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml
OUT=build/demo
mkdir -p "$OUT"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step tracekit info "$IN"
$TK info "$IN"

step tracekit tree --thread ThreadJavaMain --min-percent 10 --hide-system "$IN"
$TK tree --thread ThreadJavaMain --min-percent 10 --hide-system "$IN"

step tracekit top --limit 10 "$IN"
$TK top --limit 10 "$IN"

step tracekit collapse "$IN" -o "$OUT/java.folded"
$TK collapse "$IN" -o "$OUT/java.folded"
echo "$(wc -l < "$OUT/java.folded") distinct (thread, stack) lines; the heaviest three:"
awk '{print $NF "\t" $0}' "$OUT/java.folded" | sort -rn | cut -f2- | head -3 | cut -c1-150

step tracekit tree --json "$IN" -o "$OUT/java.tree.json"
$TK tree --json "$IN" -o "$OUT/java.tree.json"
echo "wrote $OUT/java.tree.json ($(wc -c < "$OUT/java.tree.json") bytes); schema in docs/json-tree.md"

step tracekit flame "$IN" -o "$OUT/java.svg"
$TK flame "$IN" -o "$OUT/java.svg"
echo "wrote $OUT/java.svg ($(wc -c < "$OUT/java.svg") bytes): open it in any browser (click to zoom, Ctrl-F to search)"

step tracekit convert "$IN" -o "$OUT/java.speedscope.json"
$TK convert "$IN" -o "$OUT/java.speedscope.json"
step tracekit convert "$IN" --to gecko -o "$OUT/java.gecko.json"
$TK convert "$IN" --to gecko -o "$OUT/java.gecko.json"
echo "wrote $OUT/java.speedscope.json and $OUT/java.gecko.json (load in speedscope.app / profiler.firefox.com, or: tracekit open)"

step tracekit diff "$IN" "$IN" --limit 3
$TK diff "$IN" "$IN" --limit 3

step 'tracekit demangle '"'"'$s5MyApp14ViewControllerC11viewDidLoadyyF'"'"' _ZN3foo3barEv'
$TK demangle '$s5MyApp14ViewControllerC11viewDidLoadyyF' _ZN3foo3barEv

# Symbolication without a Mac: a dSYM bundle around the generated test dylib's DWARF
# (tests/fixtures/symbol/SOURCES.md), then atos and a pre-Xcode-14.3 export made readable.
DSYM=$OUT/libtks-arm64.dylib.dSYM
mkdir -p "$DSYM/Contents/Resources/DWARF"
cp tests/fixtures/symbol/libtks-arm64.dylib.dwarf "$DSYM/Contents/Resources/DWARF/libtks-arm64.dylib"
OLD=tests/fixtures/symbol/time-profile-pre14.3-synthetic.xml

step tracekit atos -o "$DSYM" -arch arm64 -l 0x104a8c000 -i 0x104a8dab4 0x104aff000
$TK atos --cache-dir "$OUT/cache" -o "$DSYM" -arch arm64 -l 0x104a8c000 -i 0x104a8dab4 0x104aff000

step tracekit tree "$OLD"
$TK tree "$OLD"
step tracekit symbolicate "$OLD" --symbols "$DSYM" --image "$DSYM@0x104a8c000" -o "$OUT/new.xml"
$TK symbolicate "$OLD" --cache-dir "$OUT/cache" --symbols "$DSYM" --image "$DSYM@0x104a8c000" -o "$OUT/new.xml"
step tracekit tree "$OUT/new.xml"
$TK tree "$OUT/new.xml"

# A field monitor on an unmodified program: two threads spinning for 5 s, with thresholds short
# enough for a demo (the defaults are MTHawkeye's: 80 % for 60 s).
step tracekit monitor --cpu-threshold 30 --cpu-duration 2000 -o "$OUT/session" -- build/examples/monitor/busy
rm -rf "$OUT/session"
$TK monitor --cpu-threshold 30 --cpu-duration 2000 --cpu-interval 200 --cpu-high-interval 100 \
	-o "$OUT/session" -- build/examples/monitor/busy
step tracekit records "$OUT/session"
$TK records "$OUT/session"
step tracekit top "$OUT/session"
$TK top "$OUT/session"
