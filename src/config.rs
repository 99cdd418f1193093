//! The validated settings a run uses. The CLI builds one; library users can too.

use std::path::PathBuf;

use crate::encode::{Codec, Levels};

/// Settings for one run over one folder.
#[derive(Debug, Clone)]
pub struct Config {
    /// The folder to precompress (DIR).
    pub root: PathBuf,
    /// Codings to write, default all three (`br`, `zstd`, `gzip`).
    pub codecs: Vec<Codec>,
    /// Encoder levels, default brotli 11 and zstd 19.
    pub levels: Levels,
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
    /// Recompress everything, and overwrite variants precompress did not write (default false).
    pub force: bool,
    /// Content-addressed cache of encoder outputs shared across runs and checkouts (default none).
    pub cache_dir: Option<PathBuf>,
    /// Bound on the cache's size in bytes (default 1 GiB).
    pub cache_max_size: u64,
}

impl Config {
    /// Defaults for `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Config {
            root: root.into(),
            codecs: Codec::ALL.to_vec(),
            levels: Levels::default(),
            include: Vec::new(),
            exclude: Vec::new(),
            min_size: 1024,
            follow_links: false,
            manifest: None,
            threads: 0,
            dry_run: false,
            force: false,
            cache_dir: None,
            cache_max_size: crate::cache::DEFAULT_MAX_SIZE,
        }
    }

    /// The manifest path this run writes.
    pub fn manifest_path(&self) -> PathBuf {
        self.manifest
            .clone()
            .unwrap_or_else(|| crate::manifest::default_path(&self.root))
    }

    /// Worker threads to start: `threads`, or the cores available to us
    /// (`available_parallelism` honours cgroup quotas and affinity masks).
    pub fn worker_threads(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            n => n,
        }
    }
}
