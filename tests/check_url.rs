//! `precompress check --url URL DIR` against real servers on 127.0.0.1: it
//! passes on the nginx and Caddy setups docs/servers.md gives (deltas
//! included), and fails, naming the cause, on each way a deploy goes wrong:
//! headers lost, a dictionary sent `no-cache` or with no `Cache-Control` at
//! all, a file rebuilt after precompress ran, a page that does not link the
//! shared dictionary; and notes, without failing, an asset sent in a larger
//! coding than the smallest the request accepts. The e2e tier: needs nginx
//! and Caddy; `cargo test -- --include-ignored` runs it (`bash .ci/run`
//! installs them). Against `precompress serve` and servers the test makes
//! itself (nothing listening, a URL that is not http, a redirect off the
//! origin, secrets in the URL or a header) is the fast tier,
//! `tests/check_url_local.rs`.

mod serve_util;

use std::path::Path;

use serve_util::url_check::*;
use serve_util::*;

/// The nginx of docs/servers.md's deltas setup (`e2e/nginx-deltas.conf`), its
/// template edited by `vars` besides `@MAPS@`.
fn deploy_nginx(vars: &[(String, String)]) -> Deployed {
    deploy_with_deltas("nginx-map", |maps, live, work| {
        let mut all: Vec<(&str, &str)> = vec![("@MAPS@", maps.to_str().unwrap())];
        all.extend(vars.iter().map(|(a, b)| (a.as_str(), b.as_str())));
        start_nginx_from("nginx-deltas.conf", live, work, &all)
    })
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn passes_against_the_readme_nginx_setup_with_deltas() {
    let site = deploy_nginx(&[]);
    let stdout = assert_passes(&url_of(&site.server), &site.live);
    assert!(stdout.contains("got a delta (1 dcb, 0 dcz)"), "{stdout}");
    // What nginx does differently, said without failing.
    assert!(
        stdout.contains("note: the server sends its own ETags"),
        "{stdout}"
    );
    // The dictionary has a lifetime: nothing to say about Cache-Control.
    assert!(!stdout.contains("Cache-Control"), "{stdout}");
}

#[test]
#[ignore = "e2e tier: needs Caddy; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn passes_against_the_readme_caddy_setup_with_deltas() {
    let site = deploy_with_deltas("caddy-map", |snippet, live, work| {
        start_caddy_from(
            "Caddyfile-deltas",
            live,
            work,
            &[("@SNIPPET@", snippet.to_str().unwrap())],
        )
    });
    let stdout = assert_passes(&url_of(&site.server), &site.live);
    // caddy-map's snippet sends br where it is smaller than zstd (Caddy's
    // `precompressed zstd br gzip` alone sends zstd).
    assert!(stdout.contains("sent 1 br, 0 zstd"), "{stdout}");
    assert!(!stdout.contains("Cache-Control"), "{stdout}");
    assert!(!stdout.contains("larger coding"), "{stdout}");
}

#[test]
#[ignore = "e2e tier: needs Caddy; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn notes_a_larger_coding_than_the_smallest_accepted() {
    // Without the snippet's line that lets br win, Caddy's `precompressed zstd
    // br gzip` sends the script's zstd, larger than its br.
    let site = deploy_with_deltas("caddy-map", |snippet, live, work| {
        let text = std::fs::read_to_string(snippet).unwrap();
        let line = text
            .lines()
            .find(|l| l.contains("request_header @pc_br_first"))
            .expect("the line that lets br win");
        std::fs::write(snippet, text.replace(line, "")).unwrap();
        start_caddy_from(
            "Caddyfile-deltas",
            live,
            work,
            &[("@SNIPPET@", snippet.to_str().unwrap())],
        )
    });
    let size = |c: &str| {
        let v = site.asset["encodings"].as_array().unwrap();
        v.iter().find(|v| v["coding"] == c).unwrap()["size"].clone()
    };
    let (br, zstd) = (size("br"), size("zstd"));
    assert!(br.as_u64() < zstd.as_u64(), "br {br}, zstd {zstd}");
    // A note, not a problem: the browser decodes it.
    let stdout = assert_passes(&url_of(&site.server), &site.live);
    let want = format!(
        "note: 1 asset sent in a larger coding than the smallest the request accepts ({}: zstd ({zstd} B) where br is {br} B): {} B more per visit",
        &site.url[1..],
        zstd.as_u64().unwrap() - br.as_u64().unwrap()
    );
    assert!(stdout.contains(&want), "{want}\n{stdout}");
    let (_, json, _) = check_url(&url_of(&site.server), &site.live, &["--json"]);
    assert!(json.contains("larger coding"), "{json}");
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn fails_when_nginx_loses_its_add_header_lines() {
    let template = std::fs::read_to_string(repo().join("e2e/nginx-deltas.conf")).unwrap();
    let stripped: Vec<(String, String)> = template
        .lines()
        .filter(|l| l.contains("add_header"))
        .map(|l| (l.trim().to_string(), String::new()))
        .collect();
    assert!(stripped.len() >= 5, "{stripped:?}");
    let site = deploy_nginx(&stripped);
    let url = url_of(&site.server);
    let (code, stdout, _) = check_url(&url, &site.live, &[]);
    assert_eq!(code, 1, "{stdout}");
    let asset = format!("{url}{}: ", &site.url[1..]);
    for kind in ["missing_vary", "missing_use_as_dictionary", "no_delta"] {
        assert!(
            stdout.contains(&format!("{asset}{kind}: ")),
            "{kind}:\n{stdout}"
        );
    }
    assert!(stdout.contains("lacks Available-Dictionary"), "{stdout}");
    // The rewrite still happens, without its Content-Encoding: the worst of it.
    assert!(
        stdout.contains("a browser would read the delta as the asset"),
        "{stdout}"
    );
    // The same problems in JSON.
    let (code, json, _) = check_url(&url, &site.live, &["--json"]);
    assert_eq!(code, 1);
    let (v, problems) = json_problems(&json);
    assert_eq!(v["ok"], false);
    let kinds: Vec<&str> = problems.iter().map(|(_, k, _)| k.as_str()).collect();
    for kind in ["missing_vary", "missing_use_as_dictionary", "no_delta"] {
        assert!(kinds.contains(&kind), "{kind}: {problems:?}");
    }
    assert!(
        problems.iter().all(|(u, _, _)| u.starts_with(&url)),
        "{problems:?}"
    );
}

/// The location line that sends `$pc_cache_control`.
const CACHE_LINE: &str = "add_header Cache-Control $pc_cache_control;";

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn fails_when_a_dictionary_is_sent_no_cache() {
    // The fingerprinted script (a dictionary) sent `Cache-Control: no-cache`.
    let site = deploy_nginx(&[(
        CACHE_LINE.into(),
        "add_header Cache-Control no-cache;".into(),
    )]);
    let url = url_of(&site.server);
    let (code, stdout, _) = check_url(&url, &site.live, &[]);
    assert_eq!(code, 1, "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.contains("dictionary_not_fresh"))
        .unwrap_or_else(|| panic!("no dictionary_not_fresh:\n{stdout}"));
    assert!(line.contains(&format!("{url}{}", &site.url[1..])), "{line}");
    assert!(line.contains("\"no-cache\""), "{line}");
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn fails_when_nginx_sends_a_dictionary_without_cache_control() {
    // docs/servers.md's setup without its Cache-Control line: Chromium would keep
    // the dictionary for a tenth of its age, and a visitor coming back the
    // next day would hold none.
    let template = std::fs::read_to_string(repo().join("e2e/nginx-deltas.conf")).unwrap();
    assert!(template.lines().any(|l| l.trim() == CACHE_LINE));
    let site = deploy_nginx(&[(CACHE_LINE.into(), String::new())]);
    let url = url_of(&site.server);
    let asset = format!("{url}{}", &site.url[1..]);
    let (code, stdout, _) = check_url(&url, &site.live, &[]);
    assert_eq!(code, 1, "{stdout}");
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("dictionary_not_fresh"))
        .collect();
    assert_eq!(lines.len(), 1, "one per asset:\n{stdout}");
    assert!(lines[0].contains(&format!("{asset}: ")), "{}", lines[0]);
    for want in [
        "a tenth of its age since Last-Modified",
        "send `Cache-Control: public, max-age=31536000, immutable`",
    ] {
        assert!(lines[0].contains(want), "{want}: {}", lines[0]);
    }
    // It is the only problem: the deltas themselves still work.
    let (code, json, _) = check_url(&url, &site.live, &["--json"]);
    assert_eq!(code, 1);
    let (v, problems) = json_problems(&json);
    assert_eq!(v["ok"], false);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(
        (problems[0].0.as_str(), problems[0].1.as_str()),
        (asset.as_str(), "dictionary_not_fresh")
    );
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn fails_naming_an_asset_rebuilt_after_precompress_ran() {
    let site = deploy_nginx(&[]);
    // Other bytes of the same size, in the source and its .br: nginx serves them.
    let key = &site.url[1..];
    for rel in [key.to_string(), format!("{key}.br")] {
        let path = site.live.join(rel);
        let len = std::fs::metadata(&path).unwrap().len() as usize;
        let other: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, other).unwrap();
    }
    let url = url_of(&site.server);
    let (code, stdout, _) = check_url(&url, &site.live, &[]);
    assert_eq!(code, 1, "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.contains(": body_mismatch: "))
        .unwrap_or_else(|| panic!("no body_mismatch:\n{stdout}"));
    assert!(line.contains(&format!("{url}{key}: ")), "{line}");
    assert!(line.contains(".br"), "{line}");
    assert!(stdout.contains(" 1 with problems"), "{stdout}");
}

/// A SvelteKit-like build: chunks named by their hash only (so precompress,
/// with `--shared-dictionary on`, makes a shared dictionary for them) and a
/// page that loads one.
fn hash_only_site(root: &Path) -> std::path::PathBuf {
    let dir = root.join("build");
    hash_only_tree(&dir, 1);
    let out = precompress(&[
        "--no-config".as_ref(),
        "-q".as_ref(),
        "--shared-dictionary".as_ref(),
        "on".as_ref(),
        dir.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn html_pages_must_link_the_shared_dictionary() {
    let tmp = tempfile::tempdir().unwrap();
    let site = hash_only_site(tmp.path());
    let dict = manifest(&site)["shared_dictionary"]
        .as_str()
        .expect("a shared dictionary")
        .to_string();
    let server = start_precompress(&site, &[]);
    assert_passes(&url_of(&server), &site);
    // nginx as docs/servers.md configures it without nginx-map: no Link, and the
    // dictionary goes unmarked.
    let nginx = start_nginx(&site, tmp.path());
    let url = url_of(&nginx);
    let (code, stdout, _) = check_url(&url, &site, &[]);
    assert_eq!(code, 1, "{stdout}");
    let link = stdout
        .lines()
        .find(|l| l.contains(&format!("{url}index.html: missing_link: ")))
        .unwrap_or_else(|| panic!("no missing_link:\n{stdout}"));
    assert!(link.contains(&format!("</{dict}>")), "{link}");
    assert!(
        stdout.contains(&format!("{url}{dict}: missing_use_as_dictionary: ")),
        "{stdout}"
    );
}
