#!/bin/bash
# MetricKit frames symbolicated by binary UUID + offset (--symbols): every frame of a generated payload
# (tests/cli/metrickit_symbols.py) pointing into a dylib built here (tests/symgen/tksymgen.py) gets the
# inline chain llvm-symbolizer gives for the same image offset — a leaf as given, a caller at offset − 1
# — in the usual form and in the iOS 14 form of offsetIntoBinaryTextSegment; frames of images without
# a dSYM keep `binaryName + 0xoffset`.
. "$TK_ROOT/tests/lib.sh"
export TRACEKIT_CACHE_DIR="$TMP/cache"
python3 "$TK_ROOT/tests/symgen/tksymgen.py" build --out "$TMP/g" --n 80 --files 2 --seed 17 --arch arm64 \
	>"$TMP/gen.log" 2>&1 || { notok "generate a dylib and dSYM" "$(tail -5 "$TMP/gen.log")"; exit 0; }
DSYM="$TMP/g/libtks-arm64.dylib.dSYM"
DWARF=$(ls "$DSYM"/Contents/Resources/DWARF/*)
n=$(python3 "$TK_ROOT/tests/cli/metrickit_symbols.py" make "$TMP/g/layout.tsv" "$DWARF" "$TMP/p.json" "$TMP/want" --frames 80)
"$TK" collapse --symbols "$DSYM" "$TMP/p.json" 2>"$TMP/warn" | sort >"$TMP/got"
check_same_file "all $n image offsets: the inline chains llvm-symbolizer gives (both offset forms)" "$TMP/want" "$TMP/got"
check "the image without a dSYM is named once" grep -q "UIKitCore: left unsymbolicated" "$TMP/warn"
check "without --symbols a frame reads binaryName + 0xoffset" \
	grep -q ';libtks-arm64.dylib + 0x[0-9a-f]*;' <("$TK" collapse "$TMP/p.json")
"$TK" tree --symbols "$DSYM" "$TMP/p.json" >"$TMP/tree.txt" 2>/dev/null
check "tree --symbols marks inlined frames" grep -q "(inlined)" "$TMP/tree.txt"
