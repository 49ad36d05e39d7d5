#!/bin/bash
# Bounded libFuzzer run of the Swift demangler under ASan/UBSan (make check builds it with clang in
# $BUILD/fuzz), seeded with every input of the Swift test vectors. A crash, sanitizer report, leak
# or hang makes libFuzzer exit non-zero and the check fail. A fixed number of runs (-seed=1), not a
# time: the same inputs on a quiet machine and a loaded one; the per-input limit only catches hangs
# (an input takes well under a millisecond; 5 s was missed once on a loaded machine).
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
check "fuzz_swift_demangle: 100000 runs, no crash" \
	"$F" -runs=100000 -timeout=300 -rss_limit_mb=1024 -max_len=512 -seed=1 "$TMP/seeds"
