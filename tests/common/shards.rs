//! `--shard K/N` and `precompress merge` as a CI matrix runs them, for the
//! shard tests of both tiers (`tests/shard.rs`, `tests/shard_corpus.rs`):
//! shards each in a copy of the build, their output brought back into one
//! copy, and the merge.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{copy_dir, snapshot, std_bin};

/// Fast levels: the split and the merge do not depend on them.
pub const LEVELS: [&str; 6] = [
    "--brotli-quality",
    "5",
    "--zstd-level",
    "3",
    "--gzip-level",
    "6",
];

pub fn run(dir: &Path, extra: &[&str]) -> Command {
    let mut c = std_bin();
    c.arg(dir)
        .args(["--no-config", "-q"])
        .args(LEVELS)
        .args(extra);
    c
}

/// Runs shards 1..=n of `build`, each in its own copy under `work`, all at
/// once; returns each shard's copy.
pub fn shards(build: &Path, work: &Path, n: u32, extra: &[&str]) -> Vec<PathBuf> {
    let dirs: Vec<PathBuf> = (1..=n)
        .map(|k| {
            let d = work.join(format!("shard-{k}"));
            copy_dir(build, &d);
            d
        })
        .collect();
    let children: Vec<_> = dirs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let shard = format!("{}/{n}", i + 1);
            run(d, extra)
                .args(["-j", "1", "--shard", &shard])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a shard failed");
    }
    dirs
}

/// What a shard wrote: the files in its copy that are not in the build.
pub fn written(build: &Path, shard: &Path) -> BTreeMap<String, Vec<u8>> {
    let before = snapshot(build);
    snapshot(shard)
        .into_iter()
        .filter(|(rel, _)| !before.contains_key(rel))
        .collect()
}

/// The fan-in: a fresh copy of the build with every shard's output in it.
pub fn fan_in(build: &Path, shards: &[PathBuf], into: &Path) {
    copy_dir(build, into);
    for s in shards {
        for (rel, bytes) in written(build, s) {
            let p = into.join(&rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
    }
}

pub fn merge(dir: &Path) -> std::process::Output {
    std_bin().arg("merge").arg(dir).output().unwrap()
}

/// `precompress merge DIR`, which must succeed.
pub fn merged_ok(dir: &Path) -> std::process::Output {
    let out = merge(dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    out
}
