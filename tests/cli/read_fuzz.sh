#!/bin/bash
# Bounded fuzzing of the xctrace reader and of the fast tokenizer against libxml2 (about 24 s).
# Longer runs: `make fuzz-read FUZZ_TIME=600`.
. "$TK_ROOT/tests/lib.sh"
F="$TK_ROOT/$BUILD/fuzz"
for t in fuzz_xctrace fuzz_xml_diff; do
	if [ ! -x "$F/$t" ]; then notok "$t built" "missing $F/$t"; continue; fi
	mkdir -p "$TMP/$t"
	if "$F/$t" -seed=1 -max_total_time=12 -timeout=300 -rss_limit_mb=1024 -dict="$TK_ROOT/tests/fuzz/xml.dict" \
		-artifact_prefix="$TMP/" "$TMP/$t" "$TK_ROOT/tests/fuzz/corpus/xctrace" >"$TMP/$t.log" 2>&1; then
		ok "$t: $(grep -o 'Done [0-9]* runs' "$TMP/$t.log") without a crash, leak or mismatch"
	else
		notok "$t" "$(grep -E 'ERROR|SUMMARY|runtime error|differ|failed|succeeded' "$TMP/$t.log" | head -5)"
		for a in "$TMP"/crash-* "$TMP"/leak-* "$TMP"/timeout-*; do
			[ -f "$a" ] && echo "    artifact (base64): $(base64 -w0 "$a" | head -c 2000)"
		done
	fi
done
