#!/bin/bash
# xctrace XML → Firefox Profiler file (`tracekit open --save`, the gecko writer), and what the
# profiler pays to load it, against the instruments-to-gecko layout of the same samples.
#
#   bench/bench_gecko.sh [--quick]      (normally through `make bench` / bench/run.sh)
#
# Inputs: the generated exports of bench_xctrace.sh (same xcgen command, shared in bench/out/):
# 100 MB and 1 GB (--quick: 20 MB). The conversion keeps the per-sample list (time order for the
# Stack Chart), so its memory grows with the rows (≈ 5-7 bytes per row, delta-coded per thread),
# unlike `tree`/`collapse`. `collapse` runs on the same file in the same loop: the reader alone.
# The peer is bench/peer_gecko_naive.py: the same samples laid out the instruments-to-gecko way
# (Gecko format, per-thread string/frame/stack tables, one sample per row, no weights). Both files
# are loaded by the Firefox Profiler's own code (profiler-cli, tests/js) on the 100 MB input
# (--quick: 20 MB): file size, load time (wall, `profiler-cli load` until the session is ready) and
# the profiler daemon's peak RSS (VmHWM).
set -u
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = --quick ] && quick=1
[ "${BENCH_QUICK:-0}" = 1 ] && quick=1
BUILD=${BUILD:-build}
TK=${TK:-$PWD/$BUILD/tracekit}
GEN=$PWD/$BUILD/xcgen
OUT=${BENCH_OUT:-$PWD/bench/out}
SUMMARY=${BENCH_SUMMARY:-/dev/null}
JSBIN=$PWD/tests/js/node_modules/.bin
mkdir -p "$OUT"
tmp=$(mktemp -d)
export HOME="$tmp/home" PATH="$JSBIN:$PATH"
mkdir -p "$HOME"
PC_OUT="$tmp/load.txt"
. tests/profiler_cli.sh
trap '[ -x "$JSBIN/profiler-cli" ] && pc_stop_all; rm -rf "$tmp"' EXIT

[ -x "$GEN" ] || { echo "bench_gecko: $GEN is missing (run make)"; exit 1; }
[ -x /usr/bin/time ] || { echo "bench_gecko: GNU time is missing (make deps)"; exit 1; }
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' gecko "$@" >>"$SUMMARY"; }

GEN_ARGS=(--encoding tagged --schema time-profile --threads 64 --processes 8 --distinct-stacks 20000
	--stacks-per-thread 300 --seed 1)
gen() { # SIZE → path; the same stamp as bench_xctrace.sh, so the files are shared
	local size=$1 f="$OUT/xctrace-tp-$1.xml"
	local cmd="xcgen ${GEN_ARGS[*]} --size $size -o $f --truth $f.truth # $(sha1sum <bench/xcgen.c | cut -c1-12)"
	if [ -s "$f" ] && [ -s "$f.truth" ] && [ "$(cat "$f.cmd" 2>/dev/null)" = "$cmd" ]; then
		echo "$f"
		return
	fi
	rm -f "$f" "$f.truth" "$f.cmd"
	"$GEN" "${GEN_ARGS[@]}" --size "$size" -o "$f" --truth "$f.truth" >&2 || exit 1
	echo "$cmd" >"$f.cmd"
	echo "$f"
}
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.0f", b / 1e6 / s; else print "?" }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

if [ $quick = 1 ]; then sizes=(20M); else sizes=(100M 1G); fi
for size in "${sizes[@]}"; do
	f=$(gen "$size")
	bytes=$(stat -c %s "$f")
	rows=$(grep -c '<row>' "$f")
	cat "$f" >/dev/null
	best="" cpu="" rss=0 ccpu="" crss=0
	runs=3
	[ "$size" = 1G ] && runs=1
	for ((i = 0; i < runs; i++)); do
		t0=$(date +%s%N)
		/usr/bin/time -f '%M %U %S' -o "$tmp/rss" "$TK" open --save "$tmp/out.json" "$f" 2>"$tmp/err" || {
			echo "tracekit open --save failed: $(head -c 300 "$tmp/err")"; row "convert $size" "FAILED" "-" "-" "-"; continue 2; }
		t1=$(date +%s%N)
		s=$(((t1 - t0) / 1000))
		read -r r c <<<"$(tail -1 "$tmp/rss" | awk '{ printf "%d %d", $1, ($2 + $3) * 1e6 }')"
		if [ -z "$best" ] || [ "$s" -lt "$best" ]; then best=$s cpu=$c; fi
		[ "$r" -gt "$rss" ] && rss=$r
		/usr/bin/time -f '%M %U %S' -o "$tmp/rss" "$TK" collapse "$f" >/dev/null 2>"$tmp/err" || {
			echo "tracekit collapse failed: $(head -c 300 "$tmp/err")"; continue 2; }
		read -r r c <<<"$(tail -1 "$tmp/rss" | awk '{ printf "%d %d", $1, ($2 + $3) * 1e6 }')"
		if [ -z "$ccpu" ] || [ "$c" -lt "$ccpu" ]; then ccpu=$c; fi
		[ "$r" -gt "$crss" ] && crss=$r
	done
	ccsecs=$(awk -v u="$ccpu" 'BEGIN { printf "%.3f", u / 1e6 }')
	secs=$(awk -v u="$best" 'BEGIN { printf "%.3f", u / 1e6 }')
	csecs=$(awk -v u="$cpu" 'BEGIN { printf "%.3f", u / 1e6 }')
	osize=$(stat -c %s "$tmp/out.json")
	echo "--- $size ($rows rows): open --save ${secs} s = $(mbps "$bytes" "$secs") MB/s (cpu ${csecs} s = $(mbps "$bytes" "$csecs") MB/s), $(mb "$rss") MB RSS, output $(mbps "$osize" 1) MB; collapse (the reader alone) cpu ${ccsecs} s = $(mbps "$bytes" "$ccsecs") MB/s, $(mb "$crss") MB RSS"
	row "xctrace $size → gecko file" "$(mbps "$bytes" "$secs") MB/s (cpu $(mbps "$bytes" "$csecs") MB/s), $(mb "$rss") MB RSS, $(mbps "$osize" 1) MB out" "collapse: cpu $(mbps "$bytes" "$ccsecs") MB/s, $(mb "$crss") MB RSS" "-" "≥200 MB/s; RSS grows ~5-7 B/row (time order)"
	[ "$size" = 1G ] && continue

	if [ ! -x "$JSBIN/profiler-cli" ]; then
		echo "profiler-cli missing (make test installs tests/js): no load comparison"
		continue
	fi
	cp "$tmp/out.json" "$tmp/ours.json"
	python3 bench/peer_gecko_naive.py "$tmp/ours.json" "$tmp/naive.json"
	declare -A LT LR LS
	for kind in ours naive; do
		t0=$(date +%s%N)
		pc_load "$tmp/$kind.json" || { echo "profiler-cli load $kind failed: $(tail -3 "$tmp/load.txt")"; continue; }
		t1=$(date +%s%N)
		sid=$PC_SESSION dpid=$PC_PID
		LR[$kind]=$(awk '/VmHWM/ { print $2 }' "/proc/$dpid/status" 2>/dev/null || echo 0)
		LT[$kind]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
		LS[$kind]=$(stat -c %s "$tmp/$kind.json")
		profiler-cli stop "$sid" >/dev/null 2>&1
		echo "profiler-cli load $kind: ${LT[$kind]} s, daemon peak $(mb "${LR[$kind]}") MB, file $(mbps "${LS[$kind]}" 1) MB"
	done
	if [ -n "${LT[ours]:-}" ] && [ -n "${LT[naive]:-}" ]; then
		row "profiler loads it ($size input)" "$(mbps "${LS[ours]}" 1) MB, ${LT[ours]} s, $(mb "${LR[ours]}") MB RSS" \
			"$(mbps "${LS[naive]}" 1) MB, ${LT[naive]} s, $(mb "${LR[naive]}") MB RSS" \
			"$(awk -v a="${LT[ours]}" -v b="${LT[naive]}" 'BEGIN { printf "%.1f× faster", b / a }'), $(awk -v a="${LR[ours]}" -v b="${LR[naive]}" 'BEGIN { printf "%.1f× less RSS", b / a }')" \
			"peer = instruments-to-gecko layout (per-thread tables, no weights)"
	fi
done
