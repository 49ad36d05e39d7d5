#!/bin/bash
# libtracekit-monitor.so exports its public API (tk_monitor_*, declared with TK_MONITOR_API in
# include/tracekit/monitor.h) and nothing else: the internal tkm_* functions stay private, so they
# cannot clash with a host's own symbols. Checked on the built object with nm, and against the header.
set -u
. "$(dirname "$0")/../lib.sh"
so="$TK_ROOT/$BUILD/libtracekit-monitor.so"
[ -f "$so" ] || { echo "not ok - $so missing"; exit 1; }
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort)
declared=$(sed -n 's/^TK_MONITOR_API .*[ *]\(tk_monitor_[a-z_0-9]*\)(.*/\1/p' "$TK_ROOT/include/tracekit/monitor.h" | sort)
others=$(printf '%s\n' "$exported" | grep -v '^tk_monitor_' || true)
if [ -z "$others" ]; then ok "the shared object exports only tk_monitor_* names"; else
	notok "the shared object exports non-public names: $(echo $others | head -c 300)"; fi
if [ "$exported" = "$declared" ]; then ok "every exported name is declared TK_MONITOR_API in monitor.h and vice versa ($(echo "$declared" | wc -l) names)"; else
	notok "exports and declarations differ: $(diff <(echo "$exported") <(echo "$declared") | tr '\n' ' ' | head -c 400)"; fi
