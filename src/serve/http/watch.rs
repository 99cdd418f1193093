//! Whether the folder or the manifest a load came from may have changed
//! since, for less than the two path-walking `stat`s a request otherwise
//! makes. On Linux, an inotify watch on every directory their paths are
//! looked up in (each symlink followed, so `ln -sfn` of any link on the way
//! and a rerun's new manifest are both seen), and per request one
//! non-blocking `read` of its queue. The kernel queues an event before the
//! `rename` or write that caused it returns, so a request that arrives after a
//! change always sees it: the watch adds no window in which a change is
//! missed. Anything the watch cannot vouch for (not Linux, a file system it
//! does not know to be local, a full queue, no watches left) is "maybe
//! changed": the caller then asks with `stat`, as it does without a watch.
//!
//! Files inside the folder are not its business: each request still `stat`s
//! the files it sends ([`super::known`]).

use std::path::Path;

/// A watch on the lookups of some paths; [`Watch::changed`] drains it.
pub(super) struct Watch {
    #[cfg(target_os = "linux")]
    inner: linux::Inotify,
}

impl Watch {
    /// Watches every lookup of `paths`; `None` when that cannot be trusted
    /// (then every request must `stat`).
    pub(super) fn new(paths: &[&Path]) -> Option<Watch> {
        #[cfg(target_os = "linux")]
        {
            linux::Inotify::new(paths).map(|inner| Watch { inner })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = paths;
            None
        }
    }

    /// Whether anything that could change what the paths reach happened
    /// since the watch began or this was last asked (it forgets what it
    /// reports). Irrelevant events (other names in the same folders) are
    /// read and dropped.
    pub(super) fn changed(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.inner.changed()
        }
        #[cfg(not(target_os = "linux"))]
        true
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::{HashMap, HashSet, VecDeque};
    use std::ffi::{CString, OsString};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    use std::path::{Component, Path, PathBuf};

    /// Symlinks followed per path at most, as the kernel's `ELOOP` limit.
    const MAX_LINKS: usize = 40;

    /// File systems whose changes all pass through this kernel, so inotify
    /// sees them: not NFS, SMB, FUSE and the like (another machine's write
    /// raises no event here).
    const LOCAL: [i64; 9] = [
        0xEF53,      // ext2/3/4
        0x5846_5342, // xfs
        0x9123_683E, // btrfs
        0x0102_1994, // tmpfs
        0x794C_7630, // overlayfs
        0xF2F5_2010, // f2fs
        0x2FC1_2FC1, // zfs
        0x8584_58F6, // ramfs
        0xCA45_1A4E, // bcachefs
    ];

    pub(super) struct Inotify {
        fd: OwnedFd,
        /// Per watched folder, the names whose events matter.
        names: HashMap<i32, HashSet<Vec<u8>>>,
    }

    enum Step {
        Root,
        Up,
        Name(OsString),
    }

    /// Every (folder, name) the kernel looks up to reach `path`, each
    /// symlink's target followed; folders are real paths. Stops at the first
    /// name that is missing or not a folder (an event on it covers what may
    /// come after).
    pub(super) fn lookups(path: &Path) -> Option<Vec<(PathBuf, OsString)>> {
        let mut cur = if path.is_absolute() {
            PathBuf::from("/")
        } else {
            std::env::current_dir().ok()?
        };
        let mut todo: VecDeque<Step> = steps(path);
        let mut out = Vec::new();
        let mut links = 0;
        while let Some(step) = todo.pop_front() {
            match step {
                Step::Root => cur = PathBuf::from("/"),
                Step::Up => {
                    cur.pop();
                }
                Step::Name(name) => {
                    out.push((cur.clone(), name.clone()));
                    let next = cur.join(&name);
                    let Ok(md) = std::fs::symlink_metadata(&next) else {
                        break;
                    };
                    if md.file_type().is_symlink() {
                        links += 1;
                        if links > MAX_LINKS {
                            return None;
                        }
                        let target = std::fs::read_link(&next).ok()?;
                        for s in steps(&target).into_iter().rev() {
                            todo.push_front(s);
                        }
                    } else if md.is_dir() || todo.is_empty() {
                        cur = next;
                    } else {
                        break;
                    }
                }
            }
        }
        Some(out)
    }

    fn steps(path: &Path) -> VecDeque<Step> {
        path.components()
            .filter_map(|c| match c {
                Component::RootDir => Some(Step::Root),
                Component::ParentDir => Some(Step::Up),
                Component::Normal(n) => Some(Step::Name(n.to_os_string())),
                Component::CurDir | Component::Prefix(_) => None,
            })
            .collect()
    }

    impl Inotify {
        pub(super) fn new(paths: &[&Path]) -> Option<Inotify> {
            // SAFETY: plain syscall; the fd is owned at once.
            let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            if raw < 0 {
                return None;
            }
            // SAFETY: `raw` is a fresh descriptor nobody else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(raw) };
            let mut names: HashMap<i32, HashSet<Vec<u8>>> = HashMap::new();
            let mask = libc::IN_CREATE
                | libc::IN_DELETE
                | libc::IN_MOVED_FROM
                | libc::IN_MOVED_TO
                | libc::IN_ATTRIB
                | libc::IN_MODIFY
                | libc::IN_CLOSE_WRITE
                | libc::IN_DELETE_SELF
                | libc::IN_MOVE_SELF
                | libc::IN_ONLYDIR
                | libc::IN_DONT_FOLLOW;
            for path in paths {
                for (dir, name) in lookups(path)? {
                    if !local(&dir) {
                        return None;
                    }
                    let c = CString::new(dir.into_os_string().into_vec()).ok()?;
                    // SAFETY: `c` is a NUL-terminated path that outlives the call.
                    let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), c.as_ptr(), mask) };
                    if wd < 0 {
                        return None;
                    }
                    names.entry(wd).or_default().insert(name.into_vec());
                }
            }
            Some(Inotify { fd, names })
        }

        pub(super) fn changed(&self) -> bool {
            // Aligned for `inotify_event`; room for many events a read.
            let mut buf = [0u64; 1024];
            let mut changed = false;
            loop {
                // SAFETY: reads at most the buffer's size into it.
                let n = unsafe {
                    libc::read(
                        self.fd.as_raw_fd(),
                        buf.as_mut_ptr().cast(),
                        std::mem::size_of_val(&buf),
                    )
                };
                if n < 0 {
                    return match std::io::Error::last_os_error().kind() {
                        std::io::ErrorKind::WouldBlock => changed,
                        std::io::ErrorKind::Interrupted => continue,
                        _ => true,
                    };
                }
                if n == 0 {
                    return true;
                }
                // SAFETY: the kernel wrote `n` bytes of whole events.
                let bytes =
                    unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n as usize) };
                changed |= self.relevant(bytes);
            }
        }

        /// Whether any of the events in `bytes` touches a watched name, or
        /// the watch itself (a folder gone or moved, the queue overflowed).
        fn relevant(&self, mut bytes: &[u8]) -> bool {
            let head = std::mem::size_of::<libc::inotify_event>();
            let mut any = false;
            while bytes.len() >= head {
                // SAFETY: a whole event header is there; read unaligned.
                let ev: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) };
                let end = (head + ev.len as usize).min(bytes.len());
                let name = &bytes[head..end];
                let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
                let gone = libc::IN_Q_OVERFLOW
                    | libc::IN_IGNORED
                    | libc::IN_DELETE_SELF
                    | libc::IN_MOVE_SELF
                    | libc::IN_UNMOUNT;
                if ev.mask & gone != 0 || self.names.get(&ev.wd).is_none_or(|n| n.contains(name)) {
                    any = true;
                }
                bytes = &bytes[end..];
            }
            any
        }
    }

    fn local(dir: &Path) -> bool {
        let Ok(c) = CString::new(dir.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: statfs fills the zeroed struct; `c` outlives the call.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
            return false;
        }
        LOCAL.contains(&(st.f_type as i64))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// A link on the way is followed: its folder and its target's are
        /// both looked up; a missing name ends the walk.
        #[test]
        fn lookups_follow_links() {
            let d = tempfile::tempdir().unwrap();
            let root = std::fs::canonicalize(d.path()).unwrap();
            std::fs::create_dir(root.join("r1")).unwrap();
            std::os::unix::fs::symlink("r1", root.join("current")).unwrap();
            let got = lookups(&root.join("current/m.json")).unwrap();
            let tail: Vec<_> = got
                .iter()
                .filter(|(d, _)| d.starts_with(&root))
                .map(|(d, n)| (d.strip_prefix(&root).unwrap().to_path_buf(), n.clone()))
                .collect();
            assert_eq!(
                tail,
                [
                    (PathBuf::new(), OsString::from("current")),
                    (PathBuf::new(), OsString::from("r1")),
                    (PathBuf::from("r1"), OsString::from("m.json")),
                ]
            );
            let got = lookups(&root.join("gone/deeper/m.json")).unwrap();
            assert_eq!(got.last().unwrap().1, "gone");
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Writes to other names are nothing; a rerun's manifest, an `ln -sfn`
    /// swap of the folder, and a rename of the folder's target are each seen.
    #[test]
    fn sees_what_changes_the_paths_and_nothing_else() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        for r in ["r1", "r2"] {
            std::fs::create_dir(root.join(r)).unwrap();
            std::fs::write(root.join(r).join("m.json"), r).unwrap();
        }
        let current = root.join("current");
        std::os::unix::fs::symlink("r1", &current).unwrap();
        let manifest = current.join("m.json");
        let Some(w) = Watch::new(&[&current, &manifest]) else {
            // Not a file system the watch trusts: nothing to test here.
            eprintln!("skipped: {} is not on a local file system", root.display());
            return;
        };
        assert!(!w.changed());
        std::fs::write(root.join("r1/app.js.br"), "x").unwrap();
        std::fs::write(root.join("r2/m.json"), "other release").unwrap();
        std::fs::write(root.join("unrelated"), "x").unwrap();
        assert!(!w.changed(), "other names are not changes");

        std::fs::write(root.join("r1/m.json.tmp"), "rerun").unwrap();
        std::fs::rename(root.join("r1/m.json.tmp"), root.join("r1/m.json")).unwrap();
        assert!(w.changed());
        assert!(!w.changed(), "reported once");

        std::os::unix::fs::symlink("r2", root.join("current.new")).unwrap();
        std::fs::rename(root.join("current.new"), &current).unwrap();
        assert!(w.changed(), "a swapped link");

        let w = Watch::new(&[&current, &manifest]).unwrap();
        std::fs::rename(root.join("r2"), root.join("r2-old")).unwrap();
        assert!(w.changed(), "the link's target moved away");
    }
}
