//! `precompress report` in a real browser, on a real framework build with
//! deltas: the Vite + React app of `e2e/apps` built three times
//! (`e2e/apps/build.sh`), each release precompressed in turn with one cache
//! folder (the store holds the releases before it), then the last
//! release's report opened in headless Chromium (`e2e/report.mjs`).
//! Asserted: the page rendered its charts with no console error and made no
//! request but for itself, and so did the report of the flows with no store
//! (`--dictionary-from` release 2's folder, and the live site), whose
//! headline is the store's; a screenshot is kept in
//! `target/report-browser/report.png` (docs/report.png is one of them).

mod serve_util;

use std::process::Command;

use serve_util::repo;

#[test]
#[ignore = "e2e tier: needs Chromium, node and the npm registry; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn the_report_of_a_vite_build_with_deltas_renders_in_chromium_and_fetches_nothing() {
    assert!(
        repo().join("e2e/node_modules/playwright-core").is_dir()
            && std::path::Path::new("/usr/lib/chromium/chromium").exists(),
        "Chromium or playwright-core missing: run `bash .ci/e2e.sh`"
    );
    let work = repo().join("target/report-browser");
    let built = Command::new("bash")
        .arg(repo().join("e2e/apps/build.sh"))
        .arg("vite-react")
        .arg(work.join("app"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "build.sh failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let mut last = None;
    for n in 1..=3 {
        let dir = tmp.path().join(format!("release-{n}"));
        serve_util::copy_dir(&work.join(format!("app/release-{n}")), &dir);
        serve_util::common::succeeds(&[
            dir.as_os_str(),
            "--no-config".as_ref(),
            "--base".as_ref(),
            "/app/".as_ref(),
            "--cache-dir".as_ref(),
            cache.as_os_str(),
        ]);
        last = Some(dir);
    }
    let dir = last.unwrap();
    let page = work.join("report.html");
    let said = serve_util::common::succeeds(&[
        "report".as_ref(),
        dir.as_os_str(),
        "--out".as_ref(),
        page.as_os_str(),
        "--cache-dir".as_ref(),
        cache.as_os_str(),
    ]);
    assert!(said.contains("2 earlier releases"), "{said}");
    let html = std::fs::read_to_string(&page).unwrap();
    // The returning visitor got deltas: the deltas' table has a non-zero
    // "as deltas" count for the release before.
    let row = html
        .split("<tr><td>release -1</td>")
        .nth(1)
        .expect("no row for release -1");
    let as_delta: usize = row
        .split("<td>")
        .nth(2)
        .unwrap()
        .split('<')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        as_delta > 0,
        "no delta for a visitor back from release 2: {row}"
    );
    let shot = work.join("report.png");
    let r = Command::new("node")
        .arg(repo().join("e2e/report.mjs"))
        .arg(&page)
        .arg(&shot)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    eprintln!("{v}");
    assert_eq!(v["errors"], serde_json::json!([]), "console errors: {v}");
    assert_eq!(
        v["requests"],
        serde_json::json!([v["url"]]),
        "requests beyond the page: {v}"
    );
    let charts = v["charts"].as_array().unwrap();
    assert_eq!(charts.len(), 4, "{v}");
    for c in charts {
        assert!(
            c["width"].as_u64().unwrap() > 300 && c["height"].as_u64().unwrap() > 40,
            "{c}"
        );
        assert!(c["bars"].as_u64().unwrap() > 2, "{c}");
    }
    assert!(
        v["main"].as_str().unwrap().contains("back from release -1"),
        "{v}"
    );
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000);

    // Issue #47: the flows with no store, release 2 as its folder and as the
    // live site: the same returning visitor, drawn as well.
    let headline = |args: &[&std::ffi::OsStr]| -> serde_json::Value {
        let mut all = vec!["report".as_ref(), dir.as_os_str(), "--json".as_ref()];
        all.extend_from_slice(args);
        serde_json::from_str::<serde_json::Value>(&serve_util::common::succeeds(&all)).unwrap()
            ["headline"]
            .clone()
    };
    let stored = headline(&["--cache-dir".as_ref(), cache.as_os_str()]);
    let release_2 = tmp.path().join("release-2");
    let server = serve_util::start_precompress(&release_2, &["-q"]);
    let live = format!("http://{}/app/", server.addr);
    for (from, label) in [
        (
            release_2.display().to_string(),
            release_2.display().to_string(),
        ),
        (live.clone(), format!("the live site ({live})")),
    ] {
        let h = headline(&[
            "--no-cache".as_ref(),
            "--dictionary-from".as_ref(),
            from.as_ref(),
        ]);
        assert_eq!(h["against"], label.as_str());
        assert_eq!(
            h["returning"], stored["returning"],
            "{h} against the store's {stored}"
        );
        assert_eq!(h["first"], stored["first"]);
        let page = work.join("report-flow.html");
        serve_util::common::succeeds(&[
            "report".as_ref(),
            dir.as_os_str(),
            "--no-cache".as_ref(),
            "--dictionary-from".as_ref(),
            from.as_ref(),
            "--out".as_ref(),
            page.as_os_str(),
        ]);
        let r = Command::new("node")
            .arg(repo().join("e2e/report.mjs"))
            .arg(&page)
            .arg(work.join("report-flow.png"))
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
        assert_eq!(v["errors"], serde_json::json!([]), "{from}: {v}");
        assert_eq!(v["requests"], serde_json::json!([v["url"]]), "{from}: {v}");
        assert_eq!(v["charts"].as_array().unwrap().len(), 4, "{from}: {v}");
        assert!(
            v["main"]
                .as_str()
                .unwrap()
                .contains(&format!("back from {label}")),
            "{from}: {v}"
        );
    }
}
