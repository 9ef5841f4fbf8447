//! The PTY relay of `tj run`: runs a command so the human sees it exactly as without tj
//! (colours, progress bars, prompts, live) while every byte it writes is also handed, in
//! order and exactly once, to a capture callback (DESIGN.md "Contracts of `tj run`").
//!
//! This module owns the pseudo-terminal, the child process, tj's terminal mode and the
//! signals tj receives while a child runs; [`run`] is its one entry point. It does not decide
//! the mode, build the child's environment (the caller fills [`Spec::env_set`]), buffer or
//! spill the capture, or print: every problem comes back as a value in [`Outcome`].
//!
//! - [`mode`]: which of terminal, agent or transparent mode `tj run` uses (pure).
//! - `pty.rs`: opening and sizing the PTY, the output pump, the stdin thread, the live
//!   writer ([`LiveFd`]) and the raw-mode guard.
//! - `exec.rs`: spawning (with a PTY, under a session leader that keeps the command's
//!   background children alive after it exits), and exec failures as [`SpawnError`]s.
//! - `signals.rs`: forwarding, SIGWINCH, job control, wait → [`Exit`].
//! - `blocked.rs`: agent mode's watchdog for a child blocked on input at the PTY
//!   ([`Spec::blocked_after`] → [`Outcome::blocked`]).
//!
//! Threads: the caller's thread runs the event loop (and, with the watchdog on, judges the
//! silences the pump reports). In agent mode (nobody watches the output live, no keystrokes
//! to forward) that is all: the same thread reads the output and tj's signals, SIGCHLD
//! included, with one `poll` (`Pumping::Here`). Otherwise the pump reads the output on a
//! thread of its own; the process-wide signal thread turns signals into events, SIGCHLD
//! included, after which the event loop looks whether its child has exited (a waiter thread
//! reports the exit instead where that cannot be done); and, when tj's stdin is a terminal,
//! a detached thread writes keystrokes into the PTY (the only writer into the master).
//!
//! Unix only.

mod blocked;
mod exec;
pub mod mode;
mod pty;
mod signals;

use std::ffi::OsString;
use std::fmt;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use blocked::{IdleWatch, Watchdog};
use nix::unistd::Pid;
use pty::{Pump, PumpReport, Terminal};
use signals::Event;

pub use pty::LiveFd;

/// What to run and how.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The command and its arguments, byte-exact; `argv[0]` is looked up on the child's PATH
    /// as `std::process::Command` does.
    pub argv: Vec<OsString>,
    /// The child's working directory.
    pub cwd: PathBuf,
    /// Variables added to or overridden in the child's environment (`TJ_INNER=1`,
    /// `PAGER=cat`, …): the caller decides which. Applied after [`Spec::env_remove`].
    pub env_set: Vec<(OsString, OsString)>,
    /// Variables removed from the child's environment (`COLUMNS`, `LINES`).
    pub env_remove: Vec<OsString>,
    /// Run the child on a PTY; `false` gives it one pipe for stdout and stderr (`--no-pty`).
    /// Its stderr goes elsewhere with [`RelayIo::stderr`].
    pub pty: bool,
    /// After the child exits, stop reading once this long passes without output.
    pub drain_idle: Duration,
    /// After the child exits, stop reading once this long has passed in all.
    pub drain_total: Duration,
    /// Time between a forwarded signal and SIGKILL to the child's process group.
    pub grace: Duration,
    /// A fixed PTY size. `None`: the size of tj's stdout if it is a terminal, else of its
    /// stdin, else 80×24, following SIGWINCH.
    pub size: Option<WinSize>,
    /// The PTY passes `\n` through untranslated (OPOST off): set it when the live output
    /// goes to a terminal that tj leaves cooked (its stdin is not a terminal, so there is no
    /// raw mode), which makes its own `\r\n`; two line disciplines translating in a row
    /// would turn every newline into `\r\r\n`. The caller decides: the relay does not look
    /// at its own stdout, so that injected endpoints behave the same under any terminal.
    pub raw_output: bool,
    /// The PTY passes `\n` through untranslated, and the capture gets each `\n` as the
    /// `\r\n` the translation (ONLCR) would have made: for when no terminal shows the
    /// output (agent mode). The kernel's per-byte output processing is spared, and what is
    /// stored, hashed and reduced is byte for byte what a translating PTY gives. Not when tj
    /// forwards keystrokes (its stdin is a terminal), nor on a pipe, which translates nothing.
    pub translate_in_capture: bool,
    /// End the run when the child has written nothing for this long and is waiting for
    /// input on the PTY, where nobody will type (a password prompt read from `/dev/tty`, a
    /// question, a pager, an editor): it is then ended as a forwarded SIGTERM would end it,
    /// and [`Outcome::blocked`] says why. A child that is merely slow or silent is never
    /// ended. `None`: never. Only with a PTY; meant for agent mode (60 s there).
    pub blocked_after: Option<Duration>,
}

impl Spec {
    /// A spec with DESIGN.md's defaults: a PTY, 250 ms idle and 2 s total drain, 2 s grace,
    /// the terminal's size, the environment unchanged, and no blocked-on-input watchdog.
    pub fn new(argv: Vec<OsString>, cwd: PathBuf) -> Spec {
        Spec {
            argv,
            cwd,
            env_set: Vec::new(),
            env_remove: Vec::new(),
            pty: true,
            drain_idle: Duration::from_millis(250),
            drain_total: Duration::from_secs(2),
            grace: Duration::from_secs(2),
            size: None,
            raw_output: false,
            translate_in_capture: false,
            blocked_after: None,
        }
    }
}

/// A terminal window size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WinSize {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
    /// Width in pixels (0 when unknown).
    pub pixel_width: u16,
    /// Height in pixels (0 when unknown).
    pub pixel_height: u16,
}

/// The width of agent mode's PTY when `COLUMNS` says nothing: wide enough that no line a
/// tool fits to the terminal is cut, narrow enough to stay a plausible terminal.
pub const AGENT_COLS: u16 = 500;

impl WinSize {
    /// The PTY size for agent mode, where nobody views the PTY: `columns` wide (the value of
    /// `COLUMNS`, if it is a positive number), else [`AGENT_COLS`]; 24 rows.
    ///
    /// Tools fit their output to the terminal's width: rustc elides the part of a source line
    /// past it, tables and paths get cut. At 80 columns the agent would get those cuts, and
    /// `tj expand` could not bring back what was never printed. The renderer wraps at the
    /// same width ([`Outcome::cols`]), as a terminal that wide would.
    pub fn for_agent(columns: Option<&std::ffi::OsStr>) -> WinSize {
        let cols = columns
            .and_then(|c| c.to_str())
            .and_then(|c| c.trim().parse::<u16>().ok())
            .filter(|&c| c > 0)
            .unwrap_or(AGENT_COLS);
        WinSize { cols, ..WinSize::default() }
    }
}

impl Default for WinSize {
    /// 80×24, the size of a terminal that reports none.
    fn default() -> WinSize {
        WinSize { cols: 80, rows: 24, pixel_width: 0, pixel_height: 0 }
    }
}

/// The capture callback: receives every byte the child wrote, in order, exactly once.
pub type CaptureFn = Box<dyn FnMut(&[u8]) + Send>;

/// Where bytes go, injected so tests can drive a real PTY (STYLE.md "Do 4").
pub struct RelayIo {
    /// Live output: tj's stdout in terminal mode ([`LiveFd::stdout`]: byte-exact,
    /// unbuffered, waits on a non-blocking stdout), `None` in agent mode.
    pub live: Option<Box<dyn Write + Send>>,
    /// Every byte the child wrote, in order, exactly once. Called from whichever thread
    /// reads the output (see `Pumping`) before the same bytes go live.
    pub capture: CaptureFn,
    /// tj's stdin; `None` means descriptor 0. If it is a terminal (and [`Spec::pty`]), the
    /// child's stdin is the PTY and keystrokes are forwarded to it; otherwise the child
    /// gets this descriptor unchanged, so `isatty(0)` and EOF behave as without tj.
    pub stdin: Option<OwnedFd>,
    /// Where the child's stderr goes instead of where its stdout goes (the PTY, or the
    /// shared pipe), unchanged: then it is neither shown live nor captured, as its output
    /// is. `None`: with its stdout. [`stderr_apart`] gives tj's own stderr when the user
    /// sent it somewhere else than tj's stdout (`2>/dev/null`, `2>file`).
    pub stderr: Option<OwnedFd>,
    /// Work to do before any output is read. On the output thread, it runs while the child
    /// is being started, which the caller's thread waits for; when the caller's thread
    /// reads the output itself, it runs there once the child has started, before `meanwhile`
    /// ([`run_meanwhile`]). Either way it is off the command's path unless the command
    /// writes at once. It must not print.
    pub prepare: Option<Box<dyn FnOnce() + Send>>,
    /// The capture may wait on a reader (`tj run --agent` streams the output to stdout when
    /// nothing can be stored). The output is then read on a thread of its own, as when it
    /// is watched live, so that a reader that stalls does not hold up the forwarding of
    /// signals (see `Pumping`).
    pub capture_may_stall: bool,
    /// tj's stdout when it is a pipe or a socket ([`stdout_stream`]), where the live output
    /// or the rendition goes: watched while the command runs, so that a reader that goes
    /// away before anything is written to it is noticed, and the command told (see
    /// [`Outcome::reader_gone`]). `None`: nothing to watch (a live writer still finds out by
    /// writing).
    pub reader: Option<OwnedFd>,
}

impl RelayIo {
    /// Endpoints with tj's own stdin, and the child's stderr with its stdout.
    pub fn new(live: Option<Box<dyn Write + Send>>, capture: CaptureFn) -> RelayIo {
        RelayIo {
            live,
            capture,
            stdin: None,
            stderr: None,
            prepare: None,
            capture_may_stall: false,
            reader: None,
        }
    }
}

/// tj's stderr (a duplicate), if the child's stderr should go there rather than with its
/// stdout ([`RelayIo::stderr`]); `None` when it should not.
///
/// Without tj, `cmd 2>/dev/null` discards what `cmd` writes on stderr and `cmd 2>err.txt`
/// puts it in the file. The child's stderr goes where tj's goes when that is somewhere else
/// than tj's stdout, exactly as without tj: not a PTY, not captured, not in the rendition.
/// It stays with stdout (on the PTY, captured) when tj's stderr is the same open file as its
/// stdout (the same terminal, `2>&1`), when either cannot be looked at (a closed stderr),
/// and in agent mode when tj's stderr is a pipe or a socket apart from stdout: that is an
/// agent harness reading both streams, and the agent reads the command's stderr, reduced,
/// in the rendition on stdout rather than raw beside it.
pub fn stderr_apart(agent: bool) -> Option<OwnedFd> {
    let out = Endpoint::of(io::stdout().as_fd());
    let err = Endpoint::of(io::stderr().as_fd());
    is_apart(out, err, agent).then(|| io::stderr().as_fd().try_clone_to_owned().ok()).flatten()
}

/// tj's stdout (a duplicate), if it is a pipe or a socket: a stream whose reader can go
/// away, for [`RelayIo::reader`].
pub fn stdout_stream() -> Option<OwnedFd> {
    let out = io::stdout();
    Endpoint::of(out.as_fd())
        .filter(|end| end.stream)
        .and_then(|_| out.as_fd().try_clone_to_owned().ok())
}

/// What an open file is, for [`stderr_apart`] and [`stdout_stream`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Endpoint {
    /// Device, inode and, for a device file, the device it is: equal for the same file.
    id: (u64, u64, u64),
    /// A pipe or a socket: a stream some process reads.
    stream: bool,
}

impl Endpoint {
    fn of(fd: std::os::fd::BorrowedFd<'_>) -> Option<Endpoint> {
        use nix::sys::stat::{SFlag, fstat};
        let stat = fstat(fd).ok()?;
        let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
        #[allow(clippy::useless_conversion)] // the widths vary by platform
        let id = (u64::from(stat.st_dev), u64::from(stat.st_ino), u64::from(stat.st_rdev));
        Some(Endpoint { id, stream: kind == SFlag::S_IFIFO || kind == SFlag::S_IFSOCK })
    }
}

/// The decision of [`stderr_apart`], on what fds 1 and 2 are.
fn is_apart(out: Option<Endpoint>, err: Option<Endpoint>, agent: bool) -> bool {
    match (out, err) {
        (Some(out), Some(err)) => out.id != err.id && !(agent && err.stream),
        _ => false,
    }
}

/// How the child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code; tj exits with it too.
    Code(i32),
    /// It was killed by this signal; tj dies of the same signal (`exit::Status::end`).
    Signal(i32),
}

/// Why the child could not be started. Each message names the command
/// (`cargo: command not found`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpawnError {
    /// The command, or the interpreter its `#!` line names, does not exist (exit 127).
    NotFound(String),
    /// The command cannot be executed: not allowed, not a program, or refused by exec for
    /// another reason than its absence (exit 126).
    NotExecutable(String),
    /// tj could not set up its own side of the run (descriptors, pipes, a thread or a
    /// process: what a low `ulimit` runs out of); the command has not started, so its caller
    /// can still run it without tj.
    Setup(String),
    /// tj failed before the child ran, or could not tell how it ended (exit 125).
    Other(String),
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::NotFound(msg)
            | SpawnError::NotExecutable(msg)
            | SpawnError::Setup(msg)
            | SpawnError::Other(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for SpawnError {}

/// Replaces this process with `argv`: same pid, tj's stdio, environment and directory.
/// Returns only if it could not, with the error as a spawn would give it (`cargo: command
/// not found`, `x: bad interpreter /bin/nope: no such file or directory`, …).
pub fn exec_in_place(argv: &[OsString]) -> SpawnError {
    exec::exec_in_place(&Spec::new(argv.to_vec(), PathBuf::from(".")))
}

/// Notes what tj was started with that Rust's runtime changes before `main`, so that the
/// command gets it as it would without tj: SIGPIPE's disposition (the runtime ignores it),
/// and which of stdin, stdout and stderr were closed (the runtime opens /dev/null in their
/// place). For the binary to call before the runtime starts (`.init_array`); system calls
/// only.
pub fn note_at_start() {
    signals::note_signals_at_start();
    crate::stdio::note_closed_at_start();
}

/// Makes tj's signal dispositions those it was started with again, for an exec of the
/// command in tj's place after [`SpawnError::Setup`].
pub fn restore_inherited_signals() {
    signals::restore_inherited();
}

/// Why the run was ended: the child sat waiting for input on the PTY (see
/// [`Spec::blocked_after`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// How long the output had been silent when the child was judged blocked.
    pub idle: Duration,
    /// What it was doing, for the rendition: "reading the terminal with echo off (a
    /// password prompt?)", "reading the terminal after a prompt", …
    pub reason: String,
}

/// What happened.
#[derive(Debug)]
pub struct Outcome {
    /// How the child ended, or why it never ran.
    pub exit: Result<Exit, SpawnError>,
    /// From just before the spawn to the child's exit.
    pub duration: Duration,
    /// A descendant kept the PTY (or pipe) open after the child exited; the drain cap, not
    /// EOF, ended the read.
    pub pty_held_open: bool,
    /// The live writer failed: forwarding stopped. Says why, and what tj did about it.
    pub live_lost: Option<String>,
    /// The command's output had nowhere to go any more (the live writer failed, or the
    /// watched [`RelayIo::reader`] went away), and the command was told: without a PTY its
    /// output pipe was closed, so that its writes fail as without tj; through a PTY it was
    /// hung up on (SIGHUP) once it wrote on.
    pub reader_gone: bool,
    /// Anything else worth one line on stderr, each once.
    pub warnings: Vec<String>,
    /// The child was waiting for input on the PTY for [`Spec::blocked_after`] and tj ended
    /// it (SIGTERM to its process group, SIGKILL after [`Spec::grace`]); [`Outcome::exit`]
    /// is then how that ended it, normally `Signal(15)`.
    pub blocked: Option<Blocked>,
    /// The PTY's width when the command started, if its output went to a PTY (the renderer
    /// wraps lines at it, as the terminal did).
    pub cols: Option<u16>,
    /// tj was asked to end the command with this signal (it received it and forwarded it,
    /// or the watchdog sent SIGTERM), and the command ignored it for the grace period, so
    /// tj killed it ([`Outcome::exit`] is then `Signal(9)`). Whoever signalled tj asked
    /// for this signal's death, and tj dies of it: a SIGTERM that ends a job reads as
    /// SIGTERM (143), however stubborn the command was. Also set, with [`Outcome::exit`] an
    /// error, when tj received the signal while setting up a run whose command never
    /// started.
    pub ended_by: Option<i32>,
}

impl Outcome {
    /// With the signal sent to tj while it set up a run whose command never started, as
    /// [`Outcome::ended_by`]: whoever sent it asked for tj's end, and the caller must not
    /// run the command after all.
    fn signalled(mut self, watch: &mut signals::Watch) -> Outcome {
        if self.exit.is_err() {
            self.ended_by = watch.received();
        }
        self
    }

    fn failed(err: SpawnError, warnings: Vec<String>) -> Outcome {
        Outcome {
            exit: Err(err),
            duration: Duration::ZERO,
            pty_held_open: false,
            live_lost: None,
            reader_gone: false,
            warnings,
            blocked: None,
            cols: None,
            ended_by: None,
        }
    }
}

/// Runs `spec.argv` and relays its output to `io` until it exits and its output is drained.
///
/// The child runs on a new PTY (or one pipe with `spec.pty == false`) in a session of its
/// own; on a PTY, in the foreground process group under a session leader of tj's, so that
/// what it leaves running in the background outlives it as it would without tj. Each chunk
/// of output goes to `io.capture`, then to `io.live`. While it runs, SIGINT/SIGTERM/SIGHUP/
/// SIGQUIT sent to tj are forwarded to the child's process group (then SIGKILL after
/// `spec.grace`), SIGWINCH resizes the PTY, and, if tj's stdin is a terminal
/// in the foreground, tj's terminal is in raw mode; it is restored before this returns, and
/// while unwinding from a panic. With [`Spec::blocked_after`], a child waiting for input on
/// the PTY after that long without output is ended ([`Outcome::blocked`]).
///
/// Never fails: if the child could not be started, [`Outcome::exit`] says why. If no PTY can
/// be opened, the child runs with a pipe and a warning says so (fail open).
pub fn run(spec: &Spec, io: RelayIo) -> Outcome {
    relay(spec, io, |_, _| {})
}

/// [`run`], calling `meanwhile` on this thread once the child runs (it has exec'd), before
/// the relay waits for it: work the caller needs once the command ends, done while it runs
/// rather than after. Output is read and captured meanwhile, or, when this thread reads it
/// (nobody watches it live), waits in the PTY until `meanwhile` returns; a signal tj
/// receives meanwhile is forwarded once `meanwhile` returns. It must not print: the command's output may be
/// going to the same terminal.
pub fn run_meanwhile(spec: &Spec, io: RelayIo, meanwhile: impl FnOnce()) -> Outcome {
    relay(spec, io, |_, _| meanwhile())
}

/// [`run`], calling `on_spawn` with a way to send the relay events and the child's process
/// group once the child runs (tests inject signals through it).
///
/// In order: the signal watch, the PTY (or pipe) and tj's terminal ([`Plumbing::open`]), the
/// output thread (unless this thread reads the output, see [`Pumping`]), the child
/// ([`exec::spawn`]), who reports its exit ([`watch_exit`]); then the event loop until it has
/// ended and its output is drained.
fn relay(spec: &Spec, io: RelayIo, on_spawn: impl FnOnce(&Inject, Pid)) -> Outcome {
    let RelayIo { live, capture, stdin, stderr, prepare, capture_may_stall, reader } = io;
    let mut warnings = Vec::new();
    if spec.argv.is_empty() {
        return Outcome::failed(SpawnError::Other("no command given".to_owned()), warnings);
    }

    // Before any thread starts, so that each starts with SIGTSTP blocked: one that has not
    // yet blocked it would take a Ctrl-Z and stop tj alone (see `StopTogether`).
    let mut stop_together = (!spec.pty).then(signals::StopTogether::hold);
    let (tx, rx) = mpsc::channel();
    let own_stdin = io::stdin();
    let stdin_fd = stdin.as_ref().map_or_else(|| own_stdin.as_fd(), AsFd::as_fd);
    let stdin_tty = nix::unistd::isatty(stdin_fd).unwrap_or(false);
    // First, so that tj no longer dies of the forwarded signals. Dropped last (locals drop
    // in reverse order): the terminal is restored before those signals act by default again.
    let here = Pumping::may_be_here(live.is_none() && !capture_may_stall, spec, stdin_tty);
    let mut watch = signals::Watch::start(tx.clone(), here, &mut warnings);

    let Plumbing { mut term, source, output, master, cols, keys, exited_rx, exited_tx } =
        match Plumbing::open(spec, stdin_fd, stdin_tty, &mut warnings) {
            Ok(plumbing) => plumbing,
            Err(err) => return Outcome::failed(err, warnings).signalled(&mut watch),
        };

    let (watchdog, idle) = blocked_watch(spec, master.as_ref(), &tx, &mut warnings);
    // Only through a PTY does the pump need a hand to tell the command its reader went away.
    let events = (master.is_some() && (live.is_some() || reader.is_some())).then(|| tx.clone());
    let pump = Pump {
        source,
        exited: exited_rx,
        live,
        capture: Some(capture),
        onlcr: (master.is_some() && spec.translate_in_capture && !term.wants_keys()).then(Vec::new),
        drain_idle: spec.drain_idle,
        drain_total: spec.drain_total,
        idle,
        events,
        reader,
    };
    let here = watch.fd().is_some() && watch.reports_exits() && keys.is_none();
    let pumping = match Pumping::start(pump, here, prepare, &tx) {
        Ok(pumping) => pumping,
        Err(err) => {
            let err = setup("could not start the output thread", &err);
            return Outcome::failed(err, warnings).signalled(&mut watch);
        }
    };

    let spawned_at = Instant::now();
    let input = if keys.is_some() { exec::Input::Pty } else { exec::Input::Fd(stdin_fd) };
    let spawned = start(spec, output, input, stderr.as_ref().map(AsFd::as_fd), &mut term);
    let exec::Spawned { child, job } = match spawned {
        Ok(spawned) => spawned,
        Err(err) => {
            return not_started(err, exited_tx, &rx, pumping, &mut term, warnings)
                .signalled(&mut watch);
        }
    };
    // The signal thread starts once the child runs, not before: the child does not wait
    // for it, and a signal that comes meanwhile waits in signal-hook's queue.
    if !pumping.is_here() {
        watch.listen(&mut warnings);
    }

    // Without a PTY, Ctrl-Z at tj's terminal reaches tj alone: the command is stopped with it.
    if let Some(stop_together) = &mut stop_together {
        stop_together.attach(job);
    }
    let keys = keys.map(|(master, stop)| pty::Keys { master, stop, events: tx.clone() });
    term.attach(master, keys);
    let pumping = pumping.prepared();
    on_spawn(&Inject::new(&tx, pumping.wake()), job);
    let (child, reported) = watch_exit(&watch, child, &tx, &mut warnings);
    drop(tx);

    let supervisor = signals::Supervisor::new(
        job,
        spec.grace,
        &mut term,
        Some(exited_tx),
        watchdog.as_ref(),
        reported,
    );
    let done = pumping.supervise(supervisor, &rx, &mut watch);
    let exited_at = done.exited_at.unwrap_or_else(Instant::now);
    let status = child.lock().unwrap_or_else(PoisonError::into_inner).wait();
    warnings.extend(term.take_warnings());
    drop(term);
    outcome(done, status, exited_at.saturating_duration_since(spawned_at), cols, warnings)
}

/// Starts the command on `output` (the PTY slave or the pipe's write end) with `input` as
/// its stdin, tj's terminal in raw mode first when the keystrokes go through the PTY.
fn start(
    spec: &Spec,
    output: exec::Output,
    input: exec::Input<'_>,
    stderr: Option<BorrowedFd<'_>>,
    term: &mut Terminal,
) -> Result<exec::Spawned, SpawnError> {
    if matches!(input, exec::Input::Pty) {
        term.enter_raw_early();
    }
    let spawned = exec::spawn(spec, &output, input, stderr, signals::sigchld_was_ignored());
    // The slave (or the pipe's write end) now lives only in the child: EOF comes when the
    // child and its descendants are done with it.
    drop(output);
    spawned
}

/// Who reads the child's output: a thread of its own, or the relay's thread, which then
/// waits for the output and tj's signals (SIGCHLD included) at once, with `poll`.
///
/// The relay's thread reads it when nothing can keep that thread from the signals for long
/// and nothing but the signals and the output needs waiting for: nobody watches the output
/// live and the capture writes nowhere that can stall ([`RelayIo::capture_may_stall`]: a
/// terminal or a pipe that stalls would hold up the write, and with it the forwarding of a
/// Ctrl-C), no keystrokes are forwarded, this relay reads the signals
/// itself ([`signals::Watch::fd`]), and they tell it of its child's exit. That is a run of
/// `tj run --agent`, every command an agent runs: it then starts no thread at all, which
/// saves about 0.3 ms a run on the machine of issue 13 (a thread's creation, its wake-ups
/// and its end with the process: `examples/spawn_floor.rs` with two threads added).
/// While the command starts, the output waits in the PTY, and [`RelayIo::prepare`] and the
/// caller's `meanwhile` run on this thread before it is read.
#[allow(clippy::large_enum_variant, reason = "one a run, on the stack, never in a collection")]
enum Pumping {
    /// The output thread, which reports [`Event::PumpDone`].
    Thread(thread::JoinHandle<()>),
    /// This thread reads the output; `prepare` is still to run.
    Here { flow: pty::Flow, prepare: Option<Box<dyn FnOnce() + Send>>, wake: Option<Wake> },
}

impl Pumping {
    /// Whether the relay's thread may read the output, as far as is known before the
    /// signals are watched and the PTY opened (see [`Pumping`]).
    fn may_be_here(no_live: bool, spec: &Spec, stdin_tty: bool) -> bool {
        no_live && !(spec.pty && stdin_tty) && signals::WAITS_WITHOUT_REAPING
    }

    /// Starts the output thread, or, with `here`, readies this thread to read the output.
    fn start(
        pump: Pump,
        here: bool,
        prepare: Option<Box<dyn FnOnce() + Send>>,
        tx: &Sender<Event>,
    ) -> io::Result<Pumping> {
        if here {
            let wake = Wake::for_tests()?;
            return Ok(Pumping::Here { flow: pty::Flow::new(pump), prepare, wake });
        }
        start_pump(pump, prepare, tx.clone()).map(Pumping::Thread)
    }

    fn is_here(&self) -> bool {
        matches!(self, Pumping::Here { .. })
    }

    /// Runs [`RelayIo::prepare`] on this thread, if it is this thread's to run: once the
    /// child runs, so that it is off the command's path.
    fn prepared(self) -> Pumping {
        match self {
            Pumping::Here { flow, prepare, wake } => {
                if let Some(prepare) = prepare {
                    prepare();
                }
                Pumping::Here { flow, prepare: None, wake }
            }
            thread @ Pumping::Thread(_) => thread,
        }
    }

    fn wake(&self) -> Option<&Wake> {
        match self {
            Pumping::Here { wake, .. } => wake.as_ref(),
            Pumping::Thread(_) => None,
        }
    }

    /// Runs the event loop until the child has exited and its output is drained.
    fn supervise(
        self,
        supervisor: signals::Supervisor<'_>,
        rx: &mpsc::Receiver<Event>,
        watch: &mut signals::Watch,
    ) -> signals::Supervised {
        match self {
            Pumping::Here { flow, wake, .. } => {
                supervise_here(flow, supervisor, rx, watch, wake.as_ref())
            }
            Pumping::Thread(pump) => {
                let done = signals::supervise(supervisor, rx);
                // The pump has reported (or the channel broke). It reports after `Pump::run`
                // returned, which dropped the caller's live writer and capture, so whatever
                // they own is released: what is left of the thread is its exit, which nobody
                // needs to wait for (the last hand-off between threads of a run, issue 13).
                // Without a report it may still hold them, and is joined.
                if done.pump.is_none() {
                    let _ = pump.join();
                }
                done
            }
        }
    }
}

/// The event loop on the relay's thread, which also reads the output ([`Pumping::Here`]):
/// one `poll` on the output, the exit pipe, the signals (and, in tests, the wake pipe),
/// until the child has exited and the output is drained.
fn supervise_here(
    flow: pty::Flow,
    mut supervisor: signals::Supervisor<'_>,
    rx: &mpsc::Receiver<Event>,
    watch: &mut signals::Watch,
    wake: Option<&Wake>,
) -> signals::Supervised {
    let mut flow = Some(flow);
    loop {
        // What this thread sent itself (the idle watch's silences) or a test injected.
        while let Ok(event) = rx.try_recv() {
            supervisor.on(event);
        }
        if supervisor.finished() {
            break;
        }
        let due = supervisor.timeout().map(|after| Instant::now() + after);
        let timeout = [supervisor.timeout(), flow.as_ref().and_then(pty::Flow::timeout)]
            .into_iter()
            .flatten()
            .min();
        // While the output keeps coming, it is read again, and waited for only now and then.
        let ready = if flow.as_mut().is_some_and(pty::Flow::reads_on) {
            Ok(Ready::output())
        } else {
            wait_here(flow.as_ref(), watch, wake, timeout)
        };
        let ready = match ready {
            Ok(ready) => ready,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(err) => {
                match flow.take() {
                    Some(mut failed) => {
                        failed.fail(&err);
                        supervisor.on(Event::PumpDone(failed.finish()));
                    }
                    // Nothing left to wait with: for the child, then.
                    None => supervisor.wait_for_exit(),
                }
                continue;
            }
        };
        if ready.signalled {
            for sig in watch.take() {
                supervisor.on(Event::Signal(sig));
            }
        }
        if ready.woken
            && let Some(wake) = wake
        {
            wake.drain();
        }
        if ready.reader_left
            && let Some(pumping) = flow.as_mut()
        {
            pumping.reader_left();
        }
        if let Some(pumping) = flow.as_mut()
            && pumping.step(ready.readable, ready.exited).is_break()
            && let Some(done) = flow.take()
        {
            supervisor.on(Event::PumpDone(done.finish()));
        }
        if due.is_some_and(|due| Instant::now() >= due) {
            supervisor.on_time();
        }
    }
    supervisor.finish()
}

/// What one wait of [`supervise_here`] found ready.
struct Ready {
    signalled: bool,
    woken: bool,
    readable: bool,
    exited: bool,
    reader_left: bool,
}

impl Ready {
    /// The output, and nothing else.
    fn output() -> Ready {
        Ready { signalled: false, woken: false, readable: true, exited: false, reader_left: false }
    }
}

/// Waits up to `timeout` (`None`: for ever) for the signals, the wake pipe, the output and
/// the exit pipe, whichever there are.
fn wait_here(
    flow: Option<&pty::Flow>,
    watch: &signals::Watch,
    wake: Option<&Wake>,
    timeout: Option<Duration>,
) -> nix::Result<Ready> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let watched = [
        watch.fd(),
        wake.map(Wake::fd),
        flow.map(pty::Flow::source),
        flow.filter(|flow| flow.watches_exit()).map(pty::Flow::exited),
        flow.and_then(pty::Flow::reader),
    ];
    let mut fds = Vec::with_capacity(watched.len());
    let mut at = [None; 5];
    for (slot, fd) in at.iter_mut().zip(watched) {
        if let Some(fd) = fd {
            *slot = Some(fds.len());
            fds.push(PollFd::new(fd, PollFlags::POLLIN));
        }
    }
    // The reader's side: only its going away (POLLERR, POLLHUP) is of interest.
    if let Some(reader) = at[4].and_then(|at| fds.get_mut(at)) {
        reader.set_events(PollFlags::empty());
    }
    poll(&mut fds, timeout.map_or(PollTimeout::NONE, pty::poll_timeout))?;
    let has = |slot: Option<usize>| slot.and_then(|at| fds.get(at)).is_some_and(pty::has_events);
    Ok(Ready {
        signalled: has(at[0]),
        woken: has(at[1]),
        readable: has(at[2]),
        exited: has(at[3]),
        reader_left: has(at[4]),
    })
}

/// How a test sends events to a relay once its child runs ([`relay`]'s `on_spawn`).
#[derive(Clone)]
struct Inject {
    tx: Sender<Event>,
    /// Wakes a relay whose thread waits in `poll` rather than on the channel.
    wake: Option<Arc<OwnedFd>>,
}

impl Inject {
    fn new(tx: &Sender<Event>, wake: Option<&Wake>) -> Inject {
        Inject { tx: tx.clone(), wake: wake.map(|wake| Arc::clone(&wake.write)) }
    }

    #[cfg_attr(not(test), allow(dead_code, reason = "only tests inject events"))]
    fn send(&self, event: Event) -> Result<(), mpsc::SendError<Event>> {
        self.tx.send(event)?;
        if let Some(wake) = &self.wake {
            let _ = nix::unistd::write(wake.as_fd(), &[1]);
        }
        Ok(())
    }
}

/// A pipe that wakes [`supervise_here`] for an event sent from another thread. Only tests
/// send any: the binary makes none.
struct Wake {
    read: OwnedFd,
    write: Arc<OwnedFd>,
}

impl Wake {
    fn for_tests() -> io::Result<Option<Wake>> {
        if !cfg!(test) {
            return Ok(None);
        }
        let (read, write) = io::pipe()?;
        Ok(Some(Wake { read: read.into(), write: Arc::new(write.into()) }))
    }

    fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.read.as_fd()
    }

    /// Empties the pipe (its writers write one byte an event; the channel holds the events).
    fn drain(&self) {
        let _ = nix::unistd::read(&self.read, &mut [0u8; 64]);
    }
}

/// The outcome of a child that could not be started: the pump, told by the exit pipe
/// (`exited_tx`, dropped here), ends at once, and its warnings and the terminal's join
/// `warnings`.
fn not_started(
    err: SpawnError,
    exited_tx: io::PipeWriter,
    rx: &mpsc::Receiver<Event>,
    pumping: Pumping,
    term: &mut Terminal,
    mut warnings: Vec<String>,
) -> Outcome {
    drop(exited_tx);
    let report = match pumping {
        Pumping::Thread(pump) => {
            let report = wait_pump(rx);
            let _ = pump.join();
            report
        }
        // Nothing was read, nor can be: the output's other end is closed.
        Pumping::Here { flow, .. } => flow.finish(),
    };
    warnings.extend(term.take_warnings());
    warnings.extend(report.warnings);
    Outcome::failed(err, warnings)
}

/// What [`relay`] sets up before the child starts: tj's terminal, where the child's output
/// goes and how the pump reads it, and how keystrokes reach the child.
struct Plumbing {
    /// tj's terminal: its size, raw mode and keystrokes.
    term: Terminal,
    /// The pump's read side of the output.
    source: OwnedFd,
    /// The child's side: the PTY slave, or the write end of one pipe.
    output: exec::Output,
    /// The PTY's master, if the output is a PTY.
    master: Option<pty::Master>,
    /// The PTY's width when the child starts, if the output is a PTY.
    cols: Option<u16>,
    /// When tj forwards keystrokes to the PTY (the child's stdin is then the slave): a
    /// duplicate of the master to write them into, and a read end of the exit pipe, which
    /// hangs up when the child has exited.
    keys: Option<(OwnedFd, OwnedFd)>,
    /// The exit pipe: the pump's read end, hung up by dropping the write end once the child
    /// has exited (or could not start).
    exited_rx: OwnedFd,
    exited_tx: io::PipeWriter,
}

impl Plumbing {
    /// Opens the PTY (or the pipe) sized for tj's terminal, and the exit pipe. `stdin_fd` is
    /// tj's stdin (`stdin_tty` if it is a terminal): the keystrokes are forwarded from it
    /// when it is a terminal and the child is on a PTY.
    fn open(
        spec: &Spec,
        stdin_fd: std::os::fd::BorrowedFd<'_>,
        stdin_tty: bool,
        warnings: &mut Vec<String>,
    ) -> Result<Plumbing, SpawnError> {
        let stdin_dup = if stdin_tty { stdin_fd.try_clone_to_owned().ok() } else { None };
        let term = Terminal::new(spec.size, stdin_dup, spec.pty && stdin_tty);
        let (source, output, master) = open_output(spec, &term, warnings)?;
        let cols = master.is_some().then(|| term.size().cols);
        let (exited_rx, exited_tx) =
            io::pipe().map_err(|err| setup("could not create a pipe", &err))?;
        let exited_rx = OwnedFd::from(exited_rx);
        let keys = match &master {
            Some(master) if term.wants_keys() => {
                pty::dup_master(master).ok().zip(exited_rx.try_clone().ok())
            }
            _ => None,
        };
        Ok(Plumbing { term, source, output, master, cols, keys, exited_rx, exited_tx })
    }
}

/// Arranges for the child's exit to reach the supervisor: the signal thread reports it
/// (SIGCHLD) where it can, and then the child's pid is returned for it to reap; otherwise a
/// thread waits for the child. If none can start, waits here, and signals are not
/// forwarded (a warning says so).
fn watch_exit(
    watch: &signals::Watch,
    child: exec::Child,
    tx: &Sender<Event>,
    warnings: &mut Vec<String>,
) -> (Arc<Mutex<exec::Child>>, Option<Pid>) {
    let own = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let reported = watch.reports_exits().then_some(own);
    let child = Arc::new(Mutex::new(child));
    if reported.is_none()
        && let Err(err) = signals::start_waiter(&child, tx.clone())
    {
        warnings.push(format!("could not watch the command ({err}); signals were not forwarded"));
        let _ = child.lock().unwrap_or_else(PoisonError::into_inner).wait();
        let _ = tx.send(Event::Exited);
    }
    (child, reported)
}

/// The watchdog that ends a command blocked on input, and the idle timer that wakes it:
/// only on a PTY (`master`) and with [`Spec::blocked_after`].
fn blocked_watch(
    spec: &Spec,
    master: Option<&pty::Master>,
    tx: &Sender<Event>,
    warnings: &mut Vec<String>,
) -> (Option<Watchdog>, Option<IdleWatch>) {
    let (Some(master), Some(after)) = (master, spec.blocked_after) else { return (None, None) };
    match pty::dup_master(master) {
        Ok(fd) => (Some(Watchdog::new(after, fd)), Some(IdleWatch::new(after, tx.clone()))),
        Err(err) => {
            warnings.push(format!(
                "could not watch for the command blocking on input ({err}); it may hang"
            ));
            (None, None)
        }
    }
}

/// Starts the thread that relays the child's output; it reports on `tx` when it is done,
/// and a panic in it is reported as lost output, never as tj's death.
fn start_pump(
    pump: Pump,
    prepare: Option<Box<dyn FnOnce() + Send>>,
    tx: Sender<Event>,
) -> io::Result<thread::JoinHandle<()>> {
    thread::Builder::new().name("tj-pump".into()).spawn(move || {
        signals::block_stop_signal();
        let report = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if let Some(prepare) = prepare {
                prepare();
            }
            pump.run()
        }))
        .unwrap_or_else(|_| PumpReport {
            warnings: vec!["the output relay failed; output after that point was lost".into()],
            ..PumpReport::default()
        });
        let _ = tx.send(Event::PumpDone(report));
    })
}

/// The outcome of a command that ran: how it ended (`status`, from waiting for it), how
/// long it ran, and what the relay and the supervisor reported.
fn outcome(
    done: signals::Supervised,
    status: io::Result<std::process::ExitStatus>,
    duration: Duration,
    cols: Option<u16>,
    mut warnings: Vec<String>,
) -> Outcome {
    let report = done.pump.unwrap_or_else(|| PumpReport {
        warnings: vec!["the output relay stopped early".into()],
        ..PumpReport::default()
    });
    let exit = match status {
        Ok(status) => signals::exit_of(status).ok_or_else(|| {
            SpawnError::Other(format!("could not tell how the command ended: {status}"))
        }),
        Err(err) => Err(other("could not wait for the command", &err)),
    };
    warnings.extend(report.warnings);
    Outcome {
        exit,
        duration,
        pty_held_open: report.held_open,
        // The hang-up is said only if it reached the command (it may have exited first).
        live_lost: report.live_lost.filter(|_| !report.hang_up_asked || done.hung_up),
        reader_gone: report.reader_gone,
        warnings,
        blocked: done.blocked,
        cols,
        ended_by: done.ended_by,
    }
}

/// Opens where the child's output goes: a PTY sized and set up as the user's terminal, or,
/// with `--no-pty` or when no PTY can be had, one pipe. Returns the pump's read side, the
/// child's side, and the master.
fn open_output(
    spec: &Spec,
    term: &Terminal,
    warnings: &mut Vec<String>,
) -> Result<(OwnedFd, exec::Output, Option<pty::Master>), SpawnError> {
    if spec.pty {
        let opened = pty::open(term.size(), term.user_termios(), untranslated(spec, term))
            .and_then(|opened| {
                let source = pty::dup_master(&opened.master)?;
                Ok((source, opened))
            });
        match opened {
            Ok((source, opened)) => {
                return Ok((source, exec::Output::Pty(opened.slave), Some(opened.master)));
            }
            // Fail open: the command still runs and its output is still shown and captured.
            Err(err) => warnings.push(format!(
                "could not open a pseudo-terminal ({err:#}); running with one pipe for stdout and stderr"
            )),
        }
    }
    let (read, write) = io::pipe().map_err(|err| setup("could not create a pipe", &err))?;
    Ok((OwnedFd::from(read), exec::Output::Pipe(OwnedFd::from(write)), None))
}

/// Whether the PTY leaves `\n` untranslated (OPOST off): see [`Spec::raw_output`] and
/// [`Spec::translate_in_capture`]. Never when tj forwards keystrokes: the echo of what is
/// typed then goes through the line discipline as the user's terminal would have it.
fn untranslated(spec: &Spec, term: &Terminal) -> bool {
    (spec.raw_output || spec.translate_in_capture) && !term.wants_keys()
}

/// Waits for the pump's report, ignoring other events (the child never ran).
fn wait_pump(rx: &mpsc::Receiver<Event>) -> PumpReport {
    loop {
        match rx.recv() {
            Ok(Event::PumpDone(report)) => return report,
            Ok(_) => {}
            Err(_) => return PumpReport::default(),
        }
    }
}

fn other(what: &str, err: &io::Error) -> SpawnError {
    SpawnError::Other(format!("{what}: {err}"))
}

fn setup(what: &str, err: &io::Error) -> SpawnError {
    SpawnError::Setup(format!("{what}: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::mpsc::RecvTimeoutError;

    const DEADLINE: Duration = Duration::from_secs(30);

    /// Runs `argv` and injects `sig` into the relay as if tj had received it: once the
    /// child has printed `ready`, or, with `wait_ready` false, as soon as the child's process
    /// runs the program `argv` names (`env … sleep 100`: once it is `sleep`, with the
    /// dispositions `env` left it), as far as `/proc` shows.
    fn deliver(argv: &[&str], wait_ready: bool, sig: libc::c_int, grace: Duration) -> Outcome {
        let mut spec = Spec::new(argv.iter().map(OsString::from).collect(), PathBuf::from("/"));
        spec.size = Some(WinSize::default());
        spec.grace = grace;
        let (ready_tx, ready_rx) = mpsc::channel();
        let mut seen = Vec::new();
        let io = RelayIo {
            live: None,
            capture: Box::new(move |bytes| {
                seen.extend_from_slice(bytes);
                if seen.windows(5).any(|w| w == b"ready") {
                    let _ = ready_tx.send(());
                }
            }),
            stdin: Some(std::fs::File::open("/dev/null").unwrap().into()),
            stderr: None,
            prepare: None,
            capture_may_stall: false,
            reader: None,
        };
        let (events_tx, events_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel();
        // The program the child ends up running: the first word after any `env` prefix.
        let program = argv
            .iter()
            .find(|word| **word != "env" && !word.starts_with('-'))
            .copied()
            .unwrap_or_default()
            .to_owned();
        thread::spawn(move || {
            let outcome = relay(&spec, io, |events, pid| {
                if !wait_ready {
                    wait_exec(pid, &program);
                    events.send(Event::Signal(sig)).unwrap();
                }
                events_tx.send(events.clone()).unwrap();
            });
            let _ = done_tx.send(outcome);
        });
        let events = events_rx.recv_timeout(DEADLINE).unwrap();
        if wait_ready {
            ready_rx.recv_timeout(DEADLINE).unwrap();
            events.send(Event::Signal(sig)).unwrap();
        }
        match done_rx.recv_timeout(DEADLINE) {
            Ok(outcome) => outcome,
            Err(RecvTimeoutError::Timeout) => panic!("run() did not return"),
            Err(err) => panic!("{err}"),
        }
    }

    /// Waits until process `pid` runs `program` (its `comm`), where `/proc` exists.
    fn wait_exec(pid: Pid, program: &str) {
        let comm = format!("/proc/{pid}/comm");
        if !std::path::Path::new("/proc/self/comm").exists() {
            return;
        }
        let deadline = Instant::now() + DEADLINE;
        while std::fs::read_to_string(&comm).is_ok_and(|c| c.trim_end() != program) {
            assert!(Instant::now() < deadline, "{pid} never ran {program}");
            thread::sleep(Duration::from_millis(5));
        }
    }

    const LONG: Duration = Duration::from_secs(60);

    /// `argv` run with SIGINT, SIGQUIT and SIGHUP at their default action.
    ///
    /// A child inherits the signals its parent ignores, and a test binary started in the
    /// background of a script (`cargo test &`) or under `nohup` ignores some of these: the
    /// child would then shrug off the very signal the test forwards, and the test would wait
    /// for the deadline. GNU `env --default-signal` resets them before the exec; where it is
    /// missing, `argv` runs as it is.
    fn with_default_signals(argv: &[&'static str]) -> Vec<&'static str> {
        static SUPPORTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let supported = *SUPPORTED.get_or_init(|| {
            std::process::Command::new("env")
                .args(["--default-signal=INT,QUIT,HUP", "true"])
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|status| status.success())
        });
        let mut full = Vec::new();
        if supported {
            full.extend(["env", "--default-signal=INT,QUIT,HUP"]);
        }
        full.extend_from_slice(argv);
        full
    }

    #[test]
    fn forwarded_signal_reaches_the_child_s_process_group() {
        // Both sh and its sleep must go for run() to return before the sleep ends.
        let outcome = deliver(&["sh", "-c", "echo ready; sleep 100"], true, libc::SIGTERM, LONG);
        assert_eq!(outcome.exit, Ok(Exit::Signal(libc::SIGTERM)));
    }

    #[test]
    fn child_ignoring_a_forwarded_signal_is_killed_after_the_grace() {
        let script = "trap '' TERM; echo ready; while :; do sleep 1; done";
        let outcome =
            deliver(&["sh", "-c", script], true, libc::SIGTERM, Duration::from_millis(100));
        assert_eq!(outcome.exit, Ok(Exit::Signal(libc::SIGKILL)));
    }

    #[test]
    fn forwarded_interrupt_ends_the_child_like_ctrl_c() {
        // Not through sh: dash catches SIGINT under -c, and one arriving between its fork
        // and exec is lost in the forked child, so the test would race the shell.
        let argv = with_default_signals(&["sleep", "100"]);
        let outcome = deliver(&argv, false, libc::SIGINT, LONG);
        assert_eq!(outcome.exit, Ok(Exit::Signal(libc::SIGINT)));
    }

    #[test]
    fn forwarded_quit_and_hangup_end_the_child() {
        for sig in [libc::SIGQUIT, libc::SIGHUP] {
            let outcome = deliver(&with_default_signals(&["sleep", "100"]), false, sig, LONG);
            assert_eq!(outcome.exit, Ok(Exit::Signal(sig)));
        }
    }

    #[test]
    fn stderr_goes_apart_only_when_it_is_another_file_than_stdout() {
        let tty = Endpoint { id: (5, 3, 0x8803), stream: false };
        let other_tty = Endpoint { id: (5, 4, 0x8804), stream: false };
        let pipe = Endpoint { id: (14, 1001, 0), stream: true };
        let other_pipe = Endpoint { id: (14, 1002, 0), stream: true };
        let null = Endpoint { id: (5, 4, 0x103), stream: false };
        let file = Endpoint { id: (259, 77, 0), stream: false };
        let rows = [
            ("terminal, both streams on it", Some(tty), Some(tty), false, false),
            ("terminal, 2>/dev/null", Some(tty), Some(null), false, true),
            ("terminal, 2>file", Some(tty), Some(file), false, true),
            ("terminal, 2> another terminal", Some(tty), Some(other_tty), false, true),
            ("terminal, 2> a pipe", Some(tty), Some(pipe), false, true),
            ("agent, 2>&1 into its pipe", Some(pipe), Some(pipe), true, false),
            ("agent, 2>/dev/null", Some(pipe), Some(null), true, true),
            ("agent, 2>file", Some(pipe), Some(file), true, true),
            ("agent, stderr on a person's terminal", Some(pipe), Some(tty), true, true),
            ("agent harness reading stderr apart", Some(pipe), Some(other_pipe), true, false),
            ("stderr closed", Some(tty), None, false, false),
            ("stdout closed", None, Some(file), true, false),
        ];
        for (name, out, err, agent, apart) in rows {
            assert_eq!(is_apart(out, err, agent), apart, "{name}");
        }
    }

    #[test]
    fn agent_pty_is_as_wide_as_columns_says_else_500() {
        let cols = |c: Option<&str>| WinSize::for_agent(c.map(std::ffi::OsStr::new)).cols;
        assert_eq!(cols(None), 500);
        assert_eq!(cols(Some("132")), 132);
        assert_eq!(cols(Some(" 40\n")), 40);
        for unusable in ["", "0", "-5", "wide", "80x24", "70000"] {
            assert_eq!(cols(Some(unusable)), 500, "{unusable:?}");
        }
        assert_eq!(WinSize::for_agent(None).rows, 24);
    }

    #[test]
    fn prepare_runs_before_any_output_is_read() {
        let mut spec = Spec::new(vec!["echo".into(), "hello".into()], PathBuf::from("/"));
        spec.size = Some(WinSize::default());
        let order = Arc::new(Mutex::new(Vec::new()));
        let (seen, prepared) = (Arc::clone(&order), Arc::clone(&order));
        let mut io = RelayIo::new(
            None,
            Box::new(move |bytes| seen.lock().unwrap().push(format!("{} bytes", bytes.len()))),
        );
        io.stdin = Some(std::fs::File::open("/dev/null").unwrap().into());
        // On the output thread, or on this one when it reads the output (`Pumping`), which
        // depends on whether another test's relay reads the signals meanwhile.
        io.prepare = Some(Box::new(move || prepared.lock().unwrap().push("prepared".to_owned())));
        let outcome = run(&spec, io);
        assert_eq!(outcome.exit, Ok(Exit::Code(0)));
        let order = order.lock().unwrap();
        assert_eq!(order.first().map(String::as_str), Some("prepared"), "{order:?}");
        assert!(order.len() > 1, "the output was not captured: {order:?}");
    }

    #[test]
    fn empty_argv_is_tj_s_own_failure() {
        let spec = Spec::new(Vec::new(), PathBuf::from("/"));
        let outcome = run(&spec, RelayIo::new(None, Box::new(|_| {})));
        assert!(matches!(outcome.exit, Err(SpawnError::Other(_))));
    }

    /// The names of this process's threads.
    fn thread_names() -> Vec<String> {
        std::fs::read_dir("/proc/self/task")
            .map(|tasks| {
                tasks
                    .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
                    .map(|comm| comm.trim_end().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A relay with nobody watching live and no keystrokes to forward, the first of its
    /// process (as `tj run --agent` is), reads the output and the signals on its own thread:
    /// `prepare` runs there, signals are still forwarded, and no thread is left.
    #[test]
    #[cfg(target_os = "linux")]
    fn alone_in_its_process_a_relay_starts_no_thread() {
        if !crate::testing::alone_in_a_process(
            "run::tests::alone_in_its_process_a_relay_starts_no_thread",
        ) {
            return;
        }
        let mut spec = Spec::new(vec!["echo".into(), "hello".into()], PathBuf::from("/"));
        spec.size = Some(WinSize::default());
        let here = thread::current().id();
        let prepared_on = Arc::new(Mutex::new(None));
        let prepared = Arc::clone(&prepared_on);
        let captured = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = Arc::clone(&captured);
        let mut io = RelayIo::new(None, Box::new(move |bytes| sink.lock().unwrap().extend(bytes)));
        io.stdin = Some(std::fs::File::open("/dev/null").unwrap().into());
        io.prepare =
            Some(Box::new(move || *prepared.lock().unwrap() = Some(thread::current().id())));
        let outcome = run(&spec, io);
        assert_eq!(outcome.exit, Ok(Exit::Code(0)));
        assert_eq!(*prepared_on.lock().unwrap(), Some(here), "prepare ran on another thread");
        assert_eq!(captured.lock().unwrap().as_slice(), b"hello\r\n");

        let outcome = deliver(
            &with_default_signals(&["sh", "-c", "echo ready; sleep 100"]),
            true,
            libc::SIGTERM,
            LONG,
        );
        assert_eq!(outcome.exit, Ok(Exit::Signal(libc::SIGTERM)));
        let names = thread_names();
        assert!(!names.iter().any(|name| name == "tj-pump" || name == "tj-signals"), "{names:?}");
    }

    #[test]
    fn spawn_errors_display_their_message() {
        let err = SpawnError::NotFound("cargo: command not found".into());
        assert_eq!(err.to_string(), "cargo: command not found");
    }
}
