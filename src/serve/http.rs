//! `precompress serve`: a local preview server (like `vite preview`) that answers
//! from the manifest through [`Index::select`], so what a developer sees locally is
//! what nginx or a CDN will send: the same variant, `Content-Encoding`, `ETag`,
//! `Vary` and `Cache-Control`.
//!
//! tokio + hyper's HTTP/1.1 server, nothing else: a preview server needs no
//! routing, and owning the request path (instead of a router's decoded one) is
//! what lets [`super::path`] refuse traversal before anything touches the disk.
//!
//! Files are streamed, never read whole. A preview server runs while its user
//! rebuilds in another terminal, so nothing stale is ever sent: the manifest is
//! reloaded when its size or mtime changes (a rerun of precompress); at load,
//! an asset whose file no longer has the manifest's content is left out
//! ([`Index::load`]); and on every request the source and the representation
//! are stat'ed and must still have the size, mtime, inode and ctime seen at load. A source
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

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::ops::ControlFlow::{self, Break, Continue};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Empty, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, ReadBuf};

use super::path::{parse_request_path, resolve, PathError};
use super::{Headers, Index, Selection, CACHE_REVALIDATE};

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

type ResBody = BoxBody<Bytes, io::Error>;

/// What a stage of answering a request gives: a value to go on with, or the
/// response to send at once.
type Step<T> = ControlFlow<Response<ResBody>, T>;

struct Site {
    /// The folder as given: resolved again whenever the manifest changes, so
    /// `current -> release-2` swapped in by `ln -sfn` is served from then on.
    given: PathBuf,
    /// The manifest, watched for reruns (and, through a symlinked folder,
    /// for swaps).
    manifest: PathBuf,
    /// `--base`, over the manifest's.
    base: Option<String>,
    /// `--spa`: unknown routes get `index.html` ([`fallback`]).
    spa: std::sync::atomic::AtomicBool,
    loaded: RwLock<Arc<Loaded>>,
    /// Held by the one request that reloads the manifest.
    reloading: std::sync::Mutex<()>,
}

/// The index and what the files looked like when it was loaded. A request
/// takes one and uses it throughout, so it never mixes two releases' files.
struct Loaded {
    /// The folder, canonical (so `resolve` can compare prefixes) as it was at
    /// load: a swapped symlink gives the next load another.
    root: PathBuf,
    /// The manifest's canonical path (where it would be, if missing), to
    /// refuse serving it.
    manifest_canonical: PathBuf,
    index: Index,
    /// The manifest's stamp, `None` when there was none.
    stamp: Option<Stamp>,
    /// Every listed file (sources, variants, deltas) that existed at load:
    /// its stamp then.
    files: HashMap<String, Stamp>,
}

/// What tells a file was replaced or rewritten since it was last seen: size
/// and mtime, and on Unix the inode and ctime too. Size and mtime alone miss
/// an atomic replacement of the same size with the mtime kept (`rsync -a`,
/// `cp -p`, a `SOURCE_DATE_EPOCH` build): a new file has a new inode, and any
/// write or rename sets the ctime, which no tool can set back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size: u64,
    modified: SystemTime,
    #[cfg(unix)]
    inode: (u64, u64),
    #[cfg(unix)]
    changed: (i64, i64),
}

impl Stamp {
    fn of(md: &std::fs::Metadata) -> Option<Stamp> {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Some(Stamp {
            size: md.len(),
            modified: md.modified().ok()?,
            #[cfg(unix)]
            inode: (md.dev(), md.ino()),
            #[cfg(unix)]
            changed: (md.ctime(), md.ctime_nsec()),
        })
    }
}

/// A file's stamp, `None` if it cannot be stat'ed.
fn stamp_of(path: &Path) -> Option<Stamp> {
    Stamp::of(&std::fs::metadata(path).ok()?)
}

impl Site {
    /// Resolves the folder, loads (or, with no manifest, an empty index) and
    /// stats what it lists.
    fn load(given: &Path, manifest: &Path, base: Option<&str>) -> Result<Loaded, ServeError> {
        let root = std::fs::canonicalize(given)
            .ok()
            .filter(|p| p.is_dir())
            .ok_or_else(|| ServeError::Root {
                path: given.to_path_buf(),
            })?;
        let stamp = stamp_of(manifest);
        let mut index = if stamp.is_some() {
            Index::load(&root, Some(manifest))?
        } else {
            Index::default()
        };
        if let Some(b) = base {
            if let Some(w) = super::base_mismatch(&index, b) {
                eprintln!("precompress serve: warning: {w}");
            }
            index.set_base(b);
        }
        let root = &root;
        let mut files = HashMap::new();
        for (_, entry) in index.iter() {
            let deltas = entry.deltas.iter().map(|(_, r)| r);
            for r in std::iter::once(&entry.identity)
                .chain(&entry.variants)
                .chain(deltas)
            {
                if let Some(st) = stamp_of(&root.join(&r.path)) {
                    files.insert(r.path.clone(), st);
                }
            }
        }
        Ok(Loaded {
            root: root.clone(),
            manifest_canonical: std::fs::canonicalize(manifest)
                .unwrap_or_else(|_| manifest.to_path_buf()),
            index,
            stamp,
            files,
        })
    }

    /// The index, reloaded first if precompress rewrote the manifest since.
    /// One request reloads; the others meanwhile keep the index they had (the
    /// checks per request still keep stale files from being sent).
    fn current(&self) -> Arc<Loaded> {
        let loaded = self.loaded.read().unwrap().clone();
        let now = stamp_of(&self.manifest);
        // The folder resolved again too: a manifest named with --manifest
        // outside a swapped symlink does not change with it.
        let same_root = || std::fs::canonicalize(&self.given).is_ok_and(|r| r == loaded.root);
        if now == loaded.stamp && same_root() {
            return loaded;
        }
        let Ok(_reloading) = self.reloading.try_lock() else {
            return loaded;
        };
        // Another request may have reloaded while this one waited for the lock.
        let loaded = self.loaded.read().unwrap().clone();
        if now == loaded.stamp && std::fs::canonicalize(&self.given).is_ok_and(|r| r == loaded.root)
        {
            return loaded;
        }
        let fresh = match Site::load(&self.given, &self.manifest, self.base.as_deref()) {
            Ok(fresh) => {
                eprintln!(
                    "precompress serve: {} changed: reloaded, {} assets from {}",
                    self.manifest.display(),
                    fresh.index.len(),
                    fresh.root.display()
                );
                fresh
            }
            Err(e) => {
                // Not tried again until the manifest changes again.
                eprintln!("precompress serve: warning: {e}; keeping the manifest loaded before");
                Loaded {
                    root: loaded.root.clone(),
                    manifest_canonical: loaded.manifest_canonical.clone(),
                    index: loaded.index.clone(),
                    stamp: now,
                    files: loaded.files.clone(),
                }
            }
        };
        let fresh = Arc::new(fresh);
        *self.loaded.write().unwrap() = fresh.clone();
        fresh
    }
}

/// A `tower::Service` that answers GET and HEAD for a folder from its
/// manifest, exactly as `precompress serve` does (which is a thin user of it):
/// negotiation and deltas ([`Index::select_with_dictionary`]), per
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
        let loaded = Site::load(given, &mpath, base)?;
        Ok(ServeManifest {
            site: Arc::new(Site {
                given: given.to_path_buf(),
                manifest: mpath,
                base: base.map(str::to_string),
                spa: false.into(),
                loaded: RwLock::new(Arc::new(loaded)),
                reloading: std::sync::Mutex::new(()),
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

/// Serves `opts.root` until Ctrl-C. Prints the URL on stdout, then one access-log
/// line per request.
pub fn run(opts: &ServeOptions) -> Result<(), ServeError> {
    let service =
        ServeManifest::with_options(&opts.root, opts.manifest.as_deref(), opts.base.as_deref())?
            .single_page_app(opts.spa);
    if !service.has_manifest() {
        eprintln!(
            "precompress serve: warning: no manifest at {}; every file is served uncompressed \
             (run `precompress {}` first)",
            service.site.manifest.display(),
            opts.root.display()
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(serve(service, opts.addr))
}

async fn serve(service: ServeManifest, addr: SocketAddr) -> Result<(), ServeError> {
    let site = &service.site;
    let loaded = site.current();
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() {
        eprintln!(
            "precompress serve: warning: listening on {local}, not loopback: anyone who can reach it can read {}",
            loaded.root.display()
        );
    }
    println!(
        "precompress serve: http://{local}{} ({}, {} assets in the manifest)",
        loaded.index.base(),
        loaded.root.display(),
        loaded.index.len()
    );
    drop(loaded);
    let mut backoff = AcceptBackoff::default();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => { backoff.reset(); a }
                // A client that hung up before accept, or a full fd table: keep
                // serving, but wait before trying again (the error repeats at
                // once while no descriptor is free) and log it rarely.
                Err(e) => {
                    tokio::time::sleep(backoff.failed(&e, Instant::now())).await;
                    continue;
                }
            },
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        // Without it a small response's last segment waits for the client's
        // delayed ACK (40 ms on Linux) on every keep-alive request.
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| {
                let service = service.clone();
                async move { Ok::<_, std::convert::Infallible>(handle(&service, req, peer).await) }
            });
            // Errors here are clients going away mid-response; nothing to report.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                // Also the limit for an idle keep-alive connection's next request.
                .header_read_timeout(HEAD_TIMEOUT)
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

/// Responses up to this size are read whole and sent in one piece; larger ones
/// are streamed. Files are opened and small ones read on the async thread: from
/// the page cache that takes microseconds, less than a hop to tokio's blocking
/// pool, and this is a preview server for local files.
const INLINE_MAX: u64 = 1 << 20;

/// How long a client may take to send a request's head, and how long an idle
/// keep-alive connection is kept.
const HEAD_TIMEOUT: Duration = Duration::from_secs(20);

/// Waits between failed accepts: 5 ms doubling to 1 s, and one log line a
/// second at most, with how many failures it stands for.
#[derive(Debug, Default)]
struct AcceptBackoff {
    delay: Duration,
    unlogged: u64,
    last_log: Option<Instant>,
}

impl AcceptBackoff {
    fn reset(&mut self) {
        self.delay = Duration::ZERO;
    }

    /// Records a failure at `now`; returns how long to wait before the next accept.
    fn failed(&mut self, e: &io::Error, now: Instant) -> Duration {
        self.unlogged += 1;
        if self
            .last_log
            .is_none_or(|t| now.duration_since(t) >= Duration::from_secs(1))
        {
            let more = match self.unlogged {
                1 => String::new(),
                n => format!(" ({n} failures since the last message)"),
            };
            eprintln!("precompress serve: accept: {e}{more}");
            self.unlogged = 0;
            self.last_log = Some(now);
        }
        self.delay = (self.delay * 2).clamp(Duration::from_millis(5), Duration::from_secs(1));
        self.delay
    }
}

/// The service's answer, and its access-log line.
async fn handle(
    service: &ServeManifest,
    req: Request<Incoming>,
    peer: SocketAddr,
) -> Response<ResBody> {
    let resp = service.respond(&req).await;
    let coding = resp
        .headers()
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    let length = resp
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    println!(
        "{peer} \"{} {} {:?}\" {} {length} {coding}",
        req.method(),
        req.uri(),
        req.version(),
        resp.status().as_u16()
    );
    resp
}

async fn respond<B>(site: &Site, req: &Request<B>) -> Response<ResBody> {
    let head = match *req.method() {
        Method::GET => false,
        Method::HEAD => true,
        _ => {
            let mut r = text(StatusCode::METHOD_NOT_ALLOWED);
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return r;
        }
    };
    // One load for the whole request: never two releases' files in one answer.
    let loaded = site.current();
    let spa = site.spa.load(std::sync::atomic::Ordering::Relaxed);
    let found = match target(&loaded, req) {
        Continue(t) => t,
        Break(r) if r.status() == StatusCode::NOT_FOUND => match fallback(&loaded, spa, req) {
            Some(t) => t,
            None => return r,
        },
        Break(r) => return r,
    };
    answer(&loaded, req, head, found).await
}

/// What a static host serves for a path `target` found nothing at. `about` is `about.html` (nginx's `try_files $uri $uri.html`,
/// Netlify, Cloudflare Pages); a single-page app's route (no `.` in its last
/// segment) is `index.html`; anything else is `404.html` with 404, if there
/// is one. None outside the base, or with none of those files.
fn fallback<B>(site: &Loaded, spa: bool, req: &Request<B>) -> Option<Target> {
    let raw = crate::model::path::strip_base(site.index.base(), req.uri().path())?;
    let file = |key: &str, status| {
        resolve(&site.root, key)
            .filter(|p| p.is_file() && !internal(site, key, p))
            .map(|p| Target {
                key: key.to_string(),
                resolved: Some(p),
                status,
            })
    };
    if let Ok(rp) = parse_request_path(raw) {
        let last = rp.key.rsplit('/').next().unwrap_or("");
        let routed = !rp.key.is_empty() && !last.contains('.');
        if routed && !rp.trailing_slash {
            if let Some(t) = file(&format!("{}.html", rp.key), StatusCode::OK) {
                return Some(t);
            }
        }
        if spa && (routed || rp.key.is_empty()) {
            if let Some(t) = file("index.html", StatusCode::OK) {
                return Some(t);
            }
        }
    }
    file("404.html", StatusCode::NOT_FOUND)
}

/// The answer for the file `found` names: negotiated, checked, sent.
async fn answer<B>(
    loaded: &Loaded,
    req: &Request<B>,
    head: bool,
    found: Target,
) -> Response<ResBody> {
    let Target {
        key,
        resolved,
        status,
    } = found;
    let planned = match negotiated(loaded, req.headers(), &key, resolved) {
        Continue(p) => p,
        Break(r) => return r,
    };
    let (file, headers, identity) = match planned {
        Some(p) => p,
        None => match plain(loaded, &key).await {
            Ok(p) => p,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return text(StatusCode::NOT_FOUND),
            Err(e) => {
                eprintln!("precompress serve: error: {key}: {e}");
                return text(StatusCode::INTERNAL_SERVER_ERROR);
            }
        },
    };
    send(req, head, file, headers, identity, status).await
}

/// The file a request names.
struct Target {
    /// Its key in the manifest (a folder's is its `index.html`).
    key: String,
    /// Its canonical path, when the request named the file itself.
    resolved: Option<PathBuf>,
    /// 200, or 404 for the 404 page ([`fallback`]).
    status: StatusCode,
}

/// Which file the request's path names, or the response when it names none
/// that is served: 400, 404, or the redirect that adds a folder's slash.
fn target<B>(site: &Loaded, req: &Request<B>) -> Step<Target> {
    let full_path = req.uri().path();
    // Under a base, `/app/x` is the folder's `x`; anything else is not ours.
    let Some(raw_path) = crate::model::path::strip_base(site.index.base(), full_path) else {
        return Break(text(StatusCode::NOT_FOUND));
    };
    if raw_path == "/" && !full_path.ends_with('/') {
        // `/app` is the base's index, whose relative links need the slash.
        return Break(redirect(format!("{full_path}/"), req));
    }
    let rp = match parse_request_path(raw_path) {
        Ok(p) => p,
        Err(PathError::Hidden) => return Break(text(StatusCode::NOT_FOUND)),
        Err(_) => return Break(text(StatusCode::BAD_REQUEST)),
    };
    let Some(found) = resolve(&site.root, &rp.key) else {
        return Break(text(StatusCode::NOT_FOUND));
    };
    let key = rp.key;
    // One stat for both questions.
    let kind = std::fs::metadata(&found).map(|m| m.file_type()).ok();
    if kind.is_some_and(|k| k.is_dir()) {
        if !rp.trailing_slash && !key.is_empty() {
            // Relative links in the index page need the slash. One leading
            // slash: `//docs/` would be a protocol-relative URL, another host.
            let location = format!(
                "{}{}/",
                &site.index.base()[..site.index.base().len() - 1],
                format_args!("/{}", raw_path.trim_start_matches('/'))
            );
            return Break(redirect(location, req));
        }
        let key = if key.is_empty() {
            "index.html".into()
        } else {
            format!("{key}/index.html")
        };
        // No listings: a folder without index.html is a 404.
        if resolve(&site.root, &key).is_none_or(|p| !p.is_file()) {
            return Break(text(StatusCode::NOT_FOUND));
        }
        Continue(Target {
            key,
            resolved: None,
            status: StatusCode::OK,
        })
    } else if rp.trailing_slash
        || !kind.is_some_and(|k| k.is_file())
        || internal(site, &key, &found)
    {
        Break(text(StatusCode::NOT_FOUND))
    } else {
        Continue(Target {
            key,
            resolved: Some(found),
            status: StatusCode::OK,
        })
    }
}

/// The representation the manifest picks for `key` (whose file is `resolved`
/// when the request named it), opened and checked, with its headers and
/// whether it is identity; `None` when the manifest does not list it or what
/// it picks is stale (sent uncompressed instead); the 406 when the client
/// accepts nothing it has.
fn negotiated(
    loaded: &Loaded,
    h: &HeaderMap,
    key: &str,
    resolved: Option<PathBuf>,
) -> Step<Option<(std::fs::File, Headers, bool)>> {
    let site = loaded;
    let accept = accept_encoding(h);
    let dictionary = single_value(h, "available-dictionary");
    match loaded
        .index
        .select_with_dictionary(key, accept.as_deref(), dictionary)
    {
        Selection::Found(sel) => {
            let r = sel.representation;
            // Identity is the source itself: open_checked makes the same check.
            let source_ok = match r.coding {
                None => Ok(()),
                Some(_) => unchanged(loaded, key),
            };
            // Identity is the file `target` resolved: not resolved again.
            let path = match (r.coding, resolved) {
                (None, Some(p)) => Ok(p),
                _ => {
                    resolve(&site.root, &r.path).ok_or("missing or outside the folder".to_string())
                }
            };
            let checked = source_ok
                .and(path)
                .and_then(|p| open_checked(loaded, &p, &r.path, r.size));
            match checked {
                Ok(file) => Continue(Some((file, sel.headers, r.coding.is_none()))),
                Err(why) => {
                    eprintln!(
                        "precompress serve: warning: {}: {why}; sending {key} uncompressed",
                        r.path
                    );
                    Continue(None)
                }
            }
        }
        Selection::NotAcceptable { headers } => {
            let mut r = text(StatusCode::NOT_ACCEPTABLE);
            set_headers(r.headers_mut(), &headers);
            Break(r)
        }
        Selection::NotInManifest => Continue(None),
    }
}

/// `Accept-Encoding`, repeated fields joined; `None` when absent.
fn accept_encoding(h: &HeaderMap) -> Option<String> {
    let values: Vec<String> = h
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    (!values.is_empty()).then(|| values.join(","))
}

/// Files a production server does not serve by their own name: a variant or
/// delta beside its asset (sent only through negotiation, with the asset's
/// type and `Content-Encoding`), and the manifest (it lists every asset with
/// its hash; a preview should not publish what production would not).
fn internal(site: &Loaded, key: &str, found: &Path) -> bool {
    let beside_its_asset = |src: &str| resolve(&site.root, src).is_some_and(|p| p.is_file());
    crate::model::content::variant_source(key).is_some_and(|(src, _)| beside_its_asset(src))
        || crate::model::dictionary::delta_source(key).is_some_and(|(src, _)| beside_its_asset(src))
        || site.manifest_canonical == found
}

/// A field's value when the request has exactly one such field (a repeated
/// `Available-Dictionary` is no valid value, so it counts as absent).
fn single_value<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = h.get_all(name).iter();
    let first = values.next()?;
    if values.next().is_some() {
        return None;
    }
    first.to_str().ok()
}

/// The source of `key` still has the size and mtime it had when the index
/// was loaded (when its content was checked against the manifest).
fn unchanged(loaded: &Loaded, key: &str) -> Result<(), String> {
    let then = loaded.files.get(key);
    match (then, stamp_of(&loaded.root.join(key))) {
        (Some(a), Some(b)) if *a == b => Ok(()),
        _ => Err(format!(
            "{key} changed after precompress ran (its variants would be stale)"
        )),
    }
}

/// Opens `path` (the resolved `rel`) and checks it still has the manifest's
/// size and the mtime it had when the index was loaded.
fn open_checked(
    loaded: &Loaded,
    path: &Path,
    rel: &str,
    size: u64,
) -> Result<std::fs::File, String> {
    let file = crate::fsutil::open_to_read(path).map_err(|e| e.to_string())?;
    let md = file.metadata().map_err(|e| e.to_string())?;
    let len = md.len();
    if len != size {
        return Err(format!(
            "{len} bytes on disk, {size} in the manifest (changed since precompress ran)"
        ));
    }
    let now = Stamp::of(&md);
    if now.is_none() || now.as_ref() != loaded.files.get(rel) {
        return Err("rewritten since the manifest was loaded".into());
    }
    Ok(file)
}

/// A 301 to `location` (the request's query kept), for a folder asked for
/// without its slash.
fn redirect<B>(mut location: String, req: &Request<B>) -> Response<ResBody> {
    if let Some(q) = req.uri().query() {
        location = format!("{location}?{q}");
    }
    let mut r = text(StatusCode::MOVED_PERMANENTLY);
    if let Ok(v) = HeaderValue::from_str(&location) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// Headers for a file the manifest does not describe (or describes wrongly):
/// uncompressed, a weak ETag from size and mtime, revalidate on every use.
async fn plain(site: &Loaded, key: &str) -> io::Result<(std::fs::File, Headers, bool)> {
    let path = resolve(&site.root, key).ok_or(io::ErrorKind::NotFound)?;
    let file = crate::fsutil::open_to_read(&path)?;
    let md = file.metadata()?;
    let mtime = md.modified().ok();
    let stamp = mtime
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let mut headers: Headers = vec![
        ("Content-Type", crate::model::content::content_type(key)),
        ("Content-Length", md.len().to_string()),
        ("ETag", format!("W/\"{:x}-{stamp:x}\"", md.len())),
    ];
    if let Some(t) = mtime {
        headers.push(("Last-Modified", httpdate::fmt_http_date(t)));
    }
    headers.push(("Cache-Control", CACHE_REVALIDATE.to_string()));
    Ok((file, headers, true))
}

async fn send<B>(
    req: &Request<B>,
    head: bool,
    file: std::fs::File,
    headers: Headers,
    identity: bool,
    status: StatusCode,
) -> Response<ResBody> {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    };
    let etag = get("ETag").unwrap_or_default().to_string();
    let last_modified = get("Last-Modified").and_then(|d| httpdate::parse_http_date(d).ok());
    let len: u64 = get("Content-Length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);

    // The 404 page is never a 304, a 412 or a range of itself.
    let found = status == StatusCode::OK;
    if let Some(r) = found
        .then(|| conditional(req.headers(), &headers, &etag, last_modified))
        .flatten()
    {
        return r;
    }
    // Ranges only on identity: a byte range of one compressed variant is useless
    // to a client that negotiated another, and nginx does the same.
    let ranged = found && identity && !head && range_applies(req.headers(), &etag, last_modified);
    let span = match span(req.headers(), ranged, len) {
        Continue(s) => s,
        Break(r) => return r,
    };
    let body = match body(file, head, span.start, span.count) {
        Continue(b) => b,
        Break(r) => return r,
    };
    let mut r = Response::new(body);
    *r.status_mut() = if found { span.status } else { status };
    set_headers(r.headers_mut(), &headers);
    if identity {
        r.headers_mut()
            .insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    }
    if let Some(cr) = span.content_range {
        r.headers_mut().insert(
            header::CONTENT_RANGE,
            HeaderValue::from_str(&cr).expect("ascii"),
        );
        r.headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from(span.count));
    }
    r
}

/// The answer to a conditional request that does not get the body: 412 when
/// a precondition fails, else 304 when the client's copy is current.
fn conditional(
    h: &HeaderMap,
    headers: &Headers,
    etag: &str,
    last_modified: Option<SystemTime>,
) -> Option<Response<ResBody>> {
    if precondition_failed(h, etag, last_modified) {
        let mut r = text(StatusCode::PRECONDITION_FAILED);
        set_headers(r.headers_mut(), &[("ETag", etag.to_string())].into());
        return Some(r);
    }
    if not_modified(h, etag, last_modified) {
        let mut r = Response::new(empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        let keep = ["ETag", "Last-Modified", "Cache-Control", "Vary"];
        let kept: Headers = headers
            .iter()
            .filter(|(n, _)| keep.contains(n))
            .cloned()
            .collect();
        set_headers(r.headers_mut(), &kept);
        return Some(r);
    }
    None
}

/// What part of a file of `len` bytes a response sends.
struct Span {
    status: StatusCode,
    /// The first byte sent.
    start: u64,
    /// How many bytes are sent.
    count: u64,
    /// `Content-Range`, for a 206.
    content_range: Option<String>,
}

/// The whole file, or with `ranged` (a `Range` may apply) the range the
/// request asks for; the 416 when it asks for none the file has.
fn span(h: &HeaderMap, ranged: bool, len: u64) -> Step<Span> {
    let whole = Span {
        status: StatusCode::OK,
        start: 0,
        count: len,
        content_range: None,
    };
    if !ranged {
        return Continue(whole);
    }
    match h
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .map(|v| parse_range(v, len))
    {
        Some(RangeSpec::Satisfiable(a, b)) => Continue(Span {
            status: StatusCode::PARTIAL_CONTENT,
            start: a,
            count: b - a + 1,
            content_range: Some(format!("bytes {a}-{b}/{len}")),
        }),
        Some(RangeSpec::Unsatisfiable) => {
            let mut r = text(StatusCode::RANGE_NOT_SATISFIABLE);
            r.headers_mut().insert(
                header::CONTENT_RANGE,
                HeaderValue::from_str(&format!("bytes */{len}")).expect("ascii"),
            );
            Break(r)
        }
        Some(RangeSpec::Ignore) | None => Continue(whole),
    }
}

/// `count` bytes of `file` from `start` (none for HEAD): read at once when
/// small, else streamed; a 500 when the file cannot be read as far as it was.
fn body(mut file: std::fs::File, head: bool, start: u64, count: u64) -> Step<ResBody> {
    if head || count == 0 {
        return Continue(empty());
    }
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

/// RFC 9110 §13.1.2 and §13.1.3: `If-None-Match` (weak comparison) wins over
/// `If-Modified-Since`.
fn not_modified(h: &HeaderMap, etag: &str, last_modified: Option<SystemTime>) -> bool {
    if let Some(inm) = h.get(header::IF_NONE_MATCH) {
        let Ok(inm) = inm.to_str() else { return false };
        let weak = |t: &str| t.trim().trim_start_matches("W/").to_string();
        let ours = weak(etag);
        return inm
            .split(',')
            .any(|t| t.trim() == "*" || (!ours.is_empty() && weak(t) == ours));
    }
    match (
        h.get(header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| httpdate::parse_http_date(v).ok()),
        last_modified,
    ) {
        (Some(since), Some(lm)) => lm <= since,
        _ => false,
    }
}

/// RFC 9110 §13.1.1 and §13.1.4: `If-Match` (strong comparison; `*` matches
/// any current representation) wins over `If-Unmodified-Since`.
fn precondition_failed(h: &HeaderMap, etag: &str, last_modified: Option<SystemTime>) -> bool {
    if let Some(im) = h.get(header::IF_MATCH) {
        let Ok(im) = im.to_str() else { return true };
        return !im
            .split(',')
            .map(str::trim)
            .any(|t| t == "*" || (!etag.starts_with("W/") && !t.starts_with("W/") && t == etag));
    }
    match (
        h.get(header::IF_UNMODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| httpdate::parse_http_date(v).ok()),
        last_modified,
    ) {
        (Some(since), Some(lm)) => lm > since,
        _ => false,
    }
}

/// `If-Range` (RFC 9110 §13.1.5): the range counts only if the validator still
/// matches, strongly for an ETag.
fn range_applies(h: &HeaderMap, etag: &str, last_modified: Option<SystemTime>) -> bool {
    let Some(ir) = h.get(header::IF_RANGE) else {
        return true;
    };
    let Ok(ir) = ir.to_str() else { return false };
    let ir = ir.trim();
    if ir.starts_with('"') {
        return !etag.starts_with("W/") && ir == etag;
    }
    match (httpdate::parse_http_date(ir), last_modified) {
        (Ok(d), Some(lm)) => httpdate::fmt_http_date(d) == httpdate::fmt_http_date(lm),
        _ => false,
    }
}

#[derive(Debug, PartialEq, Eq)]
enum RangeSpec {
    /// First and last byte, inclusive.
    Satisfiable(u64, u64),
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
fn parse_range(v: &str, len: u64) -> RangeSpec {
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

fn set_headers(map: &mut HeaderMap, headers: &Headers) {
    for (name, value) in headers {
        // Manifest values were checked at load; a bad one is dropped, not sent.
        if let Ok(v) = HeaderValue::from_str(value) {
            map.insert(*name, v);
        }
    }
    map.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

fn empty() -> ResBody {
    Empty::new().map_err(|never| match never {}).boxed()
}

/// A short plain-text response for errors and redirects.
fn text(status: StatusCode) -> Response<ResBody> {
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

impl fmt::Debug for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Site").field("root", &self.given).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let h = |name, value: &str| {
            let mut m = HeaderMap::new();
            m.insert(name, HeaderValue::from_str(value).unwrap());
            m
        };
        // If-Match: strong comparison, `*` matches any.
        assert!(!precondition_failed(
            &h(header::IF_MATCH, "\"a\", \"b\""),
            "\"b\"",
            None
        ));
        assert!(precondition_failed(
            &h(header::IF_MATCH, "\"a\""),
            "\"b\"",
            None
        ));
        assert!(precondition_failed(
            &h(header::IF_MATCH, "W/\"b\""),
            "\"b\"",
            None
        ));
        assert!(!precondition_failed(
            &h(header::IF_MATCH, "*"),
            "\"b\"",
            None
        ));
        // If-Unmodified-Since: fails when modified after the date.
        let date = httpdate::fmt_http_date(t);
        let ius = h(header::IF_UNMODIFIED_SINCE, &date);
        assert!(!precondition_failed(&ius, "\"b\"", Some(t)));
        assert!(precondition_failed(
            &ius,
            "\"b\"",
            Some(t + std::time::Duration::from_secs(1))
        ));
        // If-Match wins over If-Unmodified-Since.
        let mut both = ius.clone();
        both.insert(header::IF_MATCH, HeaderValue::from_static("\"b\""));
        assert!(!precondition_failed(
            &both,
            "\"b\"",
            Some(t + std::time::Duration::from_secs(1))
        ));
        assert!(!precondition_failed(&HeaderMap::new(), "\"b\"", Some(t)));
    }

    #[test]
    fn conditionals() {
        let mut h = HeaderMap::new();
        h.insert(
            header::IF_NONE_MATCH,
            HeaderValue::from_static("\"a\", W/\"b\""),
        );
        assert!(not_modified(&h, "\"b\"", None));
        assert!(!not_modified(&h, "\"c\"", None));
        h.insert(header::IF_NONE_MATCH, HeaderValue::from_static("*"));
        assert!(not_modified(&h, "\"c\"", None));
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let mut h = HeaderMap::new();
        h.insert(
            header::IF_MODIFIED_SINCE,
            HeaderValue::from_str(&httpdate::fmt_http_date(t)).unwrap(),
        );
        assert!(not_modified(&h, "\"x\"", Some(t)));
        assert!(!not_modified(
            &h,
            "\"x\"",
            Some(t + std::time::Duration::from_secs(1))
        ));
        let mut h = HeaderMap::new();
        h.insert(header::IF_RANGE, HeaderValue::from_static("\"x\""));
        assert!(range_applies(&h, "\"x\"", None));
        assert!(!range_applies(&h, "\"y\"", None));
        assert!(!range_applies(&h, "W/\"x\"", None));
    }
}
