//! One worker of the execute stage and the jobs it runs: a variant made
//! (whole, or a part of a split brotli stream), a delta made, a foreign file
//! checked; each output decoded and compared with its source before it is
//! recorded in the journal and written atomically. A worker keeps its encoders
//! and buffers from job to job; the sources are read, or mapped from
//! [`MAP_MIN`] on, and checked against the scan's hash.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use crate::config::Config;
use crate::encode::brotli_split::{compress_part, concat_parts};
use crate::encode::delta::{DeltaCoding, DeltaEncoder};
use crate::encode::{new_encoder, BrotliEncoder, Codec, Encoder};
use crate::error::{Error, Result};
use crate::fsutil::{open_own, write_atomic};
use crate::model::content::content_kind;
use crate::model::dictionary::available_dictionary;
use crate::model::manifest::{etag, SkippedDelta, Variant};
use crate::model::names::{delta_path, variant_path};
use crate::model::skip::SkipReason;
use crate::report::thread_cpu_micros;
use crate::run::jobs::{FileProgress, JobKind, JobOutcome};
use crate::run::scanned::{Dict, Scanned};
use crate::run::state::cache::{Cache, Hit};
use crate::run::state::journal::Journal;
use crate::run::state::releases;

pub use crate::config::limits::MAP_MIN;

/// What every job needs besides its own file.
pub(crate) struct JobContext<'a> {
    pub(crate) cfg: &'a Config,
    pub(crate) root: &'a Path,
    pub(crate) settings: &'a BTreeMap<String, String>,
    pub(crate) cache: Option<&'a Cache>,
    /// Where each file is recorded before it is renamed into place (none in
    /// a dry run).
    pub(crate) journal: Option<&'a Journal>,
    /// The dictionaries delta jobs refer to.
    pub(crate) dicts: &'a [Dict],
    pub(crate) delta: DeltaEncoder,
    /// Split brotli jobs in progress, by file.
    pub(crate) parts: Mutex<HashMap<usize, PartsState>>,
    /// Per file (by index in the run's list), shared by its jobs.
    pub(crate) files: Vec<FileProgress>,
}

impl JobContext<'_> {
    /// Called as each job of `file` ends. Once its last job is done, if any of
    /// them wrote a variant, the source is checked (size and mtime) once for
    /// them all: a change after it was read means those variants are stale,
    /// and the run takes them back out.
    pub(crate) fn file_job_done(&self, file: usize, f: &Scanned, wrote: bool) {
        let p = &self.files[file];
        if wrote {
            p.wrote.store(true, Ordering::Relaxed);
        }
        // AcqRel: the last job sees every other job's `wrote`.
        if p.left.fetch_sub(1, Ordering::AcqRel) == 1
            && p.wrote.load(Ordering::Relaxed)
            && source_changed(&f.found.path, f)
        {
            p.changed.store(true, Ordering::Relaxed);
        }
    }
}

/// The parts of one split brotli job done so far.
pub(crate) struct PartsState {
    pub(crate) outs: Vec<Option<Vec<u8>>>,
    pub(crate) remaining: usize,
    pub(crate) failed: bool,
}

/// Per-thread state: encoders are built on first use and kept, and the
/// buffers grow to the largest file seen and are reused.
pub(crate) struct Worker<'a> {
    pub(crate) ctx: &'a JobContext<'a>,
    pub(crate) encoders: [Option<Box<dyn Encoder>>; 3],
    pub(crate) input: Vec<u8>,
    pub(crate) output: Vec<u8>,
    /// What the current job spent encoding and verifying.
    pub(crate) clock: JobClock,
}

/// The CPU time a job spends encoding and verifying, from the thread's CPU
/// clock read as few times as can be (a syscall of ~2 µs here): the job's
/// start stands for the encoder's when nothing but bookkeeping ran between
/// them, and the encoder's end for the verifier's start when verifying
/// follows at once.
#[derive(Debug, Default)]
pub(crate) struct JobClock {
    /// CPU time spent in the encoder during the current job (µs).
    pub(crate) encode_micros: u64,
    /// CPU time spent decoding and comparing during the current job (µs).
    pub(crate) verify_micros: u64,
    encode_end: Option<u64>,
    job_start: Option<u64>,
}

impl JobClock {
    /// A job starts at `cpu` (the thread's clock): nothing counted yet.
    pub(crate) fn start(&mut self, cpu: u64) {
        *self = JobClock {
            job_start: Some(cpu),
            ..JobClock::default()
        };
    }

    /// What runs now is not encoding (a read, a cache lookup): the
    /// encoder's start is read when it starts.
    fn not_encoding(&mut self) {
        self.job_start = None;
    }

    /// The encoder's start: the job's, if nothing ran since.
    fn encode_start(&mut self) -> u64 {
        self.job_start.take().unwrap_or_else(thread_cpu_micros)
    }

    /// The encoder started at `t` returned: counted; a verification that
    /// follows at once starts where it ended.
    fn encoded(&mut self, t: u64) -> u64 {
        let end = thread_cpu_micros();
        self.encode_micros += end - t;
        self.encode_end = Some(end);
        end
    }

    /// A verification's start: the encoder's end, if it follows at once.
    fn verify_start(&mut self) -> u64 {
        self.encode_end.take().unwrap_or_else(thread_cpu_micros)
    }

    /// The verification started at `t` is done: counted.
    fn verified(&mut self, t: u64) {
        self.verify_micros += thread_cpu_micros() - t;
        self.encode_end = None;
    }
}

impl<'a> Worker<'a> {
    pub(crate) fn new(ctx: &'a JobContext<'a>) -> Self {
        Worker {
            ctx,
            encoders: [None, None, None],
            input: Vec::new(),
            output: Vec::new(),
            clock: JobClock::default(),
        }
    }

    pub(crate) fn run(
        &mut self,
        file: usize,
        f: &Scanned,
        codec: Codec,
        kind: JobKind,
    ) -> JobOutcome {
        // The read buffer leaves `self` while the job borrows it.
        let mut buf = std::mem::take(&mut self.input);
        let mut map = None;
        if f.content.is_none() {
            self.clock.not_encoding(); // reading it is not encoding
        }
        let input = source(f, &mut buf, &mut map);
        let r = match kind {
            JobKind::Compress => input.and_then(|i| self.compress(f, codec, i)),
            JobKind::Part { index, of } => self.part(file, f, index, of, input),
            JobKind::CheckForeign { ours } => {
                input.and_then(|i| self.check_foreign(f, codec, i, ours))
            }
            JobKind::Delta { dict, coding } => {
                input.and_then(|i| self.delta(f, &self.ctx.dicts[dict], coding, i))
            }
            JobKind::CheckDelta { dict, coding, ours } => {
                input.and_then(|i| self.check_delta(f, &self.ctx.dicts[dict], coding, i, ours))
            }
        };
        self.input = buf;
        r.unwrap_or_else(JobOutcome::Failed)
    }

    /// This worker's encoder for `codec`, built on first use.
    fn encoder(&mut self, codec: Codec, path: &Path) -> Result<&mut dyn Encoder> {
        let slot = codec.index();
        if self.encoders[slot].is_none() {
            let enc = new_encoder(codec, self.ctx.cfg.levels).map_err(|source| Error::Encode {
                path: path.to_path_buf(),
                coding: codec.token(),
                source,
            })?;
            self.encoders[slot] = Some(enc);
        }
        Ok(self.encoders[slot].as_deref_mut().expect("just built"))
    }

    /// Whether `self.output` decodes to exactly `input` (else why not).
    fn output_decodes(
        &mut self,
        codec: Codec,
        path: &Path,
        input: &[u8],
    ) -> Result<std::result::Result<(), String>> {
        self.encoder(codec, path)?;
        let enc = self.encoders[codec.index()]
            .as_deref_mut()
            .expect("built above");
        let t = self.clock.verify_start();
        let r = enc.verify(&self.output, input);
        self.clock.verified(t);
        Ok(r)
    }

    fn compress(&mut self, f: &Scanned, codec: Codec, input: &[u8]) -> Result<JobOutcome> {
        let path = &f.found.path;
        let settings = &self.ctx.settings[codec.token()];
        if self.ctx.cache.is_some() {
            self.clock.not_encoding(); // nor is a cache lookup
        }
        match self
            .ctx
            .cache
            .and_then(|c| c.get(&f.blake3, codec, settings))
        {
            Some(Hit::NotSmaller) => return Ok(JobOutcome::Skipped(SkipReason::NotSmaller)),
            Some(Hit::Output(bytes)) => {
                self.output = bytes;
                // A corrupt entry is ignored (and replaced), never copied into DIR.
                if self.output.len() < input.len()
                    && self.output_decodes(codec, path, input)?.is_ok()
                {
                    if !self.saves_enough(input.len()) {
                        return Ok(JobOutcome::Skipped(SkipReason::SavesTooLittle));
                    }
                    return self.place(f, codec, true);
                }
            }
            None => {}
        }
        let kind = content_kind(&f.found.rel);
        self.encoder(codec, path)?;
        let enc = self.encoders[codec.index()]
            .as_deref_mut()
            .expect("built above");
        let t = self.clock.encode_start();
        let r = enc.encode(input, kind, &mut self.output);
        self.clock.encoded(t);
        r.map_err(|source| Error::Encode {
            path: path.clone(),
            coding: codec.token(),
            source,
        })?;
        self.finish_encoded(f, codec, input)
    }

    /// One part of a brotli stream split across jobs. The job that completes
    /// the last part joins them and finishes the variant.
    fn part(
        &mut self,
        file: usize,
        f: &Scanned,
        index: usize,
        parts: usize,
        input: Result<&[u8]>,
    ) -> Result<JobOutcome> {
        let path = &f.found.path;
        let mut out = Vec::new();
        let done = input.and_then(|input| {
            let params = BrotliEncoder::new(self.ctx.cfg.levels.brotli_quality)
                .params(input.len(), content_kind(&f.found.rel));
            let t = thread_cpu_micros();
            let r = compress_part(input, index, parts, &params, &mut out);
            self.clock.encode_micros += thread_cpu_micros() - t;
            r.map(|()| input).map_err(|source| Error::Encode {
                path: path.clone(),
                coding: Codec::Brotli.token(),
                source,
            })
        });
        let all = {
            let mut states = self.ctx.parts.lock().unwrap();
            let st = states.entry(file).or_insert_with(|| PartsState {
                outs: vec![None; parts],
                remaining: parts,
                failed: false,
            });
            st.remaining -= 1;
            match &done {
                Ok(_) => st.outs[index] = Some(out),
                Err(_) => st.failed = true,
            }
            (st.remaining == 0 && !st.failed).then(|| std::mem::take(&mut st.outs))
        };
        let input = done?;
        let Some(all) = all else {
            return Ok(JobOutcome::Part);
        };
        let all: Vec<Vec<u8>> = all
            .into_iter()
            .map(|o| o.expect("every part is done"))
            .collect();
        concat_parts(all, &mut self.output).map_err(|source| Error::Encode {
            path: path.clone(),
            coding: Codec::Brotli.token(),
            source,
        })?;
        self.finish_encoded(f, Codec::Brotli, input)
    }

    /// `self.output` is at most `--min-ratio` of a source of `input_len` bytes.
    fn saves_enough(&self, input_len: usize) -> bool {
        self.output.len() as f64 <= input_len as f64 * self.ctx.cfg.min_ratio
    }

    /// Keeps `self.output` if it is smaller than the source (by `--min-ratio`)
    /// and decodes back to it.
    fn finish_encoded(&mut self, f: &Scanned, codec: Codec, input: &[u8]) -> Result<JobOutcome> {
        let path = &f.found.path;
        let settings = &self.ctx.settings[codec.token()];
        if self.output.len() >= input.len() {
            if let Some(c) = self.ctx.cache {
                let _ = c.put(&f.blake3, codec, settings, &Hit::NotSmaller);
            }
            return Ok(JobOutcome::Skipped(SkipReason::NotSmaller));
        }
        // Never write what a browser could not decode back to the source.
        if let Err(detail) = self.output_decodes(codec, path, input)? {
            return Err(Error::Verify {
                path: path.clone(),
                coding: codec.token(),
                detail,
            });
        }
        if let Some(c) = self.ctx.cache {
            // A failed cache write costs only a future miss. Cached as bytes
            // even when they save too little: that is this run's to say.
            let _ = c.put(
                &f.blake3,
                codec,
                settings,
                &Hit::Output(self.output.clone()),
            );
        }
        if !self.saves_enough(input.len()) {
            return Ok(JobOutcome::Skipped(SkipReason::SavesTooLittle));
        }
        self.place(f, codec, false)
    }

    /// Writes `self.output` as the variant (unless dry run).
    fn place(&mut self, f: &Scanned, codec: Codec, cached: bool) -> Result<JobOutcome> {
        let dest_rel = variant_path(&f.found.rel, codec);
        let b3 = blake3::hash(&self.output).to_hex().to_string();
        // Checked against the source once all of its jobs are done
        // (JobContext::file_job_done).
        self.write(f, &dest_rel, &b3)?;
        let variant = Variant {
            coding: codec.token().to_string(),
            path: dest_rel,
            size: self.output.len() as u64,
            etag: etag(&b3),
            blake3: b3,
        };
        Ok(JobOutcome::Written { variant, cached })
    }

    /// A delta of `f` against `dict`: from the cache (checked) or encoded and
    /// checked, kept if smaller than the source (the comparison with the best
    /// variant waits for every job of the file), and written.
    fn delta(
        &mut self,
        f: &Scanned,
        dict: &Dict,
        coding: DeltaCoding,
        input: &[u8],
    ) -> Result<JobOutcome> {
        self.clock.not_encoding(); // reading the dictionary is not encoding
        let bytes = match releases::load(&dict.old, Some(&dict.sha256)) {
            Ok(l) => l.bytes,
            Err(why) => {
                return Ok(JobOutcome::NoDelta(format!(
                    "{why}: {} gets no {} delta against it",
                    f.found.rel,
                    coding.token()
                )))
            }
        };
        let skipped = || {
            JobOutcome::DeltaSkipped(SkippedDelta {
                coding: coding.token().into(),
                dictionary: available_dictionary(&dict.sha256),
                reason: SkipReason::NotSmaller,
            })
        };
        let cached = match self.cached_delta(f, dict, coding, &bytes, input) {
            Some(Hit::NotSmaller) => return Ok(skipped()),
            Some(Hit::Output(out)) => {
                self.output = out;
                true
            }
            None => false,
        };
        if !cached && !self.encode_delta(f, dict, coding, &bytes, input)? {
            return Ok(skipped());
        }
        self.place_delta(f, dict, coding, cached)
    }

    /// What the cache holds for this delta: that it is not smaller, or its
    /// bytes once they decode with `dict_bytes` to `input`. A corrupt entry
    /// is a miss (and is replaced), never copied into DIR.
    fn cached_delta(
        &mut self,
        f: &Scanned,
        dict: &Dict,
        coding: DeltaCoding,
        dict_bytes: &[u8],
        input: &[u8],
    ) -> Option<Hit> {
        let settings = &self.ctx.settings[coding.token()];
        let hit = self
            .ctx
            .cache?
            .get_delta(&f.blake3, coding, settings, &dict.sha256)?;
        let Hit::Output(out) = hit else {
            return Some(hit);
        };
        let t = thread_cpu_micros();
        let ok = out.len() < input.len()
            && self
                .ctx
                .delta
                .verify(coding, &out, dict_bytes, &dict.sha256, input)
                .is_ok();
        self.clock.verified(t);
        ok.then_some(Hit::Output(out))
    }

    /// Encodes the delta into `self.output` and checks that it decodes back
    /// to `input`; false when it is not smaller than the source. Either
    /// outcome goes into the cache.
    fn encode_delta(
        &mut self,
        f: &Scanned,
        dict: &Dict,
        coding: DeltaCoding,
        dict_bytes: &[u8],
        input: &[u8],
    ) -> Result<bool> {
        let path = &f.found.path;
        let enc = self.ctx.delta;
        let settings = &self.ctx.settings[coding.token()];
        let key = (&f.blake3, coding, settings.as_str(), &dict.sha256);
        let t = thread_cpu_micros();
        let r = enc.encode(
            coding,
            dict_bytes,
            &dict.sha256,
            input,
            content_kind(&f.found.rel),
            &mut self.output,
        );
        let end = self.clock.encoded(t);
        r.map_err(|source| Error::Encode {
            path: path.clone(),
            coding: coding.token(),
            source,
        })?;
        if self.output.len() >= input.len() {
            if let Some(c) = self.ctx.cache {
                let _ = c.put_delta(key.0, key.1, key.2, key.3, &Hit::NotSmaller);
            }
            return Ok(false);
        }
        // Never write what a browser could not decode back to the source.
        let r = enc.verify(coding, &self.output, dict_bytes, &dict.sha256, input);
        self.clock.verified(end);
        if let Err(detail) = r {
            return Err(Error::Verify {
                path: path.clone(),
                coding: coding.token(),
                detail,
            });
        }
        if let Some(c) = self.ctx.cache {
            // A failed cache write costs only a future miss.
            let _ = c.put_delta(
                key.0,
                key.1,
                key.2,
                key.3,
                &Hit::Output(self.output.clone()),
            );
        }
        Ok(true)
    }

    /// Writes `self.output` as the delta of `f` against `dict` (unless dry run).
    fn place_delta(
        &mut self,
        f: &Scanned,
        dict: &Dict,
        coding: DeltaCoding,
        cached: bool,
    ) -> Result<JobOutcome> {
        let dest_rel = delta_path(&f.found.rel, &dict.sha256, coding);
        let b3 = blake3::hash(&self.output).to_hex().to_string();
        // Checked against the source once all of its jobs are done.
        self.write(f, &dest_rel, &b3)?;
        Ok(JobOutcome::DeltaWritten {
            delta: dict.delta_entry(coding, dest_rel, self.output.len(), b3),
            cached,
        })
    }

    /// Writes `self.output` (of blake3 `b3`) at `dest_rel` (unless dry run),
    /// recorded in the journal first: a run killed after the rename leaves a
    /// file the next run knows for its own.
    fn write(&self, f: &Scanned, dest_rel: &str, b3: &str) -> Result<()> {
        if self.ctx.cfg.dry_run {
            return Ok(());
        }
        if let Some(j) = self.ctx.journal {
            j.record(dest_rel, b3, &f.blake3)?;
        }
        write_atomic(&self.ctx.root.join(dest_rel), &self.output, Some(&f.meta))
    }

    /// A delta the manifest does not list sits where ours against `dict`
    /// would go (the manifest was lost, or `ours`: a killed run wrote it).
    /// Listed when it decodes with `dict` to the source; otherwise made
    /// again if ours, else an error naming it (a server would serve it stale).
    fn check_delta(
        &mut self,
        f: &Scanned,
        dict: &Dict,
        coding: DeltaCoding,
        input: &[u8],
        ours: bool,
    ) -> Result<JobOutcome> {
        self.clock.not_encoding();
        let dest_rel = delta_path(&f.found.rel, &dict.sha256, coding);
        let dest = self.ctx.root.join(&dest_rel);
        let bytes = crate::fsutil::read_own(&dest, u64::MAX).map_err(|source| Error::Read {
            path: dest.clone(),
            source,
        })?;
        let dict_bytes = match releases::load(&dict.old, Some(&dict.sha256)) {
            Ok(l) => l.bytes,
            Err(why) => {
                return Ok(JobOutcome::NoDelta(format!(
                    "{why}: {dest_rel} could not be checked against it"
                )))
            }
        };
        let t = thread_cpu_micros();
        let r = self
            .ctx
            .delta
            .verify(coding, &bytes, &dict_bytes, &dict.sha256, input);
        self.clock.verified(t);
        match r {
            Ok(()) => {
                let b3 = blake3::hash(&bytes).to_hex().to_string();
                Ok(JobOutcome::DeltaAdopted(dict.delta_entry(
                    coding,
                    dest_rel,
                    bytes.len(),
                    b3,
                )))
            }
            Err(_) if ours => self.delta(f, dict, coding, input),
            Err(detail) => Err(Error::Foreign { path: dest, detail }),
        }
    }

    /// A variant the manifest does not list sits where ours would go. A
    /// foreign one is kept either way; listed when it decodes to the source,
    /// an error when it does not (a server would serve stale content). One
    /// of `ours` (a killed run's, by its journal) that does not decode is
    /// made again.
    fn check_foreign(
        &mut self,
        f: &Scanned,
        codec: Codec,
        input: &[u8],
        ours: bool,
    ) -> Result<JobOutcome> {
        let dest_rel = variant_path(&f.found.rel, codec);
        let dest = self.ctx.root.join(&dest_rel);
        self.output.clear();
        open_own(&dest)
            .and_then(|mut h| h.read_to_end(&mut self.output))
            .map_err(|source| Error::Read {
                path: dest.clone(),
                source,
            })?;
        match self.output_decodes(codec, &dest, input)? {
            Ok(()) => {
                let b3 = blake3::hash(&self.output).to_hex().to_string();
                Ok(JobOutcome::Adopted(Variant {
                    coding: codec.token().to_string(),
                    path: dest_rel,
                    size: self.output.len() as u64,
                    etag: etag(&b3),
                    blake3: b3,
                }))
            }
            Err(_) if ours => self.compress(f, codec, input),
            Err(detail) => Err(Error::Foreign { path: dest, detail }),
        }
    }
}

/// The source's bytes: those the scan held; or, from [`MAP_MIN`] on, a
/// read-only mapping in `map` whose size and mtime are still the scan's
/// (hashing a huge file again per job would cost more than its brotli part);
/// or else read again into `buf` and checked against the scan's hash.
pub(crate) fn source<'a>(
    f: &'a Scanned,
    buf: &'a mut Vec<u8>,
    map: &'a mut Option<memmap2::Mmap>,
) -> Result<&'a [u8]> {
    if let Some(held) = &f.content {
        return Ok(held);
    }
    let path = &f.found.path;
    let rerr = |source| Error::Read {
        path: path.clone(),
        source,
    };
    if f.size >= MAP_MIN {
        let file = f.found.open().map_err(rerr)?;
        // SAFETY: the mapping is read-only and lives only for this job. Its
        // bytes are those the scan hashed unless the file is written meanwhile,
        // which the size and mtime checks here and after the write catch; a
        // file truncated during the job would fault (SIGBUS), as with any
        // mapped read (docs/benchmarks.md says so).
        let mapped = unsafe { memmap2::Mmap::map(&file) }.map_err(rerr)?;
        if mapped.len() as u64 != f.size || source_changed(path, f) {
            return Err(Error::Changed { path: path.clone() });
        }
        return Ok(map.insert(mapped));
    }
    buf.clear();
    f.found
        .open()
        .and_then(|mut h| h.read_to_end(buf))
        .map_err(rerr)?;
    if blake3::hash(buf).to_hex().as_str() != f.blake3 {
        return Err(Error::Changed { path: path.clone() });
    }
    Ok(buf)
}

/// Cheap check that a file is still what the scan saw: size and mtime.
pub(crate) fn source_changed(path: &PathBuf, f: &Scanned) -> bool {
    match std::fs::metadata(path) {
        Ok(md) => md.len() != f.size || md.modified().ok() != Some(f.meta.modified),
        Err(_) => true,
    }
}
