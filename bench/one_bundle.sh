#!/usr/bin/env bash
# One large bundle (typescript.js, 9.1 MB, from the shared corpus) on 1 thread
# and on all cores: the brotli job is split into parts, so more cores finish it
# sooner. Prints wall times and the speed-up, and checks the bytes are identical.
#
#   bash bench/one_bundle.sh [FILE]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
corpus=${PRECOMPRESS_CORPUS:-$PWD/target/test-corpus}
[[ -f $corpus/STATS.txt ]] || bash .ci/corpus/fetch.sh "$corpus" >&2
file=${1:-$corpus/large/assets/js/typescript.js}
cargo build --release --locked -q
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/precompress
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
declare -A wall
for t in 1 "$(nproc)"; do
  mkdir -p "$work/$t"; cp "$file" "$work/$t/"
  m=$(python3 bench/measure.py "$bin" "$work/$t" -q -j "$t")
  wall[$t]=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['wall'])" "$m")
  echo "threads=$t: $m"
done
cmp "$work/1/$(basename "$file").br" "$work/$(nproc)/$(basename "$file").br" && echo "identical .br on 1 and $(nproc) threads"
python3 -c "import sys; print(f'speed-up {float(sys.argv[1]) / float(sys.argv[2]):.2f}x on {sys.argv[3]} threads')" "${wall[1]}" "${wall[$(nproc)]}" "$(nproc)"
