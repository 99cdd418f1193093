//! The files under DIR as the upload sees them (`precompress objects`): the
//! walk that decides which files may become objects at all, by the run's
//! name rule and `precompress serve`'s resolution, and what it passes over.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::ObjectsError;
use crate::model::path::check_relative;
use crate::serve::path::resolve;

/// The files under DIR: what [`plan`](super::plan) needs of the disk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// Regular files (and links to files inside DIR) by relative path: their sizes.
    pub files: BTreeMap<String, u64>,
    /// Dot-files and dot-folders (`.well-known` excepted), precompress's own left out.
    pub hidden: Vec<String>,
    /// Paths that are not UTF-8, so no object key.
    pub unnamed: Vec<PathBuf>,
    /// Names no URL path can hold (a backslash in a name): the run passes
    /// them over too, and no server can be asked for them.
    pub unservable: Vec<String>,
    /// Links that lead out of DIR (or nowhere): `precompress serve` answers
    /// 404 for them, and nothing outside DIR is ever uploaded.
    pub outside: Vec<String>,
}

/// Lists the files under `root` by the rules the run and `precompress serve`
/// go by, so the upload holds what they would serve and nothing else: a
/// name is a key only as the run's walk takes it (`/` for the platform's
/// separator and nothing else, then [`check_relative`]: a `\` in a name is
/// not a folder), and a file is taken only where `precompress serve` would
/// send it ([`resolve`]: its canonical path inside the canonical DIR, so a
/// link to a file in DIR counts as the file and a link out of DIR is left
/// out). Dot-folders and links to folders are not entered.
pub fn scan(root: &Path) -> Result<Scan, ObjectsError> {
    let mut out = Scan::default();
    let canonical_root = std::fs::canonicalize(root).map_err(|source| ObjectsError::Root {
        path: root.to_path_buf(),
        source,
    })?;
    let hidden = crate::model::path::is_hidden_name;
    let mut walker = walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = walker.next() {
        let entry = entry.map_err(|e| ObjectsError::Walk {
            path: e.path().unwrap_or(root).to_path_buf(),
            source: e,
        })?;
        if entry.depth() == 0 {
            continue;
        }
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        // As run/walk.rs: only the platform's separator is one.
        let Some(rel) = rel
            .to_str()
            .map(|s| s.replace(std::path::MAIN_SEPARATOR, "/"))
        else {
            out.unnamed.push(entry.path().to_path_buf());
            if entry.file_type().is_dir() {
                walker.skip_current_dir();
            }
            continue;
        };
        let name = entry.file_name().to_str().unwrap_or_default();
        if hidden(name) {
            if !name.starts_with(".precompress") {
                out.hidden.push(rel.clone());
            }
            if entry.file_type().is_dir() {
                walker.skip_current_dir();
            }
            continue;
        }
        if entry.file_type().is_dir() {
            continue;
        }
        if check_relative(&rel).is_err() {
            out.unservable.push(rel);
            continue;
        }
        // Through a link only to a file inside DIR, as `precompress serve`
        // sends it: `aws s3 cp` uploads what the link points to.
        let Some(file) = resolve(&canonical_root, &rel) else {
            if entry.path_is_symlink() {
                out.outside.push(rel);
            }
            continue;
        };
        match std::fs::metadata(file) {
            Ok(md) if md.is_file() => {
                out.files.insert(rel, md.len());
            }
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #29: a `\` was taken for a folder, so `..\secret.txt` became
    /// `../secret.txt` (a file outside DIR, uploaded) and `a\b.js` replaced
    /// the real `a/b.js`; a link out of DIR was listed though `serve` answers
    /// 404 for it. The scan now goes by the run's name rule and serve's
    /// resolution.
    #[cfg(unix)]
    #[test]
    fn backslash_names_and_links_out_of_dir_are_never_listed() {
        let tmp = tempfile::tempdir().unwrap();
        let (root, outside) = (tmp.path().join("dist"), tmp.path().join("secret.txt"));
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::write(&outside, "SECRET").unwrap();
        for (name, text) in [
            ("..\\secret.txt", "x"),
            ("a\\b.js", "the impostor"),
            ("a/b.js", "the real one"),
            ("..\\.git\\config", "x"),
            ("x\\..\\..\\secret.txt", "x"),
            ("ok.txt", "fine"),
        ] {
            std::fs::write(root.join(name), text).unwrap();
        }
        std::os::unix::fs::symlink(&outside, root.join("leak.txt")).unwrap();
        std::os::unix::fs::symlink("../secret.txt", root.join("a/leak2.txt")).unwrap();
        std::os::unix::fs::symlink("ok.txt", root.join("alias.txt")).unwrap();
        std::os::unix::fs::symlink("missing.txt", root.join("broken.txt")).unwrap();
        let s = scan(&root).unwrap();
        let files: Vec<(&str, u64)> = s.files.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(files, [("a/b.js", 12), ("alias.txt", 4), ("ok.txt", 4)]);
        assert_eq!(s.unservable, ["a\\b.js", "x\\..\\..\\secret.txt"]);
        assert_eq!(s.outside, ["a/leak2.txt", "broken.txt", "leak.txt"]);
        // A dot-file by its whole name, not by what follows its last `\`.
        assert_eq!(s.hidden, ["..\\.git\\config", "..\\secret.txt"]);
    }
}
