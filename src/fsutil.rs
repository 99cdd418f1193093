//! Writing files so that a reader (a web server) only ever sees the old file
//! or the whole new one.

use std::fs::{self, FileTimes, Permissions};
use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

use crate::error::{Error, Result};
use crate::walk::{TMP_PREFIX, TMP_SUFFIX};

/// Metadata a variant copies from its source: servers derive `Last-Modified`
/// and ETags from it, and a 0600 variant of a 0644 source makes nginx answer 403.
#[derive(Debug, Clone)]
pub struct CopyMeta {
    pub permissions: Permissions,
    pub modified: SystemTime,
}

/// Writes `bytes` to a temporary dot-file beside `dest`, applies `meta`, then
/// renames it over `dest`. On any error the temporary file is removed.
pub fn write_atomic(dest: &Path, bytes: &[u8], meta: Option<&CopyMeta>) -> Result<()> {
    let werr = |source| Error::Write {
        path: dest.to_path_buf(),
        source,
    };
    let dir = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if meta.is_none() {
        // A manifest or cache entry may go to a folder that does not exist yet.
        fs::create_dir_all(dir).map_err(werr)?;
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(TMP_PREFIX)
        .suffix(TMP_SUFFIX)
        .tempfile_in(dir)
        .map_err(werr)?;
    tmp.write_all(bytes).map_err(werr)?;
    tmp.flush().map_err(werr)?;
    match meta {
        Some(m) => {
            tmp.as_file()
                .set_permissions(m.permissions.clone())
                .map_err(werr)?;
            tmp.as_file()
                .set_times(FileTimes::new().set_modified(m.modified))
                .map_err(werr)?;
        }
        None => {
            // tempfile creates 0600; a manifest should be as readable as a normal file.
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                tmp.as_file()
                    .set_permissions(Permissions::from_mode(0o644))
                    .map_err(werr)?;
            }
        }
    }
    tmp.persist(dest).map_err(|e| werr(e.error))?;
    Ok(())
}

/// An exclusive lock on a folder, held while the value lives: two runs on the
/// same DIR take turns instead of interleaving their writes.
#[derive(Debug)]
pub struct DirLock {
    _file: fs::File,
}

/// Locks the folder `dir` for this run, calling `on_wait` once if another
/// process holds it and then waiting for it. The OS releases the lock if the
/// holder dies. On Unix the folder itself is locked, so nothing is created in
/// it (no stray file gets deployed with dist/); elsewhere a lock file `name`
/// in it is used.
pub fn lock(dir: &Path, name: &str, on_wait: impl FnOnce()) -> Result<DirLock> {
    #[cfg(unix)]
    let (path, file) = {
        let _ = name;
        (dir.to_path_buf(), fs::File::open(dir))
    };
    #[cfg(not(unix))]
    let (path, file) = {
        let p = dir.join(name);
        let f = fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&p);
        (p, f)
    };
    let werr = |source| Error::Write {
        path: path.clone(),
        source,
    };
    let file = file.map_err(werr)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            on_wait();
            file.lock().map_err(werr)?;
        }
        Err(fs::TryLockError::Error(e)) => return Err(werr(e)),
    }
    Ok(DirLock { _file: file })
}

/// Removes `path` if it exists.
pub fn remove_if_exists(path: &Path) -> Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(Error::Write {
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_copies_mode_and_mtime_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("a.js");
        fs::write(&src, "x").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&src, Permissions::from_mode(0o640)).unwrap();
        }
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
        let f = fs::File::options().write(true).open(&src).unwrap();
        f.set_times(FileTimes::new().set_modified(t)).unwrap();
        let md = fs::metadata(&src).unwrap();
        let meta = CopyMeta {
            permissions: md.permissions(),
            modified: md.modified().unwrap(),
        };
        let dest = dir.path().join("a.js.br");
        write_atomic(&dest, b"compressed", Some(&meta)).unwrap();
        let out = fs::metadata(&dest).unwrap();
        assert_eq!(out.permissions(), md.permissions());
        assert_eq!(out.modified().unwrap(), t);
        assert_eq!(fs::read(&dest).unwrap(), b"compressed");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
