//! The Node handler (`npm/precompressor/lib/serve.js`, from this checkout)
//! beside `precompress serve`, on the shared table's site: `check --url`
//! passes on both and fails naming a page rebuilt behind the handler's back;
//! both refuse a manifest that lists a dot-file as a variant. The e2e tier of
//! `tests/serve_cases.rs`: needs node; `cargo test -- --include-ignored` runs
//! them (`bash .ci/run` installs it).

mod serve_util;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serve_util::cases::{build, table};
use serve_util::*;

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
    let addr = listening_at(&mut child);
    NodeServer(child, addr)
}

/// `check --url` on the table's site, served by `precompress serve` and by
/// the Node handler: both pass; after a page and its variant are rewritten
/// behind the handler's back (same sizes), it fails naming that page.
#[test]
#[ignore = "e2e tier: needs node; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
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

/// A manifest edited so that an asset's br variant is `.env`: `precompress
/// serve` and the Node handler refuse it at start, naming the manifest, the
/// asset and the path, where both used to send `.env` as the asset's br body.
#[test]
#[ignore = "e2e tier: needs node; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn a_manifest_listing_a_dot_file_as_a_variant_is_refused_by_serve_and_the_node_handler() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    let text: String = (0..80)
        .map(|i| format!("export const f{i} = {i};\n"))
        .collect();
    std::fs::write(site.join("app.js"), text).unwrap();
    let out = precompress(&["--no-config".as_ref(), "-q".as_ref(), site.as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(site.join(".env"), "SECRET=1\n").unwrap();
    let mpath = site.join("precompress-manifest.json");
    let mut m = manifest(&site);
    let br = m["files"]["app.js"]["encodings"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|v| v["coding"] == "br")
        .expect("app.js has a br variant");
    br["path"] = ".env".into();
    br["size"] = 9.into();
    std::fs::write(&mpath, serde_json::to_string(&m).unwrap()).unwrap();
    let said = format!(
        "{}: invalid manifest: file \"app.js\": br variant path \".env\" is not \"app.js.br\"",
        mpath.display()
    );

    // precompress serve: exits at once with the error (it used to serve).
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("precompress"))
        .arg("serve")
        .arg(&site)
        .args(["--addr", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("precompress serve started on a manifest that lists .env as a variant");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(!status.success());
    assert!(err.contains(&said), "{err}");

    // The Node handler: createHandler throws the same.
    let lib = repo().join("npm/precompressor/lib/serve.js");
    let script = "const { createHandler } = await import(process.argv[1]);
        try { createHandler(process.argv[2]); console.log('started'); } catch (e) { console.log(e.message); }";
    let out = Command::new("node")
        .args(["--input-type=module", "-e", script])
        .arg(format!("file://{}", lib.display()))
        .arg(&site)
        .output()
        .expect("node");
    let said_js = said.replace(
        "is not \"app.js.br\"",
        "is not \"app.js.br\", the only name of its br variant",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), said_js);
}
