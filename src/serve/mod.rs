//! What a web server needs to send precompressed assets: load the manifest once,
//! then for each request [`Index::select`] picks the representation and gives its
//! headers. Negotiation follows RFC 9110 §12.5.3 ([`negotiate`]); paths are checked
//! by [`path`]. The rest of what a server decides is [`route`] (which file a
//! request names) and [`answer`] (what is sent for it: conditionals, ranges,
//! a stale file sent as it is), pure functions over a lookup of the files.
//! None of this needs an async runtime, so any server (hyper, axum, actix, a
//! CDN worker compiled to WASM) can embed it; `precompress serve` ([`http`],
//! feature `serve`) is one such server, which only reads and writes.
//!
//! ```no_run
//! use precompressor::serve::{Index, Selection};
//!
//! let index = Index::load("dist".as_ref(), None)?;
//! match index.select("assets/app.js", Some("gzip, deflate, br, zstd")) {
//!     Selection::Found(sel) => {
//!         // Send the file `dist/{sel.representation.path}` with these headers.
//!         for (name, value) in &sel.headers {
//!             println!("{name}: {value}");
//!         }
//!     }
//!     Selection::NotAcceptable { headers } => { /* 406 with `headers` */ }
//!     Selection::Deferred { headers } => { /* 204 with `headers` */ }
//!     Selection::NotInManifest => { /* serve the file as is, or 404 */ }
//! }
//! # Ok::<(), precompressor::Error>(())
//! ```
//!
//! Headers, and why:
//! - `Content-Encoding` is the HTTP token (`zstd`, never the `.zst` suffix).
//! - `ETag` is the representation's own strong tag from its content hash: a
//!   cache must never answer a gzip request with a revalidated brotli body.
//! - `Vary: Accept-Encoding` is on every response of an asset that has variants,
//!   the identity one included, or a shared cache could hand the uncompressed
//!   copy to everyone (Caddy 2.6 omits it there); `Vary: Accept-Encoding,
//!   Available-Dictionary` on every response of an asset that has deltas.
//! - Deltas (RFC 9842): a client that accepts `dcb` or `dcz` by name and sends
//!   an `Available-Dictionary` for which the manifest lists a delta gets the
//!   smaller acceptable one ([`Index::select_with_dictionary`]); a malformed or
//!   unknown dictionary is negotiated as if absent, never an error.
//! - `Use-As-Dictionary` on every response of an asset the manifest marks as
//!   a dictionary, so the browser keeps it for the next release's deltas.
//! - The code dictionary, asked by Chromium (`Sec-CH-UA`) holding no
//!   dictionary, is a `204` with `Cache-Control: no-store` when the manifest
//!   lists deltas for it ([`Selection::Deferred`]): an idle fetch that came
//!   before the chunk it is a delta against was stored would otherwise pay
//!   for the whole file; refused, the browser asks again on its next page
//!   load. Any other client (a live-site fetch, curl) gets the file.
//! - `Cache-Control`: what the manifest's `cache` says, decided once by the run
//!   ([`Caching`]): `public, max-age=31536000,
//!   immutable` when the file name carries a content hash, since its bytes can
//!   never change under that name; `no-cache` otherwise (always revalidate by
//!   ETag), and for every file the manifest does not list. A page marked as
//!   its next version's dictionary ([`Caching::Page`]) is kept by a Chromium
//!   navigation ([`keeps_page`], [`CACHE_PAGE_KEPT`]) and revalidated by every
//!   other request, `Sec-Fetch-Dest` in its `Vary` ([`vary`]).

pub mod answer;
pub mod negotiate;
pub mod path;
pub mod route;

#[cfg(feature = "serve")]
pub mod http;
#[cfg(test)]
mod tables;

use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;

use crate::error::{Error, Result};
use crate::model::coding::{Codec, DeltaCoding};
use crate::model::dictionary::parse_available_dictionary;
use crate::model::manifest::{Asset, Delta, Manifest, Variant};
use crate::model::names::{sibling_path, Sibling};

pub use negotiate::AcceptEncoding;

pub use crate::model::manifest::{Caching, CACHE_IMMUTABLE, CACHE_PAGE_KEPT, CACHE_REVALIDATE};

/// The content coding of a representation other than identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// A variant: `br`, `zstd` or `gzip`.
    Variant(Codec),
    /// A delta against a dictionary the client holds: `dcb` or `dcz`.
    Delta(DeltaCoding),
}

impl Coding {
    /// The `Content-Encoding` token.
    pub fn token(self) -> &'static str {
        match self {
            Coding::Variant(c) => c.token(),
            Coding::Delta(d) => d.token(),
        }
    }
}

impl negotiate::Offer for Coding {
    fn weight_in(&self, accept: &AcceptEncoding) -> negotiate::Weight {
        match self {
            Coding::Variant(c) => accept.weight(*c),
            // Only by name: `*` does not say a client can decode a delta.
            Coding::Delta(d) => accept.named_weight(d.token()),
        }
    }
}

/// One representation of an asset: a file under the served folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Representation {
    /// `None` for identity, else the coding of the variant or delta.
    pub coding: Option<Coding>,
    /// Path relative to the served folder, `/` separators.
    pub path: String,
    /// Bytes on disk (the `Content-Length`).
    pub size: u64,
    /// Strong ETag, quotes included.
    pub etag: String,
}

/// An asset from the manifest, ready to answer requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `Content-Type` of every representation.
    pub content_type: String,
    /// The original file.
    pub identity: Representation,
    /// Compressed variants, smallest first.
    pub variants: Vec<Representation>,
    /// Deltas, each with the SHA-256 of the dictionary it needs.
    pub deltas: Vec<([u8; 32], Representation)>,
    /// The `Use-As-Dictionary` value to send, if the asset is a dictionary.
    pub use_as_dictionary: Option<String>,
    /// The source's modification time, when the index was loaded from disk.
    pub last_modified: Option<SystemTime>,
    /// The manifest's cache policy, which for a page depends on the request
    /// ([`Caching::header_for`]).
    pub cache: Caching,
    /// The `Link` to the release's shared dictionary, on an HTML page's
    /// responses (a browser fetches it when idle).
    pub link: Option<String>,
    /// The code dictionary, which a request holding no dictionary is
    /// refused ([`Selection::Deferred`],
    /// [`deferred_without_dictionary`](crate::model::dictionary::deferred_without_dictionary)).
    pub deferred: bool,
}

impl Entry {
    /// [`CACHE_IMMUTABLE`] or [`CACHE_REVALIDATE`]: what every request but
    /// a navigation that keeps a page gets ([`Caching::header`]).
    pub fn cache_control(&self) -> &'static str {
        self.cache.header()
    }
}

/// The most representations one request is offered: three variants and a
/// delta of each coding against the dictionary it holds, with room to spare.
const OFFERS_MAX: usize = 8;

/// Response headers, in the order they are best sent. Names are canonical case.
pub type Headers = Vec<(&'static str, String)>;

/// The representation to send and its headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected<'a> {
    /// The asset it belongs to.
    pub entry: &'a Entry,
    /// What to send.
    pub representation: &'a Representation,
    /// `Content-Type`, `Content-Length`, `Content-Encoding` (variants only),
    /// `ETag`, `Last-Modified` (if known), `Cache-Control`, `Vary` (assets with
    /// variants).
    pub headers: Headers,
}

/// The answer of [`Index::select`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection<'a> {
    /// Send this.
    Found(Selected<'a>),
    /// The client refused every representation (`identity;q=0`, `*;q=0`): 406,
    /// with these headers (`Vary`, `Cache-Control`).
    NotAcceptable {
        /// Headers for the 406 response.
        headers: Headers,
    },
    /// The code dictionary, asked by Chromium holding no dictionary: 204
    /// with these headers (`Cache-Control: no-store`), so it asks again once
    /// it holds the chunk it is a delta against
    /// ([`crate::model::dictionary::DEFERRED_CACHE_CONTROL`]).
    Deferred {
        /// Headers for the 204 response.
        headers: Headers,
    },
    /// The manifest does not list this path.
    NotInManifest,
}

/// The manifest, indexed by path and checked, loaded once per server.
#[derive(Debug, Clone)]
pub struct Index {
    assets: HashMap<String, Entry>,
    /// The URL path DIR is served at: the manifest's `base`, or `/`.
    base: String,
    /// The manifest's `shared_dictionary` and `documents_dictionary`.
    dictionaries: Vec<String>,
    /// Each source's metadata as [`Index::load`] hashed it: a server that
    /// records a file's stamp afterwards holds it to this one
    /// ([`Index::source_metadata`]).
    sources: HashMap<String, std::fs::Metadata>,
}

impl Default for Index {
    fn default() -> Index {
        Index {
            assets: HashMap::new(),
            base: crate::model::path::ROOT_BASE.to_string(),
            dictionaries: Vec::new(),
            sources: HashMap::new(),
        }
    }
}

impl Index {
    /// Reads `manifest` (default `root/precompress-manifest.json`), checks it,
    /// and stats every source for `Last-Modified`. An asset whose file no
    /// longer has the manifest's size and blake3 (edited or rebuilt after
    /// precompress ran) is left out: its variants and ETags would be stale, so
    /// it is a plain file to this index ([`Selection::NotInManifest`]).
    pub fn load(root: &Path, manifest: Option<&Path>) -> Result<Index> {
        let mpath = manifest.map_or_else(
            || crate::model::manifest::default_path(root),
            Path::to_path_buf,
        );
        let m = Manifest::read(&mpath)?;
        let recorded: HashMap<String, String> = m
            .files
            .iter()
            .map(|(k, a)| (k.clone(), a.blake3.clone()))
            .collect();
        let mut index = Index::from_manifest(&mpath, m)?;
        let mut sources = HashMap::new();
        index.assets.retain(|key, entry| {
            let path = root.join(key);
            let Ok(md) = std::fs::metadata(&path) else {
                return false;
            };
            entry.last_modified = md.modified().ok();
            let hashed = md.is_file()
                && md.len() == entry.identity.size
                && blake3_of(&path).is_some_and(|h| Some(&h) == recorded.get(key));
            // Stat'ed before the hash and after: an edit while it was read
            // (of the same size) leaves the file out, never checked.
            match std::fs::metadata(&path) {
                Ok(after) if hashed && same_file(&md, &after) => {
                    sources.insert(key.clone(), after);
                    true
                }
                _ => false,
            }
        });
        index.sources = sources;
        Ok(index)
    }

    /// Parses manifest JSON without touching the disk (no `Last-Modified`).
    /// `origin` names the manifest in errors.
    pub fn from_json(origin: &Path, text: &str) -> Result<Index> {
        Index::from_manifest(origin, Manifest::from_json(origin, text)?)
    }

    /// Checks and indexes a parsed manifest. A manifest is data from disk that a
    /// server turns into file paths and header values, so every key must stay
    /// under the folder, every variant or delta must have the one name
    /// precompress gives it ([`sibling_path`]: never `.env` or another
    /// asset's file), every coding must be one this crate writes, and every
    /// header value must be printable ASCII.
    pub fn from_manifest(origin: &Path, m: Manifest) -> Result<Index> {
        let bad = |detail: String| Error::Manifest {
            path: origin.to_path_buf(),
            detail,
        };
        let base = match m.base.as_deref() {
            None => crate::model::path::ROOT_BASE.to_string(),
            Some(b) => match crate::model::path::normalize_base(b) {
                Ok(n) if n == b => n,
                _ => return Err(bad(format!("base {b:?} is not a path like /app/"))),
            },
        };
        let named = [
            ("shared_dictionary", &m.shared_dictionary),
            ("documents_dictionary", &m.documents_dictionary),
        ];
        let mut dictionaries = Vec::new();
        for (field, key) in named {
            if let Some(k) = key {
                if !m.files.contains_key(k) {
                    return Err(bad(format!("{field} {k:?} is not one of its files")));
                }
                dictionaries.push(k.clone());
            }
        }
        let mut assets = HashMap::with_capacity(m.files.len());
        for (key, asset) in m.files {
            let mut entry = entry_of(&key, asset).map_err(bad)?;
            entry.deferred = crate::model::dictionary::deferred_without_dictionary(
                m.shared_dictionary.as_deref(),
                &key,
                !entry.deltas.is_empty(),
            );
            assets.insert(key, entry);
        }
        let mut index = Index {
            assets,
            base,
            dictionaries,
            sources: HashMap::new(),
        };
        index.set_link();
        Ok(index)
    }

    /// Puts the `Link` to the release's shared dictionaries on every HTML
    /// entry (their URLs under the current base).
    fn set_link(&mut self) {
        let link = self.link();
        for e in self.assets.values_mut() {
            let html = e.content_type.starts_with("text/html");
            e.link = link.clone().filter(|_| html);
        }
    }

    /// The URL path DIR is served at (`/app/`; `/` by default).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Serves under `base` (normalized, [`crate::model::path::normalize_base`])
    /// instead of the manifest's.
    pub fn set_base(&mut self, base: &str) {
        self.base = base.to_string();
        self.set_link();
    }

    /// The `Link` value every HTML response carries, naming the release's
    /// shared dictionaries (code, then documents), if the manifest names any.
    pub fn link(&self) -> Option<String> {
        let urls: Vec<String> = self.dictionaries.iter().map(|k| self.url(k)).collect();
        crate::model::dictionary::dictionary_link(&urls)
    }

    /// The metadata of the source at `key` as [`Index::load`] hashed it
    /// (`None` for an index not loaded from disk): a server that stamps the
    /// file later must find this same file, or the source changed after the
    /// hash and its variants would be stale.
    pub fn source_metadata(&self, key: &str) -> Option<&std::fs::Metadata> {
        self.sources.get(key)
    }

    /// Leaves the asset at `key` out: a plain file to this index from now on.
    pub fn forget(&mut self, key: &str) {
        self.assets.remove(key);
        self.sources.remove(key);
    }

    /// The URL path of the file at `key` (relative to DIR).
    pub fn url(&self, key: &str) -> String {
        crate::model::path::url_of(&self.base, key)
    }

    /// The asset at `key` (relative path, `/` separators).
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.assets.get(key.trim_start_matches('/'))
    }

    /// Every asset, by key, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.assets.iter().map(|(k, e)| (k.as_str(), e))
    }

    /// How many assets the manifest lists.
    pub fn len(&self) -> usize {
        self.assets.len()
    }

    /// The manifest lists nothing.
    pub fn is_empty(&self) -> bool {
        self.assets.is_empty()
    }

    /// Picks what to send for the decoded URL path `key` (`assets/app.js`; a
    /// leading `/` is ignored) given the request's `Accept-Encoding` (`None` when
    /// absent; join repeated fields with `,`).
    pub fn select(&self, key: &str, accept_encoding: Option<&str>) -> Selection<'_> {
        self.select_with_dictionary(key, accept_encoding, None)
    }

    /// [`Index::select`] for a request that may hold a dictionary:
    /// `available_dictionary` is its `Available-Dictionary` field (`None` when
    /// absent; a repeated field is no valid value).
    pub fn select_with_dictionary(
        &self,
        key: &str,
        accept_encoding: Option<&str>,
        available_dictionary: Option<&str>,
    ) -> Selection<'_> {
        self.select_for(
            key,
            accept_encoding,
            available_dictionary,
            Browser::default(),
        )
    }

    /// [`Index::select_with_dictionary`] for a request from `browser`
    /// ([`Browser::of`]: a navigation that keeps a page, Chromium holding no
    /// dictionary; [`Entry::select_for`]).
    pub fn select_for(
        &self,
        key: &str,
        accept_encoding: Option<&str>,
        available_dictionary: Option<&str>,
        browser: Browser,
    ) -> Selection<'_> {
        let Some(entry) = self.get(key) else {
            return Selection::NotInManifest;
        };
        let accept = accept_encoding.map(AcceptEncoding::parse);
        let dictionary = available_dictionary.and_then(parse_available_dictionary);
        entry.select_for(accept.as_ref(), dictionary.as_ref(), browser)
    }
}

impl Entry {
    /// Picks a representation for an already parsed `Accept-Encoding`.
    pub fn select(&self, accept: Option<&AcceptEncoding>) -> Selection<'_> {
        self.select_with_dictionary(accept, None)
    }

    /// Picks a representation for an already parsed `Accept-Encoding` and the
    /// SHA-256 of the dictionary the client holds, if any, for a request that
    /// is not a navigation that keeps a page ([`Entry::select_for`]).
    pub fn select_with_dictionary(
        &self,
        accept: Option<&AcceptEncoding>,
        dictionary: Option<&[u8; 32]>,
    ) -> Selection<'_> {
        self.select_for(accept, dictionary, Browser::default())
    }

    /// [`Entry::select_with_dictionary`] for a request from `browser`: a
    /// page ([`Caching::Page`]) is sent a navigation that keeps it
    /// ([`Browser::keeps_page`]) with [`CACHE_PAGE_KEPT`], and the code
    /// dictionary asked by Chromium holding no dictionary is
    /// [`Selection::Deferred`].
    pub fn select_for(
        &self,
        accept: Option<&AcceptEncoding>,
        dictionary: Option<&[u8; 32]>,
        browser: Browser,
    ) -> Selection<'_> {
        // The variants and the deltas against the dictionary held, on the
        // stack: no allocation per request (past OFFERS_MAX, a manifest's
        // duplicates, more are not offered).
        let mut candidates = [&self.identity; OFFERS_MAX];
        let mut offered = [(Coding::Variant(Codec::Brotli), 0); OFFERS_MAX];
        let mut n = 0;
        let deltas = self
            .deltas
            .iter()
            .filter(|(h, _)| dictionary == Some(h))
            .map(|(_, r)| r);
        for r in self.variants.iter().chain(deltas) {
            if let (Some(c), true) = (r.coding, n < OFFERS_MAX) {
                candidates[n] = r;
                offered[n] = (c, r.size);
                n += 1;
            }
        }
        let offers = &offered[..n];
        let vary = vary(
            !self.deltas.is_empty(),
            !self.variants.is_empty(),
            self.cache == Caching::Page,
        );
        if self.deferred && dictionary.is_none() && browser.chromium {
            let headers = vec![(
                "Cache-Control",
                crate::model::dictionary::DEFERRED_CACHE_CONTROL.to_string(),
            )];
            return Selection::Deferred { headers };
        }
        let representation = match negotiate::choose(accept, self.identity.size, offers) {
            negotiate::Choice::Identity => &self.identity,
            negotiate::Choice::Variant(i) => candidates[i],
            negotiate::Choice::NotAcceptable => {
                let mut headers = vec![("Cache-Control", CACHE_REVALIDATE.to_string())];
                if let Some(v) = vary {
                    headers.push(("Vary", v.to_string()));
                }
                return Selection::NotAcceptable { headers };
            }
        };
        let mut headers: Headers = Vec::with_capacity(10);
        headers.push(("Content-Type", self.content_type.clone()));
        headers.push(("Content-Length", representation.size.to_string()));
        if let Some(c) = representation.coding {
            headers.push(("Content-Encoding", c.token().to_string()));
        }
        headers.push(("ETag", representation.etag.clone()));
        if let Some(t) = self.last_modified {
            headers.push(("Last-Modified", httpdate::fmt_http_date(t)));
        }
        headers.push((
            "Cache-Control",
            self.cache.header_for(browser.keeps_page()).to_string(),
        ));
        if let Some(v) = vary {
            headers.push(("Vary", v.to_string()));
        }
        if let Some(u) = &self.use_as_dictionary {
            headers.push(("Use-As-Dictionary", u.clone()));
        }
        if let Some(l) = &self.link {
            headers.push(("Link", l.clone()));
        }
        Selection::Found(Selected {
            entry: self,
            representation,
            headers,
        })
    }
}

/// The `Vary` of every response of an asset with deltas, variants, and a
/// page's cache policy ([`crate::model::manifest::PAGE_VARY`]), if any.
pub fn vary(deltas: bool, variants: bool, page: bool) -> Option<&'static str> {
    match (deltas, variants, page) {
        (true, _, true) => Some("Accept-Encoding, Available-Dictionary, Sec-Fetch-Dest"),
        (true, _, false) => Some("Accept-Encoding, Available-Dictionary"),
        (false, true, true) => Some("Accept-Encoding, Sec-Fetch-Dest"),
        (false, true, false) => Some("Accept-Encoding"),
        (false, false, true) => Some("Sec-Fetch-Dest"),
        (false, false, false) => None,
    }
}

/// What a request's fields say of the browser it comes from, as far as
/// dictionaries go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Browser {
    /// Chromium: it alone sends `Sec-CH-UA`, and alone ships RFC 9842.
    pub chromium: bool,
    /// A top-level navigation (`Sec-Fetch-Dest: document`).
    pub navigation: bool,
}

impl Browser {
    /// From a request's `Sec-Fetch-Dest` and `Sec-CH-UA` (absent: `None`).
    pub fn of(fetch_dest: Option<&str>, ch_ua: Option<&str>) -> Browser {
        Browser {
            chromium: ch_ua.is_some(),
            navigation: fetch_dest.is_some_and(|d| d.trim().eq_ignore_ascii_case("document")),
        }
    }

    /// [`keeps_page`].
    pub fn keeps_page(self) -> bool {
        self.chromium && self.navigation
    }
}

/// Whether a request with these fields (`sec-fetch-dest`, `sec-ch-ua`; lower
/// case) is a navigation of a browser that keeps a page as the dictionary
/// of its next version: a top-level navigation (`Sec-Fetch-Dest: document`)
/// of a Chromium-based browser, the one engine that ships RFC 9842 and the
/// only one that sends `Sec-CH-UA`. Its first navigation offers no `dcb`
/// yet, so the coding cannot tell; Chromium revalidates every navigation
/// before it shows the page (measured, `tests/field_browser.rs`), and other
/// browsers, whose handling of a stale page is not measured here, get
/// `no-cache` as before.
pub fn keeps_page(fetch_dest: Option<&str>, ch_ua: Option<&str>) -> bool {
    Browser::of(fetch_dest, ch_ua).keeps_page()
}

/// Whether two stats are of the same file, unchanged: size, mtime, and on
/// Unix the inode and ctime (which any write or rename sets).
pub fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if (a.dev(), a.ino(), a.ctime(), a.ctime_nsec())
            != (b.dev(), b.ino(), b.ctime(), b.ctime_nsec())
        {
            return false;
        }
    }
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// The blake3 of a file's content, hex; `None` if it cannot be read.
fn blake3_of(path: &Path) -> Option<String> {
    let mut h = blake3::Hasher::new();
    h.update_reader(crate::fsutil::open_to_read(path).ok()?)
        .ok()?;
    Some(h.finalize().to_hex().to_string())
}

/// The checked entry of the asset at `key`, or what is wrong with it.
fn entry_of(key: &str, asset: Asset) -> std::result::Result<Entry, String> {
    path::check_relative(key).map_err(|e| format!("file {key:?}: {e}"))?;
    if !is_header_value(&asset.content_type) {
        return Err(format!("file {key:?}: content_type is not a header value"));
    }
    if !is_strong_etag(&asset.etag) {
        return Err(format!("file {key:?}: etag is not a strong entity-tag"));
    }
    let variants = variants_of(key, asset.encodings)?;
    let deltas = deltas_of(key, asset.deltas)?;
    if let Some(u) = &asset.use_as_dictionary {
        if !is_header_value(u) {
            return Err(format!(
                "file {key:?}: use_as_dictionary is not a header value"
            ));
        }
    }
    // One strong ETag names one body (RFC 9110 §8.8.3): a manifest that gives
    // two representations the same one would have caches mix them up.
    let mut etags: Vec<&str> = std::iter::once(asset.etag.as_str())
        .chain(variants.iter().map(|r| r.etag.as_str()))
        .chain(deltas.iter().map(|(_, r)| r.etag.as_str()))
        .collect();
    etags.sort_unstable();
    if let Some(w) = etags.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!(
            "file {key:?}: two of its representations have the etag {}",
            w[0]
        ));
    }
    Ok(Entry {
        content_type: asset.content_type,
        identity: Representation {
            coding: None,
            path: key.to_string(),
            size: asset.size,
            etag: asset.etag,
        },
        variants,
        deltas,
        use_as_dictionary: asset.use_as_dictionary,
        last_modified: None,
        cache: asset.cache,
        link: None,
        deferred: false,
    })
}

/// The checked variants of the asset at `key`, smallest first.
fn variants_of(
    key: &str,
    encodings: Vec<Variant>,
) -> std::result::Result<Vec<Representation>, String> {
    let mut variants: Vec<Representation> = Vec::with_capacity(encodings.len());
    for v in encodings {
        let codec = Codec::parse(&v.coding)
            .filter(|c| c.token() == v.coding)
            .ok_or_else(|| format!("file {key:?}: unknown coding {:?}", v.coding))?;
        if variants
            .iter()
            .any(|r| r.coding == Some(Coding::Variant(codec)))
        {
            return Err(format!("file {key:?}: coding {} listed twice", v.coding));
        }
        // The path is data from disk: only the variant's own name may be sent.
        let own = sibling_path(key, Sibling::Variant(codec));
        if v.path != own {
            return Err(format!(
                "file {key:?}: {} variant path {:?} is not {own:?}, the only name of its {} variant",
                v.coding, v.path, v.coding
            ));
        }
        if !is_strong_etag(&v.etag) {
            return Err(format!(
                "file {key:?}: {} etag is not a strong entity-tag",
                v.coding
            ));
        }
        variants.push(Representation {
            coding: Some(Coding::Variant(codec)),
            path: v.path,
            size: v.size,
            etag: v.etag,
        });
    }
    variants.sort_by_key(|r| r.size);
    Ok(variants)
}

/// The checked deltas of the asset at `key`, each with the SHA-256 of its
/// dictionary, smallest first.
fn deltas_of(
    key: &str,
    listed: Vec<Delta>,
) -> std::result::Result<Vec<([u8; 32], Representation)>, String> {
    let mut deltas: Vec<([u8; 32], Representation)> = Vec::with_capacity(listed.len());
    for d in listed {
        let what = format!("file {key:?}: {} delta {:?}", d.coding, d.path);
        let coding = DeltaCoding::parse(&d.coding)
            .ok_or_else(|| format!("file {key:?}: unknown delta coding {:?}", d.coding))?;
        let dict = parse_available_dictionary(&d.dictionary)
            .ok_or_else(|| format!("{what}: dictionary is not a base64 SHA-256 between colons"))?;
        let own = sibling_path(key, Sibling::Delta(&dict, coding));
        if d.path != own {
            return Err(format!(
                "{what}: is not {own:?}, the only name of its {} delta against that dictionary",
                d.coding
            ));
        }
        if !is_strong_etag(&d.etag) {
            return Err(format!("{what}: etag is not a strong entity-tag"));
        }
        let coding = Some(Coding::Delta(coding));
        if deltas.iter().any(|(h, r)| *h == dict && r.coding == coding) {
            return Err(format!("{what}: listed twice"));
        }
        deltas.push((
            dict,
            Representation {
                coding,
                path: d.path,
                size: d.size,
                etag: d.etag,
            },
        ));
    }
    deltas.sort_by_key(|(_, r)| r.size);
    Ok(deltas)
}

/// Printable ASCII and tabs: safe to put in a header (no CR, LF or NUL).
fn is_header_value(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
}

/// `"` etagc* `"` (RFC 9110 §8.8.3), ASCII only, not weak.
fn is_strong_etag(s: &str) -> bool {
    s.len() >= 2
        && s.starts_with('"')
        && s.ends_with('"')
        && s[1..s.len() - 1]
            .bytes()
            .all(|b| b == 0x21 || (0x23..0x7f).contains(&b))
}

/// Why serving `index` under `base` loses its deltas, if it does: its
/// dictionaries' patterns were written for the manifest's own base, and a
/// browser offers a dictionary only for URLs its pattern matches.
pub fn base_mismatch(index: &Index, base: &str) -> Option<String> {
    let marked = index.iter().any(|(_, e)| e.use_as_dictionary.is_some());
    (marked && index.base() != base).then(|| {
        format!(
            "the manifest was written for base {}, not {base}: its dictionary patterns match \
             no URL under {base}, so browsers send no dictionary; run precompress with --base {base}",
            index.base()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest_json(files: &str) -> String {
        format!(r#"{{"version": 1, "generator": "t", "settings": {{}}, "files": {{ {files} }} }}"#)
    }

    fn asset(key: &str, size: u64, encodings: &str) -> String {
        format!(
            r#""{key}": {{"size": {size}, "blake3": "00", "sha256": "x", "content_type": "text/javascript; charset=utf-8",
                "etag": "\"id-{key}\"", "encodings": [{encodings}], "skipped": {{}}, "cache": {cache} }}"#,
            cache =
                serde_json::to_string(&crate::model::manifest::Caching::of(key, false)).unwrap()
        )
    }

    fn variant(key: &str, coding: &str, suffix: &str, size: u64) -> String {
        format!(
            r#"{{"coding": "{coding}", "path": "{key}.{suffix}", "size": {size}, "blake3": "00", "etag": "\"{coding}-{key}\""}}"#
        )
    }

    fn index() -> Index {
        let app = [
            variant("app-3f2a9c1b.js", "gzip", "gz", 400),
            variant("app-3f2a9c1b.js", "br", "br", 300),
            variant("app-3f2a9c1b.js", "zstd", "zst", 320),
        ]
        .join(",");
        let files = [
            asset("app-3f2a9c1b.js", 1000, &app),
            asset("index.html", 500, ""),
        ]
        .join(",");
        Index::from_json(Path::new("m.json"), &manifest_json(&files)).unwrap()
    }

    fn header<'a>(h: &'a Headers, name: &str) -> Option<&'a str> {
        h.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    #[test]
    fn selects_and_sets_headers() {
        let idx = index();
        let Selection::Found(s) = idx.select("/app-3f2a9c1b.js", Some("gzip, deflate, br, zstd"))
        else {
            panic!("not found");
        };
        assert_eq!(s.representation.path, "app-3f2a9c1b.js.br");
        let h = &s.headers;
        assert_eq!(header(h, "Content-Encoding"), Some("br"));
        assert_eq!(header(h, "Content-Length"), Some("300"));
        assert_eq!(header(h, "ETag"), Some("\"br-app-3f2a9c1b.js\""));
        assert_eq!(
            header(h, "Content-Type"),
            Some("text/javascript; charset=utf-8")
        );
        assert_eq!(header(h, "Vary"), Some("Accept-Encoding"));
        assert_eq!(header(h, "Cache-Control"), Some(CACHE_IMMUTABLE));
        assert_eq!(header(h, "Last-Modified"), None, "no disk, no date");

        let Selection::Found(s) = idx.select("app-3f2a9c1b.js", Some("zstd, gzip")) else {
            panic!()
        };
        assert_eq!(header(&s.headers, "Content-Encoding"), Some("zstd"));
        assert_eq!(s.representation.path, "app-3f2a9c1b.js.zst");

        // Identity of an asset with variants still varies.
        let Selection::Found(s) = idx.select("app-3f2a9c1b.js", None) else {
            panic!()
        };
        assert_eq!(header(&s.headers, "Content-Encoding"), None);
        assert_eq!(header(&s.headers, "Vary"), Some("Accept-Encoding"));
        assert_eq!(header(&s.headers, "Content-Length"), Some("1000"));
        assert_eq!(header(&s.headers, "ETag"), Some("\"id-app-3f2a9c1b.js\""));

        // No variants: no Vary, revalidating cache policy.
        let Selection::Found(s) = idx.select("index.html", Some("br")) else {
            panic!()
        };
        assert_eq!(header(&s.headers, "Vary"), None);
        assert_eq!(header(&s.headers, "Cache-Control"), Some(CACHE_REVALIDATE));

        assert_eq!(idx.select("nope.js", Some("br")), Selection::NotInManifest);
        let Selection::NotAcceptable { headers } =
            idx.select("app-3f2a9c1b.js", Some("identity;q=0, deflate"))
        else {
            panic!()
        };
        assert_eq!(header(&headers, "Vary"), Some("Accept-Encoding"));
    }

    /// `fixtures/accept-encoding.json`, every row (also run by `node --test`
    /// on negotiate.js and the CloudFront function): the coding, its size and
    /// ETag, and the headers every response of the asset carries.
    #[test]
    fn accept_encoding_table() {
        let t = tables::accept_encoding();
        let idx = Index::from_json(Path::new("m.json"), &tables::offers_manifest(&t)).unwrap();
        let rows = t["cases"].as_array().unwrap();
        assert!(rows.len() >= 62, "{} rows", rows.len());
        for row in rows {
            let offer_name = row["offer"].as_str().unwrap();
            let offer = &t["offers"][offer_name];
            let (ae, ad) = (tables::accept(row), tables::available_dictionary(&t, row));
            let sel = idx.select_with_dictionary(
                &tables::offer_key(offer_name),
                ae.as_deref(),
                ad.as_deref(),
            );
            let deltas = !offer["deltas"].is_null();
            let vary = if deltas {
                Some("Accept-Encoding, Available-Dictionary")
            } else if !offer["variants"].as_array().unwrap().is_empty() {
                Some("Accept-Encoding")
            } else {
                None
            };
            let want = row["want"].as_str().unwrap();
            let h = match sel {
                Selection::Found(s) => s.headers,
                Selection::NotAcceptable { headers } => {
                    assert_eq!(want, "406", "row {row}");
                    assert_eq!(header(&headers, "Vary"), vary, "row {row}");
                    continue;
                }
                Selection::Deferred { .. } | Selection::NotInManifest => panic!("row {row}"),
            };
            let coding = header(&h, "Content-Encoding");
            assert_eq!(coding.unwrap_or("identity"), want, "row {row}");
            // Its size, and its own ETag (a delta's names its dictionary).
            let (size, etag) = match coding {
                None => (
                    offer["identity"].as_u64().unwrap(),
                    "\"identity\"".to_string(),
                ),
                Some(c) => {
                    let all = offer["variants"].as_array().unwrap().iter();
                    let deltas = offer["deltas"].as_array().into_iter().flatten();
                    let chosen = all
                        .chain(deltas)
                        .filter(|r| r[0] == c)
                        .find(|r| {
                            let held = ad.as_deref().and_then(parse_available_dictionary);
                            r.as_array().unwrap().len() == 2
                                || held
                                    == parse_available_dictionary(&tables::dictionary(
                                        &t,
                                        r[1].as_str().unwrap(),
                                    ))
                        })
                        .unwrap_or_else(|| panic!("row {row}: {c} not on offer"));
                    let n = chosen.as_array().unwrap().len();
                    let etag = match n {
                        2 => format!("\"{c}\""),
                        _ => format!("\"{c}-{}\"", chosen[1].as_str().unwrap()),
                    };
                    (chosen[n - 1].as_u64().unwrap(), etag)
                }
            };
            assert_eq!(
                header(&h, "Content-Length"),
                Some(size.to_string().as_str()),
                "row {row}"
            );
            assert_eq!(header(&h, "ETag"), Some(etag.as_str()), "row {row}");
            // Every response of an asset with deltas varies on both fields, and
            // every response of a dictionary says so; others send neither.
            assert_eq!(header(&h, "Vary"), vary, "row {row}");
            let use_as = deltas.then_some("match=\"/app-*.js\"");
            assert_eq!(header(&h, "Use-As-Dictionary"), use_as, "row {row}");
        }
    }

    #[test]
    fn only_a_chromium_navigation_may_keep_a_page_and_every_answer_of_a_page_varies_on_its_destination(
    ) {
        use crate::model::manifest::Caching;
        // Chromium's first navigation: no dcb yet, but Sec-CH-UA.
        assert!(keeps_page(Some("document"), Some("\"Chromium\";v=\"156\"")));
        assert!(keeps_page(Some(" Document "), Some("")));
        // Another browser's navigation, a fetch, an iframe, no header at all.
        assert!(!keeps_page(Some("document"), None));
        assert!(!keeps_page(Some("empty"), Some("\"Chromium\"")));
        assert!(!keeps_page(Some("iframe"), Some("\"Chromium\"")));
        assert!(!keeps_page(None, Some("\"Chromium\"")));
        assert_eq!(Caching::Page.header_for(true), CACHE_PAGE_KEPT);
        assert_eq!(Caching::Page.header_for(false), CACHE_REVALIDATE);
        assert_eq!(Caching::Revalidate.header_for(true), CACHE_REVALIDATE);
        assert_eq!(Caching::Immutable.header_for(true), CACHE_IMMUTABLE);
        assert_eq!(Caching::of("docs/index.html", true), Caching::Page);
        assert_eq!(Caching::of("docs/index.html", false), Caching::Revalidate);
        assert_eq!(Caching::of("data.json", true), Caching::Revalidate);
        assert_eq!(
            vary(false, true, true),
            Some("Accept-Encoding, Sec-Fetch-Dest")
        );
        assert_eq!(
            vary(true, true, true),
            Some("Accept-Encoding, Available-Dictionary, Sec-Fetch-Dest")
        );
        assert_eq!(vary(false, false, true), Some("Sec-Fetch-Dest"));
        assert_eq!(vary(false, false, false), None);
    }

    #[test]
    fn load_sets_last_modified_and_leaves_out_changed_sources() {
        let tmp = tempfile::tempdir().unwrap();
        let body = "x".repeat(500);
        let b3 = blake3::hash(body.as_bytes()).to_hex().to_string();
        for name in ["index.html", "same-size.html", "gone.html"] {
            std::fs::write(tmp.path().join(name), &body).unwrap();
        }
        let files = ["index.html", "same-size.html", "gone.html"]
            .map(|n| {
                asset(n, 500, "").replace(r#""blake3": "00""#, &format!(r#""blake3": "{b3}""#))
            })
            .join(",");
        std::fs::write(
            tmp.path().join("precompress-manifest.json"),
            manifest_json(&files),
        )
        .unwrap();
        // Changed after the run, keeping the size, and removed: stale, left out.
        std::fs::write(tmp.path().join("same-size.html"), "y".repeat(500)).unwrap();
        std::fs::remove_file(tmp.path().join("gone.html")).unwrap();
        let idx = Index::load(tmp.path(), None).unwrap();
        let Selection::Found(s) = idx.select("index.html", None) else {
            panic!()
        };
        let lm = header(&s.headers, "Last-Modified").expect("Last-Modified");
        assert!(httpdate::parse_http_date(lm).is_ok(), "{lm}");
        assert_eq!(idx.select("same-size.html", None), Selection::NotInManifest);
        assert_eq!(idx.select("gone.html", None), Selection::NotInManifest);
    }

    /// `fixtures/hostile-manifests.json` (also run by `node --test` on
    /// negotiate.js): refused at load, naming the manifest and why.
    #[test]
    fn hostile_manifests_are_refused() {
        let t = tables::hostile_manifests();
        let cases = t["cases"].as_array().unwrap();
        assert!(cases.len() >= 15, "{} rows", cases.len());
        for c in cases {
            let manifest = match c.get("manifest") {
                Some(m) => m.clone(),
                None => {
                    let mut files = serde_json::Map::new();
                    for (key, set) in c["files"].as_object().unwrap() {
                        let mut a = t["asset"].clone();
                        for (field, value) in set.as_object().unwrap() {
                            a[field] = value.clone();
                        }
                        files.insert(key.clone(), a);
                    }
                    serde_json::json!({"version": 1, "generator": "t", "settings": {}, "files": files})
                }
            };
            let json = manifest.to_string();
            let e = Index::from_json(Path::new("m.json"), &json).expect_err(&json);
            let e = e.to_string();
            let detail = e
                .strip_prefix("m.json: invalid manifest: ")
                .unwrap_or_else(|| panic!("row {c}: {e}"));
            match (c["error"].as_str(), c["error_starts"].as_str()) {
                (Some(want), _) => assert_eq!(detail, want, "row {c}"),
                (None, Some(start)) => assert!(detail.starts_with(start), "row {c}: {e}"),
                _ => panic!("row {c}: no error"),
            }
        }
    }

    /// `fixtures/sibling-names.json` (also run by model::names and by
    /// negotiate.js's `node --test`): a manifest whose variant or delta is not
    /// at the asset's own `KEY.br`, `KEY.HEX.dcb`, ... is refused at load,
    /// naming the manifest, the entry and the path; the rest load.
    #[test]
    fn a_variant_or_delta_not_at_its_own_name_is_refused_naming_the_entry() {
        let t: serde_json::Value =
            serde_json::from_str(include_str!("../../fixtures/sibling-names.json")).unwrap();
        for c in t["cases"].as_array().unwrap() {
            let (key, coding, path) = (
                c["key"].as_str().unwrap(),
                c["coding"].as_str().unwrap(),
                c["path"].as_str().unwrap(),
            );
            let rep = serde_json::json!({
                "coding": coding, "path": path, "size": 1, "blake3": "00", "etag": "\"rep\"",
                "dictionary": c["dictionary"], "dictionary_path": "old.js",
            });
            let field = if c["dictionary"].is_null() {
                "encodings"
            } else {
                "deltas"
            };
            let mut a = serde_json::json!({
                "size": 9, "blake3": "00", "sha256": "x", "content_type": "text/plain",
                "etag": "\"id\"", "encodings": [], "skipped": {},
            });
            a[field] = serde_json::json!([rep]);
            let m = serde_json::json!({
                "version": 1, "generator": "t", "settings": {}, "files": { key: a },
            });
            let got = Index::from_json(Path::new("site/m.json"), &m.to_string());
            match (c["ok"].as_bool().unwrap(), got) {
                (true, Ok(idx)) => {
                    let e = idx.get(key).unwrap();
                    let listed = e.variants.iter().chain(e.deltas.iter().map(|(_, r)| r));
                    assert_eq!(listed.map(|r| r.path.as_str()).collect::<Vec<_>>(), [path]);
                }
                (false, Err(e)) => {
                    let e = e.to_string();
                    let named = format!("site/m.json: invalid manifest: file {key:?}: ");
                    assert!(e.starts_with(&named), "row {c}: {e}");
                    assert!(e.contains(&format!("{path:?}")), "row {c}: {e}");
                }
                (want, got) => panic!("row {c}: ok should be {want}, got {got:?}"),
            }
        }
    }
}
