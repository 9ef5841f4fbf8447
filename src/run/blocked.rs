//! The watchdog of agent mode: ends a run whose child sits silent waiting for input on the
//! PTY, where nobody will ever type (see [`Spec::blocked_after`](super::Spec)). In agent mode
//! the child's stdin is tj's own, but a program that opens `/dev/tty` (a password prompt, a
//! `[y/N]` question asked on the terminal, a pager, an editor, an installer) reads the PTY,
//! and without this would hang the run, and the agent, for ever.
//!
//! Three parts, so that the decision can be table-tested:
//! - [`IdleWatch`], fed by the pump with every chunk: when output was last seen, whether the
//!   alternate screen is on, and the line the cursor is on. After `blocked_after` without
//!   output it reports [`Event::Idle`], then again every [`RECHECK`] while the silence lasts;
//!   never while output flows, and nothing at all when the watch is off.
//! - [`observe`]: what the kernel says about the PTY and its foreground process group at that
//!   moment (impure; a few small reads under `/proc`, at most once per [`RECHECK`]).
//! - [`judge`]: the decision, a pure function of the [`Observations`].
//!
//! It kills nothing itself: `signals::supervise` ends a child judged blocked as it would on
//! a forwarded SIGTERM.

use std::fs;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use nix::sys::termios::{self, LocalFlags};
use nix::unistd;

use super::Blocked;
use super::signals::Event;

/// How often the observations are taken again while a silence lasts.
pub(super) const RECHECK: Duration = Duration::from_secs(1);

/// The line the cursor is on is kept up to this many bytes (its end is what matters).
const LINE_MAX: usize = 512;

/// What the pump reports when the output has been silent for `blocked_after` (and every
/// [`RECHECK`] after that while it stays silent).
#[derive(Debug)]
pub(super) struct Quiet {
    /// Time since the last output (or since the pump started, if there was none).
    pub(super) idle: Duration,
    /// The alternate screen was switched on in the output and not switched off since.
    pub(super) alt_screen: bool,
    /// The raw bytes of the line the cursor is on (after the last `\n`), at most
    /// [`LINE_MAX`].
    pub(super) last_line: Vec<u8>,
}

/// The pump's side of the watchdog: tracks the silence and the screen, reports [`Quiet`].
pub(super) struct IdleWatch {
    after: Duration,
    events: Sender<Event>,
    screen: Screen,
    last_output: Instant,
    /// `None`: `after` is too far away to represent; never check.
    next_check: Option<Instant>,
}

impl IdleWatch {
    /// Reports on `events` once `after` passes without output.
    pub(super) fn new(after: Duration, events: Sender<Event>) -> IdleWatch {
        let now = Instant::now();
        IdleWatch {
            after,
            events,
            screen: Screen::default(),
            last_output: now,
            next_check: now.checked_add(after),
        }
    }

    /// Takes note of a chunk of output: the silence starts again.
    pub(super) fn saw(&mut self, chunk: &[u8]) {
        self.screen.feed(chunk);
        self.last_output = Instant::now();
        self.next_check = self.last_output.checked_add(self.after);
    }

    /// How long the pump may wait for output before calling [`IdleWatch::check`]; `None`
    /// for ever.
    pub(super) fn until_check(&self) -> Option<Duration> {
        self.next_check.map(|at| at.saturating_duration_since(Instant::now()))
    }

    /// Reports [`Event::Idle`] if the check is due, and schedules the next one.
    pub(super) fn check(&mut self) {
        let now = Instant::now();
        if self.next_check.is_none_or(|at| now < at) {
            return;
        }
        self.next_check = now.checked_add(RECHECK);
        let _ = self.events.send(Event::Idle(Quiet {
            idle: now.saturating_duration_since(self.last_output),
            alt_screen: self.screen.alt,
            last_line: self.screen.line.clone(),
        }));
    }
}

/// Where a control sequence scan stands between two chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Esc {
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// Inside `ESC [`: `private` once a leading `?` came (and nothing made the sequence
    /// something else), `param` the number being read, `alt` once one of the numbers
    /// finished so far names the alternate screen.
    Csi { first: bool, private: bool, param: u32, alt: bool },
}

/// What the output did to the screen, as far as the watchdog cares: the alternate screen
/// (`ESC[?1049h`, `?1047h`, `?47h`, switched off by the same with `l`, or by `ESC c`) and
/// the line the cursor is on. Sequences split across chunks are followed.
#[derive(Debug, Default)]
struct Screen {
    alt: bool,
    esc: Esc,
    line: Vec<u8>,
}

/// The DEC private modes that switch to the alternate screen.
const ALT_MODES: [u32; 3] = [47, 1047, 1049];

impl Screen {
    fn feed(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        while !rest.is_empty() {
            if self.esc == Esc::Ground {
                // Most output has no escape at all: skip to the next one.
                match rest.iter().position(|&b| b == 0x1b) {
                    Some(at) => {
                        self.esc = Esc::Escape;
                        rest = rest.get(at + 1..).unwrap_or_default();
                    }
                    None => break,
                }
                continue;
            }
            let Some((&b, tail)) = rest.split_first() else { break };
            self.step(b);
            rest = tail;
        }
        match chunk.iter().rposition(|&b| b == b'\n') {
            Some(at) => {
                let line = chunk.get(at + 1..).unwrap_or_default();
                self.line.clear();
                self.line.extend_from_slice(
                    line.get(line.len().saturating_sub(LINE_MAX)..).unwrap_or_default(),
                );
            }
            None => self.line.extend_from_slice(
                chunk.get(chunk.len().saturating_sub(LINE_MAX)..).unwrap_or_default(),
            ),
        }
        if self.line.len() > LINE_MAX {
            self.line.drain(..self.line.len() - LINE_MAX);
        }
    }

    /// One byte inside an escape sequence.
    fn step(&mut self, b: u8) {
        self.esc = match (self.esc, b) {
            (_, 0x1b) => Esc::Escape,
            // CAN and SUB abort a sequence.
            (_, 0x18 | 0x1a) => Esc::Ground,
            (Esc::Escape, b'[') => Esc::Csi { first: true, private: false, param: 0, alt: false },
            (Esc::Escape, b'c') => {
                // RIS, a full reset: back on the normal screen.
                self.alt = false;
                Esc::Ground
            }
            (Esc::Escape, _) => Esc::Ground,
            (Esc::Csi { first: true, .. }, b'?') => {
                Esc::Csi { first: false, private: true, param: 0, alt: false }
            }
            (Esc::Csi { private, param, alt, .. }, b'0'..=b'9') => Esc::Csi {
                first: false,
                private,
                param: param.saturating_mul(10).saturating_add(u32::from(b - b'0')),
                alt,
            },
            (Esc::Csi { private, param, alt, .. }, b';') => {
                Esc::Csi { first: false, private, param: 0, alt: alt || ALT_MODES.contains(&param) }
            }
            // Other parameter and intermediate bytes: not a plain DEC private mode.
            (Esc::Csi { .. }, 0x20..=0x3f) => {
                Esc::Csi { first: false, private: false, param: 0, alt: false }
            }
            (Esc::Csi { private, param, alt, .. }, b'h' | b'l') => {
                if private && (alt || ALT_MODES.contains(&param)) {
                    self.alt = b == b'h';
                }
                Esc::Ground
            }
            (Esc::Csi { .. }, 0x40..=0x7e) => Esc::Ground,
            // Other C0 controls are executed in the middle of a sequence without ending it.
            (esc @ Esc::Csi { .. }, 0x00..=0x1f) => esc,
            (Esc::Csi { .. } | Esc::Ground, _) => Esc::Ground,
        };
    }
}

/// The PTY's line discipline, as `tcgetattr` on the master reads it (termios calls on a
/// master act on the slave's settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LineMode {
    /// ECHO: typed characters are echoed. Programs reading a secret switch it off.
    pub(super) echo: bool,
    /// ICANON: input is read a line at a time. Programs that react to single keys
    /// (pagers, editors, menus, "press any key") switch it off (raw or cbreak mode).
    pub(super) canonical: bool,
}

/// What the line the cursor is on looks like. Supporting evidence only: ordinary output
/// can end in `: ` too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Prompt {
    /// Not like a prompt.
    No,
    /// Like a question or prompt (`Continue? [y/N] `, `Name: `, `> `, `--More--`).
    Plain,
    /// Like a prompt for a password or passphrase.
    Secret,
}

/// One thread of a process in the PTY's foreground process group, from
/// `/proc/<pid>/task/<tid>/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Task {
    /// The state letter of `stat`: `S` asleep (interruptibly), `R` running, `D` in
    /// uninterruptible I/O, `T` stopped, …
    pub(super) state: char,
    /// Where it sleeps in the kernel (`wchan`), without a compiler suffix such as
    /// `.constprop.0`; `None` when not permitted (it shows `0` for a setuid program such as
    /// sudo) or absent.
    pub(super) wchan: Option<String>,
    /// The system call it is in (`syscall`); `None` when that cannot be read (not
    /// permitted, or an architecture whose numbers we do not list).
    pub(super) call: Option<Call>,
}

/// What a thread's `/proc/…/syscall` says it is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Call {
    /// `read(2)`, `readv(2)` or `pread(2)` of a terminal: the PTY or `/dev/tty`.
    ReadTty,
    /// `poll(2)`, `select(2)`, `epoll_wait(2)` or a variant: waiting for some descriptors.
    Poll,
    /// Any other system call, a read of anything else (a pipe, a socket) included, or none.
    Other,
}

/// Everything [`judge`] decides on, gathered by [`observe`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Observations {
    /// Time since the last output.
    pub(super) idle: Duration,
    /// The PTY's line discipline; `None` if it could not be read.
    pub(super) line: Option<LineMode>,
    /// The output switched to the alternate screen and did not switch back.
    pub(super) alt_screen: bool,
    /// What the line the cursor is on looks like.
    pub(super) prompt: Prompt,
    /// The threads of the PTY's foreground process group; `None` when they could not be
    /// looked at (no `/proc`, or the group could not be read). An empty list means no
    /// process is in the foreground, so none can be reading the terminal.
    pub(super) tasks: Option<Vec<Task>>,
}

/// Kernel functions a thread sleeps in while in poll(2), select(2) or epoll_wait(2): it
/// may be waiting for the terminal (pagers and editors do), or for anything else.
const POLL_WAITS: [&str; 6] = [
    "poll_schedule_timeout",
    "do_sys_poll",
    "do_select",
    "core_sys_select",
    "ep_poll",
    "do_epoll_wait",
];

/// What a thread of the foreground group is doing, for [`judge`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    /// Asleep in a read of the terminal: certain.
    Tty,
    /// Asleep in `wait_woken`, where a terminal read sleeps on current kernels, but so does
    /// a blocking socket read; the system call could not be read to tell which.
    Woken,
    /// Asleep in poll/select/epoll: waiting for some descriptor, maybe the terminal.
    Poll,
    /// Asleep where we may not look (a setuid program).
    Unknown,
    /// Running, in disk I/O, stopped, or asleep in anything else (nanosleep, waiting for a
    /// child, a futex, reading a pipe or a socket): not waiting for the terminal.
    Elsewhere,
}

fn wait_of(task: &Task) -> Wait {
    if task.state != 'S' {
        return Wait::Elsewhere;
    }
    let wchan = task.wchan.as_deref();
    match (task.call, wchan) {
        (Some(Call::ReadTty), _) => Wait::Tty,
        (Some(Call::Poll), _) => Wait::Poll,
        (_, Some(w)) if POLL_WAITS.contains(&w) => Wait::Poll,
        (Some(Call::Other), _) => Wait::Elsewhere,
        // Older kernels report the terminal read itself.
        (None, Some("n_tty_read")) => Wait::Tty,
        (None, Some("wait_woken")) => Wait::Woken,
        (None, None) => Wait::Unknown,
        (None, Some(_)) => Wait::Elsewhere,
    }
}

/// Decides whether the child is blocked waiting for input on the PTY, and if so says how
/// (the reason the rendition gives). `None` when `after` is `None` (the watch is off) or
/// the silence is shorter than `after`.
///
/// A slow child (computing, sleeping, waiting for a child, the disk or the network) must
/// never be judged blocked, so one of these must hold:
/// 1. a thread of the foreground group is asleep in a read of the terminal (`syscall` shows
///    `read` on the PTY or `/dev/tty`, or `wchan` is `n_tty_read`): blocked whatever else;
/// 2. the terminal evidence, ECHO off with ICANON on (a password prompt), ICANON off (raw
///    or cbreak: a program reacting to keys), or the alternate screen on (a pager, an
///    editor), and some thread that may be waiting for the terminal (in poll/select,
///    `wait_woken`, or where we may not look, as with sudo), or no way to look at all;
/// 3. a thread asleep in `wait_woken` whose system call we could not read, with the line
///    the cursor is on looking like a prompt.
///
/// Everything else (no thread in a wait that could be the terminal, a prompt-like line
/// over a child reading a pipe, raw mode over a child in `sleep`) is not blocked.
pub(super) fn judge(obs: &Observations, after: Option<Duration>) -> Option<String> {
    let after = after?;
    if obs.idle < after {
        return None;
    }
    let waits: Option<Vec<Wait>> =
        obs.tasks.as_ref().map(|tasks| tasks.iter().map(wait_of).collect());
    let any =
        |wanted: &[Wait]| waits.as_ref().is_some_and(|w| w.iter().any(|w| wanted.contains(w)));
    let reading = any(&[Wait::Tty]);
    let may_read = waits.is_none() || any(&[Wait::Woken, Wait::Poll, Wait::Unknown]);
    let secret = obs.line.is_some_and(|line| !line.echo && line.canonical);
    let keys = obs.line.is_some_and(|line| !line.canonical);
    let terminal_evidence = secret || keys || obs.alt_screen;
    let prompted = any(&[Wait::Woken]) && obs.prompt != Prompt::No;
    if !(reading || (may_read && terminal_evidence) || prompted) {
        return None;
    }
    let reason = if secret {
        "reading the terminal with echo off (a password prompt?)"
    } else if obs.alt_screen && keys {
        "a full-screen program (a pager or an editor?) waiting for keys on the terminal"
    } else if obs.alt_screen {
        "a full-screen program waiting for input on the terminal"
    } else if keys {
        "reading the terminal key by key (raw mode)"
    } else if obs.prompt == Prompt::Secret {
        "reading the terminal after a password prompt"
    } else if obs.prompt == Prompt::Plain {
        "reading the terminal after a prompt"
    } else {
        "reading the terminal"
    };
    Some(reason.to_owned())
}

/// What the line a prompt would be on shows up to the cursor: escape sequences and control
/// characters dropped, a carriage return going back to the start, `ESC[K` erasing from the
/// cursor. A prompt waits with the cursor right after it.
fn before_cursor(bytes: &[u8]) -> String {
    let mut shown: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut col = 0;
    let mut it = bytes.iter().copied();
    while let Some(b) = it.next() {
        match b {
            0x1b => match it.next() {
                Some(b'[') => {
                    let mut last = 0;
                    for c in it.by_ref() {
                        if (0x40..=0x7e).contains(&c) {
                            last = c;
                            break;
                        }
                    }
                    if last == b'K' {
                        shown.truncate(col);
                    }
                }
                // OSC (titles, hyperlinks): up to BEL or ST.
                Some(b']') => {
                    while let Some(c) = it.next() {
                        if c == 0x07 {
                            break;
                        }
                        if c == 0x1b {
                            it.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            b'\r' => col = 0,
            0x08 => col = col.saturating_sub(1),
            b'\t' | 0x20..=0x7e | 0x80..=0xff => {
                let b = if b == b'\t' { b' ' } else { b };
                match shown.get_mut(col) {
                    Some(slot) => *slot = b,
                    None => shown.push(b),
                }
                col += 1;
            }
            _ => {}
        }
    }
    shown.truncate(col);
    String::from_utf8_lossy(&shown).into_owned()
}

/// Classifies the line the cursor is on (see [`Prompt`]).
pub(super) fn prompt_of(line: &[u8]) -> Prompt {
    let text = before_cursor(line);
    let lower = text.trim_end().to_lowercase();
    if lower.is_empty() {
        return Prompt::No;
    }
    let secret = ["password", "passphrase", "passcode"].iter().any(|word| lower.contains(word))
        || lower.split(|c: char| !c.is_alphanumeric()).any(|word| word == "pin");
    let ends = [":", "?", ">", "(y/n)", "[y/n]", "(yes/no)", "[yes/no]", "--more--", "(end)"]
        .iter()
        .any(|end| lower.ends_with(end));
    let asks = ["press enter", "press return", "press any key", "--more--"]
        .iter()
        .any(|phrase| lower.contains(phrase));
    let last_word = lower.rsplit(|c: char| !c.is_alphanumeric()).next().unwrap_or_default();
    let ends_secret = ["password", "passphrase", "passcode", "pin"].contains(&last_word);
    match (ends || asks || ends_secret, secret) {
        (true, true) => Prompt::Secret,
        (true, false) => Prompt::Plain,
        (false, _) => Prompt::No,
    }
}

/// The watchdog's side in the supervisor: looks at the PTY when the pump reports silence.
pub(super) struct Watchdog {
    after: Duration,
    /// A duplicate of the master: termios and the foreground group are read through it.
    master: OwnedFd,
}

impl Watchdog {
    /// Judges silences of at least `after` on the PTY whose master `master` duplicates.
    pub(super) fn new(after: Duration, master: OwnedFd) -> Watchdog {
        Watchdog { after, master }
    }

    /// The verdict on the silence the pump reported.
    pub(super) fn inspect(&self, quiet: &Quiet) -> Option<Blocked> {
        let obs = observe(self.master.as_fd(), quiet);
        judge(&obs, Some(self.after)).map(|reason| Blocked { idle: quiet.idle, reason })
    }
}

/// Gathers the [`Observations`] for `quiet`: the line discipline and the foreground process
/// group through the master, each of that group's threads under `/proc`.
pub(super) fn observe(master: BorrowedFd<'_>, quiet: &Quiet) -> Observations {
    let line = termios::tcgetattr(master).ok().map(|settings| LineMode {
        echo: settings.local_flags.contains(LocalFlags::ECHO),
        canonical: settings.local_flags.contains(LocalFlags::ICANON),
    });
    // TIOCGPGRP on a master reports the slave's foreground group (as `ps` and portable-pty
    // use it). 0 when there is none: then nobody can read the terminal without SIGTTIN.
    let tasks = match unistd::tcgetpgrp(master) {
        Ok(pgrp) if pgrp.as_raw() > 0 => foreground_tasks(pgrp.as_raw()),
        Ok(_) => Some(Vec::new()),
        Err(_) => None,
    };
    Observations {
        idle: quiet.idle,
        line,
        alt_screen: quiet.alt_screen,
        prompt: prompt_of(&quiet.last_line),
        tasks,
    }
}

/// The threads of the processes in process group `pgrp`; `None` without `/proc`.
///
/// Reads `stat` of every process to find the group's members (the group may hold processes
/// that are not our descendants any more), then `stat`, `wchan` and `syscall` of each of
/// their threads (a Go or Java program reads the terminal on some thread, not necessarily
/// the first). A few hundred small reads, once per [`RECHECK`] and only after the silence
/// threshold.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn foreground_tasks(pgrp: i32) -> Option<Vec<Task>> {
    use std::path::Path;

    fn task(process: &Path, dir: &Path) -> Option<Task> {
        let stat = Stat::parse(&fs::read_to_string(dir.join("stat")).ok()?)?;
        let wchan = fs::read_to_string(dir.join("wchan")).ok().and_then(|w| wchan_name(&w));
        let call = fs::read_to_string(dir.join("syscall"))
            .ok()
            .and_then(|text| call_of(&text, process, stat.tty));
        Some(Task { state: stat.state, wchan, call })
    }

    let procs = fs::read_dir("/proc").ok()?;
    let mut tasks = Vec::new();
    for entry in procs.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|name| name.bytes().all(|b| b.is_ascii_digit())) {
            continue;
        }
        let process = entry.path();
        let member = fs::read_to_string(process.join("stat"))
            .ok()
            .and_then(|text| Stat::parse(&text))
            .is_some_and(|stat| stat.pgrp == pgrp);
        if !member {
            continue;
        }
        let before = tasks.len();
        if let Ok(threads) = fs::read_dir(process.join("task")) {
            tasks.extend(threads.flatten().filter_map(|thread| task(&process, &thread.path())));
        }
        if tasks.len() == before {
            tasks.extend(task(&process, &process));
        }
    }
    Some(tasks)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn foreground_tasks(_pgrp: i32) -> Option<Vec<Task>> {
    None
}

/// The [`Call`] a thread of `process` is in, from its `syscall` file: a read is of a
/// terminal when the descriptor is a character device that is `tty` (its controlling
/// terminal, here the PTY) or `/dev/tty`. `None` when the file or the descriptor cannot be
/// read.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn call_of(syscall: &str, process: &std::path::Path, tty: u64) -> Option<Call> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};

    /// `/dev/tty`, major 5 minor 0, as the kernel encodes it (in `stat` and `st_rdev`).
    const DEV_TTY: u64 = 5 << 8;
    Some(match parse_syscall(syscall)? {
        Syscall::Read(fd) => {
            let meta = fs::metadata(process.join("fd").join(fd.to_string())).ok()?;
            let rdev = meta.rdev();
            let tty =
                meta.file_type().is_char_device() && (rdev == DEV_TTY || (tty != 0 && rdev == tty));
            if tty { Call::ReadTty } else { Call::Other }
        }
        Syscall::Poll => Call::Poll,
        Syscall::Other => Call::Other,
    })
}

/// A `/proc/…/syscall` line, before the descriptor of a read is looked at.
#[derive(Debug, PartialEq, Eq)]
enum Syscall {
    /// A read of this descriptor.
    Read(u64),
    Poll,
    Other,
}

/// Parses `NR arg0 arg1 … sp pc` (`-1 sp pc` when blocked outside a system call,
/// `running`); `None` if the line makes no sense or the number is not one we know.
fn parse_syscall(line: &str) -> Option<Syscall> {
    let mut words = line.split_whitespace();
    let first = words.next()?;
    if first == "running" {
        return Some(Syscall::Other);
    }
    let nr: libc::c_long = first.parse().ok()?;
    if nr < 0 {
        return Some(Syscall::Other);
    }
    let (reads, polls) = syscall_numbers()?;
    if reads.contains(&nr) {
        let arg = words.next()?;
        let fd = u64::from_str_radix(arg.strip_prefix("0x").unwrap_or(arg), 16).ok()?;
        return Some(Syscall::Read(fd));
    }
    Some(if polls.contains(&nr) { Syscall::Poll } else { Syscall::Other })
}

/// The numbers of the read calls and of the poll calls, on the architectures whose tables
/// we list (others are left to `wchan`: a call we cannot name proves nothing).
fn syscall_numbers() -> Option<(&'static [libc::c_long], &'static [libc::c_long])> {
    #[cfg(all(any(target_os = "linux", target_os = "android"), target_arch = "x86_64"))]
    return Some((
        &[libc::SYS_read, libc::SYS_readv, libc::SYS_pread64],
        &[
            libc::SYS_poll,
            libc::SYS_select,
            libc::SYS_epoll_wait,
            libc::SYS_ppoll,
            libc::SYS_pselect6,
            libc::SYS_epoll_pwait,
        ],
    ));
    #[cfg(all(any(target_os = "linux", target_os = "android"), target_arch = "aarch64"))]
    return Some((
        &[libc::SYS_read, libc::SYS_readv, libc::SYS_pread64],
        &[libc::SYS_ppoll, libc::SYS_pselect6, libc::SYS_epoll_pwait],
    ));
    #[allow(unreachable_code)]
    None
}

/// `wchan` without the compiler's suffix (`poll_schedule_timeout.constprop.0`); `None` for
/// `0` or nothing (not permitted, or not asleep).
fn wchan_name(text: &str) -> Option<String> {
    let name = text.trim().split('.').next().unwrap_or_default();
    (!name.is_empty() && name != "0").then(|| name.to_owned())
}

/// The fields of `/proc/<pid>/stat` the watchdog uses.
#[derive(Debug, PartialEq, Eq)]
struct Stat {
    state: char,
    pgrp: i32,
    /// The controlling terminal's device number (0 for none).
    tty: u64,
}

impl Stat {
    /// Parses `pid (comm) state ppid pgrp session tty_nr …`; the command name may hold
    /// spaces and parentheses, so the fields are counted after the last `)`.
    fn parse(text: &str) -> Option<Stat> {
        let (_, fields) = text.rsplit_once(')')?;
        let mut fields = fields.split_whitespace();
        let state = fields.next()?.chars().next()?;
        let _ppid = fields.next()?;
        let pgrp = fields.next()?.parse().ok()?;
        let _session = fields.next()?;
        let tty = fields.next()?.parse::<i64>().ok()?;
        Some(Stat { state, pgrp, tty: u64::try_from(tty).unwrap_or(0) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AFTER: Option<Duration> = Some(Duration::from_secs(60));

    fn task(state: char, wchan: Option<&str>, call: Option<Call>) -> Task {
        Task { state, wchan: wchan.map(str::to_owned), call }
    }

    const COOKED: LineMode = LineMode { echo: true, canonical: true };
    const NO_ECHO: LineMode = LineMode { echo: false, canonical: true };
    const RAW: LineMode = LineMode { echo: false, canonical: false };

    fn obs(
        line: LineMode,
        alt_screen: bool,
        prompt: Prompt,
        tasks: Option<Vec<Task>>,
    ) -> Observations {
        Observations { idle: Duration::from_secs(61), line: Some(line), alt_screen, prompt, tasks }
    }

    /// Each row: a name, the observations, and the reason expected (`None`: not blocked).
    #[test]
    fn judge_table() {
        let tty_read = || {
            Some(vec![
                task('S', Some("do_wait"), Some(Call::Other)),
                task('S', Some("wait_woken"), Some(Call::ReadTty)),
            ])
        };
        let rows: Vec<(&str, Observations, Option<&str>)> = vec![
            (
                "password prompt read by a shell builtin",
                obs(NO_ECHO, false, Prompt::Secret, tty_read()),
                Some("reading the terminal with echo off (a password prompt?)"),
            ),
            (
                "question read from /dev/tty",
                obs(COOKED, false, Prompt::Plain, tty_read()),
                Some("reading the terminal after a prompt"),
            ),
            (
                "tty read without any prompt",
                obs(COOKED, false, Prompt::No, tty_read()),
                Some("reading the terminal"),
            ),
            (
                "old kernel: wchan n_tty_read, syscall unreadable",
                obs(COOKED, false, Prompt::No, Some(vec![task('S', Some("n_tty_read"), None)])),
                Some("reading the terminal"),
            ),
            (
                "pager on the alternate screen reading keys",
                obs(
                    RAW,
                    true,
                    Prompt::Plain,
                    Some(vec![task('S', Some("wait_woken"), Some(Call::ReadTty))]),
                ),
                Some(
                    "a full-screen program (a pager or an editor?) waiting for keys on the terminal",
                ),
            ),
            (
                "editor polling the terminal in raw mode",
                obs(
                    RAW,
                    true,
                    Prompt::No,
                    Some(vec![task('S', Some("do_select"), Some(Call::Poll))]),
                ),
                Some(
                    "a full-screen program (a pager or an editor?) waiting for keys on the terminal",
                ),
            ),
            (
                "menu in cbreak mode, polling",
                obs(
                    LineMode { echo: true, canonical: false },
                    false,
                    Prompt::No,
                    Some(vec![task('S', Some("poll_schedule_timeout"), Some(Call::Poll))]),
                ),
                Some("reading the terminal key by key (raw mode)"),
            ),
            (
                "sudo: setuid, wchan hidden, echo off",
                obs(NO_ECHO, false, Prompt::Secret, Some(vec![task('S', None, None)])),
                Some("reading the terminal with echo off (a password prompt?)"),
            ),
            (
                "no /proc: termios evidence alone",
                obs(NO_ECHO, false, Prompt::No, None),
                Some("reading the terminal with echo off (a password prompt?)"),
            ),
            (
                "wait_woken, syscall unreadable, prompt",
                obs(COOKED, false, Prompt::Secret, Some(vec![task('S', Some("wait_woken"), None)])),
                Some("reading the terminal after a password prompt"),
            ),
            (
                "pager, wchan hidden, syscall poll",
                obs(RAW, true, Prompt::No, Some(vec![task('S', None, Some(Call::Poll))])),
                Some(
                    "a full-screen program (a pager or an editor?) waiting for keys on the terminal",
                ),
            ),
            // Slow, not blocked.
            (
                "echo off, wchan hidden, syscall says another call",
                obs(NO_ECHO, false, Prompt::Secret, Some(vec![task('S', None, Some(Call::Other))])),
                None,
            ),
            (
                "sleep",
                obs(
                    COOKED,
                    false,
                    Prompt::No,
                    Some(vec![
                        task('S', Some("do_wait"), Some(Call::Other)),
                        task('S', Some("hrtimer_nanosleep"), Some(Call::Other)),
                    ]),
                ),
                None,
            ),
            (
                "computing",
                obs(COOKED, false, Prompt::Plain, Some(vec![task('R', None, Some(Call::Other))])),
                None,
            ),
            (
                "disk I/O",
                obs(NO_ECHO, false, Prompt::No, Some(vec![task('D', Some("io_schedule"), None)])),
                None,
            ),
            (
                "prompt over a pipe read",
                obs(
                    COOKED,
                    false,
                    Prompt::Plain,
                    Some(vec![task('S', Some("pipe_read"), Some(Call::Other))]),
                ),
                None,
            ),
            (
                "prompt over a socket read (wait_woken, syscall says not a tty)",
                obs(
                    COOKED,
                    false,
                    Prompt::Plain,
                    Some(vec![task('S', Some("wait_woken"), Some(Call::Other))]),
                ),
                None,
            ),
            (
                "network poll with a prompt-like line, cooked terminal",
                obs(
                    COOKED,
                    false,
                    Prompt::Plain,
                    Some(vec![task('S', Some("do_sys_poll"), Some(Call::Poll))]),
                ),
                None,
            ),
            (
                "raw mode over a sleeping child",
                obs(
                    RAW,
                    false,
                    Prompt::No,
                    Some(vec![task('S', Some("hrtimer_nanosleep"), Some(Call::Other))]),
                ),
                None,
            ),
            (
                "alternate screen over a computing child",
                obs(RAW, true, Prompt::No, Some(vec![task('R', None, None)])),
                None,
            ),
            ("no foreground process", obs(NO_ECHO, true, Prompt::Secret, Some(Vec::new())), None),
            (
                "stopped reader",
                obs(
                    NO_ECHO,
                    false,
                    Prompt::Secret,
                    Some(vec![task('T', Some("do_signal_stop"), Some(Call::Other))]),
                ),
                None,
            ),
            ("no /proc, cooked, prompt only", obs(COOKED, false, Prompt::Plain, None), None),
        ];
        for (name, obs, want) in rows {
            assert_eq!(judge(&obs, AFTER).as_deref(), want, "{name}");
        }
    }

    #[test]
    fn judge_waits_for_the_threshold() {
        let mut o = obs(
            NO_ECHO,
            false,
            Prompt::Secret,
            Some(vec![task('S', Some("wait_woken"), Some(Call::ReadTty))]),
        );
        o.idle = Duration::from_millis(59_999);
        assert_eq!(judge(&o, AFTER), None);
        o.idle = Duration::from_secs(60);
        assert!(judge(&o, AFTER).is_some());
    }

    #[test]
    fn judge_never_fires_when_the_watch_is_off() {
        let mut o = obs(
            NO_ECHO,
            true,
            Prompt::Secret,
            Some(vec![task('S', Some("n_tty_read"), Some(Call::ReadTty))]),
        );
        for idle in [Duration::ZERO, Duration::from_secs(3600), Duration::MAX] {
            o.idle = idle;
            assert_eq!(judge(&o, None), None);
        }
        assert_eq!(super::super::Spec::new(vec!["x".into()], "/".into()).blocked_after, None);
    }

    #[test]
    fn prompt_table() {
        let rows: &[(&[u8], Prompt)] = &[
            (b"Password: ", Prompt::Secret),
            (b"[sudo] password for bob: ", Prompt::Secret),
            (b"Enter passphrase for key '/home/b/.ssh/id': ", Prompt::Secret),
            (b"bob@host's password:", Prompt::Secret),
            (b"Continue? [y/N] ", Prompt::Plain),
            (b"Do you want to continue? [Y/n]", Prompt::Plain),
            (b"Overwrite (y/n)", Prompt::Plain),
            (
                b"Are you sure you want to continue connecting (yes/no/[fingerprint])? ",
                Prompt::Plain,
            ),
            (b"Name: ", Prompt::Plain),
            (b"> ", Prompt::Plain),
            (b"--More--(42%)", Prompt::Plain),
            (b"Press Enter to continue", Prompt::Plain),
            (b"\x1b[1mProceed?\x1b[0m ", Prompt::Plain),
            (b"Downloading 40%\rContinue? ", Prompt::Plain),
            (b"Continue? \r\x1b[K", Prompt::No),
            (b"", Prompt::No),
            (b"   ", Prompt::No),
            (b"Compiling foo v0.1.0", Prompt::No),
            (b"[=====>      ] 42%", Prompt::No),
            (b"ok", Prompt::No),
            (b"Enter PIN: ", Prompt::Secret),
            (b"Resetting password for user bob", Prompt::No),
            (b"Spinning: ", Prompt::Plain),
            (b"Enter your password", Prompt::Secret),
            (b"spin", Prompt::No),
            (b"building 3 of 7 \x1b[?25l", Prompt::No),
        ];
        for (line, want) in rows {
            assert_eq!(prompt_of(line), *want, "{:?}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn screen_follows_the_alternate_screen_across_chunks() {
        let mut screen = Screen::default();
        screen.feed(b"hello \x1b[?10");
        assert!(!screen.alt);
        screen.feed(b"49h");
        assert!(screen.alt);
        screen.feed(b"\x1b[?1049l");
        assert!(!screen.alt);
        for on in [&b"\x1b[?47h"[..], b"\x1b[?1047h", b"\x1b[?1049;1006h", b"\x1b[?1006;1049h"] {
            let mut screen = Screen::default();
            screen.feed(on);
            assert!(screen.alt, "{on:?}");
            screen.feed(b"\x1bc");
            assert!(!screen.alt, "{on:?} then RIS");
        }
        for not in
            [&b"\x1b[1049h"[..], b"\x1b[?1049m", b"\x1b[?25h", b"\x1b[>1049h", b"\x1b[?1049\x18h"]
        {
            let mut screen = Screen::default();
            screen.feed(not);
            assert!(!screen.alt, "{not:?}");
        }
    }

    #[test]
    fn screen_keeps_the_line_the_cursor_is_on() {
        let mut screen = Screen::default();
        screen.feed(b"one\r\ntwo\r\nPass");
        screen.feed(b"word: ");
        assert_eq!(screen.line, b"Password: ");
        screen.feed(b"\r\n");
        assert!(screen.line.is_empty());
        screen.feed(&vec![b'x'; 3 * LINE_MAX]);
        assert_eq!(screen.line.len(), LINE_MAX);
        screen.feed(&[&vec![b'y'; 3 * LINE_MAX][..], b"\nz"].concat());
        assert_eq!(screen.line, b"z");
    }

    #[test]
    fn stat_parses_names_with_spaces_and_parentheses() {
        let text = "19088 (my (odd) name) S 19047 19088 19088 34817 19088 4194304 398";
        assert_eq!(Stat::parse(text), Some(Stat { state: 'S', pgrp: 19088, tty: 34817 }));
        assert_eq!(Stat::parse("garbage"), None);
    }

    #[test]
    fn wchan_drops_suffixes_and_zero() {
        assert_eq!(
            wchan_name("poll_schedule_timeout.constprop.0").as_deref(),
            Some("poll_schedule_timeout")
        );
        assert_eq!(wchan_name("wait_woken").as_deref(), Some("wait_woken"));
        assert_eq!(wchan_name("0"), None);
        assert_eq!(wchan_name(""), None);
    }

    #[cfg(all(any(target_os = "linux", target_os = "android"), target_arch = "x86_64"))]
    #[test]
    fn syscall_lines_are_classified() {
        let line = |nr: libc::c_long, arg: &str| format!("{nr} {arg} 0x7ffd8b951b6f 0x1 0x0 0x2");
        assert_eq!(parse_syscall(&line(libc::SYS_read, "0x3")), Some(Syscall::Read(3)));
        assert_eq!(parse_syscall(&line(libc::SYS_pread64, "0x1f")), Some(Syscall::Read(31)));
        assert_eq!(parse_syscall(&line(libc::SYS_poll, "0x7ffd")), Some(Syscall::Poll));
        assert_eq!(parse_syscall(&line(libc::SYS_pselect6, "0x4")), Some(Syscall::Poll));
        assert_eq!(parse_syscall(&line(libc::SYS_wait4, "0x0")), Some(Syscall::Other));
        assert_eq!(parse_syscall("running"), Some(Syscall::Other));
        assert_eq!(parse_syscall("-1 0x7ffd 0x7f08"), Some(Syscall::Other));
        assert_eq!(parse_syscall(""), None);
        assert_eq!(parse_syscall("0"), None);
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_read_is_of_the_terminal_when_its_device_is_the_controlling_one() {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;

        let process = std::path::Path::new("/proc/self");
        let Some((reads, _)) = syscall_numbers() else { return };
        let read = reads[0];
        let null = fs::File::open("/dev/null").unwrap();
        let line = format!("{read} {:#x} 0x0 0x1", null.as_raw_fd());
        assert_eq!(call_of(&line, process, 0), Some(Call::Other));
        // The controlling terminal given by `stat`: here /dev/null's own number, which is
        // a character device as a terminal is.
        let rdev = fs::metadata("/dev/null").unwrap().rdev();
        assert_eq!(call_of(&line, process, rdev), Some(Call::ReadTty));
        assert_eq!(call_of(&format!("{read} 0x7fffffff 0x0"), process, rdev), None);
    }
}
