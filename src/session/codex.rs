//! Codex's rollout lines: `{"timestamp", "type", "payload"}`. `session_meta` carries the
//! session's `id` and `cwd`; `turn_context` the working directory of a turn; `response_item`
//! the items the model sees: `message` (`role`, `content` of `input_text`/`output_text`),
//! `function_call` (`name`, `arguments` as a JSON string, `call_id`), `custom_tool_call`
//! (`name`, `input`, `call_id`: `apply_patch` in its freeform shape), `local_shell_call`
//! (`call_id`, `action.command`), and their outputs `function_call_output` /
//! `custom_tool_call_output` (`call_id`, `output`: a string, text items, or in old logs
//! `{content, success}`). `event_msg` lines repeat what the user interface showed and pass
//! through, as does every type not named here, but for the copies of a call's output that
//! an event holds (its echoes).

use anyhow::Result;
use serde_json::Value;

use super::classify;
use super::{Builder, OwnedStep};

/// Reads rollout line `value`, line `n`.
pub(super) fn line(b: &mut Builder, n: usize, value: &Value) -> Result<()> {
    let payload = value.get("payload").unwrap_or(&Value::Null);
    match value.get("type").and_then(Value::as_str).unwrap_or_default() {
        "session_meta" => {
            if b.transcript.session_id.is_none() {
                b.transcript.session_id =
                    payload.get("id").and_then(Value::as_str).map(str::to_owned);
            }
            set_cwd(b, payload);
            Ok(())
        }
        "turn_context" => {
            set_cwd(b, payload);
            Ok(())
        }
        "response_item" => item(b, n, payload),
        "event_msg" => {
            event(b, n, payload);
            Ok(())
        }
        _ => Ok(()),
    }
}

fn set_cwd(b: &mut Builder, payload: &Value) {
    if let Some(cwd) = payload.get("cwd").and_then(Value::as_str) {
        b.cwd = Some(cwd.to_owned());
    }
}

/// The output fields of the events that copy a call's result for the user interface
/// (`exec_command_end`, and the ends of patches and MCP calls).
const ECHO_FIELDS: [&str; 5] =
    ["aggregated_output", "formatted_output", "stdout", "stderr", "result"];

/// An `event_msg`'s payload: one that names a call may copy its output.
fn event(b: &mut Builder, n: usize, payload: &Value) {
    let Some(id) = payload.get("call_id").and_then(Value::as_str) else { return };
    for field in ECHO_FIELDS {
        if let Some(value) = payload.get(field) {
            b.echo(id, n, value, vec![key("payload"), key(field)]);
        }
    }
}

/// A `response_item`'s payload.
fn item(b: &mut Builder, n: usize, payload: &Value) -> Result<()> {
    let kind = payload.get("type").and_then(Value::as_str).unwrap_or_default();
    let role = payload.get("role").and_then(Value::as_str).unwrap_or(kind);
    b.message(n, role, payload);
    let call_id = payload.get("call_id").and_then(Value::as_str);
    match (kind, call_id) {
        ("message", _) if role == "user" => {
            prompt(b, n, payload);
            Ok(())
        }
        ("function_call" | "custom_tool_call" | "local_shell_call", Some(id)) => {
            let name = payload.get("name").and_then(Value::as_str).unwrap_or("local_shell");
            let (kind, label) = classify::codex(name, payload, b.cwd.as_deref());
            b.call(n, id, name, kind, label)
        }
        ("function_call_output" | "custom_tool_call_output", Some(id)) => output(b, n, id, payload),
        _ => Ok(()),
    }
}

/// A user message: a prompt unless it is context Codex adds itself (the environment, the
/// user's instructions, AGENTS.md).
fn prompt(b: &mut Builder, n: usize, payload: &Value) {
    let Some(parts) = payload.get("content").and_then(Value::as_array) else { return };
    let Some((i, text)) = parts.iter().enumerate().find_map(|(i, p)| {
        (p.get("type").and_then(Value::as_str) == Some("input_text"))
            .then(|| p.get("text").and_then(Value::as_str).map(|t| (i, t)))
            .flatten()
    }) else {
        return;
    };
    let text = text.trim_start();
    if ["<environment_context>", "<user_instructions>", "# AGENTS.md", "<INSTRUCTIONS>"]
        .iter()
        .any(|p| text.starts_with(p))
    {
        return;
    }
    let path = vec![key("payload"), key("content"), OwnedStep::Index(i), key("text")];
    b.prompt(n, path);
}

/// A call's output.
fn output(b: &mut Builder, n: usize, id: &str, payload: &Value) -> Result<()> {
    let (text, mut failed) = match payload.get("output") {
        Some(Value::String(s)) => (Some(s.clone()), false),
        Some(Value::Array(parts)) => (super::claude::texts(parts, "input_text"), false),
        Some(Value::Object(o)) => (
            o.get("content").and_then(Value::as_str).map(str::to_owned),
            o.get("success") == Some(&Value::Bool(false)),
        ),
        _ => (None, false),
    };
    if let Some(code) = text.as_deref().and_then(exit_code) {
        failed |= code != 0;
    }
    b.result(n, id, vec![key("payload"), key("output")], text, failed)
}

/// The exit code an output reports: `{"output":…,"metadata":{"exit_code":N}}` (the `shell`
/// tool), or a first line `Exit code: N` (`shell_command`), or `Process exited with code N`
/// (`exec_command`).
fn exit_code(text: &str) -> Option<i64> {
    if text.starts_with('{')
        && let Ok(value) = serde_json::from_str::<Value>(text)
    {
        return value.pointer("/metadata/exit_code").and_then(Value::as_i64);
    }
    text.lines().take(4).find_map(|line| {
        let line = line.trim();
        line.strip_prefix("Exit code:")
            .or_else(|| line.strip_prefix("Process exited with code"))
            .and_then(|rest| rest.trim().parse().ok())
    })
}

/// The lines `shell_command` and `exec_command` put before what the command printed (up to
/// `Output:`).
const HEADER: [&str; 5] =
    ["Exit code:", "Wall time:", "Chunk ID:", "Process exited", "Original token count:"];

/// What the command printed, without the wrapping a harness adds: Codex's `shell` tool
/// gives `{"output": …, "metadata": …}`, its `shell_command` and `exec_command` tools a few
/// header lines (`Exit code: 0`, `Wall time: …`) up to `Output:`. Header words in the entries
/// would make every later output look like a reference to the listing.
pub(super) fn output_body(text: &str) -> std::borrow::Cow<'_, str> {
    if text.starts_with("{\"output\"")
        && let Ok(Value::Object(map)) = serde_json::from_str(text)
        && let Some(Value::String(output)) = map.get("output")
    {
        return output.clone().into();
    }
    let mut rest = text;
    for _ in 0..8 {
        let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
        if line == "Output:" {
            return after.into();
        }
        if !HEADER.iter().any(|h| line.starts_with(h)) {
            break;
        }
        rest = after;
    }
    text.into()
}

fn key(k: &str) -> OwnedStep {
    OwnedStep::Key(k.to_owned())
}

#[cfg(test)]
mod tests {
    use super::{exit_code, output_body};

    #[test]
    fn exit_codes_are_read_from_each_output_shape() {
        assert_eq!(
            exit_code(r#"{"output":"x","metadata":{"exit_code":2,"duration_seconds":0.1}}"#),
            Some(2)
        );
        assert_eq!(exit_code("Exit code: 0\nWall time: 1 seconds\nOutput:\nok"), Some(0));
        assert_eq!(
            exit_code("Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 101\n"),
            Some(101)
        );
        assert_eq!(exit_code("plain text"), None);
    }

    #[test]
    fn a_listing_is_read_without_the_harness_wrapping() {
        assert_eq!(
            output_body(r#"{"output":"a.rs\nb.rs\n","metadata":{"exit_code":0}}"#),
            "a.rs\nb.rs\n"
        );
        assert_eq!(
            output_body("Exit code: 0\nWall time: 1 seconds\nOutput:\nsrc/lexer.rs\n"),
            "src/lexer.rs\n"
        );
        assert_eq!(
            output_body(
                "Chunk ID: 7\nWall time: 0.2 seconds\nProcess exited with code 0\nOriginal token count: 9\nOutput:\nx.rs"
            ),
            "x.rs"
        );
        // Without its `Output:` line, or with other text first, the text is all body.
        assert_eq!(output_body("Exit code: 0\nsrc/a.rs"), "Exit code: 0\nsrc/a.rs");
        assert_eq!(output_body("src/a.rs\nOutput:\nb"), "src/a.rs\nOutput:\nb");
    }
}
