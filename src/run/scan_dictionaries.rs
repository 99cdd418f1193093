//! The scan stage's dictionaries: this release's groups of chunks with no
//! name of their own, each with its marked chunk, its code dictionary
//! (within a first visit's idle budget with `--shared-dictionary auto`) and
//! its documents dictionary, written into DIR and scanned as more assets;
//! the ones earlier runs wrote and this one does not make removed. The
//! choices are `run::dictionaries`' (pure); this file reads the sources,
//! measures on the run's pool and writes.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::config::SharedDictionary;
use crate::encode::Codec;
use crate::model::content::content_kind;
use crate::report::DocumentsDictionary;
use crate::run::dictionaries::shared::Shared;
use crate::run::env::{remove_ours, Env, Log};
use crate::run::scanned::{IdleAllowance, Scanned};
use crate::run::tree::Found;

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
        .filter_map(|f| Some((f.found.rel.as_str(), f.held_or_read()?)))
        .collect();
    if pages.is_empty() {
        return None;
    }
    let by_rel: HashMap<&str, &Scanned> = all.iter().map(|f| (f.found.rel.as_str(), f)).collect();
    let keys = by_rel.keys().copied().collect();
    let read = |k: &str| by_rel.get(k).and_then(|f| f.held_or_read());
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
/// `--shared-dictionary off`; in a dry run only those on disk already. With
/// `auto`, also the idle budget and its page ([`idle_budget`]).
pub(crate) fn shared_stage(
    env: &Env,
    files: &mut Vec<Scanned>,
    scan: impl Fn(Found) -> crate::error::Result<Scanned>,
    log: &mut Log,
) -> (
    Vec<Shared>,
    Vec<crate::run::dictionaries::shared::Group>,
    Option<IdleAllowance>,
) {
    let earlier = take_earlier_dictionaries(files);
    let mut made = Vec::new();
    let mut groups = Vec::new();
    let mut idle = None;
    if env.cfg.use_as_dictionary {
        let passed: Vec<&Scanned> = files
            .iter()
            .filter(|f| env.filter.takes_deltas(&f.found.rel, f.size))
            .collect();
        groups = group_stage(env, &passed, files);
        if env.cfg.shared_dictionary != SharedDictionary::Off {
            (made, idle) = build_dictionaries(env, &passed, files, &groups, log);
        }
    }
    let shared = place_dictionaries(env, made, earlier, files, scan, log);
    (shared, groups, idle)
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
                f.held_or_read().is_some_and(|b| match kind {
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

/// This release's code dictionary (from `groups`; with `auto`, within a
/// first visit's idle budget, [`idle_budget`]) and documents dictionary
/// (measured first: made only when it pays), with their bytes; the
/// documents dictionary's estimate goes to the report; and the idle budget
/// with the page it was measured on.
fn build_dictionaries(
    env: &Env,
    passed: &[&Scanned],
    all: &[Scanned],
    groups: &[crate::run::dictionaries::shared::Group],
    log: &mut Log,
) -> (Vec<(Shared, Vec<u8>)>, Option<IdleAllowance>) {
    use crate::model::coding::{ContentKind, DeltaCoding};
    use crate::model::dictionary::is_page;
    use crate::run::dictionaries::{documents, shared};
    let assets: Vec<(&str, u64)> = passed
        .iter()
        .map(|f| (f.found.rel.as_str(), f.size))
        .collect();
    let by_rel: HashMap<&str, &Scanned> =
        passed.iter().map(|f| (f.found.rel.as_str(), *f)).collect();
    let enc = crate::run::settings::delta_encoder(env.cfg);
    // What a candidate costs a first visit: its dcz against the marked chunk.
    let cost = |marked: &[u8], candidate: &[u8]| -> u64 {
        let sha = crate::model::dictionary::sha256(marked);
        let mut out = Vec::new();
        enc.encode(
            DeltaCoding::Dcz,
            marked,
            &sha,
            candidate,
            ContentKind::Text,
            &mut out,
        )
        .map_or(u64::MAX, |()| out.len() as u64)
    };
    let auto = env.cfg.shared_dictionary == SharedDictionary::Auto;
    // Measured only when there is a dictionary to make: a group for the code
    // dictionary, or pages enough for the documents one.
    let pages = assets.iter().filter(|(r, _)| is_page(r)).count();
    let wanted = !groups.is_empty() || pages >= documents::MIN_PAGES;
    // With auto and no page, no page links one: none is made.
    let idle = (auto && wanted).then(|| idle_budget(env, all)).flatten();
    let budget = idle.as_ref().map(|i| i.bytes);
    let code = match (auto, budget) {
        (true, None) => None,
        (_, bytes) => shared::build(
            groups,
            |r| by_rel.get(r).map_or(0, |f| f.size),
            |r| by_rel.get(r).and_then(|f| f.held_or_read()),
            bytes
                .map(|bytes| shared::IdleBudget { bytes, cost: &cost })
                .as_ref(),
        ),
    };
    // The documents dictionary gets what the code dictionary left.
    let spent = code.as_ref().and_then(|c| c.2).unwrap_or(0);
    let left = budget.map(|b| b.saturating_sub(spent));
    let mut made: Vec<(Shared, Vec<u8>)> = code.into_iter().map(|(s, b, _)| (s, b)).collect();
    let measure = |d: &[u8], held: &[Vec<u8>]| {
        env.pool
            .install(|| documents::measure(d, held, env.cfg.levels, &enc))
    };
    let (doc, estimate) =
        match documents::build(&assets, |j| passed[j].held_or_read(), measure, left) {
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
        idle_left: left,
    });
    made.extend(doc);
    (made, idle)
}

/// What `--shared-dictionary auto` lets a first visit fetch at idle for its
/// dictionaries (the code dictionary first, the documents dictionary from
/// what is left): [`IDLE_MAX_SHARE`](crate::run::dictionaries::shared::IDLE_MAX_SHARE)
/// of a first visit of the landing page (itself, and the scripts and
/// stylesheets it loads: `run::dictionaries::first_visit`; its images and
/// fonts not counted, so the bound errs low), each compressed with zstd at
/// the run's level, as the candidate's delta is measured; and that page.
/// `None` for a release with no page.
fn idle_budget(env: &Env, all: &[Scanned]) -> Option<IdleAllowance> {
    use crate::run::dictionaries::{first_visit, shared::IDLE_MAX_SHARE};
    let by_rel: HashMap<&str, &Scanned> = all.iter().map(|f| (f.found.rel.as_str(), f)).collect();
    let landing = crate::model::dictionary::landing_page(by_rel.keys().copied())?;
    let read = |k: &str| by_rel.get(k).and_then(|f| f.held_or_read());
    let keys = by_rel.keys().copied().collect();
    let mut visit = first_visit::loads(&[(landing, read(landing)?)], read, &keys, &env.cfg.base);
    visit.insert(landing.to_string());
    let bytes: u64 = env.pool.install(|| {
        visit
            .par_iter()
            .filter_map(|k| {
                let b = read(k)?;
                let mut enc = crate::encode::new_encoder(Codec::Zstd, env.cfg.levels).ok()?;
                let mut out = Vec::new();
                enc.encode(&b, content_kind(k), &mut out).ok()?;
                Some(out.len().min(b.len()) as u64)
            })
            .sum()
    });
    Some(IdleAllowance {
        page: landing.to_string(),
        bytes: (bytes as f64 * IDLE_MAX_SHARE) as u64,
    })
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
    scan: impl Fn(Found) -> crate::error::Result<Scanned>,
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
                    scan(found)
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
