//! The list of a release's dictionaries that precompress publishes beside its
//! assets, `DIR/precompress-dictionaries.json`: every asset the release marks
//! with `Use-As-Dictionary` (what a returning visitor may hold as a
//! dictionary), with its SHA-256 and size. The next release's build reads it
//! from the live site (`--dictionary-from https://…`) and fetches exactly
//! those files, instead of needing the previous release on the build machine.
//!
//! It is public on purpose, unlike the manifest (which every server config
//! refuses): it names only URLs the pages already load. It is an asset like
//! any other (listed, compressed, revalidated: its name holds no hash), and
//! provably ours: its first field is [`MARKER`].

use serde::{Deserialize, Serialize};

/// Its name, at DIR's top (served at BASE + this).
pub const FILE_NAME: &str = "precompress-dictionaries.json";

/// The value of its `precompress` field, and so its version.
pub const MARKER: &str = "dictionaries/1";

/// The most bytes a list may have: about 40,000 entries.
pub const MAX_BYTES: u64 = 8 << 20;

/// One dictionary of the release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    /// Its path relative to DIR (its URL is BASE + path), `/` separators.
    pub path: String,
    /// Lower-case hex SHA-256 of its bytes.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
}

/// The list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// Always [`MARKER`].
    pub precompress: String,
    /// The dictionaries, in path order.
    pub files: Vec<Listed>,
}

impl Published {
    /// The list of `files` (any order), sorted by path.
    pub fn new(mut files: Vec<Listed>) -> Published {
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files.dedup_by(|a, b| a.path == b.path);
        Published {
            precompress: MARKER.into(),
            files,
        }
    }

    /// Its bytes: pretty JSON and a newline, the same for the same list.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = serde_json::to_vec_pretty(self).expect("plain data");
        b.push(b'\n');
        b
    }

    /// Reads a list, refusing what precompress did not write: another
    /// marker, a path that could leave DIR (`model::path::check_relative`),
    /// a hash that is not 64 hex digits, more than [`MAX_BYTES`].
    pub fn parse(bytes: &[u8]) -> Result<Published, String> {
        if bytes.len() as u64 > MAX_BYTES {
            return Err(format!("over {MAX_BYTES} bytes"));
        }
        let p: Published = serde_json::from_slice(bytes).map_err(|e| {
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(40)]).into_owned();
            format!("not a list of dictionaries ({e}; it starts {head:?})")
        })?;
        if p.precompress != MARKER {
            return Err(format!(
                "a list of another version ({:?}; this precompress reads {MARKER:?})",
                p.precompress
            ));
        }
        for f in &p.files {
            crate::model::path::check_relative(&f.path)
                .map_err(|e| format!("{:?}: not a path under the site ({e})", f.path))?;
            if crate::model::dictionary::parse_hex32(&f.sha256).is_none() {
                return Err(format!("{:?}: sha256 is not 64 hex digits", f.path));
            }
        }
        Ok(p)
    }

    /// Whether `bytes` are a list precompress wrote (so a run may replace or
    /// remove the file).
    pub fn is_ours(bytes: &[u8]) -> bool {
        Published::parse(bytes).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(path: &str) -> Listed {
        Listed {
            path: path.into(),
            sha256: "ab".repeat(32),
            size: 300,
        }
    }

    #[test]
    fn a_list_reads_back_as_written_and_the_same_files_give_the_same_bytes() {
        let a = Published::new(vec![listed("b/x-AAAA1111.js"), listed("a-BBBB2222.css")]);
        let b = Published::new(vec![listed("a-BBBB2222.css"), listed("b/x-AAAA1111.js")]);
        assert_eq!(a.to_bytes(), b.to_bytes());
        assert_eq!(Published::parse(&a.to_bytes()).unwrap(), a);
        assert!(Published::is_ours(&a.to_bytes()));
    }

    #[test]
    fn what_precompress_did_not_write_is_refused_with_the_reason() {
        let ok = Published::new(vec![listed("a.js")]);
        let mut other = ok.clone();
        other.precompress = "dictionaries/9".into();
        let mut escape = ok.clone();
        escape.files[0].path = "../etc/passwd".into();
        let mut absolute = ok.clone();
        absolute.files[0].path = "/etc/passwd".into();
        let mut hash = ok.clone();
        hash.files[0].sha256 = "xyz".into();
        for (bytes, why) in [
            (b"<html>parked</html>".to_vec(), "not a list"),
            (b"{}".to_vec(), "not a list"),
            (other.to_bytes(), "another version"),
            (escape.to_bytes(), "not a path under the site"),
            (absolute.to_bytes(), "not a path under the site"),
            (hash.to_bytes(), "64 hex digits"),
            (vec![b' '; MAX_BYTES as usize + 1], "over"),
        ] {
            let e = Published::parse(&bytes).unwrap_err();
            assert!(e.contains(why), "{e}");
            assert!(!Published::is_ours(&bytes));
        }
    }
}
