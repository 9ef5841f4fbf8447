//! `tj init bash|zsh`: print the shell hook, a generated prelude followed by the embedded
//! script (`crate::shell`). What the hook does lives in `shell/`; this file only resolves the
//! command list and the binary's path.

use anyhow::Result;

use crate::emit;
use crate::env::Env;
use crate::exit::Status;
use crate::shell;

/// Print the shell hook that runs an agent's build and test commands through tj
///
/// Add `eval "$(tj init bash)"` to ~/.bashrc (and to the file named by BASH_ENV, for
/// non-interactive `bash -c`), or `eval "$(tj init zsh)"` to ~/.zshrc or ~/.zshenv. In a shell
/// that belongs to an agent when it sources the hook (TJ_AGENT=1, or a harness variable such
/// as CLAUDECODE is set), the hook defines a function per command that runs
/// `tj run -- COMMAND ARGS…`, or the command itself when its output goes elsewhere than the
/// agent's stdout or TJ_DISABLE, TJ_RAW or TJ_INNER is set. In your own shells it defines
/// nothing, unless the config file says `"shellHook": "always"` (`"never"`: not even in an
/// agent's). `command cargo …` bypasses the hook for one call.
///
/// Functions see only the command's name: `python -m pytest`, `./gradlew` and full paths
/// are not wrapped; run them as `tj run -- python -m pytest`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The shell to print the hook for
    #[arg(value_enum)]
    shell: Shell,

    /// The commands to wrap, separated by commas (default: cargo, npm, pnpm, yarn, bun, npx,
    /// pytest, go, make, cmake, ninja, mvn, gradle, gradlew, dotnet, tsc, jest, vitest,
    /// eslint, ruff, mypy, pip, uv, poetry, docker, kubectl, terraform)
    #[arg(
        long,
        value_name = "NAME,…",
        value_delimiter = ',',
        value_parser = parse_command,
        env = crate::env::TJ_COMMANDS,
        hide_env_values = true
    )]
    commands: Option<Vec<String>>,
}

/// The shells tj has a hook for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Shell {
    Bash,
    Zsh,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let mut commands: Vec<String> = Vec::new();
    let config = super::load_config(env);
    // --commands / TJ_COMMANDS, else the config file's shellCommands, else the built-in list.
    let chosen = match &args.commands {
        Some(list) => list.clone(),
        None => match config.shell_commands {
            Some(list) => list
                .into_iter()
                .filter(|name| {
                    let ok = shell::is_command_name(name);
                    if !ok {
                        crate::diag::warn_once(&format!(
                            "config shellCommands: `{name}` is not a command name; skipped"
                        ));
                    }
                    ok
                })
                .collect(),
            None => shell::DEFAULT_COMMANDS.iter().map(|c| (*c).to_owned()).collect(),
        },
    };
    for name in chosen {
        if !name.is_empty() && !commands.contains(&name) {
            commands.push(name);
        }
    }
    let bin = own_path();
    let script = match args.shell {
        Shell::Bash => shell::BASH,
        Shell::Zsh => shell::ZSH,
    };
    let mut text = shell::prelude(bin.as_deref(), &commands, config.shell_hook);
    text.push_str(script);
    emit::stdout(&text)?;
    Ok(Status::Ok)
}

/// One entry of `--commands`: trimmed; empty is allowed (`--commands ''` wraps nothing).
fn parse_command(value: &str) -> Result<String, String> {
    let name = value.trim();
    if name.is_empty() || shell::is_command_name(name) {
        return Ok(name.to_owned());
    }
    if name.contains(char::is_whitespace) {
        return Err(format!("`{name}`: separate command names with commas"));
    }
    Err(format!(
        "`{name}` cannot be wrapped by a shell function (letters, digits, `_`, `.` and `-` \
         only, not a shell keyword, `command`, `builtin` or `tj`)"
    ))
}

/// This binary's absolute path, so the hook runs the tj that printed it even when PATH
/// changes. `None` (the hook then uses `tj` on PATH) when it cannot be told or is not UTF-8.
fn own_path() -> Option<String> {
    let path = std::env::current_exe().ok()?;
    let text = path.to_str()?;
    // Linux names a replaced binary "… (deleted)": that path would run nothing.
    if !path.is_absolute() || text.ends_with(" (deleted)") {
        return None;
    }
    Some(text.to_owned())
}
