//! `precompress serve`: a local preview server (like `vite preview`) that answers
//! from the manifest through [`Index::select`](crate::serve::Index::select), so what a developer sees locally is
//! what nginx or a CDN will send: the same variant, `Content-Encoding`, `ETag`,
//! `Vary` and `Cache-Control`.
//!
//! tokio + hyper's HTTP/1.1 server, nothing else: a preview server needs no
//! routing, and owning the request path (instead of a router's decoded one) is
//! what lets [`super::path`] refuse traversal before anything touches the disk.
//!
//! Small files are read whole (bodies up to 256 KiB kept in memory once read,
//! `known`), larger ones streamed. A preview server runs while its user
//! rebuilds in another terminal, so nothing stale is ever sent: the manifest is
//! reloaded when its stamp or the folder changes (a rerun of precompress, a
//! swapped link; asked with `stat` only when the inotify watch of `watch.rs`
//! saw something on their paths or cannot vouch); at load,
//! an asset whose file no longer has the manifest's content is left out
//! ([`Index::load`](crate::serve::Index::load)); and on every request the source and the representation
//! are stat'ed and must still have the size, mtime, inode and ctime seen at load
//! (a body kept in memory is sent only then, too). A source
//! that changed since is served uncompressed with a weak ETag from its size and
//! mtime (never the manifest's strong one), a variant that changed is not sent
//! (the file goes uncompressed instead), each with a warning on stderr.
//!
//! Connections: `TCP_NODELAY` (a response's last small segment is not held
//! back by Nagle waiting for the client's delayed ACK: 43 ms per keep-alive
//! request without it), a 20 s limit on reading a request's head that also
//! closes idle keep-alive connections, and an accept loop that backs off when
//! the process is out of file descriptors instead of spinning, logging the
//! failures at most once a second.
//!
//! The decisions are [`crate::serve::answer::decide`]'s; this module reads
//! the files it names and writes the bytes. `site.rs` owns the folder and the
//! manifest loaded from it, `watch.rs` whether their paths changed, `body.rs`
//! the bodies, `listen.rs` the process around the Service (its threads, the
//! access log).

mod body;
mod known;
mod listen;
mod site;
mod watch;

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};

use hyper::header::HeaderMap;
use hyper::{Method, Request, Response, StatusCode};

use crate::serve::answer::{decide, Reply};
use crate::serve::route::Fields;
use body::{body, empty, set_headers, text};
use site::{Disk, Site};

pub use body::ResBody;
pub use listen::run;

/// Options of `precompress serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The folder to serve.
    pub root: PathBuf,
    /// The manifest (default `root/precompress-manifest.json`).
    pub manifest: Option<PathBuf>,
    /// Where to listen (default `127.0.0.1:8080`, loopback only).
    pub addr: SocketAddr,
    /// The URL path the folder is served at (default: the manifest's `base`,
    /// else `/`); normalized ([`crate::model::path::normalize_base`]).
    pub base: Option<String>,
    /// A single-page app: a path with no file, whose last segment has no
    /// `.`, gets `index.html` (client-side routes survive a reload).
    pub spa: bool,
    /// Threads answering requests (default: one per core). One runs every
    /// connection on a single thread, as one nginx worker process does.
    pub threads: Option<std::num::NonZeroUsize>,
    /// No access log on stdout (errors and warnings still go to stderr).
    pub quiet: bool,
}

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// DIR is missing or not a folder.
    #[error("{}: not a folder", path.display())]
    Root { path: PathBuf },
    /// The manifest exists but cannot be used.
    #[error(transparent)]
    Manifest(#[from] crate::Error),
    /// The address could not be bound (in use, not local, no permission).
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: io::Error },
    /// The runtime or the listener failed.
    #[error("server error: {0}")]
    Io(#[from] io::Error),
}

/// A `tower::Service` that answers GET and HEAD for a folder from its
/// manifest, exactly as `precompress serve` does (which is a thin user of it):
/// negotiation and deltas ([`Index::select_with_dictionary`](crate::serve::Index::select_with_dictionary)), per
/// representation `ETag`, `Vary`, `Cache-Control`, `Use-As-Dictionary`,
/// `If-None-Match`/`If-Modified-Since` (304), `If-Match`/`If-Unmodified-Since`
/// (412), `If-Range` and `Range`, no path out of the folder, and never a stale
/// representation. Cheap to clone. For axum:
/// `Router::new().fallback_service(ServeManifest::new("dist")?)`; see
/// `examples/axum.rs`.
#[derive(Clone)]
pub struct ServeManifest {
    site: Arc<Site>,
}

impl ServeManifest {
    /// Serves `root` from `root/precompress-manifest.json`.
    pub fn new(root: impl AsRef<Path>) -> Result<ServeManifest, ServeError> {
        ServeManifest::with_manifest(root, None)
    }

    /// Serves `root` from `manifest` (default `root/precompress-manifest.json`).
    /// A missing manifest is no error: every file is then served as is.
    pub fn with_manifest(
        root: impl AsRef<Path>,
        manifest: Option<&Path>,
    ) -> Result<ServeManifest, ServeError> {
        ServeManifest::with_options(root, manifest, None)
    }

    /// Serves `root` from `manifest` (default `root/precompress-manifest.json`)
    /// at URL path `base` (default the manifest's `base`, else `/`; normalized,
    /// [`crate::model::path::normalize_base`]): a request outside it is a 404.
    pub fn with_options(
        root: impl AsRef<Path>,
        manifest: Option<&Path>,
        base: Option<&str>,
    ) -> Result<ServeManifest, ServeError> {
        let given = root.as_ref();
        let mpath = manifest
            .map(Path::to_path_buf)
            .unwrap_or_else(|| crate::model::manifest::default_path(given));
        // Watched before it is read: a change from then on raises an event.
        let watch = std::sync::Mutex::new(Site::watch(given, &mpath));
        let loaded = Site::load(given, &mpath, base)?;
        Ok(ServeManifest {
            site: Arc::new(Site {
                given: given.to_path_buf(),
                manifest: mpath,
                base: base.map(str::to_string),
                spa: false.into(),
                loaded: RwLock::new(Arc::new(loaded)),
                reloading: std::sync::Mutex::new(()),
                watch,
                changes: Default::default(),
            }),
        })
    }

    /// As a single-page app: a path with no file whose last segment has no
    /// `.` gets `index.html` with 200, so a client-side route survives a
    /// reload (missing assets stay 404s).
    pub fn single_page_app(self, on: bool) -> ServeManifest {
        self.site
            .spa
            .store(on, std::sync::atomic::Ordering::Relaxed);
        self
    }

    /// Whether a manifest was found (else every file goes out uncompressed).
    pub fn has_manifest(&self) -> bool {
        self.site.current().stamp.is_some()
    }

    /// Answers one request.
    pub async fn respond<B>(&self, req: &Request<B>) -> Response<ResBody> {
        respond(&self.site, req).await
    }
}

impl<B> tower_service::Service<Request<B>> for ServeManifest {
    type Response = Response<ResBody>;
    type Error = std::convert::Infallible;
    type Future =
        Pin<Box<dyn std::future::Future<Output = Result<Response<ResBody>, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let site = self.site.clone();
        // GET and HEAD have no body worth reading: only the head goes along,
        // so any body type will do (axum's is not Sync).
        let (head, _body) = req.into_parts();
        let req = Request::from_parts(head, ());
        Box::pin(async move { Ok(respond(&site, &req).await) })
    }
}

async fn respond<B>(site: &Site, req: &Request<B>) -> Response<ResBody> {
    // One load for the whole request: never two releases' files in one answer.
    let loaded = site.current();
    let spa = site.spa.load(std::sync::atomic::Ordering::Relaxed);
    let request = crate::serve::route::Request {
        method: req.method().as_str(),
        path: req.uri().path(),
        query: req.uri().query(),
        headers: req.headers(),
    };
    let reply = decide(&loaded.index, &request, &Disk(&loaded), spa);
    write(reply, req.method() == Method::HEAD)
}

/// The response for `reply`: its file's bytes (none for HEAD), nothing for
/// a 304 or 204, else a short text; what it says to log, on stderr.
fn write(reply: Reply<body::Opened>, head: bool) -> Response<ResBody> {
    for line in &reply.log {
        eprintln!("precompress serve: {line}");
    }
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut r = match reply.body {
        Some(s) => match body(s.file, head, s.start, s.count) {
            std::ops::ControlFlow::Continue(b) => Response::new(b),
            std::ops::ControlFlow::Break(r) => return r,
        },
        None if status == StatusCode::NOT_MODIFIED || status == StatusCode::NO_CONTENT => {
            Response::new(empty())
        }
        None => text(status),
    };
    *r.status_mut() = status;
    set_headers(r.headers_mut(), reply.headers);
    r
}

/// A request's fields as the decisions read them.
impl Fields for HeaderMap {
    fn values(&self, name: &str) -> Vec<&[u8]> {
        match request_field(name) {
            Some(n) => self.get_all(n).iter().map(|v| v.as_bytes()).collect(),
            None => self.get_all(name).iter().map(|v| v.as_bytes()).collect(),
        }
    }

    fn first(&self, name: &str) -> Option<&[u8]> {
        match request_field(name) {
            Some(n) => self.get(n),
            None => self.get(name),
        }
        .map(|v| v.as_bytes())
    }

    fn one(&self, name: &str) -> Option<&[u8]> {
        let all = match request_field(name) {
            Some(n) => self.get_all(n),
            None => self.get_all(name),
        };
        let mut all = all.iter();
        let v = all.next()?;
        all.next().is_none().then(|| v.as_bytes())
    }
}

/// The request fields the decisions read, as constants: no parse of the
/// name per lookup.
fn request_field(name: &str) -> Option<hyper::header::HeaderName> {
    use hyper::header::{self, HeaderName};
    Some(match name {
        "accept-encoding" => header::ACCEPT_ENCODING,
        "if-none-match" => header::IF_NONE_MATCH,
        "if-match" => header::IF_MATCH,
        "if-modified-since" => header::IF_MODIFIED_SINCE,
        "if-unmodified-since" => header::IF_UNMODIFIED_SINCE,
        "if-range" => header::IF_RANGE,
        "range" => header::RANGE,
        "available-dictionary" => HeaderName::from_static("available-dictionary"),
        "sec-fetch-dest" => HeaderName::from_static("sec-fetch-dest"),
        "sec-ch-ua" => HeaderName::from_static("sec-ch-ua"),
        _ => return None,
    })
}
