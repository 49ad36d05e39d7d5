#!/bin/bash
# tracekit stats / diff against the peers people use for percentiles, on the same input in the same run:
#   - 10 M values (log-normal, %.6g text): `tracekit stats --values --json` (exact) and `--sketch`,
#     numpy (np.fromstring + np.percentile + mean) and python's statistics.quantiles (method='inclusive');
#   - the sketch's memory at 100 M values (seq 1..1e8 through a pipe: the count grows, RSS must not);
#   - stats over many generated profiles (xcgen exports): `stats --functions` and `diff`, against the
#     reader's own speed on one file of the same total size (`tracekit collapse`).
# Targets (issue 8): 10 M values exact ≤ 2 s; the sketch ≤ 50 MB whatever the count; profiles at the
# reader's full speed.
#
#   bench/bench_stats.sh [--quick]        (--quick: 2 M values, 10 M through the sketch pipe, 50 profiles)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
TK=${TK:-$PWD/$BUILD/tracekit}
OUT=${BENCH_OUT:-$PWD/bench/out}
SUMMARY=${BENCH_SUMMARY:-/dev/null}
quick=${BENCH_QUICK:-0}
[ "${1:-}" = --quick ] && quick=1
PY=/usr/bin/python3 # Debian's python3 with python3-numpy (make deps)
mkdir -p "$OUT"
if [ "$quick" = 1 ]; then NV=2000000 NPIPE=10000000 NPROF=50; else NV=10000000 NPIPE=100000000 NPROF=200; fi
PROFSIZE=1M

# ---- inputs (reused while the command line is unchanged) ----
V="$OUT/stats-values-$NV.txt"
if [ ! -s "$V" ]; then
	echo "generating $NV values…"
	$PY -c "
import numpy as np, sys
v = np.random.default_rng(1).lognormal(3, 1.5, $NV)
np.savetxt('$V.tmp', v, fmt='%.6g')" && mv "$V.tmp" "$V"
fi
make --no-print-directory -s BUILD="$BUILD" "$BUILD/xcgen" >/dev/null
PD="$OUT/stats-profiles-$NPROF"
if [ ! -f "$PD/done" ]; then
	echo "generating $NPROF profiles of $PROFSIZE…"
	rm -rf "$PD" && mkdir -p "$PD"
	for i in $(seq 1 "$NPROF"); do
		"$BUILD/xcgen" --encoding backtrace --threads 8 --processes 2 --distinct-stacks 2000 --seed "$i" \
			--size "$PROFSIZE" -o "$PD/p$i.xml" 2>/dev/null
	done
	touch "$PD/done"
fi
ONE="$OUT/stats-one-$NPROF.xml"
[ -s "$ONE" ] || "$BUILD/xcgen" --encoding backtrace --threads 8 --processes 2 --distinct-stacks 2000 --seed 1 \
	--size "$((NPROF * ${PROFSIZE%M}))M" -o "$ONE" 2>/dev/null
cat "$V" "$PD"/*.xml "$ONE" >/dev/null # page cache

# run NAME CMD…: wall, CPU (user+sys) and peak RSS of the best of 3 (1 in quick mode)
runs=3
[ "$quick" = 1 ] && runs=1
measure() {
	local best="" line tf
	tf=$(mktemp)
	for _ in $(seq 1 "$runs"); do
		/usr/bin/time -o "$tf" -f '%e %U %S %M' "$@" >/dev/null 2>/dev/null || true
		line=$(tail -1 "$tf")
		if [ -z "$best" ] || awk -v a="$line" -v b="$best" 'BEGIN { split(a, x); split(b, y); exit !(x[1] < y[1]) }'; then
			best=$line
		fi
	done
	rm -f "$tf"
	echo "$best"
}
wall() { echo "$1" | awk '{ print $1 }'; }
cpu() { echo "$1" | awk '{ printf "%.2f", $2 + $3 }'; }
rss() { echo "$1" | awk '{ printf "%.0f", $4 / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f×", a / b; else print "-" }'; }
sum() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' stats "$@" >>"$SUMMARY"; }

NUMPY="import numpy as np, json, sys
v = np.fromstring(open(sys.argv[1]).read(), sep='\n')
q = np.percentile(v, [50, 90, 95, 99, 99.9])
print(json.dumps({'count': len(v), 'mean': float(v.mean()), 'min': float(v.min()), 'p50': q[0], 'p90': q[1], 'p95': q[2], 'p99': q[3], 'p99.9': q[4], 'max': float(v.max())}))"
PYSTAT="import statistics, sys
v = [float(x) for x in open(sys.argv[1])]
q = statistics.quantiles(v, n=1000, method='inclusive')
print(statistics.fmean(v), min(v), q[499], q[899], q[949], q[989], q[998], max(v))"

echo "# tracekit stats, $NV values ($(du -h "$V" | cut -f1)), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
ex=$(measure "$TK" stats --values --json "$V")
sk=$(measure "$TK" stats --values --sketch --json "$V")
np_=$(measure $PY -c "$NUMPY" "$V")
ps=$(measure $PY -c "$PYSTAT" "$V")
printf '| %-40s | %8s | %8s | %8s |\n' "what" "wall s" "CPU s" "RSS MB"
printf '| %-40s | %8s | %8s | %8s |\n' "tracekit stats --values (exact)" "$(wall "$ex")" "$(cpu "$ex")" "$(rss "$ex")"
printf '| %-40s | %8s | %8s | %8s |\n' "tracekit stats --values --sketch" "$(wall "$sk")" "$(cpu "$sk")" "$(rss "$sk")"
printf '| %-40s | %8s | %8s | %8s |\n' "numpy fromstring + percentile + mean" "$(wall "$np_")" "$(cpu "$np_")" "$(rss "$np_")"
printf '| %-40s | %8s | %8s | %8s |\n' "python statistics.quantiles (inclusive)" "$(wall "$ps")" "$(cpu "$ps")" "$(rss "$ps")"
# Same answers? numpy's linear interpolation can differ from the correctly rounded type 7 value in the
# last place; report the largest relative difference.
"$TK" stats --values --json "$V" >"$OUT/stats-ours.json"
$PY -c "$NUMPY" "$V" >"$OUT/stats-numpy.json"
diffrel=$($PY -c "
import json
a = json.load(open('$OUT/stats-ours.json')); b = json.load(open('$OUT/stats-numpy.json'))
print('%.1e' % max(abs(a[k] - b[k]) / abs(b[k]) for k in ('mean', 'min', 'p50', 'p90', 'p95', 'p99', 'p99.9', 'max')))")
echo "largest relative difference between tracekit's and numpy's numbers: $diffrel"
pipe=$(runs=1 measure bash -c "seq 1 $NPIPE | '$TK' stats --values --sketch --json -")
echo "sketch over $NPIPE values through a pipe: $(wall "$pipe") s wall, peak RSS (bash+seq+tracekit, max of them) $(rss "$pipe") MB"
target=$(awk -v w="$(wall "$ex")" 'BEGIN { print (w <= 2 ? "≤ 2 s: met" : "≤ 2 s: missed") }')
sum "$NV values, exact percentiles" "$(wall "$ex") s wall, $(cpu "$ex") s CPU, $(rss "$ex") MB RSS" \
	"numpy $(wall "$np_") s, $(rss "$np_") MB; statistics $(wall "$ps") s, $(rss "$ps") MB" \
	"$(ratio "$(wall "$np_")" "$(wall "$ex")") / $(ratio "$(wall "$ps")" "$(wall "$ex")")" "$target; max rel. diff to numpy $diffrel"
sum "$NV values, sketch" "$(wall "$sk") s wall, $(rss "$sk") MB RSS" "(numpy as above)" \
	"$(ratio "$(wall "$np_")" "$(wall "$sk")")" "≤ 50 MB: $(awk -v r="$(rss "$sk")" 'BEGIN { print (r <= 50 ? "met" : "missed") }')"
sum "sketch, $NPIPE values via pipe" "$(wall "$pipe") s, $(rss "$pipe") MB peak" "-" "-" \
	"≤ 50 MB whatever the count: $(awk -v r="$(rss "$pipe")" 'BEGIN { print (r <= 50 ? "met" : "missed") }')"

echo
echo "# $NPROF generated profiles of $PROFSIZE each ($(du -sh "$PD" | cut -f1)) vs one file of the same size"
bytes=$(cat "$PD"/*.xml | wc -c)
onebytes=$(wc -c <"$ONE")
fn=$(measure "$TK" stats --functions "$PD"/*.xml)
pw=$(measure "$TK" stats "$PD"/*.xml)
half=$((NPROF / 2))
files=("$PD"/*.xml)
df=$(measure "$TK" diff "${files[@]:0:$half}" -- "${files[@]:$half}")
col=$(measure "$TK" collapse "$ONE")
mbs() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f MB/s", b / 1e6 / t }'; }
printf '| %-44s | %8s | %10s | %8s |\n' "what" "wall s" "speed" "RSS MB"
printf '| %-44s | %8s | %10s | %8s |\n' "stats --functions over $NPROF files" "$(wall "$fn")" "$(mbs "$bytes" "$(wall "$fn")")" "$(rss "$fn")"
printf '| %-44s | %8s | %10s | %8s |\n' "stats (profile.weight) over $NPROF files" "$(wall "$pw")" "$(mbs "$bytes" "$(wall "$pw")")" "$(rss "$pw")"
printf '| %-44s | %8s | %10s | %8s |\n' "diff $half -- $half files" "$(wall "$df")" "$(mbs "$bytes" "$(wall "$df")")" "$(rss "$df")"
printf '| %-44s | %8s | %10s | %8s |\n' "collapse, one file of the same size (reader)" "$(wall "$col")" "$(mbs "$onebytes" "$(wall "$col")")" "$(rss "$col")"
sum "stats --functions, $NPROF × $PROFSIZE profiles" "$(mbs "$bytes" "$(wall "$fn")"), $(rss "$fn") MB RSS" \
	"reader alone (collapse, one file): $(mbs "$onebytes" "$(wall "$col")")" \
	"$(awk -v a="$bytes" -v ta="$(wall "$fn")" -v b="$onebytes" -v tb="$(wall "$col")" 'BEGIN { printf "%.2f of reader speed", (a / ta) / (b / tb) }')" \
	"at the reader's speed"
sum "diff $half -- $half profiles (Mann-Whitney + bootstrap)" "$(mbs "$bytes" "$(wall "$df")"), $(rss "$df") MB RSS" "-" "-" "-"
