#!/bin/bash
# A Records-heavy input → Firefox Profiler file (`convert --to gecko`): events are part of the model,
# so the input is parsed once (before issue 16 the gecko path read the Records a second time for its
# markers). Counts how often the Records file is opened (strace), the time (wall, best of 3) and
# the peak RSS, for this build and, when TK_OLD names one, a previous build on the same file.
#
#   bench/bench_events.sh [--quick]          (100 MB: one session of ~100 k hangs; --quick: 20 MB)
#   TK_OLD=/path/to/old/tracekit bench/bench_events.sh
set -u
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = --quick ] && quick=1
[ "${BENCH_QUICK:-0}" = 1 ] && quick=1
BUILD=${BUILD:-build}
TK=${TK:-$PWD/$BUILD/tracekit}
OUT=${BENCH_OUT:-$PWD/bench/out}
SUMMARY=${BENCH_SUMMARY:-/dev/null}
make --no-print-directory -s BUILD="$BUILD" "$BUILD/storegen" >/dev/null
[ -x /usr/bin/time ] || { echo "bench_events: GNU time is missing (make deps)"; exit 1; }
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hangs=100000 size=100M
[ $quick = 1 ] && hangs=20000 size=20M
G="$OUT/records-$hangs"
if [ ! -s "$G/s0000000/records" ]; then
	rm -rf "$G"
	"$PWD/$BUILD/storegen" "$G" 1 "$hangs" 9 --cpu 2000 >/dev/null || exit 1
fi
R="$G/s0000000/records"
mb=$(du -m "$R" | cut -f1)
one() { # BIN → "opens wall_s rss_mb"
	local bin=$1 best="" rss=0
	local opens=-
	if command -v strace >/dev/null; then
		opens=$(strace -f -e trace=openat -o "$tmp/trace" "$bin" convert "$R" --to gecko -o "$tmp/out.json" >/dev/null 2>&1 &&
			grep -c "s0000000/records\"" "$tmp/trace")
	fi
	for _ in 1 2 3; do
		t0=$(date +%s%N)
		/usr/bin/time -f '%M' -o "$tmp/rss" "$bin" convert "$R" --to gecko -o "$tmp/out.json" 2>"$tmp/err" ||
			{ echo "bench_events: $bin failed: $(head -c 300 "$tmp/err")"; return 1; }
		t1=$(date +%s%N)
		s=$(((t1 - t0) / 1000000))
		if [ -z "$best" ] || [ "$s" -lt "$best" ]; then best=$s; fi
		r=$(tail -1 "$tmp/rss")
		[ "$r" -gt "$rss" ] && rss=$r
	done
	echo "$opens $(awk -v m="$best" 'BEGIN { printf "%.2f", m / 1000 }') $(awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }')"
}
echo "# Records → gecko, $R ($mb MB, $hangs hangs + 2000 CPU records), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
read -r nopen nwall nrss <<<"$(one "$TK")" || exit 1
echo "this build:  opens the Records file $nopen×, best wall $nwall s, peak RSS $nrss MB"
peer="-" ratio="-"
if [ -n "${TK_OLD:-}" ]; then
	read -r oopen owall orss <<<"$(one "$TK_OLD")"
	echo "TK_OLD:      opens the Records file $oopen×, best wall $owall s, peak RSS $orss MB ($TK_OLD)"
	cmp -s <("$TK_OLD" convert "$R" --to gecko -o -) <("$TK" convert "$R" --to gecko -o -) &&
		echo "outputs: byte-identical" || echo "outputs: DIFFER"
	peer="before: ${oopen} opens, $owall s, $orss MB"
	ratio=$(awk -v a="$owall" -v b="$nwall" 'BEGIN { if (b > 0) printf "%.2f× faster", a / b; else print "-" }')
fi
printf '%s\t%s\t%s\t%s\t%s\t%s\n' events "Records $size → gecko" "${nopen} open(s), $nwall s, $nrss MB" \
	"$peer" "$ratio" "parse once (issue 16)" >>"$SUMMARY"
