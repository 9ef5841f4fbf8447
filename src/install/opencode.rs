//! The OpenCode plugin `tj install opencode` writes: OpenCode has no command hook, it loads
//! JavaScript plugins from its `plugins` directories. The plugin's `tool.execute.before`
//! (OpenCode's V1 plugin API) asks `tj rewrite --host opencode -- <command>` for each
//! shell call and, when tj answers (exit 0, one line), runs that line instead. Any error,
//! a timeout or a non-zero exit leaves the command as the model wrote it.
//!
//! The file is tj's own, recognised by its first line ([`MARKER`]); a file at the same path
//! without it is someone else's and is never overwritten or removed.

/// The first line of every plugin file tj writes.
pub(crate) const MARKER: &str =
    "// Written by `tj install opencode`: OpenCode's shell commands through `tj run`.";

/// Returns true if and only if `text` is a plugin file tj wrote.
pub(crate) fn is_tj(text: &str) -> bool {
    text.starts_with(MARKER)
}

/// The plugin, running the tj at `tj`.
pub(crate) fn plugin(tj: &str) -> String {
    let tj = serde_json::Value::String(tj.to_owned()).to_string();
    format!(
        r#"{MARKER}
// Remove it with `tj uninstall opencode`; `tj install opencode` rewrites it.
import {{ spawnSync }} from "node:child_process";

const TJ = {tj};

export const TjPlugin = async () => ({{
  "tool.execute.before": async (input, output) => {{
    if (input?.tool !== "bash") return;
    const command = output?.args?.command;
    if (typeof command !== "string" || command === "") return;
    try {{
      const result = spawnSync(TJ, ["rewrite", "--host", "opencode", "--", command], {{
        encoding: "utf8",
        timeout: 10000,
        stdio: ["ignore", "pipe", "ignore"],
      }});
      if (result.error || result.status !== 0 || typeof result.stdout !== "string") return;
      const line = result.stdout.endsWith("\n") ? result.stdout.slice(0, -1) : result.stdout;
      if (line !== "") output.args.command = line;
    }} catch {{
      // Fail open: the command runs as the model wrote it.
    }}
  }},
}});
"#
    )
}

/// The tj a plugin file runs (the `const TJ = "…";` line), if it is tj's.
pub(crate) fn program(text: &str) -> Option<String> {
    if !is_tj(text) {
        return None;
    }
    let line = text.lines().find_map(|l| l.strip_prefix("const TJ = "))?;
    serde_json::from_str(line.strip_suffix(';')?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_names_the_tj_it_runs() {
        let text = plugin("/a \"b\"/tj");
        assert!(is_tj(&text));
        assert_eq!(program(&text).as_deref(), Some("/a \"b\"/tj"));
        assert_eq!(program("export const X = 1;\nconst TJ = \"/x\";"), None);
    }
}
