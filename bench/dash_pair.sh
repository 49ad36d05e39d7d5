#!/bin/bash
# The dashboard's first views in-process, two builds side by side (bench/dash_get: tk_dashboard_get
# without HTTP): each of bench_dashboard.sh's requests (and a few more) answered by a fresh process
# on its own copy of one store (so every answer is a first view: no answer cache, no page read
# before), its CPU time printed for the old and the new build, and the two bodies compared byte for
# byte. The present (since=) is fixed for both, so date-relative pages compare too.
#
#   OLD_BUILD=/path/to/main/build bench/dash_pair.sh STORE.db
#     OLD_BUILD: a build directory of the other tree (its libtracekit-store.a, libtracekit.a and the
#     tree's include/ beside it); STORE.db: a SQLite store (copied twice under bench/out, never written)
# Prints "old-ms new-ms same|DIFF request" per request and the totals; exits 1 when a body differs.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
OLD_BUILD=${OLD_BUILD:?set OLD_BUILD to the other tree\'s build directory}
SRC=${1:?usage: OLD_BUILD=DIR bench/dash_pair.sh STORE.db}
OUT=${BENCH_OUT:-$ROOT/bench/out}
make --no-print-directory -s BUILD="$BUILD" "$BUILD/bench/dash_get" >/dev/null
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
LIBS="-lsqlite3 -lcurl -lmicrohttpd -lcrypto -lpthread -ldwarf -liberty -lxml2 -lz -lm -ljansson -lelf -lbz2 -llzma -lprotobuf-c"
# shellcheck disable=SC2086 # the library list
cc -I"$OLD_BUILD/../include" -std=c17 -D_GNU_SOURCE -O2 -o "$TMP/dash_get_old" "$ROOT/bench/dash_get.c" \
	"$OLD_BUILD/libtracekit-store.a" "$OLD_BUILD/libtracekit.a" $LIBS
mkdir -p "$OUT"
cp "$SRC" "$OUT/pair-old.db"
cp "$SRC" "$OUT/pair-new.db"
NOW=$(date +%s)
"$TMP/dash_get_old" "sqlite:$OUT/pair-old.db" "$NOW" "$TMP" >/dev/null # a migration, if any, before timing
"$ROOT/$BUILD/bench/dash_get" "sqlite:$OUT/pair-new.db" "$NOW" "$TMP" >/dev/null
B="$ROOT/$BUILD/bench/dash_get"
mkdir -p "$TMP/t"
"$B" "sqlite:$OUT/pair-new.db" "$NOW" "$TMP/t" "/api/top?limit=1" >/dev/null
SIG=$(python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.loads(open(sys.argv[1]).readline())["signature"], safe=""))' "$TMP/t/0.body")
EX=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["example"])' "$TMP/t/0.body")
URLS=("/" "/trends" "/trends?bucket=hour&stat=p99" "/stacks" "/stacks?kind=cpu" "/signature?kind=hang&sig=$SIG"
	"/report?id=$EX" "/compare?a=5.0&b=5.1" "/rules" "/flame.svg?kind=hang" "/flame.svg?kind=hang&sig=$SIG"
	"/stats.svg?kind=hang&sig=$SIG" "/trend.svg" "/diff.svg?a=5.0&b=5.1" "/api/stats?by=version" "/api/top?limit=10"
	"/trends?metric=cpu.duration" "/compare?a_since=14d&a_until=7d&b_since=7d" "/dist.svg" "/api/dist?by=version"
	"/trends?metric=cpu.average" "/api/stats?by=app,version&metric=cpu.average" "/trends?version=5.3")
echo "dash_pair: $(basename "$SRC"), load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; CPU ms of a first view, old new"
diff=0 to=0 tn=0
for u in "${URLS[@]}"; do
	rm -rf "$TMP/o" "$TMP/n" && mkdir "$TMP/o" "$TMP/n"
	o=$("$TMP/dash_get_old" "sqlite:$OUT/pair-old.db" "$NOW" "$TMP/o" "$u" | tail -1 | awk '{ print $1 }')
	n=$("$B" "sqlite:$OUT/pair-new.db" "$NOW" "$TMP/n" "$u" | tail -1 | awk '{ print $1 }')
	s=same
	cmp -s "$TMP/o/0.body" "$TMP/n/0.body" || { s=DIFF; diff=1; }
	to=$((to + o)) tn=$((tn + n))
	printf '%6d %6d  %s  %s\n' "$o" "$n" "$s" "${u:0:60}"
done
printf '%6d %6d  total\n' "$to" "$tn"
rm -f "$OUT/pair-old.db"* "$OUT/pair-new.db"*
exit $diff
