#!/bin/bash
# bench/xcgen (the generator of large xctrace exports) against two independent readings:
#   - bench/check_xctrace_format.py: the structural invariants every real export satisfies
#     (skeleton bytes, dense pre-order ids, backward same-tag refs, per-process frames, one cell per column);
#   - bench/peer_etree.py (ElementTree + id dict): its folded output and thread totals must equal the
#     generator's own --truth. The peer itself is checked first against JMH's per-row results on real exports.
. "$(dirname "$0")/../lib.sh"
GEN="$TK_ROOT/$BUILD/xcgen"
PEER="$TK_ROOT/bench/peer_etree.py"
CHK="$TK_ROOT/bench/check_xctrace_format.py"
FB="$FIX/xctrace" # real exports and JMH oracles, copied by the reader (see its SOURCES.md)

# --- the peer on real exports: per-leaf weight sums must match JMH's per-row CSV (independent oracle)
leafsum_check() { # XML CSV KEYCOL: KEYCOL 3 = leaf addr column, 4 = leaf symbol unless hex
	python3 "$PEER" "$1" >"$TMP/peer.folded" || return 1
	python3 - "$TMP/peer.folded" "$2" "$3" <<'PY'
import sys, collections, re
folded, csv, mode = sys.argv[1], sys.argv[2], sys.argv[3]
a = collections.Counter()
for l in open(folded, encoding="utf-8"):
    s, w = l.rstrip("\n").rsplit(" ", 1)
    parts = s.split(";")
    a[parts[-1] if len(parts) > 1 else "<none>"] += int(w)
b = collections.Counter()
for l in open(csv, encoding="utf-8"):
    f = l.rstrip("\n").split(";")
    if f[2] == "0x0":
        k = "<none>"
    elif mode == "3" or re.match(r"^0x[0-9a-f]+$", f[3]):
        k = f[2]
    else:
        k = f[3]
    b[k] += int(f[1])
if a != b or not b:
    print("peer:", sorted(a.items())[:5], "\noracle:", sorted(b.items())[:5])
    sys.exit(1)
PY
}
check "peer: per-leaf weights == JMH oracle (pre-14.3 text-addresses, re-indented)" \
	leafsum_check "$FB/time-profile_pre-xcode14.3_text-addresses-fragments_macos-arm64_reindented.xml" \
	"$FB/oracles/time-profile_pre-xcode14.3_text-addresses-fragments_macos-arm64_reindented.jmh-leaf.csv" 3
check "peer: per-leaf weights == JMH oracle (counters-profile, sentinels, 3 processes)" \
	leafsum_check "$FB/counters-profile_xcode26.4.1_pmc-events_sentinel-stack_macos-arm64.xml" \
	"$FB/oracles/counters-profile_xcode26.4.1_pmc-events_sentinel-stack_macos-arm64.jmh-leaf.csv" 4
for f in time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented \
	time-profile_xcode26.4.1_tagged-backtrace_recursion_macos-arm64 \
	cpu-profile_xcode26.4.1_tagged-backtrace_cycle-weight_unsymbolicated_macos-arm64; do
	check "peer: per-leaf weights == JMH oracle (${f%%_macos*})" leafsum_check "$FB/$f.xml" "$FB/oracles/$f.jmh-leaf.csv" 4
done
check "format checker accepts a real export" \
	python3 "$CHK" "$FB/counters-profile_xcode26.4.1_pmc-events_sentinel-stack_macos-arm64.xml"
# The checker must be able to fail: a forward ref, a gap in ids, a ref to another tag.
sed '3s/<process ref="4"\/>/<process ref="99999"\/>/' \
	"$FB/counters-profile_xcode26.4.1_pmc-events_sentinel-stack_macos-arm64.xml" >"$TMP/bad1.xml"
sed '3s/<core id="7"/<core id="8"/' \
	"$FB/counters-profile_xcode26.4.1_pmc-events_sentinel-stack_macos-arm64.xml" >"$TMP/bad2.xml"
sed '4s/<core ref="7"\/>/<core ref="6"\/>/' \
	"$FB/counters-profile_xcode26.4.1_pmc-events_sentinel-stack_macos-arm64.xml" >"$TMP/bad3.xml"
for b in 1 2 3; do
	check_fails "format checker rejects broken file $b" python3 "$CHK" "$TMP/bad$b.xml"
done

# --- generator vs format invariants vs peer, every encoding x schema
gen_vs_peer() { # ENC SCHEMA SEED
	"$GEN" --encoding "$1" --schema "$2" --seed "$3" --size 150K --threads 12 --processes 4 \
		--distinct-stacks 300 -o "$TMP/g.xml" --truth "$TMP/g.truth" 2>/dev/null || return 1
	python3 "$CHK" "$TMP/g.xml" >"$TMP/chk.out" || { cat "$TMP/chk.out"; return 1; }
	python3 "$PEER" "$TMP/g.xml" --threads "$TMP/p.threads" >"$TMP/p.folded" || return 1
	[ -s "$TMP/g.truth" ] && cmp "$TMP/p.folded" "$TMP/g.truth" && cmp "$TMP/p.threads" "$TMP/g.truth.threads"
}
# Every encoding x schema once, seeds 1 and 2 alternating over the 12 pairs (both seeds on every
# encoding and every schema; two seeds per pair doubled the test's CPU for no other coverage).
seed=1
for enc in text-addresses backtrace tagged tagged27; do
	for schema in time-profile cpu-profile counters-profile; do
		check "xcgen $enc $schema seed $seed: format ok, peer == truth" gen_vs_peer $enc $schema $seed
		seed=$((3 - seed))
	done
done

# --- properties the benchmarks rely on
"$GEN" --seed 5 --rows 3000 -o "$TMP/a.xml" 2>/dev/null
"$GEN" --seed 5 --rows 3000 -o "$TMP/b.xml" 2>/dev/null
"$GEN" --seed 6 --rows 3000 -o "$TMP/c.xml" 2>/dev/null
check_same_file "xcgen is deterministic for a seed" "$TMP/a.xml" "$TMP/b.xml"
check "xcgen: another seed gives another file" bash -c "! cmp -s '$TMP/a.xml' '$TMP/c.xml'"
check_eq "xcgen --rows N writes N rows" 3000 "$(grep -c '<row>' "$TMP/a.xml")"
"$GEN" --seed 5 --rows 3000 --gzip -o "$TMP/a.xml.gz" 2>/dev/null
check "xcgen --gzip is the same document gzipped" bash -c "gzip -dc '$TMP/a.xml.gz' | cmp -s - '$TMP/a.xml'"
"$GEN" --seed 9 --size 300K -o "$TMP/s.xml" --truth "$TMP/s.truth" 2>/dev/null
sz=$(stat -c %s "$TMP/s.xml")
check "xcgen --size 300K gives about 300 KB ($sz)" test "$sz" -ge 300000 -a "$sz" -lt 360000
# What the reader must handle is really there: weights other than 1 ms, sentinels, escapes, UTF-8,
# recursion (<frame ref> runs), hex-named frames with and without a binary, binaries redefined per process.
has() { grep -Eq "$1" "$TMP/s.xml"; }
check "xcgen output: weights other than 1 ms" \
	bash -c "grep -Eo '<weight id=\"[0-9]+\" fmt=\"[^\"]*\">[0-9]+</weight>' '$TMP/s.xml' | grep -vq '>1000000<'"
check "xcgen output: sentinel stacks" has '<sentinel/></row>'
check "xcgen output: &lt; &gt; &amp; &quot; escapes" bash -c "grep -q '&lt;' '$TMP/s.xml' && grep -q '&gt;' '$TMP/s.xml' && grep -q '&amp;' '$TMP/s.xml' && grep -q '&quot;' '$TMP/s.xml'"
check "xcgen output: non-ASCII UTF-8 names" has 'name="[^"]*(ö|é|Δ|処理|🔥)'
check "xcgen output: recursion as <frame ref> runs" has '<frame ref="([0-9]+)"/><frame ref="\1"/>'
check "xcgen output: hex-named frame without binary" has '<frame id="[0-9]+" name="0x[0-9a-f]+" addr="0x[0-9a-f]+"/>'
check "xcgen output: hex-named frame with a binary" has '<frame id="[0-9]+" name="0x[0-9a-f]+" addr="0x[0-9a-f]+"><binary'
check "xcgen output: a library redefined in each process" \
	test "$(grep -o '<binary id="[0-9]*" name="libdispatch.dylib"' "$TMP/s.xml" | wc -l)" -ge 2
check "xcgen truth: 1-40 frame stacks and sentinel (thread-only) lines" bash -c "
	awk '{ sub(/ [0-9]+\$/, \"\"); n = split(\$0, a, \";\") - 1; if (n > mx) mx = n; if (n == 0) z++ }
	     END { exit !(mx >= 25 && mx <= 40 && z > 0) }' '$TMP/s.truth'"
check_fails "xcgen rejects an unknown encoding" "$GEN" --encoding nope
check_fails "xcgen rejects a bad size" "$GEN" --size 12Q
