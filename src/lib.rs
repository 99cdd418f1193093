//! precompress writes `.br`, `.zst` and `.gz` siblings beside a web app's static
//! assets at build time, and a manifest with a content hash per asset and per
//! variant that a web server reads to pick a variant and set `ETag`,
//! `Content-Length` and `Vary`.
//!
//! ```no_run
//! let cfg = precompress::Config::new("dist");
//! let report = precompress::run(&cfg, &precompress::NoProgress)?;
//! println!("{}", report.summary());
//! # Ok::<(), precompress::Error>(())
//! ```
//!
//! Every variant is decoded and compared with its source before it is written,
//! written under a temporary dot-name and renamed into place, and kept only when
//! strictly smaller than its source.

pub mod budget;
pub mod cache;
pub mod check;
#[cfg(feature = "cli")]
pub mod cli;
pub mod config;
#[cfg(feature = "cli")]
pub mod configfile;
pub mod dictionary;
pub mod encode;
pub mod error;
pub mod filter;
pub mod fsutil;
pub mod github;
pub mod manifest;
pub mod pipeline;
pub mod releases;
pub mod report;
pub mod serve;
pub mod walk;

pub use config::Config;
pub use encode::{Codec, Levels};
pub use error::{Error, Result};
pub use manifest::Manifest;
pub use pipeline::{run, NoProgress, Progress};
pub use report::Report;
