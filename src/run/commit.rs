//! The commit stage: each job's outcome folded into its source's, each
//! source's into its manifest entry (settled: variants smallest first, deltas
//! only when smaller than the best variant), and what the run leaves unlisted
//! said.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use crate::error::Error;
use crate::fsutil::remove_if_exists;
use crate::model::content::content_type;
use crate::model::manifest::{etag, Asset, Caching, Manifest};
use crate::model::names::delta_source;
use crate::model::shard;
use crate::report::{JobTiming, RunCounts};
use crate::run::jobs::{FileProgress, Job, JobOutcome, Outcome, ShardPart, Timing};
use crate::run::scanned::{ScanOut, Scanned};
use crate::run::state::journal::Journal;

use crate::run::env::{remove_ours, Env, Log};

/// Warns of the deltas on disk that the manifest will not list and this run
/// left in place (against a dictionary it was not given, and no journal says
/// they are ours): `check` would call them unlisted, and nothing here may
/// remove them.
pub(crate) fn unlisted_deltas_left(
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
pub(crate) fn fold_outcomes(
    jobs: &[Job],
    results: Vec<(JobOutcome, Timing)>,
    files: &[Scanned],
    outcomes: &mut [Outcome],
    progress: &[FileProgress],
    log: &mut Log,
) -> Vec<JobTiming> {
    let Log { counts, errors } = log;
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

/// What a commit writes: the run's manifest, each asset's deltas weighed
/// against its variants now; or a shard's part, whose deltas `merge` weighs
/// against the other shards' variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    Whole,
    Shard,
}

/// A source's manifest entry from what the run left it with, settled
/// ([`Asset::settle`]) in a whole run's manifest, and the deltas not worth
/// keeping (to remove). `mark` is its `Use-As-Dictionary`, if any.
pub(crate) fn asset_entry(
    f: &Scanned,
    o: Outcome,
    mark: Option<String>,
    part: Part,
) -> (Asset, Vec<String>) {
    let mut asset = Asset {
        size: f.size,
        blake3: f.blake3.clone(),
        cache: Caching::of(&f.found.rel, mark.is_some()),
        sha256: f.sha256.clone(),
        content_type: content_type(&f.found.rel),
        deltas: o.deltas,
        etag: etag(&f.blake3),
        encodings: o.variants,
        skipped: o.skipped,
        skipped_deltas: o.skipped_deltas,
        use_as_dictionary: mark,
    };
    let remove = match part {
        Part::Whole => asset.settle(),
        Part::Shard => Vec::new(),
    };
    (asset, remove)
}

/// Why a fingerprinted script or stylesheet that is neither a dictionary nor
/// in a group (`run::dictionaries::shared`) gets no deltas, if it is one such.
fn no_delta_reason(
    rel: &str,
    size: u64,
    filter: &crate::run::filter::Filter,
) -> Option<&'static str> {
    use crate::model::dictionary::{is_fingerprinted, DICTIONARY_MIN_SIZE};
    let ext = crate::model::content::extension(rel)?;
    if !crate::run::dictionaries::shared::SHARED_TYPES.contains(&ext.as_str())
        || !is_fingerprinted(rel)
    {
        return None;
    }
    // What the user excluded, or too small to be worth it, is no news.
    if !filter.takes_deltas(rel, size) || size < DICTIONARY_MIN_SIZE {
        return None;
    }
    Some(if !crate::model::dictionary::pattern_safe(rel) {
        "its path holds characters a URL pattern reads specially"
    } else {
        "no name of its own to pair releases by, and no chunk of its group large enough to mark for it"
    })
}

/// Commit, second half: each source's outcome into its manifest entry, in
/// path order. A source that changed during the run loses what was written
/// from it and is left to the next run; deltas not worth keeping are removed
/// (unless adopted: precompress did not write them).
pub(crate) fn commit_entries(
    env: &Env,
    scanned: &ScanOut,
    outcomes: Vec<Outcome>,
    part: Part,
    journaled: &HashSet<&str>,
    log: &mut Log,
) -> Manifest {
    let (files, shared, groups) = (&scanned.files, &scanned.shared, &scanned.groups);
    let mut manifest = Manifest::new(env.settings.clone());
    manifest.base = (env.cfg.base != crate::model::path::ROOT_BASE).then(|| env.cfg.base.clone());
    let marks = crate::run::dictionaries::shared::Marks::new(shared, groups);
    let mut unreached = Vec::new();
    for (f, o) in files.iter().zip(outcomes) {
        if o.changed {
            // Variants written before the change was seen are of content that is
            // no longer there: remove them, and leave the file to the next run.
            for p in &o.written {
                remove_ours(env.cfg, &env.root.join(p), p, log);
            }
            continue;
        }
        let rel = &f.found.rel;
        let mark = env.mark(&marks, rel, f.size);
        if mark.is_none() && !marks.is_member(rel) && env.cfg.use_as_dictionary {
            if let Some(why) = no_delta_reason(rel, f.size, &env.filter) {
                unreached.push(format!("{rel} ({why})"));
            }
        }
        let (asset, not_worth_keeping) = asset_entry(f, o, mark, part);
        if !env.cfg.dry_run {
            for p in &not_worth_keeping {
                if log.counts.foreign.contains(p) && !journaled.contains(p.as_str()) {
                    log.counts.warnings.push(format!(
                        "{p}: a delta precompress did not write, no smaller than the asset's best variant: not listed; remove it"
                    ));
                    continue;
                }
                if let Err(e) = remove_if_exists(&env.root.join(p)) {
                    log.errors.push(e);
                }
            }
        }
        manifest.files.insert(rel.clone(), asset);
    }
    // Named only if listed (not if it changed during the run).
    let named = |kind| {
        shared
            .iter()
            .find(|s| s.kind == kind)
            .map(|s| s.rel.clone())
            .filter(|r| manifest.files.contains_key(r))
    };
    manifest.shared_dictionary = named(crate::model::dictionary::SharedKind::Code);
    manifest.documents_dictionary = named(crate::model::dictionary::SharedKind::Documents);
    if !unreached.is_empty() && part == Part::Whole {
        let n = unreached.len();
        unreached.truncate(5);
        log.counts.warnings.push(format!(
            "{n} fingerprinted script(s) or stylesheet(s) a returning visitor fetches again get no deltas: {}{}",
            unreached.join(", "),
            if n > 5 { ", ..." } else { "" }
        ));
    }
    // A shard's partial keeps them all: `merge` compares them, then prunes.
    if part == Part::Whole {
        manifest.prune_delta_settings();
    }
    manifest
}

/// Writes what the run commits (unless dry run): the manifest, or a shard's
/// partial manifest for `merge`; then the journals are done with, and the
/// cache is brought within its bound.
pub(crate) fn write_outputs(
    env: &Env,
    manifest: &Manifest,
    sharded: Option<ShardPart>,
    journal: Option<Journal>,
    journals_read: &[PathBuf],
    log: &mut Log,
) {
    if env.cfg.dry_run {
        return;
    }
    let written = match sharded {
        Some(ShardPart {
            shard,
            units_digest,
            owned,
        }) => shard::Partial {
            shard: shard.index,
            of: shard.count,
            jobs: units_digest,
            tree: shard::tree_digest(
                manifest
                    .files
                    .iter()
                    .map(|(r, a)| (r.as_str(), a.blake3.as_str())),
                &env.settings,
            ),
            owned,
            errors: log.errors.len() as u64,
            manifest: manifest.clone(),
            seal: String::new(), // set by write
        }
        .write(&shard::partial_path(&env.manifest_path, shard)),
        None => manifest.write(&env.manifest_path),
    };
    match written {
        Ok(()) => {
            log.counts.manifest_written = true;
            // Everything the journals named is now listed or gone.
            let done = match journal {
                Some(j) => j.finish(journals_read),
                None => journals_read
                    .iter()
                    .try_for_each(|p| remove_if_exists(p).map(|_| ())),
            };
            if let Err(e) = done {
                log.counts.warnings.push(format!("journal: {e}"));
            }
        }
        Err(e) => log.errors.push(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::manifest::{Delta, Variant};
    use crate::model::skip::SkipReason;

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

    #[test]
    fn an_asset_lists_variants_smallest_first_and_deltas_only_if_smaller_than_the_best() {
        let f = Scanned::for_test("app.js", 1000);
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
        let (a, remove) = asset_entry(&f, o, Some("match=\"/app-*.js\"".into()), Part::Whole);
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
        let (a, remove) = asset_entry(&f, o, None, Part::Whole);
        assert_eq!(a.deltas.len(), 1);
        assert_eq!(remove, ["app.js.:a:.dcb"]);
    }
}
