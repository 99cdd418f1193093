//! The rules a path must follow to name a file under DIR, shared by the
//! manifest (its keys and variant paths), the walk and the servers: no `.` or
//! `..` segment, no `/`, `\` or NUL inside a segment, no leading `/`; dot-files
//! are refused in requests (`.well-known` excepted). And the base path: the
//! URL a manifest key is served at is the base followed by the key.

use std::fmt;

/// Why a request path was refused. Every case answers 400, except `Hidden` (404).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathError {
    /// Does not start with `/`.
    NotAbsolute,
    /// A `%` not followed by two hex digits.
    BadPercentEncoding,
    /// Decodes to bytes that are not UTF-8.
    NotUtf8,
    /// A segment that decodes to `.` or `..`.
    DotSegment,
    /// `/` or `\` inside a segment (`%2f`, `%5c`, a raw backslash).
    EncodedSeparator,
    /// A NUL byte (`%00`).
    Nul,
    /// A dot-file or dot-folder other than `.well-known`.
    Hidden,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PathError::NotAbsolute => "path does not start with /",
            PathError::BadPercentEncoding => "bad percent-encoding",
            PathError::NotUtf8 => "path is not UTF-8",
            PathError::DotSegment => "dot segment",
            PathError::EncodedSeparator => "slash or backslash inside a segment",
            PathError::Nul => "NUL byte",
            PathError::Hidden => "dot-file",
        })
    }
}

impl std::error::Error for PathError {}

/// Whether a file or folder named `name` is hidden from the site: a
/// dot-file or dot-folder (`.env`, `.git`), `.well-known` excepted. The one
/// rule the walk, the request paths, the object listing and the generated
/// server configurations follow (apache-map and the JavaScript servers
/// spell it in their own languages, held to it by the shared tables).
pub fn is_hidden_name(name: &str) -> bool {
    name.starts_with('.') && name != ".well-known"
}

/// One decoded segment of a request path or manifest key: refused if it is
/// `.` or `..`, holds NUL, `/` or `\`, or is a dot-file (`.well-known` excepted).
pub fn check_segment(seg: &str) -> Result<(), PathError> {
    if seg == "." || seg == ".." {
        return Err(PathError::DotSegment);
    }
    if seg.contains('\0') {
        return Err(PathError::Nul);
    }
    if seg.contains(['/', '\\']) {
        return Err(PathError::EncodedSeparator);
    }
    if is_hidden_name(seg) {
        return Err(PathError::Hidden);
    }
    Ok(())
}

/// The base path DIR is served at when none is given: the origin's root.
pub const ROOT_BASE: &str = "/";

/// Checks and normalizes a base path (`--base`, Vite's `base`): `/`-anchored,
/// ending in `/` (`/sub` is `/sub/`), segments of characters a URL pattern
/// and a header take as they are (letters, digits, `-_.~`), no `.` or `..`.
/// A full URL gives its path (`https://cdn.example.com/app/` is `/app/`: a
/// dictionary's `match` is a path on the origin that sent it).
pub fn normalize_base(given: &str) -> Result<String, String> {
    let path = match given.split_once("://") {
        Some((scheme, rest)) if scheme == "http" || scheme == "https" => {
            rest.find('/').map_or("/", |i| &rest[i..])
        }
        _ => given,
    };
    if !path.starts_with('/') || path.starts_with("//") {
        return Err(format!(
            "base {given:?} is not a path from the origin's root (it must start with one /, as /app/)"
        ));
    }
    let inner = path.trim_matches('/');
    if inner.is_empty() {
        return Ok(ROOT_BASE.into());
    }
    for seg in inner.split('/') {
        let ok = !seg.is_empty()
            && seg != "."
            && seg != ".."
            && seg
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b));
        if !ok {
            return Err(format!(
                "base {given:?}: segment {seg:?} is not letters, digits and -_.~"
            ));
        }
    }
    Ok(format!("/{inner}/"))
}

/// The URL path the asset at `key` is served at under `base` (normalized).
pub fn url_of(base: &str, key: &str) -> String {
    format!("{base}{key}")
}

/// The manifest key a URL path names under `base`, if it lies under it
/// (the path still raw: the caller decodes and checks it).
pub fn strip_base<'a>(base: &str, path: &'a str) -> Option<&'a str> {
    if base == ROOT_BASE {
        return Some(path);
    }
    // `/app/x` is `/x`; `/app` itself is the base's root.
    let rest = path.strip_prefix(&base[..base.len() - 1])?;
    (rest.is_empty() || rest.starts_with('/')).then_some(if rest.is_empty() { "/" } else { rest })
}

/// Checks a relative path from a manifest (`assets/app.js.br`): the same rules as
/// a request path, except that dot-files are allowed and empty segments are not.
pub fn check_relative(rel: &str) -> Result<(), PathError> {
    if rel.is_empty() || rel.starts_with('/') {
        return Err(PathError::NotAbsolute);
    }
    for seg in rel.split('/') {
        if seg.is_empty() {
            return Err(PathError::DotSegment);
        }
        match check_segment(seg) {
            Ok(()) | Err(PathError::Hidden) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_names_are_hidden_but_well_known() {
        for hidden in [".env", ".git", ".well-known.bak", ".", ".."] {
            assert!(is_hidden_name(hidden), "{hidden}");
        }
        for shown in [".well-known", "env", "a.env", "well-known"] {
            assert!(!is_hidden_name(shown), "{shown}");
        }
    }

    #[test]
    fn base_paths_are_normalized_or_refused() {
        for (given, want) in [
            ("/", "/"),
            ("/app", "/app/"),
            ("/app/", "/app/"),
            ("/a/b-c_d.e~f/", "/a/b-c_d.e~f/"),
            ("https://cdn.example.com/app/", "/app/"),
            ("https://cdn.example.com", "/"),
        ] {
            assert_eq!(normalize_base(given).as_deref(), Ok(want), "{given}");
        }
        for bad in [
            "app/", "./", "", "//cdn/", "/a//b/", "/a/../b/", "/a b/", "/a*/", "/a?x", "/%61/",
        ] {
            assert!(normalize_base(bad).is_err(), "{bad:?}");
        }
        assert_eq!(url_of("/app/", "assets/a.js"), "/app/assets/a.js");
        assert_eq!(
            strip_base("/app/", "/app/assets/a.js"),
            Some("/assets/a.js")
        );
        assert_eq!(strip_base("/app/", "/app"), Some("/"));
        assert_eq!(strip_base("/app/", "/application/a.js"), None);
        assert_eq!(strip_base("/app/", "/a.js"), None);
        assert_eq!(strip_base("/", "/a.js"), Some("/a.js"));
    }
}
