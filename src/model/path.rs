//! The rules a path must follow to name a file under DIR, shared by the
//! manifest (its keys and variant paths), the walk and the servers: no `.` or
//! `..` segment, no `/`, `\` or NUL inside a segment, no leading `/`; dot-files
//! are refused in requests (`.well-known` excepted).

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
    if seg.starts_with('.') && seg != ".well-known" {
        return Err(PathError::Hidden);
    }
    Ok(())
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
