//! Finding the files under DIR. Symlinks are not followed unless asked; with
//! `--follow-links`, nothing whose folder lies outside DIR is taken, so no
//! variant is ever written outside it. FIFOs, sockets and devices are skipped
//! from their metadata, before anything opens them, so they cannot block.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::fsutil::canonical;
use crate::model::content::variant_source;
use crate::model::names::delta_source;
use crate::model::skip::Passed;
use crate::run::tree::{Found, Tree};

/// Prefix and suffix of our temporary files: dot-files with a random middle,
/// a name no server is asked for and none picks as a variant.
pub use crate::model::names::{TMP_PREFIX, TMP_SUFFIX};
/// The lock file a run holds in DIR (never an asset).
pub const LOCK_NAME: &str = ".precompress.lock";

/// Walks `root`. `ignore` are paths never taken as files or walked into (the
/// manifest, the lock, a cache folder), however they are spelled (`./dist/m.json`, an absolute path, a
/// path through a symlink).
pub fn walk(root: &Path, follow_links: bool, ignore: &[PathBuf]) -> Tree {
    let mut tree = Tree::default();
    let walk = Walk {
        root,
        follow_links,
        canon_root: root.canonicalize().unwrap_or_else(|_| root.to_path_buf()),
        ignore: ignore.iter().map(|p| canonical(p)).collect(),
    };
    let mut all = Vec::new();
    let mut walker = walkdir::WalkDir::new(root)
        .follow_links(follow_links)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = walker.next() {
        let seen = match entry {
            Ok(entry) => {
                let seen = walk.entry(&entry);
                if entry.file_type().is_dir() && !matches!(seen, Seen::Folder) {
                    walker.skip_current_dir();
                }
                seen
            }
            Err(e) => walk.error(e),
        };
        match seen {
            Seen::File(f) => all.push(f),
            Seen::Passed(rel, why) => tree.passed.push((rel, why)),
            Seen::Error(e) => tree.errors.push(e),
            Seen::Ignored | Seen::Folder => {}
        }
    }
    sort_found(&all, &mut tree);
    tree
}

/// What [`walk`] goes by.
struct Walk<'a> {
    root: &'a Path,
    follow_links: bool,
    canon_root: PathBuf,
    /// The paths never taken or walked into, canonical.
    ignore: Vec<PathBuf>,
}

/// What the walk makes of one entry.
enum Seen {
    /// A regular file with a name a server can be asked for.
    File(Found),
    /// Passed over, with why (a folder with all it holds).
    Passed(String, Passed),
    /// Could not be read.
    Error(Error),
    /// Not the site's, and not reported (a folder with all it holds).
    Ignored,
    /// A folder to walk into.
    Folder,
}

impl Walk<'_> {
    /// An entry walkdir could not read: a loop or a broken link is passed
    /// over, anything else is an error.
    fn error(&self, e: walkdir::Error) -> Seen {
        let path = e
            .path()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| self.root.to_path_buf());
        let rel = rel_lossy(self.root, &path);
        if e.loop_ancestor().is_some() {
            Seen::Passed(rel, Passed::SymlinkLoop)
        } else if self.follow_links
            && path
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
            && !path.exists()
        {
            Seen::Passed(rel, Passed::BrokenSymlink)
        } else {
            let source = e
                .into_io_error()
                .unwrap_or_else(|| std::io::Error::other("walk failed"));
            Seen::Error(Error::Walk { path, source })
        }
    }

    /// Whether `entry` is one of the paths to ignore. Names first:
    /// canonicalizing every entry would cost a syscall each.
    fn ignored(&self, entry: &walkdir::DirEntry) -> bool {
        self.ignore
            .iter()
            .any(|i| i.file_name() == Some(entry.file_name()) && *i == canonical(entry.path()))
    }

    /// What `entry` is to the site, from its name and metadata alone.
    fn entry(&self, entry: &walkdir::DirEntry) -> Seen {
        let root = self.root;
        let ft = entry.file_type();
        let hidden = entry.depth() > 0 && {
            let name = entry.file_name().to_string_lossy();
            crate::model::path::is_hidden_name(&name)
                && !(name.starts_with(TMP_PREFIX) && name.ends_with(TMP_SUFFIX))
        };
        if ft.is_dir() {
            return if hidden {
                // `.git`, `.cache`: not the site, and never served.
                Seen::Passed(rel_lossy(root, entry.path()), Passed::DotFile)
            } else if entry.depth() > 0 && self.ignored(entry) {
                // A `--cache-dir` inside DIR: precompress's, not the site's.
                Seen::Ignored
            } else {
                Seen::Folder
            };
        }
        if hidden {
            return Seen::Passed(rel_lossy(root, entry.path()), Passed::DotFile);
        }
        let Ok(rel_path) = entry.path().strip_prefix(root) else {
            return Seen::Ignored;
        };
        let Some(rel) = rel_path
            .to_str()
            .map(|s| s.replace(std::path::MAIN_SEPARATOR, "/"))
        else {
            return Seen::Passed(rel_lossy(root, entry.path()), Passed::NameNotUtf8);
        };
        if ft.is_symlink() {
            // Only reached without --follow-links (walkdir resolves them otherwise).
            return Seen::Passed(rel, Passed::Symlink);
        }
        if !ft.is_file() {
            return Seen::Passed(rel, Passed::NotRegular);
        }
        if self.follow_links {
            // The variant goes beside the path we were given: its folder must be inside DIR.
            let parent = entry.path().parent().and_then(|p| p.canonicalize().ok());
            if !parent.is_some_and(|p| p.starts_with(&self.canon_root)) {
                return Seen::Passed(rel, Passed::OutsideRoot);
            }
        }
        if self.ignored(entry) {
            return Seen::Ignored;
        }
        if crate::model::path::check_relative(&rel).is_err() {
            return Seen::Passed(rel, Passed::NameNotServable);
        }
        Seen::File(Found {
            rel,
            path: entry.path().to_path_buf(),
            linked: entry.path_is_symlink(),
        })
    }
}

/// Sorts the files found into `tree`: our temporary files, variants and
/// deltas (whose source is among `all`), and the rest, the sources.
fn sort_found(all: &[Found], tree: &mut Tree) {
    let names: BTreeSet<&str> = all.iter().map(|f| f.rel.as_str()).collect();
    for f in all {
        let base = f.rel.rsplit('/').next().unwrap_or(&f.rel);
        if base.starts_with(TMP_PREFIX) && base.ends_with(TMP_SUFFIX) {
            tree.temps.push(f.clone());
        } else if variant_source(&f.rel).is_some_and(|(src, _)| names.contains(src)) {
            tree.variants.push(f.clone());
        } else if delta_source(&f.rel).is_some_and(|(src, _)| names.contains(src)) {
            tree.deltas.push(f.clone());
        } else {
            tree.files.push(f.clone());
        }
    }
}

fn rel_lossy(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace(std::path::MAIN_SEPARATOR, "/")
}

/// The config file's name (`configfile::FILE_NAME`, which only the CLI
/// builds): in DIR it is never an asset.
const CONFIG_NAME: &str = "precompress.toml";

/// What the walk must never take for an asset, however it is spelled: the
/// manifest, the lock, precompress.toml in DIR (this run's settings, not a
/// page) and a cache folder inside DIR.
pub(crate) fn not_assets(cfg: &crate::config::Config) -> Vec<PathBuf> {
    vec![
        cfg.manifest_path(),
        cfg.root.join(LOCK_NAME),
        cfg.root.join(CONFIG_NAME),
        cfg.cache_dir.clone().unwrap_or_default(),
    ]
}

/// The walk a run makes: DIR without [`not_assets`], and without shards'
/// partial manifests beside the manifest (precompress's, not the site's).
/// `precompress tune` samples from the same walk.
pub(crate) fn walk_assets(cfg: &crate::config::Config) -> crate::run::tree::Tree {
    let manifest_path = cfg.manifest_path();
    let mut tree = walk(&cfg.root, cfg.follow_links, &not_assets(cfg));
    tree.files.retain(|f| {
        !(f.path.parent() == manifest_path.parent()
            && f.rel
                .rsplit('/')
                .next()
                .is_some_and(|n| crate::model::shard::partial_of(&manifest_path, n).is_some()))
    });
    tree
}
