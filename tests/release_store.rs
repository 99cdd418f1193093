//! The release store as pipelines use it (issue 35): several apps sharing one
//! cache folder, a sharded site, `check --cache-dir`, and a plain rerun after
//! a run that had the store. Each test is a reproduction that failed before
//! its fix: apps pushed each other's releases out and paired across sites, a
//! sharded run never recorded a release, `check` refused `--cache-dir`, and a
//! rerun with no store removed every delta as stale.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::cargo::cargo_bin;
use serde_json::Value;

/// `precompress ARGS` (in temp folders with no package.json above: no
/// default cache), its output.
fn bin(args: &[&OsStr]) -> Output {
    std::process::Command::new(cargo_bin("precompress"))
        .args(args)
        .env_remove("PRECOMPRESS_CACHE_DIR")
        .output()
        .unwrap()
}

/// A run: `precompress ARGS --no-config`.
fn precompress(args: &[&OsStr]) -> Output {
    bin(&[args, &["--no-config".as_ref()]].concat())
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "precompress failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("precompress-manifest.json")).unwrap()).unwrap()
}

/// The `dictionary_path` of each delta of `js` in `dir`'s manifest, sorted.
fn deltas_of(dir: &Path, js: &str) -> Vec<String> {
    let mut d: Vec<String> = manifest(dir)["files"][js]["deltas"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|d| d["dictionary_path"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default();
    d.sort();
    d
}

/// Release `n` of app `app` built into `dist` (emptied first), as a bundler
/// would: a page and `assets/index-HASH.js`, whose name says app and release.
/// Every app's script is alike (one template), so a delta against another
/// app's is small too: only the site tells them apart.
fn build(dist: &Path, app: usize, n: usize) -> String {
    let _ = std::fs::remove_dir_all(dist);
    std::fs::create_dir_all(dist.join("assets")).unwrap();
    let js = format!("assets/index-Q{app}x{n}Zk7w.js");
    let mut body = format!("'use strict';\nconst APP = 'app {app}';\n");
    for f in 0..600 {
        let extra = if f % 150 == 3 {
            format!(" + {n}")
        } else {
            String::new()
        };
        body.push_str(&format!(
            "function widget{f}(state) {{ return {{ id: {f}, app: {app}, label: 'widget {f} of app {app}', total: state.count * {f}{extra} }}; }}\n"
        ));
    }
    std::fs::write(dist.join(&js), body).unwrap();
    std::fs::write(
        dist.join("index.html"),
        format!(
            "<!doctype html><title>app {app}, release {n}</title><script src=\"/{js}\"></script>\n"
        ),
    )
    .unwrap();
    js
}

fn with_cache(dist: &Path, cache: &Path, extra: &[&str]) -> String {
    let mut args: Vec<&OsStr> = vec![dist.as_os_str(), "--cache-dir".as_ref(), cache.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    ok(&precompress(&args))
}

/// Five apps of a monorepo share one cache folder, each built and
/// precompressed in turn. Before, the store kept the last 4 releases of all
/// of them and paired by path alone: app 1's second release got 8 deltas
/// against other apps' `assets/index-*.js` and none against its own first.
#[test]
fn apps_sharing_a_cache_keep_their_own_releases_and_never_pair_across() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let dist = |app: usize| tmp.path().join(format!("apps/app-{app}/dist"));
    let mut first = Vec::new();
    for app in 1..=5 {
        first.push(build(&dist(app), app, 1));
        with_cache(&dist(app), &cache, &[]);
        assert_eq!(deltas_of(&dist(app), &first[app - 1]), Vec::<String>::new());
    }
    for app in 1..=5 {
        let js = build(&dist(app), app, 2);
        with_cache(&dist(app), &cache, &[]);
        assert_eq!(
            deltas_of(&dist(app), &js),
            vec![first[app - 1].clone(), first[app - 1].clone()],
            "app {app}: a dcb and a dcz against its own first release, nothing else"
        );
    }
}

/// Release 1 then release 2 of one app into `dist`, with the store in
/// `cache`: release 2's script gets a dcb and a dcz against release 1's.
fn two_releases_with_the_store(dist: &Path, cache: &Path) -> String {
    let js1 = build(dist, 1, 1);
    with_cache(dist, cache, &[]);
    let js2 = build(dist, 1, 2);
    with_cache(dist, cache, &[]);
    assert_eq!(deltas_of(dist, &js2), vec![js1.clone(), js1]);
    js2
}

/// `check DIR --json ARGS`: how many deltas it decoded with their dictionary.
fn decoded_by_check(dist: &Path, with: &[&OsStr]) -> u64 {
    let out = bin(&[
        &["check".as_ref(), "--json".as_ref(), dist.as_os_str()],
        with,
    ]
    .concat());
    let report: Value = serde_json::from_str(&ok(&out)).unwrap();
    report["deltas_decoded"].as_u64().unwrap()
}

/// `precompress check DIR --cache-dir C` was refused ("unexpected argument
/// '--cache-dir'"): it decodes the deltas with C's release store now, as
/// `PRECOMPRESS_CACHE_DIR` does.
#[test]
fn check_decodes_deltas_with_the_store_of_cache_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let (dist, cache) = (tmp.path().join("dist"), tmp.path().join("cache"));
    two_releases_with_the_store(&dist, &cache);
    assert_eq!(
        decoded_by_check(&dist, &["--cache-dir".as_ref(), cache.as_os_str()]),
        2
    );
}

/// A plain rerun with no cache (as `precompress dist` after the Vite
/// plugin's build, which used the store) removed both deltas as stale
/// ("2 removed as stale"). It keeps them now: their source and their bytes
/// are what they were, and their dictionary is what visitors hold.
#[test]
fn a_plain_rerun_with_no_earlier_release_keeps_the_deltas() {
    let tmp = tempfile::tempdir().unwrap();
    let (dist, cache) = (tmp.path().join("dist"), tmp.path().join("cache"));
    let js2 = two_releases_with_the_store(&dist, &cache);
    let before = manifest(&dist);
    let out = ok(&precompress(&[dist.as_os_str()]));
    assert!(out.contains("0 removed as stale"), "{out}");
    assert_eq!(manifest(&dist)["files"][&js2], before["files"][&js2]);
    for d in before["files"][&js2]["deltas"].as_array().unwrap() {
        assert!(dist.join(d["path"].as_str().unwrap()).is_file(), "{d}");
    }
    // And check agrees (the store decodes them).
    let out = std::process::Command::new(cargo_bin("precompress"))
        .args(["check", "--json"])
        .arg(&dist)
        .env("PRECOMPRESS_CACHE_DIR", &cache)
        .output()
        .unwrap();
    let report: Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(report["deltas_decoded"], 2, "{report:#}");
}

/// A sharded site (docs/caching.md's recipe: each shard its own cache, then
/// `merge`) never recorded a release, so it never got a delta from the store.
/// Each shard records the release now; and `merge --cache-dir` records it
/// for a pipeline whose merge step holds the cache.
#[test]
fn a_sharded_site_gets_deltas_from_the_store() {
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");
    let caches: Vec<PathBuf> = (1..=2)
        .map(|k| tmp.path().join(format!("cache-{k}")))
        .collect();
    let sharded = |dist: &Path| {
        for (k, cache) in caches.iter().enumerate() {
            with_cache(dist, cache, &["--shard", &format!("{}/2", k + 1)]);
        }
        ok(&bin(&["merge".as_ref(), dist.as_os_str()]));
    };
    let js1 = build(&dist, 1, 1);
    sharded(&dist);
    let js2 = build(&dist, 1, 2);
    sharded(&dist);
    assert_eq!(deltas_of(&dist, &js2), vec![js1.clone(), js1.clone()]);

    // Shards with no cache; merge records the release in the one it is given.
    let cache = tmp.path().join("merge-cache");
    let site = tmp.path().join("site");
    let js1 = build(&site, 2, 1);
    for k in 1..=2 {
        ok(&precompress(&[
            site.as_os_str(),
            "--shard".as_ref(),
            format!("{k}/2").as_ref(),
        ]));
    }
    ok(&bin(&[
        "merge".as_ref(),
        site.as_os_str(),
        "--cache-dir".as_ref(),
        cache.as_os_str(),
    ]));
    let js2 = build(&site, 2, 2);
    with_cache(&site, &cache, &[]);
    assert_eq!(deltas_of(&site, &js2), vec![js1.clone(), js1]);
}

/// The cache a project's surfaces share with no flag: the Vite plugin's
/// `node_modules/.cache/precompress`, above DIR where a package.json is. Two
/// plain runs give deltas, `check` decodes them with it, `--no-cache` makes
/// none, and DIR's own package.json (a built server's) never puts it in DIR.
#[test]
fn a_project_finds_its_default_cache_from_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join("package.json"), "{}").unwrap();
    let dist = project.join("dist");
    let cache = project.join("node_modules/.cache/precompress");
    let js1 = build(&dist, 1, 1);
    ok(&precompress(&[dist.as_os_str()]));
    assert!(cache.join("releases/v1/index.json").is_file());
    let js2 = build(&dist, 1, 2);
    ok(&precompress(&[dist.as_os_str()]));
    assert_eq!(deltas_of(&dist, &js2), vec![js1.clone(), js1]);
    assert_eq!(decoded_by_check(&dist, &[]), 2);
    assert_eq!(decoded_by_check(&dist, &["--no-cache".as_ref()]), 0);

    // --no-cache: no folder made.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("package.json"), "{}").unwrap();
    build(&other.join("dist"), 2, 1);
    ok(&precompress(&[
        other.join("dist").as_os_str(),
        "--no-cache".as_ref(),
    ]));
    assert!(!other.join("node_modules").exists());

    // DIR's own package.json is not the project's; none above it: no cache.
    let served = tmp.path().join("served");
    build(&served, 3, 1);
    std::fs::write(served.join("package.json"), "{}").unwrap();
    // (A DIR holding package.json is refused as a project root unless asked.)
    ok(&precompress(&[
        served.as_os_str(),
        "--allow-project-root".as_ref(),
    ]));
    assert!(!served.join("node_modules").exists());
}

/// The default cache folder is one name everywhere: the binary's, the npm
/// integrations', and the folder docs/ci.md's recipes cache.
#[test]
fn every_surface_names_one_default_cache_folder() {
    let default = precompressor::config::DEFAULT_CACHE_DIR;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let js = std::fs::read_to_string(repo.join("npm/precompressor/lib/run.js")).unwrap();
    assert!(
        js.contains(&format!("DEFAULT_CACHE_DIR = '{default}'")),
        "run.js"
    );
    let ci = std::fs::read_to_string(repo.join("docs/ci.md")).unwrap();
    let recipe = &ci[ci.find("## Cache recipe").unwrap()..];
    let cached: Vec<&str> = recipe
        .lines()
        .filter_map(|l| l.trim().strip_prefix("path: "))
        .filter(|p| *p != "dist")
        .collect();
    assert_eq!(
        cached,
        [default, default],
        "the recipes cache the default folder"
    );
}

/// `--delta-releases 1`: the fourth release gets deltas against the third
/// only, where by default it gets them against all three the store kept; the
/// same in precompress.toml and from the plugin's `deltaReleases` (one row of
/// src/cli/options/table.rs gives all three).
#[test]
fn delta_releases_bounds_the_releases_deltas_are_made_against() {
    let tmp = tempfile::tempdir().unwrap();
    for (how, extra, file) in [
        ("default", vec![], None),
        ("flag", vec!["--delta-releases", "1"], None),
        ("file", vec![], Some("delta-releases = 1\n")),
    ] {
        let dist = tmp.path().join(how).join("dist");
        let cache = tmp.path().join(how).join("cache");
        let js: Vec<String> = (1..=3)
            .map(|n| {
                let js = build(&dist, 1, n);
                with_cache(&dist, &cache, &[]);
                js
            })
            .collect();
        let js4 = build(&dist, 1, 4);
        let mut args: Vec<&OsStr> =
            vec![dist.as_os_str(), "--cache-dir".as_ref(), cache.as_os_str()];
        args.extend(extra.iter().map(OsStr::new));
        let toml = tmp.path().join(how).join("precompress.toml");
        match file {
            Some(text) => {
                std::fs::write(&toml, text).unwrap();
                args.extend(["--config".as_ref(), toml.as_os_str()]);
                ok(&bin(&args));
            }
            None => {
                ok(&precompress(&args));
            }
        }
        let want: Vec<String> = match how {
            "default" => js.iter().flat_map(|j| [j.clone(), j.clone()]).collect(),
            _ => vec![js[2].clone(), js[2].clone()],
        };
        let mut want = want;
        want.sort();
        assert_eq!(deltas_of(&dist, &js4), want, "{how}");
    }
}
