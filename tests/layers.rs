//! The layering ARCHITECTURE.md states, held by the source itself: each
//! module's `crate::` paths may name only its own room or a room below it.
//! From the bottom: `error`; `fsutil` (atomic writes, regular-file reads);
//! `model` (the shared vocabulary); `encode` (the codecs) beside `serve`
//! (negotiation and servers), which never name each other; the run and its
//! stages on top, beside `deploy` (what is generated for other servers and
//! hosts), neither naming the other. `lib.rs` names anything; the binary (`src/main.rs`,
//! `src/cli/`) goes through the library's public paths, never `crate::` ones
//! of the library.

use std::path::Path;

/// The room a module of `src/` belongs to and its height.
fn room(rel: &str) -> (&'static str, u8) {
    let first = rel.split('/').next().unwrap().trim_end_matches(".rs");
    match first {
        // `crate::Error` and `crate::Result` are the root's re-exports of `error`.
        "error" | "Error" | "ErrorKind" | "Result" => ("error", 0),
        "fsutil" => ("fsutil", 1),
        "model" => ("model", 2),
        "encode" => ("encode", 3),
        "serve" => ("serve", 3),
        // What is generated for other servers and hosts: on serve's index,
        // beside the run (neither names the other).
        "deploy" => ("deploy", 4),
        // The run, its stages and what stands on them, one room.
        _ => ("run", 4),
    }
}

/// The first segment of every `crate::` path outside comments in `text`.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap();
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + 7..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            rest = &after[name.len()..];
            if !name.is_empty() {
                out.push((n + 1, name));
            }
        }
    }
    out
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, root, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(
                p.strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/"),
            );
        }
    }
}

#[test]
fn no_module_names_a_room_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    for rel in &files {
        if rel == "lib.rs" || rel == "main.rs" || rel.starts_with("cli/") {
            continue;
        }
        let (from, level) = room(rel);
        let text = std::fs::read_to_string(src.join(rel)).unwrap();
        for (line, target) in crate_paths(&text) {
            let target_file = format!("{target}.rs");
            let (to, to_level) = room(&target_file);
            let ok = to == from || to_level < level;
            if !ok {
                wrong.push(format!(
                    "src/{rel}:{line}: {from} (level {level}) names crate::{to} (level {to_level})"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layering:\n{}",
        wrong.join("\n")
    );
    // The binary speaks to the library through its public paths only.
    for rel in files
        .iter()
        .filter(|r| *r == "main.rs" || r.starts_with("cli/"))
    {
        let text = std::fs::read_to_string(src.join(rel)).unwrap();
        for (line, target) in crate_paths(&text) {
            assert_eq!(
                target, "cli",
                "src/{rel}:{line}: the binary names crate::{target}"
            );
        }
    }
}

#[test]
fn the_rule_catches_an_upward_import() {
    let text = "use crate::model::coding::Codec;\n// crate::pipeline in a comment\nlet x = crate::pipeline::run;\n";
    let found = crate_paths(text);
    assert_eq!(
        found,
        [(1, "model".to_string()), (3, "pipeline".to_string())]
    );
    let (_, model) = room("model/manifest.rs");
    let (_, run) = room("pipeline.rs");
    assert!(run > model);
    assert_eq!(room("serve/http.rs").1, room("encode/delta.rs").1);
}
