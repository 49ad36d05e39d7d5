#!/bin/bash
# Profiles: `--symbols` in the analysis commands and `tracekit symbolicate` (Xcode 14.3+ form out),
# on synthetic exports whose frames point into the committed generated dSYM (tests/fixtures/symbol).
# Expected chains: llvm-symbolizer on that dSYM at 0x1ab4 (leaf PC) and 0x1263 (return address − 1).
. "$(dirname "$0")/../lib.sh"
tk_fork_start
export TRACEKIT_CACHE_DIR="$TMP/cache"
S="$FIX/symbol"
X14="$S/time-profile-14.3-synthetic.xml"
X13="$S/time-profile-pre14.3-synthetic.xml"
CHAIN="u0_f10;u0_f15;u0_f15_in0;u0_f15_in1;hdr_2"

check_eq "without --symbols the export keeps addresses" \
	"Main Thread tid=8683713;start;0x104a8d264;0x104a8dab5 2000000" "$("$TK" collapse "$X14" 2>/dev/null)"
check_eq "collapse --symbols: inline chain, return address looked up at addr-1, leaf PC+1 at addr-1" \
	"Main Thread tid=8683713;start;$CHAIN 2000000" "$("$TK" collapse --symbols "$S" "$X14" 2>"$TMP/w.txt")"
check "a missing image is named in one warning" grep -q "dyld: left unsymbolicated: no dSYM or binary with UUID DE46DD52" "$TMP/w.txt"
"$TK" tree --symbols "$S/libtks-arm64.dylib.dwarf" "$X14" >"$TMP/tree.txt" 2>/dev/null
check "tree --symbols with the dSYM file itself" grep -q "└─ hdr_2  \[libtks-arm64.dylib\]" "$TMP/tree.txt"
check_fails "--symbols with a path that does not exist" "$TK" collapse --symbols "$TMP/nope" "$X14"

"$TK" symbolicate "$X14" --symbols "$S" -o "$TMP/out.xml" 2>"$TMP/sym.txt"
check "symbolicate writes well-formed XML" xmllint --noout "$TMP/out.xml"
check "symbolicate reports what it resolved" grep -q "2 frames resolved, 1 left as exported" "$TMP/sym.txt"
check_eq "the written export reads back to the same stacks and weights" \
	"$("$TK" collapse --symbols "$S" "$X14" 2>/dev/null)" "$("$TK" collapse "$TMP/out.xml")"
check "frames carry <source line> and the binary's UUID" \
	grep -q '<frame id="[0-9]*" name="hdr_2" addr="0x104a8dab5" inlined="1"><binary id="[0-9]*" name="libtks-arm64.dylib" UUID="4C4C44D7-5555-3144-A1A5-753F1442BA46"' "$TMP/out.xml"
check "inlined frames have their call-site lines" grep -q 'name="u0_f15_in0" addr="0x104a8dab5" inlined="1"><binary ref="[0-9]*"/><source line="315">' "$TMP/out.xml"
check_eq "sample count is kept (2 rows)" "2" "$(grep -c '<row>' "$TMP/out.xml")"

check_eq "pre-14.3 text-addresses need --image; leaf PC as recorded, caller at addr-1" \
	"Main Thread tid=948054;$CHAIN 1000000" \
	"$("$TK" symbolicate "$X13" --image "$S/libtks-arm64.dylib.dwarf@0x104a8c000" 2>/dev/null | "$TK" collapse -)"
check_eq "--image by UUID through --symbols" "Main Thread tid=948054;$CHAIN 1000000" \
	"$("$TK" symbolicate "$X13" --symbols "$S" --image 4C4C44D7-5555-3144-A1A5-753F1442BA46@104a8c000 2>/dev/null | "$TK" collapse -)"
check_fails "--image without a load address" "$TK" symbolicate "$X13" --image "$S/libtks-arm64.dylib.dwarf"
check_fails "symbolicate without --symbols or --image" "$TK" symbolicate "$X13"
check_fails "symbolicate: unreadable input" "$TK" symbolicate "$TMP/none.xml" --symbols "$S"
