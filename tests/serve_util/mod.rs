//! Shared by the `serve_*` tests: a precompressed copy of the fixture site, the
//! real servers started on free loopback ports, and a raw HTTP/1.1 client that
//! sends exactly the bytes it is given (no path normalization, no decoding,
//! no Accept-Encoding of its own), so tests see what a server really sent.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;

#[path = "../common/mod.rs"]
pub mod common;

pub mod browser;
pub mod cases;
pub mod deltas;
pub mod field;
pub mod servers;
pub mod siblings;
pub mod url_check;

// One set of helpers: the CLI tests' (repo, the manifest, a folder copy).
pub use common::{copy_dir, manifest, repo};

/// A temp copy of `fixtures/site` that the built `precompress` has run on.
pub fn precompressed_site() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    common::copy_dir(&repo().join("fixtures/site"), &site);
    let out = Command::cargo_bin("precompress")
        .unwrap()
        .args(["--quiet", "--no-config"])
        .arg(&site)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "precompress failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (tmp, site)
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server process, killed (by its own pid) on drop.
pub struct Server {
    pub name: &'static str,
    pub addr: SocketAddr,
    child: Child,
    /// stdout lines (the access log of `precompress serve`).
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    /// SIGTERM first: nginx's master then stops its workers, where a SIGKILL
    /// would orphan them with the port still open. SIGKILL after 10 s.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `precompress serve SITE --addr 127.0.0.1:0`, with the port read from its
/// first line of output.
pub fn start_precompress(site: &Path, extra: &[&str]) -> Server {
    start_precompress_at(site, "127.0.0.1:0", extra)
}

/// `precompress serve SITE --addr ADDR`.
pub fn start_precompress_at(site: &Path, addr: &str, extra: &[&str]) -> Server {
    let mut child = Command::cargo_bin("precompress")
        .unwrap()
        .arg("serve")
        .arg(site)
        .args(["--addr", addr])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().expect("serve printed nothing").unwrap();
    let addr = addr_in(&first);
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = log.clone();
    // Drain stdout so the server never blocks on a full pipe.
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            sink.lock().unwrap().push(line);
        }
    });
    Server {
        name: "precompress serve",
        addr,
        child,
        log,
    }
}

/// The address in a server's first line: "precompress serve: http://127.0.0.1:PORT/ (...)".
pub fn addr_in(line: &str) -> SocketAddr {
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"));
    // The host and port, less the base path (`http://127.0.0.1:PORT/sub/`).
    let host = url.trim_start_matches("http://");
    host[..host.find('/').unwrap_or(host.len())]
        .parse()
        .unwrap()
}

/// Fails with a pointer to the installer when a server binary is missing.
pub fn need(program: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
        || Path::new(program).is_file();
    assert!(
        found,
        "{program} is not installed: run `bash .ci/e2e.sh` (as root) to install the e2e servers"
    );
}

/// nginx 1.22 with `gzip_static`, `brotli_static` and `gzip_vary`, the config
/// docs/servers.md shows, rooted at `site`, logging under `work`.
pub fn start_nginx(site: &Path, work: &Path) -> Server {
    let module = "/usr/lib/nginx/modules/ngx_http_brotli_static_module.so";
    assert!(
        Path::new(module).is_file(),
        "{module} missing: run `bash .ci/e2e.sh` (libnginx-mod-http-brotli-static)"
    );
    start_nginx_from("nginx.conf", site, work, &[])
}

/// Caddy 2.6 with `file_server { precompressed zstd br gzip }`, docs/servers.md's
/// Caddyfile, with its state kept under `work`.
pub fn start_caddy(site: &Path, work: &Path) -> Server {
    start_caddy_from("Caddyfile", site, work, &[])
}

/// Waits until the server accepts connections (at most 30 s, then fails).
fn ready(mut s: Server) -> Server {
    for _ in 0..300 {
        if let Some(status) = s.child.try_wait().unwrap() {
            panic!("{} exited at start-up: {status}", s.name);
        }
        if TcpStream::connect(s.addr).is_ok() {
            return s;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{} did not start listening on {}", s.name, s.addr);
}

/// One HTTP response, as received.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    /// Lower-cased names, in order.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked but never content-decoded.
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `METHOD TARGET HTTP/1.1` with `headers` (plus Host and Connection:
/// close) and reads the response to the end.
pub fn request(addr: SocketAddr, method: &str, target: &str, headers: &[(&str, &str)]) -> Resp {
    let mut raw = format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (n, v) in headers {
        raw.push_str(&format!("{n}: {v}\r\n"));
    }
    raw.push_str("\r\n");
    send_raw(addr, raw.as_bytes(), method == "HEAD")
}

/// GET with an optional `Accept-Encoding`.
pub fn get(addr: SocketAddr, target: &str, accept_encoding: Option<&str>) -> Resp {
    match accept_encoding {
        Some(ae) => request(addr, "GET", target, &[("Accept-Encoding", ae)]),
        None => request(addr, "GET", target, &[]),
    }
}

/// Sends raw request bytes; parses the response.
pub fn send_raw(addr: SocketAddr, raw: &[u8], head: bool) -> Resp {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(raw).unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).unwrap();
    parse_response(&buf, head)
}

fn parse_response(buf: &[u8], head: bool) -> Resp {
    let end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(buf)));
    let text = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = text.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let rest = &buf[end + 4..];
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if head || status == 304 {
        assert!(rest.is_empty(), "a body after HEAD or 304");
        Vec::new()
    } else if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    Resp {
        status,
        headers,
        body,
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = b
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("chunk size line");
        let size_text = String::from_utf8_lossy(&b[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        b = &b[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&b[..size]);
        b = &b[size + 2..];
    }
}

/// Decodes a body a server sent with the crates' decoders (rust-brotli's,
/// not the C library precompress encodes with; zstd with a browser's 8 MiB
/// window), so the serving tests need no reference CLI. The tests that hold
/// variants to the CLIs themselves are in the e2e tier
/// (`tests/reference_clis.rs`, `tests/corpus.rs`).
pub fn decode(coding: &str, body: &[u8]) -> Vec<u8> {
    common::crate_decode(coding, body)
}

/// The file suffix of a content-coding token.
pub fn suffix(coding: &str) -> &'static str {
    match coding {
        "br" => "br",
        "zstd" => "zst",
        "gzip" => "gz",
        other => panic!("unexpected Content-Encoding {other}"),
    }
}

/// Two releases of a small app, as a bundler would emit them: `index.html`
/// loading `assets/app-HASH.js` (about 40 KB; release 2 changes a few lines and
/// sets the page's `#marker` to `release-2`). Returns the two folders, and the
/// release-1 and release-2 script names.
pub fn two_releases(root: &Path) -> (PathBuf, PathBuf, &'static str, &'static str) {
    let names = ["assets/app-1a2b3c4d.js", "assets/app-5e6f7a8b.js"];
    let mut dirs = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let n = i + 1;
        let dir = root.join(format!("release-{n}"));
        std::fs::create_dir_all(dir.join("assets")).unwrap();
        let html = format!(
            "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>release {n}</title></head>\n\
             <body><p id=\"marker\">loading</p>\n<script src=\"/{name}\"></script></body></html>\n"
        );
        std::fs::write(dir.join("index.html"), html).unwrap();
        let mut js = String::from("'use strict';\n");
        for f in 0..600 {
            let extra = if n == 2 && f % 150 == 3 { " + 1" } else { "" };
            js.push_str(&format!(
                "function widget{f}(state) {{ return {{ id: {f}, label: 'widget {f}', total: state.count * {f}{extra} }}; }}\n"
            ));
        }
        js.push_str(&format!(
            "document.getElementById('marker').textContent = 'release-{n}:' + widget3({{ count: 2 }}).total;\n\
             document.documentElement.dataset.ready = 'true';\n"
        ));
        std::fs::write(dir.join(name), js).unwrap();
        dirs.push(dir);
    }
    (dirs[0].clone(), dirs[1].clone(), names[0], names[1])
}

/// nginx with the config template `e2e/{template}`: `@PORT@`, `@ROOT@` (`site`)
/// and each `(placeholder, value)` of `vars` filled in, run under `work`, as
/// [`start_nginx`] does.
pub fn start_nginx_from(template: &str, site: &Path, work: &Path, vars: &[(&str, &str)]) -> Server {
    need("nginx");
    let port = free_port();
    let dir = work.join("nginx");
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    let mut conf = std::fs::read_to_string(repo().join("e2e").join(template))
        .unwrap()
        .replace("@PORT@", &port.to_string())
        .replace("@ROOT@", site.to_str().unwrap());
    for (placeholder, value) in vars {
        conf = conf.replace(placeholder, value);
    }
    std::fs::write(dir.join("nginx.conf"), conf).unwrap();
    let child = Command::new("nginx")
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .arg("-p")
        .arg(format!("{}/", dir.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    ready(Server {
        name: "nginx",
        addr: ([127, 0, 0, 1], port).into(),
        child,
        log: Default::default(),
    })
}

/// Every value of the header `name` (lower case), joined with ", ".
pub fn header_all(resp: &Resp, name: &str) -> String {
    resp.headers
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Caddy with the Caddyfile template `e2e/{template}`: `@PORT@`, `@ROOT@`
/// (`site`), `@STATE@` and each `(placeholder, value)` of `vars` filled in,
/// checked with `caddy validate` (so a bad config fails with Caddy's message),
/// then run under `work` as [`start_caddy`] does.
pub fn start_caddy_from(template: &str, site: &Path, work: &Path, vars: &[(&str, &str)]) -> Server {
    need("caddy");
    let port = free_port();
    let dir = work.join("caddy");
    std::fs::create_dir_all(&dir).unwrap();
    let mut conf = std::fs::read_to_string(repo().join("e2e").join(template))
        .unwrap()
        .replace("@PORT@", &port.to_string())
        .replace("@ROOT@", site.to_str().unwrap())
        .replace("@STATE@", dir.join("data").to_str().unwrap());
    for (placeholder, value) in vars {
        conf = conf.replace(placeholder, value);
    }
    let caddyfile = dir.join("Caddyfile");
    std::fs::write(&caddyfile, conf).unwrap();
    let caddy = |sub: &str| {
        let mut c = Command::new("caddy");
        c.arg(sub)
            .arg("--config")
            .arg(&caddyfile)
            .args(["--adapter", "caddyfile"])
            .current_dir(&dir)
            .env("HOME", &dir)
            .env("XDG_DATA_HOME", dir.join("xdg-data"))
            .env("XDG_CONFIG_HOME", dir.join("xdg-config"));
        c
    };
    let out = caddy("validate").output().unwrap();
    assert!(
        out.status.success(),
        "caddy validate {}: {}",
        caddyfile.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let child = caddy("run")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ready(Server {
        name: "caddy",
        addr: ([127, 0, 0, 1], port).into(),
        child,
        log: Default::default(),
    })
}

pub fn precompress(args: &[&std::ffi::OsStr]) -> std::process::Output {
    common::output(args)
}

/// Release 2 (of `two_releases`) precompressed with `--dictionary-from`
/// release 1 and served by a real server configured from the manifest.
pub struct Deployed {
    /// First, so the server stops before its folder goes (fields drop in order).
    pub server: Server,
    pub live: PathBuf,
    /// Release 1's script: the dictionary.
    pub old: Vec<u8>,
    /// URL path of release 2's script.
    pub url: String,
    /// Its manifest entry.
    pub asset: serde_json::Value,
    _tmp: tempfile::TempDir,
}

/// Release 2 of [`two_releases`] in `TMP/live`, precompressed with
/// `--dictionary-from` release 1 (precompressed too): (guard, live, release 1,
/// release 1's and release 2's script).
pub fn release_two_with_deltas() -> (
    tempfile::TempDir,
    PathBuf,
    PathBuf,
    &'static str,
    &'static str,
) {
    let tmp = tempfile::tempdir().unwrap();
    let (r1, r2, old_js, new_js) = two_releases(tmp.path());
    let live = tmp.path().join("live");
    copy_dir(&r2, &live);
    for args in [
        vec![r1.as_os_str()],
        vec![
            live.as_os_str(),
            "--dictionary-from".as_ref(),
            r1.as_os_str(),
        ],
    ] {
        let out = precompress(&[&["--no-config".as_ref(), "-q".as_ref()], &args[..]].concat());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (tmp, live, r1, old_js, new_js)
}

/// Ways to send a dictionary: the right one as a browser sends it, and the
/// forms that must get no delta.
pub struct DictionaryForms {
    pub right: String,
    /// The right one with spaces around it (a valid field value).
    pub padded: String,
    /// Case flipped, another dictionary, no colons, a list of two.
    pub flipped: String,
    pub unknown: String,
    pub bare: String,
    pub listed: String,
}

impl DictionaryForms {
    pub fn of(dict: &str) -> DictionaryForms {
        let flipped: String = dict
            .chars()
            .map(|c| {
                if c.is_ascii_lowercase() {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect();
        assert_ne!(flipped, dict);
        DictionaryForms {
            right: dict.to_string(),
            padded: format!(" {dict} "),
            flipped,
            unknown: precompressor::dictionary::available_dictionary(&[7; 32]),
            bare: dict.trim_matches(':').to_string(),
            listed: format!("{dict}, {dict}"),
        }
    }
}

/// Deploys release 2 behind the server `start` runs: `generator` is the
/// subcommand that writes its configuration (`nginx-map`, `caddy-map`), whose
/// output `start` gets as a file, with the folder and a scratch folder.
pub fn deploy_with_deltas(
    generator: &str,
    start: impl FnOnce(&Path, &Path, &Path) -> Server,
) -> Deployed {
    let (tmp, live, r1, old_js, new_js) = release_two_with_deltas();
    let out = precompress(&[generator.as_ref(), live.as_os_str()]);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = tmp.path().join(format!("{generator}.out"));
    std::fs::write(&config, &out.stdout).unwrap();
    let server = start(&config, &live, tmp.path());
    let asset = manifest(&live)["files"][new_js].clone();
    assert_eq!(
        asset["deltas"].as_array().map(Vec::len),
        Some(2),
        "a dcb and a dcz: {asset:#}"
    );
    Deployed {
        old: std::fs::read(r1.join(old_js)).unwrap(),
        url: format!("/{new_js}"),
        asset,
        server,
        live,
        _tmp: tmp,
    }
}

impl Deployed {
    pub fn get(&self, path: &str, ae: Option<&str>, ad: Option<&str>) -> Resp {
        let mut h = Vec::new();
        if let Some(ae) = ae {
            h.push(("Accept-Encoding", ae));
        }
        if let Some(ad) = ad {
            h.push(("Available-Dictionary", ad));
        }
        request(self.server.addr, "GET", path, &h)
    }

    pub fn dictionary(&self) -> String {
        self.asset["deltas"][0]["dictionary"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The coding of the smaller of the two deltas.
    pub fn smaller_delta(&self) -> &'static str {
        if self.delta("dcz").1 < self.delta("dcb").1 {
            "dcz"
        } else {
            "dcb"
        }
    }

    /// The manifest's delta for `coding`: (path, size).
    pub fn delta(&self, coding: &str) -> (String, u64) {
        let d = self.asset["deltas"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["coding"] == coding)
            .unwrap();
        (
            d["path"].as_str().unwrap().to_string(),
            d["size"].as_u64().unwrap(),
        )
    }

    /// The file a response with this `Content-Encoding` must be.
    pub fn file_for(&self, coding: Option<&str>) -> Vec<u8> {
        let rel = match coding {
            None => self.url[1..].to_string(),
            Some(c @ ("dcb" | "dcz")) => self.delta(c).0,
            Some(c) => format!("{}.{}", &self.url[1..], suffix(c)),
        };
        std::fs::read(self.live.join(rel)).unwrap()
    }
}

/// The deltas a server sends decode, with independent decoders, to the new script.
pub fn assert_deltas_decode(site: &Deployed) {
    let dict = site.dictionary();
    let hash = precompressor::dictionary::parse_available_dictionary(&dict).unwrap();
    let new = site.file_for(None);
    let tmp = tempfile::tempdir().unwrap();
    let old_path = tmp.path().join("old.js");
    std::fs::write(&old_path, &site.old).unwrap();
    for coding in precompressor::encode::delta::DeltaCoding::ALL {
        let token = coding.token();
        let r = site.get(&site.url, Some(&format!("gzip, br, {token}")), Some(&dict));
        assert_eq!(r.header("content-encoding"), Some(token));
        // The header names the dictionary the client sent.
        assert_eq!(coding.header_hash(&r.body), Some(hash), "{token}");
        // Decoded as a browser would (Google's C brotli decoder, zstd), under
        // its limits.
        precompressor::encode::delta::DeltaEncoder::new(
            precompressor::encode::delta::DeltaLevels {
                brotli_quality: 11,
                zstd_level: 19,
            },
        )
        .verify(coding, &r.body, &site.old, &hash, &new)
        .unwrap_or_else(|e| panic!("{token}: {e}"));
    }
    // And dcz with the reference CLI: the 40-byte header off, the old script as
    // the dictionary.
    let r = site.get(&site.url, Some("dcz"), Some(&dict));
    assert_eq!(r.header("content-encoding"), Some("dcz"));
    let frame = tmp.path().join("frame.zst");
    std::fs::write(&frame, &r.body[40..]).unwrap();
    let out = Command::new("zstd")
        .args(["-d", "-c", "-D"])
        .arg(&old_path)
        .arg(&frame)
        .output()
        .expect("zstd CLI");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout == new,
        "zstd -d -D old does not give the new script"
    );
}

/// The example binary, built by `cargo test` beside this test's own.
pub fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    dir.join("examples").join("axum")
}

/// `examples/axum.rs` (the tower `ServeManifest` in an axum app) serving a
/// folder, killed on drop.
pub struct Example(Child, pub SocketAddr);

impl Drop for Example {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn start_example(site: &std::path::Path) -> Example {
    let mut child = Command::new(example())
        .arg(site)
        .arg("127.0.0.1:0")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e} (cargo test builds it)", example().display()));
    let addr = listening_at(&mut child);
    Example(child, addr)
}

/// The address a server started with piped stdout says in its first line.
pub fn listening_at(child: &mut Child) -> SocketAddr {
    let first = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .next()
        .expect("the server printed nothing")
        .unwrap();
    addr_in(&first)
}

/// Release `n` of a SvelteKit-like tree in `dir`: chunks named by their
/// hash alone, two of which import the first (so `--shared-dictionary on`
/// makes a code dictionary of them), and a page that loads one; each
/// release changes one line of a route chunk.
pub fn hash_only_tree(dir: &Path, n: u32) {
    let chunks = dir.join("_app/immutable/chunks");
    std::fs::create_dir_all(&chunks).unwrap();
    for (i, name) in ["Bx7kQ2pA.js", "D4qLm9Zr.js", "Cc3nT8vW.js"]
        .iter()
        .enumerate()
    {
        // The others import the first, as chunks do.
        let mut js = if i > 0 {
            "import{c0_0}from\"./Bx7kQ2pA.js\";\n".to_string()
        } else {
            String::new()
        };
        for f in 0..120 {
            let release = if i == 1 && f == 7 { n } else { 1 };
            let word = &blake3::hash(format!("{i}-{f}-{release}").as_bytes()).to_hex()[..12];
            js.push_str(&format!(
                "export function c{i}_{f}(s) {{ return s.items.filter((x) => x.id > {f}).map((x) => x.label + '{word}'); }}\n"
            ));
        }
        std::fs::write(chunks.join(name), js).unwrap();
    }
    std::fs::write(
        dir.join("index.html"),
        "<!doctype html><title>app</title><script type=module src=\"/_app/immutable/chunks/Cc3nT8vW.js\"></script>\n",
    )
    .unwrap();
}

/// The Nuxt-like tree of issue #36 in `dir`: `index.html` loads
/// `_nuxt/Entry111.js` (about 20 KB), which imports `_nuxt/Small222.js`
/// statically and a 900 KB admin route, `_nuxt/Admin999.js` (which imports
/// the small chunk too), only by `import()`: the largest chunk that imports
/// another is one a first visit of the home page never loads.
pub fn lazy_route_tree(dir: &Path) {
    let nuxt = dir.join("_nuxt");
    std::fs::create_dir_all(&nuxt).unwrap();
    std::fs::write(
        dir.join("index.html"),
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>home</title><link rel=\"icon\" href=\"data:,\">\n\
         <script type=\"module\" src=\"/_nuxt/Entry111.js\"></script></head>\n\
         <body><p id=\"marker\" data-e2e-release=\"1\">home</p></body></html>\n",
    )
    .unwrap();
    let code = |name: &str, n: usize| -> String {
        (0..n)
            .map(|i| {
                format!(
                    "export function {name}{i}(s) {{ return {{ id: {i}, label: '{name} item {i}', total: s.count * {} + {} }}; }}\n",
                    (i * 7919) % 1009,
                    (i * 104729) % 7877
                )
            })
            .collect()
    };
    std::fs::write(
        nuxt.join("Small222.js"),
        format!("{}export const ready = true;\n", code("small", 60)),
    )
    .unwrap();
    std::fs::write(
        nuxt.join("Entry111.js"),
        format!(
            "import {{ ready }} from \"./Small222.js\";\n\
             const admin = () => import(\"./Admin999.js\");\n{}\
             if (ready) document.documentElement.dataset.ready = 'true';\n\
             window.openAdmin = admin;\n",
            code("entry", 220)
        ),
    )
    .unwrap();
    std::fs::write(
        nuxt.join("Admin999.js"),
        format!(
            "import {{ ready }} from \"./Small222.js\";\n{}export default ready;\n",
            code("admin", 9000)
        ),
    )
    .unwrap();
}
