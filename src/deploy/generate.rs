//! What the server configurations generated from a manifest share (`nginx-map`,
//! `caddy-map`, `apache-map`): the `Vary` values, which deltas a configuration
//! can name, and PCRE quoting. The assets themselves come from
//! [`config_assets`](super::config_assets); each generator adds only what its
//! server's syntax needs.

use std::collections::BTreeMap;

use super::ConfigAsset;
use crate::model::coding::DeltaCoding;
use crate::model::manifest::Caching;
use crate::serve::{Coding, Entry, Representation};

/// `Vary` of every response of an asset that has deltas.
pub(crate) const VARY_DELTAS: &str = "Accept-Encoding, Available-Dictionary";

/// The `Vary` a configuration adds to every response of `entry` (and of its
/// deltas), given whether it sends deltas for it: a page's is
/// [`crate::serve::vary`]'s, `Sec-Fetch-Dest` and all (the server's own
/// `Vary: Accept-Encoding` beside it says nothing more); any other asset's
/// only names `Available-Dictionary` when it has deltas, the server adding
/// `Accept-Encoding` for its variants.
pub(crate) fn vary_of(entry: &Entry, deltas: bool) -> Option<&'static str> {
    if entry.cache == Caching::Page {
        crate::serve::vary(deltas, !entry.variants.is_empty(), true)
    } else {
        deltas.then_some(VARY_DELTAS)
    }
}

/// An asset's deltas by the SHA-256 of their dictionary, each dictionary's
/// smallest first (the index keeps deltas sorted by size).
pub(crate) type ByDictionary<'a> = BTreeMap<[u8; 32], Vec<(DeltaCoding, &'a Representation)>>;

/// The deltas of asset `a` that a configuration can send, by dictionary:
/// none when the asset's content type cannot be written (a delta is sent
/// with it), said in `skipped`.
pub(crate) fn named_deltas<'a>(
    a: &ConfigAsset<'a>,
    unwritable: impl Fn(&str) -> Option<&'static str>,
    skipped: &mut Vec<String>,
) -> ByDictionary<'a> {
    let (k, entry) = (a.key, a.entry);
    let mut by_dict = ByDictionary::new();
    for (hash, rep) in &entry.deltas {
        let Some(Coding::Delta(coding)) = rep.coding else {
            continue;
        };
        // Named as `delta_path` names it: the index refuses a manifest that
        // lists a delta under any other name (`model::names::sibling_path`).
        by_dict.entry(*hash).or_default().push((coding, rep));
    }
    if !entry.deltas.is_empty() && unwritable(&entry.content_type).is_some() {
        skipped.push(format!("{k}: content type not written"));
        by_dict.clear();
    }
    by_dict
}

/// `s` as a PCRE pattern that matches exactly it (nginx and Apache both use
/// PCRE). An ASCII control character becomes an escape (`\n`, `\r`, `\t`,
/// `\x{..}`), so the pattern stays on one line and none reaches a config file.
pub(crate) fn pcre_escape(s: &str) -> String {
    let mut r = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        match c {
            '\n' => r.push_str(r"\n"),
            '\r' => r.push_str(r"\r"),
            '\t' => r.push_str(r"\t"),
            // Bytes, not code points: the servers' PCRE runs without UTF mode.
            c if c.is_ascii_control() => r.push_str(&format!("\\x{{{:02x}}}", c as u32)),
            '\\' | '^' | '$' | '.' | '|' | '?' | '*' | '+' | '(' | ')' | '[' | ']' | '{' | '}' => {
                r.push('\\');
                r.push(c);
            }
            c => r.push(c),
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy::config_assets;
    use crate::deploy::fixture::{index, index_typed};

    #[test]
    fn pcre_escape_quotes_every_metacharacter() {
        assert_eq!(
            pcre_escape(":WC01+m8/V/Y=:\n/a.b(1)"),
            r":WC01\+m8/V/Y=:\n/a\.b\(1\)"
        );
        assert_eq!(pcre_escape(r"a\b$^|?*[]{}"), r"a\\b\$\^\|\?\*\[\]\{\}");
        assert_eq!(pcre_escape("odd names/café #1"), "odd names/café #1");
    }

    #[test]
    fn pcre_escape_writes_no_control_character() {
        assert_eq!(
            pcre_escape("new\nline\rcr\ttab\x01\x7f\u{2028}"),
            "new\\nline\\rcr\\ttab\\x{01}\\x{7f}\u{2028}",
            "U+2028 is no ASCII control: it stays as its UTF-8 bytes"
        );
    }

    #[test]
    fn deltas_are_grouped_by_dictionary_smallest_first() {
        let idx = index(&[(
            "assets/app-5e6f7a8b.js",
            &[("dcb", 1, 93), ("dcz", 1, 90), ("dcb", 2, 50)],
            None,
        )]);
        let mut skipped = Vec::new();
        let assets = config_assets(&idx, |_| None, |_| None, &mut skipped);
        let by = named_deltas(&assets[0], |_| None, &mut skipped);
        assert!(skipped.is_empty(), "{skipped:?}");
        let codings =
            |d: u8| -> Vec<&str> { by[&[d; 32]].iter().map(|(c, _)| c.token()).collect() };
        assert_eq!(codings(1), ["dcz", "dcb"], "smallest first");
        assert_eq!(codings(2), ["dcb"]);

        // A type the configuration cannot write: no deltas at all.
        let idx = index_typed(&[("assets/app-5e6f7a8b.js", &[("dcb", 1, 9)], None)], "x$y");
        let assets = config_assets(&idx, |_| None, |_| None, &mut skipped);
        let by = named_deltas(&assets[0], |s| s.contains('$').then_some("$"), &mut skipped);
        assert!(by.is_empty());
        assert_eq!(
            skipped,
            ["assets/app-5e6f7a8b.js: content type not written"]
        );
    }
}
