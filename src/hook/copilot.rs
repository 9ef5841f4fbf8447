//! GitHub Copilot CLI's `preToolUse` hook on `bash`.
//!
//! The payload's `toolArgs` is the tool's arguments as a JSON *string* (github/copilot-cli
//! #2643); the answer is a top-level `modifiedArgs` object, those arguments with `command`
//! replaced. No `permissionDecision` is sent: Copilot's permissions come from its command
//! line (`--allow-tool`, `--deny-tool`), which a hook cannot see, so Copilot keeps deciding
//! as it would (unverified: whether it judges the original or the modified arguments).

use serde_json::{Map, Value, json};

use super::{Context, Skip, rewrite_for, shell_input, with_command};
use crate::host::Host;

pub(super) fn answer(payload: &Value, ctx: &Context<'_>) -> Result<Value, Skip> {
    let tool = payload.get("toolName").and_then(Value::as_str).unwrap_or_default();
    if tool != "bash" {
        return Err(Skip::new(format!("`{tool}` is not the shell tool")));
    }
    let args: Map<String, Value> = match payload.get("toolArgs") {
        Some(Value::String(text)) => serde_json::from_str(text)
            .map_err(|err| Skip::new(format!("`toolArgs` is not a JSON object: {err}")))?,
        // Accepted too, should a later version send the object itself.
        Some(Value::Object(args)) => args.clone(),
        _ => return Err(Skip::new("no `toolArgs`")),
    };
    let call = shell_input(&args)?;
    let rewrite = rewrite_for(call.command, Host::Copilot, ctx)?;
    Ok(json!({ "modifiedArgs": with_command(call.input, &rewrite.line) }))
}
