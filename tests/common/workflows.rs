//! The GitHub Action's definition and the `${{ }}` expressions of a step's
//! script, as `tests/action.rs` and `tests/shellcheck.rs` read them.

use serde_norway::Value;

use super::repo;

pub fn action() -> Value {
    serde_norway::from_str(&std::fs::read_to_string(repo().join("action.yml")).unwrap()).unwrap()
}

/// Every `${{ ... }}` expression in `text`, trimmed.
pub fn expressions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("${{") {
        let end = rest[i..].find("}}").expect("unclosed ${{") + i;
        out.push(rest[i + 3..end].trim().to_string());
        rest = &rest[end + 2..];
    }
    out
}
