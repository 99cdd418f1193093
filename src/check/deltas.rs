//! One listed asset's deltas checked: hash, size, the dictionary their
//! header names, and decoded with that dictionary (found in a
//! `--dictionary-from` folder, beside the asset for a shared dictionary, or
//! in the release store) and compared with the source.

use std::path::{Path, PathBuf};

use crate::encode::delta::{DeltaCoding, DeltaEncoder, DeltaLevels};
use crate::fsutil::read_regular;
use crate::model::dictionary::parse_available_dictionary;
use crate::model::manifest::Asset;

use super::problem::{problem, Problem, ProblemKind};
use super::variants::{etag_problem, read_written};

/// Where the dictionaries of deltas are looked for.
pub(super) struct Dictionaries<'a> {
    /// `--dictionary-from` folders, by the delta's `dictionary_path`.
    pub(super) folders: &'a [PathBuf],
    /// The release store, by the dictionary's hash.
    pub(super) store: Option<&'a crate::run::state::store::Store>,
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

/// Checks the deltas of the asset at `rel` into `out`; returns how many were
/// checked and how many of those decoded with their dictionary.
pub(super) fn check_deltas(
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
