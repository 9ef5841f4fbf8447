//! The exit status of `tj`, as a type, and how tj ends with it.
//!
//! `tj run` exits with its child's status and `env(1)`'s codes for its own failures
//! (DESIGN.md "Exit status"); the other subcommands use `Ok`/`Failure`. A child that died of
//! a signal makes tj die of the same signal ([`Status::end`]), so that whoever waits for tj
//! sees what it would have seen without tj.

use std::io::Write;
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
    /// The child died of this signal: tj dies of it too ([`Status::end`]), or, if it cannot,
    /// exits with 128 + N.
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

impl Status {
    /// Ends tj as this status says: returns the exit code for `main` to return, except for
    /// [`Status::Signal`], where tj first dies of that signal, as its child did.
    ///
    /// A parent that waits for tj then sees a death by signal, not an exit code: a shell
    /// prints `Killed` or `Segmentation fault` and `$?` is still 128 + N; bash stops a script
    /// whose command was interrupted by Ctrl-C; `WIFSIGNALED` holds, as it would without tj.
    /// tj dumps no core of its own (the child's crash is not tj's). If tj survives the signal
    /// (one whose default action is not to terminate), the exit code is 128 + N.
    pub fn end(self) -> ExitCode {
        if let Status::Signal(sig) = self {
            // Whatever tj printed goes out before it dies: std's stdout is buffered.
            let _ = std::io::stdout().flush();
            die_of(sig);
        }
        self.into()
    }
}

/// Signals whose default action does not terminate the process: raising one would stop tj or
/// do nothing. None of them is a child's cause of death anyway.
const NOT_FATAL: [i32; 8] = [
    libc::SIGSTOP,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
    libc::SIGCONT,
    libc::SIGCHLD,
    libc::SIGURG,
    libc::SIGWINCH,
];

/// Whether `sig`'s default action ends the process (and so whether a process can be made to
/// die of it).
pub(crate) fn is_fatal(sig: i32) -> bool {
    !NOT_FATAL.contains(&sig)
}

/// Makes tj die of `sig`: no core dump, the default action, unblocked, raised. Returns only if
/// tj survived it.
///
/// System calls only, none that allocates or locks: the session leader `run::exec` forks
/// calls it too, in a child of a process with threads, where nothing else is safe (the one
/// it starts in tj's memory has its own, `run::exec::die_like`: there the threads libc
/// knows of, which `raise` and musl's `setrlimit` may signal, are tj's).
///
/// Real-time signals (32 to 64) too, which a command dies of when sent one it does not
/// handle: the disposition and the mask are set by the kernel's own calls, which libc
/// refuses for the few it reserves for its threads (32 to 34), and the signal is sent to
/// this thread, which has unblocked it.
#[allow(unsafe_code)]
pub(crate) fn die_of(sig: i32) {
    if !is_fatal(sig) || !(1..=64).contains(&sig) {
        return;
    }
    let no_core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: setrlimit reads one `rlimit` through the pointer, which points at one.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
    }
    // A core handler in a pipe (systemd-coredump, apport) runs whatever the limit: a process
    // that is not dumpable gets none at all.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: PR_SET_DUMPABLE takes an integer and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    default_unblocked(sig);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: gettid and tgkill take integers, and tgkill sends a signal to this thread of
    // this process; no memory is passed. Not libc's `gettid`: Rust's standard library refers
    // to that symbol weakly, and in tj's static musl build with LTO the reference then pulls
    // no `gettid` from musl's archive: the call went to address 0 (tj died of SIGSEGV
    // instead of its command's signal).
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid);
        libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, sig);
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    // SAFETY: raise sends a signal to this thread; no memory is passed.
    unsafe {
        libc::raise(sig);
    }
}

/// Puts `sig` (1 to 64) at its default action and unblocks it on this thread (on Linux
/// through the kernel's calls, not libc's, which refuse the signals libc reserves). No code of
/// tj's runs in signal context afterwards: SIG_DFL installs no handler, and tj is about to
/// end, so nothing relies on the handler it replaces (signal-hook's, for the signals tj
/// forwarded while the child ran, or std's SIG_IGN for SIGPIPE).
#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(unsafe_code)]
pub(crate) fn default_unblocked(sig: i32) {
    // The kernel's `struct sigaction` (handler, flags, restorer where the architecture has
    // one, mask), all zero: SIG_DFL, no flags, an empty mask, in every layout.
    let action = [0u64; 4];
    let set: u64 = 1 << (sig - 1);
    // SAFETY: rt_sigaction reads one action (at most 32 bytes, a SIG_DFL handler needs no
    // restorer) and rt_sigprocmask one 8-byte set, both locals; neither writes back (null).
    unsafe {
        libc::syscall(libc::SYS_rt_sigaction, sig, action.as_ptr(), std::ptr::null::<u8>(), 8);
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_UNBLOCK,
            &raw const set,
            std::ptr::null::<u8>(),
            8,
        );
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
#[allow(unsafe_code)]
pub(crate) fn default_unblocked(sig: i32) {
    // SAFETY: as on Linux, through libc: SIG_DFL installs no handler; `set` is a local.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
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
