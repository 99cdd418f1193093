#!/usr/bin/env bash
# Per-file overhead on many small files: 10,000 files of 1-4 KiB (deterministic
# JS-like text). Reports the process's CPU time (user and kernel), the time spent
# in encoders and in verifying each output by decoding it (from --json per-job
# timings), and the rest per file: walk, read, hash, write, rename, manifest.
# The files go under $TMPDIR: the kernel's share depends on that filesystem.
# Not a test.
#
#   bash bench/small_files.sh [FILES]     (default 10000)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n=${1:-10000}
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
for formats in gzip br,zstd,gzip; do
  rm -f "$work/dist/precompress-manifest.json"; find "$work/dist" -name '*.gz' -o -name '*.br' -o -name '*.zst' | xargs -r rm -f
  m=$(python3 bench/measure.py sh -c "'$bin' '$work/dist' --formats $formats --json -q > '$work/report.json'")
  python3 - "$m" "$work/report.json" "$n" "$formats" <<'PY'
import json, sys
m, r, n, formats = json.loads(sys.argv[1]), json.load(open(sys.argv[2])), int(sys.argv[3]), sys.argv[4]
enc = sum(j["encode_micros"] for j in r["jobs"]) / 1e6
ver = sum(j["verify_micros"] for j in r["jobs"]) / 1e6
per = lambda s: f"{s / n * 1e6:.0f}"
rest = m["cpu"] - enc - ver
print(f"{n} files, formats {formats}: wall {m['wall']:.2f} s, CPU {m['cpu']:.2f} s (user {m['user']:.2f}, kernel {m['sys']:.2f}), "
      f"encoding {enc:.2f} s, verifying {ver:.2f} s, peak RSS {m['rss_mib']:.0f} MiB")
print(f"  per file beyond encoding and verifying: {per(rest)} µs CPU ({rest / n / len(formats.split(',')) * 1e6:.0f} per variant); "
      f"verifying {per(ver)} µs; the whole process spent {per(m['sys'])} µs per file in the kernel")
PY
done
