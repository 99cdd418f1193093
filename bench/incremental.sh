#!/usr/bin/env bash
# Incremental runs on the shared corpus: a full run (filling a --cache-dir), a
# rerun with nothing changed, a rerun after changing one file, and a clean copy
# of the tree (as after a fresh CI checkout) with the warm cache. Not a test.
#
#   bash bench/incremental.sh [small|large]      (default large)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
s=${1:-large}
corpus=${PRECOMPRESS_CORPUS:-$PWD/target/test-corpus}
[[ -f $corpus/STATS.txt ]] || bash .ci/corpus/fetch.sh "$corpus" >&2
cargo build --release --locked -q
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/precompress
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp -r "$corpus/$s" "$work/a"
row() { # label measure-json report-json
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
label, m, r = sys.argv[1], json.loads(sys.argv[2]), json.load(open(sys.argv[3]))
run = r["run"]
print(f"| {label} | {m['wall']:.2f} | {m['cpu']:.2f} | {m['rss_mib']:.0f} | {run['compressed']} | {run['from_cache']} | {run['reused']} |")
PY
}
measure() { MEASURE_STDOUT=$work/r.json python3 bench/measure.py "$bin" "$@" --json -q --cache-dir "$work/cache"; }
echo "| $s ($(du -sh "$corpus/$s" | cut -f1)) | wall s | CPU s | peak RSS MiB | encoded | from cache | unchanged |"
echo "|---|---:|---:|---:|---:|---:|---:|"
row "full run (cold cache)" "$(measure "$work/a")" "$work/r.json"
row "rerun, nothing changed" "$(measure "$work/a")" "$work/r.json"
echo "// changed" >>"$work/a/assets/js/lodash.js" 2>/dev/null || echo "// changed" >>"$(find "$work/a" -name '*.js' | sort | head -1)"
row "rerun, one file changed" "$(measure "$work/a")" "$work/r.json"
cp -r "$corpus/$s" "$work/b"
row "clean copy, warm --cache-dir" "$(measure "$work/b")" "$work/r.json"
