//! What a file is to a server, from its name alone: the types compressed by
//! default with the `Content-Type` to send and the kind brotli should assume,
//! the formats already compressed, and the names of precompress's own
//! variants (`x.br`, `x.zst`, `x.gz`).

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

/// The `Content-Type` a server should send for `rel`.
pub fn content_type(rel: &str) -> String {
    if let Some(ext) = extension(rel) {
        if let Some((_, _, ct)) = COMPRESSIBLE.iter().find(|(e, _, _)| *e == ext) {
            return (*ct).to_string();
        }
    }
    mime_guess::from_path(rel)
        .first_or_octet_stream()
        .essence_str()
        .to_string()
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
    }
}
