#!/bin/bash
# MetricKit payloads (real ones from Meter's and sentry-cocoa's test resources, tests/fixtures/metrickit/)
# read into call trees: every folded stack and self count equals an independent reading with Python's
# json module (tests/cli/metrickit_oracle.py), trees keep total = self + Σ children, per-thread totals
# are the root frames' sampleCount sums, a 2,000-frame stack survives whole, arrays / JSON Lines / gzip
# give the same result, and bad input is one line naming the field.
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
M="$FIX/metrickit"
O="$TK_ROOT/tests/cli/metrickit_oracle.py"
real=$(ls "$M"/*.json | grep -v garbage)

# every payload's collapse and tree --json from one tk_batch process (a tracekit process costs ~0.2 s
# of CPU under ASan before it reads anything); the checks further down run tracekit itself
for f in $real; do
	b=$(basename "$f")
	tk_batch_add "$TMP/real.list" collapse -o "$TMP/$b.folded" "$f"
	tk_batch_add "$TMP/real.list" tree --json -o "$TMP/$b.tree.json" "$f"
done
"$TK_BATCH" "$TMP/real.list" >"$TMP/real.out" 2>&1 || notok "tk_batch read every payload" "$(head -c 600 "$TMP/real.out")"
for f in $real; do
	b=$(basename "$f")
	python3 "$O" folded "$f" | sort >"$TMP/want"
	sort "$TMP/$b.folded" >"$TMP/got"
	check_same_file "$b: folded stacks and self counts = the oracle's" "$TMP/want" "$TMP/got"
	python3 "$O" totals "$f" >"$TMP/want.tot"
	python3 -c '
import json, sys
d = json.load(sys.stdin)
bad = 0
def walk(n):
    global bad
    if n["total"] != n["self"] + sum(c["total"] for c in n["children"]):
        bad += 1
    for c in n["children"]:
        walk(c)
for t in d["threads"]:
    for r in t["root"]:
        walk(r)
    print("%s\t%d" % (t["name"], sum(r["total"] for r in t["root"]) + t["self"]))
sys.exit(1 if bad else 0)' <"$TMP/$b.tree.json" >"$TMP/got.tot"
	check "$b: total = self + Σ children at every node" test $? -eq 0
	check_same_file "$b: per-thread totals = Σ root frames' sampleCount" "$TMP/want.tot" "$TMP/got.tot"
done

# the attributed thread of a per-thread tree is marked, an aggregated tree is one pseudo-thread
check "per-thread hang: one thread per call stack, the attributed one marked" \
	grep -q '^stacks 1 thread 0 (attributed) tid=1;' <("$TK" collapse "$M/sentry-cocoa_per-thread.json")
check "cpu exception (callStackPerThread false): one aggregated pseudo-thread" \
	grep -q '^cpu-exception 3 all threads tid=3;' <("$TK" collapse "$M/meter_xcode_simulated.json")
# iOS 14 payloads carry the load address in offsetIntoBinaryTextSegment: the frame shows address − it
check "iOS 14 form: MetricKitTest + (address − offsetIntoBinaryTextSegment)" \
	grep -q 'MetricKitTest + 0x51bc' <("$TK" collapse "$M/meter_ios_uncaugh_exception_payload.json")

# a 2,000-frame-deep stack survives whole (jansson would stop at 1,020: two levels a frame)
python3 "$O" deep 2000 >"$TMP/deep.json"
"$TK" collapse "$TMP/deep.json" >"$TMP/deep.folded" 2>"$TMP/deep.err"
check_eq "2,000-frame stack: one line of 2,000 frames" "1 2000" \
	"$(wc -l <"$TMP/deep.folded") $(awk '{sub(/ [0-9]+$/, ""); n = split($0, a, ";"); print n - 1}' "$TMP/deep.folded")"
check_eq "2,000-frame stack: the leaf's self is its own sampleCount" "7" "$(awk '{print $NF}' "$TMP/deep.folded")"

# one payload, an array of them, JSON Lines, gzip: the same stacks
a="$M/meter_xcode_simulated.json" b="$M/sentry-cocoa_tree-real.json"
{ "$TK" collapse "$a"; "$TK" collapse "$b"; } | sed 's/ tid=[0-9]*;/;/' | sed -E 's/^[a-z-]+ [0-9]+ //' | sort >"$TMP/sep"
{ printf '['; cat "$a"; printf ','; cat "$b"; printf ']\n'; } >"$TMP/arr.json"
{ python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$a"
  python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$b"; } >"$TMP/lines.jsonl"
gzip -c "$TMP/lines.jsonl" >"$TMP/lines.jsonl.gz"
for v in arr.json lines.jsonl lines.jsonl.gz; do
	"$TK" collapse "$TMP/$v" | sed 's/ tid=[0-9]*;/;/' | sed -E 's/^[a-z-]+ [0-9]+ //' | sort >"$TMP/$v.f"
	check_same_file "$v: the same stacks as the payloads read one by one" "$TMP/sep" "$TMP/$v.f"
done

# bad input: one line naming the field, non-zero exit, no crash
one_line() { # NAME EXPECTED-PATTERN FILE
	"$TK" tree "$3" >/dev/null 2>"$TMP/err"; local rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q -- "$2" "$TMP/err" &&
		! grep -q Sanitizer "$TMP/err"; then ok "$1"; else notok "$1" "rc=$rc $(head -c 400 "$TMP/err")"; fi
}
one_line "garbage tree (cut short): one line" "cut short" "$M/sentry-cocoa_tree-garbage.json"
check "unknown fields are skipped" "$TK" tree "$M/sentry-cocoa_tree-unknown-fields.json"
check "a frame without binaryName (nil package) is read" "$TK" tree "$M/sentry-cocoa_per-thread-nil-package.json"
sed 's/"binaryUUID" : "7C9A24C6-CB84-3053-8481-DA167DA8FB9C",//' "$M/meter_ios_uncaugh_exception_payload.json" >"$TMP/nouuid.json"
check "frames without binaryUUID are read (labelled by binaryName)" grep -q 'MetricKitTest + 0x51bc' <("$TK" collapse "$TMP/nouuid.json")
sed 's/"hangDuration" : "20 sec"/"hangDuration" : "twenty sec"/' "$M/meter_xcode_simulated_macOS_13.json" >"$TMP/dur.json"
one_line "unparseable hangDuration: names the field" 'hangDiagnostics\[0\].diagnosticMetaData.hangDuration: cannot read "twenty sec"' "$TMP/dur.json"
sed 's/"writesCaused" : "2000 byte"/"writesCaused" : "2000 parsecs"/' "$M/meter_xcode_simulated_macOS_13.json" >"$TMP/w.json"
one_line "unparseable writesCaused: names the field" 'diskWriteExceptionDiagnostics\[0\].diagnosticMetaData.writesCaused' "$TMP/w.json"
sed '0,/"sampleCount": 7/s//"sampleCount": 2/' "$M/sentry-cocoa_not-per-thread.json" >"$TMP/less.json"
one_line "sampleCount below its subFrames' total: names the frame" 'callStacks\[0\].callStackRootFrames\[0\].sampleCount: 2 is less than' "$TMP/less.json"
sed '0,/"sampleCount": 7/s//"sampleCount": "seven"/' "$M/sentry-cocoa_not-per-thread.json" >"$TMP/str.json"
one_line "a string sampleCount: names the field" 'callStackRootFrames\[0\].sampleCount: expected a whole number' "$TMP/str.json"
sed '0,/"binaryUUID": "9E8D8DE6-EEC1-3199-8720-9ED68EE3F967"/s//"binaryUUID": "not-a-uuid"/' "$M/sentry-cocoa_not-per-thread.json" >"$TMP/uuid.json"
one_line "a malformed binaryUUID: names the field" 'binaryUUID: "not-a-uuid" is not a UUID' "$TMP/uuid.json"
printf '{"callStacks":[{"callStackRootFrames":[{"sampleCount":1,"subFrames":[{"address":1}]}]}]}' >"$TMP/nocount.json"
one_line "a frame without sampleCount: names it" 'subFrames\[0\].sampleCount: missing' "$TMP/nocount.json"
# 100 MB in one payload: refused at the bound, in bounded memory
python3 -c '
import sys
sys.stdout.write("{\"hangDiagnostics\":[{\"diagnosticMetaData\":{\"appVersion\":\"" + "x" * (100 << 20) + "\"}}]}")' >"$TMP/big.json"
/usr/bin/time -f '%M' -o "$TMP/rss" "${TK_FORK_REAL:-$TK}" tree "$TMP/big.json" >/dev/null 2>"$TMP/err"
check "a 100 MB payload: one line saying so" grep -q 'payload 1 is larger than 64 MB' "$TMP/err"
lim=204800; case "$BUILD" in *san*) lim=409600 ;; esac # ASan's shadow and quarantine
check "a 100 MB payload: refused in bounded memory (< $((lim / 1024)) MB RSS)" test "$(tail -1 "$TMP/rss")" -lt $lim

# --event and --kind (shared analysis options) select diagnostics; events survive --symbols
S13="$M/meter_xcode_simulated_macOS_13.json"
check_eq "--kind hang: the hang diagnostic's stacks only" "hang 2 thread 0 (attributed) tid=2;testBinaryName + 0x7b 20" \
	"$("$TK" collapse --kind hang "$S13")"
check_eq "--kind disk after --symbols: events are carried through symbolication" \
	"disk-write 1 all threads tid=1;testBinaryName + 0x7b 20" "$("$TK" collapse --kind disk --symbols "$TMP" "$S13" 2>/dev/null)"
check_eq "--event 5: the fifth diagnostic (the launch)" "launch 5 thread 0 (attributed) tid=5;testBinaryName + 0x7b 20" \
	"$("$TK" collapse --event 5 "$S13")"
check_eq "--kind crash --kind hang: either kind" "2" "$("$TK" collapse --kind crash --kind hang "$S13" | wc -l)"
"$TK" collapse --event 9 "$S13" >/dev/null 2>"$TMP/err"
check "--event past the last: one line saying how many there are" grep -q -- "--event 9: the input has 5 events" "$TMP/err"
"$TK" collapse --kind bogus "$S13" >/dev/null 2>"$TMP/err"
check "--kind with an unknown kind: one line listing the kinds" grep -q -- "--kind bogus: not an event kind" "$TMP/err"
# every viewer reads payloads
R="$M/sentry-cocoa_tree-real.json"
check "flame: an SVG from a payload" "$TK" flame --kind marker "$R" -o "$TMP/r.svg"
check "the SVG is well-formed XML" xmllint --noout "$TMP/r.svg"
check "convert: speedscope, pprof and gecko from a payload" \
	sh -c "'$TK' convert '$R' -o '$TMP/r.speedscope.json' && '$TK' convert '$R' -o '$TMP/r.pb.gz' && '$TK' convert --to gecko '$R' -o '$TMP/r.gecko.json'"
check_eq "top: a real crash's hottest frame" "15" \
	"$("$TK" top --limit 1 "$M/meter_real_report.json" | awk '/libsystem_pthread.dylib \+ 0xe86c/ {print $1}')"

# a file of 8 MB or more (up to the 64 MB payload bound) is read through one populated mapping instead
# of a growing heap buffer: the same answers as the small file, for one payload and for JSON Lines
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = json.dumps(d)
p = c[:-1] + " " * (9 << 20) + "}"
open(sys.argv[2], "w").write(p)
open(sys.argv[3], "w").write(c + "\n" + p + "\n")
open(sys.argv[4], "w").write(c + "\n" + c + "\n")' "$M/meter_real_report.json" "$TMP/pad.json" "$TMP/pad.jsonl" "$TMP/two.jsonl"
check_eq "a 9 MB payload (padded) reads as the small one" "$("$TK" collapse "$M/meter_real_report.json")" \
	"$("$TK" collapse "$TMP/pad.json")"
check_eq "9 MB of JSON Lines (one padded payload) reads as the small ones" "$("$TK" collapse "$TMP/two.jsonl")" \
	"$("$TK" collapse "$TMP/pad.jsonl")"
# a mapped file is parsed without a scan for the payload's end first: bad input padded past 8 MB
# (spaces after it, so lines stay) gets the small file's error, cut short and misread fields alike
for bad in "$M/sentry-cocoa_tree-garbage.json" "$TMP/dur.json" "$TMP/w.json"; do
	python3 -c 'import sys; open(sys.argv[2], "w").write(open(sys.argv[1]).read().rstrip() + " " * (9 << 20) + "\n")' "$bad" "$TMP/padbad.json"
	"$TK" tree "$bad" 2>&1 >/dev/null | sed "s|^.*$(basename "$bad"):|F:|" >"$TMP/e1"
	"$TK" tree "$TMP/padbad.json" 2>&1 >/dev/null | sed "s|^.*padbad.json:|F:|" >"$TMP/e2"
	[ -s "$TMP/e1" ] && grep -q "^F:[0-9:]*: payload 1" "$TMP/e1" || notok "$(basename "$bad"): one error line" "$(cat "$TMP/e1")"
	check_same_file "$(basename "$bad") padded to 9 MB: the same error (line, field, problem)" "$TMP/e1" "$TMP/e2"
done
