//! The CLI around a run: `--dry-run`, `precompress.toml`, budgets, `-q`/`-v`,
//! `--help`, completions, `NO_COLOR`, and the committed job-summary example.
//! Every test runs the real binary on a temp copy of the example site.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;

use common::*;
use predicates::prelude::*;

/// The example site in a temp folder that is its own project root (`.git`),
/// so no precompress.toml above it is picked up.
fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let (g, dir) = site();
    fs::create_dir(dir.parent().unwrap().join(".git")).unwrap();
    (g, dir)
}

/// Fails naming the files a run added, removed or changed. The one exception
/// is the pipeline's lock file, which every run (dry or not) takes in DIR by
/// design (tests/incremental.rs makes the same exception).
fn assert_untouched(before: &BTreeMap<String, Vec<u8>>, dir: &Path) {
    let lock = |mut t: BTreeMap<String, Vec<u8>>| {
        t.remove(".precompress.lock");
        t
    };
    let (before, after) = (lock(before.clone()), lock(snapshot(dir)));
    let added: Vec<_> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    let removed: Vec<_> = before.keys().filter(|k| !after.contains_key(*k)).collect();
    let changed: Vec<_> = before
        .iter()
        .filter(|(k, v)| after.get(*k).is_some_and(|a| a != *v))
        .map(|(k, _)| k)
        .collect();
    assert!(
        added.is_empty() && removed.is_empty() && changed.is_empty(),
        "a dry run touched the tree: added {added:?}, removed {removed:?}, changed {changed:?}"
    );
}

fn best_size(dir: &Path, rel: &str) -> u64 {
    let m = manifest(dir);
    m["files"][rel]["encodings"][0]["size"].as_u64().unwrap()
}

// --- --dry-run ---------------------------------------------------------------

#[test]
fn dry_run_writes_and_deletes_nothing_but_reports_what_it_would_write() {
    let (_g, dir) = project();
    let before = snapshot(&dir);
    let out = bin()
        .arg(&dir)
        .args(["--dry-run", "--json", "-j", "2"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_untouched(&before, &dir);
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    // The sizes are real: the dry run compressed to learn them.
    for c in ["br", "zstd", "gzip"] {
        assert_eq!(report["codecs"][c]["files"], 8, "{report}");
        assert!(report["codecs"][c]["bytes_after"].as_u64().unwrap() > 0);
    }
    // The human summary says so, and so does the job summary.
    let summary = dir.parent().unwrap().join("summary.md");
    bin()
        .arg(&dir)
        .args(["-n", "--github"])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env_remove("GITHUB_OUTPUT")
        .assert()
        .success()
        .stdout(predicate::str::contains("dry run"));
    let md = fs::read_to_string(&summary).unwrap();
    assert!(md.contains("**Dry run**: nothing was written."), "{md}");
    assert!(md.contains("| `assets/app.js` | 1.6 KiB | br "), "{md}");
    assert_untouched(&before, &dir);
}

#[test]
fn dry_run_after_a_run_removes_nothing_when_settings_change() {
    let (_g, dir) = project();
    bin().arg(&dir).assert().success();
    let before = snapshot(&dir);
    // Without br, a real run would delete every .br: the dry run must not.
    bin()
        .arg(&dir)
        .args(["--dry-run", "--formats", "gzip"])
        .assert()
        .success();
    assert_untouched(&before, &dir);
}

#[test]
fn dry_run_checks_budgets_on_the_sizes_it_computed() {
    let (_g, dir) = project();
    let before = snapshot(&dir);
    bin()
        .arg(&dir)
        .args(["--dry-run", "--budget", "assets/app.js=100B"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("over budget: assets/app.js: br "));
    assert_untouched(&before, &dir);
}

// --- budgets -------------------------------------------------------------------

#[test]
fn a_budget_exceeded_fails_the_run_and_says_by_how_much() {
    let (_g, dir) = project();
    bin().arg(&dir).assert().success();
    let best = best_size(&dir, "assets/app.js");
    // One byte under the best variant: over by exactly one byte.
    let spec = format!("assets/*.js={}", best - 1);
    bin()
        .arg(&dir)
        .args(["--budget", &spec, "--budget", "*.css=1MiB"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "precompress: over budget: assets/app.js: br {best} B ({best} bytes) is over the budget assets/*.js={} ({} bytes) by 1 B (1 bytes,",
            best - 1,
            best - 1
        )))
        .stderr(predicate::str::contains("style.css").not());
    // Exactly at the budget is within it.
    bin()
        .arg(&dir)
        .args(["--budget", &format!("assets/*.js={best}")])
        .assert()
        .success();
    // The variants are still written: a budget reports, it does not withhold.
    assert!(dir.join("assets/app.js.br").is_file());
}

#[test]
fn a_budget_on_an_asset_without_variants_counts_the_file_itself() {
    let (_g, dir) = project();
    bin()
        .arg(&dir)
        .args(["--budget", "img/*.png=100B"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "img/photo.png: identity 463 B (463 bytes) is over the budget img/*.png=100B (100 bytes)",
        ));
    // A budget comes back as written: `0.1KB`, not `97 B` (issue #37).
    bin()
        .arg(&dir)
        .args(["--budget", "img/*.png=0.1KB"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "over the budget img/*.png=0.1KB (100 bytes)",
        ));
}

#[test]
fn a_budget_that_matches_nothing_warns_and_a_malformed_one_is_a_usage_error() {
    let (_g, dir) = project();
    bin()
        .arg(&dir)
        .args(["--budget", "*.jsx=1KB"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "warning: budget \"*.jsx\" matches no asset",
        ));
    for bad in ["*.js", "*.js=lots", "*.js=10 parsecs"] {
        bin()
            .arg(&dir)
            .args(["--budget", bad])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("budget {bad:?}")));
    }
}

// --- precompress.toml ----------------------------------------------------------

#[test]
fn config_file_unknown_key_is_rejected_naming_the_key_and_the_file() {
    let (_g, dir) = project();
    let cfg = dir.parent().unwrap().join("precompress.toml");
    fs::write(&cfg, "formats = [\"br\"]\nbrotli_quality = 9\n").unwrap();
    bin()
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("precompress.toml"))
        .stderr(predicate::str::contains("unknown field `brotli_quality`"))
        .stderr(predicate::str::contains("brotli-quality"));
    assert!(
        !dir.join("precompress-manifest.json").exists(),
        "ran despite a bad config"
    );
}

#[test]
fn config_file_bad_values_and_syntax_are_usage_errors() {
    let cases = [
        ("zstd-level = 40\n", "zstd-level: 40 is not in 1-22"),
        ("formats = \"br,lz4\"\n", "unknown format \"lz4\""),
        ("min-size = true\n", "min-size: expected bytes"),
        ("exclude = \"*.map\"\n", "exclude"),
        ("[budget\n", "precompress.toml"),
    ];
    for (text, want) in cases {
        let (_g, dir) = project();
        fs::write(dir.join("precompress.toml"), text).unwrap();
        bin()
            .arg(&dir)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(want));
    }
}

/// `check --url --timeout 18446744073709551615` was accepted and panicked
/// (the deadline overflowed an Instant; exit 134), and a size past u64 was
/// silently the largest one. Every duration and size option has a range, and
/// a value out of it is a usage error naming the option.
#[test]
fn durations_and_sizes_out_of_range_are_usage_errors() {
    let (_g, dir) = project();
    bin().arg(&dir).assert().success();
    let d = dir.to_str().unwrap();
    let url = "http://127.0.0.1:9/";
    let huge = "20000000000GB";
    for (args, want) in [
        (
            vec![
                "check",
                d,
                "--url",
                url,
                "--timeout",
                "18446744073709551615",
            ],
            "--timeout",
        ),
        (
            vec!["check", d, "--url", url, "--timeout", "86401"],
            "1..=86400",
        ),
        (
            vec!["check", d, "--url", url, "--timeout", "0"],
            "--timeout",
        ),
        (vec![d, "--cache-max-size", huge], "--cache-max-size"),
        (vec![d, "--min-size", "18446744073709551616"], "too large"),
        (vec![d, "--budget", "*.js=20000000000GB"], "too large"),
        (vec!["tune", d, "--sample", huge], "--sample"),
        (vec!["tune", d, "--min-size", huge], "too large"),
    ] {
        bin()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(want));
    }
    fs::write(
        dir.join("precompress.toml"),
        format!("min-size = \"{huge}\"\n"),
    )
    .unwrap();
    bin().arg(&dir).assert().code(2).stderr(
        predicate::str::contains("min-size: size").and(predicate::str::contains("too large")),
    );
    fs::remove_file(dir.join("precompress.toml")).unwrap();
    // The longest check is taken: it stops when the origin cannot be reached.
    bin()
        .args(["check", d, "--url", url, "--timeout", "86400"])
        .assert()
        .code(1);
}

#[test]
fn config_file_settings_apply_and_flags_win() {
    let (_g, dir) = project();
    // In the project root, two folders above nothing: found from DIR upward.
    fs::write(
        dir.parent().unwrap().join("precompress.toml"),
        "formats = [\"br\"]\nexclude = [\"*.svg\"]\n[budget]\n\"*.json\" = \"1MB\"\n",
    )
    .unwrap();
    bin().arg(&dir).arg("-v").assert().success().stderr(
        predicate::str::contains("precompress: config: ")
            .and(predicate::str::contains("precompress.toml")),
    );
    assert!(dir.join("assets/app.js.br").is_file());
    assert!(!dir.join("assets/app.js.gz").exists());
    assert!(!dir.join("img/logo.svg.br").exists());
    // The flag wins over the file's formats; the file's exclude still applies.
    bin()
        .arg(&dir)
        .args(["--formats", "gzip"])
        .assert()
        .success();
    assert!(dir.join("assets/app.js.gz").is_file());
    assert!(!dir.join("img/logo.svg.gz").exists());
    // --no-config: the file is ignored.
    bin()
        .arg(&dir)
        .args(["--no-config", "--formats", "gzip"])
        .assert()
        .success();
    assert!(dir.join("img/logo.svg.gz").is_file());
}

#[test]
fn config_flag_names_a_file_anywhere_and_a_missing_one_is_an_error() {
    let (g, dir) = project();
    let cfg = g.path().join("team.toml");
    fs::write(&cfg, "formats = \"gzip\"\n[budget]\n\"*.js\" = 10\n").unwrap();
    bin()
        .arg(&dir)
        .arg("--config")
        .arg(&cfg)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "over budget: assets/app.js: gzip ",
        ));
    // The command line's budget replaces the file's for the same glob.
    bin()
        .arg(&dir)
        .arg("--config")
        .arg(&cfg)
        .args(["--budget", "*.js=1MB"])
        .assert()
        .success();
    bin()
        .arg(&dir)
        .args(["--config", "no-such.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no-such.toml: cannot read the config file",
        ));
}

// --- output levels, help, completions, NO_COLOR ---------------------------------

#[test]
fn quiet_prints_nothing_and_verbose_lists_every_asset() {
    let (_g, dir) = project();
    bin()
        .arg(&dir)
        .arg("-q")
        .assert()
        .success()
        .stdout("")
        .stderr("");
    bin()
        .arg(&dir)
        .arg("-v")
        .assert()
        .success()
        .stderr(predicate::str::contains("  assets/app.js  1.6 KiB -> br "))
        .stderr(predicate::str::contains(
            "  img/photo.png  463 B -> identity 463 B",
        ));
    bin()
        .arg(&dir)
        .args(["-q", "-v"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
}

#[test]
fn help_shows_examples_config_budgets_and_exit_codes() {
    bin()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Examples:"))
        .stdout(predicate::str::contains("precompress dist/ --dry-run -v"))
        .stdout(predicate::str::contains("--budget 'assets/**/*.js=150KB'"))
        .stdout(predicate::str::contains("precompress.toml"))
        .stdout(predicate::str::contains("Exit codes:"))
        .stdout(predicate::str::contains("NO_COLOR"));
}

#[test]
fn completions_are_valid_scripts_that_know_the_options() {
    let out = bin()
        .args(["completions", "bash"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let script = String::from_utf8(out).unwrap();
    for opt in [
        "--dry-run",
        "--budget",
        "--config",
        "--github",
        "completions",
    ] {
        assert!(script.contains(opt), "bash completions lack {opt}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("precompress.bash");
    fs::write(&path, &script).unwrap();
    let st = Command::new("bash").arg("-n").arg(&path).status().unwrap();
    assert!(st.success(), "bash -n rejects the completion script");
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        bin()
            .args(["completions", shell])
            .assert()
            .success()
            .stdout(predicate::str::contains("dry-run"));
    }
    bin()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value 'tcsh'"));
}

/// Runs `cmd` under a pseudo-terminal (util-linux `script`; BSD's takes other flags), so that the
/// binary believes it talks to a person; returns everything it printed.
#[cfg(target_os = "linux")]
fn in_a_terminal(cmd: &str, no_color: bool) -> String {
    let mut c = Command::new("script");
    c.args(["-qec", cmd, "/dev/null"])
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE");
    if no_color {
        c.env("NO_COLOR", "1");
    }
    let out = c.output().expect("script(1) from util-linux");
    assert!(out.status.success(), "{cmd}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[cfg(target_os = "linux")]
fn no_color_means_no_escape_sequences_even_on_a_terminal() {
    let exe = env!("CARGO_BIN_EXE_precompress");
    // On a terminal, clap colours the help: the check below can see escapes.
    let coloured = in_a_terminal(&format!("'{exe}' --help"), false);
    assert!(
        coloured.contains('\x1b'),
        "no colour on a terminal: the test sees nothing"
    );
    let plain = in_a_terminal(&format!("'{exe}' --help"), true);
    assert!(
        !plain.contains('\x1b'),
        "NO_COLOR help has escapes: {plain:?}"
    );
    // A whole run (progress bar, summary, verbose lines, a warning) on a terminal.
    let (_g, dir) = project();
    let run = in_a_terminal(
        &format!("'{exe}' '{}' -v --budget '*.nope=1KB'", dir.display()),
        true,
    );
    assert!(run.contains("compressed"), "{run}");
    assert!(!run.contains('\x1b'), "NO_COLOR run has escapes: {run:?}");
}

// --- the committed job summary -------------------------------------------------

const SUMMARY_DOC: &str = "docs/job-summary-example.md";
const SUMMARY_CMD: &[&str] = &[
    "site",
    "--github",
    "-j",
    "2",
    "--budget",
    "assets/**=10KB",
    "--budget",
    "*.html=2KB",
];

/// The wall time is the one part of the summary that changes between runs.
fn without_wall_time(s: &str) -> String {
    s.lines()
        .map(|l| match (l.find("wall time "), l.find(" s on ")) {
            (Some(a), Some(b)) if a < b => format!("{}wall time X{}", &l[..a], &l[b..]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn job_summary_example_in_docs_is_what_the_binary_renders() {
    let (g, _dir) = project();
    let summary = g.path().join("summary.md");
    let outputs = g.path().join("outputs.txt");
    bin()
        .current_dir(g.path())
        .args(SUMMARY_CMD)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_WORKSPACE", g.path())
        .assert()
        .success();
    let rendered = fs::read_to_string(&summary).unwrap();
    let header = format!(
        "# Example job summary\n\n\
What `precompress --github` appends to `$GITHUB_STEP_SUMMARY` (the GitHub Action passes\n\
`--github`), rendered by the real binary from a copy of `fixtures/site`:\n\n\
```sh\nprecompress {}\n```\n\n\
Regenerate: `PRECOMPRESS_BLESS=1 cargo test --test cli_options job_summary_example`. That\n\
test fails when this file is stale; it ignores only the wall time.\n\n---\n\n",
        SUMMARY_CMD
            .iter()
            .map(|a| if a.contains('*') {
                format!("'{a}'")
            } else {
                a.to_string()
            })
            .collect::<Vec<_>>()
            .join(" ")
    );
    let want = header + &rendered;
    let path = repo().join(SUMMARY_DOC);
    if std::env::var_os("PRECOMPRESS_BLESS").is_some() {
        fs::write(&path, &want).unwrap();
        return;
    }
    let have = fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        without_wall_time(&have),
        without_wall_time(&want),
        "{SUMMARY_DOC} is stale: rerun with PRECOMPRESS_BLESS=1"
    );
    // And the outputs of the same run are all there.
    let o = fs::read_to_string(&outputs).unwrap();
    for k in [
        "files=13",
        "variants=24",
        "manifest=site/precompress-manifest.json",
        "over-budget=0",
    ] {
        assert!(o.lines().any(|l| l == k), "{k} not in\n{o}");
    }
}

#[test]
fn check_reads_the_manifest_the_config_file_put_elsewhere() {
    let (g, dir) = project();
    fs::write(
        g.path().join("precompress.toml"),
        "manifest = \"site-manifest.json\"\n",
    )
    .unwrap();
    bin().arg(&dir).assert().success();
    assert!(g.path().join("site-manifest.json").is_file());
    assert!(!dir.join("precompress-manifest.json").exists());
    bin()
        .arg("check")
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicate::str::contains("check: ok"));
}

#[test]
fn github_with_json_keeps_stdout_json_and_annotates_on_stderr() {
    let (g, dir) = project();
    let out = bin()
        .arg(&dir)
        .args(["--github", "--json", "--budget", "assets/app.js=100B"])
        .env("GITHUB_STEP_SUMMARY", g.path().join("s.md"))
        .env("GITHUB_OUTPUT", g.path().join("o.txt"))
        .env_remove("GITHUB_WORKSPACE")
        .assert()
        .code(1)
        .get_output()
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(
        report["files"], 13,
        "the site and its published list of dictionaries"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("::error file=")
            && err.contains("assets/app.js,title=precompress%3A over budget::"),
        "{err}"
    );
}
