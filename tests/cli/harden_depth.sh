#!/bin/bash
# Deep stacks: `tree` indents with guides only down to a fixed depth (then shows [depth N]), so its
# output grows linearly with depth, not quadratically (a 100,000-frame stack wrote 15 GB).
. "${TK_ROOT:-.}/tests/lib.sh"
N=5000
{
	printf '<?xml version="1.0"?><trace-query-result><node><schema name="time-profile"><col><mnemonic>time</mnemonic></col><col><mnemonic>thread</mnemonic></col><col><mnemonic>weight</mnemonic></col><col><mnemonic>stack</mnemonic></col></schema>'
	printf '<row><sample-time id="1">1</sample-time><thread id="2" fmt="t 0x1"><tid id="3">1</tid></thread><weight id="4">1000000</weight><backtrace id="5">'
	for i in $(seq $N -1 1); do printf '<frame id="%d" name="f%d" addr="0x%x"/>' $((i + 10)) "$i" "$i"; done
	printf '</backtrace></row></node></trace-query-result>'
} >"$TMP/deep.xml"
cpu_bounded 60 "$TK" tree "$TMP/deep.xml" -o "$TMP/tree.txt" 2>"$TMP/err"
check_eq "tree of a $N-frame stack: success" "0" "$?"
size=$(stat -c %s "$TMP/tree.txt")
check "tree output is linear in depth ($size bytes for $N rows, < 2 MB)" test "$size" -lt 2000000
check_eq "every frame has its row" "$N" "$(grep -c ' f[0-9]*$' "$TMP/tree.txt")"
check "the deepest row names its depth" grep -q "\[depth $N\] f$N\$" "$TMP/tree.txt"
check_eq "rows above the cap keep their guides" "1" "$(grep -c '^ *1\.00  100\.0% *0\.00  └─ f2$' "$TMP/tree.txt")"
