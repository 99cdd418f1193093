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

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use crate::encode::delta::{DeltaCoding, DeltaEncoder, DeltaLevels};
use crate::encode::{frame_window_size, new_encoder, Codec, Encoder, Levels};
use crate::fsutil::read_regular;
use crate::model::dictionary::parse_available_dictionary;
use crate::model::manifest::{Asset, Manifest};
use crate::model::path::check_relative;
use crate::run::walk::{walk, Tree, LOCK_NAME};

/// One thing wrong with DIR.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Problem {
    /// Path relative to DIR (or the manifest's path).
    pub path: String,
    /// Short machine-readable kind, e.g. `variant_corrupt`.
    pub problem: ProblemKind,
    /// What exactly.
    pub detail: String,
}

/// The kinds of problem, as `--json` names them (snake_case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// A variant or delta listed with a coding this precompress does not know.
    BadCoding,
    /// A delta's size or blake3 is not the manifest's.
    DeltaChanged,
    /// A delta whose header does not name its dictionary, or a dictionary that is no SHA-256.
    DeltaCorrupt,
    /// A listed delta that cannot be read.
    DeltaMissing,
    /// A delta that does not decode, with its dictionary, to its source.
    DeltaStale,
    /// An unlisted variant that decodes to its source (not written by precompress).
    ForeignVariant,
    /// An ETag that is not the one the entry's blake3 gives: a server would
    /// send one strong ETag for different bodies, or a stale one.
    EtagMismatch,
    /// The manifest exists but cannot be read or parsed.
    ManifestInvalid,
    /// There is no manifest.
    ManifestMissing,
    /// A source whose size or blake3 is not the manifest's.
    SourceChanged,
    /// A listed source that cannot be read.
    SourceMissing,
    /// An unlisted variant that does not decode to its source.
    StaleVariant,
    /// A temporary file left by a killed run.
    TemporaryFile,
    /// A delta file on disk that the manifest does not list.
    UnlistedDelta,
    /// A file on disk that the manifest does not list.
    UnlistedFile,
    /// A file or folder that cannot be read.
    Unreadable,
    /// A manifest path that is not a plain path inside DIR (never opened).
    UnsafePath,
    /// A variant's size or blake3 is not the manifest's.
    VariantChanged,
    /// A variant that does not decode (or is not a zstd frame).
    VariantCorrupt,
    /// A listed variant that cannot be read.
    VariantMissing,
    /// A variant that decodes to something other than its source.
    VariantStale,
    /// A zstd frame that declares a window over the 8 MiB browsers accept.
    ZstdWindow,
}

impl ProblemKind {
    /// The name `--json` and the text report use.
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemKind::BadCoding => "bad_coding",
            ProblemKind::DeltaChanged => "delta_changed",
            ProblemKind::DeltaCorrupt => "delta_corrupt",
            ProblemKind::DeltaMissing => "delta_missing",
            ProblemKind::DeltaStale => "delta_stale",
            ProblemKind::EtagMismatch => "etag_mismatch",
            ProblemKind::ForeignVariant => "foreign_variant",
            ProblemKind::ManifestInvalid => "manifest_invalid",
            ProblemKind::ManifestMissing => "manifest_missing",
            ProblemKind::SourceChanged => "source_changed",
            ProblemKind::SourceMissing => "source_missing",
            ProblemKind::StaleVariant => "stale_variant",
            ProblemKind::TemporaryFile => "temporary_file",
            ProblemKind::UnlistedDelta => "unlisted_delta",
            ProblemKind::UnlistedFile => "unlisted_file",
            ProblemKind::Unreadable => "unreadable",
            ProblemKind::UnsafePath => "unsafe_path",
            ProblemKind::VariantChanged => "variant_changed",
            ProblemKind::VariantCorrupt => "variant_corrupt",
            ProblemKind::VariantMissing => "variant_missing",
            ProblemKind::VariantStale => "variant_stale",
            ProblemKind::ZstdWindow => "zstd_window",
        }
    }
}

impl std::fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

// Problems sort by path, then by kind name, as when kinds were strings.
impl Ord for ProblemKind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for ProblemKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

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

fn problem(path: impl Into<String>, problem: ProblemKind, detail: impl Into<String>) -> Problem {
    Problem {
        path: path.into(),
        problem,
        detail: detail.into(),
    }
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
            crate::run::releases::check_folder(prev, canon_dir.as_deref())?;
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
        let store = crate::run::store::Store::open_existing(d, &mut refused);
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

/// One decoder per codec, per thread.
#[derive(Default)]
struct Decoders([Option<Box<dyn Encoder>>; 3]);

impl Decoders {
    fn get(&mut self, codec: Codec) -> &mut dyn Encoder {
        self.0[codec.index()]
            .get_or_insert_with(|| new_encoder(codec, Levels::default()).expect("encoder starts"))
            .as_mut()
    }
}

fn decodes_to(
    dec: &mut Decoders,
    codec: Codec,
    variant: &Path,
    source: &Path,
) -> Result<(), String> {
    let src =
        read_regular(source, u64::MAX).map_err(|e| format!("its source cannot be read ({e})"))?;
    let bytes = read_regular(variant, u64::MAX).map_err(|e| format!("it cannot be read ({e})"))?;
    dec.get(codec)
        .verify(&bytes, &src)
        .map_err(|why| format!("it {why}"))
}

/// Checks the deltas of the asset at `rel` into `out`; returns how many were
/// checked and how many of those decoded with their dictionary.
/// Where the dictionaries of deltas are looked for.
struct Dictionaries<'a> {
    /// `--dictionary-from` folders, by the delta's `dictionary_path`.
    folders: &'a [PathBuf],
    /// The release store, by the dictionary's hash.
    store: Option<&'a crate::run::store::Store>,
}

impl Dictionaries<'_> {
    /// The dictionary of SHA-256 `sha`, once at `path` in its release.
    fn find(&self, path: &str, sha: &[u8; 32]) -> Option<Vec<u8>> {
        let stored = self
            .store
            .map(|s| s.blob(&crate::model::dictionary::hex(sha)));
        self.folders
            .iter()
            .map(|prev| prev.join(path))
            .chain(stored)
            .find_map(|p| {
                let b = read_regular(&p, u64::MAX).ok()?;
                (crate::model::dictionary::sha256(&b) == *sha).then_some(b)
            })
    }
}

fn check_deltas(
    root: &Path,
    rel: &str,
    asset: &Asset,
    dictionaries: &Dictionaries,
    out: &mut Vec<Problem>,
) -> (u64, u64) {
    let (mut checked, mut decoded) = (0, 0);
    let mut src: Option<Vec<u8>> = None;
    for d in &asset.deltas {
        let Some(coding) = DeltaCoding::parse(&d.coding) else {
            out.push(problem(
                &d.path,
                ProblemKind::BadCoding,
                format!("unknown delta coding {:?}", d.coding),
            ));
            continue;
        };
        let Some(dict_sha) = parse_available_dictionary(&d.dictionary) else {
            out.push(problem(
                &d.path,
                ProblemKind::DeltaCorrupt,
                format!(
                    "dictionary {:?} is not a base64 SHA-256 between colons",
                    d.dictionary
                ),
            ));
            continue;
        };
        let bytes = match read_written(root, &d.path) {
            Ok(b) => b,
            Err(e) => {
                out.push(problem(
                    &d.path,
                    ProblemKind::DeltaMissing,
                    format!("listed in the manifest but cannot be read: {e}"),
                ));
                continue;
            }
        };
        checked += 1;
        if bytes.len() as u64 != d.size || blake3::hash(&bytes).to_hex().as_str() != d.blake3 {
            out.push(problem(
                &d.path,
                ProblemKind::DeltaChanged,
                "size or blake3 differs from the manifest",
            ));
        }
        etag_problem(&d.path, &d.etag, &d.blake3, out);
        if coding.header_hash(&bytes) != Some(dict_sha) {
            out.push(problem(
                &d.path,
                ProblemKind::DeltaCorrupt,
                format!("its header does not name the dictionary {}", d.dictionary),
            ));
            continue;
        }
        if coding == DeltaCoding::Dcz {
            // Without the dictionary, the frame's window against RFC 9842's
            // cap, and nothing after it (decoded with PREV below).
            if let Some(why) =
                crate::encode::delta::dcz_frame_problem(&bytes[coding.header_len()..], None)
            {
                out.push(problem(&d.path, ProblemKind::DeltaCorrupt, why));
                continue;
            }
        }
        // The dictionary, if an earlier release given (or the store) holds it unchanged.
        let Some(dict) = dictionaries.find(&d.dictionary_path, &dict_sha) else {
            continue;
        };
        if src.is_none() {
            src = read_regular(&root.join(rel), u64::MAX).ok();
        }
        let Some(src) = &src else { continue };
        decoded += 1;
        let enc = DeltaEncoder::new(DeltaLevels {
            brotli_quality: 11,
            zstd_level: 19,
        });
        if let Err(why) = enc.verify(coding, &bytes, &dict, &dict_sha, src) {
            out.push(problem(
                &d.path,
                ProblemKind::DeltaStale,
                format!("with its dictionary {} it {why}", d.dictionary_path),
            ));
        }
    }
    (checked, decoded)
}

/// Reads a variant or delta the manifest lists: a regular file in DIR,
/// never a symlink (precompress writes files, not links; a link could send a
/// server out of DIR).
fn read_written(root: &Path, rel: &str) -> std::io::Result<Vec<u8>> {
    let path = root.join(rel);
    if std::fs::symlink_metadata(&path)?.file_type().is_symlink() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a symlink, not a file precompress wrote",
        ));
    }
    read_regular(&path, u64::MAX)
}

/// A problem when `etag` is not the one precompress derives from `blake3`
/// (each representation's own content, so no two bodies share one).
fn etag_problem(path: &str, etag: &str, blake3: &str, out: &mut Vec<Problem>) {
    let want = crate::model::manifest::etag(blake3);
    if etag != want {
        out.push(problem(
            path,
            ProblemKind::EtagMismatch,
            format!("etag {etag} is not {want}, the one its blake3 gives: a server would send it for another body"),
        ));
    }
}

fn check_asset(root: &Path, rel: &str, asset: &Asset, dec: &mut Decoders) -> (Vec<Problem>, u64) {
    let mut out = Vec::new();
    let src_path: PathBuf = root.join(rel);
    let src = match read_regular(&src_path, u64::MAX) {
        Ok(b) => b,
        Err(e) => {
            out.push(problem(
                rel,
                ProblemKind::SourceMissing,
                format!("listed in the manifest but cannot be read: {e}"),
            ));
            return (out, 0);
        }
    };
    if src.len() as u64 != asset.size || blake3::hash(&src).to_hex().as_str() != asset.blake3 {
        out.push(problem(
            rel,
            ProblemKind::SourceChanged,
            "size or blake3 differs from the manifest: rerun precompress",
        ));
    }
    etag_problem(rel, &asset.etag, &asset.blake3, &mut out);
    let mut checked = 0;
    for v in &asset.encodings {
        let Some(codec) = Codec::parse(&v.coding).filter(|c| c.token() == v.coding) else {
            out.push(problem(
                &v.path,
                ProblemKind::BadCoding,
                format!("unknown coding {:?}", v.coding),
            ));
            continue;
        };
        let bytes = match read_written(root, &v.path) {
            Ok(b) => b,
            Err(e) => {
                out.push(problem(
                    &v.path,
                    ProblemKind::VariantMissing,
                    format!("listed in the manifest but cannot be read: {e}"),
                ));
                continue;
            }
        };
        checked += 1;
        if bytes.len() as u64 != v.size || blake3::hash(&bytes).to_hex().as_str() != v.blake3 {
            out.push(problem(
                &v.path,
                ProblemKind::VariantChanged,
                "size or blake3 differs from the manifest",
            ));
        }
        etag_problem(&v.path, &v.etag, &v.blake3, &mut out);
        if codec == Codec::Zstd {
            match frame_window_size(&bytes) {
                Some(w) if w > 8 << 20 => out.push(problem(
                    &v.path,
                    ProblemKind::ZstdWindow,
                    format!("declares a {w}-byte window; browsers accept at most 8 MiB"),
                )),
                None => out.push(problem(
                    &v.path,
                    ProblemKind::VariantCorrupt,
                    "not a zstd frame",
                )),
                _ => {}
            }
        }
        let mut decoded = Vec::new();
        match dec.get(codec).decode(&bytes, src.len(), &mut decoded) {
            Err(e) => out.push(problem(
                &v.path,
                ProblemKind::VariantCorrupt,
                format!("does not decode: {e}"),
            )),
            Ok(()) if decoded != src => out.push(problem(
                &v.path,
                ProblemKind::VariantStale,
                "decodes to something other than its source",
            )),
            Ok(()) => {}
        }
    }
    (out, checked)
}
