//! End-to-end tests of the `precompress` binary on temp copies of fixtures.
//! The fast tier; the variants decoded by the system CLIs are in
//! `tests/reference_clis.rs`.
// Unix file APIs (modes, inodes, FIFOs, setpriv, signals).
#![cfg(unix)]

mod common;

use std::fs;
use std::path::Path;

use common::*;
use predicates::prelude::*;

#[test]
fn example_site_variants_decode_with_crate_decoders_and_sources_are_untouched() {
    let (_g, dir) = site();
    let before = snapshot(&dir);
    bin()
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicate::str::contains("compressed"));
    let after = snapshot(&dir);
    for (rel, bytes) in &before {
        assert!(after.get(rel) == Some(bytes), "source {rel} changed");
    }
    let n = verify_tree(&dir, &|coding, _, bytes| crate_decode(coding, bytes));
    // app.js, style.css, add.wasm, index.html, products.json, logo.svg, site.webmanifest, the odd name: x3 codecs.
    assert_eq!(n, 8 * 3);
    // No temporary file is left behind.
    assert!(
        after.keys().all(|k| !k.contains(".precompress-")),
        "{:?}",
        after.keys()
    );
}

#[test]
fn skip_rules_tiny_incompressible_compressed_types_and_globs() {
    let (_g, dir) = site();
    bin()
        .arg(&dir)
        .args(["--exclude", "*.svg", "--exclude", "data/**"])
        .assert()
        .success();
    let m = manifest(&dir);
    let f = &m["files"];
    let reasons = |rel: &str| f[rel]["skipped"].clone();
    assert_eq!(reasons("assets/tiny-under-min-size.js")["br"], "too_small");
    assert_eq!(reasons("img/photo.png")["gzip"], "excluded_type");
    assert_eq!(
        reasons("fonts/already-compressed.woff2")["zstd"],
        "excluded_type"
    );
    assert_eq!(reasons("img/logo.svg")["br"], "excluded_glob");
    assert_eq!(reasons("data/products.json")["br"], "excluded_glob");
    for rel in [
        "assets/tiny-under-min-size.js",
        "img/photo.png",
        "img/logo.svg",
        "data/products.json",
        "fonts/already-compressed.woff2",
    ] {
        for suffix in ["br", "zst", "gz"] {
            assert!(
                !dir.join(format!("{rel}.{suffix}")).exists(),
                "{rel}.{suffix} written"
            );
        }
        assert_eq!(f[rel]["encodings"].as_array().unwrap().len(), 0);
    }
    // Random bytes under a compressible extension: every codec is tried, none is smaller.
    let (_g2, dir2) = site();
    bin().arg(&dir2).assert().success();
    let m2 = manifest(&dir2);
    let r = &m2["files"]["data/random-incompressible.ico"];
    for coding in ["br", "zstd", "gzip"] {
        assert_eq!(r["skipped"][coding], "not_smaller");
    }
    for suffix in ["br", "zst", "gz"] {
        assert!(!dir2
            .join(format!("data/random-incompressible.ico.{suffix}"))
            .exists());
    }
}

#[test]
fn include_replaces_the_type_list_and_min_size_is_honoured() {
    let (_g, dir) = site();
    bin()
        .arg(&dir)
        .args([
            "--include",
            "assets/*.js",
            "--min-size",
            "0",
            "--formats",
            "gzip",
        ])
        .assert()
        .success();
    let m = manifest(&dir);
    assert!(dir.join("assets/app.js.gz").exists());
    assert!(
        dir.join("assets/tiny-under-min-size.js.gz").exists()
            || m["files"]["assets/tiny-under-min-size.js"]["skipped"]["gzip"] == "not_smaller"
    );
    assert!(!dir.join("assets/style.css.gz").exists());
    assert!(
        !dir.join("assets/app.js.br").exists(),
        "--formats gzip must not write br"
    );
    assert_eq!(
        m["files"]["assets/style.css"]["skipped"]["gzip"],
        "excluded_glob"
    );
}

#[test]
fn one_thread_and_two_threads_write_identical_trees() {
    let (_g1, a) = site();
    let (_g2, b) = site();
    bin().arg(&a).args(["-j", "1"]).assert().success();
    // --jobs is --threads by the name make and cargo use.
    bin().arg(&b).args(["--jobs", "2"]).assert().success();
    let (sa, sb) = (snapshot(&a), snapshot(&b));
    assert_eq!(sa.keys().collect::<Vec<_>>(), sb.keys().collect::<Vec<_>>());
    for (k, v) in &sa {
        assert!(sb[k] == *v, "{k} differs between 1 and 2 threads");
    }
    // And run after run.
    let first = fs::read(a.join("precompress-manifest.json")).unwrap();
    bin().arg(&a).args(["-j", "2"]).assert().success();
    assert_eq!(
        first,
        fs::read(a.join("precompress-manifest.json")).unwrap()
    );
}

/// `-j` cost its square: on five small files `-j 4096` took 13 s of CPU and
/// `-j 65535` (accepted) did not finish in a minute, all for threads with
/// nothing to do. Threads past the jobs (and, for the scan, the cores) are
/// not started: it finishes, and writes what `-j 1` writes. A correctness
/// test: the timeout is generous and no time is asserted.
#[test]
fn threads_past_the_work_are_not_started() {
    let (_g1, a) = site();
    let (_g2, b) = site();
    bin().arg(&a).args(["-j", "1"]).assert().success();
    let many = || {
        let mut c = bin();
        c.timeout(std::time::Duration::from_secs(120));
        c
    };
    many().arg(&b).args(["-j", "65535"]).assert().success();
    assert_eq!(
        snapshot(&a),
        snapshot(&b),
        "-j 65535 wrote what -j 1 did not"
    );
    many()
        .arg("tune")
        .arg(&b)
        .args(["--no-config", "--sample", "4KiB", "-j", "65535"])
        .assert()
        .success();
}

#[test]
fn variants_keep_the_source_mode_and_mtime() {
    use std::os::unix::fs::PermissionsExt;
    let (_g, dir) = site();
    let src = dir.join("assets/app.js");
    fs::set_permissions(&src, fs::Permissions::from_mode(0o640)).unwrap();
    let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_500_000_000);
    fs::File::options()
        .write(true)
        .open(&src)
        .unwrap()
        .set_modified(t)
        .unwrap();
    bin().arg(&dir).assert().success();
    for s in ["br", "zst", "gz"] {
        let md = fs::metadata(dir.join(format!("assets/app.js.{s}"))).unwrap();
        assert_eq!(md.permissions().mode() & 0o7777, 0o640, "{s}");
        assert_eq!(md.modified().unwrap(), t, "{s}");
    }
    let md = fs::metadata(dir.join("precompress-manifest.json")).unwrap();
    assert_eq!(md.permissions().mode() & 0o777, 0o644);
}

#[test]
fn manifest_path_option_moves_it_and_the_manifest_is_never_an_input() {
    let (g, dir) = site();
    let elsewhere = g.path().join("out/m.json");
    fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
    bin()
        .arg(&dir)
        .arg("--manifest")
        .arg(&elsewhere)
        .assert()
        .success();
    assert!(elsewhere.exists() && !dir.join("precompress-manifest.json").exists());
    bin().arg(&dir).assert().success();
    let m = manifest(&dir);
    assert!(m["files"].get("precompress-manifest.json").is_none());
    assert!(!dir.join("precompress-manifest.json.br").exists());
}

#[test]
fn unreadable_file_is_reported_by_path_the_rest_is_done_exit_1() {
    use std::os::unix::fs::PermissionsExt;
    let (g, dir) = site();
    let secret = dir.join("assets/secret.js");
    fs::write(&secret, "const secret = 1;\n".repeat(200)).unwrap();
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o000)).unwrap();
    let mut cmd = as_unprivileged(g.path());
    cmd.arg(&dir);
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("assets/secret.js") && stderr.contains("Permission denied"),
        "{stderr}"
    );
    assert!(
        dir.join("assets/app.js.br").exists(),
        "other files must still be done"
    );
    assert!(manifest(&dir)["files"].get("assets/app.js").is_some());
}

/// root reads any file whatever its mode, so as root the binary is run as
/// `nobody` (setpriv, util-linux) on a tree that nobody may write.
fn as_unprivileged(tree: &Path) -> std::process::Command {
    let uid = String::from_utf8(
        std::process::Command::new("id")
            .arg("-u")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    if uid.trim() != "0" {
        return std_bin();
    }
    use std::os::unix::fs::PermissionsExt;
    for e in walkdir::WalkDir::new(tree) {
        let e = e.unwrap();
        if e.file_type().is_dir() {
            fs::set_permissions(e.path(), fs::Permissions::from_mode(0o777)).unwrap();
        }
    }
    // The temp dir's parents must be traversable too (they are /tmp).
    let exe = assert_cmd::cargo::cargo_bin("precompress");
    let mut c = std::process::Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(exe);
    c
}

#[test]
fn fifo_socket_and_odd_names_do_not_block_or_break_the_run() {
    use std::os::unix::ffi::OsStrExt;
    let (_g, dir) = site();
    let fifo = dir.join("assets/pipe.js");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let _sock = std::os::unix::net::UnixListener::bind(dir.join("assets/sock.js")).unwrap();
    let bad = dir.join(std::ffi::OsStr::from_bytes(b"assets/bad-\xff-name.js"));
    fs::write(&bad, "let x = 1;\n".repeat(300)).unwrap();
    let quoted = dir.join("assets/quote\"back\\slash\nnewline.js");
    fs::write(&quoted, "let y = 2;\n".repeat(300)).unwrap();
    let odd = dir.join("assets/quote\"and\nnewline.js");
    fs::write(&odd, "let z = 3;\n".repeat(300)).unwrap();
    bin().arg(&dir).assert().success();
    let m = manifest(&dir);
    assert!(m["files"].get("assets/pipe.js").is_none());
    assert!(dir
        .join("odd names/café menü — spaces & #hash.html.br")
        .exists());
    assert!(dir.join("assets/quote\"and\nnewline.js.zst").exists());
    assert!(m["files"].get("assets/quote\"and\nnewline.js").is_some());
    // A backslash: no URL can name it (serve and check refuse it), so it is
    // passed over, not compressed (tests/serve_robust.rs:
    // a_backslash_in_a_name_is_passed_over_and_serve_still_starts).
    assert!(!dir
        .join("assets/quote\"back\\slash\nnewline.js.zst")
        .exists());
    assert!(m["files"]
        .get("assets/quote\"back\\slash\nnewline.js")
        .is_none());
    // A name that is not UTF-8 cannot be a manifest key: passed over, not compressed.
    assert!(!dir
        .join(std::ffi::OsStr::from_bytes(b"assets/bad-\xff-name.js.br"))
        .exists());
    let out = bin().arg(&dir).arg("--json").output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["passed"]["not_regular"], 2);
    assert_eq!(report["passed"]["name_not_utf8"], 1);
}

#[test]
fn symlinks_are_not_followed_by_default_and_never_lead_outside() {
    let (g, dir) = site();
    let outside = g.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(
        outside.join("lib.js"),
        "export const lib = 1;\n".repeat(100),
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("linked-outside")).unwrap();
    std::os::unix::fs::symlink(outside.join("lib.js"), dir.join("assets/file-link.js")).unwrap();
    fs::create_dir_all(dir.join("loop")).unwrap();
    std::os::unix::fs::symlink("..", dir.join("loop/back-up")).unwrap();
    std::os::unix::fs::symlink("missing.js", dir.join("assets/dangling.js")).unwrap();

    bin().arg(&dir).assert().success();
    assert!(!outside.join("lib.js.br").exists());
    assert!(
        !dir.join("assets/file-link.js.br").exists(),
        "symlinks are not followed by default"
    );

    let out = bin()
        .arg(&dir)
        .args(["--follow-links", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        1,
        "nothing may be written outside DIR"
    );
    assert_eq!(report["passed"]["symlink_loop"], 1, "{report}");
    assert_eq!(report["passed"]["outside_root"], 1, "{report}");
    assert_eq!(report["passed"]["broken_symlink"], 1, "{report}");
    // A link to a file outside DIR, placed inside DIR, gets its variant beside the link.
    assert!(dir.join("assets/file-link.js.br").exists());
}

#[test]
fn usage_errors_exit_2() {
    let (_g, dir) = site();
    for args in [
        vec!["--brotli-quality", "12"],
        vec!["--zstd-level", "0"],
        vec!["--zstd-level", "23"],
        vec!["--formats", "br,deflate"],
        vec!["--threads", "0"],
        vec!["--include", "a["],
    ] {
        bin().arg(&dir).args(&args).assert().code(2);
    }
    bin()
        .arg(dir.join("does-not-exist"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does-not-exist"));
    bin().assert().code(2);
}

#[test]
fn json_report_lists_per_job_timings_and_totals() {
    let (_g, dir) = site();
    let out = bin().arg(&dir).arg("--json").output().unwrap();
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The 12 files of the site and the list of dictionaries its pages'
    // marks publish (precompress-dictionaries.json).
    assert_eq!(r["files"], 13);
    assert_eq!(r["compressed"], 8);
    assert_eq!(r["jobs"].as_array().unwrap().len(), 9 * 3);
    assert!(
        r["codecs"]["br"]["bytes_after"].as_u64().unwrap()
            < r["codecs"]["br"]["bytes_before"].as_u64().unwrap()
    );
    assert_eq!(r["errors"].as_array().unwrap().len(), 0);
}
