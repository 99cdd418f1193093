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

use crate::model::coding::DeltaCoding;

/// Extensions of assets that are marked as dictionaries: what a browser
/// fetches again, changed a little, after each release.
pub const DICTIONARY_TYPES: &[&str] = &["js", "mjs", "cjs", "css", "wasm", "json"];

/// Smaller assets are not marked: their brotli variant is under a kilobyte or
/// so, and the request headers a dictionary adds (about 100 bytes) and the
/// browser's storage of it would eat most of what a delta saves.
pub const DICTIONARY_MIN_SIZE: u64 = 2048;

/// The path with its content hash replaced by `*`, when its file name carries
/// one: `name.HASH.ext` with HASH 8+ hex digits (`hex_hash`), also before a
/// further suffix (`main.HASH.chunk.js`), and `name-HASH.ext` with HASH exactly
/// 8 characters of `[A-Za-z0-9_-]` that read as a hash (`base64url_hash`). Conservative
/// on purpose: a miss costs a revalidation or a delta, a false hit can pin a
/// stale file in caches for a year.
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
    if let Some(i) = (1..segments.len()).find(|&i| {
        let hash = segments[i];
        hash.len() >= 8 && hash.bytes().all(|b| b.is_ascii_hexdigit()) && hex_hash(hash)
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
                && hash.len() == 8
                && hash
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                && base64url_hash(hash);
            ok.then(|| format!("{}-*.{ext}", &stem[..i]))
        });
    }
    let logical = logical?;
    Some(match folder {
        Some(d) => format!("{d}/{logical}"),
        None => logical,
    })
}

/// Whether 8+ hex digits read as a content hash rather than a number: a
/// letter and a digit both (`3f2a9c1b`). All digits is a date or a version
/// (`stats.20241201.json`); a real hex hash is all digits one time in 43, and
/// missing it costs only a revalidation.
fn hex_hash(hash: &str) -> bool {
    hash.bytes().any(|b| b.is_ascii_digit()) && hash.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Whether 8 characters of `[A-Za-z0-9_-]` read as a content hash (Vite's and
/// Rollup's base64url, esbuild's base32) rather than a word with a number in
/// it. Lower-case letters and digits alone are a word unless they are hex:
/// crypto-js ships `pad-iso10126.js` and `pad-ansix923.js`, which are not
/// fingerprinted. A hash holds an upper-case letter beside a lower-case one or
/// a digit (`D8fKq1nN`, `5XQWBHJ2`), or `_`/`-` beside a digit (`a_b-12cd`; not
/// `min-size`), or
/// is hex (`hex_hash`). Real base64url hashes with none of these (about 1
/// in 60) are missed: a miss costs a revalidation and a delta, a false hit
/// serves a file that will change as `immutable` for a year.
fn base64url_hash(hash: &str) -> bool {
    let has = |f: fn(&u8) -> bool| hash.bytes().any(|b| f(&b));
    let (upper, lower, digit) = (
        has(u8::is_ascii_uppercase),
        has(u8::is_ascii_lowercase),
        has(u8::is_ascii_digit),
    );
    let symbol = has(|b| *b == b'_' || *b == b'-');
    let hex = hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    (upper && (lower || digit)) || (symbol && digit) || (hex && hex_hash(hash))
}

/// The key under which an asset is paired across releases: its logical name,
/// or its path when the name carries no hash.
pub fn pairing_key(path: &str) -> String {
    logical_name(path).unwrap_or_else(|| path.to_string())
}

/// Characters a path may hold and still be written into a URL pattern as is:
/// none of URLPattern's special characters (`: * ( ) { } ? + \`), nothing to
/// percent-encode, nothing to escape in a structured-field string.
fn pattern_safe(path: &str) -> bool {
    path.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_./~".contains(&b))
}

/// Whether the asset at `path` of `size` bytes is marked as a dictionary for
/// its next versions (and so gets deltas against its earlier ones).
pub fn is_candidate(path: &str, size: u64) -> bool {
    size >= DICTIONARY_MIN_SIZE
        && pattern_safe(path)
        && crate::model::content::extension(path)
            .is_some_and(|e| DICTIONARY_TYPES.contains(&e.as_str()))
        && logical_name(path).is_some()
}

/// The `Use-As-Dictionary` value for the asset at `path`, if it is a
/// candidate: `match="/assets/index-*.js"`, with `match-dest=("style")` for a
/// stylesheet (a script may run as a worker, whose destination differs). The
/// pattern is absolute: DIR is served at the origin's root.
pub fn use_as_dictionary(path: &str, size: u64) -> Option<String> {
    if !is_candidate(path, size) {
        return None;
    }
    let logical = logical_name(path)?;
    let mut v = format!("match=\"/{logical}\"");
    if crate::model::content::extension(path).as_deref() == Some("css") {
        v.push_str(", match-dest=(\"style\")");
    }
    Some(v)
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

/// Where the delta of the asset at `path` against the dictionary with SHA-256
/// `dict` is written: `path.HEX.dcb` (HEX: the 64 hex digits of the hash), so
/// a server can find it from the request's URL and `Available-Dictionary`.
pub fn delta_path(path: &str, dict: &[u8; 32], coding: DeltaCoding) -> String {
    format!("{path}.{}.{}", hex(dict), coding.token())
}

/// The asset a delta's path belongs to, if `path` has the form of
/// [`delta_path`].
pub fn delta_source(path: &str) -> Option<(&str, DeltaCoding)> {
    let (rest, token) = path.rsplit_once('.')?;
    let coding = DeltaCoding::parse(token)?;
    let (source, hash) = rest.rsplit_once('.')?;
    let is_hash = hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    (is_hash && !source.is_empty() && !source.ends_with('/')).then_some((source, coding))
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

    #[test]
    fn dictionaries_are_fingerprinted_assets_of_a_useful_type_and_size() {
        assert_eq!(
            use_as_dictionary("assets/index-D8fKq1nN.js", 50_000).as_deref(),
            Some("match=\"/assets/index-*.js\"")
        );
        assert_eq!(
            use_as_dictionary("assets/index-BxYzAbCd.css", 5_000).as_deref(),
            Some("match=\"/assets/index-*.css\", match-dest=(\"style\")")
        );
        assert_eq!(use_as_dictionary("assets/app.js", 50_000), None, "no hash");
        assert_eq!(use_as_dictionary("assets/index-D8fKq1nN.js", 2047), None);
        assert_eq!(use_as_dictionary("img/logo-D8fKq1nN.png", 50_000), None);
        // URLPattern's special characters are never written into a pattern.
        assert_eq!(use_as_dictionary("a (1)/index-D8fKq1nN.js", 50_000), None);
        assert_eq!(use_as_dictionary("a:b/index-D8fKq1nN.js", 50_000), None);
        assert_eq!(use_as_dictionary("é/index-D8fKq1nN.js", 50_000), None);
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

    #[test]
    fn delta_paths_name_the_asset_and_the_dictionary() {
        let h = [0xabu8; 32];
        let p = delta_path("assets/index-D8fKq1nN.js", &h, DeltaCoding::Dcz);
        assert_eq!(
            p,
            format!("assets/index-D8fKq1nN.js.{}.dcz", "ab".repeat(32))
        );
        assert_eq!(
            delta_source(&p),
            Some(("assets/index-D8fKq1nN.js", DeltaCoding::Dcz))
        );
        for no in [
            "a.js.dcb",
            "a.js.ABAB.dcb",
            &format!("{}.dcb", "ab".repeat(32)),
            "a.js.br",
        ] {
            assert_eq!(delta_source(no), None, "{no}");
        }
    }
}
