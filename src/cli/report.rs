//! `precompress report DIR --out FILE.html`: the library's report page
//! (`precompressor::view`) written where asked, never into DIR, and with
//! `--github` its main chart as a table in the job summary.

use std::io::Write;

use crate::cli::args::ReportArgs;
use crate::cli::github;

/// Why the command failed: a usage error (bad DIR or --out) or not, and
/// the message, which names the path.
pub type Failure = (bool, String);

/// Runs the command.
pub fn report(args: ReportArgs) -> Result<(), Failure> {
    let fail = |usage: bool, msg: String| Err((usage, msg));
    if !args.dir.is_dir() {
        return fail(true, format!("{}: not a folder", args.dir.display()));
    }
    if let Err(e) = precompressor::view::check_out(&args.dir, &args.out) {
        return fail(true, e.to_string());
    }
    let cache = match crate::cli::configfile::cache_dir_of(&args.dir, args.cache_dir, args.no_cache)
    {
        Ok(c) => c,
        Err(e) => return fail(true, e.to_string()),
    };
    let options = precompressor::view::Options {
        manifest: args.manifest,
        cache_dir: cache,
    };
    let (figures, warnings) = match precompressor::view::gather(&args.dir, &options) {
        Ok(f) => f,
        Err(e) => return fail(false, e.to_string()),
    };
    for w in &warnings {
        let _ = writeln!(std::io::stderr(), "precompress: warning: {w}");
    }
    let page = precompressor::view::html::render(&figures);
    if let Err(e) = precompressor::view::write_report(&args.out, &page) {
        return fail(false, format!("{}: cannot write: {e}", args.out.display()));
    }
    println!(
        "precompress: report: {} ({} pages, {} earlier releases compared)",
        args.out.display(),
        figures.pages.len(),
        figures.earlier.len()
    );
    if args.github {
        if let Some(summary) = github::Runner::from_env().step_summary {
            let text = github::report_summary(&figures, &args.out);
            if let Err(e) = github::append(&summary, &text) {
                return fail(false, format!("{}: {e}", summary.display()));
            }
        }
    }
    Ok(())
}
