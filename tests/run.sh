#!/bin/bash
# Run every test: cmocka unit binaries ($BUILD/tests/test_*) and shell tests (tests/cli/*.sh).
# Each cmocka case and each shell "ok"/"not ok" line counts once; the closing line is
# "N passed, N failed" and the exit status is non-zero when anything failed.
set -u
BUILD=${BUILD:-build}
export BUILD TK="$PWD/$BUILD/tracekit" TK_ROOT="$PWD"
pass=0 fail=0 failed_names=()
log=$(mktemp); trap 'rm -f "$log"' EXIT

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	CMOCKA_MESSAGE_OUTPUT=stdout "$t" >"$log" 2>&1
	rc=$?
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	p=${p:-0}; f=${f:-0}
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed or sanitizer report
	pass=$((pass + p)); fail=$((fail + f))
	if [ "$f" -ne 0 ]; then failed_names+=("$name"); cat "$log"; fi
	printf '%-40s %3d passed, %d failed\n' "$name" "$p" "$f"
done

for s in tests/cli/*.sh; do
	[ -f "$s" ] || continue
	name=$(basename "$s")
	bash "$s" >"$log" 2>&1
	rc=$?
	p=$(grep -c '^ok ' "$log"); f=$(grep -c '^not ok ' "$log")
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "not ok - $name exited $rc" >>"$log"; fi
	pass=$((pass + p)); fail=$((fail + f))
	if [ "$f" -ne 0 ]; then failed_names+=("$name"); grep -v '^ok ' "$log"; fi
	printf '%-40s %3d passed, %d failed\n' "$name" "$p" "$f"
done

[ ${#failed_names[@]} -gt 0 ] && echo "failing: ${failed_names[*]}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
