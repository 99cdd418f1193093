//! Incremental runs, the cache, stale/orphaned/foreign variants, dry runs and
//! bad manifests, on temp copies of the example site with real decoders.
// Unix file APIs (modes, inodes, FIFOs, setpriv, signals).
#![cfg(unix)]

mod common;

use std::fs;
use std::path::Path;

use common::*;
use serde_json::Value;

/// Runs precompress with `args` on `dir` and returns (exit code, JSON report, stderr).
fn run_json(dir: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = bin().arg(dir).arg("--json").args(args).output().unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap(),
        report,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn check_ok(dir: &Path) {
    let out = bin().arg("check").arg(dir).output().unwrap();
    assert!(
        out.status.success(),
        "check failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn inode(p: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(p).unwrap().ino()
}

#[test]
fn unchanged_rerun_encodes_nothing_and_touches_no_variant() {
    let (_g, dir) = site();
    let (code, first, _) = run_json(&dir, &[]);
    assert_eq!(code, 0);
    assert_eq!(first["run"]["compressed"], 24);
    let ino = inode(&dir.join("assets/app.js.br"));
    let manifest_before = fs::read(dir.join("precompress-manifest.json")).unwrap();
    let (code, second, _) = run_json(&dir, &[]);
    assert_eq!(code, 0);
    assert_eq!(second["run"]["compressed"], 0);
    assert_eq!(
        second["jobs"].as_array().unwrap().len(),
        0,
        "no job may run"
    );
    assert_eq!(
        second["run"]["reused"], 27,
        "24 variants + 3 not-smaller outcomes"
    );
    assert_eq!(
        inode(&dir.join("assets/app.js.br")),
        ino,
        "the variant was rewritten"
    );
    assert_eq!(
        fs::read(dir.join("precompress-manifest.json")).unwrap(),
        manifest_before
    );
    check_ok(&dir);
}

#[test]
fn changing_one_file_recompresses_that_file_only_and_force_redoes_all() {
    let (_g, dir) = site();
    run_json(&dir, &[]);
    let mut js = fs::read_to_string(dir.join("assets/app.js")).unwrap();
    js.push_str("console.log('a new line that changes the content');\n");
    fs::write(dir.join("assets/app.js"), &js).unwrap();
    let (code, r, _) = run_json(&dir, &[]);
    assert_eq!(code, 0);
    let jobs: Vec<&str> = r["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["path"].as_str().unwrap())
        .collect();
    assert_eq!(jobs, ["assets/app.js"; 3]);
    assert_eq!(r["run"]["compressed"], 3);
    assert!(crate_decode("br", &fs::read(dir.join("assets/app.js.br")).unwrap()) == js.as_bytes());
    check_ok(&dir);
    let (_, forced, _) = run_json(&dir, &["--force"]);
    assert_eq!(forced["run"]["compressed"], 24);
    assert_eq!(forced["run"]["reused"], 0);
}

#[test]
fn changed_settings_redo_only_that_codec() {
    let (_g, dir) = site();
    run_json(&dir, &[]);
    let (_, r, _) = run_json(&dir, &["--zstd-level", "3"]);
    let codings: std::collections::BTreeSet<&str> = r["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["coding"].as_str().unwrap())
        .collect();
    assert_eq!(codings.into_iter().collect::<Vec<_>>(), ["zstd"]);
    check_ok(&dir);
}

#[test]
fn deleted_source_dropped_codec_and_incompressible_source_lose_their_variants() {
    let (_g, dir) = site();
    run_json(&dir, &[]);
    fs::remove_file(dir.join("assets/style.css")).unwrap();
    // Same name, now random bytes: no variant is smaller any more.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let noise: Vec<u8> = (0..6000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    fs::write(dir.join("data/products.json"), &noise).unwrap();
    let (code, r, _) = run_json(&dir, &["--formats", "br"]);
    assert_eq!(code, 0, "{r}");
    for gone in [
        "assets/style.css.br",
        "assets/style.css.zst",
        "assets/style.css.gz",
        "assets/app.js.zst",
        "assets/app.js.gz",
        "data/products.json.br",
    ] {
        assert!(!dir.join(gone).exists(), "{gone} should have been removed");
    }
    assert!(dir.join("assets/app.js.br").exists());
    let removed: Vec<&str> = r["run"]["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        removed.contains(&"assets/style.css.br") && removed.contains(&"assets/app.js.gz"),
        "{removed:?}"
    );
    assert!(
        manifest(&dir)["files"].get("assets/style.css.br").is_none(),
        "an orphan must not become an asset"
    );
    check_ok(&dir);
}

#[test]
fn foreign_variants_are_never_deleted_or_overwritten_without_force() {
    let (_g, dir) = site();
    // A valid .gz that another tool wrote, and a stale .br that decodes to old content.
    let svg = dir.join("img/logo.svg");
    let st = std::process::Command::new("gzip")
        .args(["-k", "-9", "-n"])
        .arg(&svg)
        .status()
        .unwrap();
    assert!(st.success());
    let valid_foreign = fs::read(dir.join("img/logo.svg.gz")).unwrap();
    let mut stale = Vec::new();
    brotli::BrotliCompress(
        &mut &b"old content of app.js"[..],
        &mut stale,
        &Default::default(),
    )
    .unwrap();
    fs::write(dir.join("assets/app.js.br"), &stale).unwrap();

    let (code, r, stderr) = run_json(&dir, &[]);
    assert_eq!(code, 1, "a stale variant a server would serve is an error");
    assert!(
        stderr.contains("assets/app.js.br") && stderr.contains("not written by precompress"),
        "{stderr}"
    );
    assert_eq!(
        fs::read(dir.join("assets/app.js.br")).unwrap(),
        stale,
        "must not be overwritten"
    );
    assert_eq!(
        fs::read(dir.join("img/logo.svg.gz")).unwrap(),
        valid_foreign,
        "must not be overwritten"
    );
    assert_eq!(r["run"]["foreign"], serde_json::json!(["img/logo.svg.gz"]));
    let m = manifest(&dir);
    let gz: Vec<&Value> = m["files"]["img/logo.svg"]["encodings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["coding"] == "gzip")
        .collect();
    assert_eq!(
        gz[0]["size"],
        valid_foreign.len() as u64,
        "a valid foreign variant is listed as it is"
    );
    assert!(m["files"]["assets/app.js"]["encodings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|v| v["coding"] != "br"));
    // check flags the stale one.
    let out = bin().arg("check").arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("assets/app.js.br: stale_variant"));

    let (code, _, _) = run_json(&dir, &["--force"]);
    assert_eq!(code, 0);
    assert!(
        crate_decode("br", &fs::read(dir.join("assets/app.js.br")).unwrap())
            == fs::read(dir.join("assets/app.js")).unwrap()
    );
    check_ok(&dir);
}

#[test]
fn corrupt_or_foreign_version_manifest_is_rebuilt_without_deleting_anything() {
    for bad in ["{ not json", r#"{"version": 99, "files": {}}"#] {
        let (_g, dir) = site();
        run_json(&dir, &[]);
        let variants_before: Vec<String> = snapshot(&dir)
            .into_keys()
            .filter(|k| k.ends_with(".br") || k.ends_with(".gz") || k.ends_with(".zst"))
            .collect();
        fs::write(dir.join("precompress-manifest.json"), bad).unwrap();
        let (code, r, stderr) = run_json(&dir, &[]);
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stderr.contains("precompress-manifest.json: invalid manifest"),
            "{stderr}"
        );
        if bad.contains("99") {
            assert!(stderr.contains("version 99"), "{stderr}");
        }
        assert!(r["run"]["removed"].as_array().unwrap().is_empty());
        let after = snapshot(&dir);
        for v in &variants_before {
            assert!(after.contains_key(v), "{v} was deleted");
        }
        check_ok(&dir);
    }
}

#[test]
fn dry_run_writes_and_deletes_nothing_but_reports_what_it_would_do() {
    let (_g, dir) = site();
    let before = snapshot(&dir);
    let (code, r, _) = run_json(&dir, &["--dry-run"]);
    assert_eq!(code, 0);
    assert_eq!(r["run"]["dry_run"], true);
    assert_eq!(
        r["codecs"]["br"]["files"], 8,
        "reports the variants it would write"
    );
    let after = snapshot(&dir);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after
            .keys()
            .filter(|k| *k != ".precompress.lock")
            .collect::<Vec<_>>()
    );
}

#[test]
fn warm_cache_serves_a_fresh_checkout_without_compressing() {
    let (g, dir) = site();
    let cache = g.path().join("cache");
    let cache_arg = cache.to_str().unwrap();
    let (_, first, _) = run_json(&dir, &["--cache-dir", cache_arg]);
    assert_eq!(first["run"]["compressed"], 24);
    // A clean checkout: same sources, no variants, no manifest.
    let (_g2, fresh) = site();
    let (code, r, _) = run_json(&fresh, &["--cache-dir", cache_arg]);
    assert_eq!(code, 0);
    assert_eq!(r["run"]["compressed"], 0);
    assert_eq!(r["run"]["from_cache"], 24);
    assert_eq!(
        snapshot(&fresh),
        snapshot(&dir),
        "cached output differs from fresh output"
    );
    check_ok(&fresh);

    // The environment variable works too, and a corrupt entry is ignored and replaced.
    let entries: Vec<_> = walkdir::WalkDir::new(&cache)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.path().extension().is_some_and(|x| x == "br"))
        .collect();
    assert_eq!(entries.len(), 8);
    for e in &entries {
        fs::write(e.path(), b"garbage, not brotli").unwrap();
    }
    let (_g3, third) = site();
    let out = bin()
        .arg(&third)
        .arg("--json")
        .env("PRECOMPRESS_CACHE_DIR", &cache)
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["run"]["from_cache"], 16);
    assert_eq!(r["run"]["compressed"], 8);
    check_ok(&third);
    assert!(
        // An entry is a 32-byte tag, then the encoder's output.
        crate_decode("br", &fs::read(entries[0].path()).unwrap()[32..]).len() > 100,
        "corrupt entry replaced"
    );
}

#[test]
fn cache_size_is_bounded() {
    let (g, dir) = site();
    let cache = g.path().join("cache");
    run_json(
        &dir,
        &[
            "--cache-dir",
            cache.to_str().unwrap(),
            "--cache-max-size",
            "3000",
        ],
    );
    let total: u64 = walkdir::WalkDir::new(&cache)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(total <= 3000, "cache holds {total} bytes");
    assert!(total > 0);
}

#[test]
fn two_processes_sharing_a_cache_do_not_corrupt_it() {
    let (g, a) = site();
    let (_g2, b) = site();
    let cache = g.path().join("cache");
    let spawn = |d: &Path| {
        common::std_bin()
            .arg(d)
            .arg("-q")
            .arg("--cache-dir")
            .arg(&cache)
            .spawn()
            .unwrap()
    };
    let (mut pa, mut pb) = (spawn(&a), spawn(&b));
    assert!(pa.wait().unwrap().success() && pb.wait().unwrap().success());
    check_ok(&a);
    check_ok(&b);
    let (_g3, c) = site();
    let (_, r, _) = run_json(&c, &["--cache-dir", cache.to_str().unwrap()]);
    assert_eq!(r["run"]["from_cache"], 24);
    check_ok(&c);
}
