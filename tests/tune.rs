//! `precompress tune DIR` on temp copies of the example site (real small
//! files): the tables, the JSON, the sample bound, precompress.toml, and that
//! nothing in DIR changes.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use common::*;
use serde_json::Value;

/// (token, key, levels measured at the default settings)
const CODINGS: [(&str, &str, std::ops::RangeInclusive<i64>); 3] = [
    ("br", "brotli-quality", 5..=11),
    ("zstd", "zstd-level", 3..=22),
    ("gzip", "gzip-level", 6..=12),
];

fn tune_json(dir: &Path, extra: &[&str]) -> Value {
    let out = bin()
        .arg("tune")
        .arg(dir)
        .arg("--json")
        .args(extra)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("tune --json prints JSON")
}

/// The levels of one coding's table in the human output, read from the rows
/// between its heading (`zstd (zstd-level, now 19)`) and its `pin:` line.
fn table_levels(text: &str, coding: &str, key: &str) -> BTreeSet<i64> {
    let heading = format!("{coding} ({key}, now ");
    let mut lines = text.lines().skip_while(|l| !l.starts_with(&heading));
    assert!(lines.next().is_some(), "no table for {coding}:\n{text}");
    lines
        .skip(1) // the column names
        .take_while(|l| !l.trim_start().starts_with("pin:"))
        .map(|l| {
            l.split_whitespace()
                .next()
                .and_then(|w| w.parse().ok())
                .unwrap_or_else(|| panic!("not a row: {l:?}"))
        })
        .collect()
}

#[test]
fn the_table_lists_every_level_of_every_coding_and_dir_is_left_as_it_was() {
    let (_g, dir) = site();
    let before = snapshot(&dir);
    let out = bin().arg("tune").arg(&dir).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for (coding, key, levels) in CODINGS {
        assert_eq!(
            table_levels(&text, coding, key),
            levels.collect::<BTreeSet<_>>(),
            "{coding}:\n{text}"
        );
        // The line to pin it, with a level in range.
        let pin = text
            .lines()
            .find(|l| l.starts_with(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("no {key} line:\n{text}"));
        let level: i64 = pin[key.len() + 3..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(CODINGS.iter().any(|c| c.1 == key && c.2.contains(&level)));
    }
    assert!(text.contains("sample: 9 of 9 assets"), "{text}");
    // Same paths, same bytes: no variant, manifest, lock or temporary file.
    assert!(snapshot(&dir) == before, "tune changed DIR");
}

#[test]
fn the_json_has_every_field_and_recommends_levels_in_range() {
    let (_g, dir) = site();
    let before = snapshot(&dir);
    let j = tune_json(&dir, &[]);
    for field in [
        "dir", "sample", "files", "rule", "threads", "wall_ms", "codings", "toml",
    ] {
        assert!(j.get(field).is_some(), "no {field}: {j}");
    }
    for field in [
        "files",
        "bytes",
        "assets",
        "asset_bytes",
        "limit",
        "over_limit",
    ] {
        assert!(j["sample"][field].is_u64(), "sample.{field}: {j}");
    }
    let codings = j["codings"].as_array().unwrap();
    assert_eq!(codings.len(), 3);
    for (c, (coding, key, range)) in codings.iter().zip(CODINGS) {
        assert_eq!(c["coding"], coding);
        assert_eq!(c["key"], key);
        let current = c["current"].as_i64().unwrap();
        let levels: Vec<i64> = c["levels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                for f in ["bytes", "cpu_micros"] {
                    assert!(r[f].is_u64(), "{coding} {f}: {r}");
                }
                for f in ["relative", "cpu_relative"] {
                    assert!(r[f].is_f64(), "{coding} {f}: {r}");
                }
                assert!(r["bytes"].as_u64().unwrap() > 0);
                r["level"].as_i64().unwrap()
            })
            .collect();
        assert_eq!(levels, range.clone().collect::<Vec<_>>(), "{coding}");
        let now = &c["levels"][(current - range.start()) as usize];
        assert_eq!(now["relative"].as_f64(), Some(1.0), "{coding}");
        assert!(range.contains(&c["smallest"].as_i64().unwrap()));
        let rec = &c["recommendation"];
        let level = rec["level"].as_i64().unwrap();
        assert!(range.contains(&level), "{coding}: {rec}");
        assert_eq!(rec["toml"], format!("{key} = {level}"));
        assert_eq!(rec["change"], level != current);
        assert!(!rec["why"].as_str().unwrap().is_empty());
        assert!(rec["notes"].is_array());
        assert!(j["toml"]
            .as_str()
            .unwrap()
            .lines()
            .any(|l| l == rec["toml"]));
    }
    assert!(snapshot(&dir) == before, "tune --json changed DIR");
}

#[test]
fn sample_bounds_the_bytes_measured_and_the_same_tree_gives_the_same_numbers() {
    let (_g, dir) = site();
    let before = snapshot(&dir);
    let limit = 10_000u64;
    let args = ["--sample", "10000", "--formats", "gzip,zstd"];
    let one = tune_json(&dir, &[&args[..], &["-j", "1"]].concat());
    let two = tune_json(&dir, &[&args[..], &["-j", "2"]].concat());
    let s = &one["sample"];
    assert_eq!(s["limit"], limit);
    let bytes = s["bytes"].as_u64().unwrap();
    assert!(bytes <= limit && bytes > 0, "{s}");
    assert!(s["files"].as_u64().unwrap() < s["assets"].as_u64().unwrap());
    // The files listed are the bytes counted.
    let listed: u64 = one["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| fs::metadata(dir.join(f.as_str().unwrap())).unwrap().len())
        .sum();
    assert_eq!(listed, bytes);
    // --formats: only the codings asked for, in the usual order.
    let tokens: Vec<&str> = one["codings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["coding"].as_str().unwrap())
        .collect();
    assert_eq!(tokens, ["zstd", "gzip"]);
    // Same sample, same bytes at every level, on 1 thread or 2.
    assert_eq!(one["files"], two["files"]);
    let sizes = |j: &Value| -> Vec<u64> {
        j["codings"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["levels"].as_array().unwrap().clone())
            .map(|r| r["bytes"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(sizes(&one), sizes(&two));
    assert!(snapshot(&dir) == before);
}

#[test]
fn precompress_toml_sets_what_is_compared_and_sampled() {
    let (_g, dir) = site();
    fs::write(
        dir.join("precompress.toml"),
        "formats = [\"zstd\"]\nzstd-level = 1\nexclude = [\"*.json\"]\n",
    )
    .unwrap();
    let before = snapshot(&dir);
    let j = tune_json(&dir, &[]);
    assert!(j["config_file"]
        .as_str()
        .unwrap()
        .ends_with("precompress.toml"));
    let c = &j["codings"][0];
    assert_eq!(c["coding"], "zstd");
    assert_eq!(c["current"], 1);
    // Level 1 lies outside 3-22: measured too, as every row is compared with it.
    assert_eq!(c["levels"][0]["level"], 1);
    assert_eq!(c["levels"].as_array().unwrap().len(), 21);
    let files = j["files"].as_array().unwrap();
    assert!(files
        .iter()
        .all(|f| !f.as_str().unwrap().ends_with(".json")));
    assert_eq!(j["sample"]["assets"], 8, "products.json is excluded");
    // A flag wins over the file.
    let j = tune_json(&dir, &["--zstd-level", "19"]);
    assert_eq!(j["codings"][0]["current"], 19);
    assert!(snapshot(&dir) == before);
}

#[test]
fn a_bad_dir_is_a_usage_error_that_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-dist");
    let file = tmp.path().join("a-file.js");
    fs::write(&file, "x".repeat(5000)).unwrap();
    let empty = tmp.path().join("only-images");
    fs::create_dir(&empty).unwrap();
    fs::write(empty.join("a.png"), [0u8; 5000]).unwrap();
    for (dir, why) in [
        (&missing, "no such folder"),
        (&file, "not a folder"),
        (&empty, "nothing to measure"),
    ] {
        let out = bin().arg("tune").arg(dir).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(
            err.contains("precompress: error:") && err.contains(why),
            "{}: {err}",
            dir.display()
        );
        assert!(out.get_output().stdout.is_empty());
    }
    // A sample too small for any asset says how to fix it.
    let (_g, site) = site();
    let out = bin()
        .args(["tune", "--sample", "100"])
        .arg(&site)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(err.contains("raise --sample"), "{err}");
}

#[test]
fn after_a_run_the_sample_holds_the_same_assets_not_the_variants_or_the_manifest() {
    let (_g, dir) = site();
    let fresh = tune_json(&dir, &["--formats", "gzip"]);
    bin().arg(&dir).arg("-q").assert().success();
    assert!(dir.join("precompress-manifest.json").exists());
    let before = snapshot(&dir);
    let after_run = tune_json(&dir, &["--formats", "gzip"]);
    assert_eq!(fresh["files"], after_run["files"]);
    assert_eq!(fresh["sample"], after_run["sample"]);
    assert!(snapshot(&dir) == before);
}
