//! `--shard K/N` and `precompress merge`, as a CI matrix uses them: each shard
//! runs in its own copy of the build (in parallel, one thread each), what each
//! wrote is brought back into one copy, and merge must leave exactly the tree
//! and manifest one run writes; anything that does not add up is refused with
//! nothing written. The fast tier; the same on the shared corpus is in
//! `tests/shard_corpus.rs`.

mod serve_util;

use std::path::{Path, PathBuf};

use serve_util::common::shards::*;
use serve_util::common::*;

#[test]
fn deltas_are_weighed_against_every_shards_variants() {
    let tmp = tempfile::tempdir().unwrap();
    let (v1, v2, _, _) = serve_util::two_releases(tmp.path());
    // A second fingerprinted script, rewritten from scratch: its deltas are
    // no smaller than its br, so one run drops them; merge must too.
    let vendor = |seed: u64| {
        let mut x = seed;
        (0..3000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                format!("v{:x};", x >> 40)
            })
            .collect::<String>()
    };
    std::fs::write(v1.join("assets/vendor-0a0b0c0d.js"), vendor(1)).unwrap();
    std::fs::write(v2.join("assets/vendor-9f8e7d6c.js"), vendor(2)).unwrap();
    assert!(run(&v1, &[]).status().unwrap().success());
    let prev = v1.to_str().unwrap();

    let single = tmp.path().join("single");
    copy_dir(&v2, &single);
    assert!(run(&single, &["--dictionary-from", prev])
        .status()
        .unwrap()
        .success());
    let m = manifest(&single);
    let app = &m["files"]["assets/app-5e6f7a8b.js"];
    assert_eq!(app["deltas"].as_array().map(Vec::len), Some(2), "{app}");
    let vendor_skipped = &m["files"]["assets/vendor-9f8e7d6c.js"]["skipped_deltas"];
    assert!(
        vendor_skipped
            .as_array()
            .is_some_and(|s| s.iter().any(|d| d["reason"] == "not_smaller")),
        "{vendor_skipped}"
    );

    let work = tmp.path().join("work");
    let dirs = shards(&v2, &work, 3, &["--dictionary-from", prev]);
    let merged = tmp.path().join("merged");
    fan_in(&v2, &dirs, &merged);
    let out = merged_ok(&merged);
    // The shards kept the vendor's deltas (they could not see every variant);
    // merge removed them, as the single run did.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("removed assets/vendor-9f8e7d6c.js."), "{err}");
    assert_eq!(snapshot(&single), snapshot(&merged));
}

/// A small site of a few compressible files.
fn small_build(root: &Path) -> PathBuf {
    let build = root.join("build");
    std::fs::create_dir_all(&build).unwrap();
    for i in 0..6 {
        let text = format!("body {{ margin: {i}px }}\n").repeat(200 + i * 50);
        std::fs::write(build.join(format!("style{i}.css")), text).unwrap();
    }
    build
}

fn refused(dir: &Path, why: &str) {
    let out = merge(dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot merge") && err.contains(why), "{err}");
    assert!(
        !dir.join("precompress-manifest.json").exists(),
        "a manifest was written"
    );
}

#[test]
fn a_missing_shard_a_different_build_or_a_changed_variant_is_refused_and_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let build = small_build(tmp.path());

    // No partials at all.
    refused(&build, "no partial manifests");

    // Shard 2 of 3 never came back.
    let dirs = shards(&build, &tmp.path().join("a"), 3, &[]);
    let merged = tmp.path().join("missing");
    fan_in(&build, &[dirs[0].clone(), dirs[2].clone()], &merged);
    refused(&merged, "shard 2/3 missing");

    // Shard 3 ran on a different build.
    let other = tmp.path().join("other");
    copy_dir(&build, &other);
    std::fs::write(
        other.join("style0.css"),
        "body { margin: 9px }\n".repeat(300),
    )
    .unwrap();
    let odd = shards(&other, &tmp.path().join("b"), 3, &[]);
    let merged = tmp.path().join("mixed");
    fan_in(
        &build,
        &[dirs[0].clone(), dirs[1].clone(), odd[2].clone()],
        &merged,
    );
    refused(&merged, "different tree");

    // A variant changed on the way back.
    let merged = tmp.path().join("tampered");
    fan_in(&build, &dirs, &merged);
    let br = merged.join("style5.css.br");
    let mut bytes = std::fs::read(&br).unwrap();
    bytes[3] ^= 1;
    std::fs::write(&br, bytes).unwrap();
    refused(
        &merged,
        "style5.css.br: not the content the shards recorded",
    );

    // A shard of another split beside them.
    let merged = tmp.path().join("two-splits");
    fan_in(&build, &dirs, &merged);
    let two = shards(&build, &tmp.path().join("c"), 2, &[]);
    std::fs::copy(
        two[0].join("precompress-manifest.shard-1-of-2.json"),
        merged.join("precompress-manifest.shard-1-of-2.json"),
    )
    .unwrap();
    refused(&merged, "two different splits");

    // All there: it merges, and the partials are gone.
    let merged = tmp.path().join("good");
    fan_in(&build, &dirs, &merged);
    merged_ok(&merged);
    assert!(!merged
        .join("precompress-manifest.shard-1-of-3.json")
        .exists());
    let c = std_bin().arg("check").arg(&merged).output().unwrap();
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stdout));
}

#[test]
fn a_run_never_takes_a_partial_manifest_for_an_asset() {
    let tmp = tempfile::tempdir().unwrap();
    let build = small_build(tmp.path());
    let dirs = shards(&build, tmp.path(), 2, &[]);
    // A plain run in a folder holding a shard's output.
    assert!(run(&dirs[0], &[]).status().unwrap().success());
    let m = manifest(&dirs[0]);
    let names: Vec<&String> = m["files"].as_object().unwrap().keys().collect();
    assert!(names.iter().all(|n| !n.contains(".shard-")), "{names:?}");
}

#[test]
fn a_split_brotli_stream_is_one_shards_and_merges_to_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let build = small_build(tmp.path());
    // Text over 8 MiB: its brotli runs as parts on several workers.
    let mut x: u64 = 7;
    let big: String = (0..2_800_000)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            format!("w{} ", x >> 58)
        })
        .collect();
    assert!(big.len() > 9 << 20);
    std::fs::write(build.join("big.txt"), big).unwrap();
    let single = tmp.path().join("single");
    copy_dir(&build, &single);
    assert!(run(&single, &[]).status().unwrap().success());

    let dirs = shards(&build, &tmp.path().join("work"), 3, &[]);
    let with_br: Vec<usize> = (0..3)
        .filter(|&k| dirs[k].join("big.txt.br").exists())
        .collect();
    assert_eq!(with_br.len(), 1, "big.txt.br in shards {with_br:?}");
    let merged = tmp.path().join("merged");
    fan_in(&build, &dirs, &merged);
    merged_ok(&merged);
    assert_eq!(snapshot(&single), snapshot(&merged));
}

/// `merge` accepted partials whose fields it did not verify, edited (a
/// variant's ETag made the identity's, a size +1000, a delta's coding or
/// dictionary, an asset's ETag, a skip reason), and wrote a manifest one run
/// would not. An edited partial is refused by its seal; with the seal made
/// again, every field that follows from the files is still checked.
#[test]
fn merge_refuses_partials_whose_fields_were_edited() {
    let tmp = tempfile::tempdir().unwrap();
    let (v1, v2, _, new) = serve_util::two_releases(tmp.path());
    for i in 0..4 {
        let text = format!("body {{ margin: {i}px }}\n").repeat(300);
        std::fs::write(v2.join(format!("style{i}.css")), text).unwrap();
    }
    std::fs::write(v2.join("tiny.css"), "a{}").unwrap();
    let prev = v1.to_str().unwrap();
    let dirs = shards(
        &v2,
        &tmp.path().join("work"),
        2,
        &["--dictionary-from", prev],
    );
    let good = tmp.path().join("good");
    fan_in(&v2, &dirs, &good);
    let names = [
        "precompress-manifest.shard-1-of-2.json",
        "precompress-manifest.shard-2-of-2.json",
    ];
    // The partial that holds the app's deltas and the one with its br.
    let holds = |what: &dyn Fn(&serde_json::Value) -> bool| -> &str {
        names
            .iter()
            .find(|n| {
                let v: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(good.join(n)).unwrap()).unwrap();
                what(&v["manifest"]["files"][new])
            })
            .expect("a partial holds it")
    };
    let with_deltas = holds(&|a| a["deltas"].as_array().is_some_and(|d| !d.is_empty()));
    let with_br = holds(&|a| {
        a["encodings"]
            .as_array()
            .is_some_and(|e| e.iter().any(|v| v["coding"] == "br"))
    });
    type Edit = (&'static str, fn(&mut serde_json::Value, &str), &'static str);
    let edits: [Edit; 7] = [
        (
            "variant etag made the identity's",
            |m, new| {
                let id = m["files"][new]["etag"].clone();
                let e = &mut m["files"][new]["encodings"];
                for v in e.as_array_mut().unwrap() {
                    if v["coding"] == "br" {
                        v["etag"] = id.clone();
                    }
                }
            },
            "etag",
        ),
        (
            "variant size +1000",
            |m, new| {
                for v in m["files"][new]["encodings"].as_array_mut().unwrap() {
                    if v["coding"] == "br" {
                        v["size"] = (v["size"].as_u64().unwrap() + 1000).into();
                    }
                }
            },
            "not the content the shards recorded",
        ),
        (
            "delta coding dcb<->dcz",
            |m, new| {
                for d in m["files"][new]["deltas"].as_array_mut().unwrap() {
                    d["coding"] = if d["coding"] == "dcb" { "dcz" } else { "dcb" }.into();
                }
            },
            "is not the",
        ),
        (
            "delta dictionary",
            |m, new| {
                let d = &mut m["files"][new]["deltas"][0];
                d["dictionary"] = format!(":{}=:", "A".repeat(43)).into();
            },
            "is not the",
        ),
        (
            "asset etag",
            |m, new| {
                m["files"][new]["etag"] = "\"0123456789abcdef0123456789abcdef\"".into();
            },
            "etag",
        ),
        (
            "asset content type",
            |m, new| {
                m["files"][new]["content_type"] = "text/html".into();
            },
            "saw different content",
        ),
        (
            "a skip reason",
            |m, _| {
                m["files"]["tiny.css"]["skipped"]["br"] = "not_smaller".into();
            },
            "two reasons",
        ),
    ];
    for (k, (what, edit, why)) in edits.iter().enumerate() {
        let dir = tmp.path().join(format!("edit-{k}"));
        copy_dir(&good, &dir);
        let name = match *what {
            w if w.starts_with("delta") => with_deltas,
            w if w.starts_with("variant") => with_br,
            _ => names[0],
        };
        let path = dir.join(name);
        let mut part: precompressor::shard::Partial =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let mut m = serde_json::to_value(&part.manifest).unwrap();
        edit(&mut m, new);
        part.manifest = serde_json::from_value(m).unwrap();
        // As an editor leaves it: the old seal.
        std::fs::write(&path, serde_json::to_vec_pretty(&part).unwrap()).unwrap();
        refused(&dir, "was edited after shard");
        // With the seal made again, the fields the files prove (or every
        // shard saw) are checked.
        part.seal = String::new();
        part.seal = blake3::hash(&serde_json::to_vec(&part).unwrap())
            .to_hex()
            .to_string();
        std::fs::write(&path, serde_json::to_vec_pretty(&part).unwrap()).unwrap();
        refused(&dir, why);
    }
    merged_ok(&good);
}

/// A shard's run said `manifest: DIR/precompress-manifest.json` while it
/// wrote its partial.
#[test]
fn a_shard_names_the_partial_it_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let build = small_build(tmp.path());
    let out = std_bin()
        .arg(&build)
        .args(["--no-config", "--shard", "1/2"])
        .args(LEVELS)
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("manifest:"))
        .unwrap();
    assert!(
        line.ends_with("precompress-manifest.shard-1-of-2.json"),
        "{stdout}"
    );
}

/// Issue #46: docs/caching.md's recipe uploads each shard's variants, deltas
/// and partial manifest, not the list of dictionaries each shard writes
/// into DIR; merge refused that set, so a site sharded as documented shipped
/// no manifest. The list is derived data: merge writes it, the bytes the
/// shards listed.
#[test]
fn the_sharded_recipe_merges_without_the_list_of_dictionaries() {
    let tmp = tempfile::tempdir().unwrap();
    let build = small_build(tmp.path());
    // A page large enough to be marked: the release publishes its list.
    std::fs::write(
        build.join("index.html"),
        "<!doctype html><p>a page of the site</p>\n".repeat(40),
    )
    .unwrap();
    let dirs = shards(&build, &tmp.path().join("work"), 2, &[]);
    let into = tmp.path().join("merged");
    copy_dir(&build, &into);
    let recipe = [".br", ".zst", ".gz", ".dcb", ".dcz"];
    for s in &dirs {
        for (rel, bytes) in written(&build, s) {
            let partial = rel.starts_with("precompress-manifest.shard-");
            if partial || recipe.iter().any(|e| rel.ends_with(e)) {
                let p = into.join(&rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, bytes).unwrap();
            }
        }
    }
    assert!(!into.join("precompress-dictionaries.json").exists());
    merged_ok(&into);
    let shard_list = std::fs::read(dirs[0].join("precompress-dictionaries.json")).unwrap();
    assert_eq!(
        std::fs::read(into.join("precompress-dictionaries.json")).unwrap(),
        shard_list
    );
    let out = std_bin().arg("check").arg(&into).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
