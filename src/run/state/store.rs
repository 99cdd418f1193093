//! The release store: the dictionary-worthy assets of the last few releases,
//! kept in `--cache-dir` (which CI restores between runs), so a run gets
//! deltas against them with no `--dictionary-from` folder kept by hand.
//!
//! Layout: `CACHE/releases/v1/index.json` lists the releases, oldest first,
//! each with its site ([`site_of`]) and (path, SHA-256, size) per asset;
//! `CACHE/releases/v1/blobs/HEX` holds each distinct asset once, named by its
//! SHA-256 (the hash a browser sends in `Available-Dictionary`). Both are
//! written by temp-file-then-rename. A blob is checked against its name
//! whenever it is read, so a corrupt one is never compressed against; an
//! index that cannot be read (corrupt, or written by another version) is a
//! warning and the store starts again. Nothing here reads or writes DIR
//! except to copy its assets in.
//!
//! One cache folder may serve several sites (the apps of a monorepo, one
//! project's cache at `node_modules/.cache/precompress`): each release is
//! recorded under its site, a run reads only its own site's, and each site
//! keeps its last [`KEPT_RELEASES`], so apps never push each other out nor
//! pair across sites. An asset over the store's bound is left out of the
//! release with a warning (never stored, so never in an index a later run
//! would read as foreign).
//!
//! The cache comes back from places others can write (`actions/cache` is
//! shared across branches), and one cache folder may serve several runs at
//! once (two CI jobs, two apps of a monorepo). So: `releases/`, `v1/` and
//! `blobs/` must be real folders (a symlink there is refused with a warning,
//! never written or emptied through); only a file named by 64 hex digits, or
//! a temporary file a killed run left over an hour ago (as the cache's), is
//! ever removed from `blobs/`; the index is read, merged and written under an
//! exclusive lock on `v1/`, so no run loses another's release; and every run
//! that uses the store holds a shared lock on `blobs/` while it may read them,
//! so a blob is only removed when no other run holds that lock (else the
//! clean-up waits for a later run).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::fsutil::{
    canonical, own_dirs, own_dirs_exist, read_own, remove_if_exists, write_atomic,
};
use crate::model::dictionary::{hex, sha256};
use crate::run::state::cache::remove_stale_temp;

/// Releases kept per site, the newest included: a visitor who saw any of
/// the three before the current one gets a delta.
pub const KEPT_RELEASES: usize = *crate::config::limits::DELTA_RELEASES.end() as usize;

/// Sites kept at most: past it, the site recorded least recently goes (a
/// folder renamed, an app removed), so the index stays small.
pub const KEPT_SITES: usize = 32;

/// Bytes of blobs kept at most, over every site; the oldest releases go
/// first when a new one would pass it (the newest is always kept), and an
/// asset larger than this is not stored at all.
pub const MAX_BYTES: u64 = 256 << 20;

/// The store's format version: a store of another is started again.
const VERSION: u32 = 1;

/// One asset of a stored release.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct StoredFile {
    /// Path relative to DIR, `/` separators.
    pub rel: String,
    /// SHA-256, lower-case hex: the blob's name.
    pub sha256: String,
    pub size: u64,
}

/// One stored release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRelease {
    /// The site it is a release of ([`site_of`]). None: recorded by a
    /// version before sites; read by no run, dropped at the next record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    /// blake3 of its sorted files: two runs on one build are one release.
    pub id: String,
    pub files: Vec<StoredFile>,
    /// When it was recorded (seconds since the epoch), for the report to
    /// name it; absent in a release recorded before the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded: Option<u64>,
    /// The commit it was built from, where the CI names one ([`ci_commit`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// The commit a CI job builds, as the CIs and hosts precompress runs on
/// name it (GitHub Actions, GitLab, Netlify, Cloudflare Pages, Vercel), its
/// first 12 characters; none elsewhere. Only a label: nothing is decided by it.
pub fn ci_commit() -> Option<String> {
    [
        "GITHUB_SHA",
        "CI_COMMIT_SHA",
        "COMMIT_REF",
        "CF_PAGES_COMMIT_SHA",
        "VERCEL_GIT_COMMIT_SHA",
    ]
    .iter()
    .filter_map(|v| std::env::var(v).ok())
    .map(|c| c.trim().chars().take(12).collect::<String>())
    .find(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_alphanumeric()))
}

/// The site a run of DIR `root` served at `base` records and reads its
/// releases under, with the store in `cache_dir`: DIR's path from the cache
/// folder (both canonical), and the base. Relative, so a checkout moved with
/// its cache (`node_modules/.cache/precompress`, or a CI workspace at
/// another path) is the same site; two apps of a monorepo, or one build
/// served at two bases, are two.
pub fn site_of(root: &Path, cache_dir: &Path, base: &str) -> String {
    let (root, cache) = (canonical(root), canonical(cache_dir));
    let (r, c): (Vec<_>, Vec<_>) = (root.components().collect(), cache.components().collect());
    let common = r.iter().zip(&c).take_while(|(a, b)| a == b).count();
    let path = if common == 0 {
        // Another drive: only the whole path names it.
        root.to_string_lossy().replace('\\', "/")
    } else {
        let up = std::iter::repeat_n("..".to_string(), c.len() - common);
        let down = r[common..]
            .iter()
            .map(|p| p.as_os_str().to_string_lossy().into_owned());
        let parts: Vec<String> = up.chain(down).collect();
        if parts.is_empty() {
            ".".into()
        } else {
            parts.join("/")
        }
    };
    format!("{path} at {base}")
}

#[derive(Debug, Serialize, Deserialize)]
struct Index {
    version: u32,
    releases: Vec<StoredRelease>,
}

/// The folders of the store below the cache folder.
const DIRS: [&str; 3] = ["releases", "v1", "blobs"];

/// The store under a cache folder, opened by one run.
#[derive(Debug)]
pub struct Store {
    /// `CACHE/releases/v1`.
    dir: PathBuf,
    /// The shared lock on `blobs/` this run holds while it may read them
    /// (given up just before its own clean-up).
    reading: Mutex<Option<std::fs::File>>,
    /// Bytes of blobs kept at most ([`MAX_BYTES`]; lower in tests).
    limit: u64,
}

impl Store {
    /// Opens the store in `cache_dir`, making its folders, and takes the
    /// shared lock on its blobs. `None`, with a warning, when a folder of it
    /// is a symlink or a file (a cache restored from elsewhere): the run then
    /// neither reads nor writes the store.
    pub fn open(cache_dir: &Path, warnings: &mut Vec<String>) -> Option<Store> {
        Self::opened(cache_dir, own_dirs(cache_dir, &DIRS).map(Some), warnings)
    }

    /// [`Store::open`] for a reader that writes nothing (`check`): `None`
    /// when there is no store, nothing made.
    pub fn open_existing(cache_dir: &Path, warnings: &mut Vec<String>) -> Option<Store> {
        let there = own_dirs_exist(cache_dir, &DIRS)
            .map(|yes| yes.then(|| DIRS.iter().fold(cache_dir.to_path_buf(), |p, d| p.join(d))));
        Self::opened(cache_dir, there, warnings)
    }

    fn opened(
        cache_dir: &Path,
        blobs: std::io::Result<Option<PathBuf>>,
        warnings: &mut Vec<String>,
    ) -> Option<Store> {
        let locked = blobs.and_then(|blobs| {
            let Some(blobs) = blobs else { return Ok(None) };
            let f = std::fs::File::open(&blobs)?;
            f.lock_shared()?;
            Ok(Some(f))
        });
        match locked {
            Ok(f) => Some(Store {
                dir: cache_dir.join(DIRS[0]).join(DIRS[1]),
                reading: Mutex::new(Some(f?)),
                limit: MAX_BYTES,
            }),
            Err(e) => {
                warnings.push(format!(
                    "release store: {e}; no deltas from it, and nothing recorded in it, this run"
                ));
                None
            }
        }
    }

    /// The bytes the store holds: its index and its blobs (what the cache's
    /// bound counts but never evicts; the store keeps its own, [`MAX_BYTES`]).
    pub fn bytes(&self) -> u64 {
        let size = |p: &Path| std::fs::symlink_metadata(p).map_or(0, |m| m.len());
        let blobs = std::fs::read_dir(self.dir.join(DIRS[2]))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| size(&e.path()))
            .sum::<u64>();
        size(&self.index_path()) + blobs
    }

    fn index_path(&self) -> PathBuf {
        self.dir.join("index.json")
    }

    /// Where the blob of the asset with SHA-256 `sha256` (hex) is.
    pub fn blob(&self, sha256: &str) -> PathBuf {
        self.dir.join(DIRS[2]).join(sha256)
    }

    /// The stored releases a run of DIR `root` as `site` ([`site_of`])
    /// pairs against, oldest first: the site's own; or, when it has none
    /// but the build in `root` itself (a folder deployed once per release,
    /// `releases/v42/`), the newest [`KEPT_RELEASES`] of its sibling
    /// folders at the same base, its own included. None for an empty store,
    /// and none with a warning for one that cannot be read.
    pub fn releases(
        &self,
        site: &str,
        root: &Path,
        warnings: &mut Vec<String>,
    ) -> Vec<StoredRelease> {
        let all = self.all_releases(warnings);
        let own = |r: &&StoredRelease| r.site.as_deref() == Some(site);
        if all.iter().filter(own).any(|r| !is_built_in(r, root)) {
            return all.iter().filter(own).cloned().collect();
        }
        let mut siblings: Vec<StoredRelease> = all
            .into_iter()
            .filter(|r| {
                r.site
                    .as_deref()
                    .and_then(family)
                    .is_some_and(|f| Some(f) == family(site))
            })
            .collect();
        siblings.drain(..siblings.len().saturating_sub(KEPT_RELEASES));
        siblings
    }

    /// Every stored release, of every site, oldest first.
    fn all_releases(&self, warnings: &mut Vec<String>) -> Vec<StoredRelease> {
        let path = self.index_path();
        let bytes = match read_own(&path, 64 << 20) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
            Err(e) => {
                warnings.push(format!(
                    "{}: cannot read ({e}): no deltas from the release store this run",
                    path.display()
                ));
                return Vec::new();
            }
        };
        match serde_json::from_slice::<Index>(&bytes) {
            Ok(i) if i.version == VERSION && i.releases.iter().all(valid) => i.releases,
            _ => {
                warnings.push(format!(
                    "{}: not a release store this precompress reads: ignored, and started again",
                    path.display()
                ));
                Vec::new()
            }
        }
    }

    /// Records the release of `site` whose dictionary-worthy assets are
    /// `files` (path relative to DIR, path to read, SHA-256 as scanned): each
    /// asset copied in once (and only if it still has that hash; one larger
    /// than the store's bound is left out, with a warning), the release
    /// appended to the index as it is now (another run's meanwhile included)
    /// unless it is the site's newest already, and the oldest releases
    /// dropped ([`prune`]); then, if no other run is reading the blobs, those
    /// no kept release needs are removed. Failures are warnings: the store
    /// is a help, never a condition.
    pub fn record(
        &self,
        site: &str,
        files: &[(String, PathBuf, [u8; 32])],
        warnings: &mut Vec<String>,
    ) {
        let stored = self.copy_in(files, warnings);
        let mut warn = |what: String| warnings.push(format!("release store: {what}"));
        // The index as it is now, under the lock: a run that recorded since
        // this one read it keeps its release.
        let locked = std::fs::File::open(&self.dir).and_then(|f| f.lock().map(|()| f));
        let _index_lock = match locked {
            Ok(f) => f,
            Err(e) => return warn(format!("{}: cannot lock: {e}", self.dir.display())),
        };
        let mut releases = self.all_releases(&mut Vec::new());
        let id = release_id(&stored);
        let newest = releases
            .iter()
            .rev()
            .find(|r| r.site.as_deref() == Some(site));
        if newest.is_none_or(|r| r.id != id) {
            // Releases recorded before sites are nobody's: out.
            releases
                .retain(|r| r.site.is_some() && !(r.site.as_deref() == Some(site) && r.id == id));
            releases.push(StoredRelease {
                site: Some(site.to_string()),
                id,
                files: stored,
                recorded: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .ok()
                    .map(|d| d.as_secs()),
                commit: ci_commit(),
            });
            prune(&mut releases, self.limit);
            let index = Index {
                version: VERSION,
                releases,
            };
            let json = serde_json::to_vec_pretty(&index).expect("plain data");
            if let Err(e) = write_atomic(&self.index_path(), &json, None) {
                return warn(format!("{e}"));
            }
            releases = index.releases;
        }
        self.clean(&releases);
    }

    /// Each of `files` copied into the blobs unless there already, as
    /// [`Store::record`] lists them, sorted.
    fn copy_in(
        &self,
        files: &[(String, PathBuf, [u8; 32])],
        warnings: &mut Vec<String>,
    ) -> Vec<StoredFile> {
        let mut warn = |what: String| warnings.push(format!("release store: {what}"));
        let mut stored = Vec::with_capacity(files.len());
        for (rel, path, sha) in files {
            let name = hex(sha);
            let blob = self.blob(&name);
            let size = std::fs::metadata(path).map_or(0, |m| m.len());
            if size > self.limit {
                // Stored, it would make the index one no run reads (and push
                // every other release out): left out, said.
                warn(format!(
                    "{rel}: {size} bytes, over the store's {} MiB: not kept, so the next release gets no delta against it (use --dictionary-from for it)",
                    self.limit >> 20
                ));
                continue;
            }
            if !blob_ok(&blob, &name) {
                match read_own(path, self.limit) {
                    Ok(bytes) if sha256(&bytes) == *sha => {
                        if let Err(e) = write_atomic(&blob, &bytes, None) {
                            warn(format!("{e}"));
                            continue;
                        }
                    }
                    // Changed since the scan: this release's version of it is gone.
                    Ok(_) => continue,
                    Err(e) => {
                        warn(format!("{}: {e}", path.display()));
                        continue;
                    }
                }
            }
            let size = std::fs::symlink_metadata(&blob).map_or(0, |m| m.len());
            stored.push(StoredFile {
                rel: rel.clone(),
                sha256: name,
                size,
            });
        }
        stored.sort();
        stored
    }

    /// Removes the temporary files killed runs left (older than
    /// [`crate::run::state::cache::STALE_TEMP_AGE`], as the cache does), and the
    /// blobs no release of `releases` (the index just written) needs, unless
    /// another run holds the readers' lock: it may be about to read one of
    /// them, and a later run will clean up instead. Called with the index
    /// locked, so no run records meanwhile.
    fn clean(&self, releases: &[StoredRelease]) {
        // This run's own shared lock goes first, or it would stand in its way.
        drop(self.reading.lock().unwrap().take());
        let blobs = self.dir.join(DIRS[2]);
        // What a killed run was copying in (or the index it was writing): no
        // reader needs a temporary file, so no lock is waited for.
        for folder in [&self.dir, &blobs] {
            for e in std::fs::read_dir(folder).into_iter().flatten().flatten() {
                if let Some(md) = e.metadata().ok().filter(std::fs::Metadata::is_file) {
                    remove_stale_temp(&e.path(), &md);
                }
            }
        }
        let Ok(dir) = std::fs::File::open(&blobs) else {
            return;
        };
        if dir.try_lock().is_err() {
            return;
        }
        let kept: BTreeSet<&str> = releases
            .iter()
            .flat_map(|r| &r.files)
            .map(|f| f.sha256.as_str())
            .collect();
        let Ok(entries) = std::fs::read_dir(&blobs) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // Only what this store names its blobs, and only files: a
            // folder or link someone put there is not ours to remove.
            let blob_name = parse_hex(&name).is_some();
            let file = e.file_type().is_ok_and(|t| t.is_file());
            if blob_name && file && !kept.contains(name.as_str()) {
                let _ = remove_if_exists(&e.path());
            }
        }
    }
}

/// The folder that holds a site's DIR, and its base: sites of one family
/// are sibling folders served at one base.
fn family(site: &str) -> Option<(&str, &str)> {
    let (path, base) = site.rsplit_once(" at ")?;
    Some((path.rsplit_once('/').map_or("", |(p, _)| p), base))
}

/// Whether release `r` is the build in `root` (each of its files there, at
/// its size): a rerun's own, which gives no delta.
fn is_built_in(r: &StoredRelease, root: &Path) -> bool {
    r.files.iter().all(|f| {
        std::fs::symlink_metadata(root.join(&f.rel)).is_ok_and(|m| m.is_file() && m.len() == f.size)
    })
}

/// Drops releases from `releases` (oldest first, the last one just
/// recorded): past [`KEPT_RELEASES`] of a site, its oldest; past
/// [`KEPT_SITES`], the sites recorded least recently; past `limit` bytes of
/// distinct blobs, the oldest release that is not its site's newest, else
/// the oldest but the last.
fn prune(releases: &mut Vec<StoredRelease>, limit: u64) {
    let mut per_site: HashMap<Option<&str>, usize> = HashMap::new();
    let mut sites: Vec<Option<&str>> = Vec::new();
    let keep: Vec<bool> = releases
        .iter()
        .rev()
        .map(|r| {
            let site = r.site.as_deref();
            let n = per_site.entry(site).or_default();
            *n += 1;
            if *n == 1 {
                sites.push(site);
            }
            *n <= KEPT_RELEASES && sites.iter().position(|s| *s == site) < Some(KEPT_SITES)
        })
        .collect();
    let mut keep = keep.into_iter().rev();
    releases.retain(|_| keep.next().unwrap_or(true));
    let size = |rs: &[StoredRelease]| -> u64 {
        let mut seen = HashSet::new();
        rs.iter()
            .flat_map(|r| &r.files)
            .filter(|f| seen.insert(&f.sha256))
            .map(|f| f.size)
            .sum()
    };
    while releases.len() > 1 && size(releases) > limit {
        let last = releases.len() - 1;
        let superseded =
            (0..last).find(|&i| releases[i + 1..].iter().any(|r| r.site == releases[i].site));
        releases.remove(superseded.unwrap_or(0));
    }
}

/// 64 lower-case hex digits: a blob's name.
fn parse_hex(s: &str) -> Option<&str> {
    (s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))).then_some(s)
}

/// Whether a stored release reads as one this version wrote: hex names,
/// paths a manifest could hold, sizes the store could have kept.
fn valid(r: &StoredRelease) -> bool {
    r.files.iter().all(|f| {
        parse_hex(&f.sha256).is_some()
            && f.size <= MAX_BYTES
            && crate::model::path::check_relative(&f.rel).is_ok()
    })
}

/// Whether the blob at `path` is there with the content its name says.
fn blob_ok(path: &Path, name: &str) -> bool {
    read_own(path, MAX_BYTES).is_ok_and(|b| hex(&sha256(&b)) == name)
}

fn release_id(files: &[StoredFile]) -> String {
    let mut h = blake3::Hasher::new();
    for f in files {
        h.update(f.rel.as_bytes());
        h.update(&[0]);
        h.update(f.sha256.as_bytes());
        h.update(&[0]);
    }
    h.finalize().to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SITE: &str = "dist at /";

    /// A DIR with no file of any release: no release is its own build.
    fn nowhere() -> &'static Path {
        Path::new("/nonexistent/precompress-test-dir")
    }

    fn put(dir: &Path, rel: &str, body: &[u8]) -> (String, PathBuf, [u8; 32]) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, body).unwrap();
        (rel.to_string(), p, sha256(body))
    }

    #[test]
    fn keeps_the_last_releases_once_each_and_drops_what_none_needs() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("cache"), &mut Vec::new()).unwrap();
        let mut w = Vec::new();
        assert!(store.releases(SITE, nowhere(), &mut w).is_empty() && w.is_empty());
        let dist = tmp.path().join("dist");
        let shared = put(&dist, "assets/vendor-AAAA1111.js", b"vendor, never changes");
        for n in 0..6 {
            let app = put(
                &dist,
                &format!("assets/app-{n}aaaBBB.js"),
                format!("app {n}").as_bytes(),
            );
            store.record(SITE, &[shared.clone(), app.clone()], &mut w);
            // A second run on the same build is the same release.
            store.record(SITE, &[app, shared.clone()], &mut w);
        }
        assert!(w.is_empty(), "{w:?}");
        let rs = store.releases(SITE, nowhere(), &mut w);
        assert_eq!(rs.len(), KEPT_RELEASES);
        assert_eq!(rs[0].files[0].rel, "assets/app-2aaaBBB.js");
        let blobs = std::fs::read_dir(tmp.path().join("cache/releases/v1/blobs"))
            .unwrap()
            .count();
        assert_eq!(
            blobs,
            KEPT_RELEASES + 1,
            "one vendor blob, one per kept app"
        );
        assert!(store.blob(&rs[3].files[0].sha256).is_file());
    }

    #[test]
    fn a_corrupt_or_foreign_index_is_a_warning_and_the_store_starts_again() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path(), &mut Vec::new()).unwrap();
        let dist = tmp.path().join("dist");
        let f = put(&dist, "a-AAAA1111.js", b"a");
        for bad in [&b"{not json"[..], br#"{"version": 9, "releases": []}"#] {
            std::fs::create_dir_all(store.dir.clone()).unwrap();
            std::fs::write(store.index_path(), bad).unwrap();
            let mut w = Vec::new();
            assert!(store.releases(SITE, nowhere(), &mut w).is_empty());
            assert!(w[0].contains("started again"), "{w:?}");
            store.record(SITE, std::slice::from_ref(&f), &mut Vec::new());
            assert_eq!(store.releases(SITE, nowhere(), &mut w).len(), 1);
        }
        // A blob edited in place is copied again on the next record.
        let rs = store.releases(SITE, nowhere(), &mut Vec::new());
        std::fs::write(store.blob(&rs[0].files[0].sha256), b"edited").unwrap();
        let g = put(&dist, "b-BBBB2222.js", b"b");
        store.record(SITE, &[f.clone(), g], &mut Vec::new());
        assert!(blob_ok(&store.blob(&hex(&f.2)), &hex(&f.2)));
    }

    /// `CACHE/releases/v1/blobs` restored as a symlink (a cache comes back
    /// from `actions/cache`, which other branches write): the clean-up
    /// emptied the link's target. Now the store is refused, with a warning,
    /// and nothing is written or removed through the link.
    #[cfg(unix)]
    #[test]
    fn a_store_folder_that_is_a_symlink_is_refused_and_its_target_left_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let users = tmp.path().join("users-folder");
        std::fs::create_dir_all(&users).unwrap();
        std::fs::write(users.join("notes.txt"), b"mine").unwrap();
        std::fs::write(users.join("a".repeat(64)), b"also mine").unwrap();
        let dist = tmp.path().join("dist");
        let f = put(&dist, "a-AAAA1111.js", b"a");
        for link in ["releases/v1/blobs", "releases/v1", "releases"] {
            let cache = tmp.path().join(format!("cache-{}", link.len()));
            let at = cache.join(link);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(&users, &at).unwrap();
            let mut w = Vec::new();
            assert!(Store::open(&cache, &mut w).is_none(), "{link}");
            assert!(w[0].contains("symlink") && w[0].contains(link), "{w:?}");
            let mut w = Vec::new();
            assert!(Store::open_existing(&cache, &mut w).is_none() && !w.is_empty());
        }
        // A store that was sound when opened loses nothing of the user's
        // either: only 64-hex files are its blobs.
        let cache = tmp.path().join("cache");
        let store = Store::open(&cache, &mut Vec::new()).unwrap();
        let blobs = cache.join("releases/v1/blobs");
        std::fs::create_dir(blobs.join("a-folder")).unwrap();
        std::fs::write(blobs.join("README"), b"x").unwrap();
        store.record(SITE, &[f], &mut Vec::new());
        let mut names: Vec<_> = std::fs::read_dir(&users)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["a".repeat(64), "notes.txt".into()]);
        assert!(blobs.join("README").exists() && blobs.join("a-folder").exists());
    }

    /// A run killed while it copied an asset in (a cancelled CI job) left
    /// `blobs/.precompress-….tmp`, which no later run removed and the
    /// cache's bound counted for ever. The cache's rule now holds here: a
    /// temporary file over an hour old is a killed run's and goes; a young
    /// one may be a live run's and stays.
    #[test]
    fn a_killed_runs_temporary_files_go_after_an_hour() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path(), &mut Vec::new()).unwrap();
        let blobs = tmp.path().join("releases/v1/blobs");
        let plant = |p: PathBuf, age: u64| {
            std::fs::write(&p, vec![0u8; 1000]).unwrap();
            let t = std::time::SystemTime::now() - std::time::Duration::from_secs(age);
            std::fs::File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_modified(t)
                .unwrap();
            p
        };
        let old_blob = plant(blobs.join(".precompress-1f2e-0badcafe-0.tmp"), 7200);
        let old_index = plant(store.dir.join(".precompress-1f2e-0badcafe-1.tmp"), 7200);
        let young = plant(blobs.join(".precompress-2a3b-0badcafe-0.tmp"), 60);
        let before = store.bytes();
        let f = put(&tmp.path().join("dist"), "a-AAAA1111.js", b"a");
        store.record(SITE, &[f], &mut Vec::new());
        assert!(!old_blob.exists() && !old_index.exists());
        assert!(young.exists(), "a live run's temporary file was removed");
        assert!(store.bytes() < before, "the leftovers still count");
    }

    /// An index whose `size` said 2^50 aborted every later run (the read
    /// allocated it). A size no store could hold is an index it did not write.
    #[test]
    fn an_index_with_an_impossible_size_is_started_again() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path(), &mut Vec::new()).unwrap();
        let dist = tmp.path().join("dist");
        let f = put(&dist, "a-AAAA1111.js", b"a");
        store.record(SITE, std::slice::from_ref(&f), &mut Vec::new());
        let text = std::fs::read_to_string(store.index_path()).unwrap();
        std::fs::write(
            store.index_path(),
            text.replace("\"size\": 1", "\"size\": 1125899906842624"),
        )
        .unwrap();
        let mut w = Vec::new();
        assert!(store.releases(SITE, nowhere(), &mut w).is_empty());
        assert!(w[0].contains("started again"), "{w:?}");
    }

    /// Two runs sharing one cache folder: each rewrote the index from what it
    /// had read and removed the blobs its own index did not name, so one
    /// lost the other's release and blobs it was about to name.
    #[test]
    fn runs_sharing_the_store_keep_each_others_releases_and_blobs() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path().join("cache");
        let dist = tmp.path().join("dist");
        // A run that has opened the store (and may read or be about to
        // record a blob) holds it open while another records and cleans.
        let reader = Store::open(&cache, &mut Vec::new()).unwrap();
        let orphan = reader.blob(&"b".repeat(64));
        std::fs::write(&orphan, b"copied in, not yet in the index").unwrap();
        let a = Store::open(&cache, &mut Vec::new()).unwrap();
        a.record(SITE, &[put(&dist, "a-AAAA1111.js", b"a")], &mut Vec::new());
        assert!(orphan.exists(), "removed while another run held the store");
        drop(reader);
        // Once no run holds it, the next clean-up takes what no release names.
        let b = Store::open(&cache, &mut Vec::new()).unwrap();
        b.record(SITE, &[put(&dist, "b-BBBB2222.js", b"b")], &mut Vec::new());
        assert!(!orphan.exists());
        // Many records at once, on threads with stores of their own (each
        // its own lock, as separate processes have): every release is kept.
        std::thread::scope(|s| {
            for t in 0..KEPT_RELEASES - 2 {
                let (cache, dist) = (&cache, &dist);
                s.spawn(move || {
                    let store = Store::open(cache, &mut Vec::new()).unwrap();
                    let f = put(
                        dist,
                        &format!("t{t}-CCCC333{t}.js"),
                        format!("t{t}").as_bytes(),
                    );
                    store.record(SITE, &[f], &mut Vec::new());
                });
            }
        });
        let rs = Store::open(&cache, &mut Vec::new()).unwrap().releases(
            SITE,
            nowhere(),
            &mut Vec::new(),
        );
        assert_eq!(rs.len(), KEPT_RELEASES, "{rs:?}");
        for f in rs.iter().flat_map(|r| &r.files) {
            assert!(blob_ok(
                &cache.join("releases/v1/blobs").join(&f.sha256),
                &f.sha256
            ));
        }
    }

    /// Five apps sharing one cache folder: the store kept the last 4
    /// releases of all of them, so app 1's was gone by the time of its next
    /// release, and a run read every site's. Each site keeps its own now.
    #[test]
    fn sites_keep_their_own_releases_and_read_only_theirs() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("cache"), &mut Vec::new()).unwrap();
        let dist = tmp.path().join("dist");
        let mut w = Vec::new();
        for n in 0..KEPT_RELEASES + 2 {
            for app in 0..5 {
                let f = put(
                    &dist,
                    &format!("app{app}/index-{n}aaaBBB.js"),
                    format!("{app} {n}").as_bytes(),
                );
                store.record(&format!("apps/app{app}/dist at /"), &[f], &mut w);
            }
        }
        assert!(w.is_empty(), "{w:?}");
        for app in 0..5 {
            let rs = store.releases(&format!("apps/app{app}/dist at /"), nowhere(), &mut w);
            assert_eq!(rs.len(), KEPT_RELEASES, "app {app}");
            assert!(rs
                .iter()
                .flat_map(|r| &r.files)
                .all(|f| f.rel.starts_with(&format!("app{app}/"))));
            assert_eq!(
                rs[KEPT_RELEASES - 1].files[0].rel,
                format!("app{app}/index-{}aaaBBB.js", KEPT_RELEASES + 1)
            );
        }
        assert!(store
            .releases("apps/another/dist at /", nowhere(), &mut w)
            .is_empty());
        assert!(store
            .releases("apps/app1/dist at /app1/", nowhere(), &mut w)
            .is_empty());
        // The same build recorded by two sites is two releases.
        let f = put(&dist, "same-AAAA1111.js", b"same");
        store.record("a/dist at /", std::slice::from_ref(&f), &mut w);
        store.record("b/dist at /", std::slice::from_ref(&f), &mut w);
        assert_eq!(store.releases("a/dist at /", nowhere(), &mut w).len(), 1);
        assert_eq!(store.releases("b/dist at /", nowhere(), &mut w).len(), 1);
    }

    /// A deploy that puts each release in a folder of its own
    /// (`releases/v2/`, then `releases/v3/`): a new folder has no release of
    /// its own, nor does a rerun's (its only one is the build itself), so it
    /// reads its sibling folders' at its base.
    #[test]
    fn a_folder_per_release_reads_its_siblings_releases() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("cache"), &mut Vec::new()).unwrap();
        let releases = tmp.path().join("releases");
        let mut w = Vec::new();
        for n in 1..=KEPT_RELEASES + 1 {
            let f = put(
                &releases.join(format!("v{n}")),
                &format!("index-{n}aaaBBB.js"),
                format!("{n}").as_bytes(),
            );
            store.record(&format!("releases/v{n} at /"), &[f], &mut w);
        }
        let next = releases.join("v9");
        let rs = store.releases("releases/v9 at /", &next, &mut w);
        assert_eq!(rs.len(), KEPT_RELEASES);
        assert_eq!(
            rs[KEPT_RELEASES - 1].site.as_deref(),
            Some(&*format!("releases/v{} at /", KEPT_RELEASES + 1))
        );
        // A rerun in the newest folder: its own release is its build.
        let last = releases.join(format!("v{}", KEPT_RELEASES + 1));
        let rs = store.releases(
            &format!("releases/v{} at /", KEPT_RELEASES + 1),
            &last,
            &mut w,
        );
        assert_eq!(rs.len(), KEPT_RELEASES);
        // Not at another base, nor from another parent folder.
        assert!(store
            .releases("releases/v9 at /x/", &next, &mut w)
            .is_empty());
        assert!(store.releases("other/v9 at /", &next, &mut w).is_empty());
        assert!(w.is_empty(), "{w:?}");
    }

    /// An index written before sites: its releases are nobody's (a run
    /// reads none of them) and the next record drops them.
    #[test]
    fn releases_recorded_before_sites_are_read_by_no_site_and_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path(), &mut Vec::new()).unwrap();
        let dist = tmp.path().join("dist");
        let f = put(&dist, "a-AAAA1111.js", b"a");
        store.record(SITE, std::slice::from_ref(&f), &mut Vec::new());
        let text = std::fs::read_to_string(store.index_path()).unwrap();
        let legacy = text.replace(&format!("\"site\": \"{SITE}\","), "");
        assert_ne!(text, legacy);
        std::fs::write(store.index_path(), legacy).unwrap();
        let mut w = Vec::new();
        assert!(
            store.releases(SITE, nowhere(), &mut w).is_empty() && w.is_empty(),
            "{w:?}"
        );
        let g = put(&dist, "b-BBBB2222.js", b"b");
        store.record(SITE, &[g], &mut w);
        assert_eq!(store.all_releases(&mut w).len(), 1);
    }

    /// One asset over the store's bound was stored, and the index that
    /// named it read as "not a release store ... started again" by every
    /// later run. It is left out with a warning now, the rest recorded.
    #[test]
    fn an_asset_over_the_bound_is_left_out_and_the_store_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = Store::open(tmp.path(), &mut Vec::new()).unwrap();
        store.limit = 1000;
        let dist = tmp.path().join("dist");
        let small = put(&dist, "assets/a-AAAA1111.js", b"small");
        let big = put(&dist, "assets/big-BBBB2222.js", &[b'x'; 2000]);
        let mut w = Vec::new();
        store.record(SITE, &[small.clone(), big.clone()], &mut w);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("assets/big-BBBB2222.js") && w[0].contains("2000 bytes"),
            "{w:?}"
        );
        let mut w = Vec::new();
        let rs = store.releases(SITE, nowhere(), &mut w);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(rs.len(), 1);
        assert_eq!(rs[0].files.len(), 1);
        assert_eq!(rs[0].files[0].rel, "assets/a-AAAA1111.js");
        assert!(!store.blob(&hex(&big.2)).exists());
    }

    #[test]
    fn the_bound_drops_superseded_releases_first_and_never_the_newest() {
        let r = |site: &str, id: &str, sha: char, size: u64| StoredRelease {
            site: Some(site.into()),
            id: id.into(),
            files: vec![StoredFile {
                rel: "a.js".into(),
                sha256: sha.to_string().repeat(64),
                size,
            }],
            recorded: None,
            commit: None,
        };
        let mut rs = vec![
            r("a", "1", '1', 10),
            r("b", "1", '2', 10),
            r("a", "2", '3', 10),
            r("c", "1", '4', 10),
        ];
        prune(&mut rs, 30);
        // a's first release went: b's only one stays.
        let ids: Vec<_> = rs
            .iter()
            .map(|r| format!("{}{}", r.site.as_deref().unwrap(), r.id))
            .collect();
        assert_eq!(ids, ["b1", "a2", "c1"]);
        prune(&mut rs, 10);
        assert_eq!(rs.len(), 1);
        assert_eq!(rs[0].site.as_deref(), Some("c"));
    }

    #[test]
    fn a_site_is_dir_from_the_cache_folder_and_the_base() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path();
        let cache = p.join("app/node_modules/.cache/precompress");
        assert_eq!(
            site_of(&p.join("app/dist"), &cache, "/"),
            "../../../dist at /"
        );
        assert_eq!(
            site_of(&p.join("app/dist"), &cache, "/x/"),
            "../../../dist at /x/"
        );
        assert_eq!(site_of(&cache, &cache, "/"), ". at /");
        assert_eq!(
            site_of(&p.join("app/dist"), &p.join("app"), "/"),
            "dist at /"
        );
    }
}
