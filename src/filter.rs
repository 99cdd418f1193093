//! Which files are compressed: the default list of compressible types, the
//! formats that are already compressed, `--include`/`--exclude` globs, and the
//! content type a server should send for each file.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::coding::{Codec, ContentKind};
use crate::error::{Error, Result};

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

/// Why a file gets no variant of a codec. Serialized into the manifest.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Smaller than `--min-size`.
    TooSmall,
    /// The variant would not be strictly smaller than the source.
    NotSmaller,
    /// Smaller, but by less than `--min-ratio` asks.
    SavesTooLittle,
    /// Not a compressible type, or already compressed (png, woff2, ...).
    ExcludedType,
    /// Left out by `--exclude`, or not matched by `--include`.
    ExcludedGlob,
    /// A large source a fast zstd probe did not shrink at all: the slow
    /// encoders were not run on it.
    Incompressible,
    /// A `dcb` delta whose dictionary and file together pass brotli's 16 MiB
    /// window (RFC 9842 §4): not made (`dcz` still is).
    OverDcbWindow,
}

impl SkipReason {
    /// The name used in the manifest and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::TooSmall => "too_small",
            SkipReason::NotSmaller => "not_smaller",
            SkipReason::SavesTooLittle => "saves_too_little",
            SkipReason::ExcludedType => "excluded_type",
            SkipReason::ExcludedGlob => "excluded_glob",
            SkipReason::Incompressible => "incompressible",
            SkipReason::OverDcbWindow => "over_dcb_window",
        }
    }
}

/// What a skip reason's code (`too_small`, as in the manifest and `--json`)
/// means, in words for people; "" for a code it does not know.
pub fn reason_in_words(code: &str) -> &'static str {
    match code {
        "too_small" => "under `--min-size`",
        "not_smaller" => "the variant would not be smaller",
        "saves_too_little" => "the variant would save less than `--min-ratio` asks",
        "excluded_type" => "not a compressible type, or already compressed",
        "excluded_glob" => "`--exclude`, or not matched by `--include`",
        "incompressible" => "a fast zstd probe did not shrink it",
        "over_dcb_window" => "dictionary and file pass dcb's 16 MiB window",
        _ => "",
    }
}

/// Decides, from its relative path and size, whether a file is compressed.
#[derive(Debug)]
pub struct Filter {
    include: Option<Matcher>,
    exclude: Option<Matcher>,
    min_size: u64,
}

/// Globs with a `/` match the whole relative path; globs without one match the
/// file name in any folder (like .gitignore). `*` never crosses `/`; `**` does.
#[derive(Debug)]
struct Matcher {
    by_path: GlobSet,
    by_name: GlobSet,
}

/// The one glob compiler of `--include`, `--exclude` and budgets: `./` at the
/// start is dropped, `*` and `?` never match `/`, `\` escapes.
pub fn compile_glob(g: &str) -> std::result::Result<globset::Glob, globset::Error> {
    GlobBuilder::new(g.trim_start_matches("./"))
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

/// One glob, matched by the `--include` rules: with a `/` against the path
/// relative to DIR, without one against the file name in any folder.
#[derive(Debug, Clone)]
pub struct Pattern {
    matcher: globset::GlobMatcher,
    by_path: bool,
}

impl Pattern {
    /// Compiles `glob` (see [`compile_glob`]).
    pub fn new(glob: &str) -> std::result::Result<Pattern, globset::Error> {
        Ok(Pattern {
            matcher: compile_glob(glob)?.compile_matcher(),
            by_path: glob.contains('/'),
        })
    }

    /// Whether the asset at `rel` (relative to DIR, `/`-separated) matches.
    pub fn is_match(&self, rel: &str) -> bool {
        if self.by_path {
            self.matcher.is_match(rel)
        } else {
            self.matcher.is_match(rel.rsplit('/').next().unwrap_or(rel))
        }
    }
}

impl Matcher {
    fn new(globs: &[String]) -> Result<Option<Matcher>> {
        if globs.is_empty() {
            return Ok(None);
        }
        let mut by_path = GlobSetBuilder::new();
        let mut by_name = GlobSetBuilder::new();
        for g in globs {
            let glob =
                compile_glob(g).map_err(|e| Error::Config(format!("invalid glob {g:?}: {e}")))?;
            if g.contains('/') {
                by_path.add(glob);
            } else {
                by_name.add(glob);
            }
        }
        let build = |b: GlobSetBuilder| {
            b.build()
                .map_err(|e| Error::Config(format!("invalid globs: {e}")))
        };
        Ok(Some(Matcher {
            by_path: build(by_path)?,
            by_name: build(by_name)?,
        }))
    }

    fn is_match(&self, rel: &str) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        self.by_path.is_match(rel) || self.by_name.is_match(name)
    }
}

impl Filter {
    /// `include` replaces the default type list when non-empty; `exclude` wins
    /// over everything.
    pub fn new(include: &[String], exclude: &[String], min_size: u64) -> Result<Filter> {
        Ok(Filter {
            include: Matcher::new(include)?,
            exclude: Matcher::new(exclude)?,
            min_size,
        })
    }

    /// `None` when the file should be compressed, else why not.
    pub fn decide(&self, rel: &str, size: u64) -> Option<SkipReason> {
        let ext = extension(rel);
        if ext
            .as_deref()
            .is_some_and(|e| ALREADY_COMPRESSED.contains(&e))
        {
            return Some(SkipReason::ExcludedType);
        }
        if self.exclude.as_ref().is_some_and(|m| m.is_match(rel)) {
            return Some(SkipReason::ExcludedGlob);
        }
        match &self.include {
            Some(m) if !m.is_match(rel) => return Some(SkipReason::ExcludedGlob),
            Some(_) => {}
            None => {
                let known = ext
                    .as_deref()
                    .is_some_and(|e| COMPRESSIBLE.iter().any(|(c, _, _)| *c == e));
                if !known {
                    return Some(SkipReason::ExcludedType);
                }
            }
        }
        (size < self.min_size).then_some(SkipReason::TooSmall)
    }
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

    fn f(inc: &[&str], exc: &[&str]) -> Filter {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Filter::new(&s(inc), &s(exc), 1024).unwrap()
    }

    #[test]
    fn default_types() {
        let d = f(&[], &[]);
        assert_eq!(d.decide("assets/app.js", 5000), None);
        assert_eq!(d.decide("assets/App.JS", 5000), None);
        assert_eq!(d.decide("fonts/a.ttf", 5000), None);
        assert_eq!(
            d.decide("fonts/a.woff2", 5000),
            Some(SkipReason::ExcludedType)
        );
        assert_eq!(d.decide("img/a.png", 5000), Some(SkipReason::ExcludedType));
        assert_eq!(d.decide("README", 5000), Some(SkipReason::ExcludedType));
        assert_eq!(d.decide(".js", 5000), Some(SkipReason::ExcludedType));
        assert_eq!(d.decide("app.js", 1023), Some(SkipReason::TooSmall));
        assert_eq!(d.decide("app.js", 1024), None);
    }

    #[test]
    fn star_does_not_cross_slash_and_slashless_globs_match_names() {
        let d = f(&[], &["assets/*.map"]);
        assert_eq!(
            d.decide("assets/a.js.map", 5000),
            Some(SkipReason::ExcludedGlob)
        );
        assert_eq!(
            d.decide("assets/deep/a.js.map", 5000),
            None,
            "* must not match /"
        );
        let d = f(&[], &["assets/**/*.map"]);
        assert_eq!(
            d.decide("assets/deep/a.js.map", 5000),
            Some(SkipReason::ExcludedGlob)
        );
        let d = f(&[], &["*.map"]);
        assert_eq!(
            d.decide("x/y/z/a.js.map", 5000),
            Some(SkipReason::ExcludedGlob)
        );
    }

    #[test]
    fn include_replaces_defaults_but_never_admits_compressed_formats() {
        let d = f(&["*.dat", "data/**"], &[]);
        assert_eq!(d.decide("a/b.dat", 5000), None);
        assert_eq!(d.decide("data/x/y.bin", 5000), None);
        assert_eq!(d.decide("app.js", 5000), Some(SkipReason::ExcludedGlob));
        assert_eq!(
            d.decide("data/pic.png", 5000),
            Some(SkipReason::ExcludedType)
        );
    }

    #[test]
    fn exclude_wins_over_include() {
        let d = f(&["**/*.js"], &["vendor/**"]);
        assert_eq!(
            d.decide("vendor/a.js", 5000),
            Some(SkipReason::ExcludedGlob)
        );
        assert_eq!(d.decide("src/a.js", 5000), None);
    }

    #[test]
    fn bad_glob_is_a_config_error() {
        assert!(Filter::new(&["a[".into()], &[], 0).is_err());
    }

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
