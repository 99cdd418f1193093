//! Command-line parsing (clap derive): the subcommands and their arguments;
//! the run's options are `cli/options.rs`'s table.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

const EXAMPLES: &str = "\
Examples:
  precompress dist/                       br, zstd and gzip beside every compressible file
  precompress dist/ --formats br,gzip     only brotli and gzip
  precompress dist/ --exclude '*.map' --exclude 'legacy/**'
  precompress dist/ --json > report.json  machine-readable report on stdout
  precompress dist/ --dry-run -v          what would be written, per file; writes nothing
  precompress dist/ --budget 'assets/**/*.js=150KB'   fail when a script's best variant is larger
  precompress dist/ --dictionary-from ../release-41/dist   deltas for returning visitors (RFC 9842)
  precompress tune dist/                  measure every level on a sample of dist/; prints the precompress.toml lines to pin
  precompress completions bash > /etc/bash_completion.d/precompress

Config file: precompress.toml in DIR or a parent folder up to the project root
(the first with .git), or --config PATH. Keys are the long option names
(brotli-quality = 9, exclude = [\"*.map\"], ...) and a [budget] table
(\"*.js\" = \"150KB\"); unknown keys are errors. Flags win over the file.

Globs (--include, --exclude): a glob with a '/' matches the path relative to DIR;
one without matches the file name in any folder ('*.map'). '*' and '?' never match
'/'; '**' matches any number of folders ('assets/**/*.js').

Exit codes: 0 success, 1 some file failed (each is reported on stderr with its
path and cause; the other files are still done) or a budget was exceeded,
2 usage error (bad option, DIR missing, invalid config file).

Environment: NO_COLOR turns off colour and the progress bar;
--github writes a job summary, step outputs and ::error annotations
($GITHUB_STEP_SUMMARY, $GITHUB_OUTPUT).";

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
    pub run: crate::cli::options::RunArgs,
}

/// Subcommands besides the main job.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check DIR against its manifest without writing anything (for CI and server start-up).
    Check(CheckArgs),
    /// Serve DIR locally from its manifest, the way a production server should.
    Serve(ServeArgs),
    /// Print nginx maps that serve DIR's RFC 9842 deltas (include them in http {}; the location lines are in the output).
    NginxMap(NginxMapArgs),
    /// Print a Caddyfile snippet that serves DIR's RFC 9842 deltas (import it, then `import precompress_deltas` in the site block; usage is in the output).
    CaddyMap(CaddyMapArgs),
    /// Print Apache httpd configuration that serves DIR's variants and RFC 9842 deltas as the manifest says (Include it in the virtual host whose DocumentRoot is DIR; usage is in the output).
    ApacheMap(ApacheMapArgs),
    /// List DIR as bucket objects (S3, GCS, R2) with the headers each must carry, as JSON, TSV or aws/rclone upload commands; or print the CloudFront Functions that pick the object per request (--edge).
    Objects(ObjectsArgs),
    /// Measure every level of each coding on a sample of DIR's assets and print the precompress.toml lines that pin the best (writes nothing into DIR).
    Tune(TuneArgs),
    /// Merge the partial manifests that `precompress DIR --shard K/N` runs left in DIR into the one manifest a single run would have written.
    Merge(MergeArgs),
    /// Write an HTML page of what precompress did for DIR: what a first visit and a returning visitor download, per page and coding, what deltas saved, the biggest assets, what was skipped (writes nothing into DIR).
    Report(ReportArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// What serve and the generators for other servers read: the folder, its
/// manifest and the URL path it is served at (one definition, flattened).
#[derive(Debug, Args)]
pub struct SiteArgs {
    /// The folder precompress ran on.
    pub dir: PathBuf,

    /// The manifest [default: DIR/precompress-manifest.json].
    #[arg(long, value_name = "PATH")]
    pub manifest: Option<PathBuf>,

    /// The URL path DIR is served at (e.g. /app/) [default: the manifest's `base`, else /].
    #[arg(long, value_name = "PATH", value_parser = parse_base)]
    pub base: Option<String>,
}

/// Options of `precompress serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub site: SiteArgs,

    /// Address to listen on: IP:PORT, localhost:PORT, or a bare PORT (on 127.0.0.1); loopback unless you say otherwise.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR", value_parser = parse_addr)]
    pub addr: std::net::SocketAddr,

    /// A single-page app: a path with no file, whose last segment has no `.`, gets index.html (a client-side route survives a reload).
    #[arg(long)]
    pub spa: bool,

    /// Threads answering requests, 1-65535 [default: one per core]; 1 serves every connection from one thread, as one nginx worker process.
    #[arg(long, short = 'j', visible_alias = "jobs", value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,

    /// No access log on stdout, as nginx's `access_log off` (errors and warnings still go to stderr).
    #[arg(long, short)]
    pub quiet: bool,
}

/// Options of `precompress nginx-map`.
#[derive(Debug, Args)]
pub struct NginxMapArgs {
    #[command(flatten)]
    pub site: SiteArgs,
}

/// Options of `precompress apache-map`.
#[derive(Debug, Args)]
pub struct ApacheMapArgs {
    #[command(flatten)]
    pub site: SiteArgs,

    /// Write it for DIR/.htaccess (shared hosting) instead of a server or virtual host.
    #[arg(long)]
    pub htaccess: bool,
}

/// Options of `precompress caddy-map`.
#[derive(Debug, Args)]
pub struct CaddyMapArgs {
    #[command(flatten)]
    pub site: SiteArgs,
}

/// Options of `precompress objects`.
#[derive(Debug, Args)]
pub struct ObjectsArgs {
    #[command(flatten)]
    pub site: SiteArgs,

    /// What to print: json (an object per line), tsv, aws (a script of `aws s3 cp` lines, run with BUCKET set), rclone (`rclone copyto` lines, run with REMOTE set).
    #[arg(long, value_enum, default_value = "json", conflicts_with = "edge")]
    pub format: ObjectsFormat,

    /// Print a CloudFront Function (cloudfront-js-2.0) instead: cloudfront for viewer request (picks the object; refused past CloudFront's 10 KB), cloudfront-response for viewer response (the headers a bucket cannot store).
    #[arg(long, value_enum, value_name = "FUNCTION")]
    pub edge: Option<EdgeFunction>,
}

/// `precompress objects --format`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ObjectsFormat {
    Json,
    Tsv,
    Aws,
    Rclone,
}

/// `precompress objects --edge`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum EdgeFunction {
    Cloudfront,
    CloudfrontResponse,
}

/// Options of `precompress merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The folder the shards ran on, with every shard's variants and partial manifest back in it.
    pub dir: PathBuf,

    /// The manifest to write [default: DIR/precompress-manifest.json]; the partials are beside it.
    #[arg(long, value_name = "PATH")]
    pub manifest: Option<PathBuf>,

    /// Record the merged release in this cache folder's release store, as a whole run does, for the next run's deltas [default: precompress.toml's cache-dir, else node_modules/.cache/precompress of the project above DIR].
    #[arg(
        long,
        value_name = "DIR",
        env = "PRECOMPRESS_CACHE_DIR",
        hide_env_values = true
    )]
    pub cache_dir: Option<PathBuf>,

    /// Use no cache folder, whatever --cache-dir, PRECOMPRESS_CACHE_DIR or precompress.toml say.
    #[arg(long)]
    pub no_cache: bool,
}

/// Options of `precompress report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The folder precompress ran on; nothing is written into it.
    pub dir: PathBuf,

    /// The HTML file to write (outside DIR).
    #[arg(long, value_name = "FILE", required_unless_present = "json")]
    pub out: Option<PathBuf>,

    /// The same figures as JSON on stdout (the headline, every page's visit, every earlier release), for CI: a pull-request comment, a budget.
    #[arg(long)]
    pub json: bool,

    /// The manifest [default: DIR/precompress-manifest.json].
    #[arg(long, value_name = "PATH")]
    pub manifest: Option<PathBuf>,

    /// The cache folder whose release store holds the earlier releases [default: precompress.toml's cache-dir, else node_modules/.cache/precompress of the project above DIR].
    #[arg(long, value_name = "DIR", env = "PRECOMPRESS_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Read no release store.
    #[arg(long)]
    pub no_cache: bool,

    /// An earlier release a returning visitor holds, as the run's deltas were made against it: its folder, or the live site's URL (its published list of dictionaries) [default: precompress.toml's dictionary-from]; repeat for several, newest first.
    #[arg(long, value_name = "DIR|URL")]
    pub dictionary_from: Vec<PathBuf>,

    /// Append the main chart, as a table, and where the page is to $GITHUB_STEP_SUMMARY.
    #[arg(long, requires = "out")]
    pub github: bool,
}

/// Options of `precompress tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// The build output folder whose assets are measured; nothing is written into it.
    pub dir: PathBuf,

    /// Measure on at most this much of DIR's assets: whole files, spread evenly in path order (bytes, or with a unit: 8MiB, 500KB).
    #[arg(long, value_name = "SIZE", default_value = "8MiB", value_parser = crate::cli::budget::parse_size)]
    pub sample: u64,

    /// The run's options that tune measures with (cli/options.rs's rows).
    #[command(flatten)]
    pub over: crate::cli::options::TuneOptions,

    /// Read settings from this file instead of looking for precompress.toml.
    #[arg(long, value_name = "PATH", conflicts_with = "no_config")]
    pub config: Option<PathBuf>,

    /// Do not look for precompress.toml.
    #[arg(long)]
    pub no_config: bool,

    /// Print the measurements and recommendations as JSON on stdout.
    #[arg(long)]
    pub json: bool,
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

    /// An earlier release's build folder, or the URL its live site serves DIR at: deltas whose dictionary it holds are decoded and compared too (repeatable) [default: precompress.toml's dictionary-from].
    #[arg(long, value_name = "PREV", conflicts_with = "url")]
    pub dictionary_from: Vec<PathBuf>,

    /// The run's cache folder: deltas whose dictionary its release store holds are decoded and compared too [default: precompress.toml's cache-dir, else node_modules/.cache/precompress of the project above DIR].
    #[arg(
        long,
        value_name = "DIR",
        env = "PRECOMPRESS_CACHE_DIR",
        hide_env_values = true
    )]
    pub cache_dir: Option<PathBuf>,

    /// Use no cache folder, whatever --cache-dir, PRECOMPRESS_CACHE_DIR or precompress.toml say.
    #[arg(long)]
    pub no_cache: bool,

    /// Check the live deploy instead: request every asset from URL (the origin and path DIR is served at, e.g. http://127.0.0.1:8080/) as a browser would, and check bodies, codings, headers and deltas.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,

    /// With --url: requests per second.
    #[arg(long, value_name = "N", default_value_t = 20, requires = "url", value_parser = clap::value_parser!(u32).range(1..))]
    pub rate: u32,

    /// With --url: at most this many requests; assets past it are not checked, which fails the check.
    #[arg(long, value_name = "N", default_value_t = 2000, requires = "url", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_requests: u64,

    /// With --url: a field to send with every request, as `NAME: VALUE` (a preview deploy's bypass token, e.g. x-vercel-protection-bypass); repeatable; its value is never printed.
    #[arg(
        long = "header",
        short = 'H',
        value_name = "NAME: VALUE",
        requires = "url"
    )]
    pub headers: Vec<String>,

    /// With --url: the whole check's time, in seconds, 1-86400 (each request also has 10 s).
    #[arg(long, value_name = "SECS", default_value_t = 120, requires = "url", value_parser = clap::value_parser!(u64).range(precompressor::config::limits::CHECK_TIMEOUT_SECS))]
    pub timeout: u64,
}

/// `IP:PORT`, `localhost:PORT` (127.0.0.1) or a bare `PORT` (127.0.0.1).
fn parse_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    let s = s.trim();
    let loopback = |port: &str| {
        port.parse::<u16>()
            .map(|p| std::net::SocketAddr::from(([127, 0, 0, 1], p)))
            .map_err(|_| format!("invalid port {port:?}"))
    };
    if let Some(port) = s.strip_prefix("localhost:") {
        return loopback(port);
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return loopback(s);
    }
    s.parse().map_err(|_| {
        format!(
            "invalid address {s:?} (expected 127.0.0.1:8080, localhost:8080, [::1]:8080 or 8080)"
        )
    })
}

/// `--base`: a `/`-anchored path, normalized to end in `/`.
pub fn parse_base(s: &str) -> Result<String, String> {
    precompressor::model::path::normalize_base(s)
}

/// Plain words for the two clap errors a new user meets: a mistyped
/// subcommand (`precompress chek dist`) and a second folder, usually an
/// unquoted glob the shell expanded (`--include *.js`). clap words both as
/// "the subcommand 'X' cannot be used with '<DIR>'".
pub fn explain(e: &clap::Error, args: &[String]) -> Option<String> {
    if e.kind() != clap::error::ErrorKind::ArgumentConflict
        || !e.to_string().contains("the subcommand")
    {
        return None;
    }
    let words: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let first = *words.first()?;
    let names = [
        "check",
        "serve",
        "nginx-map",
        "caddy-map",
        "apache-map",
        "objects",
        "merge",
        "tune",
        "completions",
    ];
    let close = names.iter().find(|n| edit_distance(first, n) <= 2);
    if let (Some(name), false) = (close, std::path::Path::new(first).exists()) {
        return Some(format!(
            "'{first}' is neither a subcommand nor a folder; did you mean '{name}'?"
        ));
    }
    // clap names the extra word as "the subcommand 'b.js'".
    let text = e.to_string();
    let extra = text
        .split("the subcommand '")
        .nth(1)
        .and_then(|r| r.split('\'').next())
        .unwrap_or("?");
    Some(format!(
        "an extra argument '{extra}': precompress takes one folder. If a glob was meant \
         (--include *.js), quote it (--include '*.js') so the shell does not expand it into \
         file names."
    ))
}

/// Levenshtein distance, for "did you mean".
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
