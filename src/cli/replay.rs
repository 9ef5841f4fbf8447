//! `tj rules replay`: a rule set run over the stored originals, before it ships.

use anyhow::{Result, bail};

use crate::env::Env;
use crate::exit::Status;

/// Run the current (or a proposed) rule set over the stored originals: which renditions
/// change, which would lose evidence lines, and the token delta, per rule
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args, _env: &Env) -> Result<Status> {
    bail!("tj rules replay: not built yet")
}
