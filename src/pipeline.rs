//! One run: walk, scan (hash every file), then compress (file x codec) jobs,
//! longest first, on a pool that never idles while work remains, and finally
//! write the manifest.
//!
//! Jobs re-read their source instead of holding the whole tree in memory, and
//! check it against the scan's hash: memory stays at a few files per worker, and
//! a source that changes mid-run is caught instead of getting a stale variant.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

use base64::Engine;
use rayon::prelude::*;

use crate::config::Config;
use crate::encode::{new_encoder, Codec, ContentKind, Encoder};
use crate::error::{Error, Result};
use crate::filter::{content_kind, content_type, Filter, SkipReason};
use crate::fsutil::{remove_if_exists, write_atomic, CopyMeta};
use crate::manifest::{etag, Asset, Manifest, Variant};
use crate::report::{JobTiming, Report};
use crate::walk::{walk, Found};

/// What the scan learned about one source.
#[derive(Debug)]
struct Scanned {
    found: Found,
    size: u64,
    blake3: String,
    sha256: String,
    meta: CopyMeta,
}

/// What one (file, codec) job produced.
enum JobOutcome {
    Written(Variant),
    Skipped(SkipReason),
    Failed(Error),
}

struct Job {
    file: usize,
    codec: Codec,
}

/// Progress events, for a progress bar.
pub trait Progress: Sync {
    /// Called once the job list is known.
    fn start(&self, _jobs: u64) {}
    /// Called after each job.
    fn job_done(&self) {}
}

/// A [`Progress`] that shows nothing.
pub struct NoProgress;
impl Progress for NoProgress {}

/// Runs precompress over `cfg.root`. Per-file failures are in the report's
/// `errors`; `Err` is returned only when the run cannot happen at all.
pub fn run(cfg: &Config, progress: &dyn Progress) -> Result<Report> {
    let started = Instant::now();
    let root = cfg.root.as_path();
    if !root.is_dir() {
        return Err(Error::Config(format!("{}: not a folder", root.display())));
    }
    let filter = Filter::new(&cfg.include, &cfg.exclude, cfg.min_size)?;
    let manifest_path = cfg.manifest_path();
    let threads = cfg.worker_threads();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Config(format!("cannot start {threads} threads: {e}")))?;

    let tree = walk(root, cfg.follow_links, std::slice::from_ref(&manifest_path));
    let mut errors = tree.errors;
    for t in &tree.temps {
        // Left by a run that was killed: never a valid file.
        if let Err(e) = remove_if_exists(&t.path) {
            errors.push(e);
        }
    }

    let scanned: Vec<Result<Scanned>> =
        pool.install(|| tree.files.into_par_iter().map(scan).collect());
    let mut files = Vec::with_capacity(scanned.len());
    for s in scanned {
        match s {
            Ok(s) => files.push(s),
            Err(e) => errors.push(e),
        }
    }

    // Plan: every compressible file x every requested codec, most expensive first.
    let mut skipped: Vec<BTreeMap<String, SkipReason>> = vec![BTreeMap::new(); files.len()];
    let mut jobs = Vec::new();
    for (i, f) in files.iter().enumerate() {
        match filter.decide(&f.found.rel, f.size) {
            Some(reason) => {
                for c in &cfg.codecs {
                    skipped[i].insert(c.token().to_string(), reason);
                }
            }
            None => jobs.extend(cfg.codecs.iter().map(|&codec| Job { file: i, codec })),
        }
    }
    jobs.sort_by(|a, b| {
        let cost = |j: &Job| files[j.file].size * j.codec.cost_weight();
        cost(b)
            .cmp(&cost(a))
            .then_with(|| files[a.file].found.rel.cmp(&files[b.file].found.rel))
            .then(a.codec.cmp(&b.codec))
    });
    progress.start(jobs.len() as u64);

    let outcomes = run_jobs(cfg, &files, &jobs, threads, progress);

    // Assemble, per file, in path order.
    let mut written: Vec<Vec<Variant>> = vec![Vec::new(); files.len()];
    let mut changed = vec![false; files.len()];
    let mut timings = Vec::with_capacity(jobs.len());
    for (job, (outcome, micros)) in jobs.iter().zip(outcomes) {
        let f = &files[job.file];
        let output = match &outcome {
            JobOutcome::Written(v) => v.size,
            _ => f.size,
        };
        timings.push(JobTiming {
            path: f.found.rel.clone(),
            coding: job.codec.token(),
            input: f.size,
            output,
            micros,
        });
        match outcome {
            JobOutcome::Written(v) => written[job.file].push(v),
            JobOutcome::Skipped(r) => {
                skipped[job.file].insert(job.codec.token().to_string(), r);
            }
            JobOutcome::Failed(e) => {
                if matches!(e, Error::Changed { .. }) {
                    changed[job.file] = true;
                }
                errors.push(e);
            }
        }
    }

    let settings = cfg
        .codecs
        .iter()
        .map(|&c| {
            (
                c.token().to_string(),
                new_encoder(c, cfg.levels)
                    .map(|e| e.settings())
                    .unwrap_or_default(),
            )
        })
        .collect();
    let mut manifest = Manifest::new(settings);
    for (i, f) in files.iter().enumerate() {
        if changed[i] {
            // Variants written before the change was seen are of content that is
            // no longer there: remove them, and leave the file to the next run.
            for v in &written[i] {
                if let Err(e) = remove_if_exists(&root.join(&v.path)) {
                    errors.push(e);
                }
            }
            continue;
        }
        let mut encodings = std::mem::take(&mut written[i]);
        encodings.sort_by(|a, b| {
            a.size
                .cmp(&b.size)
                .then_with(|| coding_rank(&a.coding).cmp(&coding_rank(&b.coding)))
        });
        manifest.files.insert(
            f.found.rel.clone(),
            Asset {
                size: f.size,
                blake3: f.blake3.clone(),
                sha256: f.sha256.clone(),
                content_type: content_type(&f.found.rel),
                etag: etag(&f.blake3),
                encodings,
                skipped: std::mem::take(&mut skipped[i]),
            },
        );
    }
    if let Err(e) = manifest.write(&manifest_path) {
        errors.push(e);
    }

    errors.sort_by(|a, b| a.path().cmp(&b.path()));
    Ok(Report::new(
        &manifest,
        &cfg.codecs,
        tree.passed,
        errors,
        timings,
        started.elapsed(),
        manifest_path,
        threads,
    ))
}

fn coding_rank(token: &str) -> usize {
    Codec::ALL
        .iter()
        .position(|c| c.token() == token)
        .unwrap_or(usize::MAX)
}

/// Reads a file once, streaming it through both hashes.
fn scan(found: Found) -> Result<Scanned> {
    let rerr = |source| Error::Read {
        path: found.path.clone(),
        source,
    };
    let mut file = File::open(&found.path).map_err(rerr)?;
    let md = file.metadata().map_err(rerr)?;
    if !md.is_file() {
        return Err(rerr(std::io::Error::other("no longer a regular file")));
    }
    let mut b3 = blake3::Hasher::new();
    let mut sha = <sha2::Sha256 as sha2::Digest>::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf).map_err(rerr)?;
        if n == 0 {
            break;
        }
        b3.update(&buf[..n]);
        sha2::Digest::update(&mut sha, &buf[..n]);
        size += n as u64;
    }
    Ok(Scanned {
        size,
        blake3: b3.finalize().to_hex().to_string(),
        sha256: base64::engine::general_purpose::STANDARD.encode(sha2::Digest::finalize(sha)),
        meta: CopyMeta {
            permissions: md.permissions(),
            modified: md.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        },
        found,
    })
}

/// Runs the jobs on `threads` workers that take the next job from a shared
/// counter, so the order is exactly longest-first and no worker idles while a
/// job is left. Returns outcomes in job order with their durations (µs).
fn run_jobs(
    cfg: &Config,
    files: &[Scanned],
    jobs: &[Job],
    threads: usize,
    progress: &dyn Progress,
) -> Vec<(JobOutcome, u64)> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<(JobOutcome, u64)>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.min(jobs.len()).max(1) {
            s.spawn(|| {
                let mut worker = Worker::new(cfg);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let t = Instant::now();
                    let outcome = worker.run(&cfg.root, &files[job.file], job.codec);
                    let micros = t.elapsed().as_micros() as u64;
                    results.lock().unwrap()[i] = Some((outcome, micros));
                    progress.job_done();
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

/// Per-thread state: encoders are built on first use and kept, and the
/// buffers grow to the largest file seen and are reused.
struct Worker<'a> {
    cfg: &'a Config,
    encoders: [Option<Box<dyn Encoder>>; 3],
    input: Vec<u8>,
    output: Vec<u8>,
    check: Vec<u8>,
}

impl<'a> Worker<'a> {
    fn new(cfg: &'a Config) -> Self {
        Worker {
            cfg,
            encoders: [None, None, None],
            input: Vec::new(),
            output: Vec::new(),
            check: Vec::new(),
        }
    }

    fn run(&mut self, root: &Path, f: &Scanned, codec: Codec) -> JobOutcome {
        match self.try_run(root, f, codec) {
            Ok(Some(v)) => JobOutcome::Written(v),
            Ok(None) => JobOutcome::Skipped(SkipReason::NotSmaller),
            Err(e) => JobOutcome::Failed(e),
        }
    }

    fn try_run(&mut self, root: &Path, f: &Scanned, codec: Codec) -> Result<Option<Variant>> {
        let path = &f.found.path;
        let rerr = |source| Error::Read {
            path: path.clone(),
            source,
        };
        self.input.clear();
        File::open(path)
            .and_then(|mut h| h.read_to_end(&mut self.input))
            .map_err(rerr)?;
        if blake3::hash(&self.input).to_hex().as_str() != f.blake3 {
            return Err(Error::Changed { path: path.clone() });
        }
        let slot = Codec::ALL
            .iter()
            .position(|&c| c == codec)
            .expect("known codec");
        if self.encoders[slot].is_none() {
            let enc = new_encoder(codec, self.cfg.levels).map_err(|source| Error::Encode {
                path: path.clone(),
                coding: codec.token(),
                source,
            })?;
            self.encoders[slot] = Some(enc);
        }
        let enc = self.encoders[slot].as_mut().expect("just built");
        let kind: ContentKind = content_kind(&f.found.rel);
        enc.encode(&self.input, kind, &mut self.output)
            .map_err(|source| Error::Encode {
                path: path.clone(),
                coding: codec.token(),
                source,
            })?;
        let dest_rel = format!("{}.{}", f.found.rel, codec.suffix());
        let dest = root.join(&dest_rel);
        if self.output.len() >= self.input.len() {
            return Ok(None);
        }
        // Never write what a browser could not decode back to the source.
        let verify = |detail: String| Error::Verify {
            path: path.clone(),
            coding: codec.token(),
            detail,
        };
        enc.decode(&self.output, self.input.len(), &mut self.check)
            .map_err(|e| verify(e.to_string()))?;
        if self.check != self.input {
            return Err(verify(format!(
                "decoded {} bytes that differ from the {}-byte source",
                self.check.len(),
                self.input.len()
            )));
        }
        write_atomic(&dest, &self.output, Some(&f.meta))?;
        // The source may have changed after we read it: then the variant just
        // written is stale, so take it back out.
        if source_changed(path, f) {
            remove_if_exists(&dest)?;
            return Err(Error::Changed { path: path.clone() });
        }
        let b3 = blake3::hash(&self.output).to_hex().to_string();
        Ok(Some(Variant {
            coding: codec.token().to_string(),
            path: dest_rel,
            size: self.output.len() as u64,
            etag: etag(&b3),
            blake3: b3,
        }))
    }
}

/// Cheap check that a file is still what the scan saw: size and mtime.
fn source_changed(path: &PathBuf, f: &Scanned) -> bool {
    match std::fs::metadata(path) {
        Ok(md) => md.len() != f.size || md.modified().ok() != Some(f.meta.modified),
        Err(_) => true,
    }
}
