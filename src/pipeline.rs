//! One run: lock DIR, walk, scan (hash every file), plan, run the (file x codec)
//! jobs longest first on a pool that never idles while work remains, remove what
//! is stale, and write the manifest.
//!
//! The previous manifest says which variants precompress wrote and from what:
//! a source whose content and settings did not change keeps its variants
//! untouched (no recompression), the variants of a changed or deleted source
//! are removed before anything else happens (a run killed at any moment leaves
//! no stale variant behind), and a `.br`/`.zst`/`.gz` that precompress did not
//! write is never deleted or overwritten without `--force`.
//!
//! The scan keeps small sources in memory (up to [`HELD_FILE_MAX`] each and
//! [`HELD_TOTAL_MAX`] in all), so their codec jobs share one read and one hash.
//! Larger sources are re-read by each job and checked against the scan's hash,
//! and from [`MAP_MIN`] on they are mapped instead: every job of a huge file
//! then shares the page cache's one copy, and a brotli part job touches only
//! its part and the window before it. Either way a source that changes mid-run
//! is caught (size and mtime after each write) instead of getting a stale
//! variant.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

use base64::Engine;
use rayon::prelude::*;

use crate::cache::{Cache, Hit};
use crate::config::Config;
use crate::encode::brotli_split::{compress_part, concat_parts, parts_for};
use crate::encode::delta::{DeltaCoding, DeltaEncoder, DeltaLevels};
use crate::encode::{new_encoder, BrotliEncoder, Codec, Encoder};
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::fsutil::{lock, open_to_read, probe_writable, remove_if_exists, write_atomic, CopyMeta};
use crate::journal::{self, Journal};
use crate::model::content::{content_kind, content_type};
use crate::model::dictionary::{
    available_dictionary, delta_path, delta_source, is_candidate, use_as_dictionary,
};
use crate::model::manifest::{etag, Asset, Delta, Manifest, SkippedDelta, Variant};
use crate::model::skip::SkipReason;
use crate::plan::{plan, Inputs, Job, JobKind, Outcome, Plan, Source, Unit};
use crate::releases::{self, OldFile, Releases};
use crate::report::{thread_cpu_micros, JobTiming, Report, RunCounts};
use crate::shard::{self, Shard};
use crate::walk::{walk, Found, LOCK_NAME};

/// Sources up to this size are kept in memory by the scan: with many small
/// files, opening, reading and hashing each again per codec cost more than the
/// hashing itself.
pub const HELD_FILE_MAX: u64 = 256 * 1024;
/// At most this much source is held in memory at once; larger trees re-read
/// the rest per job.
pub const HELD_TOTAL_MAX: u64 = 256 * 1024 * 1024;

/// The config file's name (`configfile::FILE_NAME`, which only the CLI
/// builds): in DIR it is never an asset.
const CONFIG_NAME: &str = "precompress.toml";

/// Sources of this size or more are mapped rather than read into each job's
/// own buffer.
pub const MAP_MIN: u64 = 64 << 20;

/// Sources of this size or more are probed by the scan with zstd level 1 as
/// they are hashed (about 1% of brotli q11's time): one that the probe does
/// not shrink at all gets no variant job (`incompressible`), where q11 spent
/// 26 minutes of CPU on a 300 MB incompressible script for nothing.
pub const PROBE_MIN: u64 = 4 << 20;

/// What the scan learned about one source.
#[derive(Debug)]
struct Scanned {
    found: Found,
    size: u64,
    blake3: String,
    sha256: String,
    sha256_raw: [u8; 32],
    meta: CopyMeta,
    /// The bytes that were hashed, for a small source (see [`HELD_FILE_MAX`]).
    content: Option<Vec<u8>>,
    /// A large source that zstd level 1 did not shrink ([`PROBE_MIN`]).
    incompressible: bool,
}

/// What one (file, codec) job produced.
enum JobOutcome {
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

/// The earlier files one asset gets deltas against, with their SHA-256.
type Chosen = Vec<(OldFile, [u8; 32])>;

/// A dictionary this run compresses against: an earlier release's file.
struct Dict {
    old: OldFile,
    sha256: [u8; 32],
}

/// Progress events, for a progress bar.
pub trait Progress: Sync {
    /// Another run holds DIR's lock; this one waits for it.
    fn waiting_for_lock(&self, _lock: &Path) {}
    /// Called once the job list is known.
    fn start(&self, _jobs: u64) {}
    /// Called after each job.
    fn job_done(&self) {}
}

/// A [`Progress`] that shows nothing.
pub struct NoProgress;
impl Progress for NoProgress {}

/// What the walk must never take for an asset, however it is spelled: the
/// manifest, the lock, precompress.toml in DIR (this run's settings, not a
/// page) and a cache folder inside DIR.
pub(crate) fn not_assets(cfg: &Config) -> Vec<PathBuf> {
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
pub(crate) fn walk_assets(cfg: &Config) -> crate::walk::Tree {
    let manifest_path = cfg.manifest_path();
    let mut tree = walk(&cfg.root, cfg.follow_links, &not_assets(cfg));
    tree.files.retain(|f| {
        !(f.path.parent() == manifest_path.parent()
            && f.rel
                .rsplit('/')
                .next()
                .is_some_and(|n| shard::partial_of(&manifest_path, n).is_some()))
    });
    tree
}

/// The encoder settings string of each coding, as recorded in the manifest
/// (`dcb` and `dcz` only when the run makes deltas).
pub fn settings_of(cfg: &Config) -> Result<BTreeMap<String, String>> {
    let mut settings = cfg
        .codecs
        .iter()
        .map(|&c| {
            let enc = new_encoder(c, cfg.levels).map_err(|e| {
                Error::Config(format!("cannot start the {} encoder: {e}", c.token()))
            })?;
            let mut s = enc.settings();
            if cfg.min_ratio < 1.0 {
                // A variant kept at one ratio may not be at another.
                s.push_str(&format!("; kept at most {} of the source", cfg.min_ratio));
            }
            Ok((c.token().to_string(), s))
        })
        .collect::<Result<BTreeMap<_, _>>>()?;
    if !cfg.dictionary_from.is_empty() {
        let enc = delta_encoder(cfg);
        for &c in &cfg.delta_codings {
            settings.insert(c.token().to_string(), enc.settings(c));
        }
    }
    Ok(settings)
}

/// The delta encoders run at the levels of their codecs, except that `dcb`
/// stops at quality 10. Measured with `bash bench/deltas.sh` (9 files of 6
/// npm release pairs): at q11 the run with `--dictionary-from` took 1.74x the
/// CPU of the run without, almost all of it echarts' 3.4 MB minor release
/// (4.4 s at q11, 1.6 s at q10 for a 3.9% larger delta); on patch releases
/// q10 and q11 gave the same few hundred bytes in the same time.
fn delta_encoder(cfg: &Config) -> DeltaEncoder {
    DeltaEncoder::new(DeltaLevels {
        brotli_quality: cfg.levels.brotli_quality.min(10),
        zstd_level: cfg.levels.zstd_level,
    })
}

/// Runs precompress over `cfg.root`. Per-file failures are in the report's
/// `errors`; `Err` is returned only when the run cannot happen at all.
///
/// Why this is one long function: it is only the wiring between the stages,
/// each in a function of its own (`previous_manifest`, `walk`, `scan_tree`,
/// `chosen_dictionaries`, `plan`, `sort_jobs`, `run_jobs`, `fold_outcomes`,
/// `asset_entry`), kept in one place so that the order of the side effects
/// reads top to bottom: lock, probe, temporary files out, stale variants out
/// before any job, jobs, manifest written last.
pub fn run(cfg: &Config, progress: &dyn Progress) -> Result<Report> {
    let started = Instant::now();
    let root = cfg.root.as_path();
    cfg.check_root()?;
    cfg.validate()?;
    cfg.check_outputs()?;
    let filter = Filter::new(&cfg.include, &cfg.exclude, cfg.min_size)?;
    let manifest_path = cfg.manifest_path();
    let settings = settings_of(cfg)?;
    let mut release_warnings = Vec::new();
    let releases = Releases::open(&cfg.dictionary_from, root, &mut release_warnings)?;
    let threads = cfg.worker_threads_with(releases.largest());
    let cache = cfg
        .cache_dir
        .as_deref()
        .map(|d| Cache::open(d, cfg.cache_max_size))
        .transpose()?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Config(format!("cannot start {threads} threads: {e}")))?;

    let _lock = lock(root, LOCK_NAME, || progress.waiting_for_lock(root))?;
    if !cfg.dry_run {
        // Found out now, not after compressing everything for nothing.
        probe_folders(root, &manifest_path, cache.as_ref())?;
    }

    let mut counts = RunCounts {
        dry_run: cfg.dry_run,
        warnings: release_warnings,
        ..RunCounts::default()
    };
    let prev = previous_manifest(&manifest_path, &mut counts.warnings);
    let mut ours = written_by(prev.as_ref());

    let tree = walk_assets(cfg);
    let mut errors = tree.errors;
    for (rel, why) in &tree.passed {
        if *why == crate::walk::Passed::NameNotServable {
            counts.warnings.push(format!(
                "{rel}: no URL path can name a file with a backslash in its name; not compressed, not in the manifest (rename it)"
            ));
        }
    }
    let remove = |path: &Path, rel: &str, counts: &mut RunCounts, errors: &mut Vec<Error>| {
        if !cfg.dry_run {
            if let Err(e) = remove_if_exists(path) {
                errors.push(e);
                return;
            }
        }
        counts.removed.push(rel.to_string());
    };
    for t in &tree.temps {
        // Left by a run that was killed: never a valid file, never served as a variant.
        remove(&t.path, &t.rel, &mut counts, &mut errors);
    }
    counts.removed.clear(); // temporary files are not worth listing

    // Hash everything: sources fully (blake3 + sha256), variants on disk (blake3).
    let (mut files, variants_on_disk) =
        pool.install(|| scan_tree(tree.files, tree.variants, tree.deltas, &filter, &mut errors));
    // What an interrupted run wrote and its journal proves: ours too.
    let (journal_entries, journals_read) = journal::read(root, cfg.shard);
    let journaled = recover(&journal_entries, &files, &variants_on_disk, &mut ours);
    let journaled: HashSet<&str> = journaled.iter().map(String::as_str).collect();
    // Sources deleted since the previous run: their variants now look like
    // assets of their own. Ours (same hash as recorded) go; others stay.
    files.retain(|f| match ours.get(&f.found.rel) {
        Some(b3) if *b3 == f.blake3 => {
            remove(&f.found.path, &f.found.rel, &mut counts, &mut errors);
            false
        }
        _ => true,
    });
    let existing: HashMap<&str, Option<&str>> = variants_on_disk
        .iter()
        .map(|(rel, h)| (rel.as_str(), h.as_deref()))
        .collect();
    let chosen =
        pool.install(|| chosen_dictionaries(&files, &filter, &releases, &mut counts.warnings));
    let (sources, dicts) = plan_sources(&files, chosen, &filter, cache.as_ref(), &settings);
    // Links passed over by the walk: where a variant would go, they are not ours.
    let symlinks: HashSet<&str> = tree
        .passed
        .iter()
        .filter(|(_, why)| *why == crate::walk::Passed::Symlink)
        .map(|(rel, _)| rel.as_str())
        .collect();
    let Plan {
        mut jobs,
        units,
        files: mut outcomes,
        mut refused,
        mut stale,
        reused,
    } = plan(
        &Inputs {
            prev: prev.as_ref(),
            settings: &settings,
            ours: &ours,
            on_disk: &existing,
            symlinks: &symlinks,
            journaled: &journaled,
            codecs: &cfg.codecs,
            delta_codings: &cfg.delta_codings,
            force: cfg.force,
        },
        &sources,
    );
    drop(sources);
    counts.reused += reused;
    let sharded = cfg.shard.map(|s| {
        let (shard, digest, owned, owner) = take_shard(s, &units, &mut jobs, &files, &dicts);
        // Another shard's files are that shard's to keep, check or remove.
        let mine =
            |path: &str| shard::group_of_path(path).and_then(|g| owner.get(&g)) == Some(&s.index);
        stale.retain(|p| mine(p));
        refused.retain(|(p, _)| mine(p));
        (shard, digest, owned)
    });
    for (rel, detail) in refused {
        errors.push(Error::Foreign {
            path: root.join(rel),
            detail: detail.into(),
        });
    }
    // Removed before any compression, so a run killed from here on leaves no
    // stale variant; the ones being redone are written again by their jobs.
    for rel in &stale {
        remove(&root.join(rel), rel, &mut counts, &mut errors);
    }

    sort_jobs(&mut jobs, &files, &dicts);
    let journal = if cfg.dry_run || jobs.is_empty() {
        None
    } else {
        Some(Journal::open(root, cfg.shard)?)
    };
    progress.start(jobs.len() as u64);

    let mut progress_of: Vec<FileProgress> =
        files.iter().map(|_| FileProgress::default()).collect();
    for j in &jobs {
        *progress_of[j.file].left.get_mut() += 1;
    }
    let ctx = JobContext {
        cfg,
        root,
        settings: &settings,
        cache: cache.as_ref(),
        journal: journal.as_ref(),
        dicts: &dicts,
        delta: delta_encoder(cfg),
        parts: Mutex::new(HashMap::new()),
        files: progress_of,
    };
    counts.prepare_ms = started.elapsed().as_millis() as u64;
    let jobs_started = Instant::now();
    let results = run_jobs(&ctx, &files, &jobs, threads, progress);
    counts.jobs_wall_ms = jobs_started.elapsed().as_millis() as u64;

    // Commit: each job's outcome into its source's, then each source's into
    // the manifest, in path order.
    let timings = fold_outcomes(
        &jobs,
        results,
        &files,
        &mut outcomes,
        &ctx.files,
        &mut counts,
        &mut errors,
    );

    let mut manifest = Manifest::new(settings.clone());
    for (f, o) in files.iter().zip(outcomes) {
        if o.changed {
            // Variants written before the change was seen are of content that is
            // no longer there: remove them, and leave the file to the next run.
            for p in &o.written {
                remove(&root.join(p), p, &mut counts, &mut errors);
            }
            continue;
        }
        let mark = (cfg.use_as_dictionary && filter.decide(&f.found.rel, f.size).is_none())
            .then(|| use_as_dictionary(&f.found.rel, f.size))
            .flatten();
        let (asset, not_worth_keeping) = asset_entry(f, o, mark, sharded.is_some());
        // Not stale, only not worth keeping: removed without being listed,
        // unless precompress did not write it (adopted, not journaled).
        if !cfg.dry_run {
            for p in &not_worth_keeping {
                if counts.foreign.contains(p) && !journaled.contains(p.as_str()) {
                    counts.warnings.push(format!(
                        "{p}: a delta precompress did not write, no smaller than the asset's best variant: not listed; remove it"
                    ));
                    continue;
                }
                if let Err(e) = remove_if_exists(&root.join(p)) {
                    errors.push(e);
                }
            }
        }
        manifest.files.insert(f.found.rel.clone(), asset);
    }
    if sharded.is_none() && !cfg.dry_run {
        unlisted_deltas_left(&manifest, &variants_on_disk, root, &errors, &mut counts);
    }
    if !cfg.dry_run {
        let written = match sharded {
            // A shard writes its part; `precompress merge` writes the manifest.
            Some((shard, jobs_digest, owned)) => shard::Partial {
                shard: shard.index,
                of: shard.count,
                jobs: jobs_digest,
                tree: shard::tree_digest(
                    manifest
                        .files
                        .iter()
                        .map(|(r, a)| (r.as_str(), a.blake3.as_str())),
                    &settings,
                ),
                owned,
                errors: errors.len() as u64,
                manifest: manifest.clone(),
                seal: String::new(), // set by write
            }
            .write(&shard::partial_path(&manifest_path, shard)),
            None => manifest.write(&manifest_path),
        };
        match written {
            Ok(()) => {
                counts.manifest_written = true;
                // Everything the journals named is now listed or gone.
                let done = match journal {
                    Some(j) => j.finish(&journals_read),
                    None => journals_read
                        .iter()
                        .try_for_each(|p| remove_if_exists(p).map(|_| ())),
                };
                if let Err(e) = done {
                    counts.warnings.push(format!("journal: {e}"));
                }
            }
            Err(e) => errors.push(e),
        }
        if let Some(c) = &cache {
            if let Err(e) = c.evict() {
                counts.warnings.push(format!("cache eviction: {e}"));
            }
        }
    }

    errors.sort_by(|a, b| a.path().cmp(&b.path()));
    // One unreadable earlier file is reported once, not once per asset.
    counts.warnings.sort();
    counts.warnings.dedup();
    counts.removed.sort();
    counts.foreign.sort();
    Ok(Report::new(
        manifest,
        &cfg.codecs,
        tree.passed,
        errors,
        timings,
        started.elapsed(),
        // What this run wrote: a shard's partial, not the manifest.
        match cfg.shard {
            Some(s) => shard::partial_path(&manifest_path, s),
            None => manifest_path,
        },
        threads,
        counts,
    ))
}

/// Warns of the deltas on disk that the manifest will not list and this run
/// left in place (against a dictionary it was not given, and no journal says
/// they are ours): `check` would call them unlisted, and nothing here may
/// remove them.
fn unlisted_deltas_left(
    manifest: &Manifest,
    on_disk: &[(String, Option<String>)],
    root: &Path,
    errors: &[Error],
    counts: &mut RunCounts,
) {
    let listed: HashSet<&str> = manifest
        .files
        .values()
        .flat_map(|a| a.deltas.iter().map(|d| d.path.as_str()))
        .collect();
    let failed: HashSet<PathBuf> = errors
        .iter()
        .filter_map(|e| e.path().map(Path::to_path_buf))
        .collect();
    for (rel, _) in on_disk {
        if delta_source(rel).is_none()
            || listed.contains(rel.as_str())
            || counts.removed.contains(rel)
            || failed.contains(&root.join(rel))
            || std::fs::symlink_metadata(root.join(rel)).is_err()
        {
            continue;
        }
        counts.warnings.push(format!(
            "{rel}: a delta the manifest does not list, against a dictionary this run was not given: left alone (give its earlier release with --dictionary-from to check and list it, or remove it)"
        ));
    }
}

/// Commit, first half: each job's outcome into its source's [`Outcome`] and
/// the run's counts; a source found changed after its last job is marked.
/// Returns the jobs' timings, in job order.
fn fold_outcomes(
    jobs: &[Job],
    results: Vec<(JobOutcome, Timing)>,
    files: &[Scanned],
    outcomes: &mut [Outcome],
    progress: &[FileProgress],
    counts: &mut RunCounts,
    errors: &mut Vec<Error>,
) -> Vec<JobTiming> {
    let mut timings = Vec::with_capacity(jobs.len());
    for (job, (outcome, t)) in jobs.iter().zip(results) {
        let f = &files[job.file];
        let o = &mut outcomes[job.file];
        let output = match &outcome {
            JobOutcome::Written { variant, .. } | JobOutcome::Adopted(variant) => variant.size,
            JobOutcome::DeltaWritten { delta, .. } => delta.size,
            _ => f.size,
        };
        timings.push(JobTiming {
            path: f.found.rel.clone(),
            coding: job.token(),
            input: f.size,
            output,
            micros: t.micros,
            cpu_micros: t.cpu_micros,
            encode_micros: t.encode_micros,
            verify_micros: t.verify_micros,
        });
        match outcome {
            JobOutcome::Written { variant, cached } => {
                counts.compressed += u64::from(!cached);
                counts.from_cache += u64::from(cached);
                o.written.push(variant.path.clone());
                o.variants.push(variant);
            }
            JobOutcome::Adopted(v) => {
                counts.foreign.push(v.path.clone());
                o.variants.push(v);
            }
            JobOutcome::Skipped(reason) => {
                // A job all the same: with the written ones it adds up to what
                // a rerun finds unchanged.
                counts.not_kept += 1;
                o.skipped.insert(job.codec.token().to_string(), reason);
            }
            JobOutcome::DeltaWritten { delta, cached } => {
                counts.compressed += u64::from(!cached);
                counts.from_cache += u64::from(cached);
                o.written.push(delta.path.clone());
                o.deltas.push(delta);
            }
            JobOutcome::DeltaAdopted(d) => {
                counts.foreign.push(d.path.clone());
                o.deltas.push(d);
            }
            JobOutcome::DeltaSkipped(skipped) => {
                counts.not_kept += 1;
                o.skipped_deltas.push(skipped);
            }
            JobOutcome::NoDelta(why) => counts.warnings.push(why),
            JobOutcome::Part => {}
            JobOutcome::Failed(e) => {
                o.changed |= matches!(e, Error::Changed { .. });
                errors.push(e);
            }
        }
    }
    for ((f, o), p) in files.iter().zip(outcomes.iter_mut()).zip(progress) {
        if p.changed.load(Ordering::Relaxed) && !o.changed {
            o.changed = true;
            errors.push(Error::Changed {
                path: f.found.path.clone(),
            });
        }
    }
    timings
}

/// Fails with a write error naming the folder unless DIR, the manifest's
/// folder and the cache can all be written.
fn probe_folders(root: &Path, manifest_path: &Path, cache: Option<&Cache>) -> Result<()> {
    let mut folders = vec![root.to_path_buf()];
    folders.extend(manifest_path.parent().map(Path::to_path_buf));
    folders.extend(cache.map(|c| c.dir().to_path_buf()));
    for dir in folders {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        probe_writable(&dir)?;
    }
    Ok(())
}

/// What the plan needs of each source, and the run's dictionaries (each
/// source's [`Chosen`] earlier files, numbered across the run).
fn plan_sources<'a>(
    files: &'a [Scanned],
    chosen: Vec<Chosen>,
    filter: &Filter,
    cache: Option<&Cache>,
    settings: &BTreeMap<String, String>,
) -> (Vec<Source<'a>>, Vec<Dict>) {
    let mut dicts: Vec<Dict> = Vec::new();
    let mut sources = Vec::with_capacity(files.len());
    for (f, chosen) in files.iter().zip(chosen) {
        let mut dictionaries = Vec::with_capacity(chosen.len());
        for (old, sha256) in chosen {
            dictionaries.push((dicts.len(), old.size, sha256));
            dicts.push(Dict { old, sha256 });
        }
        // A large brotli job runs as parts on several workers, unless the
        // cache may already hold it (the whole job reads it from there, and
        // on a miss produces the same bytes by compressing the parts itself).
        let parts = parts_for(f.size as usize, content_kind(&f.found.rel));
        let in_cache = parts > 1
            && cache.is_some_and(|c| {
                settings
                    .get(Codec::Brotli.token())
                    .is_some_and(|s| c.contains(&f.blake3, Codec::Brotli, s))
            });
        sources.push(Source {
            rel: &f.found.rel,
            size: f.size,
            blake3: &f.blake3,
            decision: filter.decide(&f.found.rel, f.size),
            incompressible: f.incompressible,
            brotli_parts: if in_cache { 1 } else { parts },
            dictionaries,
        });
    }
    (sources, dicts)
}

/// The scan stage (on the run's pool): every source read once through both
/// hashes ([`scan`]), every variant and delta on disk hashed. Sources that
/// cannot be read go to `errors`.
fn scan_tree(
    sources: Vec<Found>,
    variants: Vec<Found>,
    deltas: Vec<Found>,
    filter: &Filter,
    errors: &mut Vec<Error>,
) -> (Vec<Scanned>, Vec<(String, Option<String>)>) {
    let held = AtomicU64::new(0);
    let scanned: Vec<Result<Scanned>> = sources
        .into_par_iter()
        .map(|f| scan(f, filter, &held))
        .collect();
    let on_disk = variants
        .into_par_iter()
        .chain(deltas.into_par_iter())
        .map(|f| (f.rel, hash_file(&f.path).ok()))
        .collect();
    let mut files = Vec::with_capacity(scanned.len());
    for s in scanned {
        match s {
            Ok(s) => files.push(s),
            Err(e) => errors.push(e),
        }
    }
    (files, on_disk)
}

/// Per source that may get deltas, the earlier file of each release it is
/// paired with and that file's SHA-256 (read once, in parallel on the run's
/// pool); earlier files that could not be read are warnings.
fn chosen_dictionaries(
    files: &[Scanned],
    filter: &Filter,
    releases: &Releases,
    warnings: &mut Vec<String>,
) -> Vec<Chosen> {
    if releases.is_empty() {
        return vec![Vec::new(); files.len()];
    }
    let per_file: Vec<(Chosen, Vec<String>)> = files
        .par_iter()
        .map(|f| choose_dictionaries(f, filter, releases))
        .collect();
    per_file
        .into_iter()
        .map(|(c, w)| {
            warnings.extend(w);
            c
        })
        .collect()
}

/// A source's manifest entry from what the run left it with, settled
/// ([`Asset::settle`]) unless `raw` (a shard's, whose deltas are weighed
/// against the other shards' variants by `merge`), and the deltas not worth
/// keeping (to remove). `mark` is its `Use-As-Dictionary`, if any.
fn asset_entry(f: &Scanned, o: Outcome, mark: Option<String>, raw: bool) -> (Asset, Vec<String>) {
    let mut asset = Asset {
        size: f.size,
        blake3: f.blake3.clone(),
        sha256: f.sha256.clone(),
        content_type: content_type(&f.found.rel),
        deltas: o.deltas,
        etag: etag(&f.blake3),
        encodings: o.variants,
        skipped: o.skipped,
        skipped_deltas: o.skipped_deltas,
        use_as_dictionary: mark,
    };
    let remove = if raw { Vec::new() } else { asset.settle() };
    (asset, remove)
}

fn hash_file(path: &Path) -> std::io::Result<String> {
    let mut h = blake3::Hasher::new();
    h.update_reader(open_to_read(path)?)?;
    Ok(h.finalize().to_hex().to_string())
}

/// Reads a file once, streaming it through both hashes; keeps the bytes of a
/// small file that will be compressed while `held` (the bytes kept so far)
/// stays within [`HELD_TOTAL_MAX`].
fn scan(found: Found, filter: &Filter, held: &AtomicU64) -> Result<Scanned> {
    let rerr = |source| Error::Read {
        path: found.path.clone(),
        source,
    };
    let mut file = open_to_read(&found.path).map_err(rerr)?;
    let md = file.metadata().map_err(rerr)?;
    if !md.is_file() {
        return Err(rerr(std::io::Error::other("no longer a regular file")));
    }
    let mut b3 = blake3::Hasher::new();
    let mut sha = <sha2::Sha256 as sha2::Digest>::new();
    let mut size = 0u64;
    let keep = md.len() <= HELD_FILE_MAX
        && filter.decide(&found.rel, md.len()).is_none()
        && held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |h| {
                (h + md.len() <= HELD_TOTAL_MAX).then_some(h + md.len())
            })
            .is_ok();
    let mut content = None;
    let mut incompressible = false;
    if keep {
        // Exactly the size the metadata gave, without read_to_end's own stat,
        // seek and end-of-file read: a file that grows meanwhile is caught
        // after its variants are written (size and mtime).
        let mut bytes = vec![0u8; md.len() as usize];
        let mut filled = 0;
        while filled < bytes.len() {
            match file.read(&mut bytes[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(rerr(e)),
            }
        }
        bytes.truncate(filled);
        b3.update(&bytes);
        sha2::Digest::update(&mut sha, &bytes);
        size = bytes.len() as u64;
        content = Some(bytes);
    } else {
        let mut probe = (md.len() >= PROBE_MIN && filter.decide(&found.rel, md.len()).is_none())
            .then(Probe::new)
            .flatten();
        // One buffer per rayon thread: allocating and zeroing it per file cost
        // more than hashing a small file.
        thread_local!(static BUF: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0u8; 256 * 1024]));
        BUF.with_borrow_mut(|buf| -> Result<()> {
            loop {
                let n = file.read(buf).map_err(rerr)?;
                if n == 0 {
                    return Ok(());
                }
                b3.update(&buf[..n]);
                sha2::Digest::update(&mut sha, &buf[..n]);
                if let Some(p) = &mut probe {
                    p.feed(&buf[..n]);
                }
                size += n as u64;
            }
        })?;
        incompressible = probe.is_some_and(|p| p.finish() >= size);
    }
    let sha256_raw: [u8; 32] = sha2::Digest::finalize(sha).into();
    Ok(Scanned {
        content,
        incompressible,
        size,
        blake3: b3.finalize().to_hex().to_string(),
        sha256: base64::engine::general_purpose::STANDARD.encode(sha256_raw),
        sha256_raw,
        meta: CopyMeta {
            permissions: md.permissions(),
            modified: md.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        },
        found,
    })
}

/// zstd level 1 over a source as the scan reads it, counting what it writes.
struct Probe {
    cctx: zstd::zstd_safe::CCtx<'static>,
    out: Vec<u8>,
    written: u64,
}

impl Probe {
    fn new() -> Option<Probe> {
        let mut cctx = zstd::zstd_safe::CCtx::create();
        cctx.set_parameter(zstd::zstd_safe::CParameter::CompressionLevel(1))
            .ok()?;
        Some(Probe {
            cctx,
            out: vec![0; zstd::zstd_safe::CCtx::out_size()],
            written: 0,
        })
    }

    fn feed(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let mut input = zstd::zstd_safe::InBuffer::around(data);
            let mut output = zstd::zstd_safe::OutBuffer::around(&mut self.out[..]);
            if self.cctx.compress_stream(&mut output, &mut input).is_err() {
                self.written = u64::MAX; // no verdict: treated as compressible
                return;
            }
            self.written = self.written.saturating_add(output.pos() as u64);
            data = &data[input.pos()..];
        }
    }

    /// The bytes the probe wrote for the whole source.
    fn finish(mut self) -> u64 {
        if self.written == u64::MAX {
            return 0;
        }
        loop {
            let mut output = zstd::zstd_safe::OutBuffer::around(&mut self.out[..]);
            match self.cctx.end_stream(&mut output) {
                Ok(left) => {
                    self.written += output.pos() as u64;
                    if left == 0 {
                        return self.written;
                    }
                }
                Err(_) => return 0,
            }
        }
    }
}

/// The earlier files an asset gets deltas against: for each release, the one
/// [`releases::choose`] picks, each dictionary once. Only assets that are
/// compressed and are dictionary candidates themselves get deltas (a browser
/// holds only what was sent as a dictionary). With warnings for earlier files
/// that could not be read.
fn choose_dictionaries(f: &Scanned, filter: &Filter, releases: &Releases) -> (Chosen, Vec<String>) {
    let mut warnings = Vec::new();
    let mut chosen: Chosen = Vec::new();
    let rel = &f.found.rel;
    if filter.decide(rel, f.size).is_some() || !is_candidate(rel, f.size) {
        return (chosen, warnings);
    }
    let mut ends: Option<(Vec<u8>, Vec<u8>)> = None;
    for group in releases.paired(rel, f.size) {
        let group = if group.len() > releases::MAX_TRIED {
            let (head, tail) = ends.get_or_insert_with(|| source_ends(f));
            releases::shortlist(group, head, tail)
        } else {
            group
        };
        let input = || {
            f.content
                .clone()
                .or_else(|| crate::fsutil::read_regular(&f.found.path, u64::MAX).ok())
        };
        if let Some((old, sha)) = releases::choose(input, &f.sha256_raw, &group, &mut warnings) {
            if !chosen.iter().any(|(_, s)| *s == sha) {
                chosen.push((old.clone(), sha));
            }
        }
    }
    (chosen, warnings)
}

/// The first and last [`releases::AFFINITY_BYTES`] of a source (empty if it
/// cannot be read), to rank its candidate dictionaries.
fn source_ends(f: &Scanned) -> (Vec<u8>, Vec<u8>) {
    let n = releases::AFFINITY_BYTES;
    match &f.content {
        Some(c) => (
            c[..n.min(c.len())].to_vec(),
            c[c.len().saturating_sub(n)..].to_vec(),
        ),
        None => releases::file_ends(&f.found.path, f.size).unwrap_or_default(),
    }
}

/// How long one job took.
struct Timing {
    micros: u64,
    cpu_micros: u64,
    encode_micros: u64,
    verify_micros: u64,
}

/// What every job needs besides its own file.
struct JobContext<'a> {
    cfg: &'a Config,
    root: &'a Path,
    settings: &'a BTreeMap<String, String>,
    cache: Option<&'a Cache>,
    /// Where each file is recorded before it is renamed into place (none in
    /// a dry run).
    journal: Option<&'a Journal>,
    /// The dictionaries delta jobs refer to.
    dicts: &'a [Dict],
    delta: DeltaEncoder,
    /// Split brotli jobs in progress, by file.
    parts: Mutex<HashMap<usize, PartsState>>,
    /// Per file (by index in the run's list), shared by its jobs.
    files: Vec<FileProgress>,
}

/// A source's jobs as they run on the pool.
#[derive(Default)]
struct FileProgress {
    /// Jobs not finished yet.
    left: AtomicUsize,
    /// One of them wrote a variant or delta.
    wrote: AtomicBool,
    /// The source was found changed after the last of them.
    changed: AtomicBool,
}

impl JobContext<'_> {
    /// Called as each job of `file` ends. Once its last job is done, if any of
    /// them wrote a variant, the source is checked (size and mtime) once for
    /// them all: a change after it was read means those variants are stale,
    /// and the run takes them back out.
    fn file_job_done(&self, file: usize, f: &Scanned, wrote: bool) {
        let p = &self.files[file];
        if wrote {
            p.wrote.store(true, Ordering::Relaxed);
        }
        // AcqRel: the last job sees every other job's `wrote`.
        if p.left.fetch_sub(1, Ordering::AcqRel) == 1
            && p.wrote.load(Ordering::Relaxed)
            && source_changed(&f.found.path, f)
        {
            p.changed.store(true, Ordering::Relaxed);
        }
    }
}

/// The parts of one split brotli job done so far.
struct PartsState {
    outs: Vec<Option<Vec<u8>>>,
    remaining: usize,
    failed: bool,
}

/// Runs the jobs on `threads` workers that take the next job from a shared
/// counter, so the order is exactly longest-first and no worker idles while a
/// job is left. Returns outcomes in job order with their durations (µs).
fn run_jobs(
    ctx: &JobContext,
    files: &[Scanned],
    jobs: &[Job],
    threads: usize,
    progress: &dyn Progress,
) -> Vec<(JobOutcome, Timing)> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<(JobOutcome, Timing)>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.min(jobs.len()).max(1) {
            s.spawn(|| {
                let mut worker = Worker::new(ctx);
                // One thread-CPU clock read (a syscall) ends a job and starts
                // the next: the few instructions between jobs count to the next.
                let mut cpu = thread_cpu_micros();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let t = Instant::now();
                    worker.encode_micros = 0;
                    worker.verify_micros = 0;
                    worker.encode_end = None;
                    worker.job_start = Some(cpu);
                    let outcome = worker.run(job.file, &files[job.file], job.codec, job.kind);
                    let wrote = matches!(
                        outcome,
                        JobOutcome::Written { .. } | JobOutcome::DeltaWritten { .. }
                    ) && !ctx.cfg.dry_run;
                    ctx.file_job_done(job.file, &files[job.file], wrote);
                    let micros = t.elapsed().as_micros() as u64;
                    let end = thread_cpu_micros();
                    let timing = Timing {
                        micros,
                        cpu_micros: end - std::mem::replace(&mut cpu, end),
                        encode_micros: worker.encode_micros,
                        verify_micros: worker.verify_micros,
                    };
                    results.lock().unwrap()[i] = Some((outcome, timing));
                    progress.job_done();
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

/// Per-thread state: encoders are built on first use and kept, and the
/// buffers grow to the largest file seen and are reused.
struct Worker<'a> {
    ctx: &'a JobContext<'a>,
    encoders: [Option<Box<dyn Encoder>>; 3],
    input: Vec<u8>,
    output: Vec<u8>,
    /// CPU time spent in the encoder during the current job (µs).
    encode_micros: u64,
    /// CPU time spent decoding and comparing during the current job (µs).
    verify_micros: u64,
    /// The thread CPU clock when the encoder returned, if verifying follows at
    /// once: read again it would cost one more syscall per job.
    encode_end: Option<u64>,
    /// The thread CPU clock when the job started, while nothing but
    /// bookkeeping has run since: the encoder's start for a source held in
    /// memory, without a clock read of its own (a syscall of ~2 µs here).
    job_start: Option<u64>,
}

impl<'a> Worker<'a> {
    fn new(ctx: &'a JobContext<'a>) -> Self {
        Worker {
            ctx,
            encoders: [None, None, None],
            input: Vec::new(),
            output: Vec::new(),
            encode_micros: 0,
            verify_micros: 0,
            encode_end: None,
            job_start: None,
        }
    }

    fn run(&mut self, file: usize, f: &Scanned, codec: Codec, kind: JobKind) -> JobOutcome {
        // The read buffer leaves `self` while the job borrows it.
        let mut buf = std::mem::take(&mut self.input);
        let mut map = None;
        if f.content.is_none() {
            self.job_start = None; // reading it is not encoding
        }
        let input = source(f, &mut buf, &mut map);
        let r = match kind {
            JobKind::Compress => input.and_then(|i| self.compress(f, codec, i)),
            JobKind::Part { index, of } => self.part(file, f, index, of, input),
            JobKind::CheckForeign { ours } => {
                input.and_then(|i| self.check_foreign(f, codec, i, ours))
            }
            JobKind::Delta { dict, coding } => {
                input.and_then(|i| self.delta(f, &self.ctx.dicts[dict], coding, i))
            }
            JobKind::CheckDelta { dict, coding, ours } => {
                input.and_then(|i| self.check_delta(f, &self.ctx.dicts[dict], coding, i, ours))
            }
        };
        self.input = buf;
        r.unwrap_or_else(JobOutcome::Failed)
    }

    /// This worker's encoder for `codec`, built on first use.
    fn encoder(&mut self, codec: Codec, path: &Path) -> Result<&mut dyn Encoder> {
        let slot = codec.index();
        if self.encoders[slot].is_none() {
            let enc = new_encoder(codec, self.ctx.cfg.levels).map_err(|source| Error::Encode {
                path: path.to_path_buf(),
                coding: codec.token(),
                source,
            })?;
            self.encoders[slot] = Some(enc);
        }
        Ok(self.encoders[slot].as_deref_mut().expect("just built"))
    }

    /// Whether `self.output` decodes to exactly `input` (else why not).
    fn output_decodes(
        &mut self,
        codec: Codec,
        path: &Path,
        input: &[u8],
    ) -> Result<std::result::Result<(), String>> {
        self.encoder(codec, path)?;
        let enc = self.encoders[codec.index()]
            .as_deref_mut()
            .expect("built above");
        let t = self.encode_end.take().unwrap_or_else(thread_cpu_micros);
        let r = enc.verify(&self.output, input);
        self.verify_micros += thread_cpu_micros() - t;
        Ok(r)
    }

    fn compress(&mut self, f: &Scanned, codec: Codec, input: &[u8]) -> Result<JobOutcome> {
        let path = &f.found.path;
        let settings = &self.ctx.settings[codec.token()];
        if self.ctx.cache.is_some() {
            self.job_start = None; // nor is a cache lookup
        }
        match self
            .ctx
            .cache
            .and_then(|c| c.get(&f.blake3, codec, settings))
        {
            Some(Hit::NotSmaller) => return Ok(JobOutcome::Skipped(SkipReason::NotSmaller)),
            Some(Hit::Output(bytes)) => {
                self.output = bytes;
                // A corrupt entry is ignored (and replaced), never copied into DIR.
                if self.output.len() < input.len()
                    && self.output_decodes(codec, path, input)?.is_ok()
                {
                    if !self.saves_enough(input.len()) {
                        return Ok(JobOutcome::Skipped(SkipReason::SavesTooLittle));
                    }
                    return self.place(f, codec, true);
                }
            }
            None => {}
        }
        let kind = content_kind(&f.found.rel);
        self.encoder(codec, path)?;
        let enc = self.encoders[codec.index()]
            .as_deref_mut()
            .expect("built above");
        let t = self.job_start.take().unwrap_or_else(thread_cpu_micros);
        let r = enc.encode(input, kind, &mut self.output);
        let end = thread_cpu_micros();
        self.encode_micros += end - t;
        self.encode_end = Some(end);
        r.map_err(|source| Error::Encode {
            path: path.clone(),
            coding: codec.token(),
            source,
        })?;
        self.finish_encoded(f, codec, input)
    }

    /// One part of a brotli stream split across jobs. The job that completes
    /// the last part joins them and finishes the variant.
    fn part(
        &mut self,
        file: usize,
        f: &Scanned,
        index: usize,
        parts: usize,
        input: Result<&[u8]>,
    ) -> Result<JobOutcome> {
        let path = &f.found.path;
        let mut out = Vec::new();
        let done = input.and_then(|input| {
            let params = BrotliEncoder::new(self.ctx.cfg.levels.brotli_quality)
                .params(input.len(), content_kind(&f.found.rel));
            let t = thread_cpu_micros();
            let r = compress_part(input, index, parts, &params, &mut out);
            self.encode_micros += thread_cpu_micros() - t;
            r.map(|()| input).map_err(|source| Error::Encode {
                path: path.clone(),
                coding: Codec::Brotli.token(),
                source,
            })
        });
        let all = {
            let mut states = self.ctx.parts.lock().unwrap();
            let st = states.entry(file).or_insert_with(|| PartsState {
                outs: vec![None; parts],
                remaining: parts,
                failed: false,
            });
            st.remaining -= 1;
            match &done {
                Ok(_) => st.outs[index] = Some(out),
                Err(_) => st.failed = true,
            }
            (st.remaining == 0 && !st.failed).then(|| std::mem::take(&mut st.outs))
        };
        let input = done?;
        let Some(all) = all else {
            return Ok(JobOutcome::Part);
        };
        let all: Vec<Vec<u8>> = all
            .into_iter()
            .map(|o| o.expect("every part is done"))
            .collect();
        concat_parts(all, &mut self.output).map_err(|source| Error::Encode {
            path: path.clone(),
            coding: Codec::Brotli.token(),
            source,
        })?;
        self.finish_encoded(f, Codec::Brotli, input)
    }

    /// `self.output` is at most `--min-ratio` of a source of `input_len` bytes.
    fn saves_enough(&self, input_len: usize) -> bool {
        self.output.len() as f64 <= input_len as f64 * self.ctx.cfg.min_ratio
    }

    /// Keeps `self.output` if it is smaller than the source (by `--min-ratio`)
    /// and decodes back to it.
    fn finish_encoded(&mut self, f: &Scanned, codec: Codec, input: &[u8]) -> Result<JobOutcome> {
        let path = &f.found.path;
        let settings = &self.ctx.settings[codec.token()];
        if self.output.len() >= input.len() {
            if let Some(c) = self.ctx.cache {
                let _ = c.put(&f.blake3, codec, settings, &Hit::NotSmaller);
            }
            return Ok(JobOutcome::Skipped(SkipReason::NotSmaller));
        }
        // Never write what a browser could not decode back to the source.
        if let Err(detail) = self.output_decodes(codec, path, input)? {
            return Err(Error::Verify {
                path: path.clone(),
                coding: codec.token(),
                detail,
            });
        }
        if let Some(c) = self.ctx.cache {
            // A failed cache write costs only a future miss. Cached as bytes
            // even when they save too little: that is this run's to say.
            let _ = c.put(
                &f.blake3,
                codec,
                settings,
                &Hit::Output(self.output.clone()),
            );
        }
        if !self.saves_enough(input.len()) {
            return Ok(JobOutcome::Skipped(SkipReason::SavesTooLittle));
        }
        self.place(f, codec, false)
    }

    /// Writes `self.output` as the variant (unless dry run).
    fn place(&mut self, f: &Scanned, codec: Codec, cached: bool) -> Result<JobOutcome> {
        let dest_rel = format!("{}.{}", f.found.rel, codec.suffix());
        let b3 = blake3::hash(&self.output).to_hex().to_string();
        // Checked against the source once all of its jobs are done
        // (JobContext::file_job_done).
        self.write(f, &dest_rel, &b3)?;
        let variant = Variant {
            coding: codec.token().to_string(),
            path: dest_rel,
            size: self.output.len() as u64,
            etag: etag(&b3),
            blake3: b3,
        };
        Ok(JobOutcome::Written { variant, cached })
    }

    /// A delta of `f` against `dict`: from the cache (checked) or encoded and
    /// checked, kept if smaller than the source (the comparison with the best
    /// variant waits for every job of the file), and written.
    fn delta(
        &mut self,
        f: &Scanned,
        dict: &Dict,
        coding: DeltaCoding,
        input: &[u8],
    ) -> Result<JobOutcome> {
        self.job_start = None; // reading the dictionary is not encoding
        let bytes = match releases::load(&dict.old, Some(&dict.sha256)) {
            Ok(l) => l.bytes,
            Err(why) => {
                return Ok(JobOutcome::NoDelta(format!(
                    "{why}: {} gets no {} delta against it",
                    f.found.rel,
                    coding.token()
                )))
            }
        };
        let skipped = || {
            JobOutcome::DeltaSkipped(SkippedDelta {
                coding: coding.token().into(),
                dictionary: available_dictionary(&dict.sha256),
                reason: SkipReason::NotSmaller,
            })
        };
        let cached = match self.cached_delta(f, dict, coding, &bytes, input) {
            Some(Hit::NotSmaller) => return Ok(skipped()),
            Some(Hit::Output(out)) => {
                self.output = out;
                true
            }
            None => false,
        };
        if !cached && !self.encode_delta(f, dict, coding, &bytes, input)? {
            return Ok(skipped());
        }
        self.place_delta(f, dict, coding, cached)
    }

    /// What the cache holds for this delta: that it is not smaller, or its
    /// bytes once they decode with `dict_bytes` to `input`. A corrupt entry
    /// is a miss (and is replaced), never copied into DIR.
    fn cached_delta(
        &mut self,
        f: &Scanned,
        dict: &Dict,
        coding: DeltaCoding,
        dict_bytes: &[u8],
        input: &[u8],
    ) -> Option<Hit> {
        let settings = &self.ctx.settings[coding.token()];
        let hit = self
            .ctx
            .cache?
            .get_delta(&f.blake3, coding, settings, &dict.sha256)?;
        let Hit::Output(out) = hit else {
            return Some(hit);
        };
        let t = thread_cpu_micros();
        let ok = out.len() < input.len()
            && self
                .ctx
                .delta
                .verify(coding, &out, dict_bytes, &dict.sha256, input)
                .is_ok();
        self.verify_micros += thread_cpu_micros() - t;
        ok.then_some(Hit::Output(out))
    }

    /// Encodes the delta into `self.output` and checks that it decodes back
    /// to `input`; false when it is not smaller than the source. Either
    /// outcome goes into the cache.
    fn encode_delta(
        &mut self,
        f: &Scanned,
        dict: &Dict,
        coding: DeltaCoding,
        dict_bytes: &[u8],
        input: &[u8],
    ) -> Result<bool> {
        let path = &f.found.path;
        let enc = self.ctx.delta;
        let settings = &self.ctx.settings[coding.token()];
        let key = (&f.blake3, coding, settings.as_str(), &dict.sha256);
        let t = thread_cpu_micros();
        let r = enc.encode(
            coding,
            dict_bytes,
            &dict.sha256,
            input,
            content_kind(&f.found.rel),
            &mut self.output,
        );
        let end = thread_cpu_micros();
        self.encode_micros += end - t;
        r.map_err(|source| Error::Encode {
            path: path.clone(),
            coding: coding.token(),
            source,
        })?;
        if self.output.len() >= input.len() {
            if let Some(c) = self.ctx.cache {
                let _ = c.put_delta(key.0, key.1, key.2, key.3, &Hit::NotSmaller);
            }
            return Ok(false);
        }
        // Never write what a browser could not decode back to the source.
        let r = enc.verify(coding, &self.output, dict_bytes, &dict.sha256, input);
        self.verify_micros += thread_cpu_micros() - end;
        if let Err(detail) = r {
            return Err(Error::Verify {
                path: path.clone(),
                coding: coding.token(),
                detail,
            });
        }
        if let Some(c) = self.ctx.cache {
            // A failed cache write costs only a future miss.
            let _ = c.put_delta(
                key.0,
                key.1,
                key.2,
                key.3,
                &Hit::Output(self.output.clone()),
            );
        }
        Ok(true)
    }

    /// Writes `self.output` as the delta of `f` against `dict` (unless dry run).
    fn place_delta(
        &mut self,
        f: &Scanned,
        dict: &Dict,
        coding: DeltaCoding,
        cached: bool,
    ) -> Result<JobOutcome> {
        let dest_rel = delta_path(&f.found.rel, &dict.sha256, coding);
        let b3 = blake3::hash(&self.output).to_hex().to_string();
        // Checked against the source once all of its jobs are done.
        self.write(f, &dest_rel, &b3)?;
        Ok(JobOutcome::DeltaWritten {
            delta: Delta {
                coding: coding.token().into(),
                dictionary: available_dictionary(&dict.sha256),
                dictionary_path: dict.old.rel.clone(),
                path: dest_rel,
                size: self.output.len() as u64,
                etag: etag(&b3),
                blake3: b3,
            },
            cached,
        })
    }

    /// Writes `self.output` (of blake3 `b3`) at `dest_rel` (unless dry run),
    /// recorded in the journal first: a run killed after the rename leaves a
    /// file the next run knows for its own.
    fn write(&self, f: &Scanned, dest_rel: &str, b3: &str) -> Result<()> {
        if self.ctx.cfg.dry_run {
            return Ok(());
        }
        if let Some(j) = self.ctx.journal {
            j.record(dest_rel, b3, &f.blake3)?;
        }
        write_atomic(&self.ctx.root.join(dest_rel), &self.output, Some(&f.meta))
    }

    /// A delta the manifest does not list sits where ours against `dict`
    /// would go (the manifest was lost, or `ours`: a killed run wrote it).
    /// Listed when it decodes with `dict` to the source; otherwise made
    /// again if ours, else an error naming it (a server would serve it stale).
    fn check_delta(
        &mut self,
        f: &Scanned,
        dict: &Dict,
        coding: DeltaCoding,
        input: &[u8],
        ours: bool,
    ) -> Result<JobOutcome> {
        self.job_start = None;
        let dest_rel = delta_path(&f.found.rel, &dict.sha256, coding);
        let dest = self.ctx.root.join(&dest_rel);
        let bytes = crate::fsutil::read_regular(&dest, u64::MAX).map_err(|source| Error::Read {
            path: dest.clone(),
            source,
        })?;
        let dict_bytes = match releases::load(&dict.old, Some(&dict.sha256)) {
            Ok(l) => l.bytes,
            Err(why) => {
                return Ok(JobOutcome::NoDelta(format!(
                    "{why}: {dest_rel} could not be checked against it"
                )))
            }
        };
        let t = thread_cpu_micros();
        let r = self
            .ctx
            .delta
            .verify(coding, &bytes, &dict_bytes, &dict.sha256, input);
        self.verify_micros += thread_cpu_micros() - t;
        match r {
            Ok(()) => {
                let b3 = blake3::hash(&bytes).to_hex().to_string();
                Ok(JobOutcome::DeltaAdopted(Delta {
                    coding: coding.token().into(),
                    dictionary: available_dictionary(&dict.sha256),
                    dictionary_path: dict.old.rel.clone(),
                    path: dest_rel,
                    size: bytes.len() as u64,
                    etag: etag(&b3),
                    blake3: b3,
                }))
            }
            Err(_) if ours => self.delta(f, dict, coding, input),
            Err(detail) => Err(Error::Foreign { path: dest, detail }),
        }
    }

    /// A variant the manifest does not list sits where ours would go. A
    /// foreign one is kept either way; listed when it decodes to the source,
    /// an error when it does not (a server would serve stale content). One
    /// of `ours` (a killed run's, by its journal) that does not decode is
    /// made again.
    fn check_foreign(
        &mut self,
        f: &Scanned,
        codec: Codec,
        input: &[u8],
        ours: bool,
    ) -> Result<JobOutcome> {
        let dest_rel = format!("{}.{}", f.found.rel, codec.suffix());
        let dest = self.ctx.root.join(&dest_rel);
        self.output.clear();
        open_to_read(&dest)
            .and_then(|mut h| h.read_to_end(&mut self.output))
            .map_err(|source| Error::Read {
                path: dest.clone(),
                source,
            })?;
        match self.output_decodes(codec, &dest, input)? {
            Ok(()) => {
                let b3 = blake3::hash(&self.output).to_hex().to_string();
                Ok(JobOutcome::Adopted(Variant {
                    coding: codec.token().to_string(),
                    path: dest_rel,
                    size: self.output.len() as u64,
                    etag: etag(&b3),
                    blake3: b3,
                }))
            }
            Err(_) if ours => self.compress(f, codec, input),
            Err(detail) => Err(Error::Foreign { path: dest, detail }),
        }
    }
}

/// The source's bytes: those the scan held; or, from [`MAP_MIN`] on, a
/// read-only mapping in `map` whose size and mtime are still the scan's
/// (hashing a huge file again per job would cost more than its brotli part);
/// or else read again into `buf` and checked against the scan's hash.
fn source<'a>(
    f: &'a Scanned,
    buf: &'a mut Vec<u8>,
    map: &'a mut Option<memmap2::Mmap>,
) -> Result<&'a [u8]> {
    if let Some(held) = &f.content {
        return Ok(held);
    }
    let path = &f.found.path;
    let rerr = |source| Error::Read {
        path: path.clone(),
        source,
    };
    if f.size >= MAP_MIN {
        let file = open_to_read(path).map_err(rerr)?;
        // SAFETY: the mapping is read-only and lives only for this job. Its
        // bytes are those the scan hashed unless the file is written meanwhile,
        // which the size and mtime checks here and after the write catch; a
        // file truncated during the job would fault (SIGBUS), as with any
        // mapped read (the README says so).
        let mapped = unsafe { memmap2::Mmap::map(&file) }.map_err(rerr)?;
        if mapped.len() as u64 != f.size || source_changed(path, f) {
            return Err(Error::Changed { path: path.clone() });
        }
        return Ok(map.insert(mapped));
    }
    buf.clear();
    open_to_read(path)
        .and_then(|mut h| h.read_to_end(buf))
        .map_err(rerr)?;
    if blake3::hash(buf).to_hex().as_str() != f.blake3 {
        return Err(Error::Changed { path: path.clone() });
    }
    Ok(buf)
}

/// Cheap check that a file is still what the scan saw: size and mtime.
fn source_changed(path: &PathBuf, f: &Scanned) -> bool {
    match std::fs::metadata(path) {
        Ok(md) => md.len() != f.size || md.modified().ok() != Some(f.meta.modified),
        Err(_) => true,
    }
}

/// The previous run's manifest, if there is one that can be read (a corrupt
/// one is a warning: the run rebuilds it, deleting nothing it cannot prove
/// precompress wrote).
fn previous_manifest(path: &Path, warnings: &mut Vec<String>) -> Option<Manifest> {
    match path.exists().then(|| Manifest::read(path)) {
        Some(Ok(m)) => Some(m),
        Some(Err(e)) => {
            warnings.push(format!("{e}; rebuilding it from the files on disk, deleting nothing precompress cannot prove it wrote"));
            None
        }
        None => None,
    }
}

/// Variants and deltas the previous run wrote: path -> the blake3 they had.
fn written_by(prev: Option<&Manifest>) -> HashMap<String, String> {
    prev.iter()
        .flat_map(|p| p.files.values())
        .flat_map(|a| {
            let variants = a.encodings.iter().map(|v| (&v.path, &v.blake3));
            let deltas = a.deltas.iter().map(|d| (&d.path, &d.blake3));
            variants.chain(deltas).map(|(p, b)| (p.clone(), b.clone()))
        })
        .collect()
}

/// Takes in what the journals of interrupted runs recorded
/// ([`crate::journal`]): each file still on disk with the content its line
/// names is ours (added to `ours`, so the plan removes it when this run does
/// not keep it). Returns those made from their source as it is now: the plan
/// checks them and adopts them (a variant or delta that decodes to the
/// source) instead of calling them foreign.
fn recover(
    entries: &HashMap<String, journal::Entry>,
    files: &[Scanned],
    on_disk: &[(String, Option<String>)],
    ours: &mut HashMap<String, String>,
) -> Vec<String> {
    if entries.is_empty() {
        return Vec::new();
    }
    // A variant whose source is gone is walked as a source.
    let disk: HashMap<&str, &str> = on_disk
        .iter()
        .filter_map(|(p, h)| Some((p.as_str(), h.as_deref()?)))
        .chain(
            files
                .iter()
                .map(|f| (f.found.rel.as_str(), f.blake3.as_str())),
        )
        .collect();
    let mut adoptable = Vec::new();
    for (path, e) in entries {
        if disk.get(path.as_str()) != Some(&e.blake3.as_str()) || ours.get(path) == Some(&e.blake3)
        {
            continue; // not what the killed run wrote, or listed already
        }
        let source = crate::model::content::variant_source(path)
            .map(|(s, _)| s)
            .or_else(|| delta_source(path).map(|(s, _)| s));
        if source.and_then(|s| disk.get(s)) == Some(&e.source.as_str()) {
            adoptable.push(path.clone());
        }
        ours.insert(path.clone(), e.blake3.clone());
    }
    adoptable.sort();
    adoptable
}

/// `--shard K/N`: keeps the jobs of shard K only, the split computed the
/// same way in every shard ([`shard::split`]) from every unit the settings
/// ask for, costed by what making it would take ([`unit_cost`]), whatever is
/// already on disk: shards run one after another in one folder, or a shard
/// run again, split as the first did. Returns the shard, the digest of all
/// units, the ones kept, and the owner of each.
fn take_shard(
    s: Shard,
    units: &[Unit],
    jobs: &mut Vec<Job>,
    files: &[Scanned],
    dicts: &[Dict],
) -> (Shard, String, Vec<String>, BTreeMap<String, u32>) {
    let key = |file: usize, token: &str, dict: Option<usize>| {
        shard::group_key(
            &files[file].found.rel,
            token,
            dict.map(|d| &dicts[d].sha256),
        )
    };
    let groups: Vec<shard::Group> = units
        .iter()
        .map(|u| shard::Group {
            key: key(u.file, u.token, u.dict),
            cost: unit_cost(u, files, dicts),
        })
        .collect();
    let owner = shard::split(&groups, s.count);
    let digest = shard::digest_keys(owner.keys());
    let owned: Vec<String> = owner
        .iter()
        .filter(|(_, &k)| k == s.index)
        .map(|(key, _)| key.clone())
        .collect();
    jobs.retain(|j| owner.get(&key(j.file, j.token(), j.dict())) == Some(&s.index));
    (s, digest, owned, owner)
}

/// What making a unit costs, for the shard split: its bytes in (a delta's
/// dictionary too) times its coding's relative cost.
fn unit_cost(u: &Unit, files: &[Scanned], dicts: &[Dict]) -> u64 {
    let size = files[u.file].size;
    match u.dict {
        Some(d) => {
            let coding = DeltaCoding::parse(u.token).expect("a delta unit's token");
            (size + dicts[d].old.size) * coding.cost_weight()
        }
        None => {
            size * Codec::parse(u.token)
                .expect("a variant unit's token")
                .cost_weight()
        }
    }
}

/// A job's cost estimate, for ordering and for the shard split: bytes in
/// times the coding's relative cost. `whole`: a part costs as its whole stream.
fn job_cost(j: &Job, files: &[Scanned], dicts: &[Dict], whole: bool) -> u64 {
    match j.kind {
        JobKind::Compress => files[j.file].size * j.codec.cost_weight(),
        JobKind::Part { .. } if whole => files[j.file].size * j.codec.cost_weight(),
        // Later parts also index the parts before them as their dictionary.
        JobKind::Part { index, of } => {
            files[j.file].size / of as u64 * j.codec.cost_weight() + index as u64
        }
        JobKind::CheckForeign { .. } => files[j.file].size,
        JobKind::CheckDelta { dict, .. } => files[j.file].size + dicts[dict].old.size,
        // The dictionary is indexed as well as the file compressed.
        JobKind::Delta { dict, coding } => {
            (files[j.file].size + dicts[dict].old.size) * coding.cost_weight()
        }
    }
}

/// Longest first (by size and codec cost), so the pool never waits on one
/// long job at the end; ties by path, coding and dictionary, so the order
/// never depends on the machine.
fn sort_jobs(jobs: &mut [Job], files: &[Scanned], dicts: &[Dict]) {
    jobs.sort_by(|a, b| {
        let cost = |j: &Job| job_cost(j, files, dicts, false);
        cost(b)
            .cmp(&cost(a))
            .then_with(|| files[a.file].found.rel.cmp(&files[b.file].found.rel))
            .then(a.token().cmp(b.token()))
            .then_with(|| a.dict().cmp(&b.dict()))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(coding: &str, size: u64) -> Variant {
        Variant {
            blake3: coding.into(),
            coding: coding.into(),
            etag: etag(coding),
            path: format!("app.js.{coding}"),
            size,
        }
    }

    fn delta(coding: &str, dict: &str, size: u64) -> Delta {
        Delta {
            blake3: "d".into(),
            coding: coding.into(),
            dictionary: dict.into(),
            dictionary_path: "old.js".into(),
            etag: etag("d"),
            path: format!("app.js.{dict}.{coding}"),
            size,
        }
    }

    /// A 300 MB incompressible script took 26 minutes of q11 CPU for no
    /// variant. The scan's probe marks random bytes (what no encoder shrinks),
    /// never text, and the scan stays the same otherwise.
    #[test]
    fn the_scan_marks_a_large_source_no_encoder_shrinks_as_incompressible() {
        let dir = tempfile::tempdir().unwrap();
        let filter = Filter::new(&[], &[], 1024).unwrap();
        let mut x: u64 = 0x1234_5678_9abc_def1;
        let random: Vec<u8> = (0..PROBE_MIN as usize + 1000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let text = "export const a = () => 1;\n".repeat(PROBE_MIN as usize / 20);
        for (name, bytes, want) in [
            ("noise.js", random.clone(), true),
            ("app.js", text.into_bytes(), false),
            ("small.js", random[..PROBE_MIN as usize - 1].to_vec(), false),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let found = Found {
                rel: name.into(),
                path,
            };
            let s = scan(found, &filter, &AtomicU64::new(0)).unwrap();
            assert_eq!(s.incompressible, want, "{name}");
            assert_eq!(s.size, bytes.len() as u64);
            assert_eq!(s.blake3, blake3::hash(&bytes).to_hex().to_string());
        }
    }

    #[test]
    fn an_asset_lists_variants_smallest_first_and_deltas_only_if_smaller_than_the_best() {
        let f = Scanned {
            found: Found {
                rel: "app.js".into(),
                path: "app.js".into(),
            },
            size: 1000,
            blake3: "ab".repeat(32),
            sha256: String::new(),
            sha256_raw: [0; 32],
            meta: CopyMeta {
                permissions: std::fs::metadata(".").unwrap().permissions(),
                modified: SystemTime::UNIX_EPOCH,
            },
            content: None,
            incompressible: false,
        };
        let o = Outcome {
            variants: vec![
                variant("gzip", 400),
                variant("zstd", 300),
                variant("br", 300),
            ],
            deltas: vec![
                delta("dcz", ":b:", 50),
                delta("dcb", ":a:", 40),
                delta("dcb", ":b:", 300),
            ],
            ..Outcome::default()
        };
        let (a, remove) = asset_entry(&f, o, Some("match=\"/app-*.js\"".into()), false);
        let codings: Vec<&str> = a.encodings.iter().map(|v| v.coding.as_str()).collect();
        // Equal sizes: br before zstd.
        assert_eq!(codings, ["br", "zstd", "gzip"]);
        let deltas: Vec<(&str, &str)> = a
            .deltas
            .iter()
            .map(|d| (d.dictionary.as_str(), d.coding.as_str()))
            .collect();
        assert_eq!(deltas, [(":a:", "dcb"), (":b:", "dcz")]);
        // As large as br: not kept, recorded, and its file to be removed.
        assert_eq!(remove, ["app.js.:b:.dcb"]);
        assert_eq!(a.skipped_deltas.len(), 1);
        assert_eq!(a.skipped_deltas[0].reason, SkipReason::NotSmaller);
        assert_eq!(a.use_as_dictionary.as_deref(), Some("match=\"/app-*.js\""));
        // With no variant, the file itself is the bar.
        let o = Outcome {
            deltas: vec![delta("dcz", ":a:", 999), delta("dcb", ":a:", 1000)],
            ..Outcome::default()
        };
        let (a, remove) = asset_entry(&f, o, None, false);
        assert_eq!(a.deltas.len(), 1);
        assert_eq!(remove, ["app.js.:a:.dcb"]);
    }
}
