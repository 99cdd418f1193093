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
//!   viewer-response function ([`cloudfront_response`]) turns them into the
//!   headers; it also makes the 404 page a 404 (`precompress-status`).
//! - The viewer-request function ([`cloudfront_request`]) holds this release's
//!   routing data: for each asset with variants or deltas (and each page, for
//!   `/about` and `/docs/`), which codings it has and the order of their sizes,
//!   nothing more. It ports [`negotiate`](super::negotiate) line for line,
//!   since a CDN never decodes: a coding the client cannot read breaks the page.
//!   The rewritten URI is CloudFront's cache key, so the cache policy needs no
//!   header at all. Keys it does not know go on unchanged.
//! - Files the manifest does not describe are plain objects (type from the
//!   name, `no-cache`); dot-files, the manifest, stale variants (a variant's
//!   name beside its source that the manifest does not list), names no URL
//!   can hold (a `\`, which the run passes over) and links out of DIR are
//!   not uploaded, as no server here sends them ([`scan`]).
//!
//! CloudFront Functions are at most 10 KB. Over that the function is refused
//! ([`ObjectsError::TooLarge`]) rather than cut: a site that large needs its
//! routing data in a KeyValueStore, which this module does not write.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::model::coding::{Codec, DeltaCoding};
use crate::model::content::variant_source;
use crate::model::dictionary::{available_dictionary, delta_source};
use crate::model::path::check_relative;
use crate::serve::path::resolve;
use crate::serve::{Coding, Index, CACHE_REVALIDATE};

/// CloudFront Functions' quota on a function's code: 10 KB, not adjustable.
pub const CLOUDFRONT_FUNCTION_LIMIT: usize = 10 * 1024;

/// The page static hosts (and `precompress serve`) send with a 404.
pub const NOT_FOUND_PAGE: &str = "404.html";

/// `Vary` of every response of an asset that has deltas.
const VARY_DELTAS: &str = "Accept-Encoding, Available-Dictionary";
/// `Vary` of every response of an asset that has variants only.
const VARY_VARIANTS: &str = "Accept-Encoding";

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
        /// [`CLOUDFRONT_FUNCTION_LIMIT`].
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
    /// What `precompress serve` sends ([`Entry::cache_control`](super::Entry)).
    pub cache_control: &'static str,
    /// The manifest's strong ETag, quotes included (stored as metadata: the
    /// store sets its own); `None` for files the manifest does not describe.
    pub etag: Option<String>,
    /// `Vary`, for the edge to add.
    pub vary: Option<&'static str>,
    /// `Use-As-Dictionary`, for the edge to add.
    pub use_as_dictionary: Option<String>,
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

/// The files under DIR: what [`plan`] needs of the disk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// Regular files (and links to files inside DIR) by relative path: their sizes.
    pub files: BTreeMap<String, u64>,
    /// Dot-files and dot-folders (`.well-known` excepted), precompress's own left out.
    pub hidden: Vec<String>,
    /// Paths that are not UTF-8, so no object key.
    pub unnamed: Vec<PathBuf>,
    /// Names no URL path can hold (a backslash in a name): the run passes
    /// them over too, and no server can be asked for them.
    pub unservable: Vec<String>,
    /// Links that lead out of DIR (or nowhere): `precompress serve` answers
    /// 404 for them, and nothing outside DIR is ever uploaded.
    pub outside: Vec<String>,
}

/// Lists the files under `root` by the rules the run and `precompress serve`
/// go by, so the upload holds what they would serve and nothing else: a
/// name is a key only as the run's walk takes it (`/` for the platform's
/// separator and nothing else, then [`check_relative`]: a `\` in a name is
/// not a folder), and a file is taken only where `precompress serve` would
/// send it ([`resolve`]: its canonical path inside the canonical DIR, so a
/// link to a file in DIR counts as the file and a link out of DIR is left
/// out). Dot-folders and links to folders are not entered.
pub fn scan(root: &Path) -> Result<Scan, ObjectsError> {
    let mut out = Scan::default();
    let canonical_root = std::fs::canonicalize(root).map_err(|source| ObjectsError::Root {
        path: root.to_path_buf(),
        source,
    })?;
    let hidden = |name: &str| name.starts_with('.') && name != ".well-known";
    let mut walker = walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = walker.next() {
        let entry = entry.map_err(|e| ObjectsError::Walk {
            path: e.path().unwrap_or(root).to_path_buf(),
            source: e,
        })?;
        if entry.depth() == 0 {
            continue;
        }
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        // As run/walk.rs: only the platform's separator is one.
        let Some(rel) = rel
            .to_str()
            .map(|s| s.replace(std::path::MAIN_SEPARATOR, "/"))
        else {
            out.unnamed.push(entry.path().to_path_buf());
            if entry.file_type().is_dir() {
                walker.skip_current_dir();
            }
            continue;
        };
        let name = entry.file_name().to_str().unwrap_or_default();
        if hidden(name) {
            if !name.starts_with(".precompress") {
                out.hidden.push(rel.clone());
            }
            if entry.file_type().is_dir() {
                walker.skip_current_dir();
            }
            continue;
        }
        if entry.file_type().is_dir() {
            continue;
        }
        if check_relative(&rel).is_err() {
            out.unservable.push(rel);
            continue;
        }
        // Through a link only to a file inside DIR, as `precompress serve`
        // sends it: `aws s3 cp` uploads what the link points to.
        let Some(file) = resolve(&canonical_root, &rel) else {
            if entry.path_is_symlink() {
                out.outside.push(rel);
            }
            continue;
        };
        match std::fs::metadata(file) {
            Ok(md) if md.is_file() => {
                out.files.insert(rel, md.len());
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The objects of `index` (loaded from DIR, at its base) given what `scan`
/// found under DIR, and the routes for the edge. `manifest` is the manifest's
/// path relative to DIR, if it lies inside.
pub fn plan(index: &Index, scan: &Scan, manifest: Option<&str>) -> Listing {
    let prefix = index.base().trim_start_matches('/');
    let mut objects = Vec::new();
    let mut routes = Vec::new();
    let mut skipped = Vec::new();
    let mut described: BTreeSet<&str> = BTreeSet::new();
    let present = |path: &str, size: u64| scan.files.get(path) == Some(&size);
    let mut assets: Vec<_> = index.iter().collect();
    assets.sort_by_key(|(k, _)| *k);
    for (key, entry) in assets {
        if !present(key, entry.identity.size) {
            skipped.push(format!("{key}: not in DIR with the manifest's size"));
            continue;
        }
        described.insert(key);
        let mut route = Route {
            key: key.to_string(),
            identity: entry.identity.size,
            variants: Vec::new(),
            deltas: Vec::new(),
        };
        let mut reps = Vec::new();
        for rep in &entry.variants {
            let Some(Coding::Variant(codec)) = rep.coding else {
                continue;
            };
            // Its own name (`KEY.br`): the index refuses a manifest that lists another.
            described.insert(&rep.path);
            if !present(&rep.path, rep.size) {
                skipped.push(format!("{}: not in DIR with the manifest's size", rep.path));
            } else {
                route.variants.push((codec, rep.size));
                reps.push((rep, codec.token()));
            }
        }
        for (hash, rep) in &entry.deltas {
            let Some(Coding::Delta(coding)) = rep.coding else {
                continue;
            };
            described.insert(&rep.path);
            if !present(&rep.path, rep.size) {
                skipped.push(format!("{}: not in DIR with the manifest's size", rep.path));
            } else {
                route.deltas.push((*hash, coding, rep.size));
                reps.push((rep, coding.token()));
            }
        }
        let vary = if !route.deltas.is_empty() {
            Some(VARY_DELTAS)
        } else if !route.variants.is_empty() {
            Some(VARY_VARIANTS)
        } else {
            None
        };
        let status = if key == NOT_FOUND_PAGE { 404 } else { 200 };
        let object = |file: &str, size: u64, encoding: Option<&'static str>, etag: &str| {
            with_metadata(Object {
                key: format!("{prefix}{file}"),
                file: file.to_string(),
                size,
                content_encoding: encoding,
                content_type: entry.content_type.clone(),
                cache_control: entry.cache_control,
                etag: Some(etag.to_string()),
                vary,
                use_as_dictionary: entry.use_as_dictionary.clone(),
                link: entry.link.clone(),
                status,
                metadata: BTreeMap::new(),
            })
        };
        objects.push(object(key, entry.identity.size, None, &entry.identity.etag));
        for (rep, token) in reps {
            objects.push(object(&rep.path, rep.size, Some(token), &rep.etag));
        }
        // Pages are routed even without variants: `/about` and `/docs/` map to them.
        if !route.variants.is_empty() || !route.deltas.is_empty() || key.ends_with(".html") {
            routes.push(route);
        }
    }
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
        objects.push(Object {
            key: format!("{prefix}{path}"),
            file: path.clone(),
            size,
            content_encoding: None,
            content_type: crate::model::content::content_type(path),
            cache_control: CACHE_REVALIDATE,
            etag: None,
            vary: None,
            use_as_dictionary: None,
            link: None,
            status: 200,
            metadata: BTreeMap::new(),
        });
    }
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
    if o.status != 200 {
        m.insert("precompress-status", o.status.to_string());
    }
    o.metadata = m;
    o
}

/// One JSON object per line.
pub fn json_lines(objects: &[Object]) -> String {
    let mut out = String::new();
    for o in objects {
        out.push_str(&serde_json::to_string(o).expect("plain data"));
        out.push('\n');
    }
    out
}

/// The columns of [`tsv`].
pub const TSV_COLUMNS: &[&str] = &[
    "key",
    "file",
    "size",
    "content_encoding",
    "content_type",
    "cache_control",
    "etag",
    "vary",
    "use_as_dictionary",
    "link",
    "status",
];

/// A header line of [`TSV_COLUMNS`], then one line per object; an absent
/// value is empty, and `\`, tab, CR and LF in a value are written `\\`, `\t`,
/// `\r`, `\n`.
pub fn tsv(objects: &[Object]) -> String {
    let mut out = TSV_COLUMNS.join("\t");
    out.push('\n');
    for o in objects {
        let size = o.size.to_string();
        let status = o.status.to_string();
        let fields = [
            o.key.as_str(),
            &o.file,
            &size,
            o.content_encoding.unwrap_or(""),
            &o.content_type,
            o.cache_control,
            o.etag.as_deref().unwrap_or(""),
            o.vary.unwrap_or(""),
            o.use_as_dictionary.as_deref().unwrap_or(""),
            o.link.as_deref().unwrap_or(""),
            &status,
        ];
        let escaped: Vec<String> = fields.iter().map(|f| tsv_escape(f)).collect();
        out.push_str(&escaped.join("\t"));
        out.push('\n');
    }
    out
}

fn tsv_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str(r"\\"),
            '\t' => o.push_str(r"\t"),
            '\n' => o.push_str(r"\n"),
            '\r' => o.push_str(r"\r"),
            c => o.push(c),
        }
    }
    o
}

/// `dir` joined with an object's file, as the upload commands name it.
fn local_path(dir: &str, file: &str) -> String {
    let d = dir.trim_end_matches('/');
    if d.is_empty() {
        format!("/{file}")
    } else {
        format!("{d}/{file}")
    }
}

/// A POSIX shell script of `aws s3 cp` lines, one per object, run with
/// `BUCKET` set; `dir` is DIR as the script's working directory reaches it.
pub fn aws(objects: &[Object], dir: &str) -> String {
    let mut out = script_head(
        "aws",
        "BUCKET=my-bucket sh upload.sh",
        "BUCKET",
        "the bucket name",
    );
    for o in objects {
        let _ = write!(
            out,
            "aws s3 cp {} s3://\"$BUCKET\"/{} --content-type {}",
            sh_quote(&local_path(dir, &o.file)),
            sh_quote(&o.key),
            sh_quote(&o.content_type)
        );
        if let Some(e) = o.content_encoding {
            let _ = write!(out, " --content-encoding {}", sh_quote(e));
        }
        let _ = write!(out, " --cache-control {}", sh_quote(o.cache_control));
        if !o.metadata.is_empty() {
            // JSON, not KEY=VALUE: the CLI's shorthand would split the values at
            // commas and strip the ETag's quotes.
            let json = serde_json::to_string(&o.metadata).expect("plain data");
            let _ = write!(out, " --metadata {}", sh_quote(&json));
        }
        out.push('\n');
    }
    out
}

/// A POSIX shell script of `rclone copyto` lines, one per object, run with
/// `REMOTE` set to an rclone remote and bucket of an S3 API (S3, R2).
pub fn rclone(objects: &[Object], dir: &str) -> String {
    let mut out = script_head(
        "rclone",
        "REMOTE=s3:my-bucket sh upload.sh",
        "REMOTE",
        "the rclone remote and bucket, e.g. s3:my-bucket",
    );
    for o in objects {
        let _ = write!(
            out,
            "rclone copyto {} \"$REMOTE\"/{}",
            sh_quote(&local_path(dir, &o.file)),
            sh_quote(&o.key)
        );
        let mut header = |name: &str, value: &str| {
            let _ = write!(
                out,
                " --header-upload {}",
                sh_quote(&format!("{name}: {value}"))
            );
        };
        header("Content-Type", &o.content_type);
        if let Some(e) = o.content_encoding {
            header("Content-Encoding", e);
        }
        header("Cache-Control", o.cache_control);
        for (name, value) in &o.metadata {
            header(&format!("X-Amz-Meta-{}", title_case(name)), value);
        }
        out.push('\n');
    }
    out
}

/// `precompress-use-as-dictionary` as `Precompress-Use-As-Dictionary`.
fn title_case(name: &str) -> String {
    name.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next().map_or(String::new(), |f| {
                f.to_ascii_uppercase().to_string() + c.as_str()
            })
        })
        .collect::<Vec<_>>()
        .join("-")
}

fn script_head(tool: &str, run: &str, var: &str, what: &str) -> String {
    format!(
        "#!/bin/sh\n\
         # Uploads a precompressed folder, one object per file with the headers precompress\n\
         # serve would send (precompress {}, `precompress objects DIR --format {tool}`).\n\
         # Run: {run}. Pages come last, so none names a file not uploaded yet.\n\
         set -eu\n\
         : \"${{{var}:?set {var} to {what}}}\"\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// `s` as one POSIX shell word: as it is when it holds only characters no
/// shell treats specially, else single-quoted (`'` written `'\''`).
pub fn sh_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:=@%+,-".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The viewer-request CloudFront Function (runtime `cloudfront-js-2.0`) for
/// `listing`, or [`ObjectsError::TooLarge`] (naming `origin`) when it would
/// not fit in [`CLOUDFRONT_FUNCTION_LIMIT`].
pub fn cloudfront_request(listing: &Listing, origin: &Path) -> Result<String, ObjectsError> {
    let source = compact(REQUEST_JS)
        .replace("{version}", env!("CARGO_PKG_VERSION"))
        .replace("/*DATA*/\n", &routing_data(listing));
    if source.len() > CLOUDFRONT_FUNCTION_LIMIT {
        return Err(ObjectsError::TooLarge {
            path: origin.to_path_buf(),
            size: source.len(),
            limit: CLOUDFRONT_FUNCTION_LIMIT,
            routes: listing.routes.len(),
        });
    }
    Ok(source)
}

/// The viewer-response CloudFront Function: the same for every site.
pub fn cloudfront_response() -> String {
    compact(RESPONSE_JS).replace("{version}", env!("CARGO_PKG_VERSION"))
}

/// `js` without its indentation, blank lines and comments but the header:
/// every byte of code is one less for the routes under the 10 KB.
fn compact(js: &str) -> String {
    let mut out = String::with_capacity(js.len());
    let mut header = true;
    for line in js.lines() {
        header &= line.starts_with("//");
        let code = line.trim_start();
        if header || !(code.is_empty() || code.starts_with("//")) {
            out.push_str(if header { line } else { code });
            out.push('\n');
        }
    }
    out
}

/// The `var` lines the request function starts with: `B` the base, `M` the
/// manifest's key (or null), `P` the 404 page, `D` the dictionaries (as
/// `Available-Dictionary` sends them), `A` the routes by folder.
///
/// A route is `"RANK TOKEN…"`: the sizes of all of an asset's
/// representations replaced by their rank among them (0 the smallest, equal
/// sizes equal ranks), since negotiation only compares them; the identity's
/// rank, then `b3` (br, rank 3), `z1` (zstd), `g4` (gzip) in the index's
/// order, then `0b0` (dcb against dictionary `D[0]`), `0z0` (dcz). A folder's
/// routes are an array of name, route, name, route, …: no object key can be a
/// name like `__proto__`.
fn routing_data(listing: &Listing) -> String {
    let mut dictionaries: Vec<[u8; 32]> = Vec::new();
    let mut folders: BTreeMap<&str, Vec<(&str, String)>> = BTreeMap::new();
    for r in &listing.routes {
        let mut sizes: Vec<u64> = std::iter::once(r.identity)
            .chain(r.variants.iter().map(|v| v.1))
            .chain(r.deltas.iter().map(|d| d.2))
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        let rank = |s: u64| sizes.binary_search(&s).unwrap_or(0);
        let mut value = rank(r.identity).to_string();
        for (codec, size) in &r.variants {
            let letter = match codec {
                Codec::Brotli => 'b',
                Codec::Zstd => 'z',
                Codec::Gzip => 'g',
            };
            let _ = write!(value, " {letter}{}", rank(*size));
        }
        for (hash, coding, size) in &r.deltas {
            let i = dictionaries
                .iter()
                .position(|d| d == hash)
                .unwrap_or_else(|| {
                    dictionaries.push(*hash);
                    dictionaries.len() - 1
                });
            let letter = match coding {
                DeltaCoding::Dcb => 'b',
                DeltaCoding::Dcz => 'z',
            };
            let _ = write!(value, " {i}{letter}{}", rank(*size));
        }
        let (folder, name) = match r.key.rfind('/') {
            Some(i) => r.key.split_at(i + 1),
            None => ("", r.key.as_str()),
        };
        folders.entry(folder).or_default().push((name, value));
    }
    let list = |items: Vec<String>| items.join(",");
    let d = list(
        dictionaries
            .iter()
            .map(|h| js_str(&available_dictionary(h)))
            .collect(),
    );
    let a = list(
        folders
            .iter()
            .map(|(folder, routes)| {
                let pairs: Vec<String> = routes
                    .iter()
                    .flat_map(|(n, v)| [js_str(n), js_str(v)])
                    .collect();
                format!("{}:[{}]", js_str(folder), pairs.join(","))
            })
            .collect(),
    );
    let m = listing.manifest.as_deref().map_or("null".into(), js_str);
    format!(
        "var B = {}, M = {m}, P = {};\nvar D = [{d}];\nvar A = {{{a}}};\n",
        js_str(&listing.base),
        js_str(NOT_FOUND_PAGE)
    )
}

/// A JavaScript string literal that is ASCII: the runtime is ES5.1 at heart,
/// where U+2028 in a literal is a syntax error, and bytes count toward 10 KB.
fn js_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            ' '..='~' => o.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(o, "\\u{u:04x}");
                }
            }
        }
    }
    o.push('"');
    o
}

/// The viewer-request function. ES5 syntax only (the runtime documents
/// `const`, arrow functions and more, but a function that uses none of them
/// cannot fail on the edge for using one); `Buffer` is the runtime's.
const REQUEST_JS: &str = r#"// precompress {version}: CloudFront Function (runtime cloudfront-js-2.0) for viewer request,
// from `precompress objects DIR --edge cloudfront`; `--edge cloudfront-response` goes on viewer
// response. Rewrites the URI to the object precompress serve would send: Accept-Encoding by
// weight, then size; RFC 9842 deltas; / /docs/ /about as index.html docs/index.html about.html.
// Cache policy: no headers, cookies or query strings; Compress off. It lists this release's
// files: publish it again on every deploy.
/*DATA*/
var V={b:"br",z:"zstd",g:"gzip"},X={b:".br",z:".zst",g:".gz"},W={b:"dcb",z:"dcz"};
function handler(ev){
var r=ev.request,u=r.uri,p=u,k=[],e,i,s;
// Only GET and HEAD, whatever the behavior lets through.
if(r.method!=="GET"&&r.method!=="HEAD")return re(405,"Method Not Allowed",{allow:"GET, HEAD"});
// Outside the base: not ours; the base without its slash: redirected to it.
if(B!=="/"){if(u.slice(0,B.length-1)!==B.slice(0,-1))return r;p=u.slice(B.length-1);if(!p)return re(301,"Moved Permanently",{location:u+"/"+qs(r.querystring)})}
if(p.charAt(0)!=="/")return r;
// As serve::path: each segment decoded alone; `.`, `..`, `/`, `\`, NUL or bad
// percent-encoding: 400; a dot-file (but .well-known): the 404 page. The first wins.
var g=p.slice(1).split("/");
for(i=0;i<g.length;i++){try{s=decodeURIComponent(g[i])}catch(x){return re(400,"Bad Request",{})}
if(s==="."||s===".."||/[\/\\\0]/.test(s))return re(400,"Bad Request",{});
if(s.charAt(0)==="."&&s!==".well-known")return nf(r);
if(s)k.push(s)}
var key=k.join("/"),end=p.slice(-1)==="/",ix=key?key+"/index.html":"index.html";
// A file (with a slash after it: 404); a folder's index.html (once the folder has its
// slash); NAME.html for NAME when NAME has no dot.
if((e=get(key))!==undefined)return end?nf(r):pick(key,e,r);
if((e=get(ix))!==undefined)return key&&!end?re(301,"Moved Permanently",{location:B+p.replace(/^\/+/,"")+"/"+qs(r.querystring)}):pick(ix,e,r);
if(key&&!end&&k[k.length-1].indexOf(".")<0&&(e=get(key+".html"))!==undefined)return pick(key+".html",e,r);
// A variant or delta by its own name, or the manifest: the 404 page. Anything else goes on.
// [\s\S], not `.`: a name may hold a newline, CR or U+2028 (no `s` flag in ES5).
var v=/^([\s\S]+)\.(br|zst|gz|[0-9a-f]{64}\.dc[bz])$/.exec(key);
return key===M||(v&&get(v[1])!==undefined)?nf(r):r}
// The route of the asset at k, or undefined.
function get(k){var i=k.lastIndexOf("/")+1,d=k.slice(0,i),n=k.slice(i),f=A.hasOwnProperty(d)?A[d]:[],j;
for(j=0;j<f.length;j+=2)if(f[j]===n)return f[j+1]}
function nf(r){var e=get(P);return e===undefined?re(404,"Not Found",{}):pick(P,e,r)}
// The representation of asset `key` (route e) for r: r with its URI rewritten, or a 406.
// Candidates as Entry::select_with_dictionary: the variants, then the deltas against
// the dictionary held (a repeated Available-Dictionary is none; only a listed hash matches).
function pick(key,e,r){var h=r.headers,t=e.split(" "),c=[],nv=0,nd=0,d=h["available-dictionary"],a=h["accept-encoding"],m,i,b,x;
d=!d||d.multiValue?-1:D.indexOf(d.value.replace(/^[ \t]+|[ \t]+$/g,""));
for(i=1;i<t.length;i++){m=/^(\d*)([bzg])(\d+)$/.exec(t[i]);
if(!m[1]){nv++;c.push([V[m[2]],+m[3],0,X[m[2]]])}
else{nd++;if(+m[1]===d)c.push([W[m[2]],+m[3],1,"."+Buffer.from(D[d].slice(1,-1),"base64").toString("hex")+"."+W[m[2]]])}}
// No Accept-Encoding: identity. Repeated fields are joined with commas.
b=a===undefined?[0,0,0]:choose(weights(a.multiValue?a.multiValue.map(function(y){return y.value}).join(","):a.value),+t[0],c);
if(!b){x={"cache-control":"no-cache"};if(nd||nv)x.vary=nd?"Accept-Encoding, Available-Dictionary":"Accept-Encoding";return re(406,"Not Acceptable",x)}
r.uri=B+key.split("/").map(encodeURIComponent).join("/")+(b[2]?b[2][3]:"");return r}
// As negotiate::AcceptEncoding::parse: {" token": weight in thousandths}, the first listing of
// each token, from the first 64 parts; a part off the grammar (token [; q=qvalue]) is skipped.
function weights(v){var w={},p=v.split(",").slice(0,64),i,x,t,q,m;
for(i=0;i<p.length;i++){x=p[i].split(";");t=x[0].replace(/^[ \t]+|[ \t]+$/g,"");q=1000;
if(x.length>2||!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(t))continue;
if(x.length>1){m=/^[ \t]*q[ \t]*=[ \t]*(?:0(?:\.([0-9]{0,3}))?|(1)(?:\.0{0,3})?)[ \t]*$/i.exec(x[1]);if(!m)continue;q=m[2]?1000:+((m[1]||"")+"00").slice(0,3)}
t=" "+t.toLowerCase();if(t===" x-gzip")t=" gzip";if(w[t]===undefined)w[t]=q}
return w}
// As negotiate::choose: the highest weight, then the smallest, then the first; identity
// neither named nor covered by `*` ranks below every named coding; `*` never covers a delta.
function choose(w,id,c){var q=w[" identity"],b,i,x;if(q===undefined)q=w[" *"];b=q===0?null:[q===undefined?0.5:q,id,0];
for(i=0;i<c.length;i++){x=c[i];q=w[" "+x[0]];if(q===undefined)q=x[2]?0:w[" *"]||0;
if(q&&(!b||q>b[0]||(q===b[0]&&x[1]<b[1])))b=[q,x[1],x]}return b}
function qs(q){var o=[],n,v,i;for(n in q){v=q[n].multiValue||[q[n]];for(i=0;i<v.length;i++)o.push(v[i].value===""?n:n+"="+v[i].value)}return o.length?"?"+o.join("&"):""}
function re(s,t,h){var o={},n;for(n in h)o[n]={value:h[n]};return{statusCode:s,statusDescription:t,headers:o}}
"#;

/// The viewer-response function: the headers a bucket cannot store, from the
/// object's metadata.
const RESPONSE_JS: &str = r#"// precompress {version}: CloudFront Function, runtime cloudfront-js-2.0, viewer response
// (precompress objects DIR --edge cloudfront-response), paired with --edge cloudfront on viewer
// request. Turns the metadata the upload stored (x-amz-meta-precompress-*) into the headers S3
// cannot store: the manifest's ETag (S3's own is an MD5), Vary, Use-As-Dictionary, Link;
// the 404 page's status; no Accept-Ranges on a compressed body; nosniff.
function handler(event) {
  var s = event.response, h = s.headers, p = "x-amz-meta-precompress-", n = ["etag", "vary", "use-as-dictionary", "link"], i, v;
  for (i = 0; i < n.length; i++) {
    v = h[p + n[i]];
    if (v) { h[n[i]] = {value: v.value}; delete h[p + n[i]]; }
  }
  v = h[p + "status"];
  if (v) {
    if (v.value === "404") { s.statusCode = 404; s.statusDescription = "Not Found"; }
    delete h[p + "status"];
  }
  if (h["content-encoding"]) delete h["accept-ranges"];
  h["x-content-type-options"] = {value: "nosniff"};
  return s;
}
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::dictionary::hex;
    use crate::serve::fixture;

    const APP: &str = "assets/app-5e6f7a8b.js";

    /// A scan holding every file `index` describes, at the manifest's sizes.
    fn scan_of(index: &Index) -> Scan {
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

    /// Issue #29: a `\` was taken for a folder, so `..\secret.txt` became
    /// `../secret.txt` (a file outside DIR, uploaded) and `a\b.js` replaced
    /// the real `a/b.js`; a link out of DIR was listed though `serve` answers
    /// 404 for it. The scan now goes by the run's name rule and serve's
    /// resolution.
    #[cfg(unix)]
    #[test]
    fn backslash_names_and_links_out_of_dir_are_never_listed() {
        let tmp = tempfile::tempdir().unwrap();
        let (root, outside) = (tmp.path().join("dist"), tmp.path().join("secret.txt"));
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::write(&outside, "SECRET").unwrap();
        for (name, text) in [
            ("..\\secret.txt", "x"),
            ("a\\b.js", "the impostor"),
            ("a/b.js", "the real one"),
            ("..\\.git\\config", "x"),
            ("x\\..\\..\\secret.txt", "x"),
            ("ok.txt", "fine"),
        ] {
            std::fs::write(root.join(name), text).unwrap();
        }
        std::os::unix::fs::symlink(&outside, root.join("leak.txt")).unwrap();
        std::os::unix::fs::symlink("../secret.txt", root.join("a/leak2.txt")).unwrap();
        std::os::unix::fs::symlink("ok.txt", root.join("alias.txt")).unwrap();
        std::os::unix::fs::symlink("missing.txt", root.join("broken.txt")).unwrap();
        let s = scan(&root).unwrap();
        let files: Vec<(&str, u64)> = s.files.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(files, [("a/b.js", 12), ("alias.txt", 4), ("ok.txt", 4)]);
        assert_eq!(s.unservable, ["a\\b.js", "x\\..\\..\\secret.txt"]);
        assert_eq!(s.outside, ["a/leak2.txt", "broken.txt", "leak.txt"]);
        // A dot-file by its whole name, not by what follows its last `\`.
        assert_eq!(s.hidden, ["..\\.git\\config", "..\\secret.txt"]);
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

    #[test]
    fn routes_rank_sizes_and_share_dictionaries() {
        let listing = Listing {
            objects: Vec::new(),
            routes: vec![
                Route {
                    key: "a/x.js".into(),
                    identity: 1000,
                    variants: vec![
                        (Codec::Zstd, 243),
                        (Codec::Brotli, 265),
                        (Codec::Gzip, 1000),
                    ],
                    deltas: vec![
                        ([1; 32], DeltaCoding::Dcb, 67),
                        ([1; 32], DeltaCoding::Dcz, 67),
                    ],
                },
                Route {
                    key: "index.html".into(),
                    identity: 50,
                    variants: Vec::new(),
                    deltas: vec![([2; 32], DeltaCoding::Dcz, 9)],
                },
            ],
            skipped: Vec::new(),
            manifest: Some("precompress-manifest.json".into()),
            base: "/".into(),
        };
        let d = routing_data(&listing);
        assert_eq!(
            d,
            format!(
                "var B = \"/\", M = \"precompress-manifest.json\", P = \"404.html\";\n\
                 var D = [\"{}\",\"{}\"];\n\
                 var A = {{\"\":[\"index.html\",\"1 1z0\"],\"a/\":[\"x.js\",\"3 z1 b2 g3 0b0 0z0\"]}};\n",
                available_dictionary(&[1; 32]),
                available_dictionary(&[2; 32])
            )
        );
    }

    #[test]
    fn the_functions_are_es5_and_small() {
        let idx = fixture::index(&[(APP, &[("dcb", 1, 90)], Some(r#"match="/assets/app-*.js""#))]);
        let l = plan(&idx, &scan_of(&idx), Some("precompress-manifest.json"));
        let f = cloudfront_request(&l, Path::new("dist")).unwrap();
        let g = cloudfront_response();
        for src in [&f, &g] {
            assert!(src.is_ascii());
            assert!(src.contains("function handler("));
            for modern in ["=>", "?.", "??", "...", "const ", "let ", "class "] {
                assert!(!src.contains(modern), "{modern} in\n{src}");
            }
        }
        assert!(!f.contains("/*DATA*/") && !f.contains("{version}"));
        assert!(f.len() < 5000, "{} bytes", f.len());
    }

    #[test]
    fn a_function_over_10_kb_is_refused_naming_the_folder() {
        let many: Vec<String> = (0..300)
            .map(|i| format!("pages/a-rather-long-page-name-{i}.html"))
            .collect();
        let assets: Vec<fixture::Asset> =
            many.iter().map(|k| (k.as_str(), &[][..], None)).collect();
        let idx = fixture::index_typed(&assets, "text/html; charset=utf-8");
        let l = plan(&idx, &scan_of(&idx), None);
        let e = cloudfront_request(&l, Path::new("dist")).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("dist: the CloudFront Function for its 300 negotiated files would be "),
            "{msg}"
        );
        assert!(
            msg.contains("over CloudFront Functions' 10 KB limit (10240 bytes)"),
            "{msg}"
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("assets/app-1.js.br"), "assets/app-1.js.br");
        assert_eq!(sh_quote("it's $HOME `x`"), r"'it'\''s $HOME `x`'");
        assert_eq!(sh_quote(""), "''");
        assert_eq!(
            sh_quote("text/html; charset=utf-8"),
            "'text/html; charset=utf-8'"
        );
        assert_eq!(js_str("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(js_str("café\u{2028}😀"), r#""caf\u00e9\u2028\ud83d\ude00""#);
        assert_eq!(tsv_escape("a\tb\nc\\d"), r"a\tb\nc\\d");
        assert_eq!(
            title_case("precompress-use-as-dictionary"),
            "Precompress-Use-As-Dictionary"
        );
        assert_eq!(local_path("dist/", "a b.js"), "dist/a b.js");
    }
}
