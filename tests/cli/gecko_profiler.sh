#!/bin/bash
# Firefox Profiler output checked by the profiler's own code (profiler-cli, pinned in tests/js):
# every real table export loads; thread names and counts and every function's self weight equal
# tracekit's; samples are one per row in time order. profiler-cli keeps a daemon per session: it
# runs with a private HOME and is stopped on exit.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../profiler_cli.sh"
JSBIN="$TK_ROOT/tests/js/node_modules/.bin"
if [ ! -x "$JSBIN/profiler-cli" ]; then notok "profiler-cli is installed (make test runs npm ci in tests/js)"; exit 0; fi
export PATH="$JSBIN:$PATH" HOME="$TMP/home" TK_BATCH # gecko_compare.py runs its tracekit top per thread through tk_batch
mkdir -p "$HOME"
trap 'pc_stop_all; rm -rf "$TMP"' EXIT
tk_fork_start

# A loaded machine, made certain: every daemon spends 1.5 s before it starts (profiler-cli's own
# `load` gives up after 500 ms). pc_load waits for the daemon, not for a fixed time.
echo 'if (process.argv.includes("--daemon")) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);' >"$TMP/slow.cjs"
"$TK" open --save "$TMP/slow.json" "$FIX/xctrace/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml"
if NODE_OPTIONS="--require $TMP/slow.cjs" pc_load "$TMP/slow.json"; then
	check_eq "pc_load waits for a daemon that is slow to start (1.5 s)" 10 \
		"$(profiler-cli thread list --limit 0 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["threads"]))')"
	pc_stop
else
	notok "pc_load waits for a daemon that is slow to start (1.5 s)" "$(tail -5 "$PC_OUT")"
fi

MT="$FIX/xctrace/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml"
# A sparse thread: _pthread_start ran 19 ms in a 10.4 s recording. With samples.threadCPUDelta (the
# CPU each sample stands for) the profiler's CPU activity covers only the stretches where it ran, not
# the whole span; its CPU column per thread is our total less the first sample (the profiler measures
# CPU between consecutive samples, so a thread's first has nothing to measure from).
# Run while MT's own export (open --save) is the current session, from the loop below.
sparse_checks() { # GECKO_FILE of MT
	profiler-cli thread list --limit 0 --json >"$TMP/tl.json"
	h=$(python3 -c 'import json,sys; print([t["threadHandle"] for t in json.load(open(sys.argv[1]))["threads"] if t["tid"] == 948349][0])' "$TMP/tl.json")
	profiler-cli thread info --thread "$h" --json >"$TMP/ti.json"
	# gecko_compare.py asks the daemon directly (no client process per question): its answers are
	# the profiler-cli client's own, for each of its three questions
	profiler-cli thread functions --thread "$h" --limit 0 --json >"$TMP/pc-f.json"
	profiler-cli thread samples-top-down --thread t-0 --include-idle --max-lines 1 --json >"$TMP/pc-td.json"
	check_eq "gecko_compare.py's questions to the daemon get profiler-cli's own answers (thread list, functions, top-down)" "same same same" \
		"$(python3 - "$TK_ROOT/tests/cli/gecko_compare.py" "$h" "$TMP/tl.json" "$TMP/pc-f.json" "$TMP/pc-td.json" <<'PY'
import json, subprocess, sys
gc, h = sys.argv[1], sys.argv[2]
def q(*a): return json.loads(subprocess.run([sys.executable, gc, '--query', *a], check=True, capture_output=True, text=True).stdout)
def same(a, b): return 'same' if a == b and a else 'differ'
print(same(q('list'), json.load(open(sys.argv[3]))), same(q('functions', h), json.load(open(sys.argv[4]))),
      same(q('top-down', 't-0'), json.load(open(sys.argv[5]))))
PY
)"
	check_eq "sparse thread: CPU activity only where it ran (under 1 % of its 10.4 s span, at least 80 % of its CPU)" ok \
		"$(python3 - "$TMP/ti.json" "$1" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))['cpuActivity'] or []
th = [t for t in json.load(open(sys.argv[2]))['threads'] if t['tid'] == 948349][0]['samples']
span = th['time'][-1] - th['time'][0]
busy = sum(p['endTime'] - p['startTime'] for p in a)
cpu = sum(p['cpuMs'] for p in a)
ran = sum(th['weight']) - th['weight'][0]
print('ok' if a and busy < 0.01 * span and cpu >= 0.8 * ran else f'periods {len(a)} busy {busy} ms of {span} ms, cpu {cpu} of {ran} ms')
PY
)"
	check_eq "CPU per thread in the profiler = tracekit's total less the first sample's weight" ok \
		"$(python3 - "$TMP/tl.json" "$1" <("$TK" tree --json --max-depth 1 "$MT") <<'PY'
import json, sys
pc = {t['tid']: t['cpuMs'] for t in json.load(open(sys.argv[1]))['threads']}
first = {t['tid']: t['samples']['weight'][0] for t in json.load(open(sys.argv[2]))['threads']}
bad = [(g['tid'], pc.get(g['tid']), g['total'] / 1e6 - first[g['tid']]) for g in json.load(open(sys.argv[3]))['threads']
       if abs(pc.get(g['tid'], -1) - (g['total'] / 1e6 - first[g['tid']])) > 1e-6]
print('ok' if not bad and len(pc) == 10 else bad)
PY
)"
}

# Cycle weights: the profiler names every count "samples", so the profile's name says they are
# cycles (checked in the loop below, while CY's export is the current session).
CY=$(ls "$FIX"/xctrace/cpu-profile_*cycle-weight*.xml | head -1)

for x in "$FIX"/xctrace/time-*.xml "$FIX"/xctrace/cpu-*.xml "$FIX"/xctrace/counters-*.xml; do
	b=$(basename "$x" .xml)
	if ! "$TK" open --save "$TMP/$b.gecko.json" "$x" 2>"$TMP/err"; then
		notok "$b: tracekit open --save" "$(cat "$TMP/err")"; continue
	fi
	if ! pc_load "$TMP/$b.gecko.json"; then
		notok "$b: profiler-cli loads it" "$(tail -5 "$PC_OUT")"; continue
	fi
	ok "$b: profiler-cli loads it"
	python3 "$TK_ROOT/tests/cli/gecko_compare.py" "$TK" "$x" "$TMP/$b.gecko.json"
	[ "$x" = "$MT" ] && sparse_checks "$TMP/$b.gecko.json"
	[ "$x" = "$CY" ] && check "cycle-weighted profile: the name the profiler shows says the weights are CPU cycles" \
		grep -q '^Name: .*weights are CPU cycles' <(profiler-cli profile info)
	pc_stop
done

# Names that need escaping in JSON (quote, backslash, newline, tab, non-ASCII) survive to the profiler.
sed 's/name="rust_test2::bar::h508fcdedd66efbaa"/name="q\&quot;b\\\\s\&#10;n\&#9;t\&lt;é"/' \
	"$FIX/xctrace/time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml" >"$TMP/odd-names.xml"
"$TK" open --save "$TMP/odd.json" "$TMP/odd-names.xml"
if pc_load "$TMP/odd.json"; then
	python3 "$TK_ROOT/tests/cli/gecko_compare.py" "$TK" "$TMP/odd-names.xml" "$TMP/odd.json"
	check_eq "the escaped name reaches the profiler intact" '"q\"b\\\\s\nn\tt<\u00e9"' \
		"$(profiler-cli thread functions --json --limit 1 | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["functions"][0]["name"]))')"
	pc_stop
else
	notok "odd names: profiler-cli loads it" "$(tail -5 "$PC_OUT")"
fi

# Records (MTHawkeye's documented cpu-highload example): the record's thread carries an interval
# marker with its duration (132.6 s in the doc's metadata), and the tree weights still equal ours.
M="$FIX/mthawkeye"
{ echo "collection,key,value"
  echo "cpu-highload,575204521.78,$(sed 's://.*$::' "$M/cpu-highload.doc-example.jsonc" | tr -d '\n')"
  echo "cpu-highload-stackframe,575204521.78,$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",",":")))' "$M/cpu-highload-stackframe.doc-example.json")"
} >"$TMP/records"
"$TK" open --save "$TMP/records.json" "$TMP/records"
if pc_load "$TMP/records.json"; then
	python3 "$TK_ROOT/tests/cli/gecko_compare.py" "$TK" "$TMP/records"
	check_eq "a record is an interval marker on its thread: name, label, start, duration (ms)" \
		"cpu-highload|cpu-highload 575204521.78|0|132600" \
		"$(profiler-cli thread markers --json | python3 -c 'import json,sys; t=json.load(sys.stdin)["byType"]; m=t[0]["topMarkers"][0]; print("|".join(str(x) for x in (t[0]["markerName"], m["label"], m["start"], m["duration"]))) if len(t) == 1 and t[0]["count"] == 1 else print(t)')"
	pc_stop
else
	notok "records: profiler-cli loads it" "$(tail -5 "$PC_OUT")"
fi

# `tracekit convert --to gecko` keeps the per-sample list (time order) and the Records markers, like
# `tracekit open`: its files are byte for byte those of `open --save`, which the profiler loaded and
# gecko_compare.py checked above (MT in the loop, the records file before), so they are not loaded again.
MT="$FIX/xctrace/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml"
if "$TK" convert --help >/dev/null 2>&1; then
	"$TK" convert --to gecko -o "$TMP/agg.json" "$MT"
	"$TK" open --save "$TMP/open.json" "$MT"
	check_eq "convert --to gecko keeps every sample in time order (the same file as open --save)" same \
		"$(cmp -s "$TMP/agg.json" "$TMP/open.json" && echo same || echo differ)"
	"$TK" convert --to gecko -o "$TMP/records-convert.json" "$TMP/records"
	check_eq "convert --to gecko shows Records as markers (the same file as open --save)" same \
		"$(cmp -s "$TMP/records-convert.json" "$TMP/records.json" && echo same || echo differ)"
	check_eq "the .gecko.json extension selects the format" "60" \
		"$("$TK" convert -o "$TMP/x.gecko.json" "$MT" && python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["meta"]["preprocessedProfileVersion"])' "$TMP/x.gecko.json")"
fi

# --symbols: an inline chain keeps its inline marking (inlineDepth and one nativeSymbol), so the
# profiler's call tree shows "(inl)" on the inlined frames, as when the profiler symbolicates the
# same file through `tracekit open` (gecko_open.sh; chains from llvm-symbolizer, symbol_profile.sh).
TRACEKIT_CACHE_DIR="$TMP/symcache" "$TK" open --symbols "$FIX/symbol" --save "$TMP/inl.json" \
	"$FIX/symbol/time-profile-14.3-synthetic.xml" 2>/dev/null
if pc_load "$TMP/inl.json"; then
	check_eq "--symbols: the profiler shows the inlined frames as inlined" \
		"start u0_f10 u0_f15 u0_f15_in0(inl) u0_f15_in1(inl) hdr_2(inl)" \
		"$(profiler-cli thread samples-top-down --max-lines 40 --json | python3 -c '
import json, sys
n, out = json.load(sys.stdin)["regularCallTree"], []
while n.get("children"):
    n = n["children"][0]
    out.append(n["name"] + ("(inl)" if n.get("inlineStatus") == "inlined" else ""))
print(" ".join(out))')"
	pc_stop
else
	notok "--symbols: profiler-cli loads it" "$(tail -5 "$PC_OUT")"
fi

# Without --symbols the pre-14.3 export keeps raw addresses: the frames point into the generated
# dylib by image-relative address, and the file asks to be symbolicated.
S="$FIX/symbol"
"$TK" open --save "$TMP/s.json" "$S/time-profile-14.3-synthetic.xml"
check_eq "unsymbolicated frames make meta.symbolicated false" "False" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["meta"]["symbolicated"])' "$TMP/s.json")"
check_eq "libs carry name, UUID as breakpadId and the load address" \
	"libtks-arm64.dylib 4C4C44D755553144A1A5753F1442BA460 4373135360" \
	"$(python3 -c 'import json,sys; l=[x for x in json.load(open(sys.argv[1]))["libs"] if x["name"].startswith("libtks")][0]; print(l["name"], l["breakpadId"], l["start"])' "$TMP/s.json")"
check_eq "frame addresses: leaf PC (arm64, 4-aligned) and return address - 1, image-relative" "0x1263 0x1ab4 0x5903" \
	"$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["shared"]["frameTable"]["address"]; print(" ".join(hex(x) for x in sorted(set(a)) if x >= 0))' "$TMP/s.json")"
check_eq "file:line reach the frame table (Rust fixture: lines of main.rs)" "True" \
	"$("$TK" open --save - "$FIX/xctrace/time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml" |
		python3 -c 'import json,sys; p=json.load(sys.stdin); s=p["shared"]; print(any(l for l in s["frameTable"]["line"]) and any(s["stringArray"][f].endswith(".rs") for f in s["sources"]["filename"]))')"
check_eq "categories: system libraries apart from the app" "App System" \
	"$("$TK" open --save - "$FIX/xctrace/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml" |
		python3 -c 'import json,sys; p=json.load(sys.stdin); c=p["meta"]["categories"]; print(" ".join(sorted({c[i]["name"] for i in p["shared"]["frameTable"]["category"]} - {"Other"})))')"
check_fails "a missing input is an error" "$TK" open --save "$TMP/none.json" "$TMP/none.xml"
check "no half-written file after a failed conversion" test ! -e "$TMP/none.json"
