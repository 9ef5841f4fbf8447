//! The exit status of `tj`, as a type.
//!
//! `tj run` exits with its child's status and `env(1)`'s codes for its own failures
//! (DESIGN.md "Exit status"); the other subcommands use `Ok`/`Failure`.

use std::process::ExitCode;

/// How `tj` ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Success (exit 0).
    Ok,
    /// A check found problems, or an id was unknown (exit 1).
    Failure,
    /// The child exited with this code; passed through untouched.
    Child(u8),
    /// The child died of this signal: exit 128 + N.
    Signal(i32),
    /// `tj` itself failed before the child ran (125, as `env(1)`).
    TjFailed,
    /// The command was found but could not be executed (126).
    NotExecutable,
    /// The command was not found (127).
    NotFound,
}

impl Status {
    /// The numeric exit code.
    pub fn code(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::Failure => 1,
            Status::Child(code) => code,
            // Signals are 1..=64 on every platform tj runs on; clamp the rest to keep the
            // code in range rather than wrap into a misleading small number.
            Status::Signal(sig) => u8::try_from(128 + sig.clamp(1, 127)).unwrap_or(255),
            Status::TjFailed => 125,
            Status::NotExecutable => 126,
            Status::NotFound => 127,
        }
    }
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(status.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_exit_is_128_plus_n() {
        assert_eq!(Status::Signal(15).code(), 143);
        assert_eq!(Status::Signal(2).code(), 130);
        assert_eq!(Status::Signal(9).code(), 137);
    }

    #[test]
    fn own_failures_follow_env_1() {
        assert_eq!(Status::TjFailed.code(), 125);
        assert_eq!(Status::NotExecutable.code(), 126);
        assert_eq!(Status::NotFound.code(), 127);
    }

    #[test]
    fn child_codes_pass_through() {
        for code in [0u8, 1, 2, 101, 126, 127, 255] {
            assert_eq!(Status::Child(code).code(), code);
        }
    }
}
