#!/usr/bin/env bash
# Deltas in the field: for each framework app of e2e/apps (real builds from
# the npm registry, two releases a few lines apart), what headless Chromium
# downloads of scripts and stylesheets (encoded bytes, as it counts them):
# a first-time visitor of release 2, a returning visitor of release 1 (the
# dictionaries it fetched included), and what the shared dictionary costs a
# first-time visitor (fetched when idle). Runs e2e/field.mjs; not a test.
#
#   bash bench/field.sh [OUT]     (default OUT: bench/results/field-<UTC time>.md)
#
# PRECOMPRESS_BIN=PATH runs that binary instead of building the release one.
# Needs what .ci/e2e.sh installs (Chromium, playwright-core) and the npm registry.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-bench/results/field-$(date -u +%Y%m%dT%H%M%SZ).md}
bin=${PRECOMPRESS_BIN:-}
if [[ -z $bin ]]; then
  cargo build --release --locked -q
  bin=$PWD/target/release/precompress
fi
mkdir -p "$(dirname "$out")"
{
  echo "# Deltas in the field ($(date -u +%Y-%m-%d), $("$bin" --version), $(/usr/lib/chromium/chromium --version 2>/dev/null | tr -s ' '))"
  echo
  echo "| app | first visit JS+CSS | shared dictionary, first visit (idle) | returning visitor | of it dictionaries | returning / first | changed files, all deltas |"
  echo "|---|---:|---:|---:|---:|---:|---|"
} >"$out"
for app in vite-react sveltekit astro nuxt; do
  work=target/field/$app
  bash e2e/apps/build.sh "$app" "$work" >/dev/null
  PRECOMPRESS=$bin node e2e/field.mjs "$app" "$work" >"$work/field.json"
  # shellcheck disable=SC2016 # JavaScript, not shell
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const n = (x) => x.toLocaleString("en-US");
    const deltas = r.changed.filter((c) => ["dcb", "dcz"].includes(c.contentEncoding)).length;
    console.log(`| ${r.app}${r.base !== "/" ? ` (base ${r.base})` : ""} | ${n(r.firstTime.code)} B | ${n(r.firstTime.dictionaries)} B | ${n(r.returning.total)} B | ${n(r.returning.dictionaries)} B | ${(100 * r.ratio).toFixed(2)}% | ${deltas} of ${r.changed.length} |`);
  ' "$work/field.json" >>"$out"
done
cat "$out"
