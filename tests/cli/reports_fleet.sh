#!/bin/bash
# Apple's reports in the fleet store, on both backends (SQLite, a real clickhouse-server): every report
# is one stored event with its kind, keys and the crashed (or blocked) thread's signature; ingesting
# again stores nothing new; `top-diagnostics --kind crash|hang` give the same answers on both.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
start_clickhouse
PAIR="$TK_ROOT/tests/fixtures/reports/multithread-test_macos13_lldb"
IN="$TMP/in"
mkdir -p "$IN/a" "$IN/b"
# the same crash from 3 devices (3 incidents), once as .crash text; 2 hangs of one stack, 1 of another
for i in 1 2 3; do
	sed "s/5A0D8938-189E-4FD5-8C9F-02BD2C045BAF/5A0D8938-189E-4FD5-8C9F-02BD2C04500$i/" "$PAIR.ips" >"$IN/a/crash$i.ips"
done
cp "$PAIR.crash" "$IN/b/crash4.crash"
spin() { # NAME INCIDENT LEAF-SYMBOL
	cat >"$IN/b/$1.spin" <<EOF
Date/Time:        2026-11-20 10:00:00.000 +0000
OS Version:       iPhone OS 17.2 (Build 21C62)
Architecture:     arm64
Report Version:   35.1
Incident Identifier: $2

Command:          TKApp
PID:              400

Event:            hang
Duration:         2.50s
Steps:            25

Process:          TKApp [400]
Path:             /private/var/containers/Bundle/Application/X/TKApp.app/TKApp
  Thread 0x103    DispatchQueue "com.apple.main-thread"(1)    25 samples (1-25)    priority 47 (base 47)
  25  start + 100 (dyld + 1000) [0x102c50000]
    25  main + 20 (TKApp + 2000) [0x1027f47d0]
      25  $3 + 8 (TKApp + 3000) [0x1027f4bb8]
       *25  ??? [0xfffffff0071a86d4]

  Binary Images:
           0x1027f4000 -        0x1027fffff  TKApp  <BDBDD550-2B15-382C-BB61-1798AFD60460>  /private/var/containers/Bundle/Application/X/TKApp.app/TKApp
           0x102c38000 -        0x102ca3fff  dyld  <58AB16CE-D7E0-32D3-946D-4F68FB1A4A17>  /usr/lib/dyld
EOF
}
spin h1 11111111-0000-0000-0000-000000000001 loadCatalog
spin h2 11111111-0000-0000-0000-000000000002 loadCatalog
spin h3 11111111-0000-0000-0000-000000000003 decodeImage
FILES=("$IN"/a/* "$IN"/b/*)
for db in "sqlite:$TMP/fleet.db" "$CH_URL/reports"; do
	name=${db%%:*}
	check "$name: 7 reports ingested" bash -c "'$TK' ingest --db '$db' ${FILES[*]} 2>&1 | grep -q '7 reports from 7 inputs: 7 new, 0 already stored'"
	check "$name: ingesting again stores nothing new" bash -c "'$TK' ingest --db '$db' ${FILES[*]} 2>&1 | grep -q '7 new\\|0 new, 7 already stored' && '$TK' ingest --db '$db' ${FILES[*]} 2>&1 | grep -q '0 new, 7 already stored'"
	"$TK" top-diagnostics --kind crash --db "$db" --json >"$TMP/$name.crash.json"
	"$TK" top-diagnostics --kind hang --db "$db" --json >"$TMP/$name.hang.json"
	check_eq "$name: top crash = the crashed thread's app frames, 4 reports (3 .ips and the .crash)" \
		"4 bar(int);foo(int);compute_pow(int&)" \
		"$(python3 -c 'import json,sys; o=json.loads(open(sys.argv[1]).readline()); print(o["count"], ";".join(o["signature"].split(";")[:3]))' "$TMP/$name.crash.json")"
	check_eq "$name: top hangs = the blocked main thread's app frames, counted, with their durations" \
		"2 loadCatalog;main 2.5|1 decodeImage;main 2.5" \
		"$(python3 -c 'import json,sys; print("|".join("%d %s %s" % (o["count"], o["signature"], o["p50"]) for o in map(json.loads, open(sys.argv[1]))))' "$TMP/$name.hang.json")"
done
check_same_file "top-diagnostics --kind crash: both backends answer the same" "$TMP/sqlite.crash.json" "$TMP/clickhouse.crash.json"
check_same_file "top-diagnostics --kind hang: both backends answer the same" "$TMP/sqlite.hang.json" "$TMP/clickhouse.hang.json"
