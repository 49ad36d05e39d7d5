#!/bin/bash
# `tracekit symbolicate` writes the same export, symbolicated: one row per input row with its time,
# thread and weight in the original order (checked against a Python ElementTree reading of both
# files, tests/cli/xctrace_rows.py), symbolicating its own output again changes nothing (inlined
# frames are tagged and recognised), and image loads come from kdebug tables exported with the
# profile (tests/symgen/kdebug_export.py generates those: no real one is public).
. "$(dirname "$0")/../lib.sh"
tk_fork_start
export TRACEKIT_CACHE_DIR="$TMP/cache"
S="$FIX/symbol"
X="$FIX/xctrace"
ROWS="python3 $TK_ROOT/tests/cli/xctrace_rows.py"
PRE="$X/time-profile_pre-xcode14.3_text-addresses-fragments_macos-arm64_reindented.xml"
CHAIN="u0_f10;u0_f15;u0_f15_in0;u0_f15_in1;hdr_2"

# Real fixtures, no dSYM for their images: every frame stays as exported, every row is kept.
for f in "$X"/time-profile_*.xml "$X"/cpu-profile_*.xml; do
	b=$(basename "$f" .xml)
	"$TK" symbolicate "$f" --symbols "$S" -o "$TMP/$b.out.xml" 2>/dev/null
	$ROWS "$f" >"$TMP/in.rows"
	$ROWS "$TMP/$b.out.xml" >"$TMP/out.rows"
	check "$b: rows > 1" test "$(wc -l <"$TMP/in.rows")" -gt 1
	check_same_file "$b: same (time, tid, weight) per row, same order" "$TMP/in.rows" "$TMP/out.rows"
	check_eq "$b: same per-thread totals" "$($ROWS --totals "$f")" "$($ROWS --totals "$TMP/$b.out.xml")"
	check_eq "$b: tracekit reads the same per-thread totals" \
		"$("$TK" info "$f" | sed -n '/process \/ thread/,$p')" \
		"$("$TK" info "$TMP/$b.out.xml" | sed -n '/process \/ thread/,$p')"
done

# A time window on the output selects the same samples as on the input.
R="$X/time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml"
RO="$TMP/time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.out.xml"
for w in "--time-from 0.5s --time-to 1.5s" "--time-from 2s" "--time-to 0.3s"; do
	# shellcheck disable=SC2086
	check_eq "--time window $w: same totals on IN and OUT" \
		"$("$TK" collapse $w "$R" | sed 's/.* //' | paste -sd+ | bc)" \
		"$("$TK" collapse $w "$RO" | sed 's/.* //' | paste -sd+ | bc)"
done
check "the windows are not trivial" test "$("$TK" collapse --time-from 0.5s --time-to 1.5s "$R" | sed 's/.* //' | paste -sd+ | bc)" -lt \
	"$("$TK" collapse "$R" | sed 's/.* //' | paste -sd+ | bc)"

# A real pre-14.3 fixture with a resolvable image: the generated dSYM placed so that the hottest
# leaf (0x1837ed014) is its PC 0x1ab4. Rows are kept, and the frames get the inline chain.
LOAD=0x1837eb560
"$TK" symbolicate "$PRE" --image "$S/libtks-arm64.dylib.dwarf@$LOAD" -o "$TMP/pre1.xml" 2>"$TMP/pre1.txt"
check "pre-14.3 + --image resolves frames" grep -q "[1-9][0-9]* frames resolved" "$TMP/pre1.txt"
check "the hottest leaf (63 samples) got the chain" grep -Eq "63\.00 +64\.3% +63  hdr_2" <("$TK" top "$TMP/pre1.xml")
$ROWS "$PRE" >"$TMP/in.rows"
$ROWS "$TMP/pre1.xml" >"$TMP/out.rows"
check_same_file "pre-14.3 resolved: same rows in the same order" "$TMP/in.rows" "$TMP/out.rows"
check "inlined frames are tagged" grep -q 'name="hdr_2" addr="0x1837ed014" inlined="1"' "$TMP/pre1.xml"

# Symbolicating the output again: nothing changes (no duplicated inline frames).
"$TK" symbolicate "$TMP/pre1.xml" --symbols "$S" -o "$TMP/pre2.xml" 2>/dev/null
check_same_file "symbolicate twice == once (pre-14.3 + --image, then --symbols)" "$TMP/pre1.xml" "$TMP/pre2.xml"
"$TK" symbolicate "$S/time-profile-14.3-synthetic.xml" --symbols "$S" -o "$TMP/s1.xml" 2>/dev/null
"$TK" symbolicate "$TMP/s1.xml" --symbols "$S" -o "$TMP/s2.xml" 2>/dev/null
check_same_file "symbolicate twice == once (14.3+ form)" "$TMP/s1.xml" "$TMP/s2.xml"
check_eq "re-read chain has each inlined function once" "Main Thread tid=8683713;start;$CHAIN 2000000" \
	"$("$TK" collapse "$TMP/s2.xml")"
"$TK" symbolicate "$TMP/s1.xml" --symbols "$TMP" -o "$TMP/s3.xml" 2>/dev/null
check_same_file "without the dSYM the second run keeps the first run's frames" "$TMP/s1.xml" "$TMP/s3.xml"

# Image loads from kdebug tables (generated export in the documented shapes).
UUIDS="--image 4C4C44D7-5555-3144-A1A5-753F1442BA46@104a8c000@/usr/local/lib/libtks-arm64.dylib
       --image DE46DD52-4994-3FD8-B4B4-E352A1A19354@18d36e000@/usr/lib/dyld"
GEN="python3 $TK_ROOT/tests/symgen/kdebug_export.py $S/time-profile-pre14.3-synthetic.xml"
# shellcheck disable=SC2086
$GEN $UUIDS >"$TMP/kd.xml"
# shellcheck disable=SC2086
$GEN $UUIDS --strings-first --fmt-only >"$TMP/kd2.xml"
check "generated kdebug export is well-formed" xmllint --noout "$TMP/kd.xml"
check_eq "info: how many images the kdebug tables gave" "kdebug-images  2" "$("$TK" info "$TMP/kd.xml" | grep kdebug)"
check_eq "info: strings table first, args only in fmt" "kdebug-images  2" "$("$TK" info "$TMP/kd2.xml" | grep kdebug)"
for k in kd kd2; do
	check_eq "$k: symbolicate uses the kdebug images without --image" "Main Thread tid=948054;$CHAIN 1000000" \
		"$("$TK" symbolicate "$TMP/$k.xml" --symbols "$S" 2>/dev/null | "$TK" collapse -)"
	check_eq "$k: --symbols in collapse uses them too" "Main Thread tid=948054;$CHAIN 1000000" \
		"$("$TK" collapse --symbols "$S" "$TMP/$k.xml" 2>/dev/null)"
done
"$TK" symbolicate "$TMP/kd.xml" --symbols "$S" -o "$TMP/kd.out.xml" 2>"$TMP/kd.txt"
check "images without a dSYM are summed up in one warning" grep -q "1 of 2 images from the trace's kdebug tables" "$TMP/kd.txt"
check "the resolved binary carries the kdebug path and UUID" \
	grep -q 'name="libtks-arm64.dylib" UUID="4C4C44D7-5555-3144-A1A5-753F1442BA46" arch="arm64" load-addr="0x104a8c000" path="/usr/local/lib/libtks-arm64.dylib"' "$TMP/kd.out.xml"
# A wrong load address in kdebug must not resolve (the image list is really used).
# shellcheck disable=SC2086
$GEN --image 4C4C44D7-5555-3144-A1A5-753F1442BA46@204a8c000@/x/libtks-arm64.dylib >"$TMP/kd3.xml"
check_eq "kdebug image at another address: frames stay addresses" "Main Thread tid=948054;0x104a8d264;0x104a8dab4 1000000" \
	"$("$TK" collapse --symbols "$S" "$TMP/kd3.xml" 2>/dev/null)"
check_eq "--image wins over the kdebug images" "Main Thread tid=948054;$CHAIN 1000000" \
	"$("$TK" symbolicate "$TMP/kd3.xml" --image "$S/libtks-arm64.dylib.dwarf@0x104a8c000" 2>/dev/null | "$TK" collapse -)"
