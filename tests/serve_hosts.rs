//! What static hosts do, `precompress serve` (and the tower Service) does:
//! `/about` is `about.html` (nginx's `try_files $uri $uri.html`, Netlify,
//! Cloudflare Pages), a folder is its `index.html`, `404.html` is served
//! with 404, and `--spa` gives a client-routed app's `index.html` for its
//! routes. Before: `/about` of a SvelteKit static build was a 404 and a Vite
//! app could not be reloaded on `/app/a`.

mod serve_util;

use std::path::Path;

#[allow(unused_imports)]
use serve_util::*;

/// A built site: pages as `about.html` and `docs/index.html`, a 404 page, an asset.
fn site(dir: &Path, base: Option<&str>) {
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    let page = |t: &str| {
        format!(
            "<!doctype html><title>{t}</title>\n{}",
            format!("<p>{t}: a page of the site</p>\n").repeat(60)
        )
    };
    for (rel, text) in [
        ("index.html", page("home")),
        ("about.html", page("about")),
        ("docs/index.html", page("docs")),
        ("404.html", page("not found")),
        (
            "assets/app-D8fKq1nN.js",
            "export const x = () => 'a line of a script';\n".repeat(60),
        ),
    ] {
        std::fs::write(dir.join(rel), text).unwrap();
    }
    let mut args: Vec<&std::ffi::OsStr> =
        vec!["--no-config".as_ref(), "-q".as_ref(), dir.as_os_str()];
    if let Some(b) = base {
        args.push("--base".as_ref());
        args.push(std::ffi::OsStr::new(b));
    }
    let out = precompress(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn plain_body(dir: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap()
}

#[test]
fn pages_without_html_a_404_page_and_folders_as_static_hosts_serve_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("site");
    site(&dir, None);
    let s = start_precompress(&dir, &[]);

    // `/about` is about.html, negotiated like any page.
    let r = get(s.addr, "/about", None);
    assert_eq!(
        (r.status, r.body.clone()),
        (200, plain_body(&dir, "about.html"))
    );
    let r = get(s.addr, "/about", Some("br"));
    assert_eq!((r.status, r.header("content-encoding")), (200, Some("br")));
    assert_eq!(r.body, plain_body(&dir, "about.html.br"));
    // A folder is its index.html (after the slash), as before.
    assert_eq!(get(s.addr, "/docs", None).status, 301);
    assert_eq!(
        get(s.addr, "/docs/", None).body,
        plain_body(&dir, "docs/index.html")
    );

    // Nothing there: 404.html with 404, compressed too; never a 304 of it.
    for path in ["/nope", "/assets/gone-D8fKq1nN.js", "/about/", "/.hidden"] {
        let r = get(s.addr, path, Some("br"));
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.header("content-encoding"), Some("br"), "{path}");
        assert_eq!(r.body, plain_body(&dir, "404.html.br"), "{path}");
    }
    let etag = get(s.addr, "/404.html", None)
        .header("etag")
        .unwrap()
        .to_string();
    let r = request(s.addr, "GET", "/nope", &[("If-None-Match", etag.as_str())]);
    assert_eq!(
        (r.status, r.body.clone()),
        (404, plain_body(&dir, "404.html"))
    );
    let r = request(s.addr, "GET", "/nope", &[("Range", "bytes=0-9")]);
    assert_eq!(
        (r.status, r.body.clone()),
        (404, plain_body(&dir, "404.html"))
    );
    // Without --spa a client route is a 404 too.
    assert_eq!(get(s.addr, "/app/settings", None).status, 404);
    drop(s);

    // --spa: a route without a file gets index.html; a missing asset does not.
    let s = start_precompress(&dir, &["--spa"]);
    let r = get(s.addr, "/app/settings", Some("br"));
    assert_eq!((r.status, r.header("content-encoding")), (200, Some("br")));
    assert_eq!(r.body, plain_body(&dir, "index.html.br"));
    assert_eq!(
        get(s.addr, "/about", None).body,
        plain_body(&dir, "about.html")
    );
    let r = get(s.addr, "/assets/gone-D8fKq1nN.js", None);
    assert_eq!(
        (r.status, r.body.clone()),
        (404, plain_body(&dir, "404.html"))
    );
}

#[test]
fn under_a_base_the_conventions_hold_inside_it_and_nothing_is_served_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("site");
    site(&dir, Some("/sub/"));
    let s = start_precompress(&dir, &["--spa"]);
    assert_eq!(
        get(s.addr, "/sub/about", None).body,
        plain_body(&dir, "about.html")
    );
    assert_eq!(
        get(s.addr, "/sub/a/route", None).body,
        plain_body(&dir, "index.html")
    );
    let r = get(s.addr, "/sub/missing.css", None);
    assert_eq!(
        (r.status, r.body.clone()),
        (404, plain_body(&dir, "404.html"))
    );
    // Outside the base: not this site's 404 page either.
    let r = get(s.addr, "/elsewhere", None);
    assert_eq!(r.status, 404);
    assert_ne!(r.body, plain_body(&dir, "404.html"));
}
