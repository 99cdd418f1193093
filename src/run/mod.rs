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
//! The scan keeps small sources in memory (up to [`HELD_FILE_MAX`](scan::HELD_FILE_MAX) each and
//! [`HELD_TOTAL_MAX`](scan::HELD_TOTAL_MAX) in all), so their codec jobs share one read and one hash.
//! Larger sources are re-read by each job and checked against the scan's hash,
//! and from [`MAP_MIN`](crate::config::limits::MAP_MIN) on they are mapped instead: every job of a huge file
//! then shares the page cache's one copy, and a brotli part job touches only
//! its part and the window before it. Either way a source that changes mid-run
//! is caught (size and mtime after each write) instead of getting a stale
//! variant.
//!
//! The stages, one file each: `walk`, `scan`, `plan` (pure, table-tested),
//! `execute` (the worker pool), `commit`; beside them what earlier runs left
//! (`prior`, `journal`), the encoder cache (`cache`), the earlier releases
//! (`releases`), the file filter (`filter`) and `--shard` (`shard`).

pub(crate) mod bound;
pub(crate) mod commit;
pub(crate) mod dictionaries;
pub(crate) mod env;
pub(crate) mod execute;
pub mod filter;
pub(crate) mod jobs;
pub(crate) mod plan;
pub(crate) mod scan;
pub(crate) mod scan_dictionaries;
pub(crate) mod scanned;
pub(crate) mod settings;
pub mod shard;
pub(crate) mod state;
pub(crate) mod tree;
pub(crate) mod walk;
pub(crate) mod worker;

use std::collections::HashSet;
use std::time::Instant;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::fsutil::lock;
use crate::model::coding::DeltaCoding;
use crate::model::manifest::Manifest;
use crate::model::shard::{group_of_path, partial_path};
use crate::model::skip::Passed;
use crate::report::Report;
use crate::run::commit::{
    commit_entries, fold_outcomes, unlisted_deltas_left, write_outputs, Part,
};
use crate::run::env::{remove_ours, Env, Log};
use crate::run::execute::{execute_stage, sort_jobs};
use crate::run::jobs::{Job, JobKind, ShardPart};
use crate::run::plan::{plan, Inputs, Plan};
use crate::run::scan::{on_disk_map, plan_sources, scan_stage};
use crate::run::scanned::ScanOut;
use crate::run::scanned::{Dict, Scanned};
use crate::run::settings::probe_folders;
use crate::run::shard::take_shard;
use crate::run::state::journal::Journal;
use crate::run::state::prior::{previous_manifest, written_by};
use crate::run::tree::Tree;
use crate::run::walk::LOCK_NAME;

pub use self::env::{NoProgress, Progress};

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
    if tree.files.is_empty() && !cfg.allow_empty {
        // A build that did not run: no manifest that says "nothing" over it.
        return Err(Error::Config(format!(
            "{}: no file to compress (an empty folder: did the build run?); pass --allow-empty if an empty DIR is expected",
            root.display()
        )));
    }
    let found = (tree.files, tree.variants, tree.deltas);
    let mut scanned = scan_stage(&env, found, &mut ours, &mut log);
    if let Some(max) = cfg.max_files {
        let b = bound::bound(
            max,
            &scanned.files,
            &mut scanned.chosen,
            &env.filter,
            (cfg.codecs.len(), cfg.delta_codings.len()),
            |r| {
                env.releases
                    .age(r, cfg.dictionary_from.len() + cfg.live_releases.len())
            },
        );
        log.counts.dropped_deltas = b.dropped;
    }
    let journaled: HashSet<&str> = scanned.journaled.iter().map(String::as_str).collect();
    let (sources, dicts) = plan_sources(
        &scanned.files,
        std::mem::take(&mut scanned.chosen),
        &env.filter,
        env.cache.as_ref(),
        &env.settings,
    );

    // Plan, then remove what is stale before any job runs.
    let existing = on_disk_map(&scanned.on_disk);
    let planned = plan_stage(
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
            earlier: !env.releases.is_empty(),
        },
        &sources,
        (&scanned.files, &dicts),
        &mut log,
    );
    drop(sources);

    log.counts.prepare_ms = started.elapsed().as_millis() as u64;
    let (manifest, timings) = execute_and_commit(
        &env, &scanned, &dicts, planned, &journaled, progress, &mut log,
    )?;
    Ok(report(&env, manifest, tree.passed, timings, started, log))
}

/// How many of `jobs` are `dcz` deltas made at the bounded level
/// ([`crate::encode::delta::dcz_bounded`]).
fn dcz_bounded(jobs: &[Job], files: &[Scanned], dicts: &[Dict]) -> u64 {
    jobs.iter()
        .filter(|j| {
            matches!(j.kind, JobKind::Delta { coding: DeltaCoding::Dcz, dict }
                if crate::encode::delta::dcz_bounded(dicts[dict].old.size as usize, files[j.file].size as usize))
        })
        .count() as u64
}

/// The jobs run, then their outcomes committed: the manifest (or a shard's
/// partial) written, the journals done with, the release recorded.
fn execute_and_commit(
    env: &Env,
    scanned: &ScanOut,
    dicts: &[Dict],
    mut planned: Planned,
    journaled: &HashSet<&str>,
    progress: &dyn Progress,
    log: &mut Log,
) -> Result<(Manifest, Vec<crate::report::JobTiming>)> {
    let (cfg, root, files) = (env.cfg, env.root, &scanned.files);
    let journal = (!cfg.dry_run && !planned.jobs.is_empty())
        .then(|| Journal::open(root, cfg.shard))
        .transpose()?;
    let (results, file_progress) = execute_stage(
        env,
        files,
        &planned.jobs,
        dicts,
        journal.as_ref(),
        progress,
        log,
    );
    let timings = fold_outcomes(
        &planned.jobs,
        results,
        files,
        &mut planned.outcomes,
        &file_progress,
        log,
    );
    log.counts.dcz_bounded = dcz_bounded(&planned.jobs, files, dicts);
    let whole = planned.sharded.is_none();
    let part = if whole { Part::Whole } else { Part::Shard };
    let manifest = commit_entries(env, scanned, planned.outcomes, part, journaled, log);
    if whole && !cfg.dry_run {
        unlisted_deltas_left(
            &manifest,
            &scanned.on_disk,
            root,
            &log.errors,
            &mut log.counts,
        );
    }
    if cfg.use_as_dictionary {
        log.counts.first_visit = Some(first_visit(
            cfg,
            &manifest,
            &scanned.groups,
            scanned.idle_budget.as_ref(),
        ));
    }
    write_outputs(
        env,
        &manifest,
        planned.sharded,
        journal,
        &scanned.journals_read,
        log,
    );
    // A shard too: each scanned and marked the whole tree, so each records
    // the whole release (in its own cache, as docs/caching.md's recipe
    // has it), and its next run finds it whatever it owns then.
    record_release(env, files, &manifest, log);
    // Last, with the store recorded: the folder's bound counts it too. A dry
    // run removes nothing, there either.
    if let Some(c) = env.cache.as_ref().filter(|_| !cfg.dry_run) {
        let store = env.store.as_ref().map_or(0, |(s, _)| s.bytes());
        if let Err(e) = c.evict(store) {
            log.counts.warnings.push(format!("cache eviction: {e}"));
        }
    }
    Ok((manifest, timings))
}

/// What the release's dictionaries cost a first-time visitor: the ones its
/// pages link, at their smallest variant's size, or the code dictionary as
/// its delta against the chunk marked in its folder (which the visit loaded
/// before it went idle).
fn first_visit(
    cfg: &Config,
    manifest: &Manifest,
    groups: &[crate::run::dictionaries::shared::Group],
    idle: Option<&crate::run::scanned::IdleAllowance>,
) -> crate::report::FirstVisit {
    use crate::model::dictionary::folder_of;
    let linked = crate::run::dictionaries::first_visit::linked(manifest);
    // The chunk marked in a dictionary's folder, which the visit loaded
    // before it went idle.
    let held = |k: &String| -> Vec<&str> {
        groups
            .iter()
            .filter(|g| g.first_visit && folder_of(&g.marked) == folder_of(k))
            .map(|g| g.marked.as_str())
            .collect()
    };
    let cost =
        |k: &String| crate::run::dictionaries::first_visit::dictionary_cost(manifest, k, &held(k));
    let linked_bytes = linked.iter().filter_map(cost).sum();
    crate::report::FirstVisit {
        shared_dictionary: cfg.shared_dictionary.as_str(),
        linked,
        linked_bytes,
        groups: groups.len(),
        grouped: groups.iter().map(|g| g.members.len()).sum(),
        idle_budget: idle.map(|i| i.bytes),
        landing_page: idle.map(|i| i.page.clone()),
    }
}

/// After a run with no error, this release's dictionaries (what its
/// manifest marks: what a browser holds) go to the release store, under its
/// site, for the next runs' deltas. A shard's manifest marks every asset of
/// the tree, as the whole run's does (the marks follow from the tree, not
/// from the jobs), so a shard records the whole release too. Not for a dry
/// run, or a run with errors (a file it could not read would be missing from
/// the release).
fn record_release(env: &Env, files: &[Scanned], manifest: &Manifest, log: &mut Log) {
    let Some((store, site)) = &env.store else {
        return;
    };
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
    store.record(site, &assets, &mut log.counts.warnings);
}

/// The walk stage: DIR's files as a run takes them; a killed run's
/// temporary files removed; names no URL can hold said.
fn walk_stage(cfg: &Config, log: &mut Log) -> Tree {
    let mut tree = crate::run::walk::walk_assets(cfg);
    log.errors.append(&mut tree.errors);
    for (rel, why) in &tree.passed {
        if *why == Passed::NameNotServable {
            log.counts.warnings.push(format!(
                "{rel}: no URL path can name a file with a backslash in its name; not compressed, not in the manifest (rename it)"
            ));
        }
    }
    for t in &tree.temps {
        // Left by a run that was killed: never a valid file, never served as a variant.
        remove_ours(cfg, &t.path, &t.rel, log);
    }
    log.counts.removed.clear(); // temporary files are not worth listing
    tree
}

/// Links passed over by the walk: where a variant would go, they are not ours.
fn symlinks(passed: &[(String, Passed)]) -> HashSet<&str> {
    passed
        .iter()
        .filter(|(_, why)| *why == Passed::Symlink)
        .map(|(rel, _)| rel.as_str())
        .collect()
}

/// What the plan stage leaves for the jobs.
pub(crate) struct Planned {
    pub(crate) jobs: Vec<crate::run::jobs::Job>,
    pub(crate) outcomes: Vec<crate::run::jobs::Outcome>,
    /// A shard's part, if the run is one.
    pub(crate) sharded: Option<ShardPart>,
}

/// The plan stage: [`plan`], this shard's part of it, refusals as errors,
/// and the stale variants and deltas removed, before any job, so a run killed
/// from here on leaves no stale variant (the ones redone are written again
/// by their jobs). Jobs come out longest first.
fn plan_stage(
    env: &Env,
    inputs: &Inputs,
    sources: &[crate::run::scanned::Source],
    (files, dicts): (&[Scanned], &[Dict]),
    log: &mut Log,
) -> Planned {
    let Plan {
        mut jobs,
        units,
        files: outcomes,
        mut refused,
        mut stale,
        stale_deltas_kept_source: lost,
        reused,
    } = plan(inputs, sources);
    log.counts.reused += reused;
    let sharded = env.cfg.shard.map(|s| {
        let (shard, digest, owned, owner) = take_shard(s, &units, &mut jobs, files, dicts);
        // Another shard's files are that shard's to keep, check or remove.
        let mine = |path: &str| group_of_path(path).and_then(|g| owner.get(&g)) == Some(&s.index);
        stale.retain(|p| mine(p));
        refused.retain(|(p, _)| mine(p));
        ShardPart {
            shard,
            units_digest: digest,
            owned,
        }
    });
    for (rel, detail) in refused {
        log.errors.push(Error::Foreign {
            path: env.root.join(rel),
            detail: detail.into(),
        });
    }
    let lost: Vec<&String> = lost.iter().filter(|p| stale.contains(p)).collect();
    if !lost.is_empty() {
        // Visitors holding their dictionaries lose them: not in silence.
        let n = lost.len();
        let shown: Vec<&str> = lost.iter().take(5).map(|p| p.as_str()).collect();
        log.counts.warnings.push(format!(
            "{n} delta(s) of unchanged assets removed: their dictionaries are not among this run's earlier releases (--dictionary-from, or the release store's last releases of this site), so a visitor holding one gets the whole asset again: {}{}",
            shown.join(", "),
            if n > 5 { ", ..." } else { "" }
        ));
    }
    for rel in &stale {
        remove_ours(env.cfg, &env.root.join(rel), rel, log);
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
    passed: Vec<(String, Passed)>,
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
            Some(s) => partial_path(&env.manifest_path, s),
            None => env.manifest_path.clone(),
        },
        env.threads,
        log.counts,
    )
}
