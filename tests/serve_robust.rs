//! `precompress serve` under the conditions a preview server meets: a rebuild
//! in another terminal while it runs, keep-alive clients, idle and slow
//! connections, and a process out of file descriptors. Each test failed before
//! its fix (stale `.br` and a 304 for old content; 43 ms per keep-alive request
//! from Nagle; idle connections kept forever; a busy loop at the fd limit);
//! and what a hostile folder or request did to it: a backslash in a name
//! stopped it, a huge `Accept-Encoding` held it, a FIFO manifest hung it.

mod serve_util;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use serve_util::*;

use serve_util::common::quick;

fn decode_br(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::BrotliDecompress(&mut &body[..], &mut out).unwrap();
    out
}

#[test]
fn an_edit_after_start_is_never_served_stale_and_a_rerun_is_picked_up() {
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &[]);
    let app = site.join("assets/app.js");
    let old = std::fs::read(&app).unwrap();
    let r = get(s.addr, "/assets/app.js", Some("br"));
    assert_eq!(r.header("content-encoding"), Some("br"));
    let old_etag = r.header("etag").unwrap().to_string();

    // The same size, other bytes, a later mtime: what a rebuild leaves.
    let mut new = old.clone();
    new[0] = if new[0] == b'/' { b' ' } else { b'/' };
    std::fs::write(&app, &new).unwrap();
    let f = std::fs::File::options().write(true).open(&app).unwrap();
    f.set_modified(std::time::SystemTime::now() + Duration::from_secs(2))
        .unwrap();
    drop(f);
    let r = get(s.addr, "/assets/app.js", Some("br"));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), None, "the old .br was sent");
    assert!(r.body == new, "not the new bytes");
    assert!(r.header("etag").unwrap().starts_with("W/"));
    // A cache holding the old representation must not be told it is current.
    let r = request(
        s.addr,
        "GET",
        "/assets/app.js",
        &[("Accept-Encoding", "br"), ("If-None-Match", &old_etag)],
    );
    assert_eq!(r.status, 200, "304 for content that changed");
    assert!(r.body == new);

    // precompress reruns: the server reloads the manifest and compresses again.
    let out = Command::cargo_bin("precompress")
        .unwrap()
        .args(["-q", "--no-config"])
        .arg(&site)
        .output()
        .unwrap();
    assert!(out.status.success());
    let r = get(s.addr, "/assets/app.js", Some("br"));
    assert_eq!(r.header("content-encoding"), Some("br"));
    assert!(decode_br(&r.body) == new);
    assert_ne!(r.header("etag"), Some(old_etag.as_str()));
}

/// The server makes no `stat` of the folder and the manifest while an
/// inotify watch on their paths stays quiet (src/serve/http/watch.rs): a
/// link swapped above the folder, the folder replaced under the link's
/// target, and a manifest rewritten in place are each served from the very
/// next request.
#[test]
fn a_link_swapped_above_the_folder_or_the_folder_replaced_is_served_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (r1, r2, js1, js2) = two_releases(tmp.path());
    for r in [&r1, &r2] {
        let out = precompress(&["-q".as_ref(), "--no-config".as_ref(), r.as_os_str()]);
        assert!(out.status.success());
    }
    // cur -> a, serving cur/site: the link is above the folder.
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    copy_dir(&r1, &a.join("site"));
    copy_dir(&r2, &b.join("site"));
    let cur = tmp.path().join("cur");
    std::os::unix::fs::symlink("a", &cur).unwrap();
    let s = start_precompress(&cur.join("site"), &[]);
    let page = |want: &str| {
        for _ in 0..3 {
            // Each request twice: the second is answered with no event pending.
            let r = get(s.addr, "/", None);
            assert!(
                String::from_utf8_lossy(&r.body).contains(want),
                "not {want}: {}",
                String::from_utf8_lossy(&r.body)
            );
        }
    };
    page("release 1");
    assert_eq!(
        get(s.addr, &format!("/{js1}"), Some("br")).header("content-encoding"),
        Some("br")
    );

    std::os::unix::fs::symlink("b", tmp.path().join("cur.new")).unwrap();
    std::fs::rename(tmp.path().join("cur.new"), &cur).unwrap();
    page("release 2");
    let r = get(s.addr, &format!("/{js2}"), Some("br"));
    assert_eq!((r.status, r.header("content-encoding")), (200, Some("br")));
    assert_eq!(get(s.addr, &format!("/{js1}"), Some("br")).status, 404);

    // The folder the link reaches replaced by release 1 again.
    copy_dir(&r1, &b.join("site.new"));
    std::fs::rename(b.join("site"), b.join("site.old")).unwrap();
    std::fs::rename(b.join("site.new"), b.join("site")).unwrap();
    page("release 1");
    assert_eq!(get(s.addr, &format!("/{js2}"), Some("br")).status, 404);

    // The manifest rewritten in place (not renamed over): its asset list
    // emptied, the script is sent as it is.
    let m = b.join("site/precompress-manifest.json");
    let mut json: serde_json::Value = serde_json::from_slice(&std::fs::read(&m).unwrap()).unwrap();
    json["files"] = serde_json::json!({});
    std::fs::write(&m, serde_json::to_vec(&json).unwrap()).unwrap();
    for _ in 0..2 {
        let r = get(s.addr, &format!("/{js1}"), Some("br"));
        assert_eq!((r.status, r.header("content-encoding")), (200, None));
    }
}

/// A 304 opens no file: with the source as it was at load, the client's copy
/// (the manifest's variant, by its ETag) decodes to what is on disk, so a
/// variant gone since is no reason to send the body; a request that needs the
/// bytes still goes without it. An edited source gets no 304 for its variant.
#[test]
fn a_304_needs_the_source_unchanged_not_the_variant_opened() {
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &[]);
    let r = get(s.addr, "/assets/app.js", Some("br"));
    assert_eq!(r.header("content-encoding"), Some("br"));
    let etag = r.header("etag").unwrap().to_string();
    std::fs::remove_file(site.join("assets/app.js.br")).unwrap();
    let cond = [("Accept-Encoding", "br"), ("If-None-Match", etag.as_str())];
    let r = request(s.addr, "GET", "/assets/app.js", &cond);
    assert_eq!((r.status, r.header("etag")), (304, Some(etag.as_str())));
    let r = get(s.addr, "/assets/app.js", Some("br"));
    assert_eq!((r.status, r.header("content-encoding")), (200, None));
    assert!(r.body == std::fs::read(site.join("assets/app.js")).unwrap());

    // The source edited: its old variant's ETag is no longer current.
    let app = site.join("assets/app.js");
    let mut new = std::fs::read(&app).unwrap();
    new.extend_from_slice(b"\n// edited\n");
    std::fs::write(&app, &new).unwrap();
    let r = request(s.addr, "GET", "/assets/app.js", &cond);
    assert_eq!(r.status, 200);
    assert!(r.body == new);
}

/// Bodies up to 256 KiB are kept in memory once a file is older than 2 s at
/// load (src/serve/http/known.rs). A kept `.br` or source is sent only while
/// a stat of its path gives the stamp it had at load: the variant rewritten
/// in place, replaced with its size and mtime kept, and the source rewritten,
/// the next answer is never the body kept before.
#[test]
fn a_body_kept_in_memory_is_never_sent_after_its_file_changes() {
    let (_tmp, site) = precompressed_site();
    // Older than the 2 s within which nothing is kept.
    std::thread::sleep(Duration::from_millis(2100));
    let s = start_precompress(&site, &[]);
    let app = site.join("assets/app.js");
    let br = site.join("assets/app.js.br");
    let source = std::fs::read(&app).unwrap();
    let kept = std::fs::read(&br).unwrap();
    for _ in 0..3 {
        let r = get(s.addr, "/assets/app.js", Some("br"));
        assert_eq!(r.header("content-encoding"), Some("br"));
        assert!(r.body == kept);
        let r = get(s.addr, "/assets/app.js", None);
        assert!(r.body == source);
    }
    // The .br rewritten in place, same size: not valid brotli of app.js any
    // more, so neither it nor the kept one may go out; app.js goes uncompressed.
    let mtime = std::fs::metadata(&br).unwrap().modified().unwrap();
    let mut other = kept.clone();
    other[0] ^= 0xff;
    std::fs::write(&br, &other).unwrap();
    let r = get(s.addr, "/assets/app.js", Some("br"));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), None, "a changed .br was sent");
    assert!(r.body == source);
    // Replaced by rename, with the old size and mtime (rsync -a).
    let tmp = site.join("assets/.app.js.br.tmp");
    std::fs::write(&tmp, &other).unwrap();
    let f = std::fs::File::options().write(true).open(&tmp).unwrap();
    f.set_modified(mtime).unwrap();
    drop(f);
    std::fs::rename(&tmp, &br).unwrap();
    let r = get(s.addr, "/assets/app.js", Some("br"));
    assert_eq!(
        r.header("content-encoding"),
        None,
        "a replaced .br was sent"
    );
    assert!(r.body == source);
    // The source rewritten, same size: its new bytes, never the kept ones.
    let mut new = source.clone();
    new[0] = if new[0] == b'/' { b' ' } else { b'/' };
    std::fs::write(&app, &new).unwrap();
    let r = get(s.addr, "/assets/app.js", None);
    assert!(r.body == new, "the kept source was sent");
    assert!(r.header("etag").unwrap().starts_with("W/"));
}

/// Sequential requests on one keep-alive connection; returns each one's time.
/// An atomic replacement of the same size with the mtime kept (`rsync -a`,
/// `cp -p`, a `SOURCE_DATE_EPOCH` build) was judged unchanged by size and
/// mtime: the old `.br` and the old strong ETag went out until the manifest
/// was rewritten. The inode and ctime tell it.
#[test]
fn a_replacement_of_the_same_size_and_mtime_is_never_served_stale() {
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &[]);
    let app = site.join("assets/app.js");
    let old = std::fs::read(&app).unwrap();
    let mtime = std::fs::metadata(&app).unwrap().modified().unwrap();
    let r = get(s.addr, "/assets/app.js", Some("br"));
    assert_eq!(r.header("content-encoding"), Some("br"));
    let mut new = old.clone();
    new[0] = if new[0] == b'/' { b' ' } else { b'/' };
    for how in ["in place", "rename"] {
        new[1] = if how == "rename" { b'*' } else { b'/' };
        if how == "rename" {
            // rsync -a: a new file of the same size, its mtime set back, renamed over.
            let tmp = site.join("assets/.app.js.tmp");
            std::fs::write(&tmp, &new).unwrap();
            let f = std::fs::File::options().write(true).open(&tmp).unwrap();
            f.set_modified(mtime).unwrap();
            drop(f);
            std::fs::rename(&tmp, &app).unwrap();
        } else {
            // cp -p: the same inode rewritten, its mtime set back.
            std::fs::write(&app, &new).unwrap();
            let f = std::fs::File::options().write(true).open(&app).unwrap();
            f.set_modified(mtime).unwrap();
            drop(f);
        }
        let md = std::fs::metadata(&app).unwrap();
        assert_eq!(
            (md.len(), md.modified().unwrap()),
            (old.len() as u64, mtime)
        );
        let r = get(s.addr, "/assets/app.js", Some("br"));
        assert_eq!(r.status, 200, "{how}");
        assert_eq!(
            r.header("content-encoding"),
            None,
            "{how}: the old .br was sent"
        );
        assert!(r.body == new, "{how}: not the new bytes");
        assert!(r.header("etag").unwrap().starts_with("W/"), "{how}");
    }
}

fn keep_alive_times(addr: std::net::SocketAddr, n: usize) -> Vec<Duration> {
    let mut conn = TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut times = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        conn.write_all(b"GET /assets/app.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br\r\n\r\n")
            .unwrap();
        let mut len = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        times.push(t.elapsed());
    }
    times
}

#[test]
fn keep_alive_requests_are_not_held_back_by_nagle() {
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &[]);
    let mut times = keep_alive_times(s.addr, 21);
    times.sort();
    // Nagle with the client's delayed ACK made every request take ~43 ms;
    // without it they take well under a millisecond. The bound leaves room
    // for a busy machine.
    assert!(
        times[10] < Duration::from_millis(20),
        "median {:?}",
        times[10]
    );
}

#[test]
fn idle_and_slow_connections_are_closed() {
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &[]);
    let idle = TcpStream::connect(s.addr).unwrap();
    let mut slow = TcpStream::connect(s.addr).unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
    let started = Instant::now();
    for mut c in [idle, slow] {
        c.set_read_timeout(Some(Duration::from_secs(40))).unwrap();
        let mut buf = [0u8; 1024];
        // The server closes (EOF, or a 408 then EOF) instead of waiting forever.
        loop {
            match c.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e) => panic!("not closed after {:?}: {e}", started.elapsed()),
            }
        }
    }
    assert!(started.elapsed() < Duration::from_secs(35));
    // And the server still answers.
    assert_eq!(get(s.addr, "/", None).status, 200);
}

/// user + system CPU seconds of a process so far.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}

#[test]
fn out_of_file_descriptors_it_backs_off_instead_of_spinning() {
    let (tmp, site) = precompressed_site();
    let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_precompress"));
    let err = tmp.path().join("stderr.txt");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -n 32 && exec \"$0\" serve \"$1\" --addr 127.0.0.1:0")
        .arg(&bin)
        .arg(&site)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
    let addr = addr_in(&first);
    // Far more connections than descriptors: the kernel queues them, accept fails.
    let held: Vec<TcpStream> = (0..60)
        .filter_map(|_| TcpStream::connect(addr).ok())
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let cpu0 = cpu_seconds(child.id());
    std::thread::sleep(Duration::from_secs(2));
    let busy = cpu_seconds(child.id()) - cpu0;
    let log = std::fs::read_to_string(&err).unwrap();
    let messages = log.matches("accept:").count();
    drop(held);
    let _ = child.kill();
    let _ = child.wait();
    assert!(log.contains("Too many open files"), "{log}");
    assert!(busy < 0.5, "{busy:.2} s of CPU in 2 s at the fd limit");
    assert!(messages <= 5, "{messages} accept messages in 2.5 s:\n{log}");
}

#[test]
fn a_backslash_in_a_name_is_passed_over_and_serve_still_starts() {
    let (_tmp, site) = precompressed_site();
    std::fs::write(site.join("assets/back\\slash.js"), "x".repeat(4000)).unwrap();
    quick()
        .arg(&site)
        .args(["--no-config"])
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "back\\slash.js: no URL path can name",
        ))
        .stdout(predicates::str::contains("1 name_not_servable"));
    assert!(!site.join("assets/back\\slash.js.br").exists());
    quick().arg("check").arg(&site).assert().success();
    let s = start_precompress(&site, &[]);
    assert_eq!(get(s.addr, "/assets/app.js", Some("br")).status, 200);
}

#[test]
fn a_huge_accept_encoding_does_not_hold_the_server() {
    let (_tmp, site) = precompressed_site();
    let s = start_precompress(&site, &[]);
    // 40,000 tokens (about 300 KB): seconds per request when parsing was quadratic.
    let huge: String = (0..40_000).map(|i| format!("x{i},")).collect();
    let t = Instant::now();
    let r = request(
        s.addr,
        "GET",
        "/assets/app.js",
        &[("Accept-Encoding", &huge)],
    );
    assert!(r.status == 200 || r.status == 431, "{}", r.status);
    let r = get(s.addr, "/assets/app.js", Some("br"));
    assert_eq!(r.header("content-encoding"), Some("br"));
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
}

#[test]
fn serve_refuses_a_fifo_manifest_instead_of_hanging() {
    let (_tmp, site) = precompressed_site();
    let mpath = site.join("precompress-manifest.json");
    std::fs::remove_file(&mpath).unwrap();
    serve_util::common::mkfifo(&mpath);
    let t = Instant::now();
    quick()
        .args(["serve"])
        .arg(&site)
        .args(["--addr", "127.0.0.1:0"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("not a regular file"));
    assert!(t.elapsed() < Duration::from_secs(15));
}
