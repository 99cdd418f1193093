#!/usr/bin/env bash
# dcz on a large pair, where zstd's long-distance matching matters: a 15 MB
# bundle (vue's global build, then echarts' full, minified and ESM builds)
# against its predecessor (the same of echarts 5.4.3 -> 5.5.0), laid out as
# assets/big-HASH.js, precompressed with --dictionary-from. Prints the br,
# dcb and dcz sizes from the manifest. Not a test.
#
#   bash bench/dcz_long.sh      (PRECOMPRESS_BIN=PATH, else the release build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=${PRECOMPRESS_BIN:-}
if [[ -z $bin ]]; then
  cargo build --release --locked -q
  bin=$PWD/target/release/precompress
fi
work=target/bench-dcz-long
mkdir -p "$work"
cd "$work"
for p in vue@3.4.21 echarts@5.4.3 echarts@5.5.0; do
  [[ -d ${p/@/-} ]] || { mkdir -p "${p/@/-}" && npm pack "$p" --silent | xargs -I{} tar xzf {} -C "${p/@/-}"; }
done
rm -rf v1 v2 && mkdir -p v1/assets v2/assets
for v in 5.4.3 5.5.0; do
  d=echarts-$v/package/dist
  out=$([[ $v == 5.4.3 ]] && echo v1/assets/big-Aa1bB2cC.js || echo v2/assets/big-Dd3eE4fF.js)
  cat vue-3.4.21/package/dist/vue.global.js "$d/echarts.js" "$d/echarts.js" "$d/echarts.min.js" "$d/echarts.js" "$d/echarts.esm.js" >"$out"
done
"$bin" --no-config -q v1
"$bin" --no-config -q v2 --dictionary-from v1
python3 - <<'PY'
import json
a = json.load(open("v2/precompress-manifest.json"))["files"]["assets/big-Dd3eE4fF.js"]
br = {e["coding"]: e["size"] for e in a["encodings"]}["br"]
d = {x["coding"]: x["size"] for x in a["deltas"]}
n = lambda c: f"{d[c]:,} B" if c in d else "none (not smaller, or past dcb's window)"
print(f"source {a['size']:,} B, br {br:,} B, dcb {n('dcb')}, dcz {n('dcz')}")
PY
