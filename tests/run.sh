#!/bin/bash
# Run every test: cmocka unit binaries ($BUILD/tests/test_*) and shell tests (tests/cli/*.sh).
# Each cmocka case and each shell "ok"/"not ok" line counts once; the closing line is
# "N passed, N failed" and the exit status is non-zero when anything failed.
#
# Tests run in parallel, TK_JOBS at a time (default: the number of CPUs). Each test writes its own
# log; the results are printed in the fixed order below (unit binaries, then shell tests, each by
# name) whatever order they finish in, with each test's wall time. A test must therefore not depend
# on running alone: free ports from the kernel, its own $TMP (tests/lib.sh), no shared files.
#   TK_JOBS=1 tests/run.sh            serial, as before
#   tests/run.sh read_text tree_cli   only the tests whose names contain one of these words
set -u
BUILD=${BUILD:-build}
export BUILD TK="$PWD/$BUILD/tracekit" TK_ROOT="$PWD"
jobs=${TK_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
logs=$(mktemp -d); trap 'rm -rf "$logs"' EXIT
# ports handed out by free_port (tests/store_lib.sh) are claimed here for the whole run
export TK_PORT_CLAIMS="$logs/ports"
# python3 is Debian's (make deps installs it; a fresh machine has only that one): a version manager's
# shim earlier on PATH (pyenv's is a bash script running `pyenv exec`, ~0.7 s of CPU per call) made the
# suite's hundreds of python3 calls a large part of its CPU time.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
	mkdir "$logs/bin" && ln -s /usr/bin/python3 "$logs/bin/python3" && export PATH="$logs/bin:$PATH"
fi

tests=()
for t in "$BUILD"/tests/test_*; do [ -x "$t" ] && tests+=("$t"); done
for s in tests/cli/*.sh; do [ -f "$s" ] && tests+=("$s"); done
if [ $# -gt 0 ]; then
	sel=()
	for t in "${tests[@]}"; do for w in "$@"; do [[ ${t##*/} == *"$w"* ]] && { sel+=("$t"); break; }; done; done
	tests=("${sel[@]}")
fi

# run_one INDEX PATH: the test's output in $logs/INDEX.log; exit status, wall seconds and CPU seconds
# (user+sys of the test and every child it waited for, from bash's `times`) in INDEX.rc
run_one() {
	local i=$1 t=$2 start rc us cpu
	start=${EPOCHREALTIME/[.,]/}
	case $t in
	*.sh) bash "$t" >"$logs/$i.log" 2>&1 </dev/null ;;
	*) CMOCKA_MESSAGE_OUTPUT=stdout "$t" >"$logs/$i.log" 2>&1 </dev/null ;;
	esac
	rc=$?
	us=$((${EPOCHREALTIME/[.,]/} - start))
	# run_one runs in its own subshell: the second line of `times` (the builtin, not forked) is its
	# children's user and sys
	times >"$logs/$i.times"
	cpu=$(sed -n 2p "$logs/$i.times" | awk '{ for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); s += a[1] * 60 + a[2] } printf "%.1f", s }')
	echo "$rc $((us / 1000000)).$((us / 100000 % 10)) $cpu" >"$logs/$i.rc.tmp" && mv "$logs/$i.rc.tmp" "$logs/$i.rc"
}

# Start the slowest first so that one long test does not start last and leave the other CPUs idle
# at the end (with 2 jobs the longest test bounds the wall time): by the wall times of the last full
# run ($BUILD/tests/.times) when there is one (a new test counts as slow), else by the CPU seconds
# checked in with the tests (tests/costs.txt, from a full sanitized run; a test not listed there
# counts as 10 s). Refresh costs.txt after changing a slow test: the .times of a full run, second
# column wall, third CPU (`awk '{ print $1, $3 }' build/san/tests/.times | sort -k2 -rn`).
order=()
hist="$BUILD/tests/.times"
[ -f "$hist" ] || hist=tests/costs.txt
declare -A last=()
[ -f "$hist" ] && while read -r n s _; do [[ $n == \#* ]] || last[$n]=$s; done <"$hist"
while read -r _ i; do order+=("$i"); done < <(
	for i in "${!tests[@]}"; do
		n=${tests[$i]##*/} s=
		if [ "$hist" = tests/costs.txt ]; then s=${last[$n]:-10}; else s=${last[$n]:-1000}; fi
		echo "$s $i"
	done | sort -s -rn -k1,1)

running=0
run_start=${EPOCHREALTIME/[.,]/}
for i in "${order[@]}"; do
	if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
	run_one "$i" "${tests[$i]}" &
	running=$((running + 1))
done
wait

pass=0 fail=0 failed_names=() times=() total_cpu=0
for i in "${!tests[@]}"; do
	t=${tests[$i]} name=${tests[$i]##*/} log="$logs/$i.log"
	read -r rc secs cpu <"$logs/$i.rc" 2>/dev/null || { rc=1 secs=0 cpu=0; }
	case $t in
	*.sh)
		p=$(grep -c '^ok ' "$log"); f=$(grep -c '^not ok ' "$log")
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "not ok - $name exited $rc" >>"$log"; fi
		[ "$f" -ne 0 ] && grep -v '^ok ' "$log"
		;;
	*)
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		p=${p:-0}; f=${f:-0}
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi # crashed or sanitizer report
		[ "$f" -ne 0 ] && cat "$log"
		;;
	esac
	pass=$((pass + p)); fail=$((fail + f))
	[ "$f" -ne 0 ] && failed_names+=("$name")
	printf '%-40s %3d passed, %d failed %7.1f s %7.1f s CPU\n' "$name" "$p" "$f" "$secs" "$cpu"
	times+=("$name $secs $cpu")
	total_cpu=$(awk -v a="$total_cpu" -v b="$cpu" 'BEGIN { printf "%.1f", a + b }')
done
# the times of a full run order the next one
[ $# -eq 0 ] && printf '%s\n' "${times[@]}" >"$hist" 2>/dev/null

[ ${#failed_names[@]} -gt 0 ] && echo "failing: ${failed_names[*]}"
echo "tests: ${total_cpu} s CPU, $(((${EPOCHREALTIME/[.,]/} - run_start) / 1000000)) s wall with $jobs jobs"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
