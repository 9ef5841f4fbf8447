//! `tj rewrite [--host H] [-v] [--] LINE`: what an adapter would run instead of LINE.

use anyhow::{Context as _, Result};

use crate::env::Env;
use crate::exit::Status;
use crate::host::Host;
use crate::rewrite::{self, Context};

/// Print LINE as an agent's hook would rewrite it, or nothing (exit 1) if it would not
///
/// The rewrite puts `<path of tj> run --agent [--host H] -- ` right before the command word
/// and changes no other byte, so the command runs through tj with the same arguments,
/// exit status and side effects. Exit 0: the rewritten line is printed. Exit 1: nothing is
/// printed (`-v` says why on stderr) and the line should run as it is.
///
/// A line is rewritten when it is `cd DIR && …` preludes (optional) and one simple command:
/// assignments, `env NAME=VALUE`/`timeout DUR`/`nice`/`time` wrappers, then a build, test,
/// lint or install command (or a devops rule marked "wrap": true) as the builtin and user
/// rules see it, with no redirection but `2>&1`, `2>/dev/null` and `>/dev/null 2>&1`.
///
/// Never rewritten: pipes, `;`, `||`, `&`, substitutions, heredocs, subshells and control
/// flow; `sudo`, `eval`, `xargs`, shells; lines setting TJ_RAW or TJ_DISABLE; commands
/// whose output is data (`cat`, `git diff`, `--json`); servers, watchers and prompts (`npm
/// run dev`, `--watch`, `terraform apply` without `-auto-approve`); and the commands in
/// config.json's rewrite.exclude, `"rewrite": {"exclude": ["npm run dev", "make"]}` (word
/// prefixes: `cargo test` excludes `cargo test --release` too).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The harness the line comes from (passed on to `tj run --host`)
    #[arg(long, value_enum)]
    host: Option<Host>,

    /// Say on stderr why a line is not rewritten
    #[arg(long, short)]
    verbose: bool,

    /// The shell line, as one argument (after `--` if it starts with `-`)
    #[arg(required = true, value_name = "LINE")]
    line: String,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let config = super::load_config(env);
    let tj = rewrite::this_tj().context("could not find the path of tj itself")?;
    let ctx = Context { env, tj: &tj, host: args.host, exclude: &config.rewrite_exclude };
    match rewrite::rewrite(&args.line, &ctx) {
        Ok(rewritten) => {
            crate::emit::stdout_bytes(format!("{}\n", rewritten.line).as_bytes())?;
            Ok(Status::Ok)
        }
        Err(why) => {
            if args.verbose {
                crate::diag::note(&format!("not rewritten: {why}"));
            }
            Ok(Status::Failure)
        }
    }
}
