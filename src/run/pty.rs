//! The terminal side of the relay: opening and sizing the pseudo-terminal, the output pump
//! (master or pipe → capture → live), the detached thread that writes tj's stdin into the
//! master (and spots Ctrl-Z), the live writer, and the guard that holds tj's own terminal in
//! raw mode.
//!
//! It does not spawn the child (`exec.rs`) or decide when to resize, suspend or resume
//! (`signals.rs` reacts to SIGWINCH, SIGCONT and Ctrl-Z by calling [`Terminal`]).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::ops::ControlFlow;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use nix::sys::termios::{self, LocalFlags, SetArg, SpecialCharacterIndices, Termios};
use nix::unistd;

use super::blocked::IdleWatch;
use super::signals::Event;
use super::{CaptureFn, WinSize};

/// The PTY's master: tj's side of the pseudo-terminal.
pub(super) struct Master(OwnedFd);

impl AsFd for Master {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

impl Master {
    /// Sets the terminal's window size; the kernel then sends SIGWINCH to its foreground
    /// process group.
    #[allow(unsafe_code)]
    fn resize(&self, size: WinSize) -> io::Result<()> {
        let ws = libc::winsize::from(size);
        // SAFETY: TIOCSWINSZ reads one `winsize` through the pointer, which points at one.
        if unsafe { libc::ioctl(self.0.as_raw_fd(), libc::TIOCSWINSZ, &ws) } == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// The largest read of the pump. One buffer is reused for the whole run, so memory stays
/// flat however much the child writes.
const CHUNK: usize = 64 * 1024;

/// The pump's first read size. A PTY hands out at most 4095 bytes a read, so the buffer
/// only grows (doubling, up to [`CHUNK`]) when reads fill it, as a pipe's do (`--no-pty`):
/// zeroing 64 KiB up front cost 16 page faults a run, a tenth of `tj run`'s own.
const FIRST_CHUNK: usize = 4 * 1024;

/// Held for writing while a PTY is opened, and for reading while a relay spawns.
///
/// `openpty(3)` gives the two descriptors without close-on-exec, which is set only after it
/// returns; a child forked in between by another relay of this process (tests run many at
/// once) would keep them, and so keep that PTY open past its own child's exit. Everything
/// else the relay opens is close-on-exec atomically.
pub(super) static SPAWN: RwLock<()> = RwLock::new(());

/// A freshly opened pseudo-terminal: the master stays with tj, the slave goes to the child.
pub(super) struct Pty {
    pub(super) master: Master,
    pub(super) slave: File,
}

/// Opens a PTY of `size` whose line discipline starts with `termios` (the user's settings,
/// when tj's stdin is a terminal), or the kernel's defaults. `openpty(3)`: the master, then
/// the slave by the name the kernel gave it, neither of them becoming tj's controlling
/// terminal.
///
/// `raw_output`: the PTY passes `\n` through untranslated (OPOST off), for when tj's stdout
/// is a terminal that stays cooked and will make its own `\r\n`: two line disciplines
/// translating in a row would turn every newline into `\r\r\n`.
pub(super) fn open(
    size: WinSize,
    termios: Option<&Termios>,
    raw_output: bool,
) -> anyhow::Result<Pty> {
    let ws = libc::winsize::from(size);
    let pair = {
        let _no_fork = SPAWN.write().unwrap_or_else(PoisonError::into_inner);
        // The OS error as people read it (`Too many open files (os error 24)`): the caller
        // says what could not be done.
        let pair = nix::pty::openpty(&ws, None).map_err(io::Error::from)?;
        for fd in [&pair.master, &pair.slave] {
            nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC))
                .map_err(io::Error::from)?;
        }
        pair
    };
    let slave = File::from(pair.slave);
    if let Some(termios) = termios {
        termios::tcsetattr(&slave, SetArg::TCSANOW, termios)
            .context("could not copy the terminal settings to the pseudo-terminal")?;
    }
    if raw_output {
        let mut settings =
            termios::tcgetattr(&slave).context("could not read the pseudo-terminal's settings")?;
        settings.output_flags.remove(termios::OutputFlags::OPOST);
        termios::tcsetattr(&slave, SetArg::TCSANOW, &settings)
            .context("could not set the pseudo-terminal's output processing")?;
    }
    Ok(Pty { master: Master(pair.master), slave })
}

/// A descriptor of our own for the master, for the pump to poll and read and for the stdin
/// thread to write.
pub(super) fn dup_master(master: &Master) -> io::Result<OwnedFd> {
    master.0.try_clone()
}

/// The window size of the terminal on `fd`, or `None` if it is not a terminal or reports no
/// size (0×0, as some CI runners and serial consoles do).
#[allow(unsafe_code)]
pub(super) fn window_size(fd: BorrowedFd<'_>) -> Option<WinSize> {
    let mut ws = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which points at one.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) };
    (rc == 0 && ws.ws_row > 0 && ws.ws_col > 0).then_some(WinSize {
        cols: ws.ws_col,
        rows: ws.ws_row,
        pixel_width: ws.ws_xpixel,
        pixel_height: ws.ws_ypixel,
    })
}

impl From<WinSize> for libc::winsize {
    fn from(size: WinSize) -> libc::winsize {
        libc::winsize {
            ws_row: size.rows,
            ws_col: size.cols,
            ws_xpixel: size.pixel_width,
            ws_ypixel: size.pixel_height,
        }
    }
}

/// Returns `Some(true)` if and only if tj's process group is the foreground group of the
/// terminal on `fd`; `None` when that terminal is not tj's controlling terminal.
fn is_foreground(fd: BorrowedFd<'_>) -> Option<bool> {
    unistd::tcgetpgrp(fd).ok().map(|pgrp| pgrp == unistd::getpgrp())
}

/// tj's terminal in raw mode while active, so keystrokes (Ctrl-C included) reach the PTY as
/// bytes and the PTY's own line discipline interprets them for the child.
///
/// The saved settings come back in [`RawMode::leave`], which `Drop` calls: on every return
/// path of `run`, while unwinding from a panic, and before tj suspends itself. The signals
/// that would end tj (INT, TERM, HUP, QUIT) are caught while a child runs, so they end the
/// child instead and tj returns through this drop.
pub(super) struct RawMode {
    fd: OwnedFd,
    saved: Termios,
    /// Shared with the stdin thread, which intercepts Ctrl-Z only in raw mode.
    active: Arc<AtomicBool>,
    /// What was typed before raw mode goes here, read while the terminal is still cooked.
    typing: Arc<Typing>,
}

impl RawMode {
    /// Reads the settings of the terminal on `fd`; nothing changes until [`RawMode::enter`].
    fn new(fd: OwnedFd, typing: Arc<Typing>) -> nix::Result<RawMode> {
        let saved = termios::tcgetattr(&fd)?;
        Ok(RawMode { fd, saved, active: Arc::new(AtomicBool::new(false)), typing })
    }

    /// Switches to raw mode, saving the current settings first.
    ///
    /// Input already typed on a cooked terminal is read first, still cooked, and kept for
    /// the stdin thread ([`Typing`]): in raw mode the line discipline would hand over an
    /// end of file typed ahead (Ctrl-D, or what `script` writes when its own stdin ends) as
    /// a NUL byte, and tj would type that NUL into the command.
    fn enter(&mut self) -> nix::Result<()> {
        if self.is_active() {
            return Ok(());
        }
        // Read them afresh: the user may have changed them while tj was stopped.
        self.saved = termios::tcgetattr(&self.fd)?;
        let mut raw = self.saved.clone();
        termios::cfmakeraw(&mut raw);
        let (typed_ahead, set) = {
            let mut ahead = self.typing.ahead.lock().unwrap_or_else(PoisonError::into_inner);
            let before = ahead.len();
            if self.saved.local_flags.contains(LocalFlags::ICANON) {
                self.typing.read_cooked(&mut ahead);
            }
            // Under the lock: the stdin thread reads nothing more until the terminal is raw.
            let set = termios::tcsetattr(&self.fd, SetArg::TCSADRAIN, &raw);
            (ahead.len() > before, set)
        };
        if typed_ahead {
            self.typing.wake();
        }
        set?;
        self.active.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn is_active(&self) -> bool {
        self.active.load(Ordering::SeqCst)
    }

    /// Puts the saved settings back, if raw mode is on.
    fn leave(&mut self) {
        if !self.active.swap(false, Ordering::SeqCst) {
            return;
        }
        // With SIGTTOU blocked, tcsetattr succeeds even if tj was moved to the background
        // meanwhile, instead of stopping tj with the terminal still raw.
        let mut ttou = SigSet::empty();
        ttou.add(Signal::SIGTTOU);
        let mut old = SigSet::empty();
        let blocked = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&ttou), Some(&mut old)).is_ok();
        let _ = termios::tcsetattr(&self.fd, SetArg::TCSADRAIN, &self.saved);
        if blocked {
            let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
        }
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        self.leave();
    }
}

/// tj's side of the terminal while a child runs: the PTY master (for resizing), the window
/// size policy, and, when tj's stdin is a terminal and the child's stdin is the PTY, raw mode
/// and the stdin thread.
pub(super) struct Terminal {
    master: Option<Master>,
    fixed: Option<WinSize>,
    /// tj's stdin, if it is a terminal.
    stdin: Option<OwnedFd>,
    /// The child's stdin is the PTY: keystrokes are forwarded (in raw mode when possible).
    wants_keys: bool,
    /// tj's terminal settings and raw mode, when keystrokes are forwarded.
    raw: Option<RawMode>,
    /// The stdin thread's side of tj's terminal, when keystrokes are forwarded.
    typing: Option<Arc<Typing>>,
    /// What the stdin thread needs, until it is started.
    keys: Option<Keys>,
    forwarding: bool,
    /// tj was in the background at the last look, with keystrokes still to forward or raw
    /// mode to take again once in the foreground.
    background: bool,
    warnings: Vec<String>,
}

impl Terminal {
    /// `stdin` is a duplicate of tj's stdin if it is a terminal; `keys` says whether the
    /// child's stdin will be the PTY (so keystrokes are forwarded and raw mode is wanted).
    pub(super) fn new(fixed: Option<WinSize>, stdin: Option<OwnedFd>, keys: bool) -> Terminal {
        let mut warnings = Vec::new();
        let typing = match stdin.as_ref().filter(|_| keys).map(|fd| Typing::new(fd.as_fd())) {
            Some(Ok(typing)) => Some(Arc::new(typing)),
            Some(Err(err)) => {
                warnings.push(format!("could not forward keystrokes: {err}"));
                None
            }
            None => None,
        };
        let raw = match stdin.as_ref().zip(typing.as_ref()).map(|(fd, t)| (fd.try_clone(), t)) {
            Some((Ok(fd), typing)) => match RawMode::new(fd, Arc::clone(typing)) {
                Ok(raw) => Some(raw),
                Err(err) => {
                    warnings.push(format!("could not read the terminal settings: {err}"));
                    None
                }
            },
            Some((Err(err), _)) => {
                warnings.push(format!("could not duplicate stdin: {err}"));
                None
            }
            None => None,
        };
        let wants_keys = keys && typing.is_some();
        Terminal {
            master: None,
            fixed,
            stdin,
            wants_keys,
            raw,
            typing,
            keys: None,
            forwarding: false,
            background: false,
            warnings,
        }
    }

    /// The user's terminal settings, for the PTY to start with; `None` (the kernel's sane
    /// defaults) when tj starts in the background, where the terminal's current settings are
    /// those of whatever runs in the foreground, typically the shell's line editor (no
    /// ICANON, no ECHO, no ICRNL: Enter would never end a line for the child).
    pub(super) fn user_termios(&self) -> Option<&Termios> {
        let background =
            self.stdin.as_ref().and_then(|fd| is_foreground(fd.as_fd())) == Some(false);
        self.raw.as_ref().filter(|_| !background).map(|raw| &raw.saved)
    }

    /// Enters raw mode before the child is spawned, when tj is in the foreground, so that
    /// output the child writes at once never meets a cooked terminal (which would turn the
    /// PTY's `\r\n` into `\r\r\n`). [`Terminal::attach`] then finds it already raw.
    pub(super) fn enter_raw_early(&mut self) {
        let foreground = self.stdin.as_ref().and_then(|fd| is_foreground(fd.as_fd()));
        if foreground == Some(true)
            && let Some(raw) = &mut self.raw
            && let Err(err) = raw.enter()
        {
            self.warn(format!("could not put the terminal in raw mode: {err}"));
        }
    }

    /// Returns true if and only if keystrokes are to be forwarded to the PTY.
    pub(super) fn wants_keys(&self) -> bool {
        self.wants_keys
    }

    /// The window size the PTY should have now: the fixed one, else that of tj's stdout if
    /// it is a terminal, else that of its stdin, else 80×24.
    pub(super) fn size(&self) -> WinSize {
        self.fixed
            .or_else(|| window_size(io::stdout().as_fd()))
            .or_else(|| self.stdin.as_ref().and_then(|fd| window_size(fd.as_fd())))
            .unwrap_or_default()
    }

    /// Hands over the master once the child runs, and, when [`Terminal::wants_keys`], what
    /// the stdin thread needs.
    pub(super) fn attach(&mut self, master: Option<Master>, keys: Option<Keys>) {
        if keys.is_none() {
            // The child's stdin is not the PTY after all (no PTY could be opened): tj's
            // terminal is the child's, and stays as it is.
            self.wants_keys = false;
            self.raw = None;
        }
        self.master = master;
        self.keys = keys;
        self.resume();
    }

    /// Copies the current window size to the PTY (SIGWINCH). The kernel then sends SIGWINCH
    /// to the PTY's foreground process group.
    pub(super) fn resize(&mut self) {
        if let Some(master) = &self.master
            && let Err(err) = master.resize(self.size())
        {
            self.warn(format!("could not resize the pseudo-terminal: {err}"));
        }
    }

    /// Returns true if and only if tj was in the background at the last look and has
    /// keystrokes to forward, or raw mode to take, once in the foreground. `fg` sends no
    /// SIGCONT to a job that is running, so the event loop looks again now and then
    /// ([`Terminal::resume`]).
    pub(super) fn awaits_foreground(&self) -> bool {
        self.background
    }

    /// Returns true if and only if tj's terminal is in raw mode now.
    pub(super) fn is_raw(&self) -> bool {
        self.raw.as_ref().is_some_and(RawMode::is_active)
    }

    /// Gives the terminal back as the user had it (tj is about to stop).
    pub(super) fn suspend(&mut self) {
        if let Some(raw) = &mut self.raw {
            raw.leave();
        }
    }

    /// Takes the terminal (again): raw mode and the stdin thread only when tj is in the
    /// foreground. In the background, reading the terminal would stop tj with SIGTTIN and
    /// changing its mode would disturb the shell, so both wait until `fg` (SIGCONT for a
    /// stopped job; for a running one, see [`Terminal::awaits_foreground`]). A terminal that
    /// is not tj's controlling one has no foreground to wait for: its keystrokes are
    /// forwarded without raw mode.
    pub(super) fn resume(&mut self) {
        let foreground = self.stdin.as_ref().and_then(|fd| is_foreground(fd.as_fd()));
        // After `bg`, the stdin thread runs on (reading nothing until `fg`), but raw mode
        // must be taken again, and `fg` of a running job sends no SIGCONT.
        self.background = foreground == Some(false) && (self.keys.is_some() || self.raw.is_some());
        if foreground == Some(true)
            && let Some(raw) = &mut self.raw
            && let Err(err) = raw.enter()
        {
            self.warn(format!("could not put the terminal in raw mode: {err}"));
        }
        if foreground != Some(false) && !self.forwarding {
            self.start_forwarding();
        }
        self.resize();
    }

    fn start_forwarding(&mut self) {
        let Some(keys) = self.keys.take() else { return };
        let Some(typing) = self.typing.clone() else { return };
        let raw = self.raw.as_ref().map_or_else(Arc::default, |raw| Arc::clone(&raw.active));
        let started = thread::Builder::new().name("tj-stdin".into()).spawn(move || {
            super::signals::block_stop_signal();
            forward_stdin(&typing, &keys, &raw);
        });
        match started {
            Ok(_detached) => self.forwarding = true,
            Err(err) => self.warn(format!("could not forward keystrokes: {err}")),
        }
    }

    fn warn(&mut self, msg: String) {
        if !self.warnings.contains(&msg) {
            self.warnings.push(msg);
        }
    }

    /// The problems met so far, each once.
    pub(super) fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

/// What the stdin thread works with.
pub(super) struct Keys {
    /// A duplicate of the master, to write keystrokes into.
    pub(super) master: OwnedFd,
    /// Hangs up when the child has exited.
    pub(super) stop: OwnedFd,
    /// Where Ctrl-Z goes ([`Event::Suspend`]).
    pub(super) events: Sender<Event>,
}

/// What tj read from its terminal, in order.
#[derive(Debug, PartialEq, Eq)]
enum Typed {
    /// Bytes, to be written into the PTY as they are.
    Bytes(Vec<u8>),
    /// An end of file: a read of the cooked terminal returned nothing (Ctrl-D on an empty
    /// line). Forwarded as the child's own end-of-file character ([`eof_char`]).
    Eof,
}

/// tj's terminal as the stdin thread reads it, shared with [`RawMode`].
///
/// Every read of the terminal happens under the lock of `ahead`: the stdin thread's, one at
/// a time, and [`RawMode::enter`]'s, which reads what was typed while the terminal was still
/// cooked and switches it to raw before letting go. Whatever that read is kept in `ahead`
/// and written into the PTY before anything read after it, so the child gets exactly the
/// bytes tj's stdin delivered, in order, and an end of file as an end of file.
pub(super) struct Typing {
    /// Read from the cooked terminal just before raw mode, not yet written into the PTY.
    ahead: Mutex<Vec<Typed>>,
    /// tj's terminal, opened again by name with O_NONBLOCK (an open file of its own, so the
    /// flag touches no one else's), so that a read under the lock never waits for input
    /// another reader took; `nonblocking` false: a duplicate of stdin, where that failed.
    reader: OwnedFd,
    nonblocking: bool,
    /// A pipe that tells the stdin thread there is input in `ahead` (it may be waiting for
    /// the terminal, which has nothing more to say).
    wake_rx: OwnedFd,
    wake_tx: OwnedFd,
}

impl Typing {
    fn new(stdin: BorrowedFd<'_>) -> io::Result<Typing> {
        let reopened = unistd::ttyname(stdin).map_err(io::Error::from).and_then(|name| {
            OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
                .open(name)
                .map(OwnedFd::from)
        });
        let (reader, nonblocking) = match reopened {
            Ok(fd) => (fd, true),
            Err(_) => (stdin.try_clone_to_owned()?, false),
        };
        let (wake_rx, wake_tx) = io::pipe()?;
        Ok(Typing {
            ahead: Mutex::new(Vec::new()),
            reader,
            nonblocking,
            wake_rx: wake_rx.into(),
            wake_tx: wake_tx.into(),
        })
    }

    /// Reads what the cooked terminal has ready (whole lines and ends of file) into `ahead`,
    /// without waiting. Only with a non-blocking reader: a blocking one could wait for ever
    /// on the caller's thread if another process took the line between poll and read.
    fn read_cooked(&self, ahead: &mut Vec<Typed>) {
        if !self.nonblocking {
            return;
        }
        let mut buf = [0u8; 4096];
        // Bounded: a terminal flooded with lines must not hold tj here.
        for _ in 0..256 {
            let mut fds = [PollFd::new(self.reader.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::ZERO) {
                Ok(1) if fds[0].revents() == Some(PollFlags::POLLIN) => {}
                Err(Errno::EINTR) => continue,
                // Nothing ready, or the terminal hung up: nothing to keep.
                _ => return,
            }
            match unistd::read(&self.reader, &mut buf) {
                Ok(0) => ahead.push(Typed::Eof),
                Ok(n) => ahead.push(Typed::Bytes(buf.get(..n).unwrap_or_default().to_vec())),
                Err(Errno::EINTR) => {}
                Err(_) => return,
            }
        }
    }

    /// Tells the stdin thread to look at `ahead`.
    fn wake(&self) {
        let _ = unistd::write(&self.wake_tx, &[1]);
    }
}

/// The body of the detached stdin thread, the only writer into the master: copies tj's stdin
/// into it until the child exits (`stop` hangs up), stdin hangs up, or the master refuses.
/// An end of file on a cooked terminal (Ctrl-D on an empty line) is forwarded as the
/// child's end-of-file character ([`eof_char`]); nothing is written that stdin did not
/// deliver.
///
/// Detached because a write into a PTY whose reader is a stopped or busy descendant may
/// block for ever; poll-gated so that after the child exits no keystroke meant for the next
/// reader of the terminal is taken.
///
/// In raw mode, the suspend character (Ctrl-Z) is taken out when the PTY's line discipline
/// would turn it into SIGTSTP, and reported as [`Event::Suspend`]: tj does the job control
/// itself (see `signals::suspend_with_child`).
///
/// It never reads the terminal while tj is in the background: SIGTTIN is blocked on it, and
/// what is typed then is left to the foreground job (the shell, after `bg`). A read from the
/// background would otherwise stop all of tj, and with it the relay of a command that
/// never reads its input.
fn forward_stdin(typing: &Typing, keys: &Keys, raw: &AtomicBool) {
    let Keys { master, stop, events } = keys;
    let mut ttin = nix::sys::signal::SigSet::empty();
    ttin.add(nix::sys::signal::Signal::SIGTTIN);
    let _ = ttin.thread_block();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let mut fds = [
            PollFd::new(typing.reader.as_fd(), PollFlags::POLLIN),
            PollFd::new(stop.as_fd(), PollFlags::POLLIN),
            PollFd::new(typing.wake_rx.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(Errno::EINTR) => continue,
            Err(_) => return,
        }
        if has_events(&fds[1]) {
            return;
        }
        if has_events(&fds[2]) {
            let _ = unistd::read(&typing.wake_rx, &mut [0u8; 64]);
        }
        let readable = has_events(&fds[0]);
        let hung_up =
            fds[0].revents().is_some_and(|r| r.intersects(PollFlags::POLLHUP | PollFlags::POLLERR));
        if readable && !hung_up && in_background(typing.reader.as_fd()) {
            // tj was sent to the background (Ctrl-Z, then `bg`): what is typed now is the
            // shell's. Look again shortly, without reading, until `fg`.
            thread::sleep(BACKGROUND_LOOK);
            continue;
        }
        let (ahead, read) = {
            let mut ahead = typing.ahead.lock().unwrap_or_else(PoisonError::into_inner);
            // Read now, under the lock: what `RawMode::enter` read before is in `ahead`, and
            // goes first. Only when poll said so, for a blocking reader's sake.
            let read = readable.then(|| unistd::read(&typing.reader, &mut buf));
            (std::mem::take(&mut *ahead), read)
        };
        if write_ahead(master.as_fd(), ahead).is_err() {
            return;
        }
        let n = match read {
            None | Some(Err(Errno::EINTR | Errno::EAGAIN)) => continue,
            // Sent to the background between the look above and the read (SIGTTIN is
            // blocked on this thread, so the read fails instead of stopping tj).
            Some(Err(Errno::EIO)) if in_background(typing.reader.as_fd()) => {
                thread::sleep(BACKGROUND_LOOK);
                continue;
            }
            Some(Err(_)) => return,
            // The terminal hung up (a raw terminal returns nothing otherwise).
            Some(Ok(0)) if hung_up => return,
            Some(Ok(0)) => {
                if write_eof(master.as_fd()).is_err() {
                    return;
                }
                continue;
            }
            Some(Ok(n)) => n,
        };
        let typed = buf.get(..n).unwrap_or_default();
        if write_typed(master.as_fd(), typed, raw.load(Ordering::SeqCst), events).is_err() {
            return;
        }
    }
}

/// Writes into the PTY what was typed before the keys were forwarded ([`Typing::ahead`]),
/// an end of file as the child's own VEOF.
fn write_ahead(master: BorrowedFd<'_>, ahead: Vec<Typed>) -> io::Result<()> {
    for typed in ahead {
        match typed {
            Typed::Bytes(bytes) => write_all_fd(master, &bytes)?,
            Typed::Eof => write_eof(master)?,
        }
    }
    Ok(())
}

/// Writes `typed` into the PTY; in raw mode, each suspend character the PTY's line
/// discipline would turn into SIGTSTP is taken out and sent as [`Event::Suspend`] instead.
/// Fails when the PTY or the relay is gone.
fn write_typed(
    master: BorrowedFd<'_>,
    typed: &[u8],
    raw: bool,
    events: &Sender<Event>,
) -> Result<(), ()> {
    let mut rest = typed;
    let suspend = if raw { suspend_char(master) } else { None };
    while let Some(at) = suspend.and_then(|c| rest.iter().position(|&b| b == c)) {
        let (before, after) = rest.split_at(at);
        write_all_fd(master, before).map_err(drop)?;
        events.send(Event::Suspend).map_err(drop)?;
        rest = after.get(1..).unwrap_or_default();
    }
    write_all_fd(master, rest).map_err(drop)
}

/// How often the stdin thread looks whether tj is back in the foreground while input waits
/// for another job.
const BACKGROUND_LOOK: std::time::Duration = std::time::Duration::from_millis(50);

/// Returns true if and only if `fd` is tj's controlling terminal and tj is in its background.
fn in_background(fd: BorrowedFd<'_>) -> bool {
    is_foreground(fd) == Some(false)
}

/// `c` unless it is a disabled control character: _POSIX_VDISABLE is 0 on Linux and 0xff
/// on the BSDs.
fn enabled(c: u8) -> Option<u8> {
    (c != 0 && c != 0xff).then_some(c)
}

/// The PTY's suspend character, if its line discipline would turn it into SIGTSTP now (the
/// child may have switched ISIG off, as editors do; then the byte is the child's to read).
/// Termios calls on the master act on the slave's settings.
fn suspend_char(master: BorrowedFd<'_>) -> Option<u8> {
    let settings = termios::tcgetattr(master).ok()?;
    if !settings.local_flags.contains(LocalFlags::ISIG) {
        return None;
    }
    enabled(settings.control_chars[SpecialCharacterIndices::VSUSP as usize])
}

/// The PTY's end-of-file character, if its line discipline would read it as an end of file
/// now: in canonical mode, and set. A child reading key by key (raw or cbreak mode) has no
/// end of file to be told; it gets nothing, as it would from a terminal.
fn eof_char(master: BorrowedFd<'_>) -> Option<u8> {
    let settings = termios::tcgetattr(master).ok()?;
    if !settings.local_flags.contains(LocalFlags::ICANON) {
        return None;
    }
    enabled(settings.control_chars[SpecialCharacterIndices::VEOF as usize])
}

/// Forwards an end of file typed on tj's terminal: the PTY's own end-of-file character, or
/// nothing ([`eof_char`]).
fn write_eof(master: BorrowedFd<'_>) -> io::Result<()> {
    match eof_char(master) {
        Some(c) => write_all_fd(master, &[c]),
        None => Ok(()),
    }
}

pub(super) fn has_events(fd: &PollFd<'_>) -> bool {
    fd.revents().is_some_and(|events| !events.is_empty())
}

/// Makes reads of `fd` non-blocking, for [`Flow::reads_on`]; false if that failed (the
/// pump then waits before every read). The flag is the open file's: the PTY master's
/// other users (the stdin thread's writes, which wait with poll when the PTY is full) share
/// it, and the child's side, the slave or the pipe's write end, is another open file.
fn set_nonblocking(fd: BorrowedFd<'_>) -> bool {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    fcntl(fd, FcntlArg::F_GETFL).is_ok_and(|flags| {
        let flags = OFlag::from_bits_truncate(flags);
        flags.contains(OFlag::O_NONBLOCK)
            || fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).is_ok()
    })
}

/// Waits until `fd` accepts a write (or reports an error, which the next write returns).
fn wait_writable(fd: BorrowedFd<'_>) -> io::Result<()> {
    loop {
        let mut fds = [PollFd::new(fd, PollFlags::POLLOUT)];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => return Ok(()),
            Err(Errno::EINTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
}

/// One `write(2)`, retried on EINTR, waiting with poll while a non-blocking `fd` is full.
fn write_fd(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
    loop {
        match unistd::write(fd, buf) {
            Ok(n) => return Ok(n),
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN) => wait_writable(fd)?,
            Err(err) => return Err(err.into()),
        }
    }
}

fn write_all_fd(fd: BorrowedFd<'_>, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        match write_fd(fd, buf)? {
            0 => return Err(io::ErrorKind::WriteZero.into()),
            n => buf = buf.get(n..).unwrap_or_default(),
        }
    }
    Ok(())
}

/// A live writer on a file descriptor, normally tj's stdout: each write goes straight to the
/// descriptor (no buffering, so output is as prompt as the child's), and a non-blocking
/// descriptor that is full is waited on with poll, never given up on.
#[derive(Debug)]
pub struct LiveFd {
    fd: OwnedFd,
}

impl LiveFd {
    /// Writes to a duplicate of tj's stdout (descriptor 1; the duplicate shares its file
    /// status, non-blocking or not).
    pub fn stdout() -> io::Result<LiveFd> {
        Ok(LiveFd { fd: io::stdout().as_fd().try_clone_to_owned()? })
    }

    /// Writes to `fd`.
    pub fn new(fd: OwnedFd) -> LiveFd {
        LiveFd { fd }
    }
}

impl Write for LiveFd {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        write_fd(self.fd.as_fd(), buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What the pump learned, handed back when it ends.
#[derive(Debug, Default)]
pub(super) struct PumpReport {
    /// The drain cap, not EOF, ended the read.
    pub(super) held_open: bool,
    /// Why live forwarding stopped, if it did.
    pub(super) live_lost: Option<String>,
    /// The command's output has nowhere to go any more (the live writer failed, or the
    /// watched stdout's reader went away), and the command was told: see [`Pump::gone`].
    pub(super) reader_gone: bool,
    /// Through a PTY, what went, until the command is hung up on for it (then `live_lost`
    /// says so).
    pub(super) gone: Option<String>,
    /// Through a PTY, the bytes the command wrote since its output lost its reader.
    pub(super) since_gone: usize,
    /// The hang-up was asked for ([`Event::ReaderGone`]): `live_lost` says so, which holds
    /// only if the command was still there to get it.
    pub(super) hang_up_asked: bool,
    pub(super) warnings: Vec<String>,
}

/// Through a PTY, how many bytes the command may write after its output lost its reader
/// before tj hangs up on it ([`Pump::gone`]): what a pipe holds on Linux. Without tj, a
/// command's writes of that much could all have gone into the pipe before its reader left
/// (`cat` of a 50 KB file into `| head` ends with 0), and the PTY and tj's relay hold its
/// output back by about as much, so that bytes written before the reader left reach tj
/// after. The echo of a key typed meanwhile comes nowhere near it.
const HANG_UP_AFTER: usize = 64 * 1024;

/// `chunk` with a `\r` before every `\n`, into `out`: what a line discipline with OPOST and
/// ONLCR (the kernel's defaults) writes for it.
fn onlcr(chunk: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut from = 0;
    for at in memchr::memchr_iter(b'\n', chunk) {
        out.extend_from_slice(&chunk[from..at]);
        out.extend_from_slice(b"\r\n");
        from = at + 1;
    }
    out.extend_from_slice(&chunk[from..]);
}

/// The output pump: reads the child's output (PTY master or pipe) and hands each chunk to
/// the capture, then to the live writer.
pub(super) struct Pump {
    /// The master, or the read end of the output pipe.
    pub(super) source: OwnedFd,
    /// Hangs up when the child has exited: the pump then drains under the caps.
    pub(super) exited: OwnedFd,
    pub(super) live: Option<Box<dyn Write + Send>>,
    pub(super) capture: Option<CaptureFn>,
    /// When the PTY leaves `\n` untranslated for a capture that must read as translated
    /// ([`super::Spec::translate_in_capture`]): scratch space for each chunk with a `\r`
    /// before every `\n`, as ONLCR would have written it.
    pub(super) onlcr: Option<Vec<u8>>,
    pub(super) drain_idle: Duration,
    pub(super) drain_total: Duration,
    /// The blocked-on-input watchdog's view of the output, when it is on: told of every
    /// chunk, and reporting silences while the child runs.
    pub(super) idle: Option<IdleWatch>,
    /// Where the pump asks for the command to be hung up on ([`Event::ReaderGone`]): `Some`
    /// exactly when `source` is a PTY master and a reader can go away (see [`Pump::gone`]).
    pub(super) events: Option<Sender<Event>>,
    /// tj's stdout, watched for its reader going away ([`super::RelayIo::reader`]) until it
    /// does.
    pub(super) reader: Option<OwnedFd>,
}

impl Pump {
    /// Runs until EOF (EIO on a master whose slave side is all closed), or, once the child
    /// has exited, until `drain_idle` passes without data or `drain_total` passes in all.
    /// While the child runs, the only timeout is the idle watch's next check.
    pub(super) fn run(self) -> PumpReport {
        let mut flow = Flow::new(self);
        loop {
            if flow.reads_on() {
                if flow.step(true, false).is_break() {
                    break;
                }
                continue;
            }
            let timeout = flow.timeout();
            // On the stack (a poll per chunk): the output, then those of the exit pipe and
            // the reader that are watched, the rest unused.
            let source = PollFd::new(flow.pump.source.as_fd(), PollFlags::POLLIN);
            let mut fds = [source.clone(), source.clone(), source];
            let mut watched = 1;
            let mut exit_at = None;
            let mut reader_at = None;
            if flow.watches_exit() {
                fds[watched] = PollFd::new(flow.pump.exited.as_fd(), PollFlags::POLLIN);
                exit_at = Some(watched);
                watched += 1;
            }
            // The reader's side: only its going away (POLLERR, POLLHUP) is of interest.
            if let Some(reader) = flow.reader() {
                fds[watched] = PollFd::new(reader, PollFlags::empty());
                reader_at = Some(watched);
                watched += 1;
            }
            let fds = &mut fds[..watched];
            let has = |fds: &[PollFd<'_>], at: Option<usize>| {
                at.and_then(|at| fds.get(at)).is_some_and(has_events)
            };
            let woke = match poll(fds, timeout.map_or(PollTimeout::NONE, poll_timeout)) {
                Ok(_) => (has(fds, Some(0)), has(fds, exit_at), has(fds, reader_at)),
                Err(Errno::EINTR) => continue,
                Err(err) => {
                    flow.fail(&err);
                    break;
                }
            };
            if woke.2 {
                flow.reader_left();
            }
            if flow.step(woke.0, woke.1).is_break() {
                break;
            }
        }
        flow.finish()
    }
}

/// The pump as a loop of steps that whoever waits for its descriptors drives: its own
/// thread ([`Pump::run`]), or the relay's thread waiting for signals too (issue 13: a run
/// in agent mode starts no thread).
pub(super) struct Flow {
    pump: Pump,
    buf: Vec<u8>,
    report: PumpReport,
    /// Once the child has exited: when the drain ends at the latest.
    deadline: Option<Instant>,
    /// In the drain: when it ends unless output comes before.
    quiet_until: Option<Instant>,
    /// The output is non-blocking, so that it can be read again without a wait first
    /// ([`Flow::reads_on`]).
    nonblocking: bool,
    /// The last read returned data.
    flowing: bool,
    /// Reads since the last wait.
    unwaited: u32,
}

/// While the output keeps coming, how many reads the pump makes in a row before it waits
/// again ([`Flow::reads_on`]): each wait also looks at the exit pipe, tj's reader and, on
/// the relay's thread, the signals, which are thus seen after at most this many reads
/// (a PTY hands out at most 4095 bytes a read).
const READS_UNWAITED: u32 = 64;

impl Flow {
    pub(super) fn new(pump: Pump) -> Flow {
        let nonblocking = set_nonblocking(pump.source.as_fd());
        Flow {
            pump,
            buf: vec![0u8; FIRST_CHUNK],
            report: PumpReport::default(),
            deadline: None,
            quiet_until: None,
            nonblocking,
            flowing: false,
            unwaited: 0,
        }
    }

    /// Whether to read the output again without waiting for it (and for whatever else the
    /// wait watches) first, as [`Flow::step`] with `readable`: while reads return data, up
    /// to [`READS_UNWAITED`] in a row. A steady stream then costs a `read` a chunk instead of
    /// a `poll` and a `read` (issue 13: `tj run -- cat` of 200 MB, 7% less CPU). The read
    /// that finds nothing costs what the `poll` would have, once a burst.
    pub(super) fn reads_on(&mut self) -> bool {
        if self.flowing && self.unwaited < READS_UNWAITED {
            self.unwaited += 1;
            true
        } else {
            self.unwaited = 0;
            false
        }
    }

    /// The output: poll it for reading.
    pub(super) fn source(&self) -> BorrowedFd<'_> {
        self.pump.source.as_fd()
    }

    /// The exit pipe, while the child runs ([`Flow::watches_exit`]): poll it for reading,
    /// it hangs up at the exit.
    pub(super) fn exited(&self) -> BorrowedFd<'_> {
        self.pump.exited.as_fd()
    }

    /// tj's stdout, while its reader is there: poll it for nothing, its going away shows as
    /// POLLERR or POLLHUP ([`Flow::reader_left`]).
    pub(super) fn reader(&self) -> Option<BorrowedFd<'_>> {
        self.pump.reader.as_ref().map(AsFd::as_fd)
    }

    /// The reader of tj's stdout went away: the descriptor is no longer watched, and the
    /// command is told (see [`Pump::gone`]): through a pipe at once, by the next
    /// [`Flow::step`]; through a PTY once it has written [`HANG_UP_AFTER`] bytes since.
    pub(super) fn reader_left(&mut self) {
        if self.pump.reader.take().is_some() && !self.report.reader_gone {
            self.pump.gone("the reader of stdout went away".to_owned(), true, &mut self.report);
        }
    }

    /// Whether the exit pipe is to be polled: until it has hung up.
    pub(super) fn watches_exit(&self) -> bool {
        self.deadline.is_none()
    }

    /// How long to wait for the descriptors before the next [`Flow::step`]; `None` for ever.
    pub(super) fn timeout(&self) -> Option<Duration> {
        match (self.deadline, self.quiet_until) {
            (Some(deadline), quiet) => {
                let end = quiet.map_or(deadline, |quiet| quiet.min(deadline));
                Some(end.saturating_duration_since(Instant::now()))
            }
            (None, _) => self.pump.idle.as_ref().and_then(IdleWatch::until_check),
        }
    }

    /// One step after a wait: `readable` if the output has data (or hung up), `exited` if
    /// the exit pipe hung up. Neither, or a wait cut short by something else, is harmless:
    /// what is due is judged by the clock. Breaks when the pump is done.
    pub(super) fn step(&mut self, readable: bool, exited: bool) -> ControlFlow<()> {
        if self.report.reader_gone && self.pump.events.is_none() {
            // Through a pipe: closing it tells the command (see `Pump::gone`).
            return ControlFlow::Break(());
        }
        if exited && self.deadline.is_none() {
            let now = Instant::now();
            self.deadline = Some(now + self.pump.drain_total);
            self.quiet_until = Some(now + self.pump.drain_idle);
        }
        // The clock only in the drain: while the child runs, a read costs no more than it.
        let drain_now = self.deadline.map(|deadline| (deadline, Instant::now()));
        if let Some((deadline, now)) = drain_now
            && (now >= deadline || (!readable && self.quiet_until.is_some_and(|q| now >= q)))
        {
            // A descendant holds the output open.
            self.report.held_open = true;
            return ControlFlow::Break(());
        }
        if !readable {
            // While the child runs, only the idle watch sets a timeout.
            if self.deadline.is_none()
                && let Some(idle) = self.pump.idle.as_mut()
            {
                idle.check();
            }
            return ControlFlow::Continue(());
        }
        match unistd::read(&self.pump.source, &mut self.buf) {
            // EIO: every descriptor of the slave side is closed.
            Ok(0) | Err(Errno::EIO) => return ControlFlow::Break(()),
            Ok(n) => {
                self.flowing = self.nonblocking;
                if let Some((_, now)) = drain_now {
                    self.quiet_until = Some(now + self.pump.drain_idle);
                }
                let chunk = self.buf.get(..n).unwrap_or_default();
                self.pump.deliver(chunk, &mut self.report);
                if self.report.reader_gone {
                    // The command wrote after its output lost its reader (this chunk was the
                    // first the reader missed, or came later): see `Pump::gone`.
                    let Some(events) = self.pump.events.as_ref() else {
                        return ControlFlow::Break(());
                    };
                    self.report.since_gone = self.report.since_gone.saturating_add(n);
                    // Once, and only while it runs: what is left after it is not tj's.
                    if self.deadline.is_none()
                        && self.report.since_gone > HANG_UP_AFTER
                        && let Some(what) = self.report.gone.take()
                    {
                        let _ = events.send(Event::ReaderGone);
                        self.report.hang_up_asked = true;
                        self.report.live_lost = Some(format!(
                            "{what}; tj hung up on the command as a closed terminal does \
                             (SIGHUP, and SIGKILL if it outlives the grace period), and its \
                             output is still captured"
                        ));
                    }
                }
                if n == self.buf.len() && self.buf.len() < CHUNK {
                    self.buf.resize(self.buf.len() * 2, 0);
                }
            }
            Err(Errno::EINTR) => {}
            // Read on without a wait, and nothing was there (or a wait said so wrongly).
            Err(Errno::EAGAIN) => self.flowing = false,
            Err(err) => {
                self.report.warnings.push(format!("could not read the output: {err}"));
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    /// The wait for the output failed: the pump is done, and says why.
    pub(super) fn fail(&mut self, err: &Errno) {
        self.report.warnings.push(format!("could not wait for the output: {err}"));
    }

    /// What the pump learned; the caller's live writer and capture are dropped with it.
    pub(super) fn finish(self) -> PumpReport {
        self.report
    }
}

impl Pump {
    fn deliver(&mut self, chunk: &[u8], report: &mut PumpReport) {
        if let Some(idle) = self.idle.as_mut() {
            idle.saw(chunk);
        }
        if let Some(capture) = self.capture.as_mut() {
            let captured = match self.onlcr.as_mut() {
                Some(scratch) => {
                    onlcr(chunk, scratch);
                    scratch.as_slice()
                }
                None => chunk,
            };
            // Fail open: a failing capture must not stop the live stream, nor leave the
            // child blocked on a full PTY because nobody reads it any more.
            if panic::catch_unwind(AssertUnwindSafe(|| capture(captured))).is_err() {
                self.capture = None;
                report.warnings.push(
                    "the capture failed; the rest of the output was only shown live".to_owned(),
                );
            }
        }
        if let Some(live) = self.live.as_mut() {
            let written = panic::catch_unwind(AssertUnwindSafe(|| write_live(live, chunk)))
                .unwrap_or_else(|_| Err(io::Error::other("the live writer panicked")));
            if let Err(err) = written {
                self.live = None;
                // Without tj the command's own write would have failed here.
                let (what, reader_left) = match err.kind() {
                    io::ErrorKind::BrokenPipe => {
                        ("the reader of the live output went away (broken pipe)".to_owned(), true)
                    }
                    io::ErrorKind::ConnectionReset => (
                        "the reader of the live output went away (connection reset)".to_owned(),
                        true,
                    ),
                    _ => (format!("could not write the live output: {err}"), false),
                };
                self.gone(what, reader_left, report);
            }
        }
    }

    /// The command's output has nowhere to go any more: `what` says why, the live output
    /// failing (its reader went away, or any other error) or the reader of stdout, watched
    /// for the rendition still to come, going away ([`Flow::reader_left`]); `reader_left`
    /// when it is the reader that went. Without tj the command's next write would fail, so
    /// it is told, and `tj run --live -- yes | head` ends instead of running for ever:
    ///
    /// - Through a pipe (`--no-pty`, [`Pump::events`] `None`), the pump ends, which closes
    ///   its read end: the command's next write fails with EPIPE, or SIGPIPE ends it, as
    ///   without tj when its reader went away (nothing to say then); what it had written
    ///   into the pipe is not captured.
    /// - Through a PTY, whose writes cannot fail that way, the command is hung up on once it
    ///   has written more than [`HANG_UP_AFTER`] bytes since, while it runs
    ///   ([`Event::ReaderGone`]), as a terminal that closes does
    ///   (and as `script` does when its output breaks): SIGHUP, as if tj had received it,
    ///   and SIGKILL if the command outlives the grace period. SIGPIPE would have matched
    ///   `yes | head` better, but it reaches every process of the command's group, writers
    ///   or not, where a shell dies of it without running its traps, and the programs that
    ///   ignore it (Python, Node, most Rust ones) would run on. Its output is still
    ///   captured.
    fn gone(&self, what: String, reader_left: bool, report: &mut PumpReport) {
        report.reader_gone = true;
        if self.events.is_some() {
            // Said once the command is hung up on, if ever.
            report.gone = Some(what);
        } else if !reader_left {
            report.live_lost = Some(format!(
                "{what}; tj closed the command's output pipe, so that its writes fail, and \
                 what it wrote after that is not captured"
            ));
        }
    }
}

/// Writes all of `chunk` to `live`, then flushes.
fn write_live(live: &mut Box<dyn Write + Send>, mut chunk: &[u8]) -> io::Result<()> {
    let mut backoff = Duration::from_millis(1);
    while !chunk.is_empty() {
        match live.write(chunk) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                chunk = chunk.get(n..).unwrap_or_default();
                backoff = Duration::from_millis(1);
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                // Lossless: a writer that is not a `LiveFd` gives us no descriptor to poll, so
                // we back off and retry; `LiveFd` polls its own descriptor and never gets here.
                thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_millis(50));
            }
            Err(err) => return Err(err),
        }
    }
    live.flush()
}

/// `d` as a poll timeout, rounded up to whole milliseconds (so a deadline less than 1 ms
/// away does not become a busy poll with timeout 0) and capped at what poll accepts.
pub(super) fn poll_timeout(d: Duration) -> PollTimeout {
    let ms = d.as_micros().div_ceil(1000);
    PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onlcr_puts_a_cr_before_every_newline_and_nowhere_else() {
        let mut out = vec![b'x'; 3];
        for (chunk, want) in [
            (&b""[..], &b""[..]),
            (b"plain", b"plain"),
            (b"\n", b"\r\n"),
            (b"a\nb\n\nc", b"a\r\nb\r\n\r\nc"),
            (b"\r\n\x1b[K\n", b"\r\r\n\x1b[K\r\n"),
        ] {
            onlcr(chunk, &mut out);
            assert_eq!(out, want, "{:?}", String::from_utf8_lossy(chunk));
        }
    }

    #[test]
    fn window_size_of_a_non_terminal_is_none() {
        let file = File::open("/dev/null").unwrap();
        assert_eq!(window_size(file.as_fd()), None);
    }

    #[test]
    fn window_size_reads_a_pty() {
        let pty = open(WinSize { cols: 101, rows: 33, ..WinSize::default() }, None, false).unwrap();
        let size = window_size(pty.slave.as_fd()).unwrap();
        assert_eq!((size.cols, size.rows), (101, 33));
    }

    #[test]
    fn end_of_file_typed_before_raw_mode_is_kept_as_such_not_as_a_nul() {
        let pty = open(WinSize::default(), None, false).unwrap();
        let master = dup_master(&pty.master).unwrap();
        // Typed on the cooked terminal before tj switches it to raw: a line, an end of file
        // (Ctrl-D), another line and another end of file.
        write_all_fd(master.as_fd(), b"ab\n\x04cd\n\x04").unwrap();
        let typing = Arc::new(Typing::new(pty.slave.as_fd()).unwrap());
        assert!(typing.nonblocking);
        // The line discipline takes what is typed into the master in the background.
        let mut ready = [PollFd::new(typing.reader.as_fd(), PollFlags::POLLIN)];
        assert_eq!(poll(&mut ready, PollTimeout::from(30_000u16)), Ok(1));
        let mut raw =
            RawMode::new(pty.slave.try_clone().unwrap().into(), Arc::clone(&typing)).unwrap();
        raw.enter().unwrap();
        let ahead = std::mem::take(&mut *typing.ahead.lock().unwrap());
        let expected = [
            Typed::Bytes(b"ab\n".to_vec()),
            Typed::Eof,
            Typed::Bytes(b"cd\n".to_vec()),
            Typed::Eof,
        ];
        // Reads come a line at a time, or more at once; either way, in this order.
        let mut joined: Vec<Typed> = Vec::new();
        for typed in ahead {
            match (joined.last_mut(), typed) {
                (Some(Typed::Bytes(last)), Typed::Bytes(more)) => last.extend(more),
                (_, typed) => joined.push(typed),
            }
        }
        assert_eq!(joined, expected);
        // Nothing is left for a raw read, where the ends of file would have been NULs.
        let mut buf = [0u8; 16];
        assert_eq!(unistd::read(&typing.reader, &mut buf), Err(Errno::EAGAIN));
        raw.leave();
        assert!(termios::tcgetattr(&pty.slave).unwrap().local_flags.contains(LocalFlags::ICANON));
    }

    #[test]
    fn poll_timeout_rounds_up() {
        assert_eq!(poll_timeout(Duration::from_micros(1)).as_millis(), Some(1));
        assert_eq!(poll_timeout(Duration::from_millis(250)).as_millis(), Some(250));
        assert_eq!(poll_timeout(Duration::from_secs(u64::MAX)), PollTimeout::MAX);
    }
}
