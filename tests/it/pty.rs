//! The real `tj` binary inside an outer pseudo-terminal that plays the user's terminal: the
//! live stream reaches it byte-exact, statuses map through, Ctrl-C and SIGTERM end the child,
//! the window size follows, the terminal's settings come back as they were, and the rendition
//! goes to the store and the side channel only (DESIGN.md "Contracts of `tj run`").
//!
//! Each test runs a wrapper `sh -c` as the session leader of the outer PTY, with a cleared
//! environment from [`TestEnv`]; the wrapper records `stty -g` before and after `tj` and
//! prints tj's status. A thread reads the master into a shared buffer; every wait is for a
//! marker in that buffer (or a terminal state) under a 30 s deadline; nothing is timed, and
//! the process group is killed if a test fails half-way.

#![cfg(unix)]
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::cell::Cell;
use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use sha2::{Digest, Sha256};

use crate::util::{KillOnDrop, TestEnv};

const DEADLINE: Duration = Duration::from_secs(30);

/// What the outer terminal has shown so far.
#[derive(Default)]
struct Screen {
    bytes: Vec<u8>,
    /// The master reported EOF or an error: nothing more will come.
    closed: bool,
}

type SharedScreen = Arc<(Mutex<Screen>, Condvar)>;

/// A wrapper shell (or any program) running in an outer PTY, the way a user's terminal runs
/// a shell.
pub(crate) struct Outer {
    pid: i32,
    master: Box<dyn MasterPty + Send>,
    keys: Box<dyn Write + Send>,
    screen: SharedScreen,
    exit: Receiver<u32>,
    exited: bool,
}

/// The environment a wrapper runs with: empty but for HOME, PATH, the tj directories of
/// `env`, `TERM=xterm`, and `TJ` (the binary under test).
fn outer_cmd(env: &TestEnv, script: &str) -> CommandBuilder {
    let mut cmd = in_outer(env, "sh");
    cmd.arg("-c");
    cmd.arg(script);
    cmd.env("TJ", crate::util::tj_bin_str());
    cmd
}

/// `program` with the environment of [`outer_cmd`] but for `TJ`, in `env`'s working directory.
pub(crate) fn in_outer(env: &TestEnv, program: impl AsRef<std::ffi::OsStr>) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(program);
    cmd.env_clear();
    cmd.env("HOME", env.root.join("home"));
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    cmd.env("TJ_DATA_DIR", env.data());
    cmd.env("TJ_CONFIG_DIR", env.root.join("config"));
    cmd.env("TERM", "xterm");
    cmd.cwd(env.work());
    cmd
}

/// `setup`, then `body` between the markers `<<B>>` and `<<E>>`, with `stty -g` recorded
/// after `setup` and after `body`, and `body`'s status, then `<<END>>`; then the wrapper
/// waits for a line ([`Outer::finish`] sends it) before it exits. A wrapper that exits right
/// after its last write may close the terminal before the test has read what it wrote.
fn wrapped(setup: &str, body: &str) -> String {
    format!(
        "{setup}\nbefore=$(stty -g)\nprintf '<<B>>'\n{body}\nrc=$?\nprintf '<<E>>'\nafter=$(stty -g)\n\
         printf '\\n<<rc=%s>>\\n<<before=%s>>\\n<<after=%s>>\\n<<END>>\\n' \"$rc\" \"$before\" \"$after\"\n\
         read -r _done\n"
    )
}

pub(crate) fn size(rows: u16, cols: u16) -> PtySize {
    PtySize { rows, cols, pixel_width: 0, pixel_height: 0 }
}

impl Outer {
    pub(crate) fn spawn(cmd: CommandBuilder, size: PtySize) -> Outer {
        let pair = native_pty_system().openpty(size).unwrap();
        let mut child = pair.slave.spawn_command(cmd).unwrap();
        // Ours would keep the terminal open after the wrapper is gone.
        drop(pair.slave);
        let pid = i32::try_from(child.process_id().unwrap()).unwrap();
        let (tx, exit) = mpsc::channel();
        thread::spawn(move || {
            let status = child.wait().unwrap();
            let _ = tx.send(status.exit_code());
        });
        let screen = SharedScreen::default();
        let sink = Arc::clone(&screen);
        let mut reader = pair.master.try_clone_reader().unwrap();
        thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let read = reader.read(&mut buf);
                let (lock, changed) = &*sink;
                let mut screen = lock.lock().unwrap_or_else(PoisonError::into_inner);
                match read {
                    Ok(n) if n > 0 => screen.bytes.extend_from_slice(&buf[..n]),
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                    // EOF, or EIO once every descriptor of the slave is closed.
                    _ => screen.closed = true,
                }
                changed.notify_all();
                if screen.closed {
                    break;
                }
            }
        });
        let keys = pair.master.take_writer().unwrap();
        Outer { pid, master: pair.master, keys, screen, exit, exited: false }
    }

    /// Spawns `script` in a fresh 24×80 outer terminal.
    fn start(env: &TestEnv, script: &str) -> Outer {
        Outer::spawn(outer_cmd(env, script), size(24, 80))
    }

    /// Waits until `done` holds for everything shown so far, re-checking on new output and
    /// at least every `every` (for conditions that are not about output); returns the screen.
    fn wait_until(&self, what: &str, every: Duration, done: impl Fn(&[u8]) -> bool) -> Vec<u8> {
        let deadline = Instant::now() + DEADLINE;
        let (lock, changed) = &*self.screen;
        let mut screen = lock.lock().unwrap();
        loop {
            if done(&screen.bytes) {
                return screen.bytes.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || screen.closed {
                let why = if screen.closed {
                    // Whether the program in the terminal exited, and how, tells a death by
                    // a signal from a lost write.
                    match self.exit.recv_timeout(Duration::from_secs(2)) {
                        Ok(code) => format!("the terminal closed (its program exited {code})"),
                        Err(_) => {
                            "the terminal closed (its program's status is unknown)".to_owned()
                        }
                    }
                } else {
                    "timed out".to_owned()
                };
                let shown = String::from_utf8_lossy(&screen.bytes).into_owned();
                // Not while holding the lock: the reader thread would find it poisoned.
                drop(screen);
                panic!("{why} waiting for {what}; the terminal showed:\n{shown}");
            }
            screen = changed.wait_timeout(screen, left.min(every)).unwrap().0;
        }
    }

    /// Waits until `needle` has been shown after byte `from`; returns the screen.
    fn wait_for_after(&self, from: usize, needle: &str) -> Vec<u8> {
        // Where the search starts: earlier bytes have been searched already.
        let searched = Cell::new(from);
        self.wait_until(&format!("{needle:?}"), DEADLINE, |bytes| {
            let start = searched.get().min(bytes.len());
            let found = find(&bytes[start..], needle.as_bytes()).is_some();
            searched.set(bytes.len().saturating_sub(needle.len()).max(start));
            found
        })
    }

    pub(crate) fn wait_for(&self, needle: &str) -> Vec<u8> {
        self.wait_for_after(0, needle)
    }

    /// Waits until process `pid` runs `comm` (it has exec'd, so its signal dispositions are
    /// that program's). Checked on new output and every 10 ms.
    fn wait_exec(&self, pid: i32, comm: &str) {
        self.wait_until(&format!("{pid} to run {comm}"), Duration::from_millis(10), |_| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == comm)
        });
    }

    /// Waits until the outer terminal is in raw mode: tj has taken it and forwards keys as
    /// bytes. Checked on new output and every 10 ms (a terminal state sends no event).
    fn wait_raw(&self) {
        self.wait_until("tj to put the terminal in raw mode", Duration::from_millis(10), |_| {
            self.is_raw()
        });
    }

    /// The outer terminal has neither canonical input nor signal keys (termios calls on the
    /// master act on the slave's settings).
    fn is_raw(&self) -> bool {
        let termios = self.master.get_termios().unwrap();
        termios.local_flags.bits() & (libc::ICANON | libc::ISIG) == 0
    }

    pub(crate) fn send(&mut self, keys: &[u8]) {
        self.keys.write_all(keys).unwrap();
        self.keys.flush().unwrap();
    }

    fn resize(&self, size: PtySize) {
        self.master.resize(size).unwrap();
    }

    /// Waits for the program in the outer terminal to exit, and returns its exit code.
    pub(crate) fn wait_exit(&mut self) -> u32 {
        let code = self.exit.recv_timeout(DEADLINE).expect("the program did not exit");
        self.exited = true;
        code
    }

    /// Everything the outer terminal has shown so far.
    pub(crate) fn shown(&self) -> Vec<u8> {
        self.screen.0.lock().unwrap_or_else(PoisonError::into_inner).bytes.clone()
    }

    /// Waits for the wrapper's closing marker and for the wrapper to exit.
    fn finish(mut self) -> Finished {
        let screen = self.wait_for("<<END>>");
        // The line the wrapper waits for before it exits (`wrapped`): CR for a cooked
        // terminal, LF for one left raw.
        self.send(b"\r\n");
        let code = self.exit.recv_timeout(DEADLINE).expect("the wrapper did not exit");
        self.exited = true;
        assert_eq!(code, 0, "the wrapper failed:\n{}", String::from_utf8_lossy(&screen));
        let field = |name: &str| {
            let text = String::from_utf8_lossy(&screen).into_owned();
            let open = format!("<<{name}=");
            let at = text.rfind(&open).unwrap_or_else(|| panic!("no {name} in:\n{text}"));
            let rest = &text[at + open.len()..];
            rest[..rest.find(">>").unwrap()].to_owned()
        };
        let rc = field("rc").parse().unwrap();
        let before = field("before");
        let after = field("after");
        Finished { screen, rc, before, after }
    }
}

impl Drop for Outer {
    fn drop(&mut self) {
        // Not once the wrapper was reaped: its pid, and with it the group id, may be reused.
        if !self.exited && self.exit.try_recv().is_err() {
            // The wrapper leads its own session and process group; tj is in it, and tj's
            // child gets SIGHUP when tj's PTY goes with it.
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(self.pid),
                nix::sys::signal::SIGKILL,
            );
        }
    }
}

/// A wrapper that has run to its end.
struct Finished {
    screen: Vec<u8>,
    /// `body`'s status.
    rc: i32,
    before: String,
    after: String,
}

impl Finished {
    /// What `body` showed: the bytes between `<<B>>` and `<<E>>`.
    fn body(&self) -> &[u8] {
        between(&self.screen, "<<B>>", "<<E>>")
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.screen).into_owned()
    }

    fn assert_terminal_restored(&self) {
        assert!(self.before.contains(':'), "no stty -g output: {}", self.text());
        assert_eq!(self.before, self.after, "the terminal's settings changed:\n{}", self.text());
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The bytes between the first `open` and the last `close` after it.
fn between<'a>(bytes: &'a [u8], open: &str, close: &str) -> &'a [u8] {
    let start = find(bytes, open.as_bytes())
        .unwrap_or_else(|| panic!("no {open} in {:?}", String::from_utf8_lossy(bytes)))
        + open.len();
    let rest = &bytes[start..];
    let end = rest
        .windows(close.len())
        .rposition(|w| w == close.as_bytes())
        .unwrap_or_else(|| panic!("no {close} in {:?}", String::from_utf8_lossy(rest)));
    &rest[..end]
}

/// `tj ls --format json` in `env`.
fn artifacts(env: &TestEnv) -> Vec<serde_json::Value> {
    let out = env.run(&["ls", "--format", "json"], b"");
    assert!(out.status.success(), "{}", crate::util::stderr(&out));
    serde_json::from_slice::<Vec<serde_json::Value>>(&out.stdout).unwrap()
}

/// The one artifact stored in `env`.
fn only_artifact(env: &TestEnv) -> serde_json::Value {
    let mut list = artifacts(env);
    assert_eq!(list.len(), 1, "{list:?}");
    list.remove(0)
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes a child prints in the byte-exact tests: colours, `\r` redraws, an erase, an
/// OSC 8 hyperlink, tabs, UTF-8, lines and no final newline.
const FMT: &str = r"\033[31mred\033[0m\r50%%\r100%%\033[K\n\033]8;;http://x\033\\link\033]8;;\033\\\n\tA\tB \303\251\342\234\223\n\033[1mbold\033[0m";
const PRINTED: &[u8] = b"\x1b[31mred\x1b[0m\r50%\r100%\x1b[K\n\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n\tA\tB \xc3\xa9\xe2\x9c\x93\n\x1b[1mbold\x1b[0m";

#[test]
fn live_bytes_are_byte_exact_on_a_raw_terminal() {
    let env = TestEnv::new();
    // A raw outer terminal does no output processing (no \n → \r\n), and tj gives its PTY the
    // user's settings, so what the child wrote is exactly what the terminal receives.
    let script = wrapped("stty raw -echo", r#""$TJ" run -- printf "$FMT""#);
    let mut cmd = outer_cmd(&env, &script);
    cmd.env("FMT", FMT);
    let done = Outer::spawn(cmd, size(24, 80)).finish();
    assert_eq!(done.rc, 0, "{}", done.text());
    assert_eq!(done.body(), PRINTED, "{:?}", String::from_utf8_lossy(done.body()));
    done.assert_terminal_restored();
    // Terminal mode: the rendition went to the store, not to the terminal.
    assert_eq!(only_artifact(&env)["mode"], "terminal");
}

/// Runs `child` in a cooked outer terminal, directly or through tj, answering its `read`
/// once it is ready (and, through tj, once tj has the terminal in raw mode); returns what the
/// child printed between `<<P>>` and `<<Q>>`.
fn cooked_run(env: &TestEnv, through_tj: bool) -> Finished {
    let child = r#"stty -echo; echo ready; read x; printf '<<P>>'; printf "$FMT"; printf '<<Q>>'"#;
    let body = if through_tj { r#""$TJ" run -- sh -c "$CHILD""# } else { r#"sh -c "$CHILD""# };
    let mut cmd = outer_cmd(env, &wrapped("", body));
    cmd.env("FMT", FMT);
    cmd.env("CHILD", child);
    let mut outer = Outer::spawn(cmd, size(24, 80));
    outer.wait_for("ready");
    if through_tj {
        outer.wait_raw();
    }
    outer.send(b"\r");
    outer.finish()
}

#[test]
fn live_bytes_match_a_direct_run_on_a_cooked_terminal() {
    let env = TestEnv::new();
    let direct = cooked_run(&env, false);
    let via_tj = cooked_run(&env, true);
    assert_eq!((direct.rc, via_tj.rc), (0, 0), "{}", via_tj.text());
    let expected = between(&direct.screen, "<<P>>", "<<Q>>");
    let shown = between(&via_tj.screen, "<<P>>", "<<Q>>");
    // A cooked terminal turns \n into \r\n; with tj, the PTY does it and tj's raw terminal
    // does not do it again.
    assert!(expected.windows(2).any(|w| w == b"\r\n"), "{expected:?}");
    assert_eq!(
        String::from_utf8_lossy(shown),
        String::from_utf8_lossy(expected),
        "through tj the terminal received other bytes than without tj"
    );
    via_tj.assert_terminal_restored();
}

#[test]
fn output_written_at_once_is_not_translated_twice() {
    let env = TestEnv::new();
    // A race, so the child prints at once and eight run side by side: on a two-core machine
    // about one run in three loses it.
    let mut translated = Vec::new();
    for _ in 0..5 {
        let outers: Vec<Outer> = (0..8)
            .map(|_| Outer::start(&env, &wrapped("", r#""$TJ" run -- printf 'a\nb\n'"#)))
            .collect();
        for outer in outers {
            let done = outer.finish();
            assert_eq!(done.rc, 0, "{}", done.text());
            done.assert_terminal_restored();
            if done.body() != b"a\r\nb\r\n" {
                translated.push(String::from_utf8_lossy(done.body()).into_owned());
            }
        }
    }
    assert!(translated.is_empty(), "{} of 40 runs: {translated:?}", translated.len());
}

#[test]
fn live_bytes_match_a_direct_run_when_stdin_is_not_a_terminal() {
    let env = TestEnv::new();
    let child = r#"printf '<<P>>'; printf "$FMT"; printf '<<Q>>'"#;
    let run = |body: &str| {
        let mut cmd = outer_cmd(&env, &wrapped("", body));
        cmd.env("FMT", FMT);
        cmd.env("CHILD", child);
        Outer::spawn(cmd, size(24, 80)).finish()
    };
    let direct = run(r#"sh -c "$CHILD" </dev/null"#);
    let via_tj = run(r#""$TJ" run -- sh -c "$CHILD" </dev/null"#);
    assert_eq!(via_tj.rc, 0, "{}", via_tj.text());
    assert_eq!(
        String::from_utf8_lossy(between(&via_tj.screen, "<<P>>", "<<Q>>")),
        String::from_utf8_lossy(between(&direct.screen, "<<P>>", "<<Q>>")),
    );
    via_tj.assert_terminal_restored();
}

/// `len` bytes of printable ASCII in lines of varying length, different for each `seed`.
fn printable(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        // xorshift64
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let byte = (state >> 56) as u8;
        out.push(if byte < 3 { b'\n' } else { b' ' + byte % 95 });
    }
    out
}

#[test]
fn spill_sha256_is_the_sha256_of_what_the_child_wrote() {
    for round in 0..5 {
        let env = TestEnv::new();
        let data = printable(round + 1, 1024 * 1024);
        let file = env.root.join("data.txt");
        std::fs::File::create(&file).unwrap().write_all(&data).unwrap();
        // Raw, so neither PTY changes a byte and the spill holds exactly the file. With a
        // side channel: a run watched live takes no digest of what it stores.
        let script = wrapped("stty raw -echo", r#""$TJ" run --emit "$EMIT" -- cat "$FILE""#);
        let mut cmd = outer_cmd(&env, &script);
        cmd.env("FILE", &file);
        cmd.env("EMIT", env.root.join("rendition.txt"));
        let done = Outer::spawn(cmd, size(24, 80)).finish();
        assert_eq!(done.rc, 0, "round {round}");
        assert!(done.body() == data, "round {round}: the live stream differs from the file");
        done.assert_terminal_restored();

        let meta = only_artifact(&env);
        let expected = sha256_hex(&data);
        assert_eq!(meta["sha256"], expected.as_str(), "round {round}");
        assert_eq!(meta["bytes"], data.len(), "round {round}");
        let id = meta["id"].as_str().unwrap();
        assert!(expected.starts_with(id), "round {round}: id {id} is not a prefix of the hash");
        let spill = std::fs::read(env.data().join("spill").join(format!("{id}.log"))).unwrap();
        assert_eq!(sha256_hex(&spill), expected, "round {round}: the spill file differs");
    }
}

/// In agent mode no terminal shows the output, so the PTY leaves `\n` untranslated (the
/// command sees `-opost`) and tj adds the `\r` of each line in the capture: what is stored
/// is byte for byte what a translating PTY writes. (The side-channel test below checks
/// that agent and terminal mode store the same original under the same id.)
#[test]
fn agent_mode_stores_what_a_translating_pty_would_have_written() {
    let env = TestEnv::new();
    let script = "stty -a </dev/tty | grep -o -- '-\\?opost'; printf 'one\\ntwo\\r\\nthree'";
    let out = env.run(&["run", "--agent", "--", "sh", "-c", script], b"");
    assert!(out.status.success(), "{}", crate::util::stderr(&out));
    let rendition = crate::util::stdout(&out);
    assert!(rendition.contains("-opost\none\ntwo\nthree"), "{rendition}");
    let id = only_artifact(&env)["id"].as_str().unwrap().to_owned();
    let spill = std::fs::read(env.data().join("spill").join(format!("{id}.log"))).unwrap();
    assert_eq!(spill, b"-opost\r\none\r\ntwo\r\r\nthree");
}

/// The `<<NAME=VALUE>>` pairs a wrapper printed, in order.
fn tagged(text: &str, name: &str) -> Vec<String> {
    let open = format!("<<{name} ");
    text.match_indices(&open)
        .map(|(at, _)| {
            let rest = &text[at + open.len()..];
            rest[..rest.find(">>").unwrap()].to_owned()
        })
        .collect()
}

#[test]
fn exit_codes_and_signals_map_through_in_terminal_mode() {
    let env = TestEnv::new();
    let body = r#"
for c in 0 1 2 101 126 127 255; do
  "$TJ" run -- sh -c "echo exiting $c; exit $c"; printf '<<code %s=%s>>\n' "$c" "$?"; printf '<<stty %s>>\n' "$(stty -g)"
done
for s in TERM INT HUP KILL; do
  "$TJ" run -- sh -c "kill -$s \$\$"; printf '<<code %s=%s>>\n' "$s" "$?"; printf '<<stty %s>>\n' "$(stty -g)"
done
"$TJ" run -- tj-no-such-command-4711; printf '<<code notfound=%s>>\n' "$?"
"$TJ" run -- /; printf '<<code directory=%s>>\n' "$?"
true"#;
    let done = Outer::start(&env, &wrapped("", body)).finish();
    let text = done.text();
    let codes = tagged(&text, "code");
    let expected = [
        "0=0",
        "1=1",
        "2=2",
        "101=101",
        "126=126",
        "127=127",
        "255=255",
        "TERM=143",
        "INT=130",
        "HUP=129",
        "KILL=137",
        "notfound=127",
        "directory=126",
    ];
    assert_eq!(codes, expected, "{text}");
    let settings = tagged(&text, "stty");
    assert_eq!(settings.len(), 11, "{text}");
    assert!(settings.iter().all(|s| *s == done.before), "{text}");
    done.assert_terminal_restored();
    // The runs with output are stored (an empty output is not), each in terminal mode.
    let modes: Vec<_> = artifacts(&env).iter().map(|a| a["mode"].clone()).collect();
    assert!(modes.len() >= 7 && modes.iter().all(|m| m == "terminal"), "{modes:?}");
}

#[test]
fn ctrl_c_on_the_terminal_interrupts_the_child() {
    let env = TestEnv::new();
    let script = wrapped("", r#""$TJ" run -- sh -c 'echo "ready pid=$$ end"; exec sleep 30'"#);
    let mut outer = Outer::start(&env, &script);
    let screen = outer.wait_for(" end");
    // dash catches SIGINT under -c; one that comes between its fork (or exec) and the exec of
    // sleep is lost, and sleep would run its 30 s. So: once sleep runs.
    let pid = std::str::from_utf8(between(&screen, "pid=", " end")).unwrap().parse().unwrap();
    outer.wait_exec(pid, "sleep");
    // Before tj's raw mode, the outer terminal would send SIGINT to the wrapper too.
    outer.wait_raw();
    outer.send(b"\x03");
    let done = outer.finish();
    assert_eq!(done.rc, 130, "{}", done.text());
    done.assert_terminal_restored();
}

#[test]
fn sigterm_to_tj_is_forwarded_and_tj_exits_as_the_child() {
    let env = TestEnv::new();
    // The child's parent is the leader of its session, whose parent is tj.
    let script = wrapped("", r#""$TJ" run -- sh -c 'echo "ready ppid=$PPID end"; sleep 30'"#);
    let outer = Outer::start(&env, &script);
    let screen = String::from_utf8_lossy(&outer.wait_for(" end")).into_owned();
    let leader: i32 =
        std::str::from_utf8(between(screen.as_bytes(), "ppid=", " end")).unwrap().parse().unwrap();
    let comm = |pid: i32| std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    assert_eq!(comm(leader).trim(), "tj-session", "pid {leader} is not tj's session leader");
    let stat = std::fs::read_to_string(format!("/proc/{leader}/stat")).unwrap();
    let tj: i32 =
        stat.rsplit_once(')').unwrap().1.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(comm(tj).trim(), "tj", "pid {tj} is not tj");
    outer.wait_raw();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(tj), nix::sys::signal::SIGTERM).unwrap();
    let done = outer.finish();
    assert_eq!(done.rc, 143, "{}", done.text());
    done.assert_terminal_restored();
    assert_eq!(only_artifact(&env)["signal"], 15);
}

#[test]
fn window_size_follows_the_outer_terminal() {
    let env = TestEnv::new();
    let child = "stty size; trap 'stty size' WINCH; echo ready; while :; do sleep 0.1; done";
    let mut cmd = outer_cmd(&env, &wrapped("", r#""$TJ" run -- sh -c "$CHILD""#));
    cmd.env("CHILD", child);
    let mut outer = Outer::spawn(cmd, size(33, 101));
    let screen = outer.wait_for("ready");
    let seen = screen.len();
    // Before tj's raw mode the outer terminal may add a \r of its own (see
    // `output_written_at_once_is_not_translated_twice`).
    let shown = String::from_utf8_lossy(&screen).replace('\r', "");
    assert!(shown.contains("33 101\nready"), "{shown:?}");
    outer.wait_raw();
    outer.resize(size(40, 120));
    outer.wait_for_after(seen, "40 120");
    outer.send(b"\x03");
    let done = outer.finish();
    assert_eq!(done.rc, 130, "{}", done.text());
    done.assert_terminal_restored();
}

#[test]
fn stderr_stays_on_the_terminal_and_follows_a_redirect_as_without_tj() {
    let env = TestEnv::new();
    let child = r#"echo "out$1"; [ -t 2 ] && echo "err$1 on a tty" >&2; echo "err$1" >&2"#;
    let body = r#""$TJ" run -- sh -c "$CHILD" sh 1
"$TJ" run -- sh -c "$CHILD" sh 2 2>/dev/null
"$TJ" run -- sh -c "$CHILD" sh 3 2>"$ERR""#;
    let mut cmd = outer_cmd(&env, &wrapped("", body));
    cmd.env("CHILD", child);
    let err_file = env.root.join("err.txt");
    cmd.env("ERR", &err_file);
    let done = Outer::spawn(cmd, size(24, 80)).finish();
    let shown = String::from_utf8_lossy(done.body()).into_owned();
    assert_eq!(done.rc, 0, "{shown}");
    // Unchanged: stderr is the terminal, through the PTY.
    assert!(shown.contains("out1\r\nerr1 on a tty\r\nerr1\r\n"), "{shown:?}");
    // Redirected: not on the terminal; in the file as the command wrote it.
    assert!(shown.contains("out2\r\nout3\r\n"), "{shown:?}");
    assert!(!shown.contains("err2") && !shown.contains("err3"), "{shown:?}");
    assert_eq!(read_text(&err_file), "err3\n");
    done.assert_terminal_restored();
}

#[test]
fn descendant_holding_the_pty_does_not_hang_tj() {
    let env = TestEnv::new();
    // `setsid sleep 100 &`, made certain: the child exits only once the descendant is in a
    // session of its own, or the hangup at the child's exit would end it first.
    let child = r#"mkfifo "$FIFO" && { setsid sh -c 'echo pid:$$.; echo >"$0"; exec sleep 100' "$FIFO" & } && read x <"$FIFO" && echo started"#;
    let mut cmd = outer_cmd(&env, &wrapped("", r#""$TJ" run -- sh -c "$CHILD""#));
    cmd.env("CHILD", child);
    cmd.env("FIFO", env.root.join("ready.fifo"));
    let done = Outer::spawn(cmd, size(24, 80)).finish();
    let text = done.text();
    let at = text.find("pid:").expect("no pid printed") + 4;
    let _sleeper = KillOnDrop(text[at..text[at..].find('.').unwrap() + at].parse().unwrap());
    assert_eq!(done.rc, 0, "{text}");
    assert!(text.contains("started"), "{text}");
    done.assert_terminal_restored();
    assert_eq!(only_artifact(&env)["ptyHeldOpen"], true);
}

/// Runs `git args…` in `dir` with `env`'s HOME.
fn git(env: &TestEnv, dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .env_clear()
        .env("HOME", env.root.join("home"))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn git_log_does_not_wait_on_a_pager_when_stdin_is_not_a_terminal() {
    let env = TestEnv::new();
    let repo = env.work().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&env, &repo, &["init", "-q"]);
    for _ in 0..30 {
        git(
            &env,
            &repo,
            &[
                "-c",
                "user.name=a",
                "-c",
                "user.email=b",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "x",
            ],
        );
    }
    // A pager that waits for a key on the terminal, as less does with more than a screenful,
    // first on PATH whether or not less is installed.
    let bin = env.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let pager = bin.join("less");
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o755)
            .open(&pager)
            .unwrap();
        file.write_all(b"#!/bin/sh\ncat >/dev/null\necho pager-waits\nread -r x </dev/tty\n")
            .unwrap();
    }
    let mut path = std::ffi::OsString::from(&bin);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let body = r#"cd repo && "$TJ" run -- sh -c 'echo "pager=$PAGER git_pager=$GIT_PAGER"; [ -t 0 ] || echo stdin-not-a-tty; git log' </dev/null"#;
    let mut cmd = outer_cmd(&env, &wrapped("", body));
    cmd.env("PATH", &path);
    let done = Outer::spawn(cmd, size(24, 80)).finish();
    let text = done.text();
    assert_eq!(done.rc, 0, "{text}");
    assert!(text.contains("pager=cat git_pager=cat"), "{text}");
    assert!(text.contains("stdin-not-a-tty"), "{text}");
    assert!(!text.contains("pager-waits"), "{text}");
    assert_eq!(text.matches("Author: a <b>").count(), 30, "{text}");
    done.assert_terminal_restored();
}

/// A `cargo` on PATH that prints a failing test run (so a rule reduces it) and exits 101.
fn fake_cargo(env: &TestEnv) -> std::ffi::OsString {
    let bin = env.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    env.write("cargo-output.txt", &crate::util::cargo_test_output(300));
    let script =
        format!("#!/bin/sh\ncat '{}'\nexit 101\n", env.root.join("cargo-output.txt").display());
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o755)
            .open(bin.join("cargo"))
            .unwrap();
        file.write_all(script.as_bytes()).unwrap();
    }
    let mut path = std::ffi::OsString::from(&bin);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    path
}

fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("could not read {}: {err}", path.display()))
}

#[test]
fn side_channels_hold_the_complete_rendition_in_terminal_mode() {
    let env = TestEnv::new();
    let path = fake_cargo(&env);
    let emit = env.root.join("rendition.txt");
    let fd3 = env.root.join("fd3.txt");
    let run_in_terminal = |body: &str| {
        let mut cmd = outer_cmd(&env, &wrapped("", body));
        cmd.env("PATH", &path);
        cmd.env("EMIT", &emit);
        cmd.env("FD3", &fd3);
        Outer::spawn(cmd, size(24, 80)).finish()
    };
    let to_file = run_in_terminal(r#""$TJ" run --emit "$EMIT" -- cargo test"#);
    let to_fd = run_in_terminal(r#""$TJ" run --emit-fd 3 -- cargo test 3>"$FD3""#);
    // The same command in agent mode, for the rendition it prints.
    let mut agent = env.cmd(&["run", "--agent", "--", "cargo", "test"]);
    agent.env("PATH", &path);
    let agent = env.run_cmd(agent, b"");
    assert_eq!(agent.status.code(), Some(101), "{}", crate::util::stderr(&agent));
    let rendition = crate::util::stdout(&agent);

    let id = only_artifact(&env)["id"].as_str().unwrap().to_owned();
    assert!(rendition.contains("test module::tests::broken ... FAILED"), "{rendition}");
    assert!(rendition.contains("assertion `left == right` failed"), "{rendition}");
    assert!(rendition.contains(&format!("tj expand {id}")), "{rendition}");
    assert!(!rendition.contains("case_0150 ... ok"), "not reduced:\n{rendition}");
    for (done, file) in [(&to_file, &emit), (&to_fd, &fd3)] {
        assert_eq!(done.rc, 101, "{}", done.text());
        done.assert_terminal_restored();
        // The same rendition, less the exit line: a side channel's reader has tj's status.
        let side = rendition.replacen("[tj] exit 101 · ", "[tj] ", 1);
        assert_ne!(side, rendition);
        assert_eq!(read_text(file), side, "{}", file.display());
        // Live: the whole output; the rendition is not on the terminal.
        let live = String::from_utf8_lossy(done.body()).into_owned();
        assert!(live.contains("case_0150 ... ok"), "{live}");
        assert!(!live.contains("[tj]"), "{live}");
    }
    // Each of the three gave an agent a rendition: each is counted.
    let ledger = read_text(&env.data().join("ledger.jsonl"));
    assert_eq!(ledger.lines().count(), 3, "{ledger}");
}

#[test]
fn a_run_watched_live_is_stored_but_neither_reduced_nor_counted() {
    // Terminal mode, no side channel: a person reads the whole output, so no rendition is
    // made and the ledger counts nothing saved. The original is kept for `tj expand`.
    let env = TestEnv::new();
    let path = fake_cargo(&env);
    // Nothing the reduction would need is read: a broken configuration goes unmentioned.
    env.write("config/config.json", "{");
    let mut cmd = outer_cmd(&env, &wrapped("", r#""$TJ" run -- cargo test"#));
    cmd.env("PATH", &path);
    let done = Outer::spawn(cmd, size(24, 80)).finish();
    assert_eq!(done.rc, 101, "{}", done.text());
    done.assert_terminal_restored();
    let live = String::from_utf8_lossy(done.body()).into_owned();
    assert!(live.contains("case_0150 ... ok"), "{live}");
    assert!(!live.contains("tj:") && !live.contains("[tj]"), "{live}");

    let meta = only_artifact(&env);
    let id = meta["id"].as_str().unwrap().to_owned();
    assert_eq!(meta["mode"], "terminal", "{meta}");
    assert!(meta["reducedChars"].is_null(), "{meta}");
    // Nor is its content hashed: its id is its own, not a prefix of the digest.
    assert_eq!(meta["sha256"], "", "{meta}");
    let stored = std::fs::read(env.data().join("spill").join(format!("{id}.log"))).unwrap();
    assert!(!sha256_hex(&stored).starts_with(&id), "{id}");
    assert!(!env.data().join("ledger.jsonl").exists(), "a watched run was counted");
    assert!(!env.data().join("spill").join(format!("{id}.txt")).exists());

    let ls = env.run(&["ls"], b"");
    assert!(crate::util::stdout(&ls).contains(" → (live)"), "{}", crate::util::stdout(&ls));
    let stats = env.run(&["stats"], b"");
    assert!(crate::util::stdout(&stats).starts_with("no runs recorded yet"));

    let whole = env.run(&["expand", &id], b"");
    assert!(whole.status.success(), "{}", crate::util::stderr(&whole));
    assert!(crate::util::stdout(&whole).contains("case_0150 ... ok"));
    let reduced = env.run(&["expand", &id, "--reduced"], b"");
    assert_eq!(reduced.status.code(), Some(1));
    let why = crate::util::stderr(&reduced);
    assert!(why.contains("watched live): tj made no rendition of it"), "{why}");
    // The way out it names works: the original, reduced now.
    let recipe =
        format!("tj expand {id} --raw | tj reduce --exit-code 101 --cols 80 -- 'cargo' 'test'");
    assert!(why.contains(&recipe), "{why}");
    let raw = env.run(&["expand", &id, "--raw"], b"");
    let now = env
        .run(&["reduce", "--exit-code", "101", "--cols", "80", "--", "cargo", "test"], &raw.stdout);
    let text = crate::util::stdout(&now);
    assert!(text.contains("test module::tests::broken ... FAILED"), "{text}");
    assert!(!text.contains("case_0150 ... ok"), "not reduced:\n{text}");
}

#[test]
fn a_side_channel_that_cannot_be_written_is_no_side_channel() {
    // `--emit-fd 97` with nothing open as 97, or `--emit` into a directory that does not
    // exist: no agent reads either, so the run is watched live (stored, not reduced, not
    // counted), and one warning says so.
    for (flag, warning) in [
        ("--emit-fd 97", "--emit-fd 97: descriptor 97 is not open; no rendition is made"),
        (
            "--emit no-such-dir/rendition.txt",
            "--emit no-such-dir/rendition.txt: the directory `no-such-dir` does not exist; no \
             rendition is made",
        ),
    ] {
        let env = TestEnv::new();
        let path = fake_cargo(&env);
        let line = format!(r#""$TJ" run {flag} -- cargo test"#);
        let mut cmd = outer_cmd(&env, &wrapped("", &line));
        cmd.env("PATH", &path);
        let done = Outer::spawn(cmd, size(24, 200)).finish();
        assert_eq!(done.rc, 101, "{}", done.text());
        done.assert_terminal_restored();
        let text = done.text();
        assert!(text.contains("case_0150 ... ok"), "{text}");
        assert!(text.contains(warning), "{text}");
        let meta = only_artifact(&env);
        assert!(meta["reducedChars"].is_null(), "{flag}: {meta}");
        assert_eq!(meta["sha256"], "", "{flag}: {meta}");
        assert!(
            !env.data().join("ledger.jsonl").exists(),
            "{flag}: counted a run nobody was given"
        );
    }
}

#[test]
fn output_past_the_memory_cap_still_gets_a_rendition() {
    let env = TestEnv::new();
    let data = printable(7, 9 << 20);
    let file = env.root.join("data.txt");
    std::fs::File::create(&file).unwrap().write_all(&data).unwrap();
    let emit = env.root.join("rendition.txt");
    let script = wrapped("stty raw -echo", r#""$TJ" run --emit "$EMIT" -- cat "$FILE""#);
    let mut cmd = outer_cmd(&env, &script);
    cmd.env("FILE", &file);
    cmd.env("EMIT", &emit);
    let done = Outer::spawn(cmd, size(24, 80)).finish();
    assert_eq!(done.rc, 0);
    assert!(done.body().starts_with(&data), "the live stream differs from the file");
    // What follows the output on the terminal: tj's own stderr.
    let after = String::from_utf8_lossy(&done.body()[data.len()..]).into_owned();
    assert!(after.is_empty(), "{after}");
    let rendition = read_text(&emit);
    let first = String::from_utf8_lossy(data.split(|&b| b == b'\n').next().unwrap()).into_owned();
    assert!(rendition.contains(&first), "the head of the output is missing:\n{rendition}");
    assert_eq!(only_artifact(&env)["sha256"], sha256_hex(&data).as_str());
}

#[test]
fn harness_variable_means_agent_mode_and_disable_means_no_tj() {
    let env = TestEnv::new();
    let child = r#"printf '\033[31mred\033[0m\n'; tty; echo "inner=${TJ_INNER-unset}""#;
    let run = |var: &str| {
        let mut cmd = outer_cmd(&env, &wrapped("", r#""$TJ" run -- sh -c "$CHILD""#));
        cmd.env("CHILD", child);
        cmd.env(var, "1");
        let outer = Outer::spawn(cmd, size(24, 80));
        let own_tty = outer.master.tty_name().unwrap();
        (outer.finish(), own_tty)
    };

    // Agent mode on a terminal: nothing live, the rendition (ANSI stripped) at the end.
    let (agent, _) = run("CLAUDECODE");
    assert_eq!(agent.rc, 0, "{}", agent.text());
    let shown = String::from_utf8_lossy(agent.body()).into_owned();
    assert!(shown.starts_with("red\r\n/dev/pts/"), "{shown:?}");
    assert!(shown.ends_with("inner=1\r\n"), "{shown:?}");
    agent.assert_terminal_restored();
    assert_eq!(only_artifact(&env)["mode"], "agent");

    // Transparent: the command runs on the terminal itself, and nothing is stored.
    let (plain, own_tty) = run("TJ_DISABLE");
    assert_eq!(plain.rc, 0, "{}", plain.text());
    let shown = String::from_utf8_lossy(plain.body()).into_owned();
    let expected = format!("\x1b[31mred\x1b[0m\r\n{}\r\ninner=unset\r\n", own_tty.display());
    assert_eq!(shown, expected);
    assert_eq!(artifacts(&env).len(), 1);
}
