//! What the table makes for the other surfaces: docs/config.md's option
//! table, fixtures/options.json (each plugin option's samples and the flags
//! they must become, for the npm tests), the npm package's
//! `lib/option-defs.js` and vite.d.ts's declarations. Pure text; the tests
//! compare each with its file and `PRECOMPRESS_BLESS=1` writes them.
use super::{Kind, Name, Opt, PluginBase, RUN};
use serde_json::{json, Value as J};

/// The row's `why` on the surfaces it is not on.
fn why(o: &Opt) -> String {
    let mut w: Vec<&str> = Vec::new();
    for n in [o.toml, o.plugin] {
        if let Name::Not(r) = n {
            if !w.contains(&r) {
                w.push(r);
            }
        }
    }
    w.join("; ")
}

fn value_text(o: &Opt) -> String {
    match &o.kind {
        Kind::Switch | Kind::Negation | Kind::Sets { .. } => "switch".into(),
        Kind::Int { .. } => format!("integer, {}", o.range_text().unwrap_or_default()),
        Kind::Ratio { .. } => "number in (0, 1]".into(),
        Kind::Size { .. } => "size (bytes, or 2KiB, 150KB)".into(),
        Kind::Choice { values, list, .. } => {
            let v = values.join(", ");
            if *list {
                format!("list of {v}")
            } else {
                format!("one of {v}")
            }
        }
        Kind::Path { .. } => "path".into(),
        Kind::Releases => "folder or URL, repeatable".into(),
        Kind::Globs => "glob, repeatable".into(),
        Kind::Budgets => "GLOB=SIZE, repeatable".into(),
        Kind::Text { .. } => "text".into(),
    }
}

/// docs/config.md's table: one row an option.
pub fn docs_table() -> String {
    let code = |n: Name| n.name().map_or("—".to_string(), |k| format!("`{k}`"));
    let mut out = String::from(
        "| flag | precompress.toml | the integrations' option | value | default | what it does; not on every surface because |\n|---|---|---|---|---|---|\n",
    );
    for o in RUN {
        let short = o.short.map_or(String::new(), |s| format!("`-{s}`, "));
        let w = why(o);
        out.push_str(&format!(
            "| {short}`--{}` | {} | {} | {} | {} | {}{} |\n",
            o.flag,
            code(o.toml),
            code(o.plugin),
            value_text(o),
            o.default_text().map_or(String::new(), |d| format!("`{d}`")),
            o.help.replace('|', "\\|"),
            if w.is_empty() {
                String::new()
            } else {
                format!("; not on every surface: {w}")
            }
        ));
    }
    out
}

/// A plugin option's samples: each value and the flags (after DIR) it
/// must become, `{root}` and `{outDir}` standing for Vite's folders.
pub fn samples(o: &Opt) -> Vec<(J, Vec<String>)> {
    let f = format!("--{}", o.flag);
    let one = |v: J, a: &str| (v, vec![f.clone(), a.to_string()]);
    let mut s = match &o.kind {
        Kind::Switch => vec![(json!(true), vec![f.clone()])],
        Kind::Negation => vec![(json!(false), vec![f.clone()])],
        Kind::Int { range, .. } => {
            let n = if *range.end() <= 1 << 16 {
                (range.start() + range.end()) / 2
            } else {
                20_000
            };
            vec![one(json!(n), &n.to_string())]
        }
        Kind::Ratio { .. } => vec![one(json!(0.8), "0.8")],
        Kind::Size { .. } => vec![one(json!("2KiB"), "2KiB"), one(json!(3000), "3000")],
        Kind::Choice {
            values, list: true, ..
        } => {
            vec![one(json!(values[..2]), &values[..2].join(","))]
        }
        Kind::Choice { values, bools, .. } => {
            let mut v = vec![one(json!(values[1]), values[1])];
            if let Some([on, off]) = bools {
                v.push(one(json!(true), on));
                v.push(one(json!(false), off));
            }
            v
        }
        Kind::Path { from } => {
            let at = match from {
                PluginBase::Root => "{root}",
                PluginBase::OutDir => "{outDir}",
            };
            vec![one(json!("p"), &format!("{at}/p"))]
        }
        Kind::Releases => vec![
            one(json!("p"), "{root}/p"),
            one(
                json!("https://example.com/app/"),
                "https://example.com/app/",
            ),
        ],
        Kind::Globs => vec![(
            json!(["*.js", "a/**"]),
            vec![format!("{f}=*.js"), format!("{f}=a/**")],
        )],
        Kind::Budgets => vec![(json!({"*.js": "150KB"}), vec![format!("{f}=*.js=150KB")])],
        Kind::Text { .. } | Kind::Sets { .. } => Vec::new(),
    };
    if let Some(off) = o.plugin_false {
        s.push((json!(false), vec![format!("--{off}")]));
    }
    s
}

/// Sizes, valid and not, whose verdict the plugin must share with the binary.
const SIZE_SAMPLES: [&str; 16] = [
    "2048", "1KiB", " 1.5 MB ", "150kb", "1.", ".5k", "2 GiB", "0", "1 KiBs", "big", "1.2.3", "-1",
    "1e3", "KB", "", "10 kB",
];

/// fixtures/options.json.
pub fn fixture() -> String {
    let rows: Vec<J> = RUN
        .iter()
        .map(|o| {
            let samples: Vec<J> = match o.plugin {
                Name::Is(_) => samples(o)
                    .into_iter()
                    .map(|(v, a)| json!({"value": v, "args": a}))
                    .collect(),
                Name::Not(_) => Vec::new(),
            };
            json!({
                "flag": o.flag,
                "toml": o.toml.name(),
                "plugin": o.plugin.name(),
                "samples": samples,
                "why": Some(why(o)).filter(|w| !w.is_empty()),
            })
        })
        .collect();
    // Sizes as the binary reads them, for the plugin's check of a size.
    let sizes: Vec<J> = SIZE_SAMPLES
        .iter()
        .map(|t| json!({"text": t, "valid": crate::cli::budget::parse_size(t).is_ok()}))
        .collect();
    let t = json!({
        "sizes": sizes,
        "about": "Made from src/cli/options.rs (the one definition of every option of `precompress DIR`) by `PRECOMPRESS_BLESS=1 cargo test --bin precompress options`; do not edit. For npm/precompressor/test/options.test.js: each plugin option's sample values and the flags after DIR each must become; the Rust tests parse the same flags.",
        "options": rows,
    });
    serde_json::to_string_pretty(&t).expect("plain data") + "\n"
}

/// npm/precompressor/lib/option-defs.js: what the plugin validates and
/// how it turns each option into flags.
pub fn option_defs() -> String {
    let rows: Vec<J> = RUN
        .iter()
        .filter_map(|o| {
            let plugin = o.plugin.name()?;
            let mut d = json!({"flag": o.flag, "plugin": plugin});
            let m = d.as_object_mut().expect("an object");
            let kind = match &o.kind {
                Kind::Switch => "switch",
                Kind::Negation => "negation",
                Kind::Int { range, .. } => {
                    m.insert("min".into(), json!(range.start()));
                    // Past 2^53 a JS number is not exact: the plugin's bound is its safe maximum.
                    if *range.end() < 1 << 53 {
                        m.insert("max".into(), json!(range.end()));
                    }
                    "int"
                }
                Kind::Ratio { .. } => "ratio",
                Kind::Size { .. } => "size",
                Kind::Choice {
                    values,
                    list,
                    bools,
                    ..
                } => {
                    m.insert("values".into(), json!(values));
                    if let Some([on, off]) = bools {
                        m.insert("bools".into(), json!([on, off]));
                    }
                    if *list {
                        "list"
                    } else {
                        "choice"
                    }
                }
                Kind::Path { from } => {
                    m.insert(
                        "from".into(),
                        json!(match from {
                            PluginBase::Root => "root",
                            PluginBase::OutDir => "outDir",
                        }),
                    );
                    if let Some(off) = o.plugin_false {
                        m.insert("onFalse".into(), json!(format!("--{off}")));
                    }
                    "path"
                }
                Kind::Releases => "releases",
                Kind::Globs => "globs",
                Kind::Budgets => "budgets",
                Kind::Text { .. } | Kind::Sets { .. } => unreachable!("no plugin option"),
            };
            m.insert("kind".into(), json!(kind));
            Some(d)
        })
        .collect();
    let units: Vec<&str> = crate::cli::budget::SIZE_UNITS
        .iter()
        .map(|(u, _)| *u)
        .collect();
    let mut out = format!(
        "// Made from src/cli/options.rs (the one definition of every option of\n// `precompress DIR`) by `PRECOMPRESS_BLESS=1 cargo test --bin precompress options`;\n// do not edit. options.js validates each option and turns it into its flag from these rows.\n\n// A size's units, lower case (src/cli/budget.rs).\nexport const SIZE_UNITS = {};\n\nexport const OPTIONS = [\n",
        json!(units)
    );
    for r in rows {
        out.push_str(&format!("  {r},\n"));
    }
    out.push_str("];\n");
    out
}

fn ts_type(o: &Opt) -> String {
    let lit = |vs: &[&str]| {
        vs.iter()
            .map(|v| format!("'{v}'"))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    match &o.kind {
        Kind::Switch | Kind::Negation => "boolean".into(),
        Kind::Int { .. } | Kind::Ratio { .. } => "number".into(),
        Kind::Size { .. } => "Size".into(),
        Kind::Choice {
            values, list: true, ..
        } => format!("Array<{}>", lit(values)),
        Kind::Choice {
            values,
            bools: Some(_),
            ..
        } => format!("boolean | {}", lit(values)),
        Kind::Choice { values, .. } => lit(values),
        Kind::Path {
            from: PluginBase::OutDir,
        } => "true | string".into(),
        Kind::Path { .. } if o.plugin_false.is_some() => "string | false".into(),
        Kind::Path { .. } | Kind::Text { .. } => "string".into(),
        Kind::Releases => "string | string[]".into(),
        Kind::Globs => "string | RegExp | Array<string | RegExp>".into(),
        Kind::Budgets => "Record<string, Size>".into(),
        Kind::Sets { .. } => unreachable!("no plugin option"),
    }
}

fn ts_default(o: &Opt) -> Option<String> {
    match &o.kind {
        Kind::Switch => Some("false".into()),
        Kind::Negation => Some("true".into()),
        Kind::Choice {
            default: Some(d),
            list: true,
            ..
        } => Some(format!(
            "[{}]",
            d.split(',')
                .map(|v| format!("'{v}'"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Kind::Choice {
            default: Some(d), ..
        }
        | Kind::Size { default: Some(d) } => Some(format!("'{d}'")),
        _ => o.default_text(),
    }
}

pub const DTS_START: &str = "  // options: made from src/cli/options.rs by `PRECOMPRESS_BLESS=1 cargo test --bin precompress options`\n";
pub const DTS_END: &str = "  // end of options\n";

/// vite.d.ts's declarations of the run's options.
pub fn dts() -> String {
    let mut out = String::new();
    for o in RUN {
        let Some(name) = o.plugin.name() else {
            continue;
        };
        let mut doc = o.help_with_range();
        let flag = match o.kind {
            Kind::Negation => format!("`false`: `--{}`", o.flag),
            _ => format!("`--{}`", o.flag),
        };
        doc.push_str(&format!(" ({flag})."));
        if let Some(extra) = o.plugin_doc {
            doc.push_str(&format!(" {extra}"));
        }
        if let Some(d) = ts_default(o) {
            doc.push_str(&format!(" Default: {d}."));
        }
        out.push_str(&format!("  /** {doc} */\n  {name}?: {};\n", ts_type(o)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each made file is what the table makes (PRECOMPRESS_BLESS=1 writes it).
    fn holds(rel: &str, want: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if std::env::var_os("PRECOMPRESS_BLESS").is_some() {
            std::fs::write(&path, want).unwrap();
            return;
        }
        assert!(
            have == want,
            "{rel} is not what src/cli/options.rs makes: PRECOMPRESS_BLESS=1 cargo test --bin precompress options"
        );
    }

    /// `text` with what lies between `start` and `end` replaced by `inner`.
    fn between(rel: &str, start: &str, end: &str, inner: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        let (head, rest) = text
            .split_once(start)
            .unwrap_or_else(|| panic!("{rel}: no {start:?}"));
        let (_, tail) = rest
            .split_once(end)
            .unwrap_or_else(|| panic!("{rel}: no {end:?}"));
        format!("{head}{start}{inner}{end}{tail}")
    }

    #[test]
    fn the_made_files_are_the_table_s() {
        holds("fixtures/options.json", &fixture());
        holds("npm/precompressor/lib/option-defs.js", &option_defs());
        let docs = between(
            "docs/config.md",
            "<!-- options: made from src/cli/options.rs by `PRECOMPRESS_BLESS=1 cargo test --bin precompress options` -->\n",
            "<!-- end of options -->\n",
            &docs_table(),
        );
        holds("docs/config.md", &docs);
        let dts = between("npm/precompressor/vite.d.ts", DTS_START, DTS_END, &dts());
        holds("npm/precompressor/vite.d.ts", &dts);
    }
}
