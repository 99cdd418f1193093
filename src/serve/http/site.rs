//! The folder `precompress serve` serves and the manifest loaded from it:
//! reloaded when precompress reruns or a symlinked folder is swapped, every
//! listed file stamped at load, so no request mixes two releases' files or
//! sends a representation that changed since. [`Disk`] is the decisions'
//! lookup ([`crate::serve::route::Lookup`], [`crate::serve::answer::Open`])
//! over one load.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use super::body::Opened;
use super::known::{stamp_of, Files, Stamp};
use super::watch::Watch;
use super::ServeError;
use crate::serve::answer::{Open, Plain};
use crate::serve::path::resolve;
use crate::serve::route::{Lookup, Node};
use crate::serve::{Index, Representation};

pub(super) struct Site {
    /// The folder as given: resolved again whenever the manifest changes, so
    /// `current -> release-2` swapped in by `ln -sfn` is served from then on.
    pub(super) given: PathBuf,
    /// The manifest, watched for reruns (and, through a symlinked folder,
    /// for swaps).
    pub(super) manifest: PathBuf,
    /// `--base`, over the manifest's.
    pub(super) base: Option<String>,
    /// `--spa`: unknown routes get `index.html` ([`fallback`]).
    pub(super) spa: std::sync::atomic::AtomicBool,
    pub(super) loaded: RwLock<Arc<Loaded>>,
    /// Held by the one request that reloads the manifest; the others that
    /// know of a change wait for it rather than answer from the old load.
    pub(super) reloading: std::sync::Mutex<()>,
    /// Vouches, when it can, that neither path changed: then a request
    /// makes no `stat` of them. `None`: every request asks.
    pub(super) watch: std::sync::Mutex<Option<Watch>>,
    /// How many changes the watch has raised, and how many of them a
    /// request has since proved loaded (the folder and the manifest found as
    /// the current load has them, or loaded anew). While one is not, no
    /// request takes the watch's word: a change one request saw is every
    /// request's until its reload is done.
    pub(super) changes: Changes,
}

/// [`Site::changes`].
#[derive(Debug, Default)]
pub(super) struct Changes {
    seen: std::sync::atomic::AtomicU64,
    settled: std::sync::atomic::AtomicU64,
}

/// The index and what the files looked like when it was loaded. A request
/// takes one and uses it throughout, so it never mixes two releases' files.
pub(super) struct Loaded {
    /// The folder, canonical (so `resolve` can compare prefixes) as it was at
    /// load: a swapped symlink gives the next load another.
    pub(super) root: PathBuf,
    /// The manifest's canonical path (where it would be, if missing), to
    /// refuse serving it.
    manifest_canonical: PathBuf,
    pub(super) index: Index,
    /// What `stat` said of the folder as given at load: a swapped symlink
    /// or a replaced folder gives another.
    root_id: Option<FolderId>,
    /// The manifest's stamp, `None` when there was none.
    pub(super) stamp: Option<Stamp>,
    /// Every listed file (sources, variants, deltas) that was a regular file
    /// inside the folder at load: where, its stamp then, small bodies.
    files: Files,
}

/// Which folder a path reaches: device and inode on Unix (one `stat`), the
/// canonical path elsewhere.
#[cfg(unix)]
type FolderId = (u64, u64);
#[cfg(not(unix))]
type FolderId = PathBuf;

fn folder_id(given: &Path) -> Option<FolderId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let md = std::fs::metadata(given).ok()?;
        Some((md.dev(), md.ino()))
    }
    #[cfg(not(unix))]
    std::fs::canonicalize(given).ok()
}

impl Site {
    /// Resolves the folder, loads (or, with no manifest, an empty index) and
    /// stats what it lists.
    pub(super) fn load(
        given: &Path,
        manifest: &Path,
        base: Option<&str>,
    ) -> Result<Loaded, ServeError> {
        let root = std::fs::canonicalize(given)
            .ok()
            .filter(|p| p.is_dir())
            .ok_or_else(|| ServeError::Root {
                path: given.to_path_buf(),
            })?;
        let stamp = stamp_of(manifest);
        let mut index = if stamp.is_some() {
            Index::load(&root, Some(manifest))?
        } else {
            Index::default()
        };
        if let Some(b) = base {
            if let Some(w) = crate::serve::base_mismatch(&index, b) {
                eprintln!("precompress serve: warning: {w}");
            }
            index.set_base(b);
        }
        let root = &root;
        let root_id = folder_id(root);
        let manifest_canonical =
            std::fs::canonicalize(manifest).unwrap_or_else(|_| manifest.to_path_buf());
        let mut files = Files::default();
        for (_, entry) in index.iter() {
            let deltas = entry.deltas.iter().map(|(_, r)| r);
            for r in std::iter::once(&entry.identity)
                .chain(&entry.variants)
                .chain(deltas)
            {
                // Only what resolves inside the folder: a file reached by
                // its stamp later is one that was inside then.
                if let Some(p) = resolve(root, &r.path).filter(|p| *p != manifest_canonical) {
                    files.insert(root, &r.path, p);
                }
            }
        }
        hold_to_hash(&mut index, &files);
        Ok(Loaded {
            root: root.clone(),
            manifest_canonical,
            root_id,
            index,
            stamp,
            files,
        })
    }

    /// The index, reloaded first if the manifest or the folder changed
    /// since. One request reloads; the others that know of a change wait for
    /// it: none answers from a load it knows is old (a swapped link's old
    /// target is still there, unchanged, for the per-request checks).
    pub(super) fn current(&self) -> Arc<Loaded> {
        // Read after the watch is asked: a reload that ends in between is
        // the one the answer must come from.
        if self.quiet() {
            return self.loaded.read().unwrap().clone();
        }
        let loaded = self.loaded.read().unwrap().clone();
        // The changes seen before these stats are what they prove loaded.
        let seen = self.changes.seen.load(Ordering::SeqCst);
        if self.as_loaded(&loaded) {
            self.changes.settled.fetch_max(seen, Ordering::SeqCst);
            return loaded;
        }
        let _reloading = self.reloading.lock().unwrap_or_else(|e| e.into_inner());
        // Another request may have reloaded while this one waited.
        let seen = self.changes.seen.load(Ordering::SeqCst);
        let loaded = self.loaded.read().unwrap().clone();
        if self.as_loaded(&loaded) {
            self.changes.settled.fetch_max(seen, Ordering::SeqCst);
            return loaded;
        }
        let now = stamp_of(&self.manifest);
        let fresh = match Site::load(&self.given, &self.manifest, self.base.as_deref()) {
            Ok(fresh) => {
                eprintln!(
                    "precompress serve: {} changed: reloaded, {} assets from {}",
                    self.manifest.display(),
                    fresh.index.len(),
                    fresh.root.display()
                );
                fresh
            }
            Err(e) => {
                // Not tried again until the manifest changes again.
                eprintln!("precompress serve: warning: {e}; keeping the manifest loaded before");
                Loaded {
                    root: loaded.root.clone(),
                    manifest_canonical: loaded.manifest_canonical.clone(),
                    root_id: loaded.root_id,
                    index: loaded.index.clone(),
                    stamp: now,
                    files: loaded.files.clone(),
                }
            }
        };
        let fresh = Arc::new(fresh);
        *self.loaded.write().unwrap() = fresh.clone();
        self.changes.settled.fetch_max(seen, Ordering::SeqCst);
        fresh
    }

    /// The manifest has the stamp `loaded` recorded and the folder as given
    /// is the one it loaded (one `stat` each; not a `canonicalize`, a
    /// syscall per component, per request): a manifest named with
    /// --manifest outside a swapped symlink does not change with it.
    fn as_loaded(&self, loaded: &Loaded) -> bool {
        stamp_of(&self.manifest) == loaded.stamp
            && loaded.root_id.is_some()
            && folder_id(&self.given) == loaded.root_id
    }
}

impl Site {
    /// The watch on what a load depends on: the folder as given and the
    /// manifest.
    pub(super) fn watch(given: &Path, manifest: &Path) -> Option<Watch> {
        Watch::new(&[given, manifest])
    }

    /// Whether the watch vouches that the folder and the manifest are as
    /// when last asked. On an event it is made anew before the caller's
    /// `stat`s, so a change after them raises an event too.
    fn quiet(&self) -> bool {
        // Under the lock that counts a change seen: a request asking while
        // another drains the watch learns of what it drained.
        let mut watch = self.watch.lock().unwrap_or_else(|e| e.into_inner());
        let c = &self.changes;
        if c.settled.load(Ordering::SeqCst) < c.seen.load(Ordering::SeqCst) {
            return false;
        }
        match &*watch {
            Some(w) if !w.changed() => true,
            Some(_) => {
                c.seen.fetch_add(1, Ordering::SeqCst);
                *watch = Site::watch(&self.given, &self.manifest);
                false
            }
            None => false,
        }
    }
}

impl fmt::Debug for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Site").field("root", &self.given).finish()
    }
}

/// The files of one load, as the decisions ask for them.
pub(super) struct Disk<'a>(pub(super) &'a Loaded);

/// A file [`Disk`] found: its canonical path, and whether this request's
/// `stat` found it as it was at load (then [`unchanged`] need not ask again).
#[derive(Debug)]
pub(super) struct Found {
    path: PathBuf,
    as_loaded: bool,
}

impl Lookup for Disk<'_> {
    type File = Found;

    fn node(&self, key: &str) -> Node<Found> {
        // A listed file still as it was at load: one stat.
        if let Some(k) = self.0.files.current(key) {
            return Node::File(Found {
                path: k.path.clone(),
                as_loaded: true,
            });
        }
        let Some(found) = resolve(&self.0.root, key) else {
            return Node::Missing;
        };
        // One stat for both questions.
        match std::fs::metadata(&found).map(|m| m.file_type()) {
            Ok(k) if k.is_dir() => Node::Folder,
            Ok(k) if k.is_file() => Node::File(Found {
                path: found,
                as_loaded: false,
            }),
            _ => Node::Missing,
        }
    }

    fn is_manifest(&self, file: &Found) -> bool {
        self.0.manifest_canonical == file.path
    }
}

impl Open for Disk<'_> {
    type Opened = Opened;

    fn open(&self, key: &str, r: &Representation, file: Option<Found>) -> Result<Opened, String> {
        let loaded = self.0;
        // Identity is the source itself: open_checked makes the same check.
        // A source the route found as it was at load needs no second stat.
        if r.coding.is_some() && !file.as_ref().is_some_and(|f| f.as_loaded) {
            unchanged(loaded, key)?;
        }
        let known = loaded.files.stamp(&r.path);
        if r.size > 0 && known.is_some_and(|s| s.size() == r.size) {
            // Identity the route found as loaded: its stat was this request's.
            let found = r.coding.is_none() && file.as_ref().is_some_and(|f| f.as_loaded);
            let now = SystemTime::now();
            let kept = if found {
                loaded.files.body_as_found(&r.path, now)
            } else {
                loaded.files.body(&r.path, now)
            };
            if let Some(b) = kept {
                return Ok(Opened::Kept(b));
            }
        }
        let path = match (r.coding, file) {
            // Identity is the file the route found: not resolved again.
            (None, Some(f)) => f.path,
            // open_checked's stamp check proves it the very file that was
            // inside the folder at load: no need to resolve it again.
            _ if known.is_some() => loaded.root.join(&r.path),
            _ => resolve(&loaded.root, &r.path).ok_or("missing or outside the folder")?,
        };
        open_checked(loaded, &path, &r.path, r.size).map(Opened::File)
    }

    /// The route's `stat` of the source, made for this request, gave the
    /// stamp it had at load.
    fn source_unchanged(&self, _key: &str, file: Option<&Found>) -> bool {
        file.is_some_and(|f| f.as_loaded)
    }

    fn open_plain(&self, key: &str) -> io::Result<Plain<Opened>> {
        let path = resolve(&self.0.root, key).ok_or(io::ErrorKind::NotFound)?;
        let file = crate::fsutil::open_to_read(&path)?;
        let md = file.metadata()?;
        Ok(Plain {
            len: md.len(),
            modified: md.modified().ok(),
            file: Opened::File(file),
        })
    }
}

/// The source of `key` still has the size and mtime it had when the index
/// was loaded (when its content was checked against the manifest).
fn unchanged(loaded: &Loaded, key: &str) -> Result<(), String> {
    let then = loaded.files.stamp(key);
    match (then, stamp_of(&loaded.root.join(key))) {
        (Some(a), Some(b)) if *a == b => Ok(()),
        _ => Err(format!(
            "{key} changed after precompress ran (its variants would be stale)"
        )),
    }
}

/// Opens `path` (the resolved `rel`) and checks it still has the manifest's
/// size and the mtime it had when the index was loaded.
fn open_checked(
    loaded: &Loaded,
    path: &Path,
    rel: &str,
    size: u64,
) -> Result<std::fs::File, String> {
    let file = crate::fsutil::open_to_read(path).map_err(|e| e.to_string())?;
    let md = file.metadata().map_err(|e| e.to_string())?;
    let len = md.len();
    if len != size {
        return Err(format!(
            "{len} bytes on disk, {size} in the manifest (changed since precompress ran)"
        ));
    }
    let now = Stamp::of(&md);
    if now.is_none() || now.as_ref() != loaded.files.stamp(rel) {
        return Err("rewritten since the manifest was loaded".into());
    }
    Ok(file)
}

/// Holds each source stamped in `files` to the file [`Index::load`] hashed:
/// one edited since (of the same size, or swapped) would otherwise be
/// recorded as checked, and its old variants and ETag sent for the new
/// bytes until the next manifest. Such a source is left out: a plain file.
fn hold_to_hash(index: &mut Index, files: &Files) {
    let changed: Vec<String> = index
        .iter()
        .filter(|(key, _)| {
            let hashed = index.source_metadata(key).and_then(Stamp::of);
            hashed.is_none() || files.stamp(key) != hashed.as_ref()
        })
        .map(|(key, _)| key.to_string())
        .collect();
    for key in &changed {
        index.forget(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #46: at load the sources were hashed first and stamped
    /// afterwards; a same-size edit between the two was recorded as checked,
    /// and serve sent the old page's variants and ETag for the new bytes.
    #[test]
    fn a_source_edited_after_its_hash_is_never_recorded_as_checked() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let body = b"<!doctype html><p>one</p>".repeat(20);
        std::fs::write(root.join("index.html"), &body).unwrap();
        let b3 = blake3::hash(&body).to_hex().to_string();
        let m = format!(
            r#"{{"version": 1, "generator": "t", "settings": {{}}, "files": {{"index.html": {{"size": {}, "blake3": "{b3}", "sha256": "x", "content_type": "text/html", "etag": "\"{}\"", "encodings": [], "skipped": {{}}}}}}}}"#,
            body.len(),
            &b3[..32]
        );
        let manifest = root.join("precompress-manifest.json");
        std::fs::write(&manifest, m).unwrap();
        let stamped = |index: &Index| {
            let mut files = Files::default();
            files.insert(&root, "index.html", root.join("index.html"));
            let mut index = index.clone();
            hold_to_hash(&mut index, &files);
            index.get("index.html").is_some()
        };
        let index = Index::load(&root, Some(&manifest)).unwrap();
        assert!(stamped(&index), "unchanged: checked");
        // Edited after the hash, before the stamp: the same size, new bytes.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(
            root.join("index.html"),
            b"<!doctype html><p>two</p>".repeat(20),
        )
        .unwrap();
        assert!(!stamped(&index), "edited after its hash: left out");
    }
}
