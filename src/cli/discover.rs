//! `tj discover`: the commands that cost the most context without going through tj.

use anyhow::{Result, bail};

use crate::env::Env;
use crate::exit::Status;

/// The commands that cost the agent the most context without tj, and what would catch them
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args, _env: &Env) -> Result<Status> {
    bail!("tj discover: not built yet")
}
