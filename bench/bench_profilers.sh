#!/bin/bash
# Reading speed of the sampling profilers' text readers: `perf script` (lib/read/perf.c, with call
# chains) and DTrace stack aggregations (lib/read/dtrace.c) → model (`tracekit info`), side by side
# with Joyent's stackvis (`stackcollapse` for DTrace, `stackcollapse-perf` for perf: Node ports of
# FlameGraph's stackcollapse scripts, npm, pinned in bench/peer-stackvis; FlameGraph and inferno
# themselves are packaged neither in Debian 12 nor on npm).
#
# Inputs (bench/out, reused): perf-base.txt is `perf record -g` of a C compile (as bench_readers.sh
# makes it), profilers-fields.txt the same recording with every field, from which
# tests/fixtures/perf/gen_from_perf.py writes the DTrace aggregation of its stacks; each is repeated
# to 20 MB and 200 MB. Targets: ≥ 300 MB/s of CPU for perf script; RSS flat from 20 to 200 MB.
set -u
SUMMARY=${BENCH_SUMMARY:-/dev/null}
OUT=${BENCH_OUT:-bench/out}
mkdir -p "$OUT"
SIZES="20 200"
[ "${1:-}" = "--quick" ] || [ "${BENCH_QUICK:-0}" = 1 ] && SIZES=20

# ---- the peer (npm ci into bench/out, once)
SV="$OUT/peer-stackvis"
if [ ! -x "$SV/node_modules/.bin/stackcollapse" ]; then
	mkdir -p "$SV" && cp bench/peer-stackvis/package.json bench/peer-stackvis/package-lock.json "$SV/" &&
		(cd "$SV" && npm ci --no-audit --no-fund --ignore-scripts >/dev/null 2>&1) ||
		echo "stackvis could not be installed (npm): tracekit alone"
fi
NODE=$(command -v node || echo "$PWD/tests/js/node_modules/.bin/node")

# ---- inputs
if [ ! -s "$OUT/profilers-fields.txt" ] || [ ! -s "$OUT/perf-base.txt" ]; then
	perf record -q -g -F 2000 -o "$OUT/profilers.data" -- gcc -O2 -Iinclude -Ilib -I/usr/include/libxml2 -c lib/read/xctrace.c \
		-o "$OUT/xctrace-prof.o" >/dev/null 2>&1 || { echo "perf record unavailable here"; exit 1; }
	[ -s "$OUT/perf-base.txt" ] || perf script -i "$OUT/profilers.data" >"$OUT/perf-base.txt" 2>/dev/null
	perf script -i "$OUT/profilers.data" -F comm,pid,tid,time,period,event,ip,sym,dso --ns >"$OUT/profilers-fields.txt" 2>/dev/null
fi
[ -s "$OUT/dtrace-base.txt" ] || python3 tests/fixtures/perf/gen_from_perf.py dtrace <"$OUT/profilers-fields.txt" >"$OUT/dtrace-base.txt"
for kind in perf dtrace; do
	for MB in $SIZES; do
		f="$OUT/$kind-prof-$MB.txt"
		[ -s "$f" ] && continue
		base=$(stat -c %s "$OUT/$kind-base.txt")
		n=$(((MB * 1000000 + base - 1) / base))
		for _ in $(seq "$n"); do cat "$OUT/$kind-base.txt"; done >"$f"
	done
done

measure() { # CMD… → "wall cpu rss_kb" (input on stdin of the command when the last word is <FILE)
	/usr/bin/time -f '%e %U %S %M' "$@" >/dev/null 2>"$OUT/time.txt" || return 1
	tail -1 "$OUT/time.txt" | awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}'
}
mbs() { python3 -c "print('%.0f' % ($1 / 1e6 / max($2, 0.01)))"; }

for kind in perf dtrace; do
	label=$([ $kind = perf ] && echo 'perf script -g' || echo 'DTrace ustack() aggregation')
	tool=$([ $kind = perf ] && echo stackcollapse-perf || echo stackcollapse)
	for MB in $SIZES; do
		f="$OUT/$kind-prof-$MB.txt"
		size=$(stat -c %s "$f")
		cat "$f" >/dev/null
		if ! r=$(measure "$TK" info "$f"); then
			echo "$kind: tracekit info failed: $(head -c 300 "$OUT/time.txt")"
			printf 'profilers\t%s → model\t(failed)\t-\t-\t-\n' "$label" >>"$SUMMARY"
			continue
		fi
		read -r wall cpu rss <<<"$r"
		echo "$kind $((size / 1000000)) MB: tracekit info ${wall} s wall, ${cpu} s CPU, $((rss / 1024)) MB RSS ($(mbs "$size" "$wall") MB/s wall, $(mbs "$size" "$cpu") MB/s CPU)"
		peer="(not installed)" ratio=-
		if [ -x "$SV/node_modules/.bin/$tool" ]; then
			if p=$(measure sh -c "exec '$NODE' '$SV/node_modules/.bin/$tool' <'$f'"); then
				read -r pw pc pr <<<"$p"
				echo "$kind: stackvis $tool ${pw} s wall, ${pc} s CPU, $((pr / 1024)) MB RSS ($(mbs "$size" "$pc") MB/s CPU)"
				peer="$(mbs "$size" "$pc") MB/s CPU, $((pr / 1024)) MB RSS (stackvis $tool)"
				ratio=$(python3 -c "print('%.0f× (CPU)' % ($pc / max($cpu, 0.01)))")
			else
				peer="(stackvis failed)"
			fi
		fi
		target=$([ $kind = perf ] && echo '≥ 300 MB/s CPU, RSS flat' || echo 'RSS flat')
		printf 'profilers\t%s → model, %d MB\t%s MB/s wall (%s CPU), %d MB RSS\t%s\t%s\t%s\n' "$label" $((size / 1000000)) \
			"$(mbs "$size" "$wall")" "$(mbs "$size" "$cpu")" $((rss / 1024)) "$peer" "$ratio" "$target" >>"$SUMMARY"
	done
done
