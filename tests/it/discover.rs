//! `tj discover` through the binary, on the fixture transcripts (see `transcripts.rs`) and a
//! ledger written by the test.

use serde_json::Value;

use crate::transcripts::fixtures;
use crate::util::*;

/// Runs on 2026-11-30 (1796025600 is 08:00:00 UTC):
/// - `frobnicate --all`: no rule, fell to the fallback: 3,000 → 2,500 tokens;
/// - `cargo build`: its rule saved 10% (1,000 → 900);
/// - `cargo build --release`: its rule saved 90% (not a finding);
/// - `frobnicate --dry-run`: fell to the fallback on 100 tokens (too small to be one);
/// - `git status` at 09:00:25, the transcript's call: a hook ran it through tj, which passed
///   it on as it was (27 tokens, too small to be a finding itself).
const LEDGER: &str = r#"{"time":1796025600,"id":"111111111111","command":"frobnicate --all","rule":"generic/fallback","family":"generic","exitCode":0,"chars":[11400,9500],"tokens":[3000,2500],"reduced":true,"lossless":false,"deduped":false}
{"time":1796025700,"id":"222222222222","command":"cargo build","rule":"build/cargo-build","family":"build","exitCode":0,"chars":[3800,3420],"tokens":[1000,900],"reduced":true,"lossless":false,"deduped":false}
{"time":1796025800,"id":"333333333333","command":"cargo build --release","rule":"build/cargo-build","family":"build","exitCode":0,"chars":[38000,3800],"tokens":[10000,1000],"reduced":true,"lossless":false,"deduped":false}
{"time":1796025900,"id":"444444444444","command":"frobnicate --dry-run","rule":"generic/fallback","family":"generic","exitCode":0,"chars":[380,380],"tokens":[100,100],"reduced":false,"lossless":true,"deduped":false}
{"time":1796029225,"id":"555555555555","command":"git status","rule":"git/status","family":"git","exitCode":0,"chars":[99,99],"tokens":[27,27],"reduced":false,"lossless":true,"deduped":false}
"#;

fn discover_json(env: &TestEnv, args: &[&str]) -> Value {
    let mut all = vec!["discover", "--format", "json", "--transcripts-dir"];
    let dir = fixtures().display().to_string();
    all.push(&dir);
    all.extend_from_slice(args);
    let out = env.run(&all, b"");
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn commands_are_ranked_by_tokens_each_with_what_would_catch_it() {
    let env = TestEnv::new();
    env.write("data/ledger.jsonl", LEDGER);
    let doc = discover_json(&env, &[]);
    let rows = doc["commands"].as_array().unwrap();
    let ranked: Vec<(&str, &str, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["command"].as_str().unwrap(),
                r["reason"].as_str().unwrap(),
                r["tokens"].as_u64().unwrap(),
            )
        })
        .collect();
    // `git status` went through tj (the ledger says so); `tj run -- …` calls and the call
    // whose output carries `[tj]` lines are not findings.
    assert_eq!(
        ranked,
        [
            ("frobnicate", "fallback", 2500),
            ("cargo build", "little-saved", 900),
            ("cargo test", "not-through-tj", 188),
            ("npm test", "not-through-tj", 139),
        ]
    );
    assert_eq!(rows[0]["rule"], Value::Null);
    let config = env.root.join("config/rules").display().to_string();
    assert_eq!(
        rows[0]["suggestion"],
        format!("no rule; write one in `{config}` (see `tj rules explain -- frobnicate`)")
    );
    assert_eq!(rows[1]["rule"], "build/cargo-build");
    assert!(
        rows[1]["suggestion"]
            .as_str()
            .unwrap()
            .starts_with("rule build/cargo-build saved 10% of it"),
        "{}",
        rows[1]
    );
    assert_eq!(rows[2]["rule"], "tests/cargo-test");
    assert_eq!(rows[2]["harnesses"], serde_json::json!(["claude-code"]));
    assert_eq!(rows[2]["example"], "cargo test 2>&1");
    let catch = rows[2]["suggestion"].as_str().unwrap();
    assert!(
        catch.starts_with("rule tests/cargo-test handles it; it did not go through tj: install the hook (`tj install claude-code`)")
            && catch.contains("wraps `cargo`"),
        "{catch}"
    );
    let catch = rows[3]["suggestion"].as_str().unwrap();
    assert!(catch.contains("`tj install codex`"), "{catch}");
}

#[test]
fn without_the_ledger_the_unmarked_call_is_a_finding_and_the_hook_says_why_it_leaves_it() {
    let env = TestEnv::new();
    let doc = discover_json(&env, &[]);
    let rows = doc["commands"].as_array().unwrap();
    let last = rows.last().unwrap();
    assert_eq!((last["command"].as_str(), last["tokens"].as_u64()), (Some("git status"), Some(27)));
    let catch = last["suggestion"].as_str().unwrap();
    assert!(
        catch.starts_with("rule git/status handles it, but the hook leaves this line alone ("),
        "{catch}"
    );
    assert!(catch.ends_with("run it as `tj run -- git status`"), "{catch}");
}

#[test]
fn limit_and_since_narrow_the_list() {
    let env = TestEnv::new();
    env.write("data/ledger.jsonl", LEDGER);
    let doc = discover_json(&env, &["--limit", "2"]);
    assert_eq!(doc["commands"].as_array().unwrap().len(), 2);
    // Everything happened before 2026-12-01.
    let out = env.run(
        &[
            "discover",
            "--since",
            "2026-12-01",
            "--transcripts-dir",
            &fixtures().display().to_string(),
        ],
        b"",
    );
    assert!(out.status.success());
    assert!(stdout(&out).starts_with("nothing found: every shell call"), "{}", stdout(&out));
    // On 2026-11-30 alone: the Codex session (the 29th) is out, the rest is in.
    let doc = discover_json(&env, &["--since", "2026-11-30"]);
    let names: Vec<&str> = doc["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["command"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["frobnicate", "cargo build", "cargo test"]);
}

#[test]
fn the_text_list_names_the_command_an_example_and_the_catch() {
    let env = TestEnv::new();
    env.write("data/ledger.jsonl", LEDGER);
    let out = env.run(&["discover", "--transcripts-dir", &fixtures().display().to_string()], b"");
    let text = stdout(&out);
    assert!(
        text.starts_with("The commands that cost the agent the most context without tj"),
        "{text}"
    );
    assert!(text.contains("\n 1. frobnicate — 2,500 tokens in 1 run, fell to generic/fallback\n    e.g. frobnicate --all\n    → no rule; write one in "), "{text}");
    assert!(text.contains("\n 3. cargo test — 188 tokens in 1 run, not through tj (claude-code)\n    e.g. cargo test 2>&1\n"), "{text}");
    let csv = stdout(&env.run(
        &["discover", "--format", "csv", "--transcripts-dir", &fixtures().display().to_string()],
        b"",
    ));
    assert!(csv.starts_with("rank,command,reason,runs,tokens,harnesses,rule,example,suggestion\n1,frobnicate,fallback,1,2500,,,frobnicate --all,"), "{csv}");
    assert_eq!(csv.lines().count(), 5, "{csv}");
}

#[test]
fn nothing_to_read_is_said_with_the_directories_looked_in() {
    let env = TestEnv::new();
    let out = env.run(&["discover"], b"");
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.starts_with("no transcripts found in "), "{text}");
    assert!(text.contains(".claude/projects"), "{text}");
}
