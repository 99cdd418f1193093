//! `precompress report DIR`: what a run did, as a page to look at. This
//! module reads (DIR's manifest, its pages and the scripts they load, the
//! release store's list of the last releases) and writes nothing;
//! `figures` makes the numbers, `html` the page, `svg` its charts.

pub mod figures;
#[cfg(test)]
mod fixture;
pub mod html;
pub mod svg;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use self::figures::{Earlier, Figures};
use crate::error::{Error, Result};
use crate::model::dictionary::{is_page, parse_hex32};
use crate::model::manifest::{default_path, Manifest};
use crate::model::path::check_relative;
use crate::run::dictionaries::first_visit::loads;
use crate::run::state::store::{site_of, Store};

/// A page or script read to follow what a visit loads is at most this big.
const READ_MAX: u64 = 32 << 20;

/// Where the report reads from.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The manifest [default: DIR/precompress-manifest.json].
    pub manifest: Option<PathBuf>,
    /// The cache folder whose release store holds the earlier releases.
    pub cache_dir: Option<PathBuf>,
    /// Earlier releases named otherwise (`--dictionary-from`: a folder, the
    /// live site), newest first, as [`published`] reads a list of one:
    /// compared with before the store's.
    pub given: Vec<Earlier>,
}

/// An earlier release as its published list of dictionaries names its
/// files (what a visitor of it may hold: `model::published`), labelled
/// `label`.
pub fn published(label: &str, list: &crate::model::published::Published) -> Earlier {
    Earlier {
        label: label.to_string(),
        about: None,
        files: list
            .files
            .iter()
            .filter_map(|f| Some((f.path.clone(), parse_hex32(&f.sha256)?)))
            .collect(),
    }
}

/// The report of DIR: its figures, and warnings (a store that could not be
/// read) that did not stop it.
pub fn gather(dir: &Path, options: &Options) -> Result<(Figures, Vec<String>)> {
    gather_pages(dir, options, false)
}

/// The report's headline alone, as [`gather`] draws it, from the landing
/// page only (a run's summary reads one page, not every page of the site).
pub fn headline(dir: &Path, options: &Options) -> Result<Option<figures::Headline>> {
    Ok(gather_pages(dir, options, true)?.0.headline)
}

/// [`gather`], of every page or (`landing`) of the headline's page alone.
fn gather_pages(dir: &Path, options: &Options, landing: bool) -> Result<(Figures, Vec<String>)> {
    if !dir.is_dir() {
        return Err(Error::Read {
            path: dir.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "not a folder"),
        });
    }
    let path = options
        .manifest
        .clone()
        .unwrap_or_else(|| default_path(dir));
    let manifest = Manifest::read(&path)?;
    let mut warnings = Vec::new();
    let stored = match &options.cache_dir {
        Some(c) => earlier(dir, c, &manifest, &mut warnings),
        None => Vec::new(),
    };
    // Each release once, this one never (a list of this very build).
    let mut earlier: Vec<Earlier> = Vec::new();
    for e in options.given.iter().cloned().chain(stored) {
        if !is_this(&manifest, &e) && !earlier.iter().any(|o| o.files == e.files) {
            earlier.push(e);
        }
    }
    let only = if landing {
        Some(landing_page(&manifest).unwrap_or_default())
    } else {
        None
    };
    let loads = page_loads(dir, &manifest, only.as_deref());
    let lazy = lazy_loads_of(dir, &manifest, &loads);
    let figures = figures::figures(
        &dir.display().to_string(),
        &manifest,
        &loads,
        &lazy,
        &earlier,
    );
    Ok((figures, warnings))
}

/// The report's headline visit ([`figures::landing`]): its page and the
/// keys a first visit of it loads, itself included; none without a page.
pub fn landing_loads(dir: &Path, m: &Manifest) -> Option<(String, BTreeSet<String>)> {
    let page = landing_page(m)?;
    let keys = page_loads(dir, m, Some(&page)).remove(&page)?;
    Some((page, keys))
}

/// The headline's page ([`figures::landing`]): `index.html` at DIR's top,
/// else the first page in path order.
fn landing_page(m: &Manifest) -> Option<String> {
    crate::model::dictionary::landing_page(m.files.keys().map(String::as_str)).map(str::to_string)
}

/// Per page of the manifest (`only` that one, if given), the keys a first
/// visit of it loads, itself included (`run::dictionaries::first_visit`, as
/// the run marks chunks by it).
fn page_loads(dir: &Path, m: &Manifest, only: Option<&str>) -> BTreeMap<String, BTreeSet<String>> {
    let base = m.base.as_deref().unwrap_or(crate::model::path::ROOT_BASE);
    // A key that is not a plain path inside DIR is never opened.
    let read = |k: &str| {
        check_relative(k).ok()?;
        crate::fsutil::read_own(&dir.join(k), READ_MAX).ok()
    };
    let keys: HashSet<&str> = m.files.keys().map(String::as_str).collect();
    m.files
        .keys()
        .filter(|k| is_page(k) && only.is_none_or(|o| o == k.as_str()))
        .filter_map(|page| {
            let bytes = read(page)?;
            let mut set = loads(&[(page.as_str(), bytes)], read, &keys, base);
            set.insert(page.clone());
            Some((page.clone(), set))
        })
        .collect()
}

/// Per page of `loads`, what its lazy routes load besides
/// (`first_visit::lazy_loads`).
fn lazy_loads_of(
    dir: &Path,
    m: &Manifest,
    loads: &BTreeMap<String, BTreeSet<String>>,
) -> BTreeMap<String, BTreeSet<String>> {
    let base = m.base.as_deref().unwrap_or(crate::model::path::ROOT_BASE);
    let read = |k: &str| {
        check_relative(k).ok()?;
        crate::fsutil::read_own(&dir.join(k), READ_MAX).ok()
    };
    let keys: HashSet<&str> = m.files.keys().map(String::as_str).collect();
    loads
        .iter()
        .map(|(page, set)| {
            let later = crate::run::dictionaries::first_visit::lazy_loads(set, read, &keys, base);
            (page.clone(), later)
        })
        .collect()
}

/// The earlier releases of DIR's site in the store of `cache`, newest
/// first; one whose every file this release holds unchanged is this
/// release itself, recorded by its run, and left out.
fn earlier(dir: &Path, cache: &Path, m: &Manifest, warnings: &mut Vec<String>) -> Vec<Earlier> {
    let Some(store) = Store::open_existing(cache, warnings) else {
        return Vec::new();
    };
    let base = m.base.as_deref().unwrap_or(crate::model::path::ROOT_BASE);
    let site = site_of(dir, cache, base);
    let mut out = Vec::new();
    for r in store.releases(&site, dir, warnings).into_iter().rev() {
        let files: BTreeMap<String, [u8; 32]> = r
            .files
            .iter()
            .filter_map(|f| Some((f.rel.clone(), parse_hex32(&f.sha256)?)))
            .collect();
        let when = r.recorded.map(|t| {
            httpdate::fmt_http_date(std::time::UNIX_EPOCH + std::time::Duration::from_secs(t))
        });
        let about = match (when, &r.commit) {
            (Some(w), Some(c)) => Some(format!("recorded {w}, commit {c}")),
            (Some(w), None) => Some(format!("recorded {w}")),
            (None, Some(c)) => Some(format!("commit {c}")),
            (None, None) => None,
        };
        let e = Earlier {
            label: format!("release -{}", out.len() + 1),
            about,
            files,
        };
        if !is_this(m, &e) {
            out.push(e);
        }
    }
    out
}

/// An earlier release in `folder`, labelled by its path, as a returning
/// visitor of it holds it: its published list of dictionaries
/// (`model::published`), else its manifest's marked files, else (a folder
/// precompress never ran on, as `--dictionary-from` takes one) every file
/// in it, hashed, but precompress's own.
pub fn folder_release(folder: &Path) -> std::result::Result<Earlier, String> {
    use crate::model::published::{Listed, Published, FILE_NAME};
    let label = folder.display().to_string();
    let list = folder.join(FILE_NAME);
    if list.is_file() {
        let bytes = crate::fsutil::read_own(&list, crate::model::published::MAX_BYTES)
            .map_err(|e| format!("{}: {e}", list.display()))?;
        let list = Published::parse(&bytes).map_err(|e| format!("{}: {e}", list.display()))?;
        return Ok(published(&label, &list));
    }
    if !folder.is_dir() {
        return Err(format!("--dictionary-from {label}: not a folder"));
    }
    let hex = crate::model::dictionary::hex;
    let listed: Vec<Listed> = match Manifest::read(&default_path(folder)) {
        Ok(m) => m
            .files
            .iter()
            .filter(|(_, a)| a.use_as_dictionary.is_some())
            .filter_map(|(k, a)| {
                let raw = crate::model::dictionary::parse_available_dictionary(&format!(
                    ":{}:",
                    a.sha256
                ))?;
                Some(Listed {
                    path: k.clone(),
                    sha256: hex(&raw),
                    size: a.size,
                })
            })
            .collect(),
        Err(_) => crate::run::walk::walk(folder, false, &[])
            .files
            .into_iter()
            .filter(|f| {
                crate::model::names::delta_source(&f.rel).is_none()
                    && crate::model::content::variant_source(&f.rel).is_none()
                    && f.rel != crate::model::manifest::DEFAULT_NAME
            })
            .filter_map(|f| {
                let bytes = crate::fsutil::read_own(&f.path, READ_MAX).ok()?;
                Some(Listed {
                    path: f.rel,
                    sha256: hex(&crate::model::dictionary::sha256(&bytes)),
                    size: bytes.len() as u64,
                })
            })
            .collect(),
    };
    Ok(published(&label, &Published::new(listed)))
}

/// Whether every file `e` lists is in `m` unchanged: this release itself
/// (recorded by its own run, or the live site already serving this build).
fn is_this(m: &Manifest, e: &Earlier) -> bool {
    e.files.iter().all(|(k, sha)| {
        let named = crate::model::dictionary::available_dictionary(sha);
        m.files
            .get(k)
            .is_some_and(|a| a.sha256 == named.trim_matches(':'))
    })
}

/// Writes the page to `out` as a new file renamed into place: a link at
/// `out` is replaced, never written through (one pointing into DIR would
/// have the report overwrite a page, or add a file a server of DIR serves).
pub fn write_report(out: &Path, page: &str) -> Result<()> {
    crate::fsutil::write_atomic(out, page.as_bytes(), None)
}

/// Refuses an output inside DIR (the report writes nothing there: a server
/// of DIR would serve it) or whose folder is missing, naming the path.
pub fn check_out(dir: &Path, out: &Path) -> Result<()> {
    let bad = |why: &str| Error::Config(format!("--out {}: {why}", out.display()));
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(folder) = parent.canonicalize() else {
        return Err(bad("its folder does not exist"));
    };
    if out.is_dir() {
        return Err(bad("is a folder; name the HTML file to write"));
    }
    if let Ok(d) = dir.canonicalize() {
        if folder.starts_with(&d) {
            return Err(bad(&format!(
                "inside DIR ({}): the report writes nothing into DIR; write it beside",
                dir.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The headline's page without reading any: `index.html` at the top
    /// whatever sorts before it, else the first page.
    #[test]
    fn the_landing_page_is_the_top_index_else_the_first_page() {
        let (mut m, _, _) = fixture::release();
        let page = m.files["index.html"].clone();
        m.files.insert("about/index.html".into(), page.clone());
        assert_eq!(landing_page(&m).as_deref(), Some("index.html"));
        m.files.remove("index.html");
        assert_eq!(landing_page(&m).as_deref(), Some("about/index.html"));
        m.files.retain(|k, _| !is_page(k));
        assert_eq!(landing_page(&m), None);
    }
}
