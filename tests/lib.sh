# Helpers for shell tests. Source it; every check prints "ok - NAME" or "not ok - NAME".
# $TK is the tracekit binary under test, $TK_ROOT the repository root.
: "${TK:=$PWD/build/tracekit}" "${TK_ROOT:=$PWD}"
FIX="$TK_ROOT/tests/fixtures"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT

ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; [ -n "${2:-}" ] && printf '    %s\n' "$2"; }
# check NAME CMD...: passes when CMD exits 0
check() { local n=$1; shift; if "$@" >"$TMP/.out" 2>&1; then ok "$n"; else notok "$n" "$(head -c 600 "$TMP/.out")"; fi; }
# check_fails NAME CMD...: passes when CMD exits non-zero without crashing (no signal, no sanitizer report)
check_fails() {
	local n=$1; shift; "$@" >"$TMP/.out" 2>&1; local rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && ! grep -q 'Sanitizer' "$TMP/.out"; then ok "$n"; else notok "$n" "rc=$rc $(head -c 600 "$TMP/.out")"; fi
}
# check_eq NAME EXPECTED ACTUAL
check_eq() { if [ "$2" = "$3" ]; then ok "$1"; else notok "$1" "expected [$2] got [$3]"; fi; }
# check_same_file NAME EXPECTED_FILE ACTUAL_FILE
check_same_file() { if cmp -s "$2" "$3"; then ok "$1"; else notok "$1" "$(diff "$2" "$3" | head -20)"; fi; }
# monitor_busy SESSION [tracekit monitor options...]: `tracekit monitor -o SESSION OPTIONS -- busy`
# (examples/monitor/busy) until SESSION holds one more cpu-highload record and its tree than before,
# however long a loaded machine takes to give busy the configured high-load window; then busy is
# stopped with SIGUSR1 (it exits 0 and the monitor writes its final records). Returns tracekit's
# exit status; its stdout and stderr go to the caller's.
monitor_busy() {
	local s=$1 tk child before rc=0; shift
	before=$(grep -s '^cpu-highload,' "$s/records" | cut -d, -f2 | sort -u | wc -l)
	"$TK" monitor -o "$s" "$@" -- "$TK_ROOT/$BUILD/examples/monitor/busy" 36000 &
	tk=$!
	while kill -0 $tk 2>/dev/null; do
		[ "$(grep -s '^cpu-highload,' "$s/records" | cut -d, -f2 | sort -u | wc -l)" -gt "$before" ] &&
			grep -q '^cpu-highload-stackframe,' "$s/records" && break
		sleep 0.05
	done
	child=$(ps -o pid= --ppid $tk | tr -d ' ')
	[ -n "$child" ] && kill -USR1 $child
	wait $tk || rc=$?
	return $rc
}
# cpu_bounded SECONDS CMD...: run CMD with at most SECONDS of CPU time (ulimit -t) and a 15-minute
# wall-clock bound that only a blocked, CPU-less hang reaches. Exit status 124 when either bound
# stopped it, else CMD's. A guard against quadratic or endless work that does not depend on how
# loaded the machine is (a wall-clock `timeout 20` does: a nice'd test at load 25 gets ~1/20 of a CPU).
cpu_bounded() {
	local s=$1 rc=0; shift
	(ulimit -c 0; ulimit -t "$s"; exec timeout 900 "$@") || rc=$?
	case $rc in 124 | 137 | 152) return 124 ;; esac
	return $rc
}
# Many tracekit command lines in one process (tests/tools/tk_batch.c: tracekit's own main() per line,
# output as if run one by one): tk_batch_add LIST ARGS... appends `tracekit ARGS...` to LIST (fails on an
# argument holding a tab or a newline); "$TK_BATCH" LIST runs them.
TK_BATCH=${TK_BATCH:-$TK_ROOT/${BUILD:-build}/tests/tools/tk_batch}
tk_batch_add() {
	local f=$1 a line=; shift
	for a in "$@"; do
		case $a in *$'\t'* | *$'\n'*) echo "tk_batch_add: an argument holds a tab or a newline: $a" >&2; return 1 ;; esac
		line+=${line:+$'\t'}$a
	done
	printf '%s\n' "$line" >>"$f"
}
# tk_fork_start: from here on "$TK" is tests/tools/tk_exec, which runs each `tracekit ARGS...` as a
# child of one fork server started now for this script (tests/tools/tk_forkserver.c): the same process
# in every way the tests see (descriptors, directory, environment, limits, signals, exit status,
# sanitizer reports and leak check at its exit), without a sanitized start-up each (~0.17 s of CPU
# under ASan+UBSan). monitor, serve, open and upload, and a command run with other ASAN_OPTIONS or
# LD_PRELOAD, still exec the real binary ($TK_FORK_REAL). Not for a test that measures the process
# from outside (/usr/bin/time's RSS or CPU of "$TK": that would be tk_exec's; use "$TK_FORK_REAL").
tk_fork_start() {
	local exe="$TK_ROOT/${BUILD:-build}/tests/tools/tk_exec" i
	[ -x "$exe" ] && [ -x "$TK_BATCH" ] && [ -z "${TK_FORK_SOCK:-}" ] || return 0
	export TK_FORK_REAL="$TK" TK_FORK_SOCK="$TMP/.tk_fork.sock"
	"$TK_BATCH" --serve "$TK_FORK_SOCK" </dev/null &
	for ((i = 0; i < 6000; i++)); do
		[ -S "$TK_FORK_SOCK" ] && break
		kill -0 $! 2>/dev/null || break
		sleep 0.01
	done
	if [ -S "$TK_FORK_SOCK" ]; then TK=$exe TK_FORK_PID=$!; else unset TK_FORK_SOCK; return 0; fi
	# stopped and waited for before the script's own EXIT trap, so that its children's CPU time
	# counts in the test's (tests/run.sh); call tk_fork_start after setting that trap
	local t=
	[ -n "$(trap -p EXIT)" ] && eval "set -- $(trap -p EXIT)" && t=$3
	trap "tk_fork_stop; $t" EXIT
}
tk_fork_stop() {
	[ -n "${TK_FORK_PID:-}" ] || return 0
	kill "$TK_FORK_PID" 2>/dev/null && wait "$TK_FORK_PID" 2>/dev/null
	TK_FORK_PID= TK=$TK_FORK_REAL
	unset TK_FORK_SOCK
	return 0
}
