#!/bin/bash
# A short, seeded libFuzzer pass over the Records reader (make fuzz-records runs longer).
. "$TK_ROOT/tests/lib.sh"
F="$TK_ROOT/$BUILD/fuzz_records"
[ -x "$F" ] || { notok "fuzz harness built ($F)"; exit 0; }
mkdir -p "$TMP/corpus" && cp "$TK_ROOT"/tests/fuzz/corpus/records/* "$TMP/corpus/"
(cd "$TMP" && "$F" -seed=1 -runs=5000 -max_len=4096 "$TMP/corpus" >"$TMP/fuzz.log" 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q "^Done 5000 runs" "$TMP/fuzz.log"; then ok "records reader: 5000 fuzz runs, no crash"
else notok "records reader: 5000 fuzz runs, no crash" "$(grep -E 'ERROR|runtime error|SUMMARY' "$TMP/fuzz.log" | head -5)"; fi
