#!/usr/bin/env bash
# Builds the docs site (VitePress) at three consecutive fastify releases.
#
#   e2e/apps/docs/build.sh WORKDIR
#
# 1. Copies e2e/apps/docs (without node_modules and outputs) to WORKDIR/src.
# 2. Runs `npm ci` there, unless WORKDIR/src/node_modules was installed from the
#    same package-lock.json on the same node major by an earlier run (then reused).
# 3. For each release in RELEASES: `npm pack fastify@VERSION` into WORKDIR/tarballs
#    (kept: a later run reuses it), prepare.mjs writes its docs/ markdown into
#    WORKDIR/src/docs, `vitepress build` (DOCS_VERSION=VERSION), and the output
#    is copied to WORKDIR/release-N.
#
# npm and the builds run on Node 24 (e2e/node24.sh, as e2e/apps/build.sh does).
# Progress and timings go to stderr, logs to WORKDIR/logs/. The last three lines
# on stdout are the absolute paths of WORKDIR/release-1, -2 and -3.
set -euo pipefail

# Consecutive fastify releases: 5.12.1 changes Reference/Server.md, 5.12.2
# Reference/Validation-and-Serialization.md and Reference/Warnings.md.
RELEASES=(5.12.0 5.12.1 5.12.2)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="${1:-}"
if [[ -z "$work" ]]; then
  echo "usage: $0 WORKDIR" >&2
  exit 2
fi
# shellcheck source=e2e/node24.sh disable=SC1091 # checked on its own (shellcheck e2e/node24.sh)
source "$here/../../node24.sh"

mkdir -p "$work"
work="$(cd "$work" && pwd)"
src="$work/src"
logs="$work/logs"
tarballs="$work/tarballs"
mkdir -p "$src" "$logs" "$tarballs"

# shellcheck disable=SC2034 # read by steps.sh
tag=docs
# shellcheck source=e2e/apps/steps.sh disable=SC1091 # checked on its own (shellcheck e2e/apps/steps.sh)
source "$here/../steps.sh"

total0="$(now)"
say "node $(node --version), npm $(npm --version)"

# 1. Fresh copy of the sources; an existing node_modules stays.
find "$src" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
tar -C "$here" --exclude=./node_modules --exclude=./docs --exclude=./dist \
    --exclude=./.vitepress/cache --exclude=./.vitepress/dist -cf - . | tar -C "$src" -xf -

# 2. Install, unless node_modules came from this very lock file on this node major.
install_once

# 3. Each release: its docs from the registry tarball, then the build.
n=0
for version in "${RELEASES[@]}"; do
  n=$((n + 1))
  tgz="$tarballs/fastify-$version.tgz"
  if [[ ! -s "$tgz" ]]; then
    step "pack-$version" npm pack "fastify@$version" --pack-destination "$tarballs" --silent
  fi
  step "prepare-$version" node "$src/prepare.mjs" "$tgz" "$src/docs"
  (cd "$src" && rm -rf dist .vitepress/cache)
  step "build-release-$n" env DOCS_VERSION="$version" npm run build
  [[ -d "$src/dist" ]] || { say "build produced no dist/"; exit 1; }
  rm -rf "$work/release-$n"
  mkdir -p "$work/release-$n"
  cp -a "$src/dist/." "$work/release-$n/"
done

say "total: $(since "$total0")s"
for n in 1 2 3; do echo "$work/release-$n"; done
