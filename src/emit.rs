//! The only writer of renditions (STYLE.md 2.1): text or JSON, to stdout for now; the side
//! file and file-descriptor channels arrive with `tj run`.

use std::io::{self, Write};

use anyhow::{Context, Result};

/// The rendition's format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Plain text for a model to read.
    #[default]
    Text,
    /// A JSON object (a superset of tokenjuice's `CompactResult`).
    Json,
}

/// Writes `text` and a final newline to stdout.
pub fn stdout(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| if text.ends_with('\n') { Ok(()) } else { out.write_all(b"\n") })
        .and_then(|()| out.flush())
        .context("could not write the rendition to stdout")
}

/// Writes raw bytes to stdout unchanged (`tj expand --raw`).
pub fn stdout_bytes(bytes: &[u8]) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes).and_then(|()| out.flush()).context("could not write to stdout")
}

/// Serialises `value` as pretty JSON on stdout.
pub fn json<T: serde::Serialize>(value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value).context("could not encode JSON")?;
    stdout(&text)
}

/// Where a rendition goes besides (or instead of) stdout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Channel {
    /// A file, written atomically (temp + rename) before tj exits.
    File(std::path::PathBuf),
    /// An open file descriptor the harness passed in.
    Fd(i32),
}

/// Writes `text` (plus a final newline) to `channel`. A file is replaced atomically, so a
/// reader sees the previous rendition or this one, never half of one.
pub fn to_channel(channel: &Channel, text: &str) -> Result<()> {
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend_from_slice(text.as_bytes());
    if !text.ends_with('\n') {
        bytes.push(b'\n');
    }
    match channel {
        Channel::File(path) => crate::store::atomic_write(path, &bytes)
            .with_context(|| format!("could not write the rendition to `{}`", path.display())),
        Channel::Fd(fd) => write_fd(*fd, &bytes),
    }
}

#[cfg(unix)]
fn write_fd(fd: i32, bytes: &[u8]) -> Result<()> {
    use std::os::fd::BorrowedFd;
    if fd < 0 {
        anyhow::bail!("--emit-fd {fd} is not a file descriptor");
    }
    // SAFETY: the harness promised `fd` is open for us to write (it passed --emit-fd or
    // TJ_EMIT_FD); we borrow it for the duration of this call and never close it. An fd
    // that is not open makes `try_clone_to_owned` fail with EBADF, which we report.
    #[allow(unsafe_code)]
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let owned = borrowed
        .try_clone_to_owned()
        .with_context(|| format!("could not use file descriptor {fd} for the rendition"))?;
    let mut file = std::fs::File::from(owned);
    file.write_all(bytes).with_context(|| format!("could not write the rendition to fd {fd}"))
}

#[cfg(not(unix))]
fn write_fd(fd: i32, _bytes: &[u8]) -> Result<()> {
    anyhow::bail!("--emit-fd {fd}: file descriptors are only supported on Unix")
}
