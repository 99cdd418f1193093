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
//!
//! The stages, one file each: `walk`, `scan`, `plan` (pure, table-tested),
//! `execute` (the worker pool), `commit`; beside them what earlier runs left
//! (`prior`, `journal`), the encoder cache (`cache`), the earlier releases
//! (`releases`), the file filter (`filter`) and `--shard` (`shard`).

pub mod cache;
pub(crate) mod commit;
pub(crate) mod execute;
pub mod filter;
pub(crate) mod journal;
pub(crate) mod plan;
pub(crate) mod prior;
pub(crate) mod releases;
pub(crate) mod scan;
pub mod shard;
pub(crate) mod walk;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use crate::config::Config;
use crate::encode::delta::{DeltaEncoder, DeltaLevels};
use crate::encode::new_encoder;
use crate::error::{Error, Result};
use crate::fsutil::{lock, probe_writable, remove_if_exists};
use crate::model::dictionary::use_as_dictionary;
use crate::model::manifest::Manifest;
use crate::report::{Report, RunCounts};
use crate::run::cache::Cache;
use crate::run::filter::Filter;
use crate::run::journal::Journal;
use crate::run::plan::{plan, Inputs, Plan};
use crate::run::releases::Releases;
use crate::run::shard::take_shard;
use crate::run::walk::{walk, LOCK_NAME};

use self::commit::*;
use self::execute::*;
use self::prior::*;
use self::scan::*;

pub use self::execute::MAP_MIN;
pub use self::scan::{HELD_FILE_MAX, HELD_TOTAL_MAX, PROBE_MIN};

/// The config file's name (`configfile::FILE_NAME`, which only the CLI
/// builds): in DIR it is never an asset.
const CONFIG_NAME: &str = "precompress.toml";

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
pub(crate) fn walk_assets(cfg: &Config) -> crate::run::walk::Tree {
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
        if *why == crate::run::walk::Passed::NameNotServable {
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
        .filter(|(_, why)| *why == crate::run::walk::Passed::Symlink)
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
