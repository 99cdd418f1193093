//! What a first visit loads, known from the release rather than guessed from
//! sizes: the scripts and stylesheets its pages name (`<script src>`,
//! `<link rel="modulepreload">`, `<link rel="stylesheet">`, and the modules
//! an inline script imports, as SvelteKit's boot script does), then, one
//! after another, the static imports of those scripts (`import … from "…"`,
//! `import "…"`, `export … from "…"`; never `import(…)`, which a lazy route
//! is). A chunk outside this set is one a first visit may never fetch, so no
//! dictionary a first visit fetches at idle may lean on it (issue #36: a lazy
//! 900 KB admin route marked for its group made the home page fetch the code
//! dictionary whole, 11.7x its JS). Pure: bytes in, keys out.

use std::collections::{BTreeSet, HashSet};

use crate::model::dictionary::folder_of;
use crate::model::manifest::Manifest;

/// The keys (paths under DIR) a first visit of any page in `pages` (key and
/// bytes) loads, given `read` for a script's bytes and `keys` the release's
/// files; the site is served at `base`.
pub fn loads(
    pages: &[(&str, Vec<u8>)],
    mut read: impl FnMut(&str) -> Option<Vec<u8>>,
    keys: &HashSet<&str>,
    base: &str,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut todo = Vec::new();
    for (page, bytes) in pages {
        for url in page_urls(bytes) {
            if let Some(k) =
                resolve(folder_of(page), &url, base).filter(|k| keys.contains(k.as_str()))
            {
                todo.push(k);
            }
        }
    }
    while let Some(k) = todo.pop() {
        if !out.insert(k.clone()) || !is_script(&k) {
            continue;
        }
        let Some(bytes) = read(&k) else { continue };
        for spec in static_imports(&bytes) {
            if let Some(i) =
                resolve(folder_of(&k), &spec, base).filter(|i| keys.contains(i.as_str()))
            {
                if !out.contains(&i) {
                    todo.push(i);
                }
            }
        }
    }
    out
}

/// The keys the scripts in `loaded` (a first visit's [`loads`]) may load
/// later: the lazy routes they name by `import(…)`, and everything those
/// import, statically or not; none of `loaded`. What a visitor who opens
/// every route of the page fetches besides (`precompress report`).
pub fn lazy_loads(
    loaded: &BTreeSet<String>,
    mut read: impl FnMut(&str) -> Option<Vec<u8>>,
    keys: &HashSet<&str>,
    base: &str,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut todo: Vec<String> = loaded.iter().cloned().collect();
    while let Some(k) = todo.pop() {
        if !is_script(&k) {
            continue;
        }
        let Some(bytes) = read(&k) else { continue };
        for spec in specifiers(&bytes, true) {
            let Some(i) = resolve(folder_of(&k), &spec, base).filter(|i| keys.contains(i.as_str()))
            else {
                continue;
            };
            if !loaded.contains(&i) && out.insert(i.clone()) {
                todo.push(i);
            }
        }
    }
    out
}

/// The dictionaries every page links (code, then documents), which a
/// browser fetches at idle.
pub fn linked(manifest: &Manifest) -> Vec<String> {
    [&manifest.shared_dictionary, &manifest.documents_dictionary]
        .into_iter()
        .flatten()
        .cloned()
        .collect()
}

/// What a visit that holds the assets `held` (keys) pays for the
/// dictionary `key` the pages link: its smallest variant (or itself), or a
/// delta of it against one of `held` when smaller. `None` when the manifest
/// does not list it. The run's summary and `precompress report` both ask.
pub fn dictionary_cost(manifest: &Manifest, key: &str, held: &[&str]) -> Option<u64> {
    let a = manifest.files.get(key)?;
    let whole = a.encodings.iter().map(|v| v.size).min().unwrap_or(a.size);
    let held: Vec<String> = held
        .iter()
        .filter_map(|k| manifest.files.get(*k))
        .map(|m| format!(":{}:", m.sha256))
        .collect();
    let delta = a
        .deltas
        .iter()
        .filter(|d| held.contains(&d.dictionary))
        .map(|d| d.size)
        .min();
    Some(delta.map_or(whole, |d| d.min(whole)))
}

fn is_script(key: &str) -> bool {
    key.ends_with(".js") || key.ends_with(".mjs")
}

/// The URLs a page makes a first visit load: `src` of every `<script>`,
/// `href` of every `<link>` whose `rel` is `modulepreload` or `stylesheet`,
/// and the modules its inline scripts import, statically or not (a page's
/// own boot code runs on every visit).
pub fn page_urls(html: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(html);
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = lower[at..].find('<').map(|i| at + i) {
        let end = lower[i..].find('>').map_or(lower.len(), |e| i + e);
        let tag = &lower[i..end];
        let orig = &text[i..end];
        if tag.starts_with("<script") {
            out.extend(attribute(tag, orig, "src"));
        } else if tag.starts_with("<link") {
            let rel = attribute(tag, tag, "rel").unwrap_or_default();
            if rel
                .split_ascii_whitespace()
                .any(|r| r == "modulepreload" || r == "stylesheet")
            {
                out.extend(attribute(tag, orig, "href"));
            }
        }
        at = end.max(i + 1);
    }
    out.extend(specifiers(html, true));
    out
}

/// The value of attribute `name` in a tag (`lower` its lower-cased text,
/// `orig` the same bytes as written), quoted or not.
fn attribute(lower: &str, orig: &str, name: &str) -> Option<String> {
    let mut from = 0;
    while let Some(i) = lower[from..].find(name).map(|i| from + i) {
        from = i + name.len();
        let before = lower[..i].chars().next_back();
        if !before.is_some_and(|c| c.is_ascii_whitespace()) {
            continue;
        }
        let rest = lower[from..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        let rest = rest.trim_start();
        let start = lower.len() - rest.len();
        let (value_start, stop): (usize, &[char]) = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => (start + 1, if q == '"' { &['"'] } else { &['\''] }),
            _ => (start, &[' ', '\t', '\n', '\r', '>', '/']),
        };
        let len = orig[value_start..]
            .find(stop)
            .unwrap_or(orig.len() - value_start);
        return Some(orig[value_start..value_start + len].to_string());
    }
    None
}

/// The specifiers of a script's static imports.
pub fn static_imports(js: &[u8]) -> Vec<String> {
    specifiers(js, false)
}

/// The string after each `from`, `import` (and, with `dynamic`,
/// `import(`), where those are words, not part of a longer name.
fn specifiers(src: &[u8], dynamic: bool) -> Vec<String> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    let mut out = Vec::new();
    for kw in [&b"from"[..], b"import"] {
        let mut i = 0;
        while i + kw.len() <= src.len() {
            if &src[i..i + kw.len()] != kw || (i > 0 && (word(src[i - 1]) || src[i - 1] == b'.')) {
                i += 1;
                continue;
            }
            let mut j = i + kw.len();
            if src.get(j).is_some_and(|b| word(*b)) {
                i += 1;
                continue;
            }
            while src.get(j).is_some_and(u8::is_ascii_whitespace) {
                j += 1;
            }
            if src.get(j) == Some(&b'(') {
                if !dynamic || kw == b"from" {
                    i = j;
                    continue;
                }
                j += 1;
                while src.get(j).is_some_and(u8::is_ascii_whitespace) {
                    j += 1;
                }
            }
            if let Some(&q @ (b'"' | b'\'' | b'`')) = src.get(j) {
                let s = j + 1;
                if let Some(len) = src[s..].iter().take(1024).position(|&b| b == q) {
                    if let Ok(spec) = std::str::from_utf8(&src[s..s + len]) {
                        out.push(spec.to_string());
                    }
                }
            }
            i = j.max(i + 1);
        }
    }
    out
}

/// The key a URL or module specifier found in the file of folder `folder`
/// names, served at `base`: relative (`./x.js`, `../x.js`, `x.js`) or
/// absolute under the base; `None` for another origin, a bare module name,
/// or a path that leaves the site.
pub fn resolve(folder: &str, url: &str, base: &str) -> Option<String> {
    let url = url.split(['?', '#']).next()?;
    if url.is_empty() || url.starts_with("//") || url.contains("://") || url.starts_with("data:") {
        return None;
    }
    let joined = match url.strip_prefix('/') {
        Some(_) => url.strip_prefix(base)?.to_string(),
        None if url.starts_with("./") || url.starts_with("../") || !url.contains(':') => {
            format!("{folder}{url}")
        }
        None => return None,
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_names_its_scripts_preloads_styles_and_boot_imports() {
        let html = br#"<!doctype html><html><head>
<link rel="stylesheet" href="/_nuxt/entry.AbCd1234.css">
<link rel="modulepreload" as="script" crossorigin href="/_nuxt/Bq2x9Zk1.js">
<link rel="prefetch" href="/_nuxt/Admin999.js">
<link rel=icon href=/favicon.ico>
<script type="module" src="/_nuxt/Entry111.js" crossorigin></script>
<script>Promise.all([import("./_app/immutable/entry/start.Xy12.js"), import('./_app/immutable/entry/app.Ab34.js')])</script>
</head><body>no import here: important from</body></html>"#;
        assert_eq!(
            page_urls(html),
            [
                "/_nuxt/entry.AbCd1234.css",
                "/_nuxt/Bq2x9Zk1.js",
                "/_nuxt/Entry111.js",
                "./_app/immutable/entry/start.Xy12.js",
                "./_app/immutable/entry/app.Ab34.js",
            ]
        );
    }

    #[test]
    fn a_script_imports_statically_never_by_import_call() {
        let js = br#"import{a as b}from"./Small222.js";import "./side.js";export*from'../lib/x.js';
const r=()=>import("./Admin999.js");const o={from:1};xfrom"./no.js";a.import("./no2.js")"#;
        assert_eq!(
            static_imports(js),
            ["./Small222.js", "../lib/x.js", "./side.js"]
        );
    }

    #[test]
    fn urls_resolve_against_the_file_and_the_base() {
        for (folder, url, base, want) in [
            ("", "/_nuxt/a.js", "/", Some("_nuxt/a.js")),
            ("", "/app/assets/a.js", "/app/", Some("assets/a.js")),
            ("", "/other/a.js", "/app/", None),
            ("blog/", "../assets/a.js?v=1", "/", Some("assets/a.js")),
            ("assets/", "./b.js", "/", Some("assets/b.js")),
            ("assets/", "b.js#x", "/", Some("assets/b.js")),
            ("", "../../etc/passwd", "/", None),
            ("", "https://cdn.example/a.js", "/", None),
            ("", "//cdn.example/a.js", "/", None),
            ("", "vue", "/", Some("vue")),
        ] {
            assert_eq!(
                resolve(folder, url, base).as_deref(),
                want,
                "{folder} {url}"
            );
        }
    }

    /// The Nuxt-like tree of issue #36: the entry imports a small chunk and
    /// lazily a 900 KB admin route that imports the same small chunk.
    #[test]
    fn a_lazy_route_is_not_what_a_first_visit_loads() {
        let keys: HashSet<&str> = [
            "index.html",
            "_nuxt/Entry111.js",
            "_nuxt/Small222.js",
            "_nuxt/Admin999.js",
            "_nuxt/Deep3333.js",
        ]
        .into_iter()
        .collect();
        let read = |k: &str| -> Option<Vec<u8>> {
            Some(match k {
                "_nuxt/Entry111.js" => {
                    b"import{s}from\"./Small222.js\";const admin=()=>import(\"./Admin999.js\")"
                        .to_vec()
                }
                "_nuxt/Small222.js" => b"import\"./Deep3333.js\";export const s=1".to_vec(),
                "_nuxt/Admin999.js" => b"import{s}from\"./Small222.js\"".to_vec(),
                _ => b"".to_vec(),
            })
        };
        let page = (
            "index.html",
            b"<script type=\"module\" src=\"/_nuxt/Entry111.js\"></script>".to_vec(),
        );
        let got = loads(&[page], read, &keys, "/");
        assert_eq!(
            got.iter().collect::<Vec<_>>(),
            [
                "_nuxt/Deep3333.js",
                "_nuxt/Entry111.js",
                "_nuxt/Small222.js"
            ]
        );
        // What its lazy route loads besides: the route alone (what it
        // imports, the first visit holds).
        let later = lazy_loads(&got, read, &keys, "/");
        assert_eq!(later.into_iter().collect::<Vec<_>>(), ["_nuxt/Admin999.js"]);
    }
}
