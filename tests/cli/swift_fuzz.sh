#!/bin/bash
# Bounded libFuzzer run of the Swift demangler under ASan/UBSan (make check builds it with clang in
# $BUILD/fuzz), seeded with every input of the Swift test vectors. A crash, sanitizer report, leak
# or timeout makes libFuzzer exit non-zero and the check fail.
. "$(dirname "$0")/../lib.sh"
BUILD=${BUILD:-build}
F="$TK_ROOT/$BUILD/fuzz/fuzz_swift_demangle"
if [ ! -x "$F" ]; then
	notok "swift demangler fuzz harness built" "missing $F (make $BUILD/fuzz/fuzz_swift_demangle)"
	exit 0
fi
mkdir -p "$TMP/seeds"
i=0
cat "$TK_ROOT"/tests/fixtures/swift-demangle/*.txt | sed -n 's/^\([^ ]*\) ---> .*/\1/p' | sort -u |
	while IFS= read -r s; do i=$((i + 1)); printf '%s' "$s" >"$TMP/seeds/v$i"; done
check "fuzz_swift_demangle: 15 s bounded run, no crash" \
	"$F" -max_total_time=15 -timeout=5 -rss_limit_mb=1024 -max_len=512 -seed=1 "$TMP/seeds"
