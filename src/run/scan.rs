//! The scan stage: every source read once through both hashes (blake3,
//! SHA-256) and, from [`PROBE_MIN`] on, a fast probe of whether it shrinks;
//! every variant and delta on disk hashed; each candidate asset's
//! dictionaries in the earlier releases chosen; and what the plan needs of
//! each source. Small sources are kept in memory (up to [`HELD_FILE_MAX`]
//! each and [`HELD_TOTAL_MAX`] in all), so their codec jobs share one read.
//! The release's own dictionaries are `run::scan_dictionaries`'.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use base64::Engine;
use rayon::prelude::*;

use crate::encode::brotli_split::parts_for;
use crate::encode::estimate::ShrinkProbe;
use crate::encode::Codec;
use crate::error::{Error, Result};
use crate::fsutil::{open_own, CopyMeta};
use crate::model::content::content_kind;
use crate::model::dictionary::{is_candidate, is_page_candidate};
use crate::run::env::{remove_ours, Env, Log};
use crate::run::filter::Filter;
use crate::run::scanned::{Chosen, Dict, ScanOut, Scanned, Source};
use crate::run::state::cache::Cache;
use crate::run::state::prior::recover;
use crate::run::state::releases::{self, OldFile, Releases};
use crate::run::tree::Found;

/// Sources up to this size are kept in memory by the scan: with many small
/// files, opening, reading and hashing each again per codec cost more than the
/// hashing itself.
pub const HELD_FILE_MAX: u64 = 256 * 1024;
/// At most this much source is held in memory at once; larger trees re-read
/// the rest per job.
pub const HELD_TOTAL_MAX: u64 = 256 * 1024 * 1024;

/// Sources of this size or more are probed by the scan with zstd level 1 as
/// they are hashed (about 1% of brotli q11's time): one that the probe does
/// not shrink at all gets no variant job (`incompressible`), where q11 spent
/// 26 minutes of CPU on a 300 MB incompressible script for nothing.
pub const PROBE_MIN: u64 = 4 << 20;

/// What the plan needs of each source, and the run's dictionaries (each
/// source's [`Chosen`] earlier files, numbered across the run).
pub(crate) fn plan_sources<'a>(
    files: &'a [Scanned],
    chosen: Vec<Chosen>,
    filter: &Filter,
    cache: Option<&Cache>,
    settings: &BTreeMap<String, String>,
) -> (Vec<Source<'a>>, Vec<Dict>) {
    let mut dicts: Vec<Dict> = Vec::new();
    let mut sources = Vec::with_capacity(files.len());
    for (f, chosen) in files.iter().zip(chosen) {
        let mut dictionaries = Vec::with_capacity(chosen.len());
        for (old, sha256) in chosen {
            dictionaries.push((dicts.len(), old.size, sha256));
            dicts.push(Dict { old, sha256 });
        }
        // A large brotli job runs as parts on several workers, unless the
        // cache may already hold it (the whole job reads it from there, and
        // on a miss produces the same bytes by compressing the parts itself).
        let parts = parts_for(f.size as usize, content_kind(&f.found.rel));
        let in_cache = parts > 1
            && cache.is_some_and(|c| {
                settings
                    .get(Codec::Brotli.token())
                    .is_some_and(|s| c.contains(&f.blake3, Codec::Brotli, s))
            });
        sources.push(Source {
            rel: &f.found.rel,
            size: f.size,
            blake3: &f.blake3,
            decision: filter.decide(&f.found.rel, f.size),
            incompressible: f.incompressible,
            brotli_parts: if in_cache { 1 } else { parts },
            dictionaries,
        });
    }
    (sources, dicts)
}

/// The scan stage (on the run's pool): every source read once through both
/// hashes ([`scan`]), every variant and delta on disk hashed. Sources that
/// cannot be read go to `errors`.
pub(crate) fn scan_tree(
    sources: Vec<Found>,
    variants: Vec<Found>,
    deltas: Vec<Found>,
    filter: &Filter,
    errors: &mut Vec<Error>,
) -> (Vec<Scanned>, Vec<(String, Option<String>)>) {
    let held = AtomicU64::new(0);
    let scanned: Vec<Result<Scanned>> = sources
        .into_par_iter()
        .map(|f| scan(f, filter, &held))
        .collect();
    let on_disk = variants
        .into_par_iter()
        .chain(deltas.into_par_iter())
        .map(|f| (f.rel, hash_file(&f.path).ok()))
        .collect();
    let mut files = Vec::with_capacity(scanned.len());
    for s in scanned {
        match s {
            Ok(s) => files.push(s),
            Err(e) => errors.push(e),
        }
    }
    (files, on_disk)
}

/// Per source that may get deltas, the earlier file of each release it is
/// paired with and that file's SHA-256 (read once, in parallel on the run's
/// pool); earlier files that could not be read are warnings.
pub(crate) fn chosen_dictionaries(
    files: &[Scanned],
    filter: &Filter,
    releases: &Releases,
    shared: &std::collections::HashSet<&str>,
    pages: bool,
    warnings: &mut Vec<String>,
) -> Vec<Chosen> {
    if releases.is_empty() {
        return vec![Vec::new(); files.len()];
    }
    let per_file: Vec<(Chosen, Vec<String>)> = files
        .par_iter()
        .map(|f| {
            let shared = shared.contains(f.found.rel.as_str());
            choose_dictionaries(f, filter, releases, shared, pages)
        })
        .collect();
    per_file
        .into_iter()
        .map(|(c, w)| {
            warnings.extend(w);
            c
        })
        .collect()
}

pub(crate) fn hash_file(path: &Path) -> std::io::Result<String> {
    let mut h = blake3::Hasher::new();
    h.update_reader(open_own(path)?)?;
    Ok(h.finalize().to_hex().to_string())
}

/// Reads a file once, streaming it through both hashes; keeps the bytes of a
/// small file that will be compressed while `held` (the bytes kept so far)
/// stays within [`HELD_TOTAL_MAX`].
pub(crate) fn scan(found: Found, filter: &Filter, held: &AtomicU64) -> Result<Scanned> {
    let rerr = |source| Error::Read {
        path: found.path.clone(),
        source,
    };
    // Refused there unless still a regular file (one swapped for a FIFO is
    // never waited on).
    let mut file = found.open().map_err(rerr)?;
    let md = file.metadata().map_err(rerr)?;
    let mut b3 = blake3::Hasher::new();
    let mut sha = <sha2::Sha256 as sha2::Digest>::new();
    let mut size = 0u64;
    let keep = md.len() <= HELD_FILE_MAX
        && filter.decide(&found.rel, md.len()).is_none()
        && held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |h| {
                (h + md.len() <= HELD_TOTAL_MAX).then_some(h + md.len())
            })
            .is_ok();
    let mut content = None;
    let mut incompressible = false;
    if keep {
        // Exactly the size the metadata gave, without read_to_end's own stat,
        // seek and end-of-file read: a file that grows meanwhile is caught
        // after its variants are written (size and mtime).
        let mut bytes = vec![0u8; md.len() as usize];
        let mut filled = 0;
        while filled < bytes.len() {
            match file.read(&mut bytes[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(rerr(e)),
            }
        }
        bytes.truncate(filled);
        b3.update(&bytes);
        sha2::Digest::update(&mut sha, &bytes);
        size = bytes.len() as u64;
        content = Some(bytes);
    } else {
        let mut probe = (md.len() >= PROBE_MIN && filter.decide(&found.rel, md.len()).is_none())
            .then(ShrinkProbe::new)
            .flatten();
        // One buffer per rayon thread: allocating and zeroing it per file cost
        // more than hashing a small file.
        thread_local!(static BUF: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0u8; 256 * 1024]));
        BUF.with_borrow_mut(|buf| -> Result<()> {
            loop {
                let n = file.read(buf).map_err(rerr)?;
                if n == 0 {
                    return Ok(());
                }
                b3.update(&buf[..n]);
                sha2::Digest::update(&mut sha, &buf[..n]);
                if let Some(p) = &mut probe {
                    p.feed(&buf[..n]);
                }
                size += n as u64;
            }
        })?;
        incompressible = probe.is_some_and(|p| p.finish() >= size);
    }
    let sha256_raw: [u8; 32] = sha2::Digest::finalize(sha).into();
    Ok(Scanned {
        content,
        incompressible,
        size,
        blake3: b3.finalize().to_hex().to_string(),
        sha256: base64::engine::general_purpose::STANDARD.encode(sha256_raw),
        sha256_raw,
        meta: CopyMeta {
            permissions: md.permissions(),
            modified: md.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        },
        found,
    })
}

/// The earlier files an asset gets deltas against: for each release, the one
/// [`releases::choose`] picks, each dictionary once. Only assets that are
/// compressed and are dictionary candidates themselves get deltas (a browser
/// holds only what was sent as a dictionary). With warnings for earlier files
/// that could not be read. A member of the shared dictionary (`shared`), and
/// the shared dictionary itself, get deltas against the earlier releases'
/// shared dictionaries too: what a browser offers for them. With `pages`, an
/// HTML page is paired with the same page of each earlier release (its own
/// path: never another page's bytes).
pub(crate) fn choose_dictionaries(
    f: &Scanned,
    filter: &Filter,
    releases: &Releases,
    shared: bool,
    pages: bool,
) -> (Chosen, Vec<String>) {
    let mut warnings = Vec::new();
    let mut chosen: Chosen = Vec::new();
    let rel = &f.found.rel;
    let page = pages && is_page_candidate(rel, f.size);
    let own = is_candidate(rel, f.size) || page;
    if !filter.takes_deltas(rel, f.size) || !(shared || own) {
        return (chosen, warnings);
    }
    let mut ends: Option<(Vec<u8>, Vec<u8>)> = None;
    let paired = if own {
        releases.paired(rel, f.size)
    } else {
        Vec::new()
    };
    // With no earlier file of its own (a new name, or a name that was a
    // member before), what a browser offers is the shared dictionary, or
    // the chunk an earlier release marked with its folder's pattern.
    let groups = if shared || paired.is_empty() {
        let mut g = releases.shared_for(rel);
        g.extend(releases.in_folder(rel, f.size));
        g
    } else {
        Vec::new()
    };
    for group in groups.into_iter().chain(paired) {
        let group = if group.len() > releases::MAX_TRIED {
            let (head, tail) = ends.get_or_insert_with(|| source_ends(f));
            releases::shortlist(group, head, tail)
        } else {
            group
        };
        let input = || f.held_or_read();
        if let Some((old, sha)) =
            releases::choose(input, &f.sha256_raw, &group, page, &mut warnings)
        {
            if !chosen.iter().any(|(_, s)| *s == sha) {
                chosen.push((old.clone(), sha));
            }
        }
    }
    // A visitor who got one of these deltas comes back before the next
    // release with its ETag, offering the page it now holds: this one. A
    // delta against itself answers in about 70 B where the whole page would
    // go again (no server here answers 304 for another representation's
    // ETag, nginx's own among them). One who got the page whole offers it
    // too, but its ETag is the selected variant's: a 304 without this.
    let own_sha = f.sha256_raw;
    if page && !chosen.is_empty() && !f.found.linked && !chosen.iter().any(|(_, s)| *s == own_sha) {
        chosen.push((this_release(f), own_sha));
    }
    (chosen, warnings)
}

/// The first and last [`releases::AFFINITY_BYTES`] of a source (empty if it
/// cannot be read), to rank its candidate dictionaries.
pub(crate) fn source_ends(f: &Scanned) -> (Vec<u8>, Vec<u8>) {
    let n = releases::AFFINITY_BYTES;
    match &f.content {
        Some(c) => (
            c[..n.min(c.len())].to_vec(),
            c[c.len().saturating_sub(n)..].to_vec(),
        ),
        None => releases::file_ends(&f.found.path, f.size).unwrap_or_default(),
    }
}

/// Variants and deltas on disk ([`ScanOut::on_disk`]) by path, as the plan
/// takes them.
pub(crate) fn on_disk_map(on_disk: &[(String, Option<String>)]) -> HashMap<&str, Option<&str>> {
    on_disk
        .iter()
        .map(|(rel, h)| (rel.as_str(), h.as_deref()))
        .collect()
}

/// The scan stage, on the run's pool: every file hashed ([`scan_tree`]);
/// what the journals of interrupted runs prove ours added to `ours`
/// ([`recover`]); the variants of sources deleted since the previous run
/// (which now look like assets of their own) removed when ours; each
/// candidate's dictionaries chosen.
pub(crate) fn scan_stage(
    env: &Env,
    (sources, variants, deltas): (Vec<Found>, Vec<Found>, Vec<Found>),
    ours: &mut HashMap<String, String>,
    log: &mut Log,
) -> ScanOut {
    let (mut files, on_disk) = env
        .pool
        .install(|| scan_tree(sources, variants, deltas, &env.filter, &mut log.errors));
    let recorded = crate::run::state::journal::read(env.root, env.cfg.shard);
    log.counts.warnings.extend(recorded.warnings);
    let sources: HashMap<&str, &str> = files
        .iter()
        .map(|f| (f.found.rel.as_str(), f.blake3.as_str()))
        .collect();
    let journaled = recover(&recorded.entries, &sources, &on_disk, ours);
    let journals_read = recorded.files;
    files.retain(|f| match ours.get(&f.found.rel) {
        Some(b3) if *b3 == f.blake3 => {
            remove_ours(env.cfg, &f.found.path, &f.found.rel, log);
            false
        }
        _ => true,
    });
    let scan_new = |found| scan(found, &env.filter, &AtomicU64::new(0));
    let (shared, groups, idle_budget) =
        crate::run::scan_dictionaries::shared_stage(env, &mut files, scan_new, log);
    crate::run::dictionaries::publish::publish_stage(
        env,
        &mut files,
        (&shared, &groups),
        log,
        |found| scan(found, &env.filter, &AtomicU64::new(0)),
    );
    let members: std::collections::HashSet<&str> = shared
        .iter()
        .flat_map(|s| s.members.iter().map(String::as_str).chain([s.rel.as_str()]))
        .chain(
            groups
                .iter()
                .flat_map(|g| g.members.iter().map(String::as_str)),
        )
        .collect();
    let warnings = &mut log.counts.warnings;
    let mut chosen = env.pool.install(|| {
        chosen_dictionaries(
            &files,
            &env.filter,
            &env.releases,
            &members,
            env.pages(),
            warnings,
        )
    });
    // Members also get a delta against this release's own shared dictionary:
    // a browser fetches it at idle, and from then on offers it for every
    // chunk it loads (a lazy route, in this very visit or a later one) and,
    // for the documents dictionary, every page it opens next.
    for s in &shared {
        let mine = s.members.iter().map(String::as_str).collect();
        add_own_dictionary(&files, &mut chosen, &s.rel, &mine);
    }
    // A group's members also get a delta against this release's marked
    // chunk: once a visit has fetched it, the browser offers it for every
    // member it loads next, and for the code dictionary a first visit
    // fetches at idle.
    for g in &groups {
        let mine = g
            .members
            .iter()
            .map(String::as_str)
            .chain(
                shared
                    .iter()
                    .filter(|s| s.members.contains(&g.marked))
                    .map(|s| s.rel.as_str()),
            )
            .collect();
        add_own_dictionary(&files, &mut chosen, &g.marked, &mine);
    }
    ScanOut {
        files,
        on_disk,
        journaled,
        journals_read,
        chosen,
        shared,
        groups,
        idle_budget,
    }
}

/// A file of this release as a dictionary of this release's deltas.
fn this_release(f: &Scanned) -> OldFile {
    OldFile {
        release: releases::THIS_RELEASE,
        rel: f.found.rel.clone(),
        path: f.found.path.clone(),
        size: f.size,
        expect: Some(f.sha256_raw),
    }
}

/// Every file of `mine` (`rel` itself aside) also gets a delta against this
/// release's file at `rel`, unless it has one against those bytes already.
fn add_own_dictionary(
    files: &[Scanned],
    chosen: &mut [Chosen],
    rel: &str,
    mine: &std::collections::HashSet<&str>,
) {
    let Some(d) = files.iter().find(|f| f.found.rel == rel) else {
        return;
    };
    let own = this_release(d);
    for (f, c) in files.iter().zip(chosen.iter_mut()) {
        if f.found.rel != rel
            && mine.contains(f.found.rel.as_str())
            && !c.iter().any(|(_, sha)| *sha == d.sha256_raw)
        {
            c.push((own.clone(), d.sha256_raw));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 300 MB incompressible script took 26 minutes of q11 CPU for no
    /// variant. The scan's probe marks random bytes (what no encoder shrinks),
    /// never text, and the scan stays the same otherwise.
    #[test]
    fn the_scan_marks_a_large_source_no_encoder_shrinks_as_incompressible() {
        let dir = tempfile::tempdir().unwrap();
        let filter = Filter::new(&[], &[], 1024).unwrap();
        let mut x: u64 = 0x1234_5678_9abc_def1;
        let random: Vec<u8> = (0..PROBE_MIN as usize + 1000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let text = "export const a = () => 1;\n".repeat(PROBE_MIN as usize / 20);
        for (name, bytes, want) in [
            ("noise.js", random.clone(), true),
            ("app.js", text.into_bytes(), false),
            ("small.js", random[..PROBE_MIN as usize - 1].to_vec(), false),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let found = Found {
                rel: name.into(),
                path,
                linked: false,
            };
            let s = scan(found, &filter, &AtomicU64::new(0)).unwrap();
            assert_eq!(s.incompressible, want, "{name}");
            assert_eq!(s.size, bytes.len() as u64);
            assert_eq!(s.blake3, blake3::hash(&bytes).to_hex().to_string());
        }
    }
}
