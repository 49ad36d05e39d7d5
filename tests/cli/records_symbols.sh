#!/bin/bash
# Symbolication of Linux records: images.json → image, ELF address = addr − base, name from the
# symbol table, file:line from DWARF. Oracle: llvm-symbolizer.
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
S="$TMP/session"; mkdir -p "$S"
cat >"$TMP/prog.c" <<'C'
__attribute__((noinline)) int leaf_work(int n)
{
	volatile int s = 0;
	for (int i = 0; i < n; i++)
		s += i;
	return s;
}
__attribute__((noinline)) int middle(int n)
{
	return leaf_work(n) + 1;
}
static int hidden_static(int n) { return middle(n) * 2; }
int main(int argc, char **argv)
{
	return hidden_static(argc) & 1;
}
C
cc -g -O0 -fno-inline -o "$TMP/prog" "$TMP/prog.c" || { notok "compile test program"; exit 0; }
addr() { nm "$TMP/prog" | awk -v f="$1" '$3 == f { print $1 }'; }
BASE=$((0x555555554000))
hex() { printf '0x%x' "$1"; }
A_MAIN=$((0x$(addr main) + 9)) A_HID=$((0x$(addr hidden_static) + 9)) A_MID=$((0x$(addr middle) + 9)) A_LEAF=$((0x$(addr leaf_work) + 12))
loads=$(readelf -lW "$TMP/prog" | awk '$1 == "LOAD" { printf "%s{\"vaddr\":\"%s\",\"memsz\":\"%s\",\"offset\":\"%s\",\"flags\":\"r-x\"}", sep, $3, $6, $2; sep="," }')
bid=$(readelf -n "$TMP/prog" | awk '/Build ID/ { print $3 }')
img() { printf '{"os":"Linux","arch":"x86_64","pid":4242,"images":[{"path":"%s","base":"%s","build_id":"%s","loads":[%s]}]}\n' "$TMP/prog" "$(hex $BASE)" "$1" "$loads"; }
img "$bid" >"$S/images.json"
{ echo "collection,key,value"
  echo "hang,1763812800.250,{\"start\":1763812800.25,\"duration_ms\":3020,\"threshold_ms\":250,\"tid\":4242,\"thread\":\"main\",\"samples\":9,\"live\":false}"
  printf 'hang-stackframe,1763812800.250,[{"frame":"%s","count":9,"children":[{"frame":"%s","count":9,"children":[{"frame":"%s","count":9,"children":[{"frame":"%s","count":9}]}]}]}]\n' \
	"$(hex $((BASE + A_MAIN)))" "$(hex $((BASE + A_HID)))" "$(hex $((BASE + A_MID)))" "$(hex $((BASE + A_LEAF)))"; } >"$S/records"

# Recorded callers are already return address - 1 (docs/records-format.md): every address is
# looked up as recorded, by us and by the oracle.
oracle() { llvm-symbolizer --obj="$TMP/prog" --no-inlines --relative-address "$(hex "$1")" | head -2 | tr '\n' ' ' | awk '{ split($2, a, ":"); print $1, a[1] ":" a[2] }'; }
want="$(oracle $A_MAIN)|$(oracle $A_HID)|$(oracle $A_MID)|$(oracle $A_LEAF)"
"$TK" records "$S" --tree 1763812800 --min-percent 0 >"$TMP/tree.txt" 2>"$TMP/err"
got=$(awk 'NR > 1 { print $3, $5 }' "$TMP/tree.txt" | paste -sd'|')
check_eq "names and file:line match llvm-symbolizer (addresses as recorded)" "$want" "$got"
check "static function named from .symtab" grep -q " hidden_static " "$TMP/tree.txt"
check_eq "no warnings for a matching build-id" "" "$(cat "$TMP/err")"
"$TK" records "$S" --json >"$TMP/l.json"
check_eq "listing: top frame is the leaf function with its line" "leaf_work $(oracle $A_LEAF | cut -d' ' -f2 | sed 's/.*://')" \
	"$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))[0]["top_frame"]; print(t["name"], t["line"])' "$TMP/l.json")"
check_eq "listing: hang thread, tid and duration" "main 4242 3.02" \
	"$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]; print(r["thread"], r["tid"], r["duration_s"])' "$TMP/l.json")"
"$TK" records "$S" --no-symbols --collapse 1763812800 >"$TMP/raw.folded"
check_eq "--no-symbols keeps raw addresses" "$(hex $((BASE + A_MAIN)));$(hex $((BASE + A_HID)));$(hex $((BASE + A_MID)));$(hex $((BASE + A_LEAF))) 9" "$(cat "$TMP/raw.folded")"

# a rebuilt binary (different build-id) must not lend its names to old addresses
img "0000000000000000000000000000000000000000" >"$S/images.json"
"$TK" records "$S" --collapse 1763812800 >"$TMP/stale.folded" 2>"$TMP/err"
check "changed binary: warning names the file and the build-id" grep -q "prog: build-id $bid differs from the recorded one" "$TMP/err"
check_eq "changed binary: frames stay raw addresses" "$(cat "$TMP/raw.folded")" "$(cat "$TMP/stale.folded")"
# an image file that is gone: warning, raw addresses, exit 0
img "$bid" | sed "s|$TMP/prog|$TMP/gone|" >"$S/images.json"
check "missing image file: still lists" "$TK" records "$S"
"$TK" records "$S" 2>&1 >/dev/null | grep -q "gone" && ok "missing image file: warned" || notok "missing image file: warned"

# Inlined calls (-O2): one recorded address becomes the function and the calls inlined into it,
# each at its call site, as llvm-symbolizer reports them (innermost first there, outermost first here).
cat >"$TMP/inl.c" <<'C'
static inline __attribute__((always_inline)) int sq(int x)
{
	return x * x + (x >> 3);
}
static inline __attribute__((always_inline)) int step(int x)
{
	return sq(x) ^ (x << 1);
}
__attribute__((noinline)) int kernel(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += step(i);
	return s;
}
int main(int argc, char **argv)
{
	return kernel(argc * 1000) & 1;
}
C
cc -g -O2 -o "$TMP/inl" "$TMP/inl.c"
read -r kstart ksize < <(nm -S "$TMP/inl" | awk '$4 == "kernel" { print $1, $2 }')
# the first address in kernel where llvm-symbolizer sees sq inlined into step inlined into kernel
deep=$(for ((o = 0; o < 0x$ksize; o++)); do printf '0x%x\n' $((0x$kstart + o)); done |
	llvm-symbolizer --obj="$TMP/inl" --output-style=LLVM 2>/dev/null |
	awk 'BEGIN { RS = ""; FS = "\n" } NF >= 6 && $1 == "sq" { print NR - 1; exit }')
if [ -z "$deep" ]; then notok "inline test: compiler inlined as expected"; else
	A=$((0x$kstart + deep)); AM=$((0x$(nm "$TMP/inl" | awk '$3 == "main" { print $1 }') + 4))
	loads=$(readelf -lW "$TMP/inl" | awk '$1 == "LOAD" { printf "%s{\"vaddr\":\"%s\",\"memsz\":\"%s\"}", sep, $3, $6; sep="," }')
	S3="$TMP/inl-session"; mkdir -p "$S3"
	printf '{"images":[{"path":"%s","base":"0x7f0000000000","loads":[%s]}]}\n' "$TMP/inl" "$loads" >"$S3/images.json"
	{ echo "collection,key,value"
	  printf 'cpu-highload-stackframe,700000000.00,[{"frame":"%s","count":5,"children":[{"frame":"%s","count":5}]}]\n' \
		"$(hex $((0x7f0000000000 + AM)))" "$(hex $((0x7f0000000000 + A)))"; } >"$S3/records"
	want=$(llvm-symbolizer --obj="$TMP/inl" --output-style=LLVM "$(hex $A)" | awk 'NF { if (n++ % 2 == 0) f = $1; else { split($1, a, ":"); print f, a[1] ":" a[2] } }' | tac | paste -sd'|')
	"$TK" records "$S3" --tree 7 --min-percent 0 >"$TMP/inl.txt"
	got=$(awk 'NR > 2 { print $3, $5 }' "$TMP/inl.txt" | paste -sd'|')
	check_eq "inlined calls expanded as llvm-symbolizer does" "$want" "$got"
	check_eq "inlined frames marked" 2 "$(grep -c '\[inlined\]' "$TMP/inl.txt")"
fi

# C++: names demangled (symbol table and inlined frames alike), as llvm-symbolizer prints them.
cat >"$TMP/cxx.cc" <<'C'
namespace geo {
template <typename T> struct Vec {
	T x, y;
	inline __attribute__((always_inline)) T dot(const Vec &o) const { return x * o.x + y * o.y; }
};
__attribute__((noinline)) double norm2(const Vec<double> *v, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += v[i].dot(v[i]);
	return s;
}
} // namespace geo
int main(int argc, char **) { geo::Vec<double> v[4] = {{1, 2}, {3, 4}, {5, 6}, {7, double(argc)}}; return (int)geo::norm2(v, 4) & 1; }
C
if g++ -g -O2 -o "$TMP/cxx" "$TMP/cxx.cc" 2>"$TMP/err"; then
	read -r nstart nsize < <(nm -S "$TMP/cxx" | awk '$4 == "_ZN3geo5norm2EPKNS_3VecIdEEi" { print $1, $2 }')
	off=$(for ((o = 0; o < 0x$nsize; o++)); do printf '0x%x\n' $((0x$nstart + o)); done |
		llvm-symbolizer --obj="$TMP/cxx" --output-style=LLVM 2>/dev/null |
		awk 'BEGIN { RS = ""; FS = "\n" } NF >= 4 { print NR - 1; exit }')
	if [ -n "$off" ]; then
		A=$((0x$nstart + off))
		loads=$(readelf -lW "$TMP/cxx" | awk '$1 == "LOAD" { printf "%s{\"vaddr\":\"%s\",\"memsz\":\"%s\"}", sep, $3, $6; sep="," }')
		S4="$TMP/cxx-session"; mkdir -p "$S4"
		printf '{"images":[{"path":"%s","base":"0x7f0000000000","loads":[%s]}]}\n' "$TMP/cxx" "$loads" >"$S4/images.json"
		printf 'collection,key,value\ncpu-highload-stackframe,700000000.00,[{"frame":"%s","count":3}]\n' "$(hex $((0x7f0000000000 + A)))" >"$S4/records"
		want=$(llvm-symbolizer --obj="$TMP/cxx" --output-style=LLVM "$(hex $A)" | awk 'NF && NR % 2 == 1' | tac | paste -sd'|')
		got=$("$TK" records "$S4" --collapse 7 | sed 's/ [0-9]*$//; s/;/|/g')
		check_eq "C++ frames demangled like llvm-symbolizer (inlined member function included)" "$want" "$got"
	else
		notok "C++ test: compiler inlined Vec::dot as expected"
	fi
else
	notok "C++ test program compiles" "$(head -3 "$TMP/err")"
fi
