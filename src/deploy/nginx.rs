//! nginx configuration that serves a manifest's RFC 9842 deltas
//! (`precompress nginx-map`): `map` blocks for the `http {}` level, and the few
//! lines of [`LOCATION_LINES`] for the location that serves the folder. nginx
//! has no dictionary support of its own, so every decision
//! [`Index::select_with_dictionary`] makes is spelt out as a lookup table.
//!
//! How a request flows, and why each piece is there:
//! - `if ($pc_not_served = $uri) { return 404; }`: every variant's URL, and the
//!   manifest's, maps to itself, so a request for one by its own name is a 404
//!   (`return`, so `error_page` applies), whatever its name holds (`$uri` is
//!   decoded: a newline is a newline). The hash ignores case and `=` does not,
//!   so only the exact name is refused; a name with a `$` (no escape for it in
//!   a value) is a regex whose capture is the value.
//! - `if ($pc_deferred) { ... return 204; }`: the code dictionary asked by
//!   Chromium (`Sec-CH-UA`) with no `Available-Dictionary`
//!   ([`Selection::Deferred`](crate::serve::Selection)); its own
//!   `add_header` replaces the location's, so the 204 carries only
//!   `Cache-Control: no-store`. A malformed `Available-Dictionary` gets the
//!   file here, where `serve` answers 204: no browser sends one.
//! - `$pc_dcb` and `$pc_dcz` say whether `Accept-Encoding` names the coding
//!   with a weight above 0 (`*` does not count: it says nothing about holding a
//!   dictionary).
//! - `$pc_delta_key` looks up `"$uri\n$pc_dcb$pc_dcz $http_available_dictionary"`
//!   in a hash: the newline cannot occur in a manifest path nor in a header value,
//!   so the lookup string splits one way only; the accepted codings are part of
//!   the key, so one lookup gives the smaller delta the client accepts.
//! - nginx matches map strings ignoring case, and base64 is case-sensitive (so
//!   are file names). The hash hit therefore carries the exact key, and
//!   `$pc_delta` compares it with the request byte for byte (a regex
//!   backreference); a dictionary or path that differs in case gets no delta.
//!   Keys that collide once lower-cased (which nginx refuses in a hash) are
//!   written as anchored, case-sensitive regexes instead.
//! - `if (-f $document_root$pc_delta) { rewrite ^ $pc_delta last; }`: `rewrite
//!   ... last` is one of the two things that are safe in an `if` in a location;
//!   the file test makes an empty `$pc_delta` (a folder) and a delta missing on
//!   disk (map older than the files) fall through to ordinary serving instead of
//!   a 404. The rewrite happens before the content phase, so `gzip_static` and
//!   `brotli_static` never see the asset's name, and for the delta's name there
//!   is no `.gz` or `.br` beside it: they stay out of the way.
//! - The nested location matches only delta names (`\z`, as PCRE's `$` also
//!   matches before a final newline) and is `internal` (a rewritten
//!   request is internal, a client asking for the file by name gets 404). It has
//!   no rewrite directives of its own (they are not inherited), so the cached
//!   `$pc_delta` cannot loop. nginx would type `.dcb` as
//!   `application/octet-stream` from the extension and `add_header` cannot
//!   replace a type, so `types { } default_type "";` leaves the type unset and
//!   `add_header Content-Type $pc_content_type` sends the asset's.
//! - `add_header` lines are inherited only by a level that has none, so all of
//!   them are in the outer location and reach the nested one; an empty value is
//!   not sent, which keeps them off every other response. `Vary: Accept-Encoding,
//!   Available-Dictionary` goes on every response of an asset that has deltas
//!   (beside `gzip_vary`'s own `Vary: Accept-Encoding`), `Use-As-Dictionary`
//!   on every response of a dictionary.
//! - `$pc_cache_control` is the `Cache-Control` `precompress serve` sends
//!   ([`Entry::cache_control`](crate::serve::Entry::cache_control)), for every asset and every delta
//!   (by `$uri`, which after the rewrite is the delta's): Chromium keeps a
//!   dictionary only while its response is fresh, and without the header that
//!   is a tenth of the time since `Last-Modified`, minutes after a deploy. A
//!   file the manifest does not list gets none, as before.
//! - A page ([`Caching::Page`]) maps to `$pc_page_cache_control` instead, a
//!   map on `Sec-Fetch-Dest` and `Sec-CH-UA` that is
//!   [`keeps_page`](crate::serve::keeps_page): a Chromium navigation gets
//!   [`CACHE_PAGE_KEPT`], any other request `no-cache`. Every response of a
//!   page (and of its deltas) varies on `Sec-Fetch-Dest` too, and carries its
//!   `Use-As-Dictionary` like any other dictionary. nginx sees an empty
//!   `Sec-CH-UA` as none, which no browser sends.
//! - nginx refuses a hash key longer than its bucket, and delta keys are longer
//!   than the default 64 bytes, so the output sets `map_hash_bucket_size` (and
//!   `map_hash_max_size`); nginx allows that once, before the first `map`.
//!
//! What nginx cannot do here: rank a delta against `br` by q-value (a client
//! that names `dcb` or `dcz` with any weight above 0 and holds a dictionary
//! gets the delta), notice a source rebuilt after the map was generated
//! (regenerate and reload on every deploy), serve from an `alias` location, or
//! write a `$` in a map value (assets with `$` in their name get no deltas).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use super::generate::{named_deltas, pcre_escape as regex_escape, vary_of, ByDictionary};
use super::{config_assets, ConfigAsset};
use crate::model::coding::DeltaCoding;
use crate::model::dictionary::available_dictionary;
use crate::model::manifest::{Caching, CACHE_PAGE_KEPT, DEFAULT_NAME};
use crate::serve::{Coding, Entry, Index, CACHE_REVALIDATE};

/// The lines to add to the `location` that serves the folder (with `root`).
pub const LOCATION_LINES: &str = r#"if ($pc_not_served = $uri) { return 404; }
if ($pc_deferred) { add_header Cache-Control no-store; return 204; }
if (-f $document_root$pc_delta) { rewrite ^ $pc_delta last; }
add_header Vary $pc_vary;
add_header Use-As-Dictionary $pc_use_as_dictionary;
add_header Content-Encoding $pc_content_encoding;
add_header Content-Type $pc_content_type;
add_header Link $pc_link;
add_header Cache-Control $pc_cache_control;
location ~ "\.[0-9a-f]{64}\.dc[bz]\z" { internal; types { } default_type ""; }
"#;

/// The variable a page's URIs map `$pc_cache_control` to: what
/// [`crate::serve::keeps_page`] decides for the request ([`PAGE_POLICY`]).
const PAGE_CACHE_CONTROL: &str = "$pc_page_cache_control";

/// What `$pc_page_cache_control` looks up: the newline cannot be in either
/// field, so the string splits one way only.
const PAGE_POLICY: &str = "$http_sec_fetch_dest\n$http_sec_ch_ua";

/// What `$pc_deferred` looks up: the code dictionary's URI, no
/// `Available-Dictionary` and a `Sec-CH-UA` (Chromium:
/// [`Selection::Deferred`](crate::serve::Selection)); the newlines split it
/// one way only.
const DEFERRED: &str = "$uri\n$http_available_dictionary\n$http_sec_ch_ua";

/// What `$pc_delta_key` looks up: `\n` and the space split it one way only,
/// as neither is in a manifest path nor in a valid `Available-Dictionary`.
const LOOKUP: &str = "$uri\n$pc_dcb$pc_dcz $http_available_dictionary";

/// The generated configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NginxMaps {
    /// The text to `include` in `http {}`.
    pub config: String,
    /// Assets or deltas left out, each with the reason.
    pub skipped: Vec<String>,
}

/// Keys and values of a map.
type Entries<'a> = Vec<(&'a str, &'a str)>;

/// One `map` block: exact keys to values.
struct Map {
    doc: &'static str,
    source: String,
    variable: &'static str,
    entries: BTreeMap<String, String>,
    /// Each key maps to itself, written as a regex's capture where nginx
    /// would read a `$` in the value as a variable.
    echo: bool,
}

impl Map {
    fn new(doc: &'static str, source: &str, variable: &'static str) -> Map {
        Map {
            doc,
            source: source.to_string(),
            variable,
            entries: BTreeMap::new(),
            echo: false,
        }
    }

    /// Keys that nginx's case-insensitive hash can hold, and those that must be
    /// regexes because another key equals them once lower-cased.
    fn split(&self) -> (Entries<'_>, Entries<'_>) {
        let mut folded: HashMap<String, usize> = HashMap::new();
        for k in self.entries.keys() {
            *folded.entry(k.to_ascii_lowercase()).or_default() += 1;
        }
        self.entries
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .partition(|(k, _)| {
                folded[&k.to_ascii_lowercase()] == 1 && !(self.echo && k.contains('$'))
            })
    }

    fn write(&self, out: &mut String) {
        let (hashed, regexes) = self.split();
        let _ = writeln!(out, "\n# {}", self.doc);
        let _ = writeln!(out, "map {} ${} {{", self.source, self.variable);
        for (k, v) in hashed {
            let _ = writeln!(out, "    {} {};", quote(k), quote(v));
        }
        for (k, v) in regexes {
            let (re, v) = if self.echo {
                (format!("~^({})\\z", regex_escape(k)), "$1")
            } else {
                (format!("~^{}\\z", regex_escape(k)), v)
            };
            let _ = writeln!(out, "    {} {};", quote(&re), quote(v));
        }
        out.push_str("}\n");
    }

    /// The bytes nginx takes for its longest hashed key: a pointer, the key,
    /// two bytes of length, aligned to a pointer.
    fn longest_element(&self) -> usize {
        let (hashed, _) = self.split();
        hashed
            .iter()
            .map(|(k, _)| (8 + k.len() + 2).div_ceil(8) * 8)
            .max()
            .unwrap_or(0)
    }
}

/// `Accept-Encoding` names `token` with a weight above 0.
fn accepts(token: &str) -> String {
    format!("~*{}", super::accept_encoding_regex(token))
}

/// The map lines for the deltas and dictionaries of `index`, served at its
/// base path (the manifest's `base`, or [`Index::set_base`]), and the lines for the location in a comment on top.
pub fn render(index: &Index) -> NginxMaps {
    let mut skipped = Vec::new();
    let mut maps = Maps::new();
    maps.not_served(index);
    for a in config_assets(index, unwritable, unwritable, &mut skipped) {
        let by_dict = named_deltas(&a, unwritable, &mut skipped);
        maps.add(&a, &by_dict, index);
    }
    let mut out = String::new();
    write_usage(&mut out, &skipped, index.base());
    let deferred = maps.deferred.take();
    write_maps(&mut out, maps.all());
    write_link(&mut out, index);
    write_deferred(&mut out, deferred.as_deref());
    NginxMaps {
        config: out,
        skipped,
    }
}

/// The `map` blocks that depend on the manifest.
struct Maps {
    key: Map,
    vary: Map,
    dictionary: Map,
    content_type: Map,
    content_encoding: Map,
    cache_control: Map,
    not_served: Map,
    /// The code dictionary's URI, when Chromium asking it holding no
    /// dictionary gets a 204.
    deferred: Option<String>,
}

impl Maps {
    fn new() -> Maps {
        Maps {
            key: Map::new(
                "The smaller delta this client accepts for its dictionary, and the exact key (nginx ignores case here).",
                &quote(LOOKUP),
                "pc_delta_key",
            ),
            vary: Map::new(
                "Every response of an asset with deltas varies on both fields, a page's on Sec-Fetch-Dest too.",
                "$uri",
                "pc_vary",
            ),
            dictionary: Map::new(
                "Every response of a dictionary says so.",
                "$uri",
                "pc_use_as_dictionary",
            ),
            content_type: Map::new("A delta has its asset's type.", "$uri", "pc_content_type"),
            content_encoding: Map::new("A delta's coding.", "$uri", "pc_content_encoding"),
            cache_control: Map::new(
                "Every response of an asset and of its deltas: a year when the name has a content hash, a page's per request ($pc_page_cache_control), else revalidate.",
                "$uri",
                "pc_cache_control",
            ),
            not_served: Map {
                echo: true,
                ..Map::new(
                    "Never served by its own name: a variant, the manifest (to itself: the location compares it with $uri, case and all).",
                    "$uri",
                    "pc_not_served",
                )
            },
            deferred: None,
        }
    }

    /// Every variant's URL and the manifest's, whatever they hold: the
    /// location refuses them all, so none is left out.
    fn not_served(&mut self, index: &Index) {
        let urls = index
            .iter()
            .flat_map(|(_, e)| &e.variants)
            .filter(|r| matches!(r.coding, Some(Coding::Variant(_))))
            .map(|r| index.url(&r.path))
            .chain([index.url(DEFAULT_NAME)]);
        for url in urls {
            self.not_served.entries.insert(url.clone(), url);
        }
    }

    /// Adds the entries of asset `a`, with `by_dict` the deltas the maps send for it.
    fn add(&mut self, a: &ConfigAsset, by_dict: &ByDictionary, index: &Index) {
        let (entry, uri, use_as) = (a.entry, &a.uri, a.use_as);
        let vary = vary_of(entry, !by_dict.is_empty());
        for (hash, deltas) in by_dict {
            let dict = available_dictionary(hash);
            let of = |c: DeltaCoding| deltas.iter().find(|(d, _)| *d == c).map(|(_, r)| *r);
            let accepted = [
                ("bz", deltas.first().map(|(_, r)| *r)),
                ("b", of(DeltaCoding::Dcb)),
                ("z", of(DeltaCoding::Dcz)),
            ];
            for (flags, rep) in accepted {
                if let Some(rep) = rep {
                    let exact = format!("{uri}\n{flags} {dict}");
                    self.key
                        .entries
                        .insert(exact.clone(), format!("{}\t{exact}", index.url(&rep.path)));
                }
            }
            for (coding, rep) in deltas {
                let p = index.url(&rep.path);
                if let Some(v) = vary {
                    self.vary.entries.insert(p.clone(), v.into());
                }
                self.content_type
                    .entries
                    .insert(p.clone(), entry.content_type.clone());
                self.content_encoding
                    .entries
                    .insert(p.clone(), coding.token().into());
                self.cache_control
                    .entries
                    .insert(p.clone(), cache_control(entry).into());
                if let Some(u) = use_as {
                    self.dictionary.entries.insert(p, u.into());
                }
            }
        }
        if let Some(v) = vary {
            self.vary.entries.insert(uri.clone(), v.into());
        }
        if let Some(u) = use_as {
            self.dictionary.entries.insert(uri.clone(), u.into());
        }
        self.cache_control
            .entries
            .insert(uri.clone(), cache_control(entry).into());
        if entry.deferred && !by_dict.is_empty() {
            self.deferred = Some(uri.clone());
        }
    }

    /// The maps in the order they are written, `$pc_delta_key` first.
    fn all(self) -> [Map; 7] {
        [
            self.key,
            self.vary,
            self.dictionary,
            self.content_type,
            self.content_encoding,
            self.cache_control,
            self.not_served,
        ]
    }
}

/// The value `$pc_cache_control` maps the URIs of `entry` to: a page's is
/// [`PAGE_CACHE_CONTROL`], decided per request.
fn cache_control(entry: &Entry) -> &'static str {
    if entry.cache == Caching::Page {
        PAGE_CACHE_CONTROL
    } else {
        entry.cache_control()
    }
}

/// The comment on top: the lines for the location, and what was left out.
fn write_usage(out: &mut String, skipped: &[String], base: &str) {
    let _ = writeln!(
        out,
        "# RFC 9842 deltas for nginx, by precompress {} (`precompress nginx-map`).",
        env!("CARGO_PKG_VERSION")
    );
    out.push_str(
        "# Include this file in http {} before any other map (nginx takes the two\n\
         # map_hash_* lines only there, and only once: if your config sets them, keep\n\
         # the larger values). Regenerate and reload on every deploy. In the location\n\
         # that serves the folder at ",
    );
    let _ = write!(
        out,
        "{base} (these URLs start with it: root, or alias under a base), add:\n#\n"
    );
    for line in LOCATION_LINES.lines() {
        let _ = writeln!(out, "#     {line}");
    }
    out.push_str(
        "#\n# add_header in a location drops the server's add_header lines: repeat yours there.\n\
         # Cache-Control is the one precompress serve sends: drop any expires or Cache-Control of yours.\n",
    );
    for s in skipped {
        let _ = writeln!(out, "# skipped: {s}");
    }
}

/// `map_hash_bucket_size` and `map_hash_max_size` for `maps`. A bucket must
/// hold a key and a pointer, or nginx refuses to start; room for four of the
/// longest lets it find a table size without warnings (with 9000 keys of 150
/// bytes, tried: 1024 and 4x the keys do, 512 or 2x not). The bucket size is
/// only a bound: nginx allocates what the keys take.
fn hash_sizes(maps: &[Map]) -> (usize, usize) {
    let longest = maps.iter().map(Map::longest_element).max().unwrap_or(0);
    let bucket = (4 * longest + 8).next_power_of_two().max(64);
    let most = maps.iter().map(|m| m.entries.len()).max().unwrap_or(0);
    let max_size = (4 * most).next_power_of_two().max(2048);
    (bucket, max_size)
}

/// The hash sizes, the `Accept-Encoding` maps, `$pc_delta_key` and the
/// `$pc_delta` that checks it, then the other maps.
fn write_maps(out: &mut String, maps: [Map; 7]) {
    let (bucket, max_size) = hash_sizes(&maps);
    let _ = writeln!(out, "\nmap_hash_bucket_size {bucket};");
    let _ = writeln!(out, "map_hash_max_size {max_size};");
    for token in ["dcb", "dcz"] {
        let _ = writeln!(
            out,
            "\n# Accept-Encoding names {token} with a weight above 0.\n\
             map $http_accept_encoding $pc_{token} {{\n    {} {};\n}}",
            quote(&accepts(token)),
            &token[2..]
        );
    }
    // serve::keeps_page: a navigation (Sec-Fetch-Dest: document) of a browser
    // that sends Sec-CH-UA (Chromium). nginx trims a field's value; an empty
    // Sec-CH-UA is as none, which no browser sends.
    let _ = writeln!(
        out,
        "\n# A page's Cache-Control: kept by a Chromium navigation, else revalidated.\n\
         map {} {PAGE_CACHE_CONTROL} {{\n    default {};\n    {} {};\n}}",
        quote(PAGE_POLICY),
        quote(CACHE_REVALIDATE),
        quote("~*^document\n."),
        quote(CACHE_PAGE_KEPT)
    );
    maps[0].write(out);
    // `$pc_delta_key` is "PATH\tKEY": PATH when the request is KEY to the byte.
    let _ = writeln!(
        out,
        "\n# The delta's path, if the request is that exact key (a backreference is case-sensitive).\n\
         map {} $pc_delta {{\n    {} $1;\n}}",
        quote(&format!("$pc_delta_key\t{LOOKUP}")),
        quote(r"~^([^\t]*)\t([^\t]*)\t\2\z")
    );
    for m in &maps[1..] {
        m.write(out);
    }
}

/// `$pc_link`: the `Link` to the release's shared dictionaries on every HTML
/// response (by the type nginx sends, so folder URLs and `try_files` pages
/// get it too, or for a page's delta, which nginx sends untyped, the type
/// `$pc_content_type` adds); empty, so no header, when there is none.
fn write_link(out: &mut String, index: &Index) {
    let link = index.link().filter(|l| unwritable(l).is_none());
    let _ = writeln!(
        out,
        "\n# The shared dictionaries' Link, on HTML responses (a page's delta by the type added).\nmap $sent_http_content_type$pc_content_type $pc_link {{"
    );
    if let Some(l) = link {
        let _ = writeln!(out, "    {} {};", quote("~^text/html"), quote(&l));
    }
    let _ = writeln!(out, "}}");
}

/// `$pc_deferred`: `1` for a request by Chromium (a `Sec-CH-UA`, which
/// nginx sees as none when empty) for the code dictionary at `uri` holding
/// no dictionary (none, or an empty one); always written, so the location's
/// `if` has its variable.
fn write_deferred(out: &mut String, uri: Option<&str>) {
    let _ = writeln!(
        out,
        "\n# The code dictionary asked by Chromium holding no dictionary: 204, stored nowhere\n\
         # (it asks again once it holds the chunk it is a delta against).\nmap {} $pc_deferred {{",
        quote(DEFERRED)
    );
    if let Some(uri) = uri {
        let re = format!("~^{}\n\n.", regex_escape(uri));
        let _ = writeln!(out, "    {} 1;", quote(&re));
    }
    let _ = writeln!(out, "}}");
}

/// Why `s` cannot be written into a map value, if it cannot: nginx reads `$`
/// as a variable (there is no escape for it), and control characters would
/// break the lookup string's separators.
fn unwritable(s: &str) -> Option<&'static str> {
    if s.contains('$') {
        Some("\"$\" cannot be written in an nginx map value")
    } else if s.chars().any(|c| c.is_control()) {
        Some("control character")
    } else {
        None
    }
}

/// A double-quoted nginx string: `\` and `"` escaped, newline, CR and tab as
/// `\n`, `\r` and `\t` (which nginx turns back into the characters).
fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '\\' => q.push_str(r"\\"),
            '"' => q.push_str("\\\""),
            '\n' => q.push_str(r"\n"),
            '\r' => q.push_str(r"\r"),
            '\t' => q.push_str(r"\t"),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy::generate::VARY_DELTAS as VARY;
    use crate::model::dictionary::hex;

    const APP: &str = "assets/app-5e6f7a8b.js";

    use crate::deploy::fixture::index;

    fn dict(d: u8) -> String {
        available_dictionary(&[d; 32])
    }

    fn delta(key: &str, d: u8, coding: &str) -> String {
        format!("/{key}.{}.{coding}", hex(&[d; 32]))
    }

    /// The block of `$variable`, without its comment.
    fn block<'a>(config: &'a str, variable: &str) -> &'a str {
        let start = config
            .find(&format!(" ${variable} {{"))
            .unwrap_or_else(|| panic!("no map for ${variable} in\n{config}"));
        let start = config[..start].rfind('\n').unwrap() + 1;
        let end = start + config[start..].find("\n}\n").unwrap() + 3;
        &config[start..end]
    }

    #[test]
    fn each_accepted_set_of_codings_gets_the_smaller_delta_it_can_decode() {
        let idx = index(&[(
            APP,
            &[("dcb", 1, 93), ("dcz", 1, 90), ("dcb", 2, 50)],
            Some(r#"match="/assets/app-*.js""#),
        )]);
        let out = render(&idx);
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        let (d1, d2) = (dict(1), dict(2));
        let (b1, z1, b2) = (
            delta(APP, 1, "dcb"),
            delta(APP, 1, "dcz"),
            delta(APP, 2, "dcb"),
        );
        let entry = |flags: &str, d: &str, path: &str| {
            format!("    \"/{APP}\\n{flags} {d}\" \"{path}\\t/{APP}\\n{flags} {d}\";\n")
        };
        let want = [
            entry("b", &d1, &b1),
            entry("b", &d2, &b2),
            entry("bz", &d1, &z1),
            entry("bz", &d2, &b2),
            entry("z", &d1, &z1),
        ]
        .concat();
        assert_eq!(
            block(&out.config, "pc_delta_key"),
            format!(
                "map \"$uri\\n$pc_dcb$pc_dcz $http_available_dictionary\" $pc_delta_key {{\n{want}}}\n"
            )
        );
        // The headers: by the asset's URI and by each delta's.
        let u = r#""match=\"/assets/app-*.js\"""#;
        assert_eq!(
            block(&out.config, "pc_use_as_dictionary"),
            format!(
                "map $uri $pc_use_as_dictionary {{\n    \"/{APP}\" {u};\n    \"{b1}\" {u};\n    \"{z1}\" {u};\n    \"{b2}\" {u};\n}}\n"
            )
        );
        let enc = block(&out.config, "pc_content_encoding");
        assert!(enc.contains(&format!("\"{z1}\" \"dcz\";")), "{enc}");
        assert!(enc.contains(&format!("\"{b2}\" \"dcb\";")), "{enc}");
        assert!(!enc.contains(&format!("\"/{APP}\" ")), "{enc}");
        let ty = block(&out.config, "pc_content_type");
        assert_eq!(ty.matches("\"text/javascript; charset=utf-8\";").count(), 3);
        let vary = block(&out.config, "pc_vary");
        assert_eq!(vary.matches(&format!("\"{VARY}\";")).count(), 4, "{vary}");
    }

    #[test]
    fn every_asset_and_delta_gets_the_cache_control_serve_sends() {
        let out = render(&index(&[
            (APP, &[("dcb", 1, 93), ("dcz", 1, 90)], None),
            ("index.html", &[], None),
        ]));
        let (b1, z1) = (delta(APP, 1, "dcb"), delta(APP, 1, "dcz"));
        let (i, r) = (
            crate::serve::CACHE_IMMUTABLE,
            crate::serve::CACHE_REVALIDATE,
        );
        assert_eq!(
            block(&out.config, "pc_cache_control"),
            format!(
                "map $uri $pc_cache_control {{\n    \"/{APP}\" \"{i}\";\n    \"{b1}\" \"{i}\";\n    \"{z1}\" \"{i}\";\n    \"/index.html\" \"{r}\";\n}}\n"
            )
        );
        // No default: a file the manifest does not list gets no header.
        assert!(LOCATION_LINES.contains("\nadd_header Cache-Control $pc_cache_control;\n"));
        let empty = render(&index(&[]));
        assert_eq!(
            block(&empty.config, "pc_cache_control"),
            "map $uri $pc_cache_control {\n}\n"
        );
    }

    #[test]
    fn a_page_gets_the_policy_serve_sends_per_request() {
        let page = r#"match="/about{.html}?", match-dest=("document")"#;
        let out = render(&index(&[
            ("about.html", &[("dcb", 1, 93)], Some(page)),
            ("plain.html", &[], None),
        ]));
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        let b1 = delta("about.html", 1, "dcb");
        // The page and its delta: the policy by request, Sec-Fetch-Dest in
        // Vary, and the mark; an unmarked page stays revalidated.
        let r = crate::serve::CACHE_REVALIDATE;
        assert_eq!(
            block(&out.config, "pc_cache_control"),
            format!(
                "map $uri $pc_cache_control {{\n    \"/about.html\" \"$pc_page_cache_control\";\n    \"{b1}\" \"$pc_page_cache_control\";\n    \"/plain.html\" \"{r}\";\n}}\n"
            )
        );
        let v = "Accept-Encoding, Available-Dictionary, Sec-Fetch-Dest";
        assert_eq!(
            block(&out.config, "pc_vary"),
            format!(
                "map $uri $pc_vary {{\n    \"/about.html\" \"{v}\";\n    \"{b1}\" \"{v}\";\n}}\n"
            )
        );
        let u = r#""match=\"/about{.html}?\", match-dest=(\"document\")""#;
        assert_eq!(
            block(&out.config, "pc_use_as_dictionary"),
            format!("map $uri $pc_use_as_dictionary {{\n    \"/about.html\" {u};\n    \"{b1}\" {u};\n}}\n")
        );
        // serve::keeps_page, as a map: Sec-Fetch-Dest document (any case)
        // and a Sec-CH-UA; anything else revalidates.
        assert_eq!(
            block(&out.config, "pc_page_cache_control"),
            format!(
                "map \"$http_sec_fetch_dest\\n$http_sec_ch_ua\" $pc_page_cache_control {{\n    default \"{r}\";\n    \"~*^document\\n.\" \"{}\";\n}}\n",
                crate::serve::CACHE_PAGE_KEPT
            )
        );
        // A page without variants or deltas still varies on Sec-Fetch-Dest.
        let out = render(&index(&[("about.html", &[], Some(page))]));
        assert_eq!(
            block(&out.config, "pc_vary"),
            "map $uri $pc_vary {\n    \"/about.html\" \"Sec-Fetch-Dest\";\n}\n"
        );
    }

    #[test]
    fn one_coding_serves_both_flag_sets_that_accept_it() {
        let out = render(&index(&[(APP, &[("dcz", 1, 90)], None)]));
        let keys = block(&out.config, "pc_delta_key");
        assert!(keys.contains("\\nbz "), "{keys}");
        assert!(keys.contains("\\nz "), "{keys}");
        assert!(!keys.contains("\\nb "), "{keys}");
        assert!(
            !out.config.contains("Use-As-Dictionary\" "),
            "no dictionary"
        );
        assert_eq!(
            block(&out.config, "pc_use_as_dictionary").lines().count(),
            2
        );
    }

    #[test]
    fn a_dictionary_without_deltas_only_says_so() {
        let out = render(&index(&[(
            "assets/app-1a2b3c4d.js",
            &[],
            Some(r#"match="/assets/app-*.js""#),
        )]));
        assert_eq!(block(&out.config, "pc_delta_key").lines().count(), 2);
        assert_eq!(block(&out.config, "pc_vary").lines().count(), 2);
        assert_eq!(
            block(&out.config, "pc_use_as_dictionary"),
            "map $uri $pc_use_as_dictionary {\n    \"/assets/app-1a2b3c4d.js\" \"match=\\\"/assets/app-*.js\\\"\";\n}\n"
        );
    }

    #[test]
    fn keys_equal_but_for_case_become_case_sensitive_regexes() {
        let out = render(&index(&[
            ("assets/App-5e6f7a8b.js", &[("dcb", 1, 9)], None),
            (APP, &[("dcb", 1, 9)], None),
            ("assets/other-1a2b3c4d.js", &[("dcb", 1, 9)], None),
        ]));
        let vary = block(&out.config, "pc_vary");
        assert!(
            vary.contains(
                r#"    "~^/assets/App-5e6f7a8b\\.js\\z" "Accept-Encoding, Available-Dictionary";"#
            ),
            "{vary}"
        );
        assert!(
            vary.contains(r#"    "/assets/other-1a2b3c4d.js" "#),
            "{vary}"
        );
        let keys = block(&out.config, "pc_delta_key");
        assert!(
            keys.contains(&format!(
                r#""~^/assets/app-5e6f7a8b\\.js\\nb {}\\z""#,
                regex_escape(&dict(1)).replace('\\', r"\\")
            )),
            "{keys}"
        );
    }

    #[test]
    fn unwritable_names_are_skipped_and_reported() {
        let out = render(&index(&[
            ("assets/a$b-5e6f7a8b.js", &[("dcb", 1, 9)], None),
            (APP, &[("dcb", 1, 9)], None),
        ]));
        assert_eq!(out.skipped.len(), 1, "{:?}", out.skipped);
        assert!(out.skipped[0].starts_with("assets/a$b-5e6f7a8b.js: "));
        assert!(out.config.contains("# skipped: assets/a$b-5e6f7a8b.js"));
        assert!(!block(&out.config, "pc_vary").contains("a$b"));
    }

    /// Issue #29: nginx-map refused no variant, and a name with a newline, a
    /// CR or U+2028 in it went out by its own name like any other.
    #[test]
    fn variants_and_the_manifest_are_refused_by_their_own_names_whatever_they_hold() {
        let keys = [
            "a\nb.txt",
            "c\rd.txt",
            "e\u{2028}f.txt",
            "a$b.txt",
            "X.txt",
            "x.txt",
        ];
        let mut idx = crate::deploy::fixture::gzip_only(&keys);
        idx.set_base("/app/");
        let out = render(&idx);
        // Each to itself; `$` and names equal but for case as case-sensitive
        // regexes whose capture is the value (nginx has no escape for `$`).
        assert_eq!(
            block(&out.config, "pc_not_served"),
            concat!(
                "map $uri $pc_not_served {\n",
                "    \"/app/a\\nb.txt.gz\" \"/app/a\\nb.txt.gz\";\n",
                "    \"/app/c\\rd.txt.gz\" \"/app/c\\rd.txt.gz\";\n",
                "    \"/app/e\u{2028}f.txt.gz\" \"/app/e\u{2028}f.txt.gz\";\n",
                "    \"/app/precompress-manifest.json\" \"/app/precompress-manifest.json\";\n",
                "    \"~^(/app/X\\\\.txt\\\\.gz)\\\\z\" \"$1\";\n",
                "    \"~^(/app/a\\\\$b\\\\.txt\\\\.gz)\\\\z\" \"$1\";\n",
                "    \"~^(/app/x\\\\.txt\\\\.gz)\\\\z\" \"$1\";\n",
                "}\n"
            )
        );
        assert!(LOCATION_LINES.starts_with("if ($pc_not_served = $uri) { return 404; }\n"));
        // PCRE's `$` matches before a final newline too.
        assert!(LOCATION_LINES.contains(r#"location ~ "\.[0-9a-f]{64}\.dc[bz]\z" { internal;"#));
    }

    #[test]
    fn quoting_and_escaping() {
        assert_eq!(quote(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(quote("a\nb\tc\rd"), r#""a\nb\tc\rd""#);
        assert_eq!(
            regex_escape(":WC01+m8/V/Y=:\n/a.b(1)"),
            r":WC01\+m8/V/Y=:\n/a\.b\(1\)"
        );
        // Base64's + / = and the colons are plain characters in a hash key.
        assert_eq!(quote(":WC01+m8/V/Y=:"), "\":WC01+m8/V/Y=:\"");
    }

    #[test]
    fn the_bucket_holds_the_longest_key() {
        let long = format!("assets/{}-5e6f7a8b.js", "x".repeat(300));
        let out = render(&index(&[(&long, &[("dcb", 1, 9)], None)]));
        // "/" + long + "\n" + "bz " + 46 = 370 bytes: 8 + 370 + 2 -> 384; 4 x 384 + 8.
        assert!(
            out.config.contains("\nmap_hash_bucket_size 2048;\n"),
            "{}",
            out.config
        );
        // Nothing but the manifest's "/precompress-manifest.json" (26 bytes):
        // 8 + 26 + 2 -> 40; 4 x 40 + 8 -> 256.
        let out = render(&index(&[]));
        assert!(out.config.contains("\nmap_hash_bucket_size 256;\n"));
        assert!(out.config.contains("\nmap_hash_max_size 2048;\n"));
    }

    #[test]
    fn accept_encoding_regex_names_the_token_with_a_weight() {
        let re = accepts("dcb");
        assert!(re.starts_with("~*(?:^|,)"), "{re}");
        // No look-around: a weight is matched only when it is well formed
        // and nothing follows it (`dcb;q=0;x=1` is no acceptance).
        assert!(!re.contains("(?!"), "{re}");
        assert!(re.ends_with("[\\x20\\t]*(?:$|,))"), "{re}");
    }

    #[test]
    fn the_output_documents_the_location_lines() {
        let out = render(&index(&[]));
        for line in LOCATION_LINES.lines() {
            assert!(out.config.contains(&format!("#     {line}\n")), "{line}");
        }
        let verify = block(&out.config, "pc_delta");
        assert_eq!(
            verify,
            "map \"$pc_delta_key\\t$uri\\n$pc_dcb$pc_dcz $http_available_dictionary\" $pc_delta {\n    \"~^([^\\\\t]*)\\\\t([^\\\\t]*)\\\\t\\\\2\\\\z\" $1;\n}\n"
        );
    }
}
