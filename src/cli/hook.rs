//! `tj hook <host>`: the command a harness's pre-tool-use hook runs.

use anyhow::Result;

use crate::env::Env;
use crate::exit::Status;
use crate::host::Host;

/// Answer a harness's pre-tool-use hook (reads its JSON on stdin; always exits 0)
///
/// `tj install HOST` puts this command in the harness's settings. It reads the tool call the
/// harness is about to make and, when it is a shell command tj would reduce, answers with the
/// same call running through `tj run --agent`. Anything else gets no answer, so the harness
/// goes on as without tj.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The harness whose payload arrives on stdin
    #[arg(value_enum)]
    host: Host,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    // SKELETON: the hook work fills this in.
    let _ = (args.host, env);
    Ok(Status::Ok)
}
