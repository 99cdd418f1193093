//! `precompress serve` while a new release is deployed into the folder it
//! serves, the way users deploy: files renamed over one by one (rsync's
//! default, `cp` to a temporary name then `mv`), files rewritten in place
//! (`rsync --inplace`, `scp`), the folder moved over, a symlinked folder
//! swapped, the folder deleted and made again, and precompress rerun on
//! sources copied over. A client asks for every URL throughout and after:
//! no answer may hold bytes of no release, or a strong ETag that is not the
//! one of the bytes sent (a cache would keep them under the wrong name), and
//! once the deploy is done every answer is the new release's.

mod serve_util;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serve_util::*;

/// A release: its files (sources only) and, from its manifest, the strong
/// ETag of each representation (key, coding; `None`: identity).
struct Release {
    dir: PathBuf,
    files: BTreeMap<String, Vec<u8>>,
    etags: BTreeMap<(String, Option<String>), String>,
}

/// Release `n` (1 or 2) built into `root/release-n` and precompressed: a
/// page, a script under a stable name and a chunk under a hashed one, each
/// different in the two releases.
fn release(root: &Path, n: usize) -> Release {
    let dir = root.join(format!("release-{n}"));
    let chunk = ["assets/chunk-a1b2c3d4.js", "assets/chunk-e5f6a7b8.js"][n - 1];
    let mut files = BTreeMap::new();
    let lines = |what: &str| -> String {
        (0..300)
            .map(|i| format!("function {what}{i}() {{ return 'release {n}, {what} {i}'; }}\n"))
            .collect()
    };
    files.insert(
        "index.html".to_string(),
        format!(
            "<!doctype html><title>release {n}</title><script src=\"/{chunk}\"></script>\n{}",
            "<p>the same paragraph on every page of this site, long enough to compress.</p>\n"
                .repeat(40)
        )
        .into_bytes(),
    );
    files.insert("assets/app.js".to_string(), lines("app").into_bytes());
    files.insert(chunk.to_string(), lines("chunk").into_bytes());
    for (rel, body) in &files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    let out = precompress(&["-q".as_ref(), "--no-config".as_ref(), dir.as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = manifest(&dir);
    let mut etags = BTreeMap::new();
    for (key, a) in m["files"].as_object().unwrap() {
        etags.insert((key.clone(), None), a["etag"].as_str().unwrap().to_string());
        for v in a["encodings"].as_array().unwrap() {
            etags.insert(
                (key.clone(), Some(v["coding"].as_str().unwrap().to_string())),
                v["etag"].as_str().unwrap().to_string(),
            );
        }
    }
    Release { dir, files, etags }
}

/// The URLs asked, each with the key it names.
const URLS: [(&str, &str); 5] = [
    ("/", "index.html"),
    ("/index.html", "index.html"),
    ("/assets/app.js", "assets/app.js"),
    ("/assets/chunk-a1b2c3d4.js", "assets/chunk-a1b2c3d4.js"),
    ("/assets/chunk-e5f6a7b8.js", "assets/chunk-e5f6a7b8.js"),
];

/// Which release an answer is (`Ok(None)`: a 404), or what is wrong with it.
/// `torn_ok`: a body of no release is allowed when sent with no strong ETag
/// (a file caught half rewritten in place: no server can read it whole).
fn judge(
    r: &Resp,
    key: &str,
    releases: &[&Release],
    torn_ok: bool,
) -> Result<Option<usize>, String> {
    match r.status {
        404 => return Ok(None),
        200 => {}
        s => return Err(format!("{key}: status {s}")),
    }
    let coding = r.header("content-encoding").map(str::to_string);
    let body = match &coding {
        Some(c) => decode(c, &r.body),
        None => r.body.clone(),
    };
    let etag = r.header("etag").unwrap_or("");
    let strong = !etag.is_empty() && !etag.starts_with("W/");
    let which = releases
        .iter()
        .position(|rel| rel.files.get(key) == Some(&body));
    match which {
        Some(i) if strong => {
            let want = releases[i].etags.get(&(key.to_string(), coding.clone()));
            if want.map(String::as_str) != Some(etag) {
                return Err(format!(
                    "{key} ({coding:?}): the bytes of release {}, the ETag {etag} (theirs: {want:?})",
                    i + 1
                ));
            }
            Ok(Some(i + 1))
        }
        Some(i) => Ok(Some(i + 1)),
        None if torn_ok && !strong => Ok(Some(0)),
        None => Err(format!(
            "{key} ({coding:?}, ETag {etag}): {} bytes of no release",
            body.len()
        )),
    }
}

/// Serves `serve` (release 1 deployed there by `setup`), asks for every URL
/// from a second thread while `deploy` puts release 2 there, then asks
/// again: the answers during, judged, and every answer after, release 2's.
fn deploys(
    name: &str,
    torn_ok: bool,
    setup: impl FnOnce(&Path, &Release) -> PathBuf,
    deploy: impl FnOnce(&Path, &Release, &Release, &dyn Fn()),
) {
    let tmp = tempfile::tempdir().unwrap();
    let (r1, r2) = (release(tmp.path(), 1), release(tmp.path(), 2));
    let served = setup(tmp.path(), &r1);
    let s = start_precompress(&served, &["--quiet"]);
    let addr = s.addr;
    let ask = |releases: &[&Release], torn_ok: bool| -> Vec<Result<Option<usize>, String>> {
        URLS.iter()
            .map(|(url, key)| {
                let r = request(addr, "GET", url, &[("Accept-Encoding", "br, zstd, gzip")]);
                judge(&r, key, releases, torn_ok)
            })
            .collect()
    };
    for (i, a) in ask(&[&r1], false).into_iter().enumerate() {
        let want = if i == 4 { None } else { Some(1) };
        assert_eq!(a, Ok(want), "{name}: before the deploy, {}", URLS[i].0);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let during = {
        let stop = stop.clone();
        let (r1, r2) = (
            Release {
                dir: r1.dir.clone(),
                files: r1.files.clone(),
                etags: r1.etags.clone(),
            },
            Release {
                dir: r2.dir.clone(),
                files: r2.files.clone(),
                etags: r2.etags.clone(),
            },
        );
        std::thread::spawn(move || {
            let mut answers = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                for (url, key) in URLS {
                    let r = request(addr, "GET", url, &[("Accept-Encoding", "br, zstd, gzip")]);
                    answers.push(judge(&r, key, &[&r1, &r2], torn_ok));
                }
            }
            answers
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(50));
    // After each step of the deploy: every answer is what the disk holds now.
    let steps = std::cell::Cell::new(0);
    let step = || {
        steps.set(steps.get() + 1);
        for (url, key) in URLS {
            let r = request(addr, "GET", url, &[("Accept-Encoding", "br, zstd, gzip")]);
            let now = std::fs::read(served.join(key)).ok();
            let judged = judge(&r, key, &[&r1, &r2], false);
            let body = match r.header("content-encoding") {
                Some(c) if r.status == 200 => decode(c, &r.body),
                _ => r.body.clone(),
            };
            match &now {
                Some(bytes) => assert!(
                    r.status == 200 && body == *bytes && judged.is_ok(),
                    "{name}, step {}: {url} is not what the disk holds now: {} {judged:?}",
                    steps.get(),
                    r.status
                ),
                None => assert_eq!(
                    r.status,
                    404,
                    "{name}, step {}: {url} is gone from the disk",
                    steps.get()
                ),
            }
        }
    };
    deploy(tmp.path(), &r1, &r2, &step);
    assert!(steps.get() >= 1, "{name}: no step checked");
    std::thread::sleep(std::time::Duration::from_millis(50));
    stop.store(true, Ordering::Relaxed);
    let answers = during.join().unwrap();
    let wrong: Vec<&String> = answers.iter().filter_map(|a| a.as_ref().err()).collect();
    assert!(
        wrong.is_empty(),
        "{name}: during the deploy ({} answers): {wrong:#?}",
        answers.len()
    );
    assert!(
        answers.len() >= 10,
        "{name}: {} answers during the deploy",
        answers.len()
    );
    for _ in 0..3 {
        for (i, a) in ask(&[&r2], false).into_iter().enumerate() {
            let want = if i == 3 { None } else { Some(1) };
            assert_eq!(a, Ok(want), "{name}: after the deploy, {}", URLS[i].0);
        }
    }
}

/// Every file of `dir` (sources, variants, manifest), relative, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// A copy of release 1 at `root/site`.
fn site_of(root: &Path, r1: &Release) -> PathBuf {
    let site = root.join("site");
    copy_dir(&r1.dir, &site);
    site
}

/// rsync's default, and `cp` to a temporary name then `mv`: each file of the
/// new release written beside its place and renamed over it, in path order
/// (the manifest after the assets and pages), then what the new release
/// lacks deleted (`--delete`).
#[test]
fn files_renamed_over_one_by_one() {
    deploys("renamed over", false, site_of, |root, _, r2, step| {
        let site = root.join("site");
        for rel in listing(&r2.dir) {
            let to = site.join(&rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            let tmp = to.with_file_name(format!(
                ".{}.tmp",
                to.file_name().unwrap().to_string_lossy()
            ));
            std::fs::copy(r2.dir.join(&rel), &tmp).unwrap();
            std::fs::rename(&tmp, &to).unwrap();
            step();
        }
        delete_extra(&site, r2, step);
    });
}

/// What release 2 lacks deleted from `site` (rsync's `--delete`).
fn delete_extra(site: &Path, r2: &Release, step: &dyn Fn()) {
    let keep = listing(&r2.dir);
    for rel in listing(site) {
        if !keep.contains(&rel) {
            std::fs::remove_file(site.join(rel)).unwrap();
            step();
        }
    }
}

/// The manifest first, then the files: a manifest that lists variants not
/// yet written, of sources not yet replaced.
#[test]
fn the_manifest_renamed_over_before_the_files() {
    deploys("manifest first", false, site_of, |root, _, r2, step| {
        let site = root.join("site");
        let mut order = listing(&r2.dir);
        order.sort_by_key(|rel| rel != "precompress-manifest.json");
        for rel in order {
            let to = site.join(&rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            let tmp = to.with_extension("tmp-deploy");
            std::fs::copy(r2.dir.join(&rel), &tmp).unwrap();
            std::fs::rename(&tmp, &to).unwrap();
            step();
        }
        delete_extra(&site, r2, step);
    });
}

/// `rsync --inplace`, `scp`: each file truncated and written where it is. A
/// file read while half written is neither release's, sent with no strong
/// ETag; nothing else is allowed.
#[test]
fn files_rewritten_in_place() {
    deploys("in place", true, site_of, |root, _, r2, step| {
        let site = root.join("site");
        for rel in listing(&r2.dir) {
            let to = site.join(&rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::write(&to, std::fs::read(r2.dir.join(&rel)).unwrap()).unwrap();
            step();
        }
        delete_extra(&site, r2, step);
    });
}

/// The new release copied beside the folder, the folder moved away and the
/// copy moved into its place.
#[test]
fn the_folder_moved_over() {
    deploys("folder moved over", false, site_of, |root, _, r2, step| {
        copy_dir(&r2.dir, &root.join("site.new"));
        std::fs::rename(root.join("site"), root.join("site.old")).unwrap();
        step();
        std::fs::rename(root.join("site.new"), root.join("site")).unwrap();
        step();
    });
}

/// `current -> releases/1` swapped for `current -> releases/2` (`ln -sfn`
/// then `mv -T`, as Capistrano deploys), serving `current`.
#[test]
fn a_symlinked_folder_swapped() {
    deploys(
        "symlink swapped",
        false,
        |root, r1| {
            copy_dir(&r1.dir, &root.join("releases/1"));
            std::os::unix::fs::symlink("releases/1", root.join("current")).unwrap();
            root.join("current")
        },
        |root, _, r2, step| {
            copy_dir(&r2.dir, &root.join("releases/2"));
            std::os::unix::fs::symlink("releases/2", root.join("current.new")).unwrap();
            std::fs::rename(root.join("current.new"), root.join("current")).unwrap();
            step();
        },
    );
}

/// `rm -rf site && mkdir site && cp -r release-2/. site/`: for a while the
/// folder is gone, then empty, then partly there; a file being copied is
/// caught half written (sent with no strong ETag, as in place).
#[test]
fn the_folder_deleted_and_made_again() {
    deploys(
        "deleted and made again",
        true,
        site_of,
        |root, _, r2, step| {
            let site = root.join("site");
            std::fs::remove_dir_all(&site).unwrap();
            step();
            std::fs::create_dir(&site).unwrap();
            step();
            for rel in listing(&r2.dir) {
                let to = site.join(&rel);
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(r2.dir.join(&rel), &to).unwrap();
                step();
            }
        },
    );
}

/// The build writes the new sources over the old ones, in place (the old
/// chunk removed), then precompress runs on the folder being served.
#[test]
fn precompress_rerun_on_new_sources() {
    deploys("precompress rerun", true, site_of, |root, r1, r2, step| {
        let site = root.join("site");
        for (rel, body) in &r2.files {
            std::fs::write(site.join(rel), body).unwrap();
            step();
        }
        for rel in r1.files.keys().filter(|k| !r2.files.contains_key(*k)) {
            std::fs::remove_file(site.join(rel)).unwrap();
            step();
        }
        let out = precompress(&["-q".as_ref(), "--no-config".as_ref(), site.as_os_str()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        step();
    });
}
