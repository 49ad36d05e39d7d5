#!/bin/bash
# ingest --symbols: an MTHawkeye session's ANR stacks signed with function names from a dSYM (image
# by UUID from dyld-images). Oracle: llvm-symbolizer on the same DWARF file. SQLite only: signatures
# are made before the store, the same for every backend (store_backends.sh compares backends).
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
DW="$FIX/symbol/libtks-arm64.dylib.dwarf"
[ -f "$DW" ] || { notok "fixture $DW"; exit 1; }
S="$TMP/mth"; mkdir -p "$S"
cat >"$S/dyld-images" <<'D'
{ "os_version" : "17.2", "arch" : "arm64 v8", "model" : "21C62", "name" : "Demo",
  "dyld_images" : [ { "uuid" : "4c4c44d755553144a1a5753f1442ba46", "base_addr" : "0x104000000", "addr_slide" : "0x4000000", "name" : "/private/var/containers/Bundle/Application/X/Demo.app/Frameworks/libtks.dylib" } ] }
D
# two ANRs with the same stack, one with another: leaf 0x1ab4 called from 0x1263
for k in 1795300000.5 1795300100.5; do
	printf 'anr,%s_0,{"duration":700,"startFrom":%s,"inBackground":false,"stacks":[{"capturedCount":2,"stackframes":"0x%x,0x%x","threadCount":3,"time":%s,"titleframe":"0x%x"}]}\n' \
		$k ${k%.5} $((0x104000000 + 0x1ab4)) $((0x104000000 + 0x1263)) ${k%.5} $((0x104000000 + 0x1ab4))
done >"$S/records.mtlog"
printf 'anr,1795300200.5_0,{"duration":900,"startFrom":1795300200,"inBackground":false,"stacks":[{"capturedCount":1,"stackframes":"0x%x","threadCount":3,"time":1795300200,"titleframe":"0x%x"}]}\n' \
	$((0x104000000 + 0x1263)) $((0x104000000 + 0x1263)) >>"$S/records.mtlog"
printf '{"app":"Demo","version":"1.0"}' >"$S/meta.json"
"$TK" ingest --db "sqlite:$TMP/s.db" --symbols "$DW" "$S" 2>"$TMP/err"
check "ingest --symbols stores the ANRs" grep -q "3 reports from 1 input: 3 new" "$TMP/err"
"$TK" top-hangs --db "sqlite:$TMP/s.db" --json >"$TMP/top"
# leaf first: the chain at 0x1ab4 (innermost first, as llvm-symbolizer prints it), then at 0x1263
chain() { llvm-symbolizer --inlining --obj="$DW" "$1" | awk 'NF && NR % 2 == 1'; }
want=$( (chain 0x1ab4; chain 0x1263) | head -5 | paste -sd';')
got=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["signature"])' "$TMP/top")
check_eq "the most frequent stack is named from the dSYM, leaf first (llvm-symbolizer's names)" "$want" "$got"
check_eq "it counts its 2 hangs" 2 "$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["count"])' "$TMP/top")"
"$TK" ingest --db "sqlite:$TMP/raw.db" "$S" 2>/dev/null
got=$("$TK" top-hangs --db "sqlite:$TMP/raw.db" --json | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["signature"])')
check_eq "without --symbols: image+offset, the same on every device" "libtks.dylib+0x1ab4;libtks.dylib+0x1263" "$got"
check_fails "--symbols with a missing path refused" "$TK" ingest --db "sqlite:$TMP/x.db" --symbols "$TMP/nope" "$S"
