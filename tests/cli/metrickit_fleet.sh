#!/bin/bash
# MetricKit in the fleet store (issue 17, "Fleet"): real payloads (tests/fixtures/metrickit) and a
# generated fleet (tests/cli/mxfleet.py: metric payloads with foreground time and hang-time
# histograms, hang diagnostics) next to monitor sessions (storegen --foreground) go in through
# `tracekit ingest`, `tracekit serve --ingest` (raw payload bodies, as the app POSTs them: one, a JSON
# array, JSON Lines, gzip'd) and `tracekit upload`, idempotently, leaving the same store; Apple's hang
# rate (`stats --db --metric hang.rate --by version`) equals the hand computation of mxfleet.py (its
# own bucket arithmetic over the payloads and the generator's exact hangs) on SQLite and on a real
# clickhouse-server, with the same answers from both; top-hangs counts a MetricKit hang diagnostic
# with the monitor's hangs of the same site.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
start_clickhouse
SRV_PID=
trap 'kill -9 $SRV_PID 2>/dev/null; stop_clickhouse; rm -rf "$TMP"' EXIT
tk_fork_start
MXF="$TK_ROOT/tests/cli/mxfleet.py"
G="$TMP/gen" MX="$TMP/mx" R="$TK_ROOT/tests/fixtures/metrickit"
"$STOREGEN" "$G" 16 5 4 --foreground || { notok "storegen"; exit 1; }
mkdir -p "$MX/one" "$MX/diag" && python3 "$MXF" gen "$MX" 24 3 || { notok "mxfleet gen"; exit 1; }
# the 24 metric payloads as servers keep them: 16 in JSON Lines, 4 in a JSON array, 4 one per file
python3 - "$MX" <<'PY' || notok "splitting the payloads"
import json, sys
d = sys.argv[1]
lines = open(d + "/metrics.jsonl").read().splitlines()
open(d + "/lines.jsonl", "w").write("\n".join(lines[:16]) + "\n")
json.dump([json.loads(l) for l in lines[16:20]], open(d + "/array.json", "w"), indent=1)
for i, l in enumerate(lines[20:]):
    open("%s/one/m%d.json" % (d, i), "w").write(l)
PY
mv "$MX"/diag-*.json "$MX/diag/"
gzip -c "$MX/one/m0.json" >"$MX/m0.json.gz" && rm "$MX/one/m0.json"
# a hang diagnostic on the site of the first monitor hang of session 0: its frames' image offsets,
# the leaf as the sampled PC, callers as return addresses (the monitor stores those minus 1)
python3 - "$G/s0000000" >"$MX/site.json" <<'PY' || notok "site payload"
import json, sys
d = sys.argv[1]
base = [int(i["base"], 16) for i in json.load(open(d + "/images.json"))["images"] if i["path"].endswith("/Atlas")][0]
for line in open(d + "/records"):
    coll, key, value = line.rstrip("\n").split(",", 2)
    if coll == "hang":
        frames = [int(a, 16) for a in json.loads(value)["threads"][0]["frames"]]
        break
app = [a - base for a in frames if base <= a < base + 0x400000]
def tree(i):
    off = app[i] + (0 if i == 0 else 1)
    f = {"binaryUUID": "1B7E1D4A-5C2B-3F44-9A6E-2D5C7B8E9F02", "binaryName": "Atlas", "sampleCount": 12,
         "offsetIntoBinaryTextSegment": off, "address": 0x104000000 + off}
    return dict(f, subFrames=[tree(i - 1)]) if i else f
root = {"binaryUUID": "5E5E5E5E-0000-4000-8000-000000000001", "binaryName": "libsystem_kernel.dylib", "sampleCount": 12,
        "offsetIntoBinaryTextSegment": 0x1234, "address": 0x1a0001234, "subFrames": [tree(len(app) - 1)]}
print(json.dumps({"timeStampBegin": "2026-11-20 00:00:00 +0000", "timeStampEnd": "2026-11-20 23:59:00 +0000",
      "hangDiagnostics": [{"version": "1.0.0", "diagnosticMetaData": {"appVersion": "5.1", "appBuildVersion": "101",
      "osVersion": "iPhone OS 17.4 (21E219)", "deviceType": "iPhone15,2", "platformArchitecture": "arm64e",
      "bundleIdentifier": "com.example.atlas", "pid": 77, "hangDuration": "1,500 ms"},
      "callStackTree": {"callStackPerThread": True, "callStacks": [{"threadAttributed": True,
      "callStackRootFrames": [root]}]}}]}))
PY
REAL=("$R/meter_real_report.json" "$R/meter_ios_uncaugh_exception_payload.json" "$R/meter_xcode_simulated.json"
	"$R/generated_metric_payload.json")
MXIN=("$MX/lines.jsonl" "$MX/array.json" "$MX/one" "$MX/m0.json.gz" "$MX/diag" "$MX/site.json" "${REAL[@]}")

# the hand computation
python3 "$MXF" rate --fg "$G/foreground.tsv" "$MX/metrics.jsonl" "$R/generated_metric_payload.json" >"$TMP/oracle.json" ||
	notok "the oracle"
sig=$(python3 -c 'import sys; print(open(sys.argv[1]).readline().split("\t")[2].strip())' "$G/truth.tsv")
nsig=$(cut -f3 "$G/truth.tsv" | grep -cxF "$sig")

# the store's answers against the oracle: count, pooled rate, P50/P90, min, max, estimated
cmp_oracle() { # STATS.json
	python3 - "$TMP/oracle.json" "$1" <<'PY'
import json, sys
want = [json.loads(l) for l in open(sys.argv[1])]
got = [json.loads(l) for l in open(sys.argv[2])]
if len(want) != len(got): sys.exit("groups: want %d got %d" % (len(want), len(got)))
for w, g in zip(want, got):
    if w.get("version") != g.get("version") or g["unit"] != "s/h": sys.exit("group %r vs %r" % (w, g))
    for k, gk in (("count", "count"), ("estimated", "estimated")):
        if w[k] != g[gk]: sys.exit("%s %s: want %s got %s" % (w.get("version"), k, w[k], g[gk]))
    for k, gk in (("pooled", "mean"), ("p50", "p50"), ("p90", "p90"), ("min", "min"), ("max", "max")):
        if abs(w[k] - g[gk]) > 1e-12 * max(1.0, abs(w[k])):
            sys.exit("%s %s: want %r got %r" % (w.get("version"), k, w[k], g[gk]))
PY
}
rate() { # DB OUT
	"$TK" stats --db "$1" --metric hang.rate --by version --json >"$2" && "$TK" stats --db "$1" --metric hang.rate --json >>"$2"
}

for DB in "sqlite:$TMP/a.db" "$CH_URL/mxfleet"; do
	b=${DB%%:*}
	"$TK" ingest --db "$DB" "$G" "${MXIN[@]}" 2>"$TMP/$b.in1"
	n=$(sed -n 's/.*: \([0-9]*\) reports from.*/\1/p' "$TMP/$b.in1")
	check "$b: ingest of sessions and payloads stores them" grep -q ": $n new, 0 already stored" "$TMP/$b.in1"
	"$TK" ingest --db "$DB" "$G" "${MXIN[@]}" 2>"$TMP/$b.in2"
	check "$b: ingesting them again stores nothing" grep -q "$n reports from .*: 0 new, $n already stored" "$TMP/$b.in2"
	rate "$DB" "$TMP/$b.rate"
	check "$b: hang.rate by version = the hand computation" cmp_oracle "$TMP/$b.rate"
	"$TK" stats --db "$DB" --metric hang.rate --by day,version --json >"$TMP/$b.rateday"
	# each session falls in one day (its first report's): the days' sessions add up to the version's
	check "$b: hang.rate by day,version counts every session once" python3 -c 'import json,sys
days, vers = {}, {}
for l in open(sys.argv[1]):
    r = json.loads(l); days[r["version"]] = days.get(r["version"], 0) + r["count"]
for l in open(sys.argv[2]):
    r = json.loads(l)
    if "version" in r: vers[r["version"]] = r["count"]
sys.exit(days != vers or not vers)' "$TMP/$b.rateday" "$TMP/$b.rate"
	"$TK" top-hangs --db "$DB" --limit 100 --json >"$TMP/$b.top"
	got=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["signature"] == sys.argv[2]: print(r["count"])' "$TMP/$b.top" "$sig")
	check_eq "$b: top-hangs counts the MetricKit hang with the monitor's hangs of its site ($sig)" "$((nsig + 1))" "$got"
	"$TK" top-diagnostics --kind hang --db "$DB" --limit 100 --json >"$TMP/$b.diag"
	check_same_file "$b: top-diagnostics --kind hang answers the same" "$TMP/$b.top" "$TMP/$b.diag"
done
check_same_file "SQLite and ClickHouse: the same hang rate" "$TMP/sqlite.rate" "$TMP/clickhouse.rate"
check_same_file "SQLite and ClickHouse: the same hang rate by day" "$TMP/sqlite.rateday" "$TMP/clickhouse.rateday"
check_same_file "SQLite and ClickHouse: the same top hangs" "$TMP/sqlite.top" "$TMP/clickhouse.top"
"$TK" stats --db "sqlite:$TMP/a.db" --metric hang.rate --by version >"$TMP/rate.txt"
check "the table says which sessions' hang time is estimated from histograms" grep -q "estimated: .* from histograms" "$TMP/rate.txt"

# serve --ingest: payloads POSTed as the app sends them (raw JSON, one per request or many, gzip'd),
# `tracekit upload` of a directory of payload files and of the sessions; then everything again:
# only duplicates
echo "t0k3n-for-tests" >"$TMP/token"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/v1/reports"
"$TK" serve --ingest --db "sqlite:$TMP/b.db" --listen "127.0.0.1:$PORT" --token-file "$TMP/token" 2>>"$TMP/serve.log" &
SRV_PID=$!
while kill -0 $SRV_PID 2>/dev/null; do grep -q "serving on" "$TMP/serve.log" 2>/dev/null && curl -s "$URL" >/dev/null && break; sleep 0.05; done
post() { curl -s -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer t0k3n-for-tests" --data-binary "@$1" "$URL"; }
send_all() {
	local bad=0 f
	for f in "$MX"/diag/*.json "$MX/site.json" "$MX/array.json" "$MX/lines.jsonl" "$MX/m0.json.gz" "${REAL[@]}"; do
		[ "$(post "$f")" = 200 ] || { bad=1; echo "$f: $(cat "$TMP/body")"; }
	done
	"$TK" upload --url "$URL" --token-file "$TMP/token" --retries 3 --retry-delay 100 "$MX/one" "$G" || bad=1
	return $bad
}
check "serve: every payload POSTed and uploaded is accepted" send_all
check_eq "serve: the store holds what ingest stored" "$(sqlite3 "$TMP/a.db" 'SELECT count(*) FROM reports')" \
	"$(sqlite3 "$TMP/b.db" 'SELECT count(*) FROM reports')"
check_eq "serve: the same report ids" "$(sqlite3 "$TMP/a.db" 'SELECT hex(id) FROM reports ORDER BY id' | md5sum)" \
	"$(sqlite3 "$TMP/b.db" 'SELECT hex(id) FROM reports ORDER BY id' | md5sum)"
check "serve: resending everything is accepted" send_all
check_eq "serve: resending stores nothing" "$(sqlite3 "$TMP/a.db" 'SELECT count(*) FROM reports')" \
	"$(sqlite3 "$TMP/b.db" 'SELECT count(*) FROM reports')"
post "$MX/site.json" >/dev/null
check "serve: a payload sent again is all duplicates" grep -q '"stored":0,"duplicates":1' "$TMP/body"
rate "sqlite:$TMP/b.db" "$TMP/b.rate"
check_same_file "serve: the same hang rate as ingest" "$TMP/sqlite.rate" "$TMP/b.rate"
printf '{"hangDiagnostics":[{"diagnosticMetaData":{"hangDuration":"soon"},"callStackTree":{"callStacks":[]}}]}' >"$TMP/bad.json"
check_eq "serve: a bad payload is refused with 400" 400 "$(post "$TMP/bad.json")"
check "serve: the reason names the field" grep -q "hangDuration" "$TMP/body"
