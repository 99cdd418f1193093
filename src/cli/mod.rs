//! The `precompress` binary's own rooms, outside the library: argument
//! parsing (`args`; the run's options, each once, in `options`), `precompress.toml` (`configfile`), size budgets
//! (`budget`), the GitHub Actions output (`github`), the earlier releases
//! taken from live sites (`live`) what a person
//! reads (`render`) and the report page's command (`report`). They turn what a
//! person or CI typed into a library [`precompressor::Config`] and the
//! library's reports into what a person or CI reads; none of the work is here.
//! The commands beside the run: `check` (`check`, `check --url`) and
//! `servers` (`serve`, the generators for other servers, `objects`).

use precompressor::Error;

/// `eprintln!` as one write per line: std's stderr is unbuffered and writes a
/// formatted line piece by piece, so a reader of both streams on one pipe (the
/// Vite plugin, CI logs) could see stdout land inside a stderr line.
macro_rules! eprintln {
    ($($t:tt)*) => {{
        let line = format!("{}\n", format_args!($($t)*));
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
    }};
}

/// Exit codes, in one place: documented in `--help` and docs/config.md.
pub mod exit {
    pub const SUCCESS: u8 = 0;
    pub const FAILURE: u8 = 1;
    pub const USAGE: u8 = 2;
}

/// The exit code of an error that stopped a command: 2 for a usage error
/// (bad settings, DIR missing), else 1.
pub fn exit_code(e: &Error) -> u8 {
    match e {
        Error::Config(_) => exit::USAGE,
        _ => exit::FAILURE,
    }
}

/// Prints `e` and returns its exit code.
pub fn failed(e: &Error) -> u8 {
    eprintln!("precompress: error: {e}");
    exit_code(e)
}

pub mod args;
pub mod budget;
pub mod check;
pub mod configfile;
pub mod github;
pub mod live;
pub mod options;
pub mod render;
pub mod report;
pub mod servers;
