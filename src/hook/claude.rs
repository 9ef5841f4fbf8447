//! Claude Code's `PreToolUse` hook on `Bash`.
//!
//! Claude Code checks its permission rules against the command the hook *returns*, even
//! after an `allow` (HARNESSES.md 6). So the decision is tj's to get right: it is judged on
//! the original command, every simple command of it, against every settings layer and the
//! session's `permission_mode`, and never turns a deny or an ask into an allow. The
//! rewritten line is judged too, so that a rule about tj itself (`Bash(*tj*)` in `deny`)
//! still holds.
//!
//! | original (every segment)             | mode                                  | answer |
//! |--------------------------------------|---------------------------------------|--------|
//! | denied by a rule, or a rule unreadable | any                                 | none   |
//! | asked by a rule                      | `default`, `acceptEdits`, `bypassPermissions` | `ask`  |
//! | allowed by rules                     | `default`, `acceptEdits`, `dontAsk`, `auto`, `bypassPermissions` | `allow` |
//! | no rule                              | `bypassPermissions`                   | `allow` |
//! | no rule                              | `default`, `acceptEdits`              | `ask`  |
//! | no rule                              | `dontAsk` (denied natively), `auto` (a classifier decides) | none |
//! | anything                             | `plan`, or a mode tj does not know    | none   |
//!
//! An `ask` only reaches a person in an interactive session: under `claude -p` and the SDKs
//! (`CLAUDE_CODE_ENTRYPOINT` other than `cli`) an ask is a refusal, and a command allowed by
//! `--allowedTools` (which hooks cannot see) would be refused where it ran before; so there
//! every `ask` becomes no answer.

use serde_json::{Value, json};

use super::permissions::{Layers, Verdict, forms};
use super::{Context, Skip, payload_cwd, reason, rewrite_for, rewritten_segments, shell_call};
use crate::host::Host;

/// What tj tells Claude Code to do with the rewritten call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decision {
    Allow,
    Ask,
}

pub(super) fn answer(payload: &Value, ctx: &Context<'_>) -> Result<Value, Skip> {
    let call = shell_call(payload, "tool_name", &["Bash"], "tool_input")?;
    let rewrite = rewrite_for(call.command, Host::ClaudeCode, ctx)?;
    let rules = layers(payload, ctx).load()?;
    let mode = payload.get("permission_mode").and_then(Value::as_str).unwrap_or("default");

    let mut original = Verdict::Allow;
    for segment in &rewrite.segments {
        original = worst(original, rules.judge(&forms(&segment.text, &segment.words)));
    }
    let rewritten = rewritten_segments(call.command, &rewrite)
        .iter()
        .map(|text| rules.judge(&forms(text, &[])))
        .fold(Verdict::Allow, worst);
    let decision = decide(original, rewritten, mode)?;
    if decision == Decision::Ask && !is_interactive(ctx) {
        return Err(Skip::new("would ask, and nobody can answer outside an interactive session"));
    }
    let decision = match decision {
        Decision::Allow => "allow",
        Decision::Ask => "ask",
    };
    Ok(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason(call.command),
            "updatedInput": super::with_command(call.input, &rewrite.line),
        }
    }))
}

/// The decision for a command whose segments got `original` and whose rewrite would get
/// `rewritten` from the rules, in permission `mode`.
fn decide(original: Verdict, rewritten: Verdict, mode: &str) -> Result<Decision, Skip> {
    if original == Verdict::Deny {
        return Err(Skip::new("a deny rule matches the command"));
    }
    if rewritten == Verdict::Deny {
        return Err(Skip::new("a deny rule matches the rewritten command"));
    }
    let asked = original == Verdict::Ask || rewritten == Verdict::Ask;
    let allowed = original == Verdict::Allow;
    match mode {
        "default" | "acceptEdits" if asked || !allowed => Ok(Decision::Ask),
        "default" | "acceptEdits" => Ok(Decision::Allow),
        "bypassPermissions" if asked => Ok(Decision::Ask),
        "bypassPermissions" => Ok(Decision::Allow),
        "dontAsk" | "auto" if allowed && !asked => Ok(Decision::Allow),
        "dontAsk" | "auto" => Err(Skip::new(format!("mode `{mode}` decides without tj"))),
        _ => Err(Skip::new(format!("mode `{mode}` is left to Claude Code"))),
    }
}

/// The less permissive of two verdicts.
fn worst(a: Verdict, b: Verdict) -> Verdict {
    let rank = |v: Verdict| match v {
        Verdict::Deny => 3,
        Verdict::Ask => 2,
        Verdict::Unmatched => 1,
        Verdict::Allow => 0,
    };
    if rank(a) >= rank(b) { a } else { b }
}

/// Returns true if and only if a person can answer a prompt in this session.
fn is_interactive(ctx: &Context<'_>) -> bool {
    matches!(ctx.env.claude_entrypoint.as_deref(), None | Some("cli"))
}

/// Every settings file of the session: managed, user (`CLAUDE_CONFIG_DIR`, else
/// `~/.claude`), and the project's (`CLAUDE_PROJECT_DIR`, else the payload's `cwd`).
fn layers(payload: &Value, ctx: &Context<'_>) -> Layers {
    let env = ctx.env;
    let user =
        env.claude_config_dir.clone().or_else(|| env.home.as_ref().map(|h| h.join(".claude")));
    let cwd = payload_cwd(payload, env);
    let project = env.claude_project_dir.clone().or_else(|| cwd.clone());
    Layers::new(ctx.system_root, user, project.as_deref(), cwd.as_deref())
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::env::Env;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::File::create(path).unwrap().write_all(text.as_bytes()).unwrap();
    }

    /// The decision for `cargo test` in `mode` with a system root of `root` and HOME in it.
    fn decision(root: &Path, mode: &str) -> Option<String> {
        let home = root.join("home");
        let env = Env::from_vars([("HOME".into(), home.into_os_string())], None);
        let ctx = Context { env: &env, tj: Path::new("/opt/tj"), exclude: &[], system_root: root };
        let payload = json!({
            "cwd": root.join("work"),
            "permission_mode": mode,
            "tool_name": "Bash",
            "tool_input": {"command": "cargo test"},
        });
        let answer = answer(&payload, &ctx).ok()?;
        Some(answer["hookSpecificOutput"]["permissionDecision"].as_str()?.to_owned())
    }

    fn temp_root(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("tj-hook-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        root
    }

    #[test]
    fn managed_settings_count_and_can_silence_the_other_allows() {
        let root = temp_root("managed");
        write(
            &root.join("home/.claude/settings.json"),
            r#"{"permissions":{"allow":["Bash(cargo test)"]}}"#,
        );
        assert_eq!(decision(&root, "default").as_deref(), Some("allow"));
        let managed = if cfg!(target_os = "macos") {
            root.join("Library/Application Support/ClaudeCode")
        } else {
            root.join("etc/claude-code")
        };
        write(
            &managed.join("managed-settings.json"),
            r#"{"allowManagedPermissionRulesOnly":true}"#,
        );
        assert_eq!(decision(&root, "default").as_deref(), Some("ask"));
        write(
            &managed.join("managed-settings.d/10-no-tests.json"),
            r#"{"permissions":{"deny":["Bash(cargo test:*)"]}}"#,
        );
        assert_eq!(decision(&root, "bypassPermissions"), None);
        write(&managed.join("managed-settings.d/10-no-tests.json"), "{");
        assert_eq!(decision(&root, "bypassPermissions"), None);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_decision_table() {
        use Verdict::*;
        let d = |o, m| decide(o, Allow, m).ok();
        assert_eq!(d(Deny, "bypassPermissions"), None);
        assert_eq!(decide(Allow, Deny, "default").ok(), None);
        assert_eq!(decide(Allow, Ask, "default").ok(), Some(Decision::Ask));
        assert_eq!(d(Ask, "default"), Some(Decision::Ask));
        assert_eq!(d(Ask, "bypassPermissions"), Some(Decision::Ask));
        assert_eq!(d(Ask, "dontAsk"), None);
        assert_eq!(d(Allow, "default"), Some(Decision::Allow));
        assert_eq!(d(Allow, "acceptEdits"), Some(Decision::Allow));
        assert_eq!(d(Allow, "dontAsk"), Some(Decision::Allow));
        assert_eq!(d(Allow, "auto"), Some(Decision::Allow));
        assert_eq!(d(Unmatched, "default"), Some(Decision::Ask));
        assert_eq!(d(Unmatched, "bypassPermissions"), Some(Decision::Allow));
        assert_eq!(d(Unmatched, "dontAsk"), None);
        assert_eq!(d(Unmatched, "auto"), None);
        assert_eq!(d(Allow, "plan"), None);
        assert_eq!(d(Allow, "yolo"), None);
    }
}
