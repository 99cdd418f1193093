//! Runs on the shared real-world corpus (`.ci/corpus/fetch.sh`): every
//! variant must decode to exactly its source with the crates' decoders and with
//! the system CLIs.

mod common;

use std::fs;

use common::*;

#[test]
#[ignore = "e2e tier: needs the shared corpus and the brotli and zstd CLIs; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn small_corpus_variants_decode_with_crate_and_system_decoders() {
    let (_g, dir) = copy_tree(&corpus().join("small"));
    let before = snapshot(&dir);
    bin().arg(&dir).arg("-q").assert().success();
    let n = verify_tree(&dir, &|coding, path, bytes| {
        let via_crate = crate_decode(coding, bytes);
        let via_cli = system_decode(coding, path);
        assert!(
            via_crate == via_cli,
            "{}: crate and CLI decoders disagree",
            path.display()
        );
        via_crate
    });
    assert!(n > 100, "only {n} variants checked");
    let after = snapshot(&dir);
    for (rel, bytes) in &before {
        assert!(after.get(rel) == Some(bytes), "source {rel} changed");
    }
}

#[test]
#[ignore = "e2e tier: needs the shared corpus and the brotli and zstd CLIs; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn a_real_11_mib_wasm_gets_a_zst_that_decodes_within_an_8_mib_window() {
    let wasm = corpus().join("large/assets/wasm/esbuild.wasm");
    let size = fs::metadata(&wasm).unwrap().len();
    assert!(size > 8 << 20, "fixture must exceed 8 MiB, is {size}");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dist");
    fs::create_dir_all(&dir).unwrap();
    fs::copy(&wasm, dir.join("esbuild.wasm")).unwrap();
    bin()
        .arg(&dir)
        .args(["--formats", "zstd", "-q"])
        .assert()
        .success();
    let zst = dir.join("esbuild.wasm.zst");
    let window = precompressor::encode::frame_window_size(&fs::read(&zst).unwrap()).unwrap();
    assert!(window <= 8 << 20, "declared window {window}");
    // `system_decode` runs `zstd -d --memory=8MB`.
    assert!(system_decode("zstd", &zst) == fs::read(dir.join("esbuild.wasm")).unwrap());
}

#[test]
#[ignore = "e2e tier: needs the shared corpus and the brotli and zstd CLIs; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn a_file_split_into_brotli_parts_gives_the_same_bytes_on_1_and_2_threads_and_decodes_with_the_cli()
{
    // typescript.js (9.1 MB) is over the split threshold: its brotli job runs as
    // parts on separate workers and the parts are joined into one stream.
    let wasm = corpus().join("large/assets/js/typescript.js");
    let len = fs::metadata(&wasm).unwrap().len() as usize;
    let kind = precompressor::encode::ContentKind::Text;
    assert!(precompressor::encode::brotli_split::parts_for(len, kind) > 1);
    let mut outs = Vec::new();
    for threads in ["1", "2"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("dist");
        fs::create_dir_all(&dir).unwrap();
        fs::copy(&wasm, dir.join("typescript.js")).unwrap();
        // Quality 9 keeps the test quick; the split does not depend on quality.
        let out = bin()
            .arg(&dir)
            .args([
                "--formats",
                "br",
                "--brotli-quality",
                "9",
                "--json",
                "-j",
                threads,
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            report["jobs"].as_array().unwrap().len(),
            precompressor::encode::brotli_split::parts_for(len, kind),
            "one job per part"
        );
        let br = dir.join("typescript.js.br");
        assert!(
            system_decode("br", &br) == fs::read(&wasm).unwrap(),
            "brotli -d must decode the joined stream"
        );
        outs.push(fs::read(&br).unwrap());
        // The whole-file encoder (used when the cache is consulted) gives the same bytes.
        if threads == "1" {
            let mut enc = precompressor::encode::BrotliEncoder::new(9);
            let mut whole = Vec::new();
            precompressor::encode::Encoder::encode(
                &mut enc,
                &fs::read(&wasm).unwrap(),
                kind,
                &mut whole,
            )
            .unwrap();
            assert!(
                whole == outs[0],
                "split jobs and the whole-file encoder disagree"
            );
        }
    }
    assert!(outs[0] == outs[1], "1 and 2 threads gave different bytes");
}

#[test]
#[ignore = "e2e tier: needs the shared corpus and the brotli and zstd CLIs; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn a_source_over_the_mapping_threshold_is_split_and_encoded_from_the_mapping_with_the_same_bytes_on_1_and_2_threads(
) {
    // Just over MAP_MIN: jobs read it through a mapping instead of a buffer each.
    let len = precompressor::config::limits::MAP_MIN as usize + 12_345;
    let mut text = Vec::with_capacity(len);
    let mut i = 0u64;
    while text.len() < len {
        // Varied enough that brotli and zstd have real work, deterministic.
        i = i
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        text.extend_from_slice(format!("export const v{} = {};\n", i >> 52, i >> 40).as_bytes());
    }
    text.truncate(len);
    let kind = precompressor::encode::ContentKind::Text;
    assert!(precompressor::encode::brotli_split::parts_for(len, kind) > 1);
    let mut trees = Vec::new();
    for threads in ["1", "2"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("dist");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("big.js"), &text).unwrap();
        // Low levels keep it quick; the mapping and the split do not depend on them.
        bin()
            .arg(&dir)
            .args(["--formats", "br,zstd,gzip", "--brotli-quality", "2"])
            .args(["--zstd-level", "1", "-q", "-j", threads])
            .assert()
            .success();
        for (suffix, coding) in [("br", "br"), ("zst", "zstd"), ("gz", "gzip")] {
            let variant = dir.join(format!("big.js.{suffix}"));
            assert!(
                system_decode(coding, &variant) == text,
                "{coding} on {threads} threads does not decode to the source"
            );
        }
        assert!(
            fs::read(dir.join("big.js")).unwrap() == text,
            "source changed"
        );
        trees.push(snapshot(&dir));
    }
    assert!(trees[0] == trees[1], "1 and 2 threads gave different bytes");
}

#[test]
#[ignore = "e2e tier: needs the shared corpus and the brotli and zstd CLIs; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn brotli_variants_of_text_files_are_byte_identical_to_the_brotli_cli_at_q11() {
    // Whole files go through the C reference encoder with the CLI's settings
    // (fitted window, size hint); text mode makes no difference to its bytes.
    let (_g, dir) = copy_tree(&corpus().join("small"));
    bin()
        .arg(&dir)
        .args(["-q", "--formats", "br"])
        .assert()
        .success();
    let mut checked = 0;
    for e in walkdir::WalkDir::new(&dir) {
        let p = e.unwrap().into_path();
        let Some(src) = p.to_str().and_then(|s| s.strip_suffix(".br")) else {
            continue;
        };
        let text = [".js", ".mjs", ".css", ".html", ".svg", ".json"];
        if !text.iter().any(|x| src.ends_with(x)) {
            continue;
        }
        let cli = std::process::Command::new("brotli")
            .args(["-q", "11", "-c", src])
            .output()
            .expect("brotli CLI");
        assert!(cli.status.success());
        assert!(
            fs::read(&p).unwrap() == cli.stdout,
            "{}: differs from brotli -q 11",
            p.display()
        );
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} text files checked");
}
