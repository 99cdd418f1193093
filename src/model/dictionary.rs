//! Which assets become compression dictionaries for the next release, and how
//! a new asset finds its previous version (RFC 9842). Pure functions of names,
//! sizes and hashes: no disk, no encoder.
//!
//! **Logical name.** A bundler puts a content hash in a file name so the URL
//! changes with the bytes: `index-D8fKq1nN.js` (Vite, Rollup), `app-5XQWBHJ2.js`
//! (esbuild), `main.3f2a9c1b.js` and `main.3f2a…chunk.js` (webpack, Parcel).
//! The logical name is the path with that hash replaced by `*`
//! (`assets/index-*.js`): the same for every release of the asset. An asset of
//! a new release is paired with the files of an earlier one that have its
//! logical name; the recognized forms are those of [`logical_name`].
//!
//! **Dictionaries.** A fingerprinted asset of a type worth it ([`DICTIONARY_TYPES`],
//! at least [`DICTIONARY_MIN_SIZE`]) is sent with `Use-As-Dictionary:
//! match="/assets/index-*.js"`, so a browser keeps it and offers it when it next
//! asks for a URL of that pattern: the asset's own future versions and nothing
//! else (never a folder or the site). Names that are not fingerprinted are not
//! marked: they are served `no-cache`, and a browser keeps a dictionary only
//! for its response's freshness lifetime.

use base64::Engine;

/// Extensions of assets that are marked as dictionaries: what a browser
/// fetches again, changed a little, after each release.
pub const DICTIONARY_TYPES: &[&str] = &["js", "mjs", "cjs", "css", "wasm", "json"];

/// Smaller assets are not marked: their brotli variant is about 150 bytes,
/// and the headers a dictionary adds (`Use-As-Dictionary` once, then about
/// 70 bytes of `Available-Dictionary` on each later request) with a delta's
/// own 36-40 byte header would eat what it saves. Above it, a framework's
/// many small chunks (SvelteKit's entry and node files, re-sent after every
/// release because the names they import change) do get deltas: at 2 KiB,
/// they were 12% of a SvelteKit visit's JS and CSS re-sent whole.
pub const DICTIONARY_MIN_SIZE: u64 = 256;

/// The path with its content hash replaced by `*`, when its file name carries
/// one beside a name: `name.HASH.ext`, also before a further suffix
/// (`main.HASH.chunk.js`), and `name-HASH.ext`, where HASH is 8+ hex digits
/// with a letter and a digit (`hex_hash`: webpack, Parcel, Next.js), 8
/// digits in a script or stylesheet that are not a date (`digit_hash`), or 8
/// characters of `[A-Za-z0-9_-]` that read as a hash (`base64url_hash`:
/// Vite, Rollup, esbuild, Angular after `-`; Astro, SvelteKit and Nuxt after
/// `.`). A name that is only a hash (`_app/immutable/chunks/CxId8T4r.js`) has
/// no logical name ([`is_hash_only`]). Conservative on purpose: a miss costs a
/// revalidation or a delta, a false hit can pin a stale file in caches for a
/// year.
pub fn logical_name(path: &str) -> Option<String> {
    let (folder, name) = match path.rsplit_once('/') {
        Some((d, n)) => (Some(d), n),
        None => (None, path),
    };
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() || ext.is_empty() {
        return None;
    }
    let mut logical = None;
    // name.HASH, or name.HASH.chunk (any dot-separated segment after the first).
    let segments: Vec<&str> = stem.split('.').collect();
    // In a framework's immutable folder every name carries a hash, so the
    // last segment, 8 characters of the alphabet, is one even when it reads
    // as a word (SvelteKit's `entry/start.DgaHsjir.js`: about one build in
    // four draws such a hash for some chunk).
    let immutable = segments.len() > 1 && in_immutable_folder(path);
    if let Some(i) = (1..segments.len()).find(|&i| {
        let hash = segments[i];
        (hash.len() >= 8 && hex_hash(hash))
            || (hash.len() == 8 && (dotted_hash(hash) || digit_hash(hash, ext)))
            || (immutable && i == segments.len() - 1 && base64url_alphabet(hash))
    }) {
        let mut s = segments.clone();
        s[i] = "*";
        logical = Some(format!("{}.{ext}", s.join(".")));
    }
    // name-HASH, where HASH may itself hold `-` or `_`.
    if logical.is_none() {
        logical = stem.match_indices('-').find_map(|(i, _)| {
            let hash = &stem[i + 1..];
            let ok = i > 0
                && ((hash.len() == 8
                    && (dashed_hash(hash) || base32_capitals(hash, ext) || digit_hash(hash, ext)))
                    || (matches!(hash.len(), 16 | 20 | 32) && hex_hash(hash)));
            ok.then(|| format!("{}-*.{ext}", &stem[..i]))
        });
    }
    let logical = logical?;
    Some(match folder {
        Some(d) => format!("{d}/{logical}"),
        None => logical,
    })
}

/// Whether the file name is a content hash and nothing else, as SvelteKit
/// (`_app/immutable/chunks/CxId8T4r.js`), Nuxt (`_nuxt/C27JxjOI.js`), Next.js
/// (`_next/static/css/8e4c2f1a9b7d3e6c.css`) and webpack's `[contenthash].js`
/// write them: 8 characters of `[A-Za-z0-9_-]` with an upper-case letter, a
/// lower-case one and a digit (`FAVICON1.png` and `Settings.js` are names),
/// or 16+ hex digits with a letter and a digit. About 3 in 10 real 8-character
/// hashes lack one of the three and are missed; the frameworks that write
/// such names put them in `IMMUTABLE_FOLDERS`. Such a name is
/// fingerprinted, but has no logical name to pair releases by.
pub fn is_hash_only(path: &str) -> bool {
    let name = path.rsplit_once('/').map_or(path, |(_, n)| n);
    let Some((stem, ext)) = name.split_once('.') else {
        return false;
    };
    !ext.is_empty()
        && ((stem.len() == 8 && base64url_hash(stem) && mixed(stem))
            || (stem.len() >= 16 && hex_hash(stem)))
}

/// 8 characters of `[A-Za-z0-9_-]`, whatever they read as.
fn base64url_alphabet(hash: &str) -> bool {
    hash.len() == 8
        && hash
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Upper-case, lower-case and a digit, all three.
fn mixed(s: &str) -> bool {
    let has = |f: fn(&u8) -> bool| s.bytes().any(|b| f(&b));
    has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase) && has(u8::is_ascii_digit)
}

/// Folders a framework fills with content-hashed files only, served
/// `immutable` by its own adapters: SvelteKit's `_app/immutable/`, Next.js's
/// `_next/static/`, Astro's `_astro/` and Nuxt's `_nuxt/` (less
/// `_nuxt/builds/`, which holds the `latest.json` a client polls).
pub const IMMUTABLE_FOLDERS: &[&str] = &["_app/immutable/", "_next/static/", "_astro/", "_nuxt/"];

/// Whether the asset at `path` lies in one of [`IMMUTABLE_FOLDERS`] (at DIR's
/// top or below it, as under a base path).
pub fn in_immutable_folder(path: &str) -> bool {
    let at = |f: &str| path.starts_with(f) || path.contains(&format!("/{f}"));
    IMMUTABLE_FOLDERS.iter().any(|f| at(f)) && !at("_nuxt/builds/")
}

/// Whether the asset's bytes can never change under its name, so it may be
/// cached for a year: a content hash in its name ([`logical_name`],
/// [`is_hash_only`]) or a framework's immutable folder.
pub fn is_fingerprinted(path: &str) -> bool {
    logical_name(path).is_some() || is_hash_only(path) || in_immutable_folder(path)
}

/// Whether 8+ hex digits read as a content hash rather than a number or a
/// word: hex only, with a letter and a digit both (`3f2a9c1b`). All digits is
/// a date or a version (`stats.20241201.json`) unless [`digit_hash`] says a
/// script's or stylesheet's 8 are a hash.
fn hex_hash(hash: &str) -> bool {
    hash.bytes().all(|b| b.is_ascii_hexdigit())
        && hash.bytes().any(|b| b.is_ascii_digit())
        && hash.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Whether 8 digits in a script's or stylesheet's name are a hex content
/// hash that drew no letter (`vue-49631014.js`: webpack's `[contenthash:8]`,
/// 2.3% of them) rather than a date (`polyfill-20241201.js`). The type is
/// what tells them apart: a bundler names scripts and stylesheets by hash,
/// people name data files and reports by date; so only in `js`, `mjs`, `cjs`
/// and `css`, and never 8 digits that read as a calendar date
/// (`YYYYMMDD`, `DDMMYYYY` or `MMDDYYYY`, years 1900-2099), which a random
/// hash does about 1 time in 500.
fn digit_hash(hash: &str, ext: &str) -> bool {
    matches!(ext, "js" | "mjs" | "cjs" | "css")
        && hash.len() == 8
        && hash.bytes().all(|b| b.is_ascii_digit())
        && !reads_as_date(hash)
}

/// Whether 8 digits are a date in one of the orders people write them.
fn reads_as_date(d: &str) -> bool {
    let n = |r: std::ops::Range<usize>| d[r].parse::<u32>().unwrap_or(0);
    let ok = |y: u32, m: u32, day: u32| {
        (1900..=2099).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&day)
    };
    ok(n(0..4), n(4..6), n(6..8)) || ok(n(4..8), n(2..4), n(0..2)) || ok(n(4..8), n(0..2), n(2..4))
}

/// Whether 8 characters of `[A-Za-z0-9_-]` read as a content hash (Vite's and
/// Rollup's base64url, esbuild's base32) rather than a word with a number in
/// it. Lower-case letters and digits alone are a word unless they are hex:
/// crypto-js ships `pad-iso10126.js` and `pad-ansix923.js`, which are not
/// fingerprinted. A hash holds an upper-case letter beside a lower-case one or
/// a digit (`D8fKq1nN`, `5XQWBHJ2`), or `_`/`-` beside a digit (`a_b-12cd`; not
/// `min-size`), or is hex (`hex_hash`). Real base64url hashes with none of
/// these (about 1 in 60) are missed: a miss costs a revalidation and a delta,
/// a false hit serves a file that will change as `immutable` for a year.
fn base64url_hash(hash: &str) -> bool {
    let has = |f: fn(&u8) -> bool| hash.bytes().any(|b| f(&b));
    if !hash
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return false;
    }
    let (upper, lower, digit) = (
        has(u8::is_ascii_uppercase),
        has(u8::is_ascii_lowercase),
        has(u8::is_ascii_digit),
    );
    let symbol = has(|b| *b == b'_' || *b == b'-');
    (upper && (lower || digit)) || (symbol && digit) || hex_hash(hash)
}

/// [`base64url_hash`], less one capitalized word: after a `-`,
/// `widget-Calendar.js` and `theme-Midnight.css` are a hand-named file of
/// `public/` (edited in place: served `immutable`, a returning visitor kept
/// the old one for a year), far likelier than a hash that drew one capital
/// and seven lower-case letters (about 1 in 1,500 of them, then missed: a
/// revalidation and no delta). Two humps (`DgaHsjir`) stay a hash: Vite
/// draws them often.
fn dashed_hash(hash: &str) -> bool {
    let b = hash.as_bytes();
    let capitalized_word =
        b.len() == 8 && b[0].is_ascii_uppercase() && b[1..].iter().all(u8::is_ascii_lowercase);
    base64url_hash(hash) && !capitalized_word
}

/// 8 capital letters after `-` in a script's or stylesheet's name: esbuild's
/// and Angular's base32 hash with no digit (about 1 in 5 of them:
/// `chunk-YTEQJRAJ.js`). Elsewhere capitals are a name (`logo-FACEBOOK.png`).
fn base32_capitals(hash: &str, ext: &str) -> bool {
    matches!(ext, "js" | "mjs" | "css") && hash.bytes().all(|b| b.is_ascii_uppercase())
}

/// [`base64url_hash`], less what reads as a word: after a `.`, a segment
/// like `app.Settings.js` is far likelier a word than a hash. Words are
/// camel-case humps of 2+ lower-case letters (`Settings`, `MainPage`,
/// `homePage`) or capitals alone (`app.ABOUTDOC.js`).
fn dotted_hash(hash: &str) -> bool {
    base64url_hash(hash) && !camel_word(hash) && !hash.bytes().all(|b| b.is_ascii_uppercase())
}

/// `^[A-Za-z][a-z]+([A-Z][a-z]{2,})*$`-like: humps of a capital (or the first
/// letter) and 2+ lower-case letters, nothing else.
fn camel_word(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !b.iter().all(u8::is_ascii_alphabetic) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        // A hump: one letter (a capital, or any at the start), then lower-case.
        if i > 0 && !b[i].is_ascii_uppercase() {
            return false;
        }
        let start = i;
        i += 1;
        while i < b.len() && b[i].is_ascii_lowercase() {
            i += 1;
        }
        if i - start < 3 {
            return false;
        }
    }
    true
}

/// The key under which an asset is paired across releases: its logical name,
/// or its path when the name carries no hash.
pub fn pairing_key(path: &str) -> String {
    logical_name(path).unwrap_or_else(|| path.to_string())
}

/// The pattern (relative to DIR) that every script, or every stylesheet, of
/// the asset's folder matches: `_nuxt/*.js`. What a browser matches the
/// dictionary of chunks named by a hash alone by (`run::dictionaries::shared`).
pub fn folder_pattern(path: &str) -> Option<String> {
    let ext = crate::model::content::extension(path)?;
    Some(format!("{}*.{ext}", folder_of(path)))
}

/// The pattern an asset's dictionary is matched by, relative to DIR: its
/// logical name (`assets/index-*.js`), or for a fingerprinted name with none
/// (`_nuxt/C27JxjOI.js`), its folder's [`folder_pattern`]; `None` for a name
/// that is not fingerprinted. Earlier releases' dictionaries are listed
/// under it, and a new asset looks its predecessors up by it.
pub fn dictionary_key(path: &str) -> Option<String> {
    logical_name(path).or_else(|| {
        is_fingerprinted(path)
            .then(|| folder_pattern(path))
            .flatten()
    })
}

/// The key an earlier release's file is listed under as a dictionary: its
/// [`dictionary_key`], else its [`pairing_key`]. `run::state::releases` lists by it,
/// and `probe::previous` asks by it which of a live site's files to fetch.
pub fn release_key(path: &str) -> String {
    dictionary_key(path).unwrap_or_else(|| pairing_key(path))
}

/// The `Use-As-Dictionary` value of a dictionary matched by `pattern`
/// (relative to DIR, as [`dictionary_key`] gives it) served under `base`,
/// for the asset at `path`: `match-dest=("style")` for a stylesheet. `None`
/// when the pattern holds a character URLPattern reads specially.
pub fn pattern_use_as_dictionary(pattern: &str, path: &str, base: &str) -> Option<String> {
    if !pattern_safe(&pattern.replace('*', "")) {
        return None;
    }
    let mut v = format!("match=\"{}\"", crate::model::path::url_of(base, pattern));
    if crate::model::content::extension(path).as_deref() == Some("css") {
        v.push_str(", match-dest=(\"style\")");
    }
    Some(v)
}

/// Characters a path may hold and still be written into a URL pattern as is:
/// none of URLPattern's special characters (`: * ( ) { } ? + \`), nothing to
/// percent-encode, nothing to escape in a structured-field string.
pub fn pattern_safe(path: &str) -> bool {
    path.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_./~".contains(&b))
}

/// The start of a shared dictionary's file name; the rest is the first 16 hex
/// digits of its content's blake3, then `.js` (`.txt` before: still read as
/// one). See `run::dictionaries::shared`.
pub const SHARED_PREFIX: &str = "precompress-dictionary-";

/// The start of the documents dictionary's file name (at DIR's top; the rest
/// as for [`SHARED_PREFIX`]). See `run::dictionaries::documents`.
pub const DOCUMENTS_PREFIX: &str = "precompress-documents-";

/// The two kinds of dictionary a run makes from a release's own files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedKind {
    /// For scripts and stylesheets with no pattern of their own (`run::dictionaries::shared`).
    Code,
    /// For the HTML pages, fetched by navigation (`run::dictionaries::documents`).
    Documents,
}

impl SharedKind {
    fn prefix(self) -> &'static str {
        match self {
            SharedKind::Code => SHARED_PREFIX,
            SharedKind::Documents => DOCUMENTS_PREFIX,
        }
    }
}

/// Where the shared dictionary of `kind` whose content has blake3
/// `blake3_hex` goes: in `folder` (relative to DIR, `""` or ending in `/`).
/// The code dictionary's name ends in `.js`, so the pattern it is marked
/// with (`FOLDER*.js`, [`shared_use_as_dictionary`]) matches its own next
/// version: that arrives as a delta against it.
pub fn shared_dictionary_path(kind: SharedKind, folder: &str, blake3_hex: &str) -> String {
    let ext = match kind {
        SharedKind::Code => "js",
        SharedKind::Documents => "txt",
    };
    format!("{folder}{}{}.{ext}", kind.prefix(), &blake3_hex[..16])
}

/// The kind of dictionary `path` names, if it has the form of
/// [`shared_dictionary_path`] (a documents dictionary only at DIR's top; a
/// code dictionary also with the `.txt` it had before).
pub fn shared_kind(path: &str) -> Option<SharedKind> {
    let name = path.rsplit_once('/').map_or(path, |(_, n)| n);
    let at_top = !path.contains('/');
    [SharedKind::Code, SharedKind::Documents]
        .into_iter()
        .find(|k| {
            name.strip_prefix(k.prefix())
                .and_then(|r| {
                    r.strip_suffix(".txt")
                        .or_else(|| r.strip_suffix(".js").filter(|_| *k == SharedKind::Code))
                })
                .is_some_and(|h| {
                    h.len() == 16 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
                })
        })
        .filter(|k| *k == SharedKind::Code || at_top)
}

/// Whether `path` has the form of [`shared_dictionary_path`], of either kind.
pub fn is_shared_dictionary(path: &str) -> bool {
    shared_kind(path).is_some()
}

/// The pages a documents dictionary serves: what a browser navigates to.
pub const PAGE_TYPES: &[&str] = &["html", "htm"];

/// Whether the asset at `path` is an HTML page.
pub fn is_page(path: &str) -> bool {
    crate::model::content::extension(path).is_some_and(|e| PAGE_TYPES.contains(&e.as_str()))
}

/// `--shared-dictionary auto` holds in the code dictionary
/// (`run::dictionaries::shared`), besides the marked chunk, only the members
/// a first visit can fetch at idle within this share of what it downloads
/// anyway (its landing page and what that loads, measured with zstd at the
/// run's level, as the delta is). A first visit fetches the dictionary as a
/// delta against the marked chunk, about the compressed size of those
/// members; a returning visitor saves about as much after every release
/// (they are what changes: chunks that import).
/// Holding every such member, a first visit of Nuxt 4 paid 4.0% of its
/// whole download at idle, of SvelteKit 2 also 4.0%
/// (bench/results/field-pages-20261205.md).
pub const IDLE_MAX_SHARE: f64 = 0.02;

/// The page "a visit" lands on, for the run's summary, `report` and the
/// idle budget of the code dictionary alike: `index.html` at DIR's top,
/// else the first page of `keys` in path order.
pub fn landing_page<'a>(keys: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    keys.into_iter()
        .filter(|k| is_page(k))
        .min_by_key(|k| (*k != "index.html", *k))
}

/// Whether the shared dictionary at `dict` (of either kind) is one a browser
/// offers for the asset at `rel`: a documents dictionary for pages, a code
/// one for the scripts in its folder (a `.txt` one, as made before, for
/// whatever lies there and is not a page).
pub fn shared_serves(dict: &str, rel: &str) -> bool {
    dict != rel
        && match shared_kind(dict) {
            Some(SharedKind::Code) => {
                rel.starts_with(folder_of(dict))
                    && !is_page(rel)
                    && (dict.ends_with(".txt") || rel.ends_with(".js"))
            }
            Some(SharedKind::Documents) => is_page(rel),
            None => false,
        }
}

/// The folder of `path` with its `/` (`""` at DIR's top).
pub fn folder_of(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..=i])
}

/// The `Use-As-Dictionary` value of the shared dictionary at `path` served
/// under `base`. The code dictionary's: every script of its folder
/// (`FOLDER*.js`, no `match-dest`), longer than the `FOLDER*` of the chunk
/// marked for the folder ([`chunk_pattern`]), so a browser holding both
/// offers this one, and shorter than any per-file pattern there, so a
/// browser holding an asset's own dictionary keeps offering that one
/// (Chromium offers the longest match; measured in
/// `bench/probe/match-specificity.mjs`); one made before as `.txt`: every
/// URL of its folder. The documents dictionary's: every URL under the base,
/// for navigations only (`match-dest=("document")`), so a browser never
/// offers it for a script.
pub fn shared_use_as_dictionary(path: &str, base: &str) -> Option<String> {
    let folder = folder_of(path);
    let url = crate::model::path::url_of(base, folder);
    if !pattern_safe(folder) {
        return None;
    }
    match shared_kind(path)? {
        SharedKind::Code if path.ends_with(".js") => Some(format!("match=\"{url}*.js\"")),
        SharedKind::Code => Some(format!("match=\"{url}*\"")),
        SharedKind::Documents => Some(format!("match=\"{url}*\", match-dest=(\"document\" \"\")")),
    }
}

/// The pattern (relative to DIR) the chunk marked for the group of the
/// chunks with no name of their own in `path`'s folder is marked with
/// (`run::dictionaries::shared`): the folder's `FOLDER*` for scripts (`_nuxt/*`: shorter
/// than the code dictionary's `_nuxt/*.js`, which a browser then prefers),
/// else [`folder_pattern`] (`_nuxt/*.css`, and every type at DIR's top,
/// where `*` alone would match the pages too).
pub fn chunk_pattern(path: &str) -> Option<String> {
    let folder = folder_of(path);
    match crate::model::content::extension(path)?.as_str() {
        "js" if !folder.is_empty() => Some(format!("{folder}*")),
        _ => folder_pattern(path),
    }
}

/// What a server answers a request from Chromium (`Sec-CH-UA`) for the code
/// dictionary that holds no dictionary (no `Available-Dictionary`) when the
/// manifest lists deltas for it: `204 No Content` with this
/// `Cache-Control`, nothing stored.
///
/// A page's `Link` makes a browser fetch the code dictionary when idle, and
/// it is cheap only as a delta against the marked chunk the page just loaded
/// (`run::dictionaries::shared`). Chromium may fetch it before that chunk is
/// stored as a dictionary (a busy machine, a slow phone: issue #46), and the
/// whole file then costs about what the chunks it holds cost. Refused this
/// way, Chromium logs no error and fetches it again on the next page load
/// (measured: `bench/probe/dictionary-refused.mjs`), by then holding the
/// chunk; a request that offers a dictionary the manifest has no delta for
/// (a visitor holding an old release's) still gets the file, or it would
/// never move on from the old one, and so does any client that is not
/// Chromium (a live-site fetch, curl): it may want the bytes.
pub const DEFERRED_CACHE_CONTROL: &str = "no-store";

/// Whether the asset at `key` is answered [`DEFERRED_CACHE_CONTROL`]'s way
/// when Chromium asks it holding no dictionary: the manifest's code dictionary
/// (`shared_dictionary`), when it lists deltas for it.
pub fn deferred_without_dictionary(
    shared_dictionary: Option<&str>,
    key: &str,
    has_deltas: bool,
) -> bool {
    has_deltas && shared_dictionary == Some(key) && shared_kind(key) == Some(SharedKind::Code)
}

/// The `Link` value an HTML response carries so a browser fetches the shared
/// dictionaries at `urls` when idle (none: `None`).
pub fn dictionary_link<S: AsRef<str>>(urls: &[S]) -> Option<String> {
    (!urls.is_empty()).then(|| {
        urls.iter()
            .map(|u| format!("<{}>; rel=\"compression-dictionary\"", u.as_ref()))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// Whether the asset at `path` of `size` bytes is marked as a dictionary for
/// its next versions (and so gets deltas against its earlier ones).
pub fn is_candidate(path: &str, size: u64) -> bool {
    if is_shared_dictionary(path) {
        return true;
    }
    size >= DICTIONARY_MIN_SIZE
        && pattern_safe(path)
        && crate::model::content::extension(path)
            .is_some_and(|e| DICTIONARY_TYPES.contains(&e.as_str()))
        && logical_name(path).is_some()
}

/// Whether the HTML page at `path` of `size` bytes is marked as the
/// dictionary for its own next version (`--no-page-dictionary` turns it
/// off): a page a URL pattern can name as it is, not fingerprinted (its
/// name changes with its bytes, so no next version shares it), and not one
/// of precompress's own dictionaries. Chromium keeps a top-level page as a
/// dictionary only when it may keep the response fresh
/// ([`crate::model::manifest::Caching::Page`]), and offers it on the next
/// navigation its pattern covers: the page's own next version then arrives
/// as a delta against the copy the visitor holds.
pub fn is_page_candidate(path: &str, size: u64) -> bool {
    // The 404 page answers URLs that are not its own, with a 404: no
    // navigation to its own URL comes back for a next version.
    is_page(path)
        && path != "404.html"
        && size >= DICTIONARY_MIN_SIZE
        && pattern_safe(path)
        && !is_fingerprinted(path)
        && !is_shared_dictionary(path)
}

/// The URL pattern (relative to DIR) of every URL that serves the page at
/// `path`, as `serve` and the servers it configures route them: a folder's
/// `index.html` at the folder's URL too (`docs/{index.html}?`), `about.html`
/// at `/about` too (`about{.html}?`). URLPattern's `{...}?` is an optional
/// group, so one pattern names both and no other page.
pub fn page_pattern(path: &str) -> String {
    let name = path.rsplit_once('/').map_or(path, |(_, n)| n);
    if name == "index.html" {
        format!("{}{{index.html}}?", folder_of(path))
    } else if let Some(stem) = path.strip_suffix(".html") {
        format!("{stem}{{.html}}?")
    } else {
        path.to_string()
    }
}

/// The `Use-As-Dictionary` value of the page at `path` served under `base`:
/// its own URLs ([`page_pattern`]), for navigations only.
pub fn page_use_as_dictionary(path: &str, base: &str) -> String {
    format!(
        "match=\"{}\", match-dest=(\"document\")",
        crate::model::path::url_of(base, &page_pattern(path))
    )
}

/// The `Use-As-Dictionary` value of a single-page app's shell (`index.html`
/// at DIR's top, served under `base` for every client-side route): every URL
/// under the base, for navigations, so a returning visitor who lands on any
/// route offers the shell they hold.
pub fn shell_use_as_dictionary(base: &str) -> String {
    format!("match=\"{base}*\", match-dest=(\"document\")")
}

/// Whether the asset at `path` of `size` bytes may have been sent as a
/// dictionary: a [`is_candidate`], a [`is_page_candidate`], or a fingerprinted script or stylesheet
/// a release marked with its group's pattern (`run::dictionaries::shared`).
pub fn may_be_dictionary(path: &str, size: u64) -> bool {
    is_candidate(path, size)
        || is_page_candidate(path, size)
        || (size >= DICTIONARY_MIN_SIZE
            && pattern_safe(path)
            && crate::model::content::extension(path)
                .is_some_and(|e| matches!(e.as_str(), "js" | "mjs" | "cjs" | "css"))
            && is_fingerprinted(path))
}

/// The `Use-As-Dictionary` value for the asset at `path`, if it is a
/// candidate: `match="/assets/index-*.js"`, with `match-dest=("style")` for a
/// stylesheet (a script may run as a worker, whose destination differs). The
/// pattern is the URL path the browser sees: DIR served at `base` (normalized,
/// [`crate::model::path::normalize_base`]).
pub fn use_as_dictionary(path: &str, size: u64, base: &str) -> Option<String> {
    if !is_candidate(path, size) || is_shared_dictionary(path) {
        return None;
    }
    pattern_use_as_dictionary(&logical_name(path)?, path, base)
}

/// The SHA-256 of `bytes`: what names a dictionary.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(bytes)).into()
}

/// 64 hex digits (as [`hex`] writes a SHA-256) back to its 32 bytes.
pub fn parse_hex32(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// A SHA-256 as a client sends it in `Available-Dictionary`: a structured-field
/// byte sequence, `:` standard base64 `:`.
pub fn available_dictionary(sha256: &[u8; 32]) -> String {
    format!(
        ":{}:",
        base64::engine::general_purpose::STANDARD.encode(sha256)
    )
}

/// Parses an `Available-Dictionary` field: exactly one byte sequence holding a
/// 32-byte hash. Anything else (another length, not base64, a list, a huge
/// value) is `None`, and the request is negotiated as if it had none.
pub fn parse_available_dictionary(value: &str) -> Option<[u8; 32]> {
    let v = value.trim_matches(|c| c == ' ' || c == '\t');
    // 32 bytes are 44 base64 characters with padding; anything longer is not one.
    if v.len() > 46 {
        return None;
    }
    let b64 = v.strip_prefix(':')?.strip_suffix(':')?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    bytes.try_into().ok()
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logical_names_take_the_hash_out() {
        for (path, want) in [
            ("assets/index-D8fKq1nN.js", Some("assets/index-*.js")),
            ("assets/index-BxYzAbCd.css", Some("assets/index-*.css")),
            ("assets/vendor-a_b-12cd.js", Some("assets/vendor-*.js")),
            ("app-5XQWBHJ2.js", Some("app-*.js")),
            ("main.3f2a9c1b.js", Some("main.*.js")),
            ("main.3f2a9c1b4d5e6f7a8b9c.js", Some("main.*.js")),
            (
                "static/js/main.8e4c2f1a9b7d3e6c5a40.chunk.js",
                Some("static/js/main.*.chunk.js"),
            ),
            ("css/chunk.0123abcd.css", Some("css/chunk.*.css")),
            ("index.html", None),
            ("assets/app.js", None),
            ("assets/settings-abcdefgh.js", None),
            ("my-component-v2.js", None),
            ("deadbeef.js", None),
            ("lib.abcdefab.js", None),
            ("noext-12345678", None),
            // Words and numbers, not hashes: served immutable for a year if
            // taken for one (crypto-js's own file names, a dated report).
            ("pad-iso10126.js", None),
            ("pad-ansix923.js", None),
            ("pad-iso97971.js", None),
            ("stats-20241201.json", None),
            ("report.20241201.json", None),
            ("assets/index-4e5f6a7b.js", Some("assets/index-*.js")),
            ("assets/index-Dq_x-K2a.js", Some("assets/index-*.js")),
            ("assets/tiny-under-min-size.js", None),
            // A dot, then 8 base64url characters (Astro, SvelteKit, Nuxt);
            // words after a dot are names.
            (
                "_astro/TripPlanner.C9KqFSFg.js",
                Some("_astro/TripPlanner.*.js"),
            ),
            (
                "_app/immutable/entry/app.X0K_QGuN.js",
                Some("_app/immutable/entry/app.*.js"),
            ),
            (
                "_app/immutable/nodes/0.DqP6xYz1.js",
                Some("_app/immutable/nodes/0.*.js"),
            ),
            ("app.Settings.js", None),
            ("lodash.debounce.js", None),
            ("app.MainPage.js", None),
            ("app.ABOUTDOC.js", None),
            // 16 or 20 hex digits after `-` (Next.js, webpack).
            (
                "_next/static/chunks/framework-64ad27b21261a9ce.js",
                Some("_next/static/chunks/framework-*.js"),
            ),
            ("main-20bc8c7ae0b1d5d0a9f1.js", Some("main-*.js")),
            ("build-1234567890123456.js", None),
            // Hash-only names have no logical name.
            ("_app/immutable/chunks/CxId8T4r.js", None),
        ] {
            assert_eq!(logical_name(path).as_deref(), want, "{path}");
        }
        // Two releases of one asset share it; other assets do not.
        assert_eq!(
            logical_name("assets/index-D8fKq1nN.js"),
            logical_name("assets/index-Cq2zT9aB.js")
        );
        assert_ne!(
            logical_name("assets/index-D8fKq1nN.js"),
            logical_name("assets/vendor-D8fKq1nN.js")
        );
        assert_eq!(pairing_key("assets/app.js"), "assets/app.js");
    }

    /// Every row of `fixtures/bundler-names.tsv`: names from real builds of
    /// Vite, SvelteKit, Astro, Nuxt, Next.js (Turbopack and webpack), webpack,
    /// Angular, Parcel, esbuild and Rspack.
    #[test]
    fn real_bundler_names_are_read_as_their_builds_mean_them() {
        let (rows, tools) =
            read_as_the_table_says(include_str!("../../fixtures/bundler-names.tsv"));
        assert!(rows >= 90 && tools.len() >= 10, "{rows} rows, {tools:?}");
    }

    /// `fixtures/fingerprint-rules.tsv`: the rules' edges (digit-only hashes
    /// and dates), also read by the JavaScript port's tests.
    #[test]
    fn the_rules_edges_are_read_as_the_table_says() {
        let (rows, _) =
            read_as_the_table_says(include_str!("../../fixtures/fingerprint-rules.tsv"));
        assert!(rows >= 10, "{rows} rows");
    }

    /// Checks every row (`tool`, `path`, what it must read as) of a table of
    /// names; returns the rows and tools seen.
    fn read_as_the_table_says(table: &str) -> (usize, std::collections::BTreeSet<&str>) {
        let mut tools = std::collections::BTreeSet::new();
        let mut rows = 0;
        for line in table
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
        {
            let [tool, path, want] = line.split('\t').collect::<Vec<_>>()[..] else {
                panic!("bad row {line:?}");
            };
            let got = match (
                logical_name(path),
                is_hash_only(path),
                is_fingerprinted(path),
            ) {
                (Some(l), _, true) => l,
                (None, true, true) => "hash-only".into(),
                (None, false, true) => "folder".into(),
                (None, _, false) => "no".into(),
                (Some(_), _, false) => unreachable!(),
            };
            assert_eq!(got, want, "{tool}: {path}");
            tools.insert(tool.split(' ').next().unwrap());
            rows += 1;
        }
        (rows, tools)
    }

    /// Bundlers draw a new hash on every build, so a rule proven on one
    /// build's names proves little: here hashes are drawn across each
    /// bundler's whole alphabet (seeded, so the same every run), and every
    /// miss must be one of the kinds the rules give up on purpose.
    #[test]
    fn hashes_drawn_across_each_alphabet_are_recognised_but_for_the_stated_misses() {
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut draw = |alphabet: &[u8], len: usize| -> String {
            (0..len)
                .map(|_| alphabet[next(alphabet.len())] as char)
                .collect()
        };
        const HEX: &[u8] = b"0123456789abcdef";
        const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        const B32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        let n = 20_000;
        let mut misses = std::collections::BTreeMap::<&str, usize>::new();
        for _ in 0..n {
            // webpack `[name].[contenthash:8].js` and `[name]-[contenthash:8].js`.
            let h = draw(HEX, 8);
            for path in [format!("assets/vue-{h}.js"), format!("js/main.{h}.css")] {
                if logical_name(&path).is_none() {
                    let why = if reads_as_date(&h) {
                        "8 digits that read as a date"
                    } else if h.bytes().all(|b| b.is_ascii_alphabetic()) {
                        "8 hex letters and no digit"
                    } else {
                        panic!("{path}: an 8-hex-digit hash missed")
                    };
                    *misses.entry(why).or_default() += 1;
                }
            }
            // Vite and Rollup: base64url after `-`.
            let h = draw(B64, 8);
            let path = format!("assets/index-{h}.js");
            let capitalized_word = h.as_bytes()[0].is_ascii_uppercase()
                && h.as_bytes()[1..].iter().all(u8::is_ascii_lowercase);
            if logical_name(&path).is_none() && capitalized_word {
                *misses.entry("one capitalized word").or_default() += 1;
            } else if logical_name(&path).is_none() {
                let has = |f: fn(&u8) -> bool| h.bytes().any(|b| f(&b));
                assert!(
                    !(has(u8::is_ascii_uppercase)
                        && (has(u8::is_ascii_lowercase) || has(u8::is_ascii_digit))),
                    "{path}: a base64url hash with a capital beside a small letter or a digit missed"
                );
                *misses
                    .entry("base64url with no capital beside a small letter or a digit")
                    .or_default() += 1;
            }
            // esbuild and Angular: base32 capitals after `-`.
            let h = draw(B32, 8);
            assert!(
                logical_name(&format!("chunk-{h}.js")).is_some(),
                "chunk-{h}.js"
            );
        }
        // The misses are rare: a revalidation instead of a year's caching.
        let rate = |why| misses.get(why).copied().unwrap_or(0) as f64 / n as f64;
        assert!(rate("8 digits that read as a date") < 0.0005, "{misses:?}");
        assert!(rate("8 hex letters and no digit") < 0.002, "{misses:?}");
        assert!(rate("one capitalized word") < 0.002, "{misses:?}");
        assert!(
            rate("base64url with no capital beside a small letter or a digit") < 0.03,
            "{misses:?}"
        );
    }

    /// SvelteKit's `_app/immutable/entry/start.DgaHsjir.js`: a hash that
    /// reads as a camel-case word got no logical name, so the chunk joined
    /// the shared dictionary and pulled its folder up a level; the next
    /// release's dictionary no longer matched the one a visitor held, which
    /// then came whole (82% of a first visit). About one build in four
    /// draws such a hash for some chunk. In a framework's immutable folder
    /// the last dotted segment is a hash whatever its 8 characters read as:
    /// drawn here across the whole base64url alphabet, none is missed.
    #[test]
    fn in_an_immutable_folder_every_drawn_hash_after_a_dot_is_read_as_one() {
        assert_eq!(
            logical_name("_app/immutable/entry/start.DgaHsjir.js").as_deref(),
            Some("_app/immutable/entry/start.*.js")
        );
        assert_eq!(
            logical_name("_astro/hooks.module.JhoGcvsy.js").as_deref(),
            Some("_astro/hooks.module.*.js")
        );
        assert_eq!(
            logical_name("_astro/about.8a5uuwsx.css").as_deref(),
            Some("_astro/about.*.css")
        );
        // Elsewhere a word after a dot is still a name.
        assert_eq!(logical_name("js/start.DgaHsjir.js"), None);
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        for _ in 0..20_000 {
            let h: String = (0..8)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    B64[(seed % 64) as usize] as char
                })
                .collect();
            for (path, want) in [
                (
                    format!("_app/immutable/entry/start.{h}.js"),
                    "_app/immutable/entry/start.*.js",
                ),
                (
                    format!("_app/immutable/nodes/2.{h}.js"),
                    "_app/immutable/nodes/2.*.js",
                ),
                (
                    format!("_app/immutable/assets/0.{h}.css"),
                    "_app/immutable/assets/0.*.css",
                ),
                (
                    format!("_astro/preact.module.{h}.js"),
                    "_astro/preact.module.*.js",
                ),
                (format!("_nuxt/entry.{h}.css"), "_nuxt/entry.*.css"),
                (
                    format!("docs/_astro/Island.{h}.js"),
                    "docs/_astro/Island.*.js",
                ),
            ] {
                assert_eq!(logical_name(&path).as_deref(), Some(want), "{path}");
            }
        }
    }

    #[test]
    fn chunks_with_no_name_of_their_own_are_keyed_and_marked_by_their_folder() {
        assert_eq!(
            folder_pattern("_nuxt/C27JxjOI.js").as_deref(),
            Some("_nuxt/*.js")
        );
        assert_eq!(
            dictionary_key("_nuxt/C27JxjOI.js").as_deref(),
            Some("_nuxt/*.js")
        );
        assert_eq!(
            dictionary_key("_nuxt/entry.DU9Z1FXZ.css").as_deref(),
            Some("_nuxt/entry.*.css")
        );
        assert_eq!(dictionary_key("assets/app.js"), None);
        for (path, want) in [
            ("_nuxt/C27JxjOI.js", Some("_nuxt/*")),
            (
                "_app/immutable/chunks/x.js",
                Some("_app/immutable/chunks/*"),
            ),
            ("_nuxt/C27JxjOI.css", Some("_nuxt/*.css")),
            ("_nuxt/C27JxjOI.mjs", Some("_nuxt/*.mjs")),
            // At DIR's top, `*` alone would match every page too.
            ("0a1b2c3d4e5f6a7b8c9d.js", Some("*.js")),
        ] {
            assert_eq!(chunk_pattern(path).as_deref(), want, "{path}");
        }
        assert_eq!(
            pattern_use_as_dictionary("_nuxt/*", "_nuxt/C27JxjOI.js", "/app/").as_deref(),
            Some("match=\"/app/_nuxt/*\"")
        );
        assert_eq!(
            pattern_use_as_dictionary("_nuxt/*.css", "_nuxt/C27JxjOI.css", "/").as_deref(),
            Some("match=\"/_nuxt/*.css\", match-dest=(\"style\")")
        );
        assert_eq!(
            pattern_use_as_dictionary("a b/*", "a b/C27JxjOI.js", "/"),
            None
        );
        // What an earlier release may have marked: named or not.
        assert!(may_be_dictionary("_nuxt/C27JxjOI.js", 300));
        assert!(may_be_dictionary("assets/index-D8fKq1nN.js", 300));
        assert!(!may_be_dictionary("_nuxt/C27JxjOI.js", 255));
        assert!(!may_be_dictionary("_nuxt/C27JxjOI.png", 3000));
        assert!(!may_be_dictionary("assets/app.js", 3000));
    }

    #[test]
    fn the_code_dictionary_is_a_script_of_its_folder_and_its_pattern_covers_the_scripts() {
        let h = "0123456789abcdef0123";
        let d = shared_dictionary_path(SharedKind::Code, "_nuxt/", h);
        assert_eq!(d, "_nuxt/precompress-dictionary-0123456789abcdef.js");
        assert_eq!(shared_kind(&d), Some(SharedKind::Code));
        assert_eq!(
            shared_use_as_dictionary(&d, "/app/").as_deref(),
            Some("match=\"/app/_nuxt/*.js\"")
        );
        // Longer than the marked chunk's pattern: a browser prefers it.
        assert!(
            "match=\"/app/_nuxt/*.js\"".len()
                > pattern_use_as_dictionary("_nuxt/*", "_nuxt/C27JxjOI.js", "/app/")
                    .unwrap()
                    .len()
        );
        assert!(shared_serves(&d, "_nuxt/C27JxjOI.js"));
        assert!(!shared_serves(&d, "_nuxt/entry.DU9Z1FXZ.css"));
        assert!(!shared_serves(&d, &d));
        // One made before, as .txt: every URL of its folder.
        let old = "_nuxt/precompress-dictionary-0123456789abcdef.txt";
        assert_eq!(shared_kind(old), Some(SharedKind::Code));
        assert_eq!(
            shared_use_as_dictionary(old, "/").as_deref(),
            Some("match=\"/_nuxt/*\"")
        );
        assert!(shared_serves(old, "_nuxt/entry.DU9Z1FXZ.css"));
        // The documents dictionary: .txt at the top only.
        let doc = shared_dictionary_path(SharedKind::Documents, "", h);
        assert_eq!(doc, "precompress-documents-0123456789abcdef.txt");
        assert_eq!(
            shared_kind("precompress-documents-0123456789abcdef.js"),
            None
        );
        assert_eq!(
            shared_use_as_dictionary(&doc, "/").as_deref(),
            Some("match=\"/*\", match-dest=(\"document\" \"\")")
        );
    }

    #[test]
    fn hash_only_names_and_framework_folders_are_fingerprinted() {
        for yes in [
            "_app/immutable/chunks/CxId8T4r.js",
            "_nuxt/C27JxjOI.js",
            "_next/static/css/8e4c2f1a9b7d3e6c.css",
            "0a1b2c3d4e5f6a7b8c9d.js",
        ] {
            assert!(is_hash_only(yes), "{yes}");
            assert!(is_fingerprinted(yes), "{yes}");
        }
        for no in [
            "Settings.js",
            "FAVICON1.png",
            "deadbeef.js",
            "manifest.json",
            "12345678.js",
        ] {
            assert!(!is_hash_only(no), "{no}");
            assert!(!is_fingerprinted(no), "{no}");
        }
        // What a framework puts in its immutable folder is, whatever its name;
        // Nuxt's `builds/latest.json` is polled and is not.
        for yes in [
            "_app/immutable/chunks/scheduler.js",
            "_astro/client.js",
            "docs/_astro/client.js",
            "_nuxt/entry.js",
            "_next/static/abcDEF123/_buildManifest.js",
        ] {
            assert!(is_fingerprinted(yes), "{yes}");
        }
        for no in [
            "_nuxt/builds/latest.json",
            "_app/version.json",
            "my_astro/client.js",
        ] {
            assert!(!is_fingerprinted(no), "{no}");
        }
    }

    #[test]
    fn dictionaries_are_fingerprinted_assets_of_a_useful_type_and_size() {
        assert_eq!(
            use_as_dictionary("assets/index-D8fKq1nN.js", 50_000, "/").as_deref(),
            Some("match=\"/assets/index-*.js\"")
        );
        assert_eq!(
            use_as_dictionary("assets/index-BxYzAbCd.css", 5_000, "/").as_deref(),
            Some("match=\"/assets/index-*.css\", match-dest=(\"style\")")
        );
        assert_eq!(
            use_as_dictionary("assets/app.js", 50_000, "/"),
            None,
            "no hash"
        );
        assert_eq!(
            use_as_dictionary("assets/index-D8fKq1nN.js", 255, "/"),
            None
        );
        assert!(use_as_dictionary("assets/index-D8fKq1nN.js", 256, "/").is_some());
        assert_eq!(
            use_as_dictionary("img/logo-D8fKq1nN.png", 50_000, "/"),
            None
        );
        // URLPattern's special characters are never written into a pattern.
        assert_eq!(
            use_as_dictionary("a (1)/index-D8fKq1nN.js", 50_000, "/"),
            None
        );
        assert_eq!(
            use_as_dictionary("a:b/index-D8fKq1nN.js", 50_000, "/"),
            None
        );
        assert_eq!(use_as_dictionary("é/index-D8fKq1nN.js", 50_000, "/"), None);
        // Under a base path, the pattern is the URL the browser sees.
        assert_eq!(
            use_as_dictionary("assets/index-D8fKq1nN.js", 50_000, "/sub/").as_deref(),
            Some("match=\"/sub/assets/index-*.js\"")
        );
    }

    #[test]
    fn a_page_is_the_dictionary_of_its_own_urls_only() {
        let p = |path| page_use_as_dictionary(path, "/");
        assert_eq!(
            p("index.html"),
            "match=\"/{index.html}?\", match-dest=(\"document\")"
        );
        assert_eq!(
            p("docs/guide/index.html"),
            "match=\"/docs/guide/{index.html}?\", match-dest=(\"document\")"
        );
        assert_eq!(page_pattern("about.html"), "about{.html}?");
        assert_eq!(page_pattern("old/page.htm"), "old/page.htm");
        assert_eq!(
            page_use_as_dictionary("docs/index.html", "/app/"),
            "match=\"/app/docs/{index.html}?\", match-dest=(\"document\")"
        );
        // Pages only, large enough, named as they are: not a fingerprinted
        // page, not one whose path a pattern cannot hold, not the documents
        // dictionary, not a script.
        assert!(is_page_candidate("docs/index.html", 5_000));
        assert!(!is_page_candidate("docs/index.html", 100));
        assert!(!is_page_candidate("docs/a page.html", 5_000));
        assert!(!is_page_candidate("docs/(group)/index.html", 5_000));
        assert!(!is_page_candidate("_app/immutable/x.html", 5_000));
        assert!(!is_page_candidate("report-D8fKq1nN.html", 5_000));
        assert!(!is_page_candidate(
            "precompress-documents-0123456789abcdef.txt",
            5_000
        ));
        assert!(!is_page_candidate("assets/app.js", 5_000));
        assert!(!is_page_candidate("404.html", 5_000));
        assert!(is_page_candidate("docs/404.html", 5_000));
        // An earlier release's page may have been a dictionary, and it is
        // listed under its own path: no other page shares that key.
        assert!(may_be_dictionary("docs/index.html", 5_000));
        assert_eq!(release_key("docs/index.html"), "docs/index.html");
        assert_ne!(
            release_key("docs/index.html"),
            release_key("blog/index.html")
        );
    }

    #[test]
    fn available_dictionary_round_trips_and_refuses_anything_else() {
        let h = [7u8; 32];
        let v = available_dictionary(&h);
        assert_eq!(v, ":BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=:");
        assert_eq!(parse_available_dictionary(&v), Some(h));
        assert_eq!(parse_available_dictionary(&format!(" {v}\t")), Some(h));
        let long = format!(":{}:", "A".repeat(100_000));
        for bad in [
            "",
            "::",
            ":AAAA:",
            "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=",
            ":BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=",
            ":BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=:, :AAAA:",
            ":!wcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=:",
            ":BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=:",
            long.as_str(),
        ] {
            assert_eq!(parse_available_dictionary(bad), None, "{bad:?}");
        }
    }
}
