#!/usr/bin/env bash
# Side-by-side benchmark on identical copies of the shared corpus, in one run:
#   precompress (all three formats)
#   the reference CLIs in parallel: find | xargs -P$(nproc) with brotli -q 11,
#     zstd -19 and gzip -9 -n (Debian packages), and zopfli for gz bytes (small only:
#     it costs ~35x gzip's CPU)
#   a peer tool: the npm package `precompress` 12.0.7 (silverwind, Node's zlib)
# Reports wall, CPU, peak RSS and bytes per codec, with ratios ours/theirs, as the
# median of REPEATS runs. Not a test.
#
#   bash bench/compare.sh [small|large|all] [REPEATS]     (default: all 3)
#
# Writes bench/results/compare-<set>-<UTC time>.{md,jsonl}.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
which=${1:-all}; repeats=${2:-3}
corpus=${PRECOMPRESS_CORPUS:-$PWD/target/test-corpus}
[[ -f $corpus/STATS.txt ]] || bash .ci/corpus/fetch.sh "$corpus" >&2
for c in brotli zstd gzip zopfli; do command -v $c >/dev/null || { echo "compare.sh: needs $c (apt-get install brotli zstd gzip zopfli)" >&2; exit 1; }; done
cargo build --release --locked -q
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/precompress
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
peer_dir=$work/peer
(cd "$work" && mkdir -p peer && cd peer && npm install --silent --no-audit --no-fund precompress@12.0.7 >/dev/null 2>&1) || peer_dir=""
sets=(small large); [[ $which == all ]] || sets=("$which")
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p bench/results
P=$(nproc)


for s in "${sets[@]}"; do
  out=bench/results/compare-$s-$stamp
  : >"$out.jsonl"
  for ((r = 1; r <= repeats; r++)); do
    # precompress
    rm -rf "$work/a"; cp -r "$corpus/$s" "$work/a"
    m=$(MEASURE_STDOUT=$work/report.json python3 bench/measure.py "$bin" "$work/a" -q --json)
    python3 bench/sizes.py ours "$work/a" "$m" "$r" "$work/report.json" >>"$out.jsonl"
    # reference CLIs on the same files, one pass per codec (so each codec's CPU is known)
    rm -rf "$work/b"; cp -r "$corpus/$s" "$work/b"
    python3 bench/sizes.py inputs "$work/a" >"$work/inputs.txt"
    tr '\n' '\0' <"$work/inputs.txt" >"$work/inputs0"
    ms=()
    for cmd in "brotli -q 11 -k -f" "zstd -19 -q -k -f" "gzip -9 -k -n -f"; do
      ms+=("$(cd "$work/b" && python3 "$OLDPWD/bench/measure.py" sh -c "xargs -0 -P$P -n 16 $cmd -- <'$work/inputs0'")")
    done
    python3 bench/sizes.py cli "$work/b" "${ms[0]}" "$r" "$work/inputs.txt" "${ms[1]}" "${ms[2]}" >>"$out.jsonl"
    if [[ $s == small ]]; then
      rm -rf "$work/z"; cp -r "$corpus/$s" "$work/z"
      m=$(cd "$work/z" && python3 "$OLDPWD/bench/measure.py" sh -c "xargs -0 -P$P -n 16 zopfli <'$work/inputs0'")
      python3 bench/sizes.py zopfli "$work/z" "$m" "$r" "$work/inputs.txt" >>"$out.jsonl"
    fi
    if [[ -n $peer_dir ]]; then
      rm -rf "$work/c"; cp -r "$corpus/$s" "$work/c"
      m=$(python3 bench/measure.py node "$peer_dir/node_modules/precompress/bin/precompress.js" -t gz,br "$work/c" 2>/dev/null || python3 bench/measure.py "$peer_dir/node_modules/.bin/precompress" -t gz,br "$work/c")
      python3 bench/sizes.py peer "$work/c" "$m" "$r" "$work/inputs.txt" >>"$out.jsonl"
    fi
  done
  python3 bench/sizes.py table "$out.jsonl" "$s" | tee "$out.md"
done
