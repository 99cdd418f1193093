//! Crash safety and concurrency: sources that change while they are
//! compressed, and two runs on one folder at once. The fast tier; SIGKILL at
//! random moments, on the shared corpus, is in `tests/crash_corpus.rs`.
// Unix file APIs (modes, inodes, FIFOs, setpriv, signals).
#![cfg(unix)]

mod common;

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use common::*;

/// A large, varied, compressible script: brotli q11 takes seconds on it.
fn big_script(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 100);
    let mut x: u32 = 7;
    while s.len() < bytes {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        s.push_str(&format!(
            "export function f{}(a, b) {{ return a * {} + b - {}; }}\n",
            x % 100_000,
            x % 977,
            x % 313
        ));
    }
    s
}

/// Runs precompress on `dir` with `args`, appending to `src` every 100 ms until
/// it exits, so whatever it read of `src` is out of date. Checks that the run
/// failed naming `src` as changed and left no .br or .gz of it.
fn run_while_editing(dir: &Path, src: &Path, args: &[&str]) {
    let mut child = std_bin()
        .arg(dir)
        .args(args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut n = 0;
    while child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(100));
        let mut f = fs::File::options().append(true).open(src).unwrap();
        std::io::Write::write_all(&mut f, format!("// edit {n}\n").as_bytes()).unwrap();
        n += 1;
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let name = src.file_name().unwrap().to_str().unwrap();
    assert!(
        stderr.contains(&format!("{name}: changed while it was being compressed")),
        "{stderr}"
    );
    for s in ["br", "gz"] {
        assert!(
            !dir.join(format!("{name}.{s}")).exists(),
            "a variant of old content was left"
        );
    }
}

#[test]
fn a_source_modified_while_it_is_compressed_gets_no_stale_variant() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dist");
    fs::create_dir_all(&dir).unwrap();
    let src = dir.join("bundle.js");
    fs::write(&src, big_script(2 << 20)).unwrap();
    run_while_editing(&dir, &src, &["-q", "--formats", "br,gzip"]);
    // The next run, with the file at rest, completes.
    bin()
        .arg(&dir)
        .args(["-q", "--formats", "gzip"])
        .assert()
        .success();
    bin().arg("check").arg(&dir).assert().success();
}

#[test]
fn a_small_source_modified_after_it_was_read_loses_the_variants_written_from_it() {
    // A small source is read once, by the scan, and its variants are written
    // from those bytes; with one thread they come after a big file's brotli job
    // (longest first), and the source keeps changing meanwhile. The check after
    // its last variant must see the change and take its variants back out.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dist");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("big.js"), big_script(2 << 20)).unwrap();
    let small = dir.join("small.js");
    fs::write(&small, big_script(8 << 10)).unwrap();
    run_while_editing(
        &dir,
        &small,
        &["-q", "--formats", "br,gzip", "--threads", "1"],
    );
    for s in ["br", "gz"] {
        assert!(dir.join(format!("big.js.{s}")).exists(), "big.js.{s}");
    }
    let manifest = fs::read_to_string(dir.join("precompress-manifest.json")).unwrap();
    assert!(!manifest.contains("small.js"), "{manifest}");
}

#[test]
fn a_second_run_on_the_same_folder_waits_for_the_first() {
    let (_g, dir) = site();
    fs::write(dir.join("assets/big.js"), big_script(3 << 20)).unwrap();
    let first = std_bin()
        .arg(&dir)
        .args(["-q", "--formats", "br"])
        .spawn()
        .unwrap();
    // Wait until the first run holds the lock (on the folder itself).
    let lock = dir.clone();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "first run never took the lock");
        if let Ok(f) = fs::File::open(&lock) {
            match f.try_lock() {
                Err(fs::TryLockError::WouldBlock) => break,
                Ok(()) => drop(f),
                Err(e) => panic!("{e:?}"),
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let second = std_bin()
        .arg(&dir)
        .args(["--formats", "br", "--json"])
        .output()
        .unwrap();
    let mut first = first;
    assert!(first.wait().unwrap().success());
    assert!(second.status.success());
    assert!(String::from_utf8_lossy(&second.stderr).contains("waiting for it to finish"));
    // It ran after the first had finished: nothing left to compress.
    let r: serde_json::Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(r["run"]["compressed"], 0, "{r}");
    bin().arg("check").arg(&dir).assert().success();
}
