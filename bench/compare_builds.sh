#!/bin/bash
# Do two builds of tracekit give the same bytes? Runs OLD and NEW over every fixture and a set of
# generated inputs (Records files and session directories: cpu-highload, hang with snapshots, an
# MTHawkeye session) and compares every output byte for byte: info (text, JSON), tree (text, JSON),
# top, collapse, every `convert` format (gecko, speedscope, pprof, svg, folded, json), `records`
# (list, JSON, --tree, --collapse, --threads), `stats --json` (hang.duration, cpu.duration,
# cpu.average), and the store's contents after `ingest` on SQLite and on a real clickhouse-server
# (top-hangs, stats --db, and the rows themselves).
#
#   OLD=/path/to/old/tracekit NEW=build/tracekit bench/compare_builds.sh [--no-clickhouse]
#   (STORE_ONLY=1: the store part alone; about 10 minutes in all on a loaded 2-CPU machine)
#
# Prints "same NAME" or "DIFF NAME" (with the first differing lines) per output and ends with
# "N same, N different"; exits non-zero when anything differs. Outputs are kept in $KEEP if set.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
OLD=${OLD:?set OLD to the tracekit binary to compare against (e.g. a build of main)}
NEW=${NEW:-$ROOT/$BUILD/tracekit}
OLD=$(readlink -f "$OLD") NEW=$(readlink -f "$NEW")
CLICKHOUSE=1
[ "${1:-}" = "--no-clickhouse" ] && CLICKHOUSE=0
TMP=$(mktemp -d)
export TK_ROOT=$ROOT TMP TZ=UTC LC_ALL=C
notok() { echo "compare_builds: $1 ${2:-}" >&2; }
. "$ROOT/tests/store_lib.sh"
trap 'stop_clickhouse; [ -n "${KEEP:-}" ] && cp -r "$TMP"/out "$KEEP"; rm -rf "$TMP"' EXIT
make --no-print-directory -s BUILD="$BUILD" "$BUILD/storegen" >/dev/null
FIX=$ROOT/tests/fixtures
IN=$TMP/in
mkdir -p "$IN" "$TMP/out/old" "$TMP/out/new"

# ---- inputs ----
inputs=()
for f in "$FIX"/xctrace/*.xml "$FIX"/other/*.txt "$FIX"/other/*.txt.gz; do
	case "$f" in *toc_*) continue ;; esac
	[ -f "$f" ] && inputs+=("$f")
done
# MTHawkeye's documented cpu-highload example as a Records file, and as a session (dyld-images)
M=$FIX/mthawkeye
tree=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",",":")))' "$M/cpu-highload-stackframe.doc-example.json")
meta=$(sed 's://.*$::' "$M/cpu-highload.doc-example.jsonc" | tr -d '\n')
{ echo "collection,key,value"
  echo "launch-time,1553511700.5,1553511700.5"
  echo "cpu-highload,575204521.78,$meta"
  echo "cpu-highload-stackframe,575204521.78,$tree"
  echo "cpu-highload,575204600.5,{\"start\":575204600.5,\"lasting\":\"20.5\",\"average\":\"180.25\"}"
  echo "cpu-highload-stackframe,575204600.5,$tree"
  # MTHawkeye ANR records, chunked <unix>_<index>
  echo 'anr,1553511800_0,{"duration":"1250","stacks":[{"stackframes":"0x10234444,0x10234235,0x10234000","capturedCount":3},{"stackframes":"0x10235555,0x10234235","capturedCount":2}]}'
  echo 'anr,1553511800_1,{"stacks":[{"stackframes":"0x10234111,0x10234000","capturedCount":4}]}'
} >"$IN/mthawkeye.records"
mkdir -p "$IN/mth-session"
cp "$IN/mthawkeye.records" "$IN/mth-session/records.mtlog"
printf '{"name":"App","os_version":"iOS 12.1","arch":"arm64 v8","dyld_images":[{"name":"/var/containers/App.app/App","uuid":"11112222333344445555666677778888","base_addr":"0x10230000"}]}\n' >"$IN/mth-session/dyld-images"
inputs+=("$IN/mthawkeye.records" "$IN/mth-session")
# our monitor's sessions (hangs with snapshots and trees; CPU records), several runs per directory
"$ROOT/$BUILD/storegen" "$IN/hangs" 3 4 7 >/dev/null
"$ROOT/$BUILD/storegen" "$IN/cpu" 2 2 11 --cpu 3 >/dev/null
for d in "$IN"/hangs/s* "$IN"/cpu/s*; do inputs+=("$d" "$d/records"); done

same=0 diff=0
cmp_one() { # NAME: compare out/old/NAME and out/new/NAME
	if cmp -s "$TMP/out/old/$1" "$TMP/out/new/$1"; then
		same=$((same + 1)); [ -n "${VERBOSE:-}" ] && echo "same $1"
	else
		diff=$((diff + 1)); echo "DIFF $1"
		diff <(head -c 200000 "$TMP/out/old/$1") <(head -c 200000 "$TMP/out/new/$1") | head -8
	fi
}
run() { # NAME ARGS…: run both builds (stdout + stderr + status), compare
	local name=$1; shift
	(cd "$IN" && "$OLD" "$@" >"$TMP/out/old/$name" 2>"$TMP/out/old/$name.err"; echo "exit $?" >>"$TMP/out/old/$name.err")
	(cd "$IN" && "$NEW" "$@" >"$TMP/out/new/$name" 2>"$TMP/out/new/$name.err"; echo "exit $?" >>"$TMP/out/new/$name.err")
	sed -i "s|$OLD|TRACEKIT|g" "$TMP/out/old/$name.err"; sed -i "s|$NEW|TRACEKIT|g" "$TMP/out/new/$name.err"
	cmp_one "$name"; cmp_one "$name.err"
}

n=0
[ -n "${STORE_ONLY:-}" ] && inputs=() # STORE_ONLY=1: only the store part
for f in "${inputs[@]}"; do
	n=$((n + 1)); b="$n-$(basename "$f")"
	run "$b.info" info "$f"
	run "$b.info.json" info --json "$f"
	run "$b.tree" tree "$f"
	run "$b.tree.json" tree --json "$f"
	run "$b.tree.inv" tree --invert --min-percent 5 "$f"
	run "$b.top" top "$f"
	run "$b.collapse" collapse "$f"
	for to in gecko speedscope pprof svg folded json; do
		run "$b.$to" convert "$f" --to "$to" -o -
	done
	run "$b.gecko.thread1" convert "$f" --to gecko --thread 1 -o -
	run "$b.pprof.focus" convert "$f" --to pprof --hide-system -o -
	case "$f" in
	*records* | */s0* | */mth-session)
		run "$b.records" records "$f"
		run "$b.records.utc" records --utc "$f"
		run "$b.records.json" records --json "$f"
		run "$b.records.nosym" records --no-symbols --json "$f"
		# every record's tree, folded stacks and snapshot
		for k in $("$NEW" records --json "$f" 2>/dev/null | python3 -c 'import json,sys; [print(r["key"]) for r in json.load(sys.stdin)]'); do
			run "$b.records.tree.$k" records "$f" --tree "$k" --min-percent 0
			run "$b.records.collapse.$k" records "$f" --collapse "$k"
			run "$b.records.threads.$k" records "$f" --threads "$k"
		done
		for m in hang.duration cpu.duration cpu.average; do
			run "$b.stats.$m" stats --metric "$m" --json "$f"
		done
		;;
	esac
done
# stats over many inputs at once
[ -z "${STORE_ONLY:-}" ] && run "stats.hang.all" stats --metric hang.duration --json "$IN"/hangs/s*
[ -z "${STORE_ONLY:-}" ] && run "stats.cpu.all" stats --metric cpu.average --json "$IN"/cpu/s* "$IN/mthawkeye.records"

# ---- the store: the same inputs ingested by each build; the stored rows compared ----
store_dump_sqlite() { # DB OUT
	# every column but the ingest time (when each build ran), the id in hex
	sqlite3 "$1" ".mode tabs" "SELECT lower(hex(id)), kind, app, version, build, device, os, session, time, duration,
		avg_cpu, samples, thread, signature, rkey, sid FROM reports ORDER BY id" >"$2" 2>&1
	sqlite3 "$1" ".mode tabs" "SELECT name, sql FROM sqlite_master ORDER BY name" >>"$2" 2>&1
}
for which in old new; do
	bin=$OLD; [ $which = new ] && bin=$NEW
	(cd "$IN" && "$bin" ingest --db "sqlite:$TMP/$which.db" hangs cpu mthawkeye.records mth-session \
		2>&1 | sed "s|$TMP/$which.db|DB|" >"$TMP/out/$which/store.sqlite.ingest")
	store_dump_sqlite "$TMP/$which.db" "$TMP/out/$which/store.sqlite.rows"
	"$bin" top-hangs --db "sqlite:$TMP/$which.db" >"$TMP/out/$which/store.sqlite.top" 2>&1
	"$bin" stats --db "sqlite:$TMP/$which.db" --metric hang.duration --by version --json \
		>"$TMP/out/$which/store.sqlite.stats" 2>&1
done
for x in ingest rows top stats; do cmp_one "store.sqlite.$x"; done
if [ $CLICKHOUSE = 1 ]; then
	start_clickhouse
	for which in old new; do
		bin=$OLD; [ $which = new ] && bin=$NEW
		(cd "$IN" && "$bin" ingest --db "$CH_URL/cmp_$which" hangs cpu mthawkeye.records mth-session \
			2>&1 | sed "s|/cmp_$which|/DB|" >"$TMP/out/$which/store.ch.ingest")
		curl -sf "${CH_HTTP}?database=cmp_$which" --data-binary \
			"SELECT id, kind, app, version, build, device, os, session, time, ts, duration, avg_cpu, samples, thread,
			 signature, rkey FROM reports ORDER BY id FORMAT TabSeparated" \
			>"$TMP/out/$which/store.ch.rows" 2>&1 || echo "the rows query failed" >>"$TMP/out/$which/store.ch.rows"
		echo "$(wc -l <"$TMP/out/$which/store.ch.rows") rows" >>"$TMP/out/$which/store.ch.rows"
		"$bin" top-hangs --db "$CH_URL/cmp_$which" >"$TMP/out/$which/store.ch.top" 2>&1
		"$bin" stats --db "$CH_URL/cmp_$which" --metric hang.duration --by version --json \
			>"$TMP/out/$which/store.ch.stats" 2>&1
	done
	for x in ingest rows top stats; do cmp_one "store.ch.$x"; done
	grep -q "the rows query failed" "$TMP"/out/*/store.ch.rows && { diff=$((diff + 1)); echo "DIFF store.ch.rows: the query failed"; }
fi
echo "$same same, $diff different ($n inputs; old $OLD, new $NEW)"
[ "$diff" -eq 0 ]
