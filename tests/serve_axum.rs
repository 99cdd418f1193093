//! `examples/axum.rs`, an axum app that serves a folder through
//! `ServeManifest`, answers the negotiation battery exactly as `precompress
//! serve` does: same status, body and headers for every asset, coding,
//! dictionary and conditional below, and the app's own route still works.

mod serve_util;

use serve_util::*;

#[test]
fn the_axum_example_answers_as_precompress_serve_does() {
    let (_tmp, live, r1, _, new_js) = release_two_with_deltas();
    copy_dir(&repo().join("fixtures/site/assets"), &live.join("assets"));
    let out = precompress(&[
        "--no-config".as_ref(),
        "-q".as_ref(),
        live.as_os_str(),
        "--dictionary-from".as_ref(),
        r1.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let serve = start_precompress(&live, &[]);
    let axum = start_example(&live);
    let dict = manifest(&live)["files"][new_js]["deltas"][0]["dictionary"]
        .as_str()
        .unwrap()
        .to_string();
    let etag = get(serve.addr, "/assets/app.js", Some("br"))
        .header("etag")
        .unwrap()
        .to_string();
    let new_url = format!("/{new_js}");
    let chrome = "gzip, deflate, br, zstd, dcb, dcz";
    let battery: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("/", vec![("Accept-Encoding", chrome)]),
        (
            "/assets/app.js",
            vec![("Accept-Encoding", "gzip, deflate, br, zstd")],
        ),
        ("/assets/app.js", vec![("Accept-Encoding", "gzip")]),
        ("/assets/app.js", vec![("Accept-Encoding", "br;q=0, gzip")]),
        ("/assets/app.js", vec![("Accept-Encoding", "identity")]),
        ("/assets/app.js", vec![]),
        ("/assets/app.js", vec![("Accept-Encoding", "identity;q=0")]),
        (
            "/assets/app.js",
            vec![("Accept-Encoding", "br"), ("If-None-Match", &etag)],
        ),
        (
            "/assets/app.js",
            vec![("Accept-Encoding", "br"), ("If-Match", "\"nope\"")],
        ),
        ("/assets/app.js", vec![("Range", "bytes=0-9")]),
        (
            &new_url,
            vec![("Accept-Encoding", chrome), ("Available-Dictionary", &dict)],
        ),
        (
            &new_url,
            vec![
                ("Accept-Encoding", "br, dcz"),
                ("Available-Dictionary", &dict),
            ],
        ),
        (
            &new_url,
            vec![
                ("Accept-Encoding", chrome),
                ("Available-Dictionary", ":AAAA:"),
            ],
        ),
        ("/assets/app.js.br", vec![]),
        ("/../etc/passwd", vec![]),
        ("/nope.js", vec![]),
    ];
    let compared = [
        "content-type",
        "content-encoding",
        "content-length",
        "etag",
        "vary",
        "cache-control",
        "use-as-dictionary",
        "content-range",
        "accept-ranges",
        "last-modified",
    ];
    for (path, headers) in &battery {
        let a = request(serve.addr, "GET", path, headers);
        let b = request(axum.1, "GET", path, headers);
        assert_eq!(a.status, b.status, "{path} {headers:?}");
        assert!(a.body == b.body, "{path} {headers:?}: bodies differ");
        for h in compared {
            assert_eq!(a.header(h), b.header(h), "{path} {headers:?}: {h}");
        }
    }
    // The statuses the battery was meant to reach.
    let status = |p: &str, h: &[(&str, &str)]| request(axum.1, "GET", p, h).status;
    assert_eq!(
        status(
            "/assets/app.js",
            &[("If-None-Match", &etag), ("Accept-Encoding", "br")]
        ),
        304
    );
    assert_eq!(status("/assets/app.js", &[("If-Match", "\"nope\"")]), 412);
    assert_eq!(
        status("/assets/app.js", &[("Accept-Encoding", "identity;q=0")]),
        406
    );
    let r = request(
        axum.1,
        "GET",
        &new_url,
        &[("Accept-Encoding", chrome), ("Available-Dictionary", &dict)],
    );
    assert!(
        matches!(r.header("content-encoding"), Some("dcb" | "dcz")),
        "{:?}",
        r.headers
    );
    // The app's own route.
    assert_eq!(get(axum.1, "/healthz", None).body, b"ok");
}
