//! `tj rewrite [--host H] -- LINE`: what an adapter would run instead of LINE.

use anyhow::{Context as _, Result};

use crate::env::Env;
use crate::exit::Status;
use crate::host::Host;
use crate::rewrite::{self, Context};

/// Print LINE as an agent's hook would rewrite it, or nothing (exit 1) if it would not
///
/// A line is rewritten when it is one build, test, lint or install command the rules reduce
/// with benefit (optionally after `cd DIR &&` and assignments), with no pipe, list,
/// substitution or redirect beyond `2>&1`, `>/dev/null` and `2>/dev/null`. The rewrite puts
/// `<path of tj> run --agent -- ` before the command word and changes no other byte.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The harness the line comes from (passed on to `tj run --host`)
    #[arg(long, value_enum)]
    host: Option<Host>,

    /// Say on stderr why a line is not rewritten
    #[arg(long, short)]
    verbose: bool,

    /// The shell line, as one argument
    #[arg(required = true, value_name = "LINE")]
    line: String,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let config = super::load_config(env);
    let tj = std::env::current_exe().context("could not find the path of tj itself")?;
    let ctx = Context { env, tj: &tj, host: args.host, exclude: &config.rewrite_exclude };
    match rewrite::rewrite(&args.line, &ctx) {
        Ok(rewritten) => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", rewritten.line)?;
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
