//! Deltas as deployed: a site served under a base path (`--base /sub/`, as
//! every GitHub Pages project site is), and an atomic symlink deploy
//! (`ln -sfn release-2 current`) under a running `precompress serve`. Before
//! the fix the base was unknown (patterns matched `/assets/...` for files at
//! `/sub/assets/...`, so Chromium never offered a dictionary), and the server
//! kept serving release 1 after the swap.

mod serve_util;

use std::path::Path;

#[allow(unused_imports)]
use serve_util::*;

fn run(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let mut all: Vec<&std::ffi::OsStr> = vec!["--no-config".as_ref(), "-q".as_ref()];
    all.extend_from_slice(args);
    precompress(&all)
}

fn ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "precompress failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_base_path_is_in_every_pattern_and_url_and_serve_answers_under_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (r1, r2, old_js, new_js) = two_releases(tmp.path());
    ok(&run(&[r1.as_os_str(), "--base".as_ref(), "/sub".as_ref()]));
    ok(&run(&[
        r2.as_os_str(),
        "--base".as_ref(),
        "/sub/".as_ref(),
        "--dictionary-from".as_ref(),
        r1.as_os_str(),
    ]));
    let m = manifest(&r2);
    assert_eq!(m["base"], "/sub/");
    let asset = &m["files"][new_js];
    assert_eq!(asset["use_as_dictionary"], "match=\"/sub/assets/app-*.js\"");
    assert_eq!(asset["deltas"].as_array().unwrap().len(), 2, "{asset:#}");

    let s = start_precompress(&r2, &[]);
    let r = get(s.addr, &format!("/sub/{new_js}"), Some("br"));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), Some("br"));
    assert_eq!(
        r.header("use-as-dictionary"),
        Some("match=\"/sub/assets/app-*.js\"")
    );
    // The delta a browser holding release 1 asks for, at the URL it sees.
    let old = std::fs::read(r1.join(old_js)).unwrap();
    let dict = available(&old);
    let coding = delta_coding(s.addr, &format!("/sub/{new_js}"), &dict);
    assert!(coding == "dcb" || coding == "dcz", "{coding}");
    // Outside the base nothing is served; the base itself redirects to its slash.
    assert_eq!(get(s.addr, &format!("/{new_js}"), Some("br")).status, 404);
    let r = get(s.addr, "/sub", None);
    assert_eq!((r.status, r.header("location")), (301, Some("/sub/")));
    assert_eq!(get(s.addr, "/sub/", None).status, 200);
    assert_eq!(get(s.addr, "/subway/", None).status, 404);

    // The server maps take the base from the manifest; another base warns.
    let out = precompress(&["nginx-map".as_ref(), r2.as_os_str()]);
    ok(&out);
    let conf = String::from_utf8_lossy(&out.stdout);
    assert!(conf.contains(&format!("\"/sub/{new_js}\"")), "{conf}");
    assert!(!conf.contains(&format!("\"/{new_js}\"")), "{conf}");
    let out = precompress(&[
        "caddy-map".as_ref(),
        r2.as_os_str(),
        "--base".as_ref(),
        "/other/".as_ref(),
    ]);
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("written for base /sub/") && err.contains("--base /other/"),
        "{err}"
    );
}

fn available(bytes: &[u8]) -> String {
    let sha: [u8; 32] =
        sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(bytes)).into();
    precompressor::dictionary::available_dictionary(&sha)
}

#[test]
fn a_base_that_is_not_a_path_from_the_root_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (r1, _, _, _) = two_releases(tmp.path());
    for bad in ["sub/", "./", "/a b/"] {
        let out = run(&[r1.as_os_str(), "--base".as_ref(), bad.as_ref()]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("{bad:?}")), "{bad}: {err}");
    }
    assert!(!r1.join("precompress-manifest.json").exists());
    // In precompress.toml too.
    std::fs::write(r1.join("precompress.toml"), "base = \"app/\"\n").unwrap();
    let out = precompress(&["-q".as_ref(), r1.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"app/\""));
    std::fs::write(r1.join("precompress.toml"), "base = \"/app\"\n").unwrap();
    ok(&precompress(&["-q".as_ref(), r1.as_os_str()]));
    assert_eq!(manifest(&r1)["base"], "/app/");
}

/// `ln -sfn` is not atomic; a deploy makes the new link beside and renames it.
fn swap_link(link: &Path, to: &Path) {
    let tmp = link.with_extension("new");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(to, &tmp).unwrap();
    std::fs::rename(&tmp, link).unwrap();
}

#[test]
fn serve_follows_a_swapped_symlink_to_the_next_release_and_its_deltas() {
    let tmp = tempfile::tempdir().unwrap();
    let (r1, r2, old_js, new_js) = two_releases(tmp.path());
    ok(&run(&[r1.as_os_str()]));
    ok(&run(&[
        r2.as_os_str(),
        "--dictionary-from".as_ref(),
        r1.as_os_str(),
    ]));
    let current = tmp.path().join("current");
    std::os::unix::fs::symlink(&r1, &current).unwrap();
    let s = start_precompress(&current, &[]);
    assert_eq!(get(s.addr, &format!("/{old_js}"), Some("br")).status, 200);
    assert_eq!(get(s.addr, &format!("/{new_js}"), Some("br")).status, 404);
    let first = get(s.addr, "/", None);
    assert!(String::from_utf8_lossy(&first.body).contains("release 1"));

    swap_link(&current, &r2);
    let r = get(s.addr, "/", None);
    assert!(
        String::from_utf8_lossy(&r.body).contains("release 2"),
        "still release 1"
    );
    let r = get(s.addr, &format!("/{new_js}"), Some("br"));
    assert_eq!((r.status, r.header("content-encoding")), (200, Some("br")));
    assert!(decode("br", &r.body) == std::fs::read(r2.join(new_js)).unwrap());
    assert_eq!(get(s.addr, &format!("/{old_js}"), Some("br")).status, 404);
    let old = std::fs::read(r1.join(old_js)).unwrap();
    let dict = available(&old);
    let coding = delta_coding(s.addr, &format!("/{new_js}"), &dict);
    assert!(
        coding == "dcb" || coding == "dcz",
        "no delta after the swap: {coding}"
    );

    // And back: a rollback is a swap too.
    swap_link(&current, &r1);
    assert_eq!(get(s.addr, &format!("/{old_js}"), Some("br")).status, 200);
    assert_eq!(get(s.addr, &format!("/{new_js}"), Some("br")).status, 404);
}

/// Release `n` of `two_releases`' app, built into `dist` as Vite does: the
/// folder emptied first.
fn build_into(dist: &Path, tmp: &Path, n: usize) -> String {
    let _ = std::fs::remove_dir_all(dist);
    let (r1, r2, js1, js2) = two_releases(&tmp.join(format!("src-{n}")));
    let (from, js) = if n == 1 { (r1, js1) } else { (r2, js2) };
    copy_dir_for_tests(&from, dist);
    if n == 3 {
        // One more small change, under a new hash.
        let body = std::fs::read_to_string(dist.join(js)).unwrap();
        std::fs::remove_file(dist.join(js)).unwrap();
        let js3 = "assets/app-9c8d7e6f.js";
        std::fs::write(dist.join(js3), body.replace("widget 7'", "widget seven'")).unwrap();
        return js3.to_string();
    }
    js.to_string()
}

#[test]
fn the_release_store_gives_deltas_with_no_folder_kept_by_hand() {
    let tmp = tempfile::tempdir().unwrap();
    let (dist, cache) = (tmp.path().join("dist"), tmp.path().join("cache"));
    let with_cache = |extra: &[&str]| {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            dist.as_os_str(),
            "--cache-dir".as_ref(),
            cache.as_os_str(),
            "--json".as_ref(),
        ];
        args.extend(extra.iter().map(|s| std::ffi::OsStr::new(*s)));
        let out = precompress(&[&["--no-config".as_ref()][..], &args].concat());
        ok(&out);
        out
    };
    let deltas_of = |js: &str| -> Vec<String> {
        let m = manifest(&dist);
        m["files"][js]["deltas"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|d| d["dictionary_path"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    // The first release: nothing stored, a normal run.
    let js1 = build_into(&dist, tmp.path(), 1);
    with_cache(&[]);
    assert!(deltas_of(&js1).is_empty());
    // Release 2 into an emptied folder: deltas against release 1 from the store.
    let js2 = build_into(&dist, tmp.path(), 2);
    with_cache(&[]);
    assert_eq!(
        deltas_of(&js2),
        vec![js1.clone(), js1.clone()],
        "a dcb and a dcz"
    );
    // `check` decodes them with the store's copy (the cache given as a run gets it).
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("precompress"))
        .args(["check", "--json"])
        .arg(&dist)
        .env("PRECOMPRESS_CACHE_DIR", &cache)
        .output()
        .unwrap();
    ok(&out);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["deltas_decoded"], 2, "{report:#}");
    // Release 3: deltas against both earlier releases, for a visitor of either.
    let js3 = build_into(&dist, tmp.path(), 3);
    with_cache(&[]);
    let mut d = deltas_of(&js3);
    d.sort();
    d.dedup();
    assert_eq!(d, vec![js1.clone(), js2.clone()]);
    // A second run on the same build keeps what it made.
    with_cache(&[]);
    assert_eq!(deltas_of(&js3).len(), 4);

    // A corrupt store is a warning and starts again; the run is a normal one.
    let index = cache.join("releases/v1/index.json");
    std::fs::write(&index, "{ corrupt").unwrap();
    build_into(&dist, tmp.path(), 2);
    let out = with_cache(&[]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = report["run"]["warnings"].to_string();
    assert!(warnings.contains("started again"), "{warnings}");
    assert!(deltas_of(&js2).is_empty());
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&index).unwrap()).unwrap();
    assert_eq!(stored["releases"].as_array().unwrap().len(), 1);
}

/// A SvelteKit-like release `n`: chunks named by their hash only, an entry
/// that imports them, and a page. Release 2 changes a few lines of one chunk
/// (so its name changes) and the entry's imports.
fn hash_only_release(dir: &Path, n: usize) -> Vec<String> {
    let _ = std::fs::remove_dir_all(dir);
    let chunks = [
        "_app/immutable/chunks/Bx7kQ2pA.js",
        "_app/immutable/chunks/D4qLm9Zr.js",
    ];
    let changed = if n == 1 {
        "_app/immutable/chunks/Cc3nT8vW.js"
    } else {
        "_app/immutable/chunks/Ek5yR1sU.js"
    };
    let mut names = Vec::new();
    for (i, name) in chunks.iter().chain([&changed]).enumerate() {
        let mut js = String::new();
        for f in 0..120 {
            let tweak = if i == 2 && n == 2 && f % 40 == 7 {
                " + 2"
            } else {
                ""
            };
            // Varied text, as real code is: a hash per line.
            let word = blake3::hash(format!("{i}-{f}").as_bytes()).to_hex()[..12].to_string();
            js.push_str(&format!("export function c{i}_{f}(s) {{ return s.items.filter((x) => x.id > {f}{tweak}).map((x) => x.label + '{word}'); }}\n"));
        }
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, js).unwrap();
        names.push(name.to_string());
    }
    std::fs::write(
        dir.join("index.html"),
        format!(
            "<!doctype html><title>r{n}</title><script type=module src=\"/{changed}\"></script>\n"
        ),
    )
    .unwrap();
    names
}

#[test]
fn hash_only_chunks_get_deltas_against_the_shared_dictionary_a_page_links() {
    let tmp = tempfile::tempdir().unwrap();
    let (dist, cache) = (tmp.path().join("build"), tmp.path().join("cache"));
    let run_cached = || {
        ok(&run(&[
            dist.as_os_str(),
            "--cache-dir".as_ref(),
            cache.as_os_str(),
        ]))
    };
    hash_only_release(&dist, 1);
    run_cached();
    let m1 = manifest(&dist);
    let d1 = m1["shared_dictionary"].as_str().unwrap().to_string();
    assert!(
        d1.starts_with("_app/immutable/chunks/precompress-dictionary-"),
        "{d1}"
    );
    assert_eq!(
        m1["files"][&d1]["use_as_dictionary"],
        "match=\"/_app/immutable/chunks/*\""
    );
    // Members are not marked one by one: their common pattern would win.
    assert!(m1["files"]["_app/immutable/chunks/Bx7kQ2pA.js"]["use_as_dictionary"].is_null());
    let dict1 = std::fs::read(dist.join(&d1)).unwrap();

    let names = hash_only_release(&dist, 2);
    run_cached();
    let m2 = manifest(&dist);
    let d2 = m2["shared_dictionary"].as_str().unwrap().to_string();
    assert_ne!(d1, d2);
    assert!(
        !dist.join(&d1).exists(),
        "the old dictionary is not in the new release"
    );
    let want = available(&dict1);
    // The changed chunk, under its new name, and the new dictionary itself
    // come as deltas against the old dictionary the browser holds.
    for key in [names[2].as_str(), d2.as_str()] {
        let deltas = m2["files"][key]["deltas"].as_array().unwrap();
        assert!(
            deltas.iter().any(|d| d["dictionary"] == want.as_str()),
            "{key}: {deltas:?}"
        );
        let smallest = deltas
            .iter()
            .map(|d| d["size"].as_u64().unwrap())
            .min()
            .unwrap();
        let br = m2["files"][key]["encodings"][0]["size"].as_u64().unwrap();
        assert!(smallest * 5 < br, "{key}: delta {smallest} B, br {br} B");
    }
    ok(
        &std::process::Command::new(assert_cmd::cargo::cargo_bin("precompress"))
            .arg("check")
            .arg(&dist)
            .env("PRECOMPRESS_CACHE_DIR", &cache)
            .output()
            .unwrap(),
    );

    // serve: the page links the dictionary; a browser holding the old one
    // gets the chunk as a delta that decodes to it.
    let s = start_precompress(&dist, &[]);
    let page = get(s.addr, "/", Some("br"));
    assert_eq!(
        page.header("link"),
        Some(format!("</{d2}>; rel=\"compression-dictionary\"").as_str())
    );
    let coding = delta_coding(s.addr, &format!("/{}", names[2]), &want);
    assert!(coding == "dcb" || coding == "dcz", "{coding}");
    let r = get(s.addr, &format!("/{d2}"), Some("br"));
    assert_eq!(
        r.header("use-as-dictionary"),
        Some("match=\"/_app/immutable/chunks/*\"")
    );
    assert!(r.header("cache-control").unwrap().contains("immutable"));
    drop(s);

    // nginx and Caddy, configured by nginx-map and caddy-map, say the same.
    let link = format!("</{d2}>; rel=\"compression-dictionary\"");
    for generator in ["nginx-map", "caddy-map"] {
        let out = precompress(&[generator.as_ref(), dist.as_os_str()]);
        ok(&out);
        let work = tmp.path().join(generator);
        std::fs::create_dir_all(&work).unwrap();
        let config = work.join("generated.conf");
        std::fs::write(&config, &out.stdout).unwrap();
        let server = if generator == "nginx-map" {
            start_nginx_from(
                "nginx-deltas.conf",
                &dist,
                &work,
                &[("@MAPS@", config.to_str().unwrap())],
            )
        } else {
            start_caddy_from(
                "Caddyfile-deltas",
                &dist,
                &work,
                &[("@SNIPPET@", config.to_str().unwrap())],
            )
        };
        let page = get(server.addr, "/", Some("br"));
        assert_eq!(page.header("link"), Some(link.as_str()), "{generator}: /");
        let page = get(server.addr, "/index.html", Some("br"));
        assert_eq!(
            page.header("link"),
            Some(link.as_str()),
            "{generator}: /index.html"
        );
        let r = get(server.addr, &format!("/{}", names[0]), Some("br"));
        assert_eq!(r.header("link"), None, "{generator}: a script gets no Link");
        let coding = delta_coding(server.addr, &format!("/{}", names[2]), &want);
        assert!(coding == "dcb" || coding == "dcz", "{generator}: {coding}");
    }
}

#[test]
fn assets_no_delta_can_reach_are_named_with_why() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dist");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    let js = "export const x = () => 'a line of a script';\n".repeat(40);
    std::fs::write(dir.join("assets/a(1)-D8fKq1nN.js"), &js).unwrap();
    std::fs::write(dir.join("assets/ok-D8fKq1nN.js"), &js).unwrap();
    let out = precompress(&["--no-config".as_ref(), "--json".as_ref(), dir.as_os_str()]);
    ok(&out);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = report["run"]["warnings"].to_string();
    assert!(
        w.contains("1 fingerprinted script(s)")
            && w.contains(
                "assets/a(1)-D8fKq1nN.js (its path holds characters a URL pattern reads specially)"
            ),
        "{w}"
    );
    assert!(!w.contains("assets/ok-"), "{w}");
}

#[test]
fn no_shared_dictionary_makes_none_and_removes_the_one_there() {
    let tmp = tempfile::tempdir().unwrap();
    let (dist, d) = first_hash_only_release(tmp.path());
    assert!(dist.join(&d).is_file());
    std::fs::write(dist.join("precompress.toml"), "shared-dictionary = false\n").unwrap();
    ok(&precompress(&["-q".as_ref(), dist.as_os_str()]));
    assert!(manifest(&dist)["shared_dictionary"].is_null());
    assert!(!dist.join(&d).exists(), "ours, and no longer made: removed");
}

/// [`hash_only_release`] 1 in `tmp/build`, precompressed: the folder and its
/// shared dictionary's path.
fn first_hash_only_release(tmp: &Path) -> (std::path::PathBuf, String) {
    let dist = tmp.join("build");
    hash_only_release(&dist, 1);
    ok(&run(&[dist.as_os_str()]));
    let d = manifest(&dist)["shared_dictionary"]
        .as_str()
        .unwrap()
        .to_string();
    (dist, d)
}

/// The `Content-Encoding` of the asset at `url` for a client that holds the
/// dictionary `dict` (an `Available-Dictionary` value) and accepts deltas.
fn delta_coding(addr: std::net::SocketAddr, url: &str, dict: &str) -> String {
    let r = request(
        addr,
        "GET",
        url,
        &[
            ("Accept-Encoding", "br, dcb, dcz"),
            ("Available-Dictionary", dict),
        ],
    );
    r.header("content-encoding").unwrap_or("-").to_string()
}

#[test]
fn a_dry_run_leaves_the_shared_dictionary_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let (dist, d) = first_hash_only_release(tmp.path());
    let before = std::fs::read(dist.join("precompress-manifest.json")).unwrap();
    let out = precompress(&[
        "--no-config".as_ref(),
        "--json".as_ref(),
        "-n".as_ref(),
        dist.as_os_str(),
    ]);
    ok(&out);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["run"]["removed"],
        serde_json::json!([]),
        "{report:#}"
    );
    assert!(dist.join(&d).is_file());
    assert_eq!(
        std::fs::read(dist.join("precompress-manifest.json")).unwrap(),
        before
    );
}
