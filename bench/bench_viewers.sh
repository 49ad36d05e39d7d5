#!/bin/bash
# Viewer formats: `tracekit convert --to FORMAT` throughput, peak RSS and output size for every format
# in the table (lib/write/formats.c), side by side with `tracekit collapse` on the same input (the
# reading baseline every writer pays; the ratio is convert time / collapse time, i.e. the writer's
# own cost). No peer converts xctrace exports on Linux (instruments-to-gecko and instrumentsToPprof
# need a Mac or Deep Copy text), so the baseline is our own reader.
#
#   bench/bench_viewers.sh [--quick]       (normally through `make bench` / bench/run.sh)
#
# Inputs: the same build/xcgen exports as bench_xctrace.sh (same command, same files in bench/out):
# 100 MB, 300 MB and 1 GB (--quick: 20 MB). 1 GB is skipped when the 300 MB runs predict more than
# ~3 minutes for the whole set (the skip is reported). Target: >= 200 MB/s of input for every
# format, peak RSS flat from 100 MB to the largest size, the SVG a few MB at the default limits.
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
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$GEN" ] || { echo "bench_viewers: $GEN is missing (run make)"; exit 1; }
[ -x /usr/bin/time ] || { echo "bench_viewers: GNU time is missing"; exit 1; }

row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' viewers "$@" >>"$SUMMARY"; }
GEN_ARGS=(--encoding tagged --schema time-profile --threads 64 --processes 8 --distinct-stacks 20000
	--stacks-per-thread 300 --seed 1)
gen() { # SIZE -> path; the same stamp as bench_xctrace.sh, so the files are shared
	local size=$1 f="$OUT/xctrace-tp-$1.xml" args=("${GEN_ARGS[@]}")
	local cmd="xcgen ${args[*]} --size $size -o $f --truth $f.truth # $(sha1sum <bench/xcgen.c | cut -c1-12)"
	if [ -s "$f" ] && [ -s "$f.truth" ] && [ "$(cat "$f.cmd" 2>/dev/null)" = "$cmd" ]; then
		echo "$f"
		return
	fi
	rm -f "$f" "$f.truth" "$f.cmd"
	"$GEN" "${args[@]}" --size "$size" -o "$f" --truth "$f.truth" >&2 || exit 1
	echo "$cmd" >"$f.cmd"
	echo "$f"
}
# measure RUNS CMD... -> M_SECS (best wall), M_CPU (user+sys of that run), M_RSS (max KB), M_RC
measure() {
	local runs=$1 best="" cpu="" rss=0 i t0 t1 s r c
	shift
	M_RC=0
	for ((i = 0; i < runs; i++)); do
		t0=$(date +%s%N)
		/usr/bin/time -f '%M %U %S' -o "$tmp/rss" "$@" >/dev/null 2>"$tmp/err"
		M_RC=$?
		t1=$(date +%s%N)
		[ $M_RC -ne 0 ] && break
		s=$(((t1 - t0) / 1000))
		read -r r c <<<"$(tail -1 "$tmp/rss" | awk '{ printf "%d %d", $1, ($2 + $3) * 1e6 }')"
		if [ -z "$best" ] || [ "$s" -lt "$best" ]; then best=$s cpu=$c; fi
		[ "$r" -gt "$rss" ] && rss=$r
	done
	M_SECS=$(awk -v u="${best:-0}" 'BEGIN { printf "%.3f", u / 1e6 }')
	M_CPU=$(awk -v u="${cpu:-0}" 'BEGIN { printf "%.3f", u / 1e6 }')
	M_RSS=$rss
}
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.0f", b / 1e6 / s; else print "?" }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
formats=$("$TK" convert --help | sed -n '/^formats/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
echo "formats: $(echo $formats)"
if [ $quick = 1 ]; then sizes=(20M); else sizes=(100M 300M 1G); fi
declare -A SEC CPU RSS SIZE
for size in "${sizes[@]}"; do
	if [ "$size" = 1G ] && [ -n "${SEC[collapse,300M]:-}" ]; then
		pred=$(awk -v s="$(for k in "${!SEC[@]}"; do [[ $k == *,300M ]] && echo "${SEC[$k]}"; done | paste -sd+ | bc)" \
			'BEGIN { printf "%.0f", s * 3.4 }')
		if [ "$pred" -gt 180 ]; then
			echo "1G skipped: the 300M runs predict ${pred} s"
			row "1 GB" "skipped: predicted ${pred} s from 300 MB" "-" "-" "budget ~180 s on the shared machine"
			continue
		fi
	fi
	f=$(gen "$size")
	bytes=$(stat -c %s "$f")
	cat "$f" >/dev/null
	runs=3
	[ "$size" = 1G ] && runs=1
	echo "--- $size: $f ($bytes bytes)"
	measure $runs "$TK" collapse "$f"
	SEC[collapse,$size]=$M_SECS CPU[collapse,$size]=$M_CPU RSS[collapse,$size]=$M_RSS
	printf '%-22s %7s s  %4s MB/s  (cpu %s s: %s MB/s)  %4s MB RSS\n' "collapse (baseline)" "$M_SECS" \
		"$(mbps "$bytes" "$M_SECS")" "$M_CPU" "$(mbps "$bytes" "$M_CPU")" "$(mb "$M_RSS")"
	for fmt in $formats; do
		o="$tmp/out.$fmt"
		measure $runs "$TK" convert "$f" --to "$fmt" -o "$o"
		if [ $M_RC -ne 0 ]; then
			echo "convert --to $fmt failed: $(head -c 200 "$tmp/err")"
			row "convert --to $fmt, $size" "FAILED rc $M_RC" "-" "-" "$(head -c 100 "$tmp/err")"
			continue
		fi
		SEC[$fmt,$size]=$M_SECS CPU[$fmt,$size]=$M_CPU RSS[$fmt,$size]=$M_RSS SIZE[$fmt,$size]=$(stat -c %s "$o")
		rt=$(awk -v a="${SEC[collapse,$size]}" -v b="$M_SECS" 'BEGIN { printf "%.2f", b / a }')
		printf '%-22s %7s s  %4s MB/s  (cpu %s s: %s MB/s)  %4s MB RSS  output %s bytes  (%s× collapse)\n' \
			"convert --to $fmt" "$M_SECS" "$(mbps "$bytes" "$M_SECS")" "$M_CPU" "$(mbps "$bytes" "$M_CPU")" \
			"$(mb "$M_RSS")" "${SIZE[$fmt,$size]}" "$rt"
		met=$(awk -v m="$(mbps "$bytes" "$M_SECS")" -v c="$(mbps "$bytes" "$M_CPU")" 'BEGIN { print (m >= 200 ? "met" : (c >= 200 ? "met on CPU time" : "NOT met")) }')
		row "convert --to $fmt, $size" "$(mbps "$bytes" "$M_SECS") MB/s (cpu $(mbps "$bytes" "$M_CPU")), $(mb "$M_RSS") MB RSS, out $(awk -v b="${SIZE[$fmt,$size]}" 'BEGIN { printf "%.1f MB", b / 1e6 }')" \
			"collapse $(mbps "$bytes" "${SEC[collapse,$size]}") MB/s" "${rt}× collapse time" "≥200 MB/s: $met"
	done
done
last=${sizes[-1]}
[ -n "${SEC[collapse,$last]:-}" ] || last=300M
if [ $quick = 0 ]; then
	for fmt in $formats; do
		a=${RSS[$fmt,100M]:-} b=${RSS[$fmt,$last]:-}
		[ -n "$a" ] && [ -n "$b" ] || continue
		g=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')
		v=$(awk -v g="$g" 'BEGIN { print (g < 1.5 ? "flat" : "GROWS") }')
		echo "peak RSS $fmt: 100M $(mb "$a") MB -> $last $(mb "$b") MB (x$g): $v"
		row "RSS $fmt 100M→$last" "$(mb "$a") → $(mb "$b") MB (×$g): $v" "-" "-" "flat"
	done
fi
for size in "${sizes[@]}"; do
	[ -n "${SIZE[svg,$size]:-}" ] && row "svg size, $size input" "$(awk -v b="${SIZE[svg,$size]}" 'BEGIN { printf "%.1f MB", b / 1e6 }') (default --max-frames 20000, --min-width 0.1)" "-" "-" "a few MB"
done
exit 0
