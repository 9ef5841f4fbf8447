//! The PTY relay through its API (`tj::run::run`), with real children (`sh -c …`): bytes
//! reach capture and live exactly, statuses and exec errors map through, the drain is
//! capped, stdin behaves as without tj, the PTY is the child's terminal, and a child blocked
//! on input at the PTY is ended while a slow one is left alone.
//!
//! Every wait is under a deadline; nothing is timed.

#![cfg(unix)]
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use tj::run::{Blocked, Exit, LiveFd, Outcome, RelayIo, SpawnError, Spec, WinSize, run};

const DEADLINE: Duration = Duration::from_secs(30);

/// A live writer that keeps what it is given.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A capture into `sink` that sends on `ready` once the child has printed `ready`.
fn capture_until_ready(sink: Shared, ready: mpsc::Sender<()>) -> tj::run::CaptureFn {
    Box::new(move |bytes| {
        let mut all = sink.0.lock().unwrap();
        all.extend_from_slice(bytes);
        if all.windows(5).any(|w| w == b"ready") {
            let _ = ready.send(());
        }
    })
}

impl Shared {
    fn bytes(&self) -> Vec<u8> {
        self.0.lock().unwrap().clone()
    }
}

struct Relayed {
    outcome: Outcome,
    captured: Vec<u8>,
    live: Vec<u8>,
}

impl Relayed {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.captured).into_owned()
    }
}

fn sh(script: &str) -> Spec {
    let mut spec = Spec::new(
        vec![OsString::from("sh"), OsString::from("-c"), OsString::from(script)],
        PathBuf::from("/"),
    );
    // Independent of whether the test runner's stdout is a terminal.
    spec.size = Some(WinSize::default());
    spec
}

/// `sh -c script` with SIGINT, SIGQUIT and SIGHUP at their default action, for the tests
/// that end a child with one of them.
///
/// A child inherits the signals its parent ignores, and a test binary started in the
/// background of a script (`cargo test &`) or under `nohup` ignores some of these; a shell
/// started with a signal ignored cannot even trap it again. GNU `env --default-signal`
/// resets them before the exec; where it is missing, `sh` runs as it is.
fn sh_default_signals(script: &str) -> Spec {
    static SUPPORTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let supported = *SUPPORTED.get_or_init(|| {
        std::process::Command::new("env")
            .args(["--default-signal=INT,QUIT,HUP", "true"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    });
    let mut spec = sh(script);
    if supported {
        spec.argv.splice(0..0, ["env".into(), "--default-signal=INT,QUIT,HUP".into()]);
    }
    spec
}

fn dev_null() -> OwnedFd {
    File::open("/dev/null").unwrap().into()
}

/// Runs `spec` with stdin from `stdin` (default /dev/null), live into a buffer.
fn relay_with(spec: Spec, stdin: Option<OwnedFd>, live: Option<Box<dyn Write + Send>>) -> Relayed {
    relay_reader(spec, stdin, live, None)
}

/// [`relay_with`], with `reader` watched for its reader going away.
fn relay_reader(
    spec: Spec,
    stdin: Option<OwnedFd>,
    live: Option<Box<dyn Write + Send>>,
    reader: Option<OwnedFd>,
) -> Relayed {
    let captured = Shared::default();
    let sink = captured.clone();
    let io = RelayIo {
        live,
        capture: Box::new(move |bytes| sink.0.lock().unwrap().extend_from_slice(bytes)),
        stdin: Some(stdin.unwrap_or_else(dev_null)),
        stderr: None,
        prepare: None,
        capture_may_stall: false,
        reader,
    };
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(run(&spec, io));
    });
    let outcome = rx.recv_timeout(DEADLINE).expect("run() did not return within the deadline");
    Relayed { outcome, captured: captured.bytes(), live: Vec::new() }
}

fn relay(spec: Spec) -> Relayed {
    let live = Shared::default();
    let mut relayed = relay_with(spec, None, Some(Box::new(live.clone())));
    relayed.live = live.bytes();
    relayed
}

/// A scratch directory unique to this test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tj-relay-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_file(path: &Path, text: &[u8], mode: u32) {
    let mut file = OpenOptions::new().write(true).create_new(true).mode(mode).open(path).unwrap();
    file.write_all(text).unwrap();
}

#[test]
fn colours_and_carriage_returns_pass_byte_exact() {
    let r = relay(sh(
        r"printf '\033[31mred\033[0m\r50%%\r100%%\033[K\n\033]8;;http://x\033\\link\033]8;;\033\\'",
    ));
    let expected: &[u8] =
        b"\x1b[31mred\x1b[0m\r50%\r100%\x1b[K\r\n\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\";
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    assert_eq!(r.captured, expected);
    assert_eq!(r.live, expected);
    assert!(r.outcome.live_lost.is_none());
    assert!(!r.outcome.pty_held_open);
}

/// 1 MiB with every byte value, written after `stty -opost` so the PTY passes it unchanged.
fn one_mib(name: &str) -> (PathBuf, Vec<u8>) {
    let data: Vec<u8> =
        (0..1024 * 1024u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let dir = scratch(name);
    let file = dir.join("data");
    write_file(&file, &data, 0o644);
    (file, data)
}

#[test]
fn one_mib_arrives_whole_and_in_order() {
    let (file, data) = one_mib("mib");
    let r = relay(sh(&format!("stty -opost </dev/tty && cat '{}'", file.display())));
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    assert_eq!(r.captured.len(), data.len());
    assert!(r.captured == data, "capture differs from the file");
    assert!(r.live == data, "live output differs from the file");
    let _ = fs::remove_dir_all(file.parent().unwrap());
}

#[test]
fn one_mib_through_the_pipe_without_a_pty() {
    let (file, data) = one_mib("mib-pipe");
    let mut spec = sh(&format!("cat '{}'", file.display()));
    spec.pty = false;
    let r = relay(spec);
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    assert!(r.captured == data && r.live == data);
    let _ = fs::remove_dir_all(file.parent().unwrap());
}

#[test]
fn non_blocking_live_output_is_waited_on_not_dropped() {
    let (file, data) = one_mib("nonblock");
    let (mut reader, writer) = io::pipe().unwrap();
    let writer = OwnedFd::from(writer);
    let flags = nix::fcntl::fcntl(&writer, nix::fcntl::FcntlArg::F_GETFL).unwrap();
    let flags = nix::fcntl::OFlag::from_bits_truncate(flags) | nix::fcntl::OFlag::O_NONBLOCK;
    nix::fcntl::fcntl(&writer, nix::fcntl::FcntlArg::F_SETFL(flags)).unwrap();
    let drained = thread::spawn(move || {
        let mut all = Vec::new();
        reader.read_to_end(&mut all).unwrap();
        all
    });
    let spec = sh(&format!("stty -opost </dev/tty && cat '{}'", file.display()));
    let r = relay_with(spec, None, Some(Box::new(LiveFd::new(writer))));
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    assert!(r.outcome.live_lost.is_none(), "{:?}", r.outcome.live_lost);
    assert!(drained.join().unwrap() == data, "live output lost or reordered bytes");
    assert!(r.captured == data);
    let _ = fs::remove_dir_all(file.parent().unwrap());
}

#[test]
fn exit_codes_pass_through() {
    for code in [0, 1, 2, 101, 126, 127, 255] {
        let r = relay(sh(&format!("exit {code}")));
        assert_eq!(r.outcome.exit, Ok(Exit::Code(code)), "exit {code}");
    }
}

#[test]
fn exit_codes_pass_through_without_a_pty() {
    for code in [0, 3, 255] {
        let mut spec = sh(&format!("exit {code}"));
        spec.pty = false;
        assert_eq!(relay(spec).outcome.exit, Ok(Exit::Code(code)));
    }
}

#[test]
fn death_by_signal_is_reported_as_the_signal() {
    for (name, sig) in [("TERM", 15), ("INT", 2), ("HUP", 1), ("KILL", 9)] {
        let r = relay(sh_default_signals(&format!("kill -{name} $$")));
        assert_eq!(r.outcome.exit, Ok(Exit::Signal(sig)), "kill -{name}");
    }
}

#[test]
fn command_not_found_is_not_found() {
    let mut spec = sh("");
    spec.argv = vec!["tj-no-such-command-4711".into()];
    let r = relay(spec);
    assert_eq!(
        r.outcome.exit,
        Err(SpawnError::NotFound("tj-no-such-command-4711: command not found".into()))
    );
}

#[test]
fn missing_path_is_not_found() {
    let mut spec = sh("");
    spec.argv = vec!["/nonexistent/tj-cmd".into()];
    assert!(
        matches!(relay(spec).outcome.exit, Err(SpawnError::NotFound(msg)) if msg.contains("/nonexistent/tj-cmd"))
    );
}

#[test]
fn file_without_execute_permission_is_not_executable() {
    let dir = scratch("noexec");
    let script = dir.join("script.sh");
    write_file(&script, b"#!/bin/sh\necho hi\n", 0o644);
    let mut spec = sh("");
    spec.argv = vec![script.into()];
    let r = relay(spec);
    match r.outcome.exit {
        Err(SpawnError::NotExecutable(msg)) => assert!(msg.contains("script.sh"), "{msg}"),
        other => panic!("expected NotExecutable, got {other:?}"),
    }
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn directory_is_not_executable() {
    let mut spec = sh("");
    spec.argv = vec!["/tmp".into()];
    assert!(matches!(relay(spec).outcome.exit, Err(SpawnError::NotExecutable(_))));
}

#[test]
fn bad_interpreter_names_the_script_and_never_exits_134() {
    let dir = scratch("badinterp");
    let script = dir.join("bad.sh");
    write_file(&script, b"#!/nonexistent/interp -x\necho hi\n", 0o755);
    let mut spec = sh("");
    spec.argv = vec![script.into()];
    let r = relay(spec);
    match &r.outcome.exit {
        Err(SpawnError::NotFound(msg) | SpawnError::NotExecutable(msg)) => {
            assert!(msg.contains("bad.sh"), "{msg}");
            assert!(msg.contains("/nonexistent/interp"), "{msg}");
        }
        other => panic!("expected a spawn error, got {other:?}"),
    }
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn bad_interpreter_found_on_path_is_not_found() {
    let dir = scratch("badinterp-path");
    write_file(&dir.join("tj-bad-tool"), b"#!/nonexistent/interp\n", 0o755);
    let mut spec = sh("");
    spec.argv = vec!["tj-bad-tool".into()];
    spec.env_set.push(("PATH".into(), dir.clone().into()));
    let r = relay(spec);
    assert_eq!(
        r.outcome.exit,
        Err(SpawnError::NotFound(
            "tj-bad-tool: bad interpreter /nonexistent/interp: no such file or directory".into()
        ))
    );
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn missing_working_directory_is_tj_s_own_failure() {
    let mut spec = sh("true");
    spec.cwd = PathBuf::from("/nonexistent/tj-dir");
    match relay(spec).outcome.exit {
        Err(SpawnError::Other(msg)) => assert!(msg.contains("/nonexistent/tj-dir"), "{msg}"),
        other => panic!("expected Other, got {other:?}"),
    }
}

#[test]
fn runs_in_the_given_directory() {
    let dir = scratch("cwd");
    let mut spec = sh("pwd");
    spec.cwd = dir.clone();
    let r = relay(spec);
    assert_eq!(r.text().trim_end(), fs::canonicalize(&dir).unwrap().to_str().unwrap());
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn environment_is_set_and_removed_as_asked() {
    let mut spec = sh("echo \"inner=$TJ_INNER columns=${COLUMNS-unset} home=${HOME-unset}\"");
    spec.env_set.push(("TJ_INNER".into(), "1".into()));
    spec.env_set.push(("COLUMNS".into(), "7".into()));
    spec.env_remove.push("COLUMNS".into());
    spec.env_remove.push("HOME".into());
    let r = relay(spec);
    // Set wins over remove for the same name.
    assert_eq!(r.text(), "inner=1 columns=7 home=unset\r\n");
}

/// The pid a child printed as `pid:N`.
fn printed_pid(text: &str) -> i32 {
    let at = text.find("pid:").expect("no pid printed") + 4;
    text[at..].split_whitespace().next().unwrap().parse().unwrap()
}

fn kill(pid: i32) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
}

/// A script that leaves `descendant` running in a session of its own, holding the child's
/// stdout, and exits once the descendant is in that session (before, the hangup that follows
/// the child's exit would still reach it). The descendant prints `pid:N`.
fn leave_behind(name: &str, descendant: &str) -> (Spec, PathBuf) {
    let dir = scratch(name);
    let fifo = dir.join("ready");
    let script = format!(
        "mkfifo '{f}' && {{ setsid sh -c 'echo pid:$$; echo >\"$0\"; {descendant}' '{f}' & }} && read x <'{f}'",
        f = fifo.display()
    );
    (sh(&script), dir)
}

#[test]
fn descendant_holding_the_pty_does_not_hang_the_drain() {
    let (spec, dir) = leave_behind("held", "exec sleep 100");
    let r = relay(spec);
    kill(printed_pid(&r.text()));
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    assert!(r.outcome.pty_held_open);
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn chatty_descendant_is_cut_off_by_the_total_drain_cap() {
    let (mut spec, dir) = leave_behind("chatty", "while :; do echo tick; sleep 0.05; done");
    spec.drain_total = Duration::from_millis(500);
    let r = relay(spec);
    kill(printed_pid(&r.text()));
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    assert!(r.outcome.pty_held_open);
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn descendant_holding_the_pipe_does_not_hang_the_drain() {
    let (mut spec, dir) = leave_behind("held-pipe", "exec sleep 100");
    spec.pty = false;
    let r = relay(spec);
    kill(printed_pid(&r.text()));
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    assert!(r.outcome.pty_held_open);
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn readers_of_dev_null_stdin_see_eof_at_once() {
    let r = relay(sh("cat; read x; echo \"read:$?\"; [ -t 0 ] || echo notty"));
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    assert_eq!(r.text(), "read:1\r\nnotty\r\n");
}

#[test]
fn long_piped_line_reaches_the_child_whole() {
    let (reader, mut writer) = io::pipe().unwrap();
    let feeder = thread::spawn(move || {
        writer.write_all(&[b'x'; 10_000]).unwrap();
        writer.write_all(b"\n").unwrap();
    });
    let r = relay_with(sh("wc -c"), Some(reader.into()), Some(Box::new(Shared::default())));
    feeder.join().unwrap();
    assert_eq!(r.text().trim(), "10001");
}

#[test]
fn stty_size_shows_the_configured_size() {
    let mut spec = sh("stty size </dev/tty");
    spec.size = Some(WinSize { cols: 101, rows: 33, pixel_width: 0, pixel_height: 0 });
    assert_eq!(relay(spec).text(), "33 101\r\n");
}

#[test]
fn pty_is_the_controlling_terminal_and_stdout() {
    let r = relay(sh("tty </dev/tty; [ -t 1 ] && [ -t 2 ] && echo both"));
    let text = r.text();
    assert!(text.starts_with("/dev/pts/") || text.starts_with("/dev/tty"), "{text}");
    assert!(text.ends_with("both\r\n"), "{text}");
}

#[test]
fn without_a_pty_stdout_and_stderr_interleave_in_one_stream() {
    let mut spec = sh("echo out1; echo err1 >&2; echo out2; echo err2 >&2; [ -t 1 ] || echo notty");
    spec.pty = false;
    let r = relay(spec);
    assert_eq!(r.captured, b"out1\nerr1\nout2\nerr2\nnotty\n");
    assert_eq!(r.live, r.captured);
}

struct BrokenPipe;

impl Write for BrokenPipe {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::ErrorKind::BrokenPipe.into())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `lines` numbered lines of output, from `sh` after `prelude`.
fn numbered_lines(prelude: &str, lines: u32) -> Spec {
    sh(&format!(
        "{prelude}i=0; while [ $i -lt {lines} ]; do echo \"line $i of the output\"; i=$((i+1)); done"
    ))
}

#[test]
fn a_command_writing_after_its_live_reader_went_away_is_hung_up_on_through_a_pty() {
    // Without tj, `sh` would learn at its first write into the broken pipe. A PTY's writes
    // cannot fail that way: the command's terminal hangs up, as one that closes does.
    let r = relay_with(numbered_lines("", 200_000), None, Some(Box::new(BrokenPipe)));
    assert_eq!(r.outcome.exit, Ok(Exit::Signal(libc::SIGHUP)));
    assert!(r.outcome.reader_gone);
    let why = r.outcome.live_lost.clone().unwrap_or_default();
    assert!(why.contains("went away (broken pipe)") && why.contains("hung up"), "{why}");
    let text = r.text();
    assert!(text.starts_with("line 0 of the output\r\n"), "{text}");
    assert!(text.lines().count() < 200_000, "the command ran to its end");
}

#[test]
fn a_command_writing_less_than_a_pipe_holds_after_its_reader_went_keeps_its_status() {
    // Without tj these 10 KB could all have gone into the pipe before its reader left; the
    // PTY and the relay hold as much back. The command is not hung up on, nothing is said.
    let r = relay_with(numbered_lines("", 500), None, Some(Box::new(BrokenPipe)));
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    assert!(r.outcome.reader_gone);
    assert_eq!(r.outcome.live_lost, None);
    assert_eq!(r.text().lines().count(), 500);
}

#[test]
fn a_command_ignoring_the_hangup_is_killed_after_the_grace_and_its_output_kept() {
    // As for a SIGHUP sent to tj: whoever ignores it (and SIGPIPE, as Python does) and
    // writes on is killed after the grace period; everything it wrote until then is kept.
    let mut spec = sh("trap '' HUP PIPE; i=0; while :; do echo \"line $i\"; i=$((i+1)); done");
    spec.grace = Duration::from_millis(300);
    let r = relay_with(spec, None, Some(Box::new(BrokenPipe)));
    assert_eq!(r.outcome.exit, Ok(Exit::Signal(libc::SIGKILL)));
    assert_eq!(r.outcome.ended_by, Some(libc::SIGHUP));
    let text = r.text();
    let last = text.lines().last().unwrap_or_default();
    let count: usize = last.trim_start_matches("line ").trim_end().parse().unwrap_or(0) + 1;
    assert!(text.starts_with("line 0\r\n"), "{text}");
    // Every line up to the last one captured, none lost in between.
    assert!(text.contains(&format!("line {}\r\n", count / 2)), "{last}");
}

#[test]
fn a_command_writing_after_its_live_reader_went_away_finds_its_pipe_broken_without_a_pty() {
    // The pipe tj reads is closed as the one the reader left was: the writes fail as they
    // would without tj, with SIGPIPE, or with EPIPE when it is ignored (`echo` then fails
    // and the loop goes on). Exactly as without tj, so nothing is said.
    for (prelude, exit) in [("", Exit::Signal(libc::SIGPIPE)), ("trap '' PIPE; ", Exit::Code(0))] {
        let mut spec = numbered_lines(prelude, 200_000);
        spec.pty = false;
        let r = relay_with(spec, None, Some(Box::new(BrokenPipe)));
        assert_eq!(r.outcome.exit, Ok(exit), "{prelude:?}");
        assert!(r.outcome.reader_gone, "{prelude:?}");
        assert_eq!(r.outcome.live_lost, None, "{prelude:?}");
        let text = r.text();
        assert!(text.starts_with("line 0 of the output\n"), "{prelude:?}: {text}");
        assert!(text.lines().count() < 200_000, "{prelude:?}: all of the output was read");
    }
}

#[test]
fn a_rendition_reader_gone_before_any_output_is_noticed_without_a_live_writer() {
    // Agent mode: nothing is written live, so only the watch on the rendition's pipe can
    // tell that its reader has gone. Here it went before the command started.
    for (pty, exit) in [(true, libc::SIGHUP), (false, libc::SIGPIPE)] {
        let (read, write) = io::pipe().unwrap();
        drop(read);
        let mut spec = numbered_lines("", 200_000);
        spec.pty = pty;
        let r = relay_reader(spec, None, None, Some(write.into()));
        assert_eq!(r.outcome.exit, Ok(Exit::Signal(exit)), "pty: {pty}");
        assert!(r.outcome.reader_gone, "pty: {pty}");
        assert!(r.text().lines().count() < 200_000, "pty: {pty}: the command ran to its end");
    }
}

#[test]
fn a_rendition_reader_gone_while_the_command_writes_nothing_changes_nothing() {
    for pty in [true, false] {
        let (read, write) = io::pipe().unwrap();
        drop(read);
        let mut spec = sh("sleep 0.3; exit 3");
        spec.pty = pty;
        let r = relay_reader(spec, None, None, Some(write.into()));
        assert_eq!(r.outcome.exit, Ok(Exit::Code(3)), "pty: {pty}");
        assert_eq!(r.outcome.live_lost, None, "pty: {pty}");
    }
}

#[test]
fn a_rendition_reader_that_stays_changes_nothing() {
    for pty in [true, false] {
        let (read, write) = io::pipe().unwrap();
        let mut spec = numbered_lines("", 2000);
        spec.pty = pty;
        let r = relay_reader(spec, None, None, Some(write.into()));
        drop(read);
        assert_eq!(r.outcome.exit, Ok(Exit::Code(0)), "pty: {pty}");
        assert!(!r.outcome.reader_gone && r.outcome.live_lost.is_none(), "pty: {pty}");
        assert_eq!(r.text().lines().count(), 2000, "pty: {pty}");
    }
}

#[test]
fn a_live_writer_failing_otherwise_ends_the_command_as_its_own_write_would_have() {
    // `cmd > /dev/full` fails at its first write without tj; tj must not run it for ever.
    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from_raw_os_error(libc::ENOSPC))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    for (pty, exit) in [(true, libc::SIGHUP), (false, libc::SIGPIPE)] {
        let mut spec = numbered_lines("", 200_000);
        spec.pty = pty;
        let r = relay_with(spec, None, Some(Box::new(Full)));
        assert_eq!(r.outcome.exit, Ok(Exit::Signal(exit)), "pty: {pty}");
        assert!(r.outcome.reader_gone, "pty: {pty}");
        let why = r.outcome.live_lost.clone().unwrap_or_default();
        assert!(why.contains("No space left on device"), "pty: {pty}: {why}");
    }
}

#[test]
fn agent_mode_captures_without_live_output() {
    let r = relay_with(sh("echo hi"), None, None);
    assert_eq!(r.text(), "hi\r\n");
}

/// A PTY pair for the test to play the user's terminal: the test writes keystrokes into the
/// master; the slave is given to the relay as its stdin.
fn user_terminal() -> (Box<dyn portable_pty::MasterPty + Send>, File) {
    let pair = portable_pty::native_pty_system().openpty(portable_pty::PtySize::default()).unwrap();
    let name = pair.master.tty_name().unwrap();
    let slave =
        OpenOptions::new().read(true).write(true).custom_flags(libc::O_NOCTTY).open(name).unwrap();
    (pair.master, slave)
}

#[test]
fn terminal_stdin_is_forwarded_through_the_pty() {
    let (master, slave) = user_terminal();
    let mut keys = master.take_writer().unwrap();
    // Typed ahead: the relay forwards it once it runs.
    keys.write_all(b"hello\n").unwrap();
    let spec = sh("[ -t 0 ] && echo stdin-is-tty; read x; echo \"got:$x\"");
    let r = relay_with(spec, Some(slave.into()), Some(Box::new(Shared::default())));
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    let text = r.text();
    assert!(text.contains("stdin-is-tty\r\n"), "{text}");
    assert!(text.contains("got:hello\r\n"), "{text}");
    drop(master);
}

#[test]
fn pty_starts_with_the_user_s_terminal_settings() {
    let (master, slave) = user_terminal();
    let mut settings = nix::sys::termios::tcgetattr(&slave).unwrap();
    settings.local_flags.remove(nix::sys::termios::LocalFlags::ECHO);
    nix::sys::termios::tcsetattr(&slave, nix::sys::termios::SetArg::TCSANOW, &settings).unwrap();
    let r = relay_with(sh("stty -a </dev/tty"), Some(slave.into()), None);
    assert!(r.text().contains(" -echo "), "{}", r.text());
    drop(master);
}

#[test]
fn ctrl_c_typed_on_the_terminal_interrupts_the_child() {
    let (master, slave) = user_terminal();
    let user = slave.as_fd().try_clone_to_owned().unwrap();
    let mut keys = master.take_writer().unwrap();
    let (ready_tx, ready_rx) = mpsc::channel();
    let sink = Shared::default();
    let io = RelayIo {
        live: None,
        capture: capture_until_ready(sink, ready_tx),
        stdin: Some(slave.into()),
        stderr: None,
        prepare: None,
        capture_may_stall: false,
        reader: None,
    };
    let (tx, rx) = mpsc::channel();
    let spec = sh_default_signals("echo ready; while :; do sleep 1; done");
    thread::spawn(move || {
        let _ = tx.send(run(&spec, io));
    });
    ready_rx.recv_timeout(DEADLINE).expect("the child never started");
    // tj's terminal in raw mode passes Ctrl-C as a byte (the relay only makes a terminal raw
    // when it is tj's controlling one, so the test does it); the PTY's line discipline turns
    // the byte into SIGINT for the child.
    let mut raw = nix::sys::termios::tcgetattr(&user).unwrap();
    nix::sys::termios::cfmakeraw(&mut raw);
    nix::sys::termios::tcsetattr(&user, nix::sys::termios::SetArg::TCSANOW, &raw).unwrap();
    keys.write_all(b"\x03").unwrap();
    let outcome = rx.recv_timeout(DEADLINE).expect("run() did not return");
    assert_eq!(outcome.exit, Ok(Exit::Signal(2)));
    drop(master);
}

#[test]
fn failing_capture_does_not_stop_the_live_stream() {
    let live = Shared::default();
    let io = RelayIo {
        live: Some(Box::new(live.clone())),
        capture: Box::new(|_| panic!("capture failed on purpose")),
        stdin: Some(dev_null()),
        stderr: None,
        prepare: None,
        capture_may_stall: false,
        reader: None,
    };
    let spec = sh("i=0; while [ $i -lt 500 ]; do echo \"line $i\"; i=$((i+1)); done");
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(run(&spec, io));
    });
    let outcome = rx.recv_timeout(DEADLINE).expect("run() did not return");
    assert_eq!(outcome.exit, Ok(Exit::Code(0)));
    assert_eq!(outcome.warnings.len(), 1, "{:?}", outcome.warnings);
    let shown = live.bytes();
    assert!(shown.ends_with(b"line 499\r\n"));
    assert_eq!(shown.split(|&b| b == b'\n').count(), 501);
}

/// `sh -c script` with the blocked-on-input watchdog set to a short silence. Configuration,
/// not synchronisation: whatever the timing, the verdicts asserted below hold.
fn watched(script: &str) -> Spec {
    let mut spec = sh(script);
    spec.blocked_after = Some(Duration::from_millis(300));
    spec
}

fn assert_ended_as_blocked(r: &Relayed) -> &Blocked {
    let blocked = r.outcome.blocked.as_ref().unwrap_or_else(|| panic!("not blocked: {r:?}"));
    assert!(
        matches!(r.outcome.exit, Ok(Exit::Signal(libc::SIGTERM | libc::SIGKILL))),
        "{:?}",
        r.outcome.exit
    );
    assert!(blocked.idle >= Duration::from_millis(300), "{blocked:?}");
    blocked
}

impl std::fmt::Debug for Relayed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}, output {:?}", self.outcome, self.text())
    }
}

#[test]
fn password_prompt_with_echo_off_is_ended_as_blocked() {
    // As ssh and sudo do it: echo off on the terminal, then a read of the terminal.
    let r = relay(watched("printf 'Password: '; stty -echo </dev/tty; read x </dev/tty"));
    let blocked = assert_ended_as_blocked(&r);
    assert!(blocked.reason.contains("echo off"), "{blocked:?}");
    assert!(r.text().contains("Password: "));
}

#[test]
fn password_prompt_is_blocked_even_when_stty_misses_the_terminal() {
    // `stty -echo` acts on stdin, here /dev/null: it fails, says so after the prompt, and
    // echo stays on. The read of the terminal still tells.
    let r = relay(watched("printf 'Password: '; stty -echo; read x </dev/tty"));
    let blocked = assert_ended_as_blocked(&r);
    assert!(blocked.reason.starts_with("reading the terminal"), "{blocked:?}");
}

#[test]
fn password_prompt_read_with_echo_on_is_named_by_its_prompt() {
    let r = relay(watched("printf 'Password: '; read x </dev/tty"));
    let blocked = assert_ended_as_blocked(&r);
    assert!(blocked.reason.contains("password"), "{blocked:?}");
}

#[test]
fn question_read_from_the_terminal_is_blocked() {
    let r = relay(watched("printf 'Continue? [y/N] '; read x </dev/tty"));
    let blocked = assert_ended_as_blocked(&r);
    assert!(blocked.reason.contains("prompt"), "{blocked:?}");
}

#[test]
fn full_screen_program_waiting_for_keys_is_blocked() {
    // A pager's shape: alternate screen, raw mode, a read of the terminal.
    let r = relay(watched(
        "printf '\\033[?1049hpage 1'; stty raw -echo </dev/tty; dd bs=1 count=1 </dev/tty",
    ));
    let blocked = assert_ended_as_blocked(&r);
    assert!(blocked.reason.contains("full-screen"), "{blocked:?}");
}

#[test]
fn silent_slow_child_is_not_blocked() {
    let r = relay(watched("sleep 2; echo done"));
    assert_eq!(r.outcome.blocked, None);
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    assert_eq!(r.text(), "done\r\n");
}

#[test]
fn raw_terminal_over_a_sleeping_child_is_not_blocked() {
    let r = relay(watched("stty raw -echo </dev/tty; sleep 2; stty sane </dev/tty; echo done"));
    assert_eq!(r.outcome.blocked, None);
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    assert!(r.text().contains("done"), "{r:?}");
}

#[test]
fn prompt_over_a_pipe_read_is_not_blocked() {
    // The last line looks like a prompt, but the read is of a pipe that ends after 2 s, not
    // of the terminal.
    let r = relay(watched("sleep 2 | { printf 'Name: '; read x; echo; echo done; }"));
    assert_eq!(r.outcome.blocked, None);
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    assert!(r.text().ends_with("done\r\n"), "{r:?}");
}

#[test]
fn steady_output_is_not_blocked() {
    let r =
        relay(watched("i=0; while [ $i -lt 15 ]; do echo tick $i; sleep 0.1; i=$((i+1)); done"));
    assert_eq!(r.outcome.blocked, None);
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    assert_eq!(r.text().lines().count(), 15);
}

#[test]
fn watchdog_is_off_without_a_pty() {
    // No PTY, no controlling terminal: /dev/tty cannot even be opened, and nothing is judged.
    let mut spec = watched("sleep 1; echo done");
    spec.pty = false;
    let r = relay(spec);
    assert_eq!(r.outcome.blocked, None);
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
}

/// Runs `spec` with a terminal of the test's as stdin (cooked, and not the relay's
/// controlling terminal, so the relay forwards keystrokes without raw mode), types `keys`
/// into it once the child has printed `ready`, and returns what the child wrote.
fn relay_typing(spec: Spec, keys: &[u8]) -> Relayed {
    let (master, slave) = user_terminal();
    let mut writer = master.take_writer().unwrap();
    let (ready_tx, ready_rx) = mpsc::channel();
    let captured = Shared::default();
    let sink = captured.clone();
    let io = RelayIo {
        live: None,
        capture: capture_until_ready(sink, ready_tx),
        stdin: Some(slave.into()),
        stderr: None,
        prepare: None,
        capture_may_stall: false,
        reader: None,
    };
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(run(&spec, io));
    });
    ready_rx.recv_timeout(DEADLINE).expect("the child never got ready");
    writer.write_all(keys).unwrap();
    let outcome = rx.recv_timeout(DEADLINE).expect("run() did not return: input lost?");
    drop(master);
    Relayed { outcome, captured: captured.bytes(), live: Vec::new() }
}

#[test]
fn end_of_file_typed_reaches_the_child_as_its_own_end_of_file_character() {
    // Ctrl-D on the user's cooked terminal ends the input; the child's terminal uses ^B for
    // that, so tj must type ^B (not ^D, not a NUL, not nothing) for `od` to see its end.
    let r = relay_typing(sh("stty eof ^B; echo ready; od -c; echo done"), b"hello\n\x04");
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    let text = r.text();
    assert!(text.contains("h   e   l   l   o  \\n\r\n"), "{text}");
    assert!(text.ends_with("done\r\n"), "{text}");
    assert!(!text.contains("004") && !text.contains("\\0"), "{text}");
}

#[test]
fn end_of_file_typed_is_not_forwarded_to_a_child_reading_keys() {
    // A child in non-canonical mode has no end of file to be told: it gets the bytes typed
    // around the Ctrl-D, and nothing for it. Forwarding also goes on after it.
    let spec = sh("stty -icanon; echo ready; head -c 6 | od -c; echo done");
    let r = relay_typing(spec, b"abc\n\x04x\n");
    assert_eq!(r.outcome.exit, Ok(Exit::Code(0)));
    let text = r.text();
    assert!(text.contains("a   b   c  \\n   x  \\n\r\n"), "{text}");
    assert!(text.ends_with("done\r\n"), "{text}");
}

#[test]
fn stderr_apart_goes_to_its_descriptor_unchanged_and_is_not_captured() {
    for pty in [true, false] {
        let dir = scratch(if pty { "stderr-pty" } else { "stderr-pipe" });
        let path = dir.join("err.txt");
        let file = File::create(&path).unwrap();
        let mut spec = sh("echo out; [ -t 2 ] || echo err-not-a-tty >&2; echo err >&2");
        spec.pty = pty;
        let captured = Shared::default();
        let sink = captured.clone();
        let io = RelayIo {
            live: None,
            capture: Box::new(move |bytes| sink.0.lock().unwrap().extend_from_slice(bytes)),
            stdin: Some(dev_null()),
            stderr: Some(file.into()),
            prepare: None,
            capture_may_stall: false,
            reader: None,
        };
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let _ = tx.send(run(&spec, io));
        });
        let outcome = rx.recv_timeout(DEADLINE).expect("run() did not return");
        assert_eq!(outcome.exit, Ok(Exit::Code(0)), "pty {pty}");
        let expected: &[u8] = if pty { b"out\r\n" } else { b"out\n" };
        assert_eq!(captured.bytes(), expected, "pty {pty}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "err-not-a-tty\nerr\n", "pty {pty}");
        let _ = fs::remove_dir_all(dir);
    }
}
