//! `precompress check DIR`: proves, without writing anything, that what a
//! server would serve from DIR is right. Meant for CI and for a server's
//! start-up: every listed variant must decode to exactly its source, every hash
//! and size must match, every zstd frame must fit a browser's 8 MiB window, and
//! nothing on disk may be missing from the manifest.
//!
//! Deltas are checked the same way (hash, size, the dictionary their header
//! names), and decoded with their dictionary and compared with the source
//! when it is found: in a `--dictionary-from` folder, at the path the manifest
//! records, with the SHA-256 the manifest records.
//!
//! Here the report, its kinds and what is on disk against the manifest;
//! `variants` checks each asset and its variants, `deltas` each delta.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use crate::model::manifest::{Asset, Manifest};
use crate::model::path::check_relative;
use crate::run::tree::Tree;
use crate::run::walk::{walk, LOCK_NAME};

mod deltas;
mod problem;
mod variants;

use self::deltas::{check_deltas, Dictionaries};
use self::problem::problem;
pub use self::problem::{Problem, ProblemKind};

use self::variants::{check_asset, decodes_to, Decoders};

/// The outcome of a check.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct CheckReport {
    /// True when there is no problem.
    pub ok: bool,
    /// Assets checked.
    pub files: u64,
    /// Variants decoded and compared.
    pub variants: u64,
    /// Deltas listed and checked (hash, size, header).
    pub deltas: u64,
    /// Of those, the ones decoded with their dictionary and compared.
    pub deltas_decoded: u64,
    /// Everything wrong, sorted by path.
    pub problems: Vec<Problem>,
}

/// What a run was given besides DIR and its manifest, that `check` needs too.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Earlier releases: each delta whose dictionary one of them holds is
    /// decoded and compared with its source.
    pub dictionary_from: Vec<PathBuf>,
    /// The run's `--cache-dir`: inside DIR, it is not part of the site; its
    /// release store holds the dictionaries of deltas made without
    /// `--dictionary-from`, which are decoded too.
    pub cache_dir: Option<PathBuf>,
}

impl Options {
    /// Refuses what a run would refuse: a `--dictionary-from` folder that is
    /// missing, not a folder, unreadable or DIR itself (a configuration error,
    /// exit 2), so a typo never turns the delta check off.
    pub fn validate(&self, root: &Path) -> crate::Result<()> {
        let canon_dir = root.canonicalize().ok();
        for prev in &self.dictionary_from {
            crate::run::state::releases::check_folder(prev, canon_dir.as_deref())?;
        }
        Ok(())
    }
}

/// Checks `root` against the manifest at `manifest_path`.
pub fn check(root: &Path, manifest_path: &Path) -> CheckReport {
    check_with(root, manifest_path, &Options::default())
}

/// [`check`] with what the run was given besides DIR.
pub fn check_with(root: &Path, manifest_path: &Path, options: &Options) -> CheckReport {
    let manifest = match Manifest::read(manifest_path) {
        Ok(m) => m,
        Err(e) => return no_manifest(manifest_path, &e),
    };
    let tree = walk(
        root,
        false,
        &[
            manifest_path.to_path_buf(),
            root.join(LOCK_NAME),
            root.join("precompress.toml"),
            options.cache_dir.clone().unwrap_or_default(),
        ],
    );
    let mut problems = walk_problems(&tree);
    let safe_files = safe_assets(&manifest, &mut problems);
    problems.extend(named_dictionaries(&manifest));
    let counts = check_listed(root, &safe_files, options, &mut problems);
    problems.extend(unlisted_deltas(&manifest, &tree));
    let listed = listed_variants(&manifest);
    problems.extend(unlisted_files(&manifest, &listed, &tree));
    problems.extend(unlisted_variants(root, &listed, &tree));
    problems.sort();
    CheckReport {
        ok: problems.is_empty(),
        files: manifest.files.len() as u64,
        variants: counts.variants,
        deltas: counts.deltas,
        deltas_decoded: counts.deltas_decoded,
        problems,
    }
}

/// What is wrong with the manifest's `shared_dictionary` and
/// `documents_dictionary`: each must name a listed file of its kind, marked
/// as that kind is, or a server would link a browser to the wrong file.
fn named_dictionaries(manifest: &Manifest) -> Vec<Problem> {
    use crate::model::dictionary::{shared_kind, shared_use_as_dictionary, SharedKind};
    let base = manifest
        .base
        .as_deref()
        .unwrap_or(crate::model::path::ROOT_BASE);
    let named = [
        (
            "shared_dictionary",
            &manifest.shared_dictionary,
            SharedKind::Code,
        ),
        (
            "documents_dictionary",
            &manifest.documents_dictionary,
            SharedKind::Documents,
        ),
    ];
    let mut problems = Vec::new();
    for (field, key, kind) in named {
        let Some(key) = key else { continue };
        let detail = match manifest.files.get(key) {
            None => Some(format!(
                "{field} names {key:?}, which the manifest does not list"
            )),
            Some(_) if shared_kind(key) != Some(kind) => Some(format!(
                "{field} names {key:?}, which is not a name precompress gives it"
            )),
            Some(a) => {
                let want = shared_use_as_dictionary(key, base);
                (a.use_as_dictionary != want).then(|| {
                    format!(
                        "{field} {key:?} is marked {:?}, not {:?}",
                        a.use_as_dictionary, want
                    )
                })
            }
        };
        problems.extend(detail.map(|d| problem(key.clone(), ProblemKind::ManifestInvalid, d)));
    }
    problems
}

/// The report when there is no manifest to check against.
fn no_manifest(manifest_path: &Path, e: &crate::Error) -> CheckReport {
    let kind = if manifest_path.exists() {
        ProblemKind::ManifestInvalid
    } else {
        ProblemKind::ManifestMissing
    };
    CheckReport {
        ok: false,
        files: 0,
        variants: 0,
        deltas: 0,
        deltas_decoded: 0,
        problems: vec![problem(
            manifest_path.display().to_string(),
            kind,
            e.to_string(),
        )],
    }
}

/// What the walk itself found wrong: entries it could not read, and the
/// temporary files of a killed run.
fn walk_problems(tree: &Tree) -> Vec<Problem> {
    let mut problems: Vec<Problem> = tree
        .errors
        .iter()
        .map(|e| {
            problem(
                e.path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                ProblemKind::Unreadable,
                e.to_string(),
            )
        })
        .collect();
    for t in &tree.temps {
        problems.push(problem(
            &t.rel,
            ProblemKind::TemporaryFile,
            "left by an interrupted run; the next run removes it",
        ));
    }
    problems
}

/// The manifest's assets whose every listed path is a plain path inside DIR;
/// each other asset is a problem in `problems`. The manifest is data anyone
/// who can write DIR may have written: a path that leaves DIR (`../secret`)
/// is a problem, never opened, by the same rule `precompress serve` applies.
fn safe_assets<'m>(
    manifest: &'m Manifest,
    problems: &mut Vec<Problem>,
) -> Vec<(&'m String, &'m Asset)> {
    let mut safe_files = Vec::with_capacity(manifest.files.len());
    for (rel, asset) in &manifest.files {
        let listed = std::iter::once(rel.as_str())
            .chain(asset.encodings.iter().map(|v| v.path.as_str()))
            .chain(asset.deltas.iter().map(|d| d.path.as_str()))
            .chain(asset.deltas.iter().map(|d| d.dictionary_path.as_str()));
        let bad: Vec<String> = listed
            .filter_map(|p| check_relative(p).err().map(|e| format!("{p:?}: {e}")))
            .collect();
        if bad.is_empty() {
            safe_files.push((rel, asset));
        } else {
            problems.push(problem(
                rel.as_str(),
                ProblemKind::UnsafePath,
                format!(
                    "the manifest lists a path that is not a plain path inside DIR, not opened: {}",
                    bad.join(", ")
                ),
            ));
        }
    }
    safe_files
}

/// How much of what the manifest lists was checked.
#[derive(Debug, Default)]
struct Counts {
    variants: u64,
    deltas: u64,
    deltas_decoded: u64,
}

/// Checks every listed asset, its variants and its deltas, in parallel, into
/// `problems`.
fn check_listed(
    root: &Path,
    safe_files: &[(&String, &Asset)],
    options: &Options,
    problems: &mut Vec<Problem>,
) -> Counts {
    // A store refused (a folder of it is a link) is a problem: the deltas
    // made against it cannot be decoded here.
    let store = options.cache_dir.as_deref().and_then(|d| {
        let mut refused = Vec::new();
        let store = crate::run::state::store::Store::open_existing(d, &mut refused);
        for w in refused {
            problems.push(problem(d.display().to_string(), ProblemKind::Unreadable, w));
        }
        store
    });
    let mut folders = options.dictionary_from.clone();
    // A shared dictionary's members have deltas against the one beside them.
    folders.push(root.to_path_buf());
    let dictionaries = Dictionaries {
        folders: &folders,
        store: store.as_ref(),
    };
    let per_asset: Vec<(Vec<Problem>, u64, (u64, u64))> = safe_files
        .par_iter()
        .map_init(Decoders::default, |dec, &(rel, asset)| {
            let (mut p, n) = check_asset(root, rel, asset, dec);
            let d = check_deltas(root, rel, asset, &dictionaries, &mut p);
            (p, n, d)
        })
        .collect();
    let mut counts = Counts::default();
    for (p, n, (d, dd)) in per_asset {
        problems.extend(p);
        counts.variants += n;
        counts.deltas += d;
        counts.deltas_decoded += dd;
    }
    counts
}

/// Delta files on disk that the manifest does not list.
fn unlisted_deltas(manifest: &Manifest, tree: &Tree) -> Vec<Problem> {
    let listed_deltas: BTreeSet<&str> = manifest
        .files
        .values()
        .flat_map(|a| a.deltas.iter().map(|d| d.path.as_str()))
        .collect();
    tree.deltas
        .iter()
        .filter(|d| !listed_deltas.contains(d.rel.as_str()))
        .map(|d| problem(
            &d.rel,
            ProblemKind::UnlistedDelta,
            "not in the manifest: stale, or not written by precompress; a server that finds deltas by name would send it",
        ))
        .collect()
}

/// The variants the manifest lists, by path.
fn listed_variants(manifest: &Manifest) -> BTreeSet<&str> {
    manifest
        .files
        .values()
        .flat_map(|a| a.encodings.iter().map(|v| v.path.as_str()))
        .collect()
}

/// Files on disk that the manifest lists neither as an asset nor as a variant.
fn unlisted_files(manifest: &Manifest, listed: &BTreeSet<&str>, tree: &Tree) -> Vec<Problem> {
    let mut problems = Vec::new();
    for f in &tree.files {
        // A listed variant whose source is a symlink (a --follow-links run)
        // is walked as a plain file: it is not unlisted.
        if !manifest.files.contains_key(&f.rel) && !listed.contains(f.rel.as_str()) {
            // A file precompress could not read is not in the manifest either:
            // say that, not that the tree changed.
            problems.push(match crate::fsutil::open_to_read(&f.path) {
                Err(e) => problem(
                    &f.rel,
                    ProblemKind::Unreadable,
                    format!("cannot be read ({e}), so precompress could not list it; fix its permissions and rerun"),
                ),
                Ok(_) => problem(
                    &f.rel,
                    ProblemKind::UnlistedFile,
                    "not in the manifest: the tree changed after precompress ran",
                ),
            });
        }
    }
    problems
}

/// Variants on disk that the manifest does not list, each decoded to tell
/// one that is merely foreign from one a server would serve stale.
fn unlisted_variants(root: &Path, listed: &BTreeSet<&str>, tree: &Tree) -> Vec<Problem> {
    tree.variants
        .par_iter()
        .filter(|v| !listed.contains(v.rel.as_str()))
        .map_init(Decoders::default, |dec, v| {
            let (src, codec) = crate::model::content::variant_source(&v.rel).expect("walk classified it as a variant");
            match decodes_to(dec, codec, &v.path, &root.join(src)) {
                Ok(()) => problem(&v.rel, ProblemKind::ForeignVariant, "not in the manifest (not written by precompress), though it decodes to its source"),
                Err(why) => problem(&v.rel, ProblemKind::StaleVariant, format!("not in the manifest and {why}: a server would serve stale content")),
            }
        })
        .collect()
}
