#!/bin/bash
# tracekit open against hostile and unusual input (issue 20, items 2 and 7): CORS preflights for the
# headers the Firefox Profiler's symbolication fetch sets (receive-profile.ts adds User-Agent, which is
# not CORS-safelisted, so Firefox preflights it), --verbose logging of each request, a dSYM whose
# symbol names are not valid UTF-8 (answered with U+FFFD, no crash), no temporary file left behind when
# the server is killed, and symbolication requests bounded in size and memory. Servers are stopped by pid.
. "$(dirname "$0")/../lib.sh"
export TRACEKIT_CACHE_DIR="$TMP/cache" HOME="$TMP/home"
mkdir -p "$HOME" "$TMP/tmpd"
S="$FIX/symbol"
X14="$S/time-profile-14.3-synthetic.xml"
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# start_open OUTPREFIX ARGS...: run tracekit open in the background until it prints its link (or dies)
start_open() {
	local out=$1; shift
	TMPDIR="$TMP/tmpd" "$TK" open --no-browser "$@" >"$out.url" 2>"$out.err" &
	PIDS+=($!)
	while ! [ -s "$out.url" ]; do kill -0 $! 2>/dev/null || return 1; sleep 0.05; done
}
base_of() { python3 -c 'import sys,urllib.parse as u; print(u.unquote(sys.argv[1].split("symbolServer=")[1]))' "$(head -1 "$1")"; }
hwm_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }

# A copy of the fixture dSYM whose function name u0_f15 holds a byte that is not UTF-8 (0xff).
mkdir -p "$TMP/bad"
python3 - "$S/libtks-arm64.dylib.dwarf" "$TMP/bad/libtks-arm64.dylib.dwarf" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
assert d.count(b'u0_f15\x00') >= 1
open(sys.argv[2], 'wb').write(d.replace(b'u0_f15\x00', b'u0_f\xff5\x00'))
PY

if ! start_open "$TMP/a" --verbose --symbols "$TMP/bad" "$X14"; then
	notok "tracekit open --verbose starts" "$(cat "$TMP/a.err")"; exit 0
fi
PID=${PIDS[0]}
BASE=$(base_of "$TMP/a.url")
TOKEN=$(echo "$BASE" | sed 's#.*/##')

# item 2: the preflight Firefox sends before the profiler's symbolication POST
curl -s -D "$TMP/pre.h" -o /dev/null -X OPTIONS -H 'Origin: https://profiler.firefox.com' \
	-H 'Access-Control-Request-Method: POST' -H 'Access-Control-Request-Headers: user-agent,content-type' \
	"$BASE/symbolicate/v5"
check "preflight: every requested header is allowed (User-Agent, Content-Type)" python3 - "$TMP/pre.h" <<'PY'
import sys
h = {}
for line in open(sys.argv[1], encoding='latin-1'):
    if ':' in line:
        k, v = line.split(':', 1)
        h[k.strip().lower()] = v.strip()
allowed = {x.strip().lower() for x in h.get('access-control-allow-headers', '').split(',')}
assert {'user-agent', 'content-type'} <= allowed, h
assert h.get('access-control-allow-origin') == '*', h
assert 'POST' in h.get('access-control-allow-methods', ''), h
PY

# item 7: two addresses in the function whose name is not UTF-8 (the second made main crash in
# cmp_named), one in an inlined caller chain of it
REQ='{"jobs":[{"memoryMap":[["libtks-arm64.dylib","4C4C44D755553144A1A5753F1442BA460"]],"stacks":[[[0,6836],[0,6820],[0,4707]]]}]}'
code=$(curl -s -o "$TMP/sym.json" -w '%{http_code}' -H 'User-Agent: FirefoxProfiler/1.0 (+https://profiler.firefox.com)' \
	-H 'Origin: https://profiler.firefox.com' --data "$REQ" "$BASE/symbolicate/v5")
check_eq "a name that is not UTF-8 in the dSYM: answered (200)" 200 "$code"
check_eq "with U+FFFD for the bad byte, its function_offset, and the other function intact" \
	"u0_f�5 0x10 | u0_f�5 0x0 | u0_f10 0x0" \
	"$(python3 - "$TMP/sym.json" 2>&1 <<'PY'
import json, sys
fr = json.load(open(sys.argv[1]))["results"][0]["stacks"][0]
print(" | ".join("%s %s" % (f.get("function"), f.get("function_offset")) for f in fr))
PY
)"
check "the answer is valid UTF-8 JSON (Python's strict decoder)" python3 -c 'import json,sys; json.loads(open(sys.argv[1],"rb").read().decode("utf-8","strict"))' "$TMP/sym.json"
check "the server is still up" kill -0 "$PID"

# item 2: --verbose logs each request on stderr, without the secret token
check "--verbose logs the symbolication request with its status and origin" \
	grep -qE '^tracekit: open: POST /TOKEN/symbolicate/v5 -> 200 \(.* from https://profiler\.firefox\.com$' "$TMP/a.err"
check "and the preflight" grep -qE '^tracekit: open: OPTIONS /TOKEN/symbolicate/v5 -> 204' "$TMP/a.err"
curl -s -o /dev/null "$BASE/profile.json"
for _ in $(seq 200); do grep -q 'GET /TOKEN/profile.json -> 200' "$TMP/a.err" && break; sleep 0.05; done
check "and the profile download" grep -q 'GET /TOKEN/profile.json -> 200' "$TMP/a.err"
check "the token never reaches the request log" bash -c "! grep '^tracekit: open: ' '$TMP/a.err' | grep -q '$TOKEN'"

# item 7: bounded requests. 9 MB of frames (the request that cost 2.7 GB and 28 s) is refused with
# 413 before it is parsed; the server's peak memory stays far from it.
python3 -c '
import sys
n = 1000000
sys.stdout.write("{\"jobs\":[{\"memoryMap\":[[\"libtks-arm64.dylib\",\"4C4C44D755553144A1A5753F1442BA460\"]],\"stacks\":[[")
sys.stdout.write(",".join("[0,%d]" % (4096 + i % 20000) for i in range(n)))
sys.stdout.write("]]}]}")' >"$TMP/big.json"
before=$(hwm_kb "$PID")
code=$(curl -s -o "$TMP/big.out" -w '%{http_code}' --data-binary "@$TMP/big.json" "$BASE/symbolicate/v5")
check_eq "a $(($(stat -c %s "$TMP/big.json") / 1000000)) MB request of 1 M frames: 413" 413 "$code"
check "with the reason" grep -q "the limit is" "$TMP/big.out"
after=$(hwm_kb "$PID")
if [ -n "$after" ] && [ $((after - before)) -lt 200000 ]; then ok "its peak memory grew by $(((after - before) / 1024)) MB (< 200 MB)"; else notok "peak memory grew by $(((after - before) / 1024)) MB"; fi
# a large legitimate request (100 k frames) is still answered in full
python3 -c '
import sys
n = 100000
sys.stdout.write("{\"jobs\":[{\"memoryMap\":[[\"libtks-arm64.dylib\",\"4C4C44D755553144A1A5753F1442BA460\"]],\"stacks\":[[")
sys.stdout.write(",".join("[0,%d]" % (4096 + i % 20000) for i in range(n)))
sys.stdout.write("]]}]}")' >"$TMP/mid.json"
code=$(curl -s -o "$TMP/mid.out" -w '%{http_code}' --data-binary "@$TMP/mid.json" "$BASE/symbolicate/v5")
check_eq "a request of 100 k frames is answered (200)" 200 "$code"
check_eq "with every frame" 100000 "$(grep -o "\"frame\":" "$TMP/mid.out" | wc -l)"
# a long module name repeated in every frame would multiply the answer: bounded too
python3 -c '
import sys
name = "m" * 4000000
sys.stdout.write("{\"jobs\":[{\"memoryMap\":[[\"%s\",\"00\"]],\"stacks\":[[%s]]}]}" % (name, ",".join(["[0,1]"] * 100000)))' >"$TMP/longname.json"
code=$(curl -s -o "$TMP/ln.out" -w '%{http_code}' --data-binary "@$TMP/longname.json" "$BASE/symbolicate/v5")
check_eq "a 4 MB module name in 100 k frames (a 400 GB answer): 413" 413 "$code"
check "the server is still up after the large requests" kill -0 "$PID"

# item 7: nothing of the served profile stays on disk when the server dies without cleaning up
check "while serving, TMPDIR holds no named file of ours" bash -c "[ -z \"\$(ls -A '$TMP/tmpd')\" ]"
kill -SEGV "$PID"; wait "$PID" 2>/dev/null
check "after a crash (SIGSEGV) TMPDIR is empty" bash -c "[ -z \"\$(ls -A '$TMP/tmpd')\" ]"
if start_open "$TMP/b" "$X14"; then
	kill -9 "${PIDS[1]}"; wait "${PIDS[1]}" 2>/dev/null
	check "after SIGKILL TMPDIR is empty" bash -c "[ -z \"\$(ls -A '$TMP/tmpd')\" ]"
else
	notok "a second server starts" "$(cat "$TMP/b.err")"
fi
