//! The e2e tier of `tests/action.rs`: every bash script of the action
//! (`action.yml`) and of the workflows passes shellcheck, and takes no
//! `${{ }}` expression into a workflow's script. Needs shellcheck; `cargo test
//! -- --include-ignored` runs it (`bash .ci/run` installs it).

mod common;

use std::fs;
use std::process::Command;

use common::repo;
use common::workflows::{action, expressions};
use serde_norway::Value;

#[test]
#[ignore = "e2e tier: needs shellcheck; run with cargo test -- --include-ignored (bash .ci/run installs all)"]
fn every_bash_script_of_the_action_and_workflows_passes_shellcheck() {
    // Debian's shellcheck; .ci/run installs it.
    let mut scripts = Vec::new();
    for step in action()["runs"]["steps"].as_sequence().unwrap() {
        if let Some(run) = step["run"].as_str() {
            scripts.push((format!("action.yml step {:?}", step["id"]), run.to_string()));
        }
    }
    for wf in ["ci.yml", "action.yml", "release.yml"] {
        let text = fs::read_to_string(repo().join(".github/workflows").join(wf)).unwrap();
        let v: Value = serde_norway::from_str(&text).unwrap();
        for (job, j) in v["jobs"].as_mapping().unwrap() {
            for step in j["steps"].as_sequence().unwrap() {
                if let Some(run) = step["run"].as_str() {
                    assert!(
                        expressions(run).is_empty(),
                        "{wf}: pass ${{{{ }}}} via env:"
                    );
                    scripts.push((format!("{wf} job {job:?}"), run.to_string()));
                }
            }
        }
    }
    assert!(scripts.len() >= 8, "{}", scripts.len());
    for (name, script) in scripts {
        let mut child = Command::new("shellcheck")
            .args(["--shell=bash", "--severity=style", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("shellcheck (apt-get install shellcheck)");
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{name}:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
