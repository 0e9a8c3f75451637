#!/usr/bin/env bash
# Makes sure MariaDB answers on 127.0.0.1 for the source-connector tests, as root without a password, with a
# database `test`. Idempotent: a server that already answers is only checked for the database.
# Otherwise installs Debian's mariadb-server, starts it bound to loopback, and lets root in over TCP.
# Writes MARIADB_HOST / MARIADB_PORT into the env file.
set -euo pipefail

HOST=127.0.0.1
PORT="${MARIADB_PORT:-3306}"
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

log() { echo "[ensure-mariadb] $*" >&2; }

client() { command -v mariadb >/dev/null 2>&1 && echo mariadb || echo mysql; }
tcp_sql() { "$(client)" -h "$HOST" -P "$PORT" -uroot --connect-timeout=3 -e "$1" >/dev/null 2>&1; }
socket_sql() { "$(client)" -uroot --connect-timeout=3 -e "$1"; }

finish() {
  tcp_sql "CREATE DATABASE IF NOT EXISTS test"
  set_env MARIADB_HOST "$HOST"
  set_env MARIADB_PORT "$PORT"
}

if command -v mariadb >/dev/null 2>&1 || command -v mysql >/dev/null 2>&1; then
  if tcp_sql "SELECT 1"; then finish; log "answers on ${HOST}:${PORT}"; exit 0; fi
fi

if [ ! -x /usr/sbin/mariadbd ]; then
  log "installing mariadb-server from Debian"
  apt_install mariadb-server mariadb-client
fi

if ! "$(client)" -uroot --connect-timeout=2 -e "SELECT 1" >/dev/null 2>&1; then
  log "starting mariadbd on ${HOST}:${PORT}"
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
  if [ ! -d /var/lib/mysql/mysql ]; then
    mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
  fi
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- \
    --user=mysql --bind-address="$HOST" --port="$PORT"
  for _ in $(seq 1 60); do
    "$(client)" -uroot --connect-timeout=2 -e "SELECT 1" >/dev/null 2>&1 && break
    sleep 0.5
  done
fi

if ! tcp_sql "SELECT 1"; then
  # Debian's root logs in through the unix socket only; the tests connect over TCP without a password.
  log "letting root in over TCP on loopback"
  socket_sql "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket;
    CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
    GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
    FLUSH PRIVILEGES;"
fi

if ! tcp_sql "SELECT 1"; then
  log "MariaDB does not answer on ${HOST}:${PORT}; see /var/log/mysql/error.log"
  exit 1
fi
finish
log "ready"
