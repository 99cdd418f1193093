//! Splitting a run across CI jobs (`--shard K/N`): which shard makes each
//! unit of work. The split is a pure function of the planned units and their
//! costs, so every shard computes the same one without talking to the
//! others; it never decides what a job writes (the run does). What a shard
//! writes and how `precompress merge` puts the shards together are
//! `model::shard` and `merge`.

use std::collections::BTreeMap;

use crate::model::coding::{Codec, DeltaCoding};
use crate::model::shard::{digest_keys, group_key, Shard};
use crate::run::jobs::{Job, Unit};
use crate::run::scanned::{Dict, Scanned};

/// One unit the split assigns: all jobs of one (asset, coding[, dictionary]),
/// so the parts of a split brotli stream stay in one shard. `cost` must not
/// depend on anything but the tree and the settings (not on a cache), or
/// shards would compute different splits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Group {
    pub key: String,
    pub cost: u64,
}

/// The shard (1-based) of each distinct group key. Longest first, each goes
/// to its home shard (from a hash of its key) while that shard stays within
/// 4% of an even share, else to the shard with the least cost so far
/// (lowest index on a tie): the shards finish close together, and a group
/// keeps its shard when the tree changes a little, so a shard's own
/// `--cache-dir` still holds its jobs on the next run. Deterministic: depends
/// only on the keys and costs.
pub fn split(groups: &[Group], count: u32) -> BTreeMap<String, u32> {
    let mut sorted: Vec<&Group> = groups.iter().collect();
    sorted.sort_by(|a, b| b.cost.cmp(&a.cost).then_with(|| a.key.cmp(&b.key)));
    sorted.dedup_by(|a, b| a.key == b.key);
    let n = count as u64;
    let total: u64 = sorted.iter().map(|g| g.cost.max(1)).sum();
    let cap = total / n + (total / n) / SLACK + 1;
    let mut load = vec![0u64; count as usize];
    let mut owner = BTreeMap::new();
    for g in sorted {
        let cost = g.cost.max(1);
        let hash = blake3::hash(g.key.as_bytes());
        let home =
            (u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes")) % n) as usize;
        let i = if load[home] + cost <= cap {
            home
        } else {
            load.iter()
                .enumerate()
                .min_by_key(|&(i, l)| (*l, i))
                .expect("count >= 1")
                .0
        };
        load[i] += cost;
        owner.insert(g.key.clone(), i as u32 + 1);
    }
    owner
}

/// A shard takes groups at home up to 1/SLACK (4%) over an even share.
const SLACK: u64 = 25;

/// `--shard K/N`: keeps the jobs of shard K only, the split computed the
/// same way in every shard ([`shard::split`]) from every unit the settings
/// ask for, costed by what making it would take ([`unit_cost`]), whatever is
/// already on disk: shards run one after another in one folder, or a shard
/// run again, split as the first did. Returns the shard, the digest of all
/// units, the ones kept, and the owner of each.
pub(crate) fn take_shard(
    s: Shard,
    units: &[Unit],
    jobs: &mut Vec<Job>,
    files: &[Scanned],
    dicts: &[Dict],
) -> (Shard, String, Vec<String>, BTreeMap<String, u32>) {
    let key = |file: usize, token: &str, dict: Option<usize>| {
        group_key(
            &files[file].found.rel,
            token,
            dict.map(|d| &dicts[d].sha256),
        )
    };
    let groups: Vec<Group> = units
        .iter()
        .map(|u| Group {
            key: key(u.file, u.token, u.dict),
            cost: unit_cost(u, files, dicts),
        })
        .collect();
    let owner = split(&groups, s.count);
    let digest = digest_keys(owner.keys());
    let owned: Vec<String> = owner
        .iter()
        .filter(|(_, &k)| k == s.index)
        .map(|(key, _)| key.clone())
        .collect();
    jobs.retain(|j| owner.get(&key(j.file, j.token(), j.dict())) == Some(&s.index));
    (s, digest, owned, owner)
}

/// What making a unit costs, for the shard split: its bytes in (a delta's
/// dictionary too) times its coding's relative cost.
pub(crate) fn unit_cost(u: &Unit, files: &[Scanned], dicts: &[Dict]) -> u64 {
    let size = files[u.file].size;
    match u.dict {
        Some(d) => {
            let coding = DeltaCoding::parse(u.token).expect("a delta unit's token");
            (size + dicts[d].old.size) * coding.cost_weight()
        }
        None => {
            size * Codec::parse(u.token)
                .expect("a variant unit's token")
                .cost_weight()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn groups(costs: &[u64]) -> Vec<Group> {
        costs
            .iter()
            .enumerate()
            .map(|(i, &cost)| Group {
                key: format!("f{i:03}\tbr"),
                cost,
            })
            .collect()
    }

    #[test]
    fn every_group_goes_to_exactly_one_shard_and_the_split_is_the_same_in_any_order() {
        let g = groups(&[50, 7, 300, 7, 120, 1, 0, 99, 64, 64]);
        let a = split(&g, 3);
        let mut reversed = g.clone();
        reversed.reverse();
        assert_eq!(a, split(&reversed, 3));
        assert_eq!(a.len(), g.len());
        assert!(a.values().all(|s| (1..=3).contains(s)));
    }

    #[test]
    fn the_split_balances_cost_not_count() {
        // One huge job and many small: the huge one's shard gets few others.
        let mut costs = vec![1000];
        costs.extend(std::iter::repeat_n(10, 100));
        let g = groups(&costs);
        let a = split(&g, 2);
        let l = loads(&g, &a, 2);
        assert!(l.iter().all(|&x| (960..=1041).contains(&x)), "{l:?}");
        let big = a[&g[0].key];
        let with_big = a.values().filter(|&&s| s == big).count();
        assert!(with_big <= 5, "{with_big} jobs beside the big one");
    }

    /// Costs like a site's: many small files, a few large (deterministic).
    fn site(n: usize, seed: u64) -> Vec<Group> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let r = (x >> 33) % 1000;
                let cost = if r < 5 {
                    2_000_000 + r * 1000
                } else {
                    1000 + (x >> 40) % 50_000
                };
                Group {
                    key: format!("assets/f{i:04}.js\tbr"),
                    cost,
                }
            })
            .collect()
    }

    fn loads(g: &[Group], a: &BTreeMap<String, u32>, n: u32) -> Vec<u64> {
        (1..=n)
            .map(|k| g.iter().filter(|x| a[&x.key] == k).map(|x| x.cost).sum())
            .collect()
    }

    #[test]
    fn shards_stay_within_a_few_percent_of_the_mean() {
        for n in [2, 3, 4, 8] {
            let g = site(3000, u64::from(n));
            let l = loads(&g, &split(&g, n), n);
            let mean = l.iter().sum::<u64>() as f64 / f64::from(n);
            let max = *l.iter().max().unwrap() as f64;
            assert!(max / mean < 1.06, "{n} shards: {l:?}");
        }
    }

    #[test]
    fn a_small_change_to_the_tree_moves_few_groups() {
        let g = site(3000, 7);
        let before = split(&g, 4);
        let mut changed = g.clone();
        changed.push(Group {
            key: "assets/new.js\tbr".into(),
            cost: 30_000,
        });
        changed[10].cost += 5_000;
        changed.remove(20);
        let after = split(&changed, 4);
        let moved = before
            .iter()
            .filter(|(k, s)| after.get(*k).is_some_and(|t| t != *s))
            .count();
        assert!(
            moved * 100 < g.len() * 5,
            "{moved} of {} groups moved",
            g.len()
        );
    }

    #[test]
    fn more_shards_than_jobs_leaves_some_empty() {
        let g = groups(&[5, 5]);
        let a = split(&g, 4);
        assert_eq!(
            a.values().copied().collect::<BTreeSet<_>>(),
            BTreeSet::from([1, 2])
        );
    }
}
