#!/usr/bin/env bash
# Makes sure a ClickHouse server answers on loopback for the source-connector tests.
# Idempotent: if the server recorded in the env file (or one on 8123) answers, nothing is done.
# Otherwise installs Debian's clickhouse-server (18.16) and starts it from a private config bound to
# 127.0.0.1 only, so the machine's /etc config and any system service are left alone.
# Writes CLICKHOUSE_HOST / CLICKHOUSE_HTTP_PORT / CLICKHOUSE_TCP_PORT into the env file.
set -euo pipefail

BASE_DIR="${ANALYTICS_TEST_CLICKHOUSE_DIR:-/var/lib/analytics-test-clickhouse}"
HOST=127.0.0.1
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

log() { echo "[ensure-clickhouse] $*" >&2; }

answers() { # $1 = http port; ClickHouse answers "Ok." on /ping (plain bash: curl may not be installed)
  local port="${1:-}" reply
  [ -n "$port" ] || return 1
  reply="$(timeout 3 bash -c "exec 3<>/dev/tcp/${HOST}/${port} && printf 'GET /ping HTTP/1.0\r\n\r\n' >&3 && cat <&3" 2>/dev/null || true)"
  [[ "$reply" == *$'\r\n\r\nOk.'* ]]
}

port_free() { ! (exec 3<>"/dev/tcp/${HOST}/$1") 2>/dev/null; }

pick_port() { # first free port starting at $1
  local p="$1"
  while ! port_free "$p"; do p=$((p + 1)); done
  echo "$p"
}

record() {
  set_env CLICKHOUSE_HOST "$HOST"
  set_env CLICKHOUSE_HTTP_PORT "$1"
  set_env CLICKHOUSE_TCP_PORT "$2"
}

# 1. Already running (ours from an earlier run, or any server on the default port)?
recorded_http="$(get_env CLICKHOUSE_HTTP_PORT)"
if answers "$recorded_http"; then log "answers on ${recorded_http}"; exit 0; fi
if [ -f "$BASE_DIR/ports" ]; then
  read -r our_http our_tcp <"$BASE_DIR/ports"
  if answers "$our_http"; then record "$our_http" "$our_tcp"; log "answers on ${our_http}"; exit 0; fi
fi
if answers 8123; then record 8123 9000; log "answers on 8123"; exit 0; fi

# 2. Install the Debian package once per machine.
if [ ! -x /usr/sbin/clickhouse-server ]; then
  log "installing clickhouse-server from Debian"
  # In containers policy-rc.d usually forbids starting services during install; we start it ourselves below.
  apt_install clickhouse-server clickhouse-client
fi

# 3. Private config, data and logs under BASE_DIR; ports 8123/9000 when free.
http_port="$(pick_port 8123)"
tcp_port="$(pick_port 9000)"
[ "$tcp_port" = "$http_port" ] && tcp_port="$(pick_port $((http_port + 1)))"
mkdir -p "$BASE_DIR"/{data,tmp,user_files,format_schemas,log}

cat >"$BASE_DIR/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>${BASE_DIR}/log/server.log</log>
    <errorlog>${BASE_DIR}/log/server.err.log</errorlog>
    <size>10M</size>
    <count>2</count>
  </logger>
  <listen_host>${HOST}</listen_host>
  <http_port>${http_port}</http_port>
  <tcp_port>${tcp_port}</tcp_port>
  <path>${BASE_DIR}/data/</path>
  <tmp_path>${BASE_DIR}/tmp/</tmp_path>
  <user_files_path>${BASE_DIR}/user_files/</user_files_path>
  <format_schema_path>${BASE_DIR}/format_schemas/</format_schema_path>
  <users_config>${BASE_DIR}/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>268435456</mark_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
  <mlock_executable>false</mlock_executable>
</yandex>
XML

# default: no password (like the MariaDB root used by the tests); loopback only.
cat >"$BASE_DIR/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
XML

if id clickhouse >/dev/null 2>&1; then
  chown -R clickhouse:clickhouse "$BASE_DIR"
  run_as=(--chuid clickhouse)
else
  run_as=()
fi

log "starting clickhouse-server on ${HOST}:${http_port} (tcp ${tcp_port})"
echo "$http_port $tcp_port" >"$BASE_DIR/ports"
start-stop-daemon --start --background --make-pidfile --pidfile "$BASE_DIR/server.pid" \
  "${run_as[@]}" --chdir "$BASE_DIR" --exec /usr/sbin/clickhouse-server -- --config-file="$BASE_DIR/config.xml"

for _ in $(seq 1 120); do
  if answers "$http_port"; then record "$http_port" "$tcp_port"; log "ready"; exit 0; fi
  sleep 0.5
done
log "clickhouse-server did not answer within 60 s; see ${BASE_DIR}/log/server.err.log"
tail -n 20 "$BASE_DIR/log/server.err.log" >&2 || true
exit 1
