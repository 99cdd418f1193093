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
    (
        "Sec-CH-UA",
        "\"Chromium\";v=\"156\", \"Not)A;Brand\";v=\"24\"",
    ),
];
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
    /// What differs from `precompress serve` without being wrong for a
    /// browser (the server's own ETags, a heuristic dictionary lifetime).
    pub notes: Vec<String>,
}
