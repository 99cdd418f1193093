//! The numbers `precompress report` draws, from a manifest and the earlier
//! releases a returning visitor may hold: what a visit downloads per page
//! and per coding, what the deltas save against each earlier release, the
//! biggest assets, what has no variant and why. Pure: data in, data out;
//! `view::gather` reads the disk, `view::html` draws.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::dictionary::available_dictionary;
use crate::model::manifest::{Asset, Manifest};
use crate::run::dictionaries::first_visit::{dictionary_cost, linked};

/// The codings a client may accept, in the order the report shows them:
/// `identity` (none), one coding alone, and `best` (a browser that accepts
/// them all and gets the smallest).
pub const CODINGS: [&str; 5] = ["identity", "gzip", "br", "zstd", "best"];

/// An earlier release as a returning visitor holds it: its files (key, raw
/// SHA-256), as the release store lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Earlier {
    /// How the report names it (`release -1` is the newest before this one).
    pub label: String,
    /// When it was recorded and from which commit, where known.
    pub about: Option<String>,
    pub files: BTreeMap<String, [u8; 32]>,
}

/// What one visitor downloads for a set of assets.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Visit {
    /// A first visit, per entry of [`CODINGS`]: the client accepts that
    /// coding alone (its variant, else the file itself), or all of them.
    pub first: BTreeMap<&'static str, u64>,
    /// The dictionaries the pages link, fetched at idle by a first visit
    /// that accepts deltas (beyond `first`).
    pub idle: u64,
    /// A visitor back from each earlier release, in [`Figures::earlier`]'s order.
    pub returning: Vec<Returning>,
}

/// A returning visitor's bytes against one earlier release.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Returning {
    /// With deltas: unchanged assets cost nothing, changed ones their
    /// smallest delta against the release's version (or their best variant).
    pub with_deltas: u64,
    /// Without deltas: every changed asset at its best variant.
    pub without_deltas: u64,
    /// Assets it fetches again (changed, or not in the release's list).
    pub fetched: usize,
    /// Of those, the ones that came as a delta.
    pub as_delta: usize,
}

/// One page: itself, what it loads (`run::dictionaries::first_visit`) and the dictionaries.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PageVisit {
    pub page: String,
    /// Its assets, the page included, not the dictionaries.
    pub assets: usize,
    pub visit: Visit,
    /// The lazy routes its scripts may load later (`import(…)`, and what
    /// those import: `first_visit::lazy_loads`), none of `assets`.
    pub lazy_assets: usize,
    /// What a visitor who opens every one of them downloads besides.
    pub lazy: Visit,
}

/// One of the biggest assets and what it costs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AssetRow {
    pub path: String,
    pub size: u64,
    /// Per coding token, its variant's size.
    pub variants: BTreeMap<String, u64>,
    /// Its smallest delta (coding, size), if it has one.
    pub delta: Option<(String, u64)>,
}

/// A (file, coding) with no variant, or a delta not kept, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Skip {
    /// The manifest's reason code (`too_small`).
    pub reason: String,
    pub path: String,
    pub coding: String,
}

/// The report's first line: a visit of its landing page ([`landing`]),
/// first and back from the newest earlier release, against what a server
/// that compresses on the fly sends.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Headline {
    /// The page visited: `index.html` at DIR's top, else the first page.
    pub page: String,
    /// A first visit, in the best coding a browser accepts, plus the
    /// dictionaries it fetches at idle.
    pub first: u64,
    /// The same visit in gzip (precompress's, at its highest level): the
    /// most a server compressing on the fly sends, at lower levels, saves.
    pub gzip: u64,
    /// The same visit uncompressed.
    pub identity: u64,
    /// Besides, the page's lazy routes, best coding (a visitor who opens
    /// every one; [`PageVisit::lazy`]).
    pub lazy: u64,
    /// ... and a returning visitor's for them, with deltas.
    pub lazy_returning: Option<u64>,
    /// The newest earlier release a returning visitor comes back from.
    pub against: Option<String>,
    /// That visitor's bytes with deltas, and without.
    pub returning: Option<u64>,
    pub returning_without_deltas: Option<u64>,
}

/// Everything the report page shows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Figures {
    /// The folder, as given.
    pub dir: String,
    /// The first line, when the release has a page.
    pub headline: Option<Headline>,
    /// The manifest's `generator`.
    pub generator: String,
    pub assets: usize,
    pub bytes: u64,
    /// The dictionaries every page links.
    pub linked: Vec<String>,
    /// The earlier releases compared with, newest first.
    pub earlier: Vec<String>,
    /// The same, each with when it was recorded and its commit, where known.
    pub described: Vec<String>,
    /// Every page, in path order.
    pub pages: Vec<PageVisit>,
    /// Every asset of the release, each once (no idle dictionaries).
    pub site: Visit,
    /// The biggest assets, largest first.
    pub biggest: Vec<AssetRow>,
    pub skipped: Vec<Skip>,
}

/// How many of the biggest assets the report lists.
pub const BIGGEST: usize = 15;

/// The biggest assets chart leaves out files under this many bytes: they
/// cost a visit little whatever the coding.
pub const BIGGEST_FROM: u64 = 4096;

/// The page a headline visits among `pages`: `index.html` at DIR's top (the
/// landing page), else the first in path order.
pub fn landing(pages: &[PageVisit]) -> Option<&PageVisit> {
    pages
        .iter()
        .find(|p| p.page == "index.html")
        .or_else(|| pages.first())
}

/// The headline of `pages` compared with `earlier` (labels, newest first).
fn headline(pages: &[PageVisit], earlier: &[Earlier]) -> Option<Headline> {
    let p = landing(pages)?;
    let v = &p.visit;
    let back = v.returning.first();
    Some(Headline {
        page: p.page.clone(),
        first: v.first["best"] + v.idle,
        gzip: v.first["gzip"],
        identity: v.first["identity"],
        lazy: p.lazy.first["best"],
        lazy_returning: p.lazy.returning.first().map(|r| r.with_deltas),
        against: earlier.first().map(|e| e.label.clone()),
        returning: back.map(|r| r.with_deltas),
        returning_without_deltas: back.map(|r| r.without_deltas),
    })
}

/// What a client that accepts only `coding` gets.
fn only(a: &Asset, coding: &str) -> u64 {
    match coding {
        "best" => a.best_size(),
        c => a
            .encodings
            .iter()
            .find(|v| v.coding == c)
            .map_or(a.size, |v| v.size),
    }
}

/// `:base64:` of a raw SHA-256, as deltas name their dictionary.
fn named(sha: &[u8; 32]) -> String {
    available_dictionary(sha)
}

/// What a visitor back from `e` downloads for `keys` (and the dictionaries
/// `idle`, which it fetches like any asset when changed).
fn returning(m: &Manifest, keys: &BTreeSet<&str>, e: &Earlier) -> Returning {
    let held: BTreeSet<String> = e.files.values().map(named).collect();
    let mut r = Returning::default();
    for k in keys {
        let Some(a) = m.files.get(*k) else { continue };
        let same = e
            .files
            .get(*k)
            .is_some_and(|sha| named(sha) == format!(":{}:", a.sha256));
        if same {
            continue;
        }
        let full = a.best_size();
        let delta = a
            .deltas
            .iter()
            .filter(|d| held.contains(&d.dictionary))
            .map(|d| d.size)
            .min()
            .filter(|d| *d < full);
        r.fetched += 1;
        r.as_delta += usize::from(delta.is_some());
        r.without_deltas += full;
        r.with_deltas += delta.unwrap_or(full);
    }
    r
}

/// A visit of `keys`, first and back from each of `earlier`; `idle` the
/// dictionaries a first visit fetches beyond them.
fn visit(m: &Manifest, keys: &BTreeSet<&str>, idle: &[String], earlier: &[Earlier]) -> Visit {
    let first = CODINGS
        .iter()
        .map(|c| {
            let sum = keys
                .iter()
                .filter_map(|k| m.files.get(*k))
                .map(|a| only(a, c))
                .sum();
            (*c, sum)
        })
        .collect();
    let held: Vec<&str> = keys.iter().copied().collect();
    let idle_bytes = idle
        .iter()
        .filter_map(|d| dictionary_cost(m, d, &held))
        .sum();
    let with_idle: BTreeSet<&str> = keys
        .iter()
        .copied()
        .chain(idle.iter().map(String::as_str))
        .collect();
    Visit {
        first,
        idle: idle_bytes,
        returning: earlier
            .iter()
            .map(|e| returning(m, &with_idle, e))
            .collect(),
    }
}

/// The figures of manifest `m` of folder `dir`: `loads` gives the keys a
/// first visit of a page loads (the page's own included), `lazy` those its
/// lazy routes load besides, `earlier` the
/// releases a returning visitor may hold, newest first.
pub fn figures(
    dir: &str,
    m: &Manifest,
    loads: &BTreeMap<String, BTreeSet<String>>,
    lazy: &BTreeMap<String, BTreeSet<String>>,
    earlier: &[Earlier],
) -> Figures {
    let idle = linked(m);
    let pages: Vec<PageVisit> = loads
        .iter()
        .map(|(page, keys)| {
            let keys: BTreeSet<&str> = keys.iter().map(String::as_str).collect();
            let later: BTreeSet<&str> = lazy
                .get(page)
                .into_iter()
                .flatten()
                .map(String::as_str)
                .collect();
            PageVisit {
                page: page.clone(),
                assets: keys.len(),
                visit: visit(m, &keys, &idle, earlier),
                lazy_assets: later.len(),
                lazy: visit(m, &later, &[], earlier),
            }
        })
        .collect();
    let all: BTreeSet<&str> = m.files.keys().map(String::as_str).collect();
    let mut by_size: Vec<(&String, &Asset)> = m.files.iter().collect();
    by_size.sort_by(|a, b| b.1.size.cmp(&a.1.size).then_with(|| a.0.cmp(b.0)));
    let biggest = by_size
        .into_iter()
        .filter(|(_, a)| a.size >= BIGGEST_FROM)
        .take(BIGGEST)
        .map(|(path, a)| AssetRow {
            path: path.clone(),
            size: a.size,
            variants: a
                .encodings
                .iter()
                .map(|v| (v.coding.clone(), v.size))
                .collect(),
            delta: a
                .deltas
                .iter()
                .min_by_key(|d| (d.size, d.coding.clone()))
                .map(|d| (d.coding.clone(), d.size)),
        })
        .collect();
    Figures {
        dir: dir.to_string(),
        headline: headline(&pages, earlier),
        generator: m.generator.clone(),
        assets: m.files.len(),
        bytes: m.files.values().map(|a| a.size).sum(),
        linked: idle.clone(),
        earlier: earlier.iter().map(|e| e.label.clone()).collect(),
        described: earlier
            .iter()
            .map(|e| match &e.about {
                Some(a) => format!("{} ({a})", e.label),
                None => e.label.clone(),
            })
            .collect(),
        pages,
        site: visit(m, &all, &[], earlier),
        biggest,
        skipped: skipped(m),
    }
}

/// Every (file, coding) with no variant, and every delta not kept, by
/// reason then path.
fn skipped(m: &Manifest) -> Vec<Skip> {
    let mut out: Vec<Skip> = m
        .files
        .iter()
        .flat_map(|(path, a)| {
            let variants = a.skipped.iter().map(move |(c, r)| Skip {
                reason: r.as_str().to_string(),
                path: path.clone(),
                coding: c.clone(),
            });
            let deltas = a.skipped_deltas.iter().map(move |d| Skip {
                reason: d.reason.as_str().to_string(),
                path: path.clone(),
                coding: d.coding.clone(),
            });
            variants.chain(deltas)
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::fixture::release;

    #[test]
    fn a_first_visit_is_counted_per_coding_and_the_page_s_loads_only() {
        let (m, loads, earlier) = release();
        let f = figures("dist", &m, &loads, &Default::default(), &earlier);
        let v = &f.pages[0].visit;
        assert_eq!(f.pages[0].assets, 3);
        // identity: 2000 + 10000 + 4000; gzip: the css has none, so 4000.
        assert_eq!(v.first["identity"], 16_000);
        assert_eq!(v.first["gzip"], 600 + 3500 + 4000);
        assert_eq!(v.first["br"], 500 + 3000 + 1000);
        assert_eq!(v.first["zstd"], 550 + 3200 + 4000);
        assert_eq!(v.first["best"], 500 + 3000 + 1000);
        // The whole site has the png too, never compressed.
        assert_eq!(f.site.first["best"], 4500 + 5000);
    }

    #[test]
    fn a_returning_visitor_gets_deltas_for_what_changed_and_nothing_for_the_rest() {
        let (m, loads, earlier) = release();
        let f = figures("dist", &m, &loads, &Default::default(), &earlier);
        let r = &f.pages[0].visit.returning[0];
        // The page (not in the store's list) at br, the script as its dcb
        // delta; the unchanged stylesheet is cached.
        assert_eq!(
            (r.with_deltas, r.without_deltas, r.fetched, r.as_delta),
            (500 + 400, 500 + 3000, 2, 1)
        );
        // A visitor back from a release with nothing in common pays it all.
        let stranger = Earlier {
            label: "x".into(),
            about: None,
            files: BTreeMap::new(),
        };
        let f = figures("dist", &m, &loads, &Default::default(), &[stranger]);
        let r = &f.pages[0].visit.returning[0];
        assert_eq!((r.with_deltas, r.without_deltas), (4500, 4500));
    }

    #[test]
    fn the_headline_is_the_landing_page_s_visit_first_and_back() {
        let (m, loads, earlier) = release();
        let f = figures("dist", &m, &loads, &Default::default(), &earlier);
        let h = f.headline.as_ref().expect("a page");
        let v = &landing(&f.pages).unwrap().visit;
        assert_eq!(h.page, "index.html");
        assert_eq!(h.first, v.first["best"] + v.idle);
        assert_eq!(h.gzip, v.first["gzip"]);
        assert_eq!(h.returning, Some(v.returning[0].with_deltas));
        assert_eq!(h.against.as_deref(), Some(earlier[0].label.as_str()));
        let alone = figures("dist", &m, &loads, &Default::default(), &[]);
        assert_eq!(alone.headline.unwrap().returning, None);
        assert!(
            figures("dist", &m, &Default::default(), &Default::default(), &[])
                .headline
                .is_none()
        );
    }

    #[test]
    fn biggest_first_and_every_skip_with_its_reason() {
        let (m, loads, earlier) = release();
        let f = figures("dist", &m, &loads, &Default::default(), &earlier);
        let order: Vec<&str> = f.biggest.iter().map(|a| a.path.as_str()).collect();
        // Largest first; the page (2,000 B) and the stylesheet (4,000 B)
        // are under BIGGEST_FROM: they cost a visit little.
        assert_eq!(order, ["a.js", "b.png"]);
        assert_eq!(f.biggest[0].delta, Some(("dcb".into(), 400)));
        let skips: Vec<(&str, &str)> = f
            .skipped
            .iter()
            .map(|s| (s.reason.as_str(), s.path.as_str()))
            .collect();
        assert_eq!(skips, [("excluded_type", "b.png"), ("not_smaller", "a.js")]);
    }
}
