#!/bin/bash
# MTHawkeye frames named from a dSYM through the symbol API: dyld-images gives the image (UUID,
# load address), --symbols the dSYM; MTHawkeye's addresses are already call sites (return
# address − 1), so each is looked up as is. Oracle: llvm-symbolizer on the same DWARF file.
. "$TK_ROOT/tests/lib.sh"
DW="$FIX/symbol/libtks-arm64.dylib.dwarf"
[ -f "$DW" ] || exit 0 # the symbol engineer's fixture is not in this tree yet
S="$TMP/mth"; mkdir -p "$S"
BASE=$((0x104000000))
cat >"$S/dyld-images" <<'D'
{ "os_version" : "17.2", "arch" : "arm64 v8", "model" : "21C62", "name" : "Demo",
  "dyld_images" : [ { "uuid" : "4c4c44d755553144a1a5753f1442ba46", "base_addr" : "0x104000000", "addr_slide" : "0x4000000", "name" : "/private/var/containers/Bundle/Application/X/Demo.app/Frameworks/libtks.dylib" } ] }
D
{ echo "collection,key,value"
  echo 'cpu-highload,700000000.00,{"start":"700000000.00","lasting":"61.00","average":"97.00"}'
  printf 'cpu-highload-stackframe,700000000.00,[{"frame":"0x%x","count":6,"children":[{"frame":"0x%x","count":6}]}]\n' \
	$((BASE + 0x1263)) $((BASE + 0x1ab4)); } >"$S/records.mtlog"
"$TK" records "$S" --symbols "$DW" --tree 700000000 --min-percent 0 >"$TMP/tree.txt" 2>"$TMP/err"
rc=$?
if grep -q "not in this build" "$TMP/err"; then exit 0; fi
check_eq "records --symbols exits 0" 0 $rc
# llvm-symbolizer prints innermost first; the tree shows the outermost first
want=$( (llvm-symbolizer --inlining --obj="$DW" 0x1263 | awk 'NF && NR % 2 == 1' | tac
	llvm-symbolizer --inlining --obj="$DW" 0x1ab4 | awk 'NF && NR % 2 == 1' | tac) | paste -sd'|')
got=$(awk 'NR > 1 { print $3 }' "$TMP/tree.txt" | paste -sd'|')
check_eq "MTHawkeye frames named from the dSYM as llvm-symbolizer names them" "$want" "$got"
