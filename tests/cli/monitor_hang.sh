#!/bin/bash
# Hang detector end to end: examples/monitor/hang blocks its event loop once for 3 s in
# tk_demo_blocking_work; in both heartbeat and ping modes there must be exactly one hang report, its
# duration within 10 % of the measured block, and the blocking function on top of the blocked
# thread's stack (symbolized independently with images.json + nm).
. "$TK_ROOT/tests/lib.sh"
B="$TK_ROOT/$BUILD"
SYM="python3 $TK_ROOT/examples/monitor/symbolize.py"

for mode in heartbeat ping; do
	S=$TMP/$mode
	check "$mode: hang demo runs" "$B/examples/monitor/hang" "$S" $mode 2000 3000
	measured=$(sed -n 's/^measured block: \([0-9]*\) ms$/\1/p' "$TMP/.out")
	check_eq "$mode: one hang report" 1 "$($SYM "$S" keys hang | wc -l)"
	check_eq "$mode: report is final" False "$($SYM "$S" record hang live)"
	d=$($SYM "$S" record hang duration_ms)
	check "$mode: duration $d ms within 10% of the measured $measured ms" python3 -c "
d=float('$d'); m=float('$measured'); assert abs(d-m) <= 0.1*m and abs(d-3000) <= 300, (d, m)"
	check_eq "$mode: blocking function on top" tk_demo_blocking_work "$($SYM "$S" hang-top)"
	share=($($SYM "$S" share hang-stackframe tk_demo_blocking_work))
	# every sample but the one a loaded machine may take between the block's return and the
	# heartbeat (or ping) that ends the hang
	check "$mode: tk_demo_blocking_work on every sample of the block (got ${share[0]} of ${share[2]})" \
		python3 -c "n = int('${share[2]}'); assert n >= 3 and round(float('${share[0]}') * n) >= n - 1"
	bi=$($SYM "$S" record hang blocked_in)
	check "$mode: blocked in clock_nanosleep at detection ($bi)" python3 -c "
import platform; b = $bi
nr = {'x86_64': 230, 'aarch64': 115}.get(platform.machine())
assert (nr is None or b['syscall'] == nr) and 'nanosleep' in b['wchan'], b"
	n=$($SYM "$S" record hang samples)
	check "$mode: sampled every 50 ms while it lasted ($n samples)" python3 -c "assert 8 <= $n <= 25"
done

# A 250 ms threshold (micro-hangs) catches the same block once too.
S=$TMP/micro
check "micro: hang demo with a 250 ms threshold" "$B/examples/monitor/hang" "$S" heartbeat 250 600
check_eq "micro: one hang report" 1 "$($SYM "$S" keys hang | wc -l)"
check_eq "micro: blocking function on top" tk_demo_blocking_work "$($SYM "$S" hang-top)"

check_fails "bad mode is rejected" "$B/examples/monitor/hang" "$TMP/x" sideways
