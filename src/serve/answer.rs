//! What is sent for the file [`super::route`] found: the representation
//! [`Index::select_with_dictionary`] picks (or 406), opened and checked
//! through an [`Open`] lookup, a file the manifest does not describe as it
//! is, then the preconditions (RFC 9110 §13: 412, 304) and the range (§14:
//! 206, 416). Pure but for the lookup, so a server only reads the bytes the
//! [`Reply`] names and writes them; [`decide`] is the whole of it, from the
//! request to the reply. negotiate.js's `answer` is its port.

use std::time::SystemTime;

use super::route::{route, Fields, Lookup, Request, Route, Target};
use super::{Headers, Index, Representation, Selection, CACHE_REVALIDATE};

/// How the decisions open what they chose to send.
pub trait Open: Lookup {
    /// An opened file, handed on in the [`Reply`].
    type Opened;
    /// Opens `rep` of the asset at `key` (`file`: what [`Lookup::node`]
    /// found for the key, when the request named it) and checks it is still
    /// what the index describes; why not, when it is not (it is then sent as
    /// it is, [`Open::open_plain`]).
    fn open(
        &self,
        key: &str,
        rep: &Representation,
        file: Option<Self::File>,
    ) -> Result<Self::Opened, String>;
    /// Opens the file at `key` as it is, with its length and modification
    /// time: one the manifest does not describe, or describes wrongly.
    fn open_plain(&self, key: &str) -> std::io::Result<Plain<Self::Opened>>;
    /// Whether `file` (what [`Lookup::node`] found for `key`) is known to be
    /// the source as the index saw it, so the manifest's validators hold for
    /// a reply that sends no bytes (304, 412) without opening anything. By
    /// default not known: the representation is opened first.
    fn source_unchanged(&self, key: &str, file: Option<&Self::File>) -> bool {
        let _ = (key, file);
        false
    }
}

/// A file opened as it is.
#[derive(Debug)]
pub struct Plain<O> {
    /// The opened file.
    pub file: O,
    /// Its length in bytes.
    pub len: u64,
    /// Its modification time, if known.
    pub modified: Option<SystemTime>,
}

/// The bytes a reply sends: `count` of them from byte `start` of `file`.
#[derive(Debug)]
pub struct Span<O> {
    /// The opened file.
    pub file: O,
    /// The first byte sent.
    pub start: u64,
    /// How many bytes are sent.
    pub count: u64,
}

/// The answer to a request: a status, its headers, and the bytes of a file,
/// if any. With no file the body is a short text (an error, a redirect), or
/// nothing for a 304 and for HEAD.
#[derive(Debug)]
pub struct Reply<O> {
    /// The status code.
    pub status: u16,
    /// The headers, names in canonical case.
    pub headers: Headers,
    /// The bytes to send (none for HEAD, whatever this says).
    pub body: Option<Span<O>>,
    /// What the server should log, each line starting `warning: ` or
    /// `error: `: a stale representation sent uncompressed, a file that
    /// could not be read.
    pub log: Vec<String>,
}

impl<O> Reply<O> {
    /// A reply with no file.
    pub fn status(status: u16, headers: Headers) -> Reply<O> {
        Reply {
            status,
            headers,
            body: None,
            log: Vec::new(),
        }
    }
}

/// Every decision for one request: [`route`], then [`answer`].
pub fn decide<L: Open>(index: &Index, req: &Request, lookup: &L, spa: bool) -> Reply<L::Opened> {
    match route(index, req, lookup, spa) {
        Route::Status(s) => Reply::status(s.status, s.headers),
        Route::File(t) => {
            let shell = spa && t.key == SHELL;
            let mut reply = answer(index, req, t, lookup);
            if shell {
                mark_shell(index, &mut reply.headers);
            }
            reply
        }
    }
}

/// A single-page app's shell, which answers every client-side route.
const SHELL: &str = "index.html";

/// With `spa`, the shell answers every route: a page marked as its next
/// version's dictionary is marked for every URL under the base
/// ([`shell_use_as_dictionary`](crate::model::dictionary::shell_use_as_dictionary)),
/// so a visitor who comes back to any route offers the shell they hold.
fn mark_shell(index: &Index, headers: &mut Headers) {
    if index
        .get(SHELL)
        .is_some_and(|e| e.cache == crate::model::manifest::Caching::Page)
    {
        for (name, value) in headers.iter_mut() {
            if *name == "Use-As-Dictionary" {
                *value = crate::model::dictionary::shell_use_as_dictionary(index.base());
            }
        }
    }
}

/// What is sent for `target`: the representation the manifest picks for the
/// request (a 406 when it accepts none), opened and checked, or the file as
/// it is when the manifest does not list it or what it picks is stale; then
/// [`conditional`] and [`span`].
pub fn answer<L: Open>(
    index: &Index,
    req: &Request,
    target: Target<L::File>,
    lookup: &L,
) -> Reply<L::Opened> {
    let Target { key, file, status } = target;
    let mut log = Vec::new();
    let h = req.headers;
    let accept = accept_encoding(h);
    let dictionary = single_value(h, "available-dictionary");
    let mut chosen = None;
    let browser = super::Browser::of(
        single_value(h, "sec-fetch-dest"),
        first(h, "sec-ch-ua").and_then(text),
    );
    match index.select_for(&key, accept.as_deref(), dictionary, browser) {
        Selection::Found(sel) => {
            let r = sel.representation;
            // A 304 or 412 sends no bytes: the client's copy is the one the
            // manifest names, and the source it decodes to is unchanged.
            let sel = if status == 200 && lookup.source_unchanged(&key, file.as_ref()) {
                match preconditions(h, sel) {
                    Ok(reply) => return reply,
                    Err(sel) => sel,
                }
            } else {
                sel
            };
            match lookup.open(&key, r, file) {
                Ok(opened) => chosen = Some((opened, sel.headers, r.coding.is_none())),
                Err(why) => log.push(format!(
                    "warning: {}: {why}; sending {key} uncompressed",
                    r.path
                )),
            }
        }
        Selection::NotAcceptable { mut headers } => {
            headers.push(nosniff());
            return Reply::status(406, headers);
        }
        Selection::Deferred { mut headers } => {
            headers.push(nosniff());
            return Reply::status(204, headers);
        }
        Selection::NotInManifest => {}
    }
    let (opened, headers, identity) = match chosen {
        Some(c) => c,
        None => match lookup.open_plain(&key) {
            Ok(p) => (p.file, plain_headers(&key, p.len, p.modified), true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Reply {
                    log,
                    ..Reply::status(404, Vec::new())
                };
            }
            Err(e) => {
                log.push(format!("error: {key}: {e}"));
                return Reply {
                    log,
                    ..Reply::status(500, Vec::new())
                };
            }
        },
    };
    let mut r = send(req, opened, headers, identity, status);
    log.append(&mut r.log);
    r.log = log;
    r
}

/// Headers for a file the manifest does not describe (or describes wrongly):
/// uncompressed, a weak ETag from size and mtime, revalidate on every use.
pub fn plain_headers(key: &str, len: u64, modified: Option<SystemTime>) -> Headers {
    let stamp = modified
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let mut headers: Headers = vec![
        ("Content-Type", crate::model::content::content_type(key)),
        ("Content-Length", len.to_string()),
        ("ETag", format!("W/\"{len:x}-{stamp:x}\"")),
    ];
    if let Some(t) = modified {
        headers.push(("Last-Modified", httpdate::fmt_http_date(t)));
    }
    headers.push(("Cache-Control", CACHE_REVALIDATE.to_string()));
    headers
}

/// The reply that sends `file` with `headers` (`status` 200, or 404 for the
/// 404 page), after the preconditions and the range.
fn send<O>(req: &Request, file: O, headers: Headers, identity: bool, status: u16) -> Reply<O> {
    let get = |name: &str| field(&headers, name);
    let etag = get("ETag").unwrap_or_default().to_string();
    let last_modified = get("Last-Modified").and_then(|d| httpdate::parse_http_date(d).ok());
    let len: u64 = get("Content-Length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let h = req.headers;
    // The 404 page is never a 304, a 412 or a range of itself.
    let found = status == 200;
    if found {
        if let Some(r) = conditional(h, &headers, &etag, last_modified) {
            return r;
        }
    }
    // Ranges only on identity: a byte range of one compressed variant is useless
    // to a client that negotiated another, and nginx does the same.
    let head = req.method == "HEAD";
    let ranged = found && identity && !head && range_applies(h, &etag, last_modified);
    let (code, start, count, content_range) = match span(h, ranged, len) {
        Ok(Some((a, b))) => (206, a, b - a + 1, Some(format!("bytes {a}-{b}/{len}"))),
        Ok(None) => (status, 0, len, None),
        Err(r) => return r,
    };
    let mut out = headers;
    out.push(nosniff());
    if identity {
        out.push(("Accept-Ranges", "bytes".to_string()));
    }
    if let Some(cr) = content_range {
        out.push(("Content-Range", cr));
        for (n, v) in &mut out {
            if *n == "Content-Length" {
                *v = count.to_string();
            }
        }
    }
    Reply {
        status: code,
        headers: out,
        body: Some(Span { file, start, count }),
        log: Vec::new(),
    }
}

/// The value of the header `name` of `headers`.
fn field<'a>(headers: &'a Headers, name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_str())
}

/// [`conditional`] for the manifest's representation, its validators as the
/// manifest and the load hold them (the `Last-Modified` sent is the load's
/// mtime in whole seconds, compared as such), its headers moved into a 304
/// rather than copied; `Err`: the request gets the representation.
fn preconditions<'a, O>(
    h: &dyn Fields,
    mut sel: super::Selected<'a>,
) -> Result<Reply<O>, super::Selected<'a>> {
    let etag = sel.representation.etag.as_str();
    let last_modified = sel.entry.last_modified.and_then(whole_seconds);
    if precondition_failed(h, etag, last_modified) {
        return Ok(Reply::status(
            412,
            vec![("ETag", etag.to_string()), nosniff()],
        ));
    }
    if not_modified(h, etag, last_modified) {
        sel.headers.retain(|(n, _)| KEPT_BY_304.contains(n));
        sel.headers.push(nosniff());
        return Ok(Reply::status(304, sel.headers));
    }
    Err(sel)
}

/// `t` as an HTTP date holds it: whole seconds since the epoch.
fn whole_seconds(t: SystemTime) -> Option<SystemTime> {
    let secs = t.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_secs();
    Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(secs))
}

/// The headers a 304 keeps of the representation's (RFC 9110 §15.4.5).
const KEPT_BY_304: [&str; 4] = ["ETag", "Last-Modified", "Cache-Control", "Vary"];

/// `X-Content-Type-Options: nosniff`, on every answer that carries the
/// file's headers (a file, 304, 406, 412).
fn nosniff() -> (&'static str, String) {
    ("X-Content-Type-Options", "nosniff".to_string())
}

/// The answer to a conditional request that does not get the body: 412 when
/// a precondition fails, else 304 (its validators and caching headers) when
/// the client's copy is current.
pub fn conditional<O>(
    h: &dyn Fields,
    headers: &Headers,
    etag: &str,
    last_modified: Option<SystemTime>,
) -> Option<Reply<O>> {
    if precondition_failed(h, etag, last_modified) {
        return Some(Reply::status(
            412,
            vec![("ETag", etag.to_string()), nosniff()],
        ));
    }
    if not_modified(h, etag, last_modified) {
        let mut kept: Headers = headers
            .iter()
            .filter(|(n, _)| KEPT_BY_304.contains(n))
            .cloned()
            .collect();
        kept.push(nosniff());
        return Some(Reply::status(304, kept));
    }
    None
}

/// The byte range (first, last) of a body of `len` bytes to send, `None`
/// for the whole; with `ranged` false, always the whole. The 416 when the
/// request asks only for bytes the body does not have.
pub fn span<O>(h: &dyn Fields, ranged: bool, len: u64) -> Result<Option<(u64, u64)>, Reply<O>> {
    if !ranged {
        return Ok(None);
    }
    match first(h, "range")
        .and_then(text)
        .map(|v| parse_range(v, len))
    {
        Some(RangeSpec::Satisfiable(a, b)) => Ok(Some((a, b))),
        Some(RangeSpec::Unsatisfiable) => Err(Reply::status(
            416,
            vec![("Content-Range", format!("bytes */{len}"))],
        )),
        Some(RangeSpec::Ignore) | None => Ok(None),
    }
}

/// The first value of the field `name`, if the request has one.
fn first<'a>(h: &'a dyn Fields, name: &str) -> Option<&'a [u8]> {
    h.first(name)
}

/// A field value as text when it is visible ASCII and tabs (what
/// `http::HeaderValue::to_str` accepts), else `None`.
fn text(v: &[u8]) -> Option<&str> {
    v.iter()
        .all(|&b| (32..127).contains(&b) || b == b'\t')
        .then(|| std::str::from_utf8(v).ok())
        .flatten()
}

/// An HTTP-date field's value, if it has one that parses.
fn date(h: &dyn Fields, name: &str) -> Option<SystemTime> {
    first(h, name)
        .and_then(text)
        .and_then(|v| httpdate::parse_http_date(v).ok())
}

/// `Accept-Encoding`, repeated fields joined; `None` when absent.
pub fn accept_encoding(h: &dyn Fields) -> Option<std::borrow::Cow<'_, str>> {
    if let Some(one) = h.one("accept-encoding") {
        return Some(String::from_utf8_lossy(one));
    }
    let values = h.values("accept-encoding");
    match values[..] {
        [] => None,
        [one] => Some(String::from_utf8_lossy(one)),
        _ => Some(std::borrow::Cow::Owned(
            values
                .iter()
                .map(|v| String::from_utf8_lossy(v))
                .collect::<Vec<_>>()
                .join(","),
        )),
    }
}

/// A field's value when the request has exactly one such field (a repeated
/// `Available-Dictionary` is no valid value, so it counts as absent).
pub fn single_value<'a>(h: &'a dyn Fields, name: &str) -> Option<&'a str> {
    h.one(name).and_then(text)
}

/// RFC 9110 §13.1.2 and §13.1.3: `If-None-Match` (weak comparison) wins over
/// `If-Modified-Since`.
pub fn not_modified(h: &dyn Fields, etag: &str, last_modified: Option<SystemTime>) -> bool {
    if let Some(inm) = first(h, "if-none-match") {
        let Some(inm) = text(inm) else { return false };
        fn weak(t: &str) -> &str {
            t.trim().trim_start_matches("W/")
        }
        let ours = weak(etag);
        return inm
            .split(',')
            .any(|t| t.trim() == "*" || (!ours.is_empty() && weak(t) == ours));
    }
    match (date(h, "if-modified-since"), last_modified) {
        (Some(since), Some(lm)) => lm <= since,
        _ => false,
    }
}

/// RFC 9110 §13.1.1 and §13.1.4: `If-Match` (strong comparison; `*` matches
/// any current representation) wins over `If-Unmodified-Since`.
pub fn precondition_failed(h: &dyn Fields, etag: &str, last_modified: Option<SystemTime>) -> bool {
    if let Some(im) = first(h, "if-match") {
        let Some(im) = text(im) else { return true };
        return !im
            .split(',')
            .map(str::trim)
            .any(|t| t == "*" || (!etag.starts_with("W/") && !t.starts_with("W/") && t == etag));
    }
    match (date(h, "if-unmodified-since"), last_modified) {
        (Some(since), Some(lm)) => lm > since,
        _ => false,
    }
}

/// `If-Range` (RFC 9110 §13.1.5): the range counts only if the validator still
/// matches, strongly for an ETag.
pub fn range_applies(h: &dyn Fields, etag: &str, last_modified: Option<SystemTime>) -> bool {
    let Some(ir) = first(h, "if-range") else {
        return true;
    };
    let Some(ir) = text(ir) else { return false };
    let ir = ir.trim();
    if ir.starts_with('"') {
        return !etag.starts_with("W/") && ir == etag;
    }
    match (httpdate::parse_http_date(ir), last_modified) {
        (Ok(d), Some(lm)) => httpdate::fmt_http_date(d) == httpdate::fmt_http_date(lm),
        _ => false,
    }
}

/// What a `Range` field asks of a body.
#[derive(Debug, PartialEq, Eq)]
pub enum RangeSpec {
    /// First and last byte, inclusive.
    Satisfiable(u64, u64),
    /// Only bytes the body does not have: 416.
    Unsatisfiable,
    /// Malformed, another unit, or several ranges: send the whole file (allowed
    /// by RFC 9110 §14.2).
    Ignore,
}

/// One `bytes=` range of a body of `len` bytes (RFC 9110 §14.1.2). A position
/// is `1*DIGIT`, with no bound: one past `u64` is still a position past the
/// end of any file (a last one means "to the end", a first one is
/// unsatisfiable), so positions saturate instead of making the range
/// malformed, and two positions are ordered by their digits.
pub fn parse_range(v: &str, len: u64) -> RangeSpec {
    let Some(spec) = v.trim().strip_prefix("bytes=") else {
        return RangeSpec::Ignore;
    };
    if spec.contains(',') {
        return RangeSpec::Ignore;
    }
    let Some((a, b)) = spec.trim().split_once('-') else {
        return RangeSpec::Ignore;
    };
    fn digits(s: &str) -> Option<&str> {
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())).then(|| s.trim_start_matches('0'))
    }
    // Only an overflow can fail: the digits are checked.
    let value = |d: &str| {
        if d.is_empty() {
            0
        } else {
            d.parse().unwrap_or(u64::MAX)
        }
    };
    match (a.is_empty(), digits(a), digits(b)) {
        // bytes=-N: the last N bytes.
        (true, _, Some(n)) if value(n) > 0 && len > 0 => {
            RangeSpec::Satisfiable(len.saturating_sub(value(n)), len - 1)
        }
        (true, _, Some(_)) => RangeSpec::Unsatisfiable,
        (false, Some(first), last) if b.is_empty() || last.is_some() => {
            // Without leading zeros, the shorter number is the smaller.
            let before = |x: &str, y: &str| (x.len(), x) < (y.len(), y);
            if last.is_some_and(|l| before(l, first)) {
                RangeSpec::Ignore
            } else if value(first) >= len {
                RangeSpec::Unsatisfiable
            } else {
                RangeSpec::Satisfiable(value(first), last.map_or(u64::MAX, value).min(len - 1))
            }
        }
        _ => RangeSpec::Ignore,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No fields at all.
    fn none() -> Vec<(&'static str, String)> {
        Vec::new()
    }

    #[test]
    fn ranges() {
        use RangeSpec::*;
        for (h, want) in [
            ("bytes=0-9", Satisfiable(0, 9)),
            ("bytes=5-", Satisfiable(5, 99)),
            ("bytes=-10", Satisfiable(90, 99)),
            ("bytes=-1000", Satisfiable(0, 99)),
            ("bytes=90-1000", Satisfiable(90, 99)),
            ("bytes=100-", Unsatisfiable),
            ("bytes=-0", Unsatisfiable),
            ("bytes=9-5", Ignore),
            ("bytes=0-1,5-9", Ignore),
            ("items=0-9", Ignore),
            ("bytes=a-b", Ignore),
            ("bytes=-", Ignore),
            ("bytes=+1-2", Ignore),
            ("bytes=007-0009", Satisfiable(7, 9)),
            // Past u64 (2^64 = 18446744073709551616): still positions (issue #29).
            ("bytes=0-18446744073709551616", Satisfiable(0, 99)),
            ("bytes=0-99999999999999999999999999", Satisfiable(0, 99)),
            ("bytes=-99999999999999999999999999", Satisfiable(0, 99)),
            ("bytes=18446744073709551616-", Unsatisfiable),
            (
                "bytes=18446744073709551616-18446744073709551617",
                Unsatisfiable,
            ),
            ("bytes=18446744073709551617-18446744073709551616", Ignore),
            ("bytes=5-18446744073709551616", Satisfiable(5, 99)),
            ("bytes=18446744073709551616-5", Ignore),
        ] {
            assert_eq!(parse_range(h, 100), want, "{h}");
        }
        assert_eq!(parse_range("bytes=0-", 0), Unsatisfiable);
    }

    #[test]
    fn preconditions_fail_with_412() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let h = |name: &'static str, value: &str| vec![(name, value.to_string())];
        // If-Match: strong comparison, `*` matches any.
        assert!(!precondition_failed(
            &h("if-match", "\"a\", \"b\""),
            "\"b\"",
            None
        ));
        assert!(precondition_failed(&h("if-match", "\"a\""), "\"b\"", None));
        assert!(precondition_failed(
            &h("if-match", "W/\"b\""),
            "\"b\"",
            None
        ));
        assert!(!precondition_failed(&h("if-match", "*"), "\"b\"", None));
        // If-Unmodified-Since: fails when modified after the date.
        let date = httpdate::fmt_http_date(t);
        let ius = h("if-unmodified-since", &date);
        assert!(!precondition_failed(&ius, "\"b\"", Some(t)));
        assert!(precondition_failed(
            &ius,
            "\"b\"",
            Some(t + std::time::Duration::from_secs(1))
        ));
        // If-Match wins over If-Unmodified-Since.
        let mut both = ius.clone();
        both.push(("if-match", "\"b\"".to_string()));
        assert!(!precondition_failed(
            &both,
            "\"b\"",
            Some(t + std::time::Duration::from_secs(1))
        ));
        assert!(!precondition_failed(&none(), "\"b\"", Some(t)));
    }

    #[test]
    fn conditionals() {
        let mut h = vec![("if-none-match", "\"a\", W/\"b\"".to_string())];
        assert!(not_modified(&h, "\"b\"", None));
        assert!(!not_modified(&h, "\"c\"", None));
        h[0].1 = "*".to_string();
        assert!(not_modified(&h, "\"c\"", None));
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let h = vec![("if-modified-since", httpdate::fmt_http_date(t))];
        assert!(not_modified(&h, "\"x\"", Some(t)));
        assert!(!not_modified(
            &h,
            "\"x\"",
            Some(t + std::time::Duration::from_secs(1))
        ));
        let h = vec![("if-range", "\"x\"".to_string())];
        assert!(range_applies(&h, "\"x\"", None));
        assert!(!range_applies(&h, "\"y\"", None));
        assert!(!range_applies(&h, "W/\"x\"", None));
    }
}
