//! `--dictionary-from https://…`: each site's release taken into a folder of
//! its own under the temporary folder before the run or the check reads it
//! (the library's `probe::previous`), removed when done. A site that cannot
//! be used is a warning naming it and why; the build goes on without it.

use std::path::{Path, PathBuf};

use precompressor::probe::previous::{take_for_build, Bounds};

/// Whether a `--dictionary-from` value names a site, not a folder.
pub fn is_site(given: &Path) -> bool {
    given
        .to_str()
        .is_some_and(|s| s.starts_with("http://") || s.starts_with("https://"))
}

/// The folders the sites' releases were taken into, removed on drop.
#[derive(Default)]
pub struct Taken {
    /// Those that hold a release (at least one file taken): a site that
    /// gave nothing is no earlier release, so the run keeps the deltas
    /// still right instead of calling them stale.
    pub folders: Vec<PathBuf>,
    made: Vec<PathBuf>,
}

impl Drop for Taken {
    fn drop(&mut self) {
        for f in &self.made {
            let _ = std::fs::remove_dir_all(f);
        }
    }
}

/// Splits `given` into the folders it names and the sites, whose releases
/// (what pairs with DIR's files) are taken into temporary folders. What
/// happened is said on stderr, one line per site, unless `quiet` and fine.
pub fn take_sites(given: &[PathBuf], dir: &Path, quiet: bool) -> (Vec<PathBuf>, Taken) {
    let mut folders = Vec::new();
    let mut taken = Taken::default();
    for (i, g) in given.iter().enumerate() {
        if !is_site(g) {
            folders.push(g.clone());
            continue;
        }
        let site = g.to_string_lossy();
        let into =
            std::env::temp_dir().join(format!("precompress-previous-{}-{i}", std::process::id()));
        let _ = std::fs::remove_dir_all(&into);
        if let Err(e) = std::fs::create_dir_all(&into) {
            eprintln!(
                "precompress: warning: --dictionary-from: cannot make {}: {e}; no deltas against the live site",
                into.display()
            );
            continue;
        }
        taken.made.push(into.clone());
        match take_for_build(&site, dir, &into, &Bounds::default()) {
            Ok(t) => {
                if t.fetched > 0 {
                    taken.folders.push(into.clone());
                }
                if !quiet || !t.notes.is_empty() {
                    eprintln!(
                        "precompress: the previous release at {}: {} of the {} dictionaries it lists pair with this build, {} taken ({} bytes)",
                        t.site, t.wanted, t.listed, t.fetched, t.bytes
                    );
                }
                for n in &t.notes {
                    eprintln!("precompress: warning: {}: {n}", t.site);
                }
            }
            Err(e) => eprintln!(
                "precompress: warning: {e}; this build gets no deltas against it (every other variant is written)"
            ),
        }
    }
    (folders, taken)
}
