//! The table: every option of `precompress DIR`, one row each. A new
//! option is a row here and the line of `RunArgs::to_config` that uses it.

use super::{Kind, Name, Opt, PluginBase};
use precompressor::config::limits;

const fn opt(flag: &'static str, kind: Kind, toml: Name, plugin: Name, help: &'static str) -> Opt {
    Opt {
        flag,
        short: None,
        alias: None,
        value_name: None,
        kind,
        toml,
        plugin,
        env: None,
        conflicts: None,
        help,
        plugin_doc: None,
        plugin_false: None,
    }
}

const ONE_OFF: &str = "a one-off of one invocation, never a setting to pin";
const PRINTS: &str =
    "how one invocation prints; an integration prints through the bundler's logger";

fn check_base(s: &str) -> Result<String, String> {
    precompressor::model::path::normalize_base(s)
}

fn check_shard(s: &str) -> Result<String, String> {
    precompressor::shard::Shard::parse(s).map(|_| s.trim().to_string())
}

/// Every option of `precompress DIR`, in `--help`'s order.
pub static RUN: &[Opt] = &[
    Opt {
        value_name: Some("CODINGS"),
        ..opt(
            "formats",
            Kind::Choice {
                values: &["br", "zstd", "gzip"],
                default: Some("br,zstd,gzip"),
                list: true,
                bools: None,
            },
            Name::Is("formats"),
            Name::Is("formats"),
            "Codings to write, comma-separated",
        )
    },
    opt(
        "brotli-quality",
        Kind::Int { range: limits::BROTLI_QUALITY, default: Some(11) },
        Name::Is("brotli-quality"),
        Name::Is("brotliQuality"),
        "Brotli quality",
    ),
    opt(
        "zstd-level",
        Kind::Int { range: limits::ZSTD_LEVEL, default: Some(19) },
        Name::Is("zstd-level"),
        Name::Is("zstdLevel"),
        "Zstandard level; the window stays at most 8 MiB at every level",
    ),
    opt(
        "gzip-level",
        Kind::Int { range: limits::GZIP_LEVEL, default: Some(12) },
        Name::Is("gzip-level"),
        Name::Is("gzipLevel"),
        "gzip (libdeflate) level",
    ),
    Opt {
        value_name: Some("RATIO"),
        ..opt(
            "min-ratio",
            Kind::Ratio { default: 1.0 },
            Name::Is("min-ratio"),
            Name::Is("minRatio"),
            "Keep a variant only if it is at most this fraction of its source, in (0, 1] (0.8: saves 20% or more)",
        )
    },
    Opt {
        value_name: Some("GLOB"),
        plugin_doc: Some("A RegExp is tested against each path relative to outDir, `/`-separated."),
        ..opt(
            "include",
            Kind::Globs,
            Name::Is("include"),
            Name::Is("include"),
            "Compress only files matching this glob (repeatable; replaces the default type list)",
        )
    },
    Opt {
        value_name: Some("GLOB"),
        plugin_doc: Some("E.g. `['*.map']` or `/\\.map$/`."),
        ..opt(
            "exclude",
            Kind::Globs,
            Name::Is("exclude"),
            Name::Is("exclude"),
            "Never compress files matching this glob (repeatable; wins over --include)",
        )
    },
    Opt {
        value_name: Some("SIZE"),
        ..opt(
            "min-size",
            Kind::Size { default: Some("1KiB") },
            Name::Is("min-size"),
            Name::Is("minSize"),
            "Skip files smaller than this (bytes, or with a unit: 1KiB, 2KB)",
        )
    },
    opt(
        "follow-links",
        Kind::Switch,
        Name::Is("follow-links"),
        Name::Is("followLinks"),
        "Follow symlinks (never to write outside DIR)",
    ),
    Opt {
        value_name: Some("PATH"),
        plugin_doc: Some("Relative to `build.outDir`, like Vite's own `build.manifest`; also read by `check`. `true` or left out: precompress-manifest.json in outDir. It cannot be turned off."),
        ..opt(
            "manifest",
            Kind::Path { from: PluginBase::OutDir },
            Name::Is("manifest"),
            Name::Is("manifest"),
            "Where to write the manifest [default: DIR/precompress-manifest.json]",
        )
    },
    Opt {
        short: Some('j'),
        alias: Some("jobs"),
        value_name: Some("N"),
        ..opt(
            "threads",
            Kind::Int { range: 1..=65535, default: None },
            Name::Is("threads"),
            Name::Is("threads"),
            "Worker threads; no more start than there are jobs, and the scan uses at most the cores [default: the cores available, fewer if the memory available holds fewer workers at 256 MiB each]",
        )
    },
    opt(
        "force",
        Kind::Switch,
        Name::Not(ONE_OFF),
        Name::Not(ONE_OFF),
        "Recompress everything, and overwrite .br/.zst/.gz files precompress did not write",
    ),
    Opt {
        value_name: Some("DIR"),
        env: Some("PRECOMPRESS_CACHE_DIR"),
        plugin_false: Some("no-cache"),
        plugin_doc: Some("Vite empties outDir on every build, so without a cache every build recompresses everything; the cache also keeps the last releases, so each build gets deltas against them with no `dictionaryFrom`; passed to `check` too. `false`: no cache (`--no-cache`)."),
        ..opt(
            "cache-dir",
            Kind::Path { from: PluginBase::Root },
            Name::Is("cache-dir"),
            Name::Is("cacheDir"),
            "The cache: the last releases, which the next run makes RFC 9842 deltas against with no --dictionary-from, and the encoders' outputs, reused across runs and clean checkouts [default: node_modules/.cache/precompress of the nearest folder above DIR with a package.json]",
        )
    },
    opt(
        "no-cache",
        Kind::Switch,
        Name::Not("a one-off for the file: it pins a folder with `cache-dir`"),
        Name::Not("the plugin's `cacheDir: false`"),
        "Use no cache folder, whatever --cache-dir, PRECOMPRESS_CACHE_DIR, precompress.toml or the default say",
    ),
    Opt {
        value_name: Some("SIZE"),
        ..opt(
            "cache-max-size",
            Kind::Size { default: Some("1GiB") },
            Name::Is("cache-max-size"),
            Name::Is("cacheMaxSize"),
            "Bound on the cache's size (bytes, or with a unit: 500MB, 2GiB); least recently used entries go first",
        )
    },
    Opt {
        value_name: Some("PREV"),
        ..opt(
            "dictionary-from",
            Kind::Releases,
            Name::Is("dictionary-from"),
            Name::Is("dictionaryFrom"),
            "An earlier release: its build folder, or the URL the live site serves DIR at (https://example.com/app/), whose dictionaries are fetched; changed fingerprinted assets get RFC 9842 deltas (.dcb, .dcz) against their versions there (repeatable)",
        )
    },
    Opt {
        value_name: Some("CODINGS"),
        ..opt(
            "delta-formats",
            Kind::Choice {
                values: &["dcb", "dcz"],
                default: Some("dcb,dcz"),
                list: true,
                bools: None,
            },
            Name::Is("delta-formats"),
            Name::Is("deltaFormats"),
            "Delta codings to write against earlier releases (--dictionary-from, and the cache's), comma-separated",
        )
    },
    Opt {
        value_name: Some("N"),
        ..opt(
            "max-files",
            Kind::Int { range: 1..=i64::MAX, default: None },
            Name::Is("max-files"),
            Name::Is("maxFiles"),
            "The most files the deploy may hold, the manifest included (Cloudflare Pages takes 20,000): deltas are dropped, the oldest release's first, to stay within it; a deploy its sources and variants alone pass fails",
        )
    },
    opt(
        "delta-releases",
        Kind::Int { range: limits::DELTA_RELEASES, default: None },
        Name::Is("delta-releases"),
        Name::Is("deltaReleases"),
        "Deltas against at most the newest N releases the cache keeps (a visitor of an older one gets the whole file); fewer files to deploy [default: all it keeps]",
    ),
    Opt {
        value_name: Some("K/N"),
        ..opt(
            "shard",
            Kind::Text { parse: check_shard },
            Name::Not("per CI job (K/N of a matrix): a setting of the job, not of the project"),
            Name::Not("an integration compresses the whole build"),
            "Run only shard K of N of the jobs (split by cost, the same in every shard) and write a partial manifest for `precompress merge` (e.g. 2/4)",
        )
    },
    opt(
        "no-use-as-dictionary",
        Kind::Negation,
        Name::Is("use-as-dictionary"),
        Name::Is("useAsDictionary"),
        "Do not mark fingerprinted assets with Use-As-Dictionary in the manifest, so the next release gets no deltas against this one",
    ),
    opt(
        "no-page-dictionary",
        Kind::Negation,
        Name::Is("page-dictionary"),
        Name::Is("pageDictionary"),
        "Send HTML pages no-cache and write no deltas of their own, instead of marking each page as the dictionary of its next version",
    ),
    Opt {
        value_name: Some("MODE"),
        conflicts: Some("no-shared-dictionary"),
        ..opt(
            "shared-dictionary",
            Kind::Choice {
                values: &["auto", "on", "off"],
                default: Some("auto"),
                list: false,
                bools: Some(["auto", "off"]),
            },
            Name::Is("shared-dictionary"),
            Name::Is("sharedDictionary"),
            "The dictionaries every page links, fetched at idle by a first visit: auto, within 2% of a first visit (the summary says how much); on, always; off, none (true is auto, false off)",
        )
    },
    opt(
        "no-shared-dictionary",
        Kind::Sets { option: "shared-dictionary", value: "off" },
        Name::Not("`shared-dictionary = \"off\"`"),
        Name::Not("`sharedDictionary: 'off'`"),
        "As `--shared-dictionary off`: a first visit fetches no dictionary",
    ),
    Opt {
        value_name: Some("PATH"),
        ..opt(
            "base",
            Kind::Text { parse: check_base },
            Name::Is("base"),
            Name::Not("an integration takes the bundler's own base (Vite's `base`, Astro's `base`, SvelteKit's `paths.base`, Nuxt's `app.baseURL`)"),
            "The URL path DIR is served at, as Vite's `base` (e.g. /app/): dictionary patterns and the manifest's URLs start with it [default: /]",
        )
    },
    Opt {
        short: Some('q'),
        ..opt("quiet", Kind::Switch, Name::Not(PRINTS), Name::Not(PRINTS), "Print nothing but errors")
    },
    opt(
        "json",
        Kind::Switch,
        Name::Not("how one invocation prints, for scripts"),
        Name::Not("how one invocation prints, for scripts"),
        "Print a JSON report on stdout (with per-job timings)",
    ),
    Opt {
        short: Some('n'),
        ..opt(
            "dry-run",
            Kind::Switch,
            Name::Not("a one-off: say what a run would do"),
            Name::Not("a one-off: say what a run would do"),
            "Compress to learn the sizes and report what would be written; write and delete nothing",
        )
    },
    opt(
        "allow-empty",
        Kind::Switch,
        Name::Not("an empty DIR means the build did not run, but for the one run that says so"),
        Name::Not("an integration runs after the bundler wrote"),
        "Succeed on a DIR with no file to compress (by default an error: a build that did not run)",
    ),
    opt(
        "allow-project-root",
        Kind::Switch,
        Name::Not("a DIR holding package.json or node_modules/ is a mistake but for the one run that says so"),
        Name::Not("an integration runs on the bundler's output folder"),
        "Compress a DIR that holds package.json or node_modules/ (by default an error: a project root, not a build's output)",
    ),
    Opt {
        short: Some('v'),
        conflicts: Some("quiet"),
        ..opt(
            "verbose",
            Kind::Switch,
            Name::Not("how one invocation prints"),
            Name::Is("verbose"),
            "Print a line per asset (its best variant, or why it has none) on stderr",
        )
    },
    Opt {
        value_name: Some("GLOB=SIZE"),
        plugin_doc: Some("An object: `{ 'assets/**\\/*.js': '150KB' }`. Added to precompress.toml's `[budget]`; a glob given here replaces the file's for that glob."),
        ..opt(
            "budget",
            Kind::Budgets,
            Name::Is("budget"),
            Name::Is("budgets"),
            "Fail (exit 1) when an asset's best variant is larger than SIZE (repeatable; 150KB, 1.5MiB, bytes)",
        )
    },
    Opt {
        value_name: Some("PATH"),
        conflicts: Some("no-config"),
        ..opt(
            "config",
            Kind::Path { from: PluginBase::Root },
            Name::Not("names the file itself"),
            Name::Not("an integration's run finds precompress.toml as the CLI does"),
            "Read settings from this file instead of looking for precompress.toml",
        )
    },
    opt(
        "no-config",
        Kind::Switch,
        Name::Not("turns the file off"),
        Name::Not("an integration's options are its config"),
        "Do not look for precompress.toml",
    ),
    opt(
        "github",
        Kind::Switch,
        Name::Not("the Action's output (GITHUB_OUTPUT, the job summary), set by action.yml"),
        Name::Not("the Action's output (GITHUB_OUTPUT, the job summary), set by action.yml"),
        "Write a GitHub Actions job summary, step outputs and ::error annotations",
    ),
];
