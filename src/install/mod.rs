//! `tj install <host>`, `tj uninstall <host>` and the hosts part of `tj doctor`: finding a
//! harness's settings file and adding or removing tj's entry in it (issue 11).
//!
//! - `paths`: which file, per host and scope.
//! - `hooks`: tj's entry per host, which entries are tj's, the file's text after an
//!   install or uninstall; `jsonedit` makes those edits without touching other bytes.
//! - `opencode`: the plugin file OpenCode gets instead of a hook.
//! - `files`: backup, atomic replace, symbolic links.
//! - `doctor`: what is wired where, and does it work.
//!
//! An install followed by an uninstall gives back the original file byte for byte, and a
//! second install changes nothing; a file tj cannot parse is left untouched.

pub(crate) mod codex;
mod diff;
pub(crate) mod doctor;
mod files;
pub(crate) mod hooks;
mod jsonedit;
pub(crate) mod opencode;
pub(crate) mod paths;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow, bail};

use self::hooks::Change;
pub(crate) use self::paths::Scope;
use crate::env::Env;
use crate::host::Host;

/// What `tj install` or `tj uninstall` is asked to do.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    pub(crate) host: Host,
    pub(crate) scope: Scope,
    pub(crate) dry_run: bool,
}

/// The absolute path of the running tj, as hook commands name it.
pub(crate) fn this_tj() -> Result<String> {
    let exe = std::env::current_exe().context("could not find the path of tj itself")?;
    exe.to_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow!("the path of tj, `{}`, is not UTF-8", exe.display()))
}

/// A planned change to one file.
struct Plan {
    /// The path the host reads.
    path: PathBuf,
    /// What tj reads and writes: `path`, or the target of the link at `path`.
    existing: files::Existing,
    change: Change,
}

/// Wires `req.host` to tj; returns the report for stdout.
pub(crate) fn install(req: Request, env: &Env) -> Result<String> {
    let tj = this_tj()?;
    let path = paths::settings_file(req.host, req.scope, env)?;
    let existing = read(&path, req.scope, env)?;
    let change = match (hooks::layout(req.host), existing.text.as_deref()) {
        (None, text) => plugin_install(&existing.real, text, &tj)?,
        (Some(layout), None) => {
            Change::Write(hooks::new_file(&layout, req.host, &hooks::command(&tj, req.host)))
        }
        (Some(layout), Some(text)) => {
            hooks::install(text, &layout, req.host, &hooks::command(&tj, req.host))
                .map_err(|e| refusal(&existing.real, &e))?
        }
    };
    let plan = Plan { path, existing, change };
    if req.dry_run {
        return Ok(dry_run(&plan));
    }
    let backup = apply(&plan)?;
    Ok(install_report(req, &plan, &tj, backup.as_deref()))
}

/// The settings file at `path`, refused in project scope when it, or a directory on the
/// way to it, is a link leading out of the project: a repository could otherwise have a
/// project install edit the user's own settings or drop the OpenCode plugin into another
/// directory.
fn read(path: &Path, scope: Scope, env: &Env) -> Result<files::Existing> {
    let existing = files::read(path)?;
    if scope == Scope::Project
        && let Some(cwd) = &env.cwd
    {
        let project = std::fs::canonicalize(cwd)
            .with_context(|| format!("could not examine `{}`", cwd.display()))?;
        // The nearest part of the path that exists, links resolved.
        let real = existing
            .real
            .ancestors()
            .find_map(|p| std::fs::canonicalize(p).ok())
            .unwrap_or_default();
        if !real.starts_with(&project) {
            bail!(
                "`{}` leads to `{}`, outside the project `{}` (a link); tj changed nothing",
                path.display(),
                real.display(),
                project.display()
            );
        }
    }
    Ok(existing)
}

/// Removes tj's entries for `req.host`; returns the report for stdout.
pub(crate) fn uninstall(req: Request, env: &Env) -> Result<String> {
    let path = paths::settings_file(req.host, req.scope, env)?;
    let existing = read(&path, req.scope, env)?;
    let change = match (hooks::layout(req.host), existing.text.as_deref()) {
        (_, None) => Change::None,
        (None, Some(text)) if opencode::is_tj(text) => Change::Remove,
        (None, Some(_)) => Change::None,
        (Some(layout), Some(text)) => {
            hooks::uninstall(text, &layout, req.host).map_err(|e| refusal(&existing.real, &e))?
        }
    };
    let plan = Plan { path, existing, change };
    if req.dry_run {
        return Ok(dry_run(&plan));
    }
    let backup = apply(&plan)?;
    let mut out = String::new();
    let file = shown(&plan);
    match (&plan.change, &backup) {
        (Change::None, _) => {
            let _ = writeln!(
                out,
                "tj: {} ({}) was not wired to tj: {file} has no tj entry",
                req.host,
                req.scope.name()
            );
        }
        (Change::Remove, _) => {
            let _ = writeln!(
                out,
                "tj: unwired {} ({}): removed {file}, which held only tj's entry",
                req.host,
                req.scope.name()
            );
        }
        (Change::Write(_), _) => {
            let _ = writeln!(
                out,
                "tj: unwired {} ({}): removed tj's entry from {file}",
                req.host,
                req.scope.name()
            );
        }
    }
    if let Some(backup) = backup {
        let _ = writeln!(out, "  backup of the previous file: {}", backup.display());
        let _ = writeln!(out, "  undo: tj install {}{}", req.host, req.scope.flag());
    }
    Ok(out)
}

/// The plugin file's change: written when missing or tj's and different, refused when the
/// file is someone else's.
fn plugin_install(real: &Path, text: Option<&str>, tj: &str) -> Result<Change> {
    let want = opencode::plugin(tj);
    match text {
        None => Ok(Change::Write(want)),
        Some(text) if text == want => Ok(Change::None),
        Some(text) if opencode::is_tj(text) => Ok(Change::Write(want)),
        Some(_) => bail!(
            "`{}` exists and is not tj's plugin (its first line is not tj's); tj changed nothing",
            real.display()
        ),
    }
}

fn refusal(path: &Path, why: &str) -> anyhow::Error {
    anyhow!("could not use `{}`: {why}; tj changed nothing", path.display())
}

/// The file as the report names it: the path, and the target when it is a link.
fn shown(plan: &Plan) -> String {
    if plan.existing.real == plan.path {
        plan.path.display().to_string()
    } else {
        format!("{} (a link to {})", plan.path.display(), plan.existing.real.display())
    }
}

/// Makes the planned change: a backup of an existing file first. Returns the backup.
fn apply(plan: &Plan) -> Result<Option<PathBuf>> {
    let real = &plan.existing.real;
    let backup = match (&plan.change, &plan.existing.text) {
        (Change::None, _) | (_, None) => None,
        (_, Some(text)) => Some(files::backup(real, text, plan.existing.mode.unwrap_or(0o600))?),
    };
    match &plan.change {
        Change::None => {}
        Change::Write(text) => files::replace(real, text, plan.existing.mode)?,
        Change::Remove => files::remove(real)?,
    }
    Ok(backup)
}

/// `--dry-run`: the diff, or a line saying nothing would change.
fn dry_run(plan: &Plan) -> String {
    let old = plan.existing.text.as_deref();
    let new = match &plan.change {
        Change::None => return format!("tj: {} would not change\n", shown(plan)),
        Change::Write(text) => Some(text.as_str()),
        Change::Remove => None,
    };
    diff::unified(&plan.existing.real.display().to_string(), old, new)
}

/// What `tj install` did, what it means, and how to undo it.
fn install_report(req: Request, plan: &Plan, tj: &str, backup: Option<&Path>) -> String {
    let mut out = String::new();
    let (host, scope) = (req.host, req.scope.name());
    let file = shown(plan);
    let what = match hooks::layout(host) {
        Some(layout) => format!("{} hook running `{}`", layout.event, hooks::command(tj, host)),
        None => {
            format!("a plugin running `{} rewrite` for each shell command", hooks::shell_quote(tj))
        }
    };
    match &plan.change {
        Change::None => {
            let _ = writeln!(out, "tj: {host} ({scope}) is already wired to this tj in {file}");
        }
        _ => {
            let _ = writeln!(out, "tj: wired {host} ({scope}) in {file}");
            let _ = writeln!(out, "  {what}");
        }
    }
    if let Some(backup) = backup {
        let _ = writeln!(out, "  backup of the previous file: {}", backup.display());
    }
    let _ = writeln!(out, "  undo: tj uninstall {host}{}", req.scope.flag());
    out.push_str(&host_notes(host, req.scope, plan));
    out
}

/// What the user still has to do, or should know, for this host.
fn host_notes(host: Host, scope: Scope, plan: &Plan) -> String {
    match host {
        Host::Codex => codex::trust_note(&plan.path, &plan.existing.real),
        Host::ClaudeCode if scope == Scope::Project => {
            "  (settings.local.json: Claude Code keeps it out of git; the path of tj is this machine's)\n"
                .to_owned()
        }
        Host::Gemini => "  Gemini CLI skips every hook where `tools.enableHooks` or `hooksConfig.enabled` is false; `tj doctor gemini` checks\n".to_owned(),
        Host::OpenCode => "  OpenCode loads plugins when it starts: restart running sessions\n".to_owned(),
        _ => String::new(),
    }
}
