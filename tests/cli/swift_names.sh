#!/bin/bash
# Swift names shown as Apple's tools show them: `tracekit demangle` (c++filt-like, C++/Rust/Swift),
# `tracekit atos` (simplified by default, --full-names), and tree/collapse/symbolicate through the
# symbol cache, on a dylib generated with Swift-mangled symbols (tksymgen --swift-names). The
# expected names are written from the generator's mangling shapes by hand.
. "$(dirname "$0")/../lib.sh"
tk_fork_start
export TRACEKIT_CACHE_DIR="$TMP/cache"

# ---- tracekit demangle
check_eq "demangle: C++, Rust legacy (hash dropped) and v0, Swift full form, plain names as they are" \
	"foo::bar()
core::fmt::write
mycrate::foo
MyApp.ViewController.viewDidLoad() -> ()
main" "$("$TK" demangle _ZN3foo3barEv _ZN4core3fmt5write17h0123456789abcdefE _RNvCs1234_7mycrate3foo \
	'$s5MyApp14ViewControllerC11viewDidLoadyyF' main)"
check_eq "demangle --simplified: what atos prints" "closure #1 in ViewController.viewDidLoad()" \
	"$("$TK" demangle --simplified '_$s5MyApp14ViewControllerC11viewDidLoadyyFyycfU_')"
check_eq "demangle from standard input: names inside text, the rest unchanged" \
	"3 MyApp.Manager.fetch(Swift.String) async throws -> () + 12, then foo::bar(). Done" \
	"$(echo '3 _$s5MyApp7ManagerC5fetchyySSYaKF + 12, then __ZN3foo3barEv. Done' | "$TK" demangle)"
# Macro expansion buffers (@__swiftmacro_…, as the compiler names them in file names and debug info):
# the filter takes the '@' as part of the name, as the arguments path does; expected output from
# swift-demangle's own test list (tests/fixtures/swift-demangle/manglings.txt).
grep '^@__swiftmacro_' "$FIX/swift-demangle/manglings.txt" | sed 's/ *---> .*//' >"$TMP/macros.txt"
grep '^@__swiftmacro_' "$FIX/swift-demangle/manglings.txt" | sed 's/.* ---> //' | sed 's/^/in (/; s/$/) here/' >"$TMP/macros.want"
check_eq "demangle from standard input: @__swiftmacro_ names ($(wc -l <"$TMP/macros.txt")) as swift-demangle prints them" \
	"$(cat "$TMP/macros.want")" "$(sed 's/^/in (/; s/$/) here/' "$TMP/macros.txt" | "$TK" demangle)"
check_eq "demangle: an invalid Swift name comes back unchanged" '$s3foo_$$' "$("$TK" demangle '$s3foo_$$')"
check_fails "demangle: unknown option" "$TK" demangle --bogus

# ---- a dylib whose functions have Swift symbols
python3 "$TK_ROOT/tests/symgen/tksymgen.py" build --out "$TMP/g" --n 60 --files 1 --seed 21 --arch arm64 \
	--swift-names >"$TMP/gen.log" 2>&1 || { notok "generate Swift-named dylib" "$(tail -5 "$TMP/gen.log")"; exit 0; }
DSYM="$TMP/g/libtks-arm64.dylib.dSYM"
llvm-nm-14 --defined-only "$TMP/g/libtks-arm64.dylib" >"$TMP/nm.txt"
# NAME.count.getter and NAME.fetch(id:completion:) from the shapes tksymgen writes
read -r GA GSYM < <(awk '$3 ~ /V5countSivg$/ {print $1, $3; exit}' "$TMP/nm.txt")
read -r FA FSYM < <(awk '$3 ~ /C5fetch2id10completionySi_ySbctF$/ {print $1, $3; exit}' "$TMP/nm.txt")
GN=$(echo "$GSYM" | sed -E 's/^_\$s7tksynth[0-9]+(.*)V5countSivg$/\1/')
FN=$(echo "$FSYM" | sed -E 's/^_\$s7tksynth[0-9]+(.*)C5fetch2id10completionySi_ySbctF$/\1/')
[ -n "$GN" ] && [ -n "$FN" ] || { notok "Swift symbols in the generated dylib" "$(head -5 "$TMP/nm.txt")"; exit 0; }

check_eq "atos prints Swift names in the simplified form, like Apple's atos" \
	"$GN.count.getter (in libtks-arm64.dylib)
$FN.fetch(id:completion:) (in libtks-arm64.dylib)" \
	"$("$TK" atos -o "$DSYM" 0x$GA 0x$FA | sed 's/ (unit_000.c:[0-9]*)$//')"
check_eq "atos --full-names prints swift-demangle's full form" \
	"tksynth.$GN.count.getter : Swift.Int (in libtks-arm64.dylib)
tksynth.$FN.fetch(id: Swift.Int, completion: (Swift.Bool) -> ()) -> () (in libtks-arm64.dylib)" \
	"$("$TK" atos -o "$DSYM" --full-names 0x$GA 0x$FA | sed 's/ (unit_000.c:[0-9]*)$//')"
check_eq "atos on the binary alone (symbol table): demangled too" "$GN.count.getter (in libtks-arm64.dylib) + 4" \
	"$(mkdir -p "$TMP/lone" && cp "$TMP/g/libtks-arm64.dylib" "$TMP/lone/" && "$TK" atos -o "$TMP/lone/libtks-arm64.dylib" $(printf '0x%x' $((0x$GA + 4))))"
check "atos --json: simplified name, swift flag" \
	grep -q "\"function\":\"$GN.count.getter\",.*\"swift\":true" <("$TK" atos -o "$DSYM" --json 0x$GA)

# ---- a pre-14.3 export whose two frames are these functions: tree/collapse/symbolicate
LOAD=4373135360 # 0x104a8c000
sed -e "s/4373142196 4373140068/$((LOAD + 0x$GA + 4)) $((LOAD + 0x$FA + 8))/" \
	"$FIX/symbol/time-profile-pre14.3-synthetic.xml" >"$TMP/x13.xml"
check_eq "collapse --symbols (via symbolicate): caller and leaf with Swift names" \
	"Main Thread tid=948054;$FN.fetch(id:completion:);$GN.count.getter 1000000" \
	"$("$TK" symbolicate "$TMP/x13.xml" --image "$DSYM@0x104a8c000" 2>/dev/null | "$TK" collapse -)"
"$TK" symbolicate "$TMP/x13.xml" --image "$DSYM@0x104a8c000" -o "$TMP/sym.xml" 2>/dev/null
"$TK" tree "$TMP/sym.xml" >"$TMP/tree.txt"
check "tree shows the names as Instruments does" grep -q "└─ $GN.count.getter  \[libtks-arm64.dylib\]" "$TMP/tree.txt"
check "top lists them" grep -q "$GN.count.getter" <("$TK" top "$TMP/sym.xml")
