//! Every generated configuration through the shared table,
//! `fixtures/serve-cases.json`: real Apache httpd 2.4 (`apache-map`), nginx
//! 1.22 (`nginx-map`) and Caddy 2.6 (`caddy-map`) started on the table's
//! release pair, sent its cases by the runner `tests/serve_cases.rs` uses
//! (`serve_util::cases`). Each server's profile says what it does not do at
//! all and, case by case, where it answers otherwise and why; an excuse that
//! stops matching fails the test, so a change to the table shows at once
//! which server falls behind. `precompress check --url` passes against each.

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
    supports: &["hosts", "conditional", "range"],
    own_etags: true,
    absolute_location: true,
    list_headers: &["Vary"],
    excuses: &[
        Excuse {
            case: "an encoded separator is refused",
            part: "status",
            why: "404: AllowEncodedSlashes Off refuses %2F with 404 before any module sees it",
        },
        Excuse {
            case: "POST is not allowed",
            part: "Allow",
            why: "Apache adds its own Allow: TRACE (TraceEnable is on by default) beside GET, HEAD",
        },
        Excuse {
            case: "If-Modified-Since later than the file: 304",
            part: "status",
            why: "the table's date is in 2100; Apache ignores a date in the future (RFC 7232 calls it invalid); a past one gets 304 (tested below)",
        },
        Excuse {
            case: "If-Unmodified-Since before the file: 412",
            part: "status",
            why: "the table's date is the epoch, which APR parses as its error value 0; a later one gets 412 (tested below)",
        },
        Excuse {
            case: "a range past the end: 416",
            part: "Content-Range",
            why: "Apache's 416 has no Content-Range",
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

#[test]
fn apache_answers_the_shared_table() {
    let failures = apache_table(|c| c);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The runner has teeth: Apache with a configuration that lost one thing
/// (zstd, the dictionary pairs, the manifest's types, the guards) fails the
/// table on exactly the cases that need it.
#[test]
fn a_broken_apache_config_fails_the_table() {
    let broken: [(&str, fn(String) -> String, &str); 4] = [
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
