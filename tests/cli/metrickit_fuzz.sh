#!/bin/bash
# Bounded fuzzing of the MetricKit reader under ASan+UBSan: no crash, leak or hang, one-line errors,
# nothing accepted that jansson rejects, event weights = their threads'. A fixed number of inputs
# (-runs, -seed=1) from the committed corpus, not a time: the same inputs on a quiet machine and a
# loaded one; the per-input limit only catches hangs. Longer runs: `make fuzz-metrickit FUZZ_TIME=600`.
. "$TK_ROOT/tests/lib.sh"
F="$TK_ROOT/$BUILD/fuzz/fuzz_metrickit"
if [ ! -x "$F" ]; then notok "fuzz_metrickit built" "missing $F"; exit 0; fi
mkdir -p "$TMP/c"
if "$F" -seed=1 -runs=2000 -timeout=300 -rss_limit_mb=1024 -artifact_prefix="$TMP/" \
	"$TMP/c" "$TK_ROOT/tests/fuzz/corpus/metrickit" >"$TMP/log" 2>&1; then
	ok "fuzz_metrickit: $(grep -o 'Done [0-9]* runs' "$TMP/log") without a crash, leak or disagreement with jansson"
else
	notok "fuzz_metrickit" "$(grep -E 'ERROR|SUMMARY|runtime error|jansson says|not one line|weight' "$TMP/log" | head -5)"
	for a in "$TMP"/crash-* "$TMP"/leak-* "$TMP"/timeout-*; do
		[ -f "$a" ] && echo "    artifact (base64): $(base64 -w0 "$a" | head -c 2000)"
	done
fi
