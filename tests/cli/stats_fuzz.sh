#!/bin/bash
# A short, seeded libFuzzer pass over the numbers reader and the sketch text form (make fuzz-stats runs longer).
. "$TK_ROOT/tests/lib.sh"
F="$TK_ROOT/$BUILD/fuzz_stats"
[ -x "$F" ] || { notok "fuzz harness built ($F)"; exit 0; }
mkdir -p "$TMP/corpus" && cp "$TK_ROOT"/tests/fuzz/corpus/stats/* "$TMP/corpus/"
(cd "$TMP" && "$F" -seed=1 -runs=1000 -max_len=4096 "$TMP/corpus" >"$TMP/fuzz.log" 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q "^Done 1000 runs" "$TMP/fuzz.log"; then ok "stats parsers (numbers, sketch text): 1000 fuzz runs, no crash"
else notok "stats parsers (numbers, sketch text): 1000 fuzz runs, no crash" "$(grep -E 'ERROR|runtime error|SUMMARY' "$TMP/fuzz.log" | head -5)"; fi
