//! The `tj` binary: parse, dispatch, map the outcome to an exit code. Everything else lives
//! in the library so that tests and benches can reach it.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = tj::cli::Cli::parse();
    match tj::cli::run(cli) {
        Ok(status) => status.into(),
        Err(err) => {
            tj::diag::error(&err);
            tj::exit::Status::TjFailed.into()
        }
    }
}
