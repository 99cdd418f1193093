//! `precompress.toml`: the settings a team wants pinned, next to the code.
//!
//! Found by `--config PATH`, or else by looking in DIR and then each parent
//! folder up to the project root (the first folder holding `.git`) for a
//! `precompress.toml`; `--no-config` turns the search off. Keys are the long
//! option names (`brotli-quality`, `min-size`, ...), plus a `[budget]` table
//! of `GLOB = SIZE`: each key, its type and its range are `cli/options.rs`'s
//! row. A key the file does not know is an error naming the key, so a typo
//! never silently does nothing. A flag given on the command line (or
//! through its environment variable) wins over the file; budgets from both
//! apply, the command line's replacing the file's for the same glob. Paths in
//! the file are relative to the file's folder.

use std::path::{Path, PathBuf};

use crate::cli::budget::{parse_size, Budget};
use crate::cli::options::{self, Kind, Opt, RunArgs, Settings, Source, Value};
use precompressor::error::{Error, Result};

/// The file name looked for.
pub const FILE_NAME: &str = "precompress.toml";

/// A `precompress.toml`, read and checked: each key's value as the option's
/// row types it (paths joined to the file's folder), and the budgets.
#[derive(Debug, Default)]
pub struct FileConfig {
    values: Vec<(&'static Opt, Value)>,
    budgets: Vec<Budget>,
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
    /// Parses a file's text; `path` names the file in messages and its
    /// folder is what relative paths are relative to. An unknown key gets
    /// the nearest known one, as a mistyped flag or plugin option does; a
    /// value out of its type or range names the key. A URL's password is
    /// never quoted.
    pub fn parse(path: &Path, text: &str) -> Result<FileConfig> {
        let fail = |detail: String| {
            Error::Config(precompressor::probe::redact_userinfo(&format!(
                "{}: {}",
                path.display(),
                detail.trim_end()
            )))
        };
        let table: toml::Table = toml::from_str(text).map_err(|e| fail(e.to_string()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let mut file = FileConfig::default();
        for (key, v) in &table {
            let Some(o) = options::by_key(key) else {
                let known = options::keys();
                let line = text
                    .lines()
                    .position(|l| {
                        let l = l.trim_start().trim_start_matches(['"', '\'']);
                        l.starts_with(key.as_str())
                    })
                    .map_or(String::new(), |n| format!("line {}: ", n + 1));
                let hint = nearest_key(key, &known)
                    .map_or(String::new(), |k| format!("\ndid you mean `{k}`?"));
                return Err(fail(format!(
                    "{line}unknown field `{key}`, expected one of {}{hint}",
                    known
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            };
            if matches!(o.kind, Kind::Budgets) {
                file.budgets = budgets(v).map_err(&fail)?;
                continue;
            }
            let value = file_value(o, v, base).map_err(|e| fail(format!("{key}: {e}")))?;
            file.values.push((o, value));
        }
        Ok(file)
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

    /// The file's value of the option `flag`, if it has one.
    pub fn value(&self, flag: &str) -> Option<&Value> {
        self.values
            .iter()
            .find(|(o, _)| o.flag == flag)
            .map(|(_, v)| v)
    }

    /// Sets every option the file has under what the command line gave;
    /// returns the file's budgets.
    pub fn apply(&self, settings: &mut Settings) -> Vec<Budget> {
        for (o, v) in &self.values {
            settings.set(o, v.clone(), Source::File);
        }
        self.budgets.clone()
    }
}

/// The file's value `v` of option `o`, checked as the flag is.
fn file_value(o: &Opt, v: &toml::Value, base: &Path) -> std::result::Result<Value, String> {
    use toml::Value as T;
    let found = || format!("found {v}");
    let strings = |what: &str| -> std::result::Result<Vec<String>, String> {
        match v {
            T::Array(a) => a
                .iter()
                .map(|x| x.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| format!("expected {what}, {}", found())),
            _ => Err(format!("expected {what}, {}", found())),
        }
    };
    Ok(match (&o.kind, v) {
        (Kind::Switch, T::Boolean(b)) => Value::Bool(*b),
        (Kind::Negation, T::Boolean(b)) => Value::Bool(!b),
        (Kind::Switch | Kind::Negation, _) => {
            return Err(format!("expected true or false, {}", found()))
        }
        (Kind::Int { range, .. }, T::Integer(n)) => Value::Int(in_range(*n, range)?),
        (Kind::Int { .. }, _) => return Err(format!("expected a whole number, {}", found())),
        (Kind::Ratio { .. }, T::Float(_) | T::Integer(_)) => {
            Value::Ratio(precompressor::config::limits::ratio(&v.to_string())?)
        }
        (Kind::Ratio { .. }, _) => return Err(format!("expected a number in (0, 1], {}", found())),
        (Kind::Size { .. }, _) => Value::Size(size_value(v)?),
        (
            Kind::Choice {
                values, list: true, ..
            },
            _,
        ) => {
            let names: Vec<String> = match v {
                T::String(s) => s.split(',').map(|s| s.trim().to_string()).collect(),
                _ => strings(&format!(
                    "[{}] or \"{}\"",
                    quoted(values, ", "),
                    values.join(",")
                ))?,
            };
            for n in &names {
                if !values.contains(&n.as_str()) {
                    return Err(format!(
                        "unknown format {n:?} (expected {})",
                        values.join(", ")
                    ));
                }
            }
            Value::Texts(names)
        }
        (Kind::Choice { values, bools, .. }, _) => {
            let t = match (v, bools) {
                (T::String(s), _) => Some(s.as_str()),
                (T::Boolean(b), Some([on, off])) => Some(if *b { *on } else { *off }),
                _ => None,
            };
            match t.filter(|t| values.contains(t)) {
                Some(t) => Value::Text(t.to_string()),
                None => return Err(format!("{v}: {}", either(values))),
            }
        }
        (Kind::Path { .. }, T::String(s)) => Value::Path(base.join(s)),
        (Kind::Path { .. }, _) => return Err(format!("expected a path, {}", found())),
        (Kind::Releases, _) => Value::Paths(
            strings("an array of folders or URLs")?
                .iter()
                .map(|p| release_path(base, Path::new(p)))
                .collect(),
        ),
        (Kind::Globs, _) => Value::Texts(strings("an array of globs")?),
        (Kind::Text { parse }, T::String(s)) => Value::Text(parse(s)?),
        (Kind::Text { .. }, _) => return Err(format!("expected a string, {}", found())),
        (Kind::Budgets | Kind::Sets { .. }, _) => unreachable!("no file key of its own"),
    })
}

/// `n` if it lies in `range`, else why not.
fn in_range(n: i64, range: &std::ops::RangeInclusive<i64>) -> std::result::Result<i64, String> {
    if range.contains(&n) {
        Ok(n)
    } else if *range.end() == i64::MAX {
        Err(format!("{n}: must be at least {}", range.start()))
    } else {
        precompressor::config::limits::check(n, range)
    }
}

fn quoted(values: &[&str], sep: &str) -> String {
    values
        .iter()
        .map(|v| format!("\"{v}\""))
        .collect::<Vec<_>>()
        .join(sep)
}

/// `"a", "b" or "c"`.
fn either(values: &[&str]) -> String {
    match values.split_last() {
        Some((last, rest)) if !rest.is_empty() => {
            format!("{} or \"{last}\"", quoted(rest, ", "))
        }
        _ => quoted(values, ", "),
    }
}

/// The `[budget]` table's budgets, each limit kept as written.
fn budgets(v: &toml::Value) -> std::result::Result<Vec<Budget>, String> {
    let Some(table) = v.as_table() else {
        return Err(format!(
            "budget: expected a table of GLOB = SIZE, found {v}"
        ));
    };
    let mut out = Vec::new();
    for (glob, v) in table {
        let bad = |detail: String| format!("budget.{glob:?}: {detail}");
        let limit = size_value(v).map_err(bad)?;
        let written = match v {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        out.push(Budget::new(glob, limit, &written).map_err(|e| bad(e.to_string()))?);
    }
    Ok(out)
}

/// The known key nearest to `key` (`_` read as `-`), if near enough to be a typo.
fn nearest_key<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    let key = key.replace('_', "-").to_ascii_lowercase();
    known
        .iter()
        .map(|k| (crate::cli::args::edit_distance(&key, k), *k))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, _)| *d <= 2.max(key.len() / 3))
        .map(|(_, k)| k)
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
    let path_of = |flag: &str| match file.value(flag) {
        Some(Value::Path(p)) => Some(p.clone()),
        _ => None,
    };
    Ok(ForCheck {
        manifest: path_of("manifest"),
        dictionary_from: match file.value("dictionary-from") {
            Some(Value::Paths(p)) => p.clone(),
            _ => Vec::new(),
        },
        cache_dir: path_of("cache-dir"),
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

/// Applies the config file that concerns `args` (see the module docs) under
/// what the command line gave, gathers the budgets, and settles the cache
/// folder ([`cache_dir`]).
pub fn resolve(args: &mut RunArgs) -> Result<Resolved> {
    let s = &args.settings;
    let file = match (s.path("config"), s.switch("no-config")) {
        (Some(p), _) => Some(p),
        (None, true) => None,
        (None, false) => args.dir.as_deref().and_then(find),
    };
    let mut budgets = match &file {
        Some(path) => FileConfig::read(path)?.apply(&mut args.settings),
        None => Vec::new(),
    };
    for spec in args.settings.texts("budget") {
        let b = Budget::parse(&spec)?;
        budgets.retain(|old| old.glob != b.glob);
        budgets.push(b);
    }
    let dir = args.dir.clone().unwrap_or_default();
    let s = &mut args.settings;
    match cache_dir(s.path("cache-dir"), s.switch("no-cache"), &dir) {
        Some(c) => s.put("cache-dir", Value::Path(c)),
        None => s.clear("cache-dir"),
    }
    Ok(Resolved { file, budgets })
}

/// The settings `precompress tune` measures against: what `precompress DIR`
/// would use (the table's defaults and variables, then precompress.toml,
/// through the run's own [`resolve`]), with tune's flags over them. Also
/// returns the config file that applied.
pub fn for_tune(
    args: &crate::cli::args::TuneArgs,
) -> precompressor::Result<(precompressor::Config, Option<PathBuf>)> {
    let mut run = RunArgs {
        dir: Some(args.dir.clone()),
        settings: Settings::from_env(),
    };
    if let Some(c) = &args.config {
        run.settings.put("config", Value::Path(c.clone()));
    }
    run.settings.put("no-config", Value::Bool(args.no_config));
    let resolved = resolve(&mut run)?;
    run.settings.overlay(&args.over.settings);
    Ok((run.to_config(), resolved.file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use precompressor::encode::delta::DeltaCoding;
    use precompressor::encode::Codec;

    fn args(argv: &[&str]) -> RunArgs {
        let mut full = vec!["precompress"];
        full.extend_from_slice(argv);
        crate::cli::args::Cli::parse_from(&full).run
    }

    /// `text` as a file at `path` under the command line `argv`: the Config
    /// and the budgets.
    fn applied(path: &str, text: &str, argv: &[&str]) -> (precompressor::Config, Vec<Budget>) {
        let f = FileConfig::parse(Path::new(path), text).unwrap();
        let mut a = args(argv);
        let budgets = f.apply(&mut a.settings);
        (a.to_config(), budgets)
    }

    /// Every key the table gives the file is taken by it, at a value of
    /// its kind.
    #[test]
    fn every_key_of_the_table_is_read() {
        let mut text = String::new();
        for o in options::RUN {
            let Some(key) = o.toml.name() else { continue };
            let v = match &o.kind {
                Kind::Switch => "true".to_string(),
                Kind::Negation => "false".to_string(),
                Kind::Int { range, .. } => range.start().to_string(),
                Kind::Ratio { .. } => "0.9".to_string(),
                Kind::Size { .. } => "\"1KiB\"".to_string(),
                Kind::Choice {
                    values, list: true, ..
                } => format!("[\"{}\"]", values[0]),
                Kind::Choice { values, .. } => format!("\"{}\"", values[0]),
                Kind::Path { .. } => "\"p\"".to_string(),
                Kind::Releases => "[\"prev\"]".to_string(),
                Kind::Globs => "[\"*.js\"]".to_string(),
                Kind::Text { .. } => "\"/app/\"".to_string(),
                Kind::Budgets => continue,
                Kind::Sets { .. } => unreachable!("no key of its own"),
            };
            text.push_str(&format!("{key} = {v}\n"));
        }
        text.push_str("[budget]\n\"*.js\" = \"1KB\"\n");
        let file = FileConfig::parse(Path::new("p.toml"), &text).unwrap();
        let mut keys: Vec<&str> = file
            .values
            .iter()
            .filter_map(|(o, _)| o.toml.name())
            .collect();
        keys.sort_unstable();
        let mut all = options::keys();
        all.retain(|k| *k != "budget");
        assert_eq!(keys, all);
        assert!(keys.len() > 15, "{keys:?}");
        assert_eq!(file.budgets.len(), 1);
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
        let (c, budgets) = applied(
            "/p/precompress.toml",
            text,
            &["dist", "--brotli-quality", "4"],
        );
        assert_eq!(c.codecs, vec![Codec::Brotli, Codec::Gzip]);
        assert_eq!(c.levels.brotli_quality, 4, "the flag wins");
        assert_eq!(c.min_size, 2048);
        assert_eq!(c.exclude, vec!["*.map".to_string()]);
        assert_eq!(c.manifest, Some(PathBuf::from("/p/out/m.json")));
        assert_eq!(c.levels.zstd_level, 19, "untouched default");
        assert_eq!(c.cache_dir, Some(PathBuf::from("/p/.cache/pc")));
        assert_eq!(c.cache_max_size, 2 << 30);
        assert_eq!(c.dictionary_from, vec![PathBuf::from("/p/../releases/41")]);
        assert!(!c.use_as_dictionary);
        assert_eq!(c.delta_codings, vec![DeltaCoding::Dcz]);
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
            ("threads = 0", "threads: 0 is not in 1-65535"),
            ("max-files = 0", "max-files: 0: must be at least 1"),
            ("follow-links = 1", "follow-links: expected true or false"),
            ("exclude = \"*.map\"", "exclude: expected an array of globs"),
            ("base = \"app\"", "base: "),
            (
                "shared-dictionary = \"maybe\"",
                "shared-dictionary: \"maybe\": \"auto\", \"on\" or \"off\"",
            ),
        ];
        for (text, want) in cases {
            let e = FileConfig::parse(Path::new("c.toml"), text)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("c.toml: ") && e.contains(want), "{text}: {e}");
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
            ("shared-dictionary = \"on\"", On),
            ("shared-dictionary = \"auto\"", Auto),
            ("shared-dictionary = \"off\"", Off),
            ("shared-dictionary = true", Auto),
            ("shared-dictionary = false", Off),
        ] {
            assert_eq!(
                applied("c.toml", text, &["dist"]).0.shared_dictionary,
                want,
                "{text}"
            );
        }
        // The command line wins, the switch that sets it too.
        let (c, _) = applied(
            "c.toml",
            "shared-dictionary = \"on\"",
            &["dist", "--no-shared-dictionary"],
        );
        assert_eq!(c.shared_dictionary, Off);
        let (c, _) = applied(
            "c.toml",
            "shared-dictionary = false",
            &["dist", "--shared-dictionary", "on"],
        );
        assert_eq!(c.shared_dictionary, On);
    }

    #[test]
    fn formats_are_a_list_or_one_string() {
        for text in ["formats = [\"zstd\", \"gzip\"]", "formats = \"gzip, zstd\""] {
            assert_eq!(
                applied("c.toml", text, &["dist"]).0.codecs,
                vec![Codec::Zstd, Codec::Gzip]
            );
        }
        let e = FileConfig::parse(Path::new("c.toml"), "formats = 1")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("formats: expected [\"br\", \"zstd\", \"gzip\"] or \"br,zstd,gzip\""),
            "{e}"
        );
        assert!(FileConfig::parse(Path::new("c.toml"), "delta-formats = [\"br\"]").is_err());
    }

    /// `precompress tune` measures what the run would use, its own flags over it.
    #[test]
    fn tune_takes_the_run_s_settings_and_its_own_over_them() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join(".git")).unwrap();
        std::fs::write(
            t.path().join(FILE_NAME),
            "brotli-quality = 7\nzstd-level = 5\nexclude = [\"*.map\"]\n",
        )
        .unwrap();
        let cli = crate::cli::args::Cli::parse_from([
            "precompress",
            "tune",
            t.path().to_str().unwrap(),
            "--zstd-level",
            "9",
        ]);
        let Some(crate::cli::args::Command::Tune(a)) = cli.command else {
            panic!("tune")
        };
        let (c, file) = for_tune(&a).unwrap();
        assert_eq!(file, Some(t.path().join(FILE_NAME)));
        assert_eq!(
            (
                c.levels.brotli_quality,
                c.levels.zstd_level,
                c.levels.gzip_level
            ),
            (7, 9, 12)
        );
        assert_eq!(c.exclude, vec!["*.map".to_string()]);
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
