//! `precompress serve`'s process around the Service: the runtime, the
//! accept loop that backs off when the process is out of file descriptors,
//! `TCP_NODELAY`, the limit on a request's head and on idle keep-alive
//! connections, and the access log.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper::header;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};

use super::body::ResBody;
use super::{ServeError, ServeManifest, ServeOptions};

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
