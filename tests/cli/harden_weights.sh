#!/bin/bash
# Weights that add up past 2^64 - 1 must not wrap into small, wrong totals: the read fails with a
# one-line error. Just below the limit, the totals are exact.
. "${TK_ROOT:-.}/tests/lib.sh"
doc() { # doc W1 W2: two rows on one thread with these weights
	printf '<?xml version="1.0"?><trace-query-result><node><schema name="time-profile"><col><mnemonic>time</mnemonic></col><col><mnemonic>thread</mnemonic></col><col><mnemonic>weight</mnemonic></col><col><mnemonic>stack</mnemonic></col></schema>'
	printf '<row><sample-time id="1">1</sample-time><thread id="2" fmt="t 0x1"><tid id="3">1</tid></thread><weight id="4">%s</weight><backtrace id="5"><frame id="6" name="f" addr="0x1"/></backtrace></row>' "$1"
	printf '<row><sample-time id="7">2</sample-time><thread ref="2"/><weight id="8">%s</weight><backtrace ref="5"/></row></node></trace-query-result>' "$2"
}
doc 9223372036854775808 9223372036854775808 >"$TMP/wrap.xml" # 2^63 + 2^63 = 2^64: wraps to 0
for c in tree top collapse info; do
	check_fails "$c: weights summing to 2^64 are refused" "$TK" $c "$TMP/wrap.xml"
	cp "$TMP/.out" "$TMP/$c.err"
	check "$c: the error names the overflow" grep -q 'more than 2^64' "$TMP/$c.err"
	check_eq "$c: the error is one line" 1 "$(wc -l <"$TMP/$c.err")"
done
doc 9223372036854775808 9223372036854775807 >"$TMP/max.xml" # exactly 2^64 - 1
check_eq "2^64 - 1 in total: exact" "t tid=1;f 18446744073709551615" "$("$TK" collapse "$TMP/max.xml" 2>&1)"
