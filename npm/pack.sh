#!/usr/bin/env bash
# Packs the npm packages from this checkout: precompressor (the launcher and the
# Vite plugin) and precompressor-<os>-<cpu> (one binary).
#
#   bash npm/pack.sh OUT
#
# Builds the release binary for this machine unless PRECOMPRESS_BIN names one;
# NPM_PLATFORM (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64)
# says which package it goes in when it is not this machine's (the release
# workflow builds each platform's binary and calls this once per platform; the
# main tarball is the same every time). Prints the two tarballs' paths,
# platform package first. The version is Cargo.toml's.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
out=${1:?usage: bash npm/pack.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [[ -n ${PRECOMPRESS_BIN:-} ]]; then
  bin=$PRECOMPRESS_BIN
else
  (cd "$repo" && cargo build --release --locked --bin precompress >&2)
  target=${CARGO_TARGET_DIR:-$repo/target}
  bin=$target/release/precompress
  [[ -f $bin ]] || bin=$bin.exe
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mapfile -t dirs < <(node "$here/stage.mjs" --binary "$bin" --platform "${NPM_PLATFORM:-}" --out "$stage")
((${#dirs[@]} == 2)) || { echo "pack: staging failed" >&2; exit 1; }

for dir in "${dirs[@]}"; do
  # npm pack prints the tarball's file name last on stdout; notices go to stderr.
  name=$(cd "$dir" && npm pack --pack-destination "$out" --loglevel=warn | tail -n 1)
  [[ -f $out/$name ]] || { echo "pack: npm pack did not write $out/$name" >&2; exit 1; }
  echo "$out/$name"
done
