#!/bin/bash
# The preloaded monitor never touches its host's descriptors. tests/monitor/fdhost takes over
# descriptor numbers while the monitor runs (closes all above 2 and opens its own files; or dup2()s
# its file over every open number) and checks its files afterwards. The monitor must notice it lost
# its own descriptors, reopen them, keep recording, and say so in the summary.
. "$TK_ROOT/tests/lib.sh"
B="$TK_ROOT/$BUILD"
SYM="python3 $TK_ROOT/examples/monitor/symbolize.py"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

for mode in close dup2; do
	S=$TMP/$mode
	mkdir -p "$TMP/files-$mode"
	check "$mode: the host's files are untouched by the monitor" "$TK" monitor --cpu-threshold 10 \
		--cpu-interval 100 --cpu-high-interval 100 --cpu-duration 500 --persist-interval 200 -o "$S" -- \
		"$B/tests/monitor/fdhost" "$TMP/files-$mode" $mode 3
	cp "$TMP/.out" "$TMP/$mode.out"
	check "$mode: fdhost checked its descriptors" grep -q 'fdhost: untouched' "$TMP/$mode.out"
	check_eq "$mode: the record was still written, final" False "$($SYM "$S" record cpu-highload live)"
	check "$mode: the summary says the monitor lost and reopened its descriptors" \
		grep -q "^tracekit: note: the program closed or replaced [0-9]* of the monitor.s descriptors; the monitor reopened" "$TMP/$mode.out"
	check "$mode: the session notes the event" grep -q '^monitor-event,.*"descriptors-lost"' "$S/records"
done
