//! Runs on the shared real-world corpus (`../shared/corpus/fetch.sh`): every
//! variant must decode to exactly its source with the crates' decoders and with
//! the system CLIs.

mod common;

use std::fs;

use common::*;

#[test]
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
    let window = precompress::encode::frame_window_size(&fs::read(&zst).unwrap()).unwrap();
    assert!(window <= 8 << 20, "declared window {window}");
    // `system_decode` runs `zstd -d --memory=8MB`.
    assert!(system_decode("zstd", &zst) == fs::read(dir.join("esbuild.wasm")).unwrap());
}
