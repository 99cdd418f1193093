//! `precompress serve` over real sockets: methods, folders, conditional and range
//! requests, 406, files outside the manifest, the access log, and a traversal
//! battery sent as raw bytes (no client normalizes `..` or `%2e` away) against a
//! site with a secret beside it and symlinks pointing out.

mod serve_util;

use std::path::Path;

use serve_util::*;

const SECRET: &str = "TOP-SECRET-outside-the-served-folder";

fn header_is(r: &Resp, name: &str, want: &str) -> bool {
    r.header(name) == Some(want)
}

#[test]
fn methods_folders_and_errors() {
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &[]);
    let index = std::fs::read(site.join("index.html")).unwrap();

    let r = get(s.addr, "/", None);
    assert_eq!((r.status, &r.body), (200, &index));
    assert!(header_is(&r, "content-type", "text/html; charset=utf-8"));

    // HEAD: GET's headers, no body.
    let h = request(
        s.addr,
        "HEAD",
        "/assets/app.js",
        &[("Accept-Encoding", "br")],
    );
    let g = get(s.addr, "/assets/app.js", Some("br"));
    assert_eq!(h.status, 200);
    assert!(h.body.is_empty());
    for name in [
        "content-length",
        "content-encoding",
        "etag",
        "vary",
        "content-type",
    ] {
        assert_eq!(h.header(name), g.header(name), "HEAD vs GET {name}");
    }
    assert_eq!(
        h.header("content-length"),
        Some(g.body.len().to_string().as_str())
    );

    for m in ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"] {
        let r = request(s.addr, m, "/index.html", &[("Content-Length", "0")]);
        assert_eq!(r.status, 405, "{m}");
        assert!(header_is(&r, "allow", "GET, HEAD"), "{m}");
    }

    // A folder without its slash is redirected; with it, its index.html. No listings.
    let r = get(s.addr, "/assets?x=1", None);
    assert_eq!(r.status, 301);
    assert!(header_is(&r, "location", "/assets/?x=1"));
    let r = get(s.addr, "/assets/", None);
    assert_eq!(
        r.status, 404,
        "folder without index.html must not be listed"
    );
    assert!(!String::from_utf8_lossy(&r.body).contains("app.js"));
    std::fs::create_dir(site.join("docs")).unwrap();
    std::fs::write(site.join("docs/index.html"), "docs home").unwrap();
    let r = get(s.addr, "/docs/", None);
    assert_eq!(
        (r.status, r.body.as_slice()),
        (200, b"docs home".as_slice())
    );

    assert_eq!(get(s.addr, "/missing.js", None).status, 404);
    assert_eq!(get(s.addr, "/index.html/", None).status, 404);
    assert_eq!(get(s.addr, "/.hidden", None).status, 404);

    // A percent-encoded name with spaces, accents and a '#'.
    let r = get(
        s.addr,
        "/odd%20names/caf%C3%A9%20men%C3%BC%20%E2%80%94%20spaces%20%26%20%23hash.html",
        Some("gzip"),
    );
    assert_eq!(r.status, 200);
    let rel = "odd names/café menü — spaces & #hash.html";
    let original = std::fs::read(site.join(rel)).unwrap();
    let body = match r.header("content-encoding") {
        Some(c) => decode(c, &r.body),
        None => r.body.clone(),
    };
    assert_eq!(body, original);
}

#[test]
fn conditional_requests_ranges_and_406() {
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &[]);
    let original = std::fs::read(site.join("assets/app.js")).unwrap();

    // Each representation has its own ETag; If-None-Match revalidates the one chosen.
    let br = get(s.addr, "/assets/app.js", Some("br"));
    let gz = get(s.addr, "/assets/app.js", Some("gzip"));
    let id = get(s.addr, "/assets/app.js", None);
    let (br_tag, gz_tag, id_tag) = (
        br.header("etag").unwrap(),
        gz.header("etag").unwrap(),
        id.header("etag").unwrap(),
    );
    assert!(br_tag != gz_tag && gz_tag != id_tag && br_tag != id_tag);
    let r = request(
        s.addr,
        "GET",
        "/assets/app.js",
        &[("Accept-Encoding", "br"), ("If-None-Match", br_tag)],
    );
    assert_eq!(r.status, 304);
    assert!(r.body.is_empty());
    assert_eq!(r.header("etag"), Some(br_tag));
    assert_eq!(r.header("vary"), Some("Accept-Encoding"));
    let r = request(
        s.addr,
        "GET",
        "/assets/app.js",
        &[("Accept-Encoding", "gzip"), ("If-None-Match", br_tag)],
    );
    assert_eq!(r.status, 200, "a br tag must not revalidate the gzip body");
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    let r = request(
        s.addr,
        "GET",
        "/assets/app.js",
        &[("If-Modified-Since", id.header("last-modified").unwrap())],
    );
    assert_eq!(r.status, 304);

    // Ranges on identity.
    let r = request(s.addr, "GET", "/assets/app.js", &[("Range", "bytes=10-19")]);
    assert_eq!(r.status, 206);
    assert_eq!(r.body, &original[10..20]);
    assert_eq!(
        r.header("content-range"),
        Some(format!("bytes 10-19/{}", original.len()).as_str())
    );
    let r = request(s.addr, "GET", "/assets/app.js", &[("Range", "bytes=-5")]);
    assert_eq!(r.body, &original[original.len() - 5..]);
    let r = request(
        s.addr,
        "GET",
        "/assets/app.js",
        &[("Range", "bytes=999999-")],
    );
    assert_eq!(r.status, 416);
    assert_eq!(
        r.header("content-range"),
        Some(format!("bytes */{}", original.len()).as_str())
    );
    // If-Range with another representation's tag: the whole file.
    let r = request(
        s.addr,
        "GET",
        "/assets/app.js",
        &[("Range", "bytes=0-9"), ("If-Range", br_tag)],
    );
    assert_eq!((r.status, r.body.len()), (200, original.len()));
    // A Range on a compressed response is ignored: the whole variant.
    let r = request(
        s.addr,
        "GET",
        "/assets/app.js",
        &[("Range", "bytes=0-9"), ("Accept-Encoding", "br")],
    );
    assert_eq!(r.status, 200);
    assert_eq!(decode("br", &r.body), original);

    // Nothing acceptable.
    for ae in ["identity;q=0", "*;q=0", "identity;q=0, deflate"] {
        let r = get(s.addr, "/assets/app.js", Some(ae));
        assert_eq!(r.status, 406, "{ae}");
        assert_eq!(r.header("vary"), Some("Accept-Encoding"));
    }
    // ...but identity;q=0 still gets a coding it allows.
    let r = get(s.addr, "/assets/app.js", Some("identity;q=0, gzip"));
    assert_eq!(r.header("content-encoding"), Some("gzip"));
}

#[test]
fn files_outside_the_manifest_and_stale_variants_are_sent_uncompressed() {
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &[]);
    // Added after precompress ran: not in the manifest.
    let late = "console.log('late');\n".repeat(200);
    std::fs::write(site.join("assets/late.js"), &late).unwrap();
    let r = get(s.addr, "/assets/late.js", Some("gzip, deflate, br, zstd"));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), None);
    assert_eq!(r.body, late.as_bytes());
    assert!(r.header("etag").unwrap().starts_with("W/"));
    assert_eq!(
        r.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );

    // A variant truncated after the manifest was written is never sent.
    let br = site.join("assets/style.css.br");
    let len = std::fs::metadata(&br).unwrap().len();
    std::fs::write(&br, vec![0u8; len as usize - 1]).unwrap();
    let r = get(s.addr, "/assets/style.css", Some("br"));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), None);
    assert_eq!(
        r.body,
        std::fs::read(site.join("assets/style.css")).unwrap()
    );
}

#[test]
fn one_access_log_line_per_request() {
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &[]);
    get(s.addr, "/assets/app.js", Some("br"));
    get(s.addr, "/nope", None);
    request(s.addr, "POST", "/", &[("Content-Length", "0")]);
    // Each line is written before its response is sent; the reader thread may
    // still be catching up, so wait (bounded) for the third.
    for _ in 0..200 {
        if s.log.lock().unwrap().len() >= 3 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let log = s.log.lock().unwrap().clone();
    assert_eq!(log.len(), 3, "{log:#?}");
    assert!(log[0].contains("\"GET /assets/app.js HTTP/1.1\" 200") && log[0].ends_with(" br"));
    assert!(log[1].contains("\"GET /nope HTTP/1.1\" 404"));
    assert!(log[2].contains("\"POST / HTTP/1.1\" 405"));
}

/// To a pipe the log is written in batches; SIGTERM (what `docker stop` sends)
/// still leaves every line of the last batch written.
#[test]
fn sigterm_writes_the_access_log_lines_not_yet_written() {
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &[]);
    for _ in 0..20 {
        get(s.addr, "/assets/app.js", Some("br"));
    }
    let log = s.log.clone();
    // SIGTERM, then wait for the exit (Server's drop).
    drop(s);
    for _ in 0..100 {
        if log.lock().unwrap().len() >= 20 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let log = log.lock().unwrap().clone();
    assert_eq!(log.len(), 20, "{log:#?}");
    assert!(log
        .iter()
        .all(|l| l.contains("\"GET /assets/app.js HTTP/1.1\" 200")));
}

/// `--quiet`: no access-log line; `--threads 1`: one thread answers every
/// connection (the runtime on the main thread, as one nginx worker), and
/// answers them alike.
#[test]
fn quiet_logs_nothing_and_one_thread_answers_every_connection() {
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &["--quiet", "--threads", "1"]);
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let addr = s.addr;
            std::thread::spawn(move || {
                (0..5)
                    .map(|_| {
                        get(addr, "/assets/app.js", Some("br"))
                            .header("content-encoding")
                            .map(str::to_string)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for c in clients {
        assert!(c.join().unwrap().iter().all(|e| e.as_deref() == Some("br")));
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", s.pid())).unwrap();
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .to_string();
    assert_eq!(threads, "1", "{status}");
    let log = s.log.clone();
    drop(s);
    assert_eq!(log.lock().unwrap().len(), 0, "{:?}", log.lock().unwrap());

    // Without --threads, one a core, and the access log.
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &[]);
    get(s.addr, "/assets/app.js", Some("br"));
    let status = std::fs::read_to_string(format!("/proc/{}/status", s.pid())).unwrap();
    let threads: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let cores = std::thread::available_parallelism().unwrap().get();
    assert!(
        threads > cores,
        "{threads} threads, {cores} cores: {status}"
    );
    let log = s.log.clone();
    drop(s);
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[test]
fn usage_errors() {
    use assert_cmd::Command;
    let tmp = tempfile::tempdir().unwrap();
    Command::cargo_bin("precompress")
        .unwrap()
        .args(["serve"])
        .arg(tmp.path().join("missing"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a folder"));
    Command::cargo_bin("precompress")
        .unwrap()
        .args(["serve", ".", "--addr", "not-an-address"])
        .assert()
        .code(2);
    std::fs::write(
        tmp.path().join("precompress-manifest.json"),
        "{\"version\": 7}",
    )
    .unwrap();
    Command::cargo_bin("precompress")
        .unwrap()
        .arg("serve")
        .arg(tmp.path())
        .assert()
        .code(1)
        .stderr(predicates::str::contains("version 7"));
}

/// The served folder, with a secret beside it and symlinks out of it.
fn hostile_site() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, site) = precompressed_site();
    let base = tmp.path();
    std::fs::write(base.join("secret.txt"), SECRET).unwrap();
    std::fs::create_dir(base.join("private")).unwrap();
    std::fs::write(base.join("private/key.txt"), SECRET).unwrap();
    std::fs::write(site.join(".env"), SECRET).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink(base.join("secret.txt"), site.join("link-out.txt")).unwrap();
        symlink(base.join("private"), site.join("private-dir")).unwrap();
        symlink(base, site.join("up")).unwrap();
        symlink("/etc/passwd", site.join("passwd")).unwrap();
        // Inside links are fine.
        symlink(site.join("index.html"), site.join("home.html")).unwrap();
    }
    (tmp, site)
}

fn assert_nothing_leaks(s: &Server, targets: &[String]) {
    let passwd = std::fs::read("/etc/passwd").unwrap_or_default();
    for t in targets {
        let raw = format!("GET {t} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let r = send_raw(s.addr, raw.as_bytes(), false);
        let body = String::from_utf8_lossy(&r.body);
        assert!(
            !body.contains(SECRET) && !body.contains("root:") && r.body != passwd,
            "{t} leaked: {} {body}",
            r.status
        );
        assert!(
            matches!(r.status, 400 | 404),
            "{t}: status {} (expected 400 or 404)",
            r.status
        );
    }
}

#[test]
fn traversal_battery_escapes_nothing() {
    let (tmp, site) = hostile_site();
    let s = start_precompress(&site, &[]);
    let base = tmp.path().display().to_string();
    let mut targets: Vec<String> = [
        "/../secret.txt",
        "/../../../../../../etc/passwd",
        "/assets/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/%2E%2E/etc/passwd",
        "/.%2e/secret.txt",
        "/%2e%2e%2fsecret.txt",
        "/..%2fsecret.txt",
        "/..%2F..%2F..%2Fetc%2Fpasswd",
        "/assets/..%2f..%2fsecret.txt",
        "/..%5csecret.txt",
        "/..%5c..%5cetc%5cpasswd",
        "/%5c..%5csecret.txt",
        "/secret.txt%00.html",
        "/index.html%00/../../secret.txt",
        "/%c0%ae%c0%ae/secret.txt",
        "/%c0%ae%c0%ae%c0%af%c0%ae%c0%ae%c0%afetc/passwd",
        "/%e0%80%ae%e0%80%ae/secret.txt",
        "/%252e%252e/secret.txt",
        "/%%32%65%%32%65/secret.txt",
        "//etc/passwd",
        "///../secret.txt",
        "/etc/passwd",
        "/link-out.txt",
        "/private-dir/key.txt",
        "/up/secret.txt",
        "/up/private/key.txt",
        "/passwd",
        "/.env",
        "/%2eenv",
        "/./../secret.txt",
        "/assets/./../../secret.txt",
        "/..;/secret.txt",
        "/....//secret.txt",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Absolute paths to the secret, raw and encoded.
    targets.push(format!("/{base}/secret.txt"));
    targets.push(format!("/{}", base.replace('/', "%2f")) + "%2fsecret.txt");
    assert!(targets.len() >= 20);
    assert_nothing_leaks(&s, &targets);

    // A backslash and absolute-form targets, which some HTTP parsers refuse
    // before the server sees them: any refusal is fine, a leak is not.
    for raw in [
        "GET /..\\secret.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".to_string(),
        "GET http://x/../secret.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".to_string(),
        "GET http://x/%2e%2e/secret.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            .to_string(),
        format!("GET {base}/secret.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        format!("GET file://{base}/secret.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
    ] {
        let mut conn = std::net::TcpStream::connect(s.addr).unwrap();
        use std::io::{Read, Write};
        conn.write_all(raw.as_bytes()).unwrap();
        let mut buf = Vec::new();
        let _ = conn.read_to_end(&mut buf);
        let text = String::from_utf8_lossy(&buf);
        assert!(!text.contains(SECRET), "{raw:?} leaked");
        assert!(!text.starts_with("HTTP/1.1 200"), "{raw:?}: {text}");
    }

    // The inside symlink and an ordinary file still work: the battery did not
    // pass by refusing everything.
    let r = get(s.addr, "/home.html", None);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, std::fs::read(site.join("index.html")).unwrap());
    assert_eq!(get(s.addr, "/assets/app.js", None).status, 200);
    assert!(Path::new(&site).join("link-out.txt").exists());
}

/// Issue #45: a single-page app's shell answers every client-side route, so
/// with `--spa` it is the dictionary of its next version at every URL under
/// the base; without it, at its own URLs only. A Chromium navigation may
/// keep it; any other request revalidates it.
#[test]
fn a_single_page_apps_shell_is_its_next_versions_dictionary_at_every_route() {
    let (_tmp, site) = precompressed_site();
    let chromium = [
        ("Accept-Encoding", "br"),
        ("Sec-Fetch-Dest", "document"),
        ("Sec-CH-UA", "\"Chromium\";v=\"156\""),
    ];
    let spa = start_precompress(&site, &["--spa"]);
    for path in ["/reports", "/reports/2026", "/"] {
        let r = request(spa.addr, "GET", path, &chromium);
        assert_eq!(r.status, 200, "{path}");
        assert!(
            header_is(
                &r,
                "use-as-dictionary",
                "match=\"/*\", match-dest=(\"document\")"
            ),
            "{path}: {:?}",
            r.header("use-as-dictionary")
        );
        assert!(header_is(
            &r,
            "cache-control",
            "private, max-age=0, stale-while-revalidate=2592000"
        ));
        assert!(
            r.header("vary").unwrap().ends_with("Sec-Fetch-Dest"),
            "{path}"
        );
    }
    let r = get(spa.addr, "/reports", Some("br"));
    assert!(header_is(&r, "cache-control", "no-cache"));
    // Not an app: the page is its own URLs' dictionary.
    let plain = start_precompress(&site, &[]);
    let r = request(plain.addr, "GET", "/", &chromium);
    assert!(
        header_is(
            &r,
            "use-as-dictionary",
            "match=\"/{index.html}?\", match-dest=(\"document\")"
        ),
        "{:?}",
        r.header("use-as-dictionary")
    );
}
