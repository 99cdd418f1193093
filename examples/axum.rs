//! A folder precompress ran on, served by an axum app through
//! `precompressor::serve::http::ServeManifest`: the same answers as
//! `precompress serve` (negotiation, deltas, ETags, 304/412, ranges), next to
//! the app's own routes.
//!
//! ```sh
//! precompress dist/ && cargo run --example axum -- dist 127.0.0.1:3000
//! ```

use axum::routing::get;
use axum::Router;
use precompressor::serve::http::ServeManifest;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args.first().map_or("dist", String::as_str);
    let addr = args.get(1).map_or("127.0.0.1:3000", String::as_str);
    let assets = ServeManifest::new(dir).unwrap_or_else(|e| {
        eprintln!("axum example: {e}");
        std::process::exit(2)
    });
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .fallback_service(assets);
    let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
    println!("axum example: http://{}/", listener.local_addr().unwrap());
    axum::serve(listener, app).await.expect("serve");
}
