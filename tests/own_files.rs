//! Nothing but its own files: whatever a file name, a journal or a restored
//! cache says, a run reads, writes and deletes only under DIR, its cache and
//! its store, never through a link it did not make, only files whose names
//! and hashes prove it wrote them; every decoder is bounded by the size the
//! manifest says; the shared cache folder is safe under concurrent runs.
//! Each test is a finding of an adversarial review, reproduced: `check`
//! following the manifest out of DIR, a FIFO or a device at the manifest
//! path, the manifest compressing itself, a link where a variant goes, a
//! planted cache entry (the first review); a planted journal or manifest, a
//! restored store, brotli bombs, runs sharing a cache (the second). The fast
//! tier; a cache entry replaced by the brotli CLI's output is in
//! `tests/reference_clis.rs`.

mod serve_util;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use predicates::prelude::*;
use serve_util::common::*;
use serve_util::*;

/// A script of `lines` varied lines: compressible, and worth a dictionary.
fn script(tag: &str, lines: usize) -> String {
    (0..lines)
        .map(|i| format!("export function {tag}_{i}(a) {{ return a * {i} + \"{tag}\"; }}\n"))
        .collect()
}

/// A release folder with a fingerprinted script and the files given.
fn release(root: &Path, name: &str, hash: &str, tag: &str, extra: &[(&str, &[u8])]) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(dir.join(format!("assets/app-{hash}.js")), script(tag, 200)).unwrap();
    for (rel, bytes) in extra {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    dir
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The first line of a journal that DIR would accept as its own (an
/// adversary that can stat DIR could write it; one that only plants files
/// cannot).
fn journal_header(dir: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(dir).unwrap();
    format!("precompress-journal 2 {} {}\n", md.dev(), md.ino())
}

fn journal_line(path: &str, file: &[u8], source: &[u8]) -> String {
    format!(
        "{} {} {}\n",
        blake3::hash(file).to_hex(),
        blake3::hash(source).to_hex(),
        serde_json::to_string(path).unwrap()
    )
}

/// Finding 2: `DIR/.precompress-journal` planted as a symlink. The run
/// appended its lines to the target (a shell profile, say), and a file named
/// `$(touch PWNED).js` turned one into a command when it was sourced.
#[test]
fn a_journal_planted_as_a_symlink_is_never_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let hostile = script("pwned", 50);
    let dir = release(
        tmp.path(),
        "dist",
        "1a2b3c4d",
        "one",
        &[("$(touch PWNED).js", hostile.as_bytes())],
    );
    let profile = tmp.path().join("profile");
    std::fs::write(&profile, "export PATH=$PATH\n").unwrap();
    std::os::unix::fs::symlink(&profile, dir.join(".precompress-journal")).unwrap();
    let out = output(&[dir.as_os_str()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(".precompress-journal") && err.contains("symlink"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&profile).unwrap(),
        "export PATH=$PATH\n"
    );
    // The link is left for its owner to remove; nothing half-done is served.
    assert!(dir.join(".precompress-journal").is_symlink());
    assert!(!dir.join("$(touch PWNED).js.br").exists());
}

/// Finding 7: a FIFO at `DIR/.precompress-journal` hung the run for ever
/// (its open for appending waited for a reader).
#[test]
fn a_fifo_at_the_journal_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = release(tmp.path(), "dist", "1a2b3c4d", "one", &[]);
    let fifo = dir.join(".precompress-journal");
    mkfifo(&fifo);
    let mut c = bin();
    c.timeout(Duration::from_secs(30));
    let out = c.arg(&dir).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(".precompress-journal") && err.contains("not a regular file"),
        "{err}"
    );
}

/// Finding 3: a journal line naming a user's file made the next run delete
/// it as "ours" (a source, `user-notes.txt`, with its blake3), or replace it
/// without `--force` (a `.br` of the user's own). A planted journal proves
/// nothing; and even one with this folder's header proves only names this
/// tool writes beside a source.
#[test]
fn a_forged_journal_never_makes_a_run_delete_or_replace_a_users_file() {
    let tmp = tempfile::tempdir().unwrap();
    let notes = b"my notes, not a build output\n".repeat(20);
    let css = "body { color: red; }\n".repeat(40);
    let own_br = b"the user's own, not brotli of style.css".to_vec();
    let dir = release(
        tmp.path(),
        "dist",
        "1a2b3c4d",
        "one",
        &[
            ("user-notes.txt", &notes),
            ("style.css", css.as_bytes()),
            ("style.css.br", &own_br),
        ],
    );
    let lines = journal_line("user-notes.txt", &notes, b"anything")
        + &journal_line("style.css.br", &own_br, css.as_bytes());
    // Planted (copied in from `public/`): no header of this folder's.
    std::fs::write(dir.join(".precompress-journal"), &lines).unwrap();
    let out = output(&[dir.as_os_str()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not this folder's journal"), "{err}");
    assert!(
        err.contains("style.css.br: not written by precompress"),
        "{err}"
    );
    assert_eq!(std::fs::read(dir.join("user-notes.txt")).unwrap(), notes);
    assert_eq!(std::fs::read(dir.join("style.css.br")).unwrap(), own_br);

    // With this folder's header, a line naming a source is still no proof.
    std::fs::remove_file(dir.join("style.css.br")).unwrap();
    let forged = journal_header(&dir) + &journal_line("user-notes.txt", &notes, b"anything");
    std::fs::write(dir.join(".precompress-journal"), forged).unwrap();
    let out = output(&[dir.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read(dir.join("user-notes.txt")).unwrap(), notes);
    assert!(!dir.join(".precompress-journal").exists());
    bin().arg("check").arg(&dir).assert().success();
}

/// Finding 3, by the manifest: a `precompress-manifest.json` copied into DIR
/// (from `public/`, or another build) that lists a user's file as a variant
/// made the run delete it as its own stale output.
#[test]
fn a_planted_manifest_never_makes_a_run_delete_a_file_it_lists_as_a_variant() {
    let tmp = tempfile::tempdir().unwrap();
    let notes = b"my notes, not a build output\n".repeat(20);
    let dir = release(
        tmp.path(),
        "dist",
        "1a2b3c4d",
        "one",
        &[("user-notes.txt", &notes)],
    );
    bin().arg(&dir).assert().success();
    let mut m = manifest(&dir);
    let b3 = blake3::hash(&notes).to_hex().to_string();
    let planted = serde_json::json!({
        "coding": "br", "path": "user-notes.txt", "size": notes.len(),
        "etag": format!("\"{}\"", &b3[..32]), "blake3": b3,
    });
    m["files"]["assets/app-1a2b3c4d.js"]["encodings"][0] = planted;
    m["files"].as_object_mut().unwrap().remove("user-notes.txt");
    std::fs::write(
        dir.join("precompress-manifest.json"),
        serde_json::to_vec(&m).unwrap(),
    )
    .unwrap();
    let out = output(&[dir.as_os_str()]);
    assert_eq!(
        std::fs::read(dir.join("user-notes.txt")).unwrap(),
        notes,
        "{}",
        stderr(&out)
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    bin().arg("check").arg(&dir).assert().success();
}

/// Finding 4: `CACHE/releases/v1/blobs` restored as a symlink (a cache comes
/// back from `actions/cache`, which other branches write): the store's
/// clean-up deleted every file in the link's target that was not a blob.
#[test]
fn a_release_store_restored_as_a_symlink_never_empties_its_target() {
    let tmp = tempfile::tempdir().unwrap();
    let users = tmp.path().join("home-folder");
    std::fs::create_dir_all(&users).unwrap();
    std::fs::write(users.join("thesis.tex"), "years of work").unwrap();
    let cache = tmp.path().join("cache");
    std::fs::create_dir_all(cache.join("releases/v1")).unwrap();
    std::os::unix::fs::symlink(&users, cache.join("releases/v1/blobs")).unwrap();
    for (n, hash) in [(1, "1a2b3c4d"), (2, "5e6f7a8b")] {
        let dir = release(tmp.path(), &format!("v{n}"), hash, &format!("r{n}"), &[]);
        let out = output(&[dir.as_os_str(), "--cache-dir".as_ref(), cache.as_os_str()]);
        let err = stderr(&out);
        let names: Vec<_> = std::fs::read_dir(&users)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["thesis.tex"], "{err}");
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(
            err.contains("releases/v1/blobs") && err.contains("symlink"),
            "{err}"
        );
    }
}

/// Finding 6: a store index whose `size` said 2^50 aborted every later run
/// (the dictionary's read allocated it) instead of starting the store again.
#[test]
fn a_store_index_with_an_impossible_size_is_a_warning_not_an_abort() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let v1 = release(tmp.path(), "v1", "1a2b3c4d", "r1", &[]);
    let out = output(&[v1.as_os_str(), "--cache-dir".as_ref(), cache.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let index = cache.join("releases/v1/index.json");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&index).unwrap()).unwrap();
    json["releases"][0]["files"][0]["size"] = serde_json::json!(1u64 << 50);
    std::fs::write(&index, serde_json::to_vec(&json).unwrap()).unwrap();
    let v2 = release(tmp.path(), "v2", "5e6f7a8b", "r2", &[]);
    let out = output(&[v2.as_os_str(), "--cache-dir".as_ref(), cache.as_os_str()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("started again"), "{err}");
}

/// Finding 5: brotli bombs. A few hundred bytes of brotli say hundreds of
/// megabytes; `check` decoded a replaced `.br` whole (534 MB at its peak for
/// a 405-byte body). Its decoders stop one byte past the size the manifest
/// gives the source: under a 128 MiB address-space limit (check needs under
/// 64), it now reports the file instead of failing to allocate 256 MiB.
#[test]
fn a_brotli_bomb_in_place_of_a_variant_is_decoded_no_further_than_the_source() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let dir = release(tmp.path(), "dist", "1a2b3c4d", "one", &[]);
    bin().arg(&dir).assert().success();
    let mut bomb = Vec::new();
    {
        let mut w = brotli::CompressorWriter::new(&mut bomb, 1 << 16, 9, 24);
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..256 {
            w.write_all(&zeros).unwrap();
        }
    }
    assert!(bomb.len() < 4096, "{} bytes", bomb.len());
    let rel = "assets/app-1a2b3c4d.js.br";
    std::fs::write(dir.join(rel), &bomb).unwrap();
    // Listed as it is, so that check decodes it (else its hash alone fails it).
    let mpath = dir.join("precompress-manifest.json");
    let mut m = manifest(&dir);
    for v in m["files"]["assets/app-1a2b3c4d.js"]["encodings"]
        .as_array_mut()
        .unwrap()
    {
        if v["path"] == rel {
            let b3 = blake3::hash(&bomb).to_hex().to_string();
            v["size"] = bomb.len().into();
            v["etag"] = format!("\"{}\"", &b3[..32]).into();
            v["blake3"] = b3.into();
        }
    }
    std::fs::write(&mpath, serde_json::to_vec(&m).unwrap()).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(r#"ulimit -v 131072; exec "$0" check "$1" --json"#)
        .arg(assert_cmd::cargo::cargo_bin("precompress"))
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bad: Vec<(&str, &str)> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["path"].as_str().unwrap(), p["problem"].as_str().unwrap()))
        .collect();
    assert_eq!(bad, [(rel, "variant_stale")], "{report:#}");
}

/// Finding 8: two runs sharing one `--cache-dir` (two CI jobs, two apps of a
/// monorepo) each rewrote the store's index from what they had read and
/// removed the blobs their own index did not name: later runs warned "cannot
/// read" and made no deltas. Two apps of many assets (so that recording them
/// takes a while) run side by side for three releases: after each, the index
/// keeps both apps' releases, every release it keeps has its blobs, and each
/// app's next release gets its deltas.
#[test]
fn two_runs_sharing_a_cache_folder_keep_each_others_releases() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let build = |app: usize, n: usize| -> PathBuf {
        let dir = tmp.path().join(format!("app{app}/v{n}"));
        std::fs::create_dir_all(dir.join("assets")).unwrap();
        for i in 0..150 {
            // Hex hashes of the release and file (letters and digits both).
            let hash = format!("{app:x}{n:x}{i:03x}abc");
            let body = script(&format!("app{app}_f{i}_v{}", n.min(2)), 30);
            std::fs::write(dir.join(format!("assets/f{i}-{hash}.js")), body).unwrap();
        }
        dir
    };
    let indexed = || -> Vec<String> {
        let index: serde_json::Value =
            serde_json::from_slice(&std::fs::read(cache.join("releases/v1/index.json")).unwrap())
                .unwrap();
        let mut names = Vec::new();
        for r in index["releases"].as_array().unwrap() {
            for f in r["files"].as_array().unwrap() {
                let sha = f["sha256"].as_str().unwrap();
                assert!(cache.join("releases/v1/blobs").join(sha).is_file(), "{sha}");
                names.push(f["rel"].as_str().unwrap().to_string());
            }
        }
        names
    };
    for n in 0..3 {
        let runs: Vec<_> = (0..2)
            .map(|app| {
                std_bin()
                    .arg(build(app, n))
                    .arg("--cache-dir")
                    .arg(&cache)
                    .args(["--brotli-quality", "1", "--formats", "br"])
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for r in runs {
            let out = r.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            assert!(!stderr(&out).contains("cannot read"), "{}", stderr(&out));
        }
        let names = indexed();
        for app in 0..2 {
            let f0 = format!("assets/f0-{app:x}{n:x}000abc.js");
            assert!(
                names.contains(&f0),
                "release {n}: app {app}'s release was lost"
            );
        }
    }
    // Each app's fourth release: a small change, deltas against the third.
    for app in 0..2 {
        let dir = build(app, 3);
        let rel = format!("assets/f0-{app:x}3000abc.js");
        let mut text = std::fs::read_to_string(dir.join(&rel)).unwrap();
        text.push_str("export const edited = 1;\n");
        std::fs::write(dir.join(&rel), text).unwrap();
        let out = output(&[dir.as_os_str(), "--cache-dir".as_ref(), cache.as_os_str()]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!stderr(&out).contains("cannot read"), "{}", stderr(&out));
        let m = manifest(&dir);
        let deltas = m["files"][&rel]["deltas"].as_array().map_or(0, Vec::len);
        assert!(deltas > 0, "app {app}: {:#}", m["files"][&rel]);
    }
}

#[test]
fn check_never_opens_a_path_outside_dir() {
    let (tmp, site) = precompressed_site();
    let secret = tmp.path().join("secret.txt");
    std::fs::write(&secret, "outside").unwrap();
    let mpath = site.join("precompress-manifest.json");
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&mpath).unwrap()).unwrap();
    let mut asset = m["files"]["index.html"].clone();
    asset["size"] = 7.into();
    asset["blake3"] = blake3::hash(b"outside").to_hex().to_string().into();
    asset["encodings"] = serde_json::json!([]);
    m["files"]["../secret.txt"] = asset.clone();
    // A FIFO outside DIR used to hang check.
    mkfifo(&tmp.path().join("fifo"));
    asset["size"] = 0.into();
    m["files"]["../fifo"] = asset;
    std::fs::write(&mpath, serde_json::to_vec(&m).unwrap()).unwrap();
    let out = quick()
        .arg("check")
        .arg(&site)
        .arg("--json")
        .assert()
        .code(1);
    let report: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let unsafe_paths: Vec<&str> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["problem"] == "unsafe_path")
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert_eq!(unsafe_paths, ["../fifo", "../secret.txt"], "{report:#}");
}

#[test]
fn a_fifo_or_a_device_at_the_manifest_path_is_refused_not_waited_on() {
    let (_tmp, site) = precompressed_site();
    let mpath = site.join("precompress-manifest.json");
    for make in ["fifo", "zero"] {
        std::fs::remove_file(&mpath).unwrap();
        if make == "fifo" {
            mkfifo(&mpath);
        } else {
            std::os::unix::fs::symlink("/dev/zero", &mpath).unwrap();
        }
        let t = Instant::now();
        quick()
            .arg("check")
            .arg(&site)
            .assert()
            .code(1)
            .stderr(predicates::str::contains("not a regular file"));
        // The run rebuilds a manifest it cannot read (and replaces the FIFO).
        quick()
            .arg(&site)
            .args(["-q", "--no-config"])
            .assert()
            .success()
            .stderr(predicates::str::contains("not a regular file"));
        assert!(std::fs::symlink_metadata(&mpath).unwrap().is_file());
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "{make}: {:?}",
            t.elapsed()
        );
    }
}

/// `--manifest dist/index.html` replaced the site's page with JSON (after a
/// warning) and exited 0. A `--manifest` that names an existing file is
/// replaced only when that file is a precompress manifest.
#[test]
fn the_manifest_flag_never_overwrites_a_file_that_is_not_a_manifest() {
    let (_tmp, site) = precompressed_site();
    let page = site.join("index.html");
    let before = std::fs::read(&page).unwrap();
    let snapshot = common::snapshot(&site);
    quick()
        .arg(&site)
        .args(["-q", "--no-config", "--manifest"])
        .arg(&page)
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains("index.html")
                .and(predicates::str::contains("not a precompress manifest")),
        );
    assert_eq!(std::fs::read(&page).unwrap(), before);
    assert_eq!(common::snapshot(&site), snapshot, "something was written");
    // A manifest of its own elsewhere is written, then replaced by the next run.
    let own = site.parent().unwrap().join("own-manifest.json");
    for _ in 0..2 {
        quick()
            .arg(&site)
            .args(["-q", "--no-config", "--manifest"])
            .arg(&own)
            .assert()
            .success();
    }
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&own).unwrap()).unwrap();
    assert!(m["files"]["index.html"].is_object());
    // A folder or FIFO named as the manifest is refused too, never waited on.
    mkfifo(&site.parent().unwrap().join("fifo"));
    for bad in ["fifo", "site"] {
        quick()
            .arg(&site)
            .args(["-q", "--no-config", "--manifest"])
            .arg(site.parent().unwrap().join(bad))
            .assert()
            .code(2);
    }
}

#[test]
fn the_manifest_never_compresses_itself_however_it_is_spelled() {
    let (_tmp, site) = precompressed_site();
    let parent = site.parent().unwrap();
    let spellings = [
        "./site/precompress-manifest.json".to_string(),
        site.join("precompress-manifest.json").display().to_string(),
        "site/../site/precompress-manifest.json".to_string(),
    ];
    for m in spellings {
        let st = Command::cargo_bin("precompress")
            .unwrap()
            .current_dir(parent)
            .args(["site", "-q", "--no-config", "--manifest", &m])
            .status()
            .unwrap();
        assert!(st.success(), "{m}");
        for suffix in ["br", "gz", "zst"] {
            let v = site.join(format!("precompress-manifest.json.{suffix}"));
            assert!(!v.exists(), "--manifest {m} compressed the manifest");
        }
        quick().arg("check").arg(&site).assert().success();
    }
}

#[test]
fn a_symlink_where_a_variant_goes_is_left_alone_without_force() {
    let (tmp, site) = precompressed_site();
    let elsewhere = tmp.path().join("elsewhere.br");
    std::fs::write(&elsewhere, b"someone else's file").unwrap();
    let link = site.join("assets/app.js.br");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    std::fs::write(
        site.join("assets/app.js"),
        "export const changed = 1;\n".repeat(100),
    )
    .unwrap();
    quick()
        .arg(&site)
        .arg("--no-config")
        .assert()
        .code(1)
        .stderr(predicates::str::contains("app.js.br").and(predicates::str::contains("symlink")));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&elsewhere).unwrap(), b"someone else's file");
    // Other codings of the file are still done.
    assert!(site.join("assets/app.js.gz").exists());
}
