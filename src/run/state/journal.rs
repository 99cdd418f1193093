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
//!
//! DIR is often filled by others (a bundler copies `public/` into it), so a
//! journal is trusted only when it is this folder's: its first line names
//! the folder's device and inode, which a file copied or planted there does
//! not know. It is opened only as a regular file of its own, never through a
//! symlink, never a FIFO (an open that would wait is refused at once). What
//! its lines may prove is narrowed again by the scan (`prior::recover`).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::model::shard::Shard;

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

/// The first line of a journal of `root`: the format, and the folder's device
/// and inode, so that a journal copied or planted into DIR is not taken for
/// this folder's.
fn header(root: &Path) -> std::io::Result<String> {
    let md = std::fs::metadata(root)?;
    #[cfg(unix)]
    let id = {
        use std::os::unix::fs::MetadataExt;
        format!(" {} {}", md.dev(), md.ino())
    };
    #[cfg(not(unix))]
    let id = {
        let _ = md;
        String::new()
    };
    Ok(format!("precompress-journal 2{id}\n"))
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

/// What the journals of earlier, interrupted runs recorded.
#[derive(Debug, Default)]
pub(crate) struct Recorded {
    /// By path (a later line for the same path wins).
    pub entries: HashMap<String, Entry>,
    /// The journals read, to remove once the manifest is written.
    pub files: Vec<PathBuf>,
    /// Journals passed over, and why.
    pub warnings: Vec<String>,
}

/// Reads what the journals of earlier, interrupted runs recorded. Lines that
/// do not parse (a torn last line) are passed over; so is a journal that is
/// not this folder's (its first line), and anything at a journal's name that
/// is not a regular file (said in `warnings`, and left alone).
pub(crate) fn read(root: &Path, shard: Option<Shard>) -> Recorded {
    let mut out = Recorded::default();
    let Ok(header) = header(root) else {
        return out;
    };
    for f in journals(root, shard) {
        let bytes = match crate::fsutil::read_own(&f, 256 << 20) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                out.warnings.push(format!(
                    "{}: not read ({e}): no file it names is taken for precompress's",
                    f.display()
                ));
                continue;
            }
        };
        let text = String::from_utf8_lossy(&bytes);
        match text.strip_prefix(header.as_str()) {
            Some(lines) => {
                for line in lines.lines() {
                    if let Some((path, e)) = parse_line(line) {
                        out.entries.insert(path, e);
                    }
                }
            }
            None => out.warnings.push(format!(
                "{}: not this folder's journal (copied in, or left by another version): no file it names is taken for precompress's",
                f.display()
            )),
        }
        out.files.push(f);
    }
    out
}

/// The journal this run appends to.
pub(crate) struct Journal {
    path: PathBuf,
    file: Mutex<std::fs::File>,
}

impl Journal {
    /// Opens (creates) the journal of this run in `root` for appending: only
    /// a regular file, never through a symlink or into a FIFO (an error naming
    /// it, for the user to remove). One that is not this folder's is started
    /// again; this folder's (a killed run's, read already) is appended to.
    pub fn open(root: &Path, shard: Option<Shard>) -> Result<Journal> {
        use std::io::{Read, Seek};
        let path = root.join(name(shard));
        let werr = |source| Error::Write {
            path: path.clone(),
            source,
        };
        let header = header(root).map_err(werr)?;
        let mut file = crate::fsutil::open_own_append(&path).map_err(werr)?;
        let mut first = vec![0u8; header.len()];
        let ours = file
            .read_exact(&mut first)
            .is_ok_and(|()| first == header.as_bytes());
        if !ours {
            file.set_len(0).map_err(werr)?;
            file.write_all(header.as_bytes()).map_err(werr)?;
        }
        // A killed run's torn last line is ended, or this run's first line
        // would be glued to it and lost.
        let end = file.seek(std::io::SeekFrom::End(-1)).map_err(werr)?;
        let mut last = [0u8];
        file.read_exact(&mut last).map_err(werr)?;
        if last[0] != b'\n' && end > 0 {
            file.write_all(b"\n").map_err(werr)?;
        }
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
        let got = read(dir.path(), None);
        assert_eq!(got.files, std::slice::from_ref(&p));
        assert!(got.warnings.is_empty(), "{:?}", got.warnings);
        assert_eq!(got.entries.len(), 2, "{:?}", got.entries);
        assert_eq!(
            got.entries["assets/app 1.js.br"],
            Entry {
                blake3: b.clone(),
                source: b.clone()
            }
        );
        assert_eq!(got.entries["x\n\"y\".js.gz"].source, a);
        // A killed run's journal is appended to, not started again.
        Journal::open(dir.path(), None)
            .unwrap()
            .record("c.js.gz", &a, &a)
            .unwrap();
        assert_eq!(read(dir.path(), None).entries.len(), 3);
    }

    #[test]
    fn a_shard_reads_its_own_journal_and_a_plain_run_every_one() {
        let dir = tempfile::tempdir().unwrap();
        let s = |k| Some(Shard::parse(&format!("{k}/2")).unwrap());
        let head = header(dir.path()).unwrap();
        let line = |n: &str| format!("{head}{} {} \"{n}\"\n", "1".repeat(64), "2".repeat(64));
        std::fs::write(dir.path().join(name(s(1))), line("one.br")).unwrap();
        std::fs::write(dir.path().join(name(s(2))), line("two.br")).unwrap();
        std::fs::write(dir.path().join(".precompress-journalist"), line("no.br")).unwrap();
        let one = read(dir.path(), s(1));
        assert_eq!(one.entries.keys().collect::<Vec<_>>(), ["one.br"]);
        let all = read(dir.path(), None);
        assert_eq!(all.entries.len(), 2);
        assert_eq!(all.files.len(), 2);
        Journal::open(dir.path(), None)
            .unwrap()
            .finish(&all.files)
            .unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// A journal copied or planted into DIR (a bundler copies `public/`
    /// whole) named a user's file with its hash, and the next run deleted it
    /// as its own. Only a journal whose first line names this folder counts.
    #[test]
    fn a_journal_that_is_not_this_folders_proves_nothing_and_is_started_again() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let line = format!("{} {} \"notes.txt.br\"\n", "1".repeat(64), "2".repeat(64));
        let p = dir.path().join(NAME);
        // No header (an earlier version's, or hand-written), another folder's.
        for text in [
            line.clone(),
            format!("{}{line}", header(other.path()).unwrap()),
        ] {
            std::fs::write(&p, &text).unwrap();
            let got = read(dir.path(), None);
            assert!(got.entries.is_empty(), "{:?}", got.entries);
            assert!(
                got.warnings[0].contains("not this folder's journal"),
                "{:?}",
                got.warnings
            );
            let j = Journal::open(dir.path(), None).unwrap();
            j.record("a.js.br", &"3".repeat(64), &"4".repeat(64))
                .unwrap();
            let got = read(dir.path(), None);
            assert_eq!(got.entries.keys().collect::<Vec<_>>(), ["a.js.br"]);
        }
    }

    /// `DIR/.precompress-journal` planted as a symlink: the run appended its
    /// lines to the link's target (a shell profile, say). As a FIFO, the
    /// open for appending waited for ever. Both are refused, naming the path,
    /// and neither is read.
    #[cfg(unix)]
    #[test]
    fn a_journal_that_is_a_symlink_or_a_fifo_is_never_written_read_or_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let profile = outside.path().join("profile");
        let head = header(dir.path()).unwrap();
        let planted = format!("{head}{} {} \"a.js.br\"\n", "1".repeat(64), "2".repeat(64));
        std::fs::write(&profile, &planted).unwrap();
        let p = dir.path().join(NAME);
        std::os::unix::fs::symlink(&profile, &p).unwrap();
        let got = read(dir.path(), None);
        assert!(got.entries.is_empty() && got.files.is_empty());
        assert!(got.warnings[0].contains("symlink"), "{:?}", got.warnings);
        let e = Journal::open(dir.path(), None).err().expect("refused");
        assert!(
            e.to_string().contains(NAME) && e.to_string().contains("symlink"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&profile).unwrap(), planted);

        std::fs::remove_file(&p).unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap()
            .success());
        let root = dir.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let opened = Journal::open(&root, None).err().map(|e| e.to_string());
            tx.send((read(&root, None), opened)).unwrap();
        });
        let (got, opened) = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the journal's FIFO was waited on");
        assert!(
            got.warnings[0].contains("not a regular file"),
            "{:?}",
            got.warnings
        );
        let e = opened.expect("refused");
        assert!(e.contains("not a regular file"), "{e}");
    }
}
