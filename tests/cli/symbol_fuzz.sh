#!/bin/bash
# Bounded libFuzzer runs of the Mach-O/DWARF and symbol-cache readers (make check builds them with
# clang in $BUILD/fuzz). Seeds: the committed generated dSYM and a cache built from it. A crash,
# sanitizer report or leak makes libFuzzer exit non-zero and the check fail.
. "$(dirname "$0")/../lib.sh"
BUILD=${BUILD:-build}
FM="$TK_ROOT/$BUILD/fuzz/fuzz_symbol_macho" FC="$TK_ROOT/$BUILD/fuzz/fuzz_symbol_cache"
if [ ! -x "$FM" ] || [ ! -x "$FC" ]; then
	notok "fuzz harnesses built" "missing $FM or $FC (make $BUILD/fuzz/fuzz_symbol_macho)"
	exit 0
fi
mkdir -p "$TMP/m" "$TMP/c"
cp "$TK_ROOT/tests/fixtures/symbol/libtks-arm64.dylib.dwarf" "$TK_ROOT/tests/fixtures/symbol/dwarf5-arm64.o" "$TMP/m/"
"$TK" symcache build "$TK_ROOT/tests/fixtures/symbol/libtks-arm64.dylib.dwarf" -o "$TMP/c" >/dev/null
check "fuzz_symbol_macho: 10 s bounded run, no crash" "$FM" -max_total_time=10 -rss_limit_mb=1024 -seed=1 "$TMP/m"
check "fuzz_symbol_cache: 10 s bounded run, no crash" "$FC" -max_total_time=10 -rss_limit_mb=1024 -seed=1 "$TMP/c"
# /symbolicate/v5 requests (tracekit open), seeded with well-formed and hostile ones
FV="$TK_ROOT/$BUILD/fuzz/fuzz_symbolicate_v5"
if [ -x "$FV" ]; then
	mkdir -p "$TMP/v5"
	printf '%s' '{"jobs":[{"memoryMap":[["libtks-arm64.dylib","4C4C44D755553144A1A5753F1442BA460"],["x","00"]],"stacks":[[[0,6836],[0,6820],[0,4707],[1,5],[7,1]]]}]}' >"$TMP/v5/a.json"
	printf '%s' '{"jobs":[{"memoryMap":[[1,2],null,["a"]],"stacks":[[["x",1],[99,5],[-1,-1],[0,4294967296000],null]]}]}' >"$TMP/v5/b.json"
	check "fuzz_symbolicate_v5: 10 s bounded run, no crash" env TK_FUZZ_DSYM="$TK_ROOT/tests/fixtures/symbol/libtks-arm64.dylib.dwarf" \
		"$FV" -max_total_time=10 -rss_limit_mb=1024 -seed=1 -max_len=4096 "$TMP/v5"
else
	notok "fuzz harness built" "missing $FV (make $BUILD/fuzz/fuzz_symbolicate_v5)"
fi
