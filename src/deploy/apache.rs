//! Apache httpd 2.4 configuration that serves a manifest (`precompress
//! apache-map`): its variants with RFC 9110 negotiation, its RFC 9842 deltas,
//! and the headers `precompress serve` sends, with only the modules a stock
//! install has (mod_rewrite, mod_headers, mod_mime; mod_deflate may stay on).
//! Apache knows neither zstd siblings, nor q-values for them, nor
//! dictionaries, so every decision [`Index::select_with_dictionary`] makes is
//! spelt out as rewrite rules and `Header` lines, for the server or virtual
//! host whose `DocumentRoot` (plus the base) is DIR.
//!
//! How a request flows, and why each piece is there:
//! - Guards first: the manifest, precompress's own dot-files (journals,
//!   temporaries) and every other dot-file but `.well-known`, and a delta by
//!   its own name are 404s (`R=404`, so `ErrorDocument` applies).
//! - One rule per asset, matched on the URL path (decoded, as Apache maps it),
//!   its own variants' suffixes captured: it sets what the asset needs as
//!   environment variables (its `Cache-Control` class, `Vary`, which dictionary
//!   value and `Link` it sends, each representation's rank by size, its
//!   dictionaries and their deltas), forces the manifest's `Content-Type` on
//!   every response (`T=`, since Apache would type `x.js.gz` as gzip and
//!   `x.js.br` in Breton), sets `no-gzip`/`no-brotli` so mod_deflate and
//!   mod_brotli leave the file as it is, and skips the other asset rules.
//!   Apache needs no map file: the whole configuration is this one text.
//! - The static part, [`NEGOTIATE`] (`apache-negotiate.conf`), runs for those
//!   assets only: each coding's weight becomes four digits, a representation's
//!   key is its weight and its rank, and the highest key wins, which is
//!   negotiate's rule (weight, then size); the pair (asset, dictionary held) is
//!   found by a backreference against the asset's list, so only pairs the
//!   manifest lists are sent, byte for byte as the client named the hash.
//!   The chosen file is checked on disk, then served by a `PT` rewrite.
//! - `Header` lines: `Content-Encoding`, `Vary` (`always`, so a 304 and a
//!   406 carry it), `Cache-Control` as serve sends it (`no-cache` on errors,
//!   so a 404 under a hashed name is never kept a year), `Use-As-Dictionary`
//!   by the number of its value, `Link` on pages, no ranges of a compressed
//!   body. Each is chosen by an expression on a non-empty variable, so one
//!   that `.htaccess` takes back empty sends nothing.
//!
//! Apache's own ETags are kept (from inode, size and time, so no two files
//! share one), and with them its 304s and 412s: a strong ETag from the
//! manifest could be sent, but Apache's conditional requests would not see it.
//!
//! In `.htaccess` ([`Context::Htaccess`], for shared hosting), the same rules
//! match paths relative to the folder, and a sibling is served by internal
//! redirect, whose request sees the variables only as `REDIRECT_*`: a rule on
//! top takes them back under their names, with the type, and ends the rewriting.
//!
//! What Apache cannot do here: notice a file rebuilt after the configuration
//! was made (regenerate and reload on every deploy), or serve from an `Alias`
//! outside the document root in a server (the files are checked under
//! `DOCUMENT_ROOT`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::generate::{named_deltas, pcre_escape, ByDictionary};
use super::{config_assets, ConfigAsset};
use crate::model::coding::{Codec, DeltaCoding};
use crate::model::dictionary::{available_dictionary, hex};
use crate::model::manifest::{Caching, CACHE_PAGE_KEPT};
use crate::serve::{Coding, Entry, Index, CACHE_IMMUTABLE, CACHE_REVALIDATE};

/// The negotiation and the headers: the same for every manifest.
pub const NEGOTIATE: &str = include_str!("apache-negotiate.conf");

/// Where the configuration goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// `Include`d in the server or a virtual host.
    Server,
    /// The folder's `.htaccess` (shared hosting).
    Htaccess,
}

/// The generated configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApacheConfig {
    /// The text to `Include` in the server or virtual host.
    pub config: String,
    /// Assets or representations left out, each with the reason.
    pub skipped: Vec<String>,
    /// What the user should know of the configuration as a whole.
    pub notes: Vec<String>,
}

/// Above this many assets `.htaccess` costs every request noticeably: Apache
/// reads and compiles it on each one, its rules the longer the more assets
/// (measured in issue #36's adversarial run: about 60 ms a request at 10,000
/// assets, 0.6 to 0.74 s at 100,000), where the server form is compiled once.
pub const HTACCESS_ASSETS_WARN: usize = 5_000;

/// Ranks are two digits, so an asset takes part with at most this many
/// representations (identity, three variants, and deltas against 47
/// dictionaries: far past what any run writes).
const MAX_RANKED: usize = 99;

/// The configuration for the assets of `index`, served at its base path (the
/// manifest's `base`, or [`Index::set_base`]), for a server or virtual host,
/// with how to use it on top.
pub fn render(index: &Index) -> ApacheConfig {
    render_in(index, Context::Server)
}

/// [`render`] for `context`.
pub fn render_in(index: &Index, context: Context) -> ApacheConfig {
    let mut skipped = Vec::new();
    // A path is only ever a pattern; a dictionary value is a header's.
    let assets = config_assets(index, unwritable_path, unwritable_header, &mut skipped);
    let mut values = Values::default();
    let mut rules = Vec::with_capacity(assets.len());
    for a in &assets {
        if let Some(rule) = asset_rule(a, context, &mut values, &mut skipped) {
            rules.push(rule);
        }
    }
    let mut out = String::new();
    write_usage(&mut out, &skipped, index.base(), context);
    write_guards(&mut out, index.base(), context);
    write_assets(&mut out, &rules);
    write_negotiation(&mut out, context);
    write_values(&mut out, &values, index);
    let mut notes = Vec::new();
    if context == Context::Htaccess && rules.len() > HTACCESS_ASSETS_WARN {
        notes.push(format!(
            "{} assets: Apache reads .htaccess again on every request, so each one pays for all their rules (about 60 ms a request at 10,000 assets, 0.6 s at 100,000); where you can, put the server form (apache-map without --htaccess) in the virtual host",
            rules.len()
        ));
    }
    ApacheConfig {
        config: out,
        skipped,
        notes,
    }
}

/// The `Use-As-Dictionary` values, each sent under its own variable.
#[derive(Debug, Default)]
struct Values {
    use_as_dictionary: BTreeMap<String, usize>,
}

impl Values {
    /// The number `PC_UAD` takes for `value`.
    fn dictionary(&mut self, value: &str) -> usize {
        let n = self.use_as_dictionary.len() + 1;
        *self.use_as_dictionary.entry(value.to_string()).or_insert(n)
    }
}

/// One representation of an asset, for ranking: its size, then variants
/// before deltas and the index's order, as negotiate breaks ties.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ranked {
    Identity,
    Variant(usize),
    Delta(usize),
}

/// The rewrite rule of one asset, before the `S=` that skips the rest.
struct AssetRule {
    pattern: String,
    flags: Vec<String>,
}

/// The rewrite rule of asset `a`; `None` when it cannot be written (reported
/// in `skipped`).
fn asset_rule(
    a: &ConfigAsset,
    context: Context,
    values: &mut Values,
    skipped: &mut Vec<String>,
) -> Option<AssetRule> {
    let (k, entry) = (a.key, a.entry);
    if let Some(why) = unwritable_flag(&entry.content_type) {
        // Without its type, a variant would go out typed by its suffix.
        skipped.push(format!("{k}: content type {:?}: {why}", entry.content_type));
        return None;
    }
    let variants: Vec<(Codec, u64)> = entry
        .variants
        .iter()
        // Each at `KEY.suffix`: the index refuses a manifest that lists a
        // variant under any other name (`model::names::sibling_path`).
        .filter_map(|r| match r.coding {
            Some(Coding::Variant(c)) => Some((c, r.size)),
            _ => None,
        })
        .collect();
    let by_dict = named_deltas(a, unwritable_flag, skipped);
    let ranks = rank(entry.identity.size, &variants, &by_dict, k, skipped);

    let mut flags = vec![format!("E=PC_CC:{}", cache_class(entry))];
    // A server matches the URL path; .htaccess the path under its folder.
    let path = match context {
        Context::Server => a.uri.as_str(),
        Context::Htaccess => a.key,
    };
    let mut pattern = format!("^{}", pattern_of(path));
    if !variants.is_empty() {
        let suffixes: Vec<String> = variants
            .iter()
            .map(|(c, _)| pcre_escape(&format!(".{}", c.suffix())))
            .collect();
        let _ = write!(pattern, "((?:{}))?", suffixes.join("|"));
        flags.push("E=PC_SFX:$1".into());
    }
    // Not `$`, which also matches before a final newline.
    pattern.push_str(r"\z");
    let deltas: Vec<_> = by_dict
        .iter()
        .filter(|(h, _)| ranks.dictionaries.contains(h))
        .collect();
    if !deltas.is_empty() {
        flags.push("E=PC_VARY:d".into());
    } else if !variants.is_empty() {
        flags.push("E=PC_VARY:a".into());
    }
    if let Some(u) = a.use_as {
        flags.push(format!("E=PC_UAD:{}", values.dictionary(u)));
    }
    if entry.link.is_some() {
        flags.push("E=PC_LINK:1".into());
    }
    if entry.deferred && !deltas.is_empty() {
        flags.push("E=PC_DEFER:1".into());
    }
    flags.push(format!("E=PC_R_ID:{:02}", ranks.of(Ranked::Identity)));
    for (i, (c, _)) in variants.iter().enumerate() {
        let name = c.token().to_ascii_uppercase();
        flags.push(format!("E=PC_R_{name}:{:02}", ranks.of(Ranked::Variant(i))));
    }
    if !deltas.is_empty() {
        let mut list = String::new();
        let mut i = 0;
        for (hash, reps) in deltas {
            let _ = write!(list, ";{}{}", available_dictionary(hash), hex(hash));
            for (coding, _) in reps {
                let letter = match coding {
                    DeltaCoding::Dcb => 'b',
                    DeltaCoding::Dcz => 'z',
                };
                let _ = write!(list, "{letter}{:02}", ranks.of(Ranked::Delta(i)));
                i += 1;
            }
        }
        flags.push(format!("E=PC_D:{list}"));
    }
    flags.push(format!("T={}", entry.content_type));
    if context == Context::Htaccess {
        // For the request a sibling is served in (see `HTACCESS_TAKE_BACK`).
        flags.push(format!("E=PC_T:{}", entry.content_type));
    }
    // Our files as they are on disk: no compression at request time.
    flags.push("E=no-gzip:1".into());
    flags.push("E=no-brotli:1".into());
    Some(AssetRule { pattern, flags })
}

/// The rank of each representation, larger for smaller (two digits).
struct Ranks {
    order: Vec<Ranked>,
    /// The dictionaries whose deltas are ranked (all, but for a cap).
    dictionaries: Vec<[u8; 32]>,
}

impl Ranks {
    fn of(&self, r: Ranked) -> usize {
        let pos = self.order.iter().position(|x| *x == r).expect("ranked");
        self.order.len() - pos
    }
}

/// Orders identity, the variants and the deltas (numbered across
/// dictionaries in `by_dict`'s order) by size, the index's tie-break after
/// it: identity first (negotiate keeps it on a tie), then the variants, then
/// the deltas. Deltas past [`MAX_RANKED`] are left out and reported.
fn rank(
    identity: u64,
    variants: &[(Codec, u64)],
    by_dict: &ByDictionary,
    key: &str,
    skipped: &mut Vec<String>,
) -> Ranks {
    let mut all: Vec<(u64, Ranked)> = vec![(identity, Ranked::Identity)];
    all.extend(
        variants
            .iter()
            .enumerate()
            .map(|(i, (_, s))| (*s, Ranked::Variant(i))),
    );
    let mut dictionaries = Vec::new();
    let mut i = 0;
    for (hash, reps) in by_dict {
        if all.len() + reps.len() > MAX_RANKED {
            skipped.push(format!(
                "{key}: deltas against {}: more than {MAX_RANKED} representations",
                available_dictionary(hash)
            ));
            continue;
        }
        dictionaries.push(*hash);
        for (_, rep) in reps {
            all.push((rep.size, Ranked::Delta(i)));
            i += 1;
        }
    }
    all.sort();
    Ranks {
        order: all.into_iter().map(|(_, r)| r).collect(),
        dictionaries,
    }
}

/// `i` for [`CACHE_IMMUTABLE`], `p` for a page ([`Caching::Page`], whose
/// `Cache-Control` is decided per request), `r` for [`CACHE_REVALIDATE`]:
/// the `Cache-Control` lines of [`NEGOTIATE`] test it.
fn cache_class(entry: &Entry) -> char {
    if entry.cache == Caching::Page {
        'p'
    } else if entry.cache_control() == CACHE_IMMUTABLE {
        'i'
    } else {
        'r'
    }
}

/// The comment on top: where it goes, and what was left out.
fn write_usage(out: &mut String, skipped: &[String], base: &str, context: Context) {
    let _ = writeln!(
        out,
        "# Apache httpd 2.4 serving a precompress manifest, by precompress {} (`precompress apache-map`).",
        env!("CARGO_PKG_VERSION")
    );
    match context {
        Context::Server => {
            let _ = write!(
                out,
                "# Include this file in the server or <VirtualHost> whose DocumentRoot, plus\n\
                 # {base} (these URLs start with it), is the folder, in front of your own\n\
                 # rewrite rules but those that map a URL onto one of its files (/about to\n\
                 # /about.html), which go first; it turns RewriteEngine on. Its rules end\n\
                 # with [L] for the files they serve. Modules: rewrite, headers, mime\n\
                 # (`a2enmod rewrite headers`); deflate and brotli may stay on, they leave\n\
                 # these files alone. Regenerate and graceful-restart on every deploy:\n\
                 #\n\
                 #     precompress apache-map /srv/dist > /etc/apache2/precompress.conf\n\
                 #     <VirtualHost *:443>\n\
                 #         DocumentRoot /srv/dist\n\
                 #         Include /etc/apache2/precompress.conf\n\
                 #     </VirtualHost>\n\
                 #\n\
                 # Without access to the server's configuration (shared hosting), write it\n\
                 # as the folder's .htaccess instead: `precompress apache-map --htaccess`.\n"
            );
        }
        Context::Htaccess => {
            let _ = write!(
                out,
                "# Save this file as .htaccess in the folder (served at {base}), and write it\n\
                 # again on every deploy:\n\
                 #\n\
                 #     precompress apache-map --htaccess dist > dist/.htaccess\n\
                 #\n\
                 # The host must allow it (AllowOverride FileInfo, which most shared hosts\n\
                 # allow) and have mod_rewrite, mod_headers and mod_mime, as stock installs\n\
                 # do. Rules of your own go after these.\n"
            );
        }
    }
    out.push_str(
        "# Cache-Control is the one precompress serve sends: drop mod_expires and your\n\
         # own Cache-Control for these files, or they get two.\n",
    );
    for s in skipped {
        let _ = writeln!(out, "# skipped: {s}");
    }
}

/// Modules checked at start-up, the engine on, and what is never served.
fn write_guards(out: &mut String, base: &str, context: Context) {
    // A server matches the URL path; .htaccess the path under its folder.
    let b = match context {
        Context::Server => pattern_of(base),
        Context::Htaccess => String::new(),
    };
    for (module, name) in [
        ("rewrite_module", "rewrite"),
        ("headers_module", "headers"),
        ("mime_module", "mime"),
    ] {
        let _ = writeln!(
            out,
            "\n<IfModule !{module}>\n    Error \"precompress apache-map: load mod_{name} (a2enmod {name})\"\n</IfModule>"
        );
    }
    out.push_str("\nRewriteEngine On\n");
    if context == Context::Htaccess {
        out.push_str(HTACCESS_TAKE_BACK);
    }
    let _ = writeln!(
        out,
        "\n\
         # Never served: the manifest (and shards' partial manifests), dot-files but\n\
         # .well-known (precompress's journals and temporaries among them), and a delta\n\
         # by its own name.\n\
         RewriteRule {} - [R=404]\n\
         RewriteRule {} - [R=404]\n\
         RewriteRule {} - [R=404]",
        // `(?s)` and `\z`: a name may hold a newline, where PCRE's `.` stops
        // and before which its `$` already matches.
        rewrite_arg(&format!(
            "^{b}precompress-manifest(?:\\.shard-[0-9]+-of-[0-9]+)?\\.json\\z"
        )),
        rewrite_arg(&format!("(?s)^{b}(?:.*/)?\\.(?!well-known(?:/|\\z))")),
        rewrite_arg(&format!("(?s)^{b}.*\\.[0-9a-f]{{64}}\\.dc[bz]\\z")),
    );
}

/// The asset rules, each skipping the ones after it once it matched.
fn write_assets(out: &mut String, rules: &[AssetRule]) {
    out.push_str("\n# The manifest's assets: what each needs, as variables for the rules below.\n");
    for (i, rule) in rules.iter().enumerate() {
        let mut flags = rule.flags.join(",");
        let rest = rules.len() - i - 1;
        if rest > 0 {
            let _ = write!(flags, ",S={rest}");
        }
        let _ = writeln!(
            out,
            "RewriteRule {} - {}",
            rewrite_arg(&rule.pattern),
            rewrite_arg(&format!("[{flags}]"))
        );
    }
}

/// In `.htaccess`, a sibling is served by internal redirect: in that request
/// the variables set for it are `REDIRECT_*`. Taken back under their names
/// (the headers read them), with the asset's type and no compression, the
/// rewriting ends there (a variant by its own name would be refused).
const HTACCESS_TAKE_BACK: &str = "
# The sibling chosen below, served by internal redirect: its variables back.
RewriteCond %{ENV:REDIRECT_PC_CE} .
RewriteRule ^ - \"[T=%{ENV:REDIRECT_PC_T},E=PC_CE:%{ENV:REDIRECT_PC_CE},E=PC_CC:%{ENV:REDIRECT_PC_CC},E=PC_VARY:%{ENV:REDIRECT_PC_VARY},E=PC_UAD:%{ENV:REDIRECT_PC_UAD},E=PC_LINK:%{ENV:REDIRECT_PC_LINK},E=no-gzip:1,E=no-brotli:1,END]\"
";

/// The skip for every other request, then [`NEGOTIATE`] for `context`: the
/// chosen file's path, and how its rewrite ends.
fn write_negotiation(out: &mut String, context: Context) {
    let (rules, headers) = NEGOTIATE
        .split_once("# (end of the negotiation)\n")
        .expect("the marker");
    let count = rules
        .lines()
        .filter(|l| l.starts_with("RewriteRule "))
        .count();
    let _ = writeln!(
        out,
        "\n# Anything else is served as Apache would.\nRewriteCond %{{ENV:PC_CC}} ^$\nRewriteRule ^ - [S={count}]\n"
    );
    let (file, end, last) = match context {
        Context::Server => ("%{DOCUMENT_ROOT}$1", "?", "QSL,QSA,PT,L"),
        Context::Htaccess => ("%{REQUEST_FILENAME}", "", "B=#%?,L"),
    };
    out.push_str(
        &rules
            .replace("@FILE@", file)
            .replace("@END@", end)
            .replace("@LAST@", last),
    );
    out.push_str(
        &headers
            .replace("@CACHE_IMMUTABLE@", CACHE_IMMUTABLE)
            .replace("@CACHE_REVALIDATE@", CACHE_REVALIDATE)
            .replace("@CACHE_PAGE_KEPT@", CACHE_PAGE_KEPT),
    );
}

/// `Use-As-Dictionary` by value, and the shared dictionaries' `Link`.
fn write_values(out: &mut String, values: &Values, index: &Index) {
    let mut by_number: Vec<_> = values.use_as_dictionary.iter().collect();
    by_number.sort_by_key(|(_, n)| **n);
    if !by_number.is_empty() {
        out.push_str("\n# Use-As-Dictionary of each dictionary asset.\n");
    }
    for (value, n) in by_number {
        let _ = writeln!(
            out,
            "Header set Use-As-Dictionary {} \"expr=%{{ENV:PC_UAD}} == '{n}'\"",
            quote(value)
        );
    }
    if let Some(link) = index.link().filter(|l| unwritable_value(l).is_none()) {
        let _ = writeln!(
            out,
            "\n# The shared dictionaries, on every HTML page.\nHeader set Link {} \"expr=-n %{{ENV:PC_LINK}}\"",
            quote(&link)
        );
    }
}

/// Why `s` (a header value: `Use-As-Dictionary`, a `Link` URL) cannot be
/// written, if it cannot: a `?` would start a URL's query, `%` starts a
/// `Header` format, and a backslash has no place. A value checked by the
/// index has no control character but tab, which a quoted argument keeps.
/// A URL path is only a pattern ([`unwritable_path`]).
fn unwritable(s: &str) -> Option<&'static str> {
    if s.contains('?') {
        Some("a rewrite reads \"?\" as the start of a query")
    } else if s.contains(['%', '\\']) {
        Some("\"%\" or \"\\\" in an Apache value")
    } else {
        None
    }
}

/// Why `s` cannot be written as a `Use-As-Dictionary` value, if it cannot:
/// only ever an argument of `Header set` (never a rewrite's), so a `?` (a
/// page's `match="/about{.html}?"`) is fine; `%` starts a `Header` format.
fn unwritable_header(s: &str) -> Option<&'static str> {
    s.contains(['%', '\\'])
        .then_some("\"%\" or \"\\\" in an Apache value")
}

/// Why the URL path `s` cannot be matched, if it cannot: it is only ever a
/// pattern (escaped, [`pattern_of`]) and a backreference the sibling rules
/// escape (`B=`), so `%`, `?` and `#` are fine; a backslash is no name.
fn unwritable_path(s: &str) -> Option<&'static str> {
    s.contains('\\').then_some("\"\\\" in a URL path")
}

/// [`unwritable`], for a header value that may come from a path (`Link`):
/// written as it is, so no control character.
fn unwritable_value(s: &str) -> Option<&'static str> {
    if s.chars().any(char::is_control) {
        Some("control character")
    } else {
        unwritable(s)
    }
}

/// [`unwritable_value`], for a value inside a rewrite flag (`T=`): flags are
/// split at `,`, and `$` starts a backreference.
fn unwritable_flag(s: &str) -> Option<&'static str> {
    unwritable_value(s).or_else(|| {
        s.contains([',', '$'])
            .then_some("\",\" or \"$\" in a rewrite flag")
    })
}

/// `s` as one double-quoted argument of a directive Apache's own parser
/// reads (`Header`, `Error`): `\` and `"` escaped (Apache takes both back).
fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', r"\\").replace('"', "\\\""))
}

/// `s` as one double-quoted argument of `RewriteRule`, which mod_rewrite
/// splits by itself: a quote ends the argument whatever precedes it, and a
/// backslash stays as it is. `s` holds no `"` (patterns write it `\x22`;
/// [`unwritable_flag`] keeps it out of flags).
fn rewrite_arg(s: &str) -> String {
    assert!(!s.contains('"'), "{s}");
    format!("\"{s}\"")
}

/// [`pcre_escape`] for a rewrite pattern: `"` as `\x22`.
fn pattern_of(s: &str) -> String {
    pcre_escape(s).replace('"', r"\x22")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy::fixture::{index, index_typed};

    const APP: &str = "assets/app-5e6f7a8b.js";

    /// The rule of the asset at `uri`.
    fn rule<'a>(config: &'a str, uri: &str) -> &'a str {
        let quoted = rewrite_arg(&format!("^{}", pattern_of(uri)));
        let start = format!("RewriteRule {}", &quoted[..quoted.len() - 1]);
        config
            .lines()
            .find(|l| l.starts_with(&start))
            .unwrap_or_else(|| panic!("no rule for {uri} in\n{config}"))
    }

    #[test]
    fn an_asset_rule_carries_what_its_responses_need() {
        let idx = index(&[
            (
                APP,
                &[("dcb", 1, 93), ("dcz", 1, 90), ("dcb", 2, 50)],
                Some(r#"match="/assets/app-*.js""#),
            ),
            ("index.html", &[], None),
        ]);
        let out = render(&idx);
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        let r = rule(&out.config, &format!("/{APP}"));
        // Identity 1000 bytes, deltas 50 (dict 2), 90 and 93 (dict 1): the
        // smallest ranks highest. Dictionaries in hash order, each's codings
        // smallest first.
        let want = format!(
            "RewriteRule \"^/assets/app-5e6f7a8b\\.js\\z\" - \"[E=PC_CC:i,E=PC_VARY:d,E=PC_UAD:1,E=PC_R_ID:01,\
             E=PC_D:;{}{}z03b02;{}{}b04,T=text/javascript; charset=utf-8,E=no-gzip:1,E=no-brotli:1,S=1]\"",
            available_dictionary(&[1; 32]),
            hex(&[1; 32]),
            available_dictionary(&[2; 32]),
            hex(&[2; 32]),
        );
        assert_eq!(r, want);
        let page = rule(&out.config, "/index.html");
        assert!(
            page.contains("[E=PC_CC:r,E=PC_R_ID:01,T=text/javascript"),
            "{page}"
        );
        assert!(
            page.ends_with(",E=no-brotli:1]\""),
            "the last skips nothing: {page}"
        );
        assert!(out.config.contains(
            "\nHeader set Use-As-Dictionary \"match=\\\"/assets/app-*.js\\\"\" \"expr=%{ENV:PC_UAD} == '1'\"\n"
        ));
    }

    #[test]
    fn variants_are_ranked_with_identity_and_their_suffixes_captured() {
        let json = r#"{"version": 1, "generator": "t", "settings": {}, "files": {
            "a.css": {"blake3": "00", "content_type": "text/css", "etag": "\"i\"", "sha256": "x", "size": 300, "skipped": {},
              "encodings": [
                {"coding": "gzip", "path": "a.css.gz", "size": 120, "blake3": "00", "etag": "\"g\""},
                {"coding": "br", "path": "a.css.br", "size": 90, "blake3": "00", "etag": "\"b\""},
                {"coding": "zstd", "path": "a.css.zst", "size": 300, "blake3": "00", "etag": "\"z\""}]},
            "b.css": {"blake3": "00", "content_type": "text/css", "etag": "\"i\"", "sha256": "x", "size": 300, "skipped": {},
              "encodings": []}
        }}"#;
        let idx = Index::from_json(std::path::Path::new("m.json"), json).unwrap();
        let out = render(&idx);
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        let r = rule(&out.config, "/a.css");
        // br 90 > gzip 120 > identity 300 = zstd 300 (identity first on a tie).
        assert!(
            r.starts_with(
                "RewriteRule \"^/a\\.css((?:\\.br|\\.gz|\\.zst))?\\z\" - \"[E=PC_CC:r,E=PC_SFX:$1,E=PC_VARY:a,E=PC_R_ID:02,E=PC_R_BR:04,E=PC_R_GZIP:03,E=PC_R_ZSTD:01,"
            ),
            "{r}"
        );
        // An asset with no variant: nothing to capture or vary on.
        let b = rule(&out.config, "/b.css");
        assert!(!b.contains("PC_SFX") && !b.contains("PC_VARY"), "{b}");
    }

    #[test]
    fn the_negotiation_is_skipped_whole_for_other_requests() {
        let out = render(&index(&[]));
        let (rules, _) = NEGOTIATE
            .split_once("# (end of the negotiation)\n")
            .unwrap();
        let n = rules
            .lines()
            .filter(|l| l.starts_with("RewriteRule "))
            .count();
        assert!(n > 40, "{n}");
        assert!(out.config.contains(&format!(
            "RewriteCond %{{ENV:PC_CC}} ^$\nRewriteRule ^ - [S={n}]\n"
        )));
        // The headers use serve's Cache-Control values.
        assert!(out.config.contains(&format!(
            "Cache-Control \"{CACHE_IMMUTABLE}\" \"expr=%{{ENV:PC_CC}} == 'i'"
        )));
        assert!(out.config.contains(&format!(
            "Cache-Control \"{CACHE_REVALIDATE}\" \"expr=%{{ENV:PC_CC}} == 'r'"
        )));
        assert!(!out.config.contains('@'), "a placeholder left");
    }

    #[test]
    fn every_token_the_negotiation_reads_has_its_weight_rules() {
        for var in ["BR", "ZSTD", "GZIP", "DCB", "DCZ", "ID", "STAR"] {
            assert!(
                NEGOTIATE.contains(&format!("RewriteRule ^ - [E=PC_Q_{var}:%1%2%3000]")),
                "{var}"
            );
            assert!(
                NEGOTIATE.contains(&format!("RewriteRule ^ - [E=PC_W_{var}:1000]")),
                "{var}"
            );
        }
        // Every header the rules read is read without Apache adding it to Vary.
        for line in NEGOTIATE.lines().filter(|l| l.contains("%{HTTP:")) {
            assert!(
                line.ends_with("[NV]") || line.ends_with("[NC,NV]"),
                "{line}"
            );
        }
    }

    #[test]
    fn guards_and_base() {
        let mut idx = index(&[(APP, &[], None)]);
        idx.set_base("/app/");
        let out = render(&idx);
        assert!(out.config.contains(
            "RewriteRule \"^/app/precompress-manifest(?:\\.shard-[0-9]+-of-[0-9]+)?\\.json\\z\" - [R=404]\n"
        ));
        assert!(out
            .config
            .contains("RewriteRule \"(?s)^/app/(?:.*/)?\\.(?!well-known(?:/|\\z))\" - [R=404]\n"));
        rule(&out.config, "/app/assets/app-5e6f7a8b.js");
        assert!(out
            .config
            .contains("# Include this file in the server or <VirtualHost>"));
    }

    #[test]
    fn unwritable_assets_and_values_are_skipped_and_reported() {
        let out = render(&index(&[
            // A `?` in a name is fine (issue #36); in a value it is not.
            ("assets/q?x-1a2b3c4d.js", &[("dcb", 1, 9)], None),
            (APP, &[("dcb", 2, 9)], Some("match=\"/a?%20*\"")),
        ]));
        assert_eq!(out.skipped.len(), 1, "{:?}", out.skipped);
        assert!(out.skipped[0].starts_with(&format!("{APP}: Use-As-Dictionary")));
        assert!(out.config.contains(&format!("# skipped: {APP}")));
        rule(&out.config, "/assets/q?x-1a2b3c4d.js");
        assert!(!out.config.contains("PC_UAD"));
        // The asset keeps its deltas without its dictionary value.
        assert!(rule(&out.config, &format!("/{APP}")).contains("E=PC_D:;"));

        let out = render(&index_typed(&[(APP, &[("dcb", 1, 9)], None)], "text/x, y"));
        assert_eq!(out.skipped.len(), 1, "{:?}", out.skipped);
        assert!(
            !out.config.contains("RewriteRule \"^/assets"),
            "{}",
            out.config
        );
    }

    #[test]
    fn odd_names_are_escaped() {
        let name = "odd names/café \"menü\" — (1) & #hash-5e6f7a8b.js";
        let out = render(&index(&[(name, &[("dcz", 1, 9)], None)]));
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        let r = rule(&out.config, &format!("/{name}"));
        assert!(
            r.starts_with(
                "RewriteRule \"^/odd names/café \\x22menü\\x22 — \\(1\\) & #hash-5e6f7a8b\\.js\\z\" - "
            ),
            "{r}"
        );
    }

    /// Issue #29: such an asset was left out (so its variants went out by
    /// their own names, and mod_deflate compressed it again), and `.`/`$`
    /// in the other patterns stop at, or match before, a newline.
    #[test]
    fn names_with_a_newline_or_cr_get_their_rule_and_variants_refused_by_name() {
        let idx =
            crate::deploy::fixture::gzip_only(&["odd/new\nline.txt", "odd/carriage\rreturn-x.txt"]);
        for context in [Context::Server, Context::Htaccess] {
            let out = render_in(&idx, context);
            assert!(out.skipped.is_empty(), "{:?}", out.skipped);
            let slash = if context == Context::Server { "/" } else { "" };
            for escaped in [r"new\nline\.txt", r"carriage\rreturn-x\.txt"] {
                let want = format!(
                    "RewriteRule \"^{slash}odd/{escaped}((?:\\.gz))?\\z\" - \"[E=PC_CC:r,E=PC_SFX:$1,"
                );
                let r = out.config.lines().find(|l| l.starts_with(&want));
                let r = r.unwrap_or_else(|| panic!("no {want} in\n{}", out.config));
                assert!(r.contains(",E=no-gzip:1,E=no-brotli:1"), "{r}");
            }
            assert!(!out.config.contains('\r'), "a raw CR");
            assert!(
                out.config.contains("\nRewriteRule (?s)^(.*)\\z $1.gz"),
                "the sibling's rewrite takes the whole path"
            );
            assert!(out.config.contains(&format!(
                "\nRewriteRule \"(?s)^{slash}.*\\.[0-9a-f]{{64}}\\.dc[bz]\\z\" - [R=404]\n"
            )));
        }
    }

    /// Issue #36: in .htaccess the internal redirect to `a#b.js.br` was cut
    /// at the `#` (a 404 for every browser), and `100%.js`, `a?b.js` got no
    /// rule and no word in either form (their variants went out by their own
    /// names, the asset compressed again by mod_deflate). Each gets its rule,
    /// and the sibling's rewrite keeps the name whole: in a server the query
    /// starts at the `?` it ends with (QSL), in .htaccess the redirect's
    /// `#`, `%` and `?` are escaped (B=).
    #[test]
    fn names_with_hash_percent_or_question_mark_get_their_rule_and_keep_it_whole() {
        let idx = crate::deploy::fixture::gzip_only(&["a#b.txt", "100%.txt", "a?b.txt"]);
        for (context, slash, rewrite) in [
            (Context::Server, "/", "$1.gz? [E=PC_CE:gzip,QSL,QSA,PT,L]"),
            (Context::Htaccess, "", "$1.gz [E=PC_CE:gzip,B=#%?,L]"),
        ] {
            let out = render_in(&idx, context);
            assert!(out.skipped.is_empty(), "{:?}", out.skipped);
            for escaped in [r"a#b\.txt", r"100%\.txt", r"a\?b\.txt"] {
                let want = format!("RewriteRule \"^{slash}{escaped}((?:\\.gz))?\\z\" - ");
                assert!(out.config.contains(&want), "no {want} in\n{}", out.config);
            }
            let line = format!("\nRewriteRule (?s)^(.*)\\z {rewrite}\n");
            assert!(out.config.contains(&line), "no {line} in\n{}", out.config);
        }
    }

    /// Issue #36: at 100,000 assets `.htaccess` cost every request 0.6 to
    /// 0.74 s (Apache reads it each time); past the bound the run says so,
    /// and the server form never does.
    #[test]
    fn a_large_htaccess_says_what_it_costs_and_points_to_the_server_form() {
        let keys: Vec<String> = (0..=HTACCESS_ASSETS_WARN)
            .map(|i| format!("p/{i}.txt"))
            .collect();
        let small: Vec<&str> = keys[..10].iter().map(String::as_str).collect();
        let all: Vec<&str> = keys.iter().map(String::as_str).collect();
        let note = |k: &[&str], c| render_in(&crate::deploy::fixture::gzip_only(k), c).notes;
        assert!(note(&small, Context::Htaccess).is_empty());
        assert!(note(&all, Context::Server).is_empty());
        let n = note(&all, Context::Htaccess);
        assert_eq!(n.len(), 1);
        assert!(
            n[0].contains("5001 assets") && n[0].contains("server form"),
            "{n:?}"
        );
    }

    #[test]
    fn htaccess_rules_match_paths_under_the_folder_and_take_their_variables_back() {
        let mut idx = index(&[(
            APP,
            &[("dcb", 1, 93)],
            Some(r#"match="/app/assets/app-*.js""#),
        )]);
        idx.set_base("/app/");
        let out = render_in(&idx, Context::Htaccess);
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        // No leading slash, no base: the path under the folder.
        let r = out
            .config
            .lines()
            .find(|l| l.starts_with("RewriteRule \"^assets/app-5e6f7a8b\\.js\\z\""))
            .unwrap_or_else(|| panic!("{}", out.config));
        assert!(r.contains(",E=PC_T:text/javascript; charset=utf-8,"), "{r}");
        assert!(out
            .config
            .contains("RewriteRule \"^precompress-manifest(?:"));
        assert!(out
            .config
            .contains("RewriteRule \"(?s)^(?:.*/)?\\.(?!well-known"));
        // The take-back comes before any other rule, and ends the rewriting.
        let take = out
            .config
            .find("RewriteCond %{ENV:REDIRECT_PC_CE} .")
            .unwrap();
        let first = out.config.find("RewriteRule ").unwrap();
        assert!(take < first);
        assert!(out.config.contains(",E=no-gzip:1,E=no-brotli:1,END]\"\n"));
        // Siblings are found by the file's own path, served by internal redirect.
        assert!(out.config.contains(
            "RewriteCond %{REQUEST_FILENAME}.br -f\nRewriteRule (?s)^(.*)\\z $1.br [E=PC_CE:br,B=#%?,L]\n"
        ));
        assert!(!out.config.contains("%{DOCUMENT_ROOT}") && !out.config.contains("PT,L"));
        assert!(!out.config.contains('@'), "a placeholder left");
        assert!(out.config.contains("precompress apache-map --htaccess"));
        // A server's: the URL path, found under the document root, PT.
        let out = render_in(&idx, Context::Server);
        assert!(out
            .config
            .contains("RewriteRule \"^/app/assets/app-5e6f7a8b\\.js\\z\""));
        assert!(out.config.contains(
            "RewriteCond %{DOCUMENT_ROOT}$1.br -f\nRewriteRule (?s)^(.*)\\z $1.br? [E=PC_CE:br,QSL,QSA,PT,L]\n"
        ));
        assert!(!out.config.contains("REDIRECT_PC_CE} .") && !out.config.contains("E=PC_T:"));
    }

    #[test]
    fn quoting() {
        assert_eq!(quote(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(unwritable_flag("text/html; charset=utf-8"), None);
        assert!(unwritable_flag("a,b").is_some());
        // A path's newline is escaped in its pattern; a value's has no place.
        assert_eq!(unwritable("a\nb"), None);
        assert!(unwritable_value("a\nb").is_some());
    }

    #[test]
    fn a_page_gets_the_policy_serve_sends_per_request() {
        let about = r#"match="/about{.html}?", match-dest=("document")"#;
        let idx = index(&[
            (APP, &[], None),
            ("about.html", &[("dcb", 1, 93)], Some(about)),
            ("plain.html", &[], None),
        ]);
        let class = |k: &str| cache_class(idx.iter().find(|(key, _)| *key == k).unwrap().1);
        assert_eq!(class(APP), 'i');
        assert_eq!(class("about.html"), 'p');
        assert_eq!(class("plain.html"), 'r');
        let out = render(&idx);
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        assert!(rule(&out.config, "/about.html").contains("[E=PC_CC:p,E=PC_VARY:d,E=PC_UAD:1,"));
        // Its mark (a `?` is fine in a Header value), Sec-Fetch-Dest in Vary,
        // no-cache but to a Chromium navigation (serve::keeps_page).
        assert!(out.config.contains(&format!(
            "\nHeader set Use-As-Dictionary {} \"expr=%{{ENV:PC_UAD}} == '1'\"\n",
            quote(about)
        )));
        for line in [
            "Header always merge Vary Sec-Fetch-Dest \"expr=%{ENV:PC_CC} == 'p'\"\n",
            "Header always set Cache-Control \"no-cache\" \"expr=%{ENV:PC_CC} == 'r' || %{ENV:PC_CC} == 'p' || -n %{ENV:PC_CC} && %{REQUEST_STATUS} -ge 400\"\n",
            "Header always set Cache-Control \"private, max-age=0, stale-while-revalidate=2592000\" \"expr=%{ENV:PC_CC} == 'p' && %{REQUEST_STATUS} -lt 400 && %{req_novary:Sec-Fetch-Dest} =~ /^[\\x20\\t]*document[\\x20\\t]*$/i && -n %{req_novary:Sec-CH-UA}\"\n",
        ] {
            assert!(out.config.contains(line), "{line}");
        }
        // The kept line comes after the no-cache one, which it overrides.
        let kept = out.config.find("\"private, max-age=0").unwrap();
        assert!(out.config.find("\"no-cache\" \"expr=").unwrap() < kept);
        assert_eq!(unwritable_header("a?b"), None);
        assert!(unwritable_header("100%").is_some());
    }
}
