#!/bin/bash
# Bounded fuzzing of the text readers (Deep Copy, sample, folded, perf script, simpleperf, DTrace)
# under ASan+UBSan, with the folded round-trip invariant of tests/fuzz/fuzz_text.c. A fixed number
# of inputs each (-runs, -seed=1, seeded from tests/fuzz/corpus), not a time, so the result and the
# time do not depend on the machine's load. Longer runs: `make fuzz-readers FUZZ_TIME=600`.
. "$TK_ROOT/tests/lib.sh"
F="$TK_ROOT/$BUILD/fuzz"
for r in deepcopy sample folded perf simpleperf dtrace; do
	t="fuzz_$r"
	if [ ! -x "$F/$t" ]; then notok "$t built" "missing $F/$t"; continue; fi
	mkdir -p "$TMP/$t"
	if "$F/$t" -seed=1 -runs=1000 -timeout=300 -rss_limit_mb=1024 -artifact_prefix="$TMP/" \
		"$TMP/$t" "$TK_ROOT/tests/fuzz/corpus/$r" >"$TMP/$t.log" 2>&1; then
		ok "$t: $(grep -o 'Done [0-9]* runs' "$TMP/$t.log") without a crash, leak or round-trip difference"
	else
		notok "$t" "$(grep -E 'ERROR|SUMMARY|runtime error|differs|not readable' "$TMP/$t.log" | head -5)"
		for a in "$TMP"/crash-* "$TMP"/leak-* "$TMP"/timeout-*; do
			[ -f "$a" ] && echo "    artifact (base64): $(base64 -w0 "$a" | head -c 2000)"
		done
	fi
done
