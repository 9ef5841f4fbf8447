//! The only writer of stderr: `tj: …` errors and warnings, each warning at most once per
//! process, and quiet handling of a vanished reader (`tj ls | head`).
//!
//! Messages are lowercase, name what failed and what tj did instead (STYLE.md 2.3). They
//! often quote what tj read (a command, an artifact id, a path from the store), so every
//! control character in them is escaped ([`escape`]): stored data must never drive the
//! terminal (issue 9).

#![allow(clippy::print_stderr)] // this module is the one place that may write stderr

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::sync::{Mutex, PoisonError};

static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// Prints `tj: {err:#}` on stderr (the whole context chain on one line).
pub fn error(err: &anyhow::Error) {
    let _ = writeln!(io::stderr().lock(), "tj: {}", escape(&format!("{err:#}")));
}

/// Prints `tj: warning: {msg}` on stderr.
pub fn warn(msg: &str) {
    let _ = writeln!(io::stderr().lock(), "tj: warning: {}", escape(msg));
}

/// Prints `tj: {msg}` on stderr: information, not a problem.
pub fn note(msg: &str) {
    let _ = writeln!(io::stderr().lock(), "tj: {}", escape(msg));
}

/// Prints `tj: warning: {msg}` unless the same message was printed before by this process.
pub fn warn_once(msg: &str) {
    let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    if seen.get_or_insert_with(HashSet::new).insert(msg.to_owned()) {
        drop(seen);
        warn(msg);
    }
}

/// Returns true if and only if `c` must not reach a terminal as it is: a control character
/// (C0, DEL, C1), or an invisible format character that reorders or hides text (bidi marks,
/// overrides and isolates, zero-width characters, word joiner, BOM). The one rule for
/// [`escape`] and for `rules::printable`.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// `text` with every [unsafe character](is_unsafe_char) made visible: `\t`, `\n`, `\r`, `\e`
/// for ESC, `\x7f` for the rest of ASCII, and `\u{9b}` beyond it (C1, bidi and zero-width
/// characters, which reorder or hide what a terminal shows). Borrows when there is nothing
/// to escape.
///
/// For everything tj prints *about* data it did not write itself — commands and ids from
/// the store, file names, arguments echoed in errors — never for an original (`tj expand`
/// prints the command's output as it was).
///
/// ```
/// assert_eq!(tj::diag::escape("cargo test"), "cargo test");
/// assert_eq!(tj::diag::escape("\u{1b}]0;PWNED\u{7}\u{1b}[2J"), r"\e]0;PWNED\x07\e[2J");
/// ```
pub fn escape(text: &str) -> Cow<'_, str> {
    let needs = is_unsafe_char;
    if !text.chars().any(needs) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            c if u32::from(c) < 0x80 && needs(c) => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if needs(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Returns true if and only if `err` means the reader of our output went away, which the
/// read-only subcommands treat as a quiet, successful end (as ripgrep and bat do).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
