//! Codex against a fake Responses API: one shell function call, then the end of the turn.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::server::{Reply, Request};

/// The id of the one function call the fake model makes; the output answers it.
const CALL_ID: &str = "call_tj_end_to_end_cargo_test";
/// The variable Codex reads the fake provider's key from (`env_key` in config.toml).
const KEY_VAR: &str = "TJ_FAKE_MODEL_KEY";

/// Answers Codex's requests: on `POST /v1/responses`, a call of its shell tool running `command`
/// while the input has no output for it yet, then an assistant message that ends the turn.
pub(crate) fn responder(command: &str) -> impl Fn(&Request) -> Reply + Send + Sync + 'static {
    let command = command.to_string();
    move |request| match (request.method.as_str(), request.path()) {
        ("POST", "/v1/responses") => responses(&request.json(), &command),
        ("POST", _) => Reply::empty(404),
        ("GET", "/v1/models") => Reply::json(&json!({"object": "list", "data": [], "models": []})),
        _ => Reply::empty(200),
    }
}

fn responses(body: &Value, command: &str) -> Reply {
    let call = shell_call(body, command).filter(|_| output_in(body, CALL_ID).is_none());
    reply(call.map(|(name, arguments)| (CALL_ID, name, arguments)))
}

/// The model's answer: the function call `call` (call id, tool, arguments), or without one
/// an assistant message that ends the turn.
pub(crate) fn reply(call: Option<(&str, &str, Value)>) -> Reply {
    let item = match call {
        Some((id, name, arguments)) => json!({
            "type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": name,
            "arguments": arguments.to_string(), "status": "completed",
        }),
        None => json!({
            "type": "message", "id": "msg_tj_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "The tests ran.", "annotations": []}],
        }),
    };
    let usage = json!({
        "input_tokens": 1, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2,
    });
    Reply::sse(&[
        ("response.created", json!({"type": "response.created", "response": {"id": "resp_tj_1"}})),
        (
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "resp_tj_1", "usage": usage}}),
        ),
    ])
}

/// The shell tool this Codex offers and the arguments that run `command` with it.
pub(crate) fn shell_call(body: &Value, command: &str) -> Option<(&'static str, Value)> {
    let tools = body["tools"].as_array()?;
    let offers = |name: &str| tools.iter().any(|t| t["name"] == name);
    if offers("exec_command") {
        Some(("exec_command", json!({"cmd": command})))
    } else if offers("shell_command") {
        Some(("shell_command", json!({"command": command})))
    } else if offers("shell") {
        Some(("shell", json!({"command": ["bash", "-lc", command]})))
    } else {
        None
    }
}

/// The output Codex sent back for call `id`, if `body` has one.
pub(crate) fn output_in(body: &Value, id: &str) -> Option<String> {
    let item = body["input"]
        .as_array()?
        .iter()
        .rfind(|i| i["type"] == "function_call_output" && i["call_id"] == id)?;
    Some(match &item["output"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n")
        }
        other => other.to_string(),
    })
}

/// The function-call output Codex sent back to the model, from the recorded requests.
pub(crate) fn tool_result(requests: &[Request]) -> Option<String> {
    requests
        .iter()
        .filter(|r| r.path() == "/v1/responses")
        .find_map(|r| output_in(&r.json(), CALL_ID))
}

/// `$CODEX_HOME/config.toml`: the fake model as the only provider, no retries, no update
/// check, no analytics.
pub(crate) fn config(model_url: &str) -> String {
    format!(
        r#"model = "gpt-fake"
model_provider = "fake"
check_for_update_on_startup = false

[analytics]
enabled = false

# The curated-plugin sync reaches api.github.com and chatgpt.com at startup.
[features]
plugins = false

[model_providers.fake]
name = "fake"
base_url = "{model_url}/v1"
env_key = "{KEY_VAR}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"#
    )
}

/// How Codex comes to run tj's hook: `exec` skips a hook nobody trusted, silently.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Trust {
    /// `--dangerously-bypass-hook-trust` for this run.
    Bypass,
    /// The `[hooks.state."…"] trusted_hash` lines `tj install codex` prints, in config.toml.
    Persisted,
}

/// The `[hooks.state."…"]` table and its `trusted_hash` line in `tj install codex`'s message.
pub(crate) fn trust_lines(install_message: &str) -> Option<String> {
    let lines: Vec<&str> = install_message.lines().map(str::trim).collect();
    let at = lines.iter().position(|l| l.starts_with("[hooks.state."))?;
    let hash = lines.get(at + 1).filter(|l| l.starts_with("trusted_hash"))?;
    Some(format!("{}\n{hash}\n", lines[at]))
}

/// Makes `cmd` (the `codex` binary) `codex exec PROMPT` in `cwd`, talking to the fake model
/// only. Commands run without approval or sandbox, which is the permission mode
/// (`bypassPermissions`) where tj's hook may answer `allow`.
pub(crate) fn configure(cmd: &mut Command, trust: Trust, codex_home: &Path, cwd: &Path) {
    cmd.args([
        "exec",
        "--skip-git-repo-check",
        "--ephemeral",
        "--color",
        "never",
        "--dangerously-bypass-approvals-and-sandbox",
    ]);
    if let Trust::Bypass = trust {
        cmd.arg("--dangerously-bypass-hook-trust");
    }
    cmd.arg("-C").arg(cwd).arg("Run the tests of this crate.").current_dir(cwd);
    isolate(cmd, codex_home);
}

/// Points `cmd` (the `codex` binary) at `codex_home`, whose config.toml names the fake model,
/// with the key that provider reads.
pub(crate) fn isolate(cmd: &mut Command, codex_home: &Path) {
    cmd.env("CODEX_HOME", codex_home).env(KEY_VAR, "sk-fake-key-for-a-local-server");
}
