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
