//! What a run tells the user: a one-screen summary, or JSON with per-job timings.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::encode::Codec;
use crate::error::Error;
use crate::model::manifest::Manifest;
use crate::model::skip::Passed;

/// Bytes in and out for one codec.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct CodecStats {
    /// Variants written.
    pub files: u64,
    /// Total size of the sources of those variants.
    pub bytes_before: u64,
    /// Total size of the variants.
    pub bytes_after: u64,
}

/// One (file, codec) job's duration, for scheduling analysis.
#[derive(Debug, Clone, Serialize)]
pub struct JobTiming {
    pub path: String,
    pub coding: &'static str,
    pub input: u64,
    pub output: u64,
    /// The whole job's wall time: read, hash check, encode, verify, write.
    pub micros: u64,
    /// The whole job's CPU time on its thread (0 where the OS cannot say).
    pub cpu_micros: u64,
    /// CPU time in the encoder alone.
    pub encode_micros: u64,
    /// CPU time decoding the output and comparing it with the source.
    pub verify_micros: u64,
}

/// CPU time consumed by the calling thread, in µs: unlike wall time, not
/// inflated when other processes share the cores.
pub fn thread_cpu_micros() -> u64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime only writes the timespec we pass.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1000;
        }
    }
    0
}

/// What a run did besides compressing, gathered by the pipeline.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct RunCounts {
    /// Nothing was written or deleted.
    pub dry_run: bool,
    /// Variants encoded by this run.
    pub compressed: u64,
    /// Variants taken from `--cache-dir` (verified) instead of encoded.
    pub from_cache: u64,
    /// (file, coding) jobs whose output was not kept (not smaller, or saving
    /// less than `--min-ratio`), encoded or known from the cache.
    pub not_kept: u64,
    /// (file, coding) outcomes kept from the previous run: same content, same settings.
    pub reused: u64,
    /// Variants precompress had written that were removed (stale or orphaned), relative paths.
    pub removed: Vec<String>,
    /// Variants precompress did not write that decode to their source: kept and listed.
    pub foreign: Vec<String>,
    /// Things worth knowing that did not fail the run.
    pub warnings: Vec<String>,
    /// Wall time before the first job started (lock, walk, hashing, planning), ms.
    pub prepare_ms: u64,
    /// Wall time from the first job's start to the last job's end, ms.
    pub jobs_wall_ms: u64,
    /// The manifest was written (not a dry run, and the write succeeded).
    pub manifest_written: bool,
    /// What the run measured for a documents dictionary, when it measured
    /// one (`run::dictionaries::documents`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub documents_dictionary: Option<DocumentsDictionary>,
    /// What the deltas cost a first-time visitor (none without dictionaries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_visit: Option<FirstVisit>,
    /// `dcz` jobs made at the bounded level: their dictionary is far larger
    /// than the file (`encode::delta::dcz_bounded`).
    pub dcz_bounded: u64,
    /// Deltas not made to keep the deploy within `--max-files` (`run::bound`).
    pub dropped_deltas: u64,
    /// `--max-files`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_files: Option<u64>,
}

/// What the deltas cost a first-time visitor: the dictionaries every page
/// links, which a browser fetches at idle. The chunks served by a marked
/// member of their group (`--shared-dictionary auto`) cost it nothing.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FirstVisit {
    /// `--shared-dictionary`: `auto`, `on` or `off`.
    pub shared_dictionary: &'static str,
    /// The dictionaries the pages link (code, then documents).
    pub linked: Vec<String>,
    /// Their bytes as a first visit fetches them (the smallest variant, or
    /// the code dictionary's delta against the chunk marked in its folder,
    /// which the visit loaded first): what it pays beyond the pages' own
    /// assets.
    pub linked_bytes: u64,
    /// Groups of chunks with no pattern of their own (hash-only or
    /// same-named), each served by one member marked with its pattern.
    pub groups: usize,
    /// The chunks in those groups.
    pub grouped: usize,
    /// With `--shared-dictionary auto`, the most the dictionaries may cost
    /// a first visit at idle, the code dictionary first: 2% of a first visit
    /// of the landing page (`model::dictionary::IDLE_MAX_SHARE`); none for a
    /// release with no page, or with `on`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_budget: Option<u64>,
    /// The page that budget was measured on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub landing_page: Option<String>,
}

/// The documents dictionary's estimate, measured on pages it does not hold.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DocumentsDictionary {
    /// Its path, when it was made.
    pub path: Option<String>,
    /// Held-out pages measured.
    pub measured_pages: usize,
    /// Their brotli bytes.
    pub br_bytes: u64,
    /// Their bytes as deltas against it.
    pub delta_bytes: u64,
    /// Its own brotli bytes, what a first visit fetches at idle.
    pub dictionary_br_bytes: u64,
    /// Pages a visitor opens before it has paid for itself (none: never).
    pub payback_pages: Option<f64>,
    /// It is made when `payback_pages` is at most this.
    pub bound_pages: f64,
    /// With `--shared-dictionary auto`, what was left of the first visit's
    /// idle budget for it (`FirstVisit::idle_budget`, less the code
    /// dictionary's cost): it is made only when `dictionary_br_bytes` fits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_left: Option<u64>,
}

/// How close the job phase came to its floor: with perfect scheduling it
/// cannot finish before max(total job CPU / threads, longest job).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Schedule {
    /// Sum of all jobs' durations, ms.
    pub jobs_cpu_ms: u64,
    /// The longest single job, ms.
    pub longest_job_ms: u64,
    /// max(jobs_cpu_ms / threads, longest_job_ms).
    pub floor_ms: u64,
    /// The job phase's wall time, ms.
    pub jobs_wall_ms: u64,
    /// jobs_wall_ms / floor_ms (1.0 is perfect).
    pub ratio_to_floor: f64,
}

/// A per-file error in the report: its kind and message for people and JSON,
/// and the typed [`Error`] itself for a library caller to match on.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ErrorEntry {
    pub path: Option<String>,
    pub kind: crate::error::ErrorKind,
    /// The I/O error's kind, in Rust's words (`PermissionDenied`), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io: Option<String>,
    pub message: String,
    #[serde(skip)]
    pub error: std::sync::Arc<Error>,
}

/// What a deploy of DIR uploads, as the manifest lists it: the assets, their
/// variants and deltas, and the manifest itself; hosts cap a deploy's files
/// (Cloudflare Pages: 20,000).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Deploy {
    /// Files in all, the manifest included.
    pub files: u64,
    /// Their bytes (the manifest's own not counted).
    pub bytes: u64,
    /// Of them, deltas (`dcb`, `dcz`).
    pub deltas: u64,
    /// The deltas' bytes.
    pub delta_bytes: u64,
    /// CPU time the delta jobs of this run took, in milliseconds: what
    /// deltas cost the build.
    pub delta_cpu_ms: u64,
    /// Of this run's `dcz` jobs, those made at the bounded level, their
    /// dictionary far larger than the file (`encode::delta::dcz_bounded`).
    pub dcz_bounded: u64,
    /// `--max-files`: the most files the deploy may hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_files: Option<u64>,
    /// Deltas not made to stay within it, the oldest release's first.
    pub dropped_deltas: u64,
}

/// The HTML pages of the release.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Pages {
    /// HTML pages listed.
    pub pages: u64,
    /// Of them, marked as their own next version's dictionary.
    pub marked: u64,
    /// Deltas of pages (against their earlier versions or the documents
    /// dictionary).
    pub deltas: u64,
}

/// The outcome of a run.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// Assets found (files that are not variants of another file).
    pub files: u64,
    /// Assets that got at least one variant.
    pub compressed: u64,
    /// Total size of all assets.
    pub bytes: u64,
    /// Per coding token (`dcb` and `dcz` for deltas, whose `bytes_before`
    /// is the size of the assets they decode to).
    pub codecs: BTreeMap<String, CodecStats>,
    /// Assets marked with `Use-As-Dictionary`.
    pub dictionaries: u64,
    /// What the deploy holds: every file the manifest lists, and the deltas.
    pub deploy: Deploy,
    /// The HTML pages, and those marked as their own next version's
    /// dictionary ([`crate::model::manifest::Caching::Page`]).
    pub pages: Pages,
    /// (file, coding) pairs without a variant, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Files with a coding without a variant, by reason (each file once per
    /// reason): what the summary counts.
    #[serde(skip)]
    pub skipped_files: BTreeMap<String, u64>,
    /// Directory entries passed over (symlinks, FIFOs, ...), by reason.
    pub passed: BTreeMap<String, u64>,
    /// Per-file errors; non-empty means exit code 1.
    pub errors: Vec<ErrorEntry>,
    /// Wall time in milliseconds.
    pub wall_ms: u64,
    /// Worker threads used.
    pub threads: usize,
    /// Where the manifest was written.
    pub manifest: PathBuf,
    /// Incremental work, cache use, removals and warnings.
    pub run: RunCounts,
    /// The job phase against its floor, from the per-job timings.
    pub schedule: Schedule,
    /// Every job with its duration, in the order they were started.
    pub jobs: Vec<JobTiming>,
    /// The manifest this run wrote (a dry run's: what it would have written;
    /// a shard's: its part), in memory. Not in the JSON report.
    #[serde(skip)]
    pub written: Manifest,
}

impl Schedule {
    fn of(jobs: &[JobTiming], threads: usize, jobs_wall_ms: u64) -> Schedule {
        let cpu: u64 = jobs.iter().map(|j| j.micros).sum();
        let longest = jobs.iter().map(|j| j.micros).max().unwrap_or(0);
        let floor = (cpu / threads.max(1) as u64).max(longest) / 1000;
        Schedule {
            jobs_cpu_ms: cpu / 1000,
            longest_job_ms: longest / 1000,
            floor_ms: floor,
            jobs_wall_ms,
            ratio_to_floor: if floor > 0 {
                jobs_wall_ms as f64 / floor as f64
            } else {
                1.0
            },
        }
    }
}

/// The run's error when the deploy holds more than `--max-files` (`max`):
/// every delta was dropped already (`run::bound`), so only the sources and
/// their variants are left, which are never dropped.
fn over_max_files(max: Option<u64>, files: u64, manifest: &std::path::Path) -> Option<Error> {
    let max = max.filter(|m| files > *m)?;
    Some(Error::Config(format!(
        "{}: the deploy holds {files} files, past --max-files {max} with every delta dropped (a source and its variants are never dropped): raise it, or --exclude what need not be compressed",
        manifest.display()
    )))
}

impl Report {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        manifest: Manifest,
        codecs: &[Codec],
        passed: Vec<(String, Passed)>,
        mut errors: Vec<Error>,
        jobs: Vec<JobTiming>,
        wall: Duration,
        manifest_path: PathBuf,
        threads: usize,
        run: RunCounts,
    ) -> Report {
        let mut by_codec: BTreeMap<String, CodecStats> = codecs
            .iter()
            .map(|c| (c.token().to_string(), CodecStats::default()))
            .collect();
        let mut skipped = BTreeMap::new();
        let mut skipped_files = BTreeMap::new();
        let mut compressed = 0;
        let mut bytes = 0;
        let mut dictionaries = 0;
        let mut deploy = Deploy {
            files: 1,
            delta_cpu_ms: jobs
                .iter()
                .filter(|j| matches!(j.coding, "dcb" | "dcz"))
                .map(|j| j.cpu_micros)
                .sum::<u64>()
                / 1000,
            dcz_bounded: run.dcz_bounded,
            max_files: run.max_files,
            dropped_deltas: run.dropped_deltas,
            ..Deploy::default()
        };
        let mut pages = Pages::default();
        for (key, a) in &manifest.files {
            deploy.files += 1 + a.encodings.len() as u64 + a.deltas.len() as u64;
            deploy.bytes += a.size + a.encodings.iter().map(|v| v.size).sum::<u64>();
            deploy.deltas += a.deltas.len() as u64;
            deploy.delta_bytes += a.deltas.iter().map(|d| d.size).sum::<u64>();
            if crate::model::dictionary::is_page(key) {
                pages.pages += 1;
                pages.marked += u64::from(a.cache == crate::model::manifest::Caching::Page);
                pages.deltas += a.deltas.len() as u64;
            }
            bytes += a.size;
            compressed += u64::from(!a.encodings.is_empty());
            let variants = a.encodings.iter().map(|v| (&v.coding, v.size));
            for (coding, size) in variants.chain(a.deltas.iter().map(|d| (&d.coding, d.size))) {
                let s = by_codec.entry(coding.clone()).or_default();
                s.files += 1;
                s.bytes_before += a.size;
                s.bytes_after += size;
            }
            dictionaries += u64::from(a.use_as_dictionary.is_some());
            for r in a.skipped.values() {
                *skipped.entry(r.as_str().to_string()).or_insert(0) += 1;
            }
            let reasons: BTreeSet<&str> = a.skipped.values().map(|r| r.as_str()).collect();
            for r in reasons {
                *skipped_files.entry(r.to_string()).or_insert(0) += 1;
            }
        }
        errors.extend(over_max_files(run.max_files, deploy.files, &manifest_path));
        let mut passed_count = BTreeMap::new();
        for (_, p) in &passed {
            *passed_count.entry(p.as_str().to_string()).or_insert(0) += 1;
        }
        Report {
            files: manifest.files.len() as u64,
            compressed,
            bytes,
            codecs: by_codec,
            dictionaries,
            deploy: Deploy {
                bytes: deploy.bytes + deploy.delta_bytes,
                ..deploy
            },
            pages,
            skipped,
            skipped_files,
            passed: passed_count,
            errors: errors
                .into_iter()
                .map(|e| ErrorEntry {
                    path: e.path().map(|p| p.display().to_string()),
                    kind: e.kind(),
                    io: e.io_kind().map(|k| format!("{k:?}")),
                    message: e.to_string(),
                    error: std::sync::Arc::new(e),
                })
                .collect(),
            wall_ms: wall.as_millis() as u64,
            threads,
            manifest: manifest_path,
            schedule: Schedule::of(&jobs, threads, run.jobs_wall_ms),
            written: manifest,
            run,
            jobs,
        }
    }

    /// True when every file went through.
    pub fn ok(&self) -> bool {
        self.errors.is_empty()
    }
}

/// `1 file`, `2 files`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Bytes in KiB/MiB/GiB with one decimal.
pub fn human(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn human_sizes() {
        assert_eq!(super::human(512), "512 B");
        assert_eq!(super::human(1536), "1.5 KiB");
        assert_eq!(super::human(61_493_509), "58.6 MiB");
    }
}
