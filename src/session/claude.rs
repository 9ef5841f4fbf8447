//! Claude Code's entries: `{"type":"user"|"assistant", "message":{"role", "content"}, "uuid",
//! "parentUuid", "sessionId", "cwd", …}`. An assistant message's content holds `tool_use`
//! blocks (`id`, `name`, `input`); a user message's, `tool_result` blocks (`tool_use_id`,
//! `content` as a string or as text blocks, `is_error`). Other entry types (`summary`,
//! `system`, `file-history-snapshot`, …) are not messages and pass through.

use anyhow::Result;
use serde_json::Value;

use super::classify;
use super::{Builder, OwnedStep};

/// Reads entry `value` on line `n`.
pub(super) fn line(b: &mut Builder, n: usize, value: &Value) -> Result<()> {
    if b.transcript.session_id.is_none()
        && let Some(id) = value.get("sessionId").and_then(Value::as_str)
    {
        b.transcript.session_id = Some(id.to_owned());
    }
    if let Some(cwd) = value.get("cwd").and_then(Value::as_str) {
        b.cwd = Some(cwd.to_owned());
    }
    let kind = value.get("type").and_then(Value::as_str).unwrap_or_default();
    let Some(message) = value.get("message").filter(|_| matches!(kind, "user" | "assistant"))
    else {
        return Ok(());
    };
    let role = message.get("role").and_then(Value::as_str).unwrap_or(kind);
    b.message(n, role, message);
    let content = message.get("content");
    if let Some(Value::String(_)) = content {
        if kind == "user" {
            b.prompt(n, vec![key("message"), key("content")]);
        }
        return Ok(());
    }
    let Some(blocks) = content.and_then(Value::as_array) else { return Ok(()) };
    let mut first_text = None;
    let mut results = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        match block.get("type").and_then(Value::as_str).unwrap_or_default() {
            "tool_use" => tool_use(b, n, block)?,
            "tool_result" => results.push(tool_result(b, n, i, block)?),
            "text" if first_text.is_none() => first_text = Some(i),
            _ => {}
        }
    }
    // The entry's `toolUseResult` is the harness's own copy of its one result (an entry with
    // several results has no way to tell whose copy it is, and keeps it).
    if let ([id], Some(copy)) = (results.as_slice(), value.get("toolUseResult")) {
        b.echo(id, n, copy, vec![key("toolUseResult")]);
    }
    if kind == "user"
        && value.get("isMeta") != Some(&Value::Bool(true))
        && let Some(i) = first_text
    {
        b.prompt(n, vec![key("message"), key("content"), OwnedStep::Index(i), key("text")]);
    }
    Ok(())
}

/// A `tool_use` block.
fn tool_use(b: &mut Builder, n: usize, block: &Value) -> Result<()> {
    let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
    let name = block.get("name").and_then(Value::as_str).unwrap_or_default();
    let input = block.get("input").unwrap_or(&Value::Null);
    let (kind, label) = classify::claude(name, input, b.cwd.as_deref());
    b.call(n, id, name, kind, label)
}

/// A `tool_result` block, block `i` of the message; returns the id of its call.
fn tool_result(b: &mut Builder, n: usize, i: usize, block: &Value) -> Result<String> {
    let id = block.get("tool_use_id").and_then(Value::as_str).unwrap_or_default();
    let failed = block.get("is_error").and_then(Value::as_bool).unwrap_or(false);
    let text = match block.get("content") {
        None | Some(Value::Null) => Some(String::new()),
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => texts(parts, "text"),
        Some(_) => None,
    };
    let path = vec![key("message"), key("content"), OwnedStep::Index(i), key("content")];
    b.result(n, id, path, text, failed)?;
    Ok(id.to_owned())
}

/// The texts of `parts` joined by line breaks, if every part is a text block of `kind`.
pub(super) fn texts(parts: &[Value], kind: &str) -> Option<String> {
    let mut out = Vec::with_capacity(parts.len());
    for part in parts {
        if part.get("type").and_then(Value::as_str) != Some(kind) {
            return None;
        }
        out.push(part.get("text").and_then(Value::as_str)?);
    }
    Some(out.join("\n"))
}

fn key(k: &str) -> OwnedStep {
    OwnedStep::Key(k.to_owned())
}
