#!/bin/bash
# tracekit serve --ui: the fleet dashboard over a generated fleet (storegen) in SQLite, with a
# regression (version 5.3, whose hangs are on stacks no earlier version had) and a hostile upload
# (app, version, device, OS and frame names that are markup). The API equals the CLI's JSON byte
# for byte; headless Chromium (tests/js/dashboard.mjs) reads the pages' numbers against the CLI's
# JSON, follows overview → stacks → signature → flame graph → downloads, checks the marks, that
# hostile text shows as text and runs nothing, and takes the README's screenshots (DASHBOARD_SHOTS).
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
NODE="$TK_ROOT/tests/js/node_modules/.bin/node"
start_clickhouse
SRV_PID=
# (wait with no pid would wait for clickhouse-server too: only with a pid)
trap '[ -n "$SRV_PID" ] && { kill $SRV_PID; wait $SRV_PID; } 2>/dev/null; stop_clickhouse; rm -rf "$TMP"' EXIT
tk_fork_start
DB="sqlite:$TMP/fleet.db"
G="$TMP/gen"
"$STOREGEN" "$G" 40 3 19 --cpu 1 --foreground --days 8 >/dev/null
# the regression: two sessions of 5.3 whose app image sits 0x40 higher, so every stack is new
for s in s0000000 s0000001; do
	cp -r "$G/$s" "$G/r$s"
	sed -i 's/"version":"[^"]*"/"version":"5.3"/; s/"build":"[^"]*"/"build":"5.3.104"/; s/"session":"/"session":"r/' "$G/r$s/meta.json"
	for f in "$G/r$s"/images*.json; do
		python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for im in d["images"]:
    if im["path"].endswith("/Atlas"):
        im["base"] = hex(int(im["base"], 16) + 0x40)
json.dump(d, open(sys.argv[1], "w"))
PY
	done
done
# the hostile upload: markup in every stored string that reaches a page
H="$G/hostile"; cp -r "$G/s0000002" "$H"
cat >"$H/meta.json" <<'JSON'
{"app":"\"><script>alert('app')</script>","version":"</svg><script>alert('v')</script>","build":"<b onmouseover=alert(1)>","device":"\"onload=\"alert('d')","os":"<img src=x onerror=alert('os')>","session":"<script>s</script>"}
JSON
for f in "$H"/images*.json; do
	sed -i 's#Atlas.app/Atlas#Atlas.app/<img src=x onerror=alert(7)>#' "$f"
done
sed -i 's/"thread":"main"/"thread":"<script>alert(8)<\\\/script>"/g' "$H/records"
"$TK" ingest --db "$DB" "$G" >"$TMP/ingest.log" 2>&1 || { notok "ingest the fleet" "$(tail -3 "$TMP/ingest.log")"; exit 1; }
check "the hostile frame names were stored" sh -c "'$TK' top-hangs --db '$DB' --json --limit 100 | grep -q 'onerror=alert(7)'"

PORT=$(free_port)
BASE="http://127.0.0.1:$PORT"
start() { # ARGS...: start serve, wait until it answers
	: >"$TMP/serve.log"
	"$TK" serve "$@" 2>>"$TMP/serve.log" &
	SRV_PID=$!
	while kill -0 $SRV_PID 2>/dev/null; do grep -q "serving the dashboard" "$TMP/serve.log" && return 0; sleep 0.05; done
	notok "serve --ui did not start" "$(tail -3 "$TMP/serve.log")"; exit 1
}
stop() { # stop serve (SIGTERM: a clean exit, so the sanitizers' leak check runs) and look at its log
	[ -n "$SRV_PID" ] && { kill $SRV_PID; wait $SRV_PID; } 2>/dev/null; SRV_PID=
	if grep -q "Sanitizer\|runtime error" "$TMP/serve.log"; then notok "serve ran clean" "$(grep -m3 "Sanitizer\|runtime error" "$TMP/serve.log")"; fi
}
printf '# the dashboard draws these\np95(hang.duration) > 2 s by version\nhang.rate > 5 s/h by version\n' >"$TMP/rules"
start --ui --db "$DB" --listen "127.0.0.1:$PORT" --rules "$TMP/rules"

# ---- the API is the CLI's JSON, byte for byte, for the same filters ----
api() { curl -s -f "$BASE$1"; }
tables() { # URL OUT: the page's tables (ClickHouse's must equal SQLite's)
	curl -s -f "$BASE$1" | python3 -c 'import re,sys; print("\n".join(re.findall(r"<table id=.*?</table>", sys.stdin.read(), re.S)))' >"$2"
}
tables "/compare?a=5.0&b=5.2" "$TMP/sq_compare"
curl -s -f "$BASE/compare" >"$TMP/compare0.html"
check "the compare page, nothing chosen: the version before the newest against the newest" python3 - "$TMP/compare0.html" <<'PY'
import re, sys
page = open(sys.argv[1]).read()
form = re.search(r'<form class="pick" id="pick-versions".*?</form>', page, re.S).group(0)
sel = re.findall(r'<select name="([ab])">(.*?)</select>', form, re.S)
opts = [re.findall(r'<option value="([^"]*)"', body) for _, body in sel]
chosen = [re.findall(r'<option value="([^"]*)" selected>', body) for _, body in sel]
assert [n for n, _ in sel] == ["a", "b"] and opts[0] == opts[1] and len(opts[0]) >= 3, (sel, opts)
assert chosen == [[opts[0][-2]], [opts[0][-1]]], chosen
PY
tables "/stacks?limit=50" "$TMP/sq_stacks"
api "/api/stats?metric=hang.duration&by=app,version" >"$TMP/a1"
"$TK" stats --db "$DB" --metric hang.duration --by app,version --json >"$TMP/c1"
check_same_file "/api/stats by app,version = stats --db --json" "$TMP/c1" "$TMP/a1"
api "/api/stats?metric=cpu.duration&by=device&app=Atlas&version=5.2" >"$TMP/a2"
"$TK" stats --db "$DB" --metric cpu.duration --by device --where app=Atlas,version=5.2 --json >"$TMP/c2"
check_same_file "/api/stats with filters = stats --db --where" "$TMP/c2" "$TMP/a2"
api "/api/top?limit=50&app=Atlas" >"$TMP/a3"
"$TK" top-hangs --db "$DB" --where app=Atlas --limit 50 --json >"$TMP/c3"
check_same_file "/api/top = top-hangs --json" "$TMP/c3" "$TMP/a3"
api "/api/top?kind=cpu&limit=5" >"$TMP/a4"
"$TK" top-diagnostics --kind cpu --db "$DB" --limit 5 --json >"$TMP/c4"
check_same_file "/api/top?kind=cpu = top-diagnostics --kind cpu --json" "$TMP/c4" "$TMP/a4"
api "/api/top?limit=100" >"$TMP/a5"
check "the API's JSON escapes hostile names (valid JSON, text intact)" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert any("<img src=x onerror=alert(7)>" in r["signature"] for r in rows), rows' "$TMP/a5"
check_eq "a page that does not exist is 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/nope")"
check_eq "POST is refused (read-only)" 405 "$(curl -s -o /dev/null -w '%{http_code}' -d x "$BASE/")"
check_eq "a bad since= is 400" 400 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/?since=yesterday")"
curl -s -D "$TMP/h" -o /dev/null "$BASE/"
check "the overview carries a strict CSP (no inline script)" grep -qi "^Content-Security-Policy: default-src 'self'; script-src 'self';" "$TMP/h"
check "and nosniff" grep -qi "^X-Content-Type-Options: nosniff" "$TMP/h"

# ---- the CLI's answers the browser compares the pages with ----
J="$TMP/json"; mkdir -p "$J"
"$TK" stats --db "$DB" --metric hang.duration --by app,version --json >"$J/hang.json"
"$TK" stats --db "$DB" --metric cpu.duration --by app,version --json >"$J/cpu.json"
"$TK" top-hangs --db "$DB" --where app=Atlas --limit 50 --json >"$J/top.json"
"$TK" top-hangs --db "$DB" --where app=Atlas,version=5.3 --limit 50 --json >"$J/top53.json"
for v in 5.0 5.1 5.2; do "$TK" top-hangs --db "$DB" --where "version=$v" --limit 1000 --json; done >"$J/older.json"
for v in 5.0 5.2; do "$TK" stats --db "$DB" --metric hang.duration --where "app=Atlas,version=$v" --json >"$J/v$v.json"; done
"$TK" stats --db "$DB" --overview --by app,version --json >"$J/overview.json"
for v in 5.0 5.2; do "$TK" top-hangs --db "$DB" --where "app=Atlas,version=$v" --limit 1000 --json >"$J/top$v.json"; done
"$TK" stats --db "$DB" --metric hang.rate --by app,version --json >"$J/rate.json"
"$TK" stats --db "$DB" --metric hang.duration --by day,version --where app=Atlas --json >"$J/trend.json"
"$TK" alert --db "$DB" --rules "$TMP/rules" --json >"$J/alert.json"; check_eq "tracekit alert finds breaches (exit 3)" 3 "$?"
SIG=$(head -1 "$J/top.json" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["signature"])')
"$TK" top-hangs --db "$DB" --where app=Atlas --signature "$SIG" --detail --examples 10 --json >"$J/detail.json"
"$TK" top-hangs --db "$DB" --where app=Atlas --signature "$SIG" --folded >"$J/folded.txt"
EX=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["examples"][0])' "$J/detail.json")
"$TK" report --db "$DB" --json "$EX" >"$J/report.json"
# filtered views, one per page, and the date ranges (UTC days of the fleet, from the trend):
# R1 = [day 2, day 5), the range the trends page selects; compare A = [day 0, day 4) against B = [day 4, …)
DAYS=($(python3 -c 'import json,sys; print(" ".join(sorted({json.loads(l)["day"] for l in open(sys.argv[1])})))' "$J/trend.json"))
R1S=${DAYS[2]} R1U=${DAYS[5]} AS=${DAYS[0]} AU=${DAYS[4]} BS=${DAYS[4]}
most() { "$TK" stats --db "$DB" --by "$1" --json | python3 -c 'import json,sys; print(max((json.loads(l) for l in sys.stdin), key=lambda g: g["count"])[sys.argv[1]])' "$1"; }
DEV=$(most device) OS=$(most os) # the device and OS with the most hangs
python3 -c 'import json,sys; print(json.dumps(dict(zip(["r1s", "r1u", "as", "au", "bs", "device", "os"], sys.argv[1:]))))' \
	"$R1S" "$R1U" "$AS" "$AU" "$BS" "$DEV" "$OS" >"$J/filters.json"
"$TK" stats --db "$DB" --metric hang.duration --by app,version --where "device=$DEV" --json >"$J/hang_dev.json"
"$TK" stats --db "$DB" --metric hang.duration --by day,version --where app=Atlas --since "$R1S" --until "$R1U" --json >"$J/trend_r1.json"
"$TK" stats --db "$DB" --metric hang.duration --by version --where app=Atlas --since "$R1S" --until "$R1U" --json >"$J/stats_r1.json"
"$TK" stats --db "$DB" --metric hang.duration --by version --where app=Atlas --since "$R1S" --until "$R1U" --histogram 20 --json >"$J/dist_r1.json"
"$TK" top-hangs --db "$DB" --where "os=$OS" --limit 50 --json >"$J/top_os.json"
"$TK" top-hangs --db "$DB" --where "app=Atlas,build=5.2.102" --limit 50 --json >"$J/top_build.json"
for side in a b; do
	if [ $side = a ]; then rng=(--since "$AS" --until "$AU"); else rng=(--since "$BS"); fi
	for m in hang.duration cpu.duration; do "$TK" stats --db "$DB" --metric $m --where app=Atlas "${rng[@]}" --json; done >"$J/range_$side.json"
	"$TK" top-hangs --db "$DB" --where app=Atlas "${rng[@]}" --limit 1000 --json >"$J/range_top_$side.json"
done
"$TK" alert --db "$DB" --rules "$TMP/rules" --where version=5.2 --json >"$J/alert52.json"
# until alone (no since): the overview's sessions and hang rate come from the per-session summary
# where nothing filters time, so an end must still narrow them
"$TK" stats --db "$DB" --overview --by app,version --until "$R1U" --json >"$J/overview_until.json"
"$TK" stats --db "$DB" --metric hang.rate --by app,version --until "$R1U" --json >"$J/rate_until.json"
"$TK" stats --db "$DB" --metric hang.duration --by app,version --until "$R1U" --json >"$J/hang_until.json"
check "--until alone narrows sessions, hang-rate sessions and hangs (fewer than the whole fleet's; hangs = the day buckets before it)" python3 -c '
import json, sys
L = lambda f: [json.loads(l) for l in open(sys.argv[1] + "/" + f)]
tot = lambda f, k: sum(g[k] for g in L(f))
assert 0 < tot("overview_until.json", "sessions") < tot("overview.json", "sessions")
assert 0 < tot("rate_until.json", "count") < tot("rate.json", "count")
days = sum(g["count"] for g in L("trend.json") if g["day"] < sys.argv[2])
atlas = sum(g["count"] for g in L("hang_until.json") if g["app"] == "Atlas")
assert atlas == days, (atlas, days)' "$J" "$R1U"
# the API's histogram and date range are the CLI's, byte for byte
api "/api/dist?metric=hang.duration&by=version&bins=20&app=Atlas&since=$R1S&until=$R1U" >"$TMP/a6"
check_same_file "/api/dist = stats --db --histogram 20 --json (same filters and date range)" "$J/dist_r1.json" "$TMP/a6"
api "/api/stats?metric=hang.duration&by=day,version&app=Atlas&since=$R1S&until=$R1U" >"$TMP/a7"
check_same_file "/api/stats with since and until = stats --db --since --until" "$J/trend_r1.json" "$TMP/a7"
check "the date range selects fewer days than the whole fleet" python3 -c '
import json, sys
a = {json.loads(l)["day"] for l in open(sys.argv[1])}; b = {json.loads(l)["day"] for l in open(sys.argv[2])}
assert a and a < b and max(a) < sys.argv[3] <= max(b), (a, b)' "$J/trend_r1.json" "$J/trend.json" "$R1U"
check "the histogram counts every value once and its box plot is the SQL percentiles" python3 -c '
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]; s = {json.loads(l)["version"]: json.loads(l) for l in open(sys.argv[2])}
assert d and len(d) == len(s)
for g in d:
    t = s[g["version"]]
    assert sum(g["counts"]) == g["count"] == t["count"], g
    assert len(g["edges"]) == 21 and g["edges"] == sorted(g["edges"])
    for k in ("p50", "p95", "min", "max"): assert abs(g[k] - t[k]) <= 1e-12 * max(1, abs(t[k])), (k, g[k], t[k])
    assert g["p5"] <= g["p25"] <= g["p50"] <= g["p75"] <= g["p95"]' "$J/dist_r1.json" "$J/stats_r1.json"
curl -s "$BASE/dist.svg?metric=hang.duration" >"$TMP/dist.svg"
check "the histogram's SVG is well-formed, names the hostile version as text and holds no script" python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot(); S = "{http://www.w3.org/2000/svg}"
texts = [t.text or "" for t in r.iter(S + "text")] + [t.text or "" for t in r.iter(S + "title")]
assert any("</svg><script>alert(\x27v\x27)</script>" in t for t in texts), texts[:20]
assert not list(r.iter(S + "script")) and not any(k.lower().startswith("on") for e in r.iter() for k in e.attrib)' "$TMP/dist.svg"
check_eq "a bad until= is 400" 400 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/?until=2026-13-01")"
check_eq "a histogram of a rate is 400 (durations only)" 400 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/api/dist?metric=hang.rate")"

if [ ! -x "$NODE" ]; then notok "node is installed (make test runs npm ci in tests/js)"; exit 0; fi
SHOTS=${DASHBOARD_SHOTS:-$TMP/shots}; mkdir -p "$SHOTS"
if "$NODE" "$TK_ROOT/tests/js/dashboard.mjs" "$BASE" "$J" "$SHOTS" >"$TMP/browser.out" 2>"$TMP/browser.err"; then
	cat "$TMP/browser.out"
else
	cat "$TMP/browser.out"; notok "the browser test ran" "$(tail -20 "$TMP/browser.err")"
fi
stop

# ---- the read token ----
echo "read-t0ken-1234" >"$TMP/read"; echo "ingest-t0ken-99" >"$TMP/ingest"
check_fails "--ui on 0.0.0.0 without a read token is refused" "$TK" serve --ui --db "$DB" --listen "0.0.0.0:$PORT"
check_fails "the read token may not be the ingest token" "$TK" serve --ui --ingest --db "$DB" --listen "127.0.0.1:$PORT" \
	--token-file "$TMP/read" --read-token-file "$TMP/read"
start --ui --ingest --db "$DB" --listen "0.0.0.0:$PORT" --token-file "$TMP/ingest" --read-token-file "$TMP/read"
check_eq "no token → 401" 401 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/")"
check_eq "the ingest token does not read → 401" 401 "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer ingest-t0ken-99' "$BASE/api/top")"
check_eq "the read token as a bearer → 200" 200 "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer read-t0ken-1234' "$BASE/api/top")"
code=$(curl -s -D "$TMP/h2" -o /dev/null -w '%{http_code}' "$BASE/stacks?token=read-t0ken-1234&kind=cpu")
check_eq "?token= → 303 to the same view without the token" "303 /stacks?kind=cpu" "$code $(grep -i '^Location:' "$TMP/h2" | tr -d '\r' | cut -d' ' -f2)"
check "… and an HttpOnly, SameSite cookie" grep -qi '^Set-Cookie: tk_read=read-t0ken-1234; HttpOnly; SameSite=Strict' "$TMP/h2"
check_eq "the cookie reads → 200" 200 "$(curl -s -o /dev/null -w '%{http_code}' -b 'tk_read=read-t0ken-1234' "$BASE/stacks")"
check_eq "a wrong token → 401" 401 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/?token=read-t0ken-1235")"
gzip -c "$G/s0000003/records" >"$TMP/up.gz"
check_eq "uploads still go to /v1/reports on the same port (ingest token)" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer ingest-t0ken-99' --data-binary "@$TMP/up.gz" "$BASE/v1/reports")"
check_eq "the read token cannot upload" 401 \
	"$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer read-t0ken-1234' --data-binary "@$TMP/up.gz" "$BASE/v1/reports")"
stop

# ---- the answer cache: the same view again is the same answer; once another process has added
# reports, every view (page, picture, API) is the new store's answer, not the one kept ----
D2="sqlite:$TMP/cache.db"
"$TK" ingest -q --db "$D2" "$G/s0000000" "$G/s0000001"
start --ui --db "$D2" --listen "127.0.0.1:$PORT" --rules "$TMP/rules"
for u in "/api/stats?by=version" "/api/top" "/" "/stacks" "/trend.svg"; do curl -s "$BASE$u"; done >"$TMP/k1"
for u in "/api/stats?by=version" "/api/top" "/" "/stacks" "/trend.svg"; do curl -s "$BASE$u"; done >"$TMP/k2"
check_same_file "a view asked again (from the cache) is the same answer" "$TMP/k1" "$TMP/k2"
curl -s "$BASE/api/stats?by=version" >"$TMP/k0"
"$TK" ingest -q --db "$D2" "$G/s0000004" "$G/s0000005"
curl -s "$BASE/api/stats?by=version" >"$TMP/k3"; "$TK" stats --db "$D2" --by version --json >"$TMP/k4"
check_same_file "after another process's ingest /api/stats is the new answer (stats --db --json)" "$TMP/k4" "$TMP/k3"
curl -s "$BASE/api/top" >"$TMP/k5"; "$TK" top-hangs --db "$D2" --json >"$TMP/k6"
check_same_file "… and /api/top (top-hangs --json)" "$TMP/k6" "$TMP/k5"
for u in "/" "/stacks" "/trend.svg"; do curl -s "$BASE$u" | md5sum; done >"$TMP/k7"
stop
start --ui --db "$D2" --listen "127.0.0.1:$PORT" --rules "$TMP/rules"
for u in "/" "/stacks" "/trend.svg"; do curl -s "$BASE$u" | md5sum; done >"$TMP/k8"
check_same_file "… and the pages are what a fresh server (no cache) answers" "$TMP/k8" "$TMP/k7"
check "… and the new answer differs from the one before the ingest" sh -c "! cmp -s '$TMP/k0' '$TMP/k3'"
stop

# ---- the same fleet in ClickHouse: the API is the CLI's answer there too, pages escape the same ----
CH="$CH_URL/tk_dash"
"$TK" ingest --db "$CH" "$G" >"$TMP/ingest-ch.log" 2>&1 || { notok "ingest into ClickHouse" "$(tail -3 "$TMP/ingest-ch.log")"; exit 1; }
start --ui --db "$CH" --listen "127.0.0.1:$PORT"
api "/api/stats?metric=hang.duration&by=app,version" >"$TMP/ch1"
tables "/compare?a=5.0&b=5.2" "$TMP/ch_compare"
check "the compare page has its signatures' table" grep -q 'id="compare-stacks"' "$TMP/sq_compare"
check_same_file "ClickHouse: the compare page's tables (one query per side for the signatures' durations) equal SQLite's" \
	"$TMP/sq_compare" "$TMP/ch_compare"
tables "/stacks?limit=50" "$TMP/ch_stacks"
check_same_file "ClickHouse: the top stacks table equals SQLite's" "$TMP/sq_stacks" "$TMP/ch_stacks"
"$TK" stats --db "$CH" --metric hang.duration --by app,version --json >"$TMP/cc1"
check_same_file "ClickHouse: /api/stats = stats --db --json" "$TMP/cc1" "$TMP/ch1"
check_same_file "ClickHouse: … and equals SQLite's" "$J/hang.json" "$TMP/ch1"
api "/api/top?limit=50&app=Atlas" >"$TMP/ch2"
"$TK" top-hangs --db "$CH" --where app=Atlas --limit 50 --json >"$TMP/cc2"
check_same_file "ClickHouse: /api/top = top-hangs --json" "$TMP/cc2" "$TMP/ch2"
api "/api/dist?metric=hang.duration&by=version&bins=20&app=Atlas&since=$R1S&until=$R1U" >"$TMP/ch3"
check_same_file "ClickHouse: /api/dist over a date range equals SQLite's (stats --histogram)" "$J/dist_r1.json" "$TMP/ch3"
api "/api/stats?metric=hang.duration&by=day,version&app=Atlas&since=$R1S&until=$R1U" >"$TMP/ch4"
check_same_file "ClickHouse: /api/stats with since and until equals SQLite's" "$J/trend_r1.json" "$TMP/ch4"
SIGQ=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$SIG")
for u in "/" "/trends" "/stacks" "/signature?kind=hang&sig=$SIGQ&app=Atlas" "/report?id=$EX" "/compare?a=5.0&b=5.2" "/rules" \
	"/flame.svg?kind=hang&sig=$SIGQ" "/stats.svg?kind=hang&sig=$SIGQ" "/trend.svg" "/dist.svg?until=$R1U" \
	"/compare?a_since=$AS&a_until=$AU&b_since=$BS" "/diff.svg?a_since=$AS&a_until=$AU&b_since=$BS"; do
	check_eq "ClickHouse: $u answers 200" 200 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE$u")"
done
curl -s "$BASE/stacks?limit=50" >"$TMP/chs.html"
check "ClickHouse: the hostile frame names are escaped text on the stacks page" \
	sh -c "grep -q '&lt;img src=x onerror=alert(7)&gt;' '$TMP/chs.html' && ! grep -q '<img src=x' '$TMP/chs.html'"
stop
