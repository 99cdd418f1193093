//! The names precompress gives its own files in DIR, which no walk may take
//! for assets and no server may send by their own name: temporary files, and
//! the files beside an asset that hold its variants and deltas
//! ([`sibling_path`]).
//!
//! A manifest is data a server turns into file paths, so the path it lists
//! for a variant or delta is never trusted: a server sends as a
//! representation of `KEY` only `KEY.br`, `KEY.zst`, `KEY.gz`,
//! `KEY.HEX.dcb` or `KEY.HEX.dcz` (HEX the lower-case SHA-256 of the delta's
//! dictionary), the name precompress wrote it under. Anything else (`.env`,
//! `../x`, another asset's variant) is refused when the manifest is loaded
//! (`serve::Index`), and `npm/precompressor/lib/negotiate.js` ports the rule;
//! `fixtures/sibling-names.json` holds both to the same table.

use crate::model::coding::{Codec, DeltaCoding};
use crate::model::dictionary::hex;

// Temporary files are named by `fsutil`, which writes them and sits below
// this vocabulary; the names are re-exported here with the rest.
pub use crate::fsutil::{TMP_PREFIX, TMP_SUFFIX};

/// What a file beside an asset holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sibling<'a> {
    /// The asset in a coding: `KEY.br`, `KEY.zst`, `KEY.gz`.
    Variant(Codec),
    /// A delta against the dictionary with this SHA-256: `KEY.HEX.dcb`, `KEY.HEX.dcz`.
    Delta(&'a [u8; 32], DeltaCoding),
}

/// The one path the file holding `sibling` of the asset at `key` may have:
/// what precompress writes, and all a server may send for it.
pub fn sibling_path(key: &str, sibling: Sibling<'_>) -> String {
    match sibling {
        Sibling::Variant(codec) => variant_path(key, codec),
        Sibling::Delta(dict, coding) => delta_path(key, dict, coding),
    }
}

/// Where the variant of the asset at `key` in `codec` is written: `KEY.br`,
/// `KEY.zst`, `KEY.gz`.
pub fn variant_path(key: &str, codec: Codec) -> String {
    format!("{key}.{}", codec.suffix())
}

/// Where the delta of the asset at `path` against the dictionary with SHA-256
/// `dict` is written: `path.HEX.dcb` (HEX: the 64 hex digits of the hash), so
/// a server can find it from the request's URL and `Available-Dictionary`.
pub fn delta_path(path: &str, dict: &[u8; 32], coding: DeltaCoding) -> String {
    format!("{path}.{}.{}", hex(dict), coding.token())
}

/// The asset a delta's path belongs to, if `path` has the form of
/// [`delta_path`].
pub fn delta_source(path: &str) -> Option<(&str, DeltaCoding)> {
    let (rest, token) = path.rsplit_once('.')?;
    let coding = DeltaCoding::parse(token)?;
    let (source, hash) = rest.rsplit_once('.')?;
    let is_hash = hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    (is_hash && !source.is_empty() && !source.ends_with('/')).then_some((source, coding))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::dictionary::parse_available_dictionary;

    /// `fixtures/sibling-names.json`, also read by `node --test`
    /// (npm/precompressor/test/negotiate.test.js).
    fn table() -> Vec<serde_json::Value> {
        let text = include_str!("../../fixtures/sibling-names.json");
        let t: serde_json::Value = serde_json::from_str(text).unwrap();
        t["cases"].as_array().unwrap().clone()
    }

    #[test]
    fn only_the_name_precompress_writes_is_a_siblings() {
        let cases = table();
        assert!(cases.len() >= 20, "{} rows", cases.len());
        for c in cases {
            let (key, coding, path) = (
                c["key"].as_str().unwrap(),
                c["coding"].as_str().unwrap(),
                c["path"].as_str().unwrap(),
            );
            let dict = c["dictionary"]
                .as_str()
                .map(|d| parse_available_dictionary(d).unwrap());
            let sibling = match (Codec::parse(coding), DeltaCoding::parse(coding), &dict) {
                (Some(codec), _, None) if codec.token() == coding => Sibling::Variant(codec),
                (_, Some(d), Some(hash)) => Sibling::Delta(hash, d),
                _ => panic!("row {c}: coding {coding:?} and dictionary do not go together"),
            };
            let ok = sibling_path(key, sibling) == path;
            assert_eq!(ok, c["ok"].as_bool().unwrap(), "row {c}");
        }
    }

    #[test]
    fn names() {
        let h = [0xab; 32];
        assert_eq!(
            sibling_path("a/app.js", Sibling::Variant(Codec::Zstd)),
            "a/app.js.zst"
        );
        assert_eq!(
            sibling_path("a/app.js", Sibling::Delta(&h, DeltaCoding::Dcz)),
            format!("a/app.js.{}.dcz", "ab".repeat(32))
        );
    }

    #[test]
    fn delta_paths_name_the_asset_and_the_dictionary() {
        let h = [0xabu8; 32];
        let p = delta_path("assets/index-D8fKq1nN.js", &h, DeltaCoding::Dcz);
        assert_eq!(
            p,
            format!("assets/index-D8fKq1nN.js.{}.dcz", "ab".repeat(32))
        );
        assert_eq!(
            delta_source(&p),
            Some(("assets/index-D8fKq1nN.js", DeltaCoding::Dcz))
        );
        for no in [
            "a.js.dcb",
            "a.js.ABAB.dcb",
            &format!("{}.dcb", "ab".repeat(32)),
            "a.js.br",
        ] {
            assert_eq!(delta_source(no), None, "{no}");
        }
    }
}
