#!/bin/bash
# Bounded fuzzing of Apple's report readers and writers (.ips, .crash, spindump) under ASan+UBSan
# (tests/fuzz/fuzz_apple_report.c): a fixed number of inputs each (-runs, -seed=1, seeded from
# tests/fuzz/corpus), not a time; the per-input limit only catches hangs.
# Longer runs: `make fuzz-reports FUZZ_TIME=600`.
# The .ips target is also differential: every input is read by jansson and by the scanner of
# lib/read/ips.c (TK_APPLE_REPORT_TEXT_ONLY), which must give the same report, text and error; it runs
# once more over the report fixtures.
. "$TK_ROOT/tests/lib.sh"
F="$TK_ROOT/${BUILD:-build}/fuzz"
for r in ips crash spindump; do
	t="fuzz_report_$r"
	if [ ! -x "$F/$t" ]; then notok "$t built" "missing $F/$t"; continue; fi
	mkdir -p "$TMP/$t"
	if "$F/$t" -seed=1 -runs=1000 -timeout=300 -rss_limit_mb=1024 -artifact_prefix="$TMP/" \
		"$TMP/$t" "$TK_ROOT/tests/fuzz/corpus/report_$r" >"$TMP/$t.log" 2>&1; then
		ok "$t: $(grep -o 'Done [0-9]* runs' "$TMP/$t.log") without a crash, leak or multi-line error"
	else
		notok "$t" "$(grep -E 'ERROR|SUMMARY|runtime error|deadly' "$TMP/$t.log" | head -5)"
		for a in "$TMP"/crash-* "$TMP"/leak-* "$TMP"/timeout-*; do
			[ -f "$a" ] && echo "    artifact (base64): $(base64 -w0 "$a" | head -c 2000)"
		done
	fi
done
F_IPS="$F/fuzz_report_ips"
if [ -x "$F_IPS" ]; then
	if "$F_IPS" -runs=1 "$FIX"/reports/*.ips "$TK_ROOT"/tests/fuzz/corpus/report_ips/* >"$TMP/diff.log" 2>&1; then
		ok "ips: the scanner and jansson read every fixture and corpus report the same ($(ls "$FIX"/reports/*.ips "$TK_ROOT"/tests/fuzz/corpus/report_ips/* | wc -l) files)"
	else
		notok "ips: scanner = jansson on the fixtures" "$(grep -E 'ERROR|SUMMARY|deadly|Running' "$TMP/diff.log" | tail -5)"
	fi
fi
