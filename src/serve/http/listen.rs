//! `precompress serve`'s process around the Service: the runtime, the
//! accept loop that backs off when the process is out of file descriptors,
//! `TCP_NODELAY`, the limit on a request's head and on idle keep-alive
//! connections, and the access log.

use std::io::{self, IsTerminal, Write};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper::header;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};

use super::body::ResBody;
use super::{ServeError, ServeManifest, ServeOptions};

/// Serves `opts.root` until Ctrl-C or SIGTERM. Prints the URL on stdout, then one access-log
/// line per request (none with `opts.quiet`).
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
    let threads = opts
        .threads
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, |n| n.get());
    // One thread: no work-stealing, no wake-ups across threads (each costs a
    // futex and, on a busy machine, a wait for a core): one nginx worker.
    let mut rt = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    };
    rt.enable_all()
        .build()?
        .block_on(serve(service, opts.addr, AccessLog::new(opts.quiet)))
}

async fn serve(service: ServeManifest, addr: SocketAddr, log: AccessLog) -> Result<(), ServeError> {
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
    tokio::spawn(log.clone().flush_every());
    let mut backoff = AcceptBackoff::default();
    let stop = shutdown();
    tokio::pin!(stop);
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
            () = &mut stop => {
                log.flush();
                return Ok(());
            }
        };
        // Without it a small response's last segment waits for the client's
        // delayed ACK (40 ms on Linux) on every keep-alive request.
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        let log = log.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| {
                let service = service.clone();
                let log = log.clone();
                async move { Ok::<_, std::convert::Infallible>(handle(&service, req, peer, &log).await) }
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

/// Completes on Ctrl-C, or on SIGTERM (what `docker stop` and process managers
/// send), so the access log's last lines are written before the process ends.
async fn shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
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

/// The access log on stdout: a line a request. To a terminal each line is
/// written at once; to a file or pipe lines are gathered and written at most
/// [`AccessLog::EVERY`] later (as nginx's `access_log ... buffer= flush=`), so a
/// busy server makes one write a batch, not one a request. `--quiet` turns it
/// off (nginx's `access_log off`): no line is even formatted.
#[derive(Clone)]
enum AccessLog {
    Off,
    Terminal,
    Batched(Arc<Mutex<Vec<u8>>>),
}

impl AccessLog {
    const EVERY: Duration = Duration::from_millis(100);
    /// Past this many bytes the batch is written at once.
    const BATCH: usize = 64 * 1024;

    fn new(quiet: bool) -> Self {
        if quiet {
            AccessLog::Off
        } else if io::stdout().is_terminal() {
            AccessLog::Terminal
        } else {
            AccessLog::Batched(Arc::new(Mutex::new(Vec::new())))
        }
    }

    fn line(&self, line: std::fmt::Arguments<'_>) {
        let batch = match self {
            AccessLog::Off => return,
            AccessLog::Terminal => {
                println!("{line}");
                return;
            }
            AccessLog::Batched(batch) => batch,
        };
        let mut batch = batch.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(batch, "{line}");
        if batch.len() >= Self::BATCH {
            write_out(&mut batch);
        }
    }

    /// Writes out the gathered lines.
    fn flush(&self) {
        if let AccessLog::Batched(batch) = self {
            write_out(&mut batch.lock().unwrap_or_else(|e| e.into_inner()));
        }
    }

    /// Writes out what was gathered every [`AccessLog::EVERY`], for ever.
    async fn flush_every(self) {
        if !matches!(self, AccessLog::Batched(_)) {
            return;
        }
        let mut every = tokio::time::interval(Self::EVERY);
        loop {
            every.tick().await;
            self.flush();
        }
    }
}

fn write_out(batch: &mut Vec<u8>) {
    if !batch.is_empty() {
        // A closed stdout is no reason to stop serving.
        let mut out = io::stdout().lock();
        let _ = out.write_all(batch).and_then(|()| out.flush());
        batch.clear();
    }
}

/// The service's answer, and its access-log line.
async fn handle(
    service: &ServeManifest,
    req: Request<Incoming>,
    peer: SocketAddr,
    log: &AccessLog,
) -> Response<ResBody> {
    let resp = service.respond(&req).await;
    if matches!(log, AccessLog::Off) {
        return resp;
    }
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
    log.line(format_args!(
        "{peer} \"{} {} {:?}\" {} {length} {coding}",
        req.method(),
        req.uri(),
        req.version(),
        resp.status().as_u16()
    ));
    resp
}
