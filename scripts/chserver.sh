# scripts/chserver.sh - a private clickhouse-server for the fleet test
# and benchmark, sourced: its own folder, loopback ports, its own log;
# run as user clickhouse when root (the server refuses to run as root
# with another user's files).
#
# ch_start DIR HTTP_PORT TCP_PORT INTERSERVER_PORT [XML]: starts it,
#   XML going into the configuration (remote_servers); returns when it
#   answers, or 1 after 30 s with why on stdout.
# ch_stop DIR: stops it and waits until it is gone.
ch_start() {
	_d=$1
	mkdir -p "$_d"
	cat >"$_d/config.xml" <<EOF_CONFIG
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$_d/server.log</log><errorlog>$_d/err.log</errorlog><console>0</console></logger>
  <http_port>$2</http_port>
  <tcp_port>$3</tcp_port>
  <interserver_http_port>$4</interserver_http_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$_d/data/</path>
  <tmp_path>$_d/tmp/</tmp_path>
  <user_files_path>$_d/files/</user_files_path>
  <format_schema_path>$_d/schemas/</format_schema_path>
  <users_config>/etc/clickhouse-server/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>5368709</mark_cache_size>
  ${5:-}
</yandex>
EOF_CONFIG
	# setpriv execs the server itself: $! is its pid, to stop it by
	if [ "$(id -u)" -eq 0 ] && id clickhouse >/dev/null 2>&1; then
		chown -R clickhouse "$_d"
		setpriv --reuid=clickhouse --regid=clickhouse --init-groups \
			clickhouse-server --config-file="$_d/config.xml" >"$_d/out" 2>&1 &
	else
		clickhouse-server --config-file="$_d/config.xml" >"$_d/out" 2>&1 &
	fi
	echo $! >"$_d/pid"
	# up when it answers (a server takes a few seconds to start)
	for _i in $(seq 1 120); do
		[ "$(curl -s "http://127.0.0.1:$2/ping")" = "Ok." ] && return 0
		sleep 0.25
	done
	echo "# server in $_d did not start: $(tail -3 "$_d/err.log" "$_d/out" 2>/dev/null)"
	return 1
}

ch_stop() {
	_pid=$(cat "$1/pid")
	kill "$_pid" 2>/dev/null
	for _i in $(seq 1 120); do
		kill -0 "$_pid" 2>/dev/null || return 0
		sleep 0.25
	done
	kill -9 "$_pid" 2>/dev/null
}
