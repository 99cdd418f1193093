//! A real browser: Debian's headless Chromium (driven by playwright-core over CDP,
//! `e2e/browser.mjs`) loads the fixture site from `precompress serve`. The page's
//! script fetches and instantiates `add.wasm` and counts `products.json`; the test
//! reads the markers it wrote, so a variant the browser could not decode fails it.
//! `.ci/e2e.sh` installs Chromium and runs `npm ci` in `e2e/`.
//!
//! Deltas (RFC 9842): Chromium loads release 1 of a small app from `precompress
//! serve`, the same origin switches to release 2 (precompress reruns there with
//! `--dictionary-from` release 1; the server picks the new manifest up), and the
//! browser loads it again (`e2e/releases.mjs`): what the browser saw shows it
//! offered the old script as a dictionary, got a delta, and ran the new code.

mod serve_util;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;
use serve_util::*;

/// Checks for Chromium and runs `npm ci` in `e2e/` if `node_modules` is missing.
fn browser_ready() -> std::path::PathBuf {
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

/// `node e2e/browser.mjs URL`.
fn browse(url: &str, force_accept_encoding: Option<&str>) -> Value {
    let e2e = browser_ready();
    let mut cmd = Command::new("node");
    cmd.arg("browser.mjs").arg(url).current_dir(&e2e);
    if let Some(ae) = force_accept_encoding {
        cmd.env("FORCE_ACCEPT_ENCODING", ae);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "browser.mjs failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The page ran: WASM instantiated, JSON counted, CSS applied, no script error.
fn assert_page_ran(r: &Value) {
    assert_eq!(r["marker"], "wasm:5", "{r:#}");
    assert_eq!(r["dataCount"], "products:60", "{r:#}");
    assert_eq!(r["ready"], "true", "{r:#}");
    assert_eq!(r["cssApplied"], true, "{r:#}");
    assert_eq!(r["consoleErrors"], serde_json::json!([]), "{r:#}");
}

fn encoding_of<'a>(r: &'a Value, path: &str) -> Option<&'a str> {
    let resp = r["responses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["path"] == path)
        .unwrap_or_else(|| panic!("no response for {path}: {r:#}"));
    assert_eq!(resp["status"], 200, "{path}: {r:#}");
    resp["contentEncoding"].as_str()
}

const COMPRESSED: &[&str] = &[
    "/",
    "/assets/app.js",
    "/assets/style.css",
    "/assets/add.wasm",
    "/data/products.json",
];

#[test]
#[ignore = "e2e tier: needs Chromium and node; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn chromium_runs_the_precompressed_page() {
    let (_tmp, site) = precompressed_site();
    let server = start_precompress(&site, &[]);
    let url = format!("http://{}/", server.addr);
    let manifest = manifest(&site);

    // What Chromium advertises by itself: on loopback, `gzip, deflate, br, zstd`.
    let r = browse(&url, None);
    assert_page_ran(&r);
    for path in COMPRESSED {
        let rel = if *path == "/" {
            "index.html"
        } else {
            &path[1..]
        };
        let smallest = manifest["files"][rel]["encodings"][0]["coding"].as_str();
        let got = encoding_of(&r, path);
        assert!(matches!(got, Some("br" | "zstd")), "{path}: {got:?}");
        assert_eq!(got, smallest, "{path}: not the smallest variant");
    }

    // Each of the two modern codings on its own, decoded by the browser.
    for coding in ["zstd", "br"] {
        let r = browse(&url, Some(coding));
        assert_page_ran(&r);
        for path in COMPRESSED {
            assert_eq!(encoding_of(&r, path), Some(coding), "{path} [{coding}]");
        }
    }
}

/// The SHA-256 of `bytes` as `Available-Dictionary` carries it.
fn sf_sha256(bytes: &[u8]) -> String {
    use base64::Engine;
    use sha2::Digest;
    format!(
        ":{}:",
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(bytes))
    )
}

/// What the browser saw for the response to `path` in one load.
fn response<'a>(load: &'a Value, path: &str) -> &'a Value {
    load["responses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == path)
        .unwrap_or_else(|| panic!("no response for {path}: {load:#}"))
}

/// Serves release 1 from a folder, loads it in Chromium, turns the same
/// folder into release 2 with deltas (`delta_formats`), loads again; returns
/// both loads as the browser saw them, and the old and new script.
fn load_two_releases(delta_formats: &str) -> (Value, Value, Vec<u8>, String) {
    let e2e = browser_ready();
    let tmp = tempfile::tempdir().unwrap();
    let (r1, r2, old_js, new_js) = serve_util::two_releases(tmp.path());
    let live = tmp.path().join("live");
    serve_util::copy_dir(&r1, &live);
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
    let server = start_precompress(&live, &[]);
    // `localhost`: dictionaries are for secure contexts, and loopback is one.
    let url = format!("http://localhost:{}/", server.addr.port());
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
    writeln!(child.stdin.as_mut().unwrap()).unwrap();
    let second: Value = serde_json::from_str(&out.next().expect("second load").unwrap()).unwrap();
    assert!(
        child.wait().unwrap().success(),
        "releases.mjs failed: {first:#} {second:#}"
    );
    let old = std::fs::read(r1.join(old_js)).unwrap();
    (first, second, old, format!("/{new_js}"))
}

#[test]
#[ignore = "e2e tier: needs Chromium and node; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn chromium_decodes_deltas_against_the_release_it_holds() {
    for coding in ["dcb", "dcz"] {
        let (first, second, old_script, new_path) = load_two_releases(coding);
        assert!(
            first["marker"].as_str().unwrap().starts_with("release-1"),
            "{first:#}"
        );
        let r = response(&first, "/assets/app-1a2b3c4d.js");
        assert_eq!(
            r["useAsDictionary"], "match=\"/assets/app-*.js\"",
            "{first:#}"
        );
        assert_eq!(r["availableDictionary"], Value::Null);

        // The new bundle: requested with the old one as dictionary, sent as a
        // delta, decoded, and its code ran (release 2 computes 2 * 3 + 1).
        let r = response(&second, &new_path);
        assert_eq!(r["status"], 200, "{second:#}");
        assert_eq!(
            r["availableDictionary"],
            sf_sha256(&old_script),
            "{second:#}"
        );
        let ae = r["acceptEncoding"].as_str().unwrap();
        assert!(ae.contains(coding), "{ae}");
        assert_eq!(r["contentEncoding"], coding, "[{coding}] {second:#}");
        assert_eq!(r["vary"], "Accept-Encoding, Available-Dictionary");
        assert_eq!(r["useAsDictionary"], "match=\"/assets/app-*.js\"");
        assert_eq!(second["marker"], "release-2:7", "{second:#}");
        assert_eq!(second["errors"], serde_json::json!([]));
    }
}
