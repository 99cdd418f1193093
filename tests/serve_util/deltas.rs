//! What the delta tests of the command line share, whatever they need
//! besides the Rust toolchain (`tests/deltas.rs`, and in the e2e tier
//! `tests/reference_clis.rs` and `tests/deltas_corpus.rs`): the commands, a
//! SHA-256 as `Available-Dictionary` spells it, and the two releases of
//! [`two_releases`], release 1 precompressed.

use std::path::PathBuf;

use assert_cmd::Command;

use super::two_releases;

/// `precompress --no-config`.
pub fn bin() -> Command {
    let mut c = Command::cargo_bin("precompress").unwrap();
    c.args(["--no-config"]);
    c
}

/// `precompress --no-config RELEASE-2 --dictionary-from RELEASE-1`.
pub fn with_previous(r: &Releases) -> Command {
    let mut c = bin();
    c.arg(&r.v2).arg("--dictionary-from").arg(&r.v1);
    c
}

/// `precompress check`.
pub fn check() -> Command {
    let mut c = Command::cargo_bin("precompress").unwrap();
    c.arg("check");
    c
}

pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}

pub fn sf(sha: &[u8; 32]) -> String {
    use base64::Engine;
    format!(
        ":{}:",
        base64::engine::general_purpose::STANDARD.encode(sha)
    )
}

pub struct Releases {
    _tmp: tempfile::TempDir,
    pub v1: PathBuf,
    pub v2: PathBuf,
    pub old: &'static str,
    pub new: &'static str,
}

/// Release 1 precompressed, release 2 not yet.
pub fn releases() -> Releases {
    let tmp = tempfile::tempdir().unwrap();
    let (v1, v2, old, new) = two_releases(tmp.path());
    bin().arg(&v1).arg("-q").assert().success();
    Releases {
        _tmp: tmp,
        v1,
        v2,
        old,
        new,
    }
}
