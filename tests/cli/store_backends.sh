#!/bin/bash
# Fleet store on both backends (SQLite file, a real clickhouse-server): idempotent ingest, the same
# answers from both, percentiles equal to an exact-rational type 7 oracle over the generator's truth,
# top hangs equal to the generator's own signature counts.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
tk_fork_start
start_clickhouse
G="$TMP/gen"
"$STOREGEN" "$G" 40 6 3 --cpu 1 || { notok "storegen"; exit 1; }

# The oracle: exact type 7 with rational arithmetic, rounded once (what tracekit stats promises), mean
# as the exactly rounded rational mean; numbers printed the way the JSON does (shortest round-trip).
cat >"$TMP/oracle.py" <<'PY'
import sys
from fractions import Fraction as F
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1])]
def fmt(x):
    for p in (15, 16, 17):
        s = '%.*g' % (p, x)
        if float(s) == x or p == 17: return s
def summ(v):
    v = sorted(v); n = len(v)
    def q(num, den):
        if num >= den: return v[-1]
        j, d = divmod((n - 1) * num, den)
        if j + 1 >= n: return v[-1]
        return float(F(v[j]) + F(d, den) * (F(v[j + 1]) - F(v[j])))
    mean = float(sum(F(x) for x in v) / n)
    return '"count": %d, "mean": %s, "min": %s, "p50": %s, "p90": %s, "p95": %s, "p99": %s, "p99.9": %s, "max": %s' % (
        n, fmt(mean), fmt(v[0]), fmt(q(50, 100)), fmt(q(90, 100)), fmt(q(95, 100)), fmt(q(99, 100)), fmt(q(999, 1000)), fmt(v[-1]))
by = {}
for ver, ms, sig in rows: by.setdefault(ver, []).append(float(ms) / 1000)
for ver in sorted(by):
    print('{"version": "%s", "metric": "hang.duration", "unit": "s", %s}' % (ver, summ(by[ver])))
print('{"metric": "hang.duration", "unit": "s", %s}' % summ([float(r[1]) / 1000 for r in rows]))
PY
python3 "$TMP/oracle.py" "$G/truth.tsv" >"$TMP/oracle.json"
# top signatures from the truth: count, signature (most first, ties by signature)
cut -f3 "$G/truth.tsv" | sort | uniq -c | awk '{print $1"\t"$2}' | sort -t$'\t' -k1,1nr -k2,2 | head -5 >"$TMP/truth.top"

# an MTHawkeye session with an ANR record (a hang for hang.duration, as in `tracekit stats`)
M="$TMP/mthawkeye-session"; mkdir -p "$M"
{ echo 'anr,1795300000.5_0,{"duration":610.3181838989258,"startFrom":1795300000.5,"inBackground":false,"stacks":[{"capturedCount":3,"stackframes":"0x10d90461b,0x10d8fe6f5","threadCount":6,"time":1795300000.9,"titleframe":"0x10d90461b"}]}'; } >"$M/records.mtlog"
printf '{"app":"Atlas","version":"5.1","device":"iPhone12,1","os":"iOS 13.1","session":"mth-1"}' >"$M/meta.json"
# `tracekit stats` itself over the same inputs: overall, per version (sessions picked by meta.json), CPU
"$TK" stats --metric hang.duration --json "$G"/s* "$M" >"$TMP/direct.all"
for v in 5.0 5.1 5.2; do
	"$TK" stats --metric hang.duration --json $(grep -l "\"version\":\"$v\"" "$G"/*/meta.json "$M/meta.json" | xargs -n1 dirname) | sed "s/^{/{\"version\": \"$v\", /"
done >"$TMP/direct.byver"
"$TK" stats --metric cpu.average --json "$G"/s* >"$TMP/direct.cpu"

for DB in "sqlite:$TMP/fleet.db" "$CH_URL/tk_test"; do
	b=${DB%%:*}
	"$TK" ingest --db "$DB" "$G" 2>"$TMP/$b.ingest1"
	check "$b: ingest stores every finished record" grep -q "280 reports from 40 inputs: 280 new, 0 already stored" "$TMP/$b.ingest1"
	"$TK" ingest --db "$DB" "$G" "$G/s0000003" 2>"$TMP/$b.ingest2"
	check "$b: ingesting the same inputs again stores nothing" grep -q "287 reports from 41 inputs: 0 new, 287 already stored" "$TMP/$b.ingest2"
	"$TK" stats --db "$DB" --metric hang.duration --by version --json >"$TMP/$b.byver"
	"$TK" stats --db "$DB" --metric hang.duration --json >"$TMP/$b.all"
	cat "$TMP/$b.byver" "$TMP/$b.all" >"$TMP/$b.stats"
	check_same_file "$b: hang.duration by version and overall equal the exact type 7 oracle" "$TMP/oracle.json" "$TMP/$b.stats"
	"$TK" stats --db "$DB" --metric hang.duration --where version=5.2 --json >"$TMP/$b.where"
	check_eq "$b: --where version=5.2 is that group" "$(grep '"5.2"' "$TMP/$b.byver" | sed 's/"version": "5.2", //')" "$(cat "$TMP/$b.where")"
	"$TK" stats --db "$DB" --metric cpu.average --by app.version,device --json >"$TMP/$b.cpu"
	check_eq "$b: cpu.average grouped by app, version, device" "$(grep -c '"app": "Atlas", "version": "5.[012]", "device": "i' "$TMP/$b.cpu")" "$(wc -l <"$TMP/$b.cpu")"
	"$TK" stats --db "$DB" --metric hang.duration --since 1 --json >"$TMP/$b.since"
	check_same_file "$b: --since before every report keeps all" "$TMP/$b.all" "$TMP/$b.since"
	"$TK" stats --db "$DB" --metric hang.duration --since 4000000000 --json >"$TMP/$b.none"
	check_eq "$b: --since after every report gives no group" "" "$(cat "$TMP/$b.none")"
	"$TK" top-hangs --db "$DB" --limit 5 --json >"$TMP/$b.top"
	python3 -c 'import json,sys
for l in open(sys.argv[1]): o=json.loads(l); print("%d\t%s" % (o["count"], o["signature"]))' "$TMP/$b.top" >"$TMP/$b.top.tsv"
	check_same_file "$b: top-hangs counts and signatures equal the generator's" "$TMP/truth.top" "$TMP/$b.top.tsv"
	"$TK" top-hangs --db "$DB" >"$TMP/$b.toptext"
	check "$b: top-hangs text table" grep -q "hangs  sessions" "$TMP/$b.toptext"
	"$TK" ingest -q --db "$DB" "$M"
	"$TK" stats --db "$DB" --metric hang.duration --json >"$TMP/$b.withanr"
	check_same_file "$b: hang.duration (ANR included) equals \`tracekit stats\` on the same inputs" "$TMP/direct.all" "$TMP/$b.withanr"
	"$TK" stats --db "$DB" --metric hang.duration --by version --json >"$TMP/$b.byver.anr"
	check_same_file "$b: by version equals \`tracekit stats\` on each version's sessions" "$TMP/direct.byver" "$TMP/$b.byver.anr"
	"$TK" stats --db "$DB" --metric cpu.average --json >"$TMP/$b.cpuall"
	check_same_file "$b: cpu.average equals \`tracekit stats\`" "$TMP/direct.cpu" "$TMP/$b.cpuall"
done
check_same_file "both backends give identical percentile JSON" "$TMP/sqlite.stats" "$TMP/clickhouse.stats"
check_same_file "both backends give identical cpu.average groups" "$TMP/sqlite.cpu" "$TMP/clickhouse.cpu"
check_same_file "both backends give identical top hangs (P50/P95, sessions, example ids)" "$TMP/sqlite.top" "$TMP/clickhouse.top"
check "SQLite file has schema version 12 and WAL" test "$(sqlite3 "$TMP/fleet.db" 'PRAGMA user_version; PRAGMA journal_mode' | tr '\n' ' ')" = "12 wal "
check_fails "unknown store scheme refused" "$TK" ingest --db "mysql://x/y" "$G"
check_fails "unreachable ClickHouse is an error" "$TK" stats --db "clickhouse://127.0.0.1:1/x" --metric hang.duration
check_fails "unknown metric refused" "$TK" stats --db "sqlite:$TMP/fleet.db" --metric thread.weight:main
check_fails "bad --by refused" "$TK" stats --db "sqlite:$TMP/fleet.db" --by colour

# Scale-out: the same tracekit, only the URL changes. Two shards (databases shard1, shard2 behind the
# test server's cluster tk_two) get their tables from tracekit itself; DB fleet holds `reports` as a
# Distributed table over them, sharded by session. Ingest through it, ask through it.
chq() { curl -s --data-binary "$1" "$CH_HTTP"; }
"$TK" stats --db "$CH_URL/shard1" --metric hang.duration >/dev/null && "$TK" stats --db "$CH_URL/shard2" --metric hang.duration >/dev/null
chq "CREATE DATABASE IF NOT EXISTS fleet"
chq "CREATE TABLE fleet.reports AS shard1.reports ENGINE = Distributed(tk_two, '', reports, cityHash64(session))"
"$TK" ingest --db "$CH_URL/fleet" "$G" 2>"$TMP/dist.ingest"
check "distributed: ingest through the Distributed table" grep -q "280 reports from 40 inputs: 280 new" "$TMP/dist.ingest"
s1=$(chq "SELECT count() FROM shard1.reports"); s2=$(chq "SELECT count() FROM shard2.reports")
if [ "$s1" -gt 0 ] && [ "$s2" -gt 0 ] && [ $((s1 + s2)) -eq 280 ]; then ok "distributed: rows spread over both shards ($s1 + $s2), acknowledged = stored"; else notok "distributed: shard counts" "$s1 + $s2"; fi
"$TK" ingest --db "$CH_URL/fleet" "$G" 2>"$TMP/dist.ingest2"
check "distributed: idempotent across shards" grep -q "0 new, 280 already stored" "$TMP/dist.ingest2"
"$TK" stats --db "$CH_URL/fleet" --metric hang.duration --by version --json >"$TMP/dist.byver"
"$TK" stats --db "$CH_URL/fleet" --metric hang.duration --json >>"$TMP/dist.byver"
check_same_file "distributed: percentiles identical to one node and to SQLite" "$TMP/sqlite.stats" "$TMP/dist.byver"
"$TK" top-hangs --db "$CH_URL/fleet" --limit 5 --json >"$TMP/dist.top"
check_same_file "distributed: top hangs identical" "$TMP/sqlite.top" "$TMP/dist.top"
