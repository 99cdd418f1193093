//! The documents a newcomer reads hold together: every relative link in
//! README.md, the guides in `docs/` and the npm package's README names a file of
//! the repository, and a `#anchor` a heading of the file it points to (GitHub's
//! slugs); what README.md and `docs/` link is in the published crate (Cargo.toml's
//! `include`), where crates.io shows them; and README.md stays at most 300 lines,
//! the long story being in `docs/`. Needs only the Rust toolchain.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The documents whose links are checked, relative to the repository.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs = vec![
        PathBuf::from("README.md"),
        PathBuf::from("npm/precompressor/README.md"),
    ];
    let mut guides: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(root).unwrap().to_path_buf())
        .collect();
    guides.sort();
    docs.extend(guides);
    docs
}

/// The lines of `text` outside fenced code blocks, with their numbers (from 1).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<(char, usize)> = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let run = |c: char| t.chars().take_while(|&x| x == c).count();
        match fence {
            Some((c, n)) => {
                if run(c) >= n && t.trim_end().chars().all(|x| x == c) {
                    fence = None;
                }
            }
            None => {
                if let Some(c) = ['`', '~'].into_iter().find(|&c| run(c) >= 3) {
                    fence = Some((c, run(c)));
                } else {
                    out.push((i + 1, line));
                }
            }
        }
    }
    out
}

/// `line` without its inline code spans (a link inside backticks is text).
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].chars().take_while(|&c| c == '`').count();
        let after = &rest[start + ticks..];
        let closing = "`".repeat(ticks);
        match after.find(&closing) {
            Some(end) => rest = &after[end + ticks..],
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The targets of inline links and images (`[text](target)`, `![alt](target)`)
/// and of reference definitions (`[label]: target`) on one line of prose.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut targets = Vec::new();
    if let Some(def) = line.trim_start().strip_prefix('[') {
        if let Some((_, rest)) = def.split_once("]:") {
            if let Some(t) = rest.split_whitespace().next() {
                targets.push(t.trim_matches(['<', '>']).to_string());
            }
        }
    }
    let mut rest = line.as_str();
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let (mut depth, mut end) = (0usize, after.len());
        for (j, c) in after.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = j;
                    break;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        // `[text](target "title")`: the target is the first word.
        let target = after[..end].split_whitespace().next().unwrap_or("");
        targets.push(target.trim_matches(['<', '>']).to_string());
        rest = &after[end.min(after.len())..];
    }
    targets
}

/// A heading's text as GitHub renders it for its slug: code spans keep their
/// text, a link its text, HTML tags and a closing `#` run go.
fn heading_text(raw: &str) -> String {
    let raw = raw.trim();
    let raw = raw.trim_end_matches('#').trim_end();
    let mut text = String::new();
    let mut rest = raw;
    // [text](url) -> text
    while let Some(i) = rest.find('[') {
        text.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after
            .find("](")
            .and_then(|j| after[j..].find(')').map(|k| (j, j + k)))
        {
            Some((j, k)) => {
                text.push_str(&after[..j]);
                rest = &after[k + 1..];
            }
            None => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    let mut out = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// GitHub's slug of a heading (github-slugger): lower case, every character but
/// letters, digits, `_`, `-` and spaces dropped, each space a `-`.
fn slug(heading: &str) -> String {
    heading_text(heading)
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file: its headings' slugs, a repeated slug getting
/// `-1`, `-2`, … as GitHub numbers them.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let lines = prose_lines(text);
    let mut previous: Option<&str> = None;
    for &(_, line) in &lines {
        let t = line.trim_start();
        let hashes = t.chars().take_while(|&c| c == '#').count();
        let heading = if (1..=6).contains(&hashes)
            && line.len() - t.len() < 4
            && (t.len() == hashes || t[hashes..].starts_with([' ', '\t']))
        {
            Some(t[hashes..].to_string())
        } else if !t.is_empty()
            && (t.trim_end().chars().all(|c| c == '=') || t.trim_end().chars().all(|c| c == '-'))
            && previous.is_some_and(|p| {
                let p = p.trim_start();
                !p.is_empty() && !p.starts_with(['#', '|', '-', '*', '>']) && !p.contains('|')
            })
        {
            // A setext heading: the line before, underlined.
            previous.map(str::to_string)
        } else {
            None
        };
        if let Some(h) = heading {
            let base = slug(&h);
            let mut s = base.clone();
            let mut n = 0;
            while !seen.insert(s.clone()) {
                n += 1;
                s = format!("{base}-{n}");
            }
        }
        previous = Some(line);
    }
    seen
}

/// `%20` and the like in a link's path.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Some(v) = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Is `target` an address elsewhere (`https:`, `mailto:`, `//host`)?
fn is_external(target: &str) -> bool {
    if target.starts_with("//") {
        return true;
    }
    match target.split_once(':') {
        Some((scheme, _)) => {
            !scheme.is_empty()
                && !scheme.contains(['/', '#'])
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }
        None => false,
    }
}

/// A relative link of `doc` (relative to `root`): the file it names, relative to
/// `root`, or a description of why it is broken.
fn resolve(root: &Path, doc: &Path, target: &str) -> Result<Option<PathBuf>, String> {
    if target.is_empty() {
        return Err("an empty link".into());
    }
    if is_external(target) {
        return Ok(None);
    }
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let path = path.split('?').next().unwrap();
    let file = if path.is_empty() {
        doc.to_path_buf()
    } else if let Some(abs) = path.strip_prefix('/') {
        PathBuf::from(percent_decode(abs))
    } else {
        doc.parent().unwrap().join(percent_decode(path))
    };
    // Normalise `a/../b` without touching the disk, and refuse to leave the repository.
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in file.components() {
        match c {
            std::path::Component::Normal(s) => parts.push(s),
            std::path::Component::ParentDir => {
                parts.pop().ok_or("leaves the repository")?;
            }
            _ => {}
        }
    }
    let file: PathBuf = parts.iter().collect();
    let on_disk = root.join(&file);
    if !on_disk.exists() {
        return Err(format!("{} does not exist", file.display()));
    }
    if let Some(anchor) = anchor {
        if on_disk.is_dir() || on_disk.extension().is_none_or(|e| e != "md") {
            return Err(format!(
                "#{anchor} in {}, which is no Markdown file",
                file.display()
            ));
        }
        let text = std::fs::read_to_string(&on_disk).unwrap();
        if !anchors(&text).contains(&percent_decode(anchor)) {
            return Err(format!("{} has no heading #{anchor}", file.display()));
        }
    }
    Ok(on_disk.is_file().then_some(file))
}

/// Every broken relative link of `docs`, as `doc:line: target: why`, and the
/// files the good ones name, per document.
fn check_links(root: &Path, docs: &[PathBuf]) -> (Vec<String>, Vec<(PathBuf, PathBuf)>) {
    let mut broken = Vec::new();
    let mut named = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(root.join(doc))
            .unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        for (n, line) in prose_lines(&text) {
            for target in link_targets(line) {
                match resolve(root, doc, &target) {
                    Ok(Some(file)) => named.push((doc.clone(), file)),
                    Ok(None) => {}
                    Err(why) => broken.push(format!("{}:{n}: ({target}): {why}", doc.display())),
                }
            }
        }
    }
    (broken, named)
}

#[test]
fn every_relative_link_in_the_readme_and_docs_resolves() {
    let root = repo();
    let docs = documents(&root);
    assert!(docs.len() > 3, "{docs:?}");
    let (broken, named) = check_links(&root, &docs);
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    // The README links its guides, so the walk above saw real links.
    assert!(
        named
            .iter()
            .any(|(d, f)| d == Path::new("README.md") && f.starts_with("docs")),
        "README.md links no guide in docs/"
    );
}

#[test]
fn the_readme_is_at_most_300_lines() {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let n = text.lines().count();
    assert!(
        n <= 300,
        "README.md has {n} lines: move the long story into docs/"
    );
}

/// Cargo.toml's `include` patterns, as written.
fn crate_include() -> Vec<String> {
    let toml = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let start = toml
        .find("\ninclude = [")
        .expect("Cargo.toml has an include list");
    let list = &toml[start..];
    let list = &list[..list.find(']').unwrap()];
    list.lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix('"')?;
            Some(l[..l.find('"')?].to_string())
        })
        .collect()
}

/// crates.io shows README.md (and the package holds `docs/`): what they link
/// must be in the package, or the link breaks there.
#[test]
fn what_the_readme_and_docs_link_is_in_the_published_crate() {
    let root = repo();
    let patterns = crate_include();
    assert!(patterns.iter().any(|p| p == "/docs/*"), "{patterns:?}");
    let mut set = globset::GlobSetBuilder::new();
    for p in &patterns {
        let p = p.trim_start_matches('/');
        set.add(
            globset::GlobBuilder::new(p)
                .literal_separator(true)
                .build()
                .unwrap(),
        );
    }
    let set = set.build().unwrap();
    let docs: Vec<PathBuf> = documents(&root)
        .into_iter()
        .filter(|d| d == Path::new("README.md") || d.starts_with("docs"))
        .collect();
    let (broken, named) = check_links(&root, &docs);
    assert!(broken.is_empty(), "{broken:?}");
    let outside: Vec<String> = named
        .iter()
        .filter(|(_, f)| !set.is_match(f))
        .map(|(d, f)| format!("{} links {}", d.display(), f.display()))
        .collect();
    assert!(
        outside.is_empty(),
        "not in Cargo.toml's include, so broken on crates.io:\n{}",
        outside.join("\n")
    );
}

/// The checker itself: a broken link, a missing anchor and a link inside code
/// are told apart from good ones.
#[test]
fn a_broken_link_or_anchor_is_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir(root.join("docs")).unwrap();
    std::fs::write(
        root.join("docs/guide.md"),
        "# Guide\n\n## Apache httpd 2.4: `precompress apache-map`\n\n## Tests\n\n## Tests\n\n\
         ```sh\n# not a heading\n```\n\nSetext\n------\n",
    )
    .unwrap();
    std::fs::write(
        root.join("README.md"),
        "# Read me\n\n\
         [ok](docs/guide.md) [ok](docs/guide.md#apache-httpd-24-precompress-apache-map)\n\
         [ok](docs/guide.md#tests-1) [ok](#read-me) [ok](https://example.com/x.md#y)\n\
         [ok](docs/guide.md#setext) ![ok](docs/guide.md \"title\")\n\
         `[not a link](nowhere.md)`\n\
         ```\n[not a link](nowhere.md)\n```\n\
         [gone](docs/gone.md)\n\
         [no anchor](docs/guide.md#tests-2)\n\
         [code is no heading](docs/guide.md#not-a-heading)\n\
         [no own anchor](#nope)\n\
         [out](../outside.md)\n\
         [ref]: docs/missing.md\n",
    )
    .unwrap();
    let docs = [PathBuf::from("README.md"), PathBuf::from("docs/guide.md")];
    let (broken, named) = check_links(root, &docs);
    let lines: Vec<&str> = broken
        .iter()
        .map(|b| b.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "README.md:10",
            "README.md:11",
            "README.md:12",
            "README.md:13",
            "README.md:14",
            "README.md:15",
        ],
        "{broken:#?}"
    );
    assert!(
        broken[0].contains("docs/gone.md does not exist"),
        "{broken:?}"
    );
    assert!(broken[1].contains("no heading #tests-2"), "{broken:?}");
    assert!(broken[5].contains("docs/missing.md"), "{broken:?}");
    assert_eq!(named.len(), 6, "{named:?}");
}

#[test]
fn slugs_are_githubs() {
    for (heading, want) in [
        (
            "Apache httpd 2.4: `precompress apache-map`",
            "apache-httpd-24-precompress-apache-map",
        ),
        (
            "Object stores behind a CDN (S3, GCS, R2 + CloudFront, Cloud CDN, …)",
            "object-stores-behind-a-cdn-s3-gcs-r2--cloudfront-cloud-cdn-",
        ),
        (
            "Prove a deploy: `precompress check --url`",
            "prove-a-deploy-precompress-check---url",
        ),
        (
            "Serving: Node servers and `vite preview`",
            "serving-node-servers-and-vite-preview",
        ),
        ("Next.js (`output: 'export'`)", "nextjs-output-export"),
        ("See [the guide](docs/x.md) ##", "see-the-guide"),
        ("snake_case Café", "snake_case-café"),
    ] {
        assert_eq!(slug(heading), want, "{heading}");
    }
}
