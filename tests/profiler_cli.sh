# profiler-cli helpers for shell tests and benchmarks (source after setting HOME to a private dir and
# putting tests/js/node_modules/.bin on PATH).
# `profiler-cli load` starts a daemon and gives it 500 ms to come up, which a loaded machine misses.
# So the daemon is started here, in the background (`profiler-cli.js --daemon FILE --session ID`, the
# command `load` runs), and waited for as long as it lives: ready when its log says the profile is
# loaded, failed when the log says the load failed or the daemon exits. No deadline: the result
# depends on the file, not on the machine's load. (No client command is sent meanwhile: a client
# that finds the session's socket not yet listening removes the session's files, and the daemon is
# then unreachable.)
#
#   pc_load FILE [--symbol-server URL]   load FILE into a new current session; 0 on success, else 1
#                                        (what went wrong in $PC_OUT); the session's id in
#                                        $PC_SESSION, its daemon's pid in $PC_PID
#   pc_stop                              stop the daemon of the last pc_load (by its pid)
#   pc_stop_all                          stop every daemon started here (by its pid)
PC_OUT=${PC_OUT:-${TMP:-/tmp}/profiler-cli.$$.out}
PC_N=0
PC_PIDS=()
pc_load() {
	local f=$1 s js
	shift
	js=$(readlink -f "$(command -v profiler-cli)") || return 1
	PC_N=$((PC_N + 1))
	s="tk$$-$PC_N"
	node "$js" --daemon "$(readlink -f "$f")" --session "$s" "$@" >"$PC_OUT.daemon" 2>&1 &
	local pid=$!
	PC_PIDS+=("$pid")
	PC_SESSION=$s PC_PID=$pid
	local log="${PROFILER_CLI_SESSION_DIR:-$HOME/.profiler-cli}/$s.log"
	until grep -q 'Profile loaded successfully' "$log" 2>/dev/null; do
		if grep -q 'Failed to load profile' "$log" 2>/dev/null || ! kill -0 "$pid" 2>/dev/null; then
			cat "$log" "$PC_OUT.daemon" >"$PC_OUT" 2>/dev/null
			kill "$pid" 2>/dev/null
			return 1
		fi
		sleep 0.05
	done
	profiler-cli session use "$s" >"$PC_OUT" 2>&1
}
# pc_stop: stop the current session's daemon (SIGTERM: it shuts down as `profiler-cli stop` makes it,
# without another client process) and wait for it
pc_stop() {
	kill "$PC_PID" 2>/dev/null
	wait "$PC_PID" 2>/dev/null
	return 0
}
pc_stop_all() {
	local p
	profiler-cli stop --all >/dev/null 2>&1
	for p in "${PC_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	PC_PIDS=()
}
