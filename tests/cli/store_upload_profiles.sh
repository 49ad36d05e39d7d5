#!/bin/bash
# Profiles through the upload path, on SQLite and on a real clickhouse-server: xctrace exports (plain,
# gzip'd, in a tree) and other profile inputs (Deep Copy, perf script, macOS sample) sent with
# `tracekit upload` to `tracekit serve --ingest` must leave exactly what `tracekit ingest` of the same
# files leaves: `tracekit stats --db … --json` byte for byte for every profile metric asked, and the
# same profile rows (id, keys, time, unit, weight, threads, source). Resending stores nothing; bad
# profile bundles get a 4xx with the reason and store nothing.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
start_clickhouse
SRV_PID=
trap 'kill -9 $SRV_PID 2>/dev/null; stop_clickhouse; rm -rf "$TMP"' EXIT
tk_fork_start
echo "t0k3n-for-tests" >"$TMP/token"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/v1/reports"
serve() { # DB: start the server, wait until it listens
	"$TK" serve --ingest --db "$1" --listen "127.0.0.1:$PORT" --token-file "$TMP/token" 2>>"$TMP/serve.log" &
	SRV_PID=$!
	while kill -0 $SRV_PID 2>/dev/null; do grep -q "serving on" "$TMP/serve.log" 2>/dev/null && curl -s "$URL" >/dev/null && return 0; sleep 0.05; done
	notok "serve did not start" "$(tail -3 "$TMP/serve.log")"; exit 1
}
post() { curl -s -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer t0k3n-for-tests" --data-binary "@$1" "$URL"; }
up() { "$TK" upload --url "$URL" --token-file "$TMP/token" --retries 3 --retry-delay 100 "$@"; }

F="$TK_ROOT/tests/fixtures/xctrace"
O="$TK_ROOT/tests/fixtures/other"
A=("$F/time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml"
	"$F/time-profile_xcode26.4.1_tagged-backtrace_recursion_macos-arm64.xml"
	"$F/time-profile_xcode14.3plus_frames-without-binary_macos-arm64_rust.xml")
# a tree: one plain export, one gzip'd (its bytes are a report of their own), found by the walk
mkdir -p "$TMP/tree/deep" && cp "$F/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml" "$TMP/tree/b1.xml" &&
	gzip -c "$F/time-profile_pre-xcode14.3_text-addresses-fragments_macos-arm64_reindented.xml" >"$TMP/tree/deep/b2.xml.gz"
# other readers' inputs, each under its own app (units differ: a query never mixes them)
OTHER=("deepcopy:$O/deep-copy_instruments16.0_time-profile_speedscope.txt"
	"perf:$O/perf-script_linux6.1_spin-userspace_generated.txt"
	"sample:$O/sample_macos10.14_firefox-plugin-container_full.txt.gz")

for x in "${A[@]}" "$TMP/tree/b1.xml"; do "$TK" top --json "$x"; done | python3 -c '
import json, sys
seen = []
for line in sys.stdin:
    fs = json.loads(line)["functions"]
    for f in fs[:3]:
        if f["name"] not in seen: seen.append(f["name"])
    b = [f for f in fs if f.get("binary")]
    if b: seen.append(b[0]["binary"] + "`" + b[0]["name"])
for n in seen: print(n)
print("no_such_function_anywhere")' | awk '!s[$0]++' >"$TMP/names"
check "some function names to ask about" test "$(wc -l <"$TMP/names")" -ge 6

fill() { # DB how(ingest|upload): the same inputs, the same --set keys
	if [ "$2" = ingest ]; then
		"$TK" ingest -q --db "$1" --set app=Demo,version=1.0 "${A[@]}" &&
			"$TK" ingest -q --db "$1" --set app=Demo,version=2.0 "$TMP/tree" || return 1
		for o in "${OTHER[@]}"; do "$TK" ingest -q --db "$1" --set "app=${o%%:*}" "${o#*:}" || return 1; done
	else
		up --set app=Demo,version=1.0 "${A[@]}" && up --set app=Demo,version=2.0 "$TMP/tree" || return 1
		for o in "${OTHER[@]}"; do up --set "app=${o%%:*}" "${o#*:}" || return 1; done
	fi
}
answers() { # DB: every metric asked, by version and overall, and each other input alone (one tk_batch process)
	local l="$TMP/answers.list"
	: >"$l"
	q() { tk_batch_add "$l" stats --db "$1" --metric "$2" --by version --where app=Demo --json
		tk_batch_add "$l" stats --db "$1" --metric "$2" --where app=Demo --json; }
	q "$1" profile.weight
	while IFS= read -r n; do q "$1" "fn.self:$n"; q "$1" "fn.total:$n"; done <"$TMP/names"
	for o in "${OTHER[@]}"; do tk_batch_add "$l" stats --db "$1" --metric profile.weight --where "app=${o%%:*}" --json; done
	"$TK_BATCH" "$l"
}
rows() { # DB: the profile rows as text, in id order
	case $1 in
	sqlite:*) sqlite3 "${1#sqlite:}" "SELECT hex(id), app, version, build, device, os, session, printf('%.17g', time), unit, printf('%.17g', weight), threads, source FROM profiles ORDER BY 1" 2>&1 ||
		sqlite3 "${1#sqlite:}" ".schema profiles" ;;
	clickhouse:*) curl -s --data-binary "SELECT hex(id), app, version, build, device, os, session, toString(time), unit, toString(weight), threads, source FROM ${1##*/}.profiles ORDER BY id FORMAT TSV" "$CH_HTTP" ;;
	esac
}

for be in sqlite clickhouse; do
	if [ $be = sqlite ]; then LOCAL="sqlite:$TMP/local.db"; REMOTE="sqlite:$TMP/remote.db"
	else LOCAL="$CH_URL/tk_up_local"; REMOTE="$CH_URL/tk_up_remote"; fi
	: >"$TMP/serve.log"; serve "$REMOTE"
	check "$be: tracekit ingest of the profiles" fill "$LOCAL" ingest
	check "$be: tracekit upload of the same profiles to serve --ingest" fill "$REMOTE" upload
	answers "$LOCAL" >"$TMP/$be.local.json" 2>&1
	answers "$REMOTE" >"$TMP/$be.remote.json" 2>&1
	check "$be: the answers are not empty" test "$(grep -c '"count"' "$TMP/$be.local.json")" -ge 12
	{ "$TK" stats --db "$LOCAL" --metric profile.weight --by version --where app=Demo --json
		"$TK" stats --db "$LOCAL" --metric profile.weight --where app=Demo --json; } >"$TMP/$be.cli.json"
	check_same_file "$be: tk_batch's answers are tracekit's (profile.weight, one process each)" "$TMP/$be.cli.json" \
		<(head -n "$(wc -l <"$TMP/$be.cli.json")" "$TMP/$be.local.json")
	check_same_file "$be: stats --db --json after upload = after local ingest (profile.weight, fn.self/total, other formats)" \
		"$TMP/$be.local.json" "$TMP/$be.remote.json"
	rows "$LOCAL" >"$TMP/$be.local.rows"; rows "$REMOTE" >"$TMP/$be.remote.rows"
	check_eq "$be: 8 profile rows stored" 8 "$(wc -l <"$TMP/$be.remote.rows")"
	check_same_file "$be: the same profile rows (id, keys, time, unit, weight, threads, source)" "$TMP/$be.local.rows" "$TMP/$be.remote.rows"
	up --set app=Demo,version=1.0 "${A[0]}" 2>"$TMP/again.err"
	rows "$REMOTE" >"$TMP/$be.again.rows"
	check_same_file "$be: uploading an export again stores nothing more" "$TMP/$be.local.rows" "$TMP/$be.again.rows"

	# bad profile bundles: 4xx, the reason, nothing stored
	bundle() { # OUT then NAME FILE pairs: a bundle with those parts, gzip'd
		local out=$1; shift
		python3 - "$@" >"$out.raw" <<'PY'
import sys
a = sys.argv[1:]
out = sys.stdout.buffer
out.write(b"tracekit-bundle 1\n")
for name, path in zip(a[0::2], a[1::2]):
    data = open(path, "rb").read()
    out.write(b"%s %d\n" % (name.encode(), len(data)) + data + b"\n")
PY
		gzip -c "$out.raw" >"$out"
	}
	printf '{"name":"x.xml","mtime_sec":1,"mtime_nsec":0,"encoding":"none"}' >"$TMP/pj"
	printf '{"name":"x.xml","mtime_sec":1,"mtime_nsec":0,"encoding":"gzip"}' >"$TMP/pjgz"
	printf '{"name":"x.xml","mtime_sec":"soon","encoding":"none"}' >"$TMP/pjbad"
	head -c 3000 "${A[0]}" >"$TMP/cut.xml"
	gzip -c "${A[0]}" | head -c 2000 >"$TMP/cut.xml.gz"
	{ head -c 300 "${A[0]}"; head -c 20000000 /dev/zero | tr '\0' ' '; } | gzip >"$TMP/bomb.gz" # 20 MB in 20 kB
	printf 'collection,key,value\n' >"$TMP/rec"
	echo "just some text" >"$TMP/junk"
	bundle "$TMP/b1" profile "${A[0]}"
	bundle "$TMP/b2" profile "${A[0]}" profile.json "$TMP/pjbad"
	bundle "$TMP/b3" profile "$TMP/cut.xml" profile.json "$TMP/pj"
	bundle "$TMP/b4" profile "$TMP/cut.xml.gz" profile.json "$TMP/pj"
	bundle "$TMP/b5" profile "$TMP/rec" profile.json "$TMP/pj"
	bundle "$TMP/b6" profile "$TMP/junk" profile.json "$TMP/pj"
	bundle "$TMP/b7" profile "${A[0]}" profile.json "$TMP/pjgz"
	check_eq "$be: profile without profile.json → 400" 400 "$(post "$TMP/b1")"
	check "$be: … reason" grep -q "profile and profile.json go together" "$TMP/body"
	check_eq "$be: malformed profile.json → 400" 400 "$(post "$TMP/b2")"
	check "$be: … reason" grep -q "profile.json must be" "$TMP/body"
	check_eq "$be: truncated export → 400" 400 "$(post "$TMP/b3")"
	check "$be: … the reader's reason" grep -q "x.xml" "$TMP/body"
	check_eq "$be: truncated gzip'd export → 400" 400 "$(post "$TMP/b4")"
	check_eq "$be: a Records file sent as a profile → 400" 400 "$(post "$TMP/b5")"
	check "$be: … reason" grep -q "is a Records file" "$TMP/body"
	check_eq "$be: text in no known format → 400" 400 "$(post "$TMP/b6")"
	check_eq "$be: says gzip but is not → 400" 400 "$(post "$TMP/b7")"
	printf 'collection,key,value\n' >"$TMP/rec2"
	bundle "$TMP/b8" profile "${A[0]}" profile.json "$TMP/pj" records "$TMP/rec2"
	check_eq "$be: a profile and a session in one bundle → 400" 400 "$(post "$TMP/b8")"
	rows "$REMOTE" >"$TMP/$be.after.rows"
	check_same_file "$be: bad profile bundles stored nothing" "$TMP/$be.local.rows" "$TMP/$be.after.rows"
	kill $SRV_PID; wait $SRV_PID 2>/dev/null
	# a profile whose own gzip inflates past the bundle's inflated limit: 413 (--max-body 64 kB:
	# bundles inflate to 512 kB, a profile inside to 512 kB too; the 20 MB of blanks go past it)
	"$TK" serve --ingest --db "$REMOTE" --listen "127.0.0.1:$PORT" --token-file "$TMP/token" --max-body 65536 2>>"$TMP/serve.log" &
	SRV_PID=$!
	while kill -0 $SRV_PID 2>/dev/null; do curl -s "$URL" >/dev/null && break; sleep 0.05; done
	bundle "$TMP/b9" profile "$TMP/bomb.gz" profile.json "$TMP/pj"
	check_eq "$be: a profile inflating past the limit → 413" 413 "$(post "$TMP/b9")"
	check "$be: … reason" grep -q "inflates past" "$TMP/body"
	kill $SRV_PID; wait $SRV_PID 2>/dev/null
done
check_same_file "SQLite and ClickHouse give the same answers after upload" "$TMP/sqlite.remote.json" "$TMP/clickhouse.remote.json"

# Bounded memory on the server: a 200 MB export (xcgen, ~24 MB gzip'd) is read streamed from the
# body, never inflated whole: serve's peak RSS stays well under the export's size.
"$TK_ROOT/$BUILD/xcgen" --size 200M --gzip -o "$TMP/big.xml.gz" 2>/dev/null
: >"$TMP/serve.log"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1" \
	"$TK" serve --ingest --db "sqlite:$TMP/big.db" --listen "127.0.0.1:$PORT" --token-file "$TMP/token" --max-body 33554432 2>>"$TMP/serve.log" &
SRV_PID=$!
while kill -0 $SRV_PID 2>/dev/null; do grep -q "serving on" "$TMP/serve.log" 2>/dev/null && break; sleep 0.05; done
check "a 200 MB export uploads" up "$TMP/big.xml.gz"
hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$SRV_PID/status")
kill $SRV_PID; wait $SRV_PID 2>/dev/null
check "serve's peak RSS ${hwm} kB < 120 MB for a 200 MB export (streamed, never inflated whole)" test "${hwm:-999999}" -lt 122880
"$TK" ingest -q --db "sqlite:$TMP/big-local.db" "$TMP/big.xml.gz"
check_eq "… and it is stored as ingest stores it" \
	"$(sqlite3 "$TMP/big-local.db" "SELECT hex(id), weight, threads FROM profiles")" \
	"$(sqlite3 "$TMP/big.db" "SELECT hex(id), weight, threads FROM profiles")"
