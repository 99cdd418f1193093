//! A precompressed folder as objects in a bucket (`precompress objects`): S3,
//! GCS or R2 store bytes and a few headers per key and negotiate nothing, so
//! every representation becomes its own object (`app.js`, `app.js.br`,
//! `app.js.HEX.dcb`, …) carrying the headers [`Index::select`] would send with
//! it, and an edge function in front of the bucket picks the key for each
//! request.
//!
//! What goes where, and why:
//! - `Content-Type` (the asset's, on its variants and deltas too),
//!   `Content-Encoding` and `Cache-Control` are headers the store keeps per
//!   object and sends back as they are.
//! - `ETag`, `Vary`, `Use-As-Dictionary` and `Link` are not: S3 sets its own
//!   ETag (an MD5, or a multipart digest) and stores nothing else but user
//!   metadata. They ride along as `x-amz-meta-precompress-*` and the
//!   viewer-response function ([`viewer_response`](super::cloudfront::viewer_response)) turns them into the
//!   headers; it also makes the 404 page a 404 (`precompress-status`).
//! - The viewer-request function ([`viewer_request`](super::cloudfront::viewer_request)) holds this release's
//!   routing data: for each asset with variants or deltas (and each page, for
//!   `/about` and `/docs/`), which codings it has and the order of their sizes,
//!   nothing more. It ports [`negotiate`](crate::serve::negotiate) line for line,
//!   since a CDN never decodes: a coding the client cannot read breaks the page.
//!   The rewritten URI is CloudFront's cache key, so the cache policy needs no
//!   header at all. Keys it does not know go on unchanged.
//! - Files the manifest does not describe are plain objects (type from the
//!   name, `no-cache`); dot-files, the manifest, stale variants (a variant's
//!   name beside its source that the manifest does not list), names no URL
//!   can hold (a `\`, which the run passes over) and links out of DIR are
//!   not uploaded, as no server here sends them ([`scan()`]).
//!
//! CloudFront Functions are at most 10 KB. Over that the function is refused
//! ([`ObjectsError::TooLarge`]) rather than cut: a site that large needs its
//! routing data in a KeyValueStore, which this module does not write.
//!
//! This file owns the plan: the objects and routes from the index and the
//! scan. `scan.rs` walks DIR, `upload.rs` writes the list and the upload
//! scripts; the functions themselves are `super::cloudfront`'s.

mod scan;
mod upload;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Serialize;

use crate::model::coding::{Codec, DeltaCoding};
use crate::model::content::variant_source;
use crate::model::names::delta_source;
use crate::serve::{Coding, Entry, Index, CACHE_REVALIDATE};

pub use scan::{scan, Scan};
pub use upload::{aws, json_lines, rclone, sh_quote, tsv, TSV_COLUMNS};

pub use crate::serve::route::NOT_FOUND_PAGE;

#[cfg(test)]
use crate::deploy::generate::VARY_DELTAS;

/// Why a listing or an edge function cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ObjectsError {
    /// The folder could not be resolved.
    #[error("{}: cannot resolve: {source}", path.display())]
    Root {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The folder could not be listed.
    #[error("{}: cannot list: {source}", path.display())]
    Walk {
        /// Where the walk failed.
        path: PathBuf,
        /// The walk's error.
        source: walkdir::Error,
    },
    /// The routing data does not fit in a CloudFront Function.
    #[error(
        "{}: the CloudFront Function for its {routes} negotiated files would be {size} bytes, \
         over CloudFront Functions' 10 KB limit ({limit} bytes); not written (a site this large \
         needs the routing data in a CloudFront KeyValueStore, which precompress does not write)",
        path.display()
    )]
    TooLarge {
        /// The folder (or manifest) the function was made for.
        path: PathBuf,
        /// The function's size in bytes.
        size: usize,
        /// [`CLOUDFRONT_FUNCTION_LIMIT`](super::cloudfront::CLOUDFRONT_FUNCTION_LIMIT).
        limit: usize,
        /// The assets it routes.
        routes: usize,
    },
}

/// One object to upload: a file under DIR, its key and the headers to store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Object {
    /// The object key: the URL path under the bucket, no leading `/`.
    pub key: String,
    /// The file, relative to DIR, `/` separators.
    pub file: String,
    /// Its size in bytes.
    pub size: u64,
    /// `br`, `zstd`, `gzip`, `dcb` or `dcz`; `None` for identity.
    pub content_encoding: Option<&'static str>,
    /// The asset's `Content-Type`.
    pub content_type: String,
    /// What `precompress serve` sends ([`Entry::cache_control`](crate::serve::Entry::cache_control)).
    pub cache_control: &'static str,
    /// The manifest's strong ETag, quotes included (stored as metadata: the
    /// store sets its own); `None` for files the manifest does not describe.
    pub etag: Option<String>,
    /// `Vary`, for the edge to add.
    pub vary: Option<&'static str>,
    /// `Use-As-Dictionary`, for the edge to add.
    pub use_as_dictionary: Option<String>,
    /// A page kept as its next version's dictionary: stored `no-cache`
    /// (what CloudFront caches by), its viewer-response function sending a
    /// Chromium navigation the page policy (`x-amz-meta-precompress-page`).
    pub page: bool,
    /// `Link` to the release's shared dictionaries (pages), for the edge to add.
    pub link: Option<String>,
    /// The status the edge answers with: 404 for the 404 page, else 200.
    pub status: u16,
    /// The user metadata to store (`x-amz-meta-` + name): the ETag and the
    /// headers above that the store cannot keep.
    pub metadata: BTreeMap<&'static str, String>,
}

/// What the edge function needs to know of one asset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The manifest key.
    pub key: String,
    /// The identity's size.
    pub identity: u64,
    /// Variants uploaded, smallest first (the index's order).
    pub variants: Vec<(Codec, u64)>,
    /// Deltas uploaded: dictionary SHA-256, coding, size; smallest first.
    pub deltas: Vec<([u8; 32], DeltaCoding, u64)>,
    /// The code dictionary with deltas uploaded: a request holding no
    /// dictionary gets a 204 ([`crate::serve::Selection::Deferred`]).
    pub deferred: bool,
}

/// The folder as objects, and what the edge needs to route to them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// Every object to upload, documents last.
    pub objects: Vec<Object>,
    /// The assets the edge function negotiates or maps, in key order.
    pub routes: Vec<Route>,
    /// Files left out, each with why.
    pub skipped: Vec<String>,
    /// The manifest's path relative to DIR, when it lies inside: never uploaded,
    /// and answered with the 404 page.
    pub manifest: Option<String>,
    /// The URL path DIR is served at.
    pub base: String,
}

/// The objects of `index` (loaded from DIR, at its base) given what `scan`
/// found under DIR, and the routes for the edge. `manifest` is the manifest's
/// path relative to DIR, if it lies inside.
pub fn plan(index: &Index, scan: &Scan, manifest: Option<&str>) -> Listing {
    let prefix = index.base().trim_start_matches('/');
    let mut out = Planned::default();
    let mut assets: Vec<_> = index.iter().collect();
    assets.sort_by_key(|(k, _)| *k);
    for (key, entry) in assets {
        plan_asset(&mut out, prefix, scan, key, entry);
    }
    let Planned {
        mut objects,
        routes,
        mut skipped,
        described,
    } = out;
    for (path, &size) in &scan.files {
        if described.contains(path.as_str()) || manifest == Some(path.as_str()) {
            continue;
        }
        let beside = variant_source(path)
            .map(|(src, _)| src)
            .or_else(|| delta_source(path).map(|(src, _)| src))
            .filter(|src| scan.files.contains_key(*src));
        if let Some(src) = beside {
            skipped.push(format!(
                "{path}: a variant's name beside {src} that the manifest does not list (stale); no server sends it by its name"
            ));
            continue;
        }
        objects.push(plain_object(prefix, path, size));
    }
    skipped.extend(passed_over(scan));
    // Documents last: a page uploaded before the files it names would send
    // browsers to keys not there yet.
    objects.sort_by(|a, b| {
        let page = |o: &Object| o.content_type.starts_with("text/html");
        (page(a), &a.key).cmp(&(page(b), &b.key))
    });
    Listing {
        objects,
        routes,
        skipped,
        manifest: manifest.map(str::to_string),
        base: index.base().to_string(),
    }
}

/// What [`plan`] has gathered from the manifest's assets so far.
#[derive(Default)]
struct Planned<'a> {
    objects: Vec<Object>,
    routes: Vec<Route>,
    skipped: Vec<String>,
    /// Every path the manifest describes, present or not.
    described: BTreeSet<&'a str>,
}

/// The asset at `key`: its identity and every variant and delta present in
/// DIR as objects, and its route when the edge has something to decide.
fn plan_asset<'a>(
    out: &mut Planned<'a>,
    prefix: &str,
    scan: &Scan,
    key: &'a str,
    entry: &'a Entry,
) {
    let present = |path: &str, size: u64| scan.files.get(path) == Some(&size);
    if !present(key, entry.identity.size) {
        out.skipped
            .push(format!("{key}: not in DIR with the manifest's size"));
        return;
    }
    out.described.insert(key);
    let mut route = Route {
        key: key.to_string(),
        identity: entry.identity.size,
        variants: Vec::new(),
        deltas: Vec::new(),
        deferred: false,
    };
    let mut reps = Vec::new();
    let deltas = entry.deltas.iter().map(|(h, r)| (Some(h), r));
    for (hash, rep) in entry.variants.iter().map(|r| (None, r)).chain(deltas) {
        let coding = match (rep.coding, hash) {
            (Some(c @ Coding::Variant(_)), None) | (Some(c @ Coding::Delta(_)), Some(_)) => c,
            _ => continue,
        };
        // Its own name (`KEY.br`, `KEY.HEX.dcb`): the index refuses a
        // manifest that lists another.
        out.described.insert(&rep.path);
        if !present(&rep.path, rep.size) {
            out.skipped
                .push(format!("{}: not in DIR with the manifest's size", rep.path));
            continue;
        }
        match (coding, hash) {
            (Coding::Variant(codec), _) => route.variants.push((codec, rep.size)),
            (Coding::Delta(d), Some(h)) => route.deltas.push((*h, d, rep.size)),
            (Coding::Delta(_), None) => continue,
        }
        reps.push((rep, coding.token()));
    }
    route.deferred = entry.deferred && !route.deltas.is_empty();
    let page = entry.cache == crate::model::manifest::Caching::Page;
    let vary = crate::serve::vary(!route.deltas.is_empty(), !route.variants.is_empty(), page);
    let status = if key == NOT_FOUND_PAGE { 404 } else { 200 };
    let object = |file: &str, size: u64, encoding: Option<&'static str>, etag: &str| {
        with_metadata(Object {
            key: format!("{prefix}{file}"),
            file: file.to_string(),
            size,
            content_encoding: encoding,
            content_type: entry.content_type.clone(),
            cache_control: entry.cache_control(),
            etag: Some(etag.to_string()),
            vary,
            use_as_dictionary: entry.use_as_dictionary.clone(),
            page,
            link: entry.link.clone(),
            status,
            metadata: BTreeMap::new(),
        })
    };
    out.objects
        .push(object(key, entry.identity.size, None, &entry.identity.etag));
    for (rep, token) in reps {
        out.objects
            .push(object(&rep.path, rep.size, Some(token), &rep.etag));
    }
    // Pages are routed even without variants: `/about` and `/docs/` map to them.
    if !route.variants.is_empty() || !route.deltas.is_empty() || key.ends_with(".html") {
        out.routes.push(route);
    }
}

/// A file the manifest does not describe: type from its name, revalidated.
fn plain_object(prefix: &str, path: &str, size: u64) -> Object {
    Object {
        key: format!("{prefix}{path}"),
        file: path.to_string(),
        size,
        content_encoding: None,
        content_type: crate::model::content::content_type(path),
        cache_control: CACHE_REVALIDATE,
        etag: None,
        vary: None,
        use_as_dictionary: None,
        page: false,
        link: None,
        status: 200,
        metadata: BTreeMap::new(),
    }
}

/// What the scan passed over, each with why it is not uploaded.
fn passed_over(scan: &Scan) -> Vec<String> {
    let mut skipped = Vec::new();
    for h in &scan.hidden {
        skipped.push(format!("{h}: a dot-file, which servers never send"));
    }
    for p in &scan.unnamed {
        skipped.push(format!("{}: not UTF-8, so no object key", p.display()));
    }
    for u in &scan.unservable {
        skipped.push(format!(
            "{u:?}: a name no URL path can hold (a backslash is not a folder here); the run passes it over too"
        ));
    }
    for o in &scan.outside {
        skipped.push(format!(
            "{o}: a link that leads out of DIR (or nowhere); precompress serve does not send it either"
        ));
    }
    skipped
}

/// `o` with its user metadata filled from its fields.
fn with_metadata(mut o: Object) -> Object {
    let mut m = BTreeMap::new();
    if let Some(e) = &o.etag {
        m.insert("precompress-etag", e.clone());
    }
    if let Some(v) = o.vary {
        m.insert("precompress-vary", v.to_string());
    }
    if let Some(u) = &o.use_as_dictionary {
        m.insert("precompress-use-as-dictionary", u.clone());
    }
    if let Some(l) = &o.link {
        m.insert("precompress-link", l.clone());
    }
    // The viewer-response function sends it to a Chromium navigation.
    if o.page {
        m.insert(
            "precompress-page",
            crate::model::manifest::CACHE_PAGE_KEPT.to_string(),
        );
    }
    if o.status != 200 {
        m.insert("precompress-status", o.status.to_string());
    }
    o.metadata = m;
    o
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::deploy::fixture;
    use crate::model::dictionary::hex;

    const APP: &str = "assets/app-5e6f7a8b.js";

    /// A scan holding every file `index` describes, at the manifest's sizes.
    pub fn scan_of(index: &Index) -> Scan {
        let mut files = BTreeMap::new();
        for (k, e) in index.iter() {
            files.insert(k.to_string(), e.identity.size);
            for r in &e.variants {
                files.insert(r.path.clone(), r.size);
            }
            for (_, r) in &e.deltas {
                files.insert(r.path.clone(), r.size);
            }
        }
        Scan {
            files,
            ..Scan::default()
        }
    }

    fn delta_file(key: &str, d: u8, coding: &str) -> String {
        format!("{key}.{}.{coding}", hex(&[d; 32]))
    }

    #[test]
    fn every_representation_is_an_object_with_the_headers_serve_sends() {
        let idx = fixture::index(&[(
            APP,
            &[("dcb", 1, 90), ("dcz", 1, 93)],
            Some(r#"match="/assets/app-*.js""#),
        )]);
        let l = plan(&idx, &scan_of(&idx), None);
        assert!(l.skipped.is_empty(), "{:?}", l.skipped);
        let keys: Vec<&str> = l.objects.iter().map(|o| o.key.as_str()).collect();
        let (b, z) = (delta_file(APP, 1, "dcb"), delta_file(APP, 1, "dcz"));
        assert_eq!(keys, [APP, &b, &z]);
        let delta = &l.objects[1];
        assert_eq!(delta.content_encoding, Some("dcb"));
        assert_eq!(delta.content_type, "text/javascript; charset=utf-8");
        assert_eq!(delta.cache_control, crate::serve::CACHE_IMMUTABLE);
        assert_eq!(delta.etag.as_deref(), Some("\"dcb1\""));
        assert_eq!(delta.vary, Some(VARY_DELTAS));
        assert_eq!(
            delta
                .metadata
                .get("precompress-use-as-dictionary")
                .map(String::as_str),
            Some(r#"match="/assets/app-*.js""#)
        );
        assert_eq!(
            delta.metadata.get("precompress-etag").map(String::as_str),
            Some("\"dcb1\"")
        );
        assert_eq!(l.objects[0].content_encoding, None);
        assert_eq!(l.objects[0].etag.as_deref(), Some("\"id\""));
        assert_eq!(l.routes.len(), 1);
        assert_eq!(l.routes[0].deltas.len(), 2);
    }

    #[test]
    fn unknown_files_are_plain_and_stale_variants_are_left_out() {
        let idx = fixture::index(&[(APP, &[], None)]);
        let mut scan = scan_of(&idx);
        for f in [
            "notes.txt",
            "img/a.png",
            "gone.js",
            "gone.js.br",
            "assets/app-5e6f7a8b.js.gz",
        ] {
            scan.files.insert(f.into(), 7);
        }
        scan.files.insert("precompress-manifest.json".into(), 9);
        scan.hidden.push(".env".into());
        let l = plan(&idx, &scan, Some("precompress-manifest.json"));
        let keys: Vec<&str> = l.objects.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, [APP, "gone.js", "img/a.png", "notes.txt"]);
        let png = &l.objects[2];
        assert_eq!(png.content_type, "image/png");
        assert_eq!(png.cache_control, CACHE_REVALIDATE);
        assert!(png.etag.is_none() && png.metadata.is_empty());
        assert_eq!(l.skipped.len(), 3, "{:?}", l.skipped);
        assert!(l.skipped.iter().any(|s| s.starts_with("gone.js.br: ")));
        assert!(l
            .skipped
            .iter()
            .any(|s| s.starts_with("assets/app-5e6f7a8b.js.gz: ")));
        assert!(l.skipped.iter().any(|s| s.starts_with(".env: ")));
        // No variants, not a page: nothing for the edge to decide.
        assert!(l.routes.is_empty());
    }

    #[test]
    fn a_missing_variant_is_neither_uploaded_nor_routed() {
        let idx = fixture::index(&[(APP, &[("dcb", 1, 90), ("dcz", 1, 93)], None)]);
        let mut scan = scan_of(&idx);
        scan.files.remove(&delta_file(APP, 1, "dcz"));
        let l = plan(&idx, &scan, None);
        assert_eq!(l.objects.len(), 2);
        assert_eq!(l.routes[0].deltas.len(), 1);
        assert!(l.skipped[0].contains("not in DIR"), "{:?}", l.skipped);
    }

    #[test]
    fn keys_start_with_the_base_and_pages_come_last() {
        let mut idx = fixture::index_typed(
            &[("index.html", &[], None), ("404.html", &[], None)],
            "text/html; charset=utf-8",
        );
        idx.set_base("/app/");
        let mut scan = scan_of(&idx);
        scan.files.insert("a.css".into(), 3);
        let l = plan(&idx, &scan, None);
        let keys: Vec<&str> = l.objects.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, ["app/a.css", "app/404.html", "app/index.html"]);
        assert_eq!(l.objects[1].status, 404);
        assert_eq!(
            l.objects[1]
                .metadata
                .get("precompress-status")
                .map(String::as_str),
            Some("404")
        );
        assert_eq!(l.objects[2].status, 200);
        assert_eq!(l.routes.len(), 2, "pages are routed");
    }
}
