//! The execute stage: the (file x coding) jobs, longest first, on workers
//! (`worker`) that take the next job from a shared counter, so none idles
//! while work remains; each file's jobs counted so the last one checks its
//! source once, and a source that changed meanwhile loses what was made
//! from it. Also the jobs' order and cost, which the shard split shares.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::report::thread_cpu_micros;
use crate::run::env::{Env, Log, Progress};
use crate::run::jobs::{FileProgress, Job, JobKind, JobOutcome, Timing};
use crate::run::scanned::{Dict, Scanned};
use crate::run::settings::delta_encoder;
use crate::run::state::journal::Journal;

use crate::run::worker::{JobContext, Worker};

/// The execute stage: the jobs run on the run's threads, each file's jobs
/// counted so its last one checks the source once ([`JobContext::file_job_done`]).
/// Returns every job's outcome and timing in job order, and each file's
/// progress (whether it changed under the run).
pub(crate) fn execute_stage(
    env: &Env,
    files: &[Scanned],
    jobs: &[Job],
    dicts: &[Dict],
    journal: Option<&Journal>,
    progress: &dyn Progress,
    log: &mut Log,
) -> (Vec<(JobOutcome, Timing)>, Vec<FileProgress>) {
    progress.start(jobs.len() as u64);
    let mut progress_of: Vec<FileProgress> =
        files.iter().map(|_| FileProgress::default()).collect();
    for j in jobs {
        *progress_of[j.file].left.get_mut() += 1;
    }
    let ctx = JobContext {
        cfg: env.cfg,
        root: env.root,
        settings: &env.settings,
        cache: env.cache.as_ref(),
        journal,
        dicts,
        delta: delta_encoder(env.cfg),
        parts: Mutex::new(HashMap::new()),
        files: progress_of,
    };
    let started = Instant::now();
    let results = run_jobs(&ctx, files, jobs, env.threads, progress);
    log.counts.jobs_wall_ms = started.elapsed().as_millis() as u64;
    (results, ctx.files)
}

/// Runs the jobs on `threads` workers that take the next job from a shared
/// counter, so the order is exactly longest-first and no worker idles while a
/// job is left. Returns outcomes in job order with their durations (µs).
pub(crate) fn run_jobs(
    ctx: &JobContext,
    files: &[Scanned],
    jobs: &[Job],
    threads: usize,
    progress: &dyn Progress,
) -> Vec<(JobOutcome, Timing)> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<(JobOutcome, Timing)>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..crate::config::threads_for_work(threads, jobs.len()) {
            s.spawn(|| {
                let mut worker = Worker::new(ctx);
                // One thread-CPU clock read (a syscall) ends a job and starts
                // the next: the few instructions between jobs count to the next.
                let mut cpu = thread_cpu_micros();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let t = Instant::now();
                    worker.clock.start(cpu);
                    let outcome = worker.run(job.file, &files[job.file], job.codec, job.kind);
                    let wrote = matches!(
                        outcome,
                        JobOutcome::Written { .. } | JobOutcome::DeltaWritten { .. }
                    ) && !ctx.cfg.dry_run;
                    ctx.file_job_done(job.file, &files[job.file], wrote);
                    let micros = t.elapsed().as_micros() as u64;
                    let end = thread_cpu_micros();
                    let timing = Timing {
                        micros,
                        cpu_micros: end - std::mem::replace(&mut cpu, end),
                        encode_micros: worker.clock.encode_micros,
                        verify_micros: worker.clock.verify_micros,
                    };
                    results.lock().unwrap()[i] = Some((outcome, timing));
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

/// A job's cost estimate, for ordering and for the shard split: bytes in
/// times the coding's relative cost. `whole`: a part costs as its whole stream.
pub(crate) fn job_cost(j: &Job, files: &[Scanned], dicts: &[Dict], whole: bool) -> u64 {
    match j.kind {
        JobKind::Compress => files[j.file].size * j.codec.cost_weight(),
        JobKind::Part { .. } if whole => files[j.file].size * j.codec.cost_weight(),
        // Later parts also index the parts before them as their dictionary.
        JobKind::Part { index, of } => {
            files[j.file].size / of as u64 * j.codec.cost_weight() + index as u64
        }
        JobKind::CheckForeign { .. } => files[j.file].size,
        JobKind::CheckDelta { dict, .. } => files[j.file].size + dicts[dict].old.size,
        // The dictionary is indexed as well as the file compressed.
        JobKind::Delta { dict, coding } => {
            (files[j.file].size + dicts[dict].old.size) * coding.cost_weight()
        }
    }
}

/// Longest first (by size and codec cost), so the pool never waits on one
/// long job at the end; ties by path, coding and dictionary, so the order
/// never depends on the machine.
pub(crate) fn sort_jobs(jobs: &mut [Job], files: &[Scanned], dicts: &[Dict]) {
    jobs.sort_by(|a, b| {
        let cost = |j: &Job| job_cost(j, files, dicts, false);
        cost(b)
            .cmp(&cost(a))
            .then_with(|| files[a.file].found.rel.cmp(&files[b.file].found.rel))
            .then(a.token().cmp(b.token()))
            .then_with(|| a.dict().cmp(&b.dict()))
    });
}
