//! The scan stage: every source read once through both hashes (blake3,
//! SHA-256) and, from [`PROBE_MIN`] on, a fast probe of whether it shrinks;
//! every variant and delta on disk hashed; each candidate asset's
//! dictionaries in the earlier releases chosen; and what the plan needs of
//! each source. Small sources are kept in memory (up to [`HELD_FILE_MAX`]
//! each and [`HELD_TOTAL_MAX`] in all), so their codec jobs share one read.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use base64::Engine;
use rayon::prelude::*;

use crate::config::SharedDictionary;
use crate::encode::brotli_split::parts_for;
use crate::encode::estimate::ShrinkProbe;
use crate::encode::Codec;
use crate::error::{Error, Result};
use crate::fsutil::{open_own, CopyMeta};
use crate::model::content::content_kind;
use crate::model::dictionary::{is_candidate, is_page_candidate};
use crate::report::DocumentsDictionary;
use crate::run::dictionaries::shared::Shared;
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
        let input = || held_or_read(f);
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
    let (shared, groups) = shared_stage(env, &mut files, log);
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

/// The file name of `rel`, with no folder.
fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

/// This release's groups of chunks with no pattern of their own, each with
/// its marked chunk (`run::dictionaries::shared::groups`), of the assets `passed`; which
/// members import another file is read in parallel on the run's pool (an
/// unreadable one imports nothing).
fn group_stage(
    env: &Env,
    passed: &[&Scanned],
    all: &[Scanned],
) -> Vec<crate::run::dictionaries::shared::Group> {
    use crate::run::dictionaries::shared::{groups, groups_loaded, members, references};
    let assets: Vec<(&str, u64)> = passed
        .iter()
        .map(|f| (f.found.rel.as_str(), f.size))
        .collect();
    let names: std::collections::HashSet<&str> =
        all.iter().map(|f| file_name(&f.found.rel)).collect();
    let refers: HashMap<usize, bool> = env.pool.install(|| {
        members(&assets)
            .into_par_iter()
            .map(|i| {
                let f = passed[i];
                let own = file_name(&f.found.rel);
                let yes = match &f.content {
                    Some(b) => references(b, &names, own),
                    None => crate::fsutil::read_own(&f.found.path, u64::MAX)
                        .is_ok_and(|b| references(&b, &names, own)),
                };
                (i, yes)
            })
            .collect()
    });
    let loaded = first_visit_loads(env, all);
    let refers = |i| refers.get(&i).copied().unwrap_or(false);
    match loaded {
        Some(l) => groups_loaded(&assets, refers, |i| l.contains(assets[i].0)),
        None => groups(&assets, refers),
    }
}

/// What a first visit of any of the release's pages loads
/// (`run::dictionaries::first_visit`); `None` for a release with no page, whose first
/// visit is not known.
fn first_visit_loads(env: &Env, all: &[Scanned]) -> Option<std::collections::BTreeSet<String>> {
    use crate::model::dictionary::is_page;
    let pages: Vec<(&str, Vec<u8>)> = all
        .iter()
        .filter(|f| is_page(&f.found.rel))
        .filter_map(|f| Some((f.found.rel.as_str(), held_or_read(f)?)))
        .collect();
    if pages.is_empty() {
        return None;
    }
    let by_rel: HashMap<&str, &Scanned> = all.iter().map(|f| (f.found.rel.as_str(), f)).collect();
    let keys = by_rel.keys().copied().collect();
    let read = |k: &str| by_rel.get(k).and_then(|f| held_or_read(f));
    Some(crate::run::dictionaries::first_visit::loads(
        &pages,
        read,
        &keys,
        &env.cfg.base,
    ))
}

/// This release's groups of chunks with no pattern of their own
/// (`run::dictionaries::shared::groups`) and its shared dictionaries (`run::dictionaries::shared`,
/// `run::dictionaries::documents`): built from the scanned assets, written into DIR
/// unless there already, and scanned as more assets; the ones earlier runs
/// wrote and this one does not make are removed (provably ours: named by
/// the hash of content that starts with the marker). No groups without
/// dictionaries (`--no-use-as-dictionary`); no dictionary a page links with
/// `--shared-dictionary off`; in a dry run only those on disk already.
fn shared_stage(
    env: &Env,
    files: &mut Vec<Scanned>,
    log: &mut Log,
) -> (Vec<Shared>, Vec<crate::run::dictionaries::shared::Group>) {
    let earlier = take_earlier_dictionaries(files);
    let mut made = Vec::new();
    let mut groups = Vec::new();
    if env.cfg.use_as_dictionary {
        let passed: Vec<&Scanned> = files
            .iter()
            .filter(|f| env.filter.takes_deltas(&f.found.rel, f.size))
            .collect();
        groups = group_stage(env, &passed, files);
        if env.cfg.shared_dictionary != SharedDictionary::Off {
            made = build_dictionaries(env, &passed, &groups, log);
        }
    }
    (place_dictionaries(env, made, earlier, files, log), groups)
}

/// The file's bytes: those the scan held, or read again.
fn held_or_read(f: &Scanned) -> Option<Vec<u8>> {
    f.content.clone().or_else(|| f.found.read().ok())
}

/// Takes out of `files` the dictionaries earlier runs wrote: ours, not
/// sources of this run. A file with one of our names but past the bound is
/// not ours: never read whole.
fn take_earlier_dictionaries(files: &mut Vec<Scanned>) -> Vec<Scanned> {
    use crate::model::dictionary::{shared_kind, SharedKind};
    use crate::run::dictionaries::{documents, shared};
    let mut earlier = Vec::new();
    let mut i = 0;
    while i < files.len() {
        let f = &files[i];
        let ours = f.size <= shared::MAX_BYTES * 2
            && shared_kind(&f.found.rel).is_some_and(|kind| {
                held_or_read(f).is_some_and(|b| match kind {
                    SharedKind::Code => shared::is_ours(&f.found.rel, &b),
                    SharedKind::Documents => documents::is_ours(&f.found.rel, &b),
                })
            });
        if ours {
            earlier.push(files.remove(i));
        } else {
            i += 1;
        }
    }
    earlier
}

/// This release's code dictionary (from `groups`) and documents dictionary
/// (measured first: made only when it pays), with their bytes; the
/// documents dictionary's estimate goes to the report.
fn build_dictionaries(
    env: &Env,
    passed: &[&Scanned],
    groups: &[crate::run::dictionaries::shared::Group],
    log: &mut Log,
) -> Vec<(Shared, Vec<u8>)> {
    use crate::run::dictionaries::{documents, shared};
    let assets: Vec<(&str, u64)> = passed
        .iter()
        .map(|f| (f.found.rel.as_str(), f.size))
        .collect();
    let by_rel: HashMap<&str, &Scanned> =
        passed.iter().map(|f| (f.found.rel.as_str(), *f)).collect();
    let mut made: Vec<(Shared, Vec<u8>)> = shared::build(
        groups,
        |r| by_rel.get(r).map_or(0, |f| f.size),
        |r| by_rel.get(r).and_then(|f| held_or_read(f)),
        env.cfg.shared_dictionary == SharedDictionary::Auto,
    )
    .into_iter()
    .collect();
    let enc = crate::run::settings::delta_encoder(env.cfg);
    let measure = |d: &[u8], held: &[Vec<u8>]| {
        env.pool
            .install(|| documents::measure(d, held, env.cfg.levels, &enc))
    };
    let (doc, estimate) = match documents::build(&assets, |j| held_or_read(passed[j]), measure) {
        documents::Outcome::Made(s, bytes, e) => (Some((s, bytes)), Some(e)),
        documents::Outcome::NotWorth(e) => (None, e),
        documents::Outcome::None => (None, None),
    };
    log.counts.documents_dictionary = estimate.map(|e| DocumentsDictionary {
        path: doc.as_ref().map(|(s, _)| s.rel.clone()),
        measured_pages: e.pages,
        br_bytes: e.br,
        delta_bytes: e.delta,
        dictionary_br_bytes: e.dictionary_br,
        payback_pages: e.payback(),
        bound_pages: documents::PAYBACK_PAGES,
    });
    made.extend(doc);
    made
}

/// Each dictionary `made` written into DIR unless an earlier run's is there
/// with those bytes, and scanned as one more asset; the earlier ones this
/// run does not make removed. A dry run writes nothing: it reports a
/// dictionary it would make only when that one is on disk already.
fn place_dictionaries(
    env: &Env,
    made: Vec<(Shared, Vec<u8>)>,
    mut earlier: Vec<Scanned>,
    files: &mut Vec<Scanned>,
    log: &mut Log,
) -> Vec<Shared> {
    let mut out = Vec::new();
    for (s, bytes) in made {
        let scanned = match earlier.iter().position(|e| e.found.rel == s.rel) {
            Some(p) => earlier.swap_remove(p),
            None if env.cfg.dry_run => continue,
            None => {
                let path = env.root.join(&s.rel);
                let written = crate::fsutil::write_atomic(&path, &bytes, None).and_then(|()| {
                    let found = Found {
                        rel: s.rel.clone(),
                        path,
                        linked: false,
                    };
                    scan(found, &env.filter, &AtomicU64::new(0))
                });
                match written {
                    Ok(f) => f,
                    Err(e) => {
                        log.errors.push(e);
                        continue;
                    }
                }
            }
        };
        files.push(scanned);
        out.push(s);
    }
    for e in earlier {
        remove_ours(env.cfg, &e.found.path, &e.found.rel, log);
    }
    out
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
