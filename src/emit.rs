//! The only writer of renditions (STYLE.md 2.1): text or JSON, to stdout, to a side file
//! or to a file descriptor; and the clean live stream an agent reads on stdout while the
//! rendition goes to a side channel.
//!
//! A side file (`--emit PATH`) is written according to what PATH is: a regular file (or
//! nothing yet) is replaced atomically; a FIFO or a character device is opened as it is and
//! written in place (never replaced, never truncated, and a FIFO nobody reads is reported,
//! not waited on); a symbolic link is written through only when both it and what it points
//! to belong to the user. Anything else is refused, and the caller falls back to stdout.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::fsx;

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
    let newline: &[u8] = if text.ends_with('\n') { b"" } else { b"\n" };
    stdout_parts(&[text.as_bytes(), newline])
}

/// Writes raw bytes to stdout unchanged (`tj expand --raw`).
pub fn stdout_bytes(bytes: &[u8]) -> Result<()> {
    stdout_parts(&[bytes])
}

/// Writes `parts` to stdout, one after the other, and flushes. Fails as the write would
/// have without Rust's runtime when stdout was closed when tj started (see
/// [`crate::stdio`]): std would write into the /dev/null the runtime put there, and
/// succeed. Nothing to write is no write, and succeeds either way (`grep NOMATCH >&-`).
fn stdout_parts(parts: &[&[u8]]) -> Result<()> {
    if parts.iter().all(|part| part.is_empty()) {
        return Ok(());
    }
    let written = match crate::stdio::stdout_closed_error() {
        Some(err) => Err(err),
        None => {
            let mut out = io::stdout().lock();
            parts.iter().try_for_each(|part| out.write_all(part)).and_then(|()| out.flush())
        }
    };
    written.context("could not write to stdout")
}

/// Serialises `value` as pretty JSON on stdout.
pub fn json<T: serde::Serialize>(value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value).context("could not encode JSON")?;
    stdout(&text)
}

/// Where a rendition goes besides (or instead of) stdout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Channel {
    /// A file, written before tj exits: atomically (temp + rename) if it is a regular file,
    /// in place if it is a FIFO or a character device (see the module doc).
    File(std::path::PathBuf),
    /// An open file descriptor the harness passed in.
    Fd(i32),
}

/// Writes `text` (plus a final newline) to `channel`. A regular file is replaced
/// atomically, so a reader sees the previous rendition or this one, never half of one; a
/// FIFO or a device is written in place (see the module doc).
pub fn to_channel(channel: &Channel, text: &str) -> Result<()> {
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend_from_slice(text.as_bytes());
    if !text.ends_with('\n') {
        bytes.push(b'\n');
    }
    match channel {
        Channel::File(path) => write_file(path, &bytes)
            .with_context(|| format!("could not write the rendition to `{}`", path.display())),
        Channel::Fd(fd) => write_fd(*fd, &bytes),
    }
}

/// Writes `bytes` to the side file `path` according to what it is (see the module doc).
fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return fsx::replace(path, bytes),
        Err(err) => return Err(err),
    };
    if meta.file_type().is_symlink() {
        let (target, target_meta) = owned_link_target(path, &meta)?;
        return write_existing(&target, &target_meta, bytes);
    }
    write_existing(path, &meta, bytes)
}

/// Why a side file of `kind` at `path` cannot take a rendition, if it cannot: a directory
/// or a socket cannot, a block device must not (a disk overwritten from its first byte).
/// A symbolic link is judged by what it leads to, when the rendition is written.
fn refused_kind(path: &Path, kind: &fs::FileType) -> Option<String> {
    let takes = kind.is_file() || kind.is_fifo() || kind.is_char_device() || kind.is_symlink();
    (!takes).then(|| {
        format!(
            "`{}` is a {}; tj writes a rendition only to a file, a FIFO or a character device",
            path.display(),
            fsx::kind_name(kind)
        )
    })
}

/// Why the side file `path` certainly cannot take a rendition, found before the command
/// runs: it is a directory, a socket or a block device, or the directory it would be made
/// in does not exist or is not a directory. What only the write can tell (where a symbolic
/// link leads, permissions, a full disk) is found out then.
pub fn file_refused(path: &Path) -> Option<String> {
    match fs::symlink_metadata(path) {
        Ok(meta) => refused_kind(path, &meta.file_type()),
        Err(err) if is_missing(&err) => {
            let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty());
            let dir = dir.unwrap_or(Path::new("."));
            match fs::metadata(dir) {
                Ok(meta) if meta.is_dir() => None,
                Ok(meta) => Some(format!(
                    "`{}` is a {}, not a directory",
                    dir.display(),
                    fsx::kind_name(&meta.file_type())
                )),
                Err(err) if is_missing(&err) => {
                    Some(format!("the directory `{}` does not exist", dir.display()))
                }
                Err(_) => None,
            }
        }
        Err(_) => None,
    }
}

/// Whether `err` says a path leads nowhere: a name that does not exist, or one under a file
/// that is not a directory.
fn is_missing(err: &io::Error) -> bool {
    matches!(err.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
}

/// The canonical target of the symbolic link `link` and its metadata, if and only if both
/// belong to the user: a link someone else planted (or one that leads to someone else's
/// file) must not decide what tj overwrites.
fn owned_link_target(link: &Path, meta: &fs::Metadata) -> io::Result<(PathBuf, fs::Metadata)> {
    let euid = fsx::euid();
    let refuse = |why: String| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("not writing through the symbolic link `{}`: {why}", link.display()),
        )
    };
    if meta.uid() != euid {
        return Err(refuse(format!("it belongs to uid {}, not to you (uid {euid})", meta.uid())));
    }
    // Canonical: no link left in any component, so what is checked is what is written.
    let target = fs::canonicalize(link).map_err(|err| {
        refuse(if err.kind() == io::ErrorKind::NotFound {
            "it points to nothing".to_owned()
        } else {
            format!("could not resolve it: {err}")
        })
    })?;
    let target_meta = fs::symlink_metadata(&target)?;
    if target_meta.uid() != euid {
        return Err(refuse(format!(
            "it points to `{}`, which belongs to uid {}, not to you (uid {euid})",
            target.display(),
            target_meta.uid()
        )));
    }
    Ok((target, target_meta))
}

/// Writes `bytes` to `path`, which exists and is not a symbolic link, as `meta` describes.
fn write_existing(path: &Path, meta: &fs::Metadata, bytes: &[u8]) -> io::Result<()> {
    let kind = meta.file_type();
    if kind.is_file() {
        // The reader takes it at once; a rendition lost to a crash is made again.
        return fsx::replace_volatile(path, bytes);
    }
    if let Some(why) = refused_kind(path, &kind) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    }
    // In place: no O_CREAT, no O_TRUNC (a device is never replaced or truncated). O_NONBLOCK
    // makes a FIFO nobody reads fail with ENXIO instead of blocking the open forever;
    // O_NOCTTY keeps a terminal from becoming tj's controlling terminal.
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|err| {
            if err.raw_os_error() == Some(libc::ENXIO) && kind.is_fifo() {
                // Not BrokenPipe: the caller keeps quiet about a broken pipe, and this needs
                // saying.
                io::Error::new(
                    io::ErrorKind::NotConnected,
                    format!("no process is reading the FIFO `{}`", path.display()),
                )
            } else {
                err
            }
        })?;
    let opened = file.metadata()?;
    if (opened.dev(), opened.ino()) != (meta.dev(), meta.ino()) {
        return Err(io::Error::other(format!(
            "`{}` was replaced while tj opened it; not writing",
            path.display()
        )));
    }
    // Blocking again: a reader slower than tj gets every byte.
    fsx::set_blocking(&file)?;
    (&file).write_all(bytes)
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

/// Whether `fd` is an open descriptor of this process (`--emit-fd` is checked with it
/// before tj opens any of its own).
#[cfg(unix)]
pub fn fd_is_open(fd: i32) -> bool {
    if fd < 0 {
        return false;
    }
    // SAFETY: F_GETFD reads the descriptor's flags; it touches no memory and fails with
    // EBADF for a number that is not open.
    #[allow(unsafe_code)]
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    flags != -1
}

/// Whether `fd` is an open descriptor: not known off Unix, where `--emit-fd` fails anyway.
#[cfg(not(unix))]
pub fn fd_is_open(_fd: i32) -> bool {
    true
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

    /// A directory of the test's own, removed on drop.
    fn temp_dir(name: &str) -> crate::testing::TempDir {
        crate::testing::TempDir::created(&format!("emit-{name}"))
    }

    fn file(path: &Path) -> Channel {
        Channel::File(path.to_owned())
    }

    /// Makes a device node, or returns false (with the reason) when this user may not.
    fn mknod(path: &Path, kind: nix::sys::stat::SFlag, major: u64, minor: u64) -> bool {
        use nix::sys::stat::{Mode, makedev};
        match nix::sys::stat::mknod(
            path,
            kind,
            Mode::from_bits_truncate(0o666),
            makedev(major, minor),
        ) {
            Ok(()) => true,
            Err(err) => {
                eprintln!("skipped: could not make a device node: {err}");
                false
            }
        }
    }

    #[test]
    fn a_regular_file_or_a_new_name_is_replaced_whole() {
        let dir = temp_dir("regular");
        let path = dir.0.join("out.txt");
        to_channel(&file(&path), "first").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "first\n");
        to_channel(&file(&path), "second\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "second\n");
        assert_eq!(fs::read_dir(&dir.0).unwrap().count(), 1, "no temp file left");
    }

    #[test]
    fn a_char_device_is_written_in_place_and_stays_a_device() {
        let dir = temp_dir("chardev");
        let null = dir.0.join("mynull");
        if !mknod(&null, nix::sys::stat::SFlag::S_IFCHR, 1, 3) {
            return;
        }
        to_channel(&file(&null), "hi").unwrap();
        let meta = fs::symlink_metadata(&null).unwrap();
        assert!(meta.file_type().is_char_device(), "{:?}", meta.file_type());
        assert_eq!(meta.rdev(), nix::sys::stat::makedev(1, 3));
    }

    #[test]
    fn a_block_device_is_refused() {
        let dir = temp_dir("blockdev");
        let disk = dir.0.join("disk");
        // A device number no driver claims: even a regression could not write a real disk.
        if !mknod(&disk, nix::sys::stat::SFlag::S_IFBLK, 4095, 4095) {
            return;
        }
        let err = to_channel(&file(&disk), "hi").unwrap_err();
        assert!(format!("{err:#}").contains("is a block device"), "{err:#}");
        assert!(fs::symlink_metadata(&disk).unwrap().file_type().is_block_device());
    }

    /// What `file_refused` turns away before a run is what the write would refuse for sure;
    /// what only the write can tell is left to it.
    #[test]
    fn a_side_file_is_refused_up_front_only_when_it_certainly_cannot_be_written() {
        let dir = temp_dir("refused");
        let existing = dir.0.join("existing.txt");
        fs::File::create(&existing).unwrap();
        let refused = file_refused;
        assert_eq!(refused(&existing), None);
        assert_eq!(refused(&dir.0.join("new.txt")), None);
        assert_eq!(refused(Path::new("relative-new.txt")), None);
        let why = refused(&dir.0).unwrap();
        assert!(
            why.ends_with(
                "is a directory; tj writes a rendition only to a file, a FIFO or a character device"
            ),
            "{why}"
        );
        let why = refused(&dir.0.join("missing/out.txt")).unwrap();
        assert!(
            why.starts_with("the directory `") && why.ends_with("missing` does not exist"),
            "{why}"
        );
        let why = refused(&existing.join("out.txt")).unwrap();
        assert!(why.ends_with("existing.txt` is a regular file, not a directory"), "{why}");
        // A dangling link of the user's is judged when the rendition is written.
        let link = dir.0.join("link");
        std::os::unix::fs::symlink(dir.0.join("nowhere/x"), &link).unwrap();
        assert_eq!(refused(&link), None);
    }

    #[test]
    fn a_fifo_with_a_reader_gets_the_rendition() {
        let dir = temp_dir("fifo");
        let fifo = dir.0.join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        // The read end, opened first without waiting for a writer (no thread, no sleep).
        let mut reader =
            OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
        to_channel(&file(&fifo), "through the pipe").unwrap();
        fsx::set_blocking(&reader).unwrap();
        let mut got = String::new();
        io::Read::read_to_string(&mut reader, &mut got).unwrap();
        assert_eq!(got, "through the pipe\n");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[test]
    fn a_fifo_without_a_reader_is_reported_not_waited_on() {
        let dir = temp_dir("fifo-alone");
        let fifo = dir.0.join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let err = to_channel(&file(&fifo), "nobody listens").unwrap_err();
        assert!(format!("{err:#}").contains("no process is reading the FIFO"), "{err:#}");
        assert!(!crate::diag::is_broken_pipe(&err), "the caller must not keep quiet about it");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[test]
    fn an_own_symlink_is_written_through_and_stays_a_link() {
        let dir = temp_dir("link");
        let target = dir.0.join("target.txt");
        crate::fsx::replace(&target, b"old").unwrap();
        let link = dir.0.join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        to_channel(&file(&link), "new").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "new\n");
    }

    #[test]
    fn a_symlink_that_is_not_all_ours_is_refused_and_its_target_untouched() {
        if fsx::euid() != 0 {
            eprintln!("skipped: only root can give a link or a file to another user");
            return;
        }
        let dir = temp_dir("foreign");
        let target = dir.0.join("target.txt");
        crate::fsx::replace(&target, b"keep").unwrap();
        // A link owned by someone else, to our file.
        let theirs = dir.0.join("theirs");
        std::os::unix::fs::symlink(&target, &theirs).unwrap();
        std::os::unix::fs::lchown(&theirs, Some(12345), None).unwrap();
        let err = format!("{:#}", to_channel(&file(&theirs), "x").unwrap_err());
        assert!(err.contains("belongs to uid 12345"), "{err}");
        // Our link, to someone else's file.
        let victim = dir.0.join("victim.txt");
        crate::fsx::replace(&victim, b"keep").unwrap();
        std::os::unix::fs::chown(&victim, Some(12345), None).unwrap();
        let ours = dir.0.join("ours");
        std::os::unix::fs::symlink(&victim, &ours).unwrap();
        let err = format!("{:#}", to_channel(&file(&ours), "x").unwrap_err());
        assert!(err.contains("which belongs to uid 12345"), "{err}");
        // Our link, to nothing: writing would create a file where it points.
        let dangling = dir.0.join("dangling");
        std::os::unix::fs::symlink(dir.0.join("nowhere"), &dangling).unwrap();
        let err = format!("{:#}", to_channel(&file(&dangling), "x").unwrap_err());
        assert!(err.contains("points to nothing"), "{err}");
        assert!(!dir.0.join("nowhere").exists());
        assert_eq!(fs::read(&target).unwrap(), b"keep");
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
        assert!(fs::symlink_metadata(&theirs).unwrap().file_type().is_symlink());
    }

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
