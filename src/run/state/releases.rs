//! Earlier releases (`--dictionary-from PREV`) as sources of dictionaries: which
//! of their files are there, reading one back unchanged, and choosing, for an
//! asset of the new release, the earlier file to compress it against.
//!
//! An asset is paired with the files of PREV that have its pairing key
//! ([`crate::model::dictionary::pairing_key`]: the path with the content hash taken
//! out). With one such file, that is the dictionary. With several (a release
//! that kept old assets, or bundles that share a name, like Vite's
//! `index-*.js` chunks), each is tried with a fast zstd delta and the one that
//! gives the smallest wins, ties going to the first path: the dictionary a
//! browser most likely holds is the one most like the new file. Nothing here
//! writes to PREV.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsutil::open_own;
use crate::model::dictionary::{
    folder_pattern, is_shared_dictionary, may_be_dictionary, pairing_key, parse_hex32, release_key,
    shared_serves,
};
use crate::model::manifest::Manifest;
use crate::run::walk::walk;

/// At most this many same-named files of one release are tried as the
/// dictionary of one asset; the others are passed over.
pub const MAX_TRIED: usize = 8;

/// With more same-named files than [`MAX_TRIED`], up to this many (nearest in
/// size) are ranked by how much of their first and last [`AFFINITY_BYTES`]
/// they share with the asset, and the best tried: after a small edit the
/// predecessor shares its start and end, while thousands of same-named
/// chunks of about the same size put it outside the nearest eight (an 820 B
/// delta instead of about 30 B).
pub const POOL: usize = 4096;

/// Bytes read from each end of a candidate to rank it.
pub const AFFINITY_BYTES: usize = 4096;

/// A file of an earlier release that may serve as a dictionary.
#[derive(Debug, Clone)]
pub struct OldFile {
    /// Which `--dictionary-from` folder (its index), or [`THIS_RELEASE`].
    pub release: usize,
    /// Path relative to that folder, `/` separators.
    pub rel: String,
    /// Path to open.
    pub path: PathBuf,
    /// Size when listed.
    pub size: u64,
    /// The SHA-256 it must have, when known before it is read (a release
    /// store's blob is named by it): any other content is not used.
    pub expect: Option<[u8; 32]>,
}

/// [`OldFile::release`] of a page of this very release, its own dictionary
/// (`run::scan::choose_dictionaries`): newer than every earlier release.
pub const THIS_RELEASE: usize = usize::MAX;

/// The dictionary files of the earlier releases, by pairing key.
#[derive(Debug, Default)]
pub struct Releases {
    /// The folders, as given.
    pub roots: Vec<PathBuf>,
    by_key: HashMap<String, Vec<OldFile>>,
    /// Their shared dictionaries (`run::dictionaries::shared`), which serve every asset
    /// under their folder.
    shared: Vec<OldFile>,
}

/// Refuses a `--dictionary-from` folder that is missing, not a folder,
/// unreadable, or DIR itself (`canon_dir`, canonical): a configuration error
/// naming it, for the run and for `check` alike (a typo must never turn the
/// delta check off in silence).
pub fn check_folder(root: &Path, canon_dir: Option<&Path>) -> Result<PathBuf> {
    let bad = |why: String| Error::Config(format!("--dictionary-from {}: {why}", root.display()));
    let canon = match root.canonicalize() {
        Ok(c) if c.is_dir() => c,
        Ok(_) => return Err(bad("not a folder".into())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(bad("no such folder".into()))
        }
        Err(e) => return Err(bad(format!("cannot open: {e}"))),
    };
    if Some(canon.as_path()) == canon_dir {
        return Err(bad(
            "is DIR itself; name an earlier release's build folder".into()
        ));
    }
    if let Err(e) = std::fs::read_dir(&canon) {
        return Err(bad(format!("cannot read: {e}")));
    }
    Ok(canon)
}

impl Releases {
    /// Lists the candidate dictionaries of each folder in `roots`. A folder
    /// that is missing, unreadable, or DIR itself is a configuration error; a
    /// corrupt manifest there is only a warning (files are paired by name
    /// alone, which is all the manifest would have told).
    pub fn open(roots: &[PathBuf], dir: &Path, warnings: &mut Vec<String>) -> Result<Releases> {
        let canon_dir = dir.canonicalize().ok();
        let mut releases = Releases {
            roots: roots.to_vec(),
            ..Releases::default()
        };
        for (i, root) in roots.iter().enumerate() {
            check_folder(root, canon_dir.as_deref())?;
            let mpath = crate::model::manifest::default_path(root);
            // What the release's manifest marked is what a browser holds (a
            // file it lists unmarked was served unmarked); a file it does not
            // list, or with no manifest, may have been marked by its name.
            let mut marked: HashMap<String, bool> = HashMap::new();
            if mpath.is_file() {
                match Manifest::read(&mpath) {
                    Ok(m) => {
                        marked = m
                            .files
                            .into_iter()
                            .map(|(k, a)| (k, a.use_as_dictionary.is_some()))
                            .collect()
                    }
                    Err(e) => warnings.push(format!(
                        "{e}; ignored: pairing {} by file names alone",
                        root.display()
                    )),
                }
            }
            let tree = walk(root, false, &[mpath]);
            for e in tree.errors {
                warnings.push(format!("{e}: no deltas against it"));
            }
            for f in tree.files {
                let Ok(md) = std::fs::metadata(&f.path) else {
                    continue;
                };
                let listed = may_be_dictionary(&f.rel, md.len())
                    && marked.get(&f.rel).copied().unwrap_or(true);
                if !listed {
                    continue;
                }
                releases.list(OldFile {
                    release: i,
                    rel: f.rel,
                    path: f.path,
                    size: md.len(),
                    expect: None,
                });
            }
        }
        Ok(releases)
    }

    /// Adds the releases of the release store (oldest first), each as one
    /// more earlier release: its dictionary-worthy assets read from their
    /// blobs, each checked against the hash it is named by.
    pub fn add_stored(
        &mut self,
        store: &crate::run::state::store::Store,
        stored: &[crate::run::state::store::StoredRelease],
    ) {
        for r in stored {
            let i = self.roots.len();
            self.roots.push(
                store
                    .blob("")
                    .with_file_name(format!("release-{}", &r.id[..16])),
            );
            for f in &r.files {
                let Some(expect) = parse_hex32(&f.sha256) else {
                    continue;
                };
                // The blob as it is, not as the index says: a size the index
                // got wrong (or was made to say) is never allocated or read.
                let path = store.blob(&f.sha256);
                let on_disk = std::fs::symlink_metadata(&path);
                if !on_disk.is_ok_and(|m| m.is_file() && m.len() == f.size)
                    || !may_be_dictionary(&f.rel, f.size)
                {
                    continue;
                }
                self.list(OldFile {
                    release: i,
                    rel: f.rel.clone(),
                    path,
                    size: f.size,
                    expect: Some(expect),
                });
            }
        }
    }

    /// How old release `i` is among these, 0 the oldest, when the first
    /// `given` were given as folders (`--dictionary-from` in their order,
    /// then the live site's) and the rest came from the release store, oldest
    /// first: the store holds what was deployed before the folders given.
    pub fn age(&self, i: usize, given: usize) -> usize {
        let stored = self.roots.len().saturating_sub(given);
        if i >= given {
            i - given
        } else {
            stored + i
        }
    }

    /// Lists an earlier file under its pairing key, and a shared dictionary
    /// among those too.
    fn list(&mut self, old: OldFile) {
        if is_shared_dictionary(&old.rel) {
            self.shared.push(old.clone());
        }
        self.by_key
            .entry(release_key(&old.rel))
            .or_default()
            .push(old);
    }

    /// The size of the largest file listed as a dictionary (0 for none): a
    /// delta job holds one whole.
    pub fn largest(&self) -> u64 {
        self.by_key
            .values()
            .flatten()
            .map(|f| f.size)
            .max()
            .unwrap_or(0)
    }

    /// No earlier release was given.
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// The earlier files paired with the asset at `rel`, grouped by release
    /// (at most [`POOL`] each, nearest in size first; [`shortlist`] narrows
    /// them to [`MAX_TRIED`]).
    pub fn paired(&self, rel: &str, size: u64) -> Vec<Vec<&OldFile>> {
        self.listed_under(&pairing_key(rel), size)
    }

    /// The earlier files marked with the pattern of `rel`'s folder
    /// (`_nuxt/*.js`: [`folder_pattern`]), grouped by release as
    /// [`Releases::paired`] groups them: what a browser offers for a chunk
    /// with no name of its own, or with a name no earlier release had.
    pub fn in_folder(&self, rel: &str, size: u64) -> Vec<Vec<&OldFile>> {
        match folder_pattern(rel) {
            Some(p) => self.listed_under(&p, size),
            None => Vec::new(),
        }
    }

    fn listed_under(&self, key: &str, size: u64) -> Vec<Vec<&OldFile>> {
        let mut groups: Vec<Vec<&OldFile>> = vec![Vec::new(); self.roots.len()];
        if let Some(files) = self.by_key.get(key) {
            for f in files {
                groups[f.release].push(f);
            }
        }
        for g in &mut groups {
            g.sort_by(|a, b| {
                a.size
                    .abs_diff(size)
                    .cmp(&b.size.abs_diff(size))
                    .then_with(|| a.rel.cmp(&b.rel))
            });
            g.truncate(POOL);
        }
        groups.retain(|g| !g.is_empty());
        groups
    }

    /// The shared dictionaries of the earlier releases that serve the asset
    /// at `rel` ([`shared_serves`]), one per release, the deepest folder
    /// first.
    pub fn shared_for(&self, rel: &str) -> Vec<Vec<&OldFile>> {
        let mut groups: Vec<Vec<&OldFile>> = vec![Vec::new(); self.roots.len()];
        for f in &self.shared {
            if shared_serves(&f.rel, rel) {
                groups[f.release].push(f);
            }
        }
        for g in &mut groups {
            g.sort_by(|a, b| {
                b.rel
                    .len()
                    .cmp(&a.rel.len())
                    .then_with(|| a.rel.cmp(&b.rel))
            });
            g.truncate(1);
        }
        groups.retain(|g| !g.is_empty());
        groups
    }
}

/// The files of one release's `group` worth trying for an asset whose first
/// and last bytes are `head` and `tail` (up to [`AFFINITY_BYTES`] each): all of
/// them when there are at most [`MAX_TRIED`], else the [`MAX_TRIED`] sharing
/// the longest start plus end with it (then nearest in size, as given).
pub fn shortlist<'a>(group: Vec<&'a OldFile>, head: &[u8], tail: &[u8]) -> Vec<&'a OldFile> {
    if group.len() <= MAX_TRIED {
        return group;
    }
    let mut ranked: Vec<(usize, usize, &OldFile)> = group
        .into_iter()
        .enumerate()
        .map(|(i, f)| (affinity(f, head, tail), i, f))
        .collect();
    // Stable on the size order `group` came in.
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked
        .into_iter()
        .take(MAX_TRIED)
        .map(|(_, _, f)| f)
        .collect()
}

/// How many leading bytes of `f` equal `head`'s plus trailing bytes equal
/// `tail`'s (0 for a file that cannot be read).
fn affinity(f: &OldFile, head: &[u8], tail: &[u8]) -> usize {
    let Some((h, t)) = file_ends(&f.path, f.size) else {
        return 0;
    };
    let prefix = h.iter().zip(head).take_while(|(a, b)| a == b).count();
    let suffix = t
        .iter()
        .rev()
        .zip(tail.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    prefix + suffix
}

/// The first and last [`AFFINITY_BYTES`] of the file at `path` of `size`
/// bytes, read without reading the rest.
pub fn file_ends(path: &Path, size: u64) -> Option<(Vec<u8>, Vec<u8>)> {
    use std::io::{Seek, SeekFrom};
    let mut h = open_own(path).ok()?;
    let mut read = |from: u64| -> Option<Vec<u8>> {
        h.seek(SeekFrom::Start(from)).ok()?;
        let mut buf = Vec::with_capacity(AFFINITY_BYTES);
        (&mut h)
            .take(AFFINITY_BYTES as u64)
            .read_to_end(&mut buf)
            .ok()?;
        Some(buf)
    };
    let head = read(0)?;
    let tail = read(size.saturating_sub(AFFINITY_BYTES as u64))?;
    Some((head, tail))
}

/// A dictionary read back: its bytes and SHA-256.
pub struct Loaded {
    pub bytes: Vec<u8>,
    pub sha256: [u8; 32],
}

/// Reads an earlier file whole. `expect` is the SHA-256 it had when it was
/// chosen: a file that changed since (or vanished) is `Err`, saying so.
/// Never more than `f.size` bytes are read, nor space for more than the file
/// holds allocated: a store index may say anything.
pub fn load(f: &OldFile, expect: Option<&[u8; 32]>) -> std::result::Result<Loaded, String> {
    let bytes = crate::fsutil::read_own(&f.path, f.size)
        .map_err(|e| format!("{}: cannot read: {e}", f.path.display()))?;
    let sha256 = crate::model::dictionary::sha256(&bytes);
    if expect.is_some_and(|e| *e != sha256) {
        return Err(format!(
            "{}: changed while this run used it as a dictionary",
            f.path.display()
        ));
    }
    Ok(Loaded { bytes, sha256 })
}

/// Of the same-named earlier files of one release, the dictionary for an
/// asset whose SHA-256 is `input_sha256`, with the dictionary's own SHA-256.
/// With several, the one `input` compresses best against (a fast zstd delta
/// of each; the first in `files`' order on ties); `input` is read only then.
/// `None` when one of them is the asset itself (an unchanged asset needs no
/// delta) or none can be read.
///
/// The candidates are read one at a time and only the best one's hash is
/// kept: holding all of them (up to [`MAX_TRIED`]) per worker took eight
/// 100 MB bundles to 1.6 GB at two threads.
pub fn choose<'a>(
    input: impl FnOnce() -> Option<Vec<u8>>,
    input_sha256: &[u8; 32],
    files: &[&'a OldFile],
    same: bool,
    warnings: &mut Vec<String>,
) -> Option<(&'a OldFile, [u8; 32])> {
    let mut input = Some(input);
    let mut bytes: Option<Vec<u8>> = None;
    let mut best: Option<(usize, &'a OldFile, [u8; 32])> = None;
    for f in files {
        let l = match load(f, f.expect.as_ref()) {
            Ok(l) => l,
            Err(e) => {
                warnings.push(format!("{e}: not used as a dictionary"));
                continue;
            }
        };
        // The same bytes: nothing to gain, but for a page (`same`), which
        // keeps its URL: a browser holding it revalidates with the ETag of
        // the delta it got before, which a delta against itself answers in
        // a few bytes where the whole page would go again.
        if l.sha256 == *input_sha256 {
            return same.then_some((*f, l.sha256));
        }
        if files.len() == 1 {
            return Some((*f, l.sha256));
        }
        if let Some(read) = input.take() {
            bytes = read();
        }
        // Without the input there is nothing to compare: the first one wins.
        let size = bytes
            .as_deref()
            .map_or(0, |i| crate::encode::estimate::delta_size(i, &l.bytes));
        if best.as_ref().is_none_or(|(b, _, _)| size < *b) {
            best = Some((size, *f, l.sha256));
        }
    }
    best.map(|(_, f, sha)| (f, sha))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, body: &[u8]) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }

    fn js(n: usize, seed: &str) -> Vec<u8> {
        (0..n)
            .map(|i| format!("export const {seed}{i} = () => {i} * {i};\n"))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn pairs_by_logical_name_and_chooses_the_closest_of_several() {
        let tmp = tempfile::tempdir().unwrap();
        let (prev, dir) = (tmp.path().join("v1"), tmp.path().join("v2"));
        std::fs::create_dir_all(&dir).unwrap();
        write(&prev, "assets/index-AAAA1111.js", &js(200, "other"));
        write(&prev, "assets/index-BBBB2222.js", &js(200, "app"));
        write(&prev, "assets/vendor-CCCC3333.js", &js(200, "vendor"));
        write(&prev, "assets/index-DDDD4444.js.br", b"not a candidate");
        write(&prev, "assets/tiny-EEEE5555.js", b"small");
        let mut warnings = Vec::new();
        let r = Releases::open(std::slice::from_ref(&prev), &dir, &mut warnings).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let mut new = js(200, "app");
        new.extend_from_slice(b"export const added = 1;\n");
        let groups = r.paired("assets/index-ZZZZ9999.js", new.len() as u64);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].len(), 2, "{groups:?}");
        let sha = |b: &[u8]| -> [u8; 32] {
            sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(b)).into()
        };
        let (f, dict_sha) = choose(
            || Some(new.clone()),
            &sha(&new),
            &groups[0],
            false,
            &mut warnings,
        )
        .unwrap();
        assert_eq!(f.rel, "assets/index-BBBB2222.js");
        assert_eq!(dict_sha, sha(&js(200, "app")));
        // An unchanged asset gets no dictionary, but a page (which keeps its
        // URL) gets its identical earlier self.
        let same = js(200, "app");
        assert!(choose(
            || Some(same.clone()),
            &sha(&same),
            &groups[0],
            false,
            &mut warnings
        )
        .is_none());
        let (f, d) = choose(
            || Some(same.clone()),
            &sha(&same),
            &groups[0],
            true,
            &mut warnings,
        )
        .unwrap();
        assert_eq!(
            (f.rel.as_str(), d),
            ("assets/index-BBBB2222.js", sha(&same))
        );
        assert!(r.paired("assets/other-ZZZZ9999.js", 10).is_empty());
        // A file that changed since it was chosen is refused.
        write(&prev, "assets/index-BBBB2222.js", b"rewritten");
        let e = load(f, Some(&dict_sha)).err().unwrap();
        assert!(e.contains("changed while"), "{e}");
    }

    /// Among many same-named chunks of the same size, the real predecessor
    /// (one line shorter) fell outside the eight nearest in size.
    #[test]
    fn the_predecessor_is_tried_among_many_same_named_files_of_its_size() {
        let tmp = tempfile::tempdir().unwrap();
        let (prev, dir) = (tmp.path().join("v1"), tmp.path().join("v2"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut new = js(300, "page");
        new.extend_from_slice(b"export const added = 1;\n");
        for i in 0..40 {
            // Decoys: exactly the new file's size, other content.
            let mut d = js(300, &format!("p{i:03}"));
            d.resize(new.len(), b' ');
            write(&prev, &format!("assets/Page-D{i:03}xYz1.js"), &d);
        }
        write(&prev, "assets/Page-Zz9pred0.js", &js(300, "page"));
        let r = Releases::open(std::slice::from_ref(&prev), &dir, &mut Vec::new()).unwrap();
        let groups = r.paired("assets/Page-Nn8newer.js", new.len() as u64);
        assert_eq!(groups[0].len(), 41);
        let n = AFFINITY_BYTES.min(new.len());
        let list = shortlist(groups[0].clone(), &new[..n], &new[new.len() - n..]);
        assert_eq!(list.len(), MAX_TRIED);
        assert_eq!(list[0].rel, "assets/Page-Zz9pred0.js", "{list:?}");
    }

    #[test]
    fn bad_folders_are_configuration_errors_and_a_corrupt_manifest_a_warning() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("dist");
        std::fs::create_dir_all(&dir).unwrap();
        let mut w = Vec::new();
        for (prev, why) in [
            (tmp.path().join("missing"), "no such folder"),
            (dir.clone(), "DIR itself"),
        ] {
            let e = Releases::open(&[prev], &dir, &mut w).unwrap_err();
            assert!(
                matches!(e, Error::Config(_)) && e.to_string().contains(why),
                "{e}"
            );
        }
        let prev = tmp.path().join("v1");
        write(&prev, "precompress-manifest.json", b"{not json");
        write(&prev, "app-AAAA1111.js", &js(200, "a"));
        let r = Releases::open(&[prev], &dir, &mut w).unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("pairing") && w[0].contains("by file names alone"));
        assert_eq!(r.paired("app-BBBB2222.js", 100).len(), 1);
    }

    /// A browser holds what an earlier release's manifest marked, so those
    /// are its dictionaries: for a chunk named by a hash alone, the one
    /// chunk marked for its folder, found under the folder's key.
    #[test]
    fn an_earlier_release_lists_what_its_manifest_marked() {
        let tmp = tempfile::tempdir().unwrap();
        let (prev, dir) = (tmp.path().join("v1"), tmp.path().join("v2"));
        std::fs::create_dir_all(&dir).unwrap();
        write(&prev, "_nuxt/Entry111.js", &js(300, "entry"));
        write(&prev, "_nuxt/Vendor22.js", &js(900, "vendor"));
        write(&prev, "_nuxt/Page3333.js", &js(50, "page"));
        write(&prev, "assets/index-AAAA1111.js", &js(200, "app"));
        let mut m = Manifest::new(Default::default());
        for (k, marked) in [
            ("_nuxt/Entry111.js", Some("match=\"/_nuxt/*\"")),
            ("_nuxt/Vendor22.js", None),
            ("_nuxt/Page3333.js", None),
            (
                "assets/index-AAAA1111.js",
                Some("match=\"/assets/index-*.js\""),
            ),
        ] {
            let body = std::fs::read(prev.join(k)).unwrap();
            m.files.insert(
                k.into(),
                crate::model::manifest::Asset {
                    blake3: blake3::hash(&body).to_hex().to_string(),
                    cache: Default::default(),
                    content_type: "text/javascript".into(),
                    deltas: vec![],
                    encodings: vec![],
                    etag: "\"x\"".into(),
                    sha256: String::new(),
                    size: body.len() as u64,
                    skipped: Default::default(),
                    skipped_deltas: vec![],
                    use_as_dictionary: marked.map(str::to_string),
                },
            );
        }
        m.write(&crate::model::manifest::default_path(&prev))
            .unwrap();
        let mut w = Vec::new();
        let r = Releases::open(std::slice::from_ref(&prev), &dir, &mut w).unwrap();
        assert!(w.is_empty(), "{w:?}");
        let names = |g: Vec<Vec<&OldFile>>| -> Vec<String> {
            g.into_iter().flatten().map(|f| f.rel.clone()).collect()
        };
        assert_eq!(
            names(r.in_folder("_nuxt/New44444.js", 9000)),
            ["_nuxt/Entry111.js"]
        );
        assert!(r.paired("_nuxt/New44444.js", 9000).is_empty());
        assert!(r.in_folder("_nuxt/entry.ABCD1234.css", 900).is_empty());
        write(&prev, "_nuxt/Later555.js", &js(50, "later"));
        let r = Releases::open(std::slice::from_ref(&prev), &dir, &mut w).unwrap();
        assert_eq!(r.in_folder("_nuxt/New44444.js", 9000)[0].len(), 2);
        assert_eq!(
            names(r.paired("assets/index-BBBB2222.js", 9000)),
            ["assets/index-AAAA1111.js"]
        );
        // What the manifest does not list, or with no manifest, every chunk
        // that may have been marked.
        std::fs::remove_file(crate::model::manifest::default_path(&prev)).unwrap();
        let r = Releases::open(std::slice::from_ref(&prev), &dir, &mut w).unwrap();
        assert_eq!(r.in_folder("_nuxt/New44444.js", 9000)[0].len(), 4);
    }
}
