//! What earlier runs left: the previous manifest, the variants and deltas it
//! says precompress wrote, and what the journals of interrupted runs prove
//! (`journal`). The plan's notion of "ours" comes from here.

use std::collections::HashMap;
use std::path::Path;

use crate::model::dictionary::delta_source;
use crate::model::manifest::Manifest;
use crate::run::journal::{self};
use crate::run::scan::Scanned;

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
pub(crate) fn written_by(prev: Option<&Manifest>) -> HashMap<String, String> {
    prev.iter()
        .flat_map(|p| p.files.values())
        .flat_map(|a| {
            let variants = a.encodings.iter().map(|v| (&v.path, &v.blake3));
            let deltas = a.deltas.iter().map(|d| (&d.path, &d.blake3));
            variants.chain(deltas).map(|(p, b)| (p.clone(), b.clone()))
        })
        .collect()
}

/// Takes in what the journals of interrupted runs recorded
/// ([`crate::run::journal`]): each file still on disk with the content its line
/// names is ours (added to `ours`, so the plan removes it when this run does
/// not keep it). Returns those made from their source as it is now: the plan
/// checks them and adopts them (a variant or delta that decodes to the
/// source) instead of calling them foreign.
pub(crate) fn recover(
    entries: &HashMap<String, journal::Entry>,
    files: &[Scanned],
    on_disk: &[(String, Option<String>)],
    ours: &mut HashMap<String, String>,
) -> Vec<String> {
    if entries.is_empty() {
        return Vec::new();
    }
    // A variant whose source is gone is walked as a source.
    let disk: HashMap<&str, &str> = on_disk
        .iter()
        .filter_map(|(p, h)| Some((p.as_str(), h.as_deref()?)))
        .chain(
            files
                .iter()
                .map(|f| (f.found.rel.as_str(), f.blake3.as_str())),
        )
        .collect();
    let mut adoptable = Vec::new();
    for (path, e) in entries {
        if disk.get(path.as_str()) != Some(&e.blake3.as_str()) || ours.get(path) == Some(&e.blake3)
        {
            continue; // not what the killed run wrote, or listed already
        }
        let source = crate::model::content::variant_source(path)
            .map(|(s, _)| s)
            .or_else(|| delta_source(path).map(|(s, _)| s));
        if source.and_then(|s| disk.get(s)) == Some(&e.source.as_str()) {
            adoptable.push(path.clone());
        }
        ours.insert(path.clone(), e.blake3.clone());
    }
    adoptable.sort();
    adoptable
}
