//! What a person sees, through tmux (issue 10, "the tmux-driven check"): a real terminal
//! emulator runs an interactive bash, keys are typed into it, and the screen is read back
//! with `capture-pane`. A prompt is answered, `less` is paged, resized and quit, and Ctrl-C
//! ends a command with 130, all through `tj run` as through the command alone.
//!
//! Each step waits for the text it acts on to be on the screen (30 s deadline, polling, no
//! fixed sleeps). Every test runs its own tmux server (`-L`), killed on drop.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::util::*;

const DEADLINE: Duration = Duration::from_secs(30);

/// A tmux server of its own with one window running `bash --norc` in `env`.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// `None`, after saying why, only where tmux is not installed (`.ci/run` installs it).
    #[allow(clippy::print_stdout)] // a skip is said, never silent
    fn start(env: &TestEnv) -> Tmux {
        // Not a skip: .ci/run installs tmux, and a check that did not run is no check.
        assert!(
            Command::new("tmux").arg("-V").output().is_ok(),
            "tmux is needed for what a person sees (.ci/run installs it)"
        );
        let socket = format!("tj-test-{}", env.root.file_name().unwrap().to_string_lossy());
        let tmux = Tmux { socket };
        let bin = crate::util::tj_bin().parent().unwrap().display().to_string();
        let path = format!("{bin}:{}", std::env::var("PATH").unwrap_or_default());
        let shell = format!(
            "env -i HOME={home} PATH={path} TERM=xterm-256color TJ_DATA_DIR={data} \
             TJ_CONFIG_DIR={config} PS1='READY$ ' bash --norc --noprofile -i",
            home = env.root.join("home").display(),
            data = env.data().display(),
            config = env.root.join("config").display(),
        );
        let out = tmux
            .cmd(&["new-session", "-d", "-x", "80", "-y", "24", "-c"])
            .arg(env.work())
            .arg(shell)
            .output()
            .unwrap();
        assert!(out.status.success(), "tmux new-session: {}", stderr(&out));
        tmux.wait_for("READY$");
        tmux
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &self.socket, "-f", "/dev/null"]).args(args);
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        let out = self.cmd(args).output().unwrap();
        assert!(out.status.success(), "tmux {args:?}: {}", stderr(&out));
        out
    }

    /// Types `text` literally, then Enter.
    fn line(&self, text: &str) {
        self.run(&["send-keys", "-l", text]);
        self.run(&["send-keys", "Enter"]);
    }

    /// Sends one key by tmux's name for it (`C-c`, `q`).
    fn key(&self, key: &str) {
        self.run(&["send-keys", key]);
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p"]).stdout).into_owned()
    }

    /// Waits until `text` is on the screen, and returns the screen.
    fn wait_for(&self, text: &str) -> String {
        self.wait_until(|screen| screen.contains(text), text)
    }

    fn wait_until(&self, ok: impl Fn(&str) -> bool, what: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if ok(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "never saw {what:?}; the screen:\n{screen}\nthe processes on its terminal:\n{}",
                self.processes()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The pane's terminal, as `/dev/pts/N`.
    fn tty(&self) -> String {
        let tty = self.run(&["display-message", "-p", "#{pane_tty}"]).stdout;
        String::from_utf8_lossy(&tty).trim().to_owned()
    }

    /// What a failed wait shows besides the screen: every process whose controlling
    /// terminal is the pane's, with its state, process group, the terminal's foreground
    /// group, and the signals it ignores, blocks and has pending (in hex, as `/proc` has
    /// them). A key that seemed to do nothing is explained by one of these.
    fn processes(&self) -> String {
        let Ok(rdev) =
            std::fs::metadata(self.tty()).map(|m| std::os::unix::fs::MetadataExt::rdev(&m))
        else {
            return "(the pane's terminal is gone)".to_owned();
        };
        let mut rows = vec!["pid ppid pgrp tpgid state ign blk pnd shdpnd argv".to_owned()];
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let dir = entry.path();
            let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else { continue };
            // After the command name in parentheses: state ppid pgrp session tty_nr tpgid.
            let Some(close) = stat.rfind(')') else { continue };
            let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
            if fields.len() < 6 || fields[4].parse::<u64>().ok() != Some(rdev) {
                continue;
            }
            let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
            let field = |name: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map_or("?", |v| match v.trim().trim_start_matches('0') {
                        "" => "0",
                        hex => hex,
                    })
                    .to_owned()
            };
            let argv = std::fs::read(dir.join("cmdline")).unwrap_or_default();
            rows.push(format!(
                "{pid} {ppid} {pgrp} {tpgid} {state} {ign} {blk} {pnd} {shd} {argv}",
                pid = entry.file_name().to_string_lossy(),
                ppid = fields[1],
                pgrp = fields[2],
                tpgid = fields[5],
                state = fields[0],
                ign = field("SigIgn:"),
                blk = field("SigBlk:"),
                pnd = field("SigPnd:"),
                shd = field("ShdPnd:"),
                argv = String::from_utf8_lossy(&argv).replace('\0', " "),
            ));
        }
        rows.join("\n")
    }

    /// Waits until the pane's terminal is in raw mode (no echo), as tj puts it.
    fn wait_for_raw_mode(&self) {
        let tty = self.tty();
        let start = Instant::now();
        loop {
            let stty = Command::new("stty").args(["-a", "-F", &tty]).output().unwrap();
            if String::from_utf8_lossy(&stty.stdout).split_whitespace().any(|w| w == "-echo") {
                return;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "{tty} never went to raw mode (it still echoes): {}",
                stdout(&stty)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Clears the screen and the history, so the next wait sees only what follows.
    fn clear(&self) {
        self.line("clear");
        self.wait_until(|s| s.trim() == "READY$", "a cleared screen");
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]).output();
    }
}

#[test]
fn a_prompt_is_answered_through_tj_as_without_it() {
    let env = TestEnv::new();
    let tmux = Tmux::start(&env);
    for prefix in ["", "tj run -- "] {
        tmux.clear();
        tmux.line(&format!("{prefix}sh -c 'printf \"name? \"; read n; echo \"hello $n\"'"));
        tmux.wait_for("name? ");
        tmux.line("bob");
        // The answer, then the shell's prompt back: the command has ended. Waited for as
        // one screen, since bash draws the prompt a moment after the command's last line.
        let screen = tmux.wait_until(
            |s| s.contains("hello bob") && s.trim_end().ends_with("READY$"),
            "hello bob, then the prompt",
        );
        let answer = screen.find("hello bob").unwrap();
        assert_eq!(screen[answer..].matches("READY$").count(), 1, "{prefix:?}: {screen}");
    }
}

#[test]
fn less_pages_resizes_and_quits_through_tj() {
    let env = TestEnv::new();
    let text: String = (1..=200).map(|i| format!("row {i:03} of the file\n")).collect();
    env.write("work/notes.txt", &text);
    let tmux = Tmux::start(&env);
    tmux.clear();
    tmux.line("tj run -- less notes.txt");
    let screen = tmux.wait_for("row 001 of the file");
    assert!(!screen.contains("row 030"), "less shows one screen of 24 rows:\n{screen}");
    tmux.key("Space");
    tmux.wait_for("row 024 of the file");
    // A taller terminal: less redraws to the new size, which reaches it through tj.
    tmux.run(&["resize-window", "-x", "100", "-y", "40"]);
    tmux.key("g");
    tmux.wait_for("row 039 of the file");
    tmux.key("q");
    // Not just `READY$`: the main screen less leaves shows the line that started it, and tj
    // may still be storing the run then; the new prompt comes once tj has exited.
    let screen = tmux.wait_until(|s| s.trim_end().ends_with("READY$"), "the prompt after less");
    assert!(!screen.contains("row 039"), "the alternate screen is left:\n{screen}");
    let ls = env.run(&["ls", "--format", "json"], b"");
    let list: serde_json::Value = serde_json::from_slice(&ls.stdout).unwrap();
    assert_eq!(list[0]["exitCode"], 0, "{list}");
}

#[test]
fn ctrl_c_ends_the_command_with_130_through_tj() {
    let env = TestEnv::new();
    let tmux = Tmux::start(&env);
    // A duration of its own per step, so that no other test's sleep is taken for this one.
    for (prefix, secs) in [("", "4301"), ("tj run -- ", "4302")] {
        tmux.clear();
        tmux.line(&format!("{prefix}sh -c 'echo started; sleep {secs}'"));
        tmux.wait_for("started");
        // Not at "started": dash catches SIGINT under -c, and one arriving before its sleep
        // is exec'd is lost in the fork; the sleep would then outlive the deadline. Once a
        // process runs as `sleep SECS`, the exec is done and SIGINT is at its default.
        wait_for_process(&["sleep", secs]);
        tmux.key("C-c");
        tmux.wait_until(|s| s.trim_end().ends_with("READY$"), "the prompt after Ctrl-C");
        tmux.line("echo \"code=$?\"");
        let screen = tmux.wait_for("code=1");
        assert!(screen.contains("code=130"), "{prefix:?}: {screen}");
    }
}

/// Waits until some process's command line is `argv`, which it is only once exec'd.
fn wait_for_process(argv: &[&str]) {
    let want: Vec<u8> = argv.iter().flat_map(|arg| [arg.as_bytes(), b"\0"].concat()).collect();
    let start = Instant::now();
    let running =
        || {
            std::fs::read_dir("/proc").into_iter().flatten().flatten().any(|entry| {
                std::fs::read(entry.path().join("cmdline")).is_ok_and(|line| line == want)
            })
        };
    while !running() {
        assert!(start.elapsed() < DEADLINE, "never saw a process running {argv:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ctrl-Z, then `bg`: the command runs on to its end in the background while the shell
/// takes what is typed, as without tj. tj, which reads the terminal for the command, must
/// not read it from the background (SIGTTIN would stop tj, and the command's output with
/// it); `fg` then gives the keys back to the command.
#[test]
fn ctrl_z_then_bg_runs_on_and_fg_gives_the_keys_back_through_tj() {
    let env = TestEnv::new();
    let tmux = Tmux::start(&env);
    for (prefix, secs) in [("", "2.01"), ("tj run -- ", "2.02")] {
        tmux.clear();
        // Split in the typed line, so that only the command's output matches, and Ctrl-Z
        // once its sleep runs: a key that came before the command ran left bash never
        // reporting it stopped (1 CI run in 20 or so, in the leg without tj).
        tmux.line(&format!("{prefix}sh -c 'echo \"sta\"rted; sleep {secs}; echo \"fini\"shed'"));
        tmux.wait_for("started");
        wait_for_process(&["sleep", secs]);
        tmux.key("C-z");
        tmux.wait_for("Stopped");
        tmux.line("bg");
        // Typed while the job runs in the background: the shell's, not tj's.
        tmux.line("echo \"shell-$((6 * 7))\"");
        tmux.wait_for("shell-42");
        tmux.line("wait; echo \"code=$?\"");
        let screen = tmux.wait_until(|s| s.lines().any(|l| l.starts_with("code=")), "code=");
        assert!(screen.contains("finished") && screen.contains("code=0"), "{prefix:?}: {screen}");
        let after_bg = &screen[screen.find("bg").unwrap()..];
        assert!(!after_bg.contains("topped"), "{prefix:?}: stopped again:\n{screen}");

        // A command that reads, answered after `fg`.
        tmux.clear();
        tmux.line(&format!("{prefix}sh -c 'echo \"ask\"ing; sleep 1; read x; echo \"got=$x\"'"));
        tmux.wait_for("asking");
        tmux.key("C-z");
        tmux.wait_for("Stopped");
        tmux.line("bg");
        tmux.line("echo \"shell-$((6 * 7))\"");
        tmux.wait_for("shell-42");
        tmux.line("fg");
        // bash names the job it continues once it has read `fg` and left its line editor,
        // which echoes keys itself with the terminal's echo off: an answer typed before
        // then was taken in unechoed (1 CI run in 10 or so, in the leg without tj).
        let job = format!("{prefix}sh -c");
        tmux.wait_until(
            |s| s.rsplit_once("READY$ fg\n").is_some_and(|(_, after)| after.starts_with(&job)),
            "the job named after fg",
        );
        // After `fg`, tj takes raw mode back within its foreground check (250 ms): the pane's
        // terminal stops echoing (the PTY echoes instead). Without tj it stays cooked and the
        // command is continued at once. Typed after either: one echo, then the answer.
        if !prefix.is_empty() {
            tmux.wait_for_raw_mode();
        }
        tmux.line("hello");
        tmux.wait_for("got=hello");
        tmux.wait_until(|s| s.trim_end().ends_with("READY$"), "the prompt after the answer");
        tmux.line("echo \"code=$?\"");
        let screen = tmux.wait_until(|s| s.lines().any(|l| l.starts_with("code=")), "code=");
        assert!(screen.contains("code=0"), "{prefix:?}: {screen}");
        assert_eq!(
            screen.lines().filter(|l| l.trim_end() == "hello").count(),
            1,
            "{prefix:?}: echoed twice:\n{screen}"
        );
    }
}

/// Ctrl-Z with `--no-pty`: the command leads a session of its own there, so the terminal's
/// SIGTSTP reaches tj only; tj stops the command with itself, and `fg` continues both, as
/// the shell stops and continues the command without tj.
#[test]
fn ctrl_z_stops_a_command_without_a_pty_and_fg_continues_it() {
    let env = TestEnv::new();
    let tmux = Tmux::start(&env);
    let count = env.work().join("count");
    let read_count = || std::fs::read_to_string(&count).unwrap_or_default();
    for prefix in ["", "tj run --no-pty -- "] {
        tmux.clear();
        let _ = std::fs::remove_file(&count);
        // bash, not sh: dash starts each `sleep` with vfork, and a ^Z that lands between
        // the vfork and the exec stops the child there while dash, waiting for that exec,
        // cannot stop; bash, waiting for dash, then never reports the job stopped (2 CI runs
        // in 5, in the leg without tj). The trap: a SIGINT that lands in a fork, before the
        // `sleep` is exec'd, is lost for that child, and the loop would run on; the shell's
        // own copy ends it.
        tmux.line(&format!(
            "{prefix}bash --norc -c 'trap \"exit 130\" INT; i=0; echo \"coun\"ting; while :; do i=$((i+1)); echo $i > count; sleep 0.1; done'"
        ));
        tmux.wait_for("counting");
        tmux.key("C-z");
        tmux.wait_for("Stopped");
        let stopped = read_count();
        // Ten counts a second while it runs: none in half a second means it is stopped.
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(read_count(), stopped, "{prefix:?}: the command ran on while stopped");
        tmux.line("fg");
        let start = Instant::now();
        while read_count() == stopped {
            assert!(start.elapsed() < DEADLINE, "{prefix:?}: never continued after fg");
            std::thread::sleep(Duration::from_millis(50));
        }
        tmux.key("C-c");
        tmux.wait_until(|s| s.trim_end().ends_with("READY$"), "the prompt after Ctrl-C");
        tmux.line("echo \"code=$?\"");
        let screen = tmux.wait_until(|s| s.lines().any(|l| l.starts_with("code=")), "code=");
        assert!(screen.contains("code=130"), "{prefix:?}: {screen}");
    }
}
