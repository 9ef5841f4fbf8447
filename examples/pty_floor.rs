//! The floor of relaying a command's output through a PTY, on this machine (issue 13, the
//! third row of `scripts/bench-start.py`).
//!
//! Runs the command `RUNS` times with its output relayed by the least a relay can do (read
//! until the end, keep nothing), through a PTY and through a pipe, interleaved, and prints
//! the medians. The difference is what the kernel's terminal layer costs that output,
//! whoever relays it: every 4 KB of it is a round trip between the writer, a kernel worker
//! and the reader.
//!
//! ```text
//! cargo run --release --example pty_floor -- 61 sh -c 'cat 100k.log'
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a measuring tool that prints")]

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

/// Milliseconds from spawning `argv` to the end of its output and its exit, its output
/// relayed through a PTY (`pty`) or a pipe.
fn relay(pty: bool, argv: &[String]) -> f64 {
    let start = Instant::now();
    let (read, write): (OwnedFd, OwnedFd) = if pty {
        let pair = nix::pty::openpty(None, None).expect("a PTY opens");
        (pair.master, pair.slave)
    } else {
        let (read, write) = std::io::pipe().expect("a pipe opens");
        (read.into(), write.into())
    };
    let stderr = write.try_clone().expect("a descriptor duplicates");
    // The command (holding our copies of the write end) is dropped with the statement, so
    // the end of the output comes when the child is done with it.
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::from(write))
        .stderr(Stdio::from(stderr))
        .spawn()
        .expect("the command starts");
    let mut out = File::from(read);
    let mut buf = vec![0u8; 64 * 1024];
    // A PTY's master reads EIO once the last slave is closed: that is its end too.
    while matches!(out.read(&mut buf), Ok(n) if n > 0) {}
    child.wait().expect("the command is waited for");
    start.elapsed().as_secs_f64() * 1e3
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(runs), Some(_)) = (args.first().and_then(|n| n.parse::<usize>().ok()), args.get(1))
    else {
        eprintln!("usage: pty_floor RUNS COMMAND [ARGS...]");
        return ExitCode::from(2);
    };
    let argv = &args[1..];
    let (mut pipe, mut pty) = (Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        pipe.push(relay(false, argv));
        pty.push(relay(true, argv));
    }
    let (pipe, pty) = (median(pipe), median(pty));
    println!("{runs} interleaved runs; medians");
    println!("through a pipe: {pipe:8.2} ms");
    println!("through a PTY:  {pty:8.2} ms ({:.2}x)", pty / pipe);
    ExitCode::SUCCESS
}
