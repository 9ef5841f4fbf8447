//! Where each harness reads the file tj writes, for the user and for the project.
//!
//! | host | user | project (the current directory) |
//! |---|---|---|
//! | claude-code | `$CLAUDE_CONFIG_DIR/settings.json` (`~/.claude/`) | `.claude/settings.local.json` |
//! | codex | `$CODEX_HOME/hooks.json` (`~/.codex/`) | `.codex/hooks.json` |
//! | gemini | `$GEMINI_CLI_HOME/.gemini/settings.json` (`~/.gemini/`) | `.gemini/settings.json` |
//! | cursor | `~/.cursor/hooks.json` | `.cursor/hooks.json` |
//! | copilot | `$COPILOT_HOME/hooks/tj.json` (`~/.copilot/`) | `.github/hooks/tj.json` |
//! | opencode | `$XDG_CONFIG_HOME/opencode/plugins/tj.js` (`~/.config/`) | `.opencode/plugins/tj.js` |
//!
//! Claude Code's project scope is `settings.local.json`, not `settings.json`: the hook
//! names the absolute path of *this* machine's tj, which does not belong in a file the
//! project commits (Claude Code keeps `settings.local.json` out of git itself). The other
//! hosts have one project file; `--project` there writes a path others may not share.

use std::path::PathBuf;

use anyhow::{Result, bail};

use crate::env::Env;
use crate::host::Host;

/// Whose settings: the user's, or the project's in the current directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    User,
    Project,
}

impl Scope {
    /// Both scopes, in the order reports list them.
    pub(crate) const ALL: [Scope; 2] = [Scope::User, Scope::Project];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }

    /// The flag that selects this scope on `tj install`, with its leading space.
    pub(crate) fn flag(self) -> &'static str {
        match self {
            Scope::User => "",
            Scope::Project => " --project",
        }
    }
}

/// The file tj writes for `host` in `scope`.
pub(crate) fn settings_file(host: Host, scope: Scope, env: &Env) -> Result<PathBuf> {
    let rel: &[&str] = match host {
        Host::ClaudeCode => &[".claude", "settings.local.json"],
        Host::Codex => &[".codex", "hooks.json"],
        Host::Gemini => &[".gemini", "settings.json"],
        Host::Cursor => &[".cursor", "hooks.json"],
        Host::Copilot => &[".github", "hooks", "tj.json"],
        Host::OpenCode => &[".opencode", "plugins", "tj.js"],
    };
    if scope == Scope::Project {
        let Some(cwd) = &env.cwd else { bail!("could not read the current directory") };
        return Ok(rel.iter().fold(cwd.clone(), |p, c| p.join(c)));
    }
    let home = || -> Result<PathBuf> {
        match &env.home {
            Some(home) if home.is_absolute() => Ok(home.clone()),
            _ => bail!("HOME is not set to an absolute path: cannot find {host}'s user settings"),
        }
    };
    Ok(match host {
        Host::ClaudeCode => {
            env.claude_config_dir.clone().map_or_else(|| home().map(|h| h.join(".claude")), Ok)?
        }
        .join("settings.json"),
        Host::Codex => env
            .codex_home
            .clone()
            .map_or_else(|| home().map(|h| h.join(".codex")), Ok)?
            .join("hooks.json"),
        Host::Gemini => {
            env.gemini_cli_home.clone().map_or_else(home, Ok)?.join(".gemini/settings.json")
        }
        Host::Cursor => home()?.join(".cursor/hooks.json"),
        Host::Copilot => env
            .copilot_home
            .clone()
            .map_or_else(|| home().map(|h| h.join(".copilot")), Ok)?
            .join("hooks/tj.json"),
        Host::OpenCode => env
            .xdg_config_home
            .clone()
            .map_or_else(|| home().map(|h| h.join(".config")), Ok)?
            .join("opencode/plugins/tj.js"),
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    fn env(vars: &[(&str, &str)]) -> Env {
        let vars = vars.iter().map(|(k, v)| (OsString::from(k), OsString::from(v)));
        Env::from_vars(vars, Some(PathBuf::from("/w")))
    }

    #[test]
    fn user_files_honour_the_hosts_variables() {
        let e = env(&[("HOME", "/h"), ("CLAUDE_CONFIG_DIR", "/c"), ("CODEX_HOME", "/x")]);
        let user = |host| settings_file(host, Scope::User, &e).unwrap();
        assert_eq!(user(Host::ClaudeCode), PathBuf::from("/c/settings.json"));
        assert_eq!(user(Host::Codex), PathBuf::from("/x/hooks.json"));
        assert_eq!(user(Host::Gemini), PathBuf::from("/h/.gemini/settings.json"));
        assert_eq!(user(Host::Cursor), PathBuf::from("/h/.cursor/hooks.json"));
        assert_eq!(user(Host::Copilot), PathBuf::from("/h/.copilot/hooks/tj.json"));
        assert_eq!(user(Host::OpenCode), PathBuf::from("/h/.config/opencode/plugins/tj.js"));
        let project = settings_file(Host::ClaudeCode, Scope::Project, &e).unwrap();
        assert_eq!(project, PathBuf::from("/w/.claude/settings.local.json"));
        assert!(settings_file(Host::Cursor, Scope::User, &env(&[])).is_err());
    }
}
