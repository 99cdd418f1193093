//! What the CLI says and what it takes as a user types it: messages that say
//! what is true, usage mistakes explained in words, sizes with units, the
//! address forms of `serve`, an unwritable folder in one line, the progress
//! bar; and what is not an asset (dot-files, the config file, a cache folder
//! inside DIR; one that is DIR or holds it is refused).

mod serve_util;

use predicates::prelude::*;
use predicates::str::contains;
use serve_util::*;

use serve_util::common::bin;

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

#[test]
fn sizes_take_units_everywhere() {
    let (_tmp, site) = precompressed_site();
    // "1KiB" was "invalid digit found in string" on the command line.
    bin()
        .arg(&site)
        .args(["--no-config", "--min-size", "1KiB"])
        .assert()
        .success();
    bin()
        .arg(&site)
        .args(["--no-config", "--min-size", "ten"])
        .assert()
        .code(2)
        .stderr(contains("expected e.g. 150KB, 1.5MiB or 2048"));
}

#[test]
fn serve_takes_the_address_forms_people_type() {
    let (_tmp, site) = precompressed_site();
    for addr in ["localhost:0", "0"] {
        let s = start_precompress_at(&site, addr, &[]);
        assert!(s.addr.ip().is_loopback(), "{addr}: {}", s.addr);
        assert_eq!(get(s.addr, "/", None).status, 200);
    }
    bin()
        .args(["serve"])
        .arg(&site)
        .args(["--addr", "nowhere"])
        .assert()
        .code(2)
        .stderr(contains("expected 127.0.0.1:8080, localhost:8080"));
}

#[test]
fn a_lost_manifest_is_summarised_not_listed_line_by_line() {
    let (_tmp, site) = precompressed_site();
    std::fs::remove_file(site.join("precompress-manifest.json")).unwrap();
    let out = bin().arg(&site).arg("--no-config").assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("the manifest did not list"), "{stdout}");
    assert!(stdout.contains("more (--json lists them all)"), "{stdout}");
    assert!(stdout.lines().count() < 20, "{stdout}");
}

/// As `nobody` when run as root (root writes anywhere), on a read-only tree.
fn unprivileged(tree: &std::path::Path) -> std::process::Command {
    use std::os::unix::fs::PermissionsExt;
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .unwrap()
        .stdout
        == b"0\n";
    for e in walkdir::WalkDir::new(tree) {
        let e = e.unwrap();
        let mode = if e.file_type().is_dir() { 0o555 } else { 0o444 };
        std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let exe = assert_cmd::cargo::cargo_bin("precompress");
    if !root {
        return std::process::Command::new(exe);
    }
    let mut c = std::process::Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(exe);
    c
}

#[test]
fn an_unwritable_folder_fails_at_once_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    serve_util::copy_dir(&repo().join("fixtures/site"), &site);
    let out = unprivileged(tmp.path())
        .arg(&site)
        .arg("--no-config")
        .output()
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for e in walkdir::WalkDir::new(tmp.path()).into_iter().flatten() {
        if e.file_type().is_dir() {
            let _ = std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o755));
        }
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("site: cannot write") && stderr.contains("Permission denied"),
        "{stderr}"
    );
    assert!(!stdout.contains("manifest:"), "{stdout}");
    // Nothing was compressed first.
    assert!(!site.join("assets/app.js.br").exists());
}

#[test]
fn a_dry_run_does_not_claim_a_manifest() {
    let (_tmp, site) = precompressed_site();
    bin()
        .arg(&site)
        .args(["--no-config", "--dry-run", "--force"])
        .assert()
        .success()
        .stdout(contains("manifest: not written (dry run)"));
}

#[test]
fn usage_mistakes_are_explained_in_words() {
    let (_tmp, site) = precompressed_site();
    let parent = site.parent().unwrap();
    bin()
        .current_dir(parent)
        .args(["chek", "site"])
        .assert()
        .code(2)
        .stderr(contains(
            "'chek' is neither a subcommand nor a folder; did you mean 'check'?",
        ));
    // What the shell makes of an unquoted --include *.js.
    bin()
        .current_dir(parent)
        .args(["site", "--include", "a.js", "b.js"])
        .assert()
        .code(2)
        .stderr(contains("an extra argument 'b.js'").and(contains("quote it (--include '*.js')")));
}

#[test]
fn verbose_says_why_a_file_has_no_variant_in_words() {
    let (_tmp, site) = precompressed_site();
    bin()
        .arg(&site)
        .args(["--no-config", "-v"])
        .assert()
        .success()
        .stderr(contains("assets/tiny-under-min-size.js").and(contains("(under `--min-size`)")))
        .stderr(contains("img/photo.png").and(contains("not a compressible type")))
        .stdout(contains(
            "no variant in some coding: 2 files not a compressible type",
        ))
        .stdout(contains("; 2 files under `--min-size`"))
        .stdout(contains("counted per file and coding").not())
        .stdout(contains("excluded_type").not());
}

#[test]
fn gzip_level_and_min_ratio_as_the_bundler_plugins_have_them() {
    let (_tmp, site) = precompressed_site();
    let size = |p: &str| std::fs::metadata(site.join(p)).map(|m| m.len()).ok();
    let at12 = size("data/products.json.gz").unwrap();
    bin()
        .arg(&site)
        .args(["--no-config", "--gzip-level", "1"])
        .assert()
        .success();
    let m = manifest(&site);
    assert!(m["settings"]["gzip"].as_str().unwrap().contains("level 1"));
    assert!(
        size("data/products.json.gz").unwrap() > at12,
        "level 1 is larger"
    );
    bin()
        .arg(&site)
        .args(["--no-config", "--gzip-level", "13"])
        .assert()
        .code(2);

    // A variant that saves less than asked is not kept, and says why.
    // Random letters: about 4.7 bits a byte, so every variant is ~60% of the source.
    let mut x: u32 = 2_463_534_242;
    let noisy: String = (0..3000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            char::from(b'a' + (x % 26) as u8)
        })
        .collect();
    std::fs::write(site.join("assets/noise.js"), &noisy).unwrap();
    bin()
        .arg(&site)
        .args(["--no-config", "--min-ratio", "0.5"])
        .assert()
        .success();
    let a = &manifest(&site)["files"]["assets/noise.js"];
    assert_eq!(a["encodings"], serde_json::json!([]), "{a:#}");
    assert_eq!(a["skipped"]["br"], "saves_too_little");
    assert!(size("assets/noise.js.br").is_none());
    // The same ratio in precompress.toml; a bad one is a usage error naming the key.
    std::fs::write(site.join("precompress.toml"), "min-ratio = 1.5\n").unwrap();
    bin()
        .arg(&site)
        .assert()
        .code(2)
        .stderr(contains("min-ratio"));
    std::fs::write(
        site.join("precompress.toml"),
        "min-ratio = 1.0\ngzip-level = 9\n",
    )
    .unwrap();
    bin().arg(&site).assert().success();
    let m = manifest(&site);
    assert!(m["settings"]["gzip"].as_str().unwrap().contains("level 9"));
    assert!(
        size("assets/noise.js.br").is_some(),
        "ratio 1 keeps any smaller variant"
    );
}

#[test]
fn check_says_a_file_could_not_be_read_not_that_the_tree_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    serve_util::copy_dir(&repo().join("fixtures/site"), &site);
    let secret = site.join("assets/secret.js");
    std::fs::write(&secret, "const s = 1;\n".repeat(200)).unwrap();
    use std::os::unix::fs::PermissionsExt;
    // Writable folders, one unreadable file, the binary as nobody when root.
    let run = |args: &[&str]| {
        let mut c = unprivileged(tmp.path());
        for e in walkdir::WalkDir::new(tmp.path()).into_iter().flatten() {
            let mode = if e.file_type().is_dir() { 0o777 } else { 0o666 };
            std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
        c.args(args).arg(&site).output().unwrap()
    };
    let out = run(&["--no-config"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["check", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p: Vec<(&str, &str)> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["path"].as_str().unwrap(), p["problem"].as_str().unwrap()))
        .collect();
    assert!(p.contains(&("assets/secret.js", "unreadable")), "{p:?}");
    assert!(!p.iter().any(|(_, k)| *k == "unlisted_file"), "{p:?}");
    // tune stopped at the first asset it could not read; it samples around it.
    let out = run(&["tune", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let t: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(t["warnings"].to_string().contains("secret.js"), "{t:#}");
    let files = t["files"].as_array().unwrap();
    assert!(!files.is_empty() && !files.iter().any(|f| f == "assets/secret.js"));
}

#[test]
fn a_cache_folder_inside_dir_is_not_part_of_the_site() {
    let (_tmp, site) = precompressed_site();
    std::fs::write(site.join("precompress.toml"), "cache-dir = \"cache\"\n").unwrap();
    bin().arg(&site).arg("--force").assert().success();
    assert!(std::fs::read_dir(site.join("cache"))
        .unwrap()
        .next()
        .is_some());
    let m = manifest(&site);
    assert!(
        !m["files"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k.starts_with("cache/")),
        "cache entries listed as assets"
    );
    bin().arg("check").arg(&site).assert().success();
}

/// `--cache-dir DIR` (or `cache-dir = "."` in DIR's precompress.toml) was
/// accepted: the cache and the release store were written into the build
/// folder, `check` then failed on every entry and the next run listed them
/// as assets. DIR as the cache, or a cache folder holding DIR, is refused
/// before anything is written.
#[test]
fn a_cache_folder_that_is_dir_or_holds_it_is_refused() {
    let (tmp, site) = precompressed_site();
    let before = serve_util::common::snapshot(tmp.path());
    let refused = |cmd: &mut assert_cmd::Command, why: &str| {
        cmd.arg(&site)
            .assert()
            .code(2)
            .stderr(contains("--cache-dir").and(contains(why)));
    };
    refused(bin().arg("--cache-dir").arg(&site), "is DIR");
    refused(bin().arg("--cache-dir").arg(site.join("new/..")), "is DIR");
    refused(bin().env("PRECOMPRESS_CACHE_DIR", &site), "is DIR");
    refused(bin().arg("--cache-dir").arg(tmp.path()), "holds DIR");
    std::fs::write(site.join("precompress.toml"), "cache-dir = \".\"\n").unwrap();
    refused(&mut bin(), "is DIR");
    std::fs::remove_file(site.join("precompress.toml")).unwrap();
    assert_eq!(
        serve_util::common::snapshot(tmp.path()),
        before,
        "a refused run wrote"
    );
}

#[test]
fn a_first_run_and_its_rerun_count_the_same_pairs() {
    let (_tmp, site) = precompressed_site();
    let json = |args: &[&str]| -> serde_json::Value {
        let out = bin()
            .arg(&site)
            .args(["--no-config", "--json"])
            .args(args)
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let first = json(&["--force"])["run"].clone();
    let rerun = json(&[])["run"].clone();
    let n = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap();
    assert!(n(&first, "not_kept") > 0, "{first:#}");
    assert_eq!(
        n(&first, "compressed") + n(&first, "from_cache") + n(&first, "not_kept"),
        n(&rerun, "reused"),
        "{first:#} {rerun:#}"
    );
}

#[test]
fn the_progress_bar_shows_no_eta() {
    // A terminal (script(1) gives the run a pseudo-terminal): the bar is drawn.
    let (_tmp, site) = precompressed_site();
    let exe = assert_cmd::cargo::cargo_bin("precompress");
    let out = std::process::Command::new("script")
        .args(["-qec"])
        .arg(format!(
            "'{}' --no-config --force '{}'",
            exe.display(),
            site.display()
        ))
        .arg("/dev/null")
        .env("TERM", "xterm")
        .env_remove("NO_COLOR")
        .output()
        .expect("script (util-linux)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(" jobs "), "no progress bar drawn: {text}");
    // Count-based, it said "eta 10m" on a 9 s run.
    assert!(!text.contains("eta"), "{text}");
}

/// `precompress .` in a project root would compress node_modules/ and src/
/// with the site: refused in words that name the way on, unless asked.
#[test]
fn a_project_root_is_refused_with_the_way_on() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(root.join("package.json"), "{}").unwrap();
    std::fs::create_dir_all(root.join("node_modules/x")).unwrap();
    std::fs::write(root.join("node_modules/x/index.js"), "x;".repeat(2000)).unwrap();
    std::fs::write(root.join("index.html"), "<p>hi</p>".repeat(300)).unwrap();
    bin().arg(root).arg("--no-config").assert().code(2).stderr(
        contains("looks like a project root")
            .and(contains("package.json and node_modules/"))
            .and(contains("dist/"))
            .and(contains("--allow-project-root")),
    );
    assert!(!root.join("precompress-manifest.json").exists());
    assert!(!root.join("node_modules/x/index.js.br").exists());
    bin()
        .arg(root)
        .args(["--no-config", "--allow-project-root"])
        .assert()
        .success();
    assert!(root.join("index.html.br").exists());
}

/// An empty DIR is a build that did not run: an error (exit 2) and no
/// manifest, unless `--allow-empty`.
#[test]
fn an_empty_dir_is_an_error_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dist");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    bin()
        .arg(&dir)
        .arg("--no-config")
        .assert()
        .code(2)
        .stderr(contains("no file to compress").and(contains("--allow-empty")));
    assert!(!dir.join("precompress-manifest.json").exists());
    bin()
        .arg(&dir)
        .args(["--no-config", "--allow-empty"])
        .assert()
        .success();
    assert!(dir.join("precompress-manifest.json").exists());
}

/// `precompress 'dist\'` (a Windows habit in a POSIX shell) names a folder
/// `dist\`: the error says so.
#[cfg(unix)]
#[test]
fn a_backslash_in_a_missing_dir_gets_a_hint() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("dist")).unwrap();
    bin()
        .current_dir(tmp.path())
        .args(["dist\\", "--no-config"])
        .assert()
        .code(2)
        .stderr(contains("dist\\: no such folder").and(contains("did you mean dist/?")));
    bin()
        .current_dir(tmp.path())
        .args(["nope", "--no-config"])
        .assert()
        .code(2)
        .stderr(contains("nope: no such folder").and(contains("backslash").not()));
}

/// The summary's lines say something: a default run of a site with no
/// shared dictionary has no first-visit line, and counts files.
#[test]
fn the_summary_says_only_what_tells_something() {
    let (_tmp, site) = precompressed_site();
    bin()
        .arg(&site)
        .arg("--no-config")
        .assert()
        .success()
        .stdout(contains("first visit: fetches no dictionary").not())
        .stdout(contains("counted per file and coding").not());
}
