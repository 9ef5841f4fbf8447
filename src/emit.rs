//! The only writer of renditions (STYLE.md 2.1): text or JSON, to stdout, to a side file
//! (atomically) or to a file descriptor; and the clean live stream an agent reads on stdout
//! while the rendition goes to a side channel.

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

/// The live stream an agent reads on stdout while the rendition goes to a side channel
/// (DESIGN.md "Modes", agent): the child's bytes rendered a line at a time (ANSI stripped,
/// `\r` frames collapsed to what the line finally showed) and written per complete line.
///
/// Rendering is per batch of complete lines, so a redraw that moves the cursor above an
/// already-written line cannot take it back: the stream is a readable approximation, the
/// rendition is exact. A partial last line waits for its newline (or the end of the run).
pub struct CleanLive<W: Write> {
    out: W,
    pending: Vec<u8>,
}

/// A partial line longer than this is written anyway: memory stays bounded.
const MAX_PENDING: usize = 1 << 20;

impl<W: Write> CleanLive<W> {
    /// A stream writing to `out`.
    pub fn new(out: W) -> CleanLive<W> {
        CleanLive { out, pending: Vec::new() }
    }

    fn emit(&mut self, upto: usize) -> io::Result<()> {
        let text = crate::reduce::screen(&self.pending[..upto]).into_owned();
        self.pending.drain(..upto);
        self.out.write_all(text.as_bytes())?;
        self.out.flush()
    }
}

impl<W: Write> Write for CleanLive<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if let Some(last) = self.pending.iter().rposition(|&b| b == b'\n') {
            self.emit(last + 1)?;
        } else if self.pending.len() > MAX_PENDING {
            self.emit(self.pending.len())?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl<W: Write> Drop for CleanLive<W> {
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            let len = self.pending.len();
            let _ = self.emit(len);
            let _ = self.out.write_all(b"\n");
            let _ = self.out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_live_renders_whole_lines_and_holds_partial_ones() {
        let mut buf = Vec::new();
        {
            let mut live = CleanLive::new(&mut buf);
            live.write_all(b"\x1b[32mok\x1b[0m line\r\nBuilding 1/3\rBuil").unwrap();
            live.write_all(b"ding 3/3\r\x1b[Kdone\npartial").unwrap();
        }
        assert_eq!(String::from_utf8(buf).unwrap(), "ok line\ndone\npartial\n");
    }

    #[test]
    fn clean_live_bounds_a_line_without_newline() {
        let mut buf = Vec::new();
        let mut live = CleanLive::new(&mut buf);
        live.write_all(&vec![b'x'; MAX_PENDING + 10]).unwrap();
        assert!(live.pending.is_empty());
    }
}
