//! A content-addressed store of encoder outputs that survives clean CI
//! checkouts (`--cache-dir`, `PRECOMPRESS_CACHE_DIR`).
//!
//! An entry is keyed by blake3(source) + codec + the encoder settings, so a hit
//! is by construction the output precompress would produce. Entries are written
//! by temp-file-then-rename, so two processes sharing a cache never see a torn
//! entry, and every hit is decoded and compared with the source before use, so
//! a corrupt entry is ignored (and replaced), never copied into DIR. Size is
//! bounded with least-recently-used eviction by modification time, which a hit
//! refreshes.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::encode::delta::DeltaCoding;
use crate::encode::Codec;
use crate::error::{Error, Result};
use crate::fsutil::{own_dirs, own_dirs_exist, read_own, touch_own, write_atomic};
use crate::run::walk::{TMP_PREFIX, TMP_SUFFIX};

/// Where one (source, coding, settings) is stored, and the key that binds
/// an entry's bytes to it.
struct Entry {
    /// The cache folder and the entry's folder in it (two hex digits).
    dir: (PathBuf, String),
    out: PathBuf,
    none: PathBuf,
    key: [u8; 32],
}

/// An entry starts with this many bytes: a keyed blake3 of the rest, keyed by
/// the entry's own key. A file copied from another entry, cut short, or
/// replaced by other bytes (another encoder's valid output, an empty "not
/// smaller" marker) does not carry it and is a miss. It is no signature: who
/// knows this format and can write the folder can still forge an entry (see
/// docs/caching.md on trusting a cache).
const TAG_LEN: usize = 32;

/// What a "not smaller" marker's tag is computed over.
const NOT_SMALLER: &[u8] = b"not smaller";

impl Entry {
    fn tag(&self, bytes: &[u8]) -> [u8; 32] {
        *blake3::keyed_hash(&self.key, bytes).as_bytes()
    }
}

/// What the cache knows about one (source, codec, settings).
#[derive(Debug, PartialEq, Eq)]
pub enum Hit {
    /// The encoder's output (still to be verified by the caller).
    Output(Vec<u8>),
    /// The output was not smaller than the source.
    NotSmaller,
}

/// A cache folder.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    max_size: u64,
}

impl Cache {
    /// Opens (creating) the cache folder.
    pub fn open(dir: &Path, max_size: u64) -> Result<Cache> {
        fs::create_dir_all(dir).map_err(|source| Error::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        Ok(Cache {
            dir: dir.to_path_buf(),
            max_size,
        })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry(&self, source_blake3: &str, codec: Codec, settings: &str) -> Entry {
        self.entry_of(source_blake3, codec.token(), codec.suffix(), settings)
    }

    /// A delta's entry: the dictionary's hash is part of its settings.
    fn delta_entry(
        &self,
        source_blake3: &str,
        coding: DeltaCoding,
        settings: &str,
        dict_sha256: &[u8; 32],
    ) -> Entry {
        let settings = format!(
            "{settings}; dictionary {}",
            crate::model::dictionary::hex(dict_sha256)
        );
        self.entry_of(source_blake3, coding.token(), coding.token(), &settings)
    }

    fn entry_of(&self, source_blake3: &str, token: &str, suffix: &str, settings: &str) -> Entry {
        let mut h = blake3::Hasher::new();
        for part in [source_blake3, token, settings] {
            h.update(part.as_bytes());
            h.update(&[0]);
        }
        let key = h.finalize();
        let hex = key.to_hex();
        let sub = self.dir.join(&hex[..2]);
        Entry {
            dir: (self.dir.clone(), hex[..2].to_string()),
            out: sub.join(format!("{}.{suffix}", &hex[..40])),
            none: sub.join(format!("{}.none", &hex[..40])),
            key: *key.as_bytes(),
        }
    }

    /// Looks an entry up, refreshing its age on a hit.
    pub fn get(&self, source_blake3: &str, codec: Codec, settings: &str) -> Option<Hit> {
        Self::read_entry(self.entry(source_blake3, codec, settings))
    }

    /// [`Cache::get`] for a delta against the dictionary with this SHA-256.
    pub fn get_delta(
        &self,
        source_blake3: &str,
        coding: DeltaCoding,
        settings: &str,
        dict_sha256: &[u8; 32],
    ) -> Option<Hit> {
        Self::read_entry(self.delta_entry(source_blake3, coding, settings, dict_sha256))
    }

    fn read_entry(e: Entry) -> Option<Hit> {
        // Never through a link a restored cache may hold.
        if !own_dirs_exist(&e.dir.0, &[&e.dir.1]).unwrap_or(false) {
            return None;
        }
        if let Ok(mut bytes) = read_own(&e.out, u64::MAX) {
            if bytes.len() >= TAG_LEN && bytes[..TAG_LEN] == e.tag(&bytes[TAG_LEN..]) {
                touch_own(&e.out);
                bytes.drain(..TAG_LEN);
                return Some(Hit::Output(bytes));
            }
        }
        if read_own(&e.none, TAG_LEN as u64).is_ok_and(|b| b == e.tag(NOT_SMALLER)) {
            touch_own(&e.none);
            return Some(Hit::NotSmaller);
        }
        None
    }

    /// Whether an entry exists (without reading or verifying it).
    pub fn contains(&self, source_blake3: &str, codec: Codec, settings: &str) -> bool {
        let e = self.entry(source_blake3, codec, settings);
        e.out.exists() || e.none.exists()
    }

    /// Stores an entry; a failure only costs a future miss, so it is returned
    /// for reporting, never fatal.
    pub fn put(&self, source_blake3: &str, codec: Codec, settings: &str, hit: &Hit) -> Result<()> {
        Self::write_entry(self.entry(source_blake3, codec, settings), hit)
    }

    /// [`Cache::put`] for a delta against the dictionary with this SHA-256.
    pub fn put_delta(
        &self,
        source_blake3: &str,
        coding: DeltaCoding,
        settings: &str,
        dict_sha256: &[u8; 32],
        hit: &Hit,
    ) -> Result<()> {
        Self::write_entry(
            self.delta_entry(source_blake3, coding, settings, dict_sha256),
            hit,
        )
    }

    fn write_entry(e: Entry, hit: &Hit) -> Result<()> {
        own_dirs(&e.dir.0, &[&e.dir.1]).map_err(|source| Error::Write {
            path: e.dir.0.join(&e.dir.1),
            source,
        })?;
        match hit {
            Hit::Output(bytes) => {
                let mut tagged = Vec::with_capacity(TAG_LEN + bytes.len());
                tagged.extend_from_slice(&e.tag(bytes));
                tagged.extend_from_slice(bytes);
                write_atomic(&e.out, &tagged, None)
            }
            Hit::NotSmaller => write_atomic(&e.none, &e.tag(NOT_SMALLER), None),
        }
    }
    /// Evicts least recently used entries until the cache, with `reserved`
    /// bytes of the folder it does not evict (the release store's), is within
    /// its bound, and removes temporary files older than an hour (left by
    /// killed runs). Only files named as this cache names them, in its
    /// two-hex-digit folders, are ever removed: `--cache-dir` may name a
    /// folder that holds other files too. Returns the bytes removed.
    pub fn evict(&self, reserved: u64) -> Result<u64> {
        let mut entries = Vec::new();
        let mut total = reserved;
        let mut removed = 0u64;
        for e in walkdir::WalkDir::new(&self.dir).min_depth(2).max_depth(2) {
            let Ok(e) = e else { continue };
            let Ok(md) = e.metadata() else { continue };
            if !md.is_file() {
                continue;
            }
            let mtime = md.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let name = e.file_name().to_string_lossy();
            let folder = e.path().parent().and_then(Path::file_name);
            if !folder.is_some_and(|f| is_hex(&f.to_string_lossy(), 2)) {
                continue;
            }
            if let Some(freed) = remove_stale_temp(e.path(), &md) {
                removed += freed;
                continue;
            }
            if !is_entry_name(&name) {
                continue;
            }
            total += md.len();
            entries.push((mtime, md.len(), e.into_path()));
        }
        entries.sort();
        for (_, len, path) in entries {
            if total <= self.max_size {
                break;
            }
            // Another process may have evicted it already: that is fine.
            if fs::remove_file(&path).is_ok() {
                removed += len;
            }
            total -= len;
        }
        Ok(removed)
    }
}

/// How old a temporary file must be before a clean-up takes it for one a
/// killed run left: a live run renames its own within moments.
pub(crate) const STALE_TEMP_AGE: Duration = Duration::from_secs(3600);

/// For a temporary file's name (`.precompress-….tmp`) at `path`, with its
/// metadata `md` (a file's, not a link's): removes it when it is older than
/// [`STALE_TEMP_AGE`] and returns the bytes freed (0 for a younger one, or
/// one another process removed first). `None` for any other name. The
/// cache's clean-up and the release store's share it.
pub(crate) fn remove_stale_temp(path: &Path, md: &fs::Metadata) -> Option<u64> {
    let name = path.file_name()?.to_string_lossy();
    if !(name.starts_with(TMP_PREFIX) && name.ends_with(TMP_SUFFIX)) {
        return None;
    }
    let mtime = md.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    let old = SystemTime::now()
        .checked_sub(STALE_TEMP_AGE)
        .is_some_and(|t| mtime < t);
    Some(if old && fs::remove_file(path).is_ok() {
        md.len()
    } else {
        0
    })
}

/// `n` lower-case hex digits.
fn is_hex(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// An entry's file name: 40 hex digits, then a coding's suffix or `none`.
fn is_entry_name(name: &str) -> bool {
    name.split_once('.').is_some_and(|(key, kind)| {
        is_hex(key, 40)
            && (kind == "none"
                || Codec::ALL.iter().any(|c| c.suffix() == kind)
                || DeltaCoding::ALL.iter().any(|c| c.token() == kind))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_get_and_settings_are_part_of_the_key() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::open(d.path(), 1 << 20).unwrap();
        assert_eq!(c.get("aa", Codec::Brotli, "q11"), None);
        c.put("aa", Codec::Brotli, "q11", &Hit::Output(b"xyz".to_vec()))
            .unwrap();
        c.put("aa", Codec::Gzip, "l12", &Hit::NotSmaller).unwrap();
        assert_eq!(
            c.get("aa", Codec::Brotli, "q11"),
            Some(Hit::Output(b"xyz".to_vec()))
        );
        assert_eq!(c.get("aa", Codec::Brotli, "q10"), None);
        assert_eq!(c.get("aa", Codec::Zstd, "q11"), None);
        assert_eq!(c.get("aa", Codec::Gzip, "l12"), Some(Hit::NotSmaller));
    }

    #[test]
    fn replaced_copied_or_planted_entries_are_misses() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::open(d.path(), 1 << 20).unwrap();
        c.put(
            "aa",
            Codec::Brotli,
            "q11",
            &Hit::Output(b"genuine".to_vec()),
        )
        .unwrap();
        let e = c.entry("aa", Codec::Brotli, "q11");
        // Other bytes written over it (another encoder's valid output).
        fs::write(&e.out, b"a quality-1 stream").unwrap();
        assert_eq!(c.get("aa", Codec::Brotli, "q11"), None);
        // Another entry's file copied to this key.
        c.put("bb", Codec::Brotli, "q11", &Hit::Output(b"other".to_vec()))
            .unwrap();
        fs::copy(c.entry("bb", Codec::Brotli, "q11").out, &e.out).unwrap();
        assert_eq!(c.get("aa", Codec::Brotli, "q11"), None);
        // A planted "not smaller" marker.
        let z = c.entry("zz", Codec::Zstd, "l19");
        fs::create_dir_all(z.none.parent().unwrap()).unwrap();
        fs::write(&z.none, b"").unwrap();
        assert_eq!(c.get("zz", Codec::Zstd, "l19"), None);
        // Written by the cache itself, both are hits.
        c.put("zz", Codec::Zstd, "l19", &Hit::NotSmaller).unwrap();
        assert_eq!(c.get("zz", Codec::Zstd, "l19"), Some(Hit::NotSmaller));
    }

    /// The rule the release store shares ([`remove_stale_temp`]): a
    /// temporary file over an hour old is a killed run's; a young one, or
    /// any other name, stays.
    #[test]
    fn eviction_removes_a_killed_runs_temporary_files_after_an_hour() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::open(d.path(), 1 << 20).unwrap();
        fs::create_dir(d.path().join("ab")).unwrap();
        let plant = |name: &str, age: u64| {
            let p = d.path().join("ab").join(name);
            fs::write(&p, [0u8; 100]).unwrap();
            let t = SystemTime::now() - Duration::from_secs(age);
            let f = fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(t).unwrap();
            p
        };
        let old = plant(".precompress-1-2-3.tmp", 2 * 3600);
        let young = plant(".precompress-4-5-6.tmp", 60);
        let other = plant("notes.tmp", 2 * 3600);
        assert_eq!(c.evict(0).unwrap(), 100);
        assert!(!old.exists() && young.exists() && other.exists());
    }

    #[test]
    fn eviction_removes_least_recently_used_first() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::open(d.path(), 2500).unwrap();
        for (i, key) in ["k1", "k2", "k3"].iter().enumerate() {
            c.put(key, Codec::Brotli, "s", &Hit::Output(vec![i as u8; 1000]))
                .unwrap();
            let p = c.entry(key, Codec::Brotli, "s").out;
            let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + i as u64 * 10);
            fs::File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
        // A hit on the oldest makes it the newest.
        assert!(c.get("k1", Codec::Brotli, "s").is_some());
        assert_eq!(c.evict(0).unwrap(), 1000 + TAG_LEN as u64);
        assert!(
            c.get("k2", Codec::Brotli, "s").is_none(),
            "k2 was least recently used"
        );
        assert!(c.get("k1", Codec::Brotli, "s").is_some());
        assert!(c.get("k3", Codec::Brotli, "s").is_some());
    }
}
