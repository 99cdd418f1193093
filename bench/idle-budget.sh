#!/usr/bin/env bash
# What `--shared-dictionary auto`'s idle budget (issue #45) costs a build: the
# landing page's first visit compressed with zstd, the code dictionary's
# candidates measured as deltas, the documents dictionary measured again at
# smaller sizes. Two binaries (before and after), cold runs (a fresh copy, a
# fresh cache folder) alternated, ROUNDS each, on each build folder given:
# the median wall time, CPU time (user + sys) and the time before the first
# job (`prepare_ms` in --json: the walk, the scan and the dictionaries). Not
# a test.
#
#   bash bench/idle-budget.sh OLD_BIN NEW_BIN OUT.md DIR...
set -euo pipefail
old=$1 new=$2 out=$3
shift 3
rounds=${ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  echo "# What auto's idle budget costs a cold build ($(date -u +%Y-%m-%d), $(nproc) cores, $rounds rounds each, medians)"
  echo
  echo "| build folder | binary | wall | CPU (user + sys) | before the first job | idle budget | linked at idle |"
  echo "|---|---|---:|---:|---:|---:|---:|"
} >"$out"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for dir in "$@"; do
  for _ in $(seq "$rounds"); do
    for which in old new; do
      bin=$old
      [[ $which == new ]] && bin=$new
      rm -rf "$work/site" "$work/cache"
      cp -r "$dir" "$work/site"
      /usr/bin/time -f '%e %U %S' -o "$work/time" "$bin" --no-config --json --cache-dir "$work/cache" "$work/site" >"$work/run.json"
      read -r wall user sys <"$work/time"
      echo "$wall" >>"$work/$which.wall"
      echo "$user $sys" | awk '{print $1 + $2}' >>"$work/$which.cpu"
      node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).run; console.log(r.prepare_ms, r.first_visit?.idle_budget ?? "-", r.first_visit?.linked_bytes ?? "-")' "$work/run.json" >>"$work/$which.rest"
    done
  done
  for which in old new; do
    wall=$(median <"$work/$which.wall")
    cpu=$(median <"$work/$which.cpu")
    prep=$(cut -d' ' -f1 "$work/$which.rest" | median)
    read -r _ budget linked < <(tail -1 "$work/$which.rest")
    echo "| $(basename "$(dirname "$dir")")/$(basename "$dir") | $which | ${wall} s | ${cpu} s | ${prep} ms | $budget | $linked |" >>"$out"
    rm -f "$work/$which".*
  done
done
cat "$out"
