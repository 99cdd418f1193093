//! The library's one error type. Every per-file variant carries the path, so a
//! message printed on its own still tells the user which file and why.

use std::io;
use std::path::PathBuf;

/// Something that went wrong for one file, or for the run as a whole.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file or folder could not be read (permissions, vanished, I/O error).
    #[error("{}: cannot read: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },

    /// A variant, temporary file or manifest could not be written.
    #[error("{}: cannot write: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },

    /// The walk over the tree failed at this path.
    #[error("{}: cannot list: {source}", path.display())]
    Walk { path: PathBuf, source: io::Error },

    /// The source changed between the scan and the moment it was compressed;
    /// its variants were not written, so none can be stale.
    #[error("{}: changed while it was being compressed; run again", path.display())]
    Changed { path: PathBuf },

    /// An encoder failed.
    #[error("{}: {coding} encoder failed: {source}", path.display())]
    Encode {
        path: PathBuf,
        coding: &'static str,
        source: io::Error,
    },

    /// The encoder's output did not decode back to the source: it is never written.
    #[error("{}: {coding} output does not decode to the source: {detail}", path.display())]
    Verify {
        path: PathBuf,
        coding: &'static str,
        detail: String,
    },

    /// A `.br`/`.zst`/`.gz` that precompress did not write does not decode to
    /// its source: a server would serve stale content. Left in place.
    #[error("{}: not written by precompress, and it does not match its source ({detail}): a server would serve it stale; remove it, or rerun with --force", path.display())]
    Foreign { path: PathBuf, detail: String },

    /// A manifest could not be parsed or has a version we do not know.
    #[error("{}: invalid manifest: {detail}", path.display())]
    Manifest { path: PathBuf, detail: String },

    /// `precompress merge` cannot merge the shards' partial manifests: they do
    /// not add up to one run. Nothing was written.
    #[error("{}: cannot merge: {detail}", path.display())]
    Shard { path: PathBuf, detail: String },

    /// The settings make no sense (for example DIR is not a folder).
    #[error("{0}")]
    Config(String),
}

/// What kind of failure an [`Error`] is, for callers that act on it (and as
/// `kind` in the JSON report): a permission problem is `read` or `write` with
/// the I/O error kind beside it, a corrupt variant is `verify` or `foreign`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    Read,
    Write,
    Walk,
    Changed,
    Encode,
    Verify,
    Foreign,
    Manifest,
    Shard,
    Config,
}

impl Error {
    /// Its [`ErrorKind`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Read { .. } => ErrorKind::Read,
            Error::Write { .. } => ErrorKind::Write,
            Error::Walk { .. } => ErrorKind::Walk,
            Error::Changed { .. } => ErrorKind::Changed,
            Error::Encode { .. } => ErrorKind::Encode,
            Error::Verify { .. } => ErrorKind::Verify,
            Error::Foreign { .. } => ErrorKind::Foreign,
            Error::Manifest { .. } => ErrorKind::Manifest,
            Error::Shard { .. } => ErrorKind::Shard,
            Error::Config(_) => ErrorKind::Config,
        }
    }

    /// The I/O error underneath, if any (`PermissionDenied`, `NotFound`, ...).
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            Error::Read { source, .. }
            | Error::Write { source, .. }
            | Error::Walk { source, .. }
            | Error::Encode { source, .. } => Some(source.kind()),
            _ => None,
        }
    }

    /// The path the error is about, if it is about one.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Error::Read { path, .. }
            | Error::Write { path, .. }
            | Error::Walk { path, .. }
            | Error::Changed { path }
            | Error::Encode { path, .. }
            | Error::Verify { path, .. }
            | Error::Foreign { path, .. }
            | Error::Manifest { path, .. }
            | Error::Shard { path, .. } => Some(path),
            Error::Config(_) => None,
        }
    }
}

/// Shorthand used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
