//! The `tj` binary: parse, dispatch, end with the outcome (an exit code, or the child's
//! death by signal). Everything else lives in the library so that tests and benches can
//! reach it.

use std::process::ExitCode;

/// The musl build's allocator (the build `install.sh` makes on Linux). musl's own allocator
/// hands memory back to the system eagerly, so a short run maps and unmaps pages over and
/// over, each a system call and page faults: with its copying, a quarter of `tj --version`'s
/// time on the reference machine of issue 13. dlmalloc (Doug Lea's, which glibc's descends
/// from) grows in 64 KiB segments and gives memory back only past 2 MiB unused.
#[cfg(all(target_os = "linux", target_env = "musl"))]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

/// Runs before Rust's runtime, which ignores SIGPIPE for tj and opens /dev/null in place of a
/// closed stdin, stdout or stderr: notes whether tj was started with SIGPIPE ignored and which
/// of those were closed, so that the command gets them as tj did (`tj::run`).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
#[used]
#[unsafe(link_section = ".init_array")]
static NOTE_AT_START: extern "C" fn() = note_at_start;

#[cfg(target_os = "linux")]
extern "C" fn note_at_start() {
    tj::run::note_at_start();
}

fn main() -> ExitCode {
    let cli = match tj::cli::Cli::from_env() {
        Ok(cli) => cli,
        Err(status) => return status.into(),
    };
    match tj::cli::run(cli) {
        Ok(status) => status.end(),
        Err(err) => {
            tj::diag::error(&err);
            tj::exit::Status::TjFailed.into()
        }
    }
}
