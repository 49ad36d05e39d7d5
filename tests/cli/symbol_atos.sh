#!/bin/bash
# tracekit atos against llvm-symbolizer (the oracle) on Mach-O dylibs/executables and dSYMs generated
# at test time (tests/symgen/tksymgen.py: clang-14, ld64.lld-14, dsymutil-14, llvm-lipo-14), plus
# Apple atos output forms, load-address math, cache reuse/invalidation and bad input.
. "$(dirname "$0")/../lib.sh"
tk_fork_start
GEN="$TK_ROOT/tests/symgen/tksymgen.py"
ORACLE="$TK_ROOT/tests/symgen/oracle.py"
export TRACEKIT_CACHE_DIR="$TMP/cache"

python3 "$GEN" build --out "$TMP/thin" --n 300 --files 3 --seed 11 --arch arm64 >"$TMP/gen1.log" 2>&1 ||
	{ notok "generate thin arm64 dylib" "$(tail -5 "$TMP/gen1.log")"; exit 0; }
python3 "$GEN" build --out "$TMP/fat" --n 300 --files 3 --seed 12 --arch arm64e --arch x86_64 --fat --exe \
	>"$TMP/gen2.log" 2>&1 || { notok "generate fat executable" "$(tail -5 "$TMP/gen2.log")"; exit 0; }
python3 "$GEN" build --out "$TMP/d5" --n 120 --files 1 --seed 13 --arch x86_64 --dwarf 5 >"$TMP/gen3.log" 2>&1 ||
	{ notok "generate DWARF 5 objects" "$(tail -5 "$TMP/gen3.log")"; exit 0; }
ok "generated test images"

THIN_DWARF="$TMP/thin/libtks-arm64.dylib.dSYM/Contents/Resources/DWARF/libtks-arm64.dylib"
FAT_DWARF="$TMP/fat/libtks.dSYM/Contents/Resources/DWARF/libtks"

# --- oracle: 40k + 30k + 30k random addresses, function chain + file + line identical
python3 "$GEN" addrs --layout "$TMP/thin/layout.tsv" --arch arm64 --count 40000 --seed 1 >"$TMP/a-thin.txt"
python3 "$GEN" addrs --layout "$TMP/fat/layout.tsv" --file libtks --arch arm64e --count 30000 --seed 2 >"$TMP/a-arm64e.txt"
python3 "$GEN" addrs --layout "$TMP/fat/layout.tsv" --file libtks --arch x86_64 --count 30000 --seed 3 >"$TMP/a-x86.txt"
check "oracle: thin arm64 dSYM, 40k addresses, inline chains identical to llvm-symbolizer" \
	python3 "$ORACLE" --tk "$TK" --obj "$THIN_DWARF" --addrs "$TMP/a-thin.txt"
check "oracle: fat dSYM arm64e slice, 30k addresses" \
	python3 "$ORACLE" --tk "$TK" --obj "$FAT_DWARF" --arch arm64e --addrs "$TMP/a-arm64e.txt"
check "oracle: fat dSYM x86_64 slice (MH_EXECUTE, __TEXT 0x100000000), 30k addresses" \
	python3 "$ORACLE" --tk "$TK" --obj "$FAT_DWARF" --arch x86_64 --addrs "$TMP/a-x86.txt"
# dsymutil-14 drops DWARF 5's .debug_line_str, so DWARF 5 (addrx, rnglistx, str_offsets, v5 line
# tables) is checked on the object file, which llvm-symbolizer reads the same way
python3 -c "import random; r=random.Random(4); print('\n'.join('0x%x' % r.randrange(0, 0x1800) for _ in range(10000)))" >"$TMP/a-d5.txt"
check "oracle: DWARF 5 object file (x86_64), 10k addresses" \
	python3 "$ORACLE" --tk "$TK" --obj "$TMP/d5/obj-x86_64/unit_000.o" --addrs "$TMP/a-d5.txt"
mkdir -p "$TMP/lone" && cp "$TMP/fat/libtks" "$TMP/lone/"
head -5000 "$TMP/a-x86.txt" >"$TMP/a-x86-5k.txt"
check "oracle: binary without dSYM (symbol table only), 5k addresses" \
	python3 "$ORACLE" --tk "$TK" --obj "$TMP/lone/libtks" --arch x86_64 --addrs "$TMP/a-x86-5k.txt"
check "oracle: binary with its dSYM next to it uses the dSYM" \
	python3 "$ORACLE" --tk "$TK" --obj "$TMP/fat/libtks" --arch x86_64 --addrs "$TMP/a-x86-5k.txt"

# --- atos output forms
A=$(sed -n 7p "$TMP/a-thin.txt")
LL=$(llvm-symbolizer --obj="$THIN_DWARF" --inlining "$A" | sed -n '1~2p' | head -1)
expect_fn=$(llvm-symbolizer --obj="$THIN_DWARF" --inlining "$A" | grep -v '^$' | tail -2 | head -1)
expect_line=$(llvm-symbolizer --obj="$THIN_DWARF" --inlining "$A" | sed -n 2p | awk -F: '{print $(NF-1)}')
expect_file=$(llvm-symbolizer --obj="$THIN_DWARF" --inlining "$A" | sed -n 2p | sed 's/:[0-9]*:[0-9]*$//' | xargs basename)
got=$("$TK" atos -o "$TMP/thin/libtks-arm64.dylib.dSYM" "$A")
check_eq "atos line: outermost function (in Image) (innermost file:line)" \
	"$expect_fn (in libtks-arm64.dylib) ($expect_file:$expect_line)" "$got"
n_inl=$("$TK" atos -o "$THIN_DWARF" -i "$A" | wc -l)
n_llvm=$(llvm-symbolizer --obj="$THIN_DWARF" --inlining "$A" | grep -c -v -e '^$' -e ':[0-9]*:[0-9]*$')
check_eq "atos -i prints one line per frame" "$n_llvm" "$n_inl"
check_eq "atos: -l LOADADDR (runtime = file + load − vmaddr)" "$got" \
	"$("$TK" atos -o "$THIN_DWARF" -l 0x104a8c000 $(printf '0x%x' $((A + 0x104a8c000))))"
check_eq "atos: -s SLIDE" "$got" "$("$TK" atos -o "$THIN_DWARF" -s 1000 $(printf '%x' $((A + 0x1000))))"
XA=$(sed -n 3p "$TMP/a-x86.txt")
check_eq "atos: -l on an MH_EXECUTE subtracts the load address and adds __TEXT vmaddr 0x100000000" \
	"$("$TK" atos -o "$FAT_DWARF" -arch x86_64 "$XA")" \
	"$("$TK" atos -o "$FAT_DWARF" -arch x86_64 -l 0x10a0b4000 $(printf '0x%x' $((XA - 0x100000000 + 0x10a0b4000))))"
check_eq "atos: -offset" "$("$TK" atos -o "$FAT_DWARF" -arch x86_64 "$XA")" \
	"$("$TK" atos -o "$FAT_DWARF" -arch x86_64 -offset $(printf '0x%x' $((XA - 0x100000000))))"
check_eq "atos: an address in no function is echoed back" "0x7" "$("$TK" atos -o "$THIN_DWARF" 0x7)"
sym0=$(llvm-nm-14 --defined-only "$TMP/lone/libtks" --arch=x86_64 | awk '$3 ~ /^_u0_f0$/ {print $1}')
check_eq "atos: symbol table only gives 'function (in Image) + offset'" "u0_f0 (in libtks) + 5" \
	"$("$TK" atos -o "$TMP/lone/libtks" -arch x86_64 $(printf '0x%x' $((0x$sym0 + 5))))"
printf '%s\n%s junk\n' "$A" "$A" >"$TMP/f.txt"
check_eq "atos -f FILE and stdin give the same lines" "$("$TK" atos -o "$THIN_DWARF" -f "$TMP/f.txt" 2>/dev/null)" \
	"$("$TK" atos -o "$THIN_DWARF" <"$TMP/f.txt" 2>/dev/null)"
"$TK" atos -o "$THIN_DWARF" --json -i "$A" >"$TMP/j.json"
check "atos --json is valid JSON with frames" python3 -c "import json,sys; o=json.load(open('$TMP/j.json')); assert o['frames'] and o['frames'][0]['line']>0"
swift_addr=$(llvm-nm-14 --defined-only "$THIN_DWARF" | awk '$3 ~ /^_\$s7tksynth/ {print $1; exit}')
if [ -n "$swift_addr" ]; then
	check "atos --json flags Swift symbols" bash -c "'$TK' atos -o '$THIN_DWARF' --json 0x$swift_addr | grep -q '\"swift\":true'"
fi

# --- cache: built once, reused, rebuilt when stale or corrupt
ls "$TRACEKIT_CACHE_DIR"/*.tksym >/dev/null 2>&1 && ok "caches written to \$TRACEKIT_CACHE_DIR" || notok "caches written"
C=$(ls "$TRACEKIT_CACHE_DIR"/*-arm64.tksym | head -1)
# (nanosecond times: a rewrite shows without waiting for the clock's next second)
before=$(stat -c %.9Y.%s "$C")
"$TK" atos -o "$THIN_DWARF" "$A" >/dev/null
check_eq "a valid cache is reused, not rewritten" "$before" "$(stat -c %.9Y.%s "$C")"
printf '\x5a' | dd of="$C" bs=1 seek=300 conv=notrunc 2>/dev/null
check_eq "a corrupt cache (one flipped byte) is detected and rebuilt" "$got" "$("$TK" atos -o "$THIN_DWARF" "$A")"
"$TK" symcache info "$C" >"$TMP/info.txt" 2>&1
check "the rebuilt cache is valid again" grep -q ' arm64 vmaddr=0x0 ' "$TMP/info.txt"
touch -d '2001-01-01' "$C"
touch -d '2001-01-02' "$THIN_DWARF"
"$TK" atos -o "$THIN_DWARF" "$A" >/dev/null
check "a cache whose dSYM changed (mtime) is rebuilt" test "$(stat -c %Y "$C")" -gt 1000000000
check_eq "atos -o CACHE uses a cache file directly" "$got" "$("$TK" atos -o "$C" "$A")"
"$TK" symcache build "$TMP/fat/libtks.dSYM" -o "$TMP/built" >"$TMP/built.txt"
check_eq "symcache build writes one cache per slice" "2" "$(ls "$TMP/built" | grep -c '\.tksym$')"
head -c 1000 "$C" >"$TMP/trunc.tksym"
check_fails "truncated cache given with -o fails with a message" "$TK" atos -o "$TMP/trunc.tksym" "$A"

# --- bad input
check_fails "missing dSYM" "$TK" atos -o "$TMP/nope.dSYM" 0x1000
check_fails "arch not in the file" "$TK" atos -o "$THIN_DWARF" -arch x86_64 0x1000
check_fails "unknown arch" "$TK" atos -o "$THIN_DWARF" -arch sparc 0x1000
head -c 3000 "$THIN_DWARF" >"$TMP/trunc.dwarf"
check_fails "truncated DWARF file" "$TK" atos -o "$TMP/trunc.dwarf" 0x1000
"$TK" atos -o "$TMP/trunc.dwarf" 0x1000 2>"$TMP/err.txt"
check "truncated file: the message names the file and the problem" grep -q "trunc.dwarf.*past the end" "$TMP/err.txt"
echo "not a mach-o" >"$TMP/text.txt"
check_fails "a text file is not a Mach-O" "$TK" atos -o "$TMP/text.txt" 0x1000
check_fails "no -o" "$TK" atos 0x1000
