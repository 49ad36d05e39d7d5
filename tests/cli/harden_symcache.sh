#!/bin/bash
# The symbol cache is mapped and trusted, so nobody else may write into it: temporary files are
# created new (never through a planted symlink), cache files are never followed through symlinks,
# a directory that is another user's or writable by others is not used, and without HOME there is
# no shared /tmp default. `symcache build` that cannot write fails. FIFOs never hang a lookup.
. "${TK_ROOT:-.}/tests/lib.sh"
tk_fork_start
unset TRACEKIT_CACHE_DIR XDG_CACHE_HOME
S="$FIX/symbol"
cp "$S/libtks-arm64.dylib.dwarf" "$TMP/lib.dwarf" # a fresh mtime: no cache anywhere matches it yet
DW="$TMP/lib.dwarf"
NAME=4C4C44D7-5555-3144-A1A5-753F1442BA46-arm64.tksym
want=$("$TK" atos -o "$DW" --no-cache-write -l 0x104a8c000 0x104a8dab4 2>&1)
check "reference answer" test -n "$want"
atos_in() { "$TK" atos --cache-dir "$1" -o "$DW" -l 0x104a8c000 0x104a8dab4; }

# 1. a symlink planted at the temporary file's name (the old name was OUT.<pid>.tmp) is not followed
mkdir -m 700 "$TMP/c1"; echo "victim" >"$TMP/victim"
V="$TMP/victim" D="$TMP/c1" N="$NAME" sh -c 'ln -s "$V" "$D/$N.$$.tmp"; exec "$0" atos --cache-dir "$D" -o "$1" -l 0x104a8c000 0x104a8dab4' \
	"$TK" "$DW" >"$TMP/o" 2>&1
check_eq "planted temporary symlink: the file it points to is untouched" "victim" "$(cat "$TMP/victim")"
check_eq "planted temporary symlink: the answer is right" "$want" "$(cat "$TMP/o")"
check "the cache file is a regular file" test -f "$TMP/c1/$NAME" -a ! -L "$TMP/c1/$NAME"

# 2. a cache file that is a symlink (to a valid cache elsewhere) is not trusted: rebuilt in place
mkdir -m 700 "$TMP/c2" "$TMP/elsewhere"
atos_in "$TMP/elsewhere" >/dev/null 2>&1
ln -s "$TMP/elsewhere/$NAME" "$TMP/c2/$NAME"
check_eq "symlinked cache file: the answer is right" "$want" "$(atos_in "$TMP/c2" 2>&1)"
check "symlinked cache file: replaced by a regular file of ours" test -f "$TMP/c2/$NAME" -a ! -L "$TMP/c2/$NAME"

# 3. a cache directory others may write to is neither read nor written
mkdir "$TMP/c3"; chmod 777 "$TMP/c3"
check_eq "world-writable cache directory: the answer is right" "$want" "$(atos_in "$TMP/c3" 2>&1)"
check_eq "world-writable cache directory: nothing written there" "" "$(ls -A "$TMP/c3")"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	mkdir -m 700 "$TMP/c4"; chown nobody "$TMP/c4"
	atos_in "$TMP/c4" >/dev/null 2>&1
	check_eq "another user's cache directory: nothing written there" "" "$(ls -A "$TMP/c4")"
fi
# a directory tracekit creates is private
atos_in "$TMP/new/cache" >/dev/null 2>&1
check_eq "a cache directory tracekit creates is 0700" "700" "$(stat -c %a "$TMP/new/cache")"

# 4. no HOME: no shared /tmp/.cache default (caches stay in memory)
touch "$TMP/stamp"
got=$(env -u HOME "$TK" atos -o "$DW" -l 0x104a8c000 0x104a8dab4 2>&1)
check_eq "no HOME: the answer is right" "$want" "$got"
check_eq "no HOME: nothing written under /tmp/.cache/tracekit" "" \
	"$(find /tmp/.cache/tracekit -newer "$TMP/stamp" -name "$NAME" 2>/dev/null)"

# 5. symcache build into a directory it cannot use: an error, non-zero exit (was success)
echo x >"$TMP/afile"
check_fails "symcache build -o under a regular file: fails" "$TK" symcache build "$DW" -o "$TMP/afile/cache"
cp "$TMP/.out" "$TMP/build.err"
check "symcache build: the error says the cache cannot be written" grep -q "cannot write its symbol cache" "$TMP/build.err"
check_fails "symcache build -o a world-writable directory: fails" "$TK" symcache build "$DW" -o "$TMP/c3"
check "symcache build into a good directory: succeeds" "$TK" symcache build "$DW" -o "$TMP/c5"

# 6. FIFOs: as the object, as a cache file, inside a search directory, as an images.json file
mkfifo "$TMP/fifo"
cpu_bounded 60 "$TK" atos -o "$TMP/fifo" 0x1000 >"$TMP/o" 2>&1
rc=$?
check "atos -o FIFO: an error, no hang" test "$rc" -ne 0 -a "$rc" -lt 124
mkdir -m 700 "$TMP/c6"; mkfifo "$TMP/c6/$NAME"
cpu_bounded 60 "$TK" atos --cache-dir "$TMP/c6" -o "$DW" -l 0x104a8c000 0x104a8dab4 >"$TMP/o" 2>&1
rc=$?
check_eq "FIFO at the cache file's path: no hang, the right answer" "0 $want" "$rc $(cat "$TMP/o")"
mkdir "$TMP/search"; cp "$DW" "$TMP/search/"; mkfifo "$TMP/search/zz-fifo"
cpu_bounded 60 "$TK" symbolicate "$S/time-profile-14.3-synthetic.xml" --symbols "$TMP/search" --cache-dir "$TMP/c7" \
	-o "$TMP/sym.xml" >"$TMP/o" 2>&1
check_eq "FIFO in a --symbols directory: no hang" "0" "$?"
mkdir "$TMP/sess"; mkfifo "$TMP/sess/lib.fifo"
printf '{"os":"Linux","arch":"x86_64","pid":1,"images":[{"path":"%s","base":"0x10000000","build_id":"ab","loads":[{"vaddr":"0x0","memsz":"0x1000","offset":"0x0","flags":"r-x"}]}]}' \
	"$TMP/sess/lib.fifo" >"$TMP/sess/images.json"
printf '%s\n%s\n%s\n' "collection,key,value" 'cpu-highload,1.00,{"start":"1.00","lasting":"61","average":"90"}' \
	'cpu-highload-stackframe,1.00,[{"frame":"0x10000010","count":3}]' >"$TMP/sess/records"
cpu_bounded 60 "$TK" records "$TMP/sess" >"$TMP/o" 2>"$TMP/e"
check_eq "FIFO named by images.json: no hang, the record listed" "0" "$?"
check "FIFO named by images.json: a warning says it is not a regular file" grep -q 'lib.fifo: not a regular file' "$TMP/e"
