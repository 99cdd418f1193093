//! What a run works with besides the tree, opened before anything is
//! touched (the settings checked against the disk first, `run/settings.rs`):
//! the encoder settings, the earlier releases and the store, the cache and
//! the thread pool ([`Env`]); what every stage reports into ([`Log`]); and
//! the one way a stage removes a file of ours ([`remove_ours`]). The stages
//! take them; none of them is named here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::fsutil::remove_if_exists;
use crate::report::RunCounts;
use crate::run::filter::Filter;
use crate::run::settings::{check_not_project_root, check_outputs, check_root, settings_of};
use crate::run::state::cache::Cache;
use crate::run::state::releases::Releases;

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
    /// The release store in the cache folder, if one is used, and the site
    /// this run reads and records releases of in it
    /// ([`crate::run::state::store::site_of`]).
    pub(crate) store: Option<(crate::run::state::store::Store, String)>,
    /// The jobs' workers asked for (started: no more than the jobs).
    pub(crate) threads: usize,
    pub(crate) cache: Option<Cache>,
    /// The shared pool, of [`crate::config::pool_threads`].
    pub(crate) pool: rayon::ThreadPool,
}

impl<'a> Env<'a> {
    /// Checks `cfg` and opens what the run needs; warnings of the earlier
    /// releases go to `warnings`.
    pub(crate) fn open(cfg: &'a Config, warnings: &mut Vec<String>) -> Result<Env<'a>> {
        let root = cfg.root.as_path();
        check_root(cfg)?;
        check_not_project_root(cfg)?;
        cfg.validate()?;
        check_outputs(cfg)?;
        let filter = Filter::new(&cfg.include, &cfg.exclude, cfg.min_size)?;
        let given = [cfg.dictionary_from.as_slice(), &cfg.live_releases].concat();
        let mut releases = Releases::open(&given, root, warnings)?;
        // No folder given: the releases the store kept of this site, if a
        // cache is used (beside the live site's: it is what most visitors
        // hold, and the store the releases before it).
        let store = cfg.cache_dir.as_deref().and_then(|d| {
            let site = crate::run::state::store::site_of(root, d, &cfg.base);
            crate::run::state::store::Store::open(d, warnings).map(|s| (s, site))
        });
        if let (Some((store, site)), true) = (&store, cfg.dictionary_from.is_empty()) {
            let mut stored = store.releases(site, root, warnings);
            // Oldest first: `--delta-releases` keeps the newest.
            let n = cfg.delta_releases.unwrap_or(stored.len());
            stored.drain(..stored.len().saturating_sub(n));
            releases.add_stored(store, &stored);
        }
        let settings = settings_of(cfg)?;
        let threads = cfg.worker_threads_with(releases.largest());
        let cache = cfg
            .cache_dir
            .as_deref()
            .map(|d| Cache::open(d, cfg.cache_max_size))
            .transpose()?;
        let pool_threads = crate::config::pool_threads(threads);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(pool_threads)
            .build()
            .map_err(|e| Error::Config(format!("cannot start {pool_threads} threads: {e}")))?;
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

impl Env<'_> {
    /// The `Use-As-Dictionary` value this release gives the asset at `rel`
    /// of `size` bytes ([`crate::run::dictionaries::shared::Marks`]): an asset outside the
    /// groups is marked by its own name only with marking on and its deltas
    /// taken by the filter. The manifest and the published list both ask.
    pub(crate) fn mark(
        &self,
        marks: &crate::run::dictionaries::shared::Marks,
        rel: &str,
        size: u64,
    ) -> Option<String> {
        let own = self.cfg.use_as_dictionary && self.filter.takes_deltas(rel, size);
        if crate::model::dictionary::is_page(rel) {
            return (own && self.pages() && crate::model::dictionary::is_page_candidate(rel, size))
                .then(|| crate::model::dictionary::page_use_as_dictionary(rel, &self.cfg.base));
        }
        marks.mark(rel, size, own, &self.cfg.base)
    }

    /// Whether the pages are marked as their own next versions' dictionaries
    /// and get deltas against their earlier versions.
    pub(crate) fn pages(&self) -> bool {
        self.cfg.use_as_dictionary && self.cfg.page_dictionary
    }
}

/// What the run has said so far: its counts and warnings, and the per-file
/// errors, which never stop it.
pub(crate) struct Log {
    pub(crate) counts: RunCounts,
    pub(crate) errors: Vec<Error>,
}

impl Log {
    pub(crate) fn new(cfg: &Config, warnings: Vec<String>) -> Log {
        Log {
            counts: RunCounts {
                dry_run: cfg.dry_run,
                warnings,
                max_files: cfg.max_files,
                ..RunCounts::default()
            },
            errors: Vec::new(),
        }
    }

    /// Records the removal of a file of ours, `rel` in DIR: counted, or,
    /// failed, an error of the run.
    pub(crate) fn removed(&mut self, rel: &str, outcome: Result<()>) {
        match outcome {
            Ok(()) => self.counts.removed.push(rel.to_string()),
            Err(e) => self.errors.push(e),
        }
    }
}

/// Removes a file of ours at `path` (`rel` in DIR), unless dry run, and
/// records it in `log`.
pub(crate) fn remove_ours(cfg: &Config, path: &Path, rel: &str, log: &mut Log) {
    let outcome = if cfg.dry_run {
        Ok(())
    } else {
        remove_if_exists(path).map(|_| ())
    };
    log.removed(rel, outcome);
}
