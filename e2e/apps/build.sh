#!/usr/bin/env bash
# Builds one of the e2e apps three times, as releases 1, 2 and 3.
#
#   e2e/apps/build.sh APP WORKDIR      APP: vite-react | sveltekit | astro | nuxt
#
# 1. Copies e2e/apps/APP (without node_modules and build outputs) to WORKDIR/src.
# 2. Runs `npm ci` there, unless WORKDIR/src/node_modules was installed from the
#    same package-lock.json by an earlier run (then it is reused).
# 3. Builds release 1 and copies the deployable folder to WORKDIR/release-1.
# 4. Applies release2.mjs to WORKDIR/src, builds again, copies to WORKDIR/release-2.
# 5. Applies `release2.mjs SRC 3` on top, builds again, copies to WORKDIR/release-3.
#
# npm and the builds run on Node 24 (e2e/node24.sh: e2e/edge's, which .ci/e2e.sh
# installs): the frameworks' current majors need Node 22 or later.
# Progress and timings go to stderr, build logs to WORKDIR/logs/. The last three
# lines on stdout are the absolute paths of WORKDIR/release-1, -2 and -3.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
app="${1:-}"
work="${2:-}"
if [[ -z "$app" || -z "$work" ]]; then
  echo "usage: $0 APP WORKDIR   (APP: vite-react | sveltekit | astro | nuxt)" >&2
  exit 2
fi

# Build command and deployable folder (relative to the project) per app.
case "$app" in
  vite-react) build=(npm run build);    out=dist ;;
  sveltekit)  build=(npm run build);    out=build ;;
  astro)      build=(npm run build);    out=dist ;;
  nuxt)       build=(npm run generate); out=.output/public ;;
  *) echo "build.sh: unknown app '$app' (vite-react | sveltekit | astro | nuxt)" >&2; exit 2 ;;
esac
[[ -f "$here/$app/package-lock.json" ]] || { echo "build.sh: $here/$app/package-lock.json missing" >&2; exit 1; }
# shellcheck source=e2e/node24.sh disable=SC1091 # checked on its own (shellcheck e2e/node24.sh)
source "$here/../node24.sh"

# Everything a build writes into the project; never copied, removed before each build.
generated=(dist build .output .nuxt .svelte-kit .astro node_modules/.vite node_modules/.cache node_modules/.astro)

mkdir -p "$work"
work="$(cd "$work" && pwd)"
src="$work/src"
logs="$work/logs"
mkdir -p "$src" "$logs"

export NUXT_TELEMETRY_DISABLED=1 ASTRO_TELEMETRY_DISABLED=1

# shellcheck disable=SC2034 # read by steps.sh
tag="$app"
# shellcheck source=e2e/apps/steps.sh disable=SC1091 # checked on its own (shellcheck e2e/apps/steps.sh)
source "$here/steps.sh"

total0="$(now)"
say "node $(node --version), npm $(npm --version)"

# 1. Fresh copy of the sources; an existing node_modules stays.
find "$src" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
tar -C "$here/$app" --exclude=./node_modules --exclude=./dist --exclude=./build \
    --exclude=./.output --exclude=./.nuxt --exclude=./.svelte-kit --exclude=./.astro \
    -cf - . | tar -C "$src" -xf -

# 2. Install, unless node_modules came from this very lock file on this node major.
install_once

build_release() {
  local n="$1"
  (cd "$src" && rm -rf "${generated[@]}")
  step "build-release-$n" "${build[@]}"
  [[ -d "$src/$out" ]] || { say "build produced no $out/"; exit 1; }
  rm -rf "$work/release-$n"
  mkdir -p "$work/release-$n"
  cp -a "$src/$out/." "$work/release-$n/"
}

# 3. Release 1.
build_release 1

# 4. Release 2: a small source edit, then the same build.
step release2 node "$here/release2.mjs" "$src"
build_release 2

# 5. Release 3: another small edit on top of release 2.
step release3 node "$here/release2.mjs" "$src" 3
build_release 3

say "total: $(since "$total0")s"
if [[ "$app" == vite-react ]]; then
  say "note: built with base '/app/': serve each release folder under the URL path /app/"
fi
echo "$work/release-1"
echo "$work/release-2"
echo "$work/release-3"
