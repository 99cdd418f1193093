//! What the deployed-deltas tests of both tiers share (`tests/field.rs`,
//! `tests/field_servers.rs`): a quiet run, a SvelteKit-like release, `check`
//! with the release store, and the coding a client holding a dictionary gets.

use std::path::Path;

use super::{precompress, request};

/// `precompress --no-config -q` and `args`.
pub fn run(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let mut all: Vec<&std::ffi::OsStr> = vec!["--no-config".as_ref(), "-q".as_ref()];
    all.extend_from_slice(args);
    precompress(&all)
}

/// Fails, with its stderr, unless the run succeeded.
pub fn ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "precompress failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `Available-Dictionary` value a client holding `bytes` sends.
pub fn available(bytes: &[u8]) -> String {
    let sha: [u8; 32] =
        sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(bytes)).into();
    precompressor::dictionary::available_dictionary(&sha)
}

/// A SvelteKit-like release `n`: chunks named by their hash only (the first
/// imports nothing, the others import it) and a page. Release 2 changes a
/// few lines of one chunk (so its name changes).
pub fn hash_only_release(dir: &Path, n: usize) -> Vec<String> {
    let _ = std::fs::remove_dir_all(dir);
    let chunks = [
        "_app/immutable/chunks/Bx7kQ2pA.js",
        "_app/immutable/chunks/D4qLm9Zr.js",
    ];
    let changed = if n == 1 {
        "_app/immutable/chunks/Cc3nT8vW.js"
    } else {
        "_app/immutable/chunks/Ek5yR1sU.js"
    };
    let mut names = Vec::new();
    for (i, name) in chunks.iter().chain([&changed]).enumerate() {
        let mut js = String::new();
        if i > 0 {
            js.push_str("import{c0_0}from\"./Bx7kQ2pA.js\";\n");
        }
        for f in 0..120 {
            let tweak = if i == 2 && n == 2 && f % 40 == 7 {
                " + 2"
            } else {
                ""
            };
            // Varied text, as real code is: a hash per line.
            let word = blake3::hash(format!("{i}-{f}").as_bytes()).to_hex()[..12].to_string();
            js.push_str(&format!("export function c{i}_{f}(s) {{ return s.items.filter((x) => x.id > {f}{tweak}).map((x) => x.label + '{word}'); }}\n"));
        }
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, js).unwrap();
        names.push(name.to_string());
    }
    std::fs::write(
        dir.join("index.html"),
        format!(
            "<!doctype html><title>r{n}</title><script type=module src=\"/{changed}\"></script>\n"
        ),
    )
    .unwrap();
    names
}

/// `precompress check DIR` with the release store in `cache` (as the run had it): passes.
pub fn check_with_store(dir: &Path, cache: &Path) {
    ok(
        &std::process::Command::new(assert_cmd::cargo::cargo_bin("precompress"))
            .arg("check")
            .arg(dir)
            .env("PRECOMPRESS_CACHE_DIR", cache)
            .output()
            .unwrap(),
    );
}

/// The `Content-Encoding` of the asset at `url` for a client that holds the
/// dictionary `dict` (an `Available-Dictionary` value) and accepts deltas.
pub fn delta_coding(addr: std::net::SocketAddr, url: &str, dict: &str) -> String {
    let r = request(
        addr,
        "GET",
        url,
        &[
            ("Accept-Encoding", "br, dcb, dcz"),
            ("Available-Dictionary", dict),
        ],
    );
    r.header("content-encoding").unwrap_or("-").to_string()
}
