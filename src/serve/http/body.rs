//! The bytes of a response and its head on hyper's types: a short text for
//! an error or a redirect, nothing, bytes kept in memory
//! ([`super::known`]), a small file read whole, a larger one streamed in
//! 64 KiB frames that fails the connection, never sends short, when the file
//! shrinks.

use std::io;
use std::ops::ControlFlow::{self, Break, Continue};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Empty, Full};
use hyper::body::{Body, Frame, SizeHint};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use tokio::io::{AsyncRead, ReadBuf};

use crate::serve::Headers;

/// The body of every response the server and the Service give.
pub type ResBody = BoxBody<Bytes, io::Error>;

/// Responses up to this size are read whole and sent in one piece; larger ones
/// are streamed. Files are opened and small ones read on the async thread: from
/// the page cache that takes microseconds, less than a hop to tokio's blocking
/// pool, and this is a preview server for local files.
const INLINE_MAX: u64 = 1 << 20;

/// What a reply sends: bytes kept in memory, or a file opened and checked.
pub(super) enum Opened {
    Kept(Bytes),
    File(std::fs::File),
}

/// `count` bytes of `opened` from `start` (none for HEAD): read at once when
/// small, else streamed; the 500 to send instead when the file cannot be
/// read as far as it was.
pub(super) fn body(
    opened: Opened,
    head: bool,
    start: u64,
    count: u64,
) -> ControlFlow<Response<ResBody>, ResBody> {
    if head || count == 0 {
        return Continue(empty());
    }
    let mut file = match opened {
        Opened::File(f) => f,
        Opened::Kept(b) => {
            let (a, z) = (start as usize, (start + count) as usize);
            if z > b.len() {
                return Break(text(StatusCode::INTERNAL_SERVER_ERROR));
            }
            return Continue(
                Full::new(b.slice(a..z))
                    .map_err(|never| match never {})
                    .boxed(),
            );
        }
    };
    use std::io::{Read, Seek};
    if start > 0 {
        if let Err(e) = file.seek(io::SeekFrom::Start(start)) {
            eprintln!("precompress serve: error: seek: {e}");
            return Break(text(StatusCode::INTERNAL_SERVER_ERROR));
        }
    }
    if count <= INLINE_MAX {
        // Read at once and sent with the headers: no trip through tokio's
        // blocking pool per 64 KiB, and one write for a small response.
        let mut buf = vec![0; count as usize];
        if let Err(e) = file.read_exact(&mut buf) {
            // The file shrank after its length was checked: fail, never short.
            eprintln!("precompress serve: error: read: {e}");
            return Break(text(StatusCode::INTERNAL_SERVER_ERROR));
        }
        Continue(
            Full::new(Bytes::from(buf))
                .map_err(|never| match never {})
                .boxed(),
        )
    } else {
        Continue(
            FileBody {
                file: tokio::fs::File::from_std(file),
                remaining: count,
                buf: Vec::new(),
            }
            .boxed(),
        )
    }
}

/// `headers` onto `map`, each value's bytes taken as they are (not copied).
/// Manifest values were checked at load; a bad one is dropped, not sent.
pub(super) fn set_headers(map: &mut HeaderMap, headers: Headers) {
    map.reserve(headers.len());
    for (name, value) in headers {
        if let Ok(v) = HeaderValue::try_from(value) {
            match known_name(name) {
                Some(n) => map.insert(n, v),
                None => map.insert(name, v),
            };
        }
    }
}

/// The names the decisions use, as constants: no parse per response.
fn known_name(name: &str) -> Option<header::HeaderName> {
    Some(match name {
        "Content-Type" => header::CONTENT_TYPE,
        "Content-Length" => header::CONTENT_LENGTH,
        "Content-Encoding" => header::CONTENT_ENCODING,
        "ETag" => header::ETAG,
        "Last-Modified" => header::LAST_MODIFIED,
        "Cache-Control" => header::CACHE_CONTROL,
        "Vary" => header::VARY,
        "X-Content-Type-Options" => header::X_CONTENT_TYPE_OPTIONS,
        "Accept-Ranges" => header::ACCEPT_RANGES,
        "Content-Range" => header::CONTENT_RANGE,
        "Link" => header::LINK,
        "Location" => header::LOCATION,
        "Allow" => header::ALLOW,
        _ => return None,
    })
}

pub(super) fn empty() -> ResBody {
    Empty::new().map_err(|never| match never {}).boxed()
}

/// A short plain-text response for errors and redirects.
pub(super) fn text(status: StatusCode) -> Response<ResBody> {
    let msg = format!("{status}\n");
    let mut r = Response::new(
        Full::new(Bytes::from(msg))
            .map_err(|never| match never {})
            .boxed(),
    );
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// Streams `remaining` bytes of a file in 64 KiB frames.
struct FileBody {
    file: tokio::fs::File,
    remaining: u64,
    buf: Vec<u8>,
}

impl Body for FileBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.get_mut();
        if this.remaining == 0 {
            return Poll::Ready(None);
        }
        let n = this.remaining.min(64 * 1024) as usize;
        this.buf.resize(n, 0);
        let mut rb = ReadBuf::new(&mut this.buf[..n]);
        ready!(Pin::new(&mut this.file).poll_read(cx, &mut rb))?;
        let got = rb.filled().len();
        if got == 0 {
            // The file shrank after its length was sent: end the connection with an error.
            return Poll::Ready(Some(Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "file shrank while being sent",
            ))));
        }
        this.remaining -= got as u64;
        Poll::Ready(Some(Ok(Frame::data(Bytes::copy_from_slice(rb.filled())))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}
