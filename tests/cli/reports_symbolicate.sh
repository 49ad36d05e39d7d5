#!/bin/bash
# Apple's reports (.ips, .crash, spindump): read into profiles, symbolicated from dSYMs and written
# back the way Apple's tools write them.
#   - a real pair from one Mac (lldb's test inputs): the .ips laid out as text equals the text macOS
#     wrote for the same crash, line by line (except the lines lldb's authors added);
#   - reports generated with frames pointing into tksymgen images (arm64 with Swift and C++ names,
#     x86_64 executable, inlining): every frame named exactly as llvm-symbolizer and `tracekit atos`
#     name its address (tests/cli/reports_oracle.py), images without dSYMs left as they were;
#   - --json, batches over directories, gzip, and bad input (one line, non-zero, no crash).
. "$(dirname "$0")/../lib.sh"
tk_fork_start
R="$FIX/reports"
GEN="$TK_ROOT/tests/symgen/tksymgen.py"
MK="$TK_ROOT/tests/symgen/mkreports.py"
ORACLE="$TK_ROOT/tests/cli/reports_oracle.py"
export TRACEKIT_CACHE_DIR="$TMP/cache"
PAIR="$R/multithread-test_macos13_lldb"
mkdir -p "$TMP/none"

# ---- the real pair: .ips → text as macOS wrote it
"$TK" symbolicate "$PAIR.ips" --symbols "$TMP/none" -o "$TMP/pair.txt" 2>"$TMP/pair.err"
# lldb's authors added a blank line and a bogus.dylib image to Binary Images; trailing blank lines vary
grep -v -e '^            0x3039 - ' "$PAIR.crash" | awk 'NR==1 || !(prev ~ /^Binary Images:|libc\+\+\.1\.dylib/ && $0 == "") {print} {prev=$0}' |
	sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$TMP/pair.want"
sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$TMP/pair.txt" >"$TMP/pair.got"
check_same_file "real .ips laid out as text = the text macOS wrote for the same crash, line by line" \
	"$TMP/pair.want" "$TMP/pair.got"
check_eq "real pair: the report names every image it could not symbolicate and why" 6 \
	"$(grep -c 'unsymbolicated: .*no dSYM or binary with UUID' "$TMP/pair.err")"
"$TK" symbolicate "$PAIR.crash" --symbols "$TMP/none" >"$TMP/crash.txt" 2>/dev/null
check_same_file "a .crash with no symbols found comes back byte for byte" "$PAIR.crash" "$TMP/crash.txt"

# ---- readers: the reports as profiles
check_eq "ips: 3 threads, one sample each" "3" "$("$TK" collapse "$PAIR.ips" | wc -l)"
check_eq "ips and its .crash give the same stacks" "$("$TK" collapse "$PAIR.ips" | sed 's/tid=[0-9]*//' | sort)" \
	"$("$TK" collapse "$PAIR.crash" | sed 's/tid=[0-9]*//' | sort)"
check "ips: the crashed thread's stack, frames named by the report" bash -c \
	"'$TK' collapse '$PAIR.ips' | grep -q '^(unnamed) tid=2344961;thread_start;_pthread_start;void\\* std::__1::__thread_proxy<.*;compute_pow(int&);foo(int);bar(int) 1\$'"
check_eq "spindump: the sampled stack with its count (8 samples, 9 frames)" "8 9" \
	"$("$TK" collapse "$R/spindump_ios15.7_accessoryd_sysdiagnose-excerpt.txt" | awk '{print $NF, split($0, a, ";") - 1}')"
gzip -c "$PAIR.ips" >"$TMP/p.ips.gz"
check_eq "gzip'd .ips reads the same" "$("$TK" collapse "$PAIR.ips")" "$("$TK" collapse "$TMP/p.ips.gz")"
check "tree, flame and convert take a report" bash -c "'$TK' tree '$PAIR.ips' >/dev/null && '$TK' flame '$PAIR.ips' -o '$TMP/f.svg' && '$TK' convert '$PAIR.ips' -o '$TMP/p.speedscope.json'"

# ---- --json: the big register values survive, names filled where resolved
"$TK" symbolicate "$PAIR.ips" --symbols "$TMP/none" --json -o "$TMP/pair.json" 2>/dev/null
check "--json keeps 64-bit register values exactly (18446744066784917455)" grep -q '"value": 18446744066784917455' "$TMP/pair.json"
check_eq "--json output is the same report (reads back to the same stacks)" "$("$TK" collapse "$PAIR.ips")" \
	"$("$TK" collapse "$TMP/pair.json")"

# ---- generated reports into tksymgen dSYMs
python3 "$GEN" build --out "$TMP/a64" --n 200 --files 2 --seed 21 --arch arm64 --swift-names >"$TMP/g1.log" 2>&1 &&
	python3 "$GEN" build --out "$TMP/x86" --n 150 --files 2 --seed 22 --arch x86_64 --exe --name tkapp \
		>"$TMP/g2.log" 2>&1 || { notok "generate dSYMs" "$(tail -5 "$TMP/g1.log" "$TMP/g2.log")"; exit 0; }
python3 "$MK" --image "$TMP/a64/layout.tsv:libtks-arm64.dylib:0x104a8c000" --out "$TMP/ra" --count 4 --seed 1
python3 "$MK" --image "$TMP/x86/layout.tsv:tkapp-x86_64:0x10a3c0000" --out "$TMP/rx" --count 4 --seed 2 \
	--formats ips,crash,spin
for set in ra rx; do
	for ext in ips crash spin; do
		"$TK" symbolicate "$TMP/$set"/*.$ext --symbols "$TMP/a64" --symbols "$TMP/x86" -o "$TMP/o-$set-$ext" \
			2>"$TMP/o-$set-$ext.err"
		want=crash
		[ $ext = spin ] && want=spin
		check "$set .$ext: every frame as llvm-symbolizer and tracekit atos name it" \
			python3 "$ORACLE" --tk "$TK" --truth "$TMP/$set/truth.tsv" --out "$TMP/o-$set-$ext" --ext $want
	done
done
check_eq "batch: one line per report with what stayed unsymbolicated and why" 4 \
	"$(grep -c 'r00[0-3].ips:   unsymbolicated: libsystem_0.dylib (no dSYM or binary with UUID' "$TMP/o-ra-ips.err")"
# 12 reports, 12 outputs: NAME.ips's text goes to NAME.ips.crash beside NAME.crash's (tests/cli/reports_ingest.sh)
check "batch: a directory of reports, searched recursively, outputs in -o DIR" \
	bash -c "'$TK' symbolicate '$TMP/ra' --symbols '$TMP/a64' -o '$TMP/o-dir' 2>'$TMP/dir.err' && ls '$TMP/o-dir' | grep -c . | grep -qx 12 && grep -q '12 reports, 0 failed' '$TMP/dir.err'"
# -o - with several reports: one stream, each report exactly as its file in -o DIR, in input (name) order,
# and the same per-report lines on stderr (a bad report among them keeps its place)
cp -r "$TMP/ra" "$TMP/ra-bad" && head -c 1500 "$PAIR.ips" >"$TMP/ra-bad/r001.b.ips"
"$TK" symbolicate "$TMP/ra-bad" --symbols "$TMP/a64" -o "$TMP/o-dir2" 2>"$TMP/dir2.err"
"$TK" symbolicate "$TMP/ra-bad" --symbols "$TMP/a64" -o - >"$TMP/stream.txt" 2>"$TMP/stream.err"
check "batch -o -: all reports on standard output, each as its own file, in input order" \
	bash -c "ls '$TMP/o-dir2' | grep -c . | grep -qx 12 && (cd '$TMP/o-dir2' && cat \$(ls)) | cmp -s - '$TMP/stream.txt'"
check_eq "batch -o -: the same stderr lines as -o DIR (a bad report in its place)" \
	"$(grep -v 'written to' "$TMP/dir2.err")" "$(cat "$TMP/stream.err")"
check_eq "batch -o -: stderr in input order, the bad report in its place" \
	"r000.crash r000.ips r000.spin r001.b.ips r001.crash r001.ips" \
	"$(grep -o 'r00[0-9][.a-z]*' "$TMP/stream.err" | uniq | head -6 | tr '\n' ' ' | sed 's/ $//')"
# a batch keeps each address's answer for the reports after it (lib/symbol/report_sym.c): the same
# frames in other reports, loaded at other addresses and in other orders, must come out exactly as each
# report symbolicated alone (first frames stay PCs, the others return addresses; "+ offset" per slide)
python3 - "$TMP/ra" "$TMP/memo" <<'PY'
import json, os, sys
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst)
names = sorted(n for n in os.listdir(src) if n.endswith(".ips"))
for k in range(6):
    h, b = open(os.path.join(src, names[k % len(names)])).read().split("\n", 1)
    body = json.loads(b)
    for im in body["usedImages"]:
        im["base"] += 0x4000 * k
    if k % 2:
        body["threads"].reverse()
        for i, t in enumerate(body["threads"]):  # a return address becomes a PC and back
            t["frames"] = t["frames"][1:] + t["frames"][:1]
    open(os.path.join(dst, "m%d.ips" % k), "w").write(h + "\n" + json.dumps(body, indent=2) + "\n")
open(os.path.join(dst, "README.txt"), "w").write("not a report\n")
PY
"$TK" symbolicate "$TMP/memo" --symbols "$TMP/a64" -o "$TMP/o-memo" 2>"$TMP/memo.err"
for k in 0 1 2 3 4 5; do
	"$TK" symbolicate "$TMP/memo/m$k.ips" --symbols "$TMP/a64" -o "$TMP/o-memo/m$k.alone" 2>/dev/null
done
check "batch: repeated frames at other load addresses answered as each report alone" bash -c \
	"for k in 0 1 2 3 4 5; do cmp -s \"$TMP/o-memo/m\$k.crash\" \"$TMP/o-memo/m\$k.alone\" || exit 1; done"
check "batch: a file of a directory that is not a report is skipped silently" bash -c \
	"grep -q '6 reports, 0 failed' '$TMP/memo.err' && ! grep -q README '$TMP/memo.err'"
mkdir -p "$TMP/one" && cp "$TMP/memo/m0.ips" "$TMP/memo/README.txt" "$TMP/one/"
"$TK" symbolicate "$TMP/one" --symbols "$TMP/a64" >"$TMP/one.txt" 2>"$TMP/one.err"
check "a directory with one report and another file: the one report's text on standard output" \
	cmp -s "$TMP/one.txt" "$TMP/o-memo/m0.crash"
"$TK" symbolicate "$TMP/ra/r000.ips" --symbols "$TMP/a64" --json -o "$TMP/r0.json" 2>/dev/null
check "--json: resolved frames carry symbol, sourceFile and sourceLine, inlined ones \"inline\": true" \
	bash -c "grep -q '\"sourceFile\": \"unit_00' '$TMP/r0.json' && grep -q '\"inline\": true' '$TMP/r0.json'"
check_eq "--json symbolicated reads back with the names" \
	"$(python3 -c "import json,sys; l=open('$TMP/r0.json').read().split('\n',1); b=json.loads(l[1]); print(sum(1 for t in b['threads'] for f in t['frames'] if 'symbol' in f))")" \
	"$("$TK" collapse "$TMP/r0.json" | tr ';' '\n' | grep -vc -e '^0x' -e 'tid=')"

# ---- bad input: one line, non-zero, no crash
head -c 1500 "$PAIR.ips" >"$TMP/trunc.ips"
check_fails "truncated second JSON object" "$TK" symbolicate "$TMP/trunc.ips" --symbols "$TMP/none"
check_eq "truncated: one line naming the file, line and problem" 1 "$("$TK" collapse "$TMP/trunc.ips" 2>&1 | grep -c 'trunc.ips:[0-9]*:[0-9]*: the report body .* is cut short')"
sed 's/"imageIndex": 3,/"imageIndex": 30,/' "$PAIR.ips" >"$TMP/range.ips"
check_eq "image index out of range: one line" \
	"tracekit: $TMP/range.ips: threads[0].frames[3].imageIndex 30 is out of range (7 usedImages)" \
	"$("$TK" collapse "$TMP/range.ips" 2>&1)"
sed 's/"imageOffset": 6972,/"imageOffset": -6972,/' "$PAIR.ips" >"$TMP/neg.ips"
check_eq "negative offset: one line" \
	"tracekit: $TMP/neg.ips: threads[0].frames[3].imageOffset is not a non-negative integer" \
	"$("$TK" collapse "$TMP/neg.ips" 2>&1)"
python3 - "$TMP/big.ips" <<'EOF'
import json, sys
h = {"bug_type": "309", "app_name": "Big", "incident_id": "B"}
f = [{"imageIndex": 0, "imageOffset": 16 + 4 * (i % 1000)} for i in range(220000)]
b = {"threads": [{"id": 1, "triggered": True, "frames": f}],
     "usedImages": [{"uuid": "11111111-2222-3333-4444-555555555555", "base": 4294967296, "size": 65536, "arch": "arm64", "name": "Big"}]}
open(sys.argv[1], "w").write(json.dumps(h) + "\n" + json.dumps(b, indent=1))
EOF
check "10 MB frames array: read (one stack of 220,000 frames) without a crash" \
	bash -c "[ \$(stat -c %s '$TMP/big.ips') -gt 10000000 ] && '$TK' info '$TMP/big.ips' | grep -q 'samples *1'"
printf '{"bug_type":"309"}\n{"threads": 5}\n' >"$TMP/shape.ips"
check_fails "threads that is not an array" "$TK" collapse "$TMP/shape.ips"
printf 'Incident Identifier: X\nException Type: EXC_CRASH\n\nBinary Images:\n' >"$TMP/nothreads.crash"
check_eq "a .crash without threads: one line" 1 "$("$TK" collapse "$TMP/nothreads.crash" 2>&1 | grep -c 'no "Thread N:" section')"
check_fails "symbolicate: several reports need -o DIR" "$TK" symbolicate "$TMP/ra/r000.ips" "$TMP/ra/r001.ips" --symbols "$TMP/none"
check_fails "--json is for .ips" "$TK" symbolicate "$PAIR.crash" --symbols "$TMP/none" --json

# ---- lastExceptionBacktrace: written as "Last Exception Backtrace:", named like a thread's frames
python3 - "$TMP/ra/r000.ips" "$TMP/leb.ips" <<'PY'
import json, sys
h, b = open(sys.argv[1]).read().split("\n", 1)
body = json.loads(b)
body["lastExceptionBacktrace"] = body["threads"][0]["frames"]
open(sys.argv[2], "w").write(h + "\n" + json.dumps(body, indent=1) + "\n")
PY
"$TK" symbolicate "$TMP/leb.ips" --symbols "$TMP/a64" -o "$TMP/leb.txt" 2>/dev/null
check_eq "Last Exception Backtrace: its frames named as the same frames of thread 0" \
	"$(sed -n '/^Thread 0:$/,/^$/p' "$TMP/leb.txt" | sed 1d)" \
	"$(sed -n '/^Last Exception Backtrace:$/,/^$/p' "$TMP/leb.txt" | sed 1d)"
check "Last Exception Backtrace: names from the dSYM" bash -c \
	"grep -A1 '^Last Exception Backtrace:\$' '$TMP/leb.txt' | tail -1 | grep -q ' (in libtks-arm64.dylib) (unit_00'"
# a batch reads plain files through its own reader (one buffer, one read per file: tk_apple_report_reader_read)
# and gzip'd ones through tk_input: the same reports must give the same outputs, and a bad file the
# error tk_input's path gives it (`collapse` reads each through the registry's readers)
mkdir -p "$TMP/rd/in" "$TMP/rd/gz"
for f in "$TMP"/ra/r000.ips "$TMP"/ra/r001.crash "$TMP"/ra/r002.spin; do
	cp "$f" "$TMP/rd/in/" && gzip -c "$f" >"$TMP/rd/gz/$(basename "$f")"
done
printf 'Incident Identifier: X\nProcess: a\nException Type: EXC_CRASH\n\0\n' >"$TMP/rd/in/nul.crash"
: >"$TMP/rd/in/empty.crash"
"$TK" symbolicate "$TMP/rd/in" --symbols "$TMP/a64" -o "$TMP/rd/o-in" 2>"$TMP/rd/in.err"
"$TK" symbolicate "$TMP/rd/gz" --symbols "$TMP/a64" -o "$TMP/rd/o-gz" 2>"$TMP/rd/gz.err"
check "reader: plain and gzip'd reports give the same outputs" \
	bash -c "ls '$TMP/rd/o-gz' | grep -c . | grep -qx 3 && for f in \$(ls '$TMP/rd/o-gz'); do cmp -s '$TMP/rd/o-in/'\$f '$TMP/rd/o-gz/'\$f || exit 1; done"
check_eq "reader: a NUL byte gives the error tk_input's path gives" \
	"$("$TK" collapse "$TMP/rd/in/nul.crash" 2>&1 | sed 's/^tracekit: //')" \
	"$(grep 'nul.crash' "$TMP/rd/in.err" | sed 's/^tracekit: warning: symbolicate: //')"
check "reader: an empty file in a directory is skipped, not an error" \
	bash -c "grep -q '4 reports, 1 failed' '$TMP/rd/in.err' && ! grep -q empty.crash '$TMP/rd/in.err'"
