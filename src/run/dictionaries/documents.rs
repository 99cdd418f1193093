//! The documents dictionary: one dictionary resource for a site's HTML
//! pages, made only where a build-time estimate says it pays.
//!
//! Chromium never uses a navigated page as a dictionary, but it fetches the
//! resource a page's `Link: <...>; rel="compression-dictionary"` names when
//! idle, and offers it on later navigations that its `match` covers. Pages of
//! one site share their layout (header, navigation, footer, scripts), so a
//! few of them, raw, make a dictionary that the other pages compress well
//! against: the next page a visitor opens, and, after a release, every page
//! (its next version arrives as a delta against this one).
//!
//! It costs a first-time visitor its own download, at idle, and pays back
//! only over the pages that visitor opens after it. So the run measures it
//! on the release itself: the pages in path order, every other one a
//! candidate for the dictionary (the median-sized page of each of
//! [`BUCKETS`] runs of them, smallest first, while [`MAX_BYTES`] holds), and
//! up to [`HELD_OUT`] of the others, spread over the site, compressed with
//! brotli and as deltas against it. It is made when it pays back its
//! brotli-compressed download within [`PAYBACK_PAGES`] pages.
//!
//! Measured on real documentation (`python3 bench/documents.py`): Python's
//! 530 pages pay back after about 4 pages; PostgreSQL's 1,169, after about 36
//! (so none is made there).
//!
//! The file, `precompress-documents-HASH.txt` at DIR's top, starts with
//! [`MARKER`], is named by its content's hash like the code dictionary
//! (`run::dictionaries::shared`), and is marked `match="BASE*", match-dest=("document")`.

use crate::encode::delta::DeltaEncoder;
use crate::encode::{new_encoder, Levels};
use crate::model::coding::{Codec, ContentKind, DeltaCoding};
use crate::model::dictionary::{is_page, shared_dictionary_path, SharedKind};
use crate::run::dictionaries::shared::Shared;
use rayon::prelude::*;

/// The first line of every documents dictionary (an HTML comment: it is
/// HTML, as the pages are).
pub const MARKER: &[u8] =
    b"<!-- precompress documents dictionary: pages of this site, raw, for RFC 9842 deltas -->\n";

/// A site with fewer pages is not measured: a visitor cannot open enough of
/// them for a dictionary to pay back.
pub const MIN_PAGES: usize = 10;

/// The most page bytes the dictionary holds. At 64 KiB on Python's docs it
/// paid back after about 4 pages; at 1 MiB, after 38
/// (bench/results/documents-20261202.md).
pub const MAX_BYTES: u64 = 64 << 10;

/// Runs of candidate pages the dictionary takes one page from.
pub const BUCKETS: usize = 16;

/// Pages held out to measure it on.
pub const HELD_OUT: usize = 8;

/// Made when it pays back within this many pages.
pub const PAYBACK_PAGES: f64 = 10.0;

/// Sizes of the dictionary measured at most to fit an idle budget.
pub const FITS_TRIED: usize = 3;

/// What the run measured for a documents dictionary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Held-out pages measured.
    pub pages: usize,
    /// Their brotli bytes.
    pub br: u64,
    /// Their bytes as the smaller delta against the dictionary.
    pub delta: u64,
    /// The dictionary's own brotli bytes: what a first visit fetches.
    pub dictionary_br: u64,
}

impl Estimate {
    /// Pages a visitor opens before the bytes saved cover the dictionary's
    /// download; `None` if a delta saves nothing.
    pub fn payback(&self) -> Option<f64> {
        let saved = self.br.saturating_sub(self.delta);
        (saved > 0).then(|| self.dictionary_br as f64 * self.pages as f64 / saved as f64)
    }

    /// Whether it pays back within [`PAYBACK_PAGES`].
    pub fn pays(&self) -> bool {
        self.payback().is_some_and(|p| p <= PAYBACK_PAGES)
    }
}

/// Of the assets `(path, size)`, the pages (sorted by path) split into the
/// ones the dictionary holds, smallest first, and the ones held out to
/// measure it; empty for a site of fewer than [`MIN_PAGES`].
pub fn split(assets: &[(&str, u64)]) -> (Vec<usize>, Vec<usize>) {
    let mut pages: Vec<usize> = (0..assets.len())
        .filter(|&i| is_page(assets[i].0))
        .collect();
    if pages.len() < MIN_PAGES {
        return (Vec::new(), Vec::new());
    }
    pages.sort_by_key(|&i| assets[i].0);
    let candidates: Vec<usize> = pages.iter().copied().step_by(2).collect();
    let others: Vec<usize> = pages.iter().copied().skip(1).step_by(2).collect();
    let n = candidates.len();
    let mut chosen = Vec::new();
    let k = BUCKETS.min(n);
    for b in 0..k {
        let mut run = candidates[b * n / k..(b + 1) * n / k].to_vec();
        run.sort_by_key(|&i| (assets[i].1, assets[i].0));
        chosen.push(run[run.len() / 2]);
    }
    chosen.sort_by_key(|&i| (assets[i].1, assets[i].0));
    let mut total = 0;
    chosen.retain(|&i| {
        let fits = total + assets[i].1 <= MAX_BYTES;
        total += if fits { assets[i].1 } else { 0 };
        fits
    });
    let k = HELD_OUT.min(others.len());
    let held = (0..k).map(|j| others[j * others.len() / k]).collect();
    (chosen, held)
}

/// The outcome for one release.
#[derive(Debug)]
pub enum Outcome {
    /// Too few pages to measure.
    None,
    /// Measured, and not worth it (or not measurable: a page unreadable).
    NotWorth(Option<Estimate>),
    /// The dictionary, its bytes and what was measured.
    Made(Shared, Vec<u8>, Estimate),
}

/// The documents dictionary of a release whose assets are `assets` (path,
/// size), with `read` giving an asset's bytes and `measure` the estimate for
/// a dictionary and held-out pages ([`measure`] in a run). With `budget`
/// (`--shared-dictionary auto`: what a first visit may still fetch at idle,
/// `model::dictionary::IDLE_MAX_SHARE`), a dictionary whose brotli bytes
/// pass it holds fewer pages (the smallest, scaled to the budget; at most
/// [`FITS_TRIED`] sizes measured), and none when one page passes it.
/// Deterministic.
pub fn build(
    assets: &[(&str, u64)],
    read: impl Fn(usize) -> Option<Vec<u8>>,
    measure: impl Fn(&[u8], &[Vec<u8>]) -> Option<Estimate>,
    budget: Option<u64>,
) -> Outcome {
    let (mut chosen, held) = split(assets);
    if chosen.is_empty() || held.is_empty() {
        return Outcome::None;
    }
    let read_all = |idx: &[usize]| idx.iter().map(|&i| read(i)).collect::<Option<Vec<_>>>();
    let (Some(pages), Some(held)) = (read_all(&chosen), read_all(&held)) else {
        return Outcome::NotWorth(None);
    };
    let mut tried = 0;
    let (bytes, estimate) = loop {
        // The pages held so far, each read once however often it is measured.
        let mut bytes = MARKER.to_vec();
        for b in &pages[..chosen.len()] {
            bytes.extend_from_slice(b);
            bytes.push(b'\n');
        }
        let Some(estimate) = measure(&bytes, &held) else {
            return Outcome::NotWorth(None);
        };
        tried += 1;
        let over = budget.filter(|max| estimate.dictionary_br > *max);
        let Some(max) = over else {
            break (bytes, estimate);
        };
        // Scaled to the budget, a tenth below it (a smaller dictionary
        // compresses a little worse per byte).
        let raw: u64 = chosen.iter().map(|&i| assets[i].1).sum();
        let target = raw as f64 * max as f64 / estimate.dictionary_br as f64 * 0.9;
        let mut total = 0;
        let keep = chosen
            .iter()
            .take_while(|&&i| {
                total += assets[i].1;
                total as f64 <= target
            })
            .count()
            .min(chosen.len() - 1);
        if keep == 0 || tried == FITS_TRIED {
            return Outcome::NotWorth(Some(estimate));
        }
        chosen.truncate(keep);
    };
    if !estimate.pays() {
        return Outcome::NotWorth(Some(estimate));
    }
    let hash = blake3::hash(&bytes).to_hex();
    let shared = Shared {
        kind: SharedKind::Documents,
        rel: shared_dictionary_path(SharedKind::Documents, "", &hash),
        members: assets
            .iter()
            .filter(|(rel, _)| is_page(rel))
            .map(|(rel, _)| rel.to_string())
            .collect(),
    };
    Outcome::Made(shared, bytes, estimate)
}

/// The estimate for `dictionary` on the `held` pages, as the run would
/// encode them: brotli at the run's quality, and the smaller of dcb and dcz
/// with the delta encoder's levels. Pages in parallel on the current pool.
pub fn measure(
    dictionary: &[u8],
    held: &[Vec<u8>],
    levels: Levels,
    enc: &DeltaEncoder,
) -> Option<Estimate> {
    let br_of = |b: &[u8]| -> Option<u64> {
        let mut enc = new_encoder(Codec::Brotli, levels).ok()?;
        let mut out = Vec::new();
        enc.encode(b, ContentKind::Text, &mut out).ok()?;
        Some(out.len() as u64)
    };
    let sha = crate::model::dictionary::sha256(dictionary);
    let rows: Vec<(u64, u64)> = held
        .par_iter()
        .map(|page| {
            let br = br_of(page)?;
            let mut out = Vec::new();
            let mut best = u64::MAX;
            for c in [DeltaCoding::Dcb, DeltaCoding::Dcz] {
                enc.encode(c, dictionary, &sha, page, ContentKind::Text, &mut out)
                    .ok()?;
                best = best.min(out.len() as u64);
            }
            Some((br, best.min(br)))
        })
        .collect::<Option<_>>()?;
    Some(Estimate {
        pages: rows.len(),
        br: rows.iter().map(|r| r.0).sum(),
        delta: rows.iter().map(|r| r.1).sum(),
        dictionary_br: br_of(dictionary)?,
    })
}

/// Whether the file at `rel` with `bytes` is a documents dictionary
/// precompress wrote.
pub fn is_ours(rel: &str, bytes: &[u8]) -> bool {
    bytes.starts_with(MARKER)
        && shared_dictionary_path(SharedKind::Documents, "", &blake3::hash(bytes).to_hex()) == rel
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(n: usize) -> Vec<(String, u64)> {
        (0..n)
            .map(|i| (format!("docs/p{i:02}.html"), 1000 + (i as u64 % 5) * 100))
            .chain([("app.js".to_string(), 5000)])
            .collect()
    }

    #[test]
    fn a_few_pages_of_every_part_of_the_site_go_in_and_others_are_held_out() {
        let s = site(40);
        let assets: Vec<(&str, u64)> = s.iter().map(|(r, n)| (r.as_str(), *n)).collect();
        let (chosen, held) = split(&assets);
        // Candidates are the even pages; 20 of them make 16 runs of 1 or 2.
        assert_eq!(chosen.len(), BUCKETS);
        assert!(chosen.iter().all(|&i| i % 2 == 0 && i < 40));
        assert!(chosen.windows(2).all(|w| assets[w[0]].1 <= assets[w[1]].1));
        assert_eq!(held.len(), HELD_OUT);
        assert!(held.iter().all(|&i| i % 2 == 1));
        // Spread: the first and the last part of the site are measured.
        assert_eq!(held[0], 1);
        assert!(*held.last().unwrap() > 30);
        // Too few pages: nothing; the bound on bytes holds.
        let few: Vec<(&str, u64)> = assets[..MIN_PAGES - 1].to_vec();
        assert_eq!(split(&few), (vec![], vec![]));
        let big: Vec<(&str, u64)> = assets.iter().map(|(r, _)| (*r, 30_000)).collect();
        assert_eq!(split(&big).0.len(), 2);
    }

    #[test]
    fn it_is_made_only_when_it_pays_back_within_the_bound() {
        let e = |br, delta, dictionary_br| Estimate {
            pages: 8,
            br,
            delta,
            dictionary_br,
        };
        // 8 pages saving 1,000 B each against a 5,000 B download: 5 pages.
        assert_eq!(e(20_000, 12_000, 5_000).payback(), Some(5.0));
        assert!(e(20_000, 12_000, 5_000).pays());
        assert!(!e(20_000, 12_000, 20_000).pays());
        assert_eq!(e(20_000, 20_000, 1).payback(), None);
        let s = site(20);
        let assets: Vec<(&str, u64)> = s.iter().map(|(r, n)| (r.as_str(), *n)).collect();
        let read = |i: usize| Some(assets[i].0.as_bytes().repeat(40));
        match build(
            &assets,
            read,
            |_, held| Some(e(held.len() as u64 * 900, 100, 50)),
            None,
        ) {
            Outcome::Made(s, bytes, _) => {
                assert!(bytes.starts_with(MARKER));
                assert!(is_ours(&s.rel, &bytes));
                assert!(s.rel.starts_with("precompress-documents-"));
                assert_eq!(s.members.len(), 20);
            }
            other => panic!("{other:?}"),
        }
        // Within an idle budget: fewer pages, the smallest, until its
        // brotli bytes fit (here a byte of it per 10 B it holds).
        let by_size =
            |d: &[u8], held: &[Vec<u8>]| Some(e(held.len() as u64 * 900, 100, d.len() as u64 / 10));
        let Outcome::Made(_, whole, _) = build(&assets, read, by_size, None) else {
            panic!("made")
        };
        let Outcome::Made(_, fits, est) =
            build(&assets, read, by_size, Some(whole.len() as u64 / 30))
        else {
            panic!("made within the budget")
        };
        assert!(est.dictionary_br <= whole.len() as u64 / 30, "{est:?}");
        assert!(fits.len() < whole.len() && fits.starts_with(MARKER));
        // Not when a single page passes it.
        assert!(matches!(
            build(&assets, read, by_size, Some(1)),
            Outcome::NotWorth(Some(_))
        ));
        assert!(matches!(
            build(&assets, read, |_, _| Some(e(1000, 990, 5000)), None),
            Outcome::NotWorth(Some(_))
        ));
    }
}
