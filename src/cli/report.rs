//! `precompress report DIR --out FILE.html`: the library's report page
//! (`precompressor::view`) written where asked, never into DIR, and with
//! `--github` its main chart as a table in the job summary.

use std::io::Write;

use crate::cli::args::ReportArgs;
use crate::cli::github;

/// Why the command failed: a usage error (bad DIR or --out) or not, and
/// the message, which names the path.
pub type Failure = (bool, String);

/// An earlier release named by `--dictionary-from`, as a returning visitor
/// of it holds its dictionaries: the live site's published list, or a
/// folder's (its list, else its manifest's marked files); why not, as a
/// warning naming it (`view::folder_release` reads a folder).
fn earlier_release(
    source: &std::path::Path,
) -> Result<precompressor::view::figures::Earlier, String> {
    if crate::cli::live::is_site(source) {
        let url = source.to_string_lossy();
        let list = precompressor::probe::previous::list(&url, std::time::Duration::from_secs(60))?;
        let label = format!(
            "the live site ({})",
            precompressor::probe::redact_userinfo(&url)
        );
        return Ok(precompressor::view::published(&label, &list));
    }
    precompressor::view::folder_release(source)
}

/// Runs the command.
pub fn report(args: ReportArgs) -> Result<(), Failure> {
    let fail = |usage: bool, msg: String| Err((usage, msg));
    if !args.dir.is_dir() {
        return fail(true, format!("{}: not a folder", args.dir.display()));
    }
    if let Some(out) = &args.out {
        if let Err(e) = precompressor::view::check_out(&args.dir, out) {
            return fail(true, e.to_string());
        }
    }
    let cache = match crate::cli::configfile::cache_dir_of(&args.dir, args.cache_dir, args.no_cache)
    {
        Ok(c) => c,
        Err(e) => return fail(true, e.to_string()),
    };
    let sources = if args.dictionary_from.is_empty() {
        match crate::cli::configfile::for_check(&args.dir) {
            Ok(c) => c.dictionary_from,
            Err(e) => return fail(true, e.to_string()),
        }
    } else {
        args.dictionary_from.clone()
    };
    let mut warnings = Vec::new();
    let given = sources
        .iter()
        .filter_map(|s| match earlier_release(s) {
            Ok(e) => Some(e),
            Err(w) => {
                warnings.push(w);
                None
            }
        })
        .collect();
    let options = precompressor::view::Options {
        manifest: args.manifest,
        cache_dir: cache,
        given,
    };
    let (figures, more) = match precompressor::view::gather(&args.dir, &options) {
        Ok(f) => f,
        Err(e) => return fail(false, e.to_string()),
    };
    warnings.extend(more);
    for w in &warnings {
        let _ = writeln!(std::io::stderr(), "precompress: warning: {w}");
    }
    if args.json {
        let json = serde_json::to_string_pretty(&figures).expect("plain data");
        println!("{json}");
    }
    let Some(out) = &args.out else {
        return Ok(());
    };
    let page = precompressor::view::html::render(&figures);
    if let Err(e) = precompressor::view::write_report(out, &page) {
        return fail(false, format!("{}: cannot write: {e}", out.display()));
    }
    if !args.json {
        println!(
            "precompress: report: {} ({} pages, {} earlier releases compared)",
            out.display(),
            figures.pages.len(),
            figures.earlier.len()
        );
    }
    if args.github {
        if let Some(summary) = github::Runner::from_env().step_summary {
            let text = github::report_summary(&figures, out);
            if let Err(e) = github::append(&summary, &text) {
                return fail(false, format!("{}: {e}", summary.display()));
            }
        }
    }
    Ok(())
}
