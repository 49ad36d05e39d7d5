#!/bin/bash
# Start (or stop) a ClickHouse server for tracekit's fleet store on 127.0.0.1, in DIR, with its own
# config and users config (Debian's clickhouse-server; `make deps` installs it). Prints the store URL.
#
#   scripts/clickhouse-dev.sh start [DIR] [HTTP_PORT]    default DIR ./clickhouse-data, port 8123
#   scripts/clickhouse-dev.sh stop [DIR]
set -eu
cmd=${1:-start} dir=$(realpath -m "${2:-clickhouse-data}") port=${3:-8123}
case $cmd in
stop)
	[ -f "$dir/pid" ] && kill "$(cat "$dir/pid")" 2>/dev/null && rm -f "$dir/pid" && echo "stopped"
	exit 0 ;;
start) ;;
*) sed -n '2,7p' "$0"; exit 2 ;;
esac
mkdir -p "$dir/data" "$dir/tmp" "$dir/log" "$dir/user_files" "$dir/format_schemas"
cat >"$dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$dir/log/server.log</log><errorlog>$dir/log/err.log</errorlog><size>100M</size><count>2</count></logger>
  <http_port>$port</http_port>
  <tcp_port>$((port + 1))</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <format_schema_path>$dir/format_schemas/</format_schema_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
  <timezone>UTC</timezone>
</yandex>
XML
cat >"$dir/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>8000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas>
</yandex>
XML
nohup clickhouse-server --config-file="$dir/config.xml" >"$dir/log/stdout" 2>&1 &
echo $! >"$dir/pid"
for _ in $(seq 300); do
	if curl -sf "http://127.0.0.1:$port/ping" >/dev/null 2>&1; then
		echo "clickhouse://127.0.0.1:$port/tracekit   (pid $(cat "$dir/pid"); stop: $0 stop $dir)"
		exit 0
	fi
	sleep 0.1
done
echo "clickhouse-server did not start; see $dir/log/" >&2
exit 1
