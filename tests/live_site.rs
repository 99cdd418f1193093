//! `--dictionary-from https://…`: the previous release taken from the live
//! site, with no earlier build on the machine. Release 1 is served on
//! loopback by `precompress serve` and by python's `http.server`; release 2,
//! built from a clean folder, gets the same deltas as with release 1's
//! folder, and `check` decodes them with the site's files. Then every kind
//! of bad origin (refused, 500, a redirect elsewhere, a stall, gigabytes, a
//! parked page, another site): the run warns naming the origin and why,
//! writes every other variant, exits 0, and writes nothing outside DIR.

mod serve_util;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;
use serve_util::{common, free_port, manifest, start_precompress, two_releases};

/// `precompress --no-config ARGS` with TMPDIR at `tmp`: (exit code, stderr).
fn run(tmp: &Path, args: &[&std::ffi::OsStr]) -> (i32, String) {
    let out = Command::cargo_bin("precompress")
        .unwrap()
        .env("TMPDIR", tmp)
        .env_remove("PRECOMPRESS_CACHE_DIR")
        .arg("--no-config")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Two releases, release 1 precompressed (so it publishes its list of
/// dictionaries), and an empty folder to be TMPDIR.
struct Releases {
    _tmp: tempfile::TempDir,
    v1: PathBuf,
    v2: PathBuf,
    new: &'static str,
    scratch: PathBuf,
}

fn releases() -> Releases {
    let tmp = tempfile::tempdir().unwrap();
    let (v1, v2, _, new) = two_releases(tmp.path());
    let scratch = tmp.path().join("tmpdir");
    std::fs::create_dir_all(&scratch).unwrap();
    let (code, err) = run(&scratch, &[v1.as_os_str(), "-q".as_ref()]);
    assert_eq!(code, 0, "{err}");
    Releases {
        _tmp: tmp,
        v1,
        v2,
        new,
        scratch,
    }
}

fn deltas(m: &Value, key: &str) -> Vec<Value> {
    m["files"][key]["deltas"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// python's `http.server` on SITE, killed on drop.
struct Python(std::process::Child, SocketAddr);
impl Drop for Python {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_python(site: &Path) -> Python {
    let port = free_port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let python = Python(
        Command::new("python3")
            .args([
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                &port.to_string(),
            ])
            .current_dir(site)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3"),
        addr,
    );
    for _ in 0..100 {
        if TcpStream::connect(addr).is_ok() {
            return python;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("python http.server did not start");
}

#[test]
fn a_release_publishes_its_dictionaries_and_the_next_takes_them_from_the_live_site() {
    let r = releases();
    let list: Value =
        serde_json::from_slice(&std::fs::read(r.v1.join("precompress-dictionaries.json")).unwrap())
            .unwrap();
    assert_eq!(list["precompress"], "dictionaries/1");
    let listed: Vec<&str> = list["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["assets/app-1a2b3c4d.js"]);
    // An asset like any other: listed, served, checked.
    assert!(manifest(&r.v1)["files"]["precompress-dictionaries.json"].is_object());

    // The deltas a kept folder gives, for comparison.
    let by_folder = r.scratch.parent().unwrap().join("by-folder");
    common::copy_dir(&r.v2, &by_folder);
    let (code, err) = run(
        &r.scratch,
        &[
            by_folder.as_os_str(),
            "--dictionary-from".as_ref(),
            r.v1.as_os_str(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let want = common::snapshot(&by_folder);
    assert_eq!(deltas(&manifest(&by_folder), r.new).len(), 2);

    let serve = start_precompress(&r.v1, &[]);
    let python = start_python(&r.v1);
    for (name, addr) in [("precompress serve", serve.addr), ("http.server", python.1)] {
        let dir = r.scratch.parent().unwrap().join(name.replace(' ', "-"));
        common::copy_dir(&r.v2, &dir);
        // Credentials in the URL are sent, never shown.
        let site = format!("http://user:secret@{addr}/");
        let (code, err) = run(
            &r.scratch,
            &[dir.as_os_str(), "--dictionary-from".as_ref(), site.as_ref()],
        );
        assert_eq!(code, 0, "{name}: {err}");
        assert!(!err.contains("secret"), "{name}: {err}");
        assert!(
            err.contains("1 of the 1 dictionaries it lists pair with this build, 1 taken"),
            "{name}: {err}"
        );
        assert_eq!(
            common::snapshot(&dir),
            want,
            "{name}: not the folder's deltas"
        );
        // check decodes them with the site's files.
        let out = Command::cargo_bin("precompress")
            .unwrap()
            .env("TMPDIR", &r.scratch)
            .args(["check".as_ref(), dir.as_os_str()])
            .args(["--dictionary-from", &site])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{name}: {stdout}");
        assert!(
            stdout.contains("2 deltas verified, 2 of them decoded"),
            "{name}: {stdout}"
        );
        assert_eq!(
            std::fs::read_dir(&r.scratch).unwrap().count(),
            0,
            "{name}: left files in TMPDIR"
        );
    }
}

/// A loopback origin that answers every request with `answer(path)`, on a
/// thread of its own per connection.
fn origin(answer: fn(&str, u16) -> Vec<u8>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve_one(stream, answer, addr.port()));
        }
    });
    addr
}

fn serve_one(mut s: TcpStream, answer: fn(&str, u16) -> Vec<u8>, port: u16) {
    let mut reader = BufReader::new(s.try_clone().unwrap());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split(' ').nth(1).unwrap_or("/").to_string();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                break;
            }
        }
        if s.write_all(&answer(&path, port)).is_err() {
            return;
        }
    }
}

fn http(status: &str, headers: &str, body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "HTTP/1.1 {status}\r\ncontent-length: {}\r\n{headers}\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

/// A list naming release 1's script, as release 1 published it.
fn list_of_release_one() -> Vec<u8> {
    let list = two_releases_list();
    std::fs::read(list).unwrap()
}

/// Release 1's list, made once per test process.
fn two_releases_list() -> PathBuf {
    static LIST: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    LIST.get_or_init(|| {
        let r = releases();
        let p = std::env::temp_dir().join(format!("live-site-list-{}.json", std::process::id()));
        std::fs::copy(r.v1.join("precompress-dictionaries.json"), &p).unwrap();
        p
    })
    .clone()
}

#[test]
fn a_live_site_that_is_down_or_wrong_is_a_warning_and_every_variant_is_still_written() {
    let _ = two_releases_list();
    let refused = format!("127.0.0.1:{}", free_port());
    let cases: Vec<(&str, String, &str)> = vec![
        ("refused", refused, "refused"),
        (
            "500",
            origin(|_, _| http("500 Internal Server Error", "", b"oops")).to_string(),
            "answered 500",
        ),
        (
            "a redirect elsewhere",
            origin(|p, _| {
                http(
                    "302 Found",
                    &format!("location: http://127.0.0.2:9{p}\r\n"),
                    b"",
                )
            })
            .to_string(),
            "redirects to another origin",
        ),
        (
            "a parked page",
            origin(|_, _| {
                http(
                    "200 OK",
                    "content-type: text/html\r\n",
                    b"<html><body>This domain is for sale</body></html>",
                )
            })
            .to_string(),
            "is it this site",
        ),
        (
            "another site",
            origin(|p, _| {
                if p.ends_with("precompress-dictionaries.json") {
                    let list = br#"{"precompress":"dictionaries/1","files":[{"path":"js/other-AAAA1111.js","sha256":"0000000000000000000000000000000000000000000000000000000000000000","size":900}]}"#;
                    http("200 OK", "", list)
                } else {
                    http("404 Not Found", "", b"")
                }
            })
            .to_string(),
            "none of the 1 dictionaries it lists pairs",
        ),
        (
            "a list of gigabytes",
            origin(|_, _| {
                let mut r = b"HTTP/1.1 200 OK\r\ncontent-length: 4000000000\r\n\r\n".to_vec();
                r.extend(std::iter::repeat_n(b' ', 16 << 20));
                r
            })
            .to_string(),
            "over 8388608 bytes",
        ),
        (
            "a script of gigabytes",
            origin(|p, _| {
                if p.ends_with("precompress-dictionaries.json") {
                    http("200 OK", "", &list_of_release_one())
                } else {
                    let mut r =
                        b"HTTP/1.1 200 OK\r\ncontent-length: 4000000000\r\n\r\n".to_vec();
                    r.extend(std::iter::repeat_n(b'x', 80 << 20));
                    r
                }
            })
            .to_string(),
            "over 67108864 bytes",
        ),
        (
            "a script redirected elsewhere",
            origin(|p, _| {
                if p.ends_with("precompress-dictionaries.json") {
                    http("200 OK", "", &list_of_release_one())
                } else {
                    http("301 Moved", "location: http://127.0.0.3/x.js\r\n", b"")
                }
            })
            .to_string(),
            "redirects to another origin",
        ),
        (
            "a stall",
            origin(|_, _| {
                std::thread::sleep(Duration::from_secs(30));
                Vec::new()
            })
            .to_string(),
            "timed out",
        ),
    ];
    for (name, addr, why) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let (_, v2, _, new) = two_releases(tmp.path());
        let scratch = tmp.path().join("tmpdir");
        std::fs::create_dir_all(&scratch).unwrap();
        let site = format!("http://{addr}/");
        let (code, err) = run(
            &scratch,
            &[v2.as_os_str(), "--dictionary-from".as_ref(), site.as_ref()],
        );
        assert_eq!(code, 0, "{name}: {err}");
        assert!(
            err.contains(&format!("warning: {site}")) || err.contains(&format!("at {site}")),
            "{name}: the warning names the origin: {err}"
        );
        assert!(err.contains(why), "{name}: expected {why:?} in: {err}");
        let m = manifest(&v2);
        let asset = &m["files"][new];
        let codings: Vec<&str> = asset["encodings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["coding"].as_str().unwrap())
            .collect();
        assert_eq!(codings.len(), 3, "{name}: {asset:#}");
        assert!(deltas(&m, new).is_empty(), "{name}: {asset:#}");
        assert_eq!(
            std::fs::read_dir(&scratch).unwrap().count(),
            0,
            "{name}: wrote outside DIR"
        );
        let outside: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(outside.len(), 3, "{name}: {outside:?}");
    }
}

/// Issue #46: with TMPDIR inside DIR, the release fetched from the live site
/// was compressed and listed in the manifest, then deleted, and `check`
/// failed with `source_missing`. The fetched release goes beside DIR now,
/// under a new name each run, and nothing of it is published or left.
#[test]
fn tmpdir_inside_dir_never_publishes_the_fetched_release() {
    let r = releases();
    let serve = start_precompress(&r.v1, &[]);
    let dir = r.scratch.parent().unwrap().join("tmpdir-inside");
    common::copy_dir(&r.v2, &dir);
    let inside = dir.join("tmp");
    std::fs::create_dir_all(&inside).unwrap();
    let site = format!("http://{}/", serve.addr);
    let (code, err) = run(
        &inside,
        &[dir.as_os_str(), "--dictionary-from".as_ref(), site.as_ref()],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("1 taken"), "{err}");
    let m = manifest(&dir);
    let keys: Vec<&String> = m["files"].as_object().unwrap().keys().collect();
    assert!(
        keys.iter().all(|k| !k.contains("precompress-previous-")),
        "{keys:?}"
    );
    assert_eq!(
        deltas(&m, r.new).len(),
        2,
        "deltas against the site's release: {err}"
    );
    assert_eq!(std::fs::read_dir(&inside).unwrap().count(), 0);
    let beside: Vec<_> = std::fs::read_dir(dir.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("precompress-previous-")
        })
        .collect();
    assert!(beside.is_empty(), "left beside DIR: {beside:?}");
    let out = Command::cargo_bin("precompress")
        .unwrap()
        .args(["check".as_ref(), dir.as_os_str()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Issue #46: rebuilding the commit already live (a re-run deploy, "Retry
/// deploy") found its own list, made no delta, and said nothing; the deploy
/// then replaced a release that had them. It is said now, with what to do.
#[test]
fn a_build_of_what_the_site_already_serves_says_it_gets_no_deltas_from_it() {
    let r = releases();
    let serve = start_precompress(&r.v1, &[]);
    let again = r.scratch.parent().unwrap().join("same-build");
    common::copy_dir(&r.v1, &again);
    let site = format!("http://{}/", serve.addr);
    let (code, err) = run(
        &r.scratch,
        &[
            again.as_os_str(),
            "--dictionary-from".as_ref(),
            site.as_ref(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning") && err.contains("serves this very build"),
        "{err}"
    );
    // A build that differs from the live one is not told so.
    let next = r.scratch.parent().unwrap().join("next-build");
    common::copy_dir(&r.v2, &next);
    let (code, err) = run(
        &r.scratch,
        &[
            next.as_os_str(),
            "--dictionary-from".as_ref(),
            site.as_ref(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("serves this very build"), "{err}");
}

/// Issue #46: `serve` answers Chromium's fetch of the code dictionary that
/// holds no dictionary with a 204; the live-site fetch is no Chromium, and
/// still takes the whole file, so the next release's code dictionary gets
/// its delta against it (with the 204 sent to every request holding none,
/// the Nuxt build's returning visitor got it whole: 65,047 B).
#[test]
fn the_live_site_s_code_dictionary_is_taken_whole_and_the_next_one_is_a_delta_against_it() {
    let tmp = tempfile::tempdir().unwrap();
    let scratch = tmp.path().join("tmpdir");
    std::fs::create_dir_all(&scratch).unwrap();
    let (v1, v2) = (tmp.path().join("v1"), tmp.path().join("v2"));
    serve_util::hash_only_tree(&v1, 1);
    serve_util::hash_only_tree(&v2, 2);
    let on = ["--shared-dictionary".as_ref(), "on".as_ref(), "-q".as_ref()];
    let (code, err) = run(&scratch, &[&[v1.as_os_str()][..], &on].concat());
    assert_eq!(code, 0, "{err}");
    let serve = start_precompress(&v1, &["-q"]);
    let site = format!("http://{}/", serve.addr);
    let from = ["--dictionary-from".as_ref(), site.as_ref()];
    let (code, err) = run(&scratch, &[&[v2.as_os_str()][..], &on, &from].concat());
    assert_eq!(code, 0, "{err}");
    let (m1, m2) = (manifest(&v1), manifest(&v2));
    let (old, new) = (
        m1["shared_dictionary"].as_str().unwrap(),
        m2["shared_dictionary"].as_str().unwrap(),
    );
    assert_ne!(
        old, new,
        "release 2 changed a chunk the code dictionary holds"
    );
    let held = format!(":{}:", m1["files"][old]["sha256"].as_str().unwrap());
    let against: Vec<Value> = deltas(&m2, new)
        .into_iter()
        .filter(|d| d["dictionary"] == held.as_str())
        .collect();
    assert_eq!(
        against.len(),
        2,
        "no dcb and dcz of {new} against {old}: {:#}",
        m2["files"][new]
    );
}
