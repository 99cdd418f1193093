//! The `precompress` binary: parse arguments, call the library, map the outcome
//! to an exit code. All the work is in the library.

#[macro_use]
mod cli;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use cli::args::{Cli, Command};
use cli::options::RunArgs;
use cli::{exit, exit_code, failed};
use precompressor::Progress;

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
        None => compress(cli.run),
        Some(Command::Completions { shell }) => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "precompress",
                &mut std::io::stdout(),
            );
            exit::SUCCESS
        }
        Some(Command::Check(args)) => cli::check::check(args),
        Some(Command::Merge(args)) => merge(args),
        Some(Command::Tune(args)) => tune(args),
        Some(Command::Serve(args)) => cli::servers::serve(args),
        Some(Command::NginxMap(args)) => cli::servers::server_map(
            "nginx-map",
            &args.site.dir,
            args.site.manifest.as_deref(),
            args.site.base.as_deref(),
            |i| {
                let m = precompressor::deploy::nginx::render(i);
                (m.config, m.skipped)
            },
        ),
        Some(Command::CaddyMap(args)) => cli::servers::server_map(
            "caddy-map",
            &args.site.dir,
            args.site.manifest.as_deref(),
            args.site.base.as_deref(),
            |i| {
                let m = precompressor::deploy::caddy::render(i);
                (m.config, m.skipped)
            },
        ),
        Some(Command::ApacheMap(args)) => cli::servers::server_map(
            "apache-map",
            &args.site.dir,
            args.site.manifest.as_deref(),
            args.site.base.as_deref(),
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
        Some(Command::Objects(args)) => cli::servers::objects(args),
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

fn compress(mut args: RunArgs) -> u8 {
    let settings = match cli::configfile::resolve(&mut args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("precompress: error: {e}");
            if args.settings.switch("github") {
                let _ = std::io::stdout().write_all(cli::github::fatal(&e.to_string()).as_bytes());
            }
            return exit::USAGE;
        }
    };
    let dir = args.dir.clone().unwrap_or_default();
    let quiet = args.settings.switch("quiet");
    let json = args.settings.switch("json");
    let github = args.settings.switch("github");
    let (folders, live) =
        cli::live::take_sites(&args.settings.paths("dictionary-from"), &dir, quiet);
    args.settings
        .put("dictionary-from", cli::options::Value::Paths(folders));
    let mut cfg = args.to_config();
    cfg.live_releases = live.folders.clone();
    // NO_COLOR (https://no-color.org) and TERM=dumb: no escape sequences at all.
    let plain = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
        || std::env::var_os("TERM").is_some_and(|t| t == "dumb");
    let show_bar = !quiet && !json && !plain && std::io::stderr().is_terminal();
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
            if github {
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
    let out = if json {
        serde_json::to_string_pretty(&report).expect("report is plain data") + "\n"
    } else if quiet {
        String::new()
    } else {
        cli::render::run_summary(&report) + &visit_line(&cfg, &report)
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

/// The report's headline visit for what the run wrote, measured as `report`
/// measures it (`view::headline`, `view::gather`'s from the landing page
/// alone: this release against the store's and the folders' earlier ones); nothing for a dry run, a shard's part, a failed
/// run or a release without a page.
fn visit_line(cfg: &precompressor::Config, report: &precompressor::Report) -> String {
    if cfg.dry_run || cfg.shard.is_some() || !report.ok() {
        return String::new();
    }
    let options = precompressor::view::Options {
        manifest: cfg.manifest.clone(),
        cache_dir: cfg.cache_dir.clone(),
        given: cfg
            .dictionary_from
            .iter()
            .filter_map(|d| precompressor::view::folder_release(d).ok())
            .collect(),
    };
    precompressor::view::headline(&cfg.root, &options)
        .ok()
        .flatten()
        .map_or(String::new(), |h| cli::render::visit_line(&h))
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
    if !args.settings.switch("verbose")
        && !args.settings.switch("github")
        && settings.budgets.is_empty()
    {
        return true;
    }
    let assets = if cfg.dry_run {
        let on_disk = precompressor::Manifest::read(&report.manifest).ok();
        budget::sizes_from_jobs(on_disk.as_ref(), &report.jobs)
    } else {
        // What the run wrote (a shard's partial holds it too), from memory.
        budget::sizes_from_manifest(&report.written)
    };
    if args.settings.switch("verbose") {
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
    if args.settings.switch("github") {
        let runner = github::Runner::from_env();
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
        for (path, text) in [(&runner.step_summary, md), (&runner.output, outputs)] {
            if let Some(p) = path {
                if let Err(e) = github::append(p, &text) {
                    eprintln!("precompress: warning: {}: cannot append: {e}", p.display());
                }
            }
        }
        let mut notes = github::annotations(
            report,
            &checked.violations,
            dir,
            runner.workspace.as_deref(),
        );
        for w in &report.run.warnings {
            notes.push_str(&github::warning(w));
        }
        for g in &checked.unmatched {
            notes.push_str(&github::warning(&format!("budget {g:?} matches no asset")));
        }
        // The runner reads workflow commands on both streams; keep --json's stdout JSON.
        let _ = if args.settings.switch("json") {
            std::io::stderr().write_all(notes.as_bytes())
        } else {
            std::io::stdout().write_all(notes.as_bytes())
        };
    }
    checked.violations.is_empty()
}
