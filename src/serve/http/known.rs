//! What one load knows of the files its manifest lists: where each resolved
//! inside the folder, its [`Stamp`] then, and for a small one its bytes, kept
//! in memory while the file on disk keeps that stamp. It lets a request for a
//! listed file skip what nginx cannot: resolving the path again
//! (`canonicalize`, a syscall per component), opening and reading.
//!
//! Never stale, by one rule: a file is answered from here only when a `stat`
//! of its path, made for this request, gives the stamp it had at load (size,
//! mtime, and on Unix device, inode and ctime). A file rewritten in place gets a
//! new ctime, a replaced one a new inode, and neither can be set back; a path
//! that now reaches another file (a symlink swapped, a parent folder replaced)
//! reaches another inode. Whatever the stamp does not match goes the slow way,
//! exactly as before: resolved, opened, checked, or sent uncompressed.
//!
//! The one hole a stamp has is a write in the same clock tick as the stat that
//! took it (the file's times then do not move): a file whose mtime or ctime is
//! within [`RACY`] of now is not kept (the "racy git" rule) but read from disk
//! for this request; once older, any later write moves its ctime.
//!
//! Memory: bodies of at most [`KEEP_MAX`] bytes are kept, [`KEEP_BUDGET`] in all
//! per load (first come, first kept); larger files are read or streamed from
//! disk per request. A reload drops the old load's bodies with it.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use bytes::Bytes;

/// A body up to this size is kept in memory after its first request.
pub(super) const KEEP_MAX: u64 = 256 * 1024;
/// At most this much is kept in memory per load.
pub(super) const KEEP_BUDGET: u64 = 64 * 1024 * 1024;
/// A file changed this recently is not kept in memory yet: a write in the
/// same tick of the file system's clock would not show in its stamp (2 s
/// covers file systems with one- and two-second times).
pub(super) const RACY: Duration = Duration::from_secs(2);

/// What tells a file was replaced or rewritten since it was last seen: size
/// and mtime, and on Unix the inode and ctime too. Size and mtime alone miss
/// an atomic replacement of the same size with the mtime kept (`rsync -a`,
/// `cp -p`, a `SOURCE_DATE_EPOCH` build): a new file has a new inode, and any
/// write or rename sets the ctime, which no tool can set back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    size: u64,
    modified: SystemTime,
    #[cfg(unix)]
    inode: (u64, u64),
    #[cfg(unix)]
    changed: (i64, i64),
}

impl Stamp {
    pub(super) fn size(&self) -> u64 {
        self.size
    }

    pub(super) fn of(md: &std::fs::Metadata) -> Option<Stamp> {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Some(Stamp {
            size: md.len(),
            modified: md.modified().ok()?,
            #[cfg(unix)]
            inode: (md.dev(), md.ino()),
            #[cfg(unix)]
            changed: (md.ctime(), md.ctime_nsec()),
        })
    }

    /// Whether the file was modified or changed within [`RACY`] of `at`, or
    /// after it.
    fn racy(&self, at: SystemTime) -> bool {
        #[cfg(unix)]
        let changed = {
            let (s, ns) = self.changed;
            let since_epoch = Duration::new(s.max(0) as u64, ns.clamp(0, 999_999_999) as u32);
            SystemTime::UNIX_EPOCH + since_epoch
        };
        #[cfg(not(unix))]
        let changed = self.modified;
        [self.modified, changed]
            .iter()
            .any(|t| at.duration_since(*t).map_or(true, |d| d < RACY))
    }
}

/// A file's stamp, `None` if it cannot be stat'ed.
pub(super) fn stamp_of(path: &Path) -> Option<Stamp> {
    Stamp::of(&std::fs::metadata(path).ok()?)
}

/// One listed file as a load saw it.
#[derive(Debug, Clone)]
pub(super) struct Known {
    /// Where it resolved, canonical, inside the folder.
    pub(super) path: PathBuf,
    /// The folder joined with its key: the path each request `stat`s.
    joined: PathBuf,
    pub(super) stamp: Stamp,
    /// Small enough to be kept.
    keep: bool,
    body: OnceLock<Bytes>,
}

/// The listed files of one load that resolved inside its folder to a regular
/// file, by path relative to the folder; and how much of them is in memory.
#[derive(Debug, Default)]
pub(super) struct Files {
    map: HashMap<String, Known>,
    kept: AtomicU64,
}

impl Clone for Files {
    fn clone(&self) -> Files {
        Files {
            map: self.map.clone(),
            kept: AtomicU64::new(self.kept.load(Ordering::Relaxed)),
        }
    }
}

impl Files {
    /// Records `rel` of `root`, resolved to the canonical `path`, if it is a
    /// regular file.
    pub(super) fn insert(&mut self, root: &Path, rel: &str, path: PathBuf) {
        let Ok(md) = std::fs::metadata(&path) else {
            return;
        };
        let Some(stamp) = Stamp::of(&md).filter(|_| md.is_file()) else {
            return;
        };
        let keep = md.len() <= KEEP_MAX;
        let known = Known {
            path,
            joined: root.join(rel),
            stamp,
            keep,
            body: OnceLock::new(),
        };
        self.map.insert(rel.to_string(), known);
    }

    /// The stamp `rel` had at load, if it was a listed regular file then.
    pub(super) fn stamp(&self, rel: &str) -> Option<&Stamp> {
        self.map.get(rel).map(|k| &k.stamp)
    }

    /// `rel` as it was at load, if the folder joined with `rel` still
    /// reaches that very file, unchanged: one `stat`.
    pub(super) fn current(&self, rel: &str) -> Option<&Known> {
        let k = self.map.get(rel)?;
        (stamp_of(&k.joined) == Some(k.stamp)).then_some(k)
    }

    /// The bytes of `rel` from memory, when they are kept and the file is
    /// unchanged ([`Files::current`]); else reads them once, if they may be
    /// kept (small, changed at least [`RACY`] before `now`, within the
    /// budget). `None`: read it from disk.
    pub(super) fn body(&self, rel: &str, now: SystemTime) -> Option<Bytes> {
        self.body_of(self.current(rel)?, now)
    }

    /// [`Files::body`] of `rel` when this request's own `stat` already
    /// found it as it was at load ([`Files::current`]): no second `stat`.
    pub(super) fn body_as_found(&self, rel: &str, now: SystemTime) -> Option<Bytes> {
        self.body_of(self.map.get(rel)?, now)
    }

    fn body_of(&self, k: &Known, now: SystemTime) -> Option<Bytes> {
        if let Some(b) = k.body.get() {
            return Some(b.clone());
        }
        if !k.keep || k.stamp.racy(now) {
            return None;
        }
        let size = k.stamp.size;
        if self.kept.fetch_add(size, Ordering::Relaxed) + size > KEEP_BUDGET {
            self.kept.fetch_sub(size, Ordering::Relaxed);
            return None;
        }
        match read_as(&k.joined, &k.stamp) {
            Some(b) => {
                // Two first requests may both read: one copy is kept.
                if k.body.set(b.clone()).is_err() {
                    self.kept.fetch_sub(size, Ordering::Relaxed);
                }
                Some(b)
            }
            None => {
                self.kept.fetch_sub(size, Ordering::Relaxed);
                None
            }
        }
    }
}

/// The bytes of `path` if the file opened has `stamp` before and after being
/// read (a write while reading changes its ctime).
fn read_as(path: &Path, stamp: &Stamp) -> Option<Bytes> {
    let mut file = crate::fsutil::open_to_read(path).ok()?;
    let same = |f: &std::fs::File| f.metadata().ok().as_ref().and_then(Stamp::of) == Some(*stamp);
    if !same(&file) {
        return None;
    }
    let mut buf = Vec::with_capacity(stamp.size as usize);
    file.by_ref()
        .take(stamp.size + 1)
        .read_to_end(&mut buf)
        .ok()?;
    (buf.len() as u64 == stamp.size && same(&file)).then(|| Bytes::from(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(dir: &Path, rel: &str) -> Files {
        let mut f = Files::default();
        f.insert(dir, rel, std::fs::canonicalize(dir.join(rel)).unwrap());
        f
    }

    /// A time past RACY of what the tests write.
    fn later() -> SystemTime {
        SystemTime::now() + Duration::from_secs(60)
    }

    /// Kept bytes are sent only while the file keeps its stamp: rewritten in
    /// place (same size) or replaced (same size and mtime, new inode), the
    /// next answer is not the old body.
    #[test]
    fn kept_bytes_follow_the_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.js.br");
        std::fs::write(&p, b"one").unwrap();
        let files = loaded(d.path(), "a.js.br");
        assert_eq!(files.body("a.js.br", later()).as_deref(), Some(&b"one"[..]));
        // Kept: the file is not read again while unchanged.
        assert!(files.map["a.js.br"].body.get().is_some());
        assert_eq!(files.body("a.js.br", later()).as_deref(), Some(&b"one"[..]));

        // Past the file system clock's tick, as any later write is.
        std::thread::sleep(Duration::from_millis(50));
        std::fs::write(&p, b"two").unwrap();
        assert_eq!(files.body("a.js.br", later()), None);
        assert!(files.current("a.js.br").is_none());

        // A replacement keeping size and mtime: a new inode.
        let files = loaded(d.path(), "a.js.br");
        assert_eq!(files.body("a.js.br", later()).as_deref(), Some(&b"two"[..]));
        let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
        let q = d.path().join("new");
        std::fs::write(&q, b"333").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&q)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        std::fs::rename(&q, &p).unwrap();
        assert_eq!(files.body("a.js.br", later()), None);
    }

    /// A file changed within RACY of now is not kept yet (read from disk,
    /// kept once older); large files and anything past the budget are never
    /// kept; missing files and folders are not known.
    #[test]
    fn what_is_not_kept() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("new.js"), b"fresh").unwrap();
        let files = loaded(d.path(), "new.js");
        assert_eq!(files.body("new.js", SystemTime::now()), None);
        assert!(files.current("new.js").is_some());
        assert!(files.body("new.js", later()).is_some());

        std::fs::write(d.path().join("big.js"), vec![b'x'; KEEP_MAX as usize + 1]).unwrap();
        let files = loaded(d.path(), "big.js");
        assert_eq!(files.body("big.js", later()), None);

        std::fs::write(d.path().join("small.js"), b"s").unwrap();
        let files = loaded(d.path(), "small.js");
        files.kept.store(KEEP_BUDGET, Ordering::Relaxed);
        assert_eq!(files.body("small.js", later()), None);

        let mut files = Files::default();
        files.insert(d.path(), "gone.js", d.path().join("gone.js"));
        files.insert(d.path(), "dir", d.path().to_path_buf());
        assert!(files.map.is_empty());
    }
}
