//! The `precompress` binary: parse arguments, call the library, map the outcome
//! to an exit code. All the work is in the library.

mod cli;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use cli::args::{CheckArgs, Cli, Command, RunArgs};
use precompressor::{Error, Progress};

/// `eprintln!` as one write per line: std's stderr is unbuffered and writes a
/// formatted line piece by piece, so a reader of both streams on one pipe (the
/// Vite plugin, CI logs) could see stdout land inside a stderr line.
macro_rules! eprintln {
    ($($t:tt)*) => {{
        let line = format!("{}\n", format_args!($($t)*));
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }};
}

/// Exit codes, in one place: documented in `--help` and docs/config.md.
mod exit {
    pub const SUCCESS: u8 = 0;
    pub const FAILURE: u8 = 1;
    pub const USAGE: u8 = 2;
}

struct Bar(indicatif::ProgressBar);

impl Progress for Bar {
    fn waiting_for_lock(&self, lock: &std::path::Path) {
        self.0.suspend(|| {
            eprintln!(
                "precompress: another run holds {}; waiting for it to finish",
                lock.display()
            )
        });
    }
    fn start(&self, jobs: u64) {
        self.0.set_length(jobs);
    }
    fn job_done(&self) {
        self.0.inc(1);
    }
}

fn main() -> ExitCode {
    let matches = match Cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let args: Vec<String> = std::env::args().skip(1).collect();
            match cli::args::explain(&e, &args) {
                Some(msg) => {
                    eprintln!("precompress: error: {msg}\n\nFor more information, try '--help'.");
                    return ExitCode::from(exit::USAGE);
                }
                None => e.exit(),
            }
        }
    };
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let code = match cli.command {
        None => compress(cli.run, &matches),
        Some(Command::Completions { shell }) => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "precompress",
                &mut std::io::stdout(),
            );
            exit::SUCCESS
        }
        Some(Command::Check(args)) => check(args),
        Some(Command::Merge(args)) => merge(args),
        Some(Command::Tune(args)) => tune(args),
        Some(Command::Serve(args)) => serve(args),
        Some(Command::NginxMap(args)) => server_map(
            "nginx-map",
            &args.dir,
            args.manifest.as_deref(),
            args.base.as_deref(),
            |i| {
                let m = precompressor::deploy::nginx::render(i);
                (m.config, m.skipped)
            },
        ),
        Some(Command::CaddyMap(args)) => server_map(
            "caddy-map",
            &args.dir,
            args.manifest.as_deref(),
            args.base.as_deref(),
            |i| {
                let m = precompressor::deploy::caddy::render(i);
                (m.config, m.skipped)
            },
        ),
        Some(Command::ApacheMap(args)) => server_map(
            "apache-map",
            &args.dir,
            args.manifest.as_deref(),
            args.base.as_deref(),
            |i| {
                use precompressor::deploy::apache::{render_in, Context};
                let context = if args.htaccess {
                    Context::Htaccess
                } else {
                    Context::Server
                };
                let m = render_in(i, context);
                for n in &m.notes {
                    eprintln!("precompress: warning: apache-map: {n}");
                }
                (m.config, m.skipped)
            },
        ),
        Some(Command::Objects(args)) => objects(args),
        Some(Command::Report(args)) => report(args),
    };
    ExitCode::from(code)
}

/// `precompress tune DIR`: every level measured on a sample of DIR's assets,
/// the table (or JSON) on stdout; writes nothing into DIR.
fn tune(args: cli::args::TuneArgs) -> u8 {
    use precompressor::tune;
    let measured = cli::configfile::for_tune(&args).and_then(|(cfg, file)| {
        let sample = tune::prepare(&cfg, args.sample)?;
        if !args.json {
            eprintln!(
                "precompress: tune: measuring {} on {} ...",
                cfg.codecs
                    .iter()
                    .map(|c| c.token())
                    .collect::<Vec<_>>()
                    .join(", "),
                sample.summary.describe()
            );
        }
        let mut t = tune::measure(&cfg, &sample)?;
        t.config_file = file;
        Ok(t)
    });
    match measured {
        Ok(t) => {
            for w in &t.warnings {
                eprintln!("precompress: warning: {w}");
            }
            let out = if args.json {
                serde_json::to_string_pretty(&t).expect("plain data") + "\n"
            } else {
                cli::render::tune_table(&t)
            };
            let _ = std::io::stdout().write_all(out.as_bytes());
            exit::SUCCESS
        }
        Err(e) => failed(&e),
    }
}

fn serve(args: cli::args::ServeArgs) -> u8 {
    use precompressor::serve::http::{run, ServeError, ServeOptions};
    let opts = ServeOptions {
        root: args.dir,
        manifest: args.manifest,
        addr: args.addr,
        base: args.base,
        spa: args.spa,
    };
    match run(&opts) {
        Ok(()) => exit::SUCCESS,
        Err(e) => {
            eprintln!("precompress: error: {e}");
            match e {
                ServeError::Root { .. } => exit::USAGE,
                _ => exit::FAILURE,
            }
        }
    }
}

/// `precompress objects DIR`: DIR as bucket objects with their headers, or
/// the CloudFront Functions in front of them, on stdout; what is left out on
/// stderr.
fn objects(args: cli::args::ObjectsArgs) -> u8 {
    use cli::args::{EdgeFunction, ObjectsFormat};
    use precompressor::deploy::{cloudfront, objects};
    if !args.dir.is_dir() {
        eprintln!("precompress: error: {}: not a folder", args.dir.display());
        return exit::USAGE;
    }
    if let Some(EdgeFunction::CloudfrontResponse) = args.edge {
        let _ = std::io::stdout().write_all(cloudfront::viewer_response().as_bytes());
        return exit::SUCCESS;
    }
    // `load`, as `serve` does: a source rebuilt since the run is a plain file.
    let mut index = match precompressor::serve::Index::load(&args.dir, args.manifest.as_deref()) {
        Ok(i) => i,
        Err(e) => return failed(&e),
    };
    if let Some(b) = args.base.as_deref() {
        if let Some(w) = precompressor::serve::base_mismatch(&index, b) {
            eprintln!("precompress: warning: objects: {w}");
        }
        index.set_base(b);
    }
    let manifest = args
        .manifest
        .clone()
        .unwrap_or_else(|| precompressor::model::manifest::default_path(&args.dir));
    // The manifest's key, when it lies in DIR: never uploaded, never served.
    let inside = std::fs::canonicalize(&manifest)
        .ok()
        .zip(std::fs::canonicalize(&args.dir).ok())
        .and_then(|(m, d)| {
            m.strip_prefix(d)
                .ok()
                .and_then(|r| r.to_str())
                .map(|r| r.replace('\\', "/"))
        });
    let scan = match objects::scan(&args.dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("precompress: error: {e}");
            return exit::FAILURE;
        }
    };
    let listing = objects::plan(&index, &scan, inside.as_deref());
    for s in &listing.skipped {
        eprintln!("precompress: warning: objects: skipped {s}");
    }
    let out = match (args.edge, args.format) {
        (Some(_), _) => match cloudfront::viewer_request(&listing, &args.dir) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("precompress: error: {e}");
                return exit::FAILURE;
            }
        },
        (None, ObjectsFormat::Json) => objects::json_lines(&listing.objects),
        (None, ObjectsFormat::Tsv) => objects::tsv(&listing.objects),
        (None, format) => {
            let Some(dir) = args.dir.to_str() else {
                eprintln!(
                    "precompress: error: {}: not UTF-8, so the upload commands cannot name it",
                    args.dir.display()
                );
                return exit::USAGE;
            };
            if matches!(format, ObjectsFormat::Aws) {
                objects::aws(&listing.objects, dir)
            } else {
                objects::rclone(&listing.objects, dir)
            }
        }
    };
    let _ = std::io::stdout().write_all(out.as_bytes());
    exit::SUCCESS
}

/// `precompress nginx-map`, `caddy-map` and `apache-map`: the configuration `render` makes
/// from DIR's manifest on stdout, what it left out on stderr.
fn server_map(
    name: &str,
    dir: &std::path::Path,
    manifest: Option<&std::path::Path>,
    base: Option<&str>,
    render: impl Fn(&precompressor::serve::Index) -> (String, Vec<String>),
) -> u8 {
    if !dir.is_dir() {
        eprintln!("precompress: error: {}: not a folder", dir.display());
        return exit::USAGE;
    }
    // `load`, as `serve` does: a source rebuilt since the run gets no deltas.
    let mut index = match precompressor::serve::Index::load(dir, manifest) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("precompress: error: {e}");
            return exit::FAILURE;
        }
    };
    if let Some(b) = base {
        if let Some(w) = precompressor::serve::base_mismatch(&index, b) {
            eprintln!("precompress: warning: {name}: {w}");
        }
        index.set_base(b);
    }
    let (config, skipped) = render(&index);
    for s in &skipped {
        eprintln!("precompress: warning: {name}: skipped {s}");
    }
    let _ = std::io::stdout().write_all(config.as_bytes());
    exit::SUCCESS
}

/// The exit code of an error that stopped a command: 2 for a usage error
/// (bad settings, DIR missing), else 1.
fn exit_code(e: &Error) -> u8 {
    match e {
        Error::Config(_) => exit::USAGE,
        _ => exit::FAILURE,
    }
}

/// `precompress report DIR --out FILE.html`.
fn report(args: cli::args::ReportArgs) -> u8 {
    match cli::report::report(args) {
        Ok(()) => exit::SUCCESS,
        Err((usage, msg)) => {
            eprintln!("precompress: error: {msg}");
            if usage {
                exit::USAGE
            } else {
                exit::FAILURE
            }
        }
    }
}

/// Prints `e` and returns its exit code.
fn failed(e: &Error) -> u8 {
    eprintln!("precompress: error: {e}");
    exit_code(e)
}

/// `precompress merge DIR`: the shards' partial manifests into one.
fn merge(args: cli::args::MergeArgs) -> u8 {
    let manifest = args
        .manifest
        .unwrap_or_else(|| precompressor::model::manifest::default_path(&args.dir));
    // The release goes to the cache a run of DIR would use.
    let cache = cli::configfile::cache_dir_of(&args.dir, args.cache_dir, args.no_cache);
    match cache.and_then(|c| precompressor::shard::merge_with(&args.dir, &manifest, c.as_deref())) {
        Ok(m) => {
            println!(
                "merged {} shards: {} assets, {} variants, {} deltas -> {}",
                m.shards,
                m.assets,
                m.variants,
                m.deltas,
                m.manifest.display()
            );
            for r in &m.removed {
                eprintln!(
                    "precompress: removed {r} (a delta not smaller than another shard's variant)"
                );
            }
            for w in &m.warnings {
                eprintln!("precompress: warning: {w}");
            }
            exit::SUCCESS
        }
        Err(e) => failed(&e),
    }
}

fn check(args: CheckArgs) -> u8 {
    if !args.dir.is_dir() {
        eprintln!("precompress: error: {}: not a folder", args.dir.display());
        return exit::USAGE;
    }
    // What the run used: the flags, else precompress.toml's, else the defaults.
    let file = match cli::configfile::for_check(&args.dir) {
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
    let (mut folders, live) = cli::live::take_sites(&given, &args.dir, args.json);
    folders.extend(live.folders.iter().cloned());
    let cache = args.cache_dir.clone().or(file.cache_dir);
    let options = precompressor::check::Options {
        dictionary_from: folders,
        cache_dir: cli::configfile::cache_dir(cache, args.no_cache, &args.dir),
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
    let opts = probe::Options {
        rate: args.rate,
        max_requests: args.max_requests,
        timeout: std::time::Duration::from_secs(args.timeout),
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
    for n in &r.notes {
        out.push_str(&format!("precompress: check --url: note: {n}\n"));
    }
    out
}

fn compress(mut args: RunArgs, matches: &clap::ArgMatches) -> u8 {
    let settings = match cli::configfile::resolve(&mut args, matches) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("precompress: error: {e}");
            if args.github {
                let _ = std::io::stdout().write_all(cli::github::fatal(&e.to_string()).as_bytes());
            }
            return exit::USAGE;
        }
    };
    let dir = args.dir.clone().unwrap_or_default();
    let (folders, live) = cli::live::take_sites(&args.dictionary_from, &dir, args.quiet);
    args.dictionary_from = folders;
    let mut cfg = args.to_config();
    cfg.live_releases = live.folders.clone();
    // NO_COLOR (https://no-color.org) and TERM=dumb: no escape sequences at all.
    let plain = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
        || std::env::var_os("TERM").is_some_and(|t| t == "dumb");
    let show_bar = !args.quiet && !args.json && !plain && std::io::stderr().is_terminal();
    let bar = indicatif::ProgressBar::new(0);
    if show_bar {
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                // No ETA: jobs differ in cost by orders of magnitude, so a
                // count-based estimate was wrong (10 min shown on a 9 s run).
                "{bar:40} {pos}/{len} jobs {elapsed_precise}",
            )
            .expect("static template"),
        );
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let report = match precompressor::run(&cfg, &Bar(bar.clone())) {
        Ok(r) => r,
        Err(e) => {
            bar.finish_and_clear();
            eprintln!("precompress: error: {e}");
            if args.github {
                let _ = std::io::stdout().write_all(cli::github::fatal(&e.to_string()).as_bytes());
            }
            return exit_code(&e);
        }
    };
    bar.finish_and_clear();
    for w in &report.run.warnings {
        eprintln!("precompress: warning: {w}");
    }
    for e in &report.errors {
        eprintln!("precompress: error: {}", e.message);
    }
    let out = if args.json {
        serde_json::to_string_pretty(&report).expect("report is plain data") + "\n"
    } else if args.quiet {
        String::new()
    } else {
        cli::render::run_summary(&report)
    };
    let within_budget = after_run(&args, &cfg, &report, &settings);
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = std::io::stdout().write_all(out.as_bytes());
    if report.ok() && within_budget {
        exit::SUCCESS
    } else {
        exit::FAILURE
    }
}

/// Verbose lines, budgets and `--github`, from the manifest the run wrote (or,
/// in a dry run, the sizes it computed). Returns false when a budget is exceeded.
fn after_run(
    args: &RunArgs,
    cfg: &precompressor::Config,
    report: &precompressor::Report,
    settings: &cli::configfile::Resolved,
) -> bool {
    use cli::{budget, github};
    if !args.verbose && !args.github && settings.budgets.is_empty() {
        return true;
    }
    let assets = if cfg.dry_run {
        let on_disk = precompressor::Manifest::read(&report.manifest).ok();
        budget::sizes_from_jobs(on_disk.as_ref(), &report.jobs)
    } else {
        // What the run wrote (a shard's partial holds it too), from memory.
        budget::sizes_from_manifest(&report.written)
    };
    if args.verbose {
        if let Some(f) = &settings.file {
            eprintln!("precompress: config: {}", f.display());
        }
        if let Some(c) = &cfg.cache_dir {
            eprintln!("precompress: cache: {}", c.display());
        }
        for a in &assets {
            eprintln!(
                "  {}  {} -> {}",
                a.path,
                precompressor::report::human(a.size),
                a.label_with_reason()
            );
        }
    }
    let checked = budget::check(&settings.budgets, &assets);
    for g in &checked.unmatched {
        eprintln!("precompress: warning: budget {g:?} matches no asset");
    }
    for v in &checked.violations {
        eprintln!("precompress: over budget: {v}");
    }
    if args.github {
        let env = github::Env::from_env();
        let dir = cfg.root.as_path();
        let title = dir.to_string_lossy();
        let md = github::render_summary(
            &title,
            report,
            &assets,
            &checked.violations,
            settings.budgets.len(),
            cfg.dry_run,
        );
        let outputs = github::format_outputs(&github::outputs(report, &checked.violations));
        for (path, text) in [(&env.step_summary, md), (&env.output, outputs)] {
            if let Some(p) = path {
                if let Err(e) = github::append(p, &text) {
                    eprintln!("precompress: warning: {}: cannot append: {e}", p.display());
                }
            }
        }
        let mut notes =
            github::annotations(report, &checked.violations, dir, env.workspace.as_deref());
        for w in &report.run.warnings {
            notes.push_str(&github::warning(w));
        }
        for g in &checked.unmatched {
            notes.push_str(&github::warning(&format!("budget {g:?} matches no asset")));
        }
        // The runner reads workflow commands on both streams; keep --json's stdout JSON.
        let _ = if args.json {
            std::io::stderr().write_all(notes.as_bytes())
        } else {
            std::io::stdout().write_all(notes.as_bytes())
        };
    }
    checked.violations.is_empty()
}
