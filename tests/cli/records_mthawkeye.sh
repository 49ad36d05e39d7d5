#!/bin/bash
# MTHawkeye's documented examples through the records reader: exact tree weights from the
# cpu-highload-stackframe example, the jsonc and NSDictionary examples rejected with a clear
# line, a session directory (.mtlog then .mmap2, last line wins, .mmap2 cut at NUL) with dyld-images.
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
M="$FIX/mthawkeye"
export TZ=UTC
tree=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",",":")))' "$M/cpu-highload-stackframe.doc-example.json")
meta=$(sed 's://.*$::' "$M/cpu-highload.doc-example.jsonc" | tr -d '\n')

{ echo "collection,key,value"
  echo "launch-time,1553511700.5,1553511700.5"
  echo "cpu,1553511721.9,96.3"
  echo "cpu-highload,575204521.78,$meta"
  echo "cpu-highload-stackframe,575204521.78,$tree"; } >"$TMP/records"

# Expected folded stacks, computed by hand from the doc's tree: a node's own weight is its count
# minus its children's (0x10234235: 60 - 40 - 20 = 0, so it is never a leaf).
cat >"$TMP/want.folded" <<'W'
0x10234000 10
0x10234111;0x10234112 30
0x10234235;0x10234444 40
0x10234235;0x10235555 20
W
"$TK" records "$TMP/records" --collapse 575204521.78 >"$TMP/got.folded" 2>"$TMP/err"
check_same_file "doc stackframe example: exact folded weights" "$TMP/want.folded" "$TMP/got.folded"
"$TK" records "$TMP/records" --collapse 5752 >"$TMP/got2.folded" 2>&1
check_same_file "record chosen by a unique key prefix" "$TMP/want.folded" "$TMP/got2.folded"

"$TK" records "$TMP/records" --json >"$TMP/list.json"
check_eq "listing: one record" 1 "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$TMP/list.json")"
# CFAbsoluteTime 575204521.78 + 978307200 (2001-01-01 in Unix time) = 1553511721.78
check_eq "listing: start converted from CFAbsoluteTime" "1553511721.78 2019-03-25T11:02:01Z" \
	"$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]; print(round(r["start"],2), r["start_utc"])' "$TMP/list.json")"
check_eq "listing: lasting, average (doc writes \"106\"), samples = sum of root counts" "132.6 106.0 100" \
	"$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]; print(r["duration_s"], r["avg_cpu_percent"], r["samples"])' "$TMP/list.json")"
check_eq "listing: top frame = most self samples" "0x10234444 40" \
	"$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]["top_frame"]; print(r["name"], r["self_samples"])' "$TMP/list.json")"
"$TK" records "$TMP/records" >"$TMP/list.txt"
check "listing: text table names the record" grep -q '^cpu-highload  575204521.78 .*2019-03-25T11:02:01Z .*132.60 s .*106.0 % .*100 ' "$TMP/list.txt"

# `//` comments are not JSON and MTHawkeye never writes them: the doc's jsonc example, put on one
# line, is refused with the file, line and a hint rather than read half-way.
{ echo "collection,key,value"
  echo "cpu-highload,575204521.78,$(tr '\n' ' ' <"$M/cpu-highload.doc-example.jsonc")"; } >"$TMP/jsonc"
check_fails "jsonc example (comments) refused" "$TK" records "$TMP/jsonc"
"$TK" records "$TMP/jsonc" 2>"$TMP/err" >/dev/null
check "jsonc error names file:line:column and comments" grep -q "jsonc:2:[0-9]*: cpu-highload value for key 575204521.78 is not valid JSON.*comments are not JSON" "$TMP/err"

# The ANR doc example is an NSDictionary description, not the JSON MTHawkeye stores.
{ echo "collection,key,value"
  echo "anr,1565256930.414564_0,$(tr '\n' ' ' <"$M/anr.doc-example.nsdictionary.txt")"; } >"$TMP/nsdict"
check_fails "NSDictionary-style anr value refused" "$TK" records "$TMP/nsdict"
"$TK" records "$TMP/nsdict" 2>"$TMP/err" >/dev/null
check "NSDictionary error names file:line and says why" grep -q "nsdict:2:[0-9]*: anr value .*NSDictionary description, not JSON" "$TMP/err"

# The same ANR as the JSON MTHawkeye stores, split into two chunks <unix>_<index> (written out of
# order): merged by prefix, stacks leaf first, weights = capturedCount.
S="$TMP/session"; mkdir -p "$S"
{ echo "collection,key,value"
  echo 'anr,1565256930.414564_1,{"duration":610.3181838989258,"startFrom":1565256930.414564,"inBackground":false,"stacks":[{"capturedCount":3,"stackframes":"0x10d90461b,0x10d8fe6f5","threadCount":6,"time":1565256930.975193,"titleframe":"0x10d90461b"}]}'
  echo 'anr,1565256930.414564_0,{"duration":610.3181838989258,"startFrom":1565256930.414564,"inBackground":false,"stacks":[{"capturedCount":1,"stackframes":"0x10d8fe55e,0x10d896497,0x108455f9a","threadCount":6,"time":1565256930.870066,"titleframe":"0x108455f9a"}]}'
  echo 'cpu-highload,575204521.78,{"start":"575204521.78","lasting":"10.00","average":"90.00"}'
  echo 'cpu-highload-stackframe,575204521.78,[{"frame":"0x100004000","count":5}]'; } >"$S/records.mtlog"
# .mmap2: a later line for the same key replaces the .mtlog one; the text ends at the first NUL.
{ echo 'cpu-highload-stackframe,575204521.78,[{"frame":"0x100004010","count":7,"children":[{"frame":"0x100008020","count":4}]}]'
  printf '\0\0garbage that must be ignored,,,\n'; } >"$S/records.mmap2"
cat >"$S/dyld-images" <<'D'
{
  "os_version" : "12.1",
  "arch" : "arm64 v8",
  "model" : "16B92",
  "name" : "Demo",
  "dyld_images" : [
    { "uuid" : "0123456789abcdef0123456789abcdef", "base_addr" : "0x100000000", "addr_slide" : "0x0", "name" : "/var/containers/Bundle/Application/X/Demo.app/Demo" },
    { "uuid" : "fedcba9876543210fedcba9876543210", "base_addr" : "0x100008000", "addr_slide" : "0x8000", "name" : "/var/containers/Bundle/Application/X/Demo.app/Frameworks/Kit.framework/Kit" }
  ]
}
D
"$TK" records "$S" --json >"$TMP/s.json" 2>"$TMP/err"
check_eq "session: cpu (2019-03) then anr (2019-08) records, in start order" "cpu-highload:575204521.78:7 anr:1565256930.414564:4" \
	"$(python3 -c 'import json,sys; print(" ".join("%s:%s:%d" % (r["kind"], r["key"], r["samples"]) for r in json.load(open(sys.argv[1]))))' "$TMP/s.json")"
"$TK" records "$S" --collapse 1565256930 >"$TMP/anr.folded"
printf '%s\n' "0x108455f9a;0x10d896497;0x10d8fe55e 1" "0x10d8fe6f5;0x10d90461b 3" >"$TMP/want.anr"
check_same_file "anr chunks merged, stacks root first, weights = capturedCount" "$TMP/want.anr" "$TMP/anr.folded"
"$TK" records "$S" --collapse 575204521.78 >"$TMP/cpu.folded"
printf '%s\n' "0x100004010 3" "0x100004010;0x100008020 4" >"$TMP/want.cpu"
check_same_file ".mmap2 line wins over .mtlog; leaf weight = 7 - 4" "$TMP/want.cpu" "$TMP/cpu.folded"
"$TK" records "$S" --tree 575204521.78 --min-percent 0 >"$TMP/tree.txt"
check "dyld-images: frames placed in their image (app, then framework)" grep -q "0x100004010  Demo+0x4010" "$TMP/tree.txt"
check "dyld-images: next image starts at its header" grep -q "0x100008020  Kit+0x20" "$TMP/tree.txt"

# cpu-highload-stackframe-ext: MTHawkeye's file for trees >= 15 KiB (which it cannot read back).
S2="$TMP/ext"; mkdir -p "$S2"
printf 'collection,key,value\ncpu-highload,575204600.00,{"start":"575204600.00","lasting":"60.00","average":"150.00"}\n' >"$S2/records.mtlog"
printf '575204600.00,[{"frame":"0x1000","count":2}]\xc2\xb7' >"$S2/cpu-highload-stackframe-ext"
"$TK" records "$S2" --collapse 575204600 >"$TMP/ext.folded"
check_eq "cpu-highload-stackframe-ext read back" "0x1000 2" "$(cat "$TMP/ext.folded")"

# Through tk_read_path: `tracekit collapse/tree` read Records files (gzip'd too) and session
# directories, one thread per record.
"$TK" collapse --no-thread "$TMP/records" | sort >"$TMP/rp.folded"
check_same_file "tracekit collapse on a Records file: same weights" "$TMP/want.folded" "$TMP/rp.folded"
gzip -c "$TMP/records" >"$TMP/records.gz"
"$TK" collapse --no-thread "$TMP/records.gz" | sort >"$TMP/rpz.folded"
check_same_file "tracekit collapse on a gzip'd Records file" "$TMP/want.folded" "$TMP/rpz.folded"
"$TK" collapse "$S" | sed 's/ tid=[0-9]*;/;/' | sort >"$TMP/dir.folded"
cat >"$TMP/want.dir" <<'W'
anr main 2019-08-08 09:35:30 UTC 0.61 s;0x108455f9a;0x10d896497;0x10d8fe55e 1
anr main 2019-08-08 09:35:30 UTC 0.61 s;0x10d8fe6f5;0x10d90461b 3
cpu-highload 2019-03-25 11:02:01 UTC 10.0 s;0x100004010 3
cpu-highload 2019-03-25 11:02:01 UTC 10.0 s;0x100004010;0x100008020 4
W
check_same_file "tracekit collapse on an MTHawkeye session directory: a thread per record" "$TMP/want.dir" "$TMP/dir.folded"
"$TK" collapse --thread 2 "$S" | sed 's/^[^;]*;//' >"$TMP/one.folded"
check_same_file "one record picked with --thread (tid = position in the listing)" "$TMP/want.anr" "$TMP/one.folded"
check_eq "listing: an unnamed top frame is shown as image+offset" "Kit+0x20" \
	"$(python3 -c 'import json,sys; print([r for r in json.load(open(sys.argv[1])) if r["kind"] == "cpu-highload"][0]["top_frame"]["name"])' "$TMP/s.json")"
"$TK" records "$TMP/records.gz" --collapse 575 >"$TMP/gz.folded"
check_same_file "tracekit records reads a gzip'd Records file" "$TMP/want.folded" "$TMP/gz.folded"
