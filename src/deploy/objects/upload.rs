//! The upload list of `precompress objects` in its formats: JSON lines and
//! TSV for a script of one's own, and POSIX shell scripts of `aws s3 cp` or
//! `rclone copyto` lines that store each object with its headers.

use std::fmt::Write as _;

use super::Object;

/// One JSON object per line.
pub fn json_lines(objects: &[Object]) -> String {
    let mut out = String::new();
    for o in objects {
        out.push_str(&serde_json::to_string(o).expect("plain data"));
        out.push('\n');
    }
    out
}

/// The columns of [`tsv`].
pub const TSV_COLUMNS: &[&str] = &[
    "key",
    "file",
    "size",
    "content_encoding",
    "content_type",
    "cache_control",
    "etag",
    "vary",
    "use_as_dictionary",
    "link",
    "status",
];

/// A header line of [`TSV_COLUMNS`], then one line per object; an absent
/// value is empty, and `\`, tab, CR and LF in a value are written `\\`, `\t`,
/// `\r`, `\n`.
pub fn tsv(objects: &[Object]) -> String {
    let mut out = TSV_COLUMNS.join("\t");
    out.push('\n');
    for o in objects {
        let size = o.size.to_string();
        let status = o.status.to_string();
        let fields = [
            o.key.as_str(),
            &o.file,
            &size,
            o.content_encoding.unwrap_or(""),
            &o.content_type,
            o.cache_control,
            o.etag.as_deref().unwrap_or(""),
            o.vary.unwrap_or(""),
            o.use_as_dictionary.as_deref().unwrap_or(""),
            o.link.as_deref().unwrap_or(""),
            &status,
        ];
        let escaped: Vec<String> = fields.iter().map(|f| tsv_escape(f)).collect();
        out.push_str(&escaped.join("\t"));
        out.push('\n');
    }
    out
}

fn tsv_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str(r"\\"),
            '\t' => o.push_str(r"\t"),
            '\n' => o.push_str(r"\n"),
            '\r' => o.push_str(r"\r"),
            c => o.push(c),
        }
    }
    o
}

/// `dir` joined with an object's file, as the upload commands name it.
fn local_path(dir: &str, file: &str) -> String {
    let d = dir.trim_end_matches('/');
    if d.is_empty() {
        format!("/{file}")
    } else {
        format!("{d}/{file}")
    }
}

/// A POSIX shell script of `aws s3 cp` lines, one per object, run with
/// `BUCKET` set; `dir` is DIR as the script's working directory reaches it.
pub fn aws(objects: &[Object], dir: &str) -> String {
    let mut out = script_head(
        "aws",
        "BUCKET=my-bucket sh upload.sh",
        "BUCKET",
        "the bucket name",
    );
    for o in objects {
        let _ = write!(
            out,
            "aws s3 cp {} s3://\"$BUCKET\"/{} --content-type {}",
            sh_quote(&local_path(dir, &o.file)),
            sh_quote(&o.key),
            sh_quote(&o.content_type)
        );
        if let Some(e) = o.content_encoding {
            let _ = write!(out, " --content-encoding {}", sh_quote(e));
        }
        let _ = write!(out, " --cache-control {}", sh_quote(o.cache_control));
        if !o.metadata.is_empty() {
            // JSON, not KEY=VALUE: the CLI's shorthand would split the values at
            // commas and strip the ETag's quotes.
            let json = serde_json::to_string(&o.metadata).expect("plain data");
            let _ = write!(out, " --metadata {}", sh_quote(&json));
        }
        out.push('\n');
    }
    out
}

/// A POSIX shell script of `rclone copyto` lines, one per object, run with
/// `REMOTE` set to an rclone remote and bucket of an S3 API (S3, R2).
pub fn rclone(objects: &[Object], dir: &str) -> String {
    let mut out = script_head(
        "rclone",
        "REMOTE=s3:my-bucket sh upload.sh",
        "REMOTE",
        "the rclone remote and bucket, e.g. s3:my-bucket",
    );
    for o in objects {
        let _ = write!(
            out,
            "rclone copyto {} \"$REMOTE\"/{}",
            sh_quote(&local_path(dir, &o.file)),
            sh_quote(&o.key)
        );
        let mut header = |name: &str, value: &str| {
            let _ = write!(
                out,
                " --header-upload {}",
                sh_quote(&format!("{name}: {value}"))
            );
        };
        header("Content-Type", &o.content_type);
        if let Some(e) = o.content_encoding {
            header("Content-Encoding", e);
        }
        header("Cache-Control", o.cache_control);
        for (name, value) in &o.metadata {
            header(&format!("X-Amz-Meta-{}", title_case(name)), value);
        }
        out.push('\n');
    }
    out
}

/// `precompress-use-as-dictionary` as `Precompress-Use-As-Dictionary`.
fn title_case(name: &str) -> String {
    name.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next().map_or(String::new(), |f| {
                f.to_ascii_uppercase().to_string() + c.as_str()
            })
        })
        .collect::<Vec<_>>()
        .join("-")
}

fn script_head(tool: &str, run: &str, var: &str, what: &str) -> String {
    format!(
        "#!/bin/sh\n\
         # Uploads a precompressed folder, one object per file with the headers precompress\n\
         # serve would send (precompress {}, `precompress objects DIR --format {tool}`).\n\
         # Run: {run}. Pages come last, so none names a file not uploaded yet.\n\
         set -eu\n\
         : \"${{{var}:?set {var} to {what}}}\"\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// `s` as one POSIX shell word: as it is when it holds only characters no
/// shell treats specially, else single-quoted (`'` written `'\''`).
pub fn sh_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:=@%+,-".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("assets/app-1.js.br"), "assets/app-1.js.br");
        assert_eq!(sh_quote("it's $HOME `x`"), r"'it'\''s $HOME `x`'");
        assert_eq!(sh_quote(""), "''");
        assert_eq!(
            sh_quote("text/html; charset=utf-8"),
            "'text/html; charset=utf-8'"
        );
        assert_eq!(tsv_escape("a\tb\nc\\d"), r"a\tb\nc\\d");
        assert_eq!(
            title_case("precompress-use-as-dictionary"),
            "Precompress-Use-As-Dictionary"
        );
        assert_eq!(local_path("dist/", "a b.js"), "dist/a b.js");
    }
}
