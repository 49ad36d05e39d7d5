#!/bin/bash
# Apple's reports into the fleet store, named from dSYMs on the way (issue 18): `tracekit ingest --db
# URL --symbols DIR TREE` over a tree mixing .ips, .crash and spindump reports with a MetricKit
# payload and Records sessions stores every event once (an incident once, whichever form it came in),
# and each report's signature is the crashed or blocked thread's first app frames named exactly as
# `tracekit symbolicate` names them — whose every frame tests/cli/reports_oracle.py checks against
# llvm-symbolizer and `tracekit atos` here too. `serve --ingest --symbols` fed by `tracekit upload`
# stores the same rows. And a batch of `tracekit symbolicate` writing NAME.ips and NAME.crash into one
# directory keeps both outputs (the .ips's text used to overwrite the .crash's).
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
SRV_PID=
trap 'kill -9 $SRV_PID 2>/dev/null; rm -rf "$TMP"' EXIT
tk_fork_start
GEN="$TK_ROOT/tests/symgen/tksymgen.py"
MK="$TK_ROOT/tests/symgen/mkreports.py"
ORACLE="$TK_ROOT/tests/cli/reports_oracle.py"
export TRACEKIT_CACHE_DIR="$TMP/cache"

python3 "$GEN" build --out "$TMP/a64" --n 60 --files 2 --seed 31 --arch arm64 --swift-names >"$TMP/g.log" 2>&1 ||
	{ notok "generate dSYMs" "$(tail -5 "$TMP/g.log")"; exit 0; }
# 3 incidents, each as .ips, as its .crash text and as a spindump hang of the same app
python3 "$MK" --image "$TMP/a64/layout.tsv:libtks-arm64.dylib:0x104a8c000" --out "$TMP/r" --count 3 --seed 5 \
	--formats ips,crash,spin
IN="$TMP/in"
mkdir -p "$IN/reports/deep" "$IN/mx"
cp "$TMP/r"/r000.* "$TMP/r"/r001.* "$IN/reports/" && cp "$TMP/r"/r002.* "$IN/reports/deep/"
gzip "$IN/reports/deep/r002.spin"
cp "$FIX/metrickit/meter_xcode_simulated.json" "$IN/mx/payload-1"
"$STOREGEN" "$IN/sessions" 2 3 5 >/dev/null || { notok "storegen"; exit 1; }
mv "$IN/sessions/truth.tsv" "$TMP/sessions.truth" # (a file that is no input would be skipped anyway)

# ---- the truth, from the symbolicated text (checked against llvm-symbolizer first)
"$TK" symbolicate "$TMP/r" --symbols "$TMP/a64" -o "$TMP/sym" 2>"$TMP/sym.err"
check "symbolicate: every frame as llvm-symbolizer and tracekit atos name it (.ips text)" \
	python3 "$ORACLE" --tk "$TK" --truth "$TMP/r/truth.tsv" --out "$TMP/sym" --ext crash
check "symbolicate: every frame as llvm-symbolizer and tracekit atos name it (spindump)" \
	python3 "$ORACLE" --tk "$TK" --truth "$TMP/r/truth.tsv" --out "$TMP/sym" --ext spin
# The signature of a report, by the store's documented rule (docs/store.md): the first 5 frames of
# the crashed thread (crash reports) or of the main thread's heaviest stack (spindump), leaf first,
# inlined functions as frames of their own, frames of system images (/usr/lib/, /System/ …) skipped.
cat >"$TMP/sig.py" <<'PY'
import re, sys
SYSTEM = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/System/", "/usr/libexec/", "/Developer/")
IMG = re.compile(r"^\s*0x[0-9a-f]+ -\s+0x[0-9a-f]+\s+(\S+)\s.*?(/\S.*)$")
def system_images(lines):
    out, on = set(), False
    for l in lines:
        if l.strip().startswith("Binary Images:"): on = True; continue
        m = IMG.match(l) if on else None
        if m and m.group(2).startswith(SYSTEM): out.add(m.group(1))
    return out
def crash(lines):
    sysimg, names, on = system_images(lines), [], False
    for l in lines:
        if re.match(r"^Thread \d+ Crashed:", l): on = True; continue
        if on and not l.strip(): break
        m = re.match(r"^\d+\s+(\S+)\s+\t0x[0-9a-f]+ (.*)$", l) if on else None
        if not m or m.group(1) in sysimg: continue
        assert " (in " in m.group(2), "an app frame left unnamed: " + l
        names.append(m.group(2).split(" (in ")[0])
    return names
def spin(lines):
    sysimg, rows, on = system_images(lines), [], False
    for l in lines:
        if "Thread 0x" in l: on = 'com.apple.main-thread' in l; continue
        m = re.match(r"^(\s*)\*?(\d+)  (.*) \((\S+) \+ \d+\) \[0x[0-9a-f]+\]$", l) if on else None
        if m: rows.append((len(m.group(1)), int(m.group(2)), m.group(3), m.group(4)))
    # one chain in these reports: each frame one level deeper, all samples in it
    assert all(b[0] == a[0] + 2 and b[1] == a[1] for a, b in zip(rows, rows[1:])), "not one chain"
    names = []
    for depth, n, text, img in reversed(rows):
        if img in sysimg or text == "???": continue
        names += [p.split(" (in ")[0] for p in text.split(" <- ")]
    return names
path = sys.argv[1]
lines = open(path).read().split("\n")
names = spin(lines) if path.endswith(".spin") else crash(lines)
inc = [l.split(":", 1)[1].strip() for l in lines if l.startswith("Incident Identifier:")][0]
print("%s\t%s\t%s" % ("hang" if path.endswith(".spin") else "crash", inc, ";".join(names[:5])))
PY
for f in "$TMP/sym"/r00?.crash "$TMP/sym"/r00?.spin; do python3 "$TMP/sig.py" "$f"; done | sort >"$TMP/want.sig" ||
	notok "signature script"
check_eq "the truth: 3 crashes and 3 hangs, each signed by app frames" 6 "$(grep -c $'\t[^\t]*[a-zA-Z_]' "$TMP/want.sig")"

# ---- ingest the mixed tree
N_SESS=$(wc -l <"$TMP/sessions.truth")
N_MX=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(len(d.get(k, [])) for k in ("crashDiagnostics","hangDiagnostics","cpuExceptionDiagnostics","diskWriteExceptionDiagnostics")))' "$IN/mx/payload-1")
DB="sqlite:$TMP/fleet.db"
"$TK" ingest --db "$DB" --symbols "$TMP/a64" "$IN" 2>"$TMP/ingest.err"
check_eq "ingest: every input of the tree found (9 reports, 1 payload, 2 sessions), every event stored, each incident once" \
	"tracekit: $((9 + N_MX + N_SESS)) reports from 12 inputs: $((6 + N_MX + N_SESS)) new, 3 already stored ($DB)" \
	"$(cat "$TMP/ingest.err")"
q() { sqlite3 -separator $'\t' "$TMP/fleet.db" "$@"; }
check_eq "by kind: the reports' crashes and hangs, the payload's diagnostics, the sessions' hangs" \
	"cpu-exception 1|crash 4|disk-write 1|hang $((3 + 1 + N_SESS))" \
	"$(q "SELECT kind || ' ' || count(*) FROM reports GROUP BY kind ORDER BY kind" | paste -sd'|')"
q "SELECT kind, rkey, signature FROM reports WHERE app = 'TKApp' ORDER BY kind, rkey" | sort >"$TMP/got.sig"
check_same_file "signatures are the symbolicated names (llvm-symbolizer's), not addresses" "$TMP/want.sig" "$TMP/got.sig"
"$TK" ingest --db "$DB" --symbols "$TMP/a64" "$IN" 2>"$TMP/again.err"
check "ingesting again stores nothing new" grep -q ": 0 new, $((9 + N_MX + N_SESS)) already stored" "$TMP/again.err"
"$TK" top-diagnostics --kind crash --db "$DB" --json >"$TMP/top.json"
check_eq "top-diagnostics --kind crash counts the named signatures" \
	"$(awk -F'\t' '$1 == "crash" {print 1, $3}' "$TMP/want.sig" | sort)" \
	"$(python3 -c 'import json,sys; [print(o["count"], o["signature"]) for o in map(json.loads, open(sys.argv[1])) if "u" in o["signature"]]' "$TMP/top.json" | sort)"
"$TK" ingest -q --db "sqlite:$TMP/plain.db" "$IN/reports" 2>/dev/null
check "without --symbols the same reports are signed by image offsets" \
	bash -c "sqlite3 '$TMP/plain.db' \"SELECT signature FROM reports WHERE kind = 'crash'\" | grep -q '^libtks-arm64.dylib+0x'"

# ---- the same through upload → serve --ingest --symbols
echo "t0k3n-for-tests" >"$TMP/token"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/v1/reports"
"$TK" serve --ingest --db "sqlite:$TMP/served.db" --listen "127.0.0.1:$PORT" --token-file "$TMP/token" \
	--symbols "$TMP/a64" 2>>"$TMP/serve.log" &
SRV_PID=$!
while kill -0 $SRV_PID 2>/dev/null; do grep -q "serving on" "$TMP/serve.log" && break; sleep 0.05; done
"$TK" upload --url "$URL" --token-file "$TMP/token" --retries 3 --retry-delay 100 --jobs 1 "$IN" 2>"$TMP/up.err" # in order: an incident is kept as it came first
check "upload: the tree's reports and payload sent as profiles, the sessions as sessions" \
	grep -q "2 sessions uploaded, 0 already uploaded, 10 profiles uploaded, 0 rejected, 0 not delivered" "$TMP/up.err"
"$TK" upload --url "$URL" --token-file "$TMP/token" --retries 3 --retry-delay 100 "$IN/reports" 2>/dev/null
row() { sqlite3 -separator $'\t' "$1" "SELECT hex(id), kind, app, version, build, device, os, session, time, duration, samples, thread, signature, rkey FROM reports ORDER BY id"; }
check_same_file "serve --ingest --symbols stores what ingest --symbols stores (resending: nothing new)" \
	<(row "$TMP/fleet.db") <(row "$TMP/served.db")
kill $SRV_PID && wait $SRV_PID 2>/dev/null
SRV_PID=

# ---- symbolicate: NAME.ips and NAME.crash of one batch in one directory (failed before: 6 outputs for 9)
"$TK" symbolicate "$TMP/r" --symbols "$TMP/a64" -o "$TMP/batch" 2>"$TMP/batch.err"
check_eq "batch: one output per report, none overwritten" 9 "$(ls "$TMP/batch" | wc -l)"
"$TK" symbolicate "$TMP/r/r001.ips" --symbols "$TMP/a64" -o "$TMP/one.crash" 2>/dev/null
check_same_file "batch: the .ips's text beside it, as NAME.ips.crash" "$TMP/one.crash" "$TMP/batch/r001.ips.crash"
check "batch: stderr says where a renamed output went" grep -q "r001.ips: written to .*/batch/r001.ips.crash" "$TMP/batch.err"
mkdir -p "$TMP/two/a" "$TMP/two/b" && cp "$TMP/r/r000.spin" "$TMP/two/a/x.spin" && cp "$TMP/r/r001.spin" "$TMP/two/b/x.spin"
"$TK" symbolicate "$TMP/two" --symbols "$TMP/a64" -o "$TMP/batch2" 2>/dev/null
check_eq "batch: the same name in two directories gives x.spin and x-2.spin" "x-2.spin x.spin" "$(ls "$TMP/batch2" | paste -sd' ')"
