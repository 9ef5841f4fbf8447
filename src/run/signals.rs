//! Signals and the child's lifetime while the relay runs: SIGINT, SIGTERM, SIGHUP and
//! SIGQUIT received by tj are forwarded to the child's process group (then SIGKILL after the
//! grace period); SIGWINCH resizes the PTY; Ctrl-Z typed at tj's terminal suspends the child
//! and tj together, and SIGCONT takes the terminal back; the wait ends in an [`Exit`].
//!
//! It does not touch the terminal itself (`pty.rs` does, when told) and does not read output.

use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use libc::c_int;
use nix::sys::signal::{self as nix_signal, Signal};
use nix::unistd::{self, Pid};
use signal_hook::consts::{SIGCHLD, SIGCONT, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGWINCH};
use signal_hook::iterator::backend::SignalDelivery;
use signal_hook::iterator::exfiltrator::SignalOnly;

use super::blocked::{Quiet, Watchdog};
use super::exec::Child;
use super::pty::{PumpReport, Terminal};
use super::{Blocked, Exit};

/// What the event loop of [`supervise`] reacts to.
pub(super) enum Event {
    /// tj received this signal.
    Signal(c_int),
    /// The user typed the suspend character (Ctrl-Z) while the PTY would turn it into
    /// SIGTSTP (the stdin thread kept it from the PTY).
    Suspend,
    /// The child has exited (not reaped yet where `waitid(WNOWAIT)` exists). From then on,
    /// nothing more is sent to the command's process group: what is left in it (children
    /// the command started in the background) is not tj's to end, as it would not be the
    /// shell's without tj.
    Exited,
    /// The pump has read everything (or hit the drain cap).
    PumpDone(PumpReport),
    /// The output has been silent for `Spec::blocked_after` (sent again every second while
    /// it stays silent): the watchdog looks whether the child is blocked on input.
    Idle(Quiet),
    /// The command wrote output through the PTY after that output lost its reader: it is
    /// hung up on, as if tj had received SIGHUP (see `Pump::gone`).
    ReaderGone,
}

/// The signals forwarded to the child's process group.
const FORWARDED: [c_int; 4] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT];

/// Process-wide signal set-up, done once: see [`Watch`].
struct Registry {
    /// True while no relay runs: the forwarded signals then act as if tj had never touched
    /// them (default action), so tj can still be interrupted after `run` returns.
    idle: Arc<AtomicBool>,
    /// How many relays run (tests run several at once).
    running: Mutex<usize>,
    /// What could not be registered, said by every relay.
    problems: Vec<String>,
    /// The signals the relays watch, registered once (with SIGWINCH and SIGCONT), and who
    /// reads them.
    signals: Mutex<Slot>,
    /// SIGCHLD is among them: whoever reads them tells the relays when a child exits, and
    /// no relay needs a thread of its own to wait for its child ([`Watch::reports_exits`]).
    children: bool,
    /// tj was started with SIGCHLD ignored. The kernel would then reap tj's children itself
    /// and their exit status would be lost, so tj acts on SIGCHLD again; the command gets
    /// it ignored back before its exec ([`sigchld_was_ignored`]), as it would without tj.
    sigchld_ignored: bool,
    /// The event channel of each running relay, by [`Watch::id`]: every signal goes to all.
    listeners: Mutex<Vec<(u64, Sender<Event>)>>,
    next_id: AtomicU64,
}

static REGISTRY: OnceLock<Registry> = OnceLock::new();

/// The registered signals as they arrive: a flag each and a byte in a socket to wake the
/// reader.
type Delivery = SignalDelivery<UnixStream, SignalOnly>;

/// Who reads the registered signals.
enum Slot {
    /// Nobody yet, or nobody since the last relay that read them ended.
    Idle(Delivery),
    /// A relay, on its own thread ([`Watch::start`] with `direct`), which passes each
    /// signal on to the other relays as the signal thread would.
    Held,
    /// The signal thread, until the process exits.
    Thread,
    /// Nobody: they could not be registered (which every relay says).
    Unregistered,
}

fn registry() -> &'static Registry {
    REGISTRY.get_or_init(|| {
        let idle = Arc::new(AtomicBool::new(true));
        let mut forwarded = Vec::new();
        let mut problems = Vec::new();
        for sig in FORWARDED {
            // A signal tj was started with ignored (nohup, `cmd &` in a script) stays
            // ignored, so the child inherits that exactly as it would without tj.
            if is_ignored(sig) {
                continue;
            }
            match signal_hook::flag::register_conditional_default(sig, Arc::clone(&idle)) {
                Ok(_) => forwarded.push(sig),
                Err(err) => problems.push(format!("could not handle signal {sig}: {err}")),
            }
        }
        // The forwarded signals tj handles (those it was not started with ignored), and
        // those it acts on itself.
        let mut wanted = forwarded;
        wanted.extend([SIGWINCH, SIGCONT]);
        let sigchld_ignored = is_ignored(SIGCHLD);
        if sigchld_ignored {
            set_disposition(SIGCHLD, libc::SIG_DFL);
        }
        // Not when tj was started with SIGCHLD blocked: its handler would never run, and a
        // thread waits for the child instead, as it always did.
        let children = WAITS_WITHOUT_REAPING && !is_blocked(SIGCHLD);
        if children {
            wanted.push(SIGCHLD);
        }
        let signals = UnixStream::pair()
            .and_then(|(read, write)| SignalDelivery::with_pipe(read, write, SignalOnly, &wanted))
            .map_err(|err| problems.push(format!("could not watch signals: {err}")))
            .ok();
        Registry {
            idle,
            running: Mutex::new(0),
            problems,
            children: children && signals.is_some(),
            sigchld_ignored,
            signals: Mutex::new(signals.map_or(Slot::Unregistered, Slot::Idle)),
            listeners: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(0),
        }
    })
}

/// Puts back what tj changed of the signals it was started with, for an exec in tj's place
/// (a run tj could not set up): SIGCHLD ignored stays ignored, as in the command it spawns.
pub(super) fn restore_inherited() {
    if REGISTRY.get().is_some_and(|registry| registry.sigchld_ignored) {
        set_disposition(SIGCHLD, libc::SIG_IGN);
    }
}

/// Returns true if and only if the disposition of `sig` is SIG_IGN.
#[allow(unsafe_code)]
fn is_ignored(sig: c_int) -> bool {
    // SAFETY: a null new action makes sigaction(2) only report the current one into `old`,
    // a plain C struct for which all zeroes is a valid value.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Returns true if and only if `sig` is blocked on the calling thread.
fn is_blocked(sig: c_int) -> bool {
    let Ok(sig) = Signal::try_from(sig) else { return false };
    nix_signal::SigSet::thread_get_mask().is_ok_and(|mask| mask.contains(sig))
}

/// Sets the disposition of `sig` to `handler`: `SIG_DFL` (its default action) or `SIG_IGN`
/// (ignored; an exec keeps it so).
#[allow(unsafe_code)]
fn set_disposition(sig: c_int, handler: libc::sighandler_t) {
    // SAFETY: SIG_DFL and SIG_IGN install no handler of ours; sigaction only reads
    // `action`, a plain C struct for which all zeroes (empty mask, no flags) is valid.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler;
        libc::sigaction(sig, &action, std::ptr::null_mut());
    }
}

/// Whether tj was started with SIGPIPE ignored, noted by [`note_signals_at_start`] before
/// Rust's runtime ignored it for tj. Without the note (tests, or a platform where the binary
/// cannot run code that early), the command gets SIGPIPE's default, as std's spawn gives it.
static SIGPIPE_IGNORED_AT_START: AtomicBool = AtomicBool::new(false);

/// Notes the signal dispositions tj was started with that its runtime changes before `main`
/// (SIGPIPE, which Rust ignores), so that the command is started with them as tj was.
/// System calls only: the binary calls it from `.init_array`, before Rust's runtime starts.
pub(super) fn note_signals_at_start() {
    if is_ignored(libc::SIGPIPE) {
        SIGPIPE_IGNORED_AT_START.store(true, Ordering::Relaxed);
    }
}

/// Whether tj was started with SIGPIPE ignored: the command is then given it ignored too.
/// An atomic load: safe between fork (or clone) and exec.
pub(super) fn sigpipe_was_ignored() -> bool {
    SIGPIPE_IGNORED_AT_START.load(Ordering::Relaxed)
}

/// Whether tj was started with SIGCHLD ignored: the command is then given it ignored too.
/// Meaningful once a [`Watch`] has started.
pub(super) fn sigchld_was_ignored() -> bool {
    registry().sigchld_ignored
}

/// Delivers tj's signals to one relay's event loop while it lives. While any `Watch` lives,
/// the forwarded signals do not kill tj; when the last one goes they act by default again.
///
/// The signals are registered by the first relay of the process and stay registered. A
/// relay that waits for its output on its own thread can read them itself ([`Watch::fd`],
/// [`Watch::take`]): then no thread is started, which on every run of `tj run --agent`
/// would cost its creation, a wake-up and its end with the process (issue 13). Otherwise
/// one thread, started by [`Watch::listen`] and left running until the process exits,
/// sends each signal to every relay that watches. Relays that run at once in one process
/// (tests) all get every signal: a relay that reads them passes each on to the others,
/// and hands them to the signal thread when it ends before them.
pub(super) struct Watch {
    id: u64,
    /// The signals, while this relay reads them itself.
    delivery: Option<Delivery>,
    /// Someone reads the signals: this relay, another, or the signal thread.
    delivered: bool,
}

impl Watch {
    /// Starts delivering signals as [`Event::Signal`] on `tx`, or, with `direct` and when no
    /// other relay or thread reads them, to this relay's own [`Watch::take`]. A signal that
    /// comes from now on is queued until read; one that came earlier acted by default.
    pub(super) fn start(tx: Sender<Event>, direct: bool, warnings: &mut Vec<String>) -> Watch {
        let registry = registry();
        warnings.extend(registry.problems.iter().cloned());
        let id = registry.next_id.fetch_add(1, Ordering::Relaxed);
        let mut watch = Watch { id, delivery: None, delivered: false };
        if direct {
            let mut slot = registry.slot();
            if matches!(*slot, Slot::Idle(_))
                && let Slot::Idle(mut delivery) = std::mem::replace(&mut *slot, Slot::Held)
            {
                // Left from a relay that has ended: it received them, not this one.
                delivery.pending().for_each(drop);
                watch.delivery = Some(delivery);
                watch.delivered = true;
            }
        }
        registry.listeners.lock().unwrap_or_else(PoisonError::into_inner).push((id, tx));
        let mut running = registry.running.lock().unwrap_or_else(PoisonError::into_inner);
        *running += 1;
        registry.idle.store(false, Ordering::SeqCst);
        watch
    }

    /// Makes sure someone reads the signals, starting the signal thread if nobody does:
    /// called once the child has started, so that starting a thread does not delay it.
    /// Signals queued since [`Watch::start`] are delivered then.
    pub(super) fn listen(&mut self, warnings: &mut Vec<String>) {
        let registry = registry();
        let mut slot = registry.slot();
        if let Some(delivery) = self.delivery.take() {
            *slot = Slot::Idle(delivery);
        }
        match std::mem::replace(&mut *slot, Slot::Thread) {
            Slot::Idle(delivery) => match start_thread(delivery) {
                Ok(()) => self.delivered = true,
                Err((delivery, err)) => {
                    *slot = Slot::Idle(delivery);
                    warnings.push(format!("could not watch signals: {err}"));
                }
            },
            Slot::Held => {
                *slot = Slot::Held;
                self.delivered = true;
            }
            Slot::Thread => self.delivered = true,
            // They could not be registered, which `start` has said.
            Slot::Unregistered => *slot = Slot::Unregistered,
        }
    }

    /// What to poll for reading to learn that signals came, while this relay reads them
    /// itself.
    pub(super) fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.delivery.as_ref().map(|delivery| delivery.get_read().as_fd())
    }

    /// The signals that came since the last call, while this relay reads them itself
    /// (none otherwise), each also passed on to every other relay that watches.
    pub(super) fn take(&mut self) -> Vec<c_int> {
        let Some(delivery) = self.delivery.as_mut() else { return Vec::new() };
        let signals: Vec<c_int> = delivery.pending().collect();
        if !signals.is_empty() {
            let listeners = registry().listeners.lock().unwrap_or_else(PoisonError::into_inner);
            for (_, tx) in listeners.iter().filter(|(id, _)| *id != self.id) {
                for &sig in &signals {
                    let _ = tx.send(Event::Signal(sig));
                }
            }
        }
        signals
    }

    /// The first forwarded signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) that came since
    /// [`Watch::start`] and waits in the queue, taken from it: for a run whose command never
    /// started, so that a signal sent to tj meanwhile is not lost. None once the signal
    /// thread runs (it has delivered them).
    pub(super) fn received(&mut self) -> Option<c_int> {
        if let Some(delivery) = self.delivery.as_mut() {
            return delivery.pending().find(|sig| FORWARDED.contains(sig));
        }
        match &mut *registry().slot() {
            Slot::Idle(delivery) => delivery.pending().find(|sig| FORWARDED.contains(sig)),
            _ => None,
        }
    }

    /// Whether someone reads the signals and they report children's exits (SIGCHLD), so
    /// that the relay learns of its child's exit from its event loop with no thread waiting
    /// for it. Meaningful once [`Watch::listen`] has been called, or with `direct`.
    pub(super) fn reports_exits(&self) -> bool {
        registry().children && self.delivered
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let registry = registry();
        {
            let mut running = registry.running.lock().unwrap_or_else(PoisonError::into_inner);
            *running = running.saturating_sub(1);
            if *running == 0 {
                // Forwarded signals act by default from here: their handlers check this first.
                registry.idle.store(true, Ordering::SeqCst);
            }
        }
        // A signal delivered from now on finds no channel of this relay.
        let mut listeners = registry.listeners.lock().unwrap_or_else(PoisonError::into_inner);
        listeners.retain(|(id, _)| *id != self.id);
        if let Some(delivery) = self.delivery.take() {
            // Under the listeners' lock: a relay that starts meanwhile either is among them
            // (and the thread serves it) or finds the signals idle (and reads them or starts
            // the thread itself).
            let mut slot = registry.slot();
            *slot = if listeners.is_empty() {
                Slot::Idle(delivery)
            } else {
                match start_thread(delivery) {
                    Ok(()) => Slot::Thread,
                    // The other relays would learn of no signal, nor of their children's
                    // exits; that takes a process that cannot start a thread, and several
                    // relays in it (only tests run several).
                    Err((delivery, _)) => Slot::Idle(delivery),
                }
            };
        }
    }
}

impl Registry {
    fn slot(&self) -> MutexGuard<'_, Slot> {
        self.signals.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Starts the signal thread, which sends each signal to every relay that watches, until the
/// process exits; hands `delivery` back if it cannot.
fn start_thread(delivery: Delivery) -> Result<(), (Delivery, std::io::Error)> {
    // Through a slot of its own, so that it can be taken back if no thread starts.
    let shared = Arc::new(Mutex::new(Some(delivery)));
    let theirs = Arc::clone(&shared);
    let started = thread::Builder::new().name("tj-signals".into()).spawn(move || {
        block_stop_signal();
        let Some(mut delivery) = theirs.lock().unwrap_or_else(PoisonError::into_inner).take()
        else {
            return;
        };
        let registry = registry();
        loop {
            // A byte comes with every signal; the flags say which.
            let mut read = delivery.get_read();
            match read.read(&mut [0u8]) {
                Ok(1..) => {}
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                // Closed, or broken: nothing more will come.
                Ok(0) | Err(_) => return,
            }
            let signals: Vec<c_int> = delivery.pending().collect();
            let listeners = registry.listeners.lock().unwrap_or_else(PoisonError::into_inner);
            for (_, tx) in listeners.iter() {
                for &sig in &signals {
                    let _ = tx.send(Event::Signal(sig));
                }
            }
        }
    });
    match started {
        Ok(_detached) => Ok(()),
        Err(err) => {
            let delivery = shared.lock().unwrap_or_else(PoisonError::into_inner).take();
            Err((delivery.expect("the thread never started"), err))
        }
    }
}

/// Starts the thread that reports [`Event::Exited`] for `child`.
pub(super) fn start_waiter(child: &Arc<Mutex<Child>>, tx: Sender<Event>) -> std::io::Result<()> {
    let watched = Arc::clone(child);
    thread::Builder::new().name("tj-wait".into()).spawn(move || {
        block_stop_signal();
        wait_child(&watched, &tx);
    })?;
    Ok(())
}

/// Whether `waitid(WNOWAIT)` exists here: a child's exit can be seen without reaping it, so
/// that `Child::wait` still gets its status.
pub(super) const WAITS_WITHOUT_REAPING: bool =
    cfg!(any(target_os = "linux", target_os = "android", target_os = "freebsd"));

/// Whether `child` has exited (or there is nothing to wait for), without reaping it:
/// `Child::wait` then reaps it and tells which. With `block`, waits until then (and says
/// true); without, looks once.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn has_exited(child: Pid, block: bool) -> bool {
    use nix::errno::Errno;
    use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
    let mut flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT;
    if !block {
        flags |= WaitPidFlag::WNOHANG;
    }
    loop {
        match waitid(Id::Pid(child), flags) {
            Ok(WaitStatus::StillAlive) => return false,
            Err(Errno::EINTR) => {}
            // Exited or killed; or nothing to wait for.
            _ => return true,
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
fn has_exited(_: Pid, _: bool) -> bool {
    // Not called: without WNOWAIT the waiter thread reaps the child (`wait_child`).
    false
}

#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn wait_child(child: &Mutex<Child>, tx: &Sender<Event>) {
    let id = child.lock().unwrap_or_else(PoisonError::into_inner).id();
    has_exited(Pid::from_raw(i32::try_from(id).unwrap_or(i32::MAX)), true);
    let _ = tx.send(Event::Exited);
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
fn wait_child(child: &Mutex<Child>, tx: &Sender<Event>) {
    // Without waitid(WNOWAIT) we reap here; `Child` keeps the status for the caller's wait.
    let _ = child.lock().unwrap_or_else(PoisonError::into_inner).wait();
    let _ = tx.send(Event::Exited);
}

/// How often a relay started in the background looks whether it is in the foreground yet
/// (see [`Terminal::awaits_foreground`]). Only while that is the case; otherwise the loop
/// sleeps until an event.
const FOREGROUND_CHECK: Duration = Duration::from_millis(250);

/// What [`supervise`] returns once the child has exited and its output has been read.
pub(super) struct Supervised {
    pub(super) exited_at: Option<Instant>,
    pub(super) pump: Option<PumpReport>,
    /// The watchdog judged the child blocked on input and ended it.
    pub(super) blocked: Option<Blocked>,
    /// tj received this signal, forwarded it, and the child outlived the grace period, so
    /// tj killed it (see [`super::Outcome::ended_by`]).
    pub(super) ended_by: Option<c_int>,
    /// The command's output lost its reader, and its process group, still there, got the
    /// hang-up ([`Event::ReaderGone`]).
    pub(super) hung_up: bool,
}

/// The relay's event loop on the events of `rx`, run on the calling thread until the child
/// has exited and the pump (on a thread of its own) is done: see [`Supervisor`].
pub(super) fn supervise(mut supervisor: Supervisor<'_>, rx: &Receiver<Event>) -> Supervised {
    while !supervisor.finished() {
        let received = match supervisor.timeout() {
            Some(timeout) => rx.recv_timeout(timeout),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match received {
            Ok(event) => supervisor.on(event),
            Err(RecvTimeoutError::Timeout) => supervisor.on_time(),
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    supervisor.finish()
}

/// The relay's event loop, as a state that whoever waits for the events drives: [`supervise`]
/// on the channel, or the relay's thread waiting for the output and the signals itself.
/// `pid` is the command's process group, where signals go.
///
/// The child's exit comes as [`Event::Exited`] from a thread waiting for it, or, with
/// `child` (the process tj spawned), as a SIGCHLD after which `child` has exited
/// ([`Watch::reports_exits`]). SIGCHLD is never forwarded.
///
/// When the child exits, `exited` (the write end of the pipe the pump and the stdin thread
/// watch) is dropped: the pump starts its capped drain and the stdin thread stops.
///
/// When the pump reports a silence and `watchdog` judges the child blocked on input, the
/// child's process group gets SIGTERM and, after `grace`, SIGKILL: what a SIGTERM sent to
/// tj would do (DESIGN.md "Signals").
pub(super) struct Supervisor<'a> {
    pid: Pid,
    grace: Duration,
    term: &'a mut Terminal,
    exited: Option<std::io::PipeWriter>,
    watchdog: Option<&'a Watchdog>,
    child: Option<Pid>,
    done: Supervised,
    /// When the command's process group gets SIGKILL, if it has not exited by then.
    kill_at: Option<Instant>,
    /// The first signal tj received and forwarded (or SIGTERM from the watchdog).
    asked: Option<c_int>,
}

impl<'a> Supervisor<'a> {
    /// See [`Supervisor`] for the arguments.
    pub(super) fn new(
        pid: Pid,
        grace: Duration,
        term: &'a mut Terminal,
        exited: Option<std::io::PipeWriter>,
        watchdog: Option<&'a Watchdog>,
        child: Option<Pid>,
    ) -> Supervisor<'a> {
        Supervisor {
            pid,
            grace,
            term,
            exited,
            watchdog,
            child,
            done: Supervised {
                exited_at: None,
                pump: None,
                blocked: None,
                ended_by: None,
                hung_up: false,
            },
            kill_at: None,
            asked: None,
        }
    }

    /// The child has exited and the pump has reported.
    pub(super) fn finished(&self) -> bool {
        self.done.exited_at.is_some() && self.done.pump.is_some()
    }

    /// How long the next wait for an event may last before [`Supervisor::on_time`] is
    /// due; `None` for ever.
    pub(super) fn timeout(&self) -> Option<Duration> {
        [
            self.kill_at.map(|at| at.saturating_duration_since(Instant::now())),
            self.term.awaits_foreground().then_some(FOREGROUND_CHECK),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The wait of [`Supervisor::timeout`] ran out: the SIGKILL after the grace, if due,
    /// and a look whether tj is in the foreground again.
    pub(super) fn on_time(&mut self) {
        if self.kill_at.is_some_and(|at| at <= Instant::now()) {
            self.kill_at = None;
            if self.done.exited_at.is_none() {
                let _ = nix_signal::killpg(self.pid, Signal::SIGKILL);
                self.done.ended_by = self.asked;
            }
        }
        if self.term.awaits_foreground() && self.done.exited_at.is_none() {
            self.term.resume();
        }
    }

    /// Reacts to `event`.
    pub(super) fn on(&mut self, event: Event) {
        match event {
            Event::Exited => self.exited(),
            Event::PumpDone(report) => self.done.pump = Some(report),
            Event::Idle(quiet) => {
                if self.done.exited_at.is_none()
                    && self.done.blocked.is_none()
                    && let Some(blocked) =
                        self.watchdog.and_then(|watchdog| watchdog.inspect(&quiet))
                {
                    self.ask(SIGTERM);
                    self.done.blocked = Some(blocked);
                }
            }
            Event::Suspend if self.done.exited_at.is_none() && self.term.is_raw() => {
                suspend_with_child(self.pid, self.term);
            }
            Event::Suspend => {}
            Event::ReaderGone => {
                if self.done.exited_at.is_none() {
                    self.done.hung_up = self.ask(SIGHUP);
                }
            }
            Event::Signal(SIGCHLD) => {
                if self.done.exited_at.is_none()
                    && self.child.is_some_and(|child| has_exited(child, false))
                {
                    self.exited();
                }
            }
            Event::Signal(SIGWINCH) => self.term.resize(),
            Event::Signal(SIGCONT) => self.term.resume(),
            Event::Signal(sig) => {
                if self.done.exited_at.is_none() {
                    self.ask(sig);
                }
            }
        }
    }

    /// Asks the command to end with `sig` ([`forward`]), and SIGKILL after the grace period
    /// if it has not: what a signal sent to tj does. Returns whether its group was there.
    fn ask(&mut self, sig: c_int) -> bool {
        let sent = forward(self.pid, sig);
        self.asked.get_or_insert(sig);
        self.kill_at.get_or_insert_with(|| Instant::now() + self.grace);
        sent
    }

    /// Waits for the child's exit here, when nothing else can be waited with (`poll` failed):
    /// no signal is forwarded meanwhile.
    pub(super) fn wait_for_exit(&mut self) {
        if let Some(child) = self.child {
            has_exited(child, true);
        }
        self.exited();
    }

    /// The child has exited: the exit pipe hangs up (the pump drains, the stdin thread
    /// stops), and what is left in its process group is not tj's to stop.
    fn exited(&mut self) {
        self.done.exited_at = Some(Instant::now());
        self.exited = None;
        StopTogether::forget_job();
    }

    /// What the loop learned; the exit pipe hangs up if it has not.
    pub(super) fn finish(self) -> Supervised {
        drop(self.exited);
        self.done
    }
}

/// Sends `sig` to the child's process group; SIGTERM and SIGHUP are followed by SIGCONT
/// when the command is stopped, as a shell's `kill` does for a stopped job. Otherwise a
/// command stopped by SIGSTOP (its own `kill -STOP $$`, a debugger's) would hold the signal
/// pending until the SIGKILL after the grace period, and never run its handler for it.
/// Returns whether the group was there to take it.
fn forward(pid: Pid, sig: c_int) -> bool {
    let Ok(sig) = Signal::try_from(sig) else { return false };
    let sent = nix_signal::killpg(pid, sig).is_ok();
    if matches!(sig, Signal::SIGTERM | Signal::SIGHUP) && is_stopped(pid) {
        let _ = nix_signal::killpg(pid, Signal::SIGCONT);
    }
    sent
}

/// Returns true if and only if process `pid` is stopped by a signal (not traced: a
/// debugger's stop is the debugger's to end).
#[cfg(target_os = "linux")]
fn is_stopped(pid: Pid) -> bool {
    // The state follows the command name, which is in parentheses and may hold any byte.
    std::fs::read(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let after = stat.iter().rposition(|&b| b == b')').map_or(stat.len(), |at| at + 1);
        stat.get(after..after + 2) == Some(b" T".as_slice())
    })
}

/// Without `/proc`, a stopped command is not looked for (it is ended by SIGKILL after the
/// grace period, as before).
#[cfg(not(target_os = "linux"))]
fn is_stopped(_: Pid) -> bool {
    false
}

/// Ctrl-Z, as the shell's job control would do it without tj: stops the child's process
/// group, gives the terminal back, stops tj's own process group (the shell sees the job
/// stop and takes the terminal), and, once continued (`fg`), takes the terminal again and
/// continues the child.
///
/// The PTY cannot do this itself: the SIGTSTP its line discipline would send would stop the
/// command inside its own session, where no shell sees it stop, and tj would never know.
/// tj keeps the suspend character from the PTY and stops the command with SIGSTOP, which
/// its session leader leaves alone (see `exec::lead_session`); unlike SIGTSTP it cannot be
/// handled, but programs that tidy their screen on SIGTSTP redraw it on SIGCONT anyway, and
/// the PTY keeps their terminal state.
///
/// SIGTSTP is blocked on tj's other threads (see [`block_stop_signal`]), so it is delivered
/// to this thread before `killpg` returns: we do not go on while still running. If tj's
/// own process group is orphaned the kernel discards SIGTSTP, and we continue at once.
fn suspend_with_child(pid: Pid, term: &mut Terminal) {
    let _ = nix_signal::killpg(pid, Signal::SIGSTOP);
    term.suspend();
    let _ = nix_signal::killpg(unistd::getpgrp(), Signal::SIGTSTP);
    term.resume();
    let _ = nix_signal::killpg(pid, Signal::SIGCONT);
}

/// The process group a SIGTSTP sent to tj stops too, while a command runs without a PTY
/// ([`StopTogether`]); 0 when there is none (any more).
static STOP_WITH: AtomicI32 = AtomicI32::new(0);

/// Ctrl-Z for a command without a PTY (`--no-pty`): while it is installed, a SIGTSTP sent
/// to tj (the terminal's suspend character, `kill -TSTP`) stops the command's process group
/// and then tj, and `fg` (SIGCONT) continues both, as the shell's job control would stop
/// and continue the command without tj.
///
/// Needed because the command leads a session of its own: the terminal's SIGTSTP reaches
/// tj's process group only, and tj stopped alone while the command ran on. On a PTY, tj
/// does the job control itself ([`suspend_with_child`]) and this is not installed.
///
/// tj stops by SIGTSTP at its default action, raised from the handler: the shell sees the
/// job stop as it would without tj, and in an orphaned process group, where the kernel
/// discards that signal, tj runs on and the command is continued at once rather than left
/// stopped with nobody to continue it.
///
/// [`StopTogether::hold`] blocks SIGTSTP on the calling thread before the relay starts its
/// threads (which inherit the mask, and block SIGTSTP for good), and
/// [`StopTogether::attach`] unblocks it once the handler knows the command: a Ctrl-Z typed
/// as the command starts waits for that moment instead of stopping tj alone. (The command
/// does not inherit the blocked signal: `std::process` empties the signal mask before
/// exec.) Dropping the guard puts the previous action and the thread's mask back.
pub(super) struct StopTogether {
    /// The action before [`StopTogether::attach`] installed the handler.
    previous: Option<libc::sigaction>,
    /// The thread's mask before [`StopTogether::hold`], while SIGTSTP is held.
    held: Option<nix_signal::SigSet>,
}

impl StopTogether {
    /// Holds SIGTSTP on the calling thread until [`StopTogether::attach`].
    pub(super) fn hold() -> StopTogether {
        let mut tstp = nix_signal::SigSet::empty();
        tstp.add(Signal::SIGTSTP);
        let held = tstp.thread_swap_mask(nix_signal::SigmaskHow::SIG_BLOCK).ok();
        StopTogether { previous: None, held }
    }

    /// Installs the handler for the process group `job`, then lets SIGTSTP in. Nothing is
    /// installed if tj was started with SIGTSTP ignored: it then stays ignored, for tj and
    /// the command alike.
    #[allow(unsafe_code)]
    pub(super) fn attach(&mut self, job: Pid) {
        if !is_ignored(libc::SIGTSTP) {
            STOP_WITH.store(job.as_raw(), Ordering::SeqCst);
            // SAFETY: sigaction is given a fully initialised action (all zeroes is valid,
            // the mask emptied by sigemptyset) and a handler that makes async-signal-safe
            // calls only; `previous` receives the old action.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_stop as extern "C" fn(c_int) as libc::sighandler_t;
                // SA_NODEFER: the SIGTSTP the handler raises acts at once, inside it.
                action.sa_flags = libc::SA_RESTART | libc::SA_NODEFER;
                libc::sigemptyset(&mut action.sa_mask);
                let mut previous: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGTSTP, &action, &mut previous) == 0 {
                    self.previous = Some(previous);
                } else {
                    STOP_WITH.store(0, Ordering::SeqCst);
                }
            }
        }
        self.release();
    }

    /// The command has exited: what is left in its process group is not tj's to stop.
    pub(super) fn forget_job() {
        STOP_WITH.store(0, Ordering::SeqCst);
    }

    /// Puts the thread's mask back, if SIGTSTP is still held.
    fn release(&mut self) {
        if let Some(mask) = self.held.take() {
            let _ = mask.thread_set_mask();
        }
    }
}

impl Drop for StopTogether {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        STOP_WITH.store(0, Ordering::SeqCst);
        if let Some(previous) = &self.previous {
            // SAFETY: puts back the action sigaction reported when the handler was set.
            unsafe {
                libc::sigaction(libc::SIGTSTP, previous, std::ptr::null_mut());
            }
        }
        self.release();
    }
}

/// The SIGTSTP handler of [`StopTogether`]: async-signal-safe calls only (kill, sigaction,
/// raise), errno kept for the code it interrupted.
#[allow(unsafe_code)]
extern "C" fn on_stop(_: c_int) {
    // SAFETY: every call is async-signal-safe and takes only values on this stack; errno is
    // this thread's, read and written back through the pointer libc gives for it.
    unsafe {
        let errno = nix::errno::Errno::last_raw();
        let job = STOP_WITH.load(Ordering::SeqCst);
        if job > 0 {
            libc::kill(-job, libc::SIGSTOP);
        }
        let mut ours: libc::sigaction = std::mem::zeroed();
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut default.sa_mask);
        libc::sigaction(libc::SIGTSTP, &default, &mut ours);
        // Stops tj here, until SIGCONT; discarded at once in an orphaned process group.
        libc::raise(libc::SIGTSTP);
        libc::sigaction(libc::SIGTSTP, &ours, std::ptr::null_mut());
        let job = STOP_WITH.load(Ordering::SeqCst);
        if job > 0 {
            libc::kill(-job, libc::SIGCONT);
        }
        nix::errno::Errno::set_raw(errno);
    }
}

/// Blocks SIGTSTP on the calling thread; every helper thread of the relay calls this first,
/// so that a SIGTSTP tj sends its own group stops tj on the supervising thread.
pub(super) fn block_stop_signal() {
    let mut set = nix_signal::SigSet::empty();
    set.add(Signal::SIGTSTP);
    let _ = set.thread_block();
}

/// The child's status as an [`Exit`]; `None` for a status that is neither (not possible
/// after a successful wait).
pub(super) fn exit_of(status: ExitStatus) -> Option<Exit> {
    status.code().map(Exit::Code).or_else(|| status.signal().map(Exit::Signal))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Waits up to 5 s for an `Event::Signal(sig)` on `rx`.
    fn gets(rx: &Receiver<Event>, sig: c_int) -> bool {
        let until = Instant::now() + Duration::from_secs(5);
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(Event::Signal(got)) if got == sig => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }

    /// The threads of this process named `tj-signals`.
    fn signal_threads() -> usize {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
            .filter(|comm| comm.trim_end() == "tj-signals")
            .count()
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn every_watching_relay_gets_each_signal_from_one_thread() {
        // Alone: a relay of another test could be reading the signals on its own thread.
        if !crate::testing::alone_in_a_process(
            "run::signals::tests::every_watching_relay_gets_each_signal_from_one_thread",
        ) {
            return;
        }
        let mut warnings = Vec::new();
        let (tx_a, rx_a) = mpsc::channel();
        let (tx_b, rx_b) = mpsc::channel();
        let mut a = Watch::start(tx_a, false, &mut warnings);
        // Queued until the thread runs, then delivered.
        nix_signal::raise(Signal::SIGWINCH).unwrap();
        a.listen(&mut warnings);
        assert!(gets(&rx_a, SIGWINCH), "a signal raised before `listen` was lost");
        let mut b = Watch::start(tx_b, false, &mut warnings);
        b.listen(&mut warnings);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(signal_threads(), 1, "one signal thread for the process");
        nix_signal::raise(Signal::SIGWINCH).unwrap();
        assert!(gets(&rx_a, SIGWINCH) && gets(&rx_b, SIGWINCH));
        // A relay that ended gets nothing more; the one still watching does.
        drop(a);
        nix_signal::raise(Signal::SIGWINCH).unwrap();
        assert!(gets(&rx_b, SIGWINCH));
        assert!(matches!(rx_a.try_recv(), Err(mpsc::TryRecvError::Disconnected)));
        drop(b);
        assert_eq!(signal_threads(), 1, "the thread stays for the next relay");
    }

    /// Waits up to 5 s for `watch`, which reads the signals itself, to have `sig`.
    fn takes(watch: &mut Watch, sig: c_int) -> bool {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            let mut fds = [PollFd::new(watch.fd().unwrap(), PollFlags::POLLIN)];
            let _ = poll(&mut fds, PollTimeout::from(100u16));
            if watch.take().contains(&sig) {
                return true;
            }
        }
        false
    }

    /// A relay that reads the signals itself passes each on to the others that watch, and,
    /// ending before them, hands them to the signal thread; the next relay then cannot read
    /// them itself. In a process of its own: the signals must not have been read before.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_relay_reading_the_signals_shares_them_and_hands_them_over() {
        if !crate::testing::alone_in_a_process(
            "run::signals::tests::a_relay_reading_the_signals_shares_them_and_hands_them_over",
        ) {
            return;
        }
        let mut warnings = Vec::new();
        let (tx_a, _rx_a) = mpsc::channel();
        let (tx_b, rx_b) = mpsc::channel();
        let mut a = Watch::start(tx_a, true, &mut warnings);
        assert!(a.fd().is_some() && a.reports_exits(), "the first relay reads them itself");
        let mut b = Watch::start(tx_b, true, &mut warnings);
        assert!(b.fd().is_none(), "two relays read them");
        b.listen(&mut warnings);
        assert!(b.reports_exits() && warnings.is_empty(), "{warnings:?}");
        assert_eq!(signal_threads(), 0, "a thread started while a relay reads them");

        nix_signal::raise(Signal::SIGWINCH).unwrap();
        assert!(takes(&mut a, SIGWINCH), "the reader did not get it");
        assert!(gets(&rx_b, SIGWINCH), "the reader did not pass it on");

        drop(a);
        nix_signal::raise(Signal::SIGWINCH).unwrap();
        assert!(gets(&rx_b, SIGWINCH), "lost in the hand-over");
        // Once it has delivered one: a thread names itself when it starts.
        assert_eq!(signal_threads(), 1, "not handed to the signal thread");
        drop(b);

        let (tx_c, _rx_c) = mpsc::channel();
        let c = Watch::start(tx_c, true, &mut warnings);
        assert!(c.fd().is_none(), "read by a relay and the signal thread at once");
    }

    #[test]
    fn exit_of_maps_codes_and_signals() {
        assert_eq!(exit_of(ExitStatus::from_raw(0)), Some(Exit::Code(0)));
        assert_eq!(exit_of(ExitStatus::from_raw(101 << 8)), Some(Exit::Code(101)));
        assert_eq!(exit_of(ExitStatus::from_raw(255 << 8)), Some(Exit::Code(255)));
        assert_eq!(exit_of(ExitStatus::from_raw(libc::SIGINT)), Some(Exit::Signal(2)));
        // Core dumped: the signal is still the signal.
        assert_eq!(exit_of(ExitStatus::from_raw(libc::SIGQUIT | 0x80)), Some(Exit::Signal(3)));
    }
}
