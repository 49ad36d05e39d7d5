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
