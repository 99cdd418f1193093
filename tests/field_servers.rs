//! The e2e tier of `tests/field.rs`: `--shared-dictionary on` for chunks
//! named by their hash only, over two releases, served by `precompress
//! serve` and by nginx and Caddy configured by `nginx-map` and `caddy-map`;
//! each links the dictionary from the page and sends the changed chunk as a
//! delta against it. Needs nginx and Caddy; `cargo test -- --include-ignored`
//! runs it (`bash .ci/run` installs them).

mod serve_util;

use serve_util::field::*;
use serve_util::*;

#[test]
#[ignore = "e2e tier: needs nginx and Caddy; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn with_shared_dictionary_on_hash_only_chunks_get_deltas_against_the_dictionary_a_page_links() {
    let tmp = tempfile::tempdir().unwrap();
    let (dist, cache) = (tmp.path().join("build"), tmp.path().join("cache"));
    let run_cached = || {
        ok(&run(&[
            dist.as_os_str(),
            "--shared-dictionary".as_ref(),
            "on".as_ref(),
            "--cache-dir".as_ref(),
            cache.as_os_str(),
        ]))
    };
    hash_only_release(&dist, 1);
    run_cached();
    let m1 = manifest(&dist);
    let d1 = m1["shared_dictionary"].as_str().unwrap().to_string();
    assert!(
        d1.starts_with("_app/immutable/chunks/precompress-dictionary-") && d1.ends_with(".js"),
        "{d1}"
    );
    assert_eq!(
        m1["files"][&d1]["use_as_dictionary"],
        "match=\"/_app/immutable/chunks/*.js\""
    );
    // One chunk that imports is marked with the folder's shorter pattern (a
    // first visit fetches the dictionary as a delta against it); the others
    // are not marked one by one.
    assert_eq!(
        m1["files"]["_app/immutable/chunks/Cc3nT8vW.js"]["use_as_dictionary"],
        "match=\"/_app/immutable/chunks/*\""
    );
    for other in ["Bx7kQ2pA", "D4qLm9Zr"] {
        let key = format!("_app/immutable/chunks/{other}.js");
        assert!(m1["files"][&key]["use_as_dictionary"].is_null(), "{key}");
    }
    assert!(
        m1["files"][&d1]["deltas"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["dictionary_path"] == "_app/immutable/chunks/Cc3nT8vW.js"),
        "the dictionary, as a first visit fetches it: a delta against the marked chunk"
    );
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
    check_with_store(&dist, &cache);

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
        Some("match=\"/_app/immutable/chunks/*.js\"")
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
