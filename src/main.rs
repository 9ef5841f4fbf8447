//! The `tj` binary: parse, dispatch, end with the outcome (an exit code, or the child's
//! death by signal). Everything else lives in the library so that tests and benches can
//! reach it.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = tj::cli::Cli::from_env();
    match tj::cli::run(cli) {
        Ok(status) => status.end(),
        Err(err) => {
            tj::diag::error(&err);
            tj::exit::Status::TjFailed.into()
        }
    }
}
