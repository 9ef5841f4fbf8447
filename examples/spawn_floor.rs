//! The least a wrapper can do to run a command as `tj run` runs it, on this machine (issue
//! 13, the fourth row of `scripts/bench-start.py`): the floor of tj's fixed cost per run,
//! beside the command alone.
//!
//! Like tj, it gives the command a PTY in a session of its own, led by a process that waits
//! for the command in the terminal's foreground group and takes the terminal back when it
//! ends (so that the command's background children outlive it), and relays the output until
//! the last writer is gone; then it exits as the command did. Unlike tj, it does nothing
//! else: no options, no store, no rendition, no signal forwarding, no threads. The leader
//! runs in the wrapper's memory (`clone(CLONE_VM)`) and starts the command as `vfork`
//! would, as tj starts both on Linux.
//!
//! ```text
//! spawn_floor COMMAND [ARGS...]
//! ```
//!
//! The bench runs it as a whole process, as it runs tj, built the same way (statically
//! linked where tj is).

#![allow(unsafe_code, reason = "fork, clone and exec by hand, as tj's own spawn")]
#![allow(clippy::print_stderr, reason = "a measuring tool that prints")]

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::process::ExitCode;

use libc::c_int;

/// What the command's process needs from its leader: the exec, prepared before any fork.
struct Exec {
    program: CString,
    argv: Vec<*const libc::c_char>,
}

extern "C" fn command(arg: *mut libc::c_void) -> c_int {
    // SAFETY: `leader` passes a pointer to an `Exec` that outlives this process's use of the
    // shared memory (CLONE_VFORK); only system calls and execvp follow.
    unsafe {
        let exec = &*arg.cast::<Exec>();
        let mut ttou: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut ttou);
        libc::sigaddset(&mut ttou, libc::SIGTTOU);
        libc::sigprocmask(libc::SIG_BLOCK, &ttou, &mut old);
        libc::setpgid(0, 0);
        libc::tcsetpgrp(libc::STDOUT_FILENO, libc::getpid());
        libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        libc::execvp(exec.program.as_ptr(), exec.argv.as_ptr());
        libc::_exit(127)
    }
}

/// What the session leader needs, made before it starts.
struct Leader<'a> {
    master: c_int,
    slave: c_int,
    exec: &'a Exec,
    /// The top of the command's stack, until its exec.
    command_stack: *mut u8,
}

extern "C" fn leader_main(arg: *mut libc::c_void) -> c_int {
    // SAFETY: `main` passes a pointer to a `Leader` that outlives this process (it waits for
    // it); the leader only makes system calls on values read from it.
    let leader = unsafe { &*arg.cast::<Leader<'_>>() };
    // SAFETY: closes this process's copy of the master (its descriptors are its own).
    unsafe { libc::close(leader.master) };
    lead(leader.slave, leader.exec, leader.command_stack)
}

/// The session leader, in its own process sharing the wrapper's memory: never returns.
fn lead(slave: c_int, exec: &Exec, top: *mut u8) -> ! {
    // SAFETY: system calls on our own process and descriptors; the clone child runs on
    // the stack whose top is `top`, sharing our memory until its exec.
    unsafe {
        libc::setsid();
        for fd in 0..3 {
            libc::dup2(slave, fd);
        }
        libc::ioctl(libc::STDOUT_FILENO, libc::TIOCSCTTY, 0);
        let pid = libc::clone(
            command,
            top.cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            std::ptr::from_ref(exec).cast_mut().cast(),
        );
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
        libc::signal(libc::SIGTTOU, libc::SIG_IGN);
        libc::tcsetpgrp(libc::STDOUT_FILENO, libc::getpgrp());
        libc::_exit(if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 128 })
    }
}

fn main() -> ExitCode {
    let args: Vec<CString> = std::env::args_os()
        .skip(1)
        .map(|arg| CString::new(arg.as_bytes()).expect("no NUL in an argument"))
        .collect();
    let Some(program) = args.first().cloned() else {
        eprintln!("usage: spawn_floor COMMAND [ARGS...]");
        return ExitCode::from(2);
    };
    let argv =
        args.iter().map(|arg| arg.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let exec = Exec { program, argv };
    let top = |stack: &mut Vec<u8>| {
        // SAFETY: the last 16-byte boundary within the buffer (stacks grow down).
        unsafe { stack.as_mut_ptr().add(stack.len() & !15) }
    };
    let (mut leader_stack, mut command_stack) = (vec![0u8; 256 * 1024], vec![0u8; 256 * 1024]);
    let pair = nix::pty::openpty(None, None).expect("a PTY opens");
    let (master, slave): (OwnedFd, OwnedFd) = (pair.master, pair.slave);
    let leader = Leader {
        master: master.as_raw_fd(),
        slave: slave.as_raw_fd(),
        exec: &exec,
        command_stack: top(&mut command_stack),
    };
    // SAFETY: the leader runs `leader_main` on its own stack, sharing our memory, and only
    // makes system calls (see `lead`); `leader` and both stacks outlive it (we wait for it
    // below, and for the end of the output, which comes after its exit).
    let pid = unsafe {
        libc::clone(
            leader_main,
            top(&mut leader_stack).cast(),
            libc::CLONE_VM | libc::SIGCHLD,
            std::ptr::from_ref(&leader).cast_mut().cast(),
        )
    };
    assert!(pid > 0, "the leader could not be started");
    drop(slave);
    let mut buf = [0u8; 64 * 1024];
    // SAFETY: reads into a local buffer from our own descriptor.
    while unsafe { libc::read(master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
    let mut status = 0;
    // SAFETY: waits for our own child into a local.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    ExitCode::from(u8::try_from(libc::WEXITSTATUS(status)).unwrap_or(1))
}
