#!/usr/bin/env bash
# Proves the npm packages on a real Vite project, from a checkout:
#
#   bash npm/test.sh
#
# packs them (npm/pack.sh; PRECOMPRESS_BIN=path reuses a binary already built,
# else it builds the release binary), installs the two tarballs and Vite from
# the npm registry into a fresh project in a temp folder, builds it with the
# plugin and checks what the build wrote; then a bad option, a budget, and an
# install without the platform package must each fail with their message.
# Also runs the unit tests (node --test npm/precompressor/test/). Runs on Node
# 24 (e2e/node24.sh: e2e/edge's, which `bash .ci/e2e.sh` installs; the current
# Astro, SvelteKit and Nuxt need Node 22+), and needs npm and the npm
# registry; KEEP=1 keeps the temp folder.
# PRECOMPRESS_TEST_VITE (default vite@8) and PRECOMPRESS_TEST_TS (default
# typescript@5) pin what is installed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=e2e/node24.sh disable=SC1091 # checked on its own (shellcheck e2e/node24.sh)
source "$repo/e2e/node24.sh"
vite_spec=${PRECOMPRESS_TEST_VITE:-vite@8}
ts_spec=${PRECOMPRESS_TEST_TS:-typescript@5}
npm_install=(npm install --no-audit --no-fund --prefer-offline --loglevel=error)
start=$SECONDS

work=$(mktemp -d "${TMPDIR:-/tmp}/precompress-npm-test.XXXXXX")
if [[ -n ${KEEP:-} ]]; then
  trap 'echo "kept $work"' EXIT
else
  trap 'rm -rf "$work"' EXIT
fi

checks=0
step() { printf '\n== %s (%ss)\n' "$*" "$((SECONDS - start))"; }
ok() { checks=$((checks + 1)); printf '  ok: %s\n' "$*"; }
fail() {
  printf '  FAIL: %s\n' "$*" >&2
  exit 1
}
# run LOG CMD...: runs CMD with its output in LOG, sets $rc, never exits.
run() {
  local log=$1
  shift
  set +e
  "$@" >"$log" 2>&1
  rc=$?
  set -e
}
show() { sed 's/^/    | /' "$1"; }
expect_rc() { # expect_rc WANT LOG WHAT
  if [[ $rc != "$1" ]]; then
    show "$2"
    fail "$3: exit code $rc, expected $1"
  fi
  ok "$3: exit code $rc"
}
expect_grep() { # expect_grep PATTERN LOG WHAT (fixed string)
  if ! grep -qF -- "$1" "$2"; then
    show "$2"
    fail "$3: output has no \"$1\""
  fi
  ok "$3: output has \"$1\""
}

version=$(sed -n '/^\[package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' "$repo/Cargo.toml")
version=${version%%$'\n'*}
[[ -n $version ]] || fail "no version in Cargo.toml"
platform=${NPM_PLATFORM:-$(node -p 'process.platform + "-" + process.arch')}
echo "precompressor $version, platform package precompressor-$platform, $vite_spec, node $(node --version), npm $(npm --version)"

step "pack (npm/pack.sh)"
mapfile -t tarballs < <(bash "$here/pack.sh" "$work/tarballs")
((${#tarballs[@]} == 2)) || fail "pack.sh printed ${#tarballs[@]} tarball paths, expected 2"
# pack.sh's input only: the launcher under test must find its binary itself (and
# warns about a PRECOMPRESS_BIN it would not read).
export -n PRECOMPRESS_BIN
platform_tgz=${tarballs[0]}
main_tgz=${tarballs[1]}
[[ $(basename "$platform_tgz") == "precompressor-$platform-$version.tgz" ]] || fail "platform tarball is $platform_tgz"
[[ $(basename "$main_tgz") == "precompressor-$version.tgz" ]] || fail "main tarball is $main_tgz"
ok "tarballs $(basename "$platform_tgz") $(basename "$main_tgz")"
tar tzvf "$platform_tgz" >"$work/platform.list"
tar tzvf "$main_tgz" >"$work/main.list"
grep -Eq '^-rwx.* package/bin/precompress(\.exe)?$' "$work/platform.list" || fail "no executable bin/precompress in the platform tarball"
ok "platform tarball holds an executable bin/precompress"
grep -Eq '^-rwx.* package/bin/precompress\.js$' "$work/main.list" || fail "no executable bin/precompress.js in the main tarball"
for f in lib/binary.js lib/options.js lib/platforms.js lib/run.js lib/negotiate.js lib/serve.js serve.d.ts lib/worker.js worker.d.ts lib/rum.js rum.d.ts lib/rum-collector.js rum-collector.d.ts lib/netlify.js netlify.d.ts lib/pages.js pages.d.ts lib/content-types.js lib/vite.js lib/astro.js lib/sveltekit.js lib/nuxt.js lib/webpack.js lib/index.js vite.d.ts astro.d.ts sveltekit.d.ts nuxt.d.ts webpack.d.ts index.d.ts README.md package.json; do
  grep -q " package/$f\$" "$work/main.list" || fail "the main tarball has no $f"
done
if grep -Eq ' package/(test/|node_modules/)' "$work/main.list"; then fail "the main tarball holds tests or node_modules"; fi
ok "main tarball holds bin/precompress.js, lib/, the types and README, and no tests"
licences=0
for f in "$repo"/LICENSE* "$repo"/LICENCE* "$repo"/COPYING*; do
  [[ -f $f ]] || continue
  licences=$((licences + 1))
  grep -q " package/$(basename "$f")\$" "$work/main.list" || fail "the main tarball has no $(basename "$f")"
  grep -q " package/$(basename "$f")\$" "$work/platform.list" || fail "the platform tarball has no $(basename "$f")"
done
ok "both tarballs hold the repo's $licences licence file(s)"
tar xzf "$main_tgz" -C "$work" package/package.json
# shellcheck disable=SC2016 # JavaScript, not shell, in single quotes
node -e '
  const [file, version, platform] = process.argv.slice(1);
  const pj = JSON.parse(require("fs").readFileSync(file, "utf8"));
  const want = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"].map((k) => "precompressor-" + k);
  const bad = (m) => { console.error("  FAIL: main package.json: " + m); process.exit(1); };
  if (pj.version !== version) bad(`version ${pj.version}, Cargo.toml ${version}`);
  const opt = pj.optionalDependencies ?? {};
  if (JSON.stringify(Object.keys(opt).sort()) !== JSON.stringify(want.sort())) bad(`optionalDependencies ${JSON.stringify(opt)}`);
  if (Object.values(opt).some((v) => v !== version)) bad(`optionalDependencies not all at ${version}: ${JSON.stringify(opt)}`);
  if (!opt["precompressor-" + platform]) bad(`no package for ${platform}`);
  if (pj.scripts?.postinstall || pj.scripts?.install || pj.scripts?.preinstall) bad("has an install script");
' "$work/package/package.json" "$version" "$platform"
ok "main package.json: version $version, optionalDependencies on the 5 platform packages at $version, no install script"

step "a Vite project ($vite_spec) with the plugin"
app=$work/app
mkdir -p "$app/src" "$app/public"
cat >"$app/package.json" <<'EOF'
{ "name": "precompress-vite-test", "private": true, "type": "module" }
EOF
cat >"$app/index.html" <<'EOF'
<!doctype html>
<html lang="en">
  <head><meta charset="utf-8"><title>precompress + Vite</title></head>
  <body><div id="app"></div><script type="module" src="/src/main.js"></script></body>
</html>
EOF
# Enough generated JS, CSS and SVG (over 1 KiB each once minified) that their variants are kept.
{
  echo "import './style.css';"
  echo "import logo from './logo.svg';"
  echo "const items = ["
  for i in $(seq 1 120); do echo "  'Item $i: precompress writes brotli, zstd and gzip variants beside each asset',"; done
  echo "];"
  echo "const app = document.querySelector('#app');"
  echo "app.innerHTML = '<img src=\"' + logo + '\" alt=\"logo\">' + items.map((t, i) => '<p class=\"c' + (i % 60) + '\">' + t + '</p>').join('');"
} >"$app/src/main.js"
for i in $(seq 0 59); do printf '.c%d { color: #%06x; margin: %dpx 0 %dpx; font-family: system-ui, sans-serif; }\n' "$i" $((i * 4000)) "$i" $((i % 7)); done >"$app/src/style.css"
{
  echo '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">'
  for i in $(seq 1 40); do echo "  <circle cx=\"$((i * 2))\" cy=\"$((100 - i * 2))\" r=\"$((i % 9 + 1))\" fill=\"#3366cc\" opacity=\"0.5\"/>"; done
  echo '</svg>'
} >"$app/src/logo.svg"
for i in $(seq 1 60); do echo "Disallow: /private/area-$i/"; done >"$app/public/robots.txt"
cat >"$app/vite.config.js" <<'EOF'
import { defineConfig } from 'vite';
import precompress from 'precompressor/vite';

export default defineConfig({
  build: { sourcemap: true, assetsInlineLimit: 0 },
  plugins: [
    precompress({
      gzipLevel: 9,
      exclude: /\.map$/,
      budgets: { 'assets/*.js': '100KB' },
      cacheDir: 'node_modules/.cache/precompress',
      check: true,
    }),
  ],
});
EOF
cat >"$app/bad-option.config.js" <<'EOF'
import precompress from 'precompressor/vite';
export default { build: { outDir: 'dist-bad' }, plugins: [precompress({ brotliQuality: 12 })] };
EOF
cat >"$app/typo.config.js" <<'EOF'
import precompress from 'precompressor/vite';
export default { build: { outDir: 'dist-typo' }, plugins: [precompress({ brotliQualty: 5 })] };
EOF
cat >"$app/lib.config.js" <<'EOF'
import precompress from 'precompressor/vite';
export default { build: { outDir: 'dist-lib', lib: { entry: 'src/main.js', formats: ['es'] } }, plugins: [precompress()] };
EOF
cat >"$app/silent.config.js" <<'EOF'
import precompress from 'precompressor/vite';
export default { logLevel: 'silent', build: { outDir: 'dist-silent' }, plugins: [precompress({ verbose: true })] };
EOF
cat >"$app/budget.config.js" <<'EOF'
import precompress from 'precompressor/vite';
export default { build: { outDir: 'dist-budget' }, plugins: [precompress({ budgets: { 'assets/*.js': 100 } })] };
EOF
cat >"$app/types-check.ts" <<'EOF'
import { defineConfig, type Plugin } from 'vite';
import precompress, { type PrecompressOptions } from 'precompressor/vite';
import { binaryPath, VERSION } from 'precompressor';
import { rum, type RumReport } from 'precompressor/rum';
import { createCollector, type RumTotals } from 'precompressor/rum-collector';

const options: PrecompressOptions = {
  formats: ['br', 'gzip'],
  brotliQuality: 11,
  exclude: [/\.map$/, '*.txt'],
  minSize: '1KiB',
  budgets: { 'assets/**/*.js': '150KB', '*.css': 30000 },
  dictionaryFrom: ['../prev/dist'],
  manifest: 'm.json',
};
const plugin: Plugin = precompress(options);
export default defineConfig({ plugins: [plugin, precompress()] });
export const where: string = binaryPath() + VERSION;
// @ts-expect-error the option is brotliQuality
precompress({ brotliLevel: 5 });
// @ts-expect-error not a format
precompress({ formats: ['brotli'] });
// @ts-expect-error the manifest cannot be turned off
precompress({ manifest: false });
export const send: (() => void) | undefined = rum('https://collect.example.com/rum', 0.1);
export const report: RumReport = { v: 1, sample: 0.1, kinds: { script: { dcb: { n: 1, transfer: 1, body: 1, file: 9 } } } };
const collector = createCollector({ path: '/rum', onReport: (r) => void r.sample });
export const totals: RumTotals = collector.totals();
export const answer: (r: Request) => Promise<Response> = collector.fetch;
// @ts-expect-error the path is a string
createCollector({ path: 1 });
EOF
cat >"$app/tsconfig.json" <<'EOF'
{ "compilerOptions": { "strict": true, "noEmit": true, "module": "nodenext", "moduleResolution": "nodenext",
  "target": "es2022", "skipLibCheck": true, "types": [] }, "files": ["types-check.ts"] }
EOF
cd "$app"
run "$work/install.log" "${npm_install[@]}" "$main_tgz" "$platform_tgz" "$vite_spec" "$ts_spec"
expect_rc 0 "$work/install.log" "npm install the two tarballs, $vite_spec, $ts_spec"
bin=$app/node_modules/precompressor-$platform/bin/precompress
[[ -x $bin || -x $bin.exe ]] || fail "npm did not install an executable $bin"
ok "installed node_modules/precompressor-$platform/bin/precompress, executable"
[[ -e node_modules/.bin/precompress ]] || fail "no node_modules/.bin/precompress"
ok "node_modules/.bin/precompress links the launcher"

step "unit tests (node --test npm/precompressor/test/, against the installed binary)"
# TAP, for its summary lines: on Node 24 the default reporter is spec even when piped.
run "$work/unit.log" env PRECOMPRESS_BINARY="$bin" node --test --test-reporter=tap "$here"/precompressor/test/*.test.js
expect_rc 0 "$work/unit.log" "node --test"
grep -E '^# (tests|pass|fail|skipped)' "$work/unit.log" | sed 's/^/    /'
if ! grep -q '^# fail 0$' "$work/unit.log" || ! grep -q '^# skipped 0$' "$work/unit.log"; then show "$work/unit.log"; fail "unit tests failed or skipped"; fi
ok "unit tests: none failed, none skipped"

step "npx precompress --version"
# Elsewhere `npx --no --`: never fall back to the registry (whose `precompress` is
# another package), and npx's own flags (--version, --config) stay the command's.
run "$work/version.log" npx precompress --version
expect_rc 0 "$work/version.log" "npx precompress --version"
[[ $(cat "$work/version.log") == "precompress $version" ]] || { show "$work/version.log"; fail "--version is not \"precompress $version\""; }
ok "prints \"precompress $version\" (Cargo.toml's version)"

step "types (tsc from $ts_spec on types-check.ts)"
run "$work/tsc.log" npx --no -- tsc -p .
expect_rc 0 "$work/tsc.log" "tsc: vite.d.ts and index.d.ts type a Vite config, and reject brotliLevel, 'brotli', manifest: false"

step "vite build"
run "$work/build.log" npx --no -- vite build
expect_rc 0 "$work/build.log" "vite build"
show "$work/build.log"
expect_grep "precompress: " "$work/build.log" "the plugin printed precompress's summary"
expect_grep "precompress: check: ok" "$work/build.log" "check: true ran precompress check"
mapfile -t built < <(cd dist && find assets -type f \( -name '*.js' -o -name '*.css' -o -name '*.svg' \) | sort)
((${#built[@]} >= 3)) || fail "vite built ${#built[@]} JS/CSS/SVG assets: ${built[*]}"
for kind in js css svg; do grep -q "\.$kind\$" <<<"$(printf "%s\n" "${built[@]}")" || fail "no .$kind in dist/assets"; done
ok "vite built ${built[*]}"
for f in "${built[@]}"; do
  for ext in br zst gz; do
    [[ -s dist/$f.$ext ]] || fail "no dist/$f.$ext"
  done
done
ok "each of them has .br, .zst and .gz beside it"
[[ -s dist/robots.txt.br ]] || fail "no dist/robots.txt.br: public/ was copied after the plugin ran"
ok "public/robots.txt, copied by Vite, has its variants too (dist/robots.txt.br)"
node -e '
  const fs = require("fs"), zlib = require("zlib");
  for (const f of process.argv.slice(1)) {
    const src = fs.readFileSync("dist/" + f);
    if (!zlib.brotliDecompressSync(fs.readFileSync("dist/" + f + ".br")).equals(src)) throw new Error(f + ".br does not decode to " + f);
    if (!zlib.gunzipSync(fs.readFileSync("dist/" + f + ".gz")).equals(src)) throw new Error(f + ".gz does not decode to " + f);
  }
' "${built[@]}"
ok ".br and .gz decode to their sources (node's zlib; .zst is decoded by precompress check)"
mapfile -t maps < <(cd dist && find assets -name '*.map' | sort)
((${#maps[@]} >= 1)) || fail "no source maps built (build.sourcemap)"
for m in "${maps[@]}"; do
  if compgen -G "dist/$m.*" >/dev/null; then fail "dist/$m has variants though exclude: ['*.map']"; fi
done
ok "exclude: /\\.map\$/ applied: ${maps[*]} have no variants"
[[ -d node_modules/.cache/precompress ]] || fail "cacheDir node_modules/.cache/precompress was not created"
ok "cacheDir created node_modules/.cache/precompress"
[[ -f dist/precompress-manifest.json ]] || fail "no dist/precompress-manifest.json"
node -e '
  const m = JSON.parse(require("fs").readFileSync("dist/precompress-manifest.json", "utf8"));
  for (const f of process.argv.slice(1)) {
    const entry = m.files?.[f];
    if (!entry) throw new Error("the manifest does not name " + f);
    const codings = (entry.encodings ?? []).map((e) => e.coding + "=" + e.path).sort().join(" ");
    const want = ["br=" + f + ".br", "gzip=" + f + ".gz", "zstd=" + f + ".zst"].join(" ");
    if (codings !== want) throw new Error(f + ": manifest encodings " + codings + ", expected " + want);
  }
  if (!m.files["index.html"]) throw new Error("the manifest does not name index.html");
' "${built[@]}"
ok "dist/precompress-manifest.json names each asset with its br, zstd and gzip variants, and index.html"

run "$work/check.log" npx --no -- precompress check dist
expect_rc 0 "$work/check.log" "npx precompress check dist"
cp -r dist "$work/dist-corrupt"
printf 'x' >>"$work/dist-corrupt/${built[0]}.br"
run "$work/check-corrupt.log" npx --no -- precompress check "$work/dist-corrupt"
[[ $rc != 0 ]] || { show "$work/check-corrupt.log"; fail "precompress check passed a corrupted ${built[0]}.br"; }
ok "and it fails (exit $rc) on a copy with ${built[0]}.br corrupted"

run "$work/build2.log" npx --no -- vite build
expect_rc 0 "$work/build2.log" "vite build again (Vite empties dist/)"
# Encoded again: only the page's deltas against its identical self in the first build's
# release (a visitor holding it as a delta revalidates with that delta's ETag).
encoded=$(grep -Eo 'variants: [0-9]+ encoded' "$work/build2.log" | grep -Eo '[0-9]+' || true)
page_deltas=$(grep -Eo '[0-9]+ page deltas' "$work/build2.log" | grep -Eo '^[0-9]+' || echo 0)
{ [[ -n $encoded && $encoded == "$page_deltas" ]] && grep -Eq 'encoded, [1-9][0-9]* from cache' "$work/build2.log"; } || { show "$work/build2.log"; fail "the second build did not take every variant from cacheDir"; }
ok "the second build took every variant from cacheDir: $(grep -Eo 'variants: [0-9]+ encoded, [0-9]+ from cache' "$work/build2.log") (the encoded: the page's $page_deltas deltas against its identical self)"

step "an SSR build is left alone (its output is not served to browsers)"
echo "export const render = () => '<p>server</p>'.repeat(200);" >src/entry-server.js
run "$work/ssr.log" npx --no -- vite build --ssr src/entry-server.js --outDir dist-ssr
expect_rc 0 "$work/ssr.log" "vite build --ssr"
[[ -f dist-ssr/entry-server.js ]] || { show "$work/ssr.log"; fail "vite build --ssr wrote no dist-ssr/entry-server.js"; }
if compgen -G "dist-ssr/*.br" >/dev/null || [[ -e dist-ssr/precompress-manifest.json ]] || grep -q '^precompress: ' "$work/ssr.log"; then
  show "$work/ssr.log"
  fail "the plugin ran on the SSR build"
fi
ok "dist-ssr/ has no variants and no manifest, and precompress printed nothing"

step "a bad plugin option fails the build before bundling"
run "$work/bad.log" npx --no -- vite build --config bad-option.config.js
[[ $rc != 0 ]] || { show "$work/bad.log"; fail "vite build with brotliQuality: 12 succeeded"; }
ok "vite build with brotliQuality: 12 exits $rc"
# shellcheck disable=SC2016 # backquotes in the message
expect_grep 'precompressor/vite: option `brotliQuality` must be an integer from 0 to 11, got 12' "$work/bad.log" "the error"
[[ ! -e dist-bad ]] || fail "dist-bad exists: Vite bundled before the option was rejected"
ok "nothing was built (no dist-bad/)"

run "$work/typo.log" npx --no -- vite build --config typo.config.js
[[ $rc != 0 ]] || { show "$work/typo.log"; fail "vite build with brotliQualty succeeded"; }
# shellcheck disable=SC2016 # backquotes in the message
expect_grep 'unknown option `brotliQualty` (did you mean `brotliQuality`?)' "$work/typo.log" "a typo names the nearest option"

step "library mode is left alone, with a warning"
run "$work/lib.log" npx --no -- vite build --config lib.config.js
expect_rc 0 "$work/lib.log" "vite build in library mode"
expect_grep "library mode (build.lib) builds a package to publish" "$work/lib.log" "the warning says why"
if compgen -G "dist-lib/*.br" >/dev/null || [[ -e dist-lib/precompress-manifest.json ]]; then fail "the plugin compressed dist-lib"; fi
ok "dist-lib/ has no variants and no manifest"

step "logLevel 'silent' with verbose: true builds, and prints nothing of precompress"
run "$work/silent.log" npx --no -- vite build --config silent.config.js
expect_rc 0 "$work/silent.log" "vite build, logLevel silent, verbose"
[[ -f dist-silent/precompress-manifest.json ]] || fail "no dist-silent/precompress-manifest.json"
if grep -q 'precompress' "$work/silent.log"; then show "$work/silent.log"; fail "precompress printed under logLevel silent"; fi
ok "dist-silent/ was compressed and the log is silent"

step "a budget exceeded fails the build"
run "$work/budget.log" npx --no -- vite build --config budget.config.js
[[ $rc != 0 ]] || { show "$work/budget.log"; fail "vite build with budgets { 'assets/*.js': 100 } succeeded"; }
ok "vite build with budgets: { 'assets/*.js': 100 } exits $rc"
expect_grep "precompress: over budget: assets/" "$work/budget.log" "precompress's message"
(($(grep -c "precompress: over budget: assets/" "$work/budget.log") == 1)) || { show "$work/budget.log"; fail "the budget error is printed more than once"; }
ok "said once"
expect_grep "precompressor/vite: \`precompress dist-budget '--budget=assets/*.js=100'\` exited with code 1" "$work/budget.log" "the build error"
[[ -f dist-budget/${built[0]}.br ]] || fail "no variants in dist-budget (precompress wrote them before checking budgets)"
ok "the variants were still written (dist-budget/${built[0]}.br)"

step "no platform package (npm install --omit=optional)"
noopt=$work/noopt
mkdir -p "$noopt"
echo '{ "name": "precompress-noopt-test", "private": true }' >"$noopt/package.json"
cd "$noopt"
# Only precompressor: --omit=optional would leave Vite without rolldown's native binding too.
run "$work/noopt-install.log" "${npm_install[@]}" --omit=optional "$main_tgz"
expect_rc 0 "$work/noopt-install.log" "npm install --omit=optional the main tarball"
[[ -d node_modules/precompressor && ! -e node_modules/precompressor-$platform ]] || fail "node_modules: $(ls node_modules)"
ok "node_modules has precompressor, not precompressor-$platform"
run "$work/noopt-version.log" npx --no -- precompress --version
expect_rc 1 "$work/noopt-version.log" "npx precompress --version"
show "$work/noopt-version.log"
expect_grep "precompress: the package precompressor-$platform, which holds the binary for this platform ($platform" "$work/noopt-version.log" "names the platform and the package"
expect_grep "without --omit=optional" "$work/noopt-version.log" "says to reinstall with the optional dependencies"
expect_grep "cargo install precompressor" "$work/noopt-version.log" "says cargo install"
expect_grep "PRECOMPRESS_BINARY=" "$work/noopt-version.log" "says PRECOMPRESS_BINARY"
run "$work/noopt-env.log" env PRECOMPRESS_BINARY="$bin" npx --no -- precompress --version
expect_rc 0 "$work/noopt-env.log" "PRECOMPRESS_BINARY=$bin npx precompress --version"
[[ $(cat "$work/noopt-env.log") == "precompress $version" ]] || fail "PRECOMPRESS_BINARY run printed $(cat "$work/noopt-env.log")"
ok "prints \"precompress $version\""

step "the Vite plugin without the platform package (moved out of the Vite project's node_modules)"
cd "$app"
mv "node_modules/precompressor-$platform" "$work/aside"
run "$work/noplat-build.log" npx --no -- vite build --outDir dist-noplat
mv "$work/aside" "node_modules/precompressor-$platform"
[[ $rc != 0 ]] || { show "$work/noplat-build.log"; fail "vite build without the platform package succeeded"; }
ok "vite build exits $rc"
expect_grep "precompress: the package precompressor-$platform, which holds the binary for this platform ($platform" "$work/noplat-build.log" "the same message"
if grep -q 'Getter/Setter' "$work/noplat-build.log"; then show "$work/noplat-build.log"; fail "the error shows [Getter/Setter]"; fi
ok "plainly (no [Getter/Setter])"
[[ ! -e dist-noplat ]] || fail "dist-noplat exists: the missing binary was found out after the build, not before"
ok "before bundling (no dist-noplat/)"

# verify_deployed DIR WHAT: every .br and .gz under DIR decodes to the file
# beside it (node's zlib; .zst is decoded by precompress check), no server
# file (.mjs, .cjs) got a variant, and each page named after DIR has one.
verify_deployed() {
  local dir=$1 what=$2
  shift 2
  node -e '
    const fs = require("fs"), path = require("path"), zlib = require("zlib");
    const [dir, ...pages] = process.argv.slice(1);
    const all = fs.readdirSync(dir, { recursive: true }).map(String);
    let n = 0;
    for (const f of all) {
      const m = /^(.*)\.(br|gz|zst)$/.exec(f);
      if (!m) continue;
      const src = path.join(dir, m[1]);
      if (!fs.existsSync(src)) throw new Error(f + ": a variant of a file that is not deployed");
      if (/\.(mjs|cjs)$/.test(m[1])) throw new Error(f + ": a variant of server code");
      if (m[2] === "zst") continue;
      const out = (m[2] === "br" ? zlib.brotliDecompressSync : zlib.gunzipSync)(fs.readFileSync(path.join(dir, f)));
      if (!out.equals(fs.readFileSync(src))) throw new Error(f + " does not decode to " + m[1]);
      n++;
    }
    for (const p of pages) if (!fs.existsSync(path.join(dir, p + ".br"))) throw new Error("the page " + p + " has no .br");
    if (n === 0) throw new Error("no variants under " + dir);
    console.log(n);
  ' "$dir" "$@" >"$work/verify.log" 2>&1 || { show "$work/verify.log"; fail "$what"; }
  ok "$what: $(cat "$work/verify.log") .br and .gz decode to their files, no server code has a variant, $* compressed"
}

# A framework app of e2e/apps (pinned, from the registry) in a temp copy, with
# the two tarballs installed.
framework_app() { # framework_app APP
  local dir=$work/$1
  mkdir -p "$dir"
  (cd "$repo/e2e/apps/$1" && tar cf - --exclude=node_modules .) | (cd "$dir" && tar xf -)
  cd "$dir"
  run "$work/$1-ci.log" npm ci --no-audit --no-fund --prefer-offline --loglevel=error
  expect_rc 0 "$work/$1-ci.log" "npm ci in a copy of e2e/apps/$1"
  run "$work/$1-add.log" "${npm_install[@]}" --no-save "$main_tgz" "$platform_tgz"
  expect_rc 0 "$work/$1-add.log" "npm install the two tarballs into it"
}

step "Astro 7 with precompressor/astro (e2e/apps/astro: a static site with a Preact island)"
framework_app astro
cat >astro.config.mjs <<'EOF'
import { defineConfig } from 'astro/config';
import preact from '@astrojs/preact';
import precompress from 'precompressor/astro';

export default defineConfig({
  integrations: [preact(), precompress({ check: true, exclude: /\.map$/ })],
  build: { inlineStylesheets: 'never' },
  telemetry: false,
});
EOF
run "$work/astro-build.log" env ASTRO_TELEMETRY_DISABLED=1 npx --no -- astro build
expect_rc 0 "$work/astro-build.log" "astro build with the integration"
expect_grep "precompress: check: ok" "$work/astro-build.log" "check: true passed on dist/"
verify_deployed dist "Astro's dist/" index.html
[[ ! -e dist/chunks && ! -e dist/pages ]] || fail "Astro's prerender chunks are still in dist/"
run "$work/astro-check.log" npx --no -- precompress check dist
expect_rc 0 "$work/astro-check.log" "precompress check dist"
cat >bad.config.mjs <<'EOF'
import precompress from 'precompressor/astro';
export default { integrations: [precompress({ dictionaryFrom: '../no-such-release' })], outDir: 'dist-bad' };
EOF
run "$work/astro-bad.log" env ASTRO_TELEMETRY_DISABLED=1 npx --no -- astro build --config bad.config.mjs
[[ $rc != 0 ]] || { show "$work/astro-bad.log"; fail "astro build with a missing dictionaryFrom succeeded"; }
# shellcheck disable=SC2016 # backquotes in the message
expect_grep 'precompressor/astro: option `dictionaryFrom` names ../no-such-release, which does not exist' "$work/astro-bad.log" "a missing dictionaryFrom fails the build, named"
[[ ! -e dist-bad ]] || fail "dist-bad exists: Astro built before the option was refused"
ok "before anything was built (no dist-bad/)"
# A site with an adapter: one page rendered on demand, the rest prerendered.
run "$work/astro-node.log" "${npm_install[@]}" --no-save @astrojs/node@11.1.6 "$main_tgz" "$platform_tgz"
expect_rc 0 "$work/astro-node.log" "npm install @astrojs/node@11.1.6"
printf -- '---\nexport const prerender = false;\n---\n<p>rendered on demand at {new Date().toISOString()}</p>\n' >src/pages/now.astro
cat >node.config.mjs <<'EOF'
import { defineConfig } from 'astro/config';
import preact from '@astrojs/preact';
import node from '@astrojs/node';
import precompress from 'precompressor/astro';

export default defineConfig({
  integrations: [preact(), precompress({ check: true })],
  adapter: node({ mode: 'standalone' }),
  outDir: 'dist-node',
  build: { inlineStylesheets: 'never' },
  telemetry: false,
});
EOF
run "$work/astro-hybrid.log" env ASTRO_TELEMETRY_DISABLED=1 npx --no -- astro build --config node.config.mjs
expect_rc 0 "$work/astro-hybrid.log" "astro build with @astrojs/node and the integration"
[[ -f dist-node/server/entry.mjs ]] || fail "no dist-node/server/entry.mjs: not a server build"
verify_deployed dist-node/client "the static part, dist-node/client/" index.html
if find dist-node/server -name '*.br' | grep -q .; then fail "the server's dist-node/server/ got variants"; fi
[[ -f dist-node/client/precompress-manifest.json && ! -e dist-node/precompress-manifest.json ]] || fail "the manifest is not in dist-node/client/ alone"
ok "dist-node/server/ has no variants; the manifest is in dist-node/client/"
rm src/pages/now.astro

# sveltekit_build LOG LABEL: `vite build` with the wrapped adapter and check: true; what
# it deployed in build/, and nothing in .svelte-kit/ (the intermediate output).
sveltekit_build() {
  rm -rf build .svelte-kit
  run "$work/$1.log" npx --no -- vite build
  expect_rc 0 "$work/$1.log" "vite build with the wrapped adapter ($2)"
  expect_grep "precompress: check: ok" "$work/$1.log" "check: true passed on build/ ($2)"
  verify_deployed build "$2's build/" index.html about/index.html
  if find .svelte-kit -name '*.br' | grep -q .; then fail "variants in .svelte-kit/ ($2)"; fi
  ok "nothing in .svelte-kit/ (the intermediate output) got a variant ($2)"
}

step "SvelteKit 3 + adapter-static 4 with precompressor/sveltekit, in vite.config.js's sveltekit({ adapter }) (e2e/apps/sveltekit)"
framework_app sveltekit
cat >vite.config.js <<'EOF'
import { sveltekit } from '@sveltejs/kit/vite';
import adapter from '@sveltejs/adapter-static';
import precompress from 'precompressor/sveltekit';

export default {
  plugins: [
    sveltekit({
      adapter: precompress(adapter({ pages: 'build', assets: 'build', fallback: undefined, precompress: false, strict: true }), { check: true }),
    }),
  ],
};
EOF
sveltekit_build sveltekit-build "SvelteKit 3"
run "$work/sveltekit-check.log" npx --no -- precompress check build
expect_rc 0 "$work/sveltekit-check.log" "precompress check build"

step "SvelteKit 2 + adapter-static 3 with precompressor/sveltekit, in svelte.config.js's kit.adapter (the older form; the adapter gets the config under config.kit)"
run "$work/sveltekit2-install.log" "${npm_install[@]}" --no-save @sveltejs/kit@2.70.4 @sveltejs/adapter-static@3.0.11 "$main_tgz" "$platform_tgz"
expect_rc 0 "$work/sveltekit2-install.log" "npm install @sveltejs/kit@2.70.4 @sveltejs/adapter-static@3.0.11"
[[ $(node -p 'require("@sveltejs/kit/package.json").version') == 2.70.4 ]] || fail "@sveltejs/kit is not 2.70.4 after the install"
cat >vite.config.js <<'EOF'
import { sveltekit } from '@sveltejs/kit/vite';
export default { plugins: [sveltekit()] };
EOF
cat >svelte.config.js <<'EOF'
import adapter from '@sveltejs/adapter-static';
import precompress from 'precompressor/sveltekit';

export default {
  kit: {
    adapter: precompress(adapter({ pages: 'build', assets: 'build', fallback: undefined, precompress: false, strict: true }), { check: true }),
  },
};
EOF
sveltekit_build sveltekit2-build "SvelteKit 2"

step "Nuxt 4.6 nuxt generate with precompressor/nuxt (e2e/apps/nuxt)"
framework_app nuxt
cat >nuxt.config.ts <<'EOF'
export default defineNuxtConfig({
  compatibilityDate: '2026-11-01',
  css: ['~/assets/main.css'],
  telemetry: false,
  devtools: { enabled: false },
  modules: [['precompressor/nuxt', { check: true }]],
  app: { head: { htmlAttrs: { lang: 'en' }, link: [{ rel: 'icon', href: 'data:,' }] } },
})
EOF
run "$work/nuxt-build.log" env NUXT_TELEMETRY_DISABLED=1 npx --no -- nuxt generate
expect_rc 0 "$work/nuxt-build.log" "nuxt generate with the module"
expect_grep "precompress: check: ok" "$work/nuxt-build.log" "check: true passed on .output/public/"
verify_deployed .output/public "Nuxt's .output/public/" index.html
if find .nuxt .output/server -name '*.br' 2>/dev/null | grep -q .; then fail "variants in .nuxt/ or .output/server/"; fi
ok "nothing in .nuxt/ or .output/server/ got a variant"
run "$work/nuxt-check.log" npx --no -- precompress check .output/public
expect_rc 0 "$work/nuxt-check.log" "precompress check .output/public"
rm -rf .output
run "$work/nuxt-server-build.log" env NUXT_TELEMETRY_DISABLED=1 npx --no -- nuxt build
expect_rc 0 "$work/nuxt-server-build.log" "nuxt build (a Nitro server) with the module"
expect_grep "precompress: check: ok" "$work/nuxt-server-build.log" "check: true passed on the server build's .output/public/"
[[ -f .output/server/index.mjs ]] || fail "nuxt build wrote no .output/server/index.mjs"
if find .output/server -name '*.br' | grep -q .; then fail "the Nitro server bundle got variants"; fi
compgen -G ".output/public/_nuxt/*.js.br" >/dev/null || fail "no variants in .output/public/_nuxt/"
ok "the public assets (.output/public/_nuxt/) have variants, the server bundle none"

step "webpack 5 and Rspack with precompressor/webpack, as compression-webpack-plugin is configured"
cd "$app"
run "$work/bundlers-install.log" "${npm_install[@]}" webpack@5 @rspack/core@2
expect_rc 0 "$work/bundlers-install.log" "npm install webpack@5 @rspack/core@2"
cat >bundle.mjs <<'EOF'
// node bundle.mjs webpack|rspack: the app's src/main.js bundled into dist-BUNDLER/.
import path from 'node:path';
import PrecompressPlugin from 'precompressor/webpack';

const which = process.argv[2];
const bundler = which === 'rspack' ? (await import('@rspack/core')).rspack : (await import('webpack')).default;
const config = {
  mode: 'production',
  context: process.cwd(),
  entry: './src/main.js',
  output: { path: path.resolve(`dist-${which}`), filename: '[name].[contenthash:8].js', publicPath: '/static/', clean: true },
  devtool: 'source-map',
  module: { rules: [{ test: /\.css$/, type: 'asset/resource' }, { test: /\.svg$/, type: 'asset/resource' }] },
  // What a compression-webpack-plugin config says, as it is.
  plugins: [new PrecompressPlugin({ test: /\.(js|css|svg)$/, threshold: 1024, minRatio: 0.8, check: true })],
};
bundler(config, (err, stats) => {
  if (err || stats.hasErrors()) {
    console.error(err ? err.message : stats.toString({ all: false, errors: true }));
    process.exit(1);
  }
  console.log(`${which}: built ${Object.keys(stats.compilation.assets).join(' ')}`);
});
EOF
for bundler in webpack rspack; do
  run "$work/$bundler.log" node bundle.mjs "$bundler"
  expect_rc 0 "$work/$bundler.log" "$bundler with PrecompressPlugin"
  expect_grep "precompress: check: ok" "$work/$bundler.log" "check: true passed on dist-$bundler/"
  main=$(cd "dist-$bundler" && ls main.*.js)
  verify_deployed "dist-$bundler" "$bundler's dist-$bundler/" "$main"
  if compgen -G "dist-$bundler/*.map.*" >/dev/null; then fail "source maps got variants: test: /\\.(js|css|svg)\$/ matches no .map"; fi
  ok "test (as include) applied: no .map has a variant"
  node -e '
    const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    if (m.base !== "/static/") throw new Error("manifest base " + m.base + ", output.publicPath /static/");
  ' "dist-$bundler/precompress-manifest.json" || fail "output.publicPath is not the manifest's base"
  ok "output.publicPath /static/ is the manifest's base"
done
cat >bad-webpack.mjs <<'EOF'
import PrecompressPlugin from 'precompressor/webpack';
new PrecompressPlugin({ algorithm: 'brotliCompress' });
EOF
run "$work/bad-webpack.log" node bad-webpack.mjs
[[ $rc != 0 ]] || fail "PrecompressPlugin took compression-webpack-plugin's algorithm"
# shellcheck disable=SC2016 # backquotes in the message
expect_grep 'precompressor/webpack: option `algorithm` of compression-webpack-plugin has no counterpart' "$work/bad-webpack.log" "an option with no counterpart says why"

step "Next.js static export (output: 'export'), then the CLI: the README's recipe"
next=$work/next
mkdir -p "$next/app/about"
cd "$next"
cat >package.json <<'EOF'
{ "name": "precompress-next-test", "private": true, "scripts": { "build": "next build && precompress out --cache-dir node_modules/.cache/precompress" } }
EOF
cat >next.config.mjs <<'EOF'
export default { output: 'export', trailingSlash: true };
EOF
cat >app/layout.js <<'EOF'
export const metadata = { title: 'precompress + Next.js' };
export default function Layout({ children }) {
  return (<html lang="en"><body><nav><a href="/">Home</a> <a href="/about/">About</a></nav>{children}</body></html>);
}
EOF
{
  echo "export default function Home() { return (<main>"
  for i in $(seq 1 80); do echo "  <p>Paragraph $i of a statically exported page, compressed after next build by precompress.</p>"; done
  echo "</main>); }"
} >app/page.js
echo "export default function About() { return <main><p>About</p></main>; }" >app/about/page.js
run "$work/next-install.log" "${npm_install[@]}" next@16 react@19 react-dom@19 "$main_tgz" "$platform_tgz"
expect_rc 0 "$work/next-install.log" "npm install next@16 react@19 react-dom@19 and the two tarballs"
run "$work/next-build.log" env NEXT_TELEMETRY_DISABLED=1 npm run build
expect_rc 0 "$work/next-build.log" "npm run build (next build && precompress out)"
verify_deployed out "Next.js's out/" index.html
compgen -G "out/_next/static/chunks/*.js.br" >/dev/null || fail "no variants in out/_next/static/chunks/"
ok "out/_next/static/chunks/ has its variants"
run "$work/next-check.log" npx --no -- precompress check out
expect_rc 0 "$work/next-check.log" "precompress check out"

step "vite preview through the plugin, visited by Chromium: br or zstd, then a delta after a rebuild (e2e/preview.mjs)"
framework_app vite-react
cat >vite.config.ts <<'EOF'
import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'
import precompress from 'precompressor/vite'

export default defineConfig({ base: '/app/', plugins: [react(), precompress()], build: { assetsInlineLimit: 0 } })
EOF
run "$work/preview.log" node "$repo/e2e/preview.mjs" "$PWD"
show "$work/preview.log"
expect_rc 0 "$work/preview.log" "vite preview sent br/zstd on the first visit and a delta of release 2 on the return"

step "the shared serving table (fixtures/serve-cases.json) against precompressor/serve in node:http, Express 5, Fastify 5 and Hono 4 (its Node adapter)"
servers=$work/servers
mkdir -p "$servers"
cd "$servers"
echo '{ "name": "precompress-servers-test", "private": true, "type": "module" }' >package.json
run "$work/servers-install.log" "${npm_install[@]}" "$main_tgz" "$platform_tgz" express@5 fastify@5 hono@4 @hono/node-server@1
expect_rc 0 "$work/servers-install.log" "npm install the two tarballs, express@5, fastify@5, hono@4 and @hono/node-server@1"
cp "$here/serve-cases.mjs" .
run "$work/servers.log" node serve-cases.mjs "$repo/fixtures/serve-cases.json" node express fastify hono
show "$work/servers.log"
expect_rc 0 "$work/servers.log" "every case of the table, as precompress serve answers it"

step "the shared serving table against precompressor/worker in workerd (miniflare 3): behind its edge imitation, then on workerd's own socket"
cd "$servers"
run "$work/worker-install.log" "${npm_install[@]}" miniflare@3.20250718.3
expect_rc 0 "$work/worker-install.log" "npm install miniflare@3.20250718.3"
cp "$here/serve-cases-worker.mjs" .
run "$work/worker.log" node serve-cases-worker.mjs "$repo/fixtures/serve-cases.json" worker worker-direct
show "$work/worker.log"
expect_rc 0 "$work/worker.log" "every case of the table that applies to a Worker, as precompress serve answers it"
expect_grep 'worker: a manifest that is not JSON: 500 "/precompress-manifest.json: invalid manifest: ' "$work/worker.log" "a broken manifest is a 500 naming it, and logged"

step "the shared serving table against the CloudFront Functions of precompress objects --edge, over an S3 bucket filled from its upload list (both emulated in Node)"
cd "$servers"
cp "$here/serve-cases-edge.mjs" .
run "$work/edge.log" env PRECOMPRESS_BIN="$servers/node_modules/.bin/precompress" node serve-cases-edge.mjs "$repo/fixtures/serve-cases.json" edge
show "$work/edge.log"
expect_rc 0 "$work/edge.log" "every negotiation and host case of the table the edge claims, and negotiate.js's choice on every asset"

printf '\nnpm/test.sh: %d checks passed in %ss\n' "$checks" "$((SECONDS - start))"
