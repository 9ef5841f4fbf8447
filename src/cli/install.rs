//! `tj install <host>` and `tj uninstall <host>`.

use anyhow::Result;

use crate::emit;
use crate::env::Env;
use crate::exit::Status;
use crate::host::Host;
use crate::install::{Request, Scope};

/// Route an agent harness's build and test commands through tj
///
/// Adds a pre-tool-use hook running `<path of tj> hook HOST` to the harness's settings (for
/// OpenCode, a plugin file asking `tj rewrite`): Claude Code `~/.claude/settings.json`
/// (`--project`: `.claude/settings.local.json`), Codex `~/.codex/hooks.json`, Gemini CLI
/// `~/.gemini/settings.json`, Cursor `~/.cursor/hooks.json`, Copilot CLI
/// `~/.copilot/hooks/tj.json`, OpenCode `~/.config/opencode/plugins/tj.js`. Every other
/// byte of the file is kept; the previous file is saved as `<file>.tj-backup.N` first. A
/// second install changes nothing; `tj uninstall HOST` gives the original file back.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    target: Target,
}

/// Remove tj's entries from an agent harness's settings
///
/// Removes every hook entry whose command is `<a tj> hook HOST`, and the matcher group,
/// event list and `hooks` object left empty by that; a file left with nothing else (one
/// `tj install` created) is removed. The previous file is saved as `<file>.tj-backup.N`.
#[derive(Debug, clap::Args)]
pub(crate) struct UninstallArgs {
    #[command(flatten)]
    target: Target,
}

/// Which harness's settings, which scope, and whether to change them.
#[derive(Debug, clap::Args)]
struct Target {
    /// The harness
    #[arg(value_enum)]
    host: Host,

    /// The project's settings (in the current directory) instead of the user's
    #[arg(long)]
    project: bool,

    /// Print what would change, change nothing
    #[arg(long)]
    dry_run: bool,
}

impl Target {
    fn request(&self) -> Request {
        let scope = if self.project { Scope::Project } else { Scope::User };
        Request { host: self.host, scope, dry_run: self.dry_run }
    }
}

pub(crate) fn install(args: &Args, env: &Env) -> Result<Status> {
    emit::stdout(&crate::install::install(args.target.request(), env)?)?;
    Ok(Status::Ok)
}

pub(crate) fn uninstall(args: &UninstallArgs, env: &Env) -> Result<Status> {
    emit::stdout(&crate::install::uninstall(args.target.request(), env)?)?;
    Ok(Status::Ok)
}
