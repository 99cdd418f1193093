//! The release store: the dictionary-worthy assets of the last few releases,
//! kept in `--cache-dir` (which CI restores between runs), so a run gets
//! deltas against them with no `--dictionary-from` folder kept by hand.
//!
//! Layout: `CACHE/releases/v1/index.json` lists the releases, oldest first,
//! each as (path, SHA-256, size) per asset; `CACHE/releases/v1/blobs/HEX` holds
//! each distinct asset once, named by its SHA-256 (the hash a browser sends
//! in `Available-Dictionary`). Both are written by temp-file-then-rename. A
//! blob is checked against its name whenever it is read, so a corrupt one is
//! never compressed against; an index that cannot be read (corrupt, or
//! written by another version) is a warning and the store starts again.
//! Nothing here reads or writes DIR except to copy its assets in.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fsutil::{read_regular, remove_if_exists, write_atomic};
use crate::model::dictionary::{hex, sha256};

/// Releases kept, the newest included: a visitor who saw any of the three
/// before the current one gets a delta.
pub const KEPT_RELEASES: usize = 4;

/// Bytes of blobs kept at most; the oldest releases go first when a new one
/// would pass it (the newest is always kept).
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
    /// blake3 of its sorted files: two runs on one build are one release.
    pub id: String,
    pub files: Vec<StoredFile>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Index {
    version: u32,
    releases: Vec<StoredRelease>,
}

/// The store under a cache folder.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The store in `cache_dir` (nothing is created until [`Store::record`]).
    pub fn new(cache_dir: &Path) -> Store {
        Store {
            dir: cache_dir.join("releases").join(format!("v{VERSION}")),
        }
    }

    fn index_path(&self) -> PathBuf {
        self.dir.join("index.json")
    }

    /// Where the blob of the asset with SHA-256 `sha256` (hex) is.
    pub fn blob(&self, sha256: &str) -> PathBuf {
        self.dir.join("blobs").join(sha256)
    }

    /// The stored releases, oldest first; none for an empty store, and none
    /// with a warning for one that cannot be read.
    pub fn releases(&self, warnings: &mut Vec<String>) -> Vec<StoredRelease> {
        let path = self.index_path();
        let bytes = match read_regular(&path, 64 << 20) {
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

    /// Records the release whose dictionary-worthy assets are `files` (path
    /// relative to DIR, path to read, SHA-256 as scanned): each asset copied
    /// in once (and only if it still has that hash), the release appended
    /// unless it is the newest already, and the oldest releases dropped past
    /// [`KEPT_RELEASES`] or [`MAX_BYTES`] with the blobs no kept release
    /// needs. Failures are warnings: the store is a help, never a condition.
    pub fn record(&self, files: &[(String, PathBuf, [u8; 32])], warnings: &mut Vec<String>) {
        let mut warn = |what: String| warnings.push(format!("release store: {what}"));
        let mut releases = self.releases(&mut Vec::new());
        let mut stored = Vec::with_capacity(files.len());
        for (rel, path, sha) in files {
            let name = hex(sha);
            let blob = self.blob(&name);
            if !blob_ok(&blob, &name) {
                match read_regular(path, u64::MAX) {
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
            let size = std::fs::metadata(&blob).map_or(0, |m| m.len());
            stored.push(StoredFile {
                rel: rel.clone(),
                sha256: name,
                size,
            });
        }
        stored.sort();
        let id = release_id(&stored);
        if releases.last().is_some_and(|r| r.id == id) {
            return;
        }
        releases.retain(|r| r.id != id);
        releases.push(StoredRelease { id, files: stored });
        // The oldest out first, past the count or the size; never the newest.
        let size = |rs: &[StoredRelease]| -> u64 {
            let mut seen = HashSet::new();
            rs.iter()
                .flat_map(|r| &r.files)
                .filter(|f| seen.insert(&f.sha256))
                .map(|f| f.size)
                .sum()
        };
        while releases.len() > KEPT_RELEASES || (releases.len() > 1 && size(&releases) > MAX_BYTES)
        {
            releases.remove(0);
        }
        let index = Index {
            version: VERSION,
            releases,
        };
        let json = serde_json::to_vec_pretty(&index).expect("plain data");
        if let Err(e) = write_atomic(&self.index_path(), &json, None) {
            warn(format!("{e}"));
            return;
        }
        let kept: BTreeSet<&str> = index
            .releases
            .iter()
            .flat_map(|r| &r.files)
            .map(|f| f.sha256.as_str())
            .collect();
        if let Ok(entries) = std::fs::read_dir(self.dir.join("blobs")) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if !kept.contains(name.as_str()) {
                    let _ = remove_if_exists(&e.path());
                }
            }
        }
    }
}

/// Whether a stored release reads as one this version wrote: hex names,
/// paths a manifest could hold.
fn valid(r: &StoredRelease) -> bool {
    r.files.iter().all(|f| {
        f.sha256.len() == 64
            && f.sha256
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            && crate::model::path::check_relative(&f.rel).is_ok()
    })
}

/// Whether the blob at `path` is there with the content its name says.
fn blob_ok(path: &Path, name: &str) -> bool {
    read_regular(path, u64::MAX).is_ok_and(|b| hex(&sha256(&b)) == name)
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

    fn put(dir: &Path, rel: &str, body: &[u8]) -> (String, PathBuf, [u8; 32]) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, body).unwrap();
        (rel.to_string(), p, sha256(body))
    }

    #[test]
    fn keeps_the_last_releases_once_each_and_drops_what_none_needs() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(&tmp.path().join("cache"));
        let mut w = Vec::new();
        assert!(store.releases(&mut w).is_empty() && w.is_empty());
        let dist = tmp.path().join("dist");
        let shared = put(&dist, "assets/vendor-AAAA1111.js", b"vendor, never changes");
        for n in 0..6 {
            let app = put(
                &dist,
                &format!("assets/app-{n}aaaBBB.js"),
                format!("app {n}").as_bytes(),
            );
            store.record(&[shared.clone(), app.clone()], &mut w);
            // A second run on the same build is the same release.
            store.record(&[app, shared.clone()], &mut w);
        }
        assert!(w.is_empty(), "{w:?}");
        let rs = store.releases(&mut w);
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
        let store = Store::new(tmp.path());
        let dist = tmp.path().join("dist");
        let f = put(&dist, "a-AAAA1111.js", b"a");
        for bad in [&b"{not json"[..], br#"{"version": 9, "releases": []}"#] {
            std::fs::create_dir_all(store.dir.clone()).unwrap();
            std::fs::write(store.index_path(), bad).unwrap();
            let mut w = Vec::new();
            assert!(store.releases(&mut w).is_empty());
            assert!(w[0].contains("started again"), "{w:?}");
            store.record(std::slice::from_ref(&f), &mut Vec::new());
            assert_eq!(store.releases(&mut w).len(), 1);
        }
        // A blob edited in place is copied again on the next record.
        let rs = store.releases(&mut Vec::new());
        std::fs::write(store.blob(&rs[0].files[0].sha256), b"edited").unwrap();
        let g = put(&dist, "b-BBBB2222.js", b"b");
        store.record(&[f.clone(), g], &mut Vec::new());
        assert!(blob_ok(&store.blob(&hex(&f.2)), &hex(&f.2)));
    }
}
