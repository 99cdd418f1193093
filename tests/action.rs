//! The GitHub Action (`action.yml`) without GitHub: its steps run here, in bash,
//! in a simulated runner (`GITHUB_ACTION_PATH`, `GITHUB_OUTPUT`,
//! `GITHUB_STEP_SUMMARY`, `RUNNER_TEMP`, inputs substituted into `${{ }}`),
//! against a copy of the example site. The simulator knows only the
//! expressions the action needs; any other makes the test fail, so the action
//! cannot grow something these tests do not run. The `actions/cache` step is
//! played as a cache hit (the test binary is put where it restores to) or a
//! miss (a stand-in `cargo` records how it was called and installs the test
//! binary).

// The simulated runner is bash with POSIX tools (a Linux or macOS runner);
// on Windows, .github/workflows/action.yml runs the real action instead.
#![cfg(unix)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{copy_dir, repo};
use serde_yaml::Value;

fn action() -> Value {
    serde_yaml::from_str(&fs::read_to_string(repo().join("action.yml")).unwrap()).unwrap()
}

fn map_keys(v: &Value) -> Vec<String> {
    v.as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_string())
        .collect()
}

/// Every `${{ ... }}` expression in `text`, trimmed.
fn expressions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("${{") {
        let end = rest[i..].find("}}").expect("unclosed ${{") + i;
        out.push(rest[i + 3..end].trim().to_string());
        rest = &rest[end + 2..];
    }
    out
}

/// The names after `prefix` (`inputs.`) in an expression.
fn names_after(expr: &str, prefix: &str) -> Vec<String> {
    expr.match_indices(prefix)
        .map(|(i, _)| {
            expr[i + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect()
        })
        .collect()
}

/// A `$GITHUB_OUTPUT` file: `k=v` lines and `k<<DELIM ... DELIM` blocks.
fn parse_output_file(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((k, delim)) = line.split_once("<<") {
            let mut v = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                v.push(l);
            }
            out.insert(k.to_string(), v.join("\n"));
        } else if let Some((k, v)) = line.split_once('=') {
            out.insert(k.to_string(), v.to_string());
        } else if !line.is_empty() {
            panic!("malformed GITHUB_OUTPUT line {line:?}");
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq)]
enum CacheSim {
    Hit,
    Miss,
}

/// What a simulated job saw.
struct Job {
    /// The step that failed, if one did (the later ones did not run).
    failed: Option<String>,
    outputs: BTreeMap<String, String>,
    stdout: String,
    stderr: String,
    summary: String,
    /// The arguments the stand-in cargo got, one call per line.
    cargo_calls: String,
}

/// A temp runner: a workspace holding `dist/` (the example site) and RUNNER_TEMP.
struct Runner {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    workspace: PathBuf,
}

impl Runner {
    fn new() -> Runner {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let workspace = root.join("work");
        copy_dir(&repo().join("fixtures/site"), &workspace.join("dist"));
        // The project root for the precompress.toml lookup: nothing above leaks in.
        fs::create_dir_all(workspace.join(".git")).unwrap();
        for d in ["temp", "fakebin"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        Runner {
            _tmp: tmp,
            root,
            workspace,
        }
    }

    /// Runs the action's steps with `inputs` (the rest take their defaults).
    fn run(&self, inputs: &[(&str, &str)], cache: CacheSim) -> Job {
        let action = action();
        let declared = &action["inputs"];
        let mut input: BTreeMap<String, String> = BTreeMap::new();
        for name in map_keys(declared) {
            let default = declared[name.as_str()]["default"]
                .as_str()
                .unwrap_or("")
                .to_string();
            input.insert(name, default);
        }
        for (k, v) in inputs {
            assert!(input.contains_key(*k), "input {k} is not declared");
            input.insert(k.to_string(), v.to_string());
        }
        let temp = self.root.join("temp");
        let fakebin = self.root.join("fakebin");
        let calls = self.root.join("cargo-calls.txt");
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_precompress"));
        let cargo = match cache {
            CacheSim::Hit => "#!/bin/sh\necho \"cargo must not run on a cache hit: $*\" >&2\nexit 99\n".to_string(),
            CacheSim::Miss => format!(
                "#!/bin/sh\necho \"$*\" >> '{}'\nwhile [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=$2; shift; done\nmkdir -p \"$root/bin\" && cp '{}' \"$root/bin/precompress\"\n",
                calls.display(),
                bin.display()
            ),
        };
        let cargo_path = fakebin.join("cargo");
        fs::write(&cargo_path, cargo).unwrap();
        make_executable(&cargo_path);
        let summary = self.root.join("step-summary.md");
        let path_var = format!(
            "{}:{}",
            fakebin.display(),
            std::env::var("PATH").unwrap_or_default()
        );

        let mut steps: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut job = Job {
            failed: None,
            outputs: BTreeMap::new(),
            stdout: String::new(),
            stderr: String::new(),
            summary: String::new(),
            cargo_calls: String::new(),
        };
        let eval = |text: &str, steps: &BTreeMap<String, BTreeMap<String, String>>| -> String {
            let mut out = String::new();
            let mut rest = text;
            while let Some(i) = rest.find("${{") {
                out.push_str(&rest[..i]);
                let end = rest[i..].find("}}").unwrap() + i;
                let expr = rest[i + 3..end].trim();
                let parts: Vec<&str> = expr.split('.').collect();
                let value = match parts.as_slice() {
                    ["inputs", name] => input
                        .get(*name)
                        .unwrap_or_else(|| panic!("undeclared input in ${{{{ {expr} }}}}"))
                        .clone(),
                    ["steps", id, "outputs", name] => steps
                        .get(*id)
                        .and_then(|o| o.get(*name))
                        .cloned()
                        .unwrap_or_default(),
                    ["github", "action_path"] => repo().display().to_string(),
                    ["runner", "temp"] => temp.display().to_string(),
                    _ => panic!("the simulator does not know ${{{{ {expr} }}}}"),
                };
                out.push_str(&value);
                rest = &rest[end + 2..];
            }
            out.push_str(rest);
            out
        };

        let run_steps = action["runs"]["steps"].as_sequence().unwrap();
        assert_eq!(action["runs"]["using"], "composite");
        for (n, step) in run_steps.iter().enumerate() {
            let id = step["id"]
                .as_str()
                .map_or_else(|| format!("step{n}"), str::to_string);
            assert!(
                step.get("if").is_none(),
                "step {id}: the simulator runs every step; decide inside the script"
            );
            if let Some(uses) = step["uses"].as_str() {
                assert_eq!(
                    uses, "actions/cache@v4",
                    "only the build cache is a uses: step"
                );
                let path = eval(step["with"]["path"].as_str().unwrap(), &steps);
                let key = eval(step["with"]["key"].as_str().unwrap(), &steps);
                assert!(
                    path.starts_with(&temp.display().to_string())
                        && key.starts_with("precompress-0."),
                    "cache path {path:?}, key {key:?}"
                );
                assert!(key.contains("-Linux-X64-"), "{key}");
                if cache == CacheSim::Hit {
                    fs::create_dir_all(Path::new(&path).join("bin")).unwrap();
                    // A link, not a copy: a copy is open for writing in this
                    // process, and a child another test thread forks meanwhile
                    // inherits that until it execs, so running the copy could
                    // fail with ETXTBSY ("Text file busy").
                    let dest = Path::new(&path).join("bin/precompress");
                    let _ = fs::remove_file(&dest); // a second run of the same job
                    std::os::unix::fs::symlink(&bin, &dest).unwrap();
                }
                continue;
            }
            assert_eq!(step["shell"], "bash", "step {id}");
            let script = step["run"].as_str().unwrap();
            assert!(
                expressions(script).is_empty(),
                "step {id}: pass ${{{{ }}}} through env:, never into the script (injection)"
            );
            let script_path = self.root.join(format!("{id}.sh"));
            fs::write(&script_path, script).unwrap();
            let output = self.root.join(format!("{id}.output"));
            fs::write(&output, "").unwrap();
            let mut cmd = Command::new("bash");
            // How GitHub runs `shell: bash`.
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
                .arg(&script_path)
                .current_dir(&self.workspace)
                .env_remove("PRECOMPRESS_CACHE_DIR")
                .env_remove("NO_COLOR")
                .env("PATH", &path_var)
                .env("GITHUB_ACTIONS", "true")
                .env("GITHUB_ACTION_PATH", repo())
                .env("GITHUB_WORKSPACE", &self.workspace)
                .env("GITHUB_OUTPUT", &output)
                .env("GITHUB_STEP_SUMMARY", &summary)
                .env("RUNNER_TEMP", &temp)
                .env("RUNNER_OS", "Linux")
                .env("RUNNER_ARCH", "X64");
            if let Some(env) = step["env"].as_mapping() {
                for (k, v) in env {
                    cmd.env(k.as_str().unwrap(), eval(v.as_str().unwrap(), &steps));
                }
            }
            let out = cmd.output().unwrap();
            job.stdout.push_str(&String::from_utf8_lossy(&out.stdout));
            job.stderr.push_str(&String::from_utf8_lossy(&out.stderr));
            steps.insert(
                id.clone(),
                parse_output_file(&fs::read_to_string(&output).unwrap()),
            );
            if !out.status.success() {
                job.failed = Some(id);
                break;
            }
        }
        for name in map_keys(&action["outputs"]) {
            let v = eval(
                action["outputs"][name.as_str()]["value"].as_str().unwrap(),
                &steps,
            );
            job.outputs.insert(name, v);
        }
        job.summary = fs::read_to_string(&summary).unwrap_or_default();
        job.cargo_calls = fs::read_to_string(&calls).unwrap_or_default();
        job
    }
}

fn make_executable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(p, fs::Permissions::from_mode(0o755)).unwrap();
}

fn manifest_at(p: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn every_input_is_declared_documented_and_used_and_every_output_is_documented() {
    let text = fs::read_to_string(repo().join("action.yml")).unwrap();
    let a = action();
    let declared: BTreeSet<String> = map_keys(&a["inputs"]).into_iter().collect();
    let used: BTreeSet<String> = expressions(&text)
        .iter()
        .flat_map(|e| names_after(e, "inputs."))
        .collect();
    let unused: Vec<_> = declared.difference(&used).collect();
    let undeclared: Vec<_> = used.difference(&declared).collect();
    assert!(unused.is_empty(), "declared but never used: {unused:?}");
    assert!(
        undeclared.is_empty(),
        "used but not declared: {undeclared:?}"
    );
    let wanted = [
        "path",
        "formats",
        "brotli-quality",
        "zstd-level",
        "gzip-level",
        "min-ratio",
        "include",
        "exclude",
        "min-size",
        "manifest",
        "cache-dir",
        "dictionary-from",
        "check",
        "args",
    ];
    for w in wanted {
        assert!(declared.contains(w), "input {w} missing");
    }
    assert_eq!(a["inputs"]["path"]["required"], true);

    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    let section = readme
        .split("## GitHub Action")
        .nth(1)
        .expect("README has a '## GitHub Action' section");
    for kind in ["inputs", "outputs"] {
        for name in map_keys(&a[kind]) {
            let desc = a[kind][name.as_str()]["description"].as_str().unwrap_or("");
            assert!(!desc.trim().is_empty(), "{kind}.{name} has no description");
            assert!(
                section.contains(&format!("| `{name}` |")),
                "README's GitHub Action section does not document {kind}.{name}"
            );
        }
    }
    // Each output is the run step's output of the same name.
    for name in map_keys(&a["outputs"]) {
        assert_eq!(
            a["outputs"][name.as_str()]["value"].as_str().unwrap(),
            format!("${{{{ steps.run.outputs.{name} }}}}")
        );
    }
}

#[test]
fn dictionary_from_writes_deltas_that_check_decodes() {
    let r = Runner::new();
    let script = |n: u32| {
        (0..500)
            .map(|i| {
                format!(
                    "export const item{i} = () => {};\n",
                    i + u32::from(i == 7 && n == 2)
                )
            })
            .collect::<String>()
    };
    let prev = r.workspace.join("previous");
    fs::create_dir_all(prev.join("assets")).unwrap();
    fs::write(prev.join("assets/app-1a2b3c4d.js"), script(1)).unwrap();
    fs::write(r.workspace.join("dist/assets/app-5e6f7a8b.js"), script(2)).unwrap();
    let job = r.run(
        &[
            ("path", "dist"),
            ("dictionary-from", "previous\n"),
            ("check", "true"),
        ],
        CacheSim::Hit,
    );
    assert!(
        job.failed.is_none(),
        "step {:?} failed\nstdout:\n{}\nstderr:\n{}",
        job.failed,
        job.stdout,
        job.stderr
    );
    let m = manifest_at(&r.workspace.join("dist/precompress-manifest.json"));
    let deltas = m["files"]["assets/app-5e6f7a8b.js"]["deltas"]
        .as_array()
        .unwrap();
    assert_eq!(deltas.len(), 2, "{m:#}");
    assert!(
        job.stdout.contains("2 deltas verified, 2 of them decoded"),
        "{}",
        job.stdout
    );
}

#[test]
fn action_steps_run_on_the_example_site_with_every_input_wired_through() {
    let r = Runner::new();
    let job = r.run(
        &[
            ("path", "dist"),
            ("formats", "br,zstd"),
            ("brotli-quality", "9"),
            ("zstd-level", "3"),
            ("gzip-level", "6"),
            ("min-ratio", "0.95"),
            ("include", "assets/**\n  *.html  \n\n"),
            ("exclude", "*.css"),
            ("min-size", "1000"),
            ("manifest", "precompress-manifest.dist.json"),
            ("cache-dir", "precompress-cache"),
            ("check", "true"),
            ("args", "--budget 'assets/**=100 KB' -v"),
        ],
        CacheSim::Hit,
    );
    assert!(
        job.failed.is_none(),
        "step {:?} failed\nstdout:\n{}\nstderr:\n{}",
        job.failed,
        job.stdout,
        job.stderr
    );
    let dist = r.workspace.join("dist");
    let m = manifest_at(&r.workspace.join("precompress-manifest.dist.json"));
    let files = m["files"].as_object().unwrap();
    // formats, brotli-quality, zstd-level: in the manifest's settings.
    let settings = m["settings"].as_object().unwrap();
    assert_eq!(settings.keys().collect::<Vec<_>>(), ["br", "zstd"]);
    assert!(
        settings["br"].as_str().unwrap().contains("quality 9"),
        "{settings:?}"
    );
    assert!(
        settings["zstd"].as_str().unwrap().contains("level 3"),
        "{settings:?}"
    );
    // min-ratio is part of every coding's settings.
    assert!(
        settings["br"]
            .as_str()
            .unwrap()
            .contains("kept at most 0.95"),
        "{settings:?}"
    );
    // include, exclude, min-size.
    let reason = |rel: &str| {
        files[rel]["skipped"]["br"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(reason("assets/style.css"), "excluded_glob");
    assert_eq!(reason("data/products.json"), "excluded_glob");
    assert_eq!(reason("assets/tiny-under-min-size.js"), "too_small");
    assert!(dist.join("assets/app.js.br").is_file());
    assert!(dist.join("index.html.zst").is_file());
    assert!(!dist.join("assets/app.js.gz").exists());
    // cache-dir: the encoder cache was filled.
    let cache = r.workspace.join("precompress-cache");
    assert!(
        cache.is_dir()
            && walkdir::WalkDir::new(&cache)
                .into_iter()
                .flatten()
                .any(|e| e.file_type().is_file()),
        "--cache-dir {} is empty",
        cache.display()
    );
    // check: ran after the run, and passed.
    assert!(job.stdout.contains("check: ok"), "{}", job.stdout);
    // args: -v lists assets on stderr; the budget is in the summary.
    assert!(job.stderr.contains("assets/app.js"), "{}", job.stderr);
    assert!(job.summary.contains("#### Budgets"), "{}", job.summary);

    // Outputs agree with the manifest.
    let mut variants = 0;
    let mut before: BTreeMap<&str, u64> = BTreeMap::new();
    let mut after: BTreeMap<&str, u64> = BTreeMap::new();
    for a in files.values() {
        for v in a["encodings"].as_array().unwrap() {
            variants += 1;
            let c = v["coding"].as_str().unwrap();
            *before.entry(c).or_default() += a["size"].as_u64().unwrap();
            *after.entry(c).or_default() += v["size"].as_u64().unwrap();
        }
    }
    let o = &job.outputs;
    assert_eq!(o["files"], files.len().to_string());
    assert_eq!(o["variants"], variants.to_string());
    assert!(variants >= 6, "{o:?}");
    for c in ["br", "zstd"] {
        assert_eq!(o[&format!("bytes-before-{c}")], before[c].to_string());
        assert_eq!(o[&format!("bytes-after-{c}")], after[c].to_string());
    }
    assert_eq!(o["bytes-before-gzip"], "0");
    assert_eq!(o["bytes-after-gzip"], "0");
    assert_eq!(o["manifest"], "precompress-manifest.dist.json");
    assert_eq!(o["errors"], "0");
    assert_eq!(o["over-budget"], "0");
    let codecs: serde_json::Value = serde_json::from_str(&o["codecs"]).unwrap();
    assert_eq!(codecs["br"]["bytes_after"], after["br"]);
    for (k, v) in o {
        assert!(!v.is_empty(), "output {k} is empty");
    }

    // The summary: per-codec table, largest assets, skips, wall time.
    let s = &job.summary;
    assert!(s.starts_with("### precompress: `dist`\n"), "{s}");
    assert!(
        s.contains("| coding | files | before | after | saving |"),
        "{s}"
    );
    assert!(
        s.contains("\n| br | ") && s.contains("\n| zstd | ") && !s.contains("\n| gzip | "),
        "{s}"
    );
    assert!(
        s.contains("#### The 10 largest assets")
            && s.contains("| `data/products.json` | 11.0 KiB | none |"),
        "{s}"
    );
    assert!(
        s.contains("| excluded_glob | ") && s.contains("| too_small | "),
        "{s}"
    );
    assert!(s.contains("wall time "), "{s}");
    assert!(job.cargo_calls.is_empty(), "cargo ran on a cache hit");
}

#[test]
fn over_budget_fails_the_step_with_annotations_outputs_and_summary() {
    let r = Runner::new();
    let job = r.run(
        &[
            ("path", "dist"),
            ("check", "true"),
            ("args", "--budget *.js=100B"),
        ],
        CacheSim::Hit,
    );
    assert_eq!(job.failed.as_deref(), Some("run"), "{}", job.stderr);
    assert!(
        job.stdout.contains(
            "::error file=dist/assets/app.js,title=precompress%3A over budget::assets/app.js: br "
        ),
        "{}",
        job.stdout
    );
    assert!(
        !job.stdout.contains("check: ok"),
        "check ran after a failed step"
    );
    assert_eq!(job.outputs["over-budget"], "1");
    assert!(
        job.summary.contains("| `assets/app.js` | br "),
        "{}",
        job.summary
    );
    assert!(job.summary.contains("| over by |"), "{}", job.summary);
}

#[test]
fn cache_miss_builds_the_action_checkout_with_locked_dependencies() {
    let r = Runner::new();
    let job = r.run(&[("path", "dist")], CacheSim::Miss);
    assert!(job.failed.is_none(), "{:?}: {}", job.failed, job.stderr);
    let call = job.cargo_calls.trim();
    let want = format!("install --locked --path {} --root ", repo().display());
    assert!(call.starts_with(&want), "cargo {call}");
    assert!(
        call.contains(&format!("{}/temp/precompress-0.", r.root.display())),
        "cargo {call}"
    );
    assert!(r.workspace.join("dist/precompress-manifest.json").is_file());
    // The default check=false runs no check.
    assert!(!job.stdout.contains("check: ok"));
}

#[test]
fn a_check_input_other_than_true_or_false_is_refused() {
    let r = Runner::new();
    let job = r.run(&[("path", "dist"), ("check", "yes")], CacheSim::Hit);
    assert_eq!(job.failed.as_deref(), Some("run"));
    assert!(
        job.stdout.contains("input check must be 'true' or 'false'"),
        "{}",
        job.stdout
    );
    assert!(!r.workspace.join("dist/precompress-manifest.json").exists());
}

#[test]
fn workflows_are_yaml_with_the_jobs_ci_needs() {
    let load = |name: &str| -> (String, Value) {
        let text = fs::read_to_string(repo().join(".github/workflows").join(name)).unwrap();
        let v = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        (text, v)
    };
    let (ci_text, ci) = load("ci.yml");
    assert_eq!(ci["permissions"]["contents"], "read");
    let oses: Vec<&str> = ci["jobs"]["test"]["strategy"]["matrix"]["os"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for os in ["ubuntu-latest", "macos-latest", "windows-latest"] {
        assert!(oses.contains(&os), "{oses:?}");
    }
    for needle in [
        "cargo fmt --check",
        "cargo clippy --locked --all-targets -- -D warnings",
        "cargo test --locked",
    ] {
        assert!(ci_text.contains(needle), "ci.yml lacks {needle}");
    }
    let (act_text, act) = load("action.yml");
    assert_eq!(act["permissions"]["contents"], "read");
    assert!(
        act_text.contains("uses: ./\n"),
        "the action workflow runs the local action"
    );
}

#[test]
fn every_bash_script_of_the_action_and_workflows_passes_shellcheck() {
    // Debian's shellcheck; .ci/run installs it.
    let mut scripts = Vec::new();
    for step in action()["runs"]["steps"].as_sequence().unwrap() {
        if let Some(run) = step["run"].as_str() {
            scripts.push((format!("action.yml step {:?}", step["id"]), run.to_string()));
        }
    }
    for wf in ["ci.yml", "action.yml"] {
        let text = fs::read_to_string(repo().join(".github/workflows").join(wf)).unwrap();
        let v: Value = serde_yaml::from_str(&text).unwrap();
        for (job, j) in v["jobs"].as_mapping().unwrap() {
            for step in j["steps"].as_sequence().unwrap() {
                if let Some(run) = step["run"].as_str() {
                    assert!(
                        expressions(run).is_empty(),
                        "{wf}: pass ${{{{ }}}} via env:"
                    );
                    scripts.push((format!("{wf} job {job:?}"), run.to_string()));
                }
            }
        }
    }
    assert!(scripts.len() >= 8, "{}", scripts.len());
    for (name, script) in scripts {
        let mut child = Command::new("shellcheck")
            .args(["--shell=bash", "--severity=style", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("shellcheck (apt-get install shellcheck)");
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{name}:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn a_run_that_cannot_start_still_annotates_and_warnings_become_warning_annotations() {
    let r = Runner::new();
    let job = r.run(&[("path", "no-such-dir")], CacheSim::Hit);
    assert_eq!(job.failed.as_deref(), Some("run"));
    assert!(
        job.stdout.contains("::error title=precompressor::") && job.stdout.contains("no-such-dir"),
        "{}",
        job.stdout
    );
    let job = r.run(
        &[("path", "dist"), ("args", "--budget '*.jsx=1KB'")],
        CacheSim::Hit,
    );
    assert!(job.failed.is_none(), "{}", job.stderr);
    assert!(
        job.stdout
            .contains("::warning title=precompressor::budget \"*.jsx\" matches no asset"),
        "{}",
        job.stdout
    );
}

#[test]
fn a_per_file_error_becomes_an_annotation_on_that_file_and_fails_the_step() {
    let r = Runner::new();
    // A .br precompress did not write and that does not decode to its source.
    fs::write(r.workspace.join("dist/assets/app.js.br"), "not brotli").unwrap();
    let job = r.run(&[("path", "dist")], CacheSim::Hit);
    assert_eq!(job.failed.as_deref(), Some("run"));
    assert!(
        job.stdout.contains(
            "::error file=dist/assets/app.js.br,title=precompressor::dist/assets/app.js.br: "
        ),
        "{}",
        job.stdout
    );
    assert_eq!(job.outputs["errors"], "1");
    assert!(
        job.summary.contains("8 compressed, 1 error, ")
            && job
                .summary
                .contains("#### Errors\n\n- dist/assets/app.js.br: "),
        "{}",
        job.summary
    );
    // Every other file was still done.
    assert!(r.workspace.join("dist/assets/style.css.br").is_file());
}
