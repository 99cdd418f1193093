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
use crate::fsutil::write_atomic;
use crate::walk::{TMP_PREFIX, TMP_SUFFIX};

/// Default bound on the cache's size: 1 GiB.
pub const DEFAULT_MAX_SIZE: u64 = 1 << 30;

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

    fn entry(&self, source_blake3: &str, codec: Codec, settings: &str) -> (PathBuf, PathBuf) {
        self.entry_of(source_blake3, codec.token(), codec.suffix(), settings)
    }

    /// A delta's entry: the dictionary's hash is part of its settings.
    fn delta_entry(
        &self,
        source_blake3: &str,
        coding: DeltaCoding,
        settings: &str,
        dict_sha256: &[u8; 32],
    ) -> (PathBuf, PathBuf) {
        let settings = format!(
            "{settings}; dictionary {}",
            crate::dictionary::hex(dict_sha256)
        );
        self.entry_of(source_blake3, coding.token(), coding.token(), &settings)
    }

    fn entry_of(
        &self,
        source_blake3: &str,
        token: &str,
        suffix: &str,
        settings: &str,
    ) -> (PathBuf, PathBuf) {
        let mut h = blake3::Hasher::new();
        for part in [source_blake3, token, settings] {
            h.update(part.as_bytes());
            h.update(&[0]);
        }
        let key = h.finalize().to_hex();
        let sub = self.dir.join(&key[..2]);
        (
            sub.join(format!("{}.{suffix}", &key[..40])),
            sub.join(format!("{}.none", &key[..40])),
        )
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

    fn read_entry((out, none): (PathBuf, PathBuf)) -> Option<Hit> {
        if let Ok(bytes) = fs::read(&out) {
            touch(&out);
            return Some(Hit::Output(bytes));
        }
        if none.exists() {
            touch(&none);
            return Some(Hit::NotSmaller);
        }
        None
    }

    /// Whether an entry exists (without reading or verifying it).
    pub fn contains(&self, source_blake3: &str, codec: Codec, settings: &str) -> bool {
        let (out, none) = self.entry(source_blake3, codec, settings);
        out.exists() || none.exists()
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

    fn write_entry((out, none): (PathBuf, PathBuf), hit: &Hit) -> Result<()> {
        let dir = out.parent().expect("entry has a folder");
        fs::create_dir_all(dir).map_err(|source| Error::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        match hit {
            Hit::Output(bytes) => write_atomic(&out, bytes, None),
            Hit::NotSmaller => write_atomic(&none, b"", None),
        }
    }

    /// Evicts least recently used entries until the cache is within its bound,
    /// and removes temporary files older than an hour (left by killed runs).
    /// Returns the bytes removed.
    pub fn evict(&self) -> Result<u64> {
        let mut entries = Vec::new();
        let mut total = 0u64;
        let mut removed = 0u64;
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        for e in walkdir::WalkDir::new(&self.dir).min_depth(2).max_depth(2) {
            let Ok(e) = e else { continue };
            let Ok(md) = e.metadata() else { continue };
            if !md.is_file() {
                continue;
            }
            let mtime = md.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let name = e.file_name().to_string_lossy();
            if name.starts_with(TMP_PREFIX) && name.ends_with(TMP_SUFFIX) {
                if mtime < hour_ago && fs::remove_file(e.path()).is_ok() {
                    removed += md.len();
                }
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

fn touch(path: &Path) {
    if let Ok(f) = fs::File::options().write(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
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
    fn eviction_removes_least_recently_used_first() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::open(d.path(), 2500).unwrap();
        for (i, key) in ["k1", "k2", "k3"].iter().enumerate() {
            c.put(key, Codec::Brotli, "s", &Hit::Output(vec![i as u8; 1000]))
                .unwrap();
            let (p, _) = c.entry(key, Codec::Brotli, "s");
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
        assert_eq!(c.evict().unwrap(), 1000);
        assert!(
            c.get("k2", Codec::Brotli, "s").is_none(),
            "k2 was least recently used"
        );
        assert!(c.get("k1", Codec::Brotli, "s").is_some());
        assert!(c.get("k3", Codec::Brotli, "s").is_some());
    }
}
