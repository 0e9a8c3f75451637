#!/usr/bin/env bash
# Makes sure a Redis answers on 127.0.0.1 for the tests of the shared rate limit and result cache (REDIS_URL).
# Idempotent: the machine's Redis (127.0.0.1:6379) is used when it answers; otherwise Debian's redis-server is
# installed if missing and started on loopback, keeping nothing on disk.
set -euo pipefail

HOST=127.0.0.1
PORT="${REDIS_TEST_PORT:-6379}"
log() { echo "[ensure-redis] $*" >&2; }
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

if ! command -v redis-server >/dev/null 2>&1; then
  log "installing redis-server from Debian"
  apt_install redis-server redis-tools
fi

if ! redis-cli -h "$HOST" -p "$PORT" ping 2>/dev/null | grep -q PONG; then
  log "starting redis-server on ${HOST}:${PORT}"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind "$HOST" --port "$PORT" --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/analytics-test.log
  for _ in $(seq 1 40); do
    redis-cli -h "$HOST" -p "$PORT" ping 2>/dev/null | grep -q PONG && break
    sleep 0.25
  done
fi

if ! redis-cli -h "$HOST" -p "$PORT" ping 2>/dev/null | grep -q PONG; then
  log "Redis does not answer on ${HOST}:${PORT}"
  exit 1
fi
set_env REDIS_TEST_URL "redis://${HOST}:${PORT}"
log "ready"
