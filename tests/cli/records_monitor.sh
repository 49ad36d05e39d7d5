#!/bin/bash
# tracekit monitor: settings reach the program as TK_MONITOR_* variables, the library is preloaded,
# the exit status is forwarded, and bad usage fails cleanly.
. "$TK_ROOT/tests/lib.sh"
S="$TMP/s"
"$TK" monitor -q -o "$S" --cpu-threshold 50 --cpu-duration 1500 --max-nodes 99 -- \
	sh -c 'echo "$TK_MONITOR_DIR|$TK_MONITOR_CPU_THRESHOLD|$TK_MONITOR_CPU_DURATION_MS|$TK_MONITOR_MAX_NODES|$TK_MONITOR_CPU_INTERVAL_MS"; echo "$LD_PRELOAD"' >"$TMP/out" 2>"$TMP/err"
check_eq "settings passed as TK_MONITOR_* (unset ones untouched)" "$(cd "$S" && pwd -P)|50|1500|99|" "$(head -1 "$TMP/out")"
check "monitor library preloaded" grep -q "libtracekit-monitor.so" <(sed -n 2p "$TMP/out")
check "session directory created" test -d "$S"
TK_MONITOR_CPU_INTERVAL_MS=700 "$TK" monitor -q -o "$S" -- sh -c 'echo $TK_MONITOR_CPU_INTERVAL_MS' >"$TMP/out" 2>&1
check_eq "environment settings kept when no option overrides them" "700" "$(cat "$TMP/out")"
# (verify_asan_link_order=0: a sanitized tracekit must itself survive a foreign LD_PRELOAD)
ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 LD_PRELOAD=libm.so.6 "$TK" monitor -q -o "$S" -- sh -c 'echo $LD_PRELOAD' >"$TMP/out" 2>&1
check "user's LD_PRELOAD kept after ours" grep -q "libtracekit-monitor.so.* libm.so.6$" "$TMP/out"

"$TK" monitor -q -o "$S" -- sh -c 'exit 7'; check_eq "exit status forwarded" 7 $?
"$TK" monitor -q -o "$S" -- sh -c 'kill -KILL $$'; check_eq "death by signal → 128+N" 137 $?
"$TK" monitor -q -o "$S" -- "$TMP/no-such-program" 2>"$TMP/err"; check_eq "missing program → 127" 127 $?
check "missing program named" grep -q "cannot run .*no-such-program: No such file" "$TMP/err"
"$TK" monitor -o "$S" -- true 2>"$TMP/err"
check "summary says when there are no records" grep -q "no records in" "$TMP/err"
check_fails "bad threshold refused" "$TK" monitor --cpu-threshold -5 -- true
check_fails "unknown option refused" "$TK" monitor --frobnicate 1 -- true
check_fails "no command" "$TK" monitor -o "$S"
check_fails "missing library" env TK_MONITOR_LIB="$TMP/nope.so" "$TK" monitor -o "$S" -- true
