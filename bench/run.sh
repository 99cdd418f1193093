#!/usr/bin/env bash
# Benchmark precompress on the shared corpus (small and large): wall time, CPU
# time, peak RSS and bytes per codec. Not a test: run it on a quiet machine.
#
#   bash bench/run.sh [small|large|all] [REPEATS]      (default: all 1)
#
# Writes bench/results/run-<UTC date>.md and prints the table.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
which=${1:-all}; repeats=${2:-1}
corpus=${PRECOMPRESS_CORPUS:-$PWD/target/test-corpus}
[[ -f $corpus/STATS.txt ]] || bash .ci/corpus/fetch.sh "$corpus" >&2
cargo build --release --locked -q
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/precompress
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
sets=(small large); [[ $which == all ]] || sets=("$which")
mkdir -p bench/results
out=bench/results/run-$(date -u +%Y%m%dT%H%M%SZ).md
{
  echo "precompress $($bin --version | cut -d' ' -f2), $(nproc) cores, $(date -u +%F), repeats=$repeats (median wall)"
  echo
  echo "| corpus | files | MiB | wall s | CPU s | peak RSS MiB | br MiB | zstd MiB | gzip MiB |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  for s in "${sets[@]}"; do
    rows=()
    for ((r = 0; r < repeats; r++)); do
      rm -rf "$work/$s"; cp -r "$corpus/$s" "$work/$s"
      m=$(python3 bench/measure.py "$bin" "$work/$s" --json -q)
      rows+=("$m")
    done
    python3 - "$s" "$work/$s/precompress-manifest.json" "${rows[@]}" <<'PY'
import json, statistics, sys
name, manifest, *rows = sys.argv[1:]
rows = [json.loads(r) for r in rows]
row = sorted(rows, key=lambda r: r["wall"])[len(rows) // 2]
m = json.load(open(manifest))
files = m["files"]
total = sum(a["size"] for a in files.values())
per = {c: 0 for c in ("br", "zstd", "gzip")}
for a in files.values():
    have = {v["coding"]: v["size"] for v in a["encodings"]}
    for c in per:
        # Bytes a client of that coding downloads: the variant, or the source.
        per[c] += have.get(c, a["size"])
mib = lambda b: f"{b / 2**20:.2f}"
print(f"| {name} | {len(files)} | {mib(total)} | {row['wall']:.1f} | {row['cpu']:.1f} | {row['rss_mib']:.0f} | {mib(per['br'])} | {mib(per['zstd'])} | {mib(per['gzip'])} |")
PY
  done
} | tee "$out"
echo "wrote $out" >&2
