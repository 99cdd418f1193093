//! `precompress serve` on the precompressed fixture site: for each
//! `Accept-Encoding` header it sends the smallest acceptable variant byte for
//! byte, with `Vary`, its type, ETag, length and `Cache-Control`. The fast
//! tier of `tests/serve_e2e.rs`, which holds nginx and Caddy to the same
//! site (`serve_util::siblings`).

mod serve_util;

use serve_util::siblings::{check_server, Kind, HEADERS, URLS};
use serve_util::*;

#[test]
fn precompress_serve_sends_the_smallest_acceptable_variant() {
    let (_tmp, site) = precompressed_site();
    let server = start_precompress(&site, &[]);
    let n = check_server(Kind::Precompress, &server, &site);
    assert_eq!(n, URLS.len() * HEADERS.len());
    // The fixture must exercise every coding, or the test proves less than it says.
    let m = manifest(&site);
    for c in ["br", "zstd", "gzip"] {
        assert!(
            m["files"]
                .as_object()
                .unwrap()
                .values()
                .any(|a| a["encodings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|v| v["coding"] == c)),
            "no {c} variant in the fixture"
        );
    }
}
