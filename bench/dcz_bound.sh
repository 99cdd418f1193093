#!/usr/bin/env bash
# What a large dictionary costs the build (#46): a Nuxt-like release whose
# hash-named chunks (`_nuxt/XXXXXXXX.js`) are all new, so each gets its deltas
# against the earlier release's marked chunk, here 6.6 MB (echarts' full and
# ESM builds, naming the chunks as an entry does). Runs the binary under test
# and one without the dcz bound (BASE_BIN, else built from BASE_REV) on the
# same pair, one thread each, and prints each run's delta CPU time and the
# dcz and dcb bytes, from `--json`. Not a test.
#
#   bash bench/dcz_bound.sh   (PRECOMPRESS_BIN, BASE_BIN=PATH or BASE_REV=REV)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
bin=${PRECOMPRESS_BIN:-}
if [[ -z $bin ]]; then
  cargo build --release --locked -q
  bin=$root/target/release/precompress
fi
base=${BASE_BIN:-}
if [[ -z $base ]]; then
  # The last commit before dcz's level was bounded by the dictionary's size.
  rev=${BASE_REV:-d27b5ae}
  wt=$root/target/bench-base-src
  [[ -d $wt ]] || git worktree add -f --detach "$wt" "$rev" >/dev/null
  (cd "$wt" && git checkout -q --detach "$rev" && CARGO_TARGET_DIR=$root/target/bench-base cargo build --release --locked -q)
  base=$root/target/bench-base/release/precompress
fi
work=target/bench-dcz-bound
mkdir -p "$work"
cd "$work"
for p in vue@3.4.21 echarts@5.4.3; do
  [[ -d ${p/@/-} ]] || { mkdir -p "${p/@/-}" && npm pack "$p" --silent | xargs -I{} tar xzf {} -C "${p/@/-}"; }
done
python3 - <<'PY'
import os, shutil, string, random
rng = random.Random(46)
alpha = string.ascii_letters + string.digits
name = lambda: "".join(rng.choice(alpha) for _ in range(8))
vue = open("vue-3.4.21/package/dist/vue.global.js", "rb").read()
ec = "echarts-5.4.3/package/dist/"
big = open(ec + "echarts.js", "rb").read() + open(ec + "echarts.esm.js", "rb").read()
for v in ("v1", "v2"):
    shutil.rmtree(v, ignore_errors=True)
    os.makedirs(v + "/_nuxt")
    chunks = [name() for _ in range(12)]
    for i, c in enumerate(chunks):
        at = (i * 37_000 + (v == "v2") * 9_000) % (len(vue) - 16_384)
        open(f"{v}/_nuxt/{c}.js", "wb").write(vue[at:at + 16_384])
    imports = "".join(f'import("./{c}.js");\n' for c in chunks).encode()
    entry = name()
    open(f"{v}/_nuxt/{entry}.js", "wb").write(imports + big + f"/* {v} */\n".encode())
    # The page loads the entry, which a first visit holds: the chunk marked.
    open(f"{v}/index.html", "w").write(f'<!doctype html><title>x</title><script type=module src="/_nuxt/{entry}.js"></script>')
PY
run() { # BIN LABEL: each on fresh copies of the two releases
  rm -rf a b && cp -r v1 a && cp -r v2 b
  "$1" --no-config --no-cache -q a >/dev/null
  "$1" --no-config --no-cache --threads 1 --json b --dictionary-from a >"$2.json"
  python3 - "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1] + ".json"))
m = json.load(open("b/precompress-manifest.json"))["files"]
d = {"dcb": [0, 0], "dcz": [0, 0]}
for a in m.values():
    for x in a.get("deltas", []):
        d[x["coding"]][0] += 1
        d[x["coding"]][1] += x["size"]
chunks = sum(j["cpu_micros"] for j in r["jobs"] if j["coding"] == "dcz" and j["input"] < 1 << 20) / 1e6
print(f"{sys.argv[1]:>9}: delta CPU {r['deploy']['delta_cpu_ms'] / 1000:6.1f} s (the chunks' dcz {chunks:5.1f} s); "
      f"kept: {d['dcz'][0]} dcz {d['dcz'][1]:,} B, {d['dcb'][0]} dcb {d['dcb'][1]:,} B; bounded dcz jobs {r['deploy'].get('dcz_bounded', 0)}")
PY
}
run "$base" unbounded
run "$bin" bounded
python3 -c "
import json
a, b = (json.load(open(f + '.json'))['deploy']['delta_cpu_ms'] for f in ('unbounded', 'bounded'))
print(f'delta CPU, bounded / unbounded: {b / a:.3f} (one run each, same machine)')"
