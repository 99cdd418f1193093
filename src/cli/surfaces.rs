//! Each option once: `fixtures/options.json` lists every option of
//! `precompress DIR` with its name on each surface, and these tests hold the
//! flags (clap) and precompress.toml's keys to it, and make docs/config.md's
//! option table from it (the npm
//! package's options, their arguments and vite.d.ts are held to it by
//! npm/precompressor/test/options.test.js). An option on one surface and
//! not in the table, or in the table and missing from a surface without a
//! `why`, fails here.

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    fn table() -> Vec<Value> {
        let t: Value = serde_json::from_str(include_str!("../../fixtures/options.json")).unwrap();
        t["options"].as_array().unwrap().clone()
    }

    fn column(rows: &[Value], name: &str) -> BTreeSet<String> {
        rows.iter()
            .filter_map(|r| r[name].as_str().map(str::to_string))
            .collect()
    }

    #[test]
    fn every_flag_of_a_run_is_in_the_table_and_every_row_is_a_flag() {
        let cmd = <crate::cli::args::Cli as clap::CommandFactory>::command();
        let flags: BTreeSet<String> = cmd
            .get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string))
            .filter(|l| l != "help" && l != "version")
            .collect();
        assert_eq!(flags, column(&table(), "flag"));
    }

    #[test]
    fn every_key_of_precompress_toml_is_in_the_table_and_each_missing_one_says_why() {
        let rows = table();
        let keys: BTreeSet<String> = crate::cli::configfile::FileConfig::keys()
            .into_iter()
            .collect();
        assert!(keys.len() > 10, "{keys:?}");
        assert_eq!(keys, column(&rows, "toml"));
        for r in &rows {
            if r["toml"].is_null() {
                assert!(r["why"].is_string(), "{r}: no toml key and no why");
            }
            if r["plugin"].is_null() {
                assert!(r["why"].is_string(), "{r}: no plugin option and no why");
            }
        }
    }

    const START: &str = "<!-- options: made from fixtures/options.json by src/cli/surfaces.rs; PRECOMPRESS_BLESS=1 cargo test --bin precompress surfaces writes it -->\n";
    const END: &str = "<!-- end of options -->\n";

    /// The option table of docs/config.md: one row an option.
    fn docs_table(rows: &[Value]) -> String {
        let code = |v: &Value, f: &dyn Fn(&str) -> String| v.as_str().map_or("—".to_string(), f);
        let mut out = String::from(
            "| flag | precompress.toml | the integrations' option | not on every surface because |\n|---|---|---|---|\n",
        );
        for r in rows {
            let sample = if r["plugin"].is_null() {
                String::new()
            } else {
                format!(" (`{}`)", r["sample"])
            };
            out.push_str(&format!(
                "| `--{}` | {} | {}{} | {} |\n",
                r["flag"].as_str().unwrap(),
                code(&r["toml"], &|k| format!("`{k}`")),
                code(&r["plugin"], &|k| format!("`{k}`")),
                sample,
                r["why"].as_str().unwrap_or("")
            ));
        }
        out
    }

    #[test]
    fn docs_config_carries_the_table_as_made_from_it() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/config.md");
        let docs = std::fs::read_to_string(&path).unwrap();
        let (head, rest) = docs
            .split_once(START)
            .expect("docs/config.md: no options table start");
        let (_, tail) = rest
            .split_once(END)
            .expect("docs/config.md: no options table end");
        let want = format!("{head}{START}{}{END}{tail}", docs_table(&table()));
        if std::env::var_os("PRECOMPRESS_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        assert!(
            docs == want,
            "docs/config.md's option table is not fixtures/options.json's: PRECOMPRESS_BLESS=1 cargo test --bin precompress surfaces"
        );
    }
}
