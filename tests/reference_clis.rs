//! The e2e tier's reference decoders: what precompress writes, read by the
//! system's `brotli` and `zstd` CLIs (Google's and Meta's own tools) rather
//! than the crates the fast tier decodes with: every variant of the example
//! site, a zstd frame whose window is too large for a browser, the deltas of
//! two releases, and a cache entry `brotli -q 1` wrote. Needs the brotli and
//! zstd CLIs; `cargo test -- --include-ignored` runs them (`bash .ci/run`
//! installs them). The fast tiers of the same subjects are `tests/cli.rs`,
//! `tests/check.rs`, `tests/deltas.rs` and `tests/own_files.rs`.

mod serve_util;

use std::fs;
use std::process::Command;

use predicates::str::contains;
use serve_util::common::{bin, check_json, kinds, quick, site, system_decode, verify_tree};
use serve_util::deltas::{check, releases, sf, sha256, with_previous};
use serve_util::{manifest, precompressed_site};

#[test]
#[ignore = "e2e tier: needs the brotli and zstd CLIs; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn every_variant_decodes_with_the_system_clis() {
    let (_g, dir) = site();
    bin().arg(&dir).assert().success();
    let n = verify_tree(&dir, &|coding, path, _| system_decode(coding, path));
    assert_eq!(n, 24);
}

#[test]
#[ignore = "e2e tier: needs the zstd CLI; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn a_zstd_frame_with_a_window_over_8_mib_is_reported() {
    let (_g, dir) = precompressed_site();
    // zstd reading stdin does not know the size, so --long=25 declares a 32 MiB window.
    let src = fs::read(dir.join("data/products.json")).unwrap();
    let mut child = std::process::Command::new("zstd")
        .args(["-q", "-c", "--long=25", "-3"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("zstd CLI (bash .ci/run installs it)");
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &src).unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(precompressor::encode::frame_window_size(&out.stdout).unwrap() > 8 << 20);
    fs::write(dir.join("data/products.json.zst"), &out.stdout).unwrap();
    let (code, r) = check_json(&dir);
    assert_eq!(code, 1);
    assert!(
        kinds(&r).contains(&(
            "data/products.json.zst".to_string(),
            "zstd_window".to_string()
        )),
        "{r}"
    );
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
#[ignore = "e2e tier: needs the zstd CLI; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn deltas_are_written_listed_and_decode_with_independent_decoders() {
    let r = releases();
    let old = std::fs::read(r.v1.join(r.old)).unwrap();
    let new = std::fs::read(r.v2.join(r.new)).unwrap();
    let m1 = manifest(&r.v1);
    assert_eq!(
        m1["files"][r.old]["use_as_dictionary"],
        "match=\"/assets/app-*.js\""
    );
    assert_eq!(m1["files"]["index.html"].get("use_as_dictionary"), None);

    with_previous(&r)
        .assert()
        .success()
        .stdout(contains("dcb "));
    let m = manifest(&r.v2);
    let a = &m["files"][r.new];
    let br = a["encodings"][0]["size"].as_u64().unwrap();
    let deltas = a["deltas"].as_array().unwrap();
    assert_eq!(deltas.len(), 2, "{a:#}");
    for (d, coding) in deltas.iter().zip(["dcb", "dcz"]) {
        assert_eq!(d["coding"], coding);
        assert_eq!(d["dictionary"], sf(&sha256(&old)));
        assert_eq!(d["dictionary_path"], r.old);
        let path = format!("{}.{}.{coding}", r.new, hex(&sha256(&old)));
        assert_eq!(d["path"], path.as_str());
        let bytes = std::fs::read(r.v2.join(&path)).unwrap();
        assert_eq!(bytes.len() as u64, d["size"].as_u64().unwrap());
        assert!(
            bytes.len() as u64 * 10 < br,
            "{coding}: {} bytes, br {br}",
            bytes.len()
        );
        let decoded = match coding {
            "dcz" => {
                // The reference CLI, once the 40-byte header is cut.
                assert_eq!(bytes[..8], [0x5E, 0x2A, 0x4D, 0x18, 0x20, 0, 0, 0]);
                assert_eq!(bytes[8..40], sha256(&old));
                let frame = r.v2.join("frame.zst");
                std::fs::write(&frame, &bytes[40..]).unwrap();
                let out = std::process::Command::new("zstd")
                    .args(["-d", "-c", "-q", "-D"])
                    .arg(r.v1.join(r.old))
                    .arg(&frame)
                    .output()
                    .expect("zstd CLI (bash .ci/run installs it)");
                std::fs::remove_file(&frame).unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                out.stdout
            }
            _ => {
                assert_eq!(bytes[..4], [0xFF, 0x44, 0x43, 0x42]);
                assert_eq!(bytes[4..36], sha256(&old));
                let mut out = Vec::new();
                brotli_decompressor::BrotliDecompressCustomDict(
                    &mut &bytes[36..],
                    &mut out,
                    &mut [0u8; 4096],
                    &mut [0u8; 4096],
                    old.clone(),
                )
                .unwrap();
                out
            }
        };
        assert!(decoded == new, "{coding} does not decode to the new script");
    }
    assert_eq!(a["use_as_dictionary"], "match=\"/assets/app-*.js\"");
    // Nothing for what did not change or is not a dictionary.
    assert_eq!(m["files"]["index.html"].get("deltas"), None);

    check()
        .arg(&r.v2)
        .arg("--dictionary-from")
        .arg(&r.v1)
        .assert()
        .success()
        .stdout(contains(
            "2 deltas verified, 2 of them decoded with their dictionary",
        ));
}

#[test]
#[ignore = "e2e tier: needs the brotli CLI; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn a_cache_entry_replaced_by_a_worse_encoding_or_a_planted_marker_is_not_used() {
    let (tmp, site) = precompressed_site();
    let cache = tmp.path().join("cache");
    let good_br = std::fs::read(site.join("assets/app.js.br")).unwrap();
    quick()
        .arg(&site)
        .args(["-q", "--no-config", "--force", "--cache-dir"])
        .arg(&cache)
        .assert()
        .success();
    // Every .br entry replaced by `brotli -q 1` of the same source (it decodes
    // fine), every .zst entry by an empty "not smaller" marker beside it.
    let q1 = Command::new("brotli")
        .args(["-q", "1", "-c"])
        .arg(site.join("assets/app.js"))
        .output()
        .expect("brotli CLI (bash .ci/run installs it)")
        .stdout;
    for e in walkdir::WalkDir::new(&cache).into_iter().flatten() {
        let p = e.path().to_path_buf();
        match p.extension().and_then(|x| x.to_str()) {
            Some("br") => std::fs::write(&p, &q1).unwrap(),
            Some("zst") => {
                std::fs::remove_file(&p).unwrap();
                std::fs::write(p.with_extension("none"), b"").unwrap();
            }
            _ => {}
        }
    }
    let (_g, fresh) = precompressed_site();
    for v in ["br", "zst", "gz"] {
        let _ = std::fs::remove_file(fresh.join(format!("assets/app.js.{v}")));
    }
    std::fs::remove_file(fresh.join("precompress-manifest.json")).unwrap();
    quick()
        .arg(&fresh)
        .args(["-q", "--no-config", "--cache-dir"])
        .arg(&cache)
        .assert()
        .success();
    assert!(
        std::fs::read(fresh.join("assets/app.js.br")).unwrap() == good_br,
        "the quality-1 entry was copied into DIR"
    );
    assert!(
        fresh.join("assets/app.js.zst").exists(),
        "a planted marker dropped the variant"
    );
}
