//! Command-line parsing (clap derive), turned into a validated [`Config`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::Config;
use crate::encode::{Codec, Levels};

const EXAMPLES: &str = "\
Examples:
  precompress dist/                       br, zstd and gzip beside every compressible file
  precompress dist/ --formats br,gzip     only brotli and gzip
  precompress dist/ --exclude '*.map' --exclude 'legacy/**'
  precompress dist/ --json > report.json  machine-readable report on stdout

Globs (--include, --exclude): a glob with a '/' matches the path relative to DIR;
one without matches the file name in any folder ('*.map'). '*' and '?' never match
'/'; '**' matches any number of folders ('assets/**/*.js').

Exit codes: 0 success, 1 some file failed (each is reported on stderr with its
path and cause; the other files are still done), 2 usage error.";

/// Precompress a web app's static assets with brotli, zstd and gzip.
#[derive(Debug, Parser)]
#[command(
    name = "precompress",
    version,
    about,
    after_long_help = EXAMPLES,
    after_help = "Run with --help for examples, glob rules and exit codes.",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    /// Without a subcommand, precompress DIR.
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub run: RunArgs,
}

/// Subcommands besides the main job.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check DIR against its manifest without writing anything (for CI and server start-up).
    Check(CheckArgs),
}

/// Options of `precompress check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The folder precompress ran on.
    pub dir: PathBuf,

    /// The manifest [default: DIR/precompress-manifest.json].
    #[arg(long, value_name = "PATH")]
    pub manifest: Option<PathBuf>,

    /// Print the problems as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Options of a run.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The build output folder to precompress (e.g. dist/).
    #[arg(required = true)]
    pub dir: Option<PathBuf>,

    /// Codings to write, comma-separated: br, zstd, gzip.
    #[arg(long, value_delimiter = ',', default_value = "br,zstd,gzip", value_parser = parse_codec)]
    pub formats: Vec<Codec>,

    /// Brotli quality, 0-11.
    #[arg(long, default_value_t = 11, value_parser = clap::value_parser!(u32).range(0..=11))]
    pub brotli_quality: u32,

    /// Zstandard level, 1-22 (the window stays at most 8 MiB at every level).
    #[arg(long, default_value_t = 19, value_parser = clap::value_parser!(i32).range(1..=22))]
    pub zstd_level: i32,

    /// Compress only files matching this glob (repeatable; replaces the default type list).
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,

    /// Never compress files matching this glob (repeatable; wins over --include).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,

    /// Skip files smaller than this many bytes.
    #[arg(long, default_value_t = 1024, value_name = "BYTES")]
    pub min_size: u64,

    /// Follow symlinks (never to write outside DIR).
    #[arg(long)]
    pub follow_links: bool,

    /// Where to write the manifest [default: DIR/precompress-manifest.json].
    #[arg(long, value_name = "PATH")]
    pub manifest: Option<PathBuf>,

    /// Worker threads [default: the cores available].
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,

    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,

    /// Print a JSON report on stdout (with per-job timings).
    #[arg(long)]
    pub json: bool,
}

fn parse_codec(s: &str) -> Result<Codec, String> {
    Codec::parse(s).ok_or_else(|| format!("unknown format {s:?} (expected br, zstd or gzip)"))
}

impl RunArgs {
    /// The validated configuration.
    pub fn to_config(&self) -> Config {
        let mut codecs = self.formats.clone();
        codecs.sort();
        codecs.dedup();
        Config {
            root: self.dir.clone().unwrap_or_default(),
            codecs,
            levels: Levels {
                brotli_quality: self.brotli_quality,
                zstd_level: self.zstd_level,
            },
            include: self.include.clone(),
            exclude: self.exclude.clone(),
            min_size: self.min_size,
            follow_links: self.follow_links,
            manifest: self.manifest.clone(),
            threads: self.threads.map_or(0, usize::from),
        }
    }
}
