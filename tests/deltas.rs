//! RFC 9842 deltas from the command line: `--dictionary-from` on two releases
//! of a small app (tests/serve_util's `two_releases`), kept honest across
//! reruns, the cache and `precompress check`. The fast tier (the Rust
//! toolchain alone); in the e2e tier, `tests/reference_clis.rs` decodes the
//! deltas with the zstd CLI and `tests/deltas_corpus.rs` makes them for the
//! shared corpus.

mod serve_util;

use std::path::Path;

use predicates::prelude::*;
use predicates::str::contains;
use serde_json::Value;
use serve_util::deltas::*;
use serve_util::manifest;

/// Reruns keep the deltas; one without any earlier release too (it removed
/// them as stale before, issue 35); one whose earlier releases do not hold
/// their dictionary removes them, and says so.
#[test]
fn reruns_keep_deltas_and_drop_them_when_no_longer_asked_for() {
    let r = releases();
    with_previous(&r).assert().success();
    let first = std::fs::read(r.v2.join("precompress-manifest.json")).unwrap();
    with_previous(&r).assert().success().stdout(contains(
        "0 encoded, 0 from cache, 0 not worth keeping, 5 unchanged",
    ));
    assert_eq!(
        std::fs::read(r.v2.join("precompress-manifest.json")).unwrap(),
        first
    );

    // With no earlier release at all, they are still right: kept as they are.
    bin()
        .arg(&r.v2)
        .assert()
        .success()
        .stdout(contains("0 removed as stale"));
    assert_eq!(
        std::fs::read(r.v2.join("precompress-manifest.json")).unwrap(),
        first
    );
    // Another earlier release, which does not hold their dictionary: stale,
    // removed, said aloud, and check agrees.
    let other = r.v1.parent().unwrap().join("other-release");
    std::fs::create_dir(&other).unwrap();
    bin()
        .arg(&r.v2)
        .arg("--dictionary-from")
        .arg(&other)
        .assert()
        .success()
        .stdout(contains("2 removed as stale"))
        .stderr(contains(
            "2 delta(s) of unchanged assets removed: their dictionaries are not among this run's earlier releases",
        ));
    assert_eq!(manifest(&r.v2)["files"][r.new].get("deltas"), None);
    let left: Vec<_> = std::fs::read_dir(r.v2.join("assets"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".dcb") || n.ends_with(".dcz"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    check().arg(&r.v2).assert().success();
}

#[test]
fn the_same_bytes_with_one_thread_or_two_and_from_the_cache() {
    let r = releases();
    let cache = r.v2.parent().unwrap().join("cache");
    let mut trees = Vec::new();
    for (i, threads) in ["1", "2"].iter().enumerate() {
        let copy = r.v2.parent().unwrap().join(format!("copy{i}"));
        serve_util::copy_dir(&r.v2, &copy);
        bin()
            .arg(&copy)
            .args(["-j", threads, "--cache-dir"])
            .arg(&cache)
            .arg("--dictionary-from")
            .arg(&r.v1)
            .assert()
            .success()
            .stdout(contains(if i == 0 {
                "0 from cache"
            } else {
                "5 from cache"
            }));
        trees.push(copy);
    }
    let files = |d: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(d)
            .into_iter()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(d).unwrap().display().to_string();
                (rel, std::fs::read(e.path()).unwrap())
            })
            .collect();
        v.sort();
        v
    };
    assert!(
        files(&trees[0]) == files(&trees[1]),
        "1 and 2 threads (and the cache) differ"
    );
    assert!(files(&trees[0]).iter().any(|(n, _)| n.ends_with(".dcz")));
}

#[test]
fn a_delta_no_smaller_than_brotli_is_not_kept_nor_made_again() {
    let r = releases();
    // Release 1's script replaced by unrelated bytes with a name of the same
    // pattern: a dcz against it is a zstd frame plus its header, larger than br.
    let noise: Vec<u8> = (0..40_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(r.v1.join("assets/app-9f8e7d6c.js"), noise).unwrap();
    std::fs::remove_file(r.v1.join(r.old)).unwrap();
    for expect in [
        "5 encoded",
        "0 encoded, 0 from cache, 0 not worth keeping, 5 unchanged",
    ] {
        with_previous(&r)
            .assert()
            .success()
            .stdout(contains(expect));
    }
    let a = &manifest(&r.v2)["files"][r.new];
    let br = a["encodings"][0]["size"].as_u64().unwrap();
    let skipped = a["skipped_deltas"].as_array().unwrap();
    assert!(
        skipped
            .iter()
            .any(|s| s["coding"] == "dcz" && s["reason"] == "not_smaller"),
        "{a:#}"
    );
    let kept: Vec<String> = a
        .get("deltas")
        .and_then(Value::as_array)
        .map(|d| {
            d.iter()
                .inspect(|d| assert!(d["size"].as_u64().unwrap() < br, "{d:#}"))
                .map(|d| {
                    d["path"]
                        .as_str()
                        .unwrap()
                        .rsplit('/')
                        .next()
                        .unwrap()
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default();
    let mut on_disk: Vec<String> = std::fs::read_dir(r.v2.join("assets"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".dcb") || n.ends_with(".dcz"))
        .collect();
    on_disk.sort();
    assert_eq!(on_disk, kept, "only kept deltas stay on disk");
}

#[test]
fn check_finds_changed_and_unlisted_deltas() {
    let r = releases();
    with_previous(&r).assert().success();
    let d = manifest(&r.v2)["files"][r.new]["deltas"][1]["path"]
        .as_str()
        .unwrap()
        .to_string();
    let mut bytes = std::fs::read(r.v2.join(&d)).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(r.v2.join(&d), &bytes).unwrap();
    std::fs::write(
        r.v2.join(format!("index.html.{}.dcb", "0".repeat(64))),
        b"x",
    )
    .unwrap();
    let out = check()
        .arg(&r.v2)
        .arg("--dictionary-from")
        .arg(&r.v1)
        .arg("--json")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let report: Value = serde_json::from_slice(&out).unwrap();
    let kinds: Vec<(&str, &str)> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["path"].as_str().unwrap(), p["problem"].as_str().unwrap()))
        .collect();
    let unlisted = format!("index.html.{}.dcb", "0".repeat(64));
    assert!(kinds.contains(&(d.as_str(), "delta_changed")), "{kinds:?}");
    assert!(kinds.contains(&(d.as_str(), "delta_stale")), "{kinds:?}");
    assert!(
        kinds.contains(&(unlisted.as_str(), "unlisted_delta")),
        "{kinds:?}"
    );
}

#[test]
fn bad_earlier_releases_are_usage_errors_or_warnings() {
    let r = releases();
    bin()
        .arg(&r.v2)
        .arg("--dictionary-from")
        .arg(r.v1.join("nope"))
        .assert()
        .code(2)
        .stderr(contains("nope: no such folder"));
    bin()
        .arg(&r.v2)
        .arg("--dictionary-from")
        .arg(&r.v2)
        .assert()
        .code(2)
        .stderr(contains("is DIR itself"));
    assert!(
        !r.v2.join("precompress-manifest.json").exists(),
        "ran despite the error"
    );
    // A corrupt old manifest: a warning, and pairing by names still works.
    std::fs::write(r.v1.join("precompress-manifest.json"), "{not json").unwrap();
    with_previous(&r)
        .assert()
        .success()
        .stderr(contains("pairing").and(contains("by file names alone")));
    assert_eq!(
        manifest(&r.v2)["files"][r.new]["deltas"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// Deltas precompress wrote that the manifest does not list (the manifest
/// deleted or corrupt) were all called "not written by precompress … a server
/// would serve it stale" and the run exited 1, though each decodes with the
/// dictionary its name points to. They are adopted, as variants are; one that
/// does not decode is still an error naming it, and is left in place.
#[test]
fn unlisted_deltas_that_decode_with_their_dictionary_are_adopted() {
    let r = releases();
    with_previous(&r).arg("-q").assert().success();
    let listed = manifest(&r.v2)["files"][r.new]["deltas"].clone();
    assert_eq!(listed.as_array().unwrap().len(), 2);
    let mpath = r.v2.join("precompress-manifest.json");
    for lose in ["delete", "corrupt"] {
        if lose == "delete" {
            std::fs::remove_file(&mpath).unwrap();
        } else {
            std::fs::write(&mpath, "{\"version\": 1, \"files\": [").unwrap();
        }
        let out = with_previous(&r).arg("--json").assert().success();
        let report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        let adopted = report["run"]["foreign"].to_string();
        for d in listed.as_array().unwrap() {
            assert!(
                adopted.contains(d["path"].as_str().unwrap()),
                "{lose}: {adopted}"
            );
        }
        assert_eq!(manifest(&r.v2)["files"][r.new]["deltas"], listed, "{lose}");
        check()
            .arg(&r.v2)
            .arg("--dictionary-from")
            .arg(&r.v1)
            .assert()
            .success();
    }
    // One that does not decode to the asset, and no journal says it is ours.
    let dcz = listed[1]["path"].as_str().unwrap();
    let mut bytes = std::fs::read(r.v2.join(dcz)).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x55;
    std::fs::write(r.v2.join(dcz), &bytes).unwrap();
    std::fs::remove_file(&mpath).unwrap();
    with_previous(&r)
        .arg("-q")
        .assert()
        .code(1)
        .stderr(contains(dcz).and(contains("not written by precompress")));
    assert_eq!(
        std::fs::read(r.v2.join(dcz)).unwrap(),
        bytes,
        "left in place"
    );
    // Without the earlier release they cannot be checked: left alone, said.
    std::fs::remove_file(r.v2.join(dcz)).unwrap();
    std::fs::remove_file(&mpath).unwrap();
    bin().arg(&r.v2).arg("-q").assert().success().stderr(
        contains(listed[0]["path"].as_str().unwrap()).and(contains("this run was not given")),
    );
}

/// Without the earlier release, `check` held a dcz neither to RFC 9842's
/// window cap nor to ending with its frame, and passed a delta that was a
/// symlink out of DIR.
#[test]
fn check_without_the_dictionary_still_reads_the_dcz_frame_and_refuses_links() {
    let r = releases();
    with_previous(&r).arg("-q").assert().success();
    let deltas = manifest(&r.v2)["files"][r.new]["deltas"].clone();
    let path = |coding: &str| {
        deltas
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["coding"] == coding)
            .unwrap()["path"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (dcb, dcz) = (path("dcb"), path("dcz"));
    let mut bytes = std::fs::read(r.v2.join(&dcz)).unwrap();
    bytes.extend_from_slice(b"trailing");
    std::fs::write(r.v2.join(&dcz), &bytes).unwrap();
    let outside = r.v2.parent().unwrap().join("outside.dcb");
    std::fs::rename(r.v2.join(&dcb), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, r.v2.join(&dcb)).unwrap();
    let out = check().arg(&r.v2).arg("--json").assert().code(1);
    let report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let problems: Vec<(String, String, String)> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let s = |k: &str| p[k].as_str().unwrap().to_string();
            (s("path"), s("problem"), s("detail"))
        })
        .collect();
    assert!(
        problems.iter().any(|(p, k, d)| *p == dcz
            && k == "delta_corrupt"
            && d.contains("follow the zstd frame")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|(p, k, d)| *p == dcb && k == "delta_missing" && d.contains("symlink")),
        "{problems:?}"
    );
}

/// `check --dictionary-from` with a typo used to exit 0 with the decode check
/// silently off; it is refused as a run refuses it.
#[test]
fn check_refuses_a_dictionary_folder_a_run_would_refuse() {
    let r = releases();
    with_previous(&r).arg("-q").assert().success();
    let file = r.v1.join("precompress-manifest.json");
    for (prev, why) in [
        (r.v1.join("nope"), "no such folder"),
        (file, "not a folder"),
        (r.v2.clone(), "is DIR itself"),
    ] {
        check()
            .arg(&r.v2)
            .arg("--dictionary-from")
            .arg(&prev)
            .assert()
            .code(2)
            .stderr(contains(why).and(contains(prev.display().to_string())));
    }
    check()
        .arg(&r.v2)
        .arg("--dictionary-from")
        .arg(&r.v1)
        .assert()
        .success()
        .stdout(contains("2 of them decoded"));
}

/// An earlier release is never written to: not by `--manifest` or
/// `--cache-dir` pointed into it, and not by compressing it when it sits
/// inside DIR (it would also be published with the new release), nor when it
/// holds DIR.
#[test]
fn nothing_is_written_into_an_earlier_release() {
    let r = releases();
    let before = serve_util::common::snapshot(&r.v1);
    let old = r.v1.join(r.old);
    let inside = r.v2.join("previous");
    serve_util::common::copy_dir(&r.v1, &inside);
    for (args, why) in [
        (
            vec![
                "--dictionary-from".into(),
                r.v1.clone(),
                "--manifest".into(),
                old.clone(),
            ],
            "not a precompress manifest",
        ),
        (
            vec![
                "--dictionary-from".into(),
                r.v1.clone(),
                "--manifest".into(),
                r.v1.join("m.json"),
            ],
            "inside the earlier release",
        ),
        (
            vec![
                "--dictionary-from".into(),
                r.v1.clone(),
                "--cache-dir".into(),
                r.v1.join("cache"),
            ],
            "overlaps the earlier release",
        ),
        (
            vec!["--dictionary-from".into(), inside.clone()],
            "is inside DIR",
        ),
    ] {
        bin()
            .arg(&r.v2)
            .args(&args)
            .assert()
            .code(2)
            .stderr(contains(why));
    }
    bin()
        .arg(&inside)
        .arg("--dictionary-from")
        .arg(&r.v2)
        .assert()
        .code(2)
        .stderr(contains("holds DIR"));
    assert_eq!(
        serve_util::common::snapshot(&r.v1),
        before,
        "release 1 was modified"
    );
    assert!(!r.v2.join("precompress-manifest.json").exists());
}

/// Issue #36: `--shared-dictionary auto` marked the largest chunk that
/// imports another, a lazy 900 KB admin route a first visit of the home page
/// never loads, and built the code dictionary around it: the home page's
/// first visit fetched it whole at idle (11.7x its JS in Chromium) while the
/// summary said a few KiB. The chunk marked is one a first visit loads, and
/// no dictionary a first visit fetches leans on a chunk it does not hold.
#[test]
fn a_lazy_route_is_never_the_chunk_a_first_visit_dictionary_leans_on() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("site");
    serve_util::lazy_route_tree(&dir);
    let out = bin().arg(&dir).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = manifest(&dir);
    let files = &m["files"];
    assert_eq!(
        files["_nuxt/Entry111.js"]["use_as_dictionary"], "match=\"/_nuxt/*\"",
        "{files:#}"
    );
    assert_eq!(files["_nuxt/Admin999.js"].get("use_as_dictionary"), None);
    // What a first visit loads, at its best variant.
    let loaded: u64 = ["_nuxt/Entry111.js", "_nuxt/Small222.js"]
        .iter()
        .map(|k| files[*k]["encodings"][0]["size"].as_u64().unwrap())
        .sum();
    let linked = report["run"]["first_visit"]["linked_bytes"]
        .as_u64()
        .unwrap();
    assert!(
        linked * 10 <= loaded,
        "a first visit fetches {linked} B of dictionaries for {loaded} B of JS: {report:#}"
    );
    if let Some(d) = m["shared_dictionary"].as_str() {
        // Any code dictionary comes as a delta against what the visit holds.
        let deltas = files[d]["deltas"].as_array().unwrap();
        assert!(!deltas.is_empty(), "{d}: {files:#}");
    }
}

#[test]
fn max_files_drops_the_oldest_release_s_deltas_first_and_fails_a_deploy_it_cannot_hold() {
    let r = releases();
    // An older release, given first: its app.js differs from release 1's.
    let v0 = r.v1.parent().unwrap().join("release-0");
    std::fs::create_dir_all(v0.join("assets")).unwrap();
    std::fs::copy(r.v1.join("index.html"), v0.join("index.html")).unwrap();
    let js = std::fs::read_to_string(r.v1.join(r.old)).unwrap();
    std::fs::write(v0.join(r.old), js.replace("'widget 7'", "'widget seven'")).unwrap();
    let run = |max: Option<&str>| {
        let mut c = bin();
        c.arg(&r.v2)
            .args(["--json", "--dictionary-from"])
            .arg(&v0)
            .arg("--dictionary-from")
            .arg(&r.v1);
        if let Some(m) = max {
            c.args(["--max-files", m]);
        }
        c
    };
    let json = |out: &[u8]| -> Value { serde_json::from_slice(out).unwrap() };
    let out = run(None).assert().success().get_output().stdout.clone();
    let free = json(&out);
    let deltas = |m: &Value| -> Vec<String> {
        m["files"][r.new]["deltas"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| d["dictionary"].as_str().unwrap().to_string())
            .collect()
    };
    let v1_sha = sf(&sha256(&std::fs::read(r.v1.join(r.old)).unwrap()));
    assert_eq!(deltas(&manifest(&r.v2)).len(), 4, "{}", manifest(&r.v2));
    assert_eq!(free["deploy"]["dropped_deltas"], 0);

    // The manifest, index.html and the dictionary list (too small for
    // variants), app.js with its 3 variants and 4 deltas: 11 files. Two
    // fewer drops the deltas against release 0 (the oldest), both codings.
    assert_eq!(free["deploy"]["files"], 11);
    let out = run(Some("9"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let bounded = json(&out);
    assert_eq!(bounded["deploy"]["dropped_deltas"], 2);
    assert_eq!(bounded["deploy"]["max_files"], 9);
    assert_eq!(bounded["deploy"]["files"], 9);
    assert_eq!(
        deltas(&manifest(&r.v2)),
        vec![v1_sha.clone(), v1_sha.clone()]
    );
    bin()
        .arg(&r.v2)
        .args(["--dictionary-from"])
        .arg(&v0)
        .arg("--dictionary-from")
        .arg(&r.v1)
        .args(["--max-files", "9"])
        .assert()
        .success()
        .stdout(contains(
            "deploy: 9 files (--max-files 9: 2 deltas not made, the oldest release's first)",
        ));

    // Sources and variants alone pass the bound: every delta goes, the
    // variants stay served, and the run fails naming the bound.
    run(Some("3"))
        .assert()
        .failure()
        .stderr(contains("past --max-files 3 with every delta dropped"));
    let m = manifest(&r.v2);
    assert!(deltas(&m).is_empty());
    assert!(!m["files"][r.new]["encodings"]
        .as_array()
        .unwrap()
        .is_empty());
}
