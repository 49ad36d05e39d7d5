#!/bin/bash
# The pictures of `tracekit stats --svg` (linear and logarithmic axes, exact and sketch, one box per
# input) and `tracekit diff --svg` rendered in headless Chromium (tests/js/render_svg.mjs): no parse
# or page errors, the drawing has its size, and the elements the data calls for are drawn.
. "$TK_ROOT/tests/lib.sh"
NODE="$TK_ROOT/tests/js/node_modules/.bin/node"
MK="python3 $TK_ROOT/tests/cli/mkprofile.py"
python3 -c "
import random
r = random.Random(5)
open('$TMP/lin.txt', 'w').write('\n'.join('%.4f' % r.gauss(50, 8) for _ in range(3000)) + '\n')
for k in range(4):
    open('$TMP/log%d.txt' % k, 'w').write('\n'.join('%.6g' % r.lognormvariate(k, 2) for _ in range(2000)) + '\n')"
"$TK" stats --values --svg "$TMP/lin.svg" "$TMP/lin.txt" >/dev/null
"$TK" stats --values --svg "$TMP/log.svg" "$TMP"/log?.txt >/dev/null
"$TK" stats --values --sketch --svg "$TMP/sketch.svg" "$TMP"/log?.txt >/dev/null
printf '7\n' >"$TMP/one.txt"
"$TK" stats --values --svg "$TMP/one.svg" "$TMP/one.txt" >/dev/null
for s in 1 2 3; do
	$MK "$TMP/a$s.xml" --seed $s
	$MK "$TMP/b$s.xml" --seed $((s + 5)) --inject blend_pixels:250:render
done
"$TK" diff "$TMP"/a?.xml -- "$TMP"/b?.xml --svg "$TMP/diff.svg" >/dev/null
check "render: every SVG opens in headless Chromium" "$NODE" "$TK_ROOT/tests/js/render_svg.mjs" "$TMP/r.json" \
	"$TMP/lin.svg" "$TMP/log.svg" "$TMP/sketch.svg" "$TMP/one.svg" "$TMP/diff.svg"
check "stats SVGs: no errors, 960 wide, bars, CDF and percentile markers drawn" python3 - "$TMP" <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(f"{d}/r.json"))
for name, boxes in (("lin", 1), ("log", 4), ("sketch", 1)):  # per-input boxes need exact values
    x = r[f"{d}/{name}.svg"]
    assert not x["parseError"] and not x["errors"], (name, x["errors"])
    assert x["width"] == 960, (name, x["width"])
    assert x["drawn"]["polyline"] == 1, (name, x["drawn"])
    assert x["drawn"]["rect"] >= 15 + boxes, (name, x["drawn"])   # histogram bars + boxes
    assert x["drawn"]["circle"] >= 5 + 2 * boxes, (name, x["drawn"])  # percentile dots + p99/max per box
    for p in ("p50 ", "p90 ", "p95 ", "p99 ", "p99.9 "):
        assert any(t.startswith(p) for t in x["texts"]), (name, p)
assert any("logarithmic" in t for t in r[f"{d}/log.svg"]["texts"])
assert not any("logarithmic" in t for t in r[f"{d}/lin.svg"]["texts"])
assert any("from the sketch" in t for t in r[f"{d}/sketch.svg"]["texts"])
one = r[f"{d}/one.svg"]
assert not one["parseError"] and not one["errors"] and one["width"] == 960
PY
check "diff SVG: the flame graph draws frames, the injected function among them" python3 - "$TMP" <<'PY'
import json, sys
d = sys.argv[1]
x = json.load(open(f"{d}/r.json"))[f"{d}/diff.svg"]
assert not x["parseError"] and not x["errors"], x["errors"]
assert x["drawn"]["rect"] > 50, x["drawn"]
assert any(t.startswith("blend") for t in x["texts"]), x["texts"][:40]
PY
