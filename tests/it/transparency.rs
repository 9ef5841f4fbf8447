//! `tj run` as transparent as the command itself (issue 10): what the parent of tj sees when
//! the command dies of a signal, where the command's stderr goes when tj's is redirected, the
//! command's background children outliving it, the width of the agent's PTY, and no byte
//! typed into the command that its stdin did not deliver.
//!
//! Every wait is for a file, a process state or an exit under a 30 s deadline; nothing is
//! timed.

#![cfg(unix)]
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use crate::util::{KillOnDrop, TestEnv, spawn_retrying, stderr};

const DEADLINE: Duration = Duration::from_secs(30);

/// The signals a test binary may have been started with ignored (`cargo test &` in a script
/// ignores INT and QUIT, `nohup` HUP): tj and its children would inherit that, and the
/// signals these tests send would do nothing.
const RESET: &str = "--default-signal=INT,QUIT,HUP,TERM";

/// Returns true if and only if `env` can reset signal dispositions (GNU coreutils 8.31+).
fn env_resets_signals() -> bool {
    static SUPPORTED: OnceLock<bool> = OnceLock::new();
    *SUPPORTED.get_or_init(|| {
        Command::new("env")
            .args([RESET, "true"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    })
}

/// `tj args…` in `env` (as [`TestEnv::cmd`]), started with the signals tests send at their
/// default action.
fn tj(env: &TestEnv, args: &[&str]) -> Command {
    let mut cmd = if env_resets_signals() {
        let mut cmd = Command::new("env");
        cmd.arg(RESET).arg(crate::util::tj_bin_str());
        cmd
    } else {
        Command::new(crate::util::tj_bin())
    };
    cmd.env_clear()
        .env("HOME", env.root.join("home"))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TJ_DATA_DIR", env.data())
        .env("TJ_CONFIG_DIR", env.root.join("config"))
        .current_dir(env.work())
        .args(args);
    cmd
}

/// Waits for `child` to end, under the deadline (killing it if it does not).
fn wait_deadline(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("tj did not end within {DEADLINE:?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until `path` holds a pid (written whole: the child writes it to a temporary file
/// and renames it) and that process runs `program`; returns the pid.
fn wait_pid_file(path: &Path, program: &str) -> i32 {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(pid) = std::fs::read_to_string(path).ok().and_then(|t| t.trim().parse().ok())
            && std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim_end() == program)
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "no {program} pid in {}", path.display());
        thread::sleep(Duration::from_millis(10));
    }
}

fn signal(pid: i32, sig: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig).unwrap();
}

/// Returns true if and only if process `pid` exists (and is not a zombie).
fn is_alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
        !state.is_some_and(|s| s.starts_with('Z') || s.starts_with('X'))
    })
}

// --- Signal deaths ---------------------------------------------------------------------------

#[test]
fn child_dying_of_segv_makes_tj_die_of_segv_without_a_core() {
    let env = TestEnv::new();
    let cmd = tj(&env, &["run", "--", "sh", "-c", "kill -SEGV $$"]);
    let out = env.run_cmd(cmd, b"");
    assert_eq!(out.status.signal(), Some(libc::SIGSEGV), "{:?} {}", out.status, stderr(&out));
    assert!(!out.status.core_dumped(), "tj dumped a core of its own");
}

#[test]
fn child_dying_of_sigkill_makes_tj_die_of_sigkill_in_every_mode() {
    let env = TestEnv::new();
    for args in [&["run", "--agent"][..], &["run", "--no-pty"], &["run", "--live"]] {
        let cmd = tj(&env, &[args, &["--", "sh", "-c", "kill -KILL $$"]].concat());
        let out = env.run_cmd(cmd, b"");
        assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{args:?}: {}", stderr(&out));
    }
}

/// A command that dies of a real-time signal (32 to 64: `kill -36`, a SIGRTMIN it does not
/// handle) makes tj die of it too, as of any other; tj exited 128 + N instead, and for those
/// libc reserves (32 to 34) the session leader could not die of it either. Both tj and the
/// command alone start with those signals at their default action (a test runner may leave
/// some ignored, which tj would pass on as it is).
#[cfg(target_os = "linux")]
#[test]
fn child_dying_of_a_real_time_signal_makes_tj_die_of_it_in_every_mode() {
    let env = TestEnv::new();
    for sig in [32, 33, 34, 35, 36, 64] {
        let script = format!("kill -{sig} $$");
        let mut alone = Command::new("sh");
        alone.args(["-c", &script]);
        let out = env.run_cmd(with_default_real_time_signals(alone), b"");
        assert_eq!(out.status.signal(), Some(sig), "{sig} without tj: {:?}", out.status);
        for args in [&["run", "--agent"][..], &["run", "--no-pty"], &["run", "--live"]] {
            let cmd = tj(&env, &[args, &["--", "sh", "-c", &script]].concat());
            let out = env.run_cmd(with_default_real_time_signals(cmd), b"");
            assert_eq!(out.status.signal(), Some(sig), "{sig} {args:?}: {}", stderr(&out));
        }
    }
}

/// `cmd` started with the real-time signals (32 to 64) at their default action, set with
/// the kernel's call (libc refuses those it reserves).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn with_default_real_time_signals(mut cmd: Command) -> Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec, rt_sigaction only sets dispositions of the child, from
    // a local action in the kernel's layout (handler, flags, restorer, mask: all zero is
    // SIG_DFL with no flags).
    unsafe {
        cmd.pre_exec(|| {
            let action = [0u64; 4];
            for sig in 32..=64 {
                libc::syscall(libc::SYS_rt_sigaction, sig, action.as_ptr(), 0usize, 8usize);
            }
            Ok(())
        });
    }
    cmd
}

/// `cmd` started with SIGCHLD ignored, as a parent that ignores it leaves its children.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn ignoring_sigchld(mut cmd: Command) -> Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec, signal(2) only sets a disposition of the child.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGCHLD, libc::SIG_IGN);
            Ok(())
        });
    }
    cmd
}

/// Started with SIGCHLD ignored, tj still gets its command's exit code (the kernel would reap
/// the command for it, and the status would be lost: tj exited 125), and the command is
/// started with SIGCHLD ignored as it would be without tj, with a PTY and without.
#[cfg(target_os = "linux")]
#[test]
fn started_with_sigchld_ignored_tj_keeps_the_exit_code_and_the_disposition() {
    let env = TestEnv::new();
    for mode in ["--agent", "--no-pty"] {
        let cmd = ignoring_sigchld(tj(&env, &["run", mode, "--", "sh", "-c", "exit 7"]));
        let out = env.run_cmd(cmd, b"");
        assert_eq!(out.status.code(), Some(7), "{mode}: {}", stderr(&out));
        let cmd = ignoring_sigchld(tj(&env, &["run", mode, "--", "cat", "/proc/self/status"]));
        let out = env.run_cmd(cmd, b"");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(sigchld_ignored(&text), "{mode}: SIGCHLD not ignored in the command: {text}");
    }
}

/// Whether `status`, a `/proc/PID/status`, says SIGCHLD is ignored.
fn sigchld_ignored(status: &str) -> bool {
    let chld = 1u64 << (libc::SIGCHLD - 1);
    ignored_signals(status) & chld == chld
}

/// The mask of ignored signals in `status`, a `/proc/PID/status` (bit N-1 for signal N).
fn ignored_signals(status: &str) -> u64 {
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .unwrap_or_else(|| panic!("no SigIgn line in {status}"))
}

/// Rust's runtime ignores SIGPIPE in tj; the command gets SIGPIPE as tj was started with it,
/// ignored (`trap '' PIPE`, a parent that ignores it) or not, as without tj: a writer to a
/// closed pipe then gets EPIPE rather than dying, or dies, as it would. In every mode: with a
/// PTY, with pipes, and exec'd in tj's place.
#[cfg(target_os = "linux")]
#[test]
fn the_command_gets_sigpipe_as_tj_was_started_with_it() {
    let env = TestEnv::new();
    let pipe = 1u64 << (libc::SIGPIPE - 1);
    for prelude in ["trap '' PIPE; ", ""] {
        let shell = |argv: &str, disable: bool| {
            // tj's environment and directory in the test, for bash to pass on.
            let tj_env = env.cmd(&[]);
            let mut cmd = Command::new("bash");
            cmd.env_clear()
                .envs(tj_env.get_envs().filter_map(|(key, value)| Some((key, value?))))
                .current_dir(env.work())
                .args(["-c", &format!("{prelude}exec {argv} cat /proc/self/status")]);
            if disable {
                cmd.env("TJ_DISABLE", "1");
            }
            String::from_utf8_lossy(&env.run_cmd(cmd, b"").stdout).into_owned()
        };
        let without = ignored_signals(&shell("", false)) & pipe;
        assert_eq!(without != 0, !prelude.is_empty(), "bash's trap did not do what it says");
        let tj = crate::util::tj_bin_str();
        for (mode, disable) in [("--agent", false), ("--agent --no-pty", false), ("", true)] {
            let text = shell(&format!("{tj} run {mode} --"), disable);
            assert_eq!(ignored_signals(&text) & pipe, without, "{prelude:?} {mode:?}: {text}");
        }
    }
}

/// Started with SIGCHLD blocked, tj still sees its command end (a handler for it would never
/// run: tj waited for ever) and keeps the exit code, with a PTY and without.
#[cfg(target_os = "linux")]
#[test]
#[allow(unsafe_code)]
fn started_with_sigchld_blocked_tj_still_ends_with_the_exit_code() {
    use std::os::unix::process::CommandExt;
    let env = TestEnv::new();
    for mode in ["--agent", "--no-pty"] {
        let mut cmd = tj(&env, &["run", mode, "--", "sh", "-c", "echo hi; exit 3"]);
        // SAFETY: between fork and exec, sigprocmask only changes the child's signal mask.
        unsafe {
            cmd.pre_exec(|| {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGCHLD);
                libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                Ok(())
            });
        }
        let mut child = spawn_retrying(cmd.stdout(Stdio::null()).stderr(Stdio::null()));
        let status = wait_deadline(&mut child);
        assert_eq!(status.code(), Some(3), "{mode}");
    }
}

/// Starts `tj run -- sh -c script` (agent mode: stdout is a pipe), where `script` writes its
/// pid to `pid` and execs `sleep 100`; returns tj and the sleep's pid once it runs.
fn start_sleeper(env: &TestEnv, prelude: &str) -> (Child, i32) {
    let script = format!("{prelude} echo $$ >pid.tmp && mv pid.tmp pid && exec sleep 100");
    let mut cmd = tj(env, &["run", "--", "sh", "-c", &script]);
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let tj = spawn_retrying(&mut cmd);
    let pid = wait_pid_file(&env.work().join("pid"), "sleep");
    (tj, pid)
}

#[test]
fn sigterm_to_tj_ends_the_child_and_tj_dies_of_sigterm() {
    let env = TestEnv::new();
    let (mut child, sleeper) = start_sleeper(&env, "");
    let _sleeper = KillOnDrop(sleeper);
    signal(i32::try_from(child.id()).unwrap(), nix::sys::signal::SIGTERM);
    let status = wait_deadline(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert!(!is_alive(sleeper));
}

#[test]
fn child_ignoring_sigterm_is_killed_after_the_grace_and_tj_dies_of_sigterm() {
    // The child ignored the SIGTERM tj was sent, so tj killed it after the grace period. The
    // sender asked for a SIGTERM death and gets one (143, not 137): the job ended because it
    // was told to, and the stored metadata keeps what really ended the command.
    let env = TestEnv::new();
    let (mut child, sleeper) = start_sleeper(&env, "trap '' TERM;");
    let _sleeper = KillOnDrop(sleeper);
    signal(i32::try_from(child.id()).unwrap(), nix::sys::signal::SIGTERM);
    let status = wait_deadline(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert!(!is_alive(sleeper));
}

/// With nowhere to store the output, agent mode streams it to stdout past what memory
/// holds; when nobody reads that stdout, the write waits, and a SIGTERM sent to tj must still
/// reach the command (the output is then read on a thread apart from the signals').
#[cfg(target_os = "linux")]
#[test]
fn sigterm_reaches_the_command_while_tj_waits_on_a_stalled_stdout() {
    let env = TestEnv::new();
    let unusable = env.root.join("a-file");
    std::fs::File::create(&unusable).unwrap();
    let script = "echo $$ >pid.tmp && mv pid.tmp pid; yes | head -c 20000000; exec sleep 100";
    let mut cmd = tj(&env, &["run", "--agent", "--", "sh", "-c", script]);
    // The data directory cannot be made (its parent is a file), and stdout is a pipe
    // nobody reads until the end.
    cmd.env("TJ_DATA_DIR", unusable.join("data"));
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = spawn_retrying(&mut cmd);
    let pid = wait_pid_file(&env.work().join("pid"), "sh");
    let _command = KillOnDrop(pid);
    // Until one of tj's threads waits in its write to the pipe nobody reads.
    let tj_pid = child.id();
    let deadline = Instant::now() + DEADLINE;
    while !waits_in_pipe_write(tj_pid) {
        assert!(Instant::now() < deadline, "tj never waited on its stdout");
        thread::sleep(Duration::from_millis(20));
    }
    signal(i32::try_from(child.id()).unwrap(), nix::sys::signal::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(10);
    while is_alive(pid) {
        assert!(Instant::now() < deadline, "the command outlived tj's SIGTERM while tj waited");
        thread::sleep(Duration::from_millis(20));
    }
    // Reading the pipe lets tj finish; it dies of the signal it forwarded.
    let mut out = Vec::new();
    std::io::Read::read_to_end(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    let status = wait_deadline(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
}

/// Whether a thread of process `pid` sleeps in a write to a pipe (its `wchan`).
#[cfg(target_os = "linux")]
fn waits_in_pipe_write(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task")).is_ok_and(|tasks| {
        tasks.filter_map(Result::ok).any(|task| {
            std::fs::read_to_string(task.path().join("wchan"))
                .is_ok_and(|wchan| wchan.contains("pipe_write"))
        })
    })
}

/// Returns true if and only if process `pid` is stopped by a signal.
fn is_stopped(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(')').is_some_and(|(_, rest)| rest.starts_with(" T")))
}

/// A command that stopped itself (SIGSTOP) and is sent SIGTERM through tj runs its handler
/// and ends as it chooses, as a shell's `kill` of a stopped job has it (SIGCONT after the
/// SIGTERM); before, the SIGTERM stayed pending until tj's SIGKILL after the grace period.
#[test]
fn sigterm_to_tj_reaches_a_stopped_command_which_ends_by_its_handler() {
    let script = "trap 'echo got TERM; exit 7' TERM; echo $$ >pid.tmp && mv pid.tmp pid; \
                  kill -STOP $$; echo went on";
    for pty in [None, Some("--no-pty")] {
        let env = TestEnv::new();
        let mut args = vec!["run", "--agent"];
        args.extend(pty);
        args.extend(["--", "sh", "-c", script]);
        let mut cmd = tj(&env, &args);
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = spawn_retrying(&mut cmd);
        let pid = wait_pid_file(&env.work().join("pid"), "sh");
        let deadline = Instant::now() + DEADLINE;
        while !is_stopped(pid) {
            assert!(Instant::now() < deadline, "the command never stopped");
            thread::sleep(Duration::from_millis(10));
        }
        signal(i32::try_from(child.id()).unwrap(), nix::sys::signal::SIGTERM);
        let status = wait_deadline(&mut child);
        let mut out = String::new();
        std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
        assert_eq!(status.code(), Some(7), "{pty:?}: {status:?}\n{out}");
        assert!(out.contains("got TERM") && !out.contains("went on"), "{pty:?}: {out}");
        // Not by the SIGKILL after the 2 s grace, which would have ended it as 137.
        assert!(out.contains("exit 7"), "{pty:?}: {out}");
    }
}

// --- Background children ---------------------------------------------------------------------

/// The number after the first `pid=` in `text`.
fn printed_pid(text: &str) -> i32 {
    let at = text.find("pid=").unwrap_or_else(|| panic!("no pid printed:\n{text}")) + 4;
    let digits: String = text[at..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap()
}

/// Asserts that process `pid` runs and no signal is on its way to it (a hangup sent as tj's
/// session ended may not have been acted on yet when tj's parent sees tj exit).
fn assert_survives(pid: i32, what: &str) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|_| panic!("{what}: process {pid} is gone"));
    let field = |name: &str| {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap();
        u64::from_str_radix(line[name.len()..].trim(), 16).unwrap()
    };
    assert!(is_alive(pid), "{what}: process {pid} is a zombie");
    assert_eq!(field("SigPnd:") | field("ShdPnd:"), 0, "{what}: signals pending for {pid}");
}

#[test]
fn background_children_outlive_the_command_as_without_tj() {
    let env = TestEnv::new();
    let cases = [
        ("sleep &", "sleep 118 & echo \"pid=$!\""),
        ("nohup sleep &", "nohup sleep 109 >/dev/null 2>&1 & echo \"pid=$!\""),
    ];
    for mode in ["--agent", "--no-pty"] {
        for (what, script) in cases {
            let mut cmd = tj(&env, &["run", mode, "--", "sh", "-c", script]);
            cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
            let mut child = spawn_retrying(&mut cmd);
            let status = wait_deadline(&mut child);
            let out = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let pid = printed_pid(&text);
            let _survivor = KillOnDrop(pid);
            assert_eq!(status.code(), Some(0), "{mode} {what}: {}", stderr(&out));
            assert_survives(pid, &format!("{mode} {what}"));
        }
    }
}

#[test]
fn survivor_holding_the_pty_does_not_hold_up_tj() {
    let env = TestEnv::new();
    let mut cmd = tj(&env, &["run", "--agent", "--", "sh", "-c", "sleep 117 & echo \"pid=$!\""]);
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = spawn_retrying(&mut cmd);
    // The sleep holds the PTY open (its stdout): the drain's caps, not EOF, end the read.
    let status = wait_deadline(&mut child);
    let out = child.wait_with_output().unwrap();
    let _survivor = KillOnDrop(printed_pid(&String::from_utf8_lossy(&out.stdout)));
    assert_eq!(status.code(), Some(0), "{}", stderr(&out));
    let list = env.run(&["ls", "--format", "json"], b"");
    let artifacts: Vec<serde_json::Value> = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(artifacts.len(), 1, "{artifacts:?}");
    assert_eq!(artifacts[0]["ptyHeldOpen"], true, "{artifacts:?}");
}

// --- Nothing typed into the command but what stdin delivered ---------------------------------

/// A process kept busy for as long as it lives (killed and reaped on drop).
struct Hog(Child);

impl Hog {
    fn start() -> Hog {
        Hog(Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap())
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where `a` and `b` first differ, and what each has there.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    let at = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let around = |s: &[u8]| {
        String::from_utf8_lossy(&s[at.saturating_sub(8)..(at + 8).min(s.len())]).into_owned()
    };
    format!("at byte {at} of {}/{}: {:?} instead of {:?}", a.len(), b.len(), around(a), around(b))
}

#[cfg(target_os = "linux")]
#[test]
fn live_stream_is_byte_identical_under_cpu_load_when_script_closes_stdin() {
    // `script -qec CMD /dev/null </dev/null` plays a terminal whose input ends at once: it
    // writes an end-of-file character into its PTY, tj's stdin. When that came before tj put
    // its terminal in raw mode (likely on a loaded machine), the line discipline handed it to
    // tj as a NUL byte, which tj typed into the command's PTY, whose echo showed `^@`: 4 runs
    // in 6 on two busy cores. 20 runs of 2 MB (the issue used 30 MB; the size does not matter
    // to the race, and 2 MB keeps the test near 30 s on two loaded cores).
    let env = TestEnv::new();
    let mut data = Vec::with_capacity(2 << 20);
    let mut line = 0u64;
    while data.len() < 2 << 20 {
        data.extend_from_slice(
            format!("{line:08} the quick brown fox jumps over the dog\n").as_bytes(),
        );
        line += 1;
    }
    let file = env.root.join("data.txt");
    std::io::Write::write_all(&mut std::fs::File::create(&file).unwrap(), &data).unwrap();
    // What reaches script's output: each PTY on the way makes `\n` a `\r\n`, once (tj's
    // terminal is raw).
    let expected: Vec<u8> =
        data.iter().flat_map(|&b| if b == b'\n' { vec![b'\r', b'\n'] } else { vec![b] }).collect();
    let _hogs = [Hog::start(), Hog::start()];
    let mut differ = Vec::new();
    for round in 0..20 {
        let out = Command::new("script")
            .args(["-qec", r#""$TJ" run -- cat "$FILE""#, "/dev/null"])
            .env_clear()
            .env("HOME", env.root.join("home"))
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TJ_DATA_DIR", env.data())
            .env("TJ_CONFIG_DIR", env.root.join("config"))
            .env("TJ", crate::util::tj_bin_str())
            .env("FILE", &file)
            .current_dir(env.work())
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .expect("script(1) from util-linux is needed for this test");
        assert!(out.status.success(), "round {round}: {:?} {}", out.status, stderr(&out));
        if out.stdout != expected {
            differ.push(format!("round {round}: {}", first_difference(&out.stdout, &expected)));
        }
    }
    assert!(differ.is_empty(), "{} of 20 runs differ:\n{}", differ.len(), differ.join("\n"));
}

// --- The command's stderr goes where tj's goes ------------------------------------------------

/// Runs `sh -c wrapper` in `env` with `$TJ` set (stdout and stderr piped apart, stdin empty):
/// the wrapper redirects tj's streams as a user would.
fn shell(env: &TestEnv, wrapper: &str) -> std::process::Output {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", wrapper])
        .env_clear()
        .env("HOME", env.root.join("home"))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TJ_DATA_DIR", env.data())
        .env("TJ_CONFIG_DIR", env.root.join("config"))
        .env("TJ", crate::util::tj_bin_str())
        .current_dir(env.work());
    env.run_cmd(cmd, b"")
}

// --- A live reader that goes away --------------------------------------------------------

/// A command whose output loses its reader learns it as without tj, at its next write. It
/// ran for ever before (`tj run --live -- yes | head`): tj went on capturing an output nobody
/// read. Without a PTY the command's writes fail as they would without tj (SIGPIPE, or EPIPE
/// where it is ignored): the same status, and nothing more on stderr. Through a PTY, whose
/// writes cannot fail that way, tj hangs up on it as a closed terminal does (SIGHUP): 129,
/// with one warning, also for programs that ignore SIGPIPE (Python), and a shell still runs
/// its EXIT trap. The reader may go before anything is written to it (agent mode writes the
/// rendition at the end): it is watched.
#[test]
fn a_reader_going_away_ends_the_command_as_without_tj() {
    let env = TestEnv::new();
    let lines: String = (0..4000).map(|i| format!("line {i:04}\n")).collect();
    std::io::Write::write_all(
        &mut std::fs::File::create(env.work().join("40k.txt")).unwrap(),
        lines.as_bytes(),
    )
    .unwrap();
    let head = "head -c 100000 >/dev/null";
    let late_echo = "sh -c 'sleep 1; echo hi'";
    let python = "python3 -c 'while True: print(\"line\")'";
    let traps = "bash -c 'trap \"echo cleanup >&2\" EXIT; yes | cat'";
    // Mode, command, reader, and the status through a PTY (`None`: as without tj).
    let cases = [
        ("--live", "yes", head, Some("129")),
        ("--live", python, head, Some("129")),
        ("--live", traps, head, Some("129")),
        // Less than a pipe holds, in one write: without tj it is all written before `head`
        // leaves, and `cat` ends with 0.
        ("--live", "cat 40k.txt", "head -1 >/dev/null", None),
        ("--live --no-pty", "yes", head, None),
        ("--live --no-pty", python, head, None),
        ("--live --no-pty", "sh -c \"trap '' PIPE; exec yes\"", head, None),
        // The reader goes before anything is written: it is watched.
        ("--agent", "yes", "sleep 0.5", Some("129")),
        ("--agent --no-pty", "yes", "sleep 0.5", None),
        ("--agent --no-pty", late_echo, "true", None),
        ("--live --no-pty", late_echo, "true", None),
        ("--agent --no-pty", "sh -c \"trap '' PIPE; sleep 1; exec yes\"", "true", None),
        // A reader that goes while nothing is written changes nothing.
        ("--agent", "sh -c 'sleep 1; exit 3'", "true", None),
        ("--agent --no-pty", "sh -c 'sleep 1; exit 3'", "true", None),
    ];
    for (mode, command, reader, hung_up) in cases {
        // `timeout` in both, so that a hang fails the test with 124 instead of holding it up.
        let wrapped = |prefix: &str| {
            format!("{{ timeout 20 {prefix}{command}; echo $? >status; }} | {reader}; cat status")
        };
        let without = shell(&env, &wrapped(""));
        let with = shell(&env, &wrapped(&format!("\"$TJ\" run {mode} -- ")));
        let case = format!("{mode} {command} | {reader}");
        let status = |out: &std::process::Output| String::from_utf8_lossy(&out.stdout).into_owned();
        assert_ne!(status(&without).trim(), "124", "{case}: the case itself hangs");
        let (err_with, err_without) =
            (String::from_utf8_lossy(&with.stderr), String::from_utf8_lossy(&without.stderr));
        if let Some(code) = hung_up {
            assert_eq!(status(&with).trim(), code, "{case}: {with:?}");
            assert!(err_with.contains("tj hung up on the command"), "{case}: {err_with}");
            if command == traps {
                assert!(err_with.contains("cleanup"), "{case}: {err_with}");
            }
            continue;
        }
        assert_eq!(status(&with), status(&without), "{case}: {with:?}");
        if mode.starts_with("--live") {
            assert_eq!(err_with, err_without, "{case}");
        } else {
            // In agent mode the command's stderr goes to the rendition, whose reader is gone.
            assert_eq!(err_with, "", "{case}");
        }
    }
}

const OUT_AND_ERR: &str = r#""$TJ" run -- sh -c 'echo out; echo err >&2'"#;

#[test]
fn stderr_sent_to_dev_null_is_discarded_as_without_tj() {
    let env = TestEnv::new();
    let out = shell(&env, &format!("{OUT_AND_ERR} 2>/dev/null"));
    assert!(out.status.success(), "{:?}", out.status);
    let rendition = String::from_utf8_lossy(&out.stdout);
    assert!(rendition.contains("out"), "{rendition}");
    assert!(!rendition.contains("err"), "{rendition}");
}

#[test]
fn stderr_sent_to_a_file_lands_there_unchanged() {
    let env = TestEnv::new();
    let out = shell(&env, &format!("{OUT_AND_ERR} 2>err.txt"));
    assert!(out.status.success(), "{:?} {}", out.status, stderr(&out));
    let rendition = String::from_utf8_lossy(&out.stdout);
    assert!(rendition.contains("out") && !rendition.contains("err"), "{rendition}");
    // Written by the command itself, not through a PTY: no `\r`.
    assert_eq!(std::fs::read_to_string(env.work().join("err.txt")).unwrap(), "err\n");
}

#[test]
fn stderr_joined_to_stdout_in_a_pipe_is_in_the_rendition() {
    let env = TestEnv::new();
    let out = shell(&env, &format!("{OUT_AND_ERR} 2>&1 | cat"));
    assert!(out.status.success(), "{:?}", out.status);
    let rendition = String::from_utf8_lossy(&out.stdout);
    assert!(rendition.contains("out\nerr"), "{rendition}");
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn agent_reading_stderr_apart_gets_it_reduced_in_the_rendition() {
    // An agent harness reads stdout and stderr through two pipes: the command's stderr goes
    // into the rendition with its stdout, not raw beside it.
    let env = TestEnv::new();
    let out = shell(&env, OUT_AND_ERR);
    assert!(out.status.success(), "{:?}", out.status);
    let rendition = String::from_utf8_lossy(&out.stdout);
    assert!(rendition.contains("out\r\nerr") || rendition.contains("out\nerr"), "{rendition}");
    assert!(!stderr(&out).contains("err"), "{}", stderr(&out));
}

// --- A closed stdin, stdout or stderr -------------------------------------------------------

/// A command run with stdin, stdout or stderr closed (`cmd <&-`, `>&-`, `2>&-`) finds it
/// closed under tj too, and the others as they were: the same report of its descriptors,
/// the same write errors, the same status, whatever the mode asked for. Rust's runtime opens
/// /dev/null in place of a closed one before tj's `main`, which tj notes before it does
/// (`.init_array`); the command then runs in tj's place, where tj closes it again. Before,
/// it got a PTY or /dev/null there, and `echo out >&-` succeeded under tj.
#[cfg(target_os = "linux")]
#[test]
fn a_closed_stdin_stdout_or_stderr_is_closed_for_the_command_too() {
    let env = TestEnv::new();
    // What the command finds on 0, 1 and 2, into a file (its stdout may be closed), and what
    // its writes to stdout and stderr give.
    let probe = r#"exec 3>report
                   for n in 0 1 2; do
                       if [ -e /proc/$$/fd/$n ]; then echo "$n open" >&3; else echo "$n closed" >&3; fi
                   done
                   echo out; echo "stdout: $?" >&3
                   echo err >&2; echo "stderr: $?" >&3
                   read -r line; echo "stdin: $?" >&3; exit 3"#;
    for close in ["<&-", ">&-", "2>&-", "<&- >&- 2>&-"] {
        for mode in ["", "--agent ", "--live "] {
            let run = |prefix: &str| {
                let out = shell(&env, &format!("{prefix}sh -c '{probe}' {close}"));
                let report = std::fs::read_to_string(env.work().join("report")).unwrap();
                (out, report)
            };
            let (without, want) = run("");
            let (with, got) = run(&format!("\"$TJ\" run {mode}-- "));
            let case = format!("tj run {mode}-- … {close}");
            assert!(want.contains("closed"), "{case}: the case closes nothing:\n{want}");
            assert_eq!(got, want, "{case}");
            assert_eq!(with.status.code(), Some(3), "{case}: {with:?}");
            assert_eq!(with.stdout, without.stdout, "{case}");
            assert_eq!(with.stderr, without.stderr, "{case}");
        }
    }
}

/// What tj itself prints fails on a closed stdout as `cat`'s output does, where it wrote
/// into the /dev/null Rust's runtime opens in its place and said nothing (exit 0): a script
/// that runs `tj expand ID >&-` by mistake learns it got nothing. clap's help and version
/// too, and what tj reads from a closed stdin.
#[cfg(target_os = "linux")]
#[test]
fn what_tj_prints_to_a_closed_stdout_fails_as_cat_s_output_does() {
    let env = TestEnv::new();
    let run = env.run(&["run", "--agent", "--", "sh", "-c", "echo stored; exit 0"], b"");
    assert!(run.status.success(), "{}", stderr(&run));
    let list = env.run(&["ls", "--format", "json"], b"");
    let artifacts: Vec<serde_json::Value> = serde_json::from_slice(&list.stdout).unwrap();
    let id = artifacts[0]["id"].as_str().unwrap().to_owned();
    env.write("work/out.txt", "error: it broke\n");
    let cases = [
        format!("\"$TJ\" expand {id}"),
        "\"$TJ\" ls".to_owned(),
        "\"$TJ\" reduce --command 'cargo test' out.txt".to_owned(),
        "\"$TJ\" rewrite 'cargo test'".to_owned(),
        // What clap prints.
        "\"$TJ\" --version".to_owned(),
        "\"$TJ\" run --help".to_owned(),
        // `cat`, for the status and the error tj is held to.
        "cat out.txt".to_owned(),
    ];
    for case in &cases {
        let open = shell(&env, case);
        assert!(open.status.success(), "{case} with stdout open: {open:?}");
        assert!(!open.stdout.is_empty(), "{case} printed nothing with stdout open: {open:?}");
        let closed = shell(&env, &format!("{case} >&-"));
        assert!(!closed.status.success(), "{case} >&- succeeded: {closed:?}");
        let said = stderr(&closed);
        assert!(said.to_lowercase().contains("bad file descriptor"), "{case} >&-: {said}");
        if case.contains("$TJ") {
            assert!(
                said.contains("could not write") && said.contains(" to stdout"),
                "{case} >&-: {said}"
            );
            assert!(said.contains("closed when tj started"), "{case} >&-: {said}");
        }
    }
    // Nothing to print, nothing to fail: `tj expand` of an id that is not there fails for
    // that reason, not for its stdout, and a search that finds nothing ends as `grep`'s.
    let missing = shell(&env, "\"$TJ\" expand 0123456789ab >&-");
    assert!(!stderr(&missing).contains("could not write"), "{missing:?}");
    let grep = shell(&env, "grep NOMATCH out.txt >&-");
    let nomatch = shell(&env, &format!("\"$TJ\" expand {id} --grep NOMATCH >&-"));
    assert_eq!(grep.status.code(), Some(1), "{grep:?}");
    assert_eq!(nomatch.status.code(), Some(1), "{nomatch:?}");
    assert_eq!(stderr(&nomatch), "", "{nomatch:?}");
    // The help that cannot be written is said to be lost, as `ls --help >/dev/full` says.
    let full = shell(&env, "\"$TJ\" --help >/dev/full");
    assert!(!full.status.success(), "{full:?}");
    assert!(stderr(&full).contains("could not write the help to stdout"), "{full:?}");
    // A closed stdin is not an empty input: `tj reduce <&-` fails as `cat <&-` does.
    let cat = shell(&env, "cat <&-");
    let reduce = shell(&env, "\"$TJ\" reduce --command 'cargo test' <&-");
    assert!(!cat.status.success() && !reduce.status.success(), "{cat:?} {reduce:?}");
    assert_eq!(reduce.stdout, b"", "{reduce:?}");
    assert!(stderr(&reduce).contains("could not read stdin: Bad file descriptor"), "{reduce:?}");
}

// --- The agent's PTY is wide ------------------------------------------------------------------

#[test]
fn agent_pty_is_500_columns_unless_columns_says_otherwise() {
    let env = TestEnv::new();
    let size = |columns: Option<&str>| {
        let mut cmd = tj(&env, &["run", "--agent", "--", "sh", "-c", "stty size </dev/tty"]);
        if let Some(columns) = columns {
            cmd.env("COLUMNS", columns);
        }
        let out = env.run_cmd(cmd, b"");
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    assert_eq!(size(None), "24 500");
    assert_eq!(size(Some("132")), "24 132");
    assert_eq!(size(Some("wide")), "24 500");
    // The renderer wraps at the width the output was written at, stored with it.
    let list = env.run(&["ls", "--format", "json"], b"");
    let artifacts: Vec<serde_json::Value> = serde_json::from_slice(&list.stdout).unwrap();
    let mut widths: Vec<_> = artifacts.iter().map(|a| a["cols"].as_u64().unwrap()).collect();
    widths.sort_unstable();
    widths.dedup();
    assert_eq!(widths, [132, 500], "{artifacts:?}");
}

#[test]
fn rustc_error_on_a_200_character_line_reaches_the_agent_whole() {
    // At 80 columns rustc elides the source line around the error (`...sed = 5; let x: u32
    // = "s"; …`), and `tj expand` cannot bring back what was never printed.
    let env = TestEnv::new();
    let krate = env.work().join("wide");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    let line = format!(
        "fn main() {{ let {a} = 1; let {b} = 2; let total = {a} + {b}; let x: u32 = \"s\"; }}",
        a = "first_value_with_a_name_long_enough_to_matter",
        b = "second_value_with_a_name_long_enough_to_matter",
    );
    assert!(line.len() >= 200, "{}", line.len());
    let write = |path: std::path::PathBuf, text: &str| {
        std::io::Write::write_all(&mut std::fs::File::create(path).unwrap(), text.as_bytes())
            .unwrap();
    };
    write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"wide\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    write(krate.join("src/main.rs"), &format!("{line}\n"));
    // The cargo and rustc that build these tests: the rustup proxies on PATH would look for
    // their toolchains under the test's own HOME.
    let cargo = Path::new(env!("CARGO"));
    let rustc = cargo.with_file_name("rustc");
    let mut cmd = tj(&env, &["run", "--agent", "--", env!("CARGO"), "build", "--offline"]);
    cmd.current_dir(&krate)
        .env("RUSTC", &rustc)
        .env("CARGO_TARGET_DIR", krate.join("target"))
        .env("CARGO_HOME", env.root.join("home/.cargo"));
    let out = env.run_cmd(cmd, b"");
    assert_eq!(out.status.code(), Some(101), "{}", stderr(&out));
    let rendition = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(rendition.contains("mismatched types"), "{rendition}");
    assert!(rendition.contains(&line), "the source line is cut:\n{rendition}");
}

// --- Fail open: what tj cannot set up, the command does without ------------------------------

/// Under a descriptor limit too low for tj's PTY, pipes and threads but not for the command,
/// the command runs all the same, in tj's place: its output reaches stdout, its exit code is
/// tj's, and one warning says tj stood aside (not what tj would have done instead, which is
/// moot). Before, tj exited 125 and the command never ran. Limits at which the command fails
/// alone (the shell needs descriptors of its own to redirect) are not tj's to meet and are
/// left out.
#[test]
fn a_descriptor_limit_too_low_for_tj_still_runs_the_command() {
    let env = TestEnv::new();
    let mut stood_aside = 0;
    for command in ["sh -c 'echo out; exit 3'", "sh -c 'echo out; echo err >&2; exit 3'"] {
        let err = if command.contains("err") { "err\n" } else { "" };
        for limit in 4..=24 {
            let alone = shell(&env, &format!("ulimit -n {limit} && exec {command}"));
            if alone.status.code() != Some(3)
                || alone.stdout != b"out\n"
                || alone.stderr != err.as_bytes()
            {
                continue;
            }
            for pty in ["", "--no-pty"] {
                let out = shell(
                    &env,
                    &format!(r#"ulimit -n {limit} && exec "$TJ" run --agent {pty} -- {command}"#),
                );
                let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
                let case =
                    format!("{command} at {limit} {pty}: {:?}\n{stdout}\n{stderr}", out.status);
                assert_eq!(out.status.code(), Some(3), "{case}");
                if stderr.contains("running the command without tj") {
                    stood_aside += 1;
                    assert_eq!(stdout, "out\n", "{case}");
                    let (warning, rest) = stderr.split_once('\n').unwrap();
                    assert!(
                        warning.ends_with(
                            "running the command without tj (its output is not captured or reduced)"
                        ),
                        "{case}"
                    );
                    assert_eq!(rest, err, "{case}");
                } else {
                    // tj had what it needed: a rendition as usual.
                    assert!(stdout.contains("out") && stdout.contains("exit 3"), "{case}");
                }
                assert!(!stderr.contains("Os {"), "an error in Debug form: {case}");
            }
        }
    }
    assert!(stood_aside >= 8, "only {stood_aside} runs took the fallback");
}

/// The command run in tj's place gets the signal dispositions tj was started with: SIGCHLD
/// ignored stays ignored (tj acts on it while it runs a command).
#[cfg(target_os = "linux")]
#[test]
#[allow(unsafe_code)]
fn a_command_run_in_tj_s_place_keeps_sigchld_ignored() {
    use std::os::unix::process::CommandExt;
    let env = TestEnv::new();
    let mut cmd = ignoring_sigchld(tj(&env, &["run", "--agent", "--", "cat", "/proc/self/status"]));
    // SAFETY: between fork and exec, setrlimit(2) only sets a limit of the child.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 12, rlim_max: 12 };
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            Ok(())
        });
    }
    let out = env.run_cmd(cmd, b"");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(stderr(&out).contains("running the command without tj"), "{}", stderr(&out));
    assert!(sigchld_ignored(&text), "SIGCHLD not ignored in the command: {text}");
}

/// A signal sent to tj while it sets up a run that then fails is not lost: tj ends by it
/// and does not run the command in its place. `strace` holds tj in its first `pipe2` (the
/// pipe `--no-pty` needs) and then fails it, so the signal comes in exactly that window.
#[cfg(target_os = "linux")]
#[test]
fn a_signal_during_a_failed_setup_ends_tj_without_running_the_command() {
    let env = TestEnv::new();
    let marker = env.work().join("ran");
    let mut cmd = if env_resets_signals() {
        let mut cmd = Command::new("env");
        cmd.args([RESET, "strace"]);
        cmd
    } else {
        Command::new("strace")
    };
    // With a seccomp filter, tj stops only at pipe2: a stopped tj that has its signal
    // socket (set up before any pipe) is held in that pipe2.
    cmd.args(["--seccomp-bpf", "-f", "-qq", "-o", "/dev/null", "-e", "trace=pipe2"])
        .args(["-e", "inject=pipe2:error=EMFILE:delay_enter=1500000:when=1", "--"])
        .arg(crate::util::tj_bin_str())
        .args(["run", "--agent", "--no-pty", "--", "sh", "-c", "echo ran >ran"])
        .env("TJ_DATA_DIR", env.data())
        .env("TJ_CONFIG_DIR", env.root.join("config"))
        .current_dir(env.work())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut strace = cmd.spawn().expect("strace is needed (.ci/run installs it)");
    let held = |pid: &str| {
        let stopped = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .is_ok_and(|status| status.lines().any(|l| l.starts_with("State:\tt")));
        let socket = std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
            fds.flatten().any(|fd| {
                std::fs::read_link(fd.path())
                    .is_ok_and(|link| link.to_string_lossy().starts_with("socket:"))
            })
        });
        stopped && socket
    };
    let deadline = Instant::now() + DEADLINE;
    let tj = loop {
        // strace itself, or `env` and then strace in its place: the same pid.
        let children = format!("/proc/{0}/task/{0}/children", strace.id());
        let list = std::fs::read_to_string(&children).unwrap_or_default();
        if let Some(pid) = list.split_whitespace().find(|pid| held(pid)) {
            break pid.parse::<i32>().unwrap();
        }
        assert!(Instant::now() < deadline, "tj was never held in pipe2");
        thread::sleep(Duration::from_millis(5));
    };
    signal(tj, nix::sys::signal::SIGTERM);
    let status = wait_deadline(&mut strace);
    let mut err = String::new();
    std::io::Read::read_to_string(strace.stderr.as_mut().unwrap(), &mut err).unwrap();
    // strace ends as its tracee did.
    assert!(
        status.signal() == Some(libc::SIGTERM) || status.code() == Some(143),
        "{status:?}\n{err}"
    );
    assert!(!marker.exists(), "the command ran after tj was told to end:\n{err}");
}

/// In tj's place (transparent mode here), a command whose exec fails for want of memory
/// ends as under env(1): 126, "could not be run", not tj's own 125. strace makes the exec
/// fail, for env and for tj alike.
#[cfg(target_os = "linux")]
#[test]
fn an_exec_failing_in_tj_s_place_gives_env_s_status() {
    let env = TestEnv::new();
    let inject = ["-f", "-qq", "-o", "/dev/null", "-e", "inject=execve:error=ENOMEM:when=1", "--"];
    let code = |argv: &[&str]| {
        let mut cmd = Command::new("strace");
        cmd.args(inject).args(argv).env("TJ_DISABLE", "1");
        let out = env.run_cmd(cmd, b"");
        (out.status.code(), stderr(&out))
    };
    let (alone, said) = code(&["env", "true"]);
    assert_eq!(alone, Some(126), "env: {said}");
    let (with_tj, said) = code(&[crate::util::tj_bin_str(), "run", "--", "true"]);
    assert_eq!(with_tj, alone, "tj: {said}");
    assert!(said.contains("true"), "{said}");
}
