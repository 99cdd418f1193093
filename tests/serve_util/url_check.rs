//! `precompress check --url`, as the tests of both tiers run it
//! (`tests/check_url.rs`, `tests/check_url_local.rs`): its exit code and
//! output, its `--json` problems, and a pass.

use std::path::Path;

use super::{precompress, Server};

/// `precompress check --url URL DIR` plus `extra`: (exit code, stdout, stderr).
pub fn check_url(url: &str, dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args: Vec<&std::ffi::OsStr> = vec!["check".as_ref(), "--url".as_ref(), url.as_ref()];
    args.push(dir.as_os_str());
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    let out = precompress(&args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn url_of(server: &Server) -> String {
    format!("http://{}/", server.addr)
}

/// `--json`'s problems as (url, kind, detail).
pub fn json_problems(stdout: &str) -> (serde_json::Value, Vec<(String, String, String)>) {
    let v: serde_json::Value = serde_json::from_str(stdout).expect("--json prints JSON");
    let problems = v["problems"]
        .as_array()
        .expect("problems[]")
        .iter()
        .map(|p| {
            let s = |k: &str| {
                p[k].as_str()
                    .unwrap_or_else(|| panic!("{k} in {p}"))
                    .to_string()
            };
            assert!(p["path"].is_string(), "{p}");
            (s("url"), s("problem"), s("detail"))
        })
        .collect();
    (v, problems)
}

/// Passes: exit 0, no problem line, and every asset checked.
pub fn assert_passes(url: &str, dir: &Path) -> String {
    let (code, stdout, stderr) = check_url(url, dir, &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains(" 0 with problems"), "{stdout}");
    assert!(!stdout.contains("not checked"), "{stdout}");
    let (code, json, _) = check_url(url, dir, &["--json"]);
    assert_eq!(code, 0);
    let (v, problems) = json_problems(&json);
    assert_eq!(v["ok"], true, "{json}");
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(v["checked"], v["assets"], "{json}");
    // The landing page's first visit (the report's headline visit) is
    // never smaller than what precompress wrote for it.
    let visit = &v["first_visit"];
    if !visit.is_null() {
        assert!(
            visit["served"].as_u64().unwrap() >= visit["written"].as_u64().unwrap(),
            "{json}"
        );
        assert!(stdout.contains(&format!(
            "a first visit of {} downloaded",
            visit["page"].as_str().unwrap()
        )));
    }
    stdout
}
