#!/usr/bin/env bash
# Per-file overhead on many small files: 10,000 files of 1-4 KiB (deterministic
# JS-like text). Reports the process's CPU time (user and kernel), the time spent
# in encoders and in verifying each output by decoding it (from --json per-job
# timings), and the rest per file: walk, read, hash, write, rename, manifest.
# The files go under $TMPDIR: the kernel's share depends on that filesystem.
# Not a test.
#
# DIR is given as a relative path (`dist`), as a build script does, and the
# sources are touched before each run, as a fresh build leaves them.
#
#   bash bench/small_files.sh [FILES] [REPEATS]     (default 10000, 5; medians)
#   FORMATS="gzip"  to run only that set (default: "gzip br,zstd,gzip")
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n=${1:-10000}; repeats=${2:-5}
cargo build --release --locked -q
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/precompress
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
python3 - "$work/dist" "$n" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(42)
words = ["const", "let", "function", "return", "export", "import", "await", "async", "value", "state", "props", "render", "items", "index", "length", "module"]
for i in range(n):
    d = os.path.join(root, f"chunk{i // 500:02d}")
    os.makedirs(d, exist_ok=True)
    size = rnd.randint(1024, 4096)
    out = []
    while sum(map(len, out)) < size:
        out.append(f"{rnd.choice(words)} {rnd.choice(words)}_{rnd.randint(0, 999)} = {rnd.randint(0, 99999)};\n")
    open(os.path.join(d, f"m{i:05d}.js"), "w").write("".join(out)[:size])
PY
for formats in ${FORMATS:-gzip br,zstd,gzip}; do
  : >"$work/runs.jsonl"
  for ((r = 1; r <= repeats; r++)); do
    rm -f "$work/dist/precompress-manifest.json"; find "$work/dist" \( -name '*.gz' -o -name '*.br' -o -name '*.zst' \) -delete
    find "$work/dist" -name '*.js' -exec touch {} +
    m=$(python3 bench/measure.py sh -c "cd '$work' && '$bin' dist --formats $formats --json -q > '$work/report.json'")
    python3 - "$m" "$work/report.json" >>"$work/runs.jsonl" <<'PY'
import json, sys
m, r = json.loads(sys.argv[1]), json.load(open(sys.argv[2]))
m["enc"] = sum(j["encode_micros"] for j in r["jobs"]) / 1e6
m["ver"] = sum(j["verify_micros"] for j in r["jobs"]) / 1e6
print(json.dumps(m))
PY
  done
  python3 - "$work/runs.jsonl" "$n" "$formats" <<'PY'
import json, statistics, sys
runs, n, formats = [json.loads(l) for l in open(sys.argv[1])], int(sys.argv[2]), sys.argv[3]
per = lambda s: s / n * 1e6
for m in runs:
    m["rest"] = m["cpu"] - m["enc"] - m["ver"]
    print(f"  run: wall {m['wall']:.2f} s, CPU {m['cpu']:.2f} s (kernel {m['sys']:.2f}), encoding {m['enc']:.2f} s, "
          f"verifying {m['ver']:.2f} s, rest {per(m['rest']):.0f} µs per file, peak RSS {m['rss_mib']:.0f} MiB")
med = lambda k: statistics.median(m[k] for m in runs)
print(f"{n} files, formats {formats}, median of {len(runs)}: wall {med('wall'):.2f} s, CPU {med('cpu'):.2f} s; "
      f"per file beyond encoding and verifying {per(med('rest')):.0f} µs CPU "
      f"({per(med('rest')) / len(formats.split(',')):.0f} per variant), verifying {per(med('ver')):.0f} µs, "
      f"the process in the kernel {per(med('sys')):.0f} µs")
PY
done
