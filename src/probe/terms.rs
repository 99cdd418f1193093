//! The words of a live check: what it asks with (Chromium's
//! `Accept-Encoding`, with and without deltas), its bounds ([`Options`]), why
//! it cannot start ([`ProbeError`]), what it can find wrong ([`ProbeKind`],
//! [`Problem`]) and what it reports ([`Report`]).

use std::time::Duration;

use serde::Serialize;

/// What Chromium sends without a dictionary.
pub const ACCEPT_ENCODING: &str = "gzip, deflate, br, zstd";
/// What Chromium sends when it holds a dictionary for the URL.
pub const ACCEPT_ENCODING_DELTAS: &str = "gzip, deflate, br, zstd, dcb, dcz";
/// The fields Chromium 156 sends with a top-level navigation, which a page is
/// asked with.
pub const NAVIGATION: [(&str, &str); 3] = [
    ("Sec-Fetch-Dest", "document"),
    ("Sec-Fetch-Mode", "navigate"),
    ("Sec-CH-UA", CHROMIUM_UA),
];
/// The fields of Chromium's fetch of a dictionary a page links
/// (`Link: <...>; rel="compression-dictionary"`), measured.
pub const DICTIONARY_FETCH: [(&str, &str); 3] = [
    ("Sec-Fetch-Dest", "empty"),
    ("Sec-Fetch-Mode", "cors"),
    ("Sec-CH-UA", CHROMIUM_UA),
];
/// Chromium 156's `Sec-CH-UA`.
const CHROMIUM_UA: &str = "\"Chromium\";v=\"156\", \"Not)A;Brand\";v=\"24\"";
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
    /// The whole check's time, at most a day
    /// ([`crate::config::limits::CHECK_TIMEOUT_SECS`]; a longer one is a day).
    pub timeout: Duration,
    /// Fields sent with every request besides the check's own (a preview's
    /// bypass token: [`parse_header`]); never printed.
    pub headers: Vec<(String, String)>,
    /// A page and the files a first visit of it loads (the report's
    /// headline visit, `view::landing_loads`): the report then says what
    /// that visit downloaded from the origin ([`Report::first_visit`]).
    pub visit: Option<(String, std::collections::BTreeSet<String>)>,
}

/// A first visit of one page as the origin served it, against what
/// precompress wrote for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FirstVisit {
    /// The page (a manifest key).
    pub page: String,
    /// The page and the files it loads that were asked and answered 200.
    pub files: u64,
    /// Their bodies' bytes as the origin sent them to Chromium's
    /// `Accept-Encoding` (no dictionary).
    pub served: u64,
    /// The same files in the smallest coding precompress wrote for each
    /// (the report's "best"): what the visit downloads served as written.
    pub written: u64,
}

/// Fields the check sets itself, or that would make the origin answer
/// something else than a browser gets: `--header` refuses them.
pub const OWN_FIELDS: &[&str] = &[
    "accept-encoding",
    "available-dictionary",
    "host",
    "connection",
    "content-length",
    "transfer-encoding",
    "range",
    "if-range",
    "if-match",
    "if-none-match",
    "if-modified-since",
    "if-unmodified-since",
    "te",
    "upgrade",
];

/// `NAME: VALUE` of `--header`, as a field to send: a token for the name
/// (RFC 9110 §5.1), a value with no control character, and none of
/// [`OWN_FIELDS`] nor `Sec-Fetch-*`/`Sec-CH-UA*`. The error names the
/// field, never its value (a token is a secret).
pub fn parse_header(given: &str) -> Result<(String, String), String> {
    let Some((name, value)) = given.split_once(':') else {
        return Err("--header: give NAME: VALUE (no `:` found)".into());
    };
    let name = name.trim();
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Err("--header: the field name is not an HTTP token".into());
    }
    let lower = name.to_ascii_lowercase();
    if OWN_FIELDS.contains(&lower.as_str())
        || lower.starts_with("sec-fetch-")
        || lower.starts_with("sec-ch-ua")
    {
        return Err(format!(
            "--header {name}: the check sets it itself, as a browser would (or it would change the answer it judges)"
        ));
    }
    let value = value.trim();
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(format!(
            "--header {name}: the value holds a control character"
        ));
    }
    Ok((name.to_string(), value.to_string()))
}

impl Default for Options {
    fn default() -> Options {
        Options {
            rate: 20,
            max_requests: 2000,
            timeout: Duration::from_secs(120),
            headers: Vec::new(),
            visit: None,
        }
    }
}

/// Why a live check could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The URL is not an `http://` or `https://` URL of a folder.
    #[error("{url}: {detail}")]
    Url {
        /// As given, less any `user:password@` ([`super::redact_userinfo`]).
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
    /// The code dictionary sent to a request holding no dictionary (or a
    /// 204 a cache may keep), where `serve` answers `204`, `no-store`.
    DictionaryNotDeferred,
    /// An ETag that is weak, missing, or not the representation's.
    EtagMismatch,
    /// The host compressed a file on its own where precompress left it
    /// without a variant in that coding; the body decodes to the asset.
    /// Listed apart ([`Report::host`]): not a wrong file.
    HostCompressed,
    /// The host compressed a file again (another coding, or the same with
    /// other bytes) where precompress wrote a variant; the body decodes to
    /// the asset. Listed apart ([`Report::host`]).
    HostReencoded,
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
    /// What the host did on its own, to a body that still decodes to the
    /// asset: listed apart, never failing the check.
    pub fn is_host(self) -> bool {
        matches!(self, ProbeKind::HostCompressed | ProbeKind::HostReencoded)
    }

    /// The name `--json` and the text report use.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeKind::BodyMismatch => "body_mismatch",
            ProbeKind::ConnectionRefused => "connection_refused",
            ProbeKind::DictionaryNotFresh => "dictionary_not_fresh",
            ProbeKind::DictionaryNotDeferred => "dictionary_not_deferred",
            ProbeKind::EtagMismatch => "etag_mismatch",
            ProbeKind::HostCompressed => "host_compressed",
            ProbeKind::HostReencoded => "host_reencoded",
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
    /// [`shown`](super::shown): no password.
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
    /// a `user:password@` shown as `***@`, [`shown`](super::shown)).
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
    /// What the host compressed on its own, by path ([`ProbeKind::is_host`]):
    /// each body decodes to the asset, in a coding or size the host chose.
    /// Not problems: `ok` does not count them.
    pub host: Vec<Problem>,
    /// The first visit of [`Options::visit`]'s page, as served.
    pub first_visit: Option<FirstVisit>,
    /// What differs from `precompress serve` without being wrong for a
    /// browser (the server's own ETags, a heuristic dictionary lifetime).
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_is_a_token_and_a_value_and_never_one_the_check_sets() {
        assert_eq!(
            parse_header("x-vercel-protection-bypass: s3cret:with:colons "),
            Ok((
                "x-vercel-protection-bypass".into(),
                "s3cret:with:colons".into()
            ))
        );
        assert_eq!(
            parse_header("Authorization:Bearer a b"),
            Ok(("Authorization".into(), "Bearer a b".into()))
        );
        for refused in [
            "Accept-Encoding: br",
            "available-dictionary: :x:",
            "Sec-Fetch-Dest: document",
            "sec-ch-ua: x",
            "If-None-Match: \"a\"",
            "Host: other",
        ] {
            let e = parse_header(refused).unwrap_err();
            assert!(e.contains("sets it itself"), "{refused}: {e}");
        }
        for bad in [
            "no colon s3cret",
            ": s3cret",
            "bad name: s3cret",
            "x-a: s3cret\r\nx-b: 1",
        ] {
            let e = parse_header(bad).unwrap_err();
            // The value may be a secret: never in the message.
            assert!(!e.contains("s3cret"), "{bad}: {e}");
        }
    }
}
