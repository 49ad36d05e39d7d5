#!/bin/bash
# A short, seeded libFuzzer pass over the upload bundle decoder (make fuzz-bundle runs longer).
. "$TK_ROOT/tests/lib.sh"
F="$TK_ROOT/$BUILD/fuzz_bundle"
[ -x "$F" ] || { notok "fuzz harness built ($F)"; exit 0; }
mkdir -p "$TMP/corpus" && cp "$TK_ROOT"/tests/fuzz/corpus/bundle/* "$TMP/corpus/"
(cd "$TMP" && "$F" -seed=1 -runs=5000 -max_len=8192 "$TMP/corpus" >"$TMP/fuzz.log" 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q "^Done 5000 runs" "$TMP/fuzz.log"; then ok "upload bundles: 5000 fuzz runs, no crash"
else notok "upload bundles: 5000 fuzz runs, no crash" "$(grep -E 'ERROR|runtime error|SUMMARY' "$TMP/fuzz.log" | head -5)"; fi
