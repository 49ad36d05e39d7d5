#!/bin/bash
# Bad Records input: one clear line naming file:line, a non-zero exit, never a crash.
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
H="collection,key,value"
bad() { # bad NAME EXPECTED_REGEX CONTENT
	printf '%s\n%b' "$H" "$3" >"$TMP/r"
	"$TK" records "$TMP/r" >"$TMP/out" 2>"$TMP/err"; local rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -Eq "$2" "$TMP/err" && ! grep -q Sanitizer "$TMP/err" && [ "$(wc -l <"$TMP/err")" -eq 1 ]; then
		ok "$1"
	else
		notok "$1" "rc=$rc $(head -c 400 "$TMP/err")"
	fi
}
bad "broken JSON tree" "r:2:[0-9]+: cpu-highload-stackframe value for key 1.00 is not valid JSON" \
	'cpu-highload-stackframe,1.00,[{"frame":"0x10","count":3,\n'
bad "counts that do not add up" "r:3: hang-stackframe 5.000: counts do not add up: node 0x20 counts 2 samples but its children count 3" \
	'hang,5.000,{"start":5,"duration_ms":100}\nhang-stackframe,5.000,[{"frame":"0x20","count":2,"children":[{"frame":"0x21","count":3}]}]\n'
bad "truncated last line" "r:2: truncated line \\(no newline" 'cpu-highload-stackframe,1.00,[{"frame":"0x10","cou'
bad "line without two commas" "r:3: expected collection,key,value" 'cpu,1.0,3\ncpu-highload 1.0\n'
bad "frame that is not an address" "r:2: cpu-highload-stackframe 1.00: node at depth 2 has no hex \"frame\"" \
	'cpu-highload-stackframe,1.00,[{"frame":"0x10","count":3,"children":[{"frame":"main","count":1}]}]\n'
bad "negative count" "r:2: .*node 0x10 has no count" 'cpu-highload-stackframe,1.00,[{"frame":"0x10","count":-3}]\n'
bad "tree that is not an array" "r:2: .*expected a JSON array" 'cpu-highload-stackframe,1.00,{"frame":"0x10"}\n'
bad "non-numeric lasting" "r:2: cpu-highload 1.00: \"lasting\" is not a number" \
	'cpu-highload,1.00,{"start":"1.00","lasting":"long","average":"10"}\n'
bad "key that is not a time" "r:2: cpu-highload key abc is not a time" 'cpu-highload,abc,{"start":"1"}\n'
bad "anr stack with a bad address" "r:2: anr 7_0: stacks\\[0\\] needs" \
	'anr,7_0,{"duration":500,"startFrom":7,"stacks":[{"stackframes":"0x1,zz","capturedCount":1}]}\n'
bad "NUL inside a line" "r:2: NUL byte" 'cpu,1\0,2\n'
bad "deep nesting beyond the JSON parser's limit" "r:2:[0-9]+: .*not valid JSON: maximum parsing depth" \
	"cpu-highload-stackframe,1.00,$(python3 -c 'print("[" * 5000)')\n"
check_fails "missing file" "$TK" records "$TMP/does-not-exist"
mkdir -p "$TMP/empty"
check_fails "directory without records" "$TK" records "$TMP/empty"
"$TK" records "$TMP/empty" 2>"$TMP/err"
check "directory error says what is missing" grep -q "not a session directory" "$TMP/err"
printf '%s\n' "$H" 'cpu,1.0,3' >"$TMP/none"
check_eq "no records: says so, exit 0" "no CPU high-load or hang records" "$("$TK" records "$TMP/none")"
check_fails "unknown key" "$TK" records "$TMP/none" --tree 42
printf '%s\n' "$H" 'cpu-highload,1.00,{"start":"1.00"}' 'cpu-highload,2.00,{"start":"2.00"}' 'cpu-highload,1.5,{"start":"1.5"}' >"$TMP/amb"
"$TK" records "$TMP/amb" --tree 1 2>"$TMP/err" >/dev/null
check "ambiguous key prefix refused" grep -q "ambiguous record key '1'" "$TMP/err"
