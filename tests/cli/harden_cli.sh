#!/bin/bash
# Small CLI promises: usage errors exit 2 with one line on stderr and nothing on stdout, everywhere;
# output that cannot be written (/dev/full) is a failure; `records -` reads standard input.
. "${TK_ROOT:-.}/tests/lib.sh"
tk_fork_start
X="$FIX/xctrace/time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml"
usage_err() { # NAME CMD...: exit 2, exactly one line on stderr, empty stdout
	local n=$1; shift
	"$@" >"$TMP/uo" 2>"$TMP/ue"; local rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/ue")" -eq 1 ] && [ ! -s "$TMP/uo" ]; then ok "$n"
	else notok "$n" "rc=$rc stderr=$(wc -l <"$TMP/ue") lines: $(head -c 300 "$TMP/ue")"; fi
}
usage_err "tracekit with no command" "$TK"
usage_err "unknown command" "$TK" frobnicate
for c in tree top collapse info symbolicate records atos; do
	usage_err "$c --no-such-option" "$TK" $c --no-such-option "$X"
done
usage_err "symcache --no-such-option" "$TK" symcache build --no-such-option "$X"
usage_err "symcache with no subcommand" "$TK" symcache
usage_err "symcache unknown subcommand" "$TK" symcache frob x
usage_err "tree without input" "$TK" tree
usage_err "info without input" "$TK" info
usage_err "records without PATH" "$TK" records
usage_err "symbolicate without --symbols" "$TK" symbolicate "$X"
usage_err "tree --max-depth x" "$TK" tree --max-depth x "$X"
usage_err "atos -l not-hex" "$TK" atos -o "$X" -l zz 0x1

# Every subcommand, with an unknown option and with an option whose value is missing (or no argument
# at all where one is required): exit 2, one line, nothing on stdout. CMD|VALUE-OPTION|NO-ARGUMENT
export TRACEKIT_DB="sqlite:$TMP/usage.db" # a usage error must not get as far as a store; never ./tracekit.db
while IFS='|' read -r c valopt noarg; do
	usage_err "$c --no-such-option" "$TK" $c --no-such-option "$X"
	[ -n "$valopt" ] && usage_err "$c $valopt without its value" "$TK" $c $valopt
	[ -n "$noarg" ] && usage_err "$c without an argument" "$TK" $c
done <<'EOF2'
tree|--thread|-
top|--thread|-
collapse|--thread|-
info|--tokenizer|-
records|--tree|-
symbolicate|--symbols|-
atos|-o|-
symcache build|--cache-dir|-
monitor|--dir|-
convert|--to|-
flame|--title|-
open|--port|-
stats|--metric|-
diff|--limit|-
ingest|--db|-
serve|--listen|-
top-hangs|--db|
upload|--url|-
demangle||
EOF2
usage_err "monitor without a command after --" "$TK" monitor --
usage_err "upload without --token-file" "$TK" upload --url http://127.0.0.1:1/ "$TMP"
usage_err "diff with one side" "$TK" diff "$X" --
# NAME=VALUE works like NAME VALUE everywhere (one option parser): the value is seen and checked
usage_err "serve --max-body=12 (value read from NAME=VALUE)" "$TK" serve --ingest --max-body=12
check "serve --max-body=12: the value was read and checked" grep -q "^tracekit: serve: --max-body wants bytes from 1024" "$TMP/ue"
usage_err "upload --retries=0" "$TK" upload --retries=0 --url http://127.0.0.1:1/ "$TMP"
check_eq "upload --retries=0 names the option, not NAME=VALUE" "tracekit: upload: --retries wants a positive whole number, not '0' (see tracekit upload --help)" "$(cat "$TMP/ue")"
usage_err "monitor --max-frames=abc" "$TK" monitor --max-frames=abc -- true
check "monitor --max-frames=abc: the value was read and checked" grep -q "^tracekit: monitor: --max-frames wants a positive whole number, not 'abc'" "$TMP/ue"
usage_err "monitor: the command's arguments are not option values" "$TK" monitor --dir -- true
if "$TK" monitor -q --dir="$TMP/mon=" --cpu-threshold=50 -- true 2>"$TMP/me" && [ -d "$TMP/mon=" ]; then
	ok "monitor --dir=PATH --cpu-threshold=N run"
else notok "monitor --dir=PATH --cpu-threshold=N run" "$(head -c 300 "$TMP/me")"; fi

# a full disk on standard output is an error, for every command that writes there
full() { "$@" >/dev/full; }
for c in info tree top collapse; do
	check_fails "$c > /dev/full fails" full "$TK" $c "$X"
done
H="collection,key,value"
printf '%s\n%s\n%s\n' "$H" 'cpu-highload,1.00,{"start":"1.00","lasting":"61","average":"90"}' \
	'cpu-highload-stackframe,1.00,[{"frame":"0x10","count":3}]' >"$TMP/rec"
check_fails "records > /dev/full fails" full "$TK" records "$TMP/rec"
check_fails "records --json > /dev/full fails" full "$TK" records --json "$TMP/rec"
check_fails "atos > /dev/full fails" full "$TK" atos -o "$FIX/symbol/libtks-arm64.dylib.dwarf" --no-cache-write -l 0x104a8c000 0x104a8dab4

# records - : standard input, as every other command
check_same_file_cmd() { "$TK" records "$TMP/rec" >"$TMP/a" 2>&1; "$TK" records - <"$TMP/rec" >"$TMP/b" 2>&1; check_same_file "$1" "$TMP/a" "$TMP/b"; }
check_same_file_cmd "records - reads standard input (same list as the file)"
check "records - lists the record" grep -q '^cpu-highload' "$TMP/b"

# a record's tree header: its position is not a tid, and a sample count is said once
"$TK" tree "$TMP/rec" >"$TMP/t" 2>&1
check_eq "records tree header: (record 1), the count once" \
	"Thread cpu-highload 2001-01-01 00:00:01 UTC 61.0 s (record 1), process (unknown process): 3 samples" \
	"$(head -1 "$TMP/t")"
