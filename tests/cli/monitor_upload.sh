#!/bin/bash
# The monitor library's uploader, for real: examples/monitor/upload (linked with
# libtracekit-monitor, its hangs sent by tk_monitor_http_upload from the monitor's own thread) against
# a `tracekit serve --ingest` on 127.0.0.1 that is down for the first attempts, then up. The store
# must end with exactly the hangs, each once — the very reports `tracekit ingest` of the session
# stores — acknowledged bundles removed, unacknowledged ones kept on disk and sent by the next run,
# rejected ones set aside, retries spaced by the back-off, and the queue cap respected.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
P="$TK_ROOT/$BUILD/examples/monitor/upload"
SRV_PID=
PROG=
trap 'kill -9 $SRV_PID $PROG 2>/dev/null; rm -rf "$TMP"' EXIT
echo "t0k3n-for-tests" >"$TMP/token"
echo "wrong-token-here" >"$TMP/bad"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/v1/reports"
DB="sqlite:$TMP/up.db"
serve() {
	: >"$TMP/serve.log"
	"$TK" serve --ingest --db "$DB" --listen "127.0.0.1:$PORT" --token-file "$TMP/token" 2>>"$TMP/serve.log" &
	SRV_PID=$!
	while kill -0 $SRV_PID 2>/dev/null; do grep -q "serving on" "$TMP/serve.log" 2>/dev/null && return 0; sleep 0.05; done
	notok "serve did not start" "$(tail -3 "$TMP/serve.log")"; exit 1
}
unserve() { kill $SRV_PID; wait $SRV_PID 2>/dev/null; SRV_PID=; }
bundles() { ls "$1"/outbox/*.bundle 2>/dev/null | wc -l; }
# the records (each run's foreground time is checked apart: the next run of a directory adds its own)
ids() { sqlite3 "$1" "SELECT hex(id), kind, duration, signature FROM reports WHERE kind != 'foreground' ORDER BY 1"; }

# 1. The server is down while the program hangs three times; it comes up after a few failed attempts.
S="$TMP/s1"
"$P" "$S" "$URL" "$TMP/token" 3 400 60 200 >"$TMP/p1.out" 2>&1 &
PROG=$!
while kill -0 $PROG 2>/dev/null; do [ "$(grep -c ' retry ' "$TMP/p1.out")" -ge 4 ] && [ "$(bundles "$S")" -ge 2 ] && break; sleep 0.05; done
check "server down: the first attempts fail and are retried (>= 4 refused)" test "$(grep -c ' 0 retry .*refused' "$TMP/p1.out")" -ge 4
check "server down: the finished hangs wait in DIR/outbox" test "$(bundles "$S")" -ge 2
serve
wait $PROG; rc=$?; PROG=
check_eq "the program ends with nothing pending (exit 0)" 0 "$rc"
check_eq "it saw 3 final hangs and left no bundle" "hangs 3, pending 0" "$(tail -1 "$TMP/p1.out")"
check_eq "acknowledged bundles are removed" 0 "$(bundles "$S")"
check_eq "each bundle acknowledged once, after commit (3 hangs + the run's foreground time at stop, 1 report each)" 4 "$(grep -c ' 200 acked {"stored":1,"duplicates":0' "$TMP/p1.out")"
check_eq "the store holds exactly the 3 hangs" 3 "$(sqlite3 "$TMP/up.db" "SELECT count(*) FROM reports WHERE kind = 'hang'")"
# the truth: the session directory the monitor wrote, ingested locally
"$TK" ingest -q --db "sqlite:$TMP/local1.db" "$S"
ids "$TMP/local1.db" >"$TMP/local1.ids"; ids "$TMP/up.db" >"$TMP/up1.ids"
check_same_file "the uploaded reports are those \`tracekit ingest\` of the session stores (ids, durations, signatures)" "$TMP/local1.ids" "$TMP/up1.ids"
fg() { sqlite3 "$1" "SELECT hex(id), duration, session FROM reports WHERE kind = 'foreground' ORDER BY 1"; }
check_eq "the run's foreground time went through the outbox at stop, as ingest stores it" "$(fg "$TMP/local1.db")" "$(fg "$TMP/up.db")"
"$TK" stats --db "sqlite:$TMP/local1.db" --metric hang.duration --json >"$TMP/local1.json"
"$TK" stats --db "$DB" --metric hang.duration --json >"$TMP/up1.json"
check_same_file "stats --db --json equal" "$TMP/local1.json" "$TMP/up1.json"
# back-off: each wait at least half the nominal delay (200 ms doubling, at most 1600 ms; jitter adds
# up to the other half), and the delays grow
grep ' retry ' "$TMP/p1.out" | awk '{print $2}' >"$TMP/times"
check "retries are spaced by exponential back-off with jitter" python3 -c "
t = [float(x) for x in open('$TMP/times')]
gaps = [b - a for a, b in zip(t, t[1:])]
assert len(gaps) >= 3, gaps
for i, g in enumerate(gaps):
    nominal = min(200 * 2 ** i, 1600)
    assert nominal / 2 - 30 <= g <= nominal + 400, (i, g, gaps)
assert gaps[2] > gaps[0], gaps"

# 2. Unacknowledged bundles stay on disk: the server is away for the whole run.
unserve
S="$TMP/s2"
"$P" "$S" "$URL" "$TMP/token" 2 300 2 100 >"$TMP/p2.out" 2>&1
check_eq "server away: the program says 2 hangs and its foreground time are still pending (exit 3)" "3 hangs 2, pending 3" "$? $(tail -1 "$TMP/p2.out")"
check_eq "server away: the three bundles kept in the outbox" 3 "$(bundles "$S")"
# the truth for these hangs: the session as this run left it (the next run on the same directory
# adds its own launch-time and images, which a whole-directory ingest would key every record by)
cp -r "$S" "$TMP/s2-as-left"
# ... and the next run of the app sends them (no new hang in it)
serve
"$P" "$S" "$URL" "$TMP/token" 0 300 30 100 >"$TMP/p3.out" 2>&1
check_eq "the next run sends what the last one left (exit 0)" "0 hangs 0, pending 0" "$? $(tail -1 "$TMP/p3.out")"
check_eq "… and removes them" 0 "$(bundles "$S")"
"$TK" ingest -q --db "sqlite:$TMP/local1.db" "$TMP/s2-as-left"
ids "$TMP/local1.db" >"$TMP/local2.ids"; ids "$TMP/up.db" >"$TMP/up2.ids"
check_same_file "the store holds both runs' hangs, each once, as \`tracekit ingest\` stores them" "$TMP/local2.ids" "$TMP/up2.ids"
check_eq "5 hangs in all" 5 "$(wc -l <"$TMP/up2.ids")"

# 3. A refusal is final: a wrong token → 401 → set aside in outbox/rejected, never retried.
S="$TMP/s3"
before=$(sqlite3 "$TMP/up.db" 'SELECT count(*) FROM reports')
"$P" "$S" "$URL" "$TMP/bad" 1 300 30 100 >"$TMP/p4.out" 2>&1
check_eq "rejected: nothing pending (exit 0)" "0 hangs 1, pending 0" "$? $(tail -1 "$TMP/p4.out")"
check_eq "rejected: one attempt each (the hang, the foreground time at stop), 401" 2 "$(grep -c ' 401 rejected missing or wrong bearer token' "$TMP/p4.out")"
check_eq "rejected: the bundles (the hang, the foreground time at stop) are kept in outbox/rejected" 2 "$(ls "$S"/outbox/rejected/*.bundle 2>/dev/null | wc -l)"
check_eq "rejected: nothing stored" "$before" "$(sqlite3 "$TMP/up.db" 'SELECT count(*) FROM reports')"
unserve

# 4. The queue cap: with a 100-byte cap nothing is queued; the hangs stay in DIR/records and the
# session says how many were left out.
S="$TMP/s4"
"$P" "$S" "$URL" "$TMP/token" 2 300 1 100 100 >"$TMP/p5.out" 2>&1
check_eq "cap: nothing queued, nothing pending" "0 hangs 2, pending 0" "$? $(tail -1 "$TMP/p5.out")"
check "cap: the session notes the records left out of the outbox" grep -q '"event":"upload-queue-full","count":2' "$S/records"
"$TK" ingest -q --db "sqlite:$TMP/cap.db" "$S"
check_eq "cap: the hangs are still in the session's records" 2 "$(sqlite3 "$TMP/cap.db" "SELECT count(*) FROM reports WHERE kind = 'hang'")"
check_fails "an empty session directory name is refused" "$P" "" "$URL" "$TMP/token" 0
check_fails "an https URL is refused by the built-in uploader (TLS is the app's callback)" "$P" "$TMP/s5" "https://127.0.0.1:$PORT/v1/reports" "$TMP/token" 0

# 5. ThreadSanitizer over the whole library while it uploads: server away first (retries, the outbox
# kept at stop), then up (the next run sends what was left).
TS="$TK_ROOT/$BUILD/tsan/monitor_upload"
if [ -x "$TS" ]; then
	S="$TMP/s6"
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$TS" "$S" "$URL" "$TMP/token" 2 300 2 100 >"$TMP/t1.out" 2>"$TMP/t1.err"
	t1=$?
	serve
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$TS" "$S" "$URL" "$TMP/token" 1 300 30 100 >"$TMP/t2.out" 2>"$TMP/t2.err"
	t2=$?
	unserve
	if [ $t1 -eq 3 ] && [ $t2 -eq 0 ] && ! grep -q ThreadSanitizer "$TMP/t1.err" "$TMP/t2.err"; then
		ok "ThreadSanitizer: no race in the monitor while it queues, retries and uploads"
	else
		notok "ThreadSanitizer: no race in the monitor while it queues, retries and uploads" \
			"rc=$t1/$t2 $(grep -h -m1 -A12 'WARNING: ThreadSanitizer' "$TMP/t1.err" "$TMP/t2.err" | head -30)"
	fi
	check_eq "ThreadSanitizer build: all 3 hangs stored" 8 "$(sqlite3 "$TMP/up.db" "SELECT count(*) FROM reports WHERE kind = 'hang'")"
else
	notok "ThreadSanitizer build of the upload example" "missing $TS (make $BUILD/tsan/monitor_upload)"
fi

# 6. The preloaded library (no code change in the program): TK_MONITOR_UPLOAD_URL and
# TK_MONITOR_UPLOAD_TOKEN_FILE. The CPU record of a run that is busy until it exits finishes at exit,
# so it waits in the outbox (server away); the next run sends it at once.
B="$TK_ROOT/$BUILD"
# the sanitized build's busy carries the ASan runtime itself, ahead of the preloaded library
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
S="$TMP/s7"
busy() { env TK_MONITOR_DIR="$S" TK_MONITOR_CPU_THRESHOLD=10 TK_MONITOR_CPU_INTERVAL_MS=100 TK_MONITOR_CPU_HIGH_INTERVAL_MS=100 \
	TK_MONITOR_CPU_DURATION_MS=1000 TK_MONITOR_UPLOAD_URL="$URL" TK_MONITOR_UPLOAD_TOKEN_FILE="$TMP/token" \
	LD_PRELOAD="$B/libtracekit-monitor.so" "$B/examples/monitor/busy" "$1"; }
check "preload: a busy run with the server away" busy 2.5
check_eq "preload: its CPU record and foreground time wait in the outbox" 2 "$(bundles "$S")"
cp -r "$S" "$TMP/s7-as-left"
serve
check "preload: the next run" busy 2
unserve
"$TK" ingest -q --db "sqlite:$TMP/local7.db" "$TMP/s7-as-left"
first=$(sqlite3 "$TMP/local7.db" "SELECT hex(id) FROM reports WHERE kind = 'cpu-highload'")
check_eq "preload: the first run's CPU record was sent by the second run, as ingest stores it" 1 \
	"$(sqlite3 "$TMP/up.db" "SELECT count(*) FROM reports WHERE hex(id) = '${first:-none}'")"
# the second run's own record finished when its threads stopped (sent) or at exit (waiting)
cpu_bundles() { local n=0 f; for f in "$1"/outbox/*.bundle; do [ -e "$f" ] && zcat "$f" | grep -q '^cpu-highload,' && n=$((n + 1)); done; echo $n; }
check_eq "preload: the second run's record is stored or waits in the outbox, once" 2 \
	$(($(sqlite3 "$TMP/up.db" "SELECT count(*) FROM reports WHERE kind = 'cpu-highload'") + $(cpu_bundles "$S")))
env TK_MONITOR_DIR="$TMP/s8" TK_MONITOR_UPLOAD_URL="$URL" LD_PRELOAD="$B/libtracekit-monitor.so" "$B/examples/monitor/busy" 0.1 >"$TMP/s8.out" 2>&1
check_eq "preload: an upload URL without a token file: the program runs (exit 0)" 0 $?
check "preload: … and one line says why it is not monitored" grep -q "^tracekit-monitor: not monitoring: monitor: TK_MONITOR_UPLOAD_URL needs TK_MONITOR_UPLOAD_TOKEN_FILE" "$TMP/s8.out"
