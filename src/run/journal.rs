//! The run's journal: what this run wrote into DIR before its manifest says
//! so. A run killed between writing a variant or delta and writing the
//! manifest leaves files that no manifest lists; the journal is what proves
//! precompress wrote them, so the next run can adopt them or remove them
//! instead of calling them foreign (and failing for ever on a delta whose
//! dictionary it is not given).
//!
//! One line per file, appended just before the file is renamed into place:
//! the file's blake3, its source's blake3 and its path (a JSON string). A
//! file whose content is not the one its line names (the kill came before
//! the rename) is not taken for ours. The journal is a dot-file beside the
//! lock (never an asset, never listed) and is removed once the manifest is
//! written. A shard has its own, so that shards run one after another in one
//! folder do not take each other's.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::run::shard::Shard;

/// The journal's file name in DIR (a shard's: `…-K-of-N`).
const NAME: &str = ".precompress-journal";

/// What one line says of a file this run wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The file's blake3 as written.
    pub blake3: String,
    /// The blake3 of the source it was made from.
    pub source: String,
}

/// The file name of the journal of a plain run (`None`) or of a shard.
fn name(shard: Option<Shard>) -> String {
    match shard {
        None => NAME.to_string(),
        Some(s) => format!("{NAME}-{}-of-{}", s.index, s.count),
    }
}

/// The journals a run reads: a shard its own; a plain run every one in
/// `root` (a plain run that commits accounts for whatever a killed shard left).
fn journals(root: &Path, shard: Option<Shard>) -> Vec<PathBuf> {
    if shard.is_some() {
        return vec![root.join(name(shard))];
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n == NAME || n.strip_prefix(NAME).is_some_and(|r| r.starts_with('-'))
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// Parses one line: `BLAKE3 SOURCE-BLAKE3 "path"`.
fn parse_line(line: &str) -> Option<(String, Entry)> {
    let mut parts = line.splitn(3, ' ');
    let blake3 = parts.next()?;
    let source = parts.next()?;
    let path: String = serde_json::from_str(parts.next()?).ok()?;
    let hex = |s: &str| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex(blake3) && hex(source)).then(|| {
        (
            path,
            Entry {
                blake3: blake3.to_string(),
                source: source.to_string(),
            },
        )
    })
}

/// What the journals of earlier, interrupted runs recorded, by path (a later
/// line for the same path wins), and the journal files read. Lines that do
/// not parse (a torn last line) are passed over.
pub(crate) fn read(root: &Path, shard: Option<Shard>) -> (HashMap<String, Entry>, Vec<PathBuf>) {
    let mut entries = HashMap::new();
    let files = journals(root, shard);
    for f in &files {
        let Ok(bytes) = crate::fsutil::read_regular(f, 256 << 20) else {
            continue;
        };
        for line in String::from_utf8_lossy(&bytes).lines() {
            if let Some((path, e)) = parse_line(line) {
                entries.insert(path, e);
            }
        }
    }
    (entries, files)
}

/// The journal this run appends to.
pub(crate) struct Journal {
    path: PathBuf,
    file: Mutex<std::fs::File>,
}

impl Journal {
    /// Opens (creates) the journal of this run in `root` for appending.
    pub fn open(root: &Path, shard: Option<Shard>) -> Result<Journal> {
        let path = root.join(name(shard));
        let file = std::fs::File::options()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|source| Error::Write {
                path: path.clone(),
                source,
            })?;
        Ok(Journal {
            path,
            file: Mutex::new(file),
        })
    }

    /// Records that `rel` is about to get the content `blake3`, made from a
    /// source of `source`. Called before the rename: a file whose line was
    /// not written is never put in place.
    pub fn record(&self, rel: &str, blake3: &str, source: &str) -> Result<()> {
        let line = format!(
            "{blake3} {source} {}\n",
            serde_json::to_string(rel).expect("a string")
        );
        // One write of one line to a file opened for appending: lines of
        // workers never interleave.
        self.file
            .lock()
            .unwrap()
            .write_all(line.as_bytes())
            .map_err(|source| Error::Write {
                path: self.path.clone(),
                source,
            })
    }

    /// The manifest is written: the journal and the earlier ones read
    /// (`read`) are no longer needed.
    pub fn finish(self, read: &[PathBuf]) -> Result<()> {
        drop(self.file);
        crate::fsutil::remove_if_exists(&self.path)?;
        for p in read {
            crate::fsutil::remove_if_exists(p)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_a_torn_or_foreign_line_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path(), None).unwrap();
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        j.record("assets/app 1.js.br", &a, &b).unwrap();
        j.record("x\n\"y\".js.gz", &b, &a).unwrap();
        j.record("assets/app 1.js.br", &b, &b).unwrap();
        drop(j);
        let p = dir.path().join(NAME);
        let mut text = std::fs::read_to_string(&p).unwrap();
        text.push_str("garbage\nffff ffff \"z.br\"\n");
        text.push_str(&format!("{a} {b} \"torn"));
        std::fs::write(&p, text).unwrap();
        let (entries, files) = read(dir.path(), None);
        assert_eq!(files, std::slice::from_ref(&p));
        assert_eq!(entries.len(), 2, "{entries:?}");
        assert_eq!(
            entries["assets/app 1.js.br"],
            Entry {
                blake3: b.clone(),
                source: b.clone()
            }
        );
        assert_eq!(entries["x\n\"y\".js.gz"].source, a);
    }

    #[test]
    fn a_shard_reads_its_own_journal_and_a_plain_run_every_one() {
        let dir = tempfile::tempdir().unwrap();
        let s = |k| Some(Shard::parse(&format!("{k}/2")).unwrap());
        let line = |n: &str| format!("{} {} \"{n}\"\n", "1".repeat(64), "2".repeat(64));
        std::fs::write(dir.path().join(name(s(1))), line("one.br")).unwrap();
        std::fs::write(dir.path().join(name(s(2))), line("two.br")).unwrap();
        std::fs::write(dir.path().join(".precompress-journalist"), line("no.br")).unwrap();
        let (one, _) = read(dir.path(), s(1));
        assert_eq!(one.keys().collect::<Vec<_>>(), ["one.br"]);
        let (all, files) = read(dir.path(), None);
        assert_eq!(all.len(), 2);
        assert_eq!(files.len(), 2);
        Journal::open(dir.path(), None)
            .unwrap()
            .finish(&files)
            .unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
