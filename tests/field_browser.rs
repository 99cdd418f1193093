//! Deltas in the field, in a real browser. For each framework, its real
//! build from the registry (`e2e/apps/APP`, built three times by
//! `e2e/apps/build.sh`: release 1, then a few lines changed in a component
//! and a stylesheet, twice), precompressed as a user would, the earlier
//! releases found through a cache folder (the integrations' default),
//! through `--dictionary-from` folders, and taken from the live site with no
//! cache and no earlier folder (`--dictionary-from http://…`: release 1
//! served by `precompress serve`, release 2 by python's `http.server`), served by `precompress serve` from a
//! symlink a deploy swaps, and visited by headless Chromium
//! (`e2e/field.mjs`): a first-time visitor of each release, and one visitor
//! who comes back after each. Asserted, per release and per way: every page
//! rendered the new release with no console error; every script and
//! stylesheet that changed decoded to the new file, and came as `dcb` or
//! `dcz` unless the run found no delta smaller than its brotli variant;
//! the returning visitor downloaded at most 10% of a first visit's JS and
//! CSS (with no dictionaries at all), dictionaries included, and at most 5%
//! of its whole download; a first visit downloaded at most 25% more than
//! with no dictionaries, any dictionary fetched at idle included, and what
//! it fetched at idle was at most 2% of its whole download. Measured before this work, on the
//! same builds: a first visit paid 78% more on SvelteKit and 93% more on
//! Nuxt (the shared dictionary every page linked).
//!
//! The apps' installs and builds are kept in `target/field/APP` (a rerun
//! reuses `node_modules`); `.ci/e2e.sh` installs Chromium and playwright-core.

mod serve_util;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;
use serve_util::{common, repo};

/// One framework at a time: a build takes both cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Chromium and playwright-core, as `.ci/e2e.sh` installs them.
fn browser_ready() {
    let e2e = repo().join("e2e");
    assert!(
        e2e.join("node_modules/playwright-core").is_dir()
            && std::path::Path::new("/usr/lib/chromium/chromium").exists(),
        "Chromium or playwright-core missing: run `bash .ci/e2e.sh`"
    );
}

/// `node e2e/SCRIPT ARGS` in the ways of finding the earlier releases the
/// tests visit. The store and the live site: what CI and a plugin use. The
/// folders (`from`, as --dictionary-from DIR) make the same deltas from the
/// same bytes, and tests/deltas.rs and tests/field.rs hold them; a third
/// round of visits here cost CI minutes (bench/field.sh runs all three).
fn e2e_script(script: &str, args: &[&std::ffi::OsStr]) -> Value {
    serve_util::browser::e2e_script(script, args, &[("FIELD_MODES", &FIELD_MODES.join(","))])
}

/// The ways of finding the earlier releases the tests visit (e2e/field.mjs).
const FIELD_MODES: [&str; 2] = ["cache", "site"];

/// A returning visitor downloads at most this share of a first visit's JS and CSS.
const RETURNING_MAX: f64 = 0.10;

/// ... and at most this share of a first visit's whole download (every
/// response: pages, scripts, styles, images, dictionaries), pages included
/// since each page is the dictionary of its next version (issue #45).
const RETURNING_WHOLE_MAX: f64 = 0.05;

/// A first visit downloads at most this much more than with no dictionaries.
const FIRST_VISIT_EXTRA_MAX: f64 = 0.25;

/// ... and what it fetches at idle for dictionaries is at most this share
/// of its whole download (issue #45; `--shared-dictionary auto`'s budget).
const IDLE_MAX: f64 = 0.02;

fn field(app: &str) -> Value {
    browser_ready();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work: PathBuf = repo().join("target/field").join(app);
    let build = Command::new("bash")
        .arg(repo().join("e2e/apps/build.sh"))
        .arg(app)
        .arg(&work)
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "build.sh {app} failed:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let r = e2e_script("field.mjs", &[app.as_ref(), work.as_os_str()]);
    for (mode, m) in r["modes"].as_object().unwrap() {
        for (i, f) in m["first"].as_array().unwrap().iter().enumerate() {
            let back = &m["returning"][i];
            eprintln!(
                "{app} ({mode}) release {}: first visit {} B with no dictionaries, {} B with them ({} B at idle, {:+.1}%); returning {}",
                i + 1,
                r["none"][i],
                f["total"],
                f["dictionaries"],
                f["extra"].as_f64().unwrap() * 100.0,
                if i == 0 {
                    "-".to_string()
                } else {
                    format!(
                        "{} B ({} B of dictionaries): {:.2}%; whole visit {} B of a first visit's {} B: {:.2}%",
                        back["total"],
                        back["dictionaries"],
                        back["ratio"].as_f64().unwrap() * 100.0,
                        back["whole"],
                        r["noneWhole"][i],
                        back["wholeRatio"].as_f64().unwrap() * 100.0
                    )
                }
            );
        }
    }
    r
}

/// What every app must show, for each way of finding the earlier releases
/// and each release of the series.
fn assert_deltas_reach_returning_visitors_and_cost_first_visits_little(r: &Value) {
    let app = r["app"].as_str().unwrap();
    assert_eq!(r["errors"], serde_json::json!([]), "{app}: {r:#}");
    assert_eq!(r["failed"], serde_json::json!([]), "{app}: {r:#}");
    let modes = r["modes"].as_object().unwrap();
    assert_eq!(
        modes.keys().collect::<Vec<_>>(),
        FIELD_MODES,
        "{app}: the store and the live site"
    );
    for (mode, m) in modes {
        let first = m["first"].as_array().unwrap();
        let back = m["returning"].as_array().unwrap();
        assert!(
            first.len() >= 3 && back.len() == first.len(),
            "{app}: a series of 3"
        );
        for (i, f) in first.iter().enumerate() {
            // A first visit's whole download pays no more than its code does.
            assert!(
                f["wholeExtra"].as_f64().unwrap() <= f["extra"].as_f64().unwrap().max(0.0),
                "{app} ({mode}) release {}: {f}",
                i + 1
            );
            let idle = f["dictionaries"].as_f64().unwrap();
            assert!(
                idle <= IDLE_MAX * f["whole"].as_f64().unwrap(),
                "{app} ({mode}) release {}: a first visit fetched {idle} B of dictionaries at idle: {f}",
                i + 1
            );
            let extra = f["extra"].as_f64().unwrap();
            assert!(
                extra <= FIRST_VISIT_EXTRA_MAX,
                "{app} ({mode}) release {}: a first visit downloaded {:.1}% more than with no dictionaries: {f}",
                i + 1,
                extra * 100.0
            );
        }
        for i in 1..back.len() {
            let (seen, now) = (
                back[i - 1]["pages"].as_array().unwrap(),
                back[i]["pages"].as_array().unwrap(),
            );
            // Every page rendered, and rendered the new release where it shows it.
            assert_eq!(seen.len(), now.len());
            let mut shown = 0;
            for (a, b) in seen.iter().zip(now) {
                assert_eq!(b["status"], 200, "{app} ({mode}): {b}");
                if !a["release"].is_null() {
                    assert_ne!(
                        a["release"], b["release"],
                        "{app} ({mode}): release {i} still shown: {b}"
                    );
                    shown += 1;
                }
            }
            assert!(shown > 0, "{app}: no page shows its release: {now:?}");
            // Every changed script and stylesheet decoded to the new file, and
            // came as a delta, unless no delta was smaller than its brotli
            // variant, or it is below the dictionary threshold (a delta's own
            // 36-40 byte header is most of such a file).
            let changed = back[i]["changed"].as_array().unwrap();
            assert!(!changed.is_empty(), "{app}: nothing changed? {r:#}");
            for c in changed {
                assert_eq!(c["decodesToTheFile"], true, "{app} ({mode}): {c}");
                let small =
                    c["size"].as_u64().unwrap() < precompressor::dictionary::DICTIONARY_MIN_SIZE;
                let coding = c["contentEncoding"].as_str().unwrap_or("identity");
                assert!(
                    small || coding == "dcb" || coding == "dcz" || c["deltaNotSmaller"] == true,
                    "{app} ({mode}) release {}: {} came as {coding}, not a delta: {c}",
                    i + 1,
                    c["url"]
                );
            }
            let ratio = back[i]["ratio"].as_f64().unwrap();
            assert!(
                ratio <= RETURNING_MAX,
                "{app} ({mode}) release {}: the returning visitor downloaded {:.1}% of a first visit",
                i + 1,
                ratio * 100.0
            );
            // The whole visit, pages included: every page that came is the
            // release's file.
            for d in back[i]["documents"].as_array().unwrap() {
                assert_eq!(d["decodesToTheFile"], true, "{app} ({mode}): {d}");
            }
            let whole = back[i]["wholeRatio"].as_f64().unwrap();
            assert!(
                whole <= RETURNING_WHOLE_MAX,
                "{app} ({mode}) release {}: the returning visitor downloaded {:.1}% of a first visit's whole download: {}",
                i + 1,
                whole * 100.0,
                back[i]["documents"]
            );
        }
    }
}

#[test]
#[ignore = "e2e tier: needs Chromium, node and the npm registry; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn vite_react_under_a_base_path_with_same_named_lazy_chunks() {
    let r = field("vite-react");
    assert_eq!(r["base"], "/app/");
    assert_deltas_reach_returning_visitors_and_cost_first_visits_little(&r);
    the_report_s_returning_visitor_is_what_chromium_downloaded("vite-react", &r);
}

/// Issue #47: the report's headline (`report --json`: the landing page and
/// its lazy routes) on the last release the field deployed with the store,
/// back from the release before it, against what Chromium's returning
/// visitor of that release downloaded (every response on the wire): within
/// 10%, and its first visit too.
fn the_report_s_returning_visitor_is_what_chromium_downloaded(app: &str, r: &Value) {
    let work = repo().join("target/field").join(app);
    let last = r["releases"].as_u64().unwrap_or(3);
    let (this, before) = (
        work.join(format!("cache-{last}")),
        work.join(format!("cache-{}", last - 1)),
    );
    // The release before it, as its folder publishes it: field.mjs empties
    // the store before each mode.
    let figures: Value = serde_json::from_str(&common::succeeds(&[
        "report".as_ref(),
        this.as_os_str(),
        "--json".as_ref(),
        "--no-cache".as_ref(),
        "--dictionary-from".as_ref(),
        before.as_os_str(),
    ]))
    .unwrap();
    let h = &figures["headline"];
    let i = (last - 1) as usize;
    let chromium_back = r["modes"]["cache"]["returning"][i]["whole"]
        .as_u64()
        .unwrap();
    let chromium_first = r["modes"]["cache"]["first"][i]["whole"].as_u64().unwrap();
    // The field's visitor opens the lazy routes too (visit.mjs clicks each).
    let back = h["returning"].as_u64().unwrap() + h["lazy_returning"].as_u64().unwrap_or(0);
    let first = h["first"].as_u64().unwrap() + h["lazy"].as_u64().unwrap();
    eprintln!("{app}: the report's returning visitor {back} B, Chromium's {chromium_back} B; first visit {first} B, Chromium's {chromium_first} B");
    let within = |a: u64, b: u64| (a as f64 - b as f64).abs() <= 0.10 * b as f64;
    assert!(
        within(back, chromium_back),
        "{app}: the report says {back} B back, Chromium downloaded {chromium_back} B: {h}"
    );
    assert!(
        within(first, chromium_first),
        "{app}: the report says {first} B first, Chromium downloaded {chromium_first} B: {h}"
    );
}

#[test]
#[ignore = "e2e tier: needs Chromium, node and the npm registry; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn sveltekit_with_adapter_static() {
    assert_deltas_reach_returning_visitors_and_cost_first_visits_little(&field("sveltekit"));
    // On a slow phone's network every first visit lost the race on main
    // (10 of 10: the code dictionary whole, 14,558 B, instead of 1,635 B;
    // bench/results/first-visit-race-20261205.md).
    let refused = slow_phone_first_visits_never_fetch_the_code_dictionary_whole("sveltekit");
    assert!(refused > 0, "no visit met the race: the test shows nothing");
}

#[test]
#[ignore = "e2e tier: needs Chromium, node and the npm registry; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn astro_static_with_a_client_island() {
    assert_deltas_reach_returning_visitors_and_cost_first_visits_little(&field("astro"));
}

#[test]
#[ignore = "e2e tier: needs Chromium, node and the npm registry; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn nuxt_generate() {
    let r = field("nuxt");
    // Every small chunk imports the entry and changes with it. Holding them
    // all, the code dictionary cost a first visit 4.0% of its download at
    // idle; `auto` holds it to 2% ([`IDLE_MAX`]), which on this build leaves
    // none (a returning visitor gets the page's chunk as a delta against
    // the entry instead), and any it makes lies in the entry's folder.
    for mode in FIELD_MODES {
        for d in r["modes"][mode]["sharedDictionary"].as_array().unwrap() {
            if let Some(d) = d.as_str() {
                assert!(
                    d.starts_with("_nuxt/precompress-dictionary-") && d.ends_with(".js"),
                    "{mode}: {d}"
                );
            }
        }
    }
    assert_deltas_reach_returning_visitors_and_cost_first_visits_little(&r);
    slow_phone_first_visits_never_fetch_the_code_dictionary_whole("nuxt");
}

/// First visits of a slow phone: fresh profiles in Chromium on a slow
/// network (`VISIT_NETWORK=slow`: 400 ms round trips, 50 KB/s).
const SLOW_VISITS: usize = 3;

/// Issue #46: the code dictionary a page links is fetched at idle, and is
/// cheap only as a delta against the chunk the page loaded; when the fetch
/// came before that chunk was stored as a dictionary, the visit paid for
/// the whole file. Release 1 of `app` (as `field` built it), precompressed,
/// served by `precompress serve`, and [`SLOW_VISITS`] first visits of its
/// home page then its about page: every answer for the code dictionary is
/// a 204 (nothing held yet), a delta, or the cache's; what the visit pays
/// for it is at most its largest delta. Returns how many of those answers
/// were 204 (the race met and refused).
fn slow_phone_first_visits_never_fetch_the_code_dictionary_whole(app: &str) -> usize {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("release-1");
    let release = repo().join("target/field").join(app).join("release-1");
    let cp = Command::new("cp")
        .arg("-r")
        .arg(&release)
        .arg(&site)
        .status()
        .unwrap();
    assert!(cp.success());
    // `on`: the race concerns any code dictionary, whether `auto`'s
    // budget makes one for this build or not.
    common::succeeds(&[
        "--no-config".as_ref(),
        "-q".as_ref(),
        "--shared-dictionary".as_ref(),
        "on".as_ref(),
        site.as_os_str(),
    ]);
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(site.join("precompress-manifest.json")).unwrap())
            .unwrap();
    let key = manifest["shared_dictionary"]
        .as_str()
        .unwrap_or_else(|| panic!("{app}: no code dictionary"));
    let largest_delta = manifest["files"][key]["deltas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["size"].as_u64().unwrap())
        .max()
        .unwrap_or_else(|| panic!("{app}: no delta of {key}"));
    let n = SLOW_VISITS.to_string();
    let env = [
        ("VISITS", n.as_str()),
        ("VISIT_FRESH", "1"),
        ("VISIT_NETWORK", "slow"),
    ];
    let visits = visits_of(&site, &["/", "/about/"], &env);
    assert_eq!(visits.len(), SLOW_VISITS);
    let mut refused = 0;
    for v in &visits {
        let fetches: Vec<&Value> = v["responses"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["url"].as_str().unwrap().ends_with(&format!("/{key}")))
            .collect();
        let paid: u64 = fetches
            .iter()
            .map(|r| r["encodedBytes"].as_u64().unwrap_or(0))
            .sum();
        eprintln!(
            "{app}: slow first visit {}: the code dictionary {:?}",
            v["visit"],
            fetches
                .iter()
                .map(|r| format!(
                    "{} {} B{}",
                    r["status"],
                    r["encodedBytes"],
                    r["contentEncoding"]
                        .as_str()
                        .map(|c| format!(" {c}"))
                        .unwrap_or_default()
                ))
                .collect::<Vec<_>>()
        );
        for r in &fetches {
            let (status, bytes) = (
                r["status"].as_u64().unwrap(),
                r["encodedBytes"].as_u64().unwrap_or(0),
            );
            let delta = r["contentEncoding"]
                .as_str()
                .is_some_and(|c| c == "dcb" || c == "dcz");
            assert!(
                (status == 204 && bytes == 0) || (status == 200 && (delta || bytes == 0)),
                "{app}: visit {}: the code dictionary came {status}, {bytes} B, {:?}: {r}",
                v["visit"],
                r["contentEncoding"]
            );
            refused += usize::from(status == 204);
        }
        assert!(
            paid <= largest_delta,
            "{app}: visit {} paid {paid} B for the code dictionary, more than its largest delta ({largest_delta} B)",
            v["visit"]
        );
    }
    refused
}

/// Where Debian's python3.11-doc puts Python's HTML documentation.
const PYTHON_DOCS: &str = "/usr/share/doc/python3.11/html";

/// The documents dictionary on real multi-page HTML: pages of Python's
/// documentation as two releases (`e2e/documents.mjs`). A first-time
/// visitor opens five pages: the first comes as br and links the
/// dictionary, fetched at idle; every later one comes as a delta against
/// it. After the deploy the visitor comes back: every page, and the next
/// dictionary, comes as a delta; every body decodes to the file on disk.
#[test]
#[ignore = "e2e tier: needs Chromium, node and python3.11-doc; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn python_docs_pages_come_as_deltas_against_the_documents_dictionary() {
    browser_ready();
    assert!(
        std::path::Path::new(PYTHON_DOCS).join("library").is_dir(),
        "{PYTHON_DOCS} missing: run `bash .ci/e2e.sh` (python3.11-doc)"
    );
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = repo().join("target/field/documents");
    let r = e2e_script("documents.mjs", &[PYTHON_DOCS.as_ref(), work.as_os_str()]);
    assert_eq!(r["errors"], serde_json::json!([]), "{r:#}");
    assert_eq!(r["failed"], serde_json::json!([]), "{r:#}");
    let dicts = r["documentsDictionary"].as_array().unwrap();
    assert!(dicts.iter().all(|d| d.is_string()), "{r:#}");
    let delta = |d: &Value| matches!(d["contentEncoding"].as_str(), Some("dcb" | "dcz"));
    let first = r["first"]["documents"].as_array().unwrap();
    let returning = r["returning"]["documents"].as_array().unwrap();
    assert_eq!((first.len(), returning.len()), (5, 5), "{r:#}");
    for d in first.iter().chain(returning) {
        assert_eq!(d["decodesToTheFile"], true, "{d}");
    }
    assert!(!delta(&first[0]), "no dictionary yet: {}", first[0]);
    for d in first[1..].iter().chain(returning) {
        assert!(delta(d), "not a delta: {d}");
    }
    // The next dictionary itself came as a delta against the one held.
    let fetched = r["dictionaryFetches"][1].as_array().unwrap();
    assert!(
        fetched.iter().any(
            |f| matches!(f["contentEncoding"].as_str(), Some("dcb" | "dcz"))
                && f["encodedBytes"].as_u64().unwrap() > 0
        ),
        "{fetched:?}"
    );
    let (bytes, br, dict) = (
        r["returning"]["bytes"].as_u64().unwrap(),
        r["returning"]["brBytes"].as_u64().unwrap(),
        r["returning"]["dictionaries"].as_u64().unwrap(),
    );
    eprintln!(
        "python docs: first visit {} B + {} B dictionary (br {} B); returning {bytes} B + {dict} B (br {br} B)",
        r["first"]["bytes"], r["first"]["dictionaries"], r["first"]["brBytes"]
    );
    assert!(bytes + dict < br, "returning {bytes} + {dict} B, br {br} B");
}

/// The visits `e2e/apps/visit.mjs` makes of `pages` on `precompress serve
/// DIR`, with `env` (`VISITS`, ...) and no input: one JSON value each.
fn visits_of(dir: &std::path::Path, pages: &[&str], env: &[(&str, &str)]) -> Vec<Value> {
    let server = serve_util::start_precompress(dir, &["-q"]);
    let out = Command::new("node")
        .arg(repo().join("e2e/apps/visit.mjs"))
        .arg(format!("http://localhost:{}", server.addr.port()))
        .args(pages)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "visit.mjs: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

/// One first visit of `/` on `precompress serve DIR` in Chromium: (bytes of
/// scripts, bytes of dictionaries fetched at idle), as Chromium counts them.
fn first_visit_bytes(dir: &std::path::Path) -> (u64, u64) {
    let visit = &visits_of(dir, &["/"], &[("VISITS", "1")])[0];
    let (mut code, mut dictionaries) = (0, 0);
    for r in visit["responses"].as_array().unwrap() {
        let bytes = r["encodedBytes"].as_u64().unwrap_or(0);
        let url = r["url"].as_str().unwrap();
        if url.contains("/precompress-dictionary-") {
            dictionaries += bytes;
        } else if url.ends_with(".js") {
            code += bytes;
        }
    }
    (code, dictionaries)
}

/// Issue #36: on a tree whose largest chunk that imports another is a lazy
/// admin route, the home page's first visit fetched the code dictionary
/// whole at idle (11.7x its JS) while the summary said a few KiB. Now, by
/// default, what a first visit fetches at idle stays within the documented
/// tenth of its JS; and with `--shared-dictionary on` (a dictionary whatever
/// it costs) the summary's figure is what Chromium fetched.
#[test]
#[ignore = "e2e tier: needs Chromium and node; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn a_lazy_route_never_makes_a_first_visit_fetch_a_dictionary_whole() {
    browser_ready();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for mode in ["auto", "on"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("site");
        serve_util::lazy_route_tree(&dir);
        let report: Value = serde_json::from_str(&common::succeeds(&[
            "--no-config".as_ref(),
            "--json".as_ref(),
            "--shared-dictionary".as_ref(),
            mode.as_ref(),
            dir.as_os_str(),
        ]))
        .unwrap();
        let said = report["run"]["first_visit"]["linked_bytes"]
            .as_u64()
            .unwrap();
        let (code, dictionaries) = first_visit_bytes(&dir);
        eprintln!("{mode}: a first visit fetched {code} B of JS and {dictionaries} B of dictionaries; the summary said {said} B");
        assert!(code > 0);
        assert_eq!(
            dictionaries, said,
            "{mode}: the summary's figure is not what Chromium fetched"
        );
        if mode == "auto" {
            assert!(
                dictionaries as f64 <= 0.10 * code as f64,
                "a first visit fetched {dictionaries} B of dictionaries for {code} B of JS"
            );
        }
    }
}
