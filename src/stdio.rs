//! Which of stdin, stdout and stderr tj was started without.
//!
//! Rust's runtime opens /dev/null in place of a closed descriptor 0, 1 or 2 before `main`,
//! so that a program never writes its output into a file it opens later. That hides from
//! tj what the caller asked for: `tj expand ID >&-` would succeed, writing into /dev/null,
//! where `cat FILE >&-` fails, and `tj run -- cmd >&-` would give the command an open
//! stdout. The binary therefore calls [`note_closed_at_start`] before the runtime starts
//! (`.init_array`, Linux only), and [`closed_at_start`] says what it found: `tj run` then
//! runs the command in its place with those descriptors closed again, and what tj itself
//! writes to a closed stdout, or reads from a closed stdin, fails as `cat`'s write or read
//! does ([`stdout_closed_error`], [`stdin_closed_error`]).

use std::io;
use std::sync::atomic::{AtomicU8, Ordering};

/// The standard descriptors (0, 1, 2) that were closed when tj started, a bit each (`1 <<
/// fd`), noted by [`note_closed_at_start`].
static CLOSED_AT_START: AtomicU8 = AtomicU8::new(0);

/// Notes which of descriptors 0, 1 and 2 are closed. For the binary to call before Rust's
/// runtime starts (`.init_array`): system calls only.
#[allow(unsafe_code)]
pub fn note_closed_at_start() {
    for fd in 0..3 {
        // SAFETY: reads the descriptor's flags, nothing else.
        let closed = unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1
            && io::Error::last_os_error().raw_os_error() == Some(libc::EBADF);
        if closed {
            CLOSED_AT_START.fetch_or(1 << fd, Ordering::Relaxed);
        }
    }
}

/// The descriptors [`note_closed_at_start`] found closed, a bit each (`1 << fd`); 0 without
/// the note (tests, or a platform where the binary cannot run code that early). An atomic
/// load: safe between fork and exec.
pub fn closed_at_start() -> u8 {
    CLOSED_AT_START.load(Ordering::Relaxed)
}

/// The error a write to stdout gets when stdout was closed when tj started: EBADF, the
/// error the write would have had without Rust's /dev/null in its place. `None` when stdout
/// was open.
pub fn stdout_closed_error() -> Option<io::Error> {
    closed_error(1)
}

/// The error a read of stdin gets when stdin was closed when tj started (as
/// [`stdout_closed_error`] for stdout).
pub fn stdin_closed_error() -> Option<io::Error> {
    closed_error(0)
}

fn closed_error(fd: u8) -> Option<io::Error> {
    (closed_at_start() & (1 << fd) != 0).then(|| {
        let err = io::Error::from_raw_os_error(libc::EBADF);
        let what = err.to_string();
        let what = what.split(" (os error").next().unwrap_or(&what);
        io::Error::new(err.kind(), format!("{what} (it was closed when tj started)"))
    })
}
