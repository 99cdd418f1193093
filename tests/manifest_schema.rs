//! The manifest precompress writes has exactly the shape docs/manifest.schema.json
//! describes: required keys, no others, and the enums. Read from the schema file,
//! so the two cannot drift apart.

mod common;

use std::collections::BTreeSet;

use common::*;
use serde_json::Value;

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn required(schema: &Value) -> BTreeSet<String> {
    schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect()
}

fn strings(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect()
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[test]
fn the_example_sites_manifest_matches_the_published_schema() {
    let schema: Value =
        serde_json::from_slice(&std::fs::read(repo().join("docs/manifest.schema.json")).unwrap())
            .unwrap();
    let (_g, dir) = site();
    bin().arg(&dir).arg("-q").assert().success();
    let m = manifest(&dir);
    let defs = &schema["$defs"];
    assert_eq!(keys(&m), required(&schema), "top-level keys");
    // `base` is written only for a site served under one (the test below),
    // the two dictionaries only where a run makes them (tests/field.rs).
    let mut top = keys(&m);
    top.extend(["base", "shared_dictionary", "documents_dictionary"].map(String::from));
    assert_eq!(top, keys(&schema["properties"]));
    assert_eq!(m["version"], schema["properties"]["version"]["const"]);
    let codings = strings(&defs["coding"]["enum"]);
    let reasons = strings(&defs["asset"]["properties"]["skipped"]["additionalProperties"]["enum"]);
    let mut seen_reasons = BTreeSet::new();
    for (rel, a) in m["files"].as_object().unwrap() {
        // A page is marked as its own next version's dictionary.
        let mut k = keys(a);
        if a["cache"] == "page" {
            assert!(k.remove("use_as_dictionary"), "{rel}");
        }
        assert_eq!(k, required(&defs["asset"]), "{rel}");
        assert!(is_hex(a["blake3"].as_str().unwrap(), 64), "{rel}");
        let sha = a["sha256"].as_str().unwrap();
        assert!(sha.len() == 44 && sha.ends_with('='), "{rel}: {sha}");
        let etag = a["etag"].as_str().unwrap();
        assert!(
            etag.starts_with('"') && etag.ends_with('"') && is_hex(&etag[1..etag.len() - 1], 32),
            "{rel}: {etag}"
        );
        for v in a["encodings"].as_array().unwrap() {
            assert_eq!(keys(v), required(&defs["variant"]), "{rel}");
            assert!(codings.contains(v["coding"].as_str().unwrap()));
            assert!(is_hex(v["blake3"].as_str().unwrap(), 64));
        }
        for (coding, reason) in a["skipped"].as_object().unwrap() {
            assert!(codings.contains(coding), "{rel}: {coding}");
            assert!(
                reasons.contains(reason.as_str().unwrap()),
                "{rel}: {reason}"
            );
            seen_reasons.insert(reason.as_str().unwrap().to_string());
        }
    }
    // The fixture exercises every reason but excluded_glob (not asked for here).
    assert_eq!(
        seen_reasons,
        ["excluded_type", "not_smaller", "too_small"]
            .map(String::from)
            .into()
    );
}

#[test]
fn deltas_and_dictionaries_match_the_published_schema() {
    let schema: Value =
        serde_json::from_slice(&std::fs::read(repo().join("docs/manifest.schema.json")).unwrap())
            .unwrap();
    let defs = &schema["$defs"];
    let tmp = tempfile::tempdir().unwrap();
    let (v1, v2) = (tmp.path().join("v1"), tmp.path().join("v2"));
    for (dir, name, extra) in [(&v1, "app-1a2b3c4d.js", ""), (&v2, "app-5e6f7a8b.js", "x")] {
        std::fs::create_dir_all(dir).unwrap();
        let js: String = (0..400)
            .map(|i| format!("export const f{i} = () => '{i}{extra}';\n"))
            .collect();
        std::fs::write(dir.join(name), js).unwrap();
    }
    bin()
        .arg(&v1)
        .args(["-q", "--no-config"])
        .assert()
        .success();
    bin()
        .arg(&v2)
        .args(["-q", "--no-config", "--base", "/app/", "--dictionary-from"])
        .arg(&v1)
        .assert()
        .success();
    let m = manifest(&v2);
    let base = m["base"].as_str().unwrap();
    let pattern = schema["properties"]["base"]["pattern"].as_str().unwrap();
    assert_eq!((base, pattern), ("/app/", "^/([A-Za-z0-9._~-]+/)+$"));
    assert_eq!(
        m["files"]["app-5e6f7a8b.js"]["use_as_dictionary"],
        "match=\"/app/app-*.js\""
    );
    let a = &m["files"]["app-5e6f7a8b.js"];
    let mut want = required(&defs["asset"]);
    want.extend(["deltas".to_string(), "use_as_dictionary".to_string()]);
    assert_eq!(keys(a), want);
    assert!(keys(a).is_subset(&keys(&defs["asset"]["properties"])));
    let codings = strings(&defs["delta_coding"]["enum"]);
    for d in a["deltas"].as_array().unwrap() {
        assert_eq!(keys(d), required(&defs["delta"]));
        assert!(codings.contains(d["coding"].as_str().unwrap()));
        let dict = d["dictionary"].as_str().unwrap();
        assert!(
            dict.len() == 46 && dict.starts_with(':') && dict.ends_with("=:"),
            "{dict}"
        );
        assert!(is_hex(d["blake3"].as_str().unwrap(), 64));
    }
    assert_eq!(a["use_as_dictionary"], "match=\"/app/app-*.js\"");
}
