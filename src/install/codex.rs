//! Codex's hook trust. Codex runs a hook from `hooks.json` only once the user has trusted
//! it, and skips an untrusted one silently. Trusting it in Codex (`/hooks`) writes
//!
//! ```toml
//! [hooks.state."<path of hooks.json>:pre_tool_use:<group>:<entry>"]
//! trusted_hash = "sha256:…"
//! ```
//!
//! to `$CODEX_HOME/config.toml`. The hash covers the entry, not the program it runs: SHA-256
//! of the compact JSON, keys sorted, of `{"event_name": "pre_tool_use", "matcher": …,
//! "hooks": [{"type": "command", "command": …, "timeout": …, "async": false}]}`
//! (openai/codex `hooks/src/engine/discovery.rs`, `command_hook_hash`; checked against the
//! `currentHash` Codex 0.171.0 reports for tj's entry in `app-server` `hooks/list`). tj
//! prints the lines rather than editing `config.toml` itself: trusting a hook is the
//! user's decision, and the key moves with the entry's position in the file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::hooks::{self, Found};
use crate::env::Env;
use crate::host::Host;

/// The `[hooks.state."…"]` key for the entry `found` of the `hooks.json` at `path` (the
/// path Codex itself builds: its config folder joined with `hooks.json`).
pub(crate) fn state_key(path: &Path, found: &Found) -> String {
    format!("{}:pre_tool_use:{}:{}", path.display(), found.group, found.index)
}

/// The hash Codex trusts for `found`, or `None` when the entry has keys tj does not
/// write (someone edited it) and the hash cannot be derived with certainty.
pub(crate) fn trust_hash(found: &Found) -> Option<String> {
    let known = ["matcher", "hooks", "type", "command", "timeout"];
    if !found.keys.iter().all(|k| known.contains(&k.as_str())) {
        return None;
    }
    let mut identity = serde_json::json!({
        "event_name": "pre_tool_use",
        "hooks": [{
            "type": "command",
            "command": found.command,
            "timeout": found.timeout.unwrap_or(600).max(1),
            "async": false,
        }],
    });
    if let Some(matcher) = &found.matcher {
        identity["matcher"] = serde_json::Value::String(matcher.clone());
    }
    // serde_json's map is sorted by key: this is Codex's canonical form.
    let digest = Sha256::digest(identity.to_string().as_bytes());
    Some(format!("sha256:{}", digest.iter().map(|b| format!("{b:02x}")).collect::<String>()))
}

/// The user's Codex `config.toml`, where trust is recorded for every scope.
pub(crate) fn config_toml(env: &Env) -> Option<PathBuf> {
    let home = env.codex_home.clone().or_else(|| env.home.as_ref().map(|h| h.join(".codex")))?;
    Some(home.join("config.toml"))
}

/// Whether `config` trusts the entry: `Some(true)` trusted with this hash, `Some(false)`
/// trusted with another (the entry changed since), `None` no record.
pub(crate) fn trusted(config: &str, key: &str, hash: &str) -> Option<bool> {
    let header = format!("[hooks.state.{}]", serde_json::Value::String(key.to_owned()));
    let at = config.find(&header)?;
    let table = &config[at + header.len()..];
    let table = table.find("\n[").map_or(table, |end| &table[..end]);
    let line = table.lines().find_map(|l| l.trim().strip_prefix("trusted_hash"))?;
    let value = line.trim_start().strip_prefix('=')?.trim();
    Some(value.trim_matches('"') == hash)
}

/// The trust step after `tj install codex`, for the entry in the file at `path` (read from
/// `real`).
pub(crate) fn trust_note(path: &Path, real: &Path) -> String {
    let mut out = String::from(
        "  Codex skips a hook until you trust it: run `codex`, open /hooks and trust tj's \
         PreToolUse hook\n",
    );
    let Some(layout) = hooks::layout(Host::Codex) else { return out };
    let Ok(text) = crate::fsx::read(real) else { return out };
    let Ok(doc) = hooks::parse(&String::from_utf8_lossy(&text), &layout) else { return out };
    let Some(found) = hooks::find(&doc, &layout, Host::Codex).into_iter().next() else {
        return out;
    };
    if let Some(hash) = trust_hash(&found) {
        let key = serde_json::Value::String(state_key(path, &found));
        let _ = writeln!(
            out,
            "  or add these lines to Codex's config.toml ($CODEX_HOME/config.toml):\n\n\
             [hooks.state.{key}]\ntrusted_hash = \"{hash}\"\n"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_the_one_codex_reports() {
        // `currentHash` from Codex 0.171.0's app-server `hooks/list` for this entry.
        let found = Found {
            command: "/usr/local/bin/tj hook codex".to_owned(),
            command_node: super::super::jsonedit::parse("\"\"", false).unwrap(),
            program: "/usr/local/bin/tj".to_owned(),
            group: 0,
            index: 0,
            matcher: Some("^Bash$".to_owned()),
            timeout: Some(10),
            keys: ["matcher", "hooks", "type", "command", "timeout"].map(str::to_owned).to_vec(),
        };
        assert_eq!(
            trust_hash(&found).as_deref(),
            Some("sha256:d8dc4ea91b10b9c45dc3a8d3a0569b6c0c41b16a3644b5de34fa84322425654a")
        );
        let config = "[x]\na = 1\n[hooks.state.\"/h/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:ab\"\n";
        assert_eq!(trusted(config, "/h/hooks.json:pre_tool_use:0:0", "sha256:ab"), Some(true));
        assert_eq!(trusted(config, "/h/hooks.json:pre_tool_use:0:0", "sha256:cd"), Some(false));
        assert_eq!(trusted(config, "/h/hooks.json:pre_tool_use:1:0", "sha256:ab"), None);
    }
}
