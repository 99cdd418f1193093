//! What a file is to a server, from its name alone: the types compressed by
//! default with the `Content-Type` to send and the kind brotli should assume,
//! the other types a web app serves, the formats already compressed, and the
//! names of precompress's own variants (`x.br`, `x.zst`, `x.gz`).
//!
//! These tables are the one source of `Content-Type`: the run writes it into
//! the manifest, and every server reads it from there, or for a file the
//! manifest does not list, from this table: `precompress serve` here, the
//! Node handler and the Worker from `npm/precompressor/lib/content-types.js`,
//! which a unit test below holds to be this table, written out.

use crate::model::coding::{Codec, ContentKind};

/// Extensions compressed by default (lower case), with the kind brotli should
/// assume and the `Content-Type` to send.
pub const COMPRESSIBLE: &[(&str, ContentKind, &str)] = &[
    ("js", ContentKind::Text, "text/javascript; charset=utf-8"),
    ("mjs", ContentKind::Text, "text/javascript; charset=utf-8"),
    ("cjs", ContentKind::Text, "text/javascript; charset=utf-8"),
    ("jsx", ContentKind::Text, "text/javascript; charset=utf-8"),
    ("ts", ContentKind::Text, "text/plain; charset=utf-8"),
    ("tsx", ContentKind::Text, "text/plain; charset=utf-8"),
    ("css", ContentKind::Text, "text/css; charset=utf-8"),
    ("html", ContentKind::Text, "text/html; charset=utf-8"),
    ("htm", ContentKind::Text, "text/html; charset=utf-8"),
    (
        "xhtml",
        ContentKind::Text,
        "application/xhtml+xml; charset=utf-8",
    ),
    ("svg", ContentKind::Text, "image/svg+xml"),
    ("json", ContentKind::Text, "application/json"),
    ("jsonld", ContentKind::Text, "application/ld+json"),
    ("map", ContentKind::Text, "application/json"),
    (
        "webmanifest",
        ContentKind::Text,
        "application/manifest+json",
    ),
    ("xml", ContentKind::Text, "application/xml"),
    ("rss", ContentKind::Text, "application/rss+xml"),
    ("atom", ContentKind::Text, "application/atom+xml"),
    ("txt", ContentKind::Text, "text/plain; charset=utf-8"),
    ("md", ContentKind::Text, "text/markdown; charset=utf-8"),
    ("csv", ContentKind::Text, "text/csv; charset=utf-8"),
    (
        "tsv",
        ContentKind::Text,
        "text/tab-separated-values; charset=utf-8",
    ),
    ("yaml", ContentKind::Text, "application/yaml"),
    ("yml", ContentKind::Text, "application/yaml"),
    ("vtt", ContentKind::Text, "text/vtt; charset=utf-8"),
    ("wgsl", ContentKind::Text, "text/plain; charset=utf-8"),
    ("glsl", ContentKind::Text, "text/plain; charset=utf-8"),
    ("gltf", ContentKind::Text, "model/gltf+json"),
    ("wasm", ContentKind::Binary, "application/wasm"),
    ("ico", ContentKind::Binary, "image/vnd.microsoft.icon"),
    ("bmp", ContentKind::Binary, "image/bmp"),
    ("ttf", ContentKind::Font, "font/ttf"),
    ("otf", ContentKind::Font, "font/otf"),
    ("eot", ContentKind::Font, "application/vnd.ms-fontobject"),
];

/// The other types a web app serves, by extension (lower case); anything else
/// is `application/octet-stream`.
pub const OTHER_TYPES: &[(&str, &str)] = &[
    ("png", "image/png"),
    ("apng", "image/apng"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("avif", "image/avif"),
    ("heic", "image/heic"),
    ("heif", "image/heif"),
    ("jxl", "image/jxl"),
    ("tif", "image/tiff"),
    ("tiff", "image/tiff"),
    ("woff", "font/woff"),
    ("woff2", "font/woff2"),
    ("glb", "model/gltf-binary"),
    ("pdf", "application/pdf"),
    ("zip", "application/zip"),
    ("gz", "application/gzip"),
    ("mp4", "video/mp4"),
    ("m4v", "video/mp4"),
    ("webm", "video/webm"),
    ("ogv", "video/ogg"),
    ("mov", "video/quicktime"),
    ("mp3", "audio/mpeg"),
    ("m4a", "audio/mp4"),
    ("aac", "audio/aac"),
    ("ogg", "audio/ogg"),
    ("oga", "audio/ogg"),
    ("opus", "audio/ogg"),
    ("flac", "audio/flac"),
    ("wav", "audio/wav"),
];

/// Formats that are compressed already: never inputs, whatever the globs say.
pub const ALREADY_COMPRESSED: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "avif", "heic", "heif", "jxl", "woff", "woff2", "zip",
    "gz", "tgz", "br", "zst", "dcb", "dcz", "xz", "bz2", "7z", "rar", "mp4", "m4v", "webm", "mkv",
    "mov", "mp3", "m4a", "aac", "ogg", "oga", "opus", "flac", "pdf",
];

/// Lower-cased extension of a file name, if it has one.
pub fn extension(name: &str) -> Option<String> {
    let base = name.rsplit('/').next().unwrap_or(name);
    let (stem, ext) = base.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// Every extension's `Content-Type`, in table order: [`COMPRESSIBLE`]'s,
/// then [`OTHER_TYPES`].
pub fn content_types() -> impl Iterator<Item = (&'static str, &'static str)> {
    COMPRESSIBLE
        .iter()
        .map(|(e, _, ct)| (*e, *ct))
        .chain(OTHER_TYPES.iter().copied())
}

/// The `Content-Type` a server should send for `rel`.
pub fn content_type(rel: &str) -> String {
    extension(rel)
        .and_then(|ext| content_types().find(|(e, _)| *e == ext))
        .map_or("application/octet-stream", |(_, ct)| ct)
        .to_string()
}

/// [`content_types`] as the JavaScript module the Node handler and the Worker
/// import (`npm/precompressor/lib/content-types.js`).
pub fn content_types_module() -> String {
    let mut out = String::from(
        "// Generated from src/model/content.rs, the one table of Content-Types: do not\n\
         // edit. `PRECOMPRESS_BLESS=1 cargo test --lib content` writes it anew; a unit\n\
         // test there fails while it differs.\n\
         // A Map, not an object: the extension comes from the request, and `x.constructor`\n\
         // or `x.__proto__` must not find Object.prototype's members.\n\
         export const CONTENT_TYPES = new Map([\n",
    );
    for (ext, ct) in content_types() {
        out.push_str(&format!("  [{ext:?}, {ct:?}],\n"));
    }
    out.push_str(
        "]);\n\n\
         /** The Content-Type of `key` by its extension, as `precompress serve` sends it\n\
         \x20* (model::content::extension: the last segment's, after a non-empty stem,\n\
         \x20* ASCII letters lowered). */\n\
         export function contentTypeOf(key) {\n\
         \x20 const name = key.slice(key.lastIndexOf('/') + 1);\n\
         \x20 const dot = name.lastIndexOf('.');\n\
         \x20 if (dot <= 0 || dot === name.length - 1) return 'application/octet-stream';\n\
         \x20 const ext = name.slice(dot + 1).replace(/[A-Z]/g, (c) => c.toLowerCase());\n\
         \x20 return CONTENT_TYPES.get(ext) ?? 'application/octet-stream';\n\
         }\n",
    );
    out
}

/// Brotli's model for `rel` (text unless the type says font or binary).
pub fn content_kind(rel: &str) -> ContentKind {
    extension(rel)
        .and_then(|ext| {
            COMPRESSIBLE
                .iter()
                .find(|(e, _, _)| *e == ext)
                .map(|(_, k, _)| *k)
        })
        .unwrap_or(ContentKind::Binary)
}

/// True when `name` is a variant precompress could have written (`x.br`,
/// `x.zst`, `x.gz`), returning the source name and codec.
pub fn variant_source(name: &str) -> Option<(&str, Codec)> {
    let (stem, suffix) = name.rsplit_once('.')?;
    let codec = Codec::ALL.into_iter().find(|c| c.suffix() == suffix)?;
    (!stem.is_empty() && !stem.ends_with('/')).then_some((stem, codec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_names() {
        assert_eq!(
            variant_source("a/app.js.br"),
            Some(("a/app.js", Codec::Brotli))
        );
        assert_eq!(variant_source("app.js.zst"), Some(("app.js", Codec::Zstd)));
        assert_eq!(variant_source("app.js.gz"), Some(("app.js", Codec::Gzip)));
        assert_eq!(variant_source("app.js"), None);
        assert_eq!(variant_source(".br"), None);
    }

    #[test]
    fn content_types() {
        assert_eq!(content_type("a.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("a.wasm"), "application/wasm");
        assert_eq!(content_type("a.png"), "image/png");
        assert_eq!(content_type("noext"), "application/octet-stream");
        assert_eq!(content_kind("a.woff"), ContentKind::Binary);
        assert_eq!(content_kind("a.otf"), ContentKind::Font);
        assert_eq!(content_type("a.WOFF"), "font/woff");
        assert_eq!(content_type("a.rs"), "application/octet-stream");
    }

    #[test]
    fn one_entry_an_extension() {
        let mut seen = std::collections::HashSet::new();
        for (ext, _) in super::content_types() {
            assert!(seen.insert(ext), "{ext} twice");
            assert_eq!(ext, ext.to_ascii_lowercase());
        }
    }

    /// The JavaScript servers' table is this one, written out: change the
    /// table, then `PRECOMPRESS_BLESS=1 cargo test --lib content`.
    #[test]
    fn the_javascript_table_is_this_table() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("npm/precompressor/lib/content-types.js");
        let want = content_types_module();
        if std::env::var_os("PRECOMPRESS_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let got =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            got == want,
            "{} differs from src/model/content.rs's table: run `PRECOMPRESS_BLESS=1 cargo test --lib content`",
            path.display()
        );
    }
}
