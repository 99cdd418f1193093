//! The `precompress` binary: parse arguments, call the library, map the outcome
//! to an exit code. All the work is in the library.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use precompress::cli::{CheckArgs, Cli, Command, RunArgs};
use precompress::{Error, Progress};

/// Exit codes, in one place: documented in `--help` and the README.
mod exit {
    pub const SUCCESS: u8 = 0;
    pub const FAILURE: u8 = 1;
    pub const USAGE: u8 = 2;
}

struct Bar(indicatif::ProgressBar);

impl Progress for Bar {
    fn waiting_for_lock(&self, lock: &std::path::Path) {
        self.0.suspend(|| eprintln!("precompress: another run holds {}; waiting for it to finish", lock.display()));
    }
    fn start(&self, jobs: u64) {
        self.0.set_length(jobs);
    }
    fn job_done(&self) {
        self.0.inc(1);
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        None => compress(cli.run),
        Some(Command::Check(args)) => check(args),
    };
    ExitCode::from(code)
}

fn check(args: CheckArgs) -> u8 {
    if !args.dir.is_dir() {
        eprintln!("precompress: error: {}: not a folder", args.dir.display());
        return exit::USAGE;
    }
    let manifest = args.manifest.clone().unwrap_or_else(|| precompress::manifest::default_path(&args.dir));
    let report = precompress::check::check(&args.dir, &manifest);
    if args.json {
        let _ = std::io::stdout().write_all((serde_json::to_string_pretty(&report).expect("plain data") + "\n").as_bytes());
    } else {
        for p in &report.problems {
            eprintln!("precompress: check: {}: {}: {}", p.path, p.problem, p.detail);
        }
        if report.ok {
            println!("precompress: check: ok, {} files and {} variants verified", report.files, report.variants);
        } else {
            eprintln!("precompress: check: {} problems", report.problems.len());
        }
    }
    if report.ok {
        exit::SUCCESS
    } else {
        exit::FAILURE
    }
}

fn compress(args: RunArgs) -> u8 {
    let cfg = args.to_config();
    let show_bar = !args.quiet && !args.json && std::io::stderr().is_terminal();
    let bar = indicatif::ProgressBar::new(0);
    if show_bar {
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} jobs {elapsed_precise} (eta {eta})",
            )
            .expect("static template"),
        );
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let report = match precompress::run(&cfg, &Bar(bar.clone())) {
        Ok(r) => r,
        Err(e) => {
            bar.finish_and_clear();
            eprintln!("precompress: error: {e}");
            return match e {
                Error::Config(_) => exit::USAGE,
                _ => exit::FAILURE,
            };
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
        report.summary()
    };
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = std::io::stdout().write_all(out.as_bytes());
    if report.ok() {
        exit::SUCCESS
    } else {
        exit::FAILURE
    }
}
