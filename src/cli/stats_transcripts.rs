//! `tj stats --transcripts`: billed tokens per harness session, from the harness's own logs.

use anyhow::{Result, bail};

use crate::env::Env;
use crate::exit::Status;

pub(crate) fn run(_args: &super::stats::Args, _env: &Env) -> Result<Status> {
    bail!("tj stats --transcripts: not built yet")
}
