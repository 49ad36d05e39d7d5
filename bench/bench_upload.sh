#!/bin/bash
# Upload path benchmark: the same inputs into a fresh SQLite store two ways, side by side in one run —
# `tracekit upload` to a `tracekit serve --ingest` on 127.0.0.1 (one gzip'd bundle per session or
# profile, one HTTP request each, acknowledged after its group committed) against `tracekit ingest`
# straight into the store (batches of 5000 reports, parsing on every CPU). The ratio is what the
# network path costs per report. Sessions go twice: `upload --pack 1` (one session a request, 8 in
# flight, as before packs) and the default (`--jobs 8 --pack 32`: 32 sessions a request, the server
# commits concurrent requests together; issue 20 item 13: target >= 30 k reports/s). Each line gives
# the rate and the CPU per report of the client (upload or ingest) and of serve: on a loaded machine
# the rates are starved, the CPU per report is what to compare.
#
#   bench/bench_upload.sh [--quick]     (full: 2000 sessions × 20 hangs + 200 exports; --quick: 500 + 50)
#   TK_OLD=/path/to/old/tracekit bench/bench_upload.sh   also sends the sessions with that build's
#                                       upload → serve (its own defaults) in the same run
#   UPLOAD_ONLY=1: the sessions alone (no exports)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
TK=${TK:-$ROOT/$BUILD/tracekit}
OUT=${BENCH_OUT:-$ROOT/bench/out}
SESSIONS=2000 HANGS=20 EXPORTS=200
if [ "${1:-}" = "--quick" ]; then SESSIONS=500 EXPORTS=50; fi
make --no-print-directory -s BUILD="$BUILD" "$BUILD/storegen" >/dev/null
mkdir -p "$OUT"
TMP=$(mktemp -d)
SRV=
trap 'kill $SRV 2>/dev/null || true; rm -rf "$TMP"' EXIT
export TK_ROOT=$ROOT TMP
. "$ROOT/tests/store_lib.sh"
T="$TMP/time"
run() { /usr/bin/time -f '%e %U %S' -o "$T" "$@"; read -r WALL U S <"$T"; CPU=$(awk -v u="$U" -v s="$S" 'BEGIN { printf "%.2f", u + s }'); }
us() { awk -v c="$1" -v n="$2" 'BEGIN { printf "%.0f", c * 1e6 / n }'; } # CPU seconds → µs per report
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", n / t }'; }
sum() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"${BENCH_SUMMARY:-/dev/null}"; }

G="$OUT/upload-$SESSIONS-$HANGS"
if [ ! -f "$G/truth.tsv" ]; then
	rm -rf "$G"
	"$ROOT/$BUILD/storegen" "$G" "$SESSIONS" "$HANGS" 7 >/dev/null
fi
# exports: the fixtures' time profiles, each copy made distinct by a trailing comment
X="$TMP/exports"
mkdir -p "$X"
i=0
while [ $i -lt "$EXPORTS" ]; do
	for f in "$ROOT"/tests/fixtures/xctrace/time-profile_*.xml; do
		[ $i -lt "$EXPORTS" ] || break
		{ cat "$f"; echo "<!-- copy $i -->"; } >"$X/e$i.xml"
		i=$((i + 1))
	done
done
XB=$(du -sb "$X" | cut -f1)
R=$((SESSIONS * HANGS))
echo "t0k3n-for-bench" >"$TMP/token"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/v1/reports"
serve() { # DB [BINARY]
	: >"$TMP/serve.log"
	"${2:-$TK}" serve --ingest --db "$1" --listen "127.0.0.1:$PORT" --token-file "$TMP/token" 2>>"$TMP/serve.log" &
	SRV=$!
	for _ in $(seq 100); do grep -q "serving on" "$TMP/serve.log" && return 0; sleep 0.05; done
	echo "bench_upload: serve did not start" >&2; exit 1
}
old_sessions() { # the previous build, side by side: its upload (one session at a time) → its serve
	serve "sqlite:$TMP/served-old.db" "$TK_OLD"
	rm -f "$G"/*/uploaded
	run "$TK_OLD" upload --url "$URL" --token-file "$TMP/token" "$G" 2>"$TMP/up-old.log"
	OW=$WALL OC=$CPU OSC=$(srv_cpu)
	kill $SRV; wait $SRV 2>/dev/null || true
	n3=$(sqlite3 "$TMP/served-old.db" 'SELECT count(*) FROM reports')
	[ "$n3" = "$R" ] || { echo "bench_upload: the previous build stored $n3 of $R" >&2; exit 1; }
	printf '%-34s %8s s %9s reports/s  CPU upload %s + serve %s µs/report (%s + %s s)\n' "previous build: upload → serve" "$OW" \
		"$(rate $R "$OW")" "$(us "$OC" $R)" "$(us "$OSC" $R)" "$OC" "$OSC"
}
srv_cpu() { awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$SRV/stat"; }

echo "# upload vs ingest, SQLite, $R reports in $SESSIONS sessions + $EXPORTS exports ($((XB / 1024)) KiB), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
# reports
run "$TK" ingest -q --db "sqlite:$TMP/direct.db" "$G"
IW=$WALL IC=$CPU
printf '%-34s %8s s %9s reports/s  CPU %s µs/report (%s s)\n' "tracekit ingest (direct)" "$IW" "$(rate $R "$IW")" "$(us "$IC" $R)" "$IC"
n1=$(sqlite3 "$TMP/direct.db" 'SELECT count(*) FROM reports')
[ -n "${TK_OLD:-}" ] && old_sessions
for PACK in ${PACKS:-1 32}; do # PACKS=32: the default only
	JOBS=8
	serve "sqlite:$TMP/served$PACK.db"
	rm -f "$G"/*/uploaded # fresh sessions, as a fleet's are (--force would replace every mark)
	run "$TK" upload --url "$URL" --token-file "$TMP/token" --jobs "$JOBS" --pack "$PACK" "$G" 2>"$TMP/up.log"
	UW=$WALL UC=$CPU SC=$(srv_cpu)
	kill $SRV; wait $SRV 2>/dev/null || true
	commits=$(grep -o '([0-9]* commits)' "$TMP/serve.log" | tr -dc 0-9)
	n2=$(sqlite3 "$TMP/served$PACK.db" 'SELECT count(*) FROM reports')
	[ "$n1" = "$R" ] && [ "$n2" = "$R" ] || { echo "bench_upload: stored $n1 / $n2 of $R" >&2; exit 1; }
	printf '%-34s %8s s %9s reports/s  CPU upload %s + serve %s = %s µs/report (%s + %s s, %s commits)\n' \
		"tracekit upload --pack $PACK → serve" "$UW" "$(rate $R "$UW")" "$(us "$UC" $R)" "$(us "$SC" $R)" \
		"$(us "$(awk -v a="$UC" -v b="$SC" 'BEGIN { print a + b }')" $R)" "$UC" "$SC" "$commits"
	ratio=$(awk -v a="$UW" -v b="$IW" 'BEGIN { printf "%.1f×", a / b }')
	sum upload "$R reports in $SESSIONS sessions → SQLite: upload --jobs $JOBS --pack $PACK → serve vs ingest" \
		"$(rate $R "$UW") reports/s ($(rate $SESSIONS "$UW") sessions/s, $commits commits; CPU µs/report: upload $(us "$UC" $R) + serve $(us "$SC" $R))" "ingest $(rate $R "$IW") reports/s (CPU $(us "$IC" $R) µs/report)" \
		"upload $ratio slower" "≥ 30 k reports/s (group commit)"
	if [ -n "${TK_OLD:-}" ] && [ "$PACK" = 32 ]; then
		sum upload "$R reports in $SESSIONS sessions → SQLite: upload → serve, this build (-j 8) vs TK_OLD" \
			"$(rate $R "$UW") reports/s, CPU $UC + $SC s" "$(rate $R "$OW") reports/s, CPU $OC + $OSC s" \
			"$(awk -v a="$OW" -v b="$UW" 'BEGIN { printf "%.1f× faster", a / b }')" "≥ 30 k reports/s"
	fi
done
[ -n "${UPLOAD_ONLY:-}" ] && exit 0
# profiles
run "$TK" ingest -q --db "sqlite:$TMP/pdirect.db" --set app=Bench "$X"
IW=$WALL
serve "sqlite:$TMP/pserved.db"
run "$TK" upload --url "$URL" --token-file "$TMP/token" --set app=Bench "$X" 2>"$TMP/pup.log"
UW=$WALL SC=$(srv_cpu)
kill $SRV; wait $SRV 2>/dev/null || true
p1=$(sqlite3 "$TMP/pdirect.db" 'SELECT count(*) FROM profiles'); p2=$(sqlite3 "$TMP/pserved.db" 'SELECT count(*) FROM profiles')
[ "$p1" = "$EXPORTS" ] && [ "$p2" = "$EXPORTS" ] || { echo "bench_upload: stored $p1 / $p2 of $EXPORTS profiles" >&2; exit 1; }
printf '%-34s %8s s %9s exports/s\n' "tracekit ingest (direct)" "$IW" "$(rate "$EXPORTS" "$IW")"
printf '%-34s %8s s %9s exports/s  (serve CPU %s s)\n' "tracekit upload → serve --ingest" "$UW" "$(rate "$EXPORTS" "$UW")" "$SC"
ratio=$(awk -v a="$UW" -v b="$IW" 'BEGIN { printf "%.1f×", a / b }')
sum upload "$EXPORTS xctrace exports ($((XB / 1024)) KiB) → SQLite: upload → serve vs ingest" \
	"$(rate "$EXPORTS" "$UW") exports/s" "ingest $(rate "$EXPORTS" "$IW") exports/s" "upload $ratio slower" "-"
