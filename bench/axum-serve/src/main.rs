//! One axum app serving a folder for bench/serve.sh, two ways:
//!
//! ```sh
//! axum-serve-bench manifest DIR ADDR [THREADS]   # precompressor's ServeManifest
//! axum-serve-bench servedir DIR ADDR [THREADS]   # tower-http's ServeDir, precompressed br and gzip
//! ```
//!
//! THREADS tokio worker threads (default 1: a single-thread runtime, as
//! `precompress serve --threads 1` and one nginx worker process), no access log.

use axum::serve::{Listener, ListenerExt};
use axum::Router;
use precompressor::serve::http::ServeManifest;
use tower_http::services::ServeDir;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, dir, addr, threads) = match &args[..] {
        [m, d, a] => (m, d, a, 1),
        [m, d, a, t] if t.parse::<usize>().is_ok_and(|n| n > 0) => (m, d, a, t.parse().unwrap()),
        _ => {
            eprintln!("usage: axum-serve-bench manifest|servedir DIR ADDR [THREADS]");
            std::process::exit(2)
        }
    };
    let app = match mode.as_str() {
        "manifest" => Router::new().fallback_service(ServeManifest::new(dir).unwrap_or_else(|e| {
            eprintln!("axum-serve-bench: {e}");
            std::process::exit(2)
        })),
        "servedir" => Router::new()
            .fallback_service(ServeDir::new(dir).precompressed_br().precompressed_gzip()),
        _ => {
            eprintln!("axum-serve-bench: mode is manifest or servedir, not {mode}");
            std::process::exit(2)
        }
    };
    let mut rt = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    };
    let rt = rt.enable_all().build().expect("runtime");
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr.as_str())
            .await
            .unwrap_or_else(|e| {
                eprintln!("axum-serve-bench: cannot listen on {addr}: {e}");
                std::process::exit(2)
            })
            // As `precompress serve` and nginx on loopback: no Nagle delay on a short last segment.
            .tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
        println!(
            "axum-serve-bench {mode}: http://{}/",
            listener.local_addr().unwrap()
        );
        axum::serve(listener, app).await.expect("serve");
    });
}
