//! What a run works with besides the tree, opened before anything is
//! touched: the settings checked against the disk (DIR, where the manifest
//! and the cache go, the earlier releases), the encoder settings, the earlier
//! releases and the store, the cache and the thread pool ([`Env`]); and what
//! every stage reports into ([`Log`]). The stages take both; none of them is
//! named here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::encode::delta::{DeltaEncoder, DeltaLevels};
use crate::encode::new_encoder;
use crate::error::{Error, Result};
use crate::fsutil::{probe_writable, remove_if_exists};
use crate::model::shard::partial_of;
use crate::report::RunCounts;
use crate::run::filter::Filter;
use crate::run::state::cache::Cache;
use crate::run::state::releases::Releases;
use crate::run::walk::{walk, LOCK_NAME};

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
pub(crate) fn walk_assets(cfg: &Config) -> crate::run::tree::Tree {
    let manifest_path = cfg.manifest_path();
    let mut tree = walk(&cfg.root, cfg.follow_links, &not_assets(cfg));
    tree.files.retain(|f| {
        !(f.path.parent() == manifest_path.parent()
            && f.rel
                .rsplit('/')
                .next()
                .is_some_and(|n| partial_of(&manifest_path, n).is_some()))
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

/// Fails with a write error naming the folder unless DIR, the manifest's
/// folder and the cache can all be written.
pub(crate) fn probe_folders(
    root: &Path,
    manifest_path: &Path,
    cache: Option<&Cache>,
) -> Result<()> {
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

/// Refuses a `root` that is missing or not a folder (a usage error).
pub(crate) fn check_root(cfg: &Config) -> Result<()> {
    let root = cfg.root.as_path();
    if !root.exists() {
        return Err(crate::Error::Config(format!(
            "{}: no such folder{}",
            root.display(),
            backslash_hint(&root.to_string_lossy())
        )));
    }
    if !root.is_dir() {
        return Err(crate::Error::Config(format!(
            "{}: not a folder",
            root.display()
        )));
    }
    Ok(())
}

/// Refuses a `root` that looks like a project root rather than a build's
/// output, unless `--allow-project-root` (a usage error): `precompress .`
/// would compress node_modules/ and src/ along with the site.
pub(crate) fn check_not_project_root(cfg: &Config) -> Result<()> {
    let root = cfg.root.as_path();
    let holds = |name: &str, dir: bool| {
        let p = root.join(name);
        if dir {
            p.is_dir()
        } else {
            p.is_file()
        }
    };
    let marks: Vec<&str> = [("package.json", false), ("node_modules/", true)]
        .into_iter()
        .filter(|(name, dir)| holds(name.trim_end_matches('/'), *dir))
        .map(|(name, _)| name)
        .collect();
    if !marks.is_empty() && !cfg.allow_project_root {
        return Err(crate::Error::Config(format!(
            "{}: looks like a project root, not a build's output (it holds {}): every file under it would be compressed and listed, node_modules/ and src/ too. Pass the folder the build writes (dist/, build/, out/, public/), or --allow-project-root if this folder is what you serve",
            root.display(),
            marks.join(" and ")
        )));
    }
    Ok(())
}

/// What to say of a missing DIR whose name holds a backslash: outside
/// Windows it is a character of the name, not a separator (`'dist\'` is
/// the folder named `dist\`).
fn backslash_hint(root: &str) -> String {
    if cfg!(windows) || !root.contains('\\') {
        return String::new();
    }
    format!(
        " (a backslash is part of a name here, not a separator: did you mean {}?)",
        root.replace('\\', "/")
    )
}

/// Refuses a run that would write where it must not (a configuration
/// error, exit 2, before anything is written). The rules, in docs/caching.md's
/// "Nothing but its own files is written": `--manifest` names a new file or
/// a precompress manifest ([`crate::model::manifest::may_replace`]), never a
/// source or any other file; nothing is written inside an earlier release
/// (`--manifest`, `--cache-dir`); an earlier release is neither DIR, nor
/// inside it (it would be published and compressed with the new one), nor
/// around it; the cache folder is neither DIR nor around it
/// ([`check_cache_dir`]).
pub(crate) fn check_outputs(cfg: &Config) -> Result<()> {
    let bad = |e: String| crate::Error::Config(e);
    let manifest = cfg.manifest_path();
    let default = crate::model::manifest::default_path(&cfg.root);
    if let Some(given) = cfg
        .manifest
        .as_ref()
        .filter(|m| crate::fsutil::canonical(m) != crate::fsutil::canonical(&default))
    {
        crate::model::manifest::may_replace(given)
            .map_err(|why| bad(format!("--manifest {}: {why}", given.display())))?;
    }
    let dir = crate::fsutil::canonical(&cfg.root);
    let canon_manifest = crate::fsutil::canonical(&manifest);
    if let Some(cache) = &cfg.cache_dir {
        check_cache_dir(cache, &cfg.root)?;
    }
    let canon_cache = cfg.cache_dir.as_deref().map(crate::fsutil::canonical);
    for prev in &cfg.dictionary_from {
        // Missing, not a folder, DIR itself: said first, as such.
        let p = crate::run::state::releases::check_folder(prev, Some(&dir))?;
        let named = |what: &str| format!("--dictionary-from {}: {what}", prev.display());
        if p.starts_with(&dir) {
            return Err(bad(named("is inside DIR: the earlier release would be compressed and published with the new one; keep it outside DIR")));
        }
        if dir.starts_with(&p) {
            return Err(bad(named("holds DIR: this run would write into the earlier release; keep the two side by side")));
        }
        if canon_manifest.starts_with(&p) {
            return Err(bad(format!(
                "--manifest {}: inside the earlier release {}, which precompress never modifies",
                manifest.display(),
                prev.display()
            )));
        }
        if canon_cache
            .as_ref()
            .is_some_and(|c| c.starts_with(&p) || p.starts_with(c))
        {
            return Err(bad(format!(
                "--cache-dir {}: overlaps the earlier release {}, which precompress never modifies",
                cfg.cache_dir.as_deref().unwrap_or(Path::new("")).display(),
                prev.display()
            )));
        }
    }
    Ok(())
}

/// Refuses a `--cache-dir` that is DIR or holds it (a configuration error):
/// the cache's entries and the release store would be written among the
/// site's files, to be listed and published as its assets, and the cache's
/// clean-up, which walks its own folder, would reach into DIR. A cache
/// folder inside DIR is fine: the walk leaves it out ([`not_assets`]).
pub(crate) fn check_cache_dir(cache: &Path, root: &Path) -> Result<()> {
    let (canon_cache, dir) = (
        crate::fsutil::canonical(cache),
        crate::fsutil::canonical(root),
    );
    if !dir.starts_with(&canon_cache) {
        return Ok(());
    }
    let why = if canon_cache == dir {
        "is DIR: the cache and the release store would be written among the site's \
         files, listed and published as its assets"
    } else {
        "holds DIR: the cache's clean-up walks its folder, DIR included, and could \
         take the site's files for its own"
    };
    Err(Error::Config(format!(
        "--cache-dir {}: {why} (DIR is {}); keep the cache outside DIR, or in a \
         folder inside it, which the run leaves out",
        cache.display(),
        root.display()
    )))
}
