//! A temporary environment and a runner for the `tj` binary.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// The tj binary under test: cargo's build of this tree, or the one `TJ_TEST_BIN` names (an
/// absolute path). CI runs the tests again against the binary install.sh ships (a static musl
/// release build with LTO), which a test build does not make: a difference of the link, such
/// as a symbol that resolves in one and not in the other, shows only there.
pub(crate) fn tj_bin() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("TJ_TEST_BIN") {
        Some(bin) if !bin.is_empty() => {
            let bin = PathBuf::from(bin);
            assert!(bin.is_absolute(), "TJ_TEST_BIN must be an absolute path: {}", bin.display());
            bin
        }
        _ => PathBuf::from(env!("CARGO_BIN_EXE_tj")),
    })
}

/// [`tj_bin`] as text, for argument lists and environment values.
pub(crate) fn tj_bin_str() -> &'static str {
    tj_bin().to_str().expect("the tj binary's path is UTF-8")
}

/// A fresh HOME, data dir, config dir and working directory, removed on drop.
pub(crate) struct TestEnv {
    pub(crate) root: PathBuf,
}

impl TestEnv {
    pub(crate) fn new() -> TestEnv {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let root = std::env::temp_dir().join(format!("tj-it-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["home", "data", "config", "work"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        // tj refuses a data directory others may read (it never tightens one it did not make).
        let private = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o700);
        std::fs::set_permissions(root.join("data"), private).unwrap();
        // The working directory is its own repository, so project rules above it are ignored.
        std::fs::create_dir_all(root.join("work/.git")).unwrap();
        TestEnv { root }
    }

    pub(crate) fn work(&self) -> PathBuf {
        self.root.join("work")
    }

    pub(crate) fn data(&self) -> PathBuf {
        self.root.join("data")
    }

    pub(crate) fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        #[allow(clippy::disallowed_methods)]
        std::fs::write(&path, text).unwrap();
        path
    }

    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(tj_bin());
        cmd.env_clear()
            .env("HOME", self.root.join("home"))
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TJ_DATA_DIR", self.data())
            .env("TJ_CONFIG_DIR", self.root.join("config"))
            .current_dir(self.work())
            .args(args);
        cmd
    }

    /// Runs `tj args…` with `stdin` and returns its output.
    pub(crate) fn run(&self, args: &[&str], stdin: &[u8]) -> Output {
        self.run_cmd(self.cmd(args), stdin)
    }

    pub(crate) fn run_cmd(&self, mut cmd: Command, stdin: &[u8]) -> Output {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = spawn_retrying(&mut cmd);
        let mut input = child.stdin.take().unwrap();
        let data = stdin.to_vec();
        let writer = std::thread::spawn(move || {
            let _ = input.write_all(&data);
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        out
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Spawns `cmd`, retrying while the kernel says the executable is busy (ETXTBSY).
///
/// Tests write stub scripts and run them while other test threads fork: a child forked
/// between a stub's `write` and its `close` holds the stub open for writing until it execs,
/// and exec'ing the stub in that window fails with ETXTBSY. The state is the kernel's and
/// clears within microseconds; retrying is the standard remedy (cargo and rustc do it too).
pub(crate) fn spawn_retrying(cmd: &mut Command) -> std::process::Child {
    for _ in 0..200 {
        match cmd.spawn() {
            Err(err) if err.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            other => return other.unwrap(),
        }
    }
    cmd.spawn().unwrap()
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A cargo test run: `passing` passing tests, one failure with an assertion diff.
pub(crate) fn cargo_test_output(passing: usize) -> String {
    use std::fmt::Write as _;
    let mut raw = String::from(
        "   Compiling demo v0.1.0 (/tmp/demo)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.50s\n     Running unittests src/lib.rs (target/debug/deps/demo-1234)\n\n",
    );
    let _ = writeln!(raw, "running {} tests", passing + 1);
    for i in 0..passing {
        let _ = writeln!(raw, "test module::tests::case_{i:04} ... ok");
    }
    raw.push_str("test module::tests::broken ... FAILED\n\nfailures:\n\n---- module::tests::broken stdout ----\n\nthread 'module::tests::broken' panicked at src/lib.rs:10:5:\nassertion `left == right` failed\n  left: 1\n right: 2\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n\nfailures:\n    module::tests::broken\n\n");
    let _ = writeln!(
        raw,
        "test result: FAILED. {passing} passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n\nerror: test failed, to rerun pass `--lib`"
    );
    raw
}

pub(crate) fn is_private(path: &Path, mode: u32) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777 == mode
}

/// Kills a process a test left running (a descendant that outlived tj), when dropped.
pub(crate) struct KillOnDrop(pub(crate) i32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ =
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.0), nix::sys::signal::SIGKILL);
    }
}

/// Runs `cmd` with `stdin`, killing it and failing the test if it has not exited within
/// `limit`: a hang is the defect, so the bound is generous and only catches that.
pub(crate) fn run_within(mut cmd: Command, stdin: &[u8], limit: std::time::Duration) -> Output {
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = spawn_retrying(&mut cmd);
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = std::io::Write::write_all(&mut input, &data);
    });
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut buf);
        buf
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tj did not finish within {limit:?}: {cmd:?}");
        }
        // Polling for a deadline, not synchronising: the exit is what is waited for.
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    writer.join().unwrap();
    Output { status, stdout: out_reader.join().unwrap(), stderr: err_reader.join().unwrap() }
}
