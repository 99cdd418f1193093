//! `precompress.toml`: the settings a team wants pinned, next to the code.
//!
//! Found by `--config PATH`, or else by looking in DIR and then each parent
//! folder up to the project root (the first folder holding `.git`) for a
//! `precompress.toml`; `--no-config` turns the search off. Keys are the long
//! option names (`brotli-quality`, `min-size`, ...), plus a `[budget]` table
//! of `GLOB = SIZE`. A key the file does not know is an error naming the key,
//! so a typo never silently does nothing. A flag given on the command line (or
//! through its environment variable) wins over the file; budgets from both
//! apply, the command line's replacing the file's for the same glob. Paths in
//! the file are relative to the file's folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::ArgMatches;
use serde::Deserialize;

use crate::cli::args::RunArgs;
use crate::cli::budget::{parse_size, Budget};
use precompressor::encode::delta::DeltaCoding;
use precompressor::encode::Codec;
use precompressor::error::{Error, Result};

/// The file name looked for.
pub const FILE_NAME: &str = "precompress.toml";

/// The keys of `precompress.toml`, each a long option's name.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FileConfig {
    /// `["br", "gzip"]` or `"br,gzip"`.
    pub formats: Option<toml::Value>,
    /// 0-11.
    pub brotli_quality: Option<u32>,
    /// 1-22.
    pub zstd_level: Option<i32>,
    /// 1-12.
    pub gzip_level: Option<i32>,
    /// (0, 1], e.g. 0.8.
    pub min_ratio: Option<f64>,
    /// Globs, as `--include`.
    pub include: Option<Vec<String>>,
    /// Globs, as `--exclude`.
    pub exclude: Option<Vec<String>>,
    /// Bytes, or a size like `"2KiB"`.
    pub min_size: Option<toml::Value>,
    /// As `--follow-links`.
    pub follow_links: Option<bool>,
    /// Relative to the file's folder.
    pub manifest: Option<PathBuf>,
    /// Worker threads, at least 1.
    pub threads: Option<u16>,
    /// As `--cache-dir`; relative to the file's folder.
    pub cache_dir: Option<PathBuf>,
    /// As `--cache-max-size`: bytes, or a size like `"2GiB"`.
    pub cache_max_size: Option<toml::Value>,
    /// As `--dictionary-from` (earlier releases' folders); relative to the file's folder.
    pub dictionary_from: Option<Vec<PathBuf>>,
    /// `["dcb", "dcz"]`, as `--delta-formats`.
    pub delta_formats: Option<Vec<String>>,
    /// `false` as `--no-use-as-dictionary`.
    pub use_as_dictionary: Option<bool>,
    /// `false` as `--no-page-dictionary`.
    pub page_dictionary: Option<bool>,
    /// As `--max-files`, at least 1.
    pub max_files: Option<u64>,
    /// As `--base`: the URL path DIR is served at.
    pub base: Option<String>,
    /// As `--shared-dictionary`: `"auto"`, `"on"` or `"off"` (`true` is
    /// `"auto"`, `false` is `"off"`).
    pub shared_dictionary: Option<toml::Value>,
    /// `GLOB = SIZE` (bytes, or a size like `"150KB"`).
    pub budget: Option<BTreeMap<String, toml::Value>>,
}

/// The `precompress.toml` that applies to `dir`: in `dir` or a parent, stopping
/// at the first folder that holds `.git` (the project root).
pub fn find(dir: &Path) -> Option<PathBuf> {
    let start = dir.canonicalize().ok()?;
    for d in start.ancestors() {
        let candidate = d.join(FILE_NAME);
        if candidate.is_file() {
            return Some(candidate);
        }
        if d.join(".git").exists() {
            return None;
        }
    }
    None
}

impl FileConfig {
    /// Parses a file's text; `path` is only for messages. An unknown key
    /// gets the nearest known one, as a mistyped flag or plugin option does.
    pub fn parse(path: &Path, text: &str) -> Result<FileConfig> {
        toml::from_str(text).map_err(|e| {
            // The parser quotes the line: a URL's password stays out.
            let e = precompressor::probe::redact_userinfo(&e.to_string());
            let hint = unknown_key(&e)
                .and_then(|(key, known)| nearest_key(key, &known).map(str::to_string))
                .map_or(String::new(), |k| format!("did you mean `{k}`?\n"));
            Error::Config(
                format!("{}: {}\n{hint}", path.display(), e.trim_end())
                    .trim_end()
                    .to_string(),
            )
        })
    }

    /// Every key the file takes, as serde names them (from its own refusal
    /// of an unknown key, so the list cannot drift from the struct).
    #[cfg(test)]
    pub fn keys() -> Vec<String> {
        let e = toml::from_str::<FileConfig>("not-a-key = 0").unwrap_err();
        unknown_key(&e.to_string())
            .map(|(_, k)| k)
            .unwrap_or_default()
    }

    /// Reads and parses `path`.
    pub fn read(path: &Path) -> Result<FileConfig> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::Config(format!(
                "{}: cannot read the config file: {e}",
                path.display()
            ))
        })?;
        Self::parse(path, &text)
    }

    /// Sets every option of `args` that the file has and `explicit` says was
    /// not given on the command line; returns the file's budgets. `path` is the
    /// file (for messages and to resolve relative paths).
    pub fn apply(
        &self,
        path: &Path,
        args: &mut RunArgs,
        explicit: impl Fn(&str) -> bool,
    ) -> Result<Vec<Budget>> {
        let bad = |key: &str, detail: String| {
            Error::Config(format!("{}: {key}: {detail}", path.display()))
        };
        let base = path.parent().unwrap_or(Path::new("."));
        if let (Some(v), false) = (&self.formats, explicit("formats")) {
            args.formats = formats_value(v).map_err(|e| bad("formats", e))?;
        }
        use precompressor::config::limits;
        if let (Some(q), false) = (self.brotli_quality, explicit("brotli_quality")) {
            limits::check(q.into(), &limits::BROTLI_QUALITY)
                .map_err(|e| bad("brotli-quality", e))?;
            args.brotli_quality = q;
        }
        if let (Some(l), false) = (self.zstd_level, explicit("zstd_level")) {
            limits::check(l.into(), &limits::ZSTD_LEVEL).map_err(|e| bad("zstd-level", e))?;
            args.zstd_level = l;
        }
        if let (Some(l), false) = (self.gzip_level, explicit("gzip_level")) {
            limits::check(l.into(), &limits::GZIP_LEVEL).map_err(|e| bad("gzip-level", e))?;
            args.gzip_level = l;
        }
        if let (Some(r), false) = (self.min_ratio, explicit("min_ratio")) {
            args.min_ratio = limits::ratio(&r.to_string()).map_err(|e| bad("min-ratio", e))?;
        }
        if let (Some(g), false) = (&self.include, explicit("include")) {
            args.include = g.clone();
        }
        if let (Some(g), false) = (&self.exclude, explicit("exclude")) {
            args.exclude = g.clone();
        }
        if let (Some(v), false) = (&self.min_size, explicit("min_size")) {
            args.min_size = size_value(v).map_err(|e| bad("min-size", e))?;
        }
        if let (Some(f), false) = (self.follow_links, explicit("follow_links")) {
            args.follow_links = f;
        }
        if let (Some(m), false) = (&self.manifest, explicit("manifest")) {
            args.manifest = Some(base.join(m));
        }
        if let (Some(t), false) = (self.threads, explicit("threads")) {
            if t == 0 {
                return Err(bad("threads", "must be at least 1".into()));
            }
            args.threads = Some(t);
        }
        if let (Some(d), false) = (&self.cache_dir, explicit("cache_dir")) {
            args.cache_dir = Some(base.join(d));
        }
        if let (Some(v), false) = (&self.cache_max_size, explicit("cache_max_size")) {
            args.cache_max_size = size_value(v).map_err(|e| bad("cache-max-size", e))?;
        }
        if let (Some(d), false) = (&self.dictionary_from, explicit("dictionary_from")) {
            args.dictionary_from = d.iter().map(|p| release_path(base, p)).collect();
        }
        if let (Some(d), false) = (&self.delta_formats, explicit("delta_formats")) {
            args.delta_formats = delta_formats_value(d).map_err(|e| bad("delta-formats", e))?;
        }
        if let (Some(u), false) = (self.use_as_dictionary, explicit("no_use_as_dictionary")) {
            args.no_use_as_dictionary = !u;
        }
        if let (Some(p), false) = (self.page_dictionary, explicit("no_page_dictionary")) {
            args.no_page_dictionary = !p;
        }
        if let (Some(m), false) = (self.max_files, explicit("max_files")) {
            if m == 0 {
                return Err(bad("max-files", "must be at least 1".into()));
            }
            args.max_files = Some(m);
        }
        if let (Some(v), false) = (
            &self.shared_dictionary,
            explicit("no_shared_dictionary") || explicit("shared_dictionary"),
        ) {
            let mode = match v {
                toml::Value::Boolean(b) => Some(b.to_string()),
                toml::Value::String(s) => Some(s.clone()),
                _ => None,
            }
            .and_then(|s| precompressor::config::SharedDictionary::parse(&s))
            .ok_or_else(|| {
                bad(
                    "shared-dictionary",
                    format!("{v}: \"auto\", \"on\" or \"off\""),
                )
            })?;
            args.shared_dictionary = Some(mode);
        }
        if let (Some(b), false) = (&self.base, explicit("base")) {
            args.base = Some(crate::cli::args::parse_base(b).map_err(|e| bad("base", e))?);
        }
        self.budgets(path)
    }

    /// The `[budget]` table's budgets, each limit kept as written.
    fn budgets(&self, path: &Path) -> Result<Vec<Budget>> {
        let bad = |glob: &str, detail: String| {
            Error::Config(format!("{}: budget.{glob:?}: {detail}", path.display()))
        };
        let mut budgets = Vec::new();
        for (glob, v) in self.budget.iter().flatten() {
            let limit = size_value(v).map_err(|e| bad(glob, e))?;
            let written = match v {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            budgets.push(Budget::new(glob, limit, &written).map_err(|e| bad(glob, e.to_string()))?);
        }
        Ok(budgets)
    }
}

/// From serde's "unknown field `k`, expected one of `a`, `b`": `k` and the
/// keys it lists.
fn unknown_key(message: &str) -> Option<(&str, Vec<String>)> {
    let rest = message.split("unknown field `").nth(1)?;
    let (key, rest) = rest.split_once('`')?;
    let list = rest.split("expected one of ").nth(1)?.lines().next()?;
    let known = list
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    Some((key, known))
}

/// The known key nearest to `key` (`_` read as `-`), if near enough to be a typo.
fn nearest_key<'k>(key: &str, known: &'k [String]) -> Option<&'k str> {
    let key = key.replace('_', "-").to_ascii_lowercase();
    known
        .iter()
        .map(|k| (crate::cli::args::edit_distance(&key, k), k))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, _)| *d <= 2.max(key.len() / 3))
        .map(|(_, k)| k.as_str())
}

/// `formats`: `["br", "gzip"]` or `"br,gzip"`.
fn formats_value(v: &toml::Value) -> std::result::Result<Vec<Codec>, String> {
    let names: Vec<String> = match v {
        toml::Value::String(s) => s.split(',').map(|s| s.trim().to_string()).collect(),
        toml::Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| "expected strings".to_string())?,
        _ => return Err("expected [\"br\", \"zstd\", \"gzip\"] or \"br,gzip\"".into()),
    };
    names
        .iter()
        .map(|n| {
            Codec::parse(n)
                .ok_or_else(|| format!("unknown format {n:?} (expected br, zstd or gzip)"))
        })
        .collect()
}

/// `delta-formats`: `["dcb", "dcz"]`.
fn delta_formats_value(names: &[String]) -> std::result::Result<Vec<DeltaCoding>, String> {
    names
        .iter()
        .map(|n| {
            DeltaCoding::parse(n)
                .ok_or_else(|| format!("unknown delta format {n:?} (expected dcb or dcz)"))
        })
        .collect()
}

fn size_value(v: &toml::Value) -> std::result::Result<u64, String> {
    match v {
        toml::Value::Integer(n) if *n >= 0 => Ok(*n as u64),
        toml::Value::String(s) => parse_size(s),
        other => Err(format!(
            "expected bytes or a size like \"150KB\", found {other}"
        )),
    }
}

/// What `precompress check DIR` takes from the precompress.toml that applies
/// to DIR (paths relative to the file): where the run put the manifest, the
/// earlier releases its deltas were made against, and its cache folder.
#[derive(Debug, Default)]
pub struct ForCheck {
    pub manifest: Option<PathBuf>,
    pub dictionary_from: Vec<PathBuf>,
    pub cache_dir: Option<PathBuf>,
}

/// An earlier release as the file names it: a folder relative to the
/// file's, or a site's URL as it is.
fn release_path(base: &Path, given: &Path) -> PathBuf {
    if crate::cli::live::is_site(given) {
        given.to_path_buf()
    } else {
        base.join(given)
    }
}

/// [`ForCheck`] for DIR: empty when no precompress.toml applies.
pub fn for_check(dir: &Path) -> Result<ForCheck> {
    let Some(path) = find(dir) else {
        return Ok(ForCheck::default());
    };
    let file = FileConfig::read(&path)?;
    let base = path.parent().unwrap_or(Path::new("."));
    Ok(ForCheck {
        manifest: file.manifest.map(|m| base.join(m)),
        dictionary_from: file
            .dictionary_from
            .unwrap_or_default()
            .iter()
            .map(|p| release_path(base, p))
            .collect(),
        cache_dir: file.cache_dir.map(|d| base.join(d)),
    })
}

/// The cache folder of a run, `check` or `merge` of DIR `dir`: the one
/// `given` (`--cache-dir`, `PRECOMPRESS_CACHE_DIR`, precompress.toml's
/// `cache-dir`, in that order), else the project's default
/// ([`precompressor::config::default_cache_dir`]); none with `--no-cache`.
pub fn cache_dir(given: Option<PathBuf>, no_cache: bool, dir: &Path) -> Option<PathBuf> {
    if no_cache {
        return None;
    }
    given.or_else(|| precompressor::config::default_cache_dir(dir))
}

/// [`cache_dir`] for `merge` of DIR: the flag or variable `given`, else the
/// precompress.toml that applies to DIR, else the default.
pub fn cache_dir_of(dir: &Path, given: Option<PathBuf>, no_cache: bool) -> Result<Option<PathBuf>> {
    let file = match (&given, no_cache) {
        (None, false) => for_check(dir)?.cache_dir,
        _ => None,
    };
    Ok(cache_dir(given.or(file), no_cache, dir))
}

/// What [`resolve`] settled on.
#[derive(Debug, Default)]
pub struct Resolved {
    /// The config file that applied, if any.
    pub file: Option<PathBuf>,
    /// Budgets from the file and the command line.
    pub budgets: Vec<Budget>,
}

/// Applies the config file that concerns `args` (see the module docs),
/// gathers the budgets, and settles the cache folder ([`cache_dir`]).
/// `matches` tells which options the command line set.
pub fn resolve(args: &mut RunArgs, matches: &ArgMatches) -> Result<Resolved> {
    let resolved = apply_file(args, matches)?;
    let dir = args.dir.clone().unwrap_or_default();
    args.cache_dir = cache_dir(args.cache_dir.take(), args.no_cache, &dir);
    Ok(resolved)
}

/// [`resolve`] but the cache folder's default.
fn apply_file(args: &mut RunArgs, matches: &ArgMatches) -> Result<Resolved> {
    let explicit = |id: &str| {
        matches!(
            matches.value_source(id),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        )
    };
    let file = match (&args.config, args.no_config) {
        (Some(p), _) => Some(p.clone()),
        (None, true) => None,
        (None, false) => args.dir.as_deref().and_then(find),
    };
    let mut budgets = match &file {
        Some(path) => FileConfig::read(path)?.apply(path, args, explicit)?,
        None => Vec::new(),
    };
    for spec in &args.budget {
        let b = Budget::parse(spec)?;
        budgets.retain(|old| old.glob != b.glob);
        budgets.push(b);
    }
    Ok(Resolved { file, budgets })
}

/// The settings `precompress tune` measures against: what `precompress DIR`
/// would use (its defaults, then precompress.toml, through the run's own
/// [`resolve`]), with tune's flags over them. Also returns
/// the config file that applied.
pub fn for_tune(
    args: &crate::cli::args::TuneArgs,
) -> precompressor::Result<(precompressor::Config, Option<PathBuf>)> {
    use clap::{CommandFactory, FromArgMatches};
    // The run's arguments as a bare `precompress DIR` has them: its defaults,
    // its environment variables, and what resolve needs to tell them apart.
    let bare = |e: clap::Error| precompressor::Error::Config(e.to_string());
    let matches = crate::cli::args::Cli::command()
        .try_get_matches_from(["precompress", "."])
        .map_err(bare)?;
    let mut run = crate::cli::args::Cli::from_arg_matches(&matches)
        .map_err(bare)?
        .run;
    run.dir = Some(args.dir.clone());
    run.config = args.config.clone();
    run.no_config = args.no_config;
    let resolved = resolve(&mut run, &matches)?;
    if let Some(f) = &args.formats {
        run.formats = f.clone();
    }
    if let Some(q) = args.brotli_quality {
        run.brotli_quality = q;
    }
    if let Some(l) = args.zstd_level {
        run.zstd_level = l;
    }
    if let Some(l) = args.gzip_level {
        run.gzip_level = l;
    }
    if !args.include.is_empty() {
        run.include = args.include.clone();
    }
    if !args.exclude.is_empty() {
        run.exclude = args.exclude.clone();
    }
    if let Some(m) = args.min_size {
        run.min_size = m;
    }
    run.follow_links |= args.follow_links;
    if args.threads.is_some() {
        run.threads = args.threads;
    }
    Ok((run.to_config(), resolved.file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(argv: &[&str]) -> (RunArgs, ArgMatches) {
        let mut full = vec!["precompress"];
        full.extend_from_slice(argv);
        let m = <crate::cli::args::Cli as clap::CommandFactory>::command().get_matches_from(&full);
        let cli = crate::cli::args::Cli::parse_from(&full);
        (cli.run, m)
    }

    /// `apply` asks clap whether each option was given by its id, a string:
    /// every id it asks must be one of the run's, or a typo there would
    /// silently let the file win over the command line.
    #[test]
    fn every_id_apply_asks_about_is_a_flag_of_the_run() {
        let text = r#"
            formats = ["br"]
            brotli-quality = 5
            zstd-level = 3
            gzip-level = 6
            min-ratio = 0.9
            include = ["*.js"]
            exclude = ["*.map"]
            min-size = 10
            follow-links = true
            manifest = "m.json"
            threads = 2
            cache-dir = "c"
            cache-max-size = "1GiB"
            dictionary-from = ["prev"]
            delta-formats = ["dcz"]
            use-as-dictionary = false
            base = "/app/"
            shared-dictionary = "on"
            [budget]
            "*.js" = "1KB"
        "#;
        let file = FileConfig::parse(Path::new("p.toml"), text).unwrap();
        let (mut run, _) = args(&["dist"]);
        let asked = std::cell::RefCell::new(Vec::new());
        file.apply(Path::new("p.toml"), &mut run, |id| {
            asked.borrow_mut().push(id.to_string());
            false
        })
        .unwrap();
        let cmd = <crate::cli::args::Cli as clap::CommandFactory>::command();
        let ids: Vec<String> = cmd
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .collect();
        let asked = asked.into_inner();
        assert!(asked.len() >= FileConfig::keys().len() - 1, "{asked:?}");
        for id in &asked {
            assert!(
                ids.contains(id),
                "apply asks about {id:?}, which is no flag's id"
            );
        }
    }

    #[test]
    fn unknown_keys_are_rejected_by_name() {
        let e = FileConfig::parse(
            Path::new("x/precompress.toml"),
            "min-size = 10\nbrotli_quality = 5\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("x/precompress.toml: "), "{e}");
        assert!(e.contains("unknown field `brotli_quality`"), "{e}");
        assert!(e.contains("line 2"), "{e}");
        assert!(e.contains("did you mean `brotli-quality`?"), "{e}");
        let far = FileConfig::parse(Path::new("p.toml"), "colour = 1\n").unwrap_err();
        assert!(!far.to_string().contains("did you mean"), "{far}");
    }

    #[test]
    fn file_values_apply_unless_the_command_line_sets_them() {
        let text = r#"
formats = ["br", "gzip"]
brotli-quality = 9
min-size = "2KiB"
exclude = ["*.map"]
manifest = "out/m.json"
cache-dir = ".cache/pc"
cache-max-size = "2GiB"
dictionary-from = ["../releases/41"]
delta-formats = ["dcz"]
use-as-dictionary = false
[budget]
"*.js" = "150KB"
"*.css" = 2000
"#;
        let f = FileConfig::parse(Path::new("/p/precompress.toml"), text).unwrap();
        let (mut a, m) = args(&["dist", "--brotli-quality", "4"]);
        let explicit = |id: &str| matches!(m.value_source(id), Some(ValueSource::CommandLine));
        let budgets = f
            .apply(Path::new("/p/precompress.toml"), &mut a, explicit)
            .unwrap();
        assert_eq!(a.formats, vec![Codec::Brotli, Codec::Gzip]);
        assert_eq!(a.brotli_quality, 4, "the flag wins");
        assert_eq!(a.min_size, 2048);
        assert_eq!(a.exclude, vec!["*.map".to_string()]);
        assert_eq!(a.manifest, Some(PathBuf::from("/p/out/m.json")));
        assert_eq!(a.zstd_level, 19, "untouched default");
        assert_eq!(a.cache_dir, Some(PathBuf::from("/p/.cache/pc")));
        assert_eq!(a.cache_max_size, 2 << 30);
        assert_eq!(a.dictionary_from, vec![PathBuf::from("/p/../releases/41")]);
        assert!(a.no_use_as_dictionary);
        assert_eq!(a.delta_formats, vec![DeltaCoding::Dcz]);
        let b: Vec<(&str, u64)> = budgets.iter().map(|b| (b.glob.as_str(), b.limit)).collect();
        assert_eq!(b, vec![("*.css", 2000), ("*.js", 150_000)]);
    }

    #[test]
    fn bad_values_name_the_key() {
        let cases = [
            ("brotli-quality = 12", "brotli-quality: 12 is not in 0-11"),
            ("formats = \"br,lzma\"", "formats: unknown format \"lzma\""),
            ("min-size = \"ten\"", "min-size: invalid size"),
            (
                "[budget]\n\"*.js\" = true",
                "budget.\"*.js\": expected bytes",
            ),
            ("threads = 0", "threads: must be at least 1"),
            (
                "shared-dictionary = \"maybe\"",
                "shared-dictionary: \"maybe\": \"auto\", \"on\" or \"off\"",
            ),
        ];
        for (text, want) in cases {
            let f = FileConfig::parse(Path::new("c.toml"), text).unwrap();
            let (mut a, _) = args(&["dist"]);
            let e = f
                .apply(Path::new("c.toml"), &mut a, |_| false)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn a_password_in_a_url_is_never_quoted_in_an_error() {
        for text in [
            "dictionary-from = 'https://deploy:ab/cdS3CR3T@host/'",
            "dictionary-from = ['https://u:S3CR3T@host/', 3]",
        ] {
            let e = FileConfig::parse(Path::new("c.toml"), text)
                .unwrap_err()
                .to_string();
            assert!(!e.contains("S3CR3T") && e.contains("***@host"), "{e}");
        }
    }

    #[test]
    fn shared_dictionary_is_a_mode_or_the_boolean_it_was() {
        use precompressor::config::SharedDictionary::{Auto, Off, On};
        for (text, want) in [
            ("shared-dictionary = \"on\"", Some(On)),
            ("shared-dictionary = \"auto\"", Some(Auto)),
            ("shared-dictionary = \"off\"", Some(Off)),
            ("shared-dictionary = true", Some(Auto)),
            ("shared-dictionary = false", Some(Off)),
        ] {
            let f = FileConfig::parse(Path::new("c.toml"), text).unwrap();
            let (mut a, _) = args(&["dist"]);
            f.apply(Path::new("c.toml"), &mut a, |_| false).unwrap();
            assert_eq!(a.shared_dictionary, want, "{text}");
        }
        // The command line wins.
        let f = FileConfig::parse(Path::new("c.toml"), "shared-dictionary = \"on\"").unwrap();
        let (mut a, m) = args(&["dist", "--no-shared-dictionary"]);
        let explicit = |id: &str| matches!(m.value_source(id), Some(ValueSource::CommandLine));
        f.apply(Path::new("c.toml"), &mut a, explicit).unwrap();
        assert_eq!(a.to_config().shared_dictionary, Off);
        let (a, _) = args(&["dist", "--shared-dictionary", "on"]);
        assert_eq!(a.to_config().shared_dictionary, On);
        assert_eq!(args(&["dist"]).0.to_config().shared_dictionary, Auto);
    }

    #[test]
    fn formats_are_a_list_or_one_string() {
        let list = toml::Value::Array(vec!["zstd".into(), "gzip".into()]);
        let one = toml::Value::String("br, gzip".into());
        assert_eq!(formats_value(&list), Ok(vec![Codec::Zstd, Codec::Gzip]));
        assert_eq!(formats_value(&one), Ok(vec![Codec::Brotli, Codec::Gzip]));
        assert_eq!(
            formats_value(&toml::Value::Integer(1)),
            Err("expected [\"br\", \"zstd\", \"gzip\"] or \"br,gzip\"".into())
        );
        assert_eq!(
            delta_formats_value(&["dcz".into(), "dcb".into()]),
            Ok(vec![DeltaCoding::Dcz, DeltaCoding::Dcb])
        );
        assert!(delta_formats_value(&["br".into()]).is_err());
    }

    #[test]
    fn lookup_stops_at_the_project_root() {
        let t = tempfile::tempdir().unwrap();
        let proj = t.path().join("proj");
        std::fs::create_dir_all(proj.join("web/dist")).unwrap();
        std::fs::create_dir(proj.join(".git")).unwrap();
        // Above the project root: never used.
        std::fs::write(t.path().join(FILE_NAME), "").unwrap();
        assert_eq!(find(&proj.join("web/dist")), None);
        std::fs::write(proj.join(FILE_NAME), "").unwrap();
        assert_eq!(
            find(&proj.join("web/dist")),
            Some(proj.canonicalize().unwrap().join(FILE_NAME))
        );
        std::fs::write(proj.join("web").join(FILE_NAME), "").unwrap();
        assert_eq!(
            find(&proj.join("web/dist")),
            Some(proj.canonicalize().unwrap().join("web").join(FILE_NAME))
        );
    }
}
