//! What the plan hands the execute stage and the execute stage hands the
//! commit: the jobs ([`Job`]), the units a shard splits ([`Unit`]), what
//! each source ends up with ([`Outcome`]) and what each job produced
//! ([`JobOutcome`], [`Timing`], [`FileProgress`]). The stages all take
//! these, so they live apart from any stage (ARCHITECTURE.md).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize};

use crate::error::Error;
use crate::model::coding::{Codec, DeltaCoding};
use crate::model::manifest::{Delta, SkippedDelta, Variant};
use crate::model::shard::Shard;
use crate::model::skip::SkipReason;

/// What a job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobKind {
    Compress,
    /// Part `index` of `of` of a brotli stream split across jobs.
    Part {
        index: usize,
        of: usize,
    },
    /// Check a variant the manifest does not list against the source: kept
    /// and listed if it decodes to it. `ours`: a killed run's, by its journal
    /// ([`crate::run::state::journal`]), so one that does not decode is redone, not refused.
    CheckForeign {
        ours: bool,
    },
    /// Likewise for a delta against dictionary `dict`, decoded with it.
    CheckDelta {
        dict: usize,
        coding: DeltaCoding,
        ours: bool,
    },
    /// An RFC 9842 delta against dictionary `dict` (an index into the run's
    /// dictionaries).
    Delta {
        dict: usize,
        coding: DeltaCoding,
    },
}

/// One unit of work for the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Job {
    /// Index of the source in the run's list.
    pub file: usize,
    /// The coding of a variant job (a delta job's is unused).
    pub codec: Codec,
    pub kind: JobKind,
}

impl Job {
    /// The content-coding token this job produces.
    pub fn token(&self) -> &'static str {
        match self.kind {
            JobKind::Delta { coding, .. } | JobKind::CheckDelta { coding, .. } => coding.token(),
            _ => self.codec.token(),
        }
    }

    /// The dictionary of a delta job.
    pub fn dict(&self) -> Option<usize> {
        match self.kind {
            JobKind::Delta { dict, .. } | JobKind::CheckDelta { dict, .. } => Some(dict),
            _ => None,
        }
    }
}

/// What one source ends up with: the plan fills in what is kept and known as
/// it is, the jobs add what they write or skip, and the commit stage turns it
/// into the source's manifest entry.
#[derive(Debug, Default, Clone)]
pub(crate) struct Outcome {
    /// Variants: kept from the last run, written or adopted by this one.
    pub variants: Vec<Variant>,
    /// Deltas, likewise.
    pub deltas: Vec<Delta>,
    /// Per coding token, why there is no variant.
    pub skipped: BTreeMap<String, SkipReason>,
    pub skipped_deltas: Vec<SkippedDelta>,
    /// Paths this run wrote: taken out again if the source changed meanwhile.
    pub written: Vec<String>,
    /// The source changed while this run read it.
    pub changed: bool,
}

/// One (source, coding[, dictionary]) the run is asked for, whether it is
/// kept, checked or made: what `--shard` splits, so that every shard splits
/// the same whatever is already on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unit {
    pub file: usize,
    pub token: &'static str,
    /// The dictionary of a delta (an index into the run's dictionaries).
    pub dict: Option<usize>,
}

/// What one (file, codec) job produced.
pub(crate) enum JobOutcome {
    /// A new variant (written unless dry run).
    Written {
        variant: Variant,
        cached: bool,
    },
    /// A `.br`/`.zst`/`.gz` precompress did not write, which decodes to the
    /// source: kept as it is and listed.
    Adopted(Variant),
    Skipped(SkipReason),
    /// A new delta (written unless dry run).
    DeltaWritten {
        delta: Delta,
        cached: bool,
    },
    /// A delta the manifest did not list, which decodes with its dictionary
    /// to the source: kept as it is and listed.
    DeltaAdopted(Delta),
    /// A delta that is not smaller than the source.
    DeltaSkipped(SkippedDelta),
    /// The dictionary could not be used (it vanished or changed): no delta,
    /// and a warning rather than a failure.
    NoDelta(String),
    Failed(Error),
    /// One part of a split brotli job, not the last to finish: nothing to record.
    Part,
}

/// How long one job took.
pub(crate) struct Timing {
    pub(crate) micros: u64,
    pub(crate) cpu_micros: u64,
    pub(crate) encode_micros: u64,
    pub(crate) verify_micros: u64,
}

/// A source's jobs as they run on the pool.
#[derive(Default)]
pub(crate) struct FileProgress {
    /// Jobs not finished yet.
    pub(crate) left: AtomicUsize,
    /// One of them wrote a variant or delta.
    pub(crate) wrote: AtomicBool,
    /// The source was found changed after the last of them.
    pub(crate) changed: AtomicBool,
}

/// A shard's part of the plan, which its commit seals into its partial
/// manifest for `merge`.
#[derive(Debug)]
pub(crate) struct ShardPart {
    pub(crate) shard: Shard,
    /// The digest of every unit of the run (each shard's is the same).
    pub(crate) units_digest: String,
    /// The units this shard owns.
    pub(crate) owned: Vec<String>,
}
