#!/bin/bash
# make bench: run every bench/bench_*.sh in turn, then print one summary table.
#
#   bench/run.sh [--quick] [AREA...]     e.g. bench/run.sh --quick xctrace
#
# Protocol for bench/bench_<area>.sh (run from the repository root, gets --quick when given):
#   - print whatever detail it likes on stdout;
#   - append summary rows to "$BENCH_SUMMARY", one per line, tab separated:
#         area <TAB> what <TAB> tracekit <TAB> peer <TAB> ratio <TAB> target / note
#     (free text in each cell, e.g. "512 MB/s, 9 MB RSS"; "-" when there is nothing to say);
#   - exit non-zero only when it could not run at all (a missed target is a result, not a failure).
# Environment for the scripts: TK (tracekit binary), BUILD, BENCH_OUT (bench/out, gitignored, for
# generated inputs that are reused between runs), BENCH_QUICK (1 with --quick).
set -u
cd "$(dirname "$0")/.."
quick=0
areas=()
for a in "$@"; do
	case $a in
	--quick) quick=1 ;;
	-h | --help) sed -n '2,14p' "$0"; exit 0 ;;
	*) areas+=("$a") ;;
	esac
done
export BUILD=${BUILD:-build}
export TK="$PWD/$BUILD/tracekit" BENCH_OUT="${BENCH_OUT:-$PWD/bench/out}" BENCH_QUICK=$quick
export BENCH_SUMMARY
BENCH_SUMMARY=$(mktemp)
trap 'rm -f "$BENCH_SUMMARY"' EXIT
mkdir -p "$BENCH_OUT"

qarg=()
[ "$quick" = 1 ] && qarg=(--quick)
failed=()
for s in bench/bench_*.sh; do
	[ -f "$s" ] || continue
	area=$(basename "$s" .sh)
	area=${area#bench_}
	if [ ${#areas[@]} -gt 0 ] && [[ ! " ${areas[*]} " == *" $area "* ]]; then
		continue
	fi
	echo "=== bench/$area"
	before=$(wc -l <"$BENCH_SUMMARY")
	if ! bash "$s" "${qarg[@]}"; then
		failed+=("$area")
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$area" "(did not run)" "-" "-" "-" "see output above" >>"$BENCH_SUMMARY"
	elif [ "$(wc -l <"$BENCH_SUMMARY")" -eq "$before" ]; then
		# a script that prints its own report and writes no summary rows
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$area" "(ran; no summary rows)" "-" "-" "-" "see its output above" >>"$BENCH_SUMMARY"
	fi
	echo
done

echo "=== summary ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg))"
{
	printf 'area\twhat\ttracekit\tpeer\tratio\ttarget / note\n'
	cat "$BENCH_SUMMARY"
} | awk -F'\t' '
	{ for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } if (NF > nf) nf = NF; n = NR }
	END {
		for (r = 1; r <= n; r++) {
			line = ""
			for (i = 1; i <= nf; i++) line = line sprintf("%-" w[i] "s", cell[r, i]) (i < nf ? "  " : "")
			print line
			if (r == 1) { sep = ""; for (i = 1; i <= nf; i++) { s = ""; for (k = 0; k < w[i]; k++) s = s "-"; sep = sep s (i < nf ? "  " : "") } print sep }
		}
	}'
[ ${#failed[@]} -eq 0 ] || { echo "could not run: ${failed[*]}"; exit 1; }
