//! `precompress check --url URL DIR` against servers of its own on
//! 127.0.0.1, the fast tier of `tests/check_url.rs` (the Rust toolchain
//! alone): it passes on `precompress serve` of a release with deltas and of
//! the fixture site, and fails, naming the cause, when nothing listens, the
//! URL is not http, the origin redirects elsewhere (never followed) or
//! `--max-requests` leaves assets unchecked; a password in the URL and a
//! `--header` bypass token are sent, never printed.

mod serve_util;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serve_util::url_check::*;
use serve_util::*;

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
