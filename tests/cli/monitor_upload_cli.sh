#!/bin/bash
# tracekit monitor --upload sends through the library's outbox: each finished record is uploaded
# as it finishes, while the program still runs (acknowledged one by one, kept in DIR/outbox until
# then), and what is left when the program ends (its last record) is sent at exit. The store then
# holds exactly the reports `tracekit ingest` of the session stores, the outbox is empty and the
# session is marked uploaded. The program (dynamically linked, so the library is preloaded) spins
# one core, then idles (the CPU record finishes), then spins again until it exits.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
SRV_PID= MON=
trap 'kill -9 $SRV_PID $MON 2>/dev/null; rm -rf "$TMP"' EXIT
echo "t0k3n-for-tests" >"$TMP/token"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/v1/reports"
"$TK" serve --ingest --db "sqlite:$TMP/up.db" --listen "127.0.0.1:$PORT" --token-file "$TMP/token" 2>"$TMP/serve.log" &
SRV_PID=$!
for _ in $(seq 200); do grep -q "serving on" "$TMP/serve.log" 2>/dev/null && break; sleep 0.05; done
count() { sqlite3 "$TMP/up.db" "SELECT count(*) FROM reports WHERE kind = 'cpu-highload'" 2>/dev/null || echo 0; }
# spin 2.5 s; idle until told to go on (the file $TMP/go), at most 600 s; spin 2.5 s; exit. The
# threshold is low: on a loaded machine a spinning thread may get a small share of a core. (A C
# program: with python3 as the program, one run under ASan stored its at-exit record with another id
# than `tracekit ingest` of the session gives it; not understood yet, left as an open question.)
cat >"$TMP/prog.c" <<'C'
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static void spin(double s) { volatile unsigned long x = 0; double t = now(); while (now() - t < s) x++; }
int main(int argc, char **argv)
{
	spin(2.5);
	double t = now();
	while (access(argv[1], F_OK) != 0 && now() - t < 600)
		usleep(200000);
	spin(2.5);
	return 0;
}
C
cc -O1 -o "$TMP/prog" "$TMP/prog.c" || { notok "cannot build the test program"; exit 1; }
S="$TMP/s"
"$TK" monitor -q -o "$S" --cpu-interval 100 --cpu-high-interval 100 --cpu-duration 500 --cpu-threshold 2 \
	--upload "$URL" --token-file "$TMP/token" -- "$TMP/prog" "$TMP/go" 2>"$TMP/mon.err" &
MON=$!
# the first record finishes when the load drops: it must reach the store while the program idles
SECONDS=0
while [ $SECONDS -lt 300 ] && [ "$(count)" -lt 1 ]; do sleep 0.1; done
alive=no; kill -0 $MON 2>/dev/null && [ ! -e "$TMP/go" ] && alive=yes
early=$(count)
check_eq "the first record reached the store while the program still ran" "yes yes" "$([ "$early" -ge 1 ] && echo yes) $alive"
touch "$TMP/go"
wait $MON; rc=$?; MON=
check_eq "monitor --upload: exit 0" 0 "$rc"
check "monitor --upload: says the records went as they finished" grep -q "records sent to $URL as they finished" "$TMP/mon.err"
check "more records came with the second spin, at exit" test "$(count)" -gt "$early"
check_eq "the outbox is empty" 0 "$(ls "$S/outbox" | grep -c '\.bundle$')"
check "the session is marked uploaded and kept" test -f "$S/uploaded" -a -f "$S/records"
# the truth: the session directory, ingested locally
"$TK" ingest -q --db "sqlite:$TMP/local.db" "$S"
# every record and the run's foreground time (its final line goes through the outbox too, so the
# hang rate of an uploaded run is the session directory's)
q="SELECT hex(id), kind, duration, avg_cpu, signature, app, version, build, device, os, session FROM reports ORDER BY time, kind"
check_eq "the store holds the records \`tracekit ingest\` of the session stores (all of them)" "$(sqlite3 "$TMP/local.db" "$q")" "$(sqlite3 "$TMP/up.db" "$q")"
check_eq "the run's foreground time was uploaded (one foreground report, as ingest stores it)" \
	"1 $(sqlite3 "$TMP/local.db" "SELECT hex(id) FROM reports WHERE kind = 'foreground'")" \
	"$(sqlite3 "$TMP/up.db" "SELECT count(*), hex(id) FROM reports WHERE kind = 'foreground'" | tr '|' ' ')"
"$TK" stats --db "sqlite:$TMP/local.db" --metric hang.rate --json >"$TMP/rate.local" 2>&1
"$TK" stats --db "sqlite:$TMP/up.db" --metric hang.rate --json >"$TMP/rate.up" 2>&1
check "hang.rate has the run's session (count 1)" grep -q '"count": 1,' "$TMP/rate.local"
check_same_file "stats --db --metric hang.rate after the upload = after ingesting the session directory" "$TMP/rate.local" "$TMP/rate.up"
check_fails "--upload without --token-file: usage error" "$TK" monitor -o "$TMP/x" --upload "$URL" -- true
kill $SRV_PID; wait $SRV_PID 2>/dev/null; SRV_PID=
