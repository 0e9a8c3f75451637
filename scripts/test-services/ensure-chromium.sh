#!/usr/bin/env bash
# Makes sure a headless Chromium is on this machine for the browser tests (the share-link viewer page) and the PDF
# and PNG export renderer: Debian's `chromium`, driven by playwright-core with executablePath. Idempotent: an
# executable that already answers --version is only recorded. Writes CHROMIUM_PATH into the env file.
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

log() { echo "[ensure-chromium] $*" >&2; }

BIN="${CHROMIUM_PATH:-/usr/bin/chromium}"

if [ ! -x "$BIN" ]; then
  log "installing chromium from Debian"
  apt_install chromium
fi

if ! "$BIN" --headless --no-sandbox --disable-gpu --version >/dev/null 2>&1; then
  log "$BIN does not start"
  exit 1
fi
set_env CHROMIUM_PATH "$BIN"
log "ready: $("$BIN" --version 2>/dev/null)"
