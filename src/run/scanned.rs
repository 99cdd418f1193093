//! What the scan hands on: all it found ([`ScanOut`]), a source as read
//! ([`Scanned`]), as the plan weighs it ([`Source`]), and the earlier files
//! each asset gets deltas against ([`Chosen`], [`Dict`]). The plan,
//! the jobs, the shard split and the commit all take these, so they live
//! apart from any stage.

use crate::fsutil::CopyMeta;
use crate::model::skip::SkipReason;
use crate::run::state::releases::OldFile;
use crate::run::tree::Found;

/// What the scan stage found.
pub(crate) struct ScanOut {
    /// The sources, hashed (less the variants of deleted sources).
    pub(crate) files: Vec<Scanned>,
    /// Variants and deltas on disk: path and blake3 (`None`: unreadable).
    pub(crate) on_disk: Vec<(String, Option<String>)>,
    /// What interrupted runs wrote from the sources as they are now.
    pub(crate) journaled: Vec<String>,
    /// The journals read, removed once the manifest is written.
    pub(crate) journals_read: Vec<std::path::PathBuf>,
    /// Per source, its dictionaries in the earlier releases.
    pub(crate) chosen: Vec<Chosen>,
    /// This release's shared dictionaries, of `files` (`run::dictionaries::shared`,
    /// `run::dictionaries::documents`).
    pub(crate) shared: Vec<crate::run::dictionaries::shared::Shared>,
    /// This release's groups of chunks, each with its marked chunk.
    pub(crate) groups: Vec<crate::run::dictionaries::shared::Group>,
    /// With `--shared-dictionary auto`, what a first visit may fetch at idle
    /// (`run::scan_dictionaries`).
    pub(crate) idle_budget: Option<IdleAllowance>,
}

/// What `--shared-dictionary auto` lets a first visit fetch at idle for
/// dictionaries, and the page whose first visit it was measured on.
#[derive(Debug, Clone)]
pub(crate) struct IdleAllowance {
    pub(crate) page: String,
    pub(crate) bytes: u64,
}

/// What the scan learned about one source.
#[derive(Debug)]
pub(crate) struct Scanned {
    pub(crate) found: Found,
    pub(crate) size: u64,
    pub(crate) blake3: String,
    pub(crate) sha256: String,
    pub(crate) sha256_raw: [u8; 32],
    pub(crate) meta: CopyMeta,
    /// The bytes that were hashed, for a small source (see [`crate::run::scan::HELD_FILE_MAX`]).
    pub(crate) content: Option<Vec<u8>>,
    /// A large source that zstd level 1 did not shrink ([`crate::run::scan::PROBE_MIN`]).
    pub(crate) incompressible: bool,
}

impl Scanned {
    /// Its bytes: those the scan held, or read again.
    pub(crate) fn held_or_read(&self) -> Option<Vec<u8>> {
        self.content.clone().or_else(|| self.found.read().ok())
    }
}

#[cfg(test)]
impl Scanned {
    /// A source of `size` bytes at `rel`, as unit tests need one (nothing read).
    pub(crate) fn for_test(rel: &str, size: u64) -> Scanned {
        Scanned {
            found: crate::run::tree::Found {
                rel: rel.into(),
                path: rel.into(),
                linked: false,
            },
            size,
            blake3: "ab".repeat(32),
            sha256: String::new(),
            sha256_raw: [0; 32],
            meta: CopyMeta {
                permissions: std::fs::metadata(".").unwrap().permissions(),
                modified: std::time::SystemTime::UNIX_EPOCH,
            },
            content: None,
            incompressible: false,
        }
    }
}

/// The earlier files one asset gets deltas against, with their SHA-256.
pub(crate) type Chosen = Vec<(OldFile, [u8; 32])>;

/// A dictionary this run compresses against: an earlier release's file.
pub(crate) struct Dict {
    pub(crate) old: OldFile,
    pub(crate) sha256: [u8; 32],
}

impl Dict {
    /// The manifest entry of a delta against this dictionary at `path`, of
    /// `size` bytes with blake3 `b3`: what a run writes and what it adopts.
    pub(crate) fn delta_entry(
        &self,
        coding: crate::model::coding::DeltaCoding,
        path: String,
        size: usize,
        b3: String,
    ) -> crate::model::manifest::Delta {
        crate::model::manifest::Delta {
            coding: coding.token().into(),
            dictionary: crate::model::dictionary::available_dictionary(&self.sha256),
            dictionary_path: self.old.rel.clone(),
            path,
            size: size as u64,
            etag: crate::model::manifest::etag(&b3),
            blake3: b3,
        }
    }
}

/// One source, as the plan needs it.
pub(crate) struct Source<'a> {
    pub rel: &'a str,
    pub size: u64,
    pub blake3: &'a str,
    /// Why the filter leaves it out, if it does.
    pub decision: Option<SkipReason>,
    /// The scan's fast probe did not shrink it: no variant is made (deltas
    /// still are: an edited incompressible file is small against its old self).
    pub incompressible: bool,
    /// How many jobs its brotli encoding runs as (1 unless it is large, text,
    /// and not already in the cache).
    pub brotli_parts: usize,
    /// Its dictionaries: (index in the run's list, the dictionary's size, its
    /// SHA-256).
    pub dictionaries: Vec<(usize, u64, [u8; 32])>,
}
