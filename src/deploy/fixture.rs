//! Manifests built from a few literals, for the unit tests of the generated
//! configurations (nginx, Caddy, objects and the CloudFront Functions).

use std::path::Path;

use crate::model::coding::{Codec, DeltaCoding};
use crate::model::dictionary::available_dictionary;
use crate::model::names::{delta_path, variant_path};
use crate::serve::Index;

/// An asset: key, deltas as (coding, dictionary byte, size), use_as_dictionary.
pub type Asset<'a> = (&'a str, &'a [(&'a str, u8, u64)], Option<&'a str>);

/// A manifest with `assets`; `content_type` for all of them.
pub fn index_typed(assets: &[Asset], content_type: &str) -> Index {
    let files: Vec<String> = assets
        .iter()
        .map(|(key, deltas, dict)| {
            let deltas: Vec<String> = deltas
                .iter()
                .map(|(coding, d, size)| {
                    let h = [*d; 32];
                    format!(
                        r#"{{"blake3": "00", "coding": "{coding}", "dictionary": "{}", "dictionary_path": "old.js", "etag": "\"{coding}{d}\"", "path": {}, "size": {size}}}"#,
                        available_dictionary(&h),
                        serde_json::to_string(&delta_path(key, &h, DeltaCoding::parse(coding).unwrap()))
                            .unwrap()
                    )
                })
                .collect();
            let marked = dict.is_some();
            let dict = dict.map_or(String::new(), |u| {
                format!(r#", "use_as_dictionary": {}"#, serde_json::to_string(u).unwrap())
            });
            format!(
                r#"{}: {{"blake3": "00", "cache": {}, "content_type": {}, "deltas": [{}], "encodings": [], "etag": "\"id\"", "sha256": "x", "size": 1000, "skipped": {{}}{dict}}}"#,
                serde_json::to_string(key).unwrap(),
                cache_of(key, marked),
                serde_json::to_string(content_type).unwrap(),
                deltas.join(",")
            )
        })
        .collect();
    let json = format!(
        r#"{{"version": 1, "generator": "t", "settings": {{}}, "files": {{ {} }} }}"#,
        files.join(",")
    );
    Index::from_json(Path::new("m.json"), &json).unwrap()
}

/// The `cache` the run writes for `key` (model::manifest::Caching), as JSON:
/// a `marked` HTML page is a page.
fn cache_of(key: &str, marked: bool) -> String {
    serde_json::to_string(&crate::model::manifest::Caching::of(key, marked)).unwrap()
}

pub fn index(assets: &[Asset]) -> Index {
    index_typed(assets, "text/javascript; charset=utf-8")
}

/// A manifest of text files at `keys`, each with one gzip variant at its own
/// name (`KEY.gz`): names that test what a configuration can hold.
pub fn gzip_only(keys: &[&str]) -> Index {
    let files: Vec<String> = keys
        .iter()
        .enumerate()
        .map(|(n, key)| {
            format!(
                r#"{k}: {{"blake3": "00", "cache": {c}, "content_type": "text/plain", "etag": "\"i{n}\"", "sha256": "x", "size": 300, "skipped": {{}},
                  "encodings": [{{"coding": "gzip", "path": {gz}, "size": 120, "blake3": "00", "etag": "\"g{n}\""}}]}}"#,
                k = serde_json::to_string(key).unwrap(),
                c = cache_of(key, false),
                gz = serde_json::to_string(&variant_path(key, Codec::Gzip)).unwrap(),
            )
        })
        .collect();
    let json = format!(
        r#"{{"version": 1, "generator": "t", "settings": {{}}, "files": {{ {} }} }}"#,
        files.join(",")
    );
    Index::from_json(Path::new("m.json"), &json).unwrap()
}
