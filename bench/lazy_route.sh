#!/usr/bin/env bash
# What a first visit fetches of dictionaries on a build whose largest chunk
# that imports another is a lazy route (issue #36's Nuxt-like tree:
# tests/serve_util's lazy_route_tree, a 900 KB admin chunk reached only by
# import()), in Chromium, against what the run's summary says it costs; for
# --shared-dictionary auto (the default) and on. Runs the e2e test that holds
# it (tests/field_browser.rs) and keeps its lines.
#
#   bash bench/lazy_route.sh [OUT]   (default OUT: bench/results/lazy-route-<UTC time>.md)
#
# Needs what .ci/e2e.sh installs (Chromium, playwright-core).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-bench/results/lazy-route-$(date -u +%Y%m%dT%H%M%SZ).md}
log=$(cargo test --locked -q --test field_browser a_lazy_route -- --include-ignored --nocapture 2>&1)
{
  echo "# A lazy route and the first visit ($(date -u +%Y-%m-%d), $(git rev-parse --short HEAD))"
  echo
  echo "\`bash bench/lazy_route.sh\`: one first visit of \`/\` in Chromium, served by \`precompress serve\`."
  echo
  grep -E '^(auto|on): ' <<<"$log" | sed 's/^/- /'
} >"$out"
cat "$out"
