#!/usr/bin/env bash
# Deltas in the field: for each framework app of e2e/apps (real builds from
# the npm registry, three releases each a few lines from the last), what
# headless Chromium downloads of scripts and stylesheets, and of the whole
# visit (every response, pages included) (encoded bytes, as
# it counts them), per release, with the earlier releases found through
# --cache-dir and through --dictionary-from: a first-time visitor with no
# dictionaries at all, a first-time visitor with them (any dictionary fetched
# at idle included) and what that adds, and a visitor who comes back after
# each release (the dictionaries it fetched included). Runs e2e/field.mjs;
# not a test (tests/field_browser.rs is).
#
#   bash bench/field.sh [OUT]     (default OUT: bench/results/field-<UTC time>.md)
#
# PRECOMPRESS_BIN=PATH runs that binary instead of building the release one
# (the bytes are the same: every encoder is deterministic). FIELD_ARGS adds
# arguments to every run (e.g. "--shared-dictionary on"); FIELD_APPS picks
# apps. Needs what .ci/e2e.sh installs (Chromium, playwright-core) and the npm
# registry.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-bench/results/field-$(date -u +%Y%m%dT%H%M%SZ).md}
bin=${PRECOMPRESS_BIN:-}
if [[ -z $bin ]]; then
  cargo build --release --locked -q
  bin=$PWD/target/release/precompress
fi
apps=${FIELD_APPS:-vite-react sveltekit astro nuxt}
mkdir -p "$(dirname "$out")"
results=()
for app in $apps; do
  work=target/field/$app
  bash e2e/apps/build.sh "$app" "$work" >/dev/null
  PRECOMPRESS=$bin node e2e/field.mjs "$app" "$work" >"$work/field.json"
  results+=("$work/field.json")
done
{
  echo "# Deltas in the field ($(date -u +%Y-%m-%d), $("$bin" --version), $(/usr/lib/chromium/chromium --version 2>/dev/null | tr -s ' ')${FIELD_ARGS:+, $FIELD_ARGS})"
  echo
  echo "Percentages are of a first visit with no dictionaries at all. A returning visitor"
  echo "saw every release since release 1. \`bash bench/field.sh\`."
  echo
  node bench/field-table.mjs "${results[@]}"
} >"$out"
cat "$out"
