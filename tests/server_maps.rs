//! The server configurations precompress generates, without the servers:
//! `nginx-map`, `caddy-map` and `apache-map` refuse a folder without a
//! manifest, the e2e configs hold the lines each documents, and the README
//! and docs/servers.md show what `apache-map` prints. The fast tier of
//! `tests/serve_nginx_deltas.rs`, `tests/serve_caddy_deltas.rs` and
//! `tests/serve_apache.rs`, which run the real servers.

mod serve_util;

use precompressor::deploy::caddy::SITE_LINES;
use precompressor::deploy::nginx::LOCATION_LINES;
use serve_util::*;

#[test]
fn the_e2e_config_has_the_lines_nginx_map_documents() {
    let conf = std::fs::read_to_string(repo().join("e2e/nginx-deltas.conf")).unwrap();
    for line in LOCATION_LINES.lines() {
        assert!(
            conf.lines().any(|l| l.trim() == line),
            "e2e/nginx-deltas.conf lacks {line:?}"
        );
    }
}

#[test]
fn nginx_map_needs_a_folder_with_a_manifest() {
    needs_a_folder_with_a_manifest("nginx-map");
}

#[test]
fn the_e2e_caddyfile_has_the_lines_caddy_map_documents() {
    let conf = std::fs::read_to_string(repo().join("e2e/Caddyfile-deltas")).unwrap();
    for line in SITE_LINES.lines() {
        assert!(
            conf.lines().any(|l| l.trim() == line),
            "e2e/Caddyfile-deltas lacks {line:?}"
        );
    }
    assert!(conf.lines().any(|l| l == "import @SNIPPET@"));
}

#[test]
fn caddy_map_needs_a_folder_with_a_manifest() {
    needs_a_folder_with_a_manifest("caddy-map");
}

#[test]
fn apache_map_needs_a_folder_with_a_manifest() {
    needs_a_folder_with_a_manifest("apache-map");
}

/// The Apache setup is what `apache-map` prints, nowhere written by hand (the
/// README's old recipe did not load): the README links the serving guide's
/// Apache section, and that section's block is the one the generated file's
/// header shows.
#[test]
fn the_readme_and_docs_show_what_apache_map_prints() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(
        readme.contains("docs/servers.md"),
        "the README links the serving guide"
    );
    assert!(
        readme.contains("apache-map DIR"),
        "the README names apache-map"
    );
    let docs = std::fs::read_to_string(repo().join("docs/servers.md")).unwrap();
    let heading = "\n## Apache httpd 2.4: `precompress apache-map`\n";
    let start = docs
        .find(heading)
        .expect("docs/servers.md has an Apache section");
    let section = &docs[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    // The serving table points to it by its anchor.
    assert!(docs.contains("(#apache-httpd-24-precompress-apache-map)"));
    assert!(section.contains("precompress apache-map"), "{section}");
    for gone in ["RewriteRule", "<FilesMatch", "Header set"] {
        for (name, text) in [("README.md", readme.as_str()), ("docs/servers.md", section)] {
            assert!(
                !text.contains(gone),
                "{name} has a recipe of its own: {gone}"
            );
        }
    }
    let (_tmp, live, ..) = release_two_with_deltas();
    let out = precompress(&["apache-map".as_ref(), live.as_os_str()]);
    let usage = String::from_utf8(out.stdout).unwrap();
    for line in [
        "precompress apache-map /srv/dist > /etc/apache2/precompress.conf",
        "DocumentRoot /srv/dist",
        "Include /etc/apache2/precompress.conf",
    ] {
        assert!(
            section.contains(line),
            "docs/servers.md's Apache section lacks {line:?}"
        );
        assert!(usage.contains(line), "apache-map's header lacks {line:?}");
    }
}

/// `precompress CMD DIR`: a usage error (2) when DIR is missing; an error
/// naming the manifest (1), with nothing on stdout, when DIR has none.
fn needs_a_folder_with_a_manifest(cmd: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let out = precompress(&[cmd.as_ref(), tmp.path().join("nope").as_os_str()]);
    assert_eq!(out.status.code(), Some(2), "{cmd}");
    let out = precompress(&[cmd.as_ref(), tmp.path().as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{cmd}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("precompress-manifest.json"),
        "{cmd}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "{cmd}");
}
