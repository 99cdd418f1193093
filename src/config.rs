//! The validated settings a run uses. The CLI builds one; library users can too.

use std::path::PathBuf;

use crate::encode::delta::DeltaCoding;
use crate::encode::{Codec, Levels};

/// The ranges the settings must lie in: one home for the command line,
/// precompress.toml and [`Config::validate`] (which [`crate::run`] calls, so a
/// library caller gets the same refusal).
pub mod limits {
    use std::ops::RangeInclusive;
    /// Sources of this size or more are mapped rather than read into each
    /// job's own buffer (every job of a huge file shares one mapping).
    pub const MAP_MIN: u64 = 64 << 20;
    /// `--brotli-quality`.
    pub const BROTLI_QUALITY: RangeInclusive<i64> = 0..=11;
    /// `--zstd-level`.
    pub const ZSTD_LEVEL: RangeInclusive<i64> = 1..=22;
    /// `--gzip-level` (libdeflate).
    pub const GZIP_LEVEL: RangeInclusive<i64> = 1..=12;
    /// `--delta-releases`: how many of the releases the cache's store keeps
    /// (its end, `run::state::store::KEPT_RELEASES`) deltas are made against.
    pub const DELTA_RELEASES: RangeInclusive<i64> = 1..=4;
    /// `check --url --timeout`, in seconds: up to a day (a check paced at
    /// one request a second gets through 86,400 of them).
    pub const CHECK_TIMEOUT_SECS: RangeInclusive<u64> = 1..=86_400;

    /// `value` if it lies in `range`, else why not (`12 is not in 0-11`).
    pub fn check(value: i64, range: &RangeInclusive<i64>) -> Result<i64, String> {
        if range.contains(&value) {
            Ok(value)
        } else {
            Err(format!(
                "{value} is not in {}-{}",
                range.start(),
                range.end()
            ))
        }
    }

    /// `--min-ratio`: a number in (0, 1].
    pub fn ratio(s: &str) -> Result<f64, String> {
        match s.trim().parse::<f64>() {
            Ok(r) if r > 0.0 && r <= 1.0 => Ok(r),
            _ => Err(format!(
                "invalid ratio {s:?} (expected a number in (0, 1], e.g. 0.8)"
            )),
        }
    }
}

/// Settings for one run over one folder: start from [`Config::new`] (fields
/// will grow).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// The folder to precompress (DIR).
    pub root: PathBuf,
    /// Codings to write, default all three (`br`, `zstd`, `gzip`).
    pub codecs: Vec<Codec>,
    /// Encoder levels, default brotli 11 and zstd 19.
    pub levels: Levels,
    /// A variant is kept only when at most this fraction of its source
    /// (default 1: any variant strictly smaller is kept).
    pub min_ratio: f64,
    /// `--include` globs; when non-empty they replace the default type list.
    pub include: Vec<String>,
    /// `--exclude` globs; they win over everything.
    pub exclude: Vec<String>,
    /// Files smaller than this many bytes are not compressed (default 1024).
    pub min_size: u64,
    /// Follow symlinks (default false); folders outside DIR are never written to.
    pub follow_links: bool,
    /// Manifest path, default `DIR/precompress-manifest.json`.
    pub manifest: Option<PathBuf>,
    /// Worker threads; 0 means the cores this process may use (default 0).
    pub threads: usize,
    /// Compress and report, but write and delete nothing (default false).
    pub dry_run: bool,
    /// A DIR with no file to compress is fine (default false: an error, the
    /// sign of a build that did not run).
    pub allow_empty: bool,
    /// A DIR that holds `package.json` or `node_modules/` is fine (default
    /// false: an error, the sign of a project root passed for its output).
    pub allow_project_root: bool,
    /// Recompress everything, and overwrite variants precompress did not write (default false).
    pub force: bool,
    /// Content-addressed cache of encoder outputs shared across runs and checkouts (default none).
    pub cache_dir: Option<PathBuf>,
    /// Bound on the cache's size in bytes (default 1 GiB).
    pub cache_max_size: u64,
    /// Earlier releases' build folders: each changed fingerprinted asset gets
    /// `dcb` and `dcz` deltas against its previous version there (default none).
    pub dictionary_from: Vec<PathBuf>,
    /// Earlier releases taken from the live site (`--dictionary-from
    /// https://…`, taken by `probe::previous`), in folders the caller filled:
    /// read as `dictionary_from` is, but beside the release store, not
    /// instead of it (default none).
    pub live_releases: Vec<PathBuf>,
    /// Which deltas to write against them (default both `dcb` and `dcz`).
    pub delta_codings: Vec<DeltaCoding>,
    /// Record `Use-As-Dictionary` for fingerprinted assets, so browsers keep
    /// them for the next release's deltas (default true).
    pub use_as_dictionary: bool,
    /// Mark each HTML page as the dictionary of its own next version, sent
    /// with the page cache policy that lets a browser keep it
    /// ([`crate::model::manifest::Caching::Page`]), and write its deltas
    /// against its earlier versions (default true; `false`: pages are sent
    /// `no-cache` and get no deltas of their own).
    pub page_dictionary: bool,
    /// The most files the deploy may hold (`--max-files`, default none):
    /// deltas are dropped, the oldest release's first, to stay within it
    /// (`run::bound`); a deploy its sources and variants alone pass fails.
    pub max_files: Option<u64>,
    /// Deltas against at most the newest this many releases of the cache's
    /// store (`--delta-releases`, default none: every release it keeps,
    /// [`limits::DELTA_RELEASES`]'s end); folders and sites given are all used.
    pub delta_releases: Option<usize>,
    /// Run only shard K of N of the jobs and write a partial manifest beside
    /// the manifest, for `precompress merge` (default none: the whole run).
    pub shard: Option<crate::model::shard::Shard>,
    /// The URL path DIR is served at, `/`-anchored and ending in `/` (default
    /// `/`): dictionary patterns start with it, and the manifest records it.
    pub base: String,
    /// Which dictionaries the pages link, which a first visit fetches at
    /// idle: the code dictionary (`run::dictionaries::shared`) and the documents
    /// dictionary (`run::dictionaries::documents`). Default [`SharedDictionary::Auto`].
    pub shared_dictionary: SharedDictionary,
}

/// `--shared-dictionary`: which dictionaries every page links, so that a
/// browser fetches them at idle, first visits included. In every mode the
/// chunks with no pattern of their own (names that are only a hash, or
/// that several chunks share) are grouped and one of each group is marked
/// for it, which costs a first visit nothing (`run::dictionaries::shared`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SharedDictionary {
    /// The code dictionary with the members a first visit can fetch at idle
    /// within 2% of its download (`model::dictionary::IDLE_MAX_SHARE`), and
    /// the documents dictionary when it pays back within a few pages: a
    /// first visit fetches what the summary says.
    #[default]
    Auto,
    /// The code dictionary whatever it adds (returning visitors get the
    /// smallest deltas; a first visit fetches about the brotli size of the
    /// chunks it adds to the marked one), and the documents dictionary
    /// where it pays.
    On,
    /// Neither: a first visit fetches no dictionary. The marked chunks
    /// still serve their groups.
    Off,
}

impl SharedDictionary {
    /// Its setting value: `auto`, `on` or `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            SharedDictionary::Auto => "auto",
            SharedDictionary::On => "on",
            SharedDictionary::Off => "off",
        }
    }

    /// Parses a setting value (`true` is `auto`, `false` is `off`, as the
    /// boolean setting was).
    pub fn parse(s: &str) -> Option<SharedDictionary> {
        match s {
            "auto" | "true" => Some(SharedDictionary::Auto),
            "on" => Some(SharedDictionary::On),
            "off" | "false" => Some(SharedDictionary::Off),
            _ => None,
        }
    }
}

impl Config {
    /// Defaults for `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Config {
            root: root.into(),
            codecs: Codec::ALL.to_vec(),
            levels: Levels::default(),
            min_ratio: 1.0,
            include: Vec::new(),
            exclude: Vec::new(),
            min_size: 1024,
            follow_links: false,
            manifest: None,
            threads: 0,
            dry_run: false,
            allow_empty: false,
            allow_project_root: false,
            force: false,
            cache_dir: None,
            cache_max_size: DEFAULT_CACHE_MAX_SIZE,
            dictionary_from: Vec::new(),
            live_releases: Vec::new(),
            delta_codings: DeltaCoding::ALL.to_vec(),
            use_as_dictionary: true,
            page_dictionary: true,
            max_files: None,
            delta_releases: None,
            shard: None,
            base: crate::model::path::ROOT_BASE.to_string(),
            shared_dictionary: SharedDictionary::Auto,
        }
    }

    /// Refuses settings out of their ranges ([`limits`]), naming the setting.
    pub fn validate(&self) -> crate::Result<()> {
        let bad = |name: &str, e: String| crate::Error::Config(format!("{name}: {e}"));
        let l = &self.levels;
        limits::check(l.brotli_quality.into(), &limits::BROTLI_QUALITY)
            .map_err(|e| bad("brotli quality", e))?;
        limits::check(l.zstd_level.into(), &limits::ZSTD_LEVEL)
            .map_err(|e| bad("zstd level", e))?;
        limits::check(l.gzip_level.into(), &limits::GZIP_LEVEL)
            .map_err(|e| bad("gzip level", e))?;
        limits::ratio(&self.min_ratio.to_string()).map_err(|e| bad("min ratio", e))?;
        if let Some(n) = self.delta_releases {
            limits::check(n as i64, &limits::DELTA_RELEASES)
                .map_err(|e| bad("delta releases", e))?;
        }
        if let Some(s) = self.shard {
            crate::model::shard::Shard::parse(&s.to_string()).map_err(|e| bad("shard", e))?;
        }
        if self.codecs.is_empty() {
            return Err(bad("formats", "no coding asked for".into()));
        }
        match crate::model::path::normalize_base(&self.base) {
            Ok(b) if b == self.base => {}
            Ok(b) => return Err(bad("base", format!("{:?} is written {b:?}", self.base))),
            Err(e) => return Err(crate::Error::Config(e)),
        }
        Ok(())
    }

    /// The manifest path this run writes.
    pub fn manifest_path(&self) -> PathBuf {
        self.manifest
            .clone()
            .unwrap_or_else(|| crate::model::manifest::default_path(&self.root))
    }

    /// Worker threads to start: `threads`, or the cores available to us
    /// (`available_parallelism` honours cgroup quotas and affinity masks),
    /// fewer when the memory we may use would not hold that many workers.
    pub fn worker_threads(&self) -> usize {
        self.worker_threads_with(0)
    }

    /// [`Self::worker_threads`] for a run whose delta jobs each hold a
    /// dictionary of up to `dictionary` bytes, read whole, on top of
    /// [`WORKER_MEMORY`].
    pub fn worker_threads_with(&self, dictionary: u64) -> usize {
        match self.threads {
            0 => threads_for(
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1),
                memory_available(),
                WORKER_MEMORY + dictionary,
            ),
            n => n,
        }
    }
}

/// Threads worth starting for `work` tasks when `threads` were asked for:
/// no more than the tasks (and at least one). A thread with nothing to do is
/// not free: it is made and joined, and a rayon pool's idle threads each look
/// for work in every other's queue, so `-j 65535` on five files cost the
/// square of 65,535 before any file was read.
pub fn threads_for_work(threads: usize, work: usize) -> usize {
    threads.min(work).max(1)
}

/// The threads of a run's shared pool (the scan's hashing, the shared
/// dictionary's estimates): `threads`, but no more than the cores available
/// to us, past which CPU-bound work only waits its turn. The jobs' workers,
/// started once the jobs are known, are [`threads_for_work`] of them.
pub fn pool_threads(threads: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    threads_for_work(threads, cores)
}

/// What one worker may need at the default levels: brotli q11's state with a
/// 16 MiB window (about 100 MiB), a source read whole (under 64 MiB; larger
/// ones are mapped and shared) and its output. A delta job holds its
/// dictionary too ([`Config::worker_threads_with`]).
/// Default bound on the encoder cache's size: 1 GiB.
pub const DEFAULT_CACHE_MAX_SIZE: u64 = 1 << 30;

/// Where the cache goes when none is given, below the project folder: the
/// Vite plugin's (and every integration's) since before, the convention of
/// `find-cache-dir` that babel-loader, terser-webpack-plugin and others keep.
pub const DEFAULT_CACHE_DIR: &str = "node_modules/.cache/precompress";

/// The cache folder a run, `check` and `merge` of DIR `dir` use when none
/// is given (`--cache-dir`, `PRECOMPRESS_CACHE_DIR`, precompress.toml's
/// `cache-dir`) and `--no-cache` does not turn it off: [`DEFAULT_CACHE_DIR`]
/// in the nearest folder above DIR that holds a `package.json` (the project
/// whose build DIR is), looking no higher than a folder with `.git`. From
/// DIR, not the working directory, so the plugin (run from Vite's root),
/// the Action (from the workspace, a monorepo's app given as its path) and a
/// script run from anywhere find the same folder. Never DIR's own
/// package.json (a built server's): the cache would be published with the
/// site. None outside a JavaScript project.
pub fn default_cache_dir(dir: &std::path::Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().ok()?;
    let mut at = dir.parent();
    while let Some(folder) = at {
        if folder.join("package.json").is_file() {
            let cache = folder.join(DEFAULT_CACHE_DIR);
            // DIR inside the cache folder: no cache rather than one around it.
            return (!dir.starts_with(&cache)).then_some(cache);
        }
        if folder.join(".git").exists() {
            return None;
        }
        at = folder.parent();
    }
    None
}

pub const WORKER_MEMORY: u64 = 256 << 20;

/// One worker per core, but no more than the available memory holds at
/// `per_worker` bytes each (and always at least one): a container with many
/// cores and little memory gets a slower run, not an out-of-memory kill.
pub fn threads_for(cores: usize, memory: Option<u64>, per_worker: u64) -> usize {
    match memory {
        Some(m) => cores.min((m / per_worker.max(1)).max(1) as usize),
        None => cores,
    }
    .max(1)
}

/// Memory this process may still take: the kernel's `MemAvailable`, or less
/// when a cgroup (v2) limit is closer. `None` where neither can be read.
fn memory_available() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let read = |p: &std::path::Path| std::fs::read_to_string(p).ok();
        let avail = read("/proc/meminfo".as_ref()).and_then(|m| {
            let kb = m.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?;
            Some(
                kb.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()?
                    * 1024,
            )
        });
        let cgroup = read("/proc/self/cgroup".as_ref()).and_then(|c| {
            let rel = c.lines().find_map(|l| l.strip_prefix("0::"))?.to_string();
            let dir = std::path::Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/'));
            let max: u64 = read(&dir.join("memory.max"))?.trim().parse().ok()?; // "max": no limit
            let used: u64 = read(&dir.join("memory.current"))?.trim().parse().ok()?;
            Some(max.saturating_sub(used))
        });
        match (avail, cgroup) {
            (Some(a), Some(c)) => Some(a.min(c)),
            (a, c) => a.or(c),
        }
    }
    #[cfg(not(target_os = "linux"))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_follow_the_cores_unless_memory_is_short() {
        assert_eq!(threads_for(8, None, WORKER_MEMORY), 8);
        assert_eq!(threads_for(8, Some(64 << 30), WORKER_MEMORY), 8);
        // 1 GiB holds four workers.
        assert_eq!(threads_for(8, Some(1 << 30), WORKER_MEMORY), 4);
        // Eight 100 MiB dictionaries: each delta job holds one whole.
        assert_eq!(
            threads_for(8, Some(1 << 30), WORKER_MEMORY + (100 << 20)),
            2
        );
        // Never none, however little memory there is.
        assert_eq!(threads_for(8, Some(10 << 20), WORKER_MEMORY), 1);
        assert_eq!(threads_for(0, None, WORKER_MEMORY), 1);
    }

    #[test]
    fn threads_past_the_work_or_the_cores_are_not_started() {
        assert_eq!(threads_for_work(65535, 5), 5);
        assert_eq!(threads_for_work(2, 5), 2);
        assert_eq!(threads_for_work(8, 0), 1);
        let cores = std::thread::available_parallelism().unwrap().get();
        assert_eq!(pool_threads(65535), cores);
        assert_eq!(pool_threads(1), 1);
    }

    #[test]
    fn the_library_refuses_settings_out_of_range_as_the_cli_does() {
        let tmp = tempfile::tempdir().unwrap();
        let mut cfg = Config::new(tmp.path());
        assert!(cfg.validate().is_ok());
        for (set, want) in [
            (
                &mut |c: &mut Config| c.levels.brotli_quality = 12,
                "brotli quality: 12 is not in 0-11",
            ),
            (
                &mut |c: &mut Config| c.levels.zstd_level = 0,
                "zstd level: 0 is not in 1-22",
            ),
            (
                &mut |c: &mut Config| c.levels.gzip_level = 13,
                "gzip level: 13 is not in 1-12",
            ),
            (
                &mut |c: &mut Config| c.min_ratio = 1.5,
                "min ratio: invalid ratio",
            ),
        ] as [(&mut dyn FnMut(&mut Config), &str); 4]
        {
            let mut c = cfg.clone();
            set(&mut c);
            let e = crate::run(&c, &crate::NoProgress).unwrap_err();
            assert!(
                matches!(e, crate::Error::Config(_)) && e.to_string().contains(want),
                "{e}"
            );
        }
        cfg.codecs.clear();
        assert!(cfg.validate().is_err());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn linux_reports_the_memory_available() {
        assert!(memory_available().is_some_and(|m| m > 0));
    }
}
