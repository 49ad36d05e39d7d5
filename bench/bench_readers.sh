#!/bin/bash
# Reading speed of the text readers: `perf script` text and folded stacks → model (`tracekit info`),
# side by side with the Firefox Profiler's own importers for the same two formats (its
# import/linux-perf and import/flame-graph code, run by npm's @firefox-devtools/profiler-cli, pinned in
# tests/js). The peer's time is the import alone, from its daemon's log ("Loading profile from" →
# "Profile loaded successfully"), so Node's start-up is not counted against it.
#
# Inputs (bench/out, reused): perf.txt is real `perf record -g` of a C compile (cc1's deep stacks),
# its `perf script` text repeated to the size wanted; folded.txt is seeded synthetic folded stacks
# (many distinct stacks, 8 threads). Side by side on 20 MB of each (the peer needs minutes for 20 MB
# of folded text); the full run also reads 200 MB of each with tracekit alone (speed, flat RSS).
set -u
SUMMARY=${BENCH_SUMMARY:-/dev/null}
OUT=${BENCH_OUT:-bench/out}
mkdir -p "$OUT"
SIZES="20 200"
[ "${1:-}" = "--quick" ] || [ "${BENCH_QUICK:-0}" = 1 ] && SIZES=20
JS="$PWD/tests/js/node_modules/.bin"
NODE="$JS/node"

# ---- inputs
if [ ! -s "$OUT/perf-base.txt" ]; then
	if perf record -q -g -F 2000 -o "$OUT/perf-base.data" -- gcc -O2 -Iinclude -Ilib -I/usr/include/libxml2 -c lib/read/xctrace.c \
		-o "$OUT/xctrace.o" >/dev/null 2>&1 && perf script -i "$OUT/perf-base.data" >"$OUT/perf-base.txt" 2>/dev/null &&
		[ -s "$OUT/perf-base.txt" ]; then
		echo "perf-base.txt: perf record -g of gcc -O2 -c lib/read/xctrace.c ($(grep -c '^[^[:space:]#]' "$OUT/perf-base.txt") samples)"
	else
		echo "perf record unavailable here: using the recorded fixture as the base"
		cp tests/fixtures/other/perf-script_linux6.1_ls-kernel-pid-tid_generated.txt "$OUT/perf-base.txt"
	fi
fi
for MB in $SIZES; do
	if [ ! -s "$OUT/perf-$MB.txt" ]; then
		base=$(stat -c %s "$OUT/perf-base.txt")
		n=$(((MB * 1000000 + base - 1) / base))
		for _ in $(seq "$n"); do cat "$OUT/perf-base.txt"; done >"$OUT/perf-$MB.txt"
	fi
	if [ ! -s "$OUT/folded-$MB.txt" ]; then
		python3 - "$MB" >"$OUT/folded-$MB.txt" <<-'EOF'
	import random, sys
	random.seed(7)
	target = int(sys.argv[1]) * 1000000
	words = ["Engine", "Render", "Layout", "Parser", "Cache", "Buffer", "Queue", "Worker", "Node", "Table"]
	names = ["%s::%s%d(%s const&)" % (random.choice(words), random.choice(words).lower(), i, random.choice(words))
	         for i in range(4000)]
	out, size = [], 0
	while size < target:
	    t = random.randrange(8)
	    depth = random.randint(5, 40)
	    stack = ["worker %d tid=%d" % (t, 1000 + t)] + [names[int(random.paretovariate(1.2)) % len(names)] for _ in range(depth)]
	    line = "%s %d\n" % (";".join(stack), random.randint(1, 1000))
	    out.append(line)
	    size += len(line)
	sys.stdout.write("".join(out))
	EOF
	fi
done

# folded-rep-N.txt: what a real collapse looks like in bulk, a bounded set of stacks repeated (many
# runs of one program, files concatenated): 20,000 distinct synthetic stacks (same generator, sorted as
# collapse tools write them, 13.6 MB) repeated to N MB. Its RSS must not grow with N.
if [ ! -s "$OUT/folded-base.txt" ]; then
	python3 - >"$OUT/folded-base.txt" <<-'EOF'
	import random
	random.seed(7)
	words = ["Engine", "Render", "Layout", "Parser", "Cache", "Buffer", "Queue", "Worker", "Node", "Table"]
	names = ["%s::%s%d(%s const&)" % (random.choice(words), random.choice(words).lower(), i, random.choice(words))
	         for i in range(4000)]
	out = []
	for _ in range(20000):
	    t = random.randrange(8)
	    depth = random.randint(5, 40)
	    stack = ["worker %d tid=%d" % (t, 1000 + t)] + [names[int(random.paretovariate(1.2)) % len(names)] for _ in range(depth)]
	    out.append("%s %d\n" % (";".join(stack), random.randint(1, 1000)))
	print("".join(sorted(out)), end="")
	EOF
fi
for MB in $SIZES; do
	if [ ! -s "$OUT/folded-rep-$MB.txt" ]; then
		base=$(stat -c %s "$OUT/folded-base.txt")
		n=$(((MB * 1000000 + base - 1) / base))
		for _ in $(seq "$n"); do cat "$OUT/folded-base.txt"; done >"$OUT/folded-rep-$MB.txt"
	fi
done

# ---- tracekit: wall, CPU and peak RSS of `info` (read → model)
ours() { # FILE → "wall cpu rss_kb"
	cat "$1" >/dev/null
	/usr/bin/time -f '%e %U %S %M' "$TK" info "$1" >/dev/null 2>"$OUT/time.txt" || return 1
	tail -1 "$OUT/time.txt" | awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}'
}

# ---- peer: the Firefox Profiler's importer in profiler-cli's daemon
peer() { # FILE → "seconds rss_kb" or nothing
	[ -x "$NODE" ] || return 1
	local home
	home=$(mktemp -d)
	HOME="$home" timeout 900 "$NODE" "$JS/profiler-cli" load "$1" >/dev/null 2>&1
	local log t0 t1 pid rss=0
	for _ in $(seq 1800); do
		log=$(ls "$home"/.profiler-cli/*.log 2>/dev/null | head -1)
		[ -n "$log" ] && grep -qE 'Profile loaded successfully|rror' "$log" && break
		sleep 0.5
	done
	pid=$(sed -n 's/.*pid \([0-9]*\).*/\1/p' "$log" 2>/dev/null | head -1)
	[ -z "$pid" ] && pid=$(ps -eo pid,args | awk -v f="$1" 'index($0, "node") && index($0, f) {print $1; exit}')
	[ -n "$pid" ] && rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null)
	t0=$(sed -n 's/^\[LOG\] \([^ ]*\) Loading profile from.*/\1/p' "$log" | head -1)
	t1=$(sed -n 's/^\[LOG\] \([^ ]*\) Profile loaded successfully.*/\1/p' "$log" | head -1)
	HOME="$home" timeout 60 "$NODE" "$JS/profiler-cli" stop --all >/dev/null 2>&1
	rm -rf "$home"
	[ -n "$t0" ] && [ -n "$t1" ] || return 1
	python3 -c 'import sys, datetime as d
f = lambda s: d.datetime.fromisoformat(s.replace("Z", "+00:00"))
print("%.2f %s" % ((f(sys.argv[2]) - f(sys.argv[1])).total_seconds(), sys.argv[3] or 0))' "$t0" "$t1" "${rss:-0}"
}

for kind in perf folded folded-rep; do
	for MB in $SIZES; do
		f="$OUT/$kind-$MB.txt"
		size=$(stat -c %s "$f")
		read -r wall cpu rss < <(ours "$f")
		mbs=$(python3 -c "print('%.0f' % ($size / 1e6 / max($wall, 0.01)))")
		cmbs=$(python3 -c "print('%.0f' % ($size / 1e6 / max($cpu, 0.01)))")
		echo "$kind $((size / 1000000)) MB: tracekit info ${wall} s wall, ${cpu} s CPU, $((rss / 1024)) MB RSS ($mbs MB/s wall, $cmbs MB/s CPU)"
		case $kind in
		perf) label="perf script → model, $((size / 1000000)) MB" ;;
		folded) label="folded (all-distinct stacks) → model, $((size / 1000000)) MB" ;;
		*) label="folded (20k stacks repeated) → model, $((size / 1000000)) MB" ;;
		esac
		if [ "$MB" != 20 ] || [ "$kind" = folded-rep ]; then
			# the peer's folded importer is measured on the 20 MB all-distinct input (minutes for 20 MB)
			printf 'readers\t%s\t%s MB/s wall (%s CPU), %d MB RSS\t-\t-\ttracekit alone\n' "$label" "$mbs" "$cmbs" \
				$((rss / 1024)) >>"$SUMMARY"
			continue
		fi
		if p=$(peer "$f") && [ -n "$p" ]; then
			read -r pt prss <<<"$p"
			pmbs=$(python3 -c "print('%.1f' % ($size / 1e6 / max($pt, 0.01)))")
			ratio=$(python3 -c "print('%.0f' % ($pt / max($wall, 0.01)))")
			echo "$kind: Firefox Profiler importer (profiler-cli) ${pt} s, peak daemon RSS $((prss / 1024)) MB ($pmbs MB/s)"
			printf 'readers\t%s\t%s MB/s wall (%s CPU), %d MB RSS\t%s MB/s, %d MB RSS (Firefox Profiler importer)\t%s× (wall)\tfaster than the peer\n' \
				"$label" "$mbs" "$cmbs" $((rss / 1024)) "$pmbs" $((prss / 1024)) "$ratio" >>"$SUMMARY"
		else
			echo "$kind: the Firefox Profiler importer did not finish (or profiler-cli is not installed: make test installs it)"
			printf 'readers\t%s\t%s MB/s wall (%s CPU), %d MB RSS\t(peer did not finish)\t-\t-\n' "$label" "$mbs" "$cmbs" \
				$((rss / 1024)) >>"$SUMMARY"
		fi
	done
done
