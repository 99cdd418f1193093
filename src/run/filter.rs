//! Which files a run compresses: `--include`/`--exclude` globs and
//! `--min-size` over the vocabulary's types (`crate::model::content`).

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Error, Result};
use crate::model::content::{extension, ALREADY_COMPRESSED, COMPRESSIBLE};
use crate::model::skip::SkipReason;

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

    /// Whether `rel` may be a dictionary and get deltas: what gets variants,
    /// and what is only under `--min-size` (a small chunk re-sent after every
    /// release saves most of its bytes as a delta, while its variant saves
    /// little).
    pub fn takes_deltas(&self, rel: &str, size: u64) -> bool {
        matches!(self.decide(rel, size), None | Some(SkipReason::TooSmall))
    }

    /// Why `rel` of `size` bytes gets no variants, if it gets none (`None`:
    /// it is compressed).
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
}
