# profiler-cli helpers for shell tests and benchmarks (source after setting HOME to a private dir).
# profiler-cli starts a daemon per session and gives it 500 ms to come up; on a loaded machine node
# can take longer, and the daemon is then left running. pc_load retries with a fresh session and
# stops each left-over daemon by the pid profiler-cli names.
#
#   pc_load FILE [load options…]   load FILE; 0 on success (output in $PC_OUT), else 1
PC_OUT=${PC_OUT:-${TMP:-/tmp}/profiler-cli.$$.out}
pc_load() {
	local f=$1 try pid
	shift
	for try in 1 2 3 4 5 6; do
		if profiler-cli load "$f" --session "tk$$-$RANDOM$try" "$@" >"$PC_OUT" 2>&1; then
			return 0
		fi
		pid=$(sed -n 's/.*still be running as pid \([0-9][0-9]*\)\..*/\1/p' "$PC_OUT" | head -1)
		if [ -n "$pid" ]; then
			kill "$pid" 2>/dev/null
			grep -q 'did not become ready' "$PC_OUT" && continue
		fi
		return 1
	done
	return 1
}
