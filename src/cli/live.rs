//! `--dictionary-from https://…`: each site's release taken into a folder of
//! its own under the temporary folder before the run or the check reads it
//! (the library's `probe::previous`), removed when done. A site that cannot
//! be used is a warning naming it and why; the build goes on without it.

use std::path::{Path, PathBuf};

use precompressor::probe::previous::{take_for_build, Bounds};

/// Whether a `--dictionary-from` value names a site, not a folder.
pub fn is_site(given: &Path) -> bool {
    given
        .to_str()
        .is_some_and(|s| s.starts_with("http://") || s.starts_with("https://"))
}

/// The folders the sites' releases were taken into, removed on drop.
#[derive(Default)]
pub struct Taken {
    /// Those that hold a release (at least one file taken): a site that
    /// gave nothing is no earlier release, so the run keeps the deltas
    /// still right instead of calling them stale.
    pub folders: Vec<PathBuf>,
    made: Vec<tempfile::TempDir>,
}

/// The start of a live release's temporary folder's name.
const PREFIX: &str = "precompress-previous-";

/// A new folder of ours for a site's release: under the temporary folder,
/// or beside DIR when that lies inside DIR (the run would publish the
/// release it fetched). A new random name each time, made with mode 0700
/// and never over an existing file, folder or link, so no other user's
/// folder is written into and no two runs share one.
fn new_folder(dir: &Path) -> std::io::Result<tempfile::TempDir> {
    let tmp = std::env::temp_dir();
    let inside = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a.starts_with(b),
        _ => false,
    };
    let base = if inside(&tmp, dir) {
        dir.canonicalize()?
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or(tmp)
    } else {
        tmp
    };
    remove_abandoned(&base);
    let prefix = format!("{PREFIX}{}-", std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder.tempdir_in(base)
}

/// How old a folder of a run that is gone must be before a later run
/// removes it: a run on another machine or container sharing the folder
/// (whose process this one cannot see) is long done by then.
const ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Removes what runs that were killed left in `base` (a release of up to
/// 256 MiB each): folders of ours ([`PREFIX`], the run's PID, a random
/// tail), real folders owned by this user, whose run is gone and that are
/// older than [`ABANDONED_AFTER`]. Nothing else is touched.
fn remove_abandoned(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|r| r.split_once('-'))
            .and_then(|(p, _)| p.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(md) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        let old = md
            .modified()
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > ABANDONED_AFTER);
        if md.is_dir() && old && ours(&md) && !alive(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(unix)]
fn ours(md: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid has no preconditions and cannot fail.
    md.uid() == unsafe { libc::getuid() }
}

#[cfg(not(unix))]
fn ours(_: &std::fs::Metadata) -> bool {
    true
}

/// Whether a process `pid` runs here (or may: unknown counts as alive).
#[cfg(unix)]
fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn alive(_: u32) -> bool {
    true
}

/// Splits `given` into the folders it names and the sites, whose releases
/// (what pairs with DIR's files) are taken into temporary folders. What
/// happened is said on stderr, one line per site, unless `quiet` and fine.
pub fn take_sites(given: &[PathBuf], dir: &Path, quiet: bool) -> (Vec<PathBuf>, Taken) {
    let mut folders = Vec::new();
    let mut taken = Taken::default();
    for g in given {
        if !is_site(g) {
            folders.push(g.clone());
            continue;
        }
        let site = g.to_string_lossy();
        let made = match new_folder(dir) {
            Ok(t) => t,
            Err(e) => {
                eprintln!(
                    "precompress: warning: --dictionary-from: cannot make a temporary folder for {}: {e}; no deltas against the live site",
                    precompressor::probe::redact_userinfo(&site)
                );
                continue;
            }
        };
        let into = made.path().to_path_buf();
        taken.made.push(made);
        match take_for_build(&site, dir, &into, &Bounds::default()) {
            Ok(t) => {
                if t.fetched > 0 {
                    taken.folders.push(into.clone());
                }
                if !quiet || !t.notes.is_empty() {
                    eprintln!(
                        "precompress: the previous release at {}: {} of the {} dictionaries it lists pair with this build, {} taken ({} bytes)",
                        t.site, t.wanted, t.listed, t.fetched, t.bytes
                    );
                }
                for n in &t.notes {
                    eprintln!("precompress: warning: {}: {n}", t.site);
                }
            }
            Err(e) => eprintln!(
                "precompress: warning: {e}; this build gets no deltas against it (every other variant is written)"
            ),
        }
    }
    (folders, taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #46: the folder was `$TMPDIR/precompress-previous-<PID>-<i>`,
    /// made after an ignored removal and written through links: one another
    /// local user made first got the victim's file overwritten. Now each is
    /// new, private, and never one that exists.
    #[test]
    fn each_live_release_gets_a_new_private_folder() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (
            new_folder(dir.path()).unwrap(),
            new_folder(dir.path()).unwrap(),
        );
        assert_ne!(a.path(), b.path());
        for t in [&a, &b] {
            let name = t.path().file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.starts_with(PREFIX), "{name}");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(t.path()).unwrap().permissions().mode();
                assert_eq!(mode & 0o077, 0, "{mode:o}");
            }
        }
        let gone = a.path().to_path_buf();
        drop(a);
        assert!(!gone.exists(), "removed when done");
    }

    /// Issue #46: a cancelled run left up to 256 MiB in TMPDIR that no
    /// later run removed. A later run removes a folder of ours whose run is
    /// gone and that is old enough; a live run's, a young one, another
    /// name, or a link, it leaves.
    #[cfg(unix)]
    #[test]
    fn a_later_run_removes_what_a_killed_run_left() {
        let base = tempfile::tempdir().unwrap();
        let old = std::time::SystemTime::now() - ABANDONED_AFTER * 2;
        let make = |name: &str, age: Option<std::time::SystemTime>| {
            let p = base.path().join(name);
            std::fs::create_dir(&p).unwrap();
            std::fs::write(p.join("a.js"), "x").unwrap();
            if let Some(t) = age {
                std::fs::File::open(&p).unwrap().set_modified(t).unwrap();
            }
            p
        };
        // A PID no process has (above the kernel's pid_max).
        let dead = make(&format!("{PREFIX}4194305-abcdef"), Some(old));
        let running = make(&format!("{PREFIX}{}-abcdef", std::process::id()), Some(old));
        let young = make(&format!("{PREFIX}4194305-young1"), None);
        let other = make("precompress-other-4194305-x", Some(old));
        let link = base.path().join(format!("{PREFIX}4194305-link01"));
        std::os::unix::fs::symlink(&other, &link).unwrap();
        remove_abandoned(base.path());
        assert!(!dead.exists());
        for kept in [&running, &young, &other, &link] {
            assert!(
                std::fs::symlink_metadata(kept).is_ok(),
                "{}",
                kept.display()
            );
        }
        assert!(other.join("a.js").exists());
    }
}
