//! The layering ARCHITECTURE.md states, held by the source itself.
//!
//! Rooms, from the bottom: `error`; `fsutil`; `model` (the vocabulary);
//! `encode` (the codecs) beside `serve` (what runs per request); `config` (the
//! settings) beside `deploy` (what is generated for other servers); `report`;
//! `run`; and on top `check`, `merge`, `tune`, `probe`. A module's paths
//! (`crate::…`, `super::…`) may name its own room or a room below it, never a
//! room beside or above it. Within the whole library no file's imports may
//! come back to it: a circle of files is a failure too, whatever the rooms.
//! `lib.rs` names anything; the binary (`src/main.rs`, `src/cli/`) goes
//! through the library's public paths, never `crate::` ones. A re-export
//! (`pub use`) is followed like any `use`: a `mod.rs` that shows its
//! children's items and holds what they use is a circle too.
//!
//! The tests keep a layout too: each file of `tests/` is one tier, all fast
//! (the Rust toolchain alone) or all e2e (every test ignored with its reason).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The rooms in order: each may name the rooms of lower levels only.
const ROOMS: &[(&str, u8)] = &[
    ("error", 0),
    ("fsutil", 1),
    ("model", 2),
    ("encode", 3),
    ("serve", 3),
    ("config", 4),
    ("deploy", 4),
    ("report", 5),
    ("run", 6),
    ("check", 7),
    ("merge", 7),
    ("tune", 7),
    ("probe", 7),
    ("view", 7),
];

/// The room of a module path's first segment (`crate::Error` and
/// `crate::Result` are the root's re-exports of `error`).
fn room(first: &str) -> Option<(&'static str, u8)> {
    let first = match first {
        "Error" | "ErrorKind" | "Result" => "error",
        f => f,
    };
    ROOMS.iter().find(|(r, _)| *r == first).copied()
}

/// Every `.rs` file under `dir`, relative, with `/`.
fn sources(dir: &Path, root: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, root, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy();
            out.push(rel.replace('\\', "/"));
        }
    }
}

/// The module path of a file: `run/mod.rs` is `run`, `run/scan.rs` is `run::scan`.
fn module_of(file: &str) -> Vec<String> {
    let stem = file.trim_end_matches(".rs");
    let mut parts: Vec<String> = stem.split('/').map(String::from).collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts
}

/// The code of a file less its `#[cfg(test)]` module, comments and strings.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = line.split("//").next().unwrap();
        // Strings hold no paths we follow: blank them.
        let mut in_str = false;
        let mut prev = ' ';
        for c in line.chars() {
            if c == '"' && prev != '\\' {
                in_str = !in_str;
                out.push(' ');
            } else {
                out.push(if in_str { ' ' } else { c });
            }
            prev = c;
        }
        out.push('\n');
    }
    out
}

/// `a::{b, c::{d, e}}` expanded to `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let (Some(open), Some(close)) = (tree.find('{'), tree.rfind('}')) else {
        return vec![tree.split(" as ").next().unwrap().trim().to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..close];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand)
        .map(|p| format!("{prefix}{p}"))
        .collect()
}

/// Every path the code of `file` uses (re-exports too), each made
/// absolute (`crate::…`) from `super::` and `self::`, as segments.
fn used_paths(file: &str, code: &str) -> Vec<Vec<String>> {
    let here = module_of(file);
    let mut paths = Vec::new();
    // `use` items, whole (they may span lines), taken out of the code.
    let mut trees = Vec::new();
    let mut rest = String::new();
    let mut at = code;
    while let Some(i) = at.find("use ") {
        let before = &at[..i];
        let word_start = !before.ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let item = before.trim_end();
        let visibility = item.ends_with("pub") || item.ends_with(')');
        let Some(end) = at[i..].find(';').map(|e| i + e) else {
            break;
        };
        if word_start && (item.is_empty() || item.ends_with([';', '}', '{', ']']) || visibility) {
            rest.push_str(before);
            trees.extend(expand(&at[i + 4..end]));
            at = &at[end + 1..];
        } else {
            rest.push_str(&at[..i + 4]);
            at = &at[i + 4..];
        }
    }
    rest.push_str(at);
    // Paths written in the code itself.
    for prefix in ["crate::", "super::", "self::"] {
        let mut at = rest.as_str();
        while let Some(i) = at.find(prefix) {
            let start_ok =
                i == 0 || !at[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':');
            let tail: String = at[i..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            if start_ok {
                trees.push(tail.trim_end_matches(':').to_string());
            }
            at = &at[i + prefix.len()..];
        }
    }
    for t in trees {
        let segs: Vec<&str> = t.split("::").filter(|s| !s.is_empty()).collect();
        let abs: Vec<String> = match segs.first() {
            Some(&"crate") => segs[1..].iter().map(|s| s.to_string()).collect(),
            Some(&"super") => {
                let mut base = here.clone();
                let mut i = 0;
                while segs.get(i) == Some(&"super") {
                    base.pop();
                    i += 1;
                }
                base.extend(segs[i..].iter().map(|s| s.to_string()));
                base
            }
            Some(&"self") => {
                let mut base = here.clone();
                base.extend(segs[1..].iter().map(|s| s.to_string()));
                base
            }
            _ => continue,
        };
        if !abs.is_empty() {
            paths.push(abs);
        }
    }
    paths
}

/// The library's files (less the binary's), and the file each one's paths
/// lead to (the longest module prefix that is a file).
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(src, src, &mut files);
    let modules: BTreeMap<Vec<String>, String> =
        files.iter().map(|f| (module_of(f), f.clone())).collect();
    let mut edges = BTreeMap::new();
    for f in files
        .iter()
        .filter(|f| *f != "lib.rs" && *f != "main.rs" && !f.starts_with("cli/"))
    {
        let text = std::fs::read_to_string(src.join(f)).unwrap();
        let mut to = BTreeSet::new();
        for path in used_paths(f, &code(&text)) {
            let target = (1..=path.len()).rev().find_map(|n| modules.get(&path[..n]));
            if let Some(t) = target.filter(|t| *t != f) {
                to.insert(t.clone());
            }
        }
        edges.insert(f.clone(), to);
    }
    edges
}

/// A circle through `edges`, if there is one (files in order, the first again last).
fn circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            match state.get(m.as_str()) {
                Some(1) => {
                    let i = stack.iter().position(|s| s == m).unwrap();
                    let mut c = stack[i..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(m, edges, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if !state.contains_key(n) {
            if let Some(c) = visit(n, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// What is wrong with `edges` against the rooms: arrows up or sideways.
fn against_the_rooms(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut wrong = Vec::new();
    for (from, tos) in edges {
        let first = |f: &str| module_of(f)[0].clone();
        let Some((r, level)) = room(&first(from)) else {
            wrong.push(format!("src/{from}: in no room (add it to ROOMS)"));
            continue;
        };
        for to in tos {
            let (tr, tlevel) = room(&first(to)).unwrap_or(("?", u8::MAX));
            if tr != r && tlevel >= level {
                wrong.push(format!(
                    "src/{from} ({r}, level {level}) uses src/{to} ({tr}, level {tlevel})"
                ));
            }
        }
    }
    wrong
}

#[test]
fn no_module_names_a_room_beside_or_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = graph(&src);
    assert!(edges.len() > 40, "{} files read", edges.len());
    let wrong = against_the_rooms(&edges);
    assert!(
        wrong.is_empty(),
        "imports against the rooms:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_files_import_each_other_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = graph(&src);
    if let Some(c) = circle(&edges) {
        panic!("a circle of imports: {}", c.join(" -> "));
    }
}

#[test]
fn the_binary_speaks_to_the_library_through_its_public_paths() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &src, &mut files);
    for rel in files
        .iter()
        .filter(|r| *r == "main.rs" || r.starts_with("cli/"))
    {
        let text = std::fs::read_to_string(src.join(rel)).unwrap();
        for path in used_paths(rel, &code(&text)) {
            if rel == "main.rs" || !path[0].starts_with("cli") {
                assert!(
                    path[0] == "cli",
                    "src/{rel}: the binary names crate::{}",
                    path.join("::")
                );
            }
        }
    }
}

/// The checks themselves can fail: an upward import, a sideways one and a
/// circle are each caught, and `super::` and nested `use` trees are followed.
#[test]
fn the_rules_catch_an_upward_import_a_sideways_one_and_a_circle() {
    assert_eq!(
        expand("crate::run::{env::{Env, Log}, walk::Found as F}"),
        [
            "crate::run::env::Env",
            "crate::run::env::Log",
            "crate::run::walk::Found"
        ]
    );
    let code = code("use super::{x, y::Z};\npub use crate::run::Thing;\nlet a = crate::model::coding::Codec::Brotli; // crate::tune\nlet s = \"crate::probe\";\nfn reuse() {}\n");
    let paths = used_paths("serve/http/site.rs", &code);
    assert!(
        paths.contains(&vec!["serve".into(), "http".into(), "x".into()]),
        "{paths:?}"
    );
    assert!(paths.contains(&vec!["serve".into(), "http".into(), "y".into(), "Z".into()]));
    assert!(paths.contains(&vec![
        "model".into(),
        "coding".into(),
        "Codec".into(),
        "Brotli".into()
    ]));
    // A re-export is a use; comments and strings hold none.
    assert!(
        paths.contains(&vec!["run".into(), "Thing".into()]),
        "{paths:?}"
    );
    assert!(
        !paths.iter().any(|p| p[0] == "tune" || p[0] == "probe"),
        "{paths:?}"
    );

    let e = |pairs: &[(&str, &str)]| {
        let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            m.entry(a.to_string()).or_default().insert(b.to_string());
            m.entry(b.to_string()).or_default();
        }
        m
    };
    let up = against_the_rooms(&e(&[("model/manifest.rs", "run/walk.rs")]));
    assert_eq!(up.len(), 1, "{up:?}");
    let sideways = against_the_rooms(&e(&[("serve/mod.rs", "encode/mod.rs")]));
    assert_eq!(sideways.len(), 1, "{sideways:?}");
    assert!(against_the_rooms(&e(&[("run/scan.rs", "model/coding.rs")])).is_empty());
    let c = circle(&e(&[
        ("run/a.rs", "run/b.rs"),
        ("run/b.rs", "run/c.rs"),
        ("run/c.rs", "run/a.rs"),
    ]));
    assert_eq!(c.unwrap().len(), 4);
    assert!(circle(&e(&[("run/a.rs", "run/b.rs"), ("run/a.rs", "run/c.rs")])).is_none());
}

/// A file's lines without its `#[cfg(test)]` module, and each function's
/// length from its `fn` line to the `}` at the same indent (as rustfmt
/// writes them): `(file lines, [(fn lines, name, line)])`.
fn lengths(text: &str) -> (usize, Vec<(usize, String, usize)>) {
    let lines: Vec<&str> = text.lines().collect();
    let cut = (0..lines.len())
        .find(|&i| {
            lines[i].starts_with("#[cfg(test)]")
                && lines
                    .get(i + 1)
                    .is_some_and(|l| l.starts_with("mod ") || l.starts_with("pub(crate) mod "))
        })
        .unwrap_or(lines.len());
    let mut fns = Vec::new();
    for i in 0..cut {
        let l = lines[i];
        let t = l.trim_start();
        let indent = &l[..l.len() - t.len()];
        let t = [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "async ",
            "unsafe ",
        ]
        .iter()
        .fold(t, |t, p| t.strip_prefix(p).unwrap_or(t));
        let Some(rest) = t.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // A declaration (a trait's `fn x();`) has no body.
        let body = (i..cut).find(|&j| {
            let e = lines[j].trim_end();
            e.ends_with('{') || e.ends_with('}') || e.ends_with(';')
        });
        if body.is_none_or(|j| lines[j].trim_end().ends_with(';')) {
            continue;
        }
        if let Some(end) = (i..cut)
            .find(|&j| lines[j] == format!("{indent}}}") || (j == i && l.trim_end().ends_with('}')))
        {
            fns.push((end - i + 1, name, i + 1));
        }
    }
    (cut, fns)
}

/// Rooms that own one thing: no `src/` file over 700 lines without its
/// tests, no function over 100 lines.
#[test]
fn no_file_or_function_is_too_long() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &src, &mut files);
    let mut long = Vec::new();
    for f in &files {
        let (n, fns) = lengths(&std::fs::read_to_string(src.join(f)).unwrap());
        if n > 700 {
            long.push(format!("src/{f}: {n} lines without its tests"));
        }
        for (len, name, line) in fns {
            if len > 100 {
                long.push(format!("src/{f}:{line}: fn {name} is {len} lines"));
            }
        }
    }
    assert!(long.is_empty(), "too long:\n{}", long.join("\n"));
    // The measure itself: a 101-line function and a 701-line file are seen.
    let body = "    x();\n".repeat(99);
    let (_, fns) = lengths(&format!("pub fn long() {{\n{body}}}\nfn decl();\n"));
    assert_eq!(fns, [(101, "long".to_string(), 1)]);
    let (n, _) = lengths(&format!(
        "{}#[cfg(test)]\nmod tests {{\n}}\n",
        "// x\n".repeat(701)
    ));
    assert_eq!(n, 701);
}

/// The `format!` calls in `text` (less its tests and comments) that make
/// the name of a variant or delta: a placeholder, a dot and a coding's
/// suffix or token (`"{}.{}"` with `codec.suffix()`, `"{key}.gz"`,
/// `"{p}.{}.dcz"`). Each is the macro's text.
fn sibling_names_formatted(text: &str) -> Vec<String> {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let code: String = text
        .lines()
        .map(|l| match l.trim_start().starts_with("//") {
            true => "\n".to_string(),
            false => format!("{l}\n"),
        })
        .collect();
    let mut found = Vec::new();
    let mut at = code.as_str();
    while let Some(i) = at.find("format!(") {
        let call = &at[i..];
        let mut depth = 0;
        let end = call
            .char_indices()
            .find(|&(_, c)| {
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                c == ')' && depth == 0
            })
            .map_or(call.len(), |(e, _)| e + 1);
        let call = &call[..end];
        let lit = call.split('"').nth(1).unwrap_or("");
        let args = call.rsplit('"').next().unwrap_or("");
        let coded_arg = args.contains(".suffix()") || args.contains(".token()");
        let literal_coding = [".br", ".gz", ".zst", ".dcb", ".dcz"]
            .iter()
            .any(|s| lit.ends_with(&format!("}}{s}")) || lit.ends_with(&format!("}}.{{}}{s}")));
        if (lit.contains("}.{") && coded_arg) || literal_coding {
            found.push(call.split_whitespace().collect::<Vec<_>>().join(" "));
        }
        at = &at[i + 8..];
    }
    found
}

/// ARCHITECTURE.md: `model/names.rs` holds the one name a variant or delta
/// may have, so no other file spells it out (a second spelling is how a
/// writer and a server come to disagree on it).
#[test]
fn only_names_rs_spells_a_variants_or_deltas_name() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &src, &mut files);
    let mut wrong = Vec::new();
    for f in files.iter().filter(|f| *f != "model/names.rs") {
        for call in sibling_names_formatted(&std::fs::read_to_string(src.join(f)).unwrap()) {
            wrong.push(format!("src/{f}: {call}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "variant or delta names made outside model/names.rs (use names::variant_path, delta_path):\n{}",
        wrong.join("\n")
    );
    // The rule itself: each spelling is seen, and names that are not a
    // sibling's (a cache entry, an escaped suffix, a test's) are not.
    let seen = |t: &str| sibling_names_formatted(t).len();
    assert_eq!(
        seen("let d = format!(\"{}.{}\", f.rel, codec.suffix());"),
        1
    );
    assert_eq!(
        seen("let d = format!(\n    \"{rel}.{}\",\n    c.suffix()\n);"),
        1
    );
    assert_eq!(
        seen("format!(\"{path}.{}.{}\", hex(dict), coding.token())"),
        1
    );
    assert_eq!(seen("let g = format!(\"{key}.gz\");"), 1);
    assert_eq!(seen("format!(\"{key}.{}.dcz\", hex(&h))"), 1);
    assert_eq!(seen("sub.join(format!(\"{}.{suffix}\", &hex[..40]))"), 0);
    assert_eq!(seen("escape(&format!(\".{}\", c.suffix()))"), 0);
    assert_eq!(seen("// format!(\"{}.{}\", f.rel, codec.suffix())"), 0);
    assert_eq!(
        seen("#[cfg(test)]\nmod tests {\n  format!(\"{key}.gz\");\n}"),
        0
    );
}

/// A run's stages, each the files it owns (ARCHITECTURE.md's diagram).
const STAGES: &[(&str, &[&str])] = &[
    ("walk", &["run/walk.rs"]),
    ("scan", &["run/scan.rs", "run/scan_dictionaries.rs"]),
    ("plan", &["run/plan.rs", "run/shard.rs", "run/bound.rs"]),
    ("execute", &["run/execute.rs", "run/worker.rs"]),
    ("commit", &["run/commit.rs"]),
];

/// Arrows from one stage's file to another stage's.
fn across_stages(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let stage = |f: &str| STAGES.iter().find(|(_, fs)| fs.contains(&f)).map(|s| s.0);
    let mut wrong = Vec::new();
    for (from, tos) in edges {
        let Some(a) = stage(from) else { continue };
        for to in tos {
            if let Some(b) = stage(to).filter(|b| *b != a) {
                wrong.push(format!("src/{from} ({a}) uses src/{to} ({b})"));
            }
        }
    }
    wrong
}

/// ARCHITECTURE.md: no stage names another's file for a type; what they
/// hand on lives apart (`run/tree.rs`, `run/scanned.rs`, `run/jobs.rs`),
/// and only `run/mod.rs` calls them in order.
#[test]
fn no_stage_names_another_stages_file() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = graph(&src);
    for (_, files) in STAGES {
        for f in *files {
            assert!(edges.contains_key(*f), "src/{f} is gone: update STAGES");
        }
    }
    let wrong = across_stages(&edges);
    assert!(
        wrong.is_empty(),
        "a stage names another's file:\n{}",
        wrong.join("\n")
    );
    // The rule itself: across stages is caught, within one and to a shared
    // file is not.
    let e = |pairs: &[(&str, &str)]| {
        let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            m.entry(a.to_string()).or_default().insert(b.to_string());
        }
        m
    };
    assert_eq!(
        across_stages(&e(&[("run/commit.rs", "run/plan.rs")])).len(),
        1
    );
    assert!(across_stages(&e(&[
        ("run/execute.rs", "run/worker.rs"),
        ("run/commit.rs", "run/jobs.rs"),
        ("run/mod.rs", "run/plan.rs"),
    ]))
    .is_empty());
}

/// What a run's top folder holds besides its stages: the hand-on types, the
/// environment every stage takes and the settings checked before it opens,
/// the glob rules and the order (`mod.rs`).
const RUN_TOP: &[&str] = &[
    "run/mod.rs",
    "run/env.rs",
    "run/settings.rs",
    "run/tree.rs",
    "run/scanned.rs",
    "run/jobs.rs",
    "run/filter.rs",
];

/// ARCHITECTURE.md: `src/run/` is the stages, and beside them, in folders
/// that say so (`state/`, `dictionaries/`), what they and check, tune and
/// merge share. A new file at the top is a stage (add it to STAGES) or a
/// service (put it in a folder).
#[test]
fn run_holds_its_stages_at_the_top_and_its_services_in_folders() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stray = Vec::new();
    for e in std::fs::read_dir(src.join("run")).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            continue;
        }
        let rel = format!("run/{}", e.file_name().to_string_lossy());
        let stage = STAGES.iter().any(|(_, fs)| fs.contains(&rel.as_str()));
        if !stage && !RUN_TOP.contains(&rel.as_str()) {
            stray.push(rel);
        }
    }
    assert!(
        stray.is_empty(),
        "neither a stage nor what stages hand on: {stray:?}"
    );
    for folder in ["state", "dictionaries"] {
        assert!(
            src.join("run").join(folder).join("mod.rs").is_file(),
            "run/{folder}/mod.rs"
        );
    }
}

/// A test file's tests: (how many, how many of them ignored). A test is a
/// run of attributes (comments between them) holding `test` or
/// `tokio::test`; it is ignored when the run holds `ignore` too.
fn tiers(text: &str) -> (usize, usize) {
    let (mut tests, mut ignored) = (0, 0);
    let (mut test, mut ignore) = (false, false);
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(attr) = t.strip_prefix("#[") {
            test |= attr.starts_with("test]") || attr.starts_with("tokio::test");
            ignore |= attr.starts_with("ignore");
        } else if !t.starts_with("//") {
            tests += usize::from(test);
            ignored += usize::from(test && ignore);
            (test, ignore) = (false, false);
        }
    }
    (tests, ignored)
}

/// README.md's two tiers, file by file: `cargo test --test NAME` of a fast
/// file needs nothing but the toolchain, and an e2e file's tests all say
/// what they need. A file holding both is split, the e2e tests in a file of
/// their own (`tests/reference_clis.rs`, `tests/crash_corpus.rs`, ...).
#[test]
fn every_test_file_is_one_tier() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut mixed = Vec::new();
    let mut files = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        files += 1;
        let (tests, ignored) = tiers(&std::fs::read_to_string(&p).unwrap());
        if ignored > 0 && ignored < tests {
            let name = p.file_name().unwrap().to_string_lossy();
            mixed.push(format!(
                "tests/{name}: {ignored} e2e (ignored) and {} fast of {tests} tests",
                tests - ignored
            ));
        }
    }
    mixed.sort();
    assert!(files > 10, "only {files} files in tests/");
    assert!(
        mixed.is_empty(),
        "both tiers in one file: move one side to a file of its own:\n{}",
        mixed.join("\n")
    );
    // The count itself: an ignored test, with a comment or another attribute
    // among its attributes, and a plain one.
    let (test, ignore) = (
        concat!("#", "[test]"),
        concat!("#", "[ignore = \"e2e tier\"]"),
    );
    let text = format!(
        "{test}\nfn a() {{}}\n\n/// b\n{test}\n// why\n{ignore}\nfn b() {{}}\n\n{ignore}\n#[cfg(unix)]\n{test}\nfn c() {{}}\n"
    );
    assert_eq!(tiers(&text), (3, 2));
    let tokio = concat!("#", "[tokio::test]");
    assert_eq!(
        tiers(&format!("{tokio}\n{ignore}\nasync fn d() {{}}\n")),
        (1, 1)
    );
}

/// The quick tier (`cargo quick`, .cargo/config.toml's alias, which the
/// README names) runs only fast files that exist: an e2e file in it would be
/// all ignored, a renamed one an error.
#[test]
fn the_quick_tier_names_fast_test_files_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = std::fs::read_to_string(root.join(".cargo/config.toml")).unwrap();
    let alias = config
        .split("quick = \"\"\"")
        .nth(1)
        .and_then(|r| r.split("\"\"\"").next())
        .expect(".cargo/config.toml: no quick alias");
    let words: Vec<&str> = alias.split_whitespace().collect();
    assert!(words.starts_with(&["test", "--lib", "--bins"]), "{words:?}");
    let named: Vec<&str> = words
        .windows(2)
        .filter(|w| w[0] == "--test")
        .map(|w| w[1])
        .collect();
    assert!(named.len() >= 10, "{named:?}");
    for name in named {
        let p = root.join("tests").join(format!("{name}.rs"));
        let text = std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("cargo quick names tests/{name}.rs: {e}"));
        let (tests, ignored) = tiers(&text);
        assert!(
            tests > 0 && ignored == 0,
            "tests/{name}.rs is not a fast file"
        );
    }
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains("cargo quick"),
        "the README does not name the quick tier"
    );
}
