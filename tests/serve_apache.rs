//! Apache httpd 2.4 serving `precompress apache-map`'s output, beyond the
//! shared table (`tests/serve_servers.rs`): release 2 of a small app
//! precompressed with `--dictionary-from` release 1, real Apache with
//! Debian's stock modules and mod_deflate on, and raw requests for every
//! `Accept-Encoding` shape negotiate is tested on. `Index::select_with_dictionary`
//! (what `precompress serve` does) is the reference, and Apache must agree
//! with it on every row: q-values, `*`, `identity;q=0`, deltas ranked by
//! weight like any coding. The deltas it sends decode to the new script. The
//! e2e tier: needs Apache (and Chromium and node for a visit across a
//! release); `apache-map` without it is in `tests/server_maps.rs`.

mod serve_util;

use std::path::Path;

use precompressor::serve::{Index, Selection};
use serve_util::browser::{response, sf_sha256, visit_across_a_release, Visit};
use serve_util::servers::{reload_apache, settle_mtimes, start_apache};
use serve_util::*;

const CHROME: &str = "gzip, deflate, br, zstd, dcb, dcz";

fn deploy() -> Deployed {
    deploy_with_deltas("apache-map", |config, live, work| {
        settle_mtimes(live);
        start_apache(live, config, work)
    })
}

/// The items of a list-valued header, in order.
fn items(s: &str) -> Vec<String> {
    s.split(',').map(|i| i.trim().to_string()).collect()
}

#[test]
#[ignore = "e2e tier: needs Apache; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn apache_picks_what_precompress_serve_picks() {
    let site = deploy();
    let dict = site.dictionary();
    let DictionaryForms {
        padded,
        flipped,
        unknown,
        bare,
        listed,
        ..
    } = DictionaryForms::of(&dict);
    let index = Index::load(&site.live, None).unwrap();
    let content_type = site.asset["content_type"].as_str().unwrap();
    let use_as = site.asset["use_as_dictionary"].as_str().unwrap();
    let mut rows: Vec<(Option<&str>, Option<&str>)> = vec![
        (Some(CHROME), Some(&dict)),
        (Some("br, dcb"), Some(&dict)),
        (Some("br, dcz"), Some(&dict)),
        (Some("gzip, DCZ"), Some(&padded)),
        (Some("br, dcb;q=0.5"), Some(&dict)),
        (Some("br;q=0.5, dcb;q=0.6"), Some(&dict)),
        (Some("br, dcb;q=0, dcz;q=0"), Some(&dict)),
        (Some("br, dcb;q=0;x=1"), Some(&dict)),
        (Some("*"), Some(&dict)),
        (Some("identity"), Some(&dict)),
        (None, Some(&dict)),
        (Some(CHROME), Some(&unknown)),
        (Some(CHROME), Some(&flipped)),
        (Some(CHROME), Some(&bare)),
        (Some(CHROME), Some(&listed)),
        (Some(CHROME), Some(":not base64!:")),
    ];
    // negotiate's own table (src/serve/negotiate.rs), without a dictionary.
    for ae in [
        "gzip, deflate, br, zstd",
        "gzip, deflate, br",
        "gzip, deflate",
        "",
        "identity",
        "br;q=0, gzip",
        "br;q=0.5, gzip",
        "br;q=0.5, gzip;q=0.4",
        "gzip;q=0.001",
        "zstd, br",
        "gzip;q=0.9, br;q=0.9, zstd;q=0.9",
        "*;q=0.5, gzip",
        "*, br;q=0",
        "*;q=0, identity",
        "*;q=0, gzip",
        "identity;q=0, gzip",
        "identity;q=1, gzip;q=0.5",
        "gzip;q=0.5",
        "identity, gzip",
        "BR",
        "Gzip;Q=1",
        "x-gzip",
        "ZSTD;q=0, Br;q=0, GZIP",
        "ZSTD;q=0, Br;q=0",
        "deflate, compress",
        "br;q=2, gzip",
        "br;q=abc, gzip",
        "br;q=0.0001, gzip",
        "br;foo=bar, gzip",
        "br;q=1;x=y, gzip",
        "b r, gzip",
        ",,, ;, gzip ,",
        "br;q=, gzip",
        "br;q=0.5.1, gzip;q=0.1",
        "br;q=0, br, gzip",
        " br ;\tq=0.8 ,\tgzip ; q=0.7 ",
        "zstd;q=0.5, br",
        "br;q=0.50, zstd;q=0.5",
    ] {
        rows.push((Some(ae), None));
    }
    let mut etags = std::collections::BTreeMap::new();
    for (ae, ad) in rows {
        let what = format!("{ae:?} {ad:?}");
        let Selection::Found(s) = index.select_with_dictionary(&site.url, ae, ad) else {
            panic!("{what}: the reference refuses")
        };
        let want = s.representation.coding.map(|c| c.token());
        let r = site.get(&site.url, ae, ad);
        assert_eq!(r.status, 200, "{what}: {:?}", r.headers);
        let coding = r.header("content-encoding");
        assert_eq!(coding, want, "{what}: {:?}", r.headers);
        assert!(r.body == site.file_for(coding), "{what}: not the file");
        assert_eq!(
            r.header("content-length"),
            Some(r.body.len().to_string().as_str())
        );
        // The manifest's type on every representation, one of it; no language.
        assert_eq!(header_all(&r, "content-type"), content_type, "{what}");
        assert_eq!(r.header("content-language"), None, "{what}");
        for name in ["Vary", "Cache-Control", "Use-As-Dictionary"] {
            let reference = s.headers.iter().find(|(n, _)| *n == name).unwrap();
            let got = header_all(&r, &name.to_ascii_lowercase());
            assert_eq!(items(&got), items(&reference.1), "{what}: {name}");
        }
        assert_eq!(r.header("use-as-dictionary"), Some(use_as));
        // One strong ETag per body, never shared by two.
        let etag = r.header("etag").expect("ETag").to_string();
        assert!(etag.starts_with('"'), "{what}: {etag}");
        let previous = etags.insert(etag.clone(), coding.map(str::to_string));
        if let Some(p) = previous {
            assert_eq!(p.as_deref(), coding, "{what}: {etag} names two bodies");
        }
        // Ranges only of identity.
        assert_eq!(
            r.header("accept-ranges").is_some(),
            coding.is_none(),
            "{what}"
        );
    }
    assert_eq!(etags.len(), 6, "identity, three variants, two deltas");

    // Nothing acceptable: 406, varying, never stored for long.
    let r = site.get(&site.url, Some("identity;q=0, deflate"), None);
    assert_eq!(r.status, 406);
    assert_eq!(
        items(&header_all(&r, "vary")),
        ["Accept-Encoding", "Available-Dictionary"]
    );
    assert_eq!(header_all(&r, "cache-control"), "no-cache");
}

#[test]
#[ignore = "e2e tier: needs Apache; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn the_deltas_apache_sends_decode_to_the_new_script() {
    assert_deltas_decode(&deploy());
}

/// Apache's own conditional handling, on its own ETags: the 304 a returning
/// browser gets for a delta keeps what the cache needs, and the dates the
/// table's excuses name work when they are valid.
#[test]
#[ignore = "e2e tier: needs Apache; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn apache_answers_conditional_requests_with_its_etags() {
    let site = deploy();
    let dict = site.dictionary();
    let h = [("Accept-Encoding", CHROME), ("Available-Dictionary", &dict)];
    let r = request(site.server.addr, "GET", &site.url, &h);
    let etag = r.header("etag").unwrap().to_string();
    let modified = r.header("last-modified").unwrap().to_string();
    let with = |extra: (&str, &str)| {
        let mut all = h.to_vec();
        all.push(extra);
        request(site.server.addr, "GET", &site.url, &all)
    };
    let r = with(("If-None-Match", &etag));
    assert_eq!(r.status, 304, "{:?}", r.headers);
    assert_eq!(r.header("etag"), Some(etag.as_str()));
    assert_eq!(
        items(&header_all(&r, "vary")),
        ["Accept-Encoding", "Available-Dictionary"]
    );
    assert_eq!(
        header_all(&r, "cache-control"),
        precompressor::serve::CACHE_IMMUTABLE
    );
    assert_eq!(r.header("content-encoding"), None);
    // Another representation's ETag: the body.
    let gzip = request(
        site.server.addr,
        "GET",
        &site.url,
        &[("Accept-Encoding", "gzip")],
    );
    let r = with(("If-None-Match", gzip.header("etag").unwrap()));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), Some(site.smaller_delta()));
    assert_eq!(with(("If-Modified-Since", &modified)).status, 304);
    // Its RFC 850 and asctime forms too: Apache ignores only a date in the
    // future (the table's are in 2060 and 2100).
    for date in other_date_forms(&modified) {
        assert_eq!(with(("If-Modified-Since", &date)).status, 304, "{date}");
    }
    let old = "Thu, 01 Jan 1998 00:00:00 GMT";
    assert_eq!(with(("If-Unmodified-Since", old)).status, 412);
    assert_eq!(with(("If-Match", &etag)).status, 200);
}

/// An IMF-fixdate (`Thu, 03 Dec 2026 09:35:55 GMT`) in the RFC 850 and
/// asctime forms (`Thursday, 03-Dec-26 09:35:55 GMT`, `Thu Dec  3 09:35:55 2026`).
fn other_date_forms(imf: &str) -> [String; 2] {
    let parts: Vec<&str> = imf.split([' ', ',']).filter(|p| !p.is_empty()).collect();
    let [wd, day, mon, year, time, "GMT"] = parts[..] else {
        panic!("{imf}");
    };
    let days = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    let weekday = days.iter().find(|d| d.starts_with(wd)).unwrap();
    [
        format!("{weekday}, {day}-{mon}-{} {time} GMT", &year[2..]),
        format!(
            "{wd} {mon} {:>2} {time} {year}",
            day.trim_start_matches('0')
        ),
    ]
}

#[test]
#[ignore = "e2e tier: needs Apache; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn apache_leaves_other_files_to_its_own_config() {
    let site = deploy();
    // Not in the manifest: mod_deflate (on, as Debian ships it) compresses a
    // text file at request time, and the generated headers stay off it.
    let text = "a line of text that mod_deflate may compress\n".repeat(50);
    std::fs::write(site.live.join("extra.txt"), &text).unwrap();
    let r = site.get("/extra.txt", Some("gzip"), None);
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-encoding"),
        Some("gzip"),
        "{:?}",
        r.headers
    );
    assert_eq!(decode("gzip", &r.body), text.as_bytes());
    assert_eq!(r.header("cache-control"), None);
    assert_eq!(r.header("x-content-type-options"), None);
    // A listed page too small for variants: as it is, where mod_deflate
    // would have compressed it.
    let r = site.get("/index.html", Some("gzip"), None);
    assert_eq!(r.header("content-encoding"), None, "{:?}", r.headers);
    assert_eq!(r.body, std::fs::read(site.live.join("index.html")).unwrap());
    // A delta missing on disk (files newer than the config): the original,
    // never a 404.
    for coding in ["dcb", "dcz"] {
        std::fs::remove_file(site.live.join(site.delta(coding).0)).unwrap();
    }
    let r = site.get(
        &site.url,
        Some("gzip, br, dcb, dcz"),
        Some(&site.dictionary()),
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), None);
    assert_eq!(r.body, site.file_for(None));
}

/// Chromium across a release on Apache: release 1 from apache-map's config,
/// then release 2 with its deltas, the config regenerated and Apache
/// gracefully restarted, as a deploy does. The browser offers the old script
/// as a dictionary, gets a delta, decodes it, and runs the new code.
#[test]
#[ignore = "e2e tier: needs Apache, Chromium and node; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn chromium_decodes_an_apache_delta_across_a_release() {
    let config = |live: &std::path::Path, work: &std::path::Path| {
        let out = precompress(&["apache-map".as_ref(), live.as_os_str()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let path = work.join("apache-map.out");
        std::fs::write(&path, out.stdout).unwrap();
        path
    };
    let Visit {
        first,
        second,
        old_script,
        new_path,
    } = visit_across_a_release(
        "dcb,dcz",
        |live, work| {
            let server = start_apache(live, &config(live, work), work);
            (server.addr.port(), server)
        },
        |server, live, work| {
            config(live, work);
            reload_apache(server, work);
        },
    );
    assert!(
        first["marker"].as_str().unwrap().starts_with("release-1"),
        "{first:#}"
    );
    let r = response(&first, "/assets/app-1a2b3c4d.js");
    assert_eq!(
        r["useAsDictionary"], "match=\"/assets/app-*.js\"",
        "{first:#}"
    );
    let r = response(&second, &new_path);
    assert_eq!(r["status"], 200, "{second:#}");
    assert_eq!(
        r["availableDictionary"],
        sf_sha256(&old_script),
        "{second:#}"
    );
    let coding = r["contentEncoding"].as_str().unwrap_or_default();
    assert!(matches!(coding, "dcb" | "dcz"), "{second:#}");
    assert_eq!(
        r["vary"], "Accept-Encoding,Available-Dictionary",
        "{second:#}"
    );
    assert_eq!(second["marker"], "release-2:7", "{second:#}");
    assert_eq!(second["errors"], serde_json::json!([]));
}

/// `s` as a request target's path: every byte but unreserved ones and `/`
/// percent-encoded.
fn encode_path(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                (b as char).to_string()
            }
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// The fixture site (an odd name with spaces, `#`, `&` and non-ASCII letters;
/// wasm, svg, a web manifest, incompressible files): every asset and each of
/// its variants, asked for by the coding alone, comes back byte for byte with
/// the manifest's type; `check --url` passes.
#[test]
#[ignore = "e2e tier: needs Apache; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn apache_serves_every_asset_of_the_fixture_site() {
    let (tmp, site) = precompressed_site();
    let m = manifest(&site);
    let keys = m["files"].as_object().unwrap();
    assert!(
        keys.keys().any(|k| k.contains(' ')),
        "the fixture has an odd name"
    );
    let server = start_apache_map(&site, tmp.path(), false);
    serves_every_asset(&site, &server);
}

/// `apache-map --htaccess` cut the internal redirect of `a#b.js` to its
/// sibling at the `#` (a 404 for every browser), and both forms left
/// `100%.js` and `a?b.js` out without a word: Apache then sent `100%.js.br`
/// by its own name (brotli bytes, no Content-Encoding) and mod_deflate
/// compressed the asset on the fly. Now each is served as any other name, in
/// a server and in .htaccess, and its variants by their own names are 404s.
#[test]
#[ignore = "e2e tier: needs Apache; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn names_with_hash_percent_or_question_mark_are_served_in_both_forms() {
    let (tmp, site) = precompressed_site();
    let names = ["a#b.js", "100%.js", "a?b.js"];
    for name in names {
        std::fs::write(
            site.join(name),
            "export const f = (x) => x * 2;\n".repeat(80),
        )
        .unwrap();
    }
    assert!(precompress(&["--no-config".as_ref(), site.as_os_str()])
        .status
        .success());
    for htaccess in [false, true] {
        let work = tmp
            .path()
            .join(if htaccess { "htaccess" } else { "server" });
        std::fs::create_dir(&work).unwrap();
        let server = start_apache_map(&site, &work, htaccess);
        for name in names {
            let m = manifest(&site);
            assert!(m["files"][name].is_object(), "{name} is no asset");
            for sibling in ["br", "zst", "gz"] {
                let target = format!("/{}.{sibling}", encode_path(name));
                let r = request(server.addr, "GET", &target, &[("Accept-Encoding", "br")]);
                assert_eq!(
                    r.status, 404,
                    "{target} by its own name (htaccess: {htaccess})"
                );
            }
        }
        serves_every_asset(&site, &server);
        drop(server);
        let _ = std::fs::remove_file(site.join(".htaccess"));
    }
}

/// Apache on `site` with `apache-map`'s output (work files under `work`):
/// included in the server, or as the folder's `.htaccess`.
fn start_apache_map(site: &Path, work: &Path, htaccess: bool) -> Server {
    let mut args = vec!["apache-map".as_ref()];
    if htaccess {
        args.push("--htaccess".as_ref());
    }
    args.push(site.as_os_str());
    let out = precompress(&args);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = work.join("apache-map.out");
    if htaccess {
        std::fs::write(site.join(".htaccess"), &out.stdout).unwrap();
        std::fs::write(&config, "").unwrap();
    } else {
        std::fs::write(&config, &out.stdout).unwrap();
    }
    settle_mtimes(site);
    start_apache(site, &config, work)
}

/// Every asset of `site` and each of its variants, asked for by the coding
/// alone, comes back from `server` byte for byte with the manifest's type and
/// coding; then `check --url` passes.
fn serves_every_asset(site: &Path, server: &Server) {
    let m = manifest(site);
    for (key, asset) in m["files"].as_object().unwrap() {
        let target = format!("/{}", encode_path(key));
        let mut wants = vec![(None, key.clone())];
        for v in asset["encodings"].as_array().unwrap() {
            let coding = v["coding"].as_str().unwrap().to_string();
            wants.push((Some(coding), v["path"].as_str().unwrap().to_string()));
        }
        for (coding, path) in wants {
            let ae = coding.clone().unwrap_or_else(|| "identity".into());
            let r = request(server.addr, "GET", &target, &[("Accept-Encoding", &ae)]);
            assert_eq!(r.status, 200, "{target} [{ae}]");
            assert_eq!(
                r.header("content-encoding"),
                coding.as_deref(),
                "{target} [{ae}]"
            );
            assert!(
                r.body == std::fs::read(site.join(&path)).unwrap(),
                "{target} [{ae}]: not {path}"
            );
            assert_eq!(
                r.header("content-type"),
                asset["content_type"].as_str(),
                "{target} [{ae}]"
            );
        }
    }
    let out = precompress(&[
        "check".as_ref(),
        "--url".as_ref(),
        format!("http://{}/", server.addr).as_ref(),
        site.as_os_str(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
}

/// Under a base path: the folder is `DocumentRoot/app/`, precompressed with
/// `--base /app/`; its assets are negotiated under `/app/`, its manifest is
/// refused there, and `check --url` on `/app/` passes.
#[test]
#[ignore = "e2e tier: needs Apache; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn apache_serves_a_folder_under_a_base_path() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let site = root.join("app");
    copy_dir(&repo().join("fixtures/site"), &site);
    let out = precompress(&[
        "--no-config".as_ref(),
        "-q".as_ref(),
        site.as_os_str(),
        "--base".as_ref(),
        "/app/".as_ref(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = precompress(&["apache-map".as_ref(), site.as_os_str()]);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = tmp.path().join("apache-map.out");
    std::fs::write(&config, &out.stdout).unwrap();
    settle_mtimes(&root);
    let server = start_apache(&root, &config, tmp.path());
    let r = request(
        server.addr,
        "GET",
        "/app/assets/app.js",
        &[("Accept-Encoding", "br")],
    );
    assert_eq!(r.header("content-encoding"), Some("br"), "{:?}", r.headers);
    assert!(r.body == std::fs::read(site.join("assets/app.js.br")).unwrap());
    assert_eq!(
        request(server.addr, "GET", "/app/precompress-manifest.json", &[]).status,
        404
    );
    assert_eq!(
        request(server.addr, "GET", "/app/assets/app.js.br", &[]).status,
        404
    );
    let out = precompress(&[
        "check".as_ref(),
        "--url".as_ref(),
        format!("http://{}/app/", server.addr).as_ref(),
        site.as_os_str(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
}

/// From `.htaccess` (shared hosting): the deltas decode too, the
/// negotiation rows agree with `precompress serve`'s as in a server, and
/// `check --url` passes.
#[test]
#[ignore = "e2e tier: needs Apache; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn the_deltas_apache_sends_from_htaccess_decode() {
    let site = serve_util::servers::deploy_apache_htaccess();
    assert_deltas_decode(&site);
    let out = precompress(&[
        "check".as_ref(),
        "--url".as_ref(),
        format!("http://{}/", site.server.addr).as_ref(),
        site.live.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let index = Index::load(&site.live, None).unwrap();
    let dict = site.dictionary();
    for (ae, ad) in [
        (Some(CHROME), Some(dict.as_str())),
        (Some("br, dcb;q=0.5"), Some(&dict)),
        (Some("gzip, deflate, br, zstd"), None),
        (Some("br;q=0, gzip"), None),
        (None, None),
    ] {
        let Selection::Found(s) = index.select_with_dictionary(&site.url, ae, ad) else {
            panic!()
        };
        let r = site.get(&site.url, ae, ad);
        let coding = r.header("content-encoding");
        assert_eq!(
            coding,
            s.representation.coding.map(|c| c.token()),
            "{ae:?} {ad:?}"
        );
        assert!(r.body == site.file_for(coding), "{ae:?} {ad:?}");
        assert_eq!(
            r.header("content-type"),
            site.asset["content_type"].as_str(),
            "{ae:?} {ad:?}"
        );
        assert_eq!(r.header("content-language"), None, "{ae:?} {ad:?}");
        assert_eq!(
            r.header("use-as-dictionary"),
            site.asset["use_as_dictionary"].as_str()
        );
    }
}
