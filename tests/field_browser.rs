//! Deltas in the field, in a real browser. For each framework, its real
//! build from the registry (`e2e/apps/APP`, built twice by
//! `e2e/apps/build.sh`: release 1, then a few lines changed in a component
//! and a stylesheet), precompressed as a user would (one cache folder, no
//! earlier release kept by hand), served by `precompress serve` from a
//! symlink a deploy swaps, and visited by headless Chromium as a returning
//! visitor of release 1 and as a first-time visitor of release 2
//! (`e2e/field.mjs`). Asserted: every page rendered release 2 with no
//! console error; every script and stylesheet that changed came as `dcb` or
//! `dcz` and decoded to the new file; and the returning visitor downloaded
//! at most 10% of the first-time visitor's JS and CSS bytes, dictionaries
//! included. Measured on main before this work: Vite + React under a base
//! path 100%, SvelteKit 47%, Astro 16%, Nuxt 100%.
//!
//! The apps' installs and builds are kept in `target/field/APP` (a rerun
//! reuses `node_modules`); `.ci/e2e.sh` installs Chromium and playwright-core.

mod serve_util;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;
use serve_util::repo;

/// One framework at a time: a build takes both cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Chromium and playwright-core, as `.ci/e2e.sh` installs them.
fn browser_ready() {
    let e2e = repo().join("e2e");
    assert!(
        e2e.join("node_modules/playwright-core").is_dir()
            && std::path::Path::new("/usr/lib/chromium/chromium").exists(),
        "Chromium or playwright-core missing: run `bash .ci/e2e.sh`"
    );
}

/// `node e2e/SCRIPT ARGS` with the binary under test: its JSON result.
fn e2e_script(script: &str, args: &[&std::ffi::OsStr]) -> Value {
    let out = Command::new("node")
        .arg(repo().join("e2e").join(script))
        .args(args)
        .env("PRECOMPRESS", assert_cmd::cargo::cargo_bin("precompress"))
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

fn field(app: &str) -> Value {
    browser_ready();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work: PathBuf = repo().join("target/field").join(app);
    let build = Command::new("bash")
        .arg(repo().join("e2e/apps/build.sh"))
        .arg(app)
        .arg(&work)
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "build.sh {app} failed:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let r = e2e_script("field.mjs", &[app.as_ref(), work.as_os_str()]);
    eprintln!(
        "{app}: first-time JS+CSS {} B (+ {} B of dictionaries at idle); returning {} B ({} B of it dictionaries): {:.2}%",
        r["firstTime"]["code"],
        r["firstTime"]["dictionaries"],
        r["returning"]["total"],
        r["returning"]["dictionaries"],
        r["ratio"].as_f64().unwrap() * 100.0
    );
    r
}

fn assert_deltas_reached_the_returning_visitor(r: &Value) {
    let app = r["app"].as_str().unwrap();
    assert_eq!(r["errors"], serde_json::json!([]), "{app}: {r:#}");
    assert_eq!(r["failed"], serde_json::json!([]), "{app}: {r:#}");
    // Every page rendered, and rendered release 2 where it shows the release.
    let (seen, now) = (
        r["pagesSeen"].as_array().unwrap(),
        r["pages"].as_array().unwrap(),
    );
    assert_eq!(seen.len(), now.len());
    let mut shown = 0;
    for (a, b) in seen.iter().zip(now) {
        assert_eq!(b["status"], 200, "{app}: {b}");
        if !a["release"].is_null() {
            assert_ne!(
                a["release"], b["release"],
                "{app}: release 1 still shown: {b}"
            );
            shown += 1;
        }
    }
    assert!(shown > 0, "{app}: no page shows its release: {now:?}");
    // Every changed script and stylesheet came as a delta and decoded to the
    // new file; below the dictionary threshold (a delta's own 36-40 byte
    // header is most of such a file) they may come whole.
    let changed = r["changed"].as_array().unwrap();
    assert!(!changed.is_empty(), "{app}: nothing changed? {r:#}");
    for c in changed {
        assert_eq!(c["decodesToTheFile"], true, "{app}: {c}");
        let small = c["size"].as_u64().unwrap() < precompressor::dictionary::DICTIONARY_MIN_SIZE;
        let coding = c["contentEncoding"].as_str().unwrap_or("identity");
        assert!(
            small || coding == "dcb" || coding == "dcz",
            "{app}: {} came as {coding}, not a delta: {c}",
            c["url"]
        );
    }
    let ratio = r["ratio"].as_f64().unwrap();
    assert!(
        ratio <= 0.10,
        "{app}: the returning visitor downloaded {:.1}% of a first visit",
        ratio * 100.0
    );
}

#[test]
#[ignore = "e2e tier: needs Chromium, node and the npm registry; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn vite_react_under_a_base_path_with_same_named_lazy_chunks() {
    let r = field("vite-react");
    assert_eq!(r["base"], "/app/");
    assert_deltas_reached_the_returning_visitor(&r);
}

#[test]
#[ignore = "e2e tier: needs Chromium, node and the npm registry; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn sveltekit_with_adapter_static() {
    let r = field("sveltekit");
    assert!(r["sharedDictionary"]
        .as_str()
        .unwrap()
        .starts_with("_app/immutable/chunks/"));
    assert_deltas_reached_the_returning_visitor(&r);
}

#[test]
#[ignore = "e2e tier: needs Chromium, node and the npm registry; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn astro_static_with_a_client_island() {
    assert_deltas_reached_the_returning_visitor(&field("astro"));
}

#[test]
#[ignore = "e2e tier: needs Chromium, node and the npm registry; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn nuxt_generate() {
    let r = field("nuxt");
    assert!(r["sharedDictionary"]
        .as_str()
        .unwrap()
        .starts_with("_nuxt/"));
    assert_deltas_reached_the_returning_visitor(&r);
}

/// Where Debian's python3.11-doc puts Python's HTML documentation.
const PYTHON_DOCS: &str = "/usr/share/doc/python3.11/html";

/// The documents dictionary on real multi-page HTML: pages of Python's
/// documentation as two releases (`e2e/documents.mjs`). A first-time
/// visitor opens five pages: the first comes as br and links the
/// dictionary, fetched at idle; every later one comes as a delta against
/// it. After the deploy the visitor comes back: every page, and the next
/// dictionary, comes as a delta; every body decodes to the file on disk.
#[test]
#[ignore = "e2e tier: needs Chromium, node and python3.11-doc; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn python_docs_pages_come_as_deltas_against_the_documents_dictionary() {
    browser_ready();
    assert!(
        std::path::Path::new(PYTHON_DOCS).join("library").is_dir(),
        "{PYTHON_DOCS} missing: run `bash .ci/e2e.sh` (python3.11-doc)"
    );
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = repo().join("target/field/documents");
    let r = e2e_script("documents.mjs", &[PYTHON_DOCS.as_ref(), work.as_os_str()]);
    assert_eq!(r["errors"], serde_json::json!([]), "{r:#}");
    assert_eq!(r["failed"], serde_json::json!([]), "{r:#}");
    let dicts = r["documentsDictionary"].as_array().unwrap();
    assert!(dicts.iter().all(|d| d.is_string()), "{r:#}");
    let delta = |d: &Value| matches!(d["contentEncoding"].as_str(), Some("dcb" | "dcz"));
    let first = r["first"]["documents"].as_array().unwrap();
    let returning = r["returning"]["documents"].as_array().unwrap();
    assert_eq!((first.len(), returning.len()), (5, 5), "{r:#}");
    for d in first.iter().chain(returning) {
        assert_eq!(d["decodesToTheFile"], true, "{d}");
    }
    assert!(!delta(&first[0]), "no dictionary yet: {}", first[0]);
    for d in first[1..].iter().chain(returning) {
        assert!(delta(d), "not a delta: {d}");
    }
    // The next dictionary itself came as a delta against the one held.
    let fetched = r["dictionaryFetches"][1].as_array().unwrap();
    assert!(
        fetched.iter().any(
            |f| matches!(f["contentEncoding"].as_str(), Some("dcb" | "dcz"))
                && f["encodedBytes"].as_u64().unwrap() > 0
        ),
        "{fetched:?}"
    );
    let (bytes, br, dict) = (
        r["returning"]["bytes"].as_u64().unwrap(),
        r["returning"]["brBytes"].as_u64().unwrap(),
        r["returning"]["dictionaries"].as_u64().unwrap(),
    );
    eprintln!(
        "python docs: first visit {} B + {} B dictionary (br {} B); returning {bytes} B + {dict} B (br {br} B)",
        r["first"]["bytes"], r["first"]["dictionaries"], r["first"]["brBytes"]
    );
    assert!(bytes + dict < br, "returning {bytes} + {dict} B, br {br} B");
}
