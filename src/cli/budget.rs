//! Size budgets: `--budget 'assets/**/*.js=150KB'` fails a run when an asset's
//! smallest representation (its best variant, or the file itself when it has
//! none) is larger than the budget, and says by how much.
//!
//! Budgets are checked on what a client actually downloads, the best variant,
//! because that is the number a performance budget is about; a 400 KB bundle
//! that brotli takes to 90 KB is within a 150 KB budget.

use std::collections::BTreeMap;
use std::fmt;

use precompressor::filter::Pattern;

use precompressor::error::{Error, Result};
use precompressor::model::manifest::Manifest;
use precompressor::report::{human, JobTiming};

/// One `GLOB=SIZE` budget.
#[derive(Debug, Clone)]
pub struct Budget {
    /// The glob as written: with a `/` it matches the path relative to DIR,
    /// without one the file name in any folder (the `--include` rules).
    pub glob: String,
    /// The limit in bytes.
    pub limit: u64,
    /// The limit as written (`150KB`), so a message shows what the user wrote.
    pub written: String,
    pattern: Pattern,
}

impl Budget {
    /// A budget for `glob` of `limit` bytes, written `written`.
    pub fn new(glob: &str, limit: u64, written: &str) -> Result<Budget> {
        let pattern = Pattern::new(glob)
            .map_err(|e| Error::Config(format!("budget {glob:?}: invalid glob: {e}")))?;
        Ok(Budget {
            glob: glob.to_string(),
            limit,
            written: written.trim().to_string(),
            pattern,
        })
    }

    /// Parses `GLOB=SIZE` (the last `=` splits, so a glob may contain one).
    pub fn parse(spec: &str) -> Result<Budget> {
        let (glob, size) = spec.rsplit_once('=').ok_or_else(|| {
            Error::Config(format!(
                "budget {spec:?}: expected GLOB=SIZE, e.g. 'assets/**/*.js=150KB'"
            ))
        })?;
        if glob.is_empty() {
            return Err(Error::Config(format!("budget {spec:?}: empty glob")));
        }
        let limit = parse_size(size).map_err(|e| Error::Config(format!("budget {spec:?}: {e}")))?;
        Budget::new(glob, limit, size)
    }

    /// Whether the budget applies to the asset at `rel` (relative to DIR, `/`-separated).
    pub fn matches(&self, rel: &str) -> bool {
        self.pattern.is_match(rel)
    }
}

/// The units a size may have, lower case, and their bytes: the integrations'
/// option checks take the list from here (lib/option-defs.js).
pub const SIZE_UNITS: [(&str, u64); 10] = [
    ("b", 1),
    ("k", 1_000),
    ("kb", 1_000),
    ("m", 1_000_000),
    ("mb", 1_000_000),
    ("g", 1_000_000_000),
    ("gb", 1_000_000_000),
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
];

/// Parses a size: `1234`, `150KB`, `1.5MiB`, `2 GB`. KB, MB, GB are powers of
/// 1000 and KiB, MiB, GiB of 1024 (as on a package registry's size badge and
/// in a browser's network panel respectively); `K`, `M`, `G` mean KB, MB, GB.
pub fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let invalid = || format!("invalid size {s:?} (expected e.g. 150KB, 1.5MiB or 2048)");
    let n: f64 = num.parse().map_err(|_| invalid())?;
    let unit = unit.trim().to_ascii_lowercase();
    let mult = match SIZE_UNITS.iter().find(|(u, _)| *u == unit) {
        Some((_, m)) => *m,
        None if unit.is_empty() => 1,
        None => {
            return Err(format!(
                "invalid size unit {unit:?} in {s:?} (expected B, KB, MB, GB, KiB, MiB or GiB)"
            ))
        }
    };
    // Whole numbers exactly (an f64 loses the last digits of large ones);
    // a size past u64 is an error, never silently the largest one.
    let bytes = match num.parse::<u64>() {
        Ok(whole) => whole.checked_mul(mult),
        Err(_) if !num.contains('.') => None,
        Err(_) => Some((n * mult as f64).round())
            .filter(|b| *b < u64::MAX as f64)
            .map(|b| b as u64),
    };
    bytes.ok_or_else(|| format!("size {s:?} is too large (at most {} bytes)", u64::MAX))
}

/// What a client downloads for one asset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetSize {
    /// Path relative to DIR, `/`-separated.
    pub path: String,
    /// The source's size.
    pub size: u64,
    /// The smallest variant (coding token, size), if there is one.
    pub best: Option<(String, u64)>,
    /// When there is none, why (the manifest's skip reason codes).
    pub why_none: Vec<String>,
}

/// An [`AssetSize`] from literals, for this module's and github.rs's tests.
#[cfg(test)]
pub(crate) fn test_asset(path: &str, size: u64, best: Option<(&str, u64)>) -> AssetSize {
    AssetSize {
        path: path.into(),
        size,
        best: best.map(|(c, n)| (c.into(), n)),
        why_none: Vec::new(),
    }
}

impl AssetSize {
    /// The smallest representation's size: the best variant, else the source.
    pub fn served(&self) -> u64 {
        self.best
            .as_ref()
            .map_or(self.size, |(_, n)| (*n).min(self.size))
    }

    /// `br 571 B`, or `identity 1.2 KiB` when there is no variant.
    pub fn served_label(&self) -> String {
        match &self.best {
            Some((coding, n)) => format!("{coding} {}", human(*n)),
            None => format!("identity {}", human(self.size)),
        }
    }

    /// [`AssetSize::served_label`], and when there is no variant why, in words
    /// (`identity 23 B (under `--min-size`)`), for `-v`.
    pub fn label_with_reason(&self) -> String {
        match &self.best {
            Some(_) => self.served_label(),
            None => {
                let mut why: Vec<&str> = self
                    .why_none
                    .iter()
                    .map(|c| precompressor::model::skip::reason_in_words(c))
                    .filter(|w| !w.is_empty())
                    .collect();
                why.dedup();
                if why.is_empty() {
                    format!("identity {}", human(self.size))
                } else {
                    format!("identity {} ({})", human(self.size), why.join("; "))
                }
            }
        }
    }
}

/// Every asset of a manifest with its best variant, in path order.
pub fn sizes_from_manifest(m: &Manifest) -> Vec<AssetSize> {
    m.files
        .iter()
        .map(|(path, a)| AssetSize {
            path: path.clone(),
            size: a.size,
            best: a
                .encodings
                .iter()
                .min_by_key(|v| (v.size, v.coding.clone()))
                .map(|v| (v.coding.clone(), v.size)),
            why_none: {
                let mut codes: Vec<String> =
                    a.skipped.values().map(|r| r.as_str().to_string()).collect();
                codes.sort();
                codes.dedup();
                codes
            },
        })
        .collect()
}

/// What a dry run would leave: the previous manifest's assets (if any), with
/// every asset this run compressed replaced by the sizes its jobs computed
/// (a job whose output is not smaller than its input keeps no variant).
pub fn sizes_from_jobs(previous: Option<&Manifest>, jobs: &[JobTiming]) -> Vec<AssetSize> {
    let mut by_path: BTreeMap<String, AssetSize> = previous
        .map(sizes_from_manifest)
        .unwrap_or_default()
        .into_iter()
        .map(|a| (a.path.clone(), a))
        .collect();
    let mut fresh: BTreeMap<&str, AssetSize> = BTreeMap::new();
    for j in jobs {
        let a = fresh.entry(&j.path).or_insert_with(|| AssetSize {
            path: j.path.clone(),
            size: j.input,
            best: None,
            why_none: Vec::new(),
        });
        if j.output < j.input && a.best.as_ref().is_none_or(|(_, n)| j.output < *n) {
            a.best = Some((j.coding.to_string(), j.output));
        }
    }
    for (p, a) in fresh {
        by_path.insert(p.to_string(), a);
    }
    by_path.into_values().collect()
}

/// An asset over one of its budgets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The asset, relative to DIR.
    pub path: String,
    /// What a client downloads: `br 153.2 KiB`.
    pub served: String,
    /// Its size in bytes.
    pub size: u64,
    /// The budget's glob.
    pub glob: String,
    /// The budget in bytes.
    pub limit: u64,
    /// The budget as written (`150KB`).
    pub written: String,
}

impl Violation {
    /// Bytes over the budget.
    pub fn excess(&self) -> u64 {
        self.size - self.limit
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} ({} bytes) is over the budget {}={} ({} bytes) by {} ({} bytes, {:.1}%)",
            self.path,
            self.served,
            self.size,
            self.glob,
            self.written,
            self.limit,
            human(self.excess()),
            self.excess(),
            100.0 * self.excess() as f64 / self.limit.max(1) as f64
        )
    }
}

/// The outcome of checking budgets.
#[derive(Debug, Default)]
pub struct Checked {
    /// Assets over a budget, in path order then budget order.
    pub violations: Vec<Violation>,
    /// Globs that matched no asset: most likely a typo, worth a warning.
    pub unmatched: Vec<String>,
}

/// Checks every asset against every budget that matches it.
pub fn check(budgets: &[Budget], assets: &[AssetSize]) -> Checked {
    let mut out = Checked::default();
    let mut used = vec![false; budgets.len()];
    for a in assets {
        for (i, b) in budgets.iter().enumerate() {
            if !b.matches(&a.path) {
                continue;
            }
            used[i] = true;
            if a.served() > b.limit {
                out.violations.push(Violation {
                    path: a.path.clone(),
                    served: a.served_label(),
                    size: a.served(),
                    glob: b.glob.clone(),
                    limit: b.limit,
                    written: b.written.clone(),
                });
            }
        }
    }
    out.unmatched = budgets
        .iter()
        .zip(used)
        .filter(|(_, u)| !u)
        .map(|(b, _)| b.glob.clone())
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::test_asset as asset;

    #[test]
    fn sizes_parse_in_decimal_and_binary_units() {
        assert_eq!(parse_size("2048"), Ok(2048));
        assert_eq!(parse_size("150KB"), Ok(150_000));
        assert_eq!(parse_size("150kb"), Ok(150_000));
        assert_eq!(parse_size("1.5MiB"), Ok(1_572_864));
        assert_eq!(parse_size("2 GB"), Ok(2_000_000_000));
        assert_eq!(parse_size("10K"), Ok(10_000));
        assert!(parse_size("10 furlongs").unwrap_err().contains("furlongs"));
        assert!(parse_size("KB").is_err());
        assert!(parse_size("").is_err());
        // Past u64 it was silently u64::MAX; now it says so.
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        for huge in [
            "18446744073709551616",
            "20000000000GB",
            "1e30",
            "99999999999999999999.5",
        ] {
            assert!(parse_size(huge).is_err(), "{huge}");
        }
        assert!(parse_size("20000000000GB")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn spec_splits_on_the_last_equals_sign() {
        let b = Budget::parse("assets/**/*.js=150KB").unwrap();
        assert_eq!((b.glob.as_str(), b.limit), ("assets/**/*.js", 150_000));
        let b = Budget::parse("a=b.js=1KiB").unwrap();
        assert_eq!((b.glob.as_str(), b.limit), ("a=b.js", 1024));
        for bad in ["*.js", "=10KB", "*.js=ten", "[*.js=1KB"] {
            let e = Budget::parse(bad).unwrap_err().to_string();
            let glob = bad.split('=').next().unwrap();
            assert!(e.starts_with("budget \"") && e.contains(glob), "{bad}: {e}");
        }
    }

    #[test]
    fn globs_follow_the_include_rules() {
        let by_name = Budget::parse("*.js=1").unwrap();
        assert!(by_name.matches("app.js") && by_name.matches("assets/deep/app.js"));
        let by_path = Budget::parse("assets/*.js=1").unwrap();
        assert!(by_path.matches("assets/app.js"));
        assert!(!by_path.matches("assets/deep/app.js"), "* never crosses /");
        assert!(Budget::parse("assets/**/*.js=1")
            .unwrap()
            .matches("assets/deep/app.js"));
    }

    #[test]
    fn the_best_representation_is_checked_and_the_excess_reported() {
        let assets = [
            asset("assets/app.js", 400_000, Some(("br", 160_000))),
            asset("assets/ok.js", 400_000, Some(("br", 90_000))),
            asset("img/big.png", 300_000, None),
        ];
        let budgets = [
            Budget::parse("*.js=150KB").unwrap(),
            Budget::parse("img/*=250KB").unwrap(),
            Budget::parse("*.css=1KB").unwrap(),
        ];
        let c = check(&budgets, &assets);
        assert_eq!(c.violations.len(), 2);
        let v = &c.violations[0];
        assert_eq!(
            (v.path.as_str(), v.size, v.excess()),
            ("assets/app.js", 160_000, 10_000)
        );
        let msg = v.to_string();
        assert!(
            msg.contains("assets/app.js") && msg.contains("br 156.2 KiB"),
            "{msg}"
        );
        assert!(
            msg.contains("*.js=150KB (150000 bytes)")
                && msg.contains("by 9.8 KiB (10000 bytes, 6.7%)"),
            "{msg}"
        );
        assert_eq!(c.violations[1].served, "identity 293.0 KiB");
        assert_eq!(c.unmatched, vec!["*.css".to_string()]);
    }

    #[test]
    fn dry_run_sizes_overlay_fresh_jobs_on_the_previous_manifest() {
        let job = |path: &str, coding: &'static str, input, output| JobTiming {
            path: path.into(),
            coding,
            input,
            output,
            micros: 1,
            cpu_micros: 1,
            encode_micros: 1,
            verify_micros: 1,
        };
        let jobs = [
            job("a.js", "br", 100, 40),
            job("a.js", "gzip", 100, 50),
            job("r.bin", "br", 100, 100),
        ];
        let got = sizes_from_jobs(None, &jobs);
        assert_eq!(
            got,
            vec![
                asset("a.js", 100, Some(("br", 40))),
                asset("r.bin", 100, None)
            ]
        );
    }
}
