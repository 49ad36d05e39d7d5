#!/bin/bash
# tracekit open: the loopback server. It serves the same bytes as --save under a random path, answers
# /symbolicate/v5 from the generated dylib's dSYM (tests/fixtures/symbol; expected chains from
# llvm-symbolizer, see symbol_profile.sh), and the profiler's own symbolication code (profiler-cli
# with --symbol-server) names the unsymbolicated frames through it. Servers are stopped by pid.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../profiler_cli.sh"
export TRACEKIT_CACHE_DIR="$TMP/cache" HOME="$TMP/home"
mkdir -p "$HOME"
S="$FIX/symbol"
X14="$S/time-profile-14.3-synthetic.xml"
PIDS=()
JSBIN="$TK_ROOT/tests/js/node_modules/.bin"
export PATH="$JSBIN:$PATH"
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	[ -x "$JSBIN/profiler-cli" ] && pc_stop_all
	rm -rf "$TMP"
}
trap cleanup EXIT

# start_open OUTPREFIX ARGS...: run tracekit open in the background, wait for its link (or its exit)
start_open() {
	local out=$1; shift
	"$TK" open --no-browser "$@" >"$out.url" 2>"$out.err" &
	PIDS+=($!)
	until [ -s "$out.url" ]; do kill -0 $! 2>/dev/null || return 1; sleep 0.05; done
}

if ! start_open "$TMP/a" --symbols "$S" "$X14"; then
	notok "tracekit open starts and prints a link" "$(cat "$TMP/a.err")"; exit 0
fi
PID=${PIDS[0]}
URL=$(head -1 "$TMP/a.url")
BASE=$(python3 -c 'import sys,urllib.parse as u; print(u.unquote(sys.argv[1].split("symbolServer=")[1]))' "$URL")
PORT=$(echo "$BASE" | sed 's#http://127.0.0.1:\([0-9]*\)/.*#\1#')
check "the link is profiler.firefox.com/from-url with the encoded profile URL" \
	grep -qE '^https://profiler\.firefox\.com/from-url/http%3A%2F%2F127\.0\.0\.1%3A[0-9]+%2F[0-9a-f]{32}%2Fprofile\.json/\?symbolServer=' "$TMP/a.url"
check "it listens on 127.0.0.1 only" bash -c "ss -ltn 2>/dev/null | grep -q '127.0.0.1:$PORT ' || ! command -v ss >/dev/null"

"$TK" open --save "$TMP/saved.json" --symbols "$S" "$X14" 2>/dev/null
curl -s -D "$TMP/h.txt" -o "$TMP/got.json" "$BASE/profile.json"
check_same_file "GET /TOKEN/profile.json serves the converted profile (same bytes as --save)" "$TMP/saved.json" "$TMP/got.json"
check "with the CORS header the profiler needs" grep -qi '^Access-Control-Allow-Origin: \*' "$TMP/h.txt"
check_eq "a wrong token is 404" "404" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/0123456789abcdef0123456789abcdef/profile.json")"
check_eq "any other path is 404" "404" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/")"
check_eq "no writes: PUT is 404" "404" "$(curl -s -o /dev/null -w '%{http_code}' -X PUT --data x "$BASE/profile.json")"
check_eq "a malformed symbolication request is 400" "400" \
	"$(curl -s -o /dev/null -w '%{http_code}' -X POST --data '{"nope":1}' "$BASE/symbolicate/v5")"
check_eq "CORS preflight of the symbolication POST" "204" \
	"$(curl -s -o /dev/null -w '%{http_code}' -X OPTIONS "$BASE/symbolicate/v5")"

REQ='{"jobs":[{"memoryMap":[["libtks-arm64.dylib","4C4C44D755553144A1A5753F1442BA460"],["dyld","DE46DD52499430D8B4B4E352A1A193540"]],"stacks":[[[0,6836],[0,4707],[1,22787]]]}]}'
curl -s -X POST -H 'Content-Type: application/json' --data "$REQ" "$BASE/symbolicate/v5" >"$TMP/sym.json"
check_eq "POST /symbolicate/v5: the inline chain and lines of 0x1ab4, the caller at 0x1263, an unknown image" \
	"u0_f15 unit_000.c:323 [hdr_2 tksymgen.h:19, u0_f15_in1 unit_000.c:308, u0_f15_in0 unit_000.c:315] | u0_f10 unit_000.c:196 [] | - [] | found {'dyld/DE46DD52499430D8B4B4E352A1A193540': False, 'libtks-arm64.dylib/4C4C44D755553144A1A5753F1442BA460': True}" \
	"$(python3 - "$TMP/sym.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))['results'][0]
b = lambda f: f.rsplit('/', 1)[-1]
out = []
for f in r['stacks'][0]:
    inl = ', '.join(f"{i['function']} {b(i['file'])}:{i['line']}" for i in f.get('inlines', []))
    out.append((f"{f['function']} {b(f['file'])}:{f['line']}" if 'function' in f else '-') + f' [{inl}]')
print(' | '.join(out) + ' | found ' + str(dict(sorted(r['found_modules'].items()))))
PY
)"

check_eq "addresses of one function share a base (offsets from its lowest requested address)" "0x24 0x14 0x0 0x0" \
	"$(curl -s -X POST --data '{"jobs":[{"memoryMap":[["libtks-arm64.dylib","4C4C44D755553144A1A5753F1442BA460"]],"stacks":[[[0,6836],[0,6820],[0,4707],[0,6800]]]}]}' "$BASE/symbolicate/v5" |
		python3 -c 'import json,sys; print(" ".join(f["function_offset"] for f in json.load(sys.stdin)["results"][0]["stacks"][0]))')"

# Hostile bodies: wrong shapes, huge and negative numbers, deep nesting, not JSON; the server answers
# each (200 with nothing found, or 400) and keeps serving.
codes=""
for body in '{"jobs":"x"}' '{"jobs":[{"memoryMap":"x","stacks":[]}]}' '{"jobs":[{"memoryMap":[[1,2],null,["a"]],"stacks":[[["x",1],[99,5],[-1,-1],[0,4294967296000],null]]}]}' \
	'{"jobs":[{"memoryMap":[["libtks-arm64.dylib","4C4C44D755553144A1A5753F1442BA460"]],"stacks":[[[0,-5],[0,1e300],[0,4707.5]],"x"]}]}' \
	"$(python3 -c 'print("["*5000 + "]"*5000)')" $'\x00\xff{'; do
	codes+="$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary "$body" "$BASE/symbolicate/v5") "
done
check_eq "malformed symbolication requests get 400 or an empty answer, never a crash" "400 400 200 200 400 400 " "$codes"
check_eq "and the server still serves the profile" "200" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/profile.json")"

# The profiler's own symbolication: an unsymbolicated file, loaded with our server as symbol server.
if [ -x "$JSBIN/profiler-cli" ]; then
	"$TK" open --save "$TMP/raw.json" "$X14" 2>/dev/null
	if pc_load "$TMP/raw.json" --symbol-server "$BASE"; then
		profiler-cli thread functions --json --limit 0 >"$TMP/fn.json" 2>&1
		check_eq "profiler-cli symbolicates through tracekit open: names with their library" \
			"libtks-arm64.dylib!hdr_2 libtks-arm64.dylib!u0_f10 libtks-arm64.dylib!u0_f15 libtks-arm64.dylib!u0_f15_in0 libtks-arm64.dylib!u0_f15_in1" \
			"$(python3 -c 'import json,sys; print(" ".join(sorted(f["nameWithLibrary"] for f in json.load(open(sys.argv[1]))["functions"] if "libtks" in f["nameWithLibrary"])))' "$TMP/fn.json")"
		check_eq "and the self weight stays on the leaf (2 ms on hdr_2)" "2" \
			"$(python3 -c 'import json,sys; print([f["selfSamples"] for f in json.load(open(sys.argv[1]))["functions"] if f["name"]=="hdr_2"][0])' "$TMP/fn.json")"
		pc_stop_all
	else
		notok "profiler-cli loads the unsymbolicated profile" "$(tail -3 "$PC_OUT")"
	fi
fi

check_fails "a second open on the same port fails" "$TK" open --no-browser --port "$PORT" "$X14"
cp "$TMP/.out" "$TMP/busy.txt"
check_eq "with a one-line message naming the port" \
	"tracekit: open: 127.0.0.1:$PORT is already in use (choose another --port, or 0 for a free one)" "$(cat "$TMP/busy.txt")"

kill -TERM "$PID"
wait "$PID"; rc=$?
check_eq "SIGTERM stops it cleanly (exit 0)" "0" "$rc"
check "and it removes its temporary profile" bash -c "! ls -d \${TMPDIR:-/tmp}/tracekit-open-* 2>/dev/null | xargs -r -I{} find {} -newer '$TMP/saved.json' | grep -q ."

# No --symbols: the symbol cache that the first run built (in $TRACEKIT_CACHE_DIR) answers alone.
if start_open "$TMP/b" "$X14"; then
	B2=$(python3 -c 'import sys,urllib.parse as u; print(u.unquote(sys.argv[1].split("symbolServer=")[1]))' "$(head -1 "$TMP/b.url")")
	check_eq "without --symbols the symbol cache answers (hdr_2 inlined in u0_f15)" "u0_f15 hdr_2" \
		"$(curl -s -X POST --data "$REQ" "$B2/symbolicate/v5" | python3 -c 'import json,sys; f=json.load(sys.stdin)["results"][0]["stacks"][0][0]; print(f["function"], f["inlines"][0]["function"])')"
	kill -INT "${PIDS[1]}"; wait "${PIDS[1]}"; rc=$?
	check_eq "SIGINT (Ctrl-C) stops it cleanly" "0" "$rc"
else
	notok "a second server on a free port starts" "$(cat "$TMP/b.err")"
fi
check_fails "--port out of range" "$TK" open --no-browser --port 70000 "$X14"
