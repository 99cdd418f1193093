//! The rule that turns a coding's measured levels into what to pin: the
//! smallest output unless a level within a hair of its bytes costs much less
//! CPU, said in words a reader checks at a glance.

use serde::Serialize;

/// The thresholds of `recommend`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rule {
    /// Totals within this fraction of the smallest count as the same bytes (0.001: 0.1%).
    pub same_bytes: f64,
    /// A level is only changed for CPU alone when that saves at least this
    /// fraction of the current level's CPU (0.25): CPU times are measured on a
    /// machine doing other work, and a small saving is not worth a change.
    pub cpu_saving: f64,
}

/// The rule `precompress tune` applies.
pub const RULE: Rule = Rule {
    same_bytes: 0.001,
    cpu_saving: 0.25,
};

impl Rule {
    /// The rule in one sentence, for the table.
    pub fn describe(&self) -> String {
        format!(
            "the least CPU among the levels within {} of the smallest total; the current level stays when it is one of them and the change would save less than {} of its CPU",
            percent(self.same_bytes),
            percent(self.cpu_saving)
        )
    }
}

fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p == p.round() {
        format!("{p:.0}%")
    } else {
        format!("{p}%")
    }
}

/// One level's totals over the sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    pub level: i32,
    /// Encoder output, summed over the sampled files.
    pub bytes: u64,
    /// Encoder CPU time on its thread, summed over the sampled files.
    pub cpu_micros: u64,
}

/// What to pin for one coding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    pub level: i32,
    /// The precompress.toml line that pins it (`zstd-level = 19`).
    pub toml: String,
    /// Whether it differs from the current level.
    pub change: bool,
    /// Why, in one sentence.
    pub why: String,
    /// Other levels worth knowing about (a strictly smaller one, and at what CPU).
    pub notes: Vec<String>,
}

/// `a` relative to `b` as a signed percentage (`+0.31%`).
pub fn signed_pct(a: u64, b: u64) -> String {
    if b == 0 {
        return "n/a".into();
    }
    format!("{:+.2}%", (a as f64 / b as f64 - 1.0) * 100.0)
}

/// How much smaller `a` is than `b`, in percent of `b` (`0.31%`).
fn smaller_pct(a: u64, b: u64) -> String {
    format!("{:.2}%", (1.0 - a as f64 / b.max(1) as f64) * 100.0)
}

/// `a`'s CPU next to `b`'s, in words: "63% less CPU", "2.1x the CPU".
fn cpu_words(a: u64, b: u64) -> String {
    if a == 0 || b == 0 {
        return "CPU time this system does not report".into();
    }
    let r = a as f64 / b as f64;
    if r < 0.95 {
        format!("{:.0}% less CPU", (1.0 - r) * 100.0)
    } else if r <= 1.05 {
        "about the same CPU".into()
    } else {
        format!("{r:.1}x the CPU")
    }
}

/// The level to pin, from one coding's measurements (`rows`, which hold
/// `current`): the least CPU among the levels whose total is within
/// `rule.same_bytes` of the smallest, unless `current` is among them and
/// that would save less than `rule.cpu_saving` of its CPU. Bytes come
/// first (a variant is encoded once and downloaded many times); CPU decides
/// between levels that give the same bytes. `key` is the precompress.toml key.
pub(crate) fn recommend(key: &str, rows: &[Measured], current: i32, rule: Rule) -> Recommendation {
    let cur = *rows
        .iter()
        .find(|r| r.level == current)
        .expect("the current level is measured");
    let smallest = *rows
        .iter()
        .min_by_key(|r| (r.bytes, r.cpu_micros, r.level))
        .expect("the current level is measured");
    let same = |r: &Measured| r.bytes as f64 <= smallest.bytes as f64 * (1.0 + rule.same_bytes);
    let cheapest = *rows
        .iter()
        .filter(|r| same(r))
        .min_by_key(|r| (r.cpu_micros, r.level))
        .expect("the smallest is within the tolerance of itself");
    let saves_enough = cur.cpu_micros > 0
        && cheapest.cpu_micros as f64 <= cur.cpu_micros as f64 * (1.0 - rule.cpu_saving);
    let pick = if same(&cur) && !saves_enough {
        cur
    } else {
        cheapest
    };
    let (p, c) = (pick.level, cur.level);
    let why = if pick.level == cur.level {
        let standing = if cur.level == smallest.level {
            "it gives the smallest total".to_string()
        } else {
            format!(
                "it is within {} of the smallest total ({}: {})",
                percent(rule.same_bytes),
                smallest.level,
                signed_pct(smallest.bytes, cur.bytes)
            )
        };
        format!(
            "keep {c}: {standing}, and no level as small takes {} less CPU",
            percent(rule.cpu_saving)
        )
    } else if same(&cur) {
        format!(
            "{p} gives the same bytes as {c} ({}) for {}",
            signed_pct(pick.bytes, cur.bytes),
            cpu_words(pick.cpu_micros, cur.cpu_micros)
        )
    } else {
        format!(
            "{p} is {} smaller than {c}, for {}",
            smaller_pct(pick.bytes, cur.bytes),
            cpu_words(pick.cpu_micros, cur.cpu_micros)
        )
    };
    let mut notes = Vec::new();
    if smallest.level != pick.level && smallest.bytes < pick.bytes {
        notes.push(format!(
            "{} is the smallest, {} below {p}, for {}",
            smallest.level,
            smaller_pct(smallest.bytes, pick.bytes),
            cpu_words(smallest.cpu_micros, pick.cpu_micros)
        ));
    }
    if cur.bytes > smallest.bytes {
        // Every level strictly smaller than the current one, lower and
        // higher, unless the why and the note above named them all.
        let named = [pick.level, smallest.level];
        let smaller = |keep: fn(i32, i32) -> bool| -> Vec<i32> {
            rows.iter()
                .filter(|r| keep(r.level, c) && r.bytes < cur.bytes)
                .map(|r| r.level)
                .collect()
        };
        let lower = smaller(|l, c| l < c);
        let higher = smaller(|l, c| l > c);
        if lower.iter().chain(&higher).any(|l| !named.contains(l)) {
            for (which, levels) in [("lower", lower), ("higher", higher)] {
                if !levels.is_empty() {
                    notes.push(format!(
                        "{which} levels strictly smaller than {c}: {}",
                        levels
                            .iter()
                            .map(i32::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
        }
    }
    Recommendation {
        level: p,
        toml: format!("{key} = {p}"),
        change: p != c,
        why,
        notes,
    }
}

/// Measured rows from (level, bytes, CPU µs), for the tests here and in `tune`.
#[cfg(test)]
pub(super) fn rows(v: &[(i32, u64, u64)]) -> Vec<Measured> {
    v.iter()
        .map(|&(level, bytes, cpu_micros)| Measured {
            level,
            bytes,
            cpu_micros,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (what, rows as (level, bytes, cpu), current, expected level, expected change, words in why)
    #[allow(clippy::type_complexity)]
    const CASES: &[(&str, &[(i32, u64, u64)], i32, i32, &str)] = &[
        (
            "monotonic: the current level is the smallest, keep it",
            &[(9, 1100, 10), (10, 1050, 40), (11, 1000, 100)],
            11,
            11,
            "keep 11: it gives the smallest total",
        ),
        (
            "a lower level within 0.1% for much less CPU",
            &[(9, 1100, 10), (10, 1000, 40), (11, 1000, 100)],
            11,
            10,
            "10 gives the same bytes as 11 (+0.00%) for 60% less CPU",
        ),
        (
            "within 0.1% but only 10% cheaper: keep",
            &[(18, 100_050, 90), (19, 100_000, 100)],
            19,
            19,
            "keep 19",
        ),
        (
            "not monotonic: a lower level is strictly smaller",
            &[(9, 1100, 10), (10, 990, 40), (11, 1000, 100)],
            11,
            10,
            "10 is 1.00% smaller than 11, for 60% less CPU",
        ),
        (
            "a higher level 0.05% smaller, dearer: keep, with a note",
            &[(19, 100_050, 100), (22, 100_000, 300)],
            19,
            19,
            "keep 19: it is within 0.1% of the smallest total (22: -0.05%)",
        ),
        (
            "a higher level 1% smaller: take it",
            &[(19, 101_000, 100), (22, 100_000, 300)],
            19,
            22,
            "22 is 0.99% smaller than 19, for 3.0x the CPU",
        ),
        (
            "among same-bytes levels the cheapest wins, even above the current",
            &[(10, 2000, 10), (11, 1000, 100), (12, 1000, 50)],
            11,
            12,
            "12 gives the same bytes as 11 (+0.00%) for 50% less CPU",
        ),
        (
            "no CPU time on this system: bytes alone decide, the current level stays",
            &[(10, 1000, 0), (11, 1000, 0)],
            11,
            11,
            "keep 11",
        ),
    ];

    #[test]
    fn the_recommendation_rule() {
        for (what, r, current, want, why) in CASES {
            let rec = recommend("k", &rows(r), *current, RULE);
            assert_eq!(rec.level, *want, "{what}: {rec:?}");
            assert_eq!(rec.change, want != current, "{what}");
            assert_eq!(rec.toml, format!("k = {want}"), "{what}");
            assert!(rec.why.starts_with(why), "{what}: {}", rec.why);
            assert!(r.iter().any(|x| x.0 == rec.level), "{what}");
        }
    }

    #[test]
    fn a_smaller_level_not_picked_is_named_in_a_note() {
        let rec = recommend(
            "zstd-level",
            &rows(&[(19, 100_050, 100), (22, 100_000, 300)]),
            19,
            RULE,
        );
        assert_eq!(
            rec.notes,
            vec!["22 is the smallest, 0.05% below 19, for 3.0x the CPU".to_string()]
        );
        let rec = recommend(
            "k",
            &rows(&[
                (9, 1100, 10),
                (10, 990, 40),
                (11, 1000, 100),
                (12, 995, 200),
            ]),
            11,
            RULE,
        );
        assert_eq!(rec.level, 10);
        assert!(
            rec.notes
                .contains(&"higher levels strictly smaller than 11: 12".to_string()),
            "{:?}",
            rec.notes
        );
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(cpu_words(37, 100), "63% less CPU");
        assert_eq!(cpu_words(210, 100), "2.1x the CPU");
        assert_eq!(cpu_words(101, 100), "about the same CPU");
        assert_eq!(percent(0.001), "0.1%");
        assert_eq!(percent(0.25), "25%");
    }
}
