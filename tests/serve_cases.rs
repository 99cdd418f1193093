//! The shared serving table, `fixtures/serve-cases.json`, run against
//! `precompress serve` and the tower `ServeManifest` (in the axum example):
//! the same data `npm/serve-cases.mjs` runs against the Node handler, the
//! Worker in workerd and the edge function, so the servers cannot drift.
//! The runner is `serve_util::cases`; the table's `about` says how a case
//! reads.

mod serve_util;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serve_util::cases::{build, run_table, table, Profile};
use serve_util::*;

/// Everything: nothing is excused.
const ALL: Profile = Profile::strict(&["hosts", "conditional", "range", "rebuild"]);

#[test]
fn precompress_serve_answers_the_shared_table() {
    let t = table();
    let tmp = tempfile::tempdir().unwrap();
    let site = build(&t, tmp.path());
    let s = start_precompress(&site, &[]);
    let failures = run_table(&t, tmp.path(), &site, s.addr, &ALL);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_tower_service_answers_the_shared_table() {
    let t = table();
    let tmp = tempfile::tempdir().unwrap();
    let site = build(&t, tmp.path());
    let server = start_example(&site);
    let failures = run_table(&t, tmp.path(), &site, server.1, &ALL);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The Node handler (`npm/precompressor/lib/serve.js`, from this checkout) on
/// node:http: its port, and the process, killed on drop.
struct NodeServer(Child, SocketAddr);

impl Drop for NodeServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_node_handler(site: &Path) -> NodeServer {
    let lib = repo().join("npm/precompressor/lib/serve.js");
    let script = "const { createHandler } = await import(process.argv[1]);
        const http = await import('node:http');
        const s = http.createServer(createHandler(process.argv[2]));
        s.listen(0, '127.0.0.1', () => console.log('node: http://127.0.0.1:' + s.address().port + '/'));";
    let mut child = Command::new("node")
        .args(["--input-type=module", "-e", script])
        .arg(format!("file://{}", lib.display()))
        .arg(site)
        .stdout(Stdio::piped())
        .spawn()
        .expect("node");
    let first = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .next()
        .unwrap()
        .unwrap();
    let addr = addr_in(&first);
    NodeServer(child, addr)
}

/// `check --url` on the table's site, served by `precompress serve` and by
/// the Node handler: both pass; after a page and its variant are rewritten
/// behind the handler's back (same sizes), it fails naming that page.
#[test]
fn check_url_passes_against_serve_and_the_node_handler() {
    let t = table();
    let tmp = tempfile::tempdir().unwrap();
    let site = build(&t, tmp.path());
    let check = |addr: SocketAddr| {
        precompress(&[
            "check".as_ref(),
            "--url".as_ref(),
            format!("http://{addr}/").as_ref(),
            site.as_os_str(),
        ])
    };
    let s = start_precompress(&site, &[]);
    let out = check(s.addr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "serve: {text}");
    let node = start_node_handler(&site);
    let out = check(node.1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "node: {text}");
    assert!(text.contains("0 with problems"), "{text}");
    // A rebuild behind the server's back: the page and its variant rewritten,
    // same sizes. The handler sends the new page uncompressed; check says so.
    let page = site.join("about.html");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, text.replace("about: line", "ABOUT: line")).unwrap();
    let br = std::fs::read(site.join("about.html.br")).unwrap();
    std::fs::write(site.join("about.html.br"), vec![b'x'; br.len()]).unwrap();
    let out = check(node.1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let about: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("/about.html:"))
        .collect();
    assert!(!about.is_empty(), "no problem named about.html: {text}");
    assert!(
        text.lines()
            .filter(|l| l.starts_with("  http"))
            .all(|l| l.contains("/about.html:")),
        "only about.html is wrong: {text}"
    );
}
