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
    /// The cache folder whose release store holds the earlier releases;
    /// none: no returning visitor.
    pub cache_dir: Option<PathBuf>,
}

/// The report of DIR: its figures, and warnings (a store that could not be
/// read) that did not stop it.
pub fn gather(dir: &Path, options: &Options) -> Result<(Figures, Vec<String>)> {
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
    let earlier = match &options.cache_dir {
        Some(c) => earlier(dir, c, &manifest, &mut warnings),
        None => Vec::new(),
    };
    let loads = page_loads(dir, &manifest);
    let figures = figures::figures(&dir.display().to_string(), &manifest, &loads, &earlier);
    Ok((figures, warnings))
}

/// Per page of the manifest, the keys a first visit of it loads, itself
/// included (`run::dictionaries::first_visit`, as the run marks chunks by it).
fn page_loads(dir: &Path, m: &Manifest) -> BTreeMap<String, BTreeSet<String>> {
    let base = m.base.as_deref().unwrap_or(crate::model::path::ROOT_BASE);
    // A key that is not a plain path inside DIR is never opened.
    let read = |k: &str| {
        check_relative(k).ok()?;
        crate::fsutil::read_own(&dir.join(k), READ_MAX).ok()
    };
    let keys: HashSet<&str> = m.files.keys().map(String::as_str).collect();
    m.files
        .keys()
        .filter(|k| is_page(k))
        .filter_map(|page| {
            let bytes = read(page)?;
            let mut set = loads(&[(page.as_str(), bytes)], read, &keys, base);
            set.insert(page.clone());
            Some((page.clone(), set))
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
    let this: BTreeSet<(&str, &str)> = m
        .files
        .iter()
        .map(|(k, a)| (k.as_str(), a.sha256.as_str()))
        .collect();
    let mut out = Vec::new();
    for r in store.releases(&site, dir, warnings).into_iter().rev() {
        let files: BTreeMap<String, [u8; 32]> = r
            .files
            .iter()
            .filter_map(|f| Some((f.rel.clone(), parse_hex32(&f.sha256)?)))
            .collect();
        let b64 = |sha: &[u8; 32]| {
            let named = crate::model::dictionary::available_dictionary(sha);
            named.trim_matches(':').to_string()
        };
        let same = files
            .iter()
            .all(|(k, sha)| this.contains(&(k.as_str(), b64(sha).as_str())));
        if same {
            continue;
        }
        out.push(Earlier {
            label: format!("release -{}", out.len() + 1),
            files,
        });
    }
    out
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
