#!/bin/bash
# Every stored value of a store written from sessions, column by column, equals what main's build
# stored before the reading of sessions was made faster (issue 20 item 13): generated sessions (hangs
# with trees and snapshots, CPU records, each run's own images file beside the session's),
# an MTHawkeye session (dyld-images, ANR chunks, a tree replaced by .mmap2) and a hang that takes the
# jansson path (an escaped thread name, an "error" thread). Both ways in: `tracekit ingest` of the
# directories and `tracekit upload` → `serve --ingest` (the records as bytes, images.json from the
# bundle). The expected rows are tests/oracle/store_rows.txt, written by main's build at 752be82
# with `STORE_ROWS_WRITE=1 TK=/path/to/that/tracekit bash tests/cli/store_rows.sh`; a change of any
# field of any report (id, keys, times, samples, signature, stacks) fails here.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
SRV_PID=
trap 'kill -9 $SRV_PID 2>/dev/null; rm -rf "$TMP"' EXIT
WANT="$TK_ROOT/tests/oracle/store_rows.txt"
G="$TMP/in"
"$STOREGEN" "$G" 5 4 7 --cpu 1 >/dev/null || { notok "storegen"; exit 1; }
# an MTHawkeye session (the records of tests/cli/records_mthawkeye.sh)
S="$TMP/mth"; mkdir -p "$S" # (upload sends our sessions only: ingested beside both ways)
{ echo "collection,key,value"
  echo 'anr,1565256930.414564_1,{"duration":610.3181838989258,"startFrom":1565256930.414564,"inBackground":false,"stacks":[{"capturedCount":3,"stackframes":"0x10d90461b,0x10d8fe6f5","threadCount":6,"time":1565256930.975193,"titleframe":"0x10d90461b"}]}'
  echo 'anr,1565256930.414564_0,{"duration":610.3181838989258,"startFrom":1565256930.414564,"inBackground":false,"stacks":[{"capturedCount":1,"stackframes":"0x10d8fe55e,0x10d896497,0x108455f9a","threadCount":6,"time":1565256930.870066,"titleframe":"0x108455f9a"}]}'
  echo 'cpu-highload,575204521.78,{"start":"575204521.78","lasting":"10.00","average":"90.00"}'
  echo 'cpu-highload-stackframe,575204521.78,[{"frame":"0x100004000","count":5}]'; } >"$S/records.mtlog"
echo 'cpu-highload-stackframe,575204521.78,[{"frame":"0x100004010","count":7,"children":[{"frame":"0x100008020","count":4}]}]' >"$S/records.mmap2"
cat >"$S/dyld-images" <<'D'
{ "os_version" : "12.1", "arch" : "arm64 v8", "name" : "Demo", "dyld_images" : [
    { "uuid" : "0123456789abcdef0123456789abcdef", "base_addr" : "0x100000000", "name" : "/var/containers/Bundle/Application/X/Demo.app/Demo" },
    { "uuid" : "fedcba9876543210fedcba9876543210", "base_addr" : "0x100008000", "name" : "/var/containers/Bundle/Application/X/Demo.app/Frameworks/Kit.framework/Kit" } ] }
D
echo '{"app":"Demo","version":"1.0","build":"7","device":"iPhone11,2","os":"iOS 12.1","session":"mth-1"}' >"$S/meta.json"
# hangs the fast paths leave to jansson: an escaped thread name, a thread that was not captured,
# a tree with a key of its own; images from the first generated session
J="$G/jansson"; mkdir -p "$J"
cp "$G/s0000000/images.json" "$J/"
{ echo "collection,key,value"
  echo 'launch-time,1795456234.5,1795456234.5'
  echo 'hang,1795456466.007,{"start":1795456466.007,"duration_ms":812,"threshold_ms":250,"tid":1000,"thread":"m\u00e4in","samples":3,"live":false,"threads":[{"tid":1000,"name":"m\u00e4in","frames":["0x128cf3504","0x128ddd50c"]},{"tid":1001,"name":"io","error":"gone"}]}'
  echo 'hang-stackframe,1795456466.007,[{"frame":"0x128ddd50c","count":3,"proportion":1.0,"note":"x","children":[{"frame":"0x128cf3504","count":2}]}]'
  echo 'hang,1795456470.5,{"start":1795456470.5,"duration_ms":300,"threshold_ms":250,"tid":1000,"thread":"main","samples":1,"live":false}'; } >"$J/records"
echo '{"app":"Atlas","version":"5.2","build":"5.2.1","device":"iPad13,4","os":"iOS 17.2","session":"jansson-1"}' >"$J/meta.json"

rows() { # DB: every table a report writes, all columns but the ingest time, in a fixed order
	sqlite3 "$1" "SELECT hex(id), kind, app, version, build, device, os, session, quote(time), quote(duration),
	  quote(avg_cpu), samples, thread, signature, rkey, (SELECT signature FROM hang_sigs h WHERE h.sid = r.sid),
	  hex(stack) FROM reports r ORDER BY id" \
		"SELECT hex(hash), folded FROM stacks ORDER BY hash" \
		"SELECT signature, n FROM hang_sigs ORDER BY signature" \
		"SELECT app, version, build, device, os, session, kind, n, nd, quote(t0), dus, lus FROM sessions_sum ORDER BY 1, 2, 3, 4, 5, 6, 7"
}
"$TK" ingest -q --db "sqlite:$TMP/ingest.db" "$G" "$S" 2>"$TMP/err" || { notok "ingest" "$(cat "$TMP/err")"; exit 1; }
rows "$TMP/ingest.db" >"$TMP/ingest.rows"
if [ -n "${STORE_ROWS_WRITE:-}" ]; then cp "$TMP/ingest.rows" "$WANT"; echo "wrote $WANT"; exit 0; fi
check_eq "ingest: 5 × (4 hangs + 1 CPU record), 2 MTHawkeye records and 2 jansson-path hangs stored" 29 \
	"$(sqlite3 "$TMP/ingest.db" 'SELECT count(*) FROM reports')"
check_same_file "ingest: every stored value equals main's build's" "$WANT" "$TMP/ingest.rows"

echo "t0k3n-for-tests" >"$TMP/token"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/v1/reports"
"$TK" serve --ingest --db "sqlite:$TMP/served.db" --listen "127.0.0.1:$PORT" --token-file "$TMP/token" 2>>"$TMP/serve.log" &
SRV_PID=$!
while kill -0 $SRV_PID 2>/dev/null; do grep -q "serving on" "$TMP/serve.log" 2>/dev/null && curl -s "$URL" >/dev/null && break; sleep 0.05; done
"$TK" upload --url "$URL" --token-file "$TMP/token" "$G" 2>"$TMP/up.err" || notok "upload" "$(tail -3 "$TMP/up.err")"
kill $SRV_PID; wait $SRV_PID 2>/dev/null; SRV_PID=
"$TK" ingest -q --db "sqlite:$TMP/served.db" "$S" 2>"$TMP/err" || notok "ingest of the MTHawkeye session" "$(cat "$TMP/err")"
rows "$TMP/served.db" >"$TMP/served.rows"
check_same_file "upload → serve: every stored value equals main's build's" "$WANT" "$TMP/served.rows"
