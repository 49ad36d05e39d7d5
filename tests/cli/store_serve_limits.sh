#!/bin/bash
# tracekit serve --ingest under hostile uploads and many clients (issue 20, items 5, 6 and 13):
#  - a profile gzip'd inside the gzip'd bundle is bounded by the same inflated size as the bundle
#    (not 8x more), and one of a million distinct stacks in a ~120 KB body is refused (413) early,
#    with the server's memory bounded, instead of building a 1.5 GB model;
#  - uploads are decoded on several threads: a small upload is answered while a large one decodes;
#  - Slowloris (260 connections trickling header lines, no token) does not keep legitimate uploads
#    out: a per-address connection limit and a total deadline for request headers;
#  - group commit: uploads that arrive together are committed in one transaction, each acknowledged
#    with its own counts, every report stored once.
# Every wait is for a condition (a log line, a connection's end), never a fixed sleep.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../store_lib.sh"
SRV_PID=
ATT_PID=
trap 'kill -9 $SRV_PID $ATT_PID 2>/dev/null; rm -rf "$TMP"' EXIT
echo "t0k3n-for-tests" >"$TMP/token"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/v1/reports"
LOG="$TMP/serve.log"
serve() { # ARGS...: start the server, wait until it listens
	: >"$LOG"
	"$TK" serve --ingest --verbose --listen "127.0.0.1:$PORT" --token-file "$TMP/token" "$@" 2>>"$LOG" &
	SRV_PID=$!
	while ! grep -q "serving on" "$LOG"; do
		kill -0 $SRV_PID 2>/dev/null || { notok "serve starts" "$(tail -3 "$LOG")"; exit 1; }
		sleep 0.05
	done
}
stop() { kill $SRV_PID; wait $SRV_PID 2>/dev/null; SRV_PID=; }
post() { curl -s -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer t0k3n-for-tests" --data-binary "@$1" "$URL"; }
hwm_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }
# wait_log PATTERN [COUNT]: until the server log has COUNT (1) lines matching PATTERN, or it died
wait_log() {
	while [ "$(grep -cE "$1" "$LOG")" -lt "${2:-1}" ]; do kill -0 $SRV_PID 2>/dev/null || return 1; sleep 0.05; done
}
# profile_bundle OUT FOLDED LEVEL: a profile bundle as `tracekit upload FILE` sends it, the folded
# file gzip'd inside (at LEVEL) and the whole gzip'd again
profile_bundle() {
	python3 - "$@" <<'PY'
import gzip, json, sys
out, src, level = sys.argv[1], sys.argv[2], int(sys.argv[3])
inner = gzip.compress(open(src, 'rb').read(), level)
pj = json.dumps({"name": src.rsplit('/', 1)[-1], "mtime_sec": 1, "mtime_nsec": 0, "encoding": "none"}).encode()
raw = b"tracekit-bundle 1\nprofile.json %d\n%s\nprofile %d\n%s\n" % (len(pj), pj, len(inner), inner)
open(out, 'wb').write(gzip.compress(raw, 9))
PY
}

# ---- item 5: inflated size, distinct stacks, several workers ----
# 3 MB of one folded line repeated: a few KB of body, inflated twice
python3 -c 'import sys; sys.stdout.write("main;work;leaf 1\n" * 180000)' >"$TMP/rep.folded"
profile_bundle "$TMP/rep.bundle" "$TMP/rep.folded" 9
# a million distinct stacks (the issue's 122 KB body that took 1.5 GB and 49.5 s)
python3 -c '
import sys
w = sys.stdout.write
for i in range(1000000):
    w("main;run;f%07d 1\n" % i)' >"$TMP/distinct.folded"
profile_bundle "$TMP/distinct.bundle" "$TMP/distinct.folded" 9
# 40 k distinct stacks, each sampled 10 times: legitimate, and slow to decode (400 k lines)
python3 -c '
import sys
w = sys.stdout.write
for r in range(10):
    for i in range(40000):
        w("main;run;work%02d;g%06d 1\n" % (i % 97, i))' >"$TMP/slow.folded"
profile_bundle "$TMP/slow.bundle" "$TMP/slow.folded" 6
G="$TMP/gen"; "$STOREGEN" "$G" 40 2 11 >/dev/null
gzip -c "$G/s0000000/records" >"$TMP/small.gz"

serve --db "sqlite:$TMP/a.db" --max-body 65536
check_eq "a profile gzip'd inside the bundle inflating past 8 x --max-body: 413 ($(stat -c %s "$TMP/rep.bundle") byte body)" \
	413 "$(post "$TMP/rep.bundle")"
check "with the reason" grep -q "inflates past 524288 bytes" "$TMP/body"
stop

serve --db "sqlite:$TMP/b.db" --max-stacks 50000
before=$(hwm_kb $SRV_PID)
check_eq "a million distinct stacks in a $(($(stat -c %s "$TMP/distinct.bundle") / 1000)) KB body: 413" 413 "$(post "$TMP/distinct.bundle")"
check "with the reason naming --max-stacks" grep -q "more than 50000 distinct stacks" "$TMP/body"
after=$(hwm_kb $SRV_PID)
if [ -n "$after" ] && [ $((after - before)) -lt 400000 ]; then ok "the server's peak memory grew by $(((after - before) / 1024)) MB (< 400 MB)"; else notok "peak memory grew by $(((after - before) / 1024)) MB"; fi

# several workers: the slow upload (40 k stacks, under the limit) decodes while a small one is
# received, decoded and committed
SLOW_BYTES=$(stat -c %s "$TMP/slow.bundle")
curl -s -o "$TMP/slow.out" -w '%{http_code}' -H "Authorization: Bearer t0k3n-for-tests" --data-binary "@$TMP/slow.bundle" "$URL" >"$TMP/slow.code" &
SLOW=$!
wait_log "$SLOW_BYTES bytes received, decoding"
check_eq "a small upload while the large one decodes: 200" 200 "$(post "$TMP/small.gz")"
if kill -0 $SLOW 2>/dev/null && ! grep -q "profile(s) stored" "$LOG"; then
	ok "answered before the large upload finished decoding (more than one worker)"
else
	notok "the small upload waited for the large one" "$(grep -E 'decod|stored' "$LOG" | tail -4)"
fi
wait $SLOW
check_eq "and the large one is stored too (200)" 200 "$(cat "$TMP/slow.code")"
check_eq "as one profile" '{"profiles":1,"duplicates":0}' "$(cat "$TMP/slow.out")"
stop

# ---- item 13: group commit ----
# An outside writer holds the database's write lock; meanwhile 8 uploads are decoded and queued.
# When it lets go they commit together, each acknowledged with its own counts.
serve --db "sqlite:$TMP/c.db"
rm -f "$G"/*/uploaded
python3 - "$TMP/c.db" "$TMP/lock.ready" "$TMP/lock.release" <<'PY' &
import os, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
db.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.02)
db.execute("COMMIT")
PY
LOCKER=$!
while ! [ -f "$TMP/lock.ready" ]; do sleep 0.02; done
"$TK" upload --url "$URL" --token-file "$TMP/token" --jobs 8 --pack 1 "$G"/s000000[0-7] 2>"$TMP/up8.log" &
UP=$!
wait_log "waiting for the group commit" 8
touch "$TMP/lock.release"
wait $LOCKER
wait $UP
check_eq "8 concurrent uploads all acknowledged" 8 "$(ls "$G"/s000000[0-7]/uploaded 2>/dev/null | wc -l)"
check_eq "each with its own counts ({\"stored\":2,\"duplicates\":0,…})" 8 \
	"$(grep -l '"stored":2,"duplicates":0' "$G"/s000000[0-7]/uploaded | wc -l)"
# the committer took the first upload(s) and waited for the lock; every other one queued behind it
# (two transactions; one when all 8 were queued before the committer woke: it waits up to a
# millisecond for uploads still being decoded, so that depends on the machine's timing)
check "and committed together: 1 or 2 transactions for the 8 uploads" \
	grep -qxE '[12] 8' <(grep -oE 'commit: [0-9]+ upload' "$LOG" | awk '{ n++; s += $2 } END { print n, s }')
# the rest of the sessions, 8 at a time, and all of them again: stored once, acknowledged as duplicates
"$TK" upload --url "$URL" --token-file "$TMP/token" --jobs 8 --pack 1 "$G" 2>/dev/null
"$TK" upload --url "$URL" --token-file "$TMP/token" --jobs 8 --pack 1 --force "$G" 2>"$TMP/again.log"
check_eq "resent: all 40 acknowledged as duplicates" 40 "$(grep -l '"stored":0,"duplicates":2' "$G"/*/uploaded | wc -l)"
stop
check_eq "every report stored exactly once" 80 "$(sqlite3 "$TMP/c.db" 'SELECT count(*) FROM reports')"
check_eq "and each hang counted once in the signatures summary" \
	"$(sqlite3 "$TMP/c.db" "SELECT count(*) FROM reports WHERE kind IN ('hang','anr') AND duration IS NOT NULL")" \
	"$(sqlite3 "$TMP/c.db" 'SELECT sum(n) FROM hang_sigs')"

# ---- item 6: Slowloris ----
# 260 connections from 127.0.0.2, each sending a header line every second and never a whole
# request, each reopened (once a second) when the server drops it; legitimate uploads from
# 127.0.0.1 meanwhile, then the attack stops.
serve --db "sqlite:$TMP/d.db" --header-timeout 3
rm -f "$G"/*/uploaded
python3 - "$PORT" "$TMP/att.ready" "$TMP/att.stop" "$TMP/att.json" "$TMP/att.deadline" <<'PY' &
import json, os, selectors, socket, sys, time
port, ready, stop, out, deadline = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
give_up = time.monotonic() + 300  # only if the server never closes a trickling connection
sel = selectors.DefaultSelector()
conns = {}
lifetimes = []
def connect():
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"POST /v1/reports HTTP/1.1\r\nHost: x\r\n")
    except OSError:
        s.close(); lifetimes.append(0.0); return
    s.setblocking(False)
    conns[s] = time.monotonic()
    sel.register(s, selectors.EVENT_READ)
def drop(s):
    lifetimes.append(time.monotonic() - conns.pop(s)); sel.unregister(s); s.close()
    if lifetimes[-1] >= 3:  # a connection that got in, closed at the header deadline
        open(deadline, "a").close()
for i in range(260):
    connect()
open(ready, "w").close()
tick = time.monotonic() + 1
while not os.path.exists(stop) and time.monotonic() < give_up:
    for key, _ in sel.select(timeout=max(0, min(0.2, tick - time.monotonic()))):
        try:
            data = key.fileobj.recv(4096)
        except OSError:
            data = b""
        if not data:  # closed by the server
            drop(key.fileobj)
    if time.monotonic() >= tick:
        tick += 1
        for s in list(conns):
            try:
                s.send(b"X-Trickle: %d\r\n" % int(time.monotonic()))
            except OSError:
                drop(s)
        for i in range(260 - len(conns)):
            connect()
json.dump({"attempts": len(lifetimes) + len(conns), "open_at_end": len(conns),
           "closed_at_once": sum(1 for t in lifetimes if t < 1.0),
           "longest": max(lifetimes) if lifetimes else 0}, open(out, "w"))
PY
ATT_PID=$!
while ! [ -f "$TMP/att.ready" ]; do sleep 0.02; done
"$TK" upload --url "$URL" --token-file "$TMP/token" --retries 2 --retry-delay 100 "$G" 2>"$TMP/up.log"
check_eq "during the attack, legitimate uploads go through (exit 0)" 0 $?
check_eq "every session acknowledged" 40 "$(ls "$G"/*/uploaded | wc -l)"
check "the attack was still going on" kill -0 $ATT_PID
# the connections that got in (the per-address limit) are closed at the header deadline
while ! [ -f "$TMP/att.deadline" ] && kill -0 $ATT_PID 2>/dev/null; do sleep 0.1; done
touch "$TMP/att.stop"
wait $ATT_PID; ATT_PID=
check "the attacker's connections past the per-address limit (16) were closed at once, the rest at the header deadline" python3 - "$TMP/att.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["attempts"] >= 260, r
assert r["closed_at_once"] >= 260 - 16, r
assert 3 <= r["longest"] < 60, r
PY
check_eq "the server still answers" 401 "$(curl -s -o /dev/null -w '%{http_code}' --data x "$URL")"
stop
check_eq "their reports are stored" 80 "$(sqlite3 "$TMP/d.db" 'SELECT count(*) FROM reports')"
