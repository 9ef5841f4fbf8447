//! `tj stats --transcripts` through the binary, on fixture transcripts written to the
//! harnesses' published shapes (tests/fixtures/transcripts):
//!
//! - `claude/projects/-home-dev-demo/5f3c1e2a-….jsonl`: one session of Claude Code, with a
//!   response streamed as three lines repeating one `message.id`, a `cargo test` not
//!   through tj, a `tj run -- cargo build`, a `git status`, and a line cut off mid-write;
//!   its subagent's transcript in `5f3c1e2a-…/subagents/agent-a1b2c3d4.jsonl`.
//! - `claude/projects/-home-dev-other/9e8d7c6b-….jsonl`: nine API calls whose hit rate
//!   falls from 90% to 50% over the last three.
//! - `codex/sessions/2026/11/29/rollout-…-0199a1b2-….jsonl`: one Codex session, with a
//!   `token_count` repeated for its rate limits, `npm test` not through tj, `tj run --
//!   cargo clippy`, a `pytest -q` whose output carries tj's marks (a hook rewrote it), and
//!   a line cut off mid-write.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::*;

const CLAUDE_MAIN: &str = "5f3c1e2a-8b7d-4c6e-9a1f-2b3c4d5e6f70";
const CLAUDE_FALLING: &str = "9e8d7c6b-5a49-4382-9716-05f4e3d2c1b0";
const CODEX: &str = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts")
}

fn dir(name: &str) -> String {
    fixtures().join(name).display().to_string()
}

/// `tj stats --transcripts --format json` with `args`, and its parsed output.
fn stats_json(env: &TestEnv, args: &[&str]) -> (Value, String) {
    let mut all = vec!["stats", "--transcripts", "--format", "json"];
    all.extend_from_slice(args);
    let out = env.run(&all, b"");
    assert!(out.status.success(), "{}", stderr(&out));
    (serde_json::from_slice(&out.stdout).unwrap(), stderr(&out))
}

fn session<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["sessions"].as_array().unwrap().iter().find(|s| s["session"] == id).unwrap()
}

fn close(value: &Value, expected: f64) -> bool {
    (value.as_f64().unwrap() - expected).abs() < 1e-9
}

#[test]
fn claude_code_transcripts_read_to_exact_totals() {
    let env = TestEnv::new();
    let (doc, err) = stats_json(&env, &["--transcripts-dir", &dir("claude")]);
    let s = session(&doc, CLAUDE_MAIN);
    // msg_01A (three lines, one id; output 1, 1, 87: the largest), msg_01B (two lines),
    // msg_01C, msg_01D, and the subagent's msg_01E:
    //   input        4 +     6 +     3 +     2 +    10 =     25
    //   cache write  2100 +  500 +   300 +   200 +  1000 =  4,100
    //   cache read  13000 + 15100 + 15600 + 15900 +     0 = 59,600
    //   output      87 +    60 +    40 +   120 +    30 =    337
    assert_eq!((s["input"].as_u64(), s["cacheRead"].as_u64()), (Some(25), Some(59_600)));
    assert_eq!((s["cacheWrite"].as_u64(), s["output"].as_u64()), (Some(4_100), Some(337)));
    assert_eq!(s["apiCalls"], 5);
    // 59,600 / (25 + 59,600 + 4,100)
    assert!(close(&s["hitRate"], 59_600.0 / 63_725.0), "{s}");
    // Shell output, estimated at 3.8 characters a token, rounded up: `cargo test` 714
    // characters → 188, not through tj; `tj run -- cargo build` 332 → 88, through tj (its
    // command); `git status` 99 → 27, not through tj.
    assert_eq!((s["shellCalls"].as_u64(), s["shellTokens"].as_u64()), (Some(3), Some(303)));
    assert_eq!(s["tjTokens"], 88);
    assert!(close(&s["tjShare"], 88.0 / 303.0), "{s}");
    // Four calls in the main conversation (the subagent's starts its own cache): too few.
    assert_eq!(s["hitRateTrend"], Value::Null);
    assert_eq!(s["cwd"], "/home/dev/demo");
    // 2026-11-30T09:00:00Z to 09:00:30Z; the summary line has no session and no time.
    assert_eq!(
        (s["firstTime"].as_u64(), s["lastTime"].as_u64()),
        (Some(1_796_029_200), Some(1_796_029_230))
    );

    let f = session(&doc, CLAUDE_FALLING);
    // Six calls at 9,000 read of 10,000, then three at 5,000 of 10,000.
    let t = &f["hitRateTrend"];
    assert!(close(&t["before"], 0.9) && close(&t["after"], 0.5) && t["falling"] == true, "{f}");
    assert!(close(&f["hitRate"], 69_000.0 / 90_000.0), "{f}");
    assert_eq!(f["shellTokens"], 0);
    assert_eq!(f["tjShare"], Value::Null);

    assert_eq!(doc["total"]["sessions"], 2);
    assert_eq!(doc["total"]["input"], 925);
    assert_eq!(doc["read"]["files"], 3);
    assert_eq!(doc["read"]["skippedLines"], 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("skipped 1 line in 1 file"), "{err}");
}

#[test]
fn codex_rollouts_read_to_exact_totals() {
    let env = TestEnv::new();
    let (doc, err) = stats_json(&env, &["--transcripts-dir", &dir("codex")]);
    assert_eq!(doc["sessions"].as_array().unwrap().len(), 1);
    let s = session(&doc, CODEX);
    // The last total: input 18,000 of which 10,000 cached; output 500. Codex counts no
    // cache writes: absent, not zero.
    assert_eq!((s["input"].as_u64(), s["cacheRead"].as_u64()), (Some(8_000), Some(10_000)));
    assert_eq!((s["cacheWrite"].clone(), s["output"].as_u64()), (Value::Null, Some(500)));
    assert!(close(&s["hitRate"], 10_000.0 / 18_000.0), "{s}");
    // Three token counts with a new total (one repeated for its rate limits, one empty).
    assert_eq!(s["apiCalls"], 3);
    // `npm test` 525 characters → 139, not through tj; `tj run -- cargo clippy` 90 → 24,
    // through tj (its command); `pytest -q` 133 → 35, through tj (its `[tj]` lines).
    assert_eq!((s["shellCalls"].as_u64(), s["shellTokens"].as_u64()), (Some(3), Some(198)));
    assert_eq!(s["tjTokens"], 59);
    assert_eq!(s["cwd"], "/home/dev/web");
    assert!(err.contains("skipped 1 line in 1 file"), "{err}");
}

#[test]
fn the_table_has_a_row_per_session_newest_first_a_total_and_the_flag() {
    let env = TestEnv::new();
    let out = env.run(
        &[
            "stats",
            "--transcripts",
            "--transcripts-dir",
            &dir("claude"),
            "--transcripts-dir",
            &dir("codex"),
        ],
        b"",
    );
    assert!(out.status.success());
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("harness      session   last"), "{text}");
    assert!(lines[1].starts_with("claude-code  5f3c1e2a  2026-11-30"), "{text}");
    assert!(lines[2].starts_with("codex        0199a1b2  2026-11-29"), "{text}");
    assert!(lines[3].starts_with("claude-code  9e8d7c6b  2026-11-28"), "{text}");
    // input, cache read, cache write, output, hit rate, shell out, via tj.
    let cells: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(cells[3..], ["8,000", "10,000", "—", "500", "56%", "198", "30%"], "{text}");
    let total: Vec<&str> = lines[4].split_whitespace().collect();
    assert_eq!(total, ["total", "(3)", "8,925", "138,600", "24,200", "1,287", "81%", "501", "29%"]);
    assert_eq!(lines[5], "! cache hit rate falling in session 9e8d7c6b (claude-code): 90% → 50%");
    assert_eq!(lines.len(), 6, "{text}");
}

#[test]
fn sessions_are_chosen_by_id_prefix_and_time() {
    let env = TestEnv::new();
    let both = ["--transcripts-dir", &dir("claude"), "--transcripts-dir", &dir("codex")];
    let (doc, _) = stats_json(&env, &[&both[..], &["--session", "0199"]].concat());
    assert_eq!(doc["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(doc["sessions"][0]["session"], CODEX);
    let (doc, _) = stats_json(&env, &[&both[..], &["--since", "2026-11-29"]].concat());
    let ids: Vec<&str> = doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [CLAUDE_MAIN, CODEX]);

    let out =
        env.run(&[&["stats", "--transcripts"][..], &both[..], &["--session", "zzz"]].concat(), b"");
    assert!(out.status.success());
    assert_eq!(stdout(&out), "no session matches `zzz`\n");
}

/// Copies the directory tree `from` into `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn the_harnesses_own_directories_are_found_through_home_and_their_variables() {
    let env = TestEnv::new();
    copy_tree(&fixtures().join("claude"), &env.root.join("home/.claude"));
    copy_tree(&fixtures().join("codex"), &env.root.join("home/.codex"));
    let (doc, _) = stats_json(&env, &[]);
    assert_eq!(doc["sessions"].as_array().unwrap().len(), 3);

    let moved = TestEnv::new();
    copy_tree(&fixtures().join("claude"), &moved.root.join("claude-config"));
    copy_tree(&fixtures().join("codex"), &moved.root.join("codex-home"));
    let mut cmd = moved.cmd(&["stats", "--transcripts", "--format", "json"]);
    cmd.env("CLAUDE_CONFIG_DIR", moved.root.join("claude-config"))
        .env("CODEX_HOME", moved.root.join("codex-home"));
    let out = moved.run_cmd(cmd, b"");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["sessions"].as_array().unwrap().len(), 3);
    // HOME's directories are not read when the variables move them.
    copy_tree(&fixtures().join("codex"), &moved.root.join("home/.codex"));
    let mut cmd = moved.cmd(&["stats", "--transcripts", "--format", "json"]);
    cmd.env("CODEX_HOME", moved.root.join("nowhere"));
    let doc: Value = serde_json::from_slice(&moved.run_cmd(cmd, b"").stdout).unwrap();
    assert_eq!(doc["sessions"].as_array().unwrap().len(), 0);
}

#[test]
fn no_transcripts_is_said_with_the_directories_looked_in() {
    let env = TestEnv::new();
    let out = env.run(&["stats", "--transcripts"], b"");
    assert!(out.status.success());
    let text = stdout(&out);
    let home = env.root.join("home");
    assert!(text.starts_with("no transcripts found in "), "{text}");
    for part in [".claude/projects", ".codex/sessions"] {
        assert!(text.contains(&home.join(part).display().to_string()), "{text}");
    }
    assert_eq!(stderr(&out), "");

    let out =
        env.run(&["stats", "--transcripts", "--transcripts-dir", "/nonexistent/tj-test"], b"");
    assert!(out.status.success());
    assert!(stderr(&out).contains("`/nonexistent/tj-test` does not exist"), "{}", stderr(&out));
}

#[test]
fn a_ledger_run_of_the_same_command_at_that_time_counts_as_through_tj() {
    let env = TestEnv::new();
    // tj recorded `git status` at 09:00:25 (1796029225), between the call (09:00:25.000)
    // and its result (09:00:25.500): a hook ran it through tj, which passed it on as it was.
    env.write(
        "data/ledger.jsonl",
        r#"{"time":1796029225,"id":"0a0b0c0d0e0f","command":"git status","rule":"git/status","exitCode":0,"chars":[99,99],"tokens":[27,27],"reduced":false,"lossless":true,"deduped":false}
"#,
    );
    let (doc, _) = stats_json(&env, &["--transcripts-dir", &dir("claude")]);
    let s = session(&doc, CLAUDE_MAIN);
    assert_eq!(s["tjTokens"], 88 + 27);
    assert_eq!(doc["read"]["ledgerRuns"], 1);
}

#[test]
fn a_symbolic_link_below_the_directory_is_not_followed() {
    let env = TestEnv::new();
    let root = env.root.join("logs");
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink(fixtures().join("codex"), root.join("elsewhere")).unwrap();
    copy_tree(&fixtures().join("claude/projects/-home-dev-other"), &root.join("p"));
    let (doc, err) = stats_json(&env, &["--transcripts-dir", &root.display().to_string()]);
    assert_eq!(doc["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(doc["sessions"][0]["session"], CLAUDE_FALLING);
    assert!(err.contains("1 symbolic link"), "{err}");
}

#[test]
fn csv_has_a_header_and_a_row_per_session() {
    let env = TestEnv::new();
    let out = env.run(
        &["stats", "--transcripts", "--format", "csv", "--transcripts-dir", &dir("codex")],
        b"",
    );
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with(
        "harness,session,first_time,last_time,input,cache_read,cache_write,output,hit_rate"
    ));
    assert!(lines[1].starts_with(&format!("codex,{CODEX},")), "{text}");
    assert!(lines[1].contains(",8000,10000,,500,0.5556,3,3,198,59,"), "{text}");
}
