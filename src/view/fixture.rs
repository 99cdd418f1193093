//! The release the tests of `view::figures` and `view::html` draw: a page,
//! a changed script with deltas against its last version, an unchanged
//! stylesheet, a png no coding shrinks.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::dictionary::{available_dictionary, sha256};
use crate::model::manifest::{Asset, Delta, Manifest, Variant};
use crate::model::skip::SkipReason;
use crate::view::figures::Earlier;
use base64::Engine;

fn b64(sha: &[u8; 32]) -> String {
    base64::engine::general_purpose::STANDARD.encode(sha)
}

fn asset(content: &str, size: u64, variants: &[(&str, u64)]) -> Asset {
    Asset {
        blake3: String::new(),
        cache: Default::default(),
        content_type: "text/javascript".into(),
        deltas: Vec::new(),
        encodings: variants
            .iter()
            .map(|(c, n)| Variant {
                blake3: String::new(),
                coding: c.to_string(),
                etag: String::new(),
                path: String::new(),
                size: *n,
            })
            .collect(),
        etag: String::new(),
        sha256: b64(&sha256(content.as_bytes())),
        size,
        skipped: BTreeMap::new(),
        skipped_deltas: Vec::new(),
        use_as_dictionary: None,
    }
}

fn delta(against: &str, coding: &str, size: u64) -> Delta {
    Delta {
        blake3: String::new(),
        coding: coding.into(),
        dictionary: available_dictionary(&sha256(against.as_bytes())),
        dictionary_path: String::new(),
        etag: String::new(),
        path: String::new(),
        size,
    }
}

/// A release of three assets: a page, a changed script with deltas
/// against its last version, an unchanged stylesheet.
pub(crate) fn release() -> (Manifest, BTreeMap<String, BTreeSet<String>>, Vec<Earlier>) {
    let mut m = Manifest::new(BTreeMap::new());
    m.files.insert(
        "index.html".into(),
        asset("<html>", 2000, &[("br", 500), ("gzip", 600), ("zstd", 550)]),
    );
    let mut js = asset(
        "js v2",
        10_000,
        &[("br", 3000), ("gzip", 3500), ("zstd", 3200)],
    );
    js.deltas = vec![delta("js v1", "dcb", 400), delta("js v1", "dcz", 450)];
    js.skipped_deltas = vec![crate::model::manifest::SkippedDelta {
        coding: "dcz".into(),
        dictionary: available_dictionary(&sha256(b"js v0")),
        reason: SkipReason::NotSmaller,
    }];
    m.files.insert("a.js".into(), js);
    let mut png = asset("png", 5000, &[]);
    png.skipped.insert("br".into(), SkipReason::ExcludedType);
    m.files.insert("b.png".into(), png);
    m.files
        .insert("c.css".into(), asset("css", 4000, &[("br", 1000)]));
    let loads = BTreeMap::from([(
        "index.html".to_string(),
        BTreeSet::from(["index.html", "a.js", "c.css"].map(String::from)),
    )]);
    let earlier = vec![Earlier {
        label: "release -1".into(),
        about: Some("recorded Thu, 03 Dec 2026 10:00:00 GMT, commit 0123456789ab".into()),
        files: BTreeMap::from([
            ("a.js".to_string(), sha256(b"js v1")),
            ("c.css".to_string(), sha256(b"css")),
        ]),
    }];
    (m, loads, earlier)
}
