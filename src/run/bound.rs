//! `--max-files`: the files a deploy uploads held within a host's cap
//! (Cloudflare Pages takes 20,000 per deploy). Sources and their variants
//! are what the site serves and are never dropped; deltas are, before any
//! job runs: those against the oldest earlier release first (the fewest
//! returning visitors hold it), and within a release those of the smallest
//! files first (they save the fewest bytes). Files are counted as if every
//! variant were kept, so the deploy holds at most the bound whatever the
//! encoders find.

use crate::run::filter::Filter;
use crate::run::scanned::{Chosen, Scanned};

/// What the bound did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounded {
    /// Files the deploy could hold before any delta was dropped, the
    /// manifest included.
    pub(crate) files: u64,
    /// Deltas not made to stay within the bound.
    pub(crate) dropped: u64,
}

/// Drops earlier files from `chosen` (per source of `files`, each giving
/// `delta_codings` deltas) until the deploy holds at most `max` files:
/// sources, a variant per codec (`codecs`) of each that `filter` compresses,
/// deltas and the manifest. `age` ranks an earlier release by its index (0:
/// the oldest).
pub(crate) fn bound(
    max: u64,
    files: &[Scanned],
    chosen: &mut [Chosen],
    filter: &Filter,
    (codecs, delta_codings): (usize, usize),
    age: impl Fn(usize) -> usize,
) -> Bounded {
    let served: u64 = 1 + files
        .iter()
        .map(|f| {
            1 + if filter.decide(&f.found.rel, f.size).is_none() {
                codecs as u64
            } else {
                0
            }
        })
        .sum::<u64>();
    let deltas = chosen.iter().map(|c| c.len() as u64).sum::<u64>() * delta_codings as u64;
    let total = served + deltas;
    let mut over = total.saturating_sub(max);
    let mut order: Vec<(usize, u64, &str, usize, [u8; 32])> = chosen
        .iter()
        .enumerate()
        .flat_map(|(i, c)| {
            let age = &age;
            c.iter().map(move |(old, sha)| {
                let f = &files[i];
                (age(old.release), f.size, f.found.rel.as_str(), i, *sha)
            })
        })
        .collect();
    order.sort();
    let mut drop: Vec<(usize, [u8; 32])> = Vec::new();
    for (_, _, _, i, sha) in order {
        if over == 0 || delta_codings == 0 {
            break;
        }
        drop.push((i, sha));
        over = over.saturating_sub(delta_codings as u64);
    }
    for (i, sha) in &drop {
        chosen[*i].retain(|(_, s)| s != sha);
    }
    Bounded {
        files: total,
        dropped: drop.len() as u64 * delta_codings as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::state::releases::OldFile;

    fn scanned(rel: &str, size: u64) -> Scanned {
        Scanned::for_test(rel, size)
    }

    fn old(release: usize, n: u8) -> (OldFile, [u8; 32]) {
        let f = OldFile {
            release,
            rel: format!("r{release}"),
            path: std::path::PathBuf::new(),
            size: 1,
            expect: None,
        };
        (f, [n; 32])
    }

    #[test]
    fn deltas_against_the_oldest_release_and_the_smallest_files_go_first() {
        let files = [
            scanned("a.js", 500),
            scanned("b.js", 100),
            scanned("c.png", 100),
        ];
        let filter = Filter::new(&[], &[], 0).unwrap();
        // Release 2 is the oldest (the store's), 0 and 1 the folders given.
        let age = |r: usize| if r == 2 { 0 } else { r + 1 };
        let fresh = || {
            vec![
                vec![old(0, 1), old(2, 2)],
                vec![old(0, 3), old(2, 4)],
                vec![],
            ]
        };
        // Served: manifest, 3 sources, 3 variants each of a.js and b.js = 10;
        // deltas: 4 pairs x 2 codings = 8.
        let mut chosen = fresh();
        let b = bound(18, &files, &mut chosen, &filter, (3, 2), age);
        assert_eq!(
            b,
            Bounded {
                files: 18,
                dropped: 0
            }
        );
        let shas = |c: &[Chosen]| {
            c.iter()
                .map(|c| c.iter().map(|(_, s)| s[0]).collect())
                .collect::<Vec<Vec<u8>>>()
        };
        assert_eq!(shas(&chosen), vec![vec![1, 2], vec![3, 4], vec![]]);

        let b = bound(15, &files, &mut chosen, &filter, (3, 2), age);
        assert_eq!(
            b,
            Bounded {
                files: 18,
                dropped: 4
            }
        );
        // The oldest release's deltas: b.js's (smaller) first, then a.js's.
        assert_eq!(shas(&chosen), vec![vec![1], vec![3], vec![]]);

        let mut chosen = fresh();
        let b = bound(16, &files, &mut chosen, &filter, (3, 2), age);
        assert_eq!(b.dropped, 2);
        assert_eq!(shas(&chosen), vec![vec![1, 2], vec![3], vec![]]);

        // Past the bound with no delta left: every delta goes, no source or variant.
        let mut chosen = fresh();
        let b = bound(5, &files, &mut chosen, &filter, (3, 2), age);
        assert_eq!(b.dropped, 8);
        assert!(chosen.iter().all(|c| c.is_empty()));
    }
}
