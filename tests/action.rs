//! The GitHub Action (`action.yml`) without GitHub: its steps run here, in bash,
//! in a simulated runner (`GITHUB_ACTION_PATH`, `GITHUB_OUTPUT`,
//! `GITHUB_STEP_SUMMARY`, `RUNNER_TEMP`, inputs substituted into `${{ }}`),
//! against a copy of the example site. The simulator knows only the
//! expressions the action needs; any other makes the test fail, so the action
//! cannot grow something these tests do not run. The `actions/cache` step is
//! played as a cache hit (the test binary is put where it restores to) or a
//! miss (a stand-in `cargo` records how it was called and installs the test
//! binary). At a release tag, the action downloads the release archive: here
//! `.ci/package.sh` packs the test binary as the release workflow packs the
//! real one, and a small HTTP server on 127.0.0.1 stands in for GitHub's
//! release downloads (`PRECOMPRESS_RELEASE_URL`). The fast tier; shellcheck on
//! the action's and the workflows' scripts is in `tests/shellcheck.rs`.

// The simulated runner is bash with POSIX tools (a Linux or macOS runner);
// on Windows, .github/workflows/action.yml runs the real action instead.
#![cfg(unix)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use common::workflows::{action, expressions};
use common::{copy_dir, repo, snapshot};
use serde_norway::Value;

fn map_keys(v: &Value) -> Vec<String> {
    v.as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_string())
        .collect()
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
    /// What the steps appended to `$GITHUB_PATH`.
    path_added: String,
}

impl Job {
    /// Every step succeeded; else fails naming the step, with both streams.
    fn assert_ok(&self) {
        assert!(
            self.failed.is_none(),
            "step {:?} failed\nstdout:\n{}\nstderr:\n{}",
            self.failed,
            self.stdout,
            self.stderr
        );
    }
}

/// A temp runner: a workspace holding `dist/` (the example site) and RUNNER_TEMP.
struct Runner {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    workspace: PathBuf,
    /// `github.action_ref`: empty as for `uses: ./`; `v0.1.0` for
    /// `uses: OWNER/precompressor@v0.1.0`.
    action_ref: String,
    /// `github.action_repository`.
    action_repository: String,
    /// The calling step's `env:`.
    env: Vec<(String, String)>,
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
            action_ref: String::new(),
            action_repository: String::new(),
            env: Vec::new(),
        }
    }

    /// A runner that uses the action at the release tag of this version, whose
    /// release downloads are at `release_url`.
    fn at_release_tag(release_url: &str) -> Runner {
        let mut r = Runner::new();
        r.action_ref = format!("v{VERSION}");
        r.action_repository = "OWNER/precompressor".to_string();
        r.env.push((
            "PRECOMPRESS_RELEASE_URL".to_string(),
            release_url.to_string(),
        ));
        r
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
        let github_path = self.root.join("github-path.txt");
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
            path_added: String::new(),
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
                    ["github", "action_ref"] => self.action_ref.clone(),
                    ["github", "action_repository"] => self.action_repository.clone(),
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
                .env("GITHUB_PATH", &github_path)
                .env("RUNNER_TEMP", &temp)
                .env("RUNNER_OS", "Linux")
                .env("RUNNER_ARCH", "X64")
                .env_remove("PRECOMPRESS_RELEASE_URL")
                .envs(self.env.iter().map(|(k, v)| (k, v)));
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
        job.path_added = fs::read_to_string(&github_path).unwrap_or_default();
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

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The release target of the simulated runner (RUNNER_OS Linux, RUNNER_ARCH X64).
const TARGET: &str = "x86_64-unknown-linux-gnu";

/// The release archive the simulated runner downloads.
fn archive_name() -> String {
    format!("precompressor-{VERSION}-{TARGET}.tar.gz")
}

fn sha256_file(p: &Path) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    std::io::copy(&mut fs::File::open(p).unwrap(), &mut h).unwrap();
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// `bash .ci/package.sh TARGET dir` with `PRECOMPRESS_BIN=bin` and any `env`;
/// returns the archive's path.
fn pack(bin: &Path, target: &str, dir: &Path, env: &[(&str, &str)]) -> PathBuf {
    let out = Command::new("bash")
        .arg(repo().join(".ci/package.sh"))
        .arg(target)
        .arg(dir)
        .env("PRECOMPRESS_BIN", bin)
        .env_remove("SOURCE_DATE_EPOCH")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "package.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// A release as the release workflow publishes it, for the simulated runner:
/// `bin` packed into `dir/vVERSION/`, with SHA256SUMS. Returns the archive.
fn release(bin: &Path, dir: &Path) -> PathBuf {
    let tag_dir = dir.join(format!("v{VERSION}"));
    let archive = pack(bin, TARGET, &tag_dir, &[]);
    assert_eq!(archive, tag_dir.join(archive_name()));
    let out = Command::new("bash")
        .arg(repo().join(".ci/package.sh"))
        .arg("--sums")
        .arg(&tag_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        fs::read_to_string(tag_dir.join("SHA256SUMS")).unwrap(),
        format!("{}  {}\n", sha256_file(&archive), archive_name())
    );
    archive
}

/// GitHub's release downloads, played by an HTTP server on 127.0.0.1: a GET
/// of `/PATH` answers `root/PATH`, or 404. It records the paths asked for.
struct ReleaseServer {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl ReleaseServer {
    fn start(root: &Path) -> ReleaseServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        let root = root.to_path_buf();
        // Never joined: it ends with the test process.
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                let _ = reader.read_line(&mut request);
                loop {
                    let mut header = String::new();
                    match reader.read_line(&mut header) {
                        Ok(n) if n > 2 => {}
                        _ => break,
                    }
                }
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                seen.lock().unwrap().push(path.clone());
                let body = (!path.contains(".."))
                    .then(|| fs::read(root.join(path.trim_start_matches('/'))).ok())
                    .flatten();
                let (status, body) = match body {
                    Some(b) => ("200 OK", b),
                    None => ("404 Not Found", b"Not Found".to_vec()),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(&body);
            }
        });
        ReleaseServer { url, requests }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
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

    // The Action's guide (the README links it) holds the inputs and outputs tables.
    let guide = fs::read_to_string(repo().join("docs/ci.md")).unwrap();
    let section = guide
        .split("## The GitHub Action")
        .nth(1)
        .expect("docs/ci.md has a '## The GitHub Action' section");
    for kind in ["inputs", "outputs"] {
        for name in map_keys(&a[kind]) {
            let desc = a[kind][name.as_str()]["description"].as_str().unwrap_or("");
            assert!(!desc.trim().is_empty(), "{kind}.{name} has no description");
            assert!(
                section.contains(&format!("| `{name}` |")),
                "docs/ci.md's GitHub Action section does not document {kind}.{name}"
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
    job.assert_ok();
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
    job.assert_ok();
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
    // report (default true): the page outside PATH, its main chart in the summary.
    let page = Path::new(&o["report"]);
    assert!(page.is_absolute() && !page.starts_with(&dist), "{page:?}");
    assert!(fs::read_to_string(page).unwrap().contains("id=\"main\""));
    assert!(
        s.contains("### precompress report: `dist`") && s.contains(&o["report"]),
        "{s}"
    );
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
    job.assert_ok();
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
    // `uses: ./` has no ref: nothing to download, and the log says so.
    assert!(
        job.stdout.contains(&format!(
            "::notice title=precompress::Building precompress {VERSION} from source: the action's ref '' is not a release tag"
        )),
        "{}",
        job.stdout
    );
}

#[test]
fn at_a_release_tag_the_action_downloads_verifies_and_runs_the_release_binary_without_building() {
    let dir = tempfile::tempdir().unwrap();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_precompress"));
    let archive = release(&bin, dir.path());
    let server = ReleaseServer::start(dir.path());
    let r = Runner::at_release_tag(&server.url);
    let job = r.run(&[("path", "dist"), ("check", "true")], CacheSim::Miss);
    job.assert_ok();
    assert!(
        job.cargo_calls.is_empty(),
        "built although the release has an archive: cargo {}",
        job.cargo_calls
    );
    assert_eq!(
        server.requests(),
        [
            format!("/v{VERSION}/{}", archive_name()),
            format!("/v{VERSION}/SHA256SUMS")
        ]
    );
    assert!(
        job.stdout.contains(&format!(
            "{}/v{VERSION}/{}, sha256 {} as in SHA256SUMS",
            server.url,
            archive_name(),
            sha256_file(&archive)
        )),
        "{}",
        job.stdout
    );
    assert!(!job.stdout.contains("::notice"), "{}", job.stdout);
    // The binary is the packed one, in the folder actions/cache saves, and on
    // PATH for the job's later steps.
    let bin_dir = PathBuf::from(job.path_added.trim_end());
    assert!(
        bin_dir.starts_with(r.root.join("temp")) && bin_dir.ends_with("bin"),
        "{}",
        job.path_added
    );
    assert_eq!(sha256_file(&bin_dir.join("precompress")), sha256_file(&bin));
    assert!(job.stdout.contains("check: ok"), "{}", job.stdout);
    assert_eq!(job.outputs["errors"], "0");
}

#[test]
fn a_changed_release_archive_fails_the_job_naming_both_hashes_and_nothing_is_run_or_built() {
    let dir = tempfile::tempdir().unwrap();
    // A stand-in binary that leaves a mark if anything runs it.
    let ran = dir.path().join("stand-in-ran");
    let stand_in = dir.path().join("precompress");
    fs::write(
        &stand_in,
        format!(
            "#!/bin/sh\ntouch '{}'\necho 'precompress {VERSION}'\n",
            ran.display()
        ),
    )
    .unwrap();
    make_executable(&stand_in);
    let archive = release(&stand_in, dir.path());
    let expected = sha256_file(&archive);
    let mut bytes = fs::read(&archive).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    fs::write(&archive, &bytes).unwrap();
    let actual = sha256_file(&archive);
    let server = ReleaseServer::start(dir.path());
    let r = Runner::at_release_tag(&server.url);

    let refused = |job: &Job, error: &str| {
        assert_eq!(
            job.failed.as_deref(),
            Some("install"),
            "stdout:\n{}\nstderr:\n{}",
            job.stdout,
            job.stderr
        );
        assert!(
            job.stdout
                .contains(&format!("::error title=precompress::{error}")),
            "{}",
            job.stdout
        );
        assert!(
            job.cargo_calls.is_empty(),
            "a download that does not verify must not fall back to a build: cargo {}",
            job.cargo_calls
        );
        assert!(!ran.exists(), "the unverified binary ran");
        assert!(job.path_added.is_empty(), "{}", job.path_added);
        assert!(!r.workspace.join("dist/precompress-manifest.json").exists());
        let cached = fs::read_dir(r.root.join("temp"))
            .unwrap()
            .flatten()
            .any(|e| e.path().join("bin").exists());
        assert!(!cached, "something was installed for actions/cache to save");
    };
    let job = r.run(&[("path", "dist")], CacheSim::Miss);
    refused(
        &job,
        &format!(
            "{} does not match SHA256SUMS: expected sha256 {expected}, got {actual} ({}/v{VERSION}/{})",
            archive_name(),
            server.url,
            archive_name()
        ),
    );

    // SHA256SUMS without a line for this archive (but one for another).
    let sums = dir.path().join(format!("v{VERSION}/SHA256SUMS"));
    fs::write(
        &sums,
        format!("{actual}  precompressor-{VERSION}-aarch64-unknown-linux-gnu.tar.gz\n"),
    )
    .unwrap();
    let job = r.run(&[("path", "dist")], CacheSim::Miss);
    refused(
        &job,
        &format!(
            "{}/v{VERSION}/SHA256SUMS has no line for {}, so it cannot be verified",
            server.url,
            archive_name()
        ),
    );

    // No SHA256SUMS at all.
    fs::remove_file(&sums).unwrap();
    let job = r.run(&[("path", "dist")], CacheSim::Miss);
    refused(
        &job,
        &format!(
            "{} was downloaded but {}/v{VERSION}/SHA256SUMS was not (HTTP 404), so it cannot be verified",
            archive_name(),
            server.url
        ),
    );
}

#[test]
fn without_an_archive_for_the_runner_or_at_a_tag_of_another_version_the_action_builds() {
    // A release without this runner's archive: a 404, then the build.
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join(format!("v{VERSION}"))).unwrap();
    let server = ReleaseServer::start(dir.path());
    let r = Runner::at_release_tag(&server.url);
    let job = r.run(&[("path", "dist")], CacheSim::Miss);
    job.assert_ok();
    assert!(
        job.cargo_calls.starts_with("install --locked --path "),
        "cargo {}",
        job.cargo_calls
    );
    assert!(
        job.stdout.contains(&format!(
            "::notice title=precompress::Building precompress {VERSION} from source: {}/v{VERSION}/{} is not there (404)",
            server.url,
            archive_name()
        )),
        "{}",
        job.stdout
    );
    // SHA256SUMS is not asked for.
    assert_eq!(
        server.requests(),
        [format!("/v{VERSION}/{}", archive_name())]
    );
    assert!(r.workspace.join("dist/precompress-manifest.json").is_file());

    // A tag that is not the checkout's version (a moving `v1`, a typo): its
    // release may hold another version's binary, so nothing is downloaded.
    let mut r = Runner::at_release_tag(&server.url);
    r.action_ref = "v9.9.9".to_string();
    let job = r.run(&[("path", "dist")], CacheSim::Miss);
    job.assert_ok();
    assert!(!job.cargo_calls.is_empty());
    assert!(
        job.stdout.contains(&format!(
            "from source: the action's ref v9.9.9 is not v{VERSION}, its Cargo.toml's version"
        )),
        "{}",
        job.stdout
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn release_archives_are_the_same_bytes_for_the_same_binary_and_commit() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("precompress");
    fs::write(&bin, "not really a binary\n").unwrap();
    make_executable(&bin);
    for target in [TARGET, "x86_64-pc-windows-msvc"] {
        let first = pack(&bin, target, &dir.path().join("a"), &[]);
        // Another mode, time and umask on the binary do not show.
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&bin, fs::Permissions::from_mode(0o700)).unwrap();
        let touched = Command::new("touch")
            .args(["-t", "200001010000"])
            .arg(&bin)
            .status()
            .unwrap();
        assert!(touched.success());
        let second = pack(&bin, target, &dir.path().join("b"), &[]);
        assert_eq!(first.file_name(), second.file_name());
        assert!(
            fs::read(&first).unwrap() == fs::read(&second).unwrap(),
            "{} differs between two packs",
            first.display()
        );
        make_executable(&bin);
        // The entries' time is SOURCE_DATE_EPOCH's (else the commit's).
        let other_time = pack(
            &bin,
            target,
            &dir.path().join("c"),
            &[("SOURCE_DATE_EPOCH", "1700000000")],
        );
        assert!(fs::read(&first).unwrap() != fs::read(&other_time).unwrap());
    }
    let zip = dir.path().join(format!(
        "a/precompressor-{VERSION}-x86_64-pc-windows-msvc.zip"
    ));
    assert!(zip.is_file());
    // One folder holding the binary and the documents, owner 0, the binary
    // executable. (GNU tar's listing; bsdtar's has other columns.)
    let archive = dir.path().join(format!("a/{}", archive_name()));
    let listing = Command::new("tar")
        .arg("-tzf")
        .arg(&archive)
        .output()
        .unwrap();
    let name = format!("precompressor-{VERSION}-{TARGET}");
    assert_eq!(
        String::from_utf8(listing.stdout).unwrap(),
        format!("{name}/\n{name}/LICENSE-APACHE\n{name}/LICENSE-MIT\n{name}/README.md\n{name}/precompress\n")
    );
    let verbose = Command::new("tar")
        .args(["--numeric-owner", "-tvzf"])
        .arg(&archive)
        .output()
        .unwrap();
    let verbose = String::from_utf8_lossy(&verbose.stdout);
    if verbose.contains(" 0/0 ") {
        let modes: Vec<&str> = verbose.lines().map(|l| &l[..10]).collect();
        assert_eq!(
            modes,
            [
                "drwxr-xr-x",
                "-rw-r--r--",
                "-rw-r--r--",
                "-rw-r--r--",
                "-rwxr-xr-x"
            ],
            "{verbose}"
        );
    }
}

#[test]
fn the_release_workflow_builds_and_publishes_the_archive_of_every_runner_the_action_downloads_for()
{
    let text = fs::read_to_string(repo().join(".github/workflows/release.yml")).unwrap();
    let wf: Value = serde_norway::from_str(&text).unwrap();
    assert_eq!(
        wf["on"]["push"]["tags"].as_sequence().unwrap(),
        &[Value::from("v*")]
    );
    // Read-only, but for the job that creates the release.
    assert_eq!(wf["permissions"]["contents"], "read");
    for (job, j) in wf["jobs"].as_mapping().unwrap() {
        let job = job.as_str().unwrap();
        if job == "release" {
            assert_eq!(j["permissions"]["contents"], "write");
        } else {
            assert!(j.get("permissions").is_none(), "job {job}");
        }
    }
    let mut built = BTreeSet::new();
    for m in wf["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_sequence()
        .unwrap()
    {
        let target = m["target"].as_str().unwrap();
        let build = m["build"].as_str().unwrap();
        // zigbuild's glibc 2.17 suffix on Linux, else the target itself.
        let want = if target.contains("linux-gnu") {
            format!("{target}.2.17")
        } else {
            target.to_string()
        };
        assert_eq!(build, want);
        built.insert(target.to_string());
    }
    // The targets action.yml maps RUNNER_OS/RUNNER_ARCH to.
    let action_text = fs::read_to_string(repo().join("action.yml")).unwrap();
    let downloaded: BTreeSet<String> = action_text
        .lines()
        .filter_map(|l| l.split_once(") target=")?.1.strip_suffix(" ;;"))
        .filter(|t| !t.starts_with('"'))
        .map(str::to_string)
        .collect();
    assert_eq!(downloaded.len(), 5, "{downloaded:?}");
    assert_eq!(built, downloaded);
    for needle in [
        "bash .ci/package.sh \"$BUILD\" dist",
        "bash .ci/package.sh --sums dist",
        "sha256sum --check --strict SHA256SUMS",
        "gh release create \"$TAG\" dist/* --verify-tag",
        "bash npm/pack.sh npm-out",
        "npm publish",
        "cargo publish --locked",
        "ziglang==",
        "cargo-zigbuild==",
    ] {
        assert!(text.contains(needle), "release.yml lacks {needle}");
    }
}

#[test]
fn a_matrix_of_shards_then_merge_gives_the_single_runs_manifest_and_checks() {
    let single = Runner::new();
    let job = single.run(&[("path", "dist")], CacheSim::Hit);
    job.assert_ok();
    let want = fs::read(single.workspace.join("dist/precompress-manifest.json")).unwrap();

    // Two matrix jobs, each on its own runner with its own copy of the build.
    let build = repo().join("fixtures/site");
    let shards: Vec<Runner> = (1..=2).map(|_| Runner::new()).collect();
    for (k, r) in shards.iter().enumerate() {
        let shard = format!("{}/2", k + 1);
        let job = r.run(&[("path", "dist"), ("shard", &shard)], CacheSim::Hit);
        job.assert_ok();
        assert!(
            job.stdout.contains(&format!("--shard {shard}")),
            "{}",
            job.stdout
        );
    }
    // The fan-in: every file a shard wrote, into the merge job's copy.
    let merge = Runner::new();
    let before = snapshot(&build);
    for r in &shards {
        for (rel, bytes) in snapshot(&r.workspace.join("dist")) {
            if !before.contains_key(&rel) {
                let p = merge.workspace.join("dist").join(&rel);
                fs::create_dir_all(p.parent().unwrap()).unwrap();
                fs::write(p, bytes).unwrap();
            }
        }
    }
    let job = merge.run(
        &[("path", "dist"), ("merge", "true"), ("check", "true")],
        CacheSim::Hit,
    );
    job.assert_ok();
    assert!(job.stdout.contains("merged 2 shards"), "{}", job.stdout);
    let got = fs::read(merge.workspace.join("dist/precompress-manifest.json")).unwrap();
    assert!(
        got == want,
        "the merged manifest differs from the single run's"
    );

    // A shard with check, or shard and merge at once: refused before anything runs.
    for inputs in [
        [("path", "dist"), ("shard", "1/2"), ("check", "true")],
        [("path", "dist"), ("shard", "1/2"), ("merge", "true")],
    ] {
        let r = Runner::new();
        let job = r.run(&inputs, CacheSim::Hit);
        assert_eq!(job.failed.as_deref(), Some("run"), "{inputs:?}");
        assert!(
            job.stdout.contains("::error title=precompress::"),
            "{}",
            job.stdout
        );
        assert!(!r
            .workspace
            .join("dist/precompress-manifest.shard-1-of-2.json")
            .exists());
    }
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
        let v = serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
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
fn a_run_that_cannot_start_still_annotates_and_warnings_become_warning_annotations() {
    let r = Runner::new();
    let job = r.run(&[("path", "no-such-dir")], CacheSim::Hit);
    assert_eq!(job.failed.as_deref(), Some("run"));
    assert!(
        job.stdout.contains("::error title=precompress::") && job.stdout.contains("no-such-dir"),
        "{}",
        job.stdout
    );
    let job = r.run(
        &[("path", "dist"), ("args", "--budget '*.jsx=1KB'")],
        CacheSim::Hit,
    );
    job.assert_ok();
    assert!(
        job.stdout
            .contains("::warning title=precompress::budget \"*.jsx\" matches no asset"),
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
            "::error file=dist/assets/app.js.br,title=precompress::dist/assets/app.js.br: "
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
