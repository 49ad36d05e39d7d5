#!/bin/bash
# Text inputs as the tools in the wild write them (issue 15): folded stacks with fractional counts,
# empty frames, blanks in frames, differential `STACK BEFORE AFTER` files, Austin's `# key: value`
# lines and UTF-16 with a byte-order mark; macOS `sample` reports as printed to a terminal and by
# Activity Monitor, with guides at any depth; malformed files named by their line. Totals are
# checked against tests/cli/text_shapes_oracle.py (flamegraph.pl's line rule, exact decimals) and
# against inferno's own expected output (diff-folded), never against tracekit's own reading.
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
F="$FIX/folded"
O="$FIX/other"
ORACLE="$TK_ROOT/tests/cli/text_shapes_oracle.py"

# fails_with NAME TEXT CMD...: CMD exits non-zero (no crash) with one line on stderr that holds TEXT
fails_with() {
	local n=$1 want=$2; shift 2
	"$@" >"$TMP/.out" 2>"$TMP/.err"; local rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$(wc -l <"$TMP/.err")" -eq 1 ] && grep -qF -- "$want" "$TMP/.err"; then
		ok "$n"
	else
		notok "$n" "rc=$rc $(head -c 600 "$TMP/.err")"
	fi
}

# our collapse output as "STACK<TAB>VALUE", sorted like the oracle's
ours() { "$TK" collapse "$@" 2>"$TMP/ours.err" | python3 -c '
import sys
rows = []
for l in sys.stdin.read().split("\n"):
    if l:
        s, v = l.rsplit(" ", 1)
        rows.append((s, v))
for s, v in sorted(rows):
    print("%s\t%s" % (s, v))'; }

# ---- folded: every public fixture that reads, stack by stack, against the oracle
for f in "$F"/inferno_fractional.txt "$F"/inferno_fractional-with-space.txt "$F"/inferno_with-space.txt \
	"$F"/inferno_zero-fractionals.txt "$F"/inferno_tricky-stack.txt "$F"/inferno_austin.txt \
	"$F"/speedscope_recursion.txt "$F"/inferno_diff-folded_before.txt "$F"/inferno_diff-folded_after.txt; do
	n=$(basename "$f")
	python3 "$ORACLE" folded "$f" >"$TMP/want"
	ours "$f" >"$TMP/got"
	check_same_file "folded $n: every stack's weight = the oracle's exact sum ($(wc -l <"$TMP/want") stacks)" \
		"$TMP/want" "$TMP/got"
done
# exact decimals, shown as such: total, scale and the tree's numbers
check_eq "fractional: info's total = the oracle's exact sum" "$(python3 "$ORACLE" total "$F/inferno_fractional.txt")" \
	"$("$TK" info "$F/inferno_fractional.txt" | awk '$1 == "weight" {print $2}')"
check_eq "fractional: JSON weights are integers with weight_decimals (3)" "3 334618" \
	"$("$TK" tree --json "$F/inferno_fractional.txt" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["weight_decimals"], sum(t["total"] for t in d["threads"]))')"
check_eq "fractional: speedscope weights are the exact decimals" "$(python3 "$ORACLE" total "$F/inferno_fractional.txt")" \
	"$("$TK" convert --to speedscope "$F/inferno_fractional.txt" -o - | python3 -c '
import json, sys
from decimal import Decimal
d = json.loads(sys.stdin.read(), parse_float=Decimal)
s = sum((w for p in d["profiles"] for w in p["weights"]), Decimal(0))
print(format(s.normalize(), "f"))')"
fails_with "fractional: pprof (whole numbers only) refuses, naming the decimals" \
	"these weights have 3 decimals" "$TK" convert --to pprof "$F/inferno_fractional.txt" -o "$TMP/x.pb.gz"
"$TK" collapse "$F/inferno_fractional.txt" >"$TMP/a.folded"
"$TK" collapse "$TMP/a.folded" >"$TMP/b.folded"
if [ -s "$TMP/a.folded" ]; then
	check_same_file "fractional: folded → model → folded is the identity" "$TMP/a.folded" "$TMP/b.folded"
else
	notok "fractional: folded → model → folded is the identity" "nothing written"
fi
# a finer fraction after whole counts rescales what was read: exact, with the scale of the finest
printf 'a 19\nb 0.001\nc 18446744073.709\n' >"$TMP/scale.folded"
check_eq "decimals: the scale follows the finest fraction, every weight exact" \
	"$(printf 'a 19\nb 0.001\nc 18446744073.709')" "$("$TK" collapse "$TMP/scale.folded")"
printf 'a 18446744073709551615\nb 0.5\n' >"$TMP/big.folded"
fails_with "decimals: a scale that would pass 2^64 is an error naming the line" "big.folded:2:" \
	"$TK" collapse "$TMP/big.folded"
printf 'a 1.1234567891\n' >"$TMP/ten.folded"
fails_with "decimals: more than 9 decimals is an error naming the line" "ten.folded:1: a count with more than 9 decimals" \
	"$TK" collapse "$TMP/ten.folded"

# Austin's header and trailer: meta, shown by info
check_eq "austin: # key: value lines in info" "austin 3.3.0|interval 100|mode wall|duration 23873" \
	"$("$TK" info "$F/inferno_austin.txt" | awk '$1 ~ /^(austin|interval|mode|duration)$/ {printf "%s%s %s", s, $1, $2; s = "|"}')"

# empty frames and frames with blanks survive: tree levels and the folded text
printf 'a;;b 2\na; 1\n;b 3\nmain; cksum 4\n' >"$TMP/empty.folded"
python3 "$ORACLE" folded "$TMP/empty.folded" >"$TMP/want"
ours "$TMP/empty.folded" >"$TMP/got"
check_same_file "empty frames: a;;b, a; and ;b keep their empty frame, ' cksum' its blank" "$TMP/want" "$TMP/got"
check_eq "empty frames: a;;b is three levels deep in the tree" "3" \
	"$("$TK" tree --json "$TMP/empty.folded" | python3 -c '
import json, sys
def depth(n):
    return 1 + max([depth(c) for c in n.get("children", [])] or [0])
d = json.load(sys.stdin)
print(max(depth(n) for t in d["threads"] for n in t["root"] if n["name"] == "a"))')"

# UTF-16 with a byte-order mark (PowerShell's `>`: UTF-16 LE, CRLF), big-endian too, and UTF-8's mark
python3 - "$F/speedscope_recursion.txt" "$TMP" <<'EOF'
import sys
t = open(sys.argv[1]).read() + "na\u00efve;\u65e5\u672c 2.5\n\U0001F600;x 3\n"
d = sys.argv[2]
open(d + "/u8.folded", "w").write(t)
open(d + "/le.folded", "wb").write(b"\xff\xfe" + t.replace("\n", "\r\n").encode("utf-16-le"))
open(d + "/be.folded", "wb").write(b"\xfe\xff" + t.encode("utf-16-be"))
open(d + "/bom8.folded", "wb").write(b"\xef\xbb\xbf" + t.encode("utf-8"))
EOF
python3 "$ORACLE" folded "$TMP/le.folded" >"$TMP/want"
for k in le be bom8; do
	ours "$TMP/$k.folded" >"$TMP/got"
	check_same_file "encoding $k: read as the oracle decodes it (non-ASCII and astral frames kept)" "$TMP/want" "$TMP/got"
done
printf '\xff\xfea\x00;\x00b\x00 \x00' >"$TMP/odd.folded"
printf '\x01' >>"$TMP/odd.folded"
fails_with "encoding: UTF-16 cut in the middle of a character is an error" "odd.folded" "$TK" collapse "$TMP/odd.folded"

# ---- differential files: two runs; inferno-diff-folded's own output against its own inputs
D="$F/inferno_diff-folded_results_default.txt"
python3 "$ORACLE" folded "$F/inferno_diff-folded_before.txt" >"$TMP/want"
ours --run 1 "$D" >"$TMP/got"
check_same_file "differential: --run 1 = inferno's before.txt (its diff-folded output read back)" "$TMP/want" "$TMP/got"
python3 "$ORACLE" folded "$F/inferno_diff-folded_after.txt" >"$TMP/want"
ours "$D" >"$TMP/got"
check_same_file "differential: the default (run 2) = inferno's after.txt" "$TMP/want" "$TMP/got"
"$TK" diff --json "$F/inferno_diff-folded_before.txt" "$F/inferno_diff-folded_after.txt" >"$TMP/two.json"
"$TK" diff --json "$D" >"$TMP/one.json"
check_same_file "differential: tracekit diff DIFF = tracekit diff before after" "$TMP/two.json" "$TMP/one.json"
if "$TK" diff "$D" --svg "$TMP/d.svg" >/dev/null 2>&1 && python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$TMP/d.svg"; then
	ok "differential: tracekit diff DIFF --svg draws the differential flame graph (valid SVG)"
else
	notok "differential: --svg" "$(cat "$TMP/d.svg" 2>/dev/null | head -c 200)"
fi
for f in "$F"/inferno_diff_*.txt; do
	for run in 1 2; do
		python3 "$ORACLE" folded "$f" $run >"$TMP/want"
		ours --run $run "$f" >"$TMP/got"
		check_same_file "differential $(basename "$f") run $run = the oracle (zero counts dropped)" "$TMP/want" "$TMP/got"
	done
done
check_eq "differential: info says which run" "run 1 of 2 (the first count, before; --run 2 for the other)" \
	"$("$TK" info --run 1 "$D" | sed -n 's/^differential *//p')"
fails_with "--run on a file with one count is an error" "not a differential file" \
	"$TK" collapse --run 1 "$F/inferno_fractional.txt"
fails_with "--run on another format is an error" "only differential folded stacks" \
	"$TK" collapse --run 2 "$O/sample_macos10.14_rg_call-graph-only_trimmed.txt"

# ---- lines that fit no rule: named, or skipped and counted with --keep-going; never glued
fails_with "bad line: FlameGraph's bad-lines.txt names line 3" "inferno_bad-lines.txt:3: expected" \
	"$TK" collapse "$F/inferno_bad-lines.txt"
for f in "$F/inferno_bad-lines.txt" "$F/speedscope_simple-with-invalids.txt"; do
	n=$(basename "$f")
	python3 "$ORACLE" folded "$f" --keep-going >"$TMP/want" 2>"$TMP/skipped"
	ours --keep-going "$f" >"$TMP/got"
	check_same_file "--keep-going $n: the good lines = the oracle's" "$TMP/want" "$TMP/got"
	check_eq "--keep-going $n: one warning with the count the oracle skipped" \
		"1 $(sed 's/skipped //' "$TMP/skipped")" \
		"$(wc -l <"$TMP/ours.err") $(sed -n 's/.*skipped \([0-9]*\) line.*/\1/p' "$TMP/ours.err")"
done
printf 'a;b 1\na;b5\n' >"$TMP/glued.folded"
fails_with "a number glued to a name is an error, not a frame 'b5'" "glued.folded:2:" "$TK" collapse "$TMP/glued.folded"
printf 'a;b 1\na;b 12V.43\n' >"$TMP/glued2.folded"
fails_with "a broken count is an error naming the line" "glued2.folded:2:" "$TK" collapse "$TMP/glued2.folded"
printf 'a;b 1\nc;d 1 2\n' >"$TMP/mixed.folded"
fails_with "two counts after a file of one is an error, not a frame 'd 1'" "mixed.folded:2: two counts" \
	"$TK" collapse "$TMP/mixed.folded"
printf 'a;b 1 2\nc;d 3\n' >"$TMP/mixed2.folded"
fails_with "one count in a differential file is an error naming the line" "mixed2.folded:2: one count" \
	"$TK" collapse "$TMP/mixed2.folded"

# ---- macOS `sample`: the report as the command prints it to a terminal, and Activity Monitor's
R="$O/sample_macos10.14_rg_call-graph-only_trimmed.txt"
"$TK" collapse "$R" >"$TMP/file.folded"
{ printf 'Sampling process 64751 for 10 seconds with 1 millisecond of run time between samples\n'
  printf 'Sampling completed, processing symbols...\n'
  printf 'Sample analysis of process 64751 written to file /tmp/rg_2019-07-04_102128_KMrX.sample.txt\n\n'
  cat "$R"; } >"$TMP/terminal.txt"
"$TK" collapse "$TMP/terminal.txt" >"$TMP/term.folded" 2>"$TMP/err"
check_same_file "sample as printed to a terminal (Sampling process … lines first) reads as the file" \
	"$TMP/file.folded" "$TMP/term.folded"
{ printf 'Sampling process 64751 for 3 seconds with 1 millisecond of run time between samples\n'
  printf 'Sampling completed, processing symbols...\n'
  cat "$R"; } >"$TMP/am.txt"
"$TK" collapse "$TMP/am.txt" >"$TMP/am.folded" 2>"$TMP/err"
check_same_file "sample: Activity Monitor's Sample Process text reads as the file" "$TMP/file.folded" "$TMP/am.folded"
# guides at any depth: a generated report 70 levels deep, its self counts known from the generator
python3 "$ORACLE" sample-gen 15 70 "$TMP/deep.txt" "$TMP/truth"
"$TK" top --json --limit 0 "$TMP/deep.txt" | python3 -c '
import json, sys
for f in json.load(sys.stdin)["functions"]:
    if f["self"]:
        print("%s\t%d" % (f["name"], f["self"]))' >"$TMP/got"
"$TK" info --json "$TMP/deep.txt" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["processes"]:
    for t in p["threads"]:
        print("(thread %d)\t%d" % (t["tid"], t["weight"]))' >>"$TMP/got"
sort "$TMP/got" >"$TMP/got.s"
sort "$TMP/truth" >"$TMP/truth.s"
check_same_file "sample: guides + ! : | at 70 levels; self and thread totals = the generator's ($(grep -c '[:|]' "$TMP/deep.txt") lines with : or |)" \
	"$TMP/truth.s" "$TMP/got.s"
# inferno's malformed reports: an error naming the line, never a silent "(no stack)"
bad_sample() { # FILE LINE WHY
	"$TK" collapse "$O/sample-bad_inferno_$1" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -qF "$1:$2: $3" "$TMP/err" && [ ! -s "$TMP/out" ]; then
		ok "sample $1: error at line $2 ($3…)"
	else
		notok "sample $1" "rc=$rc $(cat "$TMP/err") $(head -c 200 "$TMP/out")"
	fi
}
bad_sample bad-stack-line.txt 22 "expected \`COUNT FRAME\`"
bad_sample invalid-samples-field.txt 22 "expected \`COUNT FRAME\`"
bad_sample stack-line-only-indent-chars.txt 22 "expected \`COUNT FRAME\`"
bad_sample no-four-spaces.txt 22 "a call-graph line that does not start with blanks"
bad_sample odd-indentation.txt 22 "the count is at column 8"
bad_sample skipped-indentation.txt 23 "the count is at column 11"
fails_with "sample without a call graph" "no \`Call graph:\` section" "$TK" collapse "$O/sample-bad_inferno_end-before-call-graph-start.txt"
# a report that ends before its call graph ends: read, with one warning and info's "truncated"
E="$O/sample_macos10.14_rg_inferno_end-before-call-graph-end.txt"
"$TK" collapse "$E" >"$TMP/out" 2>"$TMP/err"
check_eq "sample ending inside its call graph: one warning naming the last line" \
	"1 the report ends before its call graph ends (line 34)" \
	"$(wc -l <"$TMP/err") $(grep -o 'the report ends before its call graph ends (line [0-9]*)' "$TMP/err")"
check_eq "sample ending inside its call graph: info says truncated" "ends inside the call graph at line 34: truncated?" \
	"$("$TK" info "$E" 2>/dev/null | sed -n 's/^truncated *//p')"

# ---- one tid base and one name for an unnamed thread in info, tree, collapse and the viewers
printf '%s\n' 'Analysis of sampling x (pid 7) every 1 millisecond' 'Call graph:' '    3 Thread_4660' \
	'    + 3 main  (in x) + 1  [0x1000]' '' >"$TMP/unnamed.txt"
check_eq "unnamed thread, tid 4660: info" "(unnamed) (tid 4660)" \
	"$("$TK" info "$TMP/unnamed.txt" | sed -n 's/^ *3 *100.0% *3 *//p' | tail -1)"
check_eq "unnamed thread, tid 4660: tree" "Thread (unnamed) (tid 4660)" \
	"$("$TK" tree "$TMP/unnamed.txt" | head -1 | sed 's/, process.*//')"
check_eq "unnamed thread, tid 4660: collapse" "(unnamed) tid=4660;main 3" "$("$TK" collapse "$TMP/unnamed.txt")"
check_eq "unnamed thread: speedscope's profile name" "(unnamed) (tid 4660)" \
	"$("$TK" convert --to speedscope "$TMP/unnamed.txt" -o - | python3 -c '
import json, sys; print(json.load(sys.stdin)["profiles"][0]["name"].split(",")[0])')"
"$TK" collapse "$TMP/unnamed.txt" >"$TMP/u.folded"
check_eq "unnamed thread: read back from collapse it is unnamed again" "null" \
	"$("$TK" tree --json "$TMP/u.folded" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["threads"][0]["name"]))')"
X="$FIX/xctrace/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml"
check_eq "tid base: info, tree and collapse print ThreadJavaMain's tid alike" "948350 948350 948350" \
	"$("$TK" info "$X" | sed -n 's/.*ThreadJavaMain (tid \([0-9]*\)).*/\1/p') $("$TK" tree --thread ThreadJavaMain "$X" | sed -n '1s/.*(tid \([0-9]*\)).*/\1/p') $("$TK" collapse "$X" | sed -n 's/^ThreadJavaMain tid=\([0-9]*\);.*/\1/p' | head -1)"

# ---- errors that say why
printf 'hello\nworld\n' >"$TMP/plain.txt"
fails_with "nothing known: unrecognised, showing the first line" 'unrecognised input format (expected' "$TK" info "$TMP/plain.txt"
printf 'PERFILE2\001\002\003' >"$TMP/perf.data"
fails_with "perf.data: says what it is and what to run" "a \`perf record\` data file (perf.data)" "$TK" info "$TMP/perf.data"
printf '# To display the perf.data header info, please use --header/--header-only options.\n#\n# Samples: 1K of event cycles\n# Overhead  Command\n' >"$TMP/report.txt"
fails_with "perf report output: says use perf script" "\`perf report\` output" "$TK" info "$TMP/report.txt"
"$TK" convert --to speedscope "$F/speedscope_recursion.txt" -o "$TMP/s.speedscope.json"
fails_with "speedscope JSON: says what it is" "speedscope JSON, which tracekit writes but does not read" \
	"$TK" info "$TMP/s.speedscope.json"
"$TK" flame "$F/speedscope_recursion.txt" -o "$TMP/f.svg"
fails_with "an SVG flame graph: says what it is" "an SVG image" "$TK" info "$TMP/f.svg"
printf '%s\n' '<?xml version="1.0"?>' '<trace-query-result>' \
	"<node xpath='//trace-toc[1]/run[1]/tracks[1]/track[1]/details[1]/detail[2]'><row address=\"0x600002b00ff0\" category=\"Malloc 80 Bytes\" live=\"true\" size=\"80\" identifier=\"2164\" timestamp=\"00:00.000.000\" index=\"0\"/></node>" \
	'</trace-query-result>' >"$TMP/alloc.xml"
fails_with "an Allocations List (track detail) export: unsupported table schema, with the supported ones" \
	"unsupported table schema 'track detail'" "$TK" info "$TMP/alloc.xml"
fails_with "… and names what is supported" "supported: time-profile, cpu-profile, counters-profile, time-sample" \
	"$TK" info "$TMP/alloc.xml"
