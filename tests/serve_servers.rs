//! Every generated configuration through the shared table,
//! `fixtures/serve-cases.json`: real Apache httpd 2.4 (`apache-map`), nginx
//! 1.22 (`nginx-map`) and Caddy 2.6 (`caddy-map`) started on the table's
//! release pair, sent its cases by the runner `tests/serve_cases.rs` uses
//! (`serve_util::cases`). Each server's profile says what it does not do at
//! all and, case by case, where it answers otherwise and why; an excuse that
//! stops matching fails the test, so a change to the table shows at once
//! which server falls behind. `precompress check --url` passes against each.
//! Servers that send siblings without a manifest (h2o, lighttpd with
//! `e2e/lighttpd-siblings.lua`) get the table's coding cases.

mod serve_util;

use std::path::Path;

use serve_util::cases::{build, run_table, table, Excuse, Profile};
use serve_util::servers::*;
use serve_util::*;

/// The table's site, and `generator`'s output for it in `TMP/generator.out`.
fn site_and_config(tmp: &Path, generator: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let site = build(&table(), tmp);
    let out = precompress(&[generator.as_ref(), site.as_os_str()]);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = tmp.join(format!("{generator}.out"));
    std::fs::write(&config, &out.stdout).unwrap();
    settle_mtimes(&site);
    (site, config)
}

/// Apache: everything but a rebuild (the configuration is made at deploy, so
/// a source edited later goes out with its stale variants until the next
/// deploy regenerates it). Its own ETags (inode, size, time); `DirectorySlash`
/// redirects to an absolute URL; `Vary` items joined with ",". The rest is
/// Apache's core, the same for every file it serves:
const APACHE: Profile = Profile {
    supports: &["hosts", "conditional", "range", "pages"],
    own_etags: true,
    reads_manifest: true,
    length_optional: false,
    absolute_location: true,
    list_headers: &["Vary"],
    excuses: &[
        Excuse {
            cases: &["an encoded separator is refused"],
            part: "status",
            why: "404: AllowEncodedSlashes Off refuses %2F with 404 before any module sees it",
        },
        Excuse {
            cases: &["POST is not allowed"],
            part: "Allow",
            why: "Apache adds its own Allow: TRACE (TraceEnable is on by default) beside GET, HEAD",
        },
        Excuse {
            cases: &[
                "If-Modified-Since later than the file: 304",
                "If-Modified-Since in the RFC 850 form, its year 60 read as 2060",
                "If-Modified-Since in the asctime form",
            ],
            part: "status",
            why: "the table's dates are in 2060 and 2100; Apache ignores a date in the future (RFC 7232 calls it invalid; no directive changes it); a past one gets 304, in each of the three forms (serve_apache.rs)",
        },
        Excuse {
            cases: &["If-Unmodified-Since before the file: 412"],
            part: "status",
            why: "the table's date is the epoch, which APR parses as its error value 0; a later one gets 412 (tested below)",
        },
        Excuse {
            cases: &["a range past the end: 416"],
            part: "Content-Range",
            why: "Apache's 416 has no Content-Range",
        },
        Excuse {
            cases: &[
                "a range to past 2^64: the rest of the file",
                "a suffix of more than 2^64 bytes: the whole file",
                "a range from past 2^64: 416",
            ],
            part: "status",
            why: "200, the whole file: Apache's byte-range filter reads a position as a signed 64-bit offset, and one it cannot read makes it ignore the Range field (RFC 9110 lets a server ignore Range); no directive changes its parser",
        },
        Excuse {
            cases: &[
                "a fragment in the target is not part of the path",
                "a fragment after the query is not part of the query",
            ],
            part: "status",
            why: "400: Apache's request-line parser refuses a '#' in the target (AH02421, RFC 9112 has none there) before any module runs; only HttpProtocolOptions Unsafe lets it through, which drops every other request-line and header check too",
        },
    ],
};

/// The table's failures against Apache serving `apache-map`'s output, as
/// `edit` leaves it.
fn apache_table(edit: impl Fn(String) -> String) -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    let (site, config) = site_and_config(tmp.path(), "apache-map");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, edit(text)).unwrap();
    let server = start_apache(&site, &config, tmp.path());
    let mut failures = run_table(&table(), tmp.path(), &site, server.addr, &APACHE);
    if !failures.is_empty() {
        failures.push(apache_log(tmp.path()));
    }
    failures
}

/// [`apache_table`] with `apache-map --htaccess` written as the folder's
/// `.htaccess`, the server's own configuration including nothing of it.
fn apache_htaccess_table(edit: impl Fn(String) -> String) -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    let site = build(&table(), tmp.path());
    let out = precompress(&[
        "apache-map".as_ref(),
        "--htaccess".as_ref(),
        site.as_os_str(),
    ]);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    std::fs::write(site.join(".htaccess"), edit(text)).unwrap();
    let nothing = tmp.path().join("nothing.conf");
    std::fs::write(&nothing, "").unwrap();
    settle_mtimes(&site);
    let server = start_apache(&site, &nothing, tmp.path());
    let mut failures = run_table(&table(), tmp.path(), &site, server.addr, &APACHE);
    if !failures.is_empty() {
        failures.push(apache_log(tmp.path()));
    }
    failures
}

/// Shared hosting: the same table, the same differences, from
/// `.htaccess`; one that loses the take-back of its variables fails it.
#[test]
#[ignore = "e2e tier: needs Apache; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn apache_answers_the_shared_table_from_htaccess() {
    let failures = apache_htaccess_table(|c| c);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let failures = apache_htaccess_table(|c| {
        c.replace(
            "RewriteCond %{ENV:REDIRECT_PC_CE} .",
            "RewriteCond %{ENV:NOTHING} .",
        )
    });
    assert!(
        failures
            .iter()
            .any(|f| f.contains("a browser gets the smallest variant it accepts")),
        "{failures:#?}"
    );
}

#[test]
#[ignore = "e2e tier: needs Apache; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn apache_answers_the_shared_table() {
    let failures = apache_table(|c| c);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Stock Apache since 2.4.40 compiles with DOTALL and DOLLAR_ENDONLY; before
    // it, or where a server sets its own RegexDefaultOptions, `.` stops at a
    // newline and `$` matches before one. The rules must not lean on either.
    let failures = apache_table(|c| format!("RegexDefaultOptions none\n{c}"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The runner has teeth: Apache with a configuration that lost one thing
/// (zstd, the dictionary pairs, the manifest's types, the guards) fails the
/// table on exactly the cases that need it.
#[test]
#[ignore = "e2e tier: needs Apache; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn a_broken_apache_config_fails_the_table() {
    /// What is broken, how, and a failure that must name it.
    type Broken = (&'static str, fn(String) -> String, &'static str);
    let broken: [Broken; 4] = [
        (
            "no zstd",
            |c| c.replace("E=PC_R_ZSTD:", "E=PC_R_NONE:"),
            "a browser gets the smallest variant it accepts",
        ),
        (
            "no dictionaries",
            |c| c.replace("E=PC_D:;:", "E=PC_D:;x"),
            "a client holding release 1's script gets the delta",
        ),
        (
            "Apache's types",
            |c| c.replace(",T=", ",E=PC_T:"),
            "Content-Type",
        ),
        (
            "no guards",
            |c| c.replace(" - [R=404]", " - [L]"),
            "nor is the manifest",
        ),
    ];
    for (what, edit, named) in broken {
        let failures = apache_table(edit);
        assert!(
            failures.iter().any(|f| f.contains(named)),
            "{what}: no failure names {named:?}: {failures:#?}"
        );
    }
}

/// The cases where `zstd` is the smallest acceptable variant.
const ZSTD_CASES: &[&str] = &[
    "a browser gets the smallest variant it accepts",
    "a dictionary the manifest has no delta for: ordinary negotiation",
    "a malformed dictionary: ordinary negotiation",
    "the dictionary without a delta coding accepted",
];

/// nginx 1.22 with docs/servers.md's deltas setup and a site's conventions
/// (`e2e/nginx-site.conf`, with `absolute_redirect off` and
/// `if_modified_since before`): everything but a rebuild, its own ETags.
const NGINX: Profile = Profile {
    supports: &["hosts", "conditional", "range", "pages"],
    own_etags: true,
    reads_manifest: true,
    length_optional: false,
    absolute_location: true,
    list_headers: &["Vary"],
    excuses: &[
        Excuse {
            cases: ZSTD_CASES,
            part: "*",
            why: "nginx has no zstd for static files: br goes out (and nosniff is not in nginx-map's lines)",
        },
        Excuse {
            cases: &["a script is never a kept page, whatever the request"],
            part: "body",
            why: "nginx has no zstd for static files: br goes out, with the Cache-Control the case holds it to",
        },
        Excuse {
            cases: &["*"],
            part: "Content-Type",
            why: "nginx types by its mime.types (application/javascript; text/html and text/plain without charset), which a browser reads the same",
        },
        Excuse {
            cases: &["identity;q=0 and nothing else acceptable: 406"],
            part: "status",
            why: "nginx sends the file whatever Accept-Encoding refuses",
        },
        Excuse {
            cases: &["POST is not allowed"],
            part: "Allow",
            why: "nginx's 405 has no Allow",
        },
        Excuse {
            cases: &["a range of identity"],
            part: "Accept-Ranges",
            why: "nginx sends no Accept-Ranges with a 206",
        },
        Excuse {
            cases: &["If-Unmodified-Since that is no HTTP date is ignored"],
            part: "status",
            why: "412: nginx takes a date it cannot parse for one before the file; no directive touches If-Unmodified-Since (if_modified_since is If-Modified-Since's)",
        },
        Excuse {
            cases: &["If-Modified-Since with the wrong weekday is no date"],
            part: "status",
            why: "304: nginx's date parser skips the weekday, so the date is read as 2100",
        },
        Excuse {
            cases: &[
                "a range to past 2^64: the rest of the file",
                "a suffix of more than 2^64 bytes: the whole file",
                "a range past 2^64 whose last position is before its first: ignored",
            ],
            part: "status",
            why: "416: nginx's range parser refuses a position past its 63-bit off_t outright, before reading it as past the end; only max_ranges 0 changes that, by turning every range off",
        },
    ],
};

#[test]
#[ignore = "e2e tier: needs nginx; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn nginx_answers_the_shared_table() {
    let tmp = tempfile::tempdir().unwrap();
    let (site, maps) = site_and_config(tmp.path(), "nginx-map");
    let server = start_nginx_from(
        "nginx-site.conf",
        &site,
        tmp.path(),
        &[("@MAPS@", maps.to_str().unwrap())],
    );
    let failures = run_table(&table(), tmp.path(), &site, server.addr, &NGINX);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Caddy 2.6 with docs/servers.md's deltas setup and a site's conventions
/// (`e2e/Caddyfile-site`, for any host): everything but a rebuild, its own
/// ETags.
const CADDY: Profile = Profile {
    supports: &["hosts", "conditional", "range", "pages"],
    own_etags: true,
    reads_manifest: true,
    length_optional: false,
    absolute_location: true,
    list_headers: &["Vary"],
    excuses: &[
        Excuse {
            cases: &[
                "nothing there: the 404 page with 404",
                "the 404 page is never a 304",
            ],
            part: "*",
            why: "Caddy breaks a tie between codings weighted alike by its `precompressed` order (zstd first), not by size, and handle_errors does not import caddy-map's snippet (which sends br where it is smaller): the 404 page's zstd is larger than its br",
        },
        Excuse {
            cases: &["a variant is not served by its own name"],
            part: "body",
            why: "refused, with the 404 page in zstd where its br is smaller (handle_errors, as above)",
        },
        Excuse {
            cases: &["a browser gets the smallest variant it accepts"],
            part: "X-Content-Type-Options",
            why: "not in caddy-map's snippet",
        },
        Excuse {
            cases: &[
                "a browser gets the smallest variant it accepts",
                "no ranges of a compressed variant: the whole of it",
            ],
            part: "*",
            why: "Caddy offers and serves ranges of a compressed variant (Accept-Ranges, 206)",
        },
        Excuse {
            cases: &["identity;q=0 and nothing else acceptable: 406"],
            part: "status",
            why: "Caddy sends the file whatever Accept-Encoding refuses",
        },
        Excuse {
            cases: &["HEAD: the headers of GET, no body"],
            part: "body",
            why: "no Content-Length on a HEAD of a compressed response (Go's rule when Content-Encoding is set)",
        },
        Excuse {
            cases: &[
                "a folder without its slash is redirected, query kept",
                "an absolute-form target of a folder is redirected by its path",
                "a fragment after the query is not part of the query",
            ],
            part: "status",
            why: "308, not 301: file_server's own redirect (Caddy 2.6's drops the query too)",
        },
        Excuse {
            cases: &["traversal is refused", "an encoded separator is refused"],
            part: "status",
            why: "404, not 400: Caddy cleans the path and finds nothing",
        },
        Excuse {
            cases: &["POST is not allowed"],
            part: "status",
            why: "Caddy's file_server answers POST with the file",
        },
        Excuse {
            cases: &["If-Modified-Since with the wrong weekday is no date"],
            part: "status",
            why: "304: Go's date parser checks a weekday's spelling, not that it is the date's",
        },
        Excuse {
            cases: &[
                "a range to past 2^64: the rest of the file",
                "a suffix of more than 2^64 bytes: the whole file",
                "a range past 2^64 whose last position is before its first: ignored",
            ],
            part: "status",
            why: "416: Go's range parser refuses a position past its int64 outright, before reading it as past the end",
        },
        Excuse {
            cases: &["a range from past 2^64: 416"],
            part: "Content-Range",
            why: "Go's 416 for a Range it cannot parse has no Content-Range",
        },
        Excuse {
            cases: &["a fragment in the target is not part of the path"],
            part: "status",
            why: "404: Go's server keeps a '#' of the target in the path; a rewrite of the raw target ({http.request.orig_uri}) to what precedes it serves a plain name but not an escaped one (Caddy 2.6's rewrite leaves /%61bout.html literal), so e2e/Caddyfile-site has none",
        },
    ],
};

#[test]
#[ignore = "e2e tier: needs Caddy; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn caddy_answers_the_shared_table() {
    let tmp = tempfile::tempdir().unwrap();
    let (site, snippet) = site_and_config(tmp.path(), "caddy-map");
    let server = start_caddy_from(
        "Caddyfile-site",
        &site,
        tmp.path(),
        &[("@SNIPPET@", snippet.to_str().unwrap())],
    );
    let failures = run_table(&table(), tmp.path(), &site, server.addr, &CADDY);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `precompress check --url` on the table's site behind each server: exit 0.
#[test]
#[ignore = "e2e tier: needs Apache, nginx and Caddy; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn check_url_passes_against_each_server() {
    type Start = fn(&Path, &Path, &Path) -> Server;
    let servers: [(&str, Start); 3] = [
        ("apache-map", |site, config, work| {
            start_apache(site, config, work)
        }),
        ("nginx-map", |site, maps, work| {
            start_nginx_from(
                "nginx-site.conf",
                site,
                work,
                &[("@MAPS@", maps.to_str().unwrap())],
            )
        }),
        ("caddy-map", |site, snippet, work| {
            start_caddy_from(
                "Caddyfile-site",
                site,
                work,
                &[("@SNIPPET@", snippet.to_str().unwrap())],
            )
        }),
    ];
    for (generator, start) in servers {
        let tmp = tempfile::tempdir().unwrap();
        let (site, config) = site_and_config(tmp.path(), generator);
        let server = start(&site, &config, tmp.path());
        let out = precompress(&[
            "check".as_ref(),
            "--url".as_ref(),
            format!("http://{}/", server.addr).as_ref(),
            site.as_os_str(),
        ]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{generator}: {text}");
        assert!(text.contains("0 with problems"), "{generator}: {text}");
    }
}

/// The coding cases, as a server that knows no manifest answers them: its
/// own types (application/javascript; text/html and text/plain without a
/// charset, the same to a browser).
const OWN_TYPES: Excuse = Excuse {
    cases: &["*"],
    part: "Content-Type",
    why: "its own types, not the manifest's",
};

/// A server that sends siblings (no manifest) started on the table's folder
/// by `start` (the folder, a work folder), and the table run against it.
fn siblings_answer_the_table(profile: &Profile, start: impl FnOnce(&Path, &Path) -> Server) {
    let tmp = tempfile::tempdir().unwrap();
    let site = build(&table(), tmp.path());
    settle_mtimes(&site);
    let server = start(&site, tmp.path());
    let failures = run_table(&table(), tmp.path(), &site, server.addr, profile);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// h2o 2.2 with `file.send-compressed` (`e2e/h2o.conf`): the siblings it
/// finds beside a file, no manifest; sent the table's cases that need no site
/// conventions, conditionals or ranges (its own static-file rules).
const H2O: Profile = Profile {
    supports: &[],
    own_etags: true,
    reads_manifest: false,
    length_optional: false,
    absolute_location: true,
    list_headers: &["Vary"],
    excuses: &[
        Excuse {
            cases: ZSTD_CASES,
            part: "*",
            why: "h2o 2.2 sends .br and .gz, not .zst: br goes out",
        },
        OWN_TYPES,
        Excuse {
            cases: &["identity;q=0 and nothing else acceptable: 406"],
            part: "status",
            why: "h2o sends the file whatever Accept-Encoding refuses",
        },
        Excuse {
            cases: &["a file too small for variants: identity, no Vary"],
            part: "Vary",
            why: "h2o varies every response of a compressible type, siblings or not (harmless)",
        },
        Excuse {
            cases: &[
                "an absolute-form target is served by its path (RFC 9112 3.2.2)",
                "a fragment in the target is not part of the path",
            ],
            part: "status",
            why: "404: h2o 2.2 looks up the whole target as the path, scheme and host or '#' and all; its configuration has no rewrite (only an mruby handler in front of every request could change it, which this setup of its own file serving does not try)",
        },
    ],
};

#[test]
#[ignore = "e2e tier: needs h2o; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn h2o_sends_the_siblings_the_table_asks_for() {
    siblings_answer_the_table(&H2O, start_h2o);
}

/// lighttpd 1.4 with `e2e/lighttpd-siblings.lua` (mod_magnet): the siblings
/// beside a file, negotiated as `serve` negotiates, no manifest.
const LIGHTTPD: Profile = Profile {
    supports: &[],
    own_etags: true,
    reads_manifest: false,
    length_optional: false,
    absolute_location: true,
    list_headers: &["Vary"],
    excuses: &[
        Excuse {
            cases: &["a name with a newline: its variant, negotiated"],
            part: "status",
            why: "400: lighttpd refuses a control character in the decoded path (server.http-parseopts url-ctrls-reject); turned off, it makes the newline a '_' and answers 404, so no setting serves the name",
        },
        Excuse {
            cases: &["an absolute-form target is served by its path (RFC 9112 3.2.2)"],
            part: "status",
            why: "400: lighttpd reads the target's host as a Host field and refuses a Host that differs (\"duplicate Host header\"), where RFC 9112 says to ignore it; the runner sends the listener's; no setting changes it",
        },
    ],
};

#[test]
#[ignore = "e2e tier: needs lighttpd; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn lighttpd_sends_the_siblings_the_table_asks_for() {
    siblings_answer_the_table(&LIGHTTPD, start_lighttpd);
}

/// static-web-server with `--compression-static`: the siblings beside a file,
/// no manifest.
const STATIC_WEB_SERVER: Profile = Profile {
    supports: &[],
    own_etags: true,
    reads_manifest: false,
    length_optional: true,
    absolute_location: true,
    list_headers: &["Vary"],
    excuses: &[
        Excuse {
            cases: &["*"],
            part: "ETag",
            why: "static-web-server sends no ETag (Last-Modified only)",
        },
        OWN_TYPES,
        Excuse {
            cases: &["a page: its variant, revalidated"],
            part: "*",
            why: "it breaks a tie between codings weighted alike by its own order (zstd first), not by size",
        },
        Excuse {
            cases: &["a browser gets the smallest variant it accepts"],
            part: "Accept-Ranges",
            why: "it offers ranges of a compressed file",
        },
        Excuse {
            cases: &["identity;q=0 and nothing else acceptable: 406"],
            part: "status",
            why: "it sends the file whatever Accept-Encoding refuses",
        },
        Excuse {
            cases: &["a file too small for variants: identity, no Vary"],
            part: "Vary",
            why: "it varies every response of a compressible type, siblings or not (harmless)",
        },
    ],
};

/// Not run by default: `.ci/e2e.sh` does not install static-web-server, whose
/// only registry package is its source (minutes of `cargo install` on CI's two
/// cores). `cargo install static-web-server`, then `cargo test --test
/// serve_servers -- --ignored` (`STATIC_WEB_SERVER` may name the binary).
#[test]
#[ignore = "needs static-web-server, which CI does not build (see docs/servers.md)"]
fn static_web_server_sends_the_siblings_the_table_asks_for() {
    siblings_answer_the_table(&STATIC_WEB_SERVER, |site, _| start_static_web_server(site));
}
