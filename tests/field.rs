//! Deltas as deployed: a site served under a base path (`--base /sub/`, as
//! every GitHub Pages project site is), and an atomic symlink deploy
//! (`ln -sfn release-2 current`) under a running `precompress serve`. Before
//! the fix the base was unknown (patterns matched `/assets/...` for files at
//! `/sub/assets/...`, so Chromium never offered a dictionary), and the server
//! kept serving release 1 after the swap. The fast tier; the same deltas
//! served by nginx and Caddy are in `tests/field_servers.rs`.

mod serve_util;

use std::path::Path;

use serve_util::field::*;
#[allow(unused_imports)]
use serve_util::*;

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
    copy_dir(&from, dist);
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

/// A Nuxt-like release `n` (1, 2, 3) in `dir`: in `_nuxt/`, chunks named by
/// a hash only: a vendor library that imports nothing and never changes
/// (the largest), an entry that lists the pages and holds a build id (it
/// changes on every release), and two pages that import the entry (so their
/// bytes change with its name), the first edited in release 2, the second in
/// release 3. Returns the vendor's, the entry's and the pages' paths.
fn nuxt_like_release(dir: &Path, n: usize) -> (String, String, Vec<String>) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("_nuxt")).unwrap();
    let hashed = |content: &str| -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let h = blake3::hash(content.as_bytes());
        let name: String = h.as_bytes()[..8]
            .iter()
            .map(|b| A[*b as usize % 64] as char)
            .collect();
        format!("_nuxt/{name}.js")
    };
    let code = |tag: &str, lines: usize, edit: Option<usize>| -> String {
        (0..lines)
            .map(|f| {
                let word = &blake3::hash(format!("{tag}-{f}").as_bytes()).to_hex()[..12];
                let tweak = if edit == Some(f) { " + 1" } else { "" };
                format!("export function {tag}{f}(s) {{ return s.items.filter((x) => x.id > {f}{tweak}).map((x) => x.label + '{word}'); }}\n")
            })
            .collect()
    };
    let vendor_body = code("v", 400, None);
    let vendor = hashed(&vendor_body);
    // Each page's own code; its name follows it (the entry's name is not known yet).
    let page_code: Vec<String> = (0..2)
        .map(|p| code(&format!("p{p}_"), 60, (n > p + 1).then_some(10 + p)))
        .collect();
    let pages: Vec<String> = page_code
        .iter()
        .map(|c| hashed(&format!("{n}{c}")))
        .collect();
    let entry_body = format!(
        "import{{v0}}from\"./{}\";const build=\"build-{n}\";const routes=[()=>import(\"./{}\"),()=>import(\"./{}\")];\n{}",
        &vendor[6..],
        &pages[0][6..],
        &pages[1][6..],
        code("e", 200, None)
    );
    let entry = hashed(&entry_body);
    for (path, body) in [(&vendor, vendor_body.clone()), (&entry, entry_body)]
        .into_iter()
        .chain(
            pages
                .iter()
                .zip(&page_code)
                .map(|(p, c)| (p, format!("import{{e0}}from\"./{}\";\n{c}", &entry[6..]))),
        )
    {
        std::fs::write(dir.join(path), body).unwrap();
    }
    std::fs::write(
        dir.join("index.html"),
        format!(
            "<!doctype html><title>r{n}</title><script type=module src=\"/{entry}\"></script>\n"
        ),
    )
    .unwrap();
    (vendor, entry, pages)
}

/// Three releases of a Nuxt-like build, the earlier ones found through
/// `--cache-dir` and through `--dictionary-from` alike, with no dictionary a
/// page links (`--shared-dictionary off`: a first visit fetches nothing
/// more): the entry marked with the folder's pattern and nothing else, and
/// each release's chunks with deltas against the entry of the release
/// before, which a returning visitor's requests offer.
#[test]
fn hash_only_chunks_get_deltas_against_the_chunk_marked_for_their_folder_over_three_releases() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    for via_store in [true, false] {
        let mut previous: Option<(std::path::PathBuf, String)> = None;
        let mut folders: Vec<std::path::PathBuf> = Vec::new();
        for n in 1..=3 {
            let dist = if via_store {
                tmp.path().join("dist")
            } else {
                tmp.path().join(format!("r{n}"))
            };
            let (vendor, entry, pages) = nuxt_like_release(&dist, n);
            let mut args: Vec<&std::ffi::OsStr> = vec![
                "--no-config".as_ref(),
                "--json".as_ref(),
                "--shared-dictionary".as_ref(),
                "off".as_ref(),
                dist.as_os_str(),
            ];
            if via_store {
                args.extend(["--cache-dir".as_ref(), cache.as_os_str()]);
            }
            for f in &folders {
                args.extend(["--dictionary-from".as_ref(), f.as_os_str()]);
            }
            let out = precompress(&args);
            ok(&out);
            let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let first = &report["run"]["first_visit"];
            assert_eq!(first["linked"], serde_json::json!([]), "{first}");
            assert_eq!(
                (first["groups"].as_u64(), first["grouped"].as_u64()),
                (Some(1), Some(4))
            );
            let m = manifest(&dist);
            assert!(m["shared_dictionary"].is_null(), "n={n}");
            assert_eq!(
                m["files"][&entry]["use_as_dictionary"],
                "match=\"/_nuxt/*\""
            );
            for other in pages.iter().chain([&vendor]) {
                assert!(m["files"][other]["use_as_dictionary"].is_null(), "{other}");
            }
            if let Some((old_dir, old_entry)) = &previous {
                let want = available(&std::fs::read(old_dir.join(old_entry)).unwrap());
                for key in pages.iter().chain([&entry]) {
                    let deltas = m["files"][key]["deltas"].as_array().unwrap();
                    assert!(
                        deltas.iter().any(|d| d["dictionary"] == want.as_str()),
                        "n={n} {key}: {deltas:?}"
                    );
                }
                // The entry, a small edit and new names away, comes as a small delta.
                let entry_deltas = m["files"][&entry]["deltas"].as_array().unwrap();
                let smallest = entry_deltas
                    .iter()
                    .filter(|d| d["dictionary"] == want.as_str())
                    .map(|d| d["size"].as_u64().unwrap())
                    .min()
                    .unwrap();
                let br = m["files"][&entry]["encodings"][0]["size"].as_u64().unwrap();
                assert!(smallest * 10 < br, "n={n}: delta {smallest} B, br {br} B");
            }
            if via_store {
                check_with_store(&dist, &cache);
            } else {
                let mut check: Vec<&std::ffi::OsStr> = vec!["check".as_ref(), dist.as_os_str()];
                for f in &folders {
                    check.extend(["--dictionary-from".as_ref(), f.as_os_str()]);
                }
                ok(&precompress(&check));
            }
            if n == 3 {
                // Served: no Link on the page; the entry marked, and its
                // delta for a browser that holds the last release's entry.
                let s = start_precompress(&dist, &[]);
                assert_eq!(get(s.addr, "/", Some("br")).header("link"), None);
                let r = get(s.addr, &format!("/{entry}"), Some("br"));
                assert_eq!(r.header("use-as-dictionary"), Some("match=\"/_nuxt/*\""));
                let (old_dir, old_entry) = previous.as_ref().unwrap();
                let want = available(&std::fs::read(old_dir.join(old_entry)).unwrap());
                for key in pages.iter().chain([&entry]) {
                    let coding = delta_coding(s.addr, &format!("/{key}"), &want);
                    assert!(coding == "dcb" || coding == "dcz", "{key}: {coding}");
                }
            }
            if !via_store {
                folders.push(dist.clone());
            }
            // The store's copy of release n is what the next run reads, not DIR.
            let keep = tmp.path().join(format!("kept-{via_store}-{n}"));
            copy_dir(&dist, &keep);
            previous = Some((keep, entry));
        }
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

/// [`hash_only_release`] 1 in `tmp/build`, precompressed with
/// `--shared-dictionary on`: the folder and its shared dictionary's path.
fn first_hash_only_release(tmp: &Path) -> (std::path::PathBuf, String) {
    let dist = tmp.join("build");
    hash_only_release(&dist, 1);
    ok(&run(&[
        dist.as_os_str(),
        "--shared-dictionary".as_ref(),
        "on".as_ref(),
    ]));
    let d = manifest(&dist)["shared_dictionary"]
        .as_str()
        .unwrap()
        .to_string();
    (dist, d)
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
        "--shared-dictionary".as_ref(),
        "on".as_ref(),
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

/// A documentation-like site of `n` pages: each has the same layout (head,
/// a navigation listing every page, a footer: what a site generator writes)
/// around a body of its own, and the release's version in its title.
fn docs_site(dir: &Path, n: usize, version: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let nav: String = (0..n)
        .map(|i| format!("<li class=\"toctree-l1\"><a class=\"reference internal\" href=\"p{i:02}.html\">Chapter {i}: the part of the guide on topic number {i}</a></li>\n"))
        .collect();
    let words = [
        "server", "client", "request", "header", "cache", "release", "bundle", "module", "import",
        "export", "string", "number", "folder", "option", "value", "error",
    ];
    for i in 0..n {
        // A body of its own: a sequence of words no other page has in that order.
        let mut x = 0x9e37_79b9_u32.wrapping_mul(i as u32 + 1);
        let body: String = (0..300)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                words[(x % 16) as usize]
            })
            .collect::<Vec<_>>()
            .join(" ");
        let page = format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Chapter {i} - Guide {version} documentation</title>\n<link rel=\"stylesheet\" href=\"_static/pygments.css\"><link rel=\"stylesheet\" href=\"_static/theme.css\"><script src=\"_static/doctools.js\"></script>\n</head><body><div class=\"header\"><a href=\"index.html\">Guide {version}</a> <form class=\"search\" action=\"search.html\"><input type=\"text\" name=\"q\"><input type=\"submit\" value=\"Go\"></form></div>\n<div class=\"sidebar\"><h3>Navigation</h3><ul>\n{nav}</ul></div>\n<div class=\"body\" role=\"main\"><h1>Chapter {i}</h1><p>{body}</p></div>\n<div class=\"footer\">&copy; Copyright 2026, the Guide authors. Last updated on Dec 01, 2026. Created using Sphinx 7.2.6.</div></body></html>\n"
        );
        std::fs::write(dir.join(format!("p{i:02}.html")), page).unwrap();
    }
}

#[test]
fn pages_sharing_a_layout_get_a_documents_dictionary_and_deltas_against_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (site, cache) = (tmp.path().join("site"), tmp.path().join("cache"));
    // `on`: made where it pays back, whatever a first visit fetches at
    // idle (`auto` holds that to 2% of a first visit: the next test).
    let run_json = |dir: &Path| {
        let out = run(&[
            "--json".as_ref(),
            "--shared-dictionary".as_ref(),
            "on".as_ref(),
            dir.as_os_str(),
            "--cache-dir".as_ref(),
            cache.as_os_str(),
        ]);
        ok(&out);
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    docs_site(&site, 24, "1.0");
    let report = run_json(&site);
    let m1 = manifest(&site);
    let d1 = m1["documents_dictionary"].as_str().unwrap().to_string();
    assert!(d1.starts_with("precompress-documents-"), "{d1}");
    let estimate = &report["run"]["documents_dictionary"];
    assert_eq!(estimate["path"], d1.as_str());
    assert!(
        estimate["payback_pages"].as_f64().unwrap() <= 10.0,
        "{estimate}"
    );
    assert_eq!(
        m1["files"][&d1]["use_as_dictionary"],
        "match=\"/*\", match-dest=(\"document\" \"\")"
    );
    // Every page has a delta against it, far smaller than its brotli bytes.
    let dict1 = std::fs::read(site.join(&d1)).unwrap();
    let want1 = available(&dict1);
    let smallest = |m: &serde_json::Value, key: &str, dict: &str| -> (u64, u64) {
        let a = &m["files"][key];
        let br = a["encodings"][0]["size"].as_u64().unwrap();
        let d = a["deltas"]
            .as_array()
            .unwrap_or_else(|| panic!("{key}: no deltas: {a:#}"))
            .iter()
            .filter(|d| d["dictionary"] == dict)
            .map(|d| d["size"].as_u64().unwrap())
            .min()
            .unwrap_or_else(|| panic!("{key}: no delta against {dict}"));
        (d, br)
    };
    for i in 0..24 {
        let (d, br) = smallest(&m1, &format!("p{i:02}.html"), &want1);
        assert!(d * 10 < br * 7, "p{i:02}.html: delta {d} B, br {br} B");
    }

    // Release 2, from the store: every page changed (the version), and each
    // has a delta against the dictionary a visitor of release 1 holds, as
    // has the new dictionary itself.
    docs_site(&site, 24, "1.1");
    run_json(&site);
    let m2 = manifest(&site);
    // The published schema knows the field.
    let schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo().join("docs/manifest.schema.json")).unwrap())
            .unwrap();
    for key in m2.as_object().unwrap().keys() {
        assert!(
            schema["properties"].get(key).is_some(),
            "{key} not in the schema"
        );
    }
    let d2 = m2["documents_dictionary"].as_str().unwrap().to_string();
    assert_ne!(d1, d2);
    assert!(!site.join(&d1).exists());
    for key in ["p00.html", "p13.html", d2.as_str()] {
        let (d, br) = smallest(&m2, key, &want1);
        assert!(d * 10 < br * 7, "{key}: delta {d} B, br {br} B");
    }
    check_with_store(&site, &cache);

    // serve links it from every page, and a navigation offering it gets a delta.
    let s = start_precompress(&site, &[]);
    let page = get(s.addr, "/p03.html", Some("br"));
    assert_eq!(
        page.header("link"),
        Some(format!("</{d2}>; rel=\"compression-dictionary\"").as_str())
    );
    let want2 = available(&std::fs::read(site.join(&d2)).unwrap());
    for dict in [&want1, &want2] {
        let coding = delta_coding(s.addr, "/p05.html", dict);
        assert!(coding == "dcb" || coding == "dcz", "{coding}");
    }
    drop(s);

    // check vouches for the field: naming a page instead fails, naming it.
    let path = site.join("precompress-manifest.json");
    let mut edited = m2.clone();
    edited["documents_dictionary"] = "p00.html".into();
    std::fs::write(&path, serde_json::to_vec(&edited).unwrap()).unwrap();
    let out = precompress(&["check".as_ref(), site.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("documents_dictionary names \"p00.html\""),
        "{said}"
    );
}

/// Issue #45: what a first visit fetches at idle is at most 2% of it. With
/// `--shared-dictionary auto` (the default) a documents dictionary that
/// pays back but costs a first visit more than that is not made, and the
/// summary and `--json` say the budget, the page it was measured on and
/// why.
#[test]
fn auto_makes_no_documents_dictionary_a_first_visit_cannot_afford_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    docs_site(&site, 24, "1.0");
    let out = run(&["--json".as_ref(), site.as_os_str()]);
    ok(&out);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run_ = &report["run"];
    assert!(manifest(&site)["documents_dictionary"].is_null());
    let budget = run_["first_visit"]["idle_budget"].as_u64().unwrap();
    assert_eq!(run_["first_visit"]["landing_page"], "p00.html");
    let d = &run_["documents_dictionary"];
    assert!(d["payback_pages"].as_f64().unwrap() <= 10.0, "{d}");
    assert_eq!(
        d["idle_left"].as_u64(),
        Some(budget),
        "no code dictionary here"
    );
    assert!(d["dictionary_br_bytes"].as_u64().unwrap() > budget, "{d}");
    assert_eq!(run_["first_visit"]["linked_bytes"], 0);
    let out = precompress(&["--no-config".as_ref(), site.as_os_str()]);
    ok(&out);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("no documents dictionary: it pays back after")
            && summary.contains("left of its budget (--shared-dictionary on makes it"),
        "{summary}"
    );
}

#[test]
fn pages_with_nothing_in_common_get_no_documents_dictionary_and_the_summary_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    // Pages of unrelated bytes: no layout for a dictionary to hold.
    let mut x: u64 = 0x1234_5678_9abc_def1;
    for i in 0..12 {
        let body: String = (0..3000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (b'a' + (x % 26) as u8) as char
            })
            .collect();
        std::fs::write(
            site.join(format!("p{i:02}.html")),
            format!("<p>{body}</p>\n"),
        )
        .unwrap();
    }
    let out = precompress(&["--no-config".as_ref(), site.as_os_str()]);
    ok(&out);
    assert!(manifest(&site)["documents_dictionary"].is_null());
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("no documents dictionary: it never pays back")
            && summary.contains("is made only within 10"),
        "{summary}"
    );
    let left: Vec<_> = std::fs::read_dir(&site)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("precompress-documents-")
        })
        .collect();
    assert!(left.is_empty());
}
