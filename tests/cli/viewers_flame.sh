#!/bin/bash
# The SVG flame graph as a person sees it in headless Chromium (tests/js/flame_layout.mjs: the
# browser's own layout), against truth computed from the xctrace XML (viewers_oracle.py's rows):
#   groups drawn to one scale: each thread's root as wide as its weight next to the heaviest's
#   the hover line ends before "Matched:" (it is cut, the tooltip keeps the whole text)
#   "1 sample", not "1 samples"; every hover percentage says its base ("of thread")
#   "Matched" says its base: of all threads, and of the zoomed frame while one is zoomed (rescaled)
. "$TK_ROOT/tests/lib.sh"
NODE="$TK_ROOT/tests/js/node_modules/.bin/node"
if [ ! -x "$NODE" ]; then notok "node is installed (make test runs npm ci in tests/js)"; exit 0; fi
MT="$FIX/xctrace/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml"
"$TK" flame "$MT" -o "$TMP/mt.svg"

check_eq "titles: \"1 sample\" for one, \"N samples\" otherwise; each percentage says it is of its thread" ok \
	"$(python3 - "$TMP/mt.svg" <<'PY'
import re, sys, xml.etree.ElementTree as E
S = "{http://www.w3.org/2000/svg}"
bad = []
for t in E.parse(sys.argv[1]).iter(S + "title"):
    last = t.text.split("\n")[-1] if t.text else ""
    m = re.search(r"\(\d+\.\d\d% of thread\), self .*, (\d+) (samples?)$", last)
    if not m or (m.group(2) == "sample") != (m.group(1) == "1"):
        bad.append(last)
print("ok" if not bad else bad[:3])
PY
)"

if ! "$NODE" "$TK_ROOT/tests/js/flame_layout.mjs" "$TMP/mt.svg" '^init_globals\(\)$' JNI_CreateJavaVM "$TMP/mt.png" \
	>"$TMP/l.json" 2>"$TMP/l.err"; then
	notok "chromium: flame_layout.mjs ran" "$(head -c 600 "$TMP/l.err")"
	exit 0
fi
# Truth from the XML: per-thread totals, and the weight of rows under JNI_CreateJavaVM and under both.
python3 - "$MT" >"$TMP/truth.json" <<PY
import json, sys
sys.path.insert(0, "$TK_ROOT/tests/cli")
import viewers_oracle as o
tot, a, ab = {}, 0, 0
for tid, w, names in o.rows(sys.argv[1]):
    tot[tid] = tot.get(tid, 0) + w
    if "JNI_CreateJavaVM" in names:
        a += w
        ab += w if "init_globals()" in names else 0
json.dump({"totals": sorted(tot.values(), reverse=True), "all": sum(tot.values()), "jni": a, "both": ab,
           "init": sum(w for _, w, n in o.rows(sys.argv[1]) if "init_globals()" in n)}, sys.stdout)
PY
if ! python3 -c 'import json,sys; json.load(open(sys.argv[1])); json.load(open(sys.argv[2]))' "$TMP/l.json" "$TMP/truth.json"; then
	notok "chromium and the XML oracle gave their JSON" "$(head -c 300 "$TMP/l.json") $(head -c 300 "$TMP/truth.json")"
	exit 0
fi
py() { python3 -c "import json,sys; d=json.load(open('$TMP/l.json')); t=json.load(open('$TMP/truth.json')); $1"; }

check_eq "groups to one scale: each thread's root as wide as its XML total next to the heaviest's (1180 px)" ok \
	"$(py 'b=[(s["rootWidth"], 1180*w/t["totals"][0]) for s, w in zip(d["sections"], t["totals"]) if abs(s["rootWidth"] - 1180*w/t["totals"][0]) > 0.05]
print("ok" if not b and len(d["sections"]) == len(t["totals"]) == 10 else b)')"
check_eq "the hover line of the longest title is cut before \"Matched:\" and inside the graph" ok \
	"$(py 'h=d["hover"]; print("ok" if h["detailsRight"] <= h["matchedLeft"] and h["matchedRight"] <= d["width"] - 10 and h["details"].endswith("..") else h)')"
check_eq "Matched: the share of all threads (init_globals() of the XML total)" \
	"$(py 'print("Matched: %.2f%% of all threads" % (100 * t["init"] / t["all"]))')" "$(py 'print(d["matched"]["text"])')"
check_eq "zoomed into JNI_CreateJavaVM: Matched is rescaled to it, and says so" \
	"$(py 'print("Matched: %.2f%% of JNI_CreateJavaVM" % (100 * t["both"] / t["jni"]))')" "$(py 'print(d["zoomed"]["text"])')"
check_eq "the zoomed frame fills the graph (1180 px)" 1180.00 "$(py 'print("%.2f" % d["zoomWidth"])')"
check_eq "Reset Zoom: Matched is of all threads again" "$(py 'print(d["matched"]["text"])')" "$(py 'print(d["unzoomed"]["text"])')"
check_eq "no page errors" "[]" "$(py 'print(d["errors"])')"
