//! What a new user met in the first hour (issue: "First hour with
//! precompress"), each with the behaviour decided on.

mod serve_util;

use std::time::Duration;

use predicates::prelude::*;
use predicates::str::contains;
use serve_util::*;

fn bin() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("precompress").unwrap();
    c.timeout(Duration::from_secs(60));
    c
}

#[test]
fn dot_files_and_the_config_file_are_not_assets() {
    let (_tmp, site) = precompressed_site();
    std::fs::write(site.join(".env"), "SECRET=1\n".repeat(200)).unwrap();
    std::fs::create_dir_all(site.join(".git")).unwrap();
    std::fs::write(site.join(".git/config"), "[core]\n".repeat(300)).unwrap();
    std::fs::create_dir_all(site.join(".well-known")).unwrap();
    std::fs::write(
        site.join(".well-known/security.txt"),
        "Contact: x\n".repeat(200),
    )
    .unwrap();
    std::fs::write(site.join("precompress.toml"), "min-size = 1024\n").unwrap();
    bin()
        .arg(&site)
        .assert()
        .success()
        .stdout(contains("2 dot_file"));
    let m = manifest(&site);
    let files = m["files"].as_object().unwrap();
    for hidden in [".env", ".git/config", "precompress.toml"] {
        assert!(!files.contains_key(hidden), "{hidden} is listed");
    }
    assert!(!site.join(".env.br").exists());
    assert!(files.contains_key(".well-known/security.txt"));
    bin().arg("check").arg(&site).assert().success();
}

#[test]
fn messages_say_what_is_true() {
    let (tmp, site) = precompressed_site();
    bin()
        .arg(tmp.path().join("missing-dir"))
        .assert()
        .code(2)
        .stderr(contains("missing-dir: no such folder"));
    bin()
        .arg(site.join("index.html"))
        .assert()
        .code(2)
        .stderr(contains("index.html: not a folder"));
    // One error is "1 error".
    std::fs::write(site.join("assets/app.js.br"), b"not brotli").unwrap();
    let manifest_path = site.join("precompress-manifest.json");
    let mut m = manifest(&site);
    m["files"]["assets/app.js"]["encodings"] = serde_json::json!([]);
    std::fs::write(&manifest_path, serde_json::to_vec(&m).unwrap()).unwrap();
    bin()
        .arg(&site)
        .arg("--no-config")
        .assert()
        .code(1)
        .stdout(contains(", 1 error,").and(contains("1 errors").not()));
}

#[test]
fn the_preview_serves_variants_and_the_manifest_only_by_negotiation() {
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &[]);
    for path in [
        "/assets/app.js.br",
        "/assets/app.js.gz",
        "/assets/app.js.zst",
        "/precompress-manifest.json",
    ] {
        assert_eq!(get(s.addr, path, Some("br")).status, 404, "{path}");
    }
    assert_eq!(get(s.addr, "/assets/app.js", Some("br")).status, 200);
    // A folder's redirect stays on this host: `//docs/` would be another one.
    std::fs::create_dir_all(site.join("docs")).unwrap();
    std::fs::write(site.join("docs/index.html"), "<p>docs</p>").unwrap();
    for path in ["/docs", "//docs", "///docs"] {
        let r = get(s.addr, path, None);
        assert_eq!(r.status, 301, "{path}");
        assert_eq!(r.header("location"), Some("/docs/"), "{path}");
    }
}
