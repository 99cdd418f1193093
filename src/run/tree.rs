//! What the walk hands on: the files under DIR ([`Found`]) sorted into a
//! [`Tree`]. The scan, the services that walk an earlier release and
//! `check` all take these, so they live apart from the walk itself.

use std::path::PathBuf;

use crate::error::Error;
use crate::model::skip::Passed;

/// A regular file found under DIR.
#[derive(Debug, Clone)]
pub struct Found {
    /// Path relative to DIR with `/` separators: the manifest key.
    pub rel: String,
    /// Path to open.
    pub path: PathBuf,
    /// Reached through a symlink (only with `--follow-links`, which asks for
    /// it); any other file is opened refusing a link, so one swapped in after
    /// the walk never makes the run read a file outside DIR.
    pub linked: bool,
}

impl Found {
    /// Opens the file to read, as [`Found::linked`] says.
    pub fn open(&self) -> std::io::Result<std::fs::File> {
        if self.linked {
            crate::fsutil::open_to_read(&self.path)
        } else {
            crate::fsutil::open_own(&self.path)
        }
    }

    /// Reads the whole file, as [`Found::linked`] says.
    pub fn read(&self) -> std::io::Result<Vec<u8>> {
        if self.linked {
            crate::fsutil::read_regular(&self.path, u64::MAX)
        } else {
            crate::fsutil::read_own(&self.path, u64::MAX)
        }
    }
}

/// Everything the walk saw, sorted by relative path.
#[derive(Debug, Default)]
pub struct Tree {
    /// Files that are assets (sources), including ones no filter admits.
    pub files: Vec<Found>,
    /// `x.br`/`x.zst`/`x.gz` files whose source `x` exists: variants, ours or not.
    pub variants: Vec<Found>,
    /// `x.HEX.dcb`/`x.HEX.dcz` files whose source `x` exists: deltas, ours or not.
    pub deltas: Vec<Found>,
    /// Our own leftover temporary files (from a killed run).
    pub temps: Vec<Found>,
    /// Entries passed over, with why (reported, not failures).
    pub passed: Vec<(String, Passed)>,
    /// Entries that could not be read: these fail the run.
    pub errors: Vec<Error>,
}
