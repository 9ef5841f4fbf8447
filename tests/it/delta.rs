//! Run-to-run deltas (issue 14): a command run again in the same session and directory,
//! with a different output, leads with what changed since the previous run.
//!
//! The pairs under `tests/delta/` are a previous and a current output of one command, with
//! the failures the current run fixed and added, written down by hand.

use std::path::Path;

use serde_json::Value;

use crate::util::{TestEnv, stderr, stdout};

/// One pair: the command, both runs, and the delta expected.
struct Pair {
    name: String,
    command: String,
    before: (String, i64),
    after: (String, i64),
    summary: String,
    fixed: Vec<String>,
    new: Vec<String>,
}

fn pairs() -> Vec<Pair> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/delta");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    assert!(names.len() >= 4, "{names:?}");
    names
        .iter()
        .map(|path| {
            let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
            let run = |k: &str| {
                (v[k]["text"].as_str().unwrap().to_owned(), v[k]["exitCode"].as_i64().unwrap())
            };
            let strings = |k: &str| -> Vec<String> {
                v[k].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect()
            };
            Pair {
                name: path.file_stem().unwrap().to_string_lossy().into_owned(),
                command: v["command"].as_str().unwrap().to_owned(),
                before: run("before"),
                after: run("after"),
                summary: v["summary"].as_str().unwrap().to_owned(),
                fixed: strings("fixed"),
                new: strings("new"),
            }
        })
        .collect()
}

/// `tj reduce` of `text` as `command` exiting `code`, in `session` (none: no TJ_SESSION).
fn reduce(
    env: &TestEnv,
    session: Option<&str>,
    command: &str,
    (text, code): &(String, i64),
) -> String {
    let code = code.to_string();
    let mut cmd = env.cmd(&["reduce", "--exit-code", &code, "--command", command]);
    if let Some(session) = session {
        cmd.env("TJ_SESSION", session);
    }
    let out = env.run_cmd(cmd, text.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    stdout(&out)
}

fn id_of(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes()).iter().take(6).map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_rerun_leads_with_what_was_fixed_what_is_new_and_what_still_fails() {
    for pair in pairs() {
        let env = TestEnv::new();
        let first = reduce(&env, Some("s1"), &pair.command, &pair.before);
        assert!(!first.starts_with("[tj] since"), "{}: {first}", pair.name);
        let second = reduce(&env, Some("s1"), &pair.command, &pair.after);

        // The current evidence as it would be without a previous run, led by the delta.
        let other = TestEnv::new();
        let alone = reduce(&other, None, &pair.command, &pair.after)
            .replace(&other.data().display().to_string(), &env.data().display().to_string());
        let header = second.strip_suffix(&alone).unwrap_or_else(|| {
            panic!("{}: the rendition after the header changed:\n{second}\n{alone}", pair.name)
        });

        let mut lines = header.lines();
        let summary = lines.next().unwrap();
        let lead = format!("[tj] since {} (", id_of(&pair.before.0));
        assert!(summary.starts_with(&lead), "{}: {summary}", pair.name);
        assert!(
            summary.ends_with(&format!(" s ago): {}", pair.summary)),
            "{}: {summary}",
            pair.name
        );
        let mut expected: Vec<String> =
            pair.fixed.iter().map(|k| format!("[tj]   fixed: {k}")).collect();
        expected.extend(pair.new.iter().map(|k| format!("[tj]   new: {k}")));
        assert_eq!(lines.collect::<Vec<_>>(), expected, "{}", pair.name);
    }
}

#[test]
fn no_delta_across_sessions_directories_or_outside_a_session() {
    let pair = pairs().into_iter().find(|p| p.name == "cargo-test").unwrap();
    let env = TestEnv::new();
    reduce(&env, None, &pair.command, &pair.before);
    assert!(!reduce(&env, None, &pair.command, &pair.after).starts_with("[tj] since"));

    reduce(&env, Some("a"), &pair.command, &pair.before);
    assert!(!reduce(&env, Some("b"), &pair.command, &pair.after).starts_with("[tj] since"));

    // Another command in the same session is another history.
    reduce(&env, Some("c"), "cargo test --lib", &pair.before);
    assert!(!reduce(&env, Some("c"), &pair.command, &pair.after).starts_with("[tj] since"));

    // Another directory.
    let mut cmd = env.cmd(&["reduce", "--exit-code", "101", "--command", &pair.command]);
    cmd.env("TJ_SESSION", "d").current_dir(env.root.join("home"));
    env.run_cmd(cmd, pair.before.0.as_bytes());
    assert!(!reduce(&env, Some("d"), &pair.command, &pair.after).starts_with("[tj] since"));
}

#[test]
fn an_identical_rerun_is_still_a_stub_and_the_delta_follows_the_last_run() {
    let pair = pairs().into_iter().find(|p| p.name == "cargo-test").unwrap();
    let env = TestEnv::new();
    reduce(&env, Some("s"), &pair.command, &pair.before);
    let stub = reduce(&env, Some("s"), &pair.command, &pair.before);
    assert!(stub.starts_with("[tj] same output as"), "{stub}");
    let second = reduce(&env, Some("s"), &pair.command, &pair.after);
    assert!(second.starts_with("[tj] since"), "{second}");
    // Back to the first output: the delta is against the run just before, inverted.
    let third = reduce(&env, Some("s"), &pair.command, &pair.before);
    let summary = third.lines().next().unwrap();
    assert!(summary.starts_with(&format!("[tj] since {} (", id_of(&pair.after.0))), "{third}");
    assert!(summary.ends_with("): 1 fixed, 2 new failures, 1 still failing"), "{third}");
}

#[test]
fn tj_run_leads_with_the_delta_too() {
    let pair = pairs().into_iter().find(|p| p.name == "pytest").unwrap();
    let env = TestEnv::new();
    let out_file = env.write("work/out.txt", &pair.before.0);
    let shim = env.write("work/pytest", "#!/bin/sh\ncat out.txt\nexit 1\n");
    let exec = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755);
    std::fs::set_permissions(&shim, exec).unwrap();
    let run = |env: &TestEnv| {
        let mut cmd = env.cmd(&["run", "--agent", "--", "./pytest", "-v"]);
        cmd.env("TJ_SESSION", "r");
        env.run_cmd(cmd, b"")
    };
    let first = run(&env);
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    assert!(!stdout(&first).contains("[tj] since"), "{}", stdout(&first));
    env.write("work/out.txt", &pair.after.0);
    assert!(out_file.exists());
    let second = run(&env);
    assert_eq!(second.status.code(), Some(1), "{}", stderr(&second));
    let text = stdout(&second);
    assert!(text.contains("): 1 fixed, 1 new failure, 1 still failing\n"), "{text}");
    assert!(text.contains("[tj]   fixed: tests/test_cart.py::test_discount\n"), "{text}");
}

#[test]
fn replay_does_not_count_a_delta_header_as_drift() {
    let pair = pairs().into_iter().find(|p| p.name == "cargo-test").unwrap();
    let env = TestEnv::new();
    reduce(&env, Some("s"), &pair.command, &pair.before);
    assert!(reduce(&env, Some("s"), &pair.command, &pair.after).starts_with("[tj] since"));
    let out = env.run(&["rules", "replay", "--format", "json"], b"");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = v.to_string();
    assert!(text.contains("\"changed\":0"), "{text}");
    assert!(!text.contains("\"changed\":1") && !text.contains("\"changed\":2"), "{text}");
}
