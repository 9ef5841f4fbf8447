//! Capture of a child's output (DESIGN.md, "Contracts of `tj run`": Capture).
//!
//! The relay's pump thread hands every chunk the child wrote to [`Capture::write`]; capture
//! hashes and counts it, keeps it in memory up to [`Limits::memory_cap`], then streams
//! everything to a private spill file. Past [`Limits::disk_cap`] the file stops growing and
//! only a tail ring of the last [`Limits::tail_cap`] bytes is kept; what falls between them is
//! counted, never dropped silently. A disk error never fails the run: capture falls back to
//! the head in memory plus the tail ring and records the error for one warning.
//!
//! # When nothing can be stored
//!
//! In agent mode a dropped byte is a lost one: nobody watched the output live, and a
//! compression that cannot be undone is a deletion (DESIGN.md "Store"). So the caller may
//! give the capture an *overflow stream* ([`Capture::stream_overflow_to`], the agent's
//! stdout through [`crate::emit::CleanLive`]). The moment bytes would otherwise be dropped —
//! the output outgrows memory and there is no spill directory, or the spill file fails
//! (a full disk) — the capture writes everything it holds to that stream (the head, the
//! bytes between the head and the tail ring read back from the failing spill file, then the
//! ring), and from then on every chunk as it comes. Memory stays bounded: the stream is
//! written, not held. [`Captured::streamed`] then tells the caller that the agent already
//! has the whole output, so that it adds only the exit line and stores nothing. A disk cap
//! reached on purpose ([`Limits::disk_cap`]) is not a failure and does not stream.
//!
//! This module owns the bounded buffer, the spill file while it is written (a temporary
//! `.capture-<pid>-<random>.tmp`, 0600, created exclusively in a private directory the
//! caller names; see [`crate::fsx`]), the SHA-256 and
//! byte count of everything the child wrote, the accounting of dropped bytes (and of the
//! lines among them), and reading the output back: whole when it is small enough
//! ([`Captured::read_whole`]), else a chunk at a time ([`Captured::for_each_chunk`], in the
//! chunks [`stream`] numbers lines by). It does not own the
//! store's names (`<id>.log`, `<id>.tail`, metadata), retention, or printing the warning:
//! the store renames or removes the spill file, and `diag` prints [`Captured::error`].

use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::fsx;
use crate::reduce::stream;

/// Buffer between capture and the spill file. Relay chunks are up to 64 KiB, so big chunks go
/// straight through and only small PTY reads are coalesced.
const SPILL_BUFFER: usize = 64 * 1024;

/// How much of the output is kept, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes kept in memory before spilling to disk (default 8 MiB). Also the head kept in
    /// memory when there is no spill file (no directory, or a disk error).
    pub memory_cap: usize,
    /// Bytes written to the spill file before it stops growing (default 2 GiB). A cap no
    /// larger than `memory_cap` disables spilling, since the file would hold no more than
    /// memory does.
    pub disk_cap: u64,
    /// Bytes of the tail ring: the last bytes past the memory head, kept in memory so that
    /// the end of the output survives the disk cap or a disk error (default 1 MiB).
    pub tail_cap: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { memory_cap: 8 << 20, disk_cap: 2 << 30, tail_cap: 1 << 20 }
    }
}

/// What was captured, once the child's output has ended.
///
/// Accounting: the `total_bytes` the child wrote are exactly the first `storage.len()` bytes
/// (in [`Storage`]), then `dropped_bytes` bytes that were not kept, then `tail`. So
/// `total_bytes == storage.len() + dropped_bytes + tail.len()`, and `tail` is empty whenever
/// `dropped_bytes` is 0 (the storage then holds every byte, and `sha256`, if taken, is its
/// digest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captured {
    /// Bytes the child wrote.
    pub total_bytes: u64,
    /// SHA-256 of every byte the child wrote, dropped ones included; `None` for a capture
    /// made [`without_digest`](Capture::without_digest).
    pub sha256: Option<[u8; 32]>,
    /// Where the first bytes are kept.
    pub storage: Storage,
    /// Bytes neither in the storage nor in `tail` (disk cap, disk error, or no spill
    /// directory).
    pub dropped_bytes: u64,
    /// The last bytes the child wrote (at most `tail_cap`) when any were dropped, else empty.
    /// None of them is also in the storage.
    pub tail: Vec<u8>,
    /// Line feeds among the dropped bytes: how many lines the rendition says are missing.
    pub dropped_newlines: u64,
    /// The first disk error, for one warning (e.g. "could not write spill file `…`: …").
    pub error: Option<String>,
    /// The output went to the overflow stream because it could be neither spilled nor held
    /// ([`Capture::stream_overflow_to`]); `None` when it did not.
    pub streamed: Option<Streamed>,
}

/// How the output went to the overflow stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Streamed {
    /// Bytes the stream could not be given: neither held in memory nor readable back from
    /// the spill file when streaming began (normally 0). The stream says where.
    pub lost: u64,
    /// The stream failed (its reader went away); bytes after that reached no one.
    pub failed: Option<String>,
}

/// A piece of the output, in order, as [`Captured::for_each_chunk`] hands it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Kept bytes: one chunk, as [`stream::cut`] cuts them.
    Bytes(&'a [u8]),
    /// Bytes that were counted but not kept, and the line feeds among them.
    Lost {
        /// How many bytes.
        bytes: u64,
        /// How many of them were `\n`.
        newlines: u64,
    },
}

/// Where the kept head of the output lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Storage {
    /// The first bytes, in memory.
    Memory(Vec<u8>),
    /// The first `len` bytes, in a spill file that is flushed (not fsynced: see
    /// [`Capture::finish`]). The caller owns the file from here on: the store renames it into
    /// place or removes it.
    Spilled {
        /// The temporary spill file (`<spill dir>/.capture-<pid>-<n>.tmp`).
        path: PathBuf,
        /// Bytes in the file.
        len: u64,
    },
}

impl Storage {
    /// Bytes held: the first `len()` bytes the child wrote.
    pub fn len(&self) -> u64 {
        match self {
            Storage::Memory(bytes) => bytes.len() as u64,
            Storage::Spilled { len, .. } => *len,
        }
    }

    /// Returns true if and only if no byte is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Captured {
    /// Every byte the child wrote, if they were all kept and there are at most `max` of
    /// them (the engine reduces such an output whole); `None` otherwise.
    pub fn read_whole(&self, max: usize) -> io::Result<Option<Vec<u8>>> {
        self.check()?;
        if self.dropped_bytes > 0 || self.total_bytes > max as u64 {
            return Ok(None);
        }
        let mut out = Vec::with_capacity(to_usize(self.total_bytes));
        Reader { captured: self, file: None }.read_into(&mut out, 0, self.total_bytes)?;
        Ok(Some(out))
    }

    /// The first kept bytes, at most `max`.
    pub fn head(&self, max: usize) -> io::Result<Vec<u8>> {
        self.check()?;
        let end = self.storage.len().min(max as u64);
        let mut out = Vec::with_capacity(to_usize(end));
        Reader { captured: self, file: None }.read_into(&mut out, 0, end)?;
        Ok(out)
    }

    /// The last kept bytes, at most `max`: from the tail when bytes were dropped.
    pub fn last(&self, max: usize) -> io::Result<Vec<u8>> {
        self.check()?;
        let kept_from =
            if self.dropped_bytes > 0 { self.total_bytes - self.tail.len() as u64 } else { 0 };
        let start = self.total_bytes.saturating_sub(max as u64).max(kept_from);
        let mut out = Vec::with_capacity(to_usize(self.total_bytes - start));
        Reader { captured: self, file: None }.read_into(&mut out, start, self.total_bytes)?;
        Ok(out)
    }

    /// Hands the whole output to `f` in order, a chunk at a time ([`stream::cut`]), with the
    /// dropped bytes as one [`Piece::Lost`] between the storage and the tail. Memory: one
    /// chunk.
    pub fn for_each_chunk(&self, mut f: impl FnMut(Piece<'_>)) -> io::Result<()> {
        self.check()?;
        match &self.storage {
            Storage::Memory(bytes) => stream::chunks(bytes).for_each(|c| f(Piece::Bytes(c))),
            Storage::Spilled { path, len } => {
                let mut file = File::open(path)?;
                let mut buf: Vec<u8> = Vec::with_capacity(stream::CHUNK);
                let mut left = *len;
                while left > 0 || !buf.is_empty() {
                    let want = (stream::CHUNK - buf.len()).min(to_usize(left));
                    let at = buf.len();
                    buf.resize(at + want, 0);
                    file.read_exact(&mut buf[at..])?;
                    left -= want as u64;
                    let end = stream::cut(&buf, left == 0);
                    f(Piece::Bytes(&buf[..end]));
                    buf.drain(..end);
                }
            }
        }
        if self.dropped_bytes > 0 {
            f(Piece::Lost { bytes: self.dropped_bytes, newlines: self.dropped_newlines });
        }
        stream::chunks(&self.tail).for_each(|c| f(Piece::Bytes(c)));
        Ok(())
    }

    /// Checks the accounting that reading relies on.
    fn check(&self) -> io::Result<()> {
        let kept = self.storage.len().checked_add(self.tail.len() as u64);
        if kept.and_then(|k| k.checked_add(self.dropped_bytes)) != Some(self.total_bytes) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "captured byte counts do not add up (storage + dropped + tail != total)",
            ));
        }
        Ok(())
    }
}

/// Reads byte ranges of the child's output back from the storage and the tail.
struct Reader<'a> {
    captured: &'a Captured,
    file: Option<File>,
}

impl Reader<'_> {
    /// Appends the bytes at offsets `start..end` of the output to `out`; the range must lie
    /// in kept bytes.
    fn read_into(&mut self, out: &mut Vec<u8>, start: u64, end: u64) -> io::Result<()> {
        let captured = self.captured;
        let head_len = captured.storage.len();
        let tail_start = captured.total_bytes - captured.tail.len() as u64;
        if start < head_len {
            let stop = end.min(head_len);
            match &captured.storage {
                Storage::Memory(bytes) => {
                    out.extend_from_slice(&bytes[to_usize(start)..to_usize(stop)]);
                }
                Storage::Spilled { path, .. } => {
                    let file = match &mut self.file {
                        Some(file) => file,
                        None => self.file.insert(File::open(path)?),
                    };
                    file.seek(SeekFrom::Start(start))?;
                    let at = out.len();
                    out.resize(at + to_usize(stop - start), 0);
                    file.read_exact(&mut out[at..])?;
                }
            }
        }
        if end > tail_start {
            let from = start.max(tail_start) - tail_start;
            out.extend_from_slice(&captured.tail[to_usize(from)..to_usize(end - tail_start)]);
        }
        Ok(())
    }
}

/// A length within a buffer that exists, so it fits in `usize`.
fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Where spilled bytes go: a file, or in tests a writer that fails on cue.
trait Sink: Write + Send {}

impl<T: Write + Send> Sink for T {}

/// The spill file being written. Removed on drop unless it was completed.
struct SpillFile {
    path: PathBuf,
    out: BufWriter<Box<dyn Sink>>,
    /// Bytes handed to `out`: the first `len` bytes of the output.
    len: u64,
    /// Line feeds among those bytes, counted once the file is capped (only then can bytes
    /// be dropped, and only then is the number needed).
    newlines_at_cap: u64,
    /// The file reached the disk cap and takes no more bytes.
    is_capped: bool,
    /// Completed: the caller owns the file now.
    keep: bool,
}

impl SpillFile {
    fn new(path: PathBuf, sink: Box<dyn Sink>) -> SpillFile {
        let out = BufWriter::with_capacity(SPILL_BUFFER, sink);
        SpillFile { path, out, len: 0, newlines_at_cap: 0, is_capped: false, keep: false }
    }

    /// Appends what fits under `cap` of `bytes`. `newlines_through` is the number of line
    /// feeds in the output up to the end of `bytes`, which the capture counts anyway: the
    /// file's own count is derived from it when the cap is reached, never counted twice.
    fn put(&mut self, bytes: &[u8], cap: u64, newlines_through: u64) -> io::Result<()> {
        if self.is_capped {
            return Ok(());
        }
        // Lossy: bytes past the disk cap reach only the tail ring; `finish` counts the rest.
        let room = to_usize(cap.saturating_sub(self.len)).min(bytes.len());
        self.out.write_all(&bytes[..room])?;
        self.len += room as u64;
        self.is_capped = self.len >= cap;
        if self.is_capped {
            self.newlines_at_cap = newlines_through - newlines(&bytes[room..]);
        }
        Ok(())
    }

    /// Appends `rest` (the bytes that follow the file, nothing between) and flushes.
    fn complete(&mut self, rest: &[u8]) -> io::Result<()> {
        // Lossless: the output ended less than `tail_cap` bytes past the disk cap, so nothing
        // was dropped; one file holding every byte beats a file plus a tail to join, at the
        // price of exceeding the cap by less than `tail_cap`.
        self.out.write_all(rest)?;
        self.len += rest.len() as u64;
        self.out.flush()?;
        self.keep = true;
        Ok(())
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        if !self.keep {
            // An abandoned spill file holds part of an output nobody will name; best effort.
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// How the spill file comes to exist.
enum Opener {
    /// A new file in this directory.
    Dir(PathBuf),
    /// A ready sink, recorded under this path.
    #[cfg(test)]
    Sink(PathBuf, Box<dyn Sink>),
}

impl Opener {
    fn open(self) -> Result<SpillFile, String> {
        match self {
            Opener::Dir(dir) => match create_spill_file(&dir) {
                Ok((path, file)) => Ok(SpillFile::new(path, Box::new(file))),
                Err(err) => {
                    Err(format!("could not create a spill file in `{}`: {err}", dir.display()))
                }
            },
            #[cfg(test)]
            Opener::Sink(path, sink) => Ok(SpillFile::new(path, sink)),
        }
    }
}

/// Creates `.capture-<pid>-<random>.tmp` in `dir`, readable by the user only. `dir` is
/// created 0700 if missing; an existing one must be a real directory of the user's with no
/// permission for group or others, and is never chmodded (see [`fsx::ensure_private_dir`]).
fn create_spill_file(dir: &Path) -> io::Result<(PathBuf, File)> {
    fsx::ensure_private_dir(dir)?;
    fsx::create_temp(dir, "capture")
}

/// The last bytes pushed, up to a capacity; allocated on first use.
struct Ring {
    buf: Vec<u8>,
    cap: usize,
    /// Index of the oldest byte.
    start: usize,
    len: usize,
}

impl Ring {
    fn new(cap: usize) -> Ring {
        Ring { buf: Vec::new(), cap, start: 0, len: 0 }
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.cap == 0 || bytes.is_empty() {
            return;
        }
        if self.buf.is_empty() {
            self.buf = vec![0; self.cap];
        }
        let bytes = if bytes.len() >= self.cap {
            self.start = 0;
            self.len = 0;
            &bytes[bytes.len() - self.cap..]
        } else {
            bytes
        };
        let end = (self.start + self.len) % self.cap;
        let first = bytes.len().min(self.cap - end);
        self.buf[end..end + first].copy_from_slice(&bytes[..first]);
        self.buf[..bytes.len() - first].copy_from_slice(&bytes[first..]);
        let len = self.len + bytes.len();
        if len > self.cap {
            self.start = (self.start + len - self.cap) % self.cap;
            self.len = self.cap;
        } else {
            self.len = len;
        }
    }

    /// The bytes, oldest first, as two slices.
    fn slices(&self) -> (&[u8], &[u8]) {
        if self.buf.is_empty() {
            return (&[], &[]);
        }
        let first = self.len.min(self.cap - self.start);
        (&self.buf[self.start..self.start + first], &self.buf[..self.len - first])
    }
}

/// Where bytes past the memory cap go.
enum Spill {
    /// Not opened yet: every byte so far is in memory.
    Pending(Opener),
    /// Streaming to (or, once capped, holding) the first bytes of the output.
    Open(SpillFile),
    /// No spill file: there is no directory for one, or a disk error ended it. Head and tail
    /// ring only; the overflow stream, if any, takes over.
    Off,
    /// No spill file because the limits say so (a disk cap not above the memory cap): head
    /// and tail ring only, by design.
    Disabled,
}

/// The overflow stream (see the module docs).
enum Overflow {
    /// None was given.
    None,
    /// Given, not needed yet.
    Ready(Box<dyn Write + Send>),
    /// Everything held went to it; each chunk goes to it as it comes.
    Streaming(Box<dyn Write + Send>, Streamed),
    /// It failed, or the capture is finished.
    Done(Streamed),
}

/// The capture of one child's output: feed it with [`write`](Capture::write), end it with
/// [`finish`](Capture::finish).
///
/// While writing, memory stays bounded by `memory_cap + tail_cap` plus a 64 KiB write
/// buffer, however much the child writes (the head stays in memory while spilling, so a disk
/// error at any point still leaves it). Dropping an unfinished capture removes its spill file.
pub struct Capture {
    limits: Limits,
    /// `None` when no digest is wanted ([`Capture::without_digest`]).
    hasher: Option<Sha256>,
    total: u64,
    /// Line feeds among all bytes, so that lines lost past the disk cap can be counted.
    newlines: u64,
    /// The first `memory_cap` bytes. Kept while spilling, so that a disk error at any point
    /// still leaves the head of the output.
    head: Vec<u8>,
    /// The last `tail_cap` bytes past `head`.
    ring: Ring,
    spill: Spill,
    overflow: Overflow,
    error: Option<String>,
}

impl fmt::Debug for Capture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spill = match &self.spill {
            Spill::Open(file) => Some((&file.path, file.len)),
            Spill::Pending(_) | Spill::Off | Spill::Disabled => None,
        };
        f.debug_struct("Capture")
            .field("limits", &self.limits)
            .field("total", &self.total)
            .field("head", &self.head.len())
            .field("spill", &spill)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl Capture {
    /// A capture that spills into `spill_dir` past the memory cap, or with `None` never
    /// touches the disk (it keeps the head and the tail ring and counts what falls between).
    ///
    /// Creates nothing until the memory cap is crossed.
    pub fn new(spill_dir: Option<PathBuf>, limits: Limits) -> Capture {
        let spill = match spill_dir {
            Some(dir) if limits.disk_cap > limits.memory_cap as u64 => {
                Spill::Pending(Opener::Dir(dir))
            }
            Some(_) => Spill::Disabled,
            None => Spill::Off,
        };
        Capture::with_spill(spill, limits)
    }

    fn with_spill(spill: Spill, limits: Limits) -> Capture {
        Capture {
            limits,
            hasher: Some(Sha256::new()),
            total: 0,
            newlines: 0,
            head: Vec::new(),
            ring: Ring::new(limits.tail_cap),
            spill,
            overflow: Overflow::None,
            error: None,
        }
    }

    /// A capture spilling into `sink`, reported under `path`.
    #[cfg(test)]
    fn with_sink(path: PathBuf, sink: Box<dyn Sink>, limits: Limits) -> Capture {
        Capture::with_spill(Spill::Pending(Opener::Sink(path, sink)), limits)
    }

    /// Takes the next bytes the child wrote. Never fails: a disk error switches to keeping
    /// the head and tail in memory, and is reported by [`finish`](Capture::finish).
    pub fn write(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        if let Some(hasher) = self.hasher.as_mut() {
            hasher.update(chunk);
        }
        self.total += chunk.len() as u64;
        self.newlines += newlines(chunk);
        let room = self.limits.memory_cap.saturating_sub(self.head.len()).min(chunk.len());
        let (first, rest) = chunk.split_at(room);
        if !first.is_empty() {
            self.reserve_head(first.len());
            self.head.extend_from_slice(first);
        }
        if rest.is_empty() {
            return;
        }
        // Every byte past the head also enters the ring (a memcpy, cheap beside the hash), so
        // that a disk error leaves the bytes just before it and not only those after.
        self.ring.push(rest);
        if let Overflow::Streaming(out, streamed) = &mut self.overflow {
            if let Err(err) = out.write_all(rest) {
                streamed.failed = Some(err.to_string());
                self.overflow = Overflow::Done(streamed.clone());
            }
            return;
        }
        if matches!(self.spill, Spill::Pending(_)) {
            self.open_spill(rest);
        }
        let cap = self.limits.disk_cap;
        let result = match &mut self.spill {
            Spill::Open(file) => file.put(rest, cap, self.newlines),
            Spill::Pending(_) | Spill::Off | Spill::Disabled => Ok(()),
        };
        if let Err(err) = result {
            self.abandon_spill(&err, rest);
        }
        if matches!(self.spill, Spill::Off) {
            // Past the head, with no spill file: without the stream, bytes would be dropped.
            self.start_streaming(None, rest);
        }
    }

    /// The same capture without the SHA-256 ([`Captured::sha256`] is then `None`): for an
    /// output nobody will be given a rendition of, whose id need not name its content. The
    /// hash is the largest part of what a capture costs per byte (about 150 ms of CPU per
    /// 200 MB with SHA-NI), paid for nothing there.
    #[must_use]
    pub fn without_digest(mut self) -> Capture {
        self.hasher = None;
        self
    }

    /// Sends the output to `out` if it can be neither spilled nor held, instead of dropping
    /// bytes (see the module docs). For agent mode, where nobody watches the output live.
    pub fn stream_overflow_to(&mut self, out: Box<dyn Write + Send>) {
        self.overflow = Overflow::Ready(out);
    }

    /// Switches to the overflow stream, if there is one and it is not running yet: writes
    /// everything held so far (reading back from `file` what only the spill file has).
    ///
    /// `current` is the chunk being written, whose bytes end the output so far (it is in
    /// the ring too, unless it is larger than the ring).
    fn start_streaming(&mut self, file: Option<&Path>, current: &[u8]) {
        if !matches!(self.overflow, Overflow::Ready(_)) {
            return;
        }
        let Overflow::Ready(mut out) = std::mem::replace(&mut self.overflow, Overflow::None) else {
            return;
        };
        let mut streamed = Streamed::default();
        let (first, second) = self.ring.slices();
        // The latest bytes held: the ring, or the chunk itself when it reaches further back.
        let (ring_start, first, second) = if current.len() > first.len() + second.len() {
            (self.total - current.len() as u64, current, &[][..])
        } else {
            (self.total - (first.len() + second.len()) as u64, first, second)
        };
        let head_len = self.head.len() as u64;
        let mut result = out.write_all(&self.head);
        let mut at = head_len;
        if result.is_ok() && ring_start > at {
            // The bytes between the head and the ring went to the spill file only.
            if let Some(path) = file {
                match copy_range(path, at, ring_start, &mut out) {
                    Ok(copied) => at += copied,
                    Err(err) if err.kind() == io::ErrorKind::BrokenPipe => result = Err(err),
                    Err(_) => {}
                }
            }
            if result.is_ok() && ring_start > at {
                streamed.lost = ring_start - at;
                let note = format!(
                    "\n[tj] … {} bytes of the output are lost here: the disk failed and memory held only the first and last bytes …\n",
                    ring_start - at
                );
                result = out.write_all(note.as_bytes());
            }
        }
        let skip = to_usize(at.saturating_sub(ring_start)).min(first.len() + second.len());
        if result.is_ok() {
            result = if skip < first.len() {
                out.write_all(&first[skip..]).and_then(|()| out.write_all(second))
            } else {
                out.write_all(&second[skip - first.len()..])
            };
        }
        self.overflow = match result {
            Ok(()) => Overflow::Streaming(out, streamed),
            Err(err) => {
                streamed.failed = Some(err.to_string());
                Overflow::Done(streamed)
            }
        };
    }

    /// Grows `head` for `more` bytes without reserving past the memory cap.
    fn reserve_head(&mut self, more: usize) {
        let need = self.head.len() + more;
        if need > self.head.capacity() {
            let want = need.max(self.head.capacity() * 2).max(4096).min(self.limits.memory_cap);
            self.head.reserve_exact(want.max(need) - self.head.len());
        }
    }

    /// Opens the spill file and writes the head into it; `current` is the chunk being
    /// written (see [`Capture::start_streaming`]).
    fn open_spill(&mut self, current: &[u8]) {
        let Spill::Pending(opener) = std::mem::replace(&mut self.spill, Spill::Off) else {
            return;
        };
        match opener.open() {
            // The head ends where `current` begins.
            Ok(mut file) => {
                match file.put(&self.head, self.limits.disk_cap, self.newlines - newlines(current))
                {
                    Ok(()) => self.spill = Spill::Open(file),
                    Err(err) => {
                        self.spill = Spill::Open(file);
                        self.abandon_spill(&err, current);
                    }
                }
            }
            Err(msg) => {
                self.error.get_or_insert(msg);
            }
        }
    }

    /// Records `err` and stops spilling. The partial file is removed: after a failed write
    /// we cannot say which of its bytes reached the disk; the overflow stream, if
    /// there is one, reads back what it needs first (a byte that `write` accepted reads back
    /// as written). `current` is the chunk being written.
    fn abandon_spill(&mut self, err: &io::Error, current: &[u8]) {
        // Lossy: from here on only the memory head and the tail ring are kept, and `finish`
        // counts what falls between them as dropped.
        if let Spill::Open(file) = &self.spill {
            let msg = format!("could not write spill file `{}`: {err}", file.path.display());
            self.error.get_or_insert(msg);
            let path = file.path.clone();
            // Before the file goes: it may hold bytes that neither the head nor the ring has.
            self.start_streaming(Some(&path), current);
        }
        self.spill = Spill::Off;
    }

    /// Ends the stream of what overflowed, if one was started: flushed, then its writer
    /// dropped (one that holds a partial last line writes it then). Says what it took.
    fn end_stream(&mut self) -> Option<Streamed> {
        match std::mem::replace(&mut self.overflow, Overflow::None) {
            Overflow::Streaming(mut out, mut streamed) => {
                if let Err(err) = out.flush() {
                    streamed.failed.get_or_insert(err.to_string());
                }
                drop(out);
                Some(streamed)
            }
            Overflow::Done(streamed) => Some(streamed),
            Overflow::None | Overflow::Ready(_) => None,
        }
    }

    /// Ends the capture: flushes the spill file, and says what was kept where.
    ///
    /// Not fsynced: an fsync of a large spill costs the user half a second or more after the
    /// command ended, and buys nothing a reader on this machine can see (the page cache
    /// serves the store's readers). A crash of the machine may lose an original whose
    /// rendition was shown, as it may lose any file written in the seconds before it.
    pub fn finish(mut self) -> Captured {
        let total = self.total;
        let mut ring: Vec<u8> = {
            let (first, second) = self.ring.slices();
            [first, second].concat()
        };
        let ring_start = total - ring.len() as u64;
        let mut spilled = None;
        if let Spill::Open(mut file) = std::mem::replace(&mut self.spill, Spill::Off) {
            let (dropped, skip) = beyond(&ring, ring_start, file.len);
            let merged = if dropped == 0 { &ring[skip..] } else { &[] };
            match file.complete(merged) {
                Ok(()) => spilled = Some((file, dropped, skip)),
                Err(err) => {
                    let msg =
                        format!("could not write spill file `{}`: {err}", file.path.display());
                    self.error.get_or_insert(msg);
                    // The file goes with `file`; what only it holds goes to the stream first.
                    self.start_streaming(Some(&file.path), &[]);
                }
            }
        }
        let streamed = self.end_stream();
        let sha256 = self.hasher.map(|hasher| hasher.finalize().into());
        let error = self.error;
        if let Some((file, dropped, skip)) = spilled {
            let tail = if dropped == 0 {
                Vec::new()
            } else {
                ring.drain(..skip);
                ring
            };
            // Bytes are dropped only past a capped file (else it holds every byte).
            let dropped_newlines = if dropped == 0 {
                0
            } else {
                self.newlines - file.newlines_at_cap - newlines(&tail)
            };
            let storage = Storage::Spilled { path: file.path.clone(), len: file.len };
            return Captured {
                total_bytes: total,
                sha256,
                storage,
                dropped_bytes: dropped,
                tail,
                dropped_newlines,
                error,
                streamed,
            };
        }
        // Memory: the head, then the ring's bytes that are not in it.
        let mut head = self.head;
        let (dropped, skip) = beyond(&ring, ring_start, head.len() as u64);
        ring.drain(..skip);
        let tail = if dropped == 0 {
            head.extend_from_slice(&ring);
            Vec::new()
        } else {
            ring
        };
        let dropped_newlines = self.newlines - newlines(&head) - newlines(&tail);
        Captured {
            total_bytes: total,
            sha256,
            storage: Storage::Memory(head),
            dropped_bytes: dropped,
            tail,
            dropped_newlines,
            error,
            streamed,
        }
    }
}

/// Copies the bytes at offsets `from..to` of the file at `path` to `out`, as many as the
/// file has; returns how many.
fn copy_range(path: &Path, from: u64, to: u64, out: &mut dyn Write) -> io::Result<u64> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(from))?;
    io::copy(&mut file.take(to - from), out)
}

/// Line feeds in `bytes`.
fn newlines(bytes: &[u8]) -> u64 {
    // Counted in blocks of at most 255 bytes into a `u8`, which the compiler turns into
    // 32 byte-wide lanes: as cheap as the copy into the ring.
    bytes
        .chunks(255)
        .map(|block| u64::from(block.iter().fold(0u8, |n, &b| n + u8::from(b == b'\n'))))
        .sum()
}

/// For a ring holding the output from offset `ring_start` to the end: how many bytes from
/// offset `from` precede the ring (dropped), and how many ring bytes precede `from` (already
/// kept).
fn beyond(ring: &[u8], ring_start: u64, from: u64) -> (u64, usize) {
    let skip = to_usize(from.saturating_sub(ring_start)).min(ring.len());
    (ring_start.saturating_sub(from), skip)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempDir;

    const KIB: usize = 1024;

    /// Seeded text: lines of 0..120 bytes, mostly printable, some non-UTF-8 bytes.
    fn text(seed: u64, len: usize) -> Vec<u8> {
        let mut rng = crate::testing::Rng::new(seed);
        let mut next = move || rng.next_u64();
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            let line = (next() % 120) as usize;
            for _ in 0..line {
                let r = next();
                out.push(if r % 50 == 0 { 0x80 | (r >> 8) as u8 } else { b' ' + (r % 95) as u8 });
            }
            out.push(b'\n');
        }
        out.truncate(len);
        out
    }

    /// `count` lines of 11 bytes: "line 00000\n", "line 00001\n", ….
    fn numbered_lines(count: usize) -> Vec<u8> {
        (0..count).flat_map(|i| format!("line {i:05}\n").into_bytes()).collect()
    }

    fn sha(bytes: &[u8]) -> Option<[u8; 32]> {
        Some(Sha256::digest(bytes).into())
    }

    fn feed(mut capture: Capture, input: &[u8], chunk: usize) -> Captured {
        for piece in input.chunks(chunk) {
            capture.write(piece);
        }
        capture.finish()
    }

    fn stored(captured: &Captured) -> Vec<u8> {
        match &captured.storage {
            Storage::Memory(bytes) => bytes.clone(),
            Storage::Spilled { path, .. } => fs::read(path).unwrap(),
        }
    }

    /// Checks the accounting against the input: head ++ dropped ++ tail, exactly.
    fn assert_accounts(captured: &Captured, input: &[u8]) {
        let head = stored(captured);
        assert_eq!(captured.total_bytes, input.len() as u64);
        assert_eq!(captured.sha256, sha(input));
        assert_eq!(head.len() as u64, captured.storage.len());
        assert_eq!(head, input[..head.len()]);
        assert_eq!(captured.tail, input[input.len() - captured.tail.len()..]);
        assert_eq!(
            captured.total_bytes,
            captured.storage.len() + captured.dropped_bytes + captured.tail.len() as u64
        );
        if captured.dropped_bytes == 0 {
            assert!(captured.tail.is_empty());
        }
    }

    fn limits(memory_cap: usize, disk_cap: u64, tail_cap: usize) -> Limits {
        Limits { memory_cap, disk_cap, tail_cap }
    }

    /// Accepts `limit` bytes, then fails like a full disk; `flush` fails if asked to (a
    /// write error at the very end).
    struct FailingSink {
        limit: usize,
        written: usize,
        flush_fails: bool,
    }

    impl FailingSink {
        fn boxed(limit: usize, flush_fails: bool) -> Box<dyn Sink> {
            Box::new(FailingSink { limit, written: 0, flush_fails })
        }
    }

    impl Write for FailingSink {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.written >= self.limit {
                return Err(io::ErrorKind::StorageFull.into());
            }
            let n = buf.len().min(self.limit - self.written);
            self.written += n;
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            if self.flush_fails { Err(io::Error::other("flush failed")) } else { Ok(()) }
        }
    }

    /// A real file that takes `limit` bytes, then fails like a full disk (what a 1 MB
    /// tmpfs does): what it took can be read back.
    struct FullDisk {
        file: File,
        limit: usize,
        written: usize,
    }

    impl FullDisk {
        fn boxed(path: &Path, limit: usize) -> Box<dyn Sink> {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            Box::new(FullDisk { file: File::create(path).unwrap(), limit, written: 0 })
        }
    }

    impl Write for FullDisk {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(self.limit - self.written);
            if n == 0 {
                return Err(io::ErrorKind::StorageFull.into());
            }
            self.written += n;
            self.file.write(&buf[..n])
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The overflow stream's bytes, shared with the test.
    #[derive(Clone, Default)]
    struct Agent(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Agent {
        fn boxed(&self) -> Box<dyn Write + Send> {
            Box::new(self.clone())
        }

        fn got(&self) -> Vec<u8> {
            self.0.lock().unwrap().clone()
        }
    }

    impl Write for Agent {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Asserts `got == want` without printing megabytes: the lengths and where they differ.
    fn assert_same(got: &[u8], want: &[u8], what: &str) {
        let first = got.iter().zip(want).position(|(a, b)| a != b);
        assert!(
            got == want,
            "{what}: got {} bytes, want {}; first difference at {first:?}",
            got.len(),
            want.len()
        );
    }

    #[test]
    fn a_full_disk_streams_the_whole_output_to_the_agent() {
        let dir = TempDir::new("full");
        let path = dir.0.join("spill.tmp");
        let input = text(20, 900 * KIB);
        for chunk in [1, 999, 64 * KIB] {
            // The disk takes 300 KiB: the head (1 KiB) and 299 KiB after it, which only the
            // file holds when the write that fails comes. The ring (128 KiB here, 1 MiB by
            // default) covers the spill buffer (64 KiB) and the chunk being written.
            let sink = FullDisk::boxed(&path, 300 * KIB);
            let mut capture =
                Capture::with_sink(path.clone(), sink, limits(KIB, 1 << 30, 128 * KIB));
            let agent = Agent::default();
            capture.stream_overflow_to(agent.boxed());
            let captured = feed(capture, &input, chunk);
            assert_same(&agent.got(), &input, &format!("chunk {chunk}"));
            assert_eq!(captured.streamed, Some(Streamed::default()), "chunk {chunk}");
            assert!(captured.error.as_deref().unwrap().contains("could not write spill file"));
            assert_accounts(&captured, &input);
            assert!(!path.exists(), "the failed spill file is removed");
        }
    }

    #[test]
    fn bytes_the_stream_cannot_recover_are_marked_where_they_were() {
        let dir = TempDir::new("lostbytes");
        let input = numbered_lines(20_000); // 220 000 bytes
        // Fails at the buffer's first flush (64 KiB), with nothing readable behind it.
        let sink = FailingSink::boxed(3 * KIB, false);
        let mut capture = Capture::with_sink(dir.0.join("x"), sink, limits(KIB, 1 << 30, 512));
        let agent = Agent::default();
        capture.stream_overflow_to(agent.boxed());
        let captured = feed(capture, &input, 4096);
        let streamed = captured.streamed.unwrap();
        assert!(streamed.lost > 0);
        let got = agent.got();
        let text = String::from_utf8(got.clone()).unwrap();
        assert!(text.contains(&format!("{} bytes of the output are lost here", streamed.lost)));
        assert!(got.starts_with(&input[..KIB]));
        // Everything after the gap arrived.
        let resumed = KIB + usize::try_from(streamed.lost).unwrap();
        assert!(got.ends_with(&input[resumed..]), "the bytes after the gap");
    }

    #[test]
    fn no_spill_directory_streams_past_the_memory_cap() {
        let input = text(21, 50 * KIB);
        let mut capture = Capture::new(None, limits(2 * KIB, 1 << 30, KIB));
        let agent = Agent::default();
        capture.stream_overflow_to(agent.boxed());
        let captured = feed(capture, &input, 333);
        assert_same(&agent.got(), &input, "no dir");
        assert!(captured.streamed.is_some());
        // Output that fits in memory never streams.
        let mut capture = Capture::new(None, limits(64 * KIB, 1 << 30, KIB));
        let agent = Agent::default();
        capture.stream_overflow_to(agent.boxed());
        assert_eq!(feed(capture, &input, 333).streamed, None);
        assert!(agent.got().is_empty());
    }

    #[test]
    fn the_disk_cap_is_not_a_failure_and_does_not_stream() {
        let dir = TempDir::new("capnostream");
        let input = text(22, 100 * KIB);
        let mut capture = Capture::new(Some(dir.0.clone()), limits(KIB, 4 * KIB as u64, 512));
        let agent = Agent::default();
        capture.stream_overflow_to(agent.boxed());
        let captured = feed(capture, &input, 4096);
        assert!(captured.dropped_bytes > 0);
        assert_eq!(captured.streamed, None);
        assert!(agent.got().is_empty());
    }

    #[test]
    fn a_failing_flush_at_the_end_streams_from_the_file() {
        let dir = TempDir::new("flushstream");
        let path = dir.0.join("spill.tmp");
        fs::create_dir_all(&dir.0).unwrap();
        /// Writes through to the file; the last flush fails.
        struct FlushFails(File);
        impl Write for FlushFails {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.0.write(buf)
            }
            fn flush(&mut self) -> io::Result<()> {
                Err(io::Error::other("flush failed"))
            }
        }
        let input = text(23, 200 * KIB);
        let sink = Box::new(FlushFails(File::create(&path).unwrap()));
        let mut capture = Capture::with_sink(path, sink, limits(2 * KIB, 1 << 30, KIB));
        let agent = Agent::default();
        capture.stream_overflow_to(agent.boxed());
        let captured = feed(capture, &input, 5000);
        assert_same(&agent.got(), &input, "flush");
        assert!(captured.streamed.is_some());
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn small_output_stays_in_memory_with_the_digest_of_every_byte() {
        let dir = TempDir::new("small");
        let input = text(1, 10 * KIB);
        let captured = feed(Capture::new(Some(dir.0.clone()), Limits::default()), &input, 4096);
        assert_eq!(captured.storage, Storage::Memory(input.clone()));
        assert_eq!(captured.sha256, sha(&input));
        assert_eq!(captured.total_bytes, input.len() as u64);
        assert_eq!(captured.dropped_bytes, 0);
        assert!(captured.tail.is_empty());
        assert_eq!(captured.error, None);
        assert!(!dir.0.exists(), "nothing is created below the memory cap");
    }

    #[test]
    fn empty_output_is_an_empty_memory_capture() {
        let captured = Capture::new(None, Limits::default()).finish();
        assert_eq!(captured.storage, Storage::Memory(Vec::new()));
        assert_eq!(captured.total_bytes, 0);
        assert_eq!(captured.sha256.unwrap()[..2], [0xe3, 0xb0], "the SHA-256 of nothing");
        assert_eq!(captured.read_whole(100).unwrap(), Some(Vec::new()));
    }

    #[test]
    fn crossing_the_memory_cap_spills_every_byte_to_a_private_file() {
        let dir = TempDir::new("spill");
        let spill_dir = dir.0.join("store").join("spill");
        let input = text(2, 50 * KIB + 3);
        let capture = Capture::new(Some(spill_dir.clone()), limits(4 * KIB, 1 << 30, KIB));
        let captured = feed(capture, &input, 1000);
        let Storage::Spilled { path, len } = &captured.storage else {
            panic!("expected a spill file, got {:?}", captured.storage)
        };
        assert_eq!(*len, input.len() as u64);
        assert_eq!(fs::read(path).unwrap(), input);
        assert_eq!(path.parent(), Some(spill_dir.as_path()));
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with(&format!(".capture-{}-", std::process::id())), "{name}");
        assert!(name.ends_with(".tmp"), "{name}");
        #[cfg(unix)]
        {
            assert_eq!(mode(path), 0o600);
            assert_eq!(mode(&spill_dir), 0o700);
            assert_eq!(mode(&dir.0.join("store")), 0o700);
        }
        assert_eq!(captured.dropped_bytes, 0);
        assert!(captured.tail.is_empty());
        assert_eq!(captured.error, None);
        assert_accounts(&captured, &input);
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_open_spill_dir_is_refused_and_never_chmodded() {
        use std::os::unix::fs::PermissionsExt;
        let dir = TempDir::new("open");
        fs::create_dir_all(&dir.0).unwrap();
        fs::set_permissions(&dir.0, fs::Permissions::from_mode(0o1777)).unwrap();
        let input = text(3, 10 * KIB);
        let capture = Capture::new(Some(dir.0.clone()), limits(KIB, 1 << 20, KIB));
        let captured = feed(capture, &input, 700);
        assert!(matches!(captured.storage, Storage::Memory(_)));
        let error = captured.error.as_deref().unwrap();
        assert!(error.contains("writable by group or others (mode 1777)"), "{error}");
        assert_eq!(fs::symlink_metadata(&dir.0).unwrap().permissions().mode() & 0o7777, 0o1777);
        assert_eq!(fs::read_dir(&dir.0).unwrap().count(), 0);
        assert_accounts(&captured, &input);
    }

    #[cfg(unix)]
    #[test]
    fn a_spill_dir_that_is_a_symlink_is_refused() {
        let dir = TempDir::new("link");
        let real = dir.0.join("real");
        crate::fsx::ensure_private_dir(&real).unwrap();
        let link = dir.0.join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let input = text(4, 10 * KIB);
        let captured = feed(Capture::new(Some(link), limits(KIB, 1 << 20, KIB)), &input, 700);
        let error = captured.error.as_deref().unwrap();
        assert!(error.contains("is a symbolic link"), "{error}");
        assert_eq!(fs::read_dir(&real).unwrap().count(), 0);
        assert_accounts(&captured, &input);
    }

    #[test]
    fn disk_cap_keeps_the_first_bytes_on_disk_and_the_last_in_the_tail() {
        let dir = TempDir::new("diskcap");
        let input = text(3, 100 * KIB);
        let capture = Capture::new(Some(dir.0.clone()), limits(KIB, 4 * KIB as u64, 512));
        let captured = feed(capture, &input, 4096);
        let Storage::Spilled { path, len } = &captured.storage else {
            panic!("expected a spill file, got {:?}", captured.storage)
        };
        assert_eq!(*len, 4096);
        assert_eq!(fs::read(path).unwrap(), input[..4096]);
        assert_eq!(captured.tail, input[input.len() - 512..]);
        // Dropped: every byte in neither the file nor the tail (they never overlap).
        assert_eq!(captured.dropped_bytes, (100 * KIB - 4096 - 512) as u64);
        assert_eq!(captured.sha256, sha(&input));
        assert_eq!(captured.error, None);
        assert_accounts(&captured, &input);
    }

    #[test]
    fn output_ending_within_tail_cap_of_the_disk_cap_is_kept_whole_in_the_file() {
        let dir = TempDir::new("justpast");
        let input = text(4, 4 * KIB + 300);
        let capture = Capture::new(Some(dir.0.clone()), limits(KIB, 4 * KIB as u64, 512));
        let captured = feed(capture, &input, 100);
        assert!(
            matches!(captured.storage, Storage::Spilled { len, .. } if len == input.len() as u64)
        );
        assert_eq!(captured.dropped_bytes, 0);
        assert!(captured.tail.is_empty());
        assert_accounts(&captured, &input);
    }

    #[test]
    fn failing_spill_writer_falls_back_to_the_head_in_memory_and_counts_the_rest() {
        let dir = TempDir::new("enospc");
        let path = dir.0.join("spill.tmp");
        let input = text(5, 100 * KIB);
        let sink = FailingSink::boxed(3 * KIB, false);
        let capture = Capture::with_sink(path.clone(), sink, limits(KIB, 1 << 30, 512));
        let captured = feed(capture, &input, 4096);
        assert_eq!(captured.storage, Storage::Memory(input[..KIB].to_vec()));
        assert_eq!(captured.tail, input[input.len() - 512..]);
        assert_eq!(captured.dropped_bytes, (100 * KIB - KIB - 512) as u64);
        let error = captured.error.as_deref().unwrap();
        assert!(error.contains("could not write spill file"), "{error}");
        assert!(error.contains(&path.display().to_string()), "{error}");
        assert_accounts(&captured, &input);
    }

    #[test]
    fn spill_failure_loses_nothing_when_the_tail_ring_covers_the_rest() {
        let dir = TempDir::new("early");
        let input = text(6, 3 * KIB);
        let sink = FailingSink::boxed(KIB + 100, false);
        let capture =
            Capture::with_sink(dir.0.join("spill.tmp"), sink, limits(KIB, 1 << 30, 4 * KIB));
        let captured = feed(capture, &input, 1);
        assert!(captured.error.is_some());
        assert_eq!(captured.storage, Storage::Memory(input.clone()));
        assert_eq!(captured.dropped_bytes, 0);
        assert_accounts(&captured, &input);
    }

    #[test]
    fn failing_flush_at_finish_falls_back_to_memory() {
        let dir = TempDir::new("flush");
        let input = text(7, 20 * KIB);
        let sink = FailingSink::boxed(usize::MAX, true);
        let capture =
            Capture::with_sink(dir.0.join("spill.tmp"), sink, limits(2 * KIB, 1 << 30, KIB));
        let captured = feed(capture, &input, 333);
        assert!(captured.error.as_deref().unwrap().contains("flush failed"));
        assert_eq!(captured.storage, Storage::Memory(input[..2 * KIB].to_vec()));
        assert_eq!(captured.dropped_bytes, (20 * KIB - 2 * KIB - KIB) as u64);
        assert_accounts(&captured, &input);
    }

    #[test]
    fn an_uncreatable_spill_dir_is_recorded_and_the_head_and_tail_kept() {
        let dir = TempDir::new("nodir");
        fs::create_dir_all(&dir.0).unwrap();
        let blocker = dir.0.join("file");
        fs::File::create(&blocker).unwrap();
        let input = text(8, 10 * KIB);
        let capture = Capture::new(Some(blocker.join("spill")), limits(KIB, 1 << 30, KIB));
        let captured = feed(capture, &input, 512);
        let error = captured.error.as_deref().unwrap();
        assert!(error.starts_with("could not create a spill file in"), "{error}");
        assert_eq!(captured.storage.len(), KIB as u64);
        assert_eq!(captured.tail.len(), KIB);
        assert_eq!(captured.dropped_bytes, (8 * KIB) as u64);
        assert_accounts(&captured, &input);
    }

    #[test]
    fn without_a_spill_dir_keeps_the_head_and_tail_in_memory() {
        let input = text(9, 10 * KIB);
        let captured = feed(Capture::new(None, limits(2 * KIB, 1 << 30, KIB)), &input, 700);
        assert_eq!(captured.storage.len(), 2 * KIB as u64);
        assert_eq!(captured.dropped_bytes, (7 * KIB) as u64);
        assert_eq!(captured.error, None);
        assert_accounts(&captured, &input);
    }

    #[test]
    fn zero_tail_cap_counts_every_byte_past_the_head_as_dropped() {
        let input = text(10, 5000);
        let captured = feed(Capture::new(None, limits(1000, 0, 0)), &input, 64);
        assert_eq!(captured.storage.len(), 1000);
        assert_eq!(captured.dropped_bytes, 4000);
        assert!(captured.tail.is_empty());
        assert_accounts(&captured, &input);
    }

    #[test]
    fn a_disk_cap_not_above_the_memory_cap_never_spills() {
        let dir = TempDir::new("nospill");
        let input = text(11, 8 * KIB);
        let capture = Capture::new(Some(dir.0.clone()), limits(2 * KIB, 2 * KIB as u64, KIB));
        let captured = feed(capture, &input, 1000);
        assert!(matches!(captured.storage, Storage::Memory(_)));
        assert!(!dir.0.exists());
        assert_accounts(&captured, &input);
    }

    #[test]
    fn dropping_an_unfinished_capture_removes_its_spill_file() {
        let dir = TempDir::new("drop");
        let mut capture = Capture::new(Some(dir.0.clone()), limits(16, 1 << 20, 16));
        capture.write(&[b'x'; 100]);
        assert_eq!(fs::read_dir(&dir.0).unwrap().count(), 1);
        drop(capture);
        assert_eq!(fs::read_dir(&dir.0).unwrap().count(), 0);
    }

    #[test]
    fn concurrent_captures_in_one_dir_get_distinct_files() {
        let dir = TempDir::new("two");
        let a = feed(Capture::new(Some(dir.0.clone()), limits(16, 1 << 20, 16)), &[b'a'; 100], 10);
        let b = feed(Capture::new(Some(dir.0.clone()), limits(16, 1 << 20, 16)), &[b'b'; 100], 10);
        assert_ne!(a.storage, b.storage);
        assert_eq!(stored(&a), [b'a'; 100]);
        assert_eq!(stored(&b), [b'b'; 100]);
    }

    /// Everything `for_each_chunk` hands out: bytes joined, and the lost pieces.
    fn pieces(captured: &Captured) -> (Vec<Vec<u8>>, Vec<(u64, u64)>) {
        let mut chunks = Vec::new();
        let mut lost = Vec::new();
        captured
            .for_each_chunk(|piece| match piece {
                Piece::Bytes(bytes) => chunks.push(bytes.to_vec()),
                Piece::Lost { bytes, newlines } => lost.push((bytes, newlines)),
            })
            .unwrap();
        (chunks, lost)
    }

    #[test]
    fn read_whole_returns_everything_kept_up_to_the_limit() {
        let dir = TempDir::new("whole");
        let input = text(12, 30 * KIB);
        let in_memory = feed(Capture::new(None, Limits::default()), &input, 4096);
        let spilled =
            feed(Capture::new(Some(dir.0.clone()), limits(KIB, 1 << 30, KIB)), &input, 4096);
        for captured in [&in_memory, &spilled] {
            assert_eq!(captured.read_whole(1 << 20).unwrap(), Some(input.clone()));
            assert_eq!(captured.read_whole(input.len()).unwrap(), Some(input.clone()));
            assert_eq!(captured.read_whole(input.len() - 1).unwrap(), None);
            assert_eq!(captured.head(100).unwrap(), input[..100]);
            assert_eq!(captured.last(100).unwrap(), input[input.len() - 100..]);
        }
    }

    #[test]
    fn read_whole_refuses_an_output_with_dropped_bytes() {
        let input = numbered_lines(1000);
        let captured = feed(Capture::new(None, limits(KIB, 0, 512)), &input, 64 * KIB);
        assert!(captured.dropped_bytes > 0);
        assert_eq!(captured.read_whole(1 << 20).unwrap(), None);
        // The last bytes come from the tail, never from across the gap.
        assert_eq!(captured.last(1 << 20).unwrap(), captured.tail);
    }

    #[test]
    fn chunks_are_the_streams_chunks_and_cover_every_kept_byte() {
        let dir = TempDir::new("chunks-read");
        let input = numbered_lines(300_000); // 3.3 MB: several chunks
        let in_memory = feed(Capture::new(None, limits(8 << 20, 1 << 30, KIB)), &input, 65_536);
        let spilled =
            feed(Capture::new(Some(dir.0.clone()), limits(KIB, 1 << 30, KIB)), &input, 65_536);
        let expected: Vec<Vec<u8>> = stream::chunks(&input).map(<[u8]>::to_vec).collect();
        assert!(expected.len() > 3);
        for captured in [&in_memory, &spilled] {
            let (chunks, lost) = pieces(captured);
            assert_eq!(chunks, expected);
            assert!(lost.is_empty());
        }
    }

    #[test]
    fn dropped_bytes_are_one_lost_piece_with_their_line_count() {
        let dir = TempDir::new("lost");
        let input = numbered_lines(1000); // 11 000 bytes, 1000 line feeds
        let capture = Capture::new(Some(dir.0.clone()), limits(KIB, 4 * KIB as u64, 512));
        let captured = feed(capture, &input, 700);
        let (chunks, lost) = pieces(&captured);
        let dropped = captured.dropped_bytes;
        assert_eq!(dropped, (11_000 - 4096 - 512) as u64);
        let start = 4096;
        let gap = &input[start..start + usize::try_from(dropped).unwrap()];
        assert_eq!(lost, [(dropped, newlines(gap))]);
        assert_eq!(chunks.concat(), [&input[..4096], &input[input.len() - 512..]].concat());
        // Every line feed is somewhere: kept, or counted as lost.
        let kept: u64 = chunks.iter().map(|c| newlines(c)).sum();
        assert_eq!(kept + captured.dropped_newlines, 1000);
    }

    #[test]
    fn reading_rejects_inconsistent_counts() {
        let mut captured = feed(Capture::new(None, Limits::default()), b"abc\n", 4);
        captured.dropped_bytes = 7;
        assert_eq!(captured.read_whole(10).unwrap_err().kind(), io::ErrorKind::InvalidData);
        assert!(captured.for_each_chunk(|_| {}).is_err());
    }

    #[test]
    fn chunk_boundaries_do_not_change_the_result() {
        let dir = TempDir::new("chunks");
        let input = text(14, 100 * KIB);
        type Make = fn(&Path) -> Capture;
        let configs: [(&str, Make); 5] = [
            ("memory", |_| Capture::new(None, Limits::default())),
            ("spill", |d| Capture::new(Some(d.to_owned()), limits(KIB, 1 << 30, 512))),
            ("disk cap", |d| Capture::new(Some(d.to_owned()), limits(KIB, 4 * KIB as u64, 512))),
            ("no dir", |_| Capture::new(None, limits(KIB, 1 << 30, 512))),
            ("enospc", |d| {
                let sink = FailingSink::boxed(3 * KIB, false);
                Capture::with_sink(d.join("failing"), sink, limits(KIB, 1 << 30, 512))
            }),
        ];
        for (name, make) in configs {
            let results: Vec<_> = [1, 7, 64 * KIB]
                .into_iter()
                .map(|chunk| {
                    let captured = feed(make(&dir.0), &input, chunk);
                    assert_accounts(&captured, &input);
                    let reduced = pieces(&captured);
                    (
                        captured.total_bytes,
                        captured.sha256,
                        stored(&captured),
                        captured.dropped_bytes,
                        captured.tail.clone(),
                        captured.error.clone(),
                        reduced,
                    )
                })
                .collect();
            assert_eq!(results[0], results[1], "{name}: 1-byte vs 7-byte chunks");
            assert_eq!(results[0], results[2], "{name}: 1-byte vs 64 KiB chunks");
        }
    }

    #[test]
    fn ring_keeps_the_last_bytes_across_wraps() {
        let input = text(15, 5000);
        for chunk in [1, 3, 99, 100, 101, 250, 5000] {
            let mut ring = Ring::new(100);
            for piece in input.chunks(chunk) {
                ring.push(piece);
            }
            let (first, second) = ring.slices();
            assert_eq!([first, second].concat(), input[4900..], "chunk {chunk}");
        }
    }

    #[test]
    fn sha256_is_the_digest_of_every_byte_written() {
        let input = text(16, 1000);
        let captured = feed(Capture::new(None, Limits::default()), &input, 100);
        assert_eq!(captured.sha256, Some(<[u8; 32]>::from(Sha256::digest(&input))));
    }

    #[test]
    fn a_capture_without_digest_keeps_the_same_bytes_and_takes_no_digest() {
        let dir = TempDir::new("nodigest");
        let input = text(17, 40 * KIB);
        let make = |digest: bool| {
            let capture = Capture::new(Some(dir.0.clone()), limits(KIB, 16 * KIB as u64, 512));
            if digest { capture } else { capture.without_digest() }
        };
        let with = feed(make(true), &input, 999);
        let without = feed(make(false), &input, 999);
        assert_eq!(with.sha256, sha(&input));
        assert_eq!(without.sha256, None);
        assert_accounts(&with, &input);
        assert_eq!(stored(&without), stored(&with));
        assert_eq!(
            (without.total_bytes, without.dropped_bytes, &without.tail, without.dropped_newlines),
            (with.total_bytes, with.dropped_bytes, &with.tail, with.dropped_newlines)
        );
    }

    #[test]
    fn capture_can_move_to_the_pump_thread() {
        fn is_send<T: Send>() {}
        is_send::<Capture>();
        is_send::<Captured>();
    }
}
