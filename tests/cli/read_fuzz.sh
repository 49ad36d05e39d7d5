#!/bin/bash
# Bounded fuzzing of the xctrace reader and of the fast tokenizer against libxml2: a fixed number of
# inputs each (-runs, -seed=1, seeded from tests/fuzz/corpus/xctrace), not a time, so the result and
# the time do not depend on the machine's load. Longer runs: `make fuzz-read FUZZ_TIME=600`.
. "$TK_ROOT/tests/lib.sh"
F="$TK_ROOT/$BUILD/fuzz"
# runs: about 7 s of CPU each under ASan+UBSan (the reader costs ~3.5 ms an input, the tokenizer pair ~0.7 ms)
for tr in fuzz_xctrace:2000 fuzz_xml_diff:10000; do
	t=${tr%:*} runs=${tr#*:}
	if [ ! -x "$F/$t" ]; then notok "$t built" "missing $F/$t"; continue; fi
	mkdir -p "$TMP/$t"
	if "$F/$t" -seed=1 -runs=$runs -timeout=300 -rss_limit_mb=1024 -dict="$TK_ROOT/tests/fuzz/xml.dict" \
		-artifact_prefix="$TMP/" "$TMP/$t" "$TK_ROOT/tests/fuzz/corpus/xctrace" >"$TMP/$t.log" 2>&1; then
		ok "$t: $(grep -o 'Done [0-9]* runs' "$TMP/$t.log") without a crash, leak or mismatch"
	else
		notok "$t" "$(grep -E 'ERROR|SUMMARY|runtime error|differ|failed|succeeded' "$TMP/$t.log" | head -5)"
		for a in "$TMP"/crash-* "$TMP"/leak-* "$TMP"/timeout-*; do
			[ -f "$a" ] && echo "    artifact (base64): $(base64 -w0 "$a" | head -c 2000)"
		done
	fi
done
