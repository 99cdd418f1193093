//! What `check` finds wrong: one problem, its path and detail, and the kinds
//! of problem as `--json` names them.

use serde::Serialize;

/// One thing wrong with DIR.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Problem {
    /// Path relative to DIR (or the manifest's path).
    pub path: String,
    /// Short machine-readable kind, e.g. `variant_corrupt`.
    pub problem: ProblemKind,
    /// What exactly.
    pub detail: String,
}

/// The kinds of problem, as `--json` names them (snake_case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// A variant or delta listed with a coding this precompress does not know.
    BadCoding,
    /// A delta's size or blake3 is not the manifest's.
    DeltaChanged,
    /// A delta whose header does not name its dictionary, or a dictionary that is no SHA-256.
    DeltaCorrupt,
    /// A listed delta that cannot be read.
    DeltaMissing,
    /// A delta that does not decode, with its dictionary, to its source.
    DeltaStale,
    /// An unlisted variant that decodes to its source (not written by precompress).
    ForeignVariant,
    /// An ETag that is not the one the entry's blake3 gives: a server would
    /// send one strong ETag for different bodies, or a stale one.
    EtagMismatch,
    /// The manifest exists but cannot be read or parsed.
    ManifestInvalid,
    /// There is no manifest.
    ManifestMissing,
    /// A source whose size or blake3 is not the manifest's.
    SourceChanged,
    /// A listed source that cannot be read.
    SourceMissing,
    /// An unlisted variant that does not decode to its source.
    StaleVariant,
    /// A temporary file left by a killed run.
    TemporaryFile,
    /// A delta file on disk that the manifest does not list.
    UnlistedDelta,
    /// A file on disk that the manifest does not list.
    UnlistedFile,
    /// A file or folder that cannot be read.
    Unreadable,
    /// A manifest path that is not a plain path inside DIR (never opened).
    UnsafePath,
    /// A variant's size or blake3 is not the manifest's.
    VariantChanged,
    /// A variant that does not decode (or is not a zstd frame).
    VariantCorrupt,
    /// A listed variant that cannot be read.
    VariantMissing,
    /// A variant that decodes to something other than its source.
    VariantStale,
    /// A zstd frame that declares a window over the 8 MiB browsers accept.
    ZstdWindow,
}

impl ProblemKind {
    /// The name `--json` and the text report use.
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemKind::BadCoding => "bad_coding",
            ProblemKind::DeltaChanged => "delta_changed",
            ProblemKind::DeltaCorrupt => "delta_corrupt",
            ProblemKind::DeltaMissing => "delta_missing",
            ProblemKind::DeltaStale => "delta_stale",
            ProblemKind::EtagMismatch => "etag_mismatch",
            ProblemKind::ForeignVariant => "foreign_variant",
            ProblemKind::ManifestInvalid => "manifest_invalid",
            ProblemKind::ManifestMissing => "manifest_missing",
            ProblemKind::SourceChanged => "source_changed",
            ProblemKind::SourceMissing => "source_missing",
            ProblemKind::StaleVariant => "stale_variant",
            ProblemKind::TemporaryFile => "temporary_file",
            ProblemKind::UnlistedDelta => "unlisted_delta",
            ProblemKind::UnlistedFile => "unlisted_file",
            ProblemKind::Unreadable => "unreadable",
            ProblemKind::UnsafePath => "unsafe_path",
            ProblemKind::VariantChanged => "variant_changed",
            ProblemKind::VariantCorrupt => "variant_corrupt",
            ProblemKind::VariantMissing => "variant_missing",
            ProblemKind::VariantStale => "variant_stale",
            ProblemKind::ZstdWindow => "zstd_window",
        }
    }
}

impl std::fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

// Problems sort by path, then by kind name, as when kinds were strings.
impl Ord for ProblemKind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for ProblemKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A problem of `kind` at `path`.
pub(super) fn problem(
    path: impl Into<String>,
    problem: ProblemKind,
    detail: impl Into<String>,
) -> Problem {
    Problem {
        path: path.into(),
        problem,
        detail: detail.into(),
    }
}
