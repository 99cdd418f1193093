#!/usr/bin/env bash
# What page deltas cost a build (issue #45): a cold run (no cache) of release 2
# of a documentation site against release 1 given as a folder, with no deltas
# at all, with deltas but pages sent no-cache (--no-page-dictionary: what a
# run did before pages were dictionaries) and with each page the dictionary of
# its next version (the default). The site: every page of Python's HTML
# documentation (Debian's python3.11-doc, built by Sphinx), release 2 the
# version bumped in every page as its generator does on a release. Each
# configuration ROUNDS times (default 3), in turn, on both cores; the median
# wall time, the deploy's files and its deltas.
#
#   bash bench/pages.sh [OUT]     (default OUT: bench/results/pages-<UTC time>.md)
#
# PRECOMPRESS_BIN=PATH runs that binary instead of building the release one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-bench/results/pages-$(date -u +%Y%m%dT%H%M%SZ).md}
src=${DOCS:-/usr/share/doc/python3.11/html}
rounds=${ROUNDS:-3}
[[ -d $src/library ]] || { echo "bench/pages.sh: $src missing (apt-get install python3.11-doc)" >&2; exit 1; }
bin=${PRECOMPRESS_BIN:-}
if [[ -z $bin ]]; then
  cargo build --release --locked -q
  bin=$PWD/target/release/precompress
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -rL "$src" "$work/r1"
"$bin" --no-config -q --no-cache "$work/r1"
cp -rL "$src" "$work/r2-src"
find "$work/r2-src" -name '*.html' -exec sed -i 's/3\.11\.2/3.11.3/g' {} +
pages=$(find "$work/r2-src" -name '*.html' | wc -l)
files=$(find "$work/r2-src" -type f | wc -l)
args_of() {
  case $1 in
    none) echo --no-use-as-dictionary ;;
    deltas) printf '%s\n' --dictionary-from "$work/r1" --no-page-dictionary ;;
    pages) printf '%s\n' --dictionary-from "$work/r1" ;;
  esac
}
declare -A times
for ((i = 1; i <= rounds; i++)); do
  for c in none deltas pages; do
    rm -rf "${work:?}/$c"
    cp -r "$work/r2-src" "$work/$c"
    mapfile -t args < <(args_of "$c")
    s=$EPOCHREALTIME
    "$bin" --no-config --no-cache --json "${args[@]}" "$work/$c" >"$work/$c.json"
    e=$EPOCHREALTIME
    times[$c]+="$s:$e "
  done
done
python3 - "$work" "$pages" "$files" "${times[none]}" "${times[deltas]}" "${times[pages]}" >"$out" <<'PY'
import json, statistics, sys
work, pages, files = sys.argv[1], sys.argv[2], sys.argv[3]
def wall(pair):
    s, e = map(float, pair.split(":"))
    return e - s
med = {c: statistics.median(map(wall, t.split())) for c, t in zip(["none", "deltas", "pages"], sys.argv[4:7])}
print(f"# What page deltas cost a build ({pages} pages, {files} files of Python's docs, release 2 against release 1, cold, 2 cores)\n")
print("| run | wall (median) | vs no deltas | deploy files | deltas | page deltas | deltas' CPU |")
print("|---|---:|---:|---:|---:|---:|---:|")
for c, what in [("none", "no deltas (`--no-use-as-dictionary`)"), ("deltas", "deltas, pages no-cache (`--no-page-dictionary`)"), ("pages", "deltas, each page its next version's dictionary (default)")]:
    r = json.load(open(f"{work}/{c}.json"))
    d, p = r["deploy"], r["pages"]
    print(f"| {what} | {med[c]:.2f} s | {med[c] / med['none']:.2f}x | {d['files']} | {d['deltas']} | {p['deltas']} | {d['delta_cpu_ms'] / 1000:.1f} s |")
print("\n`bash bench/pages.sh`")
PY
cat "$out"
