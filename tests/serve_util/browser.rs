//! Headless Chromium (Debian's, driven by playwright-core over CDP from
//! `e2e/`) for the serving tests: the check that it is there, and a visit
//! across a release (`e2e/releases.mjs`): the browser loads release 1 of
//! [`two_releases`](super::two_releases), the same origin switches to release
//! 2 precompressed with `--dictionary-from` release 1, and the browser loads
//! it again, saying for each response what it offered and got.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::{need, repo};

/// Checks for Chromium and runs `npm ci` in `e2e/` if `node_modules` is missing.
pub fn browser_ready() -> PathBuf {
    let e2e = repo().join("e2e");
    need("node");
    let chromium = "/usr/lib/chromium/chromium";
    assert!(
        Path::new(chromium).is_file(),
        "{chromium} missing: run `bash .ci/e2e.sh` (Debian chromium)"
    );
    if !e2e.join("node_modules/playwright-core").is_dir() {
        let st = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
            .current_dir(&e2e)
            .status()
            .expect("npm");
        assert!(st.success(), "npm ci in e2e/ failed");
    }
    e2e
}

/// The SHA-256 of `bytes` as `Available-Dictionary` carries it.
pub fn sf_sha256(bytes: &[u8]) -> String {
    use base64::Engine;
    use sha2::Digest;
    format!(
        ":{}:",
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(bytes))
    )
}

/// What the browser saw for the response to `path` in one load.
pub fn response<'a>(load: &'a Value, path: &str) -> &'a Value {
    load["responses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == path)
        .unwrap_or_else(|| panic!("no response for {path}: {load:#}"))
}

/// Two loads of one origin across a release, as the browser saw them.
pub struct Visit {
    pub first: Value,
    pub second: Value,
    /// Release 1's script: the dictionary the browser should offer.
    pub old_script: Vec<u8>,
    /// URL path of release 2's script.
    pub new_path: String,
}

/// Serves release 1 from a folder with the server `start` gives (its port,
/// and what must live as long as it), loads it in Chromium, turns the same
/// folder into release 2 with deltas (`delta_formats`), calls `deployed` (for
/// a server that must be told), and loads again.
pub fn visit_across_a_release<S>(
    delta_formats: &str,
    start: impl FnOnce(&Path, &Path) -> (u16, S),
    deployed: impl FnOnce(&S, &Path, &Path),
) -> Visit {
    let e2e = browser_ready();
    let tmp = tempfile::tempdir().unwrap();
    let (r1, r2, old_js, new_js) = super::two_releases(tmp.path());
    let live = tmp.path().join("live");
    super::copy_dir(&r1, &live);
    let run = |args: &[&std::ffi::OsStr]| {
        let out = assert_cmd::Command::cargo_bin("precompress")
            .unwrap()
            .args(["--quiet", "--no-config"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[live.as_os_str()]);
    // The first release is kept as a build folder, as CI would keep it.
    run(&[r1.as_os_str()]);
    let (port, server) = start(&live, tmp.path());
    // `localhost`: dictionaries are for secure contexts, and loopback is one.
    let url = format!("http://localhost:{port}/");
    let mut child = Command::new("node")
        .arg("releases.mjs")
        .arg(&url)
        .current_dir(&e2e)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&out.next().expect("first load").unwrap()).unwrap();

    // Deploy release 2 on the same origin: new page, new script name.
    std::fs::remove_file(live.join(old_js)).unwrap();
    for f in ["index.html", new_js] {
        std::fs::copy(r2.join(f), live.join(f)).unwrap();
    }
    run(&[
        live.as_os_str(),
        "--dictionary-from".as_ref(),
        r1.as_os_str(),
        "--delta-formats".as_ref(),
        delta_formats.as_ref(),
    ]);
    deployed(&server, &live, tmp.path());
    writeln!(child.stdin.as_mut().unwrap()).unwrap();
    let second: Value = serde_json::from_str(&out.next().expect("second load").unwrap()).unwrap();
    assert!(
        child.wait().unwrap().success(),
        "releases.mjs failed: {first:#} {second:#}"
    );
    drop(server);
    Visit {
        first,
        second,
        old_script: std::fs::read(r1.join(old_js)).unwrap(),
        new_path: format!("/{new_js}"),
    }
}

/// `node e2e/SCRIPT ARGS` with the binary under test (and `env` added): the
/// JSON it prints. A failing script fails the test with what it printed.
pub fn e2e_script(script: &str, args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> Value {
    let out = Command::new("node")
        .arg(repo().join("e2e").join(script))
        .args(args)
        .env("PRECOMPRESS", assert_cmd::cargo::cargo_bin("precompress"))
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script} {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
