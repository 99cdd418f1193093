//! The CloudFront Functions of `precompress objects DIR --edge cloudfront`
//! (viewer request) and `--edge cloudfront-response` (viewer response), in
//! front of the bucket [`super::objects`] fills. Their code is two JavaScript
//! files beside this one, `cloudfront-request.js` and
//! `cloudfront-response.js`, which `node --test` runs
//! (npm/precompressor/test/cloudfront.test.js) against the rule tables of
//! `fixtures/`; this file embeds them, writes the request function's routing
//! data for one release, and refuses a function over CloudFront's 10 KB.
//!
//! The request function ports [`negotiate`](crate::serve::negotiate) and the
//! routing of [`crate::serve::route`] line for line in ES5 syntax (the runtime
//! documents `const`, arrow functions and more, but a function that uses none
//! of them cannot fail on the edge for using one); `Buffer` is the runtime's.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::objects::{Listing, ObjectsError, NOT_FOUND_PAGE};
use crate::model::coding::{Codec, DeltaCoding};
use crate::model::dictionary::available_dictionary;

/// CloudFront Functions' quota on a function's code: 10 KB, not adjustable.
pub const CLOUDFRONT_FUNCTION_LIMIT: usize = 10 * 1024;

/// The viewer-request function: `{version}` in its header, and its
/// `/*DATA*/` line replaced by this release's routes ([`routing_data`]).
const REQUEST_JS: &str = include_str!("cloudfront-request.js");

/// The viewer-response function: the headers a bucket cannot store, from the
/// object's metadata.
const RESPONSE_JS: &str = include_str!("cloudfront-response.js");

/// The viewer-request CloudFront Function (runtime `cloudfront-js-2.0`) for
/// `listing`, or [`ObjectsError::TooLarge`] (naming `origin`) when it would
/// not fit in [`CLOUDFRONT_FUNCTION_LIMIT`].
pub fn viewer_request(listing: &Listing, origin: &Path) -> Result<String, ObjectsError> {
    let source = compact(REQUEST_JS)
        .replace("{version}", env!("CARGO_PKG_VERSION"))
        .replace("/*DATA*/\n", &routing_data(listing));
    if source.len() > CLOUDFRONT_FUNCTION_LIMIT {
        return Err(ObjectsError::TooLarge {
            path: origin.to_path_buf(),
            size: source.len(),
            limit: CLOUDFRONT_FUNCTION_LIMIT,
            routes: listing.routes.len(),
        });
    }
    Ok(source)
}

/// The viewer-response CloudFront Function: the same for every site.
pub fn viewer_response() -> String {
    compact(RESPONSE_JS).replace("{version}", env!("CARGO_PKG_VERSION"))
}

/// `js` without its indentation, blank lines and comments but the header:
/// every byte of code is one less for the routes under the 10 KB.
fn compact(js: &str) -> String {
    let mut out = String::with_capacity(js.len());
    let mut header = true;
    for line in js.lines() {
        header &= line.starts_with("//");
        let code = line.trim_start();
        if header || !(code.is_empty() || code.starts_with("//")) {
            out.push_str(if header { line } else { code });
            out.push('\n');
        }
    }
    out
}

/// The `var` lines the request function starts with: `B` the base, `M` the
/// manifest's key (or null), `P` the 404 page, `N` the code dictionary
/// answered 204 to a request holding no dictionary (or null), `D` the dictionaries (as
/// `Available-Dictionary` sends them), `A` the routes by folder.
///
/// A route is `"RANK TOKEN…"`: the sizes of all of an asset's
/// representations replaced by their rank among them (0 the smallest, equal
/// sizes equal ranks), since negotiation only compares them; the identity's
/// rank, then `b3` (br, rank 3), `z1` (zstd), `g4` (gzip) in the index's
/// order, then `0b0` (dcb against dictionary `D[0]`), `0z0` (dcz). A folder's
/// routes are an array of name, route, name, route, …: no object key can be a
/// name like `__proto__`.
fn routing_data(listing: &Listing) -> String {
    let mut dictionaries: Vec<[u8; 32]> = Vec::new();
    let mut folders: BTreeMap<&str, Vec<(&str, String)>> = BTreeMap::new();
    for r in &listing.routes {
        let mut sizes: Vec<u64> = std::iter::once(r.identity)
            .chain(r.variants.iter().map(|v| v.1))
            .chain(r.deltas.iter().map(|d| d.2))
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        let rank = |s: u64| sizes.binary_search(&s).unwrap_or(0);
        let mut value = rank(r.identity).to_string();
        for (codec, size) in &r.variants {
            let letter = match codec {
                Codec::Brotli => 'b',
                Codec::Zstd => 'z',
                Codec::Gzip => 'g',
            };
            let _ = write!(value, " {letter}{}", rank(*size));
        }
        for (hash, coding, size) in &r.deltas {
            let i = dictionaries
                .iter()
                .position(|d| d == hash)
                .unwrap_or_else(|| {
                    dictionaries.push(*hash);
                    dictionaries.len() - 1
                });
            let letter = match coding {
                DeltaCoding::Dcb => 'b',
                DeltaCoding::Dcz => 'z',
            };
            let _ = write!(value, " {i}{letter}{}", rank(*size));
        }
        let (folder, name) = match r.key.rfind('/') {
            Some(i) => r.key.split_at(i + 1),
            None => ("", r.key.as_str()),
        };
        folders.entry(folder).or_default().push((name, value));
    }
    let list = |items: Vec<String>| items.join(",");
    let d = list(
        dictionaries
            .iter()
            .map(|h| js_str(&available_dictionary(h)))
            .collect(),
    );
    let a = list(
        folders
            .iter()
            .map(|(folder, routes)| {
                let pairs: Vec<String> = routes
                    .iter()
                    .flat_map(|(n, v)| [js_str(n), js_str(v)])
                    .collect();
                format!("{}:[{}]", js_str(folder), pairs.join(","))
            })
            .collect(),
    );
    let m = listing.manifest.as_deref().map_or("null".into(), js_str);
    let n = listing
        .routes
        .iter()
        .find(|r| r.deferred)
        .map_or("null".into(), |r| js_str(&r.key));
    format!(
        "var B = {}, M = {m}, P = {}, N = {n};\nvar D = [{d}];\nvar A = {{{a}}};\n",
        js_str(&listing.base),
        js_str(NOT_FOUND_PAGE)
    )
}

/// A JavaScript string literal that is ASCII: the runtime is ES5.1 at heart,
/// where U+2028 in a literal is a syntax error, and bytes count toward 10 KB.
fn js_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            ' '..='~' => o.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(o, "\\u{u:04x}");
                }
            }
        }
    }
    o.push('"');
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy::fixture;
    use crate::deploy::objects::{plan, Route, Scan};

    const APP: &str = "assets/app-5e6f7a8b.js";

    /// A scan holding every file `index` describes, at the manifest's sizes.
    fn scan_of(index: &crate::serve::Index) -> Scan {
        crate::deploy::objects::tests::scan_of(index)
    }

    #[test]
    fn routes_rank_sizes_and_share_dictionaries() {
        let listing = Listing {
            objects: Vec::new(),
            routes: vec![
                Route {
                    key: "a/x.js".into(),
                    identity: 1000,
                    variants: vec![
                        (Codec::Zstd, 243),
                        (Codec::Brotli, 265),
                        (Codec::Gzip, 1000),
                    ],
                    deltas: vec![
                        ([1; 32], DeltaCoding::Dcb, 67),
                        ([1; 32], DeltaCoding::Dcz, 67),
                    ],
                    deferred: false,
                },
                Route {
                    key: "index.html".into(),
                    identity: 50,
                    variants: Vec::new(),
                    deltas: vec![([2; 32], DeltaCoding::Dcz, 9)],
                    deferred: false,
                },
            ],
            skipped: Vec::new(),
            manifest: Some("precompress-manifest.json".into()),
            base: "/".into(),
        };
        let d = routing_data(&listing);
        assert_eq!(
            d,
            format!(
                "var B = \"/\", M = \"precompress-manifest.json\", P = \"404.html\", N = null;\n\
                 var D = [\"{}\",\"{}\"];\n\
                 var A = {{\"\":[\"index.html\",\"1 1z0\"],\"a/\":[\"x.js\",\"3 z1 b2 g3 0b0 0z0\"]}};\n",
                available_dictionary(&[1; 32]),
                available_dictionary(&[2; 32])
            )
        );
    }

    #[test]
    fn the_functions_are_es5_and_small() {
        let idx = fixture::index(&[(APP, &[("dcb", 1, 90)], Some(r#"match="/assets/app-*.js""#))]);
        let l = plan(&idx, &scan_of(&idx), Some("precompress-manifest.json"));
        let f = viewer_request(&l, Path::new("dist")).unwrap();
        let g = viewer_response();
        for src in [&f, &g] {
            assert!(src.is_ascii());
            assert!(src.contains("function handler("));
            for modern in ["=>", "?.", "??", "...", "const ", "let ", "class "] {
                assert!(!src.contains(modern), "{modern} in\n{src}");
            }
        }
        assert!(!f.contains("/*DATA*/") && !f.contains("{version}"));
        assert!(f.len() < 5000, "{} bytes", f.len());
    }

    #[test]
    fn a_function_over_10_kb_is_refused_naming_the_folder() {
        let many: Vec<String> = (0..300)
            .map(|i| format!("pages/a-rather-long-page-name-{i}.html"))
            .collect();
        let assets: Vec<fixture::Asset> =
            many.iter().map(|k| (k.as_str(), &[][..], None)).collect();
        let idx = fixture::index_typed(&assets, "text/html; charset=utf-8");
        let l = plan(&idx, &scan_of(&idx), None);
        let e = viewer_request(&l, Path::new("dist")).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("dist: the CloudFront Function for its 300 negotiated files would be "),
            "{msg}"
        );
        assert!(
            msg.contains("over CloudFront Functions' 10 KB limit (10240 bytes)"),
            "{msg}"
        );
    }

    #[test]
    fn string_literals_are_ascii() {
        assert_eq!(js_str("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(js_str("café\u{2028}😀"), r#""caf\u00e9\u2028\ud83d\ude00""#);
    }
}
