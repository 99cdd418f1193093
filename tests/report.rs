//! `precompress report DIR --out FILE.html` on temp folders: a release with
//! deltas against the one before it (the release store, a folder, the live
//! site), the page written
//! where asked and nothing into DIR, `--github`'s table, and errors that
//! name the path.

mod serve_util;

use std::path::Path;

use serve_util::common::{self, bin, snapshot};

/// Release `n` of a small app in `dist` (emptied first): a page, a script
/// that changes a little per release (fingerprinted), a stylesheet that does
/// not, and an image no coding shrinks.
/// `precompress report DIR --out OUT`, to add to.
fn report(dir: &Path, out: &Path) -> assert_cmd::Command {
    let mut c = bin();
    c.arg("report").arg(dir).arg("--out").arg(out);
    c
}

fn build(dist: &Path, n: usize) {
    let _ = std::fs::remove_dir_all(dist);
    std::fs::create_dir_all(dist.join("assets")).unwrap();
    let mut js = String::from("'use strict';\n");
    for f in 0..600 {
        let extra = if f % 150 == 3 {
            format!(" + {n}")
        } else {
            String::new()
        };
        js.push_str(&format!(
            "export function widget{f}(s) {{ return {{ id: {f}, label: 'widget {f}', total: s.count * {f}{extra} }}; }}\n"
        ));
    }
    std::fs::write(dist.join(format!("assets/index-Q{n}x7Zk9w.js")), js).unwrap();
    let css: String = (0..300)
        .map(|i| format!(".w{i} {{ margin: {i}px; color: #{:06x}; }}\n", i * 997))
        .collect();
    std::fs::write(dist.join("assets/style-B8c2Dq1x.css"), css).unwrap();
    std::fs::write(
        dist.join("assets/logo.png"),
        [0x89u8, b'P', b'N', b'G', 1, 2, 3],
    )
    .unwrap();
    std::fs::write(
        dist.join("index.html"),
        format!(
            "<!doctype html><title>release {n}</title><link rel=\"stylesheet\" href=\"/assets/style-B8c2Dq1x.css\"><script type=\"module\" src=\"/assets/index-Q{n}x7Zk9w.js\"></script>\n"
        ),
    )
    .unwrap();
}

/// Two releases run with one cache folder: the second has deltas.
fn two_releases(tmp: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (dist, cache) = (tmp.join("dist"), tmp.join("cache"));
    for n in 1..=2 {
        build(&dist, n);
        bin()
            .arg(&dist)
            .arg("--no-config")
            .arg("--cache-dir")
            .arg(&cache)
            // The commit a CI names, recorded for the report to name the release.
            .env("GITHUB_SHA", format!("{n}abcdef0123456789"))
            .assert()
            .success();
    }
    (dist, cache)
}

#[test]
fn a_release_with_deltas_is_drawn_and_nothing_is_written_into_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let (dist, cache) = two_releases(tmp.path());
    let m = common::manifest(&dist);
    assert!(
        m["files"]["assets/index-Q2x7Zk9w.js"]["deltas"]
            .as_array()
            .is_some_and(|d| !d.is_empty()),
        "no delta to draw: {m:#}"
    );
    let before = snapshot(&dist);
    let out = tmp.path().join("report.html");
    let done = report(&dist, &out)
        .arg("--cache-dir")
        .arg(&cache)
        .env_remove("GITHUB_STEP_SUMMARY")
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&done.get_output().stdout).into_owned();
    assert!(stdout.contains("1 pages, 1 earlier releases"), "{stdout}");
    assert_eq!(snapshot(&dist), before, "report wrote into DIR");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!doctype html>"));
    for id in ["main", "codings", "deltas", "biggest", "skipped"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "no #{id}");
    }
    // The changed script came as a delta to the visitor back from release 1;
    // the stylesheet was held. Fetched again: the page, the list of
    // dictionaries and the png (none in the store's list), and the script.
    assert!(
        html.contains("<tr><td>release -1</td><td>4</td><td>1</td>"),
        "{html}"
    );
    assert!(html.contains("<code>index.html</code></td><td>3</td>"));
    // Release -1 is named by when it was recorded and its commit.
    assert!(
        html.contains("release -1 (recorded ") && html.contains(", commit 1abcdef01234)"),
        "{html}"
    );
    // The png has no variant: said, with why.
    assert!(html.contains("<code>assets/logo.png</code>"));
    // Without the store, no returning visitor, said so.
    report(&dist, &out).arg("--no-cache").assert().success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("No earlier release (none in the release store, and no"));
}

#[test]
fn github_appends_the_main_chart_as_a_table() {
    let tmp = tempfile::tempdir().unwrap();
    let (dist, cache) = two_releases(tmp.path());
    let out = tmp.path().join("report.html");
    let summary = tmp.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    report(&dist, &out)
        .arg("--cache-dir")
        .arg(&cache)
        .arg("--github")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .assert()
        .success();
    let s = std::fs::read_to_string(&summary).unwrap();
    assert!(s.starts_with("earlier step\n### precompress report"), "{s}");
    assert!(s.contains("| page | first visit (best coding) | dictionaries at idle | back from release -1, with deltas | without deltas |"), "{s}");
    assert!(s.contains("| `index.html` |"), "{s}");
    assert!(s.contains(&out.display().to_string()), "{s}");
}

#[test]
fn errors_name_the_path_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");
    build(&dist, 1);
    let inside = dist.join("report.html");
    let r = report(&dist, &inside).arg("--no-cache").assert().code(2);
    let err = String::from_utf8_lossy(&r.get_output().stderr).into_owned();
    assert!(
        err.contains(&inside.display().to_string()) && err.contains("inside DIR"),
        "{err}"
    );
    assert!(!inside.exists());
    // No run yet: the manifest it needs is named.
    let out = tmp.path().join("r.html");
    let r = report(&dist, &out).arg("--no-cache").assert().code(1);
    let err = String::from_utf8_lossy(&r.get_output().stderr).into_owned();
    assert!(err.contains("precompress-manifest.json"), "{err}");
    assert!(!out.exists());
    let missing = tmp.path().join("nope");
    let r = report(&missing, &out).assert().code(2);
    let err = String::from_utf8_lossy(&r.get_output().stderr).into_owned();
    assert!(err.contains(&missing.display().to_string()), "{err}");
    let no_folder = tmp.path().join("gone/r.html");
    let r = report(&dist, &no_folder).assert().code(2);
    let err = String::from_utf8_lossy(&r.get_output().stderr).into_owned();
    assert!(err.contains(&no_folder.display().to_string()), "{err}");
}

/// Issue #46: `--out` through a symlink wrote into DIR: a link to
/// `dist/index.html` overwrote the page, a dangling one into DIR made a file
/// there, both with exit 0. The link is replaced now, never followed.
#[cfg(unix)]
#[test]
fn out_through_a_link_never_writes_into_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let (dist, cache) = two_releases(tmp.path());
    let before = snapshot(&dist);
    for (name, target) in [
        ("to-page.html", dist.join("index.html")),
        ("dangling.html", dist.join("new-file.html")),
    ] {
        let out = tmp.path().join(name);
        std::os::unix::fs::symlink(&target, &out).unwrap();
        report(&dist, &out)
            .arg("--cache-dir")
            .arg(&cache)
            .env_remove("GITHUB_STEP_SUMMARY")
            .assert()
            .success();
        assert_eq!(snapshot(&dist), before, "{name}: report wrote into DIR");
        let md = std::fs::symlink_metadata(&out).unwrap();
        assert!(
            md.file_type().is_file(),
            "{name}: the link was replaced by the page"
        );
        assert!(std::fs::read_to_string(&out)
            .unwrap()
            .starts_with("<!doctype html>"));
    }
}

/// The "What the deltas saved" row of the visitor back from `label`: what
/// follows the label (assets fetched, as deltas, bytes without and with).
fn back_from<'a>(html: &'a str, label: &str) -> &'a str {
    let at = format!("<tr><td>{label}</td>");
    let i = html
        .find(&at)
        .unwrap_or_else(|| panic!("no row for {label}: {html}"));
    let row = &html[i + at.len()..];
    &row[..row.find("</tr>").unwrap()]
}

/// Issue #47: with `--dictionary-from` a folder or the live site and no
/// release store (the flow the docs recommend for CI), the report showed no
/// returning visitor while its own table listed the deltas. It reads the
/// earlier release's published list of dictionaries, as the run did, and
/// draws the same visitor the store gives.
#[test]
fn the_returning_visitor_is_drawn_from_a_folder_and_from_the_live_site() {
    let tmp = tempfile::tempdir().unwrap();
    let (dist, cache) = two_releases(tmp.path());
    let out = tmp.path().join("report.html");
    report(&dist, &out)
        .arg("--cache-dir")
        .arg(&cache)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    let stored = back_from(&html, "release -1").to_string();

    let (r1, r2) = (tmp.path().join("r1"), tmp.path().join("r2"));
    build(&r1, 1);
    build(&r2, 2);
    bin()
        .args(["--no-config", "--no-cache"])
        .arg(&r1)
        .assert()
        .success();
    bin()
        .args(["--no-config", "--no-cache"])
        .arg(&r2)
        .arg("--dictionary-from")
        .arg(&r1)
        .assert()
        .success();
    let done = report(&r2, &out)
        .arg("--no-cache")
        .arg("--dictionary-from")
        .arg(&r1)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&done.get_output().stdout).into_owned();
    assert!(stdout.contains("1 earlier releases"), "{stdout}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(!html.contains("No earlier release"), "{html}");
    assert_eq!(back_from(&html, &r1.display().to_string()), stored);
    // The headline says what --json says: a first visit of the landing
    // page and the visitor back from r1.
    let json = report(&r2, &out)
        .arg("--json")
        .arg("--no-cache")
        .arg("--dictionary-from")
        .arg(&r1)
        .assert()
        .success();
    let figures: serde_json::Value = serde_json::from_slice(&json.get_output().stdout).unwrap();
    let h = &figures["headline"];
    assert_eq!(h["page"], "index.html");
    assert_eq!(h["against"], r1.display().to_string());
    let (first, back) = (
        h["first"].as_u64().unwrap(),
        h["returning"].as_u64().unwrap(),
    );
    assert!(back * 2 < first, "{h}");
    use precompressor::report::human;
    let line = format!(
        "<strong>A first visit of <code>index.html</code> downloads {}</strong>",
        human(first)
    );
    assert!(html.contains(&line), "{line} not in {html}");
    assert!(
        html.contains(&format!("downloads {}</strong>, ", human(back))),
        "{html}"
    );
    // --json alone: no --out needed, nothing written.
    let before = std::fs::read_dir(tmp.path()).unwrap().count();
    bin()
        .args(["report", "--json", "--no-cache"])
        .arg(&r2)
        .assert()
        .success();
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), before);
    bin()
        .args(["report", "--no-cache"])
        .arg(&r2)
        .assert()
        .code(2);

    let server = serve_util::start_precompress(&r1, &["-q"]);
    let site = format!("http://{}/", server.addr);
    report(&r2, &out)
        .arg("--no-cache")
        .arg("--dictionary-from")
        .arg(&site)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    let label = format!("the live site ({site})");
    assert_eq!(back_from(&html, &label), stored);
    // The live site serving this very build is no earlier release.
    let served = serve_util::start_precompress(&r2, &["-q"]);
    let done = report(&r2, &out)
        .arg("--no-cache")
        .arg("--dictionary-from")
        .arg(format!("http://{}/", served.addr))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&done.get_output().stdout).into_owned();
    assert!(stdout.contains("0 earlier releases"), "{stdout}");
}

/// One definition of a visit: the run's summary says the report's headline,
/// the same page and bytes, first visit and returning visitor alike.
#[test]
fn the_run_s_summary_says_the_report_s_headline_visit() {
    use precompressor::report::human;
    let tmp = tempfile::tempdir().unwrap();
    let (dist, cache) = two_releases(tmp.path());
    let said = bin()
        .arg(&dist)
        .arg("--no-config")
        .arg("--cache-dir")
        .arg(&cache)
        .output()
        .unwrap();
    assert!(said.status.success());
    let said = String::from_utf8_lossy(&said.stdout).into_owned();
    let json = bin()
        .args(["report", "--json"])
        .arg(&dist)
        .arg("--cache-dir")
        .arg(&cache)
        .output()
        .unwrap();
    let figures: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let h = &figures["headline"];
    let bytes = |k: &str| human(h[k].as_u64().unwrap_or_else(|| panic!("{k}: {h}")));
    let line = said
        .lines()
        .find(|l| l.contains("a visit:"))
        .unwrap_or_else(|| panic!("no visit in the summary:\n{said}"));
    let want = format!(
        "a first visit of {} downloads {} (gzip: {}, uncompressed: {}); a visitor back from {} downloads {}",
        h["page"].as_str().unwrap(),
        bytes("first"),
        bytes("gzip"),
        bytes("identity"),
        h["against"].as_str().unwrap(),
        bytes("returning"),
    );
    assert!(line.contains(&want), "{line}\nwant: {want}");
}
