#!/bin/bash
# tracekit convert / flame: format choice (--to, OUT's extension), several inputs, errors, and that a
# failed write never leaves a half-written OUT. The writers' contents are checked by viewers_*.sh.
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
X="$FIX/xctrace"
MT="$X/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml"

check "convert --help" "$TK" convert --help
check "flame --help" "$TK" flame --help
"$TK" collapse "$MT" >"$TMP/collapse.folded"
"$TK" convert "$MT" --to folded >"$TMP/to.folded"
check_same_file "convert --to folded = collapse" "$TMP/collapse.folded" "$TMP/to.folded"
"$TK" convert "$MT" -o "$TMP/ext.collapsed"
check_same_file "convert -o X.collapsed picks folded" "$TMP/collapse.folded" "$TMP/ext.collapsed"
"$TK" tree --json "$MT" >"$TMP/tree.json"
"$TK" convert "$MT" -o "$TMP/ext.json"
check_same_file "convert -o X.json = tree --json" "$TMP/tree.json" "$TMP/ext.json"
"$TK" collapse --no-thread --thread 0xe787e "$MT" >"$TMP/c2.folded"
"$TK" convert --merge-threads --thread 0xe787e "$MT" --to folded >"$TMP/t2.folded"
check_same_file "convert passes --thread and --merge-threads" "$TMP/c2.folded" "$TMP/t2.folded"

check_fails "convert: unknown --to" "$TK" convert "$MT" --to nope
check_fails "convert: no format" "$TK" convert "$MT"
check_fails "convert: unknown extension" "$TK" convert "$MT" -o "$TMP/x.unknownext"
check_fails "convert: several inputs need --to" "$TK" convert "$MT" "$MT"
check_fails "convert: missing input" "$TK" convert "$TMP/nope.xml" --to folded
check_eq "convert: unknown --to lists the formats" 1 "$("$TK" convert "$MT" --to nope 2>&1 | grep -c 'known: .*folded')"

# Several inputs: one output per input, beside it or in -o DIR, never merged.
mkdir -p "$TMP/in" "$TMP/outdir"
cp "$MT" "$TMP/in/a.xml"
gzip -c "$MT" >"$TMP/in/b.xml.gz"
check "convert several inputs beside them" "$TK" convert "$TMP/in/a.xml" "$TMP/in/b.xml.gz" --to folded
check_same_file "several: a.folded" "$TMP/collapse.folded" "$TMP/in/a.folded"
check_same_file "several: b.folded (gzip input)" "$TMP/collapse.folded" "$TMP/in/b.folded"
check "convert several inputs into -o DIR" "$TK" convert "$TMP/in/a.xml" "$TMP/in/b.xml.gz" --to folded -o "$TMP/outdir"
check_same_file "several -o DIR: b.folded" "$TMP/collapse.folded" "$TMP/outdir/b.folded"
check_fails "several inputs: -o must be a directory" "$TK" convert "$TMP/in/a.xml" "$TMP/in/b.xml.gz" --to folded -o "$TMP/x.folded"
check_fails "several inputs: one missing fails the run" "$TK" convert "$TMP/in/a.xml" "$TMP/nope.xml" --to folded -o "$TMP/outdir"

# A failed conversion leaves the previous OUT intact and no temporary beside it.
echo "previous" >"$TMP/keep.folded"
check_fails "convert: bad input fails" "$TK" convert "$TMP/nope.xml" -o "$TMP/keep.folded"
check_eq "failed convert: old OUT intact" previous "$(cat "$TMP/keep.folded")"
printf '<trace-query-result><node><schema name="time-profile">' >"$TMP/trunc.xml"
check_fails "convert: truncated input fails" "$TK" convert "$TMP/trunc.xml" -o "$TMP/keep.folded"
check_eq "failed convert (truncated input): old OUT intact" previous "$(cat "$TMP/keep.folded")"
# A writer error half-way (the file size limit: write(2) fails with EFBIG once SIGXFSZ is ignored).
check_fails "convert: write error (file size limit) fails" bash -c 'trap "" XFSZ; ulimit -f 1; exec "$0" convert "$1" -o "$2"' "$TK" "$MT" "$TMP/keep.folded"
check_eq "write error: old OUT intact" previous "$(cat "$TMP/keep.folded")"
check_fails "convert into a missing directory fails" "$TK" convert "$MT" -o "$TMP/nodir/x.folded"
mkdir -p "$TMP/ro" && echo previous >"$TMP/ro/keep.folded" && chmod a-w "$TMP/ro"
if [ -w "$TMP/ro" ]; then
	ok "convert into an unwritable dir # SKIP running as root"
else
	check_fails "convert into an unwritable dir fails" "$TK" convert "$MT" -o "$TMP/ro/keep.folded"
	check_eq "unwritable dir: old OUT intact" previous "$(cat "$TMP/ro/keep.folded")"
fi
chmod u+w "$TMP/ro"
check_eq "no temporaries left behind" 0 "$(find "$TMP" -name '*.tmp.*' | wc -l)"
