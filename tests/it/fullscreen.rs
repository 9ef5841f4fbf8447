//! Full-screen programs (issue 10, item 7): what `less` or `vim` showed last reaches the
//! rendition under one line saying so, instead of `(no output)`. Driven through the binary:
//! `tj reduce` and `tj run --agent` on a synthetic alternate screen, and the real programs
//! inside an outer pseudo-terminal that plays the user's, with keys sent only once the text
//! they act on is on the screen (30 s deadline, no sleeps).

use std::path::Path;
use std::process::Command;

use crate::pty::{Outer, in_outer, size};
use crate::util::*;

/// The line `tj::reduce::terminal::FULL_SCREEN`.
const NOTE: &str = "[tj] full-screen program; last screen:";

const FILE: &str = "line 1 of the file\nline 2 of the file\nline 3 of the file\n";

/// An alternate screen drawn as a pager draws one (clear, home, rows, a reverse-video prompt),
/// then given back: a terminal shows nothing of it afterwards.
const DRAWN: &str = r"\033[?1049h\033[H\033[2Jline 1 of the file\r\nline 2 of the file\r\nline 3 of the file\r\n\033[7m(END)\033[27m\033[K\r\033[K\033[?1049l";

#[test]
fn a_synthetic_full_screen_is_described_by_tj_reduce_and_tj_run() {
    let env = TestEnv::new();
    let bytes = Command::new("sh").args(["-c", &format!("printf '{DRAWN}'")]).output().unwrap();
    assert!(bytes.stdout.starts_with(b"\x1b[?1049h"), "{:?}", bytes.stdout);
    let want = format!("{NOTE}\n{}", FILE.trim_end());

    let out = env.run(&["reduce", "--command", "less notes.txt"], &bytes.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim_end(), want);

    let out = env.run(&["run", "--agent", "--", "sh", "-c", &format!("printf '{DRAWN}'")], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim_end(), want);
    assert!(!stdout(&out).contains("(no output)"));
}

/// Runs `tj run --emit RENDITION -- program args…` in a 24×80 outer terminal with TERM=xterm,
/// sends `keys` once `ready` is on the screen, and returns what the terminal showed and the
/// rendition. tj's exit status must be 0.
fn full_screen(
    env: &TestEnv,
    program: &str,
    args: &[&str],
    ready: &str,
    keys: &[u8],
) -> (Vec<u8>, String) {
    let emit = env.root.join("rendition.txt");
    let mut cmd = in_outer(env, crate::util::tj_bin_str());
    cmd.args(["run", "--emit"]);
    cmd.arg(&emit);
    cmd.args(["--", program]);
    cmd.args(args);
    let mut outer = Outer::spawn(cmd, size(24, 80));
    outer.wait_for(ready);
    outer.send(keys);
    let code = outer.wait_exit();
    assert_eq!(code, 0, "{program}: {}", read_or_empty(&emit));
    (outer.shown(), read_or_empty(&emit))
}

fn read_or_empty(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Says why a test did not run (ripgrep's `cmd_exists` pattern): never a silent pass.
#[allow(clippy::print_stdout)] // the test harness shows it with --nocapture and on failure
fn skip(reason: &str) {
    println!("skipping: {reason}");
}

fn has(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn less_leaves_its_last_screen_in_the_rendition() {
    if !has("less") {
        // The synthetic test above still covers the renderer.
        skip("less not installed");
        return;
    }
    let env = TestEnv::new();
    let file = env.write("work/notes.txt", FILE);
    let (live, rendition) = full_screen(&env, "less", &[file.to_str().unwrap()], "(END)", b"q");
    // The person saw less itself, on the alternate screen.
    assert!(live.windows(8).any(|w| w == b"\x1b[?1049h"), "{}", String::from_utf8_lossy(&live));
    assert_eq!(rendition.trim_end(), format!("{NOTE}\n{}", FILE.trim_end()), "{rendition}");
}

#[test]
fn vim_leaves_its_last_screen_in_the_rendition() {
    if !has("vim") {
        skip("vim not installed");
        return;
    }
    let env = TestEnv::new();
    let file = env.write("work/notes.txt", FILE);
    let args = ["-u", "NONE", "-i", "NONE", "-N", "-n", file.to_str().unwrap()];
    let (_, rendition) = full_screen(&env, "vim", &args, "line 3 of the file", b":q\r");
    assert!(rendition.starts_with(&format!("{NOTE}\n{FILE}")), "{rendition}");
    assert!(!rendition.contains("(no output)"), "{rendition}");
}
