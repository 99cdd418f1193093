//! The HTTP client `check --url` asks with: one blocking HTTP/1.1 request at a
//! time (ureq, rustls), no redirect followed, no encoding of its own, the
//! body read to a bound; [`Fetch`] so the loop and the verdicts can be tested
//! with answers made by hand.

use std::collections::BTreeSet;
use std::io::Read;
use std::time::Duration;

use url::Url;

use super::headers::redact_userinfo;
use super::terms::REQUEST_TIMEOUT;

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
                "the body is over {max_body} bytes"
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
