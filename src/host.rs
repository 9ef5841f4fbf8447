//! The agent harnesses tj has adapters for, by the names the command line uses
//! (`tj hook claude-code`, `tj install codex`, `tj run --host gemini`).

use std::fmt;

/// An agent harness with a command hook (or, for OpenCode, a plugin) tj can wire itself into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum Host {
    /// Anthropic's Claude Code (`PreToolUse` hook on `Bash`).
    #[value(name = "claude-code", alias = "claude")]
    ClaudeCode,
    /// OpenAI's Codex CLI (`PreToolUse` hook on `Bash`).
    #[value(name = "codex")]
    Codex,
    /// Google's Gemini CLI (`BeforeTool` hook on `run_shell_command`).
    #[value(name = "gemini", alias = "gemini-cli")]
    Gemini,
    /// Cursor's agent (`preToolUse` hook on `Shell`).
    #[value(name = "cursor")]
    Cursor,
    /// GitHub Copilot CLI (`preToolUse` hook on `bash`).
    #[value(name = "copilot", alias = "copilot-cli")]
    Copilot,
    /// OpenCode (an in-process plugin that asks `tj rewrite`).
    #[value(name = "opencode")]
    OpenCode,
}

impl Host {
    /// Every host, in the order reports list them.
    pub const ALL: [Host; 6] =
        [Host::ClaudeCode, Host::Codex, Host::Gemini, Host::Cursor, Host::Copilot, Host::OpenCode];

    /// The name on the command line, in hook commands and in tj's metadata.
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Cursor => "cursor",
            Host::Copilot => "copilot",
            Host::OpenCode => "opencode",
        }
    }

    /// Whether the host shows the agent a command's exit status with its output (verified
    /// end to end: Claude Code writes `Exit code N`, Codex `Process exited with code N`).
    /// `tj run --host` then leaves its own `[tj] exit N` line out.
    pub fn shows_exit_code(self) -> bool {
        matches!(self, Host::ClaudeCode | Host::Codex)
    }

    /// The host named `name` (its canonical name or an alias).
    pub fn parse(name: &str) -> Option<Host> {
        <Host as clap::ValueEnum>::from_str(name, false).ok()
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_parse_back() {
        for host in Host::ALL {
            assert_eq!(Host::parse(host.name()), Some(host));
        }
        assert_eq!(Host::parse("claude"), Some(Host::ClaudeCode));
        assert_eq!(Host::parse("vim"), None);
    }
}
