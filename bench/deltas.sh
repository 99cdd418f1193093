#!/usr/bin/env bash
# Dictionary-compressed deltas (RFC 9842 dcb/dcz, --dictionary-from) between
# consecutive releases of real npm packages, laid out as a bundler's build folder
# (assets/<stem>-<hash8>.<ext>, see bench/deltas.py). Runs, with -j 2 --json:
#   precompress OLD; precompress NEW (a fresh copy, no deltas);
#   precompress NEW --dictionary-from OLD (another fresh copy)
# and prints per file and in total: source, br, zstd, dcb, dcz bytes, the best
# delta against br, CPU s per coding, what a returning visitor downloads after a
# patch release, and the whole-run CPU ratio with/without deltas. Not a test.
#
#   bash bench/deltas.sh [OUT]     (default OUT: bench/results/deltas-<UTC time>.md)
#
# Tarballs (npm pack) are cached in target/bench-deltas/ and checked against the
# sha256 pinned below. PRECOMPRESS_BIN=PATH runs that binary instead of building.
# Without --dictionary-from in the binary it prints the table without deltas,
# writes nothing and fails.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-bench/results/deltas-$(date -u +%Y%m%dT%H%M%SZ).md}
cache=$PWD/target/bench-deltas

# NAME OLD NEW FILE...   (patch or minor is read from the versions)
PAIRS=(
  "vue 3.4.20 3.4.21 dist/vue.global.prod.js dist/vue.global.js"
  "chart.js 4.4.0 4.4.1 dist/chart.umd.js"
  "jquery 3.7.0 3.7.1 dist/jquery.js dist/jquery.min.js"
  "echarts 5.4.3 5.5.0 dist/echarts.js"
  "react-dom 18.2.0 18.3.1 umd/react-dom.production.min.js"
  "bootstrap 5.3.2 5.3.3 dist/css/bootstrap.css dist/js/bootstrap.bundle.js"
)
# sha256 of the npm pack tarballs
declare -A SHA=(
  [vue@3.4.20]=5365142d3485720176e4b9eb36463507d6a0652b02de0f995c544fb95b57d17d
  [vue@3.4.21]=5772054f07ee4d86b831b963a889b9b3e60764f4fe909c1ccddd00fd628bc6c7
  [chart.js@4.4.0]=5563cc3d87d1ddda7190f56b9a689e30da95c3fde7c7a94e8b566f85b47e6667
  [chart.js@4.4.1]=9ee0a0470ab0888f95f2cd380b219c9e31a0a64a8356cea970f49bbfa829fd83
  [jquery@3.7.0]=8394ac1b3c1bf73e984335e862be99c23fdd45702fa3b67b12e0a48f339c4a02
  [jquery@3.7.1]=68a9f787516da47c680e09c187bcbac4536b6f85d90eb882844e12919e583f53
  [echarts@5.4.3]=89f6b509a83b3694645a8ec0dc8808999bb96610eac9e718fbda4726bb694eaf
  [echarts@5.5.0]=9e5771738a966d74ca027b0987499cddafe24f5271767b23cee6badb010bf058
  [react-dom@18.2.0]=20a71e86b691f860c781f3732a85c7b3c63c4d3d9a803dca9dfe6ed0eb30e2ef
  [react-dom@18.3.1]=031d4427a99f2f3f6cac18bbbf308594a67e4f47d10f4896fdec446505b040e0
  [bootstrap@5.3.2]=6eeae8894f91f0a557f1bbe0ad8eb104bba7a4d8fb1164e37f3113614ebb6c7f
  [bootstrap@5.3.3]=38cee936dbd80138de6775683149f22e9226fc2d654392337a921f53000c789e
)

mkdir -p "$cache"
sha() { sha256sum "$1" | cut -d' ' -f1; }
for p in "${PAIRS[@]}"; do
  read -r name old new _ <<<"$p"
  for spec in "$name@$old" "$name@$new"; do
    t=$cache/${spec/@/-}.tgz want=${SHA[$spec]:?"deltas.sh: no sha256 pinned for $spec"}
    if [[ ! -f $t || $(sha "$t") != "$want" ]]; then
      rm -f "$t"; (cd "$cache" && npm pack --silent "$spec" >/dev/null)
      [[ $(sha "$t") == "$want" ]] || { echo "deltas.sh: sha256 of $spec is $(sha "$t"), pinned $want" >&2; exit 1; }
    fi
  done
done

if [[ -z ${PRECOMPRESS_BIN:-} ]]; then
  cargo build --release --locked -q
fi
bin=${PRECOMPRESS_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/precompress}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
python3 bench/deltas.py layout "$cache" "$work" "${PAIRS[@]}"
run() { # NAME DIR [ARGS...]: report in $work/NAME.report.json, CPU etc. in NAME.measure.json
  local name=$1; shift
  MEASURE_STDOUT=$work/$name.report.json python3 bench/measure.py "$bin" "$@" -j 2 --json -q >"$work/$name.measure.json"
}
run old "$work/old"
cp -r "$work/new" "$work/plain"; run plain "$work/plain"
version=$("$bin" --version | cut -d' ' -f2)
if ! grep -q -- --dictionary-from <<<"$("$bin" --help)"; then
  python3 bench/deltas.py table "$work" "$version"
  echo "deltas.sh: $bin ($version) has no --dictionary-from: above, the run without deltas only; nothing written" >&2
  exit 1
fi
cp -r "$work/new" "$work/delta"; run delta "$work/delta" --dictionary-from "$work/old"
mkdir -p "$(dirname "$out")"
python3 bench/deltas.py table "$work" "$version" | tee "$out"
echo "wrote $out" >&2
