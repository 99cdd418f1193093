//! Helpers shared by the CLI tests: temp copies of fixtures, tree snapshots,
//! and real decoders (the crates' and the system CLIs').
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

pub mod shards;
pub mod workflows;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The precompress binary, with a generous timeout so a hang fails instead of blocking CI.
pub fn bin() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("precompress").unwrap();
    c.timeout(std::time::Duration::from_secs(600));
    c
}

/// The binary, failing after 20 s: a wait on a FIFO or a device fails the test.
pub fn quick() -> assert_cmd::Command {
    let mut c = bin();
    c.timeout(std::time::Duration::from_secs(20));
    c
}

/// `precompress ARGS`, its output, whatever it exits with.
pub fn output(args: &[&std::ffi::OsStr]) -> std::process::Output {
    bin().args(args).output().unwrap()
}

/// `precompress ARGS`, which must succeed: its stdout.
pub fn succeeds(args: &[&std::ffi::OsStr]) -> String {
    let out = output(args);
    assert!(
        out.status.success(),
        "precompress {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The same binary as a plain `std::process::Command`.
pub fn std_bin() -> Command {
    Command::cargo_bin("precompress").unwrap()
}

/// Copies `src` recursively into a fresh temp folder; returns (guard, copy).
pub fn copy_tree(src: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    copy_dir(src, &dst);
    (tmp, dst)
}

pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// The example site, copied.
pub fn site() -> (tempfile::TempDir, PathBuf) {
    copy_tree(&repo().join("fixtures/site"))
}

/// Every regular file under `root` (relative path -> bytes).
pub fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(root) {
        let e = e.unwrap();
        if e.file_type().is_file() {
            let rel = e
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.insert(rel, std::fs::read(e.path()).unwrap());
        }
    }
    out
}

pub fn manifest(root: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(root.join("precompress-manifest.json")).unwrap()).unwrap()
}

/// Decodes with the crates' decoders; zstd limited to an 8 MiB window like a browser.
pub fn crate_decode(coding: &str, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match coding {
        "br" => {
            brotli::BrotliDecompress(&mut &data[..], &mut out).unwrap();
        }
        "zstd" => {
            let mut d = zstd::stream::read::Decoder::new(data).unwrap();
            d.window_log_max(23).unwrap();
            d.read_to_end(&mut out).unwrap();
        }
        "gzip" => {
            flate2::read::GzDecoder::new(data)
                .read_to_end(&mut out)
                .unwrap();
        }
        other => panic!("unknown coding {other}"),
    }
    out
}

/// Decodes a file with the system CLI (`brotli -d`, `zstd -d --memory=8MB`, `gzip -d`).
pub fn system_decode(coding: &str, path: &Path) -> Vec<u8> {
    let mut cmd = match coding {
        "br" => {
            let mut c = Command::new("brotli");
            c.args(["-d", "-c"]);
            c
        }
        "zstd" => {
            let mut c = Command::new("zstd");
            c.args(["-d", "-c", "-q", "--memory=8MB"]);
            c
        }
        "gzip" => {
            let mut c = Command::new("gzip");
            c.args(["-d", "-c"]);
            c
        }
        other => panic!("unknown coding {other}"),
    };
    let out =
        cmd.arg("--").arg(path).output().unwrap_or_else(|e| {
            panic!("cannot run the {coding} CLI (bash .ci/run installs it): {e}")
        });
    assert!(
        out.status.success(),
        "{coding} -d {} failed: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Checks every manifest entry against the files on disk and decodes every
/// variant with `decode`; returns how many variants were checked.
/// Decodes one variant: (coding, path, bytes) -> decoded bytes.
pub type Decode<'a> = &'a dyn Fn(&str, &Path, &[u8]) -> Vec<u8>;

pub fn verify_tree(root: &Path, decode: Decode) -> usize {
    let m = manifest(root);
    let mut checked = 0;
    for (rel, asset) in m["files"].as_object().unwrap() {
        let src = std::fs::read(root.join(rel)).unwrap();
        assert_eq!(asset["size"].as_u64().unwrap(), src.len() as u64, "{rel}");
        assert_eq!(
            asset["blake3"].as_str().unwrap(),
            blake3::hash(&src).to_hex().as_str(),
            "{rel}"
        );
        let mut last = 0;
        for v in asset["encodings"].as_array().unwrap() {
            let path = root.join(v["path"].as_str().unwrap());
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(v["size"].as_u64().unwrap(), bytes.len() as u64);
            assert!(bytes.len() < src.len(), "{rel}: variant not smaller");
            assert!(bytes.len() >= last, "{rel}: encodings not smallest first");
            last = bytes.len();
            assert_eq!(
                v["blake3"].as_str().unwrap(),
                blake3::hash(&bytes).to_hex().as_str()
            );
            let coding = v["coding"].as_str().unwrap();
            assert!(
                decode(coding, &path, &bytes) == src,
                "{}: {coding} does not decode to its source",
                path.display()
            );
            checked += 1;
        }
    }
    checked
}

/// The shared real-world corpus (`.ci/corpus/fetch.sh`), built once into
/// target/test-corpus unless PRECOMPRESS_CORPUS points at one.
pub fn corpus() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            if let Ok(dir) = std::env::var("PRECOMPRESS_CORPUS") {
                return PathBuf::from(dir);
            }
            let out = repo().join("target/test-corpus");
            if !out.join("STATS.txt").exists() {
                let script = repo().join(".ci/corpus/fetch.sh");
                let st = Command::new("bash")
                    .arg(&script)
                    .arg(&out)
                    .status()
                    .expect("run fetch.sh");
                assert!(st.success(), "{} failed", script.display());
            }
            out
        })
        .clone()
}

/// Makes a FIFO at `p` (`mkfifo`): what a hostile folder holds where a file
/// is expected, which an open must never wait on.
pub fn mkfifo(p: &Path) {
    assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
}

/// `precompress check DIR --json`: (exit code, report).
pub fn check_json(dir: &Path) -> (i32, Value) {
    let out = bin().arg("check").arg(dir).arg("--json").output().unwrap();
    (
        out.status.code().unwrap(),
        serde_json::from_slice(&out.stdout).unwrap(),
    )
}

/// A `check --json` report's problems as (path, kind).
pub fn kinds(report: &Value) -> Vec<(String, String)> {
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["path"].as_str().unwrap().to_string(),
                p["problem"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}
