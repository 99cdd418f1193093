//! What earlier runs left: the previous manifest, the variants and deltas it
//! says precompress wrote, and what the journals of interrupted runs prove
//! (`journal`). The plan's notion of "ours" comes from here.

use std::collections::HashMap;
use std::path::Path;

use crate::model::coding::{Codec, DeltaCoding};
use crate::model::dictionary::parse_available_dictionary;
use crate::model::manifest::Manifest;
use crate::model::names::{delta_source, sibling_path, Sibling};
use crate::run::state::journal::{self};

/// The previous run's manifest, if there is one that can be read (a corrupt
/// one is a warning: the run rebuilds it, deleting nothing it cannot prove
/// precompress wrote).
pub(crate) fn previous_manifest(path: &Path, warnings: &mut Vec<String>) -> Option<Manifest> {
    match path.exists().then(|| Manifest::read(path)) {
        Some(Ok(m)) => Some(m),
        Some(Err(e)) => {
            warnings.push(format!("{e}; rebuilding it from the files on disk, deleting nothing precompress cannot prove it wrote"));
            None
        }
        None => None,
    }
}

/// Variants and deltas the previous run wrote: path -> the blake3 they had.
/// Only a path that is the entry's own name for that coding and dictionary
/// ([`sibling_path`]) counts: a manifest copied or planted into DIR that
/// lists a source (`user-notes.txt`) or another asset's file as a variant
/// never makes a run delete it as ours.
pub(crate) fn written_by(prev: Option<&Manifest>) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for (key, a) in prev.iter().flat_map(|p| p.files.iter()) {
        for v in &a.encodings {
            let own = Codec::parse(&v.coding).map(|c| sibling_path(key, Sibling::Variant(c)));
            if own.as_deref() == Some(v.path.as_str()) {
                out.insert(v.path.clone(), v.blake3.clone());
            }
        }
        for d in &a.deltas {
            let own = parse_available_dictionary(&d.dictionary)
                .zip(DeltaCoding::parse(&d.coding))
                .map(|(sha, c)| sibling_path(key, Sibling::Delta(&sha, c)));
            if own.as_deref() == Some(d.path.as_str()) {
                out.insert(d.path.clone(), d.blake3.clone());
            }
        }
    }
    out
}

/// The source whose variant (`KEY.br`) or delta (`KEY.HEX.dcb`) `path` is
/// named as: the only names a run ever writes beside a source.
fn own_file_of(path: &str) -> Option<&str> {
    crate::model::content::variant_source(path)
        .map(|(s, _)| s)
        .or_else(|| delta_source(path).map(|(s, _)| s))
}

/// Takes in what the journals of interrupted runs recorded
/// ([`crate::run::state::journal`]): each file still on disk with the content its line
/// names, named as a variant or delta of a source this walk found, is ours
/// (added to `ours`, so the plan removes it when this run does not keep it).
/// A line naming anything else (a source, a file whose source is gone) is
/// passed over: the journal proves only what this tool writes. Returns those
/// made from their source as it is now: the plan checks them and adopts them
/// (a variant or delta that decodes to the source) instead of calling them
/// foreign.
/// `sources` are this walk's, path to blake3.
pub(crate) fn recover(
    entries: &HashMap<String, journal::Entry>,
    sources: &HashMap<&str, &str>,
    on_disk: &[(String, Option<String>)],
    ours: &mut HashMap<String, String>,
) -> Vec<String> {
    if entries.is_empty() {
        return Vec::new();
    }
    // Only variants and deltas the walk found as such: a variant whose source
    // is gone is walked as a source, and is no file of ours to take.
    let disk: HashMap<&str, &str> = on_disk
        .iter()
        .filter_map(|(p, h)| Some((p.as_str(), h.as_deref()?)))
        .collect();
    let mut adoptable = Vec::new();
    for (path, e) in entries {
        if disk.get(path.as_str()) != Some(&e.blake3.as_str()) || ours.get(path) == Some(&e.blake3)
        {
            continue; // not what the killed run wrote, or listed already
        }
        let Some(now) = own_file_of(path).and_then(|s| sources.get(s)) else {
            continue; // not a name this tool writes beside a source
        };
        if *now == e.source {
            adoptable.push(path.clone());
        }
        ours.insert(path.clone(), e.blake3.clone());
    }
    adoptable.sort();
    adoptable
}
