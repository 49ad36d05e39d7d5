#!/bin/bash
# The preloaded monitor must not change how its host program's signals behave:
# - its threads block every signal, so process-directed signals reach the program's own threads
#   (a program that blocks SIGTERM and takes it with sigwait must still get it);
# - it never signals a thread that blocks its capture signal (the signal would stay queued and be
#   taken by the program's sigwait/signalfd as its own).
. "$TK_ROOT/tests/lib.sh"
B="$TK_ROOT/$BUILD"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
mon() { # DIR ENV... -- CMD...
	local dir=$1; shift
	# 3 %: sighost's masked threads spin until the record exists (tests/monitor/sighost.c), and a
	# loaded machine gives them far less than 10 % at times
	env TK_MONITOR_DIR="$dir" TK_MONITOR_CPU_THRESHOLD=3 TK_MONITOR_CPU_INTERVAL_MS=100 \
		TK_MONITOR_CPU_HIGH_INTERVAL_MS=100 TK_MONITOR_CPU_DURATION_MS=500 "$@"
}
check "process-directed signals reach the program's sigwait, not the monitor's threads" \
	mon "$TMP/s1" LD_PRELOAD="$B/libtracekit-monitor.so" "$B/tests/monitor/sighost" sigwait
check "no signal is left queued for threads that block every signal (signals only)" \
	mon "$TMP/s2" TK_MONITOR_PERF=0 LD_PRELOAD="$B/libtracekit-monitor.so" "$B/tests/monitor/sighost" masked 2
check_eq "and those threads' stacks are counted as not taken" yes \
	"$(grep -q '"unsampled":[1-9]' "$TMP/s2/records" && echo yes || echo no)"
check "no signal is left queued for them with perf_event sampling either" \
	mon "$TMP/s3" LD_PRELOAD="$B/libtracekit-monitor.so" "$B/tests/monitor/sighost" masked 2
# After fork() the child (a prefork server's worker, say) holds none of the monitor's descriptors.
check "a forked child holds none of the monitor's descriptors" \
	mon "$TMP/s4" LD_PRELOAD="$B/libtracekit-monitor.so" "$B/tests/monitor/sighost" fork 1.5
check "and without the monitor it holds none either (the check itself is sound)" \
	"$B/tests/monitor/sighost" fork 0.1
