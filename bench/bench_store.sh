#!/bin/bash
# Fleet store benchmark: ingest rate and the grouped percentile query, SQLite and one ClickHouse node
# (Debian's clickhouse-server started here on 127.0.0.1, as in the tests), side by side with each
# engine's own way of answering the same question.
#
#   bench/bench_store.sh [--quick] [--compact-only]   (full: 1 M reports; --quick: 100 k; 4. alone)
#   TK_OLD=/path/to/old/tracekit bench/bench_store.sh   also runs that binary's ingest on the same
#                                        input in the same run (side by side with a previous build)
#
# 1. end to end: `tracekit ingest` over generated session directories (storegen: records +
#    images.json + meta.json, 50 hangs a session), i.e. parsing the Records files included;
# 2. the store alone: bench/store_put puts N already-parsed reports in batches of 100 k (what one
#    SQLite file or ClickHouse node takes when many ingesters/serve instances feed it);
# 3. `tracekit stats --db … --metric hang.duration --by version` (P50…P99.9, exact type 7) and
#    `tracekit top-hangs`, best of 3; peers: SQLite with type 7 written in plain SQL (window
#    functions), ClickHouse's own quantilesExact (no interpolation, so not type 7: a speed reference).
# 4. `tracekit store compact` (issue 20 item 14) on stores raced by two concurrent ingests of the same
#    sessions (ClickHouse keeps both copies and marks the batches raced, so grouped queries read each
#    report once with a dedup step; SQLite has one writer at a time): stats --by version and top-hangs,
#    best of 3, before and after the compaction, against a store that ingested the input once.
# Rates are wall-clock; CPU (user+sys of the client, plus the server's for ClickHouse) is printed
# too, because this machine is shared and the load is reported with the summary.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
TK=${TK:-$ROOT/$BUILD/tracekit}
OUT=${BENCH_OUT:-$ROOT/bench/out}
SESSIONS=20000 HANGS=50 N=1000000 COMPACT_ONLY=0
for a in "$@"; do
	case $a in
	--quick) SESSIONS=2000 N=100000 ;;
	--compact-only) COMPACT_ONLY=1 ;;
	esac
done
make --no-print-directory -s BUILD="$BUILD" "$BUILD/storegen" "$BUILD/bench/store_put" >/dev/null
mkdir -p "$OUT"
TMP=$(mktemp -d)
export TK_ROOT=$ROOT TMP
notok() { echo "bench_store: $1 ${2:-}" >&2; }
. "$ROOT/tests/store_lib.sh"
trap 'stop_clickhouse; rm -rf "$TMP"' EXIT
start_clickhouse
CH_PID_STAT=/proc/$CH_PID/stat
server_cpu() { awk '{ printf "%.2f", ($14 + $15) / 100 }' "$CH_PID_STAT"; }

G="$OUT/store-$SESSIONS-$HANGS"
if [ ! -f "$G/truth.tsv" ]; then
	echo "bench_store: generating $SESSIONS sessions × $HANGS hangs in $G (once)…" >&2
	rm -rf "$G"
	"$ROOT/$BUILD/storegen" "$G" "$SESSIONS" "$HANGS" 42
fi
R=$((SESSIONS * HANGS))
T="$TMP/time"
run() { # CMD…: sets WALL CPU
	/usr/bin/time -f '%e %U %S' -o "$T" "$@"
	read -r WALL U S <"$T"
	CPU=$(awk -v u="$U" -v s="$S" 'BEGIN { printf "%.2f", u + s }')
}
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", n / t }'; }
best3() { # CMD…: BEST = the lowest wall time of 3 runs
	BEST=
	for _ in 1 2 3; do
		run "$@" >/dev/null
		BEST=$(awk -v a="${BEST:-1e9}" -v b="$WALL" 'BEGIN { print (b < a ? b : a) }')
	done
}
sum() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"${BENCH_SUMMARY:-/dev/null}"; }

echo "# fleet store, $R generated reports ($SESSIONS sessions), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
DB_SQ="sqlite:$TMP/fleet.db" DB_CH="$CH_URL/bench"

compact_bench() {
	local q="$TMP/compact-q" name db
	queries() { # DB: QS = best-of-3 wall of stats --by version + top-hangs
		best3 "$TK" stats --db "$1" --metric hang.duration --by version --json
		QS=$BEST
		best3 "$TK" top-hangs --db "$1" --limit 100
		QS=$(awk -v a="$QS" -v b="$BEST" 'BEGIN { printf "%.2f", a + b }')
	}
	for name in sqlite clickhouse; do
		if [ $name = sqlite ]; then db="sqlite:$TMP/race.db" ref="sqlite:$TMP/once.db"; else db="$CH_URL/race" ref="$CH_URL/once"; fi
		"$TK" ingest -q --db "$ref" "$G"
		queries "$ref"
		local once=$QS
		"$TK" stats --db "$ref" --metric hang.duration --by version --json >"$q.ref"
		# two ingesters of the same sessions at once, in small batches so their batches interleave
		"$TK" ingest -q --jobs 1 --batch 2000 --db "$db" "$G" &
		local p1=$!
		"$TK" ingest -q --jobs 1 --batch 2000 --db "$db" "$G" || true
		wait $p1 || true
		queries "$db"
		local raced=$QS
		local extra=""
		[ $name = clickhouse ] && extra=$(curl -s --data-binary "SELECT count() - uniqExact(kind, id) FROM race.reports" "http://127.0.0.1:$CH_PORT/")
		local c0; c0=$(server_cpu)
		run "$TK" store compact --db "$db"
		local cw=$WALL cc=$CPU cs; cs=$(awk -v a="$c0" -v b="$(server_cpu)" 'BEGIN { printf "%.2f", b - a }')
		queries "$db"
		local after=$QS
		"$TK" stats --db "$db" --metric hang.duration --by version --json >"$q.after"
		local same="answers = the once-ingested store's"
		cmp -s "$q.ref" "$q.after" || same="ANSWERS DIFFER from the once-ingested store's"
		echo "compact $name ($R reports ingested twice at once${extra:+, $extra extra copies}): stats + top-hangs $raced s raced → $after s after compact ($cw s wall, CPU $cc s${extra:+ + server $cs s}); ingested once: $once s; $same"
		sum store "store compact, $name: $R reports raced by 2 concurrent ingests; stats --by version + top-hangs (best of 3)" "raced $raced s → compacted $after s (compact $cw s)" "ingested once: $once s" "$(awk -v a="$raced" -v b="$after" 'BEGIN { printf "%.1f× faster after", a / b }')" "back to the un-raced speed; $same"
	done
}
if [ $COMPACT_ONLY = 1 ]; then
	compact_bench
	exit 0
fi

run "$TK" ingest -q --db "$DB_SQ" "$G"
sq_ingest_wall=$WALL sq_ingest_cpu=$CPU
c0=$(server_cpu)
run "$TK" ingest -q --db "$DB_CH" "$G"
ch_ingest_wall=$WALL ch_ingest_cpu=$CPU ch_ingest_srv=$(awk -v a="$c0" -v b="$(server_cpu)" 'BEGIN { printf "%.2f", b - a }')
echo "ingest (parse + store) sqlite:     $R in $sq_ingest_wall s = $(rate $R "$sq_ingest_wall")/s (CPU $sq_ingest_cpu s; load $(cut -d' ' -f1 /proc/loadavg))"
echo "ingest (parse + store) clickhouse: $R in $ch_ingest_wall s = $(rate $R "$ch_ingest_wall")/s (CPU $ch_ingest_cpu s + server $ch_ingest_srv s)"
if [ -n "${TK_OLD:-}" ]; then
	run "$TK_OLD" ingest -q --db "sqlite:$TMP/old.db" "$G"
	old_sq_wall=$WALL old_sq_cpu=$CPU
	c0=$(server_cpu)
	run "$TK_OLD" ingest -q --db "$CH_URL/bench_old" "$G"
	old_ch_wall=$WALL old_ch_cpu=$CPU old_ch_srv=$(awk -v a="$c0" -v b="$(server_cpu)" 'BEGIN { printf "%.2f", b - a }')
	echo "previous build ($TK_OLD) sqlite:     $R in $old_sq_wall s = $(rate $R "$old_sq_wall")/s (CPU $old_sq_cpu s; load $(cut -d' ' -f1 /proc/loadavg))"
	echo "previous build ($TK_OLD) clickhouse: $R in $old_ch_wall s = $(rate $R "$old_ch_wall")/s (CPU $old_ch_cpu s + server $old_ch_srv s)"
	sum store "ingest $R end to end, sqlite: this build vs TK_OLD" "$(rate $R "$sq_ingest_wall")/s, CPU $sq_ingest_cpu s" "$(rate $R "$old_sq_wall")/s, CPU $old_sq_cpu s" "$(awk -v a="$old_sq_cpu" -v b="$sq_ingest_cpu" 'BEGIN { printf "%.2f× CPU", a / b }')" "≥ 20 k/s"
	sum store "ingest $R end to end, clickhouse: this build vs TK_OLD" "$(rate $R "$ch_ingest_wall")/s, CPU $ch_ingest_cpu s + server $ch_ingest_srv s" "$(rate $R "$old_ch_wall")/s, CPU $old_ch_cpu s + server $old_ch_srv s" "$(awk -v a="$old_ch_cpu" -v b="$ch_ingest_cpu" 'BEGIN { printf "%.2f× client CPU", a / b }')" "≥ 100 k/s"
fi

run "$ROOT/$BUILD/bench/store_put" "sqlite:$TMP/put.db" "$N" 100000
sq_put_wall=$WALL sq_put_cpu=$CPU
c0=$(server_cpu)
run "$ROOT/$BUILD/bench/store_put" "$CH_URL/put" "$N" 100000
ch_put_wall=$WALL ch_put_cpu=$CPU ch_put_srv=$(awk -v a="$c0" -v b="$(server_cpu)" 'BEGIN { printf "%.2f", b - a }')
echo "store alone sqlite:     $N in $sq_put_wall s = $(rate "$N" "$sq_put_wall")/s (CPU $sq_put_cpu s, report generation included)"
echo "store alone clickhouse: $N in $ch_put_wall s = $(rate "$N" "$ch_put_wall")/s (CPU $ch_put_cpu s + server $ch_put_srv s)"

# the numbers agree across backends (and with the generator: count per version)
"$TK" stats --db "$DB_SQ" --metric hang.duration --by version --json >"$TMP/sq.json"
"$TK" stats --db "$DB_CH" --metric hang.duration --by version --json >"$TMP/ch.json"
if cmp -s "$TMP/sq.json" "$TMP/ch.json"; then agree="identical JSON on both"; else agree="BACKENDS DISAGREE"; fi
echo "stats --by version: $agree"; cat "$TMP/sq.json"

best3 "$TK" stats --db "$DB_SQ" --metric hang.duration --by version --json
sq_q=$BEST
best3 "$TK" stats --db "$DB_CH" --metric hang.duration --by version --json
ch_q=$BEST
best3 "$TK" top-hangs --db "$DB_SQ"
sq_top=$BEST
best3 "$TK" top-hangs --db "$DB_CH"
ch_top=$BEST
# peers: type 7 in plain SQLite SQL; ClickHouse's quantilesExact (nearest rank)
P7="$TMP/peer.sql"
{
	echo "WITH r AS (SELECT version, duration, row_number() OVER (PARTITION BY version ORDER BY duration) - 1 AS i,"
	echo "  count(*) OVER (PARTITION BY version) AS n FROM reports WHERE kind = 'hang' AND duration IS NOT NULL)"
	printf "SELECT version, count(*), min(duration), max(duration)"
	for p in 0.5 0.9 0.95 0.99 0.999; do
		printf ", max(CASE WHEN i = CAST((n - 1) * %s AS INTEGER) THEN duration END) + ((n - 1) * %s - CAST((n - 1) * %s AS INTEGER)) * (max(CASE WHEN i = min(CAST((n - 1) * %s AS INTEGER) + 1, n - 1) THEN duration END) - max(CASE WHEN i = CAST((n - 1) * %s AS INTEGER) THEN duration END))" $p $p $p $p $p
	done
	echo " FROM r GROUP BY version ORDER BY version;"
} >"$P7"
best3 sqlite3 "$TMP/fleet.db" ".read $P7"
sq_peer=$BEST
best3 curl -s --data-binary "SELECT version, count(), quantilesExact(0.5, 0.9, 0.95, 0.99, 0.999)(assumeNotNull(duration)) FROM bench.reports WHERE kind = 'hang' GROUP BY version ORDER BY version" "http://127.0.0.1:$CH_PORT/"
ch_peer=$BEST
echo "P50…P99.9 by version: sqlite $sq_q s (plain-SQL type 7: $sq_peer s), clickhouse $ch_q s (quantilesExact: $ch_peer s)"
echo "top-hangs: sqlite $sq_top s, clickhouse $ch_top s"
du -sh "$TMP/fleet.db" | awk '{ print "sqlite file: " $1 }'
curl -s --data-binary "SELECT formatReadableSize(sum(bytes_on_disk)) FROM system.parts WHERE database = 'bench' AND active" "http://127.0.0.1:$CH_PORT/" | awk '{ print "clickhouse parts: " $0 }'

sum store "ingest $R reports end to end (parse + store), sqlite" "$(rate $R "$sq_ingest_wall")/s, CPU $sq_ingest_cpu s" "-" "-" "≥ 20 k/s"
sum store "ingest $R reports end to end, one clickhouse node" "$(rate $R "$ch_ingest_wall")/s, CPU $ch_ingest_cpu s + server $ch_ingest_srv s" "-" "-" "≥ 100 k/s (parse-bound: see store alone)"
sum store "store alone, $N parsed reports, sqlite" "$(rate "$N" "$sq_put_wall")/s" "-" "-" "≥ 20 k/s"
sum store "store alone, $N parsed reports, clickhouse" "$(rate "$N" "$ch_put_wall")/s, server CPU $ch_put_srv s" "-" "-" "≥ 100 k/s"
sum store "P50…P99.9 by version over $R, sqlite" "$sq_q s" "plain-SQL type 7: $sq_peer s" "$(awk -v a="$sq_peer" -v b="$sq_q" 'BEGIN { printf "%.1f×", a / b }')" "≤ 1 s; $agree"
sum store "P50…P99.9 by version over $R, clickhouse" "$ch_q s" "quantilesExact (not type 7): $ch_peer s" "$(awk -v a="$ch_peer" -v b="$ch_q" 'BEGIN { printf "%.1f×", a / b }')" "≤ 1 s"
sum store "top-hangs over $R, sqlite / clickhouse" "$sq_top s / $ch_top s" "-" "-" "-"
compact_bench
