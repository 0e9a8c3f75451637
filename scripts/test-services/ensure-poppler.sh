#!/usr/bin/env bash
# Makes sure pdftotext (Debian poppler-utils) is on this machine for the export tests, which read the text of the
# PDFs the export renderer prints. Idempotent: an installed pdftotext is only recorded. Writes PDFTOTEXT_PATH into
# the env file.
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

log() { echo "[ensure-poppler] $*" >&2; }

BIN="${PDFTOTEXT_PATH:-/usr/bin/pdftotext}"

if [ ! -x "$BIN" ]; then
  log "installing poppler-utils from Debian"
  apt_install poppler-utils
fi

if ! "$BIN" -v >/dev/null 2>&1; then
  log "$BIN does not start"
  exit 1
fi
set_env PDFTOTEXT_PATH "$BIN"
log "ready: $("$BIN" -v 2>&1 | head -n 1)"
