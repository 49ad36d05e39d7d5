#!/bin/bash
# tracekit serve --ingest: uploads acknowledged only after commit (SIGKILL mid-stream loses no
# acknowledged report; the client re-sends the rest), bad uploads get their 4xx and store nothing.
# On SQLite and on a real clickhouse-server.
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
post() { curl -s -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer ${2:-t0k3n-for-tests}" --data-binary "@$1" "$URL"; }
count() { "$TK" stats --db "$1" --metric hang.duration --json | python3 -c 'import json,sys; l=sys.stdin.read().strip(); print(json.loads(l)["count"] if l else 0)'; }

for DB in "sqlite:$TMP/srv.db" "$CH_URL/tk_serve"; do
	b=${DB%%:*}
	G="$TMP/gen-$b"; "$STOREGEN" "$G" 60 2 11 >/dev/null
	: >"$TMP/serve.log"; serve "$DB"
	# bad uploads
	gzip -c "$G/s0000000/records" | head -c 200 >"$TMP/trunc.gz"
	check_eq "$b: truncated gzip → 400" 400 "$(post "$TMP/trunc.gz")"
	check "$b: truncated gzip reason" grep -q "truncated gzip" "$TMP/body"
	gzip -c "$G/s0000000/records" >"$TMP/good.gz"
	check_eq "$b: wrong token → 401" 401 "$(post "$TMP/good.gz" wrong-token)"
	head -c 100000000 /dev/zero >"$TMP/big"
	check_eq "$b: 100 MB body → 413" 413 "$(post "$TMP/big")"
	printf 'collection,key,value\nhang,1,{"start":1,"duration_ms":"x"}\n' | gzip >"$TMP/bad.gz"
	check_eq "$b: malformed Records → 400" 400 "$(post "$TMP/bad.gz")"
	check "$b: malformed Records reason names the field" grep -q "duration_ms" "$TMP/body"
	head -c 5000 /dev/urandom | gzip | head -c 3000 >"$TMP/junk.gz"; printf '\x1f\x8b' | cat - "$TMP/junk.gz" >"$TMP/junk2.gz"
	check_eq "$b: corrupt gzip → 400" 400 "$(post "$TMP/junk2.gz")"
	check_eq "$b: bad uploads stored nothing" 0 "$(count "$DB")"
	check_eq "$b: a bare gzip'd Records file is accepted" 200 "$(post "$TMP/good.gz")"
	check_eq "$b: acknowledged with what was stored" '{"stored":2,"duplicates":0,"live":0}' "$(cat "$TMP/body")"
	post "$TMP/good.gz" >/dev/null
	check_eq "$b: resending it stores nothing more" '{"stored":0,"duplicates":2,"live":0}' "$(cat "$TMP/body")"
	# the body inflated in one call where it is one member with a believable size (libdeflate), else
	# streamed: two members, or a trailer whose size lies, take the other path to the same answers
	R="$G/s0000000/records"; L=$(wc -l <"$R")
	{ head -n $((L / 2)) "$R" | gzip -c; tail -n +$((L / 2 + 1)) "$R" | gzip -c; } >"$TMP/two.gz"
	check_eq "$b: a body of two gzip members is read whole" 200 "$(post "$TMP/two.gz")"
	check_eq "$b: … the same reports as one member" '{"stored":0,"duplicates":2,"live":0}' "$(cat "$TMP/body")"
	for lie in '\x01\x00\x00\x00' '\xff\xff\x00\x00'; do
		{ head -c -4 "$TMP/good.gz"; printf "$lie"; } >"$TMP/lie.gz"
		check_eq "$b: a gzip trailer with a wrong size ($lie) → 400" 400 "$(post "$TMP/lie.gz")"
		check "$b: … as corrupt gzip" grep -q "corrupt gzip" "$TMP/body"
	done
	# a stream of uploads, the server SIGKILLed in the middle, then restarted
	rm -f "$G/s0000000/uploaded"
	# one session at a time (no pack), so the kill lands in the middle of the stream on a fast machine
	# too (with --jobs 8, group commit and packs of 32 all 60 sessions can be acknowledged before the
	# loop below sees 15); packs are tested below
	# The client runs in short slices and is stopped (SIGSTOP) while the acknowledgements are
	# counted: on a loaded machine this loop can be starved for longer than the whole stream takes,
	# so an unpaced client could finish all 60 before the kill. Stopped, it keeps its connection and
	# its in-flight upload, which the kill cuts; SIGCONT after the restart lets it resend.
	"$TK" upload --url "$URL" --token-file "$TMP/token" --jobs 1 --pack 1 --retries 60 --retry-delay 100 "$G" 2>"$TMP/up.log" &
	UP=$!
	kill -STOP $UP
	while kill -0 $UP 2>/dev/null && [ "$(ls "$G"/*/uploaded 2>/dev/null | wc -l)" -lt 15 ]; do
		kill -CONT $UP; sleep 0.02; kill -STOP $UP 2>/dev/null
	done
	kill -9 $SRV_PID; wait $SRV_PID 2>/dev/null
	acked=$(ls "$G"/*/uploaded | wc -l)
	# every session acknowledged before the kill is in the store (2 hangs each)
	want=$((acked * 2 + 2)); have=$(count "$DB")
	if [ "$acked" -ge 60 ]; then notok "$b: the SIGKILL came after the whole stream (acked=$acked): nothing was tested"
	elif [ "$have" -ge "$want" ]; then ok "$b: SIGKILL after $acked acknowledged sessions: all $want of their reports stored"
	else notok "$b: acknowledged reports lost" "acked=$acked have=$have"; fi
	sleep 0.3; serve "$DB"
	kill -CONT $UP 2>/dev/null
	wait $UP; rc=$?
	check_eq "$b: the client re-sent the rest after the restart (exit 0)" 0 "$rc"
	check_eq "$b: every session acknowledged" 60 "$(ls "$G"/*/uploaded | wc -l)"
	# 120 from the bundles + the 2 of the bare upload (no meta.json: other keys, so other reports)
	check_eq "$b: every report stored exactly once" 122 "$(count "$DB")"
	kill $SRV_PID; wait $SRV_PID 2>/dev/null
done

# Packs: `tracekit upload` sends up to --pack sessions in one request (their bundles back to back),
# each marked uploaded once the pack is acknowledged; the server stores exactly what `tracekit
# ingest` of the same sessions stores. A pack holding a bad session is refused whole (400) and the
# client sends its sessions one by one: the good ones are stored, the bad one is reported.
P="$TMP/packs"; "$STOREGEN" "$P" 7 3 23 >/dev/null
printf '{"app": 42}' >"$P/s0000004/meta.json" # meta.json keys must be strings: a 400
: >"$TMP/serve.log"; serve "sqlite:$TMP/packs.db"
"$TK" upload --url "$URL" --token-file "$TMP/token" --pack 4 --jobs 1 "$P" 2>"$TMP/pack.log"
check_eq "packs: a bad session in a pack fails the upload (exit 1)" 1 $?
check "packs: the bad session is named with the server's reason" grep -q 's0000004.*meta.json: "app" is not a string' "$TMP/pack.log"
check_eq "packs: every good session is marked uploaded, the bad one is not" "s0000000 s0000001 s0000002 s0000003 s0000005 s0000006" \
	"$(cd "$P" && ls -d */uploaded | cut -d/ -f1 | tr '\n' ' ' | sed 's/ $//')"
check "packs: 6 sessions uploaded, 1 rejected" grep -q "6 sessions uploaded, 0 already uploaded, 1 rejected" "$TMP/pack.log"
kill $SRV_PID; wait $SRV_PID 2>/dev/null
# s0…s3 in one request; s4…s6 in one, refused, then one by one: 5 requests for 7 sessions
check "packs: 4 sessions a request (5 requests: 2 packs, then the refused pack's 3 sessions alone)" grep -q "): 5 uploads, 18 reports" "$TMP/serve.log"
mv "$P/s0000004" "$TMP/bad-session"
"$TK" ingest -q --db "sqlite:$TMP/packs-local.db" "$P"
ids() { sqlite3 "$1" "SELECT hex(id), kind, duration, session FROM reports ORDER BY 1"; }
check_eq "packs: the store holds what ingest of the good sessions stores (18 reports)" "18 $(ids "$TMP/packs-local.db" | md5sum)" \
	"$(sqlite3 "$TMP/packs.db" 'SELECT count(*) FROM reports') $(ids "$TMP/packs.db" | md5sum)"

# tracekit monitor --upload (records through the outbox as they finish): tests/cli/monitor_upload_cli.sh
