//! The manifest a server reads to pick a variant and set its headers. Written
//! deterministically (sorted keys, no run timestamp) and atomically, so a server
//! that re-reads it never sees half a file. Schema: `docs/manifest.md` and
//! `docs/manifest.schema.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fsutil::write_atomic;
use crate::model::skip::SkipReason;

/// The schema version this crate writes and reads.
pub const VERSION: u32 = 1;

/// The largest manifest read: about 2 million assets.
pub const MAX_SIZE: u64 = 1 << 30;

/// Default file name, inside DIR.
pub const DEFAULT_NAME: &str = "precompress-manifest.json";

/// The whole manifest. Readers ignore keys they do not know, so a field added
/// to version 1 (as `deltas` and `use_as_dictionary` were) keeps every reader
/// working; a change that older readers would misread bumps [`VERSION`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The URL path DIR is served at, when not the origin's root: an asset's
    /// URL is the base followed by its key (`/app/` + `assets/a.js`). Servers
    /// and server configurations made from the manifest take it from here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Every asset under DIR, by path relative to DIR with `/` separators.
    pub files: BTreeMap<String, Asset>,
    /// `precompress <version>` that wrote it.
    pub generator: String,
    /// Per coding token: the settings that decide its bytes. A later run redoes a
    /// coding whose settings changed.
    pub settings: BTreeMap<String, String>,
    /// The shared dictionary of this release (`run::dictionaries::shared`), a key of
    /// `files`: servers send HTML responses with a `Link` to it, so a browser
    /// fetches it when idle. Absent when none was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_dictionary: Option<String>,
    /// The documents dictionary of this release (`run::dictionaries::documents`), a key of
    /// `files`: for the HTML pages, announced with the same `Link`. Absent
    /// when none was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documents_dictionary: Option<String>,
    /// Schema version, [`VERSION`].
    pub version: u32,
}

/// One source file and its representations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asset {
    /// blake3 of the content, lower-case hex.
    pub blake3: String,
    /// How long a client may keep it, decided by the run from its name: every
    /// server sends [`Caching::header`] instead of judging the name itself.
    /// A manifest written before the field existed reads as `revalidate`.
    #[serde(default)]
    pub cache: Caching,
    /// `Content-Type` to send with every representation.
    pub content_type: String,
    /// RFC 9842 deltas against earlier versions of this asset (`--dictionary-from`),
    /// by dictionary then coding. Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deltas: Vec<Delta>,
    /// Compressed variants written beside it, smallest first.
    pub encodings: Vec<Variant>,
    /// Strong ETag of the identity representation, quotes included.
    pub etag: String,
    /// sha256 of the content, standard base64 (for `integrity="sha256-..."`).
    pub sha256: String,
    /// Size in bytes.
    pub size: u64,
    /// Per coding token, why no variant exists.
    pub skipped: BTreeMap<String, SkipReason>,
    /// Deltas that were made and not kept (not smaller than the best variant),
    /// so an unchanged asset does not make them again. Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_deltas: Vec<SkippedDelta>,
    /// The `Use-As-Dictionary` value to send with every representation of this
    /// asset, so browsers keep it for deltas of its next versions. Absent when
    /// the asset is not a dictionary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_as_dictionary: Option<String>,
}

/// `Cache-Control` for names that carry a content hash.
pub const CACHE_IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `Cache-Control` for every other name: store, but revalidate before each use.
pub const CACHE_REVALIDATE: &str = "no-cache";

/// `Cache-Control` for a page ([`Caching::Page`]) answering a navigation of a
/// browser that keeps dictionaries: stored by the browser alone (`private`:
/// no shared cache may store it, so no CDN serves it stale), stale at once
/// (`max-age=0`: Chromium revalidates every navigation before it shows the
/// page), and kept [`PAGE_WINDOW`] seconds after that, the window in which
/// Chromium keeps it as the dictionary of the page's next version.
pub const CACHE_PAGE_KEPT: &str = "private, max-age=0, stale-while-revalidate=2592000";

/// How long a page answered with [`CACHE_PAGE_KEPT`] is kept as a dictionary:
/// 30 days, so a visitor who comes back within a month gets the page as a
/// delta of the copy they hold.
pub const PAGE_WINDOW: u64 = 2_592_000;

/// What a response of a [`Caching::Page`] adds to `Vary`: a navigation's
/// answer (kept stale for [`PAGE_WINDOW`]) must never answer a `fetch()` or a
/// prefetch of the same URL from the browser's cache, which would use it
/// stale while it revalidates.
pub const PAGE_VARY: &str = "Sec-Fetch-Dest";

/// An asset's cache policy, as the manifest writes it (`"immutable"`,
/// `"revalidate"`, `"page"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Caching {
    /// The name carries a content hash, so its bytes can never change under it:
    /// kept a year without asking.
    Immutable,
    /// Stored, but revalidated by ETag before each use.
    #[default]
    Revalidate,
    /// An HTML page marked as the dictionary of its own next version: as
    /// [`Caching::Revalidate`], except for a navigation of a browser that
    /// keeps dictionaries (`Sec-Fetch-Dest: document` and `dcb` or `dcz`
    /// accepted), which gets [`CACHE_PAGE_KEPT`]; every response varies on
    /// [`PAGE_VARY`] too. Never stale: the browser revalidates each
    /// navigation, and no other request or cache may use the kept copy.
    Page,
}

impl Caching {
    /// The run's one rule: immutable when the name carries a content hash
    /// ([`is_fingerprinted`](crate::model::dictionary::is_fingerprinted)), a
    /// page when it is `marked` (an HTML page is marked only as its own next
    /// version's dictionary,
    /// [`page_use_as_dictionary`](crate::model::dictionary::page_use_as_dictionary)),
    /// else revalidated.
    pub fn of(rel: &str, marked: bool) -> Self {
        if crate::model::dictionary::is_fingerprinted(rel) {
            Caching::Immutable
        } else if marked && crate::model::dictionary::is_page(rel) {
            Caching::Page
        } else {
            Caching::Revalidate
        }
    }

    /// The `Cache-Control` value a representation of the asset is sent with
    /// when the request is not a navigation that keeps a page
    /// ([`Caching::header_for`]).
    pub fn header(self) -> &'static str {
        self.header_for(false)
    }

    /// The `Cache-Control` value for a request that is (`keeps_page`) or is
    /// not a navigation of a browser that keeps dictionaries.
    pub fn header_for(self, keeps_page: bool) -> &'static str {
        match self {
            Caching::Immutable => CACHE_IMMUTABLE,
            Caching::Page if keeps_page => CACHE_PAGE_KEPT,
            Caching::Revalidate | Caching::Page => CACHE_REVALIDATE,
        }
    }
}

/// One RFC 9842 delta on disk: the asset compressed against an earlier version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// blake3 of the delta's bytes, hex.
    pub blake3: String,
    /// `dcb` or `dcz`.
    pub coding: String,
    /// The dictionary's SHA-256 exactly as a client sends it in
    /// `Available-Dictionary`: `:` base64 `:`.
    pub dictionary: String,
    /// Where the dictionary was in the earlier release (relative to that folder).
    pub dictionary_path: String,
    /// Strong ETag of this representation, quotes included.
    pub etag: String,
    /// Path relative to DIR (`ASSET.HEX.dcb`, HEX the dictionary's SHA-256).
    pub path: String,
    /// Size in bytes (the `Content-Length` to send).
    pub size: u64,
}

/// A delta that was made and not kept.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SkippedDelta {
    /// `dcb` or `dcz`.
    pub coding: String,
    /// As in [`Delta::dictionary`].
    pub dictionary: String,
    /// Why.
    pub reason: SkipReason,
}

/// One compressed representation on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    /// blake3 of the compressed bytes, hex.
    pub blake3: String,
    /// HTTP content-coding token: `br`, `zstd` or `gzip`.
    pub coding: String,
    /// Strong ETag of this representation, quotes included.
    pub etag: String,
    /// Path relative to DIR.
    pub path: String,
    /// Size in bytes (the `Content-Length` to send).
    pub size: u64,
}

/// A strong ETag from a blake3 hex digest: 128 bits is plenty to tell
/// representations apart, and keeps the header short.
pub fn etag(blake3_hex: &str) -> String {
    format!("\"{}\"", &blake3_hex[..32.min(blake3_hex.len())])
}

impl Manifest {
    /// An empty manifest stamped with this crate's version.
    pub fn new(settings: BTreeMap<String, String>) -> Self {
        Manifest {
            base: None,
            shared_dictionary: None,
            documents_dictionary: None,
            version: VERSION,
            generator: format!("precompress {}", env!("CARGO_PKG_VERSION")),
            settings,
            files: BTreeMap::new(),
        }
    }

    /// Drops the settings of a delta coding no asset has a delta (or a
    /// skipped one) of: a run that had earlier releases (the release store)
    /// but nothing changed writes the manifest a run without them writes.
    pub fn prune_delta_settings(&mut self) {
        for c in crate::model::coding::DeltaCoding::ALL {
            let used = self.files.values().any(|a| {
                a.deltas.iter().any(|d| d.coding == c.token())
                    || a.skipped_deltas.iter().any(|d| d.coding == c.token())
            });
            if !used {
                self.settings.remove(c.token());
            }
        }
    }

    /// Serializes with sorted keys and a final newline. Every struct here
    /// declares its fields in sorted order, so they are written straight from
    /// the structs (going through `Value` to sort them cost a tree of
    /// allocations per asset); a test checks the order.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("manifest is plain data");
        s.push('\n');
        s
    }

    /// Parses and checks the version.
    pub fn from_json(path: &Path, text: &str) -> Result<Manifest> {
        let bad = |detail: String| Error::Manifest {
            path: path.to_path_buf(),
            detail,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        match value.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v == VERSION as u64 => {}
            Some(v) => {
                return Err(bad(format!(
                    "version {v}; this precompress reads version {VERSION}"
                )))
            }
            None => {
                return Err(bad(
                    "no \"version\" field: not a precompress manifest".into()
                ))
            }
        }
        serde_json::from_value(value).map_err(|e| bad(e.to_string()))
    }

    /// Reads `path`: a regular file of at most [`MAX_SIZE`] bytes (a FIFO or
    /// a link to a device there is refused, never waited on or read forever).
    pub fn read(path: &Path) -> Result<Manifest> {
        let rerr = |source| Error::Read {
            path: path.to_path_buf(),
            source,
        };
        let bytes = crate::fsutil::read_regular(path, MAX_SIZE).map_err(rerr)?;
        let text = String::from_utf8(bytes).map_err(|_| Error::Manifest {
            path: path.to_path_buf(),
            detail: "not UTF-8".into(),
        })?;
        Self::from_json(path, &text)
    }

    /// Writes `path` atomically (temporary file, then rename).
    pub fn write(&self, path: &Path) -> Result<()> {
        write_atomic(path, self.to_json().as_bytes(), None)
    }
}

impl Asset {
    /// What a client that accepts every coding and holds no dictionary
    /// downloads: the smallest variant's size, else the file's own.
    pub fn best_size(&self) -> u64 {
        self.encodings
            .iter()
            .map(|v| v.size)
            .min()
            .unwrap_or(self.size)
            .min(self.size)
    }

    /// Puts what the run left an asset with in the manifest's order and drops
    /// what is not worth keeping: variants smallest first (ties in
    /// `Codec::ALL` order); a delta is kept only when smaller than what a
    /// client without the dictionary gets (the best variant or the file
    /// itself), the others recorded in `skipped_deltas`; deltas by dictionary
    /// then coding. Returns the paths of the deltas dropped (to remove). The
    /// run and `precompress merge` both end with it, so a merge of shards
    /// writes what one run would have.
    pub fn settle(&mut self) -> Vec<String> {
        let rank = |token: &str| {
            crate::model::coding::Codec::ALL
                .iter()
                .position(|c| c.token() == token)
                .unwrap_or(usize::MAX)
        };
        self.encodings.sort_by(|a, b| {
            a.size
                .cmp(&b.size)
                .then_with(|| rank(&a.coding).cmp(&rank(&b.coding)))
        });
        let best = self.encodings.first().map_or(self.size, |v| v.size);
        let mut remove = Vec::new();
        let (mut deltas, too_big): (Vec<Delta>, Vec<Delta>) = std::mem::take(&mut self.deltas)
            .into_iter()
            .partition(|d| d.size < best);
        for d in too_big {
            remove.push(d.path);
            self.skipped_deltas.push(SkippedDelta {
                coding: d.coding,
                dictionary: d.dictionary,
                reason: SkipReason::NotSmaller,
            });
        }
        deltas.sort_by(|a, b| (&a.dictionary, &a.coding).cmp(&(&b.dictionary, &b.coding)));
        self.deltas = deltas;
        self.skipped_deltas.sort();
        self.skipped_deltas.dedup();
        remove
    }
}

/// Whether a run may write its manifest at `path`: when nothing is there, or
/// a precompress manifest is (of any version: its `generator` says
/// precompress wrote it). Anything else, a page or an earlier release's
/// asset that `--manifest` names by mistake, is never replaced; the reason
/// says what is there. A corrupt manifest at the default name is rebuilt by
/// the run, which never gets here for it.
pub fn may_replace(path: &Path) -> std::result::Result<(), String> {
    let md = match std::fs::symlink_metadata(path) {
        // Nothing there (a parent that is a file is the write's to report).
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(())
        }
        Err(e) => return Err(format!("cannot be inspected: {e}")),
        Ok(md) => md,
    };
    if md.is_dir() {
        return Err("is a folder; name the manifest file".into());
    }
    let refuse = |what: &str| {
        Err(format!(
            "{what}, not a precompress manifest; precompress never replaces a file it did not write: name a new file or remove it"
        ))
    };
    if !md.is_file() {
        return refuse("exists and is not a regular file");
    }
    let ours = crate::fsutil::read_regular(path, MAX_SIZE)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| {
            v.get("generator")
                .and_then(|g| g.as_str())
                .map(|g| g.starts_with("precompress "))
        })
        .unwrap_or(false);
    if ours {
        Ok(())
    } else {
        refuse("exists")
    }
}

/// Where the manifest goes: `--manifest`, else `DIR/precompress-manifest.json`.
pub fn default_path(root: &Path) -> PathBuf {
    root.join(DEFAULT_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        let mut m = Manifest::new(BTreeMap::from([("br".into(), "q11".into())]));
        m.files.insert(
            "b.js".into(),
            Asset {
                size: 10,
                blake3: "ab".repeat(32),
                cache: Caching::Revalidate,
                sha256: "x".into(),
                content_type: "text/javascript".into(),
                deltas: vec![Delta {
                    blake3: "ef".repeat(32),
                    coding: "dcz".into(),
                    dictionary: format!(":{}=:", "A".repeat(43)),
                    dictionary_path: "b-D8fKq1nN.js".into(),
                    etag: etag(&"ef".repeat(32)),
                    path: format!("b.js.{}.dcz", "0".repeat(64)),
                    size: 3,
                }],
                etag: etag(&"ab".repeat(32)),
                encodings: vec![Variant {
                    coding: "br".into(),
                    path: "b.js.br".into(),
                    size: 5,
                    blake3: "cd".repeat(32),
                    etag: etag(&"cd".repeat(32)),
                }],
                skipped: BTreeMap::from([("gzip".into(), SkipReason::NotSmaller)]),
                skipped_deltas: vec![SkippedDelta {
                    coding: "dcb".into(),
                    dictionary: format!(":{}=:", "A".repeat(43)),
                    reason: SkipReason::NotSmaller,
                }],
                use_as_dictionary: Some("match=\"/b-*.js\"".into()),
            },
        );
        m
    }

    #[test]
    fn fields_are_declared_in_sorted_order_so_keys_are_written_sorted() {
        // `Value`'s maps are sorted: the same text means every key is in order.
        let m = sample();
        let via_value = serde_json::to_string_pretty(&serde_json::to_value(&m).unwrap()).unwrap();
        assert_eq!(m.to_json(), via_value + "\n");
    }

    #[test]
    fn round_trips_and_sorts_keys() {
        let m = sample();
        let json = m.to_json();
        assert_eq!(Manifest::from_json(Path::new("m"), &json).unwrap(), m);
        // The asset's own keys sit at six spaces of indentation.
        let keys: Vec<&str> = json
            .lines()
            .filter_map(|l| l.strip_prefix("      \""))
            .map(|l| l.split('"').next().unwrap())
            .collect();
        assert_eq!(
            keys,
            [
                "blake3",
                "cache",
                "content_type",
                "deltas",
                "encodings",
                "etag",
                "sha256",
                "size",
                "skipped",
                "skipped_deltas",
                "use_as_dictionary"
            ],
            "{json}"
        );
        assert!(json.contains("\"not_smaller\""));
        assert_eq!(etag(&"ab".repeat(32)).len(), 34);
    }

    #[test]
    fn rejects_foreign_versions_and_garbage() {
        let e =
            Manifest::from_json(Path::new("m.json"), r#"{"version": 9, "files": {}}"#).unwrap_err();
        assert!(
            e.to_string().contains("m.json") && e.to_string().contains("version 9"),
            "{e}"
        );
        assert!(Manifest::from_json(Path::new("m"), "{not json").is_err());
        assert!(Manifest::from_json(Path::new("m"), r#"{"files": {}}"#)
            .unwrap_err()
            .to_string()
            .contains("not a precompress manifest"));
    }
}
