//! The only writer of stderr: `tj: …` errors and warnings, each warning at most once per
//! process, and quiet handling of a vanished reader (`tj ls | head`).
//!
//! Messages are lowercase, name what failed and what tj did instead (STYLE.md 2.3).

#![allow(clippy::print_stderr)] // this module is the one place that may write stderr

use std::collections::HashSet;
use std::io::{self, Write};
use std::sync::{Mutex, PoisonError};

static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// Prints `tj: {err:#}` on stderr (the whole context chain on one line).
pub fn error(err: &anyhow::Error) {
    let _ = writeln!(io::stderr().lock(), "tj: {err:#}");
}

/// Prints `tj: warning: {msg}` on stderr.
pub fn warn(msg: &str) {
    let _ = writeln!(io::stderr().lock(), "tj: warning: {msg}");
}

/// Prints `tj: warning: {msg}` unless the same message was printed before by this process.
pub fn warn_once(msg: &str) {
    let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    if seen.get_or_insert_with(HashSet::new).insert(msg.to_owned()) {
        drop(seen);
        warn(msg);
    }
}

/// Returns true if and only if `err` means the reader of our output went away, which the
/// read-only subcommands treat as a quiet, successful end (as ripgrep and bat do).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
