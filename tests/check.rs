//! `precompress check`: every problem kind it must catch, on a temp copy of the
//! example site, and silence on a good tree. The fast tier; a zstd frame
//! with a large window, made by the zstd CLI, is in `tests/reference_clis.rs`.

mod common;

use std::fs;

use common::*;
use serde_json::Value;

fn precompressed_site() -> (tempfile::TempDir, std::path::PathBuf) {
    let (g, dir) = site();
    bin().arg(&dir).arg("-q").assert().success();
    (g, dir)
}

#[test]
fn a_good_tree_passes_and_check_writes_nothing() {
    let (_g, dir) = precompressed_site();
    let before = snapshot(&dir);
    let (code, r) = check_json(&dir);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["ok"], true);
    assert_eq!(r["variants"], 24);
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn missing_and_unreadable_manifests() {
    let (_g, dir) = site();
    let (code, r) = check_json(&dir);
    assert_eq!(code, 1);
    assert_eq!(kinds(&r)[0].1, "manifest_missing");
    fs::write(dir.join("precompress-manifest.json"), "[1, 2").unwrap();
    let (code, r) = check_json(&dir);
    assert_eq!(code, 1);
    assert_eq!(kinds(&r)[0].1, "manifest_invalid");
}

#[test]
fn corrupt_changed_stale_missing_and_unlisted_files_are_each_reported() {
    let (_g, dir) = precompressed_site();
    // Corrupt: truncated brotli.
    let br = fs::read(dir.join("assets/style.css.br")).unwrap();
    fs::write(dir.join("assets/style.css.br"), &br[..br.len() / 2]).unwrap();
    // Stale: a valid gzip of other content in place of a listed variant.
    let mut gz = Vec::new();
    {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::best());
        e.write_all(b"something else entirely").unwrap();
        e.finish().unwrap();
    }
    fs::write(dir.join("assets/app.js.gz"), &gz).unwrap();
    // Source changed after the run.
    fs::write(
        dir.join("index.html"),
        "<!doctype html><p>changed</p>\n".repeat(60),
    )
    .unwrap();
    // Missing variant.
    fs::remove_file(dir.join("img/logo.svg.zst")).unwrap();
    // A new file the manifest does not know, and a variant nobody listed.
    fs::write(
        dir.join("assets/new.js"),
        "export const n = 1;\n".repeat(100),
    )
    .unwrap();
    fs::copy(
        dir.join("assets/app.js.br"),
        dir.join("assets/app.js.br.bak"),
    )
    .unwrap();
    fs::write(dir.join("img/photo.png.gz"), &gz).unwrap();
    // A temporary file left by a killed run.
    fs::write(dir.join("assets/.precompress-abc123.tmp"), b"partial").unwrap();

    let (code, r) = check_json(&dir);
    assert_eq!(code, 1);
    let k = kinds(&r);
    let has = |path: &str, kind: &str| k.iter().any(|(p, q)| p == path && q == kind);
    assert!(has("assets/style.css.br", "variant_corrupt"), "{k:?}");
    assert!(has("assets/style.css.br", "variant_changed"), "{k:?}");
    assert!(has("assets/app.js.gz", "variant_stale"), "{k:?}");
    assert!(has("index.html", "source_changed"), "{k:?}");
    assert!(has("img/logo.svg.zst", "variant_missing"), "{k:?}");
    assert!(has("assets/new.js", "unlisted_file"), "{k:?}");
    assert!(has("assets/app.js.br.bak", "unlisted_file"), "{k:?}");
    assert!(has("img/photo.png.gz", "stale_variant"), "{k:?}");
    assert!(has("index.html.br", "variant_stale"), "{k:?}");
    assert!(
        has("assets/.precompress-abc123.tmp", "temporary_file"),
        "{k:?}"
    );
    // Human output names each problem on stderr.
    let out = bin().arg("check").arg(&dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("assets/app.js.gz: variant_stale"),
        "{stderr}"
    );
}

#[test]
fn an_unlisted_variant_that_decodes_is_reported_as_foreign() {
    let (_g, dir) = precompressed_site();
    fs::write(dir.join("assets/tiny-under-min-size.js.gz"), {
        let mut gz = Vec::new();
        let mut e = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::best());
        std::io::Write::write_all(
            &mut e,
            &fs::read(dir.join("assets/tiny-under-min-size.js")).unwrap(),
        )
        .unwrap();
        e.finish().unwrap();
        gz
    })
    .unwrap();
    let (code, r) = check_json(&dir);
    assert_eq!(code, 1);
    assert_eq!(
        kinds(&r),
        [(
            "assets/tiny-under-min-size.js.gz".to_string(),
            "foreign_variant".to_string()
        )]
    );
}

#[cfg(unix)]
#[test]
fn a_follow_links_run_passes_check() {
    let (g, dir) = site();
    let outside = g.path().join("shared-lib.js");
    fs::write(&outside, "export const shared = 1;\n".repeat(200)).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("assets/linked.js")).unwrap();
    bin()
        .arg(&dir)
        .args(["-q", "--follow-links"])
        .assert()
        .success();
    assert!(dir.join("assets/linked.js.br").exists());
    let (code, r) = check_json(&dir);
    assert_eq!(code, 0, "{r}");
}

/// A manifest whose br and zstd entries carried the identity's ETag passed
/// `check`, and `serve` then sent one strong ETag for three bodies. Every
/// ETag must be the one its own blake3 gives.
#[test]
fn an_etag_that_is_not_its_own_blake3s_is_reported_and_refused_by_serve() {
    let (_g, dir) = precompressed_site();
    let mpath = dir.join("precompress-manifest.json");
    let mut m: Value = serde_json::from_slice(&fs::read(&mpath).unwrap()).unwrap();
    let asset = &mut m["files"]["assets/app.js"];
    let identity = asset["etag"].clone();
    for v in asset["encodings"].as_array_mut().unwrap() {
        if v["coding"] != "gzip" {
            v["etag"] = identity.clone();
        }
    }
    fs::write(&mpath, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    let (code, r) = check_json(&dir);
    assert_eq!(code, 1);
    let mut found: Vec<(String, String)> = kinds(&r);
    found.sort();
    assert_eq!(
        found,
        [
            ("assets/app.js.br".to_string(), "etag_mismatch".to_string()),
            ("assets/app.js.zst".to_string(), "etag_mismatch".to_string()),
        ],
        "{r:#}"
    );
    // serve refuses to start on it rather than send one ETag for three bodies.
    bin()
        .arg("serve")
        .arg(&dir)
        .args(["--addr", "127.0.0.1:0"])
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "two of its representations have the etag",
        ));
}
