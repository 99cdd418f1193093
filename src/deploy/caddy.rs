//! Caddy configuration that serves a manifest's RFC 9842 deltas
//! (`precompress caddy-map`): a Caddyfile snippet, `(precompress_deltas)`, that
//! the site block serving the folder imports before its `file_server` (see
//! [`SITE_LINES`]). Caddy 2.6 has no dictionary support of its own, so every
//! decision [`Index::select_with_dictionary`] makes is spelt out as `map`s,
//! named matchers and a `route`.
//!
//! How a request flows, and why each piece is there:
//! - `{pc_hex}` maps `Available-Dictionary` to the hex of the hash, for every
//!   dictionary with a delta (`none` otherwise). Caddy compares map keys byte for
//!   byte, so a dictionary that differs in case, a list or a bare base64 is no
//!   key; Go has already trimmed the spaces around the field.
//! - `{pc_delta}` maps `{path}.{pc_hex}` to the delta's path without its coding,
//!   for exactly the (asset, dictionary) pairs the manifest lists (`-`
//!   otherwise): `{pc_hex}` has no `.`, so the string splits one way only, and a
//!   delta file on disk that the manifest does not list is never sent.
//! - `{pc_dcb}` and `{pc_dcz}` say whether `Accept-Encoding` names the coding
//!   with a weight above 0 (`*` does not count: it says nothing about holding a
//!   dictionary); Go's regexes have no look-ahead, so the weights above 0 are
//!   spelt out.
//! - `@pc_delta` is a `file` matcher over `{pc_delta}.{pc_dcb}` and
//!   `{pc_delta}.{pc_dcz}` with `try_policy smallest_size`: the smaller delta the
//!   client accepts, or no match when neither is on disk (a map older than the
//!   files), and the request is served as if there were no deltas.
//! - The `route` keeps its lines in this order (Caddy sorts directives outside
//!   a `route`): a delta asked for by name is a 404 (`error`, so `handle_errors`
//!   applies), and so is a variant or the manifest: `@pc_file` resolves the
//!   request to the file it names (cleaned: `//x.br` and `/a/../x.br` are
//!   `/x.br`), and `{pc_not_served}` maps that file to `1` when it is one of
//!   them. A name a map key cannot hold (a control character, a brace) is an
//!   anchored regex of escapes. The two are nested, as Caddy evaluates the
//!   matchers of one set in no fixed order; `Vary: Accept-Encoding, Available-Dictionary` goes on every
//!   response of an asset with deltas and `Use-As-Dictionary` on every response
//!   of a dictionary (a matcher each, since `header` would send an empty value;
//!   `+Vary` adds to the site's own `Vary` rather than replace it);
//!   `Cache-Control` on every response of an asset and of its deltas, the
//!   one `precompress serve` sends ([`Entry::cache_control`]), a folder's
//!   URL getting its `index.html`'s: Chromium keeps a dictionary only while
//!   its response is fresh, and without the header that is a tenth of the
//!   time since `Last-Modified`, minutes after a deploy. That one is
//!   deferred, so an error (a file missing on disk, a delta asked for by
//!   name) gets none: a 404 cached for a year under a hashed name would
//!   outlive the upload that fixes it. Being deferred it is read after the
//!   `rewrite`, so the map lists each delta's path too;
//!   then for a delta `Content-Encoding` and the asset's `Content-Type`, read
//!   while `{path}` is still the asset's, and a `rewrite` to the delta's file.
//!   The site's own `file_server` then sends it: it keeps a `Content-Type` that
//!   is already set, and finds no `.br`/`.zst`/`.gz` beside a delta.
//! - First in the `route`, `@pc_deferred`: the code dictionary asked by
//!   Chromium (`Sec-CH-UA`) with no `Available-Dictionary`
//!   ([`Selection::Deferred`](crate::serve::Selection)) is a 204 with
//!   `Cache-Control: no-store` and nothing else of ours.
//! - `precompressed zstd br gzip` breaks a tie between codings the client
//!   weights alike by that order, not by size, and some files' zstd is larger
//!   than their br (a page: 61,795 B against 58,868 B). `{pc_br_first}` maps
//!   those files' URLs to `1`, and when the client accepts br, the route
//!   rewrites `zstd` in the request's `Accept-Encoding` to `zstd;q=0`, so the
//!   `file_server` sends the smaller br (the response is the same for the
//!   same request, so `Vary: Accept-Encoding` still holds). Last in the
//!   route: a delta's rewritten path is in no such map.
//!
//! Writing it down: keys and values that are not plain go in backticks (raw
//! text, so the `"` of `Use-As-Dictionary` needs no escape). Caddy reads `{...}`
//! as a placeholder even in quotes, and a map output of `-` as "no value", so
//! assets whose path, type or `Use-As-Dictionary` has a brace or a control
//! character, or cannot be quoted, are left out and reported; so are the
//! deltas of an asset with a `?` in its path (`rewrite` would cut a query
//! there).
//!
//! What Caddy cannot do here: rank a delta against `br` or `zstd` by q-value (a
//! client that names `dcb` or `dcz` with any weight above 0 and holds a
//! dictionary gets the delta, and one that accepts br gets it where it is
//! smaller than zstd, whatever weight it gives zstd), or notice a source rebuilt after the snippet was
//! generated (regenerate and reload on every deploy).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::config_assets;
use super::generate::vary_of;
use crate::model::coding::Codec;
use crate::model::dictionary::{available_dictionary, hex};
use crate::model::manifest::{Caching, CACHE_PAGE_KEPT, DEFAULT_NAME};
use crate::serve::{Coding, Entry, Index, CACHE_REVALIDATE};

/// The name of the generated snippet.
pub const SNIPPET: &str = "precompress_deltas";

/// The line to add to the site block that serves the folder (with `root`), in
/// front of its `file_server`.
pub const SITE_LINES: &str = "import precompress_deltas\n";

/// What a page's URLs map `{pc_cache_control}` to: the policy
/// [`page_policy_maps`] decides for the request.
const PAGE_CACHE_CONTROL: &str = "{pc_page_cache_control}";

/// [`crate::serve::keeps_page`] as two maps: `{pc_navigation}` is `document`
/// for a navigation (Go has trimmed the field), and a Sec-CH-UA after it
/// (Chromium) makes `{pc_page_cache_control}` [`CACHE_PAGE_KEPT`], else
/// `no-cache`. `{pc_navigation}` is `document` or `none`, so the `|` after
/// it splits the string one way only. An empty Sec-CH-UA is as none, which
/// no browser sends.
fn page_policy_maps() -> String {
    format!(
        "\t# A page's Cache-Control: kept by a Chromium navigation (Sec-Fetch-Dest:\n\
         \t# document, Sec-CH-UA sent), else revalidated.\n\
         \tmap {{header.Sec-Fetch-Dest}} {{pc_navigation}} {{\n\
         \t\t~(?i)^document$ document\n\
         \t\tdefault none\n\
         \t}}\n\
         \tmap {{pc_navigation}}|{{header.Sec-CH-UA}} {{pc_page_cache_control}} {{\n\
         \t\t~^document[|]. {}\n\
         \t\tdefault {}\n\
         \t}}\n\n",
        quote(CACHE_PAGE_KEPT).expect("plain"),
        quote(CACHE_REVALIDATE).expect("plain"),
    )
}

/// The part of the snippet that does not depend on the manifest.
/// The maps of whether `Accept-Encoding` names `dcb` and `dcz` (by the one
/// rule [`super::accept_encoding_regex`] the nginx map shares).
fn accept_maps() -> String {
    let mut out = String::from("\t# Accept-Encoding names the coding with a weight above 0.\n");
    for token in ["dcb", "dcz", "br"] {
        out.push_str(&format!(
            "\tmap {{header.Accept-Encoding}} {{pc_{token}}} {{\n\t\t~(?i){} {token}\n\t\tdefault none\n\t}}\n",
            super::accept_encoding_regex(token)
        ));
    }
    out.push('\n');
    out
}

const ROUTES: &str = r#"	# The coding of the delta @pc_delta found.
	map {http.matchers.file.relative} {pc_coding} {
		~\.(dc[bz])$ ${1}
		default -
	}

	# The smaller delta on disk that the client can decode.
	@pc_delta {
		expression `{pc_delta} != "-"`
		file {
			try_files {pc_delta}.{pc_dcb} {pc_delta}.{pc_dcz}
			try_policy smallest_size
		}
	}
	@pc_vary expression `{pc_vary} != "-"`
	@pc_dictionary expression `{pc_use_as_dictionary} != "-"`
	@pc_page_html expression `{pc_page_mark} == "html"`
	@pc_page_index expression `{pc_page_mark} == "index"`
	@pc_link expression `{pc_link} != "-"`
	@pc_cache_control expression `{pc_cache_control} != "-"`
	@pc_direct path_regexp \.[0-9a-f]{64}\.dc[bz]$
	@pc_file file {
		try_files {path}
	}
	@pc_not_served expression `{pc_not_served} != "-"`
	@pc_br_first expression `{pc_br_first} != "-" && {pc_br} == "br"`

	@pc_deferred expression `{pc_deferred} != "-"`

	route {
		route @pc_deferred {
			header Cache-Control no-store
			respond 204
		}
		error @pc_direct 404
		route @pc_file {
			error @pc_not_served 404
		}
		header @pc_vary +Vary {pc_vary}
		header @pc_dictionary Use-As-Dictionary {pc_use_as_dictionary}
		header @pc_page_html Use-As-Dictionary `match="{pc_page_stem}{.html}?", match-dest=("document")`
		header @pc_page_index Use-As-Dictionary `match="{pc_page_stem}{index.html}?", match-dest=("document")`
		header @pc_link Link {pc_link}
		header @pc_cache_control Cache-Control {pc_cache_control} {
			defer
		}
		route @pc_delta {
			header Content-Encoding {pc_coding}
			header Content-Type {pc_type}
			rewrite {http.matchers.file.relative}
		}
		request_header @pc_br_first Accept-Encoding `(?i)(^|,)[\x20\t]*zstd[\x20\t]*(;[^,]*)?` `$1 zstd;q=0`
	}
"#;

/// The generated snippet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaddySnippet {
    /// The text to `import` at the top of the Caddyfile.
    pub config: String,
    /// Assets or deltas left out, each with the reason.
    pub skipped: Vec<String>,
}

/// What one asset puts in the `{path}` map: `Vary`, `Use-As-Dictionary`,
/// `Content-Type`, each only when it is sent.
type PathOutputs = [Option<String>; 3];

/// What the snippet's three maps hold, gathered from the manifest.
#[derive(Debug, Default)]
struct Maps {
    /// `Available-Dictionary` -> the hex of its hash.
    hexes: BTreeMap<String, String>,
    /// `{path}.hex` -> the delta's path without its coding, for each
    /// (asset, dictionary) with a delta: the asset's URL, and a folder's for
    /// its `index.html`.
    deltas: BTreeMap<String, String>,
    /// `{path}` -> its headers (a folder's URL its `index.html`'s).
    paths: BTreeMap<String, PathOutputs>,
    /// The URLs of the HTML pages, a folder's `index.html` by its folder too.
    html: BTreeSet<String>,
    /// The `Link` to the shared dictionaries, if there are any.
    link: Option<String>,
    /// `{path}` -> its `Cache-Control`: every asset, a folder's `index.html`
    /// by its folder too, and every delta `try_files` can find.
    cache_control: BTreeMap<String, &'static str>,
    /// The URLs never served by their own names: every variant's, whatever
    /// it holds, and the manifest's.
    not_served: BTreeSet<String>,
    /// The URLs of the assets whose br is smaller than their zstd, a folder's
    /// `index.html` by its folder too.
    br_first: BTreeSet<String>,
    /// `{path}` -> a page's mark ([`page_mark`]): the URL before its braces,
    /// and which of the two header lines of [`ROUTES`] writes the rest.
    page_marks: BTreeMap<String, (String, &'static str)>,
    /// The code dictionary's URL, when a request holding no dictionary gets
    /// a 204 ([`crate::serve::Selection::Deferred`]).
    deferred: Option<String>,
}

/// The snippet for the deltas and dictionaries of `index`, served at its
/// base path (the manifest's `base`, or [`Index::set_base`]), with how to use it in a comment on top.
pub fn render(index: &Index) -> CaddySnippet {
    let mut skipped = Vec::new();
    let maps = gather(index, &mut skipped);
    let mut out = String::new();
    write_usage(&mut out, &skipped, index.base());
    write_snippet(&mut out, &maps);
    CaddySnippet {
        config: out,
        skipped,
    }
}

/// The maps' entries for every asset that can be written, and in `skipped`
/// what is left out and why.
fn gather(index: &Index, skipped: &mut Vec<String>) -> Maps {
    let mut maps = Maps {
        link: index.link().filter(|l| unwritable(l).is_none()),
        not_served: index
            .iter()
            .flat_map(|(_, e)| &e.variants)
            .filter(|r| matches!(r.coding, Some(Coding::Variant(_))))
            .map(|r| index.url(&r.path))
            .chain([index.url(DEFAULT_NAME)])
            .collect(),
        ..Maps::default()
    };
    if maps.link.is_some() {
        for (key, entry) in index.iter() {
            if entry.content_type.starts_with("text/html") && unwritable(key).is_none() {
                maps.html.insert(index.url(key));
                if let Some(folder) = key.strip_suffix("index.html") {
                    maps.html.insert(index.url(folder));
                }
            }
        }
    }
    for a in config_assets(index, unwritable, unwritable_value, skipped) {
        let (k, entry, uri) = (a.key, a.entry, a.uri);
        let br_first = br_smaller_than_zstd(entry);
        let cache_control = if entry.cache == Caching::Page {
            PAGE_CACHE_CONTROL
        } else {
            entry.cache_control()
        };
        // The URLs `file_server` answers with this file: its own, and a
        // folder's for its index.html.
        let mut urls = vec![uri.clone()];
        if let Some(folder) = k.strip_suffix("index.html") {
            if folder.is_empty() || folder.ends_with('/') {
                urls.push(index.url(folder));
            }
        }
        for u in &urls {
            maps.cache_control.insert(u.clone(), cache_control);
            if br_first {
                maps.br_first.insert(u.clone());
            }
        }
        let (use_as, mark) = match a.use_as.map(|u| (u, page_mark(u))) {
            Some((_, Some((stem, which)))) => (None, Some((stem.to_string(), which))),
            Some((u, None)) => (Some(u.to_string()), None),
            None => (None, None),
        };
        if let Some(m) = &mark {
            for u in &urls {
                maps.page_marks.insert(u.clone(), m.clone());
            }
        }
        let dicts = if entry.deltas.is_empty() {
            BTreeSet::new()
        } else {
            delta_dictionaries(k, entry, &uri, skipped)
        };
        for hash in &dicts {
            let h = hex(hash);
            maps.hexes.insert(available_dictionary(hash), h.clone());
            let prefix = format!("{uri}.{h}");
            for coding in ["dcb", "dcz"] {
                maps.cache_control
                    .insert(format!("{prefix}.{coding}"), cache_control);
            }
            for u in &urls {
                maps.deltas.insert(format!("{u}.{h}"), prefix.clone());
            }
        }
        let has_deltas = !dicts.is_empty();
        if entry.deferred && has_deltas {
            maps.deferred = Some(uri.clone());
        }
        let outputs = [
            vary_of(entry, has_deltas).map(str::to_string),
            use_as,
            has_deltas.then(|| entry.content_type.clone()),
        ];
        if outputs.iter().any(Option::is_some) {
            for u in urls {
                maps.paths.insert(u, outputs.clone());
            }
        }
    }
    maps
}

/// Whether `entry` has br and zstd variants and its br is the smaller:
/// Caddy's `precompressed zstd br gzip` would send the zstd.
fn br_smaller_than_zstd(entry: &Entry) -> bool {
    let size = |codec| {
        entry
            .variants
            .iter()
            .find(|r| r.coding == Some(Coding::Variant(codec)))
            .map(|r| r.size)
    };
    matches!((size(Codec::Brotli), size(Codec::Zstd)), (Some(br), Some(zstd)) if br < zstd)
}

/// The dictionaries of the deltas of asset `k` (served at `uri`) that the
/// snippet can send; in `skipped`, the deltas it cannot and why.
fn delta_dictionaries(
    k: &str,
    entry: &Entry,
    uri: &str,
    skipped: &mut Vec<String>,
) -> BTreeSet<[u8; 32]> {
    let mut dicts = BTreeSet::new();
    if uri.contains('?') {
        // `rewrite` takes a `?` in the file's name for the start of a query.
        skipped.push(format!(
            "{k}: deltas: Caddy's rewrite reads \"?\" as the start of a query"
        ));
    } else if let Some(why) = unwritable(&entry.content_type) {
        skipped.push(format!("{k}: content type {:?}: {why}", entry.content_type));
    } else {
        // `try_files` looks for a delta's own name only, the one name the
        // index lets a manifest list.
        dicts.extend(entry.deltas.iter().map(|(hash, _)| *hash));
    }
    dicts
}

/// The comment on top: how to import the snippet, and what was left out.
fn write_usage(out: &mut String, skipped: &[String], base: &str) {
    let _ = writeln!(
        out,
        "# RFC 9842 deltas for Caddy 2.6, by precompress {} (`precompress caddy-map`).",
        env!("CARGO_PKG_VERSION")
    );
    let _ = write!(
        out,
        "# Import this file at the top of the Caddyfile, outside any site block\n\
         # (it defines the snippet {SNIPPET}), and import the snippet in the\n\
         # site block (or handle) that serves the folder at {base} (these\n\
         # URLs start with it; no handle_path), in front of its file_server:\n\
         #\n\
         #     import /etc/caddy/precompress-deltas.caddy\n\
         #\n\
         #     example.com {{\n\
         #         root * /srv/dist\n"
    );
    for line in SITE_LINES.lines() {
        let _ = writeln!(out, "#         {line}");
    }
    out.push_str(
        "#         file_server {\n\
         #             precompressed zstd br gzip\n\
         #         }\n\
         #     }\n\
         #\n\
         # Regenerate and reload on every deploy.\n",
    );
    for s in skipped {
        let _ = writeln!(out, "# skipped: {s}");
    }
}

/// The snippet itself: the three maps, then [`ROUTES`].
fn write_snippet(out: &mut String, maps: &Maps) {
    let _ = writeln!(out, "\n({SNIPPET}) {{");
    out.push_str(
        "\t# The hex of the SHA-256 the client holds, for every dictionary with a\n\
         \t# delta (byte for byte: base64 is case-sensitive).\n\
         \tmap {header.Available-Dictionary} {pc_hex} {\n",
    );
    for (dict, h) in &maps.hexes {
        let _ = writeln!(out, "\t\t{} {h}", quote(dict).expect("base64 is plain"));
    }
    out.push_str("\t\tdefault none\n\t}\n\n");
    out.push_str(
        "\t# The asset's delta against that dictionary, without its coding.\n\
         \tmap {path}.{pc_hex} {pc_delta} {\n",
    );
    for (key, prefix) in &maps.deltas {
        let (k, p) = (quote(key), quote(prefix));
        let _ = writeln!(out, "\t\t{} {}", k.expect("checked"), p.expect("checked"));
    }
    out.push_str("\t\tdefault -\n\t}\n\n");
    out.push_str(
        "\t# Vary of every response of an asset with deltas or of a page, Use-As-Dictionary\n\
         \t# of every response of a dictionary, and the Content-Type of a delta.\n\
         \tmap {path} {pc_vary} {pc_use_as_dictionary} {pc_type} {\n",
    );
    for (uri, outputs) in &maps.paths {
        let _ = write!(out, "\t\t{}", quote(uri).expect("checked"));
        for o in outputs {
            let _ = match o {
                Some(v) => write!(out, " {}", quote(v).expect("checked")),
                None => write!(out, " -"),
            };
        }
        out.push('\n');
    }
    out.push_str("\t\tdefault - - -\n\t}\n\n");
    out.push_str("\t# The shared dictionaries' Link, on every HTML page (and its folder's URL).\n\tmap {path} {pc_link} {\n");
    for uri in &maps.html {
        if let (Some(k), Some(l)) = (quote(uri), maps.link.as_deref().and_then(quote)) {
            let _ = writeln!(out, "\t\t{k} {l}");
        }
    }
    out.push_str("\t\tdefault -\n\t}\n\n");
    out.push_str(
        "\t# Cache-Control of every asset, its deltas (read after the rewrite), and\n\
         \t# the folder's URL of an index.html.\n\
         \tmap {path} {pc_cache_control} {\n",
    );
    for (uri, cc) in &maps.cache_control {
        let _ = writeln!(
            out,
            "\t\t{} {}",
            quote(uri).expect("checked"),
            quote(cc).expect("plain")
        );
    }
    out.push_str("\t\tdefault -\n\t}\n\n");
    out.push_str(&page_policy_maps());
    out.push_str(
        "\t# A page's mark, before its braces (which a map output would read as a\n\
         \t# placeholder): the route's header line for its kind writes the rest.\n\
         \tmap {path} {pc_page_stem} {pc_page_mark} {\n",
    );
    for (uri, (stem, which)) in &maps.page_marks {
        let _ = writeln!(
            out,
            "\t\t{} {} {which}",
            quote(uri).expect("checked"),
            quote(stem).expect("checked")
        );
    }
    out.push_str("\t\tdefault - -\n\t}\n\n");
    out.push_str(
        "\t# Never served by its own name (the file @pc_file resolved): a variant,\n\
         \t# the manifest.\n\
         \tmap {http.matchers.file.relative} {pc_not_served} {\n",
    );
    for uri in &maps.not_served {
        let key = match unwritable(uri) {
            None => quote(uri).expect("checked"),
            Some(_) => quote(&format!("~^{}$", re2_escape(uri))).expect("no backtick in it"),
        };
        let _ = writeln!(out, "\t\t{key} 1");
    }
    out.push_str("\t\tdefault -\n\t}\n\n");
    out.push_str(
        "\t# Assets whose br is smaller than their zstd (and their folders' URLs).\n\
         \tmap {path} {pc_br_first} {\n",
    );
    for uri in &maps.br_first {
        let _ = writeln!(out, "\t\t{} 1", quote(uri).expect("checked"));
    }
    out.push_str("\t\tdefault -\n\t}\n\n");
    write_deferred(out, maps.deferred.as_deref());
    out.push_str(&accept_maps());
    out.push_str(ROUTES);
    out.push_str("}\n");
}

/// `{pc_deferred}`: `1` for Chromium (a `Sec-CH-UA`) asking the code
/// dictionary at `uri` holding no dictionary; always written, so the
/// route's matcher has its placeholder.
fn write_deferred(out: &mut String, uri: Option<&str>) {
    out.push_str(
        "\t# The code dictionary asked by Chromium (Sec-CH-UA) holding no dictionary: 204,\n\
         \t# stored nowhere (it asks again once it holds the chunk it is a delta against).\n\
         \tmap {path}|{header.Available-Dictionary}|{header.Sec-CH-UA} {pc_deferred} {\n",
    );
    if let Some(uri) = uri {
        let re = format!("~^{}[|][|].", re2_escape(uri));
        let _ = writeln!(out, "\t\t{} 1", quote(&re).expect("checked"));
    }
    out.push_str("\t\tdefault -\n\t}\n\n");
}

/// Why `s` cannot be written as a map key or output, if it cannot: Caddy
/// replaces `{...}` (no escape survives its Caddyfile shorthands, and each
/// `import` takes one level of escapes away before the map output takes
/// another, so no one spelling holds), `-` means "no value", and control
/// characters have no place in a path or header. A page's mark
/// (`match="/about{.html}?"`) is therefore left out, and said so.
fn unwritable(s: &str) -> Option<&'static str> {
    if s.contains(['{', '}']) {
        Some("Caddy reads braces as placeholders")
    } else if s.chars().any(char::is_control) {
        Some("control character")
    } else if s.is_empty() || s == "-" {
        Some("empty or \"-\" (no value, to a Caddy map)")
    } else if quote(s).is_none() {
        Some("cannot be quoted in a Caddyfile")
    } else {
        None
    }
}

/// Why the `Use-As-Dictionary` value `s` cannot be written, if it cannot:
/// as [`unwritable`], but a page's mark ([`page_mark`]) can.
fn unwritable_value(s: &str) -> Option<&'static str> {
    page_mark(s).map_or_else(|| unwritable(s), |_| None)
}

/// A page's mark ([`crate::model::dictionary::page_use_as_dictionary`]) as
/// the URL before its braces and its kind (`html` for `{.html}?`, `index`
/// for `{index.html}?`), when that URL can be written: the braces go in a
/// literal header line, where Caddy leaves a placeholder it does not know
/// as it is.
fn page_mark(s: &str) -> Option<(&str, &'static str)> {
    let url = s
        .strip_prefix("match=\"")?
        .strip_suffix("?\", match-dest=(\"document\")")?;
    let (stem, which) = match url.strip_suffix("{.html}") {
        Some(stem) => (stem, "html"),
        None => (url.strip_suffix("{index.html}")?, "index"),
    };
    let plain = unwritable(stem).is_none() && !stem.contains(['"', '`', '\\']);
    plain.then_some((stem, which))
}

/// `s` as a Go regular expression (RE2) that matches exactly it, in
/// characters a Caddyfile keeps as they are: metacharacters escaped, and a
/// control character, a brace (a placeholder to Caddy), a backtick or a `"`
/// as `\xHH`.
fn re2_escape(s: &str) -> String {
    let mut r = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        match c {
            c if c.is_ascii_control() || "{}`\"".contains(c) => {
                let _ = write!(r, "\\x{:02x}", c as u32);
            }
            '\\' | '.' | '+' | '*' | '?' | '(' | ')' | '|' | '[' | ']' | '^' | '$' => {
                r.push('\\');
                r.push(c);
            }
            c => r.push(c),
        }
    }
    r
}

/// `s` as one Caddyfile token with exactly its text: as is when it is plain,
/// else in backticks (raw, no escapes), else in double quotes (where only `\"`
/// is an escape). `None` when it has both a backtick and a `"`, or a backtick
/// and a final `\` (which would escape the closing quote).
fn quote(s: &str) -> Option<String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._:+=,*-".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        Some(s.to_string())
    } else if !s.contains('`') {
        Some(format!("`{s}`"))
    } else if !s.contains('"') && !s.ends_with('\\') {
        Some(format!("\"{s}\""))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy::generate::VARY_DELTAS as VARY;

    const APP: &str = "assets/app-5e6f7a8b.js";

    use crate::deploy::fixture::{index, index_typed};

    /// The lines of the map whose destinations start with `{dest}`, between
    /// its opening line and `default`.
    fn entries<'a>(config: &'a str, dest: &str) -> Vec<&'a str> {
        let start = config
            .find(&format!(" {{{dest}}} "))
            .unwrap_or_else(|| panic!("no map for {{{dest}}} in\n{config}"));
        let body = &config[start..];
        let body = &body[body.find('\n').unwrap() + 1..];
        body.lines()
            .take_while(|l| !l.trim_start().starts_with("default "))
            .map(str::trim)
            .collect()
    }

    /// A manifest whose files have br and zstd variants of these sizes.
    fn sized(files: &[(&str, u64, u64)]) -> Index {
        let files: Vec<String> = files
            .iter()
            .map(|(key, br, zstd)| {
                format!(
                    r#""{key}": {{"blake3": "00", "content_type": "text/html", "etag": "\"i\"", "sha256": "x", "size": 90000, "skipped": {{}},
                      "encodings": [{{"coding": "br", "path": "{key}.br", "size": {br}, "blake3": "00", "etag": "\"b\""}},
                                    {{"coding": "zstd", "path": "{key}.zst", "size": {zstd}, "blake3": "00", "etag": "\"z\""}}]}}"#
                )
            })
            .collect();
        let json = format!(
            r#"{{"version": 1, "generator": "t", "settings": {{}}, "files": {{ {} }} }}"#,
            files.join(",")
        );
        Index::from_json(std::path::Path::new("m.json"), &json).unwrap()
    }

    #[test]
    fn files_whose_br_is_smaller_than_their_zstd_get_br_first() {
        let out = render(&sized(&[
            ("index.html", 58_868, 61_795),
            ("docs/index.html", 500, 501),
            ("assets/app.js", 9_000, 8_000),
            ("assets/tie.css", 700, 700),
        ]));
        assert_eq!(
            entries(&out.config, "pc_br_first"),
            ["/ 1", "/docs/ 1", "/docs/index.html 1", "/index.html 1"]
        );
        // Only when the client accepts br, zstd's weight is set to 0; last in
        // the route, after a delta's rewrite.
        assert!(out
            .config
            .contains("@pc_br_first expression `{pc_br_first} != \"-\" && {pc_br} == \"br\"`"));
        let route = &out.config[out.config.find("\troute {").unwrap()..];
        let rewrite = route.find("rewrite {http.matchers.file.relative}").unwrap();
        let demote = route
            .find("request_header @pc_br_first Accept-Encoding")
            .unwrap();
        assert!(rewrite < demote, "{route}");
        assert!(out.config.contains("map {header.Accept-Encoding} {pc_br}"));
    }

    #[test]
    fn every_listed_pair_of_asset_and_dictionary_gets_a_key() {
        let idx = index(&[
            (
                APP,
                &[("dcb", 1, 93), ("dcz", 1, 90), ("dcb", 2, 50)],
                Some(r#"match="/assets/app-*.js""#),
            ),
            ("assets/other-1a2b3c4d.css", &[("dcz", 1, 9)], None),
            ("index.html", &[], None),
        ]);
        let out = render(&idx);
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        let (h1, h2) = (hex(&[1; 32]), hex(&[2; 32]));
        // One key per dictionary, whichever assets use it.
        let mut want = vec![
            format!("{} {h1}", available_dictionary(&[1; 32])),
            format!("{} {h2}", available_dictionary(&[2; 32])),
        ];
        want.sort();
        assert_eq!(entries(&out.config, "pc_hex"), want);
        assert_eq!(
            entries(&out.config, "pc_delta"),
            [
                format!("/{APP}.{h1} /{APP}.{h1}"),
                format!("/{APP}.{h2} /{APP}.{h2}"),
                format!("/assets/other-1a2b3c4d.css.{h1} /assets/other-1a2b3c4d.css.{h1}"),
            ]
        );
        assert_eq!(
            entries(&out.config, "pc_vary"),
            [
                format!(
                    r#"/{APP} `{VARY}` `match="/assets/app-*.js"` `text/javascript; charset=utf-8`"#
                ),
                format!("/assets/other-1a2b3c4d.css `{VARY}` - `text/javascript; charset=utf-8`"),
            ]
        );
        // The snippet is one block, the static part in it.
        assert!(out.config.contains(&format!("\n({SNIPPET}) {{\n")));
        assert!(out.config.ends_with(&format!("{ROUTES}}}\n")));
        assert_eq!(
            out.config.matches('{').count(),
            out.config.matches('}').count()
        );
    }

    #[test]
    fn every_asset_gets_the_cache_control_serve_sends() {
        let out = render(&index(&[
            (APP, &[("dcb", 1, 93)], None),
            ("index.html", &[], None),
            ("docs/index.html", &[], None),
            ("docs/notindex.html", &[], None),
        ]));
        let (i, r) = (
            quote(crate::serve::CACHE_IMMUTABLE).unwrap(),
            crate::serve::CACHE_REVALIDATE,
        );
        // A folder's URL is its index.html's; a delta's is its asset's (the
        // deferred header reads `{path}` after the rewrite).
        let h1 = hex(&[1; 32]);
        assert_eq!(
            entries(&out.config, "pc_cache_control"),
            [
                format!("/ {r}"),
                format!("/{APP} {i}"),
                format!("/{APP}.{h1}.dcb {i}"),
                format!("/{APP}.{h1}.dcz {i}"),
                format!("/docs/ {r}"),
                format!("/docs/index.html {r}"),
                format!("/docs/notindex.html {r}"),
                format!("/index.html {r}"),
            ]
        );
        assert!(ROUTES.contains(
            "\t\theader @pc_cache_control Cache-Control {pc_cache_control} {\n\t\t\tdefer\n"
        ));
        assert!(entries(&render(&index(&[])).config, "pc_cache_control").is_empty());
    }

    #[test]
    fn a_page_gets_the_policy_serve_sends_per_request() {
        let about = r#"match="/about{.html}?", match-dest=("document")"#;
        let docs = r#"match="/docs/{index.html}?", match-dest=("document")"#;
        let out = render(&index(&[
            ("about.html", &[], Some(about)),
            ("docs/index.html", &[("dcb", 1, 93)], Some(docs)),
            ("plain.html", &[], None),
        ]));
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        let (h1, p) = (hex(&[1; 32]), PAGE_CACHE_CONTROL);
        let r = CACHE_REVALIDATE;
        // The page, its folder's URL and its deltas: the policy by request;
        // an unmarked page stays revalidated.
        assert_eq!(
            entries(&out.config, "pc_cache_control"),
            [
                format!("/about.html `{p}`"),
                format!("/docs/ `{p}`"),
                format!("/docs/index.html `{p}`"),
                format!("/docs/index.html.{h1}.dcb `{p}`"),
                format!("/docs/index.html.{h1}.dcz `{p}`"),
                format!("/plain.html {r}"),
            ]
        );
        // Sec-Fetch-Dest in Vary, by the folder's URL too, whose deltas are
        // its index.html's.
        let t = "`text/javascript; charset=utf-8`";
        let v = "`Accept-Encoding, Available-Dictionary, Sec-Fetch-Dest`";
        assert_eq!(
            entries(&out.config, "pc_vary"),
            [
                "/about.html Sec-Fetch-Dest - -".to_string(),
                format!("/docs/ {v} - {t}"),
                format!("/docs/index.html {v} - {t}"),
            ]
        );
        assert_eq!(
            entries(&out.config, "pc_delta"),
            [
                format!("/docs/.{h1} /docs/index.html.{h1}"),
                format!("/docs/index.html.{h1} /docs/index.html.{h1}"),
            ]
        );
        // The mark: the URL before its braces, by path (the folder's too);
        // a literal line per kind writes the braces, which a map output
        // would read as a placeholder.
        assert_eq!(
            entries(&out.config, "pc_page_stem"),
            [
                "/about.html /about html",
                "/docs/ /docs/ index",
                "/docs/index.html /docs/ index"
            ]
        );
        assert!(ROUTES.contains(
            "\t\theader @pc_page_html Use-As-Dictionary `match=\"{pc_page_stem}{.html}?\", match-dest=(\"document\")`\n"
        ));
        assert!(ROUTES.contains(
            "\t\theader @pc_page_index Use-As-Dictionary `match=\"{pc_page_stem}{index.html}?\", match-dest=(\"document\")`\n"
        ));
        assert_eq!(page_mark(about), Some(("/about", "html")));
        assert_eq!(
            page_mark(r#"match="/a{b}/{.html}?", match-dest=("document")"#),
            None
        );
        assert_eq!(page_mark(r#"match="/about{.html}?""#), None);
        // serve::keeps_page, as two maps.
        assert_eq!(
            entries(&out.config, "pc_navigation"),
            ["~(?i)^document$ document"]
        );
        assert_eq!(
            entries(&out.config, "pc_page_cache_control"),
            [format!("~^document[|]. `{CACHE_PAGE_KEPT}`")]
        );
        assert!(out
            .config
            .contains("\tmap {pc_navigation}|{header.Sec-CH-UA} {pc_page_cache_control} {\n"));
        assert!(out.config.contains("\t\tdefault no-cache\n"));
    }

    #[test]
    fn a_dictionary_without_deltas_only_says_so() {
        let out = render(&index(&[(
            "assets/app-1a2b3c4d.js",
            &[],
            Some(r#"match="/assets/app-*.js""#),
        )]));
        assert!(entries(&out.config, "pc_hex").is_empty());
        assert!(entries(&out.config, "pc_delta").is_empty());
        assert_eq!(
            entries(&out.config, "pc_vary"),
            [r#"/assets/app-1a2b3c4d.js - `match="/assets/app-*.js"` -"#]
        );
        let empty = render(&index(&[]));
        assert!(entries(&empty.config, "pc_vary").is_empty());
        assert!(empty.skipped.is_empty());
    }

    #[test]
    fn unwritable_names_and_values_are_skipped_and_reported() {
        let out = render(&index(&[
            ("assets/a{path}b-5e6f7a8b.js", &[("dcb", 1, 9)], None),
            (
                "assets/c-1a2b3c4d.js",
                &[("dcb", 2, 9)],
                Some("match=\"/{x}\""),
            ),
            (APP, &[("dcb", 3, 9)], None),
            (
                "assets/q?x-1a2b3c4d.js",
                &[("dcb", 4, 9)],
                Some("match=\"/q\""),
            ),
        ]));
        assert_eq!(out.skipped.len(), 3, "{:?}", out.skipped);
        assert!(out.skipped[2].starts_with("assets/q?x-1a2b3c4d.js: deltas: Caddy's rewrite"));
        assert!(out.skipped[0].starts_with("assets/a{path}b-5e6f7a8b.js: "));
        assert!(out.skipped[1].starts_with("assets/c-1a2b3c4d.js: Use-As-Dictionary"));
        assert!(out
            .config
            .contains("# skipped: assets/a{path}b-5e6f7a8b.js: "));
        // The asset whose dictionary value was left out keeps its deltas.
        // The asset with a `?` is still a dictionary, without deltas.
        let paths = entries(&out.config, "pc_vary");
        assert_eq!(paths.len(), 3, "{paths:?}");
        assert!(paths[0].starts_with("/assets/app-5e6f7a8b.js "));
        assert!(paths[1].starts_with("/assets/c-1a2b3c4d.js `Accept"));
        assert!(paths[1].contains(" - `text"), "{}", paths[1]);
        assert_eq!(paths[2], r#"`/assets/q?x-1a2b3c4d.js` - `match="/q"` -"#);
        assert_eq!(entries(&out.config, "pc_delta").len(), 2);
        assert!(!entries(&out.config, "pc_hex")
            .iter()
            .any(|l| l.contains(&hex(&[1; 32]))));

        // A delta's type that cannot be written: no deltas for that asset.
        let out = render(&index_typed(&[(APP, &[("dcb", 1, 9)], None)], "-"));
        assert_eq!(out.skipped.len(), 1, "{:?}", out.skipped);
        assert!(entries(&out.config, "pc_delta").is_empty());
        assert!(entries(&out.config, "pc_hex").is_empty());
        assert!(entries(&out.config, "pc_vary").is_empty());
    }

    #[test]
    fn odd_names_are_quoted_and_keep_their_deltas() {
        let name = "odd names/café menü — spaces & #hash-5e6f7a8b.js";
        let out = render(&index(&[(name, &[("dcz", 1, 9)], Some("match=\"/x`y\""))]));
        assert_eq!(out.skipped.len(), 1, "{:?}", out.skipped);
        let h1 = hex(&[1; 32]);
        assert_eq!(
            entries(&out.config, "pc_delta"),
            [format!("`/{name}.{h1}` `/{name}.{h1}`")]
        );
        assert_eq!(
            entries(&out.config, "pc_vary"),
            [format!(
                "`/{name}` `{VARY}` - `text/javascript; charset=utf-8`"
            )]
        );
    }

    /// Issue #29: caddy-map refused no variant, and a name with a newline, a
    /// CR or U+2028 in it went out by its own name like any other.
    #[test]
    fn variants_and_the_manifest_are_refused_by_the_file_they_name() {
        let keys = [
            "a\nb.txt",
            "c\rd.txt",
            "e\u{2028}f.txt",
            "g{x}.txt",
            "h`\"i.txt",
            "plain.txt",
        ];
        let idx = crate::deploy::fixture::gzip_only(&keys);
        let out = render(&idx);
        // What a map key cannot hold is an anchored regex of escapes.
        assert_eq!(
            entries(&out.config, "pc_not_served"),
            [
                r"`~^/a\x0ab\.txt\.gz$` 1",
                r"`~^/c\x0dd\.txt\.gz$` 1",
                "`/e\u{2028}f.txt.gz` 1",
                r"`~^/g\x7bx\x7d\.txt\.gz$` 1",
                r"`~^/h\x60\x22i\.txt\.gz$` 1",
                "/plain.txt.gz 1",
                "/precompress-manifest.json 1",
            ]
        );
        assert!(out
            .config
            .contains("\tmap {http.matchers.file.relative} {pc_not_served} {\n"));
        // The file matcher first, then the map it feeds (one set's matchers
        // run in no fixed order).
        assert!(ROUTES.contains(
            "\t\terror @pc_direct 404\n\t\troute @pc_file {\n\t\t\terror @pc_not_served 404\n\t\t}\n"
        ));
        assert!(ROUTES.contains("\t@pc_file file {\n\t\ttry_files {path}\n\t}\n"));
        assert_eq!(re2_escape(r"a.b\c$"), r"a\.b\\c\$");
    }

    #[test]
    fn quoting() {
        assert_eq!(quote(":WC01+m8/V/Y=:").as_deref(), Some(":WC01+m8/V/Y=:"));
        assert_eq!(
            quote("/assets/app-5e6f7a8b.js").as_deref(),
            Some("/assets/app-5e6f7a8b.js")
        );
        assert_eq!(quote("a b").as_deref(), Some("`a b`"));
        assert_eq!(
            quote(r#"match="/a-*.js""#).as_deref(),
            Some(r#"`match="/a-*.js"`"#)
        );
        assert_eq!(quote(r"a\b").as_deref(), Some(r"`a\b`"));
        assert_eq!(quote("a`b").as_deref(), Some("\"a`b\""));
        assert_eq!(quote("a`b\"c"), None);
        assert_eq!(quote("a`b\\"), None);
        assert_eq!(quote("#x").as_deref(), Some("`#x`"));
        assert_eq!(
            unwritable("-"),
            Some("empty or \"-\" (no value, to a Caddy map)")
        );
        assert!(unwritable("a\tb").is_some());
        assert!(unwritable("{$HOME}").is_some());
        assert_eq!(unwritable(VARY), None);
    }

    #[test]
    fn the_static_part_and_the_usage_lines() {
        for line in [
            "\t\terror @pc_direct 404\n",
            "\t\t\ttry_files {pc_delta}.{pc_dcb} {pc_delta}.{pc_dcz}\n",
            "\t@pc_direct path_regexp \\.[0-9a-f]{64}\\.dc[bz]$\n",
        ] {
            assert!(ROUTES.contains(line), "{line}");
        }
        let out = render(&index(&[]));
        for line in SITE_LINES.lines() {
            assert!(
                out.config.contains(&format!("#         {line}\n")),
                "{line}"
            );
        }
    }
}
