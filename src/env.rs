//! Every `TJ_*` variable tj reads, as a documented constant, and [`Env`], the snapshot the
//! rest of the program receives instead of reading the environment itself (STYLE.md 2.1:
//! only this module reads `TJ_*`, so everything downstream is a pure function of its input).

use std::ffi::OsString;
use std::path::PathBuf;

/// Overrides the configuration directory (config.json, user rules). Default on Linux:
/// `~/.config/tokenjuice`, shared with tokenjuice so one set of user rules serves both.
pub const TJ_CONFIG_DIR: &str = "TJ_CONFIG_DIR";
/// Overrides the data directory (spilled originals, metadata, ledger). Default on Linux:
/// `~/.local/share/tj`.
pub const TJ_DATA_DIR: &str = "TJ_DATA_DIR";
/// `1`: renditions are the whole original, ANSI stripped, never reduced.
pub const TJ_RAW: &str = "TJ_RAW";
/// Groups artifacts for dedupe and statistics; set once per shell by the shell hook.
pub const TJ_SESSION: &str = "TJ_SESSION";
/// `1`: `tj run` execs the command directly (transparent mode), and the shell hook's
/// functions run their commands directly.
pub const TJ_DISABLE: &str = "TJ_DISABLE";
/// Set by `tj run` in its child's environment: a nested `tj run` goes transparent.
pub const TJ_INNER: &str = "TJ_INNER";
/// `1`: this shell belongs to an agent.
pub const TJ_AGENT: &str = "TJ_AGENT";
/// Side channel: write the rendition to this file (atomically) instead of stdout.
pub const TJ_EMIT: &str = "TJ_EMIT";
/// Side channel: write the rendition to this open file descriptor.
pub const TJ_EMIT_FD: &str = "TJ_EMIT_FD";
/// Side channel format: `text` (default) or `json`.
pub const TJ_EMIT_FORMAT: &str = "TJ_EMIT_FORMAT";
/// `tj init`'s command list (comma-separated), instead of `--commands`.
pub const TJ_COMMANDS: &str = "TJ_COMMANDS";
/// Set by the shell hook when sourced: `bash:PID` or `zsh:PID` (read by `tj doctor shell`).
pub const TJ_HOOK: &str = "TJ_HOOK";
/// Set by the shell hook: the commands it wrapped in the shell that sourced it, separated by
/// spaces; empty when it defined nothing there (a person's shell, `shellHook: "never"`).
pub const TJ_HOOK_COMMANDS: &str = "TJ_HOOK_COMMANDS";
/// Agent mode: seconds a child may sit silent, reading its terminal, before tj ends it
/// and says it was blocked on input (default 60).
pub const TJ_BLOCKED_AFTER: &str = "TJ_BLOCKED_AFTER";

/// Variables whose presence means an agent harness runs this process, in the order they are
/// reported. `TJ_AGENT` counts only when set to something other than empty or `0`. The shell
/// hook receives this list from `tj init` and, with the default `shellHook: "auto"`, defines
/// its functions only in a shell where one of them is set when it is sourced (issue 10).
///
/// Only markers a harness sets for the commands it runs belong here, never a variable a
/// person exports to configure a tool (`AIDER_MODEL` was one): a person's shell that has it
/// would be taken for an agent's.
pub const AGENT_VARS: &[&str] = &[
    TJ_AGENT,
    "CLAUDECODE",
    "CODEX_SANDBOX",
    "CODEX_THREAD_ID",
    "GEMINI_CLI",
    "CURSOR_AGENT",
    "AI_AGENT",
    "OPENCODE",
    "AMP_AGENT",
];

/// Gate: the largest reduced/original byte ratio adopted (default 0.72).
pub const TJ_KEEP_RATIO_MAX: &str = "TJ_KEEP_RATIO_MAX";
/// Gate: the fewest bytes a reduction must save to be adopted (default 500).
pub const TJ_MIN_SAVING_BYTES: &str = "TJ_MIN_SAVING_BYTES";
/// Below this semantic density an unmatched command's output is reduced (default 0.3).
pub const TJ_DENSITY_THRESHOLD: &str = "TJ_DENSITY_THRESHOLD";
/// The data budget, in estimated tokens (`dataBudget`).
pub const TJ_DATA_BUDGET: &str = "TJ_DATA_BUDGET";

/// Moves Claude Code's user directory (default `~/.claude`).
pub const CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
/// Moves Codex's home directory (default `~/.codex`).
pub const CODEX_HOME: &str = "CODEX_HOME";
/// Moves Copilot CLI's home directory (default `~/.copilot`).
pub const COPILOT_HOME: &str = "COPILOT_HOME";
/// Replaces the home directory Gemini CLI looks in for `.gemini` (default `~`).
pub const GEMINI_CLI_HOME: &str = "GEMINI_CLI_HOME";
/// Set by Claude Code for its hooks: the directory the session started in, where its
/// project settings (`.claude/settings.json`) live.
pub const CLAUDE_PROJECT_DIR: &str = "CLAUDE_PROJECT_DIR";
/// Set by Claude Code in its own process: `cli` for an interactive session, `sdk-cli` for
/// `claude -p`, `sdk-ts`/`sdk-py` under the Agent SDK (hooks inherit it).
pub const CLAUDE_CODE_ENTRYPOINT: &str = "CLAUDE_CODE_ENTRYPOINT";
/// `1`: `tj hook` says on stderr why it gave no answer (hooks are otherwise silent).
pub const TJ_HOOK_DEBUG: &str = "TJ_HOOK_DEBUG";

/// A snapshot of the parts of the process environment tj uses.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `TJ_CONFIG_DIR`, if set and non-empty.
    pub config_dir: Option<PathBuf>,
    /// `TJ_DATA_DIR`, if set and non-empty.
    pub data_dir: Option<PathBuf>,
    /// `TJ_RAW` is set to something other than empty or `0`.
    pub raw: bool,
    /// `TJ_SESSION`, if set.
    pub session: Option<String>,
    /// `TJ_KEEP_RATIO_MAX`, unparsed.
    pub keep_ratio_max: Option<String>,
    /// `TJ_MIN_SAVING_BYTES`, unparsed.
    pub min_saving_bytes: Option<String>,
    /// `TJ_DENSITY_THRESHOLD`, unparsed.
    pub density_threshold: Option<String>,
    /// `TJ_DATA_BUDGET`, unparsed.
    pub data_budget: Option<String>,
    /// The working directory, if it could be read.
    pub cwd: Option<PathBuf>,
    /// `TJ_DISABLE` is set to something other than `0`.
    pub disable: bool,
    /// `TJ_INNER` is set.
    pub inner: bool,
    /// The first agent harness variable present, from [`AGENT_VARS`].
    pub harness: Option<&'static str>,
    /// `TJ_EMIT`.
    pub emit: Option<PathBuf>,
    /// `TJ_EMIT_FD`, unparsed.
    pub emit_fd: Option<String>,
    /// `TJ_EMIT_FORMAT`, unparsed.
    pub emit_format: Option<String>,
    /// `TJ_BLOCKED_AFTER`, unparsed.
    pub blocked_after: Option<String>,
    /// `PAGER` is set.
    pub has_pager: bool,
    /// `GIT_PAGER` is set.
    pub has_git_pager: bool,
    /// `COLUMNS`, unparsed: the width an agent-mode PTY is given, if usable.
    pub columns: Option<OsString>,
    /// `HOME`, if set and non-empty.
    pub home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`, if set and non-empty.
    pub xdg_config_home: Option<PathBuf>,
    /// `CLAUDE_CONFIG_DIR`, if set and non-empty.
    pub claude_config_dir: Option<PathBuf>,
    /// `CODEX_HOME`, if set and non-empty.
    pub codex_home: Option<PathBuf>,
    /// `COPILOT_HOME`, if set and non-empty.
    pub copilot_home: Option<PathBuf>,
    /// `GEMINI_CLI_HOME`, if set and non-empty.
    pub gemini_cli_home: Option<PathBuf>,
    /// `CLAUDE_PROJECT_DIR`, if set and non-empty.
    pub claude_project_dir: Option<PathBuf>,
    /// `CLAUDE_CODE_ENTRYPOINT`, if set and non-empty.
    pub claude_entrypoint: Option<String>,
    /// `TJ_HOOK_DEBUG` is set to something other than `0`.
    pub hook_debug: bool,
}

impl Env {
    /// Reads the process environment once.
    pub fn capture() -> Env {
        Env::from_vars(std::env::vars_os(), std::env::current_dir().ok())
    }

    /// Builds a snapshot from explicit variables (tests use this instead of `set_var`).
    pub fn from_vars(
        vars: impl IntoIterator<Item = (OsString, OsString)>,
        cwd: Option<PathBuf>,
    ) -> Env {
        let mut env = Env { cwd, ..Env::default() };
        let mut harness: Option<usize> = None;
        for (key, value) in vars {
            let Some(key) = key.to_str() else { continue };
            if value.is_empty() {
                continue;
            }
            if let Some(i) = AGENT_VARS.iter().position(|v| *v == key)
                && !(key == TJ_AGENT && value == "0")
            {
                harness = Some(harness.map_or(i, |h| h.min(i)));
            }
            let text = || value.to_string_lossy().into_owned();
            match key {
                TJ_CONFIG_DIR => env.config_dir = Some(PathBuf::from(&value)),
                TJ_DATA_DIR => env.data_dir = Some(PathBuf::from(&value)),
                TJ_RAW => env.raw = value != "0",
                TJ_SESSION => env.session = Some(text()),
                TJ_KEEP_RATIO_MAX => env.keep_ratio_max = Some(text()),
                TJ_MIN_SAVING_BYTES => env.min_saving_bytes = Some(text()),
                TJ_DENSITY_THRESHOLD => env.density_threshold = Some(text()),
                TJ_DATA_BUDGET => env.data_budget = Some(text()),
                TJ_DISABLE => env.disable = value != "0",
                TJ_INNER => env.inner = true,
                TJ_EMIT => env.emit = Some(PathBuf::from(&value)),
                TJ_EMIT_FD => env.emit_fd = Some(text()),
                TJ_EMIT_FORMAT => env.emit_format = Some(text()),
                TJ_BLOCKED_AFTER => env.blocked_after = Some(text()),
                "PAGER" => env.has_pager = true,
                "GIT_PAGER" => env.has_git_pager = true,
                "COLUMNS" => env.columns = Some(value.clone()),
                "HOME" => env.home = Some(PathBuf::from(&value)),
                "XDG_CONFIG_HOME" => env.xdg_config_home = Some(PathBuf::from(&value)),
                CLAUDE_CONFIG_DIR => env.claude_config_dir = Some(PathBuf::from(&value)),
                CODEX_HOME => env.codex_home = Some(PathBuf::from(&value)),
                COPILOT_HOME => env.copilot_home = Some(PathBuf::from(&value)),
                GEMINI_CLI_HOME => env.gemini_cli_home = Some(PathBuf::from(&value)),
                CLAUDE_PROJECT_DIR => env.claude_project_dir = Some(PathBuf::from(&value)),
                CLAUDE_CODE_ENTRYPOINT => env.claude_entrypoint = Some(text()),
                TJ_HOOK_DEBUG => env.hook_debug = value != "0",
                _ => {}
            }
        }
        env.harness = harness.map(|i| AGENT_VARS[i]);
        env
    }

    /// The configuration directory: `TJ_CONFIG_DIR`, else `<platform config dir>/tokenjuice`.
    pub fn config_dir(&self) -> Option<PathBuf> {
        self.config_dir
            .clone()
            .or_else(|| directories::BaseDirs::new().map(|d| d.config_dir().join("tokenjuice")))
    }

    /// The data directory: `TJ_DATA_DIR`, else the platform data dir for `tj`.
    pub fn data_dir(&self) -> Option<PathBuf> {
        self.data_dir.clone().or_else(|| {
            directories::ProjectDirs::from("", "", "tj").map(|d| d.data_dir().to_path_buf())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
    }

    #[test]
    fn explicit_dirs_win() {
        let env = Env::from_vars(vars(&[(TJ_CONFIG_DIR, "/c"), (TJ_DATA_DIR, "/d")]), None);
        assert_eq!(env.config_dir(), Some(PathBuf::from("/c")));
        assert_eq!(env.data_dir(), Some(PathBuf::from("/d")));
    }

    #[test]
    fn harness_is_the_first_listed_variable_present() {
        let env = Env::from_vars(vars(&[("GEMINI_CLI", "1"), ("CLAUDECODE", "1")]), None);
        assert_eq!(env.harness, Some("CLAUDECODE"));
        assert_eq!(Env::from_vars(vars(&[(TJ_AGENT, "0")]), None).harness, None);
        assert_eq!(Env::from_vars(vars(&[(TJ_AGENT, "1")]), None).harness, Some(TJ_AGENT));
    }

    #[test]
    fn a_tool_setting_a_person_exports_is_no_agent_marker() {
        // aider reads AIDER_MODEL as configuration; people export it in their profiles.
        assert_eq!(Env::from_vars(vars(&[("AIDER_MODEL", "gpt")]), None).harness, None);
    }

    #[test]
    fn raw_zero_and_empty_mean_off() {
        assert!(!Env::from_vars(vars(&[(TJ_RAW, "0")]), None).raw);
        assert!(!Env::from_vars(vars(&[(TJ_RAW, "")]), None).raw);
        assert!(Env::from_vars(vars(&[(TJ_RAW, "1")]), None).raw);
    }
}
