//! Claude Code against a fake Messages API: one `Bash` tool call, then the end of the turn.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::server::{Reply, Request};

/// The id of the one tool call the fake model makes; the tool result answers it.
const TOOL_USE_ID: &str = "toolu_01TjEndToEndCargoTest";

/// Answers Claude Code's requests: on `POST /v1/messages`, a `Bash` call running `command` while
/// the conversation has no result for it yet, then a short text that ends the turn. Requests
/// that offer no `Bash` tool (a title, a topic check) get the text; anything else a bare 200.
pub(crate) fn responder(command: &str) -> impl Fn(&Request) -> Reply + Send + Sync + 'static {
    let command = command.to_string();
    move |request| match (request.method.as_str(), request.path()) {
        ("POST", "/v1/messages") => messages(&request.json(), &command),
        ("POST", "/v1/messages/count_tokens") => Reply::json(&json!({"input_tokens": 1})),
        ("POST", _) => Reply::empty(404),
        _ => Reply::empty(200),
    }
}

fn messages(body: &Value, command: &str) -> Reply {
    let input = json!({"command": command, "description": "Run the crate's tests"});
    let call = offers(body, "Bash") && tool_result_in(body, TOOL_USE_ID).is_none();
    reply(body, call.then_some((TOOL_USE_ID, "Bash", input)))
}

/// Whether the request offers the model tool `name`.
pub(crate) fn offers(body: &Value, name: &str) -> bool {
    body["tools"].as_array().is_some_and(|tools| tools.iter().any(|t| t["name"] == name))
}

/// The model's answer to `body`: the tool call `call` (id, tool, input), or without one a
/// short text that ends the turn; streamed when the request asks for a stream.
pub(crate) fn reply(body: &Value, call: Option<(&str, &str, Value)>) -> Reply {
    let model = body["model"].as_str().unwrap_or("claude-fake");
    let (block, delta, stop_reason) = match &call {
        Some((id, name, input)) => (
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            "tool_use",
        ),
        None => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": "The tests ran."}),
            "end_turn",
        ),
    };
    let usage = json!({"input_tokens": 1, "output_tokens": 1});
    // One id per answer: Claude Code merges the log entries of one message id into one
    // message, so a repeated id would fuse two turns of the fake model.
    let id = format!("msg_01TjEndToEnd{}", body["messages"].as_array().map_or(0, Vec::len));
    let message = json!({
        "id": id, "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage,
    });
    if body["stream"] != true {
        let mut whole = message;
        let mut content = block;
        match call {
            Some((_, _, input)) => content["input"] = input,
            None => content["text"] = delta["text"].clone(),
        }
        whole["content"] = json!([content]);
        whole["stop_reason"] = json!(stop_reason);
        return Reply::json(&whole);
    }
    Reply::sse(&[
        ("message_start", json!({"type": "message_start", "message": message})),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": delta})),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 1}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
}

/// The text of the `tool_result` block answering call `id`, if `body` has one.
pub(crate) fn tool_result_in(body: &Value, id: &str) -> Option<String> {
    let messages = body["messages"].as_array()?;
    let mut blocks = messages.iter().filter_map(|m| m["content"].as_array()).flatten();
    let result = blocks.rfind(|b| b["type"] == "tool_result" && b["tool_use_id"] == id)?;
    Some(match &result["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n")
        }
        other => other.to_string(),
    })
}

/// The tool result Claude Code sent back to the model, from the recorded requests.
pub(crate) fn tool_result(requests: &[Request]) -> Option<String> {
    requests
        .iter()
        .filter(|r| r.path() == "/v1/messages")
        .find_map(|r| tool_result_in(&r.json(), TOOL_USE_ID))
}

/// How the user lets Claude Code run the fake model's command in `-p` mode, where nothing
/// can be asked.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Permission {
    /// An allow rule for it in the user's settings, as real users have.
    AllowRule,
    /// `--dangerously-skip-permissions` (`IS_SANDBOX=1`, since the tests may run as root).
    SkipPermissions,
    /// Nothing: `-p` denies the command, as it would ask.
    Nothing,
}

/// The user's settings in `CLAUDE_CONFIG_DIR` before tj is installed.
pub(crate) fn user_settings(permission: Permission, command: &str) -> Value {
    match permission {
        Permission::AllowRule => json!({"permissions": {"allow": [format!("Bash({command}:*)")]}}),
        Permission::SkipPermissions | Permission::Nothing => json!({}),
    }
}

/// Makes `cmd` (the `claude` binary) `claude -p PROMPT` in `cwd`, talking to `model_url` only.
pub(crate) fn configure(
    cmd: &mut Command,
    permission: Permission,
    model_url: &str,
    config_dir: &Path,
    cwd: &Path,
) {
    if let Permission::SkipPermissions = permission {
        cmd.arg("--dangerously-skip-permissions").env("IS_SANDBOX", "1");
    }
    cmd.args(["-p", "Run the tests of this crate.", "--output-format", "json"]);
    isolate(cmd, model_url, config_dir, cwd);
}

/// Points `cmd` (the `claude` binary) at `model_url` and `config_dir`, in `cwd`, with every
/// other kind of traffic turned off.
pub(crate) fn isolate(cmd: &mut Command, model_url: &str, config_dir: &Path, cwd: &Path) {
    cmd.current_dir(cwd)
        .env("CLAUDE_CONFIG_DIR", config_dir)
        .env("ANTHROPIC_BASE_URL", model_url)
        .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-a-local-server")
        // Nothing but the fake model: no telemetry, error reports, updates or other traffic.
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_BUG_COMMAND", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY", "1");
}
