//! `precompress check --url URL DIR`: asks a live origin for every asset of
//! DIR's manifest the way Chromium would, and reports per asset what came back
//! wrong. The offline `check` proves the files; this proves the deploy: that
//! the server sends those files (not a stale copy, not one it re-encoded),
//! with the headers `serve` documents, and a delta to a client that holds the
//! previous release.
//!
//! Per asset, one GET with Chromium's `Accept-Encoding` (plus `dcb, dcz` when
//! the asset has deltas), then one per distinct dictionary of its deltas
//! (at most [`MAX_DICTIONARIES`]) with `Available-Dictionary`. Each answer is
//! judged by pure functions of its status, headers and body ([`judge`]), so
//! the rules are unit-tested without a network.
//!
//! Where the README's servers differ from `precompress serve` and a browser
//! does not care, the check does not either: nginx and Caddy send their own
//! ETags (from mtime and size), so the body is proved by hash instead; they
//! send `application/javascript` or no charset, which a browser reads the
//! same. The report's notes name the first. A dictionary with no
//! `Cache-Control` lifetime is a problem, not a difference: Chromium keeps it
//! only for its heuristic lifetime (a tenth of its age since `Last-Modified`),
//! minutes after a deploy, so a visitor who returns the next day holds no
//! dictionary and every delta is lost without a sign.
//!
//! Bounds: requests are paced at `rate` per second, at most `max_requests`
//! (assets are checked in path order; when the next asset's requests do not fit,
//! it and all after it are not checked, which is a problem, never a pass), a
//! total `timeout`, and [`REQUEST_TIMEOUT`] per request. A redirect is never
//! followed.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;
use url::Url;

use crate::encode::{new_encoder, Codec, Encoder, Levels};
use crate::model::coding::DeltaCoding;
use crate::model::manifest::{Asset, Manifest};

/// What Chromium sends without a dictionary.
pub const ACCEPT_ENCODING: &str = "gzip, deflate, br, zstd";
/// What Chromium sends when it holds a dictionary for the URL.
pub const ACCEPT_ENCODING_DELTAS: &str = "gzip, deflate, br, zstd, dcb, dcz";
/// Each request's own bound (connect, send, and read the whole body).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Dictionaries asked with per asset: one release back is what browsers hold;
/// a few more cover `--dictionary-from` given several releases.
pub const MAX_DICTIONARIES: usize = 4;

/// The bounds of a live check.
#[derive(Debug, Clone)]
pub struct Options {
    /// Requests per second (at least 1).
    pub rate: u32,
    /// Requests in all; assets past it are not checked (and the check fails).
    pub max_requests: u64,
    /// The whole check's time.
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            rate: 20,
            max_requests: 2000,
            timeout: Duration::from_secs(120),
        }
    }
}

/// Why a live check could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The URL is not an `http://` or `https://` URL of a folder.
    #[error("{url}: {detail}")]
    Url {
        /// As given, less any `user:password@` ([`redact_userinfo`]).
        url: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The manifest is missing or invalid.
    #[error(transparent)]
    Manifest(#[from] crate::Error),
}

/// The kinds of problem, as `--json` names them (snake_case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// The body is not the file the manifest lists for its coding (stale, re-encoded).
    BodyMismatch,
    /// Nothing listens at the origin: the check stopped.
    ConnectionRefused,
    /// A dictionary's response that Chromium would not keep (`no-cache`, `no-store`, ...),
    /// or would keep only for its heuristic lifetime (no `Cache-Control` lifetime).
    DictionaryNotFresh,
    /// An ETag that is weak, missing, or not the representation's.
    EtagMismatch,
    /// An HTML page without the `Link` to the release's shared dictionaries.
    MissingLink,
    /// A dictionary's response without its `Use-As-Dictionary`.
    MissingUseAsDictionary,
    /// `Vary` lacks `Accept-Encoding` or `Available-Dictionary`.
    MissingVary,
    /// A client holding a delta's dictionary got no delta.
    NoDelta,
    /// Assets not checked: `--max-requests` or `--timeout` ran out.
    NotChecked,
    /// A same-origin redirect where the asset should answer 200.
    Redirect,
    /// A redirect to another scheme, host or port (never followed).
    RedirectOffOrigin,
    /// The request failed (timeout, reset, unreadable response).
    RequestFailed,
    /// A status other than 200.
    Status,
    /// The origin cannot be reached (DNS, connect timeout): the check stopped.
    Unreachable,
    /// `Use-As-Dictionary` on an asset the manifest does not mark.
    UnexpectedUseAsDictionary,
    /// A manifest key that is not a plain path: not requested.
    UnsafePath,
    /// A `Content-Encoding` the manifest does not list, or identity when it lists a variant.
    WrongContentEncoding,
    /// `Content-Type` is not the manifest's.
    WrongContentType,
    /// `Use-As-Dictionary` is not the manifest's value.
    WrongUseAsDictionary,
}

impl ProbeKind {
    /// The name `--json` and the text report use.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeKind::BodyMismatch => "body_mismatch",
            ProbeKind::ConnectionRefused => "connection_refused",
            ProbeKind::DictionaryNotFresh => "dictionary_not_fresh",
            ProbeKind::EtagMismatch => "etag_mismatch",
            ProbeKind::MissingLink => "missing_link",
            ProbeKind::MissingUseAsDictionary => "missing_use_as_dictionary",
            ProbeKind::MissingVary => "missing_vary",
            ProbeKind::NoDelta => "no_delta",
            ProbeKind::NotChecked => "not_checked",
            ProbeKind::Redirect => "redirect",
            ProbeKind::RedirectOffOrigin => "redirect_off_origin",
            ProbeKind::RequestFailed => "request_failed",
            ProbeKind::Status => "status",
            ProbeKind::Unreachable => "unreachable",
            ProbeKind::UnexpectedUseAsDictionary => "unexpected_use_as_dictionary",
            ProbeKind::UnsafePath => "unsafe_path",
            ProbeKind::WrongContentEncoding => "wrong_content_encoding",
            ProbeKind::WrongContentType => "wrong_content_type",
            ProbeKind::WrongUseAsDictionary => "wrong_use_as_dictionary",
        }
    }
}

impl std::fmt::Display for ProbeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing wrong with what the origin sent.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Problem {
    /// The asset's manifest key (empty for the origin as a whole).
    pub path: String,
    /// The URL asked (the origin's for a problem of the whole origin), as
    /// [`shown`]: no password.
    pub url: String,
    /// Short machine-readable kind.
    pub problem: ProbeKind,
    /// What exactly.
    pub detail: String,
}

/// How many responses came with each coding.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Sent {
    /// No `Content-Encoding`.
    pub identity: u64,
    /// `br`.
    pub br: u64,
    /// `zstd`.
    pub zstd: u64,
    /// `gzip`.
    pub gzip: u64,
    /// `dcb` deltas.
    pub dcb: u64,
    /// `dcz` deltas.
    pub dcz: u64,
    /// Any other coding (compressed on the fly: `deflate`, ...).
    pub other: u64,
    /// Requests sent with an `Available-Dictionary`.
    pub delta_requests: u64,
}

/// The outcome of a live check.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// True when there is no problem.
    pub ok: bool,
    /// The URL DIR is served at, as checked (normalized, ending in `/`;
    /// a `user:password@` shown as `***@`, [`shown`]).
    pub url: String,
    /// Assets the manifest lists.
    pub assets: u64,
    /// Assets whose requests were all made.
    pub checked: u64,
    /// Of those, the ones with no problem.
    pub ok_assets: u64,
    /// Requests made.
    pub requests: u64,
    /// Codings of the responses.
    pub sent: Sent,
    /// Everything wrong, by path.
    pub problems: Vec<Problem>,
    /// What differs from `precompress serve` without being wrong for a
    /// browser (the server's own ETags, a heuristic dictionary lifetime).
    pub notes: Vec<String>,
}

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
        match after[..end].rfind('@') {
            Some(at) => {
                out.push_str("***");
                out.push_str(&after[at..end]);
            }
            None => out.push_str(&after[..end]),
        }
        rest = &after[end..];
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

/// One response, as received: names lower case, every line kept, the body
/// de-chunked but never decoded.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// Status code.
    pub status: u16,
    /// Header lines in order, names lower case.
    pub headers: Vec<(String, String)>,
    /// The raw body.
    pub body: Vec<u8>,
}

impl Answer {
    /// Every value of the field `name` (lower case).
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// Every line of `name` joined with `, `, if there is one.
    pub fn joined(&self, name: &str) -> Option<String> {
        let all = self.all(name);
        (!all.is_empty()).then(|| all.join(", "))
    }

    /// The first value of `name`.
    pub fn first(&self, name: &str) -> Option<&str> {
        self.all(name).into_iter().next()
    }
}

/// Why a request got no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// Connection refused: nothing listens there.
    Refused(String),
    /// The host cannot be reached (DNS, connect timeout).
    Unreachable(String),
    /// Anything else (timeout, reset, a body over the bound, a bad response).
    Other(String),
}

/// Sends a GET and reads the answer; a 3xx is an answer, never followed.
pub trait Fetch {
    /// GET `url` with `headers`, within `timeout`, reading at most `max_body` bytes.
    fn get(
        &mut self,
        url: &Url,
        headers: &[(&str, &str)],
        timeout: Duration,
        max_body: u64,
    ) -> Result<Answer, FetchError>;
}

/// The HTTP/1.1 client: ureq without its compression features (it neither
/// adds `Accept-Encoding` nor decodes) and with redirects off.
pub struct Client(ureq::Agent);

impl Client {
    /// A client that keeps connections alive between requests.
    pub fn new() -> Client {
        Client(
            ureq::AgentBuilder::new()
                .redirects(0)
                .timeout(REQUEST_TIMEOUT)
                .user_agent(concat!("precompress-check/", env!("CARGO_PKG_VERSION")))
                .build(),
        )
    }
}

impl Default for Client {
    fn default() -> Client {
        Client::new()
    }
}

impl Fetch for Client {
    fn get(
        &mut self,
        url: &Url,
        headers: &[(&str, &str)],
        timeout: Duration,
        max_body: u64,
    ) -> Result<Answer, FetchError> {
        let mut req = self.0.request_url("GET", url).timeout(timeout);
        for (n, v) in headers {
            req = req.set(n, v);
        }
        let resp = match req.call() {
            Ok(r) | Err(ureq::Error::Status(_, r)) => r,
            Err(ureq::Error::Transport(t)) => return Err(transport_error(&t)),
        };
        let mut answer = Answer {
            status: resp.status(),
            ..Answer::default()
        };
        // `headers_names` has one entry per line; `all` gives every line of a name.
        let mut names = BTreeSet::new();
        for n in resp.headers_names() {
            let lower = n.to_ascii_lowercase();
            if names.insert(lower.clone()) {
                for v in resp.all(&n) {
                    answer.headers.push((lower.clone(), v.to_string()));
                }
            }
        }
        resp.into_reader()
            .take(max_body + 1)
            .read_to_end(&mut answer.body)
            .map_err(|e| FetchError::Other(format!("reading the body: {e}")))?;
        if answer.body.len() as u64 > max_body {
            return Err(FetchError::Other(format!(
                "the body is over {max_body} bytes, more than any representation the manifest lists"
            )));
        }
        Ok(answer)
    }
}

/// Refused and unreachable apart from the rest: they stop the check.
fn transport_error(t: &ureq::Transport) -> FetchError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(t);
    let mut refused = false;
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            refused |= io.kind() == std::io::ErrorKind::ConnectionRefused;
        }
        source = e.source();
    }
    // ureq names the URL it failed on, credentials and all.
    let text = redact_userinfo(&t.to_string());
    match t.kind() {
        _ if refused => FetchError::Refused(text),
        ureq::ErrorKind::ConnectionFailed | ureq::ErrorKind::Dns => FetchError::Unreachable(text),
        _ => FetchError::Other(text),
    }
}

/// What one request of an asset asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask<'a> {
    /// No dictionary.
    Plain,
    /// With this `Available-Dictionary` (a delta's `dictionary`).
    Dictionary(&'a str),
}

/// The asset one request is for.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// Its manifest key.
    pub key: &'a str,
    /// Its manifest entry.
    pub asset: &'a Asset,
    /// The URL asked.
    pub url: &'a Url,
    /// The `Link` targets an HTML page must carry (absolute URLs): the
    /// manifest's shared and documents dictionaries.
    pub dictionaries: &'a [Url],
}

/// What [`judge`] found in one answer, besides problems.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The `Content-Encoding` token sent (`None`: identity).
    pub coding: Option<String>,
    /// The ETag sent.
    pub etag: Option<String>,
    /// The ETag the manifest gives the representation sent, when it lists it.
    pub expected_etag: Option<String>,
    /// blake3 of the raw body.
    pub body_blake3: String,
}

/// Decoders for the three variant codecs, made on first use.
#[derive(Default)]
pub struct Decoders([Option<Box<dyn Encoder>>; 3]);

impl Decoders {
    /// blake3 of `body` decoded with `codec` (the limits of a browser), or why not.
    fn decoded_blake3(&mut self, codec: Codec, body: &[u8], size: u64) -> Result<String, String> {
        let dec = match &mut self.0[codec.index()] {
            Some(d) => d,
            slot => slot.insert(
                new_encoder(codec, Levels::default()).map_err(|e| format!("no decoder: {e}"))?,
            ),
        };
        let mut out = Vec::new();
        // One spare byte: a body that decodes to more fails the comparison.
        dec.decode(body, size as usize + 1, &mut out)
            .map_err(|e| format!("it does not decode as {} ({e})", codec.token()))?;
        Ok(blake3::hash(&out).to_hex().to_string())
    }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(16)]
}

/// Judges one answer for `target`, pushing problems (`kind`, `detail`) into
/// `out`. `None` when there is nothing more to learn from it (not a 200).
pub fn judge(
    target: Target<'_>,
    ask: Ask<'_>,
    answer: &Answer,
    dec: &mut Decoders,
    out: &mut Vec<(ProbeKind, String)>,
) -> Option<Seen> {
    let (asset, url) = (target.asset, target.url);
    if (300..400).contains(&answer.status) {
        out.push(redirect(url, answer));
        return None;
    }
    if answer.status != 200 {
        out.push((
            ProbeKind::Status,
            format!("answered {}, not 200", answer.status),
        ));
        return None;
    }
    let body_blake3 = blake3::hash(&answer.body).to_hex().to_string();
    let coding = answer
        .joined("content-encoding")
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity");
    let expected_etag = match ask {
        Ask::Plain => judge_variant(asset, coding.as_deref(), answer, &body_blake3, dec, out),
        Ask::Dictionary(d) => {
            let delta = judge_delta(asset, d, coding.as_deref(), &body_blake3, out);
            let delta_coding = coding.as_deref().and_then(DeltaCoding::parse).is_some();
            let delta_bytes = asset.deltas.iter().any(|d| d.blake3 == body_blake3);
            if delta.is_none() && !delta_coding && !delta_bytes {
                // No delta: what came instead must still be right.
                judge_variant(asset, coding.as_deref(), answer, &body_blake3, dec, out)
            } else {
                delta
            }
        }
    };
    judge_headers(target, answer, out);
    if asset.use_as_dictionary.is_some() {
        let not_fresh = match dictionary_freshness(
            answer.joined("cache-control").as_deref(),
            answer.first("expires"),
            answer.first("date"),
            answer.first("last-modified"),
        ) {
            Freshness::Fresh => None,
            Freshness::Heuristic(s) => Some(format!(
                "no Cache-Control lifetime nor Expires: Chromium would keep the dictionary only for a tenth of its age since Last-Modified ({s} s now), so a visitor who comes back later holds none and gets no delta; send `Cache-Control: {}` (fingerprinted names; precompress serve does)",
                crate::serve::CACHE_IMMUTABLE
            )),
            Freshness::NotFresh(why) => Some(why),
        };
        out.extend(not_fresh.map(|why| (ProbeKind::DictionaryNotFresh, why)));
    }
    Some(Seen {
        coding,
        etag: answer.joined("etag"),
        expected_etag,
        body_blake3,
    })
}

/// The problem of a 3xx answer.
fn redirect(url: &Url, answer: &Answer) -> (ProbeKind, String) {
    let Some(loc) = answer.first("location") else {
        return (
            ProbeKind::Status,
            format!("answered {} with no Location", answer.status),
        );
    };
    match url.join(loc.trim()) {
        Ok(to) if same_origin(url, &to) => (
            ProbeKind::Redirect,
            format!(
                "answered {} to {} (same origin): an asset's URL should answer 200; not followed",
                answer.status,
                shown(&to)
            ),
        ),
        Ok(to) => (
            ProbeKind::RedirectOffOrigin,
            format!(
                "answered {} to {}, another origin; not followed",
                answer.status,
                shown(&to)
            ),
        ),
        Err(_) => (
            ProbeKind::RedirectOffOrigin,
            format!(
                "answered {} with Location {:?}, which is no URL; not followed",
                answer.status,
                redact_userinfo(loc)
            ),
        ),
    }
}

/// Coding and body of an answer to a request without a dictionary; the
/// manifest's ETag of what was sent.
fn judge_variant(
    asset: &Asset,
    coding: Option<&str>,
    answer: &Answer,
    body_blake3: &str,
    dec: &mut Decoders,
    out: &mut Vec<(ProbeKind, String)>,
) -> Option<String> {
    let listed: Vec<&str> = asset.encodings.iter().map(|v| v.coding.as_str()).collect();
    let size = answer.body.len();
    let Some(coding) = coding else {
        if !listed.is_empty() {
            out.push((
                ProbeKind::WrongContentEncoding,
                format!(
                    "sent identity, though the manifest lists {} and the request accepts it",
                    listed.join(", ")
                ),
            ));
        }
        if body_blake3 != asset.blake3 {
            out.push((
                ProbeKind::BodyMismatch,
                format!(
                    "the uncompressed body ({size} bytes, blake3 {}) is not the asset's ({} bytes, blake3 {}): a stale file after a rebuild?",
                    short(body_blake3),
                    asset.size,
                    short(&asset.blake3)
                ),
            ));
        }
        return Some(asset.etag.clone());
    };
    if DeltaCoding::parse(coding).is_some() {
        out.push((
            ProbeKind::WrongContentEncoding,
            format!("sent {coding}, a delta, to a request with no Available-Dictionary"),
        ));
        return None;
    }
    let codec = Codec::parse(coding).filter(|c| c.token() == coding);
    let Some(variant) = asset.encodings.iter().find(|v| v.coding == coding) else {
        let decodes = codec.map(|c| dec.decoded_blake3(c, &answer.body, asset.size));
        let how = match decodes {
            Some(Ok(h)) if h == asset.blake3 => {
                "; it decodes to the asset, so the server compressed it on the fly".to_string()
            }
            Some(Ok(_)) => "; it decodes to something other than the asset".to_string(),
            Some(Err(e)) => format!("; {e}"),
            None => String::new(),
        };
        out.push((
            ProbeKind::WrongContentEncoding,
            format!(
                "sent {coding}, which the manifest does not list for this asset (it lists {}){how}",
                if listed.is_empty() {
                    "no variant".to_string()
                } else {
                    listed.join(", ")
                }
            ),
        ));
        return None;
    };
    let decoded = codec.map(|c| dec.decoded_blake3(c, &answer.body, asset.size));
    if body_blake3 != variant.blake3 {
        let how = match decoded {
            Some(Ok(h)) if h == asset.blake3 => {
                ", though it decodes to the asset: compressed again by the server?".to_string()
            }
            Some(Ok(_)) => {
                ", and it decodes to something other than the asset: a stale file after a rebuild?"
                    .to_string()
            }
            Some(Err(e)) => format!(", and {e}: a stale file after a rebuild?"),
            None => String::new(),
        };
        out.push((
            ProbeKind::BodyMismatch,
            format!(
                "the {coding} body ({size} bytes, blake3 {}) is not the manifest's {} ({} bytes, blake3 {}){how}",
                short(body_blake3),
                variant.path,
                variant.size,
                short(&variant.blake3)
            ),
        ));
    } else {
        // The file is the one listed, so the manifest itself is wrong.
        let why = match decoded {
            Some(Ok(h)) if h != asset.blake3 => {
                Some("it decodes to something other than the asset".to_string())
            }
            Some(Err(e)) => Some(e),
            _ => None,
        };
        if let Some(why) = why {
            out.push((
                ProbeKind::BodyMismatch,
                format!(
                    "the {coding} body is the manifest's {}, but {why} (run precompress check DIR)",
                    variant.path
                ),
            ));
        }
    }
    Some(variant.etag.clone())
}

/// Coding and body of an answer to a request with the dictionary `dict`.
fn judge_delta(
    asset: &Asset,
    dict: &str,
    coding: Option<&str>,
    body_blake3: &str,
    out: &mut Vec<(ProbeKind, String)>,
) -> Option<String> {
    let got = coding.unwrap_or("identity");
    let Some(delta) = asset
        .deltas
        .iter()
        .find(|d| d.dictionary == dict && Some(d.coding.as_str()) == coding)
    else {
        // The delta's bytes under another coding: a browser would take them
        // for the asset itself.
        if let Some(d) = asset.deltas.iter().find(|d| d.blake3 == body_blake3) {
            out.push((
                ProbeKind::WrongContentEncoding,
                format!(
                    "sent the bytes of {} with Content-Encoding {got}, not {}: a browser would read the delta as the asset",
                    d.path, d.coding
                ),
            ));
        }
        out.push((
            ProbeKind::NoDelta,
            format!(
                "a client holding the previous release (Available-Dictionary {dict}) got {got}, not its delta"
            ),
        ));
        return None;
    };
    if body_blake3 != delta.blake3 {
        out.push((
            ProbeKind::BodyMismatch,
            format!(
                "the {got} body (blake3 {}) is not the manifest's {} (blake3 {}): a stale delta after a rebuild?",
                short(body_blake3),
                delta.path,
                short(&delta.blake3)
            ),
        ));
    }
    Some(delta.etag.clone())
}

/// `Content-Type`, `Vary`, `Use-As-Dictionary` and, on HTML, `Link`.
fn judge_headers(target: Target<'_>, answer: &Answer, out: &mut Vec<(ProbeKind, String)>) {
    let (key, asset, url) = (target.key, target.asset, target.url);
    match answer.joined("content-type") {
        Some(t) if same_content_type(&t, &asset.content_type) => {}
        t => out.push((
            ProbeKind::WrongContentType,
            format!(
                "Content-Type {}, the manifest's is {:?}",
                t.map_or("missing".into(), |t| format!("{t:?}")),
                asset.content_type
            ),
        )),
    }
    let vary = answer.all("vary");
    let mut need = Vec::new();
    if !asset.encodings.is_empty() || !asset.deltas.is_empty() {
        need.push("Accept-Encoding");
    }
    if !asset.deltas.is_empty() {
        need.push("Available-Dictionary");
    }
    let lacking: Vec<&str> = need.into_iter().filter(|n| !varies_on(&vary, n)).collect();
    if !lacking.is_empty() {
        out.push((
            ProbeKind::MissingVary,
            format!(
                "{} lacks {}: a shared cache could send one client's coding to another",
                if vary.is_empty() {
                    "no Vary: it".to_string()
                } else {
                    format!("Vary {:?}", vary.join(", "))
                },
                lacking.join(" and ")
            ),
        ));
    }
    let use_as = answer.joined("use-as-dictionary");
    match (&asset.use_as_dictionary, use_as) {
        (Some(want), None) => out.push((
            ProbeKind::MissingUseAsDictionary,
            format!("no Use-As-Dictionary (the manifest's is {want:?}): browsers will not keep it for the next release's deltas"),
        )),
        (Some(want), Some(got)) if got.trim() != want => out.push((
            ProbeKind::WrongUseAsDictionary,
            format!("Use-As-Dictionary {got:?}, the manifest's is {want:?}"),
        )),
        (None, Some(got)) => out.push((
            ProbeKind::UnexpectedUseAsDictionary,
            format!("Use-As-Dictionary {got:?} on an asset the manifest does not mark"),
        )),
        _ => {}
    }
    if asset
        .content_type
        .to_ascii_lowercase()
        .starts_with("text/html")
        && !target.dictionaries.is_empty()
    {
        let links: Vec<Url> = link_targets(&answer.all("link"), "compression-dictionary")
            .iter()
            .filter_map(|t| url.join(t).ok())
            .collect();
        let missing: Vec<&str> = target
            .dictionaries
            .iter()
            .filter(|d| !links.contains(d))
            .map(Url::path)
            .collect();
        if !missing.is_empty() {
            out.push((
                ProbeKind::MissingLink,
                format!(
                    "no Link <{}>; rel=\"compression-dictionary\" on {key}: browsers will not fetch the shared dictionary",
                    missing.join(">, <")
                ),
            ));
        }
    }
}

/// One asset's requests.
struct Job<'m> {
    key: &'m str,
    asset: &'m Asset,
    url: Url,
    dictionaries: Vec<&'m str>,
}

/// Spaces requests `1/rate` s apart, within the deadline.
struct Pacer {
    next: Instant,
    interval: Duration,
    deadline: Instant,
}

impl Pacer {
    /// Waits for the next slot; `None` when it is past the deadline.
    fn wait(&mut self) -> Option<Duration> {
        let now = Instant::now();
        if self.next > now {
            if self.next >= self.deadline {
                return None;
            }
            std::thread::sleep(self.next - now);
        }
        let now = Instant::now();
        if now >= self.deadline {
            return None;
        }
        self.next = self.next.max(now) + self.interval;
        Some((self.deadline - now).min(REQUEST_TIMEOUT))
    }
}

/// Why the check stopped before the end.
enum Stop {
    Budget,
    Timeout,
    /// Refused or unreachable: the problem's kind and what happened.
    Origin(ProbeKind, String),
}

/// Checks the origin at `url` against the manifest at `manifest_path`.
pub fn probe(manifest_path: &Path, url: &str, opts: &Options) -> Result<Report, ProbeError> {
    let base = parse_base_url(url)?;
    let manifest = Manifest::read(manifest_path)?;
    Ok(probe_with(&manifest, &base, opts, &mut Client::new()))
}

/// [`probe`] with a parsed manifest and URL and any client.
pub fn probe_with(
    manifest: &Manifest,
    base: &Url,
    opts: &Options,
    client: &mut dyn Fetch,
) -> Report {
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let dictionaries: Vec<Url> = [&manifest.shared_dictionary, &manifest.documents_dictionary]
        .into_iter()
        .flatten()
        .filter_map(|k| asset_url(base, k))
        .collect();
    let manifest_base = manifest
        .base
        .as_deref()
        .unwrap_or(crate::model::path::ROOT_BASE);
    let marked = manifest
        .files
        .values()
        .any(|a| a.use_as_dictionary.is_some());
    if marked && manifest_base != base.path() {
        notes.push(format!(
            "the manifest was written for base {manifest_base}, and DIR is checked at {}: its dictionary patterns match no URL there, so browsers send no dictionary (run precompress with --base {})",
            base.path(),
            base.path()
        ));
    }
    let mut jobs = Vec::new();
    for (key, asset) in &manifest.files {
        let url = crate::model::path::check_relative(key)
            .ok()
            .and_then(|()| asset_url(base, key));
        let Some(url) = url else {
            problems.push(Problem {
                path: key.clone(),
                url: String::new(),
                problem: ProbeKind::UnsafePath,
                detail: "not a plain path inside DIR; not requested".into(),
            });
            continue;
        };
        let dicts: BTreeSet<&str> = asset.deltas.iter().map(|d| d.dictionary.as_str()).collect();
        jobs.push(Job {
            key,
            asset,
            url,
            dictionaries: dicts.into_iter().take(MAX_DICTIONARIES).collect(),
        });
    }
    let start = Instant::now();
    let mut pacer = Pacer {
        next: start,
        interval: Duration::from_secs(1) / opts.rate.max(1),
        deadline: start + opts.timeout,
    };
    let mut dec = Decoders::default();
    let mut sent = Sent::default();
    let mut requests = 0u64;
    let mut checked: Vec<&str> = Vec::new();
    let mut seen_all: Vec<(&str, &Url, Seen)> = Vec::new();
    let mut stop = None;
    let mut unchecked = 0u64;
    let mut needed = 0u64;
    for job in &jobs {
        let need = 1 + job.dictionaries.len() as u64;
        if stop.is_none() && requests + need > opts.max_requests {
            stop = Some(Stop::Budget);
        }
        if stop.is_some() {
            unchecked += 1;
            needed += need;
            continue;
        }
        let mut found: Vec<(ProbeKind, String)> = Vec::new();
        let asks =
            std::iter::once(Ask::Plain).chain(job.dictionaries.iter().map(|d| Ask::Dictionary(d)));
        let mut complete = true;
        for ask in asks {
            let Some(timeout) = pacer.wait() else {
                stop = Some(Stop::Timeout);
                complete = false;
                break;
            };
            let accept = if job.asset.deltas.is_empty() {
                ACCEPT_ENCODING
            } else {
                ACCEPT_ENCODING_DELTAS
            };
            let mut headers = vec![("Accept-Encoding", accept)];
            if let Ask::Dictionary(d) = ask {
                headers.push(("Available-Dictionary", d));
                sent.delta_requests += 1;
            }
            let max_body = job
                .asset
                .encodings
                .iter()
                .map(|v| v.size)
                .chain(job.asset.deltas.iter().map(|d| d.size))
                .fold(job.asset.size, u64::max)
                + (1 << 16);
            requests += 1;
            match client.get(&job.url, &headers, timeout, max_body) {
                Ok(answer) => {
                    let target = Target {
                        key: job.key,
                        asset: job.asset,
                        url: &job.url,
                        dictionaries: &dictionaries,
                    };
                    if let Some(seen) = judge(target, ask, &answer, &mut dec, &mut found) {
                        count(&mut sent, seen.coding.as_deref());
                        seen_all.push((job.key, &job.url, seen));
                    }
                }
                // Every later request would fail the same way: stop.
                Err(FetchError::Refused(_)) => {
                    let at = base.host_str().unwrap_or_default().to_string();
                    let port = base.port_or_known_default().unwrap_or_default();
                    stop = Some(Stop::Origin(
                        ProbeKind::ConnectionRefused,
                        format!("connection refused: nothing listens at {at}:{port}"),
                    ));
                    complete = false;
                    break;
                }
                Err(FetchError::Unreachable(e)) => {
                    stop = Some(Stop::Origin(
                        ProbeKind::Unreachable,
                        format!("cannot reach the origin: {e}"),
                    ));
                    complete = false;
                    break;
                }
                Err(FetchError::Other(e)) => {
                    found.push((ProbeKind::RequestFailed, e));
                }
            }
        }
        found.sort();
        // One dictionary_not_fresh per asset: the heuristic's seconds can tick
        // between its requests.
        found.dedup_by(|b, a| a.0 == b.0 && (a.1 == b.1 || a.0 == ProbeKind::DictionaryNotFresh));
        problems.extend(found.into_iter().map(|(problem, detail)| Problem {
            path: job.key.to_string(),
            url: shown(&job.url),
            problem,
            detail,
        }));
        if complete {
            checked.push(job.key);
        } else {
            unchecked += 1;
            needed += need;
        }
    }
    problems.extend(judge_etags(&seen_all, &mut notes));
    let not_checked = format!("{unchecked} of {} assets not checked", manifest.files.len());
    let origin = |problem, detail| Problem {
        path: String::new(),
        url: shown(base),
        problem,
        detail,
    };
    match stop {
        Some(Stop::Origin(kind, what)) => {
            problems.push(origin(kind, format!("{what}; stopped: {not_checked}")));
        }
        Some(Stop::Budget) => problems.push(origin(
            ProbeKind::NotChecked,
            format!(
                "{not_checked}: --max-requests {} reached (they need {} more; raise it); that is not a pass",
                opts.max_requests,
                crate::report::plural(needed, "request", "requests")
            ),
        )),
        Some(Stop::Timeout) => problems.push(origin(
            ProbeKind::NotChecked,
            format!(
                "{not_checked}: --timeout {} s ran out (raise it, or --rate); that is not a pass",
                opts.timeout.as_secs()
            ),
        )),
        None => {}
    }
    problems.sort();
    let with_problems: BTreeSet<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    Report {
        ok: problems.is_empty(),
        url: shown(base),
        assets: manifest.files.len() as u64,
        checked: checked.len() as u64,
        ok_assets: checked
            .iter()
            .filter(|k| !with_problems.contains(*k))
            .count() as u64,
        requests,
        sent,
        problems,
        notes,
    }
}

fn count(sent: &mut Sent, coding: Option<&str>) {
    let slot = match coding {
        None => &mut sent.identity,
        Some("br") => &mut sent.br,
        Some("zstd") => &mut sent.zstd,
        Some("gzip") => &mut sent.gzip,
        Some("dcb") => &mut sent.dcb,
        Some("dcz") => &mut sent.dcz,
        Some(_) => &mut sent.other,
    };
    *slot += 1;
}

/// ETags over the whole origin. A weak one is always a problem (the server
/// re-encoded the body or no longer vouches for its bytes). A server that
/// sends the manifest's ETags (any response carries one) must send the one
/// of each representation; one with its own scheme (nginx, Caddy: mtime and
/// size) must at least never give two different bodies of an asset one tag.
fn judge_etags(seen: &[(&str, &Url, Seen)], notes: &mut Vec<String>) -> Vec<Problem> {
    let problem = |key: &str, url: &Url, detail: String| Problem {
        path: key.to_string(),
        url: shown(url),
        problem: ProbeKind::EtagMismatch,
        detail,
    };
    let manifest_tags = seen
        .iter()
        .any(|(_, _, s)| s.etag.is_some() && s.etag == s.expected_etag);
    let mut out = Vec::new();
    let mut bodies: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
    for (key, url, s) in seen {
        let what = s.coding.as_deref().unwrap_or("identity");
        match (&s.etag, &s.expected_etag) {
            (Some(e), _) if e.trim_start().starts_with("W/") => out.push(problem(
                key,
                url,
                format!(
                    "weak ETag {e} on the {what} body: re-encoded, or changed since precompress ran?"
                ),
            )),
            (e, Some(want)) if manifest_tags && e.as_ref() != Some(want) => out.push(problem(
                key,
                url,
                format!(
                    "ETag {} on the {what} body, the manifest's is {want}: a stale or re-encoded file?",
                    e.as_deref().unwrap_or("missing")
                ),
            )),
            (Some(e), _) => {
                bodies
                    .entry((key, e.as_str()))
                    .or_default()
                    .insert(&s.body_blake3);
            }
            _ => {}
        }
    }
    for ((key, etag), hashes) in bodies {
        if hashes.len() > 1 {
            let url = seen.iter().find(|(k, _, _)| *k == key).map(|(_, u, _)| *u);
            if let Some(url) = url {
                out.push(problem(
                    key,
                    url,
                    format!("one strong ETag {etag} on {} different bodies: a cache could revalidate one coding with another", hashes.len()),
                ));
            }
        }
    }
    if !manifest_tags && seen.iter().any(|(_, _, s)| s.etag.is_some()) {
        notes.push(
            "the server sends its own ETags (as nginx and Caddy do, from mtime and size), not the manifest's; each body was checked by its blake3 instead"
                .into(),
        );
    }
    out.sort();
    out.dedup();
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
        // A same-origin redirect's target keeps the base's userinfo when joined.
        let (kind, detail) = redirect(&base, &answer(301, &[("Location", "/app/x/")]));
        assert_eq!(kind, ProbeKind::Redirect);
        assert!(!detail.contains("s3cret"), "{detail}");
        assert!(
            detail.contains("http://***@127.0.0.1:8080/app/x/"),
            "{detail}"
        );
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

    fn asset_json() -> Asset {
        serde_json::from_str(
            r#"{"blake3": "b3", "content_type": "text/javascript; charset=utf-8",
                "deltas": [{"blake3": "d1", "coding": "dcb", "dictionary": ":AA=:", "dictionary_path": "old.js",
                            "etag": "\"dcb\"", "path": "a.js.x.dcb", "size": 10}],
                "encodings": [{"blake3": "v1", "coding": "br", "etag": "\"br\"", "path": "a.js.br", "size": 20}],
                "etag": "\"id\"", "sha256": "s", "size": 100, "skipped": {},
                "use_as_dictionary": "match=\"/a-*.js\""}"#,
        )
        .unwrap()
    }

    fn answer(status: u16, headers: &[(&str, &str)]) -> Answer {
        Answer {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_ascii_lowercase(), v.to_string()))
                .collect(),
            body: b"not the file".to_vec(),
        }
    }

    fn kinds(a: &Answer, ask: Ask<'_>) -> Vec<ProbeKind> {
        let base = parse_base_url("http://127.0.0.1:1/").unwrap();
        let url = asset_url(&base, "a.js").unwrap();
        let asset = asset_json();
        let target = Target {
            key: "a.js",
            asset: &asset,
            url: &url,
            dictionaries: &[],
        };
        let mut out = Vec::new();
        judge(target, ask, a, &mut Decoders::default(), &mut out);
        let mut k: Vec<ProbeKind> = out.into_iter().map(|(k, _)| k).collect();
        k.dedup();
        k
    }

    fn seen(coding: &str, etag: &str, expected: &str, body: &str) -> Seen {
        Seen {
            coding: Some(coding.into()),
            etag: (!etag.is_empty()).then(|| etag.into()),
            expected_etag: Some(expected.into()),
            body_blake3: body.into(),
        }
    }

    fn etag_problems(seen: &[Seen]) -> (Vec<String>, Vec<String>) {
        let url = Url::parse("http://h/a.js").unwrap();
        let all: Vec<(&str, &Url, Seen)> = seen.iter().map(|s| ("a.js", &url, s.clone())).collect();
        let mut notes = Vec::new();
        let p = judge_etags(&all, &mut notes);
        (p.into_iter().map(|p| p.detail).collect(), notes)
    }

    #[test]
    fn etags_are_the_manifests_once_the_server_sends_them() {
        // The manifest's scheme: every representation its own tag.
        let (p, notes) = etag_problems(&[
            seen("br", "\"br\"", "\"br\"", "1"),
            seen("dcb", "\"id\"", "\"dcb\"", "2"),
        ]);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("ETag \"id\" on the dcb body"), "{p:?}");
        assert!(notes.is_empty());
        // nginx's scheme: its own tags, never one for two bodies.
        let (p, notes) = etag_problems(&[
            seen("br", "\"6b1-9f9\"", "\"br\"", "1"),
            seen("dcb", "\"6b1-54\"", "\"dcb\"", "2"),
        ]);
        assert!(p.is_empty(), "{p:?}");
        assert!(notes[0].contains("its own ETags"), "{notes:?}");
        let (p, _) = etag_problems(&[
            seen("br", "\"x\"", "\"br\"", "1"),
            seen("dcb", "\"x\"", "\"dcb\"", "2"),
        ]);
        assert!(
            p[0].contains("one strong ETag \"x\" on 2 different bodies"),
            "{p:?}"
        );
        // Weak is always wrong.
        let (p, _) = etag_problems(&[seen("br", "W/\"x\"", "\"br\"", "1")]);
        assert!(p[0].starts_with("weak ETag"), "{p:?}");
    }

    #[test]
    fn a_dictionary_without_a_cache_lifetime_is_not_fresh() {
        let base = parse_base_url("http://127.0.0.1:1/").unwrap();
        let url = asset_url(&base, "a.js").unwrap();
        let asset = asset_json();
        let target = Target {
            key: "a.js",
            asset: &asset,
            url: &url,
            dictionaries: &[],
        };
        let not_fresh = |headers: &[(&str, &str)]| -> Vec<String> {
            let mut out = Vec::new();
            let a = answer(200, headers);
            judge(target, Ask::Plain, &a, &mut Decoders::default(), &mut out);
            out.into_iter()
                .filter(|(k, _)| *k == ProbeKind::DictionaryNotFresh)
                .map(|(_, d)| d)
                .collect()
        };
        // nginx and Caddy as they come: Last-Modified, no Cache-Control.
        let date = "Thu, 02 Jan 2025 00:00:00 GMT";
        let bare = [("Date", date), ("Last-Modified", date)];
        let d = not_fresh(&bare);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].contains("a tenth of its age since Last-Modified (0 s now)"),
            "{d:?}"
        );
        assert!(
            d[0].contains("send `Cache-Control: public, max-age=31536000, immutable`"),
            "{d:?}"
        );
        let kept = [
            ("Date", date),
            ("Last-Modified", date),
            ("Cache-Control", crate::serve::CACHE_IMMUTABLE),
        ];
        assert!(not_fresh(&kept).is_empty());
    }

    #[test]
    fn redirects_are_judged_not_followed() {
        let a = answer(302, &[("Location", "http://other.example/x")]);
        assert_eq!(kinds(&a, Ask::Plain), [ProbeKind::RedirectOffOrigin]);
        let a = answer(301, &[("Location", "/a.js/")]);
        assert_eq!(kinds(&a, Ask::Plain), [ProbeKind::Redirect]);
        let a = answer(404, &[]);
        assert_eq!(kinds(&a, Ask::Plain), [ProbeKind::Status]);
    }

    #[test]
    fn a_bare_server_answer_names_every_missing_header() {
        let a = answer(
            200,
            &[
                ("Content-Type", "text/plain"),
                ("Cache-Control", "no-cache"),
            ],
        );
        let k = kinds(&a, Ask::Plain);
        for want in [
            ProbeKind::WrongContentEncoding,
            ProbeKind::BodyMismatch,
            ProbeKind::WrongContentType,
            ProbeKind::MissingVary,
            ProbeKind::MissingUseAsDictionary,
            ProbeKind::DictionaryNotFresh,
        ] {
            assert!(k.contains(&want), "{want}: {k:?}");
        }
        let k = kinds(&a, Ask::Dictionary(":AA=:"));
        assert!(k.contains(&ProbeKind::NoDelta), "{k:?}");
    }
}
