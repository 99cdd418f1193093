//! The shared serving table, `fixtures/serve-cases.json`, run against
//! `precompress serve` and the tower `ServeManifest` (in the axum example):
//! the same data `npm/serve-cases.mjs` runs against the Node handler, the
//! Worker in workerd and the edge function, so the servers cannot drift.
//! The runner is `serve_util::cases`; the table's `about` says how a case
//! reads. The fast tier; the Node handler beside `precompress serve` is in
//! `tests/serve_node_handler.rs`.

mod serve_util;

use serve_util::cases::{build, run_table, table, Profile};
use serve_util::*;

/// Everything: nothing is excused.
const ALL: Profile = Profile::strict(&["hosts", "conditional", "range", "rebuild", "pages"]);

#[test]
fn precompress_serve_answers_the_shared_table() {
    let t = table();
    let tmp = tempfile::tempdir().unwrap();
    let site = build(&t, tmp.path());
    let s = start_precompress(&site, &[]);
    let failures = run_table(&t, tmp.path(), &site, s.addr, &ALL);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_tower_service_answers_the_shared_table() {
    let t = table();
    let tmp = tempfile::tempdir().unwrap();
    let site = build(&t, tmp.path());
    let server = start_example(&site);
    let failures = run_table(&t, tmp.path(), &site, server.1, &ALL);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
