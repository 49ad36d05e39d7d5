#!/bin/bash
# `tracekit top-diagnostics --kind K` (issue 16): every event of an ingested input is a report of its
# kind, counted by stack signature on SQLite and on a real clickhouse-server with the same answers.
# --kind hang answers exactly what top-hangs does; --kind cpu is checked against the generator's
# own CPU records (counted here from the Records lines with an independent script).
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
tk_fork_start
start_clickhouse
G="$TMP/gen"
"$STOREGEN" "$G" 12 3 5 --cpu 2 || { notok "storegen"; exit 1; }

# the truth: each session's finished cpu-highload records; storegen's CPU tree is one frame, the
# app image (Atlas) at its load address + an offset, so the signature is "Atlas+0x<offset>"
cat >"$TMP/cpu_truth.py" <<'PY'
import json, os, sys, collections
count, sessions = collections.Counter(), collections.defaultdict(set)
for s in sorted(os.listdir(sys.argv[1])):
    d = os.path.join(sys.argv[1], s)
    if not os.path.isdir(d): continue
    sess = json.load(open(os.path.join(d, 'meta.json')))['session']
    imgs = json.load(open(os.path.join(d, 'images.json')))
    imgs = imgs['images'] if isinstance(imgs, dict) else imgs
    base = [int(i['base'], 16) for i in imgs if i['path'].endswith('/Atlas')][0]
    for line in open(os.path.join(d, 'records')):
        coll, key, value = line.rstrip('\n').split(',', 2)
        if coll == 'cpu-highload-stackframe':
            sig = 'Atlas+0x%x' % (int(json.loads(value)[0]['frame'], 16) - base)
            count[sig] += 1; sessions[sig].add(sess)
for sig, n in sorted(count.items(), key=lambda x: (-x[1], x[0])):
    print('%d\t%d\t%s' % (n, len(sessions[sig]), sig))
PY
python3 "$TMP/cpu_truth.py" "$G" >"$TMP/cpu.truth" || notok "cpu truth script"
check "the truth has CPU records" test -s "$TMP/cpu.truth"

for b in sqlite clickhouse; do
	if [ $b = sqlite ]; then DB="sqlite:$TMP/fleet.db"; else DB="$CH_URL/diag"; fi
	"$TK" ingest -q --db "$DB" "$G"
	"$TK" top-hangs --db "$DB" --limit 100 >"$TMP/$b.hangs"
	"$TK" top-diagnostics --kind hang --db "$DB" --limit 100 | sed '1s/^   count/   hangs/' >"$TMP/$b.diag.hang"
	check_same_file "$b: --kind hang answers what top-hangs does" "$TMP/$b.hangs" "$TMP/$b.diag.hang"
	"$TK" top-diagnostics --kind cpu --db "$DB" --limit 100 --json >"$TMP/$b.cpu.json"
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l); print("%d\t%d\t%s" % (r["count"], r["sessions"], r["signature"]))' "$TMP/$b.cpu.json" >"$TMP/$b.cpu"
	check_same_file "$b: --kind cpu counts each signature's CPU records and sessions" "$TMP/cpu.truth" "$TMP/$b.cpu"
	"$TK" top-diagnostics --kind cpu-highload --db "$DB" --limit 100 --json >"$TMP/$b.cpuhl.json"
	check_same_file "$b: --kind cpu-highload is the same set here" "$TMP/$b.cpu.json" "$TMP/$b.cpuhl.json"
	check_eq "$b: --kind crash: none stored" "" "$("$TK" top-diagnostics --kind crash --db "$DB" --json)"
	check_fails "$b: an unknown kind is refused" "$TK" top-diagnostics --kind nope --db "$DB"
done
check_same_file "SQLite and ClickHouse give the same CPU answer" "$TMP/sqlite.cpu.json" "$TMP/clickhouse.cpu.json"
check_same_file "SQLite and ClickHouse give the same hang answer" "$TMP/sqlite.hangs" "$TMP/clickhouse.hangs"
# the example is a stored CPU report
ex=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["example"])' "$TMP/sqlite.cpu.json")
check_eq "the example names a cpu-highload report" "cpu-highload" \
	"$(sqlite3 "$TMP/fleet.db" "SELECT kind FROM reports WHERE lower(hex(id)) = '$ex'" 2>&1)"
check_fails "--kind is required" "$TK" top-diagnostics --db "sqlite:$TMP/fleet.db"
