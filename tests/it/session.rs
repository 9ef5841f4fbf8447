//! `tj audit` and `tj compact` on Claude Code and Codex session logs (issue 15).
//!
//! The fixtures in tests/session/ (written by tests/session/make_fixtures.py) name each
//! tool call's expected fate in its id: `_drop_` dropped, `_keep_` kept, `_stored_` dropped
//! only when the store holds the original the result names. Every compacted output is
//! checked by [`validate`].

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tj::session::classify::Kind;
use tj::session::{Transcript, check_pairing, same_shape};

use crate::util::{TestEnv, stderr, stdout};

const PLACEHOLDER: &str = "[tj compact: the result of ";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/session").join(name)
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// Copies fixture `name` into the test's working directory.
fn copy(env: &TestEnv, name: &str) -> PathBuf {
    let to = env.work().join(name);
    std::fs::copy(fixture(name), &to).unwrap();
    to
}

/// `tj compact INPUT --out OUT extra…`: its output and the bytes written (if any).
fn compact(env: &TestEnv, input: &Path, extra: &[&str]) -> (std::process::Output, Option<Vec<u8>>) {
    let out = env.work().join("out.jsonl");
    let _ = std::fs::remove_file(&out);
    let mut args = vec!["compact", input.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let output = env.run(&args, b"");
    let written = out.exists().then(|| read(&out));
    (output, written)
}

/// The validator every compacted output goes through: it parses; every call has its result
/// and every result its call (no orphan either way); the lines, roles, order and pairing are
/// the original's; a line is byte for byte the original's unless it holds a dropped result,
/// an echo of one (the harness's own copy) or the first prompt, and such a line differs only
/// in those values.
fn validate(original: &[u8], compacted: &[u8]) -> Transcript {
    let before = Transcript::parse(original).unwrap();
    let after = Transcript::parse(compacted).unwrap();
    check_pairing(&after).unwrap();
    same_shape(&before, &after).unwrap();
    // Every value a drop may change, by line.
    let mut changed: Vec<(usize, Vec<tj::session::OwnedStep>)> = Vec::new();
    for i in dropped_results(&after) {
        let r = &before.results[i];
        changed.push((r.line, r.path.clone()));
        changed.extend(r.echoes.iter().map(|e| (e.line, e.path.clone())));
    }
    if let Some(n) = before.first_user {
        changed.push((n, before.first_user_text.clone()));
    }
    for n in 0..before.lines.len() {
        let (a, b) = (before.line_bytes(original, n), after.line_bytes(compacted, n));
        if changed.iter().any(|(line, _)| *line == n) {
            let (mut a, mut b): (Value, Value) =
                (serde_json::from_slice(a).unwrap(), serde_json::from_slice(b).unwrap());
            for (_, path) in changed.iter().filter(|(line, _)| *line == n) {
                *pointer(&mut b, path) = pointer(&mut a, path).clone();
            }
            assert_eq!(a, b, "line {} changed beyond its result, echoes and note", n + 1);
        } else {
            assert_eq!(a, b, "line {} is not byte for byte the original", n + 1);
        }
    }
    after
}

/// Asserts that no line of a dropped result's text (of 40 bytes or more, JSON-escaped as
/// the log holds it) is left anywhere in the compacted log: not in the result, and not in
/// the harness's own copies of it. A line that a kept result also holds is not checked.
fn assert_dropped_text_is_gone(before: &Transcript, after: &Transcript, compacted: &[u8]) {
    let compacted = String::from_utf8_lossy(compacted);
    let dropped = dropped_results(after);
    // Codex's `shell` tool wraps the output in JSON: `{"output": …, "metadata": …}`.
    let text = |i: usize| -> String {
        let text = before.results[i].text.clone().unwrap_or_default();
        serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("output").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or(text)
    };
    let kept: Vec<String> =
        (0..before.results.len()).filter(|i| !dropped.contains(i)).map(text).collect();
    for &i in &dropped {
        let text = text(i);
        for line in text.lines().filter(|l| l.len() >= 40 && !kept.iter().any(|k| k.contains(l))) {
            let escaped = serde_json::to_string(line).unwrap();
            let escaped = &escaped[1..escaped.len() - 1];
            assert!(
                !compacted.contains(escaped),
                "{}: a dropped line is still in the log: {line}",
                after.calls[after.results[i].call].id
            );
        }
    }
}

fn pointer<'v>(value: &'v mut Value, path: &[tj::session::OwnedStep]) -> &'v mut Value {
    path.iter().fold(value, |v, step| match step {
        tj::session::OwnedStep::Key(k) => v.get_mut(k.as_str()).unwrap(),
        tj::session::OwnedStep::Index(i) => v.get_mut(*i).unwrap(),
    })
}

/// The results of `t` that are placeholders.
fn dropped_results(t: &Transcript) -> Vec<usize> {
    (0..t.results.len())
        .filter(|&i| t.results[i].text.as_deref().is_some_and(|s| s.starts_with(PLACEHOLDER)))
        .collect()
}

/// The call ids of the dropped results.
fn dropped_ids(t: &Transcript) -> Vec<String> {
    dropped_results(t).into_iter().map(|i| t.calls[t.results[i].call].id.clone()).collect()
}

/// Asserts that the results dropped are those whose ids say `_drop_` (and `_stored_` when
/// `stored`), and no other.
fn assert_decisions(t: &Transcript, stored: bool) {
    let dropped = dropped_ids(t);
    for call in &t.calls {
        let expect = call.id.contains("_drop_") || (stored && call.id.contains("_stored_"));
        assert_eq!(dropped.contains(&call.id), expect, "{}: dropped {:?}", call.id, dropped);
    }
}

/// The id a placeholder names.
fn placeholder_id(text: &str) -> String {
    let at = text.find("`tj expand ").unwrap() + "`tj expand ".len();
    text[at..at + 12].to_owned()
}

#[test]
fn claude_code_fixture_drops_what_its_ids_say_and_keeps_everything_else_verbatim() {
    let env = TestEnv::new();
    let input = copy(&env, "claude-basic.jsonl");
    let (out, written) = compact(&env, &input, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let written = written.expect("a compacted log");
    let t = validate(&read(&input), &written);
    assert_decisions(&t, false);
    let before = Transcript::parse(&read(&input)).unwrap();
    assert!(before.results.iter().any(|r| !r.echoes.is_empty()), "no toolUseResult copies");
    assert_dropped_text_is_gone(&before, &t, &written);
    assert_eq!(read(&input), read(&fixture("claude-basic.jsonl")), "the input was modified");
    let text = String::from_utf8(written).unwrap();
    assert!(text.contains("Before reporting work as done"), "no session note");
    assert!(text.contains("this turn lost"), "no turn note");
}

#[test]
fn codex_fixture_drops_what_its_ids_say_and_keeps_everything_else_verbatim() {
    let env = TestEnv::new();
    let input = copy(&env, "codex-basic.jsonl");
    let (out, written) = compact(&env, &input, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let written = written.unwrap();
    let t = validate(&read(&input), &written);
    assert_decisions(&t, false);
    let before = Transcript::parse(&read(&input)).unwrap();
    assert!(before.results.iter().any(|r| !r.echoes.is_empty()), "no exec_command_end copies");
    assert_dropped_text_is_gone(&before, &t, &written);
}

/// The fixtures of the other shapes each harness writes: parallel calls answered in one
/// entry, images, partial reads, Write after Read, failed reads, MCP tools (Claude Code);
/// entry types that are not messages, sidechains (Claude Code); `exec_command`,
/// `shell_command`, `local_shell_call`, old `{content, success}` outputs, a patch after a
/// read, a moving working directory and item types tj does not know (Codex).
#[test]
fn shape_fixtures_drop_what_their_ids_say_and_nothing_else() {
    let env = TestEnv::new();
    for name in
        ["claude-shapes.jsonl", "claude-entries.jsonl", "codex-tools.jsonl", "codex-dirs.jsonl"]
    {
        let input = copy(&env, name);
        let (out, written) = compact(&env, &input, &[]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let written =
            written.unwrap_or_else(|| panic!("{name}: nothing written: {}", stdout(&out)));
        let t = validate(&read(&input), &written);
        assert_decisions(&t, false);
        let before = Transcript::parse(&read(&input)).unwrap();
        assert_dropped_text_is_gone(&before, &t, &written);
        for i in dropped_results(&t) {
            let id = placeholder_id(t.results[i].text.as_deref().unwrap());
            let expanded = env.run(&["expand", &id, "--raw"], b"");
            assert_eq!(expanded.stdout, before.results[i].text.as_deref().unwrap().as_bytes());
        }
    }
}

#[test]
fn a_rendition_whose_original_is_stored_is_dropped_and_kept_otherwise() {
    let env = TestEnv::new();
    let spill = env.data().join("spill");
    std::fs::create_dir_all(&spill).unwrap();
    std::fs::set_permissions(&spill, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    std::fs::File::create(spill.join("0123456789ab.log")).unwrap();
    let input = copy(&env, "claude-basic.jsonl");
    let (out, written) = compact(&env, &input, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = validate(&read(&input), &written.unwrap());
    assert_decisions(&t, true);
}

#[test]
fn dropped_results_come_back_byte_for_byte_through_tj_expand_raw() {
    let env = TestEnv::new();
    for name in ["claude-basic.jsonl", "codex-basic.jsonl"] {
        let input = copy(&env, name);
        let before = Transcript::parse(&read(&input)).unwrap();
        let (out, written) = compact(&env, &input, &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        let after = validate(&read(&input), &written.unwrap());
        let dropped = dropped_results(&after);
        assert!(!dropped.is_empty());
        for i in dropped {
            let id = placeholder_id(after.results[i].text.as_deref().unwrap());
            let expanded = env.run(&["expand", &id, "--raw"], b"");
            assert!(expanded.status.success(), "{}", stderr(&expanded));
            assert_eq!(
                expanded.stdout,
                before.results[i].text.as_deref().unwrap().as_bytes(),
                "{name}: {id}"
            );
        }
    }
}

#[test]
fn the_same_log_gives_the_same_bytes() {
    let env = TestEnv::new();
    for name in ["claude-basic.jsonl", "codex-basic.jsonl"] {
        let input = copy(&env, name);
        let (first, a) = compact(&env, &input, &[]);
        let (second, b) = compact(&env, &input, &[]);
        assert!(a.is_some());
        assert_eq!(a, b, "{name}");
        assert_eq!(first.stdout, second.stdout);
        let dry = || env.run(&["compact", input.to_str().unwrap(), "--dry-run"], b"").stdout;
        assert_eq!(dry(), dry());
    }
}

#[test]
fn a_failure_in_a_late_turn_is_kept_when_the_pinned_tail_no_longer_covers_it() {
    let env = TestEnv::new();
    let input = copy(&env, "claude-basic.jsonl");
    let (out, written) = compact(&env, &input, &["--keep-last", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = validate(&read(&input), &written.unwrap());
    let dropped = dropped_ids(&t);
    assert!(dropped.contains(&"toolu_keep_tail_read1".to_owned()), "{dropped:?}");
    assert!(!dropped.contains(&"toolu_keep_fail_late".to_owned()), "{dropped:?}");
    assert!(!dropped.iter().any(|id| id.contains("fail")), "{dropped:?}");
}

/// A read dropped because of an edit: the edit's call and result are still there, so the
/// pre-edit text is never the only version of the file in context; a read dropped because
/// of a later read has that later read (or an edit) kept after it.
#[test]
fn a_dropped_read_always_leaves_a_later_edit_or_read_of_the_file_in_context() {
    let env = TestEnv::new();
    for name in ["claude-basic.jsonl", "codex-basic.jsonl"] {
        let input = copy(&env, name);
        let (_, written) = compact(&env, &input, &["--keep-last", "1"]);
        let t = validate(&read(&input), &written.unwrap());
        let dropped = dropped_results(&t);
        let mut checked = 0;
        for &i in &dropped {
            let Kind::Read { path, .. } = &t.calls[t.results[i].call].kind else { continue };
            let later_kept = t.results[i + 1..].iter().enumerate().any(|(k, r)| {
                let kept = !dropped.contains(&(i + 1 + k));
                let about = match &t.calls[r.call].kind {
                    Kind::Edit(paths) => paths.contains(path),
                    Kind::Read { path: p, .. } => p == path,
                    _ => false,
                };
                kept && about
            });
            assert!(later_kept, "{name}: the read of {path} was dropped with nothing newer kept");
            checked += 1;
        }
        assert!(checked >= 2, "{name}: {checked} dropped reads");
    }
}

#[test]
fn a_bad_log_is_an_error_naming_the_line_and_nothing_is_written() {
    let env = TestEnv::new();
    for (name, needle) in [
        ("claude-malformed.jsonl", "line 4: not JSON"),
        ("claude-duplicate-id.jsonl", "line 4: tool id `toolu_dup` used twice"),
        ("codex-orphan-result.jsonl", "line 4: a result for tool id `call_nobody`"),
    ] {
        let input = copy(&env, name);
        let (out, written) = compact(&env, &input, &[]);
        assert!(!out.status.success(), "{name}");
        assert!(stderr(&out).contains(needle), "{name}: {}", stderr(&out));
        assert!(written.is_none(), "{name}: something was written");
        assert!(!env.data().join("spill").exists(), "{name}: the store was written");
        let audit = env.run(&["audit", input.to_str().unwrap()], b"");
        assert!(!audit.status.success() && stderr(&audit).contains(needle), "{name}");
    }
}

#[test]
fn the_validator_refuses_an_orphan_call_or_result() {
    let call = r#"{"type":"assistant","uuid":"a","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}"#;
    let result = r#"{"type":"user","uuid":"b","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}}"#;
    assert!(
        check_pairing(&Transcript::parse(format!("{call}\n{result}\n").as_bytes()).unwrap())
            .is_ok()
    );
    assert!(check_pairing(&Transcript::parse(format!("{call}\n").as_bytes()).unwrap()).is_err());
    assert!(Transcript::parse(format!("{result}\n").as_bytes()).is_err());
    // Pairing moved: same calls and results, but the result is now on another line.
    let before =
        Transcript::parse(format!("{call}\n{result}\n{{\"type\":\"summary\"}}\n").as_bytes())
            .unwrap();
    let after =
        Transcript::parse(format!("{call}\n{{\"type\":\"summary\"}}\n{result}\n").as_bytes())
            .unwrap();
    assert!(same_shape(&before, &after).is_err());
}

#[test]
fn below_the_threshold_nothing_is_written() {
    let env = TestEnv::new();
    let input = copy(&env, "codex-basic.jsonl");
    let (out, written) = compact(&env, &input, &["--threshold", "100000000"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("below the threshold"), "{}", stdout(&out));
    assert!(written.is_none());
    assert!(!env.data().join("spill").exists());
}

#[test]
fn out_never_replaces_the_input() {
    let env = TestEnv::new();
    let input = copy(&env, "codex-basic.jsonl");
    let path = input.to_str().unwrap();
    let out = env.run(&["compact", path, "--out", path], b"");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("is the input log"), "{}", stderr(&out));
    assert_eq!(read(&input), read(&fixture("codex-basic.jsonl")));
}

#[test]
fn dry_run_and_audit_write_nothing_and_say_what_would_be_dropped() {
    let env = TestEnv::new();
    let input = copy(&env, "claude-basic.jsonl");
    let dry = env.run(&["compact", input.to_str().unwrap(), "--dry-run"], b"");
    assert!(dry.status.success(), "{}", stderr(&dry));
    let text = stdout(&dry);
    assert!(text.contains("nothing written (--dry-run)"), "{text}");
    assert!(text.contains("drop line "), "{text}");
    assert!(text.contains("superseded by a later edit of /w/proj/src/parse.rs"), "{text}");
    let audit = env.run(&["audit", input.to_str().unwrap(), "--all"], b"");
    assert!(audit.status.success(), "{}", stderr(&audit));
    let report = stdout(&audit);
    assert!(report.contains("Claude Code session"), "{report}");
    assert!(report.contains("tokens (estimated)"), "{report}");
    assert!(
        report.contains("the call failed") && report.contains("cannot be run again"),
        "{report}"
    );
    assert_eq!(
        report
            .lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .filter(|l| l.split_whitespace().nth(3) == Some("drop"))
            .count(),
        4,
        "{report}"
    );
    assert!(!env.data().join("spill").exists(), "the store was written");
    assert_eq!(std::fs::read_dir(env.work()).unwrap().count(), 2, "a file was written");
}

#[test]
fn audit_json_lists_every_result_with_the_decision_compact_makes() {
    let env = TestEnv::new();
    for name in ["claude-basic.jsonl", "codex-basic.jsonl"] {
        let input = copy(&env, name);
        let audit = env.run(&["audit", input.to_str().unwrap(), "--format", "json"], b"");
        assert!(audit.status.success(), "{}", stderr(&audit));
        let doc: Value = serde_json::from_slice(&audit.stdout).expect("one JSON document");
        let t = Transcript::parse(&read(&input)).unwrap();
        let results = doc["results"].as_array().unwrap();
        assert_eq!(results.len(), t.results.len(), "{name}: not every result");
        let mut drops = 0;
        for (row, r) in results.iter().zip(&t.results) {
            let id = &t.calls[r.call].id;
            assert_eq!(row["call_id"], id.as_str(), "{name}: not in log order");
            assert_eq!(row["line"], r.line + 1);
            let drop = row["action"] == "drop";
            assert_eq!(drop, id.contains("_drop_"), "{name}: {id}: {row}");
            assert!(row["why"].as_str().is_some_and(|w| !w.is_empty()), "{row}");
            drops += usize::from(drop);
        }
        assert_eq!(doc["dropped"], drops);
        assert_eq!(doc["tokens"]["context"], t.tokens());
        let reclaimable = doc["tokens"]["reclaimable"].as_u64().unwrap();
        assert!(reclaimable > 0 && reclaimable <= doc["tokens"]["in_results"].as_u64().unwrap());
    }
    assert!(!env.data().join("spill").exists(), "the store was written");
}

#[test]
fn a_session_id_is_looked_up_in_the_harnesses_directories() {
    let env = TestEnv::new();
    let projects = env.root.join("home/.claude/projects/-w-proj");
    std::fs::create_dir_all(&projects).unwrap();
    std::fs::copy(
        fixture("claude-basic.jsonl"),
        projects.join("5f0c6a51-1111-4222-8333-944455556666.jsonl"),
    )
    .unwrap();
    let sessions = env.root.join("home/.codex/sessions/2025/10/01");
    std::fs::create_dir_all(&sessions).unwrap();
    let rollout = "rollout-2025-10-01T09-00-00-0199a0b1-2c3d-7e4f-8a5b-6c7d8e9f0a1b.jsonl";
    std::fs::copy(fixture("codex-basic.jsonl"), sessions.join(rollout)).unwrap();
    let claude = env.run(&["audit", "5f0c6a51-1111-4222-8333-944455556666"], b"");
    assert!(stdout(&claude).contains("Claude Code session"), "{}", stderr(&claude));
    let codex = env.run(&["audit", "0199a0b1-2c3d-7e4f-8a5b-6c7d8e9f0a1b"], b"");
    assert!(stdout(&codex).contains("Codex session"), "{}", stderr(&codex));
    let none = env.run(&["audit", "nope"], b"");
    assert!(!none.status.success() && stderr(&none).contains("no session `nope`"));
}

#[test]
fn resume_writes_a_new_session_under_an_id_from_its_content() {
    let env = TestEnv::new();
    let dir = env.root.join("home/.claude/projects/-w-proj");
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("5f0c6a51-1111-4222-8333-944455556666.jsonl");
    std::fs::copy(fixture("claude-basic.jsonl"), &input).unwrap();
    let run = || env.run(&["compact", input.to_str().unwrap(), "--resume"], b"");
    let (first, second) = (run(), run());
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(first.stdout, second.stdout);
    let text = stdout(&first);
    let id = text.split("claude --resume ").nth(1).unwrap().trim().to_owned();
    let written = read(&dir.join(format!("{id}.jsonl")));
    assert!(!String::from_utf8_lossy(&written).contains("5f0c6a51-1111-4222-8333-944455556666"));
    let t = Transcript::parse(&written).unwrap();
    assert_eq!(t.session_id.as_deref(), Some(id.as_str()));
    check_pairing(&t).unwrap();
    assert_eq!(read(&input), read(&fixture("claude-basic.jsonl")));

    let sessions = env.root.join("home/.codex/sessions/2025/10/01");
    std::fs::create_dir_all(&sessions).unwrap();
    let rollout =
        sessions.join("rollout-2025-10-01T09-00-00-0199a0b1-2c3d-7e4f-8a5b-6c7d8e9f0a1b.jsonl");
    std::fs::copy(fixture("codex-basic.jsonl"), &rollout).unwrap();
    let out = env.run(&["compact", rollout.to_str().unwrap(), "--resume"], b"");
    let text = stdout(&out);
    let id = text.split("codex resume ").nth(1).unwrap().trim().to_owned();
    let new = sessions.join(format!("rollout-2025-10-01T09-00-00-{id}.jsonl"));
    assert_eq!(Transcript::parse(&read(&new)).unwrap().session_id.as_deref(), Some(id.as_str()));
}

/// `lines` numbered lines of filler text, each starting with `tag`: a large log's outputs.
fn body(tag: &str, lines: usize) -> String {
    (0..lines)
        .map(|i| format!("{tag} {i:04}: the quick brown fox jumps over the lazy dog\n"))
        .collect()
}

/// A Claude Code log of at least `size` bytes, the same every time: turns of a prompt, a
/// whole read of one of twenty files, a test run in one of three directories, a search, an
/// edit every third turn, a failure every seventh.
pub(crate) fn large_claude_log(size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut n = 0u64;
    let mut parent = Value::Null;
    let mut push = |kind: &str, message: Value, out: &mut Vec<u8>| {
        n += 1;
        let uuid = format!("00000000-0000-4000-8000-{n:012}");
        let line = json!({"parentUuid": parent, "type": kind, "message": message, "uuid": uuid,
            "sessionId": "9e1b2c3d-0000-4000-8000-000000000005", "cwd": "/w/big"});
        parent = Value::String(uuid);
        out.extend_from_slice(serde_json::to_string(&line).unwrap().as_bytes());
        out.push(b'\n');
    };
    let mut turn = 0;
    while out.len() < size {
        turn += 1;
        push(
            "user",
            json!({"role": "user", "content": format!("Step {turn}: continue")}),
            &mut out,
        );
        let file = format!("/w/big/src/file_{:02}.rs", turn % 20);
        let dir = ["", "cd crates/a && ", "cd crates/b && "][turn % 3];
        let mut calls = vec![
            ("Read", json!({"file_path": file}), body(&file, 60), false),
            (
                "Bash",
                json!({"command": format!("{dir}cargo test")}),
                body("test ok", 50),
                turn % 7 == 0,
            ),
            (
                "Grep",
                json!({"pattern": format!("needle{turn}")}),
                body(&format!("src/hay_{turn}.rs:1"), 20),
                false,
            ),
        ];
        if turn % 3 == 0 {
            calls.push((
                "Edit",
                json!({"file_path": file, "old_string": "a", "new_string": "b"}),
                "updated".into(),
                false,
            ));
        }
        for (k, (tool, input, output, failed)) in calls.into_iter().enumerate() {
            let id = format!("toolu_{turn:05}_{k}");
            push(
                "assistant",
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": tool, "input": input}]}),
                &mut out,
            );
            push(
                "user",
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": output, "is_error": failed}]}),
                &mut out,
            );
        }
        push(
            "assistant",
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("Done with step {turn}.")}]}),
            &mut out,
        );
    }
    out
}

#[test]
fn a_five_megabyte_log_is_audited_and_compacted_and_stays_valid() {
    let env = TestEnv::new();
    let log = large_claude_log(5 << 20);
    assert_eq!(log, large_claude_log(5 << 20), "the generator is not deterministic");
    let input = write_log(&env, "large.jsonl", &log);
    let audit = env.run(&["audit", input.to_str().unwrap()], b"");
    assert!(audit.status.success(), "{}", stderr(&audit));
    let dry = env.run(&["compact", input.to_str().unwrap(), "--dry-run"], b"");
    assert!(dry.status.success(), "{}", stderr(&dry));
    assert_large_log_compacts(&env, &input, &log);
}

/// Writes `log` as `name` in the work directory; returns its path.
fn write_log(env: &TestEnv, name: &str, log: &[u8]) -> PathBuf {
    assert!(log.len() >= 5 << 20);
    let input = env.work().join(name);
    std::fs::File::create(&input).and_then(|mut f| std::io::Write::write_all(&mut f, log)).unwrap();
    input
}

/// Compacts the large `log` at `input` twice: the output is valid, less than half the
/// tokens, the same both times, and no failure or edit was dropped.
fn assert_large_log_compacts(env: &TestEnv, input: &Path, log: &[u8]) {
    let (out, written) = compact(env, input, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let written = written.unwrap();
    let t = validate(log, &written);
    let before = Transcript::parse(log).unwrap();
    assert!(t.tokens() * 2 < before.tokens(), "{} → {}", before.tokens(), t.tokens());
    let dropped = dropped_results(&t);
    assert!(!dropped.is_empty());
    for i in dropped {
        assert!(!before.results[i].failed, "a failed result was dropped");
        assert!(!matches!(t.calls[t.results[i].call].kind, Kind::Edit(_)), "an edit was dropped");
    }
    let (_, again) = compact(env, input, &[]);
    assert_eq!(again.unwrap(), written, "two runs differ");
}

/// A Codex rollout of about `size` bytes: turns of a `cat`, a `cargo test` (every seventh
/// failing) and an `rg`, with a patch every third turn.
fn large_codex_log(size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let push = |kind: &str, payload: Value, out: &mut Vec<u8>| {
        let line =
            json!({"timestamp": "2025-10-01T09:00:00.000Z", "type": kind, "payload": payload});
        out.extend_from_slice(serde_json::to_string(&line).unwrap().as_bytes());
        out.push(b'\n');
    };
    push(
        "session_meta",
        json!({"id": "0199a0b1-0000-7000-8000-000000000005", "cwd": "/w/big", "originator": "codex_cli_rs"}),
        &mut out,
    );
    let mut turn = 0;
    while out.len() < size {
        turn += 1;
        let text = format!("Step {turn}: continue");
        push(
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}),
            &mut out,
        );
        let file = format!("src/file_{:02}.rs", turn % 20);
        let calls = vec![
            (format!("cat {file}"), body(&file, 60), 0),
            ("cargo test".to_owned(), body("test ok", 50), if turn % 7 == 0 { 101 } else { 0 }),
            (format!("rg needle{turn}"), body(&format!("src/hay_{turn}.rs:1"), 20), 0),
        ];
        for (k, (script, output, code)) in calls.into_iter().enumerate() {
            let id = format!("call_{turn:05}_{k}");
            let args = json!({"command": ["bash", "-lc", script], "workdir": "/w/big"});
            push(
                "response_item",
                json!({"type": "function_call", "name": "shell", "arguments": args.to_string(), "call_id": id}),
                &mut out,
            );
            let result = json!({"output": output, "metadata": {"exit_code": code}});
            push(
                "response_item",
                json!({"type": "function_call_output", "call_id": id, "output": result.to_string()}),
                &mut out,
            );
        }
        if turn % 3 == 0 {
            let id = format!("call_{turn:05}_patch");
            let patch =
                format!("*** Begin Patch\n*** Update File: {file}\n@@\n-a\n+b\n*** End Patch");
            push(
                "response_item",
                json!({"type": "custom_tool_call", "name": "apply_patch", "call_id": id, "input": patch}),
                &mut out,
            );
            push(
                "response_item",
                json!({"type": "custom_tool_call_output", "call_id": id, "output": "Success."}),
                &mut out,
            );
        }
        let text = format!("Done with step {turn}.");
        push(
            "response_item",
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}),
            &mut out,
        );
    }
    out
}

#[test]
fn a_five_megabyte_codex_rollout_is_compacted_and_stays_valid() {
    let env = TestEnv::new();
    let log = large_codex_log(5 << 20);
    let name = "rollout-2025-10-01T09-00-00-0199a0b1-0000-7000-8000-000000000005.jsonl";
    let input = write_log(&env, name, &log);
    assert_large_log_compacts(&env, &input, &log);
}
