#!/bin/bash
# Dashboard benchmark (tracekit serve --ui, docs/dashboard.md): every page, picture and API call timed
# on a generated fleet in SQLite: its first request (wall by curl, and the server's CPU time for it,
# what a loaded machine does not distort) and the best of 3 again (from the answer cache), with the weight of each page (HTML plus
# its stylesheet and script; the SVG pictures are counted apart), side by side with the CLI answering
# the same query (`tracekit stats --db --json`, `top-hangs --json`: process start and store open
# included, so the API's ratio to it shows what serving adds or saves).
#
#   bench/bench_dashboard.sh [--quick | SESSIONS [HANGS]]   (default 4000 × 50: 212 k reports, hangs and
#                                          CPU periods; --quick 400 × 50; 20000 × 50 = 1 M as bench_store.sh)
#   BENCH_DB=URL bench/bench_dashboard.sh   the same on a store already filled (e.g. a ClickHouse one,
#                                          clickhouse://127.0.0.1:8123/tracekit, after
#                                          `tracekit ingest --db URL DIR` of the storegen fleet below);
#                                          the CPU column is then the server's plus, when BENCH_CH_PID
#                                          names the clickhouse-server process, the database's
# Targets (issue 19): each page ≤ 300 ms, page weight ≤ 500 kB without the flame graph.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
TK=${TK:-$ROOT/$BUILD/tracekit}
OUT=${BENCH_OUT:-$ROOT/bench/out}
if [ "${1:-}" = "--quick" ]; then set -- 400 50; fi
SESSIONS=${1:-4000} HANGS=${2:-50}
make --no-print-directory -s BUILD="$BUILD" "$BUILD/storegen" "$BUILD/tracekit" >/dev/null
mkdir -p "$OUT"
TMP=$(mktemp -d)
SRV=
trap 'kill $SRV 2>/dev/null; wait $SRV 2>/dev/null; rm -rf "$TMP"' EXIT
G="$OUT/dash-$SESSIONS-$HANGS"
DB=${BENCH_DB:-"sqlite:$OUT/dash-$SESSIONS-$HANGS.db"}
if [ -z "${BENCH_DB:-}" ] && [ ! -f "$OUT/dash-$SESSIONS-$HANGS.db.done" ]; then
	echo "bench_dashboard: generating and ingesting $SESSIONS sessions × $HANGS hangs (once)…" >&2
	rm -rf "$G" "$OUT/dash-$SESSIONS-$HANGS.db"*
	"$ROOT/$BUILD/storegen" "$G" "$SESSIONS" "$HANGS" 42 --cpu 2 --foreground --days 14 --versions 6 >/dev/null
	/usr/bin/time -f '%e s wall, %U+%S s CPU, %M KB' "$TK" ingest --db "$DB" "$G" >&2
	rm -rf "$G"
	touch "$OUT/dash-$SESSIONS-$HANGS.db.done"
fi
N=$("$TK" stats --db "$DB" --overview --json | python3 -c 'import json,sys; print(sum(json.loads(l)["reports"] for l in sys.stdin))')
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
printf 'p95(hang.duration) > 2 s by version\nhang.rate > 5 s/h by version\n' >"$TMP/rules"
"$TK" serve --ui --db "$DB" --listen "127.0.0.1:$PORT" --rules "$TMP/rules" 2>"$TMP/log" &
SRV=$!
while ! grep -q "serving the dashboard" "$TMP/log"; do kill -0 $SRV || exit 1; sleep 0.05; done
B="http://127.0.0.1:$PORT"
SIG=$(curl -s "$B/api/top?limit=1" | python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.loads(sys.stdin.readline())["signature"]))')
EX=$(curl -s "$B/api/top?limit=1" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["example"])')
STATIC=$(( $(curl -s "$B/static/dashboard.css" | wc -c) + $(curl -s "$B/static/dashboard.js" | wc -c) ))
cold() { # URL: one request (the server's first for it: computed, not from its cache): wall seconds,
	# the server's CPU seconds for it (utime+stime from /proc, 10 ms ticks), and the size
	local c0 c1 t
	c0=$(cat /proc/$SRV/stat ${BENCH_CH_PID:+/proc/$BENCH_CH_PID/stat} | awk '{ c += $14 + $15 } END { print c }')
	t=$(curl -s -o "$TMP/body" -w '%{time_total}' "$1")
	c1=$(cat /proc/$SRV/stat ${BENCH_CH_PID:+/proc/$BENCH_CH_PID/stat} | awk '{ c += $14 + $15 } END { print c }')
	echo "$t $(awk -v a="$c0" -v b="$c1" -v h="$(getconf CLK_TCK)" 'BEGIN { print (b - a) / h }') $(wc -c <"$TMP/body")"
}
best() { # URL: best of 3 wall seconds, and the size (after cold: the answer cache's)
	local b=999 t
	for _ in 1 2 3; do
		t=$(curl -s -o "$TMP/body" -w '%{time_total}' "$1")
		b=$(awk -v a="$b" -v t="$t" 'BEGIN { print (t < a ? t : a) }')
	done
	echo "$b $(wc -c <"$TMP/body")"
}
cli() { # CMD…: best of 3 wall seconds
	local b=999 t
	for _ in 1 2 3; do
		/usr/bin/time -f '%e' -o "$TMP/t" "$@" >/dev/null
		t=$(cat "$TMP/t")
		b=$(awk -v a="$b" -v t="$t" 'BEGIN { print (t < a ? t : a) }')
	done
	echo "$b"
}
echo "bench_dashboard: $N reports in ${DB%%:*} ($DB); load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
printf '%-44s %9s %9s %9s %10s %10s\n' "request" "first ms" "CPU ms" "again ms" "bytes" "page kB"
slow=0 slowu= heavy=0
for u in "/" "/trends" "/trends?bucket=hour&stat=p99" "/stacks" "/stacks?kind=cpu" "/signature?kind=hang&sig=$SIG" \
	"/report?id=$EX" "/compare?a=5.0&b=5.1" "/rules" \
	"/flame.svg?kind=hang" "/flame.svg?kind=hang&sig=$SIG" "/stats.svg?kind=hang&sig=$SIG" "/trend.svg" "/diff.svg?a=5.0&b=5.1" \
	"/api/stats?by=version" "/api/top?limit=10" \
	"/trends?metric=cpu.duration" "/compare?a_since=14d&a_until=7d&b_since=7d" "/dist.svg" "/api/dist?by=version"; do
	read -r s0 cpu0 _ < <(cold "$B$u")
	read -r s bytes < <(best "$B$u")
	kb=""
	case "$u" in /api*|*.svg*) ;; *) kb=$(awk -v b="$bytes" -v s="$STATIC" 'BEGIN { printf "%.1f", (b + s) / 1024 }') ;; esac
	ms=$(awk -v s="$s0" 'BEGIN { printf "%.0f", s * 1000 }')
	printf '%-44s %9d %9.0f %9.0f %10d %10s\n' "${u:0:44}" "$ms" "$(awk -v c="$cpu0" 'BEGIN { print c * 1000 }')" \
		"$(awk -v s="$s" 'BEGIN { print s * 1000 }')" "$bytes" "$kb"
	if [ "$ms" -gt "$slow" ]; then slow=$ms slowu=${u%%\?*}; fi
	if [ -n "$kb" ] && awk -v k="$kb" -v h="$heavy" 'BEGIN { exit !(k > h) }'; then heavy=$kb; fi
done
a=$(best "$B/api/stats?by=version" | cut -d' ' -f1); c=$(cli "$TK" stats --db "$DB" --by version --json)
ra=$(awk -v a="$a" -v c="$c" 'BEGIN{printf "%.2f", a/c}')
printf 'api/stats by version %.0f ms, the CLI %.0f ms (ratio %.2f)\n' "$(awk -v x="$a" 'BEGIN{print x*1000}')" "$(awk -v x="$c" 'BEGIN{print x*1000}')" "$(awk -v a="$a" -v c="$c" 'BEGIN{print a/c}')"
a=$(best "$B/api/top?limit=10" | cut -d' ' -f1); c=$(cli "$TK" top-hangs --db "$DB" --json)
printf 'api/top %.0f ms, the CLI %.0f ms (ratio %.2f)\n' "$(awk -v x="$a" 'BEGIN{print x*1000}')" "$(awk -v x="$c" 'BEGIN{print x*1000}')" "$(awk -v a="$a" -v c="$c" 'BEGIN{print a/c}')"
if [ -n "${BENCH_SUMMARY:-}" ]; then
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' dashboard "slowest page or picture, $N reports (${DB%%:*})" "$slow ms ($slowu)" - - \
		"≤ 300 ms; load $(cut -d' ' -f1 /proc/loadavg)" >>"$BENCH_SUMMARY"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' dashboard "heaviest page (HTML+CSS+JS)" "$heavy kB" - - "≤ 500 kB" >>"$BENCH_SUMMARY"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' dashboard "/api/stats by version vs stats --db --json" "$(awk -v x="$a" 'BEGIN{printf "%.0f ms", x*1000}')" \
		"$(awk -v x="$c" 'BEGIN{printf "%.0f ms", x*1000}')" "$ra" "the CLI: process start included" >>"$BENCH_SUMMARY"
fi
echo "server CPU: $(awk '{ printf "%.2f s", ($14 + $15) / 100 }' /proc/$SRV/stat)"
