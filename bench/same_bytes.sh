#!/usr/bin/env bash
# Same bytes before and after a change: builds precompress at REV (default: the
# commit before the last) and at the work tree, runs both on a fresh copy of the
# shared corpus's `small` (or DIR), and compares every variant byte for byte and
# the manifests' per-asset entries (the fields both write). Not a test: it builds
# twice (a few minutes).
#
#   bash bench/same_bytes.sh [REV] [small|large]
set -euo pipefail
export LC_ALL=C
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rev=${1:-HEAD~1}
set_name=${2:-small}
corpus=${PRECOMPRESS_CORPUS:-$PWD/target/test-corpus}
[[ -f $corpus/STATS.txt ]] || bash .ci/corpus/fetch.sh "$corpus"
work=$(mktemp -d)
trap 'git worktree remove --force "$work/old-src" 2>/dev/null || true; rm -rf "$work"' EXIT

git worktree add --detach -q "$work/old-src" "$rev"
(cd "$work/old-src" && cargo build --release --locked -q --target-dir "$PWD/../old-target")
cargo build --release --locked -q
old_bin=$work/old-target/release/precompress
new_bin=$PWD/target/release/precompress

for side in old new; do
  cp -r "$corpus/$set_name" "$work/$side"
  bin_var=${side}_bin
  "${!bin_var}" --no-config -q -j 2 "$work/$side"
done

python3 - "$work/old" "$work/new" "$rev" "$set_name" <<'PY'
import json, os, sys
old, new, rev, set_name = sys.argv[1:5]
def variants(root):
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith((".br", ".zst", ".gz")):
                p = os.path.join(d, n)
                out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out
a, b = variants(old), variants(new)
m1 = json.load(open(os.path.join(old, "precompress-manifest.json")))
m2 = json.load(open(os.path.join(new, "precompress-manifest.json")))
diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
fields = ["blake3", "content_type", "encodings", "etag", "sha256", "size", "skipped"]
mdiff = sorted(k for k in set(m1["files"]) | set(m2["files"])
               if {f: m1["files"].get(k, {}).get(f) for f in fields}
               != {f: m2["files"].get(k, {}).get(f) for f in fields})
print(f"{rev} vs work tree on a copy of the {set_name} corpus: {len(a)} variants before, {len(b)} after, "
      f"{len(diff)} differ; {len(m1['files'])} manifest entries before, {len(m2['files'])} after, {len(mdiff)} differ")
for k in diff[:20]: print("  variant differs:", k)
for k in mdiff[:20]: print("  manifest entry differs:", k)
sys.exit(1 if diff or mdiff else 0)
PY
