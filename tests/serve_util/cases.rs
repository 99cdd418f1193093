//! The shared serving table, `fixtures/serve-cases.json`, as a runner any
//! server can be held to: build the table's releases, then for each phase make
//! its edits and send its cases to the server. `tests/serve_cases.rs` runs it
//! against `precompress serve` and the tower Service with nothing excused;
//! `tests/serve_servers.rs` against the servers the generated configurations
//! drive, each with a [`Profile`]: what it does not do at all (the table's
//! `needs`), and the few cases or headers it answers otherwise, each with why.
//! An excuse that no longer matches a difference fails the run, so the list
//! stays the truth. The table's `about` says how a case reads.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use precompressor::model::dictionary::{available_dictionary, sha256};
use serde_json::Value;

use super::{manifest, precompress, repo, request, Resp};

pub fn table() -> Value {
    let text = std::fs::read_to_string(repo().join("fixtures/serve-cases.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `{i}`, `{page}` and `{lines}` in the table's file templates.
fn file_text(t: &Value, spec: &Value) -> String {
    if let Some(page) = spec["page"].as_str() {
        let lines: String = (1..=t["page_lines"].as_u64().unwrap())
            .map(|i| {
                t["page_line"]
                    .as_str()
                    .unwrap()
                    .replace("{page}", page)
                    .replace("{i}", &i.to_string())
            })
            .collect();
        return t["page"]
            .as_str()
            .unwrap()
            .replace("{page}", page)
            .replace("{lines}", &lines);
    }
    let text = spec["text"].as_str().unwrap();
    let repeat = spec["repeat"].as_u64().unwrap_or(1);
    let mut out: String = (1..=repeat)
        .map(|i| text.replace("{i}", &i.to_string()))
        .collect();
    out.push_str(spec["tail"].as_str().unwrap_or(""));
    out
}

/// Builds every release under `root` and precompresses it; returns the last.
pub fn build(t: &Value, root: &Path) -> PathBuf {
    let mut last = PathBuf::new();
    for r in t["releases"].as_array().unwrap() {
        let dir = root.join(r["dir"].as_str().unwrap());
        if let Some(from) = r["copy"].as_str() {
            copy_sources(&root.join(from), &dir);
        }
        for gone in r["remove"].as_array().into_iter().flatten() {
            std::fs::remove_file(dir.join(gone.as_str().unwrap())).unwrap();
        }
        for (rel, spec) in r["files"].as_object().unwrap() {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, file_text(t, spec)).unwrap();
        }
        run_precompress(root, &dir, r);
        last = dir;
    }
    last
}

fn run_precompress(root: &Path, dir: &Path, release: &Value) {
    let mut args: Vec<std::ffi::OsString> = vec!["--no-config".into(), "-q".into(), dir.into()];
    for a in release["args"].as_array().unwrap() {
        let a = a.as_str().unwrap();
        // A release's name is its folder.
        args.push(if root.join(a).exists() {
            root.join(a).into()
        } else {
            a.into()
        });
    }
    let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let out = precompress(&refs);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A release's sources (no variants, deltas or manifest), as a bundler writes them.
fn copy_sources(from: &Path, to: &Path) {
    for e in walkdir(from) {
        let rel = e.strip_prefix(from).unwrap();
        let name = rel.to_string_lossy();
        let ours = [".br", ".zst", ".gz", ".dcb", ".dcz"]
            .iter()
            .any(|s| name.ends_with(s))
            || name == "precompress-manifest.json"
            || name.starts_with(".precompress");
        if !ours {
            std::fs::create_dir_all(to.join(rel).parent().unwrap()).unwrap();
            std::fs::copy(&e, to.join(rel)).unwrap();
        }
    }
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// One representation the manifest lists.
struct Listed {
    etag: String,
    /// The asset it belongs to, and its coding (`None` for identity).
    asset: String,
    coding: Option<String>,
}

/// Every representation the manifest lists, by path.
fn representations(site: &Path) -> BTreeMap<String, Listed> {
    let m = manifest(site);
    let mut out = BTreeMap::new();
    for (key, a) in m["files"].as_object().unwrap() {
        let mut add = |p: &str, v: &Value, coding: Option<&str>| {
            out.insert(
                p.to_string(),
                Listed {
                    etag: v["etag"].as_str().unwrap().to_string(),
                    asset: key.clone(),
                    coding: coding.map(str::to_string),
                },
            );
        };
        add(key, a, None);
        for v in a["encodings"].as_array().unwrap() {
            add(v["path"].as_str().unwrap(), v, v["coding"].as_str());
        }
        for d in a["deltas"].as_array().into_iter().flatten() {
            add(d["path"].as_str().unwrap(), d, d["coding"].as_str());
        }
    }
    out
}

/// What a server answers otherwise than `precompress serve`, and why.
pub struct Excuse {
    /// The cases' names in the table; `*` for any.
    pub cases: &'static [&'static str],
    /// The part of the answer that differs: `status`, `body` (with its
    /// length), `ETag`, an expected header's name, or `*` for all of them.
    pub part: &'static str,
    pub why: &'static str,
}

impl Excuse {
    fn covers(&self, case: &str, part: &str) -> bool {
        (self.cases.contains(&case) || self.cases == ["*"])
            && (self.part == part || self.part == "*")
    }
}

/// How one server is held to the table.
pub struct Profile {
    /// The table's `needs` it meets; cases that need anything else are not
    /// sent (the list of what is left out is in the test that names it).
    pub supports: &'static [&'static str],
    /// It sends its own ETags (from the file's inode, size and time), not the
    /// manifest's: a body's ETag must then be strong, and `{etag:PATH}` is the
    /// one it sends for PATH's representation.
    pub own_etags: bool,
    /// It reads the manifest (a generated configuration, or its own). A
    /// server that only sends the siblings it finds beside a file is sent no
    /// case that expects a delta, and the headers only the manifest can give
    /// ([`MANIFEST_HEADERS`], and `Available-Dictionary` in `Vary`) are not
    /// asked of it.
    pub reads_manifest: bool,
    /// It may send a body chunked, without `Content-Length`: the bytes are
    /// still compared.
    pub length_optional: bool,
    /// Its `Location` may be absolute: it is compared as resolved against the
    /// request's origin (the same target; an absolute-form target's own).
    pub absolute_location: bool,
    /// List-valued headers compared as lists, item by item (Apache joins
    /// `Vary` items with "," where the table has ", ").
    pub list_headers: &'static [&'static str],
    /// The rest, case by case.
    pub excuses: &'static [Excuse],
}

impl Profile {
    /// Held to every case it supports, as the table says.
    pub const fn strict(supports: &'static [&'static str]) -> Profile {
        Profile {
            supports,
            own_etags: false,
            reads_manifest: true,
            length_optional: false,
            absolute_location: false,
            list_headers: &[],
            excuses: &[],
        }
    }
}

/// The headers a server knows only from the manifest.
pub const MANIFEST_HEADERS: &[&str] = &[
    "Cache-Control",
    "Use-As-Dictionary",
    "X-Content-Type-Options",
    "Link",
];

/// One thing a case got wrong: the part (as [`Excuse::part`]) and what.
struct Problem {
    part: String,
    detail: String,
}

fn problem(part: &str, detail: String) -> Vec<Problem> {
    vec![Problem {
        part: part.to_string(),
        detail,
    }]
}

/// Where the cases go: the releases' root, the served folder, the server.
struct Target<'a> {
    t: &'a Value,
    root: &'a Path,
    site: &'a Path,
    addr: SocketAddr,
    profile: &'a Profile,
}

impl Target<'_> {
    /// Expands `{chrome}`, `{shared}` (the manifest's code dictionary),
    /// `{dictionary:REL}` (REL under the releases' root),
    /// `{delta:ASSET:CODING}`, `{etag:PATH}` and `{size:PATH}`.
    fn expand(&self, s: &str) -> String {
        let mut out = s.replace("{chrome}", self.t["chrome"].as_str().unwrap());
        if out.contains("{shared}") {
            let m = manifest(self.site);
            let key = m["shared_dictionary"].as_str().expect("a code dictionary");
            out = out.replace("{shared}", key);
        }
        while let Some(start) = out.find('{') {
            let Some(len) = out[start..].find('}') else {
                break;
            };
            let inner = &out[start + 1..start + len];
            let Some((kind, arg)) = inner.split_once(':') else {
                break;
            };
            let value = match kind {
                "dictionary" => {
                    available_dictionary(&sha256(&std::fs::read(self.root.join(arg)).unwrap()))
                }
                "delta" => {
                    let (asset, coding) = arg.rsplit_once(':').unwrap();
                    let m = manifest(self.site);
                    m["files"][asset]["deltas"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|d| d["coding"] == coding)
                        .unwrap_or_else(|| panic!("no {coding} delta of {asset}"))["path"]
                        .as_str()
                        .unwrap()
                        .to_string()
                }
                "etag" if self.profile.own_etags => self.own_etag(arg),
                "etag" => representations(self.site)[arg].etag.clone(),
                "size" => std::fs::metadata(self.site.join(arg))
                    .unwrap()
                    .len()
                    .to_string(),
                _ => break,
            };
            out.replace_range(start..start + len + 1, &value);
        }
        out
    }

    /// The ETag the server sends for the representation at `path` (a
    /// variant or identity), asked for by its asset's URL and its coding;
    /// when it sends another representation or none, a note saying so, which
    /// no ETag matches (the case then fails with it).
    fn own_etag(&self, path: &str) -> String {
        let listed = representations(self.site);
        let l = &listed[path];
        let url = format!("/{}", l.asset);
        let r = match &l.coding {
            Some(c) => request(self.addr, "GET", &url, &[("Accept-Encoding", c)]),
            None => request(self.addr, "GET", &url, &[]),
        };
        match r.header("etag") {
            Some(etag)
                if r.status == 200 && r.header("content-encoding") == l.coding.as_deref() =>
            {
                etag.to_string()
            }
            _ => format!(
                "(no ETag for {path}: {url} answered {} with {:?})",
                r.status,
                r.header("content-encoding")
            ),
        }
    }

    /// The origin `case`'s request is for, which an absolute `Location`
    /// resolves against: an absolute-form target's own (its authority, not
    /// `Host`: RFC 9112 §3.2.2), else the server's.
    fn origin(&self, case: &Value) -> String {
        let target = self.expand(case["path"].as_str().unwrap());
        match target.strip_prefix("http://") {
            Some(rest) => format!("http://{}", &rest[..rest.find('/').unwrap_or(rest.len())]),
            None => format!("http://{}", self.addr),
        }
    }

    /// What `case` got wrong; empty when nothing.
    fn check(&self, case: &Value) -> Vec<Problem> {
        let method = case["method"].as_str().unwrap_or("GET");
        let headers: Vec<(String, String)> = case["headers"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(n, v)| (n.clone(), self.expand(v.as_str().unwrap())))
            .collect();
        let hrefs: Vec<(&str, &str)> = headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let r = request(
            self.addr,
            method,
            &self.expand(case["path"].as_str().unwrap()),
            &hrefs,
        );
        let want_status = case["status"].as_u64().unwrap() as u16;
        if r.status != want_status {
            return problem(
                "status",
                format!("status {}, expected {want_status}", r.status),
            );
        }
        let expect = case["expect"].as_object().cloned().unwrap_or_default();
        let mut problems = match &case["body"] {
            Value::Null if !r.body.is_empty() => problem(
                "body",
                format!("a body of {} bytes, expected none", r.body.len()),
            ),
            Value::Null => Vec::new(),
            Value::String(s) if s == "*" => Vec::new(),
            Value::String(s) => self.check_body(case, method, &r, s, expect.contains_key("ETag")),
            other => panic!("body {other}"),
        };
        for (name, want) in expect {
            if !self.profile.reads_manifest && MANIFEST_HEADERS.contains(&name.as_str()) {
                continue;
            }
            let want = match &want {
                Value::String(v) if name == "Vary" && !self.profile.reads_manifest => {
                    Value::String(v.replace(", Available-Dictionary", ""))
                }
                _ => want,
            };
            let got = header_value(&r, &name, self.profile.list_headers);
            let ok = match &want {
                Value::Null => got.is_none(),
                Value::String(s) => {
                    let want = self.expand(s);
                    match got.as_deref() {
                        Some(g) if self.profile.list_headers.contains(&name.as_str()) => {
                            list(&g.to_ascii_lowercase()) == list(&want.to_ascii_lowercase())
                        }
                        Some(g) if name == "Location" && self.profile.absolute_location => {
                            g == want || g == format!("{}{want}", self.origin(case))
                        }
                        g => g == Some(want.as_str()),
                    }
                }
                Value::Object(o) => {
                    let re = o["re"].as_str().unwrap();
                    got.as_deref().is_some_and(|g| regex_lite(re, g))
                }
                other => panic!("expect {other}"),
            };
            if !ok {
                problems.extend(problem(&name, format!("{name}: {got:?}, expected {want}")));
            }
        }
        problems
    }

    /// The body is the file `rel` (or its range), with its Content-Length
    /// and ETag.
    fn check_body(
        &self,
        case: &Value,
        method: &str,
        r: &Resp,
        rel: &str,
        etag_expected: bool,
    ) -> Vec<Problem> {
        let rel = self.expand(rel);
        let whole = std::fs::read(self.site.join(&rel)).unwrap();
        let want = match case["range"].as_array() {
            Some(range) => {
                let len = whole.len() as i64;
                let a = range[0].as_i64().unwrap();
                let a = if a < 0 { len + a } else { a } as usize;
                let b = range[1].as_i64().map_or(whole.len() - 1, |b| b as usize);
                whole[a..=b].to_vec()
            }
            None => whole,
        };
        let length = r.header("content-length").unwrap_or("-");
        let chunked = r.header("transfer-encoding") == Some("chunked");
        let excused =
            self.profile.length_optional && length == "-" && (chunked || method == "HEAD");
        if length != want.len().to_string() && !excused {
            return problem(
                "body",
                format!("Content-Length {length}, expected {}", want.len()),
            );
        }
        let got = if method == "HEAD" { &want } else { &r.body };
        if *got != want {
            return problem(
                "body",
                format!("a body of {} bytes that is not {rel}'s", r.body.len()),
            );
        }
        if method == "HEAD" && !r.body.is_empty() {
            return problem("body", "a body after HEAD".into());
        }
        let listed = representations(self.site);
        match (listed.get(&rel), etag_expected) {
            (Some(_), false) if self.profile.own_etags => {
                let etag = r.header("etag").unwrap_or("");
                if !etag.starts_with('"') {
                    return problem("ETag", format!("ETag {etag:?}, expected a strong one"));
                }
            }
            (Some(l), false) if r.header("etag") != Some(l.etag.as_str()) => {
                return problem(
                    "ETag",
                    format!(
                        "ETag {:?}, expected the manifest's {}",
                        r.header("etag"),
                        l.etag
                    ),
                );
            }
            _ => {}
        }
        Vec::new()
    }
}

/// Every value of header `name`, joined as one list (a server may split a
/// list over several lines); `None` when absent.
fn header_value(r: &Resp, name: &str, lists: &[&str]) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    let values: Vec<&str> = r
        .headers
        .iter()
        .filter(|(n, _)| *n == lower)
        .map(|(_, v)| v.as_str())
        .collect();
    match values.len() {
        0 => None,
        1 => Some(values[0].to_string()),
        _ if lists.contains(&name) => Some(values.join(",")),
        _ => Some(values.join(", ")),
    }
}

/// The items of a comma-separated list, trimmed, each once (a header a
/// server sends twice, as nginx's `gzip_vary` beside `add_header Vary`, says
/// no more than once).
fn list(s: &str) -> Vec<&str> {
    let mut items: Vec<&str> = Vec::new();
    for i in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        if !items.contains(&i) {
            items.push(i);
        }
    }
    items
}

/// Makes each phase's edits and reruns, and sends its cases to the server at
/// `addr` serving `site`, less those that need what it lacks. Returns the
/// failures: problems no excuse covers, and excuses that cover none.
pub fn run_table(
    t: &Value,
    root: &Path,
    site: &Path,
    addr: SocketAddr,
    profile: &Profile,
) -> Vec<String> {
    let target = Target {
        t,
        root,
        site,
        addr,
        profile,
    };
    let mut failures = Vec::new();
    // Which excuses covered a problem, and which of their cases did.
    let mut used = vec![Vec::new(); profile.excuses.len()];
    let mut names = Vec::new();
    let mut sent = 0;
    for phase in t["phases"].as_array().unwrap() {
        for e in phase["edit"].as_array().into_iter().flatten() {
            let path = site.join(e["path"].as_str().unwrap());
            if let Some(text) = e["write"].as_str() {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, text).unwrap();
                continue;
            }
            let [from, to] = [0, 1].map(|i| e["replace"][i].as_str().unwrap());
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(from.len(), to.len(), "an edit keeps the size");
            std::fs::write(&path, text.replace(from, to)).unwrap();
        }
        if phase["run"].as_bool() == Some(true) {
            let last = t["releases"].as_array().unwrap().last().unwrap();
            run_precompress(root, site, last);
        }
        for case in phase["cases"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            names.push(name);
            let needs = case["needs"].as_array().into_iter().flatten();
            // `manifest`: what a server that reads the manifest does.
            let meets = |n: &str| {
                profile.supports.contains(&n) || (n == "manifest" && profile.reads_manifest)
            };
            if needs.map(|n| n.as_str().unwrap()).any(|n| !meets(n)) {
                continue;
            }
            let delta = case["expect"]["Content-Encoding"]
                .as_str()
                .is_some_and(|c| c.starts_with("dc"));
            if delta && !profile.reads_manifest {
                continue;
            }
            sent += 1;
            for p in target.check(case) {
                let excused = profile.excuses.iter().position(|e| e.covers(name, &p.part));
                match excused {
                    Some(i) => used[i].push(name),
                    None => failures.push(format!(
                        "{} / {name}: {}",
                        phase["name"].as_str().unwrap(),
                        p.detail
                    )),
                }
            }
        }
    }
    for (e, used) in profile.excuses.iter().zip(used) {
        if used.is_empty() {
            failures.push(format!(
                "{:?} ({}) now answer as the table says: drop the excuse ({})",
                e.cases, e.part, e.why
            ));
        }
        for case in e.cases.iter().filter(|c| **c != "*") {
            if !names.contains(case) {
                failures.push(format!(
                    "excuse for a case the table does not have: {case:?}"
                ));
            } else if !used.contains(case) {
                failures.push(format!(
                    "{case:?} ({}) now answers as the table says: drop it from the excuse ({})",
                    e.part, e.why
                ));
            }
        }
    }
    assert!(sent >= 10, "only {sent} cases sent");
    failures
}

/// A table's header pattern: the subset of regular expressions Rust's
/// `regex` and JavaScript's `RegExp` read alike (the JS runners use the latter).
fn regex_lite(re: &str, s: &str) -> bool {
    regex::Regex::new(re)
        .unwrap_or_else(|e| panic!("the table's pattern {re:?}: {e}"))
        .is_match(s)
}
