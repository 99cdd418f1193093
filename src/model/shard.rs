//! The vocabulary of `--shard K/N`: the shard itself, the keys that name one
//! unit of work (a source, a coding, a dictionary) and the file a shard
//! writes beside the manifest, sealed (`Partial`). The run splits by these
//! (`run::shard`) and `precompress merge` checks and unions them
//! (`merge`); both read the same names and digests from here.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::manifest::Manifest;

/// The most shards a run can be split into.
pub const MAX_SHARDS: u32 = 256;

/// Shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Parses `K/N` (1 ≤ K ≤ N ≤ [`MAX_SHARDS`]).
    pub fn parse(s: &str) -> std::result::Result<Shard, String> {
        let bad = || {
            format!("invalid shard {s:?} (expected K/N with 1 <= K <= N <= {MAX_SHARDS}, e.g. 2/4)")
        };
        let (k, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count || count > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The key of a group: the asset's path, the coding and, for a delta, the
/// dictionary's SHA-256 in hex.
pub fn group_key(rel: &str, coding: &str, dictionary: Option<&[u8; 32]>) -> String {
    let mut k = format!("{rel}\t{coding}");
    if let Some(d) = dictionary {
        k.push('\t');
        for b in d {
            k.push_str(&format!("{b:02x}"));
        }
    }
    k
}

/// The group key of a variant or delta path (`app.js.br`, `app.js.HEX.dcz`),
/// for telling which shard's a file on disk is.
pub fn group_of_path(path: &str) -> Option<String> {
    if let Some((src, coding)) = crate::model::names::delta_source(path) {
        let hex = &path[src.len() + 1..src.len() + 65];
        return Some(format!("{src}\t{}\t{hex}", coding.token()));
    }
    let (src, codec) = crate::model::content::variant_source(path)?;
    Some(group_key(src, codec.token(), None))
}

/// A digest of a set of group keys (sorted, each once): equal in every shard
/// of one split, and equal to the digest of the union of what they owned.
pub fn digest_keys<'a>(keys: impl IntoIterator<Item = &'a String>) -> String {
    let set: BTreeSet<&String> = keys.into_iter().collect();
    let mut h = blake3::Hasher::new();
    for k in set {
        h.update(k.as_bytes());
        h.update(b"\n");
    }
    h.finalize().to_hex().to_string()
}

/// What one shard writes beside where the manifest goes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Partial {
    /// The shard, 1-based.
    pub shard: u32,
    /// How many shards.
    pub of: u32,
    /// Digest of every group key of the whole run (see [`digest_keys`]).
    pub jobs: String,
    /// Digest of the tree: every asset's path and blake3, and the settings.
    pub tree: String,
    /// The groups this shard ran.
    pub owned: Vec<String>,
    /// Per-file errors the shard had; a partial with errors cannot be merged.
    pub errors: u64,
    /// The shard's manifest: every asset, with what this shard's jobs wrote
    /// (and what the previous run left), deltas not yet weighed against the
    /// other shards' variants.
    pub manifest: Manifest,
    /// blake3 of the partial as written with an empty seal: a partial edited
    /// afterwards (a reason, a coding, an ETag) is refused by `merge`. Like
    /// the cache's keyed hashes this catches edits, not a forger who knows
    /// the format; what can be derived from the files is checked as well.
    #[serde(default)]
    pub seal: String,
}

/// The tree digest a shard records: assets by path with their blake3, and the settings.
pub fn tree_digest<'a>(
    assets: impl IntoIterator<Item = (&'a str, &'a str)>,
    settings: &BTreeMap<String, String>,
) -> String {
    let mut sorted: Vec<(&str, &str)> = assets.into_iter().collect();
    sorted.sort();
    let mut h = blake3::Hasher::new();
    for (rel, b3) in sorted {
        h.update(rel.as_bytes());
        h.update(b"\t");
        h.update(b3.as_bytes());
        h.update(b"\n");
    }
    for (k, v) in settings {
        h.update(format!("{k}={v}\n").as_bytes());
    }
    h.finalize().to_hex().to_string()
}

/// `precompress-manifest.shard-2-of-4.json` beside `precompress-manifest.json`:
/// N of them can sit side by side when the shards' outputs come back.
pub fn partial_path(manifest: &Path, shard: Shard) -> PathBuf {
    let stem = manifest
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    manifest.with_file_name(format!(
        "{stem}.shard-{}-of-{}.json",
        shard.index, shard.count
    ))
}

/// The shard a file name names, if it is a partial manifest of `manifest`.
pub fn partial_of(manifest: &Path, name: &str) -> Option<Shard> {
    let stem = manifest.file_stem()?.to_str()?;
    let rest = name.strip_prefix(stem)?.strip_prefix(".shard-")?;
    let rest = rest.strip_suffix(".json")?;
    let (k, n) = rest.split_once("-of-")?;
    Shard::parse(&format!("{k}/{n}")).ok()
}

impl Partial {
    /// The seal of this partial's content (its own `seal` left out).
    pub(crate) fn sealed(&self) -> String {
        let unsealed = Partial {
            seal: String::new(),
            ..self.clone()
        };
        let json = serde_json::to_vec(&unsealed).expect("plain data");
        blake3::hash(&json).to_hex().to_string()
    }

    /// Writes it atomically, sealed.
    pub fn write(&self, path: &Path) -> Result<()> {
        let sealed = Partial {
            seal: self.sealed(),
            ..self.clone()
        };
        let mut s = serde_json::to_string_pretty(&sealed).expect("plain data");
        s.push('\n');
        crate::fsutil::write_atomic(path, s.as_bytes(), None)
    }

    #[cfg_attr(not(feature = "compress"), allow(dead_code))]
    pub(crate) fn read(path: &Path) -> Result<Partial> {
        let bytes = crate::fsutil::read_regular(path, crate::model::manifest::MAX_SIZE).map_err(
            |source| Error::Read {
                path: path.to_path_buf(),
                source,
            },
        )?;
        serde_json::from_slice(&bytes).map_err(|e| Error::Manifest {
            path: path.to_path_buf(),
            detail: format!("not a shard's partial manifest: {e}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_nonsense() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(
            Shard::parse(" 1 / 1 ").map(|s| s.to_string()),
            Ok("1/1".into())
        );
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", "1/257", "-1/2", ""] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(e.contains("K/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_union_of_what_shards_owned_has_the_digest_of_the_whole() {
        let all: Vec<String> = (0..10).map(|i| format!("k{i}")).collect();
        let (a, b): (Vec<&String>, Vec<&String>) =
            all.iter().partition(|k| k.ends_with(['1', '3', '5']));
        assert_eq!(digest_keys(a.into_iter().chain(b)), digest_keys(&all));
        assert_ne!(digest_keys(&all[1..]), digest_keys(&all));
    }

    #[test]
    fn partial_names_sit_side_by_side_and_are_recognised() {
        let m = Path::new("dist/precompress-manifest.json");
        let p = partial_path(m, Shard { index: 3, count: 4 });
        assert_eq!(p, Path::new("dist/precompress-manifest.shard-3-of-4.json"));
        assert_eq!(
            partial_of(m, "precompress-manifest.shard-3-of-4.json"),
            Some(Shard { index: 3, count: 4 })
        );
        for not in [
            "precompress-manifest.json",
            "precompress-manifest.shard-5-of-4.json",
            "other.shard-1-of-2.json",
            "precompress-manifest.shard-1-of-2.json.br",
        ] {
            assert_eq!(partial_of(m, not), None, "{not}");
        }
    }
}
