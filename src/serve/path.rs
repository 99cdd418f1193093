//! Turning a request path into a file under the served folder, and nothing else.
//!
//! Two gates, because either alone has holes. The first works on the URL: each
//! `/`-separated segment is percent-decoded on its own, and a segment that decodes
//! to `.`, `..`, or holds `/`, `\` or NUL is refused, so `..`, `%2e%2e`, `..%2f`
//! and `%5c` never reach the file system. Invalid UTF-8 is refused too (overlong
//! `%c0%ae` is not a dot, it is not a path). Segments are joined one at a time, so
//! none can be an absolute path. The second works on the file system: the joined
//! path is canonicalized (symlinks resolved) and must still lie under the
//! canonical root, so a symlink pointing outside serves nothing.
//!
//! Dot-files (`.env`, `.git/…`, and the temporary dot-names precompress writes
//! before renaming) are never served; `.well-known` is the one exception.

use std::path::{Path, PathBuf};

use crate::model::path::check_segment;
pub use crate::model::path::{check_relative, PathError};

/// A checked request path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestPath {
    /// Decoded segments joined with `/`, no leading slash: the manifest key
    /// (empty for the root).
    pub key: String,
    /// The URL ended with `/` (a folder was asked for).
    pub trailing_slash: bool,
}

/// Decodes and checks the path part of a request target (no query).
pub fn parse_request_path(raw: &str) -> Result<RequestPath, PathError> {
    let rest = raw.strip_prefix('/').ok_or(PathError::NotAbsolute)?;
    let mut segments = Vec::new();
    for seg in rest.split('/') {
        let bytes = percent_decode(seg)?;
        let seg = String::from_utf8(bytes).map_err(|_| PathError::NotUtf8)?;
        check_segment(&seg)?;
        // Empty segments (`//`) are dropped, as nginx merges slashes.
        if !seg.is_empty() {
            segments.push(seg);
        }
    }
    Ok(RequestPath {
        key: segments.join("/"),
        trailing_slash: raw.ends_with('/'),
    })
}

fn percent_decode(s: &str) -> Result<Vec<u8>, PathError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            match (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            ) {
                (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                _ => return Err(PathError::BadPercentEncoding),
            }
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// The file for `key` (checked with [`parse_request_path`] or [`check_relative`])
/// under `root`, which must already be canonical: the canonical path, or `None`
/// when it does not exist or resolves outside `root` (a symlink pointing out).
pub fn resolve(root: &Path, key: &str) -> Option<PathBuf> {
    let mut p = root.to_path_buf();
    for seg in key.split('/').filter(|s| !s.is_empty()) {
        p.push(seg);
    }
    let canon = std::fs::canonicalize(&p).ok()?;
    canon.starts_with(root).then_some(canon)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fixtures/request-paths.json`, also read by `node --test` (negotiate.js
    /// and the CloudFront function): paths that must never name a file
    /// outside the root, and how the others decode. The URL gate stops most;
    /// `resolve` (tested in `tests/serve_http.rs` with symlinks and a real
    /// server) stops the rest.
    #[test]
    fn request_paths_table() {
        use PathError::*;
        let t = crate::serve::tables::request_paths();
        let cases = t["cases"].as_array().unwrap();
        for c in cases {
            let raw = c["path"].as_str().unwrap();
            let got = parse_request_path(raw);
            match c["error"].as_str() {
                None => {
                    let want = RequestPath {
                        key: c["key"].as_str().unwrap().to_string(),
                        trailing_slash: c["trailing_slash"].as_bool().unwrap(),
                    };
                    assert_eq!(got, Ok(want), "row {c}");
                }
                Some(e) => {
                    let want = match e {
                        "not-absolute" => NotAbsolute,
                        "bad-percent-encoding" => BadPercentEncoding,
                        "not-utf8" => NotUtf8,
                        "dot-segment" => DotSegment,
                        "encoded-separator" => EncodedSeparator,
                        "nul" => Nul,
                        "hidden" => Hidden,
                        _ => panic!("row {c}: no such error"),
                    };
                    assert_eq!(got, Err(want), "row {c}");
                }
            }
        }
        let refused = cases.iter().filter(|c| c["error"].is_string()).count();
        assert!(refused >= 20, "{refused} refused paths");
    }

    #[test]
    fn absolute_paths_stay_under_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::write(root.join("etc"), "inside").unwrap();
        // `//etc` is `etc` under the root, never `/etc`.
        let p = parse_request_path("//etc").unwrap();
        assert_eq!(resolve(&root, &p.key), Some(root.join("etc")));
        assert_eq!(resolve(&root, "missing"), None);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_root_resolve_to_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("root");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(base.join("secret"), "secret").unwrap();
        std::fs::write(root.join("ok.txt"), "ok").unwrap();
        std::os::unix::fs::symlink(base.join("secret"), root.join("out")).unwrap();
        std::os::unix::fs::symlink(&base, root.join("up")).unwrap();
        std::os::unix::fs::symlink(root.join("ok.txt"), root.join("in")).unwrap();
        assert_eq!(resolve(&root, "out"), None);
        assert_eq!(resolve(&root, "up/secret"), None);
        assert_eq!(resolve(&root, "in"), Some(root.join("ok.txt")));
    }

    #[test]
    fn manifest_paths_are_checked() {
        assert!(check_relative("assets/app.js.br").is_ok());
        assert!(check_relative(".well-known/a").is_ok());
        assert!(check_relative("a/.hidden").is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a//b",
            "a\\b",
            "a\0b",
            "./a",
        ] {
            assert!(check_relative(bad).is_err(), "{bad:?}");
        }
    }
}
