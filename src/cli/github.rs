//! GitHub Actions integration, turned on by `--github` (the Action passes it):
//! a markdown job summary appended to `$GITHUB_STEP_SUMMARY`, step outputs
//! appended to `$GITHUB_OUTPUT`, and `::error file=…::` workflow commands on
//! stdout for every per-file error and budget overrun, so they show as
//! annotations on the pull request.
//!
//! It is a flag rather than automatic under `GITHUB_ACTIONS=true` because a
//! build script may call precompress several times in one step, and each call
//! appending a summary nobody asked for would be noise. Everything here is in
//! Rust, not in the Action's shell, so it behaves the same on Linux, macOS and
//! Windows runners and is tested without GitHub.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::cli::budget::{AssetSize, Violation};
use precompressor::encode::Codec;
use precompressor::report::{human, CodecStats, Report};

/// How many of the largest assets the summary lists.
pub const LARGEST: usize = 10;

/// Escapes a workflow command's message (GitHub's `escapeData`).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value (GitHub's `escapeProperty`).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// `::error file=<file>,title=<title>::<message>`.
pub fn annotation(file: Option<&str>, title: &str, message: &str) -> String {
    let mut props = Vec::new();
    if let Some(f) = file {
        props.push(format!("file={}", escape_property(f)));
    }
    props.push(format!("title={}", escape_property(title)));
    format!("::error {}::{}", props.join(","), escape_data(message))
}

/// `::error title=precompress::<message>` for a run that could not happen at
/// all (DIR missing, a bad config file), so it still shows on the pull request.
pub fn fatal(message: &str) -> String {
    annotation(None, "precompress", message) + "\n"
}

/// `::warning title=precompress::<message>`.
pub fn warning(message: &str) -> String {
    format!("::warning title=precompress::{}\n", escape_data(message))
}

/// A path as an annotation wants it: relative to the workspace when under it,
/// with `/` separators.
pub fn annotation_path(path: &Path, workspace: Option<&Path>) -> String {
    let rel = workspace
        .and_then(|w| path.strip_prefix(w).ok())
        .unwrap_or(path);
    rel.to_string_lossy().replace('\\', "/")
}

/// The annotations for a run: one per per-file error and per budget overrun.
/// `dir` is DIR as given, to locate assets named relative to it.
pub fn annotations(
    report: &Report,
    violations: &[Violation],
    dir: &Path,
    workspace: Option<&Path>,
) -> String {
    let mut out = String::new();
    for e in &report.errors {
        let file = e
            .path
            .as_deref()
            .map(|p| annotation_path(Path::new(p), workspace));
        let _ = writeln!(
            out,
            "{}",
            annotation(file.as_deref(), "precompress", &e.message)
        );
    }
    for v in violations {
        let file = annotation_path(&dir.join(&v.path), workspace);
        let _ = writeln!(
            out,
            "{}",
            annotation(Some(&file), "precompress: over budget", &v.to_string())
        );
    }
    out
}

/// The step outputs, in a stable order. Every codec gets its pair of byte
/// counts, zero when it was not asked for, so a workflow can always read them.
pub fn outputs(report: &Report, violations: &[Violation]) -> Vec<(String, String)> {
    let mut out = vec![
        ("files".to_string(), report.files.to_string()),
        ("compressed".to_string(), report.compressed.to_string()),
        (
            "variants".to_string(),
            report
                .codecs
                .values()
                .map(|c| c.files)
                .sum::<u64>()
                .to_string(),
        ),
        ("bytes".to_string(), report.bytes.to_string()),
    ];
    for c in Codec::ALL {
        let s = report.codecs.get(c.token()).cloned().unwrap_or_default();
        out.push((
            format!("bytes-before-{}", c.token()),
            s.bytes_before.to_string(),
        ));
        out.push((
            format!("bytes-after-{}", c.token()),
            s.bytes_after.to_string(),
        ));
    }
    out.push((
        "codecs".to_string(),
        serde_json::to_string(&report.codecs).expect("plain data"),
    ));
    out.push(("errors".to_string(), report.errors.len().to_string()));
    out.push(("over-budget".to_string(), violations.len().to_string()));
    out.push((
        "manifest".to_string(),
        report.manifest.to_string_lossy().into_owned(),
    ));
    out
}

/// `key=value` lines for `$GITHUB_OUTPUT`; a value with a line break uses the
/// `key<<DELIMITER` form.
pub fn format_outputs(pairs: &[(String, String)]) -> String {
    let mut s = String::new();
    for (k, v) in pairs {
        if v.contains('\n') || v.contains('\r') {
            let mut delim = "precompress_EOF".to_string();
            while v.contains(&delim) {
                delim.push('_');
            }
            let _ = write!(s, "{k}<<{delim}\n{v}\n{delim}\n");
        } else {
            let _ = writeln!(s, "{k}={v}");
        }
    }
    s
}

/// Text for a markdown table cell as inline code (pipes escaped, backticks fenced).
pub fn md_code(s: &str) -> String {
    let s = s.replace('|', "\\|");
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

fn saving(before: u64, after: u64) -> String {
    if before == 0 {
        "–".to_string()
    } else {
        format!("{:.1}%", 100.0 * (1.0 - after as f64 / before as f64))
    }
}

/// The per-codec table, plus a row for what a client that accepts every
/// coding downloads (the best variant of each asset).
pub fn codec_table(
    codecs: &std::collections::BTreeMap<String, CodecStats>,
    assets: &[AssetSize],
) -> String {
    let mut s = String::from(
        "| coding | files | before | after | saving |\n| --- | ---: | ---: | ---: | ---: |\n",
    );
    // Codec::ALL order (br, zstd, gzip), not alphabetical.
    for c in Codec::ALL {
        if let Some(st) = codecs.get(c.token()) {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                c.token(),
                st.files,
                human(st.bytes_before),
                human(st.bytes_after),
                saving(st.bytes_before, st.bytes_after)
            );
        }
    }
    let best: Vec<&AssetSize> = assets.iter().filter(|a| a.best.is_some()).collect();
    let before: u64 = best.iter().map(|a| a.size).sum();
    let after: u64 = best.iter().map(|a| a.served()).sum();
    let _ = writeln!(
        s,
        "| **best of each** | {} | {} | {} | {} |",
        best.len(),
        human(before),
        human(after),
        saving(before, after)
    );
    s
}

/// The `n` largest assets (by source size, then path) with their best variant.
pub fn largest_table(assets: &[AssetSize], n: usize) -> String {
    let mut sorted: Vec<&AssetSize> = assets.iter().collect();
    sorted.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.path.cmp(&b.path)));
    let mut s =
        String::from("| asset | size | best variant | saving |\n| --- | ---: | ---: | ---: |\n");
    for a in sorted.into_iter().take(n) {
        let (best, save) = match &a.best {
            Some((coding, size)) => (format!("{coding} {}", human(*size)), saving(a.size, *size)),
            None => ("none".to_string(), "–".to_string()),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {best} | {save} |",
            md_code(&a.path),
            human(a.size)
        );
    }
    s
}

fn reason_meaning(reason: &str) -> &'static str {
    precompressor::model::skip::reason_in_words(reason)
}

/// The whole job summary. `title` names the folder, as the workflow gave it.
pub fn render_summary(
    title: &str,
    report: &Report,
    assets: &[AssetSize],
    violations: &[Violation],
    budgets: usize,
    dry_run: bool,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### precompress: {}\n", md_code(title));
    let _ = writeln!(
        s,
        "{} assets ({}), {} compressed, {} error{}, wall time {:.1} s on {} threads.{}\n",
        report.files,
        human(report.bytes),
        report.compressed,
        report.errors.len(),
        if report.errors.len() == 1 { "" } else { "s" },
        report.wall_ms as f64 / 1000.0,
        report.threads,
        if dry_run {
            " **Dry run**: nothing was written."
        } else {
            ""
        }
    );
    s.push_str(&codec_table(&report.codecs, assets));
    if !assets.is_empty() {
        let _ = writeln!(
            s,
            "\n#### The {} largest assets\n",
            LARGEST.min(assets.len())
        );
        s.push_str(&largest_table(assets, LARGEST));
    }
    if !report.skipped.is_empty() || !report.passed.is_empty() {
        s.push_str(
            "\n#### Skipped (file × coding)\n\n| reason | count | why |\n| --- | ---: | --- |\n",
        );
        for (r, n) in &report.skipped {
            let _ = writeln!(s, "| {r} | {n} | {} |", reason_meaning(r));
        }
        for (r, n) in &report.passed {
            let _ = writeln!(s, "| {r} | {n} | passed over by the walk |");
        }
    }
    if budgets > 0 {
        s.push_str("\n#### Budgets\n\n");
        if violations.is_empty() {
            let _ = match budgets {
                1 => writeln!(s, "The budget is met."),
                n => writeln!(s, "All {n} budgets are met."),
            };
        } else {
            s.push_str("| asset | downloaded | budget | over by |\n| --- | ---: | --- | ---: |\n");
            for v in violations {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} ≤ {} | {} |",
                    md_code(&v.path),
                    v.served,
                    md_code(&v.glob),
                    v.written,
                    human(v.excess())
                );
            }
        }
    }
    if !report.errors.is_empty() {
        s.push_str("\n#### Errors\n\n");
        for e in &report.errors {
            let _ = writeln!(s, "- {}", e.message.replace('\n', " "));
        }
    }
    s
}

/// `precompress report --github`'s part of the job summary: the page's main
/// chart as a table (a job summary shows no SVG), and where the page is.
pub fn report_summary(f: &precompressor::view::figures::Figures, out: &Path) -> String {
    let mut s = format!("### precompress report: {}\n\n", md_code(&f.dir));
    if let Some(h) = &f.headline {
        let _ = write!(
            s,
            "**A first visit of {} downloads {}** (as gzip: {}; uncompressed: {})",
            md_code(&h.page),
            human(h.first),
            human(h.gzip),
            human(h.identity)
        );
        match (&h.against, h.returning) {
            (Some(e), Some(back)) => {
                let _ = write!(
                    s,
                    "; **back from {e}: {}**, {:.1}% of a first visit.\n\n",
                    human(back),
                    100.0 * back as f64 / h.first.max(1) as f64
                );
            }
            _ => s.push_str(".\n\n"),
        }
    }
    let back = f.earlier.first();
    s.push_str("| page | first visit (best coding) | dictionaries at idle |");
    if let Some(e) = back {
        let _ = write!(s, " back from {e}, with deltas | without deltas |");
    }
    s.push_str("\n| --- | ---: | ---: |");
    if back.is_some() {
        s.push_str(" ---: | ---: |");
    }
    s.push('\n');
    let site = std::iter::once(("every asset, once".to_string(), &f.site));
    let pages = f.pages.iter().map(|p| (md_code(&p.page), &p.visit));
    for (name, v) in pages.chain(site) {
        let _ = write!(
            s,
            "| {name} | {} | {} |",
            human(v.first["best"]),
            human(v.idle)
        );
        if let Some(r) = v.returning.first() {
            let _ = write!(
                s,
                " {} | {} |",
                human(r.with_deltas),
                human(r.without_deltas)
            );
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "\nThe page with the charts (per coding, the deltas over the last releases, the biggest assets, what was skipped): {} (upload it with actions/upload-artifact to keep it).",
        md_code(&out.display().to_string())
    );
    s
}

/// Where `--github` writes, from the runner's environment.
#[derive(Debug, Clone, Default)]
pub struct Runner {
    /// `$GITHUB_STEP_SUMMARY`.
    pub step_summary: Option<PathBuf>,
    /// `$GITHUB_OUTPUT`.
    pub output: Option<PathBuf>,
    /// `$GITHUB_WORKSPACE`, to make annotation paths relative.
    pub workspace: Option<PathBuf>,
}

impl Runner {
    /// Reads the variables; unset or empty ones are `None`.
    pub fn from_env() -> Runner {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Runner {
            step_summary: var("GITHUB_STEP_SUMMARY"),
            output: var("GITHUB_OUTPUT"),
            workspace: var("GITHUB_WORKSPACE"),
        }
    }
}

/// Appends `text` to the file at `path` (the runner's files are shared by the
/// steps of a job: never truncated).
pub fn append(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    f.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use crate::cli::budget::test_asset as asset;

    #[test]
    fn workflow_commands_are_escaped() {
        assert_eq!(escape_data("50%\nnext\r"), "50%25%0Anext%0D");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
        assert_eq!(
            annotation(Some("dist/a,b:c.js"), "precompress", "line1\nline2"),
            "::error file=dist/a%2Cb%3Ac.js,title=precompress::line1%0Aline2"
        );
        assert_eq!(annotation(None, "t", "m"), "::error title=t::m");
        assert_eq!(fatal("a: b\n"), "::error title=precompress::a: b%0A\n");
        assert_eq!(warning("50%"), "::warning title=precompress::50%25\n");
    }

    #[test]
    fn annotation_paths_are_relative_to_the_workspace() {
        let ws = Path::new("/home/runner/work/app");
        assert_eq!(
            annotation_path(Path::new("/home/runner/work/app/dist/a.js"), Some(ws)),
            "dist/a.js"
        );
        assert_eq!(
            annotation_path(Path::new("/elsewhere/a.js"), Some(ws)),
            "/elsewhere/a.js"
        );
        assert_eq!(annotation_path(Path::new("dist/a.js"), None), "dist/a.js");
    }

    #[test]
    fn outputs_use_the_multiline_form_only_when_needed() {
        let pairs = vec![
            ("files".to_string(), "12".to_string()),
            (
                "manifest".to_string(),
                "odd\nname precompress_EOF".to_string(),
            ),
        ];
        assert_eq!(
            format_outputs(&pairs),
            "files=12\nmanifest<<precompress_EOF_\nodd\nname precompress_EOF\nprecompress_EOF_\n"
        );
    }

    #[test]
    fn tables_list_codecs_in_order_and_the_largest_assets_first() {
        let codecs = BTreeMap::from([
            (
                "br".to_string(),
                CodecStats {
                    files: 2,
                    bytes_before: 4000,
                    bytes_after: 1000,
                },
            ),
            (
                "gzip".to_string(),
                CodecStats {
                    files: 2,
                    bytes_before: 4000,
                    bytes_after: 1500,
                },
            ),
        ]);
        let assets = [
            asset("a.js", 3000, Some(("br", 700))),
            asset("b|c.css", 1000, Some(("br", 300))),
            asset("img.png", 5000, None),
        ];
        let t = codec_table(&codecs, &assets);
        let rows: Vec<&str> = t.lines().collect();
        assert_eq!(rows[2], "| br | 2 | 3.9 KiB | 1000 B | 75.0% |");
        assert_eq!(rows[3], "| gzip | 2 | 3.9 KiB | 1.5 KiB | 62.5% |");
        assert_eq!(
            rows[4],
            "| **best of each** | 2 | 3.9 KiB | 1000 B | 75.0% |"
        );
        let l = largest_table(&assets, 2);
        let rows: Vec<&str> = l.lines().collect();
        assert_eq!(rows.len(), 4, "{l}");
        assert_eq!(rows[2], "| `img.png` | 4.9 KiB | none | – |");
        assert_eq!(rows[3], "| `a.js` | 2.9 KiB | br 700 B | 76.7% |");
        assert_eq!(md_code("b|c.css"), "`b\\|c.css`");
        assert_eq!(md_code("x`y"), "`` x`y ``");
    }
}
