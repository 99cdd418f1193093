//! `precompress objects`: a precompressed folder as bucket objects with their
//! headers (JSON, TSV, `aws s3 cp` and `rclone copyto` scripts), and the
//! CloudFront Functions in front of them. The scripts run for real against a
//! fake `aws` / `rclone` on PATH that records its argv. How the functions
//! answer is npm/serve-cases-edge.mjs's part (the shared table, in Node).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod serve_util;

use serve_util::precompress;

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

const SCRIPT_1: &str = "assets/app-D8fKq1nN.js";
const SCRIPT_2: &str = "assets/app-C4dE5fGh.js";
/// A name with everything a shell would otherwise read: quotes, `$`, backticks, `&`, spaces.
const ODD: &str = "odd names/it's a \"quoted\" $HOME & `x` page.html";

fn script(extra: &str) -> String {
    let mut s: String = (1..=80)
        .map(|i| format!("export const f{i} = (x) => x * {i} + 'a line of a script';\n"))
        .collect();
    s.push_str(extra);
    s
}

fn page(title: &str) -> String {
    let lines: String = (1..=40)
        .map(|i| format!("<p>{title}: line {i} of a page of the site</p>\n"))
        .collect();
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body>\n{lines}</body></html>\n"
    )
}

/// Release 2 precompressed with deltas against release 1: (guard, release 2).
fn site_with_deltas() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let (r1, r2) = (tmp.path().join("r1"), tmp.path().join("r2"));
    for (dir, js, extra) in [
        (&r1, SCRIPT_1, ""),
        (&r2, SCRIPT_2, "export const g = 1;\n"),
    ] {
        write(dir, js, &script(extra));
        write(dir, "index.html", &page("home"));
        write(dir, "404.html", &page("not found"));
        write(dir, ODD, &page("odd"));
        write(dir, "robots.txt", "User-agent: *\n");
    }
    ok(&precompress(&[
        "--no-config".as_ref(),
        "-q".as_ref(),
        r1.as_os_str(),
    ]));
    ok(&precompress(&[
        "--no-config".as_ref(),
        "-q".as_ref(),
        r2.as_os_str(),
        "--dictionary-from".as_ref(),
        r1.as_os_str(),
    ]));
    (tmp, r2)
}

fn listing(site: &Path) -> Vec<Value> {
    ok(&precompress(&["objects".as_ref(), site.as_os_str()]))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every file under `root`, relative, `/` separators.
fn files(root: &Path) -> BTreeSet<String> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            e.path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect()
}

/// Every representation the manifest lists, by path: (asset key, coding, ETag).
fn representations(site: &Path) -> BTreeMap<String, (String, Option<String>, String)> {
    let m: Value =
        serde_json::from_slice(&std::fs::read(site.join("precompress-manifest.json")).unwrap())
            .unwrap();
    let mut out = BTreeMap::new();
    for (key, a) in m["files"].as_object().unwrap() {
        let etag = |v: &Value| v["etag"].as_str().unwrap().to_string();
        out.insert(key.clone(), (key.clone(), None, etag(a)));
        for v in a["encodings"]
            .as_array()
            .unwrap()
            .iter()
            .chain(a["deltas"].as_array().into_iter().flatten())
        {
            let coding = v["coding"].as_str().unwrap().to_string();
            out.insert(
                v["path"].as_str().unwrap().to_string(),
                (key.clone(), Some(coding), etag(v)),
            );
        }
    }
    out
}

#[test]
fn the_upload_list_has_one_object_per_file_with_the_headers_serve_sends() {
    let (_g, site) = site_with_deltas();
    let objects = listing(&site);
    let mut expected = files(&site);
    expected.remove("precompress-manifest.json");
    let listed: Vec<&str> = objects
        .iter()
        .map(|o| o["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed.iter().copied().collect::<BTreeSet<_>>(),
        expected.iter().map(String::as_str).collect(),
        "every file but the manifest"
    );
    assert_eq!(listed.len(), expected.len(), "each once: {listed:?}");
    let reps = representations(&site);
    let m: Value =
        serde_json::from_slice(&std::fs::read(site.join("precompress-manifest.json")).unwrap())
            .unwrap();
    let mut deltas = 0;
    let mut page_deltas = 0;
    for o in &objects {
        let file = o["file"].as_str().unwrap();
        assert_eq!(o["key"], o["file"], "base /: the key is the path");
        let (asset, coding, etag) = &reps[file];
        let a = &m["files"][asset];
        assert_eq!(o["content_encoding"].as_str(), coding.as_deref(), "{file}");
        assert_eq!(
            o["content_type"], a["content_type"],
            "{file}: the asset's type"
        );
        assert_eq!(o["etag"].as_str(), Some(etag.as_str()), "{file}");
        assert_eq!(
            o["metadata"]["precompress-etag"].as_str(),
            Some(etag.as_str())
        );
        assert_eq!(o["size"], std::fs::metadata(site.join(file)).unwrap().len());
        let cache = if asset == SCRIPT_2 {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        };
        assert_eq!(o["cache_control"], cache, "{file}");
        let has_deltas = a["deltas"].as_array().is_some_and(|d| !d.is_empty());
        let variants = !a["encodings"].as_array().unwrap().is_empty();
        let page = a["cache"] == "page";
        // What serve sends (serve::vary, held by its unit test).
        let vary = precompressor::serve::vary(has_deltas, variants, page);
        assert_eq!(o["vary"].as_str(), vary, "{file}");
        // A page is stored no-cache; the viewer-response function sends a
        // Chromium navigation the policy that keeps it.
        assert_eq!(
            o["metadata"]["precompress-page"].as_str(),
            page.then_some(precompressor::manifest::CACHE_PAGE_KEPT),
            "{file}"
        );
        assert_eq!(o["metadata"]["precompress-vary"].as_str(), vary, "{file}");
        assert_eq!(o["use_as_dictionary"], a["use_as_dictionary"], "{file}");
        let status = if asset == "404.html" { 404 } else { 200 };
        assert_eq!(o["status"], status, "{file}");
        if matches!(coding.as_deref(), Some("dcb" | "dcz")) && page {
            // A page's delta (against its identical earlier self here).
            page_deltas += 1;
            assert_eq!(
                o["metadata"]["precompress-use-as-dictionary"], a["use_as_dictionary"],
                "{file}"
            );
        } else if matches!(coding.as_deref(), Some("dcb" | "dcz")) {
            deltas += 1;
            assert!(file.starts_with(&format!("{SCRIPT_2}.")), "{file}");
            assert_eq!(
                o["metadata"]["precompress-use-as-dictionary"],
                "match=\"/assets/app-*.js\""
            );
        }
    }
    assert_eq!(deltas, 2, "a dcb and a dcz against release 1's script");
    assert!(page_deltas > 0, "the pages' deltas");
    // Pages come last: none is uploaded before what it names.
    let first_page = objects
        .iter()
        .position(|o| o["content_type"].as_str().unwrap().starts_with("text/html"))
        .unwrap();
    assert!(objects[first_page..]
        .iter()
        .all(|o| o["content_type"].as_str().unwrap().starts_with("text/html")));
    // TSV: a header line and a line per object.
    let tsv = ok(&precompress(&[
        "objects".as_ref(),
        site.as_os_str(),
        "--format".as_ref(),
        "tsv".as_ref(),
    ]));
    assert!(
        tsv.starts_with("key\tfile\tsize\tcontent_encoding\t"),
        "{tsv}"
    );
    assert_eq!(tsv.lines().count(), objects.len() + 1);
}

/// A fake `CMD` on PATH under `tmp`: each run writes its argv, NUL-separated, to a file of its own in `log`.
fn fake(tmp: &Path, cmd: &str) -> (PathBuf, PathBuf) {
    let bin = tmp.join("bin");
    let log = tmp.join(format!("{cmd}-log"));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&log).unwrap();
    let exe = bin.join(cmd);
    std::fs::write(
        &exe,
        "#!/bin/sh\nn=$(ls \"$FAKE_LOG\" | wc -l)\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > \"$FAKE_LOG/$((n + 1))\"\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (bin, log)
}

/// Runs the script `text` with `sh` after `bash -n`, the fake on PATH and
/// `var`=`value`: every recorded argv.
fn run_script(tmp: &Path, cmd: &str, text: &str, var: &str, value: &str) -> Vec<Vec<String>> {
    let path = tmp.join(format!("upload-{cmd}.sh"));
    std::fs::write(&path, text).unwrap();
    let syntax = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(
        syntax.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    let (bin, log) = fake(tmp, cmd);
    let paths = std::env::var_os("PATH").unwrap_or_default();
    let mut all = vec![bin];
    all.extend(std::env::split_paths(&paths));
    let out = Command::new("sh")
        .arg(&path)
        .env("PATH", std::env::join_paths(all).unwrap())
        .env("FAKE_LOG", &log)
        .env(var, value)
        .output()
        .unwrap();
    ok(&out);
    let mut runs: Vec<(u64, Vec<String>)> = std::fs::read_dir(&log)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let n = e.file_name().to_str().unwrap().parse().unwrap();
            let bytes = std::fs::read(e.path()).unwrap();
            let args = bytes
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8(a.to_vec()).unwrap())
                .collect();
            (n, args)
        })
        .collect();
    runs.sort();
    runs.into_iter().map(|(_, a)| a).collect()
}

/// `--flag value` pairs after the positional arguments.
fn flags(args: &[String]) -> Vec<(String, String)> {
    args.chunks(2)
        .map(|p| {
            assert!(p[0].starts_with("--") && p.len() == 2, "{args:?}");
            (p[0].clone(), p[1].clone())
        })
        .collect()
}

#[test]
fn the_aws_and_rclone_scripts_run_and_name_each_file_once_with_its_headers() {
    let (g, site) = site_with_deltas();
    let objects = listing(&site);
    let by_key: BTreeMap<&str, &Value> = objects
        .iter()
        .map(|o| (o["key"].as_str().unwrap(), o))
        .collect();
    let dir = site.to_str().unwrap();
    let script = |format: &str| {
        ok(&precompress(&[
            "objects".as_ref(),
            site.as_os_str(),
            "--format".as_ref(),
            format.as_ref(),
        ]))
    };

    let runs = run_script(g.path(), "aws", &script("aws"), "BUCKET", "my-bucket");
    assert_eq!(runs.len(), objects.len(), "one aws s3 cp per object");
    let mut seen = BTreeSet::new();
    for args in &runs {
        assert_eq!(&args[..2], ["s3", "cp"], "{args:?}");
        let key = args[3].strip_prefix("s3://my-bucket/").expect(&args[3]);
        let o = by_key[key];
        assert!(seen.insert(key.to_string()), "{key} uploaded twice");
        assert_eq!(args[2], format!("{dir}/{}", o["file"].as_str().unwrap()));
        let f: BTreeMap<String, String> = flags(&args[4..]).into_iter().collect();
        assert_eq!(f["--content-type"], o["content_type"].as_str().unwrap());
        assert_eq!(f["--cache-control"], o["cache_control"].as_str().unwrap());
        assert_eq!(
            f.get("--content-encoding").map(String::as_str),
            o["content_encoding"].as_str(),
            "{key}"
        );
        let metadata: Value = f
            .get("--metadata")
            .map_or(Value::Object(Default::default()), |m| {
                serde_json::from_str(m).unwrap()
            });
        assert_eq!(metadata, o["metadata"], "{key}");
        assert_eq!(
            f.len(),
            2 + usize::from(f.contains_key("--content-encoding"))
                + usize::from(f.contains_key("--metadata"))
        );
    }
    assert!(
        seen.contains(ODD),
        "the odd name reached aws intact: {seen:?}"
    );

    let runs = run_script(
        g.path(),
        "rclone",
        &script("rclone"),
        "REMOTE",
        "s3:my-bucket",
    );
    assert_eq!(runs.len(), objects.len(), "one rclone copyto per object");
    for args in &runs {
        assert_eq!(args[0], "copyto");
        let key = args[2].strip_prefix("s3:my-bucket/").expect(&args[2]);
        let o = by_key[key];
        assert_eq!(args[1], format!("{dir}/{}", o["file"].as_str().unwrap()));
        let headers: Vec<String> = flags(&args[3..])
            .into_iter()
            .map(|(flag, h)| {
                assert_eq!(flag, "--header-upload");
                h
            })
            .collect();
        let mut want = vec![format!(
            "Content-Type: {}",
            o["content_type"].as_str().unwrap()
        )];
        if let Some(e) = o["content_encoding"].as_str() {
            want.push(format!("Content-Encoding: {e}"));
        }
        want.push(format!(
            "Cache-Control: {}",
            o["cache_control"].as_str().unwrap()
        ));
        for (name, value) in o["metadata"].as_object().unwrap() {
            let title: Vec<String> = name
                .split('-')
                .map(|w| w[..1].to_uppercase() + &w[1..])
                .collect();
            want.push(format!(
                "X-Amz-Meta-{}: {}",
                title.join("-"),
                value.as_str().unwrap()
            ));
        }
        assert_eq!(headers, want, "{key}");
    }
}

/// Issue #29: `objects` took a `\\` in a name for a folder, so
/// `x\\..\\..\\secret.txt` was uploaded from outside DIR
/// (`aws s3 cp DIR/x/../../secret.txt`) and `a\\b.js` replaced the real
/// `a/b.js`; a link to a file outside DIR was uploaded though `precompress
/// serve` answers 404 for it. Now every file the script uploads lies in DIR,
/// the real `a/b.js` is uploaded as itself, and what serve does not send is
/// not listed (a link to a file in DIR, which serve sends, is).
#[cfg(unix)]
#[test]
fn nothing_outside_dir_is_uploaded_and_a_backslash_is_no_folder() {
    let (g, site) = site_with_deltas();
    std::fs::write(g.path().join("secret.txt"), "SECRET=1\n").unwrap();
    for (name, text) in [
        ("x\\..\\..\\secret.txt", "x"),
        ("..\\secret.txt", "x"),
        ("a\\b.js", "the impostor"),
        ("a/b.js", "the real one"),
    ] {
        write(&site, name, text);
    }
    std::os::unix::fs::symlink(g.path().join("secret.txt"), site.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink("robots.txt", site.join("alias.txt")).unwrap();

    let out = precompress(&[
        "objects".as_ref(),
        site.as_os_str(),
        "--format".as_ref(),
        "aws".as_ref(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let runs = run_script(g.path(), "aws", &ok(&out), "BUCKET", "b");
    let canonical_site = site.canonicalize().unwrap();
    let mut uploaded = BTreeMap::new();
    for args in &runs {
        let local = Path::new(&args[2]);
        let real = local.canonicalize().unwrap();
        assert!(
            real.starts_with(&canonical_site),
            "{} is outside DIR",
            args[2]
        );
        let key = args[3].strip_prefix("s3://b/").unwrap().to_string();
        assert!(uploaded
            .insert(key, std::fs::read(local).unwrap())
            .is_none());
    }
    assert_eq!(uploaded["a/b.js"], b"the real one");
    assert_eq!(uploaded["alias.txt"], b"User-agent: *\n");
    assert!(!uploaded.contains_key("leak.txt"));
    for said in [
        "skipped \"a\\\\b.js\": a name no URL path can hold",
        "skipped \"x\\\\..\\\\..\\\\secret.txt\": a name no URL path can hold",
        "skipped ..\\secret.txt: a dot-file",
        "skipped leak.txt: a link that leads out of DIR",
    ] {
        assert!(err.contains(said), "no {said:?} in {err}");
    }

    // precompress serve agrees: the link in DIR is served, the one out is not.
    let server = serve_util::start_precompress(&site, &[]);
    assert_eq!(serve_util::get(server.addr, "/alias.txt", None).status, 200);
    assert_eq!(serve_util::get(server.addr, "/leak.txt", None).status, 404);
    assert_eq!(serve_util::get(server.addr, "/a%5Cb.js", None).status, 400);
    assert_eq!(
        serve_util::get(server.addr, "/a/b.js", None).body,
        b"the real one"
    );
}

#[test]
fn a_hostile_manifest_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    write(&site, "a.js", "x");
    let manifest = site.join("precompress-manifest.json");
    std::fs::write(
        &manifest,
        r#"{"version": 1, "generator": "t", "settings": {}, "files": {"../etc/passwd": {"blake3": "00", "content_type": "text/plain", "encodings": [], "etag": "\"x\"", "sha256": "x", "size": 1, "skipped": {}}}}"#,
    )
    .unwrap();
    for extra in [
        &[][..],
        &["--edge", "cloudfront"][..],
        &["--format", "aws"][..],
    ] {
        let mut args: Vec<&std::ffi::OsStr> = vec!["objects".as_ref(), site.as_os_str()];
        args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
        let out = precompress(&args);
        assert_eq!(out.status.code(), Some(1), "{extra:?}");
        assert!(
            out.stdout.is_empty(),
            "nothing to upload on a refused manifest"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "{}: invalid manifest: file \"../etc/passwd\"",
                manifest.display()
            )),
            "{err}"
        );
    }
}

#[test]
fn files_the_manifest_does_not_describe_are_plain_objects() {
    let (_g, site) = site_with_deltas();
    write(&site, "late/notes.txt", "added after the run\n");
    write(&site, "late/photo.png", "not really a png");
    write(
        &site,
        "robots.txt.gz",
        "a variant the manifest does not list",
    );
    write(&site, ".env", "SECRET=1\n");
    write(&site, ".git/config", "[core]\n");
    let out = precompress(&["objects".as_ref(), site.as_os_str()]);
    let objects: Vec<Value> = ok(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let err = String::from_utf8_lossy(&out.stderr);
    let get = |file: &str| objects.iter().find(|o| o["file"] == file);
    for (file, ty) in [
        ("late/notes.txt", "text/plain; charset=utf-8"),
        ("late/photo.png", "image/png"),
    ] {
        let o = get(file).unwrap_or_else(|| panic!("{file} not listed"));
        assert_eq!(o["content_type"], ty);
        assert_eq!(o["cache_control"], "no-cache");
        assert_eq!(o["content_encoding"], Value::Null);
        assert_eq!(o["etag"], Value::Null);
        assert_eq!(o["metadata"], serde_json::json!({}));
    }
    for gone in [
        "robots.txt.gz",
        ".env",
        ".git/config",
        "precompress-manifest.json",
    ] {
        assert!(get(gone).is_none(), "{gone} listed");
    }
    assert!(
        err.contains("skipped robots.txt.gz: a variant's name beside robots.txt"),
        "{err}"
    );
    assert!(err.contains("skipped .env: a dot-file"), "{err}");
}

#[test]
fn the_edge_functions_fit_and_a_site_past_10_kb_is_refused() {
    let (_g, site) = site_with_deltas();
    let edge = |site: &Path, f: &str| {
        precompress(&[
            "objects".as_ref(),
            site.as_os_str(),
            "--edge".as_ref(),
            f.as_ref(),
        ])
    };
    let request = ok(&edge(&site, "cloudfront"));
    assert!(request.starts_with("// precompress "), "{request}");
    assert!(request.len() <= 10 * 1024, "{} bytes", request.len());
    assert!(request.contains("function handler("));
    assert!(request.contains(&format!("\"{}\"", SCRIPT_2.rsplit('/').next().unwrap())));
    let response = ok(&edge(&site, "cloudfront-response"));
    assert!(response.contains("x-amz-meta-precompress-"), "{response}");

    // 400 pages (each routed, for /name and /name/): more than 10 KB of routes.
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big");
    for i in 0..400 {
        write(
            &big,
            &format!("pages/a-page-with-a-rather-long-name-{i}.html"),
            "<p>hi</p>",
        );
    }
    ok(&precompress(&[
        "--no-config".as_ref(),
        "-q".as_ref(),
        big.as_os_str(),
    ]));
    let out = edge(&big, "cloudfront");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{}: the CloudFront Function for its 400 negotiated files would be ",
            big.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("over CloudFront Functions' 10 KB limit (10240 bytes)"),
        "{err}"
    );
}
