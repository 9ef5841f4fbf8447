//! The mode rule of `tj run` through the binary (`crate::run::mode`, issue 10 item 8): an
//! explicit flag wins, `--agent-stdout` decides whether output goes to the agent, and the
//! environment carries no record that could go stale. stdout is a real file in each case, so
//! its (device, inode) is known before tj starts.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::util::*;

/// Colours and an exit status: raw bytes and a rendition are told apart at a glance.
const BODY: &str = r"printf '\033[31mred\033[0m\n'; echo out; exit 3";
const RENDITION: &str = "[tj] exit 3\nred\nout\n";
const RAW: &[u8] = b"\x1b[31mred\x1b[0m\nout\n";

struct Case {
    env: TestEnv,
    stdout: PathBuf,
}

/// What one run left behind.
struct Ran {
    code: Option<i32>,
    /// What tj (or the command in its place) wrote to stdout.
    written: Vec<u8>,
    stderr: String,
    /// Whether tj captured and stored the output.
    stored: bool,
}

impl Case {
    fn new() -> Case {
        let env = TestEnv::new();
        let stdout = env.root.join("stdout.txt");
        File::create(&stdout).unwrap();
        Case { env, stdout }
    }

    /// `DEV:INO` of the file stdout will be.
    fn stdout_id(&self) -> String {
        let meta = std::fs::metadata(&self.stdout).unwrap();
        format!("{}:{}", meta.dev(), meta.ino())
    }

    /// `DEV:INO` of some other file: somebody else's stdout.
    fn other_id(&self) -> String {
        let path = self.env.write("other.txt", "");
        let meta = std::fs::metadata(path).unwrap();
        format!("{}:{}", meta.dev(), meta.ino())
    }

    fn cmd(&self, flags: &[&str]) -> Command {
        let mut args = vec!["run"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--", "sh", "-c", BODY]);
        self.env.cmd(&args)
    }

    fn run(&self, mut cmd: Command) -> Ran {
        let file = File::create(&self.stdout).unwrap();
        cmd.stdin(Stdio::null()).stdout(Stdio::from(file)).stderr(Stdio::piped());
        let out = spawn_retrying(&mut cmd).wait_with_output().unwrap();
        Ran {
            code: out.status.code(),
            written: std::fs::read(&self.stdout).unwrap(),
            stderr: stderr(&out),
            stored: self.env.data().join("spill").read_dir().is_ok_and(|mut d| d.next().is_some()),
        }
    }
}

impl Ran {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.written).into_owned()
    }

    fn assert_rendition(&self, what: &str) {
        assert_eq!(self.code, Some(3), "{what}: {}", self.stderr);
        assert!(self.text().starts_with(RENDITION), "{what}: {:?}", self.text());
        assert!(self.stored, "{what}: nothing stored");
    }

    fn assert_direct(&self, what: &str) {
        assert_eq!(self.code, Some(3), "{what}: {}", self.stderr);
        assert_eq!(self.written, RAW, "{what}: {:?}", self.text());
        assert!(!self.stored, "{what}: a direct run stores nothing");
        assert_eq!(self.stderr, "", "{what}");
    }
}

#[test]
fn agent_stdout_that_is_stdout_gets_the_rendition() {
    let case = Case::new();
    let id = case.stdout_id();
    case.run(case.cmd(&["--agent-stdout", &id])).assert_rendition("same stdout");
}

#[test]
fn agent_stdout_elsewhere_runs_the_command_directly() {
    let case = Case::new();
    let other = case.other_id();
    case.run(case.cmd(&["--agent-stdout", &other])).assert_direct("redirected");
    // In an agent's environment too: the output is not going to the agent.
    let mut cmd = case.cmd(&["--agent-stdout", &other]);
    cmd.env("CLAUDECODE", "1");
    case.run(cmd).assert_direct("redirected, in a harness");
}

#[test]
fn agent_flag_wins_over_agent_stdout() {
    let case = Case::new();
    let other = case.other_id();
    case.run(case.cmd(&["--agent", "--agent-stdout", &other])).assert_rendition("--agent");
}

#[test]
fn live_flag_wins_over_agent_stdout() {
    let case = Case::new();
    let other = case.other_id();
    let ran = case.run(case.cmd(&["--live", "--agent-stdout", &other]));
    // Terminal mode: the live bytes on stdout (through a PTY: `\r\n`), and stored.
    assert_eq!(ran.code, Some(3), "{}", ran.stderr);
    assert_eq!(ran.written, b"\x1b[31mred\x1b[0m\r\nout\r\n", "{:?}", ran.text());
    assert!(ran.stored);
}

#[test]
fn a_stale_tj_agent_stdout_in_the_environment_changes_nothing() {
    let case = Case::new();
    let other = case.other_id();
    for (flags, harness) in [(&[][..], false), (&[][..], true), (&["--agent"][..], false)] {
        let mut cmd = case.cmd(flags);
        cmd.env("TJ_AGENT_STDOUT", &other);
        if harness {
            cmd.env("CLAUDECODE", "1");
        }
        case.run(cmd).assert_rendition(&format!("{flags:?}, harness {harness}"));
    }
}

#[test]
fn a_malformed_agent_stdout_is_named_and_ignored() {
    let case = Case::new();
    for bad in ["nonsense", "", "1:2:3"] {
        let ran = case.run(case.cmd(&["--agent-stdout", bad]));
        ran.assert_rendition(bad);
        assert!(
            ran.stderr.contains(&format!("--agent-stdout `{bad}` is not DEV:INO; ignored")),
            "{bad}: {}",
            ran.stderr
        );
    }
}

#[test]
fn disabled_and_nested_win_over_every_flag() {
    let case = Case::new();
    let id = case.stdout_id();
    for var in ["TJ_DISABLE", "TJ_INNER"] {
        for flags in [&["--agent"][..], &["--live"], &["--agent-stdout", &id]] {
            let mut cmd = case.cmd(flags);
            cmd.env(var, "1");
            case.run(cmd).assert_direct(&format!("{var} {flags:?}"));
        }
    }
}
