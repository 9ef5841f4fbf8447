//! `tj doctor [host]`: which agent harnesses are wired to tj and whether their hooks work
//! (`crate::install::doctor`).
//!
//! `tj doctor shell`: whether the shell hook is loaded in the calling shell, what it wraps
//! and why (or why nothing), whether that shell counts as an agent's, and what `tj run` would
//! do there.
//!
//! A child process sees only the shell's exported variables, so this reads what the hook
//! exports (`crate::shell::HOOK_MARKER`, `HOOK_COMMANDS`), the configuration's `shellHook`,
//! and the same [`Env`] snapshot and mode decision `tj run` uses; it cannot see the shell's
//! functions themselves, nor the stdout the hook recorded (an unexported shell variable).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::emit;
use crate::env::{AGENT_VARS, Env};
use crate::exit::Status;
use crate::host::Host;
use crate::shell::{self, ShellHook};

/// Check how tj is set up: which agent harnesses are wired, and whether their hooks work
///
/// For each harness (or the one named), in the user's and this project's settings: whether
/// tj is wired, the tj each entry runs and whether it exists, what the hook answers for a
/// sample `cargo test` call and how long it takes, and for each problem the command that
/// fixes it. Exits 1 when it finds a problem. `tj doctor shell` checks the shell hook.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Option<Command>,

    /// The harness to check (all when omitted)
    #[arg(value_enum)]
    host: Option<Host>,
}

/// What `tj doctor` can check besides the harnesses.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Is the shell hook loaded here, which commands it wraps, and is this an agent's shell
    ///
    /// Exits 1 when the hook is not loaded. Run it in the shell you want to check, with
    /// stdout not redirected: whether `tj run` renders for an agent depends on where stdout
    /// goes.
    Shell(ShellArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct ShellArgs {
    // What the hook exports, read through clap like the other env-backed options.
    #[arg(long, env = shell::HOOK_MARKER, hide = true)]
    hook: Option<String>,

    #[arg(long, env = shell::HOOK_COMMANDS, hide = true)]
    hook_commands: Option<String>,
}

pub(crate) fn run(args: Args, env: &Env) -> Result<Status> {
    match args.command {
        Some(Command::Shell(shell)) => shell_report(&shell, env),
        None => hosts_report(args.host, env),
    }
}

fn hosts_report(host: Option<Host>, env: &Env) -> Result<Status> {
    let hosts = host.map_or(Host::ALL.to_vec(), |h| vec![h]);
    let report = crate::install::doctor::check(&hosts, host.is_some(), env);
    let mut text = report.text;
    match report.problems {
        0 => text.push_str("no problem found\n"),
        1 => text.push_str("1 problem found\n"),
        n => text.push_str(&format!("{n} problems found\n")),
    }
    emit::stdout(&text)?;
    Ok(if report.problems == 0 { Status::Ok } else { Status::Failure })
}

fn shell_report(args: &ShellArgs, env: &Env) -> Result<Status> {
    let marker = args.hook.as_deref().and_then(parse_marker);
    let loaded = marker.is_some();
    let wrapped = args.hook_commands.as_deref().unwrap_or("").trim();
    let mut out = String::new();
    let _ = writeln!(out, "hook     {}", hook_line(marker));
    if let Some((_, pid)) = marker {
        let _ = writeln!(out, "wrapped  {}", wrapped_line(env, wrapped, is_this_shell(pid)));
    }
    let _ = writeln!(out, "agent    {}", agent_line(env));
    if loaded && !wrapped.is_empty() {
        let _ = writeln!(out, "active   {}", active_line(env));
    }
    let _ = writeln!(out, "stdout   {}", stdout_report());
    #[cfg(unix)]
    {
        let _ = writeln!(out, "tj run   {}", mode_report(env));
    }
    let _ = writeln!(out, "path     {}", path_line());
    emit::stdout(&out)?;
    Ok(if loaded { Status::Ok } else { Status::Failure })
}

/// Whether the hook is loaded, and by which shell; how to load it if not.
fn hook_line(marker: Option<(&str, u32)>) -> String {
    match marker {
        Some((name, pid)) if is_this_shell(pid) => {
            format!("loaded ({name}, this shell, pid {pid})")
        }
        Some((name, pid)) => format!(
            "loaded by a shell above this one ({name}, pid {pid}); functions are not \
             inherited, so this shell has them only if it sourced the hook too (or a harness \
             copied them in)"
        ),
        None => {
            let rc = match login_shell().as_deref() {
                Some("zsh") => "eval \"$(tj init zsh)\"` to ~/.zshrc or ~/.zshenv",
                _ => "eval \"$(tj init bash)\"` to ~/.bashrc (and BASH_ENV's file)",
            };
            format!("not loaded in this shell: add `{rc}")
        }
    }
}

/// What the loaded hook wrapped (`here`: in this shell, not one above it), or why nothing.
fn wrapped_line(env: &Env, wrapped: &str, here: bool) -> String {
    let config = super::load_config(env);
    let config_path = config
        .path
        .as_ref()
        .map_or_else(|| "the config file".to_owned(), |p| format!("`{}`", p.display()));
    let whose = if here { "" } else { "in that shell: " };
    if !wrapped.is_empty() {
        let always = if env.harness.is_none() && config.shell_hook == ShellHook::Always {
            format!(" (not an agent's shell, but shellHook is \"always\" in {config_path})")
        } else {
            String::new()
        };
        return format!("{whose}{wrapped}{always}");
    }
    let why = match config.shell_hook {
        ShellHook::Never => format!("shellHook is \"never\" in {config_path}"),
        ShellHook::Auto if env.harness.is_none() => format!(
            "this is not an agent's shell, and the hook wraps only in those \
             (\"shellHook\": \"always\" in {config_path} wraps in every shell)"
        ),
        // An agent's shell now, or `always`, and still nothing: the list was empty, or the
        // shell was not an agent's when it sourced the hook.
        _ => "the command list was empty, or the shell was not an agent's when it sourced \
              the hook"
            .to_owned(),
    };
    format!("{whose}nothing: {why}")
}

/// Whether this shell counts as an agent's, and by which variable.
fn agent_line(env: &Env) -> String {
    match env.harness {
        Some(var) => format!("yes: {var} is set"),
        None => format!("no: none of {} is set (TJ_AGENT=0 does not count)", AGENT_VARS.join(", ")),
    }
}

/// Whether the wrapped commands go through `tj run` now, or why not.
fn active_line(env: &Env) -> String {
    let off = if env.disable {
        Some("TJ_DISABLE is set")
    } else if env.raw {
        Some("TJ_RAW is set")
    } else if env.inner {
        Some("TJ_INNER is set: this shell runs inside `tj run`")
    } else {
        None
    };
    match off {
        Some(why) => format!("no: {why}; wrapped commands run directly"),
        None => "yes: wrapped commands run through `tj run`, or directly when their output \
                 goes elsewhere than this stdout (`| grep`, `> file`)"
            .to_owned(),
    }
}

/// Which `tj` the PATH finds, and whether it is this one.
fn path_line() -> String {
    let me = std::env::current_exe().ok();
    match on_path("tj") {
        Some(found) => {
            let note = match &me {
                Some(me) if !same_file(me, &found) => format!(" (this one is {})", me.display()),
                _ => String::new(),
            };
            format!("tj is {}{note}", found.display())
        }
        None => "tj is not on PATH; the hook runs the tj that printed it, or nothing".to_owned(),
    }
}

/// `bash:1234` → ("bash", 1234).
fn parse_marker(text: &str) -> Option<(&str, u32)> {
    let (name, pid) = text.split_once(':')?;
    Some((name, pid.parse().ok()?))
}

/// Returns true if and only if `pid` is the shell that ran us: our parent, or ourselves when
/// the shell exec'd its last command.
///
/// One case looks the same and is misreported: a nested shell that did not source the hook
/// and exec'd us (`zsh -c 'tj doctor shell'`) leaves the hooked shell as our parent.
fn is_this_shell(pid: u32) -> bool {
    #[cfg(unix)]
    {
        pid == std::os::unix::process::parent_id() || pid == std::process::id()
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// The name of the user's login shell, from `SHELL`.
fn login_shell() -> Option<String> {
    let shell = PathBuf::from(std::env::var_os("SHELL")?);
    Some(shell.file_name()?.to_string_lossy().into_owned())
}

/// What this stdout is; `tj run` and the hook's wrappers compare its identity.
fn stdout_report() -> String {
    #[cfg(unix)]
    {
        use std::io::IsTerminal;
        use std::os::unix::fs::FileTypeExt;
        let Ok(meta) = std::fs::metadata("/dev/stdout") else {
            return "unreadable (closed?)".to_owned();
        };
        let kind = meta.file_type();
        let what = if std::io::stdout().is_terminal() {
            "a terminal"
        } else if kind.is_fifo() {
            "a pipe"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_file() {
            "a file"
        } else if kind.is_char_device() {
            "a device (not a terminal)"
        } else {
            "something else"
        };
        let (dev, ino) = stdout_identity().unwrap_or_default();
        format!("{what} ({dev}:{ino})")
    }
    #[cfg(not(unix))]
    {
        "unknown".to_owned()
    }
}

/// stdout's (device, inode), the identity `tj run` compares with `--agent-stdout`, taken
/// as `tj run` takes it.
fn stdout_identity() -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        super::run::stdout_identity()
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The mode `tj run` without flags would pick with this stdout, and why. A wrapper passing
/// this same stdout as `--agent-stdout` gets the same answer.
#[cfg(unix)]
fn mode_report(env: &Env) -> String {
    use std::io::IsTerminal;

    use crate::run::mode::{self, Facts, Mode};
    let facts = Facts {
        agent_flag: false,
        live_flag: false,
        agent_stdout: None,
        stdout_is_tty: std::io::stdout().is_terminal(),
        stdout_id: stdout_identity(),
        // Doctor's own: what it was started with says nothing of a `tj run` in this shell.
        stdio_closed: false,
    };
    let (mode, reason) = mode::decide(&facts, env);
    let mode = match mode {
        Mode::Terminal => "terminal mode (live for a person)",
        Mode::Agent => "agent mode (the rendition on stdout)",
        Mode::Transparent => "transparent (runs the command directly)",
    };
    format!("{mode}: {}", reason.describe())
}

/// The first executable `name` in PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else { return false };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
