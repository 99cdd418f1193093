//! Every option of `precompress DIR`, once: [`RUN`] gives each its type,
//! default, range, flag, `precompress.toml` key, the integrations' option name
//! and help, and everything else is made from it: the flags clap parses
//! ([`RunArgs`]'s `clap::Args`), the file's keys and their checks
//! (`configfile`), the values both give ([`Settings`]), and, written by
//! `PRECOMPRESS_BLESS=1 cargo test --bin precompress options` and held to the
//! table by the tests below, docs/config.md's option table,
//! fixtures/options.json, the npm package's `lib/option-defs.js` (its
//! validation and flags) and vite.d.ts's option declarations. A new option is
//! a row here and the line of [`RunArgs::to_config`] that uses it.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;
use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches};

use precompressor::config::limits;

#[cfg(test)]
mod made;
mod table;

pub use table::RUN;

/// What an option takes, and so how each surface reads and checks it.
// What only the surfaces the tests make read (made.rs) is unread in the binary.
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Debug)]
pub enum Kind {
    /// A switch (`--follow-links`): the file's and the plugin's `true`.
    Switch,
    /// `--no-KEY`: the file's and the plugin's `KEY = false`.
    Negation,
    /// A whole number in `range`.
    Int {
        range: RangeInclusive<i64>,
        default: Option<i64>,
    },
    /// A fraction in (0, 1].
    Ratio { default: f64 },
    /// Bytes, or a size with a unit (`2KiB`, `150KB`).
    Size { default: Option<&'static str> },
    /// One of `values` (`list`: several, comma-separated); `bools`: what the
    /// file's and the plugin's `true` and `false` mean.
    Choice {
        values: &'static [&'static str],
        default: Option<&'static str>,
        list: bool,
        bools: Option<[&'static str; 2]>,
    },
    /// A path: the file's relative to its folder, the plugin's to `from`.
    Path { from: PluginBase },
    /// Earlier releases, repeatable: folders (relative as a path is) or a
    /// site's URL.
    Releases,
    /// Globs, repeatable.
    Globs,
    /// `GLOB=SIZE`, repeatable; the file's `[budget]` table, the plugin's
    /// object of glob: size.
    Budgets,
    /// Text that `parse` checks (and writes as the run takes it).
    Text {
        parse: fn(&str) -> Result<String, String>,
    },
    /// The same as another option's value: `--no-shared-dictionary` is
    /// `--shared-dictionary off`.
    Sets {
        option: &'static str,
        value: &'static str,
    },
}

/// What the plugin resolves a relative path against.
#[derive(Debug, Clone, Copy)]
pub enum PluginBase {
    /// Vite's `root`, as Vite's own paths.
    Root,
    /// `build.outDir`, as Vite's `build.manifest`; `true` is the default.
    OutDir,
}

/// An option's name on a surface (the file, the plugin), or why it has none.
// What only the surfaces the tests make read (made.rs) is unread in the binary.
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Debug, Clone, Copy)]
pub enum Name {
    Is(&'static str),
    Not(&'static str),
}

impl Name {
    pub fn name(self) -> Option<&'static str> {
        match self {
            Name::Is(n) => Some(n),
            Name::Not(_) => None,
        }
    }
}

/// One option of the run.
// What only the surfaces the tests make read (made.rs) is unread in the binary.
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Debug)]
pub struct Opt {
    /// The long flag, without `--`: also its id in clap and in [`Settings`].
    pub flag: &'static str,
    pub short: Option<char>,
    pub alias: Option<&'static str>,
    pub value_name: Option<&'static str>,
    pub kind: Kind,
    pub toml: Name,
    pub plugin: Name,
    /// The environment variable that gives it too.
    pub env: Option<&'static str>,
    /// The option it cannot be given with.
    pub conflicts: Option<&'static str>,
    /// For `--help`, docs/config.md and vite.d.ts: the range and default are
    /// added to it.
    pub help: &'static str,
    /// What the plugin's declaration says besides `help`.
    pub plugin_doc: Option<&'static str>,
    /// With [`Kind::Path`]: the flag the plugin's `false` gives.
    pub plugin_false: Option<&'static str>,
}

/// The option whose flag is `flag`.
pub fn find(flag: &str) -> Option<&'static Opt> {
    RUN.iter().find(|o| o.flag == flag)
}

/// The option whose `precompress.toml` key is `key`.
pub fn by_key(key: &str) -> Option<&'static Opt> {
    RUN.iter().find(|o| o.toml.name() == Some(key))
}

/// A value an option holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Ratio(f64),
    Size(u64),
    Text(String),
    Texts(Vec<String>),
    Path(PathBuf),
    Paths(Vec<PathBuf>),
}

/// Where an option's value came from: the command line (or its variable)
/// wins over the file, which wins over the table's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    File,
    CommandLine,
}

impl Opt {
    /// The default, as the run takes it (none for an option that is off or
    /// empty unless given).
    pub fn default_value(&self) -> Option<Value> {
        match &self.kind {
            Kind::Switch | Kind::Negation | Kind::Sets { .. } => Some(Value::Bool(false)),
            Kind::Int { default, .. } => default.map(Value::Int),
            Kind::Ratio { default } => Some(Value::Ratio(*default)),
            Kind::Size { default } => default
                .map(|d| Value::Size(crate::cli::budget::parse_size(d).expect("the table's size"))),
            Kind::Choice { default, list, .. } => default.map(|d| {
                if *list {
                    Value::Texts(d.split(',').map(str::to_string).collect())
                } else {
                    Value::Text(d.to_string())
                }
            }),
            Kind::Globs | Kind::Budgets => Some(Value::Texts(Vec::new())),
            Kind::Releases => Some(Value::Paths(Vec::new())),
            Kind::Path { .. } | Kind::Text { .. } => None,
        }
    }

    /// The default as docs and `--help` write it.
    pub fn default_text(&self) -> Option<String> {
        match &self.kind {
            Kind::Int { default, .. } => default.map(|d| d.to_string()),
            Kind::Ratio { default } => Some(default.to_string()),
            Kind::Size { default } => default.map(str::to_string),
            Kind::Choice { default, .. } => default.map(str::to_string),
            _ => None,
        }
    }

    /// The range as words: `0-11`, `at least 1`.
    pub fn range_text(&self) -> Option<String> {
        match &self.kind {
            Kind::Int { range, .. } if *range.end() <= 1 << 16 => {
                Some(format!("{}-{}", range.start(), range.end()))
            }
            Kind::Int { range, .. } => Some(format!("at least {}", range.start())),
            Kind::Choice { values, .. } => Some(values.join(", ")),
            _ => None,
        }
    }

    /// The help with an integer's range after its first words (before a
    /// `[default: …]` it says itself).
    pub fn help_with_range(&self) -> String {
        match (&self.kind, self.range_text()) {
            (Kind::Int { .. }, Some(r)) => match self.help.split_once(" [default:") {
                Some((head, tail)) => format!("{head} ({r}) [default:{tail}"),
                None => format!("{} ({r})", self.help),
            },
            _ => self.help.to_string(),
        }
    }

    /// `--help`'s text: the help, the range, the default.
    pub fn help_text(&self) -> String {
        let mut h = self.help_with_range();
        if let Some(d) = self.default_text() {
            h.push_str(&format!(" [default: {d}]"));
        }
        h
    }

    /// The clap argument.
    pub fn arg(&self) -> Arg {
        let mut a = Arg::new(self.flag).long(self.flag).help(self.help_text());
        if let Some(s) = self.short {
            a = a.short(s);
        }
        if let Some(al) = self.alias {
            a = a.visible_alias(al);
        }
        let takes_value = !matches!(self.kind, Kind::Switch | Kind::Negation | Kind::Sets { .. });
        if takes_value {
            a = a.value_name(self.value_name.unwrap_or("N"));
        }
        if let Some(e) = self.env {
            a = a.env(e).hide_env_values(true);
        }
        if let Some(c) = self.conflicts {
            a = a.conflicts_with(c);
        }
        match &self.kind {
            Kind::Switch | Kind::Negation | Kind::Sets { .. } => a.action(ArgAction::SetTrue),
            Kind::Int { range, .. } => {
                a.value_parser(clap::value_parser!(i64).range(range.clone()))
            }
            Kind::Ratio { .. } => a.value_parser(limits::ratio),
            Kind::Size { .. } => a.value_parser(crate::cli::budget::parse_size),
            Kind::Choice { values, list, .. } => {
                let a = a.value_parser(clap::builder::PossibleValuesParser::new(*values));
                if *list {
                    a.value_delimiter(',').action(ArgAction::Append)
                } else {
                    a
                }
            }
            Kind::Path { .. } => a.value_parser(clap::value_parser!(PathBuf)),
            Kind::Releases => a
                .value_parser(clap::value_parser!(PathBuf))
                .action(ArgAction::Append),
            Kind::Globs | Kind::Budgets => a.action(ArgAction::Append),
            Kind::Text { parse } => {
                let parse = *parse;
                a.value_parser(move |s: &str| parse(s))
            }
        }
    }

    /// Its value in `m`, if the command line (or its variable) gave one.
    fn given_in(&self, m: &ArgMatches) -> Option<Value> {
        use clap::parser::ValueSource;
        let given = matches!(
            m.value_source(self.flag),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        );
        if !given {
            return None;
        }
        let id = self.flag;
        Some(match &self.kind {
            Kind::Switch | Kind::Negation | Kind::Sets { .. } => Value::Bool(m.get_flag(id)),
            Kind::Int { .. } => Value::Int(*m.get_one::<i64>(id)?),
            Kind::Ratio { .. } => Value::Ratio(*m.get_one::<f64>(id)?),
            Kind::Size { .. } => Value::Size(*m.get_one::<u64>(id)?),
            Kind::Choice { list: true, .. } | Kind::Globs | Kind::Budgets => {
                Value::Texts(m.get_many::<String>(id)?.cloned().collect())
            }
            Kind::Choice { list: false, .. } | Kind::Text { .. } => {
                Value::Text(m.get_one::<String>(id)?.clone())
            }
            Kind::Path { .. } => Value::Path(m.get_one::<PathBuf>(id)?.clone()),
            Kind::Releases => Value::Paths(m.get_many::<PathBuf>(id)?.cloned().collect()),
        })
    }
}

/// The options of one run: each one's value, and where it came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    values: BTreeMap<&'static str, (Value, Source)>,
}

impl Settings {
    /// What the command line in `m` gave, the options of `of` only.
    pub fn from_matches(m: &ArgMatches, of: &[&'static Opt]) -> Settings {
        let mut s = Settings::default();
        for o in of {
            if let Some(v) = o.given_in(m) {
                s.set(o, v, Source::CommandLine);
            }
        }
        s
    }

    /// What the options' environment variables give (as clap reads them for
    /// the run's command line).
    pub fn from_env() -> Settings {
        let mut s = Settings::default();
        for o in RUN {
            let var = o.env.and_then(std::env::var_os).filter(|v| !v.is_empty());
            if let (Some(v), Kind::Path { .. }) = (var, &o.kind) {
                s.set(o, Value::Path(PathBuf::from(v)), Source::CommandLine);
            }
        }
        s
    }

    /// Sets `o` to `v`, unless a source above `from` set it already.
    pub fn set(&mut self, o: &'static Opt, v: Value, from: Source) {
        if let Kind::Sets { option, value } = o.kind {
            if v == Value::Bool(true) {
                let to = find(option).expect("Sets names an option of the table");
                self.set(to, Value::Text(value.to_string()), from);
            }
        }
        match self.values.get(o.flag) {
            Some((_, had)) if *had > from => {}
            _ => {
                self.values.insert(o.flag, (v, from));
            }
        }
    }

    /// Every option the command line gave over `self`'s.
    pub fn overlay(&mut self, over: &Settings) {
        for (flag, (v, from)) in &over.values {
            let o = find(flag).expect("a flag of the table");
            self.set(o, v.clone(), *from);
        }
    }

    /// `flag`'s value: set, else its default.
    fn get(&self, flag: &str) -> Option<Value> {
        let o = find(flag).unwrap_or_else(|| panic!("--{flag} is no option of the table"));
        self.values
            .get(flag)
            .map(|(v, _)| v.clone())
            .or_else(|| o.default_value())
    }

    pub fn switch(&self, flag: &str) -> bool {
        match self.get(flag) {
            Some(Value::Bool(b)) => b,
            other => panic!("--{flag} is no switch: {other:?}"),
        }
    }

    pub fn int(&self, flag: &str) -> Option<i64> {
        match self.get(flag) {
            Some(Value::Int(n)) => Some(n),
            None => None,
            other => panic!("--{flag} is no number: {other:?}"),
        }
    }

    pub fn ratio(&self, flag: &str) -> f64 {
        match self.get(flag) {
            Some(Value::Ratio(r)) => r,
            other => panic!("--{flag} is no ratio: {other:?}"),
        }
    }

    pub fn size(&self, flag: &str) -> u64 {
        match self.get(flag) {
            Some(Value::Size(n)) => n,
            other => panic!("--{flag} is no size: {other:?}"),
        }
    }

    pub fn text(&self, flag: &str) -> Option<String> {
        match self.get(flag) {
            Some(Value::Text(t)) => Some(t),
            None => None,
            other => panic!("--{flag} is no text: {other:?}"),
        }
    }

    pub fn texts(&self, flag: &str) -> Vec<String> {
        match self.get(flag) {
            Some(Value::Texts(t)) => t,
            other => panic!("--{flag} is no list: {other:?}"),
        }
    }

    pub fn path(&self, flag: &str) -> Option<PathBuf> {
        match self.get(flag) {
            Some(Value::Path(p)) => Some(p),
            None => None,
            other => panic!("--{flag} is no path: {other:?}"),
        }
    }

    pub fn paths(&self, flag: &str) -> Vec<PathBuf> {
        match self.get(flag) {
            Some(Value::Paths(p)) => p,
            other => panic!("--{flag} is no list of paths: {other:?}"),
        }
    }

    /// Sets `flag` from the program (not a source the user gave).
    pub fn put(&mut self, flag: &str, v: Value) {
        let o = find(flag).unwrap_or_else(|| panic!("--{flag} is no option of the table"));
        self.values.insert(o.flag, (v, Source::CommandLine));
    }

    /// Forgets `flag`'s value: its default applies.
    pub fn clear(&mut self, flag: &str) {
        self.values.remove(flag);
    }
}

/// The arguments of `precompress DIR`: the folder and [`RUN`]'s options,
/// parsed by clap from the table.
#[derive(Debug, Clone, Default)]
pub struct RunArgs {
    /// The build output folder to precompress (e.g. dist/).
    pub dir: Option<PathBuf>,
    pub settings: Settings,
}

impl clap::FromArgMatches for RunArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(RunArgs {
            dir: m.get_one::<PathBuf>("dir").cloned(),
            settings: Settings::from_matches(m, &RUN.iter().collect::<Vec<_>>()),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for RunArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.arg(
            Arg::new("dir")
                .value_name("DIR")
                .required(true)
                .value_parser(clap::value_parser!(PathBuf))
                .help("The build output folder to precompress (e.g. dist/)"),
        )
        .args(RUN.iter().map(Opt::arg))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// `precompress tune`'s options that are the run's, from the same rows but
/// with no default of their own: one it is not given falls back to what the
/// run would use (precompress.toml, then the table's default).
#[derive(Debug, Clone, Default)]
pub struct TuneOptions {
    pub settings: Settings,
}

/// The run's options `precompress tune` takes.
pub const TUNE: [&str; 9] = [
    "formats",
    "brotli-quality",
    "zstd-level",
    "gzip-level",
    "include",
    "exclude",
    "min-size",
    "follow-links",
    "threads",
];

fn tune_opts() -> Vec<&'static Opt> {
    TUNE.iter()
        .map(|f| find(f).expect("TUNE names options of the table"))
        .collect()
}

impl clap::FromArgMatches for TuneOptions {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(TuneOptions {
            settings: Settings::from_matches(m, &tune_opts()),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for TuneOptions {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.args(tune_opts().into_iter().map(|o| {
            let d = o.default_text().unwrap_or_else(|| "the run's".into());
            let help = o.help_text();
            let head = help.split(" [default").next().unwrap_or(o.help);
            o.arg().help(format!(
                "Compare with: {head} [default: precompress.toml's, else {d}]"
            ))
        }))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// Every `precompress.toml` key, for the unknown-key message.
pub fn keys() -> Vec<&'static str> {
    let mut k: Vec<&str> = RUN.iter().filter_map(|o| o.toml.name()).collect();
    k.sort_unstable();
    k.dedup();
    k
}

impl RunArgs {
    /// The run's library settings: one line per option the run uses.
    pub fn to_config(&self) -> precompressor::Config {
        use precompressor::config::SharedDictionary;
        use precompressor::encode::delta::DeltaCoding;
        use precompressor::encode::{Codec, Levels};
        let s = &self.settings;
        let int = |f: &str| s.int(f).expect("the option has a default");
        let mut c = precompressor::Config::new(self.dir.clone().unwrap_or_default());
        c.codecs = sorted(s.texts("formats"), Codec::parse);
        c.levels = Levels {
            brotli_quality: int("brotli-quality") as u32,
            zstd_level: int("zstd-level") as i32,
            gzip_level: int("gzip-level") as i32,
        };
        c.min_ratio = s.ratio("min-ratio");
        c.include = s.texts("include");
        c.exclude = s.texts("exclude");
        c.min_size = s.size("min-size");
        c.follow_links = s.switch("follow-links");
        c.manifest = s.path("manifest");
        c.threads = s.int("threads").map_or(0, |n| n as usize);
        c.force = s.switch("force");
        c.cache_dir = s.path("cache-dir");
        c.cache_max_size = s.size("cache-max-size");
        c.dictionary_from = s.paths("dictionary-from");
        c.delta_codings = sorted(s.texts("delta-formats"), DeltaCoding::parse);
        c.max_files = s.int("max-files").map(|n| n as u64);
        c.delta_releases = s.int("delta-releases").map(|n| n as usize);
        c.shard = s
            .text("shard")
            .map(|t| precompressor::shard::Shard::parse(&t).expect("checked when given"));
        c.use_as_dictionary = !s.switch("no-use-as-dictionary");
        c.page_dictionary = !s.switch("no-page-dictionary");
        c.shared_dictionary = s
            .text("shared-dictionary")
            .and_then(|t| SharedDictionary::parse(&t))
            .expect("one of the values the table lists");
        if let Some(b) = s.text("base") {
            c.base = b;
        }
        c.dry_run = s.switch("dry-run");
        c.allow_empty = s.switch("allow-empty");
        c.allow_project_root = s.switch("allow-project-root");
        c
    }
}

/// A list option's values as the run's type, sorted, each once.
fn sorted<T: Ord>(names: Vec<String>, parse: impl Fn(&str) -> Option<T>) -> Vec<T> {
    let mut v: Vec<T> = names
        .iter()
        .map(|n| parse(n).expect("one of the values the table lists"))
        .collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn parse(args: &[&str]) -> Result<RunArgs, clap::Error> {
        let mut argv = vec!["precompress"];
        argv.extend_from_slice(args);
        crate::cli::args::Cli::try_parse_from(argv).map(|c| c.run)
    }

    #[test]
    fn every_row_is_one_flag_one_key_one_plugin_option() {
        let mut seen = std::collections::BTreeSet::new();
        for o in RUN {
            assert!(seen.insert(o.flag), "--{} twice", o.flag);
        }
        for surface in [keys(), RUN.iter().filter_map(|o| o.plugin.name()).collect()] {
            let mut s = surface.clone();
            s.sort_unstable();
            s.dedup();
            assert_eq!(s.len(), surface.len(), "a name twice: {surface:?}");
        }
        for o in RUN {
            if let Kind::Sets { option, value } = o.kind {
                let to = find(option).expect("Sets names a row");
                assert!(matches!(&to.kind, Kind::Choice { values, .. } if values.contains(&value)));
            }
            if let Some(c) = o.conflicts {
                assert!(find(c).is_some(), "--{} conflicts with no row {c}", o.flag);
            }
        }
    }

    /// The table's defaults are the library's: a bare run's Config is
    /// `Config::new`'s, so a default cannot drift between them.
    #[test]
    fn the_defaults_are_the_library_s() {
        let bare = parse(&["dist"]).unwrap().to_config();
        let lib = precompressor::Config::new("dist");
        assert_eq!(format!("{bare:?}"), format!("{lib:?}"));
        for o in RUN {
            if let (
                Kind::Int {
                    range,
                    default: Some(d),
                },
                _,
            ) = (&o.kind, o)
            {
                assert!(
                    range.contains(d),
                    "--{}: default {d} out of its range",
                    o.flag
                );
            }
        }
    }

    /// Every value each row's range admits parses, and its ends' neighbours
    /// do not, on the command line and in the file alike.
    #[test]
    fn ranges_hold_on_the_command_line_and_in_the_file() {
        for o in RUN {
            let Kind::Int { range, .. } = &o.kind else {
                continue;
            };
            let f = format!("--{}", o.flag);
            let key = o.toml.name().expect("every number is a file key");
            for (n, ok) in [
                (*range.start(), true),
                (*range.end(), true),
                (range.start() - 1, false),
                (range.end().saturating_add(1), *range.end() == i64::MAX),
            ] {
                let n = n.to_string();
                assert_eq!(parse(&["dist", &f, &n]).is_ok(), ok, "{f} {n}");
                let file = crate::cli::configfile::FileConfig::parse(
                    std::path::Path::new("p.toml"),
                    &format!("{key} = {n}"),
                );
                assert_eq!(file.is_ok(), ok, "{key} = {n}: {file:?}");
            }
        }
    }

    /// Each choice's values parse on both surfaces and reach the Config
    /// (to_config panics on one it cannot take).
    #[test]
    fn every_choice_reaches_the_config() {
        for o in RUN {
            let Kind::Choice { values, .. } = &o.kind else {
                continue;
            };
            for v in *values {
                let a = parse(&["dist", &format!("--{}", o.flag), v]).unwrap();
                let _ = a.to_config();
                let key = o.toml.name().unwrap();
                let mut b = RunArgs::default();
                crate::cli::configfile::FileConfig::parse(
                    std::path::Path::new("p.toml"),
                    &format!("{key} = \"{v}\""),
                )
                .unwrap()
                .apply(&mut b.settings);
                assert_eq!(
                    format!("{:?}", a.to_config()).replace("\"dist\"", "\"\""),
                    format!("{:?}", b.to_config()),
                    "{key} = {v}"
                );
            }
        }
    }

    /// The flags each plugin sample must become (fixtures/options.json, which
    /// the npm tests hold the plugin to) are flags this binary takes, and
    /// they change the run's settings.
    #[test]
    fn every_plugin_sample_s_flags_parse_and_take_effect() {
        let bare = parse(&["dist"]).unwrap().settings;
        for o in RUN.iter().filter(|o| o.plugin.name().is_some()) {
            let samples = made::samples(o);
            assert!(!samples.is_empty(), "--{}: no sample", o.flag);
            for (v, args) in samples {
                let args: Vec<String> = args
                    .iter()
                    .map(|a| a.replace("{root}", "/r").replace("{outDir}", "/r/dist"))
                    .collect();
                let mut argv = vec!["dist"];
                argv.extend(args.iter().map(String::as_str));
                let parsed = parse(&argv).unwrap_or_else(|e| panic!("{v} -> {args:?}: {e}"));
                assert_ne!(parsed.settings, bare, "{v} -> {args:?} changed nothing");
            }
        }
    }

    #[test]
    fn no_shared_dictionary_is_shared_dictionary_off() {
        use precompressor::config::SharedDictionary::{Auto, Off, On};
        assert_eq!(
            parse(&["dist", "--no-shared-dictionary"])
                .unwrap()
                .to_config()
                .shared_dictionary,
            Off
        );
        assert_eq!(
            parse(&["dist", "--shared-dictionary", "on"])
                .unwrap()
                .to_config()
                .shared_dictionary,
            On
        );
        assert_eq!(
            parse(&["dist"]).unwrap().to_config().shared_dictionary,
            Auto
        );
        assert!(parse(&[
            "dist",
            "--shared-dictionary",
            "on",
            "--no-shared-dictionary"
        ])
        .is_err());
        assert!(
            parse(&["dist", "--shared-dictionary", "true"]).is_err(),
            "the flag takes modes only"
        );
    }
}
