#!/usr/bin/env bash
# Makes sure haproxy is installed (Debian's package) for the cluster test, which starts its own instance on loopback
# with docs/cluster.md's configuration. Nothing is started here.
set -euo pipefail
log() { echo "[ensure-haproxy] $*" >&2; }
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

if ! command -v haproxy >/dev/null 2>&1 && [ ! -x /usr/sbin/haproxy ]; then
  log "installing haproxy from Debian"
  apt_install haproxy
fi
set_env HAPROXY_BIN "$(command -v haproxy || echo /usr/sbin/haproxy)"
log "ready"
