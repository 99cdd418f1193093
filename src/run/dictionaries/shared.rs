//! Dictionaries for the chunks that cannot get deltas against their own
//! earlier versions.
//!
//! A browser offers, for a URL, the one stored dictionary with the longest
//! matching `match` (then the most recently fetched: RFC 9842, and measured
//! in Chromium, `bench/probe/match-specificity.mjs`). Per-file dictionaries
//! work when each asset's pattern is its own (`/assets/index-*.js`). They do
//! not for names that are only a hash (SvelteKit's
//! `_app/immutable/chunks/CxId8T4r.js`, Nuxt's `_nuxt/*.js`: one pattern for
//! every chunk of the folder) or names several chunks share (two lazy
//! `Page.tsx` become `assets/Page-*.js` twice). Those chunks (the
//! *members*) are grouped by the pattern they share ([`groups`]).
//!
//! **The marked chunk** (`--shared-dictionary auto`, the default). One member
//! of each group is marked with the group's pattern ([`chunk_pattern`],
//! `match="/_nuxt/*"`), and no other: the largest that names another file of
//! the release (an import: it changes whenever they do, as Nuxt's entry and
//! SvelteKit's client runtime do on every build), else the largest. A first
//! visit loads it anyway, so it costs nothing; a returning visitor's requests
//! for every member offer it, and the next release's members get deltas
//! against it. The marked chunk's own next version gets a small delta; the
//! others about their brotli size.
//!
//! **The code dictionary** (`--shared-dictionary on`), for the largest group
//! of scripts named by a hash alone: the marked chunk and the members that
//! name another file (what changes from release to release; a vendor chunk
//! that imports nothing stays out), raw, after a fixed first line, in
//! `FOLDER/precompress-dictionary-HASH.js` (HASH: its content's blake3),
//! marked `match="BASE/FOLDER/*.js"`: longer than the marked chunk's
//! pattern, so a browser holding both offers it for every member, and its
//! own next version. The servers announce it on every HTML response with
//! `Link: <...>; rel="compression-dictionary"`, which makes a browser fetch
//! it when idle: a first visit, having loaded the marked chunk, gets it as a
//! delta against that (about the brotli size of the other members it holds);
//! after a release a returning visitor gets every member, and the next
//! dictionary, as small deltas against it. Its folder is the group's, which
//! the framework fixes, so its pattern stays the same from release to release.
//!
//! The file is ours and provably so: its name is its content's hash and its
//! content starts with [`MARKER`]; a run removes the ones it no longer makes.

use std::collections::{BTreeMap, HashSet};

use crate::model::dictionary::{
    chunk_pattern, folder_of, is_fingerprinted, is_shared_dictionary, logical_name,
    pattern_use_as_dictionary, shared_dictionary_path, shared_use_as_dictionary, SharedKind,
    DICTIONARY_MIN_SIZE,
};

/// What a shared dictionary holds: code and style, what a visitor fetches
/// again after each release (not data, not WebAssembly).
pub(crate) const SHARED_TYPES: &[&str] = &["js", "mjs", "cjs", "css"];

/// The first line of every code dictionary.
pub const MARKER: &[u8] =
    b"/* precompress shared dictionary: the assets below, raw, for RFC 9842 deltas */\n";

/// A code dictionary is made only when the members it holds besides the
/// marked chunk come to at least this many bytes: with fewer, the marked
/// chunk serves them as well.
pub const MIN_BYTES: u64 = 1024;

/// The most member bytes a code dictionary holds; those past it are left out.
pub const MAX_BYTES: u64 = 1 << 20;

/// `--shared-dictionary auto` makes the code dictionary only when the
/// members it holds besides the marked chunk are at most this share of its
/// group's bytes. A first visit fetches it as a delta against the marked
/// chunk, about the brotli size of those members; a returning visitor saves
/// about as much after every release (they are what changes: chunks that
/// import), so it pays back at the first return. Bounded so that a first
/// visit pays at most about this share of what it loads from the folder
/// anyway: on Nuxt 4 (5.6% of the folder) a first visit paid 3.3% of its
/// JS and CSS, and a returning visitor 1.3-1.7% instead of 6.7-6.9%
/// (bench/results/field-series-20261203.md).
pub const AUTO_MAX_SHARE: f64 = 0.10;

/// A dictionary resource a release gets: the code dictionary, or the
/// documents dictionary (`run::dictionaries::documents`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shared {
    /// Code, or pages (`run::dictionaries::documents`).
    pub kind: SharedKind,
    /// Its path relative to DIR.
    pub rel: String,
    /// What a browser offers it for: the members of its group, or the pages.
    pub members: Vec<String>,
}

impl Shared {
    /// Its `Use-As-Dictionary` value, served under `base`.
    pub fn use_as_dictionary(&self, base: &str) -> Option<String> {
        shared_use_as_dictionary(&self.rel, base)
    }
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

/// Members that share one pattern (a folder's scripts named by a hash
/// alone, `_nuxt/*`; or chunks of one logical name, `assets/Page-*.js`),
/// and the one of them marked with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The pattern the marked chunk is sent with, relative to DIR
    /// ([`chunk_pattern`], or the shared logical name).
    pub pattern: String,
    /// The member marked with it.
    pub marked: String,
    /// Every member, the marked one included, in path order.
    pub members: Vec<String>,
    /// The members that name another file of the release, the marked one
    /// among them when it does ([`references`]).
    pub referring: Vec<String>,
    /// Whether a first visit loads the marked chunk (`run::dictionaries::first_visit`):
    /// only then may a dictionary fetched at idle come as a delta against it.
    pub first_visit: bool,
}

impl Group {
    /// Its marked chunk's `Use-As-Dictionary` value, served under `base`.
    pub fn use_as_dictionary(&self, base: &str) -> Option<String> {
        pattern_use_as_dictionary(&self.pattern, &self.marked, base)
    }
}

/// Which assets of a release are marked as dictionaries, and with what:
/// a shared dictionary with its own value, a group's marked chunk with the
/// group's pattern, no other member of a group or shared dictionary (their
/// patterns would be longer than the group's, and a browser would offer
/// them), and any other asset by its own name. The manifest's
/// `use_as_dictionary` (`run::commit`) and the published list of
/// dictionaries (`model::published`) both come from it.
pub struct Marks<'a> {
    shared: &'a [Shared],
    groups: &'a [Group],
    members: HashSet<&'a str>,
}

impl<'a> Marks<'a> {
    /// The marks of a release with these shared dictionaries and groups.
    pub fn new(shared: &'a [Shared], groups: &'a [Group]) -> Marks<'a> {
        let members = shared
            .iter()
            .flat_map(|s| s.members.iter().map(String::as_str))
            .chain(
                groups
                    .iter()
                    .flat_map(|g| g.members.iter().map(String::as_str)),
            )
            .collect();
        Marks {
            shared,
            groups,
            members,
        }
    }

    /// Whether `rel` is a member of a group or of a shared dictionary.
    pub fn is_member(&self, rel: &str) -> bool {
        self.members.contains(rel)
    }

    /// The `Use-As-Dictionary` value of the asset at `rel` of `size` bytes
    /// served under `base`; `own` says whether an asset with no group may be
    /// marked by its own name (marking on, and the filter takes its deltas).
    pub fn mark(&self, rel: &str, size: u64, own: bool, base: &str) -> Option<String> {
        if let Some(s) = self.shared.iter().find(|s| s.rel == rel) {
            return s.use_as_dictionary(base);
        }
        if let Some(g) = self.groups.iter().find(|g| g.marked == rel) {
            return g.use_as_dictionary(base);
        }
        if self.is_member(rel) || !own {
            return None;
        }
        crate::model::dictionary::use_as_dictionary(rel, size, base)
    }
}

/// [`groups_loaded`] of a release whose first visit is not known: every
/// member counts as loaded.
pub fn groups(assets: &[(&str, u64)], refers: impl FnMut(usize) -> bool) -> Vec<Group> {
    groups_loaded(assets, refers, |_| true)
}

/// The members of `assets` (path, size) grouped by pattern, each group's
/// chunk chosen: of the members a browser may keep (at least
/// [`DICTIONARY_MIN_SIZE`]), those a first visit `loaded` first (a lazy
/// route may never be fetched), then the largest that `refers` to another
/// asset by name, else the largest (ties to the first path). `refers` is
/// asked once per member. Deterministic.
pub fn groups_loaded(
    assets: &[(&str, u64)],
    mut refers: impl FnMut(usize) -> bool,
    loaded: impl Fn(usize) -> bool,
) -> Vec<Group> {
    let mut by: BTreeMap<String, Vec<(usize, bool)>> = Default::default();
    for i in members(assets) {
        let rel = assets[i].0;
        let pattern = match logical_name(rel) {
            Some(l) => Some(l),
            None => chunk_pattern(rel),
        };
        if let Some(p) = pattern {
            by.entry(p).or_default().push((i, refers(i)));
        }
    }
    let mut out = Vec::new();
    for (pattern, mut idx) in by {
        idx.sort_by_key(|&(i, _)| assets[i].0);
        let best = idx
            .iter()
            .filter(|(i, _)| assets[*i].1 >= DICTIONARY_MIN_SIZE)
            .max_by(|(a, ra), (b, rb)| {
                (loaded(*a), ra, assets[*a].1)
                    .cmp(&(loaded(*b), rb, assets[*b].1))
                    .then_with(|| assets[*b].0.cmp(assets[*a].0))
            });
        let Some(&(best, _)) = best else { continue };
        if pattern_use_as_dictionary(&pattern, assets[best].0, "/").is_none() {
            continue;
        }
        let name = |&(i, _): &(usize, bool)| assets[i].0.to_string();
        out.push(Group {
            pattern,
            marked: assets[best].0.to_string(),
            members: idx.iter().map(name).collect(),
            referring: idx.iter().filter(|(_, r)| *r).map(name).collect(),
            first_visit: loaded(best),
        });
    }
    out
}

/// Whether `bytes` name another file of the release (`names`: file names,
/// no folder) other than `own`, as an import does (`"./DgkY_Al_.js"`): a
/// name ending in `.js`, `.mjs` or `.css` after a character no name holds.
pub fn references(bytes: &[u8], names: &HashSet<&str>, own: &str) -> bool {
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

/// The group the code dictionary is made for: the one of scripts with no
/// name of their own in a folder (not DIR's top: their pattern is the
/// folder's `FOLDER*`) with the most bytes. Not only names that read as a
/// hash alone: Nuxt's entry drew `BWeEOqtA.js` (no digit) in one build.
fn resource_group(groups: &[Group], size: impl Fn(&str) -> u64) -> Option<&Group> {
    groups
        .iter()
        .filter(|g| g.pattern.ends_with("/*"))
        .max_by_key(|g| {
            (
                g.members.iter().map(|m| size(m)).sum::<u64>(),
                std::cmp::Reverse(&g.pattern),
            )
        })
}

/// The code dictionary of a release whose groups are `groups`, with `size`
/// and `read` giving a member's size and bytes: its description and
/// content, or `None` when no group has one worth making. With `bounded`
/// (`--shared-dictionary auto`), only when the members it holds besides the
/// marked chunk are at most [`AUTO_MAX_SHARE`] of its group's bytes, and a
/// first visit loads the marked chunk (else it would fetch the dictionary
/// whole at idle). Deterministic: the same tree gives the same bytes.
pub fn build(
    groups: &[Group],
    size: impl Fn(&str) -> u64,
    mut read: impl FnMut(&str) -> Option<Vec<u8>>,
    bounded: bool,
) -> Option<(Shared, Vec<u8>)> {
    let g = resource_group(groups, &size)?;
    if bounded && !g.first_visit {
        return None;
    }
    let group_bytes: u64 = g.members.iter().map(|m| size(m)).sum();
    // The marked chunk first, then the members that name others.
    let chosen = std::iter::once(&g.marked).chain(g.referring.iter().filter(|r| **r != g.marked));
    let mut bytes = MARKER.to_vec();
    let mut total = 0u64;
    let mut others = 0u64;
    for rel in chosen {
        if total + size(rel) > MAX_BYTES {
            continue;
        }
        let Some(b) = read(rel) else { continue };
        total += b.len() as u64;
        if *rel != g.marked {
            others += b.len() as u64;
        }
        bytes.extend_from_slice(&b);
        bytes.push(b'\n');
    }
    if others < MIN_BYTES || (bounded && others as f64 > AUTO_MAX_SHARE * group_bytes as f64) {
        return None;
    }
    let folder = folder_of(&g.marked);
    let hash = blake3::hash(&bytes).to_hex();
    let rel = shared_dictionary_path(SharedKind::Code, folder, &hash);
    shared_use_as_dictionary(&rel, "/")?;
    Some((
        Shared {
            kind: SharedKind::Code,
            rel,
            members: g.members.clone(),
        },
        bytes,
    ))
}

/// Whether the file at `rel` with `bytes` is a code dictionary precompress
/// wrote (as `.js`, or as `.txt` before): its name is the hash of content
/// that starts with [`MARKER`].
pub fn is_ours(rel: &str, bytes: &[u8]) -> bool {
    let made = shared_dictionary_path(
        SharedKind::Code,
        folder_of(rel),
        &blake3::hash(bytes).to_hex(),
    );
    bytes.starts_with(MARKER)
        && (made == rel
            || made
                .strip_suffix(".js")
                .map(|m| format!("{m}.txt"))
                .as_deref()
                == Some(rel))
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
            ("_app/immutable/entry/start.DgaHsjir.js", 4000),
            ("assets/Page-Cohr6N4b.js", 4000),
            ("assets/Page-DaobSjzf.js", 4000),
            ("assets/index-BSG8iAvK.js", 60000),
            ("_nuxt/builds/latest.json", 70),
            ("index.html", 900),
            ("img/x-CxId8T4r.png", 9000),
        ];
        let m: Vec<&str> = members(&assets).into_iter().map(|i| assets[i].0).collect();
        // SvelteKit's start chunk, whose hash reads as a word, has a name.
        assert_eq!(
            m,
            [
                "_app/immutable/chunks/CxId8T4r.js",
                "_app/immutable/chunks/DKd_uinr.js",
                "assets/Page-Cohr6N4b.js",
                "assets/Page-DaobSjzf.js"
            ]
        );
    }

    /// What a SvelteKit and a Nuxt build hold: a vendor runtime that imports
    /// nothing and never changes (the largest chunk), a chunk that imports it
    /// and changes on every build, small chunks; and Vite's two lazy pages.
    fn release() -> Vec<(&'static str, u64)> {
        vec![
            ("_app/immutable/chunks/DgkY_Al_.js", 45_723),
            ("_app/immutable/chunks/u3iLxyZs.js", 26_625),
            ("_app/immutable/chunks/J1-O0aTn.js", 294),
            ("_app/immutable/chunks/Bjy-W4x2.js", 1365),
            ("_app/immutable/chunks/DA6UMDl4.js", 38),
            ("_app/immutable/chunks/Tiny0Ab1.css", 100),
            // Nuxt's entry; this build drew a hash with no digit.
            ("_nuxt/BWeEOqtA.js", 182_155),
            ("_nuxt/Br2P4Dsm.js", 3769),
            ("_nuxt/entry.DU9Z1FXZ.css", 638),
            ("assets/Page-Cohr6N4b.js", 2920),
            ("assets/Page-DaobSjzf.js", 2396),
            ("assets/index-BSG8iAvK.js", 60_000),
        ]
    }

    fn imports(rel: &str) -> bool {
        !matches!(
            rel,
            "_app/immutable/chunks/DgkY_Al_.js" | "_app/immutable/chunks/Bjy-W4x2.js"
        )
    }

    #[test]
    fn each_group_marks_its_largest_chunk_that_imports_others() {
        let assets = release();
        let g = groups(&assets, |i| imports(assets[i].0));
        let got: Vec<(&str, &str, usize)> = g
            .iter()
            .map(|g| (g.pattern.as_str(), g.marked.as_str(), g.members.len()))
            .collect();
        assert_eq!(
            got,
            [
                // The runtime is larger, but never changes: the chunk that
                // imports it is marked (with only the size, a returning
                // SvelteKit visitor downloaded 31% of a first visit).
                (
                    "_app/immutable/chunks/*",
                    "_app/immutable/chunks/u3iLxyZs.js",
                    5
                ),
                ("_nuxt/*", "_nuxt/BWeEOqtA.js", 2),
                ("assets/Page-*.js", "assets/Page-Cohr6N4b.js", 2),
            ],
            "the stylesheet alone under the size to keep makes no group"
        );
        assert_eq!(
            g[0].use_as_dictionary("/app/").as_deref(),
            Some("match=\"/app/_app/immutable/chunks/*\"")
        );
        assert_eq!(
            g[0].referring,
            [
                "_app/immutable/chunks/DA6UMDl4.js",
                "_app/immutable/chunks/J1-O0aTn.js",
                "_app/immutable/chunks/u3iLxyZs.js"
            ]
        );
        // With nothing importing, the largest; ties to the first path.
        let g = groups(&assets, |_| false);
        assert_eq!(g[0].marked, "_app/immutable/chunks/DgkY_Al_.js");
        let same = [("_nuxt/AAAAaaa1.js", 900), ("_nuxt/BBBBbbb2.js", 900)];
        assert_eq!(groups(&same, |_| true)[0].marked, "_nuxt/AAAAaaa1.js");
        // At DIR's top a script's pattern names the type: `*` would match pages.
        let top = [("0a1b2c3d4e5f6a7b8c9d.js", 900)];
        assert_eq!(groups(&top, |_| true)[0].pattern, "*.js");
    }

    #[test]
    fn an_import_is_a_name_of_another_file_between_characters_no_name_holds() {
        let names: HashSet<&str> = ["DgkY_Al_.js", "a.css", "entry.B3cGUYDG.css", "own.js"]
            .into_iter()
            .collect();
        for (bytes, want) in [
            (&b"import{a}from\"./DgkY_Al_.js\";"[..], true),
            (b"import(\"../chunks/DgkY_Al_.js\")", true),
            (b"[\"_nuxt/entry.B3cGUYDG.css\"]", true),
            (b"url(a.css)", true),
            (b"import\"./own.js\"", false),
            (b"xDgkY_Al_.js", false),
            (b"\"DgkY_Al_.json\"", false),
            (b"\"DgkY_Al_.jsx\"", false),
            (b"no names at all.", false),
            (b".js", false),
        ] {
            assert_eq!(
                references(bytes, &names, "own.js"),
                want,
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn the_code_dictionary_holds_the_marked_chunk_and_what_imports_and_is_named_by_its_hash() {
        let assets = release();
        let g = groups(&assets, |i| imports(assets[i].0));
        let size = |rel: &str| assets.iter().find(|a| a.0 == rel).unwrap().1;
        let body = |rel: &str| {
            format!("/* {rel} */\n")
                .repeat(size(rel) as usize / 20)
                .into_bytes()
        };
        let (s, bytes) = build(&g, size, |r| Some(body(r)), false).unwrap();
        // Nuxt's folder has the most bytes; its entry first, then the chunk
        // that imports (the vendor-like chunks of SvelteKit stay out there).
        assert_eq!(s.kind, SharedKind::Code);
        assert!(s.rel.starts_with("_nuxt/precompress-dictionary-") && s.rel.ends_with(".js"));
        assert_eq!(s.members, ["_nuxt/BWeEOqtA.js", "_nuxt/Br2P4Dsm.js"]);
        let mut want = MARKER.to_vec();
        for r in ["_nuxt/BWeEOqtA.js", "_nuxt/Br2P4Dsm.js"] {
            want.extend(body(r));
            want.push(b'\n');
        }
        assert_eq!(bytes, want);
        assert!(is_ours(&s.rel, &bytes));
        assert_eq!(
            s.use_as_dictionary("/").as_deref(),
            Some("match=\"/_nuxt/*.js\"")
        );
        // Same tree, same bytes; a byte changed, another name and not ours;
        // one made before as .txt is still ours.
        assert_eq!(build(&g, size, |r| Some(body(r)), false).unwrap().1, bytes);
        // auto: the 3,769 B it holds besides the entry are 2% of the folder.
        assert_eq!(build(&g, size, |r| Some(body(r)), true).unwrap().1, bytes);
        let mut edited = bytes.clone();
        edited[MARKER.len()] ^= 1;
        assert!(!is_ours(&s.rel, &edited));
        assert!(is_ours(&s.rel.replace(".js", ".txt"), &bytes));
        assert!(!is_ours(&s.rel.replace(".js", ".css"), &bytes));
        // Too little besides the marked chunk: none.
        let small = [("_nuxt/6rCdMCyt.js", 182_155), ("_nuxt/BeUOQN3B.js", 408)];
        let g = groups(&small, |_| true);
        assert!(build(
            &g,
            |r| small.iter().find(|a| a.0 == r).unwrap().1,
            |_| Some(vec![b'x'; 400]),
            false
        )
        .is_none());
        // auto: not when it would hold more than its share of the folder
        // besides the marked chunk (a first visit pays about that).
        let heavy = [("_nuxt/EntryAa1.js", 10_000), ("_nuxt/PageBb22.js", 5_000)];
        let g = groups(&heavy, |_| true);
        let sz = |r: &str| heavy.iter().find(|a| a.0 == r).unwrap().1;
        let read = |r: &str| Some(vec![b'x'; sz(r) as usize]);
        assert!(build(&g, sz, read, false).is_some());
        assert!(build(&g, sz, read, true).is_none());
        // Nothing past the bound.
        let big = [
            ("_nuxt/AAAAaaa1.js", MAX_BYTES),
            ("_nuxt/BBBBbbb2.js", 2000),
            ("_nuxt/CCCCccc3.js", 2000),
        ];
        let g = groups(&big, |_| true);
        let sz = |r: &str| big.iter().find(|a| a.0 == r).unwrap().1;
        assert!(build(&g, sz, |r| Some(vec![b'x'; sz(r) as usize]), false).is_none());
    }
}
