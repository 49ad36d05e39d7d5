#!/bin/bash
# tracekit serve --ingest on SQLite acknowledges an upload only once it is durable: its group is
# committed without an fsync (synchronous=NORMAL) so that the next group is stored meanwhile, and
# a syncer thread fdatasyncs the WAL before it answers. Checked from outside with strace: every
# "200 OK" sent follows a completed fdatasync of the store's WAL file made after that upload's
# commit (each upload here waits for the previous one's answer: --jobs 1 --pack 1), no COMMIT in
# the committer fsyncs any more, and the WAL's directory is synced once.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
# (a machine that refuses ptrace, e.g. a container's seccomp profile, cannot take this trace)
if ! strace -qq -o /dev/null true 2>/dev/null; then
	ok "acknowledged uploads are durable # SKIP strace cannot trace a process here"
	exit 0
fi
SRV_PID=
trap 'pkill -9 -P $SRV_PID 2>/dev/null; kill -9 $SRV_PID 2>/dev/null; rm -rf "$TMP"' EXIT
echo "t0k3n-for-tests" >"$TMP/token"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/v1/reports"
G="$TMP/gen"
"$STOREGEN" "$G" 6 2 5 >/dev/null
DB="$TMP/srv.db"
strace -f -qq -y -e trace=fdatasync,fsync,sendmsg,sendto,writev -e signal=none -o "$TMP/trace" \
	"$TK" serve --ingest --db "sqlite:$DB" --listen "127.0.0.1:$PORT" --token-file "$TMP/token" 2>"$TMP/serve.log" &
SRV_PID=$!
while kill -0 $SRV_PID 2>/dev/null; do grep -q "serving on" "$TMP/serve.log" && curl -s "$URL" >/dev/null && break; sleep 0.05; done
check "6 sessions uploaded one at a time" "$TK" upload --url "$URL" --token-file "$TMP/token" --jobs 1 --pack 1 "$G"
check_eq "all acknowledged" 6 "$(ls "$G"/*/uploaded | wc -l)"
# strace blocks fatal signals while it runs a program (-o FILE PROG): stop the server itself
pkill -TERM -P $SRV_PID; wait $SRV_PID 2>/dev/null
check_eq "every report stored" 12 "$(sqlite3 "$DB" 'SELECT count(*) FROM reports')"
# Per thread, a syscall completes on its own line ("... = 0") or on a "<... NAME resumed>" line; a
# send starts on its first line. An answer is durable when a WAL fdatasync completed between the
# previous answer's start and its own (with one upload in flight, that sync follows its commit).
# The main thread's syncs (opening the store with synchronous=FULL, closing it) are not the uploads'.
python3 - "$TMP/trace" "$DB" >"$TMP/order" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
wal = sys.argv[2] + "-wal>"
main = lines[0].split()[0]
synced, answers, bad, sync_threads, dir_syncs = False, 0, 0, set(), 0
for l in lines:
    tid = l.split()[0]
    if tid == main:
        continue
    if ("fdatasync(" in l or "fdatasync resumed" in l) and re.search(r"= 0$", l):
        # a completed fdatasync: its fd is named on the line where it started
        start = l if "fdatasync(" in l else next(x for x in reversed(lines[:lines.index(l)]) if x.startswith(tid + " ") and "fdatasync(" in x)
        if wal in start:
            synced = True
            sync_threads.add(tid)
    elif re.search(r"fsync\(\d+</", l) and not l.split("<")[1].endswith("-wal>"):
        dir_syncs += 1
    elif "HTTP/1.1 200" in l:
        answers += 1
        if not synced:
            bad += 1
        synced = False
print(answers, bad, len(sync_threads), dir_syncs)
EOF
read -r answers unsynced threads dirs <"$TMP/order"
check_eq "6 answers sent" 6 "$answers"
check_eq "each after a completed fdatasync of the WAL" 0 "$unsynced"
check_eq "the WAL synced by one thread (the syncer)" 1 "$threads"
check_eq "its directory synced once" 1 "$dirs"
