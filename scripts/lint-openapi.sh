#!/usr/bin/env bash
# Lints the OpenAPI document as generated (no database needed) with Redocly (recommended rules, warnings as errors)
# and Spectral (spectral:oas, failing on warnings). Both must report nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
doc="$(mktemp --suffix=.json)"
trap 'rm -f "$doc"' EXIT
npm run -s openapi:dump > "$doc"
node_modules/.bin/redocly lint --config redocly.yaml --format=stylish "$doc"
node_modules/.bin/spectral lint --ruleset .spectral.yaml --fail-severity=warn --display-only-failures "$doc"
