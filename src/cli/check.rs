//! `precompress check DIR`: DIR against its manifest, or with `--url` the
//! live origin against it; what the library finds, rendered, and the exit code.

use std::io::Write;

use crate::cli::args::CheckArgs;
use crate::cli::{exit, failed};

pub fn check(args: CheckArgs) -> u8 {
    if !args.dir.is_dir() {
        eprintln!("precompress: error: {}: not a folder", args.dir.display());
        return exit::USAGE;
    }
    // What the run used: the flags, else precompress.toml's, else the defaults.
    let file = match crate::cli::configfile::for_check(&args.dir) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("precompress: error: {e}");
            return exit::USAGE;
        }
    };
    let manifest = args
        .manifest
        .clone()
        .or(file.manifest)
        .unwrap_or_else(|| precompressor::model::manifest::default_path(&args.dir));
    if let Some(url) = &args.url {
        return check_url(url, &manifest, &args);
    }
    let given = if args.dictionary_from.is_empty() {
        file.dictionary_from
    } else {
        args.dictionary_from.clone()
    };
    let (mut folders, live) = crate::cli::live::take_sites(&given, &args.dir, args.json);
    folders.extend(live.folders.iter().cloned());
    let cache = args.cache_dir.clone().or(file.cache_dir);
    let options = precompressor::check::Options {
        dictionary_from: folders,
        cache_dir: crate::cli::configfile::cache_dir(cache, args.no_cache, &args.dir),
    };
    if let Err(e) = options.validate(&args.dir) {
        return failed(&e);
    }
    let report = precompressor::check::check_with(&args.dir, &manifest, &options);
    if args.json {
        let _ = std::io::stdout().write_all(
            (serde_json::to_string_pretty(&report).expect("plain data") + "\n").as_bytes(),
        );
    } else {
        for p in &report.problems {
            eprintln!(
                "precompress: check: {}: {}: {}",
                p.path, p.problem, p.detail
            );
        }
        if report.ok {
            println!(
                "precompress: check: ok, {} files and {} variants verified",
                report.files, report.variants
            );
            if report.deltas > 0 {
                println!(
                    "precompress: check: {} deltas verified, {} of them decoded with their dictionary{}",
                    report.deltas,
                    report.deltas_decoded,
                    if report.deltas_decoded < report.deltas {
                        " (give the earlier releases with --dictionary-from to decode the rest)"
                    } else {
                        ""
                    }
                );
            }
        } else {
            eprintln!(
                "precompress: check: {}",
                precompressor::report::plural(report.problems.len() as u64, "problem", "problems")
            );
        }
    }
    if report.ok {
        exit::SUCCESS
    } else {
        exit::FAILURE
    }
}

/// `precompress check --url URL DIR`: the live origin against DIR's
/// manifest. The report is the output, so all of it goes to stdout: the
/// summary, a line per problem, what was sent, and notes.
fn check_url(url: &str, manifest: &std::path::Path, args: &CheckArgs) -> u8 {
    use precompressor::probe;
    let headers = match args
        .headers
        .iter()
        .map(|h| probe::parse_header(h))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(h) => h,
        Err(e) => {
            eprintln!("precompress: check --url: error: {e}");
            return exit::USAGE;
        }
    };
    // The report's headline visit, to say what it downloaded from the origin.
    let visit = precompressor::model::manifest::Manifest::read(manifest)
        .ok()
        .and_then(|m| precompressor::view::landing_loads(&args.dir, &m));
    let opts = probe::Options {
        rate: args.rate,
        max_requests: args.max_requests,
        timeout: std::time::Duration::from_secs(args.timeout),
        headers,
        visit,
    };
    let report = match probe::probe(manifest, url, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("precompress: check --url: error: {e}");
            return exit::FAILURE;
        }
    };
    let out = if args.json {
        serde_json::to_string_pretty(&report).expect("plain data") + "\n"
    } else {
        probe_text(&report)
    };
    let _ = std::io::stdout().write_all(out.as_bytes());
    if report.ok {
        exit::SUCCESS
    } else {
        exit::FAILURE
    }
}

/// The ten-second reading of a live check.
fn probe_text(r: &precompressor::probe::Report) -> String {
    use precompressor::report::plural;
    let with_problems = r.checked - r.ok_assets;
    let mut out = format!(
        "precompress: check --url {}: {}, {}: {} ok, {} with problems{}\n",
        r.url,
        plural(r.assets, "asset", "assets"),
        plural(r.requests, "request", "requests"),
        r.ok_assets,
        with_problems,
        if r.checked < r.assets {
            format!(", {} not checked", r.assets - r.checked)
        } else {
            String::new()
        }
    );
    for p in &r.problems {
        let at = if p.url.is_empty() { &p.path } else { &p.url };
        out.push_str(&format!("  {at}: {}: {}\n", p.problem, p.detail));
    }
    // Apart, and fewer: the host's own compression fails nothing.
    const HOST_LINES: usize = 10;
    if !r.host.is_empty() {
        out.push_str(&format!(
            "precompress: check --url: compressed by the host itself, not failing the check ({}):\n",
            r.host.len()
        ));
        for p in r.host.iter().take(HOST_LINES) {
            out.push_str(&format!("  {}: {}: {}\n", p.url, p.problem, p.detail));
        }
        if r.host.len() > HOST_LINES {
            out.push_str(&format!(
                "  ... and {} more (--json lists them all)\n",
                r.host.len() - HOST_LINES
            ));
        }
    }
    let s = &r.sent;
    let mut codings = format!(
        "{} br, {} zstd, {} gzip, {} identity",
        s.br, s.zstd, s.gzip, s.identity
    );
    if s.other > 0 {
        codings.push_str(&format!(", {} other", s.other));
    }
    let deltas = if s.delta_requests == 0 {
        "no request with a dictionary".to_string()
    } else {
        format!(
            "{} of {} with a dictionary got a delta ({} dcb, {} dcz)",
            s.dcb + s.dcz,
            plural(s.delta_requests, "request", "requests"),
            s.dcb,
            s.dcz
        )
    };
    out.push_str(&format!(
        "precompress: check --url: sent {codings}; {deltas}\n"
    ));
    if let Some(v) = &r.first_visit {
        out.push_str(&format!(
            "precompress: check --url: a first visit of {} downloaded {} ({} B) from the origin, its {}; precompress wrote {} ({} B) for them (the report's headline, less the dictionaries fetched at idle){}\n",
            v.page,
            precompressor::report::human(v.served),
            v.served,
            plural(v.files, "file", "files"),
            precompressor::report::human(v.written),
            v.written,
            if v.served > v.written {
                format!(": {} B more, sent otherwise than written", v.served - v.written)
            } else {
                String::new()
            }
        ));
    }
    for n in &r.notes {
        out.push_str(&format!("precompress: check --url: note: {n}\n"));
    }
    out
}
