//! A real browser: Debian's headless Chromium (driven by playwright-core over CDP,
//! `e2e/browser.mjs`) loads the fixture site from `precompress serve`. The page's
//! script fetches and instantiates `add.wasm` and counts `products.json`; the test
//! reads the markers it wrote, so a variant the browser could not decode fails it.
//! `.ci/e2e.sh` installs Chromium and runs `npm ci` in `e2e/`.

mod serve_util;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use serve_util::*;

/// `node e2e/browser.mjs URL`, with `npm ci` first if `node_modules` is missing.
fn browse(url: &str, force_accept_encoding: Option<&str>) -> Value {
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
