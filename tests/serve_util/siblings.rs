//! One precompressed fixture site asked for by several `Accept-Encoding`
//! headers, as `tests/serve_e2e.rs` asks nginx and Caddy and
//! `tests/serve_siblings.rs` asks `precompress serve`: the coding each server
//! picks from the siblings on disk, the body byte for byte that sibling and
//! decoding to the original, and `Vary` where that server sets it.

use std::path::Path;

use super::{decode, get, manifest, suffix, Server};

/// The headers of the issue, `None` = no Accept-Encoding field.
pub const HEADERS: &[Option<&str>] = &[
    Some("gzip, deflate, br, zstd"),
    Some("gzip"),
    Some("br;q=0, gzip"),
    Some("identity"),
    None,
];

/// Assets of the fixture site, by URL: with variants, under min-size, not compressible.
pub const URLS: &[(&str, &str)] = &[
    ("/", "index.html"),
    ("/assets/app.js", "assets/app.js"),
    ("/assets/style.css", "assets/style.css"),
    ("/assets/add.wasm", "assets/add.wasm"),
    ("/data/products.json", "data/products.json"),
    ("/img/logo.svg", "img/logo.svg"),
    (
        "/assets/tiny-under-min-size.js",
        "assets/tiny-under-min-size.js",
    ),
    ("/img/photo.png", "img/photo.png"),
];

/// Which server, for the expectations that differ.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Kind {
    Nginx,
    Caddy,
    Precompress,
}

pub fn has(site: &Path, rel: &str, coding: &str) -> bool {
    site.join(format!("{rel}.{}", suffix(coding))).is_file()
}

/// The coding `kind` sends for `rel` given `ae`, from the siblings on disk.
pub fn expected(kind: Kind, site: &Path, rel: &str, ae: Option<&str>) -> Option<String> {
    let manifest = manifest(site);
    let offered: Vec<&str> = match kind {
        // brotli_static is consulted before gzip_static; nginx has no zstd.
        Kind::Nginx => vec!["br", "gzip"],
        // The `precompressed` order decides between acceptable codings.
        Kind::Caddy => vec!["zstd", "br", "gzip"],
        // The smallest variant: the manifest lists them smallest first.
        Kind::Precompress => manifest["files"][rel]["encodings"]
            .as_array()
            .map(|a| a.iter().map(|v| v["coding"].as_str().unwrap()).collect())
            .unwrap_or_default(),
    };
    let accepted: &[&str] = match ae {
        Some("gzip, deflate, br, zstd") => &["gzip", "br", "zstd"],
        Some("gzip") | Some("br;q=0, gzip") => &["gzip"],
        _ => &[],
    };
    offered
        .into_iter()
        .find(|c| accepted.contains(c) && has(site, rel, c))
        .map(str::to_string)
}

pub fn check_server(kind: Kind, server: &Server, site: &Path) -> usize {
    let manifest = manifest(site);
    let mut checked = 0;
    for &(url, rel) in URLS {
        let original = std::fs::read(site.join(rel)).unwrap();
        let any_variant = ["br", "zstd", "gzip"].iter().any(|c| has(site, rel, c));
        for &ae in HEADERS {
            let what = format!("{} {url} [Accept-Encoding: {ae:?}]", server.name);
            let r = get(server.addr, url, ae);
            assert_eq!(r.status, 200, "{what}: {r:?}");
            let ce = r.header("content-encoding").map(str::to_string);
            assert_eq!(
                ce,
                expected(kind, site, rel, ae),
                "{what}: Content-Encoding"
            );

            // The body is exactly the file that Content-Encoding names...
            let file = match &ce {
                Some(c) => format!("{rel}.{}", suffix(c)),
                None => rel.to_string(),
            };
            let on_disk = std::fs::read(site.join(&file)).unwrap();
            assert!(
                r.body == on_disk,
                "{what}: body is not {file} byte for byte"
            );
            // ...and decodes to the original.
            let decoded = match &ce {
                Some(c) => decode(c, &r.body),
                None => r.body.clone(),
            };
            assert!(decoded == original, "{what}: does not decode to {rel}");

            let vary = r
                .header("vary")
                .is_some_and(|v| v.to_ascii_lowercase().contains("accept-encoding"));
            match kind {
                // Every response of an asset with variants, and no other.
                Kind::Precompress => {
                    assert_eq!(vary, any_variant, "{what}: Vary");
                    let m = &manifest["files"][rel];
                    assert_eq!(
                        r.header("content-type"),
                        m["content_type"].as_str(),
                        "{what}: Content-Type"
                    );
                    let etag = match &ce {
                        None => m["etag"].as_str().unwrap(),
                        Some(c) => m["encodings"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .find(|v| v["coding"] == c.as_str())
                            .unwrap()["etag"]
                            .as_str()
                            .unwrap(),
                    };
                    assert_eq!(r.header("etag"), Some(etag), "{what}: ETag");
                    assert_eq!(
                        r.header("content-length"),
                        Some(r.body.len().to_string().as_str()),
                        "{what}: Content-Length"
                    );
                    assert!(r.header("last-modified").is_some(), "{what}: Last-Modified");
                    assert_eq!(r.header("cache-control"), Some("no-cache"), "{what}");
                }
                // gzip_vary: every response of a file that has x.gz.
                Kind::Nginx => {
                    if has(site, rel, "gzip") {
                        assert!(vary, "{what}: nginx sets Vary on files with .gz");
                    }
                    if !any_variant {
                        assert!(!vary, "{what}: Vary without variants");
                    }
                }
                // Vary on compressed responses only (Caddy 2.6 quirk).
                Kind::Caddy => {
                    if ce.is_some() {
                        assert!(vary, "{what}: Caddy sets Vary on compressed responses");
                    }
                }
            }
            checked += 1;
        }
    }
    checked
}
