//! Gemini CLI's `BeforeTool` hook on `run_shell_command`.
//!
//! The answer carries no decision: `hookSpecificOutput.tool_input` is merged over the call's
//! arguments (verified with Gemini CLI 0.61, HARNESSES.md 6) and Gemini then confirms or runs
//! the rewritten call as its settings say, so a person asked sees the rewritten command. A
//! `decision: "allow"` might skip that confirmation (unverified), which would turn a prompt
//! into an allow: tj does not send one.
//!
//! Gemini's own command lists would judge the rewritten line, not the original: a
//! `run_shell_command(git)` in `tools.core` would refuse `<tj> run -- …`, one in
//! `tools.exclude` would no longer match it. So any command-specific shell entry in
//! `tools.core`, `tools.exclude`, `tools.allowed` (or their old top-level names
//! `coreTools`, `excludeTools`, `allowedTools`), a policy file that names the shell tool,
//! or a settings file that does not parse means no answer (`{}`).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Context, Skip, payload_cwd, read_json, rewrite_for, shell_call, with_command};
use crate::host::Host;

/// The shell tool's names: its id and its class name, which settings also accept.
const SHELL: [&str; 2] = ["run_shell_command", "ShellTool"];

pub(super) fn answer(payload: &Value, ctx: &Context<'_>) -> Result<Value, Skip> {
    let call = shell_call(payload, "tool_name", &["run_shell_command"], "tool_input")?;
    let rewrite = rewrite_for(call.command, Host::Gemini, ctx)?;
    let (settings, policies) = locations(payload, ctx);
    for path in &settings {
        if let Some(value) = read_json(path, true)? {
            check_settings(&value)
                .map_err(|why| Skip::new(format!("`{}`: {why}", path.display())))?;
        }
    }
    for dir in &policies {
        check_policies(dir)?;
    }
    Ok(json!({ "hookSpecificOutput": { "tool_input": with_command(call.input, &rewrite.line) } }))
}

/// The settings files and policy directories Gemini CLI reads: system, user
/// (`GEMINI_CLI_HOME`, else `~`), and the workspace's (the payload's `cwd` and its parents).
fn locations(payload: &Value, ctx: &Context<'_>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let system = ctx.system_root.join("etc/gemini-cli");
    let mut settings = vec![system.join("system-defaults.json"), system.join("settings.json")];
    let mut policies = vec![system.join("policies")];
    let home = ctx.env.gemini_cli_home.clone().or_else(|| ctx.env.home.clone());
    let cwd = payload_cwd(payload, ctx.env);
    for dir in home.iter().map(PathBuf::as_path).chain(cwd.iter().flat_map(|c| c.ancestors())) {
        settings.push(dir.join(".gemini/settings.json"));
        policies.push(dir.join(".gemini/policies"));
    }
    (settings, policies)
}

/// Refuses settings whose tool lists single out shell commands.
fn check_settings(settings: &Value) -> Result<(), String> {
    let lists = [
        ("tools", "core"),
        ("tools", "exclude"),
        ("tools", "allowed"),
        ("", "coreTools"),
        ("", "excludeTools"),
        ("", "allowedTools"),
    ];
    for (group, key) in lists {
        let list = if group.is_empty() {
            settings.get(key)
        } else {
            settings.get(group).and_then(|g| g.get(key))
        };
        let Some(list) = list else { continue };
        let entries = list.as_array().ok_or_else(|| format!("`{key}` is not a list"))?;
        for entry in entries {
            let entry = entry.as_str().ok_or_else(|| format!("`{key}` has a non-string"))?;
            let entry = entry.trim();
            if SHELL.iter().any(|s| entry.starts_with(&format!("{s}("))) {
                return Err(format!("`{key}` lists shell commands (`{entry}`)"));
            }
            if key.contains("xclude") && SHELL.contains(&entry) {
                return Err(format!("`{key}` excludes the shell tool"));
            }
        }
    }
    Ok(())
}

/// Refuses a policy directory with a file that names the shell tool (tj does not evaluate
/// Gemini's policy rules).
fn check_policies(dir: &std::path::Path) -> Result<(), Skip> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let text = crate::fsx::read_regular(&path, true, super::MAX_SETTINGS)
            .map_err(|_| Skip::new(format!("cannot read `{}`", path.display())))?;
        if SHELL.iter().any(|s| String::from_utf8_lossy(&text).contains(s)) {
            return Err(Skip::new(format!("policy `{}` names the shell tool", path.display())));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_specific_shell_entries_are_refused() {
        assert!(check_settings(&json!({"tools": {"allowed": ["run_shell_command"]}})).is_ok());
        assert!(
            check_settings(&json!({"tools": {"core": ["run_shell_command", "read_file"]}})).is_ok()
        );
        assert!(
            check_settings(&json!({"tools": {"allowed": ["run_shell_command(git)"]}})).is_err()
        );
        assert!(check_settings(&json!({"excludeTools": ["ShellTool(rm -rf)"]})).is_err());
        assert!(check_settings(&json!({"tools": {"exclude": ["run_shell_command"]}})).is_err());
        assert!(check_settings(&json!({"tools": {"exclude": "x"}})).is_err());
    }
}
