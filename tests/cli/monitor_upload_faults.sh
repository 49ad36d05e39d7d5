#!/bin/bash
# The monitor's uploader under two faults (examples/monitor/upload, linked with libtracekit-monitor):
# 1. a server that accepts the upload and trickles its answer a byte at a time: each upload ends at
#    its one deadline (TK_MONITOR_UPLOAD_TIMEOUT_MS) and is retried later, so the program exits
#    (before: 30 s per read, up to 1023 reads: the exit waited for the trickle for minutes);
# 2. an outbox that cannot be written (here: DIR/outbox is a file): the finished record is noted as
#    a monitor-event in the session's records, held and written again once the outbox works, so it
#    reaches the store (before: dropped silently).
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
P="$TK_ROOT/$BUILD/examples/monitor/upload"
SRV_PID= PROG= TRICKLE=
trap 'kill -9 $SRV_PID $PROG $TRICKLE 2>/dev/null; rm -rf "$TMP"' EXIT
echo "t0k3n-for-tests" >"$TMP/token"

# 1. the trickling server: reads the request, then sends "HTTP/1.1 200 OK\r\n" one byte per 0.3 s
#    and never finishes its headers
TPORT=$(free_port)
python3 - "$TPORT" "$TMP/trickle.ready" <<'PY' &
import socket, sys, threading, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
open(sys.argv[2], "w").close()
def serve(c):
    try:
        c.recv(65536)
        for b in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100000:
            c.send(bytes([b])); time.sleep(0.3)
    except OSError:
        pass
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
TRICKLE=$!
for _ in $(seq 200); do [ -f "$TMP/trickle.ready" ] && break; sleep 0.05; done
# one hang, then 10 s of waiting (time for the upload attempt to start): the program must then
# stop, its upload attempt included (one attempt: the next would come after 60 s)
TK_MONITOR_UPLOAD_TIMEOUT_MS=1500 "$P" "$TMP/s1" "http://127.0.0.1:$TPORT/v1/reports" "$TMP/token" 1 300 10 60000 \
	>"$TMP/p1.out" 2>&1 &
PROG=$!
# a watchdog far beyond 10 s + the deadline (the old per-read timeout kept it for 1023 × 0.3 s)
SECONDS=0
while [ $SECONDS -lt 150 ] && kill -0 $PROG 2>/dev/null; do sleep 0.1; done
if kill -0 $PROG 2>/dev/null; then
	notok "trickling server: the program exits (still running after 150 s)"
	kill -9 $PROG
else
	ok "trickling server: the program exits"
fi
wait $PROG; rc=$?; PROG=
check_eq "trickling server: the record and the run's foreground time stay in the outbox (exit 3, 2 pending)" "3 hangs 1, pending 2" "$rc $(tail -1 "$TMP/p1.out")"
check "trickling server: the attempt ended at the deadline, to be retried" grep -q "retry .*no complete answer within 1500 ms" "$TMP/p1.out"
kill $TRICKLE; wait $TRICKLE 2>/dev/null; TRICKLE=

# 2. an outbox that cannot be written, then repaired
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/v1/reports"
"$TK" serve --ingest --db "sqlite:$TMP/up.db" --listen "127.0.0.1:$PORT" --token-file "$TMP/token" 2>"$TMP/serve.log" &
SRV_PID=$!
for _ in $(seq 200); do grep -q "serving on" "$TMP/serve.log" 2>/dev/null && break; sleep 0.05; done
S="$TMP/s2"
mkdir -p "$S"; : >"$S/outbox" # a file where the outbox directory should be
# hangs of 1.5 s: after the first one fails to queue, seconds pass before the program stops
"$P" "$S" "$URL" "$TMP/token" 3 1500 30 100 >"$TMP/p2.out" 2>&1 &
PROG=$!
SECONDS=0
while [ $SECONDS -lt 120 ] && ! grep -q upload-queue-error "$S/records" 2>/dev/null; do sleep 0.05; done
check "unwritable outbox: the failure is a monitor-event in the records" grep -q '"event":"upload-queue-error".*Not a directory' "$S/records"
rm -f "$S/outbox"; mkdir "$S/outbox"
wait $PROG; PROG=
# what was still held when the program stopped was written then: the next run sends it
"$P" "$S" "$URL" "$TMP/token" 0 300 30 100 >"$TMP/p3.out" 2>&1
check_eq "the next run leaves nothing pending" "0 hangs 0, pending 0" "$? $(tail -1 "$TMP/p3.out")"
check_eq "all 3 hangs reached the store, each once" 3 "$(sqlite3 "$TMP/up.db" "SELECT count(*) FROM reports WHERE kind = 'hang'")"
"$TK" ingest -q --db "sqlite:$TMP/local.db" "$S/records"
check_eq "… the very hangs the session's records hold" \
	"$(sqlite3 "$TMP/local.db" "SELECT group_concat(duration) FROM (SELECT duration FROM reports WHERE kind = 'hang' ORDER BY time)")" \
	"$(sqlite3 "$TMP/up.db" "SELECT group_concat(duration) FROM (SELECT duration FROM reports WHERE kind = 'hang' ORDER BY time)")"
kill $SRV_PID; wait $SRV_PID 2>/dev/null; SRV_PID=
