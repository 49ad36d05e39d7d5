#!/bin/bash
# -o never leaves a truncated or half-written OUT behind: output goes to a temporary file beside
# OUT, renamed over it only when whole. A write that fails (here: a file-size limit, so the disk
# is "full" after 1 KB) keeps the old OUT, even when OUT is the input being read.
. "${TK_ROOT:-.}/tests/lib.sh"
tk_fork_start
S="$FIX/symbol"
# limited CMD...: run CMD with writes beyond 1 KB failing (EFBIG, not SIGXFSZ)
limited() { (trap '' XFSZ; ulimit -f 1; "$@"); }

cp "$S/time-profile-14.3-synthetic.xml" "$TMP/in.xml"
limited "$TK" symbolicate "$TMP/in.xml" --symbols "$S" --cache-dir "$TMP/cache" -o "$TMP/in.xml" >"$TMP/o" 2>&1
rc=$?
check "symbolicate IN -o IN with a failing write: non-zero exit" test "$rc" -ne 0 -a "$rc" -lt 128
check_same_file "symbolicate IN -o IN with a failing write: IN unchanged" "$S/time-profile-14.3-synthetic.xml" "$TMP/in.xml"
check_eq "symbolicate: no temporary left beside OUT" "" "$(ls "$TMP" | grep '\.tmp\.')"
check "symbolicate: the error is one line naming OUT" grep -q "in.xml: write" "$TMP/o"

# and in place with no failure: OUT == IN works, the result is the symbolicated export
"$TK" symbolicate "$S/time-profile-14.3-synthetic.xml" --symbols "$S" --cache-dir "$TMP/cache" -o "$TMP/ref.xml" 2>/dev/null
"$TK" symbolicate "$TMP/in.xml" --symbols "$S" --cache-dir "$TMP/cache" -o "$TMP/in.xml" 2>/dev/null
check_same_file "symbolicate IN -o IN: the symbolicated export" "$TMP/ref.xml" "$TMP/in.xml"

# an analysis command (tree) into an existing OUT
echo "old contents" >"$TMP/tree.txt"
limited "$TK" tree "$FIX/xctrace/time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml" -o "$TMP/tree.txt" >"$TMP/o" 2>&1
check "tree -o with a failing write: non-zero exit" test $? -ne 0
check_eq "tree -o with a failing write: OUT unchanged" "old contents" "$(cat "$TMP/tree.txt")"

# info and records have -o too, through the same temporary-and-rename path
X="$FIX/xctrace/time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml"
"$TK" info "$X" >"$TMP/info.ref"
"$TK" info "$X" -o "$TMP/info.txt"
check_same_file "info -o OUT == info > OUT" "$TMP/info.ref" "$TMP/info.txt"
"$TK" info --json --output="$TMP/info.json" "$X"
check "info --output=OUT --json: valid JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/info.json"
echo "old contents" >"$TMP/info.txt"
limited "$TK" info "$FIX/xctrace/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml" \
	-o "$TMP/info.txt" >"$TMP/o" 2>&1 # more than the 1 KB limit
check "info -o with a failing write: non-zero exit" test $? -ne 0
check_eq "info -o with a failing write: OUT unchanged" "old contents" "$(cat "$TMP/info.txt")"
printf '%s\n%s\n%s\n' "collection,key,value" 'cpu-highload,1.00,{"start":"1.00","lasting":"61","average":"90"}' \
	'cpu-highload-stackframe,1.00,[{"frame":"0x10","count":3}]' >"$TMP/rec"
"$TK" records "$TMP/rec" >"$TMP/rec.ref"
"$TK" records "$TMP/rec" -o "$TMP/rec.txt"
check_same_file "records -o OUT == records > OUT" "$TMP/rec.ref" "$TMP/rec.txt"
"$TK" records "$TMP/rec" --collapse=1.00 -o "$TMP/rec.folded"
check_eq "records --collapse=KEY -o OUT" "0x10 3" "$(cat "$TMP/rec.folded")"
