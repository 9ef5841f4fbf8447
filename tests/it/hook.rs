//! `tj hook <host>` through the binary: payload in, exact JSON out (issue 11).
//!
//! Every case asserts exit 0 and a silent stderr: a hook's stderr can reach the user or the
//! model. The rewritten line is asked from `tj rewrite`, so these tests pin the hook's
//! answer, not the rewrite engine's format.

use std::process::Output;

use serde_json::{Value, json};

use crate::util::{TestEnv, stderr, stdout};

/// Runs `tj hook host` with `vars` set and `stdin`; asserts exit 0 and nothing on stderr.
fn hook_raw(env: &TestEnv, host: &str, vars: &[(&str, &str)], stdin: &[u8]) -> String {
    let mut cmd = env.cmd(&["hook", host]);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out: Output = env.run_cmd(cmd, stdin);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(stderr(&out), "", "a hook must stay silent on stderr");
    stdout(&out)
}

fn hook(env: &TestEnv, host: &str, vars: &[(&str, &str)], payload: &Value) -> String {
    hook_raw(env, host, vars, payload.to_string().as_bytes())
}

/// What `tj rewrite --host host line` prints, without its newline.
fn rewritten(env: &TestEnv, host: &str, line: &str) -> String {
    let out = env.run(&["rewrite", "--host", host, line], b"");
    assert_eq!(out.status.code(), Some(0), "`{line}` must be eligible: {}", stderr(&out));
    stdout(&out).trim_end_matches('\n').to_owned()
}

/// The exact bytes of a JSON answer.
fn line(value: &Value) -> String {
    format!("{value}\n")
}

fn claude_payload(env: &TestEnv, command: &str, mode: &str) -> Value {
    json!({
        "session_id": "s1",
        "transcript_path": "/dev/null",
        "cwd": env.work().to_str().unwrap(),
        "permission_mode": mode,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Run the tests", "timeout": 120000},
        "tool_use_id": "toolu_1",
    })
}

fn claude_answer(env: &TestEnv, decision: &str, command: &str) -> String {
    line(&json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": format!("tj: reduced output for the agent (original: {command})"),
            "updatedInput": {
                "command": rewritten(env, "claude-code", command),
                "description": "Run the tests",
                "timeout": 120000,
            },
        }
    }))
}

fn settings(env: &TestEnv, rel: &str, permissions: &Value) {
    env.write(rel, &json!({"permissions": permissions, "model": "x"}).to_string());
}

// ---- Claude Code ----------------------------------------------------------------------

#[test]
fn claude_code_asks_with_the_rewrite_when_no_rule_allows_the_command() {
    let env = TestEnv::new();
    let out = hook(&env, "claude-code", &[], &claude_payload(&env, "cargo test", "default"));
    // Every key of tool_input is kept (`description`, `timeout`), only `command` replaced.
    assert_eq!(out, claude_answer(&env, "ask", "cargo test"));
}

#[test]
fn claude_code_gives_no_answer_where_an_ask_would_go_unanswered() {
    let env = TestEnv::new();
    // `claude -p`: an ask is a refusal, and `--allowedTools` (invisible to hooks) may allow.
    let vars = [("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")];
    assert_eq!(
        hook(&env, "claude-code", &vars, &claude_payload(&env, "cargo test", "default")),
        ""
    );
    // An allow still goes through.
    settings(&env, "home/.claude/settings.json", &json!({"allow": ["Bash(cargo test:*)"]}));
    let out = hook(&env, "claude-code", &vars, &claude_payload(&env, "cargo test", "default"));
    assert_eq!(out, claude_answer(&env, "allow", "cargo test"));
}

#[test]
fn claude_code_allows_what_a_user_rule_allows() {
    let env = TestEnv::new();
    settings(&env, "home/.claude/settings.json", &json!({"allow": ["Bash(cargo test:*)"]}));
    let out = hook(&env, "claude-code", &[], &claude_payload(&env, "cargo test --lib", "default"));
    assert_eq!(out, claude_answer(&env, "allow", "cargo test --lib"));
}

#[test]
fn claude_code_reads_user_settings_from_claude_config_dir() {
    let env = TestEnv::new();
    settings(&env, "claude-dir/settings.json", &json!({"deny": ["Bash(cargo test *)"]}));
    let dir = env.root.join("claude-dir");
    let vars = [("CLAUDE_CONFIG_DIR", dir.to_str().unwrap())];
    let payload = claude_payload(&env, "cargo test", "bypassPermissions");
    assert_eq!(hook(&env, "claude-code", &vars, &payload), "");
    // Without the variable, ~/.claude is read instead and nothing denies.
    assert_eq!(
        hook(&env, "claude-code", &[], &payload),
        claude_answer(&env, "allow", "cargo test")
    );
}

#[test]
fn claude_code_allows_what_project_and_local_rules_allow() {
    for rel in ["work/.claude/settings.json", "work/.claude/settings.local.json"] {
        let env = TestEnv::new();
        settings(&env, rel, &json!({"allow": ["Bash(cargo build *)"]}));
        let out = hook(&env, "claude-code", &[], &claude_payload(&env, "cargo build", "default"));
        assert_eq!(out, claude_answer(&env, "allow", "cargo build"), "{rel}");
    }
}

#[test]
fn claude_code_never_rewrites_a_denied_command_whatever_the_mode() {
    for rel in [
        "home/.claude/settings.json",
        "work/.claude/settings.json",
        "work/.claude/settings.local.json",
    ] {
        let env = TestEnv::new();
        settings(&env, rel, &json!({"deny": ["Bash(cargo test:*)"], "allow": ["Bash"]}));
        for mode in ["default", "bypassPermissions", "acceptEdits", "dontAsk", "auto"] {
            let out = hook(&env, "claude-code", &[], &claude_payload(&env, "cargo test", mode));
            assert_eq!(out, "", "{rel} {mode}");
        }
    }
}

#[test]
fn claude_code_deny_rules_see_through_wrappers_and_assignments() {
    let env = TestEnv::new();
    settings(&env, "home/.claude/settings.json", &json!({"deny": ["Bash(cargo test *)"]}));
    for command in ["timeout 60 cargo test", "RUST_LOG=1 cargo test"] {
        let payload = claude_payload(&env, command, "bypassPermissions");
        // The placeholder engine may refuse these shapes; either way there is no answer.
        assert_eq!(hook(&env, "claude-code", &[], &payload), "", "{command}");
    }
}

#[test]
fn claude_code_asks_when_an_ask_rule_matches_even_under_bypass() {
    let env = TestEnv::new();
    settings(
        &env,
        "work/.claude/settings.json",
        &json!({"ask": ["Bash(cargo test:*)"], "allow": ["Bash(cargo *)"]}),
    );
    for mode in ["default", "bypassPermissions"] {
        let out = hook(&env, "claude-code", &[], &claude_payload(&env, "cargo test", mode));
        assert_eq!(out, claude_answer(&env, "ask", "cargo test"), "{mode}");
    }
    // Where nobody can be asked, the ask rule keeps the command native.
    let payload = claude_payload(&env, "cargo test", "dontAsk");
    assert_eq!(hook(&env, "claude-code", &[], &payload), "");
}

#[test]
fn claude_code_judges_the_rewritten_command_too() {
    let env = TestEnv::new();
    // Claude Code checks rules against what the hook returns: a rule about tj holds.
    settings(&env, "home/.claude/settings.json", &json!({"deny": ["Bash(*/tj run *)"]}));
    let payload = claude_payload(&env, "cargo test", "bypassPermissions");
    assert_eq!(hook(&env, "claude-code", &[], &payload), "");

    let env = TestEnv::new();
    settings(
        &env,
        "home/.claude/settings.json",
        &json!({"ask": ["Bash(*tj*)"], "allow": ["Bash(cargo test)"]}),
    );
    let payload = claude_payload(&env, "cargo test", "default");
    assert_eq!(hook(&env, "claude-code", &[], &payload), claude_answer(&env, "ask", "cargo test"));
}

#[test]
fn claude_code_modes_decide_an_unruled_command() {
    let env = TestEnv::new();
    let answer =
        |mode: &str| hook(&env, "claude-code", &[], &claude_payload(&env, "cargo test", mode));
    assert_eq!(answer("bypassPermissions"), claude_answer(&env, "allow", "cargo test"));
    assert_eq!(answer("acceptEdits"), claude_answer(&env, "ask", "cargo test"));
    assert_eq!(answer("dontAsk"), "");
    assert_eq!(answer("auto"), "");
    assert_eq!(answer("plan"), "");
    assert_eq!(answer("someFutureMode"), "");
}

#[test]
fn claude_code_modes_keep_an_allowed_command_allowed() {
    let env = TestEnv::new();
    settings(&env, "home/.claude/settings.json", &json!({"allow": ["Bash(cargo test)"]}));
    let answer =
        |mode: &str| hook(&env, "claude-code", &[], &claude_payload(&env, "cargo test", mode));
    for mode in ["default", "acceptEdits", "dontAsk", "auto"] {
        assert_eq!(answer(mode), claude_answer(&env, "allow", "cargo test"), "{mode}");
    }
    assert_eq!(answer("plan"), "");
}

#[test]
fn claude_code_reads_the_project_directory_claude_code_started_in() {
    let env = TestEnv::new();
    settings(&env, "project/.claude/settings.json", &json!({"allow": ["Bash(cargo test)"]}));
    std::fs::create_dir_all(env.root.join("project/sub")).unwrap();
    let mut payload = claude_payload(&env, "cargo test", "default");
    payload["cwd"] = json!(env.root.join("project/sub").to_str().unwrap());
    let project = env.root.join("project");
    let vars = [("CLAUDE_PROJECT_DIR", project.to_str().unwrap())];
    assert_eq!(
        hook(&env, "claude-code", &vars, &payload),
        claude_answer(&env, "allow", "cargo test")
    );
    // Without it, the allow of a parent directory is not trusted: ask.
    assert_eq!(hook(&env, "claude-code", &[], &payload), claude_answer(&env, "ask", "cargo test"));
}

#[test]
fn claude_code_counts_a_parent_directory_s_denials() {
    let env = TestEnv::new();
    settings(&env, "project/.claude/settings.json", &json!({"deny": ["Bash(cargo test)"]}));
    std::fs::create_dir_all(env.root.join("project/sub")).unwrap();
    let mut payload = claude_payload(&env, "cargo test", "bypassPermissions");
    payload["cwd"] = json!(env.root.join("project/sub").to_str().unwrap());
    assert_eq!(hook(&env, "claude-code", &[], &payload), "");
}

#[test]
fn claude_code_leaves_the_command_alone_when_settings_do_not_parse() {
    let env = TestEnv::new();
    env.write("work/.claude/settings.json", "{\"permissions\": {\"deny\": [\"Bash(cargo");
    let payload = claude_payload(&env, "cargo test", "bypassPermissions");
    assert_eq!(hook(&env, "claude-code", &[], &payload), "");

    let env = TestEnv::new();
    settings(&env, "home/.claude/settings.json", &json!({"deny": "Bash(cargo test)"}));
    assert_eq!(hook(&env, "claude-code", &[], &payload), "");
}

#[test]
fn claude_code_leaves_the_command_alone_when_a_bash_rule_cannot_be_read() {
    let env = TestEnv::new();
    settings(&env, "home/.claude/settings.json", &json!({"deny": ["Bash(cargo test"]}));
    let payload = claude_payload(&env, "cargo test", "bypassPermissions");
    assert_eq!(hook(&env, "claude-code", &[], &payload), "");
    // Another tool's rule in any shape is not tj's business.
    let env = TestEnv::new();
    settings(&env, "home/.claude/settings.json", &json!({"deny": ["Read(./.env)", "WebFetch"]}));
    let payload = claude_payload(&env, "cargo test", "bypassPermissions");
    assert_eq!(
        hook(&env, "claude-code", &[], &payload),
        claude_answer(&env, "allow", "cargo test")
    );
}

#[test]
fn claude_code_gives_no_answer_to_what_it_does_not_rewrite() {
    let env = TestEnv::new();
    let mode = "bypassPermissions";
    let mut cases = vec![
        ("ineligible", claude_payload(&env, "ls -la", mode)),
        ("empty", claude_payload(&env, "", mode)),
        ("blank", claude_payload(&env, "   ", mode)),
        (
            "already wrapped",
            claude_payload(&env, &rewritten(&env, "claude-code", "cargo test"), mode),
        ),
    ];
    let mut background = claude_payload(&env, "cargo test", mode);
    background["tool_input"]["run_in_background"] = json!(true);
    cases.push(("background", background));
    let mut other_tool = claude_payload(&env, "cargo test", mode);
    other_tool["tool_name"] = json!("Read");
    cases.push(("other tool", other_tool));
    let mut no_input = claude_payload(&env, "cargo test", mode);
    no_input["tool_input"] = json!("cargo test");
    cases.push(("input not an object", no_input));
    let mut number = claude_payload(&env, "cargo test", mode);
    number["tool_input"]["command"] = json!(42);
    cases.push(("command not a string", number));
    for (name, payload) in cases {
        assert_eq!(hook(&env, "claude-code", &[], &payload), "", "{name}");
    }
}

#[test]
fn claude_code_runs_in_background_false_is_still_rewritten() {
    let env = TestEnv::new();
    let mut payload = claude_payload(&env, "cargo test", "bypassPermissions");
    payload["tool_input"]["run_in_background"] = json!(false);
    let out = hook(&env, "claude-code", &[], &payload);
    let expected: Value =
        serde_json::from_str(&claude_answer(&env, "allow", "cargo test")).unwrap();
    let mut expected = expected;
    expected["hookSpecificOutput"]["updatedInput"]["run_in_background"] = json!(false);
    assert_eq!(out, line(&expected));
}

#[test]
fn malformed_oversized_and_bom_payloads() {
    let env = TestEnv::new();
    let good = claude_payload(&env, "cargo test", "bypassPermissions").to_string();
    let allow = claude_answer(&env, "allow", "cargo test");
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(good.as_bytes());
    assert_eq!(hook_raw(&env, "claude-code", &[], &bom), allow);
    // Over 1 MiB: not parsed at all, even though it is valid JSON.
    let mut big = good.into_bytes();
    big.pop();
    big.extend_from_slice(format!(",\"pad\":\"{}\"}}", "x".repeat(1 << 20)).as_bytes());
    for host in ["claude-code", "codex", "copilot"] {
        for input in [&b"{not json"[..], b"", b"[1,2]", b"null", &big] {
            assert_eq!(hook_raw(&env, host, &[], input), "", "{host}");
        }
    }
    for host in ["gemini", "cursor"] {
        for input in [&b"{not json"[..], b"", b"[1,2]", b"null", &big] {
            assert_eq!(hook_raw(&env, host, &[], input), "{}\n", "{host}");
        }
    }
}

// ---- Codex ----------------------------------------------------------------------------

fn codex_payload(env: &TestEnv, command: &str, mode: &str) -> Value {
    json!({
        "session_id": "s1",
        "turn_id": "t1",
        "transcript_path": null,
        "cwd": env.work().to_str().unwrap(),
        "hook_event_name": "PreToolUse",
        "model": "gpt",
        "permission_mode": mode,
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "call_1",
    })
}

fn codex_answer(env: &TestEnv, command: &str) -> String {
    line(&json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": rewritten(env, "codex", command)},
        }
    }))
}

#[test]
fn codex_rewrites_only_under_approval_never() {
    let env = TestEnv::new();
    let out = hook(&env, "codex", &[], &codex_payload(&env, "cargo test", "bypassPermissions"));
    assert_eq!(out, codex_answer(&env, "cargo test"));
    // `default` covers on-request, untrusted and granular: Codex would judge the rewrite.
    assert_eq!(hook(&env, "codex", &[], &codex_payload(&env, "cargo test", "default")), "");
    let mut no_mode = codex_payload(&env, "cargo test", "x");
    no_mode.as_object_mut().unwrap().remove("permission_mode");
    assert_eq!(hook(&env, "codex", &[], &no_mode), "");
}

#[test]
fn codex_leaves_commands_an_exec_policy_rule_matches() {
    for (decision, command) in
        [("forbidden", "cargo test"), ("prompt", "cargo test --lib"), ("allow", "cargo test")]
    {
        let env = TestEnv::new();
        let rule = format!(
            "prefix_rule(pattern = [\"cargo\", [\"test\", \"t\"]], decision = \"{decision}\")\n"
        );
        env.write("home/.codex/rules/default.rules", &rule);
        let payload = codex_payload(&env, command, "bypassPermissions");
        assert_eq!(hook(&env, "codex", &[], &payload), "", "{decision}");
        // A rule about another command changes nothing.
        let payload = codex_payload(&env, "cargo build", "bypassPermissions");
        assert_eq!(hook(&env, "codex", &[], &payload), codex_answer(&env, "cargo build"));
    }
}

#[test]
fn codex_reads_rules_from_codex_home_and_the_project() {
    let env = TestEnv::new();
    env.write("codex/rules/x.rules", "prefix_rule(pattern=[\"cargo\"], decision=\"forbidden\")");
    let dir = env.root.join("codex");
    let vars = [("CODEX_HOME", dir.to_str().unwrap())];
    let payload = codex_payload(&env, "cargo test", "bypassPermissions");
    assert_eq!(hook(&env, "codex", &vars, &payload), "");
    assert_eq!(hook(&env, "codex", &[], &payload), codex_answer(&env, "cargo test"));

    let env = TestEnv::new();
    env.write("work/.codex/rules/x.rules", "prefix_rule(pattern=[\"cargo\"], decision=\"prompt\")");
    let payload = codex_payload(&env, "cargo test", "bypassPermissions");
    assert_eq!(hook(&env, "codex", &[], &payload), "");
}

#[test]
fn codex_leaves_the_command_alone_when_a_rules_file_cannot_be_read() {
    let env = TestEnv::new();
    env.write("home/.codex/rules/default.rules", "P = [\"cargo\"]\nprefix_rule(pattern = P)\n");
    let payload = codex_payload(&env, "cargo test", "bypassPermissions");
    assert_eq!(hook(&env, "codex", &[], &payload), "");
}

#[test]
fn codex_leaves_argv_and_non_shell_calls_alone() {
    let env = TestEnv::new();
    let mut argv = codex_payload(&env, "cargo test", "bypassPermissions");
    argv["tool_input"] =
        json!({"command": "cargo test", "kind": "argv", "program": "cargo", "args": ["test"]});
    assert_eq!(hook(&env, "codex", &[], &argv), "");
    let mut patch = codex_payload(&env, "cargo test", "bypassPermissions");
    patch["tool_name"] = json!("apply_patch");
    assert_eq!(hook(&env, "codex", &[], &patch), "");
    let ineligible = codex_payload(&env, "cat Cargo.toml", "bypassPermissions");
    assert_eq!(hook(&env, "codex", &[], &ineligible), "");
    // A script call keeps its `kind`.
    let mut script = codex_payload(&env, "cargo test", "bypassPermissions");
    script["tool_input"]["kind"] = json!("script");
    let expected = json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": {"command": rewritten(&env, "codex", "cargo test"), "kind": "script"},
    }});
    assert_eq!(hook(&env, "codex", &[], &script), line(&expected));
}

// ---- Gemini CLI -----------------------------------------------------------------------

fn gemini_payload(env: &TestEnv, command: &str) -> Value {
    json!({
        "session_id": "s1",
        "transcript_path": "/tmp/t.json",
        "cwd": env.work().to_str().unwrap(),
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-12-01T00:00:00Z",
        "tool_name": "run_shell_command",
        "tool_input": {"command": command, "description": "Run the tests", "directory": "."},
    })
}

fn gemini_answer(env: &TestEnv, command: &str) -> String {
    line(&json!({
        "hookSpecificOutput": {
            "tool_input": {
                "command": rewritten(env, "gemini", command),
                "description": "Run the tests",
                "directory": ".",
            }
        }
    }))
}

#[test]
fn gemini_rewrites_an_eligible_command_and_keeps_the_other_arguments() {
    let env = TestEnv::new();
    assert_eq!(
        hook(&env, "gemini", &[], &gemini_payload(&env, "cargo test")),
        gemini_answer(&env, "cargo test")
    );
    assert_eq!(hook(&env, "gemini", &[], &gemini_payload(&env, "ls")), "{}\n");
    let mut other = gemini_payload(&env, "cargo test");
    other["tool_name"] = json!("read_file");
    assert_eq!(hook(&env, "gemini", &[], &other), "{}\n");
    assert_eq!(hook(&env, "gemini", &[], &gemini_payload(&env, "")), "{}\n");
}

#[test]
fn gemini_leaves_commands_its_own_lists_would_judge() {
    for (rel, text) in [
        ("home/.gemini/settings.json", r#"{"tools": {"core": ["run_shell_command(git)"]}}"#),
        ("work/.gemini/settings.json", r#"{"tools": {"exclude": ["run_shell_command(cargo)"]}}"#),
        ("work/.gemini/settings.json", r#"{"excludeTools": ["run_shell_command"]}"#),
        ("work/.gemini/settings.json", r#"{"tools": {"allowed": ["ShellTool(cargo test)"]}}"#),
        ("work/.gemini/settings.json", r#"{"tools": {"core": "#),
        (
            "home/.gemini/policies/p.toml",
            "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"deny\"\n",
        ),
    ] {
        let env = TestEnv::new();
        env.write(rel, text);
        assert_eq!(
            hook(&env, "gemini", &[], &gemini_payload(&env, "cargo test")),
            "{}\n",
            "{text}"
        );
    }
}

#[test]
fn gemini_settings_may_have_comments() {
    let env = TestEnv::new();
    env.write(
        "home/.gemini/settings.json",
        "{\n  // hooks\n  \"tools\": {\"allowed\": [\"run_shell_command\"]} /* all */\n}\n",
    );
    assert_eq!(
        hook(&env, "gemini", &[], &gemini_payload(&env, "cargo test")),
        gemini_answer(&env, "cargo test")
    );
}

// ---- Cursor ---------------------------------------------------------------------------

fn cursor_payload(env: &TestEnv, command: &str) -> Value {
    json!({
        "hook_event_name": "preToolUse",
        "conversation_id": "c1",
        "generation_id": "g1",
        "workspace_roots": [env.work().to_str().unwrap()],
        "tool_name": "Shell",
        "tool_input": {"command": command, "shell": "bash"},
    })
}

fn cursor_answer(env: &TestEnv, permission: &str, command: &str) -> String {
    line(&json!({
        "permission": permission,
        "updated_input": {"command": rewritten(env, "cursor", command), "shell": "bash"},
    }))
}

#[test]
fn cursor_asks_unless_its_allow_list_covers_the_command() {
    let env = TestEnv::new();
    assert_eq!(
        hook(&env, "cursor", &[], &cursor_payload(&env, "cargo test")),
        cursor_answer(&env, "ask", "cargo test")
    );
    env.write(
        "home/.cursor/cli-config.json",
        r#"{"permissions": {"allow": ["Shell(cargo)"], "deny": []}}"#,
    );
    assert_eq!(
        hook(&env, "cursor", &[], &cursor_payload(&env, "cargo test")),
        cursor_answer(&env, "allow", "cargo test")
    );
}

#[test]
fn cursor_leaves_denied_commands_and_broken_configs_alone() {
    for (rel, text) in [
        (
            "home/.cursor/cli-config.json",
            r#"{"permissions": {"allow": ["Shell(cargo)"], "deny": ["Shell(cargo test)"]}}"#,
        ),
        ("work/.cursor/cli.json", r#"{"permissions": {"deny": ["Shell(tj)"]}}"#),
        ("work/.cursor/cli.json", r#"{"permissions": {"deny": ["Shell(cargo"]}}"#),
        ("home/.cursor/cli-config.json", "{"),
    ] {
        let env = TestEnv::new();
        env.write(rel, text);
        assert_eq!(
            hook(&env, "cursor", &[], &cursor_payload(&env, "cargo test")),
            "{}\n",
            "{text}"
        );
    }
    let env = TestEnv::new();
    assert_eq!(hook(&env, "cursor", &[], &cursor_payload(&env, "rm -rf x")), "{}\n");
}

// ---- Copilot CLI ----------------------------------------------------------------------

fn copilot_payload(env: &TestEnv, args: &Value) -> Value {
    json!({
        "timestamp": 1_764_547_200_000_u64,
        "cwd": env.work().to_str().unwrap(),
        "toolName": "bash",
        "toolArgs": args.to_string(),
    })
}

#[test]
fn copilot_rewrites_the_string_tool_args() {
    let env = TestEnv::new();
    let args = json!({"command": "cargo test", "description": "tests", "sessionId": "x"});
    let out = hook(&env, "copilot", &[], &copilot_payload(&env, &args));
    let expected = json!({"modifiedArgs": {
        "command": rewritten(&env, "copilot", "cargo test"),
        "description": "tests",
        "sessionId": "x",
    }});
    assert_eq!(out, line(&expected));
}

#[test]
fn copilot_gives_no_answer_to_what_it_does_not_rewrite() {
    let env = TestEnv::new();
    let mut other = copilot_payload(&env, &json!({"command": "cargo test"}));
    other["toolName"] = json!("view");
    let mut broken = copilot_payload(&env, &json!({}));
    broken["toolArgs"] = json!("{\"command\": ");
    for payload in [
        other,
        broken,
        copilot_payload(&env, &json!({"command": "ls"})),
        copilot_payload(&env, &json!({"command": ""})),
        json!({"toolName": "bash"}),
    ] {
        assert_eq!(hook(&env, "copilot", &[], &payload), "", "{payload}");
    }
}

#[test]
fn hook_debug_says_on_stderr_why_nothing_was_rewritten() {
    let env = TestEnv::new();
    let mut cmd = env.cmd(&["hook", "claude-code"]);
    cmd.env("TJ_HOOK_DEBUG", "1");
    let out = env.run_cmd(cmd, b"{}");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("no rewrite"), "{}", stderr(&out));
}

// ---- Hostile conditions ---------------------------------------------------------------

#[test]
fn a_tj_binary_removed_while_the_hook_runs_is_not_named_in_a_rewrite() {
    // An upgrade replaces tj while a harness has a hook running: on Linux the running
    // program's path then reads `/path/tj (deleted)`, a file that does not exist. A rewrite
    // naming it would fail with "command not found"; the hook must leave the command alone.
    use std::io::Write;
    let env = TestEnv::new();
    let copy = env.root.join("bin/tj");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(crate::util::tj_bin(), &copy).unwrap();
    let mut cmd = std::process::Command::new(&copy);
    cmd.args(["hook", "claude-code"])
        .env_clear()
        .env("HOME", env.root.join("home"))
        .env("TJ_DATA_DIR", env.data())
        .env("TJ_CONFIG_DIR", env.root.join("config"))
        .env("TJ_HOOK_DEBUG", "1")
        .current_dir(env.work())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = crate::util::spawn_retrying(&mut cmd);
    let mut input = child.stdin.take().unwrap();
    std::fs::remove_file(&copy).unwrap();
    let payload = claude_payload(&env, "cargo test", "bypassPermissions");
    input.write_all(payload.to_string().as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "", "a rewrite naming a removed binary: {}", stderr(&out));
    assert!(stderr(&out).contains("could not find the path of tj itself"), "{}", stderr(&out));
}

/// Starts `tj hook claude-code`, writes `stdin` and keeps stdin open; returns how long tj
/// took to exit and its output.
fn hook_with_stdin_held_open(
    env: &TestEnv,
    stdin: &[u8],
) -> (std::time::Duration, std::process::Output) {
    use std::io::Write;
    use std::process::Stdio;
    let mut cmd = env.cmd(&["hook", "claude-code"]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = std::time::Instant::now();
    let mut child = crate::util::spawn_retrying(&mut cmd);
    let _kill = crate::util::KillOnDrop(child.id() as i32);
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "tj hook hangs on stdin");
        // Polling for a deadline: the exit is what is waited for.
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let elapsed = start.elapsed();
    let mut out = Vec::new();
    std::io::Read::read_to_end(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    let mut err = Vec::new();
    std::io::Read::read_to_end(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    let status = child.wait().unwrap();
    drop(input);
    (elapsed, std::process::Output { status, stdout: out, stderr: err })
}

#[test]
fn a_whole_payload_is_answered_even_if_the_host_never_closes_stdin() {
    let env = TestEnv::new();
    let payload = claude_payload(&env, "cargo test", "default");
    let (elapsed, out) = hook_with_stdin_held_open(&env, payload.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), claude_answer(&env, "ask", "cargo test"));
    assert!(elapsed < std::time::Duration::from_secs(4), "answered after {elapsed:?}");
}

#[test]
fn a_payload_that_never_ends_is_given_up_within_the_bound() {
    let env = TestEnv::new();
    let (elapsed, out) = hook_with_stdin_held_open(&env, br#"{"tool_name": "Bash", "tool_inp"#);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "");
    assert_eq!(stderr(&out), "");
    assert!(elapsed < std::time::Duration::from_secs(12), "gave up after {elapsed:?}");
}
