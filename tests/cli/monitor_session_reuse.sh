#!/bin/bash
# A session directory used by two runs in turn (the same -o twice, a service restarted): each run's
# records must still be read with that run's own loaded images. Before, the second run overwrote
# images.json and the first run's frames (other addresses: ASLR) no longer resolved.
. "$TK_ROOT/tests/lib.sh"
B="$TK_ROOT/$BUILD"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
S=$TMP/session
# each run lasts until its record is written (tests/lib.sh monitor_busy), not a fixed 1.5 s that a
# loaded machine could fill with dips under the threshold
for run in 1 2; do
	check "run $run into the same session" monitor_busy "$S" -q --cpu-threshold 1 --cpu-interval 100 \
		--cpu-high-interval 100 --cpu-duration 800
done
"$TK" records "$S" --json >"$TMP/list.json" 2>"$TMP/err"
# each run has its CPU record (a loaded machine may give a run two: a dip under the threshold ends
# one and a new one starts before busy is stopped; each is that run's and must resolve as such)
check "two or more CPU records" test "$(python3 -c 'import json,sys; print(sum(x["kind"] == "cpu-highload" for x in json.load(open(sys.argv[1]))))' "$TMP/list.json")" -ge 2
check_eq "the CPU records come from both runs (two runs' images files)" 2 \
	"$(grep '^cpu-highload,' "$S/records" | grep -o '"images":"images-[^"]*"' | sort -u | wc -l)"
check_eq "no warnings" "" "$(cat "$TMP/err")"
i=0
for key in $(python3 -c 'import json,sys; print(" ".join(x["key"] for x in json.load(open(sys.argv[1])) if x["kind"] == "cpu-highload"))' "$TMP/list.json"); do
	i=$((i + 1))
	"$TK" records "$S" --tree "$key" >"$TMP/tree$i.txt" 2>&1
	check "record $i (run $i): its tree resolves tk_demo_busy_spin with file:line" \
		grep -Eq "tk_demo_busy_spin  0x[0-9a-f]+  .*busy\.c:[0-9]+" "$TMP/tree$i.txt"
done
check_eq "the runs had different load addresses (else this test proves nothing)" 2 \
	"$(cat "$S"/images*.json | python3 -c '
import json, sys
bases = set()
for doc in sys.stdin.read().replace("}\n{", "}\x00{").split("\x00"):
    d = json.loads(doc); bases.add(d["images"][0]["base"])
print(len(bases) if len(bases) > 1 else "same or one: %s" % bases)')"

# Compatibility: a session without per-run files (older monitors) falls back to images.json, which
# holds the latest run: its record still resolves.
cp -r "$S" "$TMP/old" && rm "$TMP/old"/images-*.json
"$TK" records "$TMP/old" --tree "$key" >"$TMP/old.txt" 2>&1
check "without per-run files the latest run resolves through images.json" \
	grep -Eq "tk_demo_busy_spin  0x[0-9a-f]+  .*busy\.c:[0-9]+" "$TMP/old.txt"
# A record naming a file outside the session is not followed.
sed -i 's/"images":"images-[^"]*"/"images":"..\/..\/etc\/passwd"/' "$TMP/old/records"
check "a record naming a path outside the session is read with images.json" "$TK" records "$TMP/old" --tree "$key"
