//! The shared dictionary: one dictionary resource for the assets that cannot
//! get deltas against their own earlier versions.
//!
//! A browser offers, for a URL, the one stored dictionary with the longest
//! matching `match` (then the most recently fetched: RFC 9842, and measured
//! in Chromium). Per-file dictionaries work when each asset's pattern is its
//! own (`/assets/index-*.js`). They do not for names that are only a hash
//! (SvelteKit's `_app/immutable/chunks/CxId8T4r.js`, Nuxt's `_nuxt/*.js`:
//! one pattern for every chunk) or names several chunks share (two lazy
//! `Page.tsx` become `assets/Page-*.js` twice): the browser offers whichever
//! such chunk it fetched last, rarely the new file's predecessor.
//!
//! Those assets (the *members*) are not marked one by one. Their bytes, raw
//! and in path order after a fixed first line, make one file,
//! `FOLDER/precompress-dictionary-HASH.txt` (FOLDER: the members' deepest
//! common folder; HASH: its content's blake3), marked with
//! `Use-As-Dictionary: match="BASE/FOLDER/*"` and announced by the servers on
//! every HTML response with `Link: <...>; rel="compression-dictionary"`, which
//! makes a browser fetch it when idle. The next release's members get deltas
//! against it (it holds their predecessors), and its own next version is an
//! ordinary asset paired by name, so it arrives as a delta too.
//!
//! Bounds: made only when the members hold at least [`MIN_BYTES`], and holds
//! at most [`MAX_BYTES`] of them (the first, in path order). A first-time
//! visitor fetches it once, at idle: about the brotli size of its members.
//!
//! The file is ours and provably so: its name is its content's hash and its
//! content starts with [`MARKER`]; a run removes the ones it no longer makes.

use crate::model::dictionary::{
    folder_of, is_fingerprinted, is_shared_dictionary, logical_name, shared_dictionary_path,
    shared_use_as_dictionary, SharedKind,
};

/// What a shared dictionary holds: code and style, what a visitor fetches
/// again after each release (not data, not WebAssembly).
pub(crate) const SHARED_TYPES: &[&str] = &["js", "mjs", "cjs", "css"];

/// The first line of every shared dictionary.
pub const MARKER: &[u8] =
    b"/* precompress shared dictionary: the assets below, raw, for RFC 9842 deltas */\n";

/// Members holding less are not worth a dictionary of their own.
pub const MIN_BYTES: u64 = 1024;

/// The most member bytes a shared dictionary holds; those past it are left out.
pub const MAX_BYTES: u64 = 1 << 20;

/// The shared dictionary a release gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shared {
    /// Code, or pages (`run::documents`).
    pub kind: SharedKind,
    /// Its path relative to DIR.
    pub rel: String,
    /// Its folder (`""` or ending in `/`): it serves every URL under it.
    pub folder: String,
    /// The members it holds, in order.
    pub members: Vec<String>,
}

/// Of the assets `(path, size)` of a release (already past the filter), the
/// ones that cannot get deltas of their own: fingerprinted scripts and
/// stylesheets with no logical name, or one another asset has too.
pub fn members(assets: &[(&str, u64)]) -> Vec<usize> {
    let mut names: std::collections::HashMap<String, usize> = Default::default();
    for (rel, _) in assets {
        if let Some(l) = logical_name(rel) {
            *names.entry(l).or_default() += 1;
        }
    }
    assets
        .iter()
        .enumerate()
        .filter(|(_, (rel, _))| {
            let ext = crate::model::content::extension(rel);
            ext.is_some_and(|e| SHARED_TYPES.contains(&e.as_str()))
                && !is_shared_dictionary(rel)
                && is_fingerprinted(rel)
                && logical_name(rel).is_none_or(|l| names[&l] > 1)
        })
        .map(|(i, _)| i)
        .collect()
}

/// The members' deepest common folder.
fn common_folder<'a>(rels: impl Iterator<Item = &'a str>) -> String {
    let mut common: Option<&str> = None;
    for r in rels {
        let f = folder_of(r);
        common = Some(match common {
            None => f,
            Some(c) => {
                let mut n = c.bytes().zip(f.bytes()).take_while(|(a, b)| a == b).count();
                // Back to a folder boundary.
                while n > 0 && c.as_bytes()[n - 1] != b'/' {
                    n -= 1;
                }
                &c[..n]
            }
        });
    }
    common.unwrap_or("").to_string()
}

/// The shared dictionary of a release whose assets are `assets` (path,
/// size), with `read` giving an asset's bytes: its path and content, or
/// `None` when it has too few member bytes or a folder no pattern can name.
/// Deterministic: the same tree gives the same bytes.
pub fn build(
    assets: &[(&str, u64)],
    mut read: impl FnMut(usize) -> Option<Vec<u8>>,
) -> Option<(Shared, Vec<u8>)> {
    let mut chosen: Vec<usize> = members(assets);
    chosen.sort_by_key(|&i| assets[i].0);
    let mut bytes = MARKER.to_vec();
    let mut held = Vec::new();
    let mut total = 0u64;
    for i in chosen {
        let (rel, size) = assets[i];
        if total + size > MAX_BYTES {
            continue;
        }
        let Some(b) = read(i) else { continue };
        total += b.len() as u64;
        bytes.extend_from_slice(&b);
        bytes.push(b'\n');
        held.push(rel.to_string());
    }
    if total < MIN_BYTES {
        return None;
    }
    let folder = common_folder(held.iter().map(String::as_str));
    shared_use_as_dictionary(SharedKind::Code, &folder, "/")?;
    let hash = blake3::hash(&bytes).to_hex();
    Some((
        Shared {
            kind: SharedKind::Code,
            rel: shared_dictionary_path(SharedKind::Code, &folder, &hash),
            folder,
            members: held,
        },
        bytes,
    ))
}

/// Whether the file at `rel` with `bytes` is a shared dictionary precompress
/// wrote: its name is the hash of content that starts with [`MARKER`].
pub fn is_ours(rel: &str, bytes: &[u8]) -> bool {
    bytes.starts_with(MARKER)
        && shared_dictionary_path(
            SharedKind::Code,
            folder_of(rel),
            &blake3::hash(bytes).to_hex(),
        ) == rel
}

impl Shared {
    /// Its `Use-As-Dictionary` value, served under `base`.
    pub fn use_as_dictionary(&self, base: &str) -> Option<String> {
        shared_use_as_dictionary(self.kind, &self.folder, base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_chunks_no_pattern_of_their_own_can_tell_apart() {
        let assets = [
            ("_app/immutable/chunks/CxId8T4r.js", 5000),
            ("_app/immutable/chunks/DKd_uinr.js", 300),
            ("_app/immutable/entry/app.Czk0Tzs9.js", 4000),
            ("assets/Page-Cohr6N4b.js", 4000),
            ("assets/Page-DaobSjzf.js", 4000),
            ("assets/index-BSG8iAvK.js", 60000),
            ("_nuxt/builds/latest.json", 70),
            ("index.html", 900),
            ("img/x-CxId8T4r.png", 9000),
        ];
        let m: Vec<&str> = members(&assets).into_iter().map(|i| assets[i].0).collect();
        assert_eq!(
            m,
            [
                "_app/immutable/chunks/CxId8T4r.js",
                "_app/immutable/chunks/DKd_uinr.js",
                "assets/Page-Cohr6N4b.js",
                "assets/Page-DaobSjzf.js"
            ]
        );
        assert_eq!(
            common_folder(m[..2].iter().copied()),
            "_app/immutable/chunks/"
        );
        assert_eq!(
            common_folder(["_app/a/x.js", "_app/b/y.js"].into_iter()),
            "_app/"
        );
        assert_eq!(common_folder(["_app/x.js", "assets/y.js"].into_iter()), "");
        assert_eq!(common_folder(["ab/x.js", "ac/y.js"].into_iter()), "");
    }

    #[test]
    fn the_dictionary_is_its_members_raw_named_by_its_hash_and_bounded() {
        let body = |n: usize| format!("export const v = {n};\n").repeat(60).into_bytes();
        let assets = [
            ("_nuxt/C27JxjOI.js", 1320),
            ("_nuxt/BboIPn-F.js", 1320),
            ("_nuxt/entry.js", 1320),
        ];
        let (s, bytes) = build(&assets, |i| Some(body(i))).unwrap();
        assert_eq!(s.folder, "_nuxt/");
        assert_eq!(
            s.members,
            ["_nuxt/BboIPn-F.js", "_nuxt/C27JxjOI.js", "_nuxt/entry.js"]
        );
        assert!(bytes.starts_with(MARKER));
        // The first member in path order is the second asset.
        let n = body(1).len();
        assert_eq!(&bytes[MARKER.len()..MARKER.len() + n], &body(1)[..]);
        assert!(is_ours(&s.rel, &bytes));
        assert!(s.rel.starts_with("_nuxt/precompress-dictionary-") && s.rel.ends_with(".txt"));
        // Same tree, same bytes; a byte changed, another name and not ours.
        assert_eq!(build(&assets, |i| Some(body(i))).unwrap().1, bytes);
        let mut edited = bytes.clone();
        edited[MARKER.len()] ^= 1;
        assert!(!is_ours(&s.rel, &edited));
        // Too little to be worth it; and nothing past the bound.
        assert!(build(&assets[..1], |_| Some(b"x".repeat(500))).is_none());
        let big = [
            ("_nuxt/AAAAaaa1.js", MAX_BYTES),
            ("_nuxt/BBBBbbb2.js", 2000),
        ];
        let (s, _) = build(&big, |i| Some(vec![b'x'; big[i].1 as usize])).unwrap();
        assert_eq!(s.members.len(), 1);
    }
}
