//! Pages in a real browser (issue #45): each HTML page the dictionary of its
//! own next version. A docs site at three releases, precompressed in each
//! way a team finds the earlier release, served by `precompress serve` from a
//! symlink a deploy swaps, and visited page by page in headless Chromium
//! (`e2e/pages.mjs`): Python's documentation (Sphinx) with releases made by
//! editing its HTML, and a VitePress site built from the docs fastify ships
//! at three consecutive releases (`e2e/apps/docs`). `.ci/e2e.sh` installs
//! Chromium, playwright-core, python3.11-doc and Node 24.

mod serve_util;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;
use serve_util::browser::{browser_ready, e2e_script};
use serve_util::repo;

/// Where Debian's python3.11-doc puts Python's HTML documentation.
const PYTHON_DOCS: &str = "/usr/share/doc/python3.11/html";

/// Issue #45: each page the dictionary of its own next version. Three
/// releases of a docs site whose generator changes every page with each
/// release (`e2e/pages.mjs`, on Python's documentation), a visitor who lands
/// on six of its pages directly in each release, in Chromium, with the
/// earlier release found in each way a team finds it (the release store,
/// `--dictionary-from` a folder, the live site). Every page shown is the
/// release's file (a page changed between two visits is shown new); after
/// each release every page arrives as a delta against the copy the visitor
/// holds (the browser offers the page's own previous version), and the
/// whole returning visit, every response's body, is at most 5% of a first
/// visit's, and a first visit fetches at most 2% of its bytes at idle for
/// dictionaries. With `--no-page-dictionary` pages are sent `no-cache`, the
/// browser never offers a page as its own dictionary, and every page is
/// still right.
#[test]
#[ignore = "e2e tier: needs Chromium, node and python3.11-doc; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn every_page_a_returning_visitor_opens_arrives_as_a_delta_of_their_own_copy() {
    browser_ready();
    assert!(
        std::path::Path::new(PYTHON_DOCS).join("library").is_dir(),
        "{PYTHON_DOCS} missing: run `bash .ci/e2e.sh` (python3.11-doc)"
    );
    let work = repo().join("target/field/pages");
    let r = e2e_script("pages.mjs", &[PYTHON_DOCS.as_ref(), work.as_os_str()], &[]);
    assert_every_page_a_delta(&r);
    // These pages change only in the version they name: each arrives in at
    // most 300 B.
    for (mode, m) in r["modes"].as_object().unwrap() {
        if mode == "off" {
            continue;
        }
        for v in &m["visits"].as_array().unwrap()[1..] {
            for d in v["documents"].as_array().unwrap() {
                assert!(d["encodedBytes"].as_u64().unwrap() <= 300, "{mode}: {d}");
            }
        }
    }
}

/// The same on a site a real static-site generator built from the
/// registry: VitePress 1.6 on the 41 markdown pages fastify ships in its
/// tarball, at 5.12.0, 5.12.1 and 5.12.2 (`e2e/apps/docs/build.sh`; each
/// release changes the text of one or two pages, and every page's HTML,
/// which inlines the site's data and its version), a visitor who lands on six
/// of its pages directly (as from a search) in each release. Beside what the
/// Python docs test asserts, each script, stylesheet or dictionary that
/// changed (a new name) and that the release compresses came as a delta.
/// Installs and builds are kept in `target/field/vitepress` (a rerun reuses
/// `node_modules` and the fastify tarballs).
#[test]
#[ignore = "e2e tier: needs Chromium, node and the npm registry; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn every_page_of_a_vitepress_site_a_returning_visitor_opens_arrives_as_a_delta_of_their_own_copy() {
    browser_ready();
    let t0 = std::time::Instant::now();
    let build_dir: PathBuf = repo().join("target/field/vitepress");
    let build = Command::new("bash")
        .arg(repo().join("e2e/apps/docs/build.sh"))
        .arg(&build_dir)
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "e2e/apps/docs/build.sh failed:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    eprintln!("vitepress: three releases built in {:.1?}", t0.elapsed());
    let t1 = std::time::Instant::now();
    let releases: Vec<PathBuf> = (1..=3)
        .map(|n| build_dir.join(format!("release-{n}")))
        .collect();
    let work = repo().join("target/field/pages-vitepress");
    let mut args: Vec<&std::ffi::OsStr> = vec!["--releases".as_ref()];
    args.extend(releases.iter().map(|p| p.as_os_str()));
    args.push(work.as_os_str());
    // Two modes at a time: one precompresses while the other's browser waits.
    let r = e2e_script("pages.mjs", &args, &[("PAGE_JOBS", "2")]);
    eprintln!(
        "vitepress: precompressed and visited in four modes in {:.1?}",
        t1.elapsed()
    );
    assert!(r["pages"].as_u64().unwrap() >= 40, "{}", r["pages"]);
    assert_every_page_a_delta(&r);
}

/// What both sites must show, in every mode (`e2e/pages.mjs`'s JSON).
fn assert_every_page_a_delta(r: &Value) {
    let modes = r["modes"].as_object().unwrap();
    // serde_json's map is sorted by key.
    assert_eq!(
        modes.keys().collect::<Vec<_>>(),
        ["cache", "from", "off", "site"],
        "{r:#}"
    );
    for (mode, m) in modes {
        let visits = m["visits"].as_array().unwrap();
        assert_eq!(visits.len(), 3, "{mode}");
        let first = m["firstVisit"]["bytes"].as_u64().unwrap();
        assert!(first > 0, "{mode}: {m}");
        // What a first visit fetches at idle for dictionaries is at most 2%
        // of it (`--shared-dictionary auto`'s budget, on its landing page).
        let idle = m["firstVisit"]["dictionaries"].as_u64().unwrap();
        assert!(
            idle as f64 <= 0.02 * first as f64,
            "{mode}: a first visit fetched {idle} B of dictionaries at idle of {first} B"
        );
        for (i, v) in visits.iter().enumerate() {
            assert_eq!(v["errors"], serde_json::json!([]), "{mode}: {v}");
            assert_eq!(v["failed"], serde_json::json!([]), "{mode}: {v}");
            let docs = v["documents"].as_array().unwrap();
            assert_eq!(docs.len(), 6, "{mode} visit {}: {v}", i + 1);
            for d in docs {
                assert_eq!(d["decodesToTheFile"], true, "{mode} visit {}: {d}", i + 1);
            }
            for a in v["assets"].as_array().unwrap() {
                assert_eq!(a["decodesToTheFile"], true, "{mode} visit {}: {a}", i + 1);
                if i > 0 && a["changed"] == true && a["compressed"] == true {
                    assert!(
                        matches!(a["contentEncoding"].as_str(), Some("dcb" | "dcz")),
                        "{mode} visit {}: a changed file not sent as a delta: {a}",
                        i + 1
                    );
                }
            }
            let bytes = v["bytes"].as_u64().unwrap();
            eprintln!(
                "pages ({mode}) visit {}: {bytes} B, {:.2}% of a first visit's {first} B",
                i + 1,
                bytes as f64 * 100.0 / first as f64
            );
            if i == 0 {
                continue;
            }
            if mode == "off" {
                for d in docs {
                    assert_eq!(d["cacheControl"], "no-cache", "{d}");
                    assert_eq!(d["offeredItself"], false, "{d}");
                }
                continue;
            }
            for d in docs {
                assert_eq!(d["offeredItself"], true, "{mode} visit {}: {d}", i + 1);
                assert!(
                    matches!(d["contentEncoding"].as_str(), Some("dcb" | "dcz")),
                    "{mode} visit {}: not a delta: {d}",
                    i + 1
                );
                assert_eq!(
                    d["cacheControl"],
                    precompressor::manifest::CACHE_PAGE_KEPT,
                    "{d}"
                );
            }
            assert!(
                bytes as f64 <= 0.05 * first as f64,
                "{mode} visit {}: a returning visitor downloaded {bytes} B of a first visit's {first} B",
                i + 1
            );
        }
    }
    // A first visit pays nothing for page dictionaries: no more bytes than
    // with them off (the same bodies; pages only carry one more header).
    let (on, off) = (
        modes["cache"]["firstVisit"]["bytes"].as_u64().unwrap(),
        modes["off"]["firstVisit"]["bytes"].as_u64().unwrap(),
    );
    assert!(
        on <= off,
        "first visit {on} B with page dictionaries, {off} B without"
    );
}
