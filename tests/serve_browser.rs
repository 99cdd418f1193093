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

use std::process::Command;

use serde_json::Value;
use serve_util::browser::*;
use serve_util::*;

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

#[test]
#[ignore = "e2e tier: needs Chromium and node; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn chromium_decodes_deltas_against_the_release_it_holds() {
    for coding in ["dcb", "dcz"] {
        let Visit {
            first,
            second,
            old_script,
            new_path,
        } = visit_across_a_release(
            coding,
            |live, _| {
                let server = start_precompress(live, &[]);
                (server.addr.port(), server)
            },
            // It picks the new manifest up by itself.
            |_, _, _| {},
        );
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
