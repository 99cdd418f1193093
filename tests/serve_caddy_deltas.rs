//! RFC 9842 deltas from real Caddy 2.6: release 2 precompressed with
//! `--dictionary-from` release 1, `precompress caddy-map` imported by
//! `e2e/Caddyfile-deltas`, and raw requests as Chromium sends them. A client
//! that names `dcb`/`dcz` and holds the old script gets the smaller delta byte
//! for byte, with the script's type, `Vary` on both fields,
//! `Use-As-Dictionary` and `precompress serve`'s `Cache-Control`; every other
//! client gets what Caddy sends anyway, never a delta.
//! `Index::select_with_dictionary` (what `precompress serve` does) is the
//! reference for when a delta is sent; where Caddy differs (no ranking by q,
//! its `precompressed` order between variants) the test says so. The e2e
//! tier: needs Caddy; `caddy-map` without it is in `tests/server_maps.rs`.

mod serve_util;

use precompressor::dictionary::{hex, parse_available_dictionary};
use precompressor::serve::{Coding, Index, Selection, CACHE_IMMUTABLE, CACHE_REVALIDATE};
use serve_util::*;

const CHROME: &str = "gzip, deflate, br, zstd, dcb, dcz";

fn deploy() -> Deployed {
    deploy_with_deltas("caddy-map", |snippet, live, work| {
        start_caddy_from(
            "Caddyfile-deltas",
            live,
            work,
            &[("@SNIPPET@", snippet.to_str().unwrap())],
        )
    })
}

fn is_delta(coding: Option<&str>) -> bool {
    matches!(coding, Some("dcb" | "dcz"))
}

#[test]
#[ignore = "e2e tier: needs Caddy; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn caddy_sends_the_smaller_delta_only_to_clients_that_hold_the_dictionary() {
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
    // The smaller of the script's br and zstd: Caddy's `precompressed zstd br
    // gzip` would send zstd, caddy-map's snippet sends br where it is smaller.
    let size = |c: &str| {
        site.asset["encodings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["coding"] == c)
            .unwrap()["size"]
            .as_u64()
            .unwrap()
    };
    let best = if size("br") < size("zstd") {
        "br"
    } else {
        "zstd"
    };
    eprintln!("br {} B, zstd {} B: {best}", size("br"), size("zstd"));
    // (Accept-Encoding, Available-Dictionary, Content-Encoding Caddy sends).
    #[rustfmt::skip]
    let table: &[(Option<&str>, Option<&str>, Option<&str>)] = &[
        (Some(CHROME), Some(&dict), Some(smaller)),
        (Some("br, dcb"), Some(&dict), Some("dcb")),
        (Some("br, dcz"), Some(&dict), Some("dcz")),
        (Some("gzip, DCZ"), Some(&padded), Some("dcz")),
        (Some("gzip, dcb;q=1.0, dcz;q=0.001"), Some(&dict), Some(smaller)),
        // The coding without the dictionary, the dictionary without the coding.
        (Some(CHROME), None, Some(best)),
        (Some("gzip, deflate, br, zstd"), Some(&dict), Some(best)),
        (Some("br, dcb;q=0, dcz;q=0.000"), Some(&dict), Some("br")),
        (Some("gzip, dcb;q=0"), Some(&dict), Some("gzip")),
        // Malformed (a second parameter): no acceptance, as negotiate reads it.
        (Some("br, dcb;q=0;x=1"), Some(&dict), Some("br")),
        (Some("br, dcz;q=0.5;x=1, dcb;q=1.5"), Some(&dict), Some("br")),
        // `*` names no delta (nor, to Caddy, any variant).
        (Some("gzip, *"), Some(&dict), Some("gzip")),
        (Some("identity"), Some(&dict), None),
        (None, Some(&dict), None),
        // Unknown, malformed, and right but for case: ordinary negotiation.
        (Some(CHROME), Some(&unknown), Some(best)),
        (Some(CHROME), Some(&flipped), Some(best)),
        (Some(CHROME), Some(&bare), Some(best)),
        (Some(CHROME), Some(&listed), Some(best)),
        (Some(CHROME), Some(":not base64!:"), Some(best)),
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
        assert!(r.body == site.file_for(coding), "{what}: body");
        // Caddy chunks its compressed variants; a delta has its length.
        if is_delta(coding) || r.header("content-length").is_some() {
            assert_eq!(
                r.header("content-length"),
                Some(r.body.len().to_string().as_str()),
                "{what}"
            );
        }
        let vary = header_all(&r, "vary");
        assert!(
            vary.contains("Accept-Encoding") && vary.contains("Available-Dictionary"),
            "{what}: Vary {vary:?}"
        );
        assert_eq!(r.header("use-as-dictionary"), Some(use_as), "{what}");
        // One Content-Type: the manifest's on a delta, Caddy's own otherwise.
        let types: Vec<_> = r
            .headers
            .iter()
            .filter(|(n, _)| n == "content-type")
            .collect();
        assert_eq!(types.len(), 1, "{what}: {types:?}");
        if is_delta(coding) {
            assert_eq!(
                Some(types[0].1.as_str()),
                site.asset["content_type"].as_str(),
                "{what}"
            );
        } else {
            assert!(types[0].1.contains("javascript"), "{what}: {types:?}");
        }
        // The site's own header is still there.
        assert_eq!(r.header("x-served-by"), Some("caddy"), "{what}");
        // One Cache-Control, `precompress serve`'s: a year for the hashed
        // name, on the delta and on identity alike, so Chromium keeps the
        // dictionary past the heuristic minutes.
        assert_eq!(header_all(&r, "cache-control"), CACHE_IMMUTABLE, "{what}");
        // `precompress serve` sends the same delta, or none when Caddy sends
        // none (it picks the smallest variant, Caddy the first it is told).
        let Selection::Found(s) = index.select_with_dictionary(&site.url, ae, ad) else {
            panic!("{what}: not in the index")
        };
        let reference = s.representation.coding;
        assert!(
            s.headers
                .contains(&("Cache-Control", CACHE_IMMUTABLE.to_string())),
            "{what}: {:?}",
            s.headers
        );
        if is_delta(coding) {
            assert_eq!(
                coding,
                reference.map(|c| c.token()),
                "{what}: precompress serve differs"
            );
        } else {
            assert!(
                !matches!(reference, Some(Coding::Delta(_))),
                "{what}: precompress serve sends a delta"
            );
        }
    }

    // Caddy does not rank by q: a delta named with any weight above 0 wins,
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
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), Some(smaller));
    assert_eq!(
        r.header("content-type"),
        site.asset["content_type"].as_str()
    );
    // Go's file serving leaves Content-Length off a HEAD response that has a
    // Content-Encoding (Caddy's br and zstd as well); if it is there, it is right.
    let size = site.delta(smaller).1;
    assert!(
        r.header("content-length")
            .is_none_or(|l| l == size.to_string()),
        "{:?}",
        r.headers
    );
    assert_eq!(r.header("cache-control"), Some(CACHE_IMMUTABLE));

    // A revalidated delta keeps it.
    let etag = r.header("etag").expect("Caddy's ETag").to_string();
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
#[ignore = "e2e tier: needs Caddy; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn the_deltas_caddy_sends_decode_to_the_new_script() {
    assert_deltas_decode(&deploy());
}

#[test]
#[ignore = "e2e tier: needs Caddy; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn caddy_sends_no_delta_headers_where_they_do_not_belong() {
    let site = deploy();
    let dict = site.dictionary();
    // A page: no dictionary, no deltas.
    let r = site.get("/", Some(CHROME), Some(&dict));
    assert_eq!(r.status, 200);
    assert!(
        r.header("content-type")
            .is_some_and(|t| t.starts_with("text/html")),
        "{:?}",
        r.headers
    );
    assert_eq!(r.header("use-as-dictionary"), None);
    assert_eq!(r.header("content-encoding"), None);
    assert!(!header_all(&r, "vary").contains("Available-Dictionary"));
    // The page is not fingerprinted: revalidate, under its folder's URL too.
    assert_eq!(header_all(&r, "cache-control"), CACHE_REVALIDATE);
    let r = site.get("/index.html", Some(CHROME), None);
    assert_eq!(header_all(&r, "cache-control"), CACHE_REVALIDATE);
    // A file the manifest does not list: no Cache-Control, as Caddy sends it.
    std::fs::write(site.live.join("extra.txt"), "not in the manifest").unwrap();
    let r = site.get("/extra.txt", Some(CHROME), None);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("cache-control"), None, "{:?}", r.headers);
    // A delta by name is a 404, however its name is spelt; another case of
    // the asset's name is no file.
    let (delta, _) = site.delta("dcb");
    let escaped = format!("/{}%62", &delta[..delta.len() - 1]);
    for target in [format!("/{delta}"), format!("//{delta}"), escaped] {
        let r = site.get(&target, Some(CHROME), Some(&dict));
        assert_eq!(r.status, 404, "{target}: {:?}", r.headers);
        assert!(r.body.is_empty(), "{target}");
        assert_eq!(r.header("cache-control"), None, "{target}: {:?}", r.headers);
    }
    let upper = site.url.to_ascii_uppercase();
    let r = site.get(&upper, Some(CHROME), Some(&dict));
    assert_eq!(r.status, 404, "{:?}", r.headers);
    assert_eq!(r.header("content-encoding"), None);
    // The script gone from disk (an upload not finished): its 404 carries no
    // year-long Cache-Control that would outlive the upload (the header is
    // deferred, and an error skips it).
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
#[ignore = "e2e tier: needs Caddy; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn a_delta_file_the_manifest_does_not_list_is_never_sent() {
    // A delta-shaped file beside the page, for a dictionary the snippet knows:
    // only the (asset, dictionary) pairs of the manifest are looked up.
    let site = deploy();
    let dict = site.dictionary();
    let h = hex(&parse_available_dictionary(&dict).unwrap());
    let (delta, _) = site.delta("dcb");
    std::fs::copy(
        site.live.join(&delta),
        site.live.join(format!("index.html.{h}.dcb")),
    )
    .unwrap();
    let r = site.get("/index.html", Some(CHROME), Some(&dict));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), None, "{:?}", r.headers);
    assert!(r.body == std::fs::read(site.live.join("index.html")).unwrap());
}

#[test]
#[ignore = "e2e tier: needs Caddy; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn a_delta_missing_on_disk_falls_back() {
    // The snippet is older than the files: `try_files` finds what is there.
    let site = deploy();
    let dict = site.dictionary();
    let (dcb, dcz) = (site.delta("dcb"), site.delta("dcz"));
    let (smaller, larger) = if dcz.1 < dcb.1 {
        (dcz, "dcb")
    } else {
        (dcb, "dcz")
    };
    std::fs::remove_file(site.live.join(&smaller.0)).unwrap();
    let r = site.get(&site.url, Some(CHROME), Some(&dict));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), Some(larger));
    assert!(r.body == site.file_for(Some(larger)));
    std::fs::remove_file(site.live.join(site.delta(larger).0)).unwrap();
    let r = site.get(&site.url, Some(CHROME), Some(&dict));
    assert_eq!(r.status, 200);
    // No delta left: the smaller variant (caddy-map puts br first where it
    // is smaller than zstd; a tie goes to zstd, first in `precompressed`).
    let best = if site.file_for(Some("br")).len() < site.file_for(Some("zstd")).len() {
        "br"
    } else {
        "zstd"
    };
    assert_eq!(r.header("content-encoding"), Some(best));
    assert!(r.body == site.file_for(Some(best)));
    let vary = header_all(&r, "vary");
    assert!(vary.contains("Available-Dictionary"), "{vary}");
}
