//! The e2e tier of `tests/deltas.rs`, for the shared corpus
//! (`corpus()` in tests/common): every script and stylesheet of it edited a
//! little between two releases gets a delta Google's brotli decoder reads.
//! Needs the corpus; `cargo test -- --include-ignored` runs it (`bash .ci/run`
//! builds it).

mod serve_util;

use predicates::str::contains;
use serve_util::deltas::{bin, check};
use serve_util::manifest;

/// Every script and stylesheet of the corpus as release 1, the same with a
/// line added as release 2: each gets a dcb that Google's decoder reads with
/// its dictionary (the run checks every one before writing it, and `check`
/// decodes them again). A file copied whole from its dictionary once made a
/// stream only rust-brotli could read: its references into the dictionary
/// entered the distance cache, which the C decoder's do not.
#[test]
#[ignore = "e2e tier: needs the shared corpus; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn every_corpus_script_edited_a_little_gets_a_dcb_the_c_decoder_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let (v1, v2) = (tmp.path().join("v1"), tmp.path().join("v2"));
    let mut paired = 0;
    let small = serve_util::common::corpus().join("small");
    for e in walkdir::WalkDir::new(&small).sort_by_file_name() {
        let e = e.unwrap();
        let p = e.path();
        let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
        let (tail, ext) = match ext {
            "js" => ("//x\n", "js"),
            "css" => ("/*x*/\n", "css"),
            _ => continue,
        };
        let old = std::fs::read(p).unwrap();
        if old.len() < 4096 {
            continue;
        }
        let stem = format!("f{paired:03}");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::create_dir_all(&v2).unwrap();
        std::fs::write(v1.join(format!("{stem}-1a2b3c4d.{ext}")), &old).unwrap();
        let mut new = old.clone();
        new.extend_from_slice(tail.as_bytes());
        std::fs::write(v2.join(format!("{stem}-9f8e7d6c.{ext}")), new).unwrap();
        paired += 1;
    }
    assert!(
        paired >= 10,
        "only {paired} scripts and stylesheets in the corpus"
    );
    bin()
        .arg(&v2)
        .args([
            "-q",
            "--formats",
            "br",
            "--brotli-quality",
            "9",
            "--delta-formats",
            "dcb",
        ])
        .arg("--dictionary-from")
        .arg(&v1)
        .assert()
        .success();
    let m = manifest(&v2);
    let deltas: usize = m["files"]
        .as_object()
        .unwrap()
        .values()
        .map(|a| a["deltas"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(deltas, paired, "{m:#}");
    check()
        .arg(&v2)
        .arg("--dictionary-from")
        .arg(&v1)
        .assert()
        .success()
        .stdout(contains(format!(
            "{paired} deltas verified, {paired} of them decoded with their dictionary"
        )));
}
