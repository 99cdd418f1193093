//! The RUM snippet (`precompressor/rum`, docs/rum.md) in a real browser. Two
//! releases of a small app (`serve_util::two_releases`), each page carrying
//! docs/rum.md's copy-paste `<script>` as a user would paste it (endpoint: a
//! collector on 127.0.0.1, every view sampled), served by `precompress serve`;
//! release 2 is precompressed with deltas against release 1. Headless
//! Chromium visits release 1, then comes back after the deploy
//! (`e2e/rum.mjs`), and once more with nothing deployed. Asserted: each
//! visit posted one report, without cookies, whose counts and body and file
//! bytes per kind and coding equal what Chromium's own network log saw for
//! the same responses; the returning visit's script is counted as the delta
//! Chromium got, and the last visit's page and script as `cache`.

mod serve_util;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use serve_util::browser::browser_ready;
use serve_util::*;

/// docs/rum.md's `<script>` block, reporting to `endpoint` for every view.
fn snippet(endpoint: &str) -> String {
    let doc = std::fs::read_to_string(repo().join("docs/rum.md")).unwrap();
    let start = doc
        .find("```html\n<script>\n")
        .expect("docs/rum.md's snippet")
        + 8;
    let end = start + doc[start..].find("\n</script>\n").unwrap() + 10;
    let script = &doc[start..end];
    let call = "('https://collect.example.com/rum', 0.1);";
    assert!(script.contains(call), "{script}");
    script.replace(call, &format!("('{endpoint}', 1);"))
}

/// The page's HTML with `script` pasted before `</body>`.
fn paste(page: &std::path::Path, script: &str) {
    let html = std::fs::read_to_string(page).unwrap();
    std::fs::write(page, html.replace("</body>", &format!("{script}\n</body>"))).unwrap();
}

/// The report the network log implies: per kind, per coding, `n`, `file`,
/// and `body` for a response whose body crossed the network (one Chromium
/// took from its cache, or revalidated, received no body bytes: it is
/// `cache`, and the report's `body` is the stored one).
fn expected(network: &Value) -> BTreeMap<String, BTreeMap<String, Value>> {
    let mut out: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
    for r in network.as_array().unwrap() {
        assert_eq!(r["status"], 200, "{r}");
        let path = r["path"].as_str().unwrap();
        let kind = match path.rsplit_once('.').map(|(_, e)| e) {
            _ if path.ends_with('/') => "document",
            Some("js" | "mjs") => "script",
            Some("css") => "style",
            _ => "other",
        };
        let (body, file) = (r["body"].as_i64().unwrap(), r["file"].as_u64().unwrap());
        let cached = body <= 0 && file > 0;
        let coding = match r["contentEncoding"].as_str() {
            _ if cached => "cache",
            Some(c) => c,
            None => "identity",
        };
        let sum = out
            .entry(kind.into())
            .or_default()
            .entry(coding.into())
            .or_insert(json!({"n": 0, "file": 0}));
        sum["n"] = json!(sum["n"].as_u64().unwrap() + 1);
        sum["file"] = json!(sum["file"].as_u64().unwrap() + file);
        if !cached {
            sum["body"] = json!(sum["body"].as_i64().unwrap_or(0) + body);
        }
    }
    out
}

/// The report's sums without `transfer` (nor `body` for `cache`), after
/// checking `transfer` is what Chromium counts: for a response from the
/// network the body and 300 bytes for the headers, by the Resource Timing
/// specification; from the cache 0, revalidated the 300 alone.
fn reported(report: &Value) -> BTreeMap<String, BTreeMap<String, Value>> {
    let mut out: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
    for (kind, codings) in report["kinds"].as_object().unwrap() {
        for (coding, s) in codings.as_object().unwrap() {
            let (n, body) = (s["n"].as_u64().unwrap(), s["body"].as_u64().unwrap());
            let transfer = s["transfer"].as_u64().unwrap();
            let sums = if coding == "cache" {
                assert!(transfer <= 300 * n, "{kind} {coding}: {s}");
                json!({"n": n, "file": s["file"]})
            } else {
                assert_eq!(transfer, body + 300 * n, "{kind} {coding}: {s}");
                json!({"n": n, "body": body, "file": s["file"]})
            };
            out.entry(kind.clone())
                .or_default()
                .insert(coding.clone(), sums);
        }
    }
    out
}

/// `precompress --quiet --no-config ARGS`, which must succeed.
fn precompress(args: &[&std::ffi::OsStr]) {
    common::succeeds(&[&["--quiet".as_ref(), "--no-config".as_ref()], args].concat());
}

#[test]
#[ignore = "e2e tier: needs Chromium and node; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn the_snippet_reports_what_chromium_got_on_first_returning_and_cached_visits() {
    let e2e = browser_ready();
    let tmp = tempfile::tempdir().unwrap();
    let (r1, r2, old_js, new_js) = two_releases(tmp.path());
    let port = free_port();
    let script = snippet(&format!("http://127.0.0.1:{port}/rum"));
    for r in [&r1, &r2] {
        paste(&r.join("index.html"), &script);
    }
    let live = tmp.path().join("live");
    copy_dir(&r1, &live);
    precompress(&[live.as_os_str()]);
    precompress(&[r1.as_os_str()]);
    let server = start_precompress(&live, &[]);
    // `localhost`: dictionaries are for secure contexts, and loopback is one.
    let url = format!("http://localhost:{}/", server.addr.port());
    let mut child = Command::new("node")
        .arg("rum.mjs")
        .arg(&url)
        .arg(port.to_string())
        .current_dir(&e2e)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next =
        || -> Value { serde_json::from_str(&out.next().expect("a visit").unwrap()).unwrap() };
    let first = next();

    // Release 2 on the same origin, with deltas against release 1.
    std::fs::remove_file(live.join(old_js)).unwrap();
    for f in ["index.html", new_js] {
        std::fs::copy(r2.join(f), live.join(f)).unwrap();
    }
    precompress(&[
        live.as_os_str(),
        "--dictionary-from".as_ref(),
        r1.as_os_str(),
        "--delta-formats".as_ref(),
        "dcb".as_ref(),
    ]);
    writeln!(child.stdin.as_mut().unwrap()).unwrap();
    let second = next();
    // Back once more, nothing deployed: the page revalidated with the
    // delta's ETag, offering the page it holds, gets a delta against that
    // (itself); the script cached.
    writeln!(child.stdin.as_mut().unwrap()).unwrap();
    let third = next();
    // And again: the page revalidated with the ETag of what it got last.
    writeln!(child.stdin.as_mut().unwrap()).unwrap();
    let fourth = next();
    drop(child.stdin.take());
    let totals = next()["totals"].clone();
    assert!(
        child.wait().unwrap().success(),
        "rum.mjs failed: {first:#} {second:#}"
    );

    for (visit, marker) in [
        (&first, "release-1:6"),
        (&second, "release-2:7"),
        (&third, "release-2:7"),
        (&fourth, "release-2:7"),
    ] {
        assert_eq!(visit["marker"], marker, "{visit:#}");
        let report = &visit["report"];
        assert_eq!(report["method"], "POST");
        assert_eq!(report["path"], "/rum");
        assert_eq!(report["cookie"], Value::Null, "no cookie sent");
        assert_eq!(report["status"], 204, "the collector took it");
        let body: Value = serde_json::from_str(report["body"].as_str().unwrap()).unwrap();
        assert_eq!(body["v"], 1);
        eprintln!("visit {}: report {body}", visit["load"]);
        eprintln!("visit {}: Chromium saw {}", visit["load"], visit["network"]);
        assert_eq!(reported(&body), expected(&visit["network"]), "{visit:#}");
    }
    // The collector (precompressor/rum-collector) added the four up.
    let mut sums: BTreeMap<String, BTreeMap<String, [u64; 4]>> = BTreeMap::new();
    for visit in [&first, &second, &third, &fourth] {
        let body: Value = serde_json::from_str(visit["report"]["body"].as_str().unwrap()).unwrap();
        for (kind, codings) in body["kinds"].as_object().unwrap() {
            for (coding, sum) in codings.as_object().unwrap() {
                let to = sums
                    .entry(kind.clone())
                    .or_default()
                    .entry(coding.clone())
                    .or_default();
                for (i, f) in ["n", "transfer", "body", "file"].iter().enumerate() {
                    to[i] += sum[f].as_u64().unwrap();
                }
            }
        }
    }
    let want: Value = sums
        .iter()
        .map(|(kind, codings)| {
            let codings: serde_json::Map<String, Value> = codings
                .iter()
                .map(|(c, [n, transfer, body, file])| {
                    (
                        c.clone(),
                        json!({"n": n, "transfer": transfer, "body": body, "file": file}),
                    )
                })
                .collect();
            (kind.clone(), Value::Object(codings))
        })
        .collect::<serde_json::Map<String, Value>>()
        .into();
    eprintln!("the collector's totals: {totals}");
    assert_eq!(totals["views"], 4, "{totals:#}");
    assert_eq!(totals["refused"], 0, "{totals:#}");
    assert_eq!(totals["kinds"], want, "{totals:#}");
    // The returning visitor got the new script as a delta, and the report says so.
    let body: Value = serde_json::from_str(second["report"]["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["kinds"]["script"]["dcb"]["n"], 1, "{body:#}");
    let delta = body["kinds"]["script"]["dcb"]["body"].as_u64().unwrap();
    let file = body["kinds"]["script"]["dcb"]["file"].as_u64().unwrap();
    assert_eq!(file, std::fs::metadata(live.join(new_js)).unwrap().len());
    assert!(delta * 10 < file, "a delta of {delta} B for {file} B");
    // Back with nothing deployed: the page a delta against the copy the
    // visitor holds (a few dozen bytes, never the page again), the script
    // from the cache, and the report says so.
    let body: Value = serde_json::from_str(third["report"]["body"].as_str().unwrap()).unwrap();
    let kinds = &body["kinds"];
    assert_eq!(kinds["document"]["dcb"]["n"], 1, "{body:#}");
    assert!(
        kinds["document"]["dcb"]["body"].as_u64().unwrap() < 100,
        "{body:#}"
    );
    assert_eq!(kinds["script"]["cache"]["n"], 1, "{body:#}");
    assert_eq!(
        kinds["script"]["cache"]["body"], delta,
        "the stored delta: {body:#}"
    );
    // Once more: the page revalidated (a 304), no body over the network.
    let body: Value = serde_json::from_str(fourth["report"]["body"].as_str().unwrap()).unwrap();
    let kinds = &body["kinds"];
    assert_eq!(kinds["document"]["cache"]["n"], 1, "{body:#}");
    assert_eq!(kinds["script"]["cache"]["n"], 1, "{body:#}");
    drop(server);
}
