#!/usr/bin/env bash
# What a first visit pays for the code dictionary it fetches at idle, before
# and after the fix of issue #46 (a request for it holding no dictionary is
# a 204): one framework build precompressed by two binaries, each served by
# its own `precompress serve`, and N first visits (fresh profiles) in
# Chromium of the build's home page then its about page (e2e/apps/visit.mjs).
#
#   bench/first_visit_race.sh RELEASE BEFORE AFTER [N]
#
# RELEASE: a built release folder (target/field/sveltekit/release-1, which
# e2e/apps/build.sh makes); BEFORE, AFTER: precompress binaries; N: visits
# per binary (default 10). VISIT_NETWORK=slow (the default here: a slow
# phone's network, 400 ms round trips and 50 KB/s) or VISIT_NETWORK= (none),
# VISIT_CPU_THROTTLE=N as visit.mjs reads them. Prints one line per visit and
# a table in markdown; the visits' JSON stays in the work folder it names.
set -euo pipefail
release=${1:?usage: bench/first_visit_race.sh RELEASE BEFORE AFTER [N]}
before=${2:?before binary}
after=${3:?after binary}
n=${4:-10}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export VISIT_NETWORK=${VISIT_NETWORK-slow}
work=$(mktemp -d "${TMPDIR:-/tmp}/first-visit-race.XXXXXX")
echo "work: $work" >&2

port_of() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

for which in before after; do
  bin=${!which}
  cp -r "$release" "$work/$which"
  "$bin" --no-config -q "$work/$which"
  port=$(port_of)
  "$bin" serve -q "$work/$which" --addr "127.0.0.1:$port" &
  server=$!
  sleep 1
  (cd "$repo/e2e" && VISITS=$n VISIT_FRESH=1 node apps/visit.mjs "http://localhost:$port" / /about/ </dev/null >"$work/$which.jsonl") || true
  kill "$server"
  wait "$server" 2>/dev/null || true
done

python3 - "$work" "$n" "$VISIT_NETWORK" "${VISIT_CPU_THROTTLE:-}" <<'PY'
import json, sys
work, n, net, cpu = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rows = []
for which in ("before", "after"):
    m = json.load(open(f"{work}/{which}/precompress-manifest.json"))
    key = m["shared_dictionary"]
    a = m["files"][key]
    br = min(e["size"] for e in a["encodings"])
    whole = paid_total = refused = 0
    visits = [json.loads(l) for l in open(f"{work}/{which}.jsonl") if l.strip()]
    for v in visits:
        fetches = [r for r in v["responses"] if r["url"].endswith("/" + key)]
        paid = sum(r["encodedBytes"] or 0 for r in fetches)
        paid_total += paid
        whole += any((r["encodedBytes"] or 0) >= br for r in fetches)
        refused += sum(r["status"] == 204 for r in fetches)
        print(which, v["visit"], [(r["status"], r["encodedBytes"], r["contentEncoding"]) for r in fetches], "errors:", len(v["errors"]))
    rows.append((which, len(visits), whole, refused, paid_total / max(len(visits), 1), br))
print(f"\n{n} first visits per binary (/, then /about/), VISIT_NETWORK={net or 'none'}, VISIT_CPU_THROTTLE={cpu or 'none'}\n")
print("| binary | visits | visits that fetched the code dictionary whole | 204 answers | paid for it per visit (mean) | its br |")
print("|---|---:|---:|---:|---:|---:|")
for which, nv, whole, refused, mean, br in rows:
    print(f"| {which} | {nv} | {whole} | {refused} | {mean:,.0f} B | {br:,} B |")
PY
