//! `precompress tune DIR`: every level of each coding measured on a sample of
//! DIR's own assets, and the precompress.toml lines that pin the best.
//!
//! Encoder levels are not monotonic on real assets: a higher level can be
//! larger, and two levels a step apart can cost twice the CPU for the same
//! bytes. So a team should measure on what it ships and pin the result rather
//! than trust the defaults. This module owns the sample (the run's own walk and
//! filter, then whole files spread evenly over the path order up to `--sample`
//! bytes: [`prepare`], `pick_sample`), the measurements (the run's own
//! encoders through [`new_encoder`], so the same parameters, zstd's 8 MiB window
//! cap included, timed in per-thread CPU time: [`measure`]), the rule that
//! turns them into a recommendation (`recommend`), all in a [`Tuning`]
//! (the binary renders it as tables, `--json` as it is).
//!
//! It must never write anything into DIR: no variant, no manifest, no lock, no
//! temporary file. It lists and reads, nothing else.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde::Serialize;

use crate::config::Config;
use crate::encode::{new_encoder, Codec, ContentKind, Encoder, Levels};
use crate::error::{Error, Result};
use crate::model::content::content_kind;
use crate::report::{human, thread_cpu_micros};
use crate::run::filter::Filter;

mod recommend;

use self::recommend::recommend;
pub use self::recommend::{signed_pct, Measured, Recommendation, Rule, RULE};

/// `--sample`'s default: enough of a site to rank the levels, and about a
/// minute of CPU on two cores for all 34 levels.
pub const DEFAULT_SAMPLE: u64 = 8 << 20;

/// The levels measured for `codec`: from the fastest a team would still ship
/// precompressed up to the highest there is.
pub(crate) fn levels(codec: Codec) -> RangeInclusive<i32> {
    match codec {
        Codec::Brotli => 5..=11,
        Codec::Zstd => 3..=22,
        Codec::Gzip => 6..=12,
    }
}

/// The precompress.toml key (and long option) that sets `codec`'s level.
pub(crate) fn key(codec: Codec) -> &'static str {
    match codec {
        Codec::Brotli => "brotli-quality",
        Codec::Zstd => "zstd-level",
        Codec::Gzip => "gzip-level",
    }
}

/// `codec`'s level in `levels`.
pub(crate) fn level_of(levels: &Levels, codec: Codec) -> i32 {
    match codec {
        Codec::Brotli => levels.brotli_quality as i32,
        Codec::Zstd => levels.zstd_level,
        Codec::Gzip => levels.gzip_level,
    }
}

/// `levels` with `codec`'s level set to `level` (the others are unused by its encoder).
fn with_level(mut levels: Levels, codec: Codec, level: i32) -> Levels {
    match codec {
        Codec::Brotli => levels.brotli_quality = level as u32,
        Codec::Zstd => levels.zstd_level = level,
        Codec::Gzip => levels.gzip_level = level,
    }
    levels
}

/// The levels measured for `codec` when the run uses `current`: `levels`,
/// plus `current` when it lies outside them (every row is compared with it).
pub(crate) fn levels_to_measure(codec: Codec, current: i32) -> Vec<i32> {
    let mut l: Vec<i32> = levels(codec).collect();
    if !l.contains(&current) {
        l.push(current);
        l.sort_unstable();
    }
    l
}

/// Indices `0..n` in an order whose every prefix is spread evenly over
/// `0..n`: bit-reversal (van der Corput) order, 0, n/2, n/4, 3n/4, ...
fn spread(n: usize) -> impl Iterator<Item = usize> {
    let m = n.next_power_of_two();
    let bits = m.trailing_zeros();
    (0..m)
        .map(move |i| {
            if bits == 0 {
                i
            } else {
                i.reverse_bits() >> (usize::BITS - bits)
            }
        })
        .filter(move |&j| j < n)
}

/// Which assets to measure, given their sizes in path order: whole files, at
/// most `limit` bytes in all. Files are offered in `spread` order and each
/// is taken if it still fits, so a small limit still reaches from the first
/// folder to the last, and the same tree always gives the same sample. A file
/// larger than `limit` is never taken. Returns indices, ascending.
pub(crate) fn pick_sample(sizes: &[u64], limit: u64) -> Vec<usize> {
    let mut left = limit;
    let mut picked = Vec::new();
    for i in spread(sizes.len()) {
        if sizes[i] <= left {
            left -= sizes[i];
            picked.push(i);
        }
    }
    picked.sort_unstable();
    picked
}

/// One asset chosen to be measured.
#[derive(Debug, Clone)]
pub struct SampledFile {
    /// Path relative to DIR, `/`-separated.
    pub rel: String,
    /// Path to read.
    pub path: PathBuf,
    /// Size when the tree was walked.
    pub size: u64,
}

/// How much of DIR the sample covers.
#[derive(Debug, Clone, Serialize)]
pub struct SampleSummary {
    /// Files measured.
    pub files: u64,
    /// Their total size.
    pub bytes: u64,
    /// Assets a run would compress (include, exclude, types, min-size).
    pub assets: u64,
    /// Their total size.
    pub asset_bytes: u64,
    /// `--sample`: the bound on `bytes`.
    pub limit: u64,
    /// Assets larger than `limit` on their own, so never measured.
    pub over_limit: u64,
}

impl SampleSummary {
    /// `9 of 120 assets, 7.9 MiB of 31.2 MiB`.
    pub fn describe(&self) -> String {
        format!(
            "{} of {} assets, {} of {}",
            self.files,
            self.assets,
            human(self.bytes),
            human(self.asset_bytes)
        )
    }
}

/// The output of [`prepare`]: what [`measure`] encodes.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The files, in path order.
    pub files: Vec<SampledFile>,
    pub summary: SampleSummary,
    /// Entries that could not be listed or read (left out of the sample).
    pub warnings: Vec<String>,
}

/// Walks DIR as a run does (the same walk, the same files never taken for
/// assets, the same filter) and picks the sample (`pick_sample`).
pub fn prepare(cfg: &Config, limit: u64) -> Result<Sample> {
    let root = cfg.root.as_path();
    crate::run::settings::check_root(cfg)?;
    cfg.validate()?;
    let filter = Filter::new(&cfg.include, &cfg.exclude, cfg.min_size)?;
    let tree = crate::run::walk::walk_assets(cfg);
    let mut warnings: Vec<String> = tree.errors.iter().map(ToString::to_string).collect();
    let mut assets = Vec::new();
    for f in tree.files {
        // An asset that cannot be read is left out of the sample with a
        // warning, and the sample is taken around it.
        let md = crate::fsutil::open_to_read(&f.path).and_then(|h| h.metadata());
        match md {
            Ok(md) if filter.decide(&f.rel, md.len()).is_none() => assets.push(SampledFile {
                rel: f.rel,
                path: f.path,
                size: md.len(),
            }),
            Ok(_) => {}
            Err(source) => warnings.push(
                Error::Read {
                    path: f.path,
                    source,
                }
                .to_string(),
            ),
        }
    }
    // The walk sorts by name within each folder; the sample wants one order of whole paths.
    assets.sort_by(|a, b| a.rel.cmp(&b.rel));
    if assets.is_empty() {
        return Err(Error::Config(format!(
            "{}: nothing to measure: no file there is an asset a run would compress (types, --include, --exclude, --min-size)",
            root.display()
        )));
    }
    let sizes: Vec<u64> = assets.iter().map(|a| a.size).collect();
    let picked = pick_sample(&sizes, limit);
    if picked.is_empty() {
        return Err(Error::Config(format!(
            "every asset in {} is larger than --sample {} (the smallest is {}); raise --sample",
            root.display(),
            human(limit),
            human(sizes.iter().copied().min().unwrap_or(0))
        )));
    }
    let summary = SampleSummary {
        files: picked.len() as u64,
        bytes: picked.iter().map(|&i| sizes[i]).sum(),
        assets: assets.len() as u64,
        asset_bytes: sizes.iter().sum(),
        limit,
        over_limit: sizes.iter().filter(|&&s| s > limit).count() as u64,
    };
    let mut keep = vec![false; assets.len()];
    for i in picked {
        keep[i] = true;
    }
    let files = assets
        .into_iter()
        .zip(keep)
        .filter_map(|(a, k)| k.then_some(a))
        .collect();
    Ok(Sample {
        files,
        summary,
        warnings,
    })
}

/// One row of a coding's table.
#[derive(Debug, Clone, Serialize)]
pub struct LevelRow {
    pub level: i32,
    /// Encoder output summed over the sample.
    pub bytes: u64,
    /// `bytes` / the current level's bytes.
    pub relative: f64,
    /// Encoder CPU time on its thread, summed over the sample (0 where the OS cannot say).
    pub cpu_micros: u64,
    /// `cpu_micros` / the current level's (0 when that is 0).
    pub cpu_relative: f64,
}

/// One coding's measurements and recommendation.
#[derive(Debug, Clone, Serialize)]
pub struct CodingTable {
    /// `br`, `zstd` or `gzip`.
    pub coding: &'static str,
    /// Its precompress.toml key.
    pub key: &'static str,
    /// The level the run uses now (flags, precompress.toml, or the default).
    pub current: i32,
    /// The level with the smallest total.
    pub smallest: i32,
    /// Every level measured, ascending.
    pub levels: Vec<LevelRow>,
    pub recommendation: Recommendation,
}

/// What `precompress tune` found.
#[derive(Debug, Clone, Serialize)]
pub struct Tuning {
    /// The folder measured.
    pub dir: PathBuf,
    /// The precompress.toml the current levels came from, if any (set by the CLI).
    pub config_file: Option<PathBuf>,
    pub sample: SampleSummary,
    /// The sampled files, relative to `dir`, in path order.
    pub files: Vec<String>,
    pub rule: Rule,
    /// Worker threads.
    pub threads: usize,
    /// Wall time of the measurements, ms.
    pub wall_ms: u64,
    pub codings: Vec<CodingTable>,
    /// The recommended precompress.toml lines, one per coding.
    pub toml: String,
    /// Files that could not be listed or read (left out of the sample).
    pub warnings: Vec<String>,
}

/// One (coding, level, file) encode.
struct Job {
    table: usize,
    codec: Codec,
    level: i32,
    file: usize,
}

/// One coding to measure: its codec, the run's current level, and the levels
/// measured (`levels_to_measure`).
type Table = (Codec, i32, Vec<i32>);

/// What one job measured: (index of the job, output bytes, encoder CPU µs).
type Done = (usize, u64, u64);

/// Encodes every sampled file at every level of every coding in `cfg.codecs`
/// with the run's encoders, on `cfg`'s worker threads, and applies [`RULE`].
/// The byte totals are the same on any number of threads; CPU times are
/// measurements and vary a little from run to run.
pub fn measure(cfg: &Config, sample: &Sample) -> Result<Tuning> {
    let started = Instant::now();
    let inputs: Vec<Vec<u8>> = sample
        .files
        .iter()
        .map(|f| {
            crate::fsutil::read_regular(&f.path, u64::MAX).map_err(|source| Error::Read {
                path: f.path.clone(),
                source,
            })
        })
        .collect::<Result<_>>()?;
    let tables = tables(cfg);
    let sizes: Vec<usize> = inputs.iter().map(Vec::len).collect();
    let jobs = jobs(&tables, &sizes);
    let threads = cfg.worker_threads();
    let done = encode_all(cfg, sample, &inputs, &jobs, threads)?;
    let totals = totals(&tables, &jobs, done);
    let codings: Vec<CodingTable> = tables
        .iter()
        .zip(totals)
        .map(|(&(codec, current, _), rows)| coding_table(codec, current, rows))
        .collect();
    let toml = codings
        .iter()
        .map(|c| format!("{}\n", c.recommendation.toml))
        .collect();
    Ok(Tuning {
        dir: cfg.root.clone(),
        config_file: None,
        sample: sample.summary.clone(),
        files: sample.files.iter().map(|f| f.rel.clone()).collect(),
        rule: RULE,
        threads,
        wall_ms: started.elapsed().as_millis() as u64,
        codings,
        toml,
        warnings: sample.warnings.clone(),
    })
}

/// The codings of `cfg.codecs`, in codec order, each once.
fn tables(cfg: &Config) -> Vec<Table> {
    let mut codecs = cfg.codecs.clone();
    codecs.sort();
    codecs.dedup();
    codecs
        .iter()
        .map(|&c| {
            let current = level_of(&cfg.levels, c);
            (c, current, levels_to_measure(c, current))
        })
        .collect()
}

/// Every (coding, level, file) of `tables` over files of `sizes` bytes, the
/// costliest first (brotli, then zstd, then gzip, highest levels first,
/// largest files first), so the last jobs are short ones and no core idles
/// at the end; jobs of one level stay together, so a worker keeps its
/// encoder from one file to the next as a run does.
fn jobs(tables: &[Table], sizes: &[usize]) -> Vec<Job> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    let mut by_cost: Vec<(usize, Codec, i32)> = tables
        .iter()
        .enumerate()
        .flat_map(|(t, (c, _, levels))| levels.iter().map(move |&l| (t, *c, l)))
        .collect();
    by_cost.sort_by_key(|&(_, c, l)| std::cmp::Reverse((c.cost_weight(), l)));
    let mut jobs = Vec::new();
    for (table, codec, level) in by_cost {
        for &file in &order {
            jobs.push(Job {
                table,
                codec,
                level,
                file,
            });
        }
    }
    jobs
}

/// Runs `jobs` on `threads` workers. Each worker takes the next job from one
/// queue and keeps its results to itself; they are merged once all are done.
/// The first failure stops every worker.
fn encode_all(
    cfg: &Config,
    sample: &Sample,
    inputs: &[Vec<u8>],
    jobs: &[Job],
    threads: usize,
) -> Result<Vec<Done>> {
    let kinds: Vec<ContentKind> = sample.files.iter().map(|f| content_kind(&f.rel)).collect();
    // Every thread of the pool runs the loop below: none past the jobs.
    let threads = crate::config::threads_for_work(threads, jobs.len());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Config(format!("cannot start {threads} threads: {e}")))?;
    let next = AtomicUsize::new(0);
    let per_worker: Vec<Result<Vec<Done>>> = pool.broadcast(|_| {
        let mut encoder: Option<((Codec, i32), Box<dyn Encoder>)> = None;
        let mut out = Vec::new();
        let mut done = Vec::new();
        loop {
            let j = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(j) else {
                return Ok(done);
            };
            let path = &sample.files[job.file].path;
            let fail = |source| Error::Encode {
                path: path.clone(),
                coding: job.codec.token(),
                source,
            };
            let want = (job.codec, job.level);
            let enc = match &mut encoder {
                Some((have, enc)) if *have == want => enc,
                slot => {
                    let levels = with_level(cfg.levels, job.codec, job.level);
                    let enc = new_encoder(job.codec, levels).map_err(|e| {
                        next.store(jobs.len(), Ordering::Relaxed);
                        fail(e)
                    })?;
                    &mut slot.insert((want, enc)).1
                }
            };
            let t = thread_cpu_micros();
            let r = enc.encode(&inputs[job.file], kinds[job.file], &mut out);
            let cpu = thread_cpu_micros().saturating_sub(t);
            if let Err(e) = r {
                next.store(jobs.len(), Ordering::Relaxed);
                return Err(fail(e));
            }
            done.push((j, out.len() as u64, cpu));
        }
    });
    let mut all = Vec::new();
    for results in per_worker {
        all.extend(results?);
    }
    Ok(all)
}

/// Each table's levels, ascending, with the bytes and CPU of their jobs summed.
fn totals(tables: &[Table], jobs: &[Job], done: Vec<Done>) -> Vec<Vec<Measured>> {
    let mut totals: Vec<Vec<Measured>> = tables
        .iter()
        .map(|(_, _, levels)| {
            levels
                .iter()
                .map(|&level| Measured {
                    level,
                    bytes: 0,
                    cpu_micros: 0,
                })
                .collect()
        })
        .collect();
    for (j, bytes, cpu) in done {
        let job = &jobs[j];
        let row = totals[job.table]
            .iter_mut()
            .find(|r| r.level == job.level)
            .expect("every job's level has a row");
        row.bytes += bytes;
        row.cpu_micros += cpu;
    }
    totals
}

/// One coding's table: its `rows`, each relative to the `current` level's,
/// and the recommendation.
fn coding_table(codec: Codec, current: i32, rows: Vec<Measured>) -> CodingTable {
    let cur = *rows
        .iter()
        .find(|r| r.level == current)
        .expect("the current level is measured");
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let recommendation = recommend(key(codec), &rows, current, RULE);
    CodingTable {
        coding: codec.token(),
        key: key(codec),
        current,
        smallest: rows
            .iter()
            .min_by_key(|r| (r.bytes, r.cpu_micros, r.level))
            .map_or(current, |r| r.level),
        levels: rows
            .iter()
            .map(|r| LevelRow {
                level: r.level,
                bytes: r.bytes,
                relative: ratio(r.bytes, cur.bytes),
                cpu_micros: r.cpu_micros,
                cpu_relative: ratio(r.cpu_micros, cur.cpu_micros),
            })
            .collect(),
        recommendation,
    }
}

#[cfg(test)]
mod tests {
    use super::recommend::rows;
    use super::*;

    fn sum(sizes: &[u64], picked: &[usize]) -> u64 {
        picked.iter().map(|&i| sizes[i]).sum()
    }

    #[test]
    fn spread_visits_every_index_once_and_halves_first() {
        for n in [0, 1, 2, 3, 7, 8, 100] {
            let mut v: Vec<usize> = spread(n).collect();
            if n >= 2 {
                assert_eq!(v[..2], [0, n.next_power_of_two() / 2], "n={n}");
            }
            v.sort_unstable();
            assert_eq!(v, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn the_sample_takes_everything_that_fits() {
        let sizes = [10, 20, 30];
        assert_eq!(pick_sample(&sizes, 60), vec![0, 1, 2]);
        assert_eq!(pick_sample(&sizes, 1000), vec![0, 1, 2]);
        assert_eq!(pick_sample(&[], 1000), Vec::<usize>::new());
    }

    #[test]
    fn the_sample_stays_within_the_limit_and_reaches_across_the_tree() {
        let sizes = vec![10u64; 100];
        let picked = pick_sample(&sizes, 100);
        assert_eq!(picked.len(), 10);
        assert_eq!(sum(&sizes, &picked), 100);
        // Evenly spread: no gap wider than twice the even spacing, both ends reached.
        let gaps: Vec<usize> = picked.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|&g| g <= 20), "{picked:?}");
        assert!(
            picked[0] < 10 && *picked.last().unwrap() >= 80,
            "{picked:?}"
        );
        // Deterministic.
        assert_eq!(pick_sample(&sizes, 100), picked);
    }

    #[test]
    fn a_file_larger_than_the_limit_is_passed_over_not_the_rest() {
        let sizes = [500, 10, 10, 10];
        let picked = pick_sample(&sizes, 100);
        assert_eq!(picked, vec![1, 2, 3]);
        assert_eq!(pick_sample(&[500], 100), Vec::<usize>::new());
    }

    #[test]
    fn the_sample_is_bounded_for_uneven_sizes() {
        let sizes: Vec<u64> = (0..1000u64).map(|i| (i * 7919) % 5000 + 1).collect();
        for limit in [1, 100, 5_000, 100_000, 1_000_000, 10_000_000] {
            let picked = pick_sample(&sizes, limit);
            assert!(sum(&sizes, &picked) <= limit, "limit {limit}");
            assert!(picked.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn the_current_level_is_measured_even_outside_the_range() {
        assert_eq!(
            levels_to_measure(Codec::Brotli, 11),
            (5..=11).collect::<Vec<_>>()
        );
        assert_eq!(levels_to_measure(Codec::Brotli, 2)[..2], [2, 5]);
        assert_eq!(levels_to_measure(Codec::Zstd, 1)[0], 1);
        assert_eq!(levels_to_measure(Codec::Gzip, 9).len(), 7);
    }

    #[test]
    fn jobs_run_costliest_first_and_keep_one_level_together() {
        let tables: Vec<Table> = vec![(Codec::Brotli, 11, vec![10, 11]), (Codec::Gzip, 9, vec![9])];
        let jobs = jobs(&tables, &[1, 3, 2]);
        let got: Vec<(usize, i32, usize)> =
            jobs.iter().map(|j| (j.table, j.level, j.file)).collect();
        assert_eq!(
            got,
            [
                (0, 11, 1),
                (0, 11, 2),
                (0, 11, 0),
                (0, 10, 1),
                (0, 10, 2),
                (0, 10, 0),
                (1, 9, 1),
                (1, 9, 2),
                (1, 9, 0)
            ]
        );
        // Every job's result lands in its level's row, whatever the order they finish in.
        let done = vec![(8, 5, 1), (0, 100, 7), (3, 90, 2), (6, 4, 1), (1, 50, 3)];
        let t = totals(&tables, &jobs, done);
        assert_eq!(t[0], rows(&[(10, 90, 2), (11, 150, 10)]));
        assert_eq!(t[1], rows(&[(9, 9, 2)]));
    }
}
