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
