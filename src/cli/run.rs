//! `tj run`: run a command in a PTY, live for the human, reduced for the agent (DESIGN.md
//! "Contracts of `tj run`").
//!
//! This is the orchestration only, one function per step: decide the mode
//! ([`decide_mode`]), build the child's spec ([`build_spec`]), relay and capture
//! ([`relay()`]), persist the original before anything names it ([`persist`]), reduce
//! ([`reduce_output`]), annotate ([`annotate`]), emit ([`emit_rendition`]). Every failure
//! inside tj is one warning and a fail-open path: the exit status is always the child's.
//! A run watched live with no side channel stops once the original is stored
//! ([`keep_watched`]): nobody would read a rendition.
//!
//! What the agent gets ([`Rendition`]):
//! - an output of at most [`stream::WHOLE_MAX`] bytes is reduced whole by the engine;
//! - a larger one that is stored is reduced as a stream ([`stream`]): numbered over the
//!   whole output, a marker at every gap, bounded like any rendition;
//! - one that could not be stored is never reduced (a compression nobody can undo is a
//!   deletion): it goes out whole, rendered a chunk at a time so that it is never held as
//!   text twice. When the store fails while the command runs and the output outgrows memory,
//!   the capture streams it to stdout as it comes (capture.rs, "When nothing can be
//!   stored"), and only a closing line is left to print. `--raw` takes the whole path too.
//!
//! Each warning says which of these happened, never more than is true.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};

use super::reduce::{look_back, record, record_unstored};
use crate::capture::{Capture, Captured, Limits, Piece, Storage};
use crate::diag;
use crate::emit::{self, Channel, Format};
use crate::env::Env;
use crate::exit::Status;
use crate::reduce::{self, ArtifactRef, Input, Options, Reduction, stream};
use crate::run::mode::{self, Facts, Mode, Reason};
use crate::run::{self as relay, Exit, RelayIo, SpawnError, Spec};
use crate::store::{Metadata, Store};

/// Run a command: live for you, reduced for the agent
///
/// The command runs in a pseudo-terminal, so colours, progress bars and prompts look as they
/// would without tj. Its output is stored (`tj expand`), reduced, and the rendition goes to
/// the side channel (--emit, --emit-fd) or, when an agent reads stdout, to stdout once the
/// command ends; in your terminal without a side channel, nobody reads a rendition and none
/// is made. tj exits with the command's exit status (128+N for signal N).
#[derive(Debug, Default, clap::Args)]
pub(crate) struct Args {
    /// Force agent mode: nothing live; the rendition on stdout (or the side channel)
    #[arg(long, conflicts_with = "live")]
    agent: bool,

    /// Force live passthrough even when an agent harness is detected
    #[arg(long)]
    live: bool,

    /// The agent's stdout as DEV:INO (the shell hook passes it): when stdout is anything
    /// else, run the command directly, as without tj
    #[arg(long, value_name = "DEV:INO")]
    agent_stdout: Option<String>,

    /// Give the command one pipe for stdout and stderr instead of a PTY
    #[arg(long)]
    no_pty: bool,

    /// Write the rendition to this file (atomically) before tj exits; one that cannot be
    /// (its directory missing, a directory) is no side channel (a warning says so) [env:
    /// TJ_EMIT]
    #[arg(long, value_name = "PATH")]
    emit: Option<std::path::PathBuf>,

    /// Write the rendition to this open file descriptor; one that is not open when tj starts
    /// is no side channel (a warning says so) [env: TJ_EMIT_FD]
    #[arg(long, value_name = "N")]
    emit_fd: Option<i32>,

    /// The rendition's format [default: text] [env: TJ_EMIT_FORMAT]
    #[arg(long, value_enum)]
    emit_format: Option<Format>,

    /// The agent harness whose hook put tj here (recorded with the run; set by `tj hook`)
    #[arg(long, value_enum, value_name = "HOST")]
    host: Option<crate::host::Host>,

    /// The rendition is the whole original (ANSI stripped), no reduction
    #[arg(long, alias = "full", env = crate::env::TJ_RAW, value_parser = clap::builder::FalseyValueParser::new())]
    raw: bool,

    /// Leave secrets in the rendition (by default each becomes `[tj: redacted KIND]`; the
    /// stored original always keeps them)
    #[arg(long)]
    no_redact: bool,

    /// The command and its arguments (`--` before it is optional: tj's own options end at
    /// the first argument that is not one of them)
    #[arg(required = true, trailing_var_arg = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

pub(crate) fn run(args: Args, env: &Env) -> Result<Status> {
    let mut args = args.with_env(env);
    let (mode, reason) = decide_mode(&args, env);
    if mode == Mode::Transparent {
        // A harness reading the side channel must not take an earlier run's rendition for
        // this one's. Not from a run nested in another, whose side channel is the outer's.
        if reason != Reason::Nested {
            let why = format!("no rendition: {}, so the command ran as is", reason.describe());
            note_on_side_channel_quietly(&args, &why);
        }
        return Ok(exec_directly(&args.command));
    }
    // Before tj opens a descriptor of its own, which could take the number.
    args.drop_dead_side_channel(mode);
    let args = &args;
    let spec = build_spec(args, env, mode);
    let store = Store::new(env).ok();
    let argv = argv_strings(&args.command);
    let watched = is_watched(args, mode);
    let mut setup = None;
    let meanwhile = || {
        if !watched {
            setup = read_setup(env, &argv);
        }
    };
    let mut run = match relay(args, &spec, mode, store.as_ref(), meanwhile) {
        Ok(run) => run,
        Err(not_run) => return Ok(without_a_run(args, not_run)),
    };
    let mut meta = metadata(args, env, mode, &run);
    // The original is persisted before any rendition that names it (DESIGN.md "Store").
    // An empty output is not stored (see `record_unstored`).
    let empty = run.captured.total_bytes == 0 && run.captured.streamed.is_none();
    // The reader of the rendition on stdout went away while the command ran: nobody is given
    // one, as nobody is of a watched run, and the original is kept the same way (an id of
    // its own, which needs no digest).
    let unread = run.outcome.reader_gone && !has_side_channel(args);
    if unread {
        run.captured.sha256 = None;
    }
    if watched || unread {
        if !empty {
            keep_watched(store.as_ref(), &mut run.captured, &mut meta);
        }
        return Ok(run.status);
    }
    let what = if run.captured.dropped_bytes > 0 {
        "the rendition is what tj kept of the output, its first and last bytes"
    } else {
        "the rendition is the whole original"
    };
    let artifact =
        if empty { None } else { persist(store.as_ref(), &mut run.captured, &mut meta, what) };
    let (last, previous) = look_back(store.as_ref(), &meta, artifact.as_ref());
    let mut rendition =
        reduce_output(args, env, &run, (artifact.as_ref(), previous.as_ref()), &argv, setup);
    annotate(&mut rendition, args, &run);
    match (&store, &artifact, &mut rendition) {
        (Some(store), Some(artifact), Rendition::Reduced(reduction)) => {
            record(store, artifact, &mut meta, reduction, &last);
        }
        (Some(store), None, Rendition::Reduced(reduction)) if empty => {
            record_unstored(store, &meta, reduction);
        }
        _ => {}
    }
    emit_rendition(args, mode, &rendition, &run, meta.duration_ms);
    Ok(run.status)
}

impl Args {
    /// `args` (what follows `run`) read without clap, when they are plainly what an adapter
    /// or a person types: each long option of tj's at most once, its value after `=` or as
    /// the next argument, then the command (after `--`, or from the first argument that is
    /// not an option). Anything else is `None` and goes to clap, which then gives the same
    /// answer or the error (`--help`, a short option, a repeated flag, a value that starts
    /// with `-`, an unknown value, `TJ_RAW` in the environment, `--agent` with `--live`).
    ///
    /// Why: every command an agent runs starts here, and clap's parser is code that runs
    /// once per process, so each of its pages is a page fault, and a page to unmap at exit
    /// (issue 13). A test holds this to clap's answer on every form it accepts.
    pub(crate) fn parse_plain(args: &[OsString]) -> Option<Args> {
        if std::env::var_os(crate::env::TJ_RAW).is_some() {
            return None;
        }
        let mut parsed = Args::default();
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            let text = arg.to_str();
            if text == Some("--") {
                break;
            }
            let Some(option) = text.and_then(|text| text.strip_prefix("--")) else {
                if arg.as_encoded_bytes().starts_with(b"-") {
                    return None;
                }
                parsed.command.push(arg.clone());
                break;
            };
            let (name, inline) = match option.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (option, None),
            };
            let flag =
                |set: &mut bool| (inline.is_none() && !std::mem::replace(set, true)).then_some(());
            let mut value = || -> Option<&str> {
                let value = match inline {
                    Some(value) => value,
                    None => rest.next()?.to_str()?,
                };
                (!value.is_empty() && !value.starts_with('-')).then_some(value)
            };
            match name {
                "agent" => flag(&mut parsed.agent)?,
                "live" => flag(&mut parsed.live)?,
                "no-pty" => flag(&mut parsed.no_pty)?,
                "raw" | "full" => flag(&mut parsed.raw)?,
                "no-redact" => flag(&mut parsed.no_redact)?,
                "agent-stdout" if parsed.agent_stdout.is_none() => {
                    parsed.agent_stdout = Some(value()?.to_owned());
                }
                "emit" if parsed.emit.is_none() => parsed.emit = Some(value()?.into()),
                "emit-fd" if parsed.emit_fd.is_none() => {
                    parsed.emit_fd = Some(value()?.parse().ok()?);
                }
                "emit-format" if parsed.emit_format.is_none() => {
                    parsed.emit_format = Some(clap::ValueEnum::from_str(value()?, false).ok()?);
                }
                "host" if parsed.host.is_none() => {
                    parsed.host = Some(clap::ValueEnum::from_str(value()?, false).ok()?);
                }
                _ => return None,
            }
        }
        parsed.command.extend(rest.cloned());
        if parsed.command.is_empty() || (parsed.agent && parsed.live) {
            return None;
        }
        Some(parsed)
    }

    /// Drops a side channel that certainly cannot take the rendition, with one warning that
    /// says where the rendition goes instead: `--emit PATH` (or `TJ_EMIT`) that is a
    /// directory, a socket or a block device, or whose directory does not exist
    /// ([`emit::file_refused`]), and `--emit-fd N` (or `TJ_EMIT_FD`) when N is not an open
    /// descriptor. Checked before tj opens anything: later, N could be a descriptor of tj's
    /// own (the PTY, a store file), and the rendition would be written into it. Without a
    /// channel, a run in terminal mode is watched live and counted as such ([`is_watched`]):
    /// no agent reads a rendition that cannot be written.
    fn drop_dead_side_channel(&mut self, mode: Mode) {
        let instead = |emit_fd: Option<i32>| match emit_fd {
            Some(fd) => format!("the rendition goes to --emit-fd {fd}"),
            None if mode == Mode::Agent => "the rendition goes to stdout".to_owned(),
            None => "no rendition is made; the output is stored (`tj ls`)".to_owned(),
        };
        if let Some(path) = &self.emit
            && let Some(why) = emit::file_refused(path)
        {
            let path = path.display();
            diag::warn_once(&format!("--emit {path}: {why}; {}", instead(self.emit_fd)));
            self.emit = None;
        }
        let Some(fd) = self.emit_fd else { return };
        if self.emit.is_some() || emit::fd_is_open(fd) {
            return;
        }
        self.emit_fd = None;
        diag::warn_once(&format!("--emit-fd {fd}: descriptor {fd} is not open; {}", instead(None)));
    }

    /// Fills the side channel from `TJ_EMIT`, `TJ_EMIT_FD` and `TJ_EMIT_FORMAT` where no flag
    /// set it. Read here rather than by the argument parser, which refused to run the
    /// command at all over an empty or malformed value (an exported `TJ_EMIT=` broke every
    /// command the hook routes): an empty one counts as unset, a malformed one is warned
    /// about and ignored.
    fn with_env(mut self, env: &Env) -> Args {
        if self.emit.is_none() && self.emit_fd.is_none() {
            self.emit = env.emit.clone().filter(|path| !path.as_os_str().is_empty());
            if self.emit.is_none() {
                self.emit_fd = env_value(
                    crate::env::TJ_EMIT_FD,
                    env.emit_fd.as_deref(),
                    |text| text.parse::<i32>().ok().filter(|fd| *fd >= 0),
                    "is not a file descriptor number; ignored",
                );
            }
        }
        if self.emit_format.is_none() {
            self.emit_format = env_value(
                crate::env::TJ_EMIT_FORMAT,
                env.emit_format.as_deref(),
                |text| <Format as clap::ValueEnum>::from_str(text, true).ok(),
                "is not a format (text or json); text is used",
            );
        }
        self
    }

    /// The rendition's format: `--emit-format`, else `TJ_EMIT_FORMAT`, else text.
    fn format(&self) -> Format {
        self.emit_format.unwrap_or(Format::Text)
    }
}

/// The variable `name`'s value (`text`, trimmed) as `parse` reads it: `None` when it is
/// unset or empty, and when `parse` refuses it, after one warning that ends with `refused`.
fn env_value<T>(
    name: &str,
    text: Option<&str>,
    parse: impl FnOnce(&str) -> Option<T>,
    refused: &str,
) -> Option<T> {
    let text = text?.trim();
    if text.is_empty() {
        return None;
    }
    let value = parse(text);
    if value.is_none() {
        diag::warn_once(&format!("{name}=`{}` {refused}", diag::escape(text)));
    }
    value
}

/// Terminal, agent or transparent (DESIGN.md "Modes").
fn decide_mode(args: &Args, env: &Env) -> (Mode, Reason) {
    let facts = Facts {
        agent_flag: args.agent,
        live_flag: args.live,
        agent_stdout: args.agent_stdout.as_deref().and_then(|text| {
            let id = mode::parse_dev_ino(text);
            if id.is_none() {
                diag::warn_once(&format!("--agent-stdout `{text}` is not DEV:INO; ignored"));
            }
            id
        }),
        stdout_is_tty: std::io::stdout().is_terminal(),
        // Only compared with `--agent-stdout`.
        stdout_id: args.agent_stdout.as_ref().and_then(|_| stdout_identity()),
        stdio_closed: crate::stdio::closed_at_start() != 0,
    };
    mode::decide(&facts, env)
}

/// What to run and how: the PTY, the child's environment, the watchdog.
fn build_spec(args: &Args, env: &Env, mode: Mode) -> Spec {
    let stdout_is_tty = std::io::stdout().is_terminal();
    let stdin_is_tty = std::io::stdin().is_terminal();
    // A working directory that was deleted cannot be named, but the child can still run in
    // it: "." is entered as it is, exactly as a shell in that directory would run it.
    let cwd = env.cwd.clone().unwrap_or_else(|| PathBuf::from("."));
    let mut spec = Spec::new(args.command.clone(), cwd);
    spec.pty = !args.no_pty;
    // Live output to a terminal tj will not make raw (stdin is not one): that terminal
    // translates newlines itself, so the PTY must not.
    spec.raw_output = mode == Mode::Terminal && stdout_is_tty && !stdin_is_tty;
    // No terminal shows an agent's output: the kernel need not translate its newlines,
    // and the capture adds the `\r` of each (1.5 ms of 9.1 for 100 KB of `cargo test`).
    spec.translate_in_capture = mode == Mode::Agent;
    spec.env_remove = vec!["COLUMNS".into(), "LINES".into()];
    spec.env_set.push((crate::env::TJ_INNER.into(), "1".into()));
    if !stdin_is_tty {
        // Nobody can page through a pager nobody sees.
        if !env.has_pager {
            spec.env_set.push(("PAGER".into(), "cat".into()));
        }
        if !env.has_git_pager {
            spec.env_set.push(("GIT_PAGER".into(), "cat".into()));
        }
    }
    if mode == Mode::Agent {
        // An agent cannot answer a credential prompt: fail fast instead of hanging.
        spec.env_set.push(("GIT_TERMINAL_PROMPT".into(), "0".into()));
        // Nor any other prompt on the terminal: end the run once it sits waiting for one.
        spec.blocked_after = Some(blocked_after(env));
        spec.size = Some(relay::WinSize::for_agent(env.columns.as_deref()));
    }
    spec
}

/// A command that ran: how it ended and what it wrote.
struct Ran {
    outcome: relay::Outcome,
    /// tj's exit status: the child's.
    status: Status,
    /// The exit code as recorded (128+N for signal N).
    exit_code: Option<i64>,
    signal: Option<i32>,
    captured: Captured,
}

/// The status of a run that [`relay()`] could not make: the command's own if it then runs
/// in tj's place, else tj's. Either way the side channel says why.
fn without_a_run(args: &Args, not_run: NotRun) -> Status {
    match not_run {
        // The child never ran: the error is printed, the status is env(1)'s.
        NotRun::Failed(status, why) => {
            note_on_side_channel(args, &why, Some(status.code()));
            status
        }
        // Fail open: tj could not set up its side, the command has not started, and it
        // needs none of what tj could not get. Everything tj opened is closed by now.
        NotRun::Unset(why) => {
            diag::warn(&format!(
                "{why}; running the command without tj (its output is not captured or reduced)"
            ));
            let note = format!("{why}; the command ran without tj, its output unreduced on stdout");
            note_on_side_channel(args, &note, None);
            relay::restore_inherited_signals();
            exec_directly(&args.command)
        }
    }
}

/// Why [`relay()`] returned without a run.
enum NotRun {
    /// The command could not be started, or its run left nothing to render (why is
    /// printed): exit with this status.
    Failed(Status, String),
    /// tj could not set up its side of the run (why, not yet printed); the command has not
    /// started, and can run without tj.
    Unset(String),
}

/// Runs the command with live output where the mode wants it and every byte captured.
///
/// `meanwhile` runs once the command has started, while it runs ([`relay::run_meanwhile`]).
fn relay(
    args: &Args,
    spec: &Spec,
    mode: Mode,
    store: Option<&Store>,
    meanwhile: impl FnOnce(),
) -> Result<Ran, NotRun> {
    let (capture, storable) = new_capture(args, mode, store);
    // An Option so the capture can be taken back out whole once the relay is done with it.
    let capture = Arc::new(Mutex::new(Some(capture)));
    let sink = Arc::clone(&capture);
    let mut io = RelayIo::new(
        live_output(args, mode),
        Box::new(move |bytes: &[u8]| {
            if let Some(capture) = sink.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
                capture.write(bytes);
            }
        }),
    );
    io.stderr = relay::stderr_apart(mode == Mode::Agent);
    io.prepare = Some(Box::new(detect_cpu_features));
    // Where nothing can be stored, the capture streams the output to stdout once it is
    // past what memory holds, and that write waits on the reader.
    io.capture_may_stall = !storable && mode == Mode::Agent;
    // The reader of stdout (the live output, or the rendition to come), if it is a pipe or a
    // socket: it can go away while the command runs.
    io.reader = relay::stdout_stream();
    let outcome = relay::run_meanwhile(spec, io, meanwhile);
    match (&outcome.exit, outcome.ended_by) {
        // Signalled while setting up: ends as the command would have, never started.
        (Err(_), Some(sig)) => {
            let why = format!("tj was ended by signal {sig} before the command started");
            return Err(NotRun::Failed(Status::Signal(sig), why));
        }
        // What tj did instead of what it could not set up (one pipe, no watchdog) is moot
        // when the command runs without tj: only that is said.
        (Err(SpawnError::Setup(why)), None) => return Err(NotRun::Unset(why.clone())),
        _ => {}
    }
    for warning in &outcome.warnings {
        diag::warn_once(warning);
    }
    if let Some(why) = &outcome.live_lost {
        diag::warn_once(why);
    }
    let (status, exit_code, signal) = ended(&outcome)?;
    // The relay has returned, so nothing writes into the capture any more.
    let taken = capture.lock().unwrap_or_else(PoisonError::into_inner).take();
    let Some(capture) = taken else {
        let why = "the capture was lost (a bug in tj); there is no rendition";
        diag::warn_once(why);
        return Err(NotRun::Failed(status, why.to_owned()));
    };
    let captured = capture.finish();
    warn_capture(&captured);
    Ok(Ran { outcome, status, exit_code, signal, captured })
}

/// The capture for a run in `mode`, spilling into `store`'s spill directory if there is one
/// (then the capture is storable: the second value).
fn new_capture(args: &Args, mode: Mode, store: Option<&Store>) -> (Capture, bool) {
    let spill_dir = store.and_then(|s| s.prepare().ok().map(|()| s.spill_dir_path()));
    let storable = spill_dir.is_some();
    let mut capture = Capture::new(spill_dir, Limits::default());
    if is_watched(args, mode) {
        // Its id names no rendition and dedupes nothing: no content hash is needed for it.
        capture = capture.without_digest();
    }
    // Nobody watches an agent's output live: if it can be neither stored nor held, it goes
    // to the agent as it comes rather than being dropped (capture.rs, "When nothing can be
    // stored"). Only where stdout is the agent's text stream.
    if mode == Mode::Agent
        && !has_side_channel(args)
        && args.format() == Format::Text
        && let Ok(fd) = relay::LiveFd::stdout()
    {
        capture.stream_overflow_to(Box::new(emit::CleanLive::new(fd)));
    }
    (capture, storable)
}

/// How the command ended, for tj's own status (the command's, or the signal tj dies of),
/// the record's exit code (128 + N for a signal) and the signal; or why it did not run
/// (said here).
fn ended(outcome: &relay::Outcome) -> Result<(Status, Option<i64>, Option<i32>), NotRun> {
    match &outcome.exit {
        Ok(Exit::Code(code)) => Ok((
            Status::Child(u8::try_from(*code & 0xff).unwrap_or(255)),
            Some(i64::from(*code)),
            None,
        )),
        Ok(Exit::Signal(sig)) => {
            // tj killed a command that ignored the signal tj was sent: tj dies of that
            // signal; the record keeps the one that ended the command.
            let dies_of = match outcome.ended_by {
                Some(asked) if *sig == libc::SIGKILL => asked,
                _ => *sig,
            };
            Ok((Status::Signal(dies_of), Some(128 + i64::from(*sig)), Some(*sig)))
        }
        Err(err) => {
            diag::error(&anyhow::anyhow!("{err}"));
            Err(NotRun::Failed(status_of(err), err.to_string()))
        }
    }
}

/// The capture's disk error, if any, and what became of the output because of it.
fn warn_capture(captured: &Captured) {
    let Some(err) = &captured.error else { return };
    if let Some(streamed) = &captured.streamed {
        let mut msg = format!(
            "{err}; nothing could be stored, so the whole output went to stdout as it came, unreduced"
        );
        if streamed.lost > 0 {
            msg.push_str(&format!(
                " (but for {} bytes lost before that, marked where they were)",
                streamed.lost
            ));
        }
        if let Some(failed) = &streamed.failed {
            msg.push_str(&format!("; then stdout failed: {failed}"));
        }
        diag::warn_once(&msg);
    } else if captured.dropped_bytes > 0 {
        diag::warn_once(&format!(
            "{err}; kept the first {} and the last {} bytes of the output: the {} bytes between them are in no store",
            captured.storage.len(),
            captured.tail.len(),
            captured.dropped_bytes
        ));
    }
    // Otherwise everything is held in memory: storing it is tried next, and warned about if
    // it fails too.
}

/// Where the child's bytes go live: the terminal in terminal mode; in agent mode with a side
/// channel, a clean text stream on stdout; nowhere otherwise.
fn live_output(args: &Args, mode: Mode) -> Option<Box<dyn std::io::Write + Send>> {
    match mode {
        Mode::Terminal => match relay::LiveFd::stdout() {
            Ok(fd) => Some(Box::new(fd)),
            Err(err) => {
                diag::warn_once(&format!(
                    "could not use stdout for live output: {err}; running without it"
                ));
                None
            }
        },
        // An agent with a side channel reads a clean live stream on stdout meanwhile.
        Mode::Agent if has_side_channel(args) => match relay::LiveFd::stdout() {
            Ok(fd) => Some(Box::new(emit::CleanLive::new(fd))),
            Err(_) => None,
        },
        _ => None,
    }
}

fn has_side_channel(args: &Args) -> bool {
    args.emit.is_some() || args.emit_fd.is_some()
}

/// The side channel `--emit` or `--emit-fd` names (the file when both are given).
fn side_channel(args: &Args) -> Option<Channel> {
    match (&args.emit, args.emit_fd) {
        (Some(path), _) => Some(Channel::File(path.clone())),
        (None, Some(fd)) => Some(Channel::Fd(fd)),
        (None, None) => None,
    }
}

/// `[tj] exit N` only where tj is the agent's only view of the run: a harness that shows
/// the exit status itself, or reads the side channel next to tj's status, has it already.
fn hide_exit(args: &Args) -> bool {
    has_side_channel(args) || args.host.is_some_and(crate::host::Host::shows_exit_code)
}

/// The metadata stored beside the original.
fn metadata(args: &Args, env: &Env, mode: Mode, run: &Ran) -> Metadata {
    Metadata {
        argv: argv_strings(&args.command),
        cwd: env.cwd.as_ref().map(|cwd| cwd.display().to_string()),
        exit_code: run.exit_code,
        signal: run.signal,
        session: env.session.clone(),
        duration_ms: Some(u64::try_from(run.outcome.duration.as_millis()).unwrap_or(u64::MAX)),
        pty_held_open: run.outcome.pty_held_open,
        cols: run.outcome.cols,
        mode: Some(if mode == Mode::Agent { "agent" } else { "terminal" }.to_owned()),
        host: args.host.map(|h| h.name().to_owned()),
        ..Metadata::default()
    }
}

/// Whether nobody is given a rendition of this run: a person watches it live in terminal
/// mode and there is no side channel. Its original is stored for `tj expand`; nothing is
/// reduced, and the ledger does not count it (no agent was spared anything).
fn is_watched(args: &Args, mode: Mode) -> bool {
    mode == Mode::Terminal && !has_side_channel(args)
}

/// Keeps the original of a watched run (see [`is_watched`]) for `tj expand`, with its
/// metadata, and sweeps the store when a sweep is due. Nothing else: the rendition would go
/// nowhere, so none is made (`tj expand ID --reduced` says so), no ledger line counts
/// savings nobody had, and no last-run record names it for a later run's delta.
///
/// Its capture took no digest, so the original gets an id of its own that names no other
/// run's files (`Store::adopt`): a run an agent was given a rendition of, of the same bytes,
/// keeps its record.
fn keep_watched(store: Option<&Store>, captured: &mut Captured, meta: &mut Metadata) {
    let what = "`tj expand` will not find this output";
    let Some(artifact) = persist(store, captured, meta, what) else { return };
    let Some(store) = store else { return };
    if let Err(err) = store.write_metadata(meta) {
        diag::warn_once(&format!("{err:#}; the original is stored, its metadata is not"));
    }
    super::reduce::sweep_if_due(store, &artifact.id);
}

/// Stores the original. `None` (after one warning, which ends with `what`: what follows for
/// the run) when it could not be stored: then nothing lossy may be adopted.
fn persist(
    store: Option<&Store>,
    captured: &mut Captured,
    meta: &mut Metadata,
    what: &str,
) -> Option<ArtifactRef> {
    if captured.streamed.is_some() {
        // The disk failed and the agent has the output already: there is nothing to store.
        return None;
    }
    match store.map(|s| s.adopt(captured, meta)) {
        Some(Ok(artifact)) => {
            // Adopting renamed the spill file into place: read it back from there.
            if let Storage::Spilled { path, .. } = &mut captured.storage {
                *path = PathBuf::from(&artifact.path);
            }
            Some(artifact)
        }
        Some(Err(err)) => {
            diag::warn_once(&format!("{err:#}; nothing was stored: {what}"));
            None
        }
        None => {
            diag::warn_once(&format!(
                "could not find a data directory (set TJ_DATA_DIR); nothing was stored: {what}"
            ));
            None
        }
    }
}

/// What the agent is given.
enum Rendition {
    /// A reduction, or an original small enough to hold as text.
    Reduced(Box<Reduction>),
    /// The whole original, too large to hold as text twice: rendered chunk by chunk as it
    /// is emitted. For `--raw`, and when it was not stored (nothing lossy may go out).
    /// Redacted chunk by chunk unless redaction is off (a secret split across two chunks of
    /// 64 KiB, such as a PEM block, can get through).
    Whole {
        /// Whether secrets are redacted.
        redact: bool,
    },
    /// The whole original went to stdout while the command ran (nothing could be stored);
    /// only a closing line is left to say.
    Streamed,
}

/// What the reduction needs besides the output: the configuration and the rules for the
/// command. They depend on the command line only, so they are read while the command runs
/// (`tj run` is then not slower by them); their problems are warned about once it has
/// ended, as if they were read then.
struct Setup {
    config: crate::config::Config,
    set: crate::rules::RuleSet,
}

/// Reads the [`Setup`] without printing. `None` if that panicked (a bug in tj): it is then
/// read again after the command, where a panic no longer cuts the relay short.
fn read_setup(env: &Env, argv: &[String]) -> Option<Setup> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Setup {
        config: crate::config::Config::load(env),
        set: super::read_rules_for(env, argv, None),
    }))
    .ok()
}

/// Runs the CPU feature detection that the capture's hasher and the reducer's searchers
/// would otherwise run on first use, which for a command that printed nothing is after it
/// has ended. Each `cpuid` instruction costs about 8 µs on a virtual machine (it traps to
/// the hypervisor; measured on the machine of issue 13) and the two detections take about
/// a dozen. It runs before any output is read, while the command starts or runs
/// ([`RelayIo::prepare`]): it is then off the path of a command that ends at once, too.
fn detect_cpu_features() {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    std::hint::black_box(std::arch::is_x86_feature_detected!("avx2"));
    std::hint::black_box(<sha2::Sha256 as sha2::Digest>::digest([]));
}

/// Reduces the output: whole in memory up to [`stream::WHOLE_MAX`] bytes, as a stream
/// beyond (when it is stored: otherwise the agent gets all of it).
fn reduce_output(
    args: &Args,
    env: &Env,
    run: &Ran,
    (artifact, previous): (Option<&ArtifactRef>, Option<&crate::reduce::delta::Previous>),
    argv: &[String],
    setup: Option<Setup>,
) -> Rendition {
    if run.captured.streamed.is_some() {
        return Rendition::Streamed;
    }
    let Setup { config, set } = match setup {
        Some(setup) => {
            super::warn_config(&setup.config);
            super::warn_rules(&setup.set);
            setup
        }
        None => {
            let config = super::load_config(env);
            Setup { config, set: super::load_rules_for(env, argv, None) }
        }
    };
    let opts = Options {
        limits: config.limits,
        raw: args.raw,
        artifact,
        hide_exit: hide_exit(args),
        previous,
    };
    let redacting = config.redact && !args.no_redact;
    let redact = |mut reduction: Reduction| {
        if redacting {
            super::redact(&mut reduction);
        }
        Rendition::Reduced(Box::new(reduction))
    };
    let input = Input {
        raw: &[],
        argv,
        command: None,
        tool_name: None,
        exit_code: run.exit_code,
        cols: run.outcome.cols,
    };
    let whole = run.captured.read_whole(stream::WHOLE_MAX).unwrap_or_else(|err| {
        diag::warn_once(&format!("could not read the captured output back: {err}"));
        Some(Vec::new())
    });
    if let Some(bytes) = whole {
        let input = Input { raw: &bytes, ..input };
        return redact(super::reduce_reporting(&input, &set, &opts));
    }
    if args.raw || artifact.is_none() {
        return Rendition::Whole { redact: redacting };
    }
    let head = run.captured.head(stream::CHUNK).unwrap_or_default();
    let mut read = Ok(());
    let reduction = super::stream_reporting(&input, &head, &set, &opts, |streamed| {
        read = run.captured.for_each_chunk(|piece| match piece {
            Piece::Bytes(bytes) => streamed.push(bytes),
            Piece::Lost { bytes, newlines } => streamed.push_lost(bytes, newlines),
        });
    });
    if let Err(err) = read {
        diag::warn_once(&format!("could not read the captured output back: {err}"));
    }
    // The reducer failed: the agent gets the whole original (fail open).
    reduction.map_or(Rendition::Whole { redact: redacting }, redact)
}

/// Adds what the rendition must say beyond the reduction: that the command was ended
/// blocked on input.
fn annotate(rendition: &mut Rendition, args: &Args, run: &Ran) {
    let Some(blocked) = &run.outcome.blocked else { return };
    diag::warn_once(&format!(
        "{}: blocked on input ({}); ended it",
        show(&args.command),
        blocked.reason
    ));
    let Rendition::Reduced(reduction) = rendition else { return };
    let bytes = run.captured.last(64 << 10).unwrap_or_default();
    let rendered = reduce::screen_width(&bytes, run.outcome.cols);
    let lines = reduce::split_lines(&rendered);
    let mut last: Vec<&str> =
        lines.iter().rev().filter(|l| !l.is_empty()).take(5).copied().collect();
    last.reverse();
    let mut note = format!(
        "[tj] blocked on input: {} — ended after {} s without output; the last lines were:",
        blocked.reason,
        blocked.idle.as_secs()
    );
    for line in last {
        note.push('\n');
        note.push_str(line);
    }
    reduction.text = format!("{note}\n{}", reduction.text);
}

/// Writes the rendition where it goes: the side channel if there is one, else stdout in
/// agent mode; nowhere in terminal mode without a side channel (the person saw it live).
fn emit_rendition(
    args: &Args,
    mode: Mode,
    rendition: &Rendition,
    run: &Ran,
    duration_ms: Option<u64>,
) {
    if mode != Mode::Agent && !has_side_channel(args) {
        return;
    }
    let shown_exit = if hide_exit(args) { None } else { run.exit_code };
    let channel = side_channel(args);
    if let Rendition::Whole { redact } = *rendition
        && channel.is_none()
        && args.format() == Format::Text
    {
        // Streamed to stdout: the original is never held as text.
        let written = write_whole(run, shown_exit, redact, &mut |text| {
            emit::stdout_bytes(text.as_bytes()).context("the rendition was not delivered")
        });
        if let Err(err) = written
            && !diag::is_broken_pipe(&err)
        {
            diag::warn_once(&format!("{err:#}"));
        }
        return;
    }
    let text = rendition_text(args.format(), rendition, run, duration_ms, shown_exit);
    let emitted = match &channel {
        Some(channel) => emit::to_channel(channel, &text),
        None => emit::stdout(&text).context("the rendition was not delivered"),
    };
    if let Err(err) = emitted {
        // The side channel failed: the agent still gets the text (fail open).
        let fallback = channel.is_some() && mode == Mode::Agent;
        if !diag::is_broken_pipe(&err) {
            let instead = if fallback { "; the rendition is on stdout instead" } else { "" };
            diag::warn_once(&format!("{err:#}{instead}"));
        }
        if fallback {
            let _ = emit::stdout(&text);
        }
    }
}

/// Replaces what the side channel holds (an earlier run's rendition, in a file) with one
/// line saying why this run has no rendition, so that a harness reading it never takes
/// another command's result for this one's. `code` is tj's exit code, when it is known.
fn note_on_side_channel(args: &Args, why: &str, code: Option<u8>) {
    let Some(channel) = side_channel(args) else { return };
    if let Err(err) = emit::to_channel(&channel, &side_note(args, why, code)) {
        diag::warn_once(&format!("{err:#}"));
    }
}

/// [`note_on_side_channel`] for a run in tj's place, which adds nothing to the command's
/// stderr: a side channel that cannot be written (refused, or not open) is left as it is.
fn note_on_side_channel_quietly(args: &Args, why: &str) {
    let Some(channel) = side_channel(args) else { return };
    let writable = match &channel {
        Channel::File(path) => emit::file_refused(path).is_none(),
        Channel::Fd(fd) => emit::fd_is_open(*fd),
    };
    if writable {
        let _ = emit::to_channel(&channel, &side_note(args, why, None));
    }
}

/// The text of a note on the side channel in the format asked for: no rendition, `why` in
/// its place. No exit line, as in every rendition on a side channel: its reader has tj's
/// status.
fn side_note(args: &Args, why: &str, code: Option<u8>) -> String {
    let line = format!("[tj] {}", diag::escape(why));
    match args.format() {
        Format::Text => line,
        Format::Json => serde_json::to_string_pretty(&serde_json::json!({
            "inlineText": line,
            "exitCode": code,
            "reduced": false,
            "lossless": false,
            "passthrough": "no rendition",
        }))
        .unwrap_or(line),
    }
}

/// The rendition as one text in `format`.
fn rendition_text(
    format: Format,
    rendition: &Rendition,
    run: &Ran,
    duration_ms: Option<u64>,
    shown_exit: Option<i64>,
) -> String {
    match rendition {
        Rendition::Streamed => {
            let mut line = String::from("[tj] ");
            if let Some(code) = shown_exit.filter(|c| *c != 0) {
                line.push_str(&format!("exit {code} · "));
            }
            line.push_str(
                "nothing could be stored: the text above is the whole output, as it came, unreduced",
            );
            line
        }
        Rendition::Whole { redact } => {
            let mut text = String::new();
            if let Err(err) = write_whole(run, shown_exit, *redact, &mut |piece| {
                text.push_str(piece);
                Ok(())
            }) {
                diag::warn_once(&format!("{err:#}"));
            }
            match format {
                Format::Text => text,
                Format::Json => serde_json::to_string_pretty(&serde_json::json!({
                    "inlineText": text,
                    "exitCode": run.exit_code,
                    "signal": run.signal,
                    "durationMs": duration_ms,
                    "lossless": true,
                    "reduced": false,
                    "passthrough": "the whole original",
                }))
                .unwrap_or(text),
            }
        }
        Rendition::Reduced(reduction) => match format {
            Format::Text => reduction.text.clone(),
            Format::Json => {
                serde_json::to_string_pretty(&reduction.to_json(duration_ms, run.signal))
                    .unwrap_or_else(|_| reduction.text.clone())
            }
        },
    }
}

/// Writes the whole original as the agent reads it — the exit line, then each chunk
/// rendered (ANSI stripped, redraws collapsed) and, if `redact`, its secrets replaced —
/// through `out`, one chunk at a time.
fn write_whole(
    run: &Ran,
    shown_exit: Option<i64>,
    redact: bool,
    out: &mut dyn FnMut(&str) -> Result<()>,
) -> Result<()> {
    let mut header = String::new();
    if let Some(code) = shown_exit.filter(|c| *c != 0) {
        header = format!("[tj] exit {code}\n");
    }
    out(&header)?;
    let mut failed = None;
    let read = run.captured.for_each_chunk(|piece| {
        if failed.is_some() {
            return;
        }
        let text = match piece {
            Piece::Bytes(bytes) => {
                let (text, _) = stream::render_chunk(bytes, run.outcome.cols);
                let mut lines = String::with_capacity(text.len() + 1);
                for line in stream::chunk_lines(&text) {
                    lines.push_str(line);
                    lines.push('\n');
                }
                if redact && let std::borrow::Cow::Owned(redacted) = crate::redact::redact(&lines) {
                    redacted
                } else {
                    lines
                }
            }
            Piece::Lost { bytes, newlines } => format!(
                "… {} bytes ({} lines) were not kept: past the disk cap, or lost to a disk error …\n",
                reduce::group(usize::try_from(bytes).unwrap_or(usize::MAX)),
                reduce::group(usize::try_from(newlines).unwrap_or(usize::MAX)),
            ),
        };
        if let Err(err) = out(&text) {
            failed = Some(err);
        }
    });
    if let Some(err) = failed {
        return Err(err);
    }
    read.context("could not read the captured output back")
}

fn argv_strings(argv: &[OsString]) -> Vec<String> {
    argv.iter().map(|a| a.to_string_lossy().into_owned()).collect()
}

/// How long a child may sit silent, reading its terminal, before agent mode ends it:
/// `TJ_BLOCKED_AFTER` seconds, else 60.
fn blocked_after(env: &Env) -> std::time::Duration {
    let secs = env
        .blocked_after
        .as_deref()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0);
    std::time::Duration::from_secs_f64(secs.unwrap_or(60.0))
}

/// Replaces tj with the command (transparent mode, or a run tj could not set up): same pid,
/// no PTY, no capture. Returns only if the exec failed, with env(1)'s status for it.
fn exec_directly(argv: &[OsString]) -> Status {
    let err = relay::exec_in_place(argv);
    diag::error(&anyhow::anyhow!("{err}"));
    status_of(&err)
}

/// env(1)'s exit status for a command it could not start: 127 not found, 126 not
/// executable, 125 anything else.
fn status_of(err: &SpawnError) -> Status {
    match err {
        SpawnError::NotFound(_) => Status::NotFound,
        SpawnError::NotExecutable(_) => Status::NotExecutable,
        SpawnError::Setup(_) | SpawnError::Other(_) => Status::TjFailed,
    }
}

/// stdout's (device, inode), to compare with what the shell hook recorded (`stat -L
/// /dev/stdout`, which follows the link in /proc to the open file): the open file's own, from
/// `fstat`, without the lookups in /proc that a `stat` of `/dev/stdout` costs every run.
#[allow(clippy::useless_conversion, reason = "dev_t and ino_t are u64 on Linux, not everywhere")]
pub(super) fn stdout_identity() -> Option<(u64, u64)> {
    use std::os::fd::AsFd;
    let stat = nix::sys::stat::fstat(std::io::stdout().as_fd()).ok()?;
    Some((u64::try_from(stat.st_dev).ok()?, u64::try_from(stat.st_ino).ok()?))
}

fn show(argv: &[OsString]) -> String {
    argv.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ")
}
