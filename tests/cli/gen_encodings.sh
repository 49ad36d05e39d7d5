#!/bin/bash
# tracekit collapse / tree --json on generated exports of every stack encoding x schema, against the
# truth computed by the generator itself (bench/xcgen --truth), never by parsing its output.
# (bench/peer_etree.py == the same truth is checked in gen_truth.sh, which validates the peer.)
#   truth:          folded lines, LC_ALL=C sorted, identical lines merged
#   truth.threads:  pid, tid, summed weight, samples, thread name (tab separated)
. "$(dirname "$0")/../lib.sh"
GEN="$TK_ROOT/$BUILD/xcgen"

# The checks read tracekit's output from XML.folded / XML.json when the loop below wrote them (one
# tk_batch process for all its cases), else run "$TK" on XML themselves.
collapse_eq_truth() { # XML TRUTH
	if [ -e "$1.folded" ]; then cp "$1.folded" "$TMP/tk.folded"
	else "$TK" collapse "$1" >"$TMP/tk.folded" 2>"$TMP/tk.err" || { cat "$TMP/tk.err"; return 1; }; fi
	LC_ALL=C sort "$TMP/tk.folded" >"$TMP/tk.sorted"
	cmp -s "$TMP/tk.sorted" "$2" || { diff "$TMP/tk.sorted" "$2" | head -6; return 1; }
}
tree_threads_eq_truth() { # XML TRUTH.threads
	if [ -e "$1.json" ]; then cp "$1.json" "$TMP/tk.json"
	else "$TK" tree --json "$1" >"$TMP/tk.json" 2>"$TMP/tk.err" || { cat "$TMP/tk.err"; return 1; }; fi
	python3 - "$TMP/tk.json" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
got = sorted((int(t["pid"]), int(t["tid"]), int(t["total"]), int(t["samples"]), t["name"]) for t in doc["threads"])
want = []
for l in open(sys.argv[2], encoding="utf-8"):
    pid, tid, w, n, name = l.rstrip("\n").split("\t", 4)
    want.append((int(pid), int(tid), int(w), int(n), name))
want.sort()
if got != want or not want:
    print("tree --json:", got[:3], "\ntruth:", want[:3])
    sys.exit(1)
PY
}

# every case generated first, then read by one tk_batch process (a tracekit process costs ~0.2 s of
# CPU under ASan before it reads anything; 48 of them were most of this test's time)
for pass in generate check; do
	i=0
	for enc in text-addresses backtrace tagged tagged27; do
		for schema in time-profile cpu-profile counters-profile; do
			for seed in 1 2; do
				i=$((i + 1))
				# vary the shape between cases: 1-6 processes, 1-24 threads
				procs=$((1 + i % 6)) threads=$((procs + (i * 7) % 19))
				f="$TMP/g-$enc-$schema-$seed.xml"
				if [ $pass = generate ]; then
					"$GEN" --encoding $enc --schema $schema --seed $((seed + 10 * i)) --size 200K --threads $threads \
						--processes $procs --distinct-stacks 400 -o "$f" --truth "$f.truth" 2>/dev/null
					tk_batch_add "$TMP/cases.list" collapse -o "$f.folded" "$f"
					tk_batch_add "$TMP/cases.list" tree --json -o "$f.json" "$f"
					continue
				fi
				check "collapse == truth: $enc $schema seed $seed ($procs proc, $threads thr)" collapse_eq_truth "$f" "$f.truth"
				check "tree --json thread totals == truth: $enc $schema seed $seed" tree_threads_eq_truth "$f" "$f.truth.threads"
			done
		done
	done
	[ $pass = generate ] && { "$TK_BATCH" "$TMP/cases.list" >"$TMP/cases.out" 2>&1 || notok "tk_batch read every case" "$(head -c 600 "$TMP/cases.out")"; }
done

# gzip'd input and standard input give the same result
"$GEN" --encoding backtrace --seed 77 --size 200K --processes 3 --threads 9 -o "$TMP/z.xml" --truth "$TMP/z.truth" 2>/dev/null
gzip -c "$TMP/z.xml" >"$TMP/z.xml.gz"
check "collapse == truth on gzip'd input" collapse_eq_truth "$TMP/z.xml.gz" "$TMP/z.truth"
check "collapse == truth on standard input" bash -c "'$TK' collapse - <'$TMP/z.xml' | LC_ALL=C sort | cmp -s - '$TMP/z.truth'"
# a bigger, deeper case: 40-frame recursive stacks, many threads
"$GEN" --encoding tagged --seed 3 --size 1M --processes 8 --threads 64 --distinct-stacks 3000 \
	-o "$TMP/big.xml" --truth "$TMP/big.truth" 2>/dev/null
check "collapse == truth: 1 MB, 8 processes, 64 threads" collapse_eq_truth "$TMP/big.xml" "$TMP/big.truth"
check "tree --json thread totals == truth: 1 MB" tree_threads_eq_truth "$TMP/big.xml" "$TMP/big.truth.threads"
