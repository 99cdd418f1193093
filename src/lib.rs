//! precompress writes `.br`, `.zst` and `.gz` siblings beside a web app's static
//! assets at build time, and a manifest with a content hash per asset and per
//! variant that a web server reads to pick a variant and set `ETag`,
//! `Content-Length` and `Vary`.
//!
//! ```no_run
//! let cfg = precompressor::Config::new("dist");
//! let report = precompressor::run(&cfg, &precompressor::NoProgress)?;
//! println!("{} of {} assets compressed", report.compressed, report.files);
//! # Ok::<(), precompressor::Error>(())
//! ```
//!
//! Every variant is decoded and compared with its source before it is written,
//! written under a temporary dot-name and renamed into place, and kept only when
//! strictly smaller than its source.

// The API: `Config` → `run` → `Report` (+ the `Manifest` written),
// `check` (and `probe`, its live check of a deploy), `merge`, `tune`,
// and for servers `serve::Index` and `serve::http::ServeManifest`, with
// `coding`, `dictionary`, `manifest` and `error` for their types; `encode`
// (the codecs) and `model` (the vocabulary) for what a tool beside ours
// builds on. The binary uses nothing else: no `doc(hidden)` door.
// The binary's own modules (arguments, precompress.toml, budgets, GitHub
// output) are not here: they live with it in `src/cli/`.
//
// What writes variants needs the codec libraries (feature `compress`, on by
// default); reading a manifest and negotiating (`serve`, `manifest`,
// `dictionary`, `coding`) does not, so a server embedding `Index::select`
// builds with `default-features = false` and no brotli, zstd or libdeflate.
#[cfg(feature = "compress")]
pub mod check;
#[cfg(feature = "compress")]
pub mod config;
#[cfg(feature = "deploy")]
pub mod deploy;
#[cfg(feature = "compress")]
pub mod encode;
pub mod error;
#[cfg(feature = "compress")]
pub mod merge;
// Parts of it serve only the run (feature `compress`).
#[cfg_attr(not(feature = "compress"), allow(dead_code))]
mod fsutil;
pub mod model;
#[cfg(feature = "probe")]
pub mod probe;
#[cfg(feature = "compress")]
pub mod report;
#[cfg(feature = "compress")]
mod run;
pub mod serve;
#[cfg(feature = "compress")]
pub mod tune;
#[cfg(feature = "compress")]
pub mod view;

#[cfg(feature = "compress")]
pub use config::Config;
#[cfg(feature = "compress")]
pub use encode::Levels;
pub use error::{Error, ErrorKind, Result};
#[cfg(feature = "compress")]
pub use merge::{merge, Merged};
pub use model::coding::Codec;
pub use model::manifest::Manifest;
pub use model::{coding, dictionary, manifest};
#[cfg(feature = "compress")]
pub use report::{DocumentsDictionary, FirstVisit, Report};
/// The `--include`/`--exclude` glob rules (`Pattern`), which budgets use too.
#[cfg(feature = "compress")]
pub use run::filter;

/// `--shard K/N` and `precompress merge`: a sharded run's units and sealed
/// partial manifests, and the merge of them into the one manifest.
#[cfg(feature = "compress")]
pub mod shard {
    pub use crate::merge::{merge, merge_with, Merged};
    pub use crate::model::shard::*;
}
#[cfg(feature = "compress")]
pub use run::{run, NoProgress, Progress};
