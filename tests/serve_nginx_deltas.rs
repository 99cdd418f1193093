//! RFC 9842 deltas from real nginx 1.22: release 2 precompressed with
//! `--dictionary-from` release 1, `precompress nginx-map` included in
//! `e2e/nginx-deltas.conf`, and raw requests as Chromium sends them. A client
//! that names `dcb`/`dcz` and holds the old script gets the smaller delta byte
//! for byte, with the script's type, `Vary` on both fields,
//! `Use-As-Dictionary` and `precompress serve`'s `Cache-Control`; every other
//! client gets what nginx sends anyway, never a delta.
//! `Index::select_with_dictionary` (what `precompress serve` does) is the
//! reference; where nginx differs (no ranking by q) the test says so. The
//! e2e tier: needs nginx; `nginx-map` without it is in `tests/server_maps.rs`.

mod serve_util;

use precompressor::serve::{Index, Selection, CACHE_IMMUTABLE, CACHE_REVALIDATE};
use serve_util::*;

const CHROME: &str = "gzip, deflate, br, zstd, dcb, dcz";

fn deploy() -> Deployed {
    deploy_with_deltas("nginx-map", |maps, live, work| {
        start_nginx_from(
            "nginx-deltas.conf",
            live,
            work,
            &[("@MAPS@", maps.to_str().unwrap())],
        )
    })
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn nginx_sends_the_smaller_delta_only_to_clients_that_hold_the_dictionary() {
    let site = deploy();
    let dict = site.dictionary();
    let smaller = site.smaller_delta();
    let DictionaryForms {
        padded,
        flipped,
        unknown,
        bare,
        listed,
        ..
    } = DictionaryForms::of(&dict);
    // (Accept-Encoding, Available-Dictionary, Content-Encoding nginx sends)
    #[rustfmt::skip]
    let table: &[(Option<&str>, Option<&str>, Option<&str>)] = &[
        (Some(CHROME), Some(&dict), Some(smaller)),
        (Some("br, dcb"), Some(&dict), Some("dcb")),
        (Some("br, dcz"), Some(&dict), Some("dcz")),
        (Some("gzip, DCZ"), Some(&padded), Some("dcz")),
        // The coding without the dictionary, the dictionary without the coding.
        (Some(CHROME), None, Some("br")),
        (Some("gzip, deflate, br, zstd"), Some(&dict), Some("br")),
        (Some("br, dcb;q=0, dcz;q=0"), Some(&dict), Some("br")),
        (Some("gzip, dcb;q=0"), Some(&dict), Some("gzip")),
        // Malformed (a second parameter): no acceptance, as negotiate reads it.
        (Some("br, dcb;q=0;x=1"), Some(&dict), Some("br")),
        (Some("br, dcz;q=0.5;x=1, dcb;q=1.5"), Some(&dict), Some("br")),
        (Some("identity"), Some(&dict), None),
        (None, Some(&dict), None),
        // Unknown, malformed, and right but for case: ordinary negotiation.
        (Some(CHROME), Some(&unknown), Some("br")),
        (Some(CHROME), Some(&flipped), Some("br")),
        (Some(CHROME), Some(&bare), Some("br")),
        (Some(CHROME), Some(&listed), Some("br")),
        (Some(CHROME), Some(":not base64!:"), Some("br")),
    ];
    let index = Index::load(&site.live, None).unwrap();
    let use_as = site.asset["use_as_dictionary"].as_str().unwrap();
    assert_eq!(use_as, "match=\"/assets/app-*.js\"");
    for &(ae, ad, want) in table {
        let what = format!("{ae:?} {ad:?}");
        let r = site.get(&site.url, ae, ad);
        assert_eq!(r.status, 200, "{what}");
        let coding = r.header("content-encoding");
        assert_eq!(coding, want, "{what}: {:?}", r.headers);
        assert_eq!(r.body, site.file_for(coding), "{what}: body");
        assert_eq!(
            r.header("content-length"),
            Some(r.body.len().to_string().as_str()),
            "{what}"
        );
        let vary = header_all(&r, "vary");
        assert!(
            vary.contains("Accept-Encoding") && vary.contains("Available-Dictionary"),
            "{what}: Vary {vary:?}"
        );
        assert_eq!(r.header("use-as-dictionary"), Some(use_as), "{what}");
        // One Content-Type: the manifest's on a delta, nginx's own otherwise.
        let types: Vec<_> = r
            .headers
            .iter()
            .filter(|(n, _)| n == "content-type")
            .collect();
        assert_eq!(types.len(), 1, "{what}: {types:?}");
        if matches!(coding, Some("dcb" | "dcz")) {
            assert_eq!(
                Some(types[0].1.as_str()),
                site.asset["content_type"].as_str(),
                "{what}"
            );
        } else {
            assert!(types[0].1.contains("javascript"), "{what}: {types:?}");
        }
        // The location repeats the server's add_header, and the nested
        // location inherits it.
        assert_eq!(r.header("x-served-by"), Some("nginx"), "{what}");
        // What `precompress serve` would send (it ranks zstd, nginx has none).
        let Selection::Found(s) = index.select_with_dictionary(&site.url, ae, ad) else {
            panic!("{what}: not in the index")
        };
        // One Cache-Control, `precompress serve`'s: a year for the hashed
        // name, on the delta and on identity alike, so Chromium keeps the
        // dictionary past the heuristic minutes.
        assert_eq!(header_all(&r, "cache-control"), CACHE_IMMUTABLE, "{what}");
        assert!(
            s.headers
                .contains(&("Cache-Control", CACHE_IMMUTABLE.to_string())),
            "{what}: {:?}",
            s.headers
        );
        let reference = s.representation.coding.map(|c| c.token());
        assert_eq!(coding, reference, "{what}: precompress serve differs");
    }

    // nginx does not rank by q: a delta named with any weight above 0 wins,
    // where `precompress serve` keeps br.
    let r = site.get(&site.url, Some("br, dcb;q=0.5"), Some(&dict));
    assert_eq!(r.header("content-encoding"), Some("dcb"));
    let Selection::Found(s) =
        index.select_with_dictionary(&site.url, Some("br, dcb;q=0.5"), Some(&dict))
    else {
        panic!()
    };
    assert_eq!(s.representation.coding.map(|c| c.token()), Some("br"));

    // HEAD: the delta's headers, no body.
    let r = request(
        site.server.addr,
        "HEAD",
        &site.url,
        &[("Accept-Encoding", CHROME), ("Available-Dictionary", &dict)],
    );
    assert_eq!(r.header("content-encoding"), Some(smaller));
    let size = site.delta(smaller).1;
    assert_eq!(r.header("content-length"), Some(size.to_string().as_str()));
    assert_eq!(r.header("cache-control"), Some(CACHE_IMMUTABLE));

    // A revalidated delta keeps it (add_header covers 304).
    let etag = r.header("etag").expect("nginx's ETag").to_string();
    let r = request(
        site.server.addr,
        "GET",
        &site.url,
        &[
            ("Accept-Encoding", CHROME),
            ("Available-Dictionary", &dict),
            ("If-None-Match", &etag),
        ],
    );
    assert_eq!(r.status, 304, "{:?}", r.headers);
    assert_eq!(header_all(&r, "cache-control"), CACHE_IMMUTABLE);
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn the_deltas_nginx_sends_decode_to_the_new_script() {
    assert_deltas_decode(&deploy());
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn nginx_sends_no_delta_headers_where_they_do_not_belong() {
    let site = deploy();
    let dict = site.dictionary();
    // A page: no dictionary, no deltas.
    let r = site.get("/", Some(CHROME), Some(&dict));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/html"));
    assert_eq!(r.header("use-as-dictionary"), None);
    assert_eq!(r.header("content-encoding"), None);
    assert!(!header_all(&r, "vary").contains("Available-Dictionary"));
    // The page is not fingerprinted: revalidate, under its folder's URL too.
    assert_eq!(header_all(&r, "cache-control"), CACHE_REVALIDATE);
    let r = site.get("/index.html", Some(CHROME), None);
    assert_eq!(header_all(&r, "cache-control"), CACHE_REVALIDATE);
    // A file the manifest does not list: no Cache-Control, as nginx sends it.
    std::fs::write(site.live.join("extra.txt"), "not in the manifest").unwrap();
    let r = site.get("/extra.txt", Some(CHROME), None);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("cache-control"), None, "{:?}", r.headers);
    // The delta by name is internal; another case of the name is no file.
    let (delta, _) = site.delta("dcb");
    let r = site.get(&format!("/{delta}"), Some(CHROME), Some(&dict));
    assert_eq!(r.status, 404, "{:?}", r.headers);
    assert_eq!(r.header("cache-control"), None, "{:?}", r.headers);
    let upper = site.url.to_ascii_uppercase();
    let r = site.get(&upper, Some(CHROME), Some(&dict));
    assert_eq!(r.status, 404, "{:?}", r.headers);
    assert_eq!(r.header("content-encoding"), None);
    // The script gone from disk (an upload not finished): its 404 carries no
    // year-long Cache-Control that would outlive the upload (add_header
    // skips a 404).
    let name = &site.url[1..];
    for entry in std::fs::read_dir(site.live.join("assets")).unwrap() {
        let path = entry.unwrap().path();
        if path.to_str().unwrap().contains(name) {
            std::fs::remove_file(path).unwrap();
        }
    }
    let r = site.get(&site.url, Some(CHROME), None);
    assert_eq!(r.status, 404, "{:?}", r.headers);
    assert_eq!(r.header("cache-control"), None, "{:?}", r.headers);
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn a_delta_missing_on_disk_falls_back_to_ordinary_serving() {
    // The map is older than the files: the `-f` test keeps nginx from a 404.
    let site = deploy();
    let dict = site.dictionary();
    for coding in ["dcb", "dcz"] {
        std::fs::remove_file(site.live.join(site.delta(coding).0)).unwrap();
    }
    let r = site.get(&site.url, Some(CHROME), Some(&dict));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), Some("br"));
    assert_eq!(r.body, site.file_for(Some("br")));
}
