# Store test helpers: a real clickhouse-server from Debian on 127.0.0.1, one per test script, in a
# temporary directory with its own config and users config, stopped by pid at exit. Source after
# tests/lib.sh. If the server cannot start, the script says so loudly and fails (never skips).
STOREGEN="$TK_ROOT/${BUILD:-build}/storegen"
CH_PID=
# A free TCP port on 127.0.0.1 (the kernel picks it; a race with another process is possible but
# the server start below then fails loudly rather than silently testing something else). Tests run in
# parallel (tests/run.sh): each port is also claimed in $TK_PORT_CLAIMS (a directory the runner
# shares between its tests, else this test's own), so two tests never get the same port, even while
# one of them restarts its server on it.
free_port() {
	local p d=${TK_PORT_CLAIMS:-$TMP/.ports}
	mkdir -p "$d"
	while :; do
		p=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()') || return 1
		mkdir "$d/$p" 2>/dev/null && { echo "$p"; return 0; }
	done
}

start_clickhouse() {
	local dir="$TMP/clickhouse"
	mkdir -p "$dir/data" "$dir/tmp" "$dir/log" "$dir/user_files" "$dir/format_schemas"
	CH_PORT=$(free_port); local tport; tport=$(free_port)
	cat >"$dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$dir/log/server.log</log><errorlog>$dir/log/err.log</errorlog><size>10M</size><count>1</count></logger>
  <http_port>$CH_PORT</http_port>
  <tcp_port>$tport</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <format_schema_path>$dir/format_schemas/</format_schema_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <timezone>UTC</timezone>
  <!-- two shards on this one server (databases shard1, shard2), for the scale-out test -->
  <remote_servers><tk_two>
    <shard><replica><host>127.0.0.1</host><port>$tport</port><default_database>shard1</default_database></replica></shard>
    <shard><replica><host>127.0.0.1</host><port>$tport</port><default_database>shard2</default_database></replica></shard>
  </tk_two></remote_servers>
</yandex>
XML
	cat >"$dir/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas>
</yandex>
XML
	if ! command -v clickhouse-server >/dev/null; then
		notok "clickhouse-server is not installed (make deps installs Debian's clickhouse-server)"; exit 1
	fi
	clickhouse-server --config-file="$dir/config.xml" >"$dir/log/stdout" 2>&1 &
	CH_PID=$!
	trap '[ -z "${TK_FORK_PID:-}" ] || tk_fork_stop; stop_clickhouse; rm -rf "$TMP"' EXIT
	# as long as the server lives: it starts slowly on a loaded machine
	while :; do
		curl -sf "http://127.0.0.1:$CH_PORT/ping" >/dev/null 2>&1 && { CH_URL="clickhouse://127.0.0.1:$CH_PORT"; CH_HTTP="http://127.0.0.1:$CH_PORT/"; return 0; }
		kill -0 $CH_PID 2>/dev/null || break
		sleep 0.1
	done
	notok "CLICKHOUSE SERVER DID NOT START on 127.0.0.1:$CH_PORT" "$(tail -5 "$dir/log/stdout" "$dir/log/err.log" 2>/dev/null)"
	exit 1
}

# Always succeeds: callers run it from EXIT traps of `set -e` scripts (bench_store.sh), where a
# failing kill of a server that had already stopped made the script exit 1 after printing all its
# results and skip the rm -rf of its temporary directory.
stop_clickhouse() {
	if [ -n "$CH_PID" ]; then
		kill "$CH_PID" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$CH_PID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$CH_PID" 2>/dev/null || true
		wait "$CH_PID" 2>/dev/null || true
		CH_PID=
	fi
	return 0
}

# The summaries' tests (store_sig_summaries.sh, store_ch_sig_summaries.sh): each command line of QS
# (tracekit's arguments joined by |) run on store NEW with --since 86400 (before every report: the
# same reports, read from the reports themselves), on NEW as it is and on OLD (migrated, compacted),
# each list in one tk_batch process; the three answers must be equal (and the reports' not empty).
same_answers() { # NEW OLD QS...
	local new=$1 old=$2 a l i n m w
	shift 2
	local qs=("$@")
	for a in "${qs[@]}"; do
		IFS='|' read -r -a w <<<"$a"
		tk_batch_add "$TMP/want.list" "${w[@]}" --db "$new" --since 86400
		tk_batch_add "$TMP/got.list" "${w[@]}" --db "$new"
		tk_batch_add "$TMP/old.list" "${w[@]}" --db "$old"
	done
	for l in want got old; do
		TK_BATCH_MARK=1 "$TK_BATCH" "$TMP/$l.list" 2>/dev/null | awk -v d="$TMP/$l" '/^tk_batch: line [0-9]+: exit/ { n++; print > (d "." n ".rc"); next } { print > (d "." n + 1 ".out") }'
	done
	for i in "${!qs[@]}"; do
		n=$((i + 1)) a=${qs[$i]//|/ }
		case $a in *"no such"*) ;; *) check "reports answer $a (not empty)" test -s "$TMP/want.$n.out" ;; esac
		m=MISSING
		[ -e "$TMP/want.$n.out" ] || m= # an empty answer (no such signature): empty too
		check_eq "the summaries answer $a as the reports do" "$(cat "$TMP/want.$n.out" 2>/dev/null)" "$(cat "$TMP/got.$n.out" 2>/dev/null || echo $m)"
		check_eq "the migrated, compacted store answers $a the same" "$(cat "$TMP/want.$n.out" 2>/dev/null)" "$(cat "$TMP/old.$n.out" 2>/dev/null || echo $m)"
	done
}

# The queries both summaries' tests ask: sets SIGS (DB's top 4 hang signatures), CPU (its top CPU
# one) and QS: each signature's detail and merged stacks, whole and filtered by version or app and
# version, the CPU one's, those of a signature not stored, and percentiles by hour with filters.
sig_queries() { # DB
	local s
	SIGS=() QS=()
	while IFS= read -r s; do SIGS+=("$s"); done < <("$TK" top-hangs --db "$1" --json --limit 4 | python3 -c 'import json,sys
for l in sys.stdin: print(json.loads(l)["signature"])')
	CPU=$("$TK" top-diagnostics --kind cpu --db "$1" --json --limit 1 | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["signature"])')
	for s in "${SIGS[@]}"; do
		QS+=("top-hangs|--signature|$s|--detail|--json|--examples|10" "top-hangs|--signature|$s|--folded"
			"top-hangs|--signature|$s|--detail|--json|--where|version=5.1" "top-hangs|--signature|$s|--folded|--where|app=Atlas,version=5.2")
	done
	QS+=("top-hangs|--signature|no such stack|--detail|--json" "top-hangs|--signature|no such stack|--folded"
		"top-diagnostics|--kind|cpu|--signature|$CPU|--detail|--json|--examples|16" "top-diagnostics|--kind|cpu|--signature|$CPU|--folded"
		"stats|--metric|hang.duration|--by|hour,version|--json" "stats|--metric|hang.duration|--by|hour|--where|version=5.1|--json"
		"stats|--metric|cpu.duration|--by|version,hour|--where|app=Atlas|--json"
		"stats|--metric|hang.duration|--by|hour|--where|app=Atlas,version=5.2|--json")
}

# serve_dashboard DB: `tracekit serve --ui` on DB at a free port, in the background; sets PORT, BASE and
# SRV_PID and returns once it says it serves (or has died), its messages in $TMP/serve.log.
serve_dashboard() {
	PORT=$(free_port)
	BASE="http://127.0.0.1:$PORT"
	: >"$TMP/serve.log"
	"$TK" serve --ui --db "$1" --listen "127.0.0.1:$PORT" 2>>"$TMP/serve.log" &
	SRV_PID=$!
	while kill -0 $SRV_PID 2>/dev/null && ! grep -q "serving the dashboard" "$TMP/serve.log"; do sleep 0.05; done
}
