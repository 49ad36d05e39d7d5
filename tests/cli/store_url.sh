#!/bin/bash
# Store URLs: the host part of clickhouse://HOST:PORT/DB becomes part of an http:// URL, so a ?, #
# or @ there would pass settings to the server, cut tracekit's own parameters or name a user. Each
# is refused before any connection, with one line naming the character and the host part. (No
# server listens on the port: an accepted URL fails later with a connection error instead.)
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
tk_fork_start
P=$(free_port)
for u in "127.0.0.1:$P?x=1#/db" "127.0.0.1:$P#/db" "user@127.0.0.1:$P/db" "127.0.0.1:$P?max_threads=1/db"; do
	c=$(printf '%s' "${u%%/*}" | tr -d 'a-zA-Z0-9.:-' | head -c 1)
	for cmd in "stats --db" "top-hangs --db" "ingest -q --db"; do
		arg=; [ "${cmd%% *}" = ingest ] && arg=$TMP
		"$TK" $cmd "clickhouse://$u" $arg >"$TMP/out" 2>&1
		rc=$?
		check "$cmd clickhouse://$u: refused (exit 1 or 2)" test $rc -eq 1 -o $rc -eq 2
		check "$cmd clickhouse://$u: the error names '$c' in the host part" grep -qF "'$c' is not allowed in the host part '${u%%/*}'" "$TMP/out"
		check_eq "$cmd clickhouse://$u: one line" 1 "$(wc -l <"$TMP/out")"
	done
done
"$TK" stats --db "clickhouse://127.0.0.1:$P/a/b" >"$TMP/out" 2>&1
check "a / in the database name is refused" grep -q "DB made of letters, digits and _" "$TMP/out"
