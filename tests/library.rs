//! The library as a Rust caller uses it: `run` with a `Config`, a `Report`
//! whose errors are typed (a caller can tell a corrupt variant from an I/O
//! failure), and the settings refused by `run` itself, not only by the CLI.

use precompressor::{Config, Error, ErrorKind, NoProgress};

fn site() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("app.js"), "console.log('x');\n".repeat(200)).unwrap();
    std::fs::write(
        tmp.path().join("site.css"),
        "body { margin: 0 }\n".repeat(200),
    )
    .unwrap();
    tmp
}

#[test]
fn a_corrupt_variant_is_a_typed_foreign_error_and_the_other_files_are_done() {
    let tmp = site();
    // A .gz the bundler left that does not decode to its source.
    std::fs::write(tmp.path().join("app.js.gz"), b"not gzip at all").unwrap();
    let report = precompressor::run(&Config::new(tmp.path()), &NoProgress).unwrap();
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    let e = &report.errors[0];
    assert_eq!(e.kind, ErrorKind::Foreign);
    assert!(matches!(&*e.error, Error::Foreign { path, .. } if path.ends_with("app.js.gz")));
    assert_eq!(e.io, None);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["errors"][0]["kind"], "foreign");
    // The other asset got its variants, and the manifest in memory is the one on disk.
    assert!(tmp.path().join("site.css.br").exists());
    let on_disk = precompressor::Manifest::read(&report.manifest).unwrap();
    assert_eq!(report.written, on_disk);
    assert!(report.written.files["site.css"].encodings.len() == 3);
    assert!(!report.ok());
}

#[test]
fn an_unwritable_folder_is_a_typed_write_error_with_its_io_kind() {
    let tmp = site();
    // A folder where the manifest's temporary file would go is a file: not writable as a folder.
    let mut cfg = Config::new(tmp.path());
    cfg.manifest = Some(tmp.path().join("app.js").join("manifest.json"));
    let err = precompressor::run(&cfg, &NoProgress).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Write, "{err}");
    assert!(err.io_kind().is_some(), "{err}");
    assert!(err.to_string().contains("app.js"), "{err}");
}

#[test]
fn run_itself_refuses_out_of_range_levels() {
    let tmp = site();
    let mut cfg = Config::new(tmp.path());
    cfg.levels.brotli_quality = 12;
    let err = precompressor::run(&cfg, &NoProgress).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    assert!(err.to_string().contains("brotli quality"), "{err}");
    assert!(!tmp.path().join("app.js.br").exists());
}
