#!/usr/bin/env bash
# Packs the precompress binary for one target as a release archive, or writes
# the checksums of the archives in a folder.
#
#   bash .ci/package.sh TARGET OUTDIR   build and pack: OUTDIR/precompressor-VERSION-TARGET.tar.gz
#                                       (.zip for Windows targets); prints the archive's path
#   bash .ci/package.sh --sums OUTDIR   OUTDIR/SHA256SUMS over the archives there, sorted by name
#
# The archive holds one folder, precompressor-VERSION-TARGET/, with the binary
# (precompress, precompress.exe on Windows), README.md, LICENSE-MIT and
# LICENSE-APACHE. VERSION is Cargo.toml's.
#
# Environment:
#   PRECOMPRESS_BIN   pack this binary instead of building one (tests/action.rs;
#                     the npm job)
#   CARGO_BUILD_CMD   the build command (default `cargo build`); the release
#                     workflow uses `cargo zigbuild`, whose TARGET may carry a glibc
#                     version (x86_64-unknown-linux-gnu.2.17): the archive is named
#                     and the binary found without it
#   SOURCE_DATE_EPOCH the archive entries' time (default: the commit's time)
#   CARGO_TARGET_DIR  where cargo builds (default: target)
#
# Archives are reproducible: entries in a fixed order with a fixed time, owner
# 0, modes 755/644, no names or times in the gzip header, so the same binary at
# the same commit gives the same bytes on Linux, macOS and Windows. Python's
# tarfile, gzip and zipfile write them: GNU tar's --sort/--mtime/--owner are
# not in macOS's bsdtar, and Windows' Git Bash has no zip.
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
  echo "package.sh: $*" >&2
  exit 1
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi
}

if [[ $# -eq 2 && $1 == --sums ]]; then
  cd "$2" || die "no folder $2"
  archives=(precompressor-*.tar.gz precompressor-*.zip)
  present=()
  for a in "${archives[@]}"; do [[ -f $a ]] && present+=("$a"); done
  ((${#present[@]})) || die "no precompressor-*.tar.gz or .zip in $2"
  # The globs expand sorted (LC_ALL=C); sort again as one list.
  sha256 "${present[@]}" | sort -k2 >SHA256SUMS.tmp
  mv SHA256SUMS.tmp SHA256SUMS
  cat SHA256SUMS
  exit 0
fi
[[ $# -eq 2 && $1 != -* ]] || die "usage: package.sh TARGET OUTDIR | package.sh --sums OUTDIR"

build_target=$1
mkdir -p "$2"
outdir=$(cd "$2" && pwd)
# zigbuild's glibc suffix selects the C library to link against; it is not
# part of the target's name or of cargo's output folder.
target=$build_target
if [[ $build_target =~ ^(.+-linux-gnu[a-z]*)\.[0-9]+\.[0-9]+$ ]]; then
  target=${BASH_REMATCH[1]}
fi
[[ $target =~ ^[A-Za-z0-9_.-]+$ ]] || die "odd target '$target'"

version=$(awk -F'"' '/^\[/ { p = ($0 == "[package]") } p && /^version *=/ { print $2; exit }' "$root/Cargo.toml")
[[ -n $version ]] || die "no version in $root/Cargo.toml's [package]"

exe=precompress
format=tar.gz
if [[ $target == *windows* ]]; then
  exe=precompress.exe
  format=zip
fi

if [[ -n ${PRECOMPRESS_BIN:-} ]]; then
  bin=$PRECOMPRESS_BIN
  [[ -f $bin ]] || die "PRECOMPRESS_BIN=$bin is not a file"
else
  read -ra build <<<"${CARGO_BUILD_CMD:-cargo build}"
  (cd "$root" && "${build[@]}" --release --locked --bin precompress --target "$build_target")
  target_dir=${CARGO_TARGET_DIR:-$root/target}
  [[ $target_dir == /* ]] || target_dir=$root/$target_dir
  bin=$target_dir/$target/release/$exe
  [[ -f $bin ]] || die "the build left no $bin"
fi

if [[ -n ${SOURCE_DATE_EPOCH:-} ]]; then
  mtime=$SOURCE_DATE_EPOCH
elif ! mtime=$(git -C "$root" log -1 --format=%ct 2>/dev/null) || [[ -z $mtime ]]; then
  die "not a git checkout: set SOURCE_DATE_EPOCH for the archive's times"
fi
[[ $mtime =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH=$mtime is not a number of seconds"
# Zip cannot hold times before 1980.
((mtime >= 315532800)) || mtime=315532800

py=
for p in python3 python; do
  # Windows' python3 may be the Store's stub, which cannot run anything.
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 7))' 2>/dev/null; then
    py=$p
    break
  fi
done
[[ -n $py ]] || die "needs Python 3.7 or later (python3 or python) to write the archive"

name=precompressor-$version-$target
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
cp "$bin" "$stage/$name/$exe"
for f in README.md LICENSE-MIT LICENSE-APACHE; do
  cp "$root/$f" "$stage/$name/$f"
done

# Run from the staging folder with relative paths: a native Windows Python
# does not read Git Bash's /c/... paths.
(
  cd "$stage"
  "$py" - "$format" "$mtime" "$name.$format" "$name" "$exe" <<'PY'
import gzip, os, sys, tarfile, time, zipfile

kind, mtime, out, top, exe = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
names = sorted(os.listdir(top))
mode = {n: 0o755 if n == exe else 0o644 for n in names}

if kind == "tar.gz":
    with open(out, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        def entry(path, kind, mode, size=0):
            t = tarfile.TarInfo(path)
            t.type, t.mode, t.size, t.mtime = kind, mode, size, mtime
            t.uid = t.gid = 0
            t.uname = t.gname = ""
            return t
        tar.addfile(entry(top + "/", tarfile.DIRTYPE, 0o755))
        for n in names:
            p = os.path.join(top, n)
            with open(p, "rb") as f:
                tar.addfile(entry(top + "/" + n, tarfile.REGTYPE, mode[n], os.path.getsize(p)), f)
else:
    when = time.gmtime(mtime)[:6]
    def entry(path, unix_mode):
        z = zipfile.ZipInfo(path, date_time=when)
        z.create_system = 3  # Unix, so the modes below are read; the default depends on the OS.
        z.external_attr = unix_mode << 16
        return z
    with zipfile.ZipFile(out, "w") as z:
        d = entry(top + "/", 0o040755)
        d.external_attr |= 0x10  # MS-DOS directory flag
        z.writestr(d, b"")
        for n in names:
            with open(os.path.join(top, n), "rb") as f:
                data = f.read()
            z.writestr(entry(top + "/" + n, 0o100000 | mode[n]), data, zipfile.ZIP_DEFLATED, 9)
PY
)
mv "$stage/$name.$format" "$outdir/$name.$format"
echo "$outdir/$name.$format"
