//! `precompress check --url URL DIR` against real servers on 127.0.0.1: it
//! passes on `precompress serve` and on the nginx and Caddy setups
//! docs/servers.md gives (deltas included), and fails, naming the cause, on each way a deploy
//! goes wrong: headers lost, a dictionary sent `no-cache` or with no
//! `Cache-Control` at all, a file rebuilt after
//! precompress ran, nothing listening, a URL that is not http, and a redirect
//! off the origin (never followed); and notes, without failing, an asset sent in
//! a larger coding than the smallest the request accepts.

mod serve_util;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serve_util::*;

/// `precompress check --url URL DIR` plus `extra`: (exit code, stdout, stderr).
fn check_url(url: &str, dir: &Path, extra: &[&str]) -> (i32, String, String) {
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

fn url_of(server: &Server) -> String {
    format!("http://{}/", server.addr)
}

/// `--json`'s problems as (url, kind, detail).
fn json_problems(stdout: &str) -> (serde_json::Value, Vec<(String, String, String)>) {
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
fn assert_passes(url: &str, dir: &Path) -> String {
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

/// The nginx of docs/servers.md's deltas setup (`e2e/nginx-deltas.conf`), its
/// template edited by `vars` besides `@MAPS@`.
fn deploy_nginx(vars: &[(String, String)]) -> Deployed {
    deploy_with_deltas("nginx-map", |maps, live, work| {
        let mut all: Vec<(&str, &str)> = vec![("@MAPS@", maps.to_str().unwrap())];
        all.extend(vars.iter().map(|(a, b)| (a.as_str(), b.as_str())));
        start_nginx_from("nginx-deltas.conf", live, work, &all)
    })
}

#[test]
fn passes_against_precompress_serve_of_a_release_with_deltas() {
    let (_tmp, live, _r1, _old, _new) = release_two_with_deltas();
    let server = start_precompress(&live, &[]);
    let stdout = assert_passes(&url_of(&server), &live);
    // The delta was asked for and sent.
    assert!(
        stdout.contains("1 of 1 request with a dictionary got a delta"),
        "{stdout}"
    );
    // serve sends what precompress wrote: the landing page's first visit
    // downloads exactly that, as the report's headline counts it.
    let (_, json, _) = check_url(&url_of(&server), &live, &["--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["first_visit"]["page"], "index.html", "{json}");
    assert_eq!(
        v["first_visit"]["served"], v["first_visit"]["written"],
        "{json}"
    );
    // An odd name (spaces, `#`, non-ASCII) is asked for by its encoded path.
    let (_tmp, site) = precompressed_site();
    let server = start_precompress(&site, &[]);
    assert_passes(&url_of(&server), &site);
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn passes_against_the_readme_nginx_setup_with_deltas() {
    let site = deploy_nginx(&[]);
    let stdout = assert_passes(&url_of(&site.server), &site.live);
    assert!(stdout.contains("got a delta (1 dcb, 0 dcz)"), "{stdout}");
    // What nginx does differently, said without failing.
    assert!(
        stdout.contains("note: the server sends its own ETags"),
        "{stdout}"
    );
    // The dictionary has a lifetime: nothing to say about Cache-Control.
    assert!(!stdout.contains("Cache-Control"), "{stdout}");
}

#[test]
#[ignore = "e2e tier: needs Caddy; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn passes_against_the_readme_caddy_setup_with_deltas() {
    let site = deploy_with_deltas("caddy-map", |snippet, live, work| {
        start_caddy_from(
            "Caddyfile-deltas",
            live,
            work,
            &[("@SNIPPET@", snippet.to_str().unwrap())],
        )
    });
    let stdout = assert_passes(&url_of(&site.server), &site.live);
    // caddy-map's snippet sends br where it is smaller than zstd (Caddy's
    // `precompressed zstd br gzip` alone sends zstd).
    assert!(stdout.contains("sent 1 br, 0 zstd"), "{stdout}");
    assert!(!stdout.contains("Cache-Control"), "{stdout}");
    assert!(!stdout.contains("larger coding"), "{stdout}");
}

#[test]
#[ignore = "e2e tier: needs Caddy; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn notes_a_larger_coding_than_the_smallest_accepted() {
    // Without the snippet's line that lets br win, Caddy's `precompressed zstd
    // br gzip` sends the script's zstd, larger than its br.
    let site = deploy_with_deltas("caddy-map", |snippet, live, work| {
        let text = std::fs::read_to_string(snippet).unwrap();
        let line = text
            .lines()
            .find(|l| l.contains("request_header @pc_br_first"))
            .expect("the line that lets br win");
        std::fs::write(snippet, text.replace(line, "")).unwrap();
        start_caddy_from(
            "Caddyfile-deltas",
            live,
            work,
            &[("@SNIPPET@", snippet.to_str().unwrap())],
        )
    });
    let size = |c: &str| {
        let v = site.asset["encodings"].as_array().unwrap();
        v.iter().find(|v| v["coding"] == c).unwrap()["size"].clone()
    };
    let (br, zstd) = (size("br"), size("zstd"));
    assert!(br.as_u64() < zstd.as_u64(), "br {br}, zstd {zstd}");
    // A note, not a problem: the browser decodes it.
    let stdout = assert_passes(&url_of(&site.server), &site.live);
    let want = format!(
        "note: 1 asset sent in a larger coding than the smallest the request accepts ({}: zstd ({zstd} B) where br is {br} B): {} B more per visit",
        &site.url[1..],
        zstd.as_u64().unwrap() - br.as_u64().unwrap()
    );
    assert!(stdout.contains(&want), "{want}\n{stdout}");
    let (_, json, _) = check_url(&url_of(&site.server), &site.live, &["--json"]);
    assert!(json.contains("larger coding"), "{json}");
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn fails_when_nginx_loses_its_add_header_lines() {
    let template = std::fs::read_to_string(repo().join("e2e/nginx-deltas.conf")).unwrap();
    let stripped: Vec<(String, String)> = template
        .lines()
        .filter(|l| l.contains("add_header"))
        .map(|l| (l.trim().to_string(), String::new()))
        .collect();
    assert!(stripped.len() >= 5, "{stripped:?}");
    let site = deploy_nginx(&stripped);
    let url = url_of(&site.server);
    let (code, stdout, _) = check_url(&url, &site.live, &[]);
    assert_eq!(code, 1, "{stdout}");
    let asset = format!("{url}{}: ", &site.url[1..]);
    for kind in ["missing_vary", "missing_use_as_dictionary", "no_delta"] {
        assert!(
            stdout.contains(&format!("{asset}{kind}: ")),
            "{kind}:\n{stdout}"
        );
    }
    assert!(stdout.contains("lacks Available-Dictionary"), "{stdout}");
    // The rewrite still happens, without its Content-Encoding: the worst of it.
    assert!(
        stdout.contains("a browser would read the delta as the asset"),
        "{stdout}"
    );
    // The same problems in JSON.
    let (code, json, _) = check_url(&url, &site.live, &["--json"]);
    assert_eq!(code, 1);
    let (v, problems) = json_problems(&json);
    assert_eq!(v["ok"], false);
    let kinds: Vec<&str> = problems.iter().map(|(_, k, _)| k.as_str()).collect();
    for kind in ["missing_vary", "missing_use_as_dictionary", "no_delta"] {
        assert!(kinds.contains(&kind), "{kind}: {problems:?}");
    }
    assert!(
        problems.iter().all(|(u, _, _)| u.starts_with(&url)),
        "{problems:?}"
    );
}

/// The location line that sends `$pc_cache_control`.
const CACHE_LINE: &str = "add_header Cache-Control $pc_cache_control;";

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn fails_when_a_dictionary_is_sent_no_cache() {
    // The fingerprinted script (a dictionary) sent `Cache-Control: no-cache`.
    let site = deploy_nginx(&[(
        CACHE_LINE.into(),
        "add_header Cache-Control no-cache;".into(),
    )]);
    let url = url_of(&site.server);
    let (code, stdout, _) = check_url(&url, &site.live, &[]);
    assert_eq!(code, 1, "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.contains("dictionary_not_fresh"))
        .unwrap_or_else(|| panic!("no dictionary_not_fresh:\n{stdout}"));
    assert!(line.contains(&format!("{url}{}", &site.url[1..])), "{line}");
    assert!(line.contains("\"no-cache\""), "{line}");
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn fails_when_nginx_sends_a_dictionary_without_cache_control() {
    // docs/servers.md's setup without its Cache-Control line: Chromium would keep
    // the dictionary for a tenth of its age, and a visitor coming back the
    // next day would hold none.
    let template = std::fs::read_to_string(repo().join("e2e/nginx-deltas.conf")).unwrap();
    assert!(template.lines().any(|l| l.trim() == CACHE_LINE));
    let site = deploy_nginx(&[(CACHE_LINE.into(), String::new())]);
    let url = url_of(&site.server);
    let asset = format!("{url}{}", &site.url[1..]);
    let (code, stdout, _) = check_url(&url, &site.live, &[]);
    assert_eq!(code, 1, "{stdout}");
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("dictionary_not_fresh"))
        .collect();
    assert_eq!(lines.len(), 1, "one per asset:\n{stdout}");
    assert!(lines[0].contains(&format!("{asset}: ")), "{}", lines[0]);
    for want in [
        "a tenth of its age since Last-Modified",
        "send `Cache-Control: public, max-age=31536000, immutable`",
    ] {
        assert!(lines[0].contains(want), "{want}: {}", lines[0]);
    }
    // It is the only problem: the deltas themselves still work.
    let (code, json, _) = check_url(&url, &site.live, &["--json"]);
    assert_eq!(code, 1);
    let (v, problems) = json_problems(&json);
    assert_eq!(v["ok"], false);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(
        (problems[0].0.as_str(), problems[0].1.as_str()),
        (asset.as_str(), "dictionary_not_fresh")
    );
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn fails_naming_an_asset_rebuilt_after_precompress_ran() {
    let site = deploy_nginx(&[]);
    // Other bytes of the same size, in the source and its .br: nginx serves them.
    let key = &site.url[1..];
    for rel in [key.to_string(), format!("{key}.br")] {
        let path = site.live.join(rel);
        let len = std::fs::metadata(&path).unwrap().len() as usize;
        let other: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, other).unwrap();
    }
    let url = url_of(&site.server);
    let (code, stdout, _) = check_url(&url, &site.live, &[]);
    assert_eq!(code, 1, "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.contains(": body_mismatch: "))
        .unwrap_or_else(|| panic!("no body_mismatch:\n{stdout}"));
    assert!(line.contains(&format!("{url}{key}: ")), "{line}");
    assert!(line.contains(".br"), "{line}");
    assert!(stdout.contains(" 1 with problems"), "{stdout}");
}

#[test]
fn fails_plainly_when_nothing_listens_or_the_url_is_not_http() {
    let (_tmp, site) = precompressed_site();
    let url = format!("http://127.0.0.1:{}/", free_port());
    let (code, stdout, _) = check_url(&url, &site, &[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("connection_refused: "), "{stdout}");
    assert!(stdout.contains("nothing listens at 127.0.0.1:"), "{stdout}");
    // One request, then it stops: the rest are not checked, and that says so.
    assert!(stdout.contains(" 1 request: "), "{stdout}");
    assert!(stdout.contains("assets not checked"), "{stdout}");

    let (code, stdout, stderr) = check_url("ftp://127.0.0.1/", &site, &[]);
    assert_eq!(code, 1);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("ftp://127.0.0.1/") && stderr.contains("not http:// or https://"),
        "{stderr}"
    );
}

#[test]
fn fails_on_a_redirect_off_the_origin_and_never_follows_it() {
    let (_tmp, site) = precompressed_site();
    // The other origin: another host name and port; it must never be asked.
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let other_port = other.local_addr().unwrap().port();
    other.set_nonblocking(true).unwrap();
    let origin = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = origin.local_addr().unwrap();
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for stream in origin.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut buf = Vec::new();
            let mut byte = [0u8; 1];
            while !buf.ends_with(b"\r\n\r\n") && s.read(&mut byte).unwrap_or(0) == 1 {
                buf.push(byte[0]);
            }
            count.fetch_add(1, Ordering::SeqCst);
            let _ = s.write_all(
                format!(
                    "HTTP/1.1 302 Found\r\nLocation: http://localhost:{other_port}/x\r\n\
                     Content-Length: 0\r\nConnection: close\r\n\r\n"
                )
                .as_bytes(),
            );
        }
    });
    let url = format!("http://{addr}/");
    let (code, stdout, _) = check_url(&url, &site, &["--rate", "100"]);
    assert_eq!(code, 1, "{stdout}");
    let assets = manifest(&site)["files"].as_object().unwrap().len();
    let offs: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(": redirect_off_origin: "))
        .collect();
    assert_eq!(offs.len(), assets, "{stdout}");
    assert!(
        offs[0].contains(&format!("http://localhost:{other_port}/x")),
        "{}",
        offs[0]
    );
    assert_eq!(
        served.load(Ordering::SeqCst),
        assets,
        "one request per asset"
    );
    assert!(
        other.accept().is_err(),
        "a request went to the other origin"
    );
}

#[test]
fn max_requests_leaves_assets_unchecked_and_fails() {
    let (_tmp, site) = precompressed_site();
    let server = start_precompress(&site, &[]);
    let (code, stdout, _) = check_url(&url_of(&server), &site, &["--max-requests", "3"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains(" 3 requests: 3 ok, 0 with problems"),
        "{stdout}"
    );
    assert!(
        stdout.contains("not_checked: 10 of 13 assets not checked: --max-requests 3"),
        "{stdout}"
    );
    // Bounds only make sense with --url.
    let out = precompress(&[
        "check".as_ref(),
        site.as_os_str(),
        "--rate".as_ref(),
        "5".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("s3cret"));
}

/// A SvelteKit-like build: chunks named by their hash only (so precompress,
/// with `--shared-dictionary on`, makes a shared dictionary for them) and a
/// page that loads one.
fn hash_only_site(root: &Path) -> std::path::PathBuf {
    let dir = root.join("build");
    hash_only_tree(&dir, 1);
    let out = precompress(&[
        "--no-config".as_ref(),
        "-q".as_ref(),
        "--shared-dictionary".as_ref(),
        "on".as_ref(),
        dir.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn html_pages_must_link_the_shared_dictionary() {
    let tmp = tempfile::tempdir().unwrap();
    let site = hash_only_site(tmp.path());
    let dict = manifest(&site)["shared_dictionary"]
        .as_str()
        .expect("a shared dictionary")
        .to_string();
    let server = start_precompress(&site, &[]);
    assert_passes(&url_of(&server), &site);
    // nginx as docs/servers.md configures it without nginx-map: no Link, and the
    // dictionary goes unmarked.
    let nginx = start_nginx(&site, tmp.path());
    let url = url_of(&nginx);
    let (code, stdout, _) = check_url(&url, &site, &[]);
    assert_eq!(code, 1, "{stdout}");
    let link = stdout
        .lines()
        .find(|l| l.contains(&format!("{url}index.html: missing_link: ")))
        .unwrap_or_else(|| panic!("no missing_link:\n{stdout}"));
    assert!(link.contains(&format!("</{dict}>")), "{link}");
    assert!(
        stdout.contains(&format!("{url}{dict}: missing_use_as_dictionary: ")),
        "{stdout}"
    );
}

/// Issue #29: `check --url http://user:password@host/` repeated the password
/// in its report, in `--json` and in its errors. The credentials still go to
/// the origin (as Basic credentials); what is printed shows `***@`.
#[test]
fn a_password_in_the_url_is_never_printed() {
    let (_tmp, site) = precompressed_site();
    let server = start_precompress(&site, &[]);
    // Problems, so asset URLs are printed: a source rewritten after the run
    // (same size) goes out uncompressed.
    let m = manifest(&site);
    let (key, _) = m["files"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, a)| !a["encodings"].as_array().unwrap().is_empty())
        .unwrap();
    let path = site.join(key);
    let len = std::fs::metadata(&path).unwrap().len() as usize;
    std::fs::write(&path, vec![b'x'; len]).unwrap();
    let url = format!("http://user:s3cret@{}/", server.addr);
    let refused = format!("http://user:s3cret@127.0.0.1:{}/", free_port());
    let runs = [
        (url.as_str(), &[][..], 1),
        (url.as_str(), &["--json"][..], 1),
        (refused.as_str(), &[][..], 1),
        (refused.as_str(), &["--json"][..], 1),
        ("ftp://user:s3cret@127.0.0.1/", &[][..], 1),
        ("http://user:s3cret@[::1/", &[][..], 1),
        // A password holding `/`, `?` or `#` as typed (issue #46).
        ("http://user:ab/cd?s3cret@127.0.0.1/", &[][..], 1),
        ("http://user:ab#s3cret@127.0.0.1/", &["--json"][..], 1),
    ];
    for (given, extra, want) in runs {
        let (code, stdout, stderr) = check_url(given, &site, extra);
        assert_eq!(code, want, "{given} {extra:?}: {stdout}{stderr}");
        let all = format!("{stdout}{stderr}");
        assert!(!all.contains("s3cret"), "{given} {extra:?}: {all}");
        assert!(!all.contains("user:"), "{given} {extra:?}: {all}");
        assert!(all.contains("***@"), "{given} {extra:?}: {all}");
    }
    // The asset lines name the asset's URL, less the password.
    let (_, stdout, _) = check_url(&url, &site, &[]);
    assert!(
        stdout.contains(&format!("http://***@{}/{key}: ", server.addr)),
        "{stdout}"
    );
}

/// A gate in front of `upstream`, as a preview deploy's protection is: a
/// request without `x-bypass: s3cret` gets 401; one with it is relayed (one
/// request per connection).
fn gate(upstream: std::net::SocketAddr) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut c) = conn else { continue };
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && c.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let text = String::from_utf8_lossy(&head).to_string();
                let allowed = text
                    .lines()
                    .any(|l| l.eq_ignore_ascii_case("x-bypass: s3cret"));
                if !allowed {
                    let _ = c.write_all(
                        b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    );
                    return;
                }
                let kept: Vec<&str> = text
                    .trim_end()
                    .lines()
                    .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
                    .collect();
                let mut up = std::net::TcpStream::connect(upstream).unwrap();
                up.write_all(
                    format!("{}\r\nconnection: close\r\n\r\n", kept.join("\r\n")).as_bytes(),
                )
                .unwrap();
                let mut answer = Vec::new();
                let _ = up.read_to_end(&mut answer);
                let _ = c.write_all(&answer);
            });
        }
    });
    addr
}

/// A preview behind a bypass token (#47): `--header` sends it with every
/// request, and it is never printed; fields the check sets itself are
/// refused, naming the field and not the value.
#[test]
fn header_sends_a_preview_s_bypass_token_and_never_prints_it() {
    let (_tmp, site) = precompressed_site();
    let server = start_precompress(&site, &[]);
    let url = format!("http://{}/", gate(server.addr));
    let (code, stdout, _) = check_url(&url, &site, &[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("401"), "{stdout}");
    for args in [
        &["-H", "x-bypass: s3cret"][..],
        &["--header", "X-Bypass:s3cret", "--json"],
    ] {
        let (code, stdout, stderr) = check_url(&url, &site, args);
        assert_eq!(code, 0, "{args:?}: {stdout}{stderr}");
        assert!(
            !format!("{stdout}{stderr}").contains("s3cret"),
            "{stdout}{stderr}"
        );
    }
    let (code, stdout, stderr) = check_url(&url, &site, &["-H", "Accept-Encoding: s3cret"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("--header Accept-Encoding: the check sets it itself"),
        "{stderr}"
    );
    assert!(
        !format!("{stdout}{stderr}").contains("s3cret"),
        "{stdout}{stderr}"
    );
    // Only with --url.
    let out = assert_cmd::Command::cargo_bin("precompress")
        .unwrap()
        .args(["check", "-H", "x-bypass: s3cret"])
        .arg(&site)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("s3cret"));
}
