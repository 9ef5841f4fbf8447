//! Spawning the child, with the PTY slave (or the shared output pipe) as its stdout and
//! stderr, in a session of its own, in the given working directory: on a PTY under a
//! session leader started in tj's memory (`start_leader`, where it can be), else through
//! `std::process::Command`; and exec failures turned into [`SpawnError`]s that name the
//! command, as a shell would.
//!
//! With a PTY, the session is led by a small process of tj's own (see [`lead_session`]), and
//! the command runs in the session's foreground process group, as a shell runs a job: when
//! the command exits, the leader takes the terminal back before it exits itself, so the
//! hangup that follows goes to no one, and the command's background children (`sleep 100 &`,
//! a dev server started with `&`) live on as they would without tj.
//!
//! It does not wait for the child (`signals.rs`) or read its output (`pty.rs`).

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::{self, File};
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};
use std::sync::{Arc, PoisonError};

use libc::{c_char, c_int};
use nix::errno::Errno;
use nix::unistd::Pid;

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

/// The process [`spawn`] started, to wait for: one std started, or a session leader
/// started by `start_leader`.
pub(super) enum Child {
    Std(std::process::Child),
    #[cfg(shared_leader)]
    Leader(Leader),
}

impl Child {
    pub(super) fn id(&self) -> u32 {
        match self {
            Child::Std(child) => child.id(),
            #[cfg(shared_leader)]
            Child::Leader(leader) => leader.pid.unsigned_abs(),
        }
    }

    /// Waits for the process to end and reaps it; its status, also when asked again.
    pub(super) fn wait(&mut self) -> io::Result<ExitStatus> {
        match self {
            Child::Std(child) => child.wait(),
            #[cfg(shared_leader)]
            Child::Leader(leader) => leader.wait(),
        }
    }
}

/// What [`spawn`] started.
pub(super) struct Spawned {
    /// The process to wait for; it ends as the command does. With a PTY, the leader of the
    /// command's session ([`lead_session`]); otherwise the command itself.
    pub(super) child: Child,
    /// The command's process group (its pid): where tj forwards signals.
    pub(super) job: Pid,
}

/// Starts `spec.argv` with the given stdio (stderr as stdout unless `stderr` says otherwise)
/// in a new session, in a process group of its own (whose id is its pid), so that signals
/// can be forwarded to the whole group.
///
/// With a PTY, the slave becomes the session's controlling terminal, so `/dev/tty`, job
/// control and SIGWINCH work, and the command runs in its foreground process group under a
/// session leader that tj waits for ([`lead_session`]). Without one, the command leads the
/// session itself.
///
/// The `Command` (which holds duplicates of the slave or the pipe) is dropped before this
/// returns; the caller drops `output` right after, so that EOF reaches the pump when the
/// child and its descendants are done.
pub(super) fn spawn(
    spec: &Spec,
    output: &Output,
    input: Input<'_>,
    stderr: Option<BorrowedFd<'_>>,
    ignore_sigchld: bool,
) -> Result<Spawned, SpawnError> {
    let Some((program, args)) = spec.argv.split_first() else {
        return Err(SpawnError::Other("no command given".to_owned()));
    };
    let out = match output {
        Output::Pty(slave) => slave.as_fd(),
        Output::Pipe(pipe) => pipe.as_fd(),
    };
    let stdin = match input {
        Input::Pty => out,
        Input::Fd(fd) => fd,
    };
    let stdio = [stdin, out, stderr.unwrap_or(out)];
    let on_pty = matches!(output, Output::Pty(_));
    let try_start = |program: &OsStr, args: &[&OsStr]| {
        start(&Start { program, args, spec, on_pty, stdio, ignore_sigchld })
    };
    let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
    let spawned = match try_start(program, &args)? {
        // A file with no `#!` (a script, an empty file) is run by `/bin/sh`, as `env(1)`
        // runs it, and as the shell the agent typed it in would run a script.
        Err(err) if err.raw_os_error() == Some(libc::ENOEXEC) => {
            match shell_script(program, spec) {
                Some(script) => {
                    let with_script: Vec<&OsStr> =
                        std::iter::once(script.as_os_str()).chain(args).collect();
                    try_start(OsStr::new("/bin/sh"), &with_script)?
                }
                None => Err(err),
            }
        }
        spawned => spawned,
    };
    spawned.map_err(|err| classify(&err, spec))
}

/// What [`start`] starts: `program` with `args`, as `spec` says otherwise, on stdio 0, 1
/// and 2 (the PTY slave among them if `on_pty`).
struct Start<'a> {
    program: &'a OsStr,
    args: &'a [&'a OsStr],
    spec: &'a Spec,
    on_pty: bool,
    stdio: [BorrowedFd<'a>; 3],
    ignore_sigchld: bool,
}

/// Starts the command: through the session leader tj runs in its own memory where it can
/// ([`spawn_leader`]), else through std's `Command`. `Ok(Err(_))` is the spawn's own error,
/// before [`classify`] words it (ENOEXEC is looked for by the caller).
fn start(what: &Start<'_>) -> Result<io::Result<Spawned>, SpawnError> {
    let &Start { program, args, spec, on_pty, stdio, ignore_sigchld } = what;
    // On a PTY the command is exec'd by the session leader's own code, from a plan made
    // here (std's exec is never reached): std is given no environment to build.
    let plan = match on_pty.then(|| ExecPlan::new(program, args, spec)) {
        Some(None) => return Ok(Err(io::Error::from(io::ErrorKind::InvalidInput))),
        Some(Some(plan)) => Some(plan),
        None => None,
    };
    #[cfg(shared_leader)]
    if let Some(plan) = &plan
        && let Some(spawned) = spawn_leader(plan, stdio, &spec.cwd, ignore_sigchld)?
    {
        return Ok(spawned);
    }
    let dup = |fd: BorrowedFd<'_>| dup_stdio(fd).map(Stdio::from);
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(&spec.cwd);
    cmd.stdin(dup(stdio[0])?).stdout(dup(stdio[1])?).stderr(dup(stdio[2])?);
    let session = plan.map(|plan| Session { report: Arc::new(AtomicI32::new(-1)), plan });
    // Without a PTY std's exec runs the command. Given no environment, std execs with
    // `environ`, which the hook points at the command's in the forked child: std would
    // build it from `vars_os` (see `CommandEnv`).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let env = match &session {
        // The session's plan holds the environment already.
        Some(_) => None,
        None => match CommandEnv::new(spec) {
            Some(env) => Some(env),
            None => return Ok(Err(io::Error::from(io::ErrorKind::InvalidInput))),
        },
    };
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let env = {
        if session.is_none() {
            for key in &spec.env_remove {
                cmd.env_remove(key);
            }
            cmd.envs(spec.env_set.iter().map(|(key, value)| (key, value)));
        }
        None
    };
    let report = session.as_ref().map(|session| Arc::clone(&session.report));
    new_session_on_exec(&mut cmd, session, env, ignore_sigchld);
    // `cmd`, with its duplicates of the slave or the pipe, is dropped on return.
    Ok(spawn_retrying(&mut cmd, report.as_deref()))
}

/// A duplicate of `fd` for one of the command's stdio descriptors (close-on-exec, above 2).
fn dup_stdio(fd: BorrowedFd<'_>) -> Result<OwnedFd, SpawnError> {
    fd.try_clone_to_owned()
        .map_err(|err| SpawnError::Setup(format!("could not set up the command's stdio: {err}")))
}

/// Replaces this process with `spec.argv` (transparent mode, and a run tj could not set
/// up): same pid, tj's stdio, environment and working directory. Returns only on failure,
/// with the error worded as [`spawn`] words it. A file with no `#!` runs under `/bin/sh`,
/// as `env(1)` runs it (musl's `execvp` does not fall back to the shell).
pub(super) fn exec_in_place(spec: &Spec) -> SpawnError {
    let Some((program, args)) = spec.argv.split_first() else {
        return SpawnError::Other("no command given".to_owned());
    };
    let mut err = in_place(Command::new(program).args(args)).exec();
    if err.raw_os_error() == Some(libc::ENOEXEC)
        && let Some(script) = shell_script(program, spec)
    {
        err = in_place(Command::new("/bin/sh").arg(script).args(args)).exec();
    }
    match classify(&err, spec) {
        // Only the exec itself could fail here (there is no fork, no pipe): whatever its
        // error, the command exists but could not be run, 126 as env(1) and the shells
        // give it. A working directory that cannot be entered stays tj's own (125).
        SpawnError::Setup(msg) => SpawnError::NotExecutable(msg),
        SpawnError::Other(msg) if check_dir(&spec.cwd).is_ok() => SpawnError::NotExecutable(msg),
        other => other,
    }
}

/// `cmd`, to be exec'd in tj's place with SIGPIPE as tj was started with it (std's exec
/// puts it back to its default first), and stdin, stdout and stderr closed if they were
/// closed when tj started ([`crate::stdio`]; Rust's runtime opened /dev/null there).
#[allow(unsafe_code)]
fn in_place(cmd: &mut Command) -> &mut Command {
    // SAFETY: the hook runs just before the exec, in tj's own process: system calls only.
    unsafe {
        cmd.pre_exec(|| {
            // tj never touched SIGCHLD here (no relay ran): only SIGPIPE is given back.
            ignore_as_at_start(false);
            let closed = crate::stdio::closed_at_start();
            for fd in (0..3).filter(|fd| closed & (1 << fd) != 0) {
                libc::close(fd);
            }
            Ok(())
        })
    }
}

/// Ignores again, in the command's process just before its exec (which keeps an ignored
/// signal ignored), the signals tj was started with ignored and has since changed for
/// itself: SIGCHLD if `sigchld` (tj acts on it during a relay), SIGPIPE if it was ignored
/// before Rust's runtime ignored it ([`super::signals::sigpipe_was_ignored`]).
/// Async-signal-safe: an atomic load and system calls that install no handler and whose
/// errno nobody reads.
#[allow(unsafe_code)]
fn ignore_as_at_start(sigchld: bool) {
    let ignored =
        [(libc::SIGCHLD, sigchld), (libc::SIGPIPE, super::signals::sigpipe_was_ignored())];
    for (sig, _) in ignored.into_iter().filter(|&(_, was)| was) {
        // SAFETY: sets a disposition of our own process, installing no handler.
        unsafe {
            libc::signal(sig, libc::SIG_IGN);
        }
    }
}

/// The script to give `/bin/sh` when the kernel would not execute `program` (ENOEXEC): the
/// name as typed when it has a slash, else the file found on PATH. Whatever the file holds,
/// as glibc's `execvp` (and so `env(1)`, and tj built with glibc) does; musl's `execvp` does
/// not, and tj linked with musl would otherwise fail where the glibc build runs the script.
fn shell_script(program: &OsStr, spec: &Spec) -> Option<OsString> {
    let file = locate(program, &spec.cwd, search_path(spec).as_deref())?;
    Some(if has_slash(program) { program.to_owned() } else { file.into_os_string() })
}

/// Spawns, retrying briefly while the kernel reports the executable busy (ETXTBSY), and
/// reads the command's pid from `report` when a session leader was asked for.
///
/// A program that was just written (a build's output, a test's stub) can still be open for
/// writing in a process some other thread forked and has not yet exec'd; exec'ing it then
/// fails for a moment. The command is not at fault, so tj waits it out (at most ~1 s)
/// instead of reporting it as not executable.
fn spawn_retrying(cmd: &mut Command, report: Option<&AtomicI32>) -> io::Result<Spawned> {
    let mut attempts = 0;
    loop {
        // A pipe per attempt: the session leader of a failed attempt wrote its own pid.
        let pipe = report.map(|_| io::pipe()).transpose()?;
        if let (Some(report), Some((_, writer))) = (report, &pipe) {
            report.store(writer.as_raw_fd(), Ordering::SeqCst);
        }
        let spawned = {
            let _no_openpty = super::pty::SPAWN.read().unwrap_or_else(PoisonError::into_inner);
            cmd.spawn()
        };
        match spawned {
            Err(err) if err.kind() == io::ErrorKind::ExecutableFileBusy && attempts < 100 => {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(err) => return Err(err),
            Ok(child) => {
                let own = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
                let job = match pipe {
                    Some((mut reader, writer)) => {
                        drop(writer);
                        // Written before the leader waits, or by the command itself before
                        // its exec; EOF (nothing written) cannot happen, but would mean the
                        // command leads the session itself.
                        let mut pid = [0u8; 4];
                        match reader.read_exact(&mut pid) {
                            Ok(()) => Pid::from_raw(i32::from_ne_bytes(pid)),
                            Err(_) => own,
                        }
                    }
                    None => own,
                };
                return Ok(Spawned { child: Child::Std(child), job });
            }
        }
    }
}

/// What the session leader of a PTY run needs: where to report the command's pid (the
/// descriptor number is stored at each attempt, see [`spawn_retrying`]), and the command's
/// exec, prepared before any fork.
struct Session {
    report: Arc<AtomicI32>,
    plan: ExecPlan,
}

/// The command's environment, made in tj before the fork: tj's environment as its parent
/// gave it (`environ`: every entry in its order, byte for byte, whatever it holds), less the
/// `KEY=` entries that the spec removes or sets, then those it sets. std's `vars_os` leaves
/// out an entry with no `=` after its first byte, which the command would then not get
/// where without tj it does.
struct CommandEnv {
    /// Null-terminated pointers into `entries`.
    envp: Vec<*const c_char>,
    /// What `envp` points into: heap buffers that stay where they are when this moves.
    entries: Vec<CString>,
}

// SAFETY: the raw pointers point into `entries`, which this owns and nobody mutates.
#[allow(unsafe_code)]
unsafe impl Send for CommandEnv {}
// SAFETY: as for `Send`: nothing is mutated after `new`.
#[allow(unsafe_code)]
unsafe impl Sync for CommandEnv {}

impl CommandEnv {
    /// `None` if an entry the spec sets holds a NUL byte.
    fn new(spec: &Spec) -> Option<CommandEnv> {
        let mut entries = environ();
        entries.retain(|entry| !spec.env_remove.iter().any(|key| names(entry, key)));
        for (key, value) in &spec.env_set {
            entries.retain(|entry| !names(entry, key));
            entries.push(variable(key, value)?);
        }
        let envp =
            entries.iter().map(|e| e.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
        Some(CommandEnv { envp, entries })
    }

    /// The value of the first `key=` entry.
    fn get(&self, key: &str) -> Option<&[u8]> {
        let key = OsStr::new(key);
        self.entries.iter().find(|entry| names(entry, key)).map(|e| &e.as_bytes()[key.len() + 1..])
    }

    /// Makes this the environment of the process, for an exec that takes `environ`: only in a
    /// forked child about to exec, whose `environ` nobody else reads.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[allow(unsafe_code)]
    fn install_in_child(&self) {
        unsafe extern "C" {
            static mut environ: *const *const c_char;
        }
        // SAFETY: a store into this process's `environ`, in a single-threaded child between
        // fork and exec; `envp` lives (in this copy of the memory) until the exec.
        unsafe {
            environ = self.envp.as_ptr();
        }
    }
}

/// The entry `key=value`; `None` if either holds a NUL byte.
fn variable(key: &OsStr, value: &OsStr) -> Option<CString> {
    let mut entry = key.as_bytes().to_vec();
    entry.push(b'=');
    entry.extend_from_slice(value.as_bytes());
    CString::new(entry).ok()
}

/// Whether `entry` is a variable named `key` (`key=…`): an entry without `=` names none.
fn names(entry: &CString, key: &OsStr) -> bool {
    entry.as_bytes().strip_prefix(key.as_bytes()).is_some_and(|rest| rest.first() == Some(&b'='))
}

/// tj's environment as its parent gave it.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(unsafe_code)]
fn environ() -> Vec<CString> {
    unsafe extern "C" {
        static environ: *const *const c_char;
    }
    let mut entries = Vec::new();
    // SAFETY: `environ` is a null-terminated array of C strings, which only `setenv` and the
    // like change. std's `set_var` and `remove_var` require of their callers that no other
    // thread reads or writes the environment meanwhile, by any means; tj calls neither.
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            entries.push(CStr::from_ptr(*entry).to_owned());
            entry = entry.add(1);
        }
    }
    entries
}

/// tj's environment, as std reads it (elsewhere `environ` is not a symbol to link against).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn environ() -> Vec<CString> {
    std::env::vars_os().filter_map(|(key, value)| variable(&key, &value)).collect()
}

/// The command's exec, prepared in tj before the fork: between fork and exec nothing may
/// allocate. It is `execve` with the command's environment, tried on each path `execvp`
/// would try, in its order, with its handling of errors: the PATH searched is the
/// command's own. A file without `#!` fails with ENOEXEC, which [`spawn`] answers by
/// running it with `/bin/sh`, as glibc's `execvp` would (musl's does not).
///
/// Not `execvp` with `environ` swapped for the call, as std does it: the session leader runs
/// in tj's memory (`start_leader`), where `environ` is every thread's, and another thread
/// spawning a process meanwhile would hand it the command's environment.
struct ExecPlan {
    /// Null-terminated; the program as given, then its arguments.
    argv: Vec<*const c_char>,
    /// The command's environment.
    env: CommandEnv,
    /// The files to exec, in order: the program itself when it has a slash, else each entry
    /// of the command's PATH (`/bin:/usr/bin` when it has none) joined with it, an empty
    /// entry giving the name alone (the working directory's file).
    paths: Vec<CString>,
    /// `/bin/sh`, a slot for the file that gave ENOEXEC, then the arguments after the
    /// program's name, null-terminated: what a file without `#!` is run with, as glibc's
    /// `execvp` runs it. The slot is the one entry written, just before that exec.
    shell_argv: Vec<AtomicPtr<c_char>>,
    /// What the pointers point into: heap buffers that stay where they are when the plan
    /// moves, and are never changed.
    _strings: Vec<CString>,
}

// SAFETY: the raw pointers point into `_strings`, which the plan owns and nobody mutates;
// sharing or sending the plan shares or sends immutable C strings.
#[allow(unsafe_code)]
unsafe impl Send for ExecPlan {}
// SAFETY: as for `Send`: the strings are never mutated after the plan is made; the one
// slot that is (`shell_argv`) is atomic.
#[allow(unsafe_code)]
unsafe impl Sync for ExecPlan {}

impl ExecPlan {
    /// The plan for `program` with `args` in the environment `spec` makes; `None` if a string
    /// holds a NUL byte (std refuses those with the same error: invalid input).
    fn new(program: &OsStr, args: &[&OsStr], spec: &Spec) -> Option<ExecPlan> {
        let env = CommandEnv::new(spec)?;
        let paths = Self::paths(program, env.get("PATH"))?;
        let mut strings = Vec::with_capacity(2 + args.len());
        for arg in std::iter::once(program).chain(args.iter().copied()) {
            strings.push(CString::new(arg.as_bytes()).ok()?);
        }
        strings.push(CString::from(c"/bin/sh"));
        let argv: Vec<*const c_char> = strings[..strings.len() - 1]
            .iter()
            .map(|s| s.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        let shell = strings.last().map_or(std::ptr::null(), |sh| sh.as_ptr());
        let shell_argv = [shell, std::ptr::null()]
            .into_iter()
            .chain(argv.iter().skip(1).copied())
            .map(|p| AtomicPtr::new(p.cast_mut()))
            .collect();
        Some(ExecPlan { argv, env, paths, shell_argv, _strings: strings })
    }

    /// The files `execvp` would try for `program` with `path` (the command's `PATH=` entry).
    fn paths(program: &OsStr, path: Option<&[u8]>) -> Option<Vec<CString>> {
        let name = program.as_bytes();
        if name.is_empty() {
            // execvp: ENOENT, nothing tried.
            return Some(Vec::new());
        }
        if has_slash(program) {
            return Some(vec![CString::new(name).ok()?]);
        }
        let path = path.unwrap_or(b"/bin:/usr/bin");
        // An entry too long to make a path of is skipped, as execvp skips it.
        let fits = |dir: &&[u8]| dir.len() + 1 + name.len() < libc::PATH_MAX as usize;
        path.split(|&b| b == b':')
            .filter(fits)
            .map(|dir| {
                let mut file = dir.to_vec();
                if !dir.is_empty() {
                    file.push(b'/');
                }
                file.extend_from_slice(name);
                CString::new(file).ok()
            })
            .collect()
    }

    /// Execs the command in this process, with SIGCHLD ignored first if `ignore_sigchld`,
    /// and SIGPIPE if tj was started with it ignored.
    /// Returns only if the exec failed, with the error `execvp` would give: the first that
    /// is not "not there" (ENOENT, ENOTDIR, ESTALE, ENODEV, ETIMEDOUT) or "not allowed"
    /// (EACCES), else EACCES if any path gave it, else the last error. A file that is not
    /// an executable format (ENOEXEC) is run by `/bin/sh` in its place, as glibc's execvp
    /// runs it; that exec's error then counts. Async-signal-safe: system calls only, and
    /// made bare where the leader shares tj's errno ([`raw_syscall3`]).
    #[allow(unsafe_code)]
    fn exec(&self, ignore_sigchld: bool) -> io::Error {
        ignore_as_at_start(ignore_sigchld);
        let (mut denied, mut last) = (false, libc::ENOENT);
        for path in &self.paths {
            last = self.execve(path.as_ptr(), self.argv.as_ptr());
            if last == libc::ENOEXEC {
                // Written once per spawn, by the one process that execs: see `shell_argv`.
                if let Some(slot) = self.shell_argv.get(1) {
                    slot.store(path.as_ptr().cast_mut(), Ordering::SeqCst);
                }
                let argv = self.shell_argv.as_ptr().cast::<*const c_char>();
                last = self.execve(self.shell_argv[0].load(Ordering::SeqCst), argv);
            }
            match last {
                libc::EACCES => denied = true,
                libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
                _ => return io::Error::from_raw_os_error(last),
            }
        }
        io::Error::from_raw_os_error(if denied { libc::EACCES } else { last })
    }

    /// One `execve` of `path` with `argv` and the plan's environment; its errno (it returns
    /// only on failure).
    #[allow(unsafe_code)]
    fn execve(&self, path: *const c_char, argv: *const *const c_char) -> c_int {
        // SAFETY: a NUL-terminated path, and null-terminated arrays of NUL-terminated
        // strings the plan owns, which outlive the call. `AtomicPtr<c_char>` has the layout
        // of `*mut c_char`, so `shell_argv` is such an array too.
        unsafe {
            #[cfg(shared_leader)]
            {
                let envp = self.env.envp.as_ptr() as usize;
                raw_errno(raw_syscall3(libc::SYS_execve, path as usize, argv as usize, envp))
            }
            #[cfg(not(shared_leader))]
            {
                libc::execve(path, argv, self.env.envp.as_ptr());
                Errno::last_raw()
            }
        }
    }
}

/// The highest descriptor the fallback of [`close_range`] closes, computed before any fork
/// or clone: sysconf is not async-signal-safe.
#[allow(unsafe_code)]
fn max_fd() -> c_int {
    // SAFETY: sysconf reads a system limit and touches no memory of ours.
    let open_max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) };
    c_int::try_from(open_max).unwrap_or(c_int::MAX).clamp(256, 1 << 16)
}

/// Makes the child a session leader. With a `session` (a PTY), gives the session its stdout
/// (the PTY slave) as controlling terminal, then starts the command in the foreground
/// process group from the session's plan, and stays behind to wait for it
/// ([`lead_session`]); the command's pid is written to the descriptor the session's report
/// holds. Not fd 0 for the terminal: the child's stdin is not the PTY when tj's is not a
/// terminal. With `ignore_sigchld` (tj was started with SIGCHLD ignored), the command gets
/// SIGCHLD ignored, as without tj. Without a session, `env` becomes the command's
/// environment (see [`CommandEnv`]).
#[allow(unsafe_code)]
fn new_session_on_exec(
    cmd: &mut Command,
    session: Option<Session>,
    env: Option<CommandEnv>,
    ignore_sigchld: bool,
) {
    let max_fd = max_fd();
    let hook = move || -> io::Result<()> {
        nix::unistd::setsid()?;
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if let Some(env) = &env {
            env.install_in_child();
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let _: &Option<CommandEnv> = &env;
        if let Some(session) = &session {
            // SAFETY: TIOCSCTTY takes an integer argument (0: do not steal the terminal
            // from another session) and touches no memory of ours.
            if unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCSCTTY, 0) } == -1 {
                return Err(io::Error::last_os_error());
            }
            // Returns only if the command could not be exec'd: std reports that error.
            return Err(split_session(session, ignore_sigchld, max_fd));
        }
        // After std's spawn has put SIGPIPE back to its default.
        ignore_as_at_start(ignore_sigchld);
        Ok(())
    };
    // SAFETY: the hook runs between fork and exec, where only async-signal-safe calls are
    // allowed: it makes system calls only (setsid, ioctl, and those of `split_session`,
    // whose plan was made before the fork) and stores a pointer made before the fork into
    // `environ`; it allocates nothing and takes no lock; its errors are plain errno values.
    unsafe {
        cmd.pre_exec(hook);
    }
}

/// In the child, between fork and exec, once it leads the session and has the terminal:
/// starts the command in the foreground process group and turns this process into its
/// session leader ([`lead_session`], which never returns). Returns only when the command
/// could not be exec'd, with the error, which std then reports to tj as the spawn's.
///
/// The command is started as `vfork` would ([`start_sharing`]): it borrows this process's
/// memory until its exec, so nothing of tj's is copied for a process that is about to be
/// replaced. Where that cannot be done, it is forked; where it cannot be forked, this same
/// process runs the command itself (fail open: only the background children lose, as
/// before).
///
/// Async-signal-safe system calls only: see `new_session_on_exec`.
#[allow(unsafe_code)]
fn split_session(session: &Session, ignore_sigchld: bool, max_fd: c_int) -> io::Error {
    let report = session.report.load(Ordering::SeqCst);
    // Named before the command starts, which may look at its parent at once (`ps`, a test).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes, a literal here.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, c"tj-session".as_ptr());
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    match start_sharing(&session.plan, ignore_sigchld) {
        Some(Ok(job)) => lead_session(job, report, max_fd),
        Some(Err(err)) => return err,
        None => {}
    }
    // SAFETY: this process is the single-threaded child of a fork, which may fork again; the
    // new child also only makes async-signal-safe calls until its exec.
    match unsafe { libc::fork() } {
        -1 => {
            // SAFETY: getpid has no preconditions.
            write_pid(report, unsafe { libc::getpid() });
            session.plan.exec(ignore_sigchld)
        }
        0 => {
            enter_foreground();
            session.plan.exec(ignore_sigchld)
        }
        job => lead_session(job, report, max_fd),
    }
}

/// What the command started by [`start_sharing`] shares with its session leader.
struct Sharing<'a> {
    plan: &'a ExecPlan,
    ignore_sigchld: bool,
    /// The exec's errno if it failed, else 0.
    errno: AtomicI32,
}

/// Starts the command with `clone(CLONE_VM | CLONE_VFORK)`, on a stack of its own: it runs
/// in this process's memory, this process waiting, until its exec. `Some(Ok(pid))` once it
/// has exec'd; `Some(Err)` with the exec's error if it could not (it has been reaped);
/// `None` if no such process could be made.
///
/// A fork would copy the page tables of the whole of tj for a process that replaces them
/// at once, and mark every page of tj's copy-on-write meanwhile (issue 13: the spawn chain
/// is the largest fixed cost of a run).
#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(unsafe_code)]
fn start_sharing(plan: &ExecPlan, ignore_sigchld: bool) -> Option<io::Result<libc::pid_t>> {
    // Lazily committed: only the pages the exec path touches are ever backed. Large, because
    // glibc's `execvp` copies the arguments onto it to run a script without `#!`.
    const STACK: usize = 8 << 20;
    // Unmapped when dropped: once the command has exec'd or exited, nothing runs on it.
    let stack = Stack::map(STACK)?;
    let sharing = Sharing { plan, ignore_sigchld, errno: AtomicI32::new(0) };
    // SAFETY: the child runs `command_child` on the new stack (its top, stacks grow down;
    // mmap's alignment is a page), with a pointer to `sharing`, which outlives it: with
    // CLONE_VFORK this call returns only once the child has exec'd or exited. The child only
    // makes async-signal-safe calls and writes only `sharing.errno`.
    let pid = unsafe {
        libc::clone(
            command_child,
            stack.top(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&raw const sharing).cast_mut().cast(),
        )
    };
    if pid == -1 {
        return None;
    }
    let errno = sharing.errno.load(Ordering::SeqCst);
    if errno == 0 {
        return Some(Ok(pid));
    }
    let mut status: c_int = 0;
    // SAFETY: reaps our own child, which has exited; `status` is a local.
    while unsafe { libc::waitpid(pid, &mut status, 0) } == -1 && Errno::last() == Errno::EINTR {}
    Some(Err(io::Error::from_raw_os_error(errno)))
}

/// The command's side of [`start_sharing`]: enters the foreground and execs; if the exec
/// fails, leaves its errno in the shared [`Sharing`] and exits.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(unsafe_code)]
extern "C" fn command_child(sharing: *mut libc::c_void) -> c_int {
    // SAFETY: `start_sharing` passes a pointer to a `Sharing` that lives until this process
    // has exec'd or exited; it is only read, but for an atomic store.
    let sharing = unsafe { &*sharing.cast::<Sharing<'_>>() };
    enter_foreground();
    let err = sharing.plan.exec(sharing.ignore_sigchld);
    sharing.errno.store(err.raw_os_error().unwrap_or(libc::EINVAL), Ordering::SeqCst);
    // SAFETY: ends this process alone without running anything of tj's (no atexit, no
    // destructors): its memory is its session leader's.
    unsafe { libc::_exit(127) }
}

/// A session leader started by [`start_leader`]: its pid, and the stack it runs on, which
/// is tj's memory and is dropped (unmapped) only once the leader has been reaped.
#[cfg(shared_leader)]
pub(super) struct Leader {
    pid: libc::pid_t,
    stack: Option<Stack>,
    status: Option<ExitStatus>,
}

#[cfg(shared_leader)]
impl Leader {
    #[allow(unsafe_code)]
    fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let mut raw: c_int = 0;
        // SAFETY: reaps our own child; `raw` is a local.
        while unsafe { libc::waitpid(self.pid, &mut raw, 0) } == -1 {
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
        // The leader is gone: nothing runs on its stack any more.
        drop(self.stack.take());
        let status = std::os::unix::process::ExitStatusExt::from_raw(raw);
        self.status = Some(status);
        Ok(status)
    }
}

/// An anonymous mapping for a stack, lazily committed; unmapped when dropped, so its owner
/// drops it only once nothing runs on it (also in a leader in tj's memory, where it would
/// otherwise stay mapped).
#[cfg(any(target_os = "linux", target_os = "android"))]
struct Stack {
    base: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by whoever holds the `Stack`; moving that to
// another thread moves the right to unmap it.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(unsafe_code)]
unsafe impl Send for Stack {}

#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(unsafe_code)]
impl Stack {
    fn map(len: usize) -> Option<Stack> {
        // SAFETY: an anonymous private mapping of our own; no memory of ours is touched.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        Some(Stack { base, len })
    }

    /// The stack with its lowest page made a guard: an overflow faults instead of writing
    /// into whatever is mapped below.
    #[cfg(shared_leader)]
    fn guarded(self) -> Option<Stack> {
        // SAFETY: the lowest page of our own mapping, which nothing uses yet.
        (unsafe { libc::mprotect(self.base, 4096, libc::PROT_NONE) } == 0).then_some(self)
    }

    /// The top of the stack (stacks grow down; mmap's alignment is a page).
    fn top(&self) -> *mut libc::c_void {
        // SAFETY: one past the end of the mapping, which is `len` bytes long.
        unsafe { self.base.cast::<u8>().add(self.len).cast() }
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(unsafe_code)]
impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: unmaps the mapping `map` made; its owner dropped it, so nothing runs on it.
        unsafe {
            libc::munmap(self.base, self.len);
        }
    }
}

/// Starts the command on a PTY under a session leader that shares tj's memory
/// ([`start_leader`]), retrying while the executable is busy as [`spawn_retrying`] does.
/// `None` where no such leader can be made: std's spawn then forks one.
#[cfg(shared_leader)]
fn spawn_leader(
    plan: &ExecPlan,
    stdio: [BorrowedFd<'_>; 3],
    cwd: &Path,
    ignore_sigchld: bool,
) -> Result<Option<io::Result<Spawned>>, SpawnError> {
    // Duplicates, each above 2 (std duplicates with F_DUPFD_CLOEXEC from 3).
    let dups = [dup_stdio(stdio[0])?, dup_stdio(stdio[1])?, dup_stdio(stdio[2])?];
    let Ok(cwd) = CString::new(cwd.as_os_str().as_bytes()) else {
        return Ok(Some(Err(io::Error::from(io::ErrorKind::InvalidInput))));
    };
    let mut start = LeaderStart {
        plan,
        stdio: dups.each_ref().map(AsRawFd::as_raw_fd),
        cwd: &cwd,
        ignore_sigchld,
        report: -1,
        max_fd: max_fd(),
    };
    let mut attempts = 0;
    loop {
        match start_leader(&mut start) {
            None => return Ok(None),
            Some(Err(err)) if err.kind() == io::ErrorKind::ExecutableFileBusy && attempts < 100 => {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Some(Err(err)) => return Ok(Some(Err(err))),
            Some(Ok((leader, job))) => {
                return Ok(Some(Ok(Spawned { child: Child::Leader(leader), job })));
            }
        }
    }
}

/// What the session leader started by [`start_leader`] reads, all made before the clone.
#[cfg(shared_leader)]
struct LeaderStart<'a> {
    plan: &'a ExecPlan,
    /// The command's stdin, stdout and stderr, to become its descriptors 0, 1 and 2 (each
    /// above 2, so that no `dup2` overwrites another's source).
    stdio: [c_int; 3],
    cwd: &'a CStr,
    ignore_sigchld: bool,
    /// The write end of the pipe on which the leader reports the command's pid, or minus
    /// the errno of what failed.
    report: c_int,
    max_fd: c_int,
}

/// Starts the session leader of a PTY run with `clone(CLONE_VM)`: a process of its own (its
/// own pid, session, descriptors and signal dispositions) that runs in tj's memory, on a
/// stack of its own, rather than in a copy of it. A fork would copy tj's page tables, mark
/// every page of tj's copy-on-write for as long as the command runs (each first write of
/// tj's to one then faults), and tear the copy down at the leader's exit, which tj waits
/// for: all for a process that only starts the command and waits for it (issue 13).
///
/// Returns `None` where no such process could be made, or it could not start the command
/// (then std's spawn forks a leader), else the leader and the command's pid once the
/// command has been exec'd, or the error that kept it from running (the leader has been
/// reaped then).
///
/// Sharing tj's memory, the leader may touch nothing tj's threads use: it runs only system
/// calls on values read from `start` before it reports, and [`lead_session`] after; the
/// command it starts execs with its environment given, never swapped into `environ`
/// ([`ExecPlan`]). One thing is shared besides: errno, since the leader (and the command
/// until its exec) runs with the thread pointer of the thread that cloned it, and so with
/// its errno. That thread waits in `read` meanwhile and looks at no errno a call of the
/// leader's could leave; once the leader has reported, it makes no call that can fail but
/// the terminal's `TIOCSPGRP`, which it makes by hand ([`raw_tcsetpgrp`]).
#[cfg(shared_leader)]
#[allow(unsafe_code)]
fn start_leader(start: &mut LeaderStart<'_>) -> Option<io::Result<(Leader, Pid)>> {
    let stack = Stack::map(LEADER_STACK)?.guarded()?;
    let (mut reader, writer) = io::pipe().ok()?;
    start.report = writer.as_raw_fd();
    // Every signal blocked from before the clone until the leader has put its handlers back
    // to their defaults: tj's handlers must not run in the leader.
    // SAFETY: sigset_t values are plain C structs, filled by sigfillset; pthread_sigmask
    // changes this thread's mask only and is put back below.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = {
            let _no_openpty = super::pty::SPAWN.read().unwrap_or_else(PoisonError::into_inner);
            // SAFETY: the leader runs `leader_main` on its own stack with a pointer to
            // `start`, which outlives what the leader reads of it: it reads all of it before
            // it reports, and this function returns only once the report came or the pipe
            // closed.
            libc::clone(
                leader_main,
                stack.top(),
                libc::CLONE_VM | libc::SIGCHLD,
                std::ptr::from_mut(start).cast(),
            )
        };
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        pid
    };
    drop(writer);
    if pid == -1 {
        return None;
    }
    let mut leader = Leader { pid, stack: Some(stack), status: None };
    let mut word = [0u8; 4];
    let reported = match reader.read_exact(&mut word) {
        Ok(()) => i32::from_ne_bytes(word),
        Err(_) => -libc::ECHILD,
    };
    if reported > 0 {
        return Some(Ok((leader, Pid::from_raw(reported))));
    }
    let _ = leader.wait();
    // 0: the leader could not start the command in shared memory; std's fork can try.
    (reported < 0).then(|| Err(io::Error::from_raw_os_error(-reported)))
}

/// The leader's stack: lazily committed, so only the few pages it uses are ever backed.
#[cfg(shared_leader)]
const LEADER_STACK: usize = 1 << 20;

/// The session leader's side of [`start_leader`]: sets up the command's descriptors,
/// directory, session and terminal, starts it ([`start_sharing`]), reports its pid, and
/// leads the session ([`lead_session`]). On a failure, reports minus its errno and exits.
#[cfg(shared_leader)]
#[allow(unsafe_code)]
extern "C" fn leader_main(start: *mut libc::c_void) -> c_int {
    // SAFETY: `start_leader` passes a pointer to a `LeaderStart` that lives until the report
    // has been read; everything is read from it before then.
    let start = unsafe { &*start.cast::<LeaderStart<'_>>() };
    let (report, max_fd) = (start.report, start.max_fd);
    let fail = |err: c_int| -> ! {
        write_pid(report, -err.max(1));
        // SAFETY: ends this process alone, running nothing of tj's.
        unsafe { libc::_exit(127) }
    };
    // SAFETY: system calls on this process, its descriptors and its terminal, with values
    // made before the clone or local to this frame.
    unsafe {
        #[cfg(target_os = "linux")]
        libc::prctl(libc::PR_SET_NAME, c"tj-session".as_ptr());
        // tj's handlers act by default here; what tj ignores stays ignored, as through a
        // fork and an exec; SIGPIPE, which Rust's runtime ignored for tj, is put back to its
        // default (the command's exec ignores it again if tj was started so).
        // Not SIGABRT: tj sets no handler for it, and musl takes a lock (tj's) to look.
        let mut action: libc::sigaction = std::mem::zeroed();
        for sig in (1..32).filter(|&sig| sig != libc::SIGABRT) {
            if libc::sigaction(sig, std::ptr::null(), &mut action) == 0
                && action.sa_sigaction != libc::SIG_DFL
                && (action.sa_sigaction != libc::SIG_IGN || sig == libc::SIGPIPE)
            {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        // Bare system calls from here to the report: an errno read after libc's could be
        // one a handler on tj's thread put back (see `raw_syscall3`).
        for (fd, to) in start.stdio.iter().zip(0usize..) {
            let fd = fd.unsigned_abs() as usize;
            match raw_errno(raw_syscall3(libc::SYS_dup3, fd, to, 0)) {
                0 => {}
                err => fail(err),
            }
        }
        let cwd = start.cwd.as_ptr() as usize;
        let steps = [
            (libc::SYS_chdir, cwd, 0),
            (libc::SYS_setsid, 0, 0),
            (libc::SYS_ioctl, 1, libc::TIOCSCTTY as usize),
        ];
        for (nr, a, b) in steps {
            match raw_errno(raw_syscall3(nr, a, b, 0)) {
                0 => {}
                err => fail(err),
            }
        }
        // Out of tj's process group now, so no signal sent to it (a Ctrl-Z, a Ctrl-C) reaches
        // this process any more; one that came meanwhile is discarded, as in a fork's child
        // tj's handler would have taken it (tj's own handler has it too).
        drain_pending_signals();
        let none: libc::sigset_t = {
            let mut set = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            set
        };
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        let job = match start_sharing(start.plan, start.ignore_sigchld) {
            Some(Ok(job)) => job,
            Some(Err(err)) => fail(err.raw_os_error().unwrap_or(libc::EINVAL)),
            // No stack or no process for the command (memory, a process limit): 0 tells
            // tj to start it as before, through a forked leader, which has fallbacks of its
            // own (a fork; the command run in the leader's place).
            None => {
                write_pid(report, 0);
                libc::_exit(127)
            }
        };
        lead_session(job, report, max_fd)
    }
}

/// Makes the session leader die of `sig`, as `exit::die_of` makes tj, with system calls
/// that touch nothing of tj's. Not `raise`, which signals the thread the thread pointer
/// names (tj's); and not `PR_SET_DUMPABLE`, a flag of the memory, which is tj's: the leader
/// dumps no core because [`lead_session`] set its core limit to 0 once the command ran.
/// Returns only for a signal that does not end a process.
#[cfg(shared_leader)]
#[allow(unsafe_code)]
fn die_like(sig: c_int) {
    if !crate::exit::is_fatal(sig) {
        return;
    }
    // Through the kernel's own calls: libc refuses the signals it reserves (glibc installs
    // a handler for one of them in a process with threads, which the leader inherits).
    crate::exit::default_unblocked(sig);
    // SAFETY: sends a signal to this process; no memory is passed.
    unsafe {
        libc::kill(libc::getpid(), sig);
    }
}

/// Takes every pending signal of this process off the queue, unhandled.
#[cfg(shared_leader)]
#[allow(unsafe_code)]
fn drain_pending_signals() {
    // SAFETY: sigset_t values are plain C structs, filled by sigpending; sigtimedwait with a
    // zero timeout returns at once, taking one pending signal of the set or none.
    unsafe {
        let mut pending: libc::sigset_t = std::mem::zeroed();
        let zero = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // An empty set, or nothing left of it: sigtimedwait fails (EAGAIN) and the loop ends.
        while libc::sigpending(&mut pending) == 0
            && libc::sigtimedwait(&pending, std::ptr::null_mut(), &zero) > 0
        {}
    }
}

/// A system call with up to three arguments made without libc: its result, or minus the
/// errno, is returned, and libc's errno is never written. The session leader started by
/// [`start_leader`], and the command until its exec, run with the thread pointer of one of
/// tj's threads, whose errno a signal handler on that thread may save and put back at any
/// moment: an errno read after a libc call there could be a stale one.
#[cfg(shared_leader)]
#[allow(unsafe_code)]
unsafe fn raw_syscall3(nr: libc::c_long, a: usize, b: usize, c: usize) -> isize {
    let ret: isize;
    // SAFETY: the caller passes arguments valid for system call `nr`; the registers the
    // kernel clobbers are declared.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        std::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a,
            in("rsi") b,
            in("rdx") c,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
        #[cfg(target_arch = "aarch64")]
        std::arch::asm!(
            "svc 0",
            in("x8") nr,
            inlateout("x0") a as isize => ret,
            in("x1") b,
            in("x2") c,
            options(nostack),
        );
    }
    ret
}

/// The errno of a failed [`raw_syscall3`] (its negated result), 0 if it did not fail.
#[cfg(shared_leader)]
fn raw_errno(ret: isize) -> c_int {
    if ret < 0 { c_int::try_from(-ret).unwrap_or(libc::EINVAL) } else { 0 }
}

/// `tcsetpgrp(STDOUT_FILENO, pgrp)` as a bare system call ([`raw_syscall3`]).
#[cfg(shared_leader)]
#[allow(unsafe_code)]
fn raw_tcsetpgrp(pgrp: libc::pid_t) {
    let arg = std::ptr::from_ref(&pgrp) as usize;
    // SAFETY: ioctl(1, TIOCSPGRP, &pgrp) reads one pid_t through the pointer, a local that
    // outlives the call.
    unsafe {
        raw_syscall3(libc::SYS_ioctl, 1, libc::TIOCSPGRP as usize, arg);
    }
}

/// Writes `pid` to `fd` whole, or not at all (the reader then falls back).
#[allow(unsafe_code)]
fn write_pid(fd: c_int, pid: libc::pid_t) {
    let bytes = pid.to_ne_bytes();
    // SAFETY: writes the 4 bytes of a local array; 4 bytes into a pipe are written at once.
    unsafe {
        libc::write(fd, bytes.as_ptr().cast(), bytes.len());
    }
}

/// In the command, before its exec: a process group of its own, made the terminal's
/// foreground group, as a shell does for a job. SIGTTOU is blocked meanwhile: changing the
/// foreground group from a background group would otherwise stop the process.
#[allow(unsafe_code)]
fn enter_foreground() {
    // SAFETY: sigset_t is a plain C struct, initialised by sigemptyset; every call below is a
    // system call on our own process or on fd 1 (the PTY slave), touching local values only.
    unsafe {
        let mut ttou: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut ttou);
        libc::sigaddset(&mut ttou, libc::SIGTTOU);
        let blocked = libc::sigprocmask(libc::SIG_BLOCK, &ttou, &mut old) == 0;
        libc::setpgid(0, 0);
        libc::tcsetpgrp(libc::STDOUT_FILENO, libc::getpid());
        if blocked {
            libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
    }
}

/// The session leader of a command on a PTY: reports the command's pid, waits for the
/// command, takes the terminal back, then ends exactly as the command did (same exit code,
/// or death by the same signal). Never returns.
///
/// Why it exists: when a session leader that has a controlling terminal exits, the kernel
/// sends SIGHUP to the terminal's foreground process group. If the command led the session,
/// that group would be its own, with every child it started in the background (`cmd &`,
/// `nohup cmd &` before nohup ignores the signal): all would die with it. Without tj, the
/// user's shell leads the session and takes the terminal back when the command ends, so
/// they live on. This process plays that shell: it takes the terminal back (the command's
/// group becomes a background group), and its own exit then hangs up only its own group.
///
/// It holds no descriptor but the slave on fd 1, needed to take the terminal back: not
/// std's exec-error pipe (tj's spawn would wait for it), not tj's stdin or stderr. Its
/// signals act by default (SIGHUP when tj's end of the PTY closes ends it, and its exit then
/// hangs up the command, as a closing terminal would), except SIGTTOU, which it ignores to
/// take the terminal back from the background. A command stopped by a job-control signal
/// (SIGTSTP, SIGTTIN, SIGTTOU) is continued at once: nobody outside could resume it, and in
/// the session the command led, the kernel discarded those signals (tj's own Ctrl-Z uses
/// SIGSTOP, which is left alone).
///
/// Async-signal-safe system calls only: see `new_session_on_exec`.
#[allow(unsafe_code)]
fn lead_session(job: libc::pid_t, report: c_int, max_fd: c_int) -> ! {
    // SAFETY: every call is a system call on our own process, its descriptors, or its
    // child; the buffers passed are local values that outlive the calls.
    unsafe {
        // No core dump of the leader: it would hold tj's memory, which the leader started
        // by `start_leader` shares. Its own limit, set once the command (which keeps the
        // limit it was given) has been exec'd; prlimit64 rather than musl's setrlimit,
        // which can signal every thread libc knows of.
        let no_core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        #[cfg(any(target_os = "linux", target_os = "android"))]
        libc::syscall(
            libc::SYS_prlimit64,
            0,
            libc::RLIMIT_CORE,
            &raw const no_core,
            std::ptr::null_mut::<libc::rlimit>(),
        );
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::close(libc::STDIN_FILENO);
        libc::close(libc::STDERR_FILENO);
        // Everything closed but the report first, so that no call after it can fail (see
        // `start_leader`); the report, once written, last.
        if report > 3 {
            close_range(3, report - 1, max_fd);
        }
        close_range(report.max(2) + 1, c_int::MAX, max_fd);
        write_pid(report, job);
        libc::close(report);
        for sig in [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGCHLD] {
            libc::signal(sig, libc::SIG_DFL);
        }
        libc::signal(libc::SIGTTOU, libc::SIG_IGN);
        let mut status: c_int = 0;
        loop {
            if libc::waitpid(job, &mut status, libc::WUNTRACED) == -1 {
                if Errno::last() == Errno::EINTR {
                    continue;
                }
                // Cannot happen (the command is our only child); the status is unknown.
                libc::_exit(125);
            }
            if libc::WIFSTOPPED(status) {
                if matches!(libc::WSTOPSIG(status), libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU) {
                    libc::kill(-job, libc::SIGCONT);
                }
                continue;
            }
            break;
        }
        #[cfg(shared_leader)]
        raw_tcsetpgrp(libc::getpgrp());
        #[cfg(not(shared_leader))]
        libc::tcsetpgrp(libc::STDOUT_FILENO, libc::getpgrp());
        if libc::WIFSIGNALED(status) {
            // Ends as the command did, as tj itself does (`exit::Status::end`).
            let sig = libc::WTERMSIG(status);
            #[cfg(shared_leader)]
            die_like(sig);
            #[cfg(not(shared_leader))]
            crate::exit::die_of(sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

/// Closes every descriptor from `first` to `last`: `close_range` where it exists, else one
/// by one up to `max_fd`.
#[allow(unsafe_code)]
fn close_range(first: c_int, last: c_int, max_fd: c_int) {
    // The system call rather than libc's wrapper, which musl lacks.
    #[cfg(target_os = "linux")]
    {
        let (from, to) = (first.unsigned_abs(), last.unsigned_abs());
        // SAFETY: close_range closes descriptors of our own and touches no memory.
        if unsafe { libc::syscall(libc::SYS_close_range, from, to, 0) } == 0 {
            return;
        }
    }
    for fd in first..=last.min(max_fd) {
        // SAFETY: closing a descriptor we may not have is harmless (EBADF).
        unsafe {
            libc::close(fd);
        }
    }
}

/// Turns a failed spawn into the error `env(1)` would report: 127 when the command (or the
/// interpreter named by its `#!`) does not exist, 126 when exec refused it otherwise, 125
/// for what is not exec's, such as a working directory that cannot be entered.
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
        // What else exec itself refuses (a name too long, a loop of symbolic links, a file
        // being written, an argument list too long): env(1) and the shells give 126 for
        // every exec error but ENOENT.
        Some(libc::E2BIG | libc::ENAMETOOLONG | libc::ELOOP | libc::ETXTBSY | libc::EISDIR) => {
            SpawnError::NotExecutable(format!("{cmd}: {}", describe(err)))
        }
        // Out of descriptors, processes or memory: tj's own pipes and fork ran out, and an
        // exec in tj's place needs neither.
        Some(libc::EMFILE | libc::ENFILE | libc::EAGAIN | libc::ENOMEM) => {
            SpawnError::Setup(format!("could not start {cmd}: {}", describe(err)))
        }
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
    fn the_files_tried_are_those_execvp_tries() {
        let paths = |program: &str, path: Option<&str>| -> Vec<String> {
            ExecPlan::paths(OsStr::new(program), path.map(str::as_bytes))
                .unwrap()
                .iter()
                .map(|p| p.to_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(paths("cargo", Some("/a:/b/c")), ["/a/cargo", "/b/c/cargo"]);
        // An empty entry is the working directory: the name alone.
        assert_eq!(paths("cargo", Some(":/a:")), ["cargo", "/a/cargo", "cargo"]);
        assert_eq!(paths("cargo", None), ["/bin/cargo", "/usr/bin/cargo"]);
        // A name with a slash is not searched for.
        assert_eq!(paths("./x", Some("/a")), ["./x"]);
        assert_eq!(paths("/bin/true", Some("/a")), ["/bin/true"]);
        // Nothing is tried for an empty name (ENOENT).
        assert!(paths("", Some("/a")).is_empty());
    }

    /// Runs `plan.exec` in a forked child; its exit status (the errno, when the exec failed).
    #[allow(unsafe_code)]
    fn exec_status(plan: &ExecPlan) -> c_int {
        // SAFETY: the child only execs or exits (system calls only); `status` is a local.
        unsafe {
            let pid = libc::fork();
            if pid == 0 {
                let err = plan.exec(false);
                libc::_exit(err.raw_os_error().unwrap_or(0));
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            libc::WEXITSTATUS(status)
        }
    }

    #[test]
    fn a_command_is_run_from_the_first_path_that_can_run_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("tj-exec-paths-{}", std::process::id()));
        let (denied, found) = (dir.join("denied"), dir.join("found"));
        for (sub, mode) in [(&denied, 0o644), (&found, 0o755)] {
            fs::create_dir_all(sub).unwrap();
            crate::fsx::replace(&sub.join("tool"), b"#!/bin/sh\n: >\"$0.ran\"\n").unwrap();
            fs::set_permissions(sub.join("tool"), fs::Permissions::from_mode(mode)).unwrap();
        }
        let plan = |path: String| {
            let mut spec = Spec::new(vec!["tool".into()], dir.clone());
            spec.env_set.push(("PATH".into(), path.into()));
            ExecPlan::new(OsStr::new("tool"), &[], &spec).unwrap()
        };
        // Past a directory without it and one where it may not be run, as execvp goes on.
        let all = plan(format!("/nonexistent:{}:{}", denied.display(), found.display()));
        assert_eq!(exec_status(&all), 0);
        assert!(found.join("tool.ran").exists() && !denied.join("tool.ran").exists());
        // Where it may only be found, not run: EACCES, as execvp reports it.
        assert_eq!(exec_status(&plan(format!("/nonexistent:{}", denied.display()))), libc::EACCES);
        assert_eq!(exec_status(&plan("/nonexistent".to_owned())), libc::ENOENT);
        // A file without `#!` is run by /bin/sh: the one that gave ENOEXEC, not the first
        // of its name on PATH (here one that may not be run).
        let script = dir.join("script");
        fs::create_dir_all(&script).unwrap();
        crate::fsx::replace(&script.join("tool"), b": >\"$0.ran\"\n").unwrap();
        fs::set_permissions(script.join("tool"), fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(exec_status(&plan(format!("{}:{}", denied.display(), script.display()))), 0);
        assert!(script.join("tool.ran").exists() && !denied.join("tool.ran").exists());
        fs::remove_dir_all(&dir).unwrap();
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
