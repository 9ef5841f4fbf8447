//! End to end with the real harness CLIs: Claude Code and Codex, installed from npm, each
//! driven by a fake model server on 127.0.0.1 that asks for one shell call (`cargo test` in a
//! fixture crate with one failing test) and then ends the turn. What the harness sends back
//! to the fake model is what a model would read: the raw output without tj, tj's rendition
//! once `tj install HOST` has put tj's hook in the harness's settings (in a temporary HOME).
//!
//! The harnesses come from `TJ_TEST_HARNESS_DIR` (`.ci/run` installs them there with npm):
//! `$TJ_TEST_HARNESS_DIR/node_modules/.bin/{claude,codex}`. Without it the tests skip, saying so;
//! with it set, a missing binary or node fails them.

mod claude;
mod codex;
mod resume;
mod server;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{TestEnv, spawn_retrying};
use claude::Permission;
use codex::Trust;
use server::{FakeModel, Request};

/// Where `.ci/run` installs the harness packages.
const HARNESS_DIR: &str = "TJ_TEST_HARNESS_DIR";
/// The bound on one harness run: a hang is the defect, so it only catches that.
const HARNESS_LIMIT: Duration = Duration::from_secs(120);
/// The bound on warming the fixture crate (a cold compile beside the rest of the suite).
const BUILD_LIMIT: Duration = Duration::from_secs(180);

/// How many of the fixture crate's tests pass: enough that dropping their lines is worth
/// it to tj's gate (500 bytes saved at the least), as in any real crate.
const PASSING: usize = 40;
/// The one that fails, with this message and these values.
const FAILING: &str = "discount_is_applied_to_the_total";
const PANIC: &str = "the ten percent discount was not applied";
const LEFT: &str = "left: 30";

const CARGO_TOML: &str = r#"[package]
name = "checkout"
version = "0.1.0"
edition = "2021"

[workspace]
"#;

/// The name of passing test `i`.
fn passing(i: usize) -> String {
    format!("cart_of_{i:02}_items_totals_their_prices")
}

/// The fixture crate's `src/lib.rs`: a cart's total, `PASSING` tests of it that pass and one
/// that fails with an assertion message.
fn lib_rs() -> String {
    let mut tests = String::new();
    for i in 0..PASSING {
        tests.push_str(&format!(
            "\n    #[test]\n    fn {}() {{\n        assert_eq!(total(&[2; {i}]), {});\n    }}\n",
            passing(i),
            2 * i,
        ));
    }
    format!(
        r#"//! A cart's total, and its tests: all pass but one.

pub fn total(prices: &[u32]) -> u32 {{
    prices.iter().sum()
}}

#[cfg(test)]
mod tests {{
    use super::total;
{tests}
    #[test]
    fn {FAILING}() {{
        assert_eq!(total(&[10, 20]), 27, "{PANIC}");
    }}
}}
"#
    )
}

/// The installed harness binary `name`, or `None` after saying why the test skips.
fn harness(name: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os(HARNESS_DIR) else {
        return skip(&format!(
            "{HARNESS_DIR} is not set (.ci/run installs the harnesses from npm)"
        ));
    };
    let bin = Path::new(&dir).join("node_modules/.bin").join(name);
    // Absolute: the harness starts in the fixture crate, where a relative path means another file.
    // Set but incomplete is a broken install, not an absent one: fail, so that CI (which
    // sets it) can never pass by skipping.
    let Ok(bin) = bin.canonicalize() else {
        panic!("{HARNESS_DIR} is set but {} is missing (npm install there)", bin.display());
    };
    // Codex's package entry point is a node script.
    assert!(
        name != "codex" || on_path("node"),
        "{HARNESS_DIR} is set but node is not on PATH, and {} needs it",
        bin.display()
    );
    Some(bin)
}

#[allow(clippy::print_stdout)] // the test harness shows it with --nocapture and on failure
fn skip(reason: &str) -> Option<PathBuf> {
    println!("skipping: {reason}");
    None
}

fn on_path(program: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|dir| dir.join(program).is_file())
}

/// A temporary HOME, tj store and warm fixture crate (`crate/`, built into `target/`).
struct Fixture {
    env: TestEnv,
}

impl Fixture {
    fn new() -> Fixture {
        let fixture = Fixture::bare();
        fixture.env.write("crate/Cargo.toml", CARGO_TOML);
        fixture.env.write("crate/src/lib.rs", &lib_rs());
        // Compiled now so the harness's `cargo test` only runs the tests.
        let mut build = Command::new("cargo");
        build.args(["test", "--no-run", "--offline"]).current_dir(fixture.crate_dir());
        fixture.isolate(&mut build);
        let built = run_bounded(build, BUILD_LIMIT);
        assert!(
            built.status.is_some_and(|s| s.success()),
            "the fixture crate does not build:\n{}",
            built.describe()
        );
        fixture
    }

    /// The temporary HOME and tj store, and an empty `crate/` to work in.
    fn bare() -> Fixture {
        let env = TestEnv::new();
        std::fs::create_dir_all(env.root.join("crate")).unwrap();
        std::fs::create_dir(env.root.join("tmp")).unwrap();
        // Codex runs commands in a login shell (`bash -lc`), whose /etc/profile resets PATH;
        // the user's ~/.profile puts the toolchain back, as rustup's installer does.
        let path = std::env::var("PATH").unwrap_or_default();
        env.write("home/.profile", &format!("export PATH='{}'\n", path.replace('\'', r"'\''")));
        Fixture { env }
    }

    fn crate_dir(&self) -> PathBuf {
        self.env.root.join("crate")
    }

    fn home(&self) -> PathBuf {
        self.env.root.join("home")
    }

    /// An environment of our own for `cmd`: the temporary HOME and tj store, the real
    /// toolchain, and nothing else of the test runner's (no proxies, no keys, no `CARGO_*`).
    fn isolate(&self, cmd: &mut Command) {
        let real_home = PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
        let from_env_or =
            |var: &str, default: PathBuf| std::env::var_os(var).map_or(default, PathBuf::from);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("LANG", "C.UTF-8")
            // Claude Code keeps per-project files in $TMPDIR/claude-UID: inside the test's root.
            .env("TMPDIR", self.env.root.join("tmp"))
            .env("CARGO_HOME", from_env_or("CARGO_HOME", real_home.join(".cargo")))
            .env("RUSTUP_HOME", from_env_or("RUSTUP_HOME", real_home.join(".rustup")))
            .env("CARGO_TARGET_DIR", self.env.root.join("target"))
            .env("CARGO_NET_OFFLINE", "true")
            .env("TJ_DATA_DIR", self.env.data())
            .env("TJ_CONFIG_DIR", self.env.root.join("config"));
        if let Some(toolchain) = std::env::var_os("RUSTUP_TOOLCHAIN") {
            cmd.env("RUSTUP_TOOLCHAIN", toolchain);
        }
    }

    /// `tj install HOST` in the temporary HOME (`CLAUDE_CONFIG_DIR` and `CODEX_HOME` inside it);
    /// returns what it printed.
    fn install_tj(&self, host: &str) -> String {
        let mut install = self.env.cmd(&["install", host]);
        install
            .env("CLAUDE_CONFIG_DIR", self.home().join(".claude"))
            .env("CODEX_HOME", self.home().join(".codex"));
        let out = self.env.run_cmd(install, b"");
        let message = format!("{}{}", crate::util::stdout(&out), crate::util::stderr(&out));
        assert!(out.status.success(), "tj install {host} failed:\n{message}");
        message
    }

    /// The runs tj's store holds (`tj ls --format json`).
    fn runs(&self) -> Vec<Value> {
        let out = self.env.run(&["ls", "--format", "json"], b"");
        assert!(out.status.success(), "tj ls failed: {}", crate::util::stderr(&out));
        serde_json::from_slice::<Value>(&out.stdout)
            .ok()
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_else(|| {
                panic!("tj ls --format json printed no array: {}", crate::util::stdout(&out))
            })
    }

    /// A command for `program` in this fixture's isolated environment.
    fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        self.isolate(&mut cmd);
        cmd
    }

    /// Runs the harness `cmd` (pointed at `model`) and collects what came back.
    fn drive(
        &self,
        cmd: Command,
        model: &FakeModel,
        tool_result: fn(&[Request]) -> Option<String>,
    ) -> Outcome {
        let ran = run_bounded(cmd, HARNESS_LIMIT);
        let requests = model.requests();
        Outcome { result: tool_result(&requests), ran, log: model.log(), runs: self.runs() }
    }
}

/// What one harness run left: its output, the tool result the fake model received, the
/// requests it made and tj's recorded runs.
struct Outcome {
    ran: Ran,
    result: Option<String>,
    log: String,
    runs: Vec<Value>,
}

impl Outcome {
    fn describe(&self) -> String {
        format!(
            "{}\nrequests to the fake model:\n{}\ntool result sent back:\n{}\ntj runs: {}",
            self.ran.describe(),
            self.log,
            self.result.as_deref().unwrap_or("(none)"),
            Value::Array(self.runs.clone()),
        )
    }

    /// The tool result, after checking the harness finished its turn.
    #[allow(clippy::print_stdout)] // shown with --nocapture: what a model would have read
    fn result(&self) -> &str {
        println!("{}", self.describe());
        assert!(
            self.ran.status.is_some_and(|s| s.success()),
            "the harness failed:\n{}",
            self.describe()
        );
        self.result.as_deref().unwrap_or_else(|| {
            panic!("no tool result reached the fake model:\n{}", self.describe())
        })
    }

    /// Without tj: the model reads cargo's own output, every test named, and the exit status.
    fn assert_raw(&self, exit_line: &str) {
        let result = self.result();
        let passing = (0..PASSING).map(passing);
        for wanted in [FAILING, PANIC, LEFT, exit_line].map(String::from).into_iter().chain(passing)
        {
            assert!(
                result.contains(&wanted),
                "{wanted:?} missing from the raw output:\n{}",
                self.describe()
            );
        }
        assert!(self.runs.is_empty(), "tj ran without being installed:\n{}", self.describe());
    }

    /// With tj: the command ran through `tj run --host HOST`, and the model reads tj's
    /// rendition: the failure kept whole, the passing tests gone, the exit status unchanged.
    fn assert_rendition(&self, host: &str, exit_line: &str) {
        let result = self.result();
        let [run] = self.runs.as_slice() else {
            panic!(
                "the hook did not route `cargo test` through tj (expected one run in tj's store):\n{}",
                self.describe()
            );
        };
        assert_eq!(run["host"], host, "{}", self.describe());
        assert_eq!(run["argv"], serde_json::json!(["cargo", "test"]), "{}", self.describe());
        assert_eq!(run["exitCode"], 101, "{}", self.describe());
        for wanted in [FAILING, PANIC, LEFT, exit_line] {
            assert!(
                result.contains(wanted),
                "{wanted:?} missing from tj's rendition:\n{}",
                self.describe()
            );
        }
        // The host shows the exit status itself (`exit_line`); tj does not say it twice.
        assert!(
            !result.contains("[tj] exit"),
            "tj repeated the exit status the host shows:\n{}",
            self.describe()
        );
        for passing in (0..PASSING).map(passing) {
            assert!(
                !result.contains(&passing),
                "the passing test {passing:?} reached the model:\n{}",
                self.describe()
            );
        }
        let id = run["id"].as_str().unwrap_or_default();
        assert!(
            result.contains(id),
            "the rendition does not name its stored original {id}:\n{}",
            self.describe()
        );
    }
}

/// A finished (or killed) process: `status` is `None` when it outlived its bound.
struct Ran {
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
    limit: Duration,
}

impl Ran {
    fn describe(&self) -> String {
        let status = match self.status {
            Some(status) => format!("{status}"),
            None => format!(
                "killed after {:?}: it did not finish within {:?}",
                self.elapsed, self.limit
            ),
        };
        format!(
            "status: {status} ({:?})\nstdout:\n{}\nstderr:\n{}",
            self.elapsed, self.stdout, self.stderr
        )
    }
}

/// Runs `cmd` in its own process group with no stdin, killing the group when it has not
/// exited within `limit` and once it has (nothing it started outlives the test).
fn run_bounded(mut cmd: Command, limit: Duration) -> Ran {
    use std::os::unix::process::CommandExt;
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let start = Instant::now();
    let mut child = spawn_retrying(&mut cmd);
    let group = KillGroupOnDrop(i32::try_from(child.id()).unwrap());
    let stdout = read_in_background(child.stdout.take().unwrap());
    let stderr = read_in_background(child.stderr.take().unwrap());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        // Polling for a deadline, not synchronising: the exit is what is waited for.
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    drop(group);
    // A descendant in another process group may still hold the pipes: wait a little, no more.
    let collect = |rx: mpsc::Receiver<Vec<u8>>| {
        rx.recv_timeout(Duration::from_secs(10)).map_or_else(
            |_| "(still open: a descendant holds the pipe)".to_string(),
            |b| String::from_utf8_lossy(&b).into_owned(),
        )
    };
    Ran { status, stdout: collect(stdout), stderr: collect(stderr), elapsed, limit }
}

fn read_in_background(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

/// Kills a process group when dropped.
struct KillGroupOnDrop(i32);

impl Drop for KillGroupOnDrop {
    fn drop(&mut self) {
        let _ =
            nix::sys::signal::killpg(nix::unistd::Pid::from_raw(self.0), nix::sys::signal::SIGKILL);
    }
}

/// Claude Code runs `cargo test` on the fake model's behalf, as `permission` lets it, with
/// or without tj's hook installed, and `model` receives the tool result.
fn drive_claude(
    fixture: &Fixture,
    claude: &Path,
    permission: Permission,
    with_tj: bool,
) -> Outcome {
    let model = FakeModel::start(claude::responder("cargo test"));
    let config_dir = fixture.home().join(".claude");
    let settings = claude::user_settings(permission, "cargo test");
    fixture
        .env
        .write("home/.claude/settings.json", &serde_json::to_string_pretty(&settings).unwrap());
    if with_tj {
        fixture.install_tj("claude-code");
    }
    let mut cmd = fixture.command(claude);
    claude::configure(&mut cmd, permission, &model.url(), &config_dir, &fixture.crate_dir());
    fixture.drive(cmd, &model, claude::tool_result)
}

/// Codex runs `cargo test` on the fake model's behalf, with tj's hook installed and trusted
/// as `trust` says, or without tj, and `model` receives the output.
fn drive_codex(fixture: &Fixture, codex: &Path, with_tj: Option<Trust>) -> Outcome {
    let model = FakeModel::start(codex::responder("cargo test"));
    let codex_home = fixture.home().join(".codex");
    let mut config = codex::config(&model.url());
    if let Some(trust) = with_tj {
        let message = fixture.install_tj("codex");
        if let Trust::Persisted = trust {
            let lines = codex::trust_lines(&message).unwrap_or_else(|| {
                panic!(
                    "tj install codex printed no [hooks.state] lines to trust its hook:\n{message}"
                )
            });
            config.push('\n');
            config.push_str(&lines);
        }
    }
    fixture.env.write("home/.codex/config.toml", &config);
    let mut cmd = fixture.command(codex);
    codex::configure(&mut cmd, with_tj.unwrap_or(Trust::Bypass), &codex_home, &fixture.crate_dir());
    fixture.drive(cmd, &model, codex::tool_result)
}

#[test]
fn claude_code_without_tj_sends_the_raw_cargo_test_output_back() {
    let Some(claude) = harness("claude") else { return };
    let fixture = Fixture::new();
    drive_claude(&fixture, &claude, Permission::AllowRule, false).assert_raw("Exit code 101");
}

#[test]
fn claude_code_with_tj_sends_the_rendition_back_and_the_exit_code() {
    let Some(claude) = harness("claude") else { return };
    let fixture = Fixture::new();
    let outcome = drive_claude(&fixture, &claude, Permission::AllowRule, true);
    outcome.assert_rendition("claude-code", "Exit code 101");
}

#[test]
fn claude_code_with_tj_under_skip_permissions_sends_the_rendition_back() {
    let Some(claude) = harness("claude") else { return };
    let fixture = Fixture::new();
    let outcome = drive_claude(&fixture, &claude, Permission::SkipPermissions, true);
    outcome.assert_rendition("claude-code", "Exit code 101");
}

/// In `-p` mode a command no rule allows is denied (it would be asked); tj's hook must not
/// turn that into an allow, so the command does not run, through tj or otherwise.
#[test]
fn claude_code_with_tj_still_denies_a_command_no_rule_allows() {
    let Some(claude) = harness("claude") else { return };
    let fixture = Fixture::new();
    let outcome = drive_claude(&fixture, &claude, Permission::Nothing, true);
    let result = outcome.result();
    assert!(
        outcome.runs.is_empty(),
        "the hook ran a command the user never allowed:\n{}",
        outcome.describe()
    );
    assert!(
        !result.contains(FAILING),
        "the command ran although nothing allowed it:\n{}",
        outcome.describe()
    );
}

#[test]
fn codex_without_tj_sends_the_raw_cargo_test_output_back() {
    let Some(codex) = harness("codex") else { return };
    let fixture = Fixture::new();
    drive_codex(&fixture, &codex, None).assert_raw("Process exited with code 101");
}

#[test]
fn codex_with_tj_sends_the_rendition_back_and_the_exit_code() {
    let Some(codex) = harness("codex") else { return };
    let fixture = Fixture::new();
    let outcome = drive_codex(&fixture, &codex, Some(Trust::Bypass));
    outcome.assert_rendition("codex", "Process exited with code 101");
}

/// What a user does: `tj install codex`, then the trust lines it prints in config.toml, and
/// Codex runs the hook with no bypass flag (their hash is the one Codex computes).
#[test]
fn codex_runs_tj_s_hook_trusted_as_tj_install_says() {
    let Some(codex) = harness("codex") else { return };
    let fixture = Fixture::new();
    let outcome = drive_codex(&fixture, &codex, Some(Trust::Persisted));
    outcome.assert_rendition("codex", "Process exited with code 101");
}
