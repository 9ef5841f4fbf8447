//! `tj hook <host>`: the command a harness's pre-tool-use hook runs.

use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

use anyhow::Result;

use crate::env::Env;
use crate::exit::Status;
use crate::hook::{self, Answer, Context};
use crate::host::Host;

/// Answer a harness's pre-tool-use hook (reads its JSON on stdin; always exits 0)
///
/// `tj install HOST` puts this command in the harness's settings. It reads the tool call the
/// harness is about to make and, when it is a shell command tj would reduce, answers with the
/// same call running through `tj run --agent`. Anything else gets no answer, so the harness
/// goes on as without tj. Set TJ_HOOK_DEBUG=1 to see on stderr why a call was not rewritten.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The harness whose payload arrives on stdin
    #[arg(value_enum)]
    host: Host,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        crate::diag::note(&format!(
            "`tj hook {}` reads a tool call as JSON on stdin from the harness; `tj install {}` wires it",
            args.host, args.host
        ));
        return Ok(Status::Ok);
    }
    // A hook's stderr may be shown to the user or the model: a panic stays silent (its
    // message is kept for TJ_HOOK_DEBUG), and the answer falls back to the no-op.
    if !env.hook_debug {
        panic::set_hook(Box::new(|_| {}));
    }
    let answer = panic::catch_unwind(AssertUnwindSafe(|| {
        // A duplicate of descriptor 0, read directly: std's buffered stdin could hold bytes
        // that the wait for more input would not see.
        let payload = stdin
            .as_fd()
            .try_clone_to_owned()
            .map_err(|err| hook::Skip(format!("stdin cannot be read: {err}")))
            .and_then(|fd| hook::read_payload(std::fs::File::from(fd), hook::PAYLOAD_WAIT));
        answer(args.host, payload.as_deref().map_err(Clone::clone), env)
    }))
    .unwrap_or_else(|_| Answer {
        stdout: hook::no_op(args.host).to_owned(),
        skipped: Some("tj failed (a bug); no rewrite".to_owned()),
    });
    if env.hook_debug
        && let Some(why) = &answer.skipped
    {
        crate::diag::note(&format!("hook {}: no rewrite: {why}", args.host));
    }
    // A harness that stopped reading gets nothing more; the exit status stays 0.
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(answer.stdout.as_bytes()).and_then(|()| out.flush());
    Ok(Status::Ok)
}

fn answer(host: Host, payload: Result<&[u8], hook::Skip>, env: &Env) -> Answer {
    // The configuration's problems are not reported here: a hook must stay silent.
    let config = crate::config::Config::load(env);
    let Some(tj) = crate::rewrite::this_tj().ok() else {
        return Answer {
            stdout: hook::no_op(host).to_owned(),
            skipped: Some("could not find the path of tj itself".to_owned()),
        };
    };
    let ctx =
        Context { env, tj: &tj, exclude: &config.rewrite_exclude, system_root: Path::new("/") };
    hook::answer(host, payload, &ctx)
}
