#!/bin/bash
# Viewer outputs checked by the viewers' own code and independent truth from the XML:
#   speedscope  npm speedscope's shipped schema (ajv) + per-profile sums = thread totals
#   svg         well-formed XML (python), headless Chromium: search, matched %, zoom, screenshot
# Escaping: a frame named with < & " goes through every format.
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
X="$FIX/xctrace"
O="python3 $TK_ROOT/tests/cli/viewers_oracle.py"
export VIEWERS_ORACLE_CACHE="$TMP/oracle" # each XML's thread totals parsed once, not per check
NODE="$TK_ROOT/tests/js/node_modules/.bin/node"
JS="$TK_ROOT/tests/js"
MT="$X/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml"

# A copy of MT whose JavaMain frame is named Java<Main&"x (escaped in the XML, raw in the model).
sed 's/name="JavaMain"/name="Java\&lt;Main\&amp;\&quot;x"/' "$MT" >"$TMP/esc.xml"
check "escape fixture has the renamed frame" grep -q 'Java&lt;Main&amp;&quot;x' "$TMP/esc.xml"

inputs=()
for f in "$X"/*.xml "$TMP/esc.xml"; do
	n=$(basename "$f" .xml)
	case $n in toc_* | *intervals* | *hang* | *hitches* | virtual-memory*) continue ;; esac
	inputs+=("$f")
done

# speedscope
ss=()
for f in "${inputs[@]}"; do
	n=$(basename "$f" .xml)
	"$TK" convert "$f" -o "$TMP/$n.speedscope.json" || notok "speedscope: convert $n"
	ss+=("$TMP/$n.speedscope.json")
done
"$NODE" "$JS/speedscope_check.mjs" "${ss[@]}" >"$TMP/ss.jsonl"
i=0
for f in "${inputs[@]}"; do
	n=$(basename "$f" .xml)
	sed -n "$((i + 1))p" "$TMP/ss.jsonl" >"$TMP/ss1.json"
	case $n in
	time-sample*) check "speedscope valid: $n" python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["valid"] else 1)' "$TMP/ss1.json" ;;
	*) check "speedscope schema + sums = XML thread totals: $n" $O speedscope "$TMP/ss1.json" "$f" ;;
	esac
	i=$((i + 1))
done
check_eq "speedscope: unit nanoseconds for a time profile" nanoseconds \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["profiles"][0]["unit"])' "$TMP/$(basename "$MT" .xml).speedscope.json")"
cyc=$(ls "$X"/cpu-profile_*.xml | head -1)
check_eq "speedscope: unit none for cycles" none \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["profiles"][0]["unit"])' "$TMP/$(basename "$cyc" .xml).speedscope.json")"
check_eq "speedscope: the escaped name survives" 'Java<Main&"x' \
	"$(python3 -c 'import json,sys; print([f["name"] for f in json.load(open(sys.argv[1]))["shared"]["frames"] if f["name"].startswith("Java<")][0])' "$TMP/esc.speedscope.json")"
"$TK" convert --merge-threads "$MT" --to speedscope >"$TMP/merged.speedscope.json"
"$NODE" "$JS/speedscope_check.mjs" "$TMP/merged.speedscope.json" >"$TMP/m.json"
check_eq "speedscope --merge-threads: one profile with the whole total" "1 $($O total "$MT")" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["profiles"]), d["profiles"][0]["sum"])' "$TMP/m.json")"
# The validator can fail: a profile without weights is rejected.
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["profiles"][0]["weights"]; json.dump(d,open(sys.argv[2],"w"))' \
	"$TMP/merged.speedscope.json" "$TMP/broken.speedscope.json"
check_fails "speedscope schema rejects a profile without weights" "$NODE" "$JS/speedscope_check.mjs" "$TMP/broken.speedscope.json"

# pprof: pprof-format decodes it, totals per thread = XML; go tool pprof -top prints our total.
export HOME="$TMP/home" GOCACHE="$TMP/home/gocache" GOFLAGS=
mkdir -p "$HOME"
pp=()
for f in "${inputs[@]}"; do
	n=$(basename "$f" .xml)
	"$TK" convert "$f" -o "$TMP/$n.pb.gz" || notok "pprof: convert $n"
	pp+=("$TMP/$n.pb.gz")
done
"$NODE" "$JS/pprof_check.mjs" "${pp[@]}" >"$TMP/pp.jsonl" || notok "pprof-format decodes every file" "$(tail -3 "$TMP/pp.jsonl")"
i=0
for f in "${inputs[@]}"; do
	n=$(basename "$f" .xml)
	i=$((i + 1))
	sed -n "${i}p" "$TMP/pp.jsonl" >"$TMP/pp1.json"
	case $n in
	time-sample*) want=$($O rows "$f") ;;
	*) check "pprof-format: references, sample types, thread totals = XML: $n" $O pprof "$TMP/pp1.json" "$f"
	   want=$($O total "$f") ;;
	esac
	got=$(go tool pprof -top -unit=ns "$TMP/$n.pb.gz" 2>&1 | sed -n 's/.*Total samples = \([0-9]*\)\(ns\)\{0,1\} *.*/\1/p')
	check_eq "go tool pprof -top total = XML: $n" "$want" "$got"
done
check_eq "pprof: build id is the binary's UUID, start its load address" "31E1C182-E611-3883-97A3-4334A21C90BD 0x7ff8174de000" \
	"$(python3 -c 'import json,sys; m=[m for m in json.loads(open(sys.argv[1]).readline())["mappings"] if m["file"]=="/usr/lib/dyld"][0]; print(m["buildId"], m["start"])' \
		<(grep -F "$(basename "$MT" .xml).pb.gz" "$TMP/pp.jsonl"))"
check_eq "pprof: thread label" "ThreadJavaMain" \
	"$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["threads"]["948350"])' <(grep -F "$(basename "$MT" .xml).pb.gz" "$TMP/pp.jsonl"))"
# speedscope's own web app (offline, from file://) opens our speedscope and pprof files: the title,
# the heaviest thread first and "(1/N)" threads in its profile selector, no error, no network.
# (One browser for the three files, our pprof among them: a JSON line each.)
"$NODE" "$JS/speedscope_open.mjs" "$TMP/$(basename "$MT" .xml).speedscope.json" "$TMP/esc.speedscope.json" \
	"$TMP/$(basename "$MT" .xml).pb.gz" >"$TMP/sso.jsonl" 2>"$TMP/sso.err" ||
	notok "speedscope app: ran" "$(head -c 400 "$TMP/sso.err")"
check_eq "speedscope app opens the speedscope file: title, heaviest thread, 10 threads" \
	"$(basename "$MT") - speedscope|ThreadJavaMain (tid 948350), java (pid 23369) (1/10)|[]|[]" \
	"$(sed -n 1p "$TMP/sso.jsonl" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["title"], d["text"].split("\n")[1], d["errors"], d["requests"], sep="|")')"
check_eq "speedscope app opens the escaped-name file" "esc.xml - speedscope|[]" \
	"$(sed -n 2p "$TMP/sso.jsonl" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["title"], d["errors"], sep="|")')"
sed -n 3p "$TMP/sso.jsonl" >"$TMP/ssp.json"
check_eq "speedscope app opens our pprof" "$(basename "$MT" .xml).pb.gz - speedscope|[]|[]" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["title"], d["errors"], d["requests"], sep="|")' "$TMP/ssp.json")"
# Inlining: --symbols on the generated dSYM gives an inline chain, which pprof shows as one location
# with a line per frame (go marks the inlined ones); pprof-format finds no broken reference.
SY="$FIX/symbol"
TRACEKIT_CACHE_DIR="$TMP/symcache" "$TK" convert --symbols "$SY" "$SY/time-profile-14.3-synthetic.xml" -o "$TMP/inl.pb.gz" 2>/dev/null
check_eq "pprof: an inline chain is one location, innermost first (go tool pprof -traces)" \
	"hdr_2 (inline)|u0_f15_in1 (inline)|u0_f15_in0 (inline)|u0_f15|u0_f10|start" \
	"$(go tool pprof -traces "$TMP/inl.pb.gz" 2>/dev/null | awk '/ms +hdr_2/ { on = 1; sub(/^ *[0-9.]+ms +/, "") } on && /^-/ { exit } on { sub(/^ +/, ""); print }' | paste -sd'|')"
check_eq "pprof: the inline chain decodes with pprof-format" "[] 2000000" \
	"$("$NODE" "$JS/pprof_check.mjs" "$TMP/inl.pb.gz" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["problems"], d["total"])')"
check_eq "go tool pprof: the escaped name" 1 "$(go tool pprof -top "$TMP/esc.pb.gz" 2>/dev/null | grep -c 'Java<Main&"x$')"
check_eq "pprof is not written to a terminal" 1 \
	"$(script -qec "$TK convert '$MT' --to pprof; echo rc=\$?" /dev/null | grep -c 'not writing it to a terminal')"

# SVG: well-formed, totals, then a real browser.
for f in "${inputs[@]}"; do
	n=$(basename "$f" .xml)
	"$TK" flame "$f" -o "$TMP/$n.svg" || notok "svg: flame $n"
	case $n in
	time-sample*) check "svg well-formed: $n" python3 -c 'import sys,xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$TMP/$n.svg" ;;
	*) check "svg well-formed, group totals = XML: $n" $O svg "$TMP/$n.svg" "$f" ;;
	esac
done
for opt in --merge-threads --icicle; do
	"$TK" flame $opt "$MT" -o "$TMP/opt.svg"
	check "svg $opt well-formed, totals" $O svg "$TMP/opt.svg" "$MT"
done
# The frame budget keeps a big export's SVG small: a generated 20 MB export with 64 threads.
"$TK_ROOT/$BUILD/xcgen" --encoding tagged --schema time-profile --threads 64 --processes 8 --distinct-stacks 20000 \
	--stacks-per-thread 300 --seed 1 --size 20M -o "$TMP/gen.xml" 2>/dev/null
"$TK" flame "$TMP/gen.xml" -o "$TMP/gen.svg"
check "svg of a generated 20 MB export: group totals = XML" $O svg "$TMP/gen.svg" "$TMP/gen.xml"
check_eq "svg frame budget: 19000 to 20000 frames by default (ties at the cut go), the rest counted in the subtitle" "1 1" "$(python3 -c '
import sys,xml.etree.ElementTree as E
r=E.parse(sys.argv[1]).getroot(); S="{http://www.w3.org/2000/svg}"
n=sum(1 for g in r.iter(S+"g") if g.get("class")=="f")
sub=[t.text for t in r.iter(S+"text") if t.get("id")=="subtitle"][0]
print(int(19000 <= n <= 20000), int("left out" in sub))' "$TMP/gen.svg")"
"$TK" flame --max-frames 500 "$TMP/gen.xml" -o "$TMP/gen500.svg"
check_eq "svg --max-frames 500: 400 to 500 frames" 1 "$(grep -c '^<g class="f"' "$TMP/gen500.svg" | awk '{ print ($1 >= 400 && $1 <= 500) }')"
check_eq "svg: the escaped name is in a title" 1 \
	"$(python3 -c 'import sys,xml.etree.ElementTree as E; print(sum(1 for t in E.parse(sys.argv[1]).iter("{http://www.w3.org/2000/svg}title") if t.text.startswith("Java<Main&\"x\n")))' "$TMP/esc.svg")"

# One headless Chromium for the three flame graphs (flame_check.mjs: a page per file, a JSON line each).
REC=$(ls "$X"/time-profile_xcode26.4.1_tagged-backtrace_recursion_*.xml)
"$TK" flame --merge-threads "$REC" -o "$TMP/rec.svg"
rn=$(python3 -c 'import sys,collections,xml.etree.ElementTree as E
r=E.parse(sys.argv[1]).getroot(); c=collections.Counter(f.get("name") for f in r.iter("frame") if f.get("name"))
print(c.most_common(1)[0][0])' "$REC")
B_NAME=("multithread JNI_CreateJavaVM" "escaped name" "recursion fixture, merged, most common frame")
B_SVG=("$TMP/$(basename "$MT" .xml).svg" "$TMP/esc.svg" "$TMP/rec.svg")
B_TERM=('^JNI_CreateJavaVM$' '^Java<Main&"x$' "^$(printf '%s' "$rn" | sed 's/[][\.*^$()+?{}|]/\\&/g')\$")
B_WANT=("$($O stack-weight "$MT" JNI_CreateJavaVM)" "$($O stack-weight "$TMP/esc.xml" 'Java<Main&"x')" "$($O stack-weight "$REC" "$rn")")
B_XML=("$MT" "$TMP/esc.xml" "$REC")
b_args=()
for i in 0 1 2; do b_args+=("${B_SVG[$i]}" "${B_TERM[$i]}" "$TMP/shot$i.png"); done
"$NODE" "$JS/flame_check.mjs" "${b_args[@]}" >"$TMP/b.jsonl" 2>"$TMP/b.err" || notok "chromium: flame_check.mjs ran" "$(head -c 600 "$TMP/b.err")"
browser() { # INDEX: the checks of B_*[INDEX] on line INDEX+1 of flame_check's output
	local i=$1 name=${B_NAME[$1]} want=${B_WANT[$1]}
	sed -n "$((i + 1))p" "$TMP/b.jsonl" >"$TMP/b.json"
	if [ ! -s "$TMP/b.json" ]; then
		notok "chromium: $name" "no result; $(head -c 600 "$TMP/b.err")"
		return
	fi
	check_eq "chromium: $name: search matched weight = XML" "$want" \
		"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["matchedWeight"])' "$TMP/b.json")"
	check_eq "chromium: $name: zoom, reset, screenshot, no network, no errors" ok "$(python3 -c '
import json,sys
d=json.load(open(sys.argv[1])); p=[]
if d["matchedText"].split(" of ")[0] != "Matched: %.2f%%" % (100.0*int(sys.argv[2])/int(sys.argv[3])): p.append("matched text " + d["matchedText"])
if not d["highlighted"]: p.append("nothing highlighted")
if abs(d["zoomAfter"] - d["rootWidth"]) > 0.01 or d["zoomBefore"] >= d["rootWidth"]: p.append("zoom %s -> %s" % (d["zoomBefore"], d["zoomAfter"]))
if not d["hiddenAfterZoom"] or d["hiddenAfterReset"] or abs(d["widthAfterReset"] - d["zoomBefore"]) > 0.01: p.append("hide/reset")
if not d["unzoomVisible"]: p.append("no Reset Zoom")
if d["urlMatchedWeight"] != d["matchedWeight"]: p.append("?s= search %s" % d["urlMatchedWeight"])
if d["screenshotBytes"] < 10000 or d.get("zoomShotBytes", 0) < 10000 or d["colours"] < 20: p.append("screenshot %d bytes, %s colours" % (d["screenshotBytes"], d["colours"]))
if d["requests"] or d["errors"]: p.append("requests %s errors %s" % (d["requests"], d["errors"]))
print("; ".join(p) or "ok")' "$TMP/b.json" "$want" "$($O total "${B_XML[$i]}")")"
}
for i in 0 1 2; do browser $i; done
cp "$TMP/shot0.png" "$TMP/flame.png"
# The README's screenshot (docs/flame.png) is refreshed by TK_UPDATE_DOCS=1.
if [ -n "${TK_UPDATE_DOCS:-}" ]; then cp "$TMP/flame.png" "$TK_ROOT/docs/flame.png"; fi

# Bytes (Instruments Allocations via Deep Copy): every viewer gets a bytes unit, never a time or a
# bare count, and speedscope's schema still accepts the file.
AL="$FIX/other/deep-copy_instruments7.3.1_allocations_speedscope.txt"
"$TK" convert "$AL" --to speedscope -o "$TMP/al.speedscope.json"
check_eq "speedscope: unit bytes for allocations" bytes \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["profiles"][0]["unit"])' "$TMP/al.speedscope.json")"
"$NODE" "$JS/speedscope_check.mjs" "$TMP/al.speedscope.json" >"$TMP/al.json"
check "speedscope schema accepts the bytes file" python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["valid"] else 1)' "$TMP/al.json"
"$TK" convert "$AL" --to gecko -o "$TMP/al.gecko.json"
check_eq "gecko: weightType bytes for allocations" bytes \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print({t["samples"]["weightType"] for t in d["threads"]}.pop())' "$TMP/al.gecko.json")"
"$TK" convert "$AL" --to pprof -o "$TMP/al.pb.gz"
check_eq "pprof: sample type space/bytes for allocations" "space bytes" \
	"$(cd "$TMP" && HOME="$TMP" GOCACHE="$TMP/gocache" go tool pprof -raw "$TMP/al.pb.gz" 2>/dev/null | sed -n 's/^samples\/count \([a-z]*\)\/\([a-z]*\).*/\1 \2/p')"
