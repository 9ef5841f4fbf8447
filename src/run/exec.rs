//! Spawning the child: `std::process::Command` with the PTY slave (or the shared output pipe)
//! as its stdout and stderr, in a session of its own, in the given working directory; and
//! exec failures turned into [`SpawnError`]s that name the command, as a shell would.
//!
//! It does not wait for the child (`signals.rs`) or read its output (`pty.rs`).

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::PoisonError;

use nix::errno::Errno;

use super::{SpawnError, Spec};

/// Where the child's stdout and stderr go.
pub(super) enum Output {
    /// The PTY slave, which also becomes the child's controlling terminal.
    Pty(File),
    /// The write end of one pipe, shared by stdout and stderr (`--no-pty`).
    Pipe(OwnedFd),
}

/// Where the child's stdin comes from.
#[derive(Clone, Copy)]
pub(super) enum Input<'a> {
    /// The PTY slave (tj's stdin is a terminal; tj forwards the keystrokes).
    Pty,
    /// This descriptor, unchanged (a duplicate shares the open file: offset, EOF, `isatty`).
    Fd(BorrowedFd<'a>),
}

/// Starts `spec.argv` with the given stdio, as the leader of a new session (so its process
/// group id is its pid, and signals can be forwarded to the whole group). With a PTY, the
/// slave becomes its controlling terminal, so `/dev/tty`, job control and SIGWINCH work.
///
/// The `Command` (which holds duplicates of the slave or the pipe) is dropped before this
/// returns; the caller drops `output` right after, so that EOF reaches the pump when the
/// child and its descendants are done.
pub(super) fn spawn(spec: &Spec, output: &Output, input: Input<'_>) -> Result<Child, SpawnError> {
    let Some((program, args)) = spec.argv.split_first() else {
        return Err(SpawnError::Other("no command given".to_owned()));
    };
    let dup = |fd: BorrowedFd<'_>| {
        fd.try_clone_to_owned().map(Stdio::from).map_err(|err| {
            SpawnError::Other(format!("could not set up the command's stdio: {err}"))
        })
    };
    let out = match output {
        Output::Pty(slave) => slave.as_fd(),
        Output::Pipe(pipe) => pipe.as_fd(),
    };
    let stdin = match input {
        Input::Pty => out,
        Input::Fd(fd) => fd,
    };

    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(&spec.cwd);
    for key in &spec.env_remove {
        cmd.env_remove(key);
    }
    cmd.envs(spec.env_set.iter().map(|(key, value)| (key, value)));
    cmd.stdin(dup(stdin)?).stdout(dup(out)?).stderr(dup(out)?);
    new_session_on_exec(&mut cmd, matches!(output, Output::Pty(_)));
    let child = spawn_retrying(&mut cmd).map_err(|err| classify(&err, spec));
    drop(cmd);
    child
}

/// Spawns, retrying briefly while the kernel reports the executable busy (ETXTBSY).
///
/// A program that was just written (a build's output, a test's stub) can still be open for
/// writing in a process some other thread forked and has not yet exec'd; exec'ing it then
/// fails for a moment. The command is not at fault, so tj waits it out (at most ~1 s)
/// instead of reporting it as not executable.
fn spawn_retrying(cmd: &mut Command) -> io::Result<std::process::Child> {
    let mut attempts = 0;
    loop {
        let spawned = {
            let _no_openpty = super::pty::SPAWN.read().unwrap_or_else(PoisonError::into_inner);
            cmd.spawn()
        };
        match spawned {
            Err(err) if err.kind() == io::ErrorKind::ExecutableFileBusy && attempts < 100 => {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// Makes the child a session leader and, with `ctty`, gives it its stdout (the PTY slave)
/// as controlling terminal. Not fd 0: the child's stdin is not the PTY when tj's is not a
/// terminal.
#[allow(unsafe_code)]
fn new_session_on_exec(cmd: &mut Command, ctty: bool) {
    let hook = move || -> io::Result<()> {
        nix::unistd::setsid()?;
        if ctty {
            // SAFETY: TIOCSCTTY takes an integer argument (0: do not steal the terminal
            // from another session) and touches no memory of ours.
            if unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCSCTTY, 0) } == -1 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    };
    // SAFETY: the hook runs between fork and exec, where only async-signal-safe calls are
    // allowed: it makes two system calls (setsid, ioctl), allocates nothing and takes no
    // lock; its errors are plain errno values.
    unsafe {
        cmd.pre_exec(hook);
    }
}

/// Turns a failed spawn into the error `env(1)` would report: 127 when the command (or the
/// interpreter named by its `#!`) does not exist, 126 when it exists but cannot be
/// executed, 125 for anything else, such as a working directory that cannot be entered.
fn classify(err: &io::Error, spec: &Spec) -> SpawnError {
    let Some(program) = spec.argv.first() else {
        return SpawnError::Other("no command given".to_owned());
    };
    let cmd = program.to_string_lossy();
    // The child enters the directory before exec, and that failure comes back with the same
    // errno values as exec's own (ENOENT, EACCES); tell them apart by looking.
    if let Err(why) = check_dir(&spec.cwd) {
        return SpawnError::Other(format!(
            "could not enter the working directory {}: {why}",
            spec.cwd.display()
        ));
    }
    let found = locate(program, &spec.cwd, search_path(spec).as_deref());
    match err.raw_os_error() {
        Some(libc::ENOENT) => SpawnError::NotFound(match found {
            // The file is there, so exec's ENOENT is about the interpreter it names.
            Some(file) => match interpreter(&file) {
                Some(interp) => {
                    format!("{cmd}: bad interpreter {interp}: no such file or directory")
                }
                None => format!("{cmd}: cannot execute: required file not found"),
            },
            None if has_slash(program) => format!("{cmd}: no such file or directory"),
            None => format!("{cmd}: command not found"),
        }),
        Some(libc::EACCES | libc::EPERM) => SpawnError::NotExecutable(match found {
            Some(file) if file.is_dir() => format!("{cmd}: is a directory"),
            Some(file) if is_executable(&file) => match interpreter(&file) {
                Some(interp) => format!("{cmd}: bad interpreter {interp}: permission denied"),
                None => format!("{cmd}: permission denied"),
            },
            _ => format!("{cmd}: permission denied"),
        }),
        Some(libc::ENOEXEC) => SpawnError::NotExecutable(format!("{cmd}: exec format error")),
        _ => SpawnError::Other(format!("could not run {cmd}: {}", describe(err))),
    }
}

fn check_dir(dir: &Path) -> Result<(), String> {
    match fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err("not a directory".to_owned()),
        Err(err) => Err(describe(&err)),
    }
}

/// An io error as a lowercase phrase without the "(os error N)" suffix.
fn describe(err: &io::Error) -> String {
    let text = match err.raw_os_error() {
        Some(errno) => Errno::from_raw(errno).desc().to_owned(),
        None => err.to_string(),
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

fn has_slash(program: &OsStr) -> bool {
    program.as_bytes().contains(&b'/')
}

/// The PATH the child searches: the one the spec sets, else none if it removes it, else
/// tj's own.
fn search_path(spec: &Spec) -> Option<std::ffi::OsString> {
    let path = OsStr::new("PATH");
    if let Some((_, value)) = spec.env_set.iter().rev().find(|(key, _)| key == path) {
        return Some(value.clone());
    }
    if spec.env_remove.iter().any(|key| key == path) {
        return None;
    }
    std::env::var_os(path)
}

/// Where exec would have found `program`: the path itself if it has a slash (relative to
/// `cwd`), else the first entry of `path` (the libc default when unset) that exists. Only
/// used to word an error, after exec has failed.
fn locate(program: &OsStr, cwd: &Path, path: Option<&OsStr>) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if has_slash(program) {
        let file = cwd.join(program);
        return file.exists().then_some(file);
    }
    let path = path.unwrap_or_else(|| OsStr::new("/bin:/usr/bin"));
    std::env::split_paths(path).map(|dir| cwd.join(dir).join(program)).find(|file| file.exists())
}

fn is_executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(file).is_ok_and(|meta| meta.permissions().mode() & 0o111 != 0)
}

/// The interpreter a `#!` line names, if `file` starts with one.
fn interpreter(file: &Path) -> Option<String> {
    let mut head = Vec::with_capacity(256);
    File::open(file).ok()?.take(256).read_to_end(&mut head).ok()?;
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next().unwrap_or_default();
    let interp = line.split(|b| b.is_ascii_whitespace()).find(|word| !word.is_empty())?;
    Some(String::from_utf8_lossy(interp).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_drops_the_os_error_suffix() {
        let err = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(describe(&err), "no such file or directory");
    }

    #[test]
    fn locate_searches_path_in_order_and_relative_to_cwd() {
        assert_eq!(
            locate(OsStr::new("sh"), Path::new("/"), Some(OsStr::new("/nonexistent:/bin"))),
            Some(PathBuf::from("/bin/sh"))
        );
        assert_eq!(locate(OsStr::new("no-such-tj-cmd"), Path::new("/"), None), None);
        assert_eq!(
            locate(OsStr::new("bin/sh"), Path::new("/"), None),
            Some(PathBuf::from("/bin/sh"))
        );
    }

    #[test]
    fn search_path_follows_the_spec() {
        let mut spec = Spec::new(vec!["x".into()], "/".into());
        spec.env_set.push(("PATH".into(), "/a".into()));
        assert_eq!(search_path(&spec), Some("/a".into()));
        spec.env_set.clear();
        spec.env_remove.push("PATH".into());
        assert_eq!(search_path(&spec), None);
    }
}
