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
pub(crate) mod documents;
pub(crate) mod execute;
pub mod filter;
pub(crate) mod journal;
pub(crate) mod plan;
pub(crate) mod prior;
pub(crate) mod releases;
pub(crate) mod scan;
pub mod shard;
pub(crate) mod shared;
pub(crate) mod store;
pub(crate) mod walk;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::config::Config;
use crate::encode::delta::{DeltaEncoder, DeltaLevels};
use crate::encode::new_encoder;
use crate::error::{Error, Result};
use crate::fsutil::{lock, probe_writable, remove_if_exists};
use crate::model::manifest::Manifest;
use crate::report::{Report, RunCounts};
use crate::run::cache::Cache;
use crate::run::commit::{commit_entries, fold_outcomes, unlisted_deltas_left, write_outputs};
use crate::run::execute::{execute_stage, sort_jobs};
use crate::run::filter::Filter;
use crate::run::journal::Journal;
use crate::run::plan::{plan, Inputs, Plan};
use crate::run::prior::{previous_manifest, written_by};
use crate::run::releases::Releases;
use crate::run::scan::{on_disk_map, plan_sources, scan_stage, Dict, Scanned};
use crate::run::shard::take_shard;
use crate::run::walk::{walk, LOCK_NAME};

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
/// (`dcb` and `dcz` always: [`crate::model::manifest::Manifest::prune_delta_settings`] drops them from a
/// manifest with no delta of theirs).
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
    // Always: a shared dictionary's members get deltas against it even in a
    // first release. The manifest keeps only those of codings it has deltas of.
    let enc = delta_encoder(cfg);
    for &c in &cfg.delta_codings {
        settings.insert(c.token().to_string(), enc.settings(c));
    }
    Ok(settings)
}

/// The delta encoders run at the levels of their codecs, except that `dcb`
/// stops at quality 10. Measured with `bash bench/deltas.sh` (9 files of 6
/// npm release pairs): at q11 the run with `--dictionary-from` took 1.74x the
/// CPU of the run without, almost all of it echarts' 3.4 MB minor release
/// (4.4 s at q11, 1.6 s at q10 for a 3.9% larger delta); on patch releases
/// q10 and q11 gave the same few hundred bytes in the same time.
pub(crate) fn delta_encoder(cfg: &Config) -> DeltaEncoder {
    DeltaEncoder::new(DeltaLevels {
        brotli_quality: cfg.levels.brotli_quality.min(10),
        zstd_level: cfg.levels.zstd_level,
    })
}

/// What a run works with besides the tree: its settings, the earlier
/// releases, the cache and the thread pool, set up (and refused with a
/// configuration error) before anything is touched.
pub(crate) struct Env<'a> {
    pub(crate) cfg: &'a Config,
    pub(crate) root: &'a Path,
    pub(crate) filter: Filter,
    pub(crate) manifest_path: PathBuf,
    pub(crate) settings: BTreeMap<String, String>,
    pub(crate) releases: Releases,
    /// The release store in the cache folder, if one is used.
    pub(crate) store: Option<crate::run::store::Store>,
    pub(crate) threads: usize,
    pub(crate) cache: Option<Cache>,
    pub(crate) pool: rayon::ThreadPool,
}

impl<'a> Env<'a> {
    /// Checks `cfg` and opens what the run needs; warnings of the earlier
    /// releases go to `warnings`.
    fn open(cfg: &'a Config, warnings: &mut Vec<String>) -> Result<Env<'a>> {
        let root = cfg.root.as_path();
        cfg.check_root()?;
        cfg.validate()?;
        cfg.check_outputs()?;
        let filter = Filter::new(&cfg.include, &cfg.exclude, cfg.min_size)?;
        let mut releases = Releases::open(&cfg.dictionary_from, root, warnings)?;
        // No folder given: the releases the store kept, if a cache is used.
        let store = cfg
            .cache_dir
            .as_deref()
            .and_then(|d| crate::run::store::Store::open(d, warnings));
        if let (Some(store), true) = (&store, cfg.dictionary_from.is_empty()) {
            releases.add_stored(store, &store.releases(warnings));
        }
        let settings = settings_of(cfg)?;
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
        Ok(Env {
            cfg,
            root,
            filter,
            manifest_path: cfg.manifest_path(),
            settings,
            releases,
            store,
            threads,
            cache,
            pool,
        })
    }
}

/// What the run has said so far: its counts and warnings, and the per-file
/// errors, which never stop it.
pub(crate) struct Log {
    pub(crate) counts: RunCounts,
    pub(crate) errors: Vec<Error>,
}

impl Log {
    fn new(cfg: &Config, warnings: Vec<String>) -> Log {
        Log {
            counts: RunCounts {
                dry_run: cfg.dry_run,
                warnings,
                ..RunCounts::default()
            },
            errors: Vec::new(),
        }
    }

    /// Removes a file of ours at `path` (`rel` in DIR), unless dry run, and
    /// counts it; a failure is an error of the run.
    pub(crate) fn remove(&mut self, path: &Path, rel: &str) {
        if !self.counts.dry_run {
            if let Err(e) = remove_if_exists(path) {
                self.errors.push(e);
                return;
            }
        }
        self.counts.removed.push(rel.to_string());
    }
}

/// Runs precompress over `cfg.root`. Per-file failures are in the report's
/// `errors`; `Err` is returned only when the run cannot happen at all.
///
/// The stages in order, each in a function of its own, so the order of the
/// side effects reads top to bottom: lock, probe, temporary files out, stale
/// variants out before any job, jobs, manifest written last.
pub fn run(cfg: &Config, progress: &dyn Progress) -> Result<Report> {
    let started = Instant::now();
    let mut release_warnings = Vec::new();
    let env = Env::open(cfg, &mut release_warnings)?;
    let root = env.root;
    let _lock = lock(root, LOCK_NAME, || progress.waiting_for_lock(root))?;
    if !cfg.dry_run {
        // Found out now, not after compressing everything for nothing.
        probe_folders(root, &env.manifest_path, env.cache.as_ref())?;
    }
    let mut log = Log::new(cfg, release_warnings);
    // What earlier runs left.
    let prev = previous_manifest(&env.manifest_path, &mut log.counts.warnings);
    let mut ours = written_by(prev.as_ref());

    // Walk, then scan: every file hashed, the journals of interrupted runs
    // read, the variants of deleted sources out, the dictionaries chosen.
    let tree = walk_stage(cfg, &mut log);
    let found = (tree.files, tree.variants, tree.deltas);
    let scanned = scan_stage(&env, found, &mut ours, &mut log);
    let journaled: HashSet<&str> = scanned.journaled.iter().map(String::as_str).collect();
    let (sources, dicts) = plan_sources(
        &scanned.files,
        scanned.chosen,
        &env.filter,
        env.cache.as_ref(),
        &env.settings,
    );

    // Plan, then remove what is stale before any job runs.
    let existing = on_disk_map(&scanned.on_disk);
    let mut planned = plan_stage(
        &env,
        &Inputs {
            prev: prev.as_ref(),
            settings: &env.settings,
            ours: &ours,
            on_disk: &existing,
            symlinks: &symlinks(&tree.passed),
            journaled: &journaled,
            codecs: &cfg.codecs,
            delta_codings: &cfg.delta_codings,
            force: cfg.force,
        },
        &sources,
        (&scanned.files, &dicts),
        &mut log,
    );
    drop(sources);

    // Execute, then commit.
    let files = &scanned.files;
    let journal = (!cfg.dry_run && !planned.jobs.is_empty())
        .then(|| Journal::open(root, cfg.shard))
        .transpose()?;
    log.counts.prepare_ms = started.elapsed().as_millis() as u64;
    let (results, file_progress) = execute_stage(
        &env,
        files,
        &planned.jobs,
        &dicts,
        journal.as_ref(),
        progress,
        &mut log,
    );
    let outcomes = &mut planned.outcomes;
    let timings = fold_outcomes(
        &planned.jobs,
        results,
        files,
        outcomes,
        &file_progress,
        &mut log,
    );
    let raw = planned.sharded.is_some();
    let manifest = commit_entries(
        &env,
        files,
        planned.outcomes,
        raw,
        &journaled,
        (&scanned.shared, &scanned.groups),
        &mut log,
    );
    if planned.sharded.is_none() && !cfg.dry_run {
        unlisted_deltas_left(
            &manifest,
            &scanned.on_disk,
            root,
            &log.errors,
            &mut log.counts,
        );
    }
    if cfg.use_as_dictionary {
        log.counts.first_visit = Some(first_visit(cfg, &manifest, &scanned.groups));
    }
    let whole = planned.sharded.is_none();
    write_outputs(
        &env,
        &manifest,
        planned.sharded,
        journal,
        &scanned.journals_read,
        &mut log,
    );
    if whole {
        record_release(&env, files, &manifest, &mut log);
    }
    Ok(report(&env, manifest, tree.passed, timings, started, log))
}

/// What the release's dictionaries cost a first-time visitor: the ones its
/// pages link, at their smallest variant's size, or the code dictionary as
/// its delta against the chunk marked in its folder (which the visit loaded
/// before it went idle).
fn first_visit(
    cfg: &Config,
    manifest: &Manifest,
    groups: &[crate::run::shared::Group],
) -> crate::report::FirstVisit {
    use crate::model::dictionary::folder_of;
    let linked: Vec<String> = [&manifest.shared_dictionary, &manifest.documents_dictionary]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let cost = |k: &String| -> Option<u64> {
        let a = manifest.files.get(k)?;
        let whole = a.encodings.iter().map(|v| v.size).min().unwrap_or(a.size);
        let marked = groups
            .iter()
            .filter(|g| folder_of(&g.marked) == folder_of(k))
            .filter_map(|g| manifest.files.get(&g.marked))
            .map(|m| format!(":{}:", m.sha256))
            .collect::<Vec<_>>();
        let delta = a
            .deltas
            .iter()
            .filter(|d| marked.contains(&d.dictionary))
            .map(|d| d.size)
            .min();
        Some(delta.map_or(whole, |d| d.min(whole)))
    };
    let linked_bytes = linked.iter().filter_map(cost).sum();
    crate::report::FirstVisit {
        shared_dictionary: cfg.shared_dictionary.as_str(),
        linked,
        linked_bytes,
        groups: groups.len(),
        grouped: groups.iter().map(|g| g.members.len()).sum(),
    }
}

/// After a whole run with no error, this release's dictionaries (what its
/// manifest marks: what a browser holds) go to the release store, for the
/// next runs' deltas. Not for a dry run, a shard (each has only its part),
/// or a run with errors (a file it could not read would be missing from the
/// release).
fn record_release(env: &Env, files: &[Scanned], manifest: &Manifest, log: &mut Log) {
    let Some(store) = &env.store else { return };
    if env.cfg.dry_run || !log.errors.is_empty() {
        return;
    }
    let assets: Vec<_> = files
        .iter()
        .filter(|f| {
            manifest
                .files
                .get(&f.found.rel)
                .is_some_and(|a| a.use_as_dictionary.is_some())
        })
        .map(|f| (f.found.rel.clone(), f.found.path.clone(), f.sha256_raw))
        .collect();
    store.record(&assets, &mut log.counts.warnings);
}

/// The walk stage: DIR's files as a run takes them; a killed run's
/// temporary files removed; names no URL can hold said.
fn walk_stage(cfg: &Config, log: &mut Log) -> walk::Tree {
    let mut tree = walk_assets(cfg);
    log.errors.append(&mut tree.errors);
    for (rel, why) in &tree.passed {
        if *why == walk::Passed::NameNotServable {
            log.counts.warnings.push(format!(
                "{rel}: no URL path can name a file with a backslash in its name; not compressed, not in the manifest (rename it)"
            ));
        }
    }
    for t in &tree.temps {
        // Left by a run that was killed: never a valid file, never served as a variant.
        log.remove(&t.path, &t.rel);
    }
    log.counts.removed.clear(); // temporary files are not worth listing
    tree
}

/// Links passed over by the walk: where a variant would go, they are not ours.
fn symlinks(passed: &[(String, walk::Passed)]) -> HashSet<&str> {
    passed
        .iter()
        .filter(|(_, why)| *why == walk::Passed::Symlink)
        .map(|(rel, _)| rel.as_str())
        .collect()
}

/// What the plan stage leaves for the jobs.
pub(crate) struct Planned {
    pub(crate) jobs: Vec<crate::run::plan::Job>,
    pub(crate) outcomes: Vec<crate::run::plan::Outcome>,
    /// A shard's: the shard, the digest of all units, the units it owns.
    pub(crate) sharded: Option<(shard::Shard, String, Vec<String>)>,
}

/// The plan stage: [`plan`], this shard's part of it, refusals as errors,
/// and the stale variants and deltas removed, before any job, so a run killed
/// from here on leaves no stale variant (the ones redone are written again
/// by their jobs). Jobs come out longest first.
fn plan_stage(
    env: &Env,
    inputs: &Inputs,
    sources: &[crate::run::plan::Source],
    (files, dicts): (&[Scanned], &[Dict]),
    log: &mut Log,
) -> Planned {
    let Plan {
        mut jobs,
        units,
        files: outcomes,
        mut refused,
        mut stale,
        reused,
    } = plan(inputs, sources);
    log.counts.reused += reused;
    let sharded = env.cfg.shard.map(|s| {
        let (shard, digest, owned, owner) = take_shard(s, &units, &mut jobs, files, dicts);
        // Another shard's files are that shard's to keep, check or remove.
        let mine =
            |path: &str| shard::group_of_path(path).and_then(|g| owner.get(&g)) == Some(&s.index);
        stale.retain(|p| mine(p));
        refused.retain(|(p, _)| mine(p));
        (shard, digest, owned)
    });
    for (rel, detail) in refused {
        log.errors.push(Error::Foreign {
            path: env.root.join(rel),
            detail: detail.into(),
        });
    }
    for rel in &stale {
        log.remove(&env.root.join(rel), rel);
    }
    sort_jobs(&mut jobs, files, dicts);
    Planned {
        jobs,
        outcomes,
        sharded,
    }
}

/// The report of the run, its lists sorted.
fn report(
    env: &Env,
    manifest: Manifest,
    passed: Vec<(String, walk::Passed)>,
    timings: Vec<crate::report::JobTiming>,
    started: Instant,
    mut log: Log,
) -> Report {
    log.errors.sort_by(|a, b| a.path().cmp(&b.path()));
    let counts = &mut log.counts;
    // One unreadable earlier file is reported once, not once per asset.
    counts.warnings.sort();
    counts.warnings.dedup();
    counts.removed.sort();
    counts.foreign.sort();
    Report::new(
        manifest,
        &env.cfg.codecs,
        passed,
        log.errors,
        timings,
        started.elapsed(),
        // What this run wrote: a shard's partial, not the manifest.
        match env.cfg.shard {
            Some(s) => shard::partial_path(&env.manifest_path, s),
            None => env.manifest_path.clone(),
        },
        env.threads,
        log.counts,
    )
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
