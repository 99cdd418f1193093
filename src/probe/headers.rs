//! Reading what an origin sends as a browser reads it: the base URL and each
//! asset's URL (never showing a password in it), `Vary`, `Cache-Control` and
//! the freshness Chromium keeps a dictionary for, media types, `Link`. Pure
//! functions, no network.

use std::collections::BTreeSet;
use std::time::SystemTime;

use url::Url;

use super::terms::ProbeError;

/// Checks the `http://` or `https://` URL a folder is served at; the result
/// ends in `/`, so an asset's URL is it followed by the asset's key.
pub fn parse_base_url(given: &str) -> Result<Url, ProbeError> {
    let bad = |detail: String| ProbeError::Url {
        url: redact_userinfo(given),
        detail,
    };
    let mut url = Url::parse(given).map_err(|e| {
        bad(format!(
            "not a URL ({e}); give the origin and path DIR is served at, e.g. http://127.0.0.1:8080/"
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad(format!(
            "{}: is not http:// or https://; check --url asks a web server, e.g. http://127.0.0.1:8080/",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("has no host".into()));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad(
            "has a query or fragment; give the folder's URL, e.g. http://127.0.0.1:8080/app/"
                .into(),
        ));
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

/// `url` as a report, a log line or `--json` shows it: a `user:password@`
/// (which the client sends as Basic credentials) becomes `***@`, so no
/// output repeats a password that was only meant for the origin.
pub fn shown(url: &Url) -> String {
    if url.username().is_empty() && url.password().is_none() {
        return url.to_string();
    }
    let mut u = url.clone();
    // Infallible on an http(s) URL with a host, the only kind checked.
    let _ = u.set_password(None);
    let _ = u.set_username("***");
    u.to_string()
}

/// `text` with the userinfo of every `scheme://user:password@host` in it
/// replaced by `***`: for what the URL crate cannot parse (a URL as given)
/// and for the client's error messages, which name the URL they failed on.
pub fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (before, after) = rest.split_at(i + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(after.len());
        // A password may hold `/`, `?` or `#` as typed (not a URL then, and
        // quoted in the error that says so): `user:pa/ss@host`. Where what
        // follows the first `:` of the authority is not a port, the
        // userinfo runs to the last `@` of the word.
        let word = after
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
            .unwrap_or(after.len());
        let password_cut = || {
            let colon = after[..end].find(':')?;
            let port = &after[colon + 1..end];
            let is_port = !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit());
            (!after.starts_with('[') && !is_port)
                .then(|| after[..word].rfind('@'))
                .flatten()
        };
        match after[..end].rfind('@').or_else(password_cut) {
            Some(at) => {
                out.push_str("***");
                rest = &after[at..];
            }
            None => {
                out.push_str(&after[..end]);
                rest = &after[end..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The URL of the asset at `key` under `base` (from [`parse_base_url`]):
/// every byte but unreserved ones and `/` percent-encoded, so `#`, `?`, `%`
/// and `:` in a name stay part of the path.
pub fn asset_url(base: &Url, key: &str) -> Option<Url> {
    let mut s = base.as_str().to_string();
    for &b in key.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    Url::parse(&s).ok()
}

/// Same scheme, host and port (default ports included).
pub fn same_origin(a: &Url, b: &Url) -> bool {
    a.origin() == b.origin()
}

/// The field names a `Vary` lists (every line of it), lower case.
pub fn vary_names<S: AsRef<str>>(values: &[S]) -> BTreeSet<String> {
    values
        .iter()
        .flat_map(|v| v.as_ref().split(','))
        .map(|n| n.trim().to_ascii_lowercase())
        .filter(|n| !n.is_empty())
        .collect()
}

/// Whether a `Vary` covers the request field `name` (`*` covers all).
pub fn varies_on<S: AsRef<str>>(values: &[S], name: &str) -> bool {
    let names = vary_names(values);
    names.contains("*") || names.contains(&name.to_ascii_lowercase())
}

/// Whether Chromium keeps a dictionary from a response, by its caching headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness {
    /// `max-age` > 0, `stale-while-revalidate` > 0, or an `Expires` ahead.
    Fresh,
    /// No `Cache-Control` lifetime nor `Expires`: kept for a tenth of the
    /// time since `Last-Modified` (this many seconds now), RFC 9111 §4.2.2.
    Heuristic(u64),
    /// Not kept, and why.
    NotFresh(String),
}

/// The `Cache-Control` directives, names lower case, values unquoted.
fn directives(cache_control: &str) -> Vec<(String, Option<String>)> {
    cache_control
        .split(',')
        .filter_map(|d| {
            let d = d.trim();
            if d.is_empty() {
                return None;
            }
            let (name, value) = match d.split_once('=') {
                Some((n, v)) => (n, Some(v.trim().trim_matches('"').to_string())),
                None => (d, None),
            };
            Some((name.trim().to_ascii_lowercase(), value))
        })
        .collect()
}

/// [`Freshness`] from `Cache-Control` (every line joined), `Expires`, `Date`
/// and `Last-Modified`. Chromium never stores a dictionary from a response
/// marked `no-cache`, `no-store` or `must-revalidate`; otherwise it keeps it for
/// the response's freshness lifetime plus `stale-while-revalidate`.
pub fn dictionary_freshness(
    cache_control: Option<&str>,
    expires: Option<&str>,
    date: Option<&str>,
    last_modified: Option<&str>,
) -> Freshness {
    let dirs = directives(cache_control.unwrap_or(""));
    for bar in ["no-store", "no-cache", "must-revalidate"] {
        if dirs.iter().any(|(n, _)| n == bar) {
            return Freshness::NotFresh(format!(
                "Cache-Control {:?}: Chromium stores no dictionary from a response with {bar}",
                cache_control.unwrap_or_default()
            ));
        }
    }
    let seconds = |name: &str| -> Option<u64> {
        dirs.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_deref().and_then(|v| v.parse().ok()).unwrap_or(0))
    };
    let (max_age, swr) = (seconds("max-age"), seconds("stale-while-revalidate"));
    if max_age.unwrap_or(0) > 0 || swr.unwrap_or(0) > 0 {
        return Freshness::Fresh;
    }
    if max_age.is_some() {
        return Freshness::NotFresh(format!(
            "Cache-Control {:?}: max-age=0 and no stale-while-revalidate, so Chromium keeps the dictionary for no time",
            cache_control.unwrap_or_default()
        ));
    }
    let when = |v: Option<&str>| v.and_then(|v| httpdate::parse_http_date(v.trim()).ok());
    let now = when(date).unwrap_or_else(SystemTime::now);
    if let Some(e) = expires {
        return match when(Some(e)) {
            Some(t) if t > now => Freshness::Fresh,
            _ => Freshness::NotFresh(format!(
                "Expires {e:?} is not ahead of Date and there is no max-age: Chromium keeps the dictionary for no time"
            )),
        };
    }
    match when(last_modified) {
        Some(lm) => Freshness::Heuristic(now.duration_since(lm).map_or(0, |d| d.as_secs() / 10)),
        None => Freshness::NotFresh(
            "no Cache-Control lifetime, Expires or Last-Modified: Chromium keeps the dictionary for no time"
                .into(),
        ),
    }
}

/// The essence (`type/subtype`, lower case) and charset (lower case) of a
/// media type.
fn media_type(v: &str) -> (String, Option<String>) {
    let mut parts = v.split(';');
    let essence = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.find_map(|p| {
        let (n, v) = p.split_once('=')?;
        n.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches('"').to_ascii_lowercase())
    });
    (essence, charset)
}

/// The JavaScript MIME type essences (WHATWG MIME Sniffing §4.6): a browser
/// treats them all as `text/javascript`.
const JAVASCRIPT: &[&str] = &[
    "application/ecmascript",
    "application/javascript",
    "application/x-ecmascript",
    "application/x-javascript",
    "text/ecmascript",
    "text/javascript",
    "text/javascript1.0",
    "text/javascript1.1",
    "text/javascript1.2",
    "text/javascript1.3",
    "text/javascript1.4",
    "text/javascript1.5",
    "text/jscript",
    "text/livescript",
    "text/x-ecmascript",
    "text/x-javascript",
];

/// Whether a browser reads a body sent as `sent` as it would as `want` (the
/// manifest's): the same media type, case aside, JavaScript's aliases alike,
/// and the same charset when both name one (without one, the body's own
/// declaration or the type's UTF-8 default decides, as for nginx's `text/html`).
pub fn same_content_type(sent: &str, want: &str) -> bool {
    let ((se, sc), (we, wc)) = (media_type(sent), media_type(want));
    let js = |e: &str| JAVASCRIPT.contains(&e);
    (se == we || (js(&se) && js(&we))) && (sc.is_none() || wc.is_none() || sc == wc)
}

/// The targets of the `Link` values (every line) whose `rel` names `rel`.
pub fn link_targets<S: AsRef<str>>(values: &[S], rel: &str) -> Vec<String> {
    let mut out = Vec::new();
    for v in values {
        let mut rest = v.as_ref();
        while let Some(start) = rest.find('<') {
            let Some(len) = rest[start..].find('>') else {
                break;
            };
            let target = &rest[start + 1..start + len];
            rest = &rest[start + len + 1..];
            let params = &rest[..rest.find('<').unwrap_or(rest.len())];
            let named = params.split(';').any(|p| {
                p.split_once('=').is_some_and(|(n, v)| {
                    n.trim().eq_ignore_ascii_case("rel")
                        && v.trim()
                            .trim_end_matches(',')
                            .trim()
                            .trim_matches('"')
                            .split_ascii_whitespace()
                            .any(|r| r.eq_ignore_ascii_case(rel))
                })
            });
            if named {
                out.push(target.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dictionary_freshness_follows_chromium() {
        let f = |cc: &str| dictionary_freshness(Some(cc), None, None, None);
        assert_eq!(f("public, max-age=31536000, immutable"), Freshness::Fresh);
        assert_eq!(f("max-age=0, stale-while-revalidate=60"), Freshness::Fresh);
        assert_eq!(f("Max-Age=\"60\""), Freshness::Fresh);
        for bad in [
            "no-cache",
            "no-store",
            "max-age=0",
            "max-age=3600, must-revalidate",
            "public, max-age=31536000, no-cache",
            "max-age=0, stale-while-revalidate=0",
        ] {
            assert!(matches!(f(bad), Freshness::NotFresh(_)), "{bad}");
        }
        let Freshness::NotFresh(why) = f("no-cache") else {
            panic!()
        };
        assert!(why.contains("no-cache"), "{why}");
    }

    #[test]
    fn without_a_lifetime_expires_then_last_modified_decide() {
        let date = "Wed, 02 Dec 2026 18:00:00 GMT";
        let e = |exp: &str| dictionary_freshness(None, Some(exp), Some(date), None);
        assert_eq!(e("Thu, 03 Dec 2026 18:00:00 GMT"), Freshness::Fresh);
        assert!(matches!(
            e("Tue, 01 Dec 2026 18:00:00 GMT"),
            Freshness::NotFresh(_)
        ));
        assert!(matches!(e("0"), Freshness::NotFresh(_)));
        // A tenth of the age: 1000 s old, 100 s of heuristic life.
        let lm = "Wed, 02 Dec 2026 17:43:20 GMT";
        assert_eq!(
            dictionary_freshness(None, None, Some(date), Some(lm)),
            Freshness::Heuristic(100)
        );
        assert_eq!(
            dictionary_freshness(Some("public"), None, Some(date), Some(date)),
            Freshness::Heuristic(0)
        );
        assert!(matches!(
            dictionary_freshness(None, None, Some(date), None),
            Freshness::NotFresh(_)
        ));
    }

    #[test]
    fn vary_is_read_over_every_line_ignoring_case() {
        let lines = ["Accept-Encoding", "accept-encoding, Available-Dictionary"];
        assert!(varies_on(&lines, "Available-Dictionary"));
        assert!(varies_on(&lines, "accept-encoding"));
        assert!(!varies_on(&["Accept-Encoding"], "Available-Dictionary"));
        assert!(varies_on(&["*"], "Accept-Encoding"));
        assert!(!varies_on::<&str>(&[], "Accept-Encoding"));
        assert!(!varies_on(
            &["Accept-Encoding-X, Origin"],
            "Accept-Encoding"
        ));
        assert_eq!(
            vary_names(&[" Origin ,, ACCEPT-ENCODING"]),
            ["accept-encoding", "origin"].map(String::from).into()
        );
    }

    #[test]
    fn same_origin_is_scheme_host_and_port() {
        let u = |s: &str| Url::parse(s).unwrap();
        let base = u("http://127.0.0.1:8080/app/");
        assert!(same_origin(&base, &u("http://127.0.0.1:8080/other")));
        assert!(same_origin(&base, &base.join("/x/").unwrap()));
        assert!(!same_origin(&base, &u("http://127.0.0.1:8081/app/")));
        assert!(!same_origin(&base, &u("https://127.0.0.1:8080/app/")));
        assert!(!same_origin(&base, &u("http://localhost:8080/app/")));
        assert!(!same_origin(&base, &u("http://other.example/x")));
        assert!(same_origin(
            &u("http://EXAMPLE.com/"),
            &u("http://example.com:80/a")
        ));
        assert!(same_origin(
            &u("https://example.com/"),
            &u("https://example.com:443/")
        ));
    }

    #[test]
    fn only_http_urls_of_a_folder_are_checked() {
        assert_eq!(
            parse_base_url("http://127.0.0.1:8080").unwrap().as_str(),
            "http://127.0.0.1:8080/"
        );
        assert_eq!(
            parse_base_url("https://example.com/app").unwrap().as_str(),
            "https://example.com/app/"
        );
        for bad in [
            "ftp://example.com/",
            "example.com",
            "file:///srv/dist",
            "http://x/?a=1",
            "http://x/#f",
        ] {
            let e = parse_base_url(bad).unwrap_err().to_string();
            assert!(e.starts_with(bad), "{e}");
        }
        assert!(parse_base_url("ftp://example.com/")
            .unwrap_err()
            .to_string()
            .contains("not http:// or https://"));
    }

    /// Issue #29: `check --url http://user:password@host/` repeated the
    /// password in its report, its `--json` and its errors.
    #[test]
    fn userinfo_is_never_shown() {
        let base = parse_base_url("http://user:s3cret@127.0.0.1:8080/app").unwrap();
        // Still sent: the client takes the credentials from the URL.
        assert_eq!((base.username(), base.password()), ("user", Some("s3cret")));
        assert_eq!(shown(&base), "http://***@127.0.0.1:8080/app/");
        assert_eq!(
            shown(&asset_url(&base, "a b.js").unwrap()),
            "http://***@127.0.0.1:8080/app/a%20b.js"
        );
        let plain = parse_base_url("https://example.com/").unwrap();
        assert_eq!(shown(&plain), "https://example.com/");
        assert_eq!(
            shown(&parse_base_url("http://only-user@h/").unwrap()),
            "http://***@h/"
        );
        for (text, want) in [
            (
                "http://u:p@h:1/a.js: Connection Failed: Connect error: refused",
                "http://***@h:1/a.js: Connection Failed: Connect error: refused",
            ),
            ("ftp://u:p@h/", "ftp://***@h/"),
            (
                "a http://u:p@h and https://x:y@z/?q@r",
                "a http://***@h and https://***@z/?q@r",
            ),
            ("http://h/path@x", "http://h/path@x"),
            ("no url: a@b", "no url: a@b"),
            ("http://u:p@@h/", "http://***@h/"),
            // A password with `/`, `?` or `#` typed as it is (issue #46).
            (
                "https://deploy:ab/cdS3CR3T@host/: not a URL",
                "https://***@host/: not a URL",
            ),
            ("\"https://u:p?w@h/x\" is", "\"https://***@h/x\" is"),
            ("https://u:p#w@h/", "https://***@h/"),
            ("https://deploy:/secret@h/", "https://***@h/"),
            // A port is no password: an `@` later in the path stays.
            ("http://h:8080/a?mail=x@y", "http://h:8080/a?mail=x@y"),
            ("http://[::1]:80/p@q", "http://[::1]:80/p@q"),
            ("", ""),
        ] {
            assert_eq!(redact_userinfo(text), want, "{text}");
        }
        let e = parse_base_url("ftp://user:s3cret@example.com/")
            .unwrap_err()
            .to_string();
        assert!(
            !e.contains("s3cret") && e.starts_with("ftp://***@example.com/"),
            "{e}"
        );
        let e = parse_base_url("http://user:s3cret@[::1/")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3cret"), "{e}");
    }

    #[test]
    fn asset_urls_keep_odd_names_in_the_path() {
        let base = parse_base_url("http://h:1/app/").unwrap();
        let u = asset_url(&base, "odd names/café menü — spaces & #hash.html").unwrap();
        assert_eq!(
            u.path(),
            "/app/odd%20names/caf%C3%A9%20men%C3%BC%20%E2%80%94%20spaces%20&%20%23hash.html"
        );
        assert_eq!(u.fragment(), None);
        assert_eq!(
            asset_url(&base, "a?b:c%.js").unwrap().path(),
            "/app/a%3Fb%3Ac%25.js"
        );
    }

    #[test]
    fn content_types_compare_as_a_browser_reads_them() {
        let js = "text/javascript; charset=utf-8";
        assert!(same_content_type("Text/JavaScript; Charset=UTF-8", js));
        assert!(same_content_type("application/javascript", js));
        assert!(same_content_type("text/html", "text/html; charset=utf-8"));
        assert!(!same_content_type(
            "text/html; charset=iso-8859-1",
            "text/html; charset=utf-8"
        ));
        assert!(!same_content_type("application/octet-stream", js));
        assert!(!same_content_type("text/plain", "text/css; charset=utf-8"));
    }

    #[test]
    fn link_targets_are_read_by_rel() {
        let v = [
            r#"</a.css>; rel=preload; as=style, </_dict/shared.abc.js>; rel="compression-dictionary""#,
            r#"<https://h/docs.dict>; REL="prefetch compression-dictionary""#,
        ];
        assert_eq!(
            link_targets(&v, "compression-dictionary"),
            ["/_dict/shared.abc.js", "https://h/docs.dict"]
        );
        let serve = crate::model::dictionary::dictionary_link(&["/x.js", "/y.html"]).unwrap();
        assert_eq!(
            link_targets(&[serve], "compression-dictionary"),
            ["/x.js", "/y.html"]
        );
    }
}
