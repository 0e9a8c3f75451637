#!/usr/bin/env bash
# Makes sure the machine's PostgreSQL answers on 127.0.0.1:5432 for the tests that use it as a data source (user
# postgres without a password over loopback, database `test`). Idempotent: a server that answers is only checked for
# the database. A stopped Debian cluster is started; a missing server is installed from Debian and loopback is
# trusted for the postgres user. (The platform's own metadata store never depends on this server.)
set -euo pipefail

HOST=127.0.0.1
PORT=5432
log() { echo "[ensure-postgresql] $*" >&2; }
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

tcp_sql() { psql -h "$HOST" -p "$PORT" -U postgres -d "${2:-postgres}" -Atqc "$1" >/dev/null 2>&1; }

if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  log "installing postgresql from Debian"
  apt_install postgresql postgresql-client
fi

if ! pg_isready -q -h "$HOST" -p "$PORT"; then
  version="$(ls /etc/postgresql | sort -V | tail -n 1)"
  log "starting PostgreSQL ${version}"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 60); do pg_isready -q -h "$HOST" -p "$PORT" && break; sleep 0.5; done
fi

if ! tcp_sql "SELECT 1"; then
  # A fresh Debian cluster asks for a password over TCP; the tests connect as postgres on loopback without one.
  version="$(ls /etc/postgresql | sort -V | tail -n 1)"
  hba="/etc/postgresql/${version}/main/pg_hba.conf"
  log "trusting postgres on loopback in ${hba}"
  sed -i "1i host all postgres 127.0.0.1/32 trust" "$hba"
  su postgres -c "psql -Atqc 'select pg_reload_conf()'" >/dev/null
fi

if ! tcp_sql "SELECT 1"; then
  log "PostgreSQL does not answer on ${HOST}:${PORT}"
  exit 1
fi
tcp_sql "SELECT 1" test || psql -h "$HOST" -p "$PORT" -U postgres -Atqc "CREATE DATABASE test" >/dev/null
set_env SOURCE_PG_HOST "$HOST"
set_env SOURCE_PG_PORT "$PORT"
log "ready"
