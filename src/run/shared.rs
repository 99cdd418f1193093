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
    dictionary_key, folder_of, is_fingerprinted, is_shared_dictionary, logical_name,
    pattern_use_as_dictionary, shared_dictionary_path, shared_use_as_dictionary, SharedKind,
    DICTIONARY_MIN_SIZE,
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

/// Members that share one pattern (a folder's chunks named by a hash alone,
/// `_nuxt/*.js`; or chunks of one logical name, `assets/Page-*.js`), and
/// the one of them marked with it: a browser holds one dictionary for the
/// pattern, the one chunk it was sent with, and offers it for every member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The pattern, relative to DIR ([`dictionary_key`]).
    pub pattern: String,
    /// The member marked with it.
    pub marked: String,
    /// Every member, the marked one included, in path order.
    pub members: Vec<String>,
}

/// The members of `assets` (path, size) grouped by pattern, each group's
/// dictionary chosen: of the members a browser may keep (at least
/// [`DICTIONARY_MIN_SIZE`]), the largest that `refers` to another asset by
/// name, else the largest. A chunk that imports others holds their hashed
/// names and changes whenever any of them does (Nuxt's entry, SvelteKit's
/// client runtime with its version stamp), so its next version gets a small
/// delta, while a chunk that imports nothing (a vendor library) rarely
/// changes at all. Deterministic: ties go to the first path.
pub fn groups(assets: &[(&str, u64)], refers: impl Fn(usize) -> bool) -> Vec<Group> {
    let mut by: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for i in members(assets) {
        if let Some(k) = dictionary_key(assets[i].0) {
            by.entry(k).or_default().push(i);
        }
    }
    let mut out = Vec::new();
    for (pattern, mut idx) in by {
        idx.sort_by_key(|&i| assets[i].0);
        let keepable: Vec<(usize, bool)> = idx
            .iter()
            .filter(|&&i| assets[i].1 >= DICTIONARY_MIN_SIZE)
            .map(|&i| (i, refers(i)))
            .collect();
        let Some(&(best, _)) = keepable.iter().max_by(|(a, ra), (b, rb)| {
            (ra, assets[*a].1)
                .cmp(&(rb, assets[*b].1))
                .then_with(|| assets[*b].0.cmp(assets[*a].0))
        }) else {
            continue;
        };
        if pattern_use_as_dictionary(&pattern, assets[best].0, "/").is_none() {
            continue;
        }
        out.push(Group {
            pattern,
            marked: assets[best].0.to_string(),
            members: idx.iter().map(|&i| assets[i].0.to_string()).collect(),
        });
    }
    out
}

/// Whether `bytes` name another file of the release (`names`: file names,
/// no folder) other than `own`, as an import does (`"./DgkY_Al_.js"`): a
/// name ending in `.js`, `.mjs` or `.css` after a character no name holds.
pub fn references(bytes: &[u8], names: &std::collections::HashSet<&str>, own: &str) -> bool {
    let name_byte = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.');
    for (j, _) in bytes.iter().enumerate().filter(|(_, b)| **b == b'.') {
        let Some(ext) = [&b".js"[..], b".mjs", b".css"]
            .into_iter()
            .find(|e| bytes[j..].starts_with(e))
        else {
            continue;
        };
        let end = j + ext.len();
        if bytes.get(end).is_some_and(|b| name_byte(*b)) {
            continue;
        }
        // Back to the start of the name, never more than a name's length.
        let mut start = j;
        while start > 0 && j - start < 255 && name_byte(bytes[start - 1]) {
            start -= 1;
        }
        let Ok(name) = std::str::from_utf8(&bytes[start..end]) else {
            continue;
        };
        if name != own && names.contains(name) {
            return true;
        }
    }
    false
}

/// Where the dictionary goes, given its members' deepest common folder
/// `common` and the folders of earlier releases' shared dictionaries: the
/// deepest of those that still holds every member, else `common`. Its
/// pattern then stays the same from release to release, so a browser
/// offers the one it holds for the next one, which arrives as a delta:
/// a member that joins from a parent folder for one release (a chunk
/// whose hash no name rule reads) moves it up, but never down again.
fn stay(common: String, earlier: &[&str]) -> String {
    earlier
        .iter()
        .filter(|e| common.starts_with(**e))
        .max_by_key(|e| e.len())
        .map_or(common, |e| e.to_string())
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
    earlier: &[&str],
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
    let folder = stay(common_folder(held.iter().map(String::as_str)), earlier);
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
        let (s, bytes) = build(&assets, &[], |i| Some(body(i))).unwrap();
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
        assert_eq!(build(&assets, &[], |i| Some(body(i))).unwrap().1, bytes);
        let mut edited = bytes.clone();
        edited[MARKER.len()] ^= 1;
        assert!(!is_ours(&s.rel, &edited));
        // Too little to be worth it; and nothing past the bound.
        assert!(build(&assets[..1], &[], |_| Some(b"x".repeat(500))).is_none());
        let big = [
            ("_nuxt/AAAAaaa1.js", MAX_BYTES),
            ("_nuxt/BBBBbbb2.js", 2000),
        ];
        let (s, _) = build(&big, &[], |i| Some(vec![b'x'; big[i].1 as usize])).unwrap();
        assert_eq!(s.members.len(), 1);
    }
}
