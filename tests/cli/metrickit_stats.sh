#!/bin/bash
# `tracekit stats` on MetricKit payloads: per-diagnostic metrics (hang.duration, cpu.exception_time,
# disk.writes, launch.duration) and metric-payload histograms, percentiles interpolated within buckets
# and labelled "from histogram" — against numbers computed by hand in the comments.
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
M="$FIX/metrickit"
G="$M/generated_metric_payload.json"
# hang time buckets [0,100] ms ×6, [100,400] ×3, [400,700] ×2, [1000,2000] ×1 (N = 12):
#   P50 rank 6 → end of the first bucket: 0.1 s; P90 rank 10.8 → 400 + 300 × (10.8 − 9)/2 = 670 ms;
#   P95 rank 11.4 → 1000 + 1000 × 0.4 = 1.4 s; P99 rank 11.88 → 1.88 s
check_eq "histogram.app.hang.time: P50/P90/P95/P99 from the buckets" "0.1 0.67 1.4 1.88" \
	"$("$TK" stats --metric histogram.app.hang.time "$G" | awk '$1 ~ /^p(50|90|95|99)$/ {printf "%s%s", s, $2; s=" "}')"
check "the text says the percentiles come from the histogram" \
	grep -q "percentiles from histogram (interpolated within buckets)" <("$TK" stats --metric histogram.app.hang.time "$G")
# time to first draw [1000,1010] ms ×30, [2000,2010] ×10; two payloads double every count (same percentiles):
#   P50 rank 40 of 80 → 1000 + 10 × 40/60 = 1006.667 ms; P90 rank 72 → 2000 + 10 × 12/20 = 2006 ms
check_eq "histogram.time.to.first.draw over two payloads (JSON)" \
	'{"metric": "histogram.time.to.first.draw", "unit": "s", "count": 80, "payloads": 2, "buckets": 2, "p50": 1.0066666666666666, "p90": 2.006, "p95": 2.008, "p99": 2.0096, "p99.9": 2.00996, "method": "histogram"}' \
	"$("$TK" stats --json --metric histogram.time.to.first.draw "$G" "$G")"
check_fails "a histogram no input has: one line" "$TK" stats --metric histogram.nope "$G"
# per-diagnostic metrics: the simulated payloads say 20 sec, 2000 byte, 20000 ms
for m in "hang.duration 3 20" "cpu.exception_time 3 20" "disk.writes 3 2000" "launch.duration 1 20"; do
	set -- $m
	check_eq "$1 of each diagnostic" "$2 $3" \
		"$("$TK" stats --json --metric "$1" "$M"/meter_xcode_simulated*.json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["count"], "%g" % d["p50"])')"
done
# exact percentiles (type 7) of hang durations 1 … 5 s in five payloads: P90 = 4 + 0.6 × 1 = 4.6
for i in 1 2 3 4 5; do
	sed "s/\"hangDuration\" : \"20 sec\"/\"hangDuration\" : \"$i sec\"/" "$M/meter_xcode_simulated_macOS_13.json" >"$TMP/h$i.json"
done
check_eq "hang.duration across payloads: exact P50 and P90" "3 4.6" \
	"$("$TK" stats --json --metric hang.duration "$TMP"/h?.json | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%g %g" % (d["p50"], d["p90"]))')"
