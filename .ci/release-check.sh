#!/usr/bin/env bash
# What the release workflow (.github/workflows/release.yml) does, for the host
# target, on this machine: a real release build packed by .ci/package.sh, the
# SHA256SUMS over it, the archive unpacked and its binary run, the archive
# rebuilt from the same binary to the same bytes, and `cargo publish --dry-run`
# (which builds the crate as crates.io would get it).
#
#   bash .ci/release-check.sh [OUTDIR]    (default target/release-check)
#
# The release build (LTO, one codegen unit) takes minutes. On a tree with
# uncommitted changes the dry run needs --allow-dirty, which this passes with a
# note; on a clean checkout (CI, and the release workflow) it does not.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-target/release-check}
target=x86_64-unknown-linux-gnu
version=$(awk -F'"' '/^\[/ { p = ($0 == "[package]") } p && /^version *=/ { print $2; exit }' Cargo.toml)
name=precompressor-$version-$target
start=$SECONDS
phase() { echo "release-check: $* ($((SECONDS - start)) s)"; }

rm -rf "$out"
mkdir -p "$out"
phase "release build and package for $target"
archive=$(bash .ci/package.sh "$target" "$out" | tail -n1)
[[ $archive == */$name.tar.gz && -f $archive ]] || {
  echo "release-check: package.sh made '$archive', expected $out/$name.tar.gz" >&2
  exit 1
}
bash .ci/package.sh --sums "$out" >/dev/null
(cd "$out" && sha256sum --check --strict SHA256SUMS)

phase "unpack and run"
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
tar -xzf "$archive" -C "$unpacked"
listing=$(cd "$unpacked" && find . | sort | tr '\n' ' ')
want=". ./$name ./$name/LICENSE-APACHE ./$name/LICENSE-MIT ./$name/README.md ./$name/precompress "
[[ $listing == "$want" ]] || {
  echo "release-check: the archive holds: $listing" >&2
  exit 1
}
bin=$unpacked/$name/precompress
got=$("$bin" --version)
[[ $got == "precompress $version" ]] || {
  echo "release-check: the packed binary says '$got', expected 'precompress $version'" >&2
  exit 1
}
echo "$got"
cp -r fixtures/site "$unpacked/site"
"$bin" "$unpacked/site" --quiet
"$bin" check "$unpacked/site"

phase "the same binary packs to the same bytes"
again=$unpacked/again
PRECOMPRESS_BIN=$bin bash .ci/package.sh "$target" "$again" >/dev/null
cmp "$archive" "$again/$name.tar.gz"

phase "cargo publish --dry-run"
dirty=()
if [[ -n $(git status --porcelain 2>/dev/null) ]]; then
  echo "release-check: uncommitted changes, so the dry run gets --allow-dirty (a clean checkout does not need it)"
  dirty=(--allow-dirty)
fi
cargo publish --dry-run --locked "${dirty[@]}"
# A dry run leaves the .crate in target/package/tmp-crate (recent cargo), a real one in target/package.
crate=
for c in target/package/tmp-crate/precompressor-$version.crate target/package/precompressor-$version.crate; do
  if [[ -f $c ]]; then
    crate=$c
    break
  fi
done
[[ -n $crate ]] || {
  echo "release-check: cargo publish --dry-run left no precompressor-$version.crate under target/package" >&2
  exit 1
}
files=$(tar -tzf "$crate" | wc -l)
echo "release-check: $crate: $(wc -c <"$crate") bytes, $files files"
echo "release-check: $archive: $(wc -c <"$archive") bytes"
phase "done"
