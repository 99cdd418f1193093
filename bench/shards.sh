#!/usr/bin/env bash
# Sharding on the shared corpus, as a CI matrix would run it: one run with one
# thread, then N shards (--shard K/N, one thread each) started together in
# their own copies, their outputs brought back and merged. Reports wall-clock
# (1 shard vs N at once), each shard's time and CPU, the spread (slowest shard
# over the mean), and checks the merged tree equals the single run's. Then the
# next CI run: the build with one script changed, each shard again with its own
# --cache-dir from the first round, and how many of its jobs its cache held.
# Not a test.
#
#   bash bench/shards.sh [small|large] [N]      (default large 2)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
s=${1:-large}
n=${2:-2}
corpus=${PRECOMPRESS_CORPUS:-$PWD/target/test-corpus}
[[ -f $corpus/STATS.txt ]] || bash .ci/corpus/fetch.sh "$corpus" >&2
cargo build --release --locked -q
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/precompress
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

cp -r "$corpus/$s" "$work/single"
one=$(python3 bench/measure.py "$bin" "$work/single" --no-config -q -j 1)

for k in $(seq 1 "$n"); do cp -r "$corpus/$s" "$work/shard-$k"; done
start=$(date +%s.%N)
for k in $(seq 1 "$n"); do
  python3 bench/measure.py "$bin" "$work/shard-$k" --no-config -q -j 1 --shard "$k/$n" --cache-dir "$work/cache-$k" >"$work/m-$k.json" &
done
wait
end=$(date +%s.%N)

cp -r "$corpus/$s" "$work/merged"
for k in $(seq 1 "$n"); do
  # What shard k wrote: every file its copy has that the build does not.
  (cd "$work/shard-$k" && find . -type f) |
    while read -r f; do
      [[ -e $corpus/$s/$f ]] || { mkdir -p "$work/merged/$(dirname "$f")"; cp "$work/shard-$k/$f" "$work/merged/$f"; }
    done
done
merge=$(python3 bench/measure.py "$bin" merge "$work/merged")
same=yes
diff -r "$work/single" "$work/merged" >/dev/null || same=NO

# The next run: one script changed (the first .js in path order), fresh copies,
# each shard with its own cache.
changed=$(cd "$corpus/$s" && find . -name '*.js' | sort | head -1)
for k in $(seq 1 "$n"); do
  cp -r "$corpus/$s" "$work/next-$k"
  echo "// changed" >>"$work/next-$k/$changed"
  "$bin" "$work/next-$k" --no-config -q --json -j 1 --shard "$k/$n" --cache-dir "$work/cache-$k" >"$work/next-$k.json"
done

python3 - "$s" "$n" "$one" "$start" "$end" "$merge" "$same" "$work" "$changed" <<'PY'
import json, sys
s, n, one, start, end, merge, same, work, changed = sys.argv[1:]
n, one, wall, merge = int(n), json.loads(one), float(end) - float(start), json.loads(merge)
shards = [json.load(open(f"{work}/m-{k}.json")) for k in range(1, n + 1)]
mean = sum(x["wall"] for x in shards) / n
cpu_mean = sum(x["cpu"] for x in shards) / n
print(f"| {s}, {n} shards, 1 thread each | wall s | CPU s |")
print("|---|---:|---:|")
print(f"| one run (-j 1) | {one['wall']:.1f} | {one['cpu']:.1f} |")
for k, x in enumerate(shards, 1):
    print(f"| shard {k}/{n} | {x['wall']:.1f} | {x['cpu']:.1f} |")
print(f"| {n} shards at once (slowest) | {wall:.1f} | |")
print(f"| merge | {merge['wall']:.2f} | {merge['cpu']:.2f} |")
print()
print(f"speed-up, one run over {n} shards at once: {one['wall'] / wall:.2f}x")
print(f"spread: slowest shard {max(x['wall'] for x in shards) / mean:.3f}x the mean wall, "
      f"{max(x['cpu'] for x in shards) / cpu_mean:.3f}x the mean CPU (goal: within 1.15x)")
print(f"merged tree and manifest byte-identical to the single run: {same}")
hit = enc = 0
for k in range(1, n + 1):
    r = json.load(open(f"{work}/next-{k}.json"))["run"]
    hit += r["from_cache"]; enc += r["compressed"]
print(f"next run, {changed} changed: {hit} of {hit + enc} jobs from the shards' own caches, {enc} compressed")
PY
