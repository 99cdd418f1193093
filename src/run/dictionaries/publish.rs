//! The list of this release's dictionaries (`model::published`), placed in
//! DIR by the scan once it knows what the release marks: written when it
//! differs from the one an earlier run left (never over a file of that name
//! precompress did not write), scanned as one more asset, and removed when
//! the release marks nothing.

use crate::model::published::{Listed, Published, FILE_NAME, MAX_BYTES};
use crate::run::dictionaries::shared::{Group, Marks, Shared};
use crate::run::env::{remove_ours, Env, Log};
use crate::run::scanned::Scanned;
use crate::run::tree::Found;

/// What the release marks (as its manifest will), as the list's entries.
fn listed(env: &Env, files: &[Scanned], marks: &Marks) -> Vec<Listed> {
    files
        .iter()
        .filter(|f| env.mark(marks, &f.found.rel, f.size).is_some())
        .map(|f| Listed {
            path: f.found.rel.clone(),
            sha256: crate::model::dictionary::hex(&f.sha256_raw),
            size: f.size,
        })
        .collect()
}

/// Places the list of what `files` mark into DIR and `scan`s it into
/// `files` (the scan's own function, passed in: the scan calls this); an
/// earlier list this release has no use for is removed. A dry run writes
/// and removes nothing: an earlier list stays as it is.
pub(crate) fn publish_stage(
    env: &Env,
    files: &mut Vec<Scanned>,
    (shared, groups): (&[Shared], &[Group]),
    log: &mut Log,
    scan: impl FnOnce(Found) -> crate::error::Result<Scanned>,
) {
    let earlier = match files.iter().position(|f| f.found.rel == FILE_NAME) {
        Some(i) => {
            let f = &files[i];
            let bytes = f
                .content
                .clone()
                .or_else(|| crate::fsutil::read_own(&f.found.path, MAX_BYTES).ok());
            match bytes.filter(|b| Published::is_ours(b)) {
                Some(b) => Some((files.remove(i), b)),
                None => {
                    log.counts.warnings.push(format!(
                        "{FILE_NAME}: a file precompress did not write has the name of its list of dictionaries: left as an asset, and no list published (the next release cannot take this one's dictionaries from the live site)"
                    ));
                    return;
                }
            }
        }
        None => None,
    };
    let marks = Marks::new(shared, groups);
    let list = listed(env, files, &marks);
    if list.is_empty() {
        if let Some((f, _)) = earlier {
            remove_ours(env.cfg, &f.found.path, &f.found.rel, log);
        }
        return;
    }
    let bytes = Published::new(list).to_bytes();
    let placed = match earlier {
        Some((f, b)) if b == bytes || env.cfg.dry_run => Ok(f),
        None if env.cfg.dry_run => return,
        _ => {
            let path = env.root.join(FILE_NAME);
            crate::fsutil::write_atomic(&path, &bytes, None).and_then(|()| {
                let found = Found {
                    rel: FILE_NAME.to_string(),
                    path,
                    linked: false,
                };
                scan(found)
            })
        }
    };
    match placed {
        Ok(f) => files.push(f),
        Err(e) => log.errors.push(e),
    }
}
