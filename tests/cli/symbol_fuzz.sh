#!/bin/bash
# Bounded libFuzzer runs of the Mach-O/DWARF and symbol-cache readers (make check builds them with
# clang in $BUILD/fuzz). Seeds: the committed generated dSYM and a cache built from it. A crash,
# sanitizer report or leak makes libFuzzer exit non-zero and the check fail. A fixed number of
# inputs (-runs, -seed=1), not a time: the same on a quiet and a loaded machine (`make fuzz-symbol`
# runs for FUZZ_TIME seconds).
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
check "fuzz_symbol_macho: 1000 runs, no crash" "$FM" -runs=1000 -timeout=300 -rss_limit_mb=1024 -seed=1 "$TMP/m"
check "fuzz_symbol_cache: 3000 runs, no crash" "$FC" -runs=3000 -timeout=300 -rss_limit_mb=1024 -seed=1 "$TMP/c"
# /symbolicate/v5 requests (tracekit open), seeded with well-formed and hostile ones
FV="$TK_ROOT/$BUILD/fuzz/fuzz_symbolicate_v5"
if [ -x "$FV" ]; then
	# seeds: a well-formed and a hostile request (tests/fuzz/corpus/symbolicate_v5)
	mkdir -p "$TMP/v5"
	check "fuzz_symbolicate_v5: 2000 runs, no crash" env TK_FUZZ_DSYM="$TK_ROOT/tests/fixtures/symbol/libtks-arm64.dylib.dwarf" \
		"$FV" -runs=2000 -timeout=300 -rss_limit_mb=1024 -seed=1 -max_len=4096 "$TMP/v5" "$TK_ROOT/tests/fuzz/corpus/symbolicate_v5"
else
	notok "fuzz harness built" "missing $FV (make $BUILD/fuzz/fuzz_symbolicate_v5)"
fi
